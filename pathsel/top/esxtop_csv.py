"""``pathsel top -b``: esxtop's batch output, Windows perfmon's CSV ("PDH-CSV 4.0"), from :class:`pathsel.top.Snapshot`.

``esxtop -b`` writes a header line whose first cell is ``(PDH-CSV 4.0) (UTC)(0)``
and whose other cells name one counter each as ``\\\\HOST\\OBJECT(INSTANCE)\\COUNTER``,
then one line per sample: its time first (``MM/DD/YYYY HH:MM:SS``), then the
counters' values, every cell quoted (VMware, "Interpreting esxtop Statistics",
section 4.3 "Batch Mode Output" and section 7 "Batch Mode", 2010,
https://communities.vmware.com/docs/DOC-11812 ; Microsoft, the PDH-CSV
counter log format, ``\\\\Computer\\Object(Instance)\\Counter``). The disk
objects and counters are esxtop's own:

* ``Physical Disk SCSI Device(<device>)``: ``Device Q Depth``, ``Active Commands``,
  ``Queued Commands``, ``% Used``, ``Load``, ``Commands/sec``, ``Reads/sec``,
  ``Writes/sec``, ``MBytes Read/sec``, ``MBytes Written/sec``, ``Average Driver
  MilliSec/Command`` (DAVG), ``Average Kernel MilliSec/Command`` (KAVG),
  ``Average Guest MilliSec/Command`` (GAVG), ``Average Queue MilliSec/Command`` (QAVG);
* ``Physical Disk Adapter(<vmhbaN>)``: ``Commands/sec``, ``Average Driver MilliSec/Command``,
  ``Active Commands``;
* ``Physical Disk Path(<device>-<path>)``: ``Commands/sec``, ``Average Driver MilliSec/Command``,
  ``Active Commands`` (the object's name is pathsel's assumption, as the esxtop importer's).

The sample's time is the simulated clock from the Unix epoch, in UTC
(``01/01/1970 00:00:02`` is 2 s into the run), in esxtop's format
(``05/15/2017 06:49:37`` in public esxtop samples) when every sample falls on
a whole second (-d whole and the run's end too); otherwise with as many
decimals of a second as the samples need to be told apart, the same on every
line (``00:00:02.5`` with ``-d 0.5``; microseconds at most: -d is 1 µs or
more), a pathsel extension pandas and perfmon's readers take. A counter the model has no quantity for in a scenario (a device
queue depth without host queues) is left out; a value with nothing behind it
in a sample (a latency before the measured window or with no completion) is a
blank cell, as perfmon writes one. Device instances are the scenario's volumes
(the implicit one is ``volume``), host names the ``\\\\HOST`` part.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from ..model import Model


# What this module reads of pathsel.top's objects (Protocols, so that top imports this module and not the reverse)
class Row(Protocol):
    values: dict[str, float]


class Snapshot(Protocol):
    now: float


class Top(Protocol):
    model: Model
    queues: bool
    adapters: dict[tuple[int, str], list[int]]


__all__ = ["PerfmonCsv", "HEADER_FIRST", "DEVICE_COUNTERS"]

HEADER_FIRST = "(PDH-CSV 4.0) (UTC)(0)"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# esxtop's counter name -> the snapshot's value (Row.values) and a scale (latencies: seconds -> ms)
DEVICE_COUNTERS: dict[str, tuple[str, float]] = {
    "Device Q Depth": ("DQLEN", 1.0),
    "Active Commands": ("ACTV", 1.0),
    "Queued Commands": ("QUED", 1.0),
    "% Used": ("%USD", 1.0),
    "Load": ("LOAD", 1.0),
    "Commands/sec": ("CMDS/s", 1.0),
    "Reads/sec": ("READS/s", 1.0),
    "Writes/sec": ("WRITES/s", 1.0),
    "MBytes Read/sec": ("MBREAD/s", 1.0),
    "MBytes Written/sec": ("MBWRTN/s", 1.0),
    "Average Driver MilliSec/Command": ("DAVG/cmd", 1e3),
    "Average Kernel MilliSec/Command": ("KAVG/cmd", 1e3),
    "Average Guest MilliSec/Command": ("GAVG/cmd", 1e3),
    "Average Queue MilliSec/Command": ("QAVG/cmd", 1e3),
}
_QUEUE_ONLY = {"Device Q Depth", "% Used", "Load"}  # a device queue depth (DQLEN) behind them
_PATH_COUNTERS: dict[str, tuple[str, float]] = {
    "Commands/sec": ("CMDS/s", 1.0),
    "Average Driver MilliSec/Command": ("DAVG/cmd", 1e3),
    "Active Commands": ("ACTV", 1.0),
}


def _value(x: float) -> str:
    return f"{x:.3f}" if math.isfinite(x) else " "


def decimals(*seconds: float) -> int:
    """The fewest decimals (0 to 6) that write each of these times exactly: 0 when they are whole seconds.

    Exactly within a float's rounding (a relative 1e-9): an absolute slack would take 1 µs for a whole second."""
    for d in range(7):
        if all(abs(x * 10**d - round(x * 10**d)) <= 1e-9 * max(1.0, abs(x * 10**d)) for x in seconds):
            return d
    return 6


