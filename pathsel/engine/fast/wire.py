"""Frames on the wire in the fast engine: reference/wire.py's ``leg``, ``lose`` and
reference/io_life.py's replication link's trip (``mirror``).

A frame queues for each wire it crosses (one FIFO per direction), is
serialised at the wire's bandwidth, propagates, and may be lost and resent
after the link's recovery time. Here too are the two helpers every step of
the engine uses: :func:`tag` (an attempt's event argument) and :func:`value`
(the next draw of a random stream).
"""

from __future__ import annotations

import numpy as np

from ...jit import hot, jit
from ...model.frames import leg_wire
from ...policies.framework.kernel import draw
from ..recorder.record import C_FRAMES_LOST
from .layout import (
    EV_LEG,
    F_REPL_EXTRA,
    F_REPL_LOSS,
    K_DEADLINE,
    K_EPOCH,
    K_GEN,
    K_PATH,
    K_STAGE,
    MAX_RESENDS,
    ST_W_XFER,
    TAG_SHIFT,
)
from .scheduler import (
    timeout,
)


@hot
def tag(S, s):
    """An attempt's event argument: its slot and the slot's abort count."""
    return s | (S.slot[s, K_GEN] << TAG_SHIFT)


@hot
def value(V, stream):
    """The next value of a random stream (a row of pre-drawn values)."""
    return draw(V.rnd, V.rq, V.flags, stream)


# -- the wire --------------------------------------------------------------------------------------
frame_bytes = hot(leg_wire)  # model/frames.leg_wire compiled: both engines count the same bytes


@jit
def framed_leg(P, S, s, c, direction, nbytes):
    """reference/wire.leg's framing: the bytes a leg of nexus ``c`` puts on each wire (a write's XFER_RDY by its stage)."""
    xrdy = 1 if direction == 1 and S.slot[s, K_STAGE] == ST_W_XFER else 0
    wire, _frames = frame_bytes(P.c_frm[c], direction, nbytes, xrdy)
    S.c_fbytes[c, direction] += nbytes
    S.c_fbytes[c, 2 + direction] += wire
    return wire


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


# -- the fabric (issue 33): reference/wire.link_rate and fabric_wires ---------------------------------------------------
@jit
def link_rate(P, S, li, d):
    """Bytes per second link ``li`` serialises in direction ``d``: its bandwidth, or its credit bound when lower."""
    bw = P.l_bw[li]
    cb = P.l_cb[li]
    if cb > 0.0:
        r = cb / (P.l_rtt0[li] + S.l_cret[li, d])
        if r < bw:
            bw = r
    return bw


@jit
def route_link(P, c, d, k):
    """The ``k``-th shared link a frame of nexus ``c`` crosses in direction ``d`` (to the host: the route reversed)."""
    return P.c_links[c, k] if d == 0 else P.c_links[c, P.c_nlinks[c] - 1 - k]


@jit
def fabric_wires(P, S, R, p, c, d, t, nbytes, cross):
    """reference/wire.fabric_wires: the wires in the frame's order, credit-limited links, back-pressure upstream."""
    nc = P.c_bw.shape[0]
    a = P.p_array[p]
    icbw = P.a_icbw[a] if cross else 0.0
    if d == 0 and P.c_bw[c] > 0.0:
        t = serialise(S, R, c, d, t, nbytes, P.c_bw[c])
    if d == 1 and icbw > 0.0:
        t = serialise(S, R, P.w_ic0 + a, d, t, nbytes, icbw)
    for k in range(P.c_nlinks[c]):
        li = route_link(P, c, d, k)
        rate = link_rate(P, S, li, d)
        t = serialise(S, R, nc + li, d, t, nbytes, rate)
        held = t
        nxt = rate
        j = k - 1
        while j >= 0:  # back-pressure, upstream while it binds
            lj = route_link(P, c, d, j)
            buf = P.l_cb[lj]
            if buf <= 0.0:
                break
            rj = link_rate(P, S, lj, d)
            push = held - nbytes / rj - buf / nxt
            old = S.wire_free[nc + lj, d]
            if push <= old:
                break
            lo = old if old > P.ramp else P.ramp
            hi = push if push < P.end else P.end
            if hi > lo:
                S.l_held[lj, d] += hi - lo
            S.wire_free[nc + lj, d] = push
            held = push
            nxt = rj
            j -= 1
    if d == 0 and icbw > 0.0:
        t = serialise(S, R, P.w_ic0 + a, d, t, nbytes, icbw)
    if d == 1 and P.c_bw[c] > 0.0:
        t = serialise(S, R, c, d, t, nbytes, P.c_bw[c])
    return t


