"""The hosts' CPU in the results (issue 33): per-core utilisation, as esxtop's %USED or mpstat's per-CPU view.

Only for a host with a ``cpu`` table (Model.cpu); a run without one has no
``cpus`` key in its JSON, and the table and story say nothing of CPUs. A
core's utilisation is its busy seconds in the measured window (submissions
and completions, counted by both engines as each is reserved) over the
window's length.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BUSY", "cpu_rows", "cpu_json", "cpu_lines", "cpu_sentences", "cpulist"]

BUSY = 0.9  # a core at least this busy is saturated: the work queued for it waits
LINK_FULL = 0.95  # a host's busiest wire direction at least this busy is its limit


def cpulist(cores: list[int]) -> str:
    """Core numbers as a cpulist ("1-16,20"), the way /proc/irq/N/smp_affinity_list and lscpu write them."""
    out: list[str] = []
    i = 0
    while i < len(cores):
        j = i
        while j + 1 < len(cores) and cores[j + 1] == cores[j] + 1:
            j += 1
        out.append(str(cores[i]) if i == j else f"{cores[i]}-{cores[j]}")
        i = j + 1
    return ",".join(out)


def cpu_rows(r: Any) -> list[dict[str, Any]]:
    """One row per core of every host with a cpu table: host, core (its number on the host), NUMA node, utilisation."""
    cpu, busy = r.model.cpu, r.metrics.cpu_busy
    if cpu is None or busy is None:
        return []
    dur = r.model.duration
    rows = []
    for k, h in enumerate(cpu.core_host):
        rows.append(
            {
                "host": r.model.hosts[h],
                "core": k - cpu.host_first[h],
                "node": cpu.core_node[k],
                "utilisation": float(busy[k]) / dur if dur > 0 else 0.0,
            }
        )
    return rows


def _by_host(r: Any) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in cpu_rows(r):
        out.setdefault(row["host"], []).append(row)
    return out


def cpu_json(r: Any) -> list[dict[str, Any]]:
    """The run's ``cpus`` key: per host with a cpu table its cores, their mean and each one's utilisation."""
    out = []
    for host, rows in _by_host(r).items():
        u = [x["utilisation"] for x in rows]
        out.append({"host": host, "cores": len(u), "utilisation_mean": sum(u) / len(u), "utilisation": u})
    return out


def _groups(rows: list[dict[str, Any]]) -> list[tuple[list[int], int, float]]:
    """Consecutive cores of one node whose utilisation rounds to the same per cent: (cores, node, mean)."""
    groups: list[tuple[list[int], int, list[float]]] = []
    for x in rows:
        pct = round(100 * x["utilisation"])
        if groups and groups[-1][1] == x["node"] and round(100 * groups[-1][2][-1]) == pct and groups[-1][0][-1] == x["core"] - 1:
            groups[-1][0].append(x["core"])
            groups[-1][2].append(x["utilisation"])
        else:
            groups.append(([x["core"]], x["node"], [x["utilisation"]]))
    return [(c, n, sum(u) / len(u)) for c, n, u in groups]


def cpu_lines(result: Any) -> list[str]:
    """The ``simulate`` table's CPU section: per policy and host, its cores grouped by node and by busy %."""
    lines: list[str] = []
    for r in result.runs:
        for host, rows in _by_host(r).items():
            mean = sum(x["utilisation"] for x in rows) / len(rows)
            nodes = len({x["node"] for x in rows})
            if len(rows) <= 16:  # a core, or a run of like cores, each
                parts = [f"{'core' if len(c) == 1 else 'cores'} {cpulist(c)} {100 * u:.0f} %" for c, _n, u in _groups(rows)]
            else:  # many: each node's mean, then the saturated cores and the idle ones by number
                parts = []
                for n in sorted({x["node"] for x in rows}):
                    on = [x["utilisation"] for x in rows if x["node"] == n]
                    parts.append(f"node {n} {100 * sum(on) / len(on):.0f} %")
                hot = [x["core"] for x in rows if x["utilisation"] >= BUSY]
                idle = [x["core"] for x in rows if x["utilisation"] < 0.01]
                if hot:
                    parts.append(f"at least {100 * BUSY:.0f} %: {cpulist(hot)}")
                if idle:
                    parts.append(f"idle: {cpulist(idle)}")
            lines.append(
                f"  {r.label}: {host} ({len(rows)} cores{f', {nodes} nodes' if nodes > 1 else ''}, mean {100 * mean:.0f} % busy): " + "; ".join(parts)
            )
    return lines


def _link_use(r: Any, host: int) -> float:
    """The busiest direction of the host's own wires (its nexuses'), as a share of the run."""
    m, model = r.metrics, r.model
    best = 0.0
    for c in model.controllers:
        if c.host == host and c.bandwidth:
            best = max(best, float(m.wire_busy[c.index].max()) / model.end)
    return best


def cpu_sentences(r: Any) -> list[str]:
    """The story's sentence for a host whose cores were saturated: all of them (IOPS limited by CPU, not the link),
    or some (those its submissions or interrupts land on)."""
    said = []
    for host, rows in _by_host(r).items():
        u = [x["utilisation"] for x in rows]
        hot = [x["core"] for x in rows if x["utilisation"] >= BUSY]
        h = r.model.hosts.index(host)
        link = _link_use(r, h)
        if not hot:
            if link >= LINK_FULL:  # the other limit: the wire, with CPU to spare
                said.append(
                    f"{host}'s {len(u)} cores were {100 * sum(u) / len(u):.0f} % busy: its link ({100 * link:.0f} % used), not its CPU, limits it."
                )
            continue
        wire = f"its busiest link was {100 * link:.0f} % used" if link > 0 else "its links have no bandwidth limit"
        if len(hot) == len(u):
            said.append(f"{host}'s {len(u)} cores were {100 * sum(u) / len(u):.0f} % busy: IOPS limited by CPU, not the link ({wire}).")
            continue
        rest = [x["utilisation"] for x in rows if x["utilisation"] < BUSY]
        hot_mean = sum(x["utilisation"] for x in rows if x["utilisation"] >= BUSY) / len(hot)
        said.append(
            f"{host}: {'core' if len(hot) == 1 else 'cores'} {cpulist(hot)} {'was' if len(hot) == 1 else 'were'} "
            f"{100 * hot_mean:.0f} % busy while its other {len(rest)} averaged {100 * sum(rest) / len(rest):.0f} %: the I/Os "
            f"whose submissions or interrupts land there are limited by those cores, not the link ({wire})."
        )
    return said
