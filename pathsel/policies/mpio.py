"""Windows MPIO with the Microsoft DSM (MSDSM): its six load-balance policies.

Sources: Microsoft, "MPIO Policies" (Windows Server 2008 R2,
https://learn.microsoft.com/en-us/previous-versions/windows/it-pro/windows-server-2008-R2-and-2008/dd851699(v=ws.11))
for what each policy does, including Least Queue Depth's example (one I/O to
LUN 1 and one to LUN 2 on Path 1 make Path 1's depth 2, so the next I/O for
either LUN goes to Path 2); ``VDS_LOADBALANCE_POLICY_ENUM`` (vds.h: failover,
round robin, round robin with subset, dynamic least queue depth, weighted
paths "the path with the least weight", least blocks);
``Set-MSDSMGlobalDefaultLoadBalancePolicy`` (FOO, RR, LQD, LB); ``mpclaim``
("Round Robin if disk is non-ALUA, Round Robin with Subset otherwise").
Microsoft publishes no source, so the details below are pathsel's:

Assumptions (Microsoft is silent on each):

* Path order is the scenario's order; every tie goes to the first path in it.
* Under ALUA, Round Robin with Subset's primary paths are the AO paths and its
  standby paths the ANO ones; Fail Over Only, Least Queue Depth, Weighted
  Paths and Least Blocks also choose among the AO paths while any is usable
  (the ALUA working set). Round Robin uses every usable path, AO and ANO.
* Fail Over Only's active path is the first AO path at the start; while it
  is down the first path of the working set is used; with ``failback=1``
  (the 2008 R2 text: "the standby path that was activated returns to
  standby") the active path is used again once it is back.
* A "path" in Least Queue Depth is the I_T nexus, shared by every LUN over
  it (``v.c_out``); Least Blocks counts bytes the same way (``v.c_out_bytes``),
  by analogy.
* Round Robin switches after every I/O (ESXi RR's cursor with iops=1).
"""

from __future__ import annotations

from .framework.adapter import policy_class
from .framework.define import (
    Param,
    PolicyDef,
    Snapshot,
    compiled,
    compiled_inline,
    per_device,
    scalar,
    scratch,
)
from .framework.kernel import usable, working_set, ws_member, ws_tier
from .selectors import fixed_setup, rr_select

__all__ = [
    "FO",
    "RR",
    "RRWS",
    "LQD",
    "WP",
    "LB",
    "MpioFailoverOnly",
    "MpioRoundRobin",
    "MpioRoundRobinWithSubset",
    "MpioLeastQueueDepth",
    "MpioWeightedPaths",
    "MpioLeastBlocks",
]


def _cur(s: Snapshot, field: str = "cur") -> str:
    k = int(getattr(s.state, field)[s.d])
    return s.names[k] if k >= 0 else "none"


@compiled
def fo_select(v, st, d, slot):
    """Fail Over Only: the primary when usable and failing back or the current one failed."""
    pref = st.pref[d]
    cur = st.cur[d]
    cur_ok = cur >= 0 and usable(v, v.d_paths[d, cur])
    if usable(v, v.d_paths[d, pref]) and (st.failback == 1 or not cur_ok):
        cur = pref
    elif not cur_ok:
        n = working_set(v, d, False, st.tmp)
        cur = st.tmp[0] if n > 0 else -1
    st.cur[d] = cur
    return cur


FO = PolicyDef(
    "mpio:fo",
    "MSDSM Fail Over Only: one active path; another only while it is down",
    'Windows MSDSM Fail Over Only (FOO); Microsoft, "MPIO Policies"',
    select=fo_select,
    params=(Param("failback", 1, int, "1: return to the first path when it comes back (the 2008 R2 text); 0: stay", 0, 1, shown="1 [0, 1]"),),
    aliases=("mpio:foo", "mpio:failover"),
    state=(per_device("pref", init=0), per_device("cur", init=-1), scratch("tmp")),
    setup=fixed_setup,  # the primary: the first AO path
    config_string=lambda s: f"LoadBalancePolicy=FOO active={_cur(s)} failback={s.params['failback']}",
    class_name="MpioFailoverOnly",
    counts="nothing: one path at a time",
    notes='One active path; while it is down, the first path of the ALUA working set. *Assumed:* the active path is the first AO path; `failback=1` returns to it when it is back (the 2008 R2 text: "the standby path that was activated returns to standby"), `0` stays.',
)
MpioFailoverOnly = policy_class(FO, "MpioFailoverOnly", module=__name__)

# Round Robin and Round Robin with Subset are ESXi RR's cursor, one I/O a path, over every
# usable path (useANO) or the working set.
_RR_STATE = (per_device("cur", init=-1), per_device("count"), scalar("type", init=0), scalar("iops", init=1), scalar("bytes", init=10485760))

