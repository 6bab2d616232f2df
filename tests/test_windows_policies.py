"""Windows MPIO (Microsoft DSM): the six load-balance policies.

Cases from Microsoft's "MPIO Policies" page: Fail Over Only's return to the
active path, Round Robin with Subset's A/B/C primary and D standby example,
Least Queue Depth's LUN 1 / LUN 2 example (counted per path across LUNs),
Least Blocks' 10 + 20 byte example, and Weighted Paths' least weight.
"""

from __future__ import annotations

import pytest

from pathsel.policies import (
    MpioFailoverOnly,
    MpioLeastBlocks,
    MpioLeastQueueDepth,
    MpioRoundRobin,
    MpioRoundRobinWithSubset,
    MpioWeightedPaths,
    build_policy,
)

from .policy_rig import Rig


# -- Fail Over Only -----------------------------------------------------------------
def test_failover_only_returns_to_the_active_path():
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(MpioFailoverOnly())
    assert rig.names_of(3) == ["p0"] * 3
    rig.down(0)
    assert rig.names_of(3) == ["p1"] * 3
    rig.up(0)  # "the standby path that was activated returns to standby"
    assert rig.names_of(3) == ["p0"] * 3


def test_failover_only_without_failback_stays():
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(MpioFailoverOnly(failback=0))
    rig.down(0)
    assert rig.names_of(2) == ["p1", "p1"]
    rig.up(0)
    assert rig.names_of(2) == ["p1", "p1"]
    rig.down(1)
    assert rig.names_of(2) == ["p0", "p0"]


def test_failover_only_under_alua():
    rig = Rig(["ANO", "AO", "AO"])
    rig.bind(MpioFailoverOnly())
    assert rig.names_of(2) == ["p1", "p1"]  # the first AO path is the active one
    rig.down(1)
    assert rig.names_of(2) == ["p2", "p2"]  # an AO standby before the ANO one
    rig.down(2)
    assert rig.names_of(2) == ["p0", "p0"]
    rig.down(0)
    assert rig.names_of(1) == [None]


# -- Round Robin, Round Robin with Subset ---------------------------------------------
@pytest.mark.parametrize(
    "alua, expected",
    [
        (["AO", "AO", "AO"], ["p0", "p1", "p2", "p0"]),
        (["AO", "ANO", "AO"], ["p0", "p1", "p2", "p0"]),  # every available path
        (["standby", "ANO", "AO"], ["p1", "p2", "p1"]),
    ],
)
def test_round_robin_uses_every_available_path(alua, expected):
    rig = Rig(alua)
    rig.bind(MpioRoundRobin())
    assert rig.names_of(len(expected)) == expected


def test_round_robin_with_subset_microsofts_example():
    # A, B, C primary (AO), D standby (ANO)
    rig = Rig(["AO", "AO", "AO", "ANO"], names=["A", "B", "C", "D"])
    rig.bind(MpioRoundRobinWithSubset())
    assert rig.names_of(6) == ["A", "B", "C", "A", "B", "C"]
    rig.down(0)
    assert set(rig.names_of(4)) == {"B", "C"}  # as long as one primary is available
    rig.down(1, 2)
    assert rig.names_of(2) == ["D", "D"]  # all primaries failed: the standby path
    rig.up(1)
    assert rig.names_of(2) == ["B", "B"]  # a primary is back: stop using D


# -- Least Queue Depth, Least Blocks ----------------------------------------------------
def test_least_queue_depth_microsofts_lun_example():
    # Path 1 and Path 2 (nexus 0 and 1) carry LUN 1 and LUN 2
    rig = Rig(["AO"] * 4, controllers=[0, 1, 0, 1], devices=[[0, 1], [2, 3]], names=["L1P1", "L1P2", "L2P1", "L2P2"])
    rig.bind(MpioLeastQueueDepth(), device=0)
    rig.bind(MpioLeastQueueDepth(), device=1)
    rig.busy(0, 1)  # one I/O to LUN 1 on Path 1
    rig.busy(2, 1)  # the other to LUN 2 on Path 1
    # cumulative outstanding: Path 1 = 2, Path 2 = 0, so the next I/O for either LUN uses Path 2
    assert rig.names_of(1, device=0) == ["L1P2"]
    assert rig.names_of(1, device=1) == ["L2P2"]
    assert rig.names_of(1, device=0) == ["L1P1"]  # 2 vs 2: the first path


