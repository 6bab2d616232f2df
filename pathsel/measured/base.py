"""What a measurement file says, in one shape: figures (IOPS, mean and p99 latency), per device and per path.

Every reader in :mod:`pathsel.measured` returns :class:`Measurement` objects
and raises :class:`MeasureError` for a file it cannot read: the file, the
place (``line 12``, or a key path such as ``jobs[0].write.clat_ns`` in JSON)
and the problem, one line. Latencies are seconds, IOPS per second.

Every file is read through :func:`pathsel.textread.read_capped` (64 MiB at most; binary files, NUL bytes and
``/dev/zero`` refused). Every number a file gives is checked where it is read: finite (``float()`` also reads
"nan", "inf" and "1e400"), not negative, a count whole and at most fio's 2^64 - 1, an IOPS figure at most
:data:`MAX_IOPS` and a latency at most :data:`MAX_LATENCY`; a figure of 0 is refused where it is made
(:func:`figure`). A name or a JSON key given twice is refused, not read as whichever came last.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..limits import MAX_RATE_IOPS
from ..textread import TextReadError, read_capped
from ..units import MAX_DURATION

__all__ = ["MeasureError", "Figure", "Measurement", "read_text", "METRICS", "MAX_IOPS", "MAX_LATENCY", "figure", "json_document"]

# The figures calibration compares, and what each means.
METRICS = {
    "iops": "I/Os completed per second",
    "mean": "mean latency (s)",
    "p50": "median latency (s)",
    "p99": "99th percentile latency (s)",
}


# The largest figures a file may give: what a scenario can offer one job copy, and its longest delay. More is a
# typo or a hostile file (1e300), and would overflow the sums and averages calibration takes.
MAX_IOPS = MAX_RATE_IOPS
MAX_LATENCY = MAX_DURATION


class MeasureError(ValueError):
    """A measurement file that cannot be read, located: ``file: place: problem``."""

    def __init__(self, source: str, place: str, problem: str) -> None:
        self.source = source
        self.place = place
        self.problem = problem
        super().__init__(f"{source}: {place}: {problem}" if place else f"{source}: {problem}")

    def __reduce__(self) -> tuple[type[MeasureError], tuple[str, str, str]]:
        return (MeasureError, (self.source, self.place, self.problem))


@dataclass(frozen=True)
class Figure:
    """One measured number: ``metric`` (iops, mean, p50, p99) of the device, or of ``path`` when given, or of
    one op (``read``, ``write``) when ``op`` is given (fio's per-op percentiles of a randrw job)."""

    metric: str
    value: float
    stderr: float | None = None  # its standard error, when the file says how it varied
    path: str | None = None
    where: str = ""  # where in the file it comes from
    op: str | None = None

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"figure: metric must be one of {', '.join(METRICS)}, got {self.metric!r}")
        if not (math.isfinite(self.value) and self.value > 0):
            raise ValueError(f"figure: {self.metric} must be a number > 0, got {self.value!r}")


@dataclass
class Measurement:
    """The figures one file gives for one device (and one run, for pathsel's own JSON)."""

    source: str
    kind: str  # fio, esxtop, iostat, pathsel
    figures: tuple[Figure, ...]
    device: str = ""
    policy: str | None = None  # the run it measured, when the file says (pathsel JSON: the label)
    notes: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)  # what else the file said (esxtop ACTV, fio job options)

    def get(self, metric: str, path: str | None = None, op: str | None = None) -> Figure | None:
        return next((f for f in self.figures if f.metric == metric and f.path == path and f.op == op), None)

    def describe(self) -> str:
        parts = []
        for f in self.figures:
            if f.path is not None:
                continue
            what = f"{f.metric} {f.op}" if f.op else f.metric
            value = f"{f.value:,.0f} IOPS" if f.metric == "iops" else f"{what} {f.value * 1e3:.3f} ms"
            parts.append(value)
        per_path = len({f.path for f in self.figures if f.path is not None})
        more = f", {per_path} path(s)" if per_path else ""
        return f"{Path(self.source).name} ({self.kind}{', ' + self.device if self.device else ''}): {', '.join(parts)}{more}"


def read_text(path: str | Path, source: str | None = None) -> str:
    """A measurement file's text: UTF-8, or UTF-16 with a byte-order mark (PowerShell's ``>``); ANSI colours kept.

    Read through :func:`pathsel.textread.read_capped` (at most 64 MiB: ``/dev/zero`` and binary files are one
    located message); every failure is a MeasureError naming the file.
    """
    source = source if source is not None else str(path)
    try:
        return read_capped(path, what="measurement file")
    except TextReadError as e:
        raise MeasureError(source, e.place, e.problem) from None


def figure(
    source: str,
    metric: str,
    value: float,
    stderr: float | None = None,
    path: str | None = None,
    where: str = "",
    place: str | None = None,
    op: str | None = None,
) -> Figure:
    """A :class:`Figure`, or a MeasureError located at ``place`` (default ``where``) when the file's value is 0,
    negative, not finite or past :data:`MAX_IOPS` / :data:`MAX_LATENCY` (calibration divides by it and compares
    logarithms)."""
    high = MAX_IOPS if metric == "iops" else MAX_LATENCY
    if not (math.isfinite(value) and 0 < value <= high):
        unit = "IOPS" if metric == "iops" else "s"
        shown = f"{value:,.6g} {unit}" if metric == "iops" else f"{value:.6g} s"
        who = f"path {path!r}: " if path is not None else ""
        raise MeasureError(
            source, where if place is None else place, f"{who}{METRICS[metric]} is {shown}: a figure must be > 0 and at most {high:g} {unit}"
        )
    if stderr is not None and not (math.isfinite(stderr) and stderr >= 0):
        stderr = None  # its spread unknown: calibration falls back to the default noise
    return Figure(metric, value, stderr, path, where, op)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def json_document(body: str, source: str, first_line: int = 1) -> Any:
    """``body`` parsed as JSON, every failure a located MeasureError: not JSON, a key given twice in one object
    (json keeps the last silently: a figure read from the wrong one), numbers too long to read, nesting too deep.
    ``first_line``: the file's line where ``body`` starts."""
    try:
        return json.loads(body, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        cut = e.pos >= len(body.rstrip())  # the parser ran out of text: a truncated file
        why = "the JSON ends early (cut short?)" if cut else f"not valid JSON ({e.msg})"
        raise MeasureError(source, f"line {e.lineno + first_line - 1}, column {e.colno}", why) from None
    except _DuplicateKey as e:
        raise MeasureError(source, "", f"the key {e.key[:60]!r} appears twice in one JSON object: which one was measured?") from None
    except ValueError as e:  # an integer of thousands of digits (int's str limit)
        raise MeasureError(source, "", f"not readable JSON ({e})") from None
    except RecursionError:
        raise MeasureError(source, "", "JSON nested too deep to read (hundreds of levels)") from None
