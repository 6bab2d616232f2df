"""The recorder's record read back: :func:`to_metrics` (the run's :class:`~pathsel.metrics.RunMetrics`) and
:class:`Live`, what a live view reads while the run goes on."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...metrics import (
    F_COLS,
    PATH_SUB_BITS,
    LogHistogram,
    RunMetrics,
)
from .record import (
    C_COMPLETED,
    C_FAILED,
    C_FRAMES_LOST,
    C_ISSUED,
    C_REFUSED,
    C_RETRIED,
    C_TIMED_OUT,
    H_DAVG,
    H_KAVG,
    H_OVERALL,
    H_PATH0,
    H_READ,
    H_WRITE,
    S_AREA,
    S_BYTES,
    S_HI,
    S_LO,
    S_N,
    S_TOTAL,
    T_AREA,
    W_BYTES,
    W_KAVG,
    W_N_ALL,
    WQ_AREA_A,
    WQ_AREA_Q,
)

__all__ = ["Live", "to_metrics", "vm_slots"]


@dataclass
class Live:
    """What a run has measured so far, for a live view (``pathsel top``): read it, copy what you keep.

    ``record`` is the run's recorder record (numpy arrays: ``ts_ios``,
    ``ts_path_ios``, ``ts_lat_sum``, ``rc`` counters, ...), ``out`` and
    ``out_bytes`` the I/Os and bytes in flight per path right now.
    """

    now: float
    record: Any
    out: np.ndarray
    out_bytes: np.ndarray


def _hist(R: Any, row: int) -> LogHistogram:
    """Row ``row`` of the record's histograms, its counts a view of the record's (a copy of every path's would
    bring bins no latency fell in into memory)."""
    p = row - H_PATH0
    h = LogHistogram(counts=R.phist[p], sub_bits=PATH_SUB_BITS) if p >= 0 else LogHistogram(counts=R.hist[row])
    return _with_stat(h, R.h_stat[row])


def _with_stat(h: LogHistogram, st: Any) -> LogHistogram:
    """``h`` with the count, sum, minimum and maximum of its line ``st`` of h_stat or wl_stat (the same columns)."""
    h.n = int(st[S_N])
    h.total = float(st[S_TOTAL])
    h.lo = float(st[S_LO]) if st[S_N] else math.inf
    h.hi = float(st[S_HI])
    return h


def vm_slots(jobs: Sequence[Any]) -> list[int]:
    """Job slots per workload (JobModel.vm): with no host queue, the I/Os each workload always has active."""
    out = [0] * (max((j.vm for j in jobs), default=0) + 1)
    for j in jobs:
        out[j.vm] += j.iodepth
    return out


def _wl_hist(R: Any, row: int) -> LogHistogram:
    """Workload and op row ``row`` of the record's per-workload histograms (a copy)."""
    h = LogHistogram(counts=R.wl_hist[row].copy(), sub_bits=PATH_SUB_BITS)
    return _with_stat(h, R.wl_stat[row])  # W_N .. W_HI are S_N .. S_HI (record.py asserts it)


