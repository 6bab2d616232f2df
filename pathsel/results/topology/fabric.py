"""The fabric in the set-up drawing: a box per switch (a slot per line crossing it), a band per ISL coloured by how
busy or held it was, the switches' names, and a marker on each link named with its busy and held shares.

The wire table these shares come from is :mod:`pathsel.results.fabric`; the fabric itself, :mod:`pathsel.model.fabric`.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from .layout import SWITCH_W, Drawing
from .style import heat_color, pct

__all__ = ["draw_switch_boxes", "draw_isls", "draw_switch_names", "link_segments", "link_texts", "draw_links"]

_LINK_LABELS_UP_TO = 16  # links named on the figure; past it only ISLs and the busy or held ones (hover names every one)
_HOT_LINK = 0.5  # busy or held share from which a link is named whatever their number


def draw_switch_boxes(shapes: list[dict[str, Any]], d: Drawing) -> None:
    """Switches: a box each, the lines crossing it at a slot of their own."""
    for s, (lo, hi) in d.box.items():
        shapes.append(
            dict(
                type="rect",
                layer="below",
                x0=d.x_switch[s] - SWITCH_W / 2,
                x1=d.x_switch[s] + SWITCH_W / 2,
                y0=lo,
                y1=hi,
                line=dict(color="#444", width=1.5),
                fillcolor="#e8eef5",
            )
        )


def draw_isls(fig: go.Figure, d: Drawing) -> None:
    """ISLs: a band joining the two switches, coloured by how busy (or held) it is; its label goes beside it (where,
    into ``d.seg_at``)."""
    model, seg_links, seg_at, link_stats, start, x_switch, box = d.model, d.seg_links, d.seg_at, d.link_stats, d.start, d.x_switch, d.box
    for pair, spans in d.isl_spans.items():
        seg = ("isl", *pair)
        names = sorted({model.links[k].name for k in seg_links.get(seg, set())}) or ["–".join(pair)]
        busy, held = (max((link_stats[start].get(n_, (0.0, 0.0))[j] for n_ in names), default=0.0) for j in (0, 1))
        xa, xb = x_switch[pair[0]], x_switch[pair[1]]
        if xa == xb:  # peers in one column: the gap between their boxes
            (lo_a, hi_a), (lo_b, hi_b) = box[pair[0]], box[pair[1]]
            y0, y1 = (hi_b, lo_a) if lo_a > hi_b else (hi_a, lo_b)
            x0, x1 = xa - SWITCH_W * 0.38, xa + SWITCH_W * 0.38
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
        hot = heat_color(max(busy, held))
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


def draw_switch_names(fig: go.Figure, d: Drawing) -> None:
    """Each switch's name at its box's top left, and on hover how many lines cross it."""
    box, x_switch, drawn = d.box, d.x_switch, d.drawn
    if box:
        fig.add_trace(
            go.Scatter(
                x=[x_switch[s] - SWITCH_W / 2 for s in box],  # left of the box's top: the gap above it may hold an ISL's band
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


def link_segments(d: Drawing) -> list[tuple[Any, ...]]:
    """The segments with links to label, in the order their markers are drawn."""
    return [s for s in d.seg_at if d.seg_links.get(s)]


def _link_words(d: Drawing, seg: tuple[Any, ...], run: int) -> tuple[str, str, float]:
    model, seg_links, link_stats = d.model, d.seg_links, d.link_stats
    names = sorted(model.links[k].name for k in seg_links[seg])
    stats = [link_stats[run].get(n_, (0.0, 0.0)) for n_ in names]
    busy, held = max(b for b, _ in stats), max(h for _, h in stats)
    who = names[0] if len(names) == 1 else f"{len(names)} links"
    up = "" if len(names) == 1 else "up to "
    return who, f"{up}{pct(busy)} busy" + (f", {pct(held)} held" if held >= 0.005 else ""), max(busy, held)


def link_texts(d: Drawing, segs: list[tuple[Any, ...]], run: int) -> tuple[list[str], list[str]]:
    """Run ``run``'s label and colour for each link marker (a policy's button restyles them)."""
    texts, colors = [], []
    for seg in segs:
        who, words, hot = _link_words(d, seg, run)
        named = len(segs) <= _LINK_LABELS_UP_TO or seg[0] == "isl" or hot >= _HOT_LINK
        texts.append(f"{who}<br>{words}" if named else "")
        colors.append(heat_color(hot))
    return texts, colors


def draw_links(fig: go.Figure, d: Drawing, segs: list[tuple[Any, ...]]) -> None:
    """The links: a marker on each (its segment's middle; an ISL's band), named with its busy and held shares."""
    model, seg_at, seg_links, runs, start, x_switch = d.model, d.seg_at, d.seg_links, d.runs, d.start, d.x_switch
    if segs:
        # beside the adapter (its port's link), beside the target port (the array port's), right of an ISL's band
        xs_l = [seg_at[g][0] + (0.05 if g[0] != "isl" else 0.0) for g in segs]
        ys_l = [seg_at[g][1] - (0.015 if g[0] != "isl" else 0.0) for g in segs]
        texts, colors = link_texts(d, segs, start)
        hover = [
            "<br>".join(
                [f"<b>{', '.join(sorted(model.links[k].name for k in seg_links[g]))}</b>"]
                + [f"{r.label}: {_link_words(d, g, j)[1]}" for j, r in enumerate(runs)]
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
