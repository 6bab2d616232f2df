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
* ``Average Queue MilliSec/Command`` (QAVG/cmd): the part of KAVG spent queued;
* ``Active Commands`` (ACTV), ``Queued Commands`` (QUED) and ``Device Q Depth`` (DQLEN).

Devices are the object ``Physical Disk SCSI Device(naa....)``. Per-path
counters come from an object whose name has ``Path`` in it and whose
instance holds a runtime name (``vmhba1:C0:T0:L1``, possibly after the device,
as in ``naa.624a...-vmhba1:C0:T0:L1``): pathsel takes the runtime name as the
path's name, which is how ``pathsel import esxcli`` names paths.

A device's figures are the means over the samples, each weighed by the time
it covers (from the samples' times: a sample covers the time since the one
before; the first, the gap between samples, esxtop's -d, or from time 0 for
``pathsel top -b``'s clock, which starts at the epoch): IOPS the commands over
the capture's time, latency GAVG weighted by each sample's commands
(Commands/sec x its time), with the standard error of the IOPS from the spread
of the samples; ACTV, QUED and DQLEN are counts at each sample, their means weighted by time alone. KAVG over
10 % of GAVG gets a note saying what it was: queued (QAVG, or QUED above 0 where the capture has no QAVG), for
the scenario's host ``queue_depth`` and ``sched_num_req_outstanding``, or else the host's waits for a path
(retries, a failover), which no queue depth models. Per path: Commands/sec and DAVG. The file says nothing of a
warm-up: every sample counts, the first too; cut the lines taken while the
load was starting (or, for ``pathsel top -b``, the scenario's ramp) out of
the file to leave it out. Sample times that do not read as esxtop's or do not
increase leave every sample weighing the same, with a note.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

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
    "Average Queue MilliSec/Command": "QAVG",
    "Device Q Depth": "DQLEN",
}
_COLUMN = re.compile(r"^\\\\(?P<host>[^\\]*)\\(?P<object>[^\\(]+)\((?P<instance>.*)\)\\(?P<counter>[^\\]+)$")
_RUNTIME = re.compile(r"vmhba\d+:C\d+:T\d+:L\d+")
_DEVICE_OBJECT = "Physical Disk SCSI Device"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DAY = 86_400
_MICROSECOND = timedelta(microseconds=1)


# the largest value each counter may take: IOPS as a scenario's rate, latencies (ms) as its longest delay,
# ACTV and QUED as the I/Os it keeps outstanding
_HIGHEST = {
    "CMDS/s": MAX_IOPS,
    "DAVG": MAX_LATENCY * 1e3,
    "KAVG": MAX_LATENCY * 1e3,
    "GAVG": MAX_LATENCY * 1e3,
    "QAVG": MAX_LATENCY * 1e3,
    "ACTV": float(MAX_OUTSTANDING),
    "QUED": float(MAX_OUTSTANDING),
    "DQLEN": float(MAX_OUTSTANDING),
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
    matched = [(c, m) for c, cell in enumerate(header[1:], 1) if (m := _COLUMN.match(cell.strip())) and m.group("counter") in COUNTERS]
    # one host's capture names devices as esxtop does; pathsel top -b of a cluster writes each host's as \\HOST\...
    several_hosts = len({m.group("host") for _, m in matched}) > 1
    device_names = {m.group("instance") for _, m in matched if m.group("object").strip() == _DEVICE_OBJECT}
    name_lengths = {len(d) for d in device_names}
    for c, m in matched:
        obj, inst, counter = m.group("object").strip(), m.group("instance"), COUNTERS[m.group("counter")]
        host = m.group("host") + "/" if several_hosts else ""
        if obj == _DEVICE_OBJECT:
            key = ("device", host + inst, counter)
        elif "Path" in obj and (rt := _RUNTIME.search(inst)):
            dev = inst[: rt.start()].rstrip("-: ")
            key = ("path", (host + dev + "|" if dev else "") + rt.group(0), counter)
        elif "Path" in obj and (dev := _device_prefix(inst, device_names, name_lengths)):
            # a path whose name is not an ESXi runtime name (nvme0c0n1, sdb): after its device and a dash
            key = ("path", host + dev + "|" + inst[len(dev) + 1 :], counter)
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
                # ASCII only: float() also reads other scripts' digits ('\u0663' as 3), which esxtop never writes
                if not text_value.isascii():
                    raise ValueError(text_value)
                out[i] = float(text_value) if text_value else math.nan  # perfmon's blank: no value in this sample
            except ValueError:
                raise MeasureError(source, f"line {row_lines[i]}", f"column {col + 1} ({header[col][-60:]}): {shown} is not a number") from None
            # float() reads "nan", "inf" and "1e400" (inf) too; 1e300 overflows the weighted means
            if text_value and not (math.isfinite(out[i]) and 0 <= out[i] <= high):
                raise MeasureError(
                    source, f"line {row_lines[i]}", f"column {col + 1} ({header[col][-60:]}): {shown} is not a number >= 0 and at most {high:g}"
                )
        return out

    span, unsure = _spans([cells[0] for cells in rows], row_lines)
    busy = {d: float(np.average(np.nan_to_num(series(columns[("device", d, "CMDS/s")])), weights=span)) for d in devices}
    if device is not None:
        if device not in busy:
            raise MeasureError(source, "line 1", f"no device {device!r} (devices: {', '.join(devices)})")
        chosen = device
    else:
        chosen = max(devices, key=lambda d: busy[d])
    notes = []
    if device is None and len(devices) > 1:
        notes.append(f"device {chosen} (the busiest of {len(devices)}: {', '.join(devices)})")
    if unsure:
        notes.append(unsure)
    figures, details = _figures(columns, "device", chosen, series, source, span)
    if not figures:
        raise MeasureError(source, "", f"device {chosen} completed no commands in the capture (Commands/sec is 0)")
    kavg_note = _kavg_note(details)
    if kavg_note:
        notes.append(kavg_note)
    paths = sorted({name for kind, name, counter in columns if kind == "path" and counter == "CMDS/s"})
    mine = [p for p in paths if "|" not in p or p.split("|", 1)[0] == chosen]
    for p in mine:
        path_figures, _ = _figures(columns, "path", p, series, source, span, path=p.split("|", 1)[-1])
        figures.extend(path_figures)
    return Measurement(source, "esxtop", tuple(figures), device=chosen, notes=tuple(notes), details={**details, "samples": len(rows)})


def _device_prefix(instance: str, devices: set[str], lengths: set[int]) -> str | None:
    """The longest device name that ``instance`` starts with, followed by a dash; None if there is none.

    A set lookup at each dash where a device name of that length could end: the work grows with the instance,
    not with the devices (trying each device in turn made a wide capture's reading grow with the square of its
    columns)."""
    for at in sorted((i for i, c in enumerate(instance) if c == "-" and i in lengths), reverse=True):
        if instance[:at] in devices:
            return instance[:at]
    return None


def _kavg_note(details: dict[str, float]) -> str:
    """A note when KAVG is over 10 % of GAVG: what the time in the VMkernel was, from the capture's QAVG and QUED.

    KAVG is all the time in the host: queued (QAVG; QUED > 0), which a scenario models with the host's queue_depth
    and sched_num_req_outstanding, and waiting for a path (retries after a lost path or QUEUE FULL, a failover),
    which it models with its faults and the array's queue, not a queue depth."""
    kavg, gavg = details.get("KAVG"), details.get("GAVG")
    if kavg is None or not gavg or kavg <= 0.1 * gavg:
        return ""
    qavg, qued = details.get("QAVG"), details.get("QUED")
    head = f"KAVG is {kavg / gavg:.0%} of GAVG"
    waits = "waits for a path (retries after a lost path or QUEUE FULL, a failover)"
    queue = (
        "I/Os queue in the VMkernel, for the device queue depth (DQLEN) or, while VMs compete, Disk.SchedNumReqOutstanding "
        "(DSNRO): give the scenario's host queue_depth and sched_num_req_outstanding (docs/scenario-reference.md) to model that queue"
    )
    if qavg is not None:  # esxtop's own split: the time queued, the rest of KAVG is not
        if qavg > 0.1 * gavg:
            rest = kavg - qavg
            more = f"; the rest of KAVG ({rest:.3f} ms) is the host's {waits}" if rest > 0.1 * gavg else ""
            return f"{head}, QAVG (the time queued) {qavg / gavg:.0%}: {queue}{more}"
        return (
            f"{head}, but QAVG (the time queued) is {qavg:.3f} ms: not a queue in the VMkernel but the host's {waits}, "
            "which a scenario gets from its faults and the array's queue, not from a host queue_depth"
        )
    if qued is not None and qued <= 0:
        return f"{head}, with nothing queued (QUED 0): not a queue in the VMkernel but the host's {waits}"
    if qued is not None:
        return f"{head}, with I/Os queued (QUED {qued:.1f} on average): {queue} (KAVG also counts the host's {waits})"
    return f"{head}: I/Os wait in the VMkernel, queued (the host's queue_depth and sched_num_req_outstanding) or {waits}"


def _spans(times: list[str], lines: list[int]) -> tuple[np.ndarray, str]:
    """The seconds each sample covers, from the samples' times (and a note when they cannot say: equal spans).

    A sample covers the time since the one before. The first's start is not in the file: esxtop's -d before it
    (the median gap between samples), or time 0 for ``pathsel top -b``, whose clock starts at the epoch
    (01/01/1970 00:00:00)."""
    equal = np.ones(len(times))
    at = []
    for text, line in zip(times, lines):
        text = text.strip()
        # strptime's digits are Unicode's (\u0661 reads as 1): esxtop writes ASCII, anything else is not its time
        for fmt in ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M:%S.%f") if text.isascii() else ():
            try:
                t = datetime.strptime(text, fmt).replace(tzinfo=UTC)
                break
            except ValueError:
                continue
        else:
            return equal, f"line {line}: the sample time {text[:40]!r} is not esxtop's MM/DD/YYYY HH:MM:SS: every sample weighs the same"
        # whole microseconds, exactly: a float of seconds since 1970 holds ~0.1 µs at best, so two samples a few
        # microseconds apart could come out equal (or the wrong way round)
        at.append((t - _EPOCH) // _MICROSECOND)
    gaps = [(b - a) / 1e6 for a, b in zip(at, at[1:])]
    if any(g <= 0 for g in gaps):
        line = lines[next(i for i, g in enumerate(gaps) if g <= 0) + 1]
        return equal, f"line {line}: the sample times do not increase: every sample weighs the same"
    if 0 < at[0] < _DAY * 1e6:  # pathsel top -b: from time 0
        first = at[0] / 1e6
    elif gaps:  # esxtop's -d; also a first sample at or before 01/01/1970 00:00:00, which no time 0 precedes
        first = float(np.median(gaps))
    else:
        return equal, ""
    return np.array([first, *gaps]), ""


def _mean(values: np.ndarray, weights: np.ndarray) -> float:
    """The weighted mean (weights > 0), kept within the values' range: rounding may carry it a last bit past the
    largest (1e9 IOPS every sample, then one ulp over the limit)."""
    return float(np.clip(np.average(values, weights=weights), values.min(), values.max()))


def _figures(
    columns: dict[tuple[str, str, str], int],
    kind: str,
    name: str,
    series: Callable[[int], np.ndarray],
    source: str,
    span: np.ndarray,
    path: str | None = None,
) -> tuple[list[Figure], dict[str, float]]:
    cmds = np.nan_to_num(series(columns[(kind, name, "CMDS/s")]))
    details: dict[str, float] = {}
    for counter in ("DAVG", "KAVG", "GAVG", "QAVG", "ACTV", "QUED", "DQLEN"):
        col = columns.get((kind, name, counter))
        if col is not None:
            values = series(col)
            seen = np.isfinite(values)  # a blank sample (no completion, before the measured window) weighs nothing
            if not seen.any():
                continue
            weights = (cmds * span)[seen]  # the commands each sample completed
            if counter.endswith("AVG"):
                if weights.sum() > 0:
                    details[counter] = _mean(values[seen], weights)
                else:
                    details[counter] = _mean(values[seen], np.ones(int(seen.sum())))
            else:  # a count now (ACTV, QUED, DQLEN): its mean over time, each sample weighed by the time it covers
                details[counter] = _mean(values[seen], span[seen])
    figures: list[Figure] = []
    iops = _mean(cmds, span)  # the commands over the time they took: a short sample counts less
    if iops <= 0:
        return figures, details
    stderr = float(cmds.std(ddof=1) / math.sqrt(len(cmds))) if len(cmds) > 1 else None
    figures.append(figure(source, "iops", iops, stderr or None, path=path, where="Commands/sec", place=""))
    latency = details.get("DAVG") if path is not None else details.get("GAVG", details.get("DAVG"))
    if latency and latency * 1e-3 > 0:  # a latency that is 0 in seconds (5e-324 ms) is none, as 0 ms is
        what = "DAVG" if path is not None or "GAVG" not in details else "GAVG"
        figures.append(figure(source, "mean", latency * 1e-3, path=path, where=what, place=""))
    return figures, details