@pytest.mark.parametrize(
    "alua, depth, expected",
    [
        (["AO", "AO", "AO"], [2, 0, 0], "p1"),
        (["AO", "AO", "AO"], [1, 1, 1], "p0"),
        (["AO", "ANO"], [3, 0], "p0"),  # ALUA working set: AO while any is usable
        (["ANO", "ANO"], [3, 1], "p1"),
    ],
)
def test_least_queue_depth_table(alua, depth, expected):
    rig = Rig(alua)
    rig.bind(MpioLeastQueueDepth())
    for i, d in enumerate(depth):
        rig.busy(i, d)
    assert rig.names_of(1) == [expected]


def test_least_blocks_microsofts_example():
    # two I/Os of 10 and 20 bytes in process on Path 1: 30 bytes; Path 2: 0
    rig = Rig(["AO", "AO"], names=["P1", "P2"])
    rig.bind(MpioLeastBlocks())
    rig.busy(0, 1, 10)
    rig.busy(0, 1, 20)
    assert rig.views[0].controller_outstanding_bytes == 30
    assert rig.names_of(1) == ["P2"]


def test_least_blocks_counts_bytes_least_queue_depth_counts_requests():
    for cls, expected in ((MpioLeastBlocks, "p0"), (MpioLeastQueueDepth, "p1")):
        rig = Rig(["AO", "AO"])
        rig.bind(cls())
        rig.busy(0, 3, 512)  # 1.5 KiB in three requests
        rig.busy(1, 1, 65536)  # 64 KiB in one
        assert rig.names_of(1) == [expected], cls.__name__


def test_least_blocks_counts_across_luns():
    rig = Rig(["AO"] * 4, controllers=[0, 1, 0, 1], devices=[[0, 1], [2, 3]])
    rig.bind(MpioLeastBlocks())
    rig.busy(2, 1, 65536)  # the other LUN's I/O on nexus 0
    rig.busy(1, 1, 4096)
    assert rig.names_of(1) == ["p1"]


# -- Weighted Paths --------------------------------------------------------------------
@pytest.mark.parametrize(
    "alua, weights, down, expected",
    [
        (["AO", "AO", "AO"], [5, 1, 3], [], "p1"),
        (["AO", "AO", "AO"], [5, 1, 3], [1], "p2"),  # the next least weight
        (["AO", "AO", "AO"], [2, 2, 2], [], "p0"),  # equal weights: the first path
        (["AO", "AO", "AO"], [0, 0, 0], [0], "p1"),
        (["AO", "ANO", "AO"], [5, 0, 3], [], "p2"),  # ANO with less weight waits while AO is usable
        (["AO", "ANO"], [5, 0], [0], "p1"),
    ],
)
def test_weighted_paths_least_weight(alua, weights, down, expected):
    rig = Rig(alua, weights=weights)
    rig.bind(MpioWeightedPaths())
    rig.down(*down)
    assert rig.names_of(3) == [expected] * 3  # static: load does not move it


# -- specs ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, cls, text",
    [
        ("mpio:fo", MpioFailoverOnly, "LoadBalancePolicy=FOO"),
        ("mpio:FOO", MpioFailoverOnly, "LoadBalancePolicy=FOO"),
        ("mpio:fo:failback=0", MpioFailoverOnly, "LoadBalancePolicy=FOO"),
        ("mpio:rr", MpioRoundRobin, "LoadBalancePolicy=RR "),
        ("mpio:rrws", MpioRoundRobinWithSubset, "LoadBalancePolicy=RRWS"),
        ("mpio:lqd", MpioLeastQueueDepth, "LoadBalancePolicy=LQD"),
        ("mpio:wp", MpioWeightedPaths, "LoadBalancePolicy=WP"),
        ("mpio:lb", MpioLeastBlocks, "LoadBalancePolicy=LB"),
    ],
)
def test_specs_and_config_strings(spec, cls, text):
    rig = Rig(["AO", "AO"])
    pol = rig.bind(build_policy(spec))
    assert type(pol) is cls
    rig.names_of(1)
    assert pol.config_string().startswith(text)
