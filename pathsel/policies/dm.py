"""Linux device-mapper multipath: the path selectors and multipath-tools' path groups.

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
* ``dm-mpath.c``: ``choose_pgpath`` ("Don't change PG until it has no
  remaining paths", then the first group in table order with a valid path).

Every selector above moves the chosen path to the tail of its valid list, so
ties go to the least recently selected path; reinstated paths go to the tail
(round-robin: the head).

multipath-tools (userspace, https://github.com/opensvc/multipath-tools):
``libmultipath/defaults.h`` (selector ``service-time 0``, failback
``manual``), ``detect_pgpolicy`` (default yes since 0.9.6: ALUA paths are
grouped ``group_by_prio``), the ``alua`` prioritizer (AO 50, ANO 10; standby
1, unavailable and transitioning 0 are not usable here), ``multipathd/main.c``
``check_path`` (failback immediate switches groups at once; failback N sets
``failback_tick = N + 1``, restarted by every new path up, and
``deferred_failback_tick`` switches when it reaches 0).

Assumptions where the sources are silent or the simulator is coarser:

* Path order within a group (the table order) is the scenario's path order.
* multipathd sees path and ALUA changes when the host does (its
  ``detection``); a path dm failed on an I/O error comes back at the checker's
  next ``polling_interval`` tick (``multipathd.py``: fail_path, san_path_err,
  marginal_path, followover, and their assumptions). A path that changes group (ALUA AO <-> ANO) is treated as failed in its old
  group and reinstated in the new one; the table reload that multipathd
  would do (fresh selector state) is not modelled. With I/O in flight on
  that path (issue 51) pathsel keeps counting it (the engine's counts are
  per path) and an attempt sent before the move that fails after it fails
  the path in its new group until the checker's next tick. Moving the path
  between two selectors by hand instead gives it a fresh ``path_info`` (zero
  in flight) and makes that ``fail_path`` a no-op (the old ``pgpath`` is in
  no group). Neither happens in the kernel: multipathd's move is a table
  reload (``check_path`` -> ``reload_and_sync_map`` on a priority change),
  whose suspend waits for every request in flight (``__dm_suspend`` ->
  ``dm_wait_for_completion``), so no I/O of the old table is in flight when
  the new selectors start counting, and none fails after. pathsel does not
  model that drain (I/O flows through the change), so the I/Os it counts
  are really on the path, and one that fails fails the path as any other.
* The checker's loops are applied lazily (at the next select, path change,
  failed attempt or HST completion) but as they happened: a path dm failed
  leaves its group's list at the failure; the paths one loop reinstates go
  back in path order (multipathd walks its path vector, discovery order:
  here the scenario's), each into the group its ALUA state gave it at that
  loop (the state the last sync saw, kept per path: every ALUA change comes
  with its own sync); HST's ``valid_count`` at a completion counts the paths
  the loops up to then reinstated.
* ``failback=N``: the better group is used once ``N`` seconds have passed
  since it became usable (restarted when another of its paths comes *up*);
  the once-a-second tick granularity is ignored. Checked lazily at select.
* Failover grouping orders groups by priority, then path order.
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

import math
from typing import Any

import numpy as np

from .framework.adapter import policy_class
from .framework.define import (
    INT32_MAX,
    UINT32_MAX,
    Event,
    EventData,
    Param,
    PolicyDef,
    Setup,
    Snapshot,
    compiled,
    compiled_inline,
    per_device,
    per_path,
    scalar,
    scratch,
    table,
)
from .framework.kernel import ALUA_NAMES, ANO, AO, EV_POLICY, log_event, numa_nodes, usable
from .multipathd import (
    MULTIPATHD,
    MULTIPATHD_STATE,
    any_counted,
    any_fast,
    any_held,
    check_up,
    fast,
    held,
    last_loop,
    multipathd_setup,
    pathfail,
    seen_down,
    seen_up,
)

__all__ = [
    "ROUND_ROBIN",
    "QUEUE_LENGTH",
    "SERVICE_TIME",
    "HISTORICAL_SERVICE_TIME",
    "IO_AFFINITY",
    "ALUA_PRIO",
    "fixed_power",
    "fixed_ema",
    "hst_weights",
    "HST_FIXED_1",
    "DmRoundRobin",
    "DmQueueLength",
    "DmServiceTime",
    "DmHistoricalServiceTime",
    "DmIoAffinity",
]

# multipath-tools' alua prioritizer (getprio: default 0)
ALUA_PRIO = {"AO": 50, "ANO": 10, "standby": 1, "unavailable": 0, "transitioning": 0}
PRIO_AO, PRIO_ANO = 50, 10

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

GROUP_BY_PRIO, MULTIBUS, FAILOVER = 0, 1, 2  # path_grouping_policy's choices, in order
FAILBACK_MANUAL, FAILBACK_IMMEDIATE, FAILBACK_SECONDS, FAILBACK_FOLLOWOVER = 0, 1, 2, 3
SEL_RR, SEL_QL, SEL_ST, SEL_HST, SEL_IOA = 0, 1, 2, 3, 4
EV_GROUP_SWITCH = EV_POLICY


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


def _failback(raw: Any) -> str:
    """multipath.conf's failback: immediate, manual, followover, or a number of seconds (kept as its decimal string)."""
    text = str(raw).strip().lower()
    if text in ("immediate", "manual", "followover"):
        return text
    try:
        seconds = int(text) if text.isascii() else 0  # int() reads '\u0663' as 3: ASCII digits only
    except ValueError:
        seconds = 0
    if isinstance(raw, bool) or seconds <= 0 or seconds > INT32_MAX:
        raise ValueError(f"failback must be immediate, manual, followover or a whole number of seconds > 0, got {raw!r}")
    return str(seconds)


