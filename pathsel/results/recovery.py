"""Each fault of a run in figures: its recovery (IOPS back within 5 % of before) and its stall per host and VM.

:meth:`RunResult.faults <pathsel.results.RunResult.faults>` and
:meth:`RunResult.stalls <pathsel.results.RunResult.stalls>` give these; the story tells them in words
(:mod:`pathsel.results.story.faults`, :mod:`pathsel.results.story.stall`).
"""

from __future__ import annotations

import math
from typing import Any

from ..metrics import STALL_S, RunMetrics

__all__ = ["fault_rows", "stalls"]


def fault_rows(r: Any) -> list[dict[str, Any]]:
    """The rows of :meth:`RunResult.faults <pathsel.results.RunResult.faults>`: one per instant and kind of fault."""
    m, model = r.metrics, r.model
    # one entry per instant and kind: four paths cut at once are one fault to recover from
    groups: dict[tuple[float, str], list[Any]] = {}
    for f in model.faults:
        if not f.revert:
            groups.setdefault((f.at, f.what), []).append(f)
    times = sorted({at for at, _ in groups})
    out = []
    for (at, what), fs in groups.items():
        target = ", ".join(r.fault_target(f) for f in fs)
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
        rec, st = _recovery(m, at, nxt, model.ramp, model.end), stalls(r, at)
        errors = rec.pop("errors")  # the old order: the stall before the errors, its details after
        out.append({"at_s": at, "what": what, "target": target, **rec, "max_stall_ms": st.pop("max_stall_ms"), "errors": errors, **st})
    return out


def stalls(r: Any, at: float) -> dict[str, Any]:
    """The stall of the fault at ``at``: :meth:`RunResult.stalls <pathsel.results.RunResult.stalls>`."""
    m, model = r.metrics, r.model
    fw, fs = m.fault_windows, m.fault_stall
    ks = [k for k in range(fw.shape[0]) if fw[k, 0] == at]
    stall = 0.0
    by_host: dict[str, dict[str, Any]] = {}
    frozen: list[dict[str, Any]] = []
    if ks:
        k = ks[0]
        names = _workload_names(r)
        hosts = _workload_hosts(r)
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


def _workload_names(r: Any) -> list[str]:
    from .workloads import workload_names

    return workload_names(r)


def _workload_hosts(r: Any) -> dict[int, str]:
    """Each workload's host (its first job's)."""
    out: dict[int, str] = {}
    for j in r.model.jobs:
        out.setdefault(j.vm, r.model.hosts[j.host])
    return out


def _window_of(fw: Any, issued: float, done: float) -> int | None:
    """The fault window an I/O outstanding from ``issued`` to ``done`` counts in, as the recorder's rec_stall."""
    live = [k for k in range(fw.shape[0]) if fw[k, 1] > issued and fw[k, 0] < done]
    return next((k for k in live if fw[k, 2] == 0.0), live[0] if live else None)


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
