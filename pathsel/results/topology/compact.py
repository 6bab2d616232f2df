"""The lines the set-up drawing draws: one per nexus, or in the compact form (from ``COMPACT_HOSTS`` hosts) one per
group of hosts wired alike, the target ports of one controller drawn as one node."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from .nexus import Nexus, controller_of, fabric_route
from .style import name_list

__all__ = ["COMPACT_HOSTS", "DrawnLine", "target_key", "group_lines"]

#: from this many hosts the drawing is compact: hosts wired alike drawn as one, the target ports of a controller as one
COMPACT_HOSTS = 32


@dataclass
class DrawnLine:
    """One line of the drawing: a nexus, or in the compact form the nexuses of hosts wired alike."""

    name: str
    members: list[Nexus]
    host: tuple[str, ...]  # node keys
    adapter: tuple[str, ...] | None
    switches: tuple[str, ...]
    target: tuple[str, ...]
    array: str
    routes: list[tuple[int, ...]]  # each member's links, when they form a fabric route (one per hop), else ()


def target_key(model: Any, n: Nexus, compact: bool) -> tuple[str, ...]:
    """The node a nexus ends at: its target port, or (compact) its controller's ports as one."""
    return (n.array, controller_of(model, n) or n.array) if compact else (n.array, n.target)


def group_lines(
    model: Any,
    nx: list[Nexus],
    compact: bool,
    volume_of: list[str],
    states_of: list[dict[int, dict[int, str]]],
    ios_of: list[dict[int, int]],
    start: int,
) -> tuple[dict[str, tuple[str, ...]], dict[tuple[str, ...], str], list[DrawnLine]]:
    """Each host's node key, each host node's label, and the lines: a nexus each, or (compact) hosts wired alike as
    one, the ports of one controller as one node."""
    host_key: dict[str, tuple[str, ...]] = {h: (h,) for h in model.hosts}
    host_label: dict[tuple[str, ...], str] = {(h,): h for h in model.hosts}
    if compact:
        faulted = {c for f in model.faults for c in f.controllers}
        signature: dict[str, list[Any]] = defaultdict(list)
        for n in nx:
            alua = tuple(sorted((volume_of[i], s) for i, s in states_of[start][n.index].items()))
            # a host with a fault on a nexus stands apart: the compact form hides no host the scenario singles out
            signature[n.host].append(
                (n.adapter, fabric_route(model, n)[0], target_key(model, n, compact), alua, ios_of[start][n.index] > 0, n.index in faulted)
            )
        groups: dict[tuple[Any, ...], list[str]] = defaultdict(list)
        for h in model.hosts:
            groups[tuple(sorted(signature.get(h, []), key=repr))].append(h)
        host_label = {}
        for members in groups.values():
            key = (members[0],) if len(members) == 1 else (f"{len(members)} hosts: {name_list(members, 2)}",)
            host_label[key] = key[0] if len(members) == 1 else f"{len(members)} hosts alike<br>{name_list(members, 2)}"
            for h in members:
                host_key[h] = key
    lines: dict[tuple[Any, ...], DrawnLine] = {}
    for n in nx:
        sw, links = fabric_route(model, n)
        hk = host_key[n.host]
        tk = target_key(model, n, compact)
        lkey: tuple[Any, ...] = (hk, n.adapter, sw, tk) if compact else (n.index,)
        if lkey not in lines:
            lines[lkey] = DrawnLine(n.name, [], hk, (*hk, n.adapter) if n.adapter else None, sw, tk, n.array, [])
        lines[lkey].members.append(n)
        lines[lkey].routes.append(links)
    drawn = list(lines.values())
    for ln in drawn:
        if len(ln.members) > 1:
            hosts_n = len({m.host for m in ln.members})
            ln.name = f"{ln.adapter[-1] if ln.adapter else ln.host[0]} → {ln.target[-1]}: {len(ln.members)} nexuses" + (
                f" of {hosts_n} hosts" if hosts_n > 1 else ""
            )
    return host_key, host_label, drawn
