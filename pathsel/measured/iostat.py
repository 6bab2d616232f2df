"""``iostat -x`` (sysstat): per block device IOPS and mean latency, a multipath map and its paths alike.

Source: sysstat, iostat(1), Sébastien Godard,
https://github.com/sysstat/sysstat (man/iostat.in) and
https://sysstat.github.io/: with ``-x`` every report has a ``Device`` header
line naming its columns and one line per device. sysstat 12 and later
write ``r/s``, ``r_await``, ``w/s``, ``w_await``, ``aqu-sz``, ``%util`` (and
discard and flush columns); older versions ``r/s``, ``w/s``, ``await``,
``r_await``, ``w_await``, ``avgqu-sz``, ``svctm``, ``%util``, with a colon
after ``Device``. Columns are found by name, so either works. ``await`` is
the mean time an I/O spends from being queued to its completion, in ms.

``iostat -x 5 12`` prints 12 reports; the first counts everything since the
system booted, so pathsel drops it when there are more (``iostat -y`` leaves
it out itself) and averages the rest. A multipath map is ``dm-N`` (or its
name with ``-N``); its paths are ``sdX``. The device measured is ``device``
when given, else the busiest ``dm-`` device (else the busiest device); every
``sd`` device is a per-path figure, named ``sdX`` as ``pathsel import
multipath`` names a single map's paths.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast

import numpy as np

from ..limits import MAX_OUTSTANDING
from .base import MAX_IOPS, MAX_LATENCY, MeasureError, Measurement, figure

__all__ = ["read_iostat", "is_iostat"]

_HEADER = re.compile(r"^Device:?\s")
# the largest value of the columns pathsel reads: rates as a scenario's (per second), times (ms) as its longest
# delay, queue sizes as the I/Os it keeps outstanding; 1e300 overflowed the weighted means
_RATE, _MS = MAX_IOPS, MAX_LATENCY * 1e3
_HIGHEST = {"r/s": _RATE, "w/s": _RATE, "await": _MS, "r_await": _MS, "w_await": _MS}
_HIGHEST |= {"aqu-sz": float(MAX_OUTSTANDING), "avgqu-sz": float(MAX_OUTSTANDING)}


def is_iostat(text: str) -> bool:
    return any(_HEADER.match(line) for line in text.splitlines()[:400])


def read_iostat(text: str, source: str, device: str | None = None) -> Measurement:
    reports: list[dict[str, dict[str, float]]] = []
    header: list[str] | None = None
    header_line = 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if _HEADER.match(line):
            header = line.replace("Device:", "Device").split()
            header_line = n
            missing = [c for c in ("r/s", "w/s") if c not in header]
            if missing:
                raise MeasureError(source, f"line {n}", f"the Device header has no {missing[0]} column: run iostat -x")
            if not ({"r_await", "w_await"} <= set(header) or "await" in header):
                raise MeasureError(source, f"line {n}", "the Device header has no await columns (r_await, w_await or await): run iostat -x")
            reports.append({})
            continue
        if not line or header is None:
            continue
        if line.startswith(("avg-cpu", "Linux ")) or re.match(r"^\d+[./-]\d+[./-]\d+", line) or line[0].isdigit() and ":" in line[:3]:
            header = None if line.startswith("avg-cpu") else header
            continue
        cells = line.split()
        if len(cells) != len(header):
            raise MeasureError(
                source,
                f"line {n}",
                f"{len(cells)} values, the Device header (line {header_line}) has {len(header)}"
                + (" (the file is cut short?)" if len(cells) < len(header) else ""),
            )
        values: dict[str, float] = {}
        for name, cell in zip(header[1:], cells[1:]):
            shown = repr(cell) if len(cell) <= 40 else repr(cell[:37] + "...")
            try:
                # ASCII only: float() also reads other scripts' digits ('\u0663' as 3), which iostat never writes
                if not cell.isascii():
                    raise ValueError(cell)
                values[name] = float(cell.replace(",", "."))
            except ValueError:
                raise MeasureError(source, f"line {n}", f"{name} = {shown} is not a number") from None
            # every iostat column is a rate, a time, a size or a share: never negative (a negative r/s dropped the
            # device's figures silently); float() reads "nan", "inf" and "1e400" (inf) too
            high = _HIGHEST.get(name, math.inf)
            if not (math.isfinite(values[name]) and 0 <= values[name] <= high):
                bound = f" and at most {high:g}" if math.isfinite(high) else ""
                raise MeasureError(source, f"line {n}", f"{name} = {shown} is not a number >= 0{bound}")
        if cells[0] in reports[-1]:
            raise MeasureError(source, f"line {n}", f"device {cells[0][:60]!r} is listed twice in the report of line {header_line}")
        reports[-1][cells[0]] = values
    reports = [r for r in reports if r]
    if not reports:
        raise MeasureError(source, "line 1", "no 'Device' report with device lines: not iostat -x output")
    notes = []
    if len(reports) > 1:
        notes.append(f"{len(reports) - 1} interval report(s) averaged; the first (since boot) dropped")
        reports = reports[1:]
    else:
        notes.append("one report: it counts everything since boot unless iostat ran with -y")
    names = list(dict.fromkeys(name for r in reports for name in r))

    def stats(name: str) -> tuple[float, float | None, float | None]:
        """(IOPS, its standard error, mean latency in s) over the reports."""
        iops, lat = [], []
        for r in reports:
            v = r.get(name)
            if v is None:
                continue
            rd, wr = v["r/s"], v["w/s"]
            iops.append(rd + wr)
            if "r_await" in v and "w_await" in v:
                lat.append((rd * v["r_await"] + wr * v["w_await"]) / (rd + wr) if rd + wr > 0 else 0.0)
            else:
                lat.append(v["await"])
        a = np.array(iops)
        w = a if a.sum() > 0 else None
        mean_lat = float(np.average(lat, weights=w)) * 1e-3 if w is not None else None
        stderr = float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else None
        return float(a.mean()), stderr or None, mean_lat

    all_stats = {name: stats(name) for name in names}
    if device is not None:
        if device not in all_stats:
            raise MeasureError(source, "", f"no device {device!r} (devices: {', '.join(names)})")
        chosen = device
    else:
        dm = [n for n in names if n.startswith("dm-") or n.startswith("mpath")]
        pool = dm if any(all_stats[n][0] > 0 for n in dm) else names
        chosen = max(pool, key=lambda n: all_stats[n][0])
        if len(pool) > 1:
            notes.append(f"device {chosen} (the busiest of {', '.join(pool)})")
    iops, stderr, lat = all_stats[chosen]
    if iops <= 0:
        raise MeasureError(source, "", f"device {chosen} completed no I/Os in the reports (r/s + w/s = 0)")
    figures = [figure(source, "iops", iops, stderr, where="r/s + w/s", place="")]
    if lat:
        figures.append(figure(source, "mean", lat, where="r_await, w_await", place=""))
    for name in names:
        if name == chosen or not name.startswith("sd"):
            continue
        p_iops, p_err, p_lat = all_stats[name]
        if p_iops > 0:
            figures.append(figure(source, "iops", p_iops, p_err, path=name, where="r/s + w/s", place=""))
            if p_lat:
                figures.append(figure(source, "mean", p_lat, path=name, where="r_await, w_await", place=""))
    aq = [r[chosen].get("aqu-sz", r[chosen].get("avgqu-sz")) for r in reports if chosen in r]
    details: dict[str, Any] = {"reports": len(reports)}
    if aq and aq[0] is not None:  # one iostat version wrote them all: every report has the column, or none
        details["aqu-sz"] = float(np.mean(cast(list[float], aq)))
    return Measurement(source, "iostat", tuple(figures), device=chosen, notes=tuple(notes), details=details)
