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
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import ScenarioError
from ..limits import BACKLOG_CAP, MAX_BACKLOG_VALUES, MAX_DURATION, offered_problem, series_problem
from ..scenario.checks.size import offered_load
from ..scenario.load import Scenario
from ..scenario.names import device_path_name, nexus_name, path_names
from ..scenario.runs import RunSpec
from ..scenario.sections.arrays import VolumeConfig
from ..scenario.sections.fabric import FC_MAX_FRAME, LinkConfig
from ..scenario.sections.paths import PathGroup
from ..timing.distributions import Distribution, Mixture
from ..units import format_duration
from .cpu import CpuModel, compile_cpu
from .fabric import drain_directions, junctions, round_trip
from .queues import QueueModel, queue_table, rows_by_owner

__all__ = [
    "Model",
    "PathModel",
    "ArrayModel",
    "ReplicationModel",
    "JobModel",
    "FaultModel",
    "ControllerModel",
    "DeviceModel",
    "LinkModel",
    "SwitchModel",
    "HostModel",
    "PortModel",
    "QueueModel",
    "compile_model",
    "US_PER_KM",
]

US_PER_KM = 5e-6  # light in fibre: about 5 us per km, one way (conventions.md)
MAX_IMPLICIT_CHECKS = 100_000  # implicit ALUA's ownership checks in one run (each is an event of the timeline)


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


@dataclass(frozen=True)
class HostModel:
    index: int
    name: str
    detection: float  # seconds until the host notices a path going down or up
    apd_timeout: float  # seconds an I/O waits with no usable path before it fails (inf: queue)
    io_timeout: float  # an attempt that would take longer is aborted and retried
    queue_depth: int = 0  # I/Os each device takes at once (DQLEN); more wait in the host. 0: no limit
    qfull_retry_delay: float = 0.003  # a command answered QUEUE FULL is sent again this long after the status
    qfull_sample_size: int = 0  # ESXi Disk.QFullSampleSize: QUEUE FULLs that halve DQLEN (0: no throttling)
    qfull_threshold: int = 8  # ESXi Disk.QFullThreshold: good statuses that grow a throttled DQLEN by one
    adapter_queue_depth: int = 0  # I/Os the host's adapter (HBA) takes at once over all its devices. 0: no limit
    numa_nodes: int = 1  # NUMA nodes (sockets)
    numa_distances: tuple[tuple[int, ...], ...] = ((10,),)  # the SLIT matrix (numactl --hardware)
    numa_penalty: float = 0.5e-6  # seconds per 10 distance units above local, once per attempt
    nvme_tags: int = 0  # NVMe-oF: tags of each controller, shared by its namespaces (queues x (size - 1)). 0: no limit
    sched_num_req_outstanding: int = 0  # ESXi DSNRO: a device's I/Os at once while VMs compete (model/queues.py). 0: none
    dsnro_per_vm: bool = False  # dsnro_scope = "per_vm": each VM's own I/Os capped, not all VMs' together

    def numa_extra(self, a: int, b: int) -> float:
        """Host seconds an attempt issued on node ``a`` pays to go through an adapter on node ``b``."""
        d = self.numa_distances
        return self.numa_penalty * (d[a][b] - d[a][a]) / 10.0


@dataclass(frozen=True)
class LinkModel:
    """A link several nexuses share (an HBA port, an ISL): frames queue for it in each direction."""

    index: int
    name: str
    bandwidth: float
    # the fabric (issue 33, model/fabric.py): bb_credits x frame_size (0: no credit limit), the round trip of a frame
    # and its R_RDY without credit_return, the credit_return per direction (to the array, to the host; 0 where its
    # port does not receive), which directions its port end receives (where a slow drain acts), its two ends
    credit_bytes: float = 0.0
    rtt0: float = 0.0
    credit_return: tuple[float, float] = (0.0, 0.0)
    drain: tuple[bool, bool] = (True, True)
    between: tuple[str, ...] | None = None
    bb_credits: int = 0
    frame_size: int = 0

    def rate(self, direction: int, credit_return: float | None = None) -> float:
        """Bytes per second it serialises in ``direction``: its bandwidth, or the credit bound when lower (the engines'
        link_rate, with ``credit_return`` as it is now)."""
        if self.credit_bytes <= 0.0:
            return self.bandwidth
        r = self.credit_bytes / (self.rtt0 + (self.credit_return[direction] if credit_return is None else credit_return))
        return r if r < self.bandwidth else self.bandwidth


