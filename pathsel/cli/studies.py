"""The commands that run or read many runs: ``pathsel sweep`` (a grid of settings x replications), ``league``
(every policy over the scenario library) and ``recommend`` (from a sweep's table, the setting with the best
worst-case regret).

Sweep and league run in local worker processes, in this one (``--serial``) or
on a Dask cluster (``--dask``), and resume into the table ``--out`` names.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError
from ..outputs import check_output, same_file, scenario_files, write_atomic
from .arguments import duration, positive_float, positive_int, seed
from .common import json_text, writing
from .systems import add_emit_options, check_emit_only, emit_recommended

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from distributed import Client

    from ..studies.sweep import SweepResult

__all__ = ["add_sweep", "add_recommend", "add_league"]


def _summary_text(res: SweepResult) -> str:
    """The sweep's summary as a person reads it: per scenario, point and policy, mean ± 95 % CI."""
    import math

    import pandas as pd

    s = res.summary()
    if s.empty:
        return ""
    # KAVG (esxtop: time queued in the host) where the scenario models host queues, QFULL (QUEUE FULL statuses in the
    # measured window) where a target port has a queue depth; each column is left out otherwise.
    show = {
        "iops": ("IOPS", 1.0, "{:,.0f}"),
        "p99_us": ("p99 (ms)", 1e-3, "{:,.3f}"),
        "kavg_us": ("KAVG (ms)", 1e-3, "{:,.3f}"),
        "qfull": ("QFULL", 1.0, "{:,.0f}"),
        "convergence_s": ("convergence (s)", 1.0, "{:,.2f}"),
    }
    keys = ["scenario", "point", "policy"]
    rows: dict[tuple[Any, ...], dict[str, str]] = {}
    for r in s[s.metric.isin(list(show))].itertuples(index=False):
        name, scale, fmt = show[r.metric]
        half = "" if not math.isfinite(r.ci95) else " ± " + fmt.format(r.ci95 * scale)
        rows.setdefault(tuple(getattr(r, k) for k in keys), {})[name] = fmt.format(r.mean * scale) + half
    table = pd.DataFrame([{**dict(zip(keys, k)), **v} for k, v in rows.items()]).fillna("")
    return str(table.to_string(index=False)) + "\n"


def _dask_executor(address: str) -> tuple[Client, Executor]:
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - a dependency
        raise ScenarioError("command line", "--dask", "needs Dask's distributed package: pip install 'pathsel[dask]'") from None
    try:
        client = Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as e:
        raise ScenarioError("command line", f"--dask {address}", f"cannot connect: {e}") from None
    return client, client.get_executor()


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ..studies.sweep import parse_param, sweep

    params: dict[str, list[Any]] = {}
    for text in args.param or []:
        name, values = parse_param(text)
        if name in params:
            raise ScenarioError("command line", f"--param {name}", "is given twice: list all its values in one --param")
        params[name] = values
    if args.out:  # the table is appended to on purpose (a resume), but never over a scenario it runs
        inputs = [i for f in args.files or () for i in scenario_files(f, "a scenario file")]
        check_output(args.out, inputs, what="results table", option="--out")
    executor: Executor | str | None = "serial" if args.serial else None
    client = None
    if args.dask:
        client, executor = _dask_executor(args.dask)
    progress = not args.json and not args.quiet
    try:
        res = sweep(
            args.files or None,
            params,
            replications=args.replications,
            seed=args.seed,
            policies=args.policy,
            duration=args.duration,
            engine=args.engine,
            out=args.out,
            executor=executor,
            workers=args.workers,
            progress=progress,
            _origin="command line",
            _notify=lambda note: print(f"pathsel sweep: {note}", file=sys.stderr),
        )
    except KeyboardInterrupt:
        if args.out:
            print(f"pathsel: interrupted; finished runs are saved in {args.out}: run the same command to resume", file=sys.stderr)
        raise
    finally:
        if client is not None:
            client.close()
    if args.json:
        doc = {
            "out": str(res.out) if res.out else None,
            "points": res.points,
            "runs": res.ran + res.reused,
            "ran": res.ran,
            "reused": res.reused,
            "rows": len(res.table),
            "params": res.params,
            "skipped": res.skipped,
            "summary": json.loads(res.summary().to_json(orient="records")),
        }
        sys.stdout.write(json_text(doc) + "\n")
        return 0
    sys.stdout.write(_summary_text(res))
    where = f"; table in {res.out}" if res.out else " (no --out: nothing saved)"
    print(
        f"pathsel sweep: {res.points} point(s), {res.ran + res.reused} run(s) ({res.ran} run now, {res.reused} already saved), "
        f"{len(res.table)} row(s) in {res.wall_s:.1f} s{where}"
    )
    return 0


