"""VMware ESXi NMP path selection plug-ins: VMW_PSP_FIXED, VMW_PSP_MRU, VMW_PSP_RR (iops, bytes, latency).

Sources: VMware, *vSphere Storage*, "Path Selection Plug-Ins and Policies"
and "Change Default Parameters for Latency Round Robin" (6.7 U1, 2018, and
7.0, 2020; https://docs.vmware.com/en/VMware-vSphere/7.0/com.vmware.vsphere.storage.doc/GUID-1940AE9E-04CF-40BE-BB71-398621F0642E.html:
the mechanism "considers I/O bandwidth and path latency"; 7.0 adds that when
"the workload is not high enough, the system might not use some paths");
``esxcli storage nmp psp roundrobin deviceconfig set`` (parameter names,
defaults and ranges); Broadcom, KB 371368, "Identify Enhanced Round Robin Load
Balancing (Latency Based PSP)", updated 2025,
https://knowledge.broadcom.com/external/article/371368/identify-enhanced-round-robin-load-balan.html (latency round robin
"actively monitors paths for latency and Outstanding IO" and selects "the
optimal path(s)"); Cody Hosterman, "Latency-based PSP in ESXi 6.7 Update 1:
A test drive", 2018, https://www.codyhosterman.com/2018/10/latency-based-psp-in-esxi-6-7-update-1-a-test-drive/
for the observed behaviour of the latency policy.

Assumptions where the sources are silent (each is a parameter or stated here):

* Path order is the scenario's order, standing in for ESXi's runtime-name order.
* RR starts on the first working path; when the current path leaves the
  working set (down, or ANO while AO paths exist) the cursor moves to the next
  working path after it and the I/O count restarts.
* FIXED with no ``preferred`` picks the first AO path (ESXi picks "the first
  working path discovered"); its alternate is the first usable AO path, else
  ANO, kept until the preferred path returns. An explicit preference ignores
  AO/ANO: FIXED uses its path in either state.
* MRU keeps its path until it fails; under ALUA it leaves an ANO path for an
  AO one as soon as one is usable.
* Latency RR (VMware documents only its parameters): see :data:`LATENCY`.
"""

from __future__ import annotations

import math

import numpy as np

from .define import (
    INT32_MAX,
    Event,
    EventData,
    Param,
    PolicyDef,
    Setup,
    Snapshot,
    compiled,
    compiled_inline,
    per_device,
    per_io,
    per_path,
    scalar,
    scratch,
)
from .kernel import AO, EV_POLICY, log_event, usable, working_set, ws_member, ws_next, ws_tier

__all__ = ["FIXED", "MRU", "RR", "LATENCY", "fixed_preferred", "size_normalised", "SIZE_REF", "USE_ANO", "VARIANT", "TOLERANCE", "CUTOFF"]

SIZE_REF = 4096  # latency RR compares paths as if every I/O were 4 KiB

USE_ANO = Param("use_ano", 0, int, "1 adds ANO paths to the set the policy uses (esxcli useANO)", 0, 1, shown="0 [0, 1]")
VARIANT = Param(
    "variant",
    "lqd",
    str,
    "pathsel assumption: min-set (rotate over paths within tolerance of the best), score (per I/O argmin latency x (pending+1)) "
    "or lqd (drop paths over cutoff x the best, then score over the rest)",
    choices=("min-set", "score", "lqd"),
    shown="lqd [lqd, min-set, score] *(pathsel)*",
)
TOLERANCE = Param(
    "tolerance",
    0.1,
    float,
    "pathsel assumption (min-set): keep paths whose latency is within this fraction of the best",
    0.0,
    100.0,
    shown="0.1 [0 … 100] *(pathsel)*",
)
CUTOFF = Param(
    "cutoff",
    2.0,
    float,
    "pathsel assumption (lqd): exclude paths whose latency exceeds this multiple of the best",
    1.0,
    100.0,
    shown="2 [1 … 100] *(pathsel)*",
)


def fixed_preferred(paths, preferred: str = ""):
    """The path FIXED prefers: the one named, else the first AO path, else the first path.

    ``paths`` are anything with ``name`` and ``alua`` (views, compiled paths), so
    the policy and the analytic model share this one rule.
    """
    named = [p for p in paths if p.name == preferred]
    ao = [p for p in paths if p.alua == "AO"]
    return named[0] if named else (ao[0] if ao else paths[0])


