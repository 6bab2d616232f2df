"""Load balancers from outside storage, as path-selection policies: ``p2c-ewma``.

Finagle's power of two choices over peak-EWMA load, the balancer Linkerd also
uses. Sources: Twitter, Finagle, ``finagle-core/.../loadbalancer/PeakEwma.scala``
(``Metric.observe``, ``Metric.get``, ``Metric.end``), ``.../p2c/P2CPick.scala``
(``pick``) and ``Balancers.p2cPeakEwma`` (``decayTime`` default 10 seconds),
https://github.com/twitter/finagle; Michael Mitzenmacher, "The Power of Two
Choices in Randomized Load Balancing", IEEE TPDS 12(10), 2001.

Per path: ``cost`` (a peak-sensitive EWMA of round-trip time, ns),
``stamp`` (ns of the last observation). ``observe(rtt)``: ``w =
exp(-(now - stamp) / tau)``; ``cost = rtt`` if ``rtt > cost`` else ``cost *
w + rtt * (1 - w)``; ``stamp = now``. ``load()`` first observes 0 (so an
idle path's cost decays toward 0 and its stamp moves to now), then is
``Penalty + pending`` for a path with pending I/Os and no history, else
``cost * (pending + 1)``. ``pick``: two distinct random paths, the lower
load wins; on a tie the second.

Assumptions (Finagle balances servers, not storage paths):

* The candidates are the ALUA working set (AO paths; ANO only when no AO
  path is usable, or always with ``use_ano=1``), in path order.
* ``pending`` is this device's I/Os in flight on the path (``v.out``); an
  I/O lost on a failed path is not observed.
* Time is the simulated clock in integer nanoseconds, ``int(seconds * 1e9)``;
  a completion observes ``rtt = int(latency * 1e9)``; stamps start at 0.
* Random draws: ``a = int(u1 * n)``, ``b = int(u2 * (n - 1))``, ``b += 1`` if
  ``b >= a`` (Finagle's ``nextInt`` with the hole), two uniforms from the
  device's own stream per pick, in that order; none when only one path is a
  candidate.
"""

from __future__ import annotations

import math

import numpy as np

from .framework.adapter import policy_class
from .framework.define import (
    Param,
    PolicyDef,
    Snapshot,
    compiled,
    compiled_inline,
    per_device,
    per_path,
    scratch,
)
from .framework.kernel import uniform, working_set
from .selectors import USE_ANO

__all__ = ["P2C_EWMA", "PENALTY", "PeakEwmaP2C"]

PENALTY = float((2**63 - 1) >> 16)  # Finagle: Long.MaxValue >> 16, the load of a path with no history


@compiled_inline
def observe(st, d, k, rtt, now_ns):
    """``Metric.observe``: peak-sensitive EWMA over unevenly spaced observations."""
    td = now_ns - st.stamp[d, k]
    if td < 0:
        td = 0
    w = math.exp(-td / (st.decay * 1e9))  # Finagle's Tau: decayTime in nanoseconds, as a double
    if rtt > st.cost[d, k]:
        st.cost[d, k] = rtt
    else:
        st.cost[d, k] = st.cost[d, k] * w + rtt * (1.0 - w)
    st.stamp[d, k] = now_ns


@compiled_inline
def load(v, st, d, k, now_ns):
    """``Metric.get``: decay to now, then cost x (pending + 1); it changes ``cost`` and ``stamp``."""
    observe(st, d, k, 0.0, now_ns)
    pending = v.out[v.d_paths[d, k]]
    if st.cost[d, k] == 0.0 and pending != 0:
        return PENALTY + pending
    return st.cost[d, k] * (pending + 1)


@compiled
def p2c_select(v, st, d, slot):
    n = working_set(v, d, st.use_ano != 0, st.tmp)
    if n == 0:
        return -1
    if n == 1:
        st.last[d] = st.tmp[0]
        return st.tmp[0]
    a = np.int64(uniform(v, d) * n)
    b = np.int64(uniform(v, d) * (n - 1))
    if b >= a:
        b += 1  # the hole: two distinct paths, uniform over pairs
    now_ns = np.int64(v.clock[0] * 1e9)
    ka = st.tmp[a]
    kb = st.tmp[b]
    load_a = load(v, st, d, ka, now_ns)
    load_b = load(v, st, d, kb, now_ns)
    k = ka if load_a < load_b else kb
    st.last[d] = k
    return k


@compiled
def p2c_complete(v, st, d, k, slot, latency):
    observe(st, d, k, float(max(np.int64(latency * 1e9), 0)), np.int64(v.clock[0] * 1e9))


def _config(s: Snapshot) -> str:
    text = f"{{policy=p2c-ewma,decay={s.params['decay']:g}s,useANO={s.params['use_ano']}"
    k = int(s.state.last[s.d])
    if k < 0:
        return text + "}"
    return text + f"; last={s.names[k]}: pending={int(s.view.out[s.paths[k]])},cost_us={float(s.state.cost[s.d, k]) / 1e3:.1f}}}"


P2C_EWMA = PolicyDef(
    "p2c-ewma",
    "Finagle/Linkerd P2C + peak EWMA: two distinct random paths, the lower cost x (pending + 1)",
    "Finagle/Linkerd P2C + peak EWMA; `PeakEwma.scala` (`observe`, `get`), `P2CPick.scala` (`pick`), `Balancers.p2cPeakEwma`",
    select=p2c_select,
    complete=p2c_complete,
    params=(
        Param("decay", 10.0, float, "seconds: the EWMA's time constant (Finagle decayTime)", 0.001, 86400.0, shown="10 s [0.001 … 86400]"),
        USE_ANO,
    ),
    aliases=("peak-ewma",),
    state=(per_path("cost", "f8", 0.0), per_path("stamp"), per_device("last", init=-1), scratch("tmp")),
    config_string=_config,
    draws=2,
    class_name="PeakEwmaP2C",
    counts="per path: a peak-sensitive EWMA of round-trip time (ns) and its time stamp; this device's I/Os in flight",
    notes="Two *distinct* random working-set paths, the lower cost × (in flight + 1); a tie goes to the second. Cost jumps to a higher sample, else decays: cost × w + rtt × (1 − w), w = exp(−Δt / decay); reading a load decays an idle path toward 0. A busy path with no history costs 2^47 + in flight. *Assumed:* candidates are the ALUA working set; lost I/Os teach nothing.",
)
PeakEwmaP2C = policy_class(P2C_EWMA, "PeakEwmaP2C", module=__name__)