def _check_league_outputs(args: argparse.Namespace) -> None:
    """None of league's outputs (--out, --html, --markdown) over an input (its files, --table) or over another output."""
    inputs: list[tuple[str, Path]] = [("--table", Path(args.table))] if args.table else []
    for name in args.files or ():
        if Path(name).is_dir():
            inputs += [i for f in sorted(Path(name).glob("*.toml")) for i in scenario_files(f, f"a scenario file in {name}")]
        else:
            inputs += scenario_files(name, "a scenario file")
    outputs = [
        (opt, path, what)
        for opt, path, what in (
            ("--out", args.out, "results table"),
            ("--html", args.html, "HTML file"),
            ("--markdown", args.markdown, "Markdown file"),
        )
        if path
    ]
    for k, (opt, path, what) in enumerate(outputs):
        if opt == "--out" and args.table and same_file(path, args.table):
            continue  # ranking a table and naming it --out too reads it, writes nothing over it (league resumes into --out)
        named = Path(path).name
        if args.write_fresh and named.startswith("fresh-") and named.endswith(".toml") and same_file(Path(path).parent, args.write_fresh):
            raise ScenarioError(path, "", f"is where --write-fresh writes a generated scenario (fresh-NN-*.toml): give {opt} another name")
        check_output(path, inputs, what=what, option=opt)
        for other, there, _ in outputs[:k]:
            if same_file(path, there):
                raise ScenarioError(path, "", f"is given to both {other} and {opt}: one would overwrite the other; give each its own file")


def _cmd_league(args: argparse.Namespace) -> int:
    import tempfile

    from ..studies.fresh import write_fresh
    from ..studies.league import TIMEOUT_SCALE, League, check_timeout_scale, league, library_files, standings, table_extra
    from ..studies.table import read_table

    _check_league_outputs(args)
    if args.write_fresh and not args.fresh:
        raise ScenarioError("command line", "--write-fresh", "keeps the scenarios --fresh N generates: give --fresh N with it")
    if args.table and (args.files or args.fresh or args.sensitivity):
        raise ScenarioError("command line", "--table", "ranks a saved table without running: give no FILE, --fresh or --sensitivity with it")
    if args.table and args.timeout_scale is not None:
        raise ScenarioError("command line", "--timeout-scale", "applies to runs; --table ranks a saved table (its own scale is in it)")
    scale = check_timeout_scale(args.timeout_scale, "command line", "--timeout-scale") if args.timeout_scale is not None else TIMEOUT_SCALE
    files = None
    tmp = None
    client = None
    sens = None
    try:
        if args.table:
            scores, st = standings(args.table)
            saved = read_table(args.table)
            res = League(saved, scores, st, extra=table_extra(saved, str(args.table)))  # its timeout_scale column: the legend's note
        else:
            if args.fresh:
                if args.files:
                    raise ScenarioError("command line", "--fresh", "generates its own scenarios: give no FILE with it")
                folder = Path(args.write_fresh) if args.write_fresh else Path(tempfile.mkdtemp(prefix="pathsel-fresh-"))
                tmp = folder if not args.write_fresh else None
                write_fresh(folder, args.fresh, seed=args.fresh_seed)
                files = library_files(folder)
            else:
                files = [f for name in args.files for f in (library_files(name) if Path(name).is_dir() else [Path(name)])] or None
            executor: Executor | str | None = "serial" if args.serial else None
            if args.dask:
                client, executor = _dask_executor(args.dask)
            try:
                res = league(
                    files,
                    policies=args.policy,
                    replications=args.replications,
                    seed=args.seed,
                    duration=args.duration,
                    engine=args.engine,
                    out=args.out,
                    executor=executor,
                    workers=args.workers,
                    progress=not args.json and not args.quiet,
                    timeout_scale=scale,
                    _origin="command line",
                )
            except KeyboardInterrupt:
                if args.out:
                    print(f"pathsel: interrupted; finished runs are saved in {args.out}: run the same command to resume", file=sys.stderr)
                raise
            if args.sensitivity:
                from ..studies.league import sensitivity

                sens = sensitivity(
                    res,
                    scenarios=files,
                    replications=args.replications,
                    seed=args.seed,
                    duration=args.duration,
                    executor=executor,
                    workers=args.workers,
                    progress=not args.json and not args.quiet,
                )
    finally:
        if client is not None:
            client.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.html:
        with writing(args.html):
            res.write_html(args.html)
    if args.markdown:
        from ..studies.league import sensitivity_markdown

        text = res.markdown() + ("\n" + sensitivity_markdown(sens) if sens is not None else "")
        with writing(args.markdown):
            write_atomic(args.markdown, text)
    if args.json:
        doc = {
            "standings": json.loads(res.standings.to_json(orient="records")),
            "scores": json.loads(res.scores.to_json(orient="records")),
            "verdict": res.verdict(),
            "sensitivity": json.loads(sens.to_json(orient="records")) if sens is not None else None,
            "out": str(res.out) if res.out else None,
        }
        sys.stdout.write(json_text(doc) + "\n")
        return 0
    sys.stdout.write(res.text(top=args.top))
    if sens is not None:
        print("\nguard's sensitivity (regret against the best shipped policy per scenario, one parameter at a time):")
        for r in sens.itertuples():
            mark = " (default)" if r.default else ""
            print(
                f"  {r.parameter}={r.value:g}{mark}: worst IOPS regret {r.worst_iops_regret * 100:.1f} % ({r.worst_iops_scenario}), "
                f"worst p99 regret {r.worst_p99_regret * 100:.1f} % ({r.worst_p99_scenario}), {r.behind_5pct} scenario(s) > 5 % behind"
            )
    if not args.table:
        where = f"; table in {res.out}" if res.out else ""
        print(f"pathsel league: {res.ran + res.reused} run(s) ({res.ran} run now, {res.reused} already saved) in {res.wall_s:.1f} s{where}")
    for path in (args.html, args.markdown):
        if path:
            print(f"pathsel: wrote {path}")
    return 0


