"""The scenario file, validated: hosts, arrays, replication, paths, workloads, policies.

Field names are the words users already know: fio's for workloads (``rw``,
``rwmixread``, ``rwmixwrite``, ``bs``, ``iodepth``, ``numjobs``, ``ramp_time``), esxcli's for
policies, ALUA's for path states. Every model is frozen and rejects unknown
keys. Cross-references (a path's array, a host's preferred array) are checked
in :mod:`pathsel.scenario.load`, which knows the file name for the message.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    StrictInt,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from ..limits import (
    MAX_BLOCK_SIZE,
    MAX_DISTANCE_KM,
    MAX_INT32,
    MAX_NUMA_NODES,
    MAX_PATHS,
    MAX_RATE_IOPS,
    MAX_RATE_STEPS,
    MIN_BANDWIDTH,
    MIN_TIMEOUT,
    outstanding_problem,
)
from ..timing.arrivals import BlockThink, Schedule, Trace, read_trace
from ..timing.distributions import DELAY_KINDS, Constant, Distribution, delay_base_dir, parse_delay
from ..units import format_duration, parse_bandwidth, parse_duration, parse_size

__all__ = [
    "ScenarioModel",
    "ArrayConfig",
    "ServiceTime",
    "ReplicationConfig",
    "HostConfig",
    "PathGroup",
    "WorkloadConfig",
    "PolicyEntry",
    "Expectation",
    "FaultConfig",
    "LinkConfig",
    "SwitchConfig",
    "VolumeConfig",
    "PortGroupConfig",
    "FAULT_KINDS",
    "ALUA_STATES",
    "RW_MODES",
]

ALUA_STATES = ("AO", "ANO", "standby", "unavailable", "transitioning")
FAULT_KINDS = (
    "path_down",
    "path_up",
    "alua",
    "latency",
    "loss",
    "array_down",
    "array_up",
    "replication_down",
    "replication_up",
    "owner",
    "slow_drain",
)
RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw")

_DELAY_SCHEMA = {
    "anyOf": [
        {"type": "string", "description": 'a duration such as "50us" or "1ms" (constant)'},
        {
            "type": "object",
            "properties": {"dist": {"enum": list(DELAY_KINDS)}},
            "required": ["dist"],
        },
    ]
}


def _positive_duration(value: Any) -> float:
    seconds = parse_duration(value)
    if seconds <= 0:
        raise ValueError("must be > 0")
    return seconds


def _non_negative_duration(value: Any) -> float:
    seconds = parse_duration(value)
    if seconds < 0:
        raise ValueError("must be >= 0")
    return seconds


def _positive_bandwidth(value: Any) -> float:
    rate = parse_bandwidth(value)
    if rate <= 0:
        raise ValueError("must be > 0")
    if rate < MIN_BANDWIDTH:
        raise ValueError(
            f"{value!r} is slower than the 1kbit/s (125 bytes per second) pathsel takes: one 4 KiB frame would take more than half a minute"
        )
    return rate


def _at_least_timeout(seconds: float, value: Any, why: str) -> float:
    if seconds < MIN_TIMEOUT * (1 - 1e-9):  # "10us" is 9.999999999999999e-06 s
        raise ValueError(f"{value!r} is shorter than the {format_duration(MIN_TIMEOUT)} pathsel takes: {why}")
    return seconds


def _block_sizes(value: Any) -> tuple[tuple[int, float], ...]:
    """fio ``bs``: ``"32k"`` or a split ``"4k/50:64k/50"`` -> ((size, percent), ...).

    As in fio's bssplit, entries without a percentage share what is left of 100.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError(f'expected a block size such as "4k" or "4k/50:64k/50", got {value!r}')
    parts: list[tuple[int, float | None]] = []
    for item in value.split(":"):
        size_text, slash, pct_text = item.partition("/")
        size = parse_size(size_text)
        if size <= 0:
            raise ValueError("block size must be > 0")
        if size > MAX_BLOCK_SIZE:
            raise ValueError(f"block size {size_text.strip()!r} is more than the 1g (1 GiB) pathsel takes")
        if slash:
            try:
                pct = float(pct_text)
            except ValueError:
                pct = math.nan
            if not math.isfinite(pct):
                raise ValueError(f"{item!r}: percentage {pct_text!r} is not a number")
            if pct < 0:
                raise ValueError(f"{item!r}: percentage must be >= 0")
            parts.append((size, pct))
        else:
            parts.append((size, None))
    given = sum(p for _, p in parts if p is not None)
    if given > 100 + 1e-9:
        raise ValueError(f"bs split percentages add up to {given:g}, more than 100")
    blanks = [s for s, p in parts if p is None]
    share = (100.0 - given) / len(blanks) if blanks else 0.0
    out = tuple((s, share if p is None else p) for s, p in parts)
    if sum(p for _, p in out) <= 0:
        raise ValueError("bs split percentages must add up to more than 0")
    return out


