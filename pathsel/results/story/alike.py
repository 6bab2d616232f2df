"""The story's sentence when two policies gave identical figures: say so once, and why when it can be derived.

Both runs of a comparison see the same scenario and seed, so two policies
that choose the same path for every I/O give the same figures to the last
digit. That is worth a sentence, not a silent pair of equal rows. The reason
is given only when the model and the run show it; otherwise the sentence
says the run does not show why. Known reasons:

* one path per device: every policy sends every I/O down it.
* ``dm:round-robin``, ``dm:queue-length``, ``dm:service-time`` with one I/O
  in flight per device (closed-loop, iodepth 1): every path ties at zero,
  both least-loaded selectors take the first least-loaded path of their
  valid-path list, and the chosen path goes to the list's tail (pathsel's
  model of drivers/md/dm-ps-queue-length.c ``ql_select_path`` and
  dm-ps-service-time.c ``st_select_path``, see pathsel/policies/dm_ps.py;
  older kernels moved the head to the tail before choosing, which
  rotates the same way when every path ties): one I/O per path in turn, as
  round-robin (``repeat_count`` forced to 1) does.
* ``dm:queue-length`` and ``dm:service-time``: service-time ranks paths by
  (bytes in flight + this I/O) / relative throughput. With every I/O the same
  size and every path the same relative throughput (multipath-tools sets
  none), bytes in flight are the count in flight times that size, so both
  selectors rank the paths alike. Mixed I/O sizes (``bs = "4k/50:64k/50"``)
  or a ``relative_throughput`` can separate them (not always: with mixed
  sizes two selectors may still choose alike, so "can", never "would").
  ``mpio:lqd`` and ``mpio:lb`` likewise (count vs bytes outstanding).
* ``dm:queue-length`` and ``aix:shortest_queue``: every device has two paths,
  both AO, and no fault changes them: both take the path with fewer I/Os in
  flight, and on a tie the one not chosen last.
* one policy with settings that differ only in when it re-evaluates
  (``latency_eval_time``), when every run evaluated each device once, alike,
  and the run ended before any re-evaluation.
* ``nvme:numa`` and ``dm:io-affinity``: each device has one AO path on each
  NUMA node of its host (and its workloads run on those nodes): both send an
  I/O to its node's path; while one is down, with two nodes, both send it to
  the other node's, the only one left. Otherwise, when on each node the share
  of the I/Os its workloads issued matches the share its adapters carried.
"""

from __future__ import annotations

from typing import Any

from .words import and_list, fmt_time

__all__ = ["alike_sentences"]

_QL_ST = frozenset({"dm:queue-length", "dm:service-time"})
_NUMA = frozenset({"nvme:numa", "dm:io-affinity"})
_DM_TURN = frozenset({"dm:round-robin", "dm:queue-length", "dm:service-time"})
_LQD_LB = frozenset({"mpio:lqd", "mpio:lb"})
_QL_SQ = frozenset({"dm:queue-length", "aix:shortest_queue"})
#: faults that change which paths a policy may use (a latency or loss change does not)
_PATH_FAULTS = frozenset({"path_down", "path_up", "array_down", "array_up", "alua", "owner"})
#: parameters that only set when a policy re-evaluates its paths (latency round robin's latency_eval_time, ms)
_RE_EVALUATION = frozenset({"latency_eval_time"})


def _spec(r: Any) -> tuple[str, dict[str, Any]]:
    from ...policies.spec import parse_spec

    try:
        spec, _ = parse_spec(str(getattr(r, "policy", r.label)))
    except Exception:  # a Python policy object, not a spec string: no name to reason from
        return "", {}
    return spec.name, spec.as_dict()


def _identical(a: Any, b: Any) -> bool:
    """The same I/O count, latency figures and I/Os on every path: the policies chose alike throughout."""
    if a.ios != b.ios or a.latency_us != b.latency_us:
        return False
    ha, hb = a.metrics.path_hist, b.metrics.path_hist
    return len(ha) == len(hb) and all(x.n == y.n for x, y in zip(ha, hb, strict=True))


def _size(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n:,} bytes"


