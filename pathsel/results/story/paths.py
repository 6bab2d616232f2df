"""How the story names a run's paths: ``all 4 paths``, ``the 10 remote paths``, ``vmhba2:C0:T1:L1``, and which carried I/O."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from ..used import per_device, used_paths
from .run import Run
from .words import and_list, in_ms

__all__ = ["PATH_EVENTS", "Paths", "paths_used", "on_paths"]

#: the events a policy logs when one of its paths changes state
PATH_EVENTS = ("path_down", "path_up", "alua")


class Paths:
    """A run's paths by device and name (path names are unique per device only)."""

    def __init__(self, r: Run) -> None:
        model = r.model
        self.model = model
        self.by_name: dict[tuple[str, str], Any] = {}
        for p in model.paths:
            device = model.devices[p.device].name if model.devices else model.hosts[p.host]
            self.by_name[(device, p.name)] = p
        self.several_devices = len({d for d, _ in self.by_name}) > 1
        self.several_hosts = len({p.host for p in model.paths}) > 1

    def array(self, p: Any) -> str:
        return str(self.model.arrays[p.array].name)

    def name(self, p: Any, *, qualify: bool = True) -> str:
        """A path's name, with its host when several hosts have paths of that name."""
        return f"{p.name} on {self.model.hosts[p.host]}" if qualify and self.several_hosts else p.name

    def describe(self, chosen: list[Any], among: list[Any], *, qualify: bool = True) -> str:
        """``the 10 remote paths``, ``all 4 paths``, ``vmhba2:C0:T1:L1``, ``7 of 20 paths (5 local, 2 remote)``;
        ``... of esx1`` when several hosts ran and ``qualify``."""
        n = len(chosen)
        if n == 0:
            return "no path"
        hosts = {p.host for p in chosen}
        of = f" of {self.model.hosts[next(iter(hosts))]}" if qualify and self.several_hosts and len(hosts) == 1 else ""
        if n == len(among) and n > 1:
            return ("both paths" if n == 2 else f"all {n} paths") + of
        arrays = Counter(self.array(p) for p in chosen)
        whole = [a for a in arrays if arrays[a] == sum(1 for p in among if self.array(p) == a)]
        several_arrays = len({self.array(p) for p in among}) > 1
        if several_arrays and len(arrays) == 1 and whole and n > 1:
            return f"the {n} {whole[0]} paths{of}"
        if n <= 3:
            return and_list([self.name(p, qualify=qualify) for p in chosen])
        if several_arrays and len(arrays) == 1:
            return f"{n} of {len(among)} paths{of}, all to {next(iter(arrays))}"
        if several_arrays:
            return f"{n} of {len(among)} paths{of} ({', '.join(f'{k} to {a}' for a, k in arrays.items())})"
        return f"{n} of {len(among)} paths{of}"

    def latency_by_array(self, latency_us: dict[str, float], device: str) -> str:
        """Measured latency per array, as a range: ``local 2.31-2.43 ms, remote 6.12-8.14 ms``."""
        groups: dict[str, list[float]] = {}
        for name, us in latency_us.items():
            p = self.by_name.get((device, name))
            if p is not None and math.isfinite(us):
                groups.setdefault(self.array(p), []).append(us)
        parts = []
        for a, v in groups.items():
            lo, hi = min(v), max(v)
            span = in_ms(lo, us=True) if in_ms(lo, us=True) == in_ms(hi, us=True) else f"{in_ms(lo, us=True)[:-3]}-{in_ms(hi, us=True)}"
            parts.append(f"{a} {span}" if len(groups) > 1 else span)
        return ", ".join(parts)


def paths_used(r: Run) -> list[Any]:
    # each path's share of its device's I/Os (results/used.py), without the latency percentiles paths() also
    # works out: 16,384 paths' of them cost a second
    return used_paths(r)


def on_paths(r: Run, used: list[Any], paths: Paths) -> str:
    """The headline's "on ...": ``all 4 paths``, or with several devices how many of each device's paths carried I/O."""
    n_devices, of_device, used_of = per_device(r, used)
    if n_devices <= 1:
        return "on " + paths.describe(used, list(r.model.paths))
    if not used:
        return "on no path"
    counts = [used_of.get(k, 0) for k in of_device]
    sizes = sorted(set(of_device.values()))
    arrays = and_list(sorted({paths.array(p) for p in used}))
    unit = "devices" if r.model.devices else "hosts"  # without [[volumes]] each host's paths are its one device
    if all(used_of.get(k, 0) == n for k, n in of_device.items()):
        # "all 1 paths" and "all 2 paths" read as slips: the one path, both paths
        each = "all the paths" if len(sizes) > 1 else {1: "the one path", 2: "both paths"}.get(sizes[0], f"all {sizes[0]} paths")
        return f"on {each} of each of its {n_devices:,} {unit} ({len(used):,} paths, to {arrays})"
    lo, hi = min(counts), max(counts)
    total = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
    return f"on {lo if lo == hi else f'{lo}-{hi}'} of the {total} paths of each of its {n_devices:,} {unit} ({len(used):,} of {len(r.model.paths):,} paths, to {arrays})"
