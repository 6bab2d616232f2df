"""Linux device-mapper multipath: the path selectors and multipath-tools' path groups.

Sources (Linux kernel, ``drivers/md/``):

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
* ``dm-mpath.c``: ``choose_pgpath`` ("Don't change PG until it has no
  remaining paths", then the first group in table order with a valid path).

Every selector above moves the chosen path to the tail of its valid list, so
ties go to the least recently selected path; reinstated paths go to the tail
(round-robin: the head).

multipath-tools (userspace): ``libmultipath/defaults.h`` (selector
``service-time 0``, failback ``manual``), ``detect_pgpolicy`` (default yes
since 0.9.6: ALUA paths are grouped ``group_by_prio``), the ``alua``
prioritizer (AO 50, ANO 10; standby 1, unavailable and transitioning 0 are not usable here),
``multipathd/main.c`` ``check_path`` (failback immediate switches groups at
once; failback N sets ``failback_tick = N + 1``, restarted by every new path
up, and ``deferred_failback_tick`` switches when it reaches 0).

Assumptions where the sources are silent or the simulator is coarser:

* Path order within a group (the table order) is the scenario's path order.
* multipathd sees path and ALUA changes at once (no ``polling_interval``).
  A path that changes group (ALUA AO <-> ANO) is treated as failed in its old
  group and reinstated in the new one; the table reload that multipathd
  would do (fresh selector state) is not modelled.
* ``failback=N``: the better group is used once ``N`` seconds have passed
  since it became usable (restarted when another of its paths comes *up*);
  the once-a-second tick granularity is ignored. Checked lazily at select.
* Failover grouping orders groups by priority, then path order.
* In-flight counts and bytes are the engine's (``PathView.outstanding``,
  ``outstanding_bytes``), which equal the selector's own start_io/end_io
  counters; HST's EWMA and ``last_finish`` learn only from completed I/Os
  (the kernel also calls ``end_io`` for failed ones).
* Kernel nanosecond clocks are the simulated time: ``int(seconds * 1e9)``,
  starting at 0 rather than at boot. An I/O's start is
  ``now_ns - int(latency * 1e9)``.
* HST's u64 products wrap as the kernel's do (only a huge
  ``threshold_multiplier`` gets there: a 1 s service time is about 1e12 in
  fixed point); its ``>> HST_FIXED_SHIFT`` guard at 1024 in flight and
  service-time's ``ST_MAX_INFLIGHT_SIZE`` guard are modelled too.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .base import IORequest, PathView, Policy

__all__ = [
    "DmMultipath",
    "DmRoundRobin",
    "DmQueueLength",
    "DmServiceTime",
    "DmHistoricalServiceTime",
    "ALUA_PRIO",
    "fixed_power",
    "fixed_ema",
    "hst_weights",
    "dm_policy",
]

ALUA_PRIO = {"AO": 50, "ANO": 10, "standby": 1, "unavailable": 0, "transitioning": 0}  # multipath-tools' alua prioritizer (getprio: default 0)

U64 = (1 << 64) - 1  # the kernel's u64 arithmetic wraps; a numba twin in uint64 wraps the same way

HST_FIXED_SHIFT = 10
HST_FIXED_1 = 1 << HST_FIXED_SHIFT
HST_FIXED_MAX = ((1 << 64) - 1) >> HST_FIXED_SHIFT
HST_MAX_INFLIGHT = HST_FIXED_1
HST_BUCKET_SHIFT = 24  # buckets of 2**24 ns, about 16.8 ms
HST_WEIGHT_COUNT = 64

ST_MAX_RELATIVE_THROUGHPUT = 100
ST_MAX_RELATIVE_THROUGHPUT_SHIFT = 7
ST_MAX_INFLIGHT_SIZE = ((1 << 64) - 1) >> ST_MAX_RELATIVE_THROUGHPUT_SHIFT


def _ns(seconds: float) -> int:
    """Simulated seconds as the kernel's integer nanoseconds (truncated)."""
    return int(seconds * 1e9)


