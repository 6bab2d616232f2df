"""The fast engine's compiled loop (numba). Read reference.py first: this is the same model.

It emulates the reference engine event for event. SimPy orders simultaneous
events by (time, priority, event id): URGENT process starts before NORMAL
events, then creation order. Here real timeouts live in a binary heap keyed
by (time, id); zero-delay events (a granted array slot, a released slot, a
mirror process starting or ending, a path-change wake-up) are created "now"
and so come after every heap event already due now, in creation order: they
live in two FIFOs, urgent and normal. An array's slots follow simpy.Resource
exactly: a request joins a FIFO and only the head is examined on each
trigger; a release takes effect at once but wakes the queue only when its
own (zero-delay) event is processed.

All state is in arrays (``Params`` and ``State``), so the loop can stop and
resume anywhere between events: to refill the blocks of pre-drawn random
variates, to report progress, or to empty the event and trace buffers.
Policies are the built-in ones, reimplemented with the same arithmetic as
their Python classes in pathsel.policies.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import cgutils, imputils, types
from numba.core.datamodel import models
from numba.core.extending import (
    infer_getattr,
    intrinsic,
    lower_getattr_generic,
    register_model,
)
from numba.core.typing.templates import AttributeTemplate
from numba.cpython.unsafe.numbers import leading_zeros
from numba.experimental import structref

# -- event kinds --------------------------------------------------------
EV_INIT, EV_LEG, EV_GRANT_MAIN, EV_SVC_MAIN, EV_RELEASE = 0, 1, 2, 3, 4
EV_MIRROR_INIT, EV_M_FWD, EV_GRANT_MIRROR, EV_M_SVC, EV_M_ACK, EV_M_END = 5, 6, 7, 8, 9, 10  # MIRROR_INIT: taken in line (on_leg)
EV_FAULT_INIT, EV_FAULT, EV_NOTICE, EV_APD_TIMER, EV_WAKE, EV_LEG_TIMEOUT = 11, 12, 13, 14, 15, 16

# -- stages of an I/O's main process ------------------------------------
ST_R_CMD, ST_R_SVC, ST_R_DATA = 0, 1, 2
ST_W_CMD, ST_W_XFER, ST_W_DATA, ST_W_SVC, ST_W_MIRROR_WAIT, ST_W_STATUS = 3, 4, 5, 6, 7, 8
ST_APD, ST_WAIT_LOST = 9, 10

# mirror process states
M_NONE, M_RUNNING, M_END_SCHEDULED, M_PROCESSED = 0, 1, 2, 3

# fault kinds (model.FaultModel.what)
F_PATH_DOWN, F_PATH_UP, F_ALUA, F_LATENCY, F_LOSS, F_ARRAY_DOWN, F_ARRAY_UP, F_REPL_DOWN, F_REPL_UP = range(9)

MAX_RESENDS = 64  # as reference.MAX_RESENDS

# policies (mpio:rr and mpio:rrws run as POL_RR, hpp:fixed as POL_FIXED, hpp:lb-latency as POL_LATENCY)
POL_FIXED, POL_MRU, POL_RR, POL_LATENCY = 0, 1, 2, 3
POL_DM_RR, POL_DM_QL, POL_DM_ST, POL_DM_HST = 4, 5, 6, 7  # dm-multipath selectors (path groups in common)
POL_NVME_NUMA, POL_NVME_RR, POL_NVME_QD = 8, 9, 10
POL_MPIO_FO, POL_MPIO_LQD, POL_MPIO_WP, POL_MPIO_LB = 11, 12, 13, 14
POL_HPP_RR, POL_HPP_IOPS, POL_HPP_BYTES = 15, 16, 17
POL_P2C = 18

# Params.pol_i: 0 kind, 1 rr type (0 iops, 1 bytes), 2 rr / hpp limit, 3 use_ano, 4 sampling cycles,
# 5 latency variant (0 min-set, 1 score), then:
PI_GROUPING = 6  # dm path_grouping_policy: 0 group_by_prio, 1 multibus, 2 failover
PI_FAILBACK = 7  # dm failback: 0 manual, 1 immediate, 2 seconds (pol_f[PF_FAILBACK]); mpio:fo failback 0/1
PI_HST_TM = 8  # dm historical-service-time threshold_multiplier
PI_HPP_BYTES = 9  # hpp:lb-rr bytes limit (pol_i[2] is its iops limit)
N_POL_I = 16
# Params.pol_f: 0 latency eval time (s), 1 tolerance, then:
PF_FAILBACK = 2  # dm failback seconds (inf: manual or immediate)
PF_TAU = 3  # p2c-ewma decay in nanoseconds
N_POL_F = 4

# dm-multipath: the alua prioritizer's priorities, historical-service-time's fixed point (linux_dm.py)
PRIO_AO, PRIO_ANO = 50, 10
HST_FIXED_MAX = np.uint64(((1 << 64) - 1) >> 10)
# p2c-ewma: Finagle's load of a busy path with no history (balancers.PENALTY)
P2C_PENALTY = float((2**63 - 1) >> 16)

# event log kinds
LOG_SAMPLING, LOG_EVALUATION, LOG_PATH_DOWN, LOG_PATH_UP, LOG_ALUA, LOG_FAULT = 0, 1, 2, 3, 4, 5
LOG_GROUP_SWITCH = 6  # dm path_group_switch: ev_a new group prio, ev_b old

# return codes
DONE, PAUSED, REFILL, BUFFERS_FULL = 0, 1, 2, 3

# integer scalars in State.si
I_EID, I_SEQ, I_ISSUED, I_COMPLETED, I_FAILED, I_RETRIED, I_INFLIGHT = 0, 1, 2, 3, 4, 5, 6
I_HEAPN, I_UF_HEAD, I_UF_TAIL, I_NF_HEAD, I_NF_TAIL = 7, 8, 9, 10, 11
I_FAULT_NEXT, I_WT_HEAD, I_WT_TAIL, I_NEV, I_NTRACE, I_REFILL = 12, 13, 14, 15, 16, 17
I_TIMED_OUT, I_FRAMES_LOST, I_REPL_OK = 18, 19, 20
I_STOP, I_EV_ROOM, I_TRACE_ROOM = 21, 22, 23  # the loop's one test per event: see _loop
I_HTOP = 24  # 1 while the heap's root is the event being processed, its removal deferred (heap_push)
N_SI = 25
# float scalars in State.sf
F_NOW, F_AREA, F_LAST_T, F_REPL_EXTRA, F_REPL_LOSS = 0, 1, 2, 3, 4
N_SF = 5

# histogram rows: 0 overall, 1 read, 2 write, 3 + p per path
H_OVERALL, H_READ, H_WRITE, H_PATH0 = 0, 1, 2, 3

SUB_BITS = 7
SUB = 1 << SUB_BITS
MAX_EXP = 48
NBINS = SUB + (MAX_EXP - SUB_BITS) * SUB

Params = namedtuple(
    "Params",
    [
        "protocol",  # i64[1]: 0 scsi, 1 nvme
        "window",  # f64[4]: ramp, end, interval, margin
        "p_array",
        "p_dev",  # device of each path
        "p_ctrl",  # nexus of each path
        "p_local",  # index among its device's paths
        "p_mirror",  # peer array a write through the path is mirrored to, or -1
        "p_str",  # value stream of the path's nexus (str_path[p_ctrl[p]])
        "p_bw",
        "c_host",
        "c_bw",
        "c_extra",  # one-way seconds added (distance)
        "c_loss",  # ppm
        "c_recov",
        "c_links",  # shared links crossed, -1 padded
        "c_nlinks",
        "c_paths",  # device paths over the nexus
        "c_npaths",
        "l_bw",
        "a_conc",
        "r_arrays",
        "r_bw",
        "r_f",  # extra, loss ppm, recovery
        "r_i",  # preferred site, loser
        "hp_det",  # host detection delay
        "hp_apd",  # host APD timeout (inf: queue)
        "hp_iot",  # host io_timeout
        "j_dev",
        "j_readfrac",
        "j_nsizes",
        "j_sizes",
        "j_cumw",
        "s_job0",  # job of each slot
        "d_paths",
        "d_np",
        "d_host",
        "f_time",
        "f_what",
        "f_cs",  # target nexuses, -1 padded
        "f_nc",
        "f_array",
        "f_repl",
        "f_add",
        "f_ppm",
        "f_state",
        "f_origin",
        "f_revert",
        "p_alua0",  # ALUA state at time 0
        "pol_i",  # N_POL_I policy integers (PI_* above)
        "pol_f",  # N_POL_F policy floats (PF_* above)
        "d_pref",  # fixed's preferred local path index per device
        "p_weight",  # each path's static weight (mpio:wp)
        "pol_w",  # historical-service-time's weights per bucket (u64 values)
        "str_pol",  # each device's policy stream (p2c-ewma), -1 when the policy draws nothing
        "str_job",
        "str_path",  # per nexus
        "str_svc",
        "str_repl",
        "str_loss",  # per nexus, then replication
        "trace_on",
    ],
)

State = namedtuple(
    "State",
    [
        "si", "sf", "h_time", "h_key", "h_arg", "uf_kind", "uf_arg", "nf_kind", "nf_arg", "s_seq",
        "s_op", "s_size", "s_issued", "s_attempts", "s_path", "s_started", "s_stage", "s_epoch", "s_mstate",
        "s_mwait", "s_sample", "s_deadline", "s_waitid", "s_woken", "s_wakeval", "up", "alua", "out",
        "out_bytes", "c_out", "c_out_bytes", "phys_up", "epoch", "extra", "loss", "alive", "wire_free",
        "wire_busy", "wire_wait", "wire_frames", "rec_pout", "rec_plast", "users", "aq_slot", "aq_mirror",
        "aq_head", "aq_tail", "wt_slot", "wt_id", "rnd", "rpos", "rlim", "hist", "h_n", "h_total", "h_lo",
        "h_hi", "bytes_op", "path_bytes", "ts_ios", "ts_bytes", "ts_lat_sum", "ts_lat_max", "ts_path_ios",
        "ts_failed", "path_area", "ev_t", "ev_dev", "ev_kind", "ev_path", "ev_a", "ev_b", "ev_mask", "ev_avg",
        "tr_seq", "tr_job", "tr_op", "tr_size", "tr_issued", "tr_done", "tr_path", "tr_attempts", "ps_cur",
        "ps_count", "ps_sampling", "ps_cand", "ps_ncand", "ps_incand", "ps_issued", "ps_pending", "ps_sums",
        "ps_counts", "ps_active", "ps_nactive", "ps_avg", "ps_next_eval", "ps_rot", "ps_last", "ps_order", "ps_seen_rank",
        "ps_seen_up", "ps_deadline", "ps_bytes", "ps_hst", "ps_stale", "ps_lastfin", "ps_cost", "ps_stamp", "tmp", "tmp2",
        "wmask", "tmp_wt",
    ],
)

# forceinline is inherited by callees that do not set it (numba's ConfigStack): set it everywhere.
_jit = nb.njit(cache=True, nogil=True, error_model="numpy", forceinline=False)
# The event path: LLVM inlines these into the loop (alwaysinline), so an event costs no calls
# (a call was a prologue, an epilogue and a status check; ~65 of them per replicated write).
_hot = nb.njit(cache=True, nogil=True, error_model="numpy", forceinline=True)


# -- structrefs: the compiled helpers take pointers, not 100-field tuples ----
# (numba passes a tuple by value and types every call with it: compiling the
# kernel with tuples took minutes; with structrefs, seconds). Python builds the
# namedtuples above and wraps them once per run (to_params, to_state): a
# KernelRef crosses into run_kernel as one pointer, where unboxing the two
# namedtuples' 166 arrays cost ~35 us per call (and the loop returns to Python
# for every refill). The arrays are shared: Python reads and writes them
# through the namedtuples.
_I1, _F1 = types.int64[::1], types.float64[::1]
_I2, _F2, _B2 = types.int64[:, ::1], types.float64[:, ::1], types.int8[:, ::1]
_U1, _U2 = types.uint64[::1], types.uint64[:, ::1]


@structref.register
class ParamsType(types.StructRef):
    pass


@structref.register
class StateType(types.StructRef):
    pass


class KernelRef(structref.StructRefProxy):
    """A Params or State StructRef on the Python side (opaque: use the namedtuple)."""


structref.define_boxing(ParamsType, KernelRef)
structref.define_boxing(StateType, KernelRef)


PARAMS_T = ParamsType([
    ("protocol", _I1),
    ("window", _F1),
    ("p_array", _I1),
    ("p_dev", _I1),
    ("p_ctrl", _I1),
    ("p_local", _I1),
    ("p_mirror", _I1),
    ("p_str", _I1),
    ("p_bw", _F1),
    ("c_host", _I1),
    ("c_bw", _F1),
    ("c_extra", _F1),
    ("c_loss", _F1),
    ("c_recov", _F1),
    ("c_links", _I2),
    ("c_nlinks", _I1),
    ("c_paths", _I2),
    ("c_npaths", _I1),
    ("l_bw", _F1),
    ("a_conc", _I1),
    ("r_arrays", _I1),
    ("r_bw", _F1),
    ("r_f", _F1),
    ("r_i", _I1),
    ("hp_det", _F1),
    ("hp_apd", _F1),
    ("hp_iot", _F1),
    ("j_dev", _I1),
    ("j_readfrac", _F1),
    ("j_nsizes", _I1),
    ("j_sizes", _I2),
    ("j_cumw", _F2),
    ("s_job0", _I1),
    ("d_paths", _I2),
    ("d_np", _I1),
    ("d_host", _I1),
    ("f_time", _F1),
    ("f_what", _I1),
    ("f_cs", _I2),
    ("f_nc", _I1),
    ("f_array", _I1),
    ("f_repl", _I1),
    ("f_add", _F1),
    ("f_ppm", _F1),
    ("f_state", _I1),
    ("f_origin", _I1),
    ("f_revert", _I1),
    ("p_alua0", _I1),
    ("pol_i", _I1),
    ("pol_f", _F1),
    ("d_pref", _I1),
    ("p_weight", _I1),
    ("pol_w", _U1),
    ("str_pol", _I1),
    ("str_job", _I1),
    ("str_path", _I1),
    ("str_svc", _I2),
    ("str_repl", _I1),
    ("str_loss", _I1),
    ("trace_on", _I1),
])
STATE_T = StateType([
    ("si", _I1),
    ("sf", _F1),
    ("h_time", _F1),
    ("h_key", _I1),
    ("h_arg", _I1),
    ("uf_kind", _I1),
    ("uf_arg", _I1),
    ("nf_kind", _I1),
    ("nf_arg", _I1),
    ("s_seq", _I1),
    ("s_op", _I1),
    ("s_size", _I1),
    ("s_issued", _F1),
    ("s_attempts", _I1),
    ("s_path", _I1),
    ("s_started", _F1),
    ("s_stage", _I1),
    ("s_epoch", _I1),
    ("s_mstate", _I1),
    ("s_mwait", _I1),
    ("s_sample", _I1),
    ("s_deadline", _F1),
    ("s_waitid", _I1),
    ("s_woken", _I1),
    ("s_wakeval", _I1),
    ("up", _I1),
    ("alua", _I1),
    ("out", _I1),
    ("out_bytes", _I1),
    ("c_out", _I1),
    ("c_out_bytes", _I1),
    ("phys_up", _I1),
    ("epoch", _I1),
    ("extra", _F1),
    ("loss", _F1),
    ("alive", _I1),
    ("wire_free", _F2),
    ("wire_busy", _F2),
    ("wire_wait", _F2),
    ("wire_frames", _I2),
    ("rec_pout", _I1),
    ("rec_plast", _F1),
    ("users", _I1),
    ("aq_slot", _I2),
    ("aq_mirror", _I2),
    ("aq_head", _I1),
    ("aq_tail", _I1),
    ("wt_slot", _I1),
    ("wt_id", _I1),
    ("rnd", _F2),
    ("rpos", _I1),
    ("rlim", _I1),
    ("hist", _I2),
    ("h_n", _I1),
    ("h_total", _F1),
    ("h_lo", _F1),
    ("h_hi", _F1),
    ("bytes_op", _I1),
    ("path_bytes", _I1),
    ("ts_ios", _I1),
    ("ts_bytes", _I1),
    ("ts_lat_sum", _F1),
    ("ts_lat_max", _F1),
    ("ts_path_ios", _I2),
    ("ts_failed", _I1),
    ("path_area", _F1),
    ("ev_t", _F1),
    ("ev_dev", _I1),
    ("ev_kind", _I1),
    ("ev_path", _I1),
    ("ev_a", _I1),
    ("ev_b", _I1),
    ("ev_mask", _B2),
    ("ev_avg", _F2),
    ("tr_seq", _I1),
    ("tr_job", _I1),
    ("tr_op", _I1),
    ("tr_size", _I1),
    ("tr_issued", _F1),
    ("tr_done", _F1),
    ("tr_path", _I1),
    ("tr_attempts", _I1),
    ("ps_cur", _I1),
    ("ps_count", _I1),
    ("ps_sampling", _I1),
    ("ps_cand", _I2),
    ("ps_ncand", _I1),
    ("ps_incand", _I2),
    ("ps_issued", _I1),
    ("ps_pending", _I1),
    ("ps_sums", _F2),
    ("ps_counts", _I2),
    ("ps_active", _I2),
    ("ps_nactive", _I1),
    ("ps_avg", _F2),
    ("ps_next_eval", _F1),
    ("ps_rot", _I1),
    ("ps_last", _I1),
    ("ps_order", _I2),
    ("ps_seen_rank", _I2),
    ("ps_seen_up", _I2),
    ("ps_deadline", _F1),
    ("ps_bytes", _I1),
    ("ps_hst", _U2),
    ("ps_stale", _U2),
    ("ps_lastfin", _I2),
    ("ps_cost", _F2),
    ("ps_stamp", _I2),
    ("tmp", _I1),
    ("tmp2", _I1),
    ("wmask", _I1),
    ("tmp_wt", _I1),
])


# -- borrowed views: the hot loop's P and S ------------------------------------
# A StructRef is reference counted: every compiled helper that takes one
# increments its count on entry and decrements it on exit (atomic instructions
# numba's pruner cannot remove: its del pattern joins in a phi), and every
# ``S.field`` does the same for the field's array. Measured on seed 004 that
# was most of the loop's time. ``borrow`` hands the loop a plain pointer to the
# struct's payload instead, and reading a field gives the array without its
# meminfo: no reference counting at all. Both are borrowed: run_kernel keeps
# the StructRefs (and so the arrays) alive until the loop returns.
class Borrowed(types.Type):
    """A pointer to a StructRef's payload, for reading its (array) fields."""

    def __init__(self, struct_type):
        self.struct_type = struct_type
        self.field_dict = struct_type.field_dict
        super().__init__(name=f"Borrowed[{struct_type.name}]")


