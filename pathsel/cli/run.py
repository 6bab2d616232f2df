"""The commands that run one scenario: ``pathsel simulate``, ``predict``, ``warm`` and ``report``.

Each takes a scenario FILE (a validation case's too; none: the embedded
default) and ``--policy SPEC`` in place of its policies.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import ScenarioError
from ..outputs import check_output, scenario_files
from .arguments import duration, seed
from .common import compile_notice, engine_for, json_text, scenario_of, writing
from .systems import add_emit_options, check_emit_only, emit_simulate

__all__ = ["add_simulate", "add_predict", "add_warm", "add_report"]


def _cmd_simulate(args: argparse.Namespace) -> int:
    from ..api import simulate

    check_emit_only(args)
    scenario, case = scenario_of(args)
    if args.emit:
        return emit_simulate(args, scenario)
    progress = not args.json and not args.quiet and sys.stderr.isatty()
    result = simulate(
        scenario,
        duration=args.duration,
        seed=args.seed,
        engine=engine_for(scenario, args.engine),
        progress=progress,
        notify=compile_notice(args),
    )
    preds = None
    if args.predict:
        from ..studies.analytic import predict_scenario

        preds = predict_scenario(scenario, duration=args.duration, seed=args.seed)
    if args.json:
        if preds is None:
            sys.stdout.write(result.to_json() + "\n")
            return 0
        doc = json.loads(result.to_json())
        for run, p in zip(doc["runs"], preds):
            run["predicted"] = p.to_dict()
        sys.stdout.write(json_text(doc) + "\n")
        return 0
    out = [result.table()]
    if preds is not None:
        from ..studies.analytic import format_beside

        out.append(format_beside(result, preds))
    from ..results.story import text as story_text

    out.append(story_text(result))
    for by in dict.fromkeys(args.by or ()):
        out.append(result.breakdown_table(by))
    if args.paths:
        out.append(result.paths_table())
    for r in result.runs:
        acc = r.accounting
        if acc["issued"] != acc["completed"] + acc["failed"] + acc["in_flight"]:  # pragma: no cover - a bug
            out.append(f"ACCOUNTING ERROR in {r.label}: {acc}\n")
    if case is not None:
        out.append(
            f"validation case {case.name} ({case.source}): pathsel validate {args.file} compares it with its {len(case.checks)} expected figure(s)\n"
        )
    sys.stdout.write("\n".join(out))
    return 0


def _cmd_warm(args: argparse.Namespace) -> int:
    """Compile the fast engine and policies now, so that later runs (and every worker of a sweep) start at once."""
    import time

    from ..engine.fast.warm import prepare
    from ..policies.registry import BUILTIN

    started = time.perf_counter()
    python: list[str] = []
    if args.all:
        if args.file or args.policy:
            what = "FILE" if args.file else "--policy"
            raise ScenarioError("command line", "--all", f"compiles every built-in policy: drop {what}, or drop --all")
        defs = list(BUILTIN)
    else:
        from ..engine import resolve, supports

        scenario, _ = scenario_of(args)
        own = [spec for run in scenario.runs for _, spec in run.devices]
        specs = [*(run.policy for run in scenario.runs), *own]
        # a Python policy (a class of the user's, a validation case's random split) runs on the reference engine:
        # nothing of it is compiled; the engine still is, for the file's other policies and later runs
        python = sorted({getattr(spec, "name", type(spec).__name__) for spec in specs if not supports(spec)})
        defs = [resolve(spec)[0] for spec in specs if supports(spec)]
    quiet = args.quiet
    prepare(defs, notify=None if quiet else compile_notice(args), progress=not quiet and sys.stderr.isatty())
    if not quiet:
        from ..jit import cache_dir

        names = sorted({d.name for d in defs})
        shown = (" and " + (", ".join(names) if len(names) <= 6 else f"{len(names)} policies")) if names else ""
        verb = "are" if names else "is"
        print(f"pathsel warm: the fast engine{shown} {verb} compiled in {cache_dir()} ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
        if python:
            print(f"pathsel warm: {', '.join(python)}: Python, run on the reference engine (nothing to compile)", file=sys.stderr)
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    from ..studies.analytic import format_predictions, predict_scenario, predictions_json

    scenario, _ = scenario_of(args)  # a validation case file works too
    preds = predict_scenario(scenario)
    if args.json:
        print(json_text(predictions_json(scenario.name, scenario.source, preds)))
    else:
        sys.stdout.write(format_predictions(scenario.name, preds, paths=args.paths))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from ..api import simulate
    from ..results.report import write  # plotly only when a report is asked for

    scenario, _ = scenario_of(args)  # a validation case file works too
    check_output(args.output, scenario_files(args.file), what="report", option="-o")  # before the run, not after it
    progress = not args.quiet and sys.stderr.isatty()
    result = simulate(
        scenario, duration=args.duration, seed=args.seed, engine=engine_for(scenario, args.engine), progress=progress, notify=compile_notice(args)
    )
    with writing(args.output, "the report"):
        path = write(result, args.output)  # atomic: a failure leaves the old report, never half a new one
    if not args.quiet:
        print(f"pathsel: wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {len(result.runs)} policies)")
    return 0


def add_simulate(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel simulate``: run a scenario's policies, print the comparison."""
    sim = sub.add_parser("simulate", help="run a scenario's policies and print the comparison")
    sim.add_argument("file", nargs="?", help="scenario TOML file, or a validation case file (default: the embedded Hosterman 2018 test drive)")
    sim.add_argument(
        "--policy",
        action="append",
        metavar="SPEC",
        help="policy to run instead of the file's, e.g. rr:iops=1, latency:num_sampling_cycles=32 (repeatable); it runs on "
        "every device, in place of the volumes' own policies too ([[volumes]] policy)",
    )
    sim.add_argument("--duration", type=duration, help="measured time after the ramp: seconds (20) or with a unit (500ms, 2min)")
    sim.add_argument("--seed", type=seed, help="random seed (same seed, same results)")
    sim.add_argument(
        "--engine",
        default="auto",
        choices=["auto", "fast", "reference"],
        help="fast (numba), reference (SimPy), or auto: fast when every policy is built in (default)",
    )
    sim.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    sim.add_argument("--paths", action="store_true", help="also print per-path I/Os, shares, IOPS, I/Os in flight and latencies")
    sim.add_argument(
        "--by",
        action="append",
        choices=["host", "device", "op", "workload"],
        help="also print the figures per host, per device (a host's view of a volume), per op (read, write) or per "
        "workload (a VM or fio job: esxtop's VM view) (repeatable)",
    )
    sim.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    sim.add_argument("--predict", action="store_true", help="also show the analytic figures (pathsel predict) beside the simulated ones")
    add_emit_options(sim, "the chosen policy (--policy SPEC) without running it")
    sim.set_defaults(func=_cmd_simulate)


