"""The reference engine: SimPy, readable, and the specification of the model.

Read :meth:`_Simulation.io_life` to see what happens to one I/O:

1. the host's policy picks a path (no usable path: the I/O waits for one);
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

A leg lost to a path failure (the path went down while the frame was on the
wire) sends the I/O back to step 1 on another path, so no I/O is ever lost.

Timing details the sources leave open, stated here once:

* A leg carrying data first waits for its link direction to be free (FIFO),
  then takes ``size / bandwidth`` to serialise, then the one-way latency.
  Command, transfer-ready and status frames are taken as zero bytes.
* The receiving array stores a write in parallel with mirroring it; the host
  gets status when both are done (active-active synchronous replication).
* Reads are served by the array that received them, without replication.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np
import simpy

from ..metrics import Recorder, RunMetrics
from ..model import JobModel, Model
from ..policies import DeviceView, IORequest, PathTable, PathView, build_policy
from .streams import make_streams

__all__ = ["run_reference"]

TO_ARRAY, TO_HOST = 0, 1


class PathLost(Exception):
    """A frame was on a path that went down: the I/O must be retried."""


class _Simulation:
    def __init__(self, model: Model, policy: Any, trace: bool, progress: Callable[[float], None] | None):
        self.model = model
        self.env = simpy.Environment()
        self.progress = progress
        self.streams = make_streams(model)  # see streams.py: common random numbers across policies
        policy_rngs = self.streams.policies

        self.table = PathTable(
            [p.name for p in model.paths],
            [model.arrays[p.array].name for p in model.paths],
            [p.alua for p in model.paths],
            [p.bandwidth for p in model.paths],
        )
        self.views = [PathView(self.table, p.index) for p in model.paths]
        self.epoch = [0] * len(model.paths)  # bumped when a path goes down: frames in flight are lost
        self.link_free = [[0.0, 0.0] for _ in model.paths]  # per path and direction
        self.repl_free = [0.0, 0.0]
        self.slots = [simpy.Resource(self.env, capacity=a.concurrency) for a in model.arrays]

        n_bins = max(1, int(np.ceil(model.end / model.interval - 1e-9)))
        self.metrics = RunMetrics(len(model.paths), n_bins, model.interval, (model.ramp, model.end))
        self.rec = Recorder(self.metrics)
        self.trace: list[tuple] | None = [] if trace else None
        self.path_changed = self.env.event()
        self.seq = 0

        self.policies = []
        for h, host in enumerate(model.hosts):
            views = [self.views[p.index] for p in model.host_paths(h)]
            device = DeviceView(host, views, lambda: self.env.now, self._logger(host))
            pol = build_policy(policy)
            pol.bind(device, policy_rngs[h])
            self.policies.append(pol)

    def _logger(self, device: str):
        def log(event: str, details: dict[str, Any]) -> None:
            self.metrics.events.append({"t": float(self.env.now), "device": device, "event": event, **details})

        return log

    # -- the life of one I/O ---------------------------------------------
    def job_slot(self, job: JobModel) -> Iterator[Any]:
        """One of a job's ``iodepth`` slots: issue, wait for completion, repeat."""
        while True:
            yield from self.io_life(self.new_io(job))

    def new_io(self, job: JobModel) -> IORequest:
        rng = self.streams.jobs[job.index]
        op = "read" if rng.random() < job.read_fraction else "write"
        size = job.sizes[0]
        if len(job.sizes) > 1:
            u, acc = rng.random(), 0.0
            for size, weight in zip(job.sizes, job.size_weights):
                acc += weight
                if u < acc:
                    break
        self.seq += 1
        return IORequest(self.seq, job.index, op, size, self.env.now)

    def io_life(self, io: IORequest) -> Iterator[Any]:
        env, table = self.env, self.table
        policy = self.policies[self.model.jobs[io.job].host]
        self.rec.issue(env.now)
        while True:
            path = policy.select(io)
            if path is None:  # all paths down: wait for a change (ESXi's APD)
                yield self.path_changed
                continue
            p = path.index
            io.attempts += 1
            if io.attempts > 1:
                self.metrics.retried += 1
            started = env.now
            table.start(p, io.size)
            self.rec.path_start(env.now, p)
            try:
                yield from self.exchange(io, p)
                lost = False
            except PathLost:
                lost = True
            # Not a ``finally``: I/Os still in flight when the run ends must stay counted.
            table.end(p, io.size)
            self.rec.path_end(env.now, p)
            if lost:
                continue
            on_path = env.now - started
            policy.on_complete(path, io, on_path)
            self.rec.complete(env.now, io.op, io.size, env.now - io.issued_at, p, on_path)
            if self.trace is not None:
                self.trace.append((io.seq, io.job, io.op, io.size, io.issued_at, env.now, table.names[p], io.attempts))
            return

    def exchange(self, io: IORequest, p: int) -> Iterator[Any]:
        """The frames of one command on path ``p``, by protocol and op."""
        array = self.model.paths[p].array
        if io.op == "read":
            yield from self.leg(p, TO_ARRAY, 0)  # READ command
            yield from self.serve(array, "read")
            yield from self.leg(p, TO_HOST, io.size)  # data + status
            return
        if self.model.protocol == "scsi":
            yield from self.leg(p, TO_ARRAY, 0)  # WRITE command
            yield from self.leg(p, TO_HOST, 0)  # XFER_RDY
            yield from self.leg(p, TO_ARRAY, io.size)  # data
        else:
            yield from self.leg(p, TO_ARRAY, io.size)  # NVMe command with in-capsule data
        yield from self.store(array, io)
        yield from self.leg(p, TO_HOST, 0)  # status

    def leg(self, p: int, direction: int, nbytes: int) -> Iterator[Any]:
        """One frame over path ``p``: queue for the link, serialise, propagate."""
        path = self.model.paths[p]
        now = self.env.now
        delay = path.one_way_latency.sample(self.streams.paths[p])
        if nbytes and path.bandwidth:
            start = max(now, self.link_free[p][direction])
            done = start + nbytes / path.bandwidth
            self.link_free[p][direction] = done
            delay += done - now
        epoch = self.epoch[p]
        yield self.env.timeout(delay)
        if self.epoch[p] != epoch or not self.table.up[p]:
            raise PathLost

    def serve(self, array: int, op: str) -> Iterator[Any]:
        """Wait for one of the array's slots (FIFO), then the service time."""
        a = self.model.arrays[array]
        service, rng = (a.read_service, 0) if op == "read" else (a.write_service, 1)
        with self.slots[array].request() as slot:
            yield slot
            yield self.env.timeout(service.sample(self.streams.service[array][rng]))

    def store(self, array: int, io: IORequest) -> Iterator[Any]:
        """Persist a write; on a replicated volume, mirror it in parallel."""
        peer = self.model.arrays[array].peer
        if peer is None:
            yield from self.serve(array, "write")
            return
        mirrored = self.env.process(self.mirror(array, peer, io))
        yield from self.serve(array, "write")
        yield mirrored

    def mirror(self, array: int, peer: int, io: IORequest) -> Iterator[Any]:
        """Forward a write to the peer array, let it store it, carry the ack back."""
        repl = self.model.replication
        assert repl is not None
        direction = 0 if array == repl.arrays[0] else 1
        now = self.env.now
        delay = repl.one_way_latency.sample(self.streams.replication)
        if repl.bandwidth:
            start = max(now, self.repl_free[direction])
            done = start + io.size / repl.bandwidth
            self.repl_free[direction] = done
            delay += done - now
        yield self.env.timeout(delay)
        yield from self.serve(peer, "write")
        yield self.env.timeout(repl.one_way_latency.sample(self.streams.replication))

    # -- the timeline ------------------------------------------------------
    def fault_timeline(self) -> Iterator[Any]:
        table = self.table
        for f in self.model.faults:
            if f.at > self.env.now:
                yield self.env.timeout(f.at - self.env.now)
            p = f.path
            if f.what == "path_down":
                table.up[p] = False
                self.epoch[p] += 1
            elif f.what == "path_up":
                table.up[p] = True
            else:
                table.alua[p] = f.state
            self.metrics.events.append(
                {"t": float(self.env.now), "device": self.model.hosts[self.model.paths[p].host], "event": f.what,
                 "path": table.names[p], "alua": table.alua[p], "up": table.up[p]}
            )
            self.policies[self.model.paths[p].host].on_path_change(self.views[p])
            waiting, self.path_changed = self.path_changed, self.env.event()
            waiting.succeed()

    def ticker(self) -> Iterator[Any]:
        step = max(self.model.end / 100.0, self.model.interval)
        while True:
            yield self.env.timeout(step)
            self.progress(self.env.now)  # type: ignore[misc]

    def run(self) -> RunMetrics:
        env, model = self.env, self.model
        for job in model.jobs:
            for _ in range(job.iodepth):
                env.process(self.job_slot(job))
        if model.faults:
            env.process(self.fault_timeline())
        if self.progress is not None:
            env.process(self.ticker())
        env.run(until=model.end)
        self.rec.close(model.end)
        for host, pol in zip(model.hosts, self.policies):
            self.metrics.config_strings[host] = pol.config_string()
        if self.trace is not None:
            self.metrics.trace = self.trace
        return self.metrics


def run_reference(
    model: Model, policy: Any, *, trace: bool = False, progress: Callable[[float], None] | None = None
) -> RunMetrics:
    """Simulate one run of ``model`` under ``policy`` (a spec, Policy class or instance)."""
    return _Simulation(model, policy, trace, progress).run()