def size_normalised(latency: float, size: float, bandwidth: float | None) -> float:
    """Latency RR's size weighting: take off the transfer time beyond a 4 KiB I/O on the path's link."""
    if bandwidth:
        return max(latency - (size - SIZE_REF) / bandwidth, 0.0)
    return latency


def _name(s: Snapshot, k: int) -> str:
    return s.names[k] if k >= 0 else "none"


# -- VMW_PSP_FIXED ----------------------------------------------------------------------
@compiled_inline
def fixed_select(v, st, d, slot):
    pref = st.pref[d]
    if usable(v, v.d_paths[d, pref]):
        st.cur[d] = pref
    elif st.cur[d] < 0 or not usable(v, v.d_paths[d, st.cur[d]]):
        n = working_set(v, d, False, st.tmp)
        st.cur[d] = st.tmp[0] if n > 0 else -1
    return st.cur[d]


class _Named:
    def __init__(self, name: str, alua: str) -> None:
        self.name, self.alua = name, alua


def fixed_setup(s: Setup) -> None:
    """The preferred path of each device: named by ``preferred``, else its first AO path."""
    for d, dev in enumerate(s.devices):
        named = [_Named(n, a) for n, a in zip(dev.names, dev.alua)]
        s.state.pref[d] = named.index(fixed_preferred(named, s.params.get("preferred", "")))


FIXED = PolicyDef(
    "fixed",
    "VMW_PSP_FIXED: always the preferred path; another path only while it is down; returns to it",
    'VMW_PSP_FIXED; vSphere Storage, "Path Selection Plug-Ins and Policies"',
    select=fixed_select,
    params=(
        Param(
            "preferred",
            "",
            str,
            "runtime name of the preferred path (default: the first AO path)",
            shown="first AO path at the start [a path name of the scenario]",
        ),
    ),
    aliases=("VMW_PSP_FIXED",),
    state=(per_device("pref", init=0), per_device("cur", init=-1), scratch("tmp")),
    setup=fixed_setup,
    class_name="Fixed",
    config_string=lambda s: f"{{preferred={s.names[int(s.state.pref[s.d])]};current={_name(s, int(s.state.cur[s.d]))}}}",
    counts="nothing: one path at a time",
    notes="Uses the preferred path whenever it is up, AO or ANO (an explicit preference ignores ALUA). While it is down: the first path of the ALUA working set, kept until the preferred path returns (fails back) or the alternate fails.",
)


# -- VMW_PSP_MRU ------------------------------------------------------------------------
@compiled_inline
def mru_select(v, st, d, slot):
    cur = st.cur[d]
    if cur >= 0 and usable(v, v.d_paths[d, cur]):
        if v.alua[v.d_paths[d, cur]] == AO:
            return cur
        any_ao = False
        for k in range(v.d_np[d]):
            p = v.d_paths[d, k]
            if usable(v, p) and v.alua[p] == AO:
                any_ao = True
        if not any_ao:
            return cur
    n = working_set(v, d, False, st.tmp)
    st.cur[d] = st.tmp[0] if n > 0 else -1
    return st.cur[d]


MRU = PolicyDef(
    "mru",
    "VMW_PSP_MRU: keep the current path until it fails; never fails back",
    "VMW_PSP_MRU; same source",
    select=mru_select,
    aliases=("VMW_PSP_MRU",),
    state=(per_device("cur", init=-1), scratch("tmp")),
    class_name="MostRecentlyUsed",
    config_string=lambda s: f"{{Current Path={_name(s, int(s.state.cur[s.d]))}}}",
    counts="nothing: one path at a time",
    notes="Keeps its path until it fails; never fails back to the original path. Under ALUA it leaves an ANO path for the first usable AO path as soon as there is one. Starts on the first working path.",
)


