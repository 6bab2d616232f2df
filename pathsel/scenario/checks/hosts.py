"""The ``[[hosts]]`` section's checks across sections: unique names, NVMe-oF queues only with protocol = "nvme", a
preferred array of the replication pair, an entry's NUMA node one of its host's, and a volume's DSNRO within the
queue depth of every host that sees it.
"""

from __future__ import annotations

from typing import Any

from ..schema import ScenarioModel
from .base import CrossCheck

__all__ = ["check_hosts", "check_numa_node", "check_volume_dsnro"]


def check_hosts(r: CrossCheck) -> None:
    """Host names, NVMe-oF queues in a SCSI scenario, each host's preferred array."""
    m, fail = r.m, r.fail
    r.unique(r.hosts, "hosts")
    if m.protocol != "nvme":  # NVMe-oF's I/O queues: a SCSI host has none
        for i, h in enumerate(m.hosts):
            for key in ("nvme_io_queues", "nvme_queue_size"):
                if getattr(h, key) is not None:
                    fail(
                        f"hosts[{i}].{key}",
                        f"is for NVMe-oF only: the scenario's protocol is {m.protocol!r} "
                        '(set protocol = "nvme", or use queue_depth / adapter_queue_depth)',
                    )
    for i, h in enumerate(m.hosts):
        if h.preferred_array is not None:
            pair = m.replication.arrays if m.replication else ()
            if h.preferred_array not in pair:
                fail(
                    f"hosts[{i}].preferred_array",
                    f"{h.preferred_array!r} is not in the replication pair ({', '.join(pair) or 'no [replication] section'})",
                )


def check_numa_node(r: CrossCheck, section: str, i: int, host: str | None, node: int) -> None:
    """The entry's numa_node must be one of its host's nodes."""
    fail = r.fail
    nodes_of = {h.name: h.numa_nodes for h in r.m.hosts}
    n = nodes_of.get(host or "", 1) if host is not None else None
    if n is not None and node >= n:
        fail(
            f"{section}[{i}].numa_node",
            f"node {node} is out of range: host {host!r} has numa_nodes = {n} (nodes 0{' ... ' + str(n - 1) if n > 1 else ''})",
        )


def check_volume_dsnro(m: ScenarioModel, i: int, v: Any, held: set[str]) -> list[tuple[str, str]]:
    """A volume's own DSNRO: every host with a path to it needs a queue_depth at least as large (as [[hosts]]')."""
    first = m.hosts[0].name
    seeing = {g.host or first for g in m.paths if g.array in held}
    for h in m.hosts:
        if h.name not in seeing:
            continue
        n = v.sched_num_req_outstanding
        if h.queue_depth is None:
            return [
                (
                    f"volumes[{i}].sched_num_req_outstanding",
                    f"host {h.name!r} sees volume {v.name!r} but has no queue_depth: DSNRO caps the device queue (DQLEN) "
                    "while VMs compete, so the host must have one (e.g. queue_depth = 64)",
                )
            ]
        if n > h.queue_depth:
            return [
                (
                    f"volumes[{i}].sched_num_req_outstanding",
                    f"{n} must be at most the queue_depth ({h.queue_depth}) of host {h.name!r}, which sees volume {v.name!r}: "
                    "a DSNRO above the device's queue depth would never bind",
                )
            ]
    return []
