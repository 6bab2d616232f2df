"""What the drawing is made of: the run's I-T nexuses, each between an adapter and a target port, and the routes
they take through the fabric's switches.

Adapters and target ports come from the path names where these follow a convention (ESXi's ``vmhba1:C0:T3:L1``:
adapter ``vmhba1``, target ``T3``); otherwise a path's shared links stand for its adapter and each nexus for its own
target port; a ``target_port`` in the scenario names it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...model.fabric import junctions
from ..run import RunResult

__all__ = ["Nexus", "nexuses", "controller_of", "fabric_route", "route_words", "switch_latency"]

_SCSI = re.compile(r"^(?P<adapter>[^:]+):C\d+:(?P<target>T\d+)(?::L\d+)?$")


@dataclass(frozen=True)
class Nexus:
    """One initiator-target nexus as drawn: the line from an adapter to a target port."""

    index: int  # the model's controller index
    name: str
    host: str
    adapter: str
    target: str
    array: str
    alua: str  # at the start of the run (the first of its device paths)
    paths: tuple[int, ...]  # the device paths over it


def _junctions(model: Any, links: Sequence[int]) -> list[str]:
    """The switches a route of links crosses (the fabric, issue 33); none for the [[links]] shorthand."""
    ends = [model.links[i].between for i in links]
    if len(ends) < 2 or any(e is None for e in ends):
        return []
    return junctions([e for e in ends if e is not None], [s.name for s in model.switches])


def switch_latency(model: Any, links: Sequence[int]) -> float:
    """One-way seconds the switches of a route add (in ControllerModel.extra with the distance)."""
    by_name = {s.name: s.latency for s in model.switches}
    return sum((by_name[s] for s in _junctions(model, links)), 0.0)


def route_words(model: Any, links: Sequence[int]) -> str:
    """A route in words: its links, and between them the switches they meet at."""
    names = [model.links[i].name for i in links]
    switches = _junctions(model, links)
    if not switches:
        return ", ".join(names)
    return " → ".join(x for pair in zip(names, [*switches, ""]) for x in pair if x)


def nexuses(r: RunResult) -> list[Nexus]:
    """The run's nexuses with the adapter and target port each one is drawn between."""
    model = r.model
    out = []
    over: dict[int, list[int]] = defaultdict(list)
    for p in model.paths:
        over[p.controller].append(p.index)
    for c in model.controllers:
        host = model.hosts[c.host]
        array = model.arrays[c.array].name
        m = _SCSI.match(c.name)
        if m:
            adapter, target = m["adapter"], m["target"]
        elif c.links:
            adapter, target = "+".join(model.links[i].name for i in c.links), c.name
        else:
            adapter, target = "", c.name
        if 0 <= c.port < len(model.ports) and model.ports[c.port].name != c.name:
            target = model.ports[c.port].name  # the scenario names it ([[paths]] target_port)
        paths = tuple(over.get(c.index, ()))
        alua = model.paths[paths[0]].alua if paths else "AO"
        out.append(Nexus(c.index, c.name, host, adapter, target, array, alua, paths))
    return out


def controller_of(model: Any, n: Nexus) -> str:
    """The name of the array controller a nexus's target port is on ("" when the array names none)."""
    c = model.controllers[n.index]
    names = model.arrays[c.array].controllers
    return names[c.array_controller] if 0 <= c.array_controller < len(names) else ""


def fabric_route(model: Any, n: Nexus) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The switches a nexus crosses and its links, when its links form a fabric route."""
    links = model.controllers[n.index].links
    sw = tuple(_junctions(model, links))
    return (sw, links) if sw else ((), ())
