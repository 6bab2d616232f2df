"""Latency round robin's sampling windows and evaluation, run by ESXi NMP's and HPP's latency policies.

VMW_PSP_RR ``--type=latency`` (:data:`pathsel.policies.esxi.LATENCY`) and
HPP's LB-Latency (:data:`pathsel.policies.hpp.LB_LATENCY`) differ only in
their parameters' names, defaults and ranges; both run these hooks on the
state :data:`LATENCY_STATE`. The sources (VMware's documentation, Broadcom's
KB 371368, Cody Hosterman's test drive) are cited in
:mod:`pathsel.policies.esxi`; the algorithm is pathsel's reading of them,
step by step below.
"""

from __future__ import annotations

import math

import numpy as np

from .framework.define import (
    Event,
    EventData,
    Param,
    Snapshot,
    compiled,
    compiled_inline,
    per_device,
    per_io,
    per_path,
    scalar,
    scratch,
)
from .framework.kernel import EV_POLICY, log_event, usable, working_set, ws_member, ws_tier

__all__ = [
    "SIZE_REF",
    "size_normalised",
    "VARIANT",
    "TOLERANCE",
    "CUTOFF",
    "LATENCY_STATE",
    "LATENCY_SCALARS",
    "latency_select",
    "latency_complete",
    "latency_path_change",
    "latency_events",
    "latency_current",
]

SIZE_REF = 4096  # latency RR compares paths as if every I/O were 4 KiB
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


def size_normalised(latency: float, size: float, bandwidth: float | None) -> float:
    """Latency RR's size weighting: take off the transfer time beyond a 4 KiB I/O on the path's link."""
    if bandwidth:
        return max(latency - (size - SIZE_REF) / bandwidth, 0.0)
    return latency


# -- the reading -----------------------------------------------------------------------------
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
#    that 16-sample noise does not drop equal paths, narrow enough to drop the test drive's
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


# The scalars latency's hooks read, for a policy that reuses them with other parameters (HPP).
LATENCY_SCALARS = (scalar("num_sampling_cycles", init=16), scalar("use_ano", init=0))
