"""Queueing formulas pathsel checks itself against: closed networks (Mean Value Analysis, asymptotic bounds) and M/M/c/K.

:mod:`pathsel.studies.analytic` builds the network of a scenario and calls
these; ``pathsel validate`` uses :func:`mmck` for the finite host queue. The
network's stations, forks and routes, the exact load-dependent MVA and the
bounds are described in :mod:`pathsel.studies.analytic`'s docstring and
Lazowska et al., *Quantitative System Performance* (1984), chapters 5 and 6.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Station", "Fork", "Route", "Segment", "Network", "MVAResult", "Bounds", "mva", "bounds", "mmck"]


def mmck(lam: float, mu: float, c: int, k: int) -> dict[str, float]:
    """M/M/c/K: Poisson arrivals (``lam``/s), ``c`` exponential servers (``mu``/s each), at most ``k`` in the system;
    an arrival finding ``k`` there is blocked (refused, lost to the system).

    Gross, Shortle, Thompson and Harris, *Fundamentals of Queueing Theory*, 4th ed. (Wiley, 2008), section 2.5
    (queues with truncation), with ``a = lam / mu``::

        p_n = a^n / n! p_0                 (n < c)
        p_n = a^n / (c! c^(n - c)) p_0     (c <= n <= k),   p_0 from sum p_n = 1

    Returns the blocking probability ``p_k`` (an arrival sees time averages: PASTA), the mean number in the
    system ``L``, the throughput ``lam (1 - p_k)`` and the mean time in the system ``W = L / throughput``
    (Little's law), seconds.
    """
    if not (lam > 0 and mu > 0 and 1 <= c <= k):
        raise ValueError(f"mmck needs lam > 0, mu > 0 and 1 <= c <= k, got {lam}, {mu}, {c}, {k}")
    a = lam / mu
    terms = [1.0]
    for n in range(1, k + 1):  # p_n / p_0, each from the one before: a / min(n, c) (no factorial overflows)
        terms.append(terms[-1] * a / min(n, c))
    total = sum(terms)
    p = [t / total for t in terms]
    blocked = p[k]
    mean_n = sum(n * pn for n, pn in enumerate(p))
    throughput = lam * (1.0 - blocked)
    return {"blocking": blocked, "L": mean_n, "throughput": throughput, "W": mean_n / throughput}


# -- the network -------------------------------------------------------------


@dataclass(frozen=True)
class Station:
    """One service centre. ``service``: mean time per visit, seconds.

    ``kind`` is ``"delay"`` (infinite server: no waiting) or ``"queue"`` (FCFS
    with ``servers`` slots). ``exponential``: the service time is exponential
    (needed for an exact queue); ``constant``: it is deterministic (used to time
    forks); ``scv``: squared coefficient of variation of the service time.
    """

    name: str
    kind: str
    service: float
    servers: int = 1
    exponential: bool = False
    constant: bool = False
    scv: float = 1.0


@dataclass(frozen=True)
class Fork:
    """Two branches run in parallel; the I/O goes on when both are done."""

    branches: tuple[tuple[int, ...], tuple[int, ...]]


Segment = int | Fork


@dataclass(frozen=True)
class Route:
    """One way through the network (a path and an op), taken with ``probability``."""

    probability: float
    segments: tuple[Segment, ...]
    path: int | None = None  # model path index, for per-path figures
    op: str = ""


@dataclass(frozen=True)
class Network:
    """A single-class closed network: ``population`` I/Os, routes chosen at random."""

    stations: tuple[Station, ...]
    routes: tuple[Route, ...]
    population: int
    notes: tuple[str, ...] = ()  # why it is not exact, when it is not

    @property
    def visits(self) -> list[float]:
        """Mean visits per I/O to each station (the visit ratios V_k)."""
        v = [0.0] * len(self.stations)
        for r in self.routes:
            for k in _station_visits(r.segments):
                v[k] += r.probability
        return v

    @property
    def demands(self) -> list[float]:
        """Service demand per I/O at each station, D_k = V_k S_k (seconds)."""
        return [v * s.service for v, s in zip(self.visits, self.stations)]

    @property
    def has_fork(self) -> bool:
        return any(isinstance(seg, Fork) for r in self.routes for seg in r.segments)

    def queueing(self, k: int) -> bool:
        """Station k can make an I/O wait (a queue with fewer slots than I/Os)."""
        s = self.stations[k]
        return s.kind == "queue" and s.servers < self.population

    @property
    def exact(self) -> bool:
        """MVA gives the exact product-form answer for a random split."""
        if self.has_fork or self.notes:
            return False
        visits = self.visits
        return all(s.exponential for k, s in enumerate(self.stations) if self.queueing(k) and visits[k] > 0)

    @property
    def method(self) -> str:
        ld = any(1 < s.servers < self.population for k, s in enumerate(self.stations) if self.queueing(k))
        name = "load-dependent MVA" if ld else "MVA"
        return f"exact {name}" if self.exact else f"approximate {name}"


def _station_visits(segments: Sequence[Segment]) -> list[int]:
    out: list[int] = []
    for seg in segments:
        if isinstance(seg, Fork):
            for branch in seg.branches:
                out.extend(branch)
        else:
            out.append(seg)
    return out


def _expected_max(c_a: float, a: float, c_b: float, b: float) -> float:
    """E[max(c_a + Ya, c_b + Yb)], Ya ~ Exp(mean a), Yb ~ Exp(mean b), independent (a, b >= 0)."""
    if c_b < c_a:
        c_a, a, c_b, b = c_b, b, c_a, a
    d = c_b - c_a
    tail = a * a * math.exp(-d / a) / (a + b) if a > 0 else 0.0
    return c_a + d + b + tail


def _route_time(route: Route, r: Sequence[float], stations: Sequence[Station], fork_max: str) -> float:
    t = 0.0
    for seg in route.segments:
        if isinstance(seg, Fork):
            parts = []
            for branch in seg.branches:
                const = sum(r[k] for k in branch if stations[k].kind == "delay" and stations[k].constant)
                rand = sum(r[k] for k in branch) - const
                parts.append((const, rand))
            (ca, a), (cb, b) = parts
            if fork_max == "expected":
                t += _expected_max(ca, a, cb, b)
            elif fork_max == "means":
                t += max(ca + a, cb + b)
            else:  # "sum"
                t += ca + a + cb + b
        else:
            t += r[seg]
    return t


# -- MVA ---------------------------------------------------------------------


@dataclass(frozen=True)
class MVAResult:
    population: int
    throughput: float  # I/Os per second
    response: float  # mean latency, seconds (N / X, Little's law)
    residence: tuple[float, ...]  # per station, mean time per visit (waiting + service)
    queue: tuple[float, ...]  # per station, mean I/Os present
    utilisation: tuple[float, ...]  # per station, busy fraction of each server
    route_times: tuple[float, ...]  # per route, mean time through it
    exact: bool
    method: str
    curve: tuple[float, ...] = ()  # X(n) for n = 1..N

    @property
    def iops(self) -> float:
        return self.throughput


def mva(net: Network) -> MVAResult:
    """Mean Value Analysis (Reiser and Lavenberg 1980) of a closed network.

    For n = 1..N: residence per visit r_k(n) from the queue an arriving I/O
    sees (the network with n - 1 I/Os, arrival theorem); X(n) = n / sum over
    routes of p x (time through the route); Q_k(n) = X(n) V_k r_k(n).
    Single-server exponential queues: r = S (1 + Q). Multi-server queues
    (1 < c < N): load-dependent MVA with the marginal probabilities p_k(j).
    """
    N = net.population
    if N < 1:
        raise ValueError("population must be >= 1")
    st = net.stations
    K = len(st)
    V = net.visits
    Q = [0.0] * K
    U = [0.0] * K  # per-server utilisation at n - 1
    # marginal probabilities p_k(j | n - 1) for multi-server queues
    P: dict[int, list[float]] = {k: [1.0] + [0.0] * N for k, s in enumerate(st) if s.kind == "queue" and 1 < s.servers < N}
    curve = []
    X = 0.0
    exact = net.exact
    D = net.demands
    limit = min((s.servers / D[k] for k, s in enumerate(st) if s.kind == "queue" and D[k] > 0), default=math.inf)
    r = [0.0] * K
    times: list[float] = []
    for n in range(1, N + 1):
        for k, s in enumerate(st):
            S = s.service
            if s.kind == "delay" or s.servers >= N or V[k] == 0:
                r[k] = S
            elif s.servers == 1:
                if s.exponential:
                    r[k] = S * (1.0 + Q[k])
                else:  # residual-life correction for general service (approximate)
                    r[k] = S * (1.0 + Q[k] - U[k]) + U[k] * S * (1.0 + s.scv) / 2.0
            else:
                p = P[k]
                c = s.servers
                r[k] = S * sum(j / min(j, c) * p[j - 1] for j in range(1, n + 1))
        times = [_route_time(rt, r, st, "expected") for rt in net.routes]
        cycle = sum(rt.probability * t for rt, t in zip(net.routes, times))
        X = n / cycle
        if not exact and X > limit:
            # The residual-life correction can overshoot near saturation; no network passes its bottleneck.
            X = limit
        curve.append(X)
        for k, s in enumerate(st):
            Q[k] = X * V[k] * r[k]
            U[k] = X * D[k] / s.servers if s.kind == "queue" else 0.0
        for k, p in P.items():
            c = st[k].servers
            new = [0.0] * (N + 1)
            for j in range(1, n + 1):
                new[j] = X * D[k] / min(j, c) * p[j - 1]
            # p(0) from the utilisation, not 1 - sum (which loses precision): sum_j min(j, c) p(j) = X D
            new[0] = max(0.0, 1.0 - (X * D[k] + sum((c - j) * new[j] for j in range(1, c))) / c)
            P[k] = new
    return MVAResult(
        population=N,
        throughput=X,
        response=N / X,
        residence=tuple(r),
        queue=tuple(Q),
        utilisation=tuple(U),
        route_times=tuple(times),
        exact=exact,
        method=net.method,
        curve=tuple(curve),
    )


@dataclass(frozen=True)
class Bounds:
    """Asymptotic bounds on throughput (I/Os per second), valid for any routing policy."""

    population: int
    upper: float
    lower: float
    latency_min: float  # R_min: mean latency with no contention, seconds
    bottleneck: str  # the station with the largest demand per slot ("" when none queues)
    bottleneck_limit: float  # c_k / D_k of that station (inf when none)

    @property
    def saturation_population(self) -> float:
        """N* = R_min x bottleneck limit: beyond it the bottleneck, not latency, limits IOPS."""
        return self.latency_min * self.bottleneck_limit


def bounds(net: Network) -> Bounds:
    """X <= min(N / R_min, min_k c_k / D_k); X >= N / (R_sum + (N - 1) sum_k D_k)."""
    N = net.population
    st = net.stations
    S = [s.service for s in st]
    r_min = sum(rt.probability * _route_time(rt, S, st, "means") for rt in net.routes)
    r_sum = sum(rt.probability * _route_time(rt, S, st, "sum") for rt in net.routes)
    D = net.demands
    limit, name = math.inf, ""
    for k, s in enumerate(st):
        if s.kind == "queue" and D[k] > 0 and s.servers / D[k] < limit:
            limit, name = s.servers / D[k], s.name
    d_queue = sum(D[k] for k in range(len(st)) if net.queueing(k))
    upper = min(N / r_min, limit)
    lower = N / (r_sum + (N - 1) * d_queue)
    return Bounds(N, upper, min(lower, upper), r_min, name, limit)