RR = PolicyDef(
    "mpio:rr",
    "MSDSM Round Robin: every available path in turn, AO and ANO alike",
    'MSDSM Round Robin (the default for non-ALUA disks, mpclaim); "MPIO Policies"',
    select=rr_select,
    state=_RR_STATE + (scalar("use_ano", init=1),),
    config_string=lambda s: f"LoadBalancePolicy=RR last={_cur(s)}",
    class_name="MpioRoundRobin",
    counts="nothing: the cursor",
    notes='Every usable path, AO and ANO alike, one I/O each in path order ("all available paths").',
)
MpioRoundRobin = policy_class(RR, "MpioRoundRobin", module=__name__)

RRWS = PolicyDef(
    "mpio:rrws",
    "MSDSM Round Robin with Subset (the ALUA default): AO paths in turn, ANO only when no AO path is left",
    "MSDSM Round Robin with Subset (the default for ALUA disks, mpclaim)",
    select=rr_select,
    state=_RR_STATE + (scalar("use_ano", init=0),),
    config_string=lambda s: f"LoadBalancePolicy=RRWS last={_cur(s)}",
    class_name="MpioRoundRobinWithSubset",
    counts="nothing: the cursor",
    notes="Primary paths in turn, standby paths only when every primary path has failed, back to the primaries when one returns. *Assumed:* primary = AO, standby = ANO.",
)
MpioRoundRobinWithSubset = policy_class(RRWS, "MpioRoundRobinWithSubset", module=__name__)

KEY_QUEUE, KEY_WEIGHT, KEY_BLOCKS = 0, 1, 2


@compiled_inline
def _key(v, p, key):
    if key == KEY_QUEUE:
        return v.c_out[v.p_ctrl[p]]
    if key == KEY_WEIGHT:
        return v.p_weight[p]
    return v.c_out_bytes[v.p_ctrl[p]]


@compiled
def least_select(v, st, d, slot):
    """The working-set path with the least key (st.key: queue depth, weight or blocks); ties to the first.

    One pass over the device's paths, testing membership (no list of the working set): the tier needs no scan
    while the last path chosen is a usable AO path.
    """
    tier = ws_tier(v, d, False, st.last[d])
    best = -1
    best_key = 0
    for k in range(v.d_np[d]):
        p = v.d_paths[d, k]
        if ws_member(v, p, tier):
            key = _key(v, p, st.key)
            if best < 0 or key < best_key:
                best = k
                best_key = key
    st.last[d] = best
    return best


def _least(code: str, key: int):
    def config(s: Snapshot) -> str:
        last = int(s.state.last[s.d])
        value = 0
        if last >= 0:
            p = s.paths[last]
            c = s.view.p_ctrl[p]
            value = int(s.view.c_out[c] if key == KEY_QUEUE else s.view.p_weight[p] if key == KEY_WEIGHT else s.view.c_out_bytes[c])
        return f"LoadBalancePolicy={code} last={_cur(s, 'last')} value={value}"

    return (per_device("last", init=-1), scalar("key", init=key)), config


_s, _c = _least("LQD", KEY_QUEUE)
LQD = PolicyDef(
    "mpio:lqd",
    "MSDSM Least Queue Depth: fewest outstanding requests on the path, counted across LUNs",
    'MSDSM Least Queue Depth; "MPIO Policies" (the LUN 1 / LUN 2 example)',
    select=least_select,
    state=_s,
    config_string=_c,
    class_name="MpioLeastQueueDepth",
    counts="outstanding requests per path from *every LUN* over it (the I_T nexus): `controller_outstanding`",
    notes="The working-set path with the fewest. *Assumed:* ties to the first path; AO paths while any is usable.",
)
MpioLeastQueueDepth = policy_class(LQD, "MpioLeastQueueDepth", module=__name__)
_s, _c = _least("WP", KEY_WEIGHT)
WP = PolicyDef(
    "mpio:wp",
    "MSDSM Weighted Paths: the available path with the least administrator weight",
    'MSDSM Weighted Paths; `VDS_LBP_WEIGHTED_PATHS` ("the path with the least weight")',
    select=least_select,
    state=_s,
    config_string=_c,
    class_name="MpioWeightedPaths",
    counts="nothing: a static priority (each path's `weight`, 0 when not set)",
    notes="The usable path with the least weight; load does not move it. *Assumed:* ties to the first path (Dell's DSM round-robins equal weights; Microsoft does not say); AO paths while any is usable.",
)
MpioWeightedPaths = policy_class(WP, "MpioWeightedPaths", module=__name__)
_s, _c = _least("LB", KEY_BLOCKS)
LB = PolicyDef(
    "mpio:lb",
    "MSDSM Least Blocks: fewest bytes outstanding on the path",
    'MSDSM Least Blocks; "MPIO Policies" (10 + 20 bytes on Path 1)',
    select=least_select,
    state=_s,
    config_string=_c,
    class_name="MpioLeastBlocks",
    counts="bytes outstanding per path: `controller_outstanding_bytes`",
    notes="The working-set path with the fewest bytes outstanding. *Assumed:* counted across LUNs like Least Queue Depth; ties to the first path; AO paths while any is usable.",
)
MpioLeastBlocks = policy_class(LB, "MpioLeastBlocks", module=__name__)
del _s, _c
