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
from hypothesis import HealthCheck, given, settings
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
    # as run.py lays it out: entry 1 starts a line, +inf past the last entry (ARITY - 1 spare slots)
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
