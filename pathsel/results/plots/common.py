"""What every figure of a run shares: its runs, its title, and each policy's colour, dash and marker (so a policy
looks the same in every figure)."""

from __future__ import annotations

from typing import Any

from plotly.colors import qualitative

from .. import Result, RunResult

__all__ = ["runs_of", "figure_title", "policy_color", "policy_line", "policy_marker", "MARKERS_UP_TO"]

_PALETTE = qualitative.Plotly


def runs_of(result: Result | RunResult) -> list[RunResult]:
    """The runs a figure draws: every policy's of a Result, or the one RunResult."""
    if isinstance(result, RunResult):
        return [result]
    if isinstance(result, Result):
        return list(result.runs)
    raise TypeError(f"expected a pathsel Result or RunResult, got {type(result).__name__}")


def figure_title(result: Result | RunResult, what: str) -> str:
    """A figure's title: what it shows, over the scenario's name."""
    name = result.scenario if isinstance(result, Result) else result.model.name
    return f"{what}<br><sup>{name}</sup>"


def policy_color(i: int) -> str:
    """Policy ``i``'s colour, the same in every figure."""
    return str(_PALETTE[i % len(_PALETTE)])


_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "hexagon")
#: above this many points a line has no markers: they would hide it
MARKERS_UP_TO = 40


def policy_line(i: int) -> dict[str, Any]:
    """Policy ``i``'s line: its colour, a dash of its own, and wider for earlier policies, so two policies with
    the same numbers show as a wide line with a thin one of another colour and dash inside it."""
    return dict(color=policy_color(i), dash=_DASHES[i % len(_DASHES)], width=max(1.5, 5.0 - 1.2 * i))


def policy_marker(i: int) -> dict[str, Any]:
    """Policy ``i``'s marker: a symbol of its own, bigger for earlier policies."""
    return dict(symbol=_SYMBOLS[i % len(_SYMBOLS)], size=max(5, 10 - 2 * i), color=policy_color(i))
