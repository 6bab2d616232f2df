"""What happened, in words: sentences generated from a :class:`~pathsel.results.Result`.

A table says that latency round robin reached 13,516 IOPS; these sentences
say why and when: which paths a policy kept and dropped, how it compares
with the others, when a fault was noticed and how long the host took to
recover, what was retried or failed. Every number is read from the result
(its summary, events, faults and accounting), never from the scenario's
prose.

:func:`story` gives the sentences, :func:`text` wraps them for a terminal
(``pathsel simulate`` prints it under the table) and the report puts them at
its top.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from ..metrics import RunMetrics
from ..model import Model
from .cpu import cpu_sentences
from .fabric import fabric_sentences
from .story_alike import alike_sentences
from .story_hosts import HANDFUL, per_host
from .story_numa import numa_sentences
from .story_queues import array_queue_sentence, queue_sentence
from .story_stall import frozen_words, unfrozen_words
from .subject import subject
from .used import SHARE_USED, per_device, used_paths
from .words import fmt_time, past_end

__all__ = ["story", "text", "fmt_time", "fmt_change", "SHARE_USED", "Run", "Runs"]


class Run(Protocol):
    """What the sentences read of one policy's run (:class:`~pathsel.results.RunResult` is one).

    Declared here, not imported from result.py: result.py imports this module, so the story knows nothing of it.
    """

    @property
    def label(self) -> str: ...
    @property
    def model(self) -> Model: ...
    @property
    def metrics(self) -> RunMetrics: ...
    @property
    def expect_iops(self) -> float | None: ...
    @property
    def expect_tolerance(self) -> float: ...
    @property
    def expect_source(self) -> str: ...
    @property
    def ios(self) -> int: ...
    @property
    def iops(self) -> float: ...
    @property
    def latency_us(self) -> dict[str, float]: ...
    @property
    def accounting(self) -> dict[str, Any]: ...
    @property
    def expectation_error(self) -> float | None: ...
    def paths(self) -> list[dict[str, Any]]: ...
    def hosts(self) -> list[dict[str, Any]]: ...
    def faults(self) -> list[dict[str, Any]]: ...


class Runs(Protocol):
    """What the sentences read of a whole result: its runs (:class:`~pathsel.results.Result` is one)."""

    @property
    def runs(self) -> Sequence[Run]: ...


#: IOPS closer than this are "the same"
SAME = 0.02
_PATH_EVENTS = ("path_down", "path_up", "alua")


def _ms(seconds_or_us: float, *, us: bool = False) -> str:
    ms = seconds_or_us / 1e3 if us else seconds_or_us * 1e3
    if ms >= 100:
        return f"{ms:,.0f} ms"
    return f"{ms:.3g} ms" if ms >= 1 else f"{ms:.2g} ms"


def fmt_change(ratio: float) -> str:
    """``a / b - 1`` as a signed percentage: ``+84 %``, ``-0.4 %``."""
    pct = ratio * 100
    return f"{pct:+.0f} %" if abs(pct) >= 10 else f"{pct:+.1f} %"


def _plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def _list(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# -- paths ---------------------------------------------------------------------


class _Paths:
    """A run's paths by device and name (path names are unique per device only)."""

    def __init__(self, r: Run) -> None:
        model = r.model
        self.model = model
        self.by_name: dict[tuple[str, str], Any] = {}
        for p in model.paths:
            device = model.devices[p.device].name if model.devices else model.hosts[p.host]
            self.by_name[(device, p.name)] = p
        self.several_devices = len({d for d, _ in self.by_name}) > 1
        self.several_hosts = len({p.host for p in model.paths}) > 1

    def array(self, p: Any) -> str:
        return str(self.model.arrays[p.array].name)

    def name(self, p: Any, *, qualify: bool = True) -> str:
        """A path's name, with its host when several hosts have paths of that name."""
        return f"{p.name} on {self.model.hosts[p.host]}" if qualify and self.several_hosts else p.name

    def describe(self, chosen: list[Any], among: list[Any], *, qualify: bool = True) -> str:
        """``the 10 remote paths``, ``all 4 paths``, ``vmhba2:C0:T1:L1``, ``7 of 20 paths (5 local, 2 remote)``;
        ``... of esx1`` when several hosts ran and ``qualify``."""
        n = len(chosen)
        if n == 0:
            return "no path"
        hosts = {p.host for p in chosen}
        of = f" of {self.model.hosts[next(iter(hosts))]}" if qualify and self.several_hosts and len(hosts) == 1 else ""
        if n == len(among) and n > 1:
            return ("both paths" if n == 2 else f"all {n} paths") + of
        arrays = Counter(self.array(p) for p in chosen)
        whole = [a for a in arrays if arrays[a] == sum(1 for p in among if self.array(p) == a)]
        several_arrays = len({self.array(p) for p in among}) > 1
        if several_arrays and len(arrays) == 1 and whole and n > 1:
            return f"the {n} {whole[0]} paths{of}"
        if n <= 3:
            return _list([self.name(p, qualify=qualify) for p in chosen])
        if several_arrays and len(arrays) == 1:
            return f"{n} of {len(among)} paths{of}, all to {next(iter(arrays))}"
        if several_arrays:
            return f"{n} of {len(among)} paths{of} ({', '.join(f'{k} to {a}' for a, k in arrays.items())})"
        return f"{n} of {len(among)} paths{of}"

    def latency_by_array(self, latency_us: dict[str, float], device: str) -> str:
        """Measured latency per array, as a range: ``local 2.31-2.43 ms, remote 6.12-8.14 ms``."""
        groups: dict[str, list[float]] = {}
        for name, us in latency_us.items():
            p = self.by_name.get((device, name))
            if p is not None and math.isfinite(us):
                groups.setdefault(self.array(p), []).append(us)
        parts = []
        for a, v in groups.items():
            lo, hi = min(v), max(v)
            span = _ms(lo, us=True) if _ms(lo, us=True) == _ms(hi, us=True) else f"{_ms(lo, us=True)[:-3]}-{_ms(hi, us=True)}"
            parts.append(f"{a} {span}" if len(groups) > 1 else span)
        return ", ".join(parts)