def _int32(x: int) -> int:
    """A C ``size_t`` or ``unsigned`` difference returned as ``int``: its low 32 bits, signed."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= (1 << 31) else x


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


class DmMultipath(Policy):
    """One dm-multipath device: path groups, the current group, and a path selector.

    Subclasses choose within the current group (:meth:`_choose`). Per-path
    state lives in lists indexed by the path's position in the device.
    ``_order`` is the selectors' valid-list order for every group at once:
    moving a path to the tail of its group's list is moving it to the tail
    of ``_order``, since the order of the other paths does not change.
    """

    name = "dm"
    selector = ""

    def __init__(self, path_grouping_policy: str = "group_by_prio", failback: str = "manual") -> None:
        if path_grouping_policy not in ("group_by_prio", "multibus", "failover"):
            raise ValueError(f"path_grouping_policy must be group_by_prio, multibus or failover, got {path_grouping_policy!r}")
        self.grouping = path_grouping_policy
        self.failback = str(failback)
        self._failback_s = float(int(self.failback)) if self.failback.isdigit() else math.inf
        self._current = -1  # rank of the current path group, -1: none
        self._deadline = math.inf  # failback=N: when the better group may be used

    def bind(self, device, rng) -> None:
        super().bind(device, rng)
        n = len(device.paths)
        self._local = {p.index: k for k, p in enumerate(device.paths)}
        self._order = list(range(n))
        self._seen_rank = [self._rank(k) for k in range(n)]
        self._seen_up = [p.is_up for p in device.paths]

    # -- groups -----------------------------------------------------------
    def _class_rank(self, k: int) -> int:
        """The group a path belongs to by its ALUA state (usable or not); -1 for standby/unavailable.

        Lower ranks are better groups: group_by_prio AO 0, ANO 1; failover
        one group per path, AO ones first, each in path order; multibus 0.
        """
        alua = self.device.paths[k].alua
        if alua not in ("AO", "ANO"):
            return -1
        if self.grouping == "multibus":
            return 0
        tier = 0 if alua == "AO" else 1
        if self.grouping == "group_by_prio":
            return tier
        return tier * len(self.device.paths) + k

    def _rank(self, k: int) -> int:
        """The group of a usable path, -1 for a path no group can use now."""
        return self._class_rank(k) if self.device.paths[k].usable else -1

    def _sync(self) -> None:
        """Apply path changes in path order: reinstate paths that (re)joined a group, arm failback."""
        now = self.device.now
        for k in range(len(self._order)):
            rank = self._rank(k)
            up = self.device.paths[k].is_up
            if rank >= 0 and rank != self._seen_rank[k]:
                self._reinstate(k)
                if self._current >= 0 and rank < self._current and self._failback_s < math.inf:
                    # a new path up restarts the countdown; a priority change only starts one
                    if not self._seen_up[k] or self._deadline == math.inf:
                        self._deadline = now + self._failback_s
            self._seen_rank[k] = rank
            self._seen_up[k] = up

    def _reinstate(self, k: int) -> None:
        """``*_reinstate_path``: back to the tail of the valid list."""
        self._order.remove(k)
        self._order.append(k)

    def _to_tail(self, k: int) -> None:
        """``list_move_tail`` after a selection: ties go to the least recently selected path."""
        self._order.remove(k)
        self._order.append(k)

    def _choose_group(self) -> int:
        """dm-mpath ``choose_pgpath`` plus multipathd's failback; -1 when no path is usable."""
        ranks = [self._rank(k) for k in range(len(self._order))]
        usable = [r for r in ranks if r >= 0]
        if not usable:
            self._current = -1
            self._deadline = math.inf
            return -1
        best = min(usable)
        cur = self._current
        if cur < 0 or cur not in ranks:
            cur = best  # the current group has no path left: the first group that has one
        elif cur != best:
            if self.failback == "immediate":
                cur = best
            elif self._failback_s < math.inf:
                if self._deadline == math.inf:
                    self._deadline = self.device.now + self._failback_s
                elif self.device.now >= self._deadline:
                    cur = best
        if cur == best:
            self._deadline = math.inf
        if cur != self._current and self._current >= 0:
            self.device.record("path_group_switch", prio=self._group_prio(cur), old_prio=self._group_prio(self._current))
        self._current = cur
        return cur

    def _group_prio(self, rank: int) -> int:
        """multipath-tools' group priority: the mean prio of its usable paths (integer division)."""
        prios = [ALUA_PRIO[self.device.paths[k].alua] for k in range(len(self._order)) if self._rank(k) == rank]
        return sum(prios) // len(prios) if prios else 0

    # -- policy hooks -----------------------------------------------------
    def select(self, io: IORequest) -> PathView | None:
        self._sync()
        group = self._choose_group()
        if group < 0:
            return None
        members = [k for k in self._order if self._rank(k) == group]
        k = self._choose(members, io)
        self._to_tail(k)
        return self.device.paths[k]

    def on_path_change(self, path: PathView) -> None:
        self._sync()

    def _choose(self, members: list[int], io: IORequest) -> int:
        raise NotImplementedError

    def _selector_args(self) -> str:
        return "0"

    def config_string(self) -> str:
        groups = sorted({r for r in (self._rank(k) for k in range(len(self._order))) if r >= 0})
        cur = self._current if self._current in groups else (groups[0] if groups else -1)
        status = "active" if cur == self._current and cur >= 0 else "enabled"
        return (
            f"policy='{self.selector} {self._selector_args()}' prio={self._group_prio(cur)} status={status} "
            f"[{len(groups)} group{'s' if len(groups) != 1 else ''}, {self.grouping}, failback={self.failback}]"
        )


