"""The scenario file, validated: the document and its top-level keys; each section's tables are in
:mod:`pathsel.scenario.sections` (hosts, arrays, paths, fabric, workloads, faults, policies).

Field names are the words users already know: fio's for workloads (``rw``,
``rwmixread``, ``rwmixwrite``, ``bs``, ``iodepth``, ``numjobs``, ``ramp_time``), esxcli's for
policies, ALUA's for path states. Every model is frozen and rejects unknown
keys. Cross-references (a path's array, a host's preferred array) are checked
in :mod:`pathsel.scenario.checks` for :mod:`pathsel.scenario.load`, which knows the file name for the message.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from .sections.arrays import ArrayConfig, PortGroupConfig, ReplicationConfig, ServiceTime, VolumeConfig
from .sections.fabric import LinkConfig, SwitchConfig
from .sections.faults import FAULT_KINDS, FaultConfig
from .sections.hosts import HostConfig
from .sections.paths import PathGroup
from .sections.policies import Expectation, PolicyEntry, policy_entry
from .sections.values import ALUA_STATES, Name, PositiveDuration, Strict
from .sections.workloads import RW_MODES, WorkloadConfig

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


class ScenarioModel(Strict):
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
    policies: tuple[Annotated[PolicyEntry, BeforeValidator(policy_entry)], ...] = Field((PolicyEntry(spec="rr"),), min_length=1)
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
