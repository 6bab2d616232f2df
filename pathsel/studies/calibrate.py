"""Calibration: fit a scenario's unknowns so that simulating the measured set-up reproduces the measurement.

``pathsel calibrate SCENARIO --measured FILE... --fit NAME...`` (and
:func:`calibrate`): the measured figures (IOPS, mean and p99 latency, per
path where the file has them: :mod:`pathsel.measured`; without
``--measured``, the scenario's own ``expect`` figures) are **targets**; the
unknowns named (:mod:`pathsel.studies.unknowns`: an array's service time, a
path's or every path's one-way latency, an array's concurrency, the
replication latency) are searched for the values whose simulation matches
them best, in the weighted least-squares sense:

    loss = sum over targets of ((simulated / measured - 1) / noise)^2

where ``noise`` is each figure's relative uncertainty: the file's own
standard error when it gives one (fio's ``iops_stddev``, the spread of
esxtop's or iostat's samples), an ``expect`` figure's ``tolerance`` / 2,
else :data:`DEFAULT_NOISE`.

How it searches: on the fast engine, with **common random numbers** (every
candidate runs on the same ``replications`` seeds, so two candidates differ
by their parameters and not by luck, and the loss is a smooth function of
them), in log space over each unknown's bounded range: a scan (9 points for
one unknown; a scrambled Sobol sample of at least 8 per unknown for more),
then a bounded refinement from the best point (Brent's method for one
unknown, ``scipy.optimize.minimize_scalar(method="bounded")``; Nelder-Mead
with bounds for more). Whole numbers (concurrency) are searched as real
numbers and rounded, then the neighbouring whole numbers are compared.

How sure it is: at the fit, ``confidence_seeds`` fresh seeds give each
target's simulation noise; central differences (±5 % in each unknown, on
the search's seeds) give the sensitivity of every target to every unknown
(d ln simulated / d ln unknown); the unknowns' 95 % range is
``exp(±1.96 σ)`` around the fit, with σ² from the inverse of JᵀWJ (W: one
over each target's total relative variance, measurement plus simulation),
scaled up by the reduced χ² when the targets disagree more than their noise
says. An unknown the targets barely move (|sensitivity| summed < 0.02) is
reported as not identifiable from them, with no range. The figures are
taken as independent; where they repeat one another (the per-path IOPS of
round robin are shares of the total), the ranges are narrower than they
should be. A residual is
**within noise** when it is within 2σ of its measurement and simulation
noise together.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..api import simulate
from ..errors import ScenarioError
from ..measured import MeasureError, Measurement, read_measurements
from ..scenario import DEFAULT_SCENARIO_NAME, RunSpec, Scenario
from ..scenario.load import parse_toml, read_text, scenario_from_data
from ..timing.distributions import delay_files_relative_to
from ..units import format_duration
from .unknowns import UNKNOWNS, Unknown, dump_toml, parse_unknown, patch_text

if TYPE_CHECKING:
    from ..results import RunResult

__all__ = ["calibrate", "Calibration", "Target", "DEFAULT_NOISE", "targets_from"]

# Relative 1-sigma noise of a figure whose file does not say how it varied.
DEFAULT_NOISE = {"iops": 0.02, "mean": 0.03, "p50": 0.05, "p99": 0.10}
_H = 0.05  # central-difference step in ln(unknown)


@dataclass(frozen=True)
class Target:
    """One measured figure to reproduce, and the run (policy) that measured it."""

    run: str
    metric: str  # iops, mean, p50, p99
    value: float
    noise: float  # relative 1-sigma
    path: str | None = None
    op: str | None = None  # read or write: compare that op's figure
    source: str = ""

    @property
    def name(self) -> str:
        what = {"iops": "IOPS", "mean": "mean", "p50": "p50", "p99": "p99"}[self.metric]
        return f"{self.run}: {what}" + (f" {self.op}" if self.op else "") + (f" path {self.path}" if self.path else "")

    def show(self, value: float) -> str:
        return f"{value:,.0f}" if self.metric == "iops" else f"{value * 1e3:.3f} ms"


def _sim_value(run: RunResult, t: Target) -> float:
    if t.path is not None:
        rows = [p for p in run.paths() if p["name"] == t.path]
        ios = sum(p["ios"] for p in rows)
        if not rows or ios == 0:
            return math.nan
        if t.metric == "iops":
            return float(sum(p["iops"] for p in rows))
        return float(sum(p["latency_us"][t.metric] * p["ios"] for p in rows) / ios * 1e-6)
    if t.op is not None:
        row = next((o for o in run.ops() if o["op"] == t.op), None)
        if row is None:
            return math.nan
        return float(row["iops"] if t.metric == "iops" else row["latency_us"][t.metric] * 1e-6)
    return run.iops if t.metric == "iops" else run.latency_us[t.metric] * 1e-6


def targets_from(sc: Scenario, measurements: Sequence[Measurement], run_label: str | None) -> tuple[list[Target], list[str]]:
    """Targets from measurements (each belongs to ``run_label``, or to the run its file names) or, with none, the expects."""
    notes: list[str] = []
    labels = [r.label for r in sc.runs]
    out: list[Target] = []
    if not measurements:
        for r in sc.runs:
            if r.expect_iops is not None:
                out.append(Target(r.label, "iops", float(r.expect_iops), r.expect_tolerance / 2, source=r.expect_source or "expect"))
        return out, notes
    for m in measurements:
        run = run_label
        if m.policy:
            match = [r.label for r in sc.runs if m.policy in (r.label, getattr(r.policy, "text", None))]
            if not match:
                raise ScenarioError(m.source, "", f"measures run {m.policy!r}, which the scenario does not run (runs: {', '.join(labels)})")
            run = match[0]
        run = run if run is not None else labels[0]
        ops = m.details.get("ops") or []
        op = ops[0] if len(ops) == 1 and ops[0] in ("read", "write") else None
        for f in m.figures:
            noise = (f.stderr / f.value) if f.stderr else DEFAULT_NOISE[f.metric]
            out.append(Target(run, f.metric, f.value, max(noise, 1e-3), f.path, f.op or op, m.source))
        notes.extend(f"{Path(m.source).name}: {n}" for n in m.notes)
    return out, notes


@dataclass
class Calibration:
    """The fit: values, their ranges, the residuals, and the calibrated scenario's text."""

    source: str
    unknowns: list[Unknown]
    fitted: list[float]
    ranges: list[tuple[float, float] | None]
    targets: list[Target]
    start_sim: list[float]
    simulated: list[float]
    sim_noise: list[float]  # relative 1-sigma of one replication's figure
    sensitivity: np.ndarray  # targets x unknowns: d ln simulated / d ln unknown
    evaluations: int
    loss: float
    text: str  # the calibrated scenario
    duration: float | None
    seeds: tuple[int, ...]
    seconds: float
    notes: list[str] = field(default_factory=list)

    @property
    def residuals(self) -> list[float]:
        return [s / t.value - 1.0 for s, t in zip(self.simulated, self.targets)]

    def total_noise(self, i: int) -> float:
        return math.hypot(self.targets[i].noise, self.sim_noise[i] / math.sqrt(len(self.seeds)))

    def within(self, i: int) -> bool:
        r = self.residuals[i]
        return math.isfinite(r) and abs(r) <= 2 * self.total_noise(i)

    @property
    def values(self) -> dict[str, float]:
        return {u.text: v for u, v in zip(self.unknowns, self.fitted)}

    def scenario(self) -> Scenario:
        data = parse_toml(self.text, self.source)
        base = Path(self.source).resolve().parent if not self.source.startswith("<") else None
        with delay_files_relative_to(base):
            return scenario_from_data(data, self.source)

    def write(self, path: str | Path) -> None:
        from ..outputs import write_atomic  # the old file or the new one, never half

        write_atomic(path, self.text)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.source,
            "unknowns": [
                {
                    "name": u.text,
                    "where": u.where,
                    "start": u.start,
                    "fitted": v,
                    "low": u.low,
                    "high": u.high,
                    "range95": list(r) if r else None,
                    "sensitivity": {t.name: float(self.sensitivity[i, j]) for i, t in enumerate(self.targets)},
                }
                for j, (u, v, r) in enumerate(zip(self.unknowns, self.fitted, self.ranges))
            ],
            "targets": [
                {
                    "run": t.run,
                    "metric": t.metric,
                    "path": t.path,
                    "op": t.op,
                    "measured": t.value,
                    "simulated": s,
                    "start": s0,
                    "residual": self.residuals[i],
                    "noise": self.total_noise(i),
                    "within_noise": self.within(i),
                    "source": t.source,
                }
                for i, (t, s, s0) in enumerate(zip(self.targets, self.simulated, self.start_sim))
            ],
            "evaluations": self.evaluations,
            "loss": self.loss,
            "seeds": list(self.seeds),
            "duration_s": self.duration,
            "seconds": self.seconds,
            "notes": self.notes,
        }

    def report(self) -> str:
        lines = [
            f"calibration of {self.source}: {len(self.unknowns)} unknown(s) fitted to {len(self.targets)} figure(s); "
            f"{self.evaluations} evaluations on {len(self.seeds)} seed(s) (common random numbers), "
            f"{'the file' + chr(39) + 's duration' if self.duration is None else format_duration(self.duration)} each, {self.seconds:.1f} s",
            "",
        ]
        rows = [["unknown", "where", "start", "fitted", "95% range", "range searched"]]
        for u, v, span in zip(self.unknowns, self.fitted, self.ranges):
            rng = f"{u.show(span[0])} .. {u.show(span[1])}" if span else "not identifiable"
            rows.append([u.kind.name, u.where, u.show(u.start), u.show(v), rng, f"{u.show(u.low)} .. {u.show(u.high)}"])
        lines += _table(rows) + [""]
        rows = [["figure", "measured", "start", "fitted", "residual", "noise (1σ)", "within noise"]]
        for i, t in enumerate(self.targets):
            r = self.residuals[i]
            rows.append(
                [
                    t.name,
                    t.show(t.value),
                    t.show(self.start_sim[i]) if math.isfinite(self.start_sim[i]) else "-",
                    t.show(self.simulated[i]) if math.isfinite(self.simulated[i]) else "-",
                    f"{r:+.1%}" if math.isfinite(r) else "-",
                    f"{self.total_noise(i):.1%}",
                    "yes" if self.within(i) else f"no ({abs(r) / self.total_noise(i):.1f}σ)" if math.isfinite(r) else "no",
                ]
            )
        lines += _table(rows)
        if len(self.unknowns):
            lines += ["", "sensitivity (d ln simulated / d ln unknown):"]
            rows = [["figure", *[u.text for u in self.unknowns]]]
            for i, t in enumerate(self.targets):
                rows.append([t.name, *[f"{self.sensitivity[i, j]:+.2f}" for j in range(len(self.unknowns))]])
            lines += _table(rows)
        for n in self.notes:
            lines.append(f"note: {n}")
        return "\n".join(lines) + "\n"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out


