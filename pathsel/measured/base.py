"""What a measurement file says, in one shape: figures (IOPS, mean and p99 latency), per device and per path.

Every reader in :mod:`pathsel.measured` returns :class:`Measurement` objects
and raises :class:`MeasureError` for a file it cannot read: the file, the
place (``line 12``, or a key path such as ``jobs[0].write.clat_ns`` in JSON)
and the problem, one line. Latencies are seconds, IOPS per second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MeasureError", "Figure", "Measurement", "read_text", "METRICS"]

# The figures calibration compares, and what each means.
METRICS = {
    "iops": "I/Os completed per second",
    "mean": "mean latency (s)",
    "p99": "99th percentile latency (s)",
}


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
    """One measured number: ``metric`` (iops, mean, p99) of the device, or of ``path`` when given."""

    metric: str
    value: float
    stderr: float | None = None  # its standard error, when the file says how it varied
    path: str | None = None
    where: str = ""  # where in the file it comes from

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

    def get(self, metric: str, path: str | None = None) -> Figure | None:
        return next((f for f in self.figures if f.metric == metric and f.path == path), None)

    def describe(self) -> str:
        parts = []
        for f in self.figures:
            if f.path is not None:
                continue
            value = f"{f.value:,.0f} IOPS" if f.metric == "iops" else f"{f.metric} {f.value * 1e3:.3f} ms"
            parts.append(value)
        per_path = len({f.path for f in self.figures if f.path is not None})
        more = f", {per_path} path(s)" if per_path else ""
        return f"{Path(self.source).name} ({self.kind}{', ' + self.device if self.device else ''}): {', '.join(parts)}{more}"


def read_text(path: str | Path, source: str | None = None) -> str:
    """A measurement file's text: UTF-8, or UTF-16 with a byte-order mark (PowerShell's ``>``); ANSI colours kept."""
    source = source if source is not None else str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise MeasureError(source, "", "no such file") from None
    except IsADirectoryError:
        raise MeasureError(source, "", "is a directory, not a measurement file") from None
    except OSError as e:
        raise MeasureError(source, "", f"cannot read: {e.strerror or e}") from None
    encoding = "utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise MeasureError(source, f"line {line}", f"not text (byte 0x{data[e.start]:02x})") from None
    if not text.strip():
        raise MeasureError(source, "", "is empty")
    return text
