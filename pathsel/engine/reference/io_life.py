"""The life of one I/O in the reference engine, its steps in order: read :meth:`IoLife.io_life`.

A job slot issues it (:meth:`IoLife.job_slot`; open loop, at its arrival: :meth:`IoLife.arrivals`); the device's
host queues take it; the policy picks a path; its frames cross the path (:meth:`IoLife.exchange`); the array
serves it, mirroring a write to the peer array (:meth:`IoLife.store`, :meth:`IoLife.mirror`); it completes, or an
attempt is lost, refused (QUEUE FULL) or aborted at the io_timeout (:meth:`IoLife.arm_abort`) and retried.
Fast twin: fast/io_life.py (each method's docstring names its step there).
"""

from __future__ import annotations

import math

import simpy

from ...model import JobModel
from ...policies import IORequest
from ..recorder.record import C_REFUSED, C_RETRIED, C_TIMED_OUT
from .cpu import Cpu
from .queues import QueueFull, Queues
from .state import Proc
from .waits import Waits
from .wire import TO_ARRAY, TO_HOST, PathLost

__all__ = ["IoLife", "Overload"]


class Overload(Exception):
    """Raised in a process (SimPy re-raises a copy made from its args); run() turns it into host_queues.overload."""


class IoLife(Queues, Waits, Cpu):
    """The steps of an I/O's life, over the wire, the queues, the waits and the cores."""

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
                    raise Overload(job.index, now, len(backlog))
                backlog.append(now)
                self.rec.device(now, job.device, 0, 1, job.index)

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

    def exchange(self, io: IORequest, p: int, deadline: float) -> Proc:
        """The frames of one command on path ``p``, by protocol and op (fast/io_life.on_leg, status_leg)."""
        path = self.model.paths[p]
        array = path.array
        # the attempt's first frame carries the cross-node hop (docs/model.md, NUMA)
        add = self.numa_hosts[path.host].numa_extra(io.node, path.numa_node) if self.numa else 0.0
        cpu = self.cpu
        if cpu is not None and cpu.job_core[io.job] >= 0 and cpu.path_submit[p] > 0.0:
            # its job's core submits it (reserved now, FIFO); the first frame leaves when that is done (fast/io_life.first_add)
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
