"""Where the set-up drawing puts everything, before anything is drawn: the numbers each run carried over each nexus
and link, the columns (hosts, adapters, switches, target ports, arrays) and their nodes' heights, a slot per line in
each switch's box, and every line's points and the links labelled on its way."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..result import Result
from ..run import RunResult
from .compact import COMPACT_HOSTS, DrawnLine, group_lines, target_key
from .nexus import Nexus, controller_of, nexuses

__all__ = ["Drawing", "lay_out", "X_HOST", "X_ADAPTER", "SWITCH_W"]

X_HOST, X_ADAPTER = 0.0, 1.0  # the columns' x, in column units
SWITCH_W = 0.4  # a switch box's width, in column units


@dataclass
class Drawing:
    """Everything the figure needs, laid out: the runs and their numbers, the lines, the columns and points."""

    runs: list[RunResult]
    start: int  # the run drawn first (``policy``)
    model: Any
    nx: list[Nexus]
    compact: bool
    volume_of: list[str]  # per device path, its LUN's volume
    volumes: list[str]
    # per run: I/Os, share, mean latency (ms), ALUA per path, and I/Os for non-AO LUNs of every nexus
    ios_of: list[dict[int, int]]
    share_of: list[dict[int, float]]
    lat_of: list[dict[int, float]]
    states_of: list[dict[int, dict[int, str]]]
    off_ao: list[dict[int, int]]
    host_key: dict[str, tuple[str, ...]]
    host_label: dict[tuple[str, ...], str]
    drawn: list[DrawnLine]
    several_hosts: bool
    # the columns' nodes and their heights
    hosts: list[tuple[str, ...]]
    adapters: list[tuple[str, ...]]
    arrays: list[tuple[str]]
    targets: list[tuple[str, ...]]
    ctl_of: dict[tuple[str, ...], str]
    y_host: dict[tuple[str, ...], float]
    y_adapter: dict[tuple[str, ...], float]
    y_array: dict[tuple[str, ...], float]
    y_target: dict[tuple[str, ...], float]
    n_cols: int  # switch columns
    x_switch: dict[str, float]
    X_TARGET: float
    X_ARRAY: float
    slot: dict[tuple[str, int], float]
    box: dict[str, tuple[float, float]]
    # per run: busy and held share per link name
    link_stats: list[dict[str, tuple[float, float]]]
    # each line's points; the links of each labelled segment, where its label goes; each ISL's spans
    points: list[tuple[list[float | None], list[float | None]]]
    seg_links: dict[tuple[Any, ...], set[int]]
    seg_at: dict[tuple[Any, ...], tuple[float, float]]
    isl_spans: dict[tuple[str, ...], list[tuple[float, float, float, float]]]


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


def _carried(
    runs: list[RunResult], nx: list[Nexus]
) -> tuple[list[dict[int, int]], list[dict[int, float]], list[dict[int, float]], list[dict[int, dict[int, str]]], list[dict[int, int]]]:
    """Per run: I/Os, share, latency and ALUA per LUN of every nexus, and the I/Os it carried for its non-AO LUNs."""
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
    return ios_of, share_of, lat_of, states_of, off_ao


def _switch_slots(
    drawn: list[DrawnLine],
    switch_names: list[str],
    depth: dict[str, int],
    n_cols: int,
    start_y: Callable[[DrawnLine], float],
    y_target: dict[tuple[str, ...], float],
) -> tuple[dict[tuple[str, int], float], dict[str, tuple[float, float]]]:
    """Each switch is a box whose height holds a slot per line crossing it, ordered as the lines arrive: the slots, the boxes."""
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
    return slot, box


def _link_stats(runs: list[RunResult]) -> list[dict[str, tuple[float, float]]]:
    """Links: busy and held per run (the wire table's rows, the busier direction)."""
    link_stats: list[dict[str, tuple[float, float]]] = []
    for r in runs:
        stats: dict[str, tuple[float, float]] = {}
        for row in r.links():
            bz, hz = stats.get(row["name"], (0.0, 0.0))
            stats[row["name"]] = (max(bz, row["utilisation"]), max(hz, row.get("held", 0.0)))
        link_stats.append(stats)
    return link_stats


def _routes(
    drawn: list[DrawnLine],
    x_switch: dict[str, float],
    slot: dict[tuple[str, int], float],
    box: dict[str, tuple[float, float]],
    start_y: Callable[[DrawnLine], float],
    X_TARGET: float,
    y_target: dict[tuple[str, ...], float],
) -> tuple[
    list[tuple[list[float | None], list[float | None]]],
    dict[tuple[Any, ...], set[int]],
    dict[tuple[Any, ...], tuple[float, float]],
    dict[tuple[str, ...], list[tuple[float, float, float, float]]],
]:
    """The line's points; where each of its links is labelled (beside the adapter, beside the target port, on the ISL)
    and the links of each labelled segment; the spans each ISL's band covers."""
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
                    isl_spans[tuple(sorted(sw[k - 1 : k + 1]))].append((xs[-1] or 0.0, ys[-1] or 0.0, xk - SWITCH_W / 2, y))
                xs.append(xk - SWITCH_W / 2)
                ys.append(y)
            if next_same:  # an ISL within a column (peer switches): across the box, down (or up) to the other's slot
                pair = tuple(sorted(sw[k : k + 2]))
                off = xk + SWITCH_W * (0.35 - 0.7 * isl_rank[(pair, i)])
                y2 = slot[(sw[k + 1], i)]
                isl_spans[pair].append((off, y, off, y2))
                xs += [off, off]
                ys += [y, y2]
            else:
                xs.append(xk + SWITCH_W / 2)
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
    return points, seg_links, seg_at, isl_spans


def lay_out(result: Result | RunResult, *, policy: str | None = None, compact: bool | None = None) -> Drawing:
    """The set-up laid out for :func:`~pathsel.results.topology.figure.topology` (its arguments, its errors)."""
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

    volume_of = [model.devices[p.device].volume if model.devices and p.device >= 0 else "" for p in model.paths]
    volumes = list(dict.fromkeys(volume_of))

    # per run: I/Os, share, latency and ALUA per LUN of every nexus
    ios_of, share_of, lat_of, states_of, off_ao = _carried(runs, nx)

    # the lines: a nexus each, or (compact) hosts wired alike as one, the ports of one controller as one node
    host_key, host_label, drawn = group_lines(model, nx, compact, volume_of, states_of, ios_of, start)
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
    ctl_of = {target_key(model, n, compact): controller_of(model, n) for n in nx}
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
    x_switch = {s: X_ADAPTER + 1.3 * (d + 1) for s, d in depth.items()}
    X_TARGET = 2.6 + 1.3 * n_cols
    X_ARRAY = X_TARGET + 1.0

    def start_y(ln: DrawnLine) -> float:
        return y_adapter[ln.adapter] if ln.adapter else y_host[ln.host]

    slot, box = _switch_slots(drawn, switch_names, depth, n_cols, start_y, y_target)

    link_stats = _link_stats(runs)

    points, seg_links, seg_at, isl_spans = _routes(drawn, x_switch, slot, box, start_y, X_TARGET, y_target)

    return Drawing(
        runs=runs,
        start=start,
        model=model,
        nx=nx,
        compact=compact,
        volume_of=volume_of,
        volumes=volumes,
        ios_of=ios_of,
        share_of=share_of,
        lat_of=lat_of,
        states_of=states_of,
        off_ao=off_ao,
        host_key=host_key,
        host_label=host_label,
        drawn=drawn,
        several_hosts=several_hosts,
        hosts=hosts,
        adapters=adapters,
        arrays=arrays,
        targets=targets,
        ctl_of=ctl_of,
        y_host=y_host,
        y_adapter=y_adapter,
        y_array=y_array,
        y_target=y_target,
        n_cols=n_cols,
        x_switch=x_switch,
        X_TARGET=X_TARGET,
        X_ARRAY=X_ARRAY,
        slot=slot,
        box=box,
        link_stats=link_stats,
        points=points,
        seg_links=seg_links,
        seg_at=seg_at,
        isl_spans=isl_spans,
    )
