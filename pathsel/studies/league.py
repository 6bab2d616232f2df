"""The league: every built-in path selector at its shipped defaults, over a library of good days and bad.

For each scenario of the library (``sims/library/``) every policy runs at
its defaults on the same seeds (``replications`` of them, spawned from the
file's seed or ``seed``), through :func:`pathsel.studies.sweep.sweep` (so a
results file resumes and Dask runs it). Per scenario, the best policy sets
the bar; a policy's **regret** there is how far it falls short:

* IOPS: ``(best - mine) / best`` (0: it was the best; 0.25: a quarter fewer);
* p99 and p99.9 latency: ``mine / best - 1`` (0.5: half as long again);

on the means over replications. A policy's standing is its **worst-case
regret** over the library, IOPS and p99 each, ranked by the larger of the
two, then by the mean: the selector that is never far from the best, the
safest one to ship. Failed I/Os and recovery time after faults are shown
beside it.

Regret as the yardstick for a choice that must hold across conditions:
Leonard J. Savage, "The Theory of Statistical Decision", JASA 46(253),
1951 (the minimax-regret criterion).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..data import EXAMPLES
from ..errors import ScenarioError
from ..outputs import write_atomic
from ..policies.oracle import NOT_SHIPPED
from ..policies.registry import BUILTIN
from .sweep import sweep
from .table import CONVERGENCE_BAND, read_table

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "League",
    "league",
    "standings",
    "sensitivity",
    "library_files",
    "contenders",
    "category",
    "CATEGORIES",
    "OURS",
    "TARGET_IOPS_GAP",
    "SENSITIVITY_GRID",
    "sensitivity_markdown",
    "BAR",
    "TIMEOUT_SCALE",
    "scaled_timeouts",
    "table_extra",
]

OURS = "guard"  # pathsel's own selector (pathsel/policies/guard.py)
TARGET_IOPS_GAP = 0.05  # the design target: never more than 5 % behind the best shipped policy on IOPS
BAR = "oracle"  # the clairvoyant bound (pathsel/policies/oracle.py): every policy's gap to it, never "the best shipped"
# The hosts' io_timeout and apd_timeout in a league run, as a fraction of the scenario's: runs last 0.25 to 3 s, so at
# 30 s and 140 s no lost command would ever fail within one; at 1/100 (300 ms, 1.4 s) faults that outlast them show.
TIMEOUT_SCALE = 0.01
CATEGORIES = ("seed", "metro", "fabric", "gray", "neighbour", "scale", "mixed", "load", "failover", "fresh")


def library_files(folder: str | Path | None = None) -> list[Path]:
    """The library's scenario files, sorted: ``sims/library/*.toml`` (or every ``.toml`` in ``folder``)."""
    where = Path(folder) if folder is not None else EXAMPLES / "library"
    if not where.is_dir():
        raise ScenarioError(str(where), "", "is not a folder of scenario files")
    files = sorted(where.glob("*.toml"))
    if not files:
        raise ScenarioError(str(where), "", "holds no .toml scenario files")
    return files


def contenders(include_ours: bool = True) -> list[str]:
    """Every built-in policy by name (its shipped defaults); ``guard`` last, or left out."""
    names = [d.name for d in BUILTIN if d.name != OURS]
    return names + [OURS] if include_ours else names


def category(scenario: str) -> str:
    """``gray-slow-path`` -> ``gray``: the part of a library file's name before the first ``-``."""
    head = scenario.split("-", 1)[0]
    return head if head in CATEGORIES else "other"


def _regret(x: pd.Series, higher: bool, shipped: pd.Series | None = None) -> pd.Series:
    """Per scenario: how far each policy falls short of the best shipped one (``shipped``: which rows are; all by
    default), relative to it (inf when it has no value). The oracle, not shipped, may come out below 0."""
    pool = x if shipped is None or not shipped.any() else x[shipped]
    best = pool.max() if higher else pool.min()
    if not math.isfinite(best) or best <= 0:
        return pd.Series([0.0 if v == best else math.inf for v in x], index=x.index)
    r = (best - x) / best if higher else x / best - 1.0
    return r.fillna(math.inf)