Delay = Annotated[Distribution, PlainValidator(parse_delay), WithJsonSchema(_DELAY_SCHEMA)]
ServiceDelay = Annotated[Distribution, PlainValidator(lambda v: parse_delay(v, allow_zero=True)), WithJsonSchema(_DELAY_SCHEMA)]
PositiveDuration = Annotated[float, BeforeValidator(_positive_duration), WithJsonSchema({"type": "string"})]
NonNegativeDuration = Annotated[float, BeforeValidator(_non_negative_duration), WithJsonSchema({"type": "string"})]
Bandwidth = Annotated[float, BeforeValidator(_positive_bandwidth), WithJsonSchema({"type": "string"})]
BlockSizes = Annotated[tuple[tuple[int, float], ...], BeforeValidator(_block_sizes), WithJsonSchema({"type": "string"})]
Name = Annotated[str, Field(min_length=1)]
# FC frames (FC-FS): 36 bytes the smallest (SOF, header, CRC, EOF, no payload), 2148 the largest (a 2112-byte data field)
FC_MIN_FRAME, FC_MAX_FRAME = 36, 2148
MAX_BB_CREDITS = 65535  # the largest BB_Credit a login can advertise: a 16-bit field (FC-LS)
DEFAULT_SWITCH_LATENCY = 0.8e-6  # seconds: docs/model.md, "The fabric: switches, credits and slow drain"
AluaState = Literal["AO", "ANO", "standby", "unavailable", "transitioning"]
# frames on the wire (issue 33): the transport a nexus runs, whose per-frame overhead model/frames.py counts
Transport = Literal["fc", "nvme-fc", "iscsi", "nvme-tcp", "nvme-roce"]
ETHERNET_TRANSPORTS = ("iscsi", "nvme-tcp", "nvme-roce")
Mtu = Annotated[
    int,
    Field(
        ge=576,
        le=9216,
        strict=True,
        description="Ethernet transports only: the IP MTU in bytes (ip link ... mtu; 1500 standard, 9000 jumbo). Default 1500",
    ),
]


def _mtu_needs_ethernet(transport: str | None, mtu: int | None) -> None:
    if mtu is not None and transport is not None and transport not in ETHERNET_TRANSPORTS:
        raise ValueError(
            f"mtu = {mtu} is for Ethernet transports ({', '.join(ETHERNET_TRANSPORTS)}); {transport!r} frames carry "
            "a fixed 2,112-byte data field at most (FC-FS): drop mtu"
        )


Ppm = Annotated[float, Field(ge=0, le=1_000_000, strict=True, allow_inf_nan=False, description="frames lost per million")]
# which ops' frames a loss hits (issue 37): "write" is a path that drops the frames of writes only (an MTU mismatch
# dropping full-size data-out PDUs while the small READ commands pass), "read" the frames of reads only
LossOps = Literal["read", "write", "both"]
LOSS_OPS_HELP = 'the ops whose frames are lost: "read", "write" or "both"'


def _on_earth(km: float) -> float:
    if km > MAX_DISTANCE_KM:
        raise ValueError(f"{km:g} km is more than once round the Earth ({MAX_DISTANCE_KM:g} km), the longest fibre pathsel takes")
    return km


Km = Annotated[
    float,
    Field(ge=0, strict=True, allow_inf_nan=False, description="fibre length; adds 5 us per km one way"),
    AfterValidator(_on_earth),
]


def _timeout(value: Any) -> float:
    """A duration of at least MIN_TIMEOUT (10 us), or ``never``/``queue`` (dm's no_path_retry queue: wait forever)."""
    if isinstance(value, str) and value.strip().lower() in ("never", "queue", "none"):
        return math.inf
    return _at_least_timeout(
        _positive_duration(value),
        value,
        "with no usable path each I/O fails after it and its job issues the next at once, so the host would fail "
        "more than 100,000 I/Os per simulated second (ESXi waits 140s; for dm's no_path_retry fail write 1ms)",
    )


def _io_timeout(value: Any) -> float:
    """A duration of at least MIN_TIMEOUT (10 us): a retry storm otherwise."""
    return _at_least_timeout(
        _positive_duration(value),
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
    return _non_negative_duration(value)


Detection = Annotated[float, BeforeValidator(_detection), WithJsonSchema({"type": "string"})]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)


class ServiceTime(_Strict):
    """Time an array spends on one I/O once it holds one of its slots, by op."""

    read: ServiceDelay = Constant(100e-6)
    write: ServiceDelay = Constant(100e-6)


def _service_time(value: Any) -> Any:
    """One delay (``"150us"`` or a ``{dist = ...}`` table) is the same for reads and writes;
    a table of ``read`` and ``write`` gives each its own."""
    if isinstance(value, dict) and "dist" not in value:
        return value
    if isinstance(value, ServiceTime):
        return value
    # validated here, so that a bad value is reported at service_time, where it was written
    delay = parse_delay(value, allow_zero=True)
    return {"read": delay, "write": delay}


