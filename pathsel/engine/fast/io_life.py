"""The life of one I/O in the fast engine: reference.py's ``io_life``, ``exchange``, ``leg``, ``serve`` and ``mirror``.

Each function is one step; an event's handler runs a step and schedules the
next (a leg's arrival, a granted array slot, a service time's end). The
policy is asked for a path through its compiled entry point, by address: the
engine knows no policy.

Events processed where they are scheduled: an event pushed on the normal
FIFO is processed right after the current one when nothing is due before it
(both FIFOs empty, and no heap entry at this instant: a heap entry due now
was scheduled earlier, so its id is smaller). The code that pushes it can
then run its handler at once instead (taking its id), the last thing the
current event does: same ids, same draws in the same order, one trip
through the loop and the dispatch less.
"""

from __future__ import annotations

import numpy as np

from ...jit import call_i_4, call_v_5, call_v_6f, hot, jit
from ...policies.kernel import FL_STOP, draw
from ..recorder import (
    C_FRAMES_LOST,
    C_RETRIED,
    C_TIMED_OUT,
    rec_complete,
    rec_issue,
    rec_path,
)
from .layout import (
    EV_APD_TIMER,
    EV_GRANT_MAIN,
    EV_GRANT_MIRROR,
    EV_LEG,
    EV_LEG_TIMEOUT,
    EV_M_FWD,
    EV_RELEASE,
    EV_SVC_MAIN,
    EV_WAKE,
    F_REPL_EXTRA,
    F_REPL_LOSS,
    I_EID,
    I_HEAPN,
    I_NF_HEAD,
    I_NF_TAIL,
    I_NTRACE,
    I_REPL_OK,
    I_SEQ,
    I_TRACE_ROOM,
    I_UF_HEAD,
    I_UF_TAIL,
    I_WT_HEAD,
    I_WT_TAIL,
    K_ATTEMPTS,
    K_DEADLINE,
    K_EPOCH,
    K_ISSUED,
    K_JOB,
    K_MSTATE,
    K_MWAIT,
    K_PATH,
    K_SEQ,
    K_STAGE,
    K_STARTED,
    K_WAITID,
    K_WAKEVAL,
    K_WOKEN,
    M_END_SCHEDULED,
    M_NONE,
    M_PROCESSED,
    M_RUNNING,
    MAX_RESENDS,
    ST_APD,
    ST_R_CMD,
    ST_R_DATA,
    ST_R_SVC,
    ST_W_CMD,
    ST_W_DATA,
    ST_W_MIRROR_WAIT,
    ST_W_STATUS,
    ST_W_SVC,
    ST_W_XFER,
    ST_WAIT_LOST,
)
from .scheduler import heap_drop_stale_timers, heap_due_now, push_normal, timeout


@hot
def value(V, stream):
    """The next value of a random stream (a row of pre-drawn values)."""
    return draw(V.rnd, V.rq, V.flags, stream)


# -- the wire ------------------------------------------------------------------------------
@hot
def serialise(S, R, w, direction, t, nbytes, bw):
    """Queue a frame for wire ``w`` (FIFO per direction) from ``t``; returns when it is across."""
    start = max(t, S.wire_free[w, direction])
    busy = nbytes / bw
    done = start + busy
    S.wire_free[w, direction] = done
    R.wire_busy[w, direction] += busy
    R.wire_wait[w, direction] += start - t
    R.wire_frames[w, direction] += 1
    return done


@jit
def lose(V, R, stream, ppm, recovery, delay, limit):
    """reference.lose: every lost copy of a frame is resent after ``recovery``."""
    p = ppm * 1e-6
    n = 0
    while n < MAX_RESENDS:
        if not value(V, stream) < p:
            break
        delay += recovery
        n += 1
        if delay > limit:
            break
    R.rc[C_FRAMES_LOST] += n
    return delay


@hot
def leg(P, S, V, R, s, p, direction, nbytes):
    """One frame over path ``p``: queue for each wire, serialise, propagate, maybe be lost and resent."""
    now = V.clock[0]
    c = V.p_ctrl[p]
    delay = value(V, P.p_str[p]) + S.extra[c]
    if nbytes != 0:
        t = now
        bw = P.c_bw[c]
        if bw > 0.0:
            t = serialise(S, R, c, direction, t, nbytes, bw)
        nc = P.c_bw.shape[0]
        for i in range(P.c_nlinks[c]):
            li = P.c_links[c, i]
            t = serialise(S, R, nc + li, direction, t, nbytes, P.l_bw[li])
        delay += t - now
    deadline = S.slotf[s, K_DEADLINE]
    if S.loss[c] > 0:
        delay = lose(V, R, P.str_loss[c], S.loss[c], P.c_recov[c], delay, deadline - now)
    S.slot[s, K_EPOCH] = S.epoch[c]
    if now + delay > deadline:  # the host gives up on this attempt at its io_timeout
        timeout(S, V, max(deadline - now, 0.0), EV_LEG_TIMEOUT, s)
    else:
        timeout(S, V, delay, EV_LEG, s)