@dataclass(frozen=True)
class SwitchModel:
    """A fabric switch: the links of routes meet at it; each frame crossing it pays its latency (in ControllerModel.extra)."""

    index: int
    name: str
    latency: float


@dataclass(frozen=True)
class ControllerModel:
    """One initiator-target nexus (NVMe: a controller): the wire every volume's path over it shares."""

    index: int
    name: str
    host: int
    array: int
    one_way_latency: Distribution
    bandwidth: float | None  # bytes per second, each direction; None: no serialisation delay
    extra: float  # seconds added to every one-way trip (distance_km of the path and its links)
    loss_ppm: float
    loss_recovery: float
    links: tuple[int, ...]  # shared links crossed after the nexus's own wire, in order
    port: int = -1  # the array's target port it lands on (Model.ports)
    numa_node: int = 0  # the host's NUMA node its adapter (HBA/NIC) sits on
    port_group: str = ""  # the target port group it lands on ("" : the array has no controllers)
    array_controller: int = -1  # the array's controller that group sits on (ArrayModel.controllers), -1: none
    transport: str = ""  # "fc", "nvme-fc", "iscsi", "nvme-tcp", "nvme-roce" (model/frames.py); "": payload bytes only
    mtu: int = 0  # Ethernet transports: the IP MTU (1500 when the scenario gives none); 0 otherwise
    # frames lost per million for (reads, writes) (issue 37: loss_ops); None: loss_ppm for both. loss_ppm is the larger,
    # the one the engines test to know whether a frame draws a loss decision at all
    loss_by_op: tuple[float, float] | None = None

    def op_loss(self) -> tuple[float, float]:
        """Frames lost per million of a read's frames and of a write's."""
        return self.loss_by_op if self.loss_by_op is not None else (self.loss_ppm, self.loss_ppm)


@dataclass(frozen=True)
class PathModel:
    """One device's path (I_T_L): what a policy chooses among."""

    index: int
    name: str
    host: int
    array: int
    one_way_latency: Distribution
    bandwidth: float | None  # bytes per second, each direction; None: no serialisation delay
    alua: str  # state at time 0 after the preferred-array rule
    controller: int = -1
    device: int = -1
    weight: int = 0
    mirror: int | None = None  # the peer array a write through this path is mirrored to
    numa_node: int = 0  # the host's NUMA node its adapter sits on (its nexus's)
    crossing: bool = False  # at time 0 its nexus lands on a controller that does not own its volume (issue 32)
    array_controller: int = -1  # the array's controller its nexus lands on (ArrayModel.controllers), -1: none
    pref_ao: bool = True  # whether the preferred-array rule alone leaves it AO (an owner change keeps that rule)
    cell: int = -1  # implicit ALUA: its (volume, array)'s row of Model.cells, whose arrivals it counts (-1: none)


@dataclass(frozen=True)
class DeviceModel:
    """One host's view of one volume: a policy instance runs per device."""

    index: int
    name: str
    host: int
    volume: str
    paths: tuple[int, ...]
    admission: tuple[int, ...] = ()  # the "host"-rule queues (Model.queues) its I/Os take at issue, in order
    policy: Any = None  # its own policy (a PolicySpec: RunSpec.devices, a policy per device), None: the run's
    sched_num_req_outstanding: int = 0  # its volume's own ESXi DSNRO (ESXi sets it per device), 0: its host's


