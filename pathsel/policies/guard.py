"""pathsel's own selector, ``guard``: ALUA tiers, least expected completion time of this I/O, gray paths ejected.

Designed for the policy league (docs/league.md) and redesigned for issue 37
(the old one is ``guard:v1``, pathsel/policies/guard_v1.py). Every shipped
selector loses somewhere: round robin and the queue-depth selectors keep
feeding a gray path; dm's historical-service-time piles onto one path; v1's
``service x (in flight + 1)`` treated idle links as servers, left the wide
path out when large transfers queued on it, and never looked again at a path
it had stopped using. ``guard`` now prices each I/O on each path as what it
would cost there:

* **ALUA/ANA tiers first** (every OS): the working set is the usable AO
  paths, ANO only when no AO path is usable (or always with ``use_ano=1``).
* **Expected completion time of this I/O** on path k::

      cost = intercept + s x ahead + tail_z x spread + size / bandwidth (+ a NUMA term)

  ``ahead`` is the wire time of the bytes this device has in flight on the
  path (bytes in flight / bandwidth); ``size / bandwidth`` is this I/O's own
  transfer time. ``s`` is the rise of latency per second of wire time ahead,
  learnt online as a least-squares slope (``cov / (var + RIDGE x mean
  square)`` over time-weighted averages of each I/O's wire time ahead at its
  start and its latency), and never below 1 where bandwidth is modelled: the
  bytes ahead take at least their transfer time, more where a link behind
  the path is shared (an ISL, a target port), which the slope then learns.
  ``intercept`` is the same line's value at nothing ahead: ``base - s x
  (the average wire time ahead)``, within [0, base], where ``base`` is the
  time-weighted average (``w = exp(-dt / decay)``, as Finagle's peak EWMA:
  Twitter, Finagle, ``PeakEwma.scala``, 2017,
  https://github.com/twitter/finagle) of each completion's latency less its
  own transfer time. So a busy wide path is not mistaken for a slow one, and
  at queue depth 1 (nothing ahead) paths compare by their latency alone.
  This follows the completion-time estimate of Linux's dm service-time
  selector, which weighs bytes in flight by a path's throughput
  (``drivers/md/dm-ps-service-time.c``, Kiyoshi Ueda, NEC, 2009,
  https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/md/dm-ps-service-time.c).
  ``spread`` is the standard deviation of the latency (an exponentially
  weighted average of squared deviations: D. H. D. West, "Updating mean and
  variance estimates: an improved method", CACM 22(9), 1979,
  https://doi.org/10.1145/359146.359153), for mean + z sigma comparisons
  (Dean and Barroso, "The Tail at Scale", CACM 56(2), 2013,
  https://research.google/pubs/the-tail-at-scale/). ``tail_z`` is 0 by
  default: measured on the library, the spread a path shows is mostly the
  array's own service variance, which no choice of path avoids, and
  pricing it moved load onto steadier but slower or queueing paths
  (metro-uniform-fewer-slots: fewer IOPS, the same p99; with ``tail_z`` = 1
  four library scenarios fell more than 5 % behind on IOPS, while the worst
  p99 regret fell from 14.9 % to 8.1 %). Set ``tail_z`` > 0 to trade IOPS
  for p99 on heavy tails.
* **Probes**: an admitted path with nothing in flight and no completion for
  ``probe`` x (its ``base`` / the tier's best ``base``, within [1,
  PROBE_SPREAD]) seconds takes the next I/O, so its estimate is refreshed
  and load flows back after a transient (the time-weighted average lets a
  fresh sample replace a stale one): a path k x slower is probed k x less
  often (20 x at most).
* **NUMA**: a path whose adapter is on another node than the CPU that issued
  the I/O costs ``numa x (distance / local distance - 1) x REMOTE`` more
  (the host's SLIT distances; REMOTE = 50 us). The completion's CPU time,
  not the path, bounds a CPU-bound host (Linux nvme-multipath's
  ``iopolicy=numa`` picks the nearest controller for that reason:
  ``drivers/nvme/host/multipath.c``, Christoph Hellwig, 2017-2018,
  https://github.com/torvalds/linux/blob/master/drivers/nvme/host/multipath.c);
  no latency a host measures on the path shows that cost, so it is priced
  in, as a per-I/O addition (a multiple of the whole cost would also scale
  the wire queue ahead, and kept a far fast NIC idle while the near slow one
  queued: fabric-numa-fast-nic-far-socket). The formula and REMOTE are
  pathsel's own.
* **Outlier ejection** for gray paths, after Envoy's outlier detection
  (Envoy Project, "Outlier detection", 2024,
  https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/outlier):
  a path whose ``fixed`` latency (the average of latency less the wire time
  of its own bytes and of the bytes in flight ahead of it, so not the queue
  on its own wire; with no bandwidth modelled, the latency) exceeds
  ``eject_ratio`` x the tier's lower median ``base`` is taken out for
  ``hold`` seconds, doubling (up to 64 x) each time the same path is ejected
  again; at most half the tier at once for latency (Envoy's
  ``max_ejection_percent``, at least one path). ``fixed`` <= ``base``: a
  path is judged at its best against the tier as it is. A path ejected for
  latency comes back early (in slow start) once its ``fixed`` is within
  ``eject_ratio`` x the median again (of two paths, the other one's
  ``base``): the tier became as slow, as when a shared port fills after a
  path was ejected at start-up; REJOIN (0.8) of that limit, a margin so that
  a path near it does not churn; a ``readmission`` event with ``early``
  says so. A path that loses an attempt (aborted, failed), or that is busy
  with nothing back for STALL (10) x its expected latency (and STALL_FLOOR,
  2 ms), is ejected at once; attempts it loses while ejected add no strike.
* **Slow-start re-admission**: a path back from ejection, or up after being
  down, is measured afresh and takes one I/O at a time until ``slow_start``
  of them have completed within ``eject_ratio`` x the median (Envoy's slow
  start mode), so a flapping path costs one I/O, not a queue.
* **Availability first**: when every path of the tier is ejected, or in
  slow start with an I/O in flight, the least-cost one is used anyway (slow
  start is then not enforced: availability comes first).

Assumptions, and choices where no source decides:

* Bytes and I/Os in flight are this device's on the path (``v.out_bytes``,
  ``v.out``), as dm's selectors count them; reads and writes share one
  bandwidth figure (the wire is full duplex; the term is an estimate). A
  path with no bandwidth modelled (0) has no transfer term, and ``ahead``
  is its count of I/Os in flight (the slope then has no floor of 1).
* Samples count fully in the averages (no clip) until MIN_SAMPLES; after
  that a sample counts at most TAIL_CLIP (4) x the path's ``base``: a rare
  outlier (a TCP retransmission timeout) is a loss, not a spread; this
  underestimates the spread of a heavy-tailed path and lets ``base`` follow
  a path turning 10 x slower in steps of at most 4 x.
* The slope is shrunk (RIDGE = 0.05 of the mean square of the wire time
  ahead added to its variance): while the bytes ahead barely vary, their
  spread says little about the slope, which stays near its floor.
* A path with no sample yet (at the start, after an ejection or after it
  came back up) costs the best known ``base`` of the tier (optimistic), and
  when idle for a probe interval it is probed like any other, so every
  path is tried; its first sample replaces it.
* The stall test runs when an I/O is placed: if every I/O of the device
  is stuck on one silent path, nothing is placed and the host's
  ``io_timeout`` (or its notice of the path going down) ends them, not
  guard.
* Averages count after MIN_SAMPLES (4) samples (for the median, and to
  eject a path); the median needs 2 such paths (of an even count, the lower
  middle one), is worked out again every ``decay`` x REFRESH (1/8) (and
  after an ejection), not per I/O.
* A busy path with nothing back for longer than its estimate costs the time
  since its last completion instead.
* Ties go to the first path after the one used last (a rotation).
* ``hold``, ``decay`` and ``probe`` are simulated seconds; strikes never
  decay within a run.
* Not seen by any host: a queue it shares with other hosts (a target port
  fanned in from 12 hosts) grows with their load, not its own bytes ahead,
  so guard, like any per-host latency minimiser, settles where the paths'
  latencies are equal (a Wardrop equilibrium), not where the hosts together
  do best (scale-12-hosts-two-target-ports).
"""

