"""The faults timeline, compiled for a run: each fault of the scenario and its revert, and implicit ALUA's checks.

What a scenario's ``[[faults]]`` become (:class:`FaultModel`): the nexuses,
device paths, array, link or replication link each one changes, at its
time, and at ``at + duration`` its revert; implicit ALUA's periodic ownership
checks. The engines apply them in time order (``Model.timeline``). Part of
the compile step (:func:`pathsel.model.compile_model`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ScenarioError
from ..scenario.names import path_names
from ..scenario.schema import ScenarioModel
from ..scenario.sections.paths import PathGroup
from ..units import format_duration
from .arrays import ArrayModel
from .devices import DeviceModel, PathModel
from .nexuses import ControllerModel

__all__ = ["FaultModel", "compile_faults", "implicit_checks", "MAX_IMPLICIT_CHECKS"]

MAX_IMPLICIT_CHECKS = 100_000  # implicit ALUA's ownership checks in one run (each is an event of the timeline)


@dataclass(frozen=True)
class FaultModel:
    """One change on the timeline. ``origin`` is the scenario's fault it comes from (a revert shares it)."""

    at: float
    # path_down | path_up | alua | latency | loss | array_down | array_up | replication_down | replication_up | owner;
    # implicit: implicit ALUA's ownership check of array ``array`` (not a fault of the file: origin -1)
    what: str
    path: int | None  # the first device path on the target nexus (None for array/replication faults)
    state: str | None
    controllers: tuple[int, ...] = ()
    array: int | None = None
    replication: bool = False  # latency/loss on the replication link
    add: float = 0.0  # latency: seconds added to each one-way trip from now on
    ppm: float = 0.0  # loss: frames lost per million from now on
    origin: int = 0
    revert: bool = False
    # alua by volume or port group, owner: the device paths that change, each one's new state, and whether it
    # crosses the inter-controller link from now on (-1: unchanged)
    paths: tuple[int, ...] = ()
    states: tuple[str, ...] = ()
    crossing: tuple[int, ...] = ()
    target: str = ""  # what it names, for the results (volume, port group, new owner)
    # slow_drain (issue 33): the link, its port's credit_return from now on (-1: the scenario's), and for a port that
    # stops draining, when it drains again (0: it does not stop)
    link: int = -1
    credit_return: float = -1.0
    stop_until: float = 0.0
    loss_ops: str = "both"  # loss (issue 37): whose frames (read, write, both); the other op's are lost no more


def compile_faults(
    m: ScenarioModel,
    controllers: list[ControllerModel],
    groups: list[tuple[ControllerModel, PathGroup, str, str]],
    paths: list[PathModel],
    devices: list[DeviceModel],
    pref_ao: dict[int, bool],
    array_index: dict[str, int],
    host_index: dict[str, int],
    link_index: dict[str, int],
    default_host: str,
) -> list[FaultModel]:
    """The scenario's faults in file order, each followed by its revert (``duration``)."""
    by_name = {(c.host, grp[2]): c.index for c, grp in zip(controllers, groups)}

    def first_path(c: int) -> int | None:
        return next((p.index for p in paths if p.controller == c), None)

    faults: list[FaultModel] = []
    named = path_names(m) if any(f.path is not None for f in m.faults) else {}
    for i, f in enumerate(m.faults):
        cs: tuple[int, ...] = ()
        repl_target = False
        if f.path is not None:
            # a device's path, the nexus or the template as written: the nexus either way (a fault happens to the wire)
            fhost = f.host or default_host
            cs = (by_name[(host_index[fhost], named[fhost].group(f.path) or f.path)],)
        elif f.link == "replication":
            repl_target = True
        elif f.link is not None and f.what != "slow_drain":
            li = link_index[f.link]
            cs = tuple(c.index for c in controllers if li in c.links)
        fault_array = array_index[f.array] if f.array is not None else None
        if fault_array is not None:
            cs = tuple(c.index for c in controllers if c.array == fault_array)
        base = FaultModel(
            f.at,
            f.what,
            first_path(cs[0]) if (cs and f.path is not None) else None,
            f.state,
            cs,
            fault_array,
            repl_target,
            f.add or 0.0,
            f.ppm if f.ppm is not None else 0.0,
            i,
            loss_ops=f.loss_ops or "both",
        )
        lone = named[f.host or default_host].volume_of(f.path) if f.what == "alua" and f.path is not None and f.volume is None else None
        if lone is not None:  # ALUA states are per LUN: one device's path (vmhba1:C0:T0:L3) changes that device only
            f = f.model_copy(update={"volume": lone})
        if f.what == "owner" or (f.what == "alua" and (f.volume is not None or f.port_group is not None)):
            base = _group_fault(base, f, m, paths, devices, controllers, cs if f.path is not None else None, pref_ao)
        if f.what == "slow_drain" and f.link is not None:  # the link's port returns credits late, or stops until the revert
            li = link_index[f.link]
            until = f.at + f.duration if f.stop and f.duration is not None else 0.0
            cret = f.credit_return if f.credit_return is not None else -1.0
            base = FaultModel(f.at, "slow_drain", None, None, (), origin=i, target=f.link, link=li, credit_return=cret, stop_until=until)
        faults.append(base)
        if f.duration is not None:
            # undone: the latency step removed, the loss back to what the scenario gave the link
            if f.what == "slow_drain" and f.link is not None:  # the port returns credits as the scenario says again
                faults.append(FaultModel(f.at + f.duration, "slow_drain", None, None, (), origin=i, revert=True, link=link_index[f.link]))
            elif f.what == "latency":
                faults.append(FaultModel(f.at + f.duration, "latency", base.path, None, cs, None, repl_target, 0.0, 0.0, i, True))
            else:
                faults.append(FaultModel(f.at + f.duration, "loss", base.path, None, cs, None, repl_target, 0.0, -1.0, i, True))
    return faults


