"""Random streams: one ``numpy.random.Generator`` per random element of a model.

Spawned from one ``SeedSequence(model.seed)`` in a fixed order, so that

* the same seed gives identical runs (no global random state anywhere);
* two policies compared on one seed see the same workload (common random
  numbers): job ``j``'s k-th I/O has the same op and size under every policy;
* every stream feeds exactly one distribution, drawn in fixed-size chunks
  (:class:`Draws`): both engines read the very same numbers whatever the
  distribution (a mixture or a rejection sampler draws a different count of
  raw variates per value; chunking by values keeps the engines in step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import Model

__all__ = ["Streams", "Draws", "make_streams", "CHUNK"]

CHUNK = 1 << 14  # values drawn per call to a distribution's sample_block


class Draws:
    """The values of one distribution on one generator, drawn ``CHUNK`` at a time.

    ``dist=None`` gives standard uniforms (the workload's op and size choices,
    loss decisions). ``next()`` serves the reference engine one value at a
    time; ``take(n)`` serves the fast engine blocks; both see one sequence.
    """

    __slots__ = ("gen", "dist", "buf", "pos")

    def __init__(self, gen: np.random.Generator, dist: Any = None) -> None:
        self.gen = gen
        self.dist = dist
        self.buf = np.empty(0)
        self.pos = 0

    def _chunk(self) -> np.ndarray:
        if self.dist is None:
            return self.gen.random(CHUNK)
        return np.asarray(self.dist.sample_block(self.gen, CHUNK), dtype=np.float64)

    def next(self) -> float:
        if self.pos >= len(self.buf):
            self.buf, self.pos = self._chunk(), 0
        v = self.buf[self.pos]
        self.pos += 1
        return float(v)

    def take(self, n: int) -> np.ndarray:
        out = np.empty(n)
        i = 0
        while i < n:
            if self.pos >= len(self.buf):
                self.buf, self.pos = self._chunk(), 0
            k = min(n - i, len(self.buf) - self.pos)
            out[i : i + k] = self.buf[self.pos : self.pos + k]
            self.pos += k
            i += k
        return out


@dataclass
class Streams:
    jobs: list[Draws]  # op and block size of each issued I/O (standard uniforms)
    paths: list[Draws]  # one-way latency of each leg over a nexus (controller)
    service: list[list[Draws]]  # [array][0 read, 1 write] service times
    replication: Draws  # one-way latency of the replication link
    loss: list[Draws]  # per nexus, then the replication link: is this frame lost? (uniforms)
    policies: list[np.random.Generator]  # one per device, for randomised policies

    def all(self) -> list[Draws]:
        """Every value stream in the fast engine's numbering (see fast.py)."""
        out = list(self.jobs) + list(self.paths)
        for pair in self.service:
            out += pair
        out.append(self.replication)
        out += self.loss
        return out


def make_streams(model: Model) -> Streams:
    root = np.random.SeedSequence(model.seed)
    # spawn(6) gives the same first five children as spawn(5): loss was added last
    ss_jobs, ss_service, ss_paths, ss_repl, ss_policies, ss_loss = root.spawn(6)
    gen = np.random.default_rng
    repl = model.replication
    return Streams(
        jobs=[Draws(gen(s)) for s in ss_jobs.spawn(len(model.jobs))],
        paths=[Draws(gen(s), c.one_way_latency) for s, c in zip(ss_paths.spawn(len(model.controllers)), model.controllers)],
        service=[
            [Draws(g, a.read_service), Draws(h, a.write_service)]
            for a, (g, h) in zip(model.arrays, ([gen(x) for x in s.spawn(2)] for s in ss_service.spawn(len(model.arrays))))
        ],
        replication=Draws(gen(ss_repl), repl.one_way_latency if repl is not None else None),
        loss=[Draws(gen(s)) for s in ss_loss.spawn(len(model.controllers) + 1)],
        policies=[gen(s) for s in ss_policies.spawn(len(model.devices))],
    )
