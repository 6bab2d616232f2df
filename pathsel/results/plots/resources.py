"""What the resources were doing (issue 33): each host core's utilisation (:func:`cpu_heatmap`) and each wire's
utilisation and back-pressure per direction (:func:`link_utilisation`, its rows :func:`wire_rows`)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import Result, RunResult
from .common import figure_title, policy_color, runs_of

__all__ = ["cpu_heatmap", "wire_rows", "link_utilisation"]


def cpu_heatmap(result: Result | RunResult) -> go.Figure:
    """Each core's utilisation (esxtop's %USED, in %) of every host with a ``cpu`` table: one heatmap per host, a row
    per policy and a column per core, the cores in NUMA node order with a line between nodes.

    Traces: ``"<host>"``, ``z`` policies x cores in % (the same numbers as ``result.cpus()``); an empty figure
    when no host has a cpu table. A core whose submissions or interrupts pile up on it shows as a hot column.
    """
    from ..cpu import cpu_rows, cpulist

    runs = runs_of(result)
    per: dict[str, dict[str, dict[int, tuple[int, float]]]] = {}  # host -> policy -> core -> (node, utilisation)
    for r in runs:
        for c in cpu_rows(r):
            per.setdefault(c["host"], {}).setdefault(r.label, {})[c["core"]] = (c["node"], c["utilisation"])
    hosts = list(per)
    # in pixels: a panel per host as tall as its policies, and room between panels for the axis title and the next title
    panel = [40 + 32 * len(per[h]) for h in hosts] or [40]
    gap = 100
    plot_px = sum(panel) + gap * (len(panel) - 1)
    fig = make_subplots(
        rows=len(panel),
        cols=1,
        subplot_titles=[f"{h}: {len(next(iter(per[h].values())))} cores" for h in hosts] or None,
        vertical_spacing=gap / plot_px if len(panel) > 1 else 0.0,
        row_heights=panel,
    )
    for row, h in enumerate(hosts, start=1):
        labels = [r.label for r in runs if r.label in per[h]]
        any_run = per[h][labels[0]]
        cores = sorted(any_run, key=lambda k: (any_run[k][0], k))  # by node, then number
        nodes = [any_run[k][0] for k in cores]
        z = [[100 * per[h][label][k][1] for k in cores] for label in labels]
        custom = [[nodes[i]] * 1 for i in range(len(cores))]
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=[str(k) for k in cores],
                y=labels,
                coloraxis="coloraxis",
                customdata=[custom for _ in labels],
                text=[[f"{v:.0f}" for v in zr] for zr in z] if len(cores) <= 24 else None,
                texttemplate="%{text}" if len(cores) <= 24 else None,
                xgap=1,
                ygap=2,
                name=h,
                hovertemplate="%{y}<br>" + h + " core %{x} (node %{customdata[0]})<br>%{z:.1f} % busy<extra></extra>",
            ),
            row=row,
            col=1,
        )
        bounds = [i for i in range(1, len(cores)) if nodes[i] != nodes[i - 1]]
        axis = "" if row == 1 else str(row)
        for i in bounds:  # a line between NUMA nodes
            fig.add_shape(
                type="line", x0=i - 0.5, x1=i - 0.5, xref=f"x{axis}", y0=-0.1, y1=1.1, yref=f"y{axis} domain", line=dict(color="black", width=2)
            )
        spans = [f"node {n}: {cpulist([k for k, m in zip(cores, nodes) if m == n])}" for n in dict.fromkeys(nodes)]
        fig.update_xaxes(
            type="category",
            title_text=("core (" + " | ".join(spans) + ")") if len(set(nodes)) > 1 else "core",
            tickangle=0,
            nticks=min(len(cores), 32),
            row=row,
            col=1,
        )
        fig.update_yaxes(type="category", automargin=True, row=row, col=1)
    fig.update_layout(
        title=figure_title(result, "Host CPU: each core's utilisation (%USED, measured window)"),
        coloraxis=dict(
            colorscale="YlOrRd",
            cmin=0,
            cmax=100,
            colorbar=dict(title="%USED", ticksuffix=" %", lenmode="pixels", len=min(240, plot_px), y=1, yanchor="top"),
        ),
        height=plot_px + 110 + 70,
        margin=dict(t=110, b=70),
    )
    return fig


_DIRECTION = {"to_array": "→ array", "to_host": "→ host"}


def wire_rows(r: RunResult) -> list[dict[str, Any]]:
    """``r.links()``, a path's own wire named ``host/path`` when the run has several hosts (their paths' names repeat:
    sda on every Linux host). The rows are those of links(): each wire and direction that carried a frame, in order."""
    m, model = r.metrics, r.model
    rows = r.links()
    if len(model.hosts) < 2:
        return rows
    carried = [(w, d) for w in range(m.n_wires) for d in range(2) if int(m.wire_frames[w, d]) != 0]  # as links() skips
    nc = len(model.controllers)
    return [{**row, "name": f"{model.hosts[model.controllers[w].host]}/{row['name']}"} if w < nc else row for (w, _d), row in zip(carried, rows)]


def link_utilisation(result: Result | RunResult, *, top: int = 24) -> go.Figure:
    """Each wire's utilisation per direction, as horizontal bars, one colour per policy (traces ``"<label>"``); with a
    fabric, the share of the window back-pressure held it (slow drain behind it) as a hatched bar over the policy's
    own (``"<label>: held"``, only for a policy with some).

    The same rows as ``result.links()``: a shared link, an ISL or switch port link, and with framing each path's own
    wire. A wire near 100 % limits what crosses it; a held one waited for the next link to drain. Past ``top`` wire
    directions only the ``top`` busiest (or most held) are drawn, in their order, and the title says so.
    """
    runs = runs_of(result)
    per = [(r, wire_rows(r)) for r in runs]

    def key(w: dict[str, Any]) -> str:
        return f"{w['name']} ({w['kind']}) {_DIRECTION.get(w['direction'], w['direction'])}"

    peak: dict[str, float] = {}
    for _r, rows in per:
        for w in rows:
            peak[key(w)] = max(peak.get(key(w), 0.0), w["utilisation"], w.get("held", 0.0))
    names = list(peak)
    if len(names) > top:
        keep = set(sorted(names, key=lambda n: -peak[n])[:top])
        names = [n for n in names if n in keep]
    fig = go.Figure()
    fabric = False
    for i, (r, rows) in enumerate(per):
        rows = [w for w in rows if key(w) in names]
        y = [key(w) for w in rows]
        fig.add_trace(
            go.Bar(
                x=[100 * w["utilisation"] for w in rows],
                y=y,
                orientation="h",
                name=r.label,
                legendgroup=r.label,
                offsetgroup=r.label,
                marker_color=policy_color(i),
                hovertemplate="%{y}<br>%{x:.1f} % busy<extra>" + r.label + "</extra>",
            )
        )
        if any(w.get("held", 0.0) > 0.0 for w in rows):
            fabric = True
            fig.add_trace(  # over the policy's own bar (same offsetgroup): hatched, see-through
                go.Bar(
                    x=[100 * w.get("held", 0.0) for w in rows],
                    y=y,
                    orientation="h",
                    name=f"{r.label}: held",
                    legendgroup=r.label,
                    offsetgroup=r.label,
                    marker=dict(color="rgba(0,0,0,0)", line=dict(color="black", width=1), pattern=dict(shape="/", fgcolor="black")),
                    hovertemplate="%{y}<br>held by back-pressure %{x:.1f} % of the window<extra>" + r.label + "</extra>",
                )
            )
    shown = f" (the {len(names)} busiest of {len(peak)})" if len(names) < len(peak) else ""
    fig.update_yaxes(categoryorder="array", categoryarray=names[::-1], automargin=True)
    fig.update_xaxes(title_text="% of the time busy" + ("; hatched: held by back-pressure" if fabric else ""), range=[0, 105])
    plot_px = max(140, len(names) * (10 + 12 * len(runs)))
    fig.update_layout(
        title=figure_title(result, "Wires: utilisation per direction" + (" and back-pressure" if fabric else "") + shown),
        barmode="group",
        bargap=0.25,
        height=plot_px + 100 + 120,
        margin=dict(t=100, b=120),
        legend=dict(orientation="h", y=-75 / plot_px, yanchor="top"),  # below the axis title, in pixels
    )
    return fig