def standings(table: pd.DataFrame | str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """From a league's results table (a sweep's without parameters): ``(scores, standings)``.

    ``scores``: one row per scenario x policy: means over replications of
    IOPS, p99, p99.9, failed I/Os and convergence, and the regrets.
    ``standings``: one row per policy, best first: worst-case and mean
    regret (IOPS, p99), the scenario of each worst case, the worst p99.9
    regret, the scenarios where it was more than 5 % behind the best IOPS,
    failed I/Os summed over scenarios (means per run), the mean and longest
    recovery over the scenarios with faults in the measured window (each the
    mean over replications of :func:`pathsel.studies.table.convergence_time`:
    IOPS back within 10 % of its level before the faults, from the last one;
    to the end of the run when it never is).
    """
    source = str(table) if not isinstance(table, pd.DataFrame) else "league table"
    if not isinstance(table, pd.DataFrame):
        table = read_table(table)
    if table.empty:
        raise ScenarioError(source, "", "the table has no rows")
    for col in ("scenario", "policy", "replication", "iops", "p99_us", "p999_us", "convergence_s"):
        if col not in table:
            raise ScenarioError(source, "", f"not a league table (no column {col!r})")
    if "point" in table and (table.groupby("scenario").point.nunique() > 1).any():
        raise ScenarioError(
            source,
            "",
            "holds a sweep over parameters (several points per scenario): rank settings with "
            "pathsel recommend; a league runs every policy at its defaults",
        )
    t = table.copy()
    if "failed" not in t:
        t["failed"] = 0
    g = t.groupby(["scenario", "policy"], sort=False)
    scores = g.agg(
        iops=("iops", "mean"),
        p99_us=("p99_us", "mean"),
        p999_us=("p999_us", "mean"),
        failed=("failed", "mean"),
        convergence_s=("convergence_s", "mean"),
        replications=("replication", "nunique"),
    ).reset_index()
    # A scenario counts only where every policy ran in it.
    policies = list(dict.fromkeys(t.policy))
    full = scores.groupby("scenario").policy.nunique() == len(policies)
    scores = scores[scores.scenario.isin(full[full].index)].copy()
    if scores.empty:
        raise ScenarioError(source, "", "no scenario has every policy's runs")
    scores["category"] = [category(s) for s in scores.scenario]
    shipped = ~scores.policy.isin(NOT_SHIPPED)
    for col, metric, higher in (("regret_iops", "iops", True), ("regret_p99", "p99_us", False), ("regret_p999", "p999_us", False)):
        scores[col] = scores.groupby("scenario")[metric].transform(lambda x, h=higher: _regret(x, h, shipped.loc[x.index]))
    # the gap to the clairvoyant bound, as regret is to the best shipped policy (NaN without an oracle run)
    bar = scores[scores.policy == BAR].set_index("scenario")
    bar_iops = scores.scenario.map(bar.iops) if len(bar) else pd.Series(math.nan, index=scores.index)
    bar_p99 = scores.scenario.map(bar.p99_us) if len(bar) else pd.Series(math.nan, index=scores.index)
    scores["gap_iops"] = ((bar_iops - scores.iops) / bar_iops).where(bar_iops > 0)
    scores["gap_p99"] = (scores.p99_us / bar_p99 - 1.0).where(bar_p99 > 0)

    rows = []
    for pol, s in scores.groupby("policy", sort=False):
        i_iops, i_p99 = s.regret_iops.idxmax(), s.regret_p99.idxmax()
        rows.append(
            {
                "policy": pol,
                "worst_iops_regret": float(s.regret_iops.max()),
                "worst_iops_scenario": str(s.scenario[i_iops]),
                "worst_p99_regret": float(s.regret_p99.max()),
                "worst_p99_scenario": str(s.scenario[i_p99]),
                "mean_iops_regret": float(s.regret_iops.mean()),
                "mean_p99_regret": float(s.regret_p99.mean()),
                "worst_p999_regret": float(s.regret_p999.max()),
                "behind_5pct": int((s.regret_iops > TARGET_IOPS_GAP + 1e-12).sum()),
                "failed": float(s.failed.sum()),
                "max_recovery_s": float(s.convergence_s.max()) if s.convergence_s.notna().any() else math.nan,
                "mean_recovery_s": float(s.convergence_s.mean()) if s.convergence_s.notna().any() else math.nan,
                "scenarios": int(len(s)),
                **_gaps(s),
            }
        )
    st = pd.DataFrame(rows)
    st["minimax"] = st[["worst_iops_regret", "worst_p99_regret"]].max(axis=1)
    st["_mean"] = st[["mean_iops_regret", "mean_p99_regret"]].mean(axis=1)
    st["_bar"] = st.policy.isin(NOT_SHIPPED)  # the bound first, unranked (rank 0); then the shipped, ranked
    st = st.sort_values(["_bar", "minimax", "_mean", "policy"], ascending=[False, True, True, True], kind="stable")
    st = st.drop(columns=["_mean", "_bar"]).reset_index(drop=True)
    n_bar = int(st.policy.isin(NOT_SHIPPED).sum())
    st.insert(0, "rank", [0] * n_bar + list(range(1, len(st) - n_bar + 1)))
    return scores.reset_index(drop=True), st


BEATS_BAR = 0.01  # a policy "beats the oracle" in a scenario when its IOPS or p99 is more than 1 % better


def _gaps(s: pd.DataFrame) -> dict[str, Any]:
    """One policy's gap to the oracle over its scenarios: worst (and where), mean, and where it beat the bound."""
    gi, gp = s.gap_iops, s.gap_p99
    if gi.notna().sum() == 0:
        nan = math.nan
        return {
            "worst_iops_gap": nan,
            "worst_iops_gap_scenario": "",
            "worst_p99_gap": nan,
            "worst_p99_gap_scenario": "",
            "mean_iops_gap": nan,
            "mean_p99_gap": nan,
            "beats_bar": 0,
        }
    return {
        "worst_iops_gap": float(gi.max()),
        "worst_iops_gap_scenario": str(s.scenario[gi.idxmax()]),
        "worst_p99_gap": float(gp.max()),
        "worst_p99_gap_scenario": str(s.scenario[gp.idxmax()]),
        "mean_iops_gap": float(gi.mean()),
        "mean_p99_gap": float(gp.mean()),
        "beats_bar": int(((gi < -BEATS_BAR) | (gp < -BEATS_BAR)).sum()),
    }


@dataclass
class League:
    """What a league measured: the results ``table`` (one row per scenario x policy x replication), ``scores``, ``standings``."""

    table: pd.DataFrame
    scores: pd.DataFrame
    standings: pd.DataFrame
    out: Path | None = None
    wall_s: float = 0.0
    ran: int = 0
    reused: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def scenarios(self) -> list[str]:
        return list(dict.fromkeys(self.scores.scenario))

    @property
    def _has_bar(self) -> bool:
        return bool(self.standings.policy.isin(NOT_SHIPPED).any())

    @property
    def _timeouts(self) -> float | None:
        t = self.extra.get("timeout_scale")
        return float(t) if t is not None else None

    def verdict(self, ours: str = OURS) -> list[str]:
        """Sentences on the design targets: ``ours`` against every other policy (the shipped ones)."""
        st = self.standings.set_index("policy")
        if ours not in st.index:
            return []
        shipped = st.drop(index=[ours, *(b for b in NOT_SHIPPED if b in st.index)])
        if shipped.empty:
            return []
        me = st.loc[ours]
        out = []
        for metric, col in (("IOPS", "worst_iops_regret"), ("p99", "worst_p99_regret")):
            best_other = shipped[col].idxmin()
            mine, theirs = float(me[col]), float(shipped[col].min())
            word = "lower than" if mine < theirs else ("equal to" if mine == theirs else "higher than")
            out.append(
                f"{ours}: worst-case {metric} regret {_pct(mine)} ({me[col.replace('regret', 'scenario')]}), "
                f"{word} the best shipped policy's, {best_other} {_pct(theirs)} ({shipped.loc[best_other, col.replace('regret', 'scenario')]})"
            )
        # IOPS against the best *shipped* policy, scenario by scenario
        sc = self.scores
        others = sc[(sc.policy != ours) & ~sc.policy.isin(NOT_SHIPPED)].groupby("scenario").iops.max()
        mine_iops = sc[sc.policy == ours].set_index("scenario").iops
        gap = ((others - mine_iops) / others).dropna()
        worst = gap.idxmax() if len(gap) else None
        behind = gap[gap > TARGET_IOPS_GAP + 1e-12]
        if worst is not None:
            out.append(
                f"{ours}: at most {_pct(max(float(gap.max()), 0.0))} behind the best shipped policy on IOPS ({worst}); "
                + (f"more than 5 % behind in {len(behind)} scenario(s): {', '.join(behind.index)}" if len(behind) else "never more than 5 % behind")
            )
        if math.isfinite(float(me.get("worst_iops_gap", math.nan))):
            out.append(
                f"{ours}: worst gap to {BAR} {_pct(float(me.worst_iops_gap))} on IOPS ({me.worst_iops_gap_scenario}), "
                f"{_pct(float(me.worst_p99_gap))} on p99 ({me.worst_p99_gap_scenario}); "
                f"better than {BAR} by more than 1 % in {int(me.beats_bar)} scenario(s)"
            )
        return out

    def text(self, top: int | None = None) -> str:
        """The league table as a person reads it, then the verdict on ``guard``."""
        st = self.standings if top is None else self.standings.head(top)
        head = (
            f"{'#':>2}  {'policy':<28} {'worst IOPS regret':>18}  {'worst p99 regret':>17}  {'mean IOPS regret':>16}  {'mean p99 regret':>15}  "
            f"{'>5% behind':>10}  {'failed I/Os':>11}  {'mean recovery':>13}  {'oracle gap IOPS':>15}  {'oracle gap p99':>14}"
        )
        lines = [
            f"league: {len(self.standings)} policies x {len(self.scenarios)} scenarios x {int(self.scores.replications.max())} replication(s)",
            "",
            head,
            "-" * len(head),
        ]
        for r in st.itertuples():
            lines.append(
                f"{_rank(r.rank):>2}  {r.policy:<28} {_pct(r.worst_iops_regret):>18}  {_pct(r.worst_p99_regret):>17}  "
                f"{_pct(r.mean_iops_regret):>16}  {_pct(r.mean_p99_regret):>15}  {r.behind_5pct:>10}  {r.failed:>11,.0f}  "
                f"{_secs(r.mean_recovery_s):>13}  {_gap(getattr(r, 'worst_iops_gap', math.nan)):>15}  "
                f"{_gap(getattr(r, 'worst_p99_gap', math.nan)):>14}"
            )
        lines.append("")
        lines.extend(legend(len(self.scenarios), self._has_bar, self._timeouts))
        lines.append("")
        lines.append("worst cases (IOPS; p99):")
        lines.extend(f"  {r.policy}: {r.worst_iops_scenario}; {r.worst_p99_scenario}" for r in st.head(5).itertuples())
        lines.extend(self.verdict())
        return "\n".join(lines) + "\n"

    def markdown(self) -> str:
        """The league table in Markdown (docs/league.md)."""
        rows = [
            "| # | policy | worst IOPS regret (scenario) | worst p99 regret (scenario) | mean IOPS regret | mean p99 regret | worst p99.9 regret | > 5 % behind on IOPS | failed I/Os | mean recovery | worst gap to oracle, IOPS (scenario) | worst gap to oracle, p99 (scenario) | mean gap to oracle (IOPS; p99) | beats oracle |",
            "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|",
        ]
        for r in self.standings.itertuples():
            gi, gp = getattr(r, "worst_iops_gap", math.nan), getattr(r, "worst_p99_gap", math.nan)
            gaps = (
                f"{_gap(gi)} ({r.worst_iops_gap_scenario}) | {_gap(gp)} ({r.worst_p99_gap_scenario}) | "
                f"{_gap(r.mean_iops_gap)}; {_gap(r.mean_p99_gap)} | {r.beats_bar}"
                if math.isfinite(gi)
                else "- | - | - | -"
            )
            rows.append(
                f"| {_rank(r.rank)} | `{r.policy}` | {_pct(r.worst_iops_regret)} ({r.worst_iops_scenario}) | "
                f"{_pct(r.worst_p99_regret)} ({r.worst_p99_scenario}) | {_pct(r.mean_iops_regret)} | "
                f"{_pct(r.mean_p99_regret)} | {_pct(r.worst_p999_regret)} | {r.behind_5pct} | {r.failed:,.0f} | "
                f"{_secs(r.mean_recovery_s)} | {gaps} |"
            )
        return "\n".join(rows) + "\n\n" + "\n".join(legend(len(self.scenarios), self._has_bar, self._timeouts)) + "\n"

    def heatmap(self, metric: str = "iops") -> go.Figure:
        """A plotly heatmap of regret, policies (best first) by scenarios (grouped by category)."""
        import plotly.graph_objects as go

        col = {"iops": "regret_iops", "p99": "regret_p99", "p999": "regret_p999"}[metric]
        order = list(self.standings.policy)
        cols = sorted(self.scenarios, key=lambda s: (CATEGORIES.index(category(s)) if category(s) in CATEGORIES else 99, s))
        grid = self.scores.pivot(index="policy", columns="scenario", values=col).reindex(index=order, columns=cols)
        z = grid.to_numpy(dtype=float) * 100
        shown = [[("inf" if not math.isfinite(v) else f"{v:.0f}") for v in row] for row in z]
        capped = [[min(v, 100.0) if math.isfinite(v) else 100.0 for v in row] for row in z]
        title = {
            "iops": "IOPS regret: % fewer IOPS than the best policy",
            "p99": "p99 regret: % longer p99 than the best policy",
            "p999": "p99.9 regret: % longer p99.9 than the best policy",
        }[metric]
        fig = go.Figure(
            go.Heatmap(
                z=capped,
                x=cols,
                y=order,
                text=shown,
                texttemplate="%{text}",
                textfont={"size": 9},
                colorscale=[[0, "#f7fbff"], [0.05, "#c6dbef"], [0.25, "#fdae6b"], [1, "#a50f15"]],
                zmin=0,
                zmax=100,
                colorbar={"title": {"text": "% (100+ capped)"}},
                hovertemplate="%{y}<br>%{x}<br>regret %{text} %<extra></extra>",
            )
        )
        # No fixed width: the figure fills its page (a laptop's 1366 px holds 40 scenarios); height grows with the rows.
        fig.update_layout(
            title=title + " (0 = the best; rows ranked by worst case)",
            height=220 + 22 * len(order),
            margin={"l": 200, "r": 20, "b": 210, "t": 60},
            yaxis={"autorange": "reversed"},
            xaxis={"tickangle": -60},
        )
        return fig

    def write_html(self, path: str | Path) -> Path:
        """The league table and both heatmaps in one offline HTML file."""
        import html

        import plotly.io as pio

        parts = [pio.to_html(self.heatmap(m), include_plotlyjs=(i == 0), full_html=False) for i, m in enumerate(("iops", "p99"))]
        text = (
            '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>pathsel league</title></head>\n<body>\n'
            f"<h1>pathsel league</h1>\n<pre>{html.escape(self.text())}</pre>\n"
            + "\n".join(f"<section>{p}</section>" for p in parts)
            + "\n</body></html>\n"
        )
        return write_atomic(path, text)  # the old file or the new one, never half


def legend(scenarios: int, bar: bool = False, timeouts: float | None = None) -> list[str]:
    """What the league table's columns hold, printed under it (text and Markdown alike)."""
    band = f"{CONVERGENCE_BAND * 100:g} %"
    more = []
    if bar:
        more += [
            f"oracle gap: the same measures against {BAR}, a clairvoyant selector (not shippable: it reads the",
            "  engine's true state; regret is against the shipped policies only).",
            "  Worst over the scenarios. Greedy, so not a proven bound: a policy may beat it",
            "  (a gap below 0; beats oracle: scenarios where it did by more than 1 % on IOPS or p99).",
        ]
    if timeouts is not None:
        more += [
            f"timeouts: each host's io_timeout and apd_timeout x {timeouts:g} (30 s and 140 s: {30 * timeouts:g} s and",
            f"  {140 * timeouts:g} s), so that faults outlasting them fail I/Os within these short runs.",
        ]
    return [
        "regret: how much worse than the best policy in that scenario, in % (0 % = the best there):",
        "  IOPS regret = (best IOPS - its IOPS) / best IOPS; p99 regret = its p99 / best p99 - 1.",
        f"worst = the largest over the {scenarios} scenario(s), mean = their mean; ranked by the larger",
        "  worst, then the means. >5% behind: scenarios with an IOPS regret over 5 %. failed I/Os:",
        "  summed over the scenarios (mean per run). mean recovery: seconds from the last fault until",
        f"  IOPS is back within {band} of its level before the first, mean over the scenarios with a",
        "  fault in the measured window (-: none had one).",
        *more,
    ]


def _rank(r: int) -> str:
    """The rank as the tables print it: the oracle (rank 0) is the bar, not a contender."""
    return "-" if r == 0 else str(r)


def _gap(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x * 100:.1f} %"


def _secs(x: float) -> str:
    """A recovery time; "-" when no scenario had a fault in its measured window."""
    return "-" if not math.isfinite(x) else f"{x:.2f} s"


def _pct(x: float) -> str:
    if not math.isfinite(x):
        return "inf"
    return f"{x * 100:.1f} %"


def league(
    scenarios: Any = None,
    *,
    policies: Iterable[str] | None = None,
    replications: int = 3,
    seed: int | None = None,
    duration: float | str | None = None,
    engine: str = "fast",
    out: str | Path | None = None,
    executor: Executor | str | None = None,
    workers: int | None = None,
    progress: bool = False,
    timeout_scale: float | None = TIMEOUT_SCALE,
    _origin: str = "league()",
) -> League:
    """Run every policy (default: :func:`contenders`) at its defaults over ``scenarios`` (default: the library).

    ``scenarios``: files, a folder, or loaded scenarios; each file's own
    policies are replaced. ``replications``, ``seed``, ``duration``,
    ``engine``, ``out``, ``executor`` and ``workers`` are
    :func:`pathsel.studies.sweep.sweep`'s: the same seeds give the same
    table, a results file resumes, a Dask executor runs it on a cluster.
    ``timeout_scale``: each host's ``io_timeout`` and ``apd_timeout`` are
    multiplied by it in scenario files (:data:`TIMEOUT_SCALE`; None: as the
    files give them), so that faults which outlast them fail I/Os within
    runs of a few seconds; loaded scenarios run as they are.
    """
    pols = list(policies) if policies is not None else contenders()
    if len(pols) < 2:
        raise ScenarioError(_origin, "policies", "a league needs two policies or more")
    if scenarios is None:
        scenarios = library_files()
    elif isinstance(scenarios, (str, Path)) and Path(scenarios).is_dir():
        scenarios = library_files(scenarios)
    scenarios = scaled_timeouts(scenarios, timeout_scale, _origin)
    scale = 1.0 if timeout_scale is None else float(timeout_scale)
    res = sweep(
        scenarios,
        {},
        replications=replications,
        seed=seed,
        policies=pols,
        duration=duration,
        engine=engine,
        out=out,
        executor=executor,
        workers=workers,
        progress=progress,
        _origin=_origin,
        _tags={"timeout_scale": scale},  # in the table, so that resume checks it and a saved table says how it was made
    )
    scores, st = standings(res.table)
    return League(res.table, scores, st, out=res.out, wall_s=res.wall_s, ran=res.ran, reused=res.reused, extra=table_extra(res.table))


def table_extra(table: pd.DataFrame, source: str = "<table>") -> dict[str, Any]:
    """What a league table says of how it was made: its ``timeout_scale`` (left out when 1 or absent: as written).

    Checked on read as ``--timeout-scale`` is on write: every row's a number in (0, 1], and one for the whole table
    (a saved table is edited or spliced by hand; a scale of -1 was ranked and printed as "x -1")."""
    if "timeout_scale" not in table.columns or table.empty:
        return {}
    values = table.timeout_scale.tolist()
    for i, v in enumerate(values):
        number = v.item() if isinstance(v, np.generic) else v  # numpy's scalars as Python's, which the check knows
        check_timeout_scale(number, source, f"row {i + 1}, column timeout_scale")
    scales = sorted(set(float(v) for v in values))
    if len(scales) > 1:
        j = next(i for i, v in enumerate(values) if float(v) != float(values[0]))
        raise ScenarioError(
            source, f"row {j + 1}, column timeout_scale", f"{values[j]!r} where row 1 has {values[0]!r}: one table, one scale (runs of two leagues?)"
        )
    return {"timeout_scale": scales[0]} if scales[0] != 1 else {}


def scaled_timeouts(scenarios: Any, factor: float | None, origin: str = "league()") -> Any:
    """``scenarios`` with every host's ``io_timeout`` and ``apd_timeout`` (their defaults, 30 s and 140 s, when a file
    gives none; ``never`` stays never) times ``factor``, never below the 10 us floor every timeout has: each file
    loaded and validated first (a bad value is refused as ``pathsel simulate`` refuses it, in the user's own words),
    then its validated hosts scaled, and named by its file name as a sweep names a file. Loaded scenarios, and
    everything when ``factor`` is None or 1, pass through unchanged."""
    if factor is None:
        return scenarios
    check_timeout_scale(factor, origin, "timeout_scale")
    if factor == 1:
        return scenarios
    from ..scenario.load import load_scenario

    single = isinstance(scenarios, (str, Path))
    out = []
    for s in [scenarios] if single else list(scenarios):
        if not isinstance(s, (str, Path)):
            out.append(s)
            continue
        sc = load_scenario(s)  # every read and validation error, located, exit 2 (as for `pathsel simulate`)
        hosts = tuple(
            h.model_copy(update={"io_timeout": _scaled(h.io_timeout, factor), "apd_timeout": _scaled(h.apd_timeout, factor)}) for h in sc.model.hosts
        )
        # the table names a scenario by its file, as for a file given as it is
        model = sc.model.model_copy(update={"hosts": hosts, "name": Path(s).stem})
        out.append(type(sc)(model, sc.source, sc.runs))
    return out[0] if single else out


def check_timeout_scale(factor: Any, origin: str, place: str) -> float:
    """``factor`` if it is a finite number in (0, 1], else a located ScenarioError."""
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) or not 0 < factor <= 1:
        raise ScenarioError(origin, place, f"must be a number in (0, 1] (1: the files' own timeouts), got {factor!r}")
    return float(factor)


