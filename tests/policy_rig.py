"""A hand-driven host for policy tests: a real PathTable, devices on it, a clock the test moves.

Several devices (LUNs, namespaces) may share the table's paths' nexus
(``controllers``), which is what NVMe queue-depth and MPIO least queue
depth count. Nothing here runs an engine: the test issues, completes and
fails I/Os itself, so every expected choice is written out.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pathsel.policies import DeviceView, IORequest, PathTable, PathView


class Rig:
    """Paths ``names`` (default p0..pN-1) in the given ALUA states; ``devices`` lists each device's paths."""

    def __init__(
        self,
        alua: Sequence[str],
        *,
        controllers: Sequence[int] | None = None,
        weights: Sequence[int] | None = None,
        devices: Sequence[Sequence[int]] | None = None,
        names: Sequence[str] | None = None,
        nodes: Sequence[int] | None = None,
        distances: Sequence[Sequence[int]] | None = None,
    ) -> None:
        n = len(alua)
        self.names = list(names) if names is not None else [f"p{i}" for i in range(n)]
        # NUMA: each path's adapter node, the host's SLIT matrix (default: as many nodes as used, 10 local / 20 remote)
        if nodes is not None and distances is None:
            nn = max(nodes) + 1
            distances = [[10 if a == b else 20 for b in range(nn)] for a in range(nn)]
        self.table = PathTable(
            self.names,
            ["a"] * n,
            list(alua),
            [None] * n,
            controllers=controllers,
            weights=weights,
            numa_nodes=nodes,
            numa_distances=[distances] if distances is not None else None,
        )
        self.node = 0  # the NUMA node of the CPU issuing the next I/Os
        self.views = [PathView(self.table, i) for i in range(n)]
        self.now = 0.0
        self.events: list[tuple[str, dict]] = []
        groups = devices if devices is not None else [list(range(n))]
        self.devices = []
        for d, members in enumerate(groups):
            views = [self.views[i] for i in members]
            self.devices.append(DeviceView(f"dev{d}", views, lambda: self.now, lambda e, det: self.events.append((e, det))))
        self.policies: list[Any] = [None] * len(self.devices)
        self.seq = 0

    @property
    def policy(self):
        return self.policies[0]

    def bind(self, policy, device: int = 0, rng=None):
        policy.bind(self.devices[device], rng if rng is not None else np.random.default_rng(0))
        self.policies[device] = policy
        return policy

    # -- I/O ----------------------------------------------------------------
    def io(self, size: int = 4096) -> IORequest:
        self.seq += 1
        return IORequest(self.seq, 0, "write", size, self.now, node=self.node)

    def pick(self, size: int = 4096, device: int = 0) -> tuple[IORequest, Any]:
        """Issue one I/O: the policy chooses, the path starts it (as the engine's table.start)."""
        io = self.io(size)
        p = self.policies[device].select(io)
        if p is not None:
            self.table.start(p.index, size)
            io.issued_at = self.now
        return io, p

    def names_of(self, k: int, size: int = 4096, device: int = 0) -> list[str | None]:
        """Issue ``k`` I/Os and leave them in flight; the chosen path names."""
        return [p.name if p is not None else None for _, p in (self.pick(size, device) for _ in range(k))]

    def names_idle(self, k: int, size: int = 4096, device: int = 0) -> list[str | None]:
        """Issue ``k`` I/Os one at a time, each completing (no time passes) before the next."""
        out = []
        for _ in range(k):
            io, p = self.pick(size, device)
            out.append(p.name if p is not None else None)
            if p is not None:
                self.complete(io, p, 0.0, device)
        return out

    def complete(self, io: IORequest, path, latency: float | None = None, device: int = 0) -> None:
        """The I/O ends (table.end), then the policy hears of it with its time on the path."""
        self.table.end(path.index, io.size)
        lat = self.now - io.issued_at if latency is None else latency
        self.policies[device].on_complete(path, io, lat)

    def busy(self, i: int, count: int = 1, size: int = 4096) -> None:
        """``count`` I/Os in flight on table path ``i`` that no policy chose (other traffic)."""
        for _ in range(count):
            self.table.start(i, size)

    # -- path state ---------------------------------------------------------
    def _notify(self, i: int) -> None:
        for dev, pol in zip(self.devices, self.policies):
            if pol is None:
                continue
            for v in dev.paths:
                if v.index == i:
                    pol.on_path_change(v)

    def down(self, *paths: int) -> None:
        for i in paths:
            self.table.up[i] = False
            self._notify(i)

    def up(self, *paths: int) -> None:
        for i in paths:
            self.table.up[i] = True
            self._notify(i)

    def alua(self, i: int, state: str) -> None:
        self.table.alua[i] = state
        self._notify(i)

    def event_names(self) -> list[str]:
        return [e for e, _ in self.events]


class ScriptedRng:
    """``random()`` returns the given uniforms in order and fails when they run out."""

    def __init__(self, values: Sequence[float]) -> None:
        self.values = list(values)
        self.calls = 0

    def random(self) -> float:
        if self.calls >= len(self.values):
            raise AssertionError("the policy drew more random numbers than expected")
        self.calls += 1
        return self.values[self.calls - 1]
