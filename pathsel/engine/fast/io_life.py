"""The life of one I/O in the fast engine: reference/io_life.py's ``io_life``, ``exchange`` and ``mirror``.

Its steps below are in the order they happen (each docstring names its
reference twin): :func:`new_io` (issued), :func:`admit` in :mod:`.queues`
(the device's "host" queues, or a wait until :func:`queue_granted`),
:func:`begin_attempt` (the policy chooses a path; a "path" queue),
:func:`send_attempt`, :func:`on_leg` (each frame's arrival: the port, the
array's slots), :func:`start_service`, the mirror copy
(:func:`send_mirror` .. :func:`mirror_end`), :func:`on_service_done`,
:func:`status_leg`, :func:`complete`, :func:`next_io`; then what can
interrupt it: QUEUE FULL (:func:`qfull_back`), a lost frame (:func:`lost`),
the io_timeout (:func:`arm_abort` .. :func:`abort_mirror`); and an open-loop
job's :func:`arrival`. An event's handler runs a step and schedules the next
(a leg's arrival, a granted place, a service time's end). The policy is asked
for a path through its compiled entry point, by address: the engine knows no
policy. The frames an I/O sends are :mod:`.wire`'s; the queues it waits its
turn in are :mod:`.queues`' (a path change: :mod:`.waits`').

Events processed where they are scheduled: an event pushed on the normal
FIFO is processed right after the current one when nothing is due before it
(both FIFOs empty, and no heap entry at this instant: a heap entry due now
was scheduled earlier, so its id is smaller). The code that pushes it can
then run its handler at once instead (taking its id), the last thing the
current event does: same ids, same draws in the same order, one trip
through the loop and the dispatch less.

The host's io_timeout (reference/io_life.arm_abort): each attempt takes an event id
for its timer when it is sent, as SimPy's would, but only the oldest
unanswered attempt of each host has an entry in the heap (EV_DEADLINE, keyed
by that id): a host's attempts reach their deadlines in the order they were
sent, so they wait in a list by deadline, and a heap of one timer per
attempt (millions while io_timeout is 30 s) is never built. An abort
(EV_ABORT) frees what the attempt held at the arrays, interrupts its mirror
(EV_M_ABORT) and bumps the slot's abort count: the attempt's events still
pending carry the old count and are ignored.
"""

from __future__ import annotations

import numpy as np

from ...jit import call_i_4, call_v_5, call_v_6f, hot, jit
from ...policies.framework.kernel import FL_STOP
from ..recorder.bookkeeping import (
    rec_complete,
    rec_dev,
    rec_issue,
    rec_path,
    rec_qfull,
)
from ..recorder.record import C_REFUSED, C_RETRIED, C_TIMED_OUT
from .cpu import cpu_run
from .layout import (
    A_NONE,
    A_QUEUED,
    A_SERVING,
    EV_ABORT,
    EV_ARRIVAL,
    EV_CPU,
    EV_DEADLINE,
    EV_M_ABORT,
    EV_M_FWD,
    EV_M_SVC,
    EV_OPEN_WAKE,
    EV_QFULL_RETRY,
    EV_SVC_MAIN,
    I_EID,
    I_HEAPN,
    I_NTRACE,
    I_OVERLOAD,
    I_REPL_OK,
    I_SEQ,
    I_TRACE_ROOM,
    K_ADMITTED,
    K_ASUB,
    K_ATTEMPTS,
    K_DEADLINE,
    K_DLEID,
    K_DNEXT,
    K_DPREV,
    K_EPOCH,
    K_GEN,
    K_ISSUED,
    K_JOB,
    K_MSTATE,
    K_MSUB,
    K_MWAIT,
    K_PATH,
    K_PATH_WAIT,
    K_QUEUE,
    K_SEQ,
    K_STAGE,
    K_STARTED,
    M_END_SCHEDULED,
    M_NONE,
    M_PROCESSED,
    M_RUNNING,
    MS_FWD,
    MS_GRANTED,
    MS_NONE,
    MS_QUEUED,
    MS_SERVING,
    RULE_PATH,
    ST_APD,
    ST_CPU_DONE,
    ST_IDLE,
    ST_PATH_QUEUED,
    ST_QFULL,
    ST_QFULL_WAIT,
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
    TAG_SHIFT,
)
from .queues import (
    admit,
    admitted_at,
    grant_in_line,
    path_release,
    port_accept,
    port_done,
    release_admission,
    release_slot,
    request,
    take,
    throttle,
    withdraw,
)
from .scheduler import (
    KIND_BITS,
    heap_drop_stale_timers,
    heap_push_keyed,
    push_normal,
    push_urgent,
    timeout,
)
from .waits import arm_wake, start_wait
from .wire import leg, repl_trip, tag, value


