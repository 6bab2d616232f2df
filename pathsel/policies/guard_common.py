"""What ``guard`` and ``guard:v1`` share: ejection, the tier's median, slow-start re-admission, their events.

``guard`` (guard.py) was redesigned for issue 37 and ``guard:v1``
(guard_v1.py) keeps the selector as it was before; they differ in what they
average and how they price a path, not in how they hold a path out and let
it back in. Those parts are here, once: Envoy's outlier detection (Envoy
Project, "Outlier detection", 2024,
https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/outlier):
an ejection for ``hold`` doubling per strike (64 x at most), at most half
the tier ejected for latency, the lower median of the tier's averages to
judge against, and slow start (one I/O at a time for ``slow_start`` I/Os)
for a path back from ejection or up after being down. Each function takes
the average it works on (guard: ``base``; v1: ``ewma`` or ``svc``) as an
argument. The sources and assumptions of each policy are in its own module's
docstring.
"""

from __future__ import annotations

import math

from .framework.define import EventData, Param, Snapshot, compiled, compiled_inline, per_device, per_path, scratch
from .framework.kernel import EV_POLICY, log_event, working_set

__all__ = [
    "EJECTION_STATE",
    "READMISSION_STATE",
    "HOLD",
    "SLOW_START",
    "lost_now",
    "hold_out",
    "best_average",
    "reference_latency",
    "tier_mask",
    "slow_start_step",
    "guard_path_change",
    "eject_event",
    "event_path",
    "event_latency_us",
    "config_current",
]

MIN_SAMPLES = 4  # samples before a path's average counts (for the best, and to eject it)
MAX_BACKOFF = 64  # the longest hold is hold x 64
EV_EJECT, EV_READMIT = EV_POLICY, EV_POLICY + 1
WHY_LATENCY, WHY_LOST, WHY_STALL = 0, 1, 2
REFRESH = 0.125  # the median is worked out again every decay / 8 (6.25 ms at the default), not per I/O
MAX_EJECTED = 0.5  # at most half the tier ejected for latency at once (at least one path)
STALL = 10.0  # a busy path with nothing back for 10 x its expected (v1: average) latency ...
STALL_FLOOR = 0.002  # ... and at least 2 ms is stalled

HOLD = Param(
    "hold",
    0.5,
    float,
    "seconds a path stays ejected the first time; doubles each time (x64 at most)",
    0.001,
    3600.0,
    shown="0.5 s [0.001 … 3600]",
)
SLOW_START = Param("slow_start", 8, int, "I/Os a re-admitted path takes one at a time before it takes its full share", 0, 1_000_000)

# The record's fields these hooks read, in each policy's record in this order (guard puts its ``why`` between the
# two): attempts sent, completed and lost per path, the ejection's deadline and strikes ...
EJECTION_STATE = (
    per_path("sent"),
    per_path("done"),
    per_path("lost"),
    per_path("until", "f8", -math.inf),
    per_path("strikes"),
)
# ... slow start, the last path used, the tier's median and when it was worked out, and scratch rows for the tier
READMISSION_STATE = (
    per_path("ramp"),
    per_path("was_down"),
    per_device("last", init=-1),
    per_device("ref", "f8", 0.0),
    per_device("ref_at", "f8", -math.inf),
    scratch("tmp"),
    scratch("mask"),
    scratch("vals", "f8"),
)


@compiled_inline
def lost_now(v, st, d, k):
    """Attempts on the path that ended without completing (aborted or failed)."""
    return st.sent[d, k] - st.done[d, k] - v.out[v.d_paths[d, k]]


@compiled
def hold_out(v, st, d, k, now, why, shown):
    """Eject path k: out for ``hold`` x 2**strikes (64 x at most), then slow start, judged afresh; an ``ejection``
    event showing ``shown`` (the average it was judged by)."""
    strikes = st.strikes[d, k]
    st.until[d, k] = now + st.hold * min(2.0**strikes, float(MAX_BACKOFF))
    st.strikes[d, k] = strikes + 1
    st.ramp[d, k] = st.slow_start
    st.samples[d, k] = 0  # judged afresh when it comes back
    st.ref_at[d] = -math.inf  # the median without it, at the next look
    e = log_event(v, d, EV_EJECT, k, why, strikes + 1)
    v.ev_mask[e, k] = 1
    v.ev_val[e, k] = shown