def _scenario_text(scenario: str | Path | None) -> tuple[str, str, Path | None]:
    if scenario is None:
        text = resources.files("pathsel.data").joinpath("examples", DEFAULT_SCENARIO_NAME).read_text(encoding="utf-8")
        return text, f"<default: {DEFAULT_SCENARIO_NAME}>", None
    # the one reader of scenario files: capped (/dev/zero), a BOM dropped, UTF-16, binary refused, located
    return read_text(scenario), str(scenario), Path(scenario).resolve().parent


def calibrate(
    scenario: str | Path | None,
    fit: Sequence[str],
    measured: Sequence[str | Path] = (),
    *,
    policy: str | None = None,
    duration: float | None = None,
    replications: int = 2,
    seed: int | None = None,
    engine: str = "fast",
    confidence_seeds: int = 4,
    device: str | None = None,
    op: str | None = None,
    max_evaluations: int = 60,
    progress: Callable[[str], None] | None = None,
    notify: Callable[[str], None] | None = None,
) -> Calibration:
    """Fit ``fit``'s unknowns (``service_time``, ``one_way_latency@remote``, ``concurrency=8..256``) to ``measured``.

    ``scenario``: the scenario file (None: the embedded Hosterman 2018 test drive).
    ``measured``: fio JSON, esxtop batch CSV, ``iostat -x`` or ``pathsel
    simulate --json`` files (none: the scenario's ``expect`` figures).
    ``policy``: the policy the measured set-up ran (default: the run a file
    names, else the scenario's first). ``duration``, ``replications`` and
    ``seed`` set each candidate's runs (seeds spawned from ``seed``, the
    scenario's by default). Raises ScenarioError for bad input.
    """
    t0 = time.perf_counter()
    if not fit:
        raise ScenarioError("command line", "--fit", f"name at least one unknown to fit ({', '.join(UNKNOWNS)})")
    if replications < 1:
        raise ScenarioError("command line", "--replications", "must be >= 1")
    text, source, base = _scenario_text(scenario)
    data = parse_toml(text, source)
    with delay_files_relative_to(base):
        sc = scenario_from_data(data, source)
    data = {k: v for k, v in data.items() if k != "sweep"}
    if policy is not None:
        sc = sc.with_policies([policy])
    measurements: list[Measurement] = []
    given: dict[Path, str] = {}
    for file in measured:
        same = Path(file).resolve()
        if same in given:  # its figures would count twice, each with the weight of a separate measurement
            twice = f"{file}" if str(file) == given[same] else f"{file} (the same file as {given[same]})"
            raise ScenarioError("command line", "--measured", f"{twice} is given twice")
        given[same] = str(file)
        try:
            measurements.extend(read_measurements(file, device=device, op=op))
        except MeasureError as e:
            raise ScenarioError(e.source, e.place, e.problem) from None
    targets, notes = targets_from(sc, measurements, sc.runs[0].label if policy is not None else None)
    if not targets:
        raise ScenarioError(
            source, "policies", "nothing to fit to: give --measured FILE, or expect = { iops = ... } figures in the scenario's policies"
        )
    notes += _workload_notes(data, measurements)
    unknowns = [parse_unknown(name, data, source) for name in fit]
    seen: set[tuple[Any, ...]] = set()
    for u in unknowns:
        key = (u.kind.section, u.kind.key, tuple(u.places))
        if key in seen:
            raise ScenarioError("command line", f"--fit {u.text}", "sets what another --fit sets")
        seen.add(key)
    runs = tuple(r for r in sc.runs if r.label in {t.run for t in targets})
    root = seed if seed is not None else sc.model.seed
    children = np.random.SeedSequence(root).spawn(replications + confidence_seeds)
    all_seeds = [int(c.generate_state(1)[0]) for c in children]
    seeds, fresh = tuple(all_seeds[:replications]), all_seeds[replications:]
    cache: dict[tuple[float, ...], np.ndarray] = {}
    count = [0]

    def run_at(values: Sequence[float], on: Sequence[int]) -> np.ndarray:
        """Per target, the simulated figure on each seed (targets x seeds)."""
        d = copy.deepcopy(data)
        for u, v in zip(unknowns, values):
            u.apply(d, v)
        with delay_files_relative_to(base):
            s = scenario_from_data(d, source)
        s = s.with_runs(tuple(r for r in (s.with_policies([policy]).runs if policy is not None else s.runs) if r.label in {x.label for x in runs}))
        out = np.empty((len(targets), len(on)))
        for k, sd in enumerate(on):
            res = simulate(s, duration=duration, seed=sd, engine=engine, notify=notify)
            by_label = {r.label: r for r in res.runs}
            for i, t in enumerate(targets):
                out[i, k] = _sim_value(by_label[t.run], t)
        return out

    def evaluate(values: Sequence[float]) -> np.ndarray:
        key = tuple(round(v) if u.integer else float(f"{v:.6g}") for u, v in zip(unknowns, values))
        if key not in cache:
            cache[key] = run_at(key, seeds).mean(axis=1)
            count[0] += 1
            if progress is not None:
                shown = ", ".join(f"{u.kind.name}={u.show(v)}" for u, v in zip(unknowns, key))
                progress(f"evaluation {count[0]}: {shown}: loss {_loss(cache[key]):.3g}")
        return cache[key]

    meas = np.array([t.value for t in targets])
    noise = np.array([t.noise for t in targets])

    def _loss(sim: np.ndarray) -> float:
        r = (sim / meas - 1.0) / noise
        r = np.where(np.isfinite(r), r, 1e3)
        return float(np.sum(r * r))

    lo = np.log([u.low for u in unknowns])
    hi = np.log([u.high for u in unknowns])

    def f(x: np.ndarray) -> float:
        return _loss(evaluate(np.exp(np.clip(x, lo, hi))))

    start = [u.start for u in unknowns]
    start_sim = evaluate(start)
    known_paths = {
        p["name"]
        for r in simulate(_at(data, unknowns, start, base, source, policy, runs), duration=0.01, seed=seeds[0], engine=engine).runs
        for p in r.paths()
    }
    dropped = [t for t in targets if t.path is not None and t.path not in known_paths]
    if dropped:
        notes.append(
            f"{len(dropped)} per-path figure(s) left out: no path {', '.join(sorted({t.path for t in dropped if t.path is not None})[:6])} in the scenario"
        )
        keep = [i for i, t in enumerate(targets) if t not in dropped]
        targets = [targets[i] for i in keep]
        meas, noise = meas[keep], noise[keep]
        start_sim = start_sim[keep]
        cache = {k: v[keep] for k, v in cache.items()}
        if not targets:
            raise ScenarioError(source, "paths", "no measured figure matches this scenario's runs and paths")
    best_x = _search(f, np.log(start), lo, hi, max_evaluations)
    best = [float(np.exp(x)) for x in best_x]
    for j, u in enumerate(unknowns):  # whole numbers: the neighbours of the rounded fit
        if u.integer:
            cands = sorted({max(int(u.low), min(int(u.high), n)) for n in (math.floor(best[j]), math.ceil(best[j]))})
            best[j] = float(min(cands, key=lambda n: f(np.log([*best[:j], n, *best[j + 1 :]]))))
    sim = evaluate(best)
    # simulation noise at the fit, on fresh seeds
    if fresh:
        spread = run_at(best, fresh)
        sim_noise = [float(np.std(row, ddof=1) / abs(np.mean(row))) if len(row) > 1 and np.mean(row) else 0.0 for row in spread]
    else:
        sim_noise = [0.0] * len(targets)
    # sensitivity by central differences on the search's seeds
    J = np.zeros((len(targets), len(unknowns)))
    for j, u in enumerate(unknowns):
        up, down = list(best), list(best)
        up[j] = min(best[j] * math.exp(_H), u.high * 1.0000001) if not u.integer else best[j] + max(1.0, round(best[j] * _H))
        down[j] = max(best[j] * math.exp(-_H), u.low) if not u.integer else max(u.low, best[j] - max(1.0, round(best[j] * _H)))
        if up[j] == down[j]:
            continue
        s_up, s_down = evaluate(up), evaluate(down)
        J[:, j] = (np.log(np.maximum(s_up, 1e-300)) - np.log(np.maximum(s_down, 1e-300))) / (math.log(up[j]) - math.log(down[j]))
    total = np.sqrt(noise**2 + (np.array(sim_noise) ** 2) / len(seeds))
    ranges = _ranges(J, total, sim / meas - 1.0, best, unknowns, notes)
    changes: list[tuple[str, int | None, str, Any, str]] = []
    text_out = text
    fitted_data = copy.deepcopy(data)
    for u, v in zip(unknowns, best):
        u.apply(fitted_data, v)
    for u, v in zip(unknowns, best):
        indices: Sequence[int | None] = u.places or [None]
        for i in indices:
            entry = fitted_data[u.kind.section] if i is None else fitted_data[u.kind.section][i]
            changes.append((u.kind.section, i, u.kind.key, entry[u.kind.key], f"calibrated ({u.kind.name}: {u.show(v)})"))
    try:
        text_out = patch_text(text, changes)
    except ValueError as e:
        notes.append(f"the file's text could not be edited in place ({e}): written afresh, without its comments")
        text_out = dump_toml(fitted_data)
    return Calibration(
        source=source,
        unknowns=unknowns,
        fitted=best,
        ranges=ranges,
        targets=targets,
        start_sim=list(start_sim),
        simulated=list(sim),
        sim_noise=sim_noise,
        sensitivity=J,
        evaluations=count[0],
        loss=_loss(sim),
        text=text_out,
        duration=duration,
        seeds=seeds,
        seconds=time.perf_counter() - t0,
        notes=notes,
    )


