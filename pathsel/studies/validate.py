"""``pathsel validate``: run the validation cases in ``sims/validation/`` (installed with pathsel) and compare.

A case is one TOML file: a scenario (inline, or ``scenario = "other.toml"``
relative to the case file) plus a ``[validation]`` table that says where its
expected figures come from and what to compare. The table is stripped before
the scenario is validated, so the scenario schema stays as it is::

    [validation]
    case = "mva-single-server"
    source = "Reiser & Lavenberg 1980 (exact MVA)"
    duration = "2s"               # measured time of the default run (default: the scenario's `duration`)
    quick_duration = "1s"         # with --quick, the test suite's (default: duration)
    full_duration = "20s"         # with --full (default: duration)
    random_split = { p0 = 0.5, p1 = 0.5 }   # run RandomSplit with these weights instead of [[policies]]
    every_builtin_policy = true   # add every built-in policy, at its defaults, to the file's policies

    [[validation.checks]]
    metric = "iops"               # see METRICS
    run = "RR iops=1"             # a run's label; default: every run
    expected = 12345.0
    tolerance = 0.01              # on the error: error = "relative" (simulated / expected - 1) or
                                  # "absolute" (simulated - expected); the default depends on the metric
    compare = "equal"             # or "at_most" / "at_least" (one-sided)
    # share checks select paths: path = "name", paths = [...] (the worst of them counts) or array = "name"

Three lengths: the default run is short and on the fast engine (a case with
a Python policy runs on the reference engine), so ``pathsel validate`` takes
about a minute; ``full`` runs each case at ``full_duration`` on both engines
(the reference engine only, for a Python policy); ``quick`` runs each at
``quick_duration``. ``engines`` narrows any of them. One row per check, run
and engine. Unless the scenario sets ``interval``, it is set to 1/20 of the
shortest run, so that IOPS rows carry a batch-means 95 % half-width (``ci95``
in the JSON).
"""

from __future__ import annotations

import math
import os
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..api import simulate
from ..data import VALIDATION
from ..engine import supports
from ..errors import ScenarioError, closest
from ..model import FaultModel
from ..policies.spec import POLICY_DEFS
from ..results import RunResult
from ..scenario.load import Scenario, build_scenario, parse_toml, read_text, read_toml
from ..scenario.messages import quoted_number_hint
from ..scenario.runs import RunSpec
from ..timing.distributions import Constant
from ..units import parse_duration
from .analytic import RandomSplit

__all__ = [
    "Case",
    "Check",
    "Row",
    "METRICS",
    "load_case",
    "case_of",
    "scenario_of",
    "case_files",
    "run_case",
    "validate",
    "case_line",
    "default_workers",
    "format_table",
    "default_dir",
]

# metric -> (unit, default error kind, needs a trace)
METRICS: dict[str, tuple[str, str, bool]] = {
    "iops": ("IOPS", "relative", False),
    "latency_mean_us": ("us", "relative", False),
    "latency_p50_us": ("us", "relative", False),
    "latency_p99_us": ("us", "relative", False),
    "latency_p999_us": ("us", "relative", False),
    "kavg_mean_us": ("us", "relative", False),  # esxtop's KAVG: the time queued in the host
    "davg_mean_us": ("us", "relative", False),
    "refused_fraction": ("share", "relative", False),  # arrivals refused at a full iodepth / arrivals, whole run
    "cpu_utilisation_mean": ("share", "absolute", False),  # the hosts' cores (issue 33): mean busy share in the window
    "share": ("share", "absolute", False),
    "little": ("rel", "absolute", False),
    "failover_retried": ("I/Os", "absolute", True),
    "failover_resume_max_us": ("us", "relative", True),
    "failover_failed_path_completions": ("I/Os", "absolute", True),
}
_CHECK_KEYS = {"metric", "run", "expected", "tolerance", "compare", "error", "path", "paths", "array", "note"}
_CASE_KEYS = {
    "case",
    "source",
    "duration",
    "quick_duration",
    "full_duration",
    "random_split",
    "every_builtin_policy",
    "scenario",
    "checks",
    "engines",
}


