"""One run of the fast engine laid out from its model: the records the loop reads (:class:`Run`), and read back.

:class:`Run` lays the model out in the records :mod:`.layout` declares (PARAMS: the model as numbers; STATE: the
engine's own, by :func:`.fields.lay_out_state`; the view policies read; the recorder's record), starts the
processes SimPy starts first, and reads the event log, the trace and the policies' config strings back.
Reference twin: reference/state.py's ``State``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...metrics import stall_windows
from ...model import Model
from ...model.queues import DEVICE_QUEUE
from ...policies.framework.adapter import event_details
from ...policies.framework.define import DeviceInfo, PolicyDef, Snapshot
from ...policies.framework.kernel import (
    ALUA_CODES,
    ALUA_NAMES,
    EV_POLICY,
    FL_NEV,
    N_FLAGS,
    VIEW,
)
from ...timing.distributions import Constant
from ..recorder.record import new_record, numa_nodes
from ..streams import Draws, make_streams
from ..truth import truth_static
from . import layout as L
from .feed import EVENT_DRAWS, LOSS_DRAWS, Feed
from .fields import TRACE_CAP, cpu_params, fabric_params, frame_params, lay_out_state, queue_table
from .scheduler import push_urgent

__all__ = ["Run", "resolve", "EVENT_CAP"]

EVENT_CAP = 4096
_FAULT_NAMES = {v: k for k, v in L.FAULT_CODES.items()}
_LOG_NAMES = {L.LOG_PATH_DOWN: "path_down", L.LOG_PATH_UP: "path_up", L.LOG_ALUA: "alua"}


class Run:
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
                rq=np.zeros((len(feeds) + 1, 2), dtype=i64),  # laid out by Feed
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
        qp, qs = queue_table(model, slots)
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
                **fabric_params(model, faults),
                **cpu_params(model),
                **frame_params(model),
                first_on=1 if model.numa or (model.cpu is not None and any(c > 0.0 for c in model.cpu.path_submit)) else 0,
            )
        )

        # -- the engine's own state ----------------------------------------------------------------------
        self.state = lay_out_state(model, slots, trace, qs)
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
        self.feed = Feed(feeds, margins, self.view, model.end)
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
