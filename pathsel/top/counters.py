"""``pathsel top``'s sampler: :class:`Top` turns the engines' record at each refresh into a :class:`Snapshot` of
esxtop's counters, as rates over the last refresh and the state now (per device, adapter, path, host and VM).

The columns and what each means are in :mod:`pathsel.top`'s docstring.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ..engine.recorder.readout import Live, vm_slots
from ..engine.recorder.record import (
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
from ..metrics import F_MAX, F_STALLED, STALL_S
from ..model import Model
from .snapshot import MIB, Row, Snapshot, ms, ms_unit, num
from .wire import blind_windows, wire_state

__all__ = ["Top", "adapter_of", "share"]


# The adapter a runtime name carries, as its system names adapters: ESXi's vmhbaN:C:T:L is vmhbaN's; Linux's H:C:T:L
# (multipath -ll's, with or without its sdX) is SCSI host H's, /sys/class/scsi_host/hostH; a native NVMe path
# nvmeXcYnZ (subsystem X, controller Y, namespace Z) leaves by controller Y, /dev/nvmeY.
_ADAPTERS = (
    (re.compile(r"^(vmhba\d+):"), "{}"),
    (re.compile(r"^(\d+):\d+:\d+:\d+(?:\s+sd[a-z]+)?$"), "host{}"),
    (re.compile(r"^nvme\d+c(\d+)n\d+$"), "nvme{}"),
)


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
        self.blind = blind_windows(model)

    def wire_state(self, now: float) -> list[str]:
        """Each path's state on the wire at ``now``: the scenario's faults up to then, applied in order."""
        return wire_state(self.model, now)

    def unnoticed(self, now: float) -> list[bool]:
        """Per path: I/Os sent down it may be stuck on it at ``now``, lost at a cut the host has not seen the end of.

        From a cut (the wire going down) until the host notices it (the fault's time + the host's detection), as
        long as the wire stays down. When the wire comes back first, the I/Os lost at the cut are still held: the
        engines send them again only at the host's next look at its paths (any path's notice, an ALUA, owner or
        replication change), at the latest that first notice; until then they stay where they were. The host still
        counts them as issued to the device: esxtop's ACTV, not QUED.
        """
        return [any(cut < now <= end for cut, end in w) for w in self.blind]

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
                "DQLEN": num(v["DQLEN"], "{:.0f}"),
                "ACTV": num(v["ACTV"], "{:.0f}"),
                "QUED": num(v["QUED"], "{:.0f}"),
                "%USD": num(v["%USD"], "{:.0f}"),
                "LOAD": num(v["LOAD"], "{:.2f}"),
                "CMDS/s": num(v["CMDS/s"], "{:,.0f}"),
                "READS/s": num(v["READS/s"], "{:,.0f}"),
                "WRITES/s": num(v["WRITES/s"], "{:,.0f}"),
                "MBREAD/s": num(v["MBREAD/s"], "{:,.2f}"),
                "MBWRTN/s": num(v["MBWRTN/s"], "{:,.2f}"),
                "DAVG/cmd": ms(v["DAVG/cmd"]),
                "KAVG/cmd": ms(v["KAVG/cmd"]),
                "GAVG/cmd": ms(v["GAVG/cmd"]),
                "QAVG/cmd": ms(v["QAVG/cmd"]),
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
                "CMDS/s": num(v["CMDS/s"], "{:,.0f}"),
                "DAVG/cmd": ms(v["DAVG/cmd"]),
                "ACTV": num(v["ACTV"], "{:.0f}"),
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
                        "DAVG/cmd": ms(v["DAVG/cmd"]),
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
                parts.append(f"fault at {fw[k, 0]:g} s froze {who} (longest {ms_unit(longest)}, {n:,} I/Os of {STALL_S * 1e3:g} ms or more)")
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
                return ms(x[3] / x[2]) if x[2] else "-"

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
                        "GAVG/cmd": ms((rd[3] + wr[3]) / n) if n else "-",
                        "KAVG/cmd": ms(kavg(v, rd, wr, n)) if n else "-",
                        "ACTV": f"{actv}",
                        "QUED": f"{qued}",
                    },
                )
            )
        return rows
