"""dm-multipath's path selectors (``dm-ps-*.c``), apart from the path groups that run them (``dm_mpath.py``).

Each path group of a dm-multipath table has its own selector, which picks a
path from the group's valid list; ``dm_mpath.py`` keeps the groups and the
list order, ``dm.py`` puts the two together into the five policies.

Sources (Linux kernel, ``drivers/md/``, https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/md):

* ``dm-ps-round-robin.c``: ``rr_select_path`` takes the head of the valid
  list and moves it to the tail; ``rr_reinstate_path`` puts a returning path
  at the *head* (``list_move``); ``repeat_count`` > 1 is forced to 1.
* ``dm-ps-queue-length.c``: ``ql_select_path`` keeps the first path with the
  fewest in-flight I/Os (strict ``<``) and stops scanning once the best has 0.
* ``dm-ps-service-time.c``: ``st_compare_load`` (in-flight bytes, relative
  throughput, the cross-multiplied comparison, results truncated to ``int``)
  and ``st_select_path``.
* ``dm-ps-historical-service-time.c``: ``hst_select_path``, ``hst_compare``,
  ``hst_end_io``, ``path_service_time`` (serialised service time),
  ``fixed_power``, ``fixed_ema``, ``hst_set_weights``, ``hst_weight``.
* ``dm-ps-io-affinity.c`` (5.11+): ``ioa_add_path`` maps each CPU of a
  path's mask to it unless the CPU is mapped already; ``ioa_select_path``
  takes the submitting CPU's path if it has not failed, else the first
  unfailed path mapped to a CPU of the CPU's node, else the first unfailed
  path mapped to any CPU (CPU order); none: no path.

Every selector above moves the chosen path to the tail of its valid list, so
ties go to the least recently selected path; reinstated paths go to the tail
(round-robin: the head).

Assumptions where the sources are silent or the simulator is coarser:

* In-flight counts and bytes are the engine's (``v.out``, ``v.out_bytes``),
  which equal the selector's own start_io/end_io counters (queue-length's
  and service-time's ``end_io`` only undo their ``start_io``, for failed
  I/Os too: the engine ends a failed attempt the same way). HST's EWMA and
  ``last_finish`` learn from failed attempts as well (``multipath_end_io``
  calls ``end_io`` for an errored request, after ``fail_path``, with the
  request's ``io_start_time_ns``): the ``fail`` hook, at the abort or when
  the host notices the lost I/O's path down, with the attempt's start.
* Kernel nanosecond clocks are the simulated time: ``int(seconds * 1e9)``,
  starting at 0 rather than at boot. An I/O's start is
  ``now_ns - int(latency * 1e9)``.
* HST's u64 products wrap as the kernel's do (only a huge
  ``threshold_multiplier`` gets there: a 1 s service time is about 1e12 in
  fixed point); its ``>> HST_FIXED_SHIFT`` guard at 1024 in flight is
  modelled. service-time's bytes in flight are read as the kernel keeps
  them: ``in_flight_size`` is an ``atomic_t`` (32 bits, signed), read into
  the ``size_t`` (u64) ``st_compare_load`` computes in, sign-extended, so
  from 2 GiB in flight on one path it reads as nearly 2^64. With equal
  relative throughputs (every table multipath-tools writes) nothing changes:
  case 1 keeps only the low 32 bits of the difference. With unequal ones
  (the Python class's ``relative_throughput``) the ``ST_MAX_INFLIGHT_SIZE``
  guard then fires and the truncated difference names the loaded path the
  better one, so the kernel keeps choosing it; so does pathsel (issue 51).
* io-affinity's CPUs are NUMA nodes: the issuing workload's ``numa_node``
  stands for its CPU, and a path's cpumask is the CPUs of its adapter's node
  (``[[paths]] numa_node``), so each node maps to the first path of the
  group on it and a later path on the same node is never mapped (the kernel
  ignores an already mapped CPU). The map is per path group (each group has
  its own selector), membership by ALUA state; a path down is a failed one.
  When no mapped path is usable the selector returns no path and the I/O
  waits (dm-mpath would try another group). ``map_misses`` is not kept.
  The kernel refuses a table in which a path maps no new CPU
  (``ioa_add_path``: "io-affinity ps: No new/valid CPU mapping found",
  -EINVAL); pathsel does not, as its node-wide cpumasks would make that
  refusal fire whenever two paths of a group share a node: the later path
  simply gets no I/O.
* service-time's relative throughput (0..100 per path) is a table argument
  multipath-tools never sets, so every path has 1; the Python class takes
  ``relative_throughput`` for experiments.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dm_mpath import SEL_QL, SEL_RR, SEL_ST, class_rank, rank, sync
from .framework.define import compiled, compiled_inline, per_path, table
from .framework.kernel import numa_nodes

__all__ = [
    "fixed_power",
    "fixed_ema",
    "hst_weights",
    "HST_FIXED_1",
    "HST_STATE",
    "select_path",
    "hst_complete",
    "ioa_select",
    "check_relative_throughput",
]

U64 = (1 << 64) - 1  # the kernel's u64 arithmetic wraps; uint64 in compiled code wraps the same way
HST_FIXED_SHIFT = 10
HST_FIXED_1 = 1 << HST_FIXED_SHIFT
HST_FIXED_MAX = np.uint64(((1 << 64) - 1) >> HST_FIXED_SHIFT)
HST_MAX_INFLIGHT = HST_FIXED_1
HST_BUCKET_SHIFT = 24  # buckets of 2**24 ns, about 16.8 ms
HST_WEIGHT_COUNT = 64
ST_MAX_RELATIVE_THROUGHPUT = 100
ST_MAX_RELATIVE_THROUGHPUT_SHIFT = 7
ST_MAX_INFLIGHT_SIZE = np.uint64(((1 << 64) - 1) >> ST_MAX_RELATIVE_THROUGHPUT_SHIFT)  # (size_t)-1 >> 7


def fixed_power(x: int, frac_bits: int, n: int) -> int:
    """x**n in ``frac_bits`` fixed point, rounding as the kernel's ``fixed_power`` does."""
    result = 1 << frac_bits
    if n:
        while True:
            if n & 1:
                result = (result * x + (1 << (frac_bits - 1))) >> frac_bits
            n >>= 1
            if not n:
                break
            x = (x * x + (1 << (frac_bits - 1))) >> frac_bits
    return result


