"""The kinds of delay: every delay of the model (path legs, replication link, array service) is one of them.

Written like Ciw's distributions, but every draw takes the caller's
``numpy.random.Generator``: there is no global random state anywhere in pathsel.

Each distribution is a frozen dataclass with

* ``mean``, ``variance`` (seconds, seconds²), ``is_constant``, ``describe()``;
* ``sample_block(rng, n)``: ``n`` draws as a float64 array, every value >= 0.
  The engines draw only through it. Constant, exponential and uniform give
  exactly the numbers ``numpy`` gives for ``full``, ``exponential(mean, n)``
  and ``uniform(low, high, n)``. Every other kind is an inverse CDF applied to
  ``rng.random(n)``: one standard uniform per draw, so draw k is the same
  whatever the block size;
* ``sample(rng)``: one draw (the first of a block of one);
* ``quantile(q)`` and ``cdf(x)``: exact (a mixture's quantile is found by
  bisection on its CDF);
* ``input_quantiles()``: p50, p90, p99 and p99.9 of what the user gave, so a
  run can show the fit.

Import them from :mod:`pathsel.timing.distributions`, which also reads them
from a scenario file (:func:`~pathsel.timing.distributions.parse_delay`);
empirical delays are read from measurement files by
:mod:`pathsel.timing.delay_files`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..stats import norm_cdf, norm_pdf, norm_ppf
from ..units import format_duration

__all__ = [
    "Distribution",
    "Constant",
    "Exponential",
    "Uniform",
    "Normal",
    "LogNormal",
    "Mixture",
    "Empirical",
    "INPUT_QUANTILES",
    "signed_duration",
]

# The quantiles a run reports back for each delay, by name.
INPUT_QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p99.9": 0.999}

_Z99 = 2.3263478740408408  # standard normal 99th percentile (NormalDist().inv_cdf(0.99))


class Distribution(Protocol):
    """What the engines and the results need from a delay."""

    @property
    def mean(self) -> float: ...

    @property
    def variance(self) -> float: ...

    @property
    def is_constant(self) -> bool: ...

    def sample(self, rng: np.random.Generator) -> float: ...

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray: ...

    def quantile(self, q: float) -> float: ...

    def cdf(self, x: float) -> float: ...

    def input_quantiles(self) -> dict[str, float]: ...

    def describe(self) -> str: ...


# -- shared behaviour ------------------------------------------------------------


def signed_duration(seconds: float) -> str:
    """format_duration for messages, where a bad value may be negative."""
    return "-" + format_duration(-seconds) if seconds < 0 else format_duration(seconds)


def _check_q(q: float) -> float:
    q = float(q)
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile: q must be between 0 and 1 (exclusive), got {q!r}")
    return q


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"sample_block: n must be an integer >= 0, got {n!r}")
    return int(n)


class _Delay:
    """Defaults for the inverse-CDF kinds: they define ``_ppf`` (vectorised quantile)."""

    # Each value comes from its own draws, in order: n values drawn at once equal n drawn in any blocks
    # (the fast engine draws such a stream straight into its row). A stateful kind (arrivals' cumulative
    # schedules) rounds differently by block, and is read in the same chunks on both engines instead.
    elementwise = True

    def _ppf(self, u: np.ndarray) -> np.ndarray:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        out = self._ppf(rng.random(_check_n(n)))
        # guards rounding at u = 0 (e.g. a normal's -inf tail); the math never goes below 0
        floored: np.ndarray = np.maximum(out, 0.0, out=out)
        return floored

    def sample(self, rng: np.random.Generator) -> float:
        return float(self.sample_block(rng, 1)[0])

    def quantile(self, q: float) -> float:
        return float(self._ppf(np.array([_check_q(q)]))[0])

    def input_quantiles(self) -> dict[str, float]:
        return {name: self.quantile(q) for name, q in INPUT_QUANTILES.items()}


# -- the three original kinds (their draws must not change) -----------------------


@dataclass(frozen=True)
class Constant(_Delay):
    value: float

    @property
    def mean(self) -> float:
        return self.value

    @property
    def variance(self) -> float:
        return 0.0

    @property
    def is_constant(self) -> bool:
        return True

    def sample(self, rng: np.random.Generator) -> float:
        return self.value

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(_check_n(n), self.value, dtype=np.float64)  # draws nothing, as sample() does

    def _ppf(self, u: np.ndarray) -> np.ndarray:
        return np.full(len(u), self.value, dtype=np.float64)

    def cdf(self, x: float) -> float:
        return 1.0 if x >= self.value else 0.0

    def describe(self) -> str:
        return format_duration(self.value)


@dataclass(frozen=True)
class Exponential(_Delay):
    mean_value: float

    @property
    def mean(self) -> float:
        return self.mean_value

    @property
    def variance(self) -> float:
        return self.mean_value**2

    @property
    def is_constant(self) -> bool:
        return False

    def sample(self, rng: np.random.Generator) -> float:
        return float(rng.exponential(self.mean_value))

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.exponential(self.mean_value, _check_n(n))

    def _ppf(self, u: np.ndarray) -> np.ndarray:
        drawn: np.ndarray = -self.mean_value * np.log1p(-u)
        return drawn

    def cdf(self, x: float) -> float:
        return 0.0 if x <= 0 else -math.expm1(-x / self.mean_value)

    def describe(self) -> str:
        return f"exponential(mean {format_duration(self.mean_value)})"


@dataclass(frozen=True)
class Uniform(_Delay):
    low: float
    high: float

    @property
    def mean(self) -> float:
        return (self.low + self.high) / 2.0

    @property
    def variance(self) -> float:
        return (self.high - self.low) ** 2 / 12.0

    @property
    def is_constant(self) -> bool:
        return self.low == self.high

    def sample(self, rng: np.random.Generator) -> float:
        return float(rng.uniform(self.low, self.high))

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, _check_n(n))

    def _ppf(self, u: np.ndarray) -> np.ndarray:
        return self.low + (self.high - self.low) * u

    def cdf(self, x: float) -> float:
        if x >= self.high:
            return 1.0
        if x < self.low:
            return 0.0
        return (x - self.low) / (self.high - self.low)

    def describe(self) -> str:
        return f"uniform({format_duration(self.low)}..{format_duration(self.high)})"


# -- parametric kinds ---------------------------------------------------------------


@dataclass(frozen=True)
class Normal(_Delay):
    """A normal with mean ``mu`` and standard deviation ``sigma``, truncated at 0.

    Drawn by inverse CDF on the truncated range (no resampling), so one
    uniform gives one draw. ``mean`` and ``variance`` are the truncated ones.
    """

    mu: float
    sigma: float

    def __post_init__(self) -> None:
        if not (self.mu > 0 and math.isfinite(self.mu)):
            raise ValueError(f"normal: mean must be > 0, got {signed_duration(self.mu)}")
        if not (self.sigma > 0 and math.isfinite(self.sigma)):
            raise ValueError(f"normal: stddev must be > 0, got {signed_duration(self.sigma)}")

    @property
    def _cut(self) -> float:
        """P(untruncated < 0): the mass moved off by the truncation."""
        return norm_cdf(-self.mu / self.sigma)

    @property
    def _hazard(self) -> float:
        a = -self.mu / self.sigma
        return norm_pdf(a) / norm_cdf(self.mu / self.sigma)

    @property
    def mean(self) -> float:
        return self.mu + self.sigma * self._hazard

    @property
    def variance(self) -> float:
        a, h = -self.mu / self.sigma, self._hazard
        return self.sigma**2 * (1.0 + a * h - h * h)

    @property
    def is_constant(self) -> bool:
        return False

    def _ppf(self, u: np.ndarray) -> np.ndarray:
        cut = self._cut
        return self.mu + self.sigma * norm_ppf(cut + (1.0 - cut) * u)

    def cdf(self, x: float) -> float:
        if x <= 0:
            return 0.0
        cut = self._cut
        return max(0.0, (norm_cdf((x - self.mu) / self.sigma) - cut) / (1.0 - cut))

    def describe(self) -> str:
        return f"normal(mean {format_duration(self.mu)}, stddev {format_duration(self.sigma)}, truncated at 0)"


@dataclass(frozen=True)
class LogNormal(_Delay):
    """``shift + exp(N(mu, sigma²))``: log-normal above a floor ``shift`` (seconds).

    Build it from the figures people quote: :meth:`from_median_p99` or
    :meth:`from_mean_stddev`; both figures are of the whole delay, shift included.
    """

    mu: float
    sigma: float
    shift: float = 0.0

    def __post_init__(self) -> None:
        if not (self.sigma > 0 and math.isfinite(self.sigma) and math.isfinite(self.mu)):
            raise ValueError(f"lognormal: sigma must be > 0 and finite, got {self.sigma!r}")
        if not (self.shift >= 0 and math.isfinite(self.shift)):
            raise ValueError(f"lognormal: shift must be >= 0, got {signed_duration(self.shift)}")

    @classmethod
    def from_median_p99(cls, median: float, p99: float, shift: float = 0.0) -> LogNormal:
        if shift < 0:
            raise ValueError(f"lognormal: shift must be >= 0, got {signed_duration(shift)}")
        if median <= shift:
            raise ValueError(f"lognormal: median must be above the shift (median {signed_duration(median)}, shift {signed_duration(shift)})")
        if p99 <= median:
            raise ValueError(f"lognormal: p99 must be above the median (median {signed_duration(median)}, p99 {signed_duration(p99)})")
        mu = math.log(median - shift)
        return cls(mu, (math.log(p99 - shift) - mu) / _Z99, shift)

    @classmethod
    def from_mean_stddev(cls, mean: float, stddev: float, shift: float = 0.0) -> LogNormal:
        if shift < 0:
            raise ValueError(f"lognormal: shift must be >= 0, got {signed_duration(shift)}")
        if stddev <= 0:
            raise ValueError(f"lognormal: stddev must be > 0, got {signed_duration(stddev)}")
        if mean <= shift:
            raise ValueError(f"lognormal: mean must be above the shift (mean {signed_duration(mean)}, shift {signed_duration(shift)})")
        s2 = math.log1p((stddev / (mean - shift)) ** 2)
        return cls(math.log(mean - shift) - s2 / 2.0, math.sqrt(s2), shift)

    @property
    def mean(self) -> float:
        return self.shift + math.exp(self.mu + self.sigma**2 / 2.0)

    @property
    def variance(self) -> float:
        return math.expm1(self.sigma**2) * math.exp(2.0 * self.mu + self.sigma**2)

    @property
    def is_constant(self) -> bool:
        return False

    def _ppf(self, u: np.ndarray) -> np.ndarray:
        return self.shift + np.exp(self.mu + self.sigma * norm_ppf(u))

    def cdf(self, x: float) -> float:
        if x <= self.shift:
            return 0.0
        return norm_cdf((math.log(x - self.shift) - self.mu) / self.sigma)

    def describe(self) -> str:
        median = format_duration(self.shift + math.exp(self.mu))
        p99 = format_duration(self.shift + math.exp(self.mu + self.sigma * _Z99))
        shift = f"shift {format_duration(self.shift)}, " if self.shift else ""
        return f"lognormal({shift}median {median}, p99 {p99})"


# -- mixture ------------------------------------------------------------------------


@dataclass(frozen=True)
class Mixture(_Delay):
    """With probability ``weights[k]`` a draw comes from ``components[k]``.

    Weights are normalised to sum to 1. One uniform per draw: it picks the
    component and, rescaled to [0, 1), is that component's inverse-CDF input.
    """

    weights: tuple[float, ...]
    components: tuple[Any, ...]

    def __post_init__(self) -> None:
        if not self.components or len(self.weights) != len(self.components):
            raise ValueError("mixture: needs one weight per component and at least one component")
        if any(not (w > 0 and math.isfinite(w)) for w in self.weights):
            raise ValueError(f"mixture: weights must be > 0, got {list(self.weights)}")
        if any(isinstance(c, Mixture) for c in self.components):
            raise ValueError("mixture: a component cannot itself be a mixture (list its parts in this one)")
        total = math.fsum(self.weights)
        object.__setattr__(self, "weights", tuple(float(w) / total for w in self.weights))
        object.__setattr__(self, "components", tuple(self.components))  # hashable, like every delay

    @property
    def _edges(self) -> np.ndarray:
        """Upper end of each component's slice of [0, 1); the last is exactly 1."""
        edges = np.cumsum(self.weights)
        edges[-1] = 1.0
        return edges

    @property
    def mean(self) -> float:
        return math.fsum(w * c.mean for w, c in zip(self.weights, self.components))

    @property
    def variance(self) -> float:
        m2 = math.fsum(w * (c.variance + c.mean**2) for w, c in zip(self.weights, self.components))
        return max(0.0, m2 - self.mean**2)

    @property
    def is_constant(self) -> bool:
        return all(c.is_constant for c in self.components) and len({c.mean for c in self.components}) == 1

    def _ppf(self, u: np.ndarray) -> np.ndarray:
        edges = self._edges
        k = np.searchsorted(edges[:-1], u, side="right")
        out = np.empty(len(u), dtype=np.float64)
        lower = np.concatenate(([0.0], edges[:-1]))
        below_one = np.nextafter(1.0, 0.0)
        for i, comp in enumerate(self.components):
            pick = k == i
            if pick.any():
                v = np.minimum((u[pick] - lower[i]) / self.weights[i], below_one)  # rounding must not reach 1
                out[pick] = comp._ppf(v)
        return out

    def cdf(self, x: float) -> float:
        return min(1.0, math.fsum(w * c.cdf(x) for w, c in zip(self.weights, self.components)))

    def quantile(self, q: float) -> float:
        """Bisection on the CDF; the answer lies between the components' own q-quantiles."""
        q = _check_q(q)
        each: list[float] = [c.quantile(q) for c in self.components]
        lo, hi = min(each), max(each)
        for _ in range(200):
            if hi - lo <= 1e-15 * max(hi, 1e-300):
                break
            mid = 0.5 * (lo + hi)
            if self.cdf(mid) >= q:
                hi = mid
            else:
                lo = mid
        return hi

    def describe(self) -> str:
        parts = ", ".join(f"{w * 100:.3g}% {c.describe()}" for w, c in zip(self.weights, self.components))
        return f"mixture({parts})"