from __future__ import annotations

import math

import numpy as np

from .framework.adapter import policy_class
from .framework.define import (
    Event,
    EventData,
    Param,
    PolicyDef,
    Snapshot,
    compiled,
    compiled_inline,
    per_io,
    per_path,
)
from .framework.kernel import log_event, working_set
from .guard_common import (
    EJECTION_STATE,
    EV_READMIT,
    HOLD,
    MAX_EJECTED,
    MIN_SAMPLES,
    READMISSION_STATE,
    SLOW_START,
    STALL,
    STALL_FLOOR,
    WHY_LATENCY,
    WHY_LOST,
    WHY_STALL,
    best_average,
    config_current,
    eject_event,
    event_latency_us,
    event_path,
    guard_path_change,
    hold_out,
    lost_now,
    reference_latency,
    slow_start_step,
    tier_mask,
)
from .selectors import USE_ANO

__all__ = ["GUARD", "Guard"]

TAIL_CLIP = 4.0  # after MIN_SAMPLES, a sample counts at most 4 x the path's average (average, spread and slope)
PROBE_SPREAD = 20.0  # a path k x slower than the tier's best is probed k x less often (20 x at most)
REMOTE = 50e-6  # seconds a completion on the far NUMA node costs at a distance ratio of 2 (numa=1): assumed, pathsel's own
REJOIN = 0.8  # a path ejected for latency comes back early below 0.8 x the ejection limit: a margin, so it does not churn
RIDGE = 0.05  # the slope's shrinkage: a spread of what is ahead under ~20 % of its size says little