def _scaled(seconds: float, factor: float) -> float:
    """A validated timeout (inf: never) times ``factor``, clamped to the 10 us floor a file may not go below."""
    from ..limits import MIN_TIMEOUT

    return seconds if math.isinf(seconds) else max(seconds * factor, MIN_TIMEOUT)


# One parameter at a time around guard's defaults: the grid docs/league.md shows.
SENSITIVITY_GRID: dict[str, list[Any]] = {
    "eject_ratio": [1.5, 2.0, 3.0, 5.0, 10.0],
    "decay": [0.01, 0.05, 0.25, 1.0],
    "hold": [0.1, 0.5, 2.0],
    "slow_start": [0, 8, 64],
    "tail_z": [0.0, 0.5, 1.0, 2.0],
    "probe": [0.01, 0.05, 0.25, 1.0],
    "numa": [0.0, 0.5, 1.0, 2.0],
}


def sensitivity(
    base: League,
    grid: dict[str, list[Any]] | None = None,
    *,
    scenarios: Any = None,
    replications: int | None = None,
    seed: int | None = None,
    duration: float | str | None = None,
    executor: Executor | str | None = None,
    workers: int | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """``guard``'s regret against the best *shipped* policy of ``base`` (a league run) as one parameter moves.

    Each parameter of ``grid`` (default :data:`SENSITIVITY_GRID`) takes its
    values with the others at their defaults, over the same scenarios and
    seeds as ``base`` (pass the same ``scenarios``, ``replications``,
    ``seed`` and ``duration``). One row per parameter value: worst-case and
    mean regret on IOPS and p99, the scenarios more than 5 % behind on IOPS,
    and whether it is the default.
    """
    from ..policies.registry import POLICY_DEFS

    grid = grid or SENSITIVITY_GRID
    defn = POLICY_DEFS[OURS]
    defaults = {p.name: p.default for p in defn.params}
    specs, labels = [], []  # one run label per (parameter, value); every default value is the one "guard (defaults)" run
    for name, values in grid.items():
        if name not in defaults:
            raise ScenarioError("sensitivity()", name, f"guard has no parameter {name!r} (it has {', '.join(defaults)})")
        for v in values:
            dflt = v == defaults[name]
            specs.append(f"{OURS}:label={OURS} (defaults)" if dflt else f"{OURS}:{name}={v},label={OURS} {name}={v}")
            labels.append((name, v))
    if scenarios is None:
        scenarios = library_files()
    elif isinstance(scenarios, (str, Path)) and Path(scenarios).is_dir():
        scenarios = library_files(scenarios)
    scenarios = scaled_timeouts(scenarios, base.extra.get("timeout_scale"), "sensitivity()")  # as the league ran them
    reps = replications if replications is not None else int(base.scores.replications.max())
    res = sweep(
        scenarios,
        {},
        replications=reps,
        seed=seed,
        policies=list(dict.fromkeys(specs)),
        duration=duration,
        engine="fast",
        executor=executor,
        workers=workers,
        progress=progress,
        _origin="sensitivity()",
    )
    mine = res.table.groupby(["scenario", "policy"], sort=False).agg(iops=("iops", "mean"), p99_us=("p99_us", "mean")).reset_index()
    shipped = base.scores[(base.scores.policy != OURS) & ~base.scores.policy.isin(NOT_SHIPPED)]
    best_iops = shipped.groupby("scenario").iops.max()
    best_p99 = shipped.groupby("scenario").p99_us.min()
    rows = []
    for spec, (name, value) in zip(specs, labels):
        m = mine[mine.policy == spec.rsplit("label=", 1)[1]].set_index("scenario")
        common = m.index.intersection(best_iops.index)
        r_iops = ((best_iops[common] - m.iops[common]) / best_iops[common]).clip(lower=0.0)
        r_p99 = (m.p99_us[common] / best_p99[common] - 1.0).clip(lower=0.0).fillna(math.inf)
        rows.append(
            {
                "parameter": name,
                "value": value,
                "default": value == defaults[name],
                "worst_iops_regret": float(r_iops.max()),
                "worst_iops_scenario": str(r_iops.idxmax()),
                "worst_p99_regret": float(r_p99.max()),
                "worst_p99_scenario": str(r_p99.idxmax()),
                "mean_iops_regret": float(r_iops.mean()),
                "mean_p99_regret": float(r_p99.mean()),
                "behind_5pct": int((r_iops > TARGET_IOPS_GAP + 1e-12).sum()),
                "scenarios": int(len(common)),
            }
        )
    return pd.DataFrame(rows)


def sensitivity_markdown(table: pd.DataFrame) -> str:
    """:func:`sensitivity`'s table in Markdown: regrets against the best shipped policy per scenario."""
    rows = [
        "| parameter | value | worst IOPS regret (scenario) | worst p99 regret (scenario) | mean IOPS regret | mean p99 regret | > 5 % behind |",
        "|---|---:|---|---|---:|---:|---:|",
    ]
    for r in table.itertuples():
        v = f"**{r.value:g}** (default)" if r.default else f"{r.value:g}"
        rows.append(
            f"| `{r.parameter}` | {v} | {_pct(r.worst_iops_regret)} ({r.worst_iops_scenario}) | "
            f"{_pct(r.worst_p99_regret)} ({r.worst_p99_scenario}) | {_pct(r.mean_iops_regret)} | "
            f"{_pct(r.mean_p99_regret)} | {r.behind_5pct} |"
        )
    return "\n".join(rows) + "\n"
