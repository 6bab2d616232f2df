"""The array side of the set-up drawing: the fixed wiring (host to adapter, target port or its controller's box to
array), target ports boxed by controller (its port groups, the LUNs it owns), the arrays with the link between their
controllers, and the replication link between arrays."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from ...model import US_PER_KM
from .compact import target_key
from .layout import X_ADAPTER, X_HOST, Drawing
from .nexus import controller_of
from .style import LABELS_UP_TO, bandwidth_words, name_list, node_column, pct, shorten

__all__ = ["controller_boxes", "draw_wiring", "draw_controllers", "draw_target_ports", "draw_arrays", "draw_replication"]


def controller_boxes(d: Drawing) -> dict[tuple[str, str], tuple[float, float]]:
    """(array, controller) → the lowest and highest of its target ports' heights."""
    targets, ctl_of, y_target = d.targets, d.ctl_of, d.y_target
    ctl_box: dict[tuple[str, str], tuple[float, float]] = {}
    for t in targets:
        if ctl_of[t]:
            lo, hi = ctl_box.get((t[0], ctl_of[t]), (2.0, -1.0))
            ctl_box[(t[0], ctl_of[t])] = (min(lo, y_target[t]), max(hi, y_target[t]))
    return ctl_box


def _box_right(d: Drawing) -> float:
    return d.X_TARGET + 0.62


def draw_wiring(fig: go.Figure, d: Drawing, ctl_box: dict[tuple[str, str], tuple[float, float]]) -> None:
    """The fixed wiring, first, beneath the paths: host to adapter, target port (or its controller's box) to array."""
    adapters, targets, ctl_of = d.adapters, d.targets, d.ctl_of
    y_host, y_adapter, y_target, y_array = d.y_host, d.y_adapter, d.y_target, d.y_array
    X_TARGET, X_ARRAY = d.X_TARGET, d.X_ARRAY
    wx: list[float | None] = []
    wy: list[float | None] = []
    for adapter in adapters:
        wx += [X_HOST, X_ADAPTER, None]
        wy += [y_host[adapter[:-1]], y_adapter[adapter], None]
    BOX_R = _box_right(d)
    for t in targets:
        if not ctl_of[t]:
            wx += [X_TARGET, X_ARRAY, None]
            wy += [y_target[t], y_array[(t[0],)], None]
    for (an, _c), (lo, hi) in ctl_box.items():
        wx += [BOX_R, X_ARRAY, None]
        wy += [(lo + hi) / 2, y_array[(an,)], None]
    fig.add_trace(go.Scatter(x=wx, y=wy, mode="lines", line=dict(color="#bbb", width=1.5), hoverinfo="skip", showlegend=False, name="wiring"))


def draw_controllers(fig: go.Figure, shapes: list[dict[str, Any]], d: Drawing, ctl_box: dict[tuple[str, str], tuple[float, float]]) -> None:
    """A box round the target ports of each controller, named with its port groups and the LUNs it owns (AO there)."""
    model, nx, volumes, volume_of, states_of, start = d.model, d.nx, d.volumes, d.volume_of, d.states_of, d.start
    X_TARGET, BOX_R = d.X_TARGET, _box_right(d)
    target_unit = 0.92 / max(1, len(d.targets) + 0.8 * (len(ctl_box) - 1))
    for (an, c), (lo, hi) in ctl_box.items():
        groups_ = sorted({model.controllers[n.index].port_group for n in nx if n.array == an and controller_of(model, n) == c} - {""})
        owned = [
            v
            for v in volumes
            if any(
                states_of[start][n.index].get(i) == "AO" and volume_of[i] == v
                for n in nx
                if n.array == an and controller_of(model, n) == c
                for i in n.paths
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
            + (f"<br>AO for {owned[0]}" if len(owned) == 1 else f"<br>AO for {len(owned)} LUNs ({name_list(owned)})" if owned else "")
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


def draw_target_ports(fig: go.Figure, d: Drawing) -> None:
    """The target ports (in the compact form a controller's ports as one node), named on a white ground."""
    model, nx, compact, targets, y_target, X_TARGET = d.model, d.nx, d.compact, d.targets, d.y_target, d.X_TARGET

    def target_label(t: tuple[str, ...]) -> str:
        if not compact:
            return t[-1]
        ports = sorted({n.target for n in nx if target_key(model, n, compact) == t})
        return f"{len(ports)} port{'s' if len(ports) > 1 else ''}" + (f" ({name_list(ports, 2)})" if ports else "")

    node_column(fig, "target ports", X_TARGET, y_target, [target_label(t) for t in targets], "diamond", 10, "#c7c7c7", "middle right", False)
    if len(targets) <= LABELS_UP_TO:  # on a white ground, so the wiring does not run through the names
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


def draw_arrays(fig: go.Figure, d: Drawing) -> None:
    """The arrays, and under each the link between its controllers, busy as the wire table says."""
    model, arrays, y_array, X_ARRAY, link_stats, start = d.model, d.arrays, d.y_array, d.X_ARRAY, d.link_stats, d.start
    node_column(fig, "arrays", X_ARRAY, y_array, [a[0] for a in arrays], "square", 26, "#8c564b", "middle right", True)
    for arr in model.arrays:  # the link between its controllers, busy as the wire table says
        ic = link_stats[start].get(f"{arr.name}:inter-controller")
        if ic is not None:
            fig.add_annotation(
                x=X_ARRAY,
                y=y_array[(arr.name,)],
                yshift=-22,
                text=f"inter-controller {pct(ic[0])} busy",
                showarrow=False,
                font=dict(size=10, color="#8c564b"),
            )


def draw_replication(fig: go.Figure, d: Drawing) -> None:
    """The replication link between the arrays, if any: a dashed bow right of them, its one-way latency named."""
    model, y_array, X_ARRAY = d.model, d.y_array, d.X_ARRAY
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
            + (f", {bandwidth_words(rep.bandwidth)}" if rep.bandwidth else "")
        )
        shown = "<br>".join(
            [
                "<b>replication</b>",
                shorten(f"one way {rep.one_way_latency.describe()}", 30),
                *([f"+ {km:g} km"] if km else []),
                *([bandwidth_words(rep.bandwidth)] if rep.bandwidth else []),
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
