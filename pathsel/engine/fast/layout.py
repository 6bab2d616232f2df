"""The fast engine's records, declared once: the model as numbers (PARAMS) and the engine's own state (STATE).

The compiled functions receive four records by address: ``P`` (PARAMS, set
before the run), ``S`` (STATE, the engine's own), ``V`` (the
:data:`~pathsel.policies.framework.kernel.VIEW` that policies read too) and ``R``
(the :data:`~pathsel.engine.recorder.record.RECORDER`). :mod:`.state` and :mod:`.fields` lay numpy
arrays out in them; nothing else names their fields. Below, the indices of
the scalars kept in small arrays and the codes the loop switches on.
Reference twin: reference/state.py (the same state as Python objects).
"""

from __future__ import annotations

from numba.core import types
from numba.experimental import structref

from ...jit import Layout, address_of

# -- event kinds (the loop's switch) -------------------------------------------------
EV_INIT, EV_LEG, EV_GRANT_MAIN, EV_SVC_MAIN, EV_RELEASE = 0, 1, 2, 3, 4
EV_M_FWD, EV_GRANT_MIRROR, EV_M_SVC, EV_M_ACK, EV_M_END = 6, 7, 8, 9, 10  # 5: the mirror's start, taken in line
EV_FAULT_INIT, EV_FAULT, EV_NOTICE, EV_APD_TIMER, EV_WAKE = 11, 12, 13, 14, 15
# a policy's wake time ends a no-path wait as a path change would (view d_wake; waits.arm_wake; arg as EV_APD_TIMER's)
EV_HOLD_WAKE = 29
# io_timeout: a host's oldest unanswered attempt is due (arg: host); an attempt's abort; its mirror's abort
EV_DEADLINE, EV_ABORT, EV_M_ABORT = 16, 17, 18
# a queue ("host" or "path" rule) hands a waiting I/O its place, and it goes on from there (arg: slot); an open-loop
# job's arrival process starts, an arrival (arg: job); an idle slot of an open-loop job is handed an arrival (arg: slot)
EV_QUEUE_GRANT, EV_ARRIVALS_INIT, EV_ARRIVAL, EV_OPEN_WAKE = 19, 20, 21, 22
# the arrays' target ports: a command answered QUEUE FULL is sent again after the host's retry delay (arg: slot)
EV_QFULL_RETRY = 23
# the host's CPU (issue 33): a core has done an attempt's submission or its completion (arg: tag; the stage says which)
EV_CPU = 40

# -- stages of an I/O's main process ---------------------------------------------------
ST_R_CMD, ST_R_SVC, ST_R_DATA = 0, 1, 2
ST_W_CMD, ST_W_XFER, ST_W_DATA, ST_W_SVC, ST_W_MIRROR_WAIT, ST_W_STATUS = 3, 4, 5, 6, 7, 8
ST_APD, ST_WAIT_LOST = 9, 10
ST_QUEUED, ST_IDLE = 11, 12  # waiting at one of its device's "host" queues (K_QUEUE); an open-loop slot without an arrival
ST_QFULL, ST_QFULL_WAIT = 13, 14  # a QUEUE FULL status on its way back; waiting to be sent again
ST_PATH_QUEUED = 15  # its path chosen (K_PATH), waiting at that path's "path" queue (K_QUEUE: NVMe-oF tags) since K_STARTED
ST_CPU_DONE = 41  # the host's CPU: its interrupt core completing the I/O (a submission is its first frame's add)

# the columns of a slot's row (S.slot for integers, S.slotf for floats): the ones every event reads first
K_STAGE, K_PATH, K_JOB, K_EPOCH, K_MSTATE, K_MWAIT, K_SEQ, K_ATTEMPTS = 0, 1, 2, 3, 4, 5, 6, 7
K_ISSUED, K_STARTED, K_DEADLINE = 8, 9, 10  # floats
K_WAITID, K_WOKEN, K_WAKEVAL = 11, 12, 13
# aborts: how many this slot had (the tag of its events), where its command and its mirror are at the arrays,
# and its place in its host's list of attempts by deadline (previous, next, the id of its timer)
K_GEN, K_ASUB, K_MSUB, K_DPREV, K_DNEXT, K_DLEID = 14, 15, 16, 17, 18, 19
K_ADMITTED = 20  # float: when its device took it (KAVG = K_ADMITTED - K_ISSUED)
K_PORT_ROW = 21  # 1 + the target port's queue row its command holds a place in (0: none)
K_QUEUE = 22  # 1 + the queue row it waits at (ST_QUEUED, ST_PATH_QUEUED), or whose "path" place its attempt holds (0: none)
K_PATH_WAIT = 23  # float: time its I/O waited at "path" queues (NVMe-oF tags: host queueing, added to KAVG)
SLOT_COLS = 24  # 192 bytes: three cache lines, the hot columns in the first

