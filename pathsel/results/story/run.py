"""What the story reads of a result: the :class:`Run` and :class:`Runs` protocols.

Declared here, not imported from the results' classes: :mod:`pathsel.results.run` and
:mod:`pathsel.results.result` import the story, so the story knows nothing of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ...metrics import RunMetrics
from ...model import Model

__all__ = ["Run", "Runs"]


class Run(Protocol):
    """What the sentences read of one policy's run (:class:`~pathsel.results.RunResult` is one)."""

    @property
    def label(self) -> str: ...
    @property
    def model(self) -> Model: ...
    @property
    def metrics(self) -> RunMetrics: ...
    @property
    def expect_iops(self) -> float | None: ...
    @property
    def expect_tolerance(self) -> float: ...
    @property
    def expect_source(self) -> str: ...
    @property
    def ios(self) -> int: ...
    @property
    def iops(self) -> float: ...
    @property
    def latency_us(self) -> dict[str, float]: ...
    @property
    def accounting(self) -> dict[str, Any]: ...
    @property
    def expectation_error(self) -> float | None: ...
    def paths(self) -> list[dict[str, Any]]: ...
    def hosts(self) -> list[dict[str, Any]]: ...
    def faults(self) -> list[dict[str, Any]]: ...


class Runs(Protocol):
    """What the sentences read of a whole result: its runs (:class:`~pathsel.results.Result` is one)."""

    @property
    def runs(self) -> Sequence[Run]: ...
