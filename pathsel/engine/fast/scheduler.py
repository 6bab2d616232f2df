"""The fast engine's scheduler: SimPy's event order, in arrays.

SimPy orders simultaneous events by (time, priority, event id): URGENT
process starts before NORMAL events, then creation order. Here real timeouts
live in a heap keyed by (time, id); zero-delay events (a granted array slot,
a released slot, a mirror process starting or ending, a path-change wake-up)
are created "now" and so come after every heap event already due now, in
creation order: they live in two FIFOs, urgent and normal.

The FIFOs are rings whose sizes are powers of two (fields.py), indexed with a
mask: an integer division per push and pop cost more than the push. Both are
empty whenever the clock moves on, and the loop then puts both back at the
start of their rings: they stay in a few hot lines. The heap
is 8-ary and holds (time, key = event id << 8 | kind, arg): the times in one
array, each entry's key and arg side by side in another (moving an entry
moves one line's worth). A pop is a chain of dependent loads and compares,
level after level: eight children a level take a third fewer levels than
four, and eight times fill one 64-byte line exactly. In both arrays entry 1
starts a line (fields.py), so the children of any entry share one line of
times and two of keys, and a sift fetches the keys while it compares the
times. Ids are unique, so every valid heap pops in the same order, and a new
event's id is larger than every id already in the heap: a push stops at the
first parent due no later. Every time slot past the last entry holds +inf
(fields.py leaves seven spare slots): a pop reads eight children without bounds
tests. Indices are cast to uint64, so numba skips its negative-index
wraparound. Reference twin: SimPy's own scheduler (the reference engine has no module of its own for it).
"""

from __future__ import annotations

import numpy as np

from ...jit import hot, jit, prefetch
from .layout import (
    EV_APD_TIMER,
    EV_CPU,
    EV_HOLD_WAKE,
    EV_LEG,
    EV_M_ACK,
    EV_M_FWD,
    EV_M_SVC,
    EV_SVC_MAIN,
    I_EID,
    I_HEAPN,
    I_HTOP,
    I_NF_HEAD,
    I_NF_TAIL,
    I_UF_HEAD,
    I_UF_TAIL,
    K_GEN,
    K_WAITID,
    K_WOKEN,
    SLOT_MASK,
    TAG_SHIFT,
)

KIND_BITS = 8
ARITY = 8  # children per entry: the times of all eight fill one line
KIND_MASK = (1 << KIND_BITS) - 1
_u = np.uint64


@hot
def heap_push(S, t, kind, arg):
    si = S.si
    eid = si[I_EID]
    si[I_EID] = eid + 1
    if si[I_HTOP] != 0:  # the root is the event being processed: the new entry takes its place
        si[I_HTOP] = 0
        heap_replace_top(S, t, (eid << KIND_BITS) | kind, arg)
        return
    i = si[I_HEAPN]
    si[I_HEAPN] = i + 1
    sift_up(S.h_time, S.h_ka, i, t, (eid << KIND_BITS) | kind, arg)  # the newest key: a parent due at the same time stays


@hot
def sift_up(ht, ka, i, t, k, a):
    """Put (t, k, a) in the hole at ``i`` or above it, by (time, key): its key need not be the newest."""
    while i > 0:
        parent = (i - 1) >> 3
        pt = ht[_u(parent)]
        if pt < t or (pt == t and ka[_u(parent), 0] < k):
            break
        ht[_u(i)] = pt
        ka[_u(i), 0] = ka[_u(parent), 0]
        ka[_u(i), 1] = ka[_u(parent), 1]
        i = parent
    ht[_u(i)] = t
    ka[_u(i), 0] = k
    ka[_u(i), 1] = a


@jit
def heap_push_keyed(S, t, key, arg):
    """Push an entry whose id was taken earlier (a host's io_timeout timer): it may sort before newer entries."""
    heap_settle(S)
    i = S.si[I_HEAPN]
    S.si[I_HEAPN] = i + 1
    sift_up(S.h_time, S.h_ka, i, t, key, arg)


