"""pathsel's dm-multipath selectors choose what the kernel's code chooses, at every step (issue 34).

:class:`tests.kernel_ref.DmMultipath` is dm-mpath.c's ``choose_pgpath`` with its priority groups, each with the
selector of ``dm-ps-round-robin.c``, ``dm-ps-queue-length.c``, ``dm-ps-service-time.c`` or
``dm-ps-historical-service-time.c``, written from the kernel source function by function, plus what multipathd does
to it (fail a path the checker finds down, reinstate it when up, reinstate a path dm failed on an I/O error at the
next ``polling_interval`` tick, failback). Both it and pathsel's compiled dm policies (driven by hand through
:mod:`tests.policy_rig`) get the same operations: I/Os selected and started, completions with a latency, failed
attempts (``multipath_end_io`` with an error; pathsel's ``fail`` hook), paths down and up, ALUA AO <-> ANO changes,
and the clock moving on. Every select must name the same path.

``python -m tests.test_kernel_dm_sequences [SEQUENCES]`` prints how many selects were compared per selector.
"""

from __future__ import annotations

import os
import random
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathsel.policies import DmHistoricalServiceTime, DmQueueLength, DmRoundRobin, DmServiceTime

from .kernel_ref import DmMultipath
from .policy_rig import Rig

DM = {
    "round-robin": DmRoundRobin,
    "queue-length": DmQueueLength,
    "service-time": DmServiceTime,
    "historical-service-time": DmHistoricalServiceTime,
}
SIZES = (512, 4096, 65536, 1 << 20)


class DmPair:
    """The kernel model and pathsel's policy on the same paths, fed the same operations."""

    def __init__(
        self,
        kind: str,
        alua: list[str],
        grouping: str = "group_by_prio",
        failback: str = "manual",
        poll: float = 1.0,
        threshold_multiplier: int = 0,
        relative_throughput: list[int] | None = None,
    ) -> None:
        self.rig = Rig(list(alua))
        params: dict[str, Any] = {"path_grouping_policy": grouping, "failback": failback, "polling_interval": poll}
        if kind == "historical-service-time":
            params["threshold_multiplier"] = threshold_multiplier
        if relative_throughput is not None:  # service-time's table argument (the Python class takes it)
            params["relative_throughput"] = relative_throughput
        self.pol = self.rig.bind(DM[kind](**params))
        self.ref = DmMultipath(kind, list(alua), grouping, failback, poll, threshold_multiplier=threshold_multiplier)
        for k, t in enumerate(relative_throughput or ()):
            self.ref.info[k].relative_throughput = t
        self.flight: list[tuple[Any, Any, int]] = []
        self.steps = 0

    def io(self, size: int = 4096) -> int | None:
        io, p = self.rig.pick(size)
        want = self.ref.select(size)
        got = p.index if p is not None else None
        self.steps += 1
        assert got == want, (
            f"select at {self.rig.now:.6f}: pathsel {got}, kernel {want}; groups "
            f"{ {g: (s.valid, s.failed) for g, s in self.ref.groups.items()} } current {self.ref.current_pg}"
        )
        if p is not None:
            self.flight.append((io, p, size))
        return got

    def complete(self, i: int = 0) -> None:
        io, p, size = self.flight.pop(i)
        lat = self.rig.now - io.issued_at
        self.rig.complete(io, p, lat)
        self.ref.complete(p.index, size, lat)

    def fail(self, i: int = 0) -> None:
        """The attempt ends with a path error (an abort at io_timeout, or lost on a path seen down)."""
        io, p, size = self.flight.pop(i)
        lat = self.rig.now - io.issued_at
        self.rig.table.end(p.index, size)
        self.pol.on_fail(p, io, lat)
        self.ref.error(p.index, size, lat)

    def advance(self, dt: float) -> None:
        self.rig.now += dt
        self.ref.advance(self.rig.now)

    def down(self, k: int) -> None:
        self.rig.down(k)
        self.ref.down(k)

    def up(self, k: int) -> None:
        self.rig.up(k)
        self.ref.up(k)

    def ana(self, k: int, state: str) -> None:
        self.rig.alua(k, state)
        self.ref.set_alua(k, state)


# -- cases, walked line by line ----------------------------------------------------------------------------------
def test_round_robin_puts_a_reinstated_path_at_the_head():
    """``rr_reinstate_path``: ``list_move(&pi->list, &s->valid_paths)``: the returning path is next."""
    s = DmPair("round-robin", ["AO", "AO", "AO"])
    assert [s.io(), s.io()] == [0, 1]
    s.down(2)
    assert s.io() == 0
    s.up(2)
    assert s.io() == 2


def test_a_failed_io_fails_its_path_until_the_next_checker_tick():
    """``multipath_end_io``: ``fail_path`` on a path error; multipathd reinstates it at its next check (1 s here):
    queue-length moves it to the tail (``ql_reinstate_path``: ``list_move_tail``)."""
    s = DmPair("queue-length", ["AO", "AO"], poll=1.0)
    assert [s.io(), s.io()] == [0, 1]
    s.advance(0.25)
    s.fail(0)  # the I/O on path 0
    assert [s.io(), s.io()] == [1, 1]
    s.advance(0.75)  # the tick at 1 s
    assert s.io() == 0


