"""A small model of the Linux selectors, written from the kernel source, to hold pathsel's compiled policies against.

Each function follows one kernel function statement by statement and names it. Sources:

* NVMe: ``drivers/nvme/host/multipath.c`` of Linux 6.11 and later (with queue-depth), read in gregkh/linux at
  commit 64184804a74e:
  https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/nvme/host/multipath.c
* dm: ``drivers/md/dm-ps-queue-length.c`` (``ql_select_path``, ``ql_fail_path``, ``ql_reinstate_path``):
  https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/md/dm-ps-queue-length.c

The host's state is what the kernel keeps: per path (``struct nvme_ns``) its controller's state (LIVE or not: pathsel's
"up" as the host sees it), its ANA state, its controller (``nr_active`` is per controller); per namespace head
``current_path[node]``. Nothing here imports pathsel: it is the other side of the comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INT_MAX = 2147483647
UINT_MAX = 4294967295
LOCAL_DISTANCE = 10  # include/linux/topology.h
OPTIMIZED, NONOPTIMIZED = "AO", "ANO"  # NVME_ANA_OPTIMIZED, NVME_ANA_NONOPTIMIZED; any other state serves no I/O


@dataclass
class NvmeHead:
    """``struct nvme_ns_head`` with its paths (``head->list``, in path order) and the host's view of each."""

    ana: list[str]
    ctrl: list[int]  # each path's controller
    ctrl_node: list[int]  # ctrl->numa_node
    distance: list[list[int]]  # node_distance(a, b), the SLIT
    iopolicy: str = "numa"  # numa | round-robin | queue-depth
    live: list[bool] = field(default_factory=list)  # nvme_ctrl_state(ns->ctrl) == NVME_CTRL_LIVE
    nr_active: dict[int, int] = field(default_factory=dict)  # ctrl->nr_active
    current_path: list[int | None] = field(default_factory=list)  # head->current_path[node]
    connect: bool = True  # start as a host whose paths have gone live (set_live), not from an empty current_path

    def __post_init__(self) -> None:
        if not self.live:
            self.live = [True] * len(self.ana)
        if not self.current_path:
            self.current_path = [None] * len(self.distance)
        for c in self.ctrl:
            self.nr_active.setdefault(c, 0)
        if self.connect:
            # the host as a run starts: each path has gone live in turn (its controller LIVE, its ANA log read):
            # nvme_update_ns_ana_state -> nvme_mpath_set_live, which finds every node's current path again for an
            # optimized path. So current_path is set before the first I/O (round-robin's first I/O goes to the next).
            for ns in range(len(self.ana)):
                self.update_ana_state(ns, self.ana[ns])

    # -- multipath.c: nvme_path_is_disabled --------------------------------------------------------
    def path_is_disabled(self, ns: int) -> bool:
        """``nvme_path_is_disabled``: ``if (state != NVME_CTRL_LIVE && state != NVME_CTRL_DELETING) return true;``
        (NVME_NS_ANA_PENDING and NVME_NS_READY are not modelled: never set in a pathsel run). The ANA state is NOT
        checked here: the callers switch on ``ns->ana_state``."""
        return not self.live[ns]

    def path_is_optimized(self, ns: int) -> bool:
        """``nvme_path_is_optimized``: ``nvme_ctrl_state(ns->ctrl) == NVME_CTRL_LIVE && ns->ana_state == NVME_ANA_OPTIMIZED``."""
        return self.live[ns] and self.ana[ns] == OPTIMIZED

    # -- multipath.c: __nvme_find_path -------------------------------------------------------------
    def find_path(self, node: int) -> int | None:
        """``__nvme_find_path(head, node)``: ``list_for_each_entry_rcu(ns, &head->list, siblings)``; skip disabled
        paths; ``distance = node_distance(node, ns->ctrl->numa_node)`` under NVME_IOPOLICY_NUMA else
        ``LOCAL_DISTANCE``; ``case NVME_ANA_OPTIMIZED: if (distance < found_distance)`` take it; ``case
        NVME_ANA_NONOPTIMIZED: if (distance < fallback_distance)`` keep it as the fallback; ``if (!found) found =
        fallback; if (found) rcu_assign_pointer(head->current_path[node], found);``."""
        found = fallback = None
        found_distance = fallback_distance = INT_MAX
        for ns in range(len(self.ana)):
            if self.path_is_disabled(ns):
                continue
            if self.iopolicy == "numa":
                distance = self.distance[node][self.ctrl_node[ns]]
            else:
                distance = LOCAL_DISTANCE
            if self.ana[ns] == OPTIMIZED:
                if distance < found_distance:
                    found_distance, found = distance, ns
            elif self.ana[ns] == NONOPTIMIZED:
                if distance < fallback_distance:
                    fallback_distance, fallback = distance, ns
        if found is None:
            found = fallback
        if found is not None:
            self.current_path[node] = found
        return found

    def next_ns(self, ns: int) -> int:
        """``nvme_next_ns``: ``list_next_or_null_rcu``, else ``list_first_or_null_rcu`` (wraps to the first path)."""
        return (ns + 1) % len(self.ana)

    # -- multipath.c: nvme_round_robin_path ----------------------------------------------------------
    def round_robin_path(self, node: int) -> int | None:
        """``nvme_round_robin_path``: ``old = current_path[numa_node_id()]``; ``if (unlikely(!old)) return
        __nvme_find_path(head, node);`` ``if (list_is_singular(&head->list))`` return old unless disabled; ``for (ns =
        nvme_next_ns(head, old); ns && ns != old; ns = nvme_next_ns(head, ns))``: skip disabled, an OPTIMIZED one
        is taken at once (``goto out``), a NONOPTIMIZED one becomes ``found`` (the last one met); then ``if
        (!nvme_path_is_disabled(old) && (old->ana_state == NVME_ANA_OPTIMIZED || (!found && old->ana_state ==
        NVME_ANA_NONOPTIMIZED))) return old;`` ``if (!found) return NULL;`` ``out: rcu_assign_pointer(
        head->current_path[node], found);``."""
        old = self.current_path[node]
        if old is None:
            return self.find_path(node)
        if len(self.ana) == 1:
            return None if self.path_is_disabled(old) else old
        found = None
        ns = self.next_ns(old)
        while ns != old:
            if not self.path_is_disabled(ns):
                if self.ana[ns] == OPTIMIZED:
                    self.current_path[node] = ns
                    return ns
                if self.ana[ns] == NONOPTIMIZED:
                    found = ns
            ns = self.next_ns(ns)
        if not self.path_is_disabled(old) and (self.ana[old] == OPTIMIZED or (found is None and self.ana[old] == NONOPTIMIZED)):
            return old
        if found is None:
            return None
        self.current_path[node] = found
        return found

    # -- multipath.c: nvme_queue_depth_path ----------------------------------------------------------
    def queue_depth_path(self) -> int | None:
        """``nvme_queue_depth_path``: skip disabled paths; ``depth = atomic_read(&ns->ctrl->nr_active)``; the first
        OPTIMIZED path at the least depth (``depth < min_depth_opt``), likewise NONOPTIMIZED; ``if (min_depth_opt ==
        0) return best_opt;`` inside the loop; ``return best_opt ? best_opt : best_nonopt;``."""
        best_opt = best_nonopt = None
        min_opt = min_nonopt = UINT_MAX
        for ns in range(len(self.ana)):
            if self.path_is_disabled(ns):
                continue
            depth = self.nr_active[self.ctrl[ns]]
            if self.ana[ns] == OPTIMIZED:
                if depth < min_opt:
                    min_opt, best_opt = depth, ns
            elif self.ana[ns] == NONOPTIMIZED:
                if depth < min_nonopt:
                    min_nonopt, best_nonopt = depth, ns
            if min_opt == 0:
                return best_opt
        return best_opt if best_opt is not None else best_nonopt

    # -- multipath.c: nvme_numa_path, nvme_find_path -------------------------------------------------
    def numa_path(self, node: int) -> int | None:
        """``nvme_numa_path``: ``ns = current_path[node]``; ``if (unlikely(!ns)) return __nvme_find_path(head,
        node); if (unlikely(!nvme_path_is_optimized(ns))) return __nvme_find_path(head, node); return ns;``."""
        ns = self.current_path[node]
        if ns is None or not self.path_is_optimized(ns):
            return self.find_path(node)
        return ns

    def find(self, node: int) -> int | None:
        """``nvme_find_path``: ``switch (READ_ONCE(head->subsys->iopolicy))``."""
        if self.iopolicy == "queue-depth":
            return self.queue_depth_path()
        if self.iopolicy == "round-robin":
            return self.round_robin_path(node)
        return self.numa_path(node)

    # -- what happens to a request and to a path ----------------------------------------------------
    def start(self, ns: int) -> None:
        """``nvme_mpath_start_request``: under NVME_IOPOLICY_QD ``atomic_inc(&ns->ctrl->nr_active)``. (pathsel's
        queue-depth reads its engine's count per controller, which counts every policy's I/Os alike.)"""
        self.nr_active[self.ctrl[ns]] += 1

    def end(self, ns: int) -> None:
        """``nvme_mpath_end_request``: ``atomic_dec_if_positive(&ns->ctrl->nr_active)``, for a completion and a
        failover alike (the request ends either way)."""
        c = self.ctrl[ns]
        if self.nr_active[c] > 0:
            self.nr_active[c] -= 1

    def clear_current_path(self, ns: int) -> None:
        """``nvme_mpath_clear_current_path(ns)``: ``for_each_node(node) if (ns == current_path[node])
        rcu_assign_pointer(head->current_path[node], NULL);``."""
        for node, cur in enumerate(self.current_path):
            if cur == ns:
                self.current_path[node] = None

    def failover(self, ns: int) -> None:
        """``nvme_failover_req``: ``nvme_mpath_clear_current_path(ns);`` first thing, then the bios go to the head's
        requeue list (they find a path again) and the request ends (``nvme_end_req``: ``end``)."""
        self.clear_current_path(ns)
        self.end(ns)

    def set_live(self, ns: int) -> None:
        """``nvme_mpath_set_live``: ``if (nvme_path_is_optimized(ns)) { for_each_node(node) __nvme_find_path(head,
        node); }``."""
        if self.path_is_optimized(ns):
            for node in range(len(self.current_path)):
                self.find_path(node)

    def update_ana_state(self, ns: int, state: str) -> None:
        """``nvme_update_ns_ana_state``: ``ns->ana_state = desc->state;`` then ``if (nvme_state_is_live(
        ns->ana_state) && nvme_ctrl_state(ns->ctrl) == NVME_CTRL_LIVE) nvme_mpath_set_live(ns);``
        (``nvme_state_is_live``: OPTIMIZED or NONOPTIMIZED). Nothing is cleared when a path leaves those states."""
        self.ana[ns] = state
        if state in (OPTIMIZED, NONOPTIMIZED) and self.live[ns]:
            self.set_live(ns)

    def ctrl_down(self, ns: int) -> None:
        """The controller leaves LIVE (keep-alive lost, transport error: ``nvme_change_ctrl_state`` to RESETTING /
        CONNECTING). ``current_path`` is untouched: the path is only disabled (``nvme_path_is_disabled``); requests
        in flight come back through ``nvme_failover_req`` when the error recovery cancels them."""
        self.live[ns] = False

    def ctrl_up(self, ns: int) -> None:
        """The controller is LIVE again: it re-reads the ANA log (``nvme_mpath_update`` / ``nvme_read_ana_log``),
        which runs ``nvme_update_ns_ana_state`` for the namespace with its current state."""
        self.live[ns] = True
        self.update_ana_state(ns, self.ana[ns])


