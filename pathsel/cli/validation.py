"""The commands that hold the model against figures from elsewhere: ``pathsel validate`` (published and exact
figures, the validation cases) and ``pathsel calibrate`` (your measurements: fit a scenario's unknowns to them)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .arguments import duration, positive_int, seed
from .common import json_text, writing

__all__ = ["add_validate", "add_calibrate"]


def _cmd_validate(args: argparse.Namespace) -> int:
    from ..studies.validate import Row, case_line, format_table, validate

    # None: the length's own engines (fast for the default and --quick, both for --full)
    engines = {None: None, "both": ("fast", "reference")}.get(args.engine, (args.engine,))
    progress = done = None
    if not args.quiet:
        # a line per case on stderr, tty or not (a log of a long run shows where it is); on a terminal the
        # case's name shows while it runs and its line replaces it
        tty = sys.stderr.isatty()

        def progress(name: str) -> None:
            if tty:
                print(f"pathsel validate: {name} ...", end="", file=sys.stderr, flush=True)

        def done(name: str, rows: list[Row], seconds: float) -> None:
            print(("\r\x1b[K" if tty else "") + f"pathsel validate: {case_line(name, rows, seconds)}", file=sys.stderr, flush=True)

    # One process by default: on this project's busy 2-core machine, spawning workers (each imports pathsel)
    # did not pay, paired; --workers helps with idle cores and --full.
    workers = 1 if args.serial else args.workers or 1
    rows = validate(args.cases or None, quick=args.quick, full=args.full, engines=engines, progress=progress, done=done, workers=workers)
    if args.json:
        print(json_text({"cases": [r.to_dict() for r in rows]}))
    else:
        sys.stdout.write(format_table(rows))
    return 0 if all(r.passed for r in rows) else 1


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from ..outputs import check_output, scenario_files
    from ..studies.calibrate import calibrate

    if args.output:  # before the fit's runs: -o onto the scenario or a measurement would destroy it
        measured = [("--measured", m) for m in args.measured or ()]
        check_output(args.output, [*scenario_files(args.file), *measured], what="scenario", option="-o")
    progress = None
    if not args.quiet and not args.json:

        def progress(line: str) -> None:
            print(f"pathsel calibrate: {line}", file=sys.stderr, flush=True)

    notify = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    cal = calibrate(
        args.file,
        args.fit,
        args.measured or (),
        policy=args.policy,
        duration=args.duration,
        replications=args.replications,
        seed=args.seed,
        device=args.device,
        op=args.op,
        progress=progress,
        notify=notify,
    )
    if args.output:
        with writing(args.output):
            cal.write(args.output)
    if args.json:
        from ..results.document import jsonable

        sys.stdout.write(json.dumps(jsonable(cal.to_dict()), indent=2) + "\n")
        return 0
    sys.stdout.write(cal.report())
    if args.output:
        print(f"\npathsel: wrote {args.output} (the scenario with the fitted values)")
    return 0


def add_validate(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel validate``: run the validation cases."""
    val = sub.add_parser("validate", help="run the validation cases (sims/validation) and compare with published and exact figures")
    val.add_argument(
        "cases",
        nargs="*",
        metavar="CASE",
        help="case files or directories (default: ./sims/validation if there is one, else the cases installed with pathsel)",
    )
    length = val.add_mutually_exclusive_group()
    length.add_argument("--quick", action="store_true", help="each case at its quick_duration, short lengths at which its checks hold")
    length.add_argument("--full", action="store_true", help="each case at its full_duration on both engines (tens of minutes)")
    val.add_argument(
        "--engine",
        default=None,
        choices=["both", "fast", "reference"],
        help="engines to run built-in policies on (default: fast; both with --full; Python policies always run on reference)",
    )
    val.add_argument("--json", action="store_true", help='print {"cases": [...]} on stdout')
    where = val.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=positive_int, metavar="N", help="N > 1: the reference engine's cases in N worker processes beside this one (default: 1)"
    )
    where.add_argument("--serial", action="store_true", help="run every case in this process, one after another (the default)")
    val.add_argument("-q", "--quiet", action="store_true", help="no line per case on stderr")
    val.set_defaults(func=_cmd_validate)


def add_calibrate(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel calibrate``: fit a scenario's unknowns to measured figures."""
    cal = sub.add_parser("calibrate", help="fit a scenario's unknowns (service time, latencies, concurrency) to measured IOPS and latency")
    cal.add_argument("file", nargs="?", help="scenario TOML file (default: the embedded Hosterman 2018 test drive)")
    cal.add_argument(
        "--fit",
        action="append",
        required=True,
        metavar="NAME",
        help="an unknown: service_time, one_way_latency, concurrency, replication_latency; NAME@ARRAY or NAME@PATH for some entries, NAME=LOW..HIGH for its range (repeatable)",
    )
    cal.add_argument(
        "--measured",
        action="append",
        metavar="FILE",
        help="fio JSON, esxtop -b CSV, iostat -x, or pathsel simulate --json (repeatable; default: the scenario's expect figures)",
    )
    cal.add_argument(
        "--policy", metavar="SPEC", help="the policy the measured set-up ran (default: the run the file names, else the scenario's first)"
    )
    cal.add_argument("--device", metavar="NAME", help="the device of an esxtop or iostat capture (default: the busiest)")
    cal.add_argument("--op", choices=["read", "write"], help="compare fio's read or write figures only")
    cal.add_argument("--duration", type=duration, help="measured time of each candidate's runs (default: the file's)")
    cal.add_argument(
        "--replications", type=positive_int, default=2, metavar="N", help="seeds per candidate, the same for every candidate (default: 2)"
    )
    cal.add_argument("--seed", type=seed, help="root of the seeds (default: the scenario's)")
    cal.add_argument("-o", "--output", metavar="TOML", help="write the scenario with the fitted values")
    cal.add_argument("--json", action="store_true", help="print the fit as one JSON document")
    cal.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    cal.set_defaults(func=_cmd_calibrate)
