"""The compiled-style policy of docs/getting-started.md ("Your policy on the fast engine"), for benchmarks/engines.py.

Keep it the same as the docs' example: it is what a user writes.
"""

from __future__ import annotations

from pathsel.policies import Param, PolicyDef, compiled, per_device, per_path, scratch
from pathsel.policies.framework.kernel import working_set


@compiled
def select(v, st, d, slot):
    """The working-set path with the lowest smoothed latency x (I/Os in flight + 1); unseen paths score 0."""
    n = working_set(v, d, False, st.tmp)  # the usable AO paths (ANO ones when no AO path is usable)
    best = -1
    best_score = 0.0
    for i in range(n):
        k = st.tmp[i]
        score = st.ewma[d, k] * (v.out[v.d_paths[d, k]] + 1)
        if best < 0 or score < best_score:
            best = k
            best_score = score
    st.last[d] = best
    return best


@compiled
def complete(v, st, d, k, slot, latency):
    """An I/O finished on path k after ``latency`` seconds: move the path's average toward it."""
    if st.ewma[d, k] == 0.0:
        st.ewma[d, k] = latency
    else:
        st.ewma[d, k] += st.alpha * (latency - st.ewma[d, k])


def config_string(s):
    k = int(s.state.last[s.d])
    return f"{{policy=ewma-pending,alpha={s.params['alpha']:g}; last={s.names[k] if k >= 0 else 'none'}}}"


EWMA_PENDING = PolicyDef(
    name="ewma-pending",
    summary="the lowest smoothed latency x (I/Os in flight + 1) over the ALUA working set",
    source="pathsel docs: the worked example of a compiled-style policy",
    select=select,
    complete=complete,
    params=(Param("alpha", 0.1, float, "weight of the newest latency in the average", 0.0, 1.0),),
    state=(per_path("ewma", "f8", 0.0), per_device("last", init=-1), scratch("tmp")),
    config_string=config_string,
)
