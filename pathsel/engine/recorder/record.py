"""The recorder's record: what a run measures, its fields declared once, and a zeroed record for a run.

Both engines fill it with the same compiled code (:mod:`.bookkeeping`); :mod:`.readout` reads it back. The fast
engine's own records are declared in :mod:`pathsel.engine.fast.layout`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba.core import types
from numba.experimental import structref

from ...jit import Layout, address_of, on_lines
from ...metrics import (
    F_COLS,
    NBINS,
    PATH_NBINS,
)

__all__ = [
    "RECORDER",
    "RecorderType",
    "recorder_at",
    "new_record",
    "numa_nodes",
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
    "N_COUNTERS",
    "PBUF",
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


def numa_nodes(model: Any) -> tuple[list[int], list[int]]:
    """Each job's NUMA node and each path's adapter's, for the record's crossing count; both empty when no host has
    NUMA nodes (then nothing is compared at a completion)."""
    if not any(getattr(hp, "numa_nodes", 1) > 1 for hp in model.host_params):
        return [], []
    return [int(j.numa_node) for j in model.jobs], [int(p.numa_node) for p in model.paths]
