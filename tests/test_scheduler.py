"""The fast engine's event heap pops in SimPy's order, whatever the pushes (Hypothesis).

The heap (``pathsel/engine/fast/scheduler.py``) is 8-ary, laid out so that an
entry's children share a cache line, with +inf past the last entry. Its one
promise is SimPy's order: by time, then by event id (creation order). Here
random sequences of pushes and processed events (the root taken, then either
replaced by the timeout it schedules or removed) run on the heap and on
Python's ``heapq`` holding (time, id), and must give the same events in the
same order. Times come from a handful of values, so ties on time are common.
"""

from __future__ import annotations

import heapq
import os
from collections import namedtuple
from contextlib import contextmanager

import hypothesis.strategies as st
import numpy as np
from hypothesis import HealthCheck, example, given, settings
from numba import njit
from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher

from pathsel.engine.fast import scheduler
from pathsel.engine.fast.layout import I_EID, I_HEAPN, I_HTOP, N_SI
from pathsel.engine.fast.scheduler import ARITY, KIND_BITS, KIND_MASK, heap_push, heap_settle
from pathsel.jit import on_lines

SETTINGS = settings(max_examples=int(os.environ.get("PATHSEL_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow])

Heap = namedtuple("Heap", "si h_time h_ka")
PUSH, PROCESS = 0, 1


@njit
def _drive(S, code, t, kind, out):
    """Run the operations; out[i] = (time, id, kind, arg) of the i-th event processed. Returns how many."""
    n = 0
    for i in range(code.shape[0]):
        if code[i] == PUSH:
            heap_push(S, t[i], kind[i], i)
        elif S.si[I_HEAPN] > 0:  # the loop takes the root, marks it, and the event's first timeout replaces it
            out[n, 0] = S.h_time[0]
            out[n, 1] = S.h_ka[0, 0] >> KIND_BITS
            out[n, 2] = S.h_ka[0, 0] & KIND_MASK
            out[n, 3] = S.h_ka[0, 1]
            n += 1
            S.si[I_HTOP] = 1
            if t[i] >= 0.0:
                heap_push(S, t[i], kind[i], i)
            heap_settle(S)
    return n


@contextmanager
def _kept_out_of_the_cache():
    """The scheduler's functions compile for this module's Heap without touching the engine's cache.

    They are cached (pathsel's cache directory): an index entry naming a type of
    ``tests.test_scheduler`` could not be read back by a process that cannot
    import it, and every later run there would fail loading the heap.
    """
    funcs = [f for f in vars(scheduler).values() if isinstance(f, Dispatcher)]
    saved = [f._cache for f in funcs]
    for f in funcs:
        f._cache = NullCache()
    try:
        yield
    finally:
        for f, c in zip(funcs, saved):
            f._cache = c


def _heap(cap: int) -> Heap:
    # as fields.py lays it out: entry 1 starts a line, +inf past the last entry (ARITY - 1 spare slots)
    return Heap(
        np.zeros(N_SI, dtype=np.int64),
        on_lines(cap + ARITY - 1, 0, np.float64, fill=np.inf, lead=ARITY - 1),
        on_lines(cap + ARITY - 1, 2, np.int64, lead=ARITY - 1),
    )


# ties on time (a few values) and distinct times; pushes outnumber processed events, so heaps grow to a few levels
TIMES = st.one_of(st.sampled_from([0.5, 1.0, 2.0, 3.0, 7.25, 1e-9, 1e6]), st.floats(0.0, 100.0))
OPS = st.lists(
    st.one_of(
        st.tuples(st.just(PUSH), TIMES, st.integers(0, 20)),
        st.tuples(st.just(PUSH), TIMES, st.integers(0, 20)),
        st.tuples(st.just(PROCESS), st.one_of(st.just(-1.0), TIMES), st.integers(0, 20)),
    ),
    max_size=600,
)


@SETTINGS
@given(OPS)
def test_the_heap_pops_by_time_then_creation_order(ops):
    code = np.array([o[0] for o in ops], dtype=np.int64)
    t = np.array([o[1] for o in ops], dtype=np.float64)
    kind = np.array([o[2] for o in ops], dtype=np.int64)
    S = _heap(len(ops) + 1)
    out = np.zeros((len(ops) + 1, 4))
    with _kept_out_of_the_cache():
        n = _drive(S, code, t, kind, out)

    ref: list[tuple[float, int, int, int]] = []
    eid = 0
    want = []
    for i, (c, ti, k) in enumerate(ops):
        if c == PUSH:
            heapq.heappush(ref, (ti, eid, k, i))
            eid += 1
        elif ref:
            want.append(heapq.heappop(ref))
            if ti >= 0.0:
                heapq.heappush(ref, (ti, eid, k, i))
                eid += 1
    got = [(float(a), int(b), int(c), int(d)) for a, b, c, d in out[:n]]
    assert got == want
    assert S.si[I_HEAPN] == len(ref) and S.si[I_EID] == eid
    # what is left is what heapq holds, and every slot past the last entry that a pop reads as a child is +inf
    # again (the root's slot is never a child: an emptied heap may keep its last time there)
    assert sorted(ref) == sorted(
        (float(S.h_time[i]), int(S.h_ka[i, 0] >> KIND_BITS), int(S.h_ka[i, 0] & KIND_MASK), int(S.h_ka[i, 1])) for i in range(len(ref))
    )
    assert np.all(np.isinf(S.h_time[max(len(ref), 1) : len(ref) + ARITY]))


@njit
def _min8(ht, ka, n):
    m, tm = scheduler.heap_min8(ht, ka, 1, n)
    return m, tm, scheduler.heap_min8_time(ht, 1)


@SETTINGS
@given(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=1, max_size=8), st.randoms(use_true_random=False))
def test_a_level_picks_the_child_due_first_then_the_oldest(times, rnd):
    # the children of the root (entries 1 .. 8), +inf past the last; few distinct times, so ties at every match
    # of the tournament (pairs, halves, the final) and ties that do not involve the winner all occur
    n = 1 + len(times)
    ht = np.full(1 + ARITY, np.inf)
    ht[1:n] = times
    ka = np.zeros((1 + ARITY, 2), dtype=np.int64)
    keys = rnd.sample(range(1000), ARITY)
    ka[1:, 0] = keys
    with _kept_out_of_the_cache():
        m, tm, t_only = _min8(ht, ka, n)
    want = min(range(1, n), key=lambda j: (ht[j], ka[j, 0]))
    assert (m, tm, t_only) == (want, ht[want], ht[want])


@njit
def _due_now(S, code, t, kind, out, top, now):
    _drive(S, code, t, kind, out)
    S.si[I_HTOP] = top
    return scheduler.heap_due_now(S, now)


@SETTINGS
@given(OPS, st.booleans(), st.booleans())
# the root due at 1.0 and one child with it, at the first or the last of the root's eight children
@example([(PUSH, 1.0, 0), (PUSH, 1.0, 0)] + [(PUSH, 2.0, 0)] * 7, True, False)
@example([(PUSH, 1.0, 0)] + [(PUSH, 2.0, 0)] * 7 + [(PUSH, 1.0, 0)], True, False)
def test_an_entry_due_now_is_seen_whether_or_not_the_root_is_the_current_event(ops, top, earlier):
    # the clock is the root's time (with top: the root is the event being processed), or before it; nothing in
    # the heap is ever due before the clock
    code = np.array([o[0] for o in ops] + [PUSH], dtype=np.int64)
    t = np.array([o[1] for o in ops] + [2.0], dtype=np.float64)
    kind = np.array([o[2] for o in ops] + [0], dtype=np.int64)
    S = _heap(len(code) + 1)
    out = np.zeros((len(code) + 1, 4))
    with _kept_out_of_the_cache():
        _drive(S, code, t, kind, out)  # only to learn the root's time
        root = float(S.h_time[0])
        now = root - 0.25 if earlier and not top else root
        S = _heap(len(code) + 1)
        due = _due_now(S, code, t, kind, out, int(top), now)
    n = int(S.si[I_HEAPN])
    others = S.h_time[1:n] if top else S.h_time[:n]  # with the root being processed, only the other entries count
    assert due == bool(np.any(others == now))
