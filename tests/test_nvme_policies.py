"""Linux NVMe native multipath: iopolicy numa, round-robin and queue-depth (drivers/nvme/host/multipath.c).

Cases from the kernel functions: ANA optimized before non-optimized,
__nvme_find_path's first optimized path, nvme_round_robin_path's rotation
(and its backwards walk over non-optimized paths), nvme_queue_depth_path's
per-controller counter shared by every namespace and its early return.
"""

from __future__ import annotations

import pytest

from pathsel.policies import NvmeNuma, NvmeQueueDepth, NvmeRoundRobin, build_policy

from .policy_rig import Rig


# -- numa -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "ana, expected",
    [
        (["AO", "AO", "AO"], "p0"),
        (["ANO", "AO", "AO"], "p1"),  # optimized before non-optimized
        (["ANO", "ANO"], "p0"),  # no optimized path: the first non-optimized
        (["standby", "ANO", "AO"], "p2"),
        (["unavailable", "standby"], None),
    ],
)
def test_numa_first_optimized_path(ana, expected):
    rig = Rig(ana)
    rig.bind(NvmeNuma())
    assert rig.names_of(4) == [expected] * 4


def test_numa_keeps_its_path_and_finds_again_when_it_fails():
    rig = Rig(["AO", "AO", "ANO"])
    rig.bind(NvmeNuma())
    assert rig.names_of(2) == ["p0", "p0"]
    rig.down(0)
    assert rig.names_of(2) == ["p1", "p1"]
    rig.down(1)
    assert rig.names_of(2) == ["p2", "p2"]  # non-optimized fallback
    rig.up(1)  # nvme_mpath_set_live: optimized and live, current_path found again
    assert rig.names_of(2) == ["p1", "p1"]
    rig.up(0)
    assert rig.names_of(2) == ["p0", "p0"]


def test_numa_leaves_a_path_that_stops_being_optimized():
    rig = Rig(["AO", "AO"])
    rig.bind(NvmeNuma())
    assert rig.names_of(1) == ["p0"]
    rig.alua(0, "ANO")
    assert rig.names_of(2) == ["p1", "p1"]
    rig.alua(1, "ANO")  # no optimized path left: the first non-optimized, re-found on every I/O
    assert rig.names_of(2) == ["p0", "p0"]
    rig.alua(1, "AO")
    assert rig.names_of(1) == ["p1"]


# -- round-robin ----------------------------------------------------------------
@pytest.mark.parametrize(
    "ana, expected",
    [
        # current_path is the first optimized path before any I/O (nvme_mpath_set_live as the paths went live): the
        # rotation starts after it
        (["AO", "AO", "AO"], ["p1", "p2", "p0", "p1", "p2"]),
        (["AO", "ANO", "AO"], ["p2", "p0", "p2", "p0"]),  # non-optimized skipped
        (["ANO", "AO", "ANO", "AO"], ["p3", "p1", "p3", "p1"]),
        (["AO", "ANO", "ANO"], ["p0", "p0", "p0"]),  # the only optimized path: stay on it
        # only non-optimized paths: the *last* one met in the loop wins, so the rotation runs backwards
        (["ANO", "ANO", "ANO"], ["p0", "p2", "p1", "p0", "p2", "p1"]),
        (["ANO", "ANO", "ANO", "ANO"], ["p0", "p3", "p2", "p1", "p0"]),
        (["AO"], ["p0", "p0"]),
        (["standby", "AO", "unavailable", "AO"], ["p3", "p1", "p3"]),
    ],
)
def test_round_robin_rotation(ana, expected):
    rig = Rig(ana)
    rig.bind(NvmeRoundRobin())
    assert rig.names_of(len(expected)) == expected


def test_round_robin_skips_a_path_that_is_down_and_restarts_after_a_failure():
    rig = Rig(["AO"] * 4)
    rig.bind(NvmeRoundRobin())
    assert rig.names_of(2) == ["p1", "p2"]
    rig.down(2)
    assert rig.names_of(3) == ["p3", "p0", "p1"]
    rig.down(1)  # the current path's controller goes down: only disabled, round robin walks on from it (issue 34)
    assert rig.names_of(3) == ["p3", "p0", "p3"]
    rig.policy.on_fail(rig.views[3], rig.io(), 0.0)  # a request fails over on the current path: forgotten
    assert rig.names_of(2) == ["p0", "p3"]  # the next I/O finds the first optimized path


