"""A default from a sweep: the setting with the best worst-case regret across conditions.

A sweep's parameters are of two kinds. Policy parameters (``FAMILY.key``) are
what a vendor chooses: a **setting** is one policy with one value of each of
its family's swept parameters. Scenario parameters (``replication.one_way_latency``,
``workloads[0].iodepth``) and the scenario files are what a customer has: a
**condition** is one scenario file with one value of each scenario parameter.

For each metric, each setting's mean over replications is compared, in each
condition, with the best setting there. The gap is the setting's **regret**
in that condition; the recommendation is the setting whose largest regret
over all conditions is smallest (ties: the smaller mean regret). Regret is
relative (a fraction of the best) for IOPS and p99 latency, so that a
high-IOPS scenario does not outweigh a slow one, and in seconds for
convergence time, whose best is often 0. Convergence counts only in
conditions with faults (elsewhere it has no value).

With common random numbers every setting sees the same seeds, so the
recommendation is set beside its runner-up replication by replication (a
paired difference with a 95 % confidence interval) in every condition.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import ScenarioError
from ..outputs import write_atomic
from ..policies.spec import POLICY_DEFS, parse_spec
from ..scenario.overrides import format_value
from ..stats import t975
from .table import param_columns, read_table

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["recommend", "Recommendation", "MetricRecommendation", "METRICS"]

# name -> (column, higher is better, regret kind, unit shown, scale to the unit shown)
METRICS: dict[str, tuple[str, bool, str, str, float]] = {
    "iops": ("iops", True, "relative", "IOPS", 1.0),
    "p99": ("p99_us", False, "relative", "ms", 1e-3),
    "convergence": ("convergence_s", False, "absolute", "s", 1.0),
}
_TITLES = {"iops": "IOPS", "p99": "p99 latency", "convergence": "convergence time after faults"}
# What convergence counts, said under its ranking: not the per-fault recovery pathsel simulate prints (from each fault,
# IOPS back within 5 % of its level before that fault), so that 0.000 s here beside "recovered in 1.000s" there reads
# as two measures (a path down and back up: simulate times the dip after the down, this from the up, when IOPS had
# long been back)
CONVERGENCE_MEANS = (
    "  convergence: seconds from the condition's last fault until IOPS is back within 10 % of its level before the first "
    "(studies.table.convergence_time);\n  not simulate's recovery, which runs from each fault to IOPS back within 5 % of "
    "its level before that fault."
)


def _policy_params(params: list[str]) -> list[str]:
    return [c for c in params if "." in c and c.split(".", 1)[0] in POLICY_DEFS]


def _setting_text(spec_text: str, label: str, pparams: list[str]) -> str:
    """``latency [num_sampling_cycles=32, latency_eval_time=180000]``: the family, its swept parameters
    (defaults included), any other it sets and the run's preferred array. A setting is the same in every
    scenario file, whatever the files call the policy; a Python policy is its label."""
    try:
        spec, opts = parse_spec(spec_text)
    except ValueError:
        return label
    d = POLICY_DEFS[spec.name]
    swept = {c.split(".", 1)[1] for c in pparams if c.split(".", 1)[0] == spec.name}
    shown = [(k, v) for k, v in spec.params if k in swept or ((dp := d.param(k)) is not None and v != dp.default)]
    if opts.get("preferred_array") is not None:
        shown.append(("preferred_array", opts["preferred_array"]))
    return spec.name + (" [" + ", ".join(f"{k}={format_value(v)}" for k, v in shown) + "]" if shown else "")


def _family_of(spec_text: str) -> str:
    if "; " in spec_text or re.match(r"[^:=]+=", spec_text):  # a policy per device, "lun0=SPEC; lun1=SPEC": one family if all are
        names = {_family_of(part.partition("=")[2]) for part in spec_text.split("; ")}
        return names.pop() if len(names) == 1 else ""
    try:
        return parse_spec(spec_text)[0].name
    except ValueError:
        return ""


@dataclass
class MetricRecommendation:
    """One metric's answer and the numbers behind it."""

    metric: str
    column: str
    higher_is_better: bool
    regret_kind: str  # "relative" (fraction of the best) or "absolute" (the metric's own unit)
    recommended: str  # the setting
    runner_up: str | None
    ranking: pd.DataFrame  # one row per setting, best first: max_regret, mean_regret, worst_condition
    cells: pd.DataFrame  # one row per setting x condition: mean, ci95, n, best, regret
    paired: pd.DataFrame  # per condition: recommended minus runner-up, oriented so > 0 favours the recommendation
    # conditions left out because some settings were not run there: condition -> those settings
    dropped: dict[str, list[str]] = field(default_factory=dict)
    spec: str = ""  # the recommended setting as a policy spec: pathsel simulate --policy SPEC

    @property
    def max_regret(self) -> float:
        return float(self.ranking.max_regret.iloc[0])

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "column": self.column,
            "higher_is_better": self.higher_is_better,
            "regret": self.regret_kind,
            "recommended": self.recommended,
            "spec": self.spec,
            "max_regret": self.max_regret,
            "runner_up": self.runner_up,
            "ranking": self.ranking.to_dict(orient="records"),
            "cells": self.cells.to_dict(orient="records"),
            "paired_vs_runner_up": self.paired.to_dict(orient="records"),
            "dropped_conditions": self.dropped,
        }


