"""The fast engine from Python: lay a :class:`~pathsel.model.Model` out in records (:mod:`.state`), run the loop, read the results.

Same model, same random streams, same event order as the reference engine,
so a run gives the same numbers on either engine. The policy is any
:class:`~pathsel.policies.framework.define.PolicyDef` (built-in or your own): the loop
calls its compiled entry points by address, so a new policy never recompiles
the engine.

Memory is fixed by the model's size (paths, slots, histogram bins) plus one
row per time-series interval; it does not grow with the number of I/Os.

Reference twin: reference/run.py (``Simulation.run``, ``run_reference``).
"""

from __future__ import annotations

import gc
import math
from typing import Any, Callable

import numpy as np

from ...metrics import RunMetrics
from ...model import Model
from ..host_queues import overload
from ..recorder.bookkeeping import close_record
from ..recorder.readout import Live, to_metrics, vm_slots
from . import layout as L
from .loop import run_kernel
from .state import Run, resolve
from .warm import prepare

__all__ = ["run_fast"]


def run_fast(
    model: Model,
    policy: Any,
    *,
    trace: bool = False,
    progress: Callable[[float], None] | None = None,
    live: Callable[[Live], None] | None = None,
    live_step: float = 0.0,
) -> RunMetrics:
    """Simulate one run of ``model`` under ``policy``: a spec, a PolicyDef, or an instance of its Python class.

    ``progress(now)`` is called about 100 times; ``live(Live)`` every
    ``live_step`` simulated seconds with what has been measured so far.
    """
    defn, params = resolve(policy)
    prepare([defn, *(resolve(d.policy)[0] for d in model.devices if d.policy is not None)])  # compiled or loaded once per process
    run = Run(model, defn, params, trace)
    events: list[dict[str, Any]] = []
    records: list[tuple] = []
    step = max(model.end / 100.0, model.interval) if progress else math.inf
    watch = live_step if live is not None and live_step > 0 else math.inf
    next_progress, next_live = step, watch
    t_stop = min(next_progress, next_live)
    addrs = (run.params_rec.address, run.state.address, run.view.address, run.rec.address)
    run.feed.refill()
    gc_was_on = gc.isenabled()
    gc.disable()  # the loop allocates nothing worth collecting; a collection costs more than it frees
    try:
        while True:
            status = run_kernel(*addrs, t_stop, run.ev_room, run.tr_room)
            if run.state.si[L.I_OVERLOAD]:
                j = model.jobs[int(run.state.si[L.I_OVERLOAD]) - 1]
                raise overload(model, j, float(run.view.clock[0]), model.backlog_cap)
            if status == L.REFILL:
                run.feed.refill()
            elif status == L.BUFFERS_FULL:
                run.drain_events(events)
                run.drain_trace(records)
            elif status == L.PAUSED:
                if t_stop >= next_progress:
                    progress(float(run.view.clock[0]))  # type: ignore[misc]
                    next_progress += step
                if t_stop >= next_live:
                    live(Live(t_stop, run.rec, run.view.out, run.view.out_bytes))  # type: ignore[misc]
                    next_live += watch
                t_stop = min(next_progress, next_live)
            else:
                break
        while next_live < model.end:  # no event left (every I/O failed): the view still comes, as on the reference engine
            live(Live(next_live, run.rec, run.view.out, run.view.out_bytes))  # type: ignore[misc]
            next_live += watch
    finally:
        if gc_was_on:
            gc.enable()
    run.drain_events(events)
    run.drain_trace(records)
    close_record(run.rec, model.end)
    m = to_metrics(run.rec, len(model.paths), model.device_slots(), vm_slots(model.jobs))
    st = run.state
    waiting = [float(st.jb_time[j, st.jb_head[j] & (st.jb_time.shape[1] - 1)]) for j in range(len(model.jobs)) if st.jb_head[j] < st.jb_tail[j]]
    m.oldest_in_flight = min([float(st.slotf[:, L.K_ISSUED].min(initial=np.inf))] + waiting)
    m.in_flight_at_end = _in_flight_at_end(st, model)
    m.queue_in_use_area, m.queue_waiting_area, m.queue_qfull = _queue_counters(st, model)
    m.wire_free_end = st.wire_free[: m.n_wires].copy()
    if any(c.transport for c in model.controllers):
        m.frame_bytes = st.c_fbytes.copy()
    if model.cpu is not None:
        m.cpu_busy = st.cpu_busy[: len(model.cpu.core_host)].copy()
    if model.fabric:
        m.link_held = st.l_held[: len(model.links)].copy()
    m.events = events
    m.config_strings = run.config_strings()
    if trace:
        m.trace = records
    return m


def _queue_counters(st: Any, model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each queue's time integrals of places in use and of what waited, over the window (brought up to its end, as
    queues.advance does), and its QUEUE FULLs: RunMetrics' queue_* arrays."""
    q, qf = st.q, st.qf
    w = np.maximum(0.0, model.end - np.maximum(qf[:, L.Q_LAST], model.ramp))
    in_use = qf[:, L.Q_AREA_IN_USE] + q[:, L.Q_IN_USE] * w
    waiting = qf[:, L.Q_AREA_WAITING] + (q[:, L.Q_TAIL] - q[:, L.Q_HEAD]) * w
    return in_use, waiting, q[:, L.Q_QFULL].copy()


def _in_flight_at_end(st: Any, model: Any) -> np.ndarray:
    """Every I/O outstanding at the end: (job, issued) per busy slot (slots numbered by job, then within it), then an
    open loop's arrivals waiting for a slot (reference twin: the end of reference/run.py's Simulation.run)."""
    out: list[tuple[float, float]] = []
    issued = st.slotf[:, L.K_ISSUED]
    mask = st.jb_time.shape[1] - 1
    s = 0
    for j in model.jobs:
        for _ in range(j.iodepth):
            if issued[s] < np.inf:
                out.append((float(j.index), float(issued[s])))
            s += 1
        out.extend((float(j.index), float(st.jb_time[j.index, q & mask])) for q in range(int(st.jb_head[j.index]), int(st.jb_tail[j.index])))
    return np.array(out, dtype=np.float64).reshape(-1, 2)