def default_dir() -> Path:
    """``sims/validation`` in the working directory, else the cases installed with pathsel (the same files in a checkout)."""
    here = Path("sims") / "validation"
    if here.is_dir():
        return here
    return VALIDATION


@dataclass(frozen=True)
class Check:
    metric: str
    expected: float
    tolerance: float
    run: str | None = None
    compare: str = "equal"
    error: str = "relative"
    paths: tuple[str, ...] = ()
    array: str | None = None
    note: str = ""


@dataclass
class Case:
    name: str
    source: str
    file: str
    scenario: Scenario
    checks: list[Check]
    duration: float | None
    quick_duration: float | None
    full_duration: float | None = None
    random_split: dict[str, float] | None = None
    engines: tuple[str, ...] | None = None

    @property
    def policies(self) -> list[Any] | None:
        if self.random_split is not None:
            return [RandomSplit(self.random_split)]
        return None

    @property
    def builtin(self) -> bool:
        return self.random_split is None and all(supports(r.policy) for r in self.scenario.runs)

    @property
    def runnable_scenario(self) -> Scenario:
        """The scenario with the runs the case compares (its random split, when it has one)."""
        if self.random_split is None:
            return self.scenario
        return self.scenario.with_runs((RunSpec(label="random-split", policy=RandomSplit(self.random_split)),))

    @property
    def needs_trace(self) -> bool:
        return any(METRICS[c.metric][2] for c in self.checks)

    def duration_for(self, length: str = "default") -> float | None:
        """Measured seconds of a run of this length ("default", "quick" or "full"); None: the scenario's own."""
        if length == "quick" and self.quick_duration:
            return self.quick_duration
        if length == "full" and self.full_duration:
            return self.full_duration
        return self.duration

    def engines_for(self, length: str = "default") -> tuple[str, ...]:
        """The engines a run of this length uses: ``full`` every one the case allows, else the first (fast, when it can)."""
        allowed = self.engines or (("fast", "reference") if self.builtin else ("reference",))
        return allowed if length == "full" else allowed[:1]


@dataclass
class Row:
    case: str
    check: str
    run: str
    engine: str
    source: str
    expected: float
    simulated: float
    error: float
    tolerance: float
    passed: bool
    unit: str = ""
    compare: str = "equal"
    error_kind: str = "relative"
    ci95: float | None = None  # relative 95 % half-width of the simulated IOPS (batch means), for iops checks
    file: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = {
            "case": self.case,
            "source": self.source,
            "expected": self.expected,
            "simulated": self.simulated,
            "error": self.error,
            "tolerance": self.tolerance,
            "passed": self.passed,
            "check": self.check,
            "run": self.run,
            "engine": self.engine,
            "unit": self.unit,
            "compare": self.compare,
            "error_kind": self.error_kind,
            "file": self.file,
        }
        if self.ci95 is not None:
            d["ci95"] = self.ci95
        # JSON has no NaN or Infinity: a figure that could not be measured (or an error against a tiny expected
        # figure that overflows) is null, and the check failed
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


# -- loading -----------------------------------------------------------------


def _read_toml(path: Path) -> dict[str, Any]:
    return read_toml(path, "validation case file")


def _unknown_key(key: str, keys: set[str]) -> str:
    guess = closest(key, sorted(keys))
    return f"unknown key {key!r}" + (f" (did you mean {guess!r}?)" if guess else "")


