"""Delay distributions: every delay of the model (path legs, replication link, array service).

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

In a scenario file a delay is a plain duration (``"50us"``, constant) or a
table with ``dist`` = ``constant``, ``exponential``, ``uniform``, ``normal``,
``lognormal``, ``mixture`` or ``empirical`` (plain numbers, ping, sockperf,
latte, or fio's JSON completion latencies: :mod:`pathsel.measured.fio`);
see docs/distributions.md.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import closest
from ..measured import MeasureError, fio_latency_table, load_fio
from ..stats import norm_cdf, norm_pdf, norm_ppf
from ..units import MAX_DURATION, format_duration, parse_duration
from .textfile import read_scenario_text

__all__ = [
    "Distribution",
    "Constant",
    "Exponential",
    "Uniform",
    "Normal",
    "LogNormal",
    "Mixture",
    "Empirical",
    "DELAY_KINDS",
    "EMPIRICAL_FORMATS",
    "INPUT_QUANTILES",
    "parse_delay",
    "delay_base_dir",
    "delay_files_relative_to",
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


def _fmt(seconds: float) -> str:
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

    def _ppf(self, u: np.ndarray) -> np.ndarray:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        out = self._ppf(rng.random(_check_n(n)))
        # guards rounding at u = 0 (e.g. a normal's -inf tail); the math never goes below 0
        return np.maximum(out, 0.0, out=out)

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
        return -self.mean_value * np.log1p(-u)

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
            raise ValueError(f"normal: mean must be > 0, got {_fmt(self.mu)}")
        if not (self.sigma > 0 and math.isfinite(self.sigma)):
            raise ValueError(f"normal: stddev must be > 0, got {_fmt(self.sigma)}")

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
            raise ValueError(f"lognormal: shift must be >= 0, got {_fmt(self.shift)}")

    @classmethod
    def from_median_p99(cls, median: float, p99: float, shift: float = 0.0) -> LogNormal:
        if shift < 0:
            raise ValueError(f"lognormal: shift must be >= 0, got {_fmt(shift)}")
        if median <= shift:
            raise ValueError(
                f"lognormal: median must be above the shift (median {_fmt(median)}, "
                f"shift {_fmt(shift)})"
            )
        if p99 <= median:
            raise ValueError(
                f"lognormal: p99 must be above the median (median {_fmt(median)}, "
                f"p99 {_fmt(p99)})"
            )
        mu = math.log(median - shift)
        return cls(mu, (math.log(p99 - shift) - mu) / _Z99, shift)

    @classmethod
    def from_mean_stddev(cls, mean: float, stddev: float, shift: float = 0.0) -> LogNormal:
        if shift < 0:
            raise ValueError(f"lognormal: shift must be >= 0, got {_fmt(shift)}")
        if stddev <= 0:
            raise ValueError(f"lognormal: stddev must be > 0, got {_fmt(stddev)}")
        if mean <= shift:
            raise ValueError(
                f"lognormal: mean must be above the shift (mean {_fmt(mean)}, shift {_fmt(shift)})"
            )
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
        each = [c.quantile(q) for c in self.components]
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
            raise ValueError(f"empirical: values must be >= 0, got {_fmt(values[0])}")
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
        return (
            self.source == other.source
            and np.array_equal(self.probs, other.probs)
            and np.array_equal(self.values, other.values)
        )

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
        return np.interp(u, self.probs, self.values)

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
        return (
            f"empirical({name}: {count}median {format_duration(self.quantile(0.5))}, "
            f"p99 {format_duration(self.quantile(0.99))})"
        )


# -- reading measurement files ----------------------------------------------------------

EMPIRICAL_FORMATS = ("auto", "plain", "ping", "sockperf", "latte", "fio")

_NUM = r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # sockperf colours its summary lines
_PING_REPLY = re.compile(
    r"(?:bytes from|Reply from)\b.*?\btime\s*([=<])\s*(" + _NUM + r")\s*(ms|us|µs|usec|msec|s)?\b"
)
_SOCKPERF_PCT = re.compile(r"--->\s*percentile\s+(" + _NUM + r")\s*=\s*(" + _NUM + r")")
_SOCKPERF_END = re.compile(r"--->\s*<(MAX|MIN)>\s*observation\s*=\s*(" + _NUM + r")")
_SOCKPERF_TOTAL = re.compile(r"Total\s+([0-9]+)\s+observations")
_SOCKPERF_LOG = re.compile(r"^\s*[0-9]+\s*,\s*" + _NUM + r"\s*,\s*" + _NUM + r"\s*,\s*(" + _NUM + r")\s*$")
_LATTE = re.compile(r"Latency\(usec\)\s+(" + _NUM + r")")
_PLAIN = re.compile(r"(" + _NUM + r")\s*([A-Za-zµ]*)")

# Relative ``file`` paths resolve against this directory (the scenario file's,
# set by the loader); None: the current directory.
delay_base_dir: ContextVar[Path | None] = ContextVar("delay_base_dir", default=None)


@contextlib.contextmanager
def delay_files_relative_to(directory: str | Path | None) -> Iterator[None]:
    """Resolve relative empirical ``file`` paths against ``directory`` inside the block."""
    token = delay_base_dir.set(Path(directory) if directory is not None else None)
    try:
        yield
    finally:
        delay_base_dir.reset(token)


def _read_text(name: str, path: Path) -> str:
    text = read_scenario_text(name, path, prefix="empirical: ", directory="a file of samples",
                              too_large="a file of delays")
    return _ANSI.sub("", text)


def _detect(text: str) -> str:
    if text.lstrip().startswith("{") or '"fio version"' in text[:4096]:
        return "fio"
    if _SOCKPERF_PCT.search(text) or _SOCKPERF_END.search(text) or "sockperf" in text or "txTime(sec)" in text:
        return "sockperf"
    if _PING_REPLY.search(text):
        return "ping"
    if _LATTE.search(text):
        return "latte"
    return "plain"


def _parse_plain(name: str, text: str, unit: str | None, auto: bool) -> np.ndarray:
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _PLAIN.fullmatch(line)
        if not m:
            hint = "not ping, sockperf or latte output, and as plain numbers " if auto else ""
            raise ValueError(
                f"empirical: {name!r} is {hint}not readable: line {n}: {line[:40]!r} is not a duration "
                "(plain format: one number per line, such as 120us)"
            )
        number, u = m.group(1), m.group(2)
        if not u:
            if unit is None:
                raise ValueError(
                    f"empirical: {name!r} line {n}: {number!r} has no unit (write {number}us, or give unit = \"us\")"
                )
            u = unit
        try:
            out.append(parse_duration(number + u))
        except ValueError as e:
            raise ValueError(f"empirical: {name!r} line {n}: {e}") from None
    return np.array(out, dtype=np.float64)


def _parse_ping(name: str, text: str) -> np.ndarray:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _PING_REPLY.search(line)
        if not m or "(DUP!)" in line:  # a duplicate reply is not another round trip
            continue
        if m.group(1) == "<":
            raise ValueError(
                f"empirical: {name!r} line {n}: 'time<{m.group(2)}{m.group(3) or ''}' is below ping's resolution "
                "(Windows ping counts whole milliseconds); measure with sockperf, latte or Linux ping"
            )
        out.append(parse_duration(m.group(2) + (m.group(3) or "ms")))
    if not out:
        raise ValueError(
            f"empirical: {name!r} holds no ping replies "
            "(lines such as '64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=0.213 ms')"
        )
    return np.array(out, dtype=np.float64)


def _parse_sockperf(name: str, text: str) -> tuple[np.ndarray | None, list[tuple[float, float]], int]:
    """Per-packet values from a ``--full-log`` dump if there is one, else the percentile table (usec)."""
    log = [float(m.group(1)) * 1e-6 for line in text.splitlines() if (m := _SOCKPERF_LOG.match(line))]
    if log:
        return np.array(log), [], len(log)
    ends = _SOCKPERF_END.findall(text)
    if sum(1 for kind, _ in ends if kind == "MAX") > 1:
        raise ValueError(
            f"empirical: {name!r} holds {sum(1 for k, _ in ends if k == 'MAX')} sockperf percentile tables "
            "(one per server or run); keep one"
        )
    points = {float(p) / 100.0: float(v) * 1e-6 for p, v in _SOCKPERF_PCT.findall(text)}
    for kind, v in ends:
        points[1.0 if kind == "MAX" else 0.0] = float(v) * 1e-6
    if not points:
        raise ValueError(
            f"empirical: {name!r} holds no sockperf percentile table (lines such as '---> percentile 99.000 = 48.123')"
        )
    if 0.0 not in points or 1.0 not in points:
        raise ValueError(f"empirical: {name!r}: the sockperf table needs its <MIN> and <MAX> observation lines")
    total = _SOCKPERF_TOTAL.search(text)
    return None, sorted(points.items()), int(total.group(1)) if total else 0


def _parse_latte(name: str, text: str) -> np.ndarray:
    out = [float(v) * 1e-6 for v in _LATTE.findall(text)]
    if not out:
        raise ValueError(f"empirical: {name!r} holds no latte result (a line such as 'Latency(usec) 2026.40')")
    return np.array(out, dtype=np.float64)


def _empirical(value: dict[str, Any], base_dir: str | Path | None) -> Empirical:
    name = value["file"]
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"empirical: file must be a file name such as \"data/ping.txt\", got {name!r}")
    fmt = value.get("format", "auto")
    if fmt not in EMPIRICAL_FORMATS:
        raise ValueError(f"empirical: format must be one of {', '.join(EMPIRICAL_FORMATS)}, got {fmt!r}")
    unit = value.get("unit")
    if unit is not None:
        if not isinstance(unit, str):
            raise ValueError(f"empirical: unit must be a time unit such as \"us\", got {unit!r}")
        try:
            parse_duration("1" + unit)
        except ValueError:
            raise ValueError(f"empirical: unit must be a time unit (ns, us, ms or s), got {unit!r}") from None
    scale = value.get("scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"empirical: scale must be a number > 0 (0.5 turns round trips into one way), got {scale!r}")

    path = Path(name).expanduser()
    if not path.is_absolute():
        base = base_dir if base_dir is not None else delay_base_dir.get()
        path = (Path(base) if base is not None else Path.cwd()) / path
    text = _read_text(name, path)
    kind = _detect(text) if fmt == "auto" else fmt
    op = value.get("op")
    if op is not None and kind != "fio":
        raise ValueError(f"empirical: op applies to fio output only (read, write), not to {kind}")
    if unit is not None and kind != "plain":
        raise ValueError(f"empirical: unit applies to plain files only ({kind} output says its own units)")
    if kind == "fio":  # completion latency of fio's read or write I/Os (pathsel.measured.fio)
        try:
            probs, values, count, what = fio_latency_table(load_fio(text, name), name, op)
        except MeasureError as e:
            raise ValueError(f"empirical: {e}") from None
        return Empirical.from_quantile_table(probs, values * scale, str(path), count, what, scale)

    if kind == "sockperf":
        samples, table, count = _parse_sockperf(name, text)
        if samples is None:
            q_probs = [p for p, _ in table]
            q_values = [v * scale for _, v in table]
            if any(b < a for a, b in zip(q_values, q_values[1:])):
                raise ValueError(f"empirical: {name!r}: the sockperf percentiles fall as the percentile rises")
            _check_finite(name, np.array(q_values))
            return Empirical.from_quantile_table(q_probs, q_values, str(path), count, "sockperf observations", scale)
        what = "sockperf packets"
    elif kind == "ping":
        samples, what = _parse_ping(name, text), "ping round trips"
    elif kind == "latte":
        samples, what = _parse_latte(name, text), "latte runs"
    else:
        samples, what = _parse_plain(name, text, unit, fmt == "auto"), "samples"
        if len(samples) == 0:
            raise ValueError(f"empirical: {name!r} holds no samples (only comments and blank lines)")
    negative = samples[samples < 0]
    if len(negative):
        raise ValueError(f"empirical: {name!r} has a negative delay ({_fmt(float(negative[0]))})")
    _check_finite(name, samples * scale)
    return Empirical.from_samples(samples * scale, str(path), what, float(scale))


def _check_finite(name: str, seconds: np.ndarray) -> None:
    """Every delay of a file, once scaled, finite and at most MAX_DURATION (1e300 in a tool's output is a typo)."""
    bad = seconds[~np.isfinite(seconds) | (seconds > MAX_DURATION)]
    if len(bad):
        raise ValueError(
            f"empirical: {name!r} has a delay of {float(bad[0]):g}s once scaled, more than the 1e6s pathsel allows"
        )


# -- the scenario-file form ---------------------------------------------------------------

# dist -> (required keys, optional keys)
_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "constant": (frozenset({"value"}), frozenset()),
    "exponential": (frozenset({"mean"}), frozenset()),
    "uniform": (frozenset({"low", "high"}), frozenset()),
    "normal": (frozenset({"mean", "stddev"}), frozenset()),
    "lognormal": (frozenset(), frozenset({"median", "p99", "mean", "stddev", "shift"})),
    "mixture": (frozenset({"components"}), frozenset()),
    "empirical": (frozenset({"file"}), frozenset({"format", "unit", "scale", "op"})),
}
DELAY_KINDS = tuple(sorted(_KEYS))


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _lognormal(value: dict[str, Any]) -> LogNormal:
    shift = parse_duration(value["shift"]) if "shift" in value else 0.0
    quoted = {"median", "p99"} & value.keys()
    moments = {"mean", "stddev"} & value.keys()
    if quoted and moments:
        raise ValueError("lognormal: give median and p99, or mean and stddev, not both")
    if quoted == {"median", "p99"}:
        return LogNormal.from_median_p99(parse_duration(value["median"]), parse_duration(value["p99"]), shift)
    if moments == {"mean", "stddev"}:
        return LogNormal.from_mean_stddev(parse_duration(value["mean"]), parse_duration(value["stddev"]), shift)
    given = quoted or moments
    if given:
        pair = ("median", "p99") if quoted else ("mean", "stddev")
        lacking = next(k for k in pair if k not in given)
        raise ValueError(f"a lognormal distribution needs {lacking!r} (give median and p99, or mean and stddev)")
    raise ValueError("a lognormal distribution needs median and p99 (or mean and stddev)")


