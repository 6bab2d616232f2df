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

This module runs a sweep (here, in a process pool or on any executor) and
re-exports the table's helpers; the plan (the grid checked, points and seeded
runs) is :mod:`pathsel.studies.sweep_plan`, the results file
:mod:`pathsel.studies.sweep_store`, the table's columns and summaries
:mod:`pathsel.studies.table`.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..api import duration_seconds, simulate
from ..engine import prepare, resolve, supports
from ..errors import ScenarioError, check_writable
from ..limits import offered_problem, series_problem
from ..scenario import Scenario
from ..scenario.checks.size import device_count, offered_load, path_count
from ..scenario.overrides import format_value
from .sweep_plan import SweepRun, parse_param, plan_sweep
from .sweep_store import ResultsStore, in_plan_order, typed_table
from .table import (
    DEFAULT_REPLICATIONS,
    METRIC_COLUMNS,
    convergence_time,
    kavg_mean_us,
    param_columns,
    qfull_count,
    read_table,
    summarize,
)

if TYPE_CHECKING:
    from .recommend import Recommendation

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
        rec["kavg_us"] = kavg_mean_us(run)
        rec["qfull"] = qfull_count(run)
        rows.append(rec)
    return rows


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

    def recommend(self, **kwargs: Any) -> Recommendation:
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
    _tags: Mapping[str, float] | None = None,
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
    plan = plan_sweep(scenarios, params, replications=replications, seed=seed, policies=policies, duration=duration, origin=_origin)
    plan.tags = {k: float(v) for k, v in (_tags or {}).items()}
    plan.dtypes.update({k: "float64" for k in plan.tags})
    if duration is not None:  # the files' own durations passed the loader's check; this one is the sweep's
        for point in plan.points:
            m = point.sc.model
            span = max(w.ramp_time for w in m.workloads) + duration
            problem = series_problem(span, m.interval, path_count(m), device_count(m))
            if problem is not None:
                raise ScenarioError(point.sc.source, "interval", problem)
            problem = offered_problem(offered_load(m, span), span)
            if problem is not None:
                raise ScenarioError(point.sc.source, "workloads", problem)
    if _notify is not None:  # the command line prints them before the runs start
        for note in plan.notes:
            _notify(note)
    custom = sorted({r.label for p in plan.points for r in p.sc.runs if not supports(r.policy)})
    if custom and engine == "fast":
        raise ScenarioError(
            _origin,
            "engine",
            f"the fast engine runs built-in and compiled-style policies only; {custom[0]!r} is a Python policy: use engine='reference'",
        )
    if custom and engine == "auto":
        warnings.warn(f"pathsel: {', '.join(map(repr, custom))}: Python policies run on the reference engine", stacklevel=2)
    if engine != "reference":  # compile (or load) the fast engine once here, not in every worker at once
        defs = {id(d): d for d in (resolve(r.policy)[0] for p in plan.points for r in p.sc.runs if supports(r.policy))}
        prepare(list(defs.values()), progress=progress)

    store = ResultsStore(Path(out), plan) if out is not None else None
    done_keys: set[tuple[str, str, int]] = set()
    if store is not None:
        have = store.existing()
        planned = {r.key: r for r in plan.runs}
        partial = []
        for key, g in have.groupby(["scenario", "point", "replication"], sort=False):
            run = planned.get((key[0], key[1], int(key[2])))
            for tag, want in plan.tags.items():  # how the runs were made (a league's timeout_scale): named, not a bare mismatch
                had = float(g[tag].iloc[0])
                if had != want:
                    raise ScenarioError(
                        str(store.path),
                        "",
                        f"holds runs made with {tag} = {had:g} ({key[0]}); this run has {tag} = {want:g}: "
                        "use another --out, the same setting, or delete it",
                    )
            if run is None or int(g.seed.iloc[0]) != run.seed or g.config.iloc[0] != run.point.config:
                what = f"{key[0]} {key[1]} replication {key[2]}"
                raise ScenarioError(str(store.path), "", f"holds runs this sweep does not plan ({what}): use another --out, or delete it")
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

        bar = tqdm(
            total=len(plan.runs),
            initial=len(plan.runs) - len(todo),
            unit="run",
            desc="sweep",
            file=sys.stderr,
            dynamic_ncols=True,
            mininterval=0.2 if sys.stderr.isatty() else 5.0,
        )
        bar.set_postfix_str(f"points {points_done}/{len(plan.points)}", refresh=False)

    def finished(run: SweepRun, metrics: list[dict[str, Any]]) -> None:
        nonlocal points_done
        head = {"scenario": run.point.scenario, "point": run.point.text}
        rows = [
            {**head, **run.point.cells[m["policy"]], "replication": run.replication, "seed": run.seed, **m, "config": run.point.config, **plan.tags}
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
        table = in_plan_order(typed_table(pd.DataFrame(rows_mem, columns=plan.columns), plan), plan)
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


def _drive(
    pool: Executor, todo: list[SweepRun], window: int, duration: float | None, engine: str, finished: Callable[[SweepRun, list[dict[str, Any]]], None]
) -> None:
    """Keep at most ``window`` runs in flight (memory stays flat on long sweeps); record each as it ends."""
    it = iter(todo)
    pending: dict[Any, SweepRun] = {}

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