@dataclass
class QueueLength:
    """``dm-ps-queue-length.c`` for one path group: ``valid_paths`` and ``failed_paths`` lists, ``qlen`` per path."""

    valid: list[int]
    qlen: dict[int, int] = field(default_factory=dict)
    failed: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        for p in self.valid:
            self.qlen.setdefault(p, 0)

    def select(self) -> int | None:
        """``ql_select_path``: ``list_for_each_entry(pi, &s->valid_paths, list) { if (!best || (atomic_read(&pi->qlen)
        < atomic_read(&best->qlen))) best = pi; if (!atomic_read(&best->qlen)) break; }`` then ``list_move_tail(
        &best->list, &s->valid_paths)`` ("Move most recently used to least preferred to evenly balance")."""
        best = None
        for p in self.valid:
            if best is None or self.qlen[p] < self.qlen[best]:
                best = p
            if self.qlen[best] == 0:
                break
        if best is None:
            return None
        self.valid.remove(best)
        self.valid.append(best)
        return best

    def start_io(self, p: int) -> None:
        """``ql_start_io``: ``atomic_inc(&pi->qlen)``."""
        self.qlen[p] += 1

    def end_io(self, p: int) -> None:
        """``ql_end_io``: ``atomic_dec(&pi->qlen)`` (for completed and errored requests alike)."""
        self.qlen[p] -= 1

    def fail_path(self, p: int) -> None:
        """``ql_fail_path``: ``list_move(&pi->list, &s->failed_paths)``."""
        if p in self.valid:
            self.valid.remove(p)
            self.failed.insert(0, p)

    def reinstate_path(self, p: int) -> None:
        """``ql_reinstate_path``: ``list_move_tail(&pi->list, &s->valid_paths)``."""
        if p in self.failed:
            self.failed.remove(p)
            self.valid.append(p)