def _mixture(value: dict[str, Any], base_dir: str | Path | None) -> Mixture:
    comps = value["components"]
    if not isinstance(comps, list) or not comps:
        raise ValueError("mixture: components must be a non-empty list of tables such as {weight = 0.8, dist = ...}")
    weights, dists = [], []
    for i, comp in enumerate(comps):
        at = f"mixture components[{i}]"
        if not isinstance(comp, dict):
            raise ValueError(
                f"{at}: must be a table such as {{weight = 0.8, dist = \"normal\", mean = ..., stddev = ...}}"
            )
        if "weight" not in comp:
            raise ValueError(f"{at} needs 'weight'")
        w = comp["weight"]
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w):
            raise ValueError(f"{at}: weight must be a finite number, got {w!r}")
        if w <= 0:
            raise ValueError(f"{at}: weight must be > 0, got {w!r}")
        rest = {k: v for k, v in comp.items() if k != "weight"}
        if rest.get("dist") == "mixture":
            raise ValueError(f"{at}: a component cannot itself be a mixture (list its parts in this one)")
        if "dist" not in rest:
            raise ValueError(f"{at} needs dist ({', '.join(k for k in DELAY_KINDS if k != 'mixture')})")
        try:
            dists.append(parse_delay(rest, allow_zero=True, base_dir=base_dir))
        except ValueError as e:
            raise ValueError(f"{at}: {e}") from None
        weights.append(float(w))
    return Mixture(tuple(weights), tuple(dists))


