"""The nexuses, compiled for a run: each host-to-target-port wire, the shared links and switches it crosses.

What a scenario's ``[[paths]]`` (one nexus per name a template expands to),
``[[links]]`` and ``[[switches]]`` become: :class:`ControllerModel` (an
initiator-target nexus; NVMe: a controller), :class:`LinkModel`,
:class:`SwitchModel`, and the target ports they land on. The fabric's
arithmetic (credits, the switches a route crosses) is ``fabric.py``'s. Part
of the compile step (:func:`pathsel.model.compile_model`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..scenario.names import nexus_name
from ..scenario.schema import ScenarioModel
from ..scenario.sections.fabric import FC_MAX_FRAME, LinkConfig
from ..scenario.sections.paths import PathGroup
from ..timing.distributions import Distribution
from .arrays import ArrayModel, PortModel
from .fabric import US_PER_KM, drain_directions, junctions, round_trip

__all__ = ["LinkModel", "SwitchModel", "ControllerModel", "compile_links", "compile_nexuses"]


@dataclass(frozen=True)
class LinkModel:
    """A link several nexuses share (an HBA port, an ISL): frames queue for it in each direction."""

    index: int
    name: str
    bandwidth: float
    # the fabric (issue 33, model/fabric.py): bb_credits x frame_size (0: no credit limit), the round trip of a frame
    # and its R_RDY without credit_return, the credit_return per direction (to the array, to the host; 0 where its
    # port does not receive), which directions its port end receives (where a slow drain acts), its two ends
    credit_bytes: float = 0.0
    rtt0: float = 0.0
    credit_return: tuple[float, float] = (0.0, 0.0)
    drain: tuple[bool, bool] = (True, True)
    between: tuple[str, ...] | None = None
    bb_credits: int = 0
    frame_size: int = 0

    def rate(self, direction: int, credit_return: float | None = None) -> float:
        """Bytes per second it serialises in ``direction``: its bandwidth, or the credit bound when lower (the engines'
        link_rate, with ``credit_return`` as it is now)."""
        if self.credit_bytes <= 0.0:
            return self.bandwidth
        r = self.credit_bytes / (self.rtt0 + (self.credit_return[direction] if credit_return is None else credit_return))
        return r if r < self.bandwidth else self.bandwidth


@dataclass(frozen=True)
class SwitchModel:
    """A fabric switch: the links of routes meet at it; each frame crossing it pays its latency (in ControllerModel.extra)."""

    index: int
    name: str
    latency: float


@dataclass(frozen=True)
class ControllerModel:
    """One initiator-target nexus (NVMe: a controller): the wire every volume's path over it shares."""

    index: int
    name: str
    host: int
    array: int
    one_way_latency: Distribution
    bandwidth: float | None  # bytes per second, each direction; None: no serialisation delay
    extra: float  # seconds added to every one-way trip (distance_km of the path and its links)
    loss_ppm: float
    loss_recovery: float
    links: tuple[int, ...]  # shared links crossed after the nexus's own wire, in order
    port: int = -1  # the array's target port it lands on (Model.ports)
    numa_node: int = 0  # the host's NUMA node its adapter (HBA/NIC) sits on
    port_group: str = ""  # the target port group it lands on ("" : the array has no controllers)
    array_controller: int = -1  # the array's controller that group sits on (ArrayModel.controllers), -1: none
    transport: str = ""  # "fc", "nvme-fc", "iscsi", "nvme-tcp", "nvme-roce" (model/frames.py); "": payload bytes only
    mtu: int = 0  # Ethernet transports: the IP MTU (1500 when the scenario gives none); 0 otherwise
    # frames lost per million for (reads, writes) (issue 37: loss_ops); None: loss_ppm for both. loss_ppm is the larger,
    # the one the engines test to know whether a frame draws a loss decision at all
    loss_by_op: tuple[float, float] | None = None

    def op_loss(self) -> tuple[float, float]:
        """Frames lost per million of a read's frames and of a write's."""
        return self.loss_by_op if self.loss_by_op is not None else (self.loss_ppm, self.loss_ppm)


