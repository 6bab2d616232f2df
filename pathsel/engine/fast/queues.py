"""The fast engine's queues: one table, a row per queue of the model (:mod:`pathsel.model.queues`).

Each row of ``S.q`` (integers; ``S.qf`` the same memory as floats) is one
64-byte line: places in use (``Q_IN_USE``), its FIFO of waiting entries
(``Q_HEAD``/``Q_TAIL`` into the row's ring in ``S.q_fifo``, at ``P.q_off``,
``P.q_mask + 1`` long), its queue depth now (``Q_QUEUE_DEPTH``, 0: no limit;
ESXi's throttling changes a device queue's), and the counters every queue
reports: the time integrals of places in use and of entries waiting over the
measured window, brought up to date before each change (:func:`advance`),
and the QUEUE FULLs it answered. ``P.q_rule`` says what a full row does:

* ``host`` (reference/queues.py's ``take``/``give_back``): the device's rows
  (``P.d_adm``) taken in order at issue (:func:`admit`); a full one keeps the
  I/O in its FIFO (``ST_QUEUED``, ``K_QUEUE``) until a release hands it the
  place (``EV_QUEUE_GRANT``); given back at completion, last taken first
  (:func:`release_admission`). ACTV/QUED per device as esxtop counts them:
  waiting at the first row is QUED, taking it ACTV; waiting at a later row
  moves ACTV back to QUED until the grant. A device queue with ESXi's DSNRO
  (``P.q_dsnro``) also counts each VM's I/Os outstanding and places held
  (``S.qw_out``, ``S.qw_held``, ``S.q_worlds``): :func:`dsnro_room`,
  :func:`dsnro_give_back`.
* ``path``: the same :func:`take` and :func:`give_back`, on the row of the
  chosen path (``P.p_pathq``: an NVMe-oF controller's tags), held by the
  attempt (``K_QUEUE``) and given back when it ends.
* ``refuse`` (reference/queues.py's ``accept``/``port_done``): a target port; full, the
  command is answered QUEUE FULL.
* ``array`` (``simpy.Resource``, for the arrays' slots): requests of an I/O
  and of its mirror copy (entry ``slot << 1 | mirror``), each trigger
  examining only the head, with SimPy's event ids (EV_GRANT_MAIN,
  EV_GRANT_MIRROR, EV_RELEASE).

Reference twin: reference/queues.py (the rows themselves: reference/state.py's ``Queue``).
"""

from __future__ import annotations

import numpy as np

from ...jit import hot, jit, prefetch
from ..recorder.bookkeeping import rec_dev, rec_queue_depth
from .layout import (
    A_GRANTED,
    A_QUEUED,
    EV_GRANT_MAIN,
    EV_GRANT_MIRROR,
    EV_QUEUE_GRANT,
    EV_RELEASE,
    I_EID,
    K_ADMITTED,
    K_ASUB,
    K_GEN,
    K_JOB,
    K_MSUB,
    K_PORT_ROW,
    K_QUEUE,
    K_STAGE,
    MS_GRANTED,
    MS_QUEUED,
    Q_AREA_IN_USE,
    Q_AREA_WAITING,
    Q_HEAD,
    Q_IN_USE,
    Q_LAST,
    Q_QFULL,
    Q_QUEUE_DEPTH,
    Q_TAIL,
    SLOT_COLS,
    ST_QFULL,
    ST_QUEUED,
)
from .scheduler import next_in_line, push_normal
from .wire import leg, tag

PREFETCH_SLOTS = 16384  # 3 MiB of slot rows: 8 x 32 x 8 (8,192 slots) ran as fast without the prefetch (the loop's too)


# -- a row: its counters and its FIFO ----------------------------------------------------------------
@hot
def advance(P, S, r, now):
    """Bring row ``r``'s time integrals (in use, waiting) up to ``now``, within the measured window."""
    qf = S.qf
    last = qf[r, Q_LAST]
    if now > last:
        w = min(now, P.end) - max(last, P.ramp)
        if w > 0.0:
            q = S.q
            qf[r, Q_AREA_IN_USE] += q[r, Q_IN_USE] * w
            qf[r, Q_AREA_WAITING] += (q[r, Q_TAIL] - q[r, Q_HEAD]) * w
        qf[r, Q_LAST] = now


@hot
def join(P, S, r, entry):
    """``entry`` joins the end of row ``r``'s FIFO."""
    t = S.q[r, Q_TAIL]
    S.q_fifo[P.q_off[r] + (t & P.q_mask[r])] = entry
    S.q[r, Q_TAIL] = t + 1


@hot
def at(P, S, r, i):
    """The ``i``-th entry of row ``r``'s ring (``Q_HEAD`` .. ``Q_TAIL`` - 1 are waiting)."""
    return S.q_fifo[P.q_off[r] + (i & P.q_mask[r])]