@compiled_inline
def wire_slope(v, st, d, k):
    """Seconds of latency per second of wire time ahead: the learnt slope, at least 1 where bandwidth is modelled
    (bytes ahead on the path's own link take at least their transfer time; a shared link behind it, more)."""
    return max(st.slope[d, k], 1.0) if v.p_bw[v.d_paths[d, k]] > 0.0 else st.slope[d, k]


@compiled_inline
def intercept(v, st, d, k):
    """The path's latency with its own queue taken out: the regression's value at nothing ahead, within [0, base]."""
    return min(max(st.base[d, k] - wire_slope(v, st, d, k) * st.nbar[d, k], 0.0), st.base[d, k])


@compiled_inline
def fixed_part(st, d, k):
    """What ejection judges: the average of latency less the wire time of every byte that was in flight ahead of
    each I/O and of its own (an underestimate on a busy path, so queueing it caused never ejects it)."""
    return st.fixed[d, k]


@compiled_inline
def wire(v, p):
    """The wire time of the path's bytes in flight (0 where no bandwidth is modelled)."""
    bw = v.p_bw[p]
    return v.out_bytes[p] / bw if bw > 0.0 else 0.0


@compiled_inline
def ahead(v, p):
    """What is ahead of an I/O placed on path p now: the wire time of its bytes in flight (seconds), or where no
    bandwidth is modelled its I/Os in flight (a count)."""
    bw = v.p_bw[p]
    return v.out_bytes[p] / bw if bw > 0.0 else float(v.out[p])


@compiled
def eject(v, st, d, k, now, why):
    st.why[d, k] = why  # an ejection for latency may end early (guard_select); the others serve their hold
    hold_out(v, st, d, k, now, why, st.fixed[d, k])


