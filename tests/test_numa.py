"""NUMA (issue 16): nvme:numa's per-node current path and dm:io-affinity's CPU map, by hand, and the penalty rule.

nvme:numa follows drivers/nvme/host/multipath.c (``__nvme_find_path``: the
live optimized path at the least ``node_distance(node, ctrl->numa_node)``,
cached in ``current_path[node]``); dm:io-affinity follows
drivers/md/dm-ps-io-affinity.c (``ioa_select_path``: the submitting CPU's
path, else one on its node, else any mapped path that has not failed), with
a workload's node standing for its CPUs.
"""

from __future__ import annotations

import pytest

import pathsel
from pathsel.policies import DmIoAffinity, NvmeNuma, NvmeRoundRobin, build_policy

from .policy_rig import Rig


def on(rig, node, k=2):
    rig.node = node
    return rig.names_of(k)


# -- nvme:numa ------------------------------------------------------------------------------------
def test_numa_each_node_takes_its_nearest_optimized_path():
    rig = Rig(["AO", "AO", "AO", "AO"], nodes=[0, 0, 1, 1])
    pol = rig.bind(NvmeNuma())
    assert on(rig, 0) == ["p0", "p0"]
    assert on(rig, 1) == ["p2", "p2"]  # two nodes, two paths: current_path is per node
    assert on(rig, 0) == ["p0", "p0"]
    assert list(pol.state.cur[0][:2]) == [0, 2]
    assert pol.config_string() == "iopolicy=numa current_path=[node0:p0, node1:p2]"


def test_numa_uses_the_slit_distances():
    # three nodes: from node 0, node 2 (distance 15) is nearer than node 1 (30)
    slit = [[10, 30, 15], [30, 10, 30], [15, 30, 10]]
    rig = Rig(["AO", "AO"], nodes=[1, 2], distances=slit)
    rig.bind(NvmeNuma())
    assert on(rig, 0) == ["p1", "p1"]
    assert on(rig, 1) == ["p0", "p0"]
    assert on(rig, 2) == ["p1", "p1"]


def test_numa_ties_go_to_the_first_path_and_optimized_beats_nearer_non_optimized():
    rig = Rig(["ANO", "AO", "AO"], nodes=[1, 0, 0])
    rig.bind(NvmeNuma())
    assert on(rig, 1) == ["p1", "p1"]  # the remote optimized path before the local non-optimized one
    rig.alua(1, "ANO")
    rig.alua(2, "ANO")
    assert on(rig, 1) == ["p0", "p0"]  # no optimized path: the nearest non-optimized, found on every I/O
    assert on(rig, 0) == ["p1", "p1"]  # nearest non-optimized from node 0, the first of equals


def test_numa_fails_over_per_node_and_set_live_finds_every_node_again():
    rig = Rig(["AO", "AO", "AO", "AO"], nodes=[0, 0, 1, 1])
    pol = rig.bind(NvmeNuma())
    assert on(rig, 0) == ["p0", "p0"] and on(rig, 1) == ["p2", "p2"]
    rig.down(2)  # the controller leaves LIVE: only disabled (nvme_path_is_disabled), nothing cleared
    assert list(pol.state.cur[0][:2]) == [0, 2]
    pol.on_fail(rig.views[2], rig.io(), 0.0)  # nvme_failover_req on p2: node 1's current path cleared; node 0's kept
    assert list(pol.state.cur[0][:2]) == [0, -1]
    assert on(rig, 1) == ["p3", "p3"]
    rig.down(3)
    assert on(rig, 1) == ["p0", "p0"]  # the only optimized paths left are remote
    rig.up(2)  # nvme_mpath_set_live: every node's current path found again
    assert list(pol.state.cur[0][:2]) == [0, 2]
    assert on(rig, 1) == ["p2", "p2"]


def test_numa_without_numa_keys_is_the_first_optimized_path():
    rig = Rig(["ANO", "AO", "AO"])
    pol = rig.bind(NvmeNuma())
    assert rig.names_of(3) == ["p1"] * 3
    assert pol.config_string() == "iopolicy=numa current_path=p1"


def test_round_robin_rotates_per_issuing_node():
    # nvme_round_robin_path: old = current_path[numa_node_id()]; no distance compared (LOCAL_DISTANCE for all)
    rig = Rig(["AO", "AO", "AO", "AO"], nodes=[0, 0, 1, 1])
    pol = rig.bind(NvmeRoundRobin())
    assert on(rig, 0, 3) == ["p1", "p2", "p3"]  # current_path was p0 on every node (nvme_mpath_set_live, issue 51)
    assert on(rig, 1, 2) == ["p1", "p2"]  # its own cursor, from the same start
    assert on(rig, 0, 1) == ["p0"]
    assert pol.config_string() == "iopolicy=round-robin current_path=[node0:p0, node1:p2]"
    rig.down(2)  # only disabled: node 1 walks on from it (issue 34)
    assert list(pol.state.cur[0][:2]) == [0, 2]
    assert on(rig, 1, 1) == ["p3"]
    pol.on_fail(rig.views[3], rig.io(), 0.0)  # a request fails over on p3: forgotten by the node whose current path it was
    assert list(pol.state.cur[0][:2]) == [0, -1]
    assert on(rig, 1, 2) == ["p0", "p1"]


