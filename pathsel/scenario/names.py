"""The names a host gives its paths, and every name a scenario accepts for one (issue 48).

A ``[[paths]]`` entry describes nexuses (an initiator port to a target port,
``vmhba1:C0:T0``); with several ``[[volumes]]`` each nexus carries one path per
device, and its name is written as a template (``vmhba1:C0:T0:L{lun}``) that
the model fills per device. What a host prints, and so what a user pastes, is
either the concrete path (ESXi's runtime name ``vmhba1:C0:T0:L3``, ``multipath
-ll``'s ``H:C:T:L``, ``nvme0c1n3``) or the nexus (as pathsel prints it). Both,
and the template as written (kept for files that use it), name the same
thing here: :func:`path_names` lists them per host and :meth:`HostNames.group`
resolves any of them to the nexus's entry, so the loader, the model and the
command line agree on one rule.

A fault happens to a nexus (a cable, a port or a zone takes every device's
path over it), so a fault naming one device's path takes the nexus it is on;
``fixed:preferred=`` names one device's path, or, given a nexus, that nexus's
path on each device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import closest

if TYPE_CHECKING:
    from .schema import ScenarioModel
    from .sections.arrays import VolumeConfig

__all__ = ["HostNames", "LUN_SLOT", "device_path_name", "is_template", "nexus_name", "path_names", "unknown_path"]

# the LUN slot of a template and the separator or letter before it: vmhba1:C0:T0:L{lun} -> vmhba1:C0:T0,
# 1:0:0:{lun} -> 1:0:0, nvme0c1n{lun} -> nvme0c1
LUN_SLOT = re.compile(r":?[LnN]?\{lun\}")
# a runtime name's nexus as its system prints it: ESXi vmhba1:C0:T0:L3, Linux H:C:T:L, NVMe nvme0c1n3 (controller 1)
_RUNTIME_NEXUS = re.compile(r"^(vmhba[0-9]+:C[0-9]+:T[0-9]+):L[0-9]+$|^([0-9]+:[0-9]+:[0-9]+):[0-9]+$|^(nvme[0-9]+c[0-9]+)n[0-9]+$")
# multipath -ll's path line as pasted: "3:0:0:1 sdb" (its H:C:T:L names the path; the device node follows)
_HCTL_DEV = re.compile(r"^([0-9]+:[0-9]+:[0-9]+:[0-9]+)\s+[a-z]+$")


def nexus_name(name: str) -> str:
    """The nexus a path entry's name (its ``{i}`` filled) stands for: the name without its LUN slot."""
    return LUN_SLOT.sub("", name)


def is_template(name: str) -> bool:
    """Whether ``name`` still holds a slot the model fills (``{lun}``, ``{i}``): never a name a host prints."""
    return "{" in name


def device_path_name(name: str, volume: str, lun: int, several: bool) -> str:
    """The path of nexus entry ``name`` to one device: ``{lun}`` filled with ``lun``; with several volumes and no
    slot, the volume's name appended (``name:volume``); else the name itself."""
    if "{lun}" in name:
        return name.replace("{lun}", str(lun))
    if several:
        return f"{name}:{volume}"
    return name