# -- dm-multipath: the selectors, path groups, fail_path / reinstate_path ----------------------------------------------
# Sources, read in torvalds/linux (master, 2025; these functions are unchanged since Linux 6.x):
#   drivers/md/dm-ps-round-robin.c (rr_select_path, rr_fail_path, rr_reinstate_path),
#   drivers/md/dm-ps-service-time.c (st_compare_load, st_select_path, st_start_io, st_end_io),
#   drivers/md/dm-ps-historical-service-time.c (hst_compare, hst_select_path, path_service_time, hst_end_io,
#   hst_fail_path, hst_reinstate_path, fixed_ema, hst_weight, hst_set_weights),
#   drivers/md/dm-mpath.c (choose_pgpath, choose_path_in_pg, fail_path, reinstate_path, switch_pg_num,
#   multipath_end_io).
# https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/md
U64_MASK = (1 << 64) - 1
HST_SHIFT = 10
HST_ONE = 1 << HST_SHIFT
HST_MAX = U64_MASK >> HST_SHIFT  # HST_FIXED_MAX (ULLONG_MAX >> HST_FIXED_SHIFT)
HST_INFLIGHT = HST_ONE  # HST_MAX_INFLIGHT


def k_fixed_power(x: int, frac_bits: int, n: int) -> int:
    """dm-ps-historical-service-time.c ``fixed_power``: ``if (n & 1) { result *= x; result += 1UL << (frac_bits -
    1); result >>= frac_bits; } n >>= 1; if (!n) break; x *= x; x += ...; x >>= frac_bits;``."""
    result = 1 << frac_bits
    if n:
        while True:
            if n & 1:
                result = (((result * x) & U64_MASK) + (1 << (frac_bits - 1))) >> frac_bits
            n >>= 1
            if not n:
                break
            x = (((x * x) & U64_MASK) + (1 << (frac_bits - 1))) >> frac_bits
    return result


