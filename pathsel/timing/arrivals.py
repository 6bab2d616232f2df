"""Offered load that changes: rate schedules, fio's thinktime on/off bursts, and traces replayed (issue 16).

An open-loop job's arrivals are the gaps of one value stream (the job's
``arrivals`` stream, :mod:`pathsel.engine.streams`): both engines read the
same gaps in the same order, so they agree bit for bit whatever the process.
This module makes those gaps:

* :class:`Schedule` -- a piecewise-constant rate ``lambda(t)`` (``rate_schedule``,
  optionally repeating every ``rate_schedule_period``; fio's ``thinktime`` with
  ``thinktime_iotime`` is the two-step pattern "``rate_iops`` for iotime, 0 for
  thinktime"). Arrivals are where the integrated rate ``Lambda(t)`` crosses the
  targets ``1, 2, 3, ...`` (``rate_process = "linear"``) or the points of a
  unit-rate Poisson process (``"poisson"``: exact time-rescaling of a
  non-homogeneous Poisson process, Cinlar 1975, *Introduction to Stochastic
  Processes*, section 4.7).
* :class:`BlockThink` -- fio's ``thinktime`` with ``thinktime_blocks``: after every
  ``blocks`` arrivals the next comes ``thinktime`` later than the rate says.
* :class:`Trace` -- a file of arrivals (fio iolog v2 or v3, a ``blkparse`` text
  dump, or a CSV ``time,op,offset,size``): the gaps between its timestamps, and
  each I/O's op and size. After its last record the job has no more arrivals
  (an infinite gap).

Gaps are built in blocks (``sample_block``), vectorised; a process object is
stateful and made fresh for every run (:meth:`ArrivalSpec.process`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..limits import MAX_BLOCK_SIZE, MAX_TRACE_RECORDS
from ..units import MAX_DURATION, parse_duration, parse_size
from .textfile import read_scenario_text

__all__ = ["Schedule", "BlockThink", "Trace", "read_trace", "IOLOG_FORMATS"]

IOLOG_FORMATS = ("auto", "fio", "blkparse", "csv")
READ, WRITE = 0, 1


# -- rate schedules ---------------------------------------------------------------------
@dataclass(frozen=True)
class Schedule:
    """A piecewise-constant rate: ``rates[i]`` I/Os per second from ``starts[i]`` (seconds, rising from 0).

    ``period`` > 0: the pattern over [0, period) repeats for ever; 0: the last rate holds for ever.
    """

    starts: tuple[float, ...]
    rates: tuple[float, ...]
    period: float = 0.0
    poisson: bool = False

    def __post_init__(self) -> None:
        if not self.starts or self.starts[0] != 0.0 or len(self.starts) != len(self.rates):
            raise ValueError("a rate schedule starts at 0")
        if not any(r > 0 for r in self.rates):
            raise ValueError("a rate schedule needs a rate above 0")

    @property
    def peak(self) -> float:
        return max(self.rates)

    def mean_rate(self, until: float) -> float:
        """The mean rate over [0, until): expected arrivals / until."""
        return self.integral(until) / until if until > 0 else self.rates[0]

    def integral(self, t: float) -> float:
        """Lambda(t): the expected arrivals in [0, t)."""
        ends = list(self.starts[1:]) + [self.period if self.period else math.inf]
        if self.period:
            whole, t = divmod(t, self.period)
            per = sum(r * (e - s) for s, e, r in zip(self.starts, ends, self.rates))
        else:
            whole, per = 0, 0.0
        acc = whole * per
        for s, e, r in zip(self.starts, ends, self.rates):
            if t > s:
                acc += r * (min(t, e) - s)
        return acc

    def process(self) -> _ScheduleGaps:
        return _ScheduleGaps(self)


class _ScheduleGaps:
    """Gaps of one run's arrivals under a :class:`Schedule`, by inverting Lambda."""

    def __init__(self, sched: Schedule) -> None:
        self.poisson = sched.poisson
        starts = np.array(sched.starts, dtype=np.float64)
        rates = np.array(sched.rates, dtype=np.float64)
        ends = np.append(starts[1:], sched.period if sched.period else np.inf)
        cum = np.concatenate([[0.0], np.cumsum(rates[:-1] * (ends[:-1] - starts[:-1]))])
        pos = rates > 0
        self.s, self.r, self.L0 = starts[pos], rates[pos], cum[pos]
        self.period = sched.period
        last = float(cum[-1] + (rates[-1] * (ends[-1] - starts[-1]) if sched.period else 0.0))
        self.per = last  # Lambda over one period (periodic) or up to the last step (else)
        self.ends_at_zero = not sched.period and rates[-1] <= 0  # after the last step no arrival comes
        self.target = 0.0
        self.t = 0.0

    def _invert(self, L: np.ndarray) -> np.ndarray:
        base: np.ndarray | float
        if self.period:
            k = np.floor(L / self.per)
            rest = L - k * self.per
            base = k * self.period
        else:
            rest, base = L, 0.0
        i = np.maximum(np.searchsorted(self.L0, rest, side="right") - 1, 0)
        t: np.ndarray = base + self.s[i] + (rest - self.L0[i]) / self.r[i]
        if self.ends_at_zero:
            t = np.where(L > self.per, np.inf, t)
        return t

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        inc = rng.exponential(1.0, n) if self.poisson else np.ones(n)
        targets = self.target + np.cumsum(inc)
        self.target = float(targets[-1])
        times = self._invert(targets)
        prev = np.concatenate([[self.t], times[:-1]])
        with np.errstate(invalid="ignore"):
            gaps = np.where(np.isinf(times), np.inf, times - prev)
        self.t = float(times[-1])
        return gaps


