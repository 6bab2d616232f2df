"""``pathsel top``: a live, esxtop-style view of one policy's run, in simulated time scaled to the wall clock.

The engine calls back every refresh (``live_step`` simulated seconds, see
:class:`pathsel.engine.recorder.Live`); each call turns the record's
counters into rates over the last refresh and draws them, then waits until
the wall clock catches up with ``simulated time / speed``. Keys, as in
esxtop: ``d`` devices, ``p`` paths, ``h`` hosts, ``v`` VMs (workloads), space pauses, ``+``/``-``
double or halve the speed, ``q`` quits.

Columns, in esxtop's words where the model has the quantity:

* ``CMDS/s``: I/Os completed per second over the last refresh.
* ``DAVG/cmd``: mean time on the path (the device's and fabric's share),
  ms; measured from the end of the ramp (the record keeps per-path latency
  for the measured window only: ``-`` before).
* ``GAVG/cmd`` (overall only): mean latency as the application sees it,
  retries and waits for a path included; ``KAVG/cmd`` = GAVG - DAVG, the
  time an I/O spent in the host without a path.
* ``ACTV`` and ``QUED``: with a device queue depth (``DQLEN``) or an
  open-loop workload, the I/Os active on the device and waiting in the
  host's queue, and ``KAVG/cmd``, ``DAVG/cmd`` per device from the engines'
  own split; otherwise ``ACTV`` is the I/Os on the paths now and ``QUED``
  those the workloads keep outstanding on no path (waiting for one, or for a
  retry).
* ``%SHR``: the path's share of its device's I/Os over the last refresh.
* ``STATE``: what the wire is doing (a fault takes effect at once; the host
  notices after its detection delay), then the ALUA state.
* The VM view (``v``), one row per workload (a VM or fio job, its numjobs
  copies together), as esxtop's VM disk view: ``READS/s``, ``WRITES/s``,
  ``MBREAD/s``, ``MBWRTN/s`` over the last refresh; ``LAT/rd``, ``LAT/wr``
  and ``GAVG/cmd`` the mean latency as the VM sees it (issue to completion),
  ``KAVG/cmd`` its part queued in the host (measured from the end of the
  ramp: ``-`` before); ``ACTV`` and ``QUED`` its I/Os active on the device
  and waiting in the host now (without host queues: its job slots, and 0).

``--batch`` prints one plain-text snapshot per refresh, as ``esxtop -b``
does, without waiting on the wall clock unless ``--speed`` is given: one at
every refresh before the end of the run, then a final one at its end (rates
over what is left of the last refresh), so ``ceil(end / refresh)`` in all
and one for a run shorter than a refresh.
"""

from __future__ import annotations

import math
import os
import select
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO, TypedDict

import numpy as np

from .engine import run_fast, run_reference, supports
from .engine.recorder import (
    C_FAILED,
    C_RETRIED,
    H_PATH0,
    S_N,
    S_TOTAL,
    W_BYTES_ALL,
    W_KAVG,
    W_N,
    W_N_ALL,
    W_TOTAL,
    WQ_ACTV,
    WQ_QUED,
    Live,
    vm_slots,
)
from .model import Model, compile_model
from .scenario import RunSpec, Scenario

__all__ = ["Top", "Snapshot", "run_top", "VIEWS", "pick_run", "SPEED_MIN", "SPEED_MAX"]

VIEWS = {"d": "devices", "p": "paths", "h": "hosts", "v": "vms"}
# --speed's range (simulated seconds per wall second), which + and - stay within: below a microsecond a second a
# refresh would wait for weeks; above 1e6 no run lasts a refresh of the wall clock anyway
SPEED_MIN, SPEED_MAX = 1e-6, 1e6
_NAP = 0.5  # the longest single sleep while pacing: time.sleep refuses a wait past time_t, and Ctrl-C stays prompt
_KEYS_HELP = "d devices  p paths  h hosts  v VMs  space pause  + faster  - slower  q quit"
_DONE_HELP = "run finished: d devices  p paths  h hosts  v VMs  any other key quits"


class Quit(Exception):
    """The user pressed q: stop the run."""


@dataclass
class Row:
    name: str
    cells: dict[str, str]


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
    hosts: list[Row] = field(default_factory=list)
    devices: list[Row] = field(default_factory=list)
    paths: list[Row] = field(default_factory=list)
    vms: list[Row] = field(default_factory=list)  # per workload (a VM or fio job): esxtop's VM disk view


def _ms(seconds: float) -> str:
    return "-" if not math.isfinite(seconds) else f"{abs(seconds) * 1e3 if abs(seconds) < 5e-6 else seconds * 1e3:.2f}"