def load_case(path: str | Path) -> Case:
    """Read a validation case: its ``[validation]`` table, then the scenario it holds or names."""
    path = Path(path)
    src = str(path)
    data = _read_toml(path)
    meta = data.pop("validation", None)
    if not isinstance(meta, dict):
        raise ScenarioError(src, "validation", "a validation case needs a [validation] table")

    def fail(place: str, problem: str) -> ScenarioError:
        return ScenarioError(src, f"validation.{place}" if place else "validation", problem)

    unknown = sorted(set(meta) - _CASE_KEYS)
    if unknown:
        raise fail(unknown[0], _unknown_key(unknown[0], _CASE_KEYS))
    for key in ("case", "source"):
        if not isinstance(meta.get(key), str) or not meta[key]:
            raise fail(key, "required: a non-empty string")
    if "scenario" in meta:
        if not isinstance(meta["scenario"], str) or not meta["scenario"].strip():
            raise fail("scenario", f'must be the name of a scenario file, such as "../metro.toml", got {meta["scenario"]!r}')
        if data:
            raise fail("scenario", "names a scenario file, so the case file holds no scenario keys of its own")
        target = path.parent / meta["scenario"]
        data = _read_toml(target)
        data.pop("validation", None)
        scenario_src = f"{src} -> {target}"
    else:
        scenario_src = src

    def dur(key: str) -> float | None:
        if key not in meta:
            return None
        try:
            value = parse_duration(meta[key])
        except (ValueError, TypeError) as e:
            raise fail(key, str(e)) from None
        if value <= 0:
            raise fail(key, "must be > 0")
        return value

    duration, quick, full = dur("duration"), dur("quick_duration"), dur("full_duration")
    # quick <= default <= full: a case whose lengths cross was mistyped ("2ms" for "2s")
    given = [(k, v) for k, v in (("quick_duration", quick), ("duration", duration), ("full_duration", full)) if v is not None]
    for (k1, v1), (k2, v2) in zip(given, given[1:]):
        if v1 > v2:
            raise fail(k2, f"{meta[k2]!r} is shorter than {k1} = {meta[k1]!r} (quick_duration <= duration <= full_duration)")
    # Time-series bins small enough for a batch-means confidence interval on IOPS.
    try:
        own = parse_duration(data.get("duration", "10s"))
    except (ValueError, TypeError):
        own = 10.0  # the scenario's own check reports it
    candidates = [(d, k) for d, k in ((quick, "quick_duration"), (duration, "duration"), (full, "full_duration"), (own, "")) if d and d > 0]
    shortest, shortest_key = min(candidates, key=lambda c: c[0]) if candidates else (1.0, "")
    made_interval = "interval" not in data
    data.setdefault("interval", f"{shortest / 20 * 1e6:.3f}us")
    if not isinstance(meta.get("every_builtin_policy", False), bool):
        raise fail("every_builtin_policy", f"must be true or false, got {meta['every_builtin_policy']!r}")
    if meta.get("every_builtin_policy") and isinstance(data.get("policies", []), list):
        # each built-in policy at its defaults, unless the file already runs it bare; entries that are neither a
        # string nor a table (and policies that is not a list) are left for the scenario's check to locate
        entries = data.get("policies", [])
        have = {p if isinstance(p, str) else str(p.get("spec", "")) for p in entries if isinstance(p, (str, dict))}
        data["policies"] = [*entries, *(n for n in POLICY_DEFS if n not in have)]
    try:
        scenario = build_scenario(data, scenario_src)
    except ScenarioError as e:
        if not made_interval or all(place != "interval" for place, _ in e.problems):
            raise
        # the interval is the one this function set, a key the file never wrote: blame the length it came from
        blame = f"validation.{shortest_key}" if shortest_key else "duration"
        length = meta[shortest_key] if shortest_key else data.get("duration")
        problems = [
            (
                blame,
                f"{length!r} sets the time series' interval to 1/20 of it, {data['interval']}, which cannot be: {problem} (or write interval in the scenario)",
            )
            if place == "interval"
            else (place, problem)
            for place, problem in e.problems
        ]
        raise ScenarioError.several(e.source, problems) from None

    split = meta.get("random_split")
    if split is not None:
        if not isinstance(split, dict) or not split:
            raise fail("random_split", "must be a table of path name = weight")
        all_names = {n for g in scenario.model.paths for n in g.names()}
        for k, w in split.items():
            if k not in all_names:
                raise fail(f"random_split.{k}", f"no path named {k!r}")
            if not isinstance(w, (int, float)) or isinstance(w, bool) or not (w >= 0 and math.isfinite(w)):
                raise fail(f"random_split.{k}", f"a weight must be a finite number >= 0, got {w!r}")
        if not sum(split.values()) > 0:
            raise fail("random_split", "needs a weight > 0")

    checks = []
    if not isinstance(meta.get("checks", []), list):
        raise fail("checks", "must be a list of [[validation.checks]] tables")
    for i, c in enumerate(meta.get("checks", [])):
        place = f"checks[{i}]"
        if not isinstance(c, dict):
            raise fail(place, "must be a table")
        extra = sorted(set(c) - _CHECK_KEYS)
        if extra:
            raise fail(f"{place}.{extra[0]}", _unknown_key(extra[0], _CHECK_KEYS))
        metric = c.get("metric")
        if metric not in METRICS:
            raise fail(f"{place}.metric", f"must be one of {', '.join(METRICS)}, got {metric!r}")
        for key in ("expected", "tolerance"):
            if key not in c:
                raise fail(f"{place}.{key}", "required: a number")
            if isinstance(c[key], bool):
                raise fail(f"{place}.{key}", f"must be a number, got {str(c[key]).lower()} (a boolean is not a number)")
            if not isinstance(c[key], (int, float)):
                raise fail(f"{place}.{key}", f"must be a number, got {c[key]!r}" + quoted_number_hint(c[key], False))
            if not math.isfinite(c[key]):
                raise fail(f"{place}.{key}", f"must be a finite number, got {c[key]!r}")
        for key in ("run", "array", "path", "note"):
            if key in c and not isinstance(c[key], str):
                raise fail(f"{place}.{key}", f"must be a string, got {c[key]!r}")
        if "paths" in c and (not isinstance(c["paths"], list) or not all(isinstance(x, str) for x in c["paths"])):
            raise fail(f"{place}.paths", f"must be a list of path names, got {c['paths']!r}")
        if c["tolerance"] < 0:
            raise fail(f"{place}.tolerance", "must be >= 0")
        compare = c.get("compare", "equal")
        if compare not in ("equal", "at_most", "at_least"):
            raise fail(f"{place}.compare", f"must be equal, at_most or at_least, got {compare!r}")
        error = c.get("error", METRICS[metric][1])
        if error not in ("relative", "absolute"):
            raise fail(f"{place}.error", f"must be relative or absolute, got {error!r}")
        if error == "relative" and c["expected"] == 0:
            raise fail(f"{place}.error", "a relative error needs expected != 0")
        paths = c.get("paths", [c["path"]] if "path" in c else [])
        if metric == "share" and not paths and "array" not in c:
            raise fail(place, "a share check needs path, paths or array")
        run = c.get("run")
        if run is not None and split is None and run not in {r.label for r in scenario.runs}:
            raise fail(f"{place}.run", f"no run labelled {run!r} (runs: {', '.join(r.label for r in scenario.runs)})")
        checks.append(
            Check(metric, float(c["expected"]), float(c["tolerance"]), run, compare, error, tuple(paths), c.get("array"), c.get("note", ""))
        )
    if not checks:
        raise fail("checks", "a case needs at least one [[validation.checks]] table")
    engines = meta.get("engines")
    if engines is not None and (not isinstance(engines, list) or not all(isinstance(e, str) for e in engines)):
        raise fail("engines", f'must be a list such as ["fast", "reference"], got {engines!r}')
    case = Case(
        name=meta["case"],
        source=meta["source"],
        file=src,
        scenario=scenario,
        checks=checks,
        duration=duration,
        quick_duration=quick,
        full_duration=full,
        random_split={str(k): float(v) for k, v in split.items()} if split is not None else None,
        engines=tuple(engines) if engines else None,
    )
    if case.engines is not None:
        bad = [e for e in case.engines if e not in ("fast", "reference")]
        if bad:
            raise fail("engines", f"unknown engine {bad[0]!r} (fast, reference)")
        if "fast" in case.engines and not case.builtin:
            raise fail("engines", "the fast engine runs built-in and compiled-style policies only")
    return case