@register_model(Borrowed)
class _BorrowedModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        payload = dmm.lookup(fe_type.struct_type.get_data_type()).get_value_type()
        super().__init__(dmm, fe_type, payload.as_pointer())


@infer_getattr
class _BorrowedAttrs(AttributeTemplate):
    key = Borrowed

    def generic_resolve(self, typ, attr):
        return typ.field_dict.get(attr)


@lower_getattr_generic(Borrowed)
def _borrowed_getattr(context, builder, typ, val, attr):
    data = cgutils.create_struct_proxy(typ.struct_type.get_data_type())(context, builder, ref=val)
    value = getattr(data, attr)
    fieldtype = typ.field_dict[attr]
    if isinstance(fieldtype, types.Array):  # drop the meminfo: nothing to count
        arr = context.make_array(fieldtype)(context, builder, value=value)
        arr.meminfo = cgutils.get_null_value(arr.meminfo.type)
        arr.parent = cgutils.get_null_value(arr.parent.type)
        value = arr._getvalue()
    return imputils.impl_ret_borrowed(context, builder, fieldtype, value)


@intrinsic
def borrow(typingctx, sref):
    """A Borrowed view of a StructRef; the StructRef must outlive it."""

    def codegen(context, builder, sig, args):
        return structref._Utils(context, builder, sig.args[0]).get_data_pointer(args[0])

    return Borrowed(sref)(sref), codegen


@intrinsic
def keep_alive(typingctx, a, b):
    """Uses ``a`` and ``b``: numba releases a variable after its last use."""

    def codegen(context, builder, sig, args):
        return context.get_dummy_value()

    return types.none(a, b), codegen


@intrinsic
def prefetch(typingctx, arr, i):
    """A hint to the CPU to fetch the cache line of ``arr``'s i-th element (flat, C order); it never faults."""
    sig = types.void(arr, i)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(builder.gep(ary.data, [args[1]]), i8p), i32(0), i32(3), i32(1)])  # read, keep, data
        return context.get_dummy_value()

    return sig, codegen


@_jit
def to_params(t):
    p = structref.new(PARAMS_T)
    p.protocol = t.protocol
    p.window = t.window
    p.p_array = t.p_array
    p.p_dev = t.p_dev
    p.p_ctrl = t.p_ctrl
    p.p_local = t.p_local
    p.p_mirror = t.p_mirror
    p.p_str = t.p_str
    p.p_bw = t.p_bw
    p.c_host = t.c_host
    p.c_bw = t.c_bw
    p.c_extra = t.c_extra
    p.c_loss = t.c_loss
    p.c_recov = t.c_recov
    p.c_links = t.c_links
    p.c_nlinks = t.c_nlinks
    p.c_paths = t.c_paths
    p.c_npaths = t.c_npaths
    p.l_bw = t.l_bw
    p.a_conc = t.a_conc
    p.r_arrays = t.r_arrays
    p.r_bw = t.r_bw
    p.r_f = t.r_f
    p.r_i = t.r_i
    p.hp_det = t.hp_det
    p.hp_apd = t.hp_apd
    p.hp_iot = t.hp_iot
    p.j_dev = t.j_dev
    p.j_readfrac = t.j_readfrac
    p.j_nsizes = t.j_nsizes
    p.j_sizes = t.j_sizes
    p.j_cumw = t.j_cumw
    p.s_job0 = t.s_job0
    p.d_paths = t.d_paths
    p.d_np = t.d_np
    p.d_host = t.d_host
    p.f_time = t.f_time
    p.f_what = t.f_what
    p.f_cs = t.f_cs
    p.f_nc = t.f_nc
    p.f_array = t.f_array
    p.f_repl = t.f_repl
    p.f_add = t.f_add
    p.f_ppm = t.f_ppm
    p.f_state = t.f_state
    p.f_origin = t.f_origin
    p.f_revert = t.f_revert
    p.p_alua0 = t.p_alua0
    p.pol_i = t.pol_i
    p.pol_f = t.pol_f
    p.d_pref = t.d_pref
    p.p_weight = t.p_weight
    p.pol_w = t.pol_w
    p.str_pol = t.str_pol
    p.str_job = t.str_job
    p.str_path = t.str_path
    p.str_svc = t.str_svc
    p.str_repl = t.str_repl
    p.str_loss = t.str_loss
    p.trace_on = t.trace_on
    return p


