"""The set-up as one plotly figure: :func:`topology` lays the run out (:mod:`.layout`) and draws it left to right,
the fixed wiring and the array side (:mod:`.arrays`), the fabric (:mod:`.fabric`), the paths (:mod:`.paths`), the
hosts and adapters, the legend, the columns' titles and a button per policy."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from ..result import Result
from ..run import RunResult
from .arrays import controller_boxes, draw_arrays, draw_controllers, draw_replication, draw_target_ports, draw_wiring
from .fabric import draw_isls, draw_links, draw_switch_boxes, draw_switch_names, link_segments, link_texts
from .layout import X_ADAPTER, X_HOST, Drawing, lay_out
from .paths import draw_paths, style
from .style import ALUA_COLORS, LABELS_UP_TO, alua_order, node_column, pct

__all__ = ["topology"]


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
    d = lay_out(result, policy=policy, compact=compact)
    runs, start, model, nx, compact = d.runs, d.start, d.model, d.nx, d.compact
    hosts, adapters, arrays, targets, box, slot = d.hosts, d.adapters, d.arrays, d.targets, d.box, d.slot
    host_key, host_label, link_stats = d.host_key, d.host_label, d.link_stats
    first = runs[0]

    fig = go.Figure()
    shapes: list[dict[str, Any]] = []
    ctl_box = controller_boxes(d)
    draw_wiring(fig, d, ctl_box)
    draw_controllers(fig, shapes, d, ctl_box)
    draw_switch_boxes(shapes, d)
    draw_isls(fig, d)

    first_path_trace = len(fig.data)
    striped = draw_paths(fig, d)

    node_column(fig, "hosts", X_HOST, d.y_host, [host_label.get(h, h[0]) for h in hosts], "square", 22, "#1f77b4", "middle left", True)
    if adapters:

        def adapter_hover(a: tuple[str, ...]) -> str:
            # the [[links]] shorthand: the shared links a nexus crosses stand for its adapter, busy as the wire table says
            names = [model.links[k].name for n in nx if n.adapter == a[-1] and host_key[n.host] == a[:-1] for k in model.controllers[n.index].links]
            busy = [f"{x}: {pct(link_stats[start][x][0])} busy" for x in dict.fromkeys(names) if x in link_stats[start]]
            return "<br>".join([a[-1], *busy[:6]])

        node_column(
            fig,
            "adapters",
            X_ADAPTER,
            d.y_adapter,
            [a[-1] for a in adapters],
            "circle",
            12,
            "#aec7e8",
            "top center",
            len(adapters) <= LABELS_UP_TO,
            hover=[adapter_hover(a) for a in adapters],
        )
    draw_switch_names(fig, d)
    draw_target_ports(fig, d)
    draw_arrays(fig, d)
    draw_replication(fig, d)

    # the links: a marker on each (its segment's middle; an ISL's band), named with its busy and held shares
    segs = link_segments(d)
    link_index = len(fig.data) if segs else None
    draw_links(fig, d, segs)

    _legend(fig, d, striped)
    _column_titles(fig, d, ctl_box)

    tallest = max(len(hosts), len(adapters), len(targets) + len(ctl_box), len(arrays), (len(slot) + 3 * len(box)) * 0.75)
    height = int(max(420, min(1600, 180 + 24 * tallest)))
    top, bottom = 130, 20
    if len(runs) > 1:  # the buttons 40 px above the plot, under the title, whatever the figure's height
        _policy_buttons(fig, d, first_path_trace, striped, segs, link_index, y=1 + 40 / (height - top - bottom))
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
        xaxis=dict(visible=False, range=[-max(0.75, 0.2 + 0.05 * longest), d.X_ARRAY + 1.6]),
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


def _legend(fig: go.Figure, d: Drawing, striped: list[int]) -> None:
    """The legend: one entry per ALUA state drawn, striped, and what dotted means."""
    runs, nx = d.runs, d.nx
    shown_states = alua_order({s for j in range(len(runs)) for n in nx for s in d.states_of[j][n.index].values()})
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


def _column_titles(fig: go.Figure, d: Drawing, ctl_box: dict[tuple[str, str], tuple[float, float]]) -> None:
    """Each column's title above it."""
    compact, adapters = d.compact, d.adapters
    X_TARGET, X_ARRAY = d.X_TARGET, d.X_ARRAY
    titles = [(X_HOST, "hosts wired alike" if compact else "host"), (X_ADAPTER, "adapter")]
    titles += [(X_ADAPTER + 1.3 * (k + 1), "switches" if k == 0 else "core") for k in range(d.n_cols)]
    titles += [(X_TARGET, "target ports by controller" if ctl_box else "target port"), (X_ARRAY, "array")]
    for x, title in titles:
        if title == "adapter" and not adapters:
            continue
        fig.add_annotation(x=x, y=1.1, text=f"<b>{title}</b>", showarrow=False, font=dict(size=12, color="#555"))


def _policy_buttons(
    fig: go.Figure, d: Drawing, first_path_trace: int, striped: list[int], segs: list[tuple[Any, ...]], link_index: int | None, y: float
) -> None:
    """A button per policy restyling the lines and the links as that run found them, at ``y`` (in plot heights)."""
    runs, drawn, start = d.runs, d.drawn, d.start
    indices = list(range(first_path_trace, first_path_trace + len(drawn) + len(striped)))
    buttons = []
    for j, r in enumerate(runs):
        lw, lc, ld, sw_, sc_, sd_ = style(d, j)
        restyle: dict[str, list[Any]] = {
            "line.width": [*lw, *(sw_[i] for i in striped)],
            "line.color": [*lc, *(sc_[i] for i in striped)],
            "line.dash": [*ld, *(sd_[i] for i in striped)],
        }
        if link_index is not None:
            texts, colors = link_texts(d, segs, j)
            restyle = {k: v + [None] for k, v in restyle.items()} | {
                "text": [None] * len(indices) + [texts],
                "marker.color": [None] * len(indices) + [colors],
            }
        buttons.append(dict(label=r.label, method="restyle", args=[restyle, indices + ([link_index] if link_index is not None else [])]))
    fig.update_layout(
        updatemenus=[
            dict(
                type="buttons",
                direction="right",
                buttons=buttons,
                active=start,
                x=0,
                xanchor="left",
                y=y,
                yanchor="bottom",
                showactive=True,
                font=dict(size=11),
            )
        ]
    )