@hot
def first_out(P, S, r):
    """The first waiting entry of row ``r`` leaves its FIFO."""
    h = S.q[r, Q_HEAD]
    S.q[r, Q_HEAD] = h + 1
    return at(P, S, r, h)


# -- the "host" and "path" rules ---------------------------------------------------------------------
@hot
def take(P, S, V, R, s, d, r, first):
    """reference/queues.take: the I/O in slot ``s`` (of device ``d``) takes a place of row ``r`` (True), or waits in its
    FIFO (False, ``K_QUEUE``). ``first``: the device's first row, where ACTV starts."""
    now = V.clock[0]
    advance(P, S, r, now)
    depth = S.q[r, Q_QUEUE_DEPTH]
    if P.dsnro_on != 0 and P.q_dsnro[r] > 0:  # ESXi's DSNRO on this device queue: the I/O's VM has one more outstanding here
        w = P.j_world[S.slot[s, K_JOB]]
        S.qw_out[r, w] += 1
        if S.qw_out[r, w] == 1:
            S.q_worlds[r] += 1
        if S.q[r, Q_IN_USE] < depth and dsnro_room(P, S, r, w):
            S.q[r, Q_IN_USE] += 1
            S.qw_held[r, w] += 1
            rec_dev(R, now, d, 1, 0, S.slot[s, K_JOB])
            return True
    elif depth <= 0 or S.q[r, Q_IN_USE] < depth:
        S.q[r, Q_IN_USE] += 1
        if first:
            rec_dev(R, now, d, 1, 0, S.slot[s, K_JOB])
        return True
    join(P, S, r, s)
    S.slot[s, K_QUEUE] = r + 1
    rec_dev(R, now, d, 0 if first else -1, 1, S.slot[s, K_JOB])
    return False


@hot
def give_back(P, S, V, R, r, d, first, j):
    """reference/queues.give_back: an I/O of device ``d`` (job ``j``) gives its place of row ``r`` back; the first waiting is
    handed it (EV_QUEUE_GRANT), and as many more as a queue depth grown back by throttling has room for."""
    now = V.clock[0]
    advance(P, S, r, now)
    if first:
        rec_dev(R, now, d, -1, 0, j)
    if P.dsnro_on != 0 and P.q_dsnro[r] > 0:
        dsnro_give_back(P, S, R, r, P.j_world[j], now)
        return
    depth = S.q[r, Q_QUEUE_DEPTH]
    if S.q[r, Q_HEAD] < S.q[r, Q_TAIL] and S.q[r, Q_IN_USE] <= depth:
        hand_over(P, S, R, r, now)  # the place goes on: in use unchanged
    else:
        S.q[r, Q_IN_USE] -= 1
    while S.q[r, Q_HEAD] < S.q[r, Q_TAIL] and S.q[r, Q_IN_USE] < depth:
        S.q[r, Q_IN_USE] += 1
        hand_over(P, S, R, r, now)


@hot
def dsnro_room(P, S, r, w):
    """reference/queues.dsnro_room: whether DSNRO lets VM ``w`` take one more place of device queue ``r``: always while it is
    alone (no other VM has I/O outstanding there); else below DSNRO, all VMs' places together or its own (per_vm)."""
    if S.q_worlds[r] <= 1:
        return True
    if P.q_pervm[r] != 0:
        return S.qw_held[r, w] < P.q_dsnro[r]
    return S.q[r, Q_IN_USE] < P.q_dsnro[r]


@hot
def dsnro_give_back(P, S, R, r, w, now):
    """reference/queues.dsnro_give_back: an I/O of VM ``w`` gives its place of device queue ``r`` (with DSNRO) back; the
    waiting are handed places in order while the queue depth and DSNRO allow (per_vm: one whose VM is at its cap is
    passed over, keeping its place in line)."""
    S.q[r, Q_IN_USE] -= 1
    S.qw_held[r, w] -= 1
    S.qw_out[r, w] -= 1
    if S.qw_out[r, w] == 0:
        S.q_worlds[r] -= 1  # its last I/O here: maybe alone again, the cap lifts
    depth = S.q[r, Q_QUEUE_DEPTH]
    off, mask = P.q_off[r], P.q_mask[r]
    i = S.q[r, Q_HEAD]
    while i < S.q[r, Q_TAIL] and S.q[r, Q_IN_USE] < depth:
        e = at(P, S, r, i)
        j = S.slot[e, K_JOB]
        v = P.j_world[j]
        if dsnro_room(P, S, r, v):
            tail = S.q[r, Q_TAIL]
            for k in range(i, tail - 1):  # it leaves the line; the rest keep their order
                S.q_fifo[off + (k & mask)] = S.q_fifo[off + ((k + 1) & mask)]
            S.q[r, Q_TAIL] = tail - 1
            S.q[r, Q_IN_USE] += 1
            S.qw_held[r, v] += 1
            rec_dev(R, now, P.j_dev[j], 1, -1, j)
            push_normal(S, EV_QUEUE_GRANT, e)
        elif P.q_pervm[r] == 0:
            break  # all VMs' cap: no one behind fits either
        else:
            i += 1


