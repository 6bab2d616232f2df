"""The set-up, drawn: hosts, adapters, the fabric, target ports by controller, arrays and replication, and its key figures.

:func:`topology` draws the scenario as a plotly figure, left to right: hosts,
their adapters (initiator ports), the fabric's switches (a box each, ISLs as
bands between them, every link with ends labelled with the share of the run
it was busy and held, as the report's wire table gives them), the target
ports boxed by the array's controller, and the arrays, with the replication
link between arrays; one line per I-T nexus over its route. A line's colour
is its ALUA state at the start of the run, striped where it is AO for some
LUNs and not for others (issue 48); its width is the share of I/Os a policy
sent down it (buttons switch the policy); one that carried nothing is thin
and dotted. From ``COMPACT_HOSTS`` (32) hosts the drawing is compact: hosts
wired alike are one node, a controller's target ports one, the fabric still
drawn.

:func:`key_figures` lists what a reader needs to know to judge the numbers:
the workload (``rw``, ``bs``, ``iodepth``), every one-way latency and
distance, array service times, replication, host timers and the run's
window.

Adapters and target ports come from the path names where these follow a
convention (ESXi's ``vmhba1:C0:T3:L1``: adapter ``vmhba1``, target ``T3``);
otherwise a path's shared links stand for its adapter and each nexus for
its own target port; a ``target_port`` in the scenario names it.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from ..model import US_PER_KM
from ..model.fabric import junctions
from ..units import format_duration
from .result import Result, RunResult

__all__ = ["topology", "key_figures", "nexuses", "Nexus", "ALUA_COLORS"]

#: path colours by ALUA state (the heatmap's state colours)
ALUA_COLORS = {"AO": "#2ca02c", "ANO": "#ff7f0e", "standby": "#9467bd", "unavailable": "#7f7f7f"}
_SCSI = re.compile(r"^(?P<adapter>[^:]+):C\d+:(?P<target>T\d+)(?::L\d+)?$")
_LABELS_UP_TO = 40  # nodes per column named on the figure; hover names every one


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


def _switch_latency(model: Any, links: Sequence[int]) -> float:
    """One-way seconds the switches of a route add (in ControllerModel.extra with the distance)."""
    by_name = {s.name: s.latency for s in model.switches}
    return sum((by_name[s] for s in _junctions(model, links)), 0.0)


def _route(model: Any, links: Sequence[int]) -> str:
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


def _column(names: Sequence[Any], group: Any = None, gap: float = 0.8) -> dict[Any, float]:
    """Evenly spread y positions (1 at the top) for a column's nodes, in the order given; with ``group`` (a node's
    group, e.g. its array's controller) a gap of most of a slot between groups, so each can be boxed and named."""
    units, at, last = 0.0, [], None
    for i, k in enumerate(names):
        g = group(k) if group is not None else None
        if i and g != last:
            units += gap
        at.append(units)
        units += 1.0
        last = g
    return {k: 1.0 - (u + 0.5) / units for k, u in zip(names, at)} if names else {}


def _width(share: float) -> float:
    # area reads as amount: the square root keeps 20 equal paths visible beside one busy one; a path that carried
    # nothing is a thin dotted line (it exists, it carried none)
    return 0.8 + 11.0 * math.sqrt(share) if share > 0 else 0.8


def _heat(busy: float) -> str:
    """A link's colour by how busy (or held) it is: grey when idle, to red at 100 %."""
    b = min(max(busy, 0.0), 1.0)
    r, g, bl = (int(170 + (214 - 170) * b), int(170 - (170 - 39) * b), int(170 - (170 - 40) * b))
    return f"rgb({r},{g},{bl})"


def _names(items: Sequence[str], up_to: int = 3) -> str:
    """``lun0, lun1, lun2`` or ``lun0 … lun7`` (the first and last of more than ``up_to``)."""
    items = list(items)
    return ", ".join(items) if len(items) <= up_to else f"{items[0]}, {items[1]} … {items[-1]}" if up_to >= 2 else f"{items[0]} … {items[-1]}"


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %" if x >= 0.01 or x == 0 else "<1 %"


@dataclass
class _Line:
    """One line of the drawing: a nexus, or in the compact form the nexuses of hosts wired alike."""

    name: str
    members: list[Nexus]
    host: tuple[str, ...]  # node keys
    adapter: tuple[str, ...] | None
    switches: tuple[str, ...]
    target: tuple[str, ...]
    array: str
    routes: list[tuple[int, ...]]  # each member's links, when they form a fabric route (one per hop), else ()


#: from this many hosts the drawing is compact: hosts wired alike drawn as one, the target ports of a controller as one
COMPACT_HOSTS = 32
_LINK_LABELS_UP_TO = 16  # links named on the figure; past it only ISLs and the busy or held ones (hover names every one)
_HOT_LINK = 0.5  # busy or held share from which a link is named whatever their number
_SW = 0.4  # a switch box's width, in column units


