"""``pathsel top``: a live, esxtop-style view of one policy's run, in simulated time scaled to the wall clock.

The engine calls back every refresh (``live_step`` simulated seconds, see
:class:`pathsel.engine.recorder.readout.Live`); each call turns the record's
counters into rates over the last refresh and draws them, then waits until
the wall clock catches up with ``simulated time / speed``. Keys, as in
esxtop: ``u`` devices, ``d`` adapters (each host's own), ``v`` VMs (workloads); pathsel's own ``p`` paths and
``h`` hosts; space pauses, ``+``/``-`` double or halve the speed, ``q`` quits.

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
  retry); at time 0 nothing is issued yet, 0 and 0. I/Os sent down a path
  that died, before the host notices, are ``ACTV`` on the device and on its
  dead paths (:meth:`Top.stuck`: the engines keep how many per device, not
  per path; the split among several dead paths follows what each held at the
  last refresh before the cut), and stay so when the wire comes back before
  the host noticed, until the host next looks at its paths
  (:meth:`Top.unnoticed`). With host queues, an I/O answered QUEUE FULL
  keeps its place in the device queue while it waits out the host's
  ``qfull_retry_delay``: ``ACTV`` on the device, on no path (the device's
  ``ACTV`` is then more than its paths', said under the table), and the
  device's ``DAVG/cmd`` (issue to completion, the retries included) more
  than its paths' (each attempt's time on the path).
* ``%SHR``: the path's share of its device's I/Os over the last refresh.
* ``STATE``: what the wire is doing (a fault takes effect at once; the host
  notices after its detection delay), then the ALUA state.
* The VM view (``v``), one row per workload (a VM or fio job, its numjobs
  copies together), as esxtop's VM disk view: ``READS/s``, ``WRITES/s``,
  ``MBREAD/s``, ``MBWRTN/s`` over the last refresh; ``LAT/rd``, ``LAT/wr``
  and ``GAVG/cmd`` the mean latency as the VM sees it (issue to completion),
  ``KAVG/cmd`` its part in the host as the header and the device view count
  it: with host queues its time queued (the engines' own split), without
  them GAVG less the time on its devices' paths (waits for a path and for
  retries); measured from the end of the ramp: ``-`` before; ``ACTV`` and
  ``QUED`` its I/Os active on the device
  and waiting in the host now (without host queues: its job slots, and 0).
* Under the table, in every view: the VMs each fault so far froze (an I/O
  outstanding during it, done by now, of 100 ms or more), with the longest
  and how many, as ``faults[]`` counts them at the end (:meth:`Top.stall_note`).

``--batch`` writes esxtop's batch CSV (:mod:`pathsel.esxtop_csv`), a line per
sample, and ``--text`` a plain-text snapshot per sample, without waiting on
the wall clock unless ``--speed`` is given: one at every refresh before the
end of the run, then a final one at its end (rates over what is left of the
last refresh), so ``ceil(end / refresh)`` in all and one for a run shorter
than a refresh; more than :data:`MAX_SAMPLES` are refused.
"""

from __future__ import annotations

import math
import os
import re
import select
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO, TypedDict

import numpy as np

from .engine import prepare, resolve, run_fast, run_reference, supports
from .engine.recorder.readout import Live, vm_slots
from .engine.recorder.record import (
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
)
from .errors import ScenarioError
from .esxtop_csv import PerfmonCsv
from .metrics import F_MAX, F_STALLED, STALL_S
from .model import Model, compile_model
from .scenario import RunSpec, Scenario

__all__ = ["Top", "Snapshot", "run_top", "VIEWS", "pick_run", "SPEED_MIN", "SPEED_MAX"]

# esxtop's keys where a screen matches (u disk devices, d disk adapters, v VM disks); esxtop has no path or
# multi-host screen (its p is power management, not modelled): p and h are pathsel's own
VIEWS = {"u": "devices", "d": "adapters", "p": "paths", "h": "hosts", "v": "vms"}
# --speed's range (simulated seconds per wall second), which + and - stay within: below a microsecond a second a
# refresh would wait for weeks; above 1e6 no run lasts a refresh of the wall clock anyway
SPEED_MIN, SPEED_MAX = 1e-6, 1e6
MIN_DELAY = 1e-6  # -d's floor: the CSV's sample times carry microseconds at most (as Python's datetime)
MAX_SAMPLES = 10_000  # samples in one run at most (-d over the run's length): more is a flood, not a view
_NAP = 0.5  # the longest single sleep while pacing: time.sleep refuses a wait past time_t, and Ctrl-C stays prompt
_KEYS_HELP = "u devices  d adapters  p paths  h hosts  v VMs  space pause  + faster  - slower  q quit"
_DONE_HELP = "run finished: u devices  d adapters  p paths  h hosts  v VMs  any other key quits"


