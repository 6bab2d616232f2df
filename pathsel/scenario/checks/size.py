"""A run's size against pathsel's limits (:mod:`pathsel.limits`), checked before any name is: its paths, the paths
of its widest device, the I/Os its workloads keep outstanding, its time series and the load they offer.
"""

from __future__ import annotations

from ...limits import MAX_DEVICE_PATHS, MAX_OUTSTANDING, MAX_PATHS, offered_problem, series_problem
from ...timing.arrivals import BlockThink, Schedule, Trace
from ..schema import ScenarioModel
from .base import CrossCheck

__all__ = ["check_size", "device_count", "offered_load", "path_count", "widest_device"]


def path_count(m: ScenarioModel) -> int:
    """The paths a run has (what the engines and the time series hold): each [[paths]] table's count, once per
    volume on its array (once when there are no [[volumes]]). Arrays are matched by name; unknown ones count once."""
    held = [set(v.arrays) if v.arrays else None for v in m.volumes] or [None]
    return sum(g.count * max(1, sum(1 for h in held if h is None or g.array in h)) for g in m.paths)


def device_count(m: ScenarioModel) -> int:
    """The devices a run has, at most: each host's view of each volume (of the one volume without [[volumes]])."""
    return len(m.hosts) * max(1, len(m.volumes))


def widest_device(m: ScenarioModel) -> tuple[str, str | None, int]:
    """(host, volume or None, paths) of the device with the most paths: a host's [[paths]] tables to the
    volume's arrays (all of them without [[volumes]]). A path with no host belongs to the first."""
    first = m.hosts[0].name
    best: tuple[str, str | None, int] = (first, None, 0)
    for host in {g.host or first for g in m.paths}:
        mine = [g for g in m.paths if (g.host or first) == host]
        for vol in m.volumes or [None]:
            arrays = vol.arrays if vol is not None else None
            n = sum(g.count for g in mine if arrays is None or g.array in arrays)
            if n > best[2]:
                best = (host, vol.name if vol is not None else None, n)
    return best


def offered_load(m: ScenarioModel, seconds: float) -> list[tuple[str, int, float]]:
    """(name, numjobs, mean I/Os per second per job copy over ``seconds``) of every open-loop workload of ``m``:
    what :func:`pathsel.limits.offered_problem` bounds (a run's own duration may differ from the file's)."""
    out = []
    for w in m.workloads:
        spec = w.arrival_spec()
        if isinstance(spec, Schedule):
            rate = spec.integral(seconds) / seconds
        elif isinstance(spec, Trace):
            rate = len(spec) / seconds  # replayed once: each record arrives at most once
        elif isinstance(spec, BlockThink):
            rate = spec.mean_rate()
        elif w.rate_iops is not None:
            rate = w.rate_iops
        else:
            continue  # a closed loop offers nothing: the array's completions pace it
        out.append((w.name, w.numjobs, rate))
    return out


def check_size(r: CrossCheck) -> bool:
    """The run's size: False when its paths are too many to check further (nothing else is reported then)."""
    m, fail = r.m, r.fail
    n_paths = path_count(m)
    if n_paths > MAX_PATHS:
        # before any name is spelt out: a billion of them would take the rest of the day
        fail(
            "paths",
            f"{n_paths:,} paths (count over every [[paths]] table{', once per volume on its array' if m.volumes else ''}) "
            f"is more than the {MAX_PATHS:,} pathsel simulates in one run",
        )
        return False
    wide_host, volume, widest = widest_device(m)
    if widest > MAX_DEVICE_PATHS:
        seen = f"host {wide_host!r} sees volume {volume!r}" if volume is not None else f"host {wide_host!r} sees its volume"
        fail(
            "paths",
            f"{seen} over {widest:,} paths, more than the {MAX_DEVICE_PATHS:,} paths per device pathsel "
            "simulates (the engine's memory grows with their square; ESXi and Windows stop at 32)",
        )
        return False
    outstanding = sum(w.numjobs * w.iodepth for w in m.workloads)
    if outstanding > MAX_OUTSTANDING:
        parts = " + ".join(f"{w.numjobs:,} x {w.iodepth:,}" for w in m.workloads)
        fail(
            "workloads",
            f"the workloads keep {outstanding:,} I/Os outstanding together ({parts}, numjobs x iodepth), "
            f"more than the {MAX_OUTSTANDING:,} pathsel simulates in one run",
        )
    span = max(w.ramp_time for w in m.workloads) + m.duration
    series = series_problem(span, m.interval, n_paths, device_count(m))
    if series is not None:
        fail("interval", series)
    offered = offered_problem(offered_load(m, span), span)
    if offered is not None:
        fail("workloads", offered)
    return True