# -- VMW_PSP_RR --type=iops|bytes --------------------------------------------------------
# One cursor per device over the working paths: every issued I/O goes to the cursor path;
# after ``iops`` I/Os (or once ``bytes`` bytes have been sent) the next I/O goes to the
# next working path. Working paths: the usable AO paths, ANO only when no AO path is
# left, or both with use_ano=1. The working set is never listed: membership is tested
# for the one or two paths looked at.
@compiled_inline
def rr_select(v, st, d, slot):
    cur = st.cur[d]
    limit = st.iops if st.type == 0 else st.bytes
    tier = ws_tier(v, d, st.use_ano != 0, cur)
    if cur < 0 or not ws_member(v, v.d_paths[d, cur], tier) or st.count[d] >= limit:
        cur = ws_next(v, d, cur, tier)
        if cur < 0:  # an empty working set
            return -1
        st.count[d] = 0
    st.cur[d] = cur
    st.count[d] += 1 if st.type == 0 else v.s_size[slot]
    return cur


def rr_config(s: Snapshot) -> str:
    cur = int(s.state.cur[s.d])
    g = s.paths[cur] if cur >= 0 else None
    p = s.params
    return (
        f"{{policy={p['type']},iops={p['iops']},bytes={p['bytes']},useANO={p['use_ano']}; "
        f"lastPathIndex={cur if cur >= 0 else 0}: NumIOsPending={s.view.out[g] if g is not None else 0},"
        f"numBytesPending={s.view.out_bytes[g] if g is not None else 0}}}"
    )


RR = PolicyDef(
    "rr",
    "VMW_PSP_RR: rotate over the working paths, switching after N I/Os (type=iops) or N bytes (type=bytes)",
    "VMW_PSP_RR `--type=iops` / `--type=bytes`; `esxcli storage nmp psp roundrobin deviceconfig set`",
    select=rr_select,
    params=(
        Param("type", "iops", str, "switch after an I/O count (iops) or a byte count (bytes)", choices=("iops", "bytes")),
        Param("iops", 1000, int, "I/Os sent down a path before switching (--iops)", 1, INT32_MAX),
        Param("bytes", 10485760, int, "bytes sent down a path before switching (--bytes)", 1, INT32_MAX),
        USE_ANO,
    ),
    aliases=("VMW_PSP_RR",),
    state=(per_device("cur", init=-1), per_device("count", init=0)),
    config_string=rr_config,
    class_name="RoundRobin",
    counts="I/Os (or bytes) *issued* on the current path since it became current",
    notes="One cursor per device over the working set (usable AO paths; ANO only when no AO path is usable, or always with `use_ano=1`). After `iops` I/Os, or once `bytes` bytes have been sent, the next I/O goes to the next working path in path order. Starts on the first working path; when the cursor path leaves the working set the next working path after it takes over and the count restarts. `rr:bytes=N` implies `type=bytes`.",
)


# -- VMW_PSP_RR --type=latency -------------------------------------------------------------
# VMware documents the parameters and the intent ("considers I/O bandwidth and path
# latency", "paths exhibiting higher latency are excluded until the next sampling period
# proves otherwise"), not the algorithm. pathsel's reading; every step is an assumption
# with a parameter or a note:
#
# 1. Sampling window. At the start and then latency_eval_time ms after each evaluation, a
#    window opens over the candidate paths (the working set). The next
#    num_sampling_cycles x (number of candidates) issued I/Os are sample I/Os sent round
#    robin, one per candidate per cycle (ESXi's curSamplingCycle; HPP's "sample IOs issued
#    on each path"); a candidate that has left the working set meanwhile is skipped. I/Os
#    issued after the samples and before the last sample completes go to the paths in use
#    before the window (all candidates at first).
# 2. Size weighting. A sample's latency is normalised to a 4 KiB I/O by taking off the
#    extra transfer time on the path's link: latency - (size - 4096) / bandwidth (nothing
#    when the link speed is not modelled).
# 3. Evaluation, when every sample has completed: the average normalised latency of each
#    candidate, then by variant: lqd (default) keeps the paths at most cutoff x the best
#    and sends each I/O to the argmin of average x (pending + 1) among them, ties to the
#    earlier path (KB 371368: latency *and* outstanding I/O, "optimal path(s)"); min-set
#    keeps the paths within tolerance of the best and rotates over them one I/O at a time;
#    score keeps every sampled path and dispatches as lqd does. The averages stay fixed
#    until the next evaluation. Why lqd and cutoff 2: docs/model.md (a ratio wide enough
#    that 16-sample noise does not drop equal paths, narrow enough to drop seed 004's
#    remote paths at 2.6 x the local ones).
# 4. A path that leaves the working set leaves the sets at once and is not evaluated; if
#    none of the chosen paths is in the working set a new window opens at once.
#
# A sample is the I/O in a slot while ``sample_path[slot]`` holds its path and
# ``sample_win[slot]`` the device's current window (``win[d]``): opening a window forgets
# the samples of the last one still in flight.
EV_SAMPLING, EV_EVALUATION = EV_POLICY, EV_POLICY + 1


