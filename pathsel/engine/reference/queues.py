"""The model's queues in the reference engine: a row each (:class:`~.state.Queue`), and the rule of its kind.

Every queue an I/O can wait in is a row of ``Model.queues`` (:mod:`pathsel.model.queues`), kept as a
:class:`~.state.Queue` (an array's slots: a ``simpy.Resource`` in its row) with the counters the fast engine
keeps for the same row. The rule of its kind says what a full one does: ``take`` and ``give_back`` are the
"host" and "path" rules, written once (a device's "host" queues are ``DeviceModel.admission``, so a new one
needs no change here), ``accept``/``port_done`` the "refuse" rule, ``serve`` the "array" rule; ``throttle``
changes a device queue's queue depth. Fast twin: fast/queues.py.
"""

from __future__ import annotations

from ...policies import IORequest
from .state import Proc, Queue
from .wire import TO_HOST, Wire

__all__ = ["Queues", "QueueFull"]


class QueueFull(Exception):
    """The target port held its port_queue_depth commands: the array answered QUEUE FULL (status 0x28), now back."""


class Queues(Wire):
    """The queues' rules (the target port's QUEUE FULL status is a frame back over the wire)."""

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

    def serve(self, array: int, op: str, size: int) -> Proc:
        """The "array" rule: wait for one of the array's slots (FIFO), then the service time (plus its part per KiB).
        Fast twins: fast/queues.request (or grant_in_line), fast/io_life.start_service, on_service_done."""
        with self.slots[array].request() as slot:
            yield slot
            draw = self.streams.service[array][0 if op == "read" else 1].next()
            yield self.env.timeout(draw + self.model.arrays[array].per_kib * size / 1024.0)
