"""Delay distributions as a scenario file gives them, and the one place to import every delay name from.

In a scenario file a delay is a plain duration (``"50us"``, constant) or a
table with ``dist`` = ``constant``, ``exponential``, ``uniform``, ``normal``,
``lognormal``, ``mixture`` or ``empirical`` (plain numbers, ping, sockperf,
latte, or fio's JSON completion latencies: :mod:`pathsel.measured.fio`);
:func:`parse_delay` turns either into a distribution, or raises ValueError
naming the problem. See docs/distributions.md.

The kinds themselves (what each draws, its mean, quantiles and CDF) are in
:mod:`pathsel.timing.delay_kinds`; reading measurement files for empirical
delays is :mod:`pathsel.timing.delay_files`. Both are re-exported here:
``from pathsel.timing.distributions import LogNormal, parse_delay``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from ..errors import closest
from ..units import MAX_DURATION, parse_duration
from .delay_files import EMPIRICAL_FORMATS, delay_base_dir, delay_files_relative_to, read_empirical
from .delay_kinds import (
    INPUT_QUANTILES,
    Constant,
    Distribution,
    Empirical,
    Exponential,
    LogNormal,
    Mixture,
    Normal,
    Uniform,
)

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
            raise ValueError(f'{at}: must be a table such as {{weight = 0.8, dist = "normal", mean = ..., stddev = ...}}')
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
            dist = read_empirical(value, base_dir)
    else:
        dist = Constant(parse_duration(value))
    floor = dist.low if isinstance(dist, Uniform) else dist.mean
    if floor < 0 or (floor == 0 and not allow_zero):
        raise ValueError("must be > 0" if not allow_zero else "must be >= 0")
    if not math.isfinite(dist.mean) or dist.mean > MAX_DURATION:  # a lognormal's tail can carry its mean far
        kind = f"{value.get('dist')}: " if isinstance(value, dict) else ""
        raise ValueError(f"{kind}its mean is {dist.mean:g}s, more than the 1e6s pathsel allows")
    return dist