# -- dm:io-affinity --------------------------------------------------------------------------------
def test_io_affinity_maps_each_node_to_its_first_path():
    rig = Rig(["AO", "AO", "AO", "AO"], nodes=[0, 0, 1, 1])
    pol = rig.bind(DmIoAffinity())
    assert on(rig, 0, 3) == ["p0"] * 3
    assert on(rig, 1, 3) == ["p2"] * 3  # p1 and p3: their node's CPUs are mapped already (ignored)
    assert pol.config_string().startswith("policy='io-affinity 0' prio=50 status=active")


def test_io_affinity_falls_back_to_any_mapped_path_in_cpu_order():
    rig = Rig(["AO", "AO", "AO", "AO"], nodes=[0, 0, 1, 1])
    rig.bind(DmIoAffinity())
    rig.down(2)
    assert on(rig, 1) == ["p0", "p0"]  # node 1's path failed: the first mapped path that has not (node 0's)
    rig.down(0)
    assert on(rig, 0) == [None, None]  # p1, p3 are not mapped: no path, although they are up
    rig.up(2)
    assert on(rig, 0) == ["p2", "p2"]
    assert on(rig, 1) == ["p2", "p2"]


def test_io_affinity_a_node_without_a_path_takes_the_first_mapped():
    rig = Rig(["AO", "AO"], nodes=[1, 2], distances=[[10, 20, 20], [20, 10, 20], [20, 20, 10]])
    rig.bind(DmIoAffinity())
    assert on(rig, 0) == ["p0", "p0"]  # a miss (map_misses), then CPU order: node 1's path first
    assert on(rig, 2) == ["p1", "p1"]


def test_io_affinity_works_within_the_current_path_group():
    # group_by_prio: the AO group only; its map holds p1 (node 0) and p3 (node 1)
    rig = Rig(["ANO", "AO", "ANO", "AO"], nodes=[0, 0, 1, 1])
    rig.bind(DmIoAffinity())
    assert on(rig, 0) == ["p1", "p1"]
    assert on(rig, 1) == ["p3", "p3"]
    rig.down(1, 3)  # the AO group is empty: the ANO group, with its own map
    assert on(rig, 0) == ["p0", "p0"]
    assert on(rig, 1) == ["p2", "p2"]


def test_io_affinity_spec_and_alias():
    assert build_policy("dm:io-affinity").name == "dm:io-affinity"
    assert build_policy("dm:ioa:path_grouping_policy=multibus").params["path_grouping_policy"] == "multibus"


# -- the penalty rule ----------------------------------------------------------------------------
TWO_SOCKETS = """
seed = 3
duration = "50ms"
protocol = "nvme"

[[arrays]]
name = "a"
service_time = "100us"

[[hosts]]
name = "h"
numa_nodes = 2
numa_distances = [[10, 21], [21, 10]]
{penalty}

[[paths]]
name = "n0"
array = "a"
one_way_latency = "20us"

[[paths]]
name = "n1"
array = "a"
one_way_latency = "20us"
numa_node = 1

[[workloads]]
name = "w"
rw = "randread"
iodepth = 1
numa_node = {node}

[[policies]]
spec = "nvme:numa"

[[policies]]
spec = "hpp:fixed"
preferred = "n1"
"""


def test_a_remote_adapter_costs_the_penalty_once_per_attempt():
    def lat(node, penalty=""):
        res = pathsel.simulate(pathsel.loads_scenario(TWO_SOCKETS.format(node=node, penalty=penalty)), engine="fast")
        return [r.latency_us["mean"] for r in res.runs]

    (local0, remote0) = lat(0)  # nvme:numa: n0 (local), fixed on n1: remote from node 0
    assert remote0 - local0 == pytest.approx(0.5 * 1.1, abs=1e-6)  # 0.5 us per 10 units, distance 21
    (local1, fixed_local) = lat(1)
    assert local1 == pytest.approx(fixed_local, abs=1e-9) and local1 == pytest.approx(local0, abs=1e-6)  # both local
    (a, b) = lat(0, 'numa_penalty = "3us"')
    assert b - a == pytest.approx(3 * 1.1, abs=1e-6)