@dataclass(frozen=True)
class BlockThink:
    """fio's ``thinktime`` after every ``thinktime_blocks`` I/Os: the arrival after each block comes ``think`` later."""

    rate: float
    blocks: int
    think: float
    poisson: bool = False

    @property
    def peak(self) -> float:
        return self.rate

    def mean_rate(self, until: float = 0.0) -> float:
        return self.blocks / (self.blocks / self.rate + self.think)

    def process(self) -> _BlockThinkGaps:
        return _BlockThinkGaps(self)


class _BlockThinkGaps:
    def __init__(self, spec: BlockThink) -> None:
        self.spec = spec
        self.count = 0  # gaps made so far: gap i comes after arrival i (the first after none)

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        sp = self.spec
        gaps = rng.exponential(1.0 / sp.rate, n) if sp.poisson else np.full(n, 1.0 / sp.rate)
        i = self.count + np.arange(n)
        gaps = gaps + np.where((i > 0) & (i % sp.blocks == 0), sp.think, 0.0)
        self.count += n
        return gaps


# -- traces -----------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Trace:
    """Arrivals read from a file: times (seconds from the run's start, already scaled), ops (0 read, 1 write), sizes."""

    times: np.ndarray
    ops: np.ndarray
    sizes: np.ndarray
    source: str = ""
    kind: str = ""
    no_stall: bool = False  # replay_no_stall: as fast as iodepth lets (a closed loop over the records)
    scale: float = 100.0  # replay_time_scale, % (already applied to times)
    skipped: int = field(default=0)  # records of other actions (trim, sync, flush, ...) left out

    def __post_init__(self) -> None:
        for a in (self.times, self.ops, self.sizes):
            a.setflags(write=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trace):
            return NotImplemented
        return (self.source, self.no_stall, self.scale) == (other.source, other.no_stall, other.scale) and all(
            np.array_equal(a, b) for a, b in ((self.times, other.times), (self.ops, other.ops), (self.sizes, other.sizes))
        )

    def __hash__(self) -> int:
        return hash((self.source, len(self.times), self.times.tobytes()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Trace, (self.times.copy(), self.ops.copy(), self.sizes.copy(), self.source, self.kind, self.no_stall, self.scale, self.skipped))

    def __len__(self) -> int:
        return len(self.times)

    @property
    def span(self) -> float:
        return float(self.times[-1]) if len(self.times) else 0.0

    @property
    def peak(self) -> float:
        return self.mean_rate()

    def mean_rate(self, until: float = 0.0) -> float:
        """Records per second of the trace's span (its own offered load)."""
        return len(self.times) / self.span if self.span > 0 else float(len(self.times))

    def process(self) -> _TraceGaps:
        return _TraceGaps(self.times)

    def describe(self) -> str:
        name = Path(self.source).name if self.source else "trace"
        return f"{name} ({self.kind}, {len(self.times):,} I/Os over {self.span:.6g} s)"


class _TraceGaps:
    def __init__(self, times: np.ndarray) -> None:
        self.gaps = np.diff(np.concatenate([[0.0], times]))
        self.pos = 0

    def sample_block(self, rng: np.random.Generator, n: int) -> np.ndarray:
        out = np.full(n, np.inf)
        k = min(n, len(self.gaps) - self.pos)
        if k > 0:
            out[:k] = self.gaps[self.pos : self.pos + k]
        self.pos += n
        return out


def _read(name: str, path: Path) -> str:
    return read_scenario_text(
        name,
        path,
        prefix="",
        directory="a trace",
        too_large="a trace",
        binary_hint=": blktrace's binary files are read as blkparse's text output (blkparse -i trace > trace.txt)",
    )


# re.ASCII: \d would match other scripts' digits too ('٣'), which blkparse never writes
_BLKPARSE = re.compile(r"^\s*\d+,\d+\s+\d+\s+\d+\s+(\d+\.\d+)\s+\d+\s+([A-Za-z]{1,2})\s+([A-Z]+)\s+(\d+)\s+\+\s+(\d+)", re.ASCII)
_FIO_HEADER = re.compile(r"^fio version ([0-9]+) iolog\s*$")


def _detect(text: str) -> str:
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if _FIO_HEADER.match(first):
        return "fio"
    if _BLKPARSE.match(first):
        return "blkparse"
    if "," in first and "time" in first.lower():
        return "csv"
    raise ValueError(
        f"first line {first[:40]!r} is neither fio's iolog header ('fio version 2 iolog'), a blkparse line "
        "('8,0 3 1 0.000000000 697 Q W 223490 + 8 [proc]') nor a CSV header 'time,op,offset,size'; give iolog_format"
    )


def _check_size(name: str, n: int, size: int) -> int:
    if size <= 0:
        raise ValueError(f"{name!r} line {n}: size {size} must be > 0")
    if size > MAX_BLOCK_SIZE:
        raise ValueError(f"{name!r} line {n}: size {size:,} is more than the 1g (1 GiB) pathsel takes")
    return size


def _check_time(name: str, n: int, t: float) -> float:
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"{name!r} line {n}: time {t!r} must be finite and >= 0")
    if t > MAX_DURATION:
        raise ValueError(f"{name!r} line {n}: time {t:g} s is more than the 1e6s (11.6 days) pathsel allows")
    return t


