"""VMware ESXi NMP path selection plug-ins: VMW_PSP_FIXED, VMW_PSP_MRU, VMW_PSP_RR.

Sources: VMware vSphere Storage guide, "Path Selection Plug-Ins and Policies"
and "Change Default Parameters for Latency Round Robin"; ``esxcli storage nmp
psp roundrobin deviceconfig set`` (parameter names, defaults and ranges);
seed 004 (Pure Storage, "Latency-based PSP in ESXi 6.7 Update 1: A test
drive", 2018) for the observed behaviour of the latency policy.

Assumptions where the sources are silent (each is a parameter or stated here):

* Path order is the scenario's order, standing in for ESXi's runtime-name order.
* RR starts on the first working path; when the current path leaves the
  working set (down, or ANO while AO paths exist) the cursor moves to the next
  working path after it and the I/O count restarts.
* FIXED with no ``preferred`` picks the first AO path (ESXi picks "the first
  working path discovered"); its alternate is the first usable AO path, else
  ANO, kept until the preferred path returns.
* Latency RR (VMware documents only its parameters): see :class:`LatencyRoundRobin`.
"""

from __future__ import annotations

from typing import Any

from .base import IORequest, PathView, Policy, alua_working_set

__all__ = ["Fixed", "MostRecentlyUsed", "RoundRobin", "LatencyRoundRobin", "fixed_preferred", "size_normalised"]

SIZE_REF = 4096  # latency RR compares paths as if every I/O were 4 KiB


def fixed_preferred(paths, preferred: str = ""):
    """The path FIXED prefers: the one named, else the first AO path, else the first path.

    ``paths`` are anything with ``name`` and ``alua`` (views, compiled paths), so
    the policy, the fast engine and the analytic model share this one rule.
    """
    named = [p for p in paths if p.name == preferred]
    ao = [p for p in paths if p.alua == "AO"]
    return named[0] if named else (ao[0] if ao else paths[0])


def size_normalised(latency: float, size: float, bandwidth: float | None) -> float:
    """Latency RR's size weighting: take off the transfer time beyond a 4 KiB I/O on the path's link."""
    if bandwidth:
        return max(latency - (size - SIZE_REF) / bandwidth, 0.0)
    return latency


def _next_after(current: PathView | None, working: list[PathView], paths: tuple[PathView, ...]) -> PathView:
    """The first working path after ``current`` in device order, wrapping around."""
    if current is None:
        return working[0]
    ids = {p.index for p in working}
    n = len(paths)
    start = paths.index(current)
    for k in range(1, n + 1):
        candidate = paths[(start + k) % n]
        if candidate.index in ids:
            return candidate
    return working[0]


class Fixed(Policy):
    """VMW_PSP_FIXED: the preferred path whenever it is usable; fails back to it."""

    name = "fixed"

    def __init__(self, preferred: str = "") -> None:
        self.preferred_name = preferred
        self._current: PathView | None = None

    def bind(self, device, rng) -> None:
        super().bind(device, rng)
        self._preferred = fixed_preferred(device.paths, self.preferred_name)

    def select(self, io: IORequest) -> PathView | None:
        # An explicit preference ignores AO/ANO: FIXED uses its path in either state.
        if self._preferred.usable:
            self._current = self._preferred
        elif self._current is None or not self._current.usable:
            candidates = alua_working_set(self.device.paths)
            self._current = candidates[0] if candidates else None
        return self._current

    def config_string(self) -> str:
        cur = self._current.name if self._current else "none"
        return f"{{preferred={self._preferred.name};current={cur}}}"


class MostRecentlyUsed(Policy):
    """VMW_PSP_MRU: stays on its path until it fails; never fails back.

    Under ALUA it leaves an ANO path for an AO one as soon as one is usable.
    """

    name = "mru"

    def __init__(self) -> None:
        self._current: PathView | None = None

    def select(self, io: IORequest) -> PathView | None:
        cur = self._current
        if cur is not None and cur.usable:
            if cur.alua == "AO" or not any(p.usable and p.alua == "AO" for p in self.device.paths):
                return cur
        candidates = alua_working_set(self.device.paths)
        self._current = candidates[0] if candidates else None
        return self._current

    def config_string(self) -> str:
        return f"{{Current Path={self._current.name if self._current else 'none'}}}"


