"""The arrays' sections: ``[[arrays]]`` (service times, cache hits, concurrency, target ports, controllers and their
target port groups, implicit ALUA), ``[replication]`` (two arrays replicating synchronously: a metro pair) and
``[[volumes]]`` (the LUNs or namespaces the arrays hold, their owners and ALUA states). The checks across sections
are in :mod:`pathsel.scenario.checks.arrays`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, ValidationInfo, WithJsonSchema, field_validator

from ...limits import MAX_INT32
from ...timing.distributions import Constant, parse_delay
from ...units import format_duration
from .values import (
    DELAY_SCHEMA,
    AluaState,
    Bandwidth,
    Delay,
    Km,
    Name,
    NonNegativeDuration,
    PositiveDuration,
    Ppm,
    ServiceDelay,
    Strict,
)

__all__ = ["ArrayConfig", "PortGroupConfig", "ReplicationConfig", "ServiceTime", "VolumeConfig"]


class ServiceTime(Strict):
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
        DELAY_SCHEMA["anyOf"][0],
        DELAY_SCHEMA["anyOf"][1],
        {
            "type": "object",
            "properties": {"read": DELAY_SCHEMA, "write": DELAY_SCHEMA},
            "additionalProperties": False,
            "description": "a delay for reads and one for writes",
        },
    ],
    "description": "one delay for reads and writes, or a table of read and write",
}


class PortGroupConfig(Strict):
    """A target port group (SCSI TPG, NVMe ANA group) of an array: its ports share an ALUA state per volume."""

    name: Name
    controller: Name


class ArrayConfig(Strict):
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


def _array_pair(value: Any) -> Any:
    if isinstance(value, (list, tuple)) and len(value) != 2:
        raise ValueError(f"must name exactly two arrays, got {list(value)!r}")
    return value


class ReplicationConfig(Strict):
    """Synchronous active-active replication between two arrays (uniform host access)."""

    arrays: Annotated[tuple[Name, Name], BeforeValidator(_array_pair)]
    one_way_latency: Delay
    bandwidth: Bandwidth | None = None
    distance_km: Km = 0.0
    loss_ppm: Ppm = 0.0
    loss_recovery: PositiveDuration = Field(0.2, description="a lost frame is resent after this (TCP minimum RTO)")
    preferred_site: str | None = Field(None, description="the array the mediator keeps serving when the replication link fails (default: the first)")


class VolumeConfig(Strict):
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
