"""A model's parts as fields of the fast engine's records (:mod:`.layout` declares them): the engine's own state
(:func:`lay_out_state`), the queues' table (:func:`queue_table`), the frames', the cores' and the fabric's
parameters. :class:`.state.Run` puts them together with the rest of the records. Reference twin: the attributes
reference/state.py's ``State`` sets up (a queue's row: its ``Queue``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...jit import on_lines
from ...model import Model
from ...model.frames import N_FRAME, frame_row
from ...model.queues import ARRAY, ARRAY_SLOTS, DEVICE_QUEUE, HOST, NVME_TAGS, PATH, TARGET_PORT
from . import layout as L

__all__ = ["lay_out_state", "queue_table", "frame_params", "cpu_params", "fabric_params", "pow2", "TRACE_CAP"]

TRACE_CAP = 1 << 16


def pow2(n: int) -> int:
    """The least power of two no smaller than ``n`` (at least 1): rings indexed with a mask, rows that double."""
    return 1 << (max(int(n), 1) - 1).bit_length()


def lay_out_state(model: Model, slots: list[int], trace: bool, queues: dict[str, Any]) -> Any:
    """The engine's own state (STATE): the event heap and FIFOs, each slot's row, the wires, the queues' table
    (``queues``, from :func:`queue_table`), the open-loop jobs' FIFOs, the deadlines, the waiters, the trace."""
    i64, f64 = np.int64, np.float64
    P, A, J, C, N = len(model.paths), len(model.arrays), len(model.jobs), len(model.controllers), len(slots)
    repl, ctrls = model.replication, model.controllers
    # Live timers: per slot two (an I/O's leg or service and its mirror's) or one APD timer, a notice per
    # nexus change still in its detection delay, the next fault, each host's io_timeout. Twice that: the
    # other half holds timers that will do nothing (of waits that ended, of aborted attempts), which
    # start_wait and abort drop once the heap is half full.
    notices = 2 * C + sum(len(f.controllers) for f in model.faults)
    H = len(model.host_params)
    heap_cap = 2 * (3 * N + notices + H + 16)
    pow2 = lambda n: 1 << (int(n) - 1).bit_length()  # noqa: E731 - ring buffers are indexed with a mask
    fifo_cap = pow2(8 * N + 4 * P + 64)
    tcap = TRACE_CAP if trace else 1
    W = model.n_wires
    wt_cap = pow2(2 * N + 8)
    si = np.zeros(L.N_SI, dtype=i64)
    si[L.I_REPL_OK] = 1
    sf = np.zeros(L.N_SF, dtype=f64)
    sf[L.F_REPL_EXTRA] = repl.extra if repl else 0.0
    sf[L.F_REPL_LOSS] = repl.loss_ppm if repl else 0.0
    # an open-loop job's backlog holds model.backlog_cap arrivals, its idle FIFO its own slots
    is_open = any(j.rate_iops > 0 for j in model.jobs)
    jb_cap = model.backlog_cap if is_open else 1
    ji_cap = pow2(max(j.iodepth for j in model.jobs) + 1) if is_open else 1
    slot = on_lines(N, L.SLOT_COLS, i64)
    slot[:, L.K_JOB] = slots
    slot[:, L.K_DLEID] = -1  # in no host's list of attempts by deadline
    return L.STATE.pack(
        dict(
            si=si,
            sf=sf,
            # +inf past the last entry: a pop reads 8 children. Both start 7 entries past a 64-byte line, so
            # the children of every entry (8i + 1 .. 8i + 8) share one line of times and two of keys.
            h_time=on_lines(heap_cap + 7, 0, f64, fill=np.inf, lead=7),
            h_ka=on_lines(heap_cap + 7, 2, i64, lead=7),
            uf_kind=np.zeros(fifo_cap, dtype=i64),
            uf_arg=np.zeros(fifo_cap, dtype=i64),
            nf_kind=np.zeros(fifo_cap, dtype=i64),
            nf_arg=np.zeros(fifo_cap, dtype=i64),
            slot=slot,
            slotf=slot.view(f64),
            phys_up=np.ones(C, dtype=i64),
            epoch=np.zeros(C, dtype=i64),
            extra=np.array([c.extra for c in ctrls], dtype=f64),
            loss=np.array([c.loss_ppm for c in ctrls], dtype=f64),
            loss_op=np.array([c.op_loss() for c in ctrls], dtype=f64).reshape(len(ctrls), 2),
            alive=np.ones(A, dtype=i64),
            cross=np.array([1 if p.crossing else 0 for p in model.paths] or [0], dtype=i64),
            ia_count=np.zeros((max(1, len(model.cells)), max(1, max((n for _, n, _ in model.cells), default=1))), dtype=i64),
            wire_free=np.zeros((W, 2), dtype=f64),
            **queues,
            jb_time=np.zeros((J, jb_cap), dtype=f64),
            jb_head=np.zeros(J, dtype=i64),
            jb_tail=np.zeros(J, dtype=i64),
            ji_slot=np.zeros((J, ji_cap), dtype=i64),
            ji_head=np.zeros(J, dtype=i64),
            ji_tail=np.zeros(J, dtype=i64),
            j_rp_taken=np.zeros(J, dtype=i64),
            dl_head=np.full(H, -1, dtype=i64),
            dl_tail=np.full(H, -1, dtype=i64),
            dl_armed=np.zeros(H, dtype=i64),
            wt_slot=np.zeros(wt_cap, dtype=i64),
            wt_id=np.zeros(wt_cap, dtype=i64),
            tmp_wt=np.zeros(wt_cap, dtype=i64),
            tr_seq=np.zeros(tcap, dtype=i64),
            tr_job=np.zeros(tcap, dtype=i64),
            tr_op=np.zeros(tcap, dtype=i64),
            tr_size=np.zeros(tcap, dtype=i64),
            tr_issued=np.zeros(tcap, dtype=f64),
            tr_done=np.zeros(tcap, dtype=f64),
            tr_path=np.zeros(tcap, dtype=i64),
            tr_attempts=np.zeros(tcap, dtype=i64),
            l_cret=np.array([ln.credit_return for ln in model.links] or [(0.0, 0.0)], dtype=np.float64).reshape(-1, 2),
            l_held=np.zeros((max(1, len(model.links)), 2), dtype=np.float64),
            cpu_free=np.zeros(max(1, len(model.cpu.core_host) if model.cpu else 1), dtype=f64),
            cpu_busy=np.zeros(max(1, len(model.cpu.core_host) if model.cpu else 1), dtype=f64),
            c_fbytes=np.zeros((len(model.controllers), 4), dtype=f64),
        )
    )