# -- issued, admitted ----------------------------------------------------------------------------------
@hot
def new_io(P, S, V, R, s, issued):
    """reference/io_life.new_io, then io_life's first step: a job slot takes its next I/O, issued at ``issued`` (op and size
    from the job's own stream: common random numbers); its device's "host" queues take it, or it waits in one."""
    j = S.slot[s, K_JOB]
    if P.j_rp_off[j] >= 0:  # a trace replayed: the k-th I/O is its k-th record, no draw
        r = P.j_rp_off[j] + S.j_rp_taken[j]
        op = P.rp_op[r]
        size = P.rp_size[r]
    else:
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
    S.j_rp_taken[j] += 1
    S.si[I_SEQ] += 1
    S.slot[s, K_SEQ] = S.si[I_SEQ]
    V.s_op[s] = op
    V.s_size[s] = size
    S.slotf[s, K_ISSUED] = issued
    S.slot[s, K_ATTEMPTS] = 0
    S.slotf[s, K_PATH_WAIT] = 0.0
    S.slot[s, K_MSTATE] = M_NONE
    if admit(P, S, V, R, s, P.j_dev[j], 0):
        begin_attempt(P, S, V, R, s)


@hot
def queue_granted(P, S, V, R, s):
    """EV_QUEUE_GRANT (reference/queues.take: a waiter's ``yield`` returns): the queue the I/O waited at handed it its
    place. A "host" queue: on to the device's next one, then the first attempt; a "path" queue (NVMe-oF tags): the
    wait adds to the I/O's host queueing, and the attempt goes out on the path it was waiting for."""
    r = S.slot[s, K_QUEUE] - 1
    d = P.j_dev[S.slot[s, K_JOB]]
    if P.q_rule[r] == RULE_PATH:  # K_QUEUE stays: the attempt holds the place
        p = S.slot[s, K_PATH]
        S.slotf[s, K_PATH_WAIT] += V.clock[0] - S.slotf[s, K_STARTED]
        send_attempt(P, S, V, R, s, d, V.p_local[p], p)
        return
    S.slot[s, K_QUEUE] = 0
    if admit(P, S, V, R, s, d, admitted_at(P, d, r) + 1):
        begin_attempt(P, S, V, R, s)


# -- an attempt ------------------------------------------------------------------------------------------
@hot
def begin_attempt(P, S, V, R, s):
    """The top of reference/io_life.io_life's loop: ask the policy for a path; take the path's "path" queue (reference/queues.path_take:
    NVMe-oF, a tag of its controller) or wait there; then send the first frame."""
    d = P.j_dev[S.slot[s, K_JOB]]
    fn, st = P.pol_select, P.pol_state
    if P.pol_multi != 0:  # a policy per device: its own entry point and record
        fn, st = P.d_psel[d], P.d_pstate[d]
    k = call_i_4(fn, P.pol_view, st, d, s)
    if k < 0:  # no usable path: wait for a change, at most the host's APD timeout
        S.slot[s, K_STAGE] = ST_APD
        start_wait(P, S, V, s, P.hp_apd[P.d_host[d]])
        arm_wake(S, V, s, V.d_wake[d])
        return
    p = V.d_paths[d, k]
    if P.pathq_on != 0:
        r = P.p_pathq[p]
        if r >= 0:
            if not take(P, S, V, R, s, d, r, False):
                S.slot[s, K_STAGE] = ST_PATH_QUEUED
                S.slot[s, K_PATH] = p
                S.slotf[s, K_STARTED] = V.clock[0]  # when it asked (the attempt's start overwrites it)
                return
            S.slot[s, K_QUEUE] = r + 1
    send_attempt(P, S, V, R, s, d, k, p)