def _used(r: Run) -> list[Any]:
    # each path's share of its device's I/Os (results/used.py), without the latency percentiles paths() also
    # works out: 16,384 paths' of them cost a second
    return used_paths(r)


def _where(r: Run, used: list[Any], paths: _Paths) -> str:
    """The headline's "on ...": ``all 4 paths``, or with several devices how many of each device's paths carried I/O."""
    n_devices, of_device, used_of = per_device(r, used)
    if n_devices <= 1:
        return "on " + paths.describe(used, list(r.model.paths))
    if not used:
        return "on no path"
    counts = [used_of.get(k, 0) for k in of_device]
    sizes = sorted(set(of_device.values()))
    arrays = _list(sorted({paths.array(p) for p in used}))
    unit = "devices" if r.model.devices else "hosts"  # without [[volumes]] each host's paths are its one device
    if all(used_of.get(k, 0) == n for k, n in of_device.items()):
        # "all 1 paths" and "all 2 paths" read as slips: the one path, both paths
        each = "all the paths" if len(sizes) > 1 else {1: "the one path", 2: "both paths"}.get(sizes[0], f"all {sizes[0]} paths")
        return f"on {each} of each of its {n_devices:,} {unit} ({len(used):,} paths, to {arrays})"
    lo, hi = min(counts), max(counts)
    total = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
    return f"on {lo if lo == hi else f'{lo}-{hi}'} of the {total} paths of each of its {n_devices:,} {unit} ({len(used):,} of {len(r.model.paths):,} paths, to {arrays})"


# -- sentences -------------------------------------------------------------------


def _headline(r: Run, others: list[Run], paths: _Paths) -> str:
    lat = r.latency_us
    where = _where(r, _used(r), paths)
    s = f"{r.iops:,.0f} IOPS at {_ms(lat['mean'], us=True)} mean and {_ms(lat['p99'], us=True)} p99, {where}"
    if not r.ios:
        return "No I/O completed in the measured window."
    comparisons = []
    ranked = sorted(others, key=lambda o: o.iops)
    if len(ranked) > 3:  # the slowest, the fastest, and any it matched
        ranked = [ranked[0], ranked[-1], *(o for o in ranked[1:-1] if abs(_ratio(r, o)) < SAME)]
    for o in ranked:
        d = _ratio(r, o)
        if math.isnan(d):
            continue
        if abs(d) < SAME:
            comparisons.append(f"the same IOPS as {o.label} ({fmt_change(d)})")
        else:
            comparisons.append(f"{abs(d) * 100:.0f} % {'more' if d > 0 else 'fewer'} IOPS than {o.label}")
    if comparisons:
        s += "; " + _list(comparisons)
    return s + "."