_SERVICE_TIME_SCHEMA = {
    "anyOf": [
        _DELAY_SCHEMA["anyOf"][0],
        _DELAY_SCHEMA["anyOf"][1],
        {
            "type": "object",
            "properties": {"read": _DELAY_SCHEMA, "write": _DELAY_SCHEMA},
            "additionalProperties": False,
            "description": "a delay for reads and one for writes",
        },
    ],
    "description": "one delay for reads and writes, or a table of read and write",
}


class PortGroupConfig(_Strict):
    """A target port group (SCSI TPG, NVMe ANA group) of an array: its ports share an ALUA state per volume."""

    name: Name
    controller: Name


class ArrayConfig(_Strict):
    name: Name
    service_time: Annotated[ServiceTime, BeforeValidator(_service_time), WithJsonSchema(_SERVICE_TIME_SCHEMA)] = Field(
        ServiceTime(), description="time an I/O holds a slot: one delay for both ops, or { read = ..., write = ... }"
    )
    concurrency: int = Field(64, ge=1, le=MAX_INT32, strict=True, description="I/Os the array serves in parallel; more wait in a FIFO queue")
    service_time_per_kib: NonNegativeDuration = Field(
        0.0, description="added to each service time per KiB of the I/O: a fixed part plus a per-size part, so 1 MiB costs more than 4 KiB"
    )
    read_hit_ratio: float = Field(
        0.0,
        ge=0,
        le=1,
        strict=True,
        allow_inf_nan=False,
        description="share of reads served from the array's cache (0 to 1): a hit takes read_hit_service_time instead "
        "of the read service_time (plus service_time_per_kib either way); drawn from the array's read service stream",
    )
    read_hit_service_time: ServiceDelay = Field(
        Constant(20e-6),
        description="service time of a read cache hit (default 20us, an assumption: DRAM plus the "
        "controller's command processing); used only with read_hit_ratio > 0",
    )
    port_queue_depth: int | None = Field(
        None,
        ge=1,
        le=MAX_INT32,
        strict=True,
        description="commands each of its target ports holds at once (FC target ports: 2048-4096); one more is "
        "answered QUEUE FULL (SCSI status 0x28) and retried by the host. Default: no limit",
    )
    # target port groups (issue 32): a dual-controller array, ALUA per (volume, group), the other controller's cost
    controllers: tuple[Name, ...] = Field(
        (),
        description='the array\'s controllers (storage processors, nodes), e.g. ["A", "B"]: each volume is owned by one; '
        "an I/O a path brings to another controller crosses the inter-controller link. Default: one controller, no crossing",
    )
    port_groups: tuple[PortGroupConfig, ...] = Field(
        (), description="target port groups (SCSI TPGs, NVMe ANA groups), each on a controller. Default: one per controller, named as it"
    )
    inter_controller_latency: NonNegativeDuration = Field(
        20e-6,
        description="one-way time an I/O received on a controller that does not own its volume spends crossing to the "
        "owner (each frame of the attempt pays it; an assumption: docs/model.md). Used only with controllers",
    )
    inter_controller_bandwidth: Bandwidth | None = Field(
        8e9,
        description="bandwidth of the link between the controllers, each direction: data frames of crossing I/Os "
        "serialise on it, in order (default 8GB/s, a PCIe Gen3 x8 link: an assumption, docs/model.md)",
    )

    implicit_alua: PositiveDuration | None = Field(
        None,
        description="implicit ALUA: every this long the array moves each volume to the controller that received "
        "more than twice as many of its commands as its owner in that time (an option; docs/model.md). Default: off",
    )

    @field_validator("implicit_alua")
    @classmethod
    def _implicit(cls, value: float | None, info: ValidationInfo) -> float | None:
        if value is not None:
            if value < 0.01 * (1 - 1e-9):
                raise ValueError(f"{format_duration(value)} is shorter than the 10ms pathsel takes between two ownership checks")
            if len(info.data.get("controllers") or ()) < 2:
                raise ValueError('needs two or more controllers to move volumes between (controllers = ["A", "B"])')
        return value

    @field_validator("controllers")
    @classmethod
    def _controllers(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        dup = next((c for i, c in enumerate(value) if c in value[:i]), None)
        if dup is not None:
            raise ValueError(f"names {dup!r} twice")
        return value

    @field_validator("port_groups")
    @classmethod
    def _port_groups(cls, value: tuple[PortGroupConfig, ...], info: ValidationInfo) -> tuple[PortGroupConfig, ...]:
        controllers = info.data.get("controllers")
        if controllers is None:  # reported at controllers
            return value
        if value and not controllers:
            raise ValueError("needs controllers: each group sits on one of the array's controllers")
        names = [g.name for g in value]
        for g in value:
            if names.count(g.name) > 1:
                raise ValueError(f"names {g.name!r} twice")
            if g.controller not in controllers:
                raise ValueError(f"port group {g.name!r}: no controller named {g.controller!r} (controllers: {', '.join(controllers)})")
        return value

    def groups(self) -> tuple[tuple[str, str], ...]:
        """Its target port groups as (name, controller): as given, or one per controller named as it."""
        if self.port_groups:
            return tuple((g.name, g.controller) for g in self.port_groups)
        return tuple((c, c) for c in self.controllers)


class ReplicationConfig(_Strict):
    """Synchronous active-active replication between two arrays (uniform host access)."""

    arrays: Annotated[tuple[Name, Name], BeforeValidator(_array_pair)]
    one_way_latency: Delay
    bandwidth: Bandwidth | None = None
    distance_km: Km = 0.0
    loss_ppm: Ppm = 0.0
    loss_recovery: PositiveDuration = Field(0.2, description="a lost frame is resent after this (TCP minimum RTO)")
    preferred_site: str | None = Field(None, description="the array the mediator keeps serving when the replication link fails (default: the first)")


MAX_CPU_COST = 0.01  # seconds: a per-I/O CPU time above 10 ms is a typo (a unit), not a driver


def _cpu_cost(value: Any) -> float:
    seconds = _non_negative_duration(value)
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


class CpuConfig(_Strict):
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


class HostConfig(_Strict):
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
        _mtu_needs_ethernet(info.data.get("transport"), mtu)
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


def _path_count(count: int) -> int:
    if count > MAX_PATHS:
        raise ValueError(f"count = {count:,} is more than the {MAX_PATHS:,} paths pathsel simulates in one run")
    return count


class PathGroup(_Strict):
    """One path, or ``count`` similar paths named from a template with ``{i}``."""

    name: Name
    array: Name
    host: str | None = None
    count: Annotated[int, Field(ge=1, strict=True), AfterValidator(_path_count)] = 1
    start: int = Field(0, ge=0, strict=True)
    one_way_latency: Delay
    bandwidth: Bandwidth | None = None
    alua: AluaState | None = None
    distance_km: Km = 0.0
    extra_latency: NonNegativeDuration = Field(
        0.0, description="one-way seconds added to every frame: a path that is simply slower (a condition, not a fault)"
    )
    loss_ppm: Ppm = 0.0
    loss_ops: LossOps = Field("both", description=LOSS_OPS_HELP)
    loss_recovery: PositiveDuration = Field(0.2, description="a lost frame is resent after this (TCP minimum RTO)")
    links: tuple[Name, ...] = Field((), description="shared [[links]] this path crosses (an HBA port, an ISL)")
    weight: int = Field(0, ge=0, le=MAX_INT32, strict=True, description="static path weight (Windows MPIO weighted paths)")
    target_port: Name | None = Field(
        None,
        description="the array's target port this nexus lands on ({i} as in name): nexuses naming one port of "
        "an array share its port_queue_depth. Default: a port of its own",
    )
    numa_node: int = Field(0, ge=0, strict=True, description="the NUMA node of the HBA/NIC the path's nexus (controller) sits on")
    port_group: Name | None = Field(
        None,
        description="the target port group (of its array's port_groups, or a controller's name) its target port belongs "
        "to; required when the array has controllers",
    )
    transport: Transport | None = Field(
        None,
        description='the nexus\'s transport ("fc", "nvme-fc", "iscsi", "nvme-tcp", "nvme-roce"): every frame of an '
        "exchange (command, data, status) then serialises with its real overhead (docs/model.md, Frames and line rates). "
        "Default: its host's, else none (payload bytes only)",
    )
    mtu: Mtu | None = None

    @field_validator("mtu")
    @classmethod
    def _framing(cls, mtu: int | None, info: ValidationInfo) -> int | None:
        _mtu_needs_ethernet(info.data.get("transport"), mtu)
        return mtu

    def names(self) -> list[str]:
        return [self.name.replace("{i}", str(self.start + k)) for k in range(self.count)]

    def target_ports(self) -> list[str | None]:
        if self.target_port is None:
            return [None] * self.count
        return [self.target_port.replace("{i}", str(self.start + k)) for k in range(self.count)]


class LinkConfig(_Strict):
    """A link shared by several paths (an HBA port, an inter-switch link): frames queue for it."""

    name: Name
    bandwidth: Bandwidth
    distance_km: Km = 0.0
    extra_latency: NonNegativeDuration = Field(
        0.0, description="one-way seconds added to every frame of every path crossing it (a congested ISL, as a condition)"
    )
    loss_ppm: Ppm = 0.0
    loss_ops: LossOps = Field("both", description=LOSS_OPS_HELP)
    # the fabric (issue 33, docs/model.md "The fabric: switches, credits and slow drain")
    between: tuple[Name, ...] | None = Field(
        None,
        description="its two ends: [[switches]] names, or a host or array port's name (any other name): an ISL is a link "
        "between two switches; consecutive links of a path's route must meet at a switch",
    )
    bb_credits: int | None = Field(
        None,
        ge=1,
        le=MAX_BB_CREDITS,
        strict=True,
        description="FC buffer-to-buffer credits its receiver advertises (Brocade F_Port default 8): the link carries at most "
        "bb_credits x frame_size per round trip of a frame and its R_RDY. Default: no credit limit",
    )
    frame_size: int | None = Field(
        None,
        ge=FC_MIN_FRAME,
        le=FC_MAX_FRAME,
        strict=True,
        description="bytes of one frame on the wire, with bb_credits (default 2148: a full FC frame with its overhead)",
    )
    credit_return: NonNegativeDuration | None = Field(
        None,
        description="with bb_credits: seconds the port at its end (not a switch) takes to return each R_RDY beyond the "
        "round trip: a slow-drain device, as a condition (default 0)",
    )

    @field_validator("between")
    @classmethod
    def _two_ends(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if v is not None and len(v) != 2:
            raise ValueError(f"a link has two ends: between = [end, end], got {len(v)} name{'s' if len(v) != 1 else ''}")
        return v

    @model_validator(mode="after")
    def _credits(self) -> LinkConfig:
        for key in ("frame_size", "credit_return"):
            if getattr(self, key) is not None and self.bb_credits is None:
                raise ValueError(f"{key} needs bb_credits: it only matters to buffer-to-buffer credit flow control")
        if self.between is not None and self.between[0] == self.between[1]:
            raise ValueError(f"between names {self.between[0]!r} twice: a link joins two different ends")
        return self


class SwitchConfig(_Strict):
    """A fabric switch (FC) that [[links]] meet at: each switch a frame crosses adds its forwarding latency."""

    name: Name
    latency: NonNegativeDuration = Field(
        DEFAULT_SWITCH_LATENCY,
        description="one-way seconds the switch adds to each frame it forwards (default 0.8us: an assumption from a vendor's "
        "port-to-port table, docs/model.md)",
    )


class VolumeConfig(_Strict):
    """A volume (LUN, namespace) seen by every host over its paths to the volume's arrays."""

    name: Name
    lun: int | None = Field(None, ge=0, strict=True, description="fills {lun} in path names")
    arrays: tuple[Name, ...] | None = Field(
        None, min_length=1, description="arrays holding it (default: all); both of the replication pair = stretched"
    )
    owner: Name | None = Field(
        None,
        description="the controller that owns it (arrays with controllers): its port groups are AO, the others ANO, and "
        "I/O received elsewhere crosses to it. Default: the volumes of an array alternate between its controllers",
    )
    alua: dict[str, AluaState] | None = Field(
        None, description='its ALUA state per target port group, e.g. { tpg1 = "AO", tpg2 = "ANO" } (what an importer reads)'
    )
    sched_num_req_outstanding: int | None = Field(
        None,
        ge=1,
        le=256,
        strict=True,
        description="ESXi's DSNRO of this volume's devices (ESXi sets it per device: esxcli storage core device set -d "
        "DEVICE -O N): overrides [[hosts]] sched_num_req_outstanding; 1 ... 256, at most the queue_depth of each host "
        "that sees the volume. Default: the host's",
    )
    # a policy per device (issue 32): a host as it is, each device on its own PSP / path selector
    policy: str | dict[str, Any] | None = Field(
        None,
        description='the policy its devices use in every run, a spec ("latency", "rr:iops=1000") or a table '
        "{ spec = \"rr\", iops = 1000 }; a [[policies]] entry's volumes = { NAME = SPEC } overrides it. Default: the run's policy",
    )


def _derived_iops(rate: float, mean_bs: float, where: str = "") -> float:
    """I/Os per second of ``rate`` bytes per second at a mean block size of ``mean_bs`` bytes, within MAX_RATE_IOPS."""
    iops = rate / mean_bs
    if iops > MAX_RATE_IOPS:
        raise ValueError(
            f"{where}rate = {rate:,.6g} bytes per second over a mean block size of {mean_bs:,.6g} bytes is {iops:,.4g} IOPS "
            f"per job copy, more than the {MAX_RATE_IOPS:,.0f} (rate_iops's limit) pathsel takes"
        )
    return iops


class RateStep(_Strict):
    """One step of a rate schedule: from ``at`` on, arrivals come at ``rate_iops`` (or ``rate``, bytes per second)."""

    at: NonNegativeDuration
    rate_iops: float | None = Field(None, ge=0, le=MAX_RATE_IOPS, strict=True, allow_inf_nan=False, description="I/Os per second from at on (0: off)")
    rate: Bandwidth | None = Field(None, description="bytes per second from at on: rate / mean bs I/Os per second")

    @model_validator(mode="after")
    def _one(self) -> RateStep:
        if (self.rate_iops is None) == (self.rate is None):
            raise ValueError("a rate_schedule step needs rate_iops or rate (bytes per second), one of them")
        return self


class WorkloadConfig(_Strict):
    """A fio job: ``numjobs`` copies each keeping ``iodepth`` I/Os outstanding (closed loop), or offered at a rate."""

    name: Name = "job"
    host: str | None = None
    volume: str | None = None
    rw: Literal["read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"] = "randread"
    rwmixread: int = Field(50, ge=0, le=100, strict=True, description="% reads in a mixed workload")
    rwmixwrite: int | None = Field(None, ge=0, le=100, strict=True, description="% writes in a mixed workload (fio); 100 - rwmixread when not given")
    bs: BlockSizes = ((4096, 100.0),)
    iodepth: int = Field(1, ge=1, le=65536, strict=True)
    numjobs: int = Field(1, ge=1, le=4096, strict=True)
    ramp_time: NonNegativeDuration = 0.0
    rate_iops: float | None = Field(
        None,
        gt=0,
        le=MAX_RATE_IOPS,
        strict=True,  # a number in quotes is refused with "drop the quotes", as for every other number
        allow_inf_nan=False,
        description="offered load, I/Os per second per job copy (open loop; iodepth caps those issued and not done)",
    )
    rate: Bandwidth | None = Field(None, description="offered load in bytes per second (fio's rate): rate_iops = rate / mean bs")
    rate_process: Literal["linear", "poisson"] = Field("linear", description="fio's rate_process: evenly spaced arrivals, or a Poisson process")
    # offered load that changes (issue 16): a schedule of rates, or fio's thinktime on/off
    rate_schedule: tuple[RateStep, ...] | None = Field(
        None,
        min_length=1,
        max_length=MAX_RATE_STEPS,
        description='steps [{at = "500ms", rate_iops = 80000}, ...]: the offered rate from each at on (rate_iops before the first)',
    )
    rate_schedule_period: PositiveDuration | None = Field(None, description="the schedule repeats every period (each step's at within it)")
    thinktime: PositiveDuration | None = Field(None, description="fio's thinktime for an open loop: arrivals pause this long after each burst")
    thinktime_blocks: int | None = Field(
        None, ge=1, le=MAX_INT32, strict=True, description="fio's thinktime_blocks: a burst is this many arrivals (default 1)"
    )
    thinktime_iotime: PositiveDuration | None = Field(
        None, description="fio's thinktime_iotime: a burst lasts this long (arrivals at rate_iops), then thinktime off"
    )
    numa_node: int = Field(0, ge=0, strict=True, description="the NUMA node the job's CPUs run on (fio's numa_cpu_nodes)")
    iodepth_full: Literal["wait", "refuse"] = Field(
        "wait", description="an open loop's arrival finding iodepth issued and not done: waits in the host, or is refused"
    )
    # a trace replayed (fio's read_iolog): arrival times, ops and sizes from a file
    iolog_format: Literal["auto", "fio", "blkparse", "csv"] = Field(
        "auto", description="read_iolog's format: fio iolog v2/v3, blkparse text, CSV time,op,offset,size"
    )
    replay_time_scale: float = Field(
        100.0,
        gt=0,
        le=1e6,
        strict=True,
        allow_inf_nan=False,
        description="fio's replay_time_scale, %: 200 replays twice as fast, 50 at half the trace's rate",
    )
    replay_no_stall: bool = Field(False, strict=True, description="fio's replay_no_stall: ignore the timestamps, issue as fast as iodepth lets")
    read_iolog: Annotated[Any, WithJsonSchema({"type": "string"})] = Field(
        None, description="a trace to replay: its arrival times, ops and sizes (relative to the scenario file)"
    )

    @field_validator("read_iolog", mode="before")
    @classmethod
    def _read_iolog(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or isinstance(value, Trace):
            return value
        if not isinstance(value, str):
            raise ValueError(f'must be a file name such as "data/trace.log", got {value!r}')
        if "iolog_format" not in info.data or "replay_time_scale" not in info.data or "replay_no_stall" not in info.data:
            return None  # a bad sibling key is reported on its own
        return read_trace(value, info.data["iolog_format"], info.data["replay_time_scale"], info.data["replay_no_stall"], delay_base_dir.get())

    @model_validator(mode="after")
    def _rate(self) -> WorkloadConfig:
        if self.rate is not None and self.rate_iops is not None:
            raise ValueError("give rate_iops or rate (bytes per second), not both")
        if self.rate is not None:
            # the limit holds for the rate the engine runs, not for the figure the user typed
            object.__setattr__(self, "rate_iops", _derived_iops(self.rate, self._mean_bs()))
        if (
            "rate_process" in self.model_fields_set
            and self.rate_iops is None
            and self.rate_schedule is None
            and "read_iolog" not in self.model_fields_set
        ):  # a trace: _arrivals says what to drop
            raise ValueError("rate_process needs rate_iops, rate or rate_schedule (without them the job is a closed loop)")
        return self

    @model_validator(mode="after")
    def _arrivals(self) -> WorkloadConfig:
        given = self.model_fields_set
        replay = [k for k in ("iolog_format", "replay_time_scale", "replay_no_stall") if k in given]
        if "read_iolog" in given:
            clash = [
                k for k in ("rate_iops", "rate", "rate_process", "rate_schedule", "thinktime", "rw", "rwmixread", "rwmixwrite", "bs") if k in given
            ]
            if clash:
                raise ValueError(f"read_iolog gives each I/O's arrival time, op and size: drop {', '.join(clash)}")
        elif replay:
            raise ValueError(f"{replay[0]} needs read_iolog (a trace to replay)")
        if "iodepth_full" in given and self.rate_iops is None and self.rate_schedule is None and "read_iolog" not in given:
            raise ValueError(
                "iodepth_full applies to an open loop (rate_iops, rate, rate_schedule or read_iolog): a closed loop never has an arrival to refuse"
            )
        if self.rate_schedule_period is not None and self.rate_schedule is None:
            raise ValueError("rate_schedule_period needs rate_schedule")
        think = [k for k in ("thinktime_blocks", "thinktime_iotime") if k in given]
        if self.thinktime is None and think:
            raise ValueError(f"{think[0]} needs thinktime (the pause after each burst)")
        if self.thinktime is not None:
            if self.rate_iops is None or self.rate_schedule is not None:
                raise ValueError(
                    "thinktime pauses an open loop's arrivals: give rate_iops or rate, and no rate_schedule "
                    "(pathsel does not model thinktime in a closed loop)"
                )
            if len(think) == 2:
                raise ValueError("give thinktime_blocks or thinktime_iotime, not both")
        if self.rate_schedule is not None:
            steps = self.rate_schedule
            ats = [st.at for st in steps]
            if any(b <= a for a, b in zip(ats, ats[1:])):
                raise ValueError("rate_schedule: each step's at must come after the one before")
            if self.rate_iops is None and ats[0] != 0:
                raise ValueError(
                    f'rate_schedule: the first step is at {format_duration(ats[0])}: start it at "0s", or '
                    "give rate_iops (or rate) for the time before it"
                )
            period = self.rate_schedule_period
            if period is not None and ats[-1] >= period:
                raise ValueError(f"rate_schedule: a step at {format_duration(ats[-1])} is not within rate_schedule_period {format_duration(period)}")
            try:
                self.arrival_spec()
            except ValueError as e:
                raise ValueError(f"rate_schedule: {e}") from None
        return self

    def _mean_bs(self) -> float:
        return sum(s * w for s, w in self.bs) / sum(w for _, w in self.bs)

    def arrival_spec(self) -> Any:
        """How this job's arrivals come, when not at one steady rate: a Schedule, a BlockThink, a Trace, or None."""
        if isinstance(self.read_iolog, Trace):
            return self.read_iolog
        poisson = self.rate_process == "poisson"
        if self.rate_schedule is not None:
            starts, rates = [], []
            if self.rate_iops is not None and self.rate_schedule[0].at > 0:
                starts.append(0.0)
                rates.append(self.rate_iops)
            for st in self.rate_schedule:
                starts.append(st.at)
                if st.rate_iops is not None:
                    rates.append(st.rate_iops)
                else:  # RateStep._one: rate is given when rate_iops is not
                    assert st.rate is not None
                    rates.append(_derived_iops(st.rate, self._mean_bs(), f"the step at {format_duration(st.at)}: "))
            return Schedule(tuple(starts), tuple(rates), self.rate_schedule_period or 0.0, poisson)
        if self.thinktime is not None and self.rate_iops is not None:
            if self.thinktime_iotime is not None:
                return Schedule((0.0, self.thinktime_iotime), (self.rate_iops, 0.0), self.thinktime_iotime + self.thinktime, poisson)
            return BlockThink(self.rate_iops, self.thinktime_blocks or 1, self.thinktime, poisson)
        return None

    @model_validator(mode="after")
    def _mix(self) -> WorkloadConfig:
        """fio's two names for one split: either gives the other; both must agree."""
        given_read = "rwmixread" in self.model_fields_set
        if self.rwmixwrite is not None and given_read and self.rwmixread + self.rwmixwrite != 100:
            # fio lets the later of the two win; a scenario's keys are not read in order, so say so
            raise ValueError(
                f"rwmixread = {self.rwmixread} and rwmixwrite = {self.rwmixwrite} add up to "
                f"{self.rwmixread + self.rwmixwrite}, not 100: give one of them, or two that add up to 100"
            )
        # frozen model: set the derived one directly, so either name reads the split
        if self.rwmixwrite is not None and not given_read:
            object.__setattr__(self, "rwmixread", 100 - self.rwmixwrite)
        elif self.rwmixwrite is None:
            object.__setattr__(self, "rwmixwrite", 100 - self.rwmixread)
        return self

    @model_validator(mode="after")
    def _outstanding(self) -> WorkloadConfig:
        problem = outstanding_problem(self.numjobs, self.iodepth)
        if problem:
            raise ValueError(problem)
        return self

    @property
    def read_fraction(self) -> float:
        if self.rw in ("read", "randread"):
            return 1.0
        if self.rw in ("write", "randwrite"):
            return 0.0
        return self.rwmixread / 100.0


class Expectation(_Strict):
    """A measured figure the run should reproduce (shown beside the simulated one)."""

    iops: float | None = Field(None, gt=0, strict=True, allow_inf_nan=False)
    tolerance: float = Field(0.15, gt=0, le=1, strict=True, allow_inf_nan=False)
    source: str = ""


def _array_pair(value: Any) -> Any:
    if isinstance(value, (list, tuple)) and len(value) != 2:
        raise ValueError(f"must name exactly two arrays, got {list(value)!r}")
    return value


def _policy_entry(value: Any) -> Any:
    if isinstance(value, str):
        return {"spec": value}
    if not isinstance(value, (dict, PolicyEntry)):
        raise ValueError(f'must be a spec string such as "rr:iops=1" or a table with a spec key, got {value!r}')
    return value


class PolicyEntry(BaseModel):
    """A policy to compare. Keys beside ``spec`` are policy parameters (checked by name)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    spec: Name | None = None  # required unless volumes names a policy for every volume (load.py says so)
    label: str | None = None
    preferred_array: str | None = None
    expect: Expectation | None = None
    # one assignment of policies to devices (issue 32): volume name -> spec string or { spec = ..., key = value }
    volumes: dict[str, str | dict[str, Any]] | None = None

    @property
    def extra_params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class FaultConfig(_Strict):
    """A change at a given time. ``path`` names a nexus (every volume's path over it changes)."""

    at: NonNegativeDuration
    what: Literal[
        "path_down", "path_up", "alua", "latency", "loss", "array_down", "array_up", "replication_down", "replication_up", "owner", "slow_drain"
    ]
    path: Name | None = None
    volume: Name | None = Field(None, description="alua: only this volume's paths; owner: the volume that moves")
    port_group: Name | None = Field(None, description="alua: the paths landing on this target port group")
    controller: Name | None = Field(None, description="owner: the controller that owns the volume from now on")
    link: Name | None = Field(None, description='a [[links]] name, or "replication", for latency and loss')
    array: Name | None = None
    host: str | None = None
    state: AluaState | None = None
    add: NonNegativeDuration | None = Field(None, description="latency: one-way delay added from now on (0 removes it)")
    ppm: Ppm | None = None
    loss_ops: LossOps | None = Field(None, description='loss: the ops whose frames are lost from now on (default "both")')
    duration: PositiveDuration | None = Field(None, description="latency or loss: undone after this long")
    credit_return: NonNegativeDuration | None = Field(
        None, description="slow_drain: seconds the link's port takes to return each R_RDY from now on (undone after duration)"
    )
    stop: bool | None = Field(None, description="slow_drain: the link's port stops draining until the fault reverts (needs duration)")


class ScenarioModel(_Strict):
    name: Name = "scenario"
    description: str = ""
    source: str = Field("", description="where the scenario's figures come from")
    seed: int = Field(0, ge=0, strict=True)
    duration: PositiveDuration = 10.0
    interval: PositiveDuration = 1.0
    protocol: Literal["scsi", "nvme"] = "scsi"
    arrays: tuple[ArrayConfig, ...] = Field(min_length=1)
    replication: ReplicationConfig | None = None
    hosts: tuple[HostConfig, ...] = Field((HostConfig(name="host"),), min_length=1)
    volumes: tuple[VolumeConfig, ...] = ()
    links: tuple[LinkConfig, ...] = ()
    switches: tuple[SwitchConfig, ...] = ()
    paths: tuple[PathGroup, ...] = Field(min_length=1)
    workloads: tuple[WorkloadConfig, ...] = Field(min_length=1)
    policies: tuple[Annotated[PolicyEntry, BeforeValidator(_policy_entry)], ...] = Field((PolicyEntry(spec="rr"),), min_length=1)
    faults: tuple[FaultConfig, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _gfc_implies_fc(cls, data: Any) -> Any:
        return _imply_fc_framing(data)


def _imply_fc_framing(data: Any) -> Any:
    """A path whose bandwidth is a Fibre Channel speed ("32GFC") and that has no transport (its own or its host's)
    runs FC framing: "fc", or "nvme-fc" when the protocol is NVMe (docs/model.md, Frames and line rates)."""
    if not isinstance(data, dict) or not isinstance(data.get("paths"), (list, tuple)):
        return data
    hosts = data.get("hosts")
    hosts = [h for h in hosts if isinstance(h, dict)] if isinstance(hosts, (list, tuple)) else []
    # this runs before validation, on TOML as written: a name or host of any TOML type (a list is unhashable) is
    # left for validation to locate, never looked up
    by_name = {h["name"]: h for h in hosts if isinstance(h.get("name"), str)}
    out, changed = [], False
    for g in data["paths"]:
        bw = g.get("bandwidth") if isinstance(g, dict) else None
        host = g.get("host") if isinstance(g, dict) else None
        if isinstance(bw, str) and bw.strip().lower().endswith("gfc") and "transport" not in g and (host is None or isinstance(host, str)):
            h = by_name.get(host) if host is not None else (hosts[0] if len(hosts) == 1 else None)
            if h is None or h.get("transport") is None:
                g = {**g, "transport": "nvme-fc" if data.get("protocol") == "nvme" else "fc"}
                changed = True
        out.append(g)
    return {**data, "paths": out} if changed else data