def k_fixed_ema(last: int, nxt: int, weight: int) -> int:
    """``fixed_ema``: ``last *= weight; last += next * (HST_FIXED_1 - weight); last += 1ULL << (HST_FIXED_SHIFT -
    1); return last >> HST_FIXED_SHIFT;`` (u64)."""
    last = (last * weight) & U64_MASK
    last = (last + ((nxt * (HST_ONE - weight)) & U64_MASK)) & U64_MASK
    last = (last + (1 << (HST_SHIFT - 1))) & U64_MASK
    return last >> HST_SHIFT


def k_int(x: int) -> int:
    """A C ``size_t`` / ``unsigned`` value returned as ``int`` (st_compare_load returns ``int``)."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


ST_MAX_RELATIVE_THROUGHPUT_SHIFT = 7
ST_MAX_INFLIGHT_SIZE = U64_MASK >> ST_MAX_RELATIVE_THROUGHPUT_SHIFT  # ((size_t)-1 >> ST_MAX_RELATIVE_THROUGHPUT_SHIFT)


def k_atomic_read_size(x: int) -> int:
    """``size_t sz = atomic_read(&pi->in_flight_size)``: ``in_flight_size`` is an ``atomic_t`` (a 32-bit ``int``;
    ``atomic_add`` wraps), read as ``int`` and sign-extended into the 64-bit ``size_t``: 2 GiB in flight or more
    reads as nearly 2**64."""
    x = k_int(x)
    return x & U64_MASK


@dataclass
class DmPathInfo:
    """The selectors' ``struct path_info`` fields for one path (pathsel keeps them per path across a regrouping)."""

    in_flight: int = 0  # ql: qlen; hst: outstanding
    in_flight_size: int = 0  # st: in_flight_size
    relative_throughput: int = 1
    historical_service_time: int = HST_ONE  # hst_add_path: pi->historical_service_time = HST_FIXED_1
    stale_after: int = 0
    last_finish: int = 0


