"""The paths in the set-up drawing: one line per nexus (or group of nexuses), coloured by its ALUA state at the start,
striped where it is AO for some LUNs and not for others, as wide as the share of I/Os a policy sent down it, and its
hover words: the route, each policy's share, IOPS and mean latency."""

from __future__ import annotations

from collections import defaultdict

import plotly.graph_objects as go

from .compact import DrawnLine
from .layout import Drawing
from .style import ALUA_COLORS, alua_order, line_width, name_list

__all__ = ["alua_of", "path_text", "style", "draw_paths"]


def alua_of(d: Drawing, ln: DrawnLine, run: int) -> dict[str, list[str]]:
    """ALUA state at the start → the LUNs (volumes) in it, over the line's nexuses."""
    out: dict[str, set[str]] = defaultdict(set)
    for m in ln.members:
        for i, s in d.states_of[run][m.index].items():
            out[s].add(d.volume_of[i])
    order = {v: k for k, v in enumerate(d.volumes)}
    return {s: sorted(out[s], key=lambda v: order[v]) for s in alua_order(set(out))}


def _alua_words(d: Drawing, ln: DrawnLine, run: int) -> str:
    states = alua_of(d, ln, run)
    if len(states) <= 1:
        return f"{next(iter(states), 'AO')} at start"
    total = len({v for vs in states.values() for v in vs})
    return "at start: " + ", ".join(f"{s} for {len(vs)} of {total} LUNs ({name_list(vs)})" for s, vs in states.items())


def path_text(d: Drawing, ln: DrawnLine) -> str:
    """A line's hover: its nexus (or group), its route, and per policy its share, IOPS and mean latency."""
    runs, ios_of, share_of, lat_of, off_ao = d.runs, d.ios_of, d.share_of, d.lat_of, d.off_ao
    n0 = ln.members[0]
    head = (
        f"<b>{n0.name}</b>" + (f" ({n0.host})" if d.several_hosts else "")
        if len(ln.members) == 1
        else f"<b>{ln.name}</b><br>{name_list(sorted({m.host for m in ln.members}))}"
    )
    where = " → ".join([n0.adapter or n0.host, *ln.switches, n0.target if len(ln.members) == 1 else ln.target[-1], n0.array])
    lines = [head, where]
    for j, r in enumerate(runs):
        ios = sum(ios_of[j][m.index] for m in ln.members)
        share = sum(share_of[j][m.index] for m in ln.members)
        lat = f", {sum(lat_of[j][m.index] * ios_of[j][m.index] for m in ln.members) / ios:.2f} ms mean" if ios else ""
        # a nexus AO for some LUNs: how much of what it carried was for the others (shipped to their owner)
        other = sum(off_ao[j][m.index] for m in ln.members)
        mixed = len(alua_of(d, ln, j)) > 1
        lines.append(
            f"{r.label}: {share:.1%} of I/Os, {ios / r.duration:,.0f} IOPS{lat}"
            + (" (carried none)" if not ios else f", {other / ios:.0%} for its non-AO LUNs" if mixed else "")
        )
    lines.append(_alua_words(d, ln, d.start))
    return "<br>".join(lines)


def style(d: Drawing, run: int) -> tuple[list[float], list[str], list[str], list[float], list[str], list[str]]:
    """Per line: width, colour and dash of the line and of its stripes (a second state for some of its LUNs)."""
    w, c, dash, sw, sc, sd = [], [], [], [], [], []
    for ln in d.drawn:
        share = sum(d.share_of[run][m.index] for m in ln.members)
        states = list(alua_of(d, ln, run)) or ["AO"]
        w.append(line_width(share))
        c.append(ALUA_COLORS.get(states[0], "#7f7f7f"))
        dash.append("solid" if share > 0 else "dot")
        mixed = len(states) > 1 and share > 0
        sw.append(line_width(share) if mixed else 0.0)
        sc.append(ALUA_COLORS.get(states[-1], "#7f7f7f"))
        sd.append("dash")
    return w, c, dash, sw, sc, sd


def draw_paths(fig: go.Figure, d: Drawing) -> list[int]:
    """A trace per line (``"path <name>"``) in the start run's style, then the stripes of those a run finds in two
    ALUA states (``"path <name>: stripes"``); the striped lines' indices."""
    drawn, points, runs = d.drawn, d.points, d.runs
    st = style(d, d.start)
    for i, ln in enumerate(drawn):
        xs, ys = points[i]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                name=f"path {ln.name}",
                line=dict(color=st[1][i], width=st[0][i], dash=st[2][i]),
                hovertemplate=path_text(d, ln) + "<extra></extra>",
                showlegend=False,
                legendgroup=ln.members[0].alua,
            )
        )
    striped = [i for i in range(len(drawn)) if any(len(alua_of(d, drawn[i], j)) > 1 for j in range(len(runs)))]
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
    return striped