def fixed_ema(last: int, nxt: int, weight: int) -> int:
    """``last * w + next * (1 - w)`` in HST's fixed point, rounded, in u64 (kernel ``fixed_ema``)."""
    last = (last * weight) & U64
    last = (last + ((nxt * (HST_FIXED_1 - weight)) & U64)) & U64
    last = (last + (1 << (HST_FIXED_SHIFT - 1))) & U64
    return last >> HST_FIXED_SHIFT


def hst_weights(base_weight: int) -> list[int]:
    """``weights[i] = base**(i + 1)`` for buckets 0..62, ``weights[63] = 0`` (kernel ``hst_set_weights``)."""
    w = [fixed_power(base_weight, HST_FIXED_SHIFT, i + 1) for i in range(HST_WEIGHT_COUNT - 1)]
    return w + [0]


# -- the selectors, compiled -------------------------------------------------------------------------------
@compiled_inline
def int32(x):
    """A C ``size_t`` or ``unsigned`` difference returned as ``int``: its low 32 bits, signed."""
    x = x & 0xFFFFFFFF
    return x - (1 << 32) if x >= (1 << 31) else x


@compiled_inline
def int32_of_u64(x):
    """A ``size_t`` (uint64) difference returned as ``int``: its low 32 bits, signed."""
    y = np.int64(x & np.uint64(0xFFFFFFFF))
    return y - (1 << 32) if y >= (1 << 31) else y


@compiled_inline
def st_size(x):
    """``size_t sz = atomic_read(&pi->in_flight_size)``: the kernel keeps the bytes in flight in an ``atomic_t`` (32
    bits, signed; ``atomic_add`` wraps), so the engine's count is read as its low 32 bits, sign-extended into 64: from
    2 GiB in flight on a path it reads as nearly 2**64."""
    w = np.uint64(x & 0xFFFFFFFF)
    if w >= np.uint64(1 << 31):
        w = w | np.uint64(0xFFFFFFFF00000000)
    return w


