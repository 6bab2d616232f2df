"""Frames on the wire in the reference engine: a leg over a path, the fabric, loss and resends.

A frame queues for each wire it crosses (one FIFO per direction), is serialised at the wire's bandwidth (on a
fabric, at its credit-limited rate, with back-pressure), propagates, and may be lost and resent after the link's
recovery time. Fast twin: fast/wire.py.
"""

from __future__ import annotations

from typing import Any

from ...model.frames import F_MODE, leg_wire
from ..recorder.record import C_FRAMES_LOST
from .state import Proc, State

__all__ = ["Wire", "PathLost", "TO_ARRAY", "TO_HOST", "MAX_RESENDS"]

TO_ARRAY, TO_HOST = 0, 1


MAX_RESENDS = 64  # a frame lost this many times in a row is delivered anyway (bounds a 100 % loss burst)


class PathLost(Exception):
    """A frame was lost (its path went down) or the attempt was aborted at io_timeout: retry."""

    def __init__(self, timed_out: bool = False) -> None:
        super().__init__()
        self.timed_out = timed_out


class Wire(State):
    """Frames on the wire: :meth:`leg` (one frame over a path), :meth:`serialise`, the fabric's :meth:`fabric_wires`,
    :meth:`lose`."""

    def serialise(self, w: int, direction: int, t: float, nbytes: int, bandwidth: float) -> float:
        """Queue a frame for wire ``w`` (FIFO per direction) from time ``t``; returns when it is on the far side
        (fast/wire.serialise)."""
        free = self.wire_free[w]
        start = max(t, free[direction])
        busy = nbytes / bandwidth
        done = start + busy
        free[direction] = done
        m = self.wires
        m.wire_busy[w, direction] += busy
        m.wire_wait[w, direction] += start - t
        m.wire_frames[w, direction] += 1
        return done

    # -- the fabric (issue 33; fast/wire.py) ------------------------------------
    def link_rate(self, li: int, direction: int) -> float:
        """Bytes per second link ``li`` serialises in ``direction``: its bandwidth, or its credit bound when lower
        (bb_credits x frame_size / the round trip of a frame and its R_RDY, with the port's credit_return now)."""
        ln = self.model.links[li]
        bw = ln.bandwidth
        if ln.credit_bytes > 0.0:
            r = ln.credit_bytes / (ln.rtt0 + self.cret[li][direction])
            if r < bw:
                bw = r
        return bw

    def fabric_wires(self, p: int, c: int, direction: int, t: float, nbytes: int) -> float:
        """A frame's wires in the order it crosses them (to the array: the nexus's own wire, the route's links, the
        inter-controller link; to the host the reverse), each link at its credit-limited rate; a link whose next
        link drains slower than it feeds is held until the next has all but the switch's buffer (back-pressure)."""
        model = self.model
        ctrl = model.controllers[c]
        nc = len(model.controllers)
        cross = self.cross[p]
        icbw = model.arrays[model.paths[p].array].ic_bandwidth if cross else None
        if direction == TO_ARRAY and ctrl.bandwidth:
            t = self.serialise(c, direction, t, nbytes, ctrl.bandwidth)
        if direction == TO_HOST and icbw:
            t = self.serialise(model.ic_wire(model.paths[p].array), direction, t, nbytes, icbw)
        order = ctrl.links if direction == TO_ARRAY else ctrl.links[::-1]
        for k, li in enumerate(order):
            rate = self.link_rate(li, direction)
            t = self.serialise(nc + li, direction, t, nbytes, rate)
            # back-pressure: the link before finishes sending no earlier than this one has drained all but the
            # switch's buffer for it (its bb_credits x frame_size): done here - the transfer's time there (the
            # store-and-forward lag) - the buffer's drain time here; upstream while it binds
            held, j, nxt = t, k - 1, rate
            while j >= 0:
                lj = order[j]
                buf = model.links[lj].credit_bytes
                if buf <= 0.0:
                    break
                rj = self.link_rate(lj, direction)
                push = held - nbytes / rj - buf / nxt
                free = self.wire_free[nc + lj]
                old = free[direction]
                if push <= old:
                    break
                lo, hi = max(old, model.ramp), min(push, model.end)
                if hi > lo:
                    self.held[lj][direction] += hi - lo
                free[direction] = push
                held, nxt, j = push, rj, j - 1
        if direction == TO_ARRAY and icbw:
            t = self.serialise(model.ic_wire(model.paths[p].array), direction, t, nbytes, icbw)
        if direction == TO_HOST and ctrl.bandwidth:
            t = self.serialise(c, direction, t, nbytes, ctrl.bandwidth)
        return t

    def lose(self, draws: Any, ppm: float, op_ppm: float, recovery: float, delay: float, limit: float) -> float:
        """Each lost copy of a frame is resent after ``recovery``: the delay grows until one gets through
        (fast/wire.lose). The draws run at ``ppm`` (the nexus's loss, whatever the op), so a frame takes as many
        draws under ``loss_ops = "write"`` as under ``"both"``; it is lost at ``op_ppm`` (<= ppm, 0: spared) while the
        leading draws fall under that: the same losses as a loop of its own at ``op_ppm``, but the stream in step."""
        p, q = ppm * 1e-6, op_ppm * 1e-6
        n = lost = 0
        full = delay
        hit = True
        while n < MAX_RESENDS:
            u = draws.next()
            if not u < p:
                break
            if hit and u < q:
                delay += recovery
                lost += 1
            else:
                hit = False
            full += recovery
            n += 1
            if full > limit:
                break
        self.rec.count(C_FRAMES_LOST, lost)
        return delay

    def leg(self, p: int, direction: int, nbytes: int, deadline: float, add: float = 0.0, xrdy: bool = False, *, op: int) -> Proc:
        """One frame over path ``p``: queue for each wire, serialise, propagate, maybe be lost and resent (fast/wire.leg).

        ``add``: host seconds added before the frame leaves (the NUMA hop of an attempt's first frame). On a nexus
        with a transport the leg is its frames: payload and every header (model/frames.py; ``xrdy``: the XFER_RDY).
        ``op``: the I/O's (0 read, 1 write), for the loss its path's loss_ops give it."""
        env, model = self.env, self.model
        c = model.paths[p].controller
        ctrl = model.controllers[c]
        now = env.now
        delay = self.streams.paths[c].next() + self.extra[c]
        if add != 0.0:
            delay += add
        if self.frame_rows[c][F_MODE]:
            fb = self.frame_bytes[c]
            fb[direction] += nbytes
            nbytes, _frames = leg_wire(self.frame_rows[c], direction, nbytes, 1 if xrdy else 0)
            fb[2 + direction] += nbytes
        if nbytes and self.fabric:
            delay += self.fabric_wires(p, c, direction, now, nbytes) - now
        elif nbytes:
            t = now
            if ctrl.bandwidth:
                t = self.serialise(c, direction, t, nbytes, ctrl.bandwidth)
            for li in ctrl.links:
                t = self.serialise(len(model.controllers) + li, direction, t, nbytes, model.links[li].bandwidth)
            if self.cross[p]:  # then the link between the array's controllers, to the owner and back
                bw = model.arrays[model.paths[p].array].ic_bandwidth
                if bw:
                    t = self.serialise(model.ic_wire(model.paths[p].array), direction, t, nbytes, bw)
            delay += t - now
        if self.cross[p]:
            delay += model.arrays[model.paths[p].array].ic_latency
        if self.loss[c] > 0:
            # every frame draws at the nexus's full loss, whatever its op (lose): a frame the loss spares takes the
            # draws it would take under "both" and is not lost, so at queue depth 1 on one path a write-only drop
            # loses the same writes' frames as a drop of every frame
            delay = self.lose(self.streams.loss[c], self.loss[c], self.loss_op[c][op], ctrl.loss_recovery, delay, deadline - now)
        epoch = self.epoch[c]
        yield env.timeout(delay)  # past the deadline, arm_abort's interrupt comes first
        if self.epoch[c] != epoch or not self.phys_up[c]:
            raise PathLost