@dataclass
class Recommendation:
    """Per metric, the recommended setting (see the module's words)."""

    metrics: dict[str, MetricRecommendation]
    policies: list[str]  # the table's policy labels chosen among
    settings: int
    conditions: int
    notes: list[str] = field(default_factory=list)
    families: list[str] = field(default_factory=list)  # their policy families (a Python policy: its label)

    def __getitem__(self, metric: str) -> MetricRecommendation:
        return self.metrics[metric]

    def to_dict(self) -> dict[str, Any]:
        return {
            "policies": self.policies,
            "families": self.families,
            "settings": self.settings,
            "conditions": self.conditions,
            "notes": self.notes,
            "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
        }

    def figure(self, metric: str) -> go.Figure:
        """Regret by setting x condition as a heatmap (:func:`pathsel.plots.regret_heatmap`)."""
        from ..results.plots.studies import regret_heatmap

        m = self.metrics[metric]
        unit = "%" if m.regret_kind == "relative" else METRICS[metric][3]
        return regret_heatmap(m.cells, title=f"{_TITLES[metric]}: regret by setting and condition", unit=unit, recommended=m.recommended)

    def text(self, top: int = 10) -> str:
        return format_recommendation(self, top=top)


def _fmt_regret(v: float, kind: str, unit: str) -> str:
    if not math.isfinite(v):
        return "inf"
    return f"{v * 100:.2f} %" if kind == "relative" else f"{v:.4g} {unit}"


def _fmt_value(v: float, metric: str) -> str:
    _, _, _, unit, scale = METRICS[metric]
    if not math.isfinite(v):
        return "nan"
    x = v * scale
    return f"{x:,.0f}" if unit == "IOPS" else f"{x:,.3f} {unit}"


def _not_shipped(specs: pd.Series) -> bool:
    """Whether any of these specs names a policy no host can run (:data:`pathsel.policies.oracle.NOT_SHIPPED`)."""
    from ..policies.oracle import NOT_SHIPPED

    for spec in set(specs):
        try:
            name = parse_spec(spec)[0].name
        except Exception:  # a label of the user's own policy: not ours to judge
            continue
        if name in NOT_SHIPPED:
            return True
    return False


