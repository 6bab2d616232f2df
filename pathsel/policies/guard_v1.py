"""``guard:v1``: guard as of pathsel 0.x before issue 37, kept by name for comparison.

The selector below is, byte for byte in behaviour, what ``guard`` was before
its redesign (issue 37: size and bandwidth, decay and probes, measured
queueing, tails; see pathsel/policies/guard.py). Its text as it was:

``guard``: ALUA tiers, least expected wait, gray paths ejected and slowly re-admitted.

Designed for the policy league (docs/league.md): across good days and bad
ones, every shipped selector loses somewhere. Round robin and the
queue-depth selectors keep feeding a path that is slow but up (a gray
failure); latency round robin and HPP's LB-Latency see it only at their next
evaluation (minutes apart); failover selectors leave paths idle; dm's
historical-service-time piles onto one path and loses most when that path
dies. ``guard`` takes the part of each that worked:

* **ALUA/ANA tiers first** (every OS): the working set is the usable AO
  paths, ANO only when no AO path is usable (or always with ``use_ano=1``).
* **Least expected wait**: each I/O goes to the path with the least
  ``service x (in flight + 1)``, where ``service`` is an average of the
  path's *serialised* service time (completion minus the later of the I/O's
  start and the path's previous completion), the estimate of Linux
  dm-multipath's historical-service-time (``drivers/md/dm-ps-historical-
  service-time.c``, Khazhismel Kumykov, 2020,
  https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/md/dm-ps-historical-service-time.c).
  A busy path with nothing back for longer than that counts the time since
  its last completion instead, so a path that stops answering stops
  attracting I/O at once. Averages are over time, not samples
  (``w = exp(-dt / decay)``), as Finagle's peak EWMA (Twitter, Finagle,
  ``PeakEwma.scala``, https://github.com/twitter/finagle).
* **Outlier ejection** for gray paths, after Envoy's outlier detection
  (Envoy Project, "Outlier detection", 2024,
  https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/outlier):
  a path whose average latency (normalised to 4 KiB as latency round robin
  does) exceeds ``eject_ratio`` x the tier's (lower) median is taken out for
  ``hold`` seconds, doubling (up to 64 x) each time the same path is
  ejected again; at most half the tier at once for latency (Envoy's
  ``max_ejection_percent``, at least one path). A path that loses an attempt
  (aborted, failed), or that is busy with nothing back for 10 x its average
  latency (and 2 ms), is ejected at once. The median, not the best, so a
  path merely loaded more than its peers is not thrown out; the lower
  median, so that of two paths the slow one can be.
* **Slow-start re-admission**: a path back from ejection, or up after being
  down, is measured afresh and takes one I/O at a time until ``slow_start``
  of them have completed within ``eject_ratio`` x the median (Envoy's slow
  start mode), so a flapping path costs one I/O, not a queue.
* **Availability first**: when every path of the tier is ejected, the
  least-cost one is used anyway.

Assumptions, and choices where no source decides:

* ``in flight`` is this device's I/Os on the path (``v.out``), as dm's
  selectors count them; lost attempts are seen as ``starts - completions -
  in flight`` rising on a path.
* A path with no sample yet costs the best known service average
  (optimistic), so every path is tried; its first sample replaces it.
* Averages count after 4 samples (for the median, and to eject a path);
  the median needs 2 such paths (of an even count, the lower middle one).
* The median is worked out again every ``decay`` / 8 (and after an
  ejection), not for every I/O: a tier of 64 paths would otherwise cost a
  sort per I/O.
* Ties go to the first path after the one used last (a rotation), so
  identical idle paths share the load.
* ``hold`` and ``decay`` are simulated seconds; strikes never decay within
  a run.
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
    per_io,
    per_path,
)
from .framework.kernel import working_set
from .guard_common import (
    EJECTION_STATE,
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

__all__ = ["GUARD_V1", "GuardV1"]


@compiled
def v1_eject(v, st, d, k, now, why):
    hold_out(v, st, d, k, now, why, st.ewma[d, k])


@compiled
def guard_v1_select(v, st, d, slot):
    n = working_set(v, d, st.use_ano != 0, st.tmp)
    if n == 0:
        return -1
    now = v.clock[0]
    ejected = 0
    for i in range(n):
        k = st.tmp[i]
        lost = lost_now(v, st, d, k)
        if lost > st.lost[d, k]:  # a lost attempt ejects at once
            st.lost[d, k] = lost
            v1_eject(v, st, d, k, now, WHY_LOST)
        elif (
            st.until[d, k] <= now
            and v.out[v.d_paths[d, k]] > 0
            and st.samples[d, k] > 0
            and now - st.progress[d, k] > STALL * st.ewma[d, k]
            and now - st.progress[d, k] > STALL_FLOOR
        ):
            v1_eject(v, st, d, k, now, WHY_STALL)  # busy, and nothing back for many times its usual latency
        if st.until[d, k] > now:
            ejected += 1
    ref = reference_latency(v, st, d, n, now, st.ewma)  # the lower median latency average
    room = max(np.int64(n * MAX_EJECTED), 1) - ejected  # Envoy's max_ejection_percent, at least one path
    best_svc = best_average(v, st, d, n, now, st.svc)  # the least service average
    limit = ref * st.eject_ratio
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
        svc = st.svc[d, k] if st.samples[d, k] > 0 else best_svc
        if v.out[p] > 0:  # busy with nothing back for longer than its service time: that time is the better estimate
            svc = max(svc, now - st.progress[d, k])
        cost = svc * (v.out[p] + 1)
        if cost < fallback_cost:
            fallback_cost = cost
            fallback = k
        if st.until[d, k] > now:
            continue
        if st.samples[d, k] >= MIN_SAMPLES and ref > 0.0 and st.ewma[d, k] > limit and room > 0:
            v1_eject(v, st, d, k, now, WHY_LATENCY)
            room -= 1
            continue
        if st.ramp[d, k] > 0 and v.out[p] > 0:  # slow start: one at a time
            continue
        if cost < pick_cost:
            pick_cost = cost
            pick = k
    if pick < 0:
        pick = fallback  # every path of the tier is out: the least bad one
    st.last[d] = pick
    return pick


@compiled
def guard_v1_start(v, st, d, k, slot):
    st.sent[d, k] += 1
    st.t0[slot] = v.clock[0]
    if v.out[v.d_paths[d, k]] == 1:  # idle until now: progress is measured from here
        st.progress[d, k] = v.clock[0]


@compiled
def guard_v1_complete(v, st, d, k, slot, latency):
    now = v.clock[0]
    p = v.d_paths[d, k]
    st.done[d, k] += 1
    bw = v.p_bw[p]
    lat = latency
    if bw > 0.0:
        lat = max(latency - (v.s_size[slot] - 4096) / bw, 0.0)  # as latency RR: as if it were 4 KiB
    svc = now - max(st.t0[slot], st.last_done[d, k])  # dm-historical-service-time's serialised service time
    st.last_done[d, k] = now
    st.progress[d, k] = now
    if st.samples[d, k] == 0:
        st.ewma[d, k] = lat
        st.svc[d, k] = svc
    else:
        w = math.exp(-max(now - st.stamp[d, k], 0.0) / st.decay)
        st.ewma[d, k] = st.ewma[d, k] * w + lat * (1.0 - w)
        st.svc[d, k] = st.svc[d, k] * w + svc * (1.0 - w)
    st.stamp[d, k] = now
    st.samples[d, k] += 1
    slow_start_step(v, st, d, k, now, st.ewma, st.ewma[d, k], st.ewma[d, k])


def _readmit_event(e: EventData) -> dict:
    return {"path": event_path(e), "strikes": int(e.a), "latency_us": event_latency_us(e)}


def _config(s: Snapshot) -> str:
    p = s.params
    text = f"{{policy=guard:v1,decay={p['decay']:g}s,ejectRatio={p['eject_ratio']:g},hold={p['hold']:g}s,slowStart={p['slow_start']},useANO={p['use_ano']}"
    return config_current(s, text, "ewma", "ewma_us")


GUARD_V1 = PolicyDef(
    "guard:v1",
    "guard as of pathsel 0.x before issue 37: ALUA tiers, least service time x (in flight + 1), gray paths ejected and slowly re-admitted",
    "pathsel's design for the league ([league.md](league.md)); after dm historical-service-time, Finagle's peak EWMA and Envoy's outlier detection",
    select=guard_v1_select,
    start=guard_v1_start,
    complete=guard_v1_complete,
    path_change=guard_path_change,
    params=(
        Param("decay", 0.05, float, "seconds: the time constant of the service and latency averages", 0.001, 3600.0, shown="0.05 s [0.001 … 3600]"),
        Param("eject_ratio", 3.0, float, "eject a path whose latency average exceeds this multiple of the tier's median", 1.05, 1000.0),
        HOLD,
        SLOW_START,
        USE_ANO,
    ),
    state=(
        per_path("ewma", "f8", 0.0),
        per_path("svc", "f8", 0.0),
        per_path("stamp", "f8", 0.0),
        per_path("samples"),
        per_path("last_done", "f8", 0.0),
        per_path("progress", "f8", 0.0),
        per_io("t0", "f8", 0.0),
        *EJECTION_STATE,
        *READMISSION_STATE,
    ),
    config_string=_config,
    events=(Event("ejection", eject_event), Event("readmission", _readmit_event)),
    class_name="GuardV1",
    counts="per path: time-weighted averages of serialised service time and of latency (normalised to 4 KiB), attempts sent, completed and lost, time of last progress, ejection deadline and strikes; this device's I/Os in flight",
    notes="ALUA tier first; each I/O to the least serialised service time × (in flight + 1) (dm historical-service-time's estimate, time-averaged), ties rotating; a busy path with nothing back counts the time since. A path over `eject_ratio` × the tier's median latency (at most half the tier), one that lost an attempt, or one stalled for 10 × its latency is ejected for `hold` (doubling per strike, ×64 at most), then measured afresh and re-admitted one I/O at a time for `slow_start` I/Os. All paths out: the least-cost one anyway. *Assumed:* see the module docstring (pathsel/policies/guard_v1.py).",
)
GuardV1 = policy_class(GUARD_V1, "GuardV1", module=__name__)
