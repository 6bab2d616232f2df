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
from ..timing.distributions import Constant, Exponential

__all__ = ["Streams", "Draws", "make_streams", "CHUNK"]

CHUNK = 1 << 14  # values drawn per call to a distribution's sample_block, at most
FIRST_CHUNK = 256


class Draws:
    """The values of one distribution on one generator, drawn ``CHUNK`` at a time.

    ``dist=None`` gives standard uniforms (the workload's op and size choices,
    loss decisions). ``next()`` serves the reference engine one value at a
    time; ``take(n)`` serves the fast engine blocks; both see one sequence.
    Given ``(seed_sequence, i)``, the i-th child of that SeedSequence and its
    generator are only made when the first value is drawn (a model has dozens
    of streams, many of them never read).
    """

    __slots__ = ("_gen", "_seed", "dist", "buf", "pos", "_size")
    _gen: np.random.Generator | None
    _seed: tuple[np.random.SeedSequence, int] | None

    def __init__(self, gen: np.random.Generator | tuple[np.random.SeedSequence, int], dist: Any = None) -> None:
        if isinstance(gen, np.random.Generator):
            self._gen, self._seed = gen, None
        else:
            self._gen, self._seed = None, gen
        self.dist = dist
        self.buf = np.empty(0)
        self.pos = 0
        self._size = FIRST_CHUNK

    @property
    def gen(self) -> np.random.Generator:
        if self._gen is None:
            assert self._seed is not None  # one of the two is set in __init__
            self._gen = np.random.default_rng(_child(*self._seed))
        return self._gen

    def _chunk(self) -> np.ndarray:
        # Chunks grow from FIRST_CHUNK to CHUNK: a stream read a few times holds a few values, not CHUNK
        # (a model with thousands of jobs has thousands of streams). Every distribution draws its values
        # one after another from the generator, so the sequence does not depend on the chunk sizes.
        n = self._size
        self._size = min(CHUNK, 2 * n)
        if self.dist is None:
            return self.gen.random(n)
        return np.asarray(self.dist.sample_block(self.gen, n), dtype=np.float64)

    def next(self) -> float:
        if self.pos >= len(self.buf):
            self.buf, self.pos = self._chunk(), 0
        v = self.buf[self.pos]
        self.pos += 1
        return float(v)

    def take(self, n: int, out: np.ndarray | None = None) -> np.ndarray:
        """The next ``n`` values, in ``out`` when given (the fast engine's row: no copy in between)."""
        if out is None:
            out = np.empty(n)
        i = 0
        while i < n:
            if self.pos >= len(self.buf):
                # at least a chunk still wanted, of values that do not depend on block sizes: drawn into place
                if n - i >= self._size and (self.dist is None or getattr(self.dist, "elementwise", False)):
                    if self.dist is None:
                        self.gen.random(out=out[i:n])
                    else:
                        out[i:n] = self.dist.sample_block(self.gen, n - i)
                    break
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
    arrivals: list[Draws]  # per job: the gaps between its arrivals (open loop; a closed loop's is never read)

    def all(self) -> list[Draws]:
        """Every value stream in the fast engine's numbering (see fast.py)."""
        out = list(self.jobs) + list(self.paths)
        for pair in self.service:
            out += pair
        out.append(self.replication)
        out += self.loss
        out += self.arrivals
        return out


def _child(ss: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """The i-th child ``ss.spawn()`` gives, made alone (numpy's spawn builds each child so)."""
    return np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key + (i,), pool_size=ss.pool_size)


def make_streams(model: Model) -> Streams:
    root = np.random.SeedSequence(model.seed)
    # spawn(7) gives the same first six children as spawn(6): loss, then arrivals, were added last
    ss_jobs, ss_service, ss_paths, ss_repl, ss_policies, ss_loss, ss_arrivals = (_child(root, i) for i in range(7))
    gen = np.random.default_rng
    repl = model.replication
    return Streams(
        jobs=[Draws((ss_jobs, i)) for i in range(len(model.jobs))],
        paths=[Draws((ss_paths, i), c.one_way_latency) for i, c in enumerate(model.controllers)],
        service=[
            [Draws((ss_a, 0), a.read_service), Draws((ss_a, 1), a.write_service)]
            for a, ss_a in ((a, _child(ss_service, i)) for i, a in enumerate(model.arrays))
        ],
        replication=Draws((root, 3), repl.one_way_latency if repl is not None else None),  # ss_repl
        loss=[Draws((ss_loss, i)) for i in range(len(model.controllers) + 1)],
        policies=[gen(_child(ss_policies, i)) for i in range(len(model.devices))],
        arrivals=[Draws((ss_arrivals, i), _gaps(j)) for i, j in enumerate(model.jobs)],
    )


def _gaps(job: Any) -> Any:
    """fio's rate_process: ``linear`` spaces arrivals 1 / rate_iops apart, ``poisson`` draws exponential gaps; a
    changing rate or a trace gives its own gaps (an infinite gap: no more arrivals)."""
    if job.rate_iops <= 0:
        return None
    if job.arrivals is not None:  # a schedule, bursts or a trace (timing/arrivals.py): a fresh process per run
        return job.arrivals.process()
    return Exponential(1.0 / job.rate_iops) if job.poisson else Constant(1.0 / job.rate_iops)
