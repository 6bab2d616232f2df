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
* Latency RR (VMware documents only its parameters): see :data:`LATENCY` and
  :mod:`pathsel.policies.latency_rr`, which reads the algorithm step by step.
"""

from __future__ import annotations

from .framework.adapter import policy_class
from .framework.define import INT32_MAX, Param, PolicyDef, Snapshot, compiled_inline, per_device, scratch
from .framework.kernel import AO, usable, working_set
from .latency_rr import (
    CUTOFF,
    LATENCY_STATE,
    TOLERANCE,
    VARIANT,
    latency_complete,
    latency_current,
    latency_events,
    latency_path_change,
    latency_select,
)
from .selectors import USE_ANO, fixed_select, fixed_setup, rr_select

__all__ = ["FIXED", "MRU", "RR", "LATENCY", "Fixed", "MostRecentlyUsed", "RoundRobin", "LatencyRoundRobin"]


def _name(s: Snapshot, k: int) -> str:
    return s.names[k] if k >= 0 else "none"


# -- VMW_PSP_FIXED ----------------------------------------------------------------------
# (FIXED's hook and set-up: :mod:`pathsel.policies.selectors`)
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
Fixed = policy_class(FIXED, "Fixed", module=__name__)


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
MostRecentlyUsed = policy_class(MRU, "MostRecentlyUsed", module=__name__)


# -- VMW_PSP_RR --type=iops|bytes --------------------------------------------------------
# (the rotation: :func:`pathsel.policies.selectors.rr_select`)
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
RoundRobin = policy_class(RR, "RoundRobin", module=__name__)


# -- VMW_PSP_RR --type=latency -------------------------------------------------------------
# (sampling windows and evaluation: :mod:`pathsel.policies.latency_rr`)
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
LatencyRoundRobin = policy_class(LATENCY, "LatencyRoundRobin", module=__name__)
