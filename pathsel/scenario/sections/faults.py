"""The ``[[faults]]`` section: changes at a given time (a path or array down and up, an ALUA or owner change, a
latency step, a loss burst, a slow drain). Which keys each kind takes, and the names they give, are checked across
sections in :mod:`pathsel.scenario.checks.faults`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .values import AluaState, LossOps, Name, NonNegativeDuration, PositiveDuration, Ppm, Strict

__all__ = ["FAULT_KINDS", "FaultConfig"]

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


class FaultConfig(Strict):
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