@compiled_inline
def st_compare(v, st, d, k1, k2, incoming):
    """``st_compare_load``: < 0 when path k1 is better, > 0 when k2 is, 0 for no difference (in ``size_t``: u64)."""
    sz1 = st_size(v.out_bytes[v.d_paths[d, k1]])
    sz2 = st_size(v.out_bytes[v.d_paths[d, k2]])
    t1 = st.rt[d, k1]
    t2 = st.rt[d, k2]
    if t1 == t2:  # case 1: less loaded
        return int32_of_u64(sz1 - sz2)
    if sz1 == sz2 or t1 == 0 or t2 == 0:  # cases 2a, 2b: higher throughput
        return int32(t2 - t1)
    sz1 += np.uint64(incoming)
    sz2 += np.uint64(incoming)
    if sz1 >= ST_MAX_INFLIGHT_SIZE or sz2 >= ST_MAX_INFLIGHT_SIZE:
        # "Size may be too big for multiplying pi->relative_throughput and overflow": only a wrapped (sign-extended)
        # count gets here
        sz1 >>= np.uint64(ST_MAX_RELATIVE_THROUGHPUT_SHIFT)
        sz2 >>= np.uint64(ST_MAX_RELATIVE_THROUGHPUT_SHIFT)
    st1 = sz1 * np.uint64(t2)  # case 3: (sz1 + in) / t1 < (sz2 + in) / t2, cross-multiplied
    st2 = sz2 * np.uint64(t1)
    if st1 != st2:
        return int32_of_u64(st1 - st2)
    return int32(t2 - t1)  # case 4: equal service time, higher throughput


@compiled
def hst_compare(v, st, d, k1, k2, now_ns):
    """``hst_compare`` in u64: < 0 when path k1 is better, > 0 when k2 is, 0 for no difference."""
    hst1 = st.hst[d, k1]
    hst2 = st.hst[d, k2]
    out1 = v.out[v.d_paths[d, k1]]
    out2 = v.out[v.d_paths[d, k2]]
    stale1 = st.stale[d, k1]
    stale2 = st.stale[d, k2]
    tm = np.uint64(st.threshold_multiplier)
    now_u = np.uint64(now_ns)
    # too similar estimates: compare in-flight counts (unloaded paths win)
    if hst1 > hst2:
        over = hst1 > tm * hst2
    else:
        over = hst2 > tm * hst1
    if not over:
        return out1 - out2
    # an idle stale path is a probe; of two idle paths, the more stale one
    if (out1 == 0 and stale1 < now_u) or (out2 == 0 and stale2 < now_u) or (out1 == 0 and out2 == 0):
        a = stale1 if out2 == 0 else np.uint64(0)
        b = stale2 if out1 == 0 else np.uint64(0)
        return -1 if a < b else (1 if a > b else 0)  # the sign of a - b, all the caller reads
    if out1 == out2:
        pi2_better = hst1 > hst2
    else:
        if out1 >= HST_MAX_INFLIGHT or out2 >= HST_MAX_INFLIGHT:
            hst1 >>= np.uint64(HST_FIXED_SHIFT)
            hst2 >>= np.uint64(HST_FIXED_SHIFT)
        pi2_better = np.uint64(1 + out1) * hst1 > np.uint64(1 + out2) * hst2
    # a stale winner is limited to equal usage
    if pi2_better:
        return out1 - out2 if stale2 < now_u else 1
    return out1 - out2 if stale1 < now_u else -1


@compiled
def ioa_mapped(v, st, d, g, node):
    """io-affinity's ``path_map`` for the CPUs of ``node``: the first path of group ``g`` (failed or not) whose adapter
    is on that node (a later one's mask overlaps: "CPU mapping ... exists. Ignoring."); -1 for none."""
    for k in range(v.d_np[d]):
        if class_rank(v, st, d, k) == g and v.p_node[v.d_paths[d, k]] == node:
            return k
    return -1


