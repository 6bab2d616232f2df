"""The compiled view of a host's paths, and the helpers a compiled-style policy uses.

A policy written in the compiled style (see :mod:`pathsel.policies.framework.define`)
receives ``v``, a :data:`VIEW` record: read-only windows on the state an
engine keeps (which paths a device has, which are up, their ALUA states, the
I/Os and bytes in flight per path and per nexus, the clock, the size of the
I/O being placed) plus the run's event log and the policy's own random
stream. Both engines lay their state out in this record, so the same compiled
hooks run on either. ``d`` is a device (a host's view of one volume); its
paths are numbered ``k = 0 .. npaths(v, d) - 1`` in scenario order and
``path(v, d, k)`` is the path's index in the run's arrays (``v.up[p]``,
``v.out[p]``, ...).

Everything here compiles with numba; the toolkit functions are inlined into
the policy that calls them.
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.experimental import structref

from ...jit import Layout, address_of, hot, prefetch

__all__ = [
    "AO",
    "ANO",
    "STANDBY",
    "UNAVAILABLE",
    "TRANSITIONING",
    "ALUA_CODES",
    "ALUA_NAMES",
    "VIEW",
    "view_at",
    "FL_STOP",
    "FL_REFILL",
    "FL_NEV",
    "FL_EV_ROOM",
    "N_FLAGS",
    "EV_POLICY",
    "now",
    "npaths",
    "path",
    "local",
    "usable",
    "node_distance",
    "numa_nodes",
    "working_set",
    "ws_tier",
    "ws_member",
    "ws_next",
    "draw",
    "uniform",
    "log_event",
]

# ALUA / ANA states as the arrays hold them
AO, ANO, STANDBY, UNAVAILABLE, TRANSITIONING = 0, 1, 2, 3, 4
ALUA_CODES = {"AO": AO, "ANO": ANO, "standby": STANDBY, "unavailable": UNAVAILABLE, "transitioning": TRANSITIONING}
ALUA_NAMES = {v: k for k, v in ALUA_CODES.items()}

# v.flags: what needs Python before the next event (the engine's loop tests FL_STOP once per event)
FL_STOP, FL_REFILL, FL_NEV, FL_EV_ROOM = 0, 1, 2, 3
N_FLAGS = 4

# Event kinds below EV_POLICY are the engine's (faults, path up/down, ALUA changes); a policy's
# own events are EV_POLICY + i for the i-th entry of its ``events``.
EV_POLICY = 16


@structref.register
class ViewType(types.StructRef):
    pass


VIEW = Layout(
    ViewType,
    [
        # topology: each device's paths (d_paths[d, k], -1 padded), each path's device, position, nexus
        ("d_paths", "i8", 2),
        ("d_np", "i8", 1),
        ("p_local", "i8", 1),
        ("p_dev", "i8", 1),
        ("p_ctrl", "i8", 1),
        ("p_bw", "f8", 1),  # bytes per second, 0: not modelled
        ("p_weight", "i8", 1),  # the administrator's static weight (MPIO weighted paths)
        # NUMA (issue 16): the node of each path's adapter, each device's host's SLIT distances numa_dist[d, a, b]
        ("p_node", "i8", 1),
        ("numa_dist", "i8", 3),
        # each device's host's own node count: numa_dist is padded to the most nodes of any host in the run, and the
        # kernel's for_each_node walks only the nodes of the host it runs on
        ("d_nodes", "i8", 1),
        # the host's belief about each path, and the I/Os in flight (per path and per nexus)
        ("up", "i8", 1),
        ("alua", "i8", 1),
        ("out", "i8", 1),
        ("out_bytes", "i8", 1),
        ("c_out", "i8", 1),
        ("c_out_bytes", "i8", 1),
        # the clock (clock[0], seconds) and the I/O in each slot (size in bytes, op 0 read / 1 write)
        ("clock", "f8", 1),
        ("s_size", "i8", 1),
        ("s_op", "i8", 1),
        ("s_node", "i8", 1),  # the NUMA node of the CPU that issued the I/O in the slot (its job's)
        # flags (FL_*), the event log (ev_mask/ev_val: one row per event, one column per device path)
        ("flags", "i8", 1),
        ("ev_t", "f8", 1),
        ("ev_dev", "i8", 1),
        ("ev_kind", "i8", 1),
        ("ev_path", "i8", 1),
        ("ev_a", "i8", 1),
        ("ev_b", "i8", 1),
        ("ev_mask", "i1", 2),
        ("ev_val", "f8", 2),
        # pre-drawn random values: one row per stream, laid end to end in rnd, each as long as its stream's use;
        # rq[stream] = (index in rnd of its next value, index past which the engine refills it); d_stream: each device's
        ("rnd", "f8", 1),
        ("rq", "i8", 2),
        ("d_stream", "i8", 1),
        # each device's wake time: a policy that returns no path while it holds usable paths out (dm's failed paths
        # until multipathd's next check) writes when to ask it again; inf: a path change only (the engines' default)
        ("d_wake", "f8", 1),
        # the truth, for the clairvoyant `oracle` only (no shipped policy reads these): windows on the engine's own
        # state, not the host's beliefs. Per nexus its wire really up, its one-way seconds added now (distance and
        # latency faults), its loss now (ppm); per wire and direction when it is next free; the model's queue table
        # (columns in use, FIFO head, FIFO tail, queue depth); per path static numbers (T_* columns: oracle.py) and
        # its rows of the queue table and wires (array slots, target port, -1: none); per nexus its shared links' wires
        ("t_up", "i8", 1),
        ("t_extra", "f8", 1),
        ("t_loss", "f8", 1),
        ("t_loss_op", "f8", 2),  # per nexus its loss now (ppm) of a read's frames (column 0) and a write's (1): loss_ops
        ("t_wfree", "f8", 2),
        ("t_q", "i8", 2),
        ("t_path", "f8", 2),
        ("t_row", "i8", 2),
        ("t_links", "i8", 2),
        # the job of the I/O in each slot when that job is sequential (fio rw read, write, rw/readwrite), else -1:
        # HDLM's extended algorithms (hdlm.py) keep a sequential run on its path; static, like s_node
        ("s_seq", "i8", 1),
    ],
)

view_at = address_of(VIEW)  # the view at an address (an int64): what a hook's entry point does first

_u = np.uint64


@hot
def now(v):
    """Simulated seconds since the start of the run."""
    return v.clock[0]


@hot
def npaths(v, d):
    return v.d_np[d]


@hot
def path(v, d, k):
    """The run-wide index of device ``d``'s path ``k`` (into ``v.up``, ``v.out``, ...)."""
    return v.d_paths[d, k]