class DmRoundRobin(DmMultipath):
    """``round-robin``: the head of the valid list, which then goes to the tail."""

    name = "dm:round-robin"
    selector = "round-robin"

    def _reinstate(self, k: int) -> None:
        # rr_reinstate_path uses list_move: a returning path is next
        self._order.remove(k)
        self._order.insert(0, k)

    def _choose(self, members: list[int], io: IORequest) -> int:
        return members[0]


class DmQueueLength(DmMultipath):
    """``queue-length``: the first path with the fewest I/Os in flight; an idle path ends the scan."""

    name = "dm:queue-length"
    selector = "queue-length"

    def _choose(self, members: list[int], io: IORequest) -> int:
        paths = self.device.paths
        best = -1
        for k in members:
            if best < 0 or paths[k].outstanding < paths[best].outstanding:
                best = k
            if paths[best].outstanding == 0:
                break
        return best


class DmServiceTime(DmMultipath):
    """``service-time``: (in-flight bytes + this I/O) / relative throughput, compared exactly as st_compare_load.

    ``relative_throughput`` (0..100 per path, by device path position) is a
    per-path table argument multipath-tools never sets, so every path has 1;
    it is a Python argument only, for tests and your own experiments.
    """

    name = "dm:service-time"
    selector = "service-time"

    def __init__(self, path_grouping_policy: str = "group_by_prio", failback: str = "manual", relative_throughput: Sequence[int] | None = None) -> None:
        super().__init__(path_grouping_policy, failback)
        if relative_throughput is not None and any(not 0 <= int(t) <= ST_MAX_RELATIVE_THROUGHPUT for t in relative_throughput):
            raise ValueError("relative_throughput values must be in 0..100")
        self._rt_given = list(relative_throughput) if relative_throughput is not None else None

    def bind(self, device, rng) -> None:
        super().bind(device, rng)
        n = len(device.paths)
        if self._rt_given is not None and len(self._rt_given) != n:
            raise ValueError(f"relative_throughput has {len(self._rt_given)} values for {n} paths")
        self._rt = [int(t) for t in self._rt_given] if self._rt_given is not None else [1] * n

    def compare(self, k1: int, k2: int, incoming: int) -> int:
        """``st_compare_load``: < 0 when path k1 is better, > 0 when k2 is, 0 for no difference."""
        sz1 = self.device.paths[k1].outstanding_bytes
        sz2 = self.device.paths[k2].outstanding_bytes
        t1, t2 = self._rt[k1], self._rt[k2]
        if t1 == t2:  # case 1: less loaded
            return _int32(sz1 - sz2)
        if sz1 == sz2 or not t1 or not t2:  # cases 2a, 2b: higher throughput
            return _int32(t2 - t1)
        sz1 += incoming
        sz2 += incoming
        if sz1 >= ST_MAX_INFLIGHT_SIZE or sz2 >= ST_MAX_INFLIGHT_SIZE:
            sz1 >>= ST_MAX_RELATIVE_THROUGHPUT_SHIFT
            sz2 >>= ST_MAX_RELATIVE_THROUGHPUT_SHIFT
        st1 = sz1 * t2  # case 3: (sz1 + in) / t1 < (sz2 + in) / t2, cross-multiplied
        st2 = sz2 * t1
        if st1 != st2:
            return _int32(st1 - st2)
        return _int32(t2 - t1)  # case 4: equal service time, higher throughput

    def _choose(self, members: list[int], io: IORequest) -> int:
        best = -1
        for k in members:
            if best < 0 or self.compare(k, best, io.size) < 0:
                best = k
        return best