# multipath-tools' path groups. With ALUA paths detect_pgpolicy (default yes since 0.9.6) picks
# group_by_prio; failback's built-in default is manual (libmultipath/defaults.h).
GROUPS = (
    Param(
        "path_grouping_policy",
        "group_by_prio",
        str,
        "group_by_prio (AO prio 50, ANO prio 10), multibus (one group) or failover (one path per group)",
        choices=("group_by_prio", "multibus", "failover"),
    ),
    Param(
        "failback",
        "manual",
        str,
        "when to return to a better path group: immediate, manual, followover (only when its first path comes back), or N seconds after it comes back",
        choices=("immediate", "manual", "followover", "<seconds>"),
        parse=_failback,
        shown="manual [immediate, manual, followover, N seconds > 0]",
    ),
    *MULTIPATHD,
)


# -- path groups ------------------------------------------------------------------------------
# st.cur: the current group's rank (-1 none); st.order: every group's valid-list order at once
# (moving a path to the tail of its group's list is moving it to the tail of order, since the
# order of the other paths does not change); seen_rank / seen_up: what the last sync saw;
# deadline: failback=N's time.
@compiled_inline
def class_rank(v, st, d, k):
    """The group of path k by its ALUA state (usable or not); -1 for standby and worse. Lower is better.

    group_by_prio AO 0, ANO 1; failover one group per path, AO ones first, each in path order; multibus 0.
    """
    a = v.alua[v.d_paths[d, k]]
    if a > ANO:
        return -1
    g = st.path_grouping_policy
    if g == MULTIBUS:
        return 0
    tier = 0 if a == AO else 1
    if g == GROUP_BY_PRIO:
        return tier
    return tier * v.d_np[d] + k


@compiled_inline
def rank(v, st, d, k):
    """The group of a usable path, -1 for a path no group can use now (down, or held out by dm / multipathd)."""
    if not usable(v, v.d_paths[d, k]) or held(st, d, k):
        return -1
    return class_rank(v, st, d, k)


@compiled
def move(st, d, n, k, head):
    """Take k out of the valid-list order and put it at the head or the tail."""
    i = 0
    while st.order[d, i] != k:
        i += 1
    if head:
        while i > 0:
            st.order[d, i] = st.order[d, i - 1]
            i -= 1
        st.order[d, 0] = k
    else:
        while i < n - 1:
            st.order[d, i] = st.order[d, i + 1]
            i += 1
        st.order[d, n - 1] = k