@hot
def local(v, p):
    """The position ``k`` of run-wide path ``p`` among its device's paths."""
    return v.p_local[p]


@hot
def node_distance(v, d, a, b):
    """The SLIT distance from NUMA node ``a`` to node ``b`` on device ``d``'s host (10: local)."""
    return v.numa_dist[d, a, b]


@hot
def numa_nodes(v, d):
    """How many NUMA nodes device ``d``'s host has (1 without NUMA keys): the nodes ``for_each_node`` walks there."""
    return v.d_nodes[d]


@hot
def usable(v, p):
    """Up (as far as the host knows) and in an ALUA state that accepts I/O (AO or ANO)."""
    return v.up[p] == 1 and v.alua[p] <= ANO


@hot
def working_set(v, d, use_ano, out):
    """:func:`pathsel.alua_working_set` of device ``d``: its positions ``k`` written to ``out``; returns the count.

    Usable AO paths; the ANO ones only when no AO path is usable, or every usable path with ``use_ano``.
    """
    n = 0
    np_ = v.d_np[d]
    if use_ano:
        for k in range(np_):
            if usable(v, v.d_paths[d, k]):
                out[n] = k
                n += 1
        return n
    for k in range(np_):
        p = v.d_paths[d, k]
        if usable(v, p) and v.alua[p] == AO:
            out[n] = k
            n += 1
    if n == 0:
        for k in range(np_):
            p = v.d_paths[d, k]
            if usable(v, p) and v.alua[p] == ANO:
                out[n] = k
                n += 1
    return n


# Membership of the working set without listing it (the per-I/O policies): a path is in it
# when usable and, unless use_ano, in the set's ALUA tier: AO while any AO path is usable,
# else ANO. The tier needs no scan while the path in use is a usable AO path.
@hot
def ws_tier(v, d, use_ano, cur):
    """-1 with use_ano (every usable path), else AO or ANO: the tier :func:`working_set` would use."""
    if use_ano:
        return -1
    if cur >= 0:
        p = v.d_paths[d, cur]
        if usable(v, p) and v.alua[p] == AO:
            return AO
    for k in range(v.d_np[d]):
        p = v.d_paths[d, k]
        if usable(v, p) and v.alua[p] == AO:
            return AO
    return ANO


@hot
def ws_member(v, p, tier):
    return usable(v, p) and (tier < 0 or v.alua[p] == tier)


@hot
def ws_next(v, d, cur, tier):
    """The first working-set position after ``cur`` in path order, cyclically (``cur`` itself last; from the first
    path when ``cur`` < 0); -1 when the set is empty."""
    n = v.d_np[d]
    start = 0 if cur < 0 else cur + 1
    for step in range(n):
        cand = start + step
        if cand >= n:
            cand -= n
        if ws_member(v, v.d_paths[d, cand], tier):
            return cand
    return -1


@hot
def draw(rnd, rq, flags, stream):
    """The next pre-drawn value of ``stream`` (the engine refills a row before it runs out)."""
    st = _u(stream)
    pos = rq[st, 0]
    # Rows are read in step, a value at a time, and 20 or more at once: more than the
    # hardware prefetcher follows, so a new line was a miss to L3 every eighth value.
    # Ask for the line after this one now; it is needed ~8 draws from this row later.
    prefetch(rnd, _u(pos + 8))
    x = rnd[_u(pos)]
    rq[st, 0] = pos + 1
    if pos + 1 > rq[st, 1]:  # fewer than a margin left: refill before the next event
        flags[FL_REFILL] = 1
        flags[FL_STOP] = 1
    return x


@hot
def uniform(v, d):
    """A standard uniform from device ``d``'s own random stream (a policy declares how many it draws per call)."""
    return draw(v.rnd, v.rq, v.flags, v.d_stream[d])


@hot
def log_event(v, d, kind, p, a, b):
    """Add an event to the run's log; returns its row, whose ``ev_mask``/``ev_val`` columns (one per device path) start clear."""
    e = v.flags[FL_NEV]
    v.flags[FL_NEV] = e + 1
    if e + 1 > v.flags[FL_EV_ROOM]:
        v.flags[FL_STOP] = 1
    v.ev_t[e] = v.clock[0]
    v.ev_dev[e] = d
    v.ev_kind[e] = kind
    v.ev_path[e] = p
    v.ev_a[e] = a
    v.ev_b[e] = b
    for k in range(v.ev_mask.shape[1]):
        v.ev_mask[e, k] = 0
        v.ev_val[e, k] = np.nan
    return e