@hot
def repl_trip(P, S, V, R, s, first):
    """One way over the replication link (the forward trip carries the data)."""
    now = V.clock[0]
    delay = value(V, P.str_repl) + S.sf[F_REPL_EXTRA]
    if first:
        a = P.p_array[S.slot[s, K_PATH]]
        d = 0 if a == P.r_a0 else 1
        bw = P.r_bw
        if bw > 0.0:
            delay += serialise(S, R, S.wire_free.shape[0] - 1, d, now, V.s_size[s], bw) - now
    if S.sf[F_REPL_LOSS] > 0:
        delay = lose(V, R, P.str_loss[P.str_loss.shape[0] - 1], S.sf[F_REPL_LOSS], P.r_recov, delay, np.inf)
    return delay


# -- array slots (simpy.Resource: a request joins a FIFO and only the head is examined on each trigger) --
@hot
def trigger_put(S, a, conc):
    head = S.aq_head[a]
    if head < S.aq_tail[a] and S.users[a] < conc:
        i = head & (S.aq_slot.shape[1] - 1)
        slot = S.aq_slot[a, i]
        mirror = S.aq_mirror[a, i]
        S.aq_head[a] = head + 1
        S.users[a] += 1
        push_normal(S, EV_GRANT_MIRROR if mirror else EV_GRANT_MAIN, slot)


@hot
def request(P, S, a, s, mirror):
    tail = S.aq_tail[a]
    i = tail & (S.aq_slot.shape[1] - 1)
    S.aq_slot[a, i] = s
    S.aq_mirror[a, i] = mirror
    S.aq_tail[a] = tail + 1
    trigger_put(S, a, P.a_conc[a])


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
    timeout(S, V, value(V, P.str_svc[a, op]), EV_SVC_MAIN, s)


@hot
def mirror_end(P, S, V, R, s):
    """EV_M_END's handler: the mirror process has returned."""
    S.slot[s, K_MSTATE] = M_PROCESSED
    if S.slot[s, K_MWAIT] == 1:
        S.slot[s, K_MWAIT] = 0
        status_leg(P, S, V, R, s)


# -- waiting for the host to see a path change --------------------------------------------------
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
        if S.si[I_HEAPN] >= S.h_time.shape[0] >> 1:  # build.py sizes the heap: live timers fit in half
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


# -- the I/O -----------------------------------------------------------------------------------------
@hot
def begin_attempt(P, S, V, R, s):
    """The top of io_life's loop: ask the policy, then send the first frame."""
    now = V.clock[0]
    d = P.j_dev[S.slot[s, K_JOB]]
    k = call_i_4(P.pol_select, P.pol_view, P.pol_state, d, s)
    if k < 0:  # no usable path: wait for a change, at most the host's APD timeout
        S.slot[s, K_STAGE] = ST_APD
        start_wait(P, S, V, s, P.hp_apd[P.d_host[d]])
        return
    p = V.d_paths[d, k]
    S.slot[s, K_ATTEMPTS] += 1
    if S.slot[s, K_ATTEMPTS] > 1:
        R.rc[C_RETRIED] += 1
    S.slotf[s, K_STARTED] = now
    S.slotf[s, K_DEADLINE] = now + P.hp_iot[P.d_host[d]]
    S.slot[s, K_PATH] = p
    c = V.p_ctrl[p]
    size = V.s_size[s]
    V.out[p] += 1
    V.out_bytes[p] += size
    V.c_out[c] += 1
    V.c_out_bytes[c] += size
    rec_path(R, now, p, 1)
    if P.pol_start != 0:
        call_v_5(P.pol_start, P.pol_view, P.pol_state, d, k, s)
    if V.s_op[s] == 0:
        S.slot[s, K_STAGE] = ST_R_CMD
        leg(P, S, V, R, s, p, 0, 0)
    elif P.protocol == 0:
        S.slot[s, K_STAGE] = ST_W_CMD
        leg(P, S, V, R, s, p, 0, 0)
    else:
        S.slot[s, K_STAGE] = ST_W_DATA
        leg(P, S, V, R, s, p, 0, size)


@hot
def new_io(P, S, V, R, s):
    """A job slot issues its next I/O: op and size from the job's own stream (common random numbers)."""
    now = V.clock[0]
    j = S.slot[s, K_JOB]
    st = P.str_job[j]
    u = value(V, st)
    op = 0 if u < P.j_readfrac[j] else 1
    size = P.j_sizes[j, 0]
    if P.j_nsizes[j] > 1:
        u2 = value(V, st)
        acc = 0.0
        for k in range(P.j_nsizes[j]):
            size = P.j_sizes[j, k]
            acc += P.j_cumw[j, k]
            if u2 < acc:
                break
    S.si[I_SEQ] += 1
    S.slot[s, K_SEQ] = S.si[I_SEQ]
    V.s_op[s] = op
    V.s_size[s] = size
    S.slotf[s, K_ISSUED] = now
    S.slot[s, K_ATTEMPTS] = 0
    S.slot[s, K_MSTATE] = M_NONE
    rec_issue(R, now)
    begin_attempt(P, S, V, R, s)


