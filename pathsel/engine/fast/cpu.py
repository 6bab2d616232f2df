"""The host's CPU in the fast engine (issue 33): reference/cpu.py's ``cpu_run``.

A core is kept as a wire is (:func:`.wire.serialise`): work arriving now
starts when the core is free (FIFO, never preempted) and holds it for its
cost. The reservation is made the instant the work arrives (an attempt's
send, a status frame's arrival), in event order, so the cores are exact
FIFO servers without an event of their own. A submission's wait is added to
the attempt's first frame (io_life.first_add); a completion waits one timeout
(EV_CPU) until its work is done.
"""

from __future__ import annotations

from ...jit import hot


@hot
def cpu_run(P, S, V, k, cost):
    """Core ``k`` takes ``cost`` seconds of work arriving now: returns how long until it is done; counts its busy
    time in the window."""
    now = V.clock[0]
    start = max(now, S.cpu_free[k])
    done = start + cost
    S.cpu_free[k] = done
    w = min(done, P.end) - max(start, P.ramp)
    if w > 0.0:
        S.cpu_busy[k] += w
    return done - now
