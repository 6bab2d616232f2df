"""The fault timeline in the fast engine: reference/faults.py's ``apply``, ``set_wire``, ``notice`` and ``path_changed``.

A change on the wire takes effect at once; the host notices a path going down
or up only after its detection delay (a NOTICE event per nexus), and then
tells the policy (``path_change``) and wakes the I/Os waiting for a change.
"""

from __future__ import annotations

from ...jit import call_v_4, jit
from ...policies.framework.kernel import ANO, AO, log_event
from .layout import (
    EV_FAULT,
    EV_NOTICE,
    F_ALUA,
    F_ARRAY_DOWN,
    F_ARRAY_UP,
    F_IMPLICIT,
    F_LATENCY,
    F_LOSS,
    F_OWNER,
    F_PATH_DOWN,
    F_PATH_UP,
    F_REPL_EXTRA,
    F_REPL_LOSS,
    F_REPL_UP,
    F_SLOW_DRAIN,
    I_FAULT_NEXT,
    I_REPL_OK,
    LOG_ALUA,
    LOG_FAULT,
    LOG_PATH_DOWN,
    LOG_PATH_UP,
)
from .scheduler import timeout
from .waits import wake_waiters


@jit
def path_changed(P, S, V, p, kind):
    """The host sees path ``p`` change: log it, tell the device's policy."""
    d = V.p_dev[p]
    log_event(V, d, kind, p, V.alua[p], V.up[p])
    fn, st = P.pol_path, P.pol_state
    if P.pol_multi != 0:
        fn, st = P.d_ppath[d], P.d_pstate[d]
    if fn != 0:
        call_v_4(fn, P.pol_view, st, d, V.p_local[p])


@jit
def notice(P, S, V, c):
    """The host learns the nexus's state (its detection delay after the change); waiting I/Os retry."""
    up = S.phys_up[c]
    for i in range(P.c_npaths[c]):
        p = P.c_paths[c, i]
        if V.up[p] != up:
            V.up[p] = up
            path_changed(P, S, V, p, LOG_PATH_UP if up == 1 else LOG_PATH_DOWN)
    wake_waiters(S)


@jit
def set_wire(P, S, V, c, up):
    S.phys_up[c] = up
    if up == 0:
        S.epoch[c] += 1
    timeout(S, V, P.hp_det[P.c_host[c]], EV_NOTICE, c)


@jit
def implicit_alua(P, S, V, array):
    """reference/faults.implicit: each volume of ``array`` moves to the controller that received more than twice as many of
    its commands as the owner since the last check; the counts restart."""
    moved = False
    for g in range(P.g_array.shape[0]):
        if P.g_array[g] != array:
            continue
        n = P.g_n[g]
        owner = -1
        for i in range(P.g_np[g]):
            p = P.g_paths[g, i]
            if S.cross[p] == 0:
                owner = P.p_actl[p]
                break
        best = 0
        for k in range(1, n):
            if S.ia_count[g, k] > S.ia_count[g, best]:
                best = k
        if owner >= 0 and best != owner and S.ia_count[g, best] > 2 * S.ia_count[g, owner]:
            for i in range(P.g_np[g]):
                p = P.g_paths[g, i]
                on_owner = P.p_actl[p] == best
                V.alua[p] = AO if (on_owner and P.p_prefao[p] == 1) else ANO
                S.cross[p] = 0 if on_owner else 1
                path_changed(P, S, V, p, LOG_ALUA)
            moved = True
        for k in range(n):
            S.ia_count[g, k] = 0
    if moved:
        wake_waiters(S)


@jit
def apply_fault(P, S, V, f):
    what = P.f_what[f]
    if what == F_IMPLICIT:
        implicit_alua(P, S, V, P.f_array[f])
        return
    log_event(V, -1, LOG_FAULT, what, P.f_origin[f], P.f_revert[f])
    nc = P.f_nc[f]
    if what == F_PATH_DOWN or what == F_PATH_UP or what == F_ARRAY_DOWN or what == F_ARRAY_UP:
        up = 1 if (what == F_PATH_UP or what == F_ARRAY_UP) else 0
        if P.f_array[f] >= 0:
            S.alive[P.f_array[f]] = up
        for i in range(nc):
            set_wire(P, S, V, P.f_cs[f, i], up)
    elif what == F_SLOW_DRAIN:  # reference/faults.apply: the link's port returns credits late, or stops until the revert
        li = P.f_link[f]
        w = P.c_bw.shape[0] + li
        for d in range(2):
            if P.l_drain[li, d] != 0:
                S.l_cret[li, d] = P.l_cret0[li, d] if P.f_cret[f] < 0.0 else P.f_cret[f]
                if P.f_stop[f] > 0.0 and S.wire_free[w, d] < P.f_stop[f]:
                    S.wire_free[w, d] = P.f_stop[f]
    elif what == F_OWNER or P.f_np[f] > 0:  # alua by volume or port group, owner: the paths' states and crossings (issue 32)
        for i in range(P.f_np[f]):
            p = P.f_paths[f, i]
            V.alua[p] = P.f_pstate[f, i]
            if P.f_pcross[f, i] >= 0:
                S.cross[p] = P.f_pcross[f, i]
            path_changed(P, S, V, p, LOG_ALUA)
        wake_waiters(S)
    elif what == F_ALUA:
        for i in range(nc):
            c = P.f_cs[f, i]
            for k in range(P.c_npaths[c]):
                p = P.c_paths[c, k]
                V.alua[p] = P.f_state[f]
                path_changed(P, S, V, p, LOG_ALUA)
        wake_waiters(S)
    elif what == F_LATENCY:
        if P.f_repl[f] == 1:
            S.sf[F_REPL_EXTRA] = P.r_extra + P.f_add[f]
        for i in range(nc):
            c = P.f_cs[f, i]
            S.extra[c] = P.c_extra[c] + P.f_add[f]
    elif what == F_LOSS:
        if P.f_repl[f] == 1:
            S.sf[F_REPL_LOSS] = P.r_loss if P.f_ppm[f] < 0 else P.f_ppm[f]
        ops = P.f_lops[f]
        for i in range(nc):
            c = P.f_cs[f, i]
            S.loss[c] = P.c_loss[c] if P.f_ppm[f] < 0 else P.f_ppm[f]
            for op in range(2):  # the ops it names lose ppm from now on, the other none (a revert: the scenario's)
                S.loss_op[c, op] = P.c_loss_op[c, op] if P.f_ppm[f] < 0 else (P.f_ppm[f] if (ops >> op) & 1 else 0.0)
    else:  # the replication link: the mediator keeps the preferred site serving
        ok = 1 if what == F_REPL_UP else 0
        S.si[I_REPL_OK] = ok
        loser = P.r_loser
        for p in range(P.p_array.shape[0]):
            if P.p_mirror[p] >= 0 and P.p_array[p] == loser:
                V.alua[p] = P.p_alua0[p] if ok == 1 else 3
                path_changed(P, S, V, p, LOG_ALUA)
        wake_waiters(S)


@jit
def fault_loop(P, S, V):
    """The fault timeline process: apply every fault due now, then wait for the next."""
    nf = P.f_time.shape[0]
    while S.si[I_FAULT_NEXT] < nf:
        f = S.si[I_FAULT_NEXT]
        now = V.clock[0]
        if P.f_time[f] > now:
            timeout(S, V, P.f_time[f] - now, EV_FAULT, f)
            return
        S.si[I_FAULT_NEXT] = f + 1
        apply_fault(P, S, V, f)
