"""The one error users should see: where the input is wrong and why."""

from __future__ import annotations

__all__ = ["ScenarioError"]


class ScenarioError(ValueError):
    """Bad input, located: ``file: place: problem``.

    The CLI prints ``str(error)`` on one line and exits with status 2; the API
    raises it. ``place`` is a key path like ``paths[3].one_way_latency``.
    """

    def __init__(self, source: str, place: str, problem: str) -> None:
        self.source = source
        self.place = place
        self.problem = problem
        where = f"{source}: {place}" if place else source
        super().__init__(f"{where}: {problem}")
