"""One policy's run: :class:`RunResult`, what it measured as numbers and rows (per op, path, device queue, wire,
input delay), why none completed, what makes its figures suspect, and its DataFrames over time.

Its faults' recovery and stalls are in :mod:`.recovery`, its JSON entry in :mod:`.document`; the breakdowns per host,
device and workload in :mod:`.breakdown` and :mod:`.workloads`. :class:`~pathsel.results.Result` holds one per
compared policy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..limits import RETRY_WARNING
from ..metrics import RunMetrics, summaries_us
from ..model import Model
from ..timing.distributions import INPUT_QUANTILES
from ..units import format_duration
from .document import run_dict
from .recovery import fault_rows, stalls
from .wires import frame_columns, wire_utilisation

if TYPE_CHECKING:
    import pandas as pd  # imported by each method that makes a DataFrame: pathsel simulate prints without pandas

__all__ = ["RunResult"]


@dataclass
class RunResult:
    """One policy's run."""

    label: str
    policy: str
    engine: str
    model: Model
    metrics: RunMetrics
    expect_iops: float | None = None
    expect_tolerance: float = 0.15
    expect_source: str = ""

    # -- headline numbers --------------------------------------------------
    @property
    def duration(self) -> float:
        """Seconds measured (after the ramp)."""
        return self.model.duration

    @property
    def ios(self) -> int:
        """I/Os completed in the measured window."""
        return self.metrics.overall.n

    @property
    def iops(self) -> float:
        """I/Os completed per second of the measured window."""
        return self.ios / self.duration

    @property
    def mbps(self) -> float:
        """Megabytes (10^6 bytes) per second of the measured window."""
        return sum(self.metrics.bytes_by_op.values()) / self.duration / 1e6

    @property
    def latency_us(self) -> dict[str, float]:
        """Latency of the measured window's I/Os in microseconds: mean, p50, p99, p999, max."""
        return self.metrics.overall.summary_us()

    def ops(self) -> list[dict[str, Any]]:
        """Per op that ran (read, write): I/Os, IOPS, MB/s and latency, as fio reports reads and writes apart."""
        out = []
        for op in ("read", "write"):
            h = self.metrics.by_op[op]
            if h.n:
                out.append(
                    {
                        "op": op,
                        "ios": h.n,
                        "iops": h.n / self.duration,
                        "mbps": self.metrics.bytes_by_op[op] / self.duration / 1e6,
                        "latency_us": h.summary_us(),
                    }
                )
        return out

    @property
    def latency_split_us(self) -> dict[str, dict[str, float]]:
        """esxtop's split: KAVG (queued in the host), DAVG (from the device taking it to completion), GAVG = both."""
        m = self.metrics
        return {"kavg": m.kavg.summary_us(), "davg": m.davg.summary_us(), "gavg": m.overall.summary_us()}

    @property
    def host_queued(self) -> bool:
        """Whether the host's queues are in play: a device or adapter queue depth, or an open-loop workload."""
        return self.model.host_queues

    @property
    def port_limited(self) -> bool:
        """Whether an array's target port can answer QUEUE FULL (a ``port_queue_depth``): the ``qfull`` counts apply."""
        return any(t.queue_depth for t in self.model.ports)

    def device_queues(self) -> list[dict[str, Any]]:
        """Per device, as esxtop shows it: queue depth (DQLEN), mean I/Os active (ACTV) and waiting in the host
        (QUED) over the window, completions, and mean KAVG, DAVG and GAVG (µs) of those completions. With a
        target port limit, also the QUEUE FULL statuses it got in the window (``qfull``) and its mean DQLEN
        (``dqlen_mean``: below ``dqlen`` while ESXi's throttling holds it down)."""
        m, model = self.metrics, self.model
        out = []
        for d in model.devices:
            n = int(m.dev_completed[d.index])
            kavg = m.dev_kavg_sum[d.index] / n * 1e6 if n else None
            davg = m.dev_davg_sum[d.index] / n * 1e6 if n else None
            row = {
                "device": d.name,
                "host": model.hosts[d.host],
                "dqlen": model.host_params[d.host].queue_depth or None,
                "ios": n,
                "iops": n / self.duration,
                "actv": m.dev_area_actv[d.index] / self.duration,
                "qued": m.dev_area_qued[d.index] / self.duration,
                "kavg_us": kavg,
                "davg_us": davg,
                "gavg_us": None if kavg is None else kavg + davg,
            }
            if self.port_limited:
                row["qfull"] = int(m.dev_qfull[d.index]) if m.dev_qfull is not None else 0
                row["dqlen_mean"] = (
                    float(m.dev_area_queue_depth[d.index]) / self.duration if row["dqlen"] and m.dev_area_queue_depth is not None else None
                )
            out.append(row)
        return out

    def queues_over_time(self) -> pd.DataFrame:
        """Per interval and device: mean I/Os active on the device (ACTV), waiting in the host (QUED), its mean
        queue depth (DQLEN, NaN without one; ESXi's throttling moves it) and the QUEUE FULL statuses of the run
        in the interval (all devices together)."""
        import pandas as pd

        m, w = self.metrics, self.metrics.interval
        dq = m.ts_dev_queue_depth
        limited = [bool(self.model.host_params[d.host].queue_depth) for d in self.model.devices]
        rows = [
            (
                self.label,
                b * w,
                d.name,
                m.ts_dev_actv[d.index, b] / w,
                m.ts_dev_qued[d.index, b] / w,
                (dq[d.index, b] / min(w, self.model.end - b * w)) if dq is not None and limited[d.index] else math.nan,
                int(m.ts_qfull[b]),
            )
            for d in self.model.devices
            for b in range(m.n_bins)
        ]
        return pd.DataFrame(rows, columns=["policy", "t_s", "device", "actv", "qued", "dqlen", "qfull"])

    @property
    def little(self) -> dict[str, float]:
        """Little's law, overall: time-average I/Os in flight vs IOPS x mean latency."""
        m = self.metrics
        mean_s = m.overall.mean if m.overall.n else 0.0
        return {"in_flight_mean": m.in_flight_area / self.duration, "iops_x_latency": self.iops * mean_s}

    @property
    def accounting(self) -> dict[str, Any]:
        """Every issued I/O: completed, failed visibly, or in flight at the end (``balanced`` checks it); ``refused``:
        open-loop arrivals refused at a full iodepth (``iodepth_full = "refuse"``), never issued."""
        m = self.metrics
        in_flight = m.in_flight
        return {
            "issued": m.issued,
            "completed": m.completed,
            "failed": m.failed,
            "in_flight": in_flight,
            "retried": m.retried,
            "timed_out": m.timed_out,
            "frames_lost": m.frames_lost,
            **({"refused": m.refused} if any(j.refuse for j in self.model.jobs) else {}),
            "balanced": m.issued == m.completed + m.failed + in_flight and in_flight >= 0,
            **({"qfull": int(m.ts_qfull.sum())} if self.port_limited else {}),
        }

    def faults(self) -> list[dict[str, Any]]:
        """Per scenario fault: what, when, how long until IOPS was back within 5 % of its level before,
        its stall per host and VM (:meth:`stalls`: the longest I/O outstanding during it), and the I/Os that failed (``recovery_s`` None: not in this run).
        A fault the scenario places at or after the run's end has ``after_end`` True and no figures."""
        return fault_rows(self)

    def stalls(self, at: float) -> dict[str, Any]:
        """The stall of the fault at ``at``, per host and per workload (VM), over every I/O outstanding at some time
        from the fault to the next change on the timeline (its revert, the next fault) or the end: issued before
        then and completed or failed after the fault (those stuck on a dead path until the host noticed, retried,
        aborted, failed), each from issue to completion or failure. An I/O that lived through several faults is
        the first one's that is not a recovery (path_up, array_up, replication_up), else the first's. The run's
        I/Os still in flight at the end count with their wait so far, each for its workload.

        ``max_stall_ms``: the longest of them; ``stalled_ios``: those that took ``metrics.STALL_S`` (100 ms) or
        more; ``by_host``: per host with I/Os then, its longest, I/Os and stalled I/Os; ``frozen``: the workloads
        with a stalled I/O, longest first (host, longest, stalled, failed, ``waiting_at_end``: of the stalled, those
        still outstanding when the run ended)."""
        return stalls(self, at)

    def fault_target(self, f: Any) -> str:
        model = self.model
        if f.target:  # alua by volume or port group, owner (issue 32)
            return str(f.target)
        if f.replication:
            return "replication"
        if f.array is not None:
            return str(model.arrays[f.array].name)
        if f.what.startswith("replication"):
            return "replication"
        several_hosts = len(model.hosts) > 1  # path names are unique per host only
        return ", ".join(
            model.controllers[c].name + (f" on {model.hosts[model.controllers[c].host]}" if several_hosts else "") for c in f.controllers
        )

    def delays(self) -> list[dict[str, Any]]:
        """Each distinct input delay and its quantiles, so a user can check the fit of what they gave."""
        model = self.model
        items: list[tuple[str, Any]] = [(f"path {c.name}", c.one_way_latency) for c in model.controllers]
        for a in model.arrays:
            items += [(f"array {a.name} read service", a.read_service), (f"array {a.name} write service", a.write_service)]
        if model.replication is not None:
            items.append(("replication one-way", model.replication.one_way_latency))
        out: list[dict[str, Any]] = []
        seen: dict[Any, dict[str, Any]] = {}
        for where, d in items:
            if d in seen:
                seen[d]["used_by"].append(where)
                continue
            q = d.input_quantiles() if hasattr(d, "input_quantiles") else {}
            # the figures given (input) beside the distribution the engines draw from (model)
            model_q = {f"model_{k}_us": d.quantile(INPUT_QUANTILES[k]) * 1e6 for k in q} if hasattr(d, "quantile") else {}
            row = {"delay": d.describe(), "mean_us": d.mean * 1e6, **{f"input_{k}_us": v * 1e6 for k, v in q.items()}, **model_q, "used_by": [where]}
            seen[d] = row
            out.append(row)
        return out

    def links(self) -> list[dict[str, Any]]:
        """Each wire that serialised frames, per direction: utilisation and queueing (saturation shows here)."""
        m, model = self.metrics, self.model
        names = [c.name for c in model.controllers] + [ln.name for ln in model.links] + ["replication"]
        kinds = ["path"] * len(model.controllers) + ["link"] * len(model.links) + ["replication"]
        if model.inter_controller:  # each array's link between its controllers (issue 32)
            names += [f"{a.name}:inter-controller" for a in model.arrays]
            kinds += ["inter_controller"] * len(model.arrays)
        nc = len(model.controllers)
        switches = {s.name for s in model.switches}
        for i, ln in enumerate(model.links):  # the fabric (issue 33): an ISL joins two switches, a port link one
            if ln.between is not None:
                kinds[nc + i] = "isl" if all(x in switches for x in ln.between) else "port"
        held = m.link_held
        out = []
        for w in range(m.n_wires):
            for d, direction in enumerate(("to_array", "to_host")):
                frames = int(m.wire_frames[w, d])
                if frames == 0:
                    continue
                row = {
                    "name": names[w],
                    "kind": kinds[w],
                    "direction": direction,
                    "frames": frames,
                    "utilisation": wire_utilisation(m, w, d, model.end),
                    "queue_wait_us": float(m.wire_wait[w, d]) / frames * 1e6,
                }
                row.update(frame_columns(model, m, w, d))  # frames (issue 33): the payload in what the wire carried
                if held is not None:  # the fabric: the share of the window back-pressure held it (slow drain behind it)
                    row["held"] = float(held[w - nc, d]) / model.duration if nc <= w < nc + len(model.links) else 0.0
                out.append(row)
        return out

    def no_io_reason(self) -> str | None:
        """Why no I/O completed in the measured window (its latency is then undefined: NaN, null, a dash); None when some did.

        From the scenario's timeline: every path of the workloads' devices down (or standby/unavailable) from
        some time to the end; else the retries or failures; else the round trip against the run's length.
        """
        if self.ios:
            return None
        m, model = self.metrics, self.model
        devices = {j.device for j in model.jobs}
        paths = [p for p in model.paths if p.device in devices]
        up = {p.controller: True for p in paths}
        alua = {p.index: p.alua for p in paths}

        def state() -> str | None:
            """None when some path is usable, else why none is."""
            if any(up[p.controller] and alua[p.index] in ("AO", "ANO") for p in paths):
                return None
            return "every path down" if not any(up.values()) else "no usable path (each down, standby or unavailable)"

        why, since = state(), 0.0
        for f in model.faults:  # in time order
            if f.at >= model.end:
                break
            for c in f.controllers:
                if c in up and f.what in ("path_down", "array_down", "path_up", "array_up"):
                    up[c] = f.what.endswith("_up")
            for pi, st in zip(f.paths, f.states):  # alua by volume or port group, owner (issue 32)
                if pi in alua:
                    alua[pi] = st
            if f.what == "alua" and not f.paths:
                for p in paths:
                    if p.controller in f.controllers:
                        alua[p.index] = f.state or p.alua
            now = state()
            if now is None or why is None:
                since = f.at
            why = now
        if why is not None:
            return f"{why} from {since:g} s"
        if m.failed:
            return f"{m.failed:,} I/Os failed and none completed"
        if m.retried:
            return f"every attempt was retried ({m.retried:,} retries, {m.timed_out:,} timed out)"
        fastest = min((2 * p.one_way_latency.mean for p in paths), default=math.inf)
        if fastest >= model.end:
            return f"the fastest round trip ({format_duration(fastest)}) is longer than the run ({model.end:g} s)"
        return "no completion in the measured window"

    def warnings(self) -> list[str]:
        """What makes this run's figures suspect: retries or failures that outnumber completed I/Os many times over
        (a retry storm: an io_timeout shorter than an I/O takes, a 100 % loss, an apd_timeout of microseconds)."""
        m = self.metrics
        out = []
        hosts = self.model.host_params
        if m.retried >= 1000 and m.retried > RETRY_WARNING * max(m.completed, 1):
            causes = []
            if m.timed_out:
                shortest = min((h.io_timeout for h in hosts), default=math.inf)
                causes.append(f"{m.timed_out:,} attempts timed out after io_timeout ({format_duration(shortest)})")
            if m.frames_lost:
                causes.append(f"{m.frames_lost:,} frames lost")
            out.append(
                f"{m.retried:,} retries for {m.completed:,} completed I/Os"
                + (f" ({'; '.join(causes)})" if causes else "")
                + ": a retry storm, check io_timeout and loss_ppm"
            )
        if m.failed >= 1000 and m.failed > RETRY_WARNING * max(m.completed, 1):
            shortest = min((h.apd_timeout for h in hosts), default=math.inf)
            out.append(
                f"{m.failed:,} I/Os failed for {m.completed:,} completed: with no usable path each fails after apd_timeout "
                f"({format_duration(shortest)}) and its job issues the next at once"
            )
        return out

    @property
    def expectation_error(self) -> float | None:
        """IOPS against the file's ``expect_iops`` (0.05: 5 % above); None without one."""
        if self.expect_iops is None:
            return None
        return self.iops / self.expect_iops - 1.0

    def paths(self) -> list[dict[str, Any]]:
        """Per path: host, device, array, ALUA state, I/Os, share, IOPS, latency, I/Os in flight on average."""
        m, model = self.metrics, self.model
        total = max(self.ios, 1)
        # the state after the last fault on each path (path names are unique per host only)
        alua = {(e["device"], e["path"]): e["alua"] for e in m.events if "alua" in e and "path" in e}
        port_limited = self.port_limited  # once, not per path: it scans every port (16 k paths x 16 k ports)
        out = []
        summaries = summaries_us([m.path_hist[p.index] for p in model.paths])  # in numpy passes, not one by one
        for p, s in zip(model.paths, summaries, strict=True):
            h = m.path_hist[p.index]
            device = model.devices[p.device].name if model.devices else model.hosts[p.host]
            out.append(
                {
                    "name": p.name,
                    "host": model.hosts[p.host],
                    "device": device,
                    "array": model.arrays[p.array].name,
                    "alua": alua.get((device, p.name), p.alua),
                    "ios": h.n,
                    "share": h.n / total,
                    "iops": h.n / self.duration,
                    "latency_us": {"mean": s["mean"], "p50": s["p50"], "p99": s["p99"]},
                    # time-average I/Os in flight on the path over the measured window
                    "in_flight_mean": m.path_in_flight_area[p.index] / self.duration,
                    # QUEUE FULL statuses back on the path in the window (only with a target port limit)
                    **({"qfull": int(m.path_qfull[p.index])} if port_limited else {}),
                }
            )
        return out

    def hosts(self) -> list[dict[str, Any]]:
        """Per host: paths, I/Os, share, IOPS, MB/s, latency on its paths and I/Os in flight (:mod:`.breakdown`)."""
        from .breakdown import groups

        return groups(self, "host")

    def devices(self) -> list[dict[str, Any]]:
        """Per device (one host's view of one volume): as :meth:`hosts`."""
        from .breakdown import groups

        return groups(self, "device")

    def workloads(self) -> list[dict[str, Any]]:
        """Per workload (a VM or fio job, its numjobs copies together) and op: IOPS, MB/s, GAVG/KAVG/DAVG, ACTV/QUED
        and latency percentiles as the VM sees them (:mod:`.workloads`)."""
        from .workloads import workload_rows

        return workload_rows(self)

    def to_dict(self) -> dict[str, Any]:
        """This run in the JSON contract (extra keys beyond the contract are allowed)."""
        return run_dict(self)

    def cpus(self) -> list[dict[str, Any]]:
        """Per host with a cpu table: its cores' utilisation in the window, each and their mean (:mod:`.cpu`)."""
        from .cpu import cpu_json

        return cpu_json(self)

    def timeseries(self) -> pd.DataFrame:
        """One row per interval (ramp included; ``in_window`` marks the measured ones): IOPS, MB/s, latency, failed I/Os."""
        import pandas as pd

        m = self.metrics
        t = [i * m.interval for i in range(m.n_bins)]
        ios = m.ts_ios
        mean_us = [(s / n * 1e6) if n else math.nan for s, n in zip(m.ts_latency_sum, ios)]
        return pd.DataFrame(
            {
                "policy": self.label,
                "t_s": t,
                "iops": ios / m.interval,
                "mbps": m.ts_bytes / m.interval / 1e6,
                "latency_mean_us": mean_us,
                "latency_max_us": m.ts_latency_max * 1e6,
                "failed": m.ts_failed,
                "in_window": [self.model.ramp <= x < self.model.end for x in t],
            }
        )

    def path_share(self) -> pd.DataFrame:
        """Per interval and path: I/Os completed and their share of the interval's I/Os."""
        import pandas as pd

        m = self.metrics
        rows = []
        for b in range(m.n_bins):
            total = int(m.ts_ios[b])
            for p in self.model.paths:
                n = int(m.ts_path_ios[b, p.index])
                rows.append((self.label, b * m.interval, p.name, self.model.arrays[p.array].name, n, n / total if total else 0.0))
        return pd.DataFrame(rows, columns=["policy", "t_s", "path", "array", "ios", "share"])
