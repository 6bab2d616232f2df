"""The fast engine from Python: lay a :class:`~pathsel.model.Model` out in records, run the loop, read the results.

Same model, same random streams, same event order as the reference engine,
so a run gives the same numbers on either engine. The policy is any
:class:`~pathsel.policies.framework.define.PolicyDef` (built-in or your own): the loop
calls its compiled entry points by address, so a new policy never recompiles
the engine.

Memory is fixed by the model's size (paths, slots, histogram bins) plus one
row per time-series interval; it does not grow with the number of I/Os.
"""

from __future__ import annotations

import gc
import math
from typing import Any, Callable

import numpy as np

from ...jit import on_lines
from ...metrics import RunMetrics, stall_windows
from ...model import Model
from ...model.frames import N_FRAME, frame_row
from ...model.queues import ARRAY, ARRAY_SLOTS, DEVICE_QUEUE, HOST, NVME_TAGS, PATH, TARGET_PORT
from ...policies.framework.adapter import event_details
from ...policies.framework.define import DeviceInfo, PolicyDef, Snapshot
from ...policies.framework.kernel import (
    ALUA_CODES,
    ALUA_NAMES,
    EV_POLICY,
    FL_NEV,
    FL_REFILL,
    N_FLAGS,
    VIEW,
)
from ...timing.distributions import Constant
from ..host_queues import overload
from ..recorder import Live, close_record, new_record, numa_nodes, to_metrics, vm_slots
from ..streams import Draws, make_streams
from ..truth import truth_static
from . import layout as L
from .loop import run_kernel
from .scheduler import push_urgent
from .warm import prepare

__all__ = ["run_fast", "resolve", "EVENT_CAP", "TRACE_CAP"]

EVENT_DRAWS = 8  # the most values one event draws from a stream without loss (see _Run)
LOSS_DRAWS = 2 * (L.MAX_RESENDS + 1) + EVENT_DRAWS
EVENT_CAP = 4096
TRACE_CAP = 1 << 16
_FAULT_NAMES = {v: k for k, v in L.FAULT_CODES.items()}
_LOG_NAMES = {L.LOG_PATH_DOWN: "path_down", L.LOG_PATH_UP: "path_up", L.LOG_ALUA: "alua"}