def _ratio(r: Run, o: Run) -> float:
    return r.iops / o.iops - 1 if o.iops > 0 else math.nan


def _expectation(r: Run) -> str | None:
    if r.expect_iops is None:
        return None
    err = r.expectation_error or 0.0
    where = f" ({r.expect_source})" if r.expect_source else ""
    verdict = "within" if abs(err) <= r.expect_tolerance else "OUTSIDE"
    return f"That is {fmt_change(err)} from the measured {r.expect_iops:,.0f} IOPS{where}, {verdict} its ±{r.expect_tolerance * 100:.0f} % tolerance."


def _evaluations(r: Run, paths: _Paths) -> list[tuple[float, str]]:
    """Latency round robin (and HPP's latency scheme): what each evaluation kept and dropped."""
    out = []
    by_device: dict[str, list[dict[str, Any]]] = {}
    for e in r.metrics.events:
        if e["event"] == "evaluation":
            by_device.setdefault(e["device"], []).append(e)
    if len(by_device) > HANDFUL:  # a cluster: a sentence per device would be a page
        return _evaluations_summed(r, paths, by_device)
    for device, evals in by_device.items():
        on = f"On {device}, " if paths.several_devices else ""
        among = [p for (d, _), p in paths.by_name.items() if d == device]
        previous: tuple[str, ...] | None = None
        changes = 0
        same = 0
        for k, e in enumerate(evals):
            active = [paths.by_name[(device, n)] for n in e.get("active", ()) if (device, n) in paths.by_name]
            dropped = [paths.by_name[(device, n)] for n in e.get("dropped", ()) if (device, n) in paths.by_name]
            key = tuple(sorted(e.get("active", ())))
            if previous is not None and key == previous:
                same += 1
                continue
            previous = key
            changes += 1
            if changes > 4:  # a policy that keeps changing its mind: the count says so below
                continue
            measured = paths.latency_by_array(e.get("latency_us", {}), device)
            seen = f" (measured {measured})" if measured else ""
            lead = "evaluated" if k == 0 else "re-evaluated"
            if dropped:
                s = (
                    f"{on}at {fmt_time(e['t'])} it {lead} the paths{seen}, dropped {paths.describe(dropped, among, qualify=False)} "
                    f"and kept {paths.describe(active, among, qualify=False)}."
                )
            else:
                s = f"{on}at {fmt_time(e['t'])} it {lead} the paths{seen} and kept {paths.describe(active, among, qualify=False)}."
            out.append((e["t"], s[0].upper() + s[1:]))
        last = evals[-1]["t"]
        if changes > 4:
            s = f"{on}it changed its set of paths {changes} times in {len(evals)} evaluations."
            out.append((last, s[0].upper() + s[1:]))
        elif same:
            s = f"{on}{_plural(same, 'later evaluation')} kept the same paths."
            out.append((last, s[0].upper() + s[1:]))
        idle = _kept_unused(r, paths, device, evals[-1])
        if idle:
            out.append((last, idle))
    return out


def _kept_unused(r: Run, paths: _Paths, device: str, last: dict[str, Any]) -> str | None:
    """Kept is not used: a path the last evaluation kept may still carry (almost) no I/O, as the table counts it."""
    kept = [paths.by_name[(device, n)] for n in last.get("active", ()) if (device, n) in paths.by_name]
    used = {p.index for p in _used(r)}
    idle = [p for p in kept if p.index not in used]
    if not idle or len(idle) == len(kept):
        return None
    hist = r.metrics.path_hist
    none = all(hist[p.index].n == 0 for p in idle)
    what = "carried no I/O" if none else f"carried under {SHARE_USED * 100:.1f} % of the I/Os"
    names = paths.describe(idle, [p for (d, _), p in paths.by_name.items() if d == device], qualify=False)
    s = f"Of the kept paths, {names} {what} in the measured window, so the table counts {len(kept) - len(idle)} paths used"
    if _scores(r):
        measured = last.get("latency_us", {})
        slow = [float(measured[p.name]) for p in idle if isinstance(measured.get(p.name), (int, float))]
        highest = slow and max(slow) >= max(float(v) for v in measured.values())
        seen = f", from its measured {_ms(max(slow), us=True)}{' (the highest)' if highest else ''}," if slow and len(idle) == 1 else ""
        this = "this path's" if len(idle) == 1 else "theirs"
        s += f": each I/O goes to the kept path with the lowest measured latency x (I/Os in flight + 1), and {this}{seen} never was the lowest"
    return s + "."