@hot
def send_attempt(P, S, V, R, s, d, k, p):
    """The rest of reference/io_life.io_life's loop top: the attempt goes out on path ``p`` (the device's ``k``-th)."""
    now = V.clock[0]
    S.slot[s, K_ATTEMPTS] += 1
    if S.slot[s, K_ATTEMPTS] > 1:
        R.rc[C_RETRIED] += 1
    S.slotf[s, K_STARTED] = now
    h = P.d_host[d]
    deadline = now + P.hp_iot[h]
    if deadline == now:  # a timeout too small to move the clock still comes after the send
        deadline = np.nextafter(now, np.inf)
    S.slotf[s, K_DEADLINE] = deadline
    S.slot[s, K_PATH] = p
    c = V.p_ctrl[p]
    size = V.s_size[s]
    V.out[p] += 1
    V.out_bytes[p] += size
    V.c_out[c] += 1
    V.c_out_bytes[c] += size
    rec_path(R, now, p, 1)
    fn, st = P.pol_start, P.pol_state
    if P.pol_multi != 0:
        fn, st = P.d_pstart[d], P.d_pstate[d]
    if fn != 0:
        call_v_5(fn, P.pol_view, st, d, k, s)
    if deadline < np.inf:
        arm_abort(S, h, s, deadline)
    first_frame(P, S, V, R, s, p, h)


@hot
def first_frame(P, S, V, R, s, p, h):
    """The attempt's first frame leaves on path ``p`` (host ``h``): a read's command, a SCSI write's command, an NVMe
    write's command with its data (send_attempt, or cpu_done once the core has submitted it)."""
    add = 0.0
    if P.first_on != 0:  # the first frame carries the cross-node hop (NUMA) and waits for its core's submission (CPU)
        add = first_add(P, S, V, s, p, h)
    # one call of leg, not one per branch: it is inlined, and this function is inlined at every attempt's start
    nbytes = 0
    if V.s_op[s] == 0:
        S.slot[s, K_STAGE] = ST_R_CMD
    elif P.protocol == 0:
        S.slot[s, K_STAGE] = ST_W_CMD
    else:
        S.slot[s, K_STAGE] = ST_W_DATA
        nbytes = V.s_size[s]
    leg(P, S, V, R, s, p, 0, nbytes, add)


@hot
def on_leg(P, S, V, R, s):
    """reference/io_life.exchange: a frame arrived (reference/wire.leg returned); the next step of the exchange."""
    p = S.slot[s, K_PATH]
    c = V.p_ctrl[p]
    if S.epoch[c] != S.slot[s, K_EPOCH] or S.phys_up[c] == 0:  # the frame was lost with its path
        lost(P, S, V, R, s)
        return
    stage = S.slot[s, K_STAGE]
    a = P.p_array[p]
    if stage == ST_R_CMD:
        if not port_accept(P, S, V, R, s, p):
            return
        S.slot[s, K_STAGE] = ST_R_SVC
        r = P.a_q[a]
        if grant_in_line(P, S, V, r):
            start_service(P, S, V, a, 0, s)
        else:
            request(P, S, V, r, s, 0)
    elif stage == ST_W_CMD:
        if not port_accept(P, S, V, R, s, p):
            return
        S.slot[s, K_STAGE] = ST_W_XFER
        leg(P, S, V, R, s, p, 1, 0)
    elif stage == ST_W_XFER:
        S.slot[s, K_STAGE] = ST_W_DATA
        leg(P, S, V, R, s, p, 0, V.s_size[s])
    elif stage == ST_W_DATA:
        if P.protocol == 1 and not port_accept(P, S, V, R, s, p):  # NVMe: the command came with the data
            return
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
        r = P.a_q[a]
        if grant_in_line(P, S, V, r):
            if mirror:
                send_mirror(P, S, V, R, s)
            start_service(P, S, V, a, 1, s)
        else:
            request(P, S, V, r, s, 0)
            if mirror:
                send_mirror(P, S, V, R, s)
    elif stage == ST_QFULL:
        qfull_back(P, S, V, R, s)
    else:  # ST_R_DATA or ST_W_STATUS: done
        if P.cpu_on != 0 and P.j_irq[S.slot[s, K_JOB]] >= 0 and P.p_ccomp[p] > 0.0:
            cpu_complete(P, S, V, s, p, P.d_host[P.j_dev[S.slot[s, K_JOB]]])
            return
        complete(P, S, V, R, s)