def _at(
    data: dict[str, Any],
    unknowns: Sequence[Unknown],
    values: Sequence[float],
    base: Path | None,
    source: str,
    policy: str | None,
    runs: Sequence[RunSpec],
) -> Scenario:
    d = copy.deepcopy(data)
    for u, v in zip(unknowns, values):
        u.apply(d, v)
    with delay_files_relative_to(base):
        s = scenario_from_data(d, source)
    if policy is not None:
        s = s.with_policies([policy])
    return s.with_runs(tuple(r for r in s.runs if r.label in {x.label for x in runs}))


def _search(f: Callable[[np.ndarray], float], x0: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: int) -> np.ndarray:
    """A bounded global scan, then a local refinement, in log space."""
    from scipy.optimize import minimize, minimize_scalar

    k = len(x0)
    if k == 1:
        grid = np.linspace(lo[0], hi[0], 9)
        vals = [f(np.array([g])) for g in grid]
        i = int(np.argmin(vals))
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        res = minimize_scalar(
            lambda x: f(np.array([x])), bounds=(a, b), method="bounded", options={"xatol": 0.003, "maxiter": max(budget - len(grid), 5)}
        )
        best = np.array([res.x]) if res.fun <= vals[i] else np.array([grid[i]])
        return best
    from scipy.stats import qmc  # seconds to import: only when there is more than one unknown

    n = 2 ** math.ceil(math.log2(8 * k))
    pts = qmc.scale(qmc.Sobol(d=k, scramble=True, seed=0).random(n), lo, hi)
    pts = np.vstack([x0, pts])
    vals = [f(p) for p in pts]
    i = int(np.argmin(vals))
    step = (hi - lo) / 8
    simplex = np.vstack([pts[i]] + [np.clip(pts[i] + np.eye(k)[j] * step[j] * (1 if pts[i][j] + step[j] <= hi[j] else -1), lo, hi) for j in range(k)])
    res = minimize(
        f,
        pts[i],
        method="Nelder-Mead",
        bounds=list(zip(lo, hi)),
        options={"initial_simplex": simplex, "xatol": 0.003, "fatol": 1e-3, "maxfev": max(budget - n, 10 * k)},
    )
    found: np.ndarray = res.x if res.fun <= vals[i] else pts[i]
    return found