def _parse_fio(name: str, text: str) -> tuple[list[float], list[int], list[int], int]:
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip())
    m = _FIO_HEADER.match(lines[start].strip())
    if not m or m.group(1) not in ("2", "3"):
        raise ValueError(f"{name!r} line {start + 1}: fio iolog versions 2 and 3 are read ('fio version 2 iolog'), got {lines[start].strip()[:40]!r}")
    v3 = m.group(1) == "3"
    times: list[float] = []
    ops: list[int] = []
    sizes: list[int] = []
    skipped, now = 0, 0.0
    for n, raw in enumerate(lines[start + 1 :], start + 2):
        parts = raw.split()
        if not parts:
            continue
        if v3:
            try:
                stamp = float(parts[0]) * 1e-3  # v3: milliseconds since the job started
            except ValueError:
                raise ValueError(
                    f"{name!r} line {n}: {parts[0]!r} is not a timestamp in ms (fio iolog v3: 'timestamp filename action offset length')"
                ) from None
            now = _check_time(name, n, stamp)
            parts = parts[1:]
        if len(parts) == 2:  # a file action: add, open, close
            if parts[1] not in ("add", "open", "close"):
                raise ValueError(f"{name!r} line {n}: unknown file action {parts[1]!r} (add, open, close)")
            continue
        if len(parts) != 4:
            layout = "timestamp filename action offset length" if v3 else "filename action offset length"
            raise ValueError(f"{name!r} line {n}: {raw.strip()[:60]!r} is not '{layout}'")
        action = parts[1]
        try:
            offset, length = int(parts[2]), int(parts[3])
        except ValueError:
            raise ValueError(f"{name!r} line {n}: offset and length must be whole numbers, got {parts[2]!r} {parts[3]!r}") from None
        if action == "wait" and not v3:
            if offset > MAX_DURATION * 1e6:  # checked before the sum: a 400-digit wait overflows a float
                raise ValueError(f"{name!r} line {n}: a wait of {len(str(offset))} digits (us) is more than the 1e6s (11.6 days) pathsel allows")
            if offset >= 100:  # fio: "Everything below 100 is discarded"
                now = _check_time(name, n, now + offset * 1e-6)
            continue
        if action in ("read", "write"):
            times.append(now)
            ops.append(READ if action == "read" else WRITE)
            sizes.append(_check_size(name, n, length))
        elif action in ("trim", "sync", "datasync"):
            skipped += 1
        else:
            raise ValueError(f"{name!r} line {n}: unknown action {action!r} (read, write, trim, sync, datasync{'' if v3 else ', wait'})")
    return times, ops, sizes, skipped


