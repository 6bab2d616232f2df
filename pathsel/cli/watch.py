"""``pathsel top``: its options and the command, which hands the run to :func:`pathsel.top.run_top`.

The live view needs a terminal; ``-b`` (esxtop's batch CSV) and ``--text`` do
not. :mod:`pathsel.top` and the engines load after the "starting..." line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import ScenarioError
from ..units import MAX_DURATION as _MAX_SECONDS
from .arguments import duration, positive_float, positive_int, seed
from .common import compile_notice, scenario_of

__all__ = ["add_top"]


def _speed(text: str) -> float:
    """top's --speed: a number of simulated seconds per wall-clock second, within what pacing can wait for."""
    from ..top.run import SPEED_MAX, SPEED_MIN

    value = positive_float(text)
    if not SPEED_MIN <= value <= SPEED_MAX:
        raise argparse.ArgumentTypeError(f"must be between {SPEED_MIN:g} and {SPEED_MAX:g} simulated seconds per wall-clock second, got {text!r}")
    return value


_ERASE_LINE = "\r\x1b[2K"  # to the line's start, then erase it (ECMA-48 CR and EL 2)


def _cmd_top(args: argparse.Namespace) -> int:
    batch = args.batch or args.text
    if not batch and not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise ScenarioError("command line", "pathsel top", "needs a terminal for its live view: add -b for esxtop's CSV or --text")
    if args.iterations is not None and args.iterations * args.delay > _MAX_SECONDS:
        raise ScenarioError(
            "command line",
            "argument -n",
            f"{args.iterations} samples every {args.delay:g} s is {args.iterations * args.delay:g} simulated seconds, "
            f"more than {_MAX_SECONDS:g}: fewer samples or a shorter -d",
        )
    # at once, before numba and the scenario load (a second or more; the first compile ~30 s, which says so)
    if not batch:
        # on the terminal's own screen, without a newline, and erased however top ends (q, the run's end, an error):
        # the terminal is left as it was, not at a "starting..." that is no longer true
        print("pathsel top: starting... (loading the scenario and the engine)", end="", flush=True)
    elif sys.stderr.isatty():
        print("pathsel top: starting... (loading the scenario and the engine)", file=sys.stderr, flush=True)
    try:
        from ..top.run import pick_run, run_top
        from ..top.views import VIEWS

        scenario, _ = scenario_of(argparse.Namespace(file=args.file, policy=None))
        run = pick_run(scenario, args.policy)
        speed = None if batch and args.speed is None else (args.speed or 1.0)
        view = VIEWS.get(args.view, args.view)
        return run_top(
            scenario,
            run,
            speed=speed,
            refresh=args.delay,
            view=view,
            batch=batch,
            text=args.text,
            iterations=args.iterations,
            duration=args.duration,
            seed=args.seed,
            notify=compile_notice(args),
        )
    finally:
        if not batch:
            sys.stdout.write(_ERASE_LINE)
            sys.stdout.flush()


def add_top(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel top``: watch one policy's run live, as esxtop shows a host."""
    top = sub.add_parser(
        "top",
        help="watch one policy's run live as esxtop shows a host: per device, adapter, path, host and VM; -b writes esxtop's CSV",
    )
    top.add_argument("file", nargs="?", help="scenario TOML file (default: the embedded Hosterman 2018 test drive)")
    top.add_argument("--policy", metavar="SPEC", help="the file's policy with this label or spec, or any policy spec (default: the file's first)")
    top.add_argument(
        "--speed",
        type=_speed,
        metavar="X",
        help="simulated seconds per wall-clock second: paces the frames (default 1: real time; -b and --text: as fast as it runs)",
    )
    top.add_argument(
        "-d",
        "--delay",
        type=duration,
        default=1.0,
        metavar="S",
        help="seconds between samples on the simulated host's clock, as esxtop's -d on the host's (default 1); "
        "on screen a frame every S/speed wall seconds",
    )
    top.add_argument(
        "-n",
        "--iterations",
        type=positive_int,
        metavar="N",
        help="stop after N samples, as esxtop's -n (without --duration the run lasts long enough for them)",
    )
    top.add_argument(
        "--view",
        default="devices",
        choices=["devices", "adapters", "paths", "hosts", "vms", "u", "d", "p", "h", "v"],
        help="first view, by name or esxtop's key: u devices, d adapters, v VMs (esxtop's screens); p paths, h hosts (pathsel's)",
    )
    top.add_argument("--duration", type=duration, help="measured time after the ramp: seconds (20) or with a unit (500ms)")
    top.add_argument("--seed", type=seed, help="random seed (same seed, same results)")
    top.add_argument(
        "-b", "--batch", action="store_true", help="write esxtop -b's perfmon CSV (PDH-CSV 4.0), a line per sample, to stdout (no terminal needed)"
    )
    top.add_argument("--text", action="store_true", help="print plain-text snapshots of the view instead, one per sample (no terminal needed)")
    top.set_defaults(func=_cmd_top)