@compiled
def ioa_select(v, st, d, g, slot):
    """``ioa_select_path``: the path mapped to the submitting CPU, else one mapped to a CPU of its node, else the
    first mapped path (CPU order) that has not failed; CPUs are nodes here (the issuing node stands for the CPU)."""
    node = v.s_node[slot]
    k = ioa_mapped(v, st, d, g, node)  # path_map[cpu], then cpumask_of_node(node): the same path here
    if k >= 0 and rank(v, st, d, k) == g:
        return k
    for m in range(numa_nodes(v, d)):  # for_each_cpu(i, s->path_mask), in CPU (= node) order: this host's nodes
        k = ioa_mapped(v, st, d, g, m)
        if k >= 0 and rank(v, st, d, k) == g:
            return k
    return -1


@compiled_inline
def select_path(v, st, d, m, slot):
    """The table's selector over the current group's valid list (``st.tmp2[:m]``, list order): the path it picks."""
    kind = st.selector
    best = -1
    if kind == SEL_RR:  # rr_select_path: the head
        best = st.tmp2[0]
    elif kind == SEL_QL:  # ql_select_path: fewest in flight, the scan stops at an idle path
        for i in range(m):
            k = st.tmp2[i]
            if best < 0 or v.out[v.d_paths[d, k]] < v.out[v.d_paths[d, best]]:
                best = k
            if v.out[v.d_paths[d, best]] == 0:
                break
    elif kind == SEL_ST:  # st_select_path
        incoming = v.s_size[slot]
        for i in range(m):
            k = st.tmp2[i]
            if best < 0 or st_compare(v, st, d, k, best, incoming) < 0:
                best = k
    else:  # hst_select_path
        now_ns = np.int64(v.clock[0] * 1e9)
        for i in range(m):
            k = st.tmp2[i]
            if best < 0 or hst_compare(v, st, d, k, best, now_ns) < 0:
                best = k
    return best


@compiled_inline
def ema(last, nxt, weight):
    """fixed_ema in u64 (the products wrap as the kernel's do)."""
    last = last * weight
    last = last + nxt * (np.uint64(HST_FIXED_1) - weight)
    last = last + np.uint64(1 << (HST_FIXED_SHIFT - 1))
    return last >> np.uint64(HST_FIXED_SHIFT)


@compiled
def hst_complete(v, st, d, k, slot, latency):
    """``hst_end_io``: the serialised service time into the EWMA, then when the path goes stale."""
    sync(v, st, d)  # valid_count counts the paths the checker's loops up to now reinstated
    now_ns = np.int64(v.clock[0] * 1e9)
    start = now_ns - np.int64(latency * 1e9)
    # path_service_time: a request that finished after this one started makes it serial
    if st.lastfin[d, k] > start:
        start = st.lastfin[d, k]
    st.lastfin[d, k] = now_ns
    t = 0 if now_ns < start else now_ns - start
    sample = np.uint64(t) * np.uint64(HST_FIXED_1)
    if sample > HST_FIXED_MAX:
        sample = HST_FIXED_MAX
    st.hst[d, k] = ema(st.hst[d, k], sample, st.weights[min(t >> HST_BUCKET_SHIFT, HST_WEIGHT_COUNT - 1)])
    # valid_count: the usable paths of this path's group (the selector's valid list)
    r = class_rank(v, st, d, k)
    valid = 0
    if r >= 0:
        for j in range(v.d_np[d]):
            if rank(v, st, d, j) == r:
                valid += 1
    st.stale[d, k] = np.uint64(now_ns) + np.uint64(valid) * (st.hst[d, k] >> np.uint64(HST_FIXED_SHIFT))


HST_STATE = (
    per_path("hst", "u8", HST_FIXED_1),
    per_path("stale", "u8", 0),
    per_path("lastfin"),
    table("weights", "u8", HST_WEIGHT_COUNT),
)


def check_relative_throughput(values: Any) -> list[int]:
    """service-time's per-path relative throughput: whole numbers in 0..100."""
    out = [int(t) for t in values]
    if any(not 0 <= t <= ST_MAX_RELATIVE_THROUGHPUT for t in out):
        raise ValueError("relative_throughput values must be in 0..100")
    return out