def _scores(r: Run) -> bool:
    """Whether the policy sends each I/O to the kept path with the lowest latency x (in flight + 1): then a kept path
    whose measured latency never was the lowest carries nothing."""
    spec = str(getattr(r, "policy", ""))
    return "score" in spec or "lqd" in spec or (spec.split(":")[0] in ("latency", "hpp") and "min-set" not in spec)


def _kept_unused_summed(r: Run, paths: _Paths, by_device: dict[str, list[dict[str, Any]]]) -> str | None:
    """:func:`_kept_unused` over many devices: how many kept paths carried (almost) nothing, on how many devices, so
    that "every path kept" beside "3-5 of the 8 paths used" reads as two facts, not a contradiction."""
    used = {p.index for p in _used(r)}
    kept = idle = 0
    devices = 0
    arrays: Counter[str] = Counter()
    for device, evals in by_device.items():
        mine = [paths.by_name[(device, n)] for n in evals[-1].get("active", ()) if (device, n) in paths.by_name]
        unused = [p for p in mine if p.index not in used]
        kept += len(mine)
        if unused and len(unused) < len(mine):
            idle += len(unused)
            devices += 1
            arrays.update(paths.array(p) for p in unused)
    if not idle:
        return None
    on = f"all {devices:,} devices" if devices == len(by_device) else f"{devices:,} of the {len(by_device):,} devices"
    to = f" ({', '.join(f'{k:,} to {a}' for a, k in arrays.most_common())})" if len({paths.array(p) for p in paths.by_name.values()}) > 1 else ""
    s = (
        f"Kept is not used: on {on}, {_plural(idle, 'kept path')}{to} carried under "
        f"{SHARE_USED * 100:.1f} % of their device's I/Os in the measured window, so the table counts {kept - idle:,} of the {kept:,} kept paths used"
    )
    if _scores(r):
        s += ": each I/O goes to the kept path with the lowest measured latency x (I/Os in flight + 1), and theirs seldom or never was the lowest"
    return s + "."