def case_of(path: str | Path | None) -> Case | None:
    """The validation case a file holds, or None for a plain scenario file (no ``[validation]`` table)."""
    if path is None:
        return None
    p = Path(path)
    try:
        text = read_text(p)
        # A file that never spells "validation" has no such table (a key spells it with escapes only in a
        # quoted key): not parsed twice, then, which took a quarter second for a 16,384-path cluster.
        if "validation" not in text and "\\u" not in text and "\\U" not in text:
            return None
        data = parse_toml(text, str(p))
    except ScenarioError:
        return None  # the scenario loader reports it
    if "validation" not in data:
        return None
    return load_case(p)


def scenario_of(path: str | Path | None) -> Scenario | None:
    """The scenario a validation case file runs (RandomSplit runs included), or None for a plain scenario file.

    ``pathsel.simulate(scenario_of("sims/validation/mva-single-server.toml"))`` runs a case's
    scenario as ``pathsel simulate`` does; ``pathsel validate`` runs its checks.
    """
    case = case_of(path)
    return None if case is None else case.runnable_scenario


def case_files(paths: list[str | Path] | None = None) -> list[Path]:
    """The case files named (files, or directories of ``*.toml``), or every file in the default directory."""
    if not paths:
        paths = [default_dir()]
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(p.glob("*.toml")))
        else:
            out.append(p)
    if not out:
        raise ScenarioError(", ".join(map(str, paths)), "", "no validation case files (*.toml) found")
    return out