class DmSelector:
    """One path group's path selector: ``valid_paths`` and ``failed_paths`` (every dm-ps-*.c keeps these two lists)."""

    def __init__(self, kind: str, info: dict[int, DmPathInfo], weights: list[int], threshold_multiplier: int) -> None:
        self.kind = kind  # round-robin | queue-length | service-time | historical-service-time
        self.info = info
        self.valid: list[int] = []
        self.failed: list[int] = []
        self.valid_count = 0  # hst: s->valid_count
        self.weights = weights
        self.threshold_multiplier = threshold_multiplier

    def add_path(self, p: int) -> None:
        """``*_add_path``: ``list_add_tail(&pi->list, &s->valid_paths)`` (hst: ``s->valid_count++``)."""
        self.valid.append(p)
        self.valid_count += 1

    def fail_path(self, p: int) -> None:
        """``rr_fail_path`` / ``ql_fail_path`` / ``st_fail_path`` / ``hst_fail_path``: ``list_move(&pi->list,
        &s->failed_paths)`` (hst: ``s->valid_count--``)."""
        self.valid.remove(p)
        self.failed.insert(0, p)
        self.valid_count -= 1

    def reinstate_path(self, p: int) -> None:
        """``rr_reinstate_path``: ``list_move(&pi->list, &s->valid_paths)`` (the head); ql, st, hst:
        ``list_move_tail`` (hst: ``s->valid_count++``)."""
        if p in self.failed:
            self.failed.remove(p)
        if self.kind == "round-robin":
            self.valid.insert(0, p)
        else:
            self.valid.append(p)
        self.valid_count += 1

    # -- select_path -------------------------------------------------------------------------------------
    def st_compare_load(self, p1: int, p2: int, incoming: int) -> int:
        """``st_compare_load`` (``size_t sz1, sz2, st1, st2``): ``sz1 = atomic_read(&pi1->in_flight_size);`` (an
        ``atomic_t``: 32 bits, signed, sign-extended into the ``size_t``) case 1 ``if (pi1->relative_throughput ==
        pi2->relative_throughput) return sz1 - sz2;`` case 2 ``if (sz1 == sz2 || !pi1->relative_throughput ||
        !pi2->relative_throughput) return pi2->relative_throughput - pi1->relative_throughput;`` case 3 ``sz1 +=
        incoming; sz2 += incoming; if (unlikely(sz1 >= ST_MAX_INFLIGHT_SIZE || sz2 >= ST_MAX_INFLIGHT_SIZE)) { sz1
        >>= ST_MAX_RELATIVE_THROUGHPUT_SHIFT; sz2 >>= ST_MAX_RELATIVE_THROUGHPUT_SHIFT; } st1 = sz1 *
        pi2->relative_throughput; st2 = sz2 * pi1->relative_throughput; if (st1 != st2) return st1 - st2;`` case 4
        ``return pi2->relative_throughput - pi1->relative_throughput;`` (all returned as ``int``; the ``size_t``
        arithmetic in u64)."""
        a, b = self.info[p1], self.info[p2]
        sz1, sz2 = k_atomic_read_size(a.in_flight_size), k_atomic_read_size(b.in_flight_size)
        if a.relative_throughput == b.relative_throughput:
            return k_int(sz1 - sz2)
        if sz1 == sz2 or not a.relative_throughput or not b.relative_throughput:
            return k_int(b.relative_throughput - a.relative_throughput)
        sz1 = (sz1 + incoming) & U64_MASK
        sz2 = (sz2 + incoming) & U64_MASK
        if sz1 >= ST_MAX_INFLIGHT_SIZE or sz2 >= ST_MAX_INFLIGHT_SIZE:
            sz1 >>= ST_MAX_RELATIVE_THROUGHPUT_SHIFT
            sz2 >>= ST_MAX_RELATIVE_THROUGHPUT_SHIFT
        st1 = (sz1 * b.relative_throughput) & U64_MASK
        st2 = (sz2 * a.relative_throughput) & U64_MASK
        if st1 != st2:
            return k_int(st1 - st2)
        return k_int(b.relative_throughput - a.relative_throughput)

    def hst_compare(self, p1: int, p2: int, time_now: int) -> int:
        """``hst_compare`` (``long long`` out1, out2, stale1, stale2; u64 hst1, hst2): ``if (hst1 > hst2)
        over_threshold = hst1 > (s->threshold_multiplier * hst2); else over_threshold = hst2 >
        (s->threshold_multiplier * hst1); if (!over_threshold) return out1 - out2;`` ``if ((!out1 && stale1 <
        time_now) || (!out2 && stale2 < time_now) || (!out1 && !out2)) return (!out2 * stale1) - (!out1 *
        stale2);`` ``if (out1 == out2) pi2_better = hst1 > hst2; else { if (unlikely(out1 >= HST_MAX_INFLIGHT ||
        out2 >= HST_MAX_INFLIGHT)) { hst1 >>= HST_FIXED_SHIFT; hst2 >>= HST_FIXED_SHIFT; } pi2_better = (1 + out1)
        * hst1 > (1 + out2) * hst2; }`` ``if (pi2_better) { if (stale2 < time_now) return out1 - out2; return 1; }
        if (stale1 < time_now) return out1 - out2; return -1;``."""
        a, b = self.info[p1], self.info[p2]
        hst1, hst2 = a.historical_service_time, b.historical_service_time
        out1, out2 = a.in_flight, b.in_flight
        stale1, stale2 = a.stale_after, b.stale_after
        tm = self.threshold_multiplier
        if hst1 > hst2:
            over = hst1 > (tm * hst2) & U64_MASK
        else:
            over = hst2 > (tm * hst1) & U64_MASK
        if not over:
            return out1 - out2
        if (not out1 and stale1 < time_now) or (not out2 and stale2 < time_now) or (not out1 and not out2):
            return (int(not out2) * stale1) - (int(not out1) * stale2)
        if out1 == out2:
            pi2_better = hst1 > hst2
        else:
            if out1 >= HST_INFLIGHT or out2 >= HST_INFLIGHT:
                hst1 >>= HST_SHIFT
                hst2 >>= HST_SHIFT
            pi2_better = ((1 + out1) * hst1) & U64_MASK > ((1 + out2) * hst2) & U64_MASK
        if pi2_better:
            return out1 - out2 if stale2 < time_now else 1
        return out1 - out2 if stale1 < time_now else -1

    def select_path(self, nr_bytes: int, time_now: int) -> int | None:
        """``rr_select_path``: ``pi = list_entry(s->valid_paths.next, ...); list_move_tail(&pi->list,
        &s->valid_paths);``. ``ql_select_path``: the first with the least ``qlen``, ``if (!atomic_read(&best->qlen))
        break;``. ``st_select_path`` / ``hst_select_path``: ``list_for_each_entry(pi, &s->valid_paths, list) if
        (!best || (compare(pi, best, ...) < 0)) best = pi;``. Then (ql, st, hst) ``list_move_tail(&best->list,
        &s->valid_paths);``."""
        if not self.valid:
            return None
        best: int | None = None
        if self.kind == "round-robin":
            best = self.valid[0]
        elif self.kind == "queue-length":
            for p in self.valid:
                if best is None or self.info[p].in_flight < self.info[best].in_flight:
                    best = p
                if not self.info[best].in_flight:
                    break
        elif self.kind == "service-time":
            for p in self.valid:
                if best is None or self.st_compare_load(p, best, nr_bytes) < 0:
                    best = p
        else:
            for p in self.valid:
                if best is None or self.hst_compare(p, best, time_now) < 0:
                    best = p
        assert best is not None
        self.valid.remove(best)
        self.valid.append(best)
        return best

    # -- start_io / end_io ------------------------------------------------------------------------------------
    def start_io(self, p: int, nr_bytes: int) -> None:
        """``ql_start_io``: ``atomic_inc(&pi->qlen)``; ``st_start_io``: ``atomic_add(nr_bytes,
        &pi->in_flight_size)``; ``hst_start_io``: ``pi->outstanding++``."""
        self.info[p].in_flight += 1
        self.info[p].in_flight_size += nr_bytes

    def end_io(self, p: int, nr_bytes: int, start_time: int, now: int) -> None:
        """``ql_end_io`` / ``st_end_io``: undo start_io. ``hst_end_io``: ``st = path_service_time(pi, start_time);
        pi->outstanding--; pi->historical_service_time = fixed_ema(pi->historical_service_time, min(st *
        HST_FIXED_1, HST_FIXED_MAX), hst_weight(ps, st)); pi->stale_after = pi->last_finish + (s->valid_count *
        (pi->historical_service_time >> HST_FIXED_SHIFT));``. ``path_service_time``: ``if
        (time_after64(pi->last_finish, start_time)) start_time = pi->last_finish; pi->last_finish = sched_now; if
        (time_before64(sched_now, start_time)) return 0; return sched_now - start_time;``. ``hst_weight``:
        ``s->weights[clamp(delta >> HST_BUCKET_SHIFT, 0, HST_WEIGHT_COUNT - 1)]``."""
        pi = self.info[p]
        pi.in_flight -= 1
        pi.in_flight_size -= nr_bytes
        if self.kind != "historical-service-time":
            return
        if pi.last_finish > start_time:
            start_time = pi.last_finish
        pi.last_finish = now
        st = 0 if now < start_time else now - start_time
        pi.historical_service_time = k_fixed_ema(pi.historical_service_time, min((st * HST_ONE) & U64_MASK, HST_MAX), self.weights[min(st >> 24, 63)])
        pi.stale_after = (pi.last_finish + self.valid_count * (pi.historical_service_time >> HST_SHIFT)) & U64_MASK