def _evaluations_summed(r: Run, paths: _Paths, by_device: dict[str, list[dict[str, Any]]]) -> list[tuple[float, str]]:
    """Evaluations on many devices: when they began, and what the last one kept across the devices."""
    firsts = [evals[0]["t"] for evals in by_device.values()]
    changes = 0
    kept_all: list[str] = []
    dropped: list[tuple[str, int, int]] = []
    # Counted over the candidates only, as the events count them ("kept 2, dropped 0"): the paths an evaluation
    # weighed. A device's other paths (ANO ones while AO ones serve) were never candidates, so never dropped.
    outside: Counter[str] = Counter()  # the non-candidates' ALUA states, over the devices
    shapes: set[tuple[int, int]] = set()  # (candidates, paths) per device
    for device, evals in by_device.items():
        mine = [p for (d, _), p in paths.by_name.items() if d == device]
        final = evals[-1]
        active = len(final.get("active", ()))
        weighed = set(final.get("active", ())) | set(final.get("dropped", ()))
        among = len(weighed) if "dropped" in final else len(mine)
        others = [p for p in mine if p.name not in weighed] if "dropped" in final else []
        outside.update(str(p.alua) for p in others)
        shapes.add((among, len(mine)))
        changes += len({tuple(sorted(e.get("active", ()))) for e in evals}) - 1
        if active >= among:
            kept_all.append(device)
        else:
            dropped.append((device, active, among))
    lo, hi = min(firsts), max(firsts)
    when = fmt_time(lo) if lo == hi else f"{fmt_time(lo)}-{fmt_time(hi)}"
    once = all(len(evals) == 1 for evals in by_device.values())  # no re-evaluation within the run: "the last" misleads
    s = f"It evaluated the paths of each of {len(by_device):,} devices {'once, at' if once else 'first at'} {when}"
    last = "that evaluation" if once else "the last evaluation"
    if not dropped:
        s += f"; {last} kept every path it weighed on all {len(by_device):,}" if outside else f"; {last} kept every path on all {len(by_device):,}"
    else:
        alike = len({(k, n) for _, k, n in dropped}) == 1  # "each kept 3 of 4" says it for all of them
        if alike:
            _, k, n = dropped[0]
            eg = f"each kept {k} of {n}" if len(dropped) > 1 else f"{dropped[0][0]} kept {k} of {n}"
        else:
            eg = ", ".join(f"{d} kept {k} of {n}" for d, k, n in dropped[:2]) + (", ..." if len(dropped) > 2 else "")
        if not kept_all:  # no device kept every path: "kept every path on 0" is no sentence
            on = "the one device" if len(dropped) == 1 else "both devices" if len(dropped) == 2 else f"each of the {len(dropped):,}"
            some = "a path" if all(n - k == 1 for _, k, n in dropped) else "paths"
            s += f"; {last} dropped {some} on {on} ({eg})"
        else:
            s += f"; {last} kept every path on {len(kept_all):,} and dropped some on {len(dropped):,} ({eg})"
    if outside:
        states = _list([f"{st}" for st, _ in outside.most_common()])
        if len(shapes) == 1:
            n, total = next(iter(shapes))
            s += f" ({n} of each device's {total} paths were candidates: the other {total - n} were {states})"
        else:
            s += f" (counted over the candidate paths: {_plural(sum(outside.values()), 'other path')}, {states}, never were candidates)"
    if changes:
        s += f"; the sets of paths changed {_plural(changes, 'time')} in all"
    idle = _kept_unused_summed(r, paths, by_device)
    return [(hi, s + "."), *([(hi, idle)] if idle else [])]


def _other_policy_events(r: Run) -> list[str]:
    counts = Counter(e["event"] for e in r.metrics.events if e["event"] not in ("evaluation", "sampling_started", "fault", *_PATH_EVENTS))
    out = []
    for name, n in counts.items():
        first = next(e for e in r.metrics.events if e["event"] == name)
        if name == "ejection" and "path" in first:  # guard's: which paths, why, when
            out.append(_ejections([e for e in r.metrics.events if e["event"] == name]))
            continue
        if name == "readmission":
            continue  # told with the ejections
        word = name.replace("_", " ")
        out.append(f"It logged {_plural(n, word)}, the first at {fmt_time(first['t'])}.")
    return out


def _ejections(events: list[dict[str, Any]]) -> str:
    """guard's ejections in one sentence: the paths (most ejected first), the reason of each one's first, the count."""
    by_path: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_path.setdefault(str(e["path"]), []).append(e)
    order = sorted(by_path, key=lambda p: (-len(by_path[p]), by_path[p][0]["t"]))

    def one(p: str) -> str:
        evs = by_path[p]
        first = f"for {evs[0]['why']} at {fmt_time(evs[0]['t'])}"
        if len(evs) == 1:
            return f"{p} ({first})"
        times = "twice" if len(evs) == 2 else f"{len(evs):,} times"
        return f"{p} ({times}, first {first})"

    shown = [one(p) for p in order[:3]]
    more = f" and {_plural(len(order) - 3, 'other path')}" if len(order) > 3 else ""
    return f"It ejected {_list(shown)}{more}."


_WHAT = {
    "path_down": "{target} went down",
    "path_up": "{target} came back",
    "alua": "{target} turned {state}",
    "array_down": "array {target} failed",
    "array_up": "array {target} came back",
    "replication_down": "the replication link went down",
    "replication_up": "the replication link came back",
    "latency": "the latency on {target} changed",
    "loss": "{target} started losing frames",
    "slow_drain": "the port on {target} started draining slowly",
}
#: faults whose change the host notices (a path event): a latency, loss or slow drain changes no path's state
_NOTICED = ("path_down", "path_up", "alua", "array_down", "array_up", "owner")
_DOWN = ("path_down", "array_down", "replication_down", "latency", "loss", "alua", "slow_drain")