@hot
def hand_over(P, S, R, r, now):
    """The first I/O waiting at row ``r`` has its place: ACTV again (it was QUED), and it goes on (EV_QUEUE_GRANT)."""
    w = first_out(P, S, r)
    j = S.slot[w, K_JOB]
    rec_dev(R, now, P.j_dev[j], 1, -1, j)
    push_normal(S, EV_QUEUE_GRANT, w)


@hot
def admit(P, S, V, R, s, d, k):
    """reference/queues.admit: device ``d``'s "host" rows (DeviceModel.admission) taken in order from its ``k``-th; True
    when all are (KAVG ends: ``K_ADMITTED``), False when the I/O waits at one (``ST_QUEUED``)."""
    n = P.d_nadm[d]
    while k < n:
        if not take(P, S, V, R, s, d, P.d_adm[d, k], k == 0):
            S.slot[s, K_STAGE] = ST_QUEUED
            return False
        k += 1
    S.slotf[s, K_ADMITTED] = V.clock[0]
    return True


@hot
def admitted_at(P, d, r):
    """Where row ``r`` is in device ``d``'s admission (the I/O waited there)."""
    k = 0
    while P.d_adm[d, k] != r:
        k += 1
    return k


@hot
def release_admission(P, S, V, R, d, j):
    """reference/queues.release: the I/O of device ``d`` (job ``j``) is done (completed or failed): its "host" places go
    back, last taken first."""
    for k in range(P.d_nadm[d] - 1, -1, -1):
        give_back(P, S, V, R, P.d_adm[d, k], d, k == 0, j)


@hot
def path_release(P, S, V, R, s):
    """reference/queues.path_release: the attempt ended; the "path" place it held goes to the first waiting, if any."""
    r1 = S.slot[s, K_QUEUE]
    if r1 != 0:
        S.slot[s, K_QUEUE] = 0
        give_back(P, S, V, R, r1 - 1, -1, False, -1)


@jit
def throttle(P, S, V, R, d, qfull):
    """reference/queues.throttle: ESXi's adaptive queue depth on device ``d``'s queue (QFullSampleSize QUEUE FULLs halve
    its queue depth, QFullThreshold good statuses grow it by one, up to the scenario's)."""
    h = P.d_host[d]
    if P.hp_qfs[h] <= 0:
        return
    r = P.d_queue[d]
    if qfull:
        S.q_qfull_seen[r] += 1
        if S.q_qfull_seen[r] >= P.hp_qfs[h]:
            S.q_qfull_seen[r] = 0
            S.q_good_seen[r] = 0
            if S.q[r, Q_QUEUE_DEPTH] > 1:
                S.q[r, Q_QUEUE_DEPTH] = S.q[r, Q_QUEUE_DEPTH] // 2
                rec_queue_depth(R, V.clock[0], d, S.q[r, Q_QUEUE_DEPTH])
    elif S.q[r, Q_QUEUE_DEPTH] < P.queue_depth[r]:
        S.q_good_seen[r] += 1
        if S.q_good_seen[r] >= P.hp_qft[h]:
            S.q_good_seen[r] = 0
            S.q[r, Q_QUEUE_DEPTH] += 1
            rec_queue_depth(R, V.clock[0], d, S.q[r, Q_QUEUE_DEPTH])


# -- the "refuse" rule: the arrays' target ports ---------------------------------------------------------
@hot
def port_accept(P, S, V, R, s, p):
    """reference/queues.accept: the port takes the command (True), or answers QUEUE FULL: a status frame back (False)."""
    if P.ia_on != 0:  # implicit ALUA counts the commands each controller receives
        g = P.p_cell[p]
        if g >= 0:
            S.ia_count[g, P.p_actl[p]] += 1
    r = P.p_portq[p]
    if r < 0:
        return True
    now = V.clock[0]
    advance(P, S, r, now)
    if S.q[r, Q_IN_USE] >= S.q[r, Q_QUEUE_DEPTH]:
        if P.ramp <= now < P.end:
            S.q[r, Q_QFULL] += 1
        S.slot[s, K_STAGE] = ST_QFULL
        leg(P, S, V, R, s, p, 1, 0)
        return False
    S.q[r, Q_IN_USE] += 1
    S.slot[s, K_PORT_ROW] = r + 1
    return True


@hot
def port_done(P, S, V, s):
    """reference/queues.port_done: the array sent the command's last frame, or the attempt ended."""
    r1 = S.slot[s, K_PORT_ROW]
    if r1 != 0:
        advance(P, S, r1 - 1, V.clock[0])
        S.q[r1 - 1, Q_IN_USE] -= 1
        S.slot[s, K_PORT_ROW] = 0


