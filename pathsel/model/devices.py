"""The devices, compiled for a run: each host's view of each volume, its paths and their ALUA states at time 0.

What the scenario's ``[[volumes]]`` (or the one implicit volume) become on
each host: a :class:`DeviceModel` per host and volume, a :class:`PathModel`
per device and nexus it is presented on, in the ALUA state the path's own
``alua``, the volume's table, its owning controller or the run's preferred
array gives it. Part of the compile step (:func:`pathsel.model.compile_model`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..scenario.names import device_path_name
from ..scenario.runs import RunSpec
from ..scenario.schema import ScenarioModel
from ..scenario.sections.arrays import VolumeConfig
from ..scenario.sections.paths import PathGroup
from ..timing.distributions import Distribution
from .arrays import ArrayModel, ReplicationModel, volume_owners
from .nexuses import ControllerModel

__all__ = ["PathModel", "DeviceModel", "compile_devices"]


@dataclass(frozen=True)
class PathModel:
    """One device's path (I_T_L): what a policy chooses among."""

    index: int
    name: str
    host: int
    array: int
    one_way_latency: Distribution
    bandwidth: float | None  # bytes per second, each direction; None: no serialisation delay
    alua: str  # state at time 0 after the preferred-array rule
    controller: int = -1
    device: int = -1
    weight: int = 0
    mirror: int | None = None  # the peer array a write through this path is mirrored to
    numa_node: int = 0  # the host's NUMA node its adapter sits on (its nexus's)
    crossing: bool = False  # at time 0 its nexus lands on a controller that does not own its volume (issue 32)
    array_controller: int = -1  # the array's controller its nexus lands on (ArrayModel.controllers), -1: none
    pref_ao: bool = True  # whether the preferred-array rule alone leaves it AO (an owner change keeps that rule)
    cell: int = -1  # implicit ALUA: its (volume, array)'s row of Model.cells, whose arrivals it counts (-1: none)


@dataclass(frozen=True)
class DeviceModel:
    """One host's view of one volume: a policy instance runs per device."""

    index: int
    name: str
    host: int
    volume: str
    paths: tuple[int, ...]
    admission: tuple[int, ...] = ()  # the "host"-rule queues (Model.queues) its I/Os take at issue, in order
    policy: Any = None  # its own policy (a PolicySpec: RunSpec.devices, a policy per device), None: the run's
    sched_num_req_outstanding: int = 0  # its volume's own ESXi DSNRO (ESXi sets it per device), 0: its host's


def compile_devices(
    m: ScenarioModel,
    run: RunSpec,
    arrays: tuple[ArrayModel, ...],
    replication: ReplicationModel | None,
    peer: dict[int, int],
    groups: list[tuple[ControllerModel, PathGroup, str, str]],
    array_index: dict[str, int],
    host_index: dict[str, int],
    default_host: str,
) -> tuple[list[VolumeConfig | None], list[PathModel], list[DeviceModel], dict[tuple[int, str], int], dict[tuple[str, int], int], dict[int, bool]]:
    """The volumes (an implicit one when the file has none: every array; stretched when replicated), the device
    paths, the devices, each (host, volume)'s device, implicit ALUA's (volume, array) rows and each path's
    preferred-array verdict."""

    def preferred(host: str) -> str | None:
        if run.preferred_array == "none":
            return None
        if run.preferred_array is not None:
            return run.preferred_array
        return m.hosts[host_index[host]].preferred_array

    volumes: list[VolumeConfig | None] = [*m.volumes] or [None]
    several = len(volumes) > 1
    paths: list[PathModel] = []
    devices: list[DeviceModel] = []
    device_of: dict[tuple[int, str], int] = {}
    owners = volume_owners(m, volumes)
    cell_index: dict[tuple[str, int], int] = {}  # implicit ALUA: (volume, array) -> its row of cells

    def cell_of(vname: str, array: int) -> int:
        if not arrays[array].implicit_alua or (vname, array) not in owners:
            return -1
        return cell_index.setdefault((vname, array), len(cell_index))

    pref_ao: dict[int, bool] = {}  # per device path: whether the preferred-array rule alone makes it AO
    for h, hcfg in enumerate(m.hosts):
        for k, v in enumerate(volumes):
            vname = v.name if v is not None else "volume"
            held = set(v.arrays) if v is not None and v.arrays else set(array_index)
            stretched = replication is not None and {m.arrays[i].name for i in replication.arrays} <= held
            d = len(devices)
            members = []
            for c, g, name, hname in groups:
                if c.host != h or m.arrays[c.array].name not in held:
                    continue
                pref = preferred(hname)
                # a path's own alua > the volume's table > the owner (both AO with a preferred array too) > preferred
                owned = owners.get((vname, c.array))
                pref_ok = pref is None or not stretched or g.array == pref
                crossing = owned is not None and c.array_controller not in owned
                if g.alua is not None:
                    alua = g.alua
                elif v is not None and v.alua is not None and c.port_group in v.alua:
                    alua = v.alua[c.port_group]
                elif owned is not None:
                    alua = "AO" if not crossing and pref_ok else "ANO"
                elif pref is not None and stretched:
                    alua = "AO" if g.array == pref else "ANO"
                else:
                    alua = "AO"
                pref_ao[len(paths)] = pref_ok
                # a volume without lun: its place in the file, the same on every host (as a LUN ID is on every host
                # it is presented to), not the device's number in the run (host 2's would follow host 1's)
                pname = device_path_name(name, vname, v.lun if v is not None and v.lun is not None else k, several)
                members.append(len(paths))
                paths.append(
                    PathModel(
                        len(paths),
                        pname,
                        h,
                        c.array,
                        c.one_way_latency,
                        c.bandwidth,
                        alua,
                        c.index,
                        d,
                        g.weight,
                        peer.get(c.array) if stretched else None,
                        c.numa_node,
                        crossing,
                        c.array_controller,
                        pref_ok,
                        cell_of(vname, c.array),
                    )
                )
            if not members and not any(w.volume in (None, vname) and (w.host or default_host) == hcfg.name for w in m.workloads):
                continue
            dname = hcfg.name if not several else f"{hcfg.name}/{vname}"
            own_dsnro = v.sched_num_req_outstanding if v is not None and v.sched_num_req_outstanding else 0
            devices.append(DeviceModel(d, dname, h, vname, tuple(members), sched_num_req_outstanding=own_dsnro))
            device_of[(h, vname)] = d
    return volumes, paths, devices, device_of, cell_index, pref_ao
