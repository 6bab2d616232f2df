"""Figures of a run, as ``plotly.graph_objects.Figure`` objects.

Every function takes a :class:`~pathsel.results.Result` (all its policies) or
one :class:`~pathsel.results.RunResult` and returns a figure to ``show()``,
save (``write_html``) or restyle; nothing is drawn as a side effect.

* :func:`topology`: the set-up (hosts, adapters, the fabric's switches, ISLs
  and links with their busy and held shares, target ports boxed by
  controller, arrays, replication), paths coloured by ALUA state per LUN and
  as wide as each policy's share, compact from 32 hosts; :func:`key_figures`
  lists the scenario's figures beside it.
* :func:`timeline`: IOPS and mean latency per interval, one line per policy,
  with path faults (vertical lines) and latency round robin evaluations
  (diamonds) marked.
* :func:`latency_percentiles`: p50, p99 and p99.9 per policy, as bars.
* :func:`latency_cdf`: the distribution of I/O latency per policy, from the
  run's latency histogram (every measured I/O, not a sample).
* :func:`path_share_heatmap`: share of each interval's I/Os per path (path x
  time), with each path's ALUA state and up/down state as a timeline below.
* :func:`compare_seeds`: each policy's mean IOPS and p99 latency over
  seeds with 95 % confidence intervals, from :func:`pathsel.simulate_seeds`
  (plots draw results; they never simulate).

Latencies are drawn in milliseconds; times in seconds from the start of the
run, the ramp included (shaded).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from ..metrics import NBINS, bin_value
from ..stats import ci95
from . import Result, RunResult
from .topology.figure import topology
from .topology.key_table import key_figures

__all__ = [
    "topology",
    "key_figures",
    "timeline",
    "latency_percentiles",
    "latency_cdf",
    "path_share_heatmap",
    "path_states",
    "compare_seeds",
    "GROUP_ABOVE",
    "load_latency",
    "FAULT_EVENTS",
    "STATES",
]

FAULT_EVENTS = ("path_down", "path_up", "alua")
#: path states drawn by :func:`path_share_heatmap`'s timeline, in colour order
STATES = ("AO", "ANO", "standby", "unavailable", "down")
_STATE_COLORS = ("#2ca02c", "#ff7f0e", "#9467bd", "#7f7f7f", "#d62728")
_PALETTE = qualitative.Plotly
_BIN_MS = np.array([bin_value(i) for i in range(NBINS)]) / 1e6


def _runs(result: Result | RunResult) -> list[RunResult]:
    if isinstance(result, RunResult):
        return [result]
    if isinstance(result, Result):
        return list(result.runs)
    raise TypeError(f"expected a pathsel Result or RunResult, got {type(result).__name__}")


def _title(result: Result | RunResult, what: str) -> str:
    name = result.scenario if isinstance(result, Result) else result.model.name
    return f"{what}<br><sup>{name}</sup>"


def _color(i: int) -> str:
    return str(_PALETTE[i % len(_PALETTE)])


_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "hexagon")
#: above this many points a line has no markers: they would hide it
_MARKERS_UP_TO = 40


def _line(i: int) -> dict[str, Any]:
    """Policy ``i``'s line: its colour, a dash of its own, and wider for earlier policies, so two policies with
    the same numbers show as a wide line with a thin one of another colour and dash inside it."""
    return dict(color=_color(i), dash=_DASHES[i % len(_DASHES)], width=max(1.5, 5.0 - 1.2 * i))


def _marker(i: int) -> dict[str, Any]:
    return dict(symbol=_SYMBOLS[i % len(_SYMBOLS)], size=max(5, 10 - 2 * i), color=_color(i))


def _faults(runs: Sequence[RunResult]) -> list[dict[str, Any]]:
    """The scenario's fault timeline, when each change happens on the wire (every run replays the same)."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in runs:
        for f in r.model.faults:
            e = {"t": f.at, "event": f.what, "path": r.fault_target(f), "state": f.state, "revert": f.revert}
            seen.setdefault((e["t"], e["event"], e["path"], e["revert"]), e)
    return sorted(seen.values(), key=lambda e: e["t"])


