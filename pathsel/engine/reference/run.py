"""The reference engine put together: one simulation, run to its end, its measures read back.

:class:`Simulation` gathers the steps of every module (:mod:`.io_life` with the wire, the queues, the waits and
the cores; :mod:`.faults`) over one :class:`~.state.State`; :meth:`Simulation.run` starts SimPy's processes (the
job slots, the arrivals, the fault timeline), runs SimPy's loop and reads the results back. Fast twins:
fast/run.py (and fast/loop.py, the loop SimPy is here).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import simpy

from ...metrics import RunMetrics
from ...model import Model
from ..host_queues import overload
from ..recorder.readout import Live, to_metrics, vm_slots
from .faults import Faults
from .io_life import IoLife, Overload
from .state import Proc

__all__ = ["run_reference", "Simulation"]


class Simulation(IoLife, Faults):
    """One run of a model under a policy: start it with :meth:`run`."""

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
        except Overload as e:
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
    return Simulation(model, policy, trace, progress, live, live_step).run()