# An event of an attempt carries its slot and the slot's abort count (arg = slot | gen << TAG_SHIFT):
# after an abort, the attempt's events still pending find a newer count and do nothing.
TAG_SHIFT = 32
SLOT_MASK = (1 << TAG_SHIFT) - 1

# where an attempt's command is at its array (K_ASUB) and its mirror at the peer (K_MSUB)
A_NONE, A_QUEUED, A_GRANTED, A_SERVING = 0, 1, 2, 3
MS_NONE, MS_FWD, MS_QUEUED, MS_GRANTED, MS_SERVING, MS_ACK = 0, 1, 2, 3, 4, 5

# the columns of a queue's row (S.q integers, S.qf floats, the same memory): one 64-byte line per queue
Q_IN_USE, Q_HEAD, Q_TAIL, Q_QUEUE_DEPTH = 0, 1, 2, 3  # places in use; its FIFO's ring positions; its queue depth now
Q_LAST, Q_AREA_IN_USE, Q_AREA_WAITING = 4, 5, 6  # floats: when its integrals were brought up to date, the integrals
Q_QFULL = 7  # QUEUE FULLs it answered in the window ("refuse" rule)
Q_COLS = 8
# the queues' admission rules (model/queues.py), P.q_rule
RULE_HOST, RULE_PATH, RULE_REFUSE, RULE_ARRAY = 0, 1, 2, 3
RULE_CODES = {"host": RULE_HOST, "path": RULE_PATH, "refuse": RULE_REFUSE, "array": RULE_ARRAY}

# mirror process states
M_NONE, M_RUNNING, M_END_SCHEDULED, M_PROCESSED = 0, 1, 2, 3

# fault kinds (model.FaultModel.what)
F_PATH_DOWN, F_PATH_UP, F_ALUA, F_LATENCY, F_LOSS, F_ARRAY_DOWN, F_ARRAY_UP, F_REPL_DOWN, F_REPL_UP, F_OWNER, F_IMPLICIT = range(11)
F_SLOW_DRAIN = 11  # the fabric (issue 33)
FAULT_CODES = {
    "path_down": F_PATH_DOWN,
    "path_up": F_PATH_UP,
    "alua": F_ALUA,
    "latency": F_LATENCY,
    "loss": F_LOSS,
    "array_down": F_ARRAY_DOWN,
    "array_up": F_ARRAY_UP,
    "replication_down": F_REPL_DOWN,
    "replication_up": F_REPL_UP,
    "owner": F_OWNER,
    "implicit": F_IMPLICIT,
    "slow_drain": F_SLOW_DRAIN,
}
LOSS_OPS_MASK = {"read": 1, "write": 2, "both": 3}  # a loss fault's loss_ops as P.f_lops: bit op (0 read, 1 write)

# the engine's own log entries (a policy's are kernel.EV_POLICY and above)
LOG_PATH_DOWN, LOG_PATH_UP, LOG_ALUA, LOG_FAULT = 2, 3, 4, 5

MAX_RESENDS = 64  # as reference/wire.MAX_RESENDS

# return codes of run_kernel
DONE, PAUSED, REFILL, BUFFERS_FULL = 0, 1, 2, 3

# integer scalars in S.si
I_EID, I_SEQ, I_HEAPN, I_UF_HEAD, I_UF_TAIL, I_NF_HEAD, I_NF_TAIL = 0, 1, 2, 3, 4, 5, 6
I_FAULT_NEXT, I_WT_HEAD, I_WT_TAIL, I_NTRACE, I_TRACE_ROOM, I_HTOP, I_REPL_OK = 7, 8, 9, 10, 11, 12, 13
I_OVERLOAD = 14  # 1 + the open-loop job whose backlog overflowed (the run stops: host_queues.overload)
N_SI = 15
# float scalars in S.sf: the replication link's current added latency and loss
F_REPL_EXTRA, F_REPL_LOSS = 0, 1
N_SF = 2


@structref.register
class ParamsType(types.StructRef):
    pass


@structref.register
class StateType(types.StructRef):
    pass


