"""What the command families share: the scenario a FILE names, the engine to run it on, the fast engine's compile
notice, strict JSON on stdout, and a failed write as one located line."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError

if TYPE_CHECKING:
    from ..scenario import Scenario
    from ..studies.validate import Case

__all__ = ["json_text", "writing", "scenario_of", "engine_for", "compile_notice"]


def json_text(doc: Any) -> str:
    """Strict JSON (RFC 8259): infinities and NaN, which JSON has no word for, are null."""
    from ..results.document import jsonable

    return json.dumps(jsonable(doc), indent=2, allow_nan=False, default=str)


@contextlib.contextmanager
def writing(path: str, what: str = "") -> Iterator[None]:
    """An OSError while writing ``path`` (a full disk, a folder gone read-only) as one located line."""
    try:
        yield
    except OSError as e:
        raise ScenarioError(path, "", f"cannot write{' ' + what if what else ''}: {e.strerror or e}") from None


def scenario_of(args: argparse.Namespace) -> tuple[Scenario, Case | None]:
    """The scenario FILE holds (a validation case's too), with --policy's policies; and the case, if it is one."""
    from ..api import resolve_scenario
    from ..studies.validate import case_of

    case = case_of(args.file)
    scenario = case.runnable_scenario if case is not None else resolve_scenario(args.file)
    if args.policy:
        scenario = scenario.with_policies(args.policy)
    return scenario, case


def engine_for(scenario: Scenario, engine: str) -> str:
    """auto takes the reference engine, without a warning, for a validation case's random split (a Python policy)."""
    from ..engine import supports

    python = [r.label for r in scenario.runs if not supports(r.policy)]
    if not python:
        return engine
    if engine == "fast":
        raise ScenarioError(
            "command line",
            "--engine fast",
            f"the fast engine runs built-in and compiled-style policies only, and {python[0]!r} is a Python policy: use --engine reference",
        )
    return "reference"


def compile_notice(args: argparse.Namespace) -> Callable[[str], None] | None:
    """One line on stderr when the fast engine compiles first (none with -q)."""
    if getattr(args, "quiet", False):
        return None
    return lambda line: print(line, file=sys.stderr, flush=True)