def frame_params(model: Model) -> dict[str, Any]:
    """Each nexus's framing row (model/frames.py) as PARAMS fields; frames_on 0 when no nexus has a transport."""
    rows = [frame_row(c.transport, c.mtu) for c in model.controllers]
    on = any(r[0] != 0 for r in rows)
    return dict(frames_on=1 if on else 0, c_frm=np.array(rows if on else [[0] * N_FRAME], dtype=np.int64).reshape(-1, N_FRAME))


def cpu_params(model: Model) -> dict[str, Any]:
    """The hosts' cores (Model.cpu, model/cpu.py) as PARAMS fields; one unused entry each when no CPU is modelled."""
    i64, f64 = np.int64, np.float64
    cpu = model.cpu
    if cpu is None:
        return dict(
            cpu_on=0,
            j_core=np.full(1, -1, dtype=i64),
            j_irq=np.full(1, -1, dtype=i64),
            p_csub=np.zeros(1, dtype=f64),
            p_ccomp=np.zeros(1, dtype=f64),
            core_host=np.zeros(1, dtype=i64),
            core_node=np.zeros(1, dtype=i64),
            cpu_fac=np.ones((1, 1, 1), dtype=f64),
        )
    NN = max(len(f) for f in cpu.factor)
    fac = np.ones((len(cpu.factor), NN, NN), dtype=f64)
    for h, rows in enumerate(cpu.factor):
        for a, row in enumerate(rows):
            fac[h, a, : len(row)] = row
    return dict(
        cpu_on=1,
        j_core=np.array(cpu.job_core, dtype=i64),
        j_irq=np.array(cpu.job_irq, dtype=i64),
        p_csub=np.array(cpu.path_submit, dtype=f64),
        p_ccomp=np.array(cpu.path_complete, dtype=f64),
        core_host=np.array(cpu.core_host, dtype=i64),
        core_node=np.array(cpu.core_node, dtype=i64),
        cpu_fac=fac,
    )


