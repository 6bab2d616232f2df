"""The one error users should see: where the input is wrong and why."""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["ScenarioError", "closest", "check_writable"]


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate a misspelt ``word`` most likely meant (for "did you mean ...?"), or None if none is close."""
    match = difflib.get_close_matches(word, list(candidates), n=1)
    return match[0] if match else None


class ScenarioError(ValueError):
    """Bad input, located: ``file: place: problem``.

    The CLI prints each of :meth:`lines` as ``pathsel: error: LINE`` and exits
    with status 2; the API raises it. ``place`` is a key path like
    ``paths[3].one_way_latency``. One error may carry several problems of the
    same file (``problems``, first first); ``place`` and ``problem`` are the
    first's, and ``str(error)`` is one line per problem.
    """

    def __init__(self, source: str, place: str, problem: str, *, more: Iterable[tuple[str, str]] = ()) -> None:
        self.source = source
        self.place = place
        self.problem = problem
        self.problems: tuple[tuple[str, str], ...] = ((place, problem), *more)
        super().__init__("\n".join(self.lines()))

    @classmethod
    def several(cls, source: str, problems: Iterable[tuple[str, str]]) -> ScenarioError:
        """One error for every (place, problem) found in ``source`` (at least one)."""
        (place, problem), *more = problems
        return cls(source, place, problem, more=more)

    def lines(self) -> list[str]:
        """``file: place: problem``, one per problem (a problem quoting a huge value is cut to a readable line)."""
        return [_cut(f"{self.source}: {place}: {problem}" if place else f"{self.source}: {problem}") for place, problem in self.problems]

    def __reduce__(
        self,
    ) -> tuple[
        Callable[..., ScenarioError], tuple[str, tuple[tuple[str, str], ...]]
    ]:  # pickled across processes (sweeps): rebuild from the parts, not the message
        return (_rebuild, (self.source, self.problems))


_LINE_BREAKS = {ord(c): " " for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}
MAX_LINE = 2000  # characters of one message line; a value pasted by mistake can be megabytes long


def _cut(line: str) -> str:
    # one problem, one line, whatever a quoted value holds: every character a terminal or a reader splits lines at
    line = line.translate(_LINE_BREAKS)
    if len(line) <= MAX_LINE:
        return line
    return f"{line[: MAX_LINE - 40]} ... ({len(line) - MAX_LINE + 40:,} characters cut)"


def _rebuild(source: str, problems: tuple[tuple[str, str], ...]) -> ScenarioError:
    return ScenarioError.several(source, problems)


def check_writable(path: str | os.PathLike[str], what: str = "file") -> None:
    """Refuse, before any work, an output ``path`` that cannot be written: its folder missing, not a folder, or
    read-only, or the path itself a folder. A ScenarioError naming the path (``what``: the file's role)."""
    try:
        _check_writable(Path(path), str(path), what)
    except OSError as e:  # a name too long, a loop of links: is_dir() and exists() raise for those
        raise ScenarioError(str(path), "", f"cannot write the {what} there: {e.strerror or e}") from None


def _check_writable(target: Path, path: str, what: str) -> None:
    folder = target.parent
    if target.is_dir():
        raise ScenarioError(str(path), "", f"is a folder: give the {what} a file name")
    if not folder.exists():
        raise ScenarioError(str(path), "", f"no such folder {str(folder)!r}: create it first, or write the {what} elsewhere")
    if not folder.is_dir():
        raise ScenarioError(str(path), "", f"{str(folder)!r} is not a folder")
    try:  # os.access says yes to root and knows nothing of read-only mounts: try it
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".pathsel-", suffix=".tmp"):
            pass
    except OSError as e:
        raise ScenarioError(str(path), "", f"cannot write in folder {str(folder)!r}: {e.strerror or e}") from None
    if target.exists() and not os.access(target, os.W_OK):
        raise ScenarioError(str(path), "", f"cannot write the {what}: it is read-only")