@_jit
def to_state(t):
    s = structref.new(STATE_T)
    s.si = t.si
    s.sf = t.sf
    s.h_time = t.h_time
    s.h_key = t.h_key
    s.h_arg = t.h_arg
    s.uf_kind = t.uf_kind
    s.uf_arg = t.uf_arg
    s.nf_kind = t.nf_kind
    s.nf_arg = t.nf_arg
    s.s_seq = t.s_seq
    s.s_op = t.s_op
    s.s_size = t.s_size
    s.s_issued = t.s_issued
    s.s_attempts = t.s_attempts
    s.s_path = t.s_path
    s.s_started = t.s_started
    s.s_stage = t.s_stage
    s.s_epoch = t.s_epoch
    s.s_mstate = t.s_mstate
    s.s_mwait = t.s_mwait
    s.s_sample = t.s_sample
    s.s_deadline = t.s_deadline
    s.s_waitid = t.s_waitid
    s.s_woken = t.s_woken
    s.s_wakeval = t.s_wakeval
    s.up = t.up
    s.alua = t.alua
    s.out = t.out
    s.out_bytes = t.out_bytes
    s.c_out = t.c_out
    s.c_out_bytes = t.c_out_bytes
    s.phys_up = t.phys_up
    s.epoch = t.epoch
    s.extra = t.extra
    s.loss = t.loss
    s.alive = t.alive
    s.wire_free = t.wire_free
    s.wire_busy = t.wire_busy
    s.wire_wait = t.wire_wait
    s.wire_frames = t.wire_frames
    s.rec_pout = t.rec_pout
    s.rec_plast = t.rec_plast
    s.users = t.users
    s.aq_slot = t.aq_slot
    s.aq_mirror = t.aq_mirror
    s.aq_head = t.aq_head
    s.aq_tail = t.aq_tail
    s.wt_slot = t.wt_slot
    s.wt_id = t.wt_id
    s.rnd = t.rnd
    s.rpos = t.rpos
    s.rlim = t.rlim
    s.hist = t.hist
    s.h_n = t.h_n
    s.h_total = t.h_total
    s.h_lo = t.h_lo
    s.h_hi = t.h_hi
    s.bytes_op = t.bytes_op
    s.path_bytes = t.path_bytes
    s.ts_ios = t.ts_ios
    s.ts_bytes = t.ts_bytes
    s.ts_lat_sum = t.ts_lat_sum
    s.ts_lat_max = t.ts_lat_max
    s.ts_path_ios = t.ts_path_ios
    s.ts_failed = t.ts_failed
    s.path_area = t.path_area
    s.ev_t = t.ev_t
    s.ev_dev = t.ev_dev
    s.ev_kind = t.ev_kind
    s.ev_path = t.ev_path
    s.ev_a = t.ev_a
    s.ev_b = t.ev_b
    s.ev_mask = t.ev_mask
    s.ev_avg = t.ev_avg
    s.tr_seq = t.tr_seq
    s.tr_job = t.tr_job
    s.tr_op = t.tr_op
    s.tr_size = t.tr_size
    s.tr_issued = t.tr_issued
    s.tr_done = t.tr_done
    s.tr_path = t.tr_path
    s.tr_attempts = t.tr_attempts
    s.ps_cur = t.ps_cur
    s.ps_count = t.ps_count
    s.ps_sampling = t.ps_sampling
    s.ps_cand = t.ps_cand
    s.ps_ncand = t.ps_ncand
    s.ps_incand = t.ps_incand
    s.ps_issued = t.ps_issued
    s.ps_pending = t.ps_pending
    s.ps_sums = t.ps_sums
    s.ps_counts = t.ps_counts
    s.ps_active = t.ps_active
    s.ps_nactive = t.ps_nactive
    s.ps_avg = t.ps_avg
    s.ps_next_eval = t.ps_next_eval
    s.ps_rot = t.ps_rot
    s.ps_last = t.ps_last
    s.ps_order = t.ps_order
    s.ps_seen_rank = t.ps_seen_rank
    s.ps_seen_up = t.ps_seen_up
    s.ps_deadline = t.ps_deadline
    s.ps_bytes = t.ps_bytes
    s.ps_hst = t.ps_hst
    s.ps_stale = t.ps_stale
    s.ps_lastfin = t.ps_lastfin
    s.ps_cost = t.ps_cost
    s.ps_stamp = t.ps_stamp
    s.tmp = t.tmp
    s.tmp2 = t.tmp2
    s.wmask = t.wmask
    s.tmp_wt = t.tmp_wt
    return s


# -- histogram ------------------------------------------------------------
@_hot
def bin_index(ns):
    if ns < SUB:
        return ns if ns > 0 else 0
    e = 63 - leading_zeros(ns)  # floor(log2(ns)): one lzcnt instead of a loop
    if e >= MAX_EXP:
        return NBINS - 1
    return SUB + (e - SUB_BITS) * SUB + ((ns >> (e - SUB_BITS)) - SUB)


@_hot
def hist_add(S, row, seconds):
    S.hist[row, bin_index(np.int64(seconds * 1e9))] += 1
    S.h_n[row] += 1
    S.h_total[row] += seconds
    if seconds < S.h_lo[row]:
        S.h_lo[row] = seconds
    if seconds > S.h_hi[row]:
        S.h_hi[row] = seconds


# -- scheduling ------------------------------------------------------------
# The FIFOs and queues are rings whose sizes are powers of two (fast.py), indexed
# with a mask: an integer division per push and pop cost more than the push.
# The heap is 4-ary (half the levels of a binary heap: a pop is a chain of
# dependent loads and compares, level after level) and holds (time, key = event
# id << 8 | kind, arg) in three arrays. Ids are unique, so every valid heap
# pops in the same order, and a new event's id is larger than every id already
# in the heap: a push compares times only. Every time slot past the last entry
# holds +inf (fast.py leaves three spare slots): a pop reads four children
# without bounds tests. Indices are cast to uint64, so numba skips its
# negative-index wraparound.
KIND_BITS = 8
KIND_MASK = (1 << KIND_BITS) - 1
_u = np.uint64


@_hot
def heap_push(S, t, kind, arg):
    si = S.si
    ht = S.h_time
    hk = S.h_key
    ha = S.h_arg
    eid = si[I_EID]
    si[I_EID] = eid + 1
    if si[I_HTOP] != 0:  # the root is the event being processed: the new entry takes its place
        si[I_HTOP] = 0
        heap_replace_top(S, t, (eid << KIND_BITS) | kind, arg)
        return
    i = si[I_HEAPN]
    si[I_HEAPN] = i + 1
    while i > 0:
        parent = (i - 1) >> 2
        pt = ht[_u(parent)]
        if pt <= t:  # equal times: the parent's id is smaller
            break
        ht[_u(i)] = pt
        hk[_u(i)] = hk[_u(parent)]
        ha[_u(i)] = ha[_u(parent)]
        i = parent
    ht[_u(i)] = t
    hk[_u(i)] = (eid << KIND_BITS) | kind
    ha[_u(i)] = arg


@_jit
def heap_min_child(ht, hk, c, n):
    """The child in c .. c + 3 (below n) with the smallest (time, key): for ties on time."""
    m = c
    for j in range(c + 1, min(c + 4, n)):
        if ht[j] < ht[m] or (ht[j] == ht[m] and hk[j] < hk[m]):
            m = j
    return m


@_hot
def heap_min4(ht, hk, c, n):
    """The smallest child in c .. c + 3 and its time, without branches (which child wins is a coin toss for the predictor)."""
    t0 = ht[_u(c)]
    t1 = ht[_u(c + 1)]
    t2 = ht[_u(c + 2)]
    t3 = ht[_u(c + 3)]
    b01 = t1 < t0
    m01 = c + b01
    tm01 = min(t0, t1)
    b23 = t3 < t2
    m23 = c + 2 + b23
    tm23 = min(t2, t3)
    m = m23 if tm23 < tm01 else m01
    tm = min(tm01, tm23)
    if (t0 == tm) + (t1 == tm) + (t2 == tm) + (t3 == tm) > 1:  # a tie on time (rare): compare keys
        m = heap_min_child(ht, hk, c, n)
    return m, tm


@_hot
def heap_replace_top(S, t, k, a):
    """Pop the root and push (t, k, a) in one pass: the new entry sinks from the root.

    Most events schedule exactly one timeout: a pop and then a push cost a sift to a
    leaf and a sift up; this is one partial sift down. ``k`` holds the newest id, so a
    child due at the same time goes first.
    """
    ht = S.h_time
    hk = S.h_key
    ha = S.h_arg
    n = S.si[I_HEAPN]
    i = 0
    c = 1
    while c < n:
        m, tm = heap_min4(ht, hk, c, n)
        if tm > t:
            break
        ht[_u(i)] = tm
        hk[_u(i)] = hk[_u(m)]
        ha[_u(i)] = ha[_u(m)]
        i = m
        c = 4 * i + 1
    ht[_u(i)] = t
    hk[_u(i)] = k
    ha[_u(i)] = a


@_hot
def heap_settle(S):
    """Remove the root if it is still the processed event (it scheduled no timeout)."""
    if S.si[I_HTOP] != 0:
        S.si[I_HTOP] = 0
        heap_pop(S)


@_hot
def heap_due_now(S):
    """True when a heap entry other than the event being processed is due at this instant."""
    ht = S.h_time
    now = S.sf[F_NOW]
    if S.si[I_HTOP] != 0:  # the next entry is among the root's children (+inf past the last)
        return S.si[I_HEAPN] > 1 and min(min(ht[1], ht[2]), min(ht[3], ht[4])) == now
    return S.si[I_HEAPN] > 0 and ht[0] == now


@_hot
def heap_pop(S):
    """Floyd's pop: the hole sinks along the smallest children to a leaf, then the last entry rises into it."""
    si = S.si
    ht = S.h_time
    hk = S.h_key
    ha = S.h_arg
    kind = hk[0] & KIND_MASK
    arg = ha[0]
    n = si[I_HEAPN] - 1
    si[I_HEAPN] = n
    if n > 0:
        t = ht[_u(n)]
        k = hk[_u(n)]
        a = ha[_u(n)]
        ht[_u(n)] = np.inf
        i = 0
        c = 1
        while c < n:
            m, tm = heap_min4(ht, hk, c, n)
            ht[_u(i)] = tm
            hk[_u(i)] = hk[_u(m)]
            ha[_u(i)] = ha[_u(m)]
            i = m
            c = 4 * i + 1
        while i > 0:
            parent = (i - 1) >> 2
            pt = ht[_u(parent)]
            if pt < t or (pt == t and hk[_u(parent)] < k):
                break
            ht[_u(i)] = pt
            hk[_u(i)] = hk[_u(parent)]
            ha[_u(i)] = ha[_u(parent)]
            i = parent
        ht[_u(i)] = t
        hk[_u(i)] = k
        ha[_u(i)] = a
    return kind, arg


