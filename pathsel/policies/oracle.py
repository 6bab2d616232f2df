"""``oracle``: a clairvoyant selector, the league's bar. Not shippable: no host can know what it reads.

Every other policy sees what the host believes (``v.up``, ``v.alua``, its
own I/Os in flight). ``oracle`` also reads the truth the engine keeps (the
view's ``t_*`` fields, :mod:`pathsel.policies.framework.kernel`): whether
each nexus's wire is really up before the host notices, its one-way latency
now (the nexus's mean, its distance and any latency fault's ``add``), its
loss now, when its wire and the shared links it crosses are next free, and
the commands queued for the array's slots and at the target port from every
host. For each I/O it picks the path with the least expected completion
time: the round trips of its frames (two, four for a SCSI write's
XFER_RDY), each frame's expected loss recovery, the wait behind the bytes
already queued on its wires, the transfer of this I/O at the slowest
bandwidth on the way, the wait for one of the array's slots behind the
commands ahead (their mean service time each, shared by the slots), and
its own service time; a target port that would answer QUEUE FULL costs the
host's retry delay.

The idea of ranking selectors against one that knows every server's true
state is absim's, the simulator of Lalith Suresh, Marco Canini, Stefan
Schmid and Anja Feldmann, "C3: Cutting Tail Latency in Cloud Data Stores via
Adaptive Replica Selection", USENIX NSDI 2015,
https://www.usenix.org/conference/nsdi15/technical-sessions/presentation/suresh;
its ``clairvoyant`` replica selection (https://github.com/lalithsuresh/absim,
``simulations/client.py``) sorts replicas by (1 + the requests active and
waiting at the server) x its service time. ``oracle`` is that estimate with
a storage path's network in it.

Assumptions (docs/model.md lists them too):

* It is greedy: the least expected time for this I/O, not a schedule of all
  of them, so it is not a proven bound; a policy may beat it in a scenario
  (the league reports such gaps as negative).
* Means, not the draws: the latency and service times are the
  distributions' means, not the values the engine will draw.
* It keeps to paths the host believes usable, as every policy must, and
  prefers the ALUA working set (AO; ANO only when no AO path is usable) as
  long as one path of it is really up. When every working-set path the host
  still believes up is really down, it knows so and takes a usable ANO path
  that is really up (the honest choice for a clairvoyant bound: an AO path
  it knows is dead only loses the I/O). With every usable path really down
  it takes the first of the working set (the I/O is lost whatever it picks).
* A frame crossing to the volume's owning controller (issue 32) and the
  host's CPU and NUMA costs are not in its estimate.
* Ties (idle paths) go to the path with the fewest I/Os of this device in
  flight, then the first.
"""

from __future__ import annotations

import math

from .framework.adapter import policy_class
from .framework.define import PolicyDef, Snapshot, compiled, per_device
from .framework.kernel import usable, ws_member, ws_tier

__all__ = ["ORACLE", "Oracle", "NOT_SHIPPED", "T_COLS", "T_LAT", "T_RECOV", "T_SVC_R", "T_SVC_W", "T_PERKIB", "T_BW", "T_LINKBW", "T_QFR", "T_SCSI"]

NOT_SHIPPED = frozenset({"oracle"})  # policies no host can run: the league's bar, never recommended, emitted or "shipped"

# v.t_path's columns (per path, static for the run): the nexus's mean one-way seconds (its distribution's; the
# distance and faults are v.t_extra), its loss recovery seconds, the array's mean read and write service seconds and
# its seconds per KiB, the nexus's bandwidth and the slowest shared link's (bytes/s, 0: not modelled), the host's
# QUEUE FULL retry delay, 1 on SCSI (a write's XFER_RDY is a round trip more)
T_LAT, T_RECOV, T_SVC_R, T_SVC_W, T_PERKIB, T_BW, T_LINKBW, T_QFR, T_SCSI = range(9)
T_COLS = 9
# the queue table's columns the oracle reads (fast/layout.py's Q_IN_USE, Q_HEAD, Q_TAIL, Q_QUEUE_DEPTH)
_IN_USE, _HEAD, _TAIL, _DEPTH = 0, 1, 2, 3


