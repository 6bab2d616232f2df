"""The story's first sentence: what the scenario is about, read from the model, never from its prose.

"This scenario is about host queueing (DQLEN 32): esxi01 runs 24 jobs over 4
paths to array." The topics are what the file sets beyond paths and
workloads: faults, host queues, target port queues, NUMA, host CPU, the
fabric, distance between sites, array controllers (ALUA), open-loop
arrivals. With none, it is about path selection itself.
"""

from __future__ import annotations

import math
from typing import Any

from ...model import Model
from ...model.queues import DEVICE_QUEUE
from .words import and_list, fmt_time

__all__ = ["subject", "binding_queues"]

_FAULT_WORDS = {
    "path_down": "a path failure",
    "array_down": "an array failure",
    "replication_down": "a replication link failure",
    "alua": "an ALUA state change",
    "latency": "added latency",
    "loss": "frame loss",
    "slow_drain": "a slow-draining port",
    "owner": "a change of volume owner",
}
_RETURNS = ("path_up", "array_up", "replication_up")
#: paths to one array this many times slower (one way, on average) than to another: the run is about distance
_FAR = 2.0


def _t(seconds: float) -> str:

    return fmt_time(seconds)


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:.3g} ms" if ms >= 0.1 else f"{seconds * 1e6:.3g} us"


def _faults(model: Model) -> str | None:
    seen: dict[str, list[float]] = {}
    for f in model.faults:
        if f.revert or f.what in _RETURNS or f.at >= model.end:  # past the end (a shorter --duration): not what the run is about
            continue
        seen.setdefault(f.what, []).append(f.at)
    if not seen:
        return None
    parts = []
    for what, ats in seen.items():
        word = _FAULT_WORDS.get(what, what.replace("_", " "))
        times = sorted(set(ats))
        if len(times) > 1:
            word = {"a path failure": "path failures", "an array failure": "array failures"}.get(word, word)
        when = f"at {_t(times[0])}" if len(times) == 1 else f"from {_t(times[0])}"
        parts.append(f"{word} {when}")
    return and_list(parts)


def _queues(model: Model) -> str | None:
    notes = binding_queues(model)
    return f"host queueing ({', '.join(notes)})" if notes else None


def binding_queues(model: Model) -> list[str]:
    """The host's queue limits that can bind ("DQLEN 32"), as the engines apply them (pathsel/model/queues.py): one
    the workloads on its device, adapter or controller can never exceed changes nothing (a run with it gives the
    same figures as one without), so it is not what the scenario is about.

    Every job copy holds at most ``iodepth`` I/Os issued and not done, closed or open loop (an open loop's further
    arrivals wait in the job, not in these queues). A device takes at most DQLEN; its DSNRO applies only while two
    or more VMs (workloads: a workload's ``numjobs`` copies are one VM) have I/O on it, to all of them together
    (``all_vms``) or to each (``per_vm``). The adapter takes what its devices let through; NVMe tags are per
    controller and taken after the path is chosen: a device's I/Os are counted spread evenly over its optimized
    paths (a policy that keeps a device on one path can meet the tags sooner: the table's QUED shows it)."""
    hp = model.host_params
    per_vm: dict[int, dict[int, int]] = {}  # device -> VM -> iodepth of its copies on the device
    for j in model.jobs:
        vms = per_vm.setdefault(j.device, {})
        vms[j.vm] = vms.get(j.vm, 0) + int(j.iodepth)
    rows = {q.owner: q for q in model.queues if q.kind == DEVICE_QUEUE}
    dqlens: set[int] = set()
    dsnros: set[int] = set()
    peak: dict[int, float] = {}  # device -> the most I/Os its queue can let through at once
    for d in model.devices:
        vms = per_vm.get(d.index, {})
        if not vms:
            continue
        h = hp[d.host]
        q = float(h.queue_depth or math.inf)
        total, top = float(sum(vms.values())), float(max(vms.values()))
        row = rows.get(d.index)
        dsnro = int(row.dsnro) if row is not None else 0  # 0 unless 0 < DSNRO < DQLEN (queues._dsnro)
        if dsnro and len(vms) > 1 and row is not None and row.dsnro_per_vm:
            most = max(top, float(sum(min(v, dsnro) for v in vms.values())))  # a VM alone, or all at DSNRO each
            if top > dsnro:
                dsnros.add(dsnro)
            if most > q:
                dqlens.add(h.queue_depth)
            peak[d.index] = min(most, q)
        elif dsnro and len(vms) > 1:  # all VMs together at most DSNRO while two or more compete; a VM alone: DQLEN
            if total > dsnro:
                dsnros.add(dsnro)
            if top > q:
                dqlens.add(h.queue_depth)
            peak[d.index] = max(min(top, q), min(total, float(dsnro)))
        else:
            if total > q:
                dqlens.add(h.queue_depth)
            peak[d.index] = min(total, q)
    on_host: dict[int, float] = {}
    for d in model.devices:
        on_host[d.host] = on_host.get(d.host, 0.0) + peak.get(d.index, 0.0)
    adapters = {h.adapter_queue_depth for h in hp if h.adapter_queue_depth and h.adapter_queue_depth < on_host.get(h.index, 0.0)}
    tags: set[int] = set()
    on_ctrl: dict[int, float] = {}
    for d in model.devices:
        mine = [model.paths[p] for p in d.paths]
        spread = [p for p in mine if p.alua == "AO"] or mine
        h = hp[d.host]
        cut = min(1.0, h.adapter_queue_depth / on_host[d.host]) if h.adapter_queue_depth and on_host.get(d.host) else 1.0
        for p in spread:
            on_ctrl[p.controller] = on_ctrl.get(p.controller, 0.0) + peak.get(d.index, 0.0) * cut / len(spread)
    for c, n in on_ctrl.items():
        owner = hp[model.controllers[c].host] if c >= 0 else None
        if owner is not None and owner.nvme_tags and owner.nvme_tags < n - 1e-9:
            tags.add(owner.nvme_tags)
    notes = []
    for word, found in (("DQLEN", dqlens), ("DSNRO", dsnros)):
        if found:
            low, high = min(found), max(found)
            notes.append(f"{word} {low}" if low == high else f"{word} {low}-{high}")
    if adapters:
        notes.append(f"adapter queue depth {min(adapters)}")
    if tags:
        notes.append(f"{min(tags)} NVMe tags per controller")
    return notes