def to_metrics(R: Any, n_paths: int, slots: Sequence[int] | np.ndarray | None = None, workload_slots: Sequence[int] | None = None) -> RunMetrics:
    """The record as :class:`~pathsel.metrics.RunMetrics`: small arrays copied, the per-path ones shared with the record
    (which the engines never reuse). ``slots`` and ``workload_slots``: each device's and workload's job slots, its
    ACTV when no host queues."""
    pending = int(R.pbuf_n[0])
    np.add.at(R.phist.reshape(-1), R.pbuf[:pending], 1)  # completions not yet counted (phist_flush, in Python)
    R.pbuf_n[0] = 0
    m = RunMetrics(
        n_paths,
        R.ts_ios.shape[0],
        float(R.interval),
        (float(R.ramp), float(R.end)),
        n_wires=R.wire_busy.shape[0],
        path_hist=[_hist(R, H_PATH0 + p) for p in range(n_paths)],
        ts_path_ios=R.ts_path_ios.T,
    )
    m.overall = _hist(R, H_OVERALL)
    if R.queues_on:
        m.kavg, m.davg = _hist(R, H_KAVG), _hist(R, H_DAVG)
        m.dev_area_actv, m.dev_area_qued = R.dev_area_a.copy(), R.dev_area_q.copy()
        m.ts_dev_actv, m.ts_dev_qued = R.ts_dev_actv.copy(), R.ts_dev_qued.copy()
    else:  # no host queue: every I/O's KAVG is 0 (DAVG its latency), and each device has its slots active all run
        m.kavg = LogHistogram()
        m.kavg.counts[0] = m.overall.n
        m.kavg.n, m.kavg.total, m.kavg.lo, m.kavg.hi = m.overall.n, 0.0, (0.0 if m.overall.n else math.inf), 0.0
        m.davg = _hist(R, H_OVERALL)
        m.davg.counts = m.davg.counts.copy()
        on = np.asarray(slots if slots is not None else np.zeros(R.dev_actv.shape[0]), dtype=np.float64)
        nb, iv = R.ts_ios.shape[0], float(R.interval)
        edges = np.minimum(np.arange(nb + 1) * iv, float(R.end))
        edges[-1] = float(R.end)
        m.ts_dev_actv = on[:, None] * np.diff(edges)[None, :]
        m.ts_dev_qued = np.zeros_like(m.ts_dev_actv)
        m.dev_area_actv = on * (float(R.end) - float(R.ramp))
        m.dev_area_qued = np.zeros_like(m.dev_area_actv)
    m.dev_completed, m.dev_kavg_sum, m.dev_davg_sum = R.dev_n.copy(), R.dev_kavg.copy(), R.dev_davg.copy()
    m.by_op = {"read": _hist(R, H_READ), "write": _hist(R, H_WRITE)}
    m.bytes_by_op = {"read": int(R.bytes_op[0]), "write": int(R.bytes_op[1])}
    m.path_bytes = R.h_stat[H_PATH0:, S_BYTES].astype(np.int64)
    m.ts_ios, m.ts_bytes = R.ts_ios.copy(), R.ts_bytes.copy()
    m.ts_latency_sum, m.ts_latency_max = R.ts_lat_sum.copy(), R.ts_lat_max.copy()
    m.ts_failed = R.ts_failed.copy()
    m.fault_windows = R.fw.copy()
    m.fault_stall = R.fw_stat.reshape(R.fw.shape[0], R.wl_q.shape[0], F_COLS).copy()
    m.in_flight_area = float(R.rt[T_AREA])
    m.path_in_flight_area = R.h_stat[H_PATH0:, S_AREA].copy()
    m.issued = int(R.rc[C_ISSUED])
    m.completed = int(R.rc[C_COMPLETED])
    m.failed = int(R.rc[C_FAILED])
    m.retried = int(R.rc[C_RETRIED])
    m.timed_out = int(R.rc[C_TIMED_OUT])
    m.frames_lost = int(R.rc[C_FRAMES_LOST])
    m.refused = int(R.rc[C_REFUSED])
    m.wire_busy, m.wire_wait, m.wire_frames = R.wire_busy.copy(), R.wire_wait.copy(), R.wire_frames.copy()
    m.path_qfull, m.dev_qfull, m.ts_qfull = R.path_qfull.copy(), R.dev_qfull.copy(), R.ts_qfull.copy()
    m.path_numa_crossed = R.path_crossed.copy()
    m.ts_dev_queue_depth, m.dev_area_queue_depth = R.ts_dev_queue_depth.copy(), R.dev_area_queue_depth.copy()
    W = R.wl_q.shape[0]
    m.wl_by_op = [{"read": _wl_hist(R, 2 * v), "write": _wl_hist(R, 2 * v + 1)} for v in range(W)]
    m.wl_bytes = R.wl_stat[:, W_BYTES].reshape(W, 2).astype(np.int64)
    m.wl_kavg_sum = R.wl_stat[:, W_KAVG].reshape(W, 2).copy()
    m.wl_completed_all = R.wl_stat[:, W_N_ALL].reshape(W, 2).astype(np.int64)
    if R.queues_on:
        m.wl_area_actv, m.wl_area_qued = R.wl_q[:, WQ_AREA_A].copy(), R.wl_q[:, WQ_AREA_Q].copy()
    else:  # as the devices: each workload has its slots active all run, none queued
        on = np.zeros(W)
        ws = np.asarray(workload_slots if workload_slots is not None else [], dtype=np.float64)[:W]
        on[: ws.shape[0]] = ws
        m.wl_area_actv = on * (float(R.end) - float(R.ramp))
        m.wl_area_qued = np.zeros(W)
    return m
