"""The set-up, drawn: hosts, adapters, paths, target ports, arrays and replication, and its key figures.

:func:`topology` draws the scenario as a plotly figure, left to right: hosts,
their adapters (initiator ports), the paths (one line per I-T nexus), the
target ports and the arrays, with the replication link between arrays. A
path's colour is its ALUA state at the start of the run; its width is the
share of I/Os a policy sent down it (buttons switch the policy); a path
that carried nothing is dotted.

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


def _column(names: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], float]:
    """Evenly spread y positions (1 at the top) for a column's nodes, in the order given."""
    n = len(names)
    return {k: 1.0 - (i + 0.5) / n for i, k in enumerate(names)}


def _width(share: float) -> float:
    # area reads as amount: the square root keeps 20 equal paths visible beside one busy one
    return 0.8 + 11.0 * math.sqrt(max(share, 0.0))


def topology(result: Result | RunResult, *, policy: str | None = None) -> go.Figure:
    """The set-up as a figure: hosts, adapters, paths (one line per nexus), target ports, arrays, replication.

    Paths are coloured by ALUA state at the start of the run (AO green, ANO
    orange, standby purple, unavailable grey) and as wide as the share of
    I/Os ``policy`` (a label or spec; default the first run) sent down them;
    buttons above the figure switch the policy. Hover a path for its share,
    IOPS and latency per policy. Traces: ``"path <name>"`` per nexus (``x``:
    adapter to target port), ``"hosts"``, ``"adapters"``, ``"target ports"``,
    ``"arrays"``, ``"replication"`` when there is one, and one legend entry
    per ALUA state drawn.
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
    several_hosts = len(model.hosts) > 1

    # columns, grouped so lines cross as little as the set-up allows: by host, then array
    hosts = [(h,) for h in model.hosts if any(n.host == h for n in nx)] or [(h,) for h in model.hosts]
    adapters = list(dict.fromkeys((n.host, n.adapter) for n in sorted(nx, key=lambda n: model.hosts.index(n.host))))
    arrays = [(a.name,) for a in model.arrays]
    array_order = {a.name: i for i, a in enumerate(model.arrays)}
    targets = list(dict.fromkeys((n.array, n.target) for n in sorted(nx, key=lambda n: array_order[n.array])))
    y_host, y_adapter, y_target, y_array = _column(hosts), _column(adapters), _column(targets), _column(arrays)
    X_HOST, X_ADAPTER, X_TARGET, X_ARRAY = 0.0, 1.0, 2.6, 3.6

    # shares, IOPS and latency per run and nexus (a nexus carries every volume's path over it)
    shares, hover, colors = [], [], []
    for r in runs:
        # a policy with a preferred array of its own starts with other ALUA states
        colors.append([ALUA_COLORS.get(r.model.paths[n.paths[0]].alua if n.paths else "AO", "#7f7f7f") for n in nx])
        rows = r.paths()
        by_nexus: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for p, row in zip(r.model.paths, rows):
            by_nexus[p.controller].append(row)
        shares.append([sum(x["share"] for x in by_nexus[n.index]) for n in nx])
        hover.append(by_nexus)

    def path_text(n: Nexus) -> str:
        lines = [f"<b>{n.name}</b>" + (f" ({n.host})" if several_hosts else ""), f"{n.adapter or n.host} → {n.target} → {n.array}, {n.alua} at start"]
        for r, by_nexus in zip(runs, hover):
            rows = by_nexus[n.index]
            ios = sum(x["ios"] for x in rows)
            share = sum(x["share"] for x in rows)
            mean = (sum(x["latency_us"]["mean"] * x["ios"] for x in rows) / ios / 1e3) if ios else math.nan
            lat = f", {mean:.2f} ms mean" if ios else ""
            lines.append(f"{r.label}: {share:.1%} of I/Os, {ios / r.duration:,.0f} IOPS{lat}")
        return "<br>".join(lines)

    fig = go.Figure()
    # the fixed wiring first, beneath the paths: host to adapter, target port to array
    wx: list[float | None] = []
    wy: list[float | None] = []
    for host, adapter in adapters:
        if adapter:
            wx += [X_HOST, X_ADAPTER, None]
            wy += [y_host[(host,)], y_adapter[(host, adapter)], None]
    for array, target in targets:
        wx += [X_TARGET, X_ARRAY, None]
        wy += [y_target[(array, target)], y_array[(array,)], None]
    fig.add_trace(go.Scatter(x=wx, y=wy, mode="lines", line=dict(color="#bbb", width=1.5), hoverinfo="skip", showlegend=False, name="wiring"))
    for n, share, color in zip(nx, shares[start], colors[start]):
        x0 = X_ADAPTER if n.adapter else X_HOST
        y0 = y_adapter[(n.host, n.adapter)] if n.adapter else y_host[(n.host,)]
        fig.add_trace(
            go.Scatter(
                x=[x0, X_TARGET],
                y=[y0, y_target[(n.array, n.target)]],
                mode="lines",
                name=f"path {n.name}",
                line=dict(color=color, width=_width(share), dash="solid" if share > 0 else "dot"),
                hovertemplate=path_text(n) + "<extra></extra>",
                showlegend=False,
                legendgroup=n.alua,
            )
        )
    n_path_traces = len(nx)
    first_path_trace = 1

    def nodes(
        name: str, xs: float, ys: dict[tuple[str, ...], float], labels: list[str], symbol: str, size: int, color: str, position: str, show_text: bool
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
                hovertext=labels,
                hoverinfo="text",
                showlegend=False,
            )
        )

    nodes("hosts", X_HOST, y_host, [h[0] for h in hosts], "square", 22, "#1f77b4", "middle left", True)
    if any(a for _, a in adapters):
        nodes("adapters", X_ADAPTER, y_adapter, [a or h for h, a in adapters], "circle", 12, "#aec7e8", "top center", len(adapters) <= _LABELS_UP_TO)
    nodes("target ports", X_TARGET, y_target, [t for _, t in targets], "diamond", 10, "#c7c7c7", "middle right", False)
    if len(targets) <= _LABELS_UP_TO:  # on a white ground, so the wiring does not run through the names
        for (array, target), y in y_target.items():
            fig.add_annotation(
                x=X_TARGET,
                y=y,
                text=target,
                showarrow=False,
                xanchor="left",
                xshift=9,
                font=dict(size=11),
                bgcolor="rgba(255,255,255,0.85)",
                borderpad=1,
            )
    nodes("arrays", X_ARRAY, y_array, [a[0] for a in arrays], "square", 26, "#8c564b", "middle right", True)

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

    # the legend: one entry per ALUA state drawn, and what dotted means
    drawn = _in_order({r.model.paths[i].alua for r in runs for n in nx for i in n.paths[:1]})
    for state in drawn:
        fig.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="lines", name=f"{state} path", line=dict(color=ALUA_COLORS.get(state, "#7f7f7f"), width=4), legendgroup=state
            )
        )
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="no I/O", line=dict(color="#999", width=2, dash="dot")))

    for x, title in ((X_HOST, "host"), (X_ADAPTER, "adapter"), (X_TARGET, "target port"), (X_ARRAY, "array")):
        if title == "adapter" and not any(a for _, a in adapters):
            continue
        fig.add_annotation(x=x, y=1.06, text=f"<b>{title}</b>", showarrow=False, font=dict(size=12, color="#555"))

    tallest = max(len(hosts), len(adapters), len(targets), len(arrays))
    height = int(max(420, min(1600, 160 + 22 * tallest)))
    top, bottom = 130, 20
    if len(runs) > 1:
        indices = list(range(first_path_trace, first_path_trace + n_path_traces))
        buttons = [
            dict(
                label=r.label,
                method="restyle",
                args=[
                    {
                        "line.width": [_width(s) for s in shares[i]],
                        "line.color": colors[i],
                        "line.dash": ["solid" if s > 0 else "dot" for s in shares[i]],
                    },
                    indices,
                ],
            )
            for i, r in enumerate(runs)
        ]
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
    name = result.scenario if isinstance(result, Result) else first.model.name
    fig.update_layout(
        title=dict(
            text=f"The set-up: line width = share of I/Os{' (buttons: policy)' if len(runs) > 1 else ''}<br><sup>{name}</sup>",
            y=1,
            yanchor="top",
            pad=dict(t=14),
        ),
        xaxis=dict(visible=False, range=[-0.75, X_ARRAY + 1.6]),
        yaxis=dict(visible=False, range=[-0.04, 1.1]),
        height=height,
        margin=dict(t=top, l=20, r=20, b=bottom),
        plot_bgcolor="white",
        hovermode="closest",
        legend=dict(orientation="h", y=-0.02, yanchor="top", x=0),
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
    alua = {p.controller: p.alua for p in model.paths}
    for (h, a, latency, bw, km, links), cs in groups.items():
        states = _in_order({alua.get(c.index, "AO") for c in cs})
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
