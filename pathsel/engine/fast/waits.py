"""Where an I/O waits its turn in the fast engine: the arrays' slots, the target ports, the host's queues, a path change.

Each is a FIFO kept as reference.py keeps it (``simpy.Resource`` requests for
an array's slots and a mirror's; ``accept`` and ``port_done`` at a target
port; ``admit``/``release``, ``adapter_release``, ``nvme_tag``/``tag_release``
and ``throttle`` in the host; ``wait_for_change``): a place is taken, given
back, and handed to the first waiting, whose event is pushed on the normal
FIFO. The steps an I/O takes once it has its place are in :mod:`.io_life`.
"""

from __future__ import annotations

import numpy as np

from ...jit import hot, jit, prefetch
from ..recorder import (
    rec_dev,
    rec_dqlen,
)
from .layout import (
    A_GRANTED,
    A_QUEUED,
    A_SERVING,
    EV_ADAPT,
    EV_ADMIT,
    EV_APD_TIMER,
    EV_GRANT_MAIN,
    EV_GRANT_MIRROR,
    EV_M_FWD,
    EV_M_SVC,
    EV_RELEASE,
    EV_SVC_MAIN,
    EV_TAG,
    EV_WAKE,
    I_EID,
    I_HEAPN,
    I_NF_HEAD,
    I_NF_TAIL,
    I_UF_HEAD,
    I_UF_TAIL,
    I_WT_HEAD,
    I_WT_TAIL,
    K_ASUB,
    K_GEN,
    K_JOB,
    K_MSUB,
    K_PATH,
    K_STAGE,
    K_STARTED,
    K_TAGC,
    K_TPORT,
    K_WAITID,
    K_WAKEVAL,
    K_WOKEN,
    MS_FWD,
    MS_GRANTED,
    MS_QUEUED,
    MS_SERVING,
    SLOT_COLS,
    ST_QFULL,
    ST_TAG,
)
from .scheduler import (
    heap_drop_stale_timers,
    heap_due_now,
    push_normal,
    timeout,
)
from .wire import leg, repl_trip, tag, value


# -- array slots (simpy.Resource: a request joins a FIFO and only the head is examined on each trigger) ----
@hot
def trigger_put(S, a, conc):
    head = S.aq_head[a]
    if head < S.aq_tail[a] and S.users[a] < conc:
        i = head & (S.aq_slot.shape[1] - 1)
        slot = S.aq_slot[a, i]
        mirror = S.aq_mirror[a, i]
        S.aq_head[a] = head + 1
        S.users[a] += 1
        if head + 1 < S.aq_tail[a]:  # the next in line is granted at a coming release: fetch its row's abort line
            nxt = S.aq_slot[a, (head + 1) & (S.aq_slot.shape[1] - 1)]
            prefetch(S.slot, np.uint64(nxt * SLOT_COLS + K_GEN))
        if mirror:
            S.slot[slot, K_MSUB] = MS_GRANTED
            push_normal(S, EV_GRANT_MIRROR, tag(S, slot))
        else:
            S.slot[slot, K_ASUB] = A_GRANTED
            push_normal(S, EV_GRANT_MAIN, tag(S, slot))


@hot
def request(P, S, a, s, mirror):
    tail = S.aq_tail[a]
    i = tail & (S.aq_slot.shape[1] - 1)
    S.aq_slot[a, i] = s
    S.aq_mirror[a, i] = mirror
    S.aq_tail[a] = tail + 1
    if mirror:
        S.slot[s, K_MSUB] = MS_QUEUED
    else:
        S.slot[s, K_ASUB] = A_QUEUED
    trigger_put(S, a, P.a_conc[a])


@jit
def withdraw(P, S, a, s, mirror, granted):
    """An aborted request leaves array ``a`` (simpy's Request.__exit__: cancel, then release).

    Still queued, it leaves the FIFO; granted, it gives its slot back. Either way SimPy
    creates a Release event, which grants the next in line when it is processed.
    """
    if granted:
        release(P, S, a)
        return
    mask = S.aq_slot.shape[1] - 1
    tail = S.aq_tail[a]
    i = S.aq_head[a]
    while i < tail and not (S.aq_slot[a, i & mask] == s and S.aq_mirror[a, i & mask] == mirror):
        i += 1
    for j in range(i, tail - 1):  # close the gap, keeping the order
        S.aq_slot[a, j & mask] = S.aq_slot[a, (j + 1) & mask]
        S.aq_mirror[a, j & mask] = S.aq_mirror[a, (j + 1) & mask]
    if i < tail:
        S.aq_tail[a] = tail - 1
    S.users[a] += 1  # release() takes one back: a queued request held none
    release(P, S, a)


