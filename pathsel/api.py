"""``pathsel.simulate``: load, compile, run every policy, collect the results."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from .engine import ENGINES, prepare, resolve, supports
from .errors import ScenarioError
from .limits import MAX_SERIES_VALUES  # noqa: F401 - where it used to live
from .model import compile_model
from .policies import PolicySpec, policy_label
from .results import Result, RunResult
from .scenario import RunSpec, Scenario, default_scenario, load_scenario
from .scenario.runs import unique_labels
from .units import parse_seconds

if TYPE_CHECKING:
    import pandas as pd  # imported where a DataFrame is made: a simulation's command line never needs pandas

__all__ = ["simulate", "simulate_seeds", "resolve_scenario", "with_policies", "duration_seconds"]


def duration_seconds(duration: Any, origin: str = "simulate()") -> float | None:
    """A ``duration=`` argument in seconds: a number is seconds (fio's ``runtime=20``), a string may carry a unit
    (``"500ms"``); None stays None. Non-finite, huge or non-positive values are a located ScenarioError."""
    if duration is None:
        return None
    try:
        seconds = parse_seconds(duration)
    except ValueError as e:
        raise ScenarioError(origin, "duration", str(e)) from None
    if not seconds > 0:
        raise ScenarioError(origin, "duration", f"must be > 0, got {duration!r}")
    return seconds


def resolve_scenario(scenario: Scenario | str | Path | None) -> Scenario:
    """A Scenario from a path, an already loaded Scenario, or None (the embedded default)."""
    if scenario is None:
        return default_scenario()
    if isinstance(scenario, Scenario):
        return scenario
    return load_scenario(scenario)


def with_policies(scenario: Scenario, policies: Iterable[Any] | None) -> Scenario:
    """``scenario`` with its runs replaced by ``policies`` (spec strings, RunSpecs, Policy classes or instances); None keeps them."""
    if policies is None:
        return scenario
    policies = list(policies)
    specs = [p for p in policies if isinstance(p, str)]
    if len(specs) == len(policies):
        return scenario.with_policies(specs)
    runs: list[RunSpec] = []
    for p in policies:
        if isinstance(p, str):
            runs.extend(scenario.with_policies([p]).runs)
        elif isinstance(p, RunSpec):
            runs.append(p)
        else:
            runs.append(RunSpec(label=policy_label(p), policy=p))
    problems = unique_labels(runs, [(f"policies[{i}]", f"policies[{i}]") for i in range(len(runs))], "a RunSpec with its own label")
    if problems:
        raise ScenarioError.several("simulate()", problems)
    return scenario.with_runs(tuple(runs))


def simulate(
    scenario: Scenario | str | Path | None = None,
    *,
    policies: Iterable[Any] | None = None,
    duration: float | str | None = None,
    seed: int | None = None,
    engine: str = "auto",
    trace: bool = False,
    progress: bool = False,
    notify: Callable[[str], None] | None = None,
) -> Result:
    """Run every policy of a scenario on the same seed and compare them.

    ``scenario``: a file path, a loaded :class:`Scenario`, or None for the
    embedded default (the founding test drive, Hosterman 2018). ``policies``
    replaces the file's policies: spec strings (``"rr:iops=1"``), Policy subclasses or instances.
    ``duration`` (after the ramp: a number of seconds, or a string with a
    unit such as ``"500ms"``) and ``seed`` override the file's.
    ``trace=True`` keeps a per-I/O record in each run's ``metrics.trace``.
    ``engine``: ``"auto"`` (the fast engine when every policy can run on it:
    built-in ones and compiled-style PolicyDefs; else the reference engine),
    ``"fast"`` or ``"reference"``; both give the same numbers for the same seed.
    ``progress`` shows tqdm bars (the first compile of the fast engine, then
    simulated time); ``notify`` gets one line when the fast engine must compile
    first (about 35 s on 2 cores, once per machine).
    """
    sc = with_policies(resolve_scenario(scenario), policies)
    if engine not in ("auto", *ENGINES):
        raise ScenarioError("simulate()", "engine", f"unknown engine {engine!r} (engines: auto, {', '.join(ENGINES)})")
    custom = [run.label for run in sc.runs if not supports(run.policy)]
    if engine == "fast" and custom:
        raise ScenarioError(
            "simulate()",
            "engine",
            f"the fast engine runs built-in and compiled-style policies only; {custom[0]!r} is a Python policy: use engine='reference'",
        )
    if engine == "auto":
        engine = "fast" if not custom else "reference"
        if custom:
            names = ", ".join(repr(c) for c in custom)
            warnings.warn(
                f"pathsel: {names} {'is a Python policy' if len(custom) == 1 else 'are Python policies'}: running on the reference engine",
                stacklevel=2,
            )
    duration = duration_seconds(duration)
    if seed is not None and seed < 0:
        raise ScenarioError("simulate()", "seed", "must be >= 0")
    run_engine = ENGINES[engine]
    # compile_model refuses a time series too large for memory (its own duration: the file's or this call's)
    models = [compile_model(sc, run, duration=duration, seed=seed) for run in sc.runs]
    if engine == "fast":
        own = [resolve(spec)[0] for run in sc.runs for _, spec in run.devices]  # a policy per device
        prepare([*(resolve(run.policy)[0] for run in sc.runs), *own], notify=notify, progress=progress)
    bar = None
    if progress and models:
        from tqdm.auto import tqdm

        bar = tqdm(total=round(sum(m.end for m in models), 3), unit="sim s", leave=False, desc=sc.name[:30])
    result = Result(
        scenario=sc.name,
        source=sc.source,
        engine=engine,
        seed=models[0].seed if models else sc.model.seed,
        duration_s=models[0].duration if models else sc.model.duration,
        ramp_s=models[0].ramp if models else 0.0,
        config=sc.model,
    )
    done = 0.0
    for run, model in zip(sc.runs, models):
        tick = None
        if bar is not None:
            base = done

            def tick(now: float, base: float = base) -> None:
                bar.n = round(base + now, 3)
                bar.refresh()

        try:
            metrics = run_engine(model, run.policy, trace=trace, progress=tick)
        except MemoryError:
            if bar is not None:
                bar.close()
            raise ScenarioError(
                sc.source,
                "workloads",
                f"{run.label}: the run needs more memory than this machine has ({model.outstanding:,} outstanding I/Os "
                f"from {len(model.jobs):,} jobs over {len(model.paths):,} paths): lower numjobs, iodepth or the paths",
            ) from None
        done += model.end
        result.runs.append(
            RunResult(
                label=run.label,
                # a policy per device: the assignment ("lun0=latency; lun1=rr:iops=1000") is the run's spec
                policy=run.assignment or (run.policy.text if isinstance(run.policy, PolicySpec) else policy_label(run.policy)),
                engine=engine,
                model=model,
                metrics=metrics,
                expect_iops=run.expect_iops,
                expect_tolerance=run.expect_tolerance,
                expect_source=run.expect_source,
            )
        )
    if bar is not None:
        bar.close()
    return result


def simulate_seeds(
    scenario: Any = None,
    seeds: Iterable[int] = (0, 1, 2, 3, 4),
    *,
    duration: float | None = None,
    policies: Iterable[Any] | None = None,
    engine: str = "auto",
    progress: bool = False,
) -> pd.DataFrame:
    """Run :func:`simulate` once per seed: one row per seed x policy (``Result.summary()`` columns).

    The numbers behind :func:`pathsel.plots.compare_seeds`: one run is one
    sample, so compare policies by their spread over seeds, not by one run.
    """

    import pandas as pd

    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds: give at least one seed")
    policies = list(policies) if policies is not None else None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(seeds, unit="seed", leave=False, desc="seeds")
    frames = []
    for seed in seeds:
        res = simulate(scenario, policies=policies, duration=duration, seed=seed, engine=engine)
        df = res.summary()
        df.insert(0, "seed", seed)
        frames.append(df)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return pd.concat(frames, ignore_index=True)