def _ranges(
    J: np.ndarray, total: np.ndarray, resid: np.ndarray, best: Sequence[float], unknowns: Sequence[Unknown], notes: list[str]
) -> list[tuple[float, float] | None]:
    k = len(unknowns)
    W = np.diag(1.0 / np.maximum(total, 1e-6) ** 2)
    F = J.T @ W @ J
    weak = [j for j in range(k) if np.sum(np.abs(J[:, j])) < 0.02]
    for j in weak:
        notes.append(
            f"{unknowns[j].text} is not identifiable from these figures: they barely change with it "
            f"(sensitivity {np.sum(np.abs(J[:, j])):.3f}); its value is where the search stopped"
        )
    ok = [j for j in range(k) if j not in weak]
    out: list[tuple[float, float] | None] = [None] * k
    if not ok:
        return out
    sub = F[np.ix_(ok, ok)]
    if np.linalg.cond(sub) > 1e10:
        notes.append("the unknowns trade off against each other for these figures (JᵀWJ is singular): no ranges")
        return out
    cov = np.linalg.inv(sub)
    n, p = len(total), len(ok)
    chi2 = float(np.sum((resid / total) ** 2))
    if n > p and chi2 / (n - p) > 1:
        cov *= chi2 / (n - p)
        notes.append(f"the figures disagree more than their noise says (reduced χ² {chi2 / (n - p):.1f}): ranges widened by √ of it")
    for a, j in enumerate(ok):
        se = math.sqrt(max(cov[a, a], 0.0))
        out[j] = (best[j] * math.exp(-1.96 * se), best[j] * math.exp(1.96 * se))
    return out


def _workload_notes(data: dict[str, Any], measurements: Sequence[Measurement]) -> list[str]:
    """Where a fio job's options differ from the scenario's workload (the measured set-up should be the simulated one)."""
    notes = []
    work = (data.get("workloads") or [{}])[0]
    for m in measurements:
        job = m.details.get("job options") or {}
        for key in ("rw", "bs", "iodepth", "numjobs"):
            if key in job and key in work and str(job[key]).lower() != str(work[key]).lower():
                notes.append(f"{Path(m.source).name}: fio ran {key}={job[key]}, the scenario's workloads[0] has {key} = {work[key]}")
    return notes