@hot
def release(P, S, a):
    S.users[a] -= 1
    if P.a_conc[a] >= S.slot.shape[0]:
        # No request can ever wait here (a job slot holds at most one grant per array,
        # so users < slots <= concurrency): the release event would grant no one. Its
        # id is still taken, so every later event keeps the id SimPy gives it.
        S.si[I_EID] += 1
    else:
        push_normal(S, EV_RELEASE, a)


@hot
def next_in_line(S, V):
    """True when an event pushed on the normal FIFO now would be the next one processed."""
    si = S.si
    return si[I_UF_HEAD] == si[I_UF_TAIL] and si[I_NF_HEAD] == si[I_NF_TAIL] and not heap_due_now(S, V.clock[0])


@hot
def grant_in_line(P, S, V, a):
    """A request for ``a`` granted at once, its grant event next in line: take the slot and the event's id."""
    if S.aq_head[a] == S.aq_tail[a] and S.users[a] < P.a_conc[a] and next_in_line(S, V):
        S.users[a] += 1
        S.si[I_EID] += 1
        return True
    return False


@hot
def start_service(P, S, V, a, op, s):
    """EV_GRANT_MAIN's handler: the array serves the I/O."""
    S.slot[s, K_ASUB] = A_SERVING
    timeout(S, V, value(V, P.str_svc[a, op]) + P.a_perkib[a] * V.s_size[s] / 1024.0, EV_SVC_MAIN, tag(S, s))


@hot
def start_mirror_service(P, S, V, peer, s):
    """The peer array stores the mirror copy."""
    S.slot[s, K_MSUB] = MS_SERVING
    timeout(S, V, value(V, P.str_svc[peer, 1]) + P.a_perkib[peer] * V.s_size[s] / 1024.0, EV_M_SVC, tag(S, s))


@hot
def send_mirror(P, S, V, R, s):
    """The mirror process's first step: the forward trip over the replication link."""
    S.slot[s, K_MSUB] = MS_FWD
    timeout(S, V, repl_trip(P, S, V, R, s, True), EV_M_FWD, tag(S, s))


# -- the arrays' target ports ----------------------------------------------------------------------
@hot
def port_accept(P, S, V, R, s, p):
    """reference.accept: the port takes the command (True), or answers QUEUE FULL: a status frame back (False)."""
    t = P.p_port[p]
    if t < 0:
        return True
    if S.t_busy[t] >= P.t_qd[t]:
        S.slot[s, K_STAGE] = ST_QFULL
        leg(P, S, V, R, s, p, 1, 0)
        return False
    S.t_busy[t] += 1
    S.slot[s, K_TPORT] = t + 1
    return True


@hot
def port_done(S, s):
    """reference.port_done: the array sent the command's last frame, or the attempt ended."""
    t = S.slot[s, K_TPORT]
    if t != 0:
        S.t_busy[t - 1] -= 1
        S.slot[s, K_TPORT] = 0


# -- the host's queues: the device's (DQLEN, ESXi's throttling), the adapter's, NVMe-oF tags -------
@hot
def tag_get(P, S, V, R, s, p, d):
    """reference.nvme_tag: the path's controller gives the I/O a tag (True), or it waits for one there, in order."""
    c = V.p_ctrl[p]
    if c < 0 or P.c_tags[c] <= 0:
        return True
    if S.tg_act[c] < P.c_tags[c]:
        S.tg_act[c] += 1
        S.slot[s, K_TAGC] = c + 1
        return True
    t = S.tg_tail[c]
    S.tg_slot[c, t & (S.tg_slot.shape[1] - 1)] = s
    S.tg_tail[c] = t + 1
    S.slot[s, K_STAGE] = ST_TAG
    S.slot[s, K_PATH] = p
    S.slotf[s, K_STARTED] = V.clock[0]  # when it asked (the attempt's start overwrites it)
    rec_dev(R, V.clock[0], d, -1, 1)
    return False


