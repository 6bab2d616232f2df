"""Differential tests: the fast engine gives the reference engine's numbers.

The fast engine replays the reference model event for event with the same
random streams, so for the same seed the whole JSON result (IOPS, every
percentile, per-path shares, time series sums, policy events, device config)
must be identical, random service times and faults included. A table of
hand-written scenarios covers each feature; Hypothesis draws more.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given

import pathsel
from pathsel.policies import LatencyRoundRobin, PolicySpec, parse_spec

from .test_properties import SETTINGS, cases

BASE = """
name = "diff"
seed = 11
duration = "{duration}"
protocol = "{protocol}"

[[arrays]]
name = "a"
concurrency = {conc}
service_time = {{ read = {{ dist = "exponential", mean = "120us" }}, write = {{ dist = "uniform", low = "50us", high = "150us" }} }}

[[arrays]]
name = "b"
concurrency = {conc}
service_time = {{ read = "80us", write = {{ dist = "exponential", mean = "200us" }} }}

{replication}

[[hosts]]
name = "h1"
{preferred}

[[paths]]
name = "vmhba1:C0:T{{i}}:L1"
count = 2
array = "a"
one_way_latency = "{lat_a}"
bandwidth = "16Gbit"

[[paths]]
name = "vmhba2:C0:T{{i}}:L1"
start = 2
count = 2
array = "b"
one_way_latency = {lat_b}

[[workloads]]
rw = "{rw}"
rwmixread = 70
bs = "{bs}"
iodepth = {iodepth}
numjobs = 2
ramp_time = "5ms"
{faults}
"""

REPL = '[replication]\narrays = ["a", "b"]\none_way_latency = "300us"\nbandwidth = "10Gbit"'
FAULTS = """
[[faults]]
at = "20ms"
what = "path_down"
path = "vmhba1:C0:T0:L1"

[[faults]]
at = "20ms"
what = "alua"
path = "vmhba2:C0:T3:L1"
state = "standby"

[[faults]]
at = "60ms"
what = "path_up"
path = "vmhba1:C0:T0:L1"
"""

# issue 5: the host notices after 5 ms; latency step, loss burst, array and replication failures
ROUGH_HOST = 'preferred_array = "a"\ndetection = "5ms"\napd_timeout = "8ms"\nio_timeout = "15ms"'
ROUGH_REPL = REPL + '\ndistance_km = 40\nloss_ppm = 20000\nloss_recovery = "2ms"'
ROUGH = """
[[faults]]
at = "10ms"
what = "latency"
path = "vmhba1:C0:T1:L1"
add = "2ms"
duration = "30ms"

[[faults]]
at = "15ms"
what = "loss"
link = "replication"
ppm = 300000
duration = "20ms"

[[faults]]
at = "30ms"
what = "replication_down"

[[faults]]
at = "40ms"
what = "array_down"
array = "a"

[[faults]]
at = "45ms"
what = "path_down"
path = "vmhba2:C0:T2:L1"

[[faults]]
at = "48ms"
what = "path_down"
path = "vmhba2:C0:T3:L1"

[[faults]]
at = "70ms"
what = "array_up"
array = "a"

[[faults]]
at = "80ms"
what = "replication_up"

