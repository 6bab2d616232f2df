"""What the policy itself did, in words: latency round robin's (and HPP's) evaluations, the kept paths that carried
nothing, guard's ejections, and the other events a policy logged."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..used import SHARE_USED
from .hosts import HANDFUL
from .paths import PATH_EVENTS, Paths, paths_used
from .run import Run
from .words import and_list, fmt_time, in_ms, plural

__all__ = ["evaluations", "other_events"]


def evaluations(r: Run, paths: Paths) -> list[tuple[float, str]]:
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
            s = f"{on}{plural(same, 'later evaluation')} kept the same paths."
            out.append((last, s[0].upper() + s[1:]))
        idle = _kept_unused(r, paths, device, evals[-1])
        if idle:
            out.append((last, idle))
    return out


def _kept_unused(r: Run, paths: Paths, device: str, last: dict[str, Any]) -> str | None:
    """Kept is not used: a path the last evaluation kept may still carry (almost) no I/O, as the table counts it."""
    kept = [paths.by_name[(device, n)] for n in last.get("active", ()) if (device, n) in paths.by_name]
    used = {p.index for p in paths_used(r)}
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
        seen = f", from its measured {in_ms(max(slow), us=True)}{' (the highest)' if highest else ''}," if slow and len(idle) == 1 else ""
        this = "this path's" if len(idle) == 1 else "theirs"
        s += f": each I/O goes to the kept path with the lowest measured latency x (I/Os in flight + 1), and {this}{seen} never was the lowest"
    return s + "."


def _scores(r: Run) -> bool:
    """Whether the policy sends each I/O to the kept path with the lowest latency x (in flight + 1): then a kept path
    whose measured latency never was the lowest carries nothing."""
    spec = str(getattr(r, "policy", ""))
    return "score" in spec or "lqd" in spec or (spec.split(":")[0] in ("latency", "hpp") and "min-set" not in spec)


def _kept_unused_summed(r: Run, paths: Paths, by_device: dict[str, list[dict[str, Any]]]) -> str | None:
    """:func:`_kept_unused` over many devices: how many kept paths carried (almost) nothing, on how many devices, so
    that "every path kept" beside "3-5 of the 8 paths used" reads as two facts, not a contradiction."""
    used = {p.index for p in paths_used(r)}
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
        f"Kept is not used: on {on}, {plural(idle, 'kept path')}{to} carried under "
        f"{SHARE_USED * 100:.1f} % of their device's I/Os in the measured window, so the table counts {kept - idle:,} of the {kept:,} kept paths used"
    )
    if _scores(r):
        s += ": each I/O goes to the kept path with the lowest measured latency x (I/Os in flight + 1), and theirs seldom or never was the lowest"
    return s + "."


def _evaluations_summed(r: Run, paths: Paths, by_device: dict[str, list[dict[str, Any]]]) -> list[tuple[float, str]]:
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
        states = and_list([f"{st}" for st, _ in outside.most_common()])
        if len(shapes) == 1:
            n, total = next(iter(shapes))
            s += f" ({n} of each device's {total} paths were candidates: the other {total - n} were {states})"
        else:
            s += f" (counted over the candidate paths: {plural(sum(outside.values()), 'other path')}, {states}, never were candidates)"
    if changes:
        s += f"; the sets of paths changed {plural(changes, 'time')} in all"
    idle = _kept_unused_summed(r, paths, by_device)
    return [(hi, s + "."), *([(hi, idle)] if idle else [])]


def other_events(r: Run) -> list[str]:
    counts = Counter(e["event"] for e in r.metrics.events if e["event"] not in ("evaluation", "sampling_started", "fault", *PATH_EVENTS))
    out = []
    for name, n in counts.items():
        first = next(e for e in r.metrics.events if e["event"] == name)
        if name == "ejection" and "path" in first:  # guard's: which paths, why, when
            out.append(_ejections([e for e in r.metrics.events if e["event"] == name]))
            continue
        if name == "readmission":
            continue  # told with the ejections
        word = name.replace("_", " ")
        out.append(f"It logged {plural(n, word)}, the first at {fmt_time(first['t'])}.")
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
    more = f" and {plural(len(order) - 3, 'other path')}" if len(order) > 3 else ""
    return f"It ejected {and_list(shown)}{more}."
