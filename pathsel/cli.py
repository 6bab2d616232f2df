"""The ``pathsel`` command.

``pathsel simulate [FILE]`` compares the scenario's policies (the embedded seed
004 test drive when no file is given). Bad input prints one located message
on stderr and exits with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from . import __version__
from .api import resolve_scenario, simulate
from .errors import ScenarioError
from .policies.spec import POLICY_DEFS
from .scenario.schema import ScenarioModel
from .units import parse_duration

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, status 2, as for scenario errors
        self.exit(2, f"pathsel: error: command line: {message}\n")


def _duration(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return seconds


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def _events_digest(result) -> list[str]:
    lines = []
    for r in result.runs:
        evals = [e for e in r.metrics.events if e["event"] == "evaluation"]
        if evals:
            first = evals[0]
            lines.append(
                f"  {r.label}: {len(evals)} evaluation(s); first at {first['t'] * 1e3:.1f} ms kept "
                f"{len(first['active'])} path(s), dropped {len(first['dropped'])}"
                + (f" ({', '.join(first['dropped'][:4])}{', ...' if len(first['dropped']) > 4 else ''})" if first["dropped"] else "")
            )
        faults = [e for e in r.metrics.events if e["event"] in ("path_down", "path_up", "alua")]
        for e in faults[:6]:
            lines.append(f"  {r.label}: {e['t']:g}s {e['event']} {e['path']} (now {e['alua']}, {'up' if e['up'] else 'down'})")
    return lines


def _cmd_simulate(args: argparse.Namespace) -> int:
    scenario = resolve_scenario(args.file)
    if args.policy:
        scenario = scenario.with_policies(args.policy)
    progress = not args.json and not args.quiet and sys.stderr.isatty()
    result = simulate(
        scenario, duration=args.duration, seed=args.seed, engine=args.engine, progress=progress
    )
    preds = None
    if args.predict:
        from .analytic import predict_scenario

        preds = predict_scenario(scenario, duration=args.duration, seed=args.seed)
    if args.json:
        if preds is None:
            sys.stdout.write(result.to_json() + "\n")
            return 0
        doc = json.loads(result.to_json())
        for run, p in zip(doc["runs"], preds):
            run["predicted"] = p.to_dict()
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return 0
    out = [result.table()]
    if preds is not None:
        from .analytic import format_beside

        out.append(format_beside(result, preds))
    digest = _events_digest(result)
    if digest:
        out.append("policy events:\n" + "\n".join(digest) + "\n")
    if args.paths:
        df = result.paths()
        cols = ["policy", "path", "array", "alua", "ios", "share", "mean_us", "p99_us"]
        out.append(df[cols].to_string(index=False, float_format=lambda v: f"{v:,.3f}") + "\n")
    for r in result.runs:
        acc = r.accounting
        if acc["issued"] != acc["completed"] + acc["failed"] + acc["in_flight"]:  # pragma: no cover - a bug
            out.append(f"ACCOUNTING ERROR in {r.label}: {acc}\n")
    sys.stdout.write("\n".join(out))
    return 0


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _cmd_policies(args: argparse.Namespace) -> int:
    for d in POLICY_DEFS.values():
        print(f"{d.name:10s} {d.summary}")
        for p in d.params:
            rng = f" [{_num(p.low)}..{_num(p.high)}]" if p.low is not None else (f" [{'|'.join(p.choices)}]" if p.choices else "")
            print(f"{'':12s}{p.name}={p.default}{rng}  {p.doc}")
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    print(json.dumps(ScenarioModel.model_json_schema(), indent=2))
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    from .analytic import format_predictions, predict_scenario, predictions_json
    from .validate import scenario_of

    scenario = scenario_of(args.file) or resolve_scenario(args.file)  # a validation case file works too
    if args.policy:
        scenario = scenario.with_policies(args.policy)
    preds = predict_scenario(scenario)
    if args.json:
        print(json.dumps(predictions_json(scenario.name, scenario.source, preds), indent=2))
    else:
        sys.stdout.write(format_predictions(scenario.name, preds, paths=args.paths))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validate import format_table, validate

    engines = None if args.engine == "both" else (args.engine,)
    progress = None
    if sys.stderr.isatty():
        def progress(name: str) -> None:
            print(f"pathsel validate: {name} ...", file=sys.stderr)
    rows = validate(args.cases or None, quick=args.quick, engines=engines, progress=progress)
    if args.json:
        print(json.dumps({"cases": [r.to_dict() for r in rows]}, indent=2))
    else:
        sys.stdout.write(format_table(rows))
    return 0 if all(r.passed for r in rows) else 1


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import write  # plotly only when a report is asked for

    scenario = resolve_scenario(args.file)
    if args.policy:
        scenario = scenario.with_policies(args.policy)
    progress = not args.quiet and sys.stderr.isatty()
    result = simulate(scenario, duration=args.duration, seed=args.seed, engine=args.engine, progress=progress)
    try:
        path = write(result, args.output)
    except OSError as e:
        print(f"pathsel: error: {args.output}: cannot write the report: {e.strerror or e}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(f"pathsel: wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {len(result.runs)} policies)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pathsel", description="Simulate multipath path-selection policies and compare IOPS and latency.")
    parser.add_argument("--version", action="version", version=f"pathsel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sim = sub.add_parser("simulate", help="run a scenario's policies and print the comparison")
    sim.add_argument("file", nargs="?", help="scenario TOML file (default: the embedded seed 004 test drive)")
    sim.add_argument("--policy", action="append", metavar="SPEC", help="policy to run instead of the file's, e.g. rr:iops=1, latency:num_sampling_cycles=32 (repeatable)")
    sim.add_argument("--duration", type=_duration, help="measured time after the ramp, e.g. 30s")
    sim.add_argument("--seed", type=_seed, help="random seed (same seed, same results)")
    sim.add_argument("--engine", default="auto", choices=["auto", "fast", "reference"], help="fast (numba), reference (SimPy), or auto: fast when every policy is built in (default)")
    sim.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    sim.add_argument("--paths", action="store_true", help="also print per-path shares and latencies")
    sim.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    sim.add_argument("--predict", action="store_true", help="also show the analytic figures (pathsel predict) beside the simulated ones")
    sim.set_defaults(func=_cmd_simulate)

    pre = sub.add_parser("predict", help="print the analytic figures: throughput bounds, and Mean Value Analysis where a policy has a fixed split")
    pre.add_argument("file", nargs="?", help="scenario TOML file (default: the embedded seed 004 test drive)")
    pre.add_argument("--policy", action="append", metavar="SPEC", help="policy to analyse instead of the file's (repeatable)")
    pre.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    pre.add_argument("--paths", action="store_true", help="also print each policy's path shares and MVA latency per path")
    pre.set_defaults(func=_cmd_predict)

    val = sub.add_parser("validate", help="run the validation cases (sims/validation) and compare with published and exact figures")
    val.add_argument("cases", nargs="*", metavar="CASE", help="case files or directories (default: sims/validation)")
    val.add_argument("--quick", action="store_true", help="short runs (the test suite's)")
    val.add_argument("--engine", default="both", choices=["both", "fast", "reference"], help="engines to run built-in policies on (default: both; Python policies always run on reference)")
    val.add_argument("--json", action="store_true", help='print {"cases": [...]} on stdout')
    val.set_defaults(func=_cmd_validate)

    pol = sub.add_parser("policies", help="list the built-in policies, their parameters and defaults")
    pol.set_defaults(func=_cmd_policies)

    sch = sub.add_parser("schema", help="print the JSON Schema of scenario files (for editors)")
    sch.set_defaults(func=_cmd_schema)

    rep = sub.add_parser("report", help="run a scenario's policies and write a self-contained HTML report with figures")
    rep.add_argument("file", nargs="?", help="scenario TOML file (default: the embedded seed 004 test drive)")
    rep.add_argument("-o", "--output", default="report.html", metavar="HTML", help="where to write the report (default: report.html)")
    rep.add_argument("--policy", action="append", metavar="SPEC", help="policy to run instead of the file's (repeatable)")
    rep.add_argument("--duration", type=_duration, help="measured time after the ramp, e.g. 30s")
    rep.add_argument("--seed", type=_seed, help="random seed (same seed, same results)")
    rep.add_argument("--engine", default="auto", choices=["auto", "fast", "reference"], help="as for simulate")
    rep.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no closing line")
    rep.set_defaults(func=_cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ScenarioError as e:
        print(f"pathsel: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pathsel: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `pathsel schema | head`: the reader left; not an error of ours
        sys.stderr = open(os.devnull, "w")
        return 0


if __name__ == "__main__":
    sys.exit(main())
