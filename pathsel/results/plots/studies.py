"""Figures of studies, drawn from their tables (plots never simulate): policies across seeds with confidence
intervals (:func:`compare_seeds`), a sweep's regret by setting and condition (:func:`regret_heatmap`), and latency
against offered load (:func:`load_latency`)."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...stats import ci95
from .common import policy_color, policy_marker

__all__ = ["compare_seeds", "regret_heatmap", "load_latency"]


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
        color = policy_color(i)
        for q, dash in (("p50", "dash"), ("p99", "solid")):
            fig.add_trace(
                go.Scatter(
                    x=pts.index,
                    y=pts[f"{q}_us"] / 1e3,
                    name=f"{label} {q}",
                    mode="lines+markers",
                    line=dict(color=color, dash=dash, width=max(1.5, 4.0 - 0.8 * i)),
                    legendgroup=str(label),
                    marker=policy_marker(i),  # a symbol per policy, earlier ones bigger: two policies on one curve both show
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