def _parse_blkparse(name: str, text: str) -> tuple[list[float], list[int], list[int], int]:
    found: dict[str, tuple[list[float], list[int], list[int]]] = {"Q": ([], [], []), "D": ([], [], [])}
    skipped = 0
    for n, raw in enumerate(text.splitlines(), 1):
        m = _BLKPARSE.match(raw)
        if not m or m.group(2) not in found:
            continue
        if len(m.group(5)) > 12:  # int() of thousands of digits raises; 1e12 sectors is already past MAX_BLOCK_SIZE
            raise ValueError(f"{name!r} line {n}: a block count of {len(m.group(5))} digits is not an I/O's size")
        rwbs, blocks = m.group(3), int(m.group(5))
        if "R" in rwbs:
            op = READ
        elif "W" in rwbs:
            op = WRITE
        else:
            skipped += 1
            continue
        if blocks == 0:  # a flush or barrier without data
            skipped += 1
            continue
        t, o, s = found[m.group(2)]
        t.append(_check_time(name, n, float(m.group(1))))
        o.append(op)
        s.append(_check_size(name, n, blocks * 512))
    for action in ("Q", "D"):
        if found[action][0]:
            return (*found[action], skipped)
    raise ValueError(
        f"{name!r} holds no Q (queued) or D (issued) read or write records (blkparse lines such as '8,0 3 1 0.000000000 697 Q W 223490 + 8 [proc]')"
    )


def _parse_csv(name: str, text: str) -> tuple[list[float], list[int], list[int], int]:
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip())
    header = [h.strip().lower() for h in lines[start].split(",")]
    missing = [c for c in ("time", "op", "size") if c not in header]
    if missing:
        raise ValueError(
            f"{name!r} line {start + 1}: the CSV header needs columns time, op and size (offset is optional), got {lines[start].strip()[:60]!r}"
        )
    it, io, isz = header.index("time"), header.index("op"), header.index("size")
    times: list[float] = []
    ops: list[int] = []
    sizes: list[int] = []
    for n, raw in enumerate(lines[start + 1 :], start + 2):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in raw.split(",")]
        if len(cells) != len(header):
            raise ValueError(f"{name!r} line {n}: {len(cells)} columns, the header has {len(header)}")
        try:
            t = float(cells[it])  # a bare number: seconds
        except ValueError:
            try:
                t = parse_duration(cells[it])
            except ValueError as e:
                raise ValueError(f"{name!r} line {n}: time: {e}") from None
        op = cells[io].lower()
        if op not in ("read", "write", "r", "w"):
            raise ValueError(f"{name!r} line {n}: op must be read or write (or r, w), got {cells[io]!r}")
        try:
            size = parse_size(cells[isz])
        except ValueError as e:
            raise ValueError(f"{name!r} line {n}: size: {e}") from None
        times.append(_check_time(name, n, t))
        ops.append(READ if op.startswith("r") else WRITE)
        sizes.append(_check_size(name, n, size))
    return times, ops, sizes, 0


def read_trace(file: str, fmt: str = "auto", scale: float = 100.0, no_stall: bool = False, base_dir: str | Path | None = None) -> Trace:
    """Read a trace of arrivals; ``scale`` is fio's replay_time_scale (200: twice as fast). ValueError if bad."""
    if not isinstance(file, str) or not file.strip():
        raise ValueError(f'must be a file name such as "data/trace.log", got {file!r}')
    if fmt not in IOLOG_FORMATS:
        raise ValueError(f"iolog_format must be one of {', '.join(IOLOG_FORMATS)}, got {fmt!r}")
    path = Path(file).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    text = _read(file, path)
    kind = _detect(text) if fmt == "auto" else fmt
    parse = {"fio": _parse_fio, "blkparse": _parse_blkparse, "csv": _parse_csv}[kind]
    times, ops, sizes, skipped = parse(file, text)
    if not times:
        raise ValueError(f"{file!r} holds no read or write I/O")
    if len(times) > MAX_TRACE_RECORDS:
        raise ValueError(f"{file!r} holds {len(times):,} I/Os, more than the {MAX_TRACE_RECORDS:,} pathsel replays")
    t = np.asarray(times, dtype=np.float64)
    order = np.argsort(t, kind="stable")  # blkparse merges CPUs; a CSV may be unsorted: arrivals in time order
    t = t[order] * (100.0 / scale)
    if no_stall:
        t = np.zeros_like(t)
    return Trace(t, np.asarray(ops, dtype=np.int64)[order], np.asarray(sizes, dtype=np.int64)[order], file, kind, no_stall, scale, skipped)