def timestamp(now: float, places: int = 0) -> str:
    """Simulated seconds as esxtop's sample time (``MM/DD/YYYY HH:MM:SS``) from the Unix epoch in UTC, with
    ``places`` decimals of a second after it (0: esxtop's own format)."""
    t = _EPOCH + timedelta(microseconds=round(now * 1e6))
    text = t.strftime("%m/%d/%Y %H:%M:%S")
    return text + "." + f"{t.microsecond:06d}"[:places] if places else text


class PerfmonCsv:
    """The header for a run's model, then one line per :class:`Snapshot` (``pathsel top -b``)."""

    def __init__(self, top: Top, step: float = 1.0) -> None:
        model = top.model
        # samples at every step and at the run's end: esxtop's whole seconds when they fall on whole seconds, else
        # as many decimals as they need, never rounded onto each other
        self.places = decimals(step, model.end)
        self.columns: list[tuple[str, Callable[[Snapshot], float]]] = []
        queues = top.queues

        def pick(kind: str, i: int, key: str, scale: float) -> Callable[[Snapshot], float]:
            def get(snap: Snapshot) -> float:
                rows: list[Row] = getattr(snap, kind)
                return rows[i].values.get(key, math.nan) * scale

            return get

        for i, d in enumerate(model.devices):
            host = model.hosts[d.host]
            for counter, (key, scale) in DEVICE_COUNTERS.items():
                if counter in _QUEUE_ONLY and not queues:
                    continue
                self.columns.append((f"\\\\{host}\\Physical Disk SCSI Device({d.volume})\\{counter}", pick("devices", i, key, scale)))
        for i, ((h, name), _) in enumerate(top.adapters.items()):
            host = model.hosts[h]  # each host's own vmhbaN, under \\HOST as esxtop on that host writes it
            for counter, (key, scale) in _PATH_COUNTERS.items():
                self.columns.append((f"\\\\{host}\\Physical Disk Adapter({name})\\{counter}", pick("adapters", i, key, scale)))
        for i, p in enumerate(model.paths):
            d = model.devices[p.device]
            instance = f"{d.volume}-{p.name}"  # as esxtop's per-path instances: the device, then the runtime name
            for counter, (key, scale) in _PATH_COUNTERS.items():
                self.columns.append((f"\\\\{model.hosts[p.host]}\\Physical Disk Path({instance})\\{counter}", pick("paths", i, key, scale)))

    @staticmethod
    def _line(cells: list[str]) -> str:
        buf = io.StringIO()
        csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(cells)
        return buf.getvalue()

    def header(self) -> str:
        return self._line([HEADER_FIRST, *(name for name, _ in self.columns)])

    def row(self, snap: Snapshot) -> str:
        return self._line([timestamp(snap.now, self.places), *(_value(get(snap)) for _, get in self.columns)])
