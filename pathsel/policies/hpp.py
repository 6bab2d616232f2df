"""VMware ESXi High Performance Plug-in (HPP, the NVMe plug-in of ESXi 7/8): its path selection schemes.

Sources: vSphere Storage, "VMware High Performance Plug-In and Path
Selection Schemes" (FIXED; LB-RR, the default: switch after ``iops`` I/Os or
``bytes`` bytes; LB-IOPS: after ``iops`` I/Os, "an optimal path that has the
least number of outstanding I/Os"; LB-BYTES: after ``bytes`` bytes, the
least outstanding bytes; LB-Latency: latency evaluation time and sampling
I/Os per path); ``esxcli storage hpp device set`` (``--pss``, ``--iops``,
``--bytes``, ``--latency-eval-time``, ``--sampling-ios-per-path``); vSphere
API ``HostMultipathInfoHppLogicalUnitPolicy`` (ranges and defaults: iops
1..10000 default 1000, bytes 1..100 MiB default 10 MiB, latencyEvalTime
10000..300000 ms default 30000, samplingIosPerPath 16..160 default 16).

Assumptions where VMware is silent (the ESXi NMP ones of esxi.py apply too):

* Working paths are the ALUA/ANA working set: AO paths, ANO only when no AO
  path is usable. Path order is the scenario's order.
* FIXED with no ``preferred``: the first AO path (the Storage guide's "first
  working path discovered"; the API text says ESXi picks a random one).
* LB-RR counts I/Os and bytes issued on the current path since it became
  current and moves to the next working path when either reaches its limit.
* LB-IOPS / LB-BYTES count this device's I/Os (bytes) outstanding per path;
  the choice includes the current path, ties go to the first in path order;
  a current path that leaves the working set is replaced at once.
* LB-Latency is latency RR's reading (:class:`pathsel.policies.esxi.LatencyRoundRobin`)
  with HPP's parameters and ``useANO=0``.
"""

from __future__ import annotations

from typing import Any, Callable

from .base import IORequest, PathView, Policy, alua_working_set
from .esxi import Fixed, LatencyRoundRobin, _next_after

__all__ = ["HppFixed", "HppRoundRobin", "HppLoadBalanceIops", "HppLoadBalanceBytes", "HppLatency", "hpp_policy"]


class HppFixed(Fixed):
    """FIXED: the preferred path whenever usable (AO or ANO); the first working path while it is down."""

    name = "hpp:fixed"

    def config_string(self) -> str:
        cur = self._current.name if self._current else "none"
        return f"{{pss=FIXED,preferred={self._preferred.name}; current={cur}}}"


class HppRoundRobin(Policy):
    """LB-RR: the next working path after ``iops`` I/Os or ``bytes`` bytes, whichever comes first."""

    name = "hpp:lb-rr"

    def __init__(self, iops: int = 1000, bytes: int = 10485760) -> None:
        self.iops = iops
        self.bytes = bytes
        self._cursor: PathView | None = None
        self._ios = 0
        self._bytes = 0

    def select(self, io: IORequest) -> PathView | None:
        working = alua_working_set(self.device.paths)
        if not working:
            return None
        cur = self._cursor
        if cur is None or cur not in working or self._ios >= self.iops or self._bytes >= self.bytes:
            cur = _next_after(cur, working, self.device.paths)
            self._ios = self._bytes = 0
        self._cursor = cur
        self._ios += 1
        self._bytes += io.size
        return cur

    def config_string(self) -> str:
        cur = self._cursor
        return (
            f"{{pss=LB-RR,iops={self.iops},bytes={self.bytes}; CurrentPath={cur.name if cur else 'none'}: "
            f"NumIOsPending={cur.outstanding if cur else 0},numBytesPending={cur.outstanding_bytes if cur else 0}}}"
        )


class _HppLeastOutstanding(Policy):
    """After ``limit`` I/Os or bytes on the current path, the working path with the least outstanding."""

    scheme = ""
    unit = ""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._cursor: PathView | None = None
        self._count = 0

    def _outstanding(self, p: PathView) -> int:
        raise NotImplementedError

    def _amount(self, io: IORequest) -> int:
        raise NotImplementedError

    def select(self, io: IORequest) -> PathView | None:
        working = alua_working_set(self.device.paths)
        if not working:
            return None
        cur = self._cursor
        if cur is None or cur not in working or self._count >= self.limit:
            cur, least = working[0], self._outstanding(working[0])
            for p in working[1:]:
                value = self._outstanding(p)
                if value < least:
                    cur, least = p, value
            self._count = 0
        self._cursor = cur
        self._count += self._amount(io)
        return cur

    def config_string(self) -> str:
        cur = self._cursor
        return (
            f"{{pss={self.scheme},{self.unit}={self.limit}; CurrentPath={cur.name if cur else 'none'}: "
            f"NumIOsPending={cur.outstanding if cur else 0},numBytesPending={cur.outstanding_bytes if cur else 0}}}"
        )


class HppLoadBalanceIops(_HppLeastOutstanding):
    """LB-IOPS: after ``iops`` I/Os, the working path with the fewest I/Os outstanding."""

    name = "hpp:lb-iops"
    scheme = "LB-IOPS"
    unit = "iops"

    def __init__(self, iops: int = 1000) -> None:
        super().__init__(iops)
        self.iops = iops

    def _outstanding(self, p: PathView) -> int:
        return p.outstanding

    def _amount(self, io: IORequest) -> int:
        return 1


class HppLoadBalanceBytes(_HppLeastOutstanding):
    """LB-BYTES: after ``bytes`` bytes, the working path with the fewest bytes outstanding."""

    name = "hpp:lb-bytes"
    scheme = "LB-BYTES"
    unit = "bytes"

    def __init__(self, bytes: int = 10485760) -> None:
        super().__init__(bytes)
        self.bytes = bytes

    def _outstanding(self, p: PathView) -> int:
        return p.outstanding_bytes

    def _amount(self, io: IORequest) -> int:
        return io.size


class HppLatency(LatencyRoundRobin):
    """LB-Latency: latency RR's sampling windows with HPP's parameter names, ranges and defaults."""

    name = "hpp:lb-latency"

    def __init__(
        self,
        latency_eval_time: int = 30000,
        sampling_ios_per_path: int = 16,
        variant: str = "min-set",
        tolerance: float = 0.1,
    ) -> None:
        super().__init__(
            num_sampling_cycles=sampling_ios_per_path,
            latency_eval_time=latency_eval_time,
            use_ano=0,
            variant=variant,
            tolerance=tolerance,
        )

    def config_string(self) -> str:
        cur = self._last
        latency_ms = round(self._average.get(cur.index, 0.0) * 1e3) if cur else 0
        return (
            f"{{pss=LB-Latency,latencyEvalTime={self.eval_time_ms},samplingIOsPerPath={self.cycles}; "
            f"CurrentPath={cur.name if cur else 'none'}: NumIOsPending={cur.outstanding if cur else 0},latency={latency_ms}}}"
        )


def hpp_policy(name: str, params: dict[str, Any]) -> Policy:
    classes: dict[str, Callable[..., Policy]] = {
        "hpp:fixed": HppFixed,
        "hpp:lb-rr": HppRoundRobin,
        "hpp:lb-iops": HppLoadBalanceIops,
        "hpp:lb-bytes": HppLoadBalanceBytes,
        "hpp:lb-latency": HppLatency,
    }
    return classes[name](**params)