def test_group_by_prio_stays_on_the_non_optimized_group_under_manual_failback():
    """``choose_pgpath``: "Don't change PG until it has no remaining paths"; with ``failback immediate``
    multipathd's ``switch_pg_num`` takes the better group back at once."""
    for failback, back in (("manual", 2), ("immediate", 0)):
        s = DmPair("service-time", ["AO", "AO", "ANO"], failback=failback)
        s.down(0)
        s.down(1)
        assert s.io() == 2
        s.up(0)
        assert s.io() == back


def test_historical_service_time_learns_from_a_failed_io():
    """``hst_end_io`` runs for an errored request too: a 2 s timeout on path 0 makes path 1 the better one."""
    s = DmPair("historical-service-time", ["AO", "AO"], poll=1.0)
    assert [s.io(), s.io()] == [0, 1]
    s.advance(0.001)
    s.complete(1)  # path 1: 1 ms
    s.advance(1.999)
    s.fail(0)  # path 0: 2 s, then failed until the tick at 3 s
    s.advance(1.0)
    assert s.io() == 1


def test_paths_failed_on_errors_and_reinstated_at_one_tick_go_to_the_head_in_path_order():
    """Two attempts fail with no select between, so no sync sees the paths out: ``fail_path`` takes each out of the
    valid list at once, and the tick's ``rr_reinstate_path`` puts path 1, then path 2, at the head."""
    s = DmPair("round-robin", ["AO", "AO", "AO"], grouping="multibus", poll=0.5)
    assert [s.io(), s.io(), s.io()] == [0, 1, 2]
    s.advance(0.1)
    s.fail(1)  # the attempt on path 1
    s.fail(1)  # the one on path 2
    s.advance(0.5)  # the tick at 0.5 s reinstates both
    assert [s.io(), s.io(), s.io()] == [2, 1, 0]


def test_a_tick_reinstates_a_path_into_the_group_it_had_then_not_after_a_later_alua_change():
    """Both paths failed on errors come back at the 1 s tick, path 0 into the ANO group; at 1.1 s it turns AO and
    joins the AO group (failed there, reinstated at the head), so it is next."""
    s = DmPair("round-robin", ["ANO", "AO"], poll=1.0)
    assert s.io() == 1
    s.fail(0)
    assert s.io() == 0  # the AO group has no valid path: the ANO group
    s.fail(0)
    s.advance(1.1)
    s.ana(0, "AO")
    assert s.io() == 0


def test_a_path_that_changes_group_with_io_in_flight_keeps_its_count_and_fails_in_its_new_group():
    """Issue 51, kept as a named assumption (dm.py): a path that changes ALUA group while I/Os are in flight on it. A
    harness that moves the path from one group's selector to the other's (``*_add_path``: a new ``path_info``) counts
    zero in flight for it there, and an I/O sent before the move that then fails calls ``fail_path`` on the old
    ``pgpath``, which no group holds: nothing is failed. pathsel keeps the path's count and fails the path in its new
    group until the checker's next tick. In the kernel the move is multipathd reloading the table
    (``check_path`` -> ``reload_and_sync_map`` on a priority change), and the reload suspends the map first:
    ``__dm_suspend`` -> ``dm_wait_for_completion`` waits for every request in flight, so no I/O of the old table is
    in flight when the new selectors start counting, and none can fail after. pathsel does not model the suspend (I/O
    keeps flowing through the change): the I/Os it counts are on the path, and one that fails fails the path as any
    other would."""
    s = DmPair("queue-length", ["AO", "AO", "ANO"], poll=1.0)
    assert [s.io(), s.io(), s.io(), s.io()] == [0, 1, 0, 1]  # two in flight on each optimized path
    s.ana(0, "ANO")
    s.ana(0, "AO")  # back in the optimized group, at the tail of its list
    assert s.rig.table.outstanding[0] == 2
    assert s.io() == 1, "its two I/Os still count: a tie with path 1, which is ahead in the list (a fresh count: 0)"
    s.advance(0.25)
    s.fail(0)  # an I/O sent on path 0 before the moves fails: path 0 leaves its (new) group until the tick at 1 s
    assert [s.io(), s.io()] == [1, 1], "path 0 is failed (the kernel's fail_path would find no group holding it)"
    s.advance(0.75)
    assert s.io() == 0


GIB = 1 << 30


