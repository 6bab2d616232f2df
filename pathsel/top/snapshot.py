"""What one refresh of ``pathsel top`` shows (:class:`Snapshot`, its tables' :class:`Row` objects) and how its
figures are written in the cells (``-`` where the model has no such quantity).

:class:`pathsel.top.counters.Top` fills them from the engines' record; the
views (:mod:`pathsel.top.views`) and the batch CSV (:mod:`pathsel.top.esxtop_csv`)
read them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["Row", "Snapshot", "MIB", "num", "ms", "ms_unit"]


@dataclass
class Row:
    name: str
    cells: dict[str, str]
    values: dict[str, float] = field(default_factory=dict)  # the figures behind the cells (nan: none), for -b's CSV


@dataclass
class Snapshot:
    """What one refresh shows: rates over the last ``step`` simulated seconds, and the state now."""

    now: float
    step: float
    cmds: float  # I/Os completed per second, overall
    mbps: float
    gavg_s: float  # application latency over the step (nan: nothing completed)
    davg_s: float  # time on the paths over the step (nan: before the window or nothing completed)
    actv: int
    qued: int
    failed: int
    retried: int
    # with host queues: the I/Os the devices count active (ACTV) that are on no path now: pushed back by QUEUE FULL
    # and waiting out the retry delay (they keep their place in the device queue), or waiting for a path or its queue
    off_path: int = 0
    hosts: list[Row] = field(default_factory=list)
    devices: list[Row] = field(default_factory=list)
    paths: list[Row] = field(default_factory=list)
    vms: list[Row] = field(default_factory=list)  # per workload (a VM or fio job): esxtop's VM disk view
    adapters: list[Row] = field(default_factory=list)  # per adapter (vmhbaN, hostH, nvmeY of the paths' runtime names, else the host)
    stalls: str = ""  # the VMs the faults so far froze (stall_note), as the story and faults[] count them


MIB = float(1 << 20)  # esxtop's MB (MBREAD/s, "MBytes Read/sec") are 2^20 bytes, as its memory screens' MB


def num(x: float, fmt: str) -> str:
    """``x`` formatted, or ``-`` where the model has no such quantity (nan)."""
    return fmt.format(x) if math.isfinite(x) else "-"


def ms(seconds: float) -> str:
    return "-" if not math.isfinite(seconds) else f"{abs(seconds) * 1e3 if abs(seconds) < 5e-6 else seconds * 1e3:.2f}"


def ms_unit(seconds: float) -> str:
    """Milliseconds with their unit, or a bare ``-`` (no figure, no unit)."""
    text = ms(seconds)
    return text if text == "-" else f"{text} ms"
