"""The fast engine's loop: take the next event in SimPy's order and run its handler.

One function, with the switch over event kinds written out in it: numba
compiles each jitted function as its own library and re-optimises the code
it inlines at every level, so the loop and its dispatch in one body compile
in half the time of a loop calling a dispatcher (the handlers are inlined
either way).

All state is in records (state.py and fields.py lay them out), so the loop can stop and
resume anywhere between events: to refill the rows of pre-drawn random
values, to report progress, or to empty the event log and trace buffers.
Reference twin: SimPy's own loop, which reference/run.py's ``Simulation.run`` starts.
"""

from __future__ import annotations

import numpy as np

from ...jit import entry, hot, prefetch
from ...policies.framework.kernel import FL_EV_ROOM, FL_NEV, FL_REFILL, FL_STOP, view_at
from ..recorder.bookkeeping import rec_fail
from ..recorder.record import recorder_at
from .faults import apply_fault, fault_loop, notice
from .io_life import (
    abort,
    abort_mirror,
    arrival,
    begin_attempt,
    cpu_done,
    mirror_at_peer,
    mirror_end,
    new_io,
    next_io,
    on_deadline,
    on_leg,
    on_service_done,
    queue_granted,
    retry_lost,
    start_mirror_service,
    start_service,
)
from .layout import (
    BUFFERS_FULL,
    DONE,
    EV_ABORT,
    EV_APD_TIMER,
    EV_ARRIVAL,
    EV_ARRIVALS_INIT,
    EV_CPU,
    EV_DEADLINE,
    EV_FAULT,
    EV_FAULT_INIT,
    EV_GRANT_MAIN,
    EV_GRANT_MIRROR,
    EV_HOLD_WAKE,
    EV_INIT,
    EV_LEG,
    EV_M_ABORT,
    EV_M_ACK,
    EV_M_END,
    EV_M_FWD,
    EV_M_SVC,
    EV_NOTICE,
    EV_OPEN_WAKE,
    EV_QFULL_RETRY,
    EV_QUEUE_GRANT,
    EV_RELEASE,
    EV_SVC_MAIN,
    EV_WAKE,
    I_EID,
    I_FAULT_NEXT,
    I_HEAPN,
    I_HTOP,
    I_NF_HEAD,
    I_NF_TAIL,
    I_NTRACE,
    I_TRACE_ROOM,
    I_UF_HEAD,
    I_UF_TAIL,
    K_GEN,
    K_ISSUED,
    K_JOB,
    K_MSTATE,
    K_MSUB,
    K_PATH,
    K_STAGE,
    K_WAITID,
    K_WAKEVAL,
    K_WOKEN,
    M_END_SCHEDULED,
    MS_ACK,
    MS_NONE,
    PAUSED,
    REFILL,
    SLOT_COLS,
    SLOT_MASK,
    ST_WAIT_LOST,
    TAG_SHIFT,
    params_at,
    state_at,
)
from .queues import PREFETCH_SLOTS, release_admission, release_slot, trigger_put
from .scheduler import KIND_BITS, KIND_MASK, heap_min8, heap_settle, next_in_line, push_normal, timeout
from .wire import repl_trip, value


@hot
def records_at(pa, sa, va, ra):
    """The four records from their addresses: the parameters, the state, the policies' view, the recorder."""
    return params_at(pa), state_at(sa), view_at(va), recorder_at(ra)


