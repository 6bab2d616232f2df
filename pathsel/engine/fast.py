"""The fast engine: the reference model compiled with numba, for sweeps and long runs.

Same model, same random streams, same event order as the reference engine
(``_kernel.py`` says how), so a run gives the same numbers on either engine;
only built-in policies run here. This module lays the compiled :class:`Model`
out as arrays, feeds the kernel blocks of pre-drawn random variates, and turns
its arrays back into :class:`RunMetrics`.

Memory is fixed by the model's size (paths, slots, histogram bins) plus one
row per time-series interval; it does not grow with the number of I/Os.
"""

from __future__ import annotations

import gc
import math
from typing import Any, Callable

import numpy as np

from ..metrics import LogHistogram, RunMetrics
from ..model import Model
from ..model.distributions import Constant
from ..policies import PolicySpec, parse_spec
from ..policies.esxi import fixed_preferred
from ..policies.linux_dm import ALUA_PRIO, hst_weights
from . import _kernel as K
from .streams import CHUNK, Draws, make_streams

__all__ = ["run_fast", "supports"]

_ALUA = {"AO": 0, "ANO": 1, "standby": 2, "unavailable": 3, "transitioning": 4}
_ALUA_NAMES = {v: k for k, v in _ALUA.items()}
_POLICY = {
    "fixed": K.POL_FIXED, "mru": K.POL_MRU, "rr": K.POL_RR, "latency": K.POL_LATENCY,
    "dm:round-robin": K.POL_DM_RR, "dm:queue-length": K.POL_DM_QL, "dm:service-time": K.POL_DM_ST,
    "dm:historical-service-time": K.POL_DM_HST,
    "nvme:numa": K.POL_NVME_NUMA, "nvme:round-robin": K.POL_NVME_RR, "nvme:queue-depth": K.POL_NVME_QD,
    "mpio:fo": K.POL_MPIO_FO, "mpio:rr": K.POL_RR, "mpio:rrws": K.POL_RR, "mpio:lqd": K.POL_MPIO_LQD,
    "mpio:wp": K.POL_MPIO_WP, "mpio:lb": K.POL_MPIO_LB,
    "hpp:fixed": K.POL_FIXED, "hpp:lb-rr": K.POL_HPP_RR, "hpp:lb-iops": K.POL_HPP_IOPS,
    "hpp:lb-bytes": K.POL_HPP_BYTES, "hpp:lb-latency": K.POL_LATENCY,
    "p2c-ewma": K.POL_P2C,
}
_LOG_NAMES = {K.LOG_PATH_DOWN: "path_down", K.LOG_PATH_UP: "path_up", K.LOG_ALUA: "alua"}
_DM_GROUPING = {"group_by_prio": 0, "multibus": 1, "failover": 2}
BLOCK = CHUNK  # pre-drawn values per stream: a return to Python costs ~15 us, a value ~5 ns
EVENT_CAP = 4096
TRACE_CAP = 1 << 16


def supports(policy: Any) -> bool:
    """True when the fast engine has this policy built in."""
    if isinstance(policy, str):
        try:
            policy = parse_spec(policy)[0]
        except ValueError:
            return False
    return isinstance(policy, PolicySpec) and policy.name in _POLICY


_FAULT_CODES = {
    "path_down": K.F_PATH_DOWN, "path_up": K.F_PATH_UP, "alua": K.F_ALUA, "latency": K.F_LATENCY, "loss": K.F_LOSS,
    "array_down": K.F_ARRAY_DOWN, "array_up": K.F_ARRAY_UP, "replication_down": K.F_REPL_DOWN,
    "replication_up": K.F_REPL_UP,
}
_FAULT_NAMES = {v: k for k, v in _FAULT_CODES.items()}


def _dm_rank(grouping: int, alua: int, up: int, k: int, n: int) -> int:
    """linux_dm.DmMultipath._rank from kernel values: the group of a usable path, else -1."""
    if not up or alua > 1:
        return -1
    if grouping == 1:
        return 0
    tier = 0 if alua == 0 else 1
    return tier if grouping == 0 else tier * n + k


