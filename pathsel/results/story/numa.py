"""The story's sentence on NUMA: how much of a host's I/O its nodes issued and how much their adapters carried.

An I/O sent through an adapter (HBA, NIC) on another NUMA node than the CPU
that issued it pays the host's ``numa_penalty`` per 10 SLIT distance units
(docs/model.md). The sentence gives, per node, the share of the host's I/Os
its workloads issued and its adapters carried, then the measured share that
crossed: the I/Os completed in the window through an adapter on another node
than the one that issued them (``RunMetrics.path_numa_crossed``, counted by
both engines at each completion), one definition for every policy.
"""

from __future__ import annotations

from typing import Any

__all__ = ["numa_sentences", "node_shares", "crossed_share", "SHOWN"]

#: hosts with NUMA told one by one; more are summed up in one sentence
SHOWN = 2


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} us"


def _share(x: float) -> str:
    """A share as the sentence gives it: whole percent, one decimal below 10 % (never 0 % for some)."""
    return f"{x * 100:.0f} %" if x >= 0.0995 else f"{x * 100:.1f} %" if x >= 0.0005 else "under 0.1 %"


def node_shares(r: Any, h: int) -> tuple[dict[int, int], dict[int, int]]:
    """Per node of host h: the I/Os its workloads completed, and the I/Os its adapters' paths carried."""
    m, model = r.metrics, r.model
    issued: dict[int, int] = {}
    seen: set[int] = set()
    for j in model.jobs:  # a workload's numjobs copies share its counters (JobModel.vm): count each once
        if j.host != h or j.vm in seen or not m.wl_by_op:
            continue
        seen.add(j.vm)
        issued[j.numa_node] = issued.get(j.numa_node, 0) + sum(x.n for x in m.wl_by_op[j.vm].values())
    carried: dict[int, int] = {}
    for p in model.paths:
        if p.host == h:
            carried[p.numa_node] = carried.get(p.numa_node, 0) + m.path_hist[p.index].n
    return issued, carried


def crossed_share(r: Any, h: int) -> tuple[int, int]:
    """Host h's I/Os completed in the window through another NUMA node's adapter, and all its I/Os completed there."""
    m, model = r.metrics, r.model
    mine = [p.index for p in model.paths if p.host == h]
    crossed = int(sum(int(m.path_numa_crossed[i]) for i in mine)) if m.path_numa_crossed is not None else 0
    return crossed, int(sum(m.path_hist[i].n for i in mine))


def numa_sentences(r: Any) -> list[str]:
    """Per host with NUMA nodes (a few; more in one sentence): the share its nodes issued and their adapters carried."""
    model = r.model
    hosts = [hp for hp in model.host_params if hp.numa_nodes > 1]
    if not hosts or not r.ios:
        return []
    out: list[str] = []
    crossed_total = issued_total = 0
    for hp in hosts:
        issued, carried = node_shares(r, hp.index)
        n_issued, n_carried = sum(issued.values()), sum(carried.values())
        if not n_issued or not n_carried:
            continue
        nodes = sorted(set(issued) | set(carried))
        share_i = {k: issued.get(k, 0) / n_issued for k in nodes}
        share_c = {k: carried.get(k, 0) / n_carried for k in nodes}
        n_crossed, n_done = crossed_share(r, hp.index)
        crossed = n_crossed / n_done if n_done else 0.0
        crossed_total += n_crossed
        issued_total += n_done
        if len(out) >= SHOWN:
            continue
        pen = sorted({hp.numa_extra(a, b) for a in range(hp.numa_nodes) for b in range(hp.numa_nodes) if a != b})
        penalty = _us(pen[0]) if len(pen) == 1 else f"{_us(pen[0])[:-3]}-{_us(pen[-1])}"
        split = "; ".join(f"node {k}'s workloads issued {share_i[k] * 100:.0f} % and its adapters carried {share_c[k] * 100:.0f} %" for k in nodes)
        if n_crossed == 0:
            verdict = "every I/O stayed on its own node's adapter"
        else:
            verdict = f"{_share(crossed)} of its I/Os ({n_crossed:,}) went through another node's adapter"
        out.append(f"NUMA on {hp.name} ({hp.numa_nodes} nodes, {penalty} for each I/O through another node's adapter): {split}; {verdict}.")
    if len(hosts) > SHOWN and issued_total:
        out.append(
            f"Over all {len(hosts):,} NUMA hosts {_share(crossed_total / issued_total)} of the I/Os ({crossed_total:,}) went through "
            "another node's adapter."
        )
    return out
