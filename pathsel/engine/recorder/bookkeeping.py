"""The recorder's bookkeeping: the compiled functions that count each event into the record (:mod:`.record`).

The fast engine's loop inlines them (``rec_issue``, ``rec_path``, ``rec_complete``, ...); the reference engine
calls the very same functions from Python through :class:`Recorder`, one compiled call per event, so both engines
measure a run with one piece of code.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros

from ...jit import entry, hot, jit
from ...metrics import (
    F_FAILED,
    F_IOS,
    F_MAX,
    F_STALLED,
    MAX_EXP,
    PATH_NBINS,
    PATH_SUB_BITS,
    STALL_S,
    SUB_BITS,
)
from .record import (
    C_COMPLETED,
    C_FAILED,
    C_INFLIGHT,
    C_ISSUED,
    H_DAVG,
    H_KAVG,
    H_OVERALL,
    H_PATH0,
    H_READ,
    PBUF,
    S_AREA,
    S_BYTES,
    S_HI,
    S_LAST,
    S_LO,
    S_N,
    S_OUT,
    S_TOTAL,
    T_AREA,
    T_LAST,
    W_BYTES,
    W_BYTES_ALL,
    W_KAVG,
    W_N_ALL,
    WQ_ACTV,
    WQ_AREA_A,
    WQ_AREA_Q,
    WQ_LAST,
    WQ_QUED,
    recorder_at,
)

__all__ = [
    "Recorder",
    "close_record",
    "rec_issue",
    "rec_path",
    "rec_complete",
    "rec_fail",
    "rec_stall",
    "rec_close",
    "rec_dev",
    "rec_qfull",
    "rec_queue_depth",
]


@hot
def bin_index(ns, sub_bits):
    """The histogram bin of a latency in whole nanoseconds (metrics.bin_index, one lzcnt instead of a loop)."""
    sub = 1 << sub_bits
    if ns < sub:
        return ns if ns > 0 else 0
    e = 63 - leading_zeros(ns)  # type: ignore[call-arg]  # floor(log2(ns)); a numba intrinsic: compiled code passes only the value (numba adds the typing context)
    if e >= MAX_EXP:
        return sub + (MAX_EXP - sub_bits) * sub - 1
    return sub + (e - sub_bits) * sub + ((ns >> (e - sub_bits)) - sub)


@hot
def tally(R, row, seconds):
    """Count, sum, minimum and maximum of histogram row ``row``."""
    stat_add(R.h_stat, row, seconds)


@hot
def stat_add(h, row, seconds):
    """Count, sum, minimum and maximum of line ``row`` of ``h`` (h_stat, or wl_stat: the same first columns)."""
    r = np.uint64(row)
    h[r, S_N] += 1.0
    h[r, S_TOTAL] += seconds
    if seconds < h[r, S_LO]:
        h[r, S_LO] = seconds
    if seconds > h[r, S_HI]:
        h[r, S_HI] = seconds


@hot
def hist_add(R, row, seconds):
    R.hist[row, bin_index(np.int64(seconds * 1e9), SUB_BITS)] += 1
    tally(R, row, seconds)


@jit
def phist_flush(R):
    """Count the completions waiting in pbuf into phist."""
    flat = R.phist.reshape(R.phist.size)
    buf = R.pbuf
    for i in range(R.pbuf_n[0]):
        flat[np.uint64(buf[i])] += 1
    R.pbuf_n[0] = 0


@hot
def path_hist_add(R, p, seconds):
    n = R.pbuf_n[0]
    R.pbuf[np.uint64(n)] = p * PATH_NBINS + bin_index(np.int64(seconds * 1e9), PATH_SUB_BITS)
    R.pbuf_n[0] = n + 1
    if n + 1 == PBUF:
        phist_flush(R)
    tally(R, H_PATH0 + p, seconds)


@hot
def clip(R, t0, t1):
    """Length of [t0, t1] inside the statistics window."""
    return max(0.0, min(t1, R.end) - max(t0, R.ramp))


@hot
def rec_issue(R, now):
    R.rc[C_ISSUED] += 1
    R.rt[T_AREA] += R.rc[C_INFLIGHT] * clip(R, R.rt[T_LAST], now)
    R.rc[C_INFLIGHT] += 1
    R.rt[T_LAST] = now


@hot
def rec_path(R, now, p, delta):
    """An attempt starts (+1) or ends (-1) on path ``p``."""
    h = R.h_stat
    r = np.uint64(H_PATH0 + p)
    h[r, S_AREA] += h[r, S_OUT] * clip(R, h[r, S_LAST], now)
    h[r, S_OUT] += delta
    h[r, S_LAST] = now


@hot
def dev_advance(R, d, now):
    """Bring device ``d``'s ACTV and QUED integrals up to ``now`` (per interval, and over the window)."""
    t = R.dev_last[d]
    a = R.dev_actv[d]
    q = R.dev_qued[d]
    if now > t and (a != 0 or q != 0):
        w = clip(R, t, now)
        R.dev_area_a[d] += a * w
        R.dev_area_q[d] += q * w
        iv = R.interval
        last = R.ts_dev_actv.shape[1] - 1
        b0 = min(np.int64(t / iv), last)
        b1 = min(np.int64(now / iv), last)
        if b0 == b1:
            R.ts_dev_actv[d, b0] += a * (now - t)
            R.ts_dev_qued[d, b0] += q * (now - t)
        else:
            # over more than one interval (rare): out of line, as dev_advance is inlined at ~50 places
            spread(R.ts_dev_actv, d, t, now, a, b0, b1, iv)
            spread(R.ts_dev_qued, d, t, now, q, b0, b1, iv)
    R.dev_last[d] = now


