"""Streaming metrics: memory that does not grow with simulated time.

* :class:`LogHistogram`: log-linear latency bins in whole nanoseconds (exact
  below 128 ns, then 128 linear bins per power of two), so any percentile is
  within 0.4 % of the true sample value (half a bin's width); per path, 16
  bins per power of two (within 3.1 %: a path's histogram is its memory).
* :class:`RunMetrics`: what one run measured, as numpy arrays an engine fills
  and :mod:`pathsel.results` reads: histograms overall, per op and per path;
  per-path counters; per-interval time series; time integrals of I/Os in
  flight (for Little's law); I/O accounting; policy events.

Both engines fill these through one recorder (:mod:`pathsel.engine.recorder`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["LogHistogram", "RunMetrics", "bin_index", "bin_value", "n_bins", "NBINS", "SUB", "SUB_BITS", "MAX_EXP", "PATH_SUB_BITS", "PATH_NBINS"]

SUB_BITS = 7
SUB = 1 << SUB_BITS
MAX_EXP = 48  # 2^48 ns is about 78 hours; longer latencies land in the last bin
# Per-path histograms are coarser: 16 bins per power of two (percentiles within 3.1 %), 5 kB a path instead
# of 43 kB: a cluster of 32 hosts x 64 datastores x 8 paths has 16,384 paths.
PATH_SUB_BITS = 4


def n_bins(sub_bits: int = SUB_BITS) -> int:
    """Bins of a histogram with ``2**sub_bits`` bins per power of two."""
    return (1 << sub_bits) + (MAX_EXP - sub_bits) * (1 << sub_bits)


NBINS = n_bins(SUB_BITS)
PATH_NBINS = n_bins(PATH_SUB_BITS)


def bin_index(ns: int, sub_bits: int = SUB_BITS) -> int:
    """Histogram bin of a latency in nanoseconds."""
    sub = 1 << sub_bits
    if ns < sub:
        return ns if ns > 0 else 0
    e = ns.bit_length() - 1
    if e >= MAX_EXP:
        return n_bins(sub_bits) - 1
    return sub + (e - sub_bits) * sub + ((ns >> (e - sub_bits)) - sub)


def bin_value(i: int, sub_bits: int = SUB_BITS) -> float:
    """The midpoint (in ns) of bin ``i``: the value reported for samples in it."""
    sub_n = 1 << sub_bits
    if i < sub_n:
        return float(i)
    shift, sub = divmod(i - sub_n, sub_n)  # shift = e - sub_bits
    lo = (sub_n + sub) << shift
    return lo + ((1 << shift) - 1) / 2.0


_BIN_VALUES = {b: np.array([bin_value(i, b) for i in range(n_bins(b))]) for b in (SUB_BITS, PATH_SUB_BITS)}


class LogHistogram:
    """Counts of latencies (ns) in log-linear bins, with exact count, sum, min, max."""

    __slots__ = ("counts", "n", "total", "lo", "hi", "sub_bits")

    def __init__(self, counts: np.ndarray | None = None, sub_bits: int = SUB_BITS) -> None:
        self.sub_bits = sub_bits
        self.counts = np.zeros(n_bins(sub_bits), dtype=np.int64) if counts is None else counts
        self.n = 0
        self.total = 0.0  # seconds, exact
        self.lo = math.inf
        self.hi = 0.0

    def add(self, seconds: float) -> None:
        self.counts[bin_index(int(seconds * 1e9), self.sub_bits)] += 1
        self.n += 1
        self.total += seconds
        if seconds < self.lo:
            self.lo = seconds
        if seconds > self.hi:
            self.hi = seconds

    def merge(self, other: LogHistogram) -> None:
        if other.sub_bits != self.sub_bits:
            raise ValueError("histograms of different resolutions do not merge")
        self.counts += other.counts
        self.n += other.n
        self.total += other.total
        self.lo = min(self.lo, other.lo)
        self.hi = max(self.hi, other.hi)

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan

    def percentile(self, q: float) -> float:
        """Seconds at or below which ``q`` percent of samples lie (nearest rank)."""
        if self.n == 0:
            return math.nan
        return self._percentile(q, np.cumsum(self.counts))

    def _percentile(self, q: float, cum: np.ndarray) -> float:
        """:meth:`percentile` on the counts' cumulative sum, computed once for several."""
        return self._at_bin(int(np.searchsorted(cum, self._rank(q))))

    def _rank(self, q: float) -> int:
        """The nearest rank of percentile ``q`` (1-based)."""
        return max(1, math.ceil(q / 100.0 * self.n))

    def _at_bin(self, i: int) -> float:
        """Seconds reported for bin ``i``: its midpoint, clamped to the exact min and max."""
        values = _BIN_VALUES[self.sub_bits]
        value = values[min(i, len(values) - 1)] / 1e9
        return float(min(max(value, self.lo), self.hi))

    def summary_us(self) -> dict[str, float]:
        """mean, p50, p99, p99.9 and max in microseconds (the JSON contract's keys); NaN with no samples
        (no I/O completed: no latency, which the JSON writes as null and tables as a dash)."""
        if self.n == 0:
            return {k: math.nan for k in ("mean", "p50", "p99", "p999", "max")}
        cum = np.cumsum(self.counts)
        return self._summary([int(np.searchsorted(cum, self._rank(q))) for q in SUMMARY_QS])

    def _summary(self, bins: Sequence[int]) -> dict[str, float]:
        """summary_us() from the bins of its three percentiles."""
        p50, p99, p999 = (self._at_bin(i) * 1e6 for i in bins)
        return {"mean": self.mean * 1e6, "p50": p50, "p99": p99, "p999": p999, "max": self.hi * 1e6}