def hst_set_weights(base: int) -> list[int]:
    """``hst_set_weights``: ``for (i = 0; i < HST_WEIGHT_COUNT - 1; i++) s->weights[i] = fixed_power(base,
    HST_FIXED_SHIFT, i + 1); s->weights[HST_WEIGHT_COUNT - 1] = 0;``."""
    return [k_fixed_power(base, HST_SHIFT, i + 1) for i in range(63)] + [0]


class DmMultipath:
    """``struct multipath`` with its priority groups, and what multipathd does to it.

    Groups as multipath-tools builds them (``group_by_prio``: AO prio 50, then ANO prio 10; ``failover``: one path
    each, AO first, path order; ``multibus``: one); standby and worse join no group (pathsel's assumption). A path
    whose ALUA state moves it to another group is failed in its old group and reinstated in its new one (pathsel's
    stand-in for multipathd's table reload). multipathd: a path the host sees go down is failed (``fail_path``
    message), one it sees come up is reinstated at once; a path dm failed on an I/O error while its wire is up comes
    back at the first checker tick (every ``polling_interval`` s from 0) strictly after the failure. ``failback
    immediate``: multipathd's ``switch_pathgroup`` to the best group with a valid path (``switch_pg_num``:
    ``current_pg = NULL; next_pg = pg``) whenever it differs from the current one; ``manual``: never.
    """

    def __init__(
        self,
        kind: str,
        alua: list[str],
        grouping: str = "group_by_prio",
        failback: str = "manual",
        poll: float = 5.0,
        base_weight: int = 972,
        threshold_multiplier: int = 0,
    ) -> None:
        self.kind, self.alua, self.grouping, self.failback, self.poll = kind, list(alua), grouping, failback, poll
        self.n = len(alua)
        self.info = {k: DmPathInfo() for k in range(self.n)}
        self.weights = hst_set_weights(base_weight)
        self.tm = threshold_multiplier
        self.groups: dict[int, DmSelector] = {}
        self.pg_of: list[int | None] = [None] * self.n  # the group whose selector holds the path
        self.is_active = [False] * self.n  # pgpath->is_active
        self.wire_up = [True] * self.n  # the host's view (multipathd's checker)
        self.failed_at: list[float | None] = [None] * self.n  # dm failed the path on an I/O error, at this time
        self.current_pg: int | None = None
        self.next_pg: int | None = None
        self.now = 0.0
        self.tick = 0
        for k in range(self.n):  # the table (every path up): ``*_add_path`` in path order
            r = self.class_rank(k)
            if r >= 0:
                self.pg_of[k] = r
                self._group(r).add_path(k)
                self.is_active[k] = True

    def now_ns(self) -> int:
        return int(self.now * 1e9)

    def class_rank(self, k: int) -> int:
        a = self.alua[k]
        if a not in (OPTIMIZED, NONOPTIMIZED):
            return -1
        if self.grouping == "multibus":
            return 0
        tier = 0 if a == OPTIMIZED else 1
        return tier if self.grouping == "group_by_prio" else tier * self.n + k

    def _group(self, r: int) -> DmSelector:
        if r not in self.groups:
            self.groups[r] = DmSelector(self.kind, self.info, self.weights, self.tm)
        return self.groups[r]

    # -- dm-mpath.c: fail_path, reinstate_path ----------------------------------------------------------------
    def fail_path(self, k: int) -> None:
        """``fail_path``: ``if (!pgpath->is_active) goto out;`` ``pgpath->pg->ps.type->fail_path(...);
        pgpath->is_active = false;`` (``if (pgpath == m->current_pgpath) m->current_pgpath = NULL;``: the
        selectors modelled here choose per I/O, so current_pgpath is not kept)."""
        if not self.is_active[k]:
            return
        g = self.pg_of[k]
        assert g is not None
        self.groups[g].fail_path(k)
        self.is_active[k] = False

    def reinstate_path(self, k: int) -> None:
        """``reinstate_path``: ``if (pgpath->is_active) goto out;`` ``r = pgpath->pg->ps.type->reinstate_path(...);
        pgpath->is_active = true;``."""
        if self.is_active[k]:
            return
        g = self.pg_of[k]
        assert g is not None
        self.groups[g].reinstate_path(k)
        self.is_active[k] = True

    def _want(self, k: int) -> bool:
        return self.wire_up[k] and self.failed_at[k] is None and self.class_rank(k) >= 0

    def _regroup(self, k: int) -> None:
        """Bring path k's group and state in line with what multipathd sees."""
        r = self.class_rank(k)
        if r >= 0 and self.pg_of[k] != r:
            if self.pg_of[k] is not None:
                self.fail_path(k)  # out of its old group
                self.groups[self.pg_of[k]].failed.remove(k)
            self.pg_of[k] = r
            self._group(r).failed.insert(0, k)  # a new member, failed until reinstated
        if self._want(k):
            self.reinstate_path(k)
        elif self.pg_of[k] is not None:
            self.fail_path(k)

    # -- what the host sees ---------------------------------------------------------------------------------------
    def advance(self, now: float) -> None:
        """Time passes: multipathd's checker ticks; a path failed before a tick whose wire is up is reinstated."""
        last = int(now // self.poll)
        while self.tick < last:
            self.tick += 1
            t = self.tick * self.poll
            for k in range(self.n):
                f = self.failed_at[k]
                if self.wire_up[k] and f is not None and f < t:
                    self.failed_at[k] = None
                    self._regroup(k)
        self.now = now

    def down(self, k: int) -> None:
        """The checker finds the path down: multipathd's ``fail_path`` (dm_fail_path)."""
        self.wire_up[k] = False
        if self.failed_at[k] is None:
            self.failed_at[k] = self.now
        self._regroup(k)

    def up(self, k: int) -> None:
        """The checker finds it up (it was down): ``reinstate_path`` at once (no san_path_err / marginal_path here).
        A path whose wire never went down changes nothing: a path dm failed waits for its tick."""
        if self.wire_up[k]:
            return
        self.wire_up[k] = True
        self.failed_at[k] = None
        self._regroup(k)

    def set_alua(self, k: int, state: str) -> None:
        self.alua[k] = state
        self._regroup(k)

    # -- dm-mpath.c: choose_pgpath ---------------------------------------------------------------------------------
    def choose_path_in_pg(self, g: int, nr_bytes: int) -> int | None:
        """``choose_path_in_pg``: ``path = pg->ps.type->select_path(&pg->ps, nr_bytes); if (!path) return
        ERR_PTR(-ENXIO);`` ``if (unlikely(READ_ONCE(m->current_pg) != pg)) { m->current_pgpath = pgpath;
        __switch_pg(m, pg); }``."""
        p = self._group(g).select_path(nr_bytes, self.now_ns())
        if p is None:
            return None
        if self.current_pg != g:
            self.current_pg = g
        return p

    def choose_pgpath(self, nr_bytes: int) -> int | None:
        """``choose_pgpath``: ``if (!atomic_read(&m->nr_valid_paths)) goto failed;`` "Don't change PG until it has
        no remaining paths": ``pg = READ_ONCE(m->current_pg); if (pg) { pgpath = choose_path_in_pg(m, pg,
        nr_bytes); if (!IS_ERR_OR_NULL(pgpath)) return pgpath; }`` ``if (READ_ONCE(m->next_pg)) { pg = m->next_pg;
        m->next_pg = NULL; pgpath = choose_path_in_pg(...); ... }`` then ``list_for_each_entry(pg,
        &m->priority_groups, list)`` (no group is bypassed: pathsel has no hardware handler) the first group that
        gives a path; ``failed: m->current_pgpath = NULL; m->current_pg = NULL; return NULL;``."""
        if any(self.is_active):
            if self.current_pg is not None:
                p = self.choose_path_in_pg(self.current_pg, nr_bytes)
                if p is not None:
                    return p
            if self.next_pg is not None:
                g, self.next_pg = self.next_pg, None
                p = self.choose_path_in_pg(g, nr_bytes)
                if p is not None:
                    return p
            for g in sorted(self.groups):
                p = self.choose_path_in_pg(g, nr_bytes)
                if p is not None:
                    return p
        self.current_pg = None
        return None

    def select(self, nr_bytes: int) -> int | None:
        """multipathd's failback first (``switch_pg_num``), then ``multipath_clone_and_map`` -> ``choose_pgpath``,
        and ``start_io`` on the chosen path."""
        if self.failback == "immediate":
            best = min((g for g, s in self.groups.items() if s.valid), default=None)
            if best is not None and best != self.current_pg:
                self.current_pg, self.next_pg = None, best
        p = self.choose_pgpath(nr_bytes)
        if p is not None:
            self._group(self.pg_of[p]).start_io(p, nr_bytes)  # type: ignore[index]
        return p

    def complete(self, k: int, nr_bytes: int, latency: float) -> None:
        """``multipath_end_io`` without an error: the selector's ``end_io`` with ``clone->io_start_time_ns``."""
        now = self.now_ns()
        self._group(self.pg_of[k]).end_io(k, nr_bytes, now - int(latency * 1e9), now)  # type: ignore[index]

    def error(self, k: int, nr_bytes: int, elapsed: float) -> None:
        """``multipath_end_io`` with a path error: ``if (pgpath) fail_path(pgpath);`` then ``if (pgpath) ...
        ps->type->end_io(ps, &pgpath->path, mpio->nr_bytes, clone->io_start_time_ns);``."""
        if self.failed_at[k] is None:
            self.failed_at[k] = self.now
        self._regroup(k)
        now = self.now_ns()
        self._group(self.pg_of[k]).end_io(k, nr_bytes, now - int(elapsed * 1e9), now)  # type: ignore[index]