def test_service_time_keeps_its_bytes_in_flight_in_32_bits():
    """Issue 51: ``dm-ps-service-time.c`` keeps a path's bytes in flight in an ``atomic_t``: past 2 GiB it wraps
    negative, and ``st_compare_load`` reads it into a ``size_t`` sign-extended, as nearly 2**64. With unequal
    relative throughputs (case 3) the ``ST_MAX_INFLIGHT_SIZE`` guard then fires, both sizes are shifted down, and the
    difference of the products, truncated to ``int``, names the loaded path the better one: the kernel keeps choosing
    it. pathsel models the width (before issue 51 it counted in 64 bits and turned to the other path)."""
    s = DmPair("service-time", ["AO", "AO"], grouping="multibus", relative_throughput=[1, 2])
    assert [s.io(GIB) for _ in range(8)] == [1] * 8
    assert (s.ref.info[0].in_flight_size, s.ref.info[1].in_flight_size) == (0, 8 * GIB)
    t = DmPair("service-time", ["AO", "AO"], grouping="multibus", relative_throughput=[1, 3])
    assert [t.io(GIB) for _ in range(8)] == [1, 1, 1, 0, 0, 0, 1, 0]
    # equal relative throughputs (every table multipath-tools writes): case 1 returns sz1 - sz2 as an int, whose low
    # 32 bits the width does not change, so these choices are the same with or without it
    e = DmPair("service-time", ["AO", "AO"], grouping="multibus")
    assert [e.io(GIB) for _ in range(6)] == [0, 1, 0, 1, 0, 1]


def st_wide_sequence(rnd: random.Random, length: int = 40) -> int:
    """service-time with random relative throughputs (0..100) and I/Os up to 1 GiB, so the 32-bit count wraps."""
    n = rnd.randint(2, 4)
    rt = [rnd.choice((0, 1, 1, 2, 3, 50, 100)) for _ in range(n)]
    s = DmPair("service-time", ["AO"] * n, grouping="multibus", relative_throughput=rt)
    for _ in range(length):
        if rnd.random() < 0.7 or not s.flight:
            s.io(rnd.choice((4096, 1 << 20, 1 << 28, GIB)))
        else:
            s.complete(rnd.randrange(len(s.flight)))
    return s.steps


# -- random sequences --------------------------------------------------------------------------------------------------
def dm_sequence(rnd: random.Random, length: int = 60, kind: str | None = None, errors: bool = True) -> tuple[str, int]:
    """One random host and sequence; returns the selector and the selects compared. ``errors=False``: no attempt
    ends with a path error (no dm fail_path, so no checker tick reinstates a path)."""
    kind = kind or rnd.choice(list(DM))
    n = rnd.randint(1, 4)
    alua = [rnd.choice(("AO", "AO", "ANO", "standby")) for _ in range(n)]
    grouping = rnd.choice(("group_by_prio", "group_by_prio", "multibus", "failover"))
    failback = rnd.choice(("manual", "immediate"))
    tm = rnd.choice((0, 0, 2)) if kind == "historical-service-time" else 0
    s = DmPair(kind, alua, grouping, failback, poll=rnd.choice((0.5, 1.0, 5.0)), threshold_multiplier=tm)
    for _ in range(length):
        r = rnd.random()
        if r < 0.4:
            s.io(rnd.choice(SIZES))
        elif r < 0.6:
            s.advance(rnd.choice((0.0001, 0.002, 0.02, 0.3, 1.1)))
        elif r < 0.75 and s.flight:
            i = rnd.randrange(len(s.flight))
            if s.rig.table.up[s.flight[i][1].index] or not errors:
                s.complete(i)
            else:
                s.fail(i)
        elif r < 0.82 and s.flight and errors:
            s.fail(rnd.randrange(len(s.flight)))
        elif r < 0.89:
            s.down(rnd.randrange(n))
        elif r < 0.95:
            s.up(rnd.randrange(n))
        else:
            s.ana(rnd.randrange(n), rnd.choice(("AO", "ANO")))
    return kind, s.steps


EXAMPLES = int(os.environ.get("PATHSEL_EXAMPLES", "200"))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_dm_sequences_choose_what_the_kernel_chooses(seed):
    dm_sequence(random.Random(seed))  # with I/O errors: dm's fail_path and the checker's reinstatements


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_service_time_past_2_gib_in_flight_chooses_what_the_kernel_chooses(seed):
    st_wide_sequence(random.Random(seed))


@pytest.mark.parametrize("kind", list(DM))
def test_a_seeded_batch_per_selector(kind):
    rnd = random.Random(hash(kind) & 0xFFFF)
    assert sum(dm_sequence(rnd, 60, kind)[1] for _ in range(10)) > 100


def counts(sequences: int, errors: bool, seed: int = 34) -> tuple[dict[str, int], dict[str, int]]:
    """Selects compared per selector, and sequences that differed (each stops at its first difference)."""
    out = dict.fromkeys(DM, 0)
    bad = dict.fromkeys(DM, 0)
    for i in range(sequences):
        rnd = random.Random(seed * 1_000_003 + i)
        kind = random.Random(seed * 1_000_003 + i).choice(list(DM))
        try:
            out[kind] += dm_sequence(rnd, 100, errors=errors)[1]
        except AssertionError:
            bad[kind] += 1
    return out, bad


if __name__ == "__main__":  # the figure for the closing note
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    for errors in (False, True):
        got, bad = counts(count, errors)
        print(
            f"{count} random dm sequences {'with' if errors else 'without'} I/O errors: "
            + ", ".join(f"{v} {k} selects" for k, v in got.items())
            + f"; sequences that differed: {sum(bad.values())} {bad}"
        )