@compiled
def guard_select(v, st, d, slot):
    n = working_set(v, d, st.use_ano != 0, st.tmp)
    if n == 0:
        return -1
    now = v.clock[0]
    ejected = 0
    for i in range(n):
        k = st.tmp[i]
        lost = lost_now(v, st, d, k)
        if lost > st.lost[d, k]:  # a lost attempt ejects at once (one strike, not one per attempt a burst loses)
            st.lost[d, k] = lost
            if st.until[d, k] <= now:
                eject(v, st, d, k, now, WHY_LOST)
        elif (
            st.until[d, k] <= now
            and v.out[v.d_paths[d, k]] > 0
            and st.samples[d, k] > 0
            and now - st.progress[d, k] > STALL * (st.base[d, k] + wire(v, v.d_paths[d, k]))
            and now - st.progress[d, k] > STALL_FLOOR
        ):
            eject(v, st, d, k, now, WHY_STALL)  # busy, and nothing back for many times its usual latency
        if st.until[d, k] > now:
            ejected += 1
    # the lower median base (its own transfer time taken out, the wait behind others' bytes left in); ejection
    # compares a path's fixed with it (also the wait behind bytes ahead taken out, so never above its base): a path is
    # judged at its best against the tier as it is
    ref = reference_latency(v, st, d, n, now, st.base)
    best = best_average(v, st, d, n, now, st.base)
    back = ref if ref > 0.0 else best  # of two paths with one out: the other one's
    if back > 0.0 and ejected > 0:  # ejected for latency, but the tier has since become as slow: back (slow start)
        for i in range(n):
            k = st.tmp[i]
            if st.until[d, k] > now and st.why[d, k] == WHY_LATENCY and st.fixed[d, k] <= REJOIN * back * st.eject_ratio:
                st.until[d, k] = now
                st.ref_at[d] = -math.inf
                ejected -= 1
                e = log_event(v, d, EV_READMIT, k, st.strikes[d, k], 1)  # early: back in slow start
                v.ev_mask[e, k] = 1
                v.ev_val[e, k] = st.fixed[d, k]
    room = max(np.int64(n * MAX_EJECTED), 1) - ejected  # Envoy's max_ejection_percent, at least one path
    limit = ref * st.eject_ratio
    size = v.s_size[slot]
    node = v.s_node[slot]
    np_ = tier_mask(v, st, d, n)
    start = st.last[d] + 1
    pick = -1
    pick_cost = math.inf
    fallback = -1
    fallback_cost = math.inf
    for j in range(np_):  # from the path after the last one used: ties rotate
        k = (start + j) % np_
        if st.mask[k] == 0:
            continue
        p = v.d_paths[d, k]
        busy = v.out[p]
        if st.samples[d, k] > 0:
            cost = intercept(v, st, d, k) + wire_slope(v, st, d, k) * ahead(v, p) + st.tail_z * math.sqrt(st.var[d, k])
        else:
            cost = best
        if busy > 0:  # busy with nothing back for longer than that: the time since is the better estimate
            cost = max(cost, now - st.progress[d, k])
        bw = v.p_bw[p]
        if bw > 0.0:
            cost += size / bw
        if node >= 0 and st.numa > 0.0:
            here = v.numa_dist[d, node, node]
            there = v.numa_dist[d, node, v.p_node[p]]
            if here > 0 and there > here:  # added, not multiplied: a remote completion's CPU cost is per I/O, not per queued byte
                cost += st.numa * (there / here - 1.0) * REMOTE
        if cost < fallback_cost:
            fallback_cost = cost
            fallback = k
        if st.until[d, k] > now:
            continue
        if st.samples[d, k] >= MIN_SAMPLES and ref > 0.0 and fixed_part(st, d, k) > limit and room > 0:
            eject(v, st, d, k, now, WHY_LATENCY)
            room -= 1
            continue
        if st.ramp[d, k] > 0 and busy > 0:  # slow start: one at a time
            continue
        if busy == 0 and now - st.progress[d, k] > st.probe * min(max(st.base[d, k] / max(best, 1e-9), 1.0), PROBE_SPREAD):
            cost = -1.0  # idle and unheard of for a probe interval: this I/O refreshes its estimate
        if cost < pick_cost:
            pick_cost = cost
            pick = k
    if pick < 0:
        pick = fallback  # every path of the tier is out: the least bad one
    elif pick_cost < 0.0:
        st.progress[d, pick] = now  # one probe per interval for the path probed (start() sets it again)
    st.last[d] = pick
    return pick


@compiled
def guard_start(v, st, d, k, slot):
    p = v.d_paths[d, k]
    st.sent[d, k] += 1
    bw = v.p_bw[p]  # what was ahead of it (the engine counts this I/O already)
    st.nin[slot] = (v.out_bytes[p] - v.s_size[slot]) / bw if bw > 0.0 else float(v.out[p] - 1)
    if v.out[p] == 1:  # idle until now: progress is measured from here
        st.progress[d, k] = v.clock[0]


@compiled
def guard_complete(v, st, d, k, slot, latency):
    now = v.clock[0]
    p = v.d_paths[d, k]
    st.done[d, k] += 1
    bw = v.p_bw[p]
    x = latency
    if bw > 0.0:
        x = max(latency - v.s_size[slot] / bw, 0.0)  # its own transfer taken out
    nin = max(st.nin[slot], 0.0)
    fx = max(x - nin, 0.0) if bw > 0.0 else x  # and the wire time of the bytes ahead of it: what ejection judges
    st.progress[d, k] = now
    if st.samples[d, k] == 0:
        st.base[d, k] = x
        st.fixed[d, k] = fx
        st.nbar[d, k] = nin
        st.nn[d, k] = nin * nin
        st.nx[d, k] = nin * x
        st.var[d, k] = 0.0
        st.slope[d, k] = 0.0
    else:
        w = math.exp(-max(now - st.stamp[d, k], 0.0) / st.decay)
        if st.samples[d, k] >= MIN_SAMPLES:  # a rare outlier (a TCP retransmission timeout) is a loss, not a spread
            x = min(x, TAIL_CLIP * st.base[d, k])
        dev = x - st.base[d, k]
        st.var[d, k] = w * (st.var[d, k] + (1.0 - w) * dev * dev)  # the EWMA of squared deviations (West, 1979)
        st.base[d, k] = st.base[d, k] * w + x * (1.0 - w)
        st.fixed[d, k] = st.fixed[d, k] * w + min(fx, x) * (1.0 - w)
        st.nbar[d, k] = st.nbar[d, k] * w + nin * (1.0 - w)
        st.nn[d, k] = st.nn[d, k] * w + nin * nin * (1.0 - w)
        st.nx[d, k] = st.nx[d, k] * w + nin * x * (1.0 - w)
        cov = st.nx[d, k] - st.nbar[d, k] * st.base[d, k]
        var_n = max(st.nn[d, k] - st.nbar[d, k] * st.nbar[d, k], 0.0)
        st.slope[d, k] = max(cov / (var_n + RIDGE * st.nn[d, k] + 1e-18), 0.0)
    st.stamp[d, k] = now
    st.samples[d, k] += 1
    slow_start_step(v, st, d, k, now, st.base, fixed_part(st, d, k), st.base[d, k])