def implicit_checks(
    source: Any, arrays: tuple[ArrayModel, ...], cells: list[tuple[int, int, tuple[int, ...]]], ramp: float, run_duration: float
) -> list[FaultModel]:
    """Implicit ALUA's ownership checks of each array with cells, every ``implicit_alua`` seconds of the run."""
    checks: list[FaultModel] = []
    for a in sorted({a for a, _, _ in cells}):  # implicit ALUA's checks (Model.timeline)
        every = arrays[a].implicit_alua
        n_checks = int((ramp + run_duration) / every)
        if n_checks > MAX_IMPLICIT_CHECKS:
            raise ScenarioError(
                source,
                f"arrays[{a}].implicit_alua",
                f"{format_duration(every)} over {ramp + run_duration:g} s is {n_checks:,} ownership checks, more than the "
                f"{MAX_IMPLICIT_CHECKS:,} pathsel takes in one run: a longer implicit_alua",
            )
        checks += [FaultModel(k * every, "implicit", None, None, (), a, origin=-1) for k in range(1, n_checks + 1) if k * every < ramp + run_duration]
    return checks


def _group_fault(
    base: FaultModel,
    f: Any,
    m: Any,
    paths: list[PathModel],
    devices: list[DeviceModel],
    controllers: list[ControllerModel],
    nexus: tuple[int, ...] | None,
    pref_ao: dict[int, bool],
) -> FaultModel:
    """An alua change naming a volume or a port group, or an owner change: the device paths it changes, each one's
    new state and crossing (issue 32)."""
    chosen, states, crossing = [], [], []
    for p in paths:
        c = controllers[p.controller]
        if f.volume is not None and devices[p.device].volume != f.volume:
            continue
        if f.what == "alua":
            if f.port_group is not None and c.port_group != f.port_group:
                continue
            if nexus is not None and p.controller not in nexus:
                continue
            chosen.append(p.index)
            states.append(f.state)
            crossing.append(-1)  # the host sees a new state; the LUN stays where it is
        else:
            ctrls = m.arrays[p.array].controllers
            if len(ctrls) < 2 or c.array_controller < 0:
                continue
            on_owner = ctrls[c.array_controller] == f.controller
            chosen.append(p.index)
            states.append("AO" if on_owner and pref_ao[p.index] else "ANO")
            crossing.append(0 if on_owner else 1)
    return FaultModel(
        base.at,
        base.what,
        base.path,
        base.state,
        (),
        None,
        False,
        0.0,
        0.0,
        base.origin,
        False,
        tuple(chosen),
        tuple(states),
        tuple(crossing),
        " ".join(
            x
            for x in (
                f"volume {f.volume}" if f.volume is not None else "",
                f"port group {f.port_group}" if f.port_group is not None else "",
                f"path {f.path}" if f.path is not None else "",
                f"to controller {f.controller}" if f.controller is not None else "",
            )
            if x
        ),
    )
