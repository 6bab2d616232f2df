"""The fabric in words (issue 33): what a slow-drain port did to the links behind it and to the other hosts.

For each ``slow_drain`` fault: the slow port's link, the links back-pressure
held (an ISL, a target port: ``link_held``), and each other host whose route
crosses a held link: its mean device latency (esxtop's DAVG, from the
per-interval ACTV integral over its completions: Little's law) before the
fault and while it lasted, beside how busy its own port was. Every number is
read from the run's metrics.
"""

from __future__ import annotations

from typing import Any

__all__ = ["fabric_sentences", "slow_drain_effects"]


def _latency_ms(r: Any, d: int, b0: int, b1: int) -> float | None:
    """Device ``d``'s mean DAVG over intervals [b0, b1) in ms: its ACTV time integral over its completions."""
    m, model = r.metrics, r.model
    if b1 <= b0:
        return None
    paths = model.devices[d].paths
    ios = int(m.ts_path_ios[b0:b1, list(paths)].sum())
    if ios == 0:
        return None
    return float(m.ts_dev_actv[d, b0:b1].sum()) / ios * 1e3


def slow_drain_effects(r: Any) -> list[dict[str, Any]]:
    """Per slow_drain fault: its time, end, link, the links held behind it (name, held share) and per other host
    crossing them its DAVG before and during (ms) and its own port's utilisation (both directions' busiest)."""
    model, m = r.model, r.metrics
    if m.link_held is None:
        return []
    nc = len(model.controllers)
    out = []
    for f in model.faults:
        if f.what != "slow_drain" or f.revert or f.at >= model.end:  # past the run's end: it did not happen
            continue
        until = next((g.at for g in model.faults if g.revert and g.origin == f.origin), model.end)
        slow = f.link
        behind = [c for c in model.controllers if slow in c.links]
        held_links = sorted({li for c in behind for li in c.links if li != slow and m.link_held[li].sum() > 0.0})
        held = [(model.links[li].name, float(m.link_held[li].max()) / model.duration) for li in held_links]
        b_at = int(round(max(f.at, model.ramp) / m.interval))
        b_until = int(round(min(until, model.end) / m.interval))
        b_ramp = int(round(model.ramp / m.interval))
        victims = []
        slow_hosts = {c.host for c in behind}
        for h, name in enumerate(model.hosts):
            if h in slow_hosts:
                continue
            mine = [c for c in model.controllers if c.host == h and set(c.links) & set(held_links)]
            if not mine:
                continue
            own = [c.links[0] for c in mine if c.links]  # the first link of its route: its own (HBA) port
            busy = max((float(m.wire_busy[nc + li].max()) / model.end for li in own), default=0.0)
            devices = [d.index for d in model.devices if d.host == h]
            before = [_latency_ms(r, d, b_ramp, b_at) for d in devices]
            during = [_latency_ms(r, d, b_at, b_until) for d in devices]
            b = [x for x in before if x is not None]
            du = [x for x in during if x is not None]
            if b and du:
                victims.append({"host": name, "before_ms": sum(b) / len(b), "during_ms": sum(du) / len(du), "own_port_busy": busy})
        out.append(
            {
                "at_s": f.at,
                "until_s": until,
                "link": model.links[slow].name,
                "credit_return": f.credit_return,
                "stop": f.stop_until > 0.0,
                "held": held,
                "victims": victims,
            }
        )
    return out


def _fmt_s(x: float) -> str:
    return f"{x * 1e3:g} ms" if x < 1.0 else f"{x:g} s"


def fabric_sentences(r: Any) -> list[str]:
    """One sentence per slow_drain fault: the slow port, the links held behind it, the victims' latency rise."""
    said = []
    for e in slow_drain_effects(r):
        how = (
            "stopped draining"
            if e["stop"]
            else (f"returned each buffer credit (R_RDY) {_fmt_s(e['credit_return'])} late" if e["credit_return"] >= 0 else "drained slowly")
        )
        s = f"Slow drain from {_fmt_s(e['at_s'])} to {_fmt_s(e['until_s'])}: the port on {e['link']} {how}"
        if e["held"]:
            s += "; back-pressure held " + ", ".join(f"{n} {share * 100:.0f} % of the measured time" for n, share in e["held"])
        if e["victims"]:
            rises = [f"{v['host']} {v['before_ms']:.2f} -> {v['during_ms']:.2f} ms" for v in e["victims"]]
            busy = max(v["own_port_busy"] for v in e["victims"])
            s += (
                f"; other hosts behind the same links waited although their own ports were busy at most {busy * 100:.0f} % "
                f"of the run (mean device latency before -> during: {', '.join(rises)})"
            )
        said.append(s + ".")
    return said
