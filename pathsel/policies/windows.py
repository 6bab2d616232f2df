"""Windows MPIO with the Microsoft DSM (MSDSM): its six load-balance policies.

Sources: Microsoft, "MPIO Policies" (Windows Server 2008 R2, learn.microsoft.com
dd851699) for what each policy does, including Least Queue Depth's example
(one I/O to LUN 1 and one to LUN 2 on Path 1 make Path 1's depth 2, so the
next I/O for either LUN goes to Path 2); ``VDS_LOADBALANCE_POLICY_ENUM``
(vds.h: failover, round robin, round robin with subset, dynamic least queue
depth, weighted paths "the path with the least weight", least blocks);
``Set-MSDSMGlobalDefaultLoadBalancePolicy`` (FOO, RR, LQD, LB); ``mpclaim``
("Round Robin if disk is non-ALUA, Round Robin with Subset otherwise").
Microsoft publishes no source, so the details below are pathsel's:

Assumptions (Microsoft is silent on each):

* Path order is the scenario's order; every tie goes to the first path in it.
* Under ALUA, Round Robin with Subset's primary paths are the AO paths and its
  standby paths the ANO ones; Fail Over Only, Least Queue Depth, Weighted
  Paths and Least Blocks also choose among the AO paths while any is usable
  (the ALUA working set). Round Robin uses every usable path, AO and ANO.
* Fail Over Only's active path is the first AO path at the start; while it
  is down the first path of the working set is used; with ``failback=1``
  (the 2008 R2 text: "the standby path that was activated returns to
  standby") the active path is used again once it is back.
* A "path" in Least Queue Depth is the I_T nexus, shared by every LUN over
  it (``PathView.controller_outstanding``); Least Blocks counts bytes the
  same way (``controller_outstanding_bytes``), by analogy.
* Round Robin switches after every I/O.
"""

from __future__ import annotations

from typing import Any, Callable

from .base import IORequest, PathView, Policy, alua_working_set
from .esxi import RoundRobin, fixed_preferred

__all__ = [
    "MpioFailoverOnly",
    "MpioRoundRobin",
    "MpioRoundRobinWithSubset",
    "MpioLeastQueueDepth",
    "MpioWeightedPaths",
    "MpioLeastBlocks",
    "mpio_policy",
]


class MpioFailoverOnly(Policy):
    """Fail Over Only: one active path; the standby paths only while it is down."""

    name = "mpio:fo"

    def __init__(self, failback: int = 1) -> None:
        self.failback = bool(failback)
        self._current: PathView | None = None

    def bind(self, device, rng) -> None:
        super().bind(device, rng)
        self._primary = fixed_preferred(device.paths)

    def select(self, io: IORequest) -> PathView | None:
        cur = self._current
        if self._primary.usable and (self.failback or cur is None or not cur.usable):
            cur = self._primary
        elif cur is None or not cur.usable:
            working = alua_working_set(self.device.paths)
            cur = working[0] if working else None
        self._current = cur
        return cur

    def config_string(self) -> str:
        return f"LoadBalancePolicy=FOO active={self._current.name if self._current else 'none'} failback={int(self.failback)}"


class MpioRoundRobin(RoundRobin):
    """Round Robin: every usable path in turn, one I/O each (ESXi RR's cursor with iops=1 over all paths)."""

    name = "mpio:rr"

    def __init__(self) -> None:
        super().__init__(type="iops", iops=1, use_ano=1)

    def config_string(self) -> str:
        return f"LoadBalancePolicy=RR last={self._cursor.name if self._cursor else 'none'}"


class MpioRoundRobinWithSubset(RoundRobin):
    """Round Robin with Subset: AO (primary) paths in turn; ANO (standby) paths only when no AO path is left."""

    name = "mpio:rrws"

    def __init__(self) -> None:
        super().__init__(type="iops", iops=1, use_ano=0)

    def config_string(self) -> str:
        return f"LoadBalancePolicy=RRWS last={self._cursor.name if self._cursor else 'none'}"


class _Least(Policy):
    """The working-set path with the least of some count; ties to the first in path order."""

    code = ""

    def __init__(self) -> None:
        self._last: PathView | None = None

    def _key(self, p: PathView) -> int:
        raise NotImplementedError

    def select(self, io: IORequest) -> PathView | None:
        best: PathView | None = None
        best_key = 0
        for p in alua_working_set(self.device.paths):
            key = self._key(p)
            if best is None or key < best_key:
                best, best_key = p, key
        self._last = best
        return best

    def config_string(self) -> str:
        last = self._last
        return f"LoadBalancePolicy={self.code} last={last.name if last else 'none'} value={self._key(last) if last else 0}"


class MpioLeastQueueDepth(_Least):
    """Least Queue Depth: fewest outstanding requests on the path, from every LUN over it."""

    name = "mpio:lqd"
    code = "LQD"

    def _key(self, p: PathView) -> int:
        return p.controller_outstanding


class MpioWeightedPaths(_Least):
    """Weighted Paths: the usable path with the least administrator weight (a static priority)."""

    name = "mpio:wp"
    code = "WP"

    def _key(self, p: PathView) -> int:
        return p.weight


class MpioLeastBlocks(_Least):
    """Least Blocks: fewest bytes outstanding on the path, from every LUN over it."""

    name = "mpio:lb"
    code = "LB"

    def _key(self, p: PathView) -> int:
        return p.controller_outstanding_bytes


def mpio_policy(name: str, params: dict[str, Any]) -> Policy:
    classes: dict[str, Callable[..., Policy]] = {
        "mpio:fo": MpioFailoverOnly,
        "mpio:rr": MpioRoundRobin,
        "mpio:rrws": MpioRoundRobinWithSubset,
        "mpio:lqd": MpioLeastQueueDepth,
        "mpio:wp": MpioWeightedPaths,
        "mpio:lb": MpioLeastBlocks,
    }
    return classes[name](**params)