@entry
def run_kernel(pa, sa, va, ra, t_stop, ev_room, trace_room):
    """Process events until the end of the run, ``t_stop``, or a buffer needs Python; the records by address."""
    P, S, V, R = records_at(pa, sa, va, ra)
    end = P.end
    umask = S.uf_kind.shape[0] - 1
    nmask = S.nf_kind.shape[0] - 1
    n_slots = S.slot.shape[0]
    # Below PREFETCH_SLOTS the slots' rows stay in cache and asking for the next one is pure cost (about
    # 20 ns an I/O on the test drive); at 32 x 64 x 8 (65,536 slots) the row's miss is what it hides.
    prefetching = n_slots >= PREFETCH_SLOTS
    # Whatever needs Python (a stream running low, a log or trace buffer nearly full)
    # raises flags[FL_STOP] where it happens (draw, log_event, complete): the loop
    # tests that one word per event.
    V.flags[FL_EV_ROOM] = ev_room
    S.si[I_TRACE_ROOM] = trace_room
    V.flags[FL_STOP] = V.flags[FL_REFILL] != 0 or V.flags[FL_NEV] > ev_room or S.si[I_NTRACE] > trace_room
    status = DONE
    while True:
        if V.flags[FL_STOP] != 0:
            V.flags[FL_STOP] = 0
            status = REFILL if V.flags[FL_REFILL] != 0 else BUFFERS_FULL
            break
        if S.si[I_UF_HEAD] < S.si[I_UF_TAIL]:
            i = S.si[I_UF_HEAD] & umask
            S.si[I_UF_HEAD] += 1
            kind = S.uf_kind[i]
            arg = S.uf_arg[i]
        else:
            # one dispatch and one heap removal (heap_settle), each inlined once
            from_heap = S.si[I_HEAPN] > 0 and S.h_time[0] == V.clock[0]
            if not from_heap:
                if S.si[I_NF_HEAD] < S.si[I_NF_TAIL]:
                    i = S.si[I_NF_HEAD] & nmask
                    S.si[I_NF_HEAD] += 1
                    kind = S.nf_kind[i]
                    arg = S.nf_arg[i]
                else:
                    if S.si[I_HEAPN] == 0:
                        status = DONE
                        break
                    t = S.h_time[0]
                    if t >= end:
                        status = DONE
                        break
                    if t >= t_stop:
                        status = PAUSED
                        break
                    # Both FIFOs are empty: back to the start of their rings, so they stay in a few hot
                    # lines instead of sweeping megabytes of ring (and the cache) as time goes on.
                    S.si[I_UF_HEAD] = 0
                    S.si[I_UF_TAIL] = 0
                    S.si[I_NF_HEAD] = 0
                    S.si[I_NF_TAIL] = 0
                    V.clock[0] = t
                    from_heap = True
            if from_heap:  # taken from the root, removed after (or replaced by the first timeout it schedules)
                kind = S.h_ka[0, 0] & KIND_MASK
                arg = S.h_ka[0, 1]
                S.si[I_HTOP] = 1
                # The next event is nearly always the root's smallest child (what this one schedules comes later):
                # ask for its slot's row now, so the miss overlaps this event's work instead of starting the next.
                if prefetching:
                    m, tm = heap_min8(S.h_time, S.h_ka, 1, S.si[I_HEAPN])
                    nxt = S.h_ka[np.uint64(m), 1] & SLOT_MASK
                    if tm < np.inf and nxt < n_slots:
                        row = nxt * SLOT_COLS
                        prefetch(S.slot, np.uint64(row))
                        prefetch(S.slot, np.uint64(row + 8))
                        prefetch(S.slot, np.uint64(row + 16))
                        prefetch(V.s_op, np.uint64(nxt))
                        prefetch(V.s_size, np.uint64(nxt))
        # -- the handlers --
        if kind <= EV_M_END and kind != EV_INIT and kind != EV_RELEASE:  # an attempt's event: is it still current?
            s = arg & SLOT_MASK
            if (arg >> TAG_SHIFT) != S.slot[s, K_GEN]:
                kind = -1  # its attempt was aborted: nothing to do
        else:
            s = arg
        if kind == EV_LEG:
            on_leg(P, S, V, R, s)
        elif kind == EV_GRANT_MAIN:
            start_service(P, S, V, P.p_array[S.slot[s, K_PATH]], V.s_op[s], s)
        elif kind == EV_SVC_MAIN:
            on_service_done(P, S, V, R, s)
        elif kind == EV_RELEASE:  # arg: the array's queue row
            trigger_put(P, S, V, s)
        elif kind == EV_M_FWD:
            mirror_at_peer(P, S, V, s)
        elif kind == EV_GRANT_MIRROR:
            start_mirror_service(P, S, V, P.p_mirror[S.slot[s, K_PATH]], s)
        elif kind == EV_M_SVC:
            release_slot(P, S, V, P.a_q[P.p_mirror[S.slot[s, K_PATH]]])
            S.slot[s, K_MSUB] = MS_ACK
            timeout(S, V, repl_trip(P, S, V, R, s, False), EV_M_ACK, arg)
        elif kind == EV_M_ACK:  # the mirror process returns: its own event is scheduled
            S.slot[s, K_MSUB] = MS_NONE
            if next_in_line(S, V):
                S.si[I_EID] += 1
                mirror_end(P, S, V, R, s)
            else:
                S.slot[s, K_MSTATE] = M_END_SCHEDULED
                push_normal(S, EV_M_END, arg)
        elif kind == EV_M_END:
            mirror_end(P, S, V, R, s)
        elif kind == EV_INIT:
            next_io(P, S, V, R, s)
        elif kind == EV_FAULT_INIT:
            fault_loop(P, S, V)
        elif kind == EV_FAULT:
            S.si[I_FAULT_NEXT] = arg + 1
            apply_fault(P, S, V, arg)
            fault_loop(P, S, V)
        elif kind == EV_NOTICE:
            notice(P, S, V, arg)
        elif kind == EV_DEADLINE:
            on_deadline(P, S, V, arg, S.h_ka[0, 0] >> KIND_BITS)  # the root is still this event
        elif kind == EV_ABORT:
            s = arg & SLOT_MASK
            if (arg >> TAG_SHIFT) == S.slot[s, K_GEN]:
                abort(P, S, V, R, s)
        elif kind == EV_M_ABORT:
            abort_mirror(P, S, V, arg & SLOT_MASK, arg >> TAG_SHIFT)
        elif kind == EV_APD_TIMER or kind == EV_HOLD_WAKE:
            # the wait's APD timeout (the I/O fails), or the policy's wake time (waits.arm_wake: as a path change
            # would); either only if this wait is still the slot's and nothing woke it first
            n_slots = S.slot.shape[0]
            s = arg % n_slots
            if S.slot[s, K_WAITID] == arg // n_slots and S.slot[s, K_WOKEN] == 0:
                S.slot[s, K_WOKEN] = 1
                S.slot[s, K_WAKEVAL] = 1 if kind == EV_HOLD_WAKE else 0
                push_normal(S, EV_WAKE, s)
        elif kind == EV_WAKE:
            if S.slot[s, K_WAKEVAL] == 0:  # the APD timeout: the I/O fails visibly and the slot moves on
                rec_fail(R, V.clock[0], V.clock[0] - S.slotf[s, K_ISSUED], S.slot[s, K_JOB])
                release_admission(P, S, V, R, P.j_dev[S.slot[s, K_JOB]], S.slot[s, K_JOB])
                next_io(P, S, V, R, s)
            elif S.slot[s, K_STAGE] == ST_WAIT_LOST:  # lost in silence, the host saw a change: the policy hears of it
                retry_lost(P, S, V, R, s)
            else:
                begin_attempt(P, S, V, R, s)
        elif kind == EV_QUEUE_GRANT:
            queue_granted(P, S, V, R, s)
        elif kind == EV_ARRIVALS_INIT:
            gap = value(V, P.str_arr[arg])
            if gap < np.inf:
                timeout(S, V, gap, EV_ARRIVAL, arg)
        elif kind == EV_ARRIVAL:
            arrival(P, S, V, R, arg)
        elif kind == EV_OPEN_WAKE:
            new_io(P, S, V, R, s, V.clock[0])
        elif kind == EV_QFULL_RETRY:
            begin_attempt(P, S, V, R, s)
        elif kind == EV_CPU:  # the host's CPU (issue 33): an attempt's event past the others', its tag checked here
            s = arg & SLOT_MASK
            if (arg >> TAG_SHIFT) == S.slot[s, K_GEN]:
                cpu_done(P, S, V, R, s)
        heap_settle(S)
    return status
