"""IBM AIX MPIO, the default path control module (AIXPCM): ``algorithm=shortest_queue``.

Source: IBM, *AIX 7.2 Device management*, "Path control module attributes",
https://www.ibm.com/docs/en/aix/7.2?topic=mpio-path-control-module-attributes
(``chdev -l hdiskN -a algorithm=shortest_queue``): it "distributes the I/O
operations across multiple enabled paths. For devices that have active and
passive paths, or preferred and non-preferred paths, only a subset of the
paths are used for I/O operations. This algorithm is similar to the
round_robin algorithm. However, the shortest_queue algorithm distributes I/O
operations based on the number of pending I/O operations on each path. The
path that currently has the fewest pending I/O operations is selected for the
next operation. The path priority attribute is ignored". IBM recommends it
for IBM FlashSystem / SAN Volume Controller LUNs on AIX.

Assumptions where IBM is silent:

* The subset of paths is the ALUA working set: the usable AO (preferred,
  active) paths; ANO ones only when no AO path is usable.
* Pending I/Os are counted per path of this hdisk (``v.out``), not per
  adapter or target port.
* Ties go round robin ("similar to the round_robin algorithm"): the scan
  starts at the path after the one used last, so at light load, when every
  path has nothing pending, the I/Os rotate over the paths as round_robin
  with equal priorities would send them.
"""

from __future__ import annotations

from .framework.adapter import policy_class
from .framework.define import PolicyDef, Snapshot, compiled, per_device
from .framework.kernel import ws_member, ws_tier

__all__ = ["SHORTEST_QUEUE", "AixShortestQueue"]


@compiled
def shortest_queue_select(v, st, d, slot):
    n = v.d_np[d]
    last = st.last[d]
    tier = ws_tier(v, d, False, last)
    start = 0 if last < 0 else last + 1
    best = -1
    least = 0
    for step in range(n):  # cyclically from the path after the last one used: ties go round robin
        k = start + step
        if k >= n:
            k -= n
        p = v.d_paths[d, k]
        if ws_member(v, p, tier) and (best < 0 or v.out[p] < least):
            best = k
            least = v.out[p]
    st.last[d] = best
    return best


def _config(s: Snapshot) -> str:
    k = int(s.state.last[s.d])
    pending = int(s.view.out[s.paths[k]]) if k >= 0 else 0
    return f"algorithm=shortest_queue last={s.names[k] if k >= 0 else 'none'} pending={pending}"


SHORTEST_QUEUE = PolicyDef(
    "aix:shortest_queue",
    "AIX MPIO algorithm=shortest_queue: the enabled path with the fewest pending I/Os, round robin among ties",
    'AIX MPIO `algorithm=shortest_queue` (the default PCM); IBM, AIX Device management, "Path control module attributes"',
    select=shortest_queue_select,
    aliases=("aix:shortest-queue", "aix:sq"),
    state=(per_device("last", init=-1),),
    config_string=_config,
    class_name="AixShortestQueue",
    counts="this hdisk's I/Os pending per path",
    notes=(
        "The enabled path with the fewest pending I/Os; path priorities are ignored. *Assumed:* the active subset "
        "is the ALUA working set (AO, ANO only when no AO path is usable); ties go round robin from the path after "
        "the last one used, so idle paths rotate as `round_robin` would."
    ),
)
AixShortestQueue = policy_class(SHORTEST_QUEUE, "AixShortestQueue", module=__name__)
