"""The compiled model: one engine-neutral description of a run.

A :class:`Scenario` speaks the user's words (templates, preferred arrays,
fio's ``rw`` names); a :class:`Model` is what an engine needs, with every name
resolved to an index and every derived fact settled once: each path's ALUA
state under the run's preferred-array setting, each job's read fraction and
block-size mix, the measurement window. Both engines read this, so a scenario
feature is compiled in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from .distributions import Distribution
from .scenario.load import RunSpec, Scenario

__all__ = ["Model", "PathModel", "ArrayModel", "ReplicationModel", "JobModel", "FaultModel", "compile_model"]


@dataclass(frozen=True)
class ArrayModel:
    index: int
    name: str
    concurrency: int
    read_service: Distribution
    write_service: Distribution
    peer: int | None  # the other array of a synchronous replication pair


@dataclass(frozen=True)
class ReplicationModel:
    arrays: tuple[int, int]
    one_way_latency: Distribution
    bandwidth: float | None  # bytes per second; None: no serialisation delay


@dataclass(frozen=True)
class PathModel:
    index: int
    name: str
    host: int
    array: int
    one_way_latency: Distribution
    bandwidth: float | None  # bytes per second, each direction; None: no serialisation delay
    alua: str  # state at time 0 after the preferred-array rule


@dataclass(frozen=True)
class JobModel:
    """One fio job copy: ``iodepth`` I/Os kept outstanding on its host's device."""

    index: int
    workload: str
    host: int
    read_fraction: float
    sizes: tuple[int, ...]
    size_weights: tuple[float, ...]  # probabilities, summing to 1
    iodepth: int


@dataclass(frozen=True)
class FaultModel:
    at: float
    what: str  # path_down | path_up | alua
    path: int
    state: str | None


@dataclass(frozen=True)
class Model:
    name: str
    protocol: str  # scsi | nvme
    seed: int
    ramp: float  # statistics start here (fio ramp_time; the longest of the workloads')
    duration: float  # measured time after the ramp
    interval: float  # time-series bin width
    hosts: tuple[str, ...]
    arrays: tuple[ArrayModel, ...]
    replication: ReplicationModel | None
    paths: tuple[PathModel, ...]
    jobs: tuple[JobModel, ...]
    faults: tuple[FaultModel, ...]

    @property
    def end(self) -> float:
        return self.ramp + self.duration

    def host_paths(self, host: int) -> tuple[PathModel, ...]:
        return tuple(p for p in self.paths if p.host == host)

    @property
    def outstanding(self) -> int:
        """I/Os kept in flight by all jobs together (the closed-loop population)."""
        return sum(j.iodepth for j in self.jobs)


def compile_model(
    scenario: Scenario, run: RunSpec, *, duration: float | None = None, seed: int | None = None
) -> Model:
    """Resolve a scenario for one run (its preferred-array setting) into a Model."""
    m = scenario.model
    array_index = {a.name: i for i, a in enumerate(m.arrays)}
    host_index = {h.name: i for i, h in enumerate(m.hosts)}
    default_host = m.hosts[0].name

    peer: dict[int, int] = {}
    replication = None
    if m.replication is not None:
        a, b = (array_index[n] for n in m.replication.arrays)
        peer = {a: b, b: a}
        replication = ReplicationModel((a, b), m.replication.one_way_latency, m.replication.bandwidth)
    arrays = tuple(
        ArrayModel(i, a.name, a.concurrency, a.service_time.read, a.service_time.write, peer.get(i))
        for i, a in enumerate(m.arrays)
    )

    def preferred(host: str) -> str | None:
        if run.preferred_array == "none":
            return None
        if run.preferred_array is not None:
            return run.preferred_array
        return m.hosts[host_index[host]].preferred_array

    paths = []
    for g in m.paths:
        host = g.host or default_host
        pref = preferred(host)
        for name in g.names():
            if g.alua is not None:
                alua = g.alua
            elif pref is not None:
                alua = "AO" if g.array == pref else "ANO"
            else:
                alua = "AO"
            paths.append(
                PathModel(len(paths), name, host_index[host], array_index[g.array], g.one_way_latency, g.bandwidth, alua)
            )
    path_index = {(p.host, p.name): p.index for p in paths}

    jobs = []
    for w in m.workloads:
        host = host_index[w.host or default_host]
        total = sum(p for _, p in w.bs)
        for _ in range(w.numjobs):
            jobs.append(
                JobModel(
                    len(jobs),
                    w.name,
                    host,
                    w.read_fraction,
                    tuple(s for s, _ in w.bs),
                    tuple(p / total for _, p in w.bs),
                    w.iodepth,
                )
            )
    faults = tuple(
        sorted(
            (
                FaultModel(f.at, f.what, path_index[(host_index[f.host or default_host], f.path)], f.state)
                for f in m.faults
            ),
            key=lambda f: f.at,
        )
    )
    return Model(
        name=m.name,
        protocol=m.protocol,
        seed=m.seed if seed is None else seed,
        ramp=max(w.ramp_time for w in m.workloads),
        duration=m.duration if duration is None else duration,
        interval=m.interval,
        hosts=tuple(h.name for h in m.hosts),
        arrays=arrays,
        replication=replication,
        paths=tuple(paths),
        jobs=tuple(jobs),
        faults=faults,
    )
