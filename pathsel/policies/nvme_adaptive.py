"""The NVMe ``adaptive`` iopolicy: weighted round robin by each path's smoothed latency. NOT merged.

Source: Nilay Shroff (IBM), "[RFC PATCHv5 0/7] nvme-multipath: introduce
adaptive I/O policy", linux-nvme, 5 November 2025,
https://lore.kernel.org/all/20251105103347.86059-1-nilay@linux.ibm.com/
(v4: "[RFC PATCHv4 2/6] nvme-multipath: add support for adaptive I/O
policy", 4 November 2025,
https://lists.infradead.org/pipermail/linux-nvme/2025-November/059369.html;
"[RFC PATCHv4 4/6] nvme-multipath: add debugfs attribute
adaptive_ewma_shift", https://lists.infradead.org/pipermail/linux-nvme/2025-November/059353.html).
The series is an RFC: no released kernel has it (the May 2026 "[PATCHv6 0/8]
nvme-multipath: introduce latency I/O policy" renames it). The code modelled
is the series' ``drivers/nvme/host/multipath.c``: ``nvme_adaptive_path``,
``nvme_mpath_add_sample``, ``nvme_mpath_weight_work``, ``ewma_update``,
``nvme_mpath_clear_current_path`` / ``nvme_mpath_reset_adaptive_path_stat``.

* ``nvme_mpath_add_sample`` (each completion): no sample with a single path
  (``list_is_singular``), a zero latency, or one over 1 s (``NSEC_PER_SEC``,
  ignored as a stall); else ``batch += latency``, ``batch_count += 1``. Once
  ``adp_weight_timeout`` (~15 s) has passed since the path's last update,
  ``avg = batch / batch_count`` (integer ns), both reset, and ``slat_ns = avg``
  for the first window, else ``ewma_update(slat, avg, shift) = (slat * ((1 <<
  shift) - 1) + avg) >> shift`` (``adp_ewma_shift`` 3: 7/8 old, 1/8 new); then
  the weights are computed again.
* ``nvme_mpath_weight_work``: for every path of the namespace ``score =
  NSEC_PER_SEC / slat_ns``, ``total`` their sum; ``weight = score * 64 /
  total``, at least 1 (a path is never forgotten).
* ``nvme_adaptive_path`` (each I/O): from this CPU's last path (the first
  path at first), skip paths that are disabled or not ANA-live (optimized or
  non-optimized); a path whose weight is 0 (no weight computed yet) is taken
  at once; one with ``credit > 0`` is taken and ``credit -= 1``; else its
  credit is refilled to its weight and the next path is tried. Optimized and
  non-optimized paths are *not* told apart ("The non-optimized path is
  expected to have a lower weight").
* A path that fails over or whose controller resets
  (``nvme_mpath_clear_current_path``) loses its statistics (weight, credit,
  EWMA and window back to 0) until it is live again.

Statistics are kept per NUMA node and per op (read, write), credits and the
cursor per CPU; each is the series' choice.

Assumptions where the series is silent, changed, or pathsel is coarser:

* A CPU is its NUMA node: the cursor and credits (per CPU in the kernel) are
  per node of the issuing workload (``s_node``), as are the statistics; a
  completion counts on the issuing node (the kernel's completing CPU's).
* A path that has never been sampled has ``slat_ns`` 0; the series divides
  by it. pathsel gives it score 0 (weight 1 after the floor).
* The first sample of a path starts its first window at once: the kernel's
  ``last_weight_ts`` starts at 0 against a clock counted from boot, so the
  first sample is always past the timeout; pathsel's clock starts at 0.
* The weight work the kernel defers to a workqueue runs at once.
* A path loses its statistics when the host sees it go down (pathsel's
  failover and controller reset) and samples again when it comes back up; a
  failed attempt on a path still up changes nothing.
* v4 kept the statistics per CPU; v5's code aggregates them per node
  (``ns->aggr[node]``), which pathsel follows.
"""

from __future__ import annotations

import numpy as np