# -- empirical ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Empirical(_Delay):
    """A piecewise-linear quantile function through ``(probs[i], values[i])``.

    From samples (:meth:`from_samples`): the sorted samples at probabilities
    i/(n-1), i.e. inverse CDF with linear interpolation between order
    statistics (numpy's default ``quantile``). From a printed percentile table
    (:meth:`from_quantile_table`, sockperf): the table's points, min at 0 and
    max at 1. Never draws outside [min, max].
    """

    probs: np.ndarray
    values: np.ndarray
    source: str = ""
    count: int = 0  # observations behind it (samples, or what the tool says it measured)
    what: str = "samples"
    scale: float = 1.0  # already applied to values; kept to describe where they came from

    def __post_init__(self) -> None:
        probs = np.array(self.probs, dtype=np.float64)
        values = np.array(self.values, dtype=np.float64)
        if probs.ndim != 1 or probs.shape != values.shape or len(probs) < 2:
            raise ValueError("empirical: needs at least two (probability, value) points of the same length")
        if probs[0] != 0.0 or probs[-1] != 1.0 or np.any(np.diff(probs) <= 0):
            raise ValueError("empirical: probabilities must rise strictly from 0 to 1")
        if not np.all(np.isfinite(values)) or np.any(np.diff(values) < 0):
            raise ValueError("empirical: values must be finite and must not fall as the probability rises")
        if values[0] < 0:
            raise ValueError(f"empirical: values must be >= 0, got {signed_duration(values[0])}")
        probs.setflags(write=False)  # frozen means frozen: nobody edits the table under a run
        values.setflags(write=False)
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "values", values)

    @classmethod
    def from_samples(cls, samples: Any, source: str = "", what: str = "samples", scale: float = 1.0) -> Empirical:
        """Samples in seconds (``scale`` already applied: it is only remembered for ``describe``)."""
        x = np.sort(np.asarray(samples, dtype=np.float64).ravel())
        if len(x) == 0:
            raise ValueError("empirical: no samples")
        if len(x) == 1:
            x = np.repeat(x, 2)  # one sample: a constant, still drawn through the same path
            return cls(np.array([0.0, 1.0]), x, source, 1, what, scale)
        return cls(np.arange(len(x)) / (len(x) - 1), x, source, len(x), what, scale)

    @classmethod
    def from_quantile_table(
        cls, probs: Any, values: Any, source: str = "", count: int = 0, what: str = "percentiles", scale: float = 1.0
    ) -> Empirical:
        """Points (probability, seconds) of the quantile function, from 0 to 1."""
        probs, values = np.asarray(probs, dtype=np.float64), np.asarray(values, dtype=np.float64)
        return cls(probs, values, source, count, what, scale)

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuild through __init__ so that an unpickled copy is read-only too
        return (Empirical, (self.probs, self.values, self.source, self.count, self.what, self.scale))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Empirical):
            return NotImplemented
        return self.source == other.source and np.array_equal(self.probs, other.probs) and np.array_equal(self.values, other.values)

    def __hash__(self) -> int:
        return hash((self.source, len(self.values), self.values.tobytes()))

    @property
    def mean(self) -> float:
        # the integral of the piecewise-linear quantile function: the mean of what is drawn
        p, v = self.probs, self.values
        return float(np.sum(np.diff(p) * (v[1:] + v[:-1]) / 2.0))

    @property
    def variance(self) -> float:
        p, v = self.probs, self.values
        m2 = float(np.sum(np.diff(p) * (v[:-1] ** 2 + v[:-1] * v[1:] + v[1:] ** 2) / 3.0))
        return max(0.0, m2 - self.mean**2)

    @property
    def is_constant(self) -> bool:
        return bool(self.values[0] == self.values[-1])

    def _ppf(self, u: np.ndarray) -> np.ndarray:
        drawn: np.ndarray = np.interp(u, self.probs, self.values)
        return drawn

    def cdf(self, x: float) -> float:
        """The largest p with quantile(p) <= x (ties in the values are jumps of the CDF)."""
        v, p = self.values, self.probs
        i = int(np.searchsorted(v, x, side="right"))
        if i == 0:
            return 0.0
        if i == len(v):
            return 1.0
        return float(p[i - 1] + (x - v[i - 1]) / (v[i] - v[i - 1]) * (p[i] - p[i - 1]))

    def describe(self) -> str:
        name = Path(self.source).name if self.source else "samples"
        scaled = f" x {self.scale:g}" if self.scale != 1 else ""
        count = f"{self.count} {self.what}{scaled}, " if self.count else ""
        return f"empirical({name}: {count}median {format_duration(self.quantile(0.5))}, p99 {format_duration(self.quantile(0.99))})"