def pick_run(scenario: Scenario, policy: str | None) -> RunSpec:
    """The run ``policy`` names among the scenario's (a label or spec), a new one from a spec, or the first."""
    if policy is None:
        return scenario.runs[0]
    for r in scenario.runs:
        if policy == r.label or policy == getattr(r.policy, "text", None):
            return r
    return scenario.with_policies([policy]).runs[0]


class Top:
    """Turns :class:`Live` callbacks into :class:`Snapshot` objects (rates since the previous one)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.t = 0.0
        n = len(model.paths)
        self.path_ios = np.zeros(n, dtype=np.int64)
        self.path_n = np.zeros(n, dtype=np.int64)
        self.path_total = np.zeros(n)
        self.ios = 0
        self.lat_sum = 0.0
        self.bytes = 0
        # what each device's workloads keep outstanding (a closed loop: iodepth x numjobs)
        D = max(len(model.devices), 1)
        self.depth = np.zeros(D, dtype=np.int64)
        for j in model.jobs:
            self.depth[j.device] += j.iodepth
        # with a device queue depth or an open-loop job, the record keeps esxtop's ACTV, QUED, KAVG and DAVG
        # per device as I/Os go; otherwise ACTV is what is on the paths, QUED what waits for a path
        self.queues = bool(model.host_queues)
        self.dev_n = np.zeros(D, dtype=np.int64)
        self.dev_k = np.zeros(D)
        self.dev_d = np.zeros(D)
        # per workload and op (rows vm * 2 + op of the record's wl_stat): the counters at the previous refresh
        self.wl: np.ndarray | None = None
        self.vm_slots = vm_slots(model.jobs)

    def wire_state(self, now: float) -> list[str]:
        """Each path's state on the wire at ``now``: the scenario's faults up to then, applied in order."""
        model = self.model
        alua = [p.alua for p in model.paths]
        up = [True] * len(model.paths)
        by_controller: dict[int, list[int]] = {}
        for p in model.paths:
            by_controller.setdefault(p.controller, []).append(p.index)
        for f in model.faults:
            if f.at >= now:  # the engines call back before any event of the instant
                break
            hit = [i for c in f.controllers for i in by_controller.get(c, ())]
            for i, s in zip(f.paths, f.states):  # alua by volume or port group, owner (issue 32)
                alua[i] = s
            if f.what in ("path_down", "array_down"):
                for i in hit:
                    up[i] = False
            elif f.what in ("path_up", "array_up"):
                for i in hit:
                    up[i] = True
            elif f.what == "alua" and f.state:
                for i in hit:
                    alua[i] = f.state
        return [a if u else f"DEAD ({a})" for a, u in zip(alua, up)]

    def snapshot(self, live: Live) -> Snapshot:
        R, model = live.record, self.model
        step = max(live.now - self.t, 1e-12)
        path_ios = R.ts_path_ios.sum(axis=1)
        path_n = R.h_stat[H_PATH0:, S_N].astype(np.int64)
        path_total = R.h_stat[H_PATH0:, S_TOTAL].copy()
        ios, lat_sum, nbytes = int(R.ts_ios.sum()), float(R.ts_lat_sum.sum()), int(R.ts_bytes.sum())
        d_ios = path_ios - self.path_ios
        d_n = path_n - self.path_n
        d_total = path_total - self.path_total
        out = np.asarray(live.out)
        states = self.wire_state(live.now)

        def davg(idx: list[int]) -> float:
            n = int(d_n[idx].sum())
            return float(d_total[idx].sum()) / n if n else math.nan

        dev_n, dev_k, dev_d = R.dev_n.copy(), R.dev_kavg.copy(), R.dev_davg.copy()
        dn, dk, dd = dev_n - self.dev_n, dev_k - self.dev_k, dev_d - self.dev_d

        def split(devs: list[int]) -> tuple[float, float]:
            """(KAVG, DAVG) over the step of these devices' completions, from the record's per-device sums."""
            n = int(dn[devs].sum())
            return (float(dk[devs].sum()) / n, float(dd[devs].sum()) / n) if n else (math.nan, math.nan)

        def cells(idx: list[int], devs: list[int]) -> dict[str, str]:
            c = {"CMDS/s": f"{d_ios[idx].sum() / step:,.0f}"}
            if self.queues:
                k, dv = split(devs)
                actv = int(sum(int(R.dev_actv[d]) for d in devs))
                qued = int(sum(int(R.dev_qued[d]) for d in devs))
                queue_depth = {int(R.dev_queue_depth[d]) for d in devs}  # now: ESXi's throttling moves it
                c.update(
                    {
                        "DAVG/cmd": _ms(dv),
                        "KAVG/cmd": _ms(k),
                        "ACTV": f"{actv}",
                        "QUED": f"{qued}",
                        "DQLEN": str(queue_depth.pop() or "-") if len(queue_depth) == 1 else "mixed",
                    }
                )
            else:
                actv = int(out[idx].sum())
                c.update({"DAVG/cmd": _ms(davg(idx)), "ACTV": f"{actv}", "QUED": f"{max(0, int(sum(self.depth[d] for d in devs)) - actv)}"})
            c["PATHS"] = f"{sum(1 for i in idx if d_ios[i] > 0)}/{len(idx)}"
            return c

        all_paths = list(range(len(model.paths)))
        all_devices = [d.index for d in model.devices]
        devices = [Row(d.name, cells(list(d.paths), [d.index])) for d in model.devices]
        hosts = []
        for h, name in enumerate(model.hosts):
            idx = [p.index for p in model.paths if p.host == h]
            hosts.append(Row(name, cells(idx, [d.index for d in model.devices if d.host == h])))
        paths = []
        several = len(model.devices) > 1
        for p in model.paths:
            dev = model.devices[p.device]
            dev_ios = int(d_ios[list(dev.paths)].sum())
            paths.append(
                Row(
                    f"{dev.name} {p.name}" if several else p.name,
                    {
                        "ARRAY": model.arrays[p.array].name,
                        "STATE": states[p.index],
                        "CMDS/s": f"{d_ios[p.index] / step:,.0f}",
                        "%SHR": f"{100.0 * d_ios[p.index] / dev_ios:.1f}" if dev_ios else "0.0",
                        "DAVG/cmd": _ms(davg([p.index])),
                        "ACTV": f"{int(out[p.index])}",
                    },
                )
            )
        d_all = ios - self.ios
        if self.queues:
            actv_all, qued_all = int(R.dev_actv.sum()), int(R.dev_qued.sum())
            davg_all = split(all_devices)[1]
        else:
            actv_all, qued_all = int(out.sum()), max(0, int(self.depth.sum()) - int(out.sum()))
            davg_all = davg(all_paths)
        snap = Snapshot(
            now=live.now,
            step=step,
            cmds=d_all / step,
            mbps=(nbytes - self.bytes) / step / 1e6,
            gavg_s=(lat_sum - self.lat_sum) / d_all if d_all else math.nan,
            davg_s=davg_all,
            actv=actv_all,
            qued=qued_all,
            failed=int(R.rc[C_FAILED]),
            retried=int(R.rc[C_RETRIED]),
            hosts=hosts,
            devices=devices,
            paths=paths,
        )
        self.t, self.path_ios, self.path_n, self.path_total = live.now, path_ios, path_n, path_total
        self.ios, self.lat_sum, self.bytes = ios, lat_sum, nbytes
        self.dev_n, self.dev_k, self.dev_d = dev_n, dev_k, dev_d
        snap.vms = self.vm_rows(R, step)
        return snap

    def vm_rows(self, R: Any, step: float) -> list[Row]:
        """esxtop's VM disk view: one row per workload, rates and means over the step from the record's counters."""
        cols = [W_N_ALL, W_BYTES_ALL, W_N, W_TOTAL, W_KAVG]
        now = R.wl_stat[:, cols].copy()
        before = self.wl if self.wl is not None and self.wl.shape == now.shape else np.zeros_like(now)
        d = now - before
        self.wl = now
        model, rows = self.model, []
        names = list(model.workloads) or [j.workload for j in model.jobs[:1]]
        for v in range(min(len(names), R.wl_q.shape[0])):
            rd, wr = d[2 * v], d[2 * v + 1]
            n = rd[2] + wr[2]

            def lat(x: np.ndarray) -> str:
                return _ms(x[3] / x[2]) if x[2] else "-"

            if self.queues:
                actv, qued = int(R.wl_q[v, WQ_ACTV]), int(R.wl_q[v, WQ_QUED])
            else:  # no host queue: its slots are always outstanding
                actv, qued = (self.vm_slots[v] if v < len(self.vm_slots) else 0), 0
            rows.append(
                Row(
                    names[v],
                    {
                        "CMDS/s": f"{(rd[0] + wr[0]) / step:,.0f}",
                        "READS/s": f"{rd[0] / step:,.0f}",
                        "WRITES/s": f"{wr[0] / step:,.0f}",
                        "MBREAD/s": f"{rd[1] / step / 1e6:,.1f}",
                        "MBWRTN/s": f"{wr[1] / step / 1e6:,.1f}",
                        "LAT/rd": lat(rd),
                        "LAT/wr": lat(wr),
                        "GAVG/cmd": _ms((rd[3] + wr[3]) / n) if n else "-",
                        "KAVG/cmd": _ms((rd[4] + wr[4]) / n) if n else "-",
                        "ACTV": f"{actv}",
                        "QUED": f"{qued}",
                    },
                )
            )
        return rows


def _header(label: str, snap: Snapshot, model: Model, speed: float | None, paused: bool) -> list[str]:
    ramp = " (ramp)" if snap.now <= model.ramp else ""
    kavg = snap.gavg_s - snap.davg_s if math.isfinite(snap.gavg_s) and math.isfinite(snap.davg_s) else math.nan
    pace = "as fast as it runs" if speed is None else f"speed {speed:g}x"
    return [
        f"pathsel top - {model.name} - {label}",
        f"{snap.now:8.2f} s of {model.end:g} s{ramp}   {pace}{'   PAUSED' if paused else ''}",
        f"CMDS/s {snap.cmds:,.0f}   MB/s {snap.mbps:,.1f}   GAVG/cmd {_ms(snap.gavg_s)} ms   "
        f"DAVG/cmd {_ms(snap.davg_s)} ms   KAVG/cmd {_ms(kavg)} ms   ACTV {snap.actv}   QUED {snap.qued}   "
        f"retried {snap.retried:,}   failed {snap.failed:,}",
    ]


def _rows(snap: Snapshot, view: str) -> tuple[str, list[Row]]:
    return {"devices": ("DEVICE", snap.devices), "paths": ("PATH", snap.paths), "hosts": ("HOST", snap.hosts), "vms": ("VMNAME", snap.vms)}[view]


def text_view(label: str, snap: Snapshot, model: Model, view: str, speed: float | None = None) -> str:
    """One refresh as plain text (``--batch``): the header lines, then the view's table."""
    first, rows = _rows(snap, view)
    cols = [first, *rows[0].cells] if rows else [first]
    table = [cols] + [[r.name, *r.cells.values()] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
    lines = _header(label, snap, model, speed, False) + [""]
    for k, row in enumerate(table):
        lines.append(
            "  ".join(v.ljust(w) if i == 0 or cols[i] in ("ARRAY", "STATE") else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths))).rstrip()
        )
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def _rich_view(label: str, snap: Snapshot, model: Model, view: str, speed: float | None, paused: bool, note: str = _KEYS_HELP) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    first, rows = _rows(snap, view)
    table = Table(expand=False, header_style="bold reverse", box=None, pad_edge=False)
    table.add_column(first, no_wrap=True)
    for c in rows[0].cells if rows else {}:
        table.add_column(c, justify="left" if c in ("ARRAY", "STATE") else "right", no_wrap=True)
    for r in rows:
        dead = r.cells.get("STATE", "").startswith("DEAD")
        table.add_row(r.name, *r.cells.values(), style="red" if dead else None)
    head = _header(label, snap, model, speed, paused)
    return Group(Text(head[0], style="bold"), Text(head[1] + f"   view: {view}"), Text(head[2]), Text(""), table, Text(""), Text(note, style="dim"))


