"""The reference engine: SimPy, readable, and the specification of the model.

Read :meth:`_Simulation.io_life` to see what happens to one I/O:

0. it is issued by its job: closed loop, as soon as the job slot's previous
   I/O is done; open loop (``rate_iops``), at its arrival, and when the job
   already has ``iodepth`` I/Os issued and not done it waits in the host for
   one to finish (``job_slot``, ``arrivals``); then its device's queues in
   the host take it in order (``admit``: the device queue, when the host's
   ``queue_depth`` I/Os are active on the device already, then the adapter's),
   or it waits in each that is full, in order. These waits are esxtop's KAVG
   (QUED); from then on to completion is DAVG (ACTV);
1. the host's policy picks a path (no usable path: the I/O waits for one);
   NVMe-oF: the path's controller gives it a tag, or it waits for one there;
2. the command and data cross the path (``leg``), as the protocol needs:
   SCSI write = WRITE command -> XFER_RDY -> data -> ... -> status (two round
   trips), SCSI or NVMe read = command -> ... -> data + status (one), NVMe
   write = command with in-capsule data -> ... -> completion (one);
3. the array serves it (``serve``: a FIFO queue for one of its slots, then the
   service time); a write to a replicated volume is also mirrored to the peer
   array (``mirror``: forward over the replication link, peer service, ack)
   and is acknowledged only when both copies are stored;
4. completion: the latency is recorded and the policy told; the job's slot
   issues its next I/O (closed loop at ``iodepth``).

A frame lost to a path failure (the path went down while it was on the wire,
or the host sent it before noticing) sends the I/O back to step 1 once the
host has noticed (its detection delay); a frame lost on a lossy link is resent
after the loss recovery delay. An attempt still unanswered ``io_timeout``
after it was sent is aborted then, wherever it is (``abort``: on the wire,
queued or served at the array, mirroring), and retried at once. Either way the
policy hears of the failed attempt (``on_fail``) just before the retry's
``select``; with no usable path the I/O waits until the host's APD timeout and then fails
visibly. No I/O is ever lost: ``accounting`` checks it.

Every queue an I/O can wait in is a row of ``Model.queues``
(:mod:`pathsel.model.queues`), kept here as a :class:`Queue` (an array's
slots: a ``simpy.Resource`` in its row) with the counters the fast engine
keeps for the same row. The rule of its kind says what a full one does:
``take`` and ``give_back`` are the "host" and "path" rules, written once
(a device's "host" queues are ``DeviceModel.admission``, so a new one needs
no change here), ``accept``/``port_done`` the "refuse" rule, ``serve`` the
"array" rule; ``throttle`` changes a device queue's queue depth.

Timing details the sources leave open, stated here once:

* A leg carrying data first waits for its link direction to be free (FIFO),
  then takes ``size / bandwidth`` to serialise, then the one-way latency.
  Command, transfer-ready and status frames are taken as zero bytes.
* The receiving array stores a write in parallel with mirroring it; the host
  gets status when both are done (active-active synchronous replication).
* Reads are served by the array that received them, without replication.
* An abort (SCSI ABORT TASK, NVMe Abort) takes effect at once everywhere: the
  array drops the command whether queued or being served, and the peer drops
  its mirror copy; the slots they held are free for the next in line. Frames
  already on the wire arrive and are ignored.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import simpy

from ..metrics import RunMetrics, stall_windows
from ..model import JobModel, Model
from ..model.frames import F_MODE, frame_row, leg_wire
from ..model.queues import ARRAY_SLOTS, DEVICE_QUEUE, NVME_TAGS, TARGET_PORT, QueueModel
from ..policies import DeviceView, IORequest, PathTable, PathView, build_policy
from .host_queues import overload
from .recorder import C_FRAMES_LOST, C_REFUSED, C_RETRIED, C_TIMED_OUT, Live, Recorder, numa_nodes, to_metrics, vm_slots
from .streams import make_streams
from .truth import reference_truth

# a simpy process: yields events, is sent their values
Proc = Generator[simpy.Event, Any, Any]

__all__ = ["run_reference"]

TO_ARRAY, TO_HOST = 0, 1


MAX_RESENDS = 64  # a frame lost this many times in a row is delivered anyway (bounds a 100 % loss burst)


class _Overload(Exception):
    """Raised in a process (SimPy re-raises a copy made from its args); run() turns it into host_queues.overload."""


class QueueFull(Exception):
    """The target port held its port_queue_depth commands: the array answered QUEUE FULL (status 0x28), now back."""


class PathLost(Exception):
    """A frame was lost (its path went down) or the attempt was aborted at io_timeout: retry."""

    def __init__(self, timed_out: bool = False) -> None:
        super().__init__()
        self.timed_out = timed_out


class Queue:
    """One queue of the model's table (:mod:`pathsel.model.queues`), as fast/queues.py keeps a row of ``S.q``.

    Its queue depth now (0: no limit; ESXi's throttling changes a device
    queue's, counting QUEUE FULL and good statuses towards the next change),
    places in use, the I/Os waiting for one in order (each with its device
    and job, for ACTV/QUED), and the counters every queue reports: the time integrals
    of places in use and of I/Os waiting over the measured window, brought up
    to date before each change (:meth:`advance`), and the QUEUE FULLs it
    answered. An array's slots (the "array" rule) are a :class:`ArraySlots`
    in ``slots``, whose users and requests are its in use and waiting.
    """

    __slots__ = (
        "row",
        "queue_depth",
        "in_use",
        "waiting",
        "slots",
        "qfull_seen",
        "good_seen",
        "qfull",
        "last",
        "area_in_use",
        "area_waiting",
        "ramp",
        "end",
        "dsnro",
        "per_vm",
        "worlds",
        "out",
        "held",
    )

    def __init__(self, row: QueueModel, window: tuple[float, float]) -> None:
        self.row = row
        self.queue_depth = row.queue_depth
        self.in_use = 0
        self.waiting: deque[tuple[simpy.Event, int, int]] = deque()  # (woken, its device, its job)
        self.slots: ArraySlots | None = None
        self.qfull_seen = self.good_seen = 0
        self.qfull = 0
        self.last = self.area_in_use = self.area_waiting = 0.0
        self.ramp, self.end = window
        # ESXi's DSNRO (a device queue's; 0: none): the VMs with I/O outstanding on the device, and per VM those
        # I/Os (issued to the device, not done) and the places they hold (sized by _Simulation)
        self.dsnro, self.per_vm = row.dsnro, row.dsnro_per_vm
        self.worlds = 0
        self.out: list[int] = []
        self.held: list[int] = []

    def counts(self) -> tuple[int, int]:
        """Places in use and I/Os (or requests) waiting, now."""
        s = self.slots
        return (self.in_use, len(self.waiting)) if s is None else (len(s.users), len(s.put_queue))

    def advance(self, now: float) -> None:
        """fast/queues.advance: bring the time integrals up to ``now``, within the measured window."""
        if now > self.last:
            w = min(now, self.end) - max(self.last, self.ramp)
            if w > 0.0:
                in_use, waiting = self.counts()
                self.area_in_use += in_use * w
                self.area_waiting += waiting * w
            self.last = now

    def areas(self) -> tuple[float, float]:
        """The time integrals over the whole window (as fast/run.py's _queue_counters brings them to its end)."""
        w = max(0.0, self.end - max(self.last, self.ramp))
        in_use, waiting = self.counts()
        return self.area_in_use + in_use * w, self.area_waiting + waiting * w


class ArraySlots(simpy.Resource):
    """An array's slots (the "array" rule): a ``simpy.Resource`` in its row of the table.

    Its event order is SimPy's own (the fast engine copies it); its hooks only bring
    the row's counters up to date before each change: a request joins the queue
    (fast/queues.request), is granted (trigger_put), leaves it aborted (withdraw), or
    gives its slot back (release_slot).
    """

    def __init__(self, env: simpy.Environment, queue: Queue) -> None:
        super().__init__(env, capacity=queue.queue_depth)
        self.table_row = queue
        queue.slots = self

    def request(self) -> simpy.resources.resource.Request:
        self.table_row.advance(self._env.now)
        return _SlotRequest(self)

    def _do_put(self, event: simpy.resources.resource.Request) -> None:
        if len(self.users) < self.capacity:  # it grants the first request
            self.table_row.advance(self._env.now)
        super()._do_put(event)

    def _do_get(self, event: simpy.resources.resource.Release) -> None:
        self.table_row.advance(self._env.now)
        super()._do_get(event)


class _SlotRequest(simpy.resources.resource.Request):
    resource: ArraySlots

    def cancel(self) -> None:
        if not self.triggered:  # still queued: it leaves the queue
            self.resource.table_row.advance(self.env.now)
        super().cancel()


class _Simulation:
    def __init__(
        self,
        model: Model,
        policy: Any,
        trace: bool,
        progress: Callable[[float], None] | None,
        live: Callable[[Live], None] | None = None,
        live_step: float = 0.0,
    ):
        self.model = model
        self.env = simpy.Environment()
        self.progress = progress
        self.live, self.live_step = live, live_step
        self.streams = make_streams(model)  # see streams.py: common random numbers across policies
        policy_rngs = self.streams.policies
        C = len(model.controllers)

        self.table = PathTable(
            [p.name for p in model.paths],
            [model.arrays[p.array].name for p in model.paths],
            [p.alua for p in model.paths],
            [p.bandwidth for p in model.paths],
            controllers=[p.controller for p in model.paths],
            controller_names=[c.name for c in model.controllers],
            weights=[p.weight for p in model.paths],
            numa_nodes=[p.numa_node for p in model.paths],
            numa_distances=[h.numa_distances for h in model.host_params] or None,
            hosts=[p.host for p in model.paths],
        )
        # NUMA: host seconds an attempt pays, by (job, path), only when some pair pays something
        self.numa = model.numa
        self.numa_hosts = model.host_params
        # the hosts' cores (model/cpu.py): when each is next free and its busy seconds in the window (fast: S.cpu_*)
        self.cpu = model.cpu
        n_cores = len(self.cpu.core_host) if self.cpu is not None else 0
        self.cpu_free = [0.0] * n_cores
        self.cpu_busy = [0.0] * n_cores
        self.views = [PathView(self.table, p.index) for p in model.paths]
        # The wire's truth; table.up is what the host believes (it learns after its detection delay).
        self.phys_up = [True] * C
        self.epoch = [0] * C  # bumped when a nexus goes down: frames in flight on it are lost
        self.extra = [c.extra for c in model.controllers]  # one-way seconds added (distance, latency steps)
        self.loss = [c.loss_ppm for c in model.controllers]  # any frame's (the larger of the two below): draw or not
        self.loss_op = [list(c.op_loss()) for c in model.controllers]  # a read's frames, a write's (loss_ops; fast: S.loss_op)
        repl = model.replication
        self.repl_extra = repl.extra if repl else 0.0
        self.repl_loss = repl.loss_ppm if repl else 0.0
        self.repl_ok = True
        self.alive = [True] * len(model.arrays)
        self.wire_free = [[0.0, 0.0] for _ in range(model.n_wires)]  # own wires, shared links, replication, inter-controller
        # the fabric (issue 33): credits and back-pressure on the shared links, and each link's port's credit_return now
        self.fabric = model.fabric
        self.cret = [list(ln.credit_return) for ln in model.links]
        self.held = [[0.0, 0.0] for _ in model.links]  # seconds in the window each link was held by back-pressure
        self.frame_rows = [frame_row(c.transport, c.mtu) for c in model.controllers]  # frames (issue 33): model/frames.py
        self.frame_bytes = [[0.0] * 4 for _ in model.controllers]  # per nexus: payload, then wire bytes, per direction
        self.cross = [p.crossing for p in model.paths]  # the path's I/O crosses to its volume's owner (owner faults flip it)
        # implicit ALUA: commands each controller received per (volume, array) since the last check (fast: S.ia_count)
        self.ia_count = [[0] * n for _a, n, _ps in model.cells]
        # Every queue an I/O can wait in (Model.queues), a row each as the fast engine lays them out; an array's
        # slots are a simpy.Resource in its row. Per device its "host" rows (DeviceModel.admission) and the row
        # throttling changes; per path its "path" row (NVMe-oF: its controller's tags) and its "refuse" row (the
        # target port it lands on); -1: none.
        window = (model.ramp, model.end)
        self.queues = [Queue(q, window) for q in model.queues]
        n_vms = max((j.vm for j in model.jobs), default=0) + 1
        for q in self.queues:
            if q.dsnro > 0:
                q.out, q.held = [0] * n_vms, [0] * n_vms
        self.slots = [ArraySlots(self.env, self.queues[r]) for r in model.queue_rows(ARRAY_SLOTS)]
        self.device_queue = model.queue_rows(DEVICE_QUEUE)
        tags, ports = model.queue_rows(NVME_TAGS), model.queue_rows(TARGET_PORT)
        ctrl_of = [p.controller for p in model.paths]
        self.path_queue = [tags[c] if c >= 0 else -1 for c in ctrl_of]
        port_of = [model.controllers[c].port if c >= 0 else -1 for c in ctrl_of]
        self.port_queue = [ports[t] if t >= 0 else -1 for t in port_of]
        self.path_queues_on = any(r >= 0 for r in self.path_queue)
        self.waiters: list[simpy.Event] = []  # I/Os waiting for the host to see a path change
        n_slots = sum(j.iodepth for j in model.jobs)
        self.attempt_of: list[tuple[int, int] | None] = [None] * n_slots  # (seq, attempt) on the wire, per job slot
        self.mirrors: list[Any] = [None] * n_slots  # the mirror process of a slot's write, while it runs
        self.issued_at = [math.inf] * n_slots  # when each slot's I/O was issued (a closed loop's slot always holds one)
        # per open-loop job, arrivals waiting for one of its iodepth slots and the slots waiting for an arrival
        J = len(model.jobs)
        self.backlog: list[deque[Any]] = [deque() for _ in range(J)]
        self.idle: list[deque[Any]] = [deque() for _ in range(J)]
        # per job slot, the "path" row and the "refuse" row (target port) its attempt holds a place of (-1: none)
        self.held_path = [-1] * n_slots
        self.held_port = [-1] * n_slots
        self.taken = [0] * J  # I/Os each job has issued: a trace's k-th record is its k-th I/O (in arrival order)

        n_bins = max(1, int(np.ceil(model.end / model.interval - 1e-9)))
        queue_depth = [self.queues[r].queue_depth for r in self.device_queue]
        self.rec = Recorder(
            len(model.paths),
            n_bins,
            model.n_wires,
            (model.ramp, model.end),
            model.interval,
            len(model.devices),
            model.host_queues,
            queue_depth,
            [j.vm for j in model.jobs],
            len(model.workloads),
            stall_windows(model.faults, model.end),
            *numa_nodes(model),
        )
        self.wires = self.rec.record  # busy time, queueing time and frames per wire and direction
        self.events: list[dict[str, Any]] = []
        self.trace: list[tuple[Any, ...]] | None = [] if trace else None
        self.seq = 0

        # the truth the clairvoyant oracle reads (truth.py): refreshed before its calls only
        self.table.truth = reference_truth(model, self)
        self.policies = []
        for d in model.devices:
            views = [self.views[p] for p in d.paths]
            device = DeviceView(d.name, views, lambda: self.env.now, self._logger(d.name), model.hosts[d.host], d.volume)
            pol = build_policy(policy if d.policy is None else d.policy)  # a device may run its own (issue 32)
            pol.bind(device, policy_rngs[d.index])
            self.policies.append(pol)

    def _logger(self, device: str) -> Callable[[str, dict[str, Any]], None]:
        def log(event: str, details: dict[str, Any]) -> None:
            self.events.append({"t": float(self.env.now), "device": device, "event": event, **details})

        return log

    # -- the life of one I/O ---------------------------------------------
    def job_slot(self, job: JobModel, slot: int) -> Proc:
        """One of a job's ``iodepth`` slots: issue, wait for completion, repeat (open loop: take the next arrival).
        Fast twin: fast/io_life.next_io."""
        if job.rate_iops <= 0:
            trace = job.trace  # replay_no_stall: the trace's records as fast as iodepth lets, then the slot stops
            while True:
                if trace is not None and self.taken[job.index] >= len(trace):
                    return
                self.rec.issue(self.env.now)
                yield from self.io_life(self.new_io(job, slot, self.env.now))
        backlog, idle = self.backlog[job.index], self.idle[job.index]
        while True:
            if backlog:
                arrived = backlog.popleft()
                self.rec.device(self.env.now, job.device, 0, -1, job.index)
            else:
                woken = self.env.event()
                idle.append(woken)
                arrived = yield woken
            yield from self.io_life(self.new_io(job, slot, arrived))

    def arrivals(self, job: JobModel) -> Proc:
        """An open-loop job's arrivals: each is issued now, to an idle slot of the job or into its backlog (fast twin:
        fast/io_life.arrival)."""
        gaps, backlog, idle = self.streams.arrivals[job.index], self.backlog[job.index], self.idle[job.index]
        cap = self.model.backlog_cap
        while True:
            gap = gaps.next()
            if gap == math.inf:  # a trace's last record has arrived (or a schedule's rate stays 0)
                return
            yield self.env.timeout(gap)
            now = self.env.now
            if job.refuse and not idle:  # iodepth_full = "refuse": counted, never issued (as io_submit's EAGAIN)
                self.rec.count(C_REFUSED)
                continue
            self.rec.issue(now)
            if idle:
                idle.popleft().succeed(now)
            else:
                if len(backlog) >= cap:
                    raise _Overload(job.index, now, len(backlog))
                backlog.append(now)
                self.rec.device(now, job.device, 0, 1, job.index)

    # -- the queues (Model.queues; fast/queues.py keeps the same table in arrays) --------------------------
    def take(self, r: int, d: int, first: bool, j: int) -> Proc:
        """fast/queues.take: an I/O of device ``d`` takes a place of queue ``r`` (the "host" and "path" rules), or
        waits in its FIFO, in order, until :meth:`give_back` hands it one. ``first``: the device's first queue, where
        ACTV starts (taking it is ACTV, waiting there QUED); waiting at a later one moves ACTV back to QUED. ``j``: the
        I/O's job, whose workload (VM) counts the same."""
        q, now = self.queues[r], self.env.now
        q.advance(now)
        if q.dsnro > 0:  # ESXi's DSNRO on this device queue: the I/O's VM has one more outstanding here
            w = self.model.jobs[j].vm
            q.out[w] += 1
            if q.out[w] == 1:
                q.worlds += 1
            if q.in_use < q.queue_depth and self.dsnro_room(q, w):
                q.in_use += 1
                q.held[w] += 1
                self.rec.device(now, d, 1, 0, j)
                return
        elif q.queue_depth <= 0 or q.in_use < q.queue_depth:
            q.in_use += 1
            if first:
                self.rec.device(now, d, 1, 0, j)
            return
        woken = self.env.event()
        q.waiting.append((woken, d, j))
        self.rec.device(now, d, 0 if first else -1, 1, j)
        yield woken  # give_back() handed its place over: still counted in use

    def give_back(self, r: int, d: int, first: bool, j: int) -> None:
        """fast/queues.give_back: an I/O of device ``d`` is done with queue ``r``; the first waiting is handed its
        place, and as many more as a queue depth grown back by throttling has room for."""
        q, now = self.queues[r], self.env.now
        q.advance(now)
        if first:
            self.rec.device(now, d, -1, 0, j)
        if q.dsnro > 0:
            self.dsnro_give_back(q, self.model.jobs[j].vm, now)
            return
        waiting = q.waiting
        if waiting and q.in_use <= q.queue_depth:
            self.hand_over(q, now)  # the place goes on: in use unchanged
        else:
            q.in_use -= 1
        while waiting and q.in_use < q.queue_depth:
            q.in_use += 1
            self.hand_over(q, now)

    @staticmethod
    def dsnro_room(q: Queue, w: int) -> bool:
        """fast/queues.dsnro_room: whether ESXi's Disk.SchedNumReqOutstanding lets VM ``w`` take one more place of
        device queue ``q``: always while it is alone (no other VM has I/O outstanding on the device: a lone VM fills
        DQLEN); else below DSNRO, all VMs' places together (all_vms) or its own (per_vm)."""
        if q.worlds <= 1:
            return True
        return (q.held[w] if q.per_vm else q.in_use) < q.dsnro

    def dsnro_give_back(self, q: Queue, w: int, now: float) -> None:
        """fast/queues.dsnro_give_back: an I/O of VM ``w`` gives its place of device queue ``q`` (with DSNRO) back;
        the waiting are handed places in order while the queue depth and DSNRO allow (per_vm: one whose VM is at its
        cap is passed over and keeps its place in line)."""
        q.in_use -= 1
        q.held[w] -= 1
        q.out[w] -= 1
        if q.out[w] == 0:
            q.worlds -= 1  # its last I/O here: maybe alone again, the cap lifts
        waiting, jobs = q.waiting, self.model.jobs
        i = 0
        while i < len(waiting) and q.in_use < q.queue_depth:
            woken, d, j = waiting[i]
            v = jobs[j].vm
            if self.dsnro_room(q, v):
                del waiting[i]
                q.in_use += 1
                q.held[v] += 1
                self.rec.device(now, d, 1, -1, j)
                woken.succeed()
            elif not q.per_vm:
                break  # all VMs' cap: no one behind fits either
            else:
                i += 1

    def hand_over(self, q: Queue, now: float) -> None:
        """fast/queues.hand_over: the first I/O waiting at ``q`` has its place: ACTV again (it was QUED), it goes on."""
        woken, d, j = q.waiting.popleft()
        self.rec.device(now, d, 1, -1, j)
        woken.succeed()

    def admit(self, d: int, j: int) -> Proc:
        """fast/queues.admit: device ``d``'s "host" queues (DeviceModel.admission: its device queue, its host's
        adapter's, ...) take the I/O in order, each as soon as it has a place."""
        for k, r in enumerate(self.model.devices[d].admission):
            yield from self.take(r, d, k == 0, j)

    def release(self, d: int, j: int) -> None:
        """fast/queues.release_admission: an I/O of device ``d`` is done (completed or failed): its "host" places go
        back, last taken first."""
        admission = self.model.devices[d].admission
        for k in range(len(admission) - 1, -1, -1):
            self.give_back(admission[k], d, k == 0, j)

    def path_take(self, io: IORequest, p: int, d: int) -> Proc:
        """fast/io_life.begin_attempt's take: path ``p``'s "path" queue (NVMe-oF: its controller's tags) gives the
        attempt a place, or it waits for one there, in order (blk_mq_get_tag sleeps on the hardware queue's tags:
        the path is not chosen again); QUED meanwhile."""
        r = self.path_queue[p]
        if r < 0:
            return
        yield from self.take(r, d, False, io.job)
        self.held_path[io.slot] = r

    def path_release(self, io: IORequest) -> None:
        """fast/queues.path_release: the attempt ended (completed, lost, aborted, QUEUE FULL): its "path" place goes
        to the first waiting, if any."""
        r = self.held_path[io.slot]
        if r < 0:
            return
        self.held_path[io.slot] = -1
        self.give_back(r, -1, False, -1)

    def throttle(self, d: int, qfull: bool) -> None:
        """fast/queues.throttle: ESXi's adaptive queue depth (KB 1008113) on device ``d``'s queue:
        ``qfull_sample_size`` QUEUE FULL statuses halve its queue depth (esxtop's DQLEN); then ``qfull_threshold``
        good statuses grow it back by one, up to the scenario's ``queue_depth``."""
        host = self.model.host_params[self.model.devices[d].host]
        if host.qfull_sample_size <= 0:
            return
        q = self.queues[self.device_queue[d]]
        if qfull:
            q.qfull_seen += 1
            if q.qfull_seen >= host.qfull_sample_size:
                q.qfull_seen = 0
                q.good_seen = 0
                if q.queue_depth > 1:
                    q.queue_depth //= 2
                    self.rec.queue_depth(self.env.now, d, q.queue_depth)
        elif q.queue_depth < q.row.queue_depth:
            q.good_seen += 1
            if q.good_seen >= host.qfull_threshold:
                q.good_seen = 0
                q.queue_depth += 1
                self.rec.queue_depth(self.env.now, d, q.queue_depth)

    def accept(self, io: IORequest, p: int, deadline: float) -> Proc:
        """fast/queues.port_accept (the "refuse" rule): the command reached the array's target port: it takes it, or,
        holding port_queue_depth commands already, answers QUEUE FULL (TASK SET FULL, status 0x28) at once, a status
        frame back to the host."""
        cell = self.model.paths[p].cell
        if cell >= 0:  # implicit ALUA counts the commands each controller receives
            self.ia_count[cell][self.model.paths[p].array_controller] += 1
        r = self.port_queue[p]
        if r < 0:
            return
        q, now = self.queues[r], self.env.now
        q.advance(now)
        if q.in_use >= q.queue_depth:
            if q.ramp <= now < q.end:
                q.qfull += 1
            yield from self.leg(p, TO_HOST, 0, deadline, op=0 if io.op == "read" else 1)  # the QUEUE FULL status
            raise QueueFull
        q.in_use += 1
        self.held_port[io.slot] = r

    def port_done(self, io: IORequest) -> None:
        """fast/queues.port_done: the array sent the command's last frame (data and status, or status), or the
        attempt ended: the port lets go."""
        r = self.held_port[io.slot]
        if r >= 0:
            q = self.queues[r]
            q.advance(self.env.now)
            q.in_use -= 1
            self.held_port[io.slot] = -1

    def new_io(self, job: JobModel, slot: int, issued_at: float) -> IORequest:
        """The job slot's next I/O, issued at ``issued_at`` (fast twin: fast/io_life.new_io)."""
        trace = job.trace
        if trace is not None:  # the k-th I/O is the trace's k-th record: its op and size, no draw
            k = self.taken[job.index]
            op, size = ("read" if trace.ops[k] == 0 else "write"), int(trace.sizes[k])
        else:
            op, size = self._draw(job)
        self.taken[job.index] += 1
        self.seq += 1
        self.issued_at[slot] = issued_at
        seq_job = job.index if job.sequential else -1  # the fast engine's view.s_seq of the slot
        return IORequest(self.seq, job.index, op, size, issued_at, slot=slot, node=job.numa_node, seq_job=seq_job)

    def _draw(self, job: JobModel) -> tuple[str, int]:
        """Op and size from the job's own stream (common random numbers across policies)."""
        draws = self.streams.jobs[job.index]
        op = "read" if draws.next() < job.read_fraction else "write"
        size = job.sizes[0]
        if len(job.sizes) > 1:
            u, acc = draws.next(), 0.0
            for size, weight in zip(job.sizes, job.size_weights):
                acc += weight
                if u < acc:
                    break
        return op, size

    def io_life(self, io: IORequest) -> Proc:
        """One I/O from issue to completion (or failure). Its fast twins, step by step (fast/io_life.py): the host's
        queues (``admit``; queue_granted), an attempt's top (begin_attempt, send_attempt), its end (end_attempt),
        QUEUE FULL (qfull_back), a lost frame (lost), the io_timeout (abort), completion (complete)."""
        env, table = self.env, self.table
        job = self.model.jobs[io.job]
        policy = self.policies[job.device]
        host = self.model.host_params[job.host]
        d = job.device
        yield from self.admit(d, io.job)
        kavg = env.now - io.issued_at
        path_wait = 0.0  # time spent waiting at a "path" queue (NVMe-oF: a controller's tag), host queueing too
        while True:
            path = policy.select(io)
            if path is None:  # no usable path: wait for a change (ESXi APD, dm queue_if_no_path), at most apd_timeout
                if not (yield from self.wait_for_change(host.apd_timeout, policy.wake_at())):
                    self.rec.fail(env.now, env.now - io.issued_at, io.job)  # visible: counted as failed, the job slot moves on
                    self.issued_at[io.slot] = math.inf
                    self.release(d, io.job)
                    return
                continue
            p = path.index
            if self.path_queues_on:
                asked = env.now
                yield from self.path_take(io, p, d)
                path_wait += env.now - asked
            io.attempts += 1
            if io.attempts > 1:
                self.rec.count(C_RETRIED)
            started = env.now
            table.start(p, io.size)
            self.rec.path_start(env.now, p)
            policy.on_start(path, io)
            deadline = started + host.io_timeout
            if deadline == started:  # a timeout too small to move the clock still comes after the send
                deadline = math.nextafter(started, math.inf)
            if deadline < math.inf:
                self.arm_abort(io, deadline)
            qfull = False
            cpu = self.cpu
            try:
                yield from self.exchange(io, p, deadline)
                if cpu is not None and cpu.job_irq[io.job] >= 0 and cpu.path_complete[p] > 0.0:  # its interrupt core completes it
                    k, f = cpu.completion(io.job, self.model.paths[p].numa_node)
                    yield env.timeout(self.cpu_run(k, cpu.path_complete[p] * f))
                lost = None
            except QueueFull:
                lost, qfull = None, True
            except PathLost as e:
                lost = e
            except simpy.Interrupt:  # abort(): io_timeout passed
                lost = PathLost(timed_out=True)
                mirror = self.mirrors[io.slot]
                if mirror is not None and mirror.is_alive:
                    mirror.interrupt()  # the peer drops its copy too
            self.attempt_of[io.slot] = None
            self.mirrors[io.slot] = None
            self.port_done(io)  # lost or aborted while the port held it
            self.path_release(io)
            # Not a ``finally``: I/Os still in flight when the run ends must stay counted.
            table.end(p, io.size)
            self.rec.path_end(env.now, p)
            if qfull:  # counted, maybe throttled; sent again (on the path the policy picks) after the retry delay
                self.rec.qfull(env.now, p, d)
                self.throttle(d, True)
                if host.qfull_retry_delay > 0:
                    yield env.timeout(host.qfull_retry_delay)
                continue
            if lost is not None:
                if lost.timed_out:
                    self.rec.count(C_TIMED_OUT)  # the host aborts the command and retries at once
                elif table.up[p]:
                    yield from self.wait_for_change(math.inf)  # lost in silence: retried once the host notices
                # the failed attempt's end, just before the retry (dm-mpath multipath_end_io: the selector's end_io
                # for an errored request, then it is requeued; fast/io_life.fail_attempt)
                policy.on_fail(path, io, env.now - started)
                continue
            on_path = env.now - started
            policy.on_complete(path, io, on_path)
            self.rec.complete(env.now, io.op, io.size, env.now - io.issued_at, p, on_path, d, kavg + path_wait, io.job)
            if self.trace is not None:
                self.trace.append((io.seq, io.job, io.op, io.size, io.issued_at, env.now, table.names[p], io.attempts))
            self.issued_at[io.slot] = math.inf
            self.throttle(d, False)
            self.release(d, io.job)
            return

    def arm_abort(self, io: IORequest, deadline: float) -> None:
        """The host's io_timeout for this attempt: at ``deadline``, if it is still unanswered, abort it.

        One timer per attempt, created when the command is sent; a timer whose attempt has
        ended does nothing. The abort is an interrupt of the I/O's process (an urgent event
        at that instant), so it comes before any other event of that instant.
        """
        key = (io.seq, io.attempts)
        self.attempt_of[io.slot] = key
        proc = self.env.active_process
        assert proc is not None  # called from the I/O's process
        timer = self.env.timeout(deadline - self.env.now)
        timer.callbacks.append(lambda _t: proc.interrupt() if self.attempt_of[io.slot] == key else None)

    def wait_for_change(self, timeout: float, wake: float = math.inf) -> Generator[simpy.Event, Any, bool]:
        """Wait until the host sees a path change: True, or False after ``timeout`` seconds (fast/waits.start_wait);
        True at ``wake`` too (the policy's wake time, fast/waits.arm_wake)."""
        woken = self.env.event()
        self.waiters.append(woken)
        if timeout < math.inf:
            timer = self.env.timeout(timeout)

            def expire(_t: simpy.Event) -> None:
                if not woken.triggered:
                    woken.succeed(False)

            timer.callbacks.append(expire)
        if wake < math.inf:
            alarm = self.env.timeout(max(wake - self.env.now, 0.0))

            def ring(_t: simpy.Event) -> None:
                if not woken.triggered:
                    woken.succeed(True)

            alarm.callbacks.append(ring)
        changed: bool = yield woken
        return changed

    def wake_waiters(self) -> None:
        """The host saw a path change: every I/O waiting for one goes on (fast/waits.wake_waiters)."""
        waiting, self.waiters = self.waiters, []
        for ev in waiting:
            if not ev.triggered:
                ev.succeed(True)

    def exchange(self, io: IORequest, p: int, deadline: float) -> Proc:
        """The frames of one command on path ``p``, by protocol and op (fast/io_life.on_leg, status_leg)."""
        path = self.model.paths[p]
        array = path.array
        # the attempt's first frame carries the cross-node hop (docs/model.md, NUMA)
        add = self.numa_hosts[path.host].numa_extra(io.node, path.numa_node) if self.numa else 0.0
        cpu = self.cpu
        if cpu is not None and cpu.job_core[io.job] >= 0 and cpu.path_submit[p] > 0.0:
            # its job's core submits it (reserved now, FIFO); the first frame leaves when that is done (fast/first_add)
            add += self.cpu_run(cpu.job_core[io.job], cpu.path_submit[p])
        if io.op == "read":
            yield from self.leg(p, TO_ARRAY, 0, deadline, add, op=0)  # READ command
            yield from self.accept(io, p, deadline)
            yield from self.serve(array, "read", io.size)
            self.port_done(io)
            yield from self.leg(p, TO_HOST, io.size, deadline, op=0)  # data + status
            return
        if self.model.protocol == "scsi":
            yield from self.leg(p, TO_ARRAY, 0, deadline, add, op=1)  # WRITE command
            yield from self.accept(io, p, deadline)
            yield from self.leg(p, TO_HOST, 0, deadline, xrdy=True, op=1)  # XFER_RDY
            yield from self.leg(p, TO_ARRAY, io.size, deadline, op=1)  # data
        else:
            yield from self.leg(p, TO_ARRAY, io.size, deadline, add, op=1)  # NVMe command with in-capsule data
            yield from self.accept(io, p, deadline)
        yield from self.store(array, path.mirror, io)
        self.port_done(io)
        yield from self.leg(p, TO_HOST, 0, deadline, op=1)  # status

    def cpu_run(self, k: int, cost: float) -> float:
        """Core ``k`` takes ``cost`` seconds of work arriving now, after what it already has (FIFO, not preempted):
        returns how long until it is done (fast/cpu.cpu_run). Its busy time in the window is counted now."""
        now = self.env.now
        start = max(now, self.cpu_free[k])
        done = start + cost
        self.cpu_free[k] = done
        w = min(done, self.model.end) - max(start, self.model.ramp)
        if w > 0.0:
            self.cpu_busy[k] += w
        return done - now

    def serialise(self, w: int, direction: int, t: float, nbytes: int, bandwidth: float) -> float:
        """Queue a frame for wire ``w`` (FIFO per direction) from time ``t``; returns when it is on the far side
        (fast/wire.serialise)."""
        free = self.wire_free[w]
        start = max(t, free[direction])
        busy = nbytes / bandwidth
        done = start + busy
        free[direction] = done
        m = self.wires
        m.wire_busy[w, direction] += busy
        m.wire_wait[w, direction] += start - t
        m.wire_frames[w, direction] += 1
        return done

    # -- the fabric (issue 33; fast/fabric.py) ------------------------------------
    def link_rate(self, li: int, direction: int) -> float:
        """Bytes per second link ``li`` serialises in ``direction``: its bandwidth, or its credit bound when lower
        (bb_credits x frame_size / the round trip of a frame and its R_RDY, with the port's credit_return now)."""
        ln = self.model.links[li]
        bw = ln.bandwidth
        if ln.credit_bytes > 0.0:
            r = ln.credit_bytes / (ln.rtt0 + self.cret[li][direction])
            if r < bw:
                bw = r
        return bw

    def fabric_wires(self, p: int, c: int, direction: int, t: float, nbytes: int) -> float:
        """A frame's wires in the order it crosses them (to the array: the nexus's own wire, the route's links, the
        inter-controller link; to the host the reverse), each link at its credit-limited rate; a link whose next
        link drains slower than it feeds is held until the next has all but the switch's buffer (back-pressure)."""
        model = self.model
        ctrl = model.controllers[c]
        nc = len(model.controllers)
        cross = self.cross[p]
        icbw = model.arrays[model.paths[p].array].ic_bandwidth if cross else None
        if direction == TO_ARRAY and ctrl.bandwidth:
            t = self.serialise(c, direction, t, nbytes, ctrl.bandwidth)
        if direction == TO_HOST and icbw:
            t = self.serialise(model.ic_wire(model.paths[p].array), direction, t, nbytes, icbw)
        order = ctrl.links if direction == TO_ARRAY else ctrl.links[::-1]
        for k, li in enumerate(order):
            rate = self.link_rate(li, direction)
            t = self.serialise(nc + li, direction, t, nbytes, rate)
            # back-pressure: the link before finishes sending no earlier than this one has drained all but the
            # switch's buffer for it (its bb_credits x frame_size): done here - the transfer's time there (the
            # store-and-forward lag) - the buffer's drain time here; upstream while it binds
            held, j, nxt = t, k - 1, rate
            while j >= 0:
                lj = order[j]
                buf = model.links[lj].credit_bytes
                if buf <= 0.0:
                    break
                rj = self.link_rate(lj, direction)
                push = held - nbytes / rj - buf / nxt
                free = self.wire_free[nc + lj]
                old = free[direction]
                if push <= old:
                    break
                lo, hi = max(old, model.ramp), min(push, model.end)
                if hi > lo:
                    self.held[lj][direction] += hi - lo
                free[direction] = push
                held, nxt, j = push, rj, j - 1
        if direction == TO_ARRAY and icbw:
            t = self.serialise(model.ic_wire(model.paths[p].array), direction, t, nbytes, icbw)
        if direction == TO_HOST and ctrl.bandwidth:
            t = self.serialise(c, direction, t, nbytes, ctrl.bandwidth)
        return t

    def lose(self, draws: Any, ppm: float, op_ppm: float, recovery: float, delay: float, limit: float) -> float:
        """Each lost copy of a frame is resent after ``recovery``: the delay grows until one gets through
        (fast/wire.lose). The draws run at ``ppm`` (the nexus's loss, whatever the op), so a frame takes as many
        draws under ``loss_ops = "write"`` as under ``"both"``; it is lost at ``op_ppm`` (<= ppm, 0: spared) while the
        leading draws fall under that: the same losses as a loop of its own at ``op_ppm``, but the stream in step."""
        p, q = ppm * 1e-6, op_ppm * 1e-6
        n = lost = 0
        full = delay
        hit = True
        while n < MAX_RESENDS:
            u = draws.next()
            if not u < p:
                break
            if hit and u < q:
                delay += recovery
                lost += 1
            else:
                hit = False
            full += recovery
            n += 1
            if full > limit:
                break
        self.rec.count(C_FRAMES_LOST, lost)
        return delay

    def leg(self, p: int, direction: int, nbytes: int, deadline: float, add: float = 0.0, xrdy: bool = False, *, op: int) -> Proc:
        """One frame over path ``p``: queue for each wire, serialise, propagate, maybe be lost and resent (fast/wire.leg).

        ``add``: host seconds added before the frame leaves (the NUMA hop of an attempt's first frame). On a nexus
        with a transport the leg is its frames: payload and every header (model/frames.py; ``xrdy``: the XFER_RDY).
        ``op``: the I/O's (0 read, 1 write), for the loss its path's loss_ops give it."""
        env, model = self.env, self.model
        c = model.paths[p].controller
        ctrl = model.controllers[c]
        now = env.now
        delay = self.streams.paths[c].next() + self.extra[c]
        if add != 0.0:
            delay += add
        if self.frame_rows[c][F_MODE]:
            fb = self.frame_bytes[c]
            fb[direction] += nbytes
            nbytes, _frames = leg_wire(self.frame_rows[c], direction, nbytes, 1 if xrdy else 0)
            fb[2 + direction] += nbytes
        if nbytes and self.fabric:
            delay += self.fabric_wires(p, c, direction, now, nbytes) - now
        elif nbytes:
            t = now
            if ctrl.bandwidth:
                t = self.serialise(c, direction, t, nbytes, ctrl.bandwidth)
            for li in ctrl.links:
                t = self.serialise(len(model.controllers) + li, direction, t, nbytes, model.links[li].bandwidth)
            if self.cross[p]:  # then the link between the array's controllers, to the owner and back
                bw = model.arrays[model.paths[p].array].ic_bandwidth
                if bw:
                    t = self.serialise(model.ic_wire(model.paths[p].array), direction, t, nbytes, bw)
            delay += t - now
        if self.cross[p]:
            delay += model.arrays[model.paths[p].array].ic_latency
        if self.loss[c] > 0:
            # every frame draws at the nexus's full loss, whatever its op (lose): a frame the loss spares takes the
            # draws it would take under "both" and is not lost, so at queue depth 1 on one path a write-only drop
            # loses the same writes' frames as a drop of every frame
            delay = self.lose(self.streams.loss[c], self.loss[c], self.loss_op[c][op], ctrl.loss_recovery, delay, deadline - now)
        epoch = self.epoch[c]
        yield env.timeout(delay)  # past the deadline, arm_abort's interrupt comes first
        if self.epoch[c] != epoch or not self.phys_up[c]:
            raise PathLost

    def serve(self, array: int, op: str, size: int) -> Proc:
        """The "array" rule: wait for one of the array's slots (FIFO), then the service time (plus its part per KiB).
        Fast twins: fast/queues.request (or grant_in_line), fast/io_life.start_service, on_service_done."""
        with self.slots[array].request() as slot:
            yield slot
            draw = self.streams.service[array][0 if op == "read" else 1].next()
            yield self.env.timeout(draw + self.model.arrays[array].per_kib * size / 1024.0)

    def store(self, array: int, peer: int | None, io: IORequest) -> Proc:
        """Persist a write; on a stretched volume, mirror it in parallel (unless replication is broken)."""
        if peer is None or not self.repl_ok or not self.alive[peer]:
            yield from self.serve(array, "write", io.size)
            return
        mirrored = self.env.process(self.mirror(array, peer, io))
        self.mirrors[io.slot] = mirrored
        yield from self.serve(array, "write", io.size)
        yield mirrored

    def mirror(self, array: int, peer: int, io: IORequest) -> Proc:
        """Forward a write to the peer array, let it store it, carry the ack back (an abort ends it early). Fast twins:
        fast/io_life.send_mirror, mirror_at_peer, start_mirror_service, mirror_end, abort_mirror."""
        try:
            yield from self._mirror(array, peer, io)
        except simpy.Interrupt:
            pass  # io_life aborted the write: the peer drops its copy (serve's ``with`` frees its slot)

    def _mirror(self, array: int, peer: int, io: IORequest) -> Proc:
        repl = self.model.replication
        assert repl is not None
        w = len(self.model.controllers) + len(self.model.links)
        direction = 0 if array == repl.arrays[0] else 1
        now = self.env.now
        delay = self.streams.replication.next() + self.repl_extra
        if repl.bandwidth:
            delay += self.serialise(w, direction, now, io.size, repl.bandwidth) - now
        if self.repl_loss > 0:
            delay = self.lose(self.streams.loss[-1], self.repl_loss, self.repl_loss, repl.loss_recovery, delay, math.inf)
        yield self.env.timeout(delay)
        yield from self.serve(peer, "write", io.size)
        delay = self.streams.replication.next() + self.repl_extra
        if self.repl_loss > 0:
            delay = self.lose(self.streams.loss[-1], self.repl_loss, self.repl_loss, repl.loss_recovery, delay, math.inf)
        yield self.env.timeout(delay)

    # -- the timeline ------------------------------------------------------
    def log_path(self, p: int, event: str) -> None:
        t = self.table
        self.events.append(
            {
                "t": float(self.env.now),
                "device": self.model.devices[self.model.paths[p].device].name,
                "event": event,
                "path": t.names[p],
                "alua": t.alua[p],
                "up": bool(t.up[p]),
            }
        )

    def path_changed(self, p: int, event: str) -> None:
        """The host sees path ``p`` change: log it, tell the device's policy (fast/faults.path_changed)."""
        self.log_path(p, event)
        self.policies[self.model.paths[p].device].on_path_change(self.views[p])

    def notice(self, c: int) -> None:
        """The host learns the nexus's state (detection delay after the change); waiting I/Os retry (fast/faults.notice)."""
        up = self.phys_up[c]
        for p in self.model.controller_paths(c):
            if self.table.up[p] != up:
                self.table.up[p] = up
                self.path_changed(p, "path_up" if up else "path_down")
        self.wake_waiters()

    def set_wire(self, c: int, up: bool) -> None:
        """The nexus's wire goes up or down now; the host notices after its detection delay (fast/faults.set_wire)."""
        self.phys_up[c] = up
        if not up:
            self.epoch[c] += 1
        timer = self.env.timeout(self.model.host_params[self.model.controllers[c].host].detection)

        def notice(_t: simpy.Event) -> None:
            self.notice(c)

        timer.callbacks.append(notice)

    def apply(self, f: Any) -> None:
        """One fault of the timeline, now (fast/faults.apply_fault)."""
        model = self.model
        if f.what == "implicit":
            self.implicit(f.array)
            return
        self.events.append({"t": float(self.env.now), "device": "", "event": "fault", "what": f.what, "fault": f.origin, "revert": f.revert})
        if f.what in ("path_down", "path_up", "array_down", "array_up"):
            up = f.what.endswith("_up")
            if f.array is not None:
                self.alive[f.array] = up
            for c in f.controllers:
                self.set_wire(c, up)
        elif f.what == "slow_drain":  # the link's port returns credits late, or stops draining until the revert
            ln = model.links[f.link]
            w = len(model.controllers) + f.link  # the link's wire
            for d in (TO_ARRAY, TO_HOST):
                if ln.drain[d]:
                    self.cret[f.link][d] = ln.credit_return[d] if f.credit_return < 0.0 else f.credit_return
                    if f.stop_until > 0.0 and self.wire_free[w][d] < f.stop_until:
                        self.wire_free[w][d] = f.stop_until
        elif f.what == "owner" or f.paths:  # alua by volume or port group, owner: the paths' states and crossings (issue 32)
            for p, state, cross in zip(f.paths, f.states, f.crossing):
                self.table.alua[p] = state
                if cross >= 0:
                    self.cross[p] = bool(cross)
                self.path_changed(p, "alua")
            self.wake_waiters()
        elif f.what == "alua":
            for c in f.controllers:
                for p in model.controller_paths(c):
                    self.table.alua[p] = f.state
                    self.path_changed(p, "alua")
            self.wake_waiters()
        elif f.what == "latency":
            if f.replication:
                self.repl_extra = model.replication.extra + f.add  # type: ignore[union-attr]
            for c in f.controllers:
                self.extra[c] = model.controllers[c].extra + f.add
        elif f.what == "loss":
            if f.replication:
                self.repl_loss = model.replication.loss_ppm if f.ppm < 0 else f.ppm  # type: ignore[union-attr]
            # the loss of the ops it names from now on, and none of the others' (a revert: the scenario's again)
            ops = (f.loss_ops in ("read", "both"), f.loss_ops in ("write", "both"))
            for c in f.controllers:
                self.loss[c] = model.controllers[c].loss_ppm if f.ppm < 0 else f.ppm
                self.loss_op[c] = list(model.controllers[c].op_loss()) if f.ppm < 0 else [f.ppm if o else 0.0 for o in ops]
        else:  # replication_down | replication_up: the mediator keeps the preferred site serving
            repl = model.replication
            assert repl is not None
            self.repl_ok = f.what == "replication_up"
            loser = repl.arrays[1] if repl.preferred_site == repl.arrays[0] else repl.arrays[0]
            for path in model.paths:
                if path.mirror is not None and path.array == loser:
                    self.table.alua[path.index] = path.alua if self.repl_ok else "unavailable"
                    self.path_changed(path.index, "alua")
            self.wake_waiters()

    def implicit(self, array: int) -> None:
        """Implicit ALUA's check of ``array`` (fast/faults.implicit_alua): each of its volumes moves to the controller
        that received more than twice as many of its commands as the owner since the last check (of several, the
        first with the most); the counts restart."""
        model, moved = self.model, False
        for g, (a, n, paths) in enumerate(model.cells):
            if a != array:
                continue
            counts = self.ia_count[g]
            owner = next((model.paths[p].array_controller for p in paths if not self.cross[p]), -1)
            best = 0
            for k in range(1, n):
                if counts[k] > counts[best]:
                    best = k
            if owner >= 0 and best != owner and counts[best] > 2 * counts[owner]:  # a clear majority (an assumption)
                for p in paths:
                    path = model.paths[p]
                    on_owner = path.array_controller == best
                    self.table.alua[p] = "AO" if on_owner and path.pref_ao else "ANO"
                    self.cross[p] = not on_owner
                    self.path_changed(p, "alua")
                moved = True
            self.ia_count[g] = [0] * n
        if moved:
            self.wake_waiters()

    def fault_timeline(self) -> Proc:
        """Apply every fault at its time (fast/faults.fault_loop)."""
        for f in self.model.timeline:
            if f.at > self.env.now:
                yield self.env.timeout(f.at - self.env.now)
            self.apply(f)

    def ticker(self) -> Proc:
        step = max(self.model.end / 100.0, self.model.interval)
        while True:
            yield self.env.timeout(step)
            self.progress(self.env.now)  # type: ignore[misc]

    def watcher(self) -> Proc:
        """Every ``live_step`` simulated seconds before the end: what every event before that instant did.

        Its wake-ups are urgent events scheduled long before, so each comes before every
        event of its instant (as the fast engine pauses before them); it changes nothing.
        """
        t, env = self.live_step, self.env
        while t < self.model.end:
            wake = simpy.Event(env)
            wake._ok, wake._value = True, None
            env.schedule(wake, simpy.events.URGENT, t - env.now)
            yield wake
            self.live(Live(env.now, self.rec.record, self.table.outstanding, self.table.outstanding_bytes))  # type: ignore[misc]
            t += self.live_step

    def run(self) -> RunMetrics:
        env, model = self.env, self.model
        slot = 0  # slots numbered as the fast engine numbers them: by job, then within it
        for job in model.jobs:
            for _ in range(job.iodepth):
                env.process(self.job_slot(job, slot))
                slot += 1
        for job in model.jobs:
            if job.rate_iops > 0:
                env.process(self.arrivals(job))
        if model.timeline:
            env.process(self.fault_timeline())
        if self.progress is not None:
            env.process(self.ticker())
        if self.live is not None and self.live_step > 0:
            env.process(self.watcher())
        try:
            env.run(until=model.end)
        except _Overload as e:
            job, now, waiting = e.args
            raise overload(model, model.jobs[job], now, waiting) from None
        self.rec.close(model.end)
        metrics = to_metrics(self.rec.record, len(model.paths), model.device_slots(), vm_slots(model.jobs))
        areas = np.array([q.areas() for q in self.queues], dtype=np.float64).reshape(-1, 2)
        metrics.queue_in_use_area, metrics.queue_waiting_area = areas[:, 0].copy(), areas[:, 1].copy()
        metrics.queue_qfull = np.array([q.qfull for q in self.queues], dtype=np.int64)
        metrics.wire_free_end = np.array(self.wire_free, dtype=np.float64).reshape(-1, 2)
        if any(c.transport for c in model.controllers):
            metrics.frame_bytes = np.array(self.frame_bytes, dtype=np.float64).reshape(-1, 4)
        if self.cpu is not None:
            metrics.cpu_busy = np.array(self.cpu_busy, dtype=np.float64)
        if self.fabric:
            metrics.link_held = np.array(self.held, dtype=np.float64).reshape(-1, 2)
        waiting = [b[0] for b in self.backlog if b]
        metrics.oldest_in_flight = min(self.issued_at + waiting, default=math.inf)
        # every I/O outstanding at the end, by job (slots numbered by job, then within it; fast twin: run.py)
        outstanding: list[tuple[float, float]] = []
        slot = 0
        for job in model.jobs:
            for _ in range(job.iodepth):
                if self.issued_at[slot] < math.inf:
                    outstanding.append((float(job.index), self.issued_at[slot]))
                slot += 1
            outstanding.extend((float(job.index), t) for t in self.backlog[job.index])
        metrics.in_flight_at_end = np.array(outstanding, dtype=np.float64).reshape(-1, 2)
        metrics.events = self.events
        for d, pol in zip(model.devices, self.policies):
            metrics.config_strings[d.name] = pol.config_string()
        if self.trace is not None:
            metrics.trace = self.trace
        return metrics


def run_reference(
    model: Model,
    policy: Any,
    *,
    trace: bool = False,
    progress: Callable[[float], None] | None = None,
    live: Callable[[Live], None] | None = None,
    live_step: float = 0.0,
) -> RunMetrics:
    """Simulate one run of ``model`` under ``policy`` (a spec, Policy class or instance).

    ``progress(now)`` is called about 100 times; ``live(Live)`` every
    ``live_step`` simulated seconds with what has been measured so far.
    """
    return _Simulation(model, policy, trace, progress, live, live_step).run()
