"""The ``pathsel`` command: its parser, which gathers the subcommands from their families in the order
``pathsel --help`` lists them, and :func:`main`, the console entry point.

Bad input prints one located message on stderr and exits with status 2,
never a traceback. Heavy modules (the engines and numba, pandas, the scenario
schema) are imported in the commands that use them, so --version, --help and
the listing commands answer at once (tests/test_startup.py).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from ..errors import ScenarioError
from ..version import __version__
from . import listings, run, studies, systems, validation, watch

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, status 2, as for scenario errors
        self.exit(2, f"pathsel: error: command line: {message}\n")


# Options whose value may look like an option ("--duration -1s"): argparse would take the
# value for an unknown option and say "expected one argument"; joined as --duration=-1s,
# the value reaches its check and gets a proper message.
_VALUE_OPTIONS = ("--duration", "--seed", "--replications", "--workers", "--top", "--speed", "--delay", "-d", "-n", "--iterations", "--timeout-scale")
_NEGATIVE = re.compile(r"-(?:[0-9.]|inf|nan)", re.IGNORECASE)


def _join_negative_values(argv: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] in _VALUE_OPTIONS and i + 1 < len(argv) and _NEGATIVE.match(argv[i + 1]):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pathsel", description="Simulate multipath path-selection policies and compare IOPS and latency.")
    parser.add_argument("--version", action="version", version=f"pathsel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    # in this order in --help and in an unknown command's list of choices
    run.add_simulate(sub)
    run.add_predict(sub)
    validation.add_validate(sub)
    listings.add_example(sub)
    listings.add_policies(sub)
    listings.add_schema(sub)
    run.add_warm(sub)
    run.add_report(sub)
    watch.add_top(sub)
    studies.add_sweep(sub)
    studies.add_recommend(sub)
    studies.add_league(sub)
    systems.add_import(sub)
    validation.add_calibrate(sub)
    listings.add_presets(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_join_negative_values(list(sys.argv[1:] if argv is None else argv)))
    try:
        return int(args.func(args))
    except ScenarioError as e:
        for line in e.lines():  # every problem of the file, one located line each
            print(f"pathsel: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pathsel: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `pathsel schema | head`: the reader left; not an error of ours
        sys.stderr = open(os.devnull, "w")
        return 0