@jit
def heap_min_child(ht, ka, c, n):
    """The child in c .. c + 7 (below n) with the smallest (time, key): for ties on time."""
    m = c
    for j in range(c + 1, min(c + ARITY, n)):
        if ht[j] < ht[m] or (ht[j] == ht[m] and ka[j, 0] < ka[m, 0]):
            m = j
    return m


@hot
def heap_min8(ht, ka, c, n):
    """The smallest child in c .. c + 7 and its time, without branches (which child wins is a coin toss for the predictor)."""
    t0 = ht[_u(c)]
    t1 = ht[_u(c + 1)]
    t2 = ht[_u(c + 2)]
    t3 = ht[_u(c + 3)]
    t4 = ht[_u(c + 4)]
    t5 = ht[_u(c + 5)]
    t6 = ht[_u(c + 6)]
    t7 = ht[_u(c + 7)]
    m01 = c + (t1 < t0)
    tm01 = min(t0, t1)
    m23 = c + 2 + (t3 < t2)
    tm23 = min(t2, t3)
    m45 = c + 4 + (t5 < t4)
    tm45 = min(t4, t5)
    m67 = c + 6 + (t7 < t6)
    tm67 = min(t6, t7)
    ma = m23 if tm23 < tm01 else m01
    ta = min(tm01, tm23)
    mb = m67 if tm67 < tm45 else m45
    tb = min(tm45, tm67)
    m = mb if tb < ta else ma
    tm = min(ta, tb)
    ties = (t0 == tm) + (t1 == tm) + (t2 == tm) + (t3 == tm) + (t4 == tm) + (t5 == tm) + (t6 == tm) + (t7 == tm)
    if ties > 1:  # a tie on time (rare): compare keys
        m = heap_min_child(ht, ka, c, n)
    return m, tm


@hot
def heap_min8_time(ht, c):
    """The smallest time among the children c .. c + 7 (heap_min8's time alone: no index, no keys)."""
    return min(
        min(min(ht[_u(c)], ht[_u(c + 1)]), min(ht[_u(c + 2)], ht[_u(c + 3)])),
        min(min(ht[_u(c + 4)], ht[_u(c + 5)]), min(ht[_u(c + 6)], ht[_u(c + 7)])),
    )


@hot
def heap_replace_top(S, t, k, a):
    """Pop the root and push (t, k, a) in one pass: the new entry sinks from the root.

    Most events schedule exactly one timeout: a pop and then a push cost a sift to a
    leaf and a sift up; this is one partial sift down. ``k`` holds the newest id, so a
    child due at the same time goes first.
    """
    ht = S.h_time
    ka = S.h_ka
    n = S.si[I_HEAPN]
    i = 0
    c = 1
    while c < n:
        prefetch(ka, _u(2 * c))  # the children's keys (two lines): fetched while their times are compared
        prefetch(ka, _u(2 * c + 8))
        m, tm = heap_min8(ht, ka, c, n)
        if tm > t:
            break
        ht[_u(i)] = tm
        ka[_u(i), 0] = ka[_u(m), 0]
        ka[_u(i), 1] = ka[_u(m), 1]
        i = m
        c = ARITY * i + 1
    ht[_u(i)] = t
    ka[_u(i), 0] = k
    ka[_u(i), 1] = a


@hot
def heap_settle(S):
    """Remove the root if it is still the processed event (it scheduled no timeout)."""
    if S.si[I_HTOP] != 0:
        S.si[I_HTOP] = 0
        heap_pop(S)


@hot
def heap_due_now(S, now):
    """True when a heap entry other than the event being processed is due at this instant."""
    ht = S.h_time
    if S.si[I_HTOP] != 0:  # the next entry is among the root's children (+inf past the last)
        return S.si[I_HEAPN] > 1 and heap_min8_time(ht, 1) == now
    return S.si[I_HEAPN] > 0 and ht[0] == now