@compiled
def latency_working_mask(v, st, d):
    """wmask[k] = 1 for the device's paths in the working set; returns the count (the set in tmp)."""
    n = working_set(v, d, st.use_ano != 0, st.tmp)
    for k in range(v.d_np[d]):
        st.wmask[k] = 0
    for i in range(n):
        st.wmask[st.tmp[i]] = 1
    return n


@compiled
def latency_open_window(v, st, d, n):
    st.sampling[d] = 1
    st.ncand[d] = n
    for k in range(v.d_np[d]):
        st.incand[d, k] = 0
    for i in range(n):
        st.cand[d, i] = st.tmp[i]
        st.incand[d, st.tmp[i]] = 1
    st.issued[d] = 0
    st.win[d] += 1  # the samples of the last window still in flight are forgotten
    st.pending[d] = 0
    for k in range(v.d_np[d]):
        st.sums[d, k] = 0.0
        st.counts[d, k] = 0
    e = log_event(v, d, EV_SAMPLING, -1, 0, 0)
    for i in range(n):
        v.ev_mask[e, st.tmp[i]] = 1


@compiled
def latency_sample_path(v, st, d):
    """The next sample target still in the working set (wmask), or -1."""
    nc = st.ncand[d]
    total = st.num_sampling_cycles * nc
    while st.issued[d] < total:
        k = st.cand[d, st.issued[d] % nc]
        st.issued[d] += 1
        if st.wmask[k] == 1:
            return k
    return -1


@compiled
def latency_evaluate(v, st, d):
    now = v.clock[0]
    nc = st.ncand[d]
    latency_working_mask(v, st, d)
    st.sampling[d] = 0
    st.next_eval[d] = now + st.latency_eval_time / 1000.0
    nsampled = 0
    for i in range(nc):
        k = st.cand[d, i]
        if st.counts[d, k] > 0 and st.wmask[k] == 1:
            nsampled += 1
    if nsampled == 0:
        st.nactive[d] = 0
        return
    best = np.inf
    for k in range(v.d_np[d]):
        st.avg[d, k] = np.nan
    for i in range(nc):
        k = st.cand[d, i]
        if st.counts[d, k] > 0 and st.wmask[k] == 1:
            avg = st.sums[d, k] / st.counts[d, k]
            st.avg[d, k] = avg
            if avg < best:
                best = avg
    na = 0
    for i in range(nc):
        k = st.cand[d, i]
        avg = st.avg[d, k]
        if avg == avg:  # sampled
            if st.variant == 0:
                keep = avg <= best * (1.0 + st.tolerance)
            elif st.variant == 2:
                keep = avg <= best * st.cutoff
            else:
                keep = True
            if keep:
                st.active[d, na] = k
                na += 1
    st.nactive[d] = na
    st.rot[d] = 0
    e = log_event(v, d, EV_EVALUATION, -1, 0, 0)
    for i in range(nc):
        k = st.cand[d, i]
        v.ev_mask[e, k] = 2  # a candidate, dropped unless chosen below
        v.ev_val[e, k] = st.avg[d, k]
    for i in range(na):
        v.ev_mask[e, st.active[d, i]] = 1


@compiled_inline
def score_of(avg, pending):
    """Score and lqd's score of a path: average x (pending + 1); an unsampled path (average NaN) scores 0."""
    if avg != avg:
        avg = 0.0
    return avg * (pending + 1)


@compiled_inline
def latency_score(v, st, d, k):
    """:func:`score_of` the device's k-th path."""
    return score_of(st.avg[d, k], v.out[v.d_paths[d, k]])