def _fault_text(e: dict[str, Any]) -> str:
    detail = f" -> {e['state']}" if e.get("state") else ""
    return f"{e['t']:g} s: {e['event']}{' ends' if e.get('revert') else ''} {e.get('path', '')}{detail}"


# -- IOPS and latency over time -----------------------------------------------


def timeline(result: Result | RunResult) -> go.Figure:
    """IOPS (top) and mean latency (bottom) per interval, one line per policy.

    Traces: per policy, ``"<label>"`` in each panel (one legend entry);
    ``"<label>: evaluations"`` (latency round robin evaluations, on the IOPS
    panel, hover for the paths kept and dropped) when the policy logged any;
    ``"faults"`` (path down / up / ALUA changes) when the scenario has any,
    also drawn as dashed vertical lines. Points sit mid-interval.
    """
    runs = _runs(result)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.06)
    iops_max = 0.0
    for i, r in enumerate(runs):
        ts = r.timeseries()
        x = ts.t_s + r.metrics.interval / 2
        iops_max = max(iops_max, float(ts.iops.max() or 0.0))
        common = dict(mode="lines+markers" if len(x) <= _MARKERS_UP_TO else "lines", legendgroup=r.label, line=_line(i), marker=_marker(i))
        fig.add_trace(go.Scatter(x=x, y=ts.iops, name=r.label, hovertemplate="%{x:g} s: %{y:,.0f} IOPS", **common), row=1, col=1)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=ts.latency_mean_us / 1e3,
                name=r.label,
                showlegend=False,
                hovertemplate="%{x:g} s: %{y:.3f} ms mean",
                **common,
            ),
            row=2,
            col=1,
        )
        evals = [e for e in r.metrics.events if e["event"] == "evaluation"]
        if evals:
            b = [min(int(e["t"] / r.metrics.interval), r.metrics.n_bins - 1) for e in evals]
            fig.add_trace(
                go.Scatter(
                    x=[e["t"] for e in evals],
                    y=[ts.iops.iloc[k] for k in b],
                    mode="markers",
                    marker=dict(symbol="diamond", size=11, color=_color(i), line=dict(width=1, color="black")),
                    name=f"{r.label}: evaluations",
                    legendgroup=r.label,
                    hovertext=[
                        f"evaluation at {e['t'] * 1e3:.1f} ms: kept {len(e.get('active', ()))}, dropped {len(e.get('dropped', ()))}" for e in evals
                    ],
                    hoverinfo="text",
                ),
                row=1,
                col=1,
            )
    faults = _faults(runs)
    if faults:
        # One dashed line per fault in each panel, set in one go: fig.add_vline re-validates every shape
        # already there, so a flapping path's hundreds of faults cost quadratic time.
        line = dict(dash="dash", color="#d62728", width=1)
        fig.update_layout(
            shapes=[
                dict(type="line", x0=e["t"], x1=e["t"], xref=x, y0=0, y1=1, yref=f"{y} domain", line=line)
                for e in faults
                for x, y in (("x", "y"), ("x2", "y2"))
            ]
        )
        fig.add_trace(
            go.Scatter(
                x=[e["t"] for e in faults],
                y=[iops_max * 1.05] * len(faults),
                mode="markers",
                marker=dict(symbol="triangle-down", size=11, color="#d62728"),
                name="faults",
                hovertext=[_fault_text(e) for e in faults],
                hoverinfo="text",
            ),
            row=1,
            col=1,
        )
    ramp = runs[0].model.ramp if runs else 0.0
    if ramp > 0:
        fig.add_vrect(x0=0, x1=ramp, fillcolor="#888", opacity=0.12, line_width=0)
        # named once, at the foot of the IOPS panel: evaluation markers sit at its top
        fig.add_annotation(
            x=ramp / 2, y=0, xref="x", yref="y domain", yanchor="bottom", text="ramp", showarrow=False, font=dict(size=11, color="#555")
        )
    fig.update_yaxes(title_text="IOPS", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="mean latency (ms)", rangemode="tozero", row=2, col=1)
    # a time axis under each panel, so neither is read against the other's
    fig.update_xaxes(showticklabels=True, row=1, col=1)
    fig.update_xaxes(title_text="time (s)", row=2, col=1)
    fig.update_layout(
        title=_title(result, "IOPS and latency over time"),
        hovermode="closest",
        height=600,
        legend=dict(orientation="h", y=-0.14, traceorder="grouped"),
    )
    return fig


