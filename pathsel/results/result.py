"""Results: what a run measured, as numbers, tidy DataFrames, JSON and a table.

``Result`` holds one :class:`RunResult` per compared policy. DataFrames are in
long (tidy) form so ``groupby`` and ``plotly.express`` work directly:
``summary()`` one row per policy; ``ops()`` one row per policy x op (read,
write), as fio reports them; ``paths()`` one row per policy x path;
``timeseries()`` one row per policy x interval (``path_share()`` per path);
``events()`` one row per policy event or fault.

Text tables (``table()``, ``paths_table()``) give every time in one unit, ms,
named in each column's header.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..limits import RETRY_WARNING
from ..metrics import STALL_S, RunMetrics, summaries_us
from ..model import Model
from ..timing.distributions import INPUT_QUANTILES
from ..units import format_duration
from ..version import __version__
from .bandwidth import BW_HEAD, fio_bw
from .story import story
from .used import used_cell, used_paths
from .wires import frame_columns, wire_utilisation
from .words import past_end

if TYPE_CHECKING:
    import pandas as pd  # imported by each method that makes a DataFrame: pathsel simulate prints without pandas

__all__ = ["Result", "RunResult", "jsonable"]


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
        m, model = self.metrics, self.model
        # one entry per instant and kind: four paths cut at once are one fault to recover from
        groups: dict[tuple[float, str], list[Any]] = {}
        for f in model.faults:
            if not f.revert:
                groups.setdefault((f.at, f.what), []).append(f)
        times = sorted({at for at, _ in groups})
        out = []
        for (at, what), fs in groups.items():
            target = ", ".join(self.fault_target(f) for f in fs)
            if at >= model.end:
                # written in the scenario but after the run's end (a shorter --duration): it never happened, so it
                # has no recovery and no stall to report, where the series would have shown the last interval's
                out.append(
                    {
                        "at_s": at,
                        "what": what,
                        "target": target,
                        "iops_before": None,
                        "recovery_s": None,
                        "max_stall_ms": None,
                        "errors": 0,
                        "stalled_ios": 0,
                        "by_host": [],
                        "frozen": [],
                        "after_end": True,
                    }
                )
                continue
            # the window runs to the next later fault
            nxt = next((t for t in times if t > at), model.end)
            rec, st = _recovery(m, at, nxt, model.ramp, model.end), self.stalls(at)
            errors = rec.pop("errors")  # the old order: the stall before the errors, its details after
            out.append({"at_s": at, "what": what, "target": target, **rec, "max_stall_ms": st.pop("max_stall_ms"), "errors": errors, **st})
        return out

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
        m, model = self.metrics, self.model
        fw, fs = m.fault_windows, m.fault_stall
        ks = [k for k in range(fw.shape[0]) if fw[k, 0] == at]
        stall = 0.0
        by_host: dict[str, dict[str, Any]] = {}
        frozen: list[dict[str, Any]] = []
        if ks:
            k = ks[0]
            names = self._workload_names()
            hosts = self._workload_hosts()
            # the I/Os still outstanding at the end that count in this window (issued before its end): per workload,
            # how many, how many had waited STALL_S or more, and the longest wait so far
            waiting: dict[int, list[float]] = {}
            job_vm = [j.vm for j in model.jobs]
            ends = m.in_flight_at_end if m.in_flight_at_end is not None else ()
            for job, issued in ends:
                if _window_of(fw, float(issued), model.end) == k:
                    w = waiting.setdefault(job_vm[int(job)], [0, 0, 0.0])
                    wait = model.end - float(issued)
                    w[0] += 1
                    w[1] += wait >= STALL_S
                    w[2] = max(w[2], wait)
            for v in range(fs.shape[1]):
                ios, longest, stalled, failed = (float(x) for x in fs[k, v])
                n_wait, n_wait_stalled, longest_wait = waiting.get(v, (0, 0, 0.0))
                if ios == 0 and n_wait == 0:
                    continue
                longest = max(longest, longest_wait)
                stall = max(stall, longest)
                h = by_host.setdefault(hosts.get(v, ""), {"host": hosts.get(v, ""), "max_stall_ms": 0.0, "ios": 0, "stalled_ios": 0})
                h["max_stall_ms"] = max(h["max_stall_ms"], longest * 1e3)
                h["ios"] += int(ios) + int(n_wait)
                h["stalled_ios"] += int(stalled) + int(n_wait_stalled)
                if stalled or n_wait_stalled:
                    frozen.append(
                        {
                            "workload": names[v],
                            "host": hosts.get(v, ""),
                            "max_stall_ms": longest * 1e3,
                            "stalled_ios": int(stalled) + int(n_wait_stalled),
                            "failed": int(failed),
                            "waiting_at_end": int(n_wait_stalled),
                        }
                    )
            # the run's oldest I/O still in flight at the end, in the window the recorder would give it
            if _window_of(fw, m.oldest_in_flight, model.end) == k and m.oldest_in_flight < model.end:
                stall = max(stall, model.end - m.oldest_in_flight)
        frozen.sort(key=lambda x: (-x["max_stall_ms"], x["host"], x["workload"]))
        return {
            "max_stall_ms": stall * 1e3,
            "stalled_ios": sum(h["stalled_ios"] for h in by_host.values()),
            "by_host": sorted(by_host.values(), key=lambda h: (-h["max_stall_ms"], h["host"])),
            "frozen": frozen,
        }

    def _workload_names(self) -> list[str]:
        from .workloads import workload_names

        return workload_names(self)

    def _workload_hosts(self) -> dict[int, str]:
        """Each workload's host (its first job's)."""
        out: dict[int, str] = {}
        for j in self.model.jobs:
            out.setdefault(j.vm, self.model.hosts[j.host])
        return out

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
        by_op = {o["op"]: {k: o[k] for k in ("iops", "mbps", "latency_us")} for o in self.ops()}
        d: dict[str, Any] = {
            "policy": self.label,
            "spec": self.policy,
            "iops": self.iops,
            "mbps": self.mbps,
            "latency_us": self.latency_us,
            "ops": by_op,
            "paths": [
                {k: v for k, v in p.items() if k in ("name", "array", "alua", "ios", "share", "iops", "in_flight_mean", "latency_us", "qfull")}
                for p in self.paths()
            ],
            "little": self.little,
            "latency_split_us": self.latency_split_us,
            "queues": self.device_queues(),
            "accounting": self.accounting,
            "faults": self.faults(),
            "links": self.links(),
            "delays": self.delays(),
            "device_config": self.metrics.config_strings,
            "events": jsonable(self.metrics.events),
            "hosts": self.hosts(),
            "devices": self.devices(),
            "workloads": self._workloads_json(),
        }
        if self.model.cpu is not None:  # only then: a run without a cpu table keeps its JSON byte for byte
            d["cpus"] = self.cpus()
        if not self.ios:
            d["no_io"] = self.no_io_reason()  # and every latency is null
        warned = self.warnings()
        if warned:
            d["warnings"] = warned
        if self.expect_iops is not None:
            d["expected"] = {
                "iops": self.expect_iops,
                "error": self.expectation_error,
                "tolerance": self.expect_tolerance,
                "within_tolerance": abs(self.expectation_error or 0.0) <= self.expect_tolerance,
                "source": self.expect_source,
            }
        return d

    def cpus(self) -> list[dict[str, Any]]:
        """Per host with a cpu table: its cores' utilisation in the window, each and their mean (:mod:`.cpu`)."""
        from .cpu import cpu_json

        return cpu_json(self)

    def _workloads_json(self) -> list[dict[str, Any]]:
        from .workloads import workload_json

        return workload_json(self)

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


