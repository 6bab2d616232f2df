"""A wire's utilisation over the run, never above 1 (issue 33).

The engines add a frame's serialisation time to its wire's busy seconds when
the frame is queued (reference.serialise). A saturated wire still holds a
backlog at the end: frames queued before it and serialised after it, whose
time used to count and took the figure above 1 (1.0003; 1.018 with a long
backlog). The wire's queue is FIFO and nothing is queued after the end, so
the busy time past the end is exactly when its last frame is across minus
the end (``RunMetrics.wire_free_end``): taken off when the busy time exceeds
the run. A wire whose busy time is within the run keeps ``busy / end``, as
before (its figure, and the JSON of a run without a backlog, are unchanged).
"""

from __future__ import annotations

from ..metrics import RunMetrics
from ..model import Model


def wire_utilisation(m: RunMetrics, w: int, d: int, end: float) -> float:
    """Busy share of wire ``w``'s direction ``d`` over [0, end]: at most 1."""
    busy = float(m.wire_busy[w, d])
    if busy <= end:
        return busy / end
    free = m.wire_free_end
    late = max(0.0, float(free[w, d]) - end) if free is not None else busy - end
    return min(1.0, max(0.0, busy - late) / end)


def frame_columns(model: Model, m: RunMetrics, w: int, d: int) -> dict[str, float]:
    """A framed run's payload on wire ``w`` (a nexus's own or a shared link), direction ``d``: MB/s over [0, end] (the
    backlog past the end taken off in proportion, as for utilisation) and its share of the wire bytes (the rest is
    headers, trailers and gaps: model/frames.py). Empty for other wires."""
    fb = m.frame_bytes
    nc = len(model.controllers)
    if fb is None or w >= nc + len(model.links):
        return {}
    crossing = [w] if w < nc else [c.index for c in model.controllers if (w - nc) in c.links]
    payload = float(sum(fb[c, d] for c in crossing))
    wire = float(sum(fb[c, 2 + d] for c in crossing))
    busy = float(m.wire_busy[w, d])
    in_run = wire_utilisation(m, w, d, model.end) * model.end / busy if busy > 0 else 1.0  # as utilisation: no backlog
    return {"payload_mb_s": payload * min(1.0, in_run) / model.end / 1e6, "payload_share": payload / wire if wire > 0 else 0.0}
