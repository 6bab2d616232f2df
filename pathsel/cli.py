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
    if args.json:
        sys.stdout.write(result.to_json() + "\n")
        return 0
    out = [result.table()]
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
    sim.set_defaults(func=_cmd_simulate)

    pol = sub.add_parser("policies", help="list the built-in policies, their parameters and defaults")
    pol.set_defaults(func=_cmd_policies)

    sch = sub.add_parser("schema", help="print the JSON Schema of scenario files (for editors)")
    sch.set_defaults(func=_cmd_schema)
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
