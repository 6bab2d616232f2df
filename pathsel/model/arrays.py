"""The arrays, compiled for a run: their service times, target ports, controllers and synchronous replication.

What a scenario's ``[[arrays]]`` and ``[replication]`` become (:class:`ArrayModel`,
:class:`PortModel`, :class:`ReplicationModel`), and which controllers own each
volume on a dual-controller array (:func:`volume_owners`). Part of the compile step
(:func:`pathsel.model.compile_model`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..scenario.schema import ScenarioModel
from ..scenario.sections.arrays import VolumeConfig
from ..timing.distributions import Distribution, Mixture
from .fabric import US_PER_KM

__all__ = ["ArrayModel", "PortModel", "ReplicationModel", "with_read_hits", "compile_replication", "compile_arrays", "volume_owners"]


@dataclass(frozen=True)
class ArrayModel:
    index: int
    name: str
    concurrency: int
    read_service: Distribution
    write_service: Distribution
    peer: int | None  # the other array of a synchronous replication pair
    per_kib: float = 0.0  # seconds added to each service time per KiB of the I/O
    port_queue_depth: int = 0  # commands each target port holds at once; one more is answered QUEUE FULL. 0: no limit
    controllers: tuple[str, ...] = ()  # its controllers (issue 32); fewer than two: no inter-controller crossing
    ic_latency: float = 0.0  # one-way seconds a frame of an I/O received on a non-owning controller adds
    ic_bandwidth: float | None = None  # bytes per second of the inter-controller link, each direction (None: none)
    implicit_alua: float = 0.0  # seconds between implicit ALUA's ownership checks (0: off)


def with_read_hits(miss: Distribution, ratio: float, hit: Distribution) -> Distribution:
    """A read's service time with a cache: ``hit`` with probability ``ratio``, else ``miss``.

    One mixture, so the hit is decided by the same uniform that draws the value, on the array's read
    service stream: no stream is added, and with ``ratio`` 0 the read service is ``miss`` itself (the
    same numbers as without a cache). Mixtures on either side are flattened into one.
    """
    if ratio <= 0.0:
        return miss
    if ratio >= 1.0:
        return hit

    def parts(d: Distribution, w: float) -> list[tuple[float, Any]]:
        if isinstance(d, Mixture):
            return [(w * wk, c) for wk, c in zip(d.weights, d.components)]
        return [(w, d)]

    both = [(w, c) for w, c in parts(hit, ratio) + parts(miss, 1.0 - ratio) if w > 0]
    return Mixture(tuple(w for w, _ in both), tuple(c for _, c in both))


@dataclass(frozen=True)
class PortModel:
    """One target port of an array: the nexuses landing on it share its queue (``queue_depth`` commands, 0: no limit)."""

    index: int
    name: str
    array: int
    queue_depth: int = 0


@dataclass(frozen=True)
class ReplicationModel:
    arrays: tuple[int, int]
    one_way_latency: Distribution
    bandwidth: float | None  # bytes per second; None: no serialisation delay
    extra: float = 0.0  # seconds added to every one-way trip (distance_km)
    loss_ppm: float = 0.0
    loss_recovery: float = 0.2
    preferred_site: int = 0  # the array the mediator keeps serving when the link fails


def compile_replication(m: ScenarioModel, array_index: dict[str, int]) -> tuple[dict[int, int], ReplicationModel | None]:
    """The replication link, and each replicated array's peer (none: no replication)."""
    peer: dict[int, int] = {}
    replication = None
    if m.replication is not None:
        r = m.replication
        a, b = (array_index[n] for n in r.arrays)
        peer = {a: b, b: a}
        replication = ReplicationModel(
            (a, b),
            r.one_way_latency,
            r.bandwidth,
            r.distance_km * US_PER_KM,
            r.loss_ppm,
            r.loss_recovery,
            array_index[r.preferred_site] if r.preferred_site else a,
        )
    return peer, replication


def compile_arrays(m: ScenarioModel, peer: dict[int, int]) -> tuple[ArrayModel, ...]:
    """The arrays in file order, each with its read service (a cache's hits mixed in) and its replication peer."""
    return tuple(
        ArrayModel(
            i,
            a.name,
            a.concurrency,
            with_read_hits(a.service_time.read, a.read_hit_ratio, a.read_hit_service_time),
            a.service_time.write,
            peer.get(i),
            a.service_time_per_kib,
            a.port_queue_depth or 0,
            a.controllers,
            a.inter_controller_latency if len(a.controllers) > 1 else 0.0,
            a.inter_controller_bandwidth if len(a.controllers) > 1 else None,
            a.implicit_alua or 0.0,
        )
        for i, a in enumerate(m.arrays)
    )


def volume_owners(m: Any, volumes: list[VolumeConfig | None]) -> dict[tuple[str, int], frozenset[int]]:
    """The controllers that own each (volume, array with two or more controllers), by their index on the array.

    ``owner`` if given; else the controllers of the groups its ``alua`` table marks AO; else the volumes of the
    array alternate between its controllers in file order (volume k: controllers[k mod n]), as dual-controller
    arrays spread new LUNs (docs/model.md)."""
    out: dict[tuple[str, int], frozenset[int]] = {}
    for ai, a in enumerate(m.arrays):
        if len(a.controllers) < 2:
            continue
        group_ctrl = {n: a.controllers.index(c) for n, c in a.groups()}
        k = 0
        for v in volumes:
            if v is not None and v.arrays and a.name not in v.arrays:
                continue
            vname = v.name if v is not None else "volume"
            if v is not None and v.owner is not None:
                own = frozenset({a.controllers.index(v.owner)})
            elif v is not None and v.alua is not None and any(s == "AO" and n in group_ctrl for n, s in v.alua.items()):
                own = frozenset(group_ctrl[n] for n, s in v.alua.items() if s == "AO" and n in group_ctrl)
            else:
                own = frozenset({k % len(a.controllers)})
            out[(vname, ai)] = own
            k += 1
    return out