@compiled_inline
def latency_pick(v, st, d, m):
    """The path for this I/O among the m in tmp2: the lowest score, or the next in rotation."""
    if st.variant != 0 and st.sampling[d] == 0:  # score and lqd
        best_k = -1
        best = 0.0
        for i in range(m):
            k = st.tmp2[i]
            score = latency_score(v, st, d, k)
            if best_k < 0 or score < best:
                best_k = k
                best = score
        k = best_k
    else:
        k = st.tmp2[st.rot[d] % m]
        st.rot[d] += 1
    st.last[d] = k
    return k


@compiled
def latency_select(v, st, d, slot):
    now = v.clock[0]
    if st.sampling[d] == 0 and now < st.next_eval[d]:
        # Between evaluations: the chosen paths still in the working set, without listing
        # the set (the general case below does the same when this finds none).
        tier = ws_tier(v, d, st.use_ano != 0, st.last[d])
        if st.variant != 0:  # score and lqd: latency_pick's lowest score, in one pass over the chosen paths
            best_k = -1
            best = 0.0
            # the device's rows, taken once: every I/O runs this loop over the chosen paths
            active, avgs, paths = st.active[d], st.avg[d], v.d_paths[d]
            for i in range(st.nactive[d]):
                k = active[i]
                p = paths[k]
                if ws_member(v, p, tier):
                    score = score_of(avgs[k], v.out[p])
                    if best_k < 0 or score < best:
                        best_k = k
                        best = score
            if best_k >= 0:
                st.last[d] = best_k
                return best_k
        m = 0
        for i in range(st.nactive[d]):
            k = st.active[d, i]
            if ws_member(v, v.d_paths[d, k], tier):
                st.tmp2[m] = k
                m += 1
        if m > 0:
            return latency_pick(v, st, d, m)
    while True:
        n = latency_working_mask(v, st, d)
        if n == 0:
            return -1
        # in use: the chosen paths still in the working set
        m = 0
        for i in range(st.nactive[d]):
            k = st.active[d, i]
            if st.wmask[k] == 1:
                st.tmp2[m] = k
                m += 1
        if st.sampling[d] == 0 and (now >= st.next_eval[d] or m == 0):
            latency_open_window(v, st, d, n)
        if st.sampling[d] == 1:
            k = latency_sample_path(v, st, d)
            if k >= 0:
                if not (st.sample_path[slot] >= 0 and st.sample_win[slot] == st.win[d]):
                    st.pending[d] += 1  # a retried sample replaces its own
                st.sample_path[slot] = v.d_paths[d, k]
                st.sample_win[slot] = st.win[d]
                st.last[d] = k
                return k
            if st.pending[d] == 0:
                latency_evaluate(v, st, d)
                continue
        if m == 0:
            for i in range(n):
                st.tmp2[i] = st.tmp[i]
            m = n
        return latency_pick(v, st, d, m)


@compiled
def latency_complete(v, st, d, k, slot, latency):
    expected = st.sample_path[slot]
    if expected < 0 or st.sample_win[slot] != st.win[d]:
        return
    st.sample_path[slot] = -1
    st.pending[d] -= 1
    p = v.d_paths[d, k]
    if expected == p and st.incand[d, k] == 1:
        bw = v.p_bw[p]
        value = latency
        if bw > 0.0:
            value = max(latency - (v.s_size[slot] - 4096) / bw, 0.0)  # size_normalised
        st.sums[d, k] += value
        st.counts[d, k] += 1
    if st.sampling[d] == 1 and st.pending[d] == 0 and st.issued[d] >= st.num_sampling_cycles * st.ncand[d]:
        latency_evaluate(v, st, d)


@compiled
def latency_path_change(v, st, d, k):
    p = v.d_paths[d, k]
    if not usable(v, p) and st.sampling[d] == 1:
        for s in range(st.sample_path.shape[0]):
            if st.sample_path[s] == p and st.sample_win[s] == st.win[d]:
                st.sample_path[s] = -1
                st.pending[d] -= 1
        if st.pending[d] == 0 and st.issued[d] >= st.num_sampling_cycles * st.ncand[d]:
            latency_evaluate(v, st, d)


