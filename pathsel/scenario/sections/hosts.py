"""The ``[[hosts]]`` section: a host's detection and timeouts, its queues (device and adapter queue depths, NVMe-oF
I/O queues, QUEUE FULL throttling, DSNRO), its NUMA nodes, its default transport and its CPU (``[hosts.cpu]``).
The checks across sections are in :mod:`pathsel.scenario.checks.hosts`.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, StrictInt, ValidationInfo, WithJsonSchema, field_validator, model_validator

from ...limits import MAX_NUMA_NODES
from .values import Mtu, Name, NonNegativeDuration, Strict, Transport, at_least_timeout, mtu_needs_ethernet, non_negative_duration, positive_duration

__all__ = ["CpuConfig", "DETECTION_PRESETS", "HostConfig", "MAX_CPU_COST"]


def _timeout(value: Any) -> float:
    """A duration of at least MIN_TIMEOUT (10 us), or ``never``/``queue`` (dm's no_path_retry queue: wait forever)."""
    if isinstance(value, str) and value.strip().lower() in ("never", "queue", "none"):
        return math.inf
    return at_least_timeout(
        positive_duration(value),
        value,
        "with no usable path each I/O fails after it and its job issues the next at once, so the host would fail "
        "more than 100,000 I/Os per simulated second (ESXi waits 140s; for dm's no_path_retry fail write 1ms)",
    )


def _io_timeout(value: Any) -> float:
    """A duration of at least MIN_TIMEOUT (10 us): a retry storm otherwise."""
    return at_least_timeout(
        positive_duration(value),
        value,
        "an attempt slower than it is aborted and retried, so with loss or a slow path the host would retry "
        "each I/O more than 100,000 times per simulated second (SCSI and NVMe hosts wait 30s)",
    )


Timeout = Annotated[float, BeforeValidator(_timeout), WithJsonSchema({"type": "string"})]
IoTimeout = Annotated[float, BeforeValidator(_io_timeout), WithJsonSchema({"type": "string"})]

# Real hosts' defaults for noticing a dead or returned path (docs/sources.md, "Detection and timeout defaults").
DETECTION_PRESETS = {
    "dm": 5.0,  # multipath.conf polling_interval
    "nvme": 5.0,  # NVMe-oF keep-alive timeout (kato)
    "iscsi": 120.0,  # open-iscsi node.session.timeo.replacement_timeout
}


def _detection(value: Any) -> float:
    """A duration >= 0, or the name of a host stack's default."""
    if isinstance(value, str) and value.strip().lower() in DETECTION_PRESETS:
        return DETECTION_PRESETS[value.strip().lower()]
    return non_negative_duration(value)


Detection = Annotated[float, BeforeValidator(_detection), WithJsonSchema({"type": "string"})]


MAX_CPU_COST = 0.01  # seconds: a per-I/O CPU time above 10 ms is a typo (a unit), not a driver


def _cpu_cost(value: Any) -> float:
    seconds = non_negative_duration(value)
    if not math.isfinite(seconds) or seconds > MAX_CPU_COST:
        raise ValueError(f"must be at most 10ms of CPU per I/O (got {value!r}): drivers take microseconds")
    return seconds


CpuCost = Annotated[float, BeforeValidator(_cpu_cost), WithJsonSchema({"type": "string"})]


def _cpu_list(value: Any) -> tuple[int, ...] | str:
    """irq_affinity: "local", a cpulist as /proc/irq/N/smp_affinity_list writes it ("1-16", "0-3,8-11") or a list of
    core numbers -> "local" or the cores in the order given."""
    if isinstance(value, str):
        text = value.strip()
        if text == "local":
            return "local"
        cores: list[int] = []
        for part in text.split(","):
            lo, dash, hi = part.strip().partition("-")
            # ASCII digits only: str.isdigit takes '\u0663' (int() reads it as 3) and '\u00b2' (int() refuses it)
            if not (lo.isascii() and lo.isdigit()) or (dash and not (hi.isascii() and hi.isdigit())):
                raise ValueError(f'{value!r}: expected "local" or a cpulist such as "1-16" or "0-3,8-11" (smp_affinity_list)')
            a, b = int(lo), int(hi) if dash else int(lo)
            if b < a:
                raise ValueError(f"{value!r}: the range {part.strip()!r} runs backwards")
            if b >= 4096 or len(cores) + b - a >= 4096:  # cores are at most 4,096: never expand a huge range
                raise ValueError(f"{value!r}: names core {b}, but a host has at most 4,096 cores")
            cores.extend(range(a, b + 1))
        value = cores
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError('an empty list of cores: give at least one (or "local")')
        if any(not isinstance(c, int) or isinstance(c, bool) or c < 0 for c in value):
            raise ValueError(f"{list(value)!r}: core numbers are integers >= 0")
        if len(set(value)) != len(value):
            raise ValueError(f"{list(value)!r}: a core is named twice")
        return tuple(value)
    raise ValueError(f'expected "local", a cpulist such as "1-16", or a list of core numbers, got {value!r}')


IrqAffinity = Annotated[tuple[int, ...] | str, BeforeValidator(_cpu_list), WithJsonSchema({"type": "string"})]


class CpuConfig(Strict):
    """The host's CPU (issue 33): cores, the CPU time each I/O costs, its I/O queues and where their interrupts land
    (docs/model.md, The host's CPU)."""

    cores: int = Field(ge=1, le=4096, strict=True, description="cores (logical CPUs, as nproc counts them), split evenly over numa_nodes in order")
    submit: CpuCost | None = Field(None, description="CPU time to submit one attempt, on its job's core. Default: by the path's transport")
    complete: CpuCost | None = Field(
        None, description="CPU time to complete one I/O (the status), on its queue's interrupt core. Default: by transport"
    )
    irq: CpuCost | None = Field(None, description="CPU time of one interrupt, shared by the coalesce completions it carries. Default: by transport")
    coalesce: int = Field(
        1,
        ge=1,
        le=1024,
        strict=True,
        description="completions per interrupt (interrupt coalescing: ethtool -C rx-frames, NVMe aggregation threshold)",
    )
    queues: int | None = Field(
        None,
        ge=1,
        le=4096,
        strict=True,
        description="I/O queues the completions arrive on (NVMe I/O queues, blk-mq hardware contexts, NIC receive queues). Default: one per core",
    )
    irq_affinity: IrqAffinity = Field(
        "local",
        description="where each queue's interrupt is handled: \"local\" (per-CPU queues: on the submitting core's queue, "
        'blk-mq\'s map) or the cores, a cpulist ("1-16") or a list, the queues spread over them in order',
    )

    @model_validator(mode="after")
    def _fits(self) -> CpuConfig:
        q = self.queues if self.queues is not None else self.cores
        if q > self.cores:
            raise ValueError(f"queues = {q} is more than cores = {self.cores}: pathsel maps at most one queue per core")
        if not isinstance(self.irq_affinity, str):
            bad = [c for c in self.irq_affinity if c >= self.cores]
            if bad:
                raise ValueError(f"irq_affinity names core {bad[0]}, but the host has cores 0-{self.cores - 1}")
        return self


class HostConfig(Strict):
    name: Name
    preferred_array: str | None = Field(
        None,
        description="Pure ActiveCluster preferred array / NetApp host proximity: that array's paths are AO, the peer's ANO",
    )
    detection: Detection = Field(5.0, description="time for the host to notice a path going down or up (dm polling_interval, NVMe keep-alive: 5 s)")
    apd_timeout: Timeout = Field(140.0, description="an I/O with no usable path fails after this (ESXi APD: 140 s; never = queue)")
    io_timeout: IoTimeout = Field(30.0, description="an attempt slower than this is aborted and retried (SCSI/NVMe: 30 s)")
    queue_depth: int | None = Field(
        None,
        ge=1,
        le=65536,
        strict=True,
        description="I/Os each of its devices takes at once (ESXi DQLEN, Linux queue_depth, NVMe queue_size); "
        "more wait in the host, in order (esxtop's KAVG, QUED). Default: no limit",
    )
    adapter_queue_depth: int | None = Field(
        None,
        ge=1,
        le=65536,
        strict=True,
        description="I/Os the host's adapter (HBA) takes at once over all its devices (lpfc_hba_queue_depth 8192); "
        "more wait in the host, in order, after their device took them (KAVG, QUED). Default: no limit",
    )
    nvme_io_queues: int | None = Field(
        None,
        ge=1,
        le=1024,
        strict=True,
        description="NVMe-oF only: I/O queues the host opens on each controller (nvme connect --nr-io-queues; "
        "Linux: the online CPUs); with nvme_queue_size, the controller's tags, shared by all its namespaces: "
        "nvme_io_queues x (nvme_queue_size - 1). An I/O whose path's controller has none free waits for one, "
        "in order (KAVG, QUED). Default: no limit",
    )
    nvme_queue_size: int | None = Field(
        None,
        ge=16,
        le=1024,
        strict=True,
        description="NVMe-oF only: entries of each I/O queue (nvme connect --queue-size; NVMF_DEF_QUEUE_SIZE 128, "
        "16 ... 1024); one is never used (a full queue's head and tail differ by one). Default: 128 when "
        "nvme_io_queues is set",
    )
    qfull_retry_delay: NonNegativeDuration = Field(
        0.003,
        description="a command answered QUEUE FULL is sent again this long after the status came back "
        "(Linux SCSI_QUEUE_DELAY 3 ms); it keeps its place in the device queue meanwhile",
    )
    qfull_sample_size: int = Field(
        0,
        ge=0,
        le=64,
        strict=True,
        description="ESXi Disk.QFullSampleSize: after this many QUEUE FULL statuses the device queue depth (DQLEN) "
        "is halved; 0 (the default) turns adaptive queue-depth throttling off (KB 1008113; NetApp: 32)",
    )
    qfull_threshold: int = Field(
        8,
        ge=1,
        le=16,
        strict=True,
        description="ESXi Disk.QFullThreshold: after this many good statuses a throttled DQLEN grows back by one "
        "(KB 1008113; NetApp: 4); at most qfull_sample_size",
    )
    # Disk.SchedNumReqOutstanding (issue 32): several VMs (worlds) on one device
    sched_num_req_outstanding: int | None = Field(
        None,
        ge=1,
        le=256,
        strict=True,
        description="ESXi Disk.SchedNumReqOutstanding (DSNRO; esxcli storage core device set -O, 1 ... 256, ESXi's "
        "default 32; pathsel also requires at most queue_depth): while more than one workload (VM) has I/O outstanding on a "
        "device, the device takes at most this many of them at once (dsnro_scope); a lone VM fills queue_depth. "
        "Default: none (Linux hosts have none)",
    )
    dsnro_scope: Literal["all_vms", "per_vm"] = Field(
        "all_vms",
        description='how sched_num_req_outstanding counts: "all_vms" (the default; VMware\'s Scalable Storage '
        "Performance, KB 1268) caps the VMs' I/Os together, \"per_vm\" caps each VM's own",
    )
    # NUMA (issue 16): the host's nodes, their SLIT distances and what a cross-node I/O costs
    numa_nodes: int = Field(
        1, ge=1, le=MAX_NUMA_NODES, strict=True, description="NUMA nodes (sockets) of the host, as numactl --hardware counts them"
    )
    numa_distances: tuple[tuple[StrictInt, ...], ...] | None = Field(
        None,
        description="the SLIT distance matrix as numactl --hardware prints it, one row per node "
        "(10 on the diagonal, e.g. 20 or 21 remote). Default: 10 local, 20 remote",
    )
    numa_penalty: NonNegativeDuration = Field(
        0.5e-6,
        description="host latency an I/O pays when the path's adapter sits on another node than the issuing "
        "CPU: this much per 10 distance units above local (an assumption; docs/model.md)",
    )
    transport: Transport | None = Field(None, description="the default transport of its [[paths]] (a path's own transport wins)")
    mtu: Mtu | None = None
    cpu: CpuConfig | None = Field(
        None, description="the host's CPU: cores and CPU time per I/O (docs/model.md, The host's CPU). Default: no CPU modelled"
    )

    @field_validator("mtu")
    @classmethod
    def _framing(cls, mtu: int | None, info: ValidationInfo) -> int | None:
        mtu_needs_ethernet(info.data.get("transport"), mtu)
        return mtu

    @field_validator("numa_distances")
    @classmethod
    def _numa(cls, d: Any, info: ValidationInfo) -> Any:
        n = info.data.get("numa_nodes")
        if d is None or n is None:
            return d
        if len(d) != n or any(len(row) != n for row in d):
            shape = f"{len(d)} row{'s' if len(d) != 1 else ''} of " + "/".join(sorted({str(len(r)) for r in d}) or ["0"])
            raise ValueError(f"must be a square {n} x {n} matrix (numa_nodes = {n}), got {shape}")
        for a, row in enumerate(d):
            for b, x in enumerate(row):
                if not 1 <= x <= 255:
                    raise ValueError(f"[{a}][{b}] = {x}: a SLIT distance is 1 ... 255 (10 is local)")
            if any(row[b] <= row[a] for b in range(n) if b != a):
                raise ValueError(f"row {a}: the diagonal ({row[a]}) must be the smallest in its row, a node being nearest itself (got {list(row)})")
        return d

    @model_validator(mode="after")
    def _cpu_nodes(self) -> HostConfig:
        if self.cpu is not None and self.cpu.cores % self.numa_nodes:
            raise ValueError(f"cpu.cores = {self.cpu.cores} does not split evenly over numa_nodes = {self.numa_nodes}: give each node as many cores")
        return self

    @model_validator(mode="after")
    def _throttling(self) -> HostConfig:
        if self.nvme_queue_size is not None and self.nvme_io_queues is None:
            raise ValueError(
                "nvme_queue_size needs nvme_io_queues: the controller's tags are nvme_io_queues x "
                "(nvme_queue_size - 1) (Linux's default, one queue per online CPU, is not modelled; "
                "e.g. nvme_io_queues = 8)"
            )
        if self.qfull_sample_size > 0:
            if self.queue_depth is None:
                raise ValueError(
                    "qfull_sample_size needs queue_depth: throttling halves the device queue depth, "
                    "so the host must have one (ESXi's DQLEN, e.g. queue_depth = 64)"
                )
            if self.qfull_threshold > self.qfull_sample_size:
                raise ValueError(
                    f"qfull_threshold ({self.qfull_threshold}) must be at most qfull_sample_size ({self.qfull_sample_size}), as KB 1008113 asks"
                )
        dsnro = self.sched_num_req_outstanding
        if dsnro is not None:
            if self.queue_depth is None:
                raise ValueError(
                    "sched_num_req_outstanding needs queue_depth: DSNRO caps the device queue (DQLEN) while VMs "
                    "compete, so the host must have one (e.g. queue_depth = 64)"
                )
            if dsnro > self.queue_depth:
                raise ValueError(
                    f"sched_num_req_outstanding ({dsnro}) must be at most queue_depth ({self.queue_depth}): a DSNRO "
                    "above the device's queue depth would never bind (raise both together, as VMware KB 1268 advises)"
                )
        return self
