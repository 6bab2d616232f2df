"""The array's read cache: ``[[arrays]] read_hit_ratio`` and ``read_hit_service_time``.

A read hits with probability ``read_hit_ratio`` and is then served in
``read_hit_service_time`` (plus ``service_time_per_kib``) instead of the read
service time. The hit is decided by the uniform that draws the read's service
time on the array's own read stream (one mixture), so common random numbers
across policies hold and a scenario without a hit ratio draws what it drew
before.
"""

from __future__ import annotations

import json
import math

import pytest

import pathsel
from pathsel.model import compile_model
from pathsel.model.arrays import with_read_hits
from pathsel.timing.distributions import Constant, Exponential, Mixture

from .test_engines import _agree, _json

DIFF = """
name = "read cache, both engines"
seed = 5
duration = "100ms"

[[arrays]]
name = "a"
concurrency = 4
service_time = {{ read = {{ dist = "exponential", mean = "200us" }}, write = "150us" }}
service_time_per_kib = "1us"
{cache_a}

[[arrays]]
name = "b"
concurrency = 4
service_time = {{ read = {{ dist = "mixture", components = [{{ dist = "exponential", mean = "100us", weight = 0.9 }}, {{ dist = "constant", value = "2ms", weight = 0.1 }}] }}, write = "150us" }}
{cache_b}

[replication]
arrays = ["a", "b"]
one_way_latency = "300us"

[[hosts]]
name = "h1"

[[paths]]
name = "vmhba1:C0:T{{i}}:L1"
count = 2
array = "a"
one_way_latency = "50us"

[[paths]]
name = "vmhba2:C0:T{{i}}:L1"
start = 2
count = 2
array = "b"
one_way_latency = {{ dist = "exponential", mean = "400us" }}

[[workloads]]
rw = "randrw"
rwmixread = 70
bs = "4k/70:64k/30"
iodepth = 8
numjobs = 2
ramp_time = "5ms"
"""

CACHE_A = 'read_hit_ratio = 0.4\nread_hit_service_time = "30us"'
CACHE_B = 'read_hit_ratio = 0.7\nread_hit_service_time = { dist = "uniform", low = "10us", high = "40us" }'
POLICIES = ["rr:iops=1", "latency", "dm:service-time", "guard"]


def _diff(cache_a: str = CACHE_A, cache_b: str = CACHE_B) -> pathsel.Scenario:
    return pathsel.loads_scenario(DIFF.format(cache_a=cache_a, cache_b=cache_b), "read cache")


def test_engines_agree_with_read_hits():
    _agree(_diff(), POLICIES, trace=True)


def test_no_hit_ratio_is_the_read_service_itself_and_draws_the_same_numbers():
    sc = _diff(cache_a="", cache_b="")
    zero = _diff(cache_a='read_hit_ratio = 0\nread_hit_service_time = "1us"', cache_b="read_hit_ratio = 0.0")
    before, after = compile_model(sc, sc.runs[0]), compile_model(zero, zero.runs[0])
    assert [a.read_service for a in before.arrays] == [a.read_service for a in after.arrays]
    one = pathsel.simulate(sc, policies=POLICIES[:2], engine="fast")
    two = pathsel.simulate(zero, policies=POLICIES[:2], engine="fast")
    assert _json(one)["runs"] == _json(two)["runs"]  # bit for bit
    hit = pathsel.simulate(_diff(), policies=POLICIES[:2], engine="fast")
    assert _json(hit)["runs"] != _json(one)["runs"]


def test_with_read_hits_flattens_mixtures_and_keeps_the_ends():
    miss = Exponential(200e-6)
    assert with_read_hits(miss, 0.0, Constant(20e-6)) is miss
    assert with_read_hits(miss, 1.0, Constant(20e-6)) == Constant(20e-6)
    m = with_read_hits(Mixture((0.9, 0.1), (Exponential(1e-4), Constant(2e-3))), 0.5, Constant(20e-6))
    assert m.weights == pytest.approx((0.5, 0.45, 0.05)) and m.components[0] == Constant(20e-6)
    assert m.mean == pytest.approx(0.5 * 20e-6 + 0.5 * (0.9 * 1e-4 + 0.1 * 2e-3))


# One path of constant 50 us legs to an array that never queues, one read outstanding: each I/O takes
# 100 us plus its service time, so the mean latency less 100 us is the array's mean service time.
SERVICE = """
name = "read cache, service time"
seed = 3
duration = "{duration}"

[[arrays]]
name = "a"
concurrency = 8
service_time = "200us"
{cache}

[[hosts]]
name = "h1"

[[paths]]
name = "p0"
array = "a"
one_way_latency = "50us"

[[workloads]]
rw = "randread"
bs = "4k"
iodepth = 1
ramp_time = "0s"
"""


def _mean_service_us(cache: str, duration: str = "1s", engine: str = "fast") -> tuple[float, int]:
    sc = pathsel.loads_scenario(SERVICE.format(cache=cache, duration=duration), "service")
    run = json.loads(pathsel.simulate(sc, policies=["fixed"], engine=engine).to_json())["runs"][0]
    ios = round(run["iops"] * 1.0)
    return run["latency_us"]["mean"] - 100.0, ios


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_hit_ratio_one_serves_every_read_in_the_hit_time(engine):
    mean, _ = _mean_service_us('read_hit_ratio = 1\nread_hit_service_time = "20us"', "200ms", engine)
    assert mean == pytest.approx(20.0, abs=1e-6)
    mean, _ = _mean_service_us("read_hit_ratio = 1", "200ms", engine)  # the default hit time
    assert mean == pytest.approx(20.0, abs=1e-6)
    mean, _ = _mean_service_us("", "200ms", engine)
    assert mean == pytest.approx(200.0, abs=1e-6)


def test_hit_ratio_one_half_lands_between_within_the_binomial_spread():
    mean, n = _mean_service_us('read_hit_ratio = 0.5\nread_hit_service_time = "20us"')
    # hits ~ Binomial(n, 0.5): the mean service is 20 + 180 x (misses / n), sd 180 x 0.5 / sqrt(n)
    assert n > 4000 and 20.0 < mean < 200.0
    assert abs(mean - 110.0) < 4 * 180 * 0.5 / math.sqrt(n)


def test_the_per_kib_part_is_added_to_a_hit():
    mean, _ = _mean_service_us('read_hit_ratio = 1\nread_hit_service_time = "20us"\nservice_time_per_kib = "2us"', "100ms")
    assert mean == pytest.approx(20.0 + 4 * 2.0, abs=1e-6)
