"""The ``[[paths]]`` section: nexuses from a host to an array, one or ``count`` from a template, with their latency,
bandwidth, ALUA state, loss, the links they cross, their target port and port group, and their transport. The
checks across sections (names, hosts, port groups and ALUA) are in :mod:`pathsel.scenario.checks.paths`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from ...limits import MAX_INT32, MAX_PATHS
from .values import (
    LOSS_OPS_HELP,
    AluaState,
    Bandwidth,
    Delay,
    Km,
    LossOps,
    Mtu,
    Name,
    NonNegativeDuration,
    PositiveDuration,
    Ppm,
    Strict,
    Transport,
    mtu_needs_ethernet,
)

__all__ = ["PathGroup"]


def _path_count(count: int) -> int:
    if count > MAX_PATHS:
        raise ValueError(f"count = {count:,} is more than the {MAX_PATHS:,} paths pathsel simulates in one run")
    return count


class PathGroup(Strict):
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
        mtu_needs_ethernet(info.data.get("transport"), mtu)
        return mtu

    def names(self) -> list[str]:
        return [self.name.replace("{i}", str(self.start + k)) for k in range(self.count)]

    def target_ports(self) -> list[str | None]:
        if self.target_port is None:
            return [None] * self.count
        return [self.target_port.replace("{i}", str(self.start + k)) for k in range(self.count)]