def _distance(model: Model) -> str | None:
    if len(model.arrays) < 2:
        return None
    by_array: dict[int, list[float]] = {}
    for p in model.paths:
        by_array.setdefault(p.array, []).append(float(p.one_way_latency.mean))
    means = {a: sum(v) / len(v) for a, v in by_array.items()}
    if len(means) < 2:
        return None
    near, far = min(means, key=lambda a: means[a]), max(means, key=lambda a: means[a])
    if means[far] >= _FAR * means[near] and means[far] > 0:
        names = model.arrays
        return f"distance (paths to {names[near].name} {_ms(means[near])}, to {names[far].name} {_ms(means[far])} one way)"
    if model.replication is not None:
        a, b = model.replication.arrays
        return f"a metro pair ({model.arrays[a].name} and {model.arrays[b].name}, synchronous replication)"
    return None


def _slow_paths(model: Model) -> str | None:
    """Paths of one host to one array this many times slower one way than its fastest there: a slow path."""
    groups: dict[tuple[int, int], list[Any]] = {}
    for p in model.paths:
        groups.setdefault((p.host, p.array), []).append(p)
    slow = []
    for paths in groups.values():
        fastest = min(float(p.one_way_latency.mean) for p in paths)
        slow += [p for p in paths if fastest > 0 and float(p.one_way_latency.mean) >= _FAR * fastest]
    if not slow:
        return None
    if len(slow) == 1:
        return f"a slow path ({slow[0].name})"
    return f"{len(slow):,} slow paths"


def _topics(model: Model) -> list[str]:
    out = []
    faults = _faults(model)
    if faults:
        out.append(faults)
    queues = _queues(model)
    if queues:
        out.append(queues)
    if any(t.queue_depth for t in model.ports):
        depth = min(t.queue_depth for t in model.ports if t.queue_depth)
        out.append(f"target port queues (QUEUE FULL past {depth} commands)")
    numa = [h for h in model.host_params if h.numa_nodes > 1]
    if numa:
        out.append(
            f"NUMA ({numa[0].numa_nodes} nodes on {numa[0].name}"
            + (f" and {len(numa) - 1} more host{'s' if len(numa) > 2 else ''})" if len(numa) > 1 else ")")
        )
    if model.cpu is not None:
        out.append("host CPU")
    if model.switches or model.links:
        sw = f"{len(model.switches)} switch{'es' if len(model.switches) != 1 else ''}" if model.switches else ""
        ln = f"{len(model.links)} shared link{'s' if len(model.links) != 1 else ''}" if model.links else ""
        out.append(f"the fabric ({', '.join(x for x in (sw, ln) if x)})")
    if any(len(a.controllers) > 1 for a in model.arrays):
        out.append("ALUA on dual-controller arrays")
    distance = _distance(model)
    if distance:
        out.append(distance)
    slow = _slow_paths(model)
    if slow:
        out.append(slow)
    if any(j.rate_iops > 0 or j.arrivals is not None for j in model.jobs):
        out.append("open-loop arrivals")
    return out


def _setup(model: Model) -> str:
    hosts = model.hosts[0] if len(model.hosts) == 1 else f"{len(model.hosts):,} hosts"
    verb = "runs" if len(model.hosts) == 1 else "run"
    n_jobs = len(model.jobs)
    jobs = f"{n_jobs:,} job{'s' if n_jobs != 1 else ''}"
    volumes = sorted({d.volume for d in model.devices if d.volume})
    on = f" on {len(volumes):,} volumes" if len(volumes) > 1 else ""
    arrays = sorted({model.arrays[p.array].name for p in model.paths})
    to = and_list(arrays) if len(arrays) <= 3 else f"{len(arrays)} arrays"
    n = len(model.paths)
    return f"{hosts} {verb} {jobs}{on} over {n:,} path{'s' if n != 1 else ''} to {to}"


def subject(model: Model | Any) -> str:
    """``This scenario is about <topics>: <who runs what over which paths>.``"""
    topics = _topics(model)
    about = and_list(topics) if topics else "path selection"
    return f"This scenario is about {about}: {_setup(model)}."