# -- measuring ---------------------------------------------------------------


def _batch_ci95(run: RunResult) -> float | None:
    """Relative 95 % half-width of the IOPS, from batch means over the in-window intervals."""
    m, model = run.metrics, run.model
    starts = np.arange(m.n_bins) * m.interval
    inside = (starts >= model.ramp - 1e-12) & (starts + m.interval <= model.end + 1e-9)
    counts = m.ts_ios[inside].astype(float)
    if len(counts) < 5 or counts.mean() <= 0:
        return None
    return float(1.96 * counts.std(ddof=1) / math.sqrt(len(counts)) / counts.mean())


def _fault(run: RunResult) -> FaultModel:
    downs = [f for f in run.model.faults if f.what == "path_down"]
    if not downs:
        raise ScenarioError(run.model.name, "validation", "a failover check needs a path_down fault")
    return downs[0]


def _fixed_exchange(run: RunResult, path_name: str, op: str) -> float:
    """The time an I/O spends on ``path_name`` when every delay there is constant and nothing queues."""
    model = run.model
    p = next(p for p in model.paths if p.name == path_name)
    a = model.arrays[p.array]
    service = a.read_service if op == "read" else a.write_service
    if not (
        isinstance(p.one_way_latency, Constant)
        and isinstance(service, Constant)
        and a.concurrency >= model.outstanding
        and p.bandwidth is None
        and (op == "read" or a.peer is None)
    ):
        raise ScenarioError(
            model.name,
            "validation",
            f"failover timing needs constant legs and service, no bandwidth, no replication and no queue on {path_name}",
        )
    legs = 2 if op == "read" or model.protocol == "nvme" else 4
    return legs * p.one_way_latency.value + service.value


def _measure(check: Check, run: RunResult) -> float:
    lat = run.latency_us
    if check.metric == "iops":
        return run.iops
    if check.metric in ("kavg_mean_us", "davg_mean_us"):
        return run.latency_split_us[check.metric[:4]]["mean"]
    if check.metric.startswith("latency_"):
        key = check.metric[len("latency_") : -len("_us")]
        return lat[key]
    if check.metric == "cpu_utilisation_mean":
        cores = [u for h in run.cpus() for u in h["utilisation"]]
        return sum(cores) / len(cores) if cores else math.nan
    if check.metric == "refused_fraction":
        m = run.metrics
        offered = m.refused + m.issued
        return m.refused / offered if offered else math.nan
    if check.metric == "share":
        rows = run.paths()
        chosen = [r for r in rows if r["name"] in check.paths or (check.array is not None and r["array"] == check.array)]
        if not chosen:
            raise ScenarioError(run.model.name, "validation", f"share check selects no path ({check.paths or check.array})")
        # the worst path: the share furthest from the expected one
        return float(max((r["share"] for r in chosen), key=lambda s: abs(s - check.expected)))
    if check.metric == "little":
        little = run.little
        N = little["in_flight_mean"]
        worst = little["iops_x_latency"] / N - 1.0 if N else 0.0
        for r in run.paths():
            lam_w = r["iops"] * r["latency_us"]["mean"] * 1e-6 if r["ios"] else 0.0
            gap = (lam_w - r["in_flight_mean"]) / N
            if abs(gap) > abs(worst):
                worst = gap
        return worst
    trace = run.metrics.trace or []
    fault = _fault(run)
    assert fault.path is not None  # a path_down fault is on a path
    failed = run.model.paths[fault.path].name
    if check.metric == "failover_retried":
        return float(sum(1 for t in trace if t[7] > 1))
    if check.metric == "failover_failed_path_completions":
        return float(sum(1 for t in trace if t[6] == failed and t[5] > fault.at))
    if check.metric == "failover_resume_max_us":
        resumed = [t[5] - _fixed_exchange(run, t[6], t[2]) - fault.at for t in trace if t[7] > 1]
        return max(resumed) * 1e6 if resumed else math.nan
    raise AssertionError(check.metric)


