"""What several LUNs' listings say together: target port groups, each volume's ALUA state per group, its owner; and
the ``--device`` filter every importer takes.

SCSI defines the asymmetric access state per logical unit and target port group (SPC-4, REPORT TARGET PORT
GROUPS: one descriptor per group, its state, the relative target ports in it), and NVMe's ANA likewise per
namespace and ANA group. A dual-controller array spreads its LUNs over both controllers, so one wire (an
initiator-target nexus) is AO for one LUN and ANO for the next. The listings give a state per path (nexus and
LUN); this module turns them back into groups:

* where the listing names the group (esxcli's ``TPG_id=`` in ``Storage Array Type Path Config``, mpclaim's
  ``TPG_Id:``), the nexuses with one id are one group;
* where it does not (``multipath -ll``), nexuses whose state vector over the volumes is the same are one group
  (an assumption: two groups of one controller that every LUN sees in the same state cannot be told apart, and
  are written as one, which the model treats alike);
* groups with the same state vector sit on one controller (a controller's ports answer alike for every LUN it
  owns); controllers are named ``A``, ``B``, ... in the order the listing first shows them;
* a volume's owner is the controller whose groups are AO for it (none written when several controllers are AO:
  a symmetric active-active array has no owner).

A path that is down in the capture has no state to compare (``None``): it joins the first group its known
states agree with.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...errors import ScenarioError
from .quoting import shown

__all__ = ["PortGroups", "infer_port_groups", "choose", "mixed_states", "group_state_clash", "refuse_group_state_clash"]

K = TypeVar("K", bound=Hashable)
W = TypeVar("W")


@dataclass
class PortGroups:
    """Groups inferred from per-volume path states."""

    group_of: dict[Hashable, str]  # nexus -> group name
    controller_of: dict[str, str]  # group -> controller
    alua: dict[str, dict[str, str]]  # volume -> {group: state}
    owner: dict[str, str | None]  # volume -> the controller that owns it
    controllers: list[str] = field(default_factory=list)

    @property
    def groups(self) -> list[str]:
        return list(self.controller_of)


def mixed_states(states: dict[K, dict[str, str | None]]) -> bool:
    """True if some nexus is in different (known) states for different volumes: one state per nexus cannot hold them."""
    return any(len({s for s in per.values() if s is not None}) > 1 for per in states.values())


def group_state_clash(observed: Iterable[tuple[str, str, str | None, W]]) -> tuple[str, str, tuple[str, W], tuple[str, W]] | None:
    """The first volume and named group that the listing shows in two states, with (state, where) of each.

    ``observed``: (volume, group id, state, where) for each path whose group the listing names; a state of None
    (a path down) says nothing and is skipped. SCSI gives a logical unit one state per target port group (SPC-4, REPORT TARGET PORT
    GROUPS), so two states for one are a capture taken mid-transition or an edited one: which is right, the
    importer cannot say (it once kept the first seen, silently)."""
    first: dict[tuple[str, str], tuple[str, W]] = {}
    for volume, group, state, where in observed:
        if state is None:
            continue
        prev = first.setdefault((volume, group), (state, where))
        if prev[0] != state:
            return volume, group, prev, (state, where)
    return None


def refuse_group_state_clash(observed: Iterable[tuple[str, str, str | None, Any]], naming: str) -> None:
    """Refuse a capture that shows one volume's named group in two states, at the second line (``where`` is
    (source, line)); ``naming`` words the group for that listing, from ``{volume}`` and ``{group}``."""
    clash = group_state_clash(observed)
    if clash is None:
        return
    volume, group, (state1, (src1, line1)), (state2, (src2, line2)) = clash
    raise src2.fail(
        line2,
        naming.format(volume=volume, group=group)
        + f" is {state2} here but {state1} on line {line1}"
        + (f" of {src1.name}" if src1 is not src2 else "")
        + ": a LUN has one ALUA state per target port group; capture again (a failover mid-capture?)",
    )


def _letters(n: int) -> str:
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(ord("A") + r) + out
    return out


def infer_port_groups(states: dict[K, dict[str, str | None]], volumes: Sequence[str], ids: dict[K, str] | None = None) -> PortGroups:
    """Target port groups from each nexus's state per volume (``None``: down, unknown), in the nexuses' order.

    ``ids`` names each nexus's group where the listing tells it (``TPG_id``); the names become ``tpg<id>``.
    """
    vectors: dict[K, tuple[str | None, ...]] = {k: tuple(per.get(v) for v in volumes) for k, per in states.items()}

    def agree(a: tuple[str | None, ...], b: tuple[str | None, ...]) -> bool:
        return all(x is None or y is None or x == y for x, y in zip(a, b, strict=True))

    group_of: dict[Hashable, str] = {}
    group_vector: dict[str, tuple[str | None, ...]] = {}
    if ids is not None and all(k in ids for k in states):
        for k in states:
            name = f"tpg{ids[k]}"
            group_of[k] = name
            old = group_vector.get(name)
            merged = vectors[k] if old is None else tuple(x if x is not None else y for x, y in zip(old, vectors[k], strict=True))
            group_vector[name] = merged
    else:
        # fully known vectors first (in order), then the nexuses with a down path join the first that agrees
        known = [k for k in states if None not in vectors[k]]
        for k in [*known, *(k for k in states if k not in known)]:
            found = next((g for g, vec in group_vector.items() if agree(vec, vectors[k])), None)
            if found is None:
                found = f"tpg{len(group_vector) + 1}"
                group_vector[found] = vectors[k]
            group_of[k] = found
        order = list(dict.fromkeys(group_of[k] for k in states))  # in the listing's order, renumbered
        rename = {old: f"tpg{i + 1}" for i, old in enumerate(order)}
        group_of = {k: rename[g] for k, g in group_of.items()}
        group_vector = {rename[g]: group_vector[g] for g in order}
    # controllers: groups whose states agree for every volume; fully known groups first, a group with a down
    # path's unknowns joins the first controller it agrees with
    seen: dict[tuple[str | None, ...], str] = {}
    found_on: dict[str, str] = {}
    for g in sorted(group_vector, key=lambda g: None in group_vector[g]):
        vec = group_vector[g]
        c = next((name for v, name in seen.items() if agree(v, vec)), None)
        if c is None:
            c = _letters(len(seen))
            seen[vec] = c
        found_on[g] = c
    controller_of = {g: found_on[g] for g in group_vector}
    alua: dict[str, dict[str, str]] = {}
    owner: dict[str, str | None] = {}
    for i, v in enumerate(volumes):
        alua[v] = {g: (vec[i] or "unavailable") for g, vec in group_vector.items()}
        ao = {controller_of[g] for g, s in alua[v].items() if s == "AO"}
        owner[v] = next(iter(ao)) if len(ao) == 1 else None
    return PortGroups(group_of, controller_of, alua, owner, list(seen.values()))


def choose(names: Iterable[tuple[str, Sequence[str]]], patterns: Sequence[str] | None, where: str, what: str) -> list[str] | None:
    """The names (each with its aliases: a map's WWID, a disk's number) that the ``--device`` patterns keep.

    A pattern is a name or a shell glob (``mpath*``, ``naa.624a9370*``; fnmatch, case-sensitive); every pattern
    must match something (else one located error, naming what there is). None: no filter.
    """
    if not patterns:
        return None
    rows = list(names)
    kept: list[str] = []
    for pat in patterns:
        hits = [name for name, aliases in rows if any(fnmatch.fnmatchcase(a, pat) for a in (name, *aliases))]
        if not hits:
            listed = ", ".join(name for name, _ in rows[:20]) + (", ..." if len(rows) > 20 else "")
            raise ScenarioError("command line", "--device", f"{shown(pat)} matches no {what} in {where} ({what}s: {listed})")
        kept.extend(h for h in hits if h not in kept)
    order = [name for name, _ in rows]
    return sorted(kept, key=order.index)
