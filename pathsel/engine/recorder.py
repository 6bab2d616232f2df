"""The recorder: what a run measures, kept in one record that both engines fill with the same compiled code.

The fast engine's loop calls these functions inline; the reference engine
calls them from Python through :class:`Recorder` (each call is one compiled
call on the same record). :func:`to_metrics` turns the record into
:class:`~pathsel.metrics.RunMetrics`.

* Latency histograms (overall, read, write, one per path) in log-linear bins
  of whole nanoseconds (:mod:`pathsel.metrics` reads them: percentiles
  within 0.4 %), with exact count, sum, minimum and maximum.
* Per-interval time series over the whole run (ramp included): completions,
  bytes, latency sum and maximum, completions per path, failures.
* Time integrals of I/Os in flight over the measured window, overall and per
  path (Little's law); wire busy and queueing time and frames per direction.
* Accounting: issued, completed, failed, retried, timed out, frames lost.
* esxtop's split of latency: the time an I/O waited in the host before its
  device took it (KAVG) and from then to completion (DAVG; GAVG is the
  overall latency), as histograms and per device; per device and interval
  the I/Os active on it (ACTV) and waiting in the host (QUED), as time
  integrals (their time averages), and over the window for Little's law.
* Per workload (a ``[[workloads]]`` entry: a VM or fio job, its numjobs
  copies one world): per op its completions, bytes, latency count, sum,
  minimum and maximum, KAVG sum and a histogram at the paths' coarser
  resolution, in the window; its completions and bytes over the whole run
  (``pathsel top``); its ACTV and QUED now and their integrals over the
  window (with host queues; else its slots, filled in at the end).
* Per fault window (:func:`~pathsel.metrics.stall_windows`) and workload:
  the I/Os outstanding at some time in it (issued before its end, completed
  or failed after its start; each in one window only: the first not opened
  by a path or array coming back, else the first), the
  longest of them from issue to completion or failure, those that took
  ``STALL_S`` or more, and those that failed: a fault's stall per VM,
  whichever interval the I/O completes in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba.core import types
from numba.cpython.unsafe.numbers import leading_zeros
from numba.experimental import structref

from ..jit import Layout, address_of, entry, hot, jit, on_lines
from ..metrics import (
    F_COLS,
    F_FAILED,
    F_IOS,
    F_MAX,
    F_STALLED,
    MAX_EXP,
    NBINS,
    PATH_NBINS,
    PATH_SUB_BITS,
    STALL_S,
    SUB_BITS,
    LogHistogram,
    RunMetrics,
)

__all__ = [
    "RECORDER",
    "Recorder",
    "new_record",
    "numa_nodes",
    "to_metrics",
    "rec_issue",
    "rec_path",
    "rec_complete",
    "rec_fail",
    "rec_stall",
    "rec_close",
    "rec_dev",
    "rec_qfull",
    "rec_queue_depth",
    "close_record",
    "vm_slots",
    "Live",
    "H_OVERALL",
    "H_READ",
    "H_WRITE",
    "H_KAVG",
    "H_DAVG",
    "H_PATH0",
    "C_ISSUED",
    "C_COMPLETED",
    "C_FAILED",
    "C_RETRIED",
    "C_TIMED_OUT",
    "C_FRAMES_LOST",
    "C_INFLIGHT",
    "C_REFUSED",
    "W_N",
    "W_TOTAL",
    "W_KAVG",
    "W_BYTES",
    "WQ_ACTV",
    "WQ_QUED",
    "W_N_ALL",
    "W_BYTES_ALL",
]

# histogram rows: 0 overall (GAVG), 1 read, 2 write, 3 queued in the host (KAVG), 4 on the device (DAVG), 5 + p per path
H_OVERALL, H_READ, H_WRITE, H_KAVG, H_DAVG, H_PATH0 = 0, 1, 2, 3, 4, 5
# counters (rc)
C_ISSUED, C_COMPLETED, C_FAILED, C_RETRIED, C_TIMED_OUT, C_FRAMES_LOST, C_INFLIGHT = range(7)
C_REFUSED = 7  # open-loop arrivals refused at a full iodepth (iodepth_full = "refuse"): never issued
N_COUNTERS = 8
# time-integral state (rt): the in-flight area and when it was last brought up to date
T_AREA, T_LAST = 0, 1


@structref.register
class RecorderType(types.StructRef):
    pass


# the columns of h_stat; counts and bytes are exact in a float below 2**53 (9 PB)
S_N, S_TOTAL, S_LO, S_HI, S_AREA, S_OUT, S_LAST, S_BYTES = range(8)
S_COLS = 8
# per workload and op (row vm * 2 + op), one line of wl_stat: its completions in the window (count, latency sum,
# minimum, maximum, KAVG sum, bytes), and its completions and bytes over the whole run (a live view's rates before
# the window starts)
W_N, W_TOTAL, W_LO, W_HI, W_KAVG, W_BYTES, W_N_ALL, W_BYTES_ALL = range(8)
assert (W_N, W_TOTAL, W_LO, W_HI) == (S_N, S_TOTAL, S_LO, S_HI)  # stat_add serves both
# per workload, one line of wl_q: ACTV and QUED now, since when, and their integrals over the window
WQ_ACTV, WQ_QUED, WQ_LAST, WQ_AREA_A, WQ_AREA_Q = range(5)

RECORDER = Layout(
    RecorderType,
    [
        ("ramp", "f8", 0),  # statistics cover completions in [ramp, end)
        ("end", "f8", 0),
        ("interval", "f8", 0),  # time-series bin width
        # 1 when a host can queue (a device queue depth, an open-loop job): the KAVG/DAVG histograms and ACTV/QUED
        # integrals are kept as I/Os go; else KAVG is 0 for every I/O and ACTV each device's slots, filled in at the end
        ("queues_on", "i8", 0),
        ("rc", "i8", 1),
        ("rt", "f8", 1),
        ("hist", "i8", 2),  # overall, read, write, KAVG, DAVG
        ("phist", "i8", 2),  # per path, coarser (metrics.PATH_SUB_BITS)
        # Completions not yet counted in phist, as flat indices (path * PATH_NBINS + bin), and how many (pbuf_n[0]).
        # With thousands of paths each count is a cache miss that stalls the loop; counted PBUF at a time, in a
        # loop of nothing else, the misses overlap.
        ("pbuf", "i8", 1),
        ("pbuf_n", "i8", 1),
        # One 64-byte line per histogram row: its count, sum, minimum and maximum and, on a path's row, the path's
        # in-flight integral, attempts in flight, when that integral was brought up to date, and bytes (S_* columns).
        # An attempt's start and end and a completion each touch their path's line, not eight arrays.
        ("h_stat", "f8", 2),
        ("bytes_op", "i8", 1),
        ("ts_ios", "i8", 1),
        ("ts_bytes", "i8", 1),
        ("ts_lat_sum", "f8", 1),
        ("ts_lat_max", "f8", 1),
        ("ts_path_ios", "i8", 2),  # path x interval: an idle path's row is never written, so never in memory
        ("ts_failed", "i8", 1),
        ("wire_busy", "f8", 2),  # wires (each nexus's own, the shared links, the replication link) x direction
        ("wire_wait", "f8", 2),
        ("wire_frames", "i8", 2),
        # per device: I/Os active on it (ACTV) and waiting in the host (QUED) now, and since when; their time
        # integrals per interval (device x interval) and over the window; completions in the window, KAVG and DAVG sums
        ("dev_actv", "i8", 1),
        ("dev_qued", "i8", 1),
        ("dev_last", "f8", 1),
        ("ts_dev_actv", "f8", 2),
        ("ts_dev_qued", "f8", 2),
        ("dev_area_a", "f8", 1),
        ("dev_area_q", "f8", 1),
        ("dev_n", "i8", 1),
        ("dev_kavg", "f8", 1),
        ("dev_davg", "f8", 1),
        # QUEUE FULL statuses back at the host: per path and device in the window, per interval over the whole run;
        # per device its queue depth now (ESXi's DQLEN, which throttling changes), since when, and its time integrals
        ("path_qfull", "i8", 1),
        ("dev_qfull", "i8", 1),
        ("ts_qfull", "i8", 1),
        ("dev_queue_depth", "i8", 1),
        ("dev_queue_depth_last", "f8", 1),
        ("ts_dev_queue_depth", "f8", 2),
        ("dev_area_queue_depth", "f8", 1),
        # per workload (JobModel.vm; j_vm maps each job to it): wl_stat and wl_hist per (vm, op) in the window,
        # wl_q its queue line (WQ_* columns)
        ("j_vm", "i8", 1),
        # NUMA: each job's node and each path's adapter's node (both empty when no host has NUMA nodes), and per path
        # its completions in the window whose I/O was issued on another node than the path's adapter (crossed)
        ("j_node", "i8", 1),
        ("p_node", "i8", 1),
        ("path_crossed", "i8", 1),
        ("wl_stat", "f8", 2),
        ("wl_hist", "i8", 2),
        ("wl_q", "f8", 2),
        # fault windows (k x 3: start, end, 1.0 if opened by a recovery only; disjoint, in order) and per
        # (window * workloads + workload) its F_* line
        ("fw", "f8", 2),
        ("fw_stat", "f8", 2),
    ],
    cols={
        "hist": NBINS,
        "phist": PATH_NBINS,
        "h_stat": S_COLS,
        "wire_busy": 2,
        "wire_wait": 2,
        "wire_frames": 2,
        "wl_stat": S_COLS,
        "wl_hist": PATH_NBINS,
        "wl_q": S_COLS,
        "fw": 3,
        "fw_stat": F_COLS,
    },
)
recorder_at = address_of(RECORDER)


PBUF = 4096  # completions per phist_flush: 32 KiB of indices, in L1 and L2 while they wait


def _h_stat(rows: int) -> np.ndarray:
    """A zeroed (rows, S_COLS) array whose rows start on 64-byte lines (minima +inf)."""
    h = on_lines(rows, S_COLS, np.float64)
    h[:, S_LO] = np.inf
    return h


def new_record(
    n_paths: int,
    n_bins: int,
    n_wires: int,
    window: tuple[float, float],
    interval: float,
    n_devices: int = 1,
    queues_on: bool = True,
    queue_depth: Any = None,
    job_vm: Sequence[int] = (),
    n_workloads: int = 1,
    fault_windows: Any = None,
    job_node: Sequence[int] = (),
    path_node: Sequence[int] = (),
) -> Any:
    """A zeroed record for a run with these paths, time-series bins, wires and devices (``queue_depth``: each device's
    queue depth at the start, 0 for none; ``job_vm``: each job's workload, JobModel.vm: every job of the run;
    ``fault_windows``: metrics.stall_windows of the run's faults; ``job_node``, ``path_node``: each job's NUMA node
    and each path's adapter's, empty when no host has nodes)."""
    i64, f64 = np.int64, np.float64
    D = n_devices
    rows = H_PATH0 + n_paths
    j_vm = np.array(job_vm, dtype=i64).reshape(-1)
    W = max(n_workloads, int(j_vm.max()) + 1 if j_vm.size else 1)
    fw = np.zeros((0, 3), dtype=f64) if fault_windows is None else np.ascontiguousarray(fault_windows, dtype=f64).reshape(-1, 3)
    return RECORDER.pack(
        dict(
            ramp=window[0],
            end=window[1],
            interval=interval,
            queues_on=1 if queues_on else 0,
            rc=np.zeros(N_COUNTERS, dtype=i64),
            rt=np.zeros(2, dtype=f64),
            hist=np.zeros((H_PATH0, NBINS), dtype=i64),
            phist=np.zeros((n_paths, PATH_NBINS), dtype=i64),
            pbuf=np.zeros(PBUF, dtype=i64),
            pbuf_n=np.zeros(1, dtype=i64),
            h_stat=_h_stat(rows),
            bytes_op=np.zeros(2, dtype=i64),
            ts_ios=np.zeros(n_bins, dtype=i64),
            ts_bytes=np.zeros(n_bins, dtype=i64),
            ts_lat_sum=np.zeros(n_bins, dtype=f64),
            ts_lat_max=np.zeros(n_bins, dtype=f64),
            ts_path_ios=np.zeros((n_paths, n_bins), dtype=i64),
            ts_failed=np.zeros(n_bins, dtype=i64),
            wire_busy=np.zeros((n_wires, 2), dtype=f64),
            wire_wait=np.zeros((n_wires, 2), dtype=f64),
            wire_frames=np.zeros((n_wires, 2), dtype=i64),
            dev_actv=np.zeros(D, dtype=i64),
            dev_qued=np.zeros(D, dtype=i64),
            dev_last=np.zeros(D, dtype=f64),
            ts_dev_actv=np.zeros((D, n_bins), dtype=f64),
            ts_dev_qued=np.zeros((D, n_bins), dtype=f64),
            dev_area_a=np.zeros(D, dtype=f64),
            dev_area_q=np.zeros(D, dtype=f64),
            dev_n=np.zeros(D, dtype=i64),
            dev_kavg=np.zeros(D, dtype=f64),
            dev_davg=np.zeros(D, dtype=f64),
            path_qfull=np.zeros(n_paths, dtype=i64),
            dev_qfull=np.zeros(D, dtype=i64),
            ts_qfull=np.zeros(n_bins, dtype=i64),
            dev_queue_depth=np.zeros(D, dtype=i64) if queue_depth is None else np.asarray(queue_depth, dtype=i64).copy(),
            dev_queue_depth_last=np.zeros(D, dtype=f64),
            ts_dev_queue_depth=np.zeros((D, n_bins), dtype=f64),
            dev_area_queue_depth=np.zeros(D, dtype=f64),
            j_vm=j_vm,
            j_node=np.array(job_node, dtype=i64).reshape(-1),
            p_node=np.array(path_node, dtype=i64).reshape(-1),
            path_crossed=np.zeros(n_paths, dtype=i64),
            wl_stat=_h_stat(2 * W),
            wl_hist=np.zeros((2 * W, PATH_NBINS), dtype=i64),
            wl_q=on_lines(W, S_COLS, np.float64),
            fw=fw,
            fw_stat=np.zeros((fw.shape[0] * W, F_COLS), dtype=f64),
        )
    )


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


def close_record(record: Any, now: float) -> None:
    """:func:`rec_close` on a record from Python: bring its time integrals up to ``now``."""
    _close_at(record.address, now)


class Recorder:
    """The reference engine's handle on a record: the same compiled bookkeeping the fast engine inlines."""

    def __init__(
        self,
        n_paths: int,
        n_bins: int,
        n_wires: int,
        window: tuple[float, float],
        interval: float,
        n_devices: int = 1,
        queues_on: bool = True,
        queue_depth: Any = None,
        job_vm: Sequence[int] = (),
        n_workloads: int = 1,
        fault_windows: Any = None,
        job_node: Sequence[int] = (),
        path_node: Sequence[int] = (),
    ) -> None:
        self.record = new_record(
            n_paths,
            n_bins,
            n_wires,
            window,
            interval,
            n_devices,
            queues_on,
            queue_depth,
            job_vm,
            n_workloads,
            fault_windows,
            job_node,
            path_node,
        )
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