def _judge(check: Check, simulated: float) -> tuple[float, bool]:
    if check.error == "relative":
        error = simulated / check.expected - 1.0
    else:
        error = simulated - check.expected
    if math.isnan(error):
        return error, False
    slack = check.tolerance + 1e-12
    if check.compare == "at_most":
        return error, error <= slack
    if check.compare == "at_least":
        return error, error >= -slack
    return error, abs(error) <= slack


def _length(quick: bool, full: bool) -> str:
    if quick and full:
        raise ValueError("quick and full are two lengths: ask for one")
    return "quick" if quick else "full" if full else "default"


def _engines(case: Case, length: str, engines: tuple[str, ...] | None) -> tuple[str, ...]:
    if engines is None:
        return case.engines_for(length)
    allowed = case.engines_for("full")
    # a case with a Python policy runs on the reference engine whatever was asked
    return tuple(e for e in allowed if e in engines) or allowed[:1]


def run_case(case: Case, *, quick: bool = False, full: bool = False, engines: tuple[str, ...] | None = None) -> list[Row]:
    """Simulate the case and judge every check: at its default length on the fast engine (a Python policy: the
    reference engine), ``quick`` or ``full`` (every engine the case allows) unless ``engines`` narrows it."""
    length = _length(quick, full)
    duration = case.duration_for(length)
    todo = _engines(case, length, engines)
    rows: list[Row] = []
    for engine in todo:
        with warnings.catch_warnings():
            # RandomSplit is a Python policy: the reference engine is intended, not a fallback to warn about.
            warnings.simplefilter("ignore")
            result = simulate(case.scenario, policies=case.policies, duration=duration, engine=engine, trace=case.needs_trace)
        for check in case.checks:
            runs = [r for r in result.runs if check.run is None or r.label == check.run]
            for run in runs:
                simulated = float(_measure(check, run))
                error, passed = _judge(check, simulated)
                error, passed = float(error), bool(passed)
                what = check.metric
                if check.metric == "share":
                    if check.array is not None:
                        what += f" [array {check.array}]"
                    elif len(check.paths) <= 2:
                        what += f" [{', '.join(check.paths)}]"
                    else:
                        what += f" [each of {len(check.paths)} paths]"
                rows.append(
                    Row(
                        case=case.name,
                        check=what,
                        run=run.label,
                        engine=engine,
                        source=case.source,
                        expected=check.expected,
                        simulated=simulated,
                        error=error,
                        tolerance=check.tolerance,
                        passed=passed,
                        unit=METRICS[check.metric][0],
                        compare=check.compare,
                        error_kind=check.error,
                        ci95=_batch_ci95(run) if check.metric == "iops" else None,
                        file=case.file,
                    )
                )
    return rows