def queue_table(model: Model, slots: list[int]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The queues (``model.queues``, fast/queues.py) as PARAMS and STATE fields.

    Each row's FIFO is a ring in ``q_fifo``, long enough for everything that can wait there: a "host" row the
    slots of the devices that take it, a "path" row those of the devices with a path to it, an "array" row
    every slot's request and its mirror copy's; a row with no limit, or that refuses, a place never used.
    """
    i64 = np.int64
    Q, D = len(model.queues), len(model.devices)
    n_slots = len(slots)
    per_dev = np.bincount(np.array([model.jobs[j].device for j in slots], dtype=i64), minlength=D) if n_slots else np.zeros(D, dtype=i64)
    tags = model.queue_rows(NVME_TAGS)
    p_pathq = np.array([tags[p.controller] for p in model.paths], dtype=i64)
    port_row = model.queue_rows(TARGET_PORT)
    p_portq = np.array([port_row[model.controllers[p.controller].port] for p in model.paths], dtype=i64)
    reach = np.zeros(Q, dtype=i64)  # slots that can wait at each row
    for dv in model.devices:
        for r in set(dv.admission) | {int(p_pathq[p]) for p in dv.paths if p_pathq[p] >= 0}:
            reach[r] += per_dev[dv.index]
    cap = np.ones(Q, dtype=i64)
    for q in model.queues:
        if q.rule == ARRAY:
            cap[q.index] = pow2(2 * n_slots + 4)
        elif q.rule in (HOST, PATH) and q.queue_depth > 0:
            cap[q.index] = pow2(int(reach[q.index]) + 1)
    off = np.zeros(Q, dtype=i64)
    off[1:] = np.cumsum(cap)[:-1]
    MA = max(1, max((len(dv.admission) for dv in model.devices), default=1))
    d_adm = np.full((max(D, 1), MA), -1, dtype=i64)
    for dv in model.devices:
        d_adm[dv.index, : len(dv.admission)] = dv.admission
    depth = np.array([q.queue_depth for q in model.queues], dtype=i64)
    q = on_lines(Q, L.Q_COLS, i64)
    q[:, L.Q_QUEUE_DEPTH] = depth
    params = dict(
        q_rule=np.array([L.RULE_CODES[r.rule] for r in model.queues], dtype=i64),
        queue_depth=depth,
        q_off=off,
        q_mask=cap - 1,
        d_adm=d_adm,
        d_nadm=np.array([len(dv.admission) for dv in model.devices] or [0], dtype=i64),
        d_queue=np.array(model.queue_rows(DEVICE_QUEUE) or (-1,), dtype=i64),
        p_portq=p_portq,
        p_pathq=p_pathq,
        pathq_on=int((p_pathq >= 0).any()),
        a_q=np.array(model.queue_rows(ARRAY_SLOTS), dtype=i64),
        q_dsnro=np.array([q.dsnro for q in model.queues], dtype=i64),
        dsnro_on=int(any(q.dsnro > 0 for q in model.queues)),
        q_pervm=np.array([1 if q.dsnro_per_vm else 0 for q in model.queues], dtype=i64),
        j_world=np.array([j.vm for j in model.jobs] or [0], dtype=i64),
    )
    dsnro = any(q.dsnro > 0 for q in model.queues)
    QW = (Q, max((j.vm for j in model.jobs), default=0) + 1) if dsnro else (1, 1)
    state = dict(
        q=q,
        qf=q.view(np.float64),
        q_fifo=np.zeros(int(cap.sum()), dtype=i64),
        q_qfull_seen=np.zeros(Q, dtype=i64),
        q_good_seen=np.zeros(Q, dtype=i64),
        q_worlds=np.zeros(Q, dtype=i64),
        qw_out=np.zeros(QW, dtype=i64),
        qw_held=np.zeros(QW, dtype=i64),
    )
    return params, state


def fabric_params(model: Model, faults: tuple[Any, ...]) -> dict[str, Any]:
    """The fabric (issue 33, model/fabric.py) as PARAMS fields: per link its credits, round trip, credit_return and
    drain directions (one unused entry when there is no link), per fault its slow drain (unused for other faults)."""
    i64, f64 = np.int64, np.float64
    links = model.links
    return dict(
        fabric_on=1 if model.fabric else 0,
        l_cb=np.array([ln.credit_bytes for ln in links] or [0.0], dtype=f64),
        l_rtt0=np.array([ln.rtt0 for ln in links] or [0.0], dtype=f64),
        l_cret0=np.array([ln.credit_return for ln in links] or [(0.0, 0.0)], dtype=f64).reshape(-1, 2),
        l_drain=np.array([[1 if x else 0 for x in ln.drain] for ln in links] or [(0, 0)], dtype=i64).reshape(-1, 2),
        f_link=np.array([f.link for f in faults], dtype=i64),
        f_cret=np.array([f.credit_return for f in faults], dtype=f64),
        f_stop=np.array([f.stop_until for f in faults], dtype=f64),
    )