# -- latency distribution -----------------------------------------------------


def latency_percentiles(result: Result | RunResult) -> go.Figure:
    """p50, p99 and p99.9 latency (ms) per policy, as grouped bars (traces ``p50``, ``p99``, ``p99.9``)."""
    runs = _runs(result)
    labels = [r.label for r in runs]
    fig = go.Figure()
    for key, name, color in (("p50", "p50", "#1f77b4"), ("p99", "p99", "#ff7f0e"), ("p999", "p99.9", "#d62728")):
        values = [r.latency_us[key] / 1e3 for r in runs]  # NaN (no bar) for a run where no I/O completed
        fig.add_trace(
            go.Bar(
                x=labels,
                y=values,
                name=name,
                marker_color=color,
                text=[f"{v:.2f}" if math.isfinite(v) else "no I/O" for v in values],
                textposition="outside",
                hovertemplate="%{x}<br>" + name + ": %{y:.3f} ms<extra></extra>",
            )
        )
    fig.update_layout(title=_title(result, "Latency percentiles (measured window)"), barmode="group", yaxis_title="latency (ms)", height=440)
    return fig


def _cdf(r: RunResult) -> tuple[np.ndarray, np.ndarray]:
    counts = r.metrics.overall.counts
    nz = np.flatnonzero(counts)
    if nz.size == 0:
        return np.array([]), np.array([])
    cum = np.cumsum(counts[nz]) / counts.sum()
    return _BIN_MS[nz], cum


def latency_cdf(result: Result | RunResult, *, log_x: bool = True) -> go.Figure:
    """Fraction of measured I/Os at or below each latency (ms), one line per policy (trace name = label).

    Built from the run's latency histogram (``metrics.overall.counts``, bins
    at most 0.8 % wide), so it covers every I/O of the measured window.
    """
    runs = _runs(result)
    fig = go.Figure()
    for i, r in enumerate(runs):
        x, y = _cdf(r)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                line=dict(shape="hv", **_line(i)),
                name=r.label,
                hovertemplate="%{x:.3f} ms: %{y:.4f}<extra>" + r.label + "</extra>",
            )
        )
    fig.update_layout(
        title=_title(result, "Latency distribution (CDF, measured window)"),
        xaxis=dict(title="latency (ms)", type="log" if log_x else "linear"),
        yaxis=dict(title="fraction of I/Os ≤ latency", range=[0, 1.02]),
        height=440,
        legend=dict(orientation="h", y=-0.2),
    )
    return fig


# -- per path -----------------------------------------------------------------


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