@_jit
def heap_drop_stale_timers(S):
    """Drop the APD timers of waits that are over (due, they would do nothing), then rebuild the heap.

    A slot that is woken and waits again leaves its old timer in the heap, so without this
    the heap grows with every wake-up while the APD timeout is long (start_wait calls it when
    the heap is half full). Each kept entry keeps its key (time, id << 8 | kind), so the pop
    order does not change.
    """
    heap_settle(S)
    n_slots = S.s_waitid.shape[0]
    ht = S.h_time
    hk = S.h_key
    ha = S.h_arg
    n = S.si[I_HEAPN]
    m = 0
    for i in range(n):
        if (hk[i] & KIND_MASK) == EV_APD_TIMER:
            a = ha[i]
            w = a % n_slots
            if S.s_waitid[w] != a // n_slots or S.s_woken[w] != 0:
                continue
        ht[m] = ht[i]
        hk[m] = hk[i]
        ha[m] = ha[i]
        m += 1
    for i in range(m, n):
        ht[i] = np.inf  # heap_pop reads up to three entries past the last: they must be +inf
    S.si[I_HEAPN] = 0
    for i in range(m):  # re-insert in place: entry i is read before the heap (size i) can write at i
        t = ht[i]
        k = hk[i]
        a = ha[i]
        j = S.si[I_HEAPN]
        S.si[I_HEAPN] = j + 1
        while j > 0:
            parent = (j - 1) >> 2
            pt = ht[parent]
            if pt < t or (pt == t and hk[parent] < k):
                break
            ht[j] = pt
            hk[j] = hk[parent]
            ha[j] = ha[parent]
            j = parent
        ht[j] = t
        hk[j] = k
        ha[j] = a


@_hot
def push_urgent(S, kind, arg):
    i = S.si[I_UF_TAIL] & (S.uf_kind.shape[0] - 1)
    tail = S.si[I_UF_TAIL]
    S.uf_kind[i] = kind
    S.uf_arg[i] = arg
    S.si[I_UF_TAIL] = tail + 1
    S.si[I_EID] += 1


@_hot
def push_normal(S, kind, arg):
    i = S.si[I_NF_TAIL] & (S.nf_kind.shape[0] - 1)
    tail = S.si[I_NF_TAIL]
    S.nf_kind[i] = kind
    S.nf_arg[i] = arg
    S.si[I_NF_TAIL] = tail + 1
    S.si[I_EID] += 1


@_hot
def timeout(S, delay, kind, arg):
    now = S.sf[F_NOW]
    t = now + delay
    if t == now:  # a zero (or absorbed) delay: due now, after everything already due
        push_normal(S, kind, arg)
    else:
        heap_push(S, t, kind, arg)


# -- random variates ---------------------------------------------------------
@_hot
def draw(S, stream):
    st = _u(stream)
    pos = S.rpos[st]
    # Rows are read in step, a value at a time, and 20 or more at once: more than the
    # hardware prefetcher follows, so a new line was a miss to L3 every eighth value.
    # Ask for the line after this one now; it is needed ~8 draws from this row later.
    prefetch(S.rnd, st * _u(S.rnd.shape[1]) + _u(pos + 8))
    v = S.rnd[st, _u(pos)]
    S.rpos[st] = pos + 1
    if pos + 1 > S.rlim[st]:  # fewer than a margin left: refill before the next event
        S.si[I_REFILL] = 1
        S.si[I_STOP] = 1
    return v


# (every stream holds its distribution's own values, drawn by streams.Draws: see streams.py)


# -- recorder (same arithmetic as metrics.Recorder) --------------------------
@_hot
def clip(P, t0, t1):
    return max(0.0, min(t1, P.window[1]) - max(t0, P.window[0]))


@_hot
def rec_issue(P, S, now):
    S.si[I_ISSUED] += 1
    S.sf[F_AREA] += S.si[I_INFLIGHT] * clip(P, S.sf[F_LAST_T], now)
    S.si[I_INFLIGHT] += 1
    S.sf[F_LAST_T] = now


@_hot
def rec_path(P, S, now, p, delta):
    S.path_area[p] += S.rec_pout[p] * clip(P, S.rec_plast[p], now)
    S.rec_pout[p] += delta
    S.rec_plast[p] = now


@_hot
def rec_complete(P, S, now, op, size, latency, p, path_latency):
    S.si[I_COMPLETED] += 1
    S.sf[F_AREA] += S.si[I_INFLIGHT] * clip(P, S.sf[F_LAST_T], now)
    S.si[I_INFLIGHT] -= 1
    S.sf[F_LAST_T] = now
    nb_ = S.ts_ios.shape[0]
    b = min(np.int64(now / P.window[2]), nb_ - 1)
    S.ts_ios[b] += 1
    S.ts_bytes[b] += size
    S.ts_lat_sum[b] += latency
    if latency > S.ts_lat_max[b]:
        S.ts_lat_max[b] = latency
    S.ts_path_ios[b, p] += 1
    if P.window[0] <= now < P.window[1]:
        hist_add(S, H_OVERALL, latency)
        hist_add(S, H_READ + op, latency)
        S.bytes_op[op] += size
        hist_add(S, H_PATH0 + p, path_latency)
        S.path_bytes[p] += size


@_jit
def rec_fail(P, S, now):
    S.si[I_FAILED] += 1
    S.ts_failed[min(np.int64(now / P.window[2]), S.ts_failed.shape[0] - 1)] += 1
    S.sf[F_AREA] += S.si[I_INFLIGHT] * clip(P, S.sf[F_LAST_T], now)
    S.si[I_INFLIGHT] -= 1
    S.sf[F_LAST_T] = now


# -- event log ---------------------------------------------------------------
@_jit
def log_event(S, now, h, kind, p, a, b):
    e = S.si[I_NEV]
    S.si[I_NEV] = e + 1
    if e + 1 > S.si[I_EV_ROOM]:
        S.si[I_STOP] = 1
    S.ev_t[e] = now
    S.ev_dev[e] = h
    S.ev_kind[e] = kind
    S.ev_path[e] = p
    S.ev_a[e] = a
    S.ev_b[e] = b
    return e


# -- policies ----------------------------------------------------------------
@_hot
def usable(S, p):
    return S.up[p] == 1 and S.alua[p] <= 1


@_hot
def working_set(P, S, h, use_ano, out):
    """alua_working_set: local indices into out; returns the count."""
    n = 0
    npaths = P.d_np[h]
    if use_ano:
        for k in range(npaths):
            if usable(S, P.d_paths[h, k]):
                out[n] = k
                n += 1
        return n
    for k in range(npaths):
        p = P.d_paths[h, k]
        if usable(S, p) and S.alua[p] == 0:
            out[n] = k
            n += 1
    if n == 0:
        for k in range(npaths):
            p = P.d_paths[h, k]
            if usable(S, p) and S.alua[p] == 1:
                out[n] = k
                n += 1
    return n


@_hot
def in_set(k, out, n):
    for i in range(n):
        if out[i] == k:
            return True
    return False


@_hot
def next_after(P, h, cur, out, n):
    if cur < 0:
        return out[0]
    npaths = P.d_np[h]
    for step in range(1, npaths + 1):
        cand = cur + step
        if cand >= npaths:
            cand -= npaths
        if in_set(cand, out, n):
            return cand
    return out[0]


@_hot
def select_fixed(P, S, h):
    pref = P.d_pref[h]
    if usable(S, P.d_paths[h, pref]):
        S.ps_cur[h] = pref
    elif S.ps_cur[h] < 0 or not usable(S, P.d_paths[h, S.ps_cur[h]]):
        n = working_set(P, S, h, False, S.tmp)
        S.ps_cur[h] = S.tmp[0] if n > 0 else -1
    return S.ps_cur[h]


@_hot
def select_mru(P, S, h):
    cur = S.ps_cur[h]
    if cur >= 0 and usable(S, P.d_paths[h, cur]):
        if S.alua[P.d_paths[h, cur]] == 0:
            return cur
        any_ao = False
        for k in range(P.d_np[h]):
            p = P.d_paths[h, k]
            if usable(S, p) and S.alua[p] == 0:
                any_ao = True
        if not any_ao:
            return cur
    n = working_set(P, S, h, False, S.tmp)
    S.ps_cur[h] = S.tmp[0] if n > 0 else -1
    return S.ps_cur[h]


# Membership of the working set without listing it (the per-I/O policies): a path is in
# it when usable and, unless useANO, in the set's ALUA tier: AO while any AO path is
# usable, else ANO. The tier needs no scan when the path in use is a usable AO path.
@_hot
def ws_tier(P, S, h, use_ano, cur):
    """-1 with useANO (every usable path), else 0 (AO) or 1 (ANO): alua_working_set's choice."""
    if use_ano:
        return -1
    if cur >= 0:
        p = P.d_paths[h, cur]
        if usable(S, p) and S.alua[p] == 0:
            return 0
    for k in range(P.d_np[h]):
        p = P.d_paths[h, k]
        if usable(S, p) and S.alua[p] == 0:
            return 0
    return 1


@_hot
def ws_member(S, p, tier):
    return usable(S, p) and (tier < 0 or S.alua[p] == tier)


@_hot
def select_rr(P, S, h, size):
    """As working_set then next_after, without listing the set: one or two paths looked at per I/O."""
    cur = S.ps_cur[h]
    tier = ws_tier(P, S, h, P.pol_i[3] != 0, cur)
    if cur < 0 or not ws_member(S, P.d_paths[h, cur], tier) or S.ps_count[h] >= P.pol_i[2]:
        npaths = P.d_np[h]
        start = 0 if cur < 0 else cur + 1
        nxt = -1
        for step in range(npaths):  # the first member after cur, cyclically (cur itself last)
            cand = start + step
            if cand >= npaths:
                cand -= npaths
            if ws_member(S, P.d_paths[h, cand], tier):
                nxt = cand
                break
        if nxt < 0:  # an empty working set
            return -1
        cur = nxt
        S.ps_count[h] = 0
    S.ps_cur[h] = cur
    S.ps_count[h] += 1 if P.pol_i[1] == 0 else size
    return cur


@_jit
def lat_open_window(P, S, h, n, now):
    S.ps_sampling[h] = 1
    S.ps_ncand[h] = n
    S.ps_incand[h, :] = 0
    for i in range(n):
        S.ps_cand[h, i] = S.tmp[i]
        S.ps_incand[h, S.tmp[i]] = 1
    S.ps_issued[h] = 0
    # forget samples of the previous window still in flight (the dict is cleared)
    for s in range(S.s_sample.shape[0]):
        if P.j_dev[P.s_job0[s]] == h:
            S.s_sample[s] = -1
    S.ps_pending[h] = 0
    S.ps_sums[h, :] = 0.0
    S.ps_counts[h, :] = 0
    e = log_event(S, now, h, LOG_SAMPLING, -1, 0, 0)
    S.ev_mask[e, :] = 0
    for i in range(n):
        S.ev_mask[e, P.d_paths[h, S.tmp[i]]] = 1


@_jit
def working_mask(P, S, h):
    """wmask[k] = 1 for the local paths in the ALUA working set; returns the count."""
    n = working_set(P, S, h, P.pol_i[3] != 0, S.tmp)
    S.wmask[: P.d_np[h]] = 0
    for i in range(n):
        S.wmask[S.tmp[i]] = 1
    return n


@_jit
def lat_sample_path(P, S, h):
    """The next sample target still in the working set (wmask), or -1."""
    nc = S.ps_ncand[h]
    total = P.pol_i[4] * nc
    while S.ps_issued[h] < total:
        k = S.ps_cand[h, S.ps_issued[h] % nc]
        S.ps_issued[h] += 1
        if S.wmask[k] == 1:
            return k
    return -1