def _one_in_flight(model: Any) -> bool:
    """Whether no device ever has two I/Os in flight: closed-loop jobs only, one per device, at iodepth 1."""
    per_device: dict[int, int] = {}
    for j in model.jobs:
        if j.rate_iops or j.arrivals is not None:  # open loop: arrivals overlap whatever the iodepth
            return False
        per_device[j.device] = per_device.get(j.device, 0) + j.iodepth
    return bool(per_device) and max(per_device.values()) == 1


def _evaluated_once(runs: list[Any]) -> tuple[float, float] | None:
    """When every run evaluated each device's paths at most once, and all at the same times with the same result:
    the span of those times (None otherwise)."""
    seen: list[list[tuple[Any, ...]]] = []
    for r in runs:
        evals = [(e["t"], e.get("device"), tuple(sorted(e.get("active", ())))) for e in r.metrics.events if e["event"] == "evaluation"]
        if not evals or len({d for _, d, _ in evals}) != len(evals):
            return None
        seen.append(evals)
    if any(x != seen[0] for x in seen[1:]):
        return None
    times = [t for t, _, _ in seen[0]]
    return min(times), max(times)


def _why(g: list[Any]) -> str:
    """The reason a group of runs gave identical figures, when the model and the run show it; else only what
    identical figures mean."""

    model = g[0].model
    names = {_spec(r)[0] for r in g}
    per_device: dict[int, int] = {}
    for p in model.paths:
        per_device[p.device if model.devices else -1 - p.host] = per_device.get(p.device if model.devices else -1 - p.host, 0) + 1
    sizes = {s for j in model.jobs for s in j.sizes}
    rt = any(_spec(r)[1].get("relative_throughput") for r in g)
    if per_device and max(per_device.values()) == 1:
        return "each device has one path, so every policy sends every I/O down it"
    if names <= _DM_TURN and len(names) == len(g) and names & _QL_ST and not rt and _one_in_flight(model):
        # the first least-loaded path of the list is taken and moved to its tail (pathsel.policies.dm_ps): all tied
        # at 0, that is the least recently chosen, the next path in turn
        like = ", as round-robin does" if "dm:round-robin" in names else ""
        return (
            "at iodepth 1 no other I/O is in flight when one is issued, so every path ties at zero (I/Os and bytes in "
            "flight) and queue-length and service-time take the first path of their list and move it to the list's tail "
            f"(dm-ps-queue-length.c, dm-ps-service-time.c): the least recently chosen path, one I/O per path in turn{like}"
        )
    if names == _QL_ST and len(g) == 2 and len(sizes) == 1 and not rt:
        return (
            f"every I/O was {_size(next(iter(sizes)))} and every path has the same relative throughput (multipath-tools sets none), "
            "so service-time's bytes in flight rank the paths exactly as queue-length's count in flight does and both "
            'take the first least-loaded path; mixed I/O sizes (bs = "4k/50:64k/50", or reads and writes of different '
            "bs) or a relative_throughput can separate them"
        )
    if names == _LQD_LB and len(g) == 2 and len(sizes) == 1:
        return (
            f"every I/O was {_size(next(iter(sizes)))}, so Least Blocks' bytes outstanding rank the paths exactly as "
            "Least Queue Depth's count does; mixed I/O sizes can separate them"
        )
    if len(names) == 1:
        specs = [_spec(r)[1] for r in g]
        differ = {k for k in specs[0] if len({str(sp.get(k)) for sp in specs}) > 1}
        span = _evaluated_once(g)
        if differ and differ <= _RE_EVALUATION and span is not None:
            lo, hi = span
            when = fmt_time(lo) if lo == hi else f"{fmt_time(lo)}-{fmt_time(hi)}"
            each = " of each device" if len(per_device) > 1 else ""
            settings = and_list([f"{k} " + " and ".join(str(sp.get(k)) for sp in specs) for k in sorted(differ)])
            return (
                f"each evaluated the paths{each} once, at {when}, with the same result, and the run ended "
                f"({fmt_time(model.end)}) before any re-evaluation, so the setting that differs ({settings}) never came into play"
            )
    if names == _QL_SQ and len(g) == 2 and _two_paths_alike(model):
        return (
            "each device has two paths, both optimized, and no fault came, so both send each I/O to the path with fewer "
            "I/Os in flight and, on a tie, to the one not chosen last (queue-length moves the chosen path to its list's "
            "tail; shortest_queue scans from the path after the last one used)"
        )
    numa = _numa_alike(model) if names == _NUMA else None
    if numa is not None:
        return numa
    if names == _NUMA and not _crossed(g):
        return "both are NUMA-aware: on each node the share of the I/Os its workloads issued is the share its adapters carried"
    return "so they chose the same path for every I/O; the run does not show why"