def _hist(R: Any, row: int) -> LogHistogram:
    """Row ``row`` of the record's histograms, its counts a view of the record's (a copy of every path's would
    bring bins no latency fell in into memory)."""
    p = row - H_PATH0
    h = LogHistogram(counts=R.phist[p], sub_bits=PATH_SUB_BITS) if p >= 0 else LogHistogram(counts=R.hist[row])
    st = R.h_stat[row]
    h.n = int(st[S_N])
    h.total = float(st[S_TOTAL])
    h.lo = float(st[S_LO]) if st[S_N] else math.inf
    h.hi = float(st[S_HI])
    return h


def numa_nodes(model: Any) -> tuple[list[int], list[int]]:
    """Each job's NUMA node and each path's adapter's, for the record's crossing count; both empty when no host has
    NUMA nodes (then nothing is compared at a completion)."""
    if not any(getattr(hp, "numa_nodes", 1) > 1 for hp in model.host_params):
        return [], []
    return [int(j.numa_node) for j in model.jobs], [int(p.numa_node) for p in model.paths]


def vm_slots(jobs: Sequence[Any]) -> list[int]:
    """Job slots per workload (JobModel.vm): with no host queue, the I/Os each workload always has active."""
    out = [0] * (max((j.vm for j in jobs), default=0) + 1)
    for j in jobs:
        out[j.vm] += j.iodepth
    return out


def _wl_hist(R: Any, row: int) -> LogHistogram:
    """Workload and op row ``row`` of the record's per-workload histograms (a copy)."""
    h = LogHistogram(counts=R.wl_hist[row].copy(), sub_bits=PATH_SUB_BITS)
    st = R.wl_stat[row]
    h.n = int(st[W_N])
    h.total = float(st[W_TOTAL])
    h.lo = float(st[W_LO]) if st[W_N] else math.inf
    h.hi = float(st[W_HI])
    return h


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
