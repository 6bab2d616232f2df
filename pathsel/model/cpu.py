"""The host's CPU (issue 33): which core submits each I/O, which completes it, and what each costs.

A host with a ``cpu`` table has ``cores`` cores, split evenly over its NUMA
nodes in order (node 0: cores 0 .. cores/nodes - 1, as Linux numbers a
two-socket server's CPUs without hyper-threads). Each core is a FIFO server
that both engines keep as a wire is kept (start = max(now, free), free =
start + cost, reserved the instant the work arrives). docs/model.md, "The
host's CPU", states the rules; here they become plain numbers:

* **The submitting core.** A job (one fio job copy) runs on one core of its
  ``numa_node`` (fio ``numa_cpu_nodes``): the host's jobs on node *n*, in
  order, take that node's cores in turn (the k-th: core first(n) + k mod
  cores-per-node), as the scheduler spreads fio's threads.
* **The completing core.** ``irq_affinity = "local"``: per-CPU queues
  (NVMe's I/O queue per CPU, blk-mq's map): core c submits to queue
  c * queues // cores, whose interrupt is on the first core of that group, so
  with one queue per core an I/O completes on the core that submitted it.
  A list of cores (a cpulist, as ``/proc/irq/N/smp_affinity_list`` takes
  it): a NIC's receive queues under RSS; each job's flow hashes to queue
  k mod queues (k: the job's rank on its host), and queue q's interrupt
  is on the list's core q * len(list) // queues (the queues spread over
  the list in order).
* **Costs.** ``submit`` per attempt; ``complete + irq / coalesce`` per I/O
  completed, times the SLIT ratio distance(core's node, adapter's node) /
  distance(core's node, itself) when the interrupt core is on another node
  than the path's adapter (an assumption: completion work taken to be
  memory-bound, the remote node's memory that many times slower).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CpuModel", "TRANSPORT_CPU", "compile_cpu", "cpu_costs"]

# Defaults by transport: (submit, complete, irq) seconds of CPU per I/O. iSCSI's sum is the one published per-core
# figure we found for a kernel TCP storage initiator: "merely 70K IOPS per CPU core" (Hwang et al., i10, NSDI 2020),
# 1 / 70,000 = 14.3 us; its split into three parts, and every other row, are ASSUMPTIONS (docs/model.md, "The host's
# CPU"): an offloading HBA (FC, NVMe/FC, RoCE) leaves the host the block layer and driver, a few microseconds a side;
# NVMe/TCP runs the same TCP/IP stack and copy as iSCSI without the SCSI midlayer, taken at about iSCSI's cost.
# "": no transport given (payload bytes only): as an offloading HBA.
TRANSPORT_CPU: dict[str, tuple[float, float, float]] = {
    "": (2e-6, 2e-6, 1e-6),
    "fc": (2.5e-6, 2.5e-6, 1e-6),
    "nvme-fc": (2e-6, 2e-6, 1e-6),
    "nvme-roce": (2e-6, 2e-6, 1e-6),
    "nvme-tcp": (5e-6, 7e-6, 2e-6),
    "iscsi": (6e-6, 6.3e-6, 2e-6),  # 14.3 us in all: i10 (NSDI 2020), 70K IOPS per core
}


@dataclass(frozen=True)
class CpuModel:
    """The run's cores (every host's, numbered host after host) and what each job and path costs them."""

    host_first: tuple[int, ...]  # per host its first core's number (-1: the host has no cpu table)
    host_cores: tuple[int, ...]  # per host its cores (0: none)
    core_host: tuple[int, ...]  # per core its host
    core_node: tuple[int, ...]  # per core its NUMA node
    job_core: tuple[int, ...]  # per job the core that submits its attempts (-1: its host has no cpu table)
    job_irq: tuple[int, ...]  # per job the core its completions are processed on
    path_submit: tuple[float, ...]  # per device path: CPU seconds to submit an attempt on it
    path_complete: tuple[float, ...]  # per device path: complete + irq / coalesce, before the NUMA factor
    factor: tuple[tuple[tuple[float, ...], ...], ...]  # per host [core node][adapter node]: the completion's multiplier

    def completion(self, job: int, path_node: int) -> tuple[int, float]:
        """The core that completes an I/O of ``job`` and the multiplier of its cost (adapter on ``path_node``)."""
        k = self.job_irq[job]
        return k, self.factor[self.core_host[k]][self.core_node[k]][path_node]


def cpu_costs(cpu: Any, transport: str) -> tuple[float, float, float]:
    """(submit, complete, irq) seconds for a path of ``transport`` on a host whose cpu table is ``cpu``."""
    s, c, i = TRANSPORT_CPU.get(transport, TRANSPORT_CPU[""])
    return (
        s if cpu.submit is None else cpu.submit,
        c if cpu.complete is None else cpu.complete,
        i if cpu.irq is None else cpu.irq,
    )


def compile_cpu(hosts_cfg: Any, hosts: Any, controllers: Any, paths: Any, jobs: Any) -> CpuModel | None:
    """The cores of every host with a ``cpu`` table; None when no host has one (no CPU is modelled at all)."""
    if all(h.cpu is None for h in hosts_cfg):
        return None
    first: list[int] = []
    n_cores: list[int] = []
    core_host: list[int] = []
    core_node: list[int] = []
    for h, hm in zip(hosts_cfg, hosts):
        if h.cpu is None:
            first.append(-1)
            n_cores.append(0)
            continue
        first.append(len(core_host))
        n_cores.append(h.cpu.cores)
        per = h.cpu.cores // hm.numa_nodes
        core_host.extend([hm.index] * h.cpu.cores)
        core_node.extend(k // per for k in range(h.cpu.cores))
    job_core: list[int] = []
    job_irq: list[int] = []
    rank_node: dict[tuple[int, int], int] = {}
    rank_host: dict[int, int] = {}
    for j in jobs:
        cfg = hosts_cfg[j.host].cpu
        if cfg is None:
            job_core.append(-1)
            job_irq.append(-1)
            continue
        cores, nodes = cfg.cores, hosts[j.host].numa_nodes
        per = cores // nodes
        k = rank_node.get((j.host, j.numa_node), 0)
        rank_node[(j.host, j.numa_node)] = k + 1
        r = rank_host.get(j.host, 0)
        rank_host[j.host] = r + 1
        core = j.numa_node * per + k % per
        q = cfg.queues if cfg.queues is not None else cores
        if cfg.irq_affinity == "local":
            queue = core * q // cores
            irq = -(-queue * cores // q)  # the first core whose queue is ``queue``: ceil(queue * cores / q)
        else:
            cpus = cfg.irq_affinity
            irq = cpus[(r % q) * len(cpus) // q]
        job_core.append(first[j.host] + core)
        job_irq.append(first[j.host] + irq)
    submit: list[float] = []
    complete: list[float] = []
    for p in paths:
        cfg = hosts_cfg[p.host].cpu
        if cfg is None:
            submit.append(0.0)
            complete.append(0.0)
            continue
        s, c, i = cpu_costs(cfg, getattr(controllers[p.controller], "transport", ""))
        submit.append(s)
        complete.append(c + i / cfg.coalesce)
    factor = tuple(
        tuple(tuple(h.numa_distances[a][b] / h.numa_distances[a][a] for b in range(h.numa_nodes)) for a in range(h.numa_nodes)) for h in hosts
    )
    return CpuModel(
        tuple(first),
        tuple(n_cores),
        tuple(core_host),
        tuple(core_node),
        tuple(job_core),
        tuple(job_irq),
        tuple(submit),
        tuple(complete),
        factor,
    )