def _build(model: Model, spec: PolicySpec, trace: bool):
    P, A, J, H = len(model.paths), len(model.arrays), len(model.jobs), len(model.hosts)
    C, L, D = len(model.controllers), len(model.links), len(model.devices)
    dev_paths = [model.device_paths(d) for d in range(D)]
    MP = max(1, max((len(dp) for dp in dev_paths), default=1))
    slots = [j.index for j in model.jobs for _ in range(j.iodepth)]
    N = len(slots)
    S_max = max(len(j.sizes) for j in model.jobs)
    i64, f64 = np.int64, np.float64

    streams = make_streams(model)
    draws = streams.all()
    # stream ids, in Streams.all() order: jobs, nexuses, (array, op) service, replication, loss
    str_job = np.arange(J, dtype=i64)
    str_path = J + np.arange(C, dtype=i64)
    str_svc = (J + C + np.arange(2 * A, dtype=i64)).reshape(A, 2)
    str_repl = np.array([J + C + 2 * A], dtype=i64)
    str_loss = J + C + 2 * A + 1 + np.arange(C + 1, dtype=i64)
    assert len(draws) == J + C + 2 * A + 1 + C + 1
    str_pol = np.full(D, -1, dtype=i64)
    if spec.name == "p2c-ewma":  # each device's policy generator, served in blocks as the policy's rng.random()
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
    for op, possible in ((0, any(j.read_fraction > 0 for j in model.jobs)), (1, any(j.read_fraction < 1 for j in model.jobs))):
        if not possible:
            used[str_svc[:, op]] = False
    row = np.full(len(draws), int(used.sum()), dtype=i64)  # the trap row is the last
    row[used] = np.arange(int(used.sum()))
    str_job, str_path, str_svc, str_repl, str_loss = (row[x] for x in (str_job, str_path, str_svc, str_repl, str_loss))
    if spec.name == "p2c-ewma":
        str_pol = row[str_pol]
    feeds = [d for d, u in zip(draws, used) if u]

    d_paths = np.full((D, MP), -1, dtype=i64)
    d_np = np.zeros(D, dtype=i64)
    p_local = np.zeros(P, dtype=i64)
    for d, dp in enumerate(dev_paths):
        d_np[d] = len(dp)
        for k, p in enumerate(dp):
            d_paths[d, k] = p.index
            p_local[p.index] = k
    ML = max(1, max((len(c.links) for c in model.controllers), default=1))
    c_links = np.full((C, ML), -1, dtype=i64)
    cpaths = [model.controller_paths(c) for c in range(C)]
    MPC = max(1, max((len(x) for x in cpaths), default=1))
    c_paths = np.full((C, MPC), -1, dtype=i64)
    for c, ctrl in enumerate(model.controllers):
        c_links[c, : len(ctrl.links)] = ctrl.links
        c_paths[c, : len(cpaths[c])] = cpaths[c]

    params = spec.as_dict()
    pol_i = np.zeros(K.N_POL_I, dtype=i64)
    pol_f = np.zeros(K.N_POL_F, dtype=f64)
    pol_w = np.zeros(64, dtype=np.uint64)
    pol_i[0] = _POLICY[spec.name]
    d_pref = np.zeros(D, dtype=i64)
    name = spec.name
    if name == "rr":
        pol_i[1] = 0 if params["type"] == "iops" else 1
        pol_i[2] = params["iops"] if params["type"] == "iops" else params["bytes"]
        pol_i[3] = params["use_ano"]
    elif name in ("mpio:rr", "mpio:rrws"):  # ESXi RR with iops=1, over every usable path or the working set
        pol_i[2] = 1
        pol_i[3] = 1 if name == "mpio:rr" else 0
    elif name in ("latency", "hpp:lb-latency"):
        hpp = name == "hpp:lb-latency"
        pol_i[3] = 0 if hpp else params["use_ano"]
        pol_i[4] = params["sampling_ios_per_path" if hpp else "num_sampling_cycles"]
        pol_i[5] = 0 if params["variant"] == "min-set" else 1
        pol_f[0] = params["latency_eval_time"] / 1000.0
        pol_f[1] = params["tolerance"]
    elif name in ("fixed", "hpp:fixed", "mpio:fo"):
        preferred = params.get("preferred", "")
        for d, dp in enumerate(dev_paths):
            if dp:
                d_pref[d] = dp.index(fixed_preferred(dp, preferred))
        if name == "mpio:fo":
            pol_i[K.PI_FAILBACK] = params["failback"]
    elif name.startswith("dm:"):
        pol_i[K.PI_GROUPING] = _DM_GROUPING[params["path_grouping_policy"]]
        fb = params["failback"]
        pol_i[K.PI_FAILBACK] = 0 if fb == "manual" else 1 if fb == "immediate" else 2
        pol_f[K.PF_FAILBACK] = float(int(fb)) if fb.isdigit() else math.inf
        if name == "dm:historical-service-time":
            pol_i[K.PI_HST_TM] = params["threshold_multiplier"]
            pol_w[:] = hst_weights(params["base_weight"])
    elif name == "hpp:lb-rr":
        pol_i[2] = params["iops"]
        pol_i[K.PI_HPP_BYTES] = params["bytes"]
    elif name in ("hpp:lb-iops", "hpp:lb-bytes"):
        pol_i[2] = params["iops" if name == "hpp:lb-iops" else "bytes"]
    elif name == "p2c-ewma":
        pol_i[3] = params["use_ano"]
        pol_f[K.PF_TAU] = params["decay"] * 1e9
    # dm: the groups each path is in at the start (DmMultipath.bind: every path is up)
    seen_rank = np.full((D, MP), -1, dtype=i64)
    if name.startswith("dm:"):
        for d, dp in enumerate(dev_paths):
            for k, p in enumerate(dp):
                seen_rank[d, k] = _dm_rank(pol_i[K.PI_GROUPING], _ALUA[p.alua], 1, k, len(dp))

    n_bins = max(1, int(np.ceil(model.end / model.interval - 1e-9)))
    faults = model.faults
    F = len(faults)
    MC = max(1, max((len(f.controllers) for f in faults), default=1))
    f_cs = np.full((F, MC), -1, dtype=i64)
    for i, f in enumerate(faults):
        f_cs[i, : len(f.controllers)] = f.controllers
    repl = model.replication
    if repl is not None:
        loser = repl.arrays[1] if repl.preferred_site == repl.arrays[0] else repl.arrays[0]
        r_f = np.array([repl.extra, repl.loss_ppm, repl.loss_recovery], dtype=f64)
        r_i = np.array([repl.preferred_site, loser], dtype=i64)
    else:
        r_f, r_i = np.zeros(3, dtype=f64), np.array([-1, -1], dtype=i64)
    ctrls = model.controllers
    prm = K.Params(
        protocol=np.array([0 if model.protocol == "scsi" else 1], dtype=i64),
        window=np.array([model.ramp, model.end, model.interval, 0.0], dtype=f64),
        p_array=np.array([p.array for p in model.paths], dtype=i64),
        p_dev=np.array([p.device for p in model.paths], dtype=i64),
        p_ctrl=np.array([p.controller for p in model.paths], dtype=i64),
        p_local=p_local,
        p_mirror=np.array([-1 if p.mirror is None else p.mirror for p in model.paths], dtype=i64),
        p_str=np.array([str_path[p.controller] for p in model.paths], dtype=i64),
        p_bw=np.array([p.bandwidth or 0.0 for p in model.paths], dtype=f64),
        c_host=np.array([c.host for c in ctrls], dtype=i64),
        c_bw=np.array([c.bandwidth or 0.0 for c in ctrls], dtype=f64),
        c_extra=np.array([c.extra for c in ctrls], dtype=f64),
        c_loss=np.array([c.loss_ppm for c in ctrls], dtype=f64),
        c_recov=np.array([c.loss_recovery for c in ctrls], dtype=f64),
        c_links=c_links,
        c_nlinks=np.array([len(c.links) for c in ctrls], dtype=i64),
        c_paths=c_paths,
        c_npaths=np.array([len(x) for x in cpaths], dtype=i64),
        l_bw=np.array([ln.bandwidth for ln in model.links] or [0.0], dtype=f64),
        a_conc=np.array([a.concurrency for a in model.arrays], dtype=i64),
        r_arrays=np.array(repl.arrays if repl else (-1, -1), dtype=i64),
        r_bw=np.array([(repl.bandwidth or 0.0) if repl else 0.0], dtype=f64),
        r_f=r_f,
        r_i=r_i,
        hp_det=np.array([h.detection for h in model.host_params], dtype=f64),
        hp_apd=np.array([h.apd_timeout for h in model.host_params], dtype=f64),
        hp_iot=np.array([h.io_timeout for h in model.host_params], dtype=f64),
        j_dev=np.array([j.device for j in model.jobs], dtype=i64),
        j_readfrac=np.array([j.read_fraction for j in model.jobs], dtype=f64),
        j_nsizes=np.array([len(j.sizes) for j in model.jobs], dtype=i64),
        j_sizes=np.array([list(j.sizes) + [0] * (S_max - len(j.sizes)) for j in model.jobs], dtype=i64),
        j_cumw=np.array([list(j.size_weights) + [0.0] * (S_max - len(j.sizes)) for j in model.jobs], dtype=f64),
        s_job0=np.array(slots, dtype=i64),
        d_paths=d_paths,
        d_np=d_np,
        d_host=np.array([d.host for d in model.devices], dtype=i64),
        f_time=np.array([f.at for f in faults], dtype=f64),
        f_what=np.array([_FAULT_CODES[f.what] for f in faults], dtype=i64),
        f_cs=f_cs,
        f_nc=np.array([len(f.controllers) for f in faults], dtype=i64),
        f_array=np.array([-1 if f.array is None else f.array for f in faults], dtype=i64),
        f_repl=np.array([1 if f.replication else 0 for f in faults], dtype=i64),
        f_add=np.array([f.add for f in faults], dtype=f64),
        f_ppm=np.array([f.ppm for f in faults], dtype=f64),
        f_state=np.array([_ALUA.get(f.state or "AO", 0) for f in faults], dtype=i64),
        f_origin=np.array([f.origin for f in faults], dtype=i64),
        f_revert=np.array([1 if f.revert else 0 for f in faults], dtype=i64),
        p_alua0=np.array([_ALUA[p.alua] for p in model.paths], dtype=i64),
        pol_i=pol_i,
        pol_f=pol_f,
        d_pref=d_pref,
        p_weight=np.array([p.weight for p in model.paths], dtype=i64),
        pol_w=pol_w,
        str_pol=str_pol,
        str_job=str_job,
        str_path=str_path,
        str_svc=str_svc,
        str_repl=str_repl,
        str_loss=str_loss,
        trace_on=np.array([1 if trace else 0], dtype=i64),
    )

    # Live timers: per slot two (an I/O's leg or service and its mirror's) or one APD timer, a notice per
    # nexus change still in its detection delay, the next fault. Twice that: the other half holds APD
    # timers of waits that ended, which start_wait drops once the heap is half full.
    notices = 2 * C + sum(len(f.controllers) for f in faults)
    heap_cap = 2 * (3 * N + notices + 16)
    pow2 = lambda n: 1 << (int(n) - 1).bit_length()  # ring buffers are indexed with a mask
    fifo_cap = pow2(8 * N + 4 * P + 64)
    # the most values one event can draw from a stream: a wake-up restarts every slot, and with
    # loss each frame may draw up to MAX_RESENDS + 1 uniforms
    margin = (K.MAX_RESENDS + 2) * (N + 1) + 16 if lossy else 2 * N + 16
    block = max(BLOCK, 4 * margin)
    tcap = TRACE_CAP if trace else 1
    W = C + L + 1
    wt_cap = pow2(2 * N + 8)
    EV_W = max(P, 1)
    ev_cap = max(EVENT_CAP, 8 * (P + D) + 64)
    st = K.State(
        si=np.zeros(K.N_SI, dtype=i64),
        sf=np.zeros(K.N_SF, dtype=f64),
        h_time=np.full(heap_cap + 3, np.inf, dtype=f64),  # +inf past the last entry: a pop reads 4 children
        h_key=np.zeros(heap_cap + 3, dtype=i64),
        h_arg=np.zeros(heap_cap + 3, dtype=i64),
        uf_kind=np.zeros(fifo_cap, dtype=i64),
        uf_arg=np.zeros(fifo_cap, dtype=i64),
        nf_kind=np.zeros(fifo_cap, dtype=i64),
        nf_arg=np.zeros(fifo_cap, dtype=i64),
        s_seq=np.zeros(N, dtype=i64),
        s_op=np.zeros(N, dtype=i64),
        s_size=np.zeros(N, dtype=i64),
        s_issued=np.zeros(N, dtype=f64),
        s_attempts=np.zeros(N, dtype=i64),
        s_path=np.zeros(N, dtype=i64),
        s_started=np.zeros(N, dtype=f64),
        s_stage=np.zeros(N, dtype=i64),
        s_epoch=np.zeros(N, dtype=i64),
        s_mstate=np.zeros(N, dtype=i64),
        s_mwait=np.zeros(N, dtype=i64),
        s_sample=np.full(N, -1, dtype=i64),
        s_deadline=np.zeros(N, dtype=f64),
        s_waitid=np.zeros(N, dtype=i64),
        s_woken=np.zeros(N, dtype=i64),
        s_wakeval=np.zeros(N, dtype=i64),
        up=np.ones(P, dtype=i64),
        alua=np.array([_ALUA[p.alua] for p in model.paths], dtype=i64),
        out=np.zeros(P, dtype=i64),
        out_bytes=np.zeros(P, dtype=i64),
        c_out=np.zeros(C, dtype=i64),
        c_out_bytes=np.zeros(C, dtype=i64),
        phys_up=np.ones(C, dtype=i64),
        epoch=np.zeros(C, dtype=i64),
        extra=np.array([c.extra for c in ctrls], dtype=f64),
        loss=np.array([c.loss_ppm for c in ctrls], dtype=f64),
        alive=np.ones(A, dtype=i64),
        wire_free=np.zeros((W, 2), dtype=f64),
        wire_busy=np.zeros((W, 2), dtype=f64),
        wire_wait=np.zeros((W, 2), dtype=f64),
        wire_frames=np.zeros((W, 2), dtype=i64),
        rec_pout=np.zeros(P, dtype=i64),
        rec_plast=np.zeros(P, dtype=f64),
        users=np.zeros(A, dtype=i64),
        aq_slot=np.zeros((A, pow2(2 * N + 4)), dtype=i64),
        aq_mirror=np.zeros((A, pow2(2 * N + 4)), dtype=i64),
        aq_head=np.zeros(A, dtype=i64),
        aq_tail=np.zeros(A, dtype=i64),
        wt_slot=np.zeros(wt_cap, dtype=i64),
        wt_id=np.zeros(wt_cap, dtype=i64),
        rnd=np.zeros((len(feeds) + 1, block), dtype=f64),
        rpos=np.zeros(len(feeds) + 1, dtype=i64),
        rlim=np.zeros(len(feeds) + 1, dtype=i64),  # set by _Feed
        hist=np.zeros((K.H_PATH0 + P, K.NBINS), dtype=i64),
        h_n=np.zeros(K.H_PATH0 + P, dtype=i64),
        h_total=np.zeros(K.H_PATH0 + P, dtype=f64),
        h_lo=np.full(K.H_PATH0 + P, np.inf, dtype=f64),
        h_hi=np.zeros(K.H_PATH0 + P, dtype=f64),
        bytes_op=np.zeros(2, dtype=i64),
        path_bytes=np.zeros(P, dtype=i64),
        ts_ios=np.zeros(n_bins, dtype=i64),
        ts_bytes=np.zeros(n_bins, dtype=i64),
        ts_lat_sum=np.zeros(n_bins, dtype=f64),
        ts_lat_max=np.zeros(n_bins, dtype=f64),
        ts_path_ios=np.zeros((n_bins, P), dtype=i64),
        ts_failed=np.zeros(n_bins, dtype=i64),
        path_area=np.zeros(P, dtype=f64),
        ev_t=np.zeros(ev_cap, dtype=f64),
        ev_dev=np.zeros(ev_cap, dtype=i64),
        ev_kind=np.zeros(ev_cap, dtype=i64),
        ev_path=np.zeros(ev_cap, dtype=i64),
        ev_a=np.zeros(ev_cap, dtype=i64),
        ev_b=np.zeros(ev_cap, dtype=i64),
        ev_mask=np.zeros((ev_cap, EV_W), dtype=np.int8),
        ev_avg=np.zeros((ev_cap, EV_W), dtype=f64),
        tr_seq=np.zeros(tcap, dtype=i64),
        tr_job=np.zeros(tcap, dtype=i64),
        tr_op=np.zeros(tcap, dtype=i64),
        tr_size=np.zeros(tcap, dtype=i64),
        tr_issued=np.zeros(tcap, dtype=f64),
        tr_done=np.zeros(tcap, dtype=f64),
        tr_path=np.zeros(tcap, dtype=i64),
        tr_attempts=np.zeros(tcap, dtype=i64),
        ps_cur=np.full(D, -1, dtype=i64),
        ps_count=np.zeros(D, dtype=i64),
        ps_sampling=np.zeros(D, dtype=i64),
        ps_cand=np.zeros((D, MP), dtype=i64),
        ps_ncand=np.zeros(D, dtype=i64),
        ps_incand=np.zeros((D, MP), dtype=i64),
        ps_issued=np.zeros(D, dtype=i64),
        ps_pending=np.zeros(D, dtype=i64),
        ps_sums=np.zeros((D, MP), dtype=f64),
        ps_counts=np.zeros((D, MP), dtype=i64),
        ps_active=np.zeros((D, MP), dtype=i64),
        ps_nactive=np.zeros(D, dtype=i64),
        ps_avg=np.full((D, MP), np.nan, dtype=f64),
        ps_next_eval=np.zeros(D, dtype=f64),
        ps_rot=np.zeros(D, dtype=i64),
        ps_last=np.full(D, -1, dtype=i64),
        ps_order=np.tile(np.arange(MP, dtype=i64), (D, 1)),
        ps_seen_rank=seen_rank,
        ps_seen_up=np.ones((D, MP), dtype=i64),
        ps_deadline=np.full(D, np.inf, dtype=f64),
        ps_bytes=np.zeros(D, dtype=i64),
        ps_hst=np.full((D, MP), 1 << 10, dtype=np.uint64),  # HST_FIXED_1
        ps_stale=np.zeros((D, MP), dtype=np.uint64),
        ps_lastfin=np.zeros((D, MP), dtype=i64),
        ps_cost=np.zeros((D, MP), dtype=f64),
        ps_stamp=np.zeros((D, MP), dtype=i64),  # int(now * 1e9) at bind: 0
        tmp=np.zeros(MP, dtype=i64),
        tmp2=np.zeros(MP, dtype=i64),
        wmask=np.zeros(MP, dtype=i64),
        tmp_wt=np.zeros(wt_cap, dtype=i64),
    )
    st.si[K.I_REPL_OK] = 1
    st.sf[K.F_REPL_EXTRA] = repl.extra if repl else 0.0
    st.sf[K.F_REPL_LOSS] = repl.loss_ppm if repl else 0.0
    # The processes SimPy starts first: every job slot, then the fault timeline.
    for s in range(N):
        K.push_urgent.py_func(st, K.EV_INIT, s)
    if faults:
        K.push_urgent.py_func(st, K.EV_FAULT_INIT, 0)
    return prm, st, _Feed(feeds, block, margin, st)