@hot
def end_attempt(P, S, V, R, s, p):
    now = V.clock[0]
    c = V.p_ctrl[p]
    size = V.s_size[s]
    V.out[p] -= 1
    V.out_bytes[p] -= size
    V.c_out[c] -= 1
    V.c_out_bytes[c] -= size
    rec_path(R, now, p, -1)


@hot
def complete(P, S, V, R, s):
    now = V.clock[0]
    p = S.slot[s, K_PATH]
    end_attempt(P, S, V, R, s, p)
    on_path = now - S.slotf[s, K_STARTED]
    if P.pol_complete != 0:
        d = P.j_dev[S.slot[s, K_JOB]]
        call_v_6f(P.pol_complete, P.pol_view, P.pol_state, d, V.p_local[p], s, on_path)
    rec_complete(R, now, V.s_op[s], V.s_size[s], now - S.slotf[s, K_ISSUED], p, on_path)
    if P.trace_on != 0:
        t = S.si[I_NTRACE]
        S.si[I_NTRACE] = t + 1
        if t + 1 > S.si[I_TRACE_ROOM]:
            V.flags[FL_STOP] = 1
        S.tr_seq[t] = S.slot[s, K_SEQ]
        S.tr_job[t] = S.slot[s, K_JOB]
        S.tr_op[t] = V.s_op[s]
        S.tr_size[t] = V.s_size[s]
        S.tr_issued[t] = S.slotf[s, K_ISSUED]
        S.tr_done[t] = now
        S.tr_path[t] = p
        S.tr_attempts[t] = S.slot[s, K_ATTEMPTS]
    new_io(P, S, V, R, s)


@jit
def lost(P, S, V, R, s, timed_out):
    """io_life after PathLost: retry now, or wait until the host notices the path is gone."""
    p = S.slot[s, K_PATH]
    end_attempt(P, S, V, R, s, p)
    if timed_out:
        R.rc[C_TIMED_OUT] += 1
        begin_attempt(P, S, V, R, s)
    elif V.up[p] == 1:
        S.slot[s, K_STAGE] = ST_WAIT_LOST
        start_wait(P, S, V, s, np.inf)
    else:
        begin_attempt(P, S, V, R, s)


@hot
def status_leg(P, S, V, R, s):
    S.slot[s, K_STAGE] = ST_W_STATUS
    leg(P, S, V, R, s, S.slot[s, K_PATH], 1, 0)


@hot
def on_leg(P, S, V, R, s):
    """A frame arrived: the next step of the exchange."""
    p = S.slot[s, K_PATH]
    c = V.p_ctrl[p]
    if S.epoch[c] != S.slot[s, K_EPOCH] or S.phys_up[c] == 0:  # the frame was lost with its path
        lost(P, S, V, R, s, False)
        return
    stage = S.slot[s, K_STAGE]
    a = P.p_array[p]
    if stage == ST_R_CMD:
        S.slot[s, K_STAGE] = ST_R_SVC
        if grant_in_line(P, S, V, a):
            start_service(P, S, V, a, 0, s)
        else:
            request(P, S, a, s, 0)
    elif stage == ST_W_CMD:
        S.slot[s, K_STAGE] = ST_W_XFER
        leg(P, S, V, R, s, p, 1, 0)
    elif stage == ST_W_XFER:
        S.slot[s, K_STAGE] = ST_W_DATA
        leg(P, S, V, R, s, p, 0, V.s_size[s])
    elif stage == ST_W_DATA:
        peer = P.p_mirror[p]
        mirror = peer >= 0 and S.si[I_REPL_OK] == 1 and S.alive[peer] == 1
        S.slot[s, K_STAGE] = ST_W_SVC
        if mirror:
            # The mirror process starts: SimPy schedules its Initialize event (urgent),
            # so it runs right after this event, before anything else; it is run below,
            # after the request, with the id it was given here.
            S.slot[s, K_MSTATE] = M_RUNNING
            S.slot[s, K_MWAIT] = 0
            S.si[I_EID] += 1
        else:
            S.slot[s, K_MSTATE] = M_NONE
        if grant_in_line(P, S, V, a):
            if mirror:
                timeout(S, V, repl_trip(P, S, V, R, s, True), EV_M_FWD, s)
            start_service(P, S, V, a, 1, s)
        else:
            request(P, S, a, s, 0)
            if mirror:
                timeout(S, V, repl_trip(P, S, V, R, s, True), EV_M_FWD, s)
    else:  # ST_R_DATA or ST_W_STATUS: done
        complete(P, S, V, R, s)


@hot
def on_service_done(P, S, V, R, s):
    p = S.slot[s, K_PATH]
    a = P.p_array[p]
    release(P, S, a)
    if V.s_op[s] == 0:
        S.slot[s, K_STAGE] = ST_R_DATA
        leg(P, S, V, R, s, p, 1, V.s_size[s])
    elif S.slot[s, K_MSTATE] == M_RUNNING or S.slot[s, K_MSTATE] == M_END_SCHEDULED:
        S.slot[s, K_STAGE] = ST_W_MIRROR_WAIT
        S.slot[s, K_MWAIT] = 1
    else:
        status_leg(P, S, V, R, s)
