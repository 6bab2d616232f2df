"""The fabric's sections, ``[[links]]`` and ``[[switches]]``: links several paths share (an HBA port, an inter-switch
link), their buffer-to-buffer credits, and the switches they meet at (issue 33; docs/model.md, "The fabric:
switches, credits and slow drain"). The checks across sections (routes, transports) are in
:mod:`pathsel.scenario.checks.fabric`.
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from .values import LOSS_OPS_HELP, Bandwidth, Km, LossOps, Name, NonNegativeDuration, Ppm, Strict

__all__ = ["DEFAULT_SWITCH_LATENCY", "FC_MAX_FRAME", "FC_MIN_FRAME", "LinkConfig", "MAX_BB_CREDITS", "SwitchConfig"]

# FC frames (FC-FS): 36 bytes the smallest (SOF, header, CRC, EOF, no payload), 2148 the largest (a 2112-byte data field)
FC_MIN_FRAME, FC_MAX_FRAME = 36, 2148
MAX_BB_CREDITS = 65535  # the largest BB_Credit a login can advertise: a 16-bit field (FC-LS)
DEFAULT_SWITCH_LATENCY = 0.8e-6  # seconds: docs/model.md, "The fabric: switches, credits and slow drain"


class LinkConfig(Strict):
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


class SwitchConfig(Strict):
    """A fabric switch (FC) that [[links]] meet at: each switch a frame crosses adds its forwarding latency."""

    name: Name
    latency: NonNegativeDuration = Field(
        DEFAULT_SWITCH_LATENCY,
        description="one-way seconds the switch adds to each frame it forwards (default 0.8us: an assumption from a vendor's "
        "port-to-port table, docs/model.md)",
    )