def test_round_robin_all_down_then_back():
    rig = Rig(["AO", "AO"])
    rig.bind(NvmeRoundRobin())
    rig.names_of(1)
    rig.down(0, 1)
    assert rig.names_of(1) == [None]
    rig.up(1)
    assert rig.names_of(2) == ["p1", "p1"]  # p0 still down
    rig.up(0)  # set_live: current_path is the first optimized path, p0; round-robin goes on from it
    assert rig.names_of(3) == ["p1", "p0", "p1"]


# -- queue-depth -------------------------------------------------------------------
@pytest.mark.parametrize(
    "ana, depth, expected",
    [
        (["AO", "AO", "AO"], [2, 1, 3], "p1"),
        (["AO", "AO", "AO"], [2, 1, 1], "p1"),  # strict <: the first of the least
        (["AO", "AO"], [0, 0], "p0"),
        (["AO", "ANO"], [5, 0], "p0"),  # optimized first, however deep
        (["ANO", "ANO", "AO"], [0, 0, 9], "p2"),
        (["ANO", "ANO"], [2, 1], "p1"),
        (["standby", "ANO", "ANO"], [0, 3, 3], "p1"),
    ],
)
def test_queue_depth_fewest_active_optimized_first(ana, depth, expected):
    rig = Rig(ana)
    rig.bind(NvmeQueueDepth())
    for i, d in enumerate(depth):
        rig.busy(i, d)
    assert rig.names_of(1) == [expected]


def test_queue_depth_returns_at_an_idle_optimized_path():
    rig = Rig(["AO", "AO", "AO", "AO"])
    rig.bind(NvmeQueueDepth())
    for i, d in enumerate([3, 0, 0, 1]):
        rig.busy(i, d)
    assert rig.names_of(1) == ["p1"]  # nvme_queue_depth_path returns at the first optimized path at depth 0


def test_queue_depth_counter_is_per_controller_and_shared_by_namespaces():
    # two namespaces, each with a path through controller 0 and one through controller 1
    rig = Rig(["AO"] * 4, controllers=[0, 1, 0, 1], devices=[[0, 1], [2, 3]], names=["n1c0", "n1c1", "n2c0", "n2c1"])
    rig.bind(NvmeQueueDepth(), device=0)
    rig.bind(NvmeQueueDepth(), device=1)
    # namespace 2 keeps controller 0 busy
    rig.busy(2, 3)
    assert rig.names_of(1, device=0) == ["n1c1"]  # namespace 1's own path to controller 0 is idle, the controller is not
    assert rig.names_of(1, device=1) == ["n2c1"]
    assert rig.views[0].controller_outstanding == 3 and rig.views[0].outstanding == 0
    # both now have one on controller 1 (2 in all): controller 0 has 3, still deeper
    assert rig.names_of(1, device=0) == ["n1c1"]
    assert rig.names_of(2, device=1) == ["n2c0", "n2c1"]  # 3 vs 3: the first path in the list, then 4 vs 3


def test_queue_depth_vs_per_path_counting():
    # the same load counted per path (this namespace only) would choose controller 0
    rig = Rig(["AO"] * 4, controllers=[0, 1, 0, 1], devices=[[0, 1], [2, 3]])
    pol = rig.bind(NvmeQueueDepth())
    rig.busy(2, 5)
    rig.busy(1, 1)
    assert rig.names_of(1) == ["p1"]
    assert "nr_active=2" in pol.config_string()


# -- specs ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, cls, text",
    [
        ("nvme:numa", NvmeNuma, "iopolicy=numa"),
        ("nvme:round-robin", NvmeRoundRobin, "iopolicy=round-robin"),
        ("nvme:rr", NvmeRoundRobin, "iopolicy=round-robin"),
        ("nvme:queue-depth", NvmeQueueDepth, "iopolicy=queue-depth"),
        ("NVME:QD", NvmeQueueDepth, "iopolicy=queue-depth"),
    ],
)
def test_specs_and_config_strings(spec, cls, text):
    rig = Rig(["AO", "AO"])
    pol = rig.bind(build_policy(spec))
    assert type(pol) is cls
    rig.names_of(1)
    assert pol.config_string().startswith(text)
