"""IOPS and latency over time (:func:`timeline`), with the scenario's faults and latency round robin's evaluations
marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import Result, RunResult
from .common import MARKERS_UP_TO, figure_title, policy_color, policy_line, policy_marker, runs_of

__all__ = ["timeline", "FAULT_EVENTS"]

FAULT_EVENTS = ("path_down", "path_up", "alua")


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
    runs = runs_of(result)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.06)
    iops_max = 0.0
    for i, r in enumerate(runs):
        ts = r.timeseries()
        x = ts.t_s + r.metrics.interval / 2
        iops_max = max(iops_max, float(ts.iops.max() or 0.0))
        common = dict(mode="lines+markers" if len(x) <= MARKERS_UP_TO else "lines", legendgroup=r.label, line=policy_line(i), marker=policy_marker(i))
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
                    marker=dict(symbol="diamond", size=11, color=policy_color(i), line=dict(width=1, color="black")),
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
        title=figure_title(result, "IOPS and latency over time"),
        hovermode="closest",
        height=600,
        legend=dict(orientation="h", y=-0.14, traceorder="grouped"),
    )
    return fig