def _groups(r: RunResult) -> tuple[list[str], list[list[int]]]:
    """Rows of the aggregated heatmap: (host,) array and ALUA state at the start, and the paths in each."""
    model = r.model
    several_hosts = len(model.hosts) > 1
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
    path"``, hidden until asked for). ``by="path"`` draws every path only.
    """
    runs = _runs(result)
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
    if by == "group":
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
        title=_title(result, "Share of I/Os per path over time, and path state"),
        coloraxis=dict(
            colorscale="Viridis", cmin=0, colorbar=dict(title="share", tickformat=".0%", lenmode="pixels", len=160, y=1, yanchor="top", x=1.02)
        ),
        height=height,
        margin=dict(t=100, b=80),
    )
    return fig


# -- across seeds ----------------------------------------------------------


def _ci(values: pd.Series) -> tuple[float, float]:
    """Mean and 95 % half-width; no error bar (0) for a single value."""
    mean, half = ci95(values)
    return mean, 0.0 if math.isnan(half) else half


def compare_seeds(table: pd.DataFrame) -> go.Figure:
    """Mean IOPS and p99 latency per policy across seeds, with 95 % confidence intervals.

    ``table`` is what :func:`pathsel.simulate_seeds` returns (one row per seed
    x policy); plotting never simulates. Error bars are Student's t 95 %
    intervals of the mean over seeds. Traces: ``"IOPS"`` and ``"p99"``; the
    per-seed numbers are in the figure's ``layout.meta["seed_table"]`` (records).
    """
    order = list(dict.fromkeys(table.policy))
    stats = []
    for label in order:
        rows = table[table.policy == label]
        iops, iops_ci = _ci(rows.iops)
        p99, p99_ci = _ci(rows.p99_us / 1e3)
        stats.append((label, iops, iops_ci, p99, p99_ci, len(rows)))
    n_seeds = table.seed.nunique()
    fig = make_subplots(rows=1, cols=2, subplot_titles=("IOPS", "p99 latency (ms)"), horizontal_spacing=0.12)
    fig.add_trace(
        go.Bar(
            x=[s[0] for s in stats],
            y=[s[1] for s in stats],
            name="IOPS",
            marker_color="#1f77b4",
            error_y=dict(type="data", array=[s[2] for s in stats], visible=True),
            customdata=[[s[2], s[5]] for s in stats],
            hovertemplate="%{x}<br>%{y:,.0f} ± %{customdata[0]:,.0f} IOPS (%{customdata[1]} seeds)<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Bar(
            x=[s[0] for s in stats],
            y=[s[3] for s in stats],
            name="p99",
            marker_color="#ff7f0e",
            error_y=dict(type="data", array=[s[4] for s in stats], visible=True),
            customdata=[[s[4], s[5]] for s in stats],
            hovertemplate="%{x}<br>%{y:.3f} ± %{customdata[0]:.3f} ms (%{customdata[1]} seeds)<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.update_yaxes(rangemode="tozero")
    fig.update_layout(
        title=f"Policies across {n_seeds} seed(s): mean ± 95 % CI",
        showlegend=False,
        height=460,
        meta={"seed_table": table.to_dict(orient="records")},
    )
    return fig


# -- sweeps ------------------------------------------------------------------


def _condition_tick(condition: str) -> str:
    """``metro-failback  replication.one_way_latency=2ms`` -> the scenario over ``one_way_latency=2ms``: short, level ticks."""
    scenario, _, rest = condition.partition("  ")
    items = []
    for item in rest.split(" "):
        name, eq, value = item.partition("=")
        if item:
            items.append(name.rsplit(".", 1)[-1] + eq + value)
    return "<br>".join([scenario, *items])


def regret_heatmap(
    cells: pd.DataFrame, *, title: str = "Regret by setting and condition", unit: str = "%", recommended: str | None = None
) -> go.Figure:
    """Regret of each setting (rows, best first) in each condition (columns), from a sweep's recommendation.

    ``cells``: :attr:`pathsel.studies.recommend.MetricRecommendation.cells` (setting,
    condition, mean, regret); relative regret (a fraction) is drawn in %
    when ``unit`` is ``"%"``. The recommended setting's row is starred.
    """
    settings = list(dict.fromkeys(cells.setting))
    conditions = list(dict.fromkeys(cells.condition))
    grid = cells.pivot(index="setting", columns="condition", values="regret").reindex(index=settings, columns=conditions)
    means = cells.pivot(index="setting", columns="condition", values="mean").reindex(index=settings, columns=conditions)
    z = grid.to_numpy(dtype=float) * (100.0 if unit == "%" else 1.0)
    labels = [("★ " if s == recommended else "") + s for s in settings]
    columns = [_condition_tick(c) for c in conditions]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=columns,
            y=labels,
            colorscale="Reds",
            zmin=0,
            colorbar=dict(title=f"regret ({unit})"),
            customdata=means.to_numpy(dtype=float),
            text=[[f"{v:.2f}" for v in row] for row in z],
            texttemplate="%{text}",
            hovertemplate="%{y}<br>%{x}<br>regret %{z:.3f} " + unit + "<br>mean %{customdata:,.4g}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", dtick=1)  # best first, at the top; every setting named
    # Condition names are long ("metro-two-hosts  replication.one_way_latency=2ms"): level labels overlap
    # past a few columns at a laptop's or a notebook's width, so they slant then.
    slant = len(columns) > 4 or sum(len(str(c)) for c in columns) > 60
    fig.update_xaxes(tickangle=-35 if slant else 0, automargin=True)
    fig.update_layout(title=title, height=max(360, 200 + 30 * len(settings)) + (120 if slant else 0), xaxis_title="condition", yaxis_title="setting")
    return fig


# -- offered load ----------------------------------------------------------------


def load_latency(table: pd.DataFrame, *, rate: str | None = None, log_y: bool = True) -> go.Figure:
    """p50 and p99 latency against offered IOPS, one curve per policy: where each policy's knee is.

    ``table`` is a sweep's table (``pathsel sweep ... --out knee.csv``, read back with
    ``pandas.read_csv``, or ``SweepResult.table``) over an offered load: the column
    ``rate`` (default: the one whose name ends in ``rate_iops``). Points are the
    mean over replications; x is the offered rate, so a policy past its knee shows
    as latency climbing while the measured IOPS (hover) falls behind. Traces:
    ``"<policy> p50"`` (dashed) and ``"<policy> p99"``, one marker symbol per
    policy, so that two policies on the same curve both show.

    ``log_y`` (default): a logarithmic latency axis. Past a knee latency grows
    tenfold or more, which on a linear axis flattens every curve still below
    its knee onto zero; ``log_y=False`` draws a linear axis from zero.
    """
    if rate is None:
        found = [c for c in table.columns if str(c).endswith("rate_iops")]
        if not found:
            raise ValueError("load_latency needs a sweep over rate_iops (a column ending in 'rate_iops'), or rate=")
        rate = found[0]
    fig = go.Figure()
    for i, (label, rows) in enumerate(table.groupby("policy", sort=False)):
        pts = rows.groupby(rate, sort=True)[["iops", "p50_us", "p99_us"]].mean()
        color = _color(i)
        for q, dash in (("p50", "dash"), ("p99", "solid")):
            fig.add_trace(
                go.Scatter(
                    x=pts.index,
                    y=pts[f"{q}_us"] / 1e3,
                    name=f"{label} {q}",
                    mode="lines+markers",
                    line=dict(color=color, dash=dash, width=max(1.5, 4.0 - 0.8 * i)),
                    legendgroup=str(label),
                    marker=_marker(i),  # a symbol per policy, earlier ones bigger: two policies on one curve both show
                    customdata=pts["iops"],
                    hovertemplate="offered %{x:,.0f} IOPS, served %{customdata:,.0f}<br>" + q + " %{y:.3f} ms<extra>" + str(label) + "</extra>",
                )
            )
    fig.update_layout(
        title="Latency against offered load", xaxis_title="offered IOPS", yaxis_title="latency (ms)", height=460, legend=dict(groupclick="toggleitem")
    )
    if log_y:
        fig.update_yaxes(type="log")
    else:
        fig.update_yaxes(rangemode="tozero")
    fig.update_xaxes(rangemode="tozero", tickformat=",d")
    return fig


# -- the host's CPU and the wires (issue 33) --------------------------------------


def cpu_heatmap(result: Result | RunResult) -> go.Figure:
    """Each core's utilisation (esxtop's %USED, in %) of every host with a ``cpu`` table: one heatmap per host, a row
    per policy and a column per core, the cores in NUMA node order with a line between nodes.

    Traces: ``"<host>"``, ``z`` policies x cores in % (the same numbers as ``result.cpus()``); an empty figure
    when no host has a cpu table. A core whose submissions or interrupts pile up on it shows as a hot column.
    """
    from .cpu import cpu_rows, cpulist

    runs = _runs(result)
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
        title=_title(result, "Host CPU: each core's utilisation (%USED, measured window)"),
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
    runs = _runs(result)
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
                marker_color=_color(i),
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
        title=_title(result, "Wires: utilisation per direction" + (" and back-pressure" if fabric else "") + shown),
        barmode="group",
        bargap=0.25,
        height=plot_px + 100 + 120,
        margin=dict(t=100, b=120),
        legend=dict(orientation="h", y=-75 / plot_px, yanchor="top"),  # below the axis title, in pixels
    )
    return fig


__all__ += ["cpu_heatmap", "link_utilisation"]
