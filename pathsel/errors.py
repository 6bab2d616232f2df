"""The one error users should see: where the input is wrong and why."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["ScenarioError", "closest"]


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
        """``file: place: problem``, one per problem."""
        return [f"{self.source}: {place}: {problem}" if place else f"{self.source}: {problem}" for place, problem in self.problems]

    def __reduce__(self):  # pickled across processes (sweeps): rebuild from the parts, not the message
        return (_rebuild, (self.source, self.problems))


def _rebuild(source: str, problems: tuple[tuple[str, str], ...]) -> ScenarioError:
    return ScenarioError.several(source, problems)