@hot
def tag_release(S, V, R, P, s):
    """reference.tag_release: the attempt ended; its tag goes to the first waiting (EV_TAG), if any."""
    c1 = S.slot[s, K_TAGC]
    if c1 == 0:
        return
    S.slot[s, K_TAGC] = 0
    c = c1 - 1
    head = S.tg_head[c]
    if head < S.tg_tail[c]:
        w = S.tg_slot[c, head & (S.tg_slot.shape[1] - 1)]
        S.tg_head[c] = head + 1
        rec_dev(R, V.clock[0], P.j_dev[S.slot[w, K_JOB]], 1, -1)
        push_normal(S, EV_TAG, w)
    else:
        S.tg_act[c] -= 1


@hot
def adapter_release(P, S, V, R, d):
    """reference.adapter_release: the I/O's place in its host's adapter goes to the first waiting (EV_ADAPT), if any."""
    h = P.d_host[d]
    if P.hp_aqd[h] <= 0:
        return
    head = S.ad_head[h]
    if head < S.ad_tail[h]:
        w = S.ad_slot[h, head & (S.ad_slot.shape[1] - 1)]
        S.ad_head[h] = head + 1
        rec_dev(R, V.clock[0], P.j_dev[S.slot[w, K_JOB]], 1, -1)
        push_normal(S, EV_ADAPT, w)
    else:
        S.ad_act[h] -= 1


@hot
def dev_release(S, V, R, d):
    """reference.release: an I/O is done on device ``d``; its slot goes to the first waiting (EV_ADMIT), if any."""
    now = V.clock[0]
    h = S.dq_head[d]
    if h < S.dq_tail[d] and S.dq_act[d] <= S.dq_len[d]:
        w = S.dq_slot[d, h & (S.dq_slot.shape[1] - 1)]
        S.dq_head[d] = h + 1
        rec_dev(R, now, d, 0, -1)
        push_normal(S, EV_ADMIT, w)
    else:
        S.dq_act[d] -= 1
        rec_dev(R, now, d, -1, 0)
    while S.dq_head[d] < S.dq_tail[d] and S.dq_act[d] < S.dq_len[d]:  # a DQLEN grown back by throttling has room
        h = S.dq_head[d]
        w = S.dq_slot[d, h & (S.dq_slot.shape[1] - 1)]
        S.dq_head[d] = h + 1
        S.dq_act[d] += 1
        rec_dev(R, now, d, 1, -1)
        push_normal(S, EV_ADMIT, w)


@jit
def throttle(P, S, V, R, d, qfull):
    """reference.throttle: ESXi's adaptive queue depth (QFullSampleSize QUEUE FULLs halve DQLEN, QFullThreshold good
    statuses grow it by one)."""
    h = P.d_host[d]
    if P.hp_qfs[h] <= 0:
        return
    if qfull:
        S.dq_qf[d] += 1
        if S.dq_qf[d] >= P.hp_qfs[h]:
            S.dq_qf[d] = 0
            S.dq_good[d] = 0
            if S.dq_len[d] > 1:
                S.dq_len[d] = S.dq_len[d] // 2
                rec_dqlen(R, V.clock[0], d, S.dq_len[d])
    elif S.dq_len[d] < P.d_qd[d]:
        S.dq_good[d] += 1
        if S.dq_good[d] >= P.hp_qft[h]:
            S.dq_good[d] = 0
            S.dq_len[d] += 1
            rec_dqlen(R, V.clock[0], d, S.dq_len[d])


# -- waiting for the host to see a path change -----------------------------------------------------
@jit
def start_wait(P, S, V, s, limit):
    """reference.wait_for_change: join the waiters; a timer ends the wait after ``limit`` (inf: none)."""
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
        if S.si[I_HEAPN] >= S.h_time.shape[0] >> 1:  # run.py sizes the heap: live timers fit in half
            heap_drop_stale_timers(S)
        n_slots = S.slot.shape[0]
        timeout(S, V, limit, EV_APD_TIMER, s + n_slots * S.slot[s, K_WAITID])


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
