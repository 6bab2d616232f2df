"""pathsel's Linux selectors choose what the kernel's code chooses, at every step (issue 34).

:mod:`tests.kernel_ref` is a model of ``drivers/nvme/host/multipath.c`` and ``dm-ps-queue-length.c`` written from the
kernel source, function by function. Here both it and pathsel's compiled policies (driven by hand through
:mod:`tests.policy_rig`, no engine) get the same operations: an I/O selected and started on a NUMA node, a
completion, a failed attempt (``nvme_failover_req``; pathsel's ``fail`` hook), a controller going down or coming
back, an ANA change. Every select must name the same path. First a table of cases walked line by line (the issue's
example among them), then Hypothesis's random sequences.

``python -m tests.test_kernel_sequences [SEQUENCES]`` runs seeded random sequences and prints how many selects were
compared (the closing note's figure).
"""

from __future__ import annotations

import os
import random
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathsel.policies import DmQueueLength, NvmeNuma, NvmeQueueDepth, NvmeRoundRobin

from .kernel_ref import NvmeHead, QueueLength
from .policy_rig import Rig

NVME = {"numa": NvmeNuma, "round-robin": NvmeRoundRobin, "queue-depth": NvmeQueueDepth}
STATES = ("AO", "ANO", "standby", "unavailable")


class Pair:
    """The kernel model and pathsel's policy, on the same paths, fed the same operations."""

    def __init__(self, iopolicy: str, ana: list[str], nodes: list[int] | None = None, ctrls: list[int] | None = None) -> None:
        n = len(ana)
        nodes = nodes if nodes is not None else [0] * n
        ctrls = ctrls if ctrls is not None else list(range(n))
        nn = max(nodes) + 1
        dist = [[10 if a == b else 20 for b in range(nn)] for a in range(nn)]
        self.rig = Rig(list(ana), controllers=ctrls, nodes=nodes if nn > 1 else None, distances=dist if nn > 1 else None)
        self.pol = self.rig.bind(NVME[iopolicy]())
        self.ref = NvmeHead(list(ana), list(ctrls), list(nodes), dist, iopolicy)
        self.nodes = nn
        self.flight: list[tuple[Any, Any, int]] = []  # (io, path view, path index)
        self.steps = 0

    def io(self, node: int = 0) -> int | None:
        """One I/O from ``node``: both choose; the choices must agree; the I/O stays in flight."""
        self.rig.node = node
        io, p = self.rig.pick()
        want = self.ref.find(node)
        if want is not None and self.ref.ana[want] not in ("AO", "ANO"):
            # list_is_singular: the kernel returns its one path whatever its ANA state (the command would then fail
            # with an ANA error); pathsel waits instead, an assumption nvme.py states
            assert len(self.ref.ana) == 1
            want = None
        got = p.index if p is not None else None
        self.steps += 1
        assert got == want, f"select from node {node}: pathsel {got}, kernel {want}; current_path {self.ref.current_path}"
        if p is not None:
            self.ref.start(p.index)
            self.flight.append((io, p, p.index))
        return got

    def complete(self, i: int = 0) -> None:
        io, p, k = self.flight.pop(i)
        self.rig.complete(io, p, 0.0)
        self.ref.end(k)

    def fail(self, i: int = 0) -> None:
        """The attempt fails over: off the path (the engine's end), then the policy's fail hook / nvme_failover_req."""
        io, p, k = self.flight.pop(i)
        self.rig.table.end(p.index, io.size)
        self.pol.on_fail(p, io, 0.0)
        self.ref.failover(k)

    def down(self, k: int) -> None:
        self.rig.down(k)
        self.ref.ctrl_down(k)

    def up(self, k: int) -> None:
        self.rig.up(k)
        self.ref.ctrl_up(k)

    def ana(self, k: int, state: str) -> None:
        self.rig.alua(k, state)
        self.ref.update_ana_state(k, state)


# -- cases, walked line by line ---------------------------------------------------------------------------
def test_round_robin_starts_after_the_path_set_live_found():
    """Issue 51: when the paths went live, ``nvme_mpath_set_live`` ran ``__nvme_find_path`` for every node, so
    ``current_path`` is the first optimized path before any I/O and the first round-robin I/O goes to the next one.
    Two optimized controllers and one I/O: controller 1 (pathsel gave 0 before issue 51), and the rotation stays in
    that phase."""
    s = Pair("round-robin", ["AO", "AO"])
    assert s.ref.current_path == [0]
    assert [s.io(), s.io(), s.io(), s.io()] == [1, 0, 1, 0]
    three = Pair("round-robin", ["ANO", "AO", "AO"])  # the first *optimized* path is current: path 1
    assert [three.io(), three.io(), three.io()] == [2, 1, 2]
    nodes = Pair("round-robin", ["AO", "AO", "AO"], nodes=[0, 1, 1])  # no distance under round-robin: every node alike
    assert [nodes.io(0), nodes.io(1), nodes.io(1)] == [1, 1, 2]