class RoundRobin(Policy):
    """VMW_PSP_RR ``--type=iops|bytes``: one cursor per device over the working paths.

    Every issued I/O goes to the cursor path; after ``iops`` I/Os (or once
    ``bytes`` bytes have been sent) the next I/O goes to the next working path.
    Working paths are the usable AO paths, the ANO ones only when no AO path
    is left, or both with ``use_ano=1``.
    """

    name = "rr"

    def __init__(self, type: str = "iops", iops: int = 1000, bytes: int = 10485760, use_ano: int = 0) -> None:
        self.type = type
        self.limit = iops if type == "iops" else bytes
        self.iops = iops
        self.bytes = bytes
        self.use_ano = bool(use_ano)
        self._cursor: PathView | None = None
        self._count = 0  # I/Os or bytes sent down the cursor path since it became current

    def select(self, io: IORequest) -> PathView | None:
        working = alua_working_set(self.device.paths, self.use_ano)
        if not working:
            return None
        cur = self._cursor
        if cur is None or cur not in working or self._count >= self.limit:
            cur = _next_after(cur, working, self.device.paths)
            self._count = 0
        self._cursor = cur
        self._count += 1 if self.type == "iops" else io.size
        return cur

    def config_string(self) -> str:
        last = self.device.paths.index(self._cursor) if self._cursor is not None else 0
        pending = self._cursor.outstanding if self._cursor else 0
        pending_bytes = self._cursor.outstanding_bytes if self._cursor else 0
        return (
            f"{{policy={self.type},iops={self.iops},bytes={self.bytes},useANO={int(self.use_ano)}; "
            f"lastPathIndex={last}: NumIOsPending={pending},numBytesPending={pending_bytes}}}"
        )