# The adapter a runtime name carries, as its system names adapters: ESXi's vmhbaN:C:T:L is vmhbaN's; Linux's H:C:T:L
# (multipath -ll's, with or without its sdX) is SCSI host H's, /sys/class/scsi_host/hostH; a native NVMe path
# nvmeXcYnZ (subsystem X, controller Y, namespace Z) leaves by controller Y, /dev/nvmeY.
_ADAPTERS = (
    (re.compile(r"^(vmhba\d+):"), "{}"),
    (re.compile(r"^(\d+):\d+:\d+:\d+(?:\s+sd[a-z]+)?$"), "host{}"),
    (re.compile(r"^nvme\d+c(\d+)n\d+$"), "nvme{}"),
)


class Quit(Exception):
    """The user pressed q: stop the run."""


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


def _num(x: float, fmt: str) -> str:
    """``x`` formatted, or ``-`` where the model has no such quantity (nan)."""
    return fmt.format(x) if math.isfinite(x) else "-"


def adapter_of(path_name: str, host: str) -> str:
    """The adapter a path leaves by, as its system names it: ``vmhbaN`` of an ESXi runtime name (vmhba1:C0:T0:L1),
    ``hostH`` of a Linux SCSI one (2:0:1:3 sdc), ``nvmeY`` of a native NVMe one (nvme0c1n1); else the host's own
    (docs/model.md: one adapter per host), under the host's name."""
    for pattern, form in _ADAPTERS:
        m = pattern.match(path_name)
        if m:
            return form.format(m.group(1))
    return host