def _faults(r: Run, paths: _Paths) -> list[tuple[float, str]]:
    model = r.model
    out = []
    states = {(f.at, f.what): f.state for f in model.faults if not f.revert}
    times = sorted({f.at for f in model.faults if not f.revert and f.at < model.end})  # a fault past the end never came
    late = sorted({f["at_s"] for f in r.faults() if f.get("after_end")})
    if late:
        when = _list([fmt_time(t) for t in late])
        out.append(
            (
                model.end,
                f"The scenario's {'fault' if len(late) == 1 else 'faults'} at {when} came {past_end(late, model.end)} the run's end at {fmt_time(model.end)}, so {'it' if len(late) == 1 else 'they'} did not happen; a longer --duration shows {'it' if len(late) == 1 else 'them'}.",
            )
        )
    for f in r.faults():
        if f.get("after_end"):
            continue
        at, what = f["at_s"], f["what"]
        faults = [x for x in model.faults if not x.revert and x.at == at and x.what == what]
        controllers = {c for x in faults for c in x.controllers}
        hit = [p for p in model.paths if p.controller in controllers]
        hosts = sorted({p.host for p in hit})
        among = [p for p in model.paths if p.host in hosts]
        target = paths.describe(hit, among) if hit and not what.startswith(("array", "replication")) else f["target"]
        s = f"At {fmt_time(at)} " + _WHAT.get(what, what + " on {target}").format(target=target, state=states.get((at, what)))
        if what == "latency" and hit and all(not x.replication for x in faults):  # by how much, not just "changed"
            s = f"At {fmt_time(at)} " + _latency_turns(model, paths, faults, among)
        if what == "alua" and len({x.state for x in faults}) > 1:  # paths turning different states at once: each its own
            s = f"At {fmt_time(at)} " + _alua_turns(model, paths, faults, among)
        if what in ("path_down", "path_up") and len(hosts) == 1 and len(hit) > 1 and paths.several_devices:
            s = f"At {fmt_time(at)} " + _nexus_fault(model, paths, what, controllers, hit, among)
        # when the host learnt of it: its first path event on a path the fault touched
        names = {(model.devices[p.device].name if model.devices else model.hosts[p.host], p.name) for p in hit}
        # only a change of the paths' state is noticed (a latency or loss change is not), and before the next fault
        # on those paths (whose own event it would be)
        again = min((x.at for x in model.faults if x.at > at and controllers & set(x.controllers)), default=math.inf)
        noticed = next(
            (
                e
                for e in r.metrics.events
                if what in _NOTICED and e["event"] in _PATH_EVENTS and at <= e["t"] < again and (e.get("device"), e.get("path")) in names
            ),
            None,
        )
        noticed_after = None if noticed is None else noticed["t"] - at
        if noticed is not None:
            delay = noticed["t"] - at
            detection = {model.host_params[h].detection for h in hosts} if model.host_params else set()
            if delay <= 1e-12:
                s += " and the host knew at once"
            else:
                s += f"; the host noticed at {fmt_time(noticed['t'])}"
                if len(detection) == 1 and math.isclose(delay, next(iter(detection)), abs_tol=1e-9):
                    s += f", after its {fmt_time(delay)} detection delay"
        elif hit and what in ("path_down", "path_up", "alua", "array_down", "array_up"):
            delays = sorted({model.host_params[h].detection for h in hosts}) if model.host_params else []
            s += "; the host never noticed" + (f" (detection delay {fmt_time(delays[0])})" if len(delays) == 1 else "")
        clauses = []
        share = _share_before(r, hit, at)
        if hit and share is not None and what in ("path_down", "array_down"):
            whose = "its" if not paths.several_hosts else _list([f"{model.hosts[h]}'s" for h in hosts])
            if share == 0.0:
                clauses.append("this policy had no I/O there")
            else:
                clauses.append(f"this policy had {share * 100:.0f} % of {whose} I/Os there")
        if what in _DOWN and not f.get("iops_before"):  # at the start: no level before it to come back to
            if at < r.metrics.interval:
                clauses.append("it was in place from the start of the run, so there is no earlier IOPS to compare with")
        elif what in _DOWN:
            nxt = next((t for t in times if t > at), None)
            iops = "the cluster's IOPS" if paths.several_hosts else "IOPS"  # a dip per host and VM is the stall's
            if f["recovery_s"] is None:
                until = f"until the next fault at {fmt_time(nxt)}" if nxt is not None else "to the end of the run"
                clauses.append(f"{iops} stayed more than 5 % below its earlier level {until}")
            elif f["recovery_s"] > 0:
                clauses.append(f"{iops} was back within 5 % of its earlier level {fmt_time(f['recovery_s'])} after the fault")
            else:
                clauses.append(f"{iops} did not drop by 5 %")
        # the VMs that froze come first (story_stall): a cluster's IOPS can hold while one host's VMs wait
        frozen = frozen_words(f, model, noticed_after)
        if frozen:
            s = f"At {fmt_time(at)} {frozen}. The cause: " + s.removeprefix(f"At {fmt_time(at)} ")
        else:
            clauses.append(unfrozen_words(f, paths.several_hosts))
        if f["errors"] and not (frozen and any(w["failed"] for w in f.get("frozen") or [])):  # frozen words said it
            clauses.append(f"{_plural(f['errors'], 'I/O')} failed")
        out.append((at, s + "".join("; " + c for c in clauses) + "."))
    return out


