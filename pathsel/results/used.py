"""Which paths a run used: the table's "paths used", the story's "on all 4 paths", the breakdowns' counts.

A path is *used* when it carries at least :data:`SHARE_USED` of its own
device's I/Os (a device is one host's view of one volume; without
``[[volumes]]``, a host's paths are its one device). Measured against the
whole run instead, a cluster of 32 hosts x 64 datastores x 8 paths gives
each path about 0.006 % of the run's I/Os and the table said "0 paths used"
although every path carried I/O. With one device the two rules are the same.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["SHARE_USED", "used_paths", "used_cell", "per_device"]

#: a path "used" by a policy carries at least this share of its device's I/Os
SHARE_USED = 0.005


def _device_key(model: Any, p: Any) -> int:
    # a path's device index, or its host's when the scenario has no volumes (every path of a host is one device)
    return int(p.device) if model.devices else -1 - int(p.host)


def used_paths(r: Any) -> list[Any]:
    """The paths of run ``r`` (a RunResult) carrying at least 0.5 % of their device's I/Os, in the model's order."""
    model, hist = r.model, r.metrics.path_hist
    per_device: Counter[int] = Counter()
    for p in model.paths:
        per_device[_device_key(model, p)] += hist[p.index].n
    return [p for p in model.paths if hist[p.index].n / max(per_device[_device_key(model, p)], 1) >= SHARE_USED]


def per_device(r: Any, used: list[Any]) -> tuple[int, Counter[int], Counter[int]]:
    """How many devices the run has, and per device (key) its paths and its used paths."""
    model = r.model
    paths = Counter(_device_key(model, p) for p in model.paths)
    return len(paths), paths, Counter(_device_key(model, p) for p in used)


def used_cell(r: Any) -> str:
    """The table's "paths used" cell: ``19 (local, remote)``; with several devices also how many per device,
    ``16,384: 8 per device (site-a, site-b)``, or ``16,320: 7-8 per device (...)``."""
    used = used_paths(r)
    arrays = ", ".join(sorted({r.model.arrays[p.array].name for p in used}))
    n_devices, _, by_device = per_device(r, used)
    if n_devices <= 1:
        return f"{len(used)} ({arrays})"
    counts = [by_device.get(k, 0) for k in {_device_key(r.model, p) for p in r.model.paths}]
    lo, hi = min(counts), max(counts)
    each = f"{lo}" if lo == hi else f"{lo}-{hi}"
    unit = "device" if r.model.devices else "host"  # without [[volumes]] each host's paths are its one device
    return f"{len(used):,}: {each} per {unit} ({arrays})"
