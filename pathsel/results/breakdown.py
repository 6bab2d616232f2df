"""Breakdowns of a run per host and per device (one host's view of one volume).

A scenario with two hosts gives one comparison row per policy; these split
it. I/Os, IOPS and MB/s add up to the run's; latency is the time on the
paths (each path's histogram, merged), so a retry's wait for another path
counts in the run's overall figures only. Per op (read, write) see
``Result.ops()``: the engines keep reads and writes apart overall, not per
path.

``Result.hosts()`` and ``Result.devices()`` give these as DataFrames,
``pathsel simulate --by host|device|op`` as text, and the JSON has a
``hosts`` and a ``devices`` list per run.
"""

from __future__ import annotations

from typing import Any

from ..metrics import PATH_SUB_BITS, LogHistogram
from .used import used_paths

__all__ = ["groups", "COLUMNS"]

#: the DataFrame columns after policy and the group's names
COLUMNS = ["paths", "paths_used", "ios", "share", "iops", "mbps", "mean_us", "p50_us", "p99_us", "p999_us", "max_us", "in_flight_mean"]


def groups(r: Any, by: str) -> list[dict[str, Any]]:
    """One row per host (``by="host"``) or device (``by="device"``) of a RunResult, in the model's order."""
    if by not in ("host", "device"):
        raise ValueError(f"by: 'host' or 'device', not {by!r}")
    model, m = r.model, r.metrics
    total = max(r.ios, 1)
    keyed: dict[Any, list[Any]] = {}
    for p in model.paths:
        key = p.host if by == "host" else p.device
        keyed.setdefault(key, []).append(p)
    if by == "host":  # hosts with no path still ran nothing: list them, so the table names every host
        order = list(range(len(model.hosts)))
    else:
        order = [d.index for d in model.devices] or sorted(keyed)
    own = any(d.policy is not None for d in model.devices)
    used = {p.index for p in used_paths(r)}  # the table's "paths used": >= 0.5 % of its device's I/Os
    out = []
    for key in order:
        paths = keyed.get(key, [])
        hist = LogHistogram(sub_bits=PATH_SUB_BITS)
        for p in paths:
            hist.merge(m.path_hist[p.index])
        ios = hist.n
        row: dict[str, Any] = {}
        if by == "host":
            row["host"] = model.hosts[key]
        else:
            d = model.devices[key] if model.devices else None
            row["host"] = model.hosts[d.host if d is not None else paths[0].host]
            row["device"] = d.name if d is not None else row["host"]
            row["volume"] = d.volume if d is not None else ""
            if own:  # a policy per device (issue 32): each device's; absent when every device runs the run's
                row["spec"] = d.policy.text if d is not None and d.policy is not None else r.policy
        row.update(
            {
                "paths": len(paths),
                "paths_used": sum(1 for p in paths if p.index in used),
                "ios": ios,
                "share": ios / total,
                "iops": ios / r.duration,
                "mbps": float(sum(int(m.path_bytes[p.index]) for p in paths)) / r.duration / 1e6,
                "latency_us": hist.summary_us(),
                "in_flight_mean": float(sum(m.path_in_flight_area[p.index] for p in paths)) / r.duration,
            }
        )
        out.append(row)
    return out
