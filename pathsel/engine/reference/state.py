"""The reference engine's state: everything one run keeps, laid out from the model, and a queue's row.

:class:`State` holds it (the path table policies read, the wire's truth, the queues' table, the job slots,
the recorder, the policies bound to their devices); the classes of the other modules add the steps that
change it. Fast twins: the records :mod:`pathsel.engine.fast.layout` declares, laid out from the model by
fast/state.py (``Run``) and fast/fields.py.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import simpy

from ...metrics import stall_windows
from ...model import Model
from ...model.frames import frame_row
from ...model.queues import ARRAY_SLOTS, DEVICE_QUEUE, NVME_TAGS, TARGET_PORT, QueueModel
from ...policies import DeviceView, PathTable, PathView, build_policy
from ..recorder.bookkeeping import Recorder
from ..recorder.readout import Live
from ..recorder.record import new_record, numa_nodes
from ..streams import make_streams
from ..truth import reference_truth

# a simpy process: yields events, is sent their values
Proc = Generator[simpy.Event, Any, Any]

__all__ = ["State", "Queue", "ArraySlots", "Proc"]


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
        # I/Os (issued to the device, not done) and the places they hold (sized by State)
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


class State:
    """One run's state, laid out from ``model``: what every step of the engine reads and changes."""

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
            new_record(
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