@jit
def spread(ts, d, t, now, x, b0, b1, iv):
    """Add ``x`` times the part of [t, now) in each interval b0 .. b1 (of ``iv`` seconds) to ``ts[d, b]``."""
    for b in range(b0, b1 + 1):
        lo = t if b == b0 else b * iv
        hi = now if b == b1 else (b + 1) * iv
        ts[d, b] += x * (hi - lo)


@hot
def rec_dev(R, now, d, actv, qued, j):
    """Device ``d`` takes (+1) or lets go of (-1) an active I/O of job ``j``, or one starts or stops waiting in the
    host; the job's workload (VM) counts the same."""
    if R.queues_on == 0:
        return
    dev_advance(R, d, now)
    R.dev_actv[d] += actv
    R.dev_qued[d] += qued
    q = R.wl_q
    v = np.uint64(R.j_vm[j])
    w = clip(R, q[v, WQ_LAST], now)
    if w > 0.0:
        q[v, WQ_AREA_A] += q[v, WQ_ACTV] * w
        q[v, WQ_AREA_Q] += q[v, WQ_QUED] * w
    q[v, WQ_ACTV] += actv
    q[v, WQ_QUED] += qued
    q[v, WQ_LAST] = now


@hot
def rec_qfull(R, now, p, d):
    """A QUEUE FULL (TASK SET FULL, SCSI status 0x28) status came back to the host on path ``p`` of device ``d``."""
    R.ts_qfull[min(np.int64(now / R.interval), R.ts_qfull.shape[0] - 1)] += 1
    if R.ramp <= now < R.end:
        R.path_qfull[p] += 1
        R.dev_qfull[d] += 1


@jit
def queue_depth_advance(R, d, now):
    """Bring device ``d``'s queue depth integrals (esxtop's DQLEN) up to ``now`` (per interval, and over the window)."""
    t = R.dev_queue_depth_last[d]
    q = R.dev_queue_depth[d]
    if now > t and q != 0:
        R.dev_area_queue_depth[d] += q * clip(R, t, now)
        iv = R.interval
        last = R.ts_dev_queue_depth.shape[1] - 1
        b0 = min(np.int64(t / iv), last)
        b1 = min(np.int64(now / iv), last)
        spread(R.ts_dev_queue_depth, d, t, now, q, b0, b1, iv)
    R.dev_queue_depth_last[d] = now


@jit
def rec_queue_depth(R, now, d, queue_depth):
    """Device ``d``'s queue depth changes to ``queue_depth`` (ESXi's adaptive queue-depth throttling)."""
    queue_depth_advance(R, d, now)
    R.dev_queue_depth[d] = queue_depth