class _Feed:
    """The kernel's blocks of pre-drawn values, one row per stream the model uses.

    The kernel asks for a refill when a row has fewer than ``margin`` values
    left (the most one event can draw): the row keeps its unread values and is
    topped up from the stream's Draws, which serves the same sequence whatever
    the block sizes. Rows start at FIRST values, then hold ``block``: a short
    run neither generates nor touches (page faults cost) many values it never
    reads. A row of a Constant delay (every value the same number, and nothing
    drawn from its generator) is filled with that number, never from its Draws,
    and reread from the start when it runs low. The last row is
    the trap shared by streams the model cannot use: drawing from it is an
    error, reported at once.
    """

    FIRST = 4096

    def __init__(self, draws, block, margin, st) -> None:
        self.draws, self.block, self.margin = draws, block, margin
        self.first = min(block, max(self.FIRST, 2 * margin))
        self.held = [0] * len(draws)
        self.constant = [isinstance(d.dist, Constant) for d in draws]
        for s in range(len(draws)):  # every row is due at once; the trap only if drawn from
            st.rlim[s] = -margin
        st.rlim[len(draws)] = 0

    def refill(self, st) -> None:
        if st.rpos[len(self.draws)] > 0:
            raise RuntimeError("fast engine: the kernel drew from a stream this model never uses")
        for s, d in enumerate(self.draws):
            pos = int(st.rpos[s])
            if pos <= int(st.rlim[s]):
                continue
            held = self.held[s]
            size = self.block if held else self.first
            if self.constant[s]:
                st.rnd[s, held:size] = d.dist.value
                st.rpos[s] = 0
                st.rlim[s] = size - self.margin
                self.held[s] = size
                continue
            rest = held - pos
            st.rnd[s, :rest] = st.rnd[s, pos:held]
            st.rnd[s, rest:size] = d.take(size - rest)
            st.rpos[s] = 0
            st.rlim[s] = size - self.margin
            self.held[s] = size
        st.si[K.I_REFILL] = 0