class _Keys:
    """Single keys from a terminal, without echo or Enter (cbreak mode); nothing when stdin is not a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.fd = stream.fileno() if stream.isatty() else None
        self.saved: Any = None

    def __enter__(self) -> _Keys:
        if self.fd is not None:
            import termios
            import tty

            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.fd is not None and self.saved is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def read(self, timeout: float) -> str | None:
        """A key pressed within ``timeout`` seconds (waits that long at most; returns at once on a key)."""
        if self.fd is None:
            if timeout > 0:
                time.sleep(timeout)
            return None
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0.0))
        if not ready:
            return None
        return os.read(self.fd, 1).decode(errors="replace")


class _State(TypedDict):
    """run_top's view state, which the key handler changes."""

    view: str
    speed: float | None
    paused: bool
    wall: float  # the wall clock and simulated time pacing counts from
    sim: float


def run_top(
    scenario: Scenario,
    run: RunSpec,
    *,
    speed: float | None = 1.0,
    refresh: float = 1.0,
    view: str = "devices",
    batch: bool = False,
    duration: float | None = None,
    seed: int | None = None,
    out: TextIO | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Run ``run`` of ``scenario`` with a live view; return the exit status.

    ``refresh`` is in wall seconds at ``speed`` (simulated seconds per wall
    second); the view refreshes every ``refresh * speed`` simulated seconds
    (``refresh`` simulated seconds when ``speed`` is None: no pacing).
    """
    out = out or sys.stdout
    model = compile_model(scenario, run, duration=duration, seed=seed)
    engine = run_fast if supports(run.policy) else run_reference
    top = Top(model)
    state: _State = {"view": view, "speed": speed, "paused": False, "wall": clock(), "sim": 0.0}
    step = refresh * (speed if speed is not None else 1.0)
    # at least 100 refreshes' worth of a run would be a flood in batch mode; a floor keeps the engine busy between them
    step = max(step, model.end / 10_000)

    # A refresh before the end of the run, then a final one at its end. A run shorter than a refresh still needs
    # one callback, for the record the final snapshot reads: the engines call back at half the run, not shown.
    every = step < model.end
    engine_step = step if every else model.end / 2
    lives: list[Live] = []

    def final(live: Live) -> Live:
        """The run's end, once the engine has returned: the record is closed at ``model.end``."""
        return Live(model.end, live.record, live.out, live.out_bytes)

    if batch:
        started: list[bool] = []

        def show(live: Live) -> None:
            lives[:] = [live]
            if every:
                print_snapshot(live)

        def print_snapshot(live: Live) -> None:
            if not started:  # pace from the first view: compiling and starting up are not simulated time
                started.append(True)
                state["wall"], state["sim"] = clock(), live.now
            snap = top.snapshot(live)
            out.write(text_view(run.label, snap, model, state["view"], state["speed"]) + "\n")
            out.flush()
            pace(live.now)

        def pace(now: float) -> None:
            if state["speed"] is None:
                return
            while True:  # in naps: a wait of years (a tiny --speed) must not overflow time.sleep
                wait = state["wall"] + (now - state["sim"]) / state["speed"] - clock()
                if wait <= 0:
                    return
                time.sleep(min(wait, _NAP))

        engine(model, run.policy, live=show, live_step=engine_step)
        if lives:  # rates over what is left of the last refresh
            print_snapshot(final(lives[-1]))
        return 0

    from rich.console import Console
    from rich.live import Live as RichLive

    console = Console(file=out)
    with _Keys(sys.stdin) as keys, RichLive(console=console, screen=True, auto_refresh=False, vertical_overflow="crop") as screen:
        last: list[Snapshot] = []

        def draw() -> None:
            screen.update(_rich_view(run.label, last[-1], model, state["view"], state["speed"], state["paused"]), refresh=True)

        def handle(key: str | None) -> None:
            if key is None:
                return
            if key in ("q", "Q"):
                raise Quit
            if key in VIEWS:
                state["view"] = VIEWS[key]
            elif key == " ":
                state["paused"] = not state["paused"]
            elif key in ("+", "=") and state["speed"] is not None:
                state["speed"] = min(state["speed"] * 2, SPEED_MAX)
            elif key == "-" and state["speed"] is not None:
                state["speed"] = max(state["speed"] / 2, SPEED_MIN)
            state["wall"], state["sim"] = clock(), last[-1].now  # pace from here at the new speed
            draw()

        def show(live: Live) -> None:
            lives[:] = [live]
            if every:
                view_now(live)

        def view_now(live: Live) -> None:
            if not last:  # pace from the first view: compiling and starting up are not simulated time
                state["wall"], state["sim"] = clock(), live.now
            last.append(top.snapshot(live))
            del last[:-1]
            draw()
            while True:
                if state["paused"]:
                    handle(keys.read(0.1))
                    continue
                target = (state["wall"] + (live.now - state["sim"]) / state["speed"]) if state["speed"] else clock()
                wait = target - clock()
                if wait <= 0:
                    # a key pressed meanwhile still counts
                    handle(keys.read(0))
                    if not state["paused"]:
                        return
                    continue
                handle(keys.read(min(wait, 0.1)))

        try:
            engine(model, run.policy, live=show, live_step=engine_step)
            if lives:  # the end of the run, paced as a refresh
                view_now(final(lives[-1]))
        except Quit:
            return 0
        # the run is over: the last view stays until a key is pressed
        if last:
            state["paused"] = False
            screen.update(
                _rich_view(run.label, last[-1], model, state["view"], state["speed"], False, _DONE_HELP),
                refresh=True,
            )
        if keys.fd is not None:
            while True:
                key = keys.read(0.2)
                if key is None:
                    continue
                if key in VIEWS and last:
                    state["view"] = VIEWS[key]
                    screen.update(
                        _rich_view(
                            run.label,
                            last[-1],
                            model,
                            state["view"],
                            state["speed"],
                            False,
                            _DONE_HELP,
                        ),
                        refresh=True,
                    )
                    continue
                break
    return 0