@dataclass(frozen=True)
class JobModel:
    """One fio job copy: ``iodepth`` I/Os kept outstanding on its device."""

    index: int
    workload: str
    host: int
    read_fraction: float
    sizes: tuple[int, ...]
    size_weights: tuple[float, ...]  # probabilities, summing to 1
    iodepth: int
    device: int = 0
    rate_iops: float = 0.0  # open loop: arrivals per second (0: closed loop, iodepth always outstanding)
    poisson: bool = False  # arrivals a Poisson process, else evenly spaced
    # arrivals that are not at one steady rate (arrivals.py): a Schedule (rate_schedule, thinktime_iotime), a
    # BlockThink (thinktime_blocks) or a Trace (read_iolog: op and size from the file too); None: rate_iops
    arrivals: Any = None
    refuse: bool = False  # iodepth_full = "refuse": an arrival finding iodepth I/Os issued and not done is refused
    numa_node: int = 0  # the host's NUMA node its CPUs run on (fio numa_cpu_nodes)
    vm: int = 0  # its [[workloads]] entry (Model.workloads): a VM or fio job, ESXi's world; its numjobs copies share it
    # fio rw read, write, rw/readwrite (not a trace): each I/O continues the job's previous one (HDLM's extended
    # algorithms keep such a run on one path; pathsel's I/Os carry no block address)
    sequential: bool = False

    @property
    def trace(self) -> Any:
        """The trace this job replays (its I/Os' ops and sizes), or None."""
        return self.arrivals if getattr(self.arrivals, "ops", None) is not None else None


