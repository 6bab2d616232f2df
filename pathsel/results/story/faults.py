"""Each fault in words: what changed, when the host noticed, the share of I/O it hit, how IOPS came back, and the VMs
that froze (:mod:`.stall`)."""

from __future__ import annotations

import math
from typing import Any

from .paths import PATH_EVENTS, Paths
from .run import Run
from .stall import frozen_words, unfrozen_words
from .words import and_list, fmt_time, past_end, plural

__all__ = ["fault_sentences"]


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


def fault_sentences(r: Run, paths: Paths) -> list[tuple[float, str]]:
    model = r.model
    out = []
    states = {(f.at, f.what): f.state for f in model.faults if not f.revert}
    times = sorted({f.at for f in model.faults if not f.revert and f.at < model.end})  # a fault past the end never came
    late = sorted({f["at_s"] for f in r.faults() if f.get("after_end")})
    if late:
        when = and_list([fmt_time(t) for t in late])
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
                if what in _NOTICED and e["event"] in PATH_EVENTS and at <= e["t"] < again and (e.get("device"), e.get("path")) in names
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
            whose = "its" if not paths.several_hosts else and_list([f"{model.hosts[h]}'s" for h in hosts])
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
        # the VMs that froze come first (stall.py): a cluster's IOPS can hold while one host's VMs wait
        frozen = frozen_words(f, model, noticed_after)
        if frozen:
            s = f"At {fmt_time(at)} {frozen}. The cause: " + s.removeprefix(f"At {fmt_time(at)} ")
        else:
            clauses.append(unfrozen_words(f, paths.several_hosts))
        if f["errors"] and not (frozen and any(w["failed"] for w in f.get("frozen") or [])):  # frozen words said it
            clauses.append(f"{plural(f['errors'], 'I/O')} failed")
        out.append((at, s + "".join("; " + c for c in clauses) + "."))
    return out


def _alua_turns(model: Any, paths: Paths, faults: list[Any], among: list[Any]) -> str:
    """ALUA changes at one time to different states, each named: ``vmhba0:C0:T1:L1 and vmhba1:C0:T1:L1 turned AO
    and vmhba0:C0:T0:L1 and vmhba1:C0:T0:L1 turned ANO``."""
    by_state: dict[str, list[Any]] = {}
    for x in faults:
        hit = [p for p in model.paths if p.controller in set(x.controllers)]
        by_state.setdefault(str(x.state), []).extend(p for p in hit if p not in by_state.get(str(x.state), []))
    return and_list([f"{paths.describe(hit, among)} turned {state}" for state, hit in by_state.items()])


def _latency_turns(model: Any, paths: Paths, faults: list[Any], among: list[Any]) -> str:
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
    return and_list(parts)


def _nexus_fault(model: Any, paths: Paths, what: str, controllers: set[int], hit: list[Any], among: list[Any]) -> str:
    """A nexus (an HBA port to a target port) carries one path per volume: ``esx01 lost 64 of its 512 paths:
    nexus vmhba1:C0:T0 to site-a, its path to each of 64 volumes``."""
    host = model.hosts[hit[0].host]
    nexus = and_list(sorted({model.controllers[c].name for c in controllers if model.controllers[c].host == hit[0].host}))
    arrays = and_list(sorted({paths.array(p) for p in hit}))
    volumes = len({p.device for p in hit})
    word = "nexus" if len(controllers) == 1 else "nexuses"
    verb = "lost" if what == "path_down" else "got back"
    return f"{host} {verb} {len(hit):,} of its {len(among):,} paths: {word} {nexus} to {arrays}, its path to each of {plural(volumes, 'volume')}"


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