# -- the host's CPU (issue 33) ------------------------------------------------------------------------------
@jit
def first_add(P, S, V, s, p, h):
    """Host seconds before the attempt's first frame leaves on path ``p``: the NUMA hop (docs/model.md, NUMA), then
    its job's core submitting it (the host's CPU: reserved now, FIFO, as reference/io_life.exchange does). A call, not
    inlined: first_frame is inlined at every attempt's start, and runs with neither keep it as it was."""
    add = 0.0
    if P.numa != 0:
        add = P.numa_pen[h, V.s_node[s], V.p_node[p]]
    if P.cpu_on != 0:
        k = P.j_core[S.slot[s, K_JOB]]
        if k >= 0 and P.p_csub[p] > 0.0:  # work that costs nothing takes no core
            add += cpu_run(P, S, V, k, P.p_csub[p])
    return add


@jit
def cpu_complete(P, S, V, s, p, h):
    """reference/io_life.io_life after exchange: the status reached the host; its queue's interrupt core completes the I/O
    (its cost times the NUMA factor of that core's node and the adapter's)."""
    k = P.j_irq[S.slot[s, K_JOB]]
    cost = P.p_ccomp[p] * P.cpu_fac[h, P.core_node[k], V.p_node[p]]
    S.slot[s, K_STAGE] = ST_CPU_DONE
    timeout(S, V, cpu_run(P, S, V, k, cost), EV_CPU, tag(S, s))


@jit
def cpu_done(P, S, V, R, s):
    """EV_CPU: the interrupt core has done the I/O's completion work; the I/O completes."""
    complete(P, S, V, R, s)


# -- at the array ------------------------------------------------------------------------------------------
@hot
def start_service(P, S, V, a, op, s):
    """reference/queues.serve, once the slot is granted (EV_GRANT_MAIN's handler): the array serves the I/O."""
    S.slot[s, K_ASUB] = A_SERVING
    timeout(S, V, value(V, P.str_svc[a, op]) + P.a_perkib[a] * V.s_size[s] / 1024.0, EV_SVC_MAIN, tag(S, s))


@hot
def send_mirror(P, S, V, R, s):
    """reference/io_life.mirror's first step: the forward trip over the replication link."""
    S.slot[s, K_MSUB] = MS_FWD
    timeout(S, V, repl_trip(P, S, V, R, s, True), EV_M_FWD, tag(S, s))


@hot
def mirror_at_peer(P, S, V, s):
    """reference/io_life.mirror (EV_M_FWD's handler): the copy reached the peer array, which takes a slot or queues for one."""
    peer = P.p_mirror[S.slot[s, K_PATH]]
    r = P.a_q[peer]
    if grant_in_line(P, S, V, r):
        start_mirror_service(P, S, V, peer, s)
    else:
        request(P, S, V, r, s, 1)


@hot
def start_mirror_service(P, S, V, peer, s):
    """reference/io_life.mirror's serve (EV_GRANT_MIRROR's handler): the peer array stores the mirror copy."""
    S.slot[s, K_MSUB] = MS_SERVING
    timeout(S, V, value(V, P.str_svc[peer, 1]) + P.a_perkib[peer] * V.s_size[s] / 1024.0, EV_M_SVC, tag(S, s))


@hot
def mirror_end(P, S, V, R, s):
    """EV_M_END's handler: reference/io_life.mirror has returned."""
    S.slot[s, K_MSTATE] = M_PROCESSED
    if S.slot[s, K_MWAIT] == 1:
        S.slot[s, K_MWAIT] = 0
        status_leg(P, S, V, R, s)


