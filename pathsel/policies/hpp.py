"""VMware ESXi High Performance Plug-in (HPP, the NVMe plug-in of ESXi 7/8): its path selection schemes.

Sources: VMware, *vSphere Storage*, "VMware High Performance Plug-In and Path
Selection Schemes" (FIXED; LB-RR, the default: switch after ``iops`` I/Os or
``bytes`` bytes; LB-IOPS: after ``iops`` I/Os, "an optimal path that has the
least number of outstanding I/Os"; LB-BYTES: after ``bytes`` bytes, the
least outstanding bytes; LB-Latency: latency evaluation time and sampling
I/Os per path); ``esxcli storage hpp device set`` (``--pss``, ``--iops``,
``--bytes``, ``--latency-eval-time``, ``--sampling-ios-per-path``); vSphere
API ``HostMultipathInfoHppLogicalUnitPolicy`` (ranges and defaults: iops
1..10000 default 1000, bytes 1..100 MiB default 10 MiB, latencyEvalTime
10000..300000 ms default 30000, samplingIosPerPath 16..160 default 16).

Assumptions where VMware is silent (the ESXi NMP ones of esxi.py apply too):

* Working paths are the ALUA/ANA working set: AO paths, ANO only when no AO
  path is usable. Path order is the scenario's order.
* FIXED with no ``preferred``: the first AO path (the Storage guide's "first
  working path discovered"; the API text says ESXi picks a random one).
* LB-RR counts I/Os and bytes issued on the current path since it became
  current and moves to the next working path when either reaches its limit.
* LB-IOPS / LB-BYTES count this device's I/Os (bytes) outstanding per path;
  the choice includes the current path, ties go to the first in path order;
  a current path that leaves the working set is replaced at once.
* LB-Latency is latency RR's reading (:mod:`pathsel.policies.latency_rr`)
  with HPP's parameters and ``useANO=0``.
"""

from __future__ import annotations

from .framework.adapter import policy_class
from .framework.define import (
    Param,
    PolicyDef,
    Setup,
    Snapshot,
    compiled,
    compiled_inline,
    per_device,
    scratch,
)
from .framework.kernel import ws_member, ws_next, ws_tier
from .latency_rr import (
    CUTOFF,
    LATENCY_SCALARS,
    LATENCY_STATE,
    TOLERANCE,
    VARIANT,
    latency_complete,
    latency_current,
    latency_events,
    latency_path_change,
    latency_select,
)
from .selectors import fixed_select, fixed_setup

__all__ = [
    "HPP_FIXED",
    "LB_RR",
    "LB_IOPS",
    "LB_BYTES",
    "LB_LATENCY",
    "HppFixed",
    "HppRoundRobin",
    "HppLoadBalanceIops",
    "HppLoadBalanceBytes",
    "HppLatency",
]

_IOPS = Param("iops", 1000, int, "I/Os on a path before switching (--iops)", 1, 10000)
_BYTES = Param("bytes", 10485760, int, "bytes on a path before switching (--bytes)", 1, 104857600)


def _pending(s: Snapshot) -> str:
    """``CurrentPath=...: NumIOsPending=...,numBytesPending=...`` of the device's current path."""
    cur = int(s.state.cur[s.d])
    if cur < 0:
        return "CurrentPath=none: NumIOsPending=0,numBytesPending=0"
    p = s.paths[cur]
    return f"CurrentPath={s.names[cur]}: NumIOsPending={s.view.out[p]},numBytesPending={s.view.out_bytes[p]}"


HPP_FIXED = PolicyDef(
    "hpp:fixed",
    "HPP FIXED: the preferred path whenever it is usable; returns to it",
    'ESXi HPP FIXED; vSphere Storage, "VMware High Performance Plug-In and Path Selection Schemes"',
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
    state=(per_device("pref", init=0), per_device("cur", init=-1), scratch("tmp")),
    setup=fixed_setup,
    config_string=lambda s: (
        f"{{pss=FIXED,preferred={s.names[int(s.state.pref[s.d])]}; current={s.names[int(s.state.cur[s.d])] if s.state.cur[s.d] >= 0 else 'none'}}}"
    ),
    class_name="HppFixed",
    counts="nothing: one path at a time",
    notes="As `fixed`: the preferred path whenever it is usable, else the first working path, back to the preferred path when it returns. VMware's API text says ESXi picks a random path when none is set; pathsel takes the guide's \"first working path\".",
)
HppFixed = policy_class(HPP_FIXED, "HppFixed", module=__name__)


# As ESXi RR, the working set is never listed: membership is tested for the paths looked at, so an I/O that
# stays on its path costs no scan (ws_tier needs none while the current path is a usable AO path).
@compiled
def lb_rr_select(v, st, d, slot):
    """The next working path once ``iops`` I/Os (count) or ``bytes`` bytes (sent) went down this one."""
    cur = st.cur[d]
    tier = ws_tier(v, d, False, cur)
    if cur < 0 or not ws_member(v, v.d_paths[d, cur], tier) or st.count[d] >= st.iops or st.sent[d] >= st.bytes:
        cur = ws_next(v, d, cur, tier)  # the first working path after cur, wrapping
        if cur < 0:  # an empty working set
            return -1
        st.count[d] = 0
        st.sent[d] = 0
    st.cur[d] = cur
    st.count[d] += 1
    st.sent[d] += v.s_size[slot]
    return cur