LATENCY_STATE = (
    per_device("sampling"),
    per_path("cand"),
    per_device("ncand"),
    per_path("incand"),
    per_device("issued"),
    per_device("pending"),
    per_path("sums", "f8"),
    per_path("counts"),
    per_path("active"),
    per_device("nactive"),
    per_path("avg", "f8", math.nan),
    per_device("next_eval", "f8", 0.0),
    per_device("rot"),
    per_device("last", init=-1),
    per_device("win"),
    per_io("sample_path", init=-1),
    per_io("sample_win", init=0),
    scratch("tmp"),
    scratch("tmp2"),
    scratch("wmask"),
)


def latency_events() -> tuple[Event, Event]:
    def sampling(e: EventData) -> dict:
        return {"candidates": [e.names[k] for k in range(len(e.names)) if e.mask[k] == 1]}

    def evaluation(e: EventData) -> dict:
        sampled = [k for k in range(len(e.names)) if e.mask[k] > 0 and not math.isnan(e.val[k])]
        return {
            "latency_us": {e.names[k]: round(float(e.val[k]) * 1e6, 3) for k in sampled},
            "active": [e.names[k] for k in range(len(e.names)) if e.mask[k] == 1],
            "dropped": [e.names[k] for k in range(len(e.names)) if e.mask[k] == 2],
        }

    return Event("sampling_started", sampling), Event("evaluation", evaluation)


def latency_current(s: Snapshot) -> tuple[str, int, int]:
    """(CurrentPath name, NumIOsPending, latency in ms) as esxcli prints them."""
    last = int(s.state.last[s.d])
    if last < 0:
        return "none", 0, 0
    avg = float(s.state.avg[s.d, last])
    return s.names[last], int(s.view.out[s.paths[last]]), round((0.0 if math.isnan(avg) else avg) * 1e3)


def latency_config(s: Snapshot) -> str:
    p = s.params
    name, pending, latency_ms = latency_current(s)
    cycle = min(int(s.state.issued[s.d]) // max(int(s.state.ncand[s.d]), 1), p["num_sampling_cycles"])
    return (
        f"{{policy=latency,latencyEvalTime={p['latency_eval_time']},samplingCycles={p['num_sampling_cycles']},"
        f"curSamplingCycle={cycle},useANO={p['use_ano']}; CurrentPath={name}: "
        f"NumIOsPending={pending},latency={latency_ms}}}"
    )


LATENCY = PolicyDef(
    "latency",
    "VMW_PSP_RR --type=latency (ESXi 6.7 U1+): sample every path, then use the low-latency ones",
    "VMW_PSP_RR `--type=latency` (ESXi 6.7 U1+); esxcli; **algorithm is a pathsel reading**, see [model.md](model.md#esxi-latency-round-robin-how-pathsel-reads-it)",
    select=latency_select,
    complete=latency_complete,
    path_change=latency_path_change,
    params=(
        Param("num_sampling_cycles", 16, int, "I/Os per path used to average its latency (--num-sampling-cycles)", 16, INT32_MAX),
        Param("latency_eval_time", 180000, int, "ms between re-evaluations of path latency (--latency-eval-time)", 30000, INT32_MAX, unit="ms"),
        USE_ANO,
        VARIANT,
        TOLERANCE,
        CUTOFF,
    ),
    aliases=("rr:type=latency",),
    state=LATENCY_STATE,
    config_string=latency_config,
    events=latency_events(),
    class_name="LatencyRoundRobin",
    counts="Per sampling window: each candidate's mean latency over `num_sampling_cycles` sample I/Os, normalised to 4 KiB; then (lqd, score) I/Os in flight per path",
    notes="Samples every candidate round robin (dropped paths too), then `lqd` keeps the paths within best × `cutoff` and sends each I/O to the lowest mean × (in flight + 1) among them; `min-set` rotates one I/O at a time over the paths within best × (1 + `tolerance`); `score` is `lqd` with no cutoff. Ties go to the earlier path. A dropped path is not tried again until the next window, `latency_eval_time` later. Why `lqd` and 2: [model.md](model.md#why-lqd-is-the-default).",
)

# The scalars latency's hooks read, for a policy that reuses them with other parameters (HPP).
LATENCY_SCALARS = (scalar("num_sampling_cycles", init=16), scalar("use_ano", init=0))