def validate(
    paths: list[str | Path] | None = None,
    *,
    quick: bool = False,
    full: bool = False,
    engines: tuple[str, ...] | None = None,
    progress: Callable[[str], None] | None = None,
    done: Callable[[str, list[Row], float], None] | None = None,
    workers: int = 1,
) -> list[Row]:
    """Every case's rows, in file order. ``progress(case name)`` is called as each case starts and
    ``done(case name, its rows, wall seconds)`` as it ends, both in this process.

    ``workers`` > 1: the cases that run on the reference engine go to that many worker processes while this
    one runs the others (their lines come after; the rows are the same, in file order)."""
    length = _length(quick, full)
    cases = [load_case(f) for f in case_files(paths)]  # every file is checked before anything runs
    got: dict[int, list[Row]] = {}

    def finish(i: int, rows: list[Row], seconds: float) -> None:
        got[i] = rows
        if done is not None:
            done(cases[i].name, rows, seconds)

    # The reference engine (SimPy) is the slow part and runs one case per core; the fast engine's cases are
    # short and stay here, where its compiled code is already loaded.
    slow = [i for i, c in enumerate(cases) if "reference" in _engines(c, length, engines)] if workers > 1 else []
    if len(slow) == len(cases) and slow:
        slow = slow[1:]  # this process takes one too, rather than idle
    pool = None
    if slow:
        import multiprocessing

        # spawn, not fork: a forked copy of a process that has loaded numba's LLVM is not safe
        pool = ProcessPoolExecutor(max_workers=min(workers, len(slow)), mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = {i: pool.submit(_run_file, cases[i].file, quick, full, engines) for i in slow} if pool is not None else {}
        for i, case in enumerate(cases):
            if i in futures:
                continue
            if progress is not None:
                progress(case.name)
            start = time.perf_counter()
            finish(i, run_case(case, quick=quick, full=full, engines=engines), time.perf_counter() - start)
        which = {f: i for i, f in futures.items()}
        for future in as_completed(which):
            finish(which[future], *future.result())
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return [r for i in range(len(cases)) for r in got[i]]


def default_workers() -> int:
    """The CPUs this process may use (as ``pathsel sweep``'s default, without importing its pandas)."""
    if hasattr(os, "process_cpu_count"):  # 3.13+
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _run_file(file: str, quick: bool, full: bool, engines: tuple[str, ...] | None) -> tuple[list[Row], float]:
    """A worker process's job: one case, read from its file again (a Case holds Python policy objects)."""
    start = time.perf_counter()
    rows = run_case(load_case(file), quick=quick, full=full, engines=engines)
    return rows, time.perf_counter() - start


def case_line(name: str, rows: list[Row], seconds: float) -> str:
    """One case's progress line: ``mm1-open: 2/2 checks passed on fast (0.2 s)``."""
    engines = " and ".join(dict.fromkeys(r.engine for r in rows))
    passed = sum(r.passed for r in rows)
    failed = f", {len(rows) - passed} FAILED" if passed < len(rows) else ""
    return f"{name}: {passed}/{len(rows)} checks passed{failed} on {engines} ({seconds:.1f} s)"


# -- output ------------------------------------------------------------------


def _fmt_value(v: float, unit: str) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if unit in ("share", "rel"):
        return f"{v:.4f}"
    if unit == "I/Os":
        return f"{v:,.0f}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:,.1f}"


def _fmt_error(r: Row) -> str:
    if math.isnan(r.error):
        return "nan"
    if r.error_kind == "relative":
        return f"{r.error:+.2%}"
    return f"{r.error:+.4f}" if r.unit in ("share", "rel") else f"{r.error:+g}"


def _fmt_tol(r: Row) -> str:
    sign = {"equal": "±", "at_most": "≤ +", "at_least": "≥ -"}[r.compare]
    if r.error_kind == "relative":
        return f"{sign}{r.tolerance:.0%}" if r.tolerance >= 0.01 else f"{sign}{r.tolerance:.1%}"
    return f"{sign}{r.tolerance:g}"


def format_table(rows: list[Row]) -> str:
    cols = ["case", "check", "run", "engine", "source", "expected", "simulated", "error", "tolerance", "result"]
    body = []
    for r in rows:
        body.append(
            [
                r.case,
                r.check,
                r.run,
                r.engine,
                r.source,
                _fmt_value(r.expected, r.unit),
                _fmt_value(r.simulated, r.unit),
                _fmt_error(r),
                _fmt_tol(r),
                "pass" if r.passed else "FAIL",
            ]
        )
    widths = [max(len(c), *(len(b[i]) for b in body)) if body else len(c) for i, c in enumerate(cols)]
    right = {5, 6, 7}

    def fmt(row: list[str]) -> str:
        return "  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(row, widths))).rstrip()

    failed = sum(not r.passed for r in rows)
    lines = [fmt(cols), fmt(["-" * w for w in widths])] + [fmt(b) for b in body]
    cases = len({r.case for r in rows})
    lines.append("")
    lines.append(f"{len(rows) - failed} of {len(rows)} checks passed ({cases} cases)" + (f"; {failed} FAILED" if failed else ""))
    return "\n".join(lines) + "\n"