def _faults_in_run(model: Any, kinds: frozenset[str]) -> list[Any]:
    return [f for f in model.faults if f.what in kinds and f.at < model.end]


def _two_paths_alike(model: Any) -> bool:
    """dm:queue-length and aix:shortest_queue choose alike when every device has two paths, both AO, and none
    changes: both take the path with fewer in flight; on a tie dm takes its list's head (the chosen path went to the
    tail) and AIX the path after its last one (cyclically), with two paths both the one not chosen last."""
    if not model.devices or _faults_in_run(model, _PATH_FAULTS):
        return False
    return all(len(d.paths) == 2 and all(model.paths[p].alua == "AO" for p in d.paths) for d in model.devices)


def _numa_alike(model: Any) -> str | None:
    """nvme:numa and dm:io-affinity choose alike when each device has exactly one path on each NUMA node of its
    host, all AO, and its workloads run on those nodes: nvme:numa takes the optimized path nearest the issuing node
    (its own node's, distance 10 in the SLIT), io-affinity the path mapped to the issuing node's CPUs (the first on
    that node). While a node's path is down, nvme:numa takes the nearest live one and io-affinity the first node's
    (node order) live one: with two nodes both the other node's path, the only one left. The reason, or None."""
    if not model.devices or _faults_in_run(model, frozenset({"alua", "owner"})):
        return None
    hp = model.host_params
    for d in model.devices:
        nodes = [model.paths[p].numa_node for p in d.paths]
        h = hp[d.host]
        if h.numa_nodes < 2 or sorted(nodes) != list(range(h.numa_nodes)):
            return None
        if any(model.paths[p].alua != "AO" for p in d.paths):
            return None
        if any(j.numa_node >= h.numa_nodes for j in model.jobs if j.device == d.index):
            return None
    down = _faults_in_run(model, frozenset({"path_down", "array_down"}))
    if down and any(hp[d.host].numa_nodes != 2 for d in model.devices):
        return None  # with three nodes or more "nearest" and "first in node order" can differ
    s = (
        "each device has one path on each NUMA node of its host, so both send each I/O to the path on its "
        "workload's own node (nvme:numa the nearest optimized path, io-affinity the path mapped to that node's CPUs)"
    )
    if down:
        s += ", and while a path was down both sent that node's I/O to the other node's path, the only one left"
    return s


def _crossed(g: list[Any]) -> bool:
    """Whether a NUMA host's nodes issued a share of its I/Os other than the share their adapters carried: then
    some I/Os crossed to another node's adapter (numa.py's lower bound), and "each node on its own" is false."""
    from .numa import node_shares

    for r in g:
        for hp in r.model.host_params:
            if hp.numa_nodes < 2:
                continue
            issued, carried = node_shares(r, hp.index)
            n_i, n_c = sum(issued.values()), sum(carried.values())
            if n_i and n_c and any(abs(issued.get(k, 0) / n_i - carried.get(k, 0) / n_c) >= 0.01 for k in set(issued) | set(carried)):
                return True
    return False


def alike_sentences(runs: list[Any]) -> list[str]:
    """One sentence per group of policies with identical figures (runs that completed I/O only)."""
    groups: list[list[Any]] = []
    for r in runs:
        if not r.ios:
            continue
        for g in groups:
            if _identical(g[0], r):
                g.append(r)
                break
        else:
            groups.append([r])
    out = []
    for g in groups:
        if len(g) < 2:
            continue
        labels = [r.label for r in g]
        who = " and ".join(labels) if len(labels) == 2 else ", ".join(labels[:-1]) + " and " + labels[-1]
        why = _why(g)
        sep = ", " if why.startswith("so ") else ": "
        out.append(f"{who} gave identical figures (every path's I/Os, every latency){sep}{why}.")
    return out