@jit
def lose(V, R, stream, ppm, op_ppm, recovery, delay, limit):
    """reference/wire.lose: every lost copy of a frame is resent after ``recovery``; the draws run at ``ppm``, the frame
    is lost at ``op_ppm`` (<= ppm) while the leading draws fall under it."""
    p, q = ppm * 1e-6, op_ppm * 1e-6
    n = 0
    full = delay  # the draw loop at ppm: it decides how many draws the frame takes, whatever its op
    hit = True
    while n < MAX_RESENDS:
        u = value(V, stream)
        if not u < p:
            break
        if hit and u < q:
            delay += recovery
            R.rc[C_FRAMES_LOST] += 1
        else:
            hit = False
        full += recovery
        n += 1
        if full > limit:
            break
    return delay


@hot
def path_wires(P, S, R, p, c, direction, t, nbytes, cross):
    """The path's own wire (if it has a bandwidth), then each shared link, then (crossing) the link between the
    array's controllers: one call of serialise each; returns when the transfer is across (inlined in leg)."""
    nc = P.c_bw.shape[0]
    for i in range(0 if P.c_bw[c] > 0.0 else 1, P.c_nlinks[c] + 1):
        if i == 0:
            w = c
            bw = P.c_bw[c]
        else:
            li = P.c_links[c, i - 1]
            w = nc + li
            bw = P.l_bw[li]
        t = serialise(S, R, w, direction, t, nbytes, bw)
    if cross:
        a = P.p_array[p]
        if P.a_icbw[a] > 0.0:
            t = serialise(S, R, P.w_ic0 + a, direction, t, nbytes, P.a_icbw[a])
    return t


@jit
def framed_fabric_wires(P, S, R, s, p, c, direction, now, nbytes, cross):
    """leg's wires when a nexus has a transport (the leg's wire bytes, headers and all: model/frames.py) or the
    run has a fabric (credits, back-pressure): a call, not inlined, so runs without either keep leg as it was."""
    if P.frames_on != 0 and P.c_frm[c, 0] != 0:
        nbytes = framed_leg(P, S, s, c, direction, nbytes)
    if nbytes == 0:
        return now
    if P.fabric_on != 0:
        return fabric_wires(P, S, R, p, c, direction, now, nbytes, cross)
    return path_wires(P, S, R, p, c, direction, now, nbytes, cross)


@hot
def leg(P, S, V, R, s, p, direction, nbytes, add=0.0):
    """One frame over path ``p``: queue for each wire, serialise, propagate, maybe be lost and resent.

    ``add``: host seconds added before the frame leaves (the NUMA hop of an attempt's first frame)."""
    now = V.clock[0]
    c = V.p_ctrl[p]
    lat = P.p_lat[p]
    delay = (lat if lat >= 0.0 else value(V, P.p_str[p])) + S.extra[c]
    cross = P.ic_on != 0 and S.cross[p] != 0  # to the volume's owner over the link between the controllers, and back
    if add != 0.0:
        delay += add
    if P.frames_on != 0 or P.fabric_on != 0:  # issue 33's framing and fabric: out of line, off the common path
        delay += framed_fabric_wires(P, S, R, s, p, c, direction, now, nbytes, cross) - now
    elif nbytes != 0:
        delay += path_wires(P, S, R, p, c, direction, now, nbytes, cross) - now
    if cross:
        delay += P.a_icl[P.p_array[p]]
    if S.loss[c] > 0:  # every frame draws at the nexus's full loss, whatever its op: reference/wire.leg says why
        delay = lose(V, R, P.str_loss[c], S.loss[c], S.loss_op[c, V.s_op[s]], P.c_recov[c], delay, S.slotf[s, K_DEADLINE] - now)
    S.slot[s, K_EPOCH] = S.epoch[c]
    timeout(S, V, delay, EV_LEG, tag(S, s))  # past the deadline, the abort comes first


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
            delay += serialise(S, R, P.w_repl, d, now, V.s_size[s], bw) - now
    if S.sf[F_REPL_LOSS] > 0:
        delay = lose(V, R, P.str_loss[P.str_loss.shape[0] - 1], S.sf[F_REPL_LOSS], S.sf[F_REPL_LOSS], P.r_recov, delay, np.inf)
    return delay