def _window_of(fw: Any, issued: float, done: float) -> int | None:
    """The fault window an I/O outstanding from ``issued`` to ``done`` counts in, as the recorder's rec_stall."""
    live = [k for k in range(fw.shape[0]) if fw[k, 1] > issued and fw[k, 0] < done]
    return next((k for k in live if fw[k, 2] == 0.0), live[0] if live else None)


#: idle devices in the host-queue table from this many on are one line per run, not a row each
IDLE_FOLDED = 2


def idle_devices(idle: list[dict[str, Any]], of: int) -> str:
    """The host-queue table's line for devices that had no I/O in the window: how many, the first few by name."""
    names = [str(q["device"]) for q in idle]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")
    return f"{len(idle):,} of its {of:,} devices had no I/O in the measured window (ACTV 0, QUED 0), not listed: {shown}"


def _recovery(m: RunMetrics, at: float, until: float, ramp: float, end: float = math.inf) -> dict[str, Any]:
    """Recovery of one fault from the per-interval series (resolution: the scenario's interval); its stall is
    :meth:`RunResult.stalls` (per I/O outstanding during the fault, not per interval).

    Level before: mean IOPS over up to 10 s of whole intervals before the fault's
    interval (after the ramp when possible). Recovered: the first interval, from
    the fault's on, where this and the next interval are both at 95 % of it.
    """
    w = m.interval
    b0 = min(int(at / w), m.n_bins - 1)
    b_end = min(max(int(math.ceil(until / w - 1e-9)), b0 + 1), m.n_bins)
    n_before = max(1, int(round(min(10.0, at) / w)))
    lo = max(0, b0 - n_before)
    if b0 - lo > int(round(ramp / w)) and lo < int(round(ramp / w)):
        lo = int(round(ramp / w))
    before = m.ts_ios[lo:b0]
    level = float(before.mean()) if len(before) else math.nan
    recovered = None
    if level > 0:
        need = 0.95 * level
        for b in range(b0, b_end):
            if m.ts_ios[b] >= need and (b + 1 >= b_end or m.ts_ios[b + 1] >= need):
                recovered = max(0.0, b * w - at) if b > b0 else 0.0
                break
    return {
        "iops_before": level / w if level == level else None,
        "recovery_s": recovered,
        "errors": int(m.ts_failed[b0:b_end].sum()),
    }


def jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


@dataclass
class Result:
    """The comparison: one RunResult per policy, all on the same scenario and seed."""

    scenario: str
    source: str
    engine: str
    seed: int
    duration_s: float
    ramp_s: float
    runs: list[RunResult] = field(default_factory=list)
    config: Any = None  # the validated scenario (ScenarioModel) the runs came from, for describing the set-up

    def __getitem__(self, label: str) -> RunResult:
        for r in self.runs:
            if r.label == label or r.policy == label:
                return r
        raise KeyError(label)

    def summary(self) -> pd.DataFrame:
        """One row per policy: IOPS, MB/s, latency percentiles (us), paths used (>= 0.5 % of their device's I/Os), the file's expected IOPS."""
        import pandas as pd

        rows = []
        for r in self.runs:
            lat = r.latency_us
            rows.append(
                {
                    "policy": r.label,
                    "iops": r.iops,
                    "mbps": r.mbps,
                    "mean_us": lat["mean"],
                    "p50_us": lat["p50"],
                    "p99_us": lat["p99"],
                    "p999_us": lat["p999"],
                    "max_us": lat["max"],
                    "paths_used": len(used_paths(r)),  # >= 0.5 % of its device's I/Os (results/used.py)
                    "expected_iops": r.expect_iops,
                }
            )
        return pd.DataFrame(rows)

    def ops(self) -> pd.DataFrame:
        """One row per policy x op that ran (read, write): the summary's columns, per op, as fio prints them."""
        import pandas as pd

        rows = []
        for r in self.runs:
            for o in r.ops():
                lat = o["latency_us"]
                rows.append(
                    {
                        "policy": r.label,
                        "op": o["op"],
                        "ios": o["ios"],
                        "iops": o["iops"],
                        "mbps": o["mbps"],
                        "mean_us": lat["mean"],
                        "p50_us": lat["p50"],
                        "p99_us": lat["p99"],
                        "p999_us": lat["p999"],
                        "max_us": lat["max"],
                    }
                )
        return pd.DataFrame(rows, columns=["policy", "op", "ios", "iops", "mbps", "mean_us", "p50_us", "p99_us", "p999_us", "max_us"])

    def paths(self) -> pd.DataFrame:
        """One row per policy x path: host, device, array, ALUA state, I/Os, share, IOPS, latency (us), I/Os in flight."""
        import pandas as pd

        rows = []
        for r in self.runs:
            for p in r.paths():
                rows.append(
                    {
                        "policy": r.label,
                        "path": p["name"],
                        "host": p["host"],
                        "device": p["device"],
                        "array": p["array"],
                        "alua": p["alua"],
                        "ios": p["ios"],
                        "share": p["share"],
                        "iops": p["iops"],
                        "mean_us": p["latency_us"]["mean"],
                        "p50_us": p["latency_us"]["p50"],
                        "p99_us": p["latency_us"]["p99"],
                        "in_flight_mean": p["in_flight_mean"],
                    }
                )
        return pd.DataFrame(rows)

    def hosts(self) -> pd.DataFrame:
        """One row per policy x host: paths, paths used, I/Os, share, IOPS, MB/s, latency on its paths (us), I/Os in flight."""
        return self._groups("host", ["host"])

    def devices(self) -> pd.DataFrame:
        """One row per policy x device (one host's view of one volume): as :meth:`hosts`, with device and volume."""
        own = any(d.policy is not None for r in self.runs for d in r.model.devices)  # a policy per device: its spec
        return self._groups("device", ["host", "device", "volume", *(["spec"] if own else [])])

    def workloads(self) -> pd.DataFrame:
        """One row per policy x workload (a VM or fio job) x op (``all``, then each op it ran): IOPS, MB/s, GAVG, KAVG,
        DAVG (us), ACTV, QUED and latency percentiles (us) as the VM sees them (:mod:`pathsel.results.workloads`)."""
        import pandas as pd

        from .workloads import COLUMNS

        rows = [{"policy": r.label, **w} for r in self.runs for w in r.workloads()]
        return pd.DataFrame(rows, columns=["policy", *COLUMNS])

    def workloads_table(self) -> str:
        """Per policy and workload (a VM or fio job), as esxtop's VM disk view: IOPS, MB/s, GAVG, KAVG, DAVG, ACTV,
        QUED, p50, p99, p99.9; a row per op beneath a workload that both reads and writes. Times in ms."""
        cols = ["policy", "workload", "device", "IOPS", "MB/s", "GAVG", "KAVG", "DAVG", "ACTV", "QUED", "p50", "p99", "p99.9"]

        def ms(v: Any) -> str:
            return f"{v / 1e3:.3f}" if v is not None and math.isfinite(v) else "-"

        rows = []
        for r in self.runs:
            ws = r.workloads()
            several = {w["workload"] for w in ws if w["op"] != "all" and sum(1 for x in ws if x["workload"] == w["workload"]) > 2}
            for w in ws:
                if w["op"] != "all" and w["workload"] not in several:
                    continue
                head = [r.label, w["workload"], w["device"]] if w["op"] == "all" else ["", f"  {w['op']}", ""]
                rows.append(
                    [
                        *head,
                        f"{w['iops']:,.0f}",
                        f"{w['mbps']:,.1f}",
                        *(ms(w[k]) for k in ("gavg_us", "kavg_us", "davg_us")),
                        *("" if w[k] is None else f"{w[k]:.1f}" for k in ("actv", "qued")),
                        *(ms(w[k]) for k in ("p50_us", "p99_us", "p999_us")),
                    ]
                )
        what = "per workload: a VM or fio job, as esxtop's VM view (latency as the VM sees it, issue to completion; ms)"
        return what + "\n" + "\n".join(_render(cols, rows, right=set(range(3, len(cols))))) + "\n"

    def _groups(self, by: str, names: list[str]) -> pd.DataFrame:
        import pandas as pd

        from .breakdown import COLUMNS, groups

        rows = []
        for r in self.runs:
            for g in groups(r, by):
                lat = g.pop("latency_us")
                rows.append({"policy": r.label, **g, **{f"{k}_us": v for k, v in lat.items()}})
        return pd.DataFrame(rows, columns=["policy", *names, *COLUMNS])

    def breakdown_table(self, by: str) -> str:
        """Per policy and host, device, op or workload (``by``), as text; times in ms."""
        if by == "workload":
            return self.workloads_table()
        if by == "op":
            df, names = self.ops(), ["op"]
        elif by in ("host", "device"):
            df, names = (self.hosts(), ["host"]) if by == "host" else (self.devices(), ["host", "device"])
            if "spec" in df.columns:  # a policy per device: each device's policy beside it
                df, names = df.fillna({"spec": ""}), [*names, "spec"]
        else:
            raise ValueError(f"by: 'host', 'device', 'op' or 'workload', not {by!r}")
        cols = ["policy", *names, "I/Os", "IOPS", BW_HEAD, "mean (ms)", "p50 (ms)", "p99 (ms)", "p99.9 (ms)", "max (ms)"]
        gavg = self._host_gavg() if by == "host" else {}
        if by == "host":  # the VMs' view beside the paths': a VM waiting for a retry shows in GAVG, not on a path
            cols += ["GAVG mean (ms)", "GAVG max (ms)"]
        rows = []
        for row in df.itertuples(index=False):
            lat = {k: getattr(row, f"{k}_us") for k in ("mean", "p50", "p99", "p999", "max")}
            vm = gavg.get((row.policy, str(getattr(row, "host", ""))))
            rows.append(
                [
                    row.policy,
                    *(str(getattr(row, n)) for n in names),
                    f"{row.ios:,}",
                    *(_figures(row.iops, row.mbps, lat) if row.ios else [f"{row.iops:,.0f}", fio_bw(row.mbps), *"-----"]),
                    *([] if by != "host" else [f"{vm[0] / 1e3:.3f}", f"{vm[1] / 1e3:.3f}"] if vm else ["-", "-"]),
                ]
            )
        what = {
            "op": "per op (reads and writes apart, as fio prints them)",
            "host": "per host (latency: the time on its paths, as DAVG; GAVG: as its VMs see it, issue to completion, retries and host queues included)",
            "device": "per device: one host's view of one volume (latency: the time on its paths)",
        }[by]
        return what + "\n" + "\n".join(_render(cols, rows, right=set(range(1 + len(names), len(cols))))) + "\n"

    def _host_gavg(self) -> dict[tuple[str, str], tuple[float, float]]:
        """Per (policy, host): its workloads' mean and longest latency as they see it (GAVG, us), from their rows."""
        out: dict[tuple[str, str], tuple[float, float]] = {}
        for r in self.runs:
            acc: dict[str, list[float]] = {}
            for w in r.workloads():
                if w["op"] == "all" and w["ios"]:
                    a = acc.setdefault(w["host"], [0.0, 0.0, 0.0])
                    a[0] += w["gavg_us"] * w["ios"]
                    a[1] += w["ios"]
                    a[2] = max(a[2], w["max_us"])
            out.update({(r.label, h): (a[0] / a[1], a[2]) for h, a in acc.items()})
        return out

    def timeseries(self) -> pd.DataFrame:
        """One row per policy x interval: IOPS, MB/s, latency and failed I/Os; ``in_window`` marks the measured rows."""
        import pandas as pd

        return pd.concat([r.timeseries() for r in self.runs], ignore_index=True)

    def path_share(self) -> pd.DataFrame:
        """One row per policy x interval x path: I/Os completed and their share of the interval's I/Os."""
        import pandas as pd

        return pd.concat([r.path_share() for r in self.runs], ignore_index=True)

    def events(self) -> pd.DataFrame:
        """One row per policy event or fault, with the host of the device it happened on ("" for a fault)."""
        import pandas as pd

        rows = []
        for r in self.runs:
            host_of = {d.name: r.model.hosts[d.host] for d in r.model.devices}
            rows += [{"policy": r.label, "host": host_of.get(e.get("device", ""), ""), **e} for e in r.metrics.events]
        return pd.DataFrame(rows)

    def cpus(self) -> pd.DataFrame:
        """One row per policy x core of every host with a cpu table: host, core, NUMA node, utilisation (:mod:`.cpu`)."""
        import pandas as pd

        from .cpu import cpu_rows

        rows = [{"policy": r.label, **c} for r in self.runs for c in cpu_rows(r)]
        return pd.DataFrame(rows, columns=["policy", "host", "core", "node", "utilisation"])

    def faults(self) -> pd.DataFrame:
        """One row per policy x scenario fault: recovery time, longest stall (over every I/O outstanding during
        it), I/Os of 100 ms or more and the VMs they froze, errors."""
        import pandas as pd

        rows = [{"policy": r.label, **f, "frozen": ", ".join(w["workload"] for w in f["frozen"])} for r in self.runs for f in r.faults()]
        cols = ["policy", "at_s", "what", "target", "iops_before", "recovery_s", "max_stall_ms", "stalled_ios", "frozen", "errors"]
        return pd.DataFrame(rows, columns=cols)

    def links(self) -> pd.DataFrame:
        """One row per policy x wire x direction: utilisation and mean queueing wait."""
        import pandas as pd

        rows = [{"policy": r.label, **w} for r in self.runs for w in r.links()]
        framed = ["payload_mb_s", "payload_share"] if any("payload_mb_s" in w for w in rows) else []  # a transport (issue 33)
        held = ["held"] if any("held" in w for w in rows) else []  # the fabric (issue 33): back-pressure's share of the window
        return pd.DataFrame(rows, columns=["policy", "name", "kind", "direction", "frames", "utilisation", "queue_wait_us", *framed, *held])

    def delays(self) -> pd.DataFrame:
        """Every distinct input delay with its given (input_*) and modelled (model_*) quantiles."""
        import pandas as pd

        rows = self.runs[0].delays() if self.runs else []
        return pd.DataFrame([{**r, "used_by": ", ".join(r["used_by"])} for r in rows])

    def accounting(self) -> pd.DataFrame:
        """One row per policy: issued = completed + failed + in flight at the end."""
        import pandas as pd

        return pd.DataFrame([{"policy": r.label, **r.accounting} for r in self.runs])

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``pathsel simulate --json`` prints, as Python objects."""
        return {
            "pathsel_version": __version__,
            "scenario": self.scenario,
            "source": self.source,
            "engine": self.engine,
            "seed": self.seed,
            "duration_s": self.duration_s,
            "ramp_s": self.ramp_s,
            "runs": [r.to_dict() for r in self.runs],
            "story": [{"policy": label, "sentences": said} for label, said in self.story()],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The JSON document ``pathsel simulate --json`` prints (strict JSON: no NaN, no Infinity)."""
        return json.dumps(jsonable(self.to_dict()), indent=indent, allow_nan=False)  # strict JSON: no NaN, no Infinity

    def story(self) -> list[tuple[str | None, list[str]]]:
        """What happened, in words (:func:`pathsel.results.story.story`): an overview, then sentences per policy."""
        return story(self)

    def table(self) -> str:
        """The comparison a person reads: one row per policy, and for a mix of reads and writes one row per op
        beneath it (as fio prints read and write apart). Times in ms."""
        head = f"{self.scenario}\n  engine={self.engine}  seed={self.seed}  measured {self.duration_s:g}s after {self.ramp_s:g}s ramp\n"
        cols = ["policy", "IOPS", BW_HEAD, "mean (ms)", "p50 (ms)", "p99 (ms)", "p99.9 (ms)", "max (ms)", "paths used", "measured IOPS"]
        rows = []
        for r in self.runs:
            expected = ""
            if r.expect_iops is not None:
                err = r.expectation_error or 0.0
                mark = "ok" if abs(err) <= r.expect_tolerance else "OUTSIDE"
                expected = f"{r.expect_iops:,.0f} ({err:+.1%}, {mark} at ±{r.expect_tolerance:.0%})"
            # per device with several (a cluster's paths each carry a sliver of the run), without paths()'s percentiles
            rows.append([r.label, *_figures(r.iops, r.mbps, r.latency_us), used_cell(r), expected])
            ops = r.ops()
            if len(ops) > 1:
                rows += [[f"  {o['op']}", *_figures(o["iops"], o["mbps"], o["latency_us"]), "", ""] for o in ops]
        lines = _render(cols, rows, right={1, 2, 3, 4, 5, 6, 7})
        text = head + "\n" + "\n".join(lines) + "\n"
        for r in self.runs:
            if not r.ios:
                text += f"  {r.label}: no I/O completed in the measured window, so no latency (–): {r.no_io_reason()}\n"
        for r in self.runs:
            for w in r.warnings():
                text += f"  warning: {r.label}: {w}\n"
        if any(r.model.faults for r in self.runs):
            text += "\nfaults (recovery: IOPS back within 5 % of before; stall: longest I/O outstanding during the fault, issue to completion; frozen: VMs with an I/O of 100 ms or more)\n"
            for r in self.runs:
                for f in r.faults():
                    if f.get("after_end"):
                        end = r.model.end
                        when = past_end([f["at_s"]], end)  # the story's word: "at" the end exactly, else "after"
                        text += f"  {r.label}: {f['at_s']:g}s {f['what']} {f['target']}: {when} the run's end at {end:g}s, so it did not happen (lengthen --duration)\n"
                        continue
                    rec = (
                        "not recovered"
                        if f["recovery_s"] is None
                        else f"recovered in {f['recovery_s']:.3f}s"
                        if f["recovery_s"] > 0
                        else "no dip of 5 %"
                    )
                    frozen = ""
                    if f["frozen"]:  # the VMs that froze, by host: the stall is theirs, not the cluster's
                        names = [w["workload"] for w in f["frozen"]]
                        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
                        frozen = f", frozen: {shown} ({f['stalled_ios']:,} I/Os of 100 ms or more)"
                    text += (
                        f"  {r.label}: {f['at_s']:g}s {f['what']} {f['target']}: {rec}, "
                        f"longest stall {f['max_stall_ms']:.1f} ms{frozen}, {f['errors']} failed I/Os\n"
                    )
        if any(r.host_queued or r.port_limited for r in self.runs):
            text += "\nhost queues, as esxtop splits latency (KAVG: queued in the host; DAVG: device; GAVG = KAVG + DAVG; ms)\n"
            qfull = any(r.port_limited for r in self.runs)  # QUEUE FULL statuses, and DQLEN's mean under throttling
            qcols = ["policy", "device", "DQLEN", "ACTV", "QUED", "KAVG", "DAVG", "GAVG", "KAVG p99", *(["QFULL", "DQLEN mean"] if qfull else [])]
            qrows = []
            idle_lines = []
            for r in self.runs:
                k99 = r.metrics.kavg.summary_us()["p99"] / 1e3 if r.metrics.kavg.n else None
                queues = r.device_queues()
                # devices that had nothing to do in the window (no workload on them): one line per run, not a row each
                idle = [q for q in queues if not q["ios"] and not q["actv"] and not q["qued"]]
                if len(idle) >= IDLE_FOLDED:
                    queues = [q for q in queues if q["ios"] or q["actv"] or q["qued"]]  # one pass, not a list search each
                    idle_lines.append(f"  {r.label}: {idle_devices(idle, len(queues) + len(idle))}")
                for q in queues:
                    ms = [f"{q[k] / 1e3:.3f}" if q[k] is not None else "-" for k in ("kavg_us", "davg_us", "gavg_us")]
                    extra = []
                    if qfull:
                        mean = q.get("dqlen_mean")
                        extra = [f"{q.get('qfull', 0):,}", "-" if mean is None else f"{mean:.1f}"]
                    qrows.append(
                        [
                            r.label,
                            q["device"],
                            str(q["dqlen"] or "-"),
                            f"{q['actv']:.1f}",
                            f"{q['qued']:.1f}",
                            *ms,
                            "-" if k99 is None else f"{k99:.3f}",
                            *extra,
                        ]
                    )
            text += "\n".join(_render(qcols, qrows, right=set(range(2, len(qcols))))) + "\n" if qrows else ""
            text += "".join(line + "\n" for line in idle_lines)
        if any(r.model.cpu is not None for r in self.runs):
            from .cpu import cpu_lines

            text += "\nhost CPU (busy in the window per core, as esxtop's %USED: submissions and completions)\n"
            text += "\n".join(cpu_lines(self)) + "\n"
        bad = [r.label for r in self.runs if not r.accounting["balanced"]]
        if bad:
            text += f"\nI/O ACCOUNTING DOES NOT BALANCE for {', '.join(bad)} (a bug: please report it)\n"
        return text

    def paths_table(self) -> str:
        """One row per policy and path: I/Os, share, IOPS, mean I/Os in flight, latency on the path (ms)."""
        several_hosts = any(len(r.model.hosts) > 1 for r in self.runs)
        qfull = any(r.port_limited for r in self.runs)
        cols = [
            "policy",
            *(["host"] if several_hosts else []),
            "path",
            "array",
            "ALUA",
            "I/Os",
            "share",
            "IOPS",
            "in flight",
            "mean (ms)",
            "p50 (ms)",
            "p99 (ms)",
            *(["QFULL"] if qfull else []),
        ]
        rows = []
        for r in self.runs:
            for p in r.paths():
                lat = p["latency_us"]
                ms = [f"{lat[k] / 1e3:.3f}" if p["ios"] else "-" for k in ("mean", "p50", "p99")]
                rows.append(
                    [
                        r.label,
                        *([p["host"]] if several_hosts else []),
                        p["name"],
                        p["array"],
                        p["alua"],
                        f"{p['ios']:,}",
                        f"{p['share']:.3f}",
                        f"{p['iops']:,.0f}",
                        f"{p['in_flight_mean']:.2f}",
                        *ms,
                        *([f"{p.get('qfull', 0):,}"] if qfull else []),
                    ]
                )
        first = 5 if several_hosts else 4
        return "\n".join(_render(cols, rows, right=set(range(first, len(cols))))) + "\n"


def _figures(iops: float, mbps: float, latency_us: dict[str, float]) -> list[str]:
    """IOPS, MiB/s (MB/s) as fio prints them, and the latency columns (ms) of a comparison row; a dash for a latency no I/O gave."""
    return [
        f"{iops:,.0f}",
        fio_bw(mbps),
        *(f"{latency_us[k] / 1e3:.3f}" if math.isfinite(latency_us[k]) else "–" for k in ("mean", "p50", "p99", "p999", "max")),
    ]


def _render(cols: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    """A plain-text table: header, rule, rows; columns in ``right`` right-aligned."""
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c) for i, c in enumerate(cols)]

    def fmt(row: list[str]) -> str:
        return "  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(row, widths))).rstrip()

    return [fmt(cols), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