class DmHistoricalServiceTime(DmMultipath):
    """``historical-service-time``: EWMA of the serialised service time, estimate x (1 + in flight).

    Per path (lists by device position, integers as the kernel's u64):
    ``hst`` (fixed point, starts at 1 << 10), ``stale_after`` and
    ``last_finish`` (ns, start at 0). In flight is ``PathView.outstanding``.
    """

    name = "dm:historical-service-time"
    selector = "historical-service-time"

    def __init__(
        self,
        base_weight: int = 972,
        threshold_multiplier: int = 0,
        path_grouping_policy: str = "group_by_prio",
        failback: str = "manual",
    ) -> None:
        super().__init__(path_grouping_policy, failback)
        if not 0 <= base_weight < HST_FIXED_1:
            raise ValueError("base_weight must be in 0..1023")
        self.base_weight = base_weight
        self.threshold_multiplier = threshold_multiplier
        self.weights = hst_weights(base_weight)

    def bind(self, device, rng) -> None:
        super().bind(device, rng)
        n = len(device.paths)
        self.hst = [HST_FIXED_1] * n
        self.stale_after = [0] * n
        self.last_finish = [0] * n

    def weight(self, delta_ns: int) -> int:
        """``hst_weight``: the weight of the bucket a service time falls in (~16.8 ms per bucket)."""
        return self.weights[min(delta_ns >> HST_BUCKET_SHIFT, HST_WEIGHT_COUNT - 1)]

    def compare(self, k1: int, k2: int, now_ns: int) -> int:
        """``hst_compare``: < 0 when path k1 is better, > 0 when k2 is, 0 for no difference."""
        hst1, hst2 = self.hst[k1], self.hst[k2]
        out1, out2 = self.device.paths[k1].outstanding, self.device.paths[k2].outstanding
        stale1, stale2 = self.stale_after[k1], self.stale_after[k2]
        tm = self.threshold_multiplier
        # too similar estimates: compare in-flight counts (unloaded paths win)
        over_threshold = hst1 > ((tm * hst2) & U64) if hst1 > hst2 else hst2 > ((tm * hst1) & U64)
        if not over_threshold:
            return out1 - out2
        # an idle stale path is a probe; of two idle paths, the more stale one
        if (not out1 and stale1 < now_ns) or (not out2 and stale2 < now_ns) or (not out1 and not out2):
            return (stale1 if not out2 else 0) - (stale2 if not out1 else 0)
        if out1 == out2:
            pi2_better = hst1 > hst2
        else:
            if out1 >= HST_MAX_INFLIGHT or out2 >= HST_MAX_INFLIGHT:
                hst1 >>= HST_FIXED_SHIFT
                hst2 >>= HST_FIXED_SHIFT
            pi2_better = ((1 + out1) * hst1) & U64 > ((1 + out2) * hst2) & U64
        # a stale winner is limited to equal usage
        if pi2_better:
            return out1 - out2 if stale2 < now_ns else 1
        return out1 - out2 if stale1 < now_ns else -1

    def _choose(self, members: list[int], io: IORequest) -> int:
        now_ns = _ns(self.device.now)
        best = -1
        for k in members:
            if best < 0 or self.compare(k, best, now_ns) < 0:
                best = k
        return best

    def on_complete(self, path: PathView, io: IORequest, latency: float) -> None:
        k = self._local[path.index]
        now_ns = _ns(self.device.now)
        start = now_ns - _ns(latency)
        # path_service_time: a request that finished after this one started makes it serial
        if self.last_finish[k] > start:
            start = self.last_finish[k]
        self.last_finish[k] = now_ns
        st = 0 if now_ns < start else now_ns - start
        self.hst[k] = fixed_ema(self.hst[k], min((st * HST_FIXED_1) & U64, HST_FIXED_MAX), self.weight(st))
        # valid_count: the usable paths of this path's group (the selector's valid list)
        rank = self._class_rank(k)
        valid = sum(1 for j in range(len(self._order)) if rank >= 0 and self._rank(j) == rank)
        self.stale_after[k] = (self.last_finish[k] + valid * (self.hst[k] >> HST_FIXED_SHIFT)) & U64

    def _selector_args(self) -> str:
        if self.base_weight == 972 and self.threshold_multiplier == 0:
            return "0"
        return f"2 {self.base_weight} {self.threshold_multiplier}"


def dm_policy(name: str, params: dict[str, Any]) -> Policy:
    cls = {
        "dm:round-robin": DmRoundRobin,
        "dm:queue-length": DmQueueLength,
        "dm:service-time": DmServiceTime,
        "dm:historical-service-time": DmHistoricalServiceTime,
    }[name]
    return cls(**params)