@hot
def on_service_done(P, S, V, R, s):
    """reference/queues.serve returns (EV_SVC_MAIN): the slot goes back; a read's data and status go out, a write's status
    once its mirror copy is stored too."""
    p = S.slot[s, K_PATH]
    a = P.p_array[p]
    S.slot[s, K_ASUB] = A_NONE
    release_slot(P, S, V, P.a_q[a])
    if V.s_op[s] == 0:
        port_done(P, S, V, s)
        S.slot[s, K_STAGE] = ST_R_DATA
        leg(P, S, V, R, s, p, 1, V.s_size[s])
    elif S.slot[s, K_MSTATE] == M_RUNNING or S.slot[s, K_MSTATE] == M_END_SCHEDULED:
        S.slot[s, K_STAGE] = ST_W_MIRROR_WAIT
        S.slot[s, K_MWAIT] = 1
    else:
        status_leg(P, S, V, R, s)


@hot
def status_leg(P, S, V, R, s):
    """reference/io_life.exchange's last frame of a write: the port lets go, the status goes back."""
    port_done(P, S, V, s)
    S.slot[s, K_STAGE] = ST_W_STATUS
    leg(P, S, V, R, s, S.slot[s, K_PATH], 1, 0)


# -- done -------------------------------------------------------------------------------------------------
@hot
def end_attempt(P, S, V, R, s, p):
    """reference/io_life.io_life after exchange: the attempt is off the path, its timer, its port and its "path" place."""
    now = V.clock[0]
    c = V.p_ctrl[p]
    size = V.s_size[s]
    V.out[p] -= 1
    V.out_bytes[p] -= size
    V.c_out[c] -= 1
    V.c_out_bytes[c] -= size
    rec_path(R, now, p, -1)
    disarm(P, S, s)
    port_done(P, S, V, s)
    if P.pathq_on != 0:
        path_release(P, S, V, R, s)


@hot
def complete(P, S, V, R, s):
    """reference/io_life.io_life's completion: recorded, the policy told, throttling counts a good status, the host's queues
    let go, the job slot goes on."""
    now = V.clock[0]
    p = S.slot[s, K_PATH]
    end_attempt(P, S, V, R, s, p)
    on_path = now - S.slotf[s, K_STARTED]
    d = P.j_dev[S.slot[s, K_JOB]]
    fn, st = P.pol_complete, P.pol_state
    if P.pol_multi != 0:
        fn, st = P.d_pcomp[d], P.d_pstate[d]
    if fn != 0:
        call_v_6f(fn, P.pol_view, st, d, V.p_local[p], s, on_path)
    rec_complete(
        R,
        now,
        V.s_op[s],
        V.s_size[s],
        now - S.slotf[s, K_ISSUED],
        p,
        on_path,
        d,
        (S.slotf[s, K_ADMITTED] - S.slotf[s, K_ISSUED]) + S.slotf[s, K_PATH_WAIT],
        S.slot[s, K_JOB],
    )
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
    if P.hp_qfs[P.d_host[d]] > 0:  # ESXi's throttling is on: a good status counts
        throttle(P, S, V, R, d, False)
    release_admission(P, S, V, R, d, S.slot[s, K_JOB])
    next_io(P, S, V, R, s)


@hot
def next_io(P, S, V, R, s):
    """reference/io_life.job_slot's loop: closed, issue the next I/O now; open, take the oldest arrival, or wait for one."""
    now = V.clock[0]
    j = S.slot[s, K_JOB]
    if P.j_open[j] == 0:
        if P.j_rp_off[j] >= 0 and S.j_rp_taken[j] >= P.j_rp_len[j]:  # replay_no_stall: the trace is done
            S.slot[s, K_STAGE] = ST_IDLE
            S.slotf[s, K_ISSUED] = np.inf
            return
        rec_issue(R, now)
        new_io(P, S, V, R, s, now)
        return
    h = S.jb_head[j]
    if h < S.jb_tail[j]:
        t = S.jb_time[j, h & (S.jb_time.shape[1] - 1)]
        S.jb_head[j] = h + 1
        rec_dev(R, now, P.j_dev[j], 0, -1, j)
        new_io(P, S, V, R, s, t)
    else:
        t = S.ji_tail[j]
        S.ji_slot[j, t & (S.ji_slot.shape[1] - 1)] = s
        S.ji_tail[j] = t + 1
        S.slot[s, K_STAGE] = ST_IDLE
        S.slotf[s, K_ISSUED] = np.inf