@hot
def rec_complete(R, now, op, size, latency, p, path_latency, d, kavg, j):
    R.rc[C_COMPLETED] += 1
    R.rt[T_AREA] += R.rc[C_INFLIGHT] * clip(R, R.rt[T_LAST], now)
    R.rc[C_INFLIGHT] -= 1
    R.rt[T_LAST] = now
    b = min(np.int64(now / R.interval), R.ts_ios.shape[0] - 1)
    R.ts_ios[b] += 1
    R.ts_bytes[b] += size
    R.ts_lat_sum[b] += latency
    if latency > R.ts_lat_max[b]:
        R.ts_lat_max[b] = latency
    R.ts_path_ios[p, b] += 1
    if R.fw.shape[0] != 0:
        rec_stall(R, now, latency, j, 0)
    row = R.j_vm[j] * 2 + op
    R.wl_stat[np.uint64(row), W_N_ALL] += 1.0
    R.wl_stat[np.uint64(row), W_BYTES_ALL] += size
    if R.ramp <= now < R.end:
        hist_add(R, H_OVERALL, latency)
        hist_add(R, H_READ + op, latency)
        R.bytes_op[op] += size
        path_hist_add(R, p, path_latency)
        R.h_stat[H_PATH0 + p, S_BYTES] += size
        if R.queues_on != 0:
            hist_add(R, H_KAVG, kavg)
            hist_add(R, H_DAVG, latency - kavg)
        R.dev_n[d] += 1
        R.dev_kavg[d] += kavg
        R.dev_davg[d] += latency - kavg
        wl_add(R, row, size, latency, kavg)
        if R.p_node.shape[0] != 0 and R.j_node[j] != R.p_node[p]:  # through another node's adapter (NUMA)
            R.path_crossed[p] += 1


@hot
def wl_add(R, row, size, latency, kavg):
    """A completion in the window of workload and op row ``row`` (vm * 2 + op)."""
    R.wl_hist[row, bin_index(np.int64(latency * 1e9), PATH_SUB_BITS)] += 1
    stat_add(R.wl_stat, row, latency)
    h = R.wl_stat
    r = np.uint64(row)
    h[r, W_KAVG] += kavg
    h[r, W_BYTES] += size


@jit
def rec_stall(R, now, latency, j, failed):
    """An I/O of job ``j`` issued ``latency`` ago completes (``failed`` 0) or fails (1) now: it counts for its
    workload in one fault window it was outstanding in (issued before the window's end, done after its start): the
    first not opened by a recovery (a path or array coming back stalls nothing itself: an I/O held from a loss past
    the return is the loss's, one sent just before the next loss is that loss's), else the first."""
    fw = R.fw
    issued = now - latency
    # the windows are disjoint and in order: the first whose end is after the issue, by bisection (a flapping
    # path's run has dozens of windows and every completion comes here)
    lo, hi = 0, fw.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if fw[mid, 1] > issued:
            hi = mid
        else:
            lo = mid + 1
    if lo == fw.shape[0] or fw[lo, 0] >= now:  # done before the next window opened
        return
    k = lo
    while fw[k, 2] != 0.0 and k + 1 < fw.shape[0] and fw[k + 1, 0] < now:
        k += 1
    if fw[k, 2] != 0.0:  # only recoveries in its life: the first
        k = lo
    r = np.uint64(k * R.wl_q.shape[0] + R.j_vm[j])
    st = R.fw_stat
    st[r, F_IOS] += 1.0
    if latency > st[r, F_MAX]:
        st[r, F_MAX] = latency
    if latency >= STALL_S:
        st[r, F_STALLED] += 1.0
    st[r, F_FAILED] += failed


@jit
def rec_fail(R, now, latency, j):
    """An I/O of job ``j`` issued ``latency`` ago fails visibly now (no usable path until the APD timeout)."""
    if R.fw.shape[0] != 0:
        rec_stall(R, now, latency, j, 1)
    R.rc[C_FAILED] += 1
    R.ts_failed[min(np.int64(now / R.interval), R.ts_failed.shape[0] - 1)] += 1
    R.rt[T_AREA] += R.rc[C_INFLIGHT] * clip(R, R.rt[T_LAST], now)
    R.rc[C_INFLIGHT] -= 1
    R.rt[T_LAST] = now


