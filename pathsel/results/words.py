"""Times as a person says them, shared by the story's modules (so none of them imports the story back)."""

from __future__ import annotations

__all__ = ["fmt_time", "past_end"]


def fmt_time(t: float) -> str:
    """A simulated time as a person says it: ``48.9 ms``, ``2.02 s``, ``11 s``."""
    if t <= 0:
        return "0 s"
    if t < 1:
        return f"{t * 1e3:.3g} ms"
    return f"{t:.4g} s"


def past_end(times: list[float], end: float) -> str:
    """How faults the run did not reach stand to its end, one wording for the table and the story: ``at`` (all at
    the end exactly), ``after``, or ``at or after`` (some of each)."""
    at = [abs(t - end) <= 1e-9 * max(1.0, abs(end)) for t in times]
    return "at" if all(at) else "at or after" if any(at) else "after"