def _cmd_recommend(args: argparse.Namespace) -> int:
    from ..studies.recommend import recommend, write_html

    check_emit_only(args)
    if args.html:
        check_output(args.html, [("the results table", args.results)], what="HTML file", option="--html")
    rec = recommend(args.results, metrics=args.metric, policies=args.policy)
    if args.emit:
        return emit_recommended(args, rec)
    if args.html:
        with writing(args.html):
            write_html(rec, args.html)
    if args.json:
        sys.stdout.write(json_text(rec.to_dict()) + "\n")  # NaN (an interval of one replication) becomes null
        return 0
    sys.stdout.write(rec.text(top=args.top))
    if args.html:
        print(f"\npathsel: wrote {args.html} (a regret heatmap per metric)")
    return 0


def add_sweep(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel sweep``: a grid of policy and scenario parameters x replications."""
    swp = sub.add_parser("sweep", help="run a grid of policy and scenario parameters x replications; save a tidy table")
    swp.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="scenario files (default: the embedded Hosterman 2018 test drive); a [sweep] table in a file gives its grid",
    )
    swp.add_argument(
        "--param",
        action="append",
        metavar="NAME=V1,V2,...",
        help="a parameter and its values: FAMILY.key for a policy parameter (latency.num_sampling_cycles=16,32,64) or a scenario key (replication.one_way_latency=0.5ms,1ms; workloads[0].iodepth=8,32) (repeatable)",
    )
    swp.add_argument(
        "--replications", type=positive_int, metavar="N", help="runs per point on seeds spawned from --seed (default: the file's [sweep], else 3)"
    )
    swp.add_argument("--seed", type=seed, help="root seed of the replications (default: the file's [sweep] seed, else its seed)")
    swp.add_argument("--policy", action="append", metavar="SPEC", help="policy to run instead of the files' (repeatable)")
    swp.add_argument("--duration", type=duration, help="measured time after the ramp: seconds (20) or with a unit (500ms) (default: each file's)")
    swp.add_argument("--engine", default="auto", choices=["auto", "fast", "reference"], help="as for simulate")
    swp.add_argument("--out", metavar="FILE", help="results table, .parquet or .csv, written as runs finish; the same command again resumes")
    where = swp.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, metavar="N", help="local worker processes (default: every core)")
    where.add_argument("--serial", action="store_true", help="run in this process, one run after another")
    where.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster, e.g. tcp://scheduler:8786")
    swp.add_argument("--json", action="store_true", help="print the summary as one JSON document; no progress bar")
    swp.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    swp.set_defaults(func=_cmd_sweep)


def add_recommend(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel recommend``: from a sweep's results, the setting with the best worst-case regret."""
    rec = sub.add_parser("recommend", help="from a sweep's results: per metric, the setting with the best worst-case regret")
    rec.add_argument("results", metavar="RESULTS", help="a results table written by pathsel sweep --out (.parquet or .csv)")
    rec.add_argument(
        "--metric",
        action="append",
        choices=["iops", "p99", "convergence"],
        help="metric to recommend for (repeatable; default: all, convergence when there are faults)",
    )
    rec.add_argument(
        "--policy",
        action="append",
        metavar="NAME",
        help="policy label or family (latency, rr) to choose among (repeatable; default: the ones the swept policy parameters apply to)",
    )
    rec.add_argument("--html", metavar="FILE", help="also write the regret heatmaps to this HTML file")
    rec.add_argument("--top", type=positive_int, default=10, metavar="N", help="settings shown per metric (default: 10)")
    rec.add_argument("--json", action="store_true", help="print one JSON document")
    add_emit_options(rec, "the recommended setting")
    rec.set_defaults(func=_cmd_recommend)


def add_league(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel league``: every built-in policy over the scenario library."""
    lea = sub.add_parser("league", help="every built-in policy at its defaults over the scenario library: regret, league table, heatmaps")
    lea.add_argument(
        "files", nargs="*", metavar="FILE", help="scenario files or folders (default: the library, sims/library); their own policies are replaced"
    )
    lea.add_argument("--policy", action="append", metavar="SPEC", help="policies to rank instead of every built-in one (repeatable)")
    lea.add_argument("--replications", type=positive_int, default=3, metavar="N", help="runs per scenario and policy (default: 3)")
    lea.add_argument("--seed", type=seed, help="root seed of the replications (default: each file's seed)")
    lea.add_argument("--duration", type=duration, help="measured time after the ramp (default: each file's)")
    lea.add_argument("--engine", default="fast", choices=["auto", "fast", "reference"], help="as for simulate (default: fast)")
    lea.add_argument("--out", metavar="FILE", help="results table, .parquet or .csv, written as runs finish; the same command again resumes")
    lea.add_argument("--table", metavar="FILE", help="rank a results table already written by --out, without running")
    lea.add_argument(
        "--timeout-scale",
        type=positive_float,
        metavar="X",
        help="multiply each host's io_timeout and apd_timeout by X, in (0, 1], so faults that outlast them fail I/Os "
        "within the short runs (default: 0.01, 30 s -> 300 ms; 1: as the files give them; never below 10 us)",
    )
    lea.add_argument(
        "--fresh", type=positive_int, metavar="N", help="instead of the library: N scenarios generated from --fresh-seed (a held-out set)"
    )
    lea.add_argument("--fresh-seed", type=seed, default=20261123, help="seed of the generated scenarios (default: 20261123)")
    lea.add_argument("--write-fresh", metavar="DIR", help="keep the generated scenarios in DIR")
    lea.add_argument("--html", metavar="FILE", help="also write the league table and regret heatmaps to this HTML file")
    lea.add_argument("--markdown", metavar="FILE", help="also write the league table as Markdown")
    lea.add_argument("--top", type=positive_int, metavar="N", help="rows shown (default: all)")
    lea.add_argument("--sensitivity", action="store_true", help="also sweep guard's parameters one at a time over the same scenarios and seeds")
    where = lea.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, metavar="N", help="local worker processes (default: every core)")
    where.add_argument("--serial", action="store_true", help="run in this process, one run after another")
    where.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster, e.g. tcp://scheduler:8786")
    lea.add_argument("--json", action="store_true", help="print standings, scores and verdict as one JSON document")
    lea.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    lea.set_defaults(func=_cmd_league)