@dataclass(frozen=True)
class FaultModel:
    """One change on the timeline. ``origin`` is the scenario's fault it comes from (a revert shares it)."""

    at: float
    # path_down | path_up | alua | latency | loss | array_down | array_up | replication_down | replication_up | owner;
    # implicit: implicit ALUA's ownership check of array ``array`` (not a fault of the file: origin -1)
    what: str
    path: int | None  # the first device path on the target nexus (None for array/replication faults)
    state: str | None
    controllers: tuple[int, ...] = ()
    array: int | None = None
    replication: bool = False  # latency/loss on the replication link
    add: float = 0.0  # latency: seconds added to each one-way trip from now on
    ppm: float = 0.0  # loss: frames lost per million from now on
    origin: int = 0
    revert: bool = False
    # alua by volume or port group, owner: the device paths that change, each one's new state, and whether it
    # crosses the inter-controller link from now on (-1: unchanged)
    paths: tuple[int, ...] = ()
    states: tuple[str, ...] = ()
    crossing: tuple[int, ...] = ()
    target: str = ""  # what it names, for the results (volume, port group, new owner)
    # slow_drain (issue 33): the link, its port's credit_return from now on (-1: the scenario's), and for a port that
    # stops draining, when it drains again (0: it does not stop)
    link: int = -1
    credit_return: float = -1.0
    stop_until: float = 0.0
    loss_ops: str = "both"  # loss (issue 37): whose frames (read, write, both); the other op's are lost no more


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
    arrays = tuple(
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
    group_ctrl = [{n: a.controllers.index(c) for n, c in a.groups()} for a in m.arrays]  # group -> its controller
    hosts = tuple(
        HostModel(
            i,
            h.name,
            h.detection,
            h.apd_timeout,
            h.io_timeout,
            h.queue_depth or 0,
            h.qfull_retry_delay,
            h.qfull_sample_size,
            h.qfull_threshold,
            h.adapter_queue_depth or 0,
            h.numa_nodes,
            h.numa_distances or _default_slit(h.numa_nodes),
            h.numa_penalty,
            _nvme_tags(h.nvme_io_queues, h.nvme_queue_size),
            sched_num_req_outstanding=h.sched_num_req_outstanding or 0,
            dsnro_per_vm=h.dsnro_scope == "per_vm",
        )
        for i, h in enumerate(m.hosts)
    )
    links = _links(m)
    switch_latency = {s.name: s.latency for s in m.switches}

    def preferred(host: str) -> str | None:
        if run.preferred_array == "none":
            return None
        if run.preferred_array is not None:
            return run.preferred_array
        return m.hosts[host_index[host]].preferred_array

    # the nexuses, as the scenario lists them
    controllers: list[ControllerModel] = []
    groups = []  # (controller, group) in order
    ports: list[PortModel] = []
    port_of: dict[tuple[int, str], int] = {}  # (array, target port name) -> port
    for g in m.paths:
        host = g.host or default_host
        for name, tport in zip(g.names(), g.target_ports()):
            arr = array_index[g.array]
            key = (arr, tport if tport is not None else f"\0{len(controllers)}")  # unnamed: a port of its own
            if key not in port_of:
                port_of[key] = len(ports)
                ports.append(PortModel(len(ports), tport if tport is not None else nexus_name(name), arr, arrays[arr].port_queue_depth))
            lk = tuple(link_index[n] for n in g.links)
            extra = (g.distance_km + sum(m.links[i].distance_km for i in lk)) * US_PER_KM
            extra += g.extra_latency + sum(m.links[i].extra_latency for i in lk)  # a slower path, as a condition
            if len(lk) > 1 and m.links[lk[0]].between is not None:  # each switch the route crosses forwards its frames
                crossed = junctions([m.links[i].between or () for i in lk], switch_latency)
                extra += sum((switch_latency[s] for s in crossed), 0.0)
            ppm = g.loss_ppm + sum(m.links[i].loss_ppm for i in lk)
            # per op (issue 37): the path's own loss and each link's count for the ops their loss_ops name; every
            # loss_ops "both" keeps the one figure (and its float sum) of before
            lossy: tuple[PathGroup | LinkConfig, ...] = (g, *(m.links[i] for i in lk))
            by_op: tuple[float, float] | None = None
            if any(t.loss_ops != "both" for t in lossy):
                rd, wr = (min(sum(t.loss_ppm for t in lossy if t.loss_ops in (op, "both")), 1e6) for op in ("read", "write"))
                by_op, ppm = (rd, wr), max(rd, wr)
            c = ControllerModel(
                len(controllers),
                nexus_name(name),
                host_index[host],
                array_index[g.array],
                g.one_way_latency,
                g.bandwidth,
                extra,
                min(ppm, 1e6),
                g.loss_recovery,
                lk,
                port_of[key],
                g.numa_node,
                g.port_group or "",
                group_ctrl[arr].get(g.port_group, -1) if g.port_group is not None else -1,
                *_framing(g, m.hosts[host_index[host]]),
                loss_by_op=by_op,
            )
            controllers.append(c)
            groups.append((c, g, name, host))

    # the volumes: an implicit one when the file has none (every array; stretched when replicated)
    volumes: list[VolumeConfig | None] = [*m.volumes] or [None]
    several = len(volumes) > 1
    paths: list[PathModel] = []
    devices: list[DeviceModel] = []
    device_of: dict[tuple[int, str], int] = {}
    owners = _owners(m, volumes)
    cell_index: dict[tuple[str, int], int] = {}  # implicit ALUA: (volume, array) -> its row of cells

    def cell_of(vname: str, array: int) -> int:
        if not arrays[array].implicit_alua or (vname, array) not in owners:
            return -1
        return cell_index.setdefault((vname, array), len(cell_index))

    pref_ao: dict[int, bool] = {}  # per device path: whether the preferred-array rule alone makes it AO
    for h, hcfg in enumerate(m.hosts):
        for k, v in enumerate(volumes):
            vname = v.name if v is not None else "volume"
            held = set(v.arrays) if v is not None and v.arrays else set(array_index)
            stretched = replication is not None and {m.arrays[i].name for i in replication.arrays} <= held
            d = len(devices)
            members = []
            for c, g, name, hname in groups:
                if c.host != h or m.arrays[c.array].name not in held:
                    continue
                pref = preferred(hname)
                # a path's own alua > the volume's table > the owner (both AO with a preferred array too) > preferred
                owned = owners.get((vname, c.array))
                pref_ok = pref is None or not stretched or g.array == pref
                crossing = owned is not None and c.array_controller not in owned
                if g.alua is not None:
                    alua = g.alua
                elif v is not None and v.alua is not None and c.port_group in v.alua:
                    alua = v.alua[c.port_group]
                elif owned is not None:
                    alua = "AO" if not crossing and pref_ok else "ANO"
                elif pref is not None and stretched:
                    alua = "AO" if g.array == pref else "ANO"
                else:
                    alua = "AO"
                pref_ao[len(paths)] = pref_ok
                # a volume without lun: its place in the file, the same on every host (as a LUN ID is on every host
                # it is presented to), not the device's number in the run (host 2's would follow host 1's)
                pname = device_path_name(name, vname, v.lun if v is not None and v.lun is not None else k, several)
                members.append(len(paths))
                paths.append(
                    PathModel(
                        len(paths),
                        pname,
                        h,
                        c.array,
                        c.one_way_latency,
                        c.bandwidth,
                        alua,
                        c.index,
                        d,
                        g.weight,
                        peer.get(c.array) if stretched else None,
                        c.numa_node,
                        crossing,
                        c.array_controller,
                        pref_ok,
                        cell_of(vname, c.array),
                    )
                )
            if not members and not any(w.volume in (None, vname) and (w.host or default_host) == hcfg.name for w in m.workloads):
                continue
            dname = hcfg.name if not several else f"{hcfg.name}/{vname}"
            own_dsnro = v.sched_num_req_outstanding if v is not None and v.sched_num_req_outstanding else 0
            devices.append(DeviceModel(d, dname, h, vname, tuple(members), sched_num_req_outstanding=own_dsnro))
            device_of[(h, vname)] = d

    jobs: list[JobModel] = []
    for wi, w in enumerate(m.workloads):
        spec = w.arrival_spec()
        hi = host_index[w.host or default_host]
        vname = w.volume or (volumes[0].name if volumes[0] is not None else "volume")
        total = sum(p for _, p in w.bs)
        read_fraction, sizes, weights = w.read_fraction, tuple(s for s, _ in w.bs), tuple(p / total for _, p in w.bs)
        if getattr(spec, "ops", None) is not None:  # a trace: its own mix of ops and sizes (what it will issue)
            read_fraction = float((spec.ops == 0).mean())
            values, counts = np.unique(spec.sizes, return_counts=True)
            sizes, weights = tuple(int(v) for v in values), tuple(float(c) / len(spec.sizes) for c in counts)
        for _ in range(w.numjobs):
            jobs.append(
                JobModel(
                    len(jobs),
                    w.name,
                    hi,
                    read_fraction,
                    sizes,
                    weights,
                    w.iodepth,
                    device_of[(hi, vname)],
                    _rate(w, spec) if spec is not None else (w.rate_iops or 0.0),
                    w.rate_process == "poisson",
                    spec,
                    w.iodepth_full == "refuse",
                    w.numa_node,
                    wi,
                    w.rw in ("read", "write", "rw", "readwrite") and getattr(spec, "ops", None) is None,
                )
            )

    by_name = {(c.host, grp[2]): c.index for c, grp in zip(controllers, groups)}

    def first_path(c: int) -> int | None:
        return next((p.index for p in paths if p.controller == c), None)

    faults: list[FaultModel] = []
    named = path_names(m) if any(f.path is not None for f in m.faults) else {}
    for i, f in enumerate(m.faults):
        cs: tuple[int, ...] = ()
        repl_target = False
        if f.path is not None:
            # a device's path, the nexus or the template as written: the nexus either way (a fault happens to the wire)
            fhost = f.host or default_host
            cs = (by_name[(host_index[fhost], named[fhost].group(f.path) or f.path)],)
        elif f.link == "replication":
            repl_target = True
        elif f.link is not None and f.what != "slow_drain":
            li = link_index[f.link]
            cs = tuple(c.index for c in controllers if li in c.links)
        fault_array = array_index[f.array] if f.array is not None else None
        if fault_array is not None:
            cs = tuple(c.index for c in controllers if c.array == fault_array)
        base = FaultModel(
            f.at,
            f.what,
            first_path(cs[0]) if (cs and f.path is not None) else None,
            f.state,
            cs,
            fault_array,
            repl_target,
            f.add or 0.0,
            f.ppm if f.ppm is not None else 0.0,
            i,
            loss_ops=f.loss_ops or "both",
        )
        lone = named[f.host or default_host].volume_of(f.path) if f.what == "alua" and f.path is not None and f.volume is None else None
        if lone is not None:  # ALUA states are per LUN: one device's path (vmhba1:C0:T0:L3) changes that device only
            f = f.model_copy(update={"volume": lone})
        if f.what == "owner" or (f.what == "alua" and (f.volume is not None or f.port_group is not None)):
            base = _group_fault(base, f, m, paths, devices, controllers, cs if f.path is not None else None, pref_ao)
        if f.what == "slow_drain" and f.link is not None:  # the link's port returns credits late, or stops until the revert
            li = link_index[f.link]
            until = f.at + f.duration if f.stop and f.duration is not None else 0.0
            cret = f.credit_return if f.credit_return is not None else -1.0
            base = FaultModel(f.at, "slow_drain", None, None, (), origin=i, target=f.link, link=li, credit_return=cret, stop_until=until)
        faults.append(base)
        if f.duration is not None:
            # undone: the latency step removed, the loss back to what the scenario gave the link
            if f.what == "slow_drain" and f.link is not None:  # the port returns credits as the scenario says again
                faults.append(FaultModel(f.at + f.duration, "slow_drain", None, None, (), origin=i, revert=True, link=link_index[f.link]))
            elif f.what == "latency":
                faults.append(FaultModel(f.at + f.duration, "latency", base.path, None, cs, None, repl_target, 0.0, 0.0, i, True))
            else:
                faults.append(FaultModel(f.at + f.duration, "loss", base.path, None, cs, None, repl_target, 0.0, -1.0, i, True))
    ramp = max(w.ramp_time for w in m.workloads)
    run_duration = m.duration if duration is None else duration
    cells = [(a, len(arrays[a].controllers), tuple(p.index for p in paths if p.cell == g)) for (_v, a), g in cell_index.items()]
    checks: list[FaultModel] = []
    for a in sorted({a for a, _, _ in cells}):  # implicit ALUA's checks (Model.timeline)
        every = arrays[a].implicit_alua
        n_checks = int((ramp + run_duration) / every)
        if n_checks > MAX_IMPLICIT_CHECKS:
            raise ScenarioError(
                scenario.source,
                f"arrays[{a}].implicit_alua",
                f"{format_duration(every)} over {ramp + run_duration:g} s is {n_checks:,} ownership checks, more than the "
                f"{MAX_IMPLICIT_CHECKS:,} pathsel takes in one run: a longer implicit_alua",
            )
        checks += [FaultModel(k * every, "implicit", None, None, (), a, origin=-1) for k in range(1, n_checks + 1) if k * every < ramp + run_duration]
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


def _links(m: Any) -> tuple[LinkModel, ...]:
    """The shared links, with the fabric's figures (model/fabric.py) where the scenario gives them."""
    switches = [s.name for s in m.switches]
    routes = [g.links for g in m.paths]
    out = []
    for i, ln in enumerate(m.links):
        if ln.bb_credits is None and ln.between is None:
            out.append(LinkModel(i, ln.name, ln.bandwidth))
            continue
        drain = drain_directions(ln.between, switches, routes, ln.name)
        credits, fs = ln.bb_credits or 0, ln.frame_size or FC_MAX_FRAME
        cret = ln.credit_return or 0.0
        out.append(
            LinkModel(
                i,
                ln.name,
                ln.bandwidth,
                credit_bytes=float(credits * fs),
                rtt0=round_trip(ln.distance_km, fs, ln.bandwidth),
                credit_return=(cret if drain[0] else 0.0, cret if drain[1] else 0.0),
                drain=drain,
                between=ln.between,
                bb_credits=credits,
                frame_size=fs if credits else 0,
            )
        )
    return tuple(out)


def _owners(m: Any, volumes: list[VolumeConfig | None]) -> dict[tuple[str, int], frozenset[int]]:
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


def _group_fault(
    base: FaultModel,
    f: Any,
    m: Any,
    paths: list[PathModel],
    devices: list[DeviceModel],
    controllers: list[ControllerModel],
    nexus: tuple[int, ...] | None,
    pref_ao: dict[int, bool],
) -> FaultModel:
    """An alua change naming a volume or a port group, or an owner change: the device paths it changes, each one's
    new state and crossing (issue 32)."""
    chosen, states, crossing = [], [], []
    for p in paths:
        c = controllers[p.controller]
        if f.volume is not None and devices[p.device].volume != f.volume:
            continue
        if f.what == "alua":
            if f.port_group is not None and c.port_group != f.port_group:
                continue
            if nexus is not None and p.controller not in nexus:
                continue
            chosen.append(p.index)
            states.append(f.state)
            crossing.append(-1)  # the host sees a new state; the LUN stays where it is
        else:
            ctrls = m.arrays[p.array].controllers
            if len(ctrls) < 2 or c.array_controller < 0:
                continue
            on_owner = ctrls[c.array_controller] == f.controller
            chosen.append(p.index)
            states.append("AO" if on_owner and pref_ao[p.index] else "ANO")
            crossing.append(0 if on_owner else 1)
    return FaultModel(
        base.at,
        base.what,
        base.path,
        base.state,
        (),
        None,
        False,
        0.0,
        0.0,
        base.origin,
        False,
        tuple(chosen),
        tuple(states),
        tuple(crossing),
        " ".join(
            x
            for x in (
                f"volume {f.volume}" if f.volume is not None else "",
                f"port group {f.port_group}" if f.port_group is not None else "",
                f"path {f.path}" if f.path is not None else "",
                f"to controller {f.controller}" if f.controller is not None else "",
            )
            if x
        ),
    )


def _framing(g: Any, h: Any) -> tuple[str, int]:
    """A nexus's transport and MTU: the path's own, else its host's; an Ethernet one without an MTU gets 1500."""
    transport = g.transport or h.transport or ""
    if transport not in ("iscsi", "nvme-tcp", "nvme-roce"):
        return transport, 0
    return transport, g.mtu or h.mtu or 1500


def _nvme_tags(io_queues: int | None, queue_size: int | None) -> int:
    """NVMe-oF: a controller's tags, shared by all its namespaces (blk-mq shared tags): ``io_queues`` queues of
    ``queue_size`` entries (default NVMF_DEF_QUEUE_SIZE 128), one of each never used. 0: no limit."""
    if io_queues is None:
        return 0
    return io_queues * ((queue_size or 128) - 1)


def _default_slit(n: int) -> tuple[tuple[int, ...], ...]:
    """numactl's distances when the file gives none: 10 local, 20 remote."""
    return tuple(tuple(10 if a == b else 20 for b in range(n)) for a in range(n))


def _rate(w: Any, spec: Any) -> float:
    """A job's nominal rate_iops when its arrivals change: the peak of a schedule or a burst, a trace's mean; 0 for a
    trace replayed without stalls (a closed loop over its records)."""
    if getattr(spec, "no_stall", False):
        return 0.0
    return float(spec.peak)