[[faults]]
at = "90ms"
what = "alua"
path = "vmhba1:C0:T0:L1"
state = "transitioning"
"""

SCENARIOS = {
    # name: template values
    "scsi writes, replicated, constant legs": dict(protocol="scsi", rw="randwrite", bs="32k", iodepth=8, conc=4,
                                                   lat_a="50us", lat_b='"1ms"', replication=REPL, preferred="", faults=""),
    "nvme mixed sizes, jittered legs": dict(protocol="nvme", rw="randrw", bs="4k/50:64k/30:1m/20", iodepth=16, conc=2,
                                            lat_a="40us", lat_b='{ dist = "exponential", mean = "300us" }',
                                            replication=REPL, preferred="", faults=""),
    "reads only, no replication": dict(protocol="scsi", rw="randread", bs="8k", iodepth=4, conc=1, lat_a="100us",
                                       lat_b='{ dist = "uniform", low = "100us", high = "900us" }', replication="",
                                       preferred="", faults=""),
    "preferred array": dict(protocol="scsi", rw="randrw", bs="16k", iodepth=8, conc=8, lat_a="50us", lat_b='"1ms"',
                            replication=REPL, preferred='preferred_array = "a"', faults=""),
    "faults: down, standby, up": dict(protocol="scsi", rw="randrw", bs="32k", iodepth=8, conc=4, lat_a="50us",
                                      lat_b='"400us"', replication=REPL, preferred='preferred_array = "b"', faults=FAULTS),
    "detection, APD failures, latency, loss, array and replication faults": dict(
        protocol="scsi", rw="randrw", bs="32k", iodepth=8, conc=4, lat_a="50us", lat_b='"400us"', replication=ROUGH_REPL,
        preferred=ROUGH_HOST, faults=ROUGH),
}

POLICIES = [
    "fixed",
    "fixed:preferred=vmhba2:C0:T2:L1",
    "mru",
    "rr",
    "rr:iops=1",
    "rr:iops=3,use_ano=1",
    "rr:bytes=65536",
    "latency",
    "latency:variant=score",
    "latency:use_ano=1,tolerance=0.5",
    # short windows so re-evaluation happens within the run (below esxcli's range: built directly)
    PolicySpec("latency", (("num_sampling_cycles", 4), ("latency_eval_time", 10), ("use_ano", 0), ("variant", "min-set"), ("tolerance", 0.05))),
]


def _json(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


def _both(scenario, policies, **kw):
    fast = pathsel.simulate(scenario, policies=policies, engine="fast", **kw)
    ref = pathsel.simulate(scenario, policies=policies, engine="reference", **kw)
    return fast, ref


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_engines_agree_on_every_policy(name):
    sc = pathsel.loads_scenario(BASE.format(duration="120ms", **SCENARIOS[name]), name)
    fast, ref = _both(sc, POLICIES, trace=True)
    assert _json(fast) == _json(ref)
    for f, r in zip(fast.runs, ref.runs):
        assert f.metrics.trace == r.metrics.trace  # every I/O: same path, same times
        assert f.metrics.issued == r.metrics.issued and f.metrics.retried == r.metrics.retried
        assert (f.metrics.ts_path_ios == r.metrics.ts_path_ios).all()


def test_engines_agree_on_the_seed_testdrive(testdrive_path):
    fast, ref = _both(testdrive_path, None, duration=0.3)
    assert _json(fast) == _json(ref)
    assert fast.engine == "fast" and ref.engine == "reference"


def _builtin(policy):
    if isinstance(policy, LatencyRoundRobin):  # the property suite's short-window latency RR
        return PolicySpec("latency", (("num_sampling_cycles", policy.cycles), ("latency_eval_time", policy.eval_time_ms),
                                      ("use_ano", int(policy.use_ano)), ("variant", policy.variant), ("tolerance", policy.tolerance)))
    return parse_spec(policy)[0]


@SETTINGS
@given(cases())
def test_engines_agree_on_random_scenarios(case):
    sc = pathsel.loads_scenario(case.toml)
    fast, ref = _both(sc, [_builtin(case.policy)])
    assert _json(fast) == _json(ref)


def test_auto_engine_choice():
    sc = pathsel.default_scenario()
    assert pathsel.simulate(sc, policies=["rr:iops=1"], duration=0.05).engine == "fast"

    class Mine(pathsel.Policy):
        name = "mine"

        def select(self, io):
            return pathsel.alua_working_set(self.device.paths)[0]

    with pytest.warns(UserWarning, match="reference engine"):
        assert pathsel.simulate(sc, policies=[Mine], duration=0.05).engine == "reference"
    with pytest.raises(pathsel.ScenarioError, match="built-in policies only"):
        pathsel.simulate(sc, policies=[Mine], engine="fast", duration=0.05)


def _compressed(path, factor: float):
    """A sims/ scenario with its clock sped up ``factor`` times (faults, detection, duration), for the reference engine's pace."""
    import tomllib

    from pathsel.distributions import delay_files_relative_to
    from pathsel.scenario.load import _build
    from pathsel.units import parse_duration

    data = tomllib.loads(path.read_text(encoding="utf-8"))

    def scale(table, key):
        if key in table:
            table[key] = f"{parse_duration(table[key]) / factor * 1e6:.3f}us"

    for key in ("duration", "interval"):
        scale(data, key)
    for h in data.get("hosts", []):
        scale(h, "detection")
    for w in data.get("workloads", []):
        scale(w, "ramp_time")
    for f in data.get("faults", []):
        scale(f, "at")
        scale(f, "duration")
    with delay_files_relative_to(path.parent):
        return _build(data, str(path))


@pytest.mark.parametrize(
    "name, factor",
    [("path-failure-recovery.toml", 100), ("latency-step-latency-rr.toml", 200), ("fast-failover.toml", 10), ("cloud-metro-az.toml", 40)],
)
def test_engines_agree_on_the_fault_and_network_sims(name, factor):
    from .conftest import ROOT

    sc = _compressed(ROOT / "sims" / name, factor)
    fast, ref = _both(sc, None, trace=True)
    assert _json(fast) == _json(ref)
    for f, r in zip(fast.runs, ref.runs):
        assert f.metrics.trace == r.metrics.trace
        assert f.accounting["balanced"] and f.metrics.completed > 100