def _drain_events(model: Model, st, out: list[dict[str, Any]]) -> None:
    names = [p.name for p in model.paths]
    for e in range(int(st.si[K.I_NEV])):
        t = float(st.ev_t[e])
        kind = int(st.ev_kind[e])
        if kind == K.LOG_FAULT:
            out.append({"t": t, "device": "", "event": "fault", "what": _FAULT_NAMES[int(st.ev_path[e])],
                        "fault": int(st.ev_a[e]), "revert": bool(st.ev_b[e])})
            continue
        device = model.devices[int(st.ev_dev[e])].name
        mask = st.ev_mask[e]
        if kind == K.LOG_SAMPLING:
            out.append({"t": t, "device": device, "event": "sampling_started",
                        "candidates": [names[p] for p in range(len(names)) if mask[p] == 1]})
        elif kind == K.LOG_EVALUATION:
            avg = st.ev_avg[e]
            sampled = [p for p in range(len(names)) if mask[p] > 0 and not math.isnan(avg[p])]
            out.append({"t": t, "device": device, "event": "evaluation",
                        "latency_us": {names[p]: round(float(avg[p]) * 1e6, 3) for p in sampled},
                        "active": [names[p] for p in range(len(names)) if mask[p] == 1],
                        "dropped": [names[p] for p in range(len(names)) if mask[p] == 2]})
        elif kind == K.LOG_GROUP_SWITCH:
            out.append({"t": t, "device": device, "event": "path_group_switch", "prio": int(st.ev_a[e]),
                        "old_prio": int(st.ev_b[e])})
        else:
            p = int(st.ev_path[e])
            out.append({"t": t, "device": device, "event": _LOG_NAMES[kind], "path": names[p],
                        "alua": _ALUA_NAMES[int(st.ev_a[e])], "up": bool(st.ev_b[e])})
    st.si[K.I_NEV] = 0