class _Run:
    """One run's records and what Python keeps beside them."""

    def __init__(self, model: Model, defn: PolicyDef, params: dict[str, Any], trace: bool) -> None:
        self.model, self.defn, self.params = model, defn, params
        P, A, J = len(model.paths), len(model.arrays), len(model.jobs)
        C, Lk, D = len(model.controllers), len(model.links), len(model.devices)
        # a policy per device (issue 32): the distinct (definition, parameters) the devices run, the run's own first;
        # each gets its own record, and each device calls its policy's entry points with its policy's record
        self.pols: list[tuple[PolicyDef, dict[str, Any]]] = [(defn, params)]
        self.pol_of = np.zeros(D, dtype=np.int64)
        known = {(id(defn), repr(sorted(params.items()))): 0}  # a thousand devices on two policies: two records
        for dv in model.devices:
            if dv.policy is not None:
                own = resolve(dv.policy)
                key = (id(own[0]), repr(sorted(own[1].items())))
                if key not in known:
                    known[key] = len(self.pols)
                    self.pols.append(own)
                self.pol_of[dv.index] = known[key]
        d_draws = np.array([self.pols[g][0].draws for g in self.pol_of], dtype=np.int64)
        any_draws = bool(d_draws.any()) if D else bool(defn.draws)
        dev_paths = [model.device_paths(d) for d in range(D)]
        self.dev_paths = dev_paths
        MP = max(1, max((len(dp) for dp in dev_paths), default=1))
        slots = [j.index for j in model.jobs for _ in range(j.iodepth)]
        N = len(slots)
        S_max = max(len(j.sizes) for j in model.jobs)
        i64, f64 = np.int64, np.float64

        # -- the random streams: rows of pre-drawn values --------------------------------
        streams = make_streams(model)
        draws = streams.all()
        # stream ids, in Streams.all() order: jobs, nexuses, (array, op) service, replication, loss
        str_job = np.arange(J, dtype=i64)
        str_path = J + np.arange(C, dtype=i64)
        str_svc = (J + C + np.arange(2 * A, dtype=i64)).reshape(A, 2)
        str_repl = np.array([J + C + 2 * A], dtype=i64)
        str_loss = J + C + 2 * A + 1 + np.arange(C + 1, dtype=i64)
        str_arr = J + C + 2 * A + 2 + C + np.arange(J, dtype=i64)
        assert len(draws) == J + C + 2 * A + 1 + C + 1 + J
        str_pol = np.full(D, -1, dtype=i64)
        if any_draws:  # each device's policy generator, served in blocks as the policy's uniforms
            str_pol[:] = len(draws) + np.arange(D, dtype=i64)
            draws += [Draws(g) for g in streams.policies]
        # Streams this model can never draw from (loss decisions without loss, reads in a
        # write-only workload, the replication link without replication) get no row of
        # pre-drawn values: they all share one trap row, and drawing from it is an error.
        lossy = (
            any(c.loss_ppm > 0 for c in model.controllers)
            or (model.replication is not None and model.replication.loss_ppm > 0)
            or any(f.what == "loss" for f in model.faults)
        )
        used = np.ones(len(draws), dtype=bool)
        if not lossy:
            used[str_loss] = False
        if model.replication is None:
            used[str_repl] = False
        used[str_arr] = [j.rate_iops > 0 for j in model.jobs]
        for op, possible in ((0, any(j.read_fraction > 0 for j in model.jobs)), (1, any(j.read_fraction < 1 for j in model.jobs))):
            if not possible:
                used[str_svc[:, op]] = False
        # A nexus whose one-way latency is a constant gets no row: its frames read the number (p_lat, else -1)
        # instead of pre-drawn copies of it (16 k nexuses: 16 k rows, and a cache miss or two per frame).
        c_lat = np.array([d.dist.value if isinstance(d.dist, Constant) else -1.0 for d in draws[J : J + C]], dtype=f64)
        used[str_path[c_lat >= 0]] = False
        if any_draws:  # a device whose own policy draws nothing reads no row (the trap, as for a run that draws none)
            used[str_pol[d_draws == 0]] = False
        trap = int(used.sum())
        row = np.full(len(draws), trap, dtype=i64)  # the trap row is the last
        row[used] = np.arange(trap)
        str_job, str_path, str_svc, str_repl, str_loss, str_arr = (row[x] for x in (str_job, str_path, str_svc, str_repl, str_loss, str_arr))
        d_stream = row[str_pol] if any_draws else np.full(D, trap, dtype=i64)  # a policy that draws undeclared hits the trap
        feeds = [d for d, u in zip(draws, used) if u]
        # The most values one event can draw from each stream (the loop stops for a refill between events,
        # never inside one): a job's op and size; a frame's latency on a nexus or the replication link and an
        # array's service time (an event sends at most two frames and starts at most two services); a frame's
        # loss decisions, one per copy sent (up to MAX_RESENDS + 1, two frames); a policy's declared draws
        # per call, for the few calls one event makes on one device.
        margin = np.full(len(draws), EVENT_DRAWS, dtype=i64)
        margin[J + C + 2 * A + 1 : J + C + 2 * A + 2 + C] = LOSS_DRAWS
        if any_draws:
            margin[len(draws) - D :] = 4 * d_draws + EVENT_DRAWS
        margins = [int(m) for m, u in zip(margin, used) if u]

        # -- traces replayed: each distinct trace's records once, its job copies pointing at them ----------
        rp_off, rp_len = np.full(J, -1, dtype=i64), np.zeros(J, dtype=i64)
        rp_parts: list[Any] = []
        placed: dict[int, int] = {}
        at = 0
        for j in model.jobs:
            tr = j.trace
            if tr is None:
                continue
            if id(tr) not in placed:
                placed[id(tr)] = at
                rp_parts.append(tr)
                at += len(tr)
            rp_off[j.index], rp_len[j.index] = placed[id(tr)], len(tr)
        rp_op = np.concatenate([t.ops for t in rp_parts]).astype(i64) if rp_parts else np.zeros(1, dtype=i64)
        rp_size = np.concatenate([t.sizes for t in rp_parts]).astype(i64) if rp_parts else np.zeros(1, dtype=i64)

        # -- the view (what policies read) -----------------------------------------------------
        d_paths = np.full((D, MP), -1, dtype=i64)
        d_np = np.zeros(D, dtype=i64)
        p_local = np.zeros(P, dtype=i64)
        for d, dp in enumerate(dev_paths):
            d_np[d] = len(dp)
            for k, p in enumerate(dp):
                d_paths[d, k] = p.index
                p_local[p.index] = k
        ev_cap = max(EVENT_CAP, 8 * (P + D) + 64)
        # NUMA: each device's host's SLIT matrix (padded to the most nodes of any host) and node count (the padding
        # is no node of that host: per-node state and the config string stop at d_nodes), each slot's job's node
        NN = max((h.numa_nodes for h in model.host_params), default=1)
        numa_dist = np.full((max(D, 1), NN, NN), 10, dtype=i64)
        d_nodes = np.ones(max(D, 1), dtype=i64)
        numa_pen = np.zeros((max(len(model.host_params), 1), NN, NN), dtype=f64)
        for h in model.host_params:
            n = h.numa_nodes
            for a in range(n):
                for b in range(n):
                    numa_pen[h.index, a, b] = h.numa_extra(a, b)
        for dv in model.devices:
            hp = model.host_params[dv.host]
            numa_dist[dv.index, : hp.numa_nodes, : hp.numa_nodes] = np.array(hp.numa_distances, dtype=i64)
            d_nodes[dv.index] = hp.numa_nodes
        j_node = np.array([j.numa_node for j in model.jobs], dtype=i64)
        j_seq = np.array([j.index if j.sequential else -1 for j in model.jobs], dtype=i64)
        self.view = VIEW.pack(
            dict(
                d_paths=d_paths,
                d_np=d_np,
                p_local=p_local,
                p_dev=np.array([p.device for p in model.paths], dtype=i64),
                p_ctrl=np.array([p.controller for p in model.paths], dtype=i64),
                p_bw=np.array([p.bandwidth or 0.0 for p in model.paths], dtype=f64),
                p_weight=np.array([p.weight for p in model.paths], dtype=i64),
                p_node=np.array([p.numa_node for p in model.paths], dtype=i64),
                numa_dist=numa_dist,
                d_nodes=d_nodes,
                d_wake=np.full(max(D, 1), np.inf),  # a policy's wake time (kernel.VIEW d_wake)
                up=np.ones(P, dtype=i64),
                alua=np.array([ALUA_CODES[p.alua] for p in model.paths], dtype=i64),
                out=np.zeros(P, dtype=i64),
                out_bytes=np.zeros(P, dtype=i64),
                c_out=np.zeros(C, dtype=i64),
                c_out_bytes=np.zeros(C, dtype=i64),
                clock=np.zeros(1, dtype=f64),
                s_size=np.zeros(N, dtype=i64),
                s_op=np.zeros(N, dtype=i64),
                s_node=np.ascontiguousarray(j_node[np.array(slots, dtype=i64)]) if N else np.zeros(1, dtype=i64),
                s_seq=np.ascontiguousarray(j_seq[np.array(slots, dtype=i64)]) if N else np.full(1, -1, dtype=i64),
                flags=np.zeros(N_FLAGS, dtype=i64),
                ev_t=np.zeros(ev_cap, dtype=f64),
                ev_dev=np.zeros(ev_cap, dtype=i64),
                ev_kind=np.zeros(ev_cap, dtype=i64),
                ev_path=np.zeros(ev_cap, dtype=i64),
                ev_a=np.zeros(ev_cap, dtype=i64),
                ev_b=np.zeros(ev_cap, dtype=i64),
                ev_mask=np.zeros((ev_cap, MP), dtype=np.int8),
                ev_val=np.zeros((ev_cap, MP), dtype=f64),
                rnd=np.zeros(1, dtype=f64),
                rq=np.zeros((len(feeds) + 1, 2), dtype=i64),  # laid out by _Feed
                d_stream=d_stream,
                # the truth (the oracle's only): static numbers here, the live windows on the state below
                **truth_static(model),
            )
        )
        # room for one event's worth of log entries: a fault may log one per path, an evaluation one per device
        self.ev_room = ev_cap - 8 - 4 * D - 2 * P

        # -- the policy ---------------------------------------------------------------------------
        nexus = [c.name for c in model.controllers]  # a preferred path may name a nexus: its path on each device
        self.devices = [
            DeviceInfo(tuple(p.name for p in dp), tuple(p.alua for p in dp), tuple(p.index for p in dp), tuple(nexus[p.controller] for p in dp))
            for dp in dev_paths
        ]
        # each policy's record holds every device (devices index it by their run-wide number); a device reads its own
        self.pstates = [pd.new_state(pp, self.devices, N) for pd, pp in self.pols]
        self.pstate = self.pstates[0]
        pol_hooks = [pd.hooks() for pd, _ in self.pols]
        hooks = pol_hooks[0]
        self.hooks = hooks
        d_hooks = [pol_hooks[g] for g in self.pol_of]

        # -- the model as numbers ---------------------------------------------------------------------
        ML = max(1, max((len(c.links) for c in model.controllers), default=1))
        c_links = np.full((C, ML), -1, dtype=i64)
        cpaths = [model.controller_paths(c) for c in range(C)]
        MPC = max(1, max((len(x) for x in cpaths), default=1))
        c_paths = np.full((C, MPC), -1, dtype=i64)
        for c, ctrl in enumerate(model.controllers):
            c_links[c, : len(ctrl.links)] = ctrl.links
            c_paths[c, : len(cpaths[c])] = cpaths[c]
        faults = model.timeline  # the faults and implicit ALUA's checks
        F = len(faults)
        MC = max(1, max((len(f.controllers) for f in faults), default=1))
        f_cs = np.full((F, MC), -1, dtype=i64)
        for i, f in enumerate(faults):
            f_cs[i, : len(f.controllers)] = f.controllers
        MFP = max(1, max((len(f.paths) for f in faults), default=1))
        g_paths = np.full((max(1, len(model.cells)), max(1, max((len(ps) for _, _, ps in model.cells), default=1))), -1, dtype=i64)
        for g, (_a, _n, ps) in enumerate(model.cells):
            g_paths[g, : len(ps)] = ps
        f_paths = np.full((F, MFP), -1, dtype=i64)
        f_pstate = np.zeros((F, MFP), dtype=i64)
        f_pcross = np.full((F, MFP), -1, dtype=i64)
        for i, f in enumerate(faults):
            n = len(f.paths)
            f_paths[i, :n] = f.paths
            f_pstate[i, :n] = [ALUA_CODES[x] for x in f.states]
            f_pcross[i, :n] = f.crossing
        repl = model.replication
        loser = (repl.arrays[1] if repl.preferred_site == repl.arrays[0] else repl.arrays[0]) if repl else -1
        ctrls = model.controllers
        qp, qs = _queue_table(model, slots)
        self.params_rec = L.PARAMS.pack(
            dict(
                protocol=0 if model.protocol == "scsi" else 1,
                ramp=model.ramp,
                end=model.end,
                interval=model.interval,
                p_array=np.array([p.array for p in model.paths], dtype=i64),
                p_mirror=np.array([-1 if p.mirror is None else p.mirror for p in model.paths], dtype=i64),
                p_str=np.array([str_path[p.controller] for p in model.paths], dtype=i64),
                p_lat=np.array([c_lat[p.controller] for p in model.paths], dtype=f64),
                c_host=np.array([c.host for c in ctrls], dtype=i64),
                c_bw=np.array([c.bandwidth or 0.0 for c in ctrls], dtype=f64),
                c_extra=np.array([c.extra for c in ctrls], dtype=f64),
                c_loss=np.array([c.loss_ppm for c in ctrls], dtype=f64),
                c_loss_op=np.array([c.op_loss() for c in ctrls], dtype=f64).reshape(len(ctrls), 2),
                c_recov=np.array([c.loss_recovery for c in ctrls], dtype=f64),
                c_links=c_links,
                c_nlinks=np.array([len(c.links) for c in ctrls], dtype=i64),
                c_paths=c_paths,
                c_npaths=np.array([len(x) for x in cpaths], dtype=i64),
                l_bw=np.array([ln.bandwidth for ln in model.links] or [0.0], dtype=f64),
                a_perkib=np.array([a.per_kib for a in model.arrays], dtype=f64),
                a_icl=np.array([a.ic_latency for a in model.arrays], dtype=f64),
                a_icbw=np.array([a.ic_bandwidth or 0.0 for a in model.arrays], dtype=f64),
                w_ic0=model.ic_wire(0),
                ic_on=1 if model.inter_controller else 0,
                w_repl=C + Lk,
                r_a0=repl.arrays[0] if repl else -1,
                r_bw=(repl.bandwidth or 0.0) if repl else 0.0,
                r_extra=repl.extra if repl else 0.0,
                r_loss=repl.loss_ppm if repl else 0.0,
                r_recov=repl.loss_recovery if repl else 0.0,
                r_loser=loser,
                hp_det=np.array([h.detection for h in model.host_params], dtype=f64),
                hp_apd=np.array([h.apd_timeout for h in model.host_params], dtype=f64),
                hp_iot=np.array([h.io_timeout for h in model.host_params], dtype=f64),
                j_dev=np.array([j.device for j in model.jobs], dtype=i64),
                numa=1 if model.numa else 0,
                numa_pen=numa_pen,
                j_readfrac=np.array([j.read_fraction for j in model.jobs], dtype=f64),
                j_nsizes=np.array([len(j.sizes) for j in model.jobs], dtype=i64),
                j_sizes=np.array([list(j.sizes) + [0] * (S_max - len(j.sizes)) for j in model.jobs], dtype=i64),
                j_cumw=np.array([list(j.size_weights) + [0.0] * (S_max - len(j.sizes)) for j in model.jobs], dtype=f64),
                d_host=np.array([d.host for d in model.devices], dtype=i64),
                j_open=np.array([1 if j.rate_iops > 0 else 0 for j in model.jobs], dtype=i64),
                str_arr=str_arr,
                hp_qfr=np.array([h.qfull_retry_delay for h in model.host_params], dtype=f64),
                hp_qfs=np.array([h.qfull_sample_size for h in model.host_params], dtype=i64),
                hp_qft=np.array([h.qfull_threshold for h in model.host_params], dtype=i64),
                **qp,
                j_rp_off=rp_off,
                j_rp_len=rp_len,
                rp_op=rp_op,
                rp_size=rp_size,
                j_refuse=np.array([1 if j.refuse else 0 for j in model.jobs], dtype=i64),
                f_time=np.array([f.at for f in faults], dtype=f64),
                f_what=np.array([L.FAULT_CODES[f.what] for f in faults], dtype=i64),
                f_cs=f_cs,
                f_nc=np.array([len(f.controllers) for f in faults], dtype=i64),
                f_array=np.array([-1 if f.array is None else f.array for f in faults], dtype=i64),
                f_repl=np.array([1 if f.replication else 0 for f in faults], dtype=i64),
                f_add=np.array([f.add for f in faults], dtype=f64),
                f_ppm=np.array([f.ppm for f in faults], dtype=f64),
                f_lops=np.array([L.LOSS_OPS_MASK[f.loss_ops] for f in faults], dtype=i64),
                f_state=np.array([ALUA_CODES.get(f.state or "AO", 0) for f in faults], dtype=i64),
                f_origin=np.array([f.origin for f in faults], dtype=i64),
                f_revert=np.array([1 if f.revert else 0 for f in faults], dtype=i64),
                f_paths=f_paths,
                f_np=np.array([len(f.paths) for f in faults], dtype=i64),
                f_pstate=f_pstate,
                f_pcross=f_pcross,
                p_cell=np.array([p.cell for p in model.paths] or [-1], dtype=i64),
                ia_on=1 if model.cells else 0,
                p_actl=np.array([p.array_controller for p in model.paths] or [-1], dtype=i64),
                p_prefao=np.array([1 if p.pref_ao else 0 for p in model.paths] or [1], dtype=i64),
                g_array=np.array([a for a, _, _ in model.cells], dtype=i64),
                g_n=np.array([n for _, n, _ in model.cells], dtype=i64),
                g_paths=g_paths,
                g_np=np.array([len(ps) for _, _, ps in model.cells], dtype=i64),
                p_alua0=np.array([ALUA_CODES[p.alua] for p in model.paths], dtype=i64),
                str_job=str_job,
                str_svc=str_svc,
                str_repl=int(str_repl[0]),
                str_loss=str_loss,
                trace_on=1 if trace else 0,
                pol_select=hooks.select,
                pol_start=hooks.start,
                pol_complete=hooks.complete,
                pol_path=hooks.path_change,
                pol_fail=hooks.fail,
                pol_state=self.pstate.address,
                pol_multi=1 if len(self.pols) > 1 else 0,
                d_psel=np.array([h.select for h in d_hooks] or [0], dtype=i64),
                d_pstart=np.array([h.start for h in d_hooks] or [0], dtype=i64),
                d_pcomp=np.array([h.complete for h in d_hooks] or [0], dtype=i64),
                d_ppath=np.array([h.path_change for h in d_hooks] or [0], dtype=i64),
                d_pfail=np.array([h.fail for h in d_hooks] or [0], dtype=i64),
                d_pstate=np.array([self.pstates[g].address for g in self.pol_of] or [0], dtype=i64),
                pol_view=self.view.address,
                **_fabric_params(model, faults),
                **_cpu_params(model),
                **_frame_params(model),
                first_on=1 if model.numa or (model.cpu is not None and any(c > 0.0 for c in model.cpu.path_submit)) else 0,
            )
        )

        # -- the engine's own state ----------------------------------------------------------------------
        self.state = _lay_out_state(model, slots, trace, qs)
        # the oracle's truth: the view's t_* fields are the engine's own arrays (no copies per event)
        for vname, sname in (
            ("t_up", "phys_up"),
            ("t_extra", "extra"),
            ("t_loss", "loss"),
            ("t_loss_op", "loss_op"),
            ("t_wfree", "wire_free"),
            ("t_q", "q"),
        ):
            self.view.set_array(vname, getattr(self.state, sname))
        W = model.n_wires  # wires: each nexus's own, the shared links, the replication link, inter-controller links
        n_bins = max(1, int(np.ceil(model.end / model.interval - 1e-9)))
        device_queue_depth = [model.queues[r].queue_depth for r in model.queue_rows(DEVICE_QUEUE)]
        self.rec = new_record(
            P,
            n_bins,
            W,
            (model.ramp, model.end),
            model.interval,
            D,
            model.host_queues,
            device_queue_depth,
            [j.vm for j in model.jobs],
            len(model.workloads),
            stall_windows(model.faults, model.end),
            *numa_nodes(model),
        )
        # The processes SimPy starts first: every job slot, then the fault timeline.
        for s in range(N):
            push_urgent.py_func(self.state, L.EV_INIT, s)
        for j in model.jobs:
            if j.rate_iops > 0:
                push_urgent.py_func(self.state, L.EV_ARRIVALS_INIT, j.index)
        if faults:
            push_urgent.py_func(self.state, L.EV_FAULT_INIT, 0)
        self.feed = _Feed(feeds, margins, self.view, model.end)
        self.tr_room = TRACE_CAP - 2 if trace else np.iinfo(np.int64).max

    # -- reading back ---------------------------------------------------------------------------
    def drain_events(self, out: list[dict[str, Any]]) -> None:
        v, model = self.view, self.model
        names = [p.name for p in model.paths]
        for e in range(int(v.flags[FL_NEV])):
            t = float(v.ev_t[e])
            kind = int(v.ev_kind[e])
            if kind == L.LOG_FAULT:
                out.append(
                    {
                        "t": t,
                        "device": "",
                        "event": "fault",
                        "what": _FAULT_NAMES[int(v.ev_path[e])],
                        "fault": int(v.ev_a[e]),
                        "revert": bool(v.ev_b[e]),
                    }
                )
                continue
            d = int(v.ev_dev[e])
            device = model.devices[d].name
            if kind >= EV_POLICY:
                pd = self.pols[int(self.pol_of[d])][0]  # the device's own policy decodes its events
                name, details = event_details(
                    pd, kind, int(v.ev_a[e]), int(v.ev_b[e]), int(v.ev_path[e]), v.ev_mask[e], v.ev_val[e], self.devices[d].names
                )
                out.append({"t": t, "device": device, "event": name, **details})
            else:
                p = int(v.ev_path[e])
                out.append(
                    {"t": t, "device": device, "event": _LOG_NAMES[kind], "path": names[p], "alua": ALUA_NAMES[int(v.ev_a[e])], "up": bool(v.ev_b[e])}
                )
        v.flags[FL_NEV] = 0

    def drain_trace(self, out: list[tuple]) -> None:
        s, names = self.state, [p.name for p in self.model.paths]
        for t in range(int(s.si[L.I_NTRACE])):
            out.append(
                (
                    int(s.tr_seq[t]),
                    int(s.tr_job[t]),
                    "read" if s.tr_op[t] == 0 else "write",
                    int(s.tr_size[t]),
                    float(s.tr_issued[t]),
                    float(s.tr_done[t]),
                    names[int(s.tr_path[t])],
                    int(s.tr_attempts[t]),
                )
            )
        s.si[L.I_NTRACE] = 0

    def config_strings(self) -> dict[str, str]:
        out = {}
        for d, dev in enumerate(self.model.devices):
            info = self.devices[d]
            g = int(self.pol_of[d])
            pd, pp = self.pols[g]
            out[dev.name] = pd.describe_config(Snapshot(pp, self.pstates[g], self.view, d, info.names, info.paths))
        return out


