"""Sweeps: a parameter grid x replications over one or many scenarios, on any executor, saved as it goes.

    >>> import pathsel
    >>> res = pathsel.sweep(["a.toml", "b.toml"],                                    # doctest: +SKIP
    ...                     {"latency.num_sampling_cycles": [16, 32, 64],
    ...                      "replication.one_way_latency": ["0.5ms", "1ms", "2ms"]},
    ...                     replications=5, seed=1, out="results.parquet")
    >>> res.table, res.summary()                                                    # doctest: +SKIP

Words (docs/sweeps.md says the same at more length):

* A **parameter** ``FAMILY.key``, where FAMILY is a built-in policy family
  (``latency``, ``rr``, ``fixed``, ``mru``), sets that policy parameter on every
  run of that family. Any other dotted name overrides the scenario's TOML
  before it is validated: ``replication.one_way_latency``, ``duration``,
  ``workloads[0].iodepth``, ``arrays[remote].concurrency`` (a list entry by
  its ``name``), ``paths[*].bandwidth`` (every entry). The loader's own
  checks then say what is wrong with a value.
* A parameter **applies** where it means something: a policy parameter to the
  runs of its family, a scenario key to the files that have its place (the
  tables on the way). It must apply somewhere; a file or run it does not apply
  to still runs, once, without it (``SweepResult.skipped`` names the files).
* A **point** is one scenario with one value of each parameter that applies
  to some of its runs, and those runs; a **run** is a point on one
  replication's seed. Every run of a scenario on a seed sees the same workload
  (common random numbers), whatever point it is at. A run whose parameters a
  point sets is labelled with the spec that ran, so no row's label
  contradicts its parameter columns.
* Replication seeds are ``SeedSequence(seed).spawn(n)``, the same for every
  point and policy, whatever the executor or the order runs finish in.
* The **table** has one row per run x policy; with ``out`` it is appended to
  a CSV file (or Parquet part files) as runs finish. Running the same sweep
  again skips the runs already saved and ends with the same table, sorted in
  plan order, as an uninterrupted run.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import math
import os
import shutil
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..api import duration_seconds, simulate, with_policies
from ..engine import prepare, resolve, supports
from ..errors import ScenarioError, check_writable, closest
from ..limits import series_problem, sweep_runs_problem
from ..policies import PolicySpec, policy_label
from ..policies.spec import POLICY_DEFS, norm_key, parse_spec
from ..scenario import Scenario, load_scenario
from ..scenario.load import (
    DEFAULT_SCENARIO_NAME,
    RunSpec,
    device_count,
    parse_toml,
    path_count,
    read_toml,
    scenario_from_data,
)
from ..scenario.overrides import assign, cli_value, format_value, lookup, path_tokens
from .table import (
    DEFAULT_REPLICATIONS,
    INT_METRICS,
    METRIC_COLUMNS,
    NO_PARAMS,
    convergence_time,
    param_columns,
    read_table,
    summarize,
)

__all__ = [
    "sweep",
    "SweepResult",
    "summarize",
    "parse_param",
    "read_table",
    "convergence_time",
    "format_value",
    "param_columns",
    "METRIC_COLUMNS",
    "DEFAULT_REPLICATIONS",
]

# -- parameters ------------------------------------------------------------


@dataclass(frozen=True)
class _Param:
    name: str
    values: tuple[Any, ...]
    source: str  # where it was given, for messages: a file or "command line"
    place: str  # "--param NAME" or "sweep.params.NAME"
    family: str | None  # a policy family for FAMILY.key, else None (a scenario override)
    key: str  # the policy parameter, or the name itself for a scenario override


def parse_param(text: str) -> tuple[str, list[Any]]:
    """``"latency.num_sampling_cycles=16,32,64"`` -> ``("latency.num_sampling_cycles", [16, 32, 64])``.

    Raises ScenarioError (source ``command line``) for text that is not ``NAME=V1[,V2...]``.
    """
    name, eq, rest = text.partition("=")
    name = name.strip()
    if not eq or not name:
        raise ScenarioError("command line", f"--param {text!r}", "expected NAME=VALUE[,VALUE...], e.g. latency.num_sampling_cycles=16,32,64")
    items = rest.split(",")
    if any(not item.strip() for item in items):
        raise ScenarioError("command line", f"--param {name}", f"empty value in {rest!r} (values are separated by commas)")
    return name, [cli_value(item) for item in items]


def _resolve_param(name: str, values: Any, source: str, place: str) -> _Param:
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, Iterable):
        values = [values]
    values = tuple(values)
    if not values:
        raise ScenarioError(source, place, "give at least one value")
    seen: list[str] = []
    for v in values:
        if not isinstance(v, (bool, int, float, str, dict)):
            raise ScenarioError(source, place, f"values must be numbers, strings, booleans or tables, got {v!r}")
        text = format_value(v)
        if text in seen:
            raise ScenarioError(source, place, f"value {text} is given twice")
        seen.append(text)
    head, dot, rest = name.partition(".")
    if dot and head in POLICY_DEFS:
        key = norm_key(rest)
        d = POLICY_DEFS[head]
        if d.param(key) is None:
            known = ", ".join(p.name for p in d.params) or "none"
            guess = closest(key, [p.name for p in d.params])
            hint = f"did you mean {guess!r}? " if guess else ""
            raise ScenarioError(source, place, f"{head} has no parameter {rest!r} ({hint}parameters: {known})")
        for v in values:  # range and type, before anything runs
            if isinstance(v, bool):
                raise ScenarioError(source, place, f"{rest} = {str(v).lower()}: a boolean is not a policy parameter value (write a number)")
            try:
                parse_spec(head, {key: v})
            except ValueError as e:
                raise ScenarioError(source, place, str(e)) from None
        return _Param(name, values, source, place, head, key)
    path_tokens(name, source, place)  # the grammar, now
    return _Param(name, values, source, place, None, name)


def _refuse_repeats(grid: list[_Param]) -> None:
    """One parameter under two spellings (``latency.num_sampling_cycles`` and ``latency.num-sampling-cycles``,
    ``rr.iops`` and ``rr.IOPS``) would sweep it twice over, the last silently winning in every run: refused."""
    seen: dict[tuple[str | None, str], _Param] = {}
    for p in grid:
        ident = (p.family, p.key)
        if ident in seen:
            first = seen[ident].name
            raise ScenarioError(p.source, p.place, f"is {first!r} again (hyphens, underscores and case are the same): "
                                                   "list all its values under one name")
        seen[ident] = p


# -- the plan --------------------------------------------------------------


@dataclass(frozen=True)
class _Point:
    index: int  # position in the whole sweep: the table's sort order
    scenario: str
    text: str
    values: dict[str, Any]
    sc: Scenario
    config: str  # fingerprint of what this point runs, to refuse mixing sweeps in one results file
    # per policy label, the value of every swept parameter in that policy's rows (filled once the grid is known)
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Run:
    point: _Point
    replication: int
    seed: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.point.scenario, self.point.text, self.replication)


@dataclass
class _Plan:
    params: list[str]
    dtypes: dict[str, str]
    points: list[_Point]
    runs: list[_Run]
    scenario_order: dict[str, int]
    policy_order: dict[tuple[str, str], dict[str, int]]
    skipped: dict[str, list[str]] = field(default_factory=dict)  # parameter -> the files it does not apply to
    notes: list[str] = field(default_factory=list)  # what the sweep tells its user before running

    @property
    def columns(self) -> list[str]:
        return ["scenario", "point", *self.params, "replication", "seed", "policy", "spec", *METRIC_COLUMNS, "config"]


def _sweep_table(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Check a file's ``[sweep]`` table: params (FAMILY.key or scenario keys -> lists), replications, seed."""
    raw = data.get("sweep")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ScenarioError(source, "sweep", "must be a table")
    for key in raw:
        if key not in ("params", "replications", "seed"):
            guess = closest(key, ("params", "replications", "seed"))
            hint = f"did you mean {guess!r}? " if guess else ""
            raise ScenarioError(source, f"sweep.{key}", f"unknown key {key!r} ({hint}keys: params, replications, seed)")
    out: dict[str, Any] = {}
    for key, low in (("replications", 1), ("seed", 0)):
        if key in raw:
            v = raw[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ScenarioError(source, f"sweep.{key}", f"must be a whole number >= {low}, got {v!r}")
            out[key] = v
    params: dict[str, Any] = {}

    def flatten(prefix: str, node: Any) -> None:
        # `latency.num_sampling_cycles = [...]` (TOML dotted keys) nests: flatten back to the dotted name.
        if isinstance(node, dict):
            for k, v in node.items():
                flatten(f"{prefix}.{k}" if prefix else k, v)
        elif isinstance(node, list):
            params[prefix] = node
        else:
            raise ScenarioError(source, f"sweep.params.{prefix}", f"must be a list of values, got {node!r}")

    if "params" in raw:
        if not isinstance(raw["params"], dict):
            raise ScenarioError(source, "sweep.params", "must be a table of NAME = [values]")
        flatten("", raw["params"])
    out["params"] = params
    return out


def _fingerprint(sc: Scenario, duration: float | None) -> str:
    runs = [(r.label, r.policy.text if isinstance(r.policy, PolicySpec) else policy_label(r.policy), r.preferred_array) for r in sc.runs]
    text = repr((sc.model, runs, duration))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _seeds(seed: int, n: int) -> tuple[int, ...]:
    # Children of one SeedSequence; child i is the same whatever n, so more replications keep the first ones.
    return tuple(int(c.generate_state(1)[0]) for c in np.random.SeedSequence(seed).spawn(n))


def _scenario_inputs(scenarios: Any) -> list[tuple[str, Scenario, dict[str, Any] | None]]:
    """(label, scenario, raw TOML data or None) for each scenario given."""
    if scenarios is None or isinstance(scenarios, (str, Path, Scenario)):
        scenarios = [scenarios]
    out = []
    for s in scenarios:
        if s is None:
            from importlib import resources

            text = resources.files("pathsel.data").joinpath("examples", DEFAULT_SCENARIO_NAME).read_text(encoding="utf-8")
            data = parse_toml(text, f"<default: {DEFAULT_SCENARIO_NAME}>")
            sc = scenario_from_data(data, f"<default: {DEFAULT_SCENARIO_NAME}>")
            out.append((Path(DEFAULT_SCENARIO_NAME).stem, sc, data))
        elif isinstance(s, Scenario):
            out.append((s.name, s, None))
        else:
            sc = load_scenario(s)  # every read and validation error, located, as for `pathsel simulate`
            data = read_toml(s)
            out.append((Path(s).stem, sc, data))
    labels = [label for label, _, _ in out]
    for label in labels:
        if labels.count(label) > 1:
            raise ScenarioError("sweep", "scenarios", f"two scenarios are called {label!r}; rename one file (the table names scenarios by file name)")
    return out


def _dtype(values: list[Any]) -> str:
    values = [v for v in values if v is not None]
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "Int64"  # nullable: a row where the parameter does not apply has none
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "float64"
    return "str"


def _swept_label(spec: PolicySpec, preferred_array: str | None) -> str:
    """The label of a run whose parameters a point sets: the spec that ran, as ``--policy`` takes it.

    A file's label ("latency RR, eval 180 s (default)") would contradict the
    values swept into the run, so the row is named by what ran instead.
    """
    return spec.text + (f",preferred_array={preferred_array}" if preferred_array is not None else "")


def _set_policy_params(run: RunSpec, changes: dict[str, Any], p_of: dict[str, _Param]) -> RunSpec:
    """``run`` with the swept parameters ``changes`` ({key: value}) set, labelled by the spec that runs."""
    pol = run.policy
    try:
        spec, _ = parse_spec(pol.name, {**pol.as_dict(), **changes})
    except ValueError as e:
        bad = p_of.get(getattr(e, "key", None) or "") or next(iter(p_of.values()))
        raise ScenarioError(bad.source, bad.place, str(e)) from None
    if spec == pol:
        return dataclasses.replace(run, label=_swept_label(spec, run.preferred_array))
    # The file's expectation was measured for its own parameters, not these.
    return dataclasses.replace(run, label=_swept_label(spec, run.preferred_array), policy=spec,
                               expect_iops=None, expect_source="")


def _family(run: RunSpec) -> str | None:
    return run.policy.name if isinstance(run.policy, PolicySpec) else None


def _applies(p: _Param, sc: Scenario, data: dict[str, Any] | None, label: str) -> str | None:
    """None when ``p`` applies to this scenario, else why not (one phrase)."""
    if p.family is not None:
        if any(_family(r) == p.family for r in sc.runs):
            return None
        return f"no {p.family} policy"
    if data is None:
        raise ScenarioError(p.source, p.place, f"overriding scenario keys needs a scenario file; {label!r} was given as a loaded Scenario")
    try:
        assign(copy.deepcopy(data), p.name, p.values[0], sc.source, p.place)  # the places on the way, not the value
    except ScenarioError as e:
        return e.problem
    return None


def _plan(
    scenarios: Any,
    params: Mapping[str, Any] | None,
    *,
    replications: int | None,
    seed: int | None,
    policies: Sequence[Any] | None,
    duration: float | None,
    origin: str,
) -> _Plan:
    given = [
        _resolve_param(name, values, origin, f"--param {name}" if origin == "command line" else f"params[{name!r}]")
        for name, values in (params or {}).items()
    ]
    _refuse_repeats(given)
    inputs = _scenario_inputs(scenarios)
    names: list[str] = []
    kinds: dict[str, _Param] = {}
    raw_of: dict[str, dict[str, Any] | None] = {}
    files = []  # (label, base scenario with the sweep's policies, raw data, grid, seeds)
    for label, base, data in inputs:
        table = _sweep_table(data, base.source) if data is not None else {}
        if given:  # the caller's grid replaces the files' (one grid for every scenario, so they compare)
            grid = given
        else:
            grid = [
                _resolve_param(name, values, base.source, f"sweep.params.{name}")
                for name, values in table.get("params", {}).items()
            ]
            _refuse_repeats(grid)
        raw_of[label] = data
        for p in grid:
            if p.name not in names:
                names.append(p.name)
                kinds[p.name] = p
        n_rep = replications if replications is not None else table.get("replications", DEFAULT_REPLICATIONS)
        base_seed = seed if seed is not None else table.get("seed", base.model.seed)
        sc0 = with_policies(base, policies) if policies is not None else base
        # before the seeds and the plan, which take memory per run: a billion replications would fill it
        problem = sweep_runs_problem([len(p.values) for p in grid], len(sc0.runs), n_rep)
        if problem is not None:
            if replications is not None:
                where = (origin, "--replications" if origin == "command line" else "replications")
            elif "replications" in table:
                where = (base.source, "sweep.replications")
            else:  # the grid alone is too large
                where = (origin, "--param") if given else (base.source, "sweep.params")
            raise ScenarioError(*where, problem)
        files.append((label, sc0, data, grid, _seeds(base_seed, n_rep)))

    # Which parameter applies to which file: a policy parameter to the files that run its family, a scenario
    # key to the files that have its place. A parameter must apply somewhere; elsewhere the file runs without it.
    skipped: dict[str, list[tuple[str, str]]] = {n: [] for n in names}
    applies: dict[str, list[_Param]] = {}
    for label, sc0, data, grid, _ in files:
        applies[label] = []
        for p in grid:
            why = _applies(p, sc0, data, label)
            if why is None:
                applies[label].append(p)
            else:
                skipped[p.name].append((label, why))
    for name in names:
        users = [f for f in files if any(p.name == name for p in f[3])]
        if len(skipped[name]) < len(users):
            continue
        p = kinds[name]
        if p.family is not None:
            if len(users) == 1:
                sc0 = users[0][1]
                labels = ", ".join(r.label for r in sc0.runs)
                raise ScenarioError(p.source, p.place, f"{sc0.source} runs no {p.family} policy (policies: {labels})")
            raise ScenarioError(p.source, p.place, f"none of the {len(users)} scenarios runs a {p.family} policy")
        _, sc_first, data_first, _, _ = users[0]
        assign(copy.deepcopy(data_first), p.name, p.values[0], sc_first.source, p.place)  # raises: the first file's reason
        raise AssertionError("unreachable")  # pragma: no cover

    points: list[_Point] = []
    runs: list[_Run] = []
    notes: list[str] = []
    policy_order: dict[tuple[str, str], dict[str, int]] = {}
    for label, sc0, data, grid, seeds in files:
        here = applies[label]
        raw = [p for p in here if p.family is None]
        pol = [p for p in here if p.family is not None]
        built: dict[tuple[str, ...], Scenario] = {}
        collapsed: list[tuple[str, str]] = []
        seen: set[str] = set()
        for combo in itertools.product(*(p.values for p in here)):
            values_all = {p.name: v for p, v in zip(here, combo)}
            raw_key = tuple(format_value(values_all[p.name]) for p in raw)
            sc = built.get(raw_key)
            if sc is None:
                if raw:
                    d = copy.deepcopy(data)
                    what = ", ".join(f"{p.name}={format_value(values_all[p.name])}" for p in raw)
                    src = f"{sc0.source} with {what}"
                    for p in raw:
                        assign(d, p.name, values_all[p.name], src, p.place)
                    sc = scenario_from_data(d, src)  # the loader's checks and messages
                    if policies is not None:
                        sc = with_policies(sc, policies)
                else:
                    sc = sc0
                built[raw_key] = sc
            # Runs by the swept parameters that apply to them: a policy parameter sets its own family's runs
            # only, so the runs of one family vary together and the others run once per scenario-key value.
            groups: dict[tuple[str, ...], list[int]] = {}
            for i, run in enumerate(sc.runs):
                groups.setdefault(tuple(p.name for p in pol if p.family == _family(run)), []).append(i)
            for keys, idx in groups.items():
                values = {p.name: values_all[p.name] for p in here if p.family is None or p.name in keys}
                text = " ".join(f"{k}={format_value(v)}" for k, v in values.items()) or NO_PARAMS
                if text in seen:
                    continue
                seen.add(text)
                point_runs: list[RunSpec] = []
                file_labels: list[str] = []
                for i in idx:
                    run = sc.runs[i]
                    if keys:
                        run = _set_policy_params(run, {kinds[k].key: values[k] for k in keys}, {kinds[k].key: kinds[k] for k in keys})
                        have = [r.label for r in point_runs]
                        if run.label in have:
                            # Two of the file's runs differ only in what is swept: the same run, once.
                            pair = (file_labels[have.index(run.label)], sc.runs[i].label)
                            if pair not in collapsed:
                                collapsed.append(pair)
                            continue
                    point_runs.append(run)
                    file_labels.append(sc.runs[i].label)
                labels = [r.label for r in point_runs]
                for lab in labels:
                    if labels.count(lab) > 1:
                        raise ScenarioError(sc.source, "policies", f"two policies are labelled {lab!r}; give each its own label")
                psc = sc.with_runs(tuple(point_runs))
                point = _Point(len(points), label, text, values, psc, _fingerprint(psc, duration))
                points.append(point)
                policy_order[(label, text)] = {lab: i for i, lab in enumerate(labels)}
                runs.extend(_Run(point, r, s) for r, s in enumerate(seeds))
        for a, b in collapsed:
            notes.append(f"{label}: runs {a!r} and {b!r} differ only in swept parameters: each point runs them once")

    skip_notes = []
    for name in names:
        if not skipped[name]:
            continue
        users = sum(1 for f in files if any(p.name == name for p in f[3]))
        why: dict[str, list[str]] = {}
        for label, reason in skipped[name]:
            why.setdefault(reason, []).append(label)
        detail = "; ".join(f"{', '.join(labels)} ({reason})" for reason, labels in why.items())
        skip_notes.append(f"{name} skipped {len(skipped[name])} of {users} file(s), which ran once without it: {detail}")
    notes = skip_notes + notes

    # Each row holds the parameter values its run used: a policy parameter for the rows of that family
    # (the run's own value where its file does not sweep it), a scenario key as the point or the file sets it;
    # nothing where the parameter does not apply.
    column_values: dict[str, list[Any]] = {n: [] for n in names}
    for point in points:
        for run in point.sc.runs:
            cell = {}
            for n in names:
                k = kinds[n]
                if k.family is not None:
                    v = run.policy[k.key] if _family(run) == k.family else None
                else:
                    v = point.values[n] if n in point.values else lookup(raw_of[point.scenario], n)
                cell[n] = v
                column_values[n].append(v)
            point.cells[run.label] = cell
    dtypes = {n: _dtype(column_values[n]) for n in names}
    return _Plan(
        names, dtypes, points, runs, {label: i for i, (label, _, _) in enumerate(inputs)}, policy_order,
        skipped={n: [label for label, _ in skipped[n]] for n in names if skipped[n]}, notes=notes,
    )


# -- one run (in a worker) -------------------------------------------------


def _run_one(sc: Scenario, seed: int, duration: float | None, engine: str) -> list[dict[str, Any]]:
    """Every policy of one point on one seed: the metric columns of each row (module level: workers unpickle it)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="pathsel: .* Python polic")  # the sweep warns once, not per run
        res = simulate(sc, duration=duration, seed=seed, engine=engine)
    rows = []
    for spec_run, run, rec in zip(sc.runs, res.runs, res.summary().to_dict("records")):
        # What reproduces the run with --policy: the spec, and the run's preferred array when it has its own.
        pref = spec_run.preferred_array if spec_run.builtin else None
        rec["spec"] = run.policy + (f",preferred_array={pref}" if pref is not None else "")
        rec["ios"] = run.ios
        rec["convergence_s"] = convergence_time(run)
        rec["failed"] = int(run.metrics.failed)
        rows.append(rec)
    return rows


# -- storage -----------------------------------------------------------------


def _typed(df: pd.DataFrame, plan: _Plan) -> pd.DataFrame:
    """The table's columns in one order and one dtype each, whether rows come from memory, CSV or Parquet."""
    df = df.reindex(columns=plan.columns)
    for c in plan.columns:
        if c in plan.dtypes:
            kind = plan.dtypes[c]
        elif c in ("replication", "seed") or c in INT_METRICS:
            kind = "int64"
        elif c in METRIC_COLUMNS:
            kind = "float64"
        else:
            kind = "str"
        if kind == "str":
            col = df[c].map(lambda v: v if isinstance(v, str) or (isinstance(v, float) and math.isnan(v)) or v is None else format_value(v))
            df[c] = col.astype("str")
        else:
            df[c] = pd.to_numeric(df[c]).astype(kind)
    return df


def _sorted(df: pd.DataFrame, plan: _Plan) -> pd.DataFrame:
    point_index = {(p.scenario, p.text): p.index for p in plan.points}
    order = pd.DataFrame(
        {
            "p": [point_index[k] for k in zip(df.scenario, df.point)],
            "r": df.replication.to_numpy(),
            "q": [plan.policy_order[(s, t)][lab] for s, t, lab in zip(df.scenario, df.point, df.policy)],
        }
    )
    idx = order.sort_values(["p", "r", "q"], kind="stable").index
    return df.iloc[idx].reset_index(drop=True)


class _Store:
    """Results on disk: a CSV appended run by run, or Parquet part files merged at the end."""

    def __init__(self, path: Path, plan: _Plan) -> None:
        self.path = path
        self.plan = plan
        self.csv = path.suffix.lower() == ".csv"
        if not self.csv and path.suffix.lower() != ".parquet":
            raise ScenarioError(str(path), "", "results go to a .parquet or .csv file")
        self.parts = path.with_name(path.name + ".parts")
        self.buffer: list[dict[str, Any]] = []
        self.last_flush = time.monotonic()

    def existing(self) -> pd.DataFrame:
        frames = []
        try:
            if self.csv and self.path.exists():
                self._trim_partial_line()
                if self.path.stat().st_size:
                    df = pd.read_csv(self.path, keep_default_na=False, na_values=[""])
                    if list(df.columns) != self.plan.columns:
                        raise ScenarioError(str(self.path), "", "holds a different sweep (other columns): use another --out, or delete it")
                    frames.append(df)
            elif not self.csv:
                if self.path.exists():
                    frames.append(pd.read_parquet(self.path))
                if self.parts.is_dir():
                    frames.extend(pd.read_parquet(p) for p in sorted(self.parts.glob("part-*.parquet")))
        except ScenarioError:
            raise
        except Exception as e:  # unreadable: say so in one line rather than guess
            raise ScenarioError(str(self.path), "", f"cannot read the results already there: {e}") from None
        if not frames:
            return _typed(pd.DataFrame(columns=self.plan.columns), self.plan)
        df = pd.concat(frames, ignore_index=True)
        if list(df.columns) != self.plan.columns:
            raise ScenarioError(str(self.path), "", "holds a different sweep (other columns): use another --out, or delete it")
        return _typed(df, self.plan)

    def _trim_partial_line(self) -> None:
        # A run killed mid-append leaves a line without its newline: drop it, that run is run again.
        with open(self.path, "rb+") as f:
            data = f.read()
            if data and not data.endswith(b"\n"):
                f.truncate(data.rfind(b"\n") + 1)

    def add(self, rows: list[dict[str, Any]]) -> None:
        self.buffer.extend(rows)
        # Every second or two rather than every run: typing the rows costs the parent ~15 ms a write, which
        # would cap short runs; an interruption flushes first, so only a kill loses up to that much.
        if time.monotonic() - self.last_flush >= (1.0 if self.csv else 2.0):
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        df = _typed(pd.DataFrame(self.buffer), self.plan)
        if self.csv:
            header = not self.path.exists() or self.path.stat().st_size == 0
            text = df.to_csv(index=False, header=header, lineterminator="\n")
            with open(self.path, "a", encoding="utf-8", newline="") as f:
                f.write(text)  # one write: a killed process leaves at most one cut line (trimmed on resume)
        else:
            self.parts.mkdir(parents=True, exist_ok=True)
            final = self.parts / f"part-{self._next_part():06d}.parquet"
            tmp = final.with_suffix(".tmp")
            df.to_parquet(tmp, index=False)
            os.replace(tmp, final)  # a part is whole or absent
        self.buffer = []
        self.last_flush = time.monotonic()

    def _next_part(self) -> int:
        numbers = [int(p.stem.split("-")[1]) for p in self.parts.glob("part-*.parquet")]
        return max(numbers, default=-1) + 1

    def rewrite(self, df: pd.DataFrame) -> None:
        """Replace what is saved by ``df`` (atomically: a file is renamed over the old one)."""
        if self.csv:
            tmp = self.path.with_name(self.path.name + ".tmp")
            df.to_csv(tmp, index=False, lineterminator="\n")
            os.replace(tmp, self.path)
            return
        self.parts.mkdir(parents=True, exist_ok=True)
        old = sorted(self.parts.glob("part-*.parquet"))
        tmp = self.parts / "rewrite.tmp"
        df.to_parquet(tmp, index=False)
        final = self.parts / f"part-{self._next_part():06d}.parquet"
        os.replace(tmp, final)
        for p in old:
            p.unlink()
        if self.path.exists():
            self.path.unlink()

    def finish(self) -> pd.DataFrame:
        self.flush()
        df = _sorted(self.existing(), self.plan)
        tmp = self.path.with_name(self.path.name + ".tmp")
        if self.csv:
            df.to_csv(tmp, index=False, lineterminator="\n")
        else:
            df.to_parquet(tmp, index=False)
        os.replace(tmp, self.path)
        if not self.csv:
            shutil.rmtree(self.parts, ignore_errors=True)
        return df


# -- the sweep -----------------------------------------------------------------


@dataclass
class SweepResult:
    """What a sweep measured: the tidy ``table`` (one row per point x replication x policy)."""

    table: pd.DataFrame
    params: list[str]
    out: Path | None = None
    ran: int = 0  # runs run by this call
    reused: int = 0  # runs found already saved in ``out``
    points: int = 0
    wall_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    # parameter -> the scenarios (file names without .toml) it does not apply to; they ran once without it
    skipped: dict[str, list[str]] = field(default_factory=dict)
    # what the sweep said before running: one line per parameter that skipped files, then runs it merged
    notes: list[str] = field(default_factory=list)

    def summary(self) -> pd.DataFrame:
        """Means and 95 % confidence intervals over replications: see :func:`summarize`."""
        return summarize(self.table)

    def recommend(self, **kwargs: Any):  # -> pathsel.studies.recommend.Recommendation
        """The point with the best worst-case regret across scenarios: see :func:`pathsel.studies.recommend.recommend`."""
        from .recommend import recommend

        return recommend(self.table, **kwargs)


def _default_workers() -> int:
    if hasattr(os, "process_cpu_count"):  # 3.13+: the CPUs this process may use
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def sweep(
    scenarios: Any = None,
    params: Mapping[str, Any] | None = None,
    *,
    replications: int | None = None,
    seed: int | None = None,
    policies: Iterable[Any] | None = None,
    duration: float | str | None = None,
    engine: str = "auto",
    out: str | Path | None = None,
    executor: Executor | str | None = None,
    workers: int | None = None,
    progress: bool = False,
    _origin: str = "sweep()",
    _on_run: Callable[[int, int], None] | None = None,
    _notify: Callable[[str], None] | None = None,
) -> SweepResult:
    """Run a grid of parameters x replications over one or many scenarios.

    ``scenarios``: a file, a loaded :class:`Scenario`, None (the embedded
    default), or a list of them. A file's ``[sweep]`` table gives its grid
    (``params``), ``replications`` and ``seed``; arguments given here replace
    them (``params`` replaces the whole grid of every file).
    ``params``: ``{"latency.num_sampling_cycles": [16, 32, 64], ...}``; a
    policy family's ``FAMILY.key``, or a scenario key to override
    (``replication.one_way_latency``, ``workloads[0].iodepth``,
    ``arrays[remote].concurrency``, ``paths[*].bandwidth``). A parameter sets
    only the runs of its family, or the files that have its key; the others
    run once without it, and :attr:`SweepResult.skipped` names the files.
    ``replications``: runs per point (default: the file's, else 3), on seeds
    ``SeedSequence(seed).spawn(replications)``; ``seed`` defaults to the
    file's ``[sweep]`` seed, else the scenario's ``seed``. ``policies`` and
    ``duration`` replace the files' as in :func:`pathsel.simulate`.

    ``out``: a ``.parquet`` or ``.csv`` file the table is saved to as runs
    finish; calling again with the same arguments skips the runs saved there
    and ends with the same table as one uninterrupted call. A results file
    holding runs this sweep does not plan is refused.

    ``executor``: None or ``"process"`` for a local process pool of
    ``workers`` processes (default: every core), ``"serial"`` to run here,
    or any :class:`concurrent.futures.Executor`, such as a Dask cluster's
    ``distributed.Client(address).get_executor()``. The table does not depend
    on the executor, nor on the order runs finish in.
    """
    t_start = time.perf_counter()
    if engine not in ("auto", "fast", "reference"):
        raise ScenarioError(_origin, "engine", f"unknown engine {engine!r} (engines: auto, fast, reference)")
    duration = duration_seconds(duration, _origin)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ScenarioError(_origin, "seed", f"must be a whole number >= 0, got {seed!r}")
    if replications is not None and (isinstance(replications, bool) or not isinstance(replications, (int, np.integer)) or replications < 1):
        raise ScenarioError(_origin, "replications", f"must be a whole number >= 1, got {replications!r}")
    if workers is not None and workers < 1:
        raise ScenarioError(_origin, "workers", f"must be >= 1, got {workers!r}")
    if out is not None:
        if Path(out).suffix.lower() not in (".csv", ".parquet"):
            raise ScenarioError(str(out), "", "results go to a .parquet or .csv file")
        check_writable(out, "results table")  # before any run: not a traceback once they have all finished
        if Path(out).exists() and not Path(out).is_file():  # read back to resume: /dev/zero would never end
            raise ScenarioError(str(out), "", "is not a regular file (a device or a pipe): the results table is read back to resume")
    policies = list(policies) if policies is not None else None
    plan = _plan(scenarios, params, replications=replications, seed=seed, policies=policies, duration=duration, origin=_origin)
    if duration is not None:  # the files' own durations passed the loader's check; this one is the sweep's
        for point in plan.points:
            m = point.sc.model
            problem = series_problem(max(w.ramp_time for w in m.workloads) + duration, m.interval, path_count(m),
                                     device_count(m))
            if problem is not None:
                raise ScenarioError(point.sc.source, "interval", problem)
    if _notify is not None:  # the command line prints them before the runs start
        for note in plan.notes:
            _notify(note)
    custom = sorted({r.label for p in plan.points for r in p.sc.runs if not supports(r.policy)})
    if custom and engine == "fast":
        raise ScenarioError(_origin, "engine", f"the fast engine runs built-in and compiled-style policies only; {custom[0]!r} is a Python policy: use engine='reference'")
    if custom and engine == "auto":
        warnings.warn(f"pathsel: {', '.join(map(repr, custom))}: Python policies run on the reference engine", stacklevel=2)
    if engine != "reference":  # compile (or load) the fast engine once here, not in every worker at once
        defs = {id(d): d for d in (resolve(r.policy)[0] for p in plan.points for r in p.sc.runs if supports(r.policy))}
        prepare(list(defs.values()), progress=progress)

    store = _Store(Path(out), plan) if out is not None else None
    done_keys: set[tuple[str, str, int]] = set()
    if store is not None:
        have = store.existing()
        planned = {r.key: r for r in plan.runs}
        partial = []
        for key, g in have.groupby(["scenario", "point", "replication"], sort=False):
            run = planned.get((key[0], key[1], int(key[2])))
            if run is None or int(g.seed.iloc[0]) != run.seed or g.config.iloc[0] != run.point.config:
                what = f"{key[0]} {key[1]} replication {key[2]}"
                raise ScenarioError(
                    str(store.path), "", f"holds runs this sweep does not plan ({what}): use another --out, or delete it"
                )
            if len(g) == len(run.point.sc.runs):
                done_keys.add(run.key)
            else:  # cut short by a kill mid-write: run it again
                partial.extend(g.index)
        if partial:
            store.rewrite(have.drop(index=partial))
    todo = [r for r in plan.runs if r.key not in done_keys]
    rows_mem: list[dict[str, Any]] = []
    left = {p.index: 0 for p in plan.points}
    for r in todo:
        left[r.point.index] += 1
    points_done = sum(1 for v in left.values() if v == 0)

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(plan.runs), initial=len(plan.runs) - len(todo), unit="run", desc="sweep",
                   file=sys.stderr, dynamic_ncols=True, mininterval=0.2 if sys.stderr.isatty() else 5.0)
        bar.set_postfix_str(f"points {points_done}/{len(plan.points)}", refresh=False)

    def finished(run: _Run, metrics: list[dict[str, Any]]) -> None:
        nonlocal points_done
        head = {"scenario": run.point.scenario, "point": run.point.text}
        rows = [
            {**head, **run.point.cells[m["policy"]], "replication": run.replication, "seed": run.seed, **m, "config": run.point.config}
            for m in metrics
        ]
        if store is not None:
            store.add(rows)
        else:
            rows_mem.extend(rows)
        left[run.point.index] -= 1
        if left[run.point.index] == 0:
            points_done += 1
        if bar is not None:
            bar.set_postfix_str(f"points {points_done}/{len(plan.points)}", refresh=False)
            bar.update(1)
        if _on_run is not None:  # a test's hook: it interrupts a sweep part way
            _on_run(len(plan.runs) - sum(left.values()), len(plan.runs))

    own = None
    if executor is None or executor == "process":
        n = workers or _default_workers()
        # One worker needs no pool; more than there are runs would only start idle processes.
        if todo and min(n, len(todo)) > 1:
            own = ProcessPoolExecutor(max_workers=min(n, len(todo)), initializer=_watch_parent, initargs=(os.getpid(),))
        pool: Executor | None = own
        window = 4 * min(n, max(len(todo), 1))
    elif executor == "serial":
        pool = None
        window = 1
    elif isinstance(executor, Executor):
        pool = executor
        window = 4 * (getattr(executor, "_max_workers", None) or workers or 16)
    else:
        raise ScenarioError(_origin, "executor", f"must be None, 'process', 'serial' or a concurrent.futures.Executor, got {executor!r}")

    try:
        if pool is None:
            for run in todo:
                finished(run, _run_one(run.point.sc, run.seed, duration, engine))
        else:
            _drive(pool, todo, window, duration, engine, finished)
    except BaseException:
        if store is not None:
            store.flush()  # keep what finished: the next call resumes from it
        raise
    finally:
        if own is not None:
            own.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()

    if store is not None:
        table = store.finish()
    else:
        table = _sorted(_typed(pd.DataFrame(rows_mem, columns=plan.columns), plan), plan)
    return SweepResult(
        table=table,
        params=list(plan.params),
        out=store.path if store is not None else None,
        ran=len(todo),
        reused=len(plan.runs) - len(todo),
        points=len(plan.points),
        wall_s=time.perf_counter() - t_start,
        skipped={k: list(v) for k, v in plan.skipped.items()},
        notes=list(plan.notes),
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's process now holds the number
        return True
    return True


def _watch_parent(parent: int) -> None:
    """A sweep worker's initializer: the worker ends when the process that started the sweep dies.

    A parent killed outright (SIGKILL, the OOM killer) never shuts its pool down, and its workers would wait
    for work forever, a few hundred MB each. On Linux the kernel kills the worker with its parent
    (``prctl(PR_SET_PDEATHSIG)``); everywhere, a thread checks twice a second that the parent is still there.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl: the thread still watches
            pass
    started_by = os.getppid()  # the sweep itself, or a fork server it asked to start workers
    if not _alive(parent) or (started_by == 1 and parent != 1):  # (a sweep may be a container's first process)
        os._exit(0)  # the parent died before this worker got going: init adopted it

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != started_by or not _alive(parent):
                os._exit(0)

    threading.Thread(target=watch, name="pathsel-sweep-parent-watch", daemon=True).start()


def _drive(pool: Executor, todo: list[_Run], window: int, duration: float | None, engine: str,
           finished: Callable[[_Run, list[dict[str, Any]]], None]) -> None:
    """Keep at most ``window`` runs in flight (memory stays flat on long sweeps); record each as it ends."""
    it = iter(todo)
    pending: dict[Any, _Run] = {}

    def fill() -> None:
        for run in it:
            pending[pool.submit(_run_one, run.point.sc, run.seed, duration, engine)] = run
            if len(pending) >= window:
                return

    try:
        fill()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                run = pending.pop(fut)
                finished(run, fut.result())
            fill()
    finally:
        for fut in pending:
            fut.cancel()