# -- issue 38: a one-node host beside a host with more nodes ------------------------------------------------------
# The kernel keeps head->current_path[node] for each node of the machine it runs on (drivers/nvme/host/multipath.c,
# for_each_node), so a one-node host has one current path and prints current_path=NAME, and a host prints as many
# nodes as it has, whatever another host of the scenario has. The fast engine once sized this by the run's most
# nodes and printed "[node0:..., node1:none]" on the one-node host.
MIXED = """
name = "mixed-numa"
seed = 11
duration = "60ms"
protocol = "nvme"

[[arrays]]
name = "a"
concurrency = 8
service_time = {{ dist = "exponential", mean = "50us" }}

[[hosts]]
name = "big"
numa_nodes = {big}
detection = "0s"

[[hosts]]
name = "small"
numa_nodes = {small}
detection = "0s"

[[paths]]
name = "nvme0-a"
host = "big"
array = "a"
one_way_latency = "20us"

[[paths]]
name = "nvme0-b"
host = "big"
array = "a"
one_way_latency = "20us"
numa_node = 1

[[paths]]
name = "nvme0-c"
host = "big"
array = "a"
one_way_latency = "20us"
alua = "ANO"
numa_node = 1

[[paths]]
name = "nvme1-local-1"
host = "small"
array = "a"
one_way_latency = "20us"

[[paths]]
name = "nvme1-remote-1"
host = "small"
array = "a"
one_way_latency = "20us"
alua = "ANO"

[[workloads]]
name = "w0"
host = "big"
iodepth = 2

[[workloads]]
name = "w1"
host = "big"
iodepth = 2
numa_node = 1

[[workloads]]
name = "w2"
host = "small"
iodepth = 2
{faults}
"""

# nvme0-a turns ANO halfway: round-robin's cursor on each node then settles on nvme0-b, the one optimized path left,
# so the final text does not depend on how many I/Os each node issued
A_TO_ANO = """
[[faults]]
at = "30ms"
what = "alua"
path = "nvme0-a"
host = "big"
state = "ANO"
"""
IOA = "policy='io-affinity 0' prio=50 status=active [2 groups, group_by_prio, failback=manual]"

# (big host's nodes, small host's nodes, policy, faults, big's device_config, small's)
MIXED_CASES = [
    (2, 1, "nvme:numa", "", "iopolicy=numa current_path=[node0:nvme0-a, node1:nvme0-b]", "iopolicy=numa current_path=nvme1-local-1"),
    (
        2,
        1,
        "nvme:round-robin",
        A_TO_ANO,
        "iopolicy=round-robin current_path=[node0:nvme0-b, node1:nvme0-b]",
        "iopolicy=round-robin current_path=nvme1-local-1",
    ),
    (2, 1, "nvme:numa", A_TO_ANO, "iopolicy=numa current_path=[node0:nvme0-b, node1:nvme0-b]", "iopolicy=numa current_path=nvme1-local-1"),
    (2, 1, "dm:io-affinity", "", IOA, IOA),
    # three nodes beside two: each prints its own; a node nothing ran on has no current path
    (
        3,
        2,
        "nvme:numa",
        "",
        "iopolicy=numa current_path=[node0:nvme0-a, node1:nvme0-b, node2:none]",
        "iopolicy=numa current_path=[node0:nvme1-local-1, node1:none]",
    ),
    (
        3,
        2,
        "nvme:round-robin",
        A_TO_ANO,
        # round-robin: set_live gave every node the first optimized path as the paths went live (issue 51); numa's
        # nodes find theirs at their first I/O (the same path), so a node nothing ran on shows none
        "iopolicy=round-robin current_path=[node0:nvme0-b, node1:nvme0-b, node2:nvme0-a]",
        "iopolicy=round-robin current_path=[node0:nvme1-local-1, node1:nvme1-local-1]",
    ),
    (1, 1, "nvme:numa", "", "iopolicy=numa current_path=nvme0-a", "iopolicy=numa current_path=nvme1-local-1"),
]


@pytest.mark.parametrize(
    ("big", "small", "policy", "faults", "want_big", "want_small"),
    MIXED_CASES,
    ids=[f"{c[0]}+{c[1]}-nodes-{c[2]}{'-a-to-ANO' if c[3] else ''}" for c in MIXED_CASES],
)
def test_each_host_prints_its_own_nodes_on_both_engines(big, small, policy, faults, want_big, want_small):
    text = MIXED.format(big=big, small=small, faults=faults)
    if big == 1:  # one node: every path and workload on node 0
        text = text.replace("numa_node = 1\n", "")
    sc = pathsel.loads_scenario(text, "mixed")
    for engine in ("fast", "reference"):
        (run,) = pathsel.simulate(sc, policies=[policy], engine=engine).runs
        assert run.metrics.config_strings == {"big": want_big, "small": want_small}, engine
