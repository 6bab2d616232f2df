"""The story's sentence on NUMA: how much of a host's I/O its nodes issued and how much their adapters carried.

An I/O sent through an adapter (HBA, NIC) on another NUMA node than the CPU
that issued it pays the host's ``numa_penalty`` per 10 SLIT distance units
(docs/model.md). The engines count I/Os per workload and per path, not per
(workload, path), so the sentence compares the two per node: when node 0's
workloads issued 66 % of the host's I/Os and node 0's adapters carried 50 %,
at least 16 % crossed to the other node's adapters; when both shares match,
every I/O may have stayed on its own node (NUMA-aware selection).
"""

from __future__ import annotations

from typing import Any

__all__ = ["numa_sentences", "node_shares", "SHOWN"]

#: hosts with NUMA told one by one; more are summed up in one sentence
SHOWN = 2


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} us"


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
        crossed = sum(max(0.0, share_i[k] - share_c[k]) for k in nodes)  # a lower bound: per-node totals only
        crossed_total += round(crossed * n_issued)
        issued_total += n_issued
        if len(out) >= SHOWN:
            continue
        pen = sorted({hp.numa_extra(a, b) for a in range(hp.numa_nodes) for b in range(hp.numa_nodes) if a != b})
        penalty = _us(pen[0]) if len(pen) == 1 else f"{_us(pen[0])[:-3]}-{_us(pen[-1])}"
        split = "; ".join(f"node {k}'s workloads issued {share_i[k] * 100:.0f} % and its adapters carried {share_c[k] * 100:.0f} %" for k in nodes)
        if crossed < 0.01:
            verdict = "the shares match, so every I/O may have stayed on its own node"
        else:
            verdict = f"so at least {crossed * 100:.0f} % of its I/Os crossed to another node's adapter"
        out.append(f"NUMA on {hp.name} ({hp.numa_nodes} nodes, {penalty} for each I/O through another node's adapter): {split}; {verdict}.")
    if len(hosts) > SHOWN and issued_total:
        out.append(
            f"Over all {len(hosts):,} NUMA hosts at least {crossed_total / issued_total * 100:.0f} % of the I/Os crossed to another node's adapter."
        )
    return out