def topology(result: Result | RunResult, *, policy: str | None = None, compact: bool | None = None) -> go.Figure:
    """The set-up as a figure: hosts, adapters, the fabric's switches, ISLs and links, target ports boxed by controller,
    arrays and replication, and one line per nexus over the route it takes.

    A line is coloured by its ALUA state at the start of the run (AO green, ANO orange, standby purple, unavailable
    grey); a nexus in one state for some LUNs and another for the rest (a dual-controller array's LUNs owned by
    either controller) is striped in both, and its hover says which LUNs. Its width is the share of I/Os ``policy``
    (a label or spec; default the first run) sent down it; one that carried none is a thin dotted line. Each link
    with ends (``between``) is labelled with the share of the run it was busy and held by back-pressure (the wire
    table's utilisation and held, the busier direction), its marker red as it nears 100 %. Buttons above switch the
    policy. ``compact`` (default: from 32 hosts) draws hosts with identical wiring as one node and the target ports
    of one controller (or array) as one. Traces: ``"path <name>"`` per line (``x``: adapter, the switches, target
    port), ``"path <name>: stripes"`` for a striped one, ``"hosts"``, ``"adapters"``, ``"switches"``, ``"target
    ports"``, ``"arrays"``, ``"replication"``, ``"links"`` (one marker per link), ``"isl <name>"`` per ISL band.
    """
    runs = list(result.runs) if isinstance(result, Result) else [result]
    if not runs:
        raise ValueError("topology: the result has no runs")
    first = runs[0]
    if policy is not None:
        chosen = [i for i, r in enumerate(runs) if policy in (r.label, r.policy)]
        if not chosen:
            raise KeyError(policy)
        start = chosen[0]
    else:
        start = 0
    model = first.model
    nx = nexuses(first)
    if compact is None:
        compact = len(model.hosts) >= COMPACT_HOSTS
    switch_names = [s.name for s in model.switches]

    def controller(n: Nexus) -> str:
        c = model.controllers[n.index]
        names = model.arrays[c.array].controllers
        return names[c.array_controller] if 0 <= c.array_controller < len(names) else ""

    def route(n: Nexus) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """The switches a nexus crosses and its links, when its links form a fabric route."""
        links = model.controllers[n.index].links
        sw = tuple(_junctions(model, links))
        return (sw, links) if sw else ((), ())

    volume_of = [model.devices[p.device].volume if model.devices and p.device >= 0 else "" for p in model.paths]
    volumes = list(dict.fromkeys(volume_of))

    # per run: I/Os, share, latency and ALUA per LUN of every nexus
    ios_of: list[dict[int, int]] = []
    share_of: list[dict[int, float]] = []
    lat_of: list[dict[int, float]] = []
    states_of: list[dict[int, dict[int, str]]] = []
    off_ao: list[dict[int, int]] = []
    for r in runs:
        # straight from each path's latency histogram (count and exact total): what r.paths() reports, without its
        # percentiles, which cost seconds at 16,384 paths and the drawing does not show
        ios: dict[int, int] = defaultdict(int)
        busy_s: dict[int, float] = defaultdict(float)
        not_ao: dict[int, int] = defaultdict(int)  # I/Os a nexus carried for LUNs it was not AO for at the start
        for p in r.model.paths:
            hist = r.metrics.path_hist[p.index]
            ios[p.controller] += hist.n
            busy_s[p.controller] += hist.total
            if p.alua != "AO":
                not_ao[p.controller] += hist.n
        total = max(r.ios, 1)
        off_ao.append(not_ao)
        ios_of.append({n.index: ios[n.index] for n in nx})
        share_of.append({n.index: ios[n.index] / total for n in nx})
        lat_of.append({n.index: busy_s[n.index] / max(1, ios[n.index]) * 1e3 for n in nx})  # ms
        # a policy with a preferred array of its own starts with other ALUA states
        states_of.append({n.index: {i: r.model.paths[i].alua for i in n.paths} for n in nx})

    # the lines: a nexus each, or (compact) hosts wired alike as one, the ports of one controller as one node
    def target_key(n: Nexus) -> tuple[str, ...]:
        return (n.array, controller(n) or n.array) if compact else (n.array, n.target)

    host_key: dict[str, tuple[str, ...]] = {h: (h,) for h in model.hosts}
    host_label: dict[tuple[str, ...], str] = {(h,): h for h in model.hosts}
    if compact:
        faulted = {c for f in model.faults for c in f.controllers}
        signature: dict[str, list[Any]] = defaultdict(list)
        for n in nx:
            alua = tuple(sorted((volume_of[i], s) for i, s in states_of[start][n.index].items()))
            # a host with a fault on a nexus stands apart: the compact form hides no host the scenario singles out
            signature[n.host].append((n.adapter, route(n)[0], target_key(n), alua, ios_of[start][n.index] > 0, n.index in faulted))
        groups: dict[tuple[Any, ...], list[str]] = defaultdict(list)
        for h in model.hosts:
            groups[tuple(sorted(signature.get(h, []), key=repr))].append(h)
        host_label = {}
        for members in groups.values():
            key = (members[0],) if len(members) == 1 else (f"{len(members)} hosts: {_names(members, 2)}",)
            host_label[key] = key[0] if len(members) == 1 else f"{len(members)} hosts alike<br>{_names(members, 2)}"
            for h in members:
                host_key[h] = key
    lines: dict[tuple[Any, ...], _Line] = {}
    for n in nx:
        sw, links = route(n)
        hk = host_key[n.host]
        lkey: tuple[Any, ...] = (hk, n.adapter, sw, target_key(n)) if compact else (n.index,)
        if lkey not in lines:
            lines[lkey] = _Line(n.name, [], hk, (*hk, n.adapter) if n.adapter else None, sw, target_key(n), n.array, [])
        lines[lkey].members.append(n)
        lines[lkey].routes.append(links)
    drawn = list(lines.values())
    for ln in drawn:
        if len(ln.members) > 1:
            hosts_n = len({m.host for m in ln.members})
            ln.name = f"{ln.adapter[-1] if ln.adapter else ln.host[0]} → {ln.target[-1]}: {len(ln.members)} nexuses" + (
                f" of {hosts_n} hosts" if hosts_n > 1 else ""
            )
    several_hosts = len(model.hosts) > 1

    # columns, grouped so lines cross as little as the set-up allows: by host, then array and controller
    array_order = {a.name: i for i, a in enumerate(model.arrays)}
    hosts = list(dict.fromkeys(host_key[h] for h in model.hosts if any(n.host == h for n in nx))) or [(h,) for h in model.hosts]
    # with a fabric, adapters by the switch they plug into (a host's two HBAs in two fabrics), so the paths run straight
    # and only the thin host-to-adapter wiring crosses
    edge = {s: k for k, s in enumerate(switch_names)}
    adapters = list(
        dict.fromkeys(
            ln.adapter
            for ln in sorted(drawn, key=lambda ln: (edge.get(ln.switches[0], -1) if ln.switches else -1, hosts.index(ln.host)))
            if ln.adapter
        )
    )
    arrays = [(a.name,) for a in model.arrays]
    ctl_of = {target_key(n): controller(n) for n in nx}
    targets = list(dict.fromkeys(ln.target for ln in sorted(drawn, key=lambda ln: (array_order[ln.array], ctl_of[ln.target]))))
    y_host, y_adapter, y_array = _column(hosts), _column(adapters), _column(arrays)
    y_target = _column(targets, group=lambda k: (k[0], ctl_of[k]))
    if any(ctl_of.values()):  # room at the top for the first controller's name above its box
        y_target = {k: 0.92 * y for k, y in y_target.items()}

    # switch columns: a switch's column is the earliest hop at which a route crosses it (edge, then core); peers
    # (a host's two fabrics, each reaching the other over an ISL) share a column
    depth: dict[str, int] = {}
    for ln in drawn:
        for k, s in enumerate(ln.switches):
            depth[s] = min(depth.get(s, k), k)
    n_cols = max(depth.values(), default=-1) + 1
    X_HOST, X_ADAPTER = 0.0, 1.0
    x_switch = {s: X_ADAPTER + 1.3 * (d + 1) for s, d in depth.items()}
    X_TARGET = 2.6 + 1.3 * n_cols
    X_ARRAY = X_TARGET + 1.0

    def start_y(ln: _Line) -> float:
        return y_adapter[ln.adapter] if ln.adapter else y_host[ln.host]

    # each switch is a box whose height holds a slot per line crossing it, ordered as the lines arrive
    slot: dict[tuple[str, int], float] = {}
    box: dict[str, tuple[float, float]] = {}
    for d in range(n_cols):
        column = [s for s in switch_names if depth.get(s) == d]
        through = {s: [i for i, ln in enumerate(drawn) if s in ln.switches] for s in column}
        column.sort(key=lambda s: -sum(start_y(drawn[i]) for i in through[s]) / max(1, len(through[s])))

        def side(s: str, i: int, column: list[str] = column) -> int:
            """-1: the line also crosses a peer above (its slot at the top, near the ISL), 1: below, 0: neither."""
            peers = [column.index(p) - column.index(s) for p in drawn[i].switches if p != s and p in column]
            return (1 if peers[0] > 0 else -1) if peers else 0

        keys = [
            (s, i)
            for s in column
            for i in sorted(through[s], key=lambda i, s=s: (side(s, i), -start_y(drawn[i]), -y_target[drawn[i].target]))  # type: ignore[misc]
        ]
        gap = max(2.0, 0.12 * len(keys))  # room for an ISL's band and its label between peers
        col_y = _column(keys, group=lambda k: k[0], gap=gap)
        slot.update(col_y)
        unit = (1.0 / (len(keys) + gap * (len(column) - 1))) if keys else 0.0
        for s in column:
            mine = [col_y[(s, i)] for i in through[s]]
            if mine:
                box[s] = (min(mine) - 0.45 * unit, max(mine) + 0.45 * unit)

    # links: busy and held per run (the wire table's rows, the busier direction)
    link_stats: list[dict[str, tuple[float, float]]] = []
    for r in runs:
        stats: dict[str, tuple[float, float]] = {}
        for row in r.links():
            bz, hz = stats.get(row["name"], (0.0, 0.0))
            stats[row["name"]] = (max(bz, row["utilisation"]), max(hz, row.get("held", 0.0)))
        link_stats.append(stats)

    # the line's points; where each of its links is labelled (beside the adapter, beside the target port, on the ISL)
    points: list[tuple[list[float | None], list[float | None]]] = []
    seg_links: dict[tuple[Any, ...], set[int]] = defaultdict(set)
    seg_at: dict[tuple[Any, ...], tuple[float, float]] = {}
    isl_spans: dict[tuple[str, ...], list[tuple[float, float, float, float]]] = defaultdict(list)
    # lines down (or up) an ISL between peers: the higher a line's slot in the upper switch, the further right its
    # vertical run, a staircase in which lines going one way do not cross
    isl_rank: dict[tuple[tuple[str, ...], int], float] = {}
    crossing: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, ln in enumerate(drawn):
        for a, b in zip(ln.switches, ln.switches[1:]):
            if x_switch[a] == x_switch[b]:
                crossing[tuple(sorted((a, b)))].append(i)
    for pair, idx in crossing.items():
        upper = max(pair, key=lambda s: box[s][1])
        ranked = sorted(idx, key=lambda i: -slot[(upper, i)])
        for rank, i in enumerate(ranked):
            isl_rank[(pair, i)] = rank / max(1, len(ranked) - 1)
    for i, ln in enumerate(drawn):
        xs: list[float | None] = [X_ADAPTER if ln.adapter else X_HOST]
        ys: list[float | None] = [start_y(ln)]
        sw = ln.switches
        for k, s_ in enumerate(sw):
            xk, y = x_switch[s_], slot[(s_, i)]
            prev_same = k > 0 and x_switch[sw[k - 1]] == xk
            next_same = k + 1 < len(sw) and x_switch[sw[k + 1]] == xk
            if not prev_same:
                if k > 0:  # an ISL between columns: from the last switch's right edge to this one's left
                    isl_spans[tuple(sorted(sw[k - 1 : k + 1]))].append((xs[-1] or 0.0, ys[-1] or 0.0, xk - _SW / 2, y))
                xs.append(xk - _SW / 2)
                ys.append(y)
            if next_same:  # an ISL within a column (peer switches): across the box, down (or up) to the other's slot
                pair = tuple(sorted(sw[k : k + 2]))
                off = xk + _SW * (0.35 - 0.7 * isl_rank[(pair, i)])
                y2 = slot[(sw[k + 1], i)]
                isl_spans[pair].append((off, y, off, y2))
                xs += [off, off]
                ys += [y, y2]
            else:
                xs.append(xk + _SW / 2)
                ys.append(y)
        xs.append(X_TARGET)
        ys.append(y_target[ln.target])
        points.append((xs, ys))
        hops = [ln.adapter or ln.host, *sw, ln.target]
        for k in range(len(hops) - 1) if sw else ():
            if k == 0:
                seg: tuple[Any, ...] = ("host", hops[0])
                seg_at[seg] = (X_ADAPTER if ln.adapter else X_HOST, start_y(ln))
            elif k == len(hops) - 2:
                seg = ("target", ln.target)
                seg_at[seg] = (X_TARGET, y_target[ln.target])
            else:
                seg = ("isl", *sorted(str(h) for h in hops[k : k + 2]))
            for links in ln.routes:
                if len(links) == len(hops) - 1:
                    seg_links[seg].add(links[k])

    def path_text(ln: _Line, run: int | None = None) -> str:
        n0 = ln.members[0]
        head = (
            f"<b>{n0.name}</b>" + (f" ({n0.host})" if several_hosts else "")
            if len(ln.members) == 1
            else f"<b>{ln.name}</b><br>{_names(sorted({m.host for m in ln.members}))}"
        )
        where = " → ".join([n0.adapter or n0.host, *ln.switches, n0.target if len(ln.members) == 1 else ln.target[-1], n0.array])
        lines = [head, where]
        for j, r in enumerate(runs):
            ios = sum(ios_of[j][m.index] for m in ln.members)
            share = sum(share_of[j][m.index] for m in ln.members)
            lat = f", {sum(lat_of[j][m.index] * ios_of[j][m.index] for m in ln.members) / ios:.2f} ms mean" if ios else ""
            # a nexus AO for some LUNs: how much of what it carried was for the others (shipped to their owner)
            other = sum(off_ao[j][m.index] for m in ln.members)
            mixed = len(alua_of(ln, j)) > 1
            lines.append(
                f"{r.label}: {share:.1%} of I/Os, {ios / r.duration:,.0f} IOPS{lat}"
                + (" (carried none)" if not ios else f", {other / ios:.0%} for its non-AO LUNs" if mixed else "")
            )
        lines.append(alua_words(ln, start))
        return "<br>".join(lines)

    def alua_of(ln: _Line, run: int) -> dict[str, list[str]]:
        """ALUA state at the start → the LUNs (volumes) in it, over the line's nexuses."""
        out: dict[str, set[str]] = defaultdict(set)
        for m in ln.members:
            for i, s in states_of[run][m.index].items():
                out[s].add(volume_of[i])
        order = {v: k for k, v in enumerate(volumes)}
        return {s: sorted(out[s], key=lambda v: order[v]) for s in _in_order(set(out))}

    def alua_words(ln: _Line, run: int) -> str:
        states = alua_of(ln, run)
        if len(states) <= 1:
            return f"{next(iter(states), 'AO')} at start"
        total = len({v for vs in states.values() for v in vs})
        return "at start: " + ", ".join(f"{s} for {len(vs)} of {total} LUNs ({_names(vs)})" for s, vs in states.items())

    def style(run: int) -> tuple[list[float], list[str], list[str], list[float], list[str], list[str]]:
        """Per line: width, colour and dash of the line and of its stripes (a second state for some of its LUNs)."""
        w, c, d, sw, sc, sd = [], [], [], [], [], []
        for ln in drawn:
            share = sum(share_of[run][m.index] for m in ln.members)
            states = list(alua_of(ln, run)) or ["AO"]
            w.append(_width(share))
            c.append(ALUA_COLORS.get(states[0], "#7f7f7f"))
            d.append("solid" if share > 0 else "dot")
            mixed = len(states) > 1 and share > 0
            sw.append(_width(share) if mixed else 0.0)
            sc.append(ALUA_COLORS.get(states[-1], "#7f7f7f"))
            sd.append("dash")
        return w, c, d, sw, sc, sd

    fig = go.Figure()
    shapes: list[dict[str, Any]] = []
    # the fixed wiring first, beneath the paths: host to adapter, target port (or its controller's box) to array
    ctl_box: dict[tuple[str, str], tuple[float, float]] = {}
    for t in targets:
        if ctl_of[t]:
            lo, hi = ctl_box.get((t[0], ctl_of[t]), (2.0, -1.0))
            ctl_box[(t[0], ctl_of[t])] = (min(lo, y_target[t]), max(hi, y_target[t]))
    target_unit = 0.92 / max(1, len(targets) + 0.8 * (len(ctl_box) - 1))
    wx: list[float | None] = []
    wy: list[float | None] = []
    for adapter in adapters:
        wx += [X_HOST, X_ADAPTER, None]
        wy += [y_host[adapter[:-1]], y_adapter[adapter], None]
    BOX_R = X_TARGET + 0.62
    for t in targets:
        if not ctl_of[t]:
            wx += [X_TARGET, X_ARRAY, None]
            wy += [y_target[t], y_array[(t[0],)], None]
    for (an, _c), (lo, hi) in ctl_box.items():
        wx += [BOX_R, X_ARRAY, None]
        wy += [(lo + hi) / 2, y_array[(an,)], None]
    fig.add_trace(go.Scatter(x=wx, y=wy, mode="lines", line=dict(color="#bbb", width=1.5), hoverinfo="skip", showlegend=False, name="wiring"))

    # controllers: an box round the target ports of each, named with its port groups and the LUNs it owns (AO there)
    for (an, c), (lo, hi) in ctl_box.items():
        groups_ = sorted({model.controllers[n.index].port_group for n in nx if n.array == an and controller(n) == c} - {""})
        owned = [
            v
            for v in volumes
            if any(
                states_of[start][n.index].get(i) == "AO" and volume_of[i] == v for n in nx if n.array == an and controller(n) == c for i in n.paths
            )
        ]
        shapes.append(
            dict(
                type="rect",
                layer="below",
                x0=X_TARGET - 0.12,
                x1=BOX_R,
                y0=lo - 0.45 * target_unit,
                y1=hi + 0.45 * target_unit,
                line=dict(color="#8c564b", width=1.2),
                fillcolor="rgba(140,86,75,0.06)",
            )
        )
        label = (
            f"<b>controller {c}</b>"
            + (f" · {', '.join(groups_)}" if groups_ else "")
            + (f"<br>AO for {owned[0]}" if len(owned) == 1 else f"<br>AO for {len(owned)} LUNs ({_names(owned)})" if owned else "")
        )
        fig.add_annotation(
            x=X_TARGET - 0.12,
            y=hi + 0.45 * target_unit,
            text=label,
            showarrow=False,
            xanchor="left",
            yanchor="bottom",
            align="left",
            font=dict(size=10, color="#8c564b"),
        )

    # switches: a box each, the lines crossing it at a slot of their own
    for s, (lo, hi) in box.items():
        shapes.append(
            dict(
                type="rect",
                layer="below",
                x0=x_switch[s] - _SW / 2,
                x1=x_switch[s] + _SW / 2,
                y0=lo,
                y1=hi,
                line=dict(color="#444", width=1.5),
                fillcolor="#e8eef5",
            )
        )
    # ISLs: a band joining the two switches, coloured by how busy (or held) it is; its label goes beside it
    for pair, spans in isl_spans.items():
        seg = ("isl", *pair)
        names = sorted({model.links[k].name for k in seg_links.get(seg, set())}) or ["–".join(pair)]
        busy, held = (max((link_stats[start].get(n_, (0.0, 0.0))[j] for n_ in names), default=0.0) for j in (0, 1))
        xa, xb = x_switch[pair[0]], x_switch[pair[1]]
        if xa == xb:  # peers in one column: the gap between their boxes
            (lo_a, hi_a), (lo_b, hi_b) = box[pair[0]], box[pair[1]]
            y0, y1 = (hi_b, lo_a) if lo_a > hi_b else (hi_a, lo_b)
            x0, x1 = xa - _SW * 0.38, xa + _SW * 0.38
            bx, by = [x0, x1, x1, x0, x0], [y0, y0, y1, y1, y0]
            seg_at[seg] = (x1, (y0 + y1) / 2)
        else:
            x0 = min(min(p[0], p[2]) for p in spans)
            x1 = max(max(p[0], p[2]) for p in spans)
            left = [p[1] if p[0] <= p[2] else p[3] for p in spans]
            right = [p[3] if p[0] <= p[2] else p[1] for p in spans]
            bx = [x0, x1, x1, x0, x0]
            by = [max(left), max(right), min(right), min(left), max(left)]
            seg_at[seg] = ((x0 + x1) / 2, max(max(left), max(right)))
        hot = _heat(max(busy, held))
        fig.add_trace(
            go.Scatter(
                x=bx,
                y=by,
                mode="lines",
                fill="toself",
                name=f"isl {', '.join(names)}",
                fillcolor=hot.replace("rgb", "rgba").replace(")", ",0.45)"),
                line=dict(color=hot, width=1.5),
                hoverinfo="skip",
                showlegend=False,
            )
        )

    first_path_trace = len(fig.data)
    st = style(start)
    for i, ln in enumerate(drawn):
        xs, ys = points[i]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                name=f"path {ln.name}",
                line=dict(color=st[1][i], width=st[0][i], dash=st[2][i]),
                hovertemplate=path_text(ln) + "<extra></extra>",
                showlegend=False,
                legendgroup=ln.members[0].alua,
            )
        )
    striped = [i for i in range(len(drawn)) if any(len(alua_of(drawn[i], j)) > 1 for j in range(len(runs)))]
    for i in striped:
        xs, ys = points[i]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                name=f"path {drawn[i].name}: stripes",
                line=dict(color=st[4][i], width=st[3][i], dash=st[5][i]),
                hoverinfo="skip",
                showlegend=False,
            )
        )

    def nodes(
        name: str,
        xs: float,
        ys: dict[tuple[str, ...], float],
        labels: list[str],
        symbol: str,
        size: int,
        color: str,
        position: str,
        show_text: bool,
        hover: list[str] | None = None,
    ) -> None:
        fig.add_trace(
            go.Scatter(
                x=[xs] * len(ys),
                y=list(ys.values()),
                mode="markers+text" if show_text else "markers",
                name=name,
                text=labels,
                textposition=position,
                textfont=dict(size=12),
                marker=dict(symbol=symbol, size=size, color=color, line=dict(width=1, color="#333")),
                hovertext=hover or labels,
                hoverinfo="text",
                showlegend=False,
            )
        )

    nodes("hosts", X_HOST, y_host, [host_label.get(h, h[0]) for h in hosts], "square", 22, "#1f77b4", "middle left", True)
    if adapters:

        def adapter_hover(a: tuple[str, ...]) -> str:
            # the [[links]] shorthand: the shared links a nexus crosses stand for its adapter, busy as the wire table says
            names = [model.links[k].name for n in nx if n.adapter == a[-1] and host_key[n.host] == a[:-1] for k in model.controllers[n.index].links]
            busy = [f"{x}: {_pct(link_stats[start][x][0])} busy" for x in dict.fromkeys(names) if x in link_stats[start]]
            return "<br>".join([a[-1], *busy[:6]])

        nodes(
            "adapters",
            X_ADAPTER,
            y_adapter,
            [a[-1] for a in adapters],
            "circle",
            12,
            "#aec7e8",
            "top center",
            len(adapters) <= _LABELS_UP_TO,
            hover=[adapter_hover(a) for a in adapters],
        )
    if box:
        fig.add_trace(
            go.Scatter(
                x=[x_switch[s] - _SW / 2 for s in box],  # left of the box's top: the gap above it may hold an ISL's band
                y=[hi for _lo, hi in box.values()],
                mode="text",
                name="switches",
                text=[f"<b>{s}</b>" for s in box],
                textposition="bottom left",
                textfont=dict(size=12, color="#222"),
                hovertext=[f"switch {s}: {sum(1 for ln in drawn if s in ln.switches)} lines cross it" for s in box],
                hoverinfo="text",
                showlegend=False,
            )
        )

    def target_label(t: tuple[str, ...]) -> str:
        if not compact:
            return t[-1]
        ports = sorted({n.target for n in nx if target_key(n) == t})
        return f"{len(ports)} port{'s' if len(ports) > 1 else ''}" + (f" ({_names(ports, 2)})" if ports else "")

    nodes("target ports", X_TARGET, y_target, [target_label(t) for t in targets], "diamond", 10, "#c7c7c7", "middle right", False)
    if len(targets) <= _LABELS_UP_TO:  # on a white ground, so the wiring does not run through the names
        for t, y in y_target.items():
            fig.add_annotation(
                x=X_TARGET,
                y=y,
                text=target_label(t),
                showarrow=False,
                xanchor="left",
                xshift=9,
                font=dict(size=11),
                bgcolor="rgba(255,255,255,0.85)",
                borderpad=1,
            )
    nodes("arrays", X_ARRAY, y_array, [a[0] for a in arrays], "square", 26, "#8c564b", "middle right", True)
    for arr in model.arrays:  # the link between its controllers, busy as the wire table says
        ic = link_stats[start].get(f"{arr.name}:inter-controller")
        if ic is not None:
            fig.add_annotation(
                x=X_ARRAY,
                y=y_array[(arr.name,)],
                yshift=-22,
                text=f"inter-controller {_pct(ic[0])} busy",
                showarrow=False,
                font=dict(size=10, color="#8c564b"),
            )

    rep = model.replication
    if rep is not None:
        a, b = (model.arrays[i].name for i in rep.arrays)
        ya, yb = y_array[(a,)], y_array[(b,)]
        # a bow to the right of the arrays, so the link does not run over the target-port wiring
        bow = [X_ARRAY + 0.45 * math.sin(math.pi * k / 20) for k in range(21)]
        ys = [ya + (yb - ya) * k / 20 for k in range(21)]
        km = rep.extra / US_PER_KM
        label = (
            f"replication, one way {rep.one_way_latency.describe()}"
            + (f" + {km:g} km" if km else "")
            + (f", {_bandwidth(rep.bandwidth)}" if rep.bandwidth else "")
        )
        shown = "<br>".join(
            [
                "<b>replication</b>",
                _short(f"one way {rep.one_way_latency.describe()}", 30),
                *([f"+ {km:g} km"] if km else []),
                *([_bandwidth(rep.bandwidth)] if rep.bandwidth else []),
            ]
        )
        fig.add_trace(
            go.Scatter(
                x=bow,
                y=ys,
                mode="lines",
                name="replication",
                line=dict(color="#8c564b", width=3, dash="dash"),
                hovertext=label,
                hoverinfo="text",
                showlegend=False,
            )
        )
        fig.add_annotation(
            x=X_ARRAY + 0.47, y=(ya + yb) / 2, text=shown, showarrow=False, align="left", xanchor="left", font=dict(size=11, color="#8c564b")
        )

    # the links: a marker on each (its segment's middle; an ISL's band), named with its busy and held shares
    segs = [s for s in seg_at if seg_links.get(s)]
    link_index = len(fig.data) if segs else None

    def link_words(seg: tuple[Any, ...], run: int) -> tuple[str, str, float]:
        names = sorted(model.links[k].name for k in seg_links[seg])
        stats = [link_stats[run].get(n_, (0.0, 0.0)) for n_ in names]
        busy, held = max(b for b, _ in stats), max(h for _, h in stats)
        who = names[0] if len(names) == 1 else f"{len(names)} links"
        up = "" if len(names) == 1 else "up to "
        return who, f"{up}{_pct(busy)} busy" + (f", {_pct(held)} held" if held >= 0.005 else ""), max(busy, held)

    def link_texts(run: int) -> tuple[list[str], list[str]]:
        texts, colors = [], []
        for seg in segs:
            who, words, hot = link_words(seg, run)
            named = len(segs) <= _LINK_LABELS_UP_TO or seg[0] == "isl" or hot >= _HOT_LINK
            texts.append(f"{who}<br>{words}" if named else "")
            colors.append(_heat(hot))
        return texts, colors

    if segs:
        # beside the adapter (its port's link), beside the target port (the array port's), right of an ISL's band
        xs_l = [seg_at[g][0] + (0.05 if g[0] != "isl" else 0.0) for g in segs]
        ys_l = [seg_at[g][1] - (0.015 if g[0] != "isl" else 0.0) for g in segs]
        texts, colors = link_texts(start)
        hover = [
            "<br>".join(
                [f"<b>{', '.join(sorted(model.links[k].name for k in seg_links[g]))}</b>"]
                + [f"{r.label}: {link_words(g, j)[1]}" for j, r in enumerate(runs)]
            )
            for g in segs
        ]
        fig.add_trace(
            go.Scatter(
                x=xs_l,
                y=ys_l,
                mode="markers+text",
                name="links",
                text=texts,
                # an ISL between columns: above its band; between peers: right of it; a port link: under its marker
                textposition=[
                    ("middle right" if x_switch[g[1]] == x_switch[g[2]] else "top center") if g[0] == "isl" else "bottom right" for g in segs
                ],
                textfont=dict(size=10, color="#333"),
                marker=dict(symbol="square", size=8, color=colors, line=dict(width=1, color="#333")),
                hovertext=hover,
                hoverinfo="text",
                showlegend=False,
            )
        )

    # the legend: one entry per ALUA state drawn, striped, and what dotted means
    shown_states = _in_order({s for j in range(len(runs)) for n in nx for s in states_of[j][n.index].values()})
    for state in shown_states:
        fig.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="lines", name=f"{state} path", line=dict(color=ALUA_COLORS.get(state, "#7f7f7f"), width=4), legendgroup=state
            )
        )
    if striped:
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="lines",
                name="striped: AO for some LUNs, ANO for others",
                line=dict(color=ALUA_COLORS["ANO"], width=4, dash="dash"),
            )
        )
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="carried no I/O", line=dict(color="#999", width=1, dash="dot")))

    titles = [(X_HOST, "hosts wired alike" if compact else "host"), (X_ADAPTER, "adapter")]
    titles += [(X_ADAPTER + 1.3 * (d + 1), "switches" if d == 0 else "core") for d in range(n_cols)]
    titles += [(X_TARGET, "target ports by controller" if ctl_box else "target port"), (X_ARRAY, "array")]
    for x, title in titles:
        if title == "adapter" and not adapters:
            continue
        fig.add_annotation(x=x, y=1.1, text=f"<b>{title}</b>", showarrow=False, font=dict(size=12, color="#555"))

    tallest = max(len(hosts), len(adapters), len(targets) + len(ctl_box), len(arrays), (len(slot) + 3 * len(box)) * 0.75)
    height = int(max(420, min(1600, 180 + 24 * tallest)))
    top, bottom = 130, 20
    if len(runs) > 1:
        indices = list(range(first_path_trace, first_path_trace + len(drawn) + len(striped)))
        buttons = []
        for j, r in enumerate(runs):
            lw, lc, ld, sw_, sc_, sd_ = style(j)
            restyle: dict[str, list[Any]] = {
                "line.width": [*lw, *(sw_[i] for i in striped)],
                "line.color": [*lc, *(sc_[i] for i in striped)],
                "line.dash": [*ld, *(sd_[i] for i in striped)],
            }
            if link_index is not None:
                texts, colors = link_texts(j)
                restyle = {k: v + [None] for k, v in restyle.items()} | {
                    "text": [None] * len(indices) + [texts],
                    "marker.color": [None] * len(indices) + [colors],
                }
            buttons.append(dict(label=r.label, method="restyle", args=[restyle, indices + ([link_index] if link_index is not None else [])]))
        # 40 px above the plot, under the title, whatever the figure's height (y is in plot heights)
        fig.update_layout(
            updatemenus=[
                dict(
                    type="buttons",
                    direction="right",
                    buttons=buttons,
                    active=start,
                    x=0,
                    xanchor="left",
                    y=1 + 40 / (height - top - bottom),
                    yanchor="bottom",
                    showactive=True,
                    font=dict(size=11),
                )
            ]
        )
    longest = max((len(part) for h in hosts for part in host_label.get(h, h[0]).split("<br>")), default=0)
    name = result.scenario if isinstance(result, Result) else first.model.name
    what = "line width = share of I/Os, dotted: none" + (", links: busy and held share" if segs else "")
    fig.update_layout(
        title=dict(
            text=f"The set-up: {what}{' (buttons: policy)' if len(runs) > 1 else ''}<br><sup>{name}"
            + (f" · compact: {len(model.hosts)} hosts drawn as {len(hosts)}" if compact else "")
            + "</sup>",
            y=1,
            yanchor="top",
            pad=dict(t=14),
        ),
        # room on the left for the longest line of a host's name (a group's: "esxi02, esxi05 … esxi30")
        xaxis=dict(visible=False, range=[-max(0.75, 0.2 + 0.05 * longest), X_ARRAY + 1.6]),
        yaxis=dict(visible=False, range=[-0.04, 1.13]),
        height=height,
        margin=dict(t=top, l=20, r=20, b=bottom),
        plot_bgcolor="white",
        hovermode="closest",
        legend=dict(orientation="h", y=-0.02, yanchor="top", x=0),
        shapes=shapes,
        meta={"start_policy": runs[start].label},
    )
    return fig


