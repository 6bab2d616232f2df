"""``pathsel top``'s views: a :class:`Snapshot` as esxtop's screens show it (devices, adapters, paths, hosts,
VMs), a header and a table, drawn as plain text (``--text``) or for the live screen (rich).
"""

from __future__ import annotations

import math
from typing import Any

from ..model import Model
from .snapshot import Row, Snapshot, ms_unit

__all__ = ["VIEWS", "DONE_HELP", "header", "view_rows", "text_view", "off_path_note", "rich_view"]

# esxtop's keys where a screen matches (u disk devices, d disk adapters, v VM disks); esxtop has no path or
# multi-host screen (its p is power management, not modelled): p and h are pathsel's own
VIEWS = {"u": "devices", "d": "adapters", "p": "paths", "h": "hosts", "v": "vms"}
_KEYS_HELP = "u devices  d adapters  p paths  h hosts  v VMs  space pause  + faster  - slower  q quit"
DONE_HELP = "run finished: u devices  d adapters  p paths  h hosts  v VMs  any other key quits"


def header(label: str, snap: Snapshot, model: Model, speed: float | None, paused: bool) -> list[str]:
    ramp = " (ramp)" if 0 < snap.now <= model.ramp else ""
    kavg = snap.gavg_s - snap.davg_s if math.isfinite(snap.gavg_s) and math.isfinite(snap.davg_s) else math.nan
    pace = "as fast as it runs" if speed is None else f"speed {speed:g}x"
    return [
        f"pathsel top - {model.name} - {label}",
        f"{snap.now:8.2f} s of {model.end:g} s{ramp}   {pace}{'   PAUSED' if paused else ''}",
        f"CMDS/s {snap.cmds:,.0f}   MiB/s {snap.mbps:,.1f}   GAVG/cmd {ms_unit(snap.gavg_s)}   "
        f"DAVG/cmd {ms_unit(snap.davg_s)}   KAVG/cmd {ms_unit(kavg)}   ACTV {snap.actv}   QUED {snap.qued}   "
        f"retried {snap.retried:,}   failed {snap.failed:,}",
    ]


def view_rows(snap: Snapshot, view: str) -> tuple[str, list[Row]]:
    return {
        "devices": ("DEVICE", snap.devices),
        "adapters": ("ADAPTR", snap.adapters),
        "paths": ("PATH", snap.paths),
        "hosts": ("HOST", snap.hosts),
        "vms": ("VMNAME", snap.vms),
    }[view]


def text_view(label: str, snap: Snapshot, model: Model, view: str, speed: float | None = None) -> str:
    """One refresh as plain text (``--text``): the header lines, then the view's table, then its notes."""
    first, rows = view_rows(snap, view)
    cols = [first, *rows[0].cells] if rows else [first]
    table = [cols] + [[r.name, *r.cells.values()] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
    lines = header(label, snap, model, speed, False) + [""]
    for k, row in enumerate(table):
        lines.append(
            "  ".join(v.ljust(w) if i == 0 or cols[i] in ("ARRAY", "STATE") else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths))).rstrip()
        )
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    notes = [n for n in (off_path_note(snap), snap.stalls) if n]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def off_path_note(snap: Snapshot) -> str:
    """Why the devices' ACTV is more than their paths' (host queues only): the I/Os active on no path, said once."""
    if snap.off_path <= 0:
        return ""
    return (
        f"ACTV counts {snap.off_path:,} I/O{'s' if snap.off_path > 1 else ''} on no path now: answered QUEUE FULL and waiting out "
        "the host's qfull_retry_delay (keeping their place in the device queue), or waiting for a path or its queue; "
        "a device's DAVG/cmd runs from its issue to completion, those waits included, a path's is each attempt on it"
    )


def rich_view(label: str, snap: Snapshot, model: Model, view: str, speed: float | None, paused: bool, note: str = _KEYS_HELP) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    first, rows = view_rows(snap, view)
    table = Table(expand=False, header_style="bold reverse", box=None, pad_edge=False)
    table.add_column(first, no_wrap=True)
    for c in rows[0].cells if rows else {}:
        table.add_column(c, justify="left" if c in ("ARRAY", "STATE") else "right", no_wrap=True)
    for r in rows:
        dead = r.cells.get("STATE", "").startswith("DEAD")
        table.add_row(r.name, *r.cells.values(), style="red" if dead else None)
    head = header(label, snap, model, speed, paused)
    why = off_path_note(snap)
    return Group(
        Text(head[0], style="bold"),
        Text(head[1] + f"   view: {view}"),
        Text(head[2]),
        Text(""),
        table,
        Text(""),
        *([Text(why)] if why else []),
        *([Text(snap.stalls, style="red")] if snap.stalls else []),
        Text(note, style="dim"),
    )