@compiled
def expected_time(v, p, size, op, t):
    """Seconds until an I/O of ``size`` bytes (``op`` 0 read, 1 write) sent now on path ``p`` would complete."""
    c = v.p_ctrl[p]
    info = v.t_path
    lat = info[p, T_LAT] + v.t_extra[c] + v.t_loss_op[c, op] * 1e-6 * info[p, T_RECOV]  # this op's loss (loss_ops)
    legs = 4.0 if (op == 1 and info[p, T_SCSI] > 0.0) else 2.0
    cost = legs * lat
    if size > 0:
        d = 1 if op == 0 else 0  # the data's direction: a read's to the host, a write's to the array
        wait = 0.0
        bw = info[p, T_BW]
        if bw > 0.0:
            wait = max(wait, v.t_wfree[c, d] - t)
        for i in range(v.t_links.shape[1]):
            w = v.t_links[c, i]
            if w < 0:
                break
            wait = max(wait, v.t_wfree[w, d] - t)
        lbw = info[p, T_LINKBW]
        if lbw > 0.0 and (bw <= 0.0 or lbw < bw):
            bw = lbw
        cost += wait
        if bw > 0.0:
            cost += size / bw
    svc = (info[p, T_SVC_R] if op == 0 else info[p, T_SVC_W]) + info[p, T_PERKIB] * size / 1024.0
    cost += svc
    r = v.t_row[p, 0]  # the array's slots: the commands ahead of this one, served by the slots at once
    if r >= 0:
        depth = v.t_q[r, _DEPTH]
        if depth > 0:
            ahead = v.t_q[r, _IN_USE] + v.t_q[r, _TAIL] - v.t_q[r, _HEAD] + 1 - depth
            if ahead > 0:
                cost += ahead * 0.5 * (info[p, T_SVC_R] + info[p, T_SVC_W]) / depth
    r = v.t_row[p, 1]  # the target port: full, it answers QUEUE FULL and the host sends again after its delay
    if r >= 0:
        depth = v.t_q[r, _DEPTH]
        if depth > 0 and v.t_q[r, _IN_USE] >= depth:
            cost += info[p, T_QFR]
    return cost


@compiled
def oracle_select(v, st, d, slot):
    n = v.d_np[d]
    size = v.s_size[slot]
    op = v.s_op[slot]
    t = v.clock[0]
    tier = ws_tier(v, d, False, -1)
    best = -1
    first = -1
    least = math.inf
    fewest = 0
    for sweep in range(2):  # the working set first; any usable path really up only when none of the set is
        for k in range(n):
            p = v.d_paths[d, k]
            if not (ws_member(v, p, tier) if sweep == 0 else usable(v, p)):
                continue
            if first < 0:
                first = k
            if v.t_up[v.p_ctrl[p]] == 0:  # really down, whatever the host believes yet
                continue
            cost = expected_time(v, p, size, op, t)
            if best < 0 or cost < least or (cost == least and v.out[p] < fewest):
                best = k
                least = cost
                fewest = v.out[p]
        if best >= 0:
            break
    if best < 0:
        return first
    st.last[d] = best
    return best


def _config(s: Snapshot) -> str:
    k = int(s.state.last[s.d])
    return f"oracle (clairvoyant, not shippable) last={s.names[k] if k >= 0 else 'none'}"


ORACLE = PolicyDef(
    "oracle",
    "Clairvoyant, not shippable: the path with the least expected completion time from the engine's true state (the league's bar)",
    "pathsel's own bound, after absim's `clairvoyant` replica selection: Suresh et al., \"C3: Cutting Tail Latency in "
    'Cloud Data Stores via Adaptive Replica Selection", USENIX NSDI 2015',
    select=oracle_select,
    state=(per_device("last", init=-1),),
    config_string=_config,
    class_name="Oracle",
    counts="the truth: wires really up, one-way latency and loss now, bytes queued on its wires, commands at the array and target port from every host",
    notes=(
        "**Not shippable**: it reads what no host knows (the engine's true state: a wire down before the host "
        "notices, a latency fault's size, other hosts' commands at the array). The league's bar: `pathsel league` "
        "reports every policy's gap to it; `pathsel recommend` never recommends it and `pathsel emit` refuses it. "
        "Greedy (the least expected completion time for each I/O), so a policy may beat it in a scenario."
    ),
)
Oracle = policy_class(ORACLE, "Oracle", module=__name__)