@hot
def next_in_line(S, V):
    """True when an event pushed on the normal FIFO now would be the next one processed."""
    si = S.si
    return si[I_UF_HEAD] == si[I_UF_TAIL] and si[I_NF_HEAD] == si[I_NF_TAIL] and not heap_due_now(S, V.clock[0])


@hot
def heap_pop(S):
    """Floyd's pop: the hole sinks along the smallest children to a leaf, then the last entry rises into it."""
    si = S.si
    ht = S.h_time
    ka = S.h_ka
    n = si[I_HEAPN] - 1
    si[I_HEAPN] = n
    if n > 0:
        t = ht[_u(n)]
        k = ka[_u(n), 0]
        a = ka[_u(n), 1]
        ht[_u(n)] = np.inf
        i = 0
        c = 1
        while c < n:
            prefetch(ka, _u(2 * c))
            prefetch(ka, _u(2 * c + 8))
            m, tm = heap_min8(ht, ka, c, n)
            ht[_u(i)] = tm
            ka[_u(i), 0] = ka[_u(m), 0]
            ka[_u(i), 1] = ka[_u(m), 1]
            i = m
            c = ARITY * i + 1
        sift_up(ht, ka, i, t, k, a)


@jit
def heap_drop_stale_timers(S):
    """Drop the timers that would do nothing when due, then rebuild the heap.

    A slot that is woken and waits again leaves its old APD timer in the heap, and an aborted
    attempt its leg's or service's: without this the heap grows with every wake-up while the
    APD timeout is long, and with every abort (start_wait and abort call it when the heap is
    half full). Each kept entry keeps its key (time, id << 8 | kind), so the pop order does
    not change.
    """
    heap_settle(S)
    n_slots = S.slot.shape[0]
    ht = S.h_time
    ka = S.h_ka
    n = S.si[I_HEAPN]
    m = 0
    for i in range(n):
        kind = ka[i, 0] & KIND_MASK
        if kind == EV_APD_TIMER or kind == EV_HOLD_WAKE:
            a = ka[i, 1]
            w = a % n_slots
            if S.slot[w, K_WAITID] != a // n_slots or S.slot[w, K_WOKEN] != 0:
                continue
        elif kind == EV_LEG or kind == EV_SVC_MAIN or kind == EV_M_FWD or kind == EV_M_SVC or kind == EV_M_ACK or kind == EV_CPU:
            if (ka[i, 1] >> TAG_SHIFT) != S.slot[ka[i, 1] & SLOT_MASK, K_GEN]:
                continue
        ht[m] = ht[i]
        ka[m, 0] = ka[i, 0]
        ka[m, 1] = ka[i, 1]
        m += 1
    for i in range(m, n):
        ht[i] = np.inf  # a pop reads up to seven entries past the last: they must be +inf
    S.si[I_HEAPN] = 0
    for i in range(m):  # re-insert in place: entry i is read before the heap (size i) can write at i
        j = S.si[I_HEAPN]
        S.si[I_HEAPN] = j + 1
        sift_up(ht, ka, j, ht[i], ka[i, 0], ka[i, 1])


@hot
def push_urgent(S, kind, arg):
    tail = S.si[I_UF_TAIL]
    i = tail & (S.uf_kind.shape[0] - 1)
    S.uf_kind[i] = kind
    S.uf_arg[i] = arg
    S.si[I_UF_TAIL] = tail + 1
    S.si[I_EID] += 1


@hot
def push_normal(S, kind, arg):
    tail = S.si[I_NF_TAIL]
    i = tail & (S.nf_kind.shape[0] - 1)
    S.nf_kind[i] = kind
    S.nf_arg[i] = arg
    S.si[I_NF_TAIL] = tail + 1
    S.si[I_EID] += 1


@hot
def timeout(S, V, delay, kind, arg):
    now = V.clock[0]
    t = now + delay
    if t == now:  # a zero (or absorbed) delay: due now, after everything already due
        push_normal(S, kind, arg)
    else:
        heap_push(S, t, kind, arg)
