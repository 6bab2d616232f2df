"""Linux NVMe native multipath: ``iopolicy`` numa, round-robin and queue-depth.

Source: Linux ``drivers/nvme/host/multipath.c`` (6.11+):

* ``__nvme_find_path``: the first live optimized path (numa: the nearest),
  else the first non-optimized one; it becomes ``current_path``.
* ``nvme_numa_path``: keep ``current_path`` while it is live and optimized,
  otherwise ``__nvme_find_path``.
* ``nvme_round_robin_path``: from the path after the current one, wrapping,
  the first live optimized path; failing that, stay on the current path if
  it is optimized, else the *last* non-optimized path met (so rotation over
  non-optimized paths runs backwards), else the current path if usable.
* ``nvme_queue_depth_path``: the first path with the fewest active requests
  on its *controller* (``ctrl->nr_active``, counted in
  ``nvme_mpath_start_request`` for every namespace on that controller),
  optimized before non-optimized; it returns at once on an optimized path
  at depth 0.
* ``nvme_mpath_set_live``: when a path becomes live and optimized every
  ``current_path`` is found again (back to the first optimized path);
  ``nvme_failover_req`` / ``nvme_mpath_clear_current_path`` forget a path
  that failed.

ANA states: AO is optimized, ANO non-optimized; standby and unavailable
(inaccessible) paths are never chosen; a path that is down is disabled.

Assumptions where the source is silent or the simulator is coarser:

* One NUMA node: every controller is at the same distance, so numa picks
  the first optimized path in path order (``head->list`` = path order).
* A path that goes down stops being ``current_path`` at once (its in-flight
  I/O fails over; the kernel also clears it on a controller reset).
* Any path that comes up or changes ANA state and is then live and optimized
  triggers ``nvme_mpath_set_live`` (its controller re-reads the ANA log).
* queue-depth counts I/Os of every device on the controller
  (``PathView.controller_outstanding``): it assumes every namespace on that
  controller uses queue-depth too, as the kernel's per-subsystem iopolicy
  makes them.
* With a single path (``list_is_singular``) round-robin returns it only while
  it is usable (the kernel checks only that its controller is live).
"""

from __future__ import annotations

from typing import Any

from .base import IORequest, PathView, Policy

__all__ = ["NvmeNuma", "NvmeRoundRobin", "NvmeQueueDepth", "nvme_policy"]

UINT_MAX = 4294967295


class _NvmeHead(Policy):
    """What numa and round-robin share: ``current_path`` (a device path position, -1 for none)."""

    iopolicy = ""

    def __init__(self) -> None:
        self._current = -1

    def bind(self, device, rng) -> None:
        super().bind(device, rng)
        self._local = {p.index: k for k, p in enumerate(device.paths)}

    def _find_path(self) -> int:
        """``__nvme_find_path``: the first optimized path, else the first non-optimized one."""
        fallback = -1
        for k, p in enumerate(self.device.paths):
            if not p.is_up:
                continue
            if p.alua == "AO":
                self._current = k
                return k
            if p.alua == "ANO" and fallback < 0:
                fallback = k
        if fallback >= 0:
            self._current = fallback
        return fallback

    def on_path_change(self, path: PathView) -> None:
        k = self._local[path.index]
        if path.is_up and path.alua == "AO":
            self._find_path()  # nvme_mpath_set_live
        elif k == self._current and not path.usable:
            self._current = -1  # nvme_mpath_clear_current_path

    def config_string(self) -> str:
        cur = self.device.paths[self._current].name if self._current >= 0 else "none"
        return f"iopolicy={self.iopolicy} current_path={cur}"


class NvmeNuma(_NvmeHead):
    """``iopolicy=numa``: the cached path while it is optimized, else find one again."""

    name = "nvme:numa"
    iopolicy = "numa"

    def select(self, io: IORequest) -> PathView | None:
        k = self._current
        if k < 0 or not (self.device.paths[k].is_up and self.device.paths[k].alua == "AO"):
            k = self._find_path()
        return self.device.paths[k] if k >= 0 else None


class NvmeRoundRobin(_NvmeHead):
    """``iopolicy=round-robin``: the next optimized path after the current one."""

    name = "nvme:round-robin"
    iopolicy = "round-robin"

    def select(self, io: IORequest) -> PathView | None:
        paths = self.device.paths
        n = len(paths)
        old = self._current
        if old < 0:
            k = self._find_path()
            return paths[k] if k >= 0 else None
        if n == 1:
            return paths[old] if paths[old].usable else None
        found = -1
        for step in range(1, n):
            k = (old + step) % n
            p = paths[k]
            if not p.is_up:
                continue
            if p.alua == "AO":
                self._current = k
                return p
            if p.alua == "ANO":
                found = k  # the last one met wins
        o = paths[old]
        if o.is_up and (o.alua == "AO" or (found < 0 and o.alua == "ANO")):
            return o
        if found < 0:
            return None
        self._current = found
        return paths[found]


class NvmeQueueDepth(Policy):
    """``iopolicy=queue-depth``: fewest active requests on the path's controller, optimized first."""

    name = "nvme:queue-depth"

    def __init__(self) -> None:
        self._last = -1

    def select(self, io: IORequest) -> PathView | None:
        best_opt = best_nonopt = -1
        min_opt = min_nonopt = UINT_MAX
        for k, p in enumerate(self.device.paths):
            if not p.is_up:
                continue
            depth = p.controller_outstanding
            if p.alua == "AO":
                if depth < min_opt:
                    min_opt, best_opt = depth, k
            elif p.alua == "ANO":
                if depth < min_nonopt:
                    min_nonopt, best_nonopt = depth, k
            if min_opt == 0:
                break
        k = best_opt if best_opt >= 0 else best_nonopt
        self._last = k
        return self.device.paths[k] if k >= 0 else None

    def config_string(self) -> str:
        last = self.device.paths[self._last] if self._last >= 0 else None
        return f"iopolicy=queue-depth last_path={last.name if last else 'none'} nr_active={last.controller_outstanding if last else 0}"


def nvme_policy(name: str, params: dict[str, Any]) -> Policy:
    return {"nvme:numa": NvmeNuma, "nvme:round-robin": NvmeRoundRobin, "nvme:queue-depth": NvmeQueueDepth}[name](**params)