@compiled
def active_paths(st, d, n):
    """count_active_paths as the last sync left it: the device's paths in a group."""
    m = 0
    for k in range(n):
        if st.seen_rank[d, k] >= 0:
            m += 1
    return m


@compiled
def rejoin(v, st, d, n, k, r):
    """Path k now in group r (-1: none): one that (re)joins a group goes into its list (round-robin: the head) and
    arms failback=N."""
    if r >= 0 and r != st.seen_rank[d, k]:
        move(st, d, n, k, st.selector == SEL_RR)  # round-robin reinstates at the head
        cur = st.cur[d]
        if cur >= 0 and r < cur and st.failback_s < np.inf:
            # a new path up restarts the countdown; a priority change only starts one
            if st.seen_up[d, k] == 0 or st.deadline[d] == np.inf:
                st.deadline[d] = v.clock[0] + st.failback_s
    st.seen_rank[d, k] = r


@compiled_inline
def class_then(v, st, d, k, loop):
    """Path k's group by ALUA state at a past checker loop (the state the last sync saw: any ALUA change since came
    with its own sync, after the loop), or now."""
    return st.seen_cls[d, k] if loop else class_rank(v, st, d, k)


@compiled
def followover(v, st, d, n, k, loop):
    """do_followover_should_failback: path k is the first of its group to come back when every other path of the
    group is down for the checker (chkrstate DOWN; a path dm failed on an I/O error is still up for it)."""
    r = class_then(v, st, d, k, loop)
    if r < 0:
        return
    for j in range(n):
        if j != k and class_then(v, st, d, j, loop) == r and st.chk_dn[d, j] == 0:
            return
    st.fo_group[d] = r


@compiled
def check(v, st, d, n, k, t, loop):
    """check_path / update_path_state for a path the checker finds up at t (``loop``: at a past checker loop): reinstated
    unless held; CHECK_PATH_NEW_UP (followover) only when the checker's previous verdict was down (oldchkrstate), which a
    skipped check keeps."""
    was_down = st.chk_dn[d, k] == 1
    back = check_up(st, d, k, t, active_paths(st, d, n))
    if not held(st, d, k):
        st.chk_dn[d, k] = 0
    if back and was_down and st.failback_mode == FAILBACK_FOLLOWOVER:
        followover(v, st, d, n, k, loop)