@_jit
def lat_evaluate(P, S, h, now):
    nc = S.ps_ncand[h]
    working_mask(P, S, h)
    S.ps_sampling[h] = 0
    S.ps_next_eval[h] = now + P.pol_f[0]
    nsampled = 0
    for i in range(nc):
        k = S.ps_cand[h, i]
        if S.ps_counts[h, k] > 0 and S.wmask[k] == 1:
            nsampled += 1
    if nsampled == 0:
        S.ps_nactive[h] = 0
        return
    best = np.inf
    S.ps_avg[h, :] = np.nan
    for i in range(nc):
        k = S.ps_cand[h, i]
        if S.ps_counts[h, k] > 0 and S.wmask[k] == 1:
            avg = S.ps_sums[h, k] / S.ps_counts[h, k]
            S.ps_avg[h, k] = avg
            if avg < best:
                best = avg
    na = 0
    for i in range(nc):
        k = S.ps_cand[h, i]
        avg = S.ps_avg[h, k]
        if avg == avg:  # sampled
            if P.pol_i[5] == 1 or avg <= best * (1.0 + P.pol_f[1]):
                S.ps_active[h, na] = k
                na += 1
    S.ps_nactive[h] = na
    S.ps_rot[h] = 0
    e = log_event(S, now, h, LOG_EVALUATION, -1, 0, 0)
    S.ev_mask[e, :] = 0
    S.ev_avg[e, :] = np.nan
    for i in range(nc):
        k = S.ps_cand[h, i]
        p = P.d_paths[h, k]
        S.ev_mask[e, p] = 2  # candidate, dropped unless chosen below
        S.ev_avg[e, p] = S.ps_avg[h, k]
    for i in range(na):
        S.ev_mask[e, P.d_paths[h, S.ps_active[h, i]]] = 1


@_jit
def select_latency(P, S, h, s, now):
    if S.ps_sampling[h] == 0 and now < S.ps_next_eval[h]:
        # Between evaluations: the chosen paths still in the working set, without listing
        # the set (the general case below does the same when this finds none).
        tier = ws_tier(P, S, h, P.pol_i[3] != 0, S.ps_last[h])
        m = 0
        for i in range(S.ps_nactive[h]):
            k = S.ps_active[h, i]
            if ws_member(S, P.d_paths[h, k], tier):
                S.tmp2[m] = k
                m += 1
        if m > 0:
            return lat_pick(P, S, h, m)
    while True:
        n = working_mask(P, S, h)
        if n == 0:
            return -1
        # in use: the chosen paths still in the working set
        m = 0
        for i in range(S.ps_nactive[h]):
            k = S.ps_active[h, i]
            if S.wmask[k] == 1:
                S.tmp2[m] = k
                m += 1
        if S.ps_sampling[h] == 0 and (now >= S.ps_next_eval[h] or m == 0):
            lat_open_window(P, S, h, n, now)
        if S.ps_sampling[h] == 1:
            k = lat_sample_path(P, S, h)
            if k >= 0:
                if S.s_sample[s] < 0:  # a dict entry per I/O: a retried sample replaces its own
                    S.ps_pending[h] += 1
                S.s_sample[s] = P.d_paths[h, k]
                S.ps_last[h] = k
                return k
            if S.ps_pending[h] == 0:
                lat_evaluate(P, S, h, now)
                continue
        if m == 0:
            for i in range(n):
                S.tmp2[i] = S.tmp[i]
            m = n
        return lat_pick(P, S, h, m)


@_hot
def lat_pick(P, S, h, m):
    """The path for this I/O among the m in tmp2: the lowest score, or the next in rotation."""
    if P.pol_i[5] == 1 and S.ps_sampling[h] == 0:
        best_k = -1
        best = 0.0
        for i in range(m):
            k = S.tmp2[i]
            p = P.d_paths[h, k]
            avg = S.ps_avg[h, k]
            if avg != avg:
                avg = 0.0
            score = avg * (S.out[p] + 1)
            if best_k < 0 or score < best:
                best_k = k
                best = score
        k = best_k
    else:
        k = S.tmp2[S.ps_rot[h] % m]
        S.ps_rot[h] += 1
    S.ps_last[h] = k
    return k


@_jit
def lat_on_complete(P, S, h, s, p, size, latency, now):
    expected = S.s_sample[s]
    if expected < 0:
        return
    S.s_sample[s] = -1
    S.ps_pending[h] -= 1
    k = P.p_local[p]
    if expected == p and S.ps_incand[h, k] == 1:
        bw = P.p_bw[p]
        value = latency
        if bw > 0.0:
            value = max(latency - (size - 4096) / bw, 0.0)
        S.ps_sums[h, k] += value
        S.ps_counts[h, k] += 1
    if S.ps_sampling[h] == 1 and S.ps_pending[h] == 0 and S.ps_issued[h] >= P.pol_i[4] * S.ps_ncand[h]:
        lat_evaluate(P, S, h, now)


@_jit
def lat_on_path_change(P, S, h, p, now):
    if not usable(S, p) and S.ps_sampling[h] == 1:
        for s in range(S.s_sample.shape[0]):
            if S.s_sample[s] == p:
                S.s_sample[s] = -1
                S.ps_pending[h] -= 1
        if S.ps_pending[h] == 0 and S.ps_issued[h] >= P.pol_i[4] * S.ps_ncand[h]:
            lat_evaluate(P, S, h, now)


# -- dm-multipath (linux_dm.py): path groups, failback and four selectors ------
# ps_cur: the current group's rank (-1 none); ps_order: every group's valid-list order at once;
# ps_seen_rank / ps_seen_up: what the last sync saw; ps_deadline: failback=N's time.
@_jit
def dm_class_rank(P, S, h, k):
    """The group of local path k by its ALUA state (usable or not); -1 for standby and worse."""
    a = S.alua[P.d_paths[h, k]]
    if a > 1:
        return -1
    g = P.pol_i[PI_GROUPING]
    if g == 1:  # multibus
        return 0
    tier = 0 if a == 0 else 1
    if g == 0:  # group_by_prio
        return tier
    return tier * P.d_np[h] + k  # failover


@_jit
def dm_rank(P, S, h, k):
    """The group of a usable path, -1 for a path no group can use now."""
    if not usable(S, P.d_paths[h, k]):
        return -1
    return dm_class_rank(P, S, h, k)


@_jit
def dm_move(S, h, n, k, head):
    """Take k out of the valid-list order and put it at the head or the tail."""
    i = 0
    while S.ps_order[h, i] != k:
        i += 1
    if head:
        while i > 0:
            S.ps_order[h, i] = S.ps_order[h, i - 1]
            i -= 1
        S.ps_order[h, 0] = k
    else:
        while i < n - 1:
            S.ps_order[h, i] = S.ps_order[h, i + 1]
            i += 1
        S.ps_order[h, n - 1] = k


@_jit
def dm_sync(P, S, h, now):
    """DmMultipath._sync: reinstate paths that (re)joined a group, arm failback, in path order."""
    n = P.d_np[h]
    fb = P.pol_f[PF_FAILBACK]
    for k in range(n):
        rank = dm_rank(P, S, h, k)
        up = S.up[P.d_paths[h, k]]
        if rank >= 0 and rank != S.ps_seen_rank[h, k]:
            dm_move(S, h, n, k, P.pol_i[0] == POL_DM_RR)  # round-robin reinstates at the head
            cur = S.ps_cur[h]
            if cur >= 0 and rank < cur and fb < np.inf:
                if S.ps_seen_up[h, k] == 0 or S.ps_deadline[h] == np.inf:
                    S.ps_deadline[h] = now + fb
        S.ps_seen_rank[h, k] = rank
        S.ps_seen_up[h, k] = up


@_jit
def dm_group_prio(P, S, h, rank):
    """The mean alua prio of the group's usable paths (integer division), 0 for an empty group."""
    total = 0
    m = 0
    for k in range(P.d_np[h]):
        if dm_rank(P, S, h, k) == rank:
            total += PRIO_AO if S.alua[P.d_paths[h, k]] == 0 else PRIO_ANO
            m += 1
    return total // m if m > 0 else 0


@_jit
def dm_choose_group(P, S, h, now):
    """DmMultipath._choose_group: choose_pgpath plus multipathd's failback; -1 when no path is usable."""
    n = P.d_np[h]
    best = -1
    for k in range(n):
        r = dm_rank(P, S, h, k)
        if r >= 0 and (best < 0 or r < best):
            best = r
    if best < 0:
        S.ps_cur[h] = -1
        S.ps_deadline[h] = np.inf
        return -1
    old = S.ps_cur[h]
    cur = old
    present = False
    if cur >= 0:
        for k in range(n):
            if dm_rank(P, S, h, k) == cur:
                present = True
                break
    if cur < 0 or not present:
        cur = best
    elif cur != best:
        if P.pol_i[PI_FAILBACK] == 1:  # immediate
            cur = best
        elif P.pol_f[PF_FAILBACK] < np.inf:
            if S.ps_deadline[h] == np.inf:
                S.ps_deadline[h] = now + P.pol_f[PF_FAILBACK]
            elif now >= S.ps_deadline[h]:
                cur = best
    if cur == best:
        S.ps_deadline[h] = np.inf
    if cur != old and old >= 0:
        log_event(S, now, h, LOG_GROUP_SWITCH, -1, dm_group_prio(P, S, h, cur), dm_group_prio(P, S, h, old))
    S.ps_cur[h] = cur
    return cur


@_jit
def int32(x):
    """A C difference returned as int: its low 32 bits, signed (linux_dm._int32)."""
    x = x & 0xFFFFFFFF
    return x - (1 << 32) if x >= (1 << 31) else x


@_jit
def hst_compare(P, S, h, k1, k2, now_ns):
    """DmHistoricalServiceTime.compare (hst_compare) in u64: < 0 when k1 is better."""
    hst1 = S.ps_hst[h, k1]
    hst2 = S.ps_hst[h, k2]
    out1 = S.out[P.d_paths[h, k1]]
    out2 = S.out[P.d_paths[h, k2]]
    stale1 = S.ps_stale[h, k1]
    stale2 = S.ps_stale[h, k2]
    tm = np.uint64(P.pol_i[PI_HST_TM])
    now_u = np.uint64(now_ns)
    if hst1 > hst2:
        over = hst1 > tm * hst2
    else:
        over = hst2 > tm * hst1
    if not over:
        return out1 - out2
    if (out1 == 0 and stale1 < now_u) or (out2 == 0 and stale2 < now_u) or (out1 == 0 and out2 == 0):
        a = stale1 if out2 == 0 else np.uint64(0)
        b = stale2 if out1 == 0 else np.uint64(0)
        return -1 if a < b else (1 if a > b else 0)  # the sign of a - b, all the caller reads
    if out1 == out2:
        pi2_better = hst1 > hst2
    else:
        if out1 >= 1024 or out2 >= 1024:  # HST_MAX_INFLIGHT
            hst1 >>= np.uint64(10)
            hst2 >>= np.uint64(10)
        pi2_better = np.uint64(1 + out1) * hst1 > np.uint64(1 + out2) * hst2
    if pi2_better:
        return out1 - out2 if stale2 < now_u else 1
    return out1 - out2 if stale1 < now_u else -1


