"""Load balancers from outside storage, as path-selection policies.

``p2c-ewma``: Finagle's power of two choices over peak-EWMA load, the
balancer Linkerd also uses. Sources: Finagle
``finagle-core/.../loadbalancer/PeakEwma.scala`` (``Metric.observe``,
``Metric.get``, ``Metric.end``), ``.../p2c/P2CPick.scala`` (``pick``) and
``Balancers.p2cPeakEwma`` (``decayTime`` default 10 seconds); Mitzenmacher,
"The Power of Two Choices in Randomized Load Balancing" (IEEE TPDS 2001).

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
* ``pending`` is this device's I/Os in flight on the path
  (``PathView.outstanding``); an I/O lost on a failed path is not observed.
* Time is the simulated clock in integer nanoseconds, ``int(seconds * 1e9)``;
  a completion observes ``rtt = int(latency * 1e9)``; stamps start at the
  time the policy is bound.
* Random draws: ``a = int(u1 * n)``, ``b = int(u2 * (n - 1))``, ``b += 1`` if
  ``b >= a`` (Finagle's ``nextInt`` with the hole), two ``rng.random()``
  calls per pick in that order; none when only one path is a candidate.
"""

from __future__ import annotations

import math
from typing import Any

from .base import IORequest, PathView, Policy, alua_working_set

__all__ = ["PeakEwmaP2C", "PENALTY", "balancer_policy"]

PENALTY = float((2**63 - 1) >> 16)  # Finagle: Long.MaxValue >> 16, the load of a path with no history


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


class PeakEwmaP2C(Policy):
    """Power of two choices over Finagle's peak-EWMA load."""

    name = "p2c-ewma"

    def __init__(self, decay: float = 10.0, use_ano: int = 0) -> None:
        if not decay > 0:
            raise ValueError("decay must be > 0 seconds")
        self.decay = decay
        self.tau = decay * 1e9  # Finagle's Tau: decayTime in nanoseconds, as a double
        self.use_ano = bool(use_ano)
        self._last: PathView | None = None

    def bind(self, device, rng) -> None:
        super().bind(device, rng)
        n = len(device.paths)
        self._local = {p.index: k for k, p in enumerate(device.paths)}
        self.cost = [0.0] * n
        self.stamp = [_ns(device.now)] * n

    def observe(self, k: int, rtt: float, now_ns: int) -> None:
        """``Metric.observe``: peak-sensitive EWMA over unevenly spaced observations."""
        td = max(now_ns - self.stamp[k], 0)
        w = math.exp(-td / self.tau)
        if rtt > self.cost[k]:
            self.cost[k] = rtt
        else:
            self.cost[k] = self.cost[k] * w + rtt * (1.0 - w)
        self.stamp[k] = now_ns

    def load(self, k: int, now_ns: int) -> float:
        """``Metric.get``: decay to now, then cost x (pending + 1); it changes ``cost`` and ``stamp``."""
        self.observe(k, 0.0, now_ns)
        pending = self.device.paths[k].outstanding
        if self.cost[k] == 0.0 and pending != 0:
            return PENALTY + pending
        return self.cost[k] * (pending + 1)

    def select(self, io: IORequest) -> PathView | None:
        candidates = alua_working_set(self.device.paths, self.use_ano)
        n = len(candidates)
        if n == 0:
            return None
        if n == 1:
            self._last = candidates[0]
            return candidates[0]
        a = int(self.rng.random() * n)
        b = int(self.rng.random() * (n - 1))
        if b >= a:
            b += 1  # the hole: two distinct paths, uniform over pairs
        now_ns = _ns(self.device.now)
        pa, pb = candidates[a], candidates[b]
        load_a = self.load(self._local[pa.index], now_ns)
        load_b = self.load(self._local[pb.index], now_ns)
        self._last = pa if load_a < load_b else pb
        return self._last

    def on_complete(self, path: PathView, io: IORequest, latency: float) -> None:
        self.observe(self._local[path.index], float(max(_ns(latency), 0)), _ns(self.device.now))

    def config_string(self) -> str:
        last = self._last
        if last is None:
            return f"{{policy=p2c-ewma,decay={self.decay:g}s,useANO={int(self.use_ano)}}}"
        k = self._local[last.index]
        return (
            f"{{policy=p2c-ewma,decay={self.decay:g}s,useANO={int(self.use_ano)}; last={last.name}: "
            f"pending={last.outstanding},cost_us={self.cost[k] / 1e3:.1f}}}"
        )


def balancer_policy(name: str, params: dict[str, Any]) -> Policy:
    return {"p2c-ewma": PeakEwmaP2C}[name](**params)
