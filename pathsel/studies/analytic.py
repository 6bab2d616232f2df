"""Analytic figures beside the simulation: asymptotic bounds and Mean Value Analysis.

A scenario is a *closed* queueing network: ``iodepth x numjobs`` I/Os circulate
forever (an I/O completes, its job slot issues the next). This module turns a
compiled :class:`~pathsel.model.Model` and a path split into such a network
and solves it.

Stations (per I/O, as :mod:`pathsel.engine.reference` lives it):

* **network legs** of a path (2 one-way legs for a read or an NVMe write, 4 for
  a SCSI write) and the **replication** round trip: pure-delay
  (infinite-server) stations. Any distribution is exact here.
* **link serialisation** (``size / bandwidth``, FIFO per path direction and per
  replication direction): a single-server FCFS queue with that service time.
* **arrays**: FCFS queues with ``concurrency`` slots and the service-time
  distribution of the ops that visit them.

The path of each I/O is drawn with fixed probabilities (the split): the
visit ratios of Reiser and Lavenberg's MVA. Exactly when is the answer exact?

* An array with ``concurrency >= population`` never queues: a pure delay,
  exact for any service distribution.
* An array with ``concurrency = 1`` and exponential service (the same mean for
  every op that visits it) is an M/M/1-type FCFS station: exact.
* An array with ``1 < concurrency < population`` and exponential service is a
  multi-server FCFS station. Plain MVA has no such station; this module uses
  *load-dependent* MVA (marginal queue-length probabilities, service rate
  ``min(j, c) / S`` with ``j`` present), which is exact for it in a
  product-form network (BCMP). It is not an approximation such as Seidmann's.
* Non-exponential FCFS service (constant or uniform array service, link
  serialisation, a read/write mix with different means on one array) is not
  product form. The single-server residence time then uses the usual
  residual-life correction ``S (1 + Q - U) + U S (1 + cv^2) / 2``: approximate.
* A replicated write is a fork-join: the local store runs in parallel with the
  mirror (forward, peer store, ack) and the write completes at the later of
  the two. Not product form. The fork is timed as ``E[max(A, B)]`` with each
  branch taken as its constant part plus an exponential with the mean of its
  queueing part: approximate (exact when one branch dominates, as with a
  millisecond replication link against a sub-millisecond local store).
* Several jobs with different read fractions or block sizes, or several hosts
  with their own splits, are several customer classes; they are merged here
  into one class with the population-weighted mix: approximate.

:attr:`Network.exact` is True only when none of the approximate cases apply.
Deterministic policies (round robin, fixed, queue-depth based) are not a
random split: for them this module gives the bounds, which hold for any
policy, and the MVA figure *for a random split with the same shares*.

Bounds (Lazowska et al., *Quantitative System Performance*, ch. 5), valid for
any policy that gives the paths these shares, whatever its order (round robin
included), and any service distribution used here:
``X <= min(N / R_min, min_k c_k / D_k)`` with ``R_min`` the response time with
no contention (a fork counts as the longer branch mean, by Jensen) and
``D_k`` the demand per I/O at queueing station k with ``c_k`` servers; and the
pessimistic ``X >= N / (R_sum + (N - 1) sum_k D_k)`` (``R_sum``: both fork
branches added), which holds for service distributions with cv <= 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import Model
from ..policies import DeviceView, IORequest, PathView, Policy, PolicySpec, alua_working_set
from ..policies.framework.base import USABLE_STATES
from ..policies.latency_rr import size_normalised
from ..policies.selectors import fixed_preferred
from ..timing.distributions import Constant, Distribution, Exponential
from .queueing import Bounds, Fork, MVAResult, Network, Route, Station, bounds, mmck, mva

__all__ = [
    "Station",
    "Fork",
    "Network",
    "MVAResult",
    "Bounds",
    "Prediction",
    "RandomSplit",
    "mva",
    "bounds",
    "build_network",
    "policy_split",
    "predict",
    "mmck",
]


# -- from a compiled model ---------------------------------------------------


def _scv(d: Distribution) -> float:
    """Squared coefficient of variation (every distribution carries its variance)."""
    m = d.mean
    var = getattr(d, "variance", 0.0)
    return var / (m * m) if m > 0 and var == var else 0.0


def _second_moment(d: Distribution) -> float:
    return (1.0 + _scv(d)) * d.mean * d.mean


def _mixture_station(name: str, servers: int, parts: Sequence[tuple[float, Distribution]]) -> Station:
    """An FCFS station whose visits draw service from a weighted mix of distributions."""
    total = sum(w for w, _ in parts)
    mean = sum(w * d.mean for w, d in parts) / total
    m2 = sum(w * _second_moment(d) for w, d in parts) / total
    scv = m2 / (mean * mean) - 1.0 if mean > 0 else 0.0
    dists = [d for w, d in parts if w > 0]
    exponential = all(isinstance(d, Exponential) for d in dists) and len({d.mean for d in dists}) == 1
    constant = all(isinstance(d, Constant) for d in dists) and len({d.mean for d in dists}) == 1
    return Station(name, "queue", mean, servers, exponential, constant, max(scv, 0.0))


def build_network(model: Model, split: Sequence[float]) -> Network:
    """The closed network of ``model`` with I/Os sent to path p with probability ``split[p]``.

    ``split`` has one share per model path and sums to 1 over all paths (with
    several hosts, each host's shares are already weighted by its population).
    """
    if len(split) != len(model.paths):
        raise ValueError(f"split has {len(split)} shares for {len(model.paths)} paths")
    total = float(sum(split))
    if not total > 0:
        raise ValueError("split must give some path a share > 0")
    split = [s / total for s in split]
    N = model.outstanding
    notes: list[str] = []
    jobs = model.jobs
    pop = sum(j.iodepth for j in jobs)
    read = sum(j.iodepth * j.read_fraction for j in jobs) / pop
    if len({(j.read_fraction, j.sizes, j.size_weights) for j in jobs}) > 1:
        notes.append("jobs with different read fractions or block sizes merged into one class")
    used_hosts = {model.paths[p].host for p, s in enumerate(split) if s > 0}
    if len({j.host for j in jobs}) > 1 or len(used_hosts) > 1:
        notes.append("several hosts merged into one class")
    size_w: dict[int, float] = {}
    for j in jobs:
        for size, w in zip(j.sizes, j.size_weights):
            size_w[size] = size_w.get(size, 0.0) + w * j.iodepth / pop

    def serial(name: str, bw: float) -> Station:
        parts = [(w, Constant(size / bw)) for size, w in size_w.items()]
        s = _mixture_station(name, 1, parts)
        return s

    stations: list[Station] = []
    index: dict[str, int] = {}

    def add(s: Station) -> int:
        if s.name not in index:
            index[s.name] = len(stations)
            stations.append(s)
        return index[s.name]

    # array visits by op: (array, op) -> weight per I/O, to mix the service distribution
    array_parts: dict[int, dict[str, float]] = {}
    routes: list[tuple[float, list[Any], int, str]] = []
    scsi = model.protocol == "scsi"
    repl = model.replication
    for p, share in enumerate(split):
        if share <= 0:
            continue
        path = model.paths[p]
        a = path.array
        lat = path.one_way_latency
        const = lat.is_constant
        for op, prob in (("read", read), ("write", 1.0 - read)):
            if prob <= 0:
                continue
            legs = 2 if op == "read" or not scsi else 4
            seg: list[Any] = [add(Station(f"{path.name} legs ({op})", "delay", legs * lat.mean, constant=const))]
            if path.bandwidth:
                direction = "to host" if op == "read" else "to array"
                seg.append(add(serial(f"{path.name} link {direction}", path.bandwidth)))
            parts = array_parts.setdefault(a, {})
            parts[op] = parts.get(op, 0.0) + share * prob
            seg.append(("array", a, op))
            peer = model.arrays[a].peer
            if op == "write" and peer is not None:
                assert repl is not None
                mirror: list[Any] = []
                if repl.bandwidth:
                    mirror.append(add(serial(f"replication link {model.arrays[a].name}->{model.arrays[peer].name}", repl.bandwidth)))
                rl = repl.one_way_latency
                mirror.append(add(Station("replication round trip", "delay", 2 * rl.mean, constant=rl.is_constant)))
                mirror.append(("array", peer, "write"))
                pp = array_parts.setdefault(peer, {})
                pp["write"] = pp.get("write", 0.0) + share * prob
                seg[-1] = ("fork", [seg[-1]], mirror)
            routes.append((share * prob, seg, p, op))

    for a, parts in sorted(array_parts.items()):
        arr = model.arrays[a]
        mix = [(w, arr.read_service if op == "read" else arr.write_service) for op, w in parts.items()]
        add(_mixture_station(f"array {arr.name}", arr.concurrency, mix))
        if len(parts) > 1 and arr.read_service != arr.write_service and arr.concurrency < N:
            notes.append(f"array {arr.name}: reads and writes with different service times share its slots")

    def resolve(x: Any) -> Any:
        if isinstance(x, tuple) and x[0] == "array":
            return index[f"array {model.arrays[x[1]].name}"]
        if isinstance(x, tuple) and x[0] == "fork":
            return Fork((tuple(resolve(y) for y in x[1]), tuple(resolve(y) for y in x[2])))
        return x

    out_routes = tuple(Route(prob, tuple(resolve(x) for x in seg), p, op) for prob, seg, p, op in routes)
    return Network(tuple(stations), out_routes, N, tuple(notes))


# -- a policy's split ---------------------------------------------------------


class RandomSplit(Policy):
    """Send each I/O to a path drawn with fixed probabilities (the MVA's visit ratios).

    ``weights``: a mapping of path name to weight, or one weight per path of
    the device in order. Only usable paths (up, AO or ANO) are drawn; their
    weights are renormalised; None (the I/O waits) when no weighted path is
    usable. It ignores ALUA preference on purpose: it is the split the
    analytic model assumes, for validation, not a policy to deploy. A Python
    policy, so it runs on the reference engine.
    """

    name = "random-split"

    def __init__(self, weights: Mapping[str, float] | Sequence[float]) -> None:
        if isinstance(weights, Mapping):
            self.weights: dict[str, float] | list[float] = {str(k): float(v) for k, v in weights.items()}
            values = list(self.weights.values())
        else:
            self.weights = [float(w) for w in weights]
            values = self.weights
        if any(not w >= 0 for w in values) or not sum(values) > 0:
            raise ValueError("random-split weights must be >= 0 and not all 0")

    def weight(self, position: int, name: str) -> float:
        if isinstance(self.weights, dict):
            return self.weights.get(name, 0.0)
        return self.weights[position] if position < len(self.weights) else 0.0

    def bind(self, device: DeviceView, rng: np.random.Generator) -> None:
        super().bind(device, rng)
        self._w = [self.weight(i, p.name) for i, p in enumerate(device.paths)]

    def select(self, io: IORequest) -> PathView | None:
        paths = self.device.paths
        total = sum(w for w, p in zip(self._w, paths) if w > 0 and p.usable)
        if total <= 0:
            return None
        u = self.rng.random() * total
        last = None
        for w, p in zip(self._w, paths):
            if w > 0 and p.usable:
                last = p
                u -= w
                if u < 0:
                    return p
        return last

    def config_string(self) -> str:
        shares = ",".join(f"{p.name}={w:g}" for w, p in zip(self._w, self.device.paths) if w > 0)
        return f"{{policy=random-split;{shares}}}"


class _Alua:
    """A PathView-like stand-in for the paths at time 0 (the split follows the state a run starts in)."""

    def __init__(self, index: int, name: str, alua: str, nexus: str | None = None) -> None:
        self.index, self.name, self.alua, self.nexus = index, name, alua, nexus
        self.usable = alua in USABLE_STATES


@dataclass(frozen=True)
class Split:
    shares: tuple[float, ...] | None  # one per model path, summing to 1; None: no fixed split
    basis: str  # why these shares
    fixed: bool  # the policy itself draws at random with these shares (MVA exact when the network is)


def _host_split(model: Model, host: int, spec: PolicySpec | None, policy: Any) -> tuple[dict[int, float] | None, str, bool]:
    paths = [_Alua(p.index, p.name, p.alua, model.controllers[p.controller].name) for p in model.host_paths(host)]
    if isinstance(policy, RandomSplit):
        w = {p.index: policy.weight(i, p.name) for i, p in enumerate(paths) if p.usable}
        total = sum(w.values())
        if total <= 0:
            return None, "random split: no weighted usable path", True
        return {k: v / total for k, v in w.items() if v > 0}, "random split (the policy's weights)", True
    if spec is None:
        return None, f"{getattr(policy, 'name', type(policy).__name__)}: a Python policy, split unknown", False
    name, prm = spec.name, spec.as_dict()
    if name == "rr":
        working = alua_working_set(paths, bool(prm.get("use_ano", 0)))  # type: ignore[arg-type]
        if not working:
            return None, "rr: no working path", False
        how = "I/O count" if prm.get("type", "iops") == "iops" else "bytes (equal I/O counts for one block size)"
        return (
            {p.index: 1.0 / len(working) for p in working},
            f"rr: equal shares over its {len(working)} working path(s), by {how}",
            False,
        )
    if name in ("fixed", "mru"):
        working = alua_working_set(paths)  # type: ignore[arg-type]
        chosen = None
        if name == "fixed":
            preferred = fixed_preferred(paths, prm.get("preferred", ""))
            chosen = preferred if preferred.usable else (working[0] if working else None)
        elif working:
            chosen = working[0]
        if chosen is None:
            return None, f"{name}: no usable path", False
        return {chosen.index: 1.0}, f"{name}: every I/O on {chosen.name}", False
    if name == "latency":
        return None, "latency", False  # settled in policy_split (needs the sampled latencies)
    return None, f"{name}: no analytic split for this policy", False


def _latency_split(model: Model, host: int, prm: dict[str, Any]) -> tuple[dict[int, float] | None, str]:
    """latency RR after its first evaluation: sample the working set equally, keep the fast ones."""
    paths = [_Alua(p.index, p.name, p.alua, model.controllers[p.controller].name) for p in model.host_paths(host)]
    working = alua_working_set(paths, bool(prm.get("use_ano", 0)))  # type: ignore[arg-type]
    if not working:
        return None, "latency: no working path"
    variant = prm.get("variant", "lqd")
    if variant == "score":
        return None, "latency (score): load-dependent overflow, no fixed split"
    sample = [0.0] * len(model.paths)
    for p in working:
        sample[p.index] = 1.0 / len(working)
    net = build_network(model, sample)
    res = mva(net)
    lat = _per_path_latency(net, res)
    sizes = _mean_size(model)
    norm = {}
    for p in working:
        bw = model.paths[p.index].bandwidth
        norm[p.index] = size_normalised(lat[p.index], sizes, bw)
    best = min(norm.values())
    if variant == "lqd":
        cutoff = float(prm.get("cutoff", 2.0))
        kept = [p for p in working if norm[p.index] <= best * cutoff]
        if max(norm[p.index] for p in kept) > best * (1.0 + 1e-9):
            # latency x (pending + 1) over unequal latencies: the split depends on the load
            return None, f"latency (lqd): {len(kept)} path(s) within {cutoff:g} x the best, unequal: no fixed split"
        # equal latencies: latency x (pending + 1) joins the shortest queue, equal shares
        return (
            {p.index: 1.0 / len(kept) for p in kept},
            f"latency: after the first evaluation, equal shares over the {len(kept)} path(s) within "
            f"{cutoff:g} x the best sampled mean ({best * 1e3:.3f} ms at the sampling load), all alike",
        )
    tol = float(prm.get("tolerance", 0.1))
    kept = [p for p in working if norm[p.index] <= best * (1.0 + tol)]
    return (
        {p.index: 1.0 / len(kept) for p in kept},
        f"latency: after the first evaluation, equal shares over the {len(kept)} path(s) within "
        f"{tol:g} of the best sampled mean ({best * 1e3:.3f} ms at the sampling load)",
    )


def _mean_size(model: Model) -> float:
    pop = model.outstanding
    return sum(j.iodepth * sum(s * w for s, w in zip(j.sizes, j.size_weights)) for j in model.jobs) / pop


def _per_path_latency(net: Network, res: MVAResult) -> dict[int, float]:
    num: dict[int, float] = {}
    den: dict[int, float] = {}
    for rt, t in zip(net.routes, res.route_times):
        if rt.path is None:
            continue
        num[rt.path] = num.get(rt.path, 0.0) + rt.probability * t
        den[rt.path] = den.get(rt.path, 0.0) + rt.probability
    return {p: num[p] / den[p] for p in num if den[p] > 0}


def policy_split(model: Model, policy: Any) -> Split:
    """The long-run path shares a policy's definition implies, at the ALUA states a run starts in.

    RR (any type): equal over its working set; fixed and MRU: one path; latency
    RR (min-set, and lqd when the paths it keeps are alike): equal over the
    paths its first evaluation keeps, predicted from the MVA latencies under
    equal sampling; RandomSplit: its weights. None for policies with no fixed
    split (latency ``variant=score``, lqd over unequal paths, Python policies).
    """
    spec = policy if isinstance(policy, PolicySpec) else None
    if isinstance(policy, str):
        from ..policies import parse_spec

        spec = parse_spec(policy)[0]
    pop = model.outstanding
    hosts = sorted({j.host for j in model.jobs})
    shares = [0.0] * len(model.paths)
    bases, fixed = [], True
    for h in hosts:
        weight = sum(j.iodepth for j in model.jobs if j.host == h) / pop
        if spec is not None and spec.name == "latency":
            part, basis = _latency_split(model, h, spec.as_dict())
            is_fixed = False
        else:
            part, basis, is_fixed = _host_split(model, h, spec, policy)
        if part is None:
            return Split(None, basis, False)
        for p, s in part.items():
            shares[p] += weight * s
        bases.append(basis)
        fixed = fixed and is_fixed
    basis = bases[0] if len(set(bases)) == 1 else "; ".join(f"{model.hosts[h]}: {b}" for h, b in zip(hosts, bases))
    return Split(tuple(shares), basis, fixed)


# -- one run's prediction ----------------------------------------------------


@dataclass
class Prediction:
    """Analytic figures for one run (one policy on one compiled model)."""

    label: str
    model: Model
    split: Split
    bounds: Bounds  # under the policy's split; or, with no split, for the best path alone
    mva: MVAResult | None
    network: Network | None
    notes: list[str] = field(default_factory=list)

    @property
    def iops(self) -> float | None:
        return self.mva.throughput if self.mva else None

    @property
    def kind(self) -> str:
        """What the MVA figure is: exact, or for a random split standing in for the policy."""
        if self.mva is None:
            return "bounds only"
        if self.split.fixed:
            return self.mva.method
        return f"{self.mva.method}, random split with the policy's shares"

    def per_path_latency(self) -> dict[int, float]:
        if self.mva is None or self.network is None:
            return {}
        return _per_path_latency(self.network, self.mva)

    def to_dict(self) -> dict[str, Any]:
        b = self.bounds
        d: dict[str, Any] = {
            "policy": self.label,
            "split": (
                {
                    self.model.paths[p].name
                    if _unique_names(self.model)
                    else f"{self.model.hosts[self.model.paths[p].host]}/{self.model.paths[p].name}": s
                    for p, s in enumerate(self.split.shares)
                    if s > 0
                }
                if self.split.shares is not None
                else None
            ),
            "split_basis": self.split.basis,
            "bounds": {
                "iops_upper": _finite(b.upper),
                "iops_lower": _finite(b.lower),
                "latency_min_us": _finite(b.latency_min * 1e6),
                "bottleneck": b.bottleneck,
                "bottleneck_iops": _finite(b.bottleneck_limit),
            },
            "mva": None,
            "kind": self.kind,
            "notes": list(self.notes),
        }
        if self.mva is not None:
            d["mva"] = {
                "iops": self.mva.throughput,
                "latency_mean_us": self.mva.response * 1e6,
                "exact": self.mva.exact and self.split.fixed,
                "method": self.mva.method,
                "paths_latency_us": {self.model.paths[p].name: t * 1e6 for p, t in self.per_path_latency().items()},
            }
        return d


def _finite(x: float) -> float | None:
    """JSON has no infinity: an unbounded or undefined figure is null."""
    return x if math.isfinite(x) else None


def _unique_names(model: Model) -> bool:
    return len({p.name for p in model.paths}) == len(model.paths)


def _best_path_bounds(model: Model) -> Bounds:
    """Bounds for a policy with no known split, valid whatever it does with the usable paths.

    Latency: no I/O is faster than the fastest path's unloaded latency, so
    X <= N / R_min(fastest path). Capacity: the arrays' slots are busy
    X x (array work per I/O) on average, at most sum_a c_a; an I/O needs at
    least the least work any usable path implies (its array's service, plus
    the peer's for a replicated write). Lower bound: none (0).
    """
    best: Bounds | None = None
    read = sum(j.iodepth * j.read_fraction for j in model.jobs) / model.outstanding
    work = math.inf
    for p in model.paths:
        if p.alua not in USABLE_STATES:
            continue
        one = [0.0] * len(model.paths)
        one[p.index] = 1.0
        b = bounds(build_network(model, one))
        if best is None or b.latency_min < best.latency_min:
            best = b
        a = model.arrays[p.array]
        w = a.write_service.mean + (model.arrays[a.peer].write_service.mean if a.peer is not None else 0.0)
        work = min(work, read * a.read_service.mean + (1.0 - read) * w)
    if best is None:
        return Bounds(model.outstanding, 0.0, 0.0, math.inf, "", math.inf)
    slots = sum(a.concurrency for a in model.arrays)
    capacity = slots / work if work > 0 else math.inf
    upper = min(best.population / best.latency_min, capacity)
    return Bounds(best.population, upper, 0.0, best.latency_min, "all arrays' slots" if capacity < math.inf else "", capacity)


def predict(model: Model, policy: Any, label: str = "") -> Prediction:
    """Bounds and MVA for one policy on one compiled model (faults are ignored: the state at time 0)."""
    split = policy_split(model, policy)
    notes: list[str] = []
    if model.faults:
        notes.append("faults ignored: the paths' state at time 0")
    # what the closed network leaves out (issue 16's host queues): said, not silently mispredicted
    if any(j.rate_iops > 0 for j in model.jobs):
        notes.append("open-loop workloads (rate_iops) predicted as closed loops at iodepth; pathsel validate's M/M/c cases check the open loop")
    if any(h.queue_depth for h in model.host_params):
        notes.append("host queue depth not modelled: the prediction is for the I/Os the devices take (no KAVG)")
    if any(a.per_kib > 0 for a in model.arrays):
        notes.append("service_time_per_kib left out: array service means without their per-KiB part")
    if split.shares is None:
        notes.append("no fixed split: bounds for any policy (N / the fastest path's unloaded latency; all arrays' slots)")
        return Prediction(label, model, split, _best_path_bounds(model), None, None, notes)
    net = build_network(model, split.shares)
    res = mva(net)
    notes.extend(net.notes)
    if net.has_fork:
        notes.append("replicated writes: fork-join timed as E[max(local store, mirror)] (approximate)")
    general = [s.name for k, s in enumerate(net.stations) if s.kind == "queue" and not s.exponential and net.queueing(k)]
    if general:
        links = sum(1 for n in general if " link " in f" {n} ")
        what = [n for n in general if " link " not in f" {n} "] + ([f"{links} link direction(s) (serialisation)"] if links else [])
        notes.append(f"non-exponential FCFS service at {', '.join(what)}: residual-life correction (approximate)")
    if not split.fixed:
        notes.append("the policy is deterministic, not a random split: MVA is for a random split with its shares")
    return Prediction(label, model, split, bounds(net), res, net, notes)


# -- for the command line ------------------------------------------------------


def predict_scenario(scenario: Any, *, duration: float | None = None, seed: int | None = None) -> list[Prediction]:
    """One :class:`Prediction` per run of a loaded :class:`~pathsel.scenario.Scenario`."""
    from ..model import compile_model

    return [predict(compile_model(scenario, run, duration=duration, seed=seed), run.policy, run.label) for run in scenario.runs]


def _table(cols: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(cols)]

    def fmt(row: list[str]) -> str:
        return "  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(row, widths))).rstrip()

    return [fmt(cols), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]


def _iops(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:,.0f}"


def _ms(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x * 1e3:.3f}"


def format_predictions(name: str, preds: list[Prediction], *, paths: bool = False) -> str:
    """``pathsel predict``: bounds for every policy, MVA where a policy has a fixed split."""
    population = preds[0].model.outstanding if preds else 0
    head = (
        f"{name}\n  analytic: closed loop of {population} I/Os; the bounds hold for any order of sending I/Os "
        "that gives the paths these shares; MVA as labelled\n"
    )
    rows = []
    for p in preds:
        b = p.bounds
        rows.append(
            [
                p.label,
                _iops(b.lower),
                _iops(b.upper),
                _iops(p.iops),
                _ms(p.mva.response if p.mva else None),
                _ms(b.latency_min),
                p.kind,
            ]
        )
    cols = ["policy", "IOPS >=", "IOPS <=", "MVA IOPS", "MVA mean (ms)", "unloaded (ms)", "MVA figure"]
    out = [head] + _table(cols, rows, {1, 2, 3, 4, 5}) + [""]
    for p in preds:
        out.append(f"{p.label}:")
        out.append(f"  split: {p.split.basis}")
        if p.bounds.bottleneck:
            out.append(f"  bottleneck: {p.bounds.bottleneck} (at most {_iops(p.bounds.bottleneck_limit)} IOPS)")
        for note in p.notes:
            out.append(f"  note: {note}")
        if paths and p.split.shares is not None:
            lat = p.per_path_latency()
            prow = [
                [p.model.paths[i].name, p.model.arrays[p.model.paths[i].array].name, f"{s:.4f}", _ms(lat.get(i))]
                for i, s in enumerate(p.split.shares)
                if s > 0
            ]
            out.extend("  " + line for line in _table(["path", "array", "share", "MVA mean (ms)"], prow, {2, 3}))
    return "\n".join(out) + "\n"


def predictions_json(name: str, source: str, preds: list[Prediction]) -> dict[str, Any]:
    return {
        "scenario": name,
        "source": source,
        "population": preds[0].model.outstanding if preds else 0,
        "runs": [p.to_dict() for p in preds],
    }


def format_beside(result: Any, preds: list[Prediction]) -> str:
    """``pathsel simulate --predict``: the analytic figures beside the simulated ones."""
    rows = []
    for r, p in zip(result.runs, preds):
        b = p.bounds
        err = f"{r.iops / p.iops - 1:+.1%}" if p.iops else "-"
        rows.append([r.label, _iops(r.iops), _iops(p.iops), err, f"{_iops(b.lower)} .. {_iops(b.upper)}", p.kind])
    # (the bounds are on the long-run mean: a finite run may pass one by its sampling error)
    cols = ["policy", "IOPS", "predicted IOPS", "sim vs MVA", "bounds", "predicted figure"]
    return "analytic beside simulated (pathsel predict for splits and notes):\n" + "\n".join(_table(cols, rows, {1, 2, 3, 4})) + "\n"
