"""Delay distributions: an object with ``sample(rng)``, ``mean`` and a description.

Written like Ciw's distributions, but every draw takes the caller's
``numpy.random.Generator``: there is no global random state anywhere in pathsel.

In a scenario file a delay is either a plain duration (``"50us"``, constant)
or a table: ``{dist = "exponential", mean = "100us"}``,
``{dist = "uniform", low = "40us", high = "60us"}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .units import format_duration, parse_duration

__all__ = ["Distribution", "Constant", "Exponential", "Uniform", "parse_delay"]


class Distribution(Protocol):
    """What the engines need from a delay."""

    @property
    def mean(self) -> float: ...

    @property
    def is_constant(self) -> bool: ...

    def sample(self, rng: np.random.Generator) -> float: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class Constant:
    value: float

    @property
    def mean(self) -> float:
        return self.value

    @property
    def is_constant(self) -> bool:
        return True

    def sample(self, rng: np.random.Generator) -> float:
        return self.value

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(n, self.value)

    def describe(self) -> str:
        return format_duration(self.value)


@dataclass(frozen=True)
class Exponential:
    mean_value: float

    @property
    def mean(self) -> float:
        return self.mean_value

    @property
    def is_constant(self) -> bool:
        return False

    def sample(self, rng: np.random.Generator) -> float:
        return float(rng.exponential(self.mean_value))

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.exponential(self.mean_value, n)

    def describe(self) -> str:
        return f"exponential(mean {format_duration(self.mean_value)})"


@dataclass(frozen=True)
class Uniform:
    low: float
    high: float

    @property
    def mean(self) -> float:
        return (self.low + self.high) / 2.0

    @property
    def is_constant(self) -> bool:
        return self.low == self.high

    def sample(self, rng: np.random.Generator) -> float:
        return float(rng.uniform(self.low, self.high))

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, n)

    def describe(self) -> str:
        return f"uniform({format_duration(self.low)}..{format_duration(self.high)})"


_KEYS = {"constant": {"value"}, "exponential": {"mean"}, "uniform": {"low", "high"}}


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def parse_delay(value: Any, *, allow_zero: bool = False) -> Distribution:
    """A duration string or a ``{dist = ...}`` table -> a distribution.

    Raises ValueError naming the problem; zero is refused unless ``allow_zero``
    (a network leg of zero length is always a mistake in a scenario file).
    """
    if isinstance(value, Constant | Exponential | Uniform):
        return value
    if isinstance(value, dict):
        kind = value.get("dist")
        if kind is None:
            raise ValueError(f"a delay table needs dist ({', '.join(sorted(_KEYS))})")
        if kind not in _KEYS:
            raise ValueError(f"dist must be one of {', '.join(sorted(_KEYS))}, got {kind!r}")
        extra = set(value) - _KEYS[kind] - {"dist"}
        if extra:
            raise ValueError(f"unknown key {sorted(extra)[0]!r} for {_a(kind)} distribution")
        missing = _KEYS[kind] - set(value)
        if missing:
            raise ValueError(f"{_a(kind)} distribution needs {sorted(missing)[0]!r}")
        if kind == "constant":
            dist: Distribution = Constant(parse_duration(value["value"]))
        elif kind == "exponential":
            dist = Exponential(parse_duration(value["mean"]))
        else:
            low, high = parse_duration(value["low"]), parse_duration(value["high"])
            if high < low:
                raise ValueError("uniform: high must be >= low")
            dist = Uniform(low, high)
    else:
        dist = Constant(parse_duration(value))
    floor = dist.low if isinstance(dist, Uniform) else dist.mean
    if floor < 0 or (floor == 0 and not allow_zero):
        raise ValueError("must be > 0" if not allow_zero else "must be >= 0")
    return dist
