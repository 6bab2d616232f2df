"""The key figures beside the set-up drawing: what a reader needs to know to judge the numbers, as (what, value)
rows: the workload (``rw``, ``bs``, ``iodepth``), every one-way latency and distance, array service times,
replication, host timers and the run's window."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from ...model import US_PER_KM
from ...units import format_duration
from ..result import Result
from ..run import RunResult
from .nexus import route_words, switch_latency
from .style import alua_order, bandwidth_words

__all__ = ["key_figures"]


def _size(n: int) -> str:
    for unit, k in (("m", 1 << 20), ("k", 1 << 10)):
        if n % k == 0:
            return f"{n // k}{unit}"
    return str(n)


def _bs(sizes: Any) -> str:
    """fio's bs from (bytes, percent) pairs: ``32k``, ``4k/60:16k/30:64k/10``."""
    sizes = list(sizes)
    if len(sizes) == 1:
        return _size(sizes[0][0])
    return ":".join(f"{_size(b)}/{p:g}" for b, p in sizes)


def _t(seconds: float) -> str:
    return "never" if math.isinf(seconds) else format_duration(seconds)


def key_figures(result: Result | RunResult) -> list[tuple[str, str]]:
    """The scenario's key figures as (what, value) rows: workloads (rw, bs, iodepth), paths' one-way
    latencies, bandwidths and distances, arrays, replication, host timers and the measured window."""
    runs = list(result.runs) if isinstance(result, Result) else [result]
    if not runs:
        return []
    model = runs[0].model
    config = getattr(result, "config", None)
    rows: list[tuple[str, str]] = []
    if config is not None:
        for w in config.workloads:
            on = w.host or config.hosts[0].name
            mix = f" ({w.rwmixread} % reads)" if w.rw in ("rw", "readwrite", "randrw") else ""
            rows.append(
                (
                    f"workload {w.name} on {on}" + (f", volume {w.volume}" if w.volume else ""),
                    f"rw={w.rw}{mix}, bs={_bs(w.bs)}, iodepth={w.iodepth}, numjobs={w.numjobs}"
                    + (f", ramp_time={format_duration(w.ramp_time)}" if w.ramp_time else ""),
                )
            )
    else:
        seen: dict[str, Any] = {}
        for j in model.jobs:
            seen.setdefault(j.workload, [j, 0])[1] += 1
        for name, (j, count) in seen.items():
            rows.append(
                (
                    f"workload {name} on {model.hosts[j.host]}",
                    f"{j.read_fraction:.0%} reads, bs={_bs(zip(j.sizes, (w * 100 for w in j.size_weights)))}, iodepth={j.iodepth}, numjobs={count}",
                )
            )
    rows.append(("I/Os kept in flight", f"{model.outstanding:,} ({'NVMe' if model.protocol == 'nvme' else 'SCSI'})"))
    # paths: one row per host, array and kind of path
    groups: dict[tuple[Any, ...], list[Any]] = defaultdict(list)
    for c in model.controllers:
        key = (c.host, c.array, c.one_way_latency.describe(), c.bandwidth, round((c.extra - switch_latency(model, c.links)) / US_PER_KM, 6), c.links)
        groups[key].append(c)
    # every LUN's state over each nexus (a dual-controller array's nexus is AO for the LUNs its controller owns)
    alua: dict[int, set[str]] = defaultdict(set)
    for p in model.paths:
        alua[p.controller].add(p.alua)
    for (h, a, latency, bw, km, links), cs in groups.items():
        states = alua_order(set().union(*(alua.get(c.index) or {"AO"} for c in cs)))
        names = cs[0].name if len(cs) == 1 else f"{cs[0].name} {'and' if len(cs) == 2 else '…'} {cs[-1].name}"
        value = (
            f"{len(cs)} path{'s' if len(cs) > 1 else ''} ({names}), one way {latency}"
            + (f" + {km:g} km" if km else "")
            + f", {bandwidth_words(bw)}, {'/'.join(states)} at start"
            + (f", via {route_words(model, links)}" if links else "")
        )
        rows.append((f"paths {model.hosts[h]} → {model.arrays[a].name}", value))
    for a in model.arrays:
        rows.append((f"array {a.name}", f"service read {a.read_service.describe()}, write {a.write_service.describe()}, concurrency {a.concurrency}"))
    rep = model.replication
    if rep is not None:
        a, b = (model.arrays[i].name for i in rep.arrays)
        km = rep.extra / US_PER_KM
        rows.append(
            (
                f"replication {a} ↔ {b}",
                f"synchronous, one way {rep.one_way_latency.describe()}"
                + (f" + {km:g} km" if km else "")
                + f", {bandwidth_words(rep.bandwidth)}"
                + (f", {rep.loss_ppm:g} ppm lost" if rep.loss_ppm else ""),
            )
        )
    for h in model.host_params:
        pref = ""
        if config is not None:
            hc = next((x for x in config.hosts if x.name == h.name), None)
            if hc is not None and hc.preferred_array:
                pref = f", preferred array {hc.preferred_array}"
        rows.append((f"host {h.name}", f"detection {_t(h.detection)}, APD timeout {_t(h.apd_timeout)}, I/O timeout {_t(h.io_timeout)}{pref}"))
    # a policy run with a preferred array of its own starts from other ALUA states: say so for each run
    if len({tuple(p.alua for p in r.model.paths) for r in runs}) > 1:
        for r in runs:
            states = alua_order({p.alua for p in r.model.paths})
            rows.append((f"paths for {r.label}", ", ".join(f"{sum(p.alua == s for p in r.model.paths)} {s}" for s in states)))
    faults = [f for f in model.faults if not f.revert]
    if faults:
        when = (
            f"at {format_duration(faults[0].at)}"
            if faults[0].at == faults[-1].at
            else f"from {format_duration(faults[0].at)} to {format_duration(faults[-1].at)}"
        )
        rows.append(("faults", f"{len(faults)}, {when}"))
    ramp = f"after a {format_duration(model.ramp)} ramp" if model.ramp > 0 else "from the start (no ramp)"
    rows.append(("measured", f"{format_duration(model.duration)} {ramp}, interval {format_duration(model.interval)}, seed {model.seed}"))
    return fold_alike(rows)


