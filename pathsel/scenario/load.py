"""Reading scenario files: TOML -> validated, cross-checked :class:`Scenario`.

Every problem becomes a line of a :class:`~pathsel.errors.ScenarioError`
naming the file, the place (``paths[3].one_way_latency``) and the problem.
Problems are found in two passes, and each pass reports all of its own: every
key's type and range (pydantic), then, when those pass, the references across
sections (:mod:`pathsel.scenario.checks`) and the policy specs (:mod:`pathsel.scenario.runs`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ScenarioError
from ..textread import TextReadError, read_capped
from ..timing.distributions import delay_files_relative_to
from .checks import check_references
from .checks.size import device_count, offered_load, path_count  # re-exported: their home before issue 49
from .messages import in_file_order, model_error
from .runs import RunSpec, run_from_entry, run_from_policies_entry, unique_labels, volume_policies
from .schema import ScenarioModel

__all__ = [
    "Scenario",
    "RunSpec",
    "load_scenario",
    "loads_scenario",
    "scenario_from_data",
    "build_scenario",
    "default_scenario",
    "DEFAULT_SCENARIO_NAME",
    "read_text",
    "read_toml",
    "parse_toml",
    "path_count",
    "device_count",
    "unique_labels",
    "offered_load",
]

DEFAULT_SCENARIO_NAME = "esxi-latency-testdrive.toml"


@dataclass(frozen=True)
class Scenario:
    """A validated scenario and where it came from."""

    model: ScenarioModel
    source: str
    runs: tuple[RunSpec, ...]

    @property
    def name(self) -> str:
        """The scenario's ``name`` (the file's top-level key; ``scenario`` when it gives none)."""
        return self.model.name

    def with_policies(self, specs: list[str]) -> Scenario:
        """The same scenario with other policies (``--policy`` on the command line)."""
        runs: list[RunSpec] = []
        places: list[tuple[str, str]] = []
        problems: list[tuple[str, str]] = []
        for s in specs:
            try:
                runs.append(run_from_entry(self.model, {"spec": s}, f"--policy {s!r}", None))
                places.append((f"--policy {s!r}", f"--policy {s!r}"))
            except ScenarioError as e:
                problems.extend(e.problems)
        problems.extend(unique_labels(runs, places, "SPEC,label=NAME"))
        if problems:
            raise ScenarioError.several("command line", problems)
        return Scenario(self.model, self.source, tuple(runs))

    def with_runs(self, runs: tuple[RunSpec, ...]) -> Scenario:
        """The same scenario with these runs in place of its own."""
        return Scenario(self.model, self.source, runs)


def build_scenario(data: dict[str, Any], source: str) -> Scenario:
    """Validate parsed TOML (``[sweep]`` and other tables of other commands already taken out)."""
    try:
        model = ScenarioModel.model_validate(data)
    except ValidationError as e:
        raise model_error(source, e, data) from None
    problems = check_references(model)
    runs, places = [], []
    own, own_problems = volume_policies(model, source)
    problems.extend(own_problems)
    for i, entry in enumerate(model.policies):
        try:
            run = run_from_policies_entry(model, entry, i, own, source)
        except ScenarioError as e:
            problems.extend(e.problems)
            continue
        runs.append(run)
        places.append((f"policies[{i}]" + (".label" if entry.label else ".spec"), f"policies[{i}]"))
    problems.extend(unique_labels(runs, places, 'label = "NAME"'))
    if problems:
        raise ScenarioError.several(source, in_file_order(problems))
    return Scenario(model=model, source=source, runs=tuple(runs))


def _deep_line(text: str, depth: int = 100) -> int | None:
    """The line where brackets and braces (outside strings, roughly) first nest ``depth`` deep."""
    level, line, quote = 0, 1, ""
    for ch in text:
        if ch == "\n":
            line += 1
        elif quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            level += 1
            if level >= depth:
                return line
        elif ch in "]}":
            level = max(0, level - 1)
    return None


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """TOML text -> a dict; a UTF-8 byte order mark is skipped. Bad TOML is a located ScenarioError."""
    text = text.removeprefix("\ufeff")  # Notepad and PowerShell write one; it is not a TOML statement
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        place = ""
        if "(at line" in msg:
            msg, _, where = msg.partition(" (at ")
            place = where.rstrip(")")
        raise ScenarioError(source, place, f"not valid TOML: {msg}") from None
    except RecursionError:
        line = _deep_line(text)
        raise ScenarioError(source, f"line {line}" if line else "", "arrays or inline tables nested too deep to read (hundreds of levels)") from None


def loads_scenario(text: str, source: str = "<string>") -> Scenario:
    """Parse scenario TOML text. ``source`` names it in error messages."""
    return scenario_from_data(parse_toml(text, source), source)


def scenario_from_data(data: dict[str, Any], source: str = "<data>") -> Scenario:
    """Validate parsed TOML (a dict) as :func:`loads_scenario` validates text.

    A ``[sweep]`` table is skipped: it belongs to ``pathsel sweep`` (which
    checks it), so a file with one still simulates as it stands.
    """
    if not data:
        raise ScenarioError(
            source,
            "",
            "holds no settings (only comments and blank lines): a scenario needs at least [[arrays]], "
            "[[paths]] and [[workloads]] (pathsel schema lists every key)",
        )
    if "validation" in data:
        # a validation case's scenario may live in another file or run a Python policy: studies know how
        raise ScenarioError(
            source,
            "validation",
            "a validation case file: from Python, run its scenario with pathsel.simulate(scenario_of(file)) "
            "(scenario_of from pathsel.studies.validate); pathsel simulate and pathsel validate take the file as it is",
        )
    try:
        return build_scenario({k: v for k, v in data.items() if k != "sweep"}, source)
    except RecursionError:  # a value nested hundreds deep that TOML read but a check cannot walk
        raise ScenarioError(source, "", "a value nested too deep to check (arrays or tables hundreds of levels deep)") from None


def read_text(path: str | Path, what: str = "scenario file") -> str:
    """A TOML file's text: at most 64 MB, UTF-8 (a byte order mark is skipped) or UTF-16 with its byte order mark.

    Every scenario, validation case and sweep file is read here, through :func:`pathsel.textread.read_capped`;
    every failure is a located ScenarioError naming the file. An empty file is read (as no settings): the
    loader says what a scenario needs.
    """
    try:
        return read_capped(path, what=what, allow_empty=True)
    except TextReadError as e:
        raise ScenarioError(str(path), e.place, e.problem) from None


def read_toml(path: str | Path, what: str = "scenario file") -> dict[str, Any]:
    """:func:`read_text` then :func:`parse_toml`: a TOML file as a dict, or a located ScenarioError."""
    return parse_toml(read_text(path, what), str(path))


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    source = str(path)
    text = read_text(path)
    with delay_files_relative_to(Path(path).resolve().parent):  # empirical delay files sit beside the scenario
        return loads_scenario(text, source)


def default_scenario() -> Scenario:
    """The embedded default: the founding ESXi latency round robin test drive (Hosterman 2018)."""
    text = resources.files("pathsel.data").joinpath("examples", DEFAULT_SCENARIO_NAME).read_text(encoding="utf-8")
    return loads_scenario(text, f"<default: {DEFAULT_SCENARIO_NAME}>")
