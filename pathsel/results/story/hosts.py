"""The story's sentence on the hosts of a cluster: a handful one by one, more as a range and the ones that differ.

Thirty-two sentences of "esx17 55,449 IOPS at 36.8 ms mean on its paths (3 %)"
hide the one host that matters. Past :data:`HANDFUL` hosts the story gives
the range the typical hosts span and names the outliers: hosts whose IOPS or
mean latency on their paths is more than :data:`APART` from the median
host's, the furthest first, at most :data:`NAMED` by name.
"""

from __future__ import annotations

import statistics
from typing import Any

from .words import fmt_time

__all__ = ["per_host", "HANDFUL", "APART", "NAMED"]

#: up to this many hosts, a clause each
HANDFUL = 4
#: a host whose IOPS or mean latency is this far from the median host's is an outlier
APART = 0.05
#: outliers named, the furthest first; the rest are counted
NAMED = 3


def _ms(us: float) -> str:
    ms = us / 1e3
    return f"{ms:,.0f} ms" if ms >= 100 else (f"{ms:.3g} ms" if ms >= 1 else f"{ms:.2g} ms")


def _span(lo: str, hi: str, unit: str) -> str:
    return f"{lo} {unit}" if lo == hi else f"{lo}-{hi} {unit}"


def _one(g: dict[str, Any]) -> str:
    lat = f" at {_ms(g['latency_us']['mean'])} mean on its paths" if g["ios"] else ""
    return f"{g['host']} {g['iops']:,.0f} IOPS{lat} ({g['share'] * 100:.0f} %)"


def _hit_by_faults(r: Any) -> dict[str, str]:
    """Hosts whose paths a fault touched (the first such fault's time): the likely reason one host differs."""

    model = r.model
    out: dict[str, str] = {}
    for f in sorted((f for f in model.faults if not f.revert and f.at < model.end), key=lambda f: f.at):
        for c in f.controllers:
            out.setdefault(model.hosts[model.controllers[c].host], fmt_time(f.at))
    return out


def per_host(r: Any) -> str | None:
    """With several hosts: each one's IOPS and latency on its paths (a handful), else the range and the outliers."""
    if len(r.model.hosts) < 2 or not r.ios:
        return None
    rows = r.hosts()
    if len(rows) <= HANDFUL:
        return "Per host: " + "; ".join(_one(g) for g in rows) + "." + _which_latency(r, [g for g in rows if g["ios"]])
    idle = [g for g in rows if not g["ios"]]
    ran = [g for g in rows if g["ios"]]
    med_iops = statistics.median(g["iops"] for g in ran) if ran else 0.0
    med_lat = statistics.median(g["latency_us"]["mean"] for g in ran) if ran else 0.0

    def distance(g: dict[str, Any]) -> float:
        di = abs(g["iops"] / med_iops - 1) if med_iops > 0 else 0.0
        dl = abs(g["latency_us"]["mean"] / med_lat - 1) if med_lat > 0 else 0.0
        return max(di, dl)

    hit = _hit_by_faults(r)
    outliers = sorted((g for g in ran if distance(g) > APART), key=lambda g: -distance(g))
    typical = [g for g in ran if distance(g) <= APART]
    parts = []
    if typical:
        iops = [g["iops"] for g in typical]
        lat = [g["latency_us"]["mean"] for g in typical]
        share = sum(g["share"] for g in typical) / len(typical)
        who = f"all {len(rows):,}" if len(typical) == len(rows) else f"{len(typical):,} of {len(rows):,}"
        parts.append(
            f"{who} hosts ran {_span(f'{min(iops):,.0f}', f'{max(iops):,.0f}', 'IOPS')} each "
            f"at {_span(_ms(min(lat))[:-3], _ms(max(lat))[:-3], 'ms')} mean on their paths "
            f"(about {share * 100:.2g} % of the I/Os each)"
        )
    for g in outliers[:NAMED]:
        below = g["iops"] / med_iops - 1 if med_iops > 0 else 0.0
        how = f"{abs(below) * 100:.0f} % {'fewer' if below < 0 else 'more'} IOPS than the median host"
        slower = g["latency_us"]["mean"] / med_lat - 1 if med_lat > 0 else 0.0
        if abs(slower) > APART:
            how += f", {abs(slower) * 100:.0f} % {'higher' if slower > 0 else 'lower'} latency"
        if g["host"] in hit:
            how += f"; its paths were hit by the fault at {hit[g['host']]}"
        parts.append(f"{g['host']} differs: {g['iops']:,.0f} IOPS at {_ms(g['latency_us']['mean'])} mean ({how})")
    if len(outliers) > NAMED:
        parts.append(f"{len(outliers) - NAMED:,} other hosts are more than {APART * 100:.0f} % from the median")
    if idle:
        names = ", ".join(g["host"] for g in idle[:NAMED]) + (f" and {len(idle) - NAMED:,} more" if len(idle) > NAMED else "")
        parts.append(f"{len(idle):,} host{'s' if len(idle) != 1 else ''} completed no I/O ({names})")
    s = "; ".join(parts)
    return s[0].upper() + s[1:] + "." + _which_latency(r, ran)


def _which_latency(r: Any, rows: list[dict[str, Any]]) -> str:
    """Per host, latency is the time on the paths: each I/O's completing attempt (breakdown.py). When the I/Os'
    own mean (issue to completion, the headline's and GAVG's) is more than :data:`APART` away, say which is which
    and what lies between, so "0.6 ms on their paths" beside a 1.04 ms GAVG reads as two measures, not a
    contradiction."""
    n = sum(g["ios"] for g in rows)
    if not n or not r.ios:
        return ""
    on_paths = sum(g["latency_us"]["mean"] * g["ios"] for g in rows) / n
    whole = r.latency_us["mean"]
    if on_paths <= 0 or abs(whole / on_paths - 1) <= APART:
        return ""
    s = f" Those latencies are each I/O's completing attempt on its path; from issue to completion the I/Os took {_ms(whole)} on average"
    before = []
    if r.accounting.get("retried"):  # counted over the whole run in the story's last sentence
        before.append("the earlier attempts of retried I/Os and the waits before their retries")
    m = r.metrics
    done = int(m.dev_completed.sum()) if r.model.devices else 0
    if done and float(m.dev_kavg_sum.sum()) / done * 1e6 > APART * whole:
        before.append("the wait in the host's queues (KAVG)")
    if before:
        s += "; the difference is " + " and ".join(before)
    return s + "."