@jit
def rec_close(R, now):
    """Bring the time integrals up to the end of the run."""
    R.rt[T_AREA] += R.rc[C_INFLIGHT] * clip(R, R.rt[T_LAST], now)
    h = R.h_stat
    for r in range(H_PATH0, h.shape[0]):
        h[r, S_AREA] += h[r, S_OUT] * clip(R, h[r, S_LAST], now)
    if R.queues_on != 0:
        for d in range(R.dev_actv.shape[0]):
            dev_advance(R, d, now)
        q = R.wl_q
        for v in range(q.shape[0]):
            w = clip(R, q[v, WQ_LAST], now)
            q[v, WQ_AREA_A] += q[v, WQ_ACTV] * w
            q[v, WQ_AREA_Q] += q[v, WQ_QUED] * w
            q[v, WQ_LAST] = now
    for d in range(R.dev_queue_depth.shape[0]):
        queue_depth_advance(R, d, now)


# -- the same functions, called from Python (the reference engine) -----------------------
@entry
def _issue_at(addr, now):
    rec_issue(recorder_at(addr), now)


@entry
def _path_at(addr, now, p, delta):
    rec_path(recorder_at(addr), now, p, delta)


@entry
def _complete_at(addr, now, op, size, latency, p, path_latency, d, kavg, j):
    rec_complete(recorder_at(addr), now, op, size, latency, p, path_latency, d, kavg, j)


@entry
def _dev_at(addr, now, d, actv, qued, j):
    rec_dev(recorder_at(addr), now, d, actv, qued, j)


@entry
def _qfull_at(addr, now, p, d):
    rec_qfull(recorder_at(addr), now, p, d)


@entry
def _queue_depth_at(addr, now, d, queue_depth):
    rec_queue_depth(recorder_at(addr), now, d, queue_depth)


@entry
def _fail_at(addr, now, latency, j):
    rec_fail(recorder_at(addr), now, latency, j)


@entry
def _close_at(addr, now):
    rec_close(recorder_at(addr), now)


def close_record(record: Any, now: float) -> None:
    """:func:`rec_close` on a record from Python: bring its time integrals up to ``now``."""
    _close_at(record.address, now)


class Recorder:
    """The reference engine's handle on a record: the same compiled bookkeeping the fast engine inlines."""

    def __init__(self, record: Any) -> None:
        self.record = record  # a record of new_record's
        self._addr = self.record.address

    def issue(self, now: float) -> None:
        _issue_at(self._addr, now)

    def path_start(self, now: float, p: int) -> None:
        _path_at(self._addr, now, p, 1)

    def path_end(self, now: float, p: int) -> None:
        _path_at(self._addr, now, p, -1)

    def complete(self, now: float, op: str, size: int, latency: float, p: int, path_latency: float, d: int, kavg: float, j: int) -> None:
        _complete_at(self._addr, now, 0 if op == "read" else 1, size, latency, p, path_latency, d, kavg, j)

    def device(self, now: float, d: int, actv: int, qued: int, j: int) -> None:
        """Device ``d`` and job ``j``'s workload: ACTV and QUED change by ``actv`` and ``qued`` (rec_dev)."""
        _dev_at(self._addr, now, d, actv, qued, j)

    def fail(self, now: float, latency: float, j: int) -> None:
        """An I/O of job ``j``, issued ``latency`` ago, fails visibly now."""
        _fail_at(self._addr, now, latency, j)

    def qfull(self, now: float, p: int, d: int) -> None:
        _qfull_at(self._addr, now, p, d)

    def queue_depth(self, now: float, d: int, queue_depth: int) -> None:
        _queue_depth_at(self._addr, now, d, queue_depth)

    def close(self, now: float) -> None:
        _close_at(self._addr, now)

    def count(self, counter: int, n: int = 1) -> None:
        self.record.rc[counter] += n
