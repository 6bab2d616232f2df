"""The hosts, compiled for a run: detection and timeouts, queue depths, NUMA distances, NVMe-oF tags.

What a scenario's ``[[hosts]]`` become (:class:`HostModel`). The queues they
declare are laid out in ``queues.py``, their CPUs in ``cpu.py``. Part of the
compile step (:func:`pathsel.model.compile_model`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..scenario.schema import ScenarioModel

__all__ = ["HostModel", "compile_hosts"]


@dataclass(frozen=True)
class HostModel:
    index: int
    name: str
    detection: float  # seconds until the host notices a path going down or up
    apd_timeout: float  # seconds an I/O waits with no usable path before it fails (inf: queue)
    io_timeout: float  # an attempt that would take longer is aborted and retried
    queue_depth: int = 0  # I/Os each device takes at once (DQLEN); more wait in the host. 0: no limit
    qfull_retry_delay: float = 0.003  # a command answered QUEUE FULL is sent again this long after the status
    qfull_sample_size: int = 0  # ESXi Disk.QFullSampleSize: QUEUE FULLs that halve DQLEN (0: no throttling)
    qfull_threshold: int = 8  # ESXi Disk.QFullThreshold: good statuses that grow a throttled DQLEN by one
    adapter_queue_depth: int = 0  # I/Os the host's adapter (HBA) takes at once over all its devices. 0: no limit
    numa_nodes: int = 1  # NUMA nodes (sockets)
    numa_distances: tuple[tuple[int, ...], ...] = ((10,),)  # the SLIT matrix (numactl --hardware)
    numa_penalty: float = 0.5e-6  # seconds per 10 distance units above local, once per attempt
    nvme_tags: int = 0  # NVMe-oF: tags of each controller, shared by its namespaces (queues x (size - 1)). 0: no limit
    sched_num_req_outstanding: int = 0  # ESXi DSNRO: a device's I/Os at once while VMs compete (model/queues.py). 0: none
    dsnro_per_vm: bool = False  # dsnro_scope = "per_vm": each VM's own I/Os capped, not all VMs' together

    def numa_extra(self, a: int, b: int) -> float:
        """Host seconds an attempt issued on node ``a`` pays to go through an adapter on node ``b``."""
        d = self.numa_distances
        return self.numa_penalty * (d[a][b] - d[a][a]) / 10.0


def compile_hosts(m: ScenarioModel) -> tuple[HostModel, ...]:
    """The hosts in file order: numactl's distances when the file gives none, NVMe-oF's tags per controller."""
    return tuple(
        HostModel(
            i,
            h.name,
            h.detection,
            h.apd_timeout,
            h.io_timeout,
            h.queue_depth or 0,
            h.qfull_retry_delay,
            h.qfull_sample_size,
            h.qfull_threshold,
            h.adapter_queue_depth or 0,
            h.numa_nodes,
            h.numa_distances or _default_slit(h.numa_nodes),
            h.numa_penalty,
            _nvme_tags(h.nvme_io_queues, h.nvme_queue_size),
            sched_num_req_outstanding=h.sched_num_req_outstanding or 0,
            dsnro_per_vm=h.dsnro_scope == "per_vm",
        )
        for i, h in enumerate(m.hosts)
    )


def _nvme_tags(io_queues: int | None, queue_size: int | None) -> int:
    """NVMe-oF: a controller's tags, shared by all its namespaces (blk-mq shared tags): ``io_queues`` queues of
    ``queue_size`` entries (default NVMF_DEF_QUEUE_SIZE 128), one of each never used. 0: no limit."""
    if io_queues is None:
        return 0
    return io_queues * ((queue_size or 128) - 1)


def _default_slit(n: int) -> tuple[tuple[int, ...], ...]:
    """numactl's distances when the file gives none: 10 local, 20 remote."""
    return tuple(tuple(10 if a == b else 20 for b in range(n)) for a in range(n))