SUMMARY_QS = (50, 99, 99.9)


def summaries_us(hists: Sequence[LogHistogram], chunk: int = 1024) -> list[dict[str, float]]:
    """Each histogram's :meth:`LogHistogram.summary_us`, the same numbers, in a few numpy passes: a run's
    16,384 per-path histograms took three cumulative sums and searches each (about a second of
    ``pathsel simulate``). ``chunk`` histograms at a time, so the stacked counts stay a few MB."""
    out: list[dict[str, float]] = []
    for a in range(0, len(hists), chunk):
        part = hists[a : a + chunk]
        live = [h for h in part if h.n]
        bins: dict[int, list[int]] = {}
        if live and len({h.counts.shape for h in live}) == 1:
            # the first bin whose cumulative count reaches the rank: searchsorted's left side, row by row
            cum = np.cumsum(np.stack([h.counts for h in live]), axis=1)
            found = [(cum < np.array([h._rank(q) for h in live], dtype=np.int64)[:, None]).sum(axis=1).tolist() for q in SUMMARY_QS]
            bins = {id(h): [f[k] for f in found] for k, h in enumerate(live)}
        out.extend(h._summary(bins[id(h)]) if id(h) in bins else h.summary_us() for h in part)
    return out


# An I/O outstanding during a fault that took at least this long from issue to completion (or failure) is a stalled
# I/O, and its workload (VM) froze: a guest stalls visibly at a tenth of a second (docs/model.md, "Stalls").
STALL_S = 0.1
# the columns of RunMetrics.fault_stall (and the recorder's fw_stat): per fault window and workload, the I/Os
# outstanding during it, the longest of them (seconds), those that took STALL_S or more, and those that failed
F_IOS, F_MAX, F_STALLED, F_FAILED = range(4)
F_COLS = 4


RECOVERIES = ("path_up", "array_up", "replication_up")  # faults that end an outage: they stall no I/O themselves


def stall_windows(faults: Sequence[Any], end: float) -> np.ndarray:
    """The fault windows (k x 3: start, end, 1.0 when every fault opening it is a recovery): one per instant at which
    a fault (not a revert) happens before ``end``, running to the next change of any kind (a revert included) or to
    ``end``. Disjoint and in order."""
    starts = sorted({float(f.at) for f in faults if not f.revert and f.at < end})
    changes = sorted({float(f.at) for f in faults})
    rows = []
    for a in starts:
        b = min((t for t in changes if t > a), default=end)
        recovery = all(f.what in RECOVERIES for f in faults if not f.revert and float(f.at) == a)
        rows.append((a, min(b, end), 1.0 if recovery else 0.0))
    return np.array(rows, dtype=np.float64).reshape(-1, 3)


