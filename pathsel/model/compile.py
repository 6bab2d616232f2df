"""The compiled model: one engine-neutral description of a run.

A :class:`Scenario` speaks the user's words (templates, preferred arrays,
fio's ``rw`` names); a :class:`Model` is what an engine needs, with every name
resolved to an index and every derived fact settled once: each path's ALUA
state under the run's preferred-array setting, each job's read fraction and
block-size mix, the measurement window. Both engines read this, so a scenario
feature is compiled in one place.

This module holds the :class:`Model` and :func:`compile_model`, which runs the
parts in order: the arrays and replication (``arrays.py``), the hosts
(``hosts.py``), the nexuses, links and switches (``nexuses.py``), the devices
and their paths (``devices.py``), the jobs (``workloads.py``), the faults
timeline (``faults.py``), then the queues (``queues.py``) and the CPUs
(``cpu.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..errors import ScenarioError
from ..limits import BACKLOG_CAP, MAX_BACKLOG_VALUES, MAX_DURATION, offered_problem, series_problem
from ..scenario.checks.size import offered_load
from ..scenario.load import Scenario
from ..scenario.runs import RunSpec
from .arrays import ArrayModel, PortModel, ReplicationModel, compile_arrays, compile_replication
from .cpu import CpuModel, compile_cpu
from .devices import DeviceModel, PathModel, compile_devices
from .faults import FaultModel, compile_faults, implicit_checks
from .hosts import HostModel, compile_hosts
from .nexuses import ControllerModel, LinkModel, SwitchModel, compile_links, compile_nexuses
from .queues import QueueModel, queue_table, rows_by_owner
from .workloads import JobModel, compile_jobs

__all__ = ["Model", "compile_model"]


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
    host_params: tuple[HostModel, ...] = ()
    controllers: tuple[ControllerModel, ...] = ()
    devices: tuple[DeviceModel, ...] = ()
    links: tuple[LinkModel, ...] = ()
    ports: tuple[PortModel, ...] = ()  # the arrays' target ports the nexuses land on
    queues: tuple[QueueModel, ...] = ()  # every queue an I/O can wait in (model/queues.py)
    workloads: tuple[str, ...] = ()  # the [[workloads]] names, in file order (JobModel.vm indexes it)
    # implicit ALUA: per (volume, array with implicit_alua) its array, controllers and device paths, in order
    cells: tuple[tuple[int, int, tuple[int, ...]], ...] = ()
    checks: tuple[FaultModel, ...] = ()  # implicit ALUA's ownership checks, in time order (what = "implicit")
    switches: tuple[SwitchModel, ...] = ()  # the fabric's switches (issue 33)
    cpu: CpuModel | None = None  # the hosts' cores (model/cpu.py); None: no host has a cpu table, no CPU modelled

    @property
    def fabric(self) -> bool:
        """Whether the fabric's mechanisms run (issue 33): a switch, a link with ends or bb_credits. Otherwise frames
        cross a path's links in the route's order both ways, as before."""
        return bool(self.switches) or any(ln.credit_bytes > 0.0 or ln.between is not None for ln in self.links)

    @cached_property
    def timeline(self) -> tuple[FaultModel, ...]:
        """What the engines' fault timeline applies, in time order: the faults, then implicit ALUA's checks of the
        same instant."""
        if not self.checks:
            return self.faults
        return tuple(sorted(self.faults + self.checks, key=lambda f: (f.at, f.what == "implicit")))

    @property
    def end(self) -> float:
        return self.ramp + self.duration

    @property
    def inter_controller(self) -> bool:
        """Whether an I/O can cross between an array's controllers: then each array has a wire for the link
        (after the nexuses', the shared links' and the replication link's, so theirs keep their indices)."""
        return any(len(a.controllers) > 1 for a in self.arrays)

    @property
    def n_wires(self) -> int:
        """Wires the engines serialise frames on: each nexus's own, the shared links, the replication link, and
        with inter_controller, each array's inter-controller link (Model.ic_wire)."""
        return len(self.controllers) + len(self.links) + 1 + (len(self.arrays) if self.inter_controller else 0)

    def ic_wire(self, array: int) -> int:
        """The wire of array ``array``'s inter-controller link."""
        return len(self.controllers) + len(self.links) + 1 + array

    @property
    def numa(self) -> bool:
        """Whether any attempt can pay a NUMA penalty (some job and some path of a host on different nodes)."""
        for h in self.host_params:
            if h.numa_nodes < 2 or h.numa_penalty == 0.0:
                continue
            jn = {j.numa_node for j in self.jobs if j.host == h.index}
            pn = {p.numa_node for p in self.paths if p.host == h.index}
            if any(h.numa_extra(a, b) != 0.0 for a in jn for b in pn):
                return True
        return False

    def host_paths(self, host: int) -> tuple[PathModel, ...]:
        return tuple(p for p in self.paths if p.host == host)

    def device_paths(self, device: int) -> tuple[PathModel, ...]:
        return tuple(self.paths[p] for p in self.devices[device].paths)

    def controller_paths(self, controller: int) -> tuple[int, ...]:
        return self._paths_by_controller[controller]

    @cached_property
    def _paths_by_controller(self) -> tuple[tuple[int, ...], ...]:
        # one pass over the paths: a scan per controller was 0.25 s of a run at 32 x 64 x 8 (256 nexuses x 16 k paths)
        out: list[list[int]] = [[] for _ in self.controllers]
        for p in self.paths:
            out[p.controller].append(p.index)
        return tuple(tuple(x) for x in out)

    def queue_rows(self, kind: str) -> tuple[int, ...]:
        """Each owner's row of queue ``kind`` in ``queues`` (-1: none): per device, host, controller, port or array."""
        return self._queue_rows[kind]

    @cached_property
    def _queue_rows(self) -> dict[str, tuple[int, ...]]:
        owners = {
            "device_queue": len(self.devices),
            "adapter_queue": len(self.host_params),
            "nvme_tags": len(self.controllers),
            "target_port": len(self.ports),
            "array_slots": len(self.arrays),
        }
        return {kind: rows_by_owner(self.queues, kind, n) for kind, n in owners.items()}

    @property
    def host_queues(self) -> bool:
        """Whether a host can hold I/Os back: a device or adapter queue depth, NVMe-oF controllers' tags, or an
        open-loop job (its backlog)."""
        return any(h.queue_depth or h.adapter_queue_depth or h.nvme_tags for h in self.host_params) or any(j.rate_iops > 0 for j in self.jobs)

    def device_slots(self) -> list[int]:
        """Job slots per device: with no host queue, the I/Os each device always has active."""
        out = [0] * len(self.devices)
        for j in self.jobs:
            out[j.device] += j.iodepth
        return out

    @property
    def backlog_cap(self) -> int:
        """Arrivals one open-loop job copy may have waiting in the host: BACKLOG_CAP, or the longest trace replayed
        (a power of two: the fast engine's rings)."""
        longest = max((len(j.trace) for j in self.jobs if j.trace is not None), default=0)
        return max(BACKLOG_CAP, 1 << (longest - 1).bit_length()) if longest else BACKLOG_CAP

    @property
    def outstanding(self) -> int:
        """I/Os kept in flight by all jobs together (the closed-loop population)."""
        return sum(j.iodepth for j in self.jobs)


def compile_model(scenario: Scenario, run: RunSpec, *, duration: float | None = None, seed: int | None = None) -> Model:
    """Resolve a scenario for one run (its preferred-array setting) into a Model.

    Raises a located ScenarioError for a ``duration`` that is not a number of seconds in (0, 1e6], and for
    a time series (the run's duration in ``interval`` bins x paths) too large for memory.
    """
    m = scenario.model
    if duration is not None and (isinstance(duration, bool) or not isinstance(duration, (int, float)) or not 0 < duration <= MAX_DURATION):
        raise ScenarioError(scenario.source, "duration", f"must be a number of seconds in (0, 1e6], got {duration!r}")
    array_index = {a.name: i for i, a in enumerate(m.arrays)}
    host_index = {h.name: i for i, h in enumerate(m.hosts)}
    link_index = {ln.name: i for i, ln in enumerate(m.links)}
    default_host = m.hosts[0].name

    peer, replication = compile_replication(m, array_index)
    arrays = compile_arrays(m, peer)
    hosts = compile_hosts(m)
    links = compile_links(m)
    controllers, groups, ports = compile_nexuses(m, arrays, array_index, host_index, link_index, default_host)
    volumes, paths, devices, device_of, cell_index, pref_ao = compile_devices(
        m, run, arrays, replication, peer, groups, array_index, host_index, default_host
    )
    jobs = compile_jobs(m, volumes, device_of, host_index, default_host)
    faults = compile_faults(m, controllers, groups, paths, devices, pref_ao, array_index, host_index, link_index, default_host)
    ramp = max(w.ramp_time for w in m.workloads)
    run_duration = m.duration if duration is None else duration
    cells = [(a, len(arrays[a].controllers), tuple(p.index for p in paths if p.cell == g)) for (_v, a), g in cell_index.items()]
    checks = implicit_checks(scenario.source, arrays, cells, ramp, run_duration)
    faults.sort(key=lambda f: f.at)  # stable: the file's order among simultaneous faults
    problem = series_problem(ramp + run_duration, m.interval, len(paths), len(devices))
    if problem is not None:
        raise ScenarioError(scenario.source, "interval", problem)
    problem = offered_problem(offered_load(m, ramp + run_duration), ramp + run_duration)  # the file passed it for its own duration
    if problem is not None:
        raise ScenarioError(scenario.source, "workloads", problem)
    traced = [j for j in jobs if j.trace is not None]
    if traced:
        cap = max(BACKLOG_CAP, 1 << (max(len(j.trace) for j in traced) - 1).bit_length())
        if len(jobs) * cap > MAX_BACKLOG_VALUES:
            raise ScenarioError(
                scenario.source,
                "workloads",
                (
                    f"{len(jobs):,} job copies x {cap:,} arrivals each may wait in the host (the longest trace replayed) "
                    f"is more than the {MAX_BACKLOG_VALUES:,} places pathsel keeps: fewer numjobs or a shorter trace"
                ),
            )
    queues, admission = queue_table(devices, hosts, controllers, ports, arrays)
    own = dict(run.devices)  # a policy per device: None where the run's policy runs
    devices = [
        DeviceModel(d.index, d.name, d.host, d.volume, d.paths, admission[d.index], own.get(d.volume), d.sched_num_req_outstanding) for d in devices
    ]
    return Model(
        name=m.name,
        protocol=m.protocol,
        seed=m.seed if seed is None else seed,
        ramp=ramp,
        duration=run_duration,
        interval=m.interval,
        hosts=tuple(h.name for h in m.hosts),
        arrays=arrays,
        replication=replication,
        paths=tuple(paths),
        jobs=tuple(jobs),
        faults=tuple(faults),
        host_params=hosts,
        controllers=tuple(controllers),
        devices=tuple(devices),
        links=links,
        ports=tuple(ports),
        queues=queues,
        workloads=tuple(w.name for w in m.workloads),
        cells=tuple(cells),
        checks=tuple(sorted(checks, key=lambda f: f.at)),
        switches=tuple(SwitchModel(i, s.name, s.latency) for i, s in enumerate(m.switches)),
        cpu=compile_cpu(m.hosts, hosts, controllers, paths, jobs),
    )
