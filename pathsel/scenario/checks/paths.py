"""The ``[[paths]]`` section's checks across sections: each path's array and host, its names (unique per host), its
NUMA node and the links it names; its target port group and the ALUA states of the volumes it reaches.
"""

from __future__ import annotations

from ..schema import ScenarioModel
from .arrays import unknown_controller
from .base import CrossCheck, guess
from .hosts import check_numa_node, check_volume_dsnro

__all__ = ["check_paths", "check_port_groups"]


def check_paths(r: CrossCheck) -> None:
    """Each path's array and host, its names (filling ``r.names_by_host``), its NUMA node and its links."""
    m, fail, arrays, hosts, names_by_host = r.m, r.fail, r.arrays, r.hosts, r.names_by_host
    for i, g in enumerate(m.paths):
        if g.array not in arrays:
            fail(f"paths[{i}].array", f"no array named {g.array!r} (arrays: {', '.join(arrays)})")
        host = r.host_of("paths", i, g.host)
        if g.count > 1 and "{i}" not in g.name:
            fail(f"paths[{i}].name", f"count = {g.count} needs {{i}} in the name to give each path its own name")
            continue  # its names would all be the same: not duplicates to report as well
        if host is None:
            continue
        for name in g.names():
            if name in names_by_host[host]:
                fail(f"paths[{i}].name", f"duplicate path name {name!r} on host {host!r}")
            names_by_host[host].add(name)
    for i, g in enumerate(m.paths):
        if g.numa_node:
            check_numa_node(r, "paths", i, g.host or (hosts[0] if len(hosts) == 1 else None), g.numa_node)
    links = [ln.name for ln in m.links]
    for i, g in enumerate(m.paths):
        for j, ln in enumerate(g.links):
            if ln not in links:
                fail(f"paths[{i}].links[{j}]", f"no link named {ln!r} ({'links: ' + ', '.join(links) if links else 'no [[links]] section'})")


def check_port_groups(m: ScenarioModel) -> list[tuple[str, str]]:
    """Target port groups (issue 32): each path's group, each volume's owner and ALUA table, every group reached."""
    problems: list[tuple[str, str]] = []
    by_name = {a.name: a for a in m.arrays}
    reached: set[tuple[str, str]] = set()
    for i, g in enumerate(m.paths):
        a = by_name.get(g.array)
        if a is None:
            continue
        groups = [n for n, _ in a.groups()]
        if g.port_group not in groups:  # reported below: its array's unreached groups would be the same defect again
            reached.add((a.name, "\0"))
        if g.port_group is None:
            if a.controllers:
                problems.append(
                    (
                        f"paths[{i}].port_group",
                        f"required: array {a.name!r} has controllers ({', '.join(a.controllers)}), so each path names the "
                        f"target port group it lands on ({', '.join(groups)})",
                    )
                )
        elif not a.controllers:
            if (a.name, "\1") not in reached:  # one line per array: the defect is its missing controllers
                problems.append((f"paths[{i}].port_group", f"array {a.name!r} has no controllers: give it controllers = [...] or drop port_group"))
            reached.add((a.name, "\1"))
        elif g.port_group not in groups:
            problems.append(
                (
                    f"paths[{i}].port_group",
                    f"no port group {g.port_group!r} on array {a.name!r} (groups: {', '.join(groups)}){guess(g.port_group, groups)}",
                )
            )
        else:
            reached.add((a.name, g.port_group))
    for i, a in enumerate(m.arrays):
        if not any(g.array == a.name for g in m.paths) or (a.name, "\0") in reached:
            continue
        for n, c in a.groups():
            if (a.name, n) not in reached:
                problems.append(
                    (
                        f"arrays[{i}].port_groups" if a.port_groups else f"arrays[{i}].controllers",
                        f"no path reaches target port group {n!r} (controller {c!r}) of array {a.name!r}: "
                        "give a [[paths]] entry port_group = " + repr(n) + ", or leave the group out",
                    )
                )
    for i, v in enumerate(m.volumes):
        held = [by_name[n] for n in (v.arrays or [a.name for a in m.arrays]) if n in by_name]
        with_ctrl = [a for a in held if a.controllers]
        if v.sched_num_req_outstanding is not None:  # DSNRO per device: at most each seeing host's DQLEN
            problems.extend(check_volume_dsnro(m, i, v, {a.name for a in held}))
        if v.owner is not None:
            if not with_ctrl:
                problems.append((f"volumes[{i}].owner", f"none of the arrays holding volume {v.name!r} has controllers: owner needs them"))
            problems.extend(unknown_controller(f"volumes[{i}].owner", v.owner, with_ctrl))
        if v.alua is not None:
            groups = [n for a in with_ctrl for n, _ in a.groups()]
            if not with_ctrl:
                problems.append(
                    (f"volumes[{i}].alua", f"none of the arrays holding volume {v.name!r} has controllers: an ALUA table per group needs them")
                )
                continue
            unknown = [k for k in v.alua if k not in groups]
            for k in unknown:
                problems.append(
                    (
                        f"volumes[{i}].alua.{k}",
                        f"no target port group {k!r} on the arrays holding volume {v.name!r} (groups: {', '.join(groups)}){guess(k, groups)}",
                    )
                )
            if not unknown and "AO" not in v.alua.values() and all(v.alua.get(n, "AO") != "AO" for n in groups):
                problems.append(
                    (
                        f"volumes[{i}].alua",
                        f"volume {v.name!r} has no optimized (AO) target port group: a LUN is AO on its owner's groups; "
                        "mark one group AO (all ANO/standby is a bad input: no array reports it)",
                    )
                )
    return problems