@dataclass
class RunMetrics:
    """Everything one run measured. Engines fill it; results read it."""

    n_paths: int
    n_bins: int
    interval: float
    window: tuple[float, float]  # statistics cover completions in [start, end)
    overall: LogHistogram = field(default_factory=LogHistogram)
    by_op: dict[str, LogHistogram] = field(default_factory=lambda: {"read": LogHistogram(), "write": LogHistogram()})
    bytes_by_op: dict[str, int] = field(default_factory=lambda: {"read": 0, "write": 0})
    path_hist: list[LogHistogram] = field(default_factory=list)
    path_bytes: np.ndarray = field(default=None)  # type: ignore[arg-type]
    # time series over the whole run, ramp included: one row per interval
    ts_ios: np.ndarray = field(default=None)  # type: ignore[arg-type]
    ts_bytes: np.ndarray = field(default=None)  # type: ignore[arg-type]
    ts_latency_sum: np.ndarray = field(default=None)  # type: ignore[arg-type]
    ts_latency_max: np.ndarray = field(default=None)  # type: ignore[arg-type]
    ts_path_ios: np.ndarray = field(default=None)  # type: ignore[arg-type]
    # time integrals over the window, for Little's law
    in_flight_area: float = 0.0
    path_in_flight_area: np.ndarray = field(default=None)  # type: ignore[arg-type]
    ts_failed: np.ndarray = field(default=None)  # type: ignore[arg-type]
    # wires (each nexus's own, the shared links, the replication link) x direction: busy and queueing seconds
    n_wires: int = 0
    wire_busy: np.ndarray = field(default=None)  # type: ignore[arg-type]
    wire_wait: np.ndarray = field(default=None)  # type: ignore[arg-type]
    wire_frames: np.ndarray = field(default=None)  # type: ignore[arg-type]
    # accounting over the whole run
    issued: int = 0
    completed: int = 0
    failed: int = 0
    retried: int = 0
    timed_out: int = 0  # attempts aborted after the host's io_timeout (then retried)
    frames_lost: int = 0  # frames lost on the wire and resent after the loss recovery delay
    refused: int = 0  # open-loop arrivals refused at a full iodepth (iodepth_full = "refuse"), never issued
    # esxtop's split: time queued in the host before the device took the I/O (KAVG), then to completion (DAVG)
    kavg: LogHistogram = field(default_factory=LogHistogram)
    davg: LogHistogram = field(default_factory=LogHistogram)
    # per device: time integrals of I/Os active (ACTV) and queued in the host (QUED) over the window and per
    # interval (device x interval; / interval = the average), completions in the window and their KAVG, DAVG sums
    dev_area_actv: np.ndarray = field(default=None)  # type: ignore[arg-type]
    dev_area_qued: np.ndarray = field(default=None)  # type: ignore[arg-type]
    ts_dev_actv: np.ndarray = field(default=None)  # type: ignore[arg-type]
    ts_dev_qued: np.ndarray = field(default=None)  # type: ignore[arg-type]
    dev_completed: np.ndarray = field(default=None)  # type: ignore[arg-type]
    dev_kavg_sum: np.ndarray = field(default=None)  # type: ignore[arg-type]
    dev_davg_sum: np.ndarray = field(default=None)  # type: ignore[arg-type]
    # QUEUE FULL statuses back at the host (per path and device in the window, per interval over the run) and
    # each device's queue depth (DQLEN, which throttling changes) as time integrals per interval and over the window
    path_qfull: np.ndarray = field(default=None)  # type: ignore[arg-type]
    dev_qfull: np.ndarray = field(default=None)  # type: ignore[arg-type]
    ts_qfull: np.ndarray = field(default=None)  # type: ignore[arg-type]
    ts_dev_queue_depth: np.ndarray = field(default=None)  # type: ignore[arg-type]
    dev_area_queue_depth: np.ndarray = field(default=None)  # type: ignore[arg-type]
    # per queue (a row of Model.queues): time integrals over the window of its places in use and of what waited in
    # it (/ duration = the means), and the QUEUE FULLs it answered in the window; not in the JSON document
    queue_in_use_area: np.ndarray = field(default=None)  # type: ignore[arg-type]
    queue_waiting_area: np.ndarray = field(default=None)  # type: ignore[arg-type]
    queue_qfull: np.ndarray = field(default=None)  # type: ignore[arg-type]
    # per wire and direction, when its last frame is across (reference.wire_free at the end): busy time past the
    # run's end, which links() takes off a wire's utilisation (issue 33: a backlog at the end made it exceed 1)
    wire_free_end: np.ndarray | None = None
    # frames (issue 33): per nexus the bytes its framed legs sent over the whole run, payload to the array and to
    # the host, then wire bytes (headers and gaps included) the same way; None when no nexus has a transport
    frame_bytes: np.ndarray | None = None
    # the hosts' cores (Model.cpu, issue 33): each core's busy seconds in the window; None when no CPU is modelled
    cpu_busy: np.ndarray | None = None
    # the fabric (Model.fabric, issue 33): per shared link and direction, seconds in the window it was held by
    # back-pressure (its frames sent, the next link not draining them); None without a fabric
    link_held: np.ndarray | None = None
    # per workload (a [[workloads]] entry, JobModel.vm: a VM or fio job): per op its latency as the VM sees it
    # (issue to completion, a histogram at the paths' resolution), bytes and KAVG sums (workload x op: read, write),
    # completions over the whole run (workload x op), and the time integrals of its ACTV and QUED over the window
    wl_by_op: list[dict[str, LogHistogram]] = field(default_factory=list)
    wl_bytes: np.ndarray = field(default=None)  # type: ignore[arg-type]
    wl_kavg_sum: np.ndarray = field(default=None)  # type: ignore[arg-type]
    wl_completed_all: np.ndarray = field(default=None)  # type: ignore[arg-type]
    wl_area_actv: np.ndarray = field(default=None)  # type: ignore[arg-type]
    wl_area_qued: np.ndarray = field(default=None)  # type: ignore[arg-type]
    # per fault window (stall_windows: start, end, recovery) and workload, the I/Os outstanding at some time in it
    # (issue before its end, completion or failure after its start), each in one such window only (the first not
    # opened by a recovery, else the first): F_* columns; those in flight at the end are not counted (oldest_in_flight)
    fault_windows: np.ndarray = field(default=None)  # type: ignore[arg-type]
    fault_stall: np.ndarray = field(default=None)  # type: ignore[arg-type]
    # per path: its completions in the window whose I/O was issued on another NUMA node than the path's adapter's
    # (all 0 when no host has NUMA nodes)
    path_numa_crossed: np.ndarray = field(default=None)  # type: ignore[arg-type]
    oldest_in_flight: float = math.inf  # when the oldest I/O still in flight at the end was issued (inf: none)
    # every I/O still outstanding at the end (on a job slot, or an open loop's arrival waiting for one): its job and
    # when it was issued (n x 2), so a fault's stall counts the VMs whose I/Os never came back
    in_flight_at_end: np.ndarray = field(default=None)  # type: ignore[arg-type]
    events: list[dict[str, Any]] = field(default_factory=list)
    config_strings: dict[str, str] = field(default_factory=dict)
    trace: list[tuple[Any, ...]] | None = None  # per-I/O records, only when asked for

    def __post_init__(self) -> None:
        P, B = self.n_paths, self.n_bins
        if not self.path_hist:
            self.path_hist = [LogHistogram(sub_bits=PATH_SUB_BITS) for _ in range(P)]
        for name, shape, dtype in (
            ("path_bytes", (P,), np.int64),
            ("ts_ios", (B,), np.int64),
            ("ts_bytes", (B,), np.int64),
            ("ts_latency_sum", (B,), np.float64),
            ("ts_latency_max", (B,), np.float64),
            ("ts_path_ios", (B, P), np.int64),
            ("path_in_flight_area", (P,), np.float64),
            ("ts_failed", (B,), np.int64),
            ("path_qfull", (P,), np.int64),
            ("ts_qfull", (B,), np.int64),
            ("wire_busy", (self.n_wires, 2), np.float64),
            ("wire_wait", (self.n_wires, 2), np.float64),
            ("wire_frames", (self.n_wires, 2), np.int64),
        ):
            if getattr(self, name) is None:
                setattr(self, name, np.zeros(shape, dtype=dtype))
        if self.fault_windows is None:
            self.fault_windows = np.zeros((0, 3), dtype=np.float64)
        if self.fault_stall is None:
            self.fault_stall = np.zeros((0, 0, F_COLS), dtype=np.float64)

    @property
    def in_flight(self) -> int:
        return self.issued - self.completed - self.failed