def recommend(
    table: pd.DataFrame | str | Path,
    *,
    metrics: list[str] | None = None,
    policies: list[str] | None = None,
) -> Recommendation:
    """For each metric, the setting with the smallest worst-case regret across conditions.

    ``table``: a sweep's table (:attr:`SweepResult.table`) or its results
    file. ``metrics``: among ``iops``, ``p99``, ``convergence`` (default: all
    three, convergence only when some condition has faults). ``policies``:
    what to choose among, each a policy label (the table's ``policy``) or a
    family (``latency``, ``rr``: all its rows); default: the policies a swept
    policy parameter applies to, or every policy when none does.

    Settings are compared in the conditions where every one of them was run;
    a condition where some were not is left out and named
    (:attr:`MetricRecommendation.dropped`). When no condition has them all,
    ScenarioError names each setting and the conditions it was not run in.
    """
    source = str(table) if not isinstance(table, pd.DataFrame) else "sweep table"
    if not isinstance(table, pd.DataFrame):
        table = read_table(table)
    if table.empty:
        raise ScenarioError(source, "", "the table has no rows")
    params = param_columns(table)
    pparams = _policy_params(params)
    sparams = [c for c in params if c not in pparams]
    family = pd.Series([_family_of(s) for s in table.spec.astype(str)], index=table.index)
    known = list(dict.fromkeys(table.policy))
    if policies:
        families = list(dict.fromkeys(f for f in family if f))
        for p in policies:
            if p not in known and p not in families:
                raise ScenarioError(
                    source,
                    "--policy",
                    f"no policy labelled {p!r} and no {p!r} family (families: {', '.join(families) or 'none'}; policies: {', '.join(known)})",
                )
        chosen = list(dict.fromkeys(table.policy[table.policy.isin(policies) | family.isin(policies)]))
    else:
        swept = {c.split(".", 1)[0] for c in pparams}
        chosen = [p for p in known if set(family[table.policy == p]) & swept] or known
    # a clairvoyant policy (oracle: the league's bar) reads what no host knows: never a setting to ship
    bar = [p for p in chosen if _not_shipped(table.spec[table.policy == p].astype(str))]
    if bar and policies:
        raise ScenarioError(
            source, "--policy", f"{', '.join(bar)}: clairvoyant (the league's bar), not shippable; recommend chooses among shipped policies"
        )
    chosen = [p for p in chosen if p not in bar]
    if not chosen:
        raise ScenarioError(source, "", "holds only clairvoyant policies (oracle), which no host can run: nothing to recommend")
    mask = table.policy.isin(chosen)
    df = table[mask].copy()

    def condition(row: pd.Series) -> str:
        mine = [(c, row[c]) for c in sparams if not pd.isna(row[c])]
        return str(row["scenario"]) + ("  " + " ".join(f"{k}={format_value(v)}" for k, v in mine) if mine else "")

    df["_setting"] = [_setting_text(spec, label, pparams) for spec, label in zip(df.spec, df.policy)]
    df["_condition"] = [condition(r) for _, r in df.iterrows()]
    # Two runs of one setting in one condition (rr:iops=1 with and without a preferred array): their labels tell them apart.
    shared = df.groupby(["_setting", "_condition"]).policy.nunique()
    ambiguous = set(shared[shared > 1].index.get_level_values(0))
    df["_setting"] = [f"{lab}: {st}" if st in ambiguous else st for st, lab in zip(df._setting, df.policy)]
    settings = list(dict.fromkeys(df._setting))
    conditions = list(dict.fromkeys(df._condition))

    wanted = metrics or [m for m in METRICS if m != "convergence" or ("convergence_s" in df and df.convergence_s.notna().any())]
    out: dict[str, MetricRecommendation] = {}
    notes: list[str] = []
    for metric in wanted:
        if metric not in METRICS:
            raise ScenarioError(source, "--metric", f"unknown metric {metric!r} (metrics: {', '.join(METRICS)})")
        col, higher, kind, _, _ = METRICS[metric]
        if col not in df or not df[col].notna().any():
            if metric == "convergence":
                notes.append("convergence: no condition has faults inside the measured window, so there is nothing to compare")
                continue
            raise ScenarioError(source, "", f"the table has no {col!r} values")
        out[metric] = _one_metric(df, metric, col, higher, kind, settings, source)
    if not out:
        raise ScenarioError(source, "--metric", "no metric left to compare")
    fams = list(dict.fromkeys(_family_of(s) or lab for s, lab in zip(df.spec.astype(str), df.policy)))
    return Recommendation(out, chosen, len(settings), len(conditions), notes, fams)


def _listing(items: list[str], noun: str) -> str:
    return (f"{noun} " if len(items) == 1 else f"{len(items)} {noun}s: ") + ", ".join(items)


