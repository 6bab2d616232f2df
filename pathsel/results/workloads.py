"""Figures per workload: what each VM (or fio job) saw, as esxtop's VM disk view shows it.

A workload is one ``[[workloads]]`` entry; its ``numjobs`` copies are one
VM (one world, in ESXi's words) and count together. Each row's figures come
from the recorder (exact counts, not traces), over the measured window:

* ``ios``, ``iops``, ``mbps``: its completions, per second, and megabytes
  (10^6 bytes) per second.
* ``gavg_us``: the mean latency as the VM sees it, issue to completion (its
  waits in the host's queues, for a path and its retries included);
  ``kavg_us`` the mean of its time queued in the host (esxtop's KAVG: before
  its device took it, and waiting for an NVMe-oF controller's tag);
  ``davg_us`` = GAVG - KAVG.
* ``p50_us``, ``p99_us``, ``p999_us``, ``max_us`` of that latency, from a
  histogram at the paths' resolution (:data:`pathsel.metrics.PATH_SUB_BITS`:
  a percentile within 3 %).
* ``actv``, ``qued``: the time averages of its I/Os active on the device and
  waiting in the host. Without a host queue (no queue depth, only closed
  loops) ACTV is its job slots (``iodepth`` x ``numjobs``) and QUED 0, as the
  device rows count them. Little's law holds per workload: ACTV + QUED is
  about IOPS x GAVG (I/Os that failed are in ACTV but not in GAVG).

``op`` is ``all`` for the workload, then ``read`` and ``write`` for each op
it ran (ACTV and QUED are not kept per op: None on those rows).
"""

from __future__ import annotations

import math
from typing import Any

from ..metrics import PATH_SUB_BITS, LogHistogram

__all__ = ["workload_rows", "workload_json", "workload_names", "COLUMNS"]

#: the DataFrame columns after policy
COLUMNS = [
    "workload",
    "host",
    "device",
    "op",
    "ios",
    "iops",
    "mbps",
    "gavg_us",
    "kavg_us",
    "davg_us",
    "actv",
    "qued",
    "p50_us",
    "p99_us",
    "p999_us",
    "max_us",
]


def workload_names(r: Any) -> list[str]:
    """Each workload's name, by its index (JobModel.vm)."""
    return _names(r)


def _names(r: Any) -> list[str]:
    """Each workload's name (Model.workloads; a model built without them names them by their jobs)."""
    model = r.model
    W = len(r.metrics.wl_by_op)
    names = list(model.workloads)[:W]
    by_vm = {j.vm: j.workload for j in model.jobs}
    return names + [by_vm.get(v, f"workload {v}") for v in range(len(names), W)]


def _figures(r: Any, h: LogHistogram, nbytes: int, kavg_sum: float) -> dict[str, Any]:
    s = h.summary_us()
    kavg = kavg_sum / h.n * 1e6 if h.n else math.nan
    return {
        "ios": h.n,
        "iops": h.n / r.duration,
        "mbps": nbytes / r.duration / 1e6,
        "gavg_us": s["mean"],
        "kavg_us": kavg,
        "davg_us": s["mean"] - kavg if h.n else math.nan,
        "p50_us": s["p50"],
        "p99_us": s["p99"],
        "p999_us": s["p999"],
        "max_us": s["max"],
    }


def workload_rows(r: Any) -> list[dict[str, Any]]:
    """A RunResult's rows per workload, in file order: the workload (``op`` "all"), then each op it ran."""
    m, model = r.metrics, r.model
    if not m.wl_by_op:
        return []
    where: dict[int, tuple[str, str]] = {}
    for j in model.jobs:
        if j.vm not in where:
            d = model.devices[j.device] if model.devices else None
            where[j.vm] = (model.hosts[j.host], d.name if d is not None else model.hosts[j.host])
    out = []
    for v, name in enumerate(_names(r)):
        host, device = where.get(v, ("", ""))
        ops = m.wl_by_op[v]
        total = LogHistogram(sub_bits=PATH_SUB_BITS)
        for h in ops.values():
            total.merge(h)
        base = {"workload": name, "host": host, "device": device}
        row = {
            **base,
            "op": "all",
            **_figures(r, total, int(m.wl_bytes[v].sum()), float(m.wl_kavg_sum[v].sum())),
            "actv": float(m.wl_area_actv[v]) / r.duration,
            "qued": float(m.wl_area_qued[v]) / r.duration,
        }
        out.append({k: row[k] for k in COLUMNS})
        for k, op in enumerate(("read", "write")):
            h = ops[op]
            if h.n:
                row = {**base, "op": op, **_figures(r, h, int(m.wl_bytes[v, k]), float(m.wl_kavg_sum[v, k])), "actv": None, "qued": None}
                out.append({c: row[c] for c in COLUMNS})
    return out


def workload_json(r: Any) -> list[dict[str, Any]]:
    """A RunResult's ``workloads`` list in the JSON: one entry per workload, its ops beneath it."""
    out: list[dict[str, Any]] = []
    for row in workload_rows(r):
        lat = {"mean": row["gavg_us"], "p50": row["p50_us"], "p99": row["p99_us"], "p999": row["p999_us"], "max": row["max_us"]}
        figures = {
            "ios": row["ios"],
            "iops": row["iops"],
            "mbps": row["mbps"],
            "latency_us": lat,
            "kavg_us": row["kavg_us"],
            "davg_us": row["davg_us"],
            "gavg_us": row["gavg_us"],
        }
        if row["op"] == "all":
            out.append(
                {
                    "name": row["workload"],
                    "host": row["host"],
                    "device": row["device"],
                    **figures,
                    "actv": row["actv"],
                    "qued": row["qued"],
                    "ops": {},
                }
            )
        else:
            out[-1]["ops"][row["op"]] = figures
    return out
