"""dm-multipath's path groups and multipathd's part in them, apart from the path selectors (``dm_ps.py``).

The kernel keeps the same cut: ``dm-mpath.c`` holds the priority groups and
chooses one, each group's path selector (``dm-ps-*.c``) chooses a path in it.
Here: which group a path is in (``path_grouping_policy``), the current group
and failback, the valid-list order the selectors read, and the sync with
multipathd's checker (``multipathd.py``). The five policies are put together
in ``dm.py``.

Sources:

* Linux ``drivers/md/dm-mpath.c``
  (https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/md):
  ``choose_pgpath`` ("Don't change PG until it has no remaining paths", then
  the first group in table order with a valid path).
* multipath-tools (userspace, https://github.com/opensvc/multipath-tools):
  ``libmultipath/defaults.h`` (selector ``service-time 0``, failback
  ``manual``), ``detect_pgpolicy`` (default yes since 0.9.6: ALUA paths are
  grouped ``group_by_prio``), the ``alua`` prioritizer (AO 50, ANO 10;
  standby 1, unavailable and transitioning 0 are not usable here),
  ``multipathd/main.c`` ``check_path`` (failback immediate switches groups at
  once; failback N sets ``failback_tick = N + 1``, restarted by every new
  path up, and ``deferred_failback_tick`` switches when it reaches 0).

Every selector moves the chosen path to the tail of its valid list, so ties
go to the least recently selected path; reinstated paths go to the tail
(round-robin: the head).

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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .framework.define import (
    INT32_MAX,
    Event,
    EventData,
    Param,
    compiled,
    compiled_inline,
)
from .framework.kernel import ANO, AO, EV_POLICY, log_event, usable
from .multipathd import (
    MULTIPATHD,
    any_counted,
    any_fast,
    any_held,
    check_up,
    fast,
    held,
    last_loop,
    seen_down,
    seen_up,
)

__all__ = ["GROUPS", "ALUA_PRIO", "EVENTS", "sync", "choose_group", "rank", "class_rank", "move", "rejoin", "wake", "dm_path_change", "py_rank"]

# multipath-tools' alua prioritizer (getprio: default 0)
ALUA_PRIO = {"AO": 50, "ANO": 10, "standby": 1, "unavailable": 0, "transitioning": 0}
PRIO_AO, PRIO_ANO = 50, 10

GROUP_BY_PRIO, MULTIBUS, FAILOVER = 0, 1, 2  # path_grouping_policy's choices, in order
FAILBACK_MANUAL, FAILBACK_IMMEDIATE, FAILBACK_SECONDS, FAILBACK_FOLLOWOVER = 0, 1, 2, 3
SEL_RR, SEL_QL, SEL_ST, SEL_HST, SEL_IOA = 0, 1, 2, 3, 4  # the table's path selector (st.selector)
EV_GROUP_SWITCH = EV_POLICY


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
def dm_path_change(v, st, d, k):
    sync(v, st, d)


# -- Python: the groups as multipath-tools lists them ----------------------------------------------
def py_rank(grouping: int, alua: str, up: bool, k: int, n: int) -> int:
    if not up or alua not in ("AO", "ANO"):
        return -1
    if grouping == MULTIBUS:
        return 0
    tier = 0 if alua == "AO" else 1
    return tier if grouping == GROUP_BY_PRIO else tier * n + k


def switch_event(e: EventData) -> dict:
    return {"prio": e.a, "old_prio": e.b}


EVENTS = (Event("path_group_switch", switch_event),)