def _in_order(states: set[str]) -> list[str]:
    order = list(ALUA_COLORS)
    return sorted(states, key=lambda s: order.index(s) if s in order else len(order))


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _bandwidth(bytes_per_s: float | None) -> str:
    if not bytes_per_s:
        return "no serialisation"
    bits = bytes_per_s * 8
    return f"{bits / 1e9:g} Gbit/s" if bits >= 1e9 else f"{bits / 1e6:g} Mbit/s"


def _size(n: int) -> str:
    for unit, k in (("m", 1 << 20), ("k", 1 << 10)):
        if n % k == 0:
            return f"{n // k}{unit}"
    return str(n)


def _bs(sizes: Any) -> str:
    """fio's bs from (bytes, percent) pairs: ``32k``, ``4k/60:16k/30:64k/10``."""
    sizes = list(sizes)
    if len(sizes) == 1:
        return _size(sizes[0][0])
    return ":".join(f"{_size(b)}/{p:g}" for b, p in sizes)


def _t(seconds: float) -> str:
    return "never" if math.isinf(seconds) else format_duration(seconds)


def key_figures(result: Result | RunResult) -> list[tuple[str, str]]:
    """The scenario's key figures as (what, value) rows: workloads (rw, bs, iodepth), paths' one-way
    latencies, bandwidths and distances, arrays, replication, host timers and the measured window."""
    runs = list(result.runs) if isinstance(result, Result) else [result]
    if not runs:
        return []
    model = runs[0].model
    config = getattr(result, "config", None)
    rows: list[tuple[str, str]] = []
    if config is not None:
        for w in config.workloads:
            on = w.host or config.hosts[0].name
            mix = f" ({w.rwmixread} % reads)" if w.rw in ("rw", "readwrite", "randrw") else ""
            rows.append(
                (
                    f"workload {w.name} on {on}" + (f", volume {w.volume}" if w.volume else ""),
                    f"rw={w.rw}{mix}, bs={_bs(w.bs)}, iodepth={w.iodepth}, numjobs={w.numjobs}"
                    + (f", ramp_time={format_duration(w.ramp_time)}" if w.ramp_time else ""),
                )
            )
    else:
        seen: dict[str, Any] = {}
        for j in model.jobs:
            seen.setdefault(j.workload, [j, 0])[1] += 1
        for name, (j, count) in seen.items():
            rows.append(
                (
                    f"workload {name} on {model.hosts[j.host]}",
                    f"{j.read_fraction:.0%} reads, bs={_bs(zip(j.sizes, (w * 100 for w in j.size_weights)))}, iodepth={j.iodepth}, numjobs={count}",
                )
            )
    rows.append(("I/Os kept in flight", f"{model.outstanding:,} ({'NVMe' if model.protocol == 'nvme' else 'SCSI'})"))
    # paths: one row per host, array and kind of path
    groups: dict[tuple[Any, ...], list[Any]] = defaultdict(list)
    for c in model.controllers:
        key = (c.host, c.array, c.one_way_latency.describe(), c.bandwidth, round((c.extra - _switch_latency(model, c.links)) / US_PER_KM, 6), c.links)
        groups[key].append(c)
    # every LUN's state over each nexus (a dual-controller array's nexus is AO for the LUNs its controller owns)
    alua: dict[int, set[str]] = defaultdict(set)
    for p in model.paths:
        alua[p.controller].add(p.alua)
    for (h, a, latency, bw, km, links), cs in groups.items():
        states = _in_order(set().union(*(alua.get(c.index) or {"AO"} for c in cs)))
        names = cs[0].name if len(cs) == 1 else f"{cs[0].name} {'and' if len(cs) == 2 else '…'} {cs[-1].name}"
        value = (
            f"{len(cs)} path{'s' if len(cs) > 1 else ''} ({names}), one way {latency}"
            + (f" + {km:g} km" if km else "")
            + f", {_bandwidth(bw)}, {'/'.join(states)} at start"
            + (f", via {_route(model, links)}" if links else "")
        )
        rows.append((f"paths {model.hosts[h]} → {model.arrays[a].name}", value))
    for a in model.arrays:
        rows.append((f"array {a.name}", f"service read {a.read_service.describe()}, write {a.write_service.describe()}, concurrency {a.concurrency}"))
    rep = model.replication
    if rep is not None:
        a, b = (model.arrays[i].name for i in rep.arrays)
        km = rep.extra / US_PER_KM
        rows.append(
            (
                f"replication {a} ↔ {b}",
                f"synchronous, one way {rep.one_way_latency.describe()}"
                + (f" + {km:g} km" if km else "")
                + f", {_bandwidth(rep.bandwidth)}"
                + (f", {rep.loss_ppm:g} ppm lost" if rep.loss_ppm else ""),
            )
        )
    for h in model.host_params:
        pref = ""
        if config is not None:
            hc = next((x for x in config.hosts if x.name == h.name), None)
            if hc is not None and hc.preferred_array:
                pref = f", preferred array {hc.preferred_array}"
        rows.append((f"host {h.name}", f"detection {_t(h.detection)}, APD timeout {_t(h.apd_timeout)}, I/O timeout {_t(h.io_timeout)}{pref}"))
    # a policy run with a preferred array of its own starts from other ALUA states: say so for each run
    if len({tuple(p.alua for p in r.model.paths) for r in runs}) > 1:
        for r in runs:
            states = _in_order({p.alua for p in r.model.paths})
            rows.append((f"paths for {r.label}", ", ".join(f"{sum(p.alua == s for p in r.model.paths)} {s}" for s in states)))
    faults = [f for f in model.faults if not f.revert]
    if faults:
        when = (
            f"at {format_duration(faults[0].at)}"
            if faults[0].at == faults[-1].at
            else f"from {format_duration(faults[0].at)} to {format_duration(faults[-1].at)}"
        )
        rows.append(("faults", f"{len(faults)}, {when}"))
    ramp = f"after a {format_duration(model.ramp)} ramp" if model.ramp > 0 else "from the start (no ramp)"
    rows.append(("measured", f"{format_duration(model.duration)} {ramp}, interval {format_duration(model.interval)}, seed {model.seed}"))
    return rows
