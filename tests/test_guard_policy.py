"""guard:v1 (guard as it was before issue 37, kept by name): least service time x (in flight + 1) in the ALUA tier, gray paths ejected, slow start back.

Hand-driven on the policy rig (no engine): every expected choice is written
out. Then end to end: both engines agree on it, and on a path that turns 10x
slower mid-run it stops using that path while round robin keeps feeding it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pathsel
from pathsel.policies import GuardV1 as Guard
from pathsel.policies import build_policy, parse_spec
from pathsel.scenario import loads_scenario

from .policy_rig import Rig


def _go(rig: Rig) -> tuple:
    """One I/O chosen and started, as the engines do it (the table, then the policy's start hook)."""
    io, p = rig.pick()
    if p is not None:
        rig.policy.on_start(p, io)
    return io, p


def _names(rig: Rig, k: int, latencies: list[float] | None = None) -> list:
    """``k`` I/Os; with ``latencies`` each completes (after its path's latency) before the next, else all stay in flight."""
    out = []
    for _ in range(k):
        io, p = _go(rig)
        out.append(p.name if p is not None else None)
        if p is not None and latencies is not None:
            rig.complete(io, p, latencies[p.index])
    return out


def _feed(rig: Rig, k: int, latency: float, times: int) -> None:
    """``times`` I/Os that the policy did not choose, on table path ``k``, each completing after ``latency``."""
    for _ in range(times):
        io = rig.io()
        p = rig.views[k]
        rig.table.start(k, io.size)
        rig.policy.on_start(p, io)
        rig.complete(io, p, latency)


def _names_idle(rig: Rig, k: int) -> list:
    return _names(rig, k, [0.001] * len(rig.names))


def test_defaults_and_specs():
    pol = build_policy("guard:v1")
    assert pol.params == {"decay": 0.05, "eject_ratio": 3.0, "hold": 0.5, "slow_start": 8, "use_ano": 0}
    assert build_policy("guard:v1:eject_ratio=3,hold=2").params["eject_ratio"] == 3.0
    with pytest.raises(ValueError, match="eject_ratio must be in 1.05..1000, got 1.0"):
        parse_spec("guard:v1:eject_ratio=1")


def test_idle_identical_paths_rotate():
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(Guard())
    assert _names_idle(rig, 6) == ["p0", "p1", "p2", "p0", "p1", "p2"]


def test_alua_tier_first_and_use_ano():
    rig = Rig(["ANO", "AO", "ANO", "AO"])
    rig.bind(Guard())
    assert set(_names_idle(rig, 20)) == {"p1", "p3"}
    rig.down(1, 3)
    assert set(_names_idle(rig, 20)) == {"p0", "p2"}  # no AO path left: the ANO tier
    rig2 = Rig(["ANO", "AO"])
    rig2.bind(Guard(use_ano=1))
    assert set(rig2.names_idle(10)) == {"p0", "p1"}


def test_least_latency_times_in_flight():
    rig = Rig(["AO", "AO"])
    rig.bind(Guard(eject_ratio=100))
    _feed(rig, 0, 0.001, 4)
    _feed(rig, 1, 0.0015, 4)
    # p0 averages 1 ms, p1 1.5 ms: idle, p0 wins; with one I/O on p0 (cost 2 ms) p1 (1.5 ms) wins;
    # then two on p0 against one on p1: 3 ms against 3 ms, a tie: the rotation goes on from p1, to p0.
    assert _names(rig, 3) == ["p0", "p1", "p0"]


def test_a_slow_path_is_ejected_then_measured_afresh_and_readmitted_slowly():
    rig = Rig(["AO", "AO", "AO"])
    pol = rig.bind(Guard())
    lat = [0.001, 0.001, 0.005]  # p2 is 5x the best: over eject_ratio 2
    for k in range(3):
        _feed(rig, k, lat[k], 4)
    assert "p2" not in _names(rig, 30, lat)
    assert rig.event_names().count("ejection") == 1
    assert rig.events[-1][1]["path"] == "p2" and rig.events[-1][1]["why"] == "latency"
    assert pol.state.samples[0][2] == 0  # its average is forgotten: it is measured afresh when it comes back
    # After the hold (0.5 s) p2 is tried again, one I/O at a time (slow start).
    rig.now = 0.6
    assert _names(rig, 6).count("p2") == 1


def test_an_ejected_path_that_is_still_slow_is_held_twice_as_long():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(Guard())
    _feed(rig, 0, 0.001, 4)
    _feed(rig, 1, 0.01, 4)
    _names(rig, 1, [0.001, 0.01])
    assert float(pol.state.until[0][1]) == pytest.approx(0.5)
    rig.now = 0.6  # p1 comes back, still 10x slower: judged again after 4 new samples, and out for twice as long
    _feed(rig, 1, 0.01, 4)
    rig.now = 0.61  # the median is worked out again every decay / 8 (6.25 ms)
    _names(rig, 1, [0.001, 0.01])
    assert float(pol.state.until[0][1]) == pytest.approx(0.61 + 1.0)
    assert int(pol.state.strikes[0][1]) == 2


def test_a_lost_attempt_ejects_at_once():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(Guard())
    io, p = _go(rig)
    assert p.name == "p0"
    rig.table.end(p.index, io.size)  # the attempt ended without completing (aborted, or its path failed)
    assert _names(rig, 4, [0.001, 0.001]) == ["p1"] * 4
    assert rig.events[-1][1]["why"] == "lost attempt"
    assert int(pol.state.lost[0][0]) == 1


def test_all_paths_ejected_still_gives_a_path():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(Guard())
    for k in range(2):
        pol.state.until[0][k] = 10.0
    assert _names(rig, 1) in (["p0"], ["p1"])


def test_no_usable_path_gives_none():
    rig = Rig(["AO", "standby"])
    rig.bind(Guard())
    rig.down(0)
    assert _names(rig, 1) == [None]


def test_a_path_back_up_starts_slowly():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(Guard())
    _names(rig, 8, [0.001, 0.001])
    rig.down(1)
    rig.up(1)
    assert int(pol.state.ramp[0][1]) == 8 and int(pol.state.strikes[0][1]) == 1
    assert _names(rig, 4).count("p1") == 1  # one at a time until 8 have completed


GRAY = """
name = "one path turns 10x slower at 0.5 s"
seed = 3
duration = "1.5s"
interval = "50ms"
policies = ["guard:v1", "rr:iops=1", "latency"]

[[arrays]]
name = "array"
concurrency = 64
service_time = { dist = "exponential", mean = "200us" }

[[hosts]]
name = "esx"
queue_depth = 64

[[paths]]
name = "vmhba1:C0:T{i}:L1"
count = 4
array = "array"
one_way_latency = "50us"

[[workloads]]
name = "oltp"
rw = "randrw"
bs = "8k"
iodepth = 32
ramp_time = "200ms"

[[faults]]
at = "500ms"
what = "latency"
path = "vmhba1:C0:T3:L1"
add = "2ms"
"""


def test_engines_agree_on_guard_with_faults():
    sc = loads_scenario(GRAY, "gray.toml")
    a = pathsel.simulate(sc, engine="fast", policies=["guard:v1"]).to_dict()
    b = pathsel.simulate(sc, engine="reference", policies=["guard:v1"]).to_dict()
    assert a["runs"] == b["runs"]


def test_guard_leaves_the_gray_path_and_round_robin_does_not():
    res = pathsel.simulate(loads_scenario(GRAY, "gray.toml"))
    s = res.summary().set_index("policy")
    assert s.loc["guard:v1", "iops"] > 1.3 * s.loc["rr:iops=1", "iops"]
    assert s.loc["guard:v1", "p99_us"] < 0.5 * s.loc["rr:iops=1", "p99_us"]
    guard = res.runs[0]
    ios = {p["name"]: p["ios"] for p in guard.paths()}
    assert ios["vmhba1:C0:T3:L1"] < 0.08 * sum(ios.values())  # a quarter until 0.5 s (5 % of the run), then ~none
    names = [e for e in guard.metrics.events if e.get("event") == "ejection"]
    assert names, "the slow path was never ejected"
    assert all(math.isfinite(x) for x in s.loc["guard:v1", ["iops", "p99_us"]])
    assert np.isfinite(guard.metrics.completed)


def test_the_story_names_the_ejected_paths():
    res = pathsel.simulate(loads_scenario(GRAY, "gray.toml"), policies=["guard:v1"])
    said = " ".join(s for _, ss in res.story() for s in ss)
    assert "It ejected vmhba1:C0:T3:L1" in said and "for latency" in said