@_jit
def select_dm(P, S, h, size, now):
    dm_sync(P, S, h, now)
    g = dm_choose_group(P, S, h, now)
    if g < 0:
        return -1
    n = P.d_np[h]
    m = 0
    for i in range(n):  # the current group's members in list order
        k = S.ps_order[h, i]
        if dm_rank(P, S, h, k) == g:
            S.tmp2[m] = k
            m += 1
    kind = P.pol_i[0]
    best = -1
    if kind == POL_DM_RR:
        best = S.tmp2[0]
    elif kind == POL_DM_QL:
        for i in range(m):
            k = S.tmp2[i]
            if best < 0 or S.out[P.d_paths[h, k]] < S.out[P.d_paths[h, best]]:
                best = k
            if S.out[P.d_paths[h, best]] == 0:
                break
    elif kind == POL_DM_ST:
        # st_compare_load with every relative throughput 1 (a spec cannot set it): case 1, bytes in flight
        for i in range(m):
            k = S.tmp2[i]
            if best < 0 or int32(S.out_bytes[P.d_paths[h, k]] - S.out_bytes[P.d_paths[h, best]]) < 0:
                best = k
    else:
        now_ns = np.int64(now * 1e9)
        for i in range(m):
            k = S.tmp2[i]
            if best < 0 or hst_compare(P, S, h, k, best, now_ns) < 0:
                best = k
    dm_move(S, h, n, best, False)  # list_move_tail: ties go to the least recently selected
    return best


@_jit
def fixed_ema(last, nxt, weight):
    """linux_dm.fixed_ema in u64 (the products wrap as the kernel's do)."""
    last = last * weight
    last = last + nxt * (np.uint64(1024) - weight)
    last = last + np.uint64(512)
    return last >> np.uint64(10)


@_jit
def hst_on_complete(P, S, h, p, latency, now):
    """DmHistoricalServiceTime.on_complete: the serialised service time into the EWMA, then staleness."""
    k = P.p_local[p]
    now_ns = np.int64(now * 1e9)
    start = now_ns - np.int64(latency * 1e9)
    if S.ps_lastfin[h, k] > start:
        start = S.ps_lastfin[h, k]
    S.ps_lastfin[h, k] = now_ns
    st = 0 if now_ns < start else now_ns - start
    sample = np.uint64(st) * np.uint64(1024)
    if sample > HST_FIXED_MAX:
        sample = HST_FIXED_MAX
    S.ps_hst[h, k] = fixed_ema(S.ps_hst[h, k], sample, P.pol_w[min(st >> 24, 63)])
    rank = dm_class_rank(P, S, h, k)
    valid = 0
    if rank >= 0:
        for j in range(P.d_np[h]):
            if dm_rank(P, S, h, j) == rank:
                valid += 1
    S.ps_stale[h, k] = np.uint64(now_ns) + np.uint64(valid) * (S.ps_hst[h, k] >> np.uint64(10))


# -- NVMe native multipath (nvme.py) --------------------------------------------
@_jit
def nvme_find_path(P, S, h):
    """__nvme_find_path: the first live optimized path, else the first non-optimized one (ps_cur)."""
    fallback = -1
    for k in range(P.d_np[h]):
        p = P.d_paths[h, k]
        if S.up[p] != 1:
            continue
        if S.alua[p] == 0:
            S.ps_cur[h] = k
            return k
        if S.alua[p] == 1 and fallback < 0:
            fallback = k
    if fallback >= 0:
        S.ps_cur[h] = fallback
    return fallback


@_jit
def nvme_on_path_change(P, S, h, p):
    k = P.p_local[p]
    if S.up[p] == 1 and S.alua[p] == 0:
        nvme_find_path(P, S, h)  # nvme_mpath_set_live
    elif k == S.ps_cur[h] and not usable(S, p):
        S.ps_cur[h] = -1  # nvme_mpath_clear_current_path


@_jit
def select_nvme_numa(P, S, h):
    k = S.ps_cur[h]
    if k < 0 or not (S.up[P.d_paths[h, k]] == 1 and S.alua[P.d_paths[h, k]] == 0):
        k = nvme_find_path(P, S, h)
    return k


@_jit
def select_nvme_rr(P, S, h):
    n = P.d_np[h]
    old = S.ps_cur[h]
    if old < 0:
        return nvme_find_path(P, S, h)
    po = P.d_paths[h, old]
    if n == 1:
        return old if usable(S, po) else -1
    found = -1
    for step in range(1, n):
        k = (old + step) % n
        p = P.d_paths[h, k]
        if S.up[p] != 1:
            continue
        if S.alua[p] == 0:
            S.ps_cur[h] = k
            return k
        if S.alua[p] == 1:
            found = k  # the last one met wins
    if S.up[po] == 1 and (S.alua[po] == 0 or (found < 0 and S.alua[po] == 1)):
        return old
    if found < 0:
        return -1
    S.ps_cur[h] = found
    return found


@_jit
def select_nvme_qd(P, S, h):
    best_opt = -1
    best_non = -1
    min_opt = 4294967295  # UINT_MAX
    min_non = 4294967295
    for k in range(P.d_np[h]):
        p = P.d_paths[h, k]
        if S.up[p] != 1:
            continue
        depth = S.c_out[P.p_ctrl[p]]
        if S.alua[p] == 0:
            if depth < min_opt:
                min_opt = depth
                best_opt = k
        elif S.alua[p] == 1:
            if depth < min_non:
                min_non = depth
                best_non = k
        if min_opt == 0:
            break
    k = best_opt if best_opt >= 0 else best_non
    S.ps_last[h] = k
    return k


# -- Windows MPIO (windows.py; rr and rrws are select_rr) -------------------------
@_jit
def select_mpio_fo(P, S, h):
    """Fail Over Only: the primary (d_pref) when usable and failing back or the current one failed."""
    pref = P.d_pref[h]
    cur = S.ps_cur[h]
    cur_ok = cur >= 0 and usable(S, P.d_paths[h, cur])
    if usable(S, P.d_paths[h, pref]) and (P.pol_i[PI_FAILBACK] == 1 or not cur_ok):
        cur = pref
    elif not cur_ok:
        n = working_set(P, S, h, False, S.tmp)
        cur = S.tmp[0] if n > 0 else -1
    S.ps_cur[h] = cur
    return cur


@_jit
def least_key(P, S, p, kind):
    if kind == POL_MPIO_LQD:
        return S.c_out[P.p_ctrl[p]]
    if kind == POL_MPIO_WP:
        return P.p_weight[p]
    return S.c_out_bytes[P.p_ctrl[p]]


@_jit
def select_mpio_least(P, S, h, kind):
    """lqd, wp, lb: the working-set path with the least key; ties to the first."""
    n = working_set(P, S, h, False, S.tmp)
    best = -1
    best_key = 0
    for i in range(n):
        k = S.tmp[i]
        key = least_key(P, S, P.d_paths[h, k], kind)
        if best < 0 or key < best_key:
            best = k
            best_key = key
    S.ps_last[h] = best
    return best


# -- ESXi HPP (hpp.py; fixed is select_fixed, lb-latency select_latency) --------------
@_jit
def select_hpp_rr(P, S, h, size):
    """LB-RR: the next working path once iops I/Os (ps_count) or bytes (ps_bytes) went down this one."""
    n = working_set(P, S, h, False, S.tmp)
    if n == 0:
        return -1
    cur = S.ps_cur[h]
    if cur < 0 or not in_set(cur, S.tmp, n) or S.ps_count[h] >= P.pol_i[2] or S.ps_bytes[h] >= P.pol_i[PI_HPP_BYTES]:
        cur = next_after(P, h, cur, S.tmp, n)
        S.ps_count[h] = 0
        S.ps_bytes[h] = 0
    S.ps_cur[h] = cur
    S.ps_count[h] += 1
    S.ps_bytes[h] += size
    return cur


@_jit
def select_hpp_least(P, S, h, size, by_bytes):
    """LB-IOPS / LB-BYTES: after the limit, the working path with the least outstanding (or bytes)."""
    n = working_set(P, S, h, False, S.tmp)
    if n == 0:
        return -1
    cur = S.ps_cur[h]
    if cur < 0 or not in_set(cur, S.tmp, n) or S.ps_count[h] >= P.pol_i[2]:
        cur = S.tmp[0]
        p = P.d_paths[h, cur]
        least = S.out_bytes[p] if by_bytes else S.out[p]
        for i in range(1, n):
            k = S.tmp[i]
            p = P.d_paths[h, k]
            value = S.out_bytes[p] if by_bytes else S.out[p]
            if value < least:
                cur = k
                least = value
        S.ps_count[h] = 0
    S.ps_cur[h] = cur
    S.ps_count[h] += size if by_bytes else 1
    return cur


# -- p2c-ewma (balancers.py): ps_cost, ps_stamp per path; uniforms from str_pol ----
@_jit
def p2c_observe(P, S, h, k, rtt, now_ns):
    td = now_ns - S.ps_stamp[h, k]
    if td < 0:
        td = 0
    w = math.exp(-td / P.pol_f[PF_TAU])
    if rtt > S.ps_cost[h, k]:
        S.ps_cost[h, k] = rtt
    else:
        S.ps_cost[h, k] = S.ps_cost[h, k] * w + rtt * (1.0 - w)
    S.ps_stamp[h, k] = now_ns


@_jit
def p2c_load(P, S, h, k, now_ns):
    p2c_observe(P, S, h, k, 0.0, now_ns)
    pending = S.out[P.d_paths[h, k]]
    if S.ps_cost[h, k] == 0.0 and pending != 0:
        return P2C_PENALTY + pending
    return S.ps_cost[h, k] * (pending + 1)


@_jit
def select_p2c(P, S, h, now):
    n = working_set(P, S, h, P.pol_i[3] != 0, S.tmp)
    if n == 0:
        return -1
    if n == 1:
        S.ps_last[h] = S.tmp[0]
        return S.tmp[0]
    stream = P.str_pol[h]
    a = np.int64(draw(S, stream) * n)
    b = np.int64(draw(S, stream) * (n - 1))
    if b >= a:
        b += 1  # the hole: two distinct paths
    now_ns = np.int64(now * 1e9)
    ka = S.tmp[a]
    kb = S.tmp[b]
    load_a = p2c_load(P, S, h, ka, now_ns)
    load_b = p2c_load(P, S, h, kb, now_ns)
    k = ka if load_a < load_b else kb
    S.ps_last[h] = k
    return k


@_hot
def select(P, S, h, s, now):
    """The policy's choice for slot s's I/O: a global path index, or -1."""
    kind = P.pol_i[0]
    if kind == POL_RR:
        k = select_rr(P, S, h, S.s_size[s])
    elif kind == POL_LATENCY:
        k = select_latency(P, S, h, s, now)
    elif kind == POL_FIXED:
        k = select_fixed(P, S, h)
    elif kind == POL_MRU:
        k = select_mru(P, S, h)
    elif kind <= POL_DM_HST:
        k = select_dm(P, S, h, S.s_size[s], now)
    elif kind == POL_NVME_NUMA:
        k = select_nvme_numa(P, S, h)
    elif kind == POL_NVME_RR:
        k = select_nvme_rr(P, S, h)
    elif kind == POL_NVME_QD:
        k = select_nvme_qd(P, S, h)
    elif kind == POL_MPIO_FO:
        k = select_mpio_fo(P, S, h)
    elif kind <= POL_MPIO_LB:
        k = select_mpio_least(P, S, h, kind)
    elif kind == POL_HPP_RR:
        k = select_hpp_rr(P, S, h, S.s_size[s])
    elif kind <= POL_HPP_BYTES:
        k = select_hpp_least(P, S, h, S.s_size[s], kind == POL_HPP_BYTES)
    else:
        k = select_p2c(P, S, h, now)
    return -1 if k < 0 else P.d_paths[h, k]


# -- the life of one I/O -------------------------------------------------------
@_hot
def serialise(S, w, direction, t, nbytes, bw):
    """Queue a frame for wire ``w`` (FIFO per direction) from ``t``; returns when it is across."""
    start = max(t, S.wire_free[w, direction])
    busy = nbytes / bw
    done = start + busy
    S.wire_free[w, direction] = done
    S.wire_busy[w, direction] += busy
    S.wire_wait[w, direction] += start - t
    S.wire_frames[w, direction] += 1
    return done