PARAMS = Layout(
    ParamsType,
    [
        ("protocol", "i8", 0),  # 0 scsi, 1 nvme
        ("ramp", "f8", 0),
        ("end", "f8", 0),
        ("interval", "f8", 0),
        # paths: array, peer array a write through it is mirrored to (-1), value stream of its nexus
        ("p_array", "i8", 1),
        ("p_mirror", "i8", 1),
        ("p_str", "i8", 1),
        ("p_lat", "f8", 1),  # its nexus's one-way latency when that is a constant, else -1 (drawn from p_str)
        # nexuses (controllers): host, own wire, distance, loss, shared links crossed, device paths over it
        ("c_host", "i8", 1),
        ("c_bw", "f8", 1),
        ("c_extra", "f8", 1),
        ("c_loss", "f8", 1),
        ("c_loss_op", "f8", 2),  # per nexus, a read's frames' loss and a write's (loss_ops, issue 37)
        ("c_recov", "f8", 1),
        ("c_links", "i8", 2),
        ("c_nlinks", "i8", 1),
        ("c_paths", "i8", 2),
        ("c_npaths", "i8", 1),
        ("l_bw", "f8", 1),
        ("a_perkib", "f8", 1),  # service seconds added per KiB
        # per array its inter-controller link (issue 32): one-way seconds and bandwidth (0: none) a crossing frame
        # pays, and the wire of array 0's link (Model.ic_wire; the others follow); the replication link's wire
        ("a_icl", "f8", 1),
        ("a_icbw", "f8", 1),
        ("ic_on", "i8", 0),  # whether any array has two controllers (a frame reads its path's crossing only then)
        ("w_ic0", "i8", 0),
        ("w_repl", "i8", 0),
        # the replication link: its two arrays, bandwidth, added latency, loss, the mediator's preferred site and loser
        ("r_a0", "i8", 0),
        ("r_bw", "f8", 0),
        ("r_extra", "f8", 0),
        ("r_loss", "f8", 0),
        ("r_recov", "f8", 0),
        ("r_loser", "i8", 0),
        # hosts: detection delay, APD timeout (inf: queue), io_timeout
        ("hp_det", "f8", 1),
        ("hp_apd", "f8", 1),
        ("hp_iot", "f8", 1),
        # jobs and their slots
        ("j_dev", "i8", 1),
        # NUMA: whether any attempt pays a cross-node hop, and the seconds it pays: numa_pen[host, cpu node, adapter node]
        ("numa", "i8", 0),
        ("numa_pen", "f8", 3),
        ("j_readfrac", "f8", 1),
        ("j_nsizes", "i8", 1),
        ("j_sizes", "i8", 2),
        ("j_cumw", "f8", 2),
        ("d_host", "i8", 1),
        # per job, open loop or not and its arrivals' stream
        ("j_open", "i8", 1),
        ("str_arr", "i8", 1),
        # the queues (Model.queues, fast/queues.py): per row its rule, its queue depth in the scenario (0: no limit;
        # what throttling grows back to), its FIFO's ring in S.q_fifo (offset, length - 1)
        ("q_rule", "i8", 1),
        ("queue_depth", "i8", 1),
        ("q_off", "i8", 1),
        ("q_mask", "i8", 1),
        # per device its "host" rows in the order taken (DeviceModel.admission) and how many, its device queue's row
        # (throttling changes it); per path its target port's row and its "path" row (-1: none); per array its slots'
        ("d_adm", "i8", 2),
        ("d_nadm", "i8", 1),
        ("d_queue", "i8", 1),
        ("p_portq", "i8", 1),
        ("p_pathq", "i8", 1),
        ("pathq_on", "i8", 0),  # whether any path has a "path" row
        ("a_q", "i8", 1),
        # ESXi's DSNRO per row (0: none; only device queues have one), 1 where it caps each VM (per_vm), each job's VM
        ("q_dsnro", "i8", 1),
        ("dsnro_on", "i8", 0),  # whether any row has DSNRO (a take reads its row's only then)
        ("q_pervm", "i8", 1),
        ("j_world", "i8", 1),
        # per host the QUEUE FULL retry delay and ESXi's throttling (Disk.QFullSampleSize, 0: off; Disk.QFullThreshold)
        ("hp_qfr", "f8", 1),
        ("hp_qfs", "i8", 1),
        ("hp_qft", "i8", 1),
        # traces replayed (read_iolog): per job the offset of its records in rp_op/rp_size and their count (-1, 0: none)
        ("j_rp_off", "i8", 1),
        ("j_rp_len", "i8", 1),
        ("rp_op", "i8", 1),
        ("rp_size", "i8", 1),
        # per job: 1 when an arrival finding iodepth issued and not done is refused (iodepth_full = "refuse")
        ("j_refuse", "i8", 1),
        # the fault timeline
        ("f_time", "f8", 1),
        ("f_what", "i8", 1),
        ("f_cs", "i8", 2),
        ("f_nc", "i8", 1),
        ("f_array", "i8", 1),
        ("f_repl", "i8", 1),
        ("f_add", "f8", 1),
        ("f_ppm", "f8", 1),
        ("f_lops", "i8", 1),  # loss: the ops it hits, 1 reads, 2 writes, 3 both
        ("f_state", "i8", 1),
        ("f_origin", "i8", 1),
        ("f_revert", "i8", 1),
        # alua by volume or port group, owner: per fault its device paths, their new states and crossings (-1: as is)
        ("f_paths", "i8", 2),
        ("f_np", "i8", 1),
        ("f_pstate", "i8", 2),
        ("f_pcross", "i8", 2),
        # implicit ALUA (Model.cells): per device path its cell (-1: none), its array controller, whether the
        # preferred-array rule leaves it AO; per cell its array, controllers, device paths and their count
        ("p_cell", "i8", 1),
        ("ia_on", "i8", 0),  # whether any cell exists (a command reads its path's only then)
        ("p_actl", "i8", 1),
        ("p_prefao", "i8", 1),
        ("g_array", "i8", 1),
        ("g_n", "i8", 1),
        ("g_paths", "i8", 2),
        ("g_np", "i8", 1),
        ("p_alua0", "i8", 1),
        # value streams (rows of V.rnd): per job, per (array, op) service, replication, per nexus loss then replication loss
        ("str_job", "i8", 1),
        ("str_svc", "i8", 2),
        ("str_repl", "i8", 0),
        ("str_loss", "i8", 1),
        ("trace_on", "i8", 0),
        # the policy, per device (a policy per device, issue 32): its entry points (C functions, 0 for none) and its
        # record's address; the view's address
        ("pol_select", "i8", 0),  # the run's policy (every device's, unless pol_multi)
        ("pol_start", "i8", 0),
        ("pol_complete", "i8", 0),
        ("pol_path", "i8", 0),
        ("pol_fail", "i8", 0),  # an attempt ended without a completion (io_life.fail_attempt)
        ("pol_state", "i8", 0),
        ("pol_multi", "i8", 0),  # 1: devices run different policies (the d_p* arrays)
        ("d_psel", "i8", 1),
        ("d_pstart", "i8", 1),
        ("d_pcomp", "i8", 1),
        ("d_ppath", "i8", 1),
        ("d_pfail", "i8", 1),
        ("d_pstate", "i8", 1),
        ("pol_view", "i8", 0),
        # the fabric (issue 33): whether it runs (Model.fabric); per link its bb_credits x frame_size (0: no credit
        # limit), round trip without credit_return, its scenario's credit_return and which directions its port
        # receives (link, direction); per fault its link, credit_return from then on (-1: the scenario's), stop-until
        ("fabric_on", "i8", 0),
        ("l_cb", "f8", 1),
        ("l_rtt0", "f8", 1),
        ("l_cret0", "f8", 2),
        ("l_drain", "i8", 2),
        ("f_link", "i8", 1),
        ("f_cret", "f8", 1),
        ("f_stop", "f8", 1),
        # the host's CPU (Model.cpu, issue 33): whether any host has cores; per job its submitting and its completing
        # core (-1: its host has no cpu table); per device path the CPU seconds of a submission and of a completion
        # (before the NUMA factor); per core its host and node; per host [core node, adapter node] the factor
        ("cpu_on", "i8", 0),
        ("j_core", "i8", 1),
        ("j_irq", "i8", 1),
        ("p_csub", "f8", 1),
        ("p_ccomp", "f8", 1),
        ("core_host", "i8", 1),
        ("core_node", "i8", 1),
        ("cpu_fac", "f8", 3),
        # frames (issue 33, model/frames.py): whether any nexus has a transport; per nexus its framing row (F_*)
        ("frames_on", "i8", 0),
        ("c_frm", "i8", 2),
        # an attempt's first frame waits before it leaves (io_life.first_add): a NUMA hop, or its core's submission
        ("first_on", "i8", 0),
    ],
)

