"""Empirical delays from measurement files: plain numbers, ping, sockperf, latte, or fio's JSON completion latencies.

:func:`read_empirical` turns a scenario's ``{dist = "empirical", file = ...}``
table into an :class:`~pathsel.timing.delay_kinds.Empirical` delay: it reads
the file (bounded, as every file a scenario names), detects or takes its
format, and checks every delay it holds. Relative file names resolve against
:data:`delay_base_dir` (the scenario file's directory, set by the loader with
:func:`delay_files_relative_to`), else the current directory.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from ..measured import MeasureError, fio_latency_table, load_fio
from ..units import MAX_DURATION, parse_duration
from .delay_kinds import Empirical, signed_duration
from .textfile import read_scenario_text

__all__ = ["EMPIRICAL_FORMATS", "delay_base_dir", "delay_files_relative_to", "read_empirical"]

# -- reading measurement files ----------------------------------------------------------

EMPIRICAL_FORMATS = ("auto", "plain", "ping", "sockperf", "latte", "fio")

_NUM = r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # sockperf colours its summary lines
_PING_REPLY = re.compile(r"(?:bytes from|Reply from)\b.*?\btime\s*([=<])\s*(" + _NUM + r")\s*(ms|us|µs|usec|msec|s)?\b")
_SOCKPERF_PCT = re.compile(r"--->\s*percentile\s+(" + _NUM + r")\s*=\s*(" + _NUM + r")")
_SOCKPERF_END = re.compile(r"--->\s*<(MAX|MIN)>\s*observation\s*=\s*(" + _NUM + r")")
_SOCKPERF_TOTAL = re.compile(r"Total\s+([0-9]{1,18})\s+observations")  # more digits: not a count sockperf wrote
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
    text = read_scenario_text(name, path, prefix="empirical: ", directory="a file of samples", too_large="a file of delays")
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
                raise ValueError(f'empirical: {name!r} line {n}: {number!r} has no unit (write {number}us, or give unit = "us")')
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
        try:
            out.append(parse_duration(m.group(2) + (m.group(3) or "ms")))
        except ValueError as e:
            raise ValueError(f"empirical: {name!r} line {n}: {e}") from None
    if not out:
        raise ValueError(f"empirical: {name!r} holds no ping replies (lines such as '64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=0.213 ms')")
    return np.array(out, dtype=np.float64)


def _parse_sockperf(name: str, text: str) -> tuple[np.ndarray | None, list[tuple[float, float]], int]:
    """Per-packet values from a ``--full-log`` dump if there is one, else the percentile table (usec)."""
    log = [float(m.group(1)) * 1e-6 for line in text.splitlines() if (m := _SOCKPERF_LOG.match(line))]
    if log:
        return np.array(log), [], len(log)
    ends = _SOCKPERF_END.findall(text)
    if sum(1 for kind, _ in ends if kind == "MAX") > 1:
        raise ValueError(
            f"empirical: {name!r} holds {sum(1 for k, _ in ends if k == 'MAX')} sockperf percentile tables (one per server or run); keep one"
        )
    points = {float(p) / 100.0: float(v) * 1e-6 for p, v in _SOCKPERF_PCT.findall(text)}
    outside = [p for p in points if not 0.0 <= p <= 1.0]  # 1e400 reads as inf
    if outside:
        raise ValueError(f"empirical: {name!r}: sockperf percentile {outside[0] * 100:g} is not between 0 and 100")
    for kind, v in ends:
        points[1.0 if kind == "MAX" else 0.0] = float(v) * 1e-6
    if not points:
        raise ValueError(f"empirical: {name!r} holds no sockperf percentile table (lines such as '---> percentile 99.000 = 48.123')")
    if 0.0 not in points or 1.0 not in points:
        raise ValueError(f"empirical: {name!r}: the sockperf table needs its <MIN> and <MAX> observation lines")
    total = _SOCKPERF_TOTAL.search(text)
    return None, sorted(points.items()), int(total.group(1)) if total else 0


def _parse_latte(name: str, text: str) -> np.ndarray:
    out = [float(v) * 1e-6 for v in _LATTE.findall(text)]
    if not out:
        raise ValueError(f"empirical: {name!r} holds no latte result (a line such as 'Latency(usec) 2026.40')")
    return np.array(out, dtype=np.float64)


def read_empirical(value: dict[str, Any], base_dir: str | Path | None) -> Empirical:
    name = value["file"]
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f'empirical: file must be a file name such as "data/ping.txt", got {name!r}')
    fmt = value.get("format", "auto")
    if fmt not in EMPIRICAL_FORMATS:
        raise ValueError(f"empirical: format must be one of {', '.join(EMPIRICAL_FORMATS)}, got {fmt!r}")
    unit = value.get("unit")
    if unit is not None:
        if not isinstance(unit, str):
            raise ValueError(f'empirical: unit must be a time unit such as "us", got {unit!r}')
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
        raise ValueError(f"empirical: {name!r} has a negative delay ({signed_duration(float(negative[0]))})")
    _check_finite(name, samples * scale)
    return Empirical.from_samples(samples * scale, str(path), what, float(scale))


def _check_finite(name: str, seconds: np.ndarray) -> None:
    """Every delay of a file, once scaled, finite and at most MAX_DURATION (1e300 in a tool's output is a typo)."""
    bad = seconds[~np.isfinite(seconds) | (seconds > MAX_DURATION)]
    if len(bad):
        raise ValueError(f"empirical: {name!r} has a delay of {float(bad[0]):g}s once scaled, more than the 1e6s pathsel allows")