#: more rows than this of one kind (workloads, hosts, a host's paths to an array) are folded where alike
FOLD_KIND = 8


def _kind(what: str) -> tuple[str, str, str] | None:
    """(kind, the name in it, what follows the name) of a row to fold: ``workload vm1 on esx01, volume ds00``
    is ("workload", "vm1", ""); ``paths esx01 → site-a`` is ("paths", "esx01", " → site-a")."""
    for kind in ("workload", "host", "paths"):
        if what.startswith(kind + " "):
            rest = what[len(kind) + 1 :]
            name, sep, tail = rest.partition(" → " if kind == "paths" else " ")
            return kind, name, (sep + tail if kind == "paths" else "")
    return None


def fold_alike(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Rows of a kind alike but for a name, one row for them all when the kind has more than :data:`FOLD_KIND`
    rows (issue 54: a 32-host cluster's 2,048 workload rows are one, "2,048 workloads ... all alike")."""
    counts: dict[str, int] = defaultdict(int)
    for what, _v in rows:
        k = _kind(what)
        if k is not None:
            counts[k[0]] += 1
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for what, value in rows:
        k = _kind(what)
        if k is not None and counts[k[0]] > FOLD_KIND:
            groups[(k[0], k[2], value)].append(k[1])
    out: list[tuple[str, str]] = []
    done: set[tuple[str, str, str]] = set()
    plural = {"workload": "workloads", "host": "hosts", "paths": "hosts' paths"}
    for what, value in rows:
        k = _kind(what)
        if k is None or counts[k[0]] <= FOLD_KIND:
            out.append((what, value))
            continue
        key = (k[0], k[2], value)
        if key in done:
            continue
        done.add(key)
        names = groups[key]
        if len(names) == 1:
            out.append((what, value))
            continue
        alike = " (all alike)" if len([g for g in groups if g[0] == k[0]]) == 1 else " (alike)"
        shown = f"{names[0]} … {names[-1]}" if len(names) > 2 else " and ".join(names)
        out.append((f"{len(names):,} {plural[k[0]]} ({shown}){k[2]}", value + alike))
    return out
