"""The latency distribution of each policy: percentiles as bars (:func:`latency_percentiles`) and the CDF of every
measured I/O (:func:`latency_cdf`)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ...metrics import NBINS, bin_value
from .. import Result, RunResult
from .common import figure_title, policy_line, runs_of

__all__ = ["latency_percentiles", "latency_cdf"]

_BIN_MS = np.array([bin_value(i) for i in range(NBINS)]) / 1e6


def latency_percentiles(result: Result | RunResult) -> go.Figure:
    """p50, p99 and p99.9 latency (ms) per policy, as grouped bars (traces ``p50``, ``p99``, ``p99.9``)."""
    runs = runs_of(result)
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
    fig.update_layout(title=figure_title(result, "Latency percentiles (measured window)"), barmode="group", yaxis_title="latency (ms)", height=440)
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
    runs = runs_of(result)
    fig = go.Figure()
    for i, r in enumerate(runs):
        x, y = _cdf(r)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                line=dict(shape="hv", **policy_line(i)),
                name=r.label,
                hovertemplate="%{x:.3f} ms: %{y:.4f}<extra>" + r.label + "</extra>",
            )
        )
    fig.update_layout(
        title=figure_title(result, "Latency distribution (CDF, measured window)"),
        xaxis=dict(title="latency (ms)", type="log" if log_x else "linear"),
        yaxis=dict(title="fraction of I/Os ≤ latency", range=[0, 1.02]),
        height=440,
        legend=dict(orientation="h", y=-0.2),
    )
    return fig