def _drain_trace(model: Model, st, out: list[tuple]) -> None:
    names = [p.name for p in model.paths]
    for t in range(int(st.si[K.I_NTRACE])):
        out.append((int(st.tr_seq[t]), int(st.tr_job[t]), "read" if st.tr_op[t] == 0 else "write", int(st.tr_size[t]),
                    float(st.tr_issued[t]), float(st.tr_done[t]), names[int(st.tr_path[t])], int(st.tr_attempts[t])))
    st.si[K.I_NTRACE] = 0


def _config_strings(model: Model, spec: PolicySpec, prm, st) -> dict[str, str]:
    """Each device's config string, as the Python policy's ``config_string()`` prints it, from kernel state."""
    out = {}
    params = spec.as_dict()
    name = spec.name
    for h, dev in enumerate(model.devices):
        host = dev.name
        hp = model.device_paths(h)
        cur = int(st.ps_cur[h])  # a local path index (dm: the current group's rank)
        last = int(st.ps_last[h])
        cur_name = hp[cur].name if cur >= 0 and not name.startswith("dm:") else "none"
        last_name = hp[last].name if last >= 0 else "none"
        if name == "rr":
            g = hp[cur].index if cur >= 0 else None
            out[host] = (
                f"{{policy={params['type']},iops={params['iops']},bytes={params['bytes']},useANO={params['use_ano']}; "
                f"lastPathIndex={cur if cur >= 0 else 0}: NumIOsPending={st.out[g] if g is not None else 0},"
                f"numBytesPending={st.out_bytes[g] if g is not None else 0}}}"
            )
        elif name in ("latency", "hpp:lb-latency"):
            avg = float(st.ps_avg[h, last]) if last >= 0 else math.nan
            latency_ms = round((0.0 if math.isnan(avg) else avg) * 1e3)
            pending = int(st.out[hp[last].index]) if last >= 0 else 0
            if name == "latency":
                cycle = min(int(st.ps_issued[h]) // max(int(st.ps_ncand[h]), 1), params["num_sampling_cycles"])
                out[host] = (
                    f"{{policy=latency,latencyEvalTime={params['latency_eval_time']},samplingCycles={params['num_sampling_cycles']},"
                    f"curSamplingCycle={cycle},useANO={params['use_ano']}; CurrentPath={last_name}: "
                    f"NumIOsPending={pending},latency={latency_ms}}}"
                )
            else:
                out[host] = (
                    f"{{pss=LB-Latency,latencyEvalTime={params['latency_eval_time']},"
                    f"samplingIOsPerPath={params['sampling_ios_per_path']}; CurrentPath={last_name}: "
                    f"NumIOsPending={pending},latency={latency_ms}}}"
                )
        elif name == "fixed":
            out[host] = f"{{preferred={hp[int(prm.d_pref[h])].name};current={cur_name}}}"
        elif name == "hpp:fixed":
            out[host] = f"{{pss=FIXED,preferred={hp[int(prm.d_pref[h])].name}; current={cur_name}}}"
        elif name == "mru":
            out[host] = f"{{Current Path={cur_name}}}"
        elif name.startswith("dm:"):
            out[host] = _dm_config(name, params, hp, cur, st)
        elif name in ("nvme:numa", "nvme:round-robin"):
            out[host] = f"iopolicy={name.partition(':')[2]} current_path={cur_name}"
        elif name == "nvme:queue-depth":
            active = int(st.c_out[hp[last].controller]) if last >= 0 else 0
            out[host] = f"iopolicy=queue-depth last_path={last_name} nr_active={active}"
        elif name == "mpio:fo":
            out[host] = f"LoadBalancePolicy=FOO active={cur_name} failback={params['failback']}"
        elif name in ("mpio:rr", "mpio:rrws"):
            out[host] = f"LoadBalancePolicy={'RR' if name == 'mpio:rr' else 'RRWS'} last={cur_name}"
        elif name in ("mpio:lqd", "mpio:wp", "mpio:lb"):
            value = 0
            if last >= 0:
                p = hp[last]
                value = int(st.c_out[p.controller] if name == "mpio:lqd" else p.weight if name == "mpio:wp" else st.c_out_bytes[p.controller])
            out[host] = f"LoadBalancePolicy={name.partition(':')[2].upper()} last={last_name} value={value}"
        elif name in ("hpp:lb-rr", "hpp:lb-iops", "hpp:lb-bytes"):
            pending = int(st.out[hp[cur].index]) if cur >= 0 else 0
            pending_bytes = int(st.out_bytes[hp[cur].index]) if cur >= 0 else 0
            if name == "hpp:lb-rr":
                head = f"pss=LB-RR,iops={params['iops']},bytes={params['bytes']}"
            elif name == "hpp:lb-iops":
                head = f"pss=LB-IOPS,iops={params['iops']}"
            else:
                head = f"pss=LB-BYTES,bytes={params['bytes']}"
            out[host] = f"{{{head}; CurrentPath={cur_name}: NumIOsPending={pending},numBytesPending={pending_bytes}}}"
        elif name == "p2c-ewma":
            text = f"{{policy=p2c-ewma,decay={params['decay']:g}s,useANO={params['use_ano']}"
            if last < 0:
                out[host] = text + "}"
            else:
                cost = float(st.ps_cost[h, last])
                out[host] = text + f"; last={last_name}: pending={int(st.out[hp[last].index])},cost_us={cost / 1e3:.1f}}}"
        else:  # pragma: no cover - supports() admits only the names above
            raise AssertionError(name)
    return out


def _dm_config(name: str, params: dict[str, Any], hp, current: int, st) -> str:
    """linux_dm.DmMultipath.config_string: multipath -ll's group line at the end of the run."""
    grouping = params["path_grouping_policy"]
    g = _DM_GROUPING[grouping]
    n = len(hp)
    ranks = [_dm_rank(g, int(st.alua[p.index]), int(st.up[p.index]), k, n) for k, p in enumerate(hp)]
    groups = sorted({r for r in ranks if r >= 0})
    cur = current if current in groups else (groups[0] if groups else -1)
    status = "active" if cur == current and cur >= 0 else "enabled"
    prios = [ALUA_PRIO[_ALUA_NAMES[int(st.alua[p.index])]] for k, p in enumerate(hp) if ranks[k] == cur]
    prio = sum(prios) // len(prios) if prios else 0
    args = "0"
    if name == "dm:historical-service-time" and (params["base_weight"] != 972 or params["threshold_multiplier"] != 0):
        args = f"2 {params['base_weight']} {params['threshold_multiplier']}"
    selector = name.partition(":")[2]
    return (
        f"policy='{selector} {args}' prio={prio} status={status} "
        f"[{len(groups)} group{'s' if len(groups) != 1 else ''}, {grouping}, failback={params['failback']}]"
    )


def _hist(st, row: int) -> LogHistogram:
    h = LogHistogram()
    h.counts = st.hist[row].copy()
    h.n = int(st.h_n[row])
    h.total = float(st.h_total[row])
    h.lo = float(st.h_lo[row])
    h.hi = float(st.h_hi[row])
    return h


def _drive(prm, st, feed, model, events, records, progress, step, ev_room, tr_room) -> None:
    """Call the kernel until the run ends, serving what it asks for in between."""
    t_stop = step
    pref, sref = K.to_params(prm), K.to_state(st)  # the kernel's view of the same arrays
    while True:
        status = K.run_kernel(pref, sref, t_stop, ev_room, tr_room)
        if status == K.REFILL:
            feed.refill(st)
        elif status == K.BUFFERS_FULL:
            _drain_events(model, st, events)
            _drain_trace(model, st, records)
        elif status == K.PAUSED:
            progress(float(st.sf[K.F_NOW]))
            t_stop += step
        else:
            return


def run_fast(
    model: Model, policy: Any, *, trace: bool = False, progress: Callable[[float], None] | None = None
) -> RunMetrics:
    """Simulate one run of ``model`` under a built-in policy (a spec string or PolicySpec)."""
    spec = parse_spec(policy)[0] if isinstance(policy, str) else policy
    if not supports(spec):
        raise TypeError(f"the fast engine runs built-in policies only, not {policy!r}")
    prm, st, feed = _build(model, spec, trace)
    events: list[dict[str, Any]] = []
    records: list[tuple] = []
    step = max(model.end / 100.0, model.interval) if progress else math.inf
    # room for one event's worth of log entries: a fault may log one per path, an evaluation one per device
    ev_room = st.ev_t.shape[0] - 8 - 4 * len(model.devices) - 2 * len(model.paths)
    tr_room = st.tr_seq.shape[0] - 2 if trace else np.iinfo(np.int64).max
    feed.refill(st)
    gc_was_on = gc.isenabled()
    gc.disable()  # the loop allocates nothing worth collecting; a collection costs more than it frees
    try:
        _drive(prm, st, feed, model, events, records, progress, step, ev_room, tr_room)
    finally:
        if gc_was_on:
            gc.enable()
    _drain_events(model, st, events)
    _drain_trace(model, st, records)
    # the end of the run: close the time integrals as Recorder.close does
    now = model.end
    st.sf[K.F_AREA] += st.si[K.I_INFLIGHT] * K.clip.py_func(prm, st.sf[K.F_LAST_T], now)
    for p in range(len(model.paths)):
        st.path_area[p] += st.rec_pout[p] * K.clip.py_func(prm, st.rec_plast[p], now)

    m = RunMetrics(len(model.paths), st.ts_ios.shape[0], model.interval, (model.ramp, model.end), n_wires=st.wire_busy.shape[0])
    m.overall = _hist(st, K.H_OVERALL)
    m.by_op = {"read": _hist(st, K.H_READ), "write": _hist(st, K.H_WRITE)}
    m.bytes_by_op = {"read": int(st.bytes_op[0]), "write": int(st.bytes_op[1])}
    m.path_hist = [_hist(st, K.H_PATH0 + p) for p in range(len(model.paths))]
    m.path_bytes = st.path_bytes.copy()
    m.ts_ios, m.ts_bytes = st.ts_ios.copy(), st.ts_bytes.copy()
    m.ts_latency_sum, m.ts_latency_max = st.ts_lat_sum.copy(), st.ts_lat_max.copy()
    m.ts_path_ios = st.ts_path_ios.copy()
    m.in_flight_area = float(st.sf[K.F_AREA])
    m.path_in_flight_area = st.path_area.copy()
    m.issued = int(st.si[K.I_ISSUED])
    m.completed = int(st.si[K.I_COMPLETED])
    m.failed = int(st.si[K.I_FAILED])
    m.retried = int(st.si[K.I_RETRIED])
    m.timed_out = int(st.si[K.I_TIMED_OUT])
    m.frames_lost = int(st.si[K.I_FRAMES_LOST])
    m.ts_failed = st.ts_failed.copy()
    m.wire_busy, m.wire_wait, m.wire_frames = st.wire_busy.copy(), st.wire_wait.copy(), st.wire_frames.copy()
    m.events = events
    m.config_strings = _config_strings(model, spec, prm, st)
    if trace:
        m.trace = records
    return m
