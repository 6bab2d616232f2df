"""Frames on the wire in the fast engine: reference.py's ``leg``, ``lose`` and the replication link's trip.

A frame queues for each wire it crosses (one FIFO per direction), is
serialised at the wire's bandwidth, propagates, and may be lost and resent
after the link's recovery time. Here too are the two helpers every step of
the engine uses: :func:`tag` (an attempt's event argument) and :func:`value`
(the next draw of a random stream).
"""

from __future__ import annotations

import numpy as np

from ...jit import hot, jit
from ...policies.framework.kernel import draw
from ..recorder import (
    C_FRAMES_LOST,
)
from .layout import (
    EV_LEG,
    F_REPL_EXTRA,
    F_REPL_LOSS,
    K_DEADLINE,
    K_EPOCH,
    K_GEN,
    K_PATH,
    MAX_RESENDS,
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
    if nbytes != 0:
        # the path's own wire (if it has a bandwidth), then each shared link: one call of serialise
        # (inlined: leg is inlined at every frame's send)
        t = now
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
        if cross:  # then the link between the array's controllers
            a = P.p_array[p]
            if P.a_icbw[a] > 0.0:
                t = serialise(S, R, P.w_ic0 + a, direction, t, nbytes, P.a_icbw[a])
        delay += t - now
    if cross:
        delay += P.a_icl[P.p_array[p]]
    if S.loss[c] > 0:
        delay = lose(V, R, P.str_loss[c], S.loss[c], P.c_recov[c], delay, S.slotf[s, K_DEADLINE] - now)
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
        delay = lose(V, R, P.str_loss[P.str_loss.shape[0] - 1], S.sf[F_REPL_LOSS], P.r_recov, delay, np.inf)
    return delay
