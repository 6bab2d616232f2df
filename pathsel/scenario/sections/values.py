"""The kinds of value a scenario key takes, shared by its sections: durations, bandwidths, delays, names, ALUA
states, fibre lengths, frame loss, transports and MTUs, and the strict base every section's table derives from.

Each parses the user's words (``"50us"``, ``"32GFC"``, ``{dist = "lognormal", ...}``) into numbers, with the
message a bad value gets; the JSON schema (``pathsel schema``) shows each as the string a user writes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainValidator, WithJsonSchema

from ...limits import MAX_DISTANCE_KM, MIN_BANDWIDTH, MIN_TIMEOUT
from ...timing.distributions import DELAY_KINDS, Distribution, parse_delay
from ...units import format_duration, parse_bandwidth, parse_duration

__all__ = [
    "ALUA_STATES",
    "AluaState",
    "Bandwidth",
    "DELAY_SCHEMA",
    "Delay",
    "ETHERNET_TRANSPORTS",
    "Km",
    "LOSS_OPS_HELP",
    "LossOps",
    "Mtu",
    "Name",
    "NonNegativeDuration",
    "PositiveDuration",
    "Ppm",
    "ServiceDelay",
    "Strict",
    "Transport",
    "at_least_timeout",
    "mtu_needs_ethernet",
    "non_negative_duration",
    "positive_duration",
]

ALUA_STATES = ("AO", "ANO", "standby", "unavailable", "transitioning")


DELAY_SCHEMA = {
    "anyOf": [
        {"type": "string", "description": 'a duration such as "50us" or "1ms" (constant)'},
        {
            "type": "object",
            "properties": {"dist": {"enum": list(DELAY_KINDS)}},
            "required": ["dist"],
        },
    ]
}


def positive_duration(value: Any) -> float:
    seconds = parse_duration(value)
    if seconds <= 0:
        raise ValueError("must be > 0")
    return seconds


def non_negative_duration(value: Any) -> float:
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


def at_least_timeout(seconds: float, value: Any, why: str) -> float:
    if seconds < MIN_TIMEOUT * (1 - 1e-9):  # "10us" is 9.999999999999999e-06 s
        raise ValueError(f"{value!r} is shorter than the {format_duration(MIN_TIMEOUT)} pathsel takes: {why}")
    return seconds


Delay = Annotated[Distribution, PlainValidator(parse_delay), WithJsonSchema(DELAY_SCHEMA)]
ServiceDelay = Annotated[Distribution, PlainValidator(lambda v: parse_delay(v, allow_zero=True)), WithJsonSchema(DELAY_SCHEMA)]
PositiveDuration = Annotated[float, BeforeValidator(positive_duration), WithJsonSchema({"type": "string"})]
NonNegativeDuration = Annotated[float, BeforeValidator(non_negative_duration), WithJsonSchema({"type": "string"})]
Bandwidth = Annotated[float, BeforeValidator(_positive_bandwidth), WithJsonSchema({"type": "string"})]
Name = Annotated[str, Field(min_length=1)]
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


def mtu_needs_ethernet(transport: str | None, mtu: int | None) -> None:
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


# every section's tables derive from it: frozen, and a key they do not have is refused (messages.py says "did you mean")
class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)