def test_round_robin_with_no_optimized_path_starts_from_none():
    """set_live finds paths only for an optimized one: with non-optimized paths alone ``current_path`` is NULL and
    the first I/O finds the first of them (``__nvme_find_path``), as before issue 51."""
    s = Pair("round-robin", ["ANO", "ANO"])
    assert s.ref.current_path == [None]
    assert [s.io(), s.io(), s.io()] == [0, 1, 0]


def test_the_issues_example_round_robin_walks_on_past_a_controller_that_went_down():
    """Three optimized paths, one I/O that completes, its path's controller goes down with nothing in flight:
    ``nvme_round_robin_path`` starts from ``current_path`` (that path, not cleared: nothing failed over), skips it as
    disabled, and takes the next. pathsel went back to the first before issue 34."""
    s = Pair("round-robin", ["AO", "AO", "AO"])
    assert s.io() == 1  # current_path was path 0 (set_live): the next
    s.complete()
    s.down(1)
    assert s.io() == 2


def test_a_request_failing_over_clears_the_current_path_round_robin_starts_again_from_the_first():
    """With I/O in flight on the path that goes down: the request fails over (``nvme_failover_req`` ->
    ``nvme_mpath_clear_current_path``), so the retry finds a path again from the head of the list."""
    s = Pair("round-robin", ["AO", "AO", "AO"])
    assert [s.io(), s.io()] == [1, 2]
    s.complete(0)
    s.down(2)
    s.fail(0)  # the I/O on path 2, cancelled by the error recovery
    assert s.ref.current_path == [None]
    assert s.io() == 0


def test_a_failover_on_another_path_leaves_the_current_path_alone():
    s = Pair("round-robin", ["AO", "AO", "AO"])
    assert [s.io(), s.io(), s.io()] == [1, 2, 0]  # current_path: 0
    s.down(1)
    s.fail(0)  # the I/O on path 1: not the current path, nothing cleared
    assert s.io() == 2  # walks on from 0, skipping the disabled 1


def test_reinstatement_of_an_optimized_path_finds_every_nodes_path_again():
    """``nvme_mpath_set_live`` (a controller back LIVE re-reads its ANA log): ``__nvme_find_path`` for every node:
    round robin restarts at the first optimized path."""
    s = Pair("round-robin", ["AO", "AO", "AO"])
    assert [s.io(), s.io()] == [1, 2]
    s.down(2)
    s.up(2)
    assert s.io() == 1  # current_path was set to 0 by set_live: the next after it is 1


def test_an_ana_change_away_from_optimized_clears_nothing():
    """``nvme_update_ns_ana_state`` to inaccessible: no set_live, no clear; round-robin walks on from the now
    inaccessible current path; numa finds a path again because it is not optimized."""
    rr = Pair("round-robin", ["AO", "AO", "AO"])
    assert [rr.io(), rr.io()] == [1, 2]
    rr.ana(2, "unavailable")
    assert rr.io() == 0
    numa = Pair("numa", ["AO", "AO"])
    assert numa.io() == 0
    numa.ana(0, "unavailable")
    assert numa.io() == 1
    numa.ana(0, "AO")  # live and optimized again: set_live finds the first path again
    assert numa.io() == 0


def test_a_lone_path_in_an_inaccessible_ana_state_waits_one_round_trip_sooner_than_in_the_kernel():
    """Issue 51, kept as a named assumption (nvme.py): ``nvme_round_robin_path`` returns a lone path whatever its ANA
    state (``list_is_singular``: only a disabled controller gives NULL), so the kernel sends the command; the
    controller answers it with an ANA error, ``nvme_failover_req`` clears ``current_path`` and requeues the bio, and
    ``__nvme_find_path`` then finds no path: the I/O waits. pathsel has no ANA error status on its wire and waits at
    once, one round trip to the controller sooner; from there both wait for the same path."""
    s = Pair("round-robin", ["AO"])
    assert s.io() == 0
    s.complete()
    s.ana(0, "standby")
    assert s.ref.find(0) == 0, "the kernel sends it down its lone path"
    assert s.rig.pick()[1] is None, "pathsel waits"
    s.ref.start(0)
    s.ref.failover(0)  # answered with an ANA error: failed over, current_path cleared
    assert s.ref.find(0) is None, "the requeued I/O finds no path: it waits, as pathsel's does"
    s.ana(0, "AO")  # the ANA log read finds it optimized again: nvme_mpath_set_live
    assert s.io() == 0