STATE = Layout(
    StateType,
    [
        ("si", "i8", 1),
        ("sf", "f8", 1),
        # the heap (time, key = id << 8 | kind, arg) and the urgent and normal FIFOs of zero-delay events
        ("h_time", "f8", 1),
        ("h_ka", "i8", 2),  # each entry's key and argument side by side: moving an entry moves one line
        ("uf_kind", "i8", 1),
        ("uf_arg", "i8", 1),
        ("nf_kind", "i8", 1),
        ("nf_arg", "i8", 1),
        # each job slot's I/O: one row of SLOT_COLS words per slot, read as integers (slot) or floats (slotf, the
        # same memory): the K_* columns. An event touches one slot; with thousands of slots in flight a slot's
        # fields in one row cost one or two cache misses, in a dozen arrays a dozen.
        ("slot", "i8", 2),
        ("slotf", "f8", 2),
        # the wire's truth per nexus (the host learns it after its detection delay), arrays alive
        ("phys_up", "i8", 1),
        ("epoch", "i8", 1),
        ("extra", "f8", 1),
        ("loss", "f8", 1),
        ("loss_op", "f8", 2),  # per nexus, by op (0 read, 1 write): reference/state.loss_op
        ("alive", "i8", 1),
        ("cross", "i8", 1),  # per device path: its I/O crosses to its volume's owner (an owner fault flips it)
        ("ia_count", "i8", 2),  # implicit ALUA: commands per (cell, controller) since the cell's last check
        ("wire_free", "f8", 2),
        # the queues, one row each (Q_* columns, fast/queues.py), the rings of their FIFOs end to end, and per row
        # the QUEUE FULL and good statuses counted towards its next throttling change (a device queue's)
        ("q", "i8", 2),
        ("qf", "f8", 2),
        ("q_fifo", "i8", 1),
        ("q_qfull_seen", "i8", 1),
        ("q_good_seen", "i8", 1),
        # DSNRO (a row with P.q_dsnro > 0): per row the VMs with I/O outstanding on its device, per row and VM those
        # I/Os (issued to the device, not done) and the places they hold; (1, 1) when no row has DSNRO
        ("q_worlds", "i8", 1),
        ("qw_out", "i8", 2),
        ("qw_held", "i8", 2),
        # per open-loop job a FIFO of arrival times waiting for a slot (backlog) and one of its slots waiting for an
        # arrival (idle)
        ("jb_time", "f8", 2),
        ("jb_head", "i8", 1),
        ("jb_tail", "i8", 1),
        ("ji_slot", "i8", 2),
        ("ji_head", "i8", 1),
        ("ji_tail", "i8", 1),
        # per job: I/Os it has issued (a trace's k-th record is its k-th I/O)
        ("j_rp_taken", "i8", 1),
        # per host: its attempts in flight by deadline (a list through the slots' K_DPREV/K_DNEXT), and whether
        # an EV_DEADLINE of it is in the heap
        ("dl_head", "i8", 1),
        ("dl_tail", "i8", 1),
        ("dl_armed", "i8", 1),
        # I/Os waiting for the host to see a path change
        ("wt_slot", "i8", 1),
        ("wt_id", "i8", 1),
        ("tmp_wt", "i8", 1),
        # per-I/O trace (when asked for)
        ("tr_seq", "i8", 1),
        ("tr_job", "i8", 1),
        ("tr_op", "i8", 1),
        ("tr_size", "i8", 1),
        ("tr_issued", "f8", 1),
        ("tr_done", "f8", 1),
        ("tr_path", "i8", 1),
        ("tr_attempts", "i8", 1),
        ("l_cret", "f8", 2),  # the fabric: each link's port's credit_return now (link, direction)
        ("l_held", "f8", 2),  # and the seconds in the window each was held by back-pressure (link, direction)
        # the host's CPU: per core when it is next free and its busy seconds in the window
        ("cpu_free", "f8", 1),
        ("cpu_busy", "f8", 1),
        # frames: per nexus the bytes its framed legs sent, payload then on the wire, each per direction (4 columns)
        ("c_fbytes", "f8", 2),
    ],
    cols={"h_ka": 2, "slot": SLOT_COLS, "slotf": SLOT_COLS, "wire_free": 2, "q": Q_COLS, "qf": Q_COLS},
)

params_at = address_of(PARAMS)
state_at = address_of(STATE)