@jit
def arrival(P, S, V, R, j):
    """reference/io_life.arrivals: an arrival is issued now, to an idle slot of the job or into its backlog; the next is due."""
    now = V.clock[0]
    h = S.ji_head[j]
    if P.j_refuse[j] and h >= S.ji_tail[j]:  # iodepth_full = "refuse": counted, never issued
        R.rc[C_REFUSED] += 1
        gap = value(V, P.str_arr[j])
        if gap < np.inf:
            timeout(S, V, gap, EV_ARRIVAL, j)
        return
    rec_issue(R, now)
    if h < S.ji_tail[j]:
        s = S.ji_slot[j, h & (S.ji_slot.shape[1] - 1)]
        S.ji_head[j] = h + 1
        push_normal(S, EV_OPEN_WAKE, s)
    else:
        t = S.jb_tail[j]
        if t - S.jb_head[j] >= S.jb_time.shape[1]:  # run.py raises host_queues.overload
            S.si[I_OVERLOAD] = j + 1
            V.flags[FL_STOP] = 1
            return
        S.jb_time[j, t & (S.jb_time.shape[1] - 1)] = now
        S.jb_tail[j] = t + 1
        rec_dev(R, now, P.j_dev[j], 0, 1, j)
    gap = value(V, P.str_arr[j])
    if gap < np.inf:  # else a trace's last record has arrived: no more
        timeout(S, V, gap, EV_ARRIVAL, j)


# -- what interrupts an attempt: QUEUE FULL, a lost frame, the io_timeout ----------------------------------
@jit
def qfull_back(P, S, V, R, s):
    """reference/io_life.io_life's ``except QueueFull``: the status reached the host: counted, maybe throttled; sent again
    after the retry delay."""
    p = S.slot[s, K_PATH]
    end_attempt(P, S, V, R, s, p)
    d = P.j_dev[S.slot[s, K_JOB]]
    rec_qfull(R, V.clock[0], p, d)
    throttle(P, S, V, R, d, True)
    delay = P.hp_qfr[P.d_host[d]]
    if delay > 0:
        S.slot[s, K_STAGE] = ST_QFULL_WAIT
        timeout(S, V, delay, EV_QFULL_RETRY, s)
    else:
        begin_attempt(P, S, V, R, s)


@jit
def lost(P, S, V, R, s):
    """reference/io_life.io_life after PathLost: retry now, or wait until the host notices the path is gone (then
    :func:`retry_lost`)."""
    p = S.slot[s, K_PATH]
    end_attempt(P, S, V, R, s, p)
    if V.up[p] == 1:
        S.slot[s, K_STAGE] = ST_WAIT_LOST
        start_wait(P, S, V, s, np.inf)
    else:
        fail_attempt(P, S, V, s)
        begin_attempt(P, S, V, R, s)


@jit
def retry_lost(P, S, V, R, s):
    """EV_WAKE of an I/O whose frame was lost in silence: the host saw a change; the failed attempt's end, the retry."""
    fail_attempt(P, S, V, s)
    begin_attempt(P, S, V, R, s)


@hot
def fail_attempt(P, S, V, s):
    """reference/io_life.io_life's ``policy.on_fail``: the attempt on K_PATH ended without a completion (lost, aborted), just
    before the retry (dm-mpath multipath_end_io: the selector's end_io for an errored request, then requeued)."""
    d = P.j_dev[S.slot[s, K_JOB]]
    fn, st = P.pol_fail, P.pol_state
    if P.pol_multi != 0:
        fn, st = P.d_pfail[d], P.d_pstate[d]
    if fn != 0:
        p = S.slot[s, K_PATH]
        call_v_6f(fn, P.pol_view, st, d, V.p_local[p], s, V.clock[0] - S.slotf[s, K_STARTED])


