"""Linux device-mapper multipath: the five policies, dm-mpath's path groups around one path selector each.

The kernel keeps the path groups (``drivers/md/dm-mpath.c``) apart from the
path selectors (``drivers/md/dm-ps-*.c``), and so does pathsel:
``dm_mpath.py`` holds the groups, failback and multipathd's part in them
(with ``multipathd.py``: fail_path, san_path_err, marginal_path),
``dm_ps.py`` the selectors: round-robin, queue-length, service-time,
historical-service-time and io-affinity. This module puts them together:
the compiled hooks a policy runs (``multipath_map_bio``'s choice of group
then path, ``multipath_end_io`` for a failed attempt), the record, the setup
and config string, and one ``PolicyDef`` per selector.

Sources: Linux ``drivers/md/dm-mpath.c`` and ``dm-ps-*.c``
(https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/md)
and multipath-tools (https://github.com/opensvc/multipath-tools), each cited
beside the code it describes in ``dm_mpath.py``, ``dm_ps.py`` and
``multipathd.py``.

Assumptions where the sources are silent or the simulator is coarser: the
groups' in ``dm_mpath.py``, the selectors' in ``dm_ps.py``, the checker's in
``multipathd.py``. Here only: one record serves all five selectors
(``dm_select`` switches on ``selector``), and multipath.conf's values
(``path_grouping_policy``, ``failback``, multipathd's keys) are the same
parameters for each.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .dm_mpath import (
    ALUA_PRIO,
    EVENTS,
    FAILBACK_FOLLOWOVER,
    FAILBACK_IMMEDIATE,
    FAILBACK_MANUAL,
    FAILBACK_SECONDS,
    GROUPS,
    SEL_HST,
    SEL_IOA,
    SEL_QL,
    SEL_RR,
    SEL_ST,
    choose_group,
    dm_path_change,
    move,
    py_rank,
    rank,
    rejoin,
    sync,
    wake,
)
from .dm_ps import HST_STATE, check_relative_throughput, hst_complete, hst_weights, ioa_select, select_path
from .framework.adapter import policy_class
from .framework.define import (
    UINT32_MAX,
    Param,
    PolicyDef,
    Setup,
    Snapshot,
    compiled,
    per_device,
    per_path,
    scalar,
    scratch,
)
from .framework.kernel import ALUA_NAMES
from .multipathd import MULTIPATHD_STATE, multipathd_setup, pathfail

__all__ = [
    "ROUND_ROBIN",
    "QUEUE_LENGTH",
    "SERVICE_TIME",
    "HISTORICAL_SERVICE_TIME",
    "IO_AFFINITY",
    "DmRoundRobin",
    "DmQueueLength",
    "DmServiceTime",
    "DmHistoricalServiceTime",
    "DmIoAffinity",
]


@compiled
def dm_select(v, st, d, slot):
    """``multipath_map_bio``: the group ``choose_pgpath`` keeps or picks (dm_mpath.py), then the path its selector
    picks from the group's valid list (dm_ps.py); -1, with a time to ask again, when no path is usable."""
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
    best = select_path(v, st, d, m, slot)
    move(st, d, n, best, False)  # list_move_tail: ties go to the least recently selected
    return best


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
                s.state.seen_rank[d, k] = py_rank(grouping, dev.alua[k], True, k, n)
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
        ranks = [py_rank(g, alua[k], bool(s.view.up[x]), k, n) for k, x in enumerate(s.paths)]
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


# One record for all four selectors (dm_select switches on ``selector``; the HST columns are
# used by historical-service-time only).
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
    + HST_STATE
)
_SELECTOR_STATE = _STATE + (scalar("threshold_multiplier"),)  # read by the HST branch only


def _dm(name: str, selector: int, table_name: str, *, params: tuple[Param, ...] = GROUPS, state: Any = _SELECTOR_STATE, **rest: Any) -> PolicyDef:
    """One dm-multipath policy: the hooks, groups and events every selector shares; ``table_name`` is the selector's
    name in the table (the config string)."""
    return PolicyDef(
        name,
        select=dm_select,
        path_change=dm_path_change,
        fail=dm_fail,
        params=params,
        state=state,
        setup=_setup(selector),
        config_string=_config(table_name),
        events=EVENTS,
        **rest,
    )


