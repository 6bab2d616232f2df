"""The example scenarios and validation cases installed with pathsel: a checkout's ``sims/``.

A wheel has no ``sims/`` folder beside it; these functions (and
``pathsel example`` on the command line) reach the same files wherever
pathsel is installed::

    >>> import pathsel
    >>> pathsel.examples.names()[:2]                                   # doctest: +SKIP
    ['cloud-metro-az', 'esxi-hpp-nvme']
    >>> pathsel.simulate(pathsel.examples.path("fast-failover"))       # doctest: +SKIP
    >>> pathsel.examples.load("validation/failover")                   # doctest: +SKIP
    >>> pathsel.examples.copy("cloud-metro-az", "my-sims")             # doctest: +SKIP

A name is a file's path under ``sims/`` without ``.toml``
(``fast-failover``, ``library/gray-flapping-path``, ``validation/failover``);
``sims/fast-failover.toml`` works too. The files live in ``pathsel/data/examples/`` (see
:mod:`pathsel.data`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .data import EXAMPLES
from .errors import ScenarioError, closest
from .outputs import write_atomic

if TYPE_CHECKING:
    from .scenario import Scenario

__all__ = ["names", "path", "text", "title", "files", "load", "copy"]

_SOURCE = "pathsel.examples"


def names() -> list[str]:
    """Every example: the scenarios, the scenario library (``library/NAME``), then the validation cases (``validation/NAME``)."""
    scenarios = sorted(p.stem for p in EXAMPLES.glob("*.toml"))
    library = sorted(f"library/{p.stem}" for p in (EXAMPLES / "library").glob("*.toml"))
    cases = sorted(f"validation/{p.stem}" for p in (EXAMPLES / "validation").glob("*.toml"))
    return scenarios + library + cases


def _name(name: str) -> str:
    """``sims/fast-failover.toml`` -> ``fast-failover``."""
    name = str(name).strip().replace("\\", "/")
    name = name.removeprefix("./").removeprefix("sims/")
    return name.removesuffix(".toml")


def path(name: str, *, _source: str = _SOURCE, _place: str = "", _hint: str = "pathsel.examples.names() lists them") -> Path:
    """The installed file of example ``name``; an unknown name raises a ScenarioError saying the closest one."""
    key = _name(name)
    known = names()
    if key not in known:
        guess = closest(key, known)
        mean = f" (did you mean {guess!r}?)" if guess else ""
        raise ScenarioError(_source, f"{_place}{str(name)!r}", f"no such example{mean}; {_hint}")
    return EXAMPLES / f"{key}.toml"


def text(name: str) -> str:
    """The TOML text of example ``name``, comments included."""
    return path(name).read_text(encoding="utf-8")


def _toml(file: Path) -> dict[str, Any]:
    with open(file, "rb") as f:
        return tomllib.load(f)


def title(name: str) -> str:
    """A line saying what example ``name`` is: its scenario's ``name`` (a validation case: its ``case``)."""
    data = _toml(path(name))
    if isinstance(data.get("name"), str):
        return str(data["name"])
    meta = data.get("validation")
    return str(meta.get("case", "")) if isinstance(meta, dict) else ""


def _reads(file: Path) -> list[Path]:
    """The files a scenario or case file reads: empirical delay files, traces, a case's scenario file (and what it reads)."""
    data = _toml(file)
    out: list[Path] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("dist") == "empirical" and isinstance(node.get("file"), str):
                out.append((file.parent / node["file"]).resolve())
            if isinstance(node.get("read_iolog"), str):  # a trace a workload replays
                out.append((file.parent / node["read_iolog"]).resolve())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    meta = data.pop("validation", None)
    walk(data)
    if isinstance(meta, dict) and isinstance(meta.get("scenario"), str):
        target = (file.parent / meta["scenario"]).resolve()
        out.append(target)
        out.extend(_reads(target))
    return out


def files(name: str) -> list[Path]:
    """Example ``name``'s file, then every file it reads, each once (all inside the examples folder)."""
    out: list[Path] = []
    for f in [path(name).resolve(), *_reads(path(name))]:
        if f not in out:
            out.append(f)
    return out


def load(name: str) -> Scenario:
    """Example ``name`` as a :class:`~pathsel.Scenario`; a validation case gives the scenario it runs."""
    from .scenario.load import load_scenario
    from .studies.validate import case_of

    file = path(name)
    case = case_of(file)
    return case.runnable_scenario if case is not None else load_scenario(file)


def copy(name: str | None = None, to: str | Path = ".") -> list[Path]:
    """Write example ``name`` (every example when None) and the files it reads into ``to``, laid out as in ``sims/``.

    Returns the files, written or already there with the same contents; a file
    already there with other contents raises a ScenarioError and nothing is
    written. The copies run as they stand: ``pathsel simulate TO/NAME.toml``.
    """
    wanted = names() if name is None else [name]
    sources: list[Path] = []
    for n in wanted:
        for f in files(n) if name is not None else [path(n)]:
            if f not in sources:
                sources.append(f)
    if name is None:  # everything: the measurement files and a site's captures too, READMEs and scripts included
        extra = sorted(p for sub in ("data", "site", "library") for p in (EXAMPLES / sub).iterdir() if p.is_file())
        sources += [p for p in extra if p not in sources]
    dest = Path(to)
    plan = [(f, dest / f.relative_to(EXAMPLES)) for f in sources]
    clash = [str(d) for f, d in plan if d.exists() and (not d.is_file() or d.read_bytes() != f.read_bytes())]
    if clash:
        more = f" (and {len(clash) - 1} more)" if len(clash) > 1 else ""
        raise ScenarioError(clash[0], "", f"exists and is not the example's file{more}: not overwritten, nothing written")
    for f, d in plan:
        if not d.exists():
            try:
                d.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(d, f.read_bytes())  # a killed copy leaves no half file to be refused next time
            except OSError as e:
                raise ScenarioError(str(d), "", f"cannot write: {e.strerror or e}") from None
    return [d for _, d in plan]