class LatencyRoundRobin(Policy):
    """VMW_PSP_RR ``--type=latency``: sample every path, then use the fast ones.

    VMware documents the parameters and the intent ("considers I/O bandwidth
    and path latency", "paths exhibiting higher latency are excluded until the
    next sampling period proves otherwise"), not the algorithm. pathsel models
    it as follows; every step is an assumption with a parameter or a note:

    1. **Sampling window.** At the start and then ``latency_eval_time`` ms
       after each evaluation, a window opens over the candidate paths (usable
       AO paths; ANO too with ``use_ano=1``; ANO only when no AO is usable).
       The next ``num_sampling_cycles`` x (number of candidates) issued I/Os
       are sample I/Os sent round robin, one per candidate per cycle (ESXi's
       ``curSamplingCycle`` counter; HPP's "sample IOs issued on each path");
       a candidate that has left the working set meanwhile is skipped.
       I/Os issued after the samples and before the last sample completes go
       to the paths in use before the window (all candidates at first).
    2. **Size weighting.** A sample's latency is normalised to a 4 KiB I/O by
       taking off the extra transfer time on the path's link:
       ``latency - (size - 4096) / bandwidth`` (nothing when the link speed is
       not modelled).
    3. **Evaluation**, when every sample has completed: the average
       normalised latency of each candidate, then by ``variant``:
       ``min-set`` (default) keeps the paths within ``tolerance`` of the best
       average and rotates over them one I/O at a time; ``score`` keeps every
       sampled path and sends each I/O to the argmin of
       ``average x (pending + 1)`` (idle slow paths wait; under load they
       take the overflow), ties to the earlier path.
    4. A path that leaves the working set (down, standby or unavailable, or
       ANO while an AO path is usable and ``use_ano=0``) leaves the sets at
       once and is not evaluated; if none of the chosen paths is in the
       working set a new window opens at once (so after falling back to ANO
       paths the policy returns to AO paths as soon as one is usable, as RR
       does).

    With seed 004's paths the default drops every remote path at the first
    evaluation (~50 ms into the run). The seed saw the 8 ms+ paths dropped at
    once and the 6 ms ones "a few minutes" later; ``variant=score`` keeps the
    6 ms paths for overflow instead. See docs/model.md.
    """

    name = "latency"

    def __init__(
        self,
        num_sampling_cycles: int = 16,
        latency_eval_time: int = 180000,
        use_ano: int = 0,
        variant: str = "min-set",
        tolerance: float = 0.1,
    ) -> None:
        self.cycles = num_sampling_cycles
        self.eval_time = latency_eval_time / 1000.0
        self.eval_time_ms = latency_eval_time
        self.use_ano = bool(use_ano)
        self.variant = variant
        self.tolerance = tolerance
        self._sampling = False
        self._candidates: list[PathView] = []
        self._samples_issued = 0
        self._pending: dict[int, int] = {}  # sample I/O seq -> path index
        self._sums: dict[int, float] = {}
        self._counts: dict[int, int] = {}
        self._active: list[PathView] = []
        self._average: dict[int, float] = {}
        self._next_eval = 0.0
        self._rotation = 0
        self._last: PathView | None = None

    # -- sampling --------------------------------------------------------
    def _open_window(self, working: list[PathView]) -> None:
        self._sampling = True
        self._candidates = list(working)
        self._samples_issued = 0
        self._pending.clear()
        self._sums = {p.index: 0.0 for p in working}
        self._counts = {p.index: 0 for p in working}
        self.device.record("sampling_started", candidates=[p.name for p in working])

    def _sample_path(self, working: list[PathView]) -> PathView | None:
        total = self.cycles * len(self._candidates)
        ids = {p.index for p in working}
        while self._samples_issued < total:
            p = self._candidates[self._samples_issued % len(self._candidates)]
            self._samples_issued += 1
            if p.index in ids:
                return p
        return None

    def _evaluate(self) -> None:
        working = {p.index for p in alua_working_set(self.device.paths, self.use_ano)}
        sampled = [p for p in self._candidates if self._counts.get(p.index, 0) > 0 and p.index in working]
        self._sampling = False
        self._next_eval = self.device.now + self.eval_time
        if not sampled:
            self._active = []
            return
        self._average = {p.index: self._sums[p.index] / self._counts[p.index] for p in sampled}
        best = min(self._average.values())
        if self.variant == "min-set":
            chosen = [p for p in sampled if self._average[p.index] <= best * (1.0 + self.tolerance)]
        else:
            chosen = sampled
        dropped = [p.name for p in self._candidates if p not in chosen]
        self._active = chosen
        self._rotation = 0
        self.device.record(
            "evaluation",
            latency_us={p.name: round(self._average[p.index] * 1e6, 3) for p in sampled},
            active=[p.name for p in chosen],
            dropped=dropped,
        )

    # -- policy hooks ----------------------------------------------------
    def select(self, io: IORequest) -> PathView | None:
        working = alua_working_set(self.device.paths, self.use_ano)
        if not working:
            return None
        ids = {p.index for p in working}
        in_use = [p for p in self._active if p.index in ids]
        if not self._sampling and (self.device.now >= self._next_eval or not in_use):
            self._open_window(working)
        if self._sampling:
            p = self._sample_path(working)
            if p is not None:
                self._pending[io.seq] = p.index
                self._last = p
                return p
            if not self._pending:  # every sample path failed before it was used
                self._evaluate()
                return self.select(io)
        in_use = in_use or working
        if self.variant == "score" and not self._sampling:
            avg = self._average
            p = min(in_use, key=lambda q: avg.get(q.index, 0.0) * (q.outstanding + 1))
        else:
            p = in_use[self._rotation % len(in_use)]
            self._rotation += 1
        self._last = p
        return p

    def on_complete(self, path: PathView, io: IORequest, latency: float) -> None:
        expected = self._pending.pop(io.seq, None)
        if expected is None:
            return
        if expected == path.index and expected in self._sums:
            self._sums[expected] += size_normalised(latency, io.size, path.bandwidth)
            self._counts[expected] += 1
        if self._sampling and not self._pending and self._samples_issued >= self.cycles * len(self._candidates):
            self._evaluate()

    def on_path_change(self, path: PathView) -> None:
        if not path.usable and self._sampling:
            for seq in [s for s, i in self._pending.items() if i == path.index]:
                del self._pending[seq]
            if not self._pending and self._samples_issued >= self.cycles * len(self._candidates):
                self._evaluate()

    def config_string(self) -> str:
        cur = self._last
        latency_ms = round(self._average.get(cur.index, 0.0) * 1e3) if cur else 0
        cycle = min(self._samples_issued // max(len(self._candidates), 1), self.cycles)
        return (
            f"{{policy=latency,latencyEvalTime={self.eval_time_ms},samplingCycles={self.cycles},"
            f"curSamplingCycle={cycle},useANO={int(self.use_ano)}; CurrentPath={cur.name if cur else 'none'}: "
            f"NumIOsPending={cur.outstanding if cur else 0},latency={latency_ms}}}"
        )


def esxi_policy(name: str, params: dict[str, Any]) -> Policy:
    cls = {"fixed": Fixed, "mru": MostRecentlyUsed, "rr": RoundRobin, "latency": LatencyRoundRobin}[name]
    return cls(**params)