from ..limits import MAX_NUMA_NODES
from .framework.adapter import policy_class
from .framework.define import Field, Param, PolicyDef, Snapshot, compiled, per_path
from .framework.kernel import ANO, AO

__all__ = ["ADAPTIVE", "NvmeAdaptive", "ewma_update", "WEIGHT_SCALE", "NSEC_PER_SEC"]

NSEC_PER_SEC = 1_000_000_000
WEIGHT_SCALE = 64  # weights are normalised to 0-64 (nvme_mpath_weight_work)
GROUPS = 2 * MAX_NUMA_NODES  # (node, op) pairs: the kernel's ns->aggr[node][op_type], READ and WRITE


@compiled
def ewma_update(old, new, shift):
    """The series' ``ewma_update``: integer nanoseconds, ``shift`` 3 keeps 7/8 of the old value."""
    return (old * ((np.int64(1) << shift) - 1) + new) >> shift


@compiled
def live(v, p):
    """Not ``nvme_path_is_disabled`` and ``nvme_state_is_live`` (ANA optimized or non-optimized)."""
    return v.up[p] == 1 and (v.alua[p] == AO or v.alua[p] == ANO)


@compiled
def adaptive_select(v, st, d, slot):
    """``nvme_adaptive_path``: the weighted round robin with credits, from this node's last path."""
    n = v.d_np[d]
    if n == 0:
        return -1
    node = v.s_node[slot]
    g = node * 2 + v.s_op[slot]
    k = st.cur[d, node]
    if k < 0:
        k = 0  # list_first_or_null_rcu(&head->list)
    for _ in range(3 * n + 1):  # found_ns: every path is refilled at most once before one with credit is met
        start = k
        while not live(v, v.d_paths[d, k]):
            k = (k + 1) % n
            if k == start:
                return -1  # every path disabled or not live: no path (cursor unchanged)
        w = st.weight[d, g, k]
        if w == 0:
            st.cur[d, node] = k  # no weight yet: this path, and stay on it (bootstrap)
            return k
        if st.credit[d, g, k] > 0:
            st.credit[d, g, k] -= 1
            st.cur[d, node] = k
            return k
        st.credit[d, g, k] = w  # refill; it is used when the others have spent theirs
        k = (k + 1) % n
    return -1


@compiled
def weight_work(v, st, d, g):
    """``nvme_mpath_weight_work``: score = NSEC_PER_SEC / slat_ns per path, weight = score * 64 / total, at least 1."""
    n = v.d_np[d]
    total = np.int64(0)
    for k in range(n):
        s = st.slat[d, g, k]
        st.score[d, k] = NSEC_PER_SEC // s if s > 0 else 0  # assumed: no sample, no score (the series divides by 0)
        total += st.score[d, k]
    if total == 0:
        return
    for k in range(n):
        w = st.score[d, k] * WEIGHT_SCALE // total
        st.weight[d, g, k] = w if w > 0 else 1


@compiled
def adaptive_complete(v, st, d, k, slot, latency):
    """``nvme_mpath_add_sample``: batch the latency; past the window, fold the batch's mean into the EWMA."""
    if v.d_np[d] == 1 or st.on[d, k] == 0:  # list_is_singular; NVME_NS_PATH_STAT clear
        return
    lat = np.int64(latency * 1e9 + 0.5)  # the kernel's integer nanoseconds, to the nearest
    if lat <= 0 or lat > NSEC_PER_SEC:
        return  # no latency, or a >1 s outlier the series ignores (nr_ignored)
    g = v.s_node[slot] * 2 + v.s_op[slot]
    st.batch[d, g, k] += lat
    st.count[d, g, k] += 1
    now = np.int64(v.clock[0] * 1e9 + 0.5)
    last = st.last_ts[d, g, k]
    if last >= 0 and now - last < np.int64(st.weight_timeout * 1e9):
        return
    st.last_ts[d, g, k] = now
    avg = st.batch[d, g, k] // st.count[d, g, k]
    st.batch[d, g, k] = 0
    st.count[d, g, k] = 0
    if st.slat[d, g, k] == 0:
        st.slat[d, g, k] = avg
    else:
        st.slat[d, g, k] = ewma_update(st.slat[d, g, k], avg, np.int64(st.ewma_shift))
    weight_work(v, st, d, g)


