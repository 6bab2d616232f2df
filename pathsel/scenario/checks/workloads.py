"""The ``[[workloads]]`` section's checks across sections: unique job names, each job's NUMA node, host and volume, and
a path of its host that reaches its volume.
"""

from __future__ import annotations

from .base import CrossCheck
from .hosts import check_numa_node

__all__ = ["check_workloads"]


def check_workloads(r: CrossCheck) -> None:
    """Job names, NUMA nodes, hosts and volumes (after the [[paths]] checks: a host with no paths is named)."""
    m, fail, arrays, hosts, names_by_host = r.m, r.fail, r.arrays, r.hosts, r.names_by_host
    r.unique([w.name for w in m.workloads], "workloads")
    for i, w in enumerate(m.workloads):
        if w.numa_node:
            check_numa_node(r, "workloads", i, w.host or (hosts[0] if len(hosts) == 1 else None), w.numa_node)
    volumes = [v.name for v in m.volumes]
    arrays_of_host: dict[str, set[str]] = {h: set() for h in hosts}
    for g in m.paths:
        if (g.host or hosts[0]) in arrays_of_host and g.array in arrays:
            arrays_of_host[g.host or hosts[0]].add(g.array)
    for i, w in enumerate(m.workloads):
        host = r.host_of("workloads", i, w.host)
        if host is not None and not names_by_host[host]:
            fail(f"workloads[{i}].host", f"host {host!r} has no paths")
            continue
        if w.volume is None and len(volumes) > 1:
            fail(f"workloads[{i}].volume", f"required when there is more than one volume ({', '.join(volumes)})")
            continue
        if w.volume is not None and w.volume not in (volumes or []):
            fail(
                f"workloads[{i}].volume",
                f"no volume named {w.volume!r} ({'volumes: ' + ', '.join(volumes) if volumes else 'no [[volumes]] section'})",
            )
            continue
        vol = next((v for v in m.volumes if v.name == w.volume), None) if w.volume is not None else (m.volumes[0] if m.volumes else None)
        if host is None or vol is None or not vol.arrays or not arrays_of_host[host]:
            continue  # no volumes: the implicit one is on every array, so any path reaches it
        if not set(vol.arrays) & arrays_of_host[host]:
            fail(
                f"workloads[{i}].volume",
                f"workload {w.name!r} on host {host!r} uses volume {vol.name!r}, on array{'s' if len(vol.arrays) > 1 else ''} "
                f"{', '.join(vol.arrays)}, but {host!r} has paths to {', '.join(sorted(arrays_of_host[host]))} only: "
                "no path reaches the volume, so the workload would never complete an I/O",
            )