def share(total: int, weights: list[int]) -> list[int]:
    """``total`` split in proportion to ``weights`` (equally when they are all 0), in whole I/Os that add up to it:
    the floors, then one more each to the largest remainders (the first on a tie)."""
    n = len(weights)
    if n == 0:
        return []
    w = weights if sum(weights) > 0 else [1] * n
    whole = sum(w)
    parts = [total * x // whole for x in w]
    left = total - sum(parts)
    for i in sorted(range(n), key=lambda i: (-(total * w[i] % whole), i))[:left]:
        parts[i] += 1
    return parts


def _ms(seconds: float) -> str:
    return "-" if not math.isfinite(seconds) else f"{abs(seconds) * 1e3 if abs(seconds) < 5e-6 else seconds * 1e3:.2f}"


def _ms_unit(seconds: float) -> str:
    """Milliseconds with their unit, or a bare ``-`` (no figure, no unit)."""
    text = _ms(seconds)
    return text if text == "-" else f"{text} ms"


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
        self.vm_devices: dict[int, set[int]] = {}
        for j in model.jobs:
            self.vm_devices.setdefault(j.vm, set()).add(j.device)
        # one adapter per (host, vmhbaN): every ESXi host has its own vmhba1
        self.adapters: dict[tuple[int, str], list[int]] = {}
        for p in model.paths:
            self.adapters.setdefault((p.host, adapter_of(p.name, model.hosts[p.host])), []).append(p.index)
        # the I/Os on each path at the previous refresh, and, per path dead on the wire and not yet noticed, those
        # it held at the last refresh before the cut: how the I/Os stuck on a device's dead paths are shared out
        self.prev_out = np.zeros(n, dtype=np.int64)
        self.stuck_weight = np.zeros(n, dtype=np.int64)
        self.was_hidden = [False] * n
        self.blind = self._blind_windows()

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

    def unnoticed(self, now: float) -> list[bool]:
        """Per path: I/Os sent down it may be stuck on it at ``now``, lost at a cut the host has not seen the end of.

        From a cut (the wire going down) until the host notices it (the fault's time + the host's detection), as
        long as the wire stays down. When the wire comes back first, the I/Os lost at the cut are still held: the
        engines send them again only at the host's next look at its paths (any path's notice, an ALUA, owner or
        replication change), at the latest that first notice; until then they stay where they were. The host still
        counts them as issued to the device: esxtop's ACTV, not QUED.
        """
        return [any(cut < now <= end for cut, end in w) for w in self.blind]

    def _blind_windows(self) -> list[list[tuple[float, float]]]:
        """Per path, the windows ``(cut, end]`` of :meth:`unnoticed`, from the scenario's faults."""
        model = self.model
        by_controller: dict[int, list[int]] = {}
        for p in model.paths:
            by_controller.setdefault(p.controller, []).append(p.index)
        wire = ("path_down", "array_down", "path_up", "array_up")
        # the instants the engines wake the I/Os waiting for a path change (faults.notice and apply_fault's
        # wake_waiters): each wire change's notice, per host, and ALUA, owner and replication changes at once
        wakes: list[float] = []
        for f in model.faults:
            if f.what in wire:
                wakes.extend(f.at + model.host_params[model.controllers[c].host].detection for c in f.controllers)
            elif f.what in ("alua", "owner", "replication_down", "replication_up") or f.paths:
                wakes.append(f.at)
        wakes.sort()
        windows: list[list[tuple[float, float]]] = [[] for _ in model.paths]
        up = [True] * len(model.paths)
        cut_at: list[tuple[float, float] | None] = [None] * len(model.paths)  # an open cut: (its time, its notice)
        for f in model.faults:
            if f.what not in wire:
                continue
            down = f.what in ("path_down", "array_down")
            for c in f.controllers:
                notice = f.at + model.host_params[model.controllers[c].host].detection
                for i in by_controller.get(c, ()):
                    opened = cut_at[i]
                    if down and up[i]:
                        cut_at[i] = (f.at, notice)
                    elif not down and not up[i] and opened is not None:
                        cut, own = opened
                        # back before the host noticed: held until its next look at the paths
                        end = own if f.at >= own else next((w for w in wakes if w >= f.at), own)
                        windows[i].append((cut, min(end, own)))
                        cut_at[i] = None
                    up[i] = not down
        for i, open_cut in enumerate(cut_at):
            if open_cut is not None:
                windows[i].append(open_cut)
        return windows

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
        out = np.asarray(live.out).astype(np.int64)
        states = self.wire_state(live.now)
        hidden = self.unnoticed(live.now)
        stuck = self.stuck(R, out, hidden)
        on_path = out + stuck
        # what the workloads keep outstanding, once they have started: at time 0 none is issued yet (not QUED)
        started = live.now > 0.0
        depth = self.depth if started else np.zeros_like(self.depth)

        def davg(idx: list[int]) -> float:
            n = int(d_n[idx].sum())
            return float(d_total[idx].sum()) / n if n else math.nan

        dev_n, dev_k, dev_d = R.dev_n.copy(), R.dev_kavg.copy(), R.dev_davg.copy()
        dn, dk, dd = dev_n - self.dev_n, dev_k - self.dev_k, dev_d - self.dev_d
        wl = self.wl_delta(R)

        def split(devs: list[int]) -> tuple[float, float]:
            """(KAVG, DAVG) over the step of these devices' completions, from the record's per-device sums."""
            n = int(dn[devs].sum())
            return (float(dk[devs].sum()) / n, float(dd[devs].sum()) / n) if n else (math.nan, math.nan)

        def by_op(devs: list[int]) -> np.ndarray | None:
            """The workload counters' deltas (reads row 0, writes row 1) of the VMs on these devices, None when a VM
            on them also runs on another device (its I/Os cannot be told apart per device)."""
            mine = set(devs)
            vms = {v for v, on in self.vm_devices.items() if on & mine}
            if any(not self.vm_devices[v] <= mine for v in vms) or wl is None:
                return None
            rows = [r for v in vms for r in (2 * v, 2 * v + 1) if r < wl.shape[0]]
            total = np.zeros((2, wl.shape[1]))
            for r in rows:
                total[r % 2] += wl[r]
            return total

        def device_values(idx: list[int], devs: list[int]) -> dict[str, float]:
            """esxtop's disk device counters over the step (nan: the model has no such quantity here)."""
            v: dict[str, float] = {"CMDS/s": float(d_ios[idx].sum()) / step}
            ops = by_op(devs)
            nan = math.nan
            if ops is not None:
                v.update(
                    {
                        "READS/s": ops[0, 0] / step,
                        "WRITES/s": ops[1, 0] / step,
                        "MBREAD/s": ops[0, 1] / step / MIB,
                        "MBWRTN/s": ops[1, 1] / step / MIB,
                    }
                )
                n = ops[0, 2] + ops[1, 2]
                gavg = (ops[0, 3] + ops[1, 3]) / n if n else nan
            else:
                v.update({"READS/s": nan, "WRITES/s": nan, "MBREAD/s": nan, "MBWRTN/s": nan})
                gavg = nan
            n = int(dn[devs].sum())
            qavg = float(dk[devs].sum()) / n if n else nan  # the time queued in the host, the engines' own split
            if self.queues:
                k, dv = split(devs)
                actv = float(sum(int(R.dev_actv[d]) for d in devs))
                qued = float(sum(int(R.dev_qued[d]) for d in devs))
                depths = {int(R.dev_queue_depth[d]) for d in devs}  # now: ESXi's throttling moves it
                dqlen = float(depths.pop()) if len(depths) == 1 else nan
                dqlen = dqlen if dqlen > 0 else nan
                gavg = k + dv
            else:
                dv = davg(idx)
                k = max(gavg - dv, 0.0) if math.isfinite(gavg - dv) else math.nan  # the same completions: never below 0
                actv = float(on_path[idx].sum())
                qued = float(max(0, int(sum(depth[d] for d in devs)) - int(actv)))
                dqlen = nan
            v.update(
                {
                    "DQLEN": dqlen,
                    "ACTV": actv,
                    "QUED": qued,
                    "%USD": 100.0 * actv / dqlen,
                    "LOAD": (actv + qued) / dqlen,
                    "DAVG/cmd": dv,
                    "KAVG/cmd": k,
                    "GAVG/cmd": gavg,
                    "QAVG/cmd": qavg,
                }
            )
            return v

        def device_cells(v: dict[str, float], idx: list[int]) -> dict[str, str]:
            c = {
                "DQLEN": _num(v["DQLEN"], "{:.0f}"),
                "ACTV": _num(v["ACTV"], "{:.0f}"),
                "QUED": _num(v["QUED"], "{:.0f}"),
                "%USD": _num(v["%USD"], "{:.0f}"),
                "LOAD": _num(v["LOAD"], "{:.2f}"),
                "CMDS/s": _num(v["CMDS/s"], "{:,.0f}"),
                "READS/s": _num(v["READS/s"], "{:,.0f}"),
                "WRITES/s": _num(v["WRITES/s"], "{:,.0f}"),
                "MBREAD/s": _num(v["MBREAD/s"], "{:,.2f}"),
                "MBWRTN/s": _num(v["MBWRTN/s"], "{:,.2f}"),
                "DAVG/cmd": _ms(v["DAVG/cmd"]),
                "KAVG/cmd": _ms(v["KAVG/cmd"]),
                "GAVG/cmd": _ms(v["GAVG/cmd"]),
                "QAVG/cmd": _ms(v["QAVG/cmd"]),
            }
            c["PATHS"] = f"{sum(1 for i in idx if d_ios[i] > 0)}/{len(idx)}"
            return c

        def row(name: str, idx: list[int], devs: list[int]) -> Row:
            v = device_values(idx, devs)
            return Row(name, device_cells(v, idx), v)

        all_paths = list(range(len(model.paths)))
        all_devices = [d.index for d in model.devices]
        devices = [row(self.device_name(d), list(d.paths), [d.index]) for d in model.devices]
        hosts = []
        for h, name in enumerate(model.hosts):
            idx = [p.index for p in model.paths if p.host == h]
            hosts.append(row(name, idx, [d.index for d in model.devices if d.host == h]))
        adapters = []
        for (h, name), idx in self.adapters.items():
            if len(model.hosts) > 1 and name != model.hosts[h]:  # a vmhba of one of several hosts: after its host
                name = f"{model.hosts[h]}/{name}"
            n_ios = float(d_ios[idx].sum())
            v = {"CMDS/s": n_ios / step, "DAVG/cmd": davg(idx), "ACTV": float(on_path[idx].sum())}
            cells = {
                "NPTH": f"{len(idx)}",
                "CMDS/s": _num(v["CMDS/s"], "{:,.0f}"),
                "DAVG/cmd": _ms(v["DAVG/cmd"]),
                "ACTV": _num(v["ACTV"], "{:.0f}"),
                "PATHS": f"{sum(1 for i in idx if d_ios[i] > 0)}/{len(idx)}",
            }
            adapters.append(Row(name, cells, v))
        paths = []
        several = len(model.devices) > 1
        for p in model.paths:
            dev = model.devices[p.device]
            dev_ios = int(d_ios[list(dev.paths)].sum())
            v = {"CMDS/s": d_ios[p.index] / step, "DAVG/cmd": davg([p.index]), "ACTV": float(on_path[p.index])}
            paths.append(
                Row(
                    f"{self.device_name(dev)} {p.name}" if several else p.name,
                    {
                        "ARRAY": model.arrays[p.array].name,
                        "STATE": states[p.index],
                        "CMDS/s": f"{d_ios[p.index] / step:,.0f}",
                        "%SHR": f"{100.0 * d_ios[p.index] / dev_ios:.1f}" if dev_ios else "0.0",
                        "DAVG/cmd": _ms(v["DAVG/cmd"]),
                        "ACTV": f"{int(on_path[p.index])}",
                    },
                    v,
                )
            )
        d_all = ios - self.ios
        if self.queues:
            actv_all, qued_all = int(R.dev_actv.sum()), int(R.dev_qued.sum())
            davg_all = split(all_devices)[1]
        else:
            actv_all = int(on_path.sum())
            qued_all = max(0, int(depth.sum()) - actv_all)
            davg_all = davg(all_paths)
        snap = Snapshot(
            now=live.now,
            step=step,
            cmds=d_all / step,
            mbps=(nbytes - self.bytes) / step / MIB,
            gavg_s=(lat_sum - self.lat_sum) / d_all if d_all else math.nan,
            davg_s=davg_all,
            actv=actv_all,
            qued=qued_all,
            failed=int(R.rc[C_FAILED]),
            retried=int(R.rc[C_RETRIED]),
            off_path=max(0, actv_all - int(on_path.sum())) if self.queues else 0,
            hosts=hosts,
            devices=devices,
            paths=paths,
            adapters=adapters,
        )
        self.t, self.path_ios, self.path_n, self.path_total = live.now, path_ios, path_n, path_total
        self.ios, self.lat_sum, self.bytes = ios, lat_sum, nbytes
        self.dev_n, self.dev_k, self.dev_d = dev_n, dev_k, dev_d
        self.prev_out, self.was_hidden = out, hidden
        # without host queues a VM's KAVG is, as the header's and its devices', the time its I/Os spent in the host on
        # no path (waiting for one, for a retry): its GAVG less the time on its devices' paths over the same step
        on_paths = None
        if not self.queues:
            on_paths = [davg([i for dv in self.vm_devices.get(v, ()) for i in model.devices[dv].paths]) for v in range(len(self.vm_slots))]
        snap.vms = self.vm_rows(R, step, wl, started, on_paths)
        snap.stalls = self.stall_note(R)
        return snap

    def stall_note(self, R: Any) -> str:
        """The VMs each fault so far froze: an I/O outstanding during it, done by now, of STALL_S or more (the
        record's fw_stat, as faults[] reads it at the end), by fault; '' when none."""
        fw, st = getattr(R, "fw", None), getattr(R, "fw_stat", None)
        if fw is None or st is None or not fw.shape[0]:
            return ""
        model = self.model
        W = st.shape[0] // fw.shape[0]
        names = list(model.workloads) + [f"workload {v}" for v in range(len(model.workloads), W)]
        parts = []
        for k in range(fw.shape[0]):
            rows = st[k * W : (k + 1) * W]
            frozen = [v for v in range(W) if rows[v, F_STALLED] > 0]
            if frozen:
                longest = float(rows[frozen, F_MAX].max())
                who = ", ".join(names[v] for v in frozen[:4]) + (f" and {len(frozen) - 4} more" if len(frozen) > 4 else "")
                n = int(rows[frozen, F_STALLED].sum())
                parts.append(f"fault at {fw[k, 0]:g} s froze {who} (longest {_ms_unit(longest)}, {n:,} I/Os of {STALL_S * 1e3:g} ms or more)")
        return "; ".join(parts)

    def stuck(self, R: Any, out: np.ndarray, hidden: list[bool]) -> np.ndarray:
        """Per path: the I/Os stuck on it, dead on the wire and its host not told yet.

        The engines take an I/O off the wire at the cut (``out`` drops to 0) and send it again once the host has
        noticed; until then the host counts it active on the device (esxtop's ACTV). The record keeps how many
        a device has in that state (with host queues: its ACTV less what is on its paths; without: what its
        workloads keep outstanding less what is on its paths), not on which dead path each was sent. That count
        is shared among the device's unnoticed dead paths in proportion to what each held at the last refresh
        before the cut (exact when one path is dead, or when nothing was sent between that refresh and the
        notice), equally when they held nothing; largest remainders, so the paths add up to the device.
        """
        model = self.model
        stuck = np.zeros(len(model.paths), dtype=np.int64)
        for i, h in enumerate(hidden):
            if not h:
                self.stuck_weight[i] = 0
            elif not self.was_hidden[i]:  # newly cut: what it held at the previous refresh
                self.stuck_weight[i] = int(self.prev_out[i])
        for d in model.devices:
            dead = [i for i in d.paths if hidden[i]]
            if not dead:
                continue
            on = int(out[list(d.paths)].sum())
            if self.queues:
                total = max(0, int(R.dev_actv[d.index]) - on)
            else:
                total = max(0, int(self.depth[d.index]) - on)
            stuck[dead] = share(total, [int(self.stuck_weight[i]) for i in dead])
        return stuck

    def device_name(self, d: Any) -> str:
        """A device as the scenario names it: its volume (the implicit one is ``volume``), after the host's name
        when the scenario has several hosts (esxtop shows one host)."""
        return d.volume if len(self.model.hosts) == 1 else f"{self.model.hosts[d.host]}/{d.volume}"

    def wl_delta(self, R: Any) -> np.ndarray | None:
        """The workload counters (rows vm * 2 + op; N_ALL, BYTES_ALL, N, TOTAL, KAVG) since the previous refresh."""
        cols = [W_N_ALL, W_BYTES_ALL, W_N, W_TOTAL, W_KAVG]
        now: np.ndarray = np.asarray(R.wl_stat[:, cols], dtype=np.float64).copy()
        before = self.wl if self.wl is not None and self.wl.shape == now.shape else np.zeros_like(now)
        self.wl = now
        return np.asarray(now - before)

    def vm_rows(self, R: Any, step: float, d: np.ndarray | None = None, started: bool = True, on_paths: list[float] | None = None) -> list[Row]:
        """esxtop's VM disk view: one row per workload, rates and means over the step from the record's counters.

        ``on_paths``: per VM, the mean time on its devices' paths over the step (without host queues): its KAVG is
        then GAVG less that, as the header's and the device view's are; with host queues, the engines' own split."""
        if d is None:
            d = self.wl_delta(R)
        assert d is not None
        model, rows = self.model, []
        names = list(model.workloads) or [j.workload for j in model.jobs[:1]]
        for v in range(min(len(names), R.wl_q.shape[0])):
            rd, wr = d[2 * v], d[2 * v + 1]
            n = rd[2] + wr[2]

            def lat(x: np.ndarray) -> str:
                return _ms(x[3] / x[2]) if x[2] else "-"

            def kavg(v: int, rd: np.ndarray, wr: np.ndarray, n: float) -> float:
                if on_paths is None or v >= len(on_paths):
                    return float((rd[4] + wr[4]) / n)
                k = (rd[3] + wr[3]) / n - on_paths[v]
                return max(float(k), 0.0) if math.isfinite(k) else math.nan  # the same completions: never below 0

            if self.queues:
                actv, qued = int(R.wl_q[v, WQ_ACTV]), int(R.wl_q[v, WQ_QUED])
            else:  # no host queue: its slots are always outstanding
                actv, qued = (self.vm_slots[v] if started and v < len(self.vm_slots) else 0), 0
            rows.append(
                Row(
                    names[v],
                    {
                        "CMDS/s": f"{(rd[0] + wr[0]) / step:,.0f}",
                        "READS/s": f"{rd[0] / step:,.0f}",
                        "WRITES/s": f"{wr[0] / step:,.0f}",
                        "MBREAD/s": f"{rd[1] / step / MIB:,.2f}",
                        "MBWRTN/s": f"{wr[1] / step / MIB:,.2f}",
                        "LAT/rd": lat(rd),
                        "LAT/wr": lat(wr),
                        "GAVG/cmd": _ms((rd[3] + wr[3]) / n) if n else "-",
                        "KAVG/cmd": _ms(kavg(v, rd, wr, n)) if n else "-",
                        "ACTV": f"{actv}",
                        "QUED": f"{qued}",
                    },
                )
            )
        return rows


def _header(label: str, snap: Snapshot, model: Model, speed: float | None, paused: bool) -> list[str]:
    ramp = " (ramp)" if 0 < snap.now <= model.ramp else ""
    kavg = snap.gavg_s - snap.davg_s if math.isfinite(snap.gavg_s) and math.isfinite(snap.davg_s) else math.nan
    pace = "as fast as it runs" if speed is None else f"speed {speed:g}x"
    return [
        f"pathsel top - {model.name} - {label}",
        f"{snap.now:8.2f} s of {model.end:g} s{ramp}   {pace}{'   PAUSED' if paused else ''}",
        f"CMDS/s {snap.cmds:,.0f}   MiB/s {snap.mbps:,.1f}   GAVG/cmd {_ms_unit(snap.gavg_s)}   "
        f"DAVG/cmd {_ms_unit(snap.davg_s)}   KAVG/cmd {_ms_unit(kavg)}   ACTV {snap.actv}   QUED {snap.qued}   "
        f"retried {snap.retried:,}   failed {snap.failed:,}",
    ]


def _rows(snap: Snapshot, view: str) -> tuple[str, list[Row]]:
    return {
        "devices": ("DEVICE", snap.devices),
        "adapters": ("ADAPTR", snap.adapters),
        "paths": ("PATH", snap.paths),
        "hosts": ("HOST", snap.hosts),
        "vms": ("VMNAME", snap.vms),
    }[view]


def text_view(label: str, snap: Snapshot, model: Model, view: str, speed: float | None = None) -> str:
    """One refresh as plain text (``--text``): the header lines, then the view's table, then its notes."""
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


class _Enough(Exception):
    """-n frames shown: stop the run."""


def _zero_record(model: Model) -> Any:
    """A record with nothing in it yet, shaped as the engines' (time 0: no I/O issued)."""
    from types import SimpleNamespace

    P, D = len(model.paths), max(len(model.devices), 1)
    W = max(len(model.workloads), max((j.vm for j in model.jobs), default=0) + 1, 1)
    depth = np.array([model.host_params[d.host].queue_depth for d in model.devices] or [0], dtype=np.int64)
    return SimpleNamespace(
        ts_path_ios=np.zeros((P, 1), dtype=np.int64),
        h_stat=np.zeros((H_PATH0 + P, 8)),
        ts_ios=np.zeros(1, dtype=np.int64),
        ts_lat_sum=np.zeros(1),
        ts_bytes=np.zeros(1, dtype=np.int64),
        rc=np.zeros(max(C_FAILED, C_RETRIED) + 1, dtype=np.int64),
        dev_n=np.zeros(D, dtype=np.int64),
        dev_kavg=np.zeros(D),
        dev_davg=np.zeros(D),
        dev_actv=np.zeros(D, dtype=np.int64),
        dev_qued=np.zeros(D, dtype=np.int64),
        dev_queue_depth=depth,
        wl_stat=np.zeros((2 * W, 8)),
        wl_q=np.zeros((W, 8)),
    )


def first_snapshot(top: Top) -> Snapshot:
    """The view at time 0, before the first I/O: no rate yet, nothing active, every path as the scenario sets it."""
    model = top.model
    zero = np.zeros(len(model.paths), dtype=np.int64)
    snap = top.snapshot(Live(0.0, _zero_record(model), zero, zero))
    top.wl = None  # the engines' record starts from zero as well
    return snap


def fitting_delay(end: float) -> str:
    """The shortest -d, in 3 significant digits rounded up, that samples a run of ``end`` seconds at most
    :data:`MAX_SAMPLES` times (the exact quotient, rounded to the nearest, can be the -d that was refused)."""
    exact = end / MAX_SAMPLES
    unit = 10.0 ** (math.floor(math.log10(exact)) - 2)
    k = math.ceil(exact / unit - 1e-9)
    while math.ceil(end / float(f"{k * unit:.3g}") - 1e-9) > MAX_SAMPLES:
        k += 1
    return f"{k * unit:.3g}"


def run_top(
    scenario: Scenario,
    run: RunSpec,
    *,
    speed: float | None = 1.0,
    refresh: float = 1.0,
    view: str = "devices",
    batch: bool = False,
    text: bool = False,
    iterations: int | None = None,
    duration: float | None = None,
    seed: int | None = None,
    out: TextIO | None = None,
    notify: Callable[[str], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Run ``run`` of ``scenario`` with a live view; return the exit status.

    ``refresh`` is esxtop's ``-d``: seconds between samples on the simulated
    host's clock. ``speed`` paces them (simulated seconds per wall second: a
    frame every ``refresh / speed`` wall seconds; None: as fast as the engine
    runs). ``iterations`` is esxtop's ``-n``: stop after that many samples
    (without ``duration``, the run is made long enough for them). ``batch``
    writes esxtop's perfmon CSV (``text``: plain-text snapshots instead);
    otherwise a terminal view with keys, which opens with a frame at time 0.
    """
    out = out or sys.stdout
    model = compile_model(scenario, run, duration=duration, seed=seed)
    if iterations is not None and duration is None and iterations > MAX_SAMPLES:
        # without --duration the run grows with -n x -d: a longer -d gives as many samples, only a smaller -n helps
        raise ScenarioError(
            "command line", "argument -n", f"{iterations:,} samples are more than {MAX_SAMPLES:,} in one run: -n {MAX_SAMPLES:,} or fewer"
        )
    grown = ""
    if iterations is not None and duration is None and model.end < iterations * refresh:
        # -n without --duration: long enough for every sample (the ramp counts: samples start at time 0)
        longer = max(iterations * refresh - model.ramp, refresh)
        try:
            grown_model = compile_model(scenario, run, duration=longer, seed=seed)
        except ScenarioError as e:  # the run -d and -n ask for, not the file, is what is too long
            raise ScenarioError(
                "command line",
                "arguments -d and -n",
                f"{iterations:,} samples every {refresh:g} s need a {model.ramp + longer:g} s run, which {e.source} "
                f"cannot give ({e.place}: {e.problem}): fewer samples (-n), a shorter -d, or --duration",
            ) from None
        # said on stderr (and on the screen): a long -d can ask for a simulated day the file never meant
        grown = (
            f"pathsel top: {iterations:,} sample{'s' if iterations > 1 else ''} every {refresh:g} s: the run is made "
            f"{grown_model.end:g} s long (the file's is {model.end:g} s; --duration sets it)"
        )
        model = grown_model
    fast = supports(run.policy)
    engine = run_fast if fast else run_reference
    top = Top(model)
    state: _State = {"view": view, "speed": speed, "paused": False, "wall": clock(), "sim": 0.0}
    in_run = math.ceil(model.end / refresh - 1e-9)
    samples = iterations if iterations is not None else in_run
    if min(samples, in_run) > MAX_SAMPLES:
        # a flood, and a sample every few events keeps the engine from running: say so rather than sample less often
        raise ScenarioError(
            "command line",
            "argument -d",
            f"a sample every {refresh:g} s over a {model.end:g} s run is {in_run:,} samples, "
            f"more than {MAX_SAMPLES:,}: -d {fitting_delay(model.end)} or longer, or -n {MAX_SAMPLES:,} or fewer",
        )
    if refresh < MIN_DELAY:
        raise ScenarioError(
            "command line", "argument -d", f"{refresh:g} s is below a microsecond, the finest time -b's samples can carry: -d 1us or longer"
        )
    step = refresh

    # A sample at every refresh before the end of the run, then a final one at its end. A run shorter than a
    # refresh still needs one callback, for the record the final sample reads: the engines call back at half the
    # run, not shown.
    every = step < model.end
    engine_step = step if every else model.end / 2
    lives: list[Live] = []
    shown = [0]

    def final(live: Live) -> Live:
        """The run's end, once the engine has returned: the record is closed at ``model.end``."""
        return Live(model.end, live.record, live.out, live.out_bytes)

    def warm(tell: Callable[[str], None] | None) -> None:
        """Load (or compile, the first time) the fast engine before the clock starts: not simulated time."""
        if fast:
            defn = resolve(run.policy)[0]
            prepare([defn, *(resolve(d.policy)[0] for d in model.devices if d.policy is not None)], notify=tell)

    def counted() -> None:
        shown[0] += 1
        if iterations is not None and shown[0] >= iterations:
            raise _Enough

    if batch:
        csv_out = None if text else PerfmonCsv(top, step)

        def pace(now: float) -> None:
            if state["speed"] is None:
                return
            while True:  # in naps: a wait of years (a tiny --speed) must not overflow time.sleep
                wait = state["wall"] + (now - state["sim"]) / state["speed"] - clock()
                if wait <= 0:
                    return
                time.sleep(min(wait, _NAP))

        def print_snapshot(live: Live) -> None:
            snap = top.snapshot(live)
            pace(live.now)  # the sample is due when the wall clock reaches its simulated time
            out.write(text_view(run.label, snap, model, state["view"], state["speed"]) + "\n" if csv_out is None else csv_out.row(snap))
            out.flush()
            counted()

        def show(live: Live) -> None:
            lives[:] = [live]
            if every:
                print_snapshot(live)

        if grown and notify is not None:
            notify(grown)
        warm(notify)
        if csv_out is not None:
            out.write(csv_out.header())
            out.flush()
        state["wall"], state["sim"] = clock(), 0.0  # pace from time 0: compiling and starting up are not simulated time
        try:
            engine(model, run.policy, live=show, live_step=engine_step)
            if lives:  # rates over what is left of the last refresh
                print_snapshot(final(lives[-1]))
        except _Enough:
            pass
        return 0

    from rich.console import Console
    from rich.live import Live as RichLive
    from rich.text import Text

    console = Console(file=out)
    with _Keys(sys.stdin) as keys, RichLive(console=console, screen=True, auto_refresh=False, vertical_overflow="crop") as screen:
        last: list[Snapshot] = []
        starting = [f"pathsel top: starting... {model.name} - {run.label}", *([grown] if grown else []), "loading the engine"]

        def say_on_screen(line: str) -> None:
            starting.append(line)
            screen.update(Text("\n".join(starting)), refresh=True)

        screen.update(Text("\n".join(starting)), refresh=True)

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
            snap = top.snapshot(live)  # read now: the record moves on once this returns
            while True:  # the frame is due when the wall clock reaches its simulated time; keys meanwhile
                if state["paused"]:
                    handle(keys.read(0.1))
                    continue
                target = (state["wall"] + (live.now - state["sim"]) / state["speed"]) if state["speed"] else clock()
                wait = target - clock()
                if wait <= 0:
                    handle(keys.read(0))  # a key pressed meanwhile still counts
                    if not state["paused"]:
                        break
                    continue
                handle(keys.read(min(wait, 0.1)))
            last[:] = [snap]
            draw()
            counted()

        try:
            warm(say_on_screen)  # a first compile says so on the screen
            last[:] = [first_snapshot(top)]
            draw()
            state["wall"], state["sim"] = clock(), 0.0  # pace from time 0: compiling and starting up are not simulated time
            engine(model, run.policy, live=show, live_step=engine_step)
            if lives:  # the end of the run, paced as a refresh
                view_now(final(lives[-1]))
        except Quit:
            return 0
        except _Enough:
            pass
        # the run is over (or -n samples shown): the last view stays until a key is pressed
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
                        _rich_view(run.label, last[-1], model, state["view"], state["speed"], False, _DONE_HELP),
                        refresh=True,
                    )
                    continue
                break
    return 0
