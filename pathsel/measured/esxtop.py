"""esxtop batch mode (``esxtop -b -d 5 -n 60 > esxtop.csv``): per device and per path IOPS and latency.

Sources: VMware, "Interpreting esxtop Statistics" (esxtop 4.1, section 4
Disk and 4.3 "Batch Mode Output"), VMware Communities DOC-9279 / DOC-11812,
2010, https://communities.vmware.com/docs/DOC-11812 and its successor
Broadcom KB 382249, "Using ESXTop and Interpreting ESXTop Statistics"
(2024),
https://knowledge.broadcom.com/external/article/382249/using-esxtop-and-interpreting-esxtop-sta.html
: batch mode writes Windows perfmon's CSV ("PDH-CSV 4.0"), one column per counter
named ``\\\\HOST\\OBJECT(INSTANCE)\\COUNTER`` and one row per sample. The
disk device screen's counters (the screen's column in brackets):

* ``Commands/sec`` (CMDS/s): I/Os completed per second, the IOPS;
* ``Average Driver MilliSec/Command`` (DAVG/cmd): time in the device, the
  path and the array;
* ``Average Kernel MilliSec/Command`` (KAVG/cmd): time queued in the VMkernel;
* ``Average Guest MilliSec/Command`` (GAVG/cmd = DAVG + KAVG): what the
  virtual machine sees;
* ``Active Commands`` (ACTV) and ``Queued Commands`` (QUED).

Devices are the object ``Physical Disk SCSI Device(naa....)``. Per-path
counters come from an object whose name has ``Path`` in it and whose
instance holds a runtime name (``vmhba1:C0:T0:L1``, possibly after the device,
as in ``naa.624a...-vmhba1:C0:T0:L1``): pathsel takes the runtime name as the
path's name, which is how ``pathsel import esxcli`` names paths.

A device's figures are the means over the samples (IOPS: of Commands/sec;
latency: GAVG weighted by each sample's commands), with the standard error
of the IOPS from the spread of the samples. Per path: Commands/sec and DAVG.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable

import numpy as np

from ..limits import MAX_OUTSTANDING
from .base import MAX_IOPS, MAX_LATENCY, Figure, MeasureError, Measurement, figure

__all__ = ["read_esxtop", "is_esxtop", "COUNTERS"]

# counter -> short name (the esxtop screen's column)
COUNTERS = {
    "Commands/sec": "CMDS/s",
    "Average Driver MilliSec/Command": "DAVG",
    "Average Kernel MilliSec/Command": "KAVG",
    "Average Guest MilliSec/Command": "GAVG",
    "Active Commands": "ACTV",
    "Queued Commands": "QUED",
}
_COLUMN = re.compile(r"^\\\\(?P<host>[^\\]*)\\(?P<object>[^\\(]+)\((?P<instance>.*)\)\\(?P<counter>[^\\]+)$")
_RUNTIME = re.compile(r"vmhba\d+:C\d+:T\d+:L\d+")
_DEVICE_OBJECT = "Physical Disk SCSI Device"


# the largest value each counter may take: IOPS as a scenario's rate, latencies (ms) as its longest delay,
# ACTV and QUED as the I/Os it keeps outstanding
_HIGHEST = {
    "CMDS/s": MAX_IOPS,
    "DAVG": MAX_LATENCY * 1e3,
    "KAVG": MAX_LATENCY * 1e3,
    "GAVG": MAX_LATENCY * 1e3,
    "ACTV": float(MAX_OUTSTANDING),
    "QUED": float(MAX_OUTSTANDING),
}


def _cells(line: str, source: str, n: int) -> list[str]:
    """One CSV line's cells; a cell past csv's field size limit (131,072 characters) is a located message."""
    try:
        return next(csv.reader(io.StringIO(line)), [])
    except csv.Error as e:
        raise MeasureError(source, f"line {n}", f"not CSV esxtop writes ({e})") from None


def is_esxtop(text: str) -> bool:
    return text.lstrip('\ufeff"').startswith("(PDH-CSV")


def read_esxtop(text: str, source: str, device: str | None = None) -> Measurement:
    """The busiest device's figures (or ``device``'s), with per-path figures where the file has them."""
    lines = text.splitlines()
    if not lines or not is_esxtop(lines[0]):
        first = lines[0].split(",", 1)[0].strip('"') if lines else ""
        raise MeasureError(source, "line 1", f'not esxtop batch output: the first cell is {first[:40]!r}, not "(PDH-CSV 4.0) ..."')
    header = _cells(lines[0], source, 1)
    columns: dict[tuple[str, str, str], int] = {}  # (kind, name, short counter) -> column
    for c, cell in enumerate(header[1:], 1):
        m = _COLUMN.match(cell.strip())
        if not m or m.group("counter") not in COUNTERS:
            continue
        obj, inst, counter = m.group("object").strip(), m.group("instance"), COUNTERS[m.group("counter")]
        if obj == _DEVICE_OBJECT:
            key = ("device", inst, counter)
        elif "Path" in obj and (rt := _RUNTIME.search(inst)):
            dev = inst[: rt.start()].rstrip("-: ")
            key = ("path", (dev + "|" if dev else "") + rt.group(0), counter)
        else:
            continue
        if key in columns:  # two columns for one counter: whichever came last would win, silently
            raise MeasureError(
                source,
                "line 1",
                f"columns {columns[key] + 1} and {c + 1} are both {key[0]} {key[1].replace('|', ' ')[:80]!r}'s {m.group('counter')}: "
                "one capture per file",
            )
        columns[key] = c
    devices = sorted({name for kind, name, counter in columns if kind == "device" and counter == "CMDS/s"})
    if not devices:
        raise MeasureError(
            source,
            "line 1",
            f"no '{_DEVICE_OBJECT}(...)\\Commands/sec' columns: capture the disk device screen (esxtop -b with the u screen's counters)",
        )
    rows: list[list[str]] = []
    row_lines: list[int] = []  # the file's line of each row (blank lines skipped)
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        cells = _cells(line, source, n)
        if len(cells) != len(header):
            raise MeasureError(
                source,
                f"line {n}",
                f"{len(cells)} values, the header (line 1) has {len(header)}" + (" (the file is cut short?)" if len(cells) < len(header) else ""),
            )
        rows.append(cells)
        row_lines.append(n)
    if not rows:
        raise MeasureError(source, "line 2", "no samples after the header (esxtop -b -n N writes one line per sample)")

    def series(col: int) -> np.ndarray:
        counter = COUNTERS.get(header[col].rsplit("\\", 1)[-1], "")
        high = _HIGHEST.get(counter, MAX_IOPS)
        out = np.empty(len(rows))
        for i, cells in enumerate(rows):
            text_value = cells[col].strip()
            shown = repr(text_value) if len(text_value) <= 40 else repr(text_value[:37] + "...")
            try:
                out[i] = float(text_value) if text_value else 0.0
            except ValueError:
                raise MeasureError(source, f"line {row_lines[i]}", f"column {col + 1} ({header[col][-60:]}): {shown} is not a number") from None
            # float() reads "nan", "inf" and "1e400" (inf) too; 1e300 overflows the weighted means
            if not (math.isfinite(out[i]) and 0 <= out[i] <= high):
                raise MeasureError(
                    source, f"line {row_lines[i]}", f"column {col + 1} ({header[col][-60:]}): {shown} is not a number >= 0 and at most {high:g}"
                )
        return out

    busy = {d: float(series(columns[("device", d, "CMDS/s")]).mean()) for d in devices}
    if device is not None:
        if device not in busy:
            raise MeasureError(source, "line 1", f"no device {device!r} (devices: {', '.join(devices)})")
        chosen = device
    else:
        chosen = max(devices, key=lambda d: busy[d])
    notes = []
    if device is None and len(devices) > 1:
        notes.append(f"device {chosen} (the busiest of {len(devices)}: {', '.join(devices)})")
    figures, details = _figures(columns, "device", chosen, series, source)
    if not figures:
        raise MeasureError(source, "", f"device {chosen} completed no commands in the capture (Commands/sec is 0)")
    kavg, gavg = details.get("KAVG"), details.get("GAVG")
    if kavg is not None and gavg and kavg > 0.1 * gavg:
        notes.append(f"KAVG is {kavg / gavg:.0%} of GAVG: I/Os queue in the VMkernel (the device queue depth), which pathsel does not model")
    paths = sorted({name for kind, name, counter in columns if kind == "path" and counter == "CMDS/s"})
    mine = [p for p in paths if "|" not in p or p.split("|", 1)[0] == chosen]
    for p in mine:
        path_figures, _ = _figures(columns, "path", p, series, source, path=p.split("|", 1)[-1])
        figures.extend(path_figures)
    return Measurement(source, "esxtop", tuple(figures), device=chosen, notes=tuple(notes), details={**details, "samples": len(rows)})


def _figures(
    columns: dict[tuple[str, str, str], int], kind: str, name: str, series: Callable[[int], np.ndarray], source: str, path: str | None = None
) -> tuple[list[Figure], dict[str, float]]:
    cmds = series(columns[(kind, name, "CMDS/s")])
    details: dict[str, float] = {}
    for counter in ("DAVG", "KAVG", "GAVG", "ACTV", "QUED"):
        col = columns.get((kind, name, counter))
        if col is not None:
            values = series(col)
            details[counter] = float(np.average(values, weights=cmds)) if cmds.sum() > 0 and counter.endswith("AVG") else float(values.mean())
    figures: list[Figure] = []
    if cmds.mean() <= 0:
        return figures, details
    stderr = float(cmds.std(ddof=1) / math.sqrt(len(cmds))) if len(cmds) > 1 else None
    figures.append(figure(source, "iops", float(cmds.mean()), stderr or None, path=path, where="Commands/sec", place=""))
    latency = details.get("DAVG") if path is not None else details.get("GAVG", details.get("DAVG"))
    if latency:
        what = "DAVG" if path is not None or "GAVG" not in details else "GAVG"
        figures.append(figure(source, "mean", latency * 1e-3, path=path, where=what, place=""))
    return figures, details