def add_predict(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel predict``: the analytic figures, without a run."""
    pre = sub.add_parser("predict", help="print the analytic figures: throughput bounds, and Mean Value Analysis where a policy has a fixed split")
    pre.add_argument("file", nargs="?", help="scenario TOML file (default: the embedded Hosterman 2018 test drive)")
    pre.add_argument("--policy", action="append", metavar="SPEC", help="policy to analyse instead of the file's (repeatable)")
    pre.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    pre.add_argument("--paths", action="store_true", help="also print each policy's path shares and MVA latency per path")
    pre.set_defaults(func=_cmd_predict)


def add_warm(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel warm``: compile the fast engine and policies ahead."""
    wrm = sub.add_parser(
        "warm",
        help="compile the fast engine and a scenario's policies now (once per machine), so that the first run starts at once",
    )
    wrm.add_argument("file", nargs="?", metavar="FILE", help="scenario whose policies to compile (default: the embedded default)")
    wrm.add_argument("--policy", action="append", metavar="SPEC", help="compile this policy instead of the file's (repeatable)")
    wrm.add_argument("--all", action="store_true", help="compile every built-in policy (what a sweep or a league may run)")
    wrm.add_argument("-q", "--quiet", action="store_true", help="no notice, no progress bar, no summary")
    wrm.set_defaults(func=_cmd_warm)


def add_report(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel report``: a run's self-contained HTML report."""
    rep = sub.add_parser("report", help="run a scenario's policies and write a self-contained HTML report with figures")
    rep.add_argument("file", nargs="?", help="scenario TOML file, or a validation case file (default: the embedded Hosterman 2018 test drive)")
    rep.add_argument("-o", "--output", default="report.html", metavar="HTML", help="where to write the report (default: report.html)")
    rep.add_argument("--policy", action="append", metavar="SPEC", help="policy to run instead of the file's (repeatable)")
    rep.add_argument("--duration", type=duration, help="measured time after the ramp: seconds (20) or with a unit (500ms, 2min)")
    rep.add_argument("--seed", type=seed, help="random seed (same seed, same results)")
    rep.add_argument("--engine", default="auto", choices=["auto", "fast", "reference"], help="as for simulate")
    rep.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no closing line")
    rep.set_defaults(func=_cmd_report)
