"""AIX MPIO algorithm=shortest_queue: exact choices on a hand-driven host (tests/policy_rig.py), then a short run."""

from __future__ import annotations

import pathsel
from pathsel.policies import AixShortestQueue, build_policy, parse_spec

from .policy_rig import Rig


def test_light_load_rotates_like_round_robin():
    rig = Rig(["AO"] * 3)
    rig.bind(AixShortestQueue())
    assert rig.names_idle(7) == ["p0", "p1", "p2", "p0", "p1", "p2", "p0"]


def test_under_load_the_fewest_pending_wins():
    rig = Rig(["AO"] * 4)
    rig.bind(AixShortestQueue())
    for i, c in enumerate([3, 1, 0, 2]):
        rig.busy(i, c)
    assert rig.names_of(1) == ["p2"]
    assert rig.names_of(1) == ["p1"]  # p1 and p2 have 1 each now: the scan starts after p2, so p3, p0, p1
    assert rig.names_of(1) == ["p2"]  # 2, 2, 2, 3: after p1, p2 is the first of the least


def test_ties_start_after_the_last_path_used():
    rig = Rig(["AO"] * 3)
    rig.bind(AixShortestQueue())
    for i in range(3):
        rig.busy(i, 1)
    assert rig.names_of(3) == ["p0", "p1", "p2"]


def test_only_the_active_subset_and_enabled_paths():
    rig = Rig(["ANO", "AO", "AO", "ANO"])
    rig.bind(AixShortestQueue())
    assert set(rig.names_idle(6)) == {"p1", "p2"}  # the preferred (AO) paths only
    rig.down(1)
    assert rig.names_idle(3) == ["p2", "p2", "p2"]
    rig.down(2)
    assert set(rig.names_idle(4)) == {"p0", "p3"}  # no AO path left: the non-preferred ones
    rig.down(0, 3)
    assert rig.names_of(1) == [None]


def test_spec_aliases_and_config_string():
    assert parse_spec("aix:sq")[0].name == parse_spec("aix:shortest-queue")[0].name == "aix:shortest_queue"
    rig = Rig(["AO", "AO"])
    pol = rig.bind(build_policy("aix:shortest_queue"))
    rig.names_of(2)
    assert pol.config_string() == "algorithm=shortest_queue last=p1 pending=1"


def test_a_short_run_on_both_engines():
    fast = pathsel.simulate(policies=["aix:shortest_queue"], duration=0.05, engine="fast", trace=True)
    ref = pathsel.simulate(policies=["aix:shortest_queue"], duration=0.05, engine="reference", trace=True)
    assert fast.runs[0].metrics.trace == ref.runs[0].metrics.trace
    assert fast.runs[0].iops > 0
