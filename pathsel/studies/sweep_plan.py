"""The plan of a sweep: its parameters resolved, where each applies, the points and runs, and each row's values.

:func:`plan_sweep` reads the grid (the caller's, or each file's ``[sweep]``
table), checks every parameter and value before anything runs, decides which
files and runs each parameter applies to, builds one scenario per point, gives
every run its replication's seed (``SeedSequence(seed).spawn(n)``), and
records, per policy row, the value of every swept parameter. The words
(parameter, point, run, applies) are :mod:`pathsel.studies.sweep`'s.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..api import with_policies
from ..errors import ScenarioError, closest
from ..limits import sweep_runs_problem
from ..policies import PolicySpec, policy_label
from ..policies.spec import POLICY_DEFS, norm_key, parse_spec
from ..scenario import Scenario, load_scenario
from ..scenario.load import DEFAULT_SCENARIO_NAME, parse_toml, read_toml, scenario_from_data
from ..scenario.messages import quoted_number_hint
from ..scenario.overrides import assign, cli_value, format_value, lookup, path_tokens
from ..scenario.runs import RunSpec
from .table import (
    DEFAULT_REPLICATIONS,
    METRIC_COLUMNS,
    NO_PARAMS,
)

__all__ = ["SweepParam", "SweepPoint", "SweepRun", "SweepPlan", "parse_param", "plan_sweep"]

# -- parameters ------------------------------------------------------------


@dataclass(frozen=True)
class SweepParam:
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


def _resolve_param(name: str, values: Any, source: str, place: str) -> SweepParam:
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
        return SweepParam(name, values, source, place, head, key)
    path_tokens(name, source, place)  # the grammar, now
    return SweepParam(name, values, source, place, None, name)


def _refuse_repeats(grid: list[SweepParam]) -> None:
    """One parameter under two spellings (``latency.num_sampling_cycles`` and ``latency.num-sampling-cycles``,
    ``rr.iops`` and ``rr.IOPS``) would sweep it twice over, the last silently winning in every run: refused."""
    seen: dict[tuple[str | None, str], SweepParam] = {}
    for p in grid:
        ident = (p.family, p.key)
        if ident in seen:
            first = seen[ident].name
            raise ScenarioError(
                p.source, p.place, f"is {first!r} again (hyphens, underscores and case are the same): list all its values under one name"
            )
        seen[ident] = p


# -- the plan --------------------------------------------------------------


@dataclass(frozen=True)
class SweepPoint:
    index: int  # position in the whole sweep: the table's sort order
    scenario: str
    text: str
    values: dict[str, Any]
    sc: Scenario
    config: str  # fingerprint of what this point runs, to refuse mixing sweeps in one results file
    # per policy label, the value of every swept parameter in that policy's rows (filled once the grid is known)
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class SweepRun:
    point: SweepPoint
    replication: int
    seed: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.point.scenario, self.point.text, self.replication)


@dataclass
class SweepPlan:
    params: list[str]
    dtypes: dict[str, str]
    points: list[SweepPoint]
    runs: list[SweepRun]
    scenario_order: dict[str, int]
    policy_order: dict[tuple[str, str], dict[str, int]]
    skipped: dict[str, list[str]] = field(default_factory=dict)  # parameter -> the files it does not apply to
    notes: list[str] = field(default_factory=list)  # what the sweep tells its user before running
    # constant columns after config saying how every run was made (a league's timeout_scale), checked on resume
    tags: dict[str, float] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        return ["scenario", "point", *self.params, "replication", "seed", "policy", "spec", *METRIC_COLUMNS, "config", *self.tags]


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
                raise ScenarioError(source, f"sweep.{key}", f"must be a whole number >= {low}, got {v!r}" + quoted_number_hint(v, True))
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
    out: list[tuple[str, Scenario, dict[str, Any] | None]] = []
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


def _set_policy_params(run: RunSpec, changes: dict[str, Any], p_of: dict[str, SweepParam]) -> RunSpec:
    """``run`` with the swept parameters ``changes`` ({key: value}) set, labelled by the spec that runs."""
    pol = run.policy
    try:
        spec, _ = parse_spec(pol.name, {**pol.as_dict(), **changes})
    except ValueError as e:
        bad = p_of.get(getattr(e, "key", None) or "") or next(iter(p_of.values()))
        raise ScenarioError(bad.source, bad.place, str(e)) from None
    if run.devices:  # a policy per device, every device of this family (_family): each gets the values; the label names them
        devices = tuple((v, parse_spec(s.name, {**s.as_dict(), **changes})[0]) for v, s in run.devices)
        label = "; ".join(f"{v}={s.text}" for v, s in devices) + (f",preferred_array={run.preferred_array}" if run.preferred_array else "")
        if devices == run.devices:
            return dataclasses.replace(run, label=label)
        return dataclasses.replace(run, label=label, policy=spec, devices=devices, expect_iops=None, expect_source="")
    if spec == pol:
        return dataclasses.replace(run, label=_swept_label(spec, run.preferred_array))
    # The file's expectation was measured for its own parameters, not these.
    return dataclasses.replace(run, label=_swept_label(spec, run.preferred_array), policy=spec, expect_iops=None, expect_source="")


def _family(run: RunSpec) -> str | None:
    if run.devices:  # a policy per device: a family's parameter applies when every device runs that family
        names = {s.name for _, s in run.devices}
        return names.pop() if len(names) == 1 else None
    return run.policy.name if isinstance(run.policy, PolicySpec) else None


def _applies(p: SweepParam, sc: Scenario, data: dict[str, Any] | None, label: str) -> str | None:
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


def plan_sweep(
    scenarios: Any,
    params: Mapping[str, Any] | None,
    *,
    replications: int | None,
    seed: int | None,
    policies: Sequence[Any] | None,
    duration: float | None,
    origin: str,
) -> SweepPlan:
    """The sweep's plan: every parameter and value checked, each point built and each run seeded, before any run.

    Raises ScenarioError, located (``origin`` names the caller: ``sweep()`` or ``command line``).
    """
    given = [
        _resolve_param(name, values, origin, f"--param {name}" if origin == "command line" else f"params[{name!r}]")
        for name, values in (params or {}).items()
    ]
    _refuse_repeats(given)
    inputs = _scenario_inputs(scenarios)
    names: list[str] = []
    kinds: dict[str, SweepParam] = {}
    raw_of: dict[str, dict[str, Any] | None] = {}
    files = []  # (label, base scenario with the sweep's policies, raw data, grid, seeds)
    for label, base, data in inputs:
        table = _sweep_table(data, base.source) if data is not None else {}
        if given:  # the caller's grid replaces the files' (one grid for every scenario, so they compare)
            grid = given
        else:
            grid = [_resolve_param(name, values, base.source, f"sweep.params.{name}") for name, values in table.get("params", {}).items()]
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
    applies: dict[str, list[SweepParam]] = {}
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
                listed = ", ".join(r.label for r in sc0.runs)
                raise ScenarioError(p.source, p.place, f"{sc0.source} runs no {p.family} policy (policies: {listed})")
            raise ScenarioError(p.source, p.place, f"none of the {len(users)} scenarios runs a {p.family} policy")
        _, sc_first, data_first, _, _ = users[0]
        assert data_first is not None  # _applies refused a scenario key on a loaded Scenario
        assign(copy.deepcopy(data_first), p.name, p.values[0], sc_first.source, p.place)  # raises: the first file's reason
        raise AssertionError("unreachable")  # pragma: no cover

    points: list[SweepPoint] = []
    runs: list[SweepRun] = []
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
                    assert data is not None  # _applies refused a scenario key on a loaded Scenario
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
                point = SweepPoint(len(points), label, text, values, psc, _fingerprint(psc, duration))
                points.append(point)
                policy_order[(label, text)] = {lab: i for i, lab in enumerate(labels)}
                runs.extend(SweepRun(point, r, s) for r, s in enumerate(seeds))
        for a, b in collapsed:
            notes.append(f"{label}: runs {a!r} and {b!r} differ only in swept parameters: each point runs them once")

    skip_notes = []
    for name in names:
        if not skipped[name]:
            continue
        n_users = sum(1 for f in files if any(p.name == name for p in f[3]))
        reasons: dict[str, list[str]] = {}
        for label, reason in skipped[name]:
            reasons.setdefault(reason, []).append(label)
        detail = "; ".join(f"{', '.join(labels)} ({reason})" for reason, labels in reasons.items())
        skip_notes.append(f"{name} skipped {len(skipped[name])} of {n_users} file(s), which ran once without it: {detail}")
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
    return SweepPlan(
        names,
        dtypes,
        points,
        runs,
        {label: i for i, (label, _, _) in enumerate(inputs)},
        policy_order,
        skipped={n: [label for label, _ in skipped[n]] for n in names if skipped[n]},
        notes=notes,
    )