# -- the "array" rule: simpy.Resource (a request joins the FIFO; each trigger examines only the head) -------
@hot
def trigger_put(P, S, V, r):
    """SimPy's Resource._trigger_put: grant the first request of row ``r`` if a place is free."""
    head = S.q[r, Q_HEAD]
    if head < S.q[r, Q_TAIL] and S.q[r, Q_IN_USE] < S.q[r, Q_QUEUE_DEPTH]:
        advance(P, S, r, V.clock[0])
        entry = first_out(P, S, r)
        slot = entry >> 1
        S.q[r, Q_IN_USE] += 1
        if head + 1 < S.q[r, Q_TAIL]:
            # The next in line is granted at a coming release, and its grant event reads its row: the abort line
            # (K_GEN, K_ASUB), the first (K_PATH), the mirror's (K_MSUB) and its op. It waited behind the array's
            # whole queue (tens of ms with 512 slots and 65,536 I/Os), so each is a miss: fetched now, they
            # arrive before the release (issue 35: 17 % of the loop's samples were the first read of K_PATH).
            # Below PREFETCH_SLOTS the rows stay in cache: the abort line only, as before.
            nxt_entry = at(P, S, r, head + 1)
            nxt = nxt_entry >> 1
            prefetch(S.slot, np.uint64(nxt * SLOT_COLS + K_GEN))
            if S.slot.shape[0] >= PREFETCH_SLOTS:
                prefetch(S.slot, np.uint64(nxt * SLOT_COLS))
                if nxt_entry & 1:
                    prefetch(S.slot, np.uint64(nxt * SLOT_COLS + K_MSUB))
                prefetch(V.s_op, np.uint64(nxt))
        if entry & 1:
            S.slot[slot, K_MSUB] = MS_GRANTED
            push_normal(S, EV_GRANT_MIRROR, tag(S, slot))
        else:
            S.slot[slot, K_ASUB] = A_GRANTED
            push_normal(S, EV_GRANT_MAIN, tag(S, slot))


@hot
def request(P, S, V, r, s, mirror):
    """A request (the I/O's, or its mirror copy's) joins row ``r``'s FIFO, and is granted if it is first and a place
    is free."""
    advance(P, S, r, V.clock[0])
    join(P, S, r, (s << 1) | mirror)
    if mirror:
        S.slot[s, K_MSUB] = MS_QUEUED
    else:
        S.slot[s, K_ASUB] = A_QUEUED
    trigger_put(P, S, V, r)


@jit
def withdraw(P, S, V, r, s, mirror, granted):
    """An aborted request leaves row ``r`` (simpy's Request.__exit__: cancel, then release).

    Still queued, it leaves the FIFO; granted, it gives its place back. Either way SimPy
    creates a Release event, which grants the next in line when it is processed.
    """
    if granted:
        release_slot(P, S, V, r)
        return
    advance(P, S, r, V.clock[0])
    entry = (s << 1) | mirror
    tail = S.q[r, Q_TAIL]
    i = S.q[r, Q_HEAD]
    while i < tail and at(P, S, r, i) != entry:
        i += 1
    off, mask = P.q_off[r], P.q_mask[r]
    for j in range(i, tail - 1):  # close the gap, keeping the order
        S.q_fifo[off + (j & mask)] = S.q_fifo[off + ((j + 1) & mask)]
    if i < tail:
        S.q[r, Q_TAIL] = tail - 1
    S.q[r, Q_IN_USE] += 1  # release_slot() takes one back: a queued request held none
    release_slot(P, S, V, r)


@hot
def release_slot(P, S, V, r):
    """SimPy's Resource.release: the place goes back, and a Release event will grant the next in line."""
    advance(P, S, r, V.clock[0])
    S.q[r, Q_IN_USE] -= 1
    if S.q[r, Q_QUEUE_DEPTH] >= S.slot.shape[0]:
        # No request can ever wait here (a job slot holds at most one grant per array,
        # so in use < slots <= queue depth): the release event would grant no one. Its
        # id is still taken, so every later event keeps the id SimPy gives it.
        S.si[I_EID] += 1
    else:
        push_normal(S, EV_RELEASE, r)


@hot
def grant_in_line(P, S, V, r):
    """A request for row ``r`` granted at once, its grant event next in line: take the place and the event's id."""
    if S.q[r, Q_HEAD] == S.q[r, Q_TAIL] and S.q[r, Q_IN_USE] < S.q[r, Q_QUEUE_DEPTH] and next_in_line(S, V):
        advance(P, S, r, V.clock[0])
        S.q[r, Q_IN_USE] += 1
        S.si[I_EID] += 1
        return True
    return False
