"""ESXi HPP path selection schemes, and Finagle's P2C with peak EWMA.

HPP: LB-RR switches after iops I/Os or bytes bytes, whichever comes first;
LB-IOPS / LB-BYTES pick the least outstanding path after their limit;
LB-Latency is latency RR's machinery with HPP's names, ranges and defaults
(vSphere API HostMultipathInfoHppLogicalUnitPolicy).

P2C: Finagle's P2CPick draws two *distinct* nodes (the "hole" trick) and
takes the lower load; PeakEwma's cost jumps to a higher sample, decays by
exp(-dt / tau) otherwise, and load = cost x (pending + 1), with a penalty for
a busy node with no history.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from pathsel.policies import (
    HppFixed,
    HppLatency,
    HppLoadBalanceBytes,
    HppLoadBalanceIops,
    HppRoundRobin,
    PeakEwmaP2C,
    build_policy,
    parse_spec,
)
from pathsel.policies.p2c import PENALTY, observe

from .policy_rig import Rig, ScriptedRng


# -- HPP FIXED ----------------------------------------------------------------------
def test_hpp_fixed_preferred_and_back():
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(HppFixed(preferred="p2"))
    assert rig.names_of(2) == ["p2", "p2"]
    rig.down(2)
    assert rig.names_of(2) == ["p0", "p0"]
    rig.up(2)
    assert rig.names_of(2) == ["p2", "p2"]


def test_hpp_fixed_default_is_the_first_ao_path():
    rig = Rig(["ANO", "AO", "AO"])
    pol = rig.bind(build_policy("hpp:fixed"))
    assert rig.names_of(2) == ["p1", "p1"]
    assert pol.config_string() == "{pss=FIXED,preferred=p1; current=p1}"


# -- LB-RR ---------------------------------------------------------------------------
def _lb_rr_reference(iops, nbytes, sizes, n):
    """Independent model: switch once either count has reached its limit."""
    out, cur, ios, b = [], 0, 0, 0
    for s in sizes:
        if ios >= iops or b >= nbytes:
            cur, ios, b = (cur + 1) % n, 0, 0
        out.append(f"p{cur}")
        ios += 1
        b += s
    return out


@pytest.mark.parametrize(
    "iops, nbytes, sizes, n",
    [
        (1000, 10485760, [4096] * 20, 2),  # defaults: nothing switches in 20 I/Os
        (2, 10485760, [4096] * 9, 3),  # the I/O limit first
        (1000, 8192, [4096] * 9, 3),  # the byte limit first: two 4 KiB I/Os
        (3, 8192, [1024, 1024, 1024, 1024, 65536, 512, 512, 512, 512], 2),  # whichever comes first
        (1, 1, [512] * 4, 4),
    ],
)
def test_hpp_lb_rr_switches_on_whichever_limit_comes_first(iops, nbytes, sizes, n):
    rig = Rig(["AO"] * n)
    rig.bind(HppRoundRobin(iops=iops, bytes=nbytes))
    got = [rig.pick(s)[1].name for s in sizes]
    assert got == _lb_rr_reference(iops, nbytes, sizes, n)


def test_hpp_lb_rr_working_set():
    rig = Rig(["AO", "ANO", "AO"])
    rig.bind(HppRoundRobin(iops=1))
    assert rig.names_of(4) == ["p0", "p2", "p0", "p2"]
    rig.down(0, 2)
    assert rig.names_of(1) == ["p1"]


# -- LB-IOPS, LB-BYTES ------------------------------------------------------------------
def test_hpp_lb_iops_least_outstanding_after_n_ios():
    rig = Rig(["AO"] * 3)
    rig.bind(HppLoadBalanceIops(iops=2))
    assert rig.names_of(8) == ["p0", "p0", "p1", "p1", "p2", "p2", "p0", "p0"]
    rig2 = Rig(["AO"] * 3)
    rig2.bind(HppLoadBalanceIops(iops=2))
    rig2.busy(1, 5)
    assert rig2.names_of(6) == ["p0", "p0", "p2", "p2", "p0", "p0"]


def test_hpp_lb_iops_may_keep_the_current_path():
    rig = Rig(["AO", "AO"])
    rig.bind(HppLoadBalanceIops(iops=1))
    io, p = rig.pick()
    rig.complete(io, p)
    assert p.name == "p0"
    rig.busy(1, 1)
    assert rig.names_idle(3) == ["p0", "p0", "p0"]  # p0 idle again each time: it stays


def test_hpp_lb_bytes_least_outstanding_bytes():
    rig = Rig(["AO"] * 2)
    rig.bind(HppLoadBalanceBytes(bytes=8192))
    rig.busy(0, 4, 512)  # 2 KiB in four I/Os on p0
    rig.busy(1, 1, 65536)
    assert rig.names_of(3) == ["p0", "p0", "p0"]  # 2k, then 6k, 10k: still the least bytes
    rig2 = Rig(["AO"] * 2)
    rig2.bind(HppLoadBalanceIops(iops=2))
    rig2.busy(0, 4, 512)
    rig2.busy(1, 1, 65536)
    assert rig2.names_of(1) == ["p1"]


def test_hpp_lb_iops_leaves_a_path_that_leaves_the_working_set():
    rig = Rig(["AO", "AO", "ANO"])
    rig.bind(HppLoadBalanceIops())
    assert rig.names_of(2) == ["p0", "p0"]
    rig.alua(0, "ANO")
    assert rig.names_of(2) == ["p1", "p1"]
    rig.down(1)
    assert rig.names_of(1) == ["p2"]  # ANO paths only when no AO path is left: fewest outstanding


# -- LB-Latency ------------------------------------------------------------------------
def test_hpp_lb_latency_defaults_and_ranges():
    pol = build_policy("hpp:lb-latency")
    assert isinstance(pol, HppLatency)
    assert pol.params == {"latency_eval_time": 30000, "sampling_ios_per_path": 16, "variant": "lqd", "tolerance": 0.1, "cutoff": 2.0}
    Rig(["AO", "ANO"]).bind(pol)
    assert pol.state.num_sampling_cycles == 16 and pol.state.use_ano == 0  # latency RR's reading, useANO=0
    for bad, msg in (
        ("hpp:lb-latency:sampling_ios_per_path=8", "sampling_ios_per_path must be in 16..160, got 8"),
        ("hpp:lb-latency:sampling_ios_per_path=161", "sampling_ios_per_path must be in 16..160, got 161"),
        ("hpp:lb-latency:latency_eval_time=9999", "latency_eval_time must be in 10000..300000, got 9999"),
        ("hpp:lb-latency:latency_eval_time=300001", "latency_eval_time must be in 10000..300000, got 300001"),
    ):
        with pytest.raises(ValueError, match=msg):
            parse_spec(bad)


def test_hpp_lb_latency_samples_every_path_then_drops_the_slow_one():
    rig = Rig(["AO"] * 3)
    pol = rig.bind(HppLatency(sampling_ios_per_path=16))
    samples = [rig.pick() for _ in range(48)]
    assert [p.name for _, p in samples] == [f"p{k % 3}" for k in range(48)]
    rig.now = 0.01
    for io, p in samples:
        rig.complete(io, p, {"p0": 1e-4, "p1": 1.05e-4, "p2": 5e-3}[p.name])
    (ev,) = [d for e, d in rig.events if e == "evaluation"]
    assert ev["active"] == ["p0", "p1"] and ev["dropped"] == ["p2"]
    assert set(rig.names_of(6)) == {"p0", "p1"}
    assert pol.config_string().startswith("{pss=LB-Latency,latencyEvalTime=30000,samplingIOsPerPath=16;")


# -- P2C + peak EWMA --------------------------------------------------------------------
# The compiled policy's state is a record of numpy arrays (pol.state: cost and stamp per path of
# device 0); which pair a pick compared shows in the stamps (Metric.get moves a path's stamp to now).
def _pick_pair(rig, pol, t):
    """Issue one I/O at time ``t``; the pair of path positions the pick compared, the chosen one last."""
    rig.now = t
    (name,) = rig.names_of(1)
    now_ns = int(t * 1e9)
    stamped = [k for k in range(len(rig.names)) if pol.state.stamp[0][k] == now_ns]
    chosen = int(name[1:])
    assert chosen in stamped and len(stamped) == 2
    return (next(k for k in stamped if k != chosen), chosen)


@pytest.mark.parametrize(
    "u, n, pair",
    [
        ((0.0, 0.0), 4, (0, 1)),  # b = 0 >= a = 0: the hole moves it to 1
        ((0.99, 0.99), 4, (3, 2)),
        ((0.5, 0.5), 4, (2, 1)),
        ((0.25, 0.34), 4, (1, 2)),  # b = 1 >= a = 1: 2
        ((0.5, 0.7), 4, (2, 3)),
        ((0.0, 0.999), 2, (0, 1)),
        ((0.6, 0.0), 2, (1, 0)),
        ((0.999, 0.999), 3, (2, 1)),
    ],
)
def test_p2c_draws_two_distinct_paths(u, n, pair):
    rig = Rig(["AO"] * n)
    pol = rig.bind(PeakEwmaP2C(), rng=ScriptedRng(u))
    # every path idle with no history: equal loads, and a tie goes to the second of the pair
    assert set(_pick_pair(rig, pol, 1.0)) == set(pair)
    assert rig.names_of(0) == [] and pol.state.stamp[0][pair[1]] == 1_000_000_000
    assert pol.rng.calls == 2


def test_p2c_tie_goes_to_the_second_of_the_pair():
    for u, second in (((0.0, 0.0), "p1"), ((0.6, 0.0), "p0")):
        rig = Rig(["AO", "AO"])
        rig.bind(PeakEwmaP2C(), rng=ScriptedRng(u))
        assert rig.names_of(1) == [second]


def test_p2c_pairs_are_distinct_and_uniform():
    rig = Rig(["AO"] * 3)
    pol = rig.bind(PeakEwmaP2C(), rng=np.random.default_rng(7))
    pairs = Counter()
    for i in range(6000):
        pair = _pick_pair(rig, pol, (i + 1) * 1e-3)
        pairs[frozenset(pair)] += 1
    assert set(pairs) == {frozenset(p) for p in ((0, 1), (0, 2), (1, 2))}
    for count in pairs.values():
        assert 1850 < count < 2150  # 2000 expected each


def test_p2c_one_candidate_draws_nothing_and_none_gives_none():
    rig = Rig(["AO", "ANO", "standby"])
    pol = rig.bind(PeakEwmaP2C(), rng=np.random.default_rng(0))
    assert rig.names_of(3) == ["p0"] * 3
    assert pol.view.rq[0, 0] == 0  # no value of the device's stream was used (rq[stream, 0]: its next value)
    rig.down(0)
    assert rig.names_of(1) == ["p1"]  # the ANO path is the working set now
    rig.down(1)
    assert rig.names_of(1) == [None]
    assert pol.view.rq[0, 0] == 0


@pytest.mark.parametrize(
    "costs, pending, u, expected",
    [
        ([1e6, 5e6], [0, 0], (0.0, 0.0), "p0"),  # pair (p0, p1): the lower cost
        ([5e6, 1e6], [0, 0], (0.0, 0.0), "p1"),
        ([1e6, 5e6], [9, 0], (0.0, 0.0), "p1"),  # 1 ms x 10 > 5 ms x 1
        ([1e6, 5e6], [3, 0], (0.0, 0.0), "p0"),  # 1 ms x 4 < 5 ms
        ([2e6, 2e6], [0, 0], (0.0, 0.0), "p1"),  # a tie goes to the second of the pair
        ([2e6, 2e6], [0, 0], (0.6, 0.0), "p0"),  # pair (p1, p0): the second is p0
        ([0.0, 1e6], [1, 0], (0.0, 0.0), "p1"),  # no history but busy: the penalty
        ([0.0, 1e6], [0, 0], (0.0, 0.0), "p0"),  # no history and idle: load 0
    ],
)
def test_p2c_takes_the_lower_peak_ewma_load(costs, pending, u, expected):
    rig = Rig(["AO", "AO"])
    pol = rig.bind(PeakEwmaP2C(), rng=ScriptedRng(u))
    pol.state.cost[0][:] = costs
    for i, c in enumerate(pending):
        rig.busy(i, c)
    assert rig.names_of(1) == [expected]


def test_peak_ewma_observe():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(PeakEwmaP2C(decay=10.0))
    st, cost, stamp = pol.state, pol.state.cost[0], pol.state.stamp[0]
    observe.py_func(st, 0, 0, 5e6, 0)
    assert cost[0] == 5e6  # a peak is taken at once
    observe.py_func(st, 0, 0, 1e6, 10_000_000_000)  # one time constant later
    w = math.exp(-1.0)
    assert cost[0] == 5e6 * w + 1e6 * (1.0 - w)
    assert stamp[0] == 10_000_000_000
    observe.py_func(st, 0, 0, 9e6, 10_000_000_001)
    assert cost[0] == 9e6
    observe.py_func(st, 0, 1, 3e6, 0)
    observe.py_func(st, 0, 1, 3e6, 20_000_000_000)  # equal samples: the EWMA stays put
    assert cost[1] == pytest.approx(3e6, rel=1e-15)


def test_peak_ewma_load_decays_an_idle_path_and_moves_its_stamp():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(PeakEwmaP2C(decay=10.0), rng=ScriptedRng([0.0, 0.0] * 2))
    cost, stamp = pol.state.cost[0], pol.state.stamp[0]
    cost[:] = [4e6, 12e6 + 10.0]  # decayed: 4 ms x e^-1 x (2 + 1) for p0 against (12 ms + 10 ns) x e^-1 for p1
    rig.busy(0, 2)
    rig.now = 10.0  # one time constant after the stamps (0): the pick compares (p0, p1)
    assert rig.names_of(1) == ["p0"]
    assert cost[0] == 4e6 * math.exp(-1.0)
    assert list(stamp) == [10_000_000_000, 10_000_000_000]
    cost[:] = [0.0, 0.0]
    rig.busy(1, 2)  # p0: 3 in flight, p1: 2, neither has history: the penalty, then fewer pending
    assert rig.names_of(1) == ["p1"]
    assert PENALTY + 2 < PENALTY + 3


def test_peak_ewma_learns_from_completions():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(PeakEwmaP2C(), rng=ScriptedRng([0.0, 0.0] * 10))
    io, p = rig.pick()  # (p0, p1) idle: the tie goes to p1
    assert p.name == "p1"
    rig.now = 0.002
    rig.complete(io, p)
    assert pol.state.cost[0][1] == 2_000_000.0
    assert pol.state.stamp[0][1] == 2_000_000
    assert rig.names_of(1) == ["p0"]


def test_p2c_working_set_and_use_ano():
    for use_ano, used in ((0, {"p0", "p2"}), (1, {"p0", "p1", "p2", "p3"})):
        rig = Rig(["AO", "ANO", "AO", "ANO"])
        rig.bind(PeakEwmaP2C(use_ano=use_ano), rng=np.random.default_rng(1))
        assert set(rig.names_idle(200)) == used


def test_p2c_specs():
    assert build_policy("p2c-ewma").params["decay"] == 10.0
    pol = build_policy("p2c-ewma:decay=0.5,use_ano=1")
    assert pol.params == {"decay": 0.5, "use_ano": 1}
    assert type(build_policy("peak-ewma")) is PeakEwmaP2C
    with pytest.raises(ValueError, match="decay must be in 0.001..86400, got 0.0"):
        parse_spec("p2c-ewma:decay=0")