def compile_links(m: Any) -> tuple[LinkModel, ...]:
    """The shared links, with the fabric's figures (model/fabric.py) where the scenario gives them."""
    switches = [s.name for s in m.switches]
    routes = [g.links for g in m.paths]
    out = []
    for i, ln in enumerate(m.links):
        if ln.bb_credits is None and ln.between is None:
            out.append(LinkModel(i, ln.name, ln.bandwidth))
            continue
        drain = drain_directions(ln.between, switches, routes, ln.name)
        credits, fs = ln.bb_credits or 0, ln.frame_size or FC_MAX_FRAME
        cret = ln.credit_return or 0.0
        out.append(
            LinkModel(
                i,
                ln.name,
                ln.bandwidth,
                credit_bytes=float(credits * fs),
                rtt0=round_trip(ln.distance_km, fs, ln.bandwidth),
                credit_return=(cret if drain[0] else 0.0, cret if drain[1] else 0.0),
                drain=drain,
                between=ln.between,
                bb_credits=credits,
                frame_size=fs if credits else 0,
            )
        )
    return tuple(out)


def compile_nexuses(
    m: ScenarioModel,
    arrays: tuple[ArrayModel, ...],
    array_index: dict[str, int],
    host_index: dict[str, int],
    link_index: dict[str, int],
    default_host: str,
) -> tuple[list[ControllerModel], list[tuple[ControllerModel, PathGroup, str, str]], list[PortModel]]:
    """The nexuses, as the scenario lists them, each with its path group, its name and its host's; the target ports
    they land on."""
    group_ctrl = [{n: a.controllers.index(c) for n, c in a.groups()} for a in m.arrays]  # group -> its controller
    switch_latency = {s.name: s.latency for s in m.switches}
    controllers: list[ControllerModel] = []
    groups: list[tuple[ControllerModel, PathGroup, str, str]] = []  # (controller, group) in order
    ports: list[PortModel] = []
    port_of: dict[tuple[int, str], int] = {}  # (array, target port name) -> port
    for g in m.paths:
        host = g.host or default_host
        for name, tport in zip(g.names(), g.target_ports()):
            arr = array_index[g.array]
            key = (arr, tport if tport is not None else f"\0{len(controllers)}")  # unnamed: a port of its own
            if key not in port_of:
                port_of[key] = len(ports)
                ports.append(PortModel(len(ports), tport if tport is not None else nexus_name(name), arr, arrays[arr].port_queue_depth))
            lk = tuple(link_index[n] for n in g.links)
            extra = (g.distance_km + sum(m.links[i].distance_km for i in lk)) * US_PER_KM
            extra += g.extra_latency + sum(m.links[i].extra_latency for i in lk)  # a slower path, as a condition
            if len(lk) > 1 and m.links[lk[0]].between is not None:  # each switch the route crosses forwards its frames
                crossed = junctions([m.links[i].between or () for i in lk], switch_latency)
                extra += sum((switch_latency[s] for s in crossed), 0.0)
            ppm = g.loss_ppm + sum(m.links[i].loss_ppm for i in lk)
            # per op (issue 37): the path's own loss and each link's count for the ops their loss_ops name; every
            # loss_ops "both" keeps the one figure (and its float sum) of before
            lossy: tuple[PathGroup | LinkConfig, ...] = (g, *(m.links[i] for i in lk))
            by_op: tuple[float, float] | None = None
            if any(t.loss_ops != "both" for t in lossy):
                rd, wr = (min(sum(t.loss_ppm for t in lossy if t.loss_ops in (op, "both")), 1e6) for op in ("read", "write"))
                by_op, ppm = (rd, wr), max(rd, wr)
            c = ControllerModel(
                len(controllers),
                nexus_name(name),
                host_index[host],
                array_index[g.array],
                g.one_way_latency,
                g.bandwidth,
                extra,
                min(ppm, 1e6),
                g.loss_recovery,
                lk,
                port_of[key],
                g.numa_node,
                g.port_group or "",
                group_ctrl[arr].get(g.port_group, -1) if g.port_group is not None else -1,
                *_framing(g, m.hosts[host_index[host]]),
                loss_by_op=by_op,
            )
            controllers.append(c)
            groups.append((c, g, name, host))
    return controllers, groups, ports


def _framing(g: Any, h: Any) -> tuple[str, int]:
    """A nexus's transport and MTU: the path's own, else its host's; an Ethernet one without an MTU gets 1500."""
    transport = g.transport or h.transport or ""
    if transport not in ("iscsi", "nvme-tcp", "nvme-roce"):
        return transport, 0
    return transport, g.mtu or h.mtu or 1500