_DISTRIBUTIONS = (Constant, Exponential, Uniform, Normal, LogNormal, Mixture, Empirical)


def parse_delay(value: Any, *, allow_zero: bool = False, base_dir: str | Path | None = None) -> Distribution:
    """A duration string or a ``{dist = ...}`` table -> a distribution.

    Raises ValueError naming the problem. Zero is refused unless ``allow_zero``
    (a network leg of zero length is always a mistake in a scenario file): the
    floor checked is a uniform's ``low`` and every other kind's mean.
    Relative empirical ``file`` paths resolve against ``base_dir``, else
    :data:`delay_base_dir`, else the current directory.
    """
    if isinstance(value, _DISTRIBUTIONS):
        return value
    if isinstance(value, dict):
        kind = value.get("dist")
        if kind is None:
            raise ValueError(f"a delay table needs dist ({', '.join(DELAY_KINDS)})")
        if not isinstance(kind, str) or kind not in _KEYS:
            guess = closest(kind, DELAY_KINDS) if isinstance(kind, str) else None
            raise ValueError(f"dist must be one of {', '.join(DELAY_KINDS)}, got {kind!r}" + (f" (did you mean {guess!r}?)" if guess else ""))
        required, optional = _KEYS[kind]
        extra = set(value) - required - optional - {"dist"}
        if extra:
            key = sorted(extra)[0]
            # a percentile given is not a typo for the one taken (p90 is no p99): no suggestion then
            guess = None if re.fullmatch(r"p\d+", str(key)) else closest(str(key), sorted(required | optional))
            raise ValueError(f"unknown key {key!r} for {_a(kind)} distribution" + (f" (did you mean {guess!r}?)" if guess else ""))
        missing = required - set(value)
        if missing:
            raise ValueError(f"{_a(kind)} distribution needs {sorted(missing)[0]!r}")
        if kind == "constant":
            dist: Distribution = Constant(parse_duration(value["value"]))
        elif kind == "exponential":
            dist = Exponential(parse_duration(value["mean"]))
        elif kind == "uniform":
            low, high = parse_duration(value["low"]), parse_duration(value["high"])
            if high < low:
                raise ValueError("uniform: high must be >= low")
            dist = Uniform(low, high)
        elif kind == "normal":
            dist = Normal(parse_duration(value["mean"]), parse_duration(value["stddev"]))
        elif kind == "lognormal":
            dist = _lognormal(value)
        elif kind == "mixture":
            dist = _mixture(value, base_dir)
        else:
            dist = _empirical(value, base_dir)
    else:
        dist = Constant(parse_duration(value))
    floor = dist.low if isinstance(dist, Uniform) else dist.mean
    if floor < 0 or (floor == 0 and not allow_zero):
        raise ValueError("must be > 0" if not allow_zero else "must be >= 0")
    if not math.isfinite(dist.mean) or dist.mean > MAX_DURATION:  # a lognormal's tail can carry its mean far
        kind = f"{value.get('dist')}: " if isinstance(value, dict) else ""
        raise ValueError(f"{kind}its mean is {dist.mean:g}s, more than the 1e6s pathsel allows")
    return dist