@hot
def arm_abort(S, h, s, deadline):
    """reference/io_life.arm_abort: the attempt's timer takes its id; the host's list keeps it by deadline."""
    eid = S.si[I_EID]
    S.si[I_EID] = eid + 1
    S.slot[s, K_DLEID] = eid
    prev = S.dl_tail[h]
    S.slot[s, K_DPREV] = prev
    S.slot[s, K_DNEXT] = -1
    if prev >= 0:
        S.slot[prev, K_DNEXT] = s
    else:
        S.dl_head[h] = s
    S.dl_tail[h] = s
    if S.dl_armed[h] == 0:
        S.dl_armed[h] = 1
        heap_push_keyed(S, deadline, (eid << KIND_BITS) | EV_DEADLINE, h)


@hot
def disarm(P, S, s):
    """The attempt ended: out of its host's list (its timer, if in the heap, will find it gone)."""
    if S.slot[s, K_DLEID] < 0:
        return
    S.slot[s, K_DLEID] = -1
    h = P.d_host[P.j_dev[S.slot[s, K_JOB]]]
    prev = S.slot[s, K_DPREV]
    nxt = S.slot[s, K_DNEXT]
    if prev >= 0:
        S.slot[prev, K_DNEXT] = nxt
    else:
        S.dl_head[h] = nxt
    if nxt >= 0:
        S.slot[nxt, K_DPREV] = prev
    else:
        S.dl_tail[h] = prev


@jit
def on_deadline(P, S, V, h, eid):
    """EV_DEADLINE: the host's timer ``eid`` is due; if its attempt is still unanswered, abort it. Then re-arm."""
    S.dl_armed[h] = 0
    s = S.dl_head[h]
    if s >= 0 and S.slot[s, K_DLEID] == eid:
        disarm(P, S, s)
        push_urgent(S, EV_ABORT, tag(S, s))  # SimPy: the timer's callback interrupts the I/O's process
        s = S.dl_head[h]
    if s >= 0:
        S.dl_armed[h] = 1
        heap_push_keyed(S, S.slotf[s, K_DEADLINE], (S.slot[s, K_DLEID] << KIND_BITS) | EV_DEADLINE, h)


@jit
def abort(P, S, V, R, s):
    """EV_ABORT (reference/io_life.io_life's ``except simpy.Interrupt``): free what the attempt held, interrupt its mirror, retry."""
    p = S.slot[s, K_PATH]
    sub = S.slot[s, K_ASUB]
    if sub != A_NONE:
        withdraw(P, S, V, P.a_q[P.p_array[p]], s, 0, sub != A_QUEUED)
        S.slot[s, K_ASUB] = A_NONE
    if S.slot[s, K_MSTATE] == M_RUNNING:
        S.slot[s, K_MSTATE] = M_NONE
        push_urgent(S, EV_M_ABORT, s | (P.p_mirror[p] << TAG_SHIFT))
    S.slot[s, K_MWAIT] = 0
    S.slot[s, K_GEN] += 1  # the attempt's pending events are stale now
    if S.si[I_HEAPN] >= S.h_time.shape[0] >> 1:  # their timers stay in the heap until due: drop them if it fills
        heap_drop_stale_timers(S)
    end_attempt(P, S, V, R, s, p)
    R.rc[C_TIMED_OUT] += 1
    fail_attempt(P, S, V, s)
    begin_attempt(P, S, V, R, s)


@jit
def abort_mirror(P, S, V, s, peer):
    """EV_M_ABORT (reference/io_life.mirror's ``except simpy.Interrupt``): the peer drops the copy; the process ends."""
    sub = S.slot[s, K_MSUB]
    if sub == MS_QUEUED or sub == MS_GRANTED or sub == MS_SERVING:
        withdraw(P, S, V, P.a_q[peer], s, 1, sub != MS_QUEUED)
    S.slot[s, K_MSUB] = MS_NONE
    S.si[I_EID] += 1  # the process's own event: nobody waits for it any more