@compiled
def best_average(v, st, d, n, now, avg):
    """The least of ``avg`` among the tier's admitted paths with MIN_SAMPLES samples (else among every sampled one),
    or 0 when none is sampled."""
    best = math.inf
    any_best = math.inf
    for i in range(n):
        k = st.tmp[i]
        if st.samples[d, k] == 0:
            continue
        a = avg[d, k]
        if a < any_best:
            any_best = a
        if st.samples[d, k] >= MIN_SAMPLES and st.until[d, k] <= now and a < best:
            best = a
    if best < math.inf:
        return best
    return any_best if any_best < math.inf else 0.0


@compiled
def reference_latency(v, st, d, n, now, avg):
    """The lower median of ``avg`` over the tier's admitted paths with MIN_SAMPLES samples (0: fewer than 2), worked
    out again every ``decay`` x REFRESH seconds or after an ejection, else the last one."""
    if now - st.ref_at[d] < st.decay * REFRESH:
        return st.ref[d]
    m = 0
    for i in range(n):
        k = st.tmp[i]
        if st.until[d, k] <= now and st.samples[d, k] >= MIN_SAMPLES:
            x = avg[d, k]
            j = m
            while j > 0 and st.vals[j - 1] > x:  # insertion sort: a tier has a few dozen paths at most
                st.vals[j] = st.vals[j - 1]
                j -= 1
            st.vals[j] = x
            m += 1
    ref = st.vals[(m - 1) // 2] if m >= 2 else 0.0  # the lower median: of two paths, the faster one
    st.ref[d] = ref
    st.ref_at[d] = now
    return ref


@compiled
def tier_mask(v, st, d, n):
    """``st.mask``: 1 for the tier's paths (``st.tmp[:n]``), 0 for the device's others; the device's path count."""
    np_ = v.d_np[d]
    for k in range(np_):
        st.mask[k] = 0
    for i in range(n):
        st.mask[st.tmp[i]] = 1
    return np_


@compiled
def slow_start_step(v, st, d, k, now, avg, judged, shown):
    """A completion on path k in slow start counts towards its re-admission when ``judged`` is within
    ``eject_ratio`` x the tier's median of ``avg`` (or there is no median); the last one logs a ``readmission``
    showing ``shown``."""
    if st.ramp[d, k] > 0 and st.until[d, k] <= now:
        n = working_set(v, d, st.use_ano != 0, st.tmp)
        ref = reference_latency(v, st, d, n, now, avg)
        if ref == 0.0 or judged <= ref * st.eject_ratio:
            st.ramp[d, k] -= 1
            if st.ramp[d, k] == 0:
                e = log_event(v, d, EV_READMIT, k, st.strikes[d, k], 0)
                v.ev_mask[e, k] = 1
                v.ev_val[e, k] = shown


@compiled
def guard_path_change(v, st, d, k):
    p = v.d_paths[d, k]
    if v.up[p] != 1:
        st.was_down[d, k] = 1
    elif st.was_down[d, k] == 1:  # back up: slow start, and a strike if it went down since its last ejection
        st.was_down[d, k] = 0
        st.ramp[d, k] = st.slow_start
        st.strikes[d, k] += 1
        st.samples[d, k] = 0  # what it measured before it went down says little now
        st.lost[d, k] = lost_now(v, st, d, k)


def event_path(e: EventData) -> str | None:
    return e.names[e.k] if e.k >= 0 else None


def event_latency_us(e: EventData) -> float | None:
    k = e.k
    return round(float(e.val[k]) * 1e6, 3) if k >= 0 and not math.isnan(e.val[k]) else None


def eject_event(e: EventData) -> dict:
    return {
        "path": event_path(e),
        "why": {WHY_LOST: "lost attempt", WHY_STALL: "stalled"}.get(e.a, "latency"),
        "strikes": int(e.b),
        "latency_us": event_latency_us(e),
    }


def config_current(s: Snapshot, text: str, field: str, label: str) -> str:
    """The config string's tail: the path used last, its average ``field`` (in us, as ``label``) and the ejected paths."""
    now = float(s.view.clock[0])
    out = [s.names[k] for k in range(len(s.names)) if float(s.state.until[s.d, k]) > now]
    k = int(s.state.last[s.d])
    if k < 0:
        return text + "}"
    avg = float(getattr(s.state, field)[s.d, k]) * 1e6
    return text + f"; CurrentPath={s.names[k]}: {label}={avg:.1f}, ejected={','.join(out) or 'none'}}}"