def _alua_turns(model: Any, paths: _Paths, faults: list[Any], among: list[Any]) -> str:
    """ALUA changes at one time to different states, each named: ``vmhba0:C0:T1:L1 and vmhba1:C0:T1:L1 turned AO
    and vmhba0:C0:T0:L1 and vmhba1:C0:T0:L1 turned ANO``."""
    by_state: dict[str, list[Any]] = {}
    for x in faults:
        hit = [p for p in model.paths if p.controller in set(x.controllers)]
        by_state.setdefault(str(x.state), []).extend(p for p in hit if p not in by_state.get(str(x.state), []))
    return _list([f"{paths.describe(hit, among)} turned {state}" for state, hit in by_state.items()])


def _latency_turns(model: Any, paths: _Paths, faults: list[Any], among: list[Any]) -> str:
    """Latency faults at one time by what they add: ``vmhba0:C0:T1:L1 got 100 us more latency each way`` or ``the
    added latency on vmhba0:C0:T1:L1 was taken away`` (``add`` is from the path's own latency, not from the last)."""
    by_add: dict[float, list[Any]] = {}
    for x in faults:
        mine = by_add.setdefault(float(x.add), [])
        mine.extend(p for p in model.paths if p.controller in set(x.controllers) and p not in mine)
    parts = []
    for add, hit in sorted(by_add.items(), key=lambda kv: -kv[0]):
        target = paths.describe(hit, among)
        parts.append(f"{target} got {fmt_time(add)} more latency each way" if add > 0 else f"the latency added on {target} was taken away")
    return _list(parts)


def _nexus_fault(model: Any, paths: _Paths, what: str, controllers: set[int], hit: list[Any], among: list[Any]) -> str:
    """A nexus (an HBA port to a target port) carries one path per volume: ``esx01 lost 64 of its 512 paths:
    nexus vmhba1:C0:T0 to site-a, its path to each of 64 volumes``."""
    host = model.hosts[hit[0].host]
    nexus = _list(sorted({model.controllers[c].name for c in controllers if model.controllers[c].host == hit[0].host}))
    arrays = _list(sorted({paths.array(p) for p in hit}))
    volumes = len({p.device for p in hit})
    word = "nexus" if len(controllers) == 1 else "nexuses"
    verb = "lost" if what == "path_down" else "got back"
    return f"{host} {verb} {len(hit):,} of its {len(among):,} paths: {word} {nexus} to {arrays}, its path to each of {_plural(volumes, 'volume')}"


def _share_before(r: Run, hit: list[Any], at: float) -> float | None:
    """The share of their hosts' I/Os the paths ``hit`` carried in the interval before ``at`` (None: no such interval)."""
    m = r.metrics
    b = min(int(at / m.interval), m.n_bins) - 1
    if b < 0 or not hit:
        return None
    hosts = {p.host for p in hit}
    total = sum(int(m.ts_path_ios[b, p.index]) for p in r.model.paths if p.host in hosts)
    if total == 0:
        return None
    return float(sum(int(m.ts_path_ios[b, p.index]) for p in hit)) / total