LB_RR = PolicyDef(
    "hpp:lb-rr",
    "HPP LB-RR (the default scheme): next working path after iops I/Os or bytes bytes, whichever comes first",
    "HPP LB-RR (the default scheme); vSphere API `HostMultipathInfoHppLogicalUnitPolicy`",
    select=lb_rr_select,
    params=(_IOPS, _BYTES),
    state=(per_device("cur", init=-1), per_device("count"), per_device("sent")),
    config_string=lambda s: f"{{pss=LB-RR,iops={s.params['iops']},bytes={s.params['bytes']}; {_pending(s)}}}",
    class_name="HppRoundRobin",
    counts="I/Os and bytes issued on the current path since it became current",
    notes="The next working path once either count reaches its limit. Working set as ESXi RR (AO; ANO only when no AO path is usable).",
)
HppRoundRobin = policy_class(LB_RR, "HppRoundRobin", module=__name__)


@compiled_inline
def lb_least(v, st, d, slot, limit, by_bytes):
    """LB-IOPS / LB-BYTES: after the limit, the working path with the least outstanding (or bytes)."""
    cur = st.cur[d]
    tier = ws_tier(v, d, False, cur)
    if cur < 0 or not ws_member(v, v.d_paths[d, cur], tier) or st.count[d] >= limit:
        cur = -1
        least = 0
        for k in range(v.d_np[d]):  # the first of the least, in path order
            p = v.d_paths[d, k]
            if ws_member(v, p, tier):
                value = v.out_bytes[p] if by_bytes else v.out[p]
                if cur < 0 or value < least:
                    cur = k
                    least = value
        if cur < 0:  # an empty working set
            return -1
        st.count[d] = 0
    st.cur[d] = cur
    st.count[d] += v.s_size[slot] if by_bytes else 1
    return cur


@compiled
def lb_iops_select(v, st, d, slot):
    return lb_least(v, st, d, slot, st.iops, False)


@compiled
def lb_bytes_select(v, st, d, slot):
    return lb_least(v, st, d, slot, st.bytes, True)


LB_IOPS = PolicyDef(
    "hpp:lb-iops",
    "HPP LB-IOPS: after iops I/Os, the working path with the fewest I/Os outstanding",
    "HPP LB-IOPS",
    select=lb_iops_select,
    params=(_IOPS,),
    state=(per_device("cur", init=-1), per_device("count")),
    config_string=lambda s: f"{{pss=LB-IOPS,iops={s.params['iops']}; {_pending(s)}}}",
    class_name="HppLoadBalanceIops",
    counts="I/Os issued on the current path; this device's I/Os outstanding per path",
    notes="After `iops` I/Os, the working path with the fewest outstanding, which may be the current one. *Assumed:* ties to the first path; a current path that leaves the working set is replaced at once.",
)
HppLoadBalanceIops = policy_class(LB_IOPS, "HppLoadBalanceIops", module=__name__)

LB_BYTES = PolicyDef(
    "hpp:lb-bytes",
    "HPP LB-BYTES: after bytes bytes, the working path with the fewest bytes outstanding",
    "HPP LB-BYTES",
    select=lb_bytes_select,
    params=(_BYTES,),
    state=(per_device("cur", init=-1), per_device("count")),
    config_string=lambda s: f"{{pss=LB-BYTES,bytes={s.params['bytes']}; {_pending(s)}}}",
    class_name="HppLoadBalanceBytes",
    counts="bytes issued on the current path; this device's bytes outstanding per path",
    notes="As `hpp:lb-iops`, with bytes.",
)
HppLoadBalanceBytes = policy_class(LB_BYTES, "HppLoadBalanceBytes", module=__name__)


def _lb_latency_setup(s: Setup) -> None:
    # latency RR's hooks read num_sampling_cycles: HPP calls it samplingIosPerPath
    s.state.set_scalar("num_sampling_cycles", s.params.get("sampling_ios_per_path", 16))


def _lb_latency_config(s: Snapshot) -> str:
    name, pending, latency_ms = latency_current(s)
    return (
        f"{{pss=LB-Latency,latencyEvalTime={s.params['latency_eval_time']},"
        f"samplingIOsPerPath={s.params['sampling_ios_per_path']}; CurrentPath={name}: "
        f"NumIOsPending={pending},latency={latency_ms}}}"
    )


LB_LATENCY = PolicyDef(
    "hpp:lb-latency",
    "HPP LB-Latency: sample every path, then use the low-latency ones (latency RR's machinery)",
    "HPP LB-Latency; vSphere API; **algorithm is a pathsel reading**",
    select=latency_select,
    complete=latency_complete,
    path_change=latency_path_change,
    params=(
        Param("latency_eval_time", 30000, int, "ms between re-evaluations of path latency (latencyEvalTime)", 10000, 300000, unit="ms"),
        Param("sampling_ios_per_path", 16, int, "sample I/Os per path to average its latency (samplingIosPerPath)", 16, 160),
        VARIANT,
        TOLERANCE,
        CUTOFF,
    ),
    state=LATENCY_SCALARS + LATENCY_STATE,
    setup=_lb_latency_setup,
    config_string=_lb_latency_config,
    events=latency_events(),
    class_name="HppLatency",
    counts="as `latency`",
    notes="`latency`'s machinery (sampling windows, size weighting, the `lqd`, `min-set` and `score` variants, `lqd` by default) with HPP's parameters and defaults, `useANO=0`.",
)
HppLatency = policy_class(LB_LATENCY, "HppLatency", module=__name__)
