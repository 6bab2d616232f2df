"""The text tables ``pathsel simulate`` prints: the comparison (with the faults, host queues and CPUs beneath it), per
path, and the breakdowns per host, device, op and workload (``--by``). Every time in one unit, ms, named in each
column's header.

:class:`~pathsel.results.Result`'s ``table()``, ``paths_table()``, ``breakdown_table()`` and ``workloads_table()``
give these.
"""

from __future__ import annotations

import math
from typing import Any

from .bandwidth import BW_HEAD, fio_bw
from .story.words import past_end
from .used import used_cell

__all__ = ["table", "paths_table", "breakdown_table", "workloads_table", "IDLE_FOLDED", "idle_devices"]

#: idle devices in the host-queue table from this many on are one line per run, not a row each
IDLE_FOLDED = 2


def idle_devices(idle: list[dict[str, Any]], of: int) -> str:
    """The host-queue table's line for devices that had no I/O in the window: how many, the first few by name."""
    names = [str(q["device"]) for q in idle]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")
    return f"{len(idle):,} of its {of:,} devices had no I/O in the measured window (ACTV 0, QUED 0), not listed: {shown}"


def table(result: Any) -> str:
    """The comparison a person reads: one row per policy, and for a mix of reads and writes one row per op
    beneath it (as fio prints read and write apart). Times in ms."""
    head = f"{result.scenario}\n  engine={result.engine}  seed={result.seed}  measured {result.duration_s:g}s after {result.ramp_s:g}s ramp\n"
    cols = ["policy", "IOPS", BW_HEAD, "mean (ms)", "p50 (ms)", "p99 (ms)", "p99.9 (ms)", "max (ms)", "paths used", "measured IOPS"]
    rows = []
    for r in result.runs:
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
    for r in result.runs:
        if not r.ios:
            text += f"  {r.label}: no I/O completed in the measured window, so no latency (–): {r.no_io_reason()}\n"
    for r in result.runs:
        for w in r.warnings():
            text += f"  warning: {r.label}: {w}\n"
    if any(r.model.faults for r in result.runs):
        text += "\nfaults (recovery: IOPS back within 5 % of before; stall: longest I/O outstanding during the fault, issue to completion; frozen: VMs with an I/O of 100 ms or more)\n"
        for r in result.runs:
            for f in r.faults():
                if f.get("after_end"):
                    end = r.model.end
                    when = past_end([f["at_s"]], end)  # the story's word: "at" the end exactly, else "after"
                    text += f"  {r.label}: {f['at_s']:g}s {f['what']} {f['target']}: {when} the run's end at {end:g}s, so it did not happen (lengthen --duration)\n"
                    continue
                rec = (
                    "not recovered" if f["recovery_s"] is None else f"recovered in {f['recovery_s']:.3f}s" if f["recovery_s"] > 0 else "no dip of 5 %"
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
    if any(r.host_queued or r.port_limited for r in result.runs):
        text += "\nhost queues, as esxtop splits latency (KAVG: queued in the host; DAVG: device; GAVG = KAVG + DAVG; ms)\n"
        qfull = any(r.port_limited for r in result.runs)  # QUEUE FULL statuses, and DQLEN's mean under throttling
        qcols = ["policy", "device", "DQLEN", "ACTV", "QUED", "KAVG", "DAVG", "GAVG", "KAVG p99", *(["QFULL", "DQLEN mean"] if qfull else [])]
        qrows = []
        idle_lines = []
        for r in result.runs:
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
    if any(r.model.cpu is not None for r in result.runs):
        from .cpu import cpu_lines

        text += "\nhost CPU (busy in the window per core, as esxtop's %USED: submissions and completions)\n"
        text += "\n".join(cpu_lines(result)) + "\n"
    bad = [r.label for r in result.runs if not r.accounting["balanced"]]
    if bad:
        text += f"\nI/O ACCOUNTING DOES NOT BALANCE for {', '.join(bad)} (a bug: please report it)\n"
    return text


def paths_table(result: Any) -> str:
    """One row per policy and path: I/Os, share, IOPS, mean I/Os in flight, latency on the path (ms)."""
    several_hosts = any(len(r.model.hosts) > 1 for r in result.runs)
    qfull = any(r.port_limited for r in result.runs)
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
    for r in result.runs:
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


def breakdown_table(result: Any, by: str) -> str:
    """Per policy and host, device, op or workload (``by``), as text; times in ms."""
    if by == "workload":
        return workloads_table(result)
    if by == "op":
        df, names = result.ops(), ["op"]
    elif by in ("host", "device"):
        df, names = (result.hosts(), ["host"]) if by == "host" else (result.devices(), ["host", "device"])
        if "spec" in df.columns:  # a policy per device: each device's policy beside it
            df, names = df.fillna({"spec": ""}), [*names, "spec"]
    else:
        raise ValueError(f"by: 'host', 'device', 'op' or 'workload', not {by!r}")
    cols = ["policy", *names, "I/Os", "IOPS", BW_HEAD, "mean (ms)", "p50 (ms)", "p99 (ms)", "p99.9 (ms)", "max (ms)"]
    gavg = _host_gavg(result) if by == "host" else {}
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


def _host_gavg(result: Any) -> dict[tuple[str, str], tuple[float, float]]:
    """Per (policy, host): its workloads' mean and longest latency as they see it (GAVG, us), from their rows."""
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for r in result.runs:
        acc: dict[str, list[float]] = {}
        for w in r.workloads():
            if w["op"] == "all" and w["ios"]:
                a = acc.setdefault(w["host"], [0.0, 0.0, 0.0])
                a[0] += w["gavg_us"] * w["ios"]
                a[1] += w["ios"]
                a[2] = max(a[2], w["max_us"])
        out.update({(r.label, h): (a[0] / a[1], a[2]) for h, a in acc.items()})
    return out


def workloads_table(result: Any) -> str:
    """Per policy and workload (a VM or fio job), as esxtop's VM disk view: IOPS, MB/s, GAVG, KAVG, DAVG, ACTV,
    QUED, p50, p99, p99.9; a row per op beneath a workload that both reads and writes. Times in ms."""
    cols = ["policy", "workload", "device", "IOPS", "MB/s", "GAVG", "KAVG", "DAVG", "ACTV", "QUED", "p50", "p99", "p99.9"]

    def ms(v: Any) -> str:
        return f"{v / 1e3:.3f}" if v is not None and math.isfinite(v) else "-"

    rows = []
    for r in result.runs:
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