def _accounting(r: Run) -> str | None:
    a = r.accounting
    parts = []
    if a["retried"]:
        parts.append(f"{_plural(a['retried'], 'I/O')} {'was' if a['retried'] == 1 else 'were'} retried")
    if a["timed_out"]:
        parts.append(f"{_plural(a['timed_out'], 'attempt')} timed out")
    if a.get("qfull"):
        parts.append(f"{_plural(a['qfull'], 'command')} came back QUEUE FULL from a target port")
    if a["frames_lost"]:
        parts.append(f"{_plural(a['frames_lost'], 'frame')} {'was' if a['frames_lost'] == 1 else 'were'} lost and resent")
    if a.get("refused"):
        offered = a["refused"] + a["issued"]
        parts.append(
            f"{_plural(a['refused'], 'arrival')} of {offered:,} {'was' if a['refused'] == 1 else 'were'} refused "
            f"at a full iodepth ({a['refused'] / offered:.2%}, never issued)"
        )
    if not parts and not a["failed"]:
        return None
    failed = "none failed" if not a["failed"] else f"{_plural(a['failed'], 'I/O')} failed"
    return f"Over the whole run {_list(parts + [failed])}."


def _overview(result: Runs) -> list[str]:
    """What the scenario is about; with three policies or more, the best of them; policies that gave identical figures."""
    if not result.runs:
        return []
    return [subject(result.runs[0].model), *_best(result), *alike_sentences(list(result.runs))]


def _best(result: Runs) -> list[str]:
    runs = [r for r in result.runs if r.ios]
    if len(runs) < 3:  # two runs: each one's comparison with the other says it all
        return []
    best = max(runs, key=lambda r: r.iops)
    low = min(runs, key=lambda r: r.latency_us["p99"])
    ties = [r.label for r in runs if r is not best and abs(_ratio(r, best)) < SAME]
    s = f"Most IOPS: {best.label} ({best.iops:,.0f})"
    if ties:
        s += f", with {_list(ties)} within {SAME * 100:.0f} %"
    s += f". Lowest p99 latency: {low.label} ({_ms(low.latency_us['p99'], us=True)})."
    return [s]


def _capped(sentences: list[str], what: str) -> list[str]:
    """A sentence per host past a handful is a page: the first few, then how many more the table holds."""
    if len(sentences) <= HANDFUL + 1:
        return sentences
    return [*sentences[:HANDFUL], f"{len(sentences) - HANDFUL:,} more such notes on {what}: see the tables (--by host, --json)."]


def story(result: Runs) -> list[tuple[str | None, list[str]]]:
    """The sentences: ``(None, [overview])`` first (what the scenario is about; with three policies or more, the
    best; identical policies), then ``(label, [sentences])`` per run."""
    out: list[tuple[str | None, list[str]]] = []
    overview = _overview(result)
    if overview:
        out.append((None, overview))
    for r in result.runs:
        paths = _Paths(r)
        others = [o for o in result.runs if o is not r]
        said = [_headline(r, others, paths)]
        said += [s for s in (per_host(r), array_queue_sentence(r)) if s]
        said += [s for s in (_expectation(r),) if s]
        said += _other_policy_events(r)
        # what the policy did and what happened to the paths, in time order
        said += [sentence for _, sentence in sorted(_evaluations(r, paths) + _faults(r, paths), key=lambda ts: ts[0])]
        said += [s for s in (queue_sentence(r),) if s]
        said += numa_sentences(r)
        if r.model.cpu is not None:
            said += _capped(cpu_sentences(r), "host CPUs")
        if r.model.fabric:
            said += _capped(fabric_sentences(r), "the fabric")
        said += [s for s in (_accounting(r),) if s]
        out.append((r.label, said))
    return out


# a number and its unit stay on one line
_UNIT = re.compile(r"(\d) (%|ms|s|IOPS|I/Os?)(?=[\s.,;:)]|$)")


def text(result: Runs, width: int = 100) -> str:
    """:func:`story` as wrapped plain text, a paragraph per policy."""
    lines = ["what happened:"]
    for label, sentences in story(result):
        body = _UNIT.sub("\\1\0\\2", " ".join(sentences))
        head = f"{label}: " if label else ""
        lines += textwrap.wrap(head + body, width=width, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False)
    return "\n".join(lines).replace("\0", " ") + "\n"