class _Feed:
    """The rows of pre-drawn values, one per stream the model uses, laid end to end in ``view.rnd``.

    The kernel asks for a refill when a row has fewer than its stream's
    margin left (the most one event draws from it): the row keeps its unread
    values and is topped up from the stream's Draws, which serves the same
    sequence whatever the sizes. Rows start short and double each time they
    run low, up to ``max_row`` values while all rows fit in ``BUDGET``: a
    stream's row is as long as its use, so thousands of jobs that each issue
    a few I/Os cost a few values each, not a block each. A refill also tops
    up, and grows, every row with less than half a row left, so rows that
    run at one pace come due together and grow in one new layout (2,048
    like jobs: 60 layouts in a run, not 4,000). A top-up is no larger than
    what the stream's pace says the rest of the run will read, with a
    quarter to spare, so a run does not end with full rows never read. A
    row of a Constant delay
    (every value the same number) is filled with that number and reread
    from its start; a nexus whose latency is a constant has no row at all
    (its frames read ``p_lat``). The last row is the trap shared by streams
    the model cannot use: drawing from it is an error, reported at once.
    """

    FIRST = 256
    # A few streams (an array's service times) serve millions of draws a simulated second: at 16 k values a row,
    # 32 hosts x 64 volumes x 8 paths stopped for 955 refills (2.4 s) in 10 simulated seconds; at 256 k, 83.
    # A refill also stops and restarts the loop (tens of microseconds), and costs about a microsecond per stream:
    # a row's longest length follows the number of streams, 128 values each rounded up to a power of two, from
    # 64 k to 256 k. With 256 k for every model, 4 hosts x 16 volumes x 8 paths (69 streams) held 26 MiB of rows
    # for 22 refills in 10 s; at 64 k, 18.5 MiB for 47. At 16 k the test drive (4 streams) refilled 107 times in
    # 60 s, not 17: 1 % slower.
    MIN_ROW, MAX_ROW = 1 << 16, 1 << 18
    BUDGET = 1 << 22  # values in all rows together (32 MiB) before rows stop growing

    def __init__(self, draws: list[Draws], margins: list[int], view: Any, end: float) -> None:
        self.draws, self.v, self.end = draws, view, end
        n = len(draws)
        self.margin = np.array(margins + [max(margins, default=EVENT_DRAWS)], dtype=np.int64)
        self.cap = np.array([max(self.FIRST, _pow2(4 * m)) for m in self.margin], dtype=np.int64)
        self.held = np.zeros(n + 1, dtype=np.int64)  # values in each row, from its start
        self.drawn = np.zeros(n, dtype=np.int64)  # values put in each row since its first fill
        self.since = np.zeros(n, dtype=np.float64)  # the simulated time of that first fill
        self.constant = np.array([isinstance(d.dist, Constant) for d in draws], dtype=bool)
        self.max_row = min(self.MAX_ROW, max(self.MIN_ROW, _pow2(128 * n)))
        self._layout(first=True)

    def _layout(self, first: bool = False) -> None:
        """Place the rows at new offsets (capacities changed), each row's unread values moved to its start."""
        v, n = self.v, len(self.draws)
        off = np.zeros(n + 1, dtype=np.int64)
        off[1:] = np.cumsum(self.cap[:-1])
        # a spare margin past the last row: an event reading past the trap's end reads zeros, and is reported
        size = int(off[-1] + self.cap[-1] + self.margin.max())
        if first:
            v.set_array("rnd", np.zeros(size, dtype=np.float64))
        else:  # every row's unread values to its new start, in the same block grown in place: realloc extends it, or
            # remaps a large block's pages (a block that moves into its own mapping is copied once); a new block with
            # the old one still held had doubled the rows' peak memory
            rnd, old_off = v.rnd, self.off[:n]
            pos = v.rq[:n, 0] - old_off
            rest = self.held[:n] - pos
            src = old_off + pos
            rnd.resize(size, refcheck=False)
            v.set_array("rnd", rnd)  # at once: the record must not keep the old block's address
            if rest.sum() > 256 * n:  # long rows: a slice copy each (about a microsecond a row)
                # rows only grow, so a row's new place starts at or past its old one and ends before the next row's
                # new place: moved last to first, no row overwrites values of a row not yet moved
                for a, b, k in zip(off[:n].tolist()[::-1], src.tolist()[::-1], rest.tolist()[::-1]):
                    rnd[a : a + k] = rnd[b : b + k]
            else:  # tens of thousands of short rows: one gather (about 10 ns a value), read before written
                within = np.arange(int(rest.sum())) - np.repeat(np.cumsum(rest) - rest, rest)
                rnd[np.repeat(off[:n], rest) + within] = rnd[np.repeat(src, rest) + within]
            rnd[off[n] :] = 0.0
            self.held[:n] = rest
        self.off = off
        v.rq[:, 0] = off
        # a row is due when fewer than its margin are left (at once, when new); the trap's first draw stops
        # the loop, and refill reports it
        v.rq[:, 1] = off + np.maximum(self.held - self.margin, 0) - 1
        v.rq[n, 1] = off[n] - 1

    def refill(self) -> None:
        v, n = self.v, len(self.draws)
        off, cap, held = self.off, self.cap, self.held
        pos = v.rq[:, 0] - off
        if pos[n] > 0:
            raise RuntimeError("fast engine: the kernel drew from a stream this model never uses")
        if (pos[:n] > held[:n]).any():  # pragma: no cover - a margin too small for some event
            s = int(np.flatnonzero(pos[:n] > held[:n])[0])
            raise RuntimeError(f"fast engine: an event drew more than {int(self.margin[s])} values from stream {s}")
        due = v.rq[:n, 0] > v.rq[:n, 1]
        # What each stream will still use: its pace since its first fill over the simulated time left, with a
        # quarter to spare (no pace yet: a whole row). A row holds no more than that (and at least FIRST
        # values), so a run does not end with rows of values drawn and never read (46 % of those drawn in a
        # 20 s test drive; now 2 %). A stream that speeds up only refills sooner; the values are the same.
        now = float(v.clock[0])
        need = np.full(n, np.iinfo(np.int64).max // 4, dtype=np.int64)
        span = now - self.since
        paced = (held[:n] > 0) & (span > 0.0) & ~self.constant  # a Constant's row is reread, never drawn
        if paced.any():
            used = (self.drawn - (held[:n] - pos[:n]))[paced]
            with np.errstate(all="ignore"):  # a span of a few ns: huge (or 0 x inf) estimates, capped below
                ahead = np.fmin(np.ceil(used * (1.25 * max(self.end - now, 0.0) / span[paced])), 2.0 * self.max_row)
            need[paced] = np.maximum(ahead.astype(np.int64), self.FIRST) + 2 * self.margin[:n][paced]
        want = np.minimum(cap[:n], need)
        # A new layout moves every row: rows with less than half of what they want left grow with the due
        # ones, so rows that run at one pace (thousands of like jobs) grow in one layout, not one layout each.
        low = 2 * (held[:n] - pos[:n]) < want
        can = (cap[:n] < self.max_row) & (held[:n] > 0) & (need > cap[:n])
        grow = (due | low) & can
        if grow.any() and cap.sum() + cap[:n][grow].sum() > self.BUDGET:
            grow = due & can
        if grow.any() and cap.sum() + cap[:n][grow].sum() <= self.BUDGET:
            cap[:n][grow] *= 2
            self._layout()
            off, pos = self.off, v.rq[:, 0] - self.off
            want = np.minimum(cap[:n], need)
        topup = np.flatnonzero(due | (2 * (held[:n] - pos[:n]) < want) | (held[:n] == 0))
        rnd = v.rnd
        for s in topup.tolist():
            o, d = int(off[s]), self.draws[s]
            if self.constant[s]:
                size = int(cap[s])
                rnd[o : o + size] = d.dist.value
            else:
                p, h = int(pos[s]), int(held[s])
                rest = h - p
                # at least one event's margin past what is left, at most the row
                size = min(int(cap[s]), max(int(want[s]), rest + 2 * int(self.margin[s]) + 1))
                rnd[o : o + rest] = rnd[o + p : o + h]
                d.take(size - rest, out=rnd[o + rest : o + size])
                if h == 0:
                    self.since[s] = now
                self.drawn[s] += size - rest
            v.rq[s, 0] = o
            v.rq[s, 1] = o + size - int(self.margin[s]) - 1
            held[s] = size
        v.flags[FL_REFILL] = 0


def _lay_out_state(model: Model, slots: list[int], trace: bool, queues: dict[str, Any]) -> Any:
    """The engine's own state (STATE): the event heap and FIFOs, each slot's row, the wires, the queues' table
    (``queues``, from :func:`_queue_table`), the open-loop jobs' FIFOs, the deadlines, the waiters, the trace."""
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


def _frame_params(model: Model) -> dict[str, Any]:
    """Each nexus's framing row (model/frames.py) as PARAMS fields; frames_on 0 when no nexus has a transport."""
    rows = [frame_row(c.transport, c.mtu) for c in model.controllers]
    on = any(r[0] != 0 for r in rows)
    return dict(frames_on=1 if on else 0, c_frm=np.array(rows if on else [[0] * N_FRAME], dtype=np.int64).reshape(-1, N_FRAME))


def _cpu_params(model: Model) -> dict[str, Any]:
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


def _queue_table(model: Model, slots: list[int]) -> tuple[dict[str, Any], dict[str, Any]]:
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
            cap[q.index] = _pow2(2 * n_slots + 4)
        elif q.rule in (HOST, PATH) and q.queue_depth > 0:
            cap[q.index] = _pow2(int(reach[q.index]) + 1)
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


def _fabric_params(model: Model, faults: tuple[Any, ...]) -> dict[str, Any]:
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


def _queue_counters(st: Any, model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each queue's time integrals of places in use and of what waited, over the window (brought up to its end, as
    queues.advance does), and its QUEUE FULLs: RunMetrics' queue_* arrays."""
    q, qf = st.q, st.qf
    w = np.maximum(0.0, model.end - np.maximum(qf[:, L.Q_LAST], model.ramp))
    in_use = qf[:, L.Q_AREA_IN_USE] + q[:, L.Q_IN_USE] * w
    waiting = qf[:, L.Q_AREA_WAITING] + (q[:, L.Q_TAIL] - q[:, L.Q_HEAD]) * w
    return in_use, waiting, q[:, L.Q_QFULL].copy()


def _pow2(n: int) -> int:
    return 1 << (max(int(n), 1) - 1).bit_length()


def resolve(policy: Any) -> tuple[PolicyDef, dict[str, Any]]:
    """The definition and parameters of a policy the fast engine can run (TypeError for any other)."""
    from ...policies.framework.adapter import CompiledPolicy
    from ...policies.registry import POLICY_DEFS
    from ...policies.spec import PolicySpec, parse_spec

    if isinstance(policy, str):
        policy = parse_spec(policy)[0]
    if isinstance(policy, PolicySpec):
        return POLICY_DEFS[policy.name], policy.as_dict()
    if isinstance(policy, PolicyDef):
        return policy, {p.name: p.default for p in policy.params}
    if isinstance(policy, CompiledPolicy) or (isinstance(policy, type) and issubclass(policy, CompiledPolicy)):
        inst = policy() if isinstance(policy, type) else policy
        return inst.definition, dict(inst.params)
    raise TypeError(f"the fast engine runs policies defined in the compiled style (a spec or a PolicyDef), not {policy!r}")


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
    run = _Run(model, defn, params, trace)
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


def _in_flight_at_end(st: Any, model: Any) -> np.ndarray:
    """Every I/O outstanding at the end: (job, issued) per busy slot (slots numbered by job, then within it), then an
    open loop's arrivals waiting for a slot (reference twin: the end of _Simulation.run)."""
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