ROUND_ROBIN = _dm(
    "dm:round-robin",
    SEL_RR,
    "round-robin",
    summary="dm-multipath round-robin: one I/O per path in turn within the current path group",
    source="Linux dm-multipath `round-robin 0`; `drivers/md/dm-ps-round-robin.c` (`rr_select_path`, `rr_reinstate_path`); multipath-tools",
    aliases=("dm:rr",),
    class_name="DmRoundRobin",
    counts="nothing: the list order",
    notes="One I/O per path in turn over the current path group (`repeat_count` is forced to 1). A reinstated path goes to the *head* of the list, so it is next. Groups and failback: see [Linux dm-multipath](#linux-dm-multipath).",
)
DmRoundRobin = policy_class(ROUND_ROBIN, "DmRoundRobin", module=__name__)
QUEUE_LENGTH = _dm(
    "dm:queue-length",
    SEL_QL,
    "queue-length",
    summary="dm-multipath queue-length: fewest I/Os in flight; the scan stops at an idle path",
    source="`queue-length 0`; `dm-ps-queue-length.c` (`ql_select_path`)",
    aliases=("dm:ql",),
    class_name="DmQueueLength",
    counts="this device's I/Os in flight per path",
    notes="The first path with the fewest in flight (strict `<`) in list order; the scan stops at a path with 0. The chosen path moves to the tail of the list, so ties go to the least recently selected path.",
)
DmQueueLength = policy_class(QUEUE_LENGTH, "DmQueueLength", module=__name__)
SERVICE_TIME = _dm(
    "dm:service-time",
    SEL_ST,
    "service-time",
    summary="dm-multipath service-time (multipath-tools' default): fewest bytes in flight per relative throughput",
    source="`service-time 0` (multipath-tools' default selector); `dm-ps-service-time.c` (`st_compare_load`, `st_select_path`)",
    aliases=("dm:st",),
    class_name="DmServiceTime",
    options=(("relative_throughput", check_relative_throughput),),
    counts="this device's bytes in flight per path, and the incoming I/O's size",
    notes="(bytes in flight + this I/O) / relative throughput, compared cross-multiplied exactly as the kernel does: equal throughput compares bytes only; equal bytes or a throughput of 0 prefers the higher throughput; equal service time the higher throughput. multipath-tools never sets relative throughput, so every path has 1 (a Python argument sets it). The kernel returns the difference as an `int`: 2 GiB more in flight reads as negative. The bytes in flight are the kernel's 32-bit `atomic_t`, read sign-extended: with unequal relative throughputs, 2 GiB or more in flight on a path makes its overflow guard fire and the kernel keeps choosing that path, as pathsel does. Ties: least recently selected.",
)
DmServiceTime = policy_class(SERVICE_TIME, "DmServiceTime", module=__name__)
HISTORICAL_SERVICE_TIME = _dm(
    "dm:historical-service-time",
    SEL_HST,
    "historical-service-time",
    summary="dm-multipath historical-service-time (5.8+): EWMA of serialised service time x (1 + in flight), stale-path probes",
    source="`historical-service-time 0` (kernel 5.8+); `dm-ps-historical-service-time.c` (`hst_select_path`, `hst_compare`, `hst_end_io`, `path_service_time`, `fixed_power`, `fixed_ema`)",
    complete=hst_complete,
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
    class_name="DmHistoricalServiceTime",
    counts="per path: an EWMA of the serialised service time (10-bit fixed point), in flight, the last finish and a staleness deadline",
    notes="Sample = now − max(start, last finish). Weight `base_weight^(bucket+1)` in the kernel's fixed point (972, 923, 876, 832, …) with bucket = service time >> 24 ns (~16.8 ms), and 0 from bucket 63 (≥ 1.057 s) on, so such a sample replaces the history. Estimate (1 + in flight) × EWMA. A path that has not finished anything for (valid paths × EWMA) is stale: idle, it gets a probe; busy and winning, it only gets equal usage. Quirks: with `threshold_multiplier` 0, equal estimates and equal in-flight counts go to the *later* path in the list; failed attempts teach it too, as the kernel's `multipath_end_io` calls `hst_end_io` for an errored request (the sample runs from the attempt's start to its abort at `io_timeout`, or to when the host notices its path down).",
)
DmHistoricalServiceTime = policy_class(HISTORICAL_SERVICE_TIME, "DmHistoricalServiceTime", module=__name__)
IO_AFFINITY = _dm(
    "dm:io-affinity",
    SEL_IOA,
    "io-affinity",
    summary="dm-multipath io-affinity (5.11+): the path mapped to the submitting CPU, else one on its NUMA node, else any",
    source="`io-affinity 0` (kernel 5.11+); `dm-ps-io-affinity.c` (`ioa_add_path`, `ioa_select_path`); multipath-tools",
    aliases=("dm:ioa",),
    class_name="DmIoAffinity",
    counts="nothing: a fixed map from CPUs to paths",
    notes="Coarse CPUs: the issuing workload's `numa_node` stands for its CPUs and each path's cpumask is the CPUs of its adapter's node (`[[paths]] numa_node`), so the first path (path order) of the current group on each node is that node's path and a later one on the same node is never mapped (the kernel ignores a CPU already mapped). An I/O takes its node's path while it has not failed, else the first node's (in node order) that has not; none: no path (the I/O waits). Without NUMA keys: the first path of the group, then nothing while it is down.",
)
DmIoAffinity = policy_class(IO_AFFINITY, "DmIoAffinity", module=__name__)