@compiled
def checker(v, st, d, n):
    """multipathd's checker loops since the last call, in time order, each path's group move at its own loop (on the
    paths as the host saw them then); then what the host saw change since (a path seen down is a path failure, one
    seen up is checked at once). A polling_interval check every ``every`` loops; a path marginal_path holds at every
    loop."""
    now = v.clock[0]
    last = last_loop(st, now)
    if st.tick[d] < last and (st.san_rec > 0 or st.m_st > 0 or any_held(st, d, n)):
        while st.tick[d] < last and (any_held(st, d, n) or any_counted(st, d, n)):  # else the loops change nothing
            nxt = st.tick[d] + 1
            if not any_fast(st, d, n):  # skip to the next polling_interval check
                nxt = (st.tick[d] // st.every + 1) * st.every
                if nxt > last:
                    break
            st.tick[d] = nxt
            full = nxt % st.every == 0
            t = nxt * st.step
            for k in range(n):
                # a path failed after this loop waits for the next one
                if st.seen_up[d, k] == 1 and st.failed[d, k] < t and (held(st, d, k) or st.san_n[d, k] > 0) and (full or fast(st, d, k)):
                    check(v, st, d, n, k, t, True)
                    rejoin(v, st, d, n, k, -1 if held(st, d, k) else st.seen_cls[d, k])
    st.tick[d] = last
    for k in range(n):
        up = v.up[v.d_paths[d, k]]
        if up != st.seen_up[d, k]:
            if up == 0:
                seen_down(st, d, k, now)
            else:
                seen_up(st, d, k, now)
                check(v, st, d, n, k, now, False)


@compiled
def sync(v, st, d):
    """multipathd's checker, then the host's path changes in path order: paths that (re)joined a group, failback."""
    n = v.d_np[d]
    checker(v, st, d, n)
    for k in range(n):
        rejoin(v, st, d, n, k, rank(v, st, d, k))
        st.seen_up[d, k] = v.up[v.d_paths[d, k]]
        st.seen_cls[d, k] = class_rank(v, st, d, k)


@compiled
def group_prio(v, st, d, r):
    """multipath-tools' group priority: the mean alua prio of its usable paths (integer division), 0 for none."""
    total = 0
    m = 0
    for k in range(v.d_np[d]):
        if rank(v, st, d, k) == r:
            total += PRIO_AO if v.alua[v.d_paths[d, k]] == AO else PRIO_ANO
            m += 1
    return total // m if m > 0 else 0


@compiled
def choose_group(v, st, d):
    """dm-mpath ``choose_pgpath`` plus multipathd's failback; -1 when no path is usable."""
    n = v.d_np[d]
    best = -1
    for k in range(n):
        r = rank(v, st, d, k)
        if r >= 0 and (best < 0 or r < best):
            best = r
    if best < 0:
        st.cur[d] = -1
        st.deadline[d] = np.inf
        return -1
    old = st.cur[d]
    cur = old
    present = False
    if cur >= 0:
        for k in range(n):
            if rank(v, st, d, k) == cur:
                present = True
                break
    if cur < 0 or not present:
        cur = best  # the current group has no path left: the first group that has one
    elif cur != best:
        if st.failback_mode == FAILBACK_IMMEDIATE or (st.failback_mode == FAILBACK_FOLLOWOVER and st.fo_group[d] == best):
            cur = best
        elif st.failback_s < np.inf:
            if st.deadline[d] == np.inf:
                st.deadline[d] = v.clock[0] + st.failback_s
            elif v.clock[0] >= st.deadline[d]:
                cur = best
    if cur == best:
        st.deadline[d] = np.inf
    st.fo_group[d] = -1
    if cur != old and old >= 0:
        log_event(v, d, EV_GROUP_SWITCH, -1, group_prio(v, st, d, cur), group_prio(v, st, d, old))
    st.cur[d] = cur
    return cur


# -- the selectors -------------------------------------------------------------------------------
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


@compiled
def wake(v, st, d):
    """When to ask again with no path: multipathd's next check if it holds a path whose wire is seen up, else never."""
    for k in range(v.d_np[d]):
        if st.seen_up[d, k] == 1 and held(st, d, k):
            if any_fast(st, d, v.d_np[d]):
                return (st.tick[d] + 1) * st.step  # > now: sync left tick at the last loop <= now
            return (st.tick[d] // st.every + 1) * st.every * st.step
    return np.inf


@compiled
def dm_select(v, st, d, slot):
    sync(v, st, d)
    g = choose_group(v, st, d)
    if g < 0:
        v.d_wake[d] = wake(v, st, d)
        return -1
    if st.selector == SEL_IOA:  # no list: the map by CPU
        k = ioa_select(v, st, d, g, slot)
        if k < 0:
            v.d_wake[d] = wake(v, st, d)
        return k
    n = v.d_np[d]
    m = 0
    for i in range(n):  # the current group's members in list order
        k = st.order[d, i]
        if rank(v, st, d, k) == g:
            st.tmp2[m] = k
            m += 1
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
    move(st, d, n, best, False)  # list_move_tail: ties go to the least recently selected
    return best


@compiled
def dm_path_change(v, st, d, k):
    sync(v, st, d)


@compiled
def dm_fail(v, st, d, k, slot, elapsed):
    """``multipath_end_io`` for an attempt that failed (aborted at io_timeout, or lost): ``fail_path`` (the path
    leaves every group until multipathd's checker reinstates it), then the selector's ``end_io``."""
    sync(v, st, d)  # the checker's ticks up to now first (a path reinstated at a tick can fail again)
    if v.up[v.d_paths[d, k]] == 1:  # a path the host already sees down is failed already
        pathfail(st, d, k, v.clock[0])
        # it leaves its group now (fail_path), so a checker loop that reinstates it before the next sync moves it
        rejoin(v, st, d, v.d_np[d], k, -1)
    if st.selector == SEL_HST:
        hst_complete(v, st, d, k, slot, elapsed)


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


# -- Python: setup, config string, events ------------------------------------------------------------
def _py_rank(grouping: int, alua: str, up: bool, k: int, n: int) -> int:
    if not up or alua not in ("AO", "ANO"):
        return -1
    if grouping == MULTIBUS:
        return 0
    tier = 0 if alua == "AO" else 1
    return tier if grouping == GROUP_BY_PRIO else tier * n + k


def _setup(selector: int):
    def setup(s: Setup) -> None:
        fb = s.params.get("failback", "manual")
        modes = {"manual": FAILBACK_MANUAL, "immediate": FAILBACK_IMMEDIATE, "followover": FAILBACK_FOLLOWOVER}
        s.state.set_scalar("failback_mode", modes.get(fb, FAILBACK_SECONDS))
        multipathd_setup(s.params, s.state)
        s.state.set_scalar("failback_s", float(int(fb)) if str(fb).isdigit() else math.inf)
        s.state.set_scalar("selector", selector)
        grouping = s.state.path_grouping_policy
        rt = s.params.get("relative_throughput")
        for d, dev in enumerate(s.devices):
            n = len(dev.paths)
            s.state.order[d, :] = np.arange(s.state.order.shape[1])
            for k in range(n):  # at the start every path is up
                s.state.seen_rank[d, k] = _py_rank(grouping, dev.alua[k], True, k, n)
                s.state.seen_cls[d, k] = s.state.seen_rank[d, k]
            if rt is not None:
                if len(rt) != n:
                    raise ValueError(f"relative_throughput has {len(rt)} values for {n} paths")
                s.state.rt[d, :n] = [int(t) for t in rt]
        if selector == SEL_HST:
            s.state.weights[:] = np.array(hst_weights(s.params.get("base_weight", 972)), dtype=np.uint64)

    return setup


def _config(selector: str):
    def config(s: Snapshot) -> str:
        p = s.params
        grouping = p["path_grouping_policy"]
        g = ("group_by_prio", "multibus", "failover").index(grouping)
        n = len(s.paths)
        alua = [ALUA_NAMES[int(s.view.alua[x])] for x in s.paths]
        ranks = [_py_rank(g, alua[k], bool(s.view.up[x]), k, n) for k, x in enumerate(s.paths)]
        groups = sorted({r for r in ranks if r >= 0})
        current = int(s.state.cur[s.d])
        cur = current if current in groups else (groups[0] if groups else -1)
        status = "active" if cur == current and cur >= 0 else "enabled"
        prios = [ALUA_PRIO[alua[k]] for k in range(n) if ranks[k] == cur]
        prio = sum(prios) // len(prios) if prios else 0
        args = "0"
        if selector == "historical-service-time" and (p["base_weight"] != 972 or p["threshold_multiplier"] != 0):
            args = f"2 {p['base_weight']} {p['threshold_multiplier']}"
        return (
            f"policy='{selector} {args}' prio={prio} status={status} "
            f"[{len(groups)} group{'s' if len(groups) != 1 else ''}, {grouping}, failback={p['failback']}]"
        )

    return config


def _switch(e: EventData) -> dict:
    return {"prio": e.a, "old_prio": e.b}


# One record for all four selectors (dm_select switches on ``selector``; the HST columns are
# used by historical-service-time only).
_HST_STATE = (
    per_path("hst", "u8", HST_FIXED_1),
    per_path("stale", "u8", 0),
    per_path("lastfin"),
    table("weights", "u8", HST_WEIGHT_COUNT),
)
_STATE = (
    (
        per_device("cur", init=-1),
        per_path("order"),
        per_path("seen_rank", init=-1),
        per_path("seen_up", init=1),
        per_path("seen_cls", init=-1),  # each path's group by ALUA state at the last sync (for the checker's loops)
        per_device("deadline", "f8", math.inf),
        per_device("fo_group", init=-1),  # followover: the group whose first path came back
        per_path("rt", init=1),
        scalar("failback_mode"),
        scalar("failback_s", "f8", math.inf),
        scalar("selector"),
        scratch("tmp2"),
    )
    + MULTIPATHD_STATE
    + _HST_STATE
)
_SELECTOR_STATE = _STATE + (scalar("threshold_multiplier"),)  # read by the HST branch only


def check_relative_throughput(values: Any) -> list[int]:
    """service-time's per-path relative throughput: whole numbers in 0..100."""
    out = [int(t) for t in values]
    if any(not 0 <= t <= ST_MAX_RELATIVE_THROUGHPUT for t in out):
        raise ValueError("relative_throughput values must be in 0..100")
    return out


_EVENTS = (Event("path_group_switch", _switch),)
_SOURCE = "Linux drivers/md/dm-ps-{}.c ({}); multipath-tools"

ROUND_ROBIN = PolicyDef(
    "dm:round-robin",
    "dm-multipath round-robin: one I/O per path in turn within the current path group",
    "Linux dm-multipath `round-robin 0`; `drivers/md/dm-ps-round-robin.c` (`rr_select_path`, `rr_reinstate_path`); multipath-tools",
    select=dm_select,
    path_change=dm_path_change,
    fail=dm_fail,
    params=GROUPS,
    aliases=("dm:rr",),
    state=_SELECTOR_STATE,
    setup=_setup(SEL_RR),
    config_string=_config("round-robin"),
    events=_EVENTS,
    class_name="DmRoundRobin",
    counts="nothing: the list order",
    notes="One I/O per path in turn over the current path group (`repeat_count` is forced to 1). A reinstated path goes to the *head* of the list, so it is next. Groups and failback: see [Linux dm-multipath](#linux-dm-multipath).",
)
DmRoundRobin = policy_class(ROUND_ROBIN, "DmRoundRobin", module=__name__)
QUEUE_LENGTH = PolicyDef(
    "dm:queue-length",
    "dm-multipath queue-length: fewest I/Os in flight; the scan stops at an idle path",
    "`queue-length 0`; `dm-ps-queue-length.c` (`ql_select_path`)",
    select=dm_select,
    path_change=dm_path_change,
    fail=dm_fail,
    params=GROUPS,
    aliases=("dm:ql",),
    state=_SELECTOR_STATE,
    setup=_setup(SEL_QL),
    config_string=_config("queue-length"),
    events=_EVENTS,
    class_name="DmQueueLength",
    counts="this device's I/Os in flight per path",
    notes="The first path with the fewest in flight (strict `<`) in list order; the scan stops at a path with 0. The chosen path moves to the tail of the list, so ties go to the least recently selected path.",
)
DmQueueLength = policy_class(QUEUE_LENGTH, "DmQueueLength", module=__name__)
SERVICE_TIME = PolicyDef(
    "dm:service-time",
    "dm-multipath service-time (multipath-tools' default): fewest bytes in flight per relative throughput",
    "`service-time 0` (multipath-tools' default selector); `dm-ps-service-time.c` (`st_compare_load`, `st_select_path`)",
    select=dm_select,
    path_change=dm_path_change,
    fail=dm_fail,
    params=GROUPS,
    aliases=("dm:st",),
    state=_SELECTOR_STATE,
    setup=_setup(SEL_ST),
    config_string=_config("service-time"),
    events=_EVENTS,
    class_name="DmServiceTime",
    options=(("relative_throughput", check_relative_throughput),),
    counts="this device's bytes in flight per path, and the incoming I/O's size",
    notes="(bytes in flight + this I/O) / relative throughput, compared cross-multiplied exactly as the kernel does: equal throughput compares bytes only; equal bytes or a throughput of 0 prefers the higher throughput; equal service time the higher throughput. multipath-tools never sets relative throughput, so every path has 1 (a Python argument sets it). The kernel returns the difference as an `int`: 2 GiB more in flight reads as negative. The bytes in flight are the kernel's 32-bit `atomic_t`, read sign-extended: with unequal relative throughputs, 2 GiB or more in flight on a path makes its overflow guard fire and the kernel keeps choosing that path, as pathsel does. Ties: least recently selected.",
)
DmServiceTime = policy_class(SERVICE_TIME, "DmServiceTime", module=__name__)
HISTORICAL_SERVICE_TIME = PolicyDef(
    "dm:historical-service-time",
    "dm-multipath historical-service-time (5.8+): EWMA of serialised service time x (1 + in flight), stale-path probes",
    "`historical-service-time 0` (kernel 5.8+); `dm-ps-historical-service-time.c` (`hst_select_path`, `hst_compare`, `hst_end_io`, `path_service_time`, `fixed_power`, `fixed_ema`)",
    select=dm_select,
    complete=hst_complete,
    path_change=dm_path_change,
    fail=dm_fail,
    params=(
        Param("base_weight", 972, int, "EWMA weight per ~16.8 ms bucket, 10-bit fixed point (972/1024 = 0.95)", 0, 1023),
        Param(
            "threshold_multiplier",
            0,
            int,
            "paths whose estimates differ by less than this factor compare by in-flight count (0, 1: off)",
            0,
            UINT32_MAX,
        ),
        *GROUPS,
    ),
    aliases=("dm:hst",),
    state=_STATE,
    setup=_setup(SEL_HST),
    config_string=_config("historical-service-time"),
    events=_EVENTS,
    class_name="DmHistoricalServiceTime",
    counts="per path: an EWMA of the serialised service time (10-bit fixed point), in flight, the last finish and a staleness deadline",
    notes="Sample = now − max(start, last finish). Weight `base_weight^(bucket+1)` in the kernel's fixed point (972, 923, 876, 832, …) with bucket = service time >> 24 ns (~16.8 ms), and 0 from bucket 63 (≥ 1.057 s) on, so such a sample replaces the history. Estimate (1 + in flight) × EWMA. A path that has not finished anything for (valid paths × EWMA) is stale: idle, it gets a probe; busy and winning, it only gets equal usage. Quirks: with `threshold_multiplier` 0, equal estimates and equal in-flight counts go to the *later* path in the list; failed attempts teach it too, as the kernel's `multipath_end_io` calls `hst_end_io` for an errored request (the sample runs from the attempt's start to its abort at `io_timeout`, or to when the host notices its path down).",
)
DmHistoricalServiceTime = policy_class(HISTORICAL_SERVICE_TIME, "DmHistoricalServiceTime", module=__name__)
IO_AFFINITY = PolicyDef(
    "dm:io-affinity",
    "dm-multipath io-affinity (5.11+): the path mapped to the submitting CPU, else one on its NUMA node, else any",
    "`io-affinity 0` (kernel 5.11+); `dm-ps-io-affinity.c` (`ioa_add_path`, `ioa_select_path`); multipath-tools",
    select=dm_select,
    path_change=dm_path_change,
    fail=dm_fail,
    params=GROUPS,
    aliases=("dm:ioa",),
    state=_SELECTOR_STATE,
    setup=_setup(SEL_IOA),
    config_string=_config("io-affinity"),
    events=_EVENTS,
    class_name="DmIoAffinity",
    counts="nothing: a fixed map from CPUs to paths",
    notes="Coarse CPUs: the issuing workload's `numa_node` stands for its CPUs and each path's cpumask is the CPUs of its adapter's node (`[[paths]] numa_node`), so the first path (path order) of the current group on each node is that node's path and a later one on the same node is never mapped (the kernel ignores a CPU already mapped). An I/O takes its node's path while it has not failed, else the first node's (in node order) that has not; none: no path (the I/O waits). Without NUMA keys: the first path of the group, then nothing while it is down.",
)
DmIoAffinity = policy_class(IO_AFFINITY, "DmIoAffinity", module=__name__)