@_jit
def lose(S, stream, ppm, recovery, delay, limit):
    """reference.lose: every lost copy of a frame is resent after ``recovery``."""
    p = ppm * 1e-6
    n = 0
    while n < MAX_RESENDS:
        if not draw(S, stream) < p:
            break
        delay += recovery
        n += 1
        if delay > limit:
            break
    S.si[I_FRAMES_LOST] += n
    return delay


@_hot
def leg(P, S, s, p, direction, nbytes):
    now = S.sf[F_NOW]
    c = P.p_ctrl[p]
    delay = draw(S, P.p_str[p]) + S.extra[c]  # p_str[p] = str_path[p_ctrl[p]]: one load less on the way
    if nbytes != 0:
        t = now
        bw = P.c_bw[c]
        if bw > 0.0:
            t = serialise(S, c, direction, t, nbytes, bw)
        nc = P.c_bw.shape[0]
        for i in range(P.c_nlinks[c]):
            li = P.c_links[c, i]
            t = serialise(S, nc + li, direction, t, nbytes, P.l_bw[li])
        delay += t - now
    deadline = S.s_deadline[s]
    if S.loss[c] > 0:
        delay = lose(S, P.str_loss[c], S.loss[c], P.c_recov[c], delay, deadline - now)
    S.s_epoch[s] = S.epoch[c]
    if now + delay > deadline:  # the host gives up on this attempt at its io_timeout
        timeout(S, max(deadline - now, 0.0), EV_LEG_TIMEOUT, s)
    else:
        timeout(S, delay, EV_LEG, s)


@_hot
def trigger_put(S, a, conc):
    head = S.aq_head[a]
    if head < S.aq_tail[a] and S.users[a] < conc:
        i = head & (S.aq_slot.shape[1] - 1)
        slot = S.aq_slot[a, i]
        mirror = S.aq_mirror[a, i]
        S.aq_head[a] = head + 1
        S.users[a] += 1
        push_normal(S, EV_GRANT_MIRROR if mirror else EV_GRANT_MAIN, slot)


@_hot
def request(P, S, a, s, mirror):
    tail = S.aq_tail[a]
    i = tail & (S.aq_slot.shape[1] - 1)
    S.aq_slot[a, i] = s
    S.aq_mirror[a, i] = mirror
    S.aq_tail[a] = tail + 1
    trigger_put(S, a, P.a_conc[a])


@_hot
def release(P, S, a):
    S.users[a] -= 1
    if P.a_conc[a] >= S.s_op.shape[0]:
        # No request can ever wait here (a job slot holds at most one grant per array,
        # so users < slots <= concurrency): the release event would grant no one. Its
        # id is still taken, so every later event keeps the id SimPy gives it.
        S.si[I_EID] += 1
    else:
        push_normal(S, EV_RELEASE, a)


# -- events processed where they are scheduled -------------------------------------
# An event pushed on the normal FIFO is processed right after the current one when
# nothing is due before it: both FIFOs empty, and no heap entry at this instant (a
# heap entry due now was scheduled earlier, so its id is smaller). Then the code
# that pushes it can run its handler at once instead (taking its id), the last thing
# the current event does: same ids, same draws in the same order, one trip through
# the loop and the dispatch less.
@_hot
def next_in_line(S):
    """True when an event pushed on the normal FIFO now would be the next one processed."""
    si = S.si
    return (
        si[I_UF_HEAD] == si[I_UF_TAIL]
        and si[I_NF_HEAD] == si[I_NF_TAIL]
        and not heap_due_now(S)
    )


@_hot
def grant_in_line(P, S, a):
    """A request for ``a`` granted at once, its grant event next in line: take the slot and the event's id."""
    if S.aq_head[a] == S.aq_tail[a] and S.users[a] < P.a_conc[a] and next_in_line(S):
        S.users[a] += 1
        S.si[I_EID] += 1
        return True
    return False


@_hot
def start_service(P, S, a, op, s):
    """EV_GRANT_MAIN's handler: the array serves the I/O."""
    timeout(S, draw(S, P.str_svc[a, op]), EV_SVC_MAIN, s)


@_hot
def mirror_end(P, S, s):
    """EV_M_END's handler: the mirror process has returned."""
    S.s_mstate[s] = M_PROCESSED
    if S.s_mwait[s] == 1:
        S.s_mwait[s] = 0
        status_leg(P, S, s)


@_jit
def start_wait(P, S, s, limit):
    """reference.wait_for_change: join the waiters; a timer ends the wait after ``limit`` (inf: none)."""
    S.s_waitid[s] += 1
    S.s_woken[s] = 0
    mask = S.wt_slot.shape[0] - 1
    if S.si[I_WT_TAIL] - S.si[I_WT_HEAD] > mask:  # full: drop entries already woken (they are skipped anyway)
        n = 0
        for i in range(S.si[I_WT_HEAD], S.si[I_WT_TAIL]):
            w = S.wt_slot[i & mask]
            if S.s_waitid[w] == S.wt_id[i & mask] and S.s_woken[w] == 0:
                S.tmp_wt[n] = i & mask
                n += 1
        head = S.si[I_WT_HEAD]
        for k in range(n):  # compact in order, in place (targets never pass their sources)
            j = S.tmp_wt[k]
            S.wt_slot[(head + k) & mask] = S.wt_slot[j]
            S.wt_id[(head + k) & mask] = S.wt_id[j]
        S.si[I_WT_TAIL] = head + n
    tail = S.si[I_WT_TAIL]
    S.wt_slot[tail & mask] = s
    S.wt_id[tail & mask] = S.s_waitid[s]
    S.si[I_WT_TAIL] = tail + 1
    if limit < np.inf:
        if S.si[I_HEAPN] >= S.h_time.shape[0] >> 1:  # fast.py sizes the heap: live timers fit in half
            heap_drop_stale_timers(S)
        n_slots = S.s_waitid.shape[0]
        timeout(S, limit, EV_APD_TIMER, s + n_slots * S.s_waitid[s])


@_jit
def wake_waiters(S):
    mask = S.wt_slot.shape[0] - 1
    for i in range(S.si[I_WT_HEAD], S.si[I_WT_TAIL]):
        w = S.wt_slot[i & mask]
        if S.s_waitid[w] == S.wt_id[i & mask] and S.s_woken[w] == 0:
            S.s_woken[w] = 1
            S.s_wakeval[w] = 1
            push_normal(S, EV_WAKE, w)
    S.si[I_WT_HEAD] = S.si[I_WT_TAIL]


@_hot
def begin_attempt(P, S, s):
    """The top of io_life's loop: ask the policy, then send the first frame."""
    now = S.sf[F_NOW]
    d = P.j_dev[P.s_job0[s]]
    p = select(P, S, d, s, now)
    if p < 0:  # no usable path: wait for a change, at most the host's APD timeout
        S.s_stage[s] = ST_APD
        start_wait(P, S, s, P.hp_apd[P.d_host[d]])
        return
    S.s_attempts[s] += 1
    if S.s_attempts[s] > 1:
        S.si[I_RETRIED] += 1
    S.s_started[s] = now
    S.s_deadline[s] = now + P.hp_iot[P.d_host[d]]
    S.s_path[s] = p
    c = P.p_ctrl[p]
    S.out[p] += 1
    S.out_bytes[p] += S.s_size[s]
    S.c_out[c] += 1
    S.c_out_bytes[c] += S.s_size[s]
    rec_path(P, S, now, p, 1)
    if S.s_op[s] == 0:
        S.s_stage[s] = ST_R_CMD
        leg(P, S, s, p, 0, 0)
    elif P.protocol[0] == 0:
        S.s_stage[s] = ST_W_CMD
        leg(P, S, s, p, 0, 0)
    else:
        S.s_stage[s] = ST_W_DATA
        leg(P, S, s, p, 0, S.s_size[s])


@_hot
def new_io(P, S, s):
    now = S.sf[F_NOW]
    j = P.s_job0[s]
    st = P.str_job[j]
    u = draw(S, st)
    op = 0 if u < P.j_readfrac[j] else 1
    size = P.j_sizes[j, 0]
    if P.j_nsizes[j] > 1:
        u2 = draw(S, st)
        acc = 0.0
        for k in range(P.j_nsizes[j]):
            size = P.j_sizes[j, k]
            acc += P.j_cumw[j, k]
            if u2 < acc:
                break
    S.si[I_SEQ] += 1
    S.s_seq[s] = S.si[I_SEQ]
    S.s_op[s] = op
    S.s_size[s] = size
    S.s_issued[s] = now
    S.s_attempts[s] = 0
    S.s_mstate[s] = M_NONE
    rec_issue(P, S, now)
    begin_attempt(P, S, s)


@_hot
def end_attempt(P, S, s, p):
    now = S.sf[F_NOW]
    c = P.p_ctrl[p]
    S.out[p] -= 1
    S.out_bytes[p] -= S.s_size[s]
    S.c_out[c] -= 1
    S.c_out_bytes[c] -= S.s_size[s]
    rec_path(P, S, now, p, -1)


@_hot
def complete(P, S, s):
    now = S.sf[F_NOW]
    p = S.s_path[s]
    end_attempt(P, S, s, p)
    on_path = now - S.s_started[s]
    d = P.j_dev[P.s_job0[s]]
    kind = P.pol_i[0]
    if kind == POL_LATENCY:
        lat_on_complete(P, S, d, s, p, S.s_size[s], on_path, now)
    elif kind == POL_DM_HST:
        hst_on_complete(P, S, d, p, on_path, now)
    elif kind == POL_P2C:
        p2c_observe(P, S, d, P.p_local[p], float(max(np.int64(on_path * 1e9), 0)), np.int64(now * 1e9))
    rec_complete(P, S, now, S.s_op[s], S.s_size[s], now - S.s_issued[s], p, on_path)
    if P.trace_on[0]:
        t = S.si[I_NTRACE]
        S.si[I_NTRACE] = t + 1
        if t + 1 > S.si[I_TRACE_ROOM]:
            S.si[I_STOP] = 1
        S.tr_seq[t] = S.s_seq[s]
        S.tr_job[t] = P.s_job0[s]
        S.tr_op[t] = S.s_op[s]
        S.tr_size[t] = S.s_size[s]
        S.tr_issued[t] = S.s_issued[s]
        S.tr_done[t] = now
        S.tr_path[t] = p
        S.tr_attempts[t] = S.s_attempts[s]
    new_io(P, S, s)


@_jit
def lost(P, S, s, timed_out):
    """io_life after PathLost: retry now, or wait until the host notices the path is gone."""
    p = S.s_path[s]
    end_attempt(P, S, s, p)
    if timed_out:
        S.si[I_TIMED_OUT] += 1
        begin_attempt(P, S, s)
    elif S.up[p] == 1:
        S.s_stage[s] = ST_WAIT_LOST
        start_wait(P, S, s, np.inf)
    else:
        begin_attempt(P, S, s)


@_hot
def status_leg(P, S, s):
    S.s_stage[s] = ST_W_STATUS
    leg(P, S, s, S.s_path[s], 1, 0)