def test_only_non_optimized_paths_rotate_backwards_and_a_failover_restarts_them():
    s = Pair("round-robin", ["ANO", "ANO", "ANO"])
    assert [s.io(), s.io(), s.io(), s.io()] == [0, 2, 1, 0]
    s.fail(3)  # the last I/O, on path 0 (current): cleared
    assert s.io() == 0  # __nvme_find_path: the first non-optimized path


def test_numa_keeps_a_current_path_per_node_and_a_failover_clears_only_where_it_is_current():
    s = Pair("numa", ["AO", "AO", "AO", "AO"], nodes=[0, 0, 1, 1])
    assert s.io(0) == 0 and s.io(1) == 2
    s.down(0)
    s.fail(0)
    assert s.ref.current_path == [None, 2]
    assert s.io(0) == 1 and s.io(1) == 2


def test_queue_depth_counts_the_controller_and_a_failover_ends_the_request():
    s = Pair("queue-depth", ["AO", "AO", "ANO"], ctrls=[0, 0, 1])
    assert [s.io(), s.io()] == [0, 0]  # paths 0 and 1 share controller 0: depth 1 each after the first
    s.fail(0)
    assert s.io() == 0


# -- random sequences ----------------------------------------------------------------------------------------
def run_sequence(rnd: random.Random, length: int = 60) -> int:
    """One random host and sequence; returns the selects compared (an AssertionError names the first difference)."""
    iopolicy = rnd.choice(list(NVME))
    n = rnd.randint(1, 4)
    ana = [rnd.choice(("AO", "AO", "ANO", "standby")) for _ in range(n)]
    nodes = [rnd.randint(0, 1) for _ in range(n)] if rnd.random() < 0.5 else None
    ctrls = [rnd.randint(0, n - 1) for _ in range(n)] if rnd.random() < 0.3 else None
    s = Pair(iopolicy, ana, nodes, ctrls)
    for _ in range(length):
        r = rnd.random()
        if r < 0.45:
            s.io(rnd.randrange(s.nodes))
        elif r < 0.65 and s.flight:
            i = rnd.randrange(len(s.flight))
            if s.rig.table.up[s.flight[i][2]]:
                s.complete(i)
            else:
                s.fail(i)
        elif r < 0.75 and s.flight:
            s.fail(rnd.randrange(len(s.flight)))  # a timeout or a path error on a live path
        elif r < 0.85:
            s.down(rnd.randrange(n))
        elif r < 0.93:
            s.up(rnd.randrange(n))
        else:
            s.ana(rnd.randrange(n), rnd.choice(STATES))
    return s.steps


EXAMPLES = int(os.environ.get("PATHSEL_EXAMPLES", "200"))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_sequences_choose_what_the_kernel_chooses(seed):
    run_sequence(random.Random(seed))


# -- dm queue-length, one group (multibus) --------------------------------------------------------------------
def ql_sequence(rnd: random.Random, length: int = 60) -> int:
    n = rnd.randint(1, 4)
    rig = Rig(["AO"] * n)
    rig.bind(DmQueueLength(path_grouping_policy="multibus"))
    ref = QueueLength(list(range(n)))
    flight: list[tuple[Any, Any]] = []
    steps = 0
    for _ in range(length):
        r = rnd.random()
        if r < 0.5:
            io, p = rig.pick()
            want = ref.select()
            steps += 1
            assert (p.index if p is not None else None) == want
            if p is not None:
                ref.start_io(p.index)
                flight.append((io, p))
        elif r < 0.8 and flight:
            io, p = flight.pop(rnd.randrange(len(flight)))
            rig.complete(io, p, 0.0)
            ref.end_io(p.index)
    return steps


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_dm_queue_length_chooses_what_the_kernel_chooses(seed):
    ql_sequence(random.Random(seed))


@pytest.mark.parametrize("seed", range(3))
def test_a_seeded_batch_compares_thousands_of_selects(seed):
    rnd = random.Random(seed)
    assert sum(run_sequence(rnd) for _ in range(50)) > 500


if __name__ == "__main__":  # the figure for the closing note
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rnd = random.Random(34)
    nvme = sum(run_sequence(rnd, 100) for _ in range(count))
    ql = sum(ql_sequence(rnd, 100) for _ in range(count))
    print(
        f"{count} random sequences each: {nvme} NVMe selects (numa, round-robin, queue-depth) and {ql} dm queue-length selects, all equal to the kernel model's"
    )
