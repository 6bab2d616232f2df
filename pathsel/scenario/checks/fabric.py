"""The fabric's checks across sections: unique ``[[links]]`` and ``[[switches]]``, each path's route of links meeting
at switches, a transport that carries the scenario's protocol (an MTU only for Ethernet ones), and a loss_ops that
has a loss to say something of.
"""

from __future__ import annotations

from ..schema import ScenarioModel
from ..sections.fabric import LinkConfig
from ..sections.paths import PathGroup
from .base import CrossCheck, guess

__all__ = ["check_fabric", "check_framing", "check_loss"]


def check_fabric(r: CrossCheck) -> None:
    """Link names, then the fabric: switches and routes."""
    r.unique([ln.name for ln in r.m.links], "links")
    r.problems.extend(_check_fabric(r.m))


def _check_fabric(m: ScenarioModel) -> list[tuple[str, str]]:
    """The fabric (issue 33): unique switches, and each path's route of [[links]] meeting at switches."""
    problems: list[tuple[str, str]] = []
    switches = [s.name for s in m.switches]
    seen: set[str] = set()
    for i, s in enumerate(m.switches):
        if s.name in seen:
            problems.append((f"switches[{i}].name", f"duplicate switch name {s.name!r}"))
        seen.add(s.name)
    if problems:
        return problems  # routes through a switch named twice: that defect first
    for i, ln in enumerate(m.links):
        # with a fabric declared, a link touching no switch is most likely a mistyped switch name (a direct-attached
        # port-to-port link needs no between)
        if switches and ln.between is not None and not any(e in switches for e in ln.between):
            hint = "".join(dict.fromkeys(guess(e, switches) for e in ln.between))[:200]
            problems.append(
                (
                    f"links[{i}].between",
                    f"neither {ln.between[0]!r} nor {ln.between[1]!r} is a [[switches]] name: a fabric link has a switch at one end at least{hint}",
                )
            )
    if problems:
        return problems
    by_name = {ln.name: ln for ln in m.links}
    reported: set[tuple[str, str]] = set()  # a pair of links that do not meet: one line, for its first route
    for i, g in enumerate(m.paths):
        route = [by_name[n] for n in g.links if n in by_name]
        if len(route) != len(g.links):
            continue  # an unknown link: reported already
        for j, ln in enumerate(route):
            if g.links.index(ln.name) != j:
                problems.append((f"paths[{i}].links[{j}]", f"names link {ln.name!r} twice: a route crosses each link once"))
                break
        ends = [ln.between for ln in route]
        if all(e is None for e in ends):
            continue  # the shorthand: links in order, no switches
        if any(e is None for e in ends):
            j = next(k for k, e in enumerate(ends) if e is None)
            if (route[j].name, "") not in reported:
                reported.add((route[j].name, ""))
                problems.append(
                    (
                        f"paths[{i}].links[{j}]",
                        f"link {route[j].name!r} has no between while other links of this route have: give every link of a "
                        "route its two ends, or none",
                    )
                )
            continue
        for j in range(1, len(route)):
            a, b = ends[j - 1], ends[j]
            assert a is not None and b is not None
            meet = [x for x in a if x in b and x in switches]
            if not meet and (route[j - 1].name, route[j].name) in reported:
                break
            if not meet:
                reported.add((route[j - 1].name, route[j].name))
                unknown = list(dict.fromkeys(x for x in (*a, *b) if x not in switches))
                hint = "".join(dict.fromkeys(guess(x, switches) for x in unknown))[:200] if switches else " (no [[switches]] section)"
                problems.append(
                    (
                        f"paths[{i}].links[{j}]",
                        f"links {route[j - 1].name!r} ({' - '.join(a)}) and {route[j].name!r} ({' - '.join(b)}) do not "
                        f"meet at a switch: consecutive links of a route share a [[switches]] end{hint}",
                    )
                )
                break
    return problems


def check_framing(m: ScenarioModel) -> list[tuple[str, str]]:
    """A path's transport (its own or its host's) carries the scenario's protocol; mtu is for Ethernet ones."""
    problems: list[tuple[str, str]] = []
    hosts = {h.name: h for h in m.hosts}
    scsi = ("fc", "iscsi")
    for i, h in enumerate(m.hosts):
        if h.transport is not None and (h.transport in scsi) != (m.protocol == "scsi"):
            problems.append((f"hosts[{i}].transport", _protocol_clash(h.transport, m.protocol)))
    for i, g in enumerate(m.paths):
        own = hosts.get(g.host or m.hosts[0].name) if g.host is not None or len(m.hosts) == 1 else None
        if g.transport is not None and (g.transport in scsi) != (m.protocol == "scsi"):
            problems.append((f"paths[{i}].transport", _protocol_clash(g.transport, m.protocol)))
        transport = g.transport or (own.transport if own is not None else None)
        if g.mtu is not None and transport is None:
            problems.append((f"paths[{i}].mtu", 'needs a transport (e.g. transport = "nvme-tcp"): without one a path has no frames'))
        elif g.mtu is not None and transport in ("fc", "nvme-fc"):
            why = f"is for Ethernet transports; its transport is {transport!r} (its host's), whose frames carry at most 2,112 bytes"
            problems.append((f"paths[{i}].mtu", why + " (FC-FS): drop mtu"))
    for i, h in enumerate(m.hosts):
        if h.mtu is not None and h.transport is None and not any(g.transport for g in m.paths):
            problems.append((f"hosts[{i}].mtu", 'needs a transport (e.g. transport = "nvme-tcp"): without one a path has no frames'))
    return problems


def _protocol_clash(transport: str, protocol: str) -> str:
    carries = "SCSI" if transport in ("fc", "iscsi") else "NVMe"
    want = "scsi" if carries == "SCSI" else "nvme"
    return f"{transport!r} carries {carries}, but the scenario's protocol is {protocol!r} (set protocol = {want!r}, or another transport)"


def check_loss(r: CrossCheck) -> None:
    """A loss_ops on a path or link that loses no frames."""
    m, fail = r.m, r.fail
    lossy: list[tuple[str, PathGroup | LinkConfig]] = [
        *((f"paths[{i}]", g) for i, g in enumerate(m.paths)),
        *((f"links[{i}]", ln) for i, ln in enumerate(m.links)),
    ]
    for place, t in lossy:
        if t.loss_ops != "both" and t.loss_ppm == 0:  # a key with no effect is a mistake worth saying
            fail(f"{place}.loss_ops", f'loss_ops = "{t.loss_ops}" says whose frames loss_ppm drops, but loss_ppm is 0 here')