def _one_metric(
    df: pd.DataFrame, metric: str, col: str, higher: bool, kind: str, settings: list[str], source: str = "sweep table"
) -> MetricRecommendation:
    d = df[["_setting", "_condition", "replication", col]].dropna(subset=[col])
    # A setting repeats at points that differ only in another family's parameters: the same runs, one sample.
    per_rep = d.groupby(["_setting", "_condition", "replication"], sort=False)[col].mean()
    stats = per_rep.groupby(level=["_setting", "_condition"], sort=False).agg(["mean", "std", "count"])
    conds = list(dict.fromkeys(d._condition))
    grid = stats["mean"].unstack("_condition").reindex(index=[s for s in settings if s in set(d._setting)], columns=conds)
    # Compare where every setting ran; a condition some settings miss is left out, and named.
    dropped = {c: [s for s in grid.index if pd.isna(grid.loc[s, c])] for c in conds if grid[c].isna().any()}
    if len(dropped) == len(conds):
        missing: dict[str, list[str]] = {}
        for c, ss in dropped.items():
            for s in ss:
                missing.setdefault(s, []).append(c)
        what = "; ".join(f"setting {s} was not run in {_listing(missing[s], 'condition')}" for s in settings if s in missing)
        raise ScenarioError(
            source,
            "",
            f"{metric}: cannot rank, no condition has every setting: {what} "
            "(choose settings with --policy, or sweep the same grid in every condition)",
        )
    conds = [c for c in conds if c not in dropped]
    grid = grid[conds]
    best = grid.max(axis=0) if higher else grid.min(axis=0)
    gap = (best - grid) if higher else (grid - best)
    regret = gap.copy()
    if kind == "relative":
        for c in conds:  # a best of 0 leaves no scale: equal is 0, anything else infinitely worse
            regret[c] = gap[c] / abs(best[c]) if best[c] != 0 else gap[c].where(gap[c] == 0, math.inf)
    order = list(grid.index)
    ranking = pd.DataFrame(
        {
            "setting": order,
            "max_regret": [float(regret.loc[s].max()) for s in order],
            "mean_regret": [float(regret.loc[s].mean()) for s in order],
            "worst_condition": [str(regret.loc[s].idxmax()) for s in order],
        }
    )
    ranking["_pos"] = range(len(ranking))
    ranking = ranking.sort_values(["max_regret", "mean_regret", "_pos"], kind="stable").drop(columns="_pos").reset_index(drop=True)
    ranking.insert(0, "rank", range(1, len(ranking) + 1))
    rec = ranking.setting.iloc[0]
    runner = ranking.setting.iloc[1] if len(ranking) > 1 else None

    rows = []
    for s in ranking.setting:
        for c in conds:
            st = stats.loc[(s, c)]
            n = int(st["count"])
            half = t975(n - 1) * float(st["std"]) / math.sqrt(n) if n > 1 else math.nan
            rows.append(
                {
                    "setting": s,
                    "condition": c,
                    "mean": float(st["mean"]),
                    "ci95": half,
                    "n": n,
                    "best": float(best[c]),
                    "regret": float(regret.loc[s, c]),
                }
            )
    cells = pd.DataFrame(rows)

    paired_rows = []
    if runner is not None:
        reps = {key: g.droplevel([0, 1]) for key, g in per_rep.groupby(level=[0, 1], sort=False)}
        for c in conds:
            a, b = reps[(rec, c)], reps[(runner, c)]
            diff = (a - b) if higher else (b - a)  # > 0: the recommendation is better here
            diff = diff.dropna()
            n = len(diff)
            mean = float(diff.mean()) if n else math.nan
            half = t975(n - 1) * float(diff.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
            paired_rows.append({"condition": c, "n": n, "diff_mean": mean, "diff_ci95": half})
    paired = pd.DataFrame(paired_rows, columns=["condition", "n", "diff_mean", "diff_ci95"])
    spec = str(df.loc[df._setting == rec, "spec"].iloc[0])
    return MetricRecommendation(metric, col, higher, kind, rec, runner, ranking, cells, paired, dropped, spec)


def format_recommendation(r: Recommendation, top: int = 10) -> str:
    """The recommendation as a person reads it: per metric, the answer, the runner-up, and the tables."""
    lines = [
        f"{r.settings} setting(s) of {', '.join(r.families or r.policies)} across {r.conditions} condition(s); "
        "regret = the gap to the best setting in a condition (lower is better)"
    ]
    for metric, m in r.metrics.items():
        unit = METRICS[metric][3]
        how = "% of the best" if m.regret_kind == "relative" else unit
        lines.append("")
        lines.append(f"== {_TITLES[metric]} ({'higher' if m.higher_is_better else 'lower'} is better; regret in {how})")
        top_row = m.ranking.iloc[0]
        lines.append(f"recommended: {m.recommended}" + (f"  (spec {m.spec})" if m.spec and m.spec != m.recommended else ""))
        if not (m.ranking.max_regret > 0).any():  # every setting the best everywhere: nothing to choose on
            lines.append(
                f"  no condition separates the settings: all {len(m.ranking)} score the same in each of the "
                f"{m.cells.condition.nunique()} condition(s) (regret 0 everywhere), so any of them will do on this metric"
            )
        elif top_row.max_regret == 0:
            lines.append(f"  worst-case regret {_fmt_regret(0.0, m.regret_kind, unit)}: the best, or tied for it, in every condition")
        else:
            lines.append(
                f"  worst-case regret {_fmt_regret(top_row.max_regret, m.regret_kind, unit)} "
                f"(in {top_row.worst_condition}); mean regret {_fmt_regret(top_row.mean_regret, m.regret_kind, unit)}"
            )
        if m.runner_up is not None:
            ru = m.ranking.iloc[1]
            p = m.paired
            better = int((p.diff_mean > 0).sum())
            worse = int((p.diff_mean < 0).sum())
            sig_b = int(((p.diff_mean - p.diff_ci95) > 0).sum())
            sig_w = int(((p.diff_mean + p.diff_ci95) < 0).sum())
            lines.append(f"  runner-up: {m.runner_up}, worst-case regret {_fmt_regret(ru.max_regret, m.regret_kind, unit)}")
            lines.append(
                f"  against it, replication by replication: better in {better} of {len(p)} condition(s) "
                f"({sig_b} beyond the 95 % CI), worse in {worse} ({sig_w} beyond), equal in {len(p) - better - worse}"
            )
        for c, missing in m.dropped.items():
            lines.append(f"  left out condition {c}: {_listing(missing, 'setting')} not run there")
        shown = m.ranking.head(top)
        t = pd.DataFrame(
            {
                "rank": shown["rank"],
                "setting": shown.setting,
                "worst regret": [_fmt_regret(v, m.regret_kind, unit) for v in shown.max_regret],
                "mean regret": [_fmt_regret(v, m.regret_kind, unit) for v in shown.mean_regret],
                # A worst case of 0 is no worst case: the setting was the best (or tied) everywhere.
                "worst in (condition)": [c if v > 0 else "- (best in every condition)" for c, v in zip(shown.worst_condition, shown.max_regret)],
            }
        )
        lines.append("")
        lines.append(t.to_string(index=False))
        if len(m.ranking) > top:
            lines.append(f"  ... {len(m.ranking) - top} more setting(s)")
        lines.extend(_legend(m, unit))
        cells = m.cells[m.cells.setting == m.recommended]
        best_setting = m.cells.loc[m.cells.regret == 0].groupby("condition", sort=False).setting.agg(_best_by)
        t2 = pd.DataFrame(
            {
                "condition": cells.condition,
                "recommended (mean ± 95 % CI)": [
                    f"{_fmt_value(v, metric)} ± {_fmt_value(h, metric) if math.isfinite(h) else 'n/a'}" for v, h in zip(cells["mean"], cells.ci95)
                ],
                "best there": [f"{_fmt_value(v, metric)}" for v in cells.best],
                "best setting there": [best_setting.get(c, "") for c in cells.condition],
                "regret": [_fmt_regret(v, m.regret_kind, unit) for v in cells.regret],
            }
        )
        lines.append("")
        lines.append(t2.to_string(index=False))
    for note in r.notes:
        lines.append("")
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def _best_by(settings: pd.Series) -> str:
    """The setting that was best in a condition; a tie named as one."""
    names = list(settings)
    return names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more (tied)"


def _legend(m: MetricRecommendation, unit: str) -> list[str]:
    """What the ranking's columns hold, printed under it."""
    how = "% of the best" if m.regret_kind == "relative" else unit
    gap = "(best - its) / best" if m.higher_is_better else "(its - best) / best"
    if m.regret_kind != "relative":
        gap = "best - its" if m.higher_is_better else "its - best"
    return [
        f"  regret: how much worse than the best setting in that condition, in {how} ({gap}; 0 = the best there);",
        f"  worst = the largest over the {m.cells.condition.nunique()} condition(s), mean = their mean; worst in: where the worst is.",
        *(CONVERGENCE_MEANS.split("\n") if m.metric == "convergence" else []),
    ]


def write_html(r: Recommendation, path: str | Path) -> Path:
    """One HTML file with a regret heatmap per metric (plotly.js inlined once: it opens offline)."""
    import plotly.io as pio

    parts = []
    for i, metric in enumerate(r.metrics):
        fig = r.figure(metric)
        parts.append(pio.to_html(fig, include_plotlyjs=(i == 0), full_html=False))
    body = "\n".join(f"<section>{p}</section>" for p in parts)
    text = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>pathsel recommend</title></head>\n'
        f"<body>\n<h1>pathsel recommend</h1>\n<pre>{_escape(format_recommendation(r))}</pre>\n{body}\n</body></html>\n"
    )
    return write_atomic(path, text)  # the old file or the new one, never half


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