@dataclass
class HostNames:
    """Every name one host's paths answer to, each mapped to its nexus entry's name (``{i}`` filled)."""

    groups: dict[str, str] = field(default_factory=dict)  # as the file writes it (a template with several volumes)
    nexuses: dict[str, str] = field(default_factory=dict)  # vmhba1:C0:T0
    paths: dict[str, str] = field(default_factory=dict)  # vmhba1:C0:T0:L3, one per device
    # per volume the host sees: its device's paths, each (as the host prints it, its nexus entry), in the model's order
    devices: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def volume_of(self, name: str) -> str | None:
        """The volume whose device ``name`` is a path of, when it names one device's path only (not a nexus)."""
        if name in self.groups or name in self.nexuses:
            return None
        return next((v for v, paths in self.devices.items() if any(p == name for p, _ in paths)), None)

    def device_path(self, volume: str, name: str) -> str | None:
        """The path of ``volume``'s device that ``name`` addresses: that path itself, or the device's path over the
        nexus named (a template read as its nexus); None when the device has no such path (another device's path)."""
        paths = self.devices.get(volume, [])
        own = next((p for p, _ in paths if p == name), None)
        if own is not None or (name in self.paths and name not in self.groups and name not in self.nexuses):
            return own
        group = self.group(name)
        return next((p for p, g in paths if g == group), None) if group is not None else None

    def group(self, name: str) -> str | None:
        """The nexus entry ``name`` addresses (any of the three forms), or None."""
        for table in (self.groups, self.nexuses, self.paths):
            if name in table:
                return table[name]
        pasted = _HCTL_DEV.match(name.strip())
        return self.group(pasted.group(1)) if pasted else None

    def canonical(self, name: str) -> str | None:
        """The one spelling a run keeps for ``name``: a device's path as itself, anything naming a nexus (its
        runtime form, a template, a pasted ``H:C:T:L sdX``) as the nexus the results print; None if unknown."""
        if name in self.paths and name not in self.groups and name not in self.nexuses:
            return name
        pasted = _HCTL_DEV.match(name.strip())
        if pasted and name not in self.groups:
            return self.canonical(pasted.group(1))
        group = self.group(name)
        return nexus_name(group) if group is not None else None

    def nexus_names(self) -> list[str]:
        """Each nexus once, as its host prints it where pathsel knows the form (vmhba1:C0:T0), else as pathsel does."""
        last: dict[str, str] = {}
        for n, group in self.nexuses.items():
            if not is_template(n):
                last[group] = n  # the runtime form is added after the entry's own: it wins
        return list(last.values())

    def shown(self) -> list[str]:
        """The names a host prints (no template), nexuses first: what a "did you mean" offers."""
        return [n for n in dict.fromkeys([*self.nexuses, *self.paths]) if not is_template(n)]


def path_names(m: ScenarioModel) -> dict[str, HostNames]:
    """Per host, every name its paths answer to. Mirrors how :func:`pathsel.model.compile.compile_model` names
    device paths: each volume's path over each nexus to its arrays, ``{lun}`` filled with its ``lun``, else with its
    place among the volumes (the same on every host, as a LUN ID is)."""
    hosts = [h.name for h in m.hosts]
    default_host = hosts[0] if hosts else ""
    out: dict[str, HostNames] = {h: HostNames() for h in hosts}
    entries: list[tuple[str, str, str]] = []  # (host, name with {i} filled, array)
    for g in m.paths:
        host = g.host or default_host
        if host not in out:
            continue
        for name in g.names():
            entries.append((host, name, g.array))
            out[host].groups.setdefault(name, name)
            out[host].nexuses.setdefault(nexus_name(name), name)
    arrays = [a.name for a in m.arrays]
    volumes: list[VolumeConfig | None] = [*m.volumes] or [None]
    several = len(volumes) > 1
    for host in hosts:
        for k, v in enumerate(volumes):
            vname = v.name if v is not None else "volume"
            held = set(v.arrays) if v is not None and v.arrays else set(arrays)
            members = [(n, a) for h, n, a in entries if h == host and a in held]
            lun = v.lun if v is not None and v.lun is not None else k
            for name, _a in members:
                concrete = device_path_name(name, vname, lun, several)
                out[host].paths.setdefault(concrete, name)
                out[host].devices.setdefault(vname, []).append((concrete, name))
    for names in out.values():  # vmhba1:C0:T0 for a lone LUN's vmhba1:C0:T0:L1 too, when it names one nexus entry
        derived: dict[str, set[str]] = {}
        for concrete, group in names.paths.items():
            m2 = _RUNTIME_NEXUS.match(concrete)
            if m2:
                derived.setdefault(next(x for x in m2.groups() if x), set()).add(group)
        for nexus, groups in derived.items():
            if len(groups) == 1 and nexus not in names.paths:
                names.nexuses.setdefault(nexus, next(iter(groups)))
    return out


def unknown_path(name: str, host: str, names: HostNames) -> str:
    """The message for a path name the host does not have: the closest real name, and the nexuses."""
    real = names.shown()
    hint = closest(name, real)
    nexuses = names.nexus_names()
    listed = ", ".join(nexuses[:8]) + (f" and {len(nexuses) - 8} more" if len(nexuses) > 8 else "")
    said = f"no path named {name!r} on host {host!r}"
    if hint is not None:
        said += f" (did you mean {hint!r}?)"
    if listed and set(nexuses) - set(real):  # single-LUN paths: the nexus is the path's own name, said already
        said += f"; its nexuses: {listed} (each names every device's path over it)"
    one = next((n for n in names.paths if n not in names.nexuses and not is_template(n)), None)
    if one is not None:
        said += f"; or one device's path, as the host prints it, e.g. {one!r}"
    return said