@_hot
def on_leg(P, S, s):
    p = S.s_path[s]
    c = P.p_ctrl[p]
    if S.epoch[c] != S.s_epoch[s] or S.phys_up[c] == 0:  # the frame was lost with its path
        lost(P, S, s, False)
        return
    stage = S.s_stage[s]
    a = P.p_array[p]
    if stage == ST_R_CMD:
        S.s_stage[s] = ST_R_SVC
        if grant_in_line(P, S, a):
            start_service(P, S, a, 0, s)
        else:
            request(P, S, a, s, 0)
    elif stage == ST_W_CMD:
        S.s_stage[s] = ST_W_XFER
        leg(P, S, s, p, 1, 0)
    elif stage == ST_W_XFER:
        S.s_stage[s] = ST_W_DATA
        leg(P, S, s, p, 0, S.s_size[s])
    elif stage == ST_W_DATA:
        peer = P.p_mirror[p]
        mirror = peer >= 0 and S.si[I_REPL_OK] == 1 and S.alive[peer] == 1
        S.s_stage[s] = ST_W_SVC
        if mirror:
            # The mirror process starts: SimPy schedules its Initialize event (urgent),
            # so it runs right after this event, before anything else; it is run below,
            # after the request, with the id it was given here.
            S.s_mstate[s] = M_RUNNING
            S.s_mwait[s] = 0
            S.si[I_EID] += 1
        else:
            S.s_mstate[s] = M_NONE
        if grant_in_line(P, S, a):
            if mirror:
                timeout(S, repl_trip(P, S, s, True), EV_M_FWD, s)
            start_service(P, S, a, 1, s)
        else:
            request(P, S, a, s, 0)
            if mirror:
                timeout(S, repl_trip(P, S, s, True), EV_M_FWD, s)
    else:  # ST_R_DATA or ST_W_STATUS: done
        complete(P, S, s)


@_hot
def on_service_done(P, S, s):
    p = S.s_path[s]
    a = P.p_array[p]
    release(P, S, a)
    if S.s_op[s] == 0:
        S.s_stage[s] = ST_R_DATA
        leg(P, S, s, p, 1, S.s_size[s])
    elif S.s_mstate[s] == M_RUNNING or S.s_mstate[s] == M_END_SCHEDULED:
        S.s_stage[s] = ST_W_MIRROR_WAIT
        S.s_mwait[s] = 1
    else:
        status_leg(P, S, s)


@_hot
def repl_trip(P, S, s, first):
    """One way over the replication link (the forward trip carries the data)."""
    now = S.sf[F_NOW]
    delay = draw(S, P.str_repl[0]) + S.sf[F_REPL_EXTRA]
    if first:
        a = P.p_array[S.s_path[s]]
        d = 0 if a == P.r_arrays[0] else 1
        bw = P.r_bw[0]
        if bw > 0.0:
            delay += serialise(S, S.wire_free.shape[0] - 1, d, now, S.s_size[s], bw) - now
    if S.sf[F_REPL_LOSS] > 0:
        delay = lose(S, P.str_loss[P.str_loss.shape[0] - 1], S.sf[F_REPL_LOSS], P.r_f[2], delay, np.inf)
    return delay


# -- the timeline ----------------------------------------------------------------
@_jit
def path_changed(P, S, p, kind, now):
    d = P.p_dev[p]
    log_event(S, now, d, kind, p, S.alua[p], S.up[p])
    pol = P.pol_i[0]
    if pol == POL_LATENCY:
        lat_on_path_change(P, S, d, p, now)
    elif POL_DM_RR <= pol <= POL_DM_HST:
        dm_sync(P, S, d, now)
    elif pol == POL_NVME_NUMA or pol == POL_NVME_RR:
        nvme_on_path_change(P, S, d, p)


@_jit
def notice(P, S, c):
    now = S.sf[F_NOW]
    up = S.phys_up[c]
    for i in range(P.c_npaths[c]):
        p = P.c_paths[c, i]
        if S.up[p] != up:
            S.up[p] = up
            path_changed(P, S, p, LOG_PATH_UP if up == 1 else LOG_PATH_DOWN, now)
    wake_waiters(S)


@_jit
def set_wire(P, S, c, up):
    S.phys_up[c] = up
    if up == 0:
        S.epoch[c] += 1
    timeout(S, P.hp_det[P.c_host[c]], EV_NOTICE, c)


@_jit
def apply_fault(P, S, f):
    now = S.sf[F_NOW]
    what = P.f_what[f]
    log_event(S, now, -1, LOG_FAULT, what, P.f_origin[f], P.f_revert[f])
    nc = P.f_nc[f]
    if what == F_PATH_DOWN or what == F_PATH_UP or what == F_ARRAY_DOWN or what == F_ARRAY_UP:
        up = 1 if (what == F_PATH_UP or what == F_ARRAY_UP) else 0
        if P.f_array[f] >= 0:
            S.alive[P.f_array[f]] = up
        for i in range(nc):
            set_wire(P, S, P.f_cs[f, i], up)
    elif what == F_ALUA:
        for i in range(nc):
            c = P.f_cs[f, i]
            for k in range(P.c_npaths[c]):
                p = P.c_paths[c, k]
                S.alua[p] = P.f_state[f]
                path_changed(P, S, p, LOG_ALUA, now)
        wake_waiters(S)
    elif what == F_LATENCY:
        if P.f_repl[f] == 1:
            S.sf[F_REPL_EXTRA] = P.r_f[0] + P.f_add[f]
        for i in range(nc):
            c = P.f_cs[f, i]
            S.extra[c] = P.c_extra[c] + P.f_add[f]
    elif what == F_LOSS:
        if P.f_repl[f] == 1:
            S.sf[F_REPL_LOSS] = P.r_f[1] if P.f_ppm[f] < 0 else P.f_ppm[f]
        for i in range(nc):
            c = P.f_cs[f, i]
            S.loss[c] = P.c_loss[c] if P.f_ppm[f] < 0 else P.f_ppm[f]
    else:  # the replication link: the mediator keeps the preferred site serving
        ok = 1 if what == F_REPL_UP else 0
        S.si[I_REPL_OK] = ok
        loser = P.r_i[1]
        for p in range(P.p_array.shape[0]):
            if P.p_mirror[p] >= 0 and P.p_array[p] == loser:
                S.alua[p] = P.p_alua0[p] if ok == 1 else 3
                path_changed(P, S, p, LOG_ALUA, now)
        wake_waiters(S)


@_jit
def fault_loop(P, S):
    """The fault timeline process: apply every fault due now, then wait for the next."""
    nf = P.f_time.shape[0]
    while S.si[I_FAULT_NEXT] < nf:
        f = S.si[I_FAULT_NEXT]
        now = S.sf[F_NOW]
        if P.f_time[f] > now:
            timeout(S, P.f_time[f] - now, EV_FAULT, f)
            return
        S.si[I_FAULT_NEXT] = f + 1
        apply_fault(P, S, f)


@_hot
def dispatch(P, S, kind, arg):
    if kind == EV_LEG:
        on_leg(P, S, arg)
    elif kind == EV_GRANT_MAIN:
        start_service(P, S, P.p_array[S.s_path[arg]], S.s_op[arg], arg)
    elif kind == EV_SVC_MAIN:
        on_service_done(P, S, arg)
    elif kind == EV_RELEASE:
        trigger_put(S, arg, P.a_conc[arg])
    elif kind == EV_M_FWD:
        peer = P.p_mirror[S.s_path[arg]]
        if grant_in_line(P, S, peer):
            timeout(S, draw(S, P.str_svc[peer, 1]), EV_M_SVC, arg)
        else:
            request(P, S, peer, arg, 1)
    elif kind == EV_GRANT_MIRROR:
        peer = P.p_mirror[S.s_path[arg]]
        timeout(S, draw(S, P.str_svc[peer, 1]), EV_M_SVC, arg)
    elif kind == EV_M_SVC:
        release(P, S, P.p_mirror[S.s_path[arg]])
        timeout(S, repl_trip(P, S, arg, False), EV_M_ACK, arg)
    elif kind == EV_M_ACK:  # the mirror process returns: its own event is scheduled
        if next_in_line(S):
            S.si[I_EID] += 1
            mirror_end(P, S, arg)
        else:
            S.s_mstate[arg] = M_END_SCHEDULED
            push_normal(S, EV_M_END, arg)
    elif kind == EV_M_END:
        mirror_end(P, S, arg)
    elif kind == EV_INIT:
        new_io(P, S, arg)
    elif kind == EV_FAULT_INIT:
        fault_loop(P, S)
    elif kind == EV_FAULT:
        S.si[I_FAULT_NEXT] = arg + 1
        apply_fault(P, S, arg)
        fault_loop(P, S)
    elif kind == EV_NOTICE:
        notice(P, S, arg)
    elif kind == EV_LEG_TIMEOUT:
        lost(P, S, arg, True)
    elif kind == EV_APD_TIMER:
        n_slots = S.s_waitid.shape[0]
        s = arg % n_slots
        if S.s_waitid[s] == arg // n_slots and S.s_woken[s] == 0:
            S.s_woken[s] = 1
            S.s_wakeval[s] = 0
            push_normal(S, EV_WAKE, s)
    elif kind == EV_WAKE:
        if S.s_wakeval[arg] == 0:  # the APD timeout: the I/O fails visibly and the slot moves on
            rec_fail(P, S, S.sf[F_NOW])
            new_io(P, S, arg)
        else:
            begin_attempt(P, S, arg)


@_jit
def _loop(P, S, t_stop, ev_room, trace_room):
    """Process events until the end of the run, ``t_stop``, or a buffer needs Python."""
    end = P.window[1]
    umask = S.uf_kind.shape[0] - 1
    nmask = S.nf_kind.shape[0] - 1
    # Whatever needs Python (a stream running low, a log or trace buffer nearly
    # full) raises si[I_STOP] where it happens (draw, log_event, complete): the
    # loop tests that one word per event.
    S.si[I_EV_ROOM] = ev_room
    S.si[I_TRACE_ROOM] = trace_room
    S.si[I_STOP] = S.si[I_REFILL] != 0 or S.si[I_NEV] > ev_room or S.si[I_NTRACE] > trace_room
    while True:
        if S.si[I_STOP] != 0:
            S.si[I_STOP] = 0
            if S.si[I_REFILL] != 0:
                return REFILL
            return BUFFERS_FULL
        if S.si[I_UF_HEAD] < S.si[I_UF_TAIL]:
            i = S.si[I_UF_HEAD] & umask
            S.si[I_UF_HEAD] += 1
            kind = S.uf_kind[i]
            arg = S.uf_arg[i]
        else:
            # one dispatch and one heap removal (heap_settle), each inlined once
            from_heap = S.si[I_HEAPN] > 0 and S.h_time[0] == S.sf[F_NOW]
            if not from_heap:
                if S.si[I_NF_HEAD] < S.si[I_NF_TAIL]:
                    i = S.si[I_NF_HEAD] & nmask
                    S.si[I_NF_HEAD] += 1
                    kind = S.nf_kind[i]
                    arg = S.nf_arg[i]
                else:
                    if S.si[I_HEAPN] == 0:
                        return DONE
                    t = S.h_time[0]
                    if t >= end:
                        return DONE
                    if t >= t_stop:
                        return PAUSED
                    S.sf[F_NOW] = t
                    from_heap = True
            if from_heap:  # taken from the root, removed after (or replaced by the first timeout it schedules)
                kind = S.h_key[0] & KIND_MASK
                arg = S.h_arg[0]
                S.si[I_HTOP] = 1
        dispatch(P, S, kind, arg)
        heap_settle(S)


@_jit
def run_kernel(p, s, t_stop, ev_room, trace_room):
    """Process events until the end of the run, ``t_stop``, or a buffer needs Python.

    ``p`` and ``s`` are the KernelRefs of to_params and to_state."""
    status = _loop(borrow(p), borrow(s), t_stop, ev_room, trace_room)
    keep_alive(p, s)
    return status