@compiled
def adaptive_path_change(v, st, d, k):
    """Down: ``nvme_mpath_clear_current_path`` resets the path's statistics; up again: ``nvme_mpath_set_live``."""
    p = v.d_paths[d, k]
    if v.up[p] != 1:
        if st.on[d, k] == 1:
            st.on[d, k] = 0
            for g in range(GROUPS):
                st.weight[d, g, k] = 0
                st.credit[d, g, k] = 0
                st.slat[d, g, k] = 0
                st.batch[d, g, k] = 0
                st.count[d, g, k] = 0
                st.last_ts[d, g, k] = -1
    elif live(v, p):
        st.on[d, k] = 1


def _config(s: Snapshot) -> str:
    parts = []
    for k, name in enumerate(s.names):
        w = int(s.state.weight[s.d, 0, k])
        lat = int(s.state.slat[s.d, 0, k])
        parts.append(f"{name}: weight={w},credit={int(s.state.credit[s.d, 0, k])},slat_us={lat / 1e3:.1f}")
    head = f"iopolicy=adaptive adaptive_ewma_shift={s.params['ewma_shift']} adaptive_weight_timeout={s.params['weight_timeout']:g}s"
    return head + " read@node0 [" + "; ".join(parts) + "]"


def _stats(name: str, init: float = 0) -> Field:
    return Field(name, "i8", ("D", GROUPS, "MP"), init)


ADAPTIVE = PolicyDef(
    "nvme:adaptive",
    "NVMe iopolicy=adaptive (RFC v5, 2025, not merged): round robin weighted by each path's EWMA latency, with credits",
    'Nilay Shroff, "[RFC PATCHv5 0/7] nvme-multipath: introduce adaptive I/O policy", linux-nvme 2025-11-05 (not merged); `nvme_adaptive_path`, `nvme_mpath_add_sample`, `nvme_mpath_weight_work`',
    select=adaptive_select,
    complete=adaptive_complete,
    path_change=adaptive_path_change,
    params=(
        Param("ewma_shift", 3, int, "the EWMA's shift: 3 keeps 7/8 of the old latency (debugfs adaptive_ewma_shift)", 0, 10, shown="3 [0 … 10]"),
        Param(
            "weight_timeout",
            15.0,
            float,
            "seconds between a path's EWMA updates and weight recomputes (the series' adp_weight_timeout, ~15 s)",
            0.001,
            3600.0,
            shown="15 s [0.001 … 3600]",
        ),
    ),
    state=(
        Field("cur", "i8", ("D", MAX_NUMA_NODES), -1),  # the per-CPU adp_path, per node
        _stats("weight"),
        _stats("credit"),
        _stats("slat"),  # smoothed latency, ns
        _stats("batch"),
        _stats("count"),
        _stats("last_ts", -1),  # -1: no window yet
        per_path("on", "i8", 1),  # NVME_NS_PATH_STAT
        per_path("score"),
    ),
    config_string=_config,
    class_name="NvmeAdaptive",
    counts="per path, NUMA node and op: a smoothed (EWMA) completion latency in ns, its weight (0–64) and credits",
    notes="*Not merged* (an RFC, v5 of 2025-11). Each I/O takes the issuing node's current path while it has credit (one per I/O); a path out of credit is refilled to its weight and the next path is tried, so paths share I/O in proportion to weight = 64 × (1/latency) / Σ(1/latency), at least 1. A path with no weight yet is used at once (bootstrap). Latency: the mean of each ~15 s window folded into an EWMA (7/8 old). Optimized and non-optimized paths are not told apart. A path that goes down loses its statistics. *Assumed:* a CPU is its NUMA node; a path's first sample starts its first window at once; an unsampled path scores 0.",
)
NvmeAdaptive = policy_class(ADAPTIVE, "NvmeAdaptive", module=__name__)
