"""Where an I/O waits for the host to see a path change, in the fast engine: reference/waits.wait_for_change.

An I/O with no usable path (or whose frame was lost in silence) joins the
waiters; a path change wakes them all (``wake_waiters``: each one's EV_WAKE
on the normal FIFO), and an APD timer ends one's wait. The queues an I/O
waits its turn in (array slots, target ports, the host's queues) are
:mod:`.queues`'; the steps it takes are :mod:`.io_life`'s.
"""

from __future__ import annotations

import numpy as np

from ...jit import jit
from .layout import (
    EV_APD_TIMER,
    EV_HOLD_WAKE,
    EV_WAKE,
    I_HEAPN,
    I_WT_HEAD,
    I_WT_TAIL,
    K_WAITID,
    K_WAKEVAL,
    K_WOKEN,
)
from .scheduler import (
    heap_drop_stale_timers,
    push_normal,
    timeout,
)


# -- waiting for the host to see a path change -----------------------------------------------------
@jit
def start_wait(P, S, V, s, limit):
    """reference/waits.wait_for_change: join the waiters; a timer ends the wait after ``limit`` (inf: none)."""
    S.slot[s, K_WAITID] += 1
    S.slot[s, K_WOKEN] = 0
    mask = S.wt_slot.shape[0] - 1
    if S.si[I_WT_TAIL] - S.si[I_WT_HEAD] > mask:  # full: drop entries already woken (they are skipped anyway)
        n = 0
        for i in range(S.si[I_WT_HEAD], S.si[I_WT_TAIL]):
            w = S.wt_slot[i & mask]
            if S.slot[w, K_WAITID] == S.wt_id[i & mask] and S.slot[w, K_WOKEN] == 0:
                S.tmp_wt[n] = i & mask
                n += 1
        head = S.si[I_WT_HEAD]
        for k in range(n):  # compact in order, in place (targets never pass their sources)
            j = S.tmp_wt[k]
            S.wt_slot[(head + k) & mask] = S.wt_slot[j]
            S.wt_id[(head + k) & mask] = S.wt_id[j]
        S.si[I_WT_TAIL] = head + n
    tail = S.si[I_WT_TAIL]
    S.wt_slot[tail & mask] = s
    S.wt_id[tail & mask] = S.slot[s, K_WAITID]
    S.si[I_WT_TAIL] = tail + 1
    if limit < np.inf:
        if S.si[I_HEAPN] >= S.h_time.shape[0] >> 1:  # fields.py sizes the heap: live timers fit in half
            heap_drop_stale_timers(S)
        n_slots = S.slot.shape[0]
        timeout(S, V, limit, EV_APD_TIMER, s + n_slots * S.slot[s, K_WAITID])


@jit
def arm_wake(S, V, s, at):
    """reference/waits.wait_for_change's ``wake``: the policy's wake time ends this wait as a path change would."""
    if at < np.inf:
        n_slots = S.slot.shape[0]
        timeout(S, V, max(at - V.clock[0], 0.0), EV_HOLD_WAKE, s + n_slots * S.slot[s, K_WAITID])


@jit
def wake_waiters(S):
    mask = S.wt_slot.shape[0] - 1
    for i in range(S.si[I_WT_HEAD], S.si[I_WT_TAIL]):
        w = S.wt_slot[i & mask]
        if S.slot[w, K_WAITID] == S.wt_id[i & mask] and S.slot[w, K_WOKEN] == 0:
            S.slot[w, K_WOKEN] = 1
            S.slot[w, K_WAKEVAL] = 1
            push_normal(S, EV_WAKE, w)
    S.si[I_WT_HEAD] = S.si[I_WT_TAIL]
