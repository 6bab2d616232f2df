"""Times, counts and lists as a person says them, shared by the story's modules (so none of them imports the story back)."""

from __future__ import annotations

__all__ = ["fmt_time", "past_end", "in_ms", "fmt_change", "plural", "and_list"]


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


def in_ms(seconds_or_us: float, *, us: bool = False) -> str:
    """Seconds (or with ``us`` microseconds) in ms, to three figures: ``2.31 ms``, ``0.48 ms``, ``1,204 ms``."""
    ms = seconds_or_us / 1e3 if us else seconds_or_us * 1e3
    if ms >= 100:
        return f"{ms:,.0f} ms"
    return f"{ms:.3g} ms" if ms >= 1 else f"{ms:.2g} ms"


def fmt_change(ratio: float) -> str:
    """``a / b - 1`` as a signed percentage: ``+84 %``, ``-0.4 %``."""
    pct = ratio * 100
    return f"{pct:+.0f} %" if abs(pct) >= 10 else f"{pct:+.1f} %"


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 I/O``, ``2,048 I/Os``: a count and its noun."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def and_list(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
