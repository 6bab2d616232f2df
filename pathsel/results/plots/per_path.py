"""Per path: the share of each interval's I/Os down each path and each path's state over the run
(:func:`path_share_heatmap`, :func:`path_states`), grouped by array and ALUA state past ``GROUP_ABOVE`` paths."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import Result, RunResult
from .common import figure_title, runs_of
from .over_time import FAULT_EVENTS

__all__ = ["path_share_heatmap", "path_states", "GROUP_ABOVE", "EVERY_PATH_MAX", "HOSTS_APART", "STATES"]

#: path states drawn by :func:`path_share_heatmap`'s timeline, in colour order
STATES = ("AO", "ANO", "standby", "unavailable", "down")
_STATE_COLORS = ("#2ca02c", "#ff7f0e", "#9467bd", "#7f7f7f", "#d62728")


def _path_labels(r: RunResult) -> list[str]:
    model = r.model
    several_hosts = len(model.hosts) > 1
    return [f"{model.hosts[p.host]}/{p.name}" if several_hosts else p.name for p in model.paths]


def path_states(r: RunResult) -> tuple[list[float], np.ndarray]:
    """Each path's state over the run, from the fault events.

    Returns ``(edges, codes)``: ``edges`` the times where some path changed
    (0 and the run's end included), ``codes[p, k]`` the index in
    :data:`STATES` of path ``p`` between ``edges[k]`` and ``edges[k + 1]``
    (``"down"`` whatever its ALUA state while it is down).
    """
    model = r.model
    index: dict[tuple[str | None, str | None], int] = {(model.hosts[p.host], p.name): p.index for p in model.paths}
    alua = [p.alua for p in model.paths]
    up = [True] * len(model.paths)
    edges = [0.0]
    columns: list[list[int]] = []
    for e in sorted((e for e in r.metrics.events if e["event"] in FAULT_EVENTS), key=lambda e: e["t"]):
        t = min(max(float(e["t"]), 0.0), model.end)
        if t > edges[-1]:  # close the column that ends here
            columns.append([STATES.index(a) if u else STATES.index("down") for a, u in zip(alua, up)])
            edges.append(t)
        p = index.get((e.get("device"), e.get("path")))
        if p is not None:
            alua[p], up[p] = e.get("alua", alua[p]), e.get("up", up[p])
    if edges[-1] < model.end or not columns:
        columns.append([STATES.index(a) if u else STATES.index("down") for a, u in zip(alua, up)])
        edges.append(model.end)
    return edges, np.array(columns, dtype=int).T.reshape(len(model.paths), len(columns))


#: above this many paths, :func:`path_share_heatmap` draws one row per host, array and ALUA state
GROUP_ABOVE = 40
#: above this many hosts, the grouped heatmap's rows are per array and ALUA state, the hosts together
HOSTS_APART = 32
#: above this many paths in a run, the grouped heatmap has no "every path" view: the per-path table (its outliers
#: named, every row as CSV) says it, at a fraction of the page's size
EVERY_PATH_MAX = 2_048


def _groups(r: RunResult) -> tuple[list[str], list[list[int]]]:
    """Rows of the aggregated heatmap: (host,) array and ALUA state at the start, and the paths in each; past
    :data:`HOSTS_APART` hosts no host apart (128 hosts x 2 arrays would be 256 rows, some 11 screens a policy)."""
    model = r.model
    several_hosts = 1 < len(model.hosts) <= HOSTS_APART
    keyed: dict[str, list[int]] = {}
    for p in model.paths:
        key = f"{model.arrays[p.array].name} {p.alua}"
        keyed.setdefault(f"{model.hosts[p.host]}: {key}" if several_hosts else key, []).append(p.index)
    labels = [f"{k} ({len(v)} paths)" if len(v) > 1 else f"{k} (1 path)" for k, v in keyed.items()]
    return labels, list(keyed.values())


def path_share_heatmap(result: Result | RunResult, *, policy: str | None = None, by: str | None = None) -> go.Figure:
    """Share of each interval's I/Os per path (path x time), and each path's state below it.

    One pair of panels per policy (or only ``policy``, a label or spec). The
    upper heatmap (trace ``"<label>: share"``) has one row per path and one
    column per interval (``z`` is paths x intervals; the same numbers as
    ``path_share()``); the lower one (``"<label>: state"``) shows each path's
    ALUA state (AO, ANO, standby, unavailable) or down, changing at fault
    times. A policy favouring a few paths, or dropping the remote ones, shows
    as bright and dark rows.

    ``by="group"`` (the default above :data:`GROUP_ABOVE` paths) draws one
    row per (host,) array and ALUA state at the start instead, the share
    summed over its paths and the state its worst path's; buttons switch to
    every path (traces ``"<label>: share by path"``, ``"<label>: state by
    path"``, hidden until asked for) up to :data:`EVERY_PATH_MAX` paths a run.
    ``by="path"`` draws every path only.
    """
    runs = runs_of(result)
    if policy is not None:
        runs = [r for r in runs if policy in (r.label, r.policy)]
        if not runs:
            raise KeyError(policy)
    n_paths = max((len(r.model.paths) for r in runs), default=1)
    if by is None:
        by = "group" if n_paths > GROUP_ABOVE else "path"
    if by not in ("path", "group"):
        raise ValueError(f"by: 'path' or 'group', not {by!r}")
    n_rows = max((len(_groups(r)[0]) for r in runs), default=1) if by == "group" else n_paths
    heights = []
    for _ in runs:
        # the state strip has the share panel's rows in the same order: thinner, named on hover
        heights += [max(150, 17 * n_rows), max(70, 9 * n_rows)]
    titles = []
    for r in runs:
        titles += [
            f"{r.label}: share of I/Os per {'path' if by == 'path' else 'array and ALUA state'}",
            f"{r.label}: state ({'rows as above' if n_rows > 1 else 'as above'})",
        ]
    fig = make_subplots(
        rows=2 * len(runs),
        cols=1,
        shared_xaxes=True,
        row_heights=heights,
        subplot_titles=titles,
        vertical_spacing=min(0.3 / max(len(runs), 1), 90 / sum(heights)),
    )
    n_states = len(STATES)
    state_scale = []
    for k, c in enumerate(_STATE_COLORS):
        state_scale += [(k / n_states, c), ((k + 1) / n_states, c)]
    group_traces: list[int] = []
    path_traces: list[int] = []
    for i, r in enumerate(runs):
        m = r.metrics
        labels = _path_labels(r)
        totals = m.ts_ios.astype(float)
        share = np.divide(m.ts_path_ios.T, totals, out=np.zeros((len(labels), m.n_bins)), where=totals > 0)
        x_mid = [b * m.interval + m.interval / 2 for b in range(m.n_bins)]
        edges, codes = path_states(r)
        views = [("path", labels, share, m.ts_path_ios.T, codes, np.array(STATES)[codes])]
        if by == "group":
            glabels, members = _groups(r)
            gshare = np.array([share[idx].sum(axis=0) for idx in members])
            gios = np.array([m.ts_path_ios.T[idx].sum(axis=0) for idx in members])
            gcodes = np.array([codes[idx].max(axis=0) for idx in members])
            gtext = [
                [
                    ", ".join(f"{int((codes[idx, k] == c).sum())} {STATES[c]}" for c in range(n_states) if (codes[idx, k] == c).any())
                    for k in range(codes.shape[1])
                ]
                for idx in members
            ]
            views.insert(0, ("group", glabels, gshare, gios, gcodes, np.array(gtext)))
            if len(labels) > EVERY_PATH_MAX:  # issue 54: 16,384 rows nobody can read, megabytes of page; the tables have them
                views.pop()
        for view, ylabels, z, ios, zcodes, text in views:
            suffix = " by path" if by == "group" and view == "path" else ""
            visible = view == by
            fig.add_trace(
                go.Heatmap(
                    z=z,
                    x=x_mid,
                    y=ylabels,
                    coloraxis="coloraxis",
                    name=f"{r.label}: share{suffix}",
                    visible=visible,
                    customdata=ios,
                    hovertemplate="%{y}<br>%{x:g} s: %{z:.1%} of I/Os (%{customdata:,})<extra></extra>",
                ),
                row=2 * i + 1,
                col=1,
            )
            fig.add_trace(
                go.Heatmap(
                    z=zcodes,
                    x=edges,
                    y=ylabels,
                    zmin=-0.5,
                    zmax=n_states - 0.5,
                    colorscale=state_scale,
                    name=f"{r.label}: state{suffix}",
                    text=text,
                    showscale=(i == 0 and visible),
                    visible=visible,
                    colorbar=dict(
                        title="state",
                        tickvals=list(range(n_states)),
                        ticktext=list(STATES),
                        lenmode="pixels",
                        len=22 * n_states,
                        y=0,
                        yanchor="bottom",
                        x=1.02,
                    ),
                    hovertemplate="%{y}<br>%{x:g} s: %{text}<extra></extra>",
                ),
                row=2 * i + 2,
                col=1,
            )
            (group_traces if view == "group" else path_traces).extend([len(fig.data) - 2, len(fig.data) - 1])
        for row in (2 * i + 1, 2 * i + 2):
            fig.update_yaxes(
                showticklabels=n_rows <= GROUP_ABOVE and row % 2 == 1,
                tickmode="linear" if by == "path" else None,
                tick0=0,
                dtick=1,
                tickfont=dict(size=11),
                autorange="reversed",
                row=row,
                col=1,
            )
            # every panel has its own time axis: a stack of panels is not read against the bottom one
            fig.update_xaxes(showticklabels=True, tickfont=dict(size=11), row=row, col=1)
            if r.model.ramp > 0:
                fig.add_vline(x=r.model.ramp, line=dict(dash="dot", color="black", width=1), row=row, col=1)
    fig.update_xaxes(title_text="time (s)", row=2 * len(runs), col=1)
    height = int(sum(heights) + 160)
    if by == "group" and path_traces:
        n = len(fig.data)
        # right-aligned 30 px above the plots (y is in plot heights), clear of the title on the left
        fig.update_layout(
            updatemenus=[
                dict(
                    type="buttons",
                    direction="right",
                    x=1,
                    xanchor="right",
                    y=1 + 30 / (height - 180),
                    yanchor="bottom",
                    buttons=[
                        dict(label="by array and ALUA state", method="restyle", args=[{"visible": [k in group_traces for k in range(n)]}]),
                        dict(label="every path", method="restyle", args=[{"visible": [k in path_traces for k in range(n)]}]),
                    ],
                )
            ]
        )
    fig.update_layout(
        title=figure_title(result, "Share of I/Os per path over time, and path state"),
        coloraxis=dict(
            colorscale="Viridis", cmin=0, colorbar=dict(title="share", tickformat=".0%", lenmode="pixels", len=160, y=1, yanchor="top", x=1.02)
        ),
        height=height,
        margin=dict(t=100, b=80),
    )
    return fig