def _readmit_event(e: EventData) -> dict:
    return {
        "path": event_path(e),
        "strikes": int(e.a),
        "early": bool(e.b),  # back in slow start because the tier became as slow, before its hold ended
        "latency_us": event_latency_us(e),
    }


def _config(s: Snapshot) -> str:
    p = s.params
    text = (
        f"{{policy=guard,decay={p['decay']:g}s,ejectRatio={p['eject_ratio']:g},hold={p['hold']:g}s,slowStart={p['slow_start']},"
        f"tailZ={p['tail_z']:g},probe={p['probe']:g}s,numa={p['numa']:g},useANO={p['use_ano']}"
    )
    return config_current(s, text, "base", "base_us")


GUARD = PolicyDef(
    "guard",
    "pathsel's own: ALUA tiers, least expected completion time of this I/O (size, bandwidth, tail), idle paths probed, gray paths ejected",
    "pathsel's design for the league ([league.md](league.md)), redesigned for issue 37 (the old one: `guard:v1`); after dm service-time, Finagle's peak EWMA and Envoy's outlier detection",
    select=guard_select,
    start=guard_start,
    complete=guard_complete,
    path_change=guard_path_change,
    params=(
        Param("decay", 0.05, float, "seconds: the time constant of the latency averages", 0.001, 3600.0, shown="0.05 s [0.001 … 3600]"),
        Param("eject_ratio", 3.0, float, "eject a path whose fixed latency exceeds this multiple of the tier's median", 1.05, 1000.0),
        HOLD,
        SLOW_START,
        Param("tail_z", 0.0, float, "standard deviations of latency added to a path's cost (0, the default: the mean only)", 0.0, 10.0),
        Param("probe", 0.05, float, "seconds: an idle path unheard of this long takes the next I/O", 0.001, 3600.0, shown="0.05 s [0.001 … 3600]"),
        Param("numa", 1.0, float, "weight of the NUMA distance: a remote path costs numa x (distance ratio - 1) x 50 us more per I/O", 0.0, 10.0),
        USE_ANO,
    ),
    state=(
        per_path("base", "f8", 0.0),
        per_path("fixed", "f8", 0.0),
        per_path("var", "f8", 0.0),
        per_path("slope", "f8", 0.0),
        per_path("nbar", "f8", 0.0),
        per_path("nn", "f8", 0.0),
        per_path("nx", "f8", 0.0),
        per_path("stamp", "f8", 0.0),
        per_path("samples"),
        per_path("progress", "f8", 0.0),
        per_io("nin", "f8", 0.0),
        *EJECTION_STATE,
        per_path("why"),
        *READMISSION_STATE,
    ),
    config_string=_config,
    events=(Event("ejection", eject_event), Event("readmission", _readmit_event)),
    class_name="Guard",
    counts="per path: time-weighted averages of latency (own transfer time taken out; also the wire time ahead taken out, for ejection), its variance and its slope against the wire time of the bytes in flight ahead; attempts sent, completed and lost, time of last progress, ejection deadline, reason and strikes; this device's I/Os and bytes in flight",
    notes="ALUA tier first; each I/O to the least expected completion time on the path: latency with nothing ahead + s × wire time of the bytes in flight (s the learnt rise of latency per second of wire ahead, at least 1) + this I/O's transfer time + `tail_z` × the standard deviation (0 by default) + `numa` × (distance ratio − 1) × 50 µs for a remote adapter; ties rotate; an idle path unheard of for `probe` (longer for a slower path, 20 × at most) takes the next I/O. A path whose latency less the wire time ahead exceeds `eject_ratio` × the tier's median (at most half the tier), one that lost an attempt, or one stalled for 10 × its latency is ejected for `hold` (doubling per strike, ×64 at most; back early once the tier is as slow), then re-admitted one I/O at a time for `slow_start` I/Os. All paths out: the least-cost one anyway. *Assumed:* see the module docstring (pathsel/policies/guard.py).",
)
Guard = policy_class(GUARD, "Guard", module=__name__)
