"""Random streams: one ``numpy.random.Generator`` per random element of a model.

Spawned from one ``SeedSequence(model.seed)`` in a fixed order, so that

* the same seed gives identical runs (no global random state anywhere);
* two policies compared on one seed see the same workload (common random
  numbers): job ``j``'s k-th I/O has the same op and size under every policy;
* every stream feeds exactly one distribution, so an engine may draw a block
  of standard variates ahead (``exponential(m)`` is ``m x`` a standard
  exponential, ``uniform(a, b)`` is ``a + (b - a) x`` a standard uniform,
  draw for draw) and still see the very numbers the reference engine sees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import Model

__all__ = ["Streams", "make_streams"]


@dataclass
class Streams:
    jobs: list[np.random.Generator]  # op and block size of each issued I/O (standard uniforms)
    paths: list[np.random.Generator]  # one-way latency of each leg on the path
    service: list[list[np.random.Generator]]  # [array][0 read, 1 write] service times
    replication: np.random.Generator  # one-way latency of the replication link
    policies: list[np.random.Generator]  # one per device (host), for randomised policies


def make_streams(model: Model) -> Streams:
    root = np.random.SeedSequence(model.seed)
    ss_jobs, ss_service, ss_paths, ss_repl, ss_policies = root.spawn(5)
    gen = np.random.default_rng
    return Streams(
        jobs=[gen(s) for s in ss_jobs.spawn(len(model.jobs))],
        paths=[gen(s) for s in ss_paths.spawn(len(model.paths))],
        service=[[gen(s) for s in a.spawn(2)] for a in ss_service.spawn(len(model.arrays))],
        replication=gen(ss_repl),
        policies=[gen(s) for s in ss_policies.spawn(len(model.hosts))],
    )
