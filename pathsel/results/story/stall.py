"""The story's words on a fault's stall: which hosts and VMs froze, for how long, how many I/Os, and why.

A workload (VM) froze during a fault when one of its I/Os outstanding then took
:data:`pathsel.metrics.STALL_S` (100 ms) or more from issue to completion or
failure (:meth:`pathsel.results.RunResult.stalls`). Those words come
first in the fault's sentence: a cluster's IOPS can hold while one host's VMs
wait half a second, the other hosts taking the array's slots they left.
"""

from __future__ import annotations

import math
from typing import Any

from ...metrics import STALL_S
from .words import and_list, fmt_time

__all__ = ["frozen_words", "unfrozen_words", "HANDFUL_VMS"]

HANDFUL_VMS = 4  # VMs named one by one; more are counted


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else fmt_time(seconds)


def _vms(names: list[str]) -> str:
    if len(names) <= HANDFUL_VMS:
        return and_list(names)
    return and_list(names[: HANDFUL_VMS - 1] + [f"{len(names) - HANDFUL_VMS + 1:,} more"])


def frozen_words(fault: dict[str, Any], model: Any, noticed_after: float | None) -> str:
    """``esxi01's VMs esxi01-vm1 and esxi01-vm2 froze for up to 503 ms: 64 of their I/Os took 100 ms or more,
    held on the lost paths until the host noticed (its 500 ms detection delay), then retried`` ('' when no VM froze).

    ``noticed_after``: how long after the fault its hosts noticed it (None: they never did, or it is not noticed)."""
    frozen = fault.get("frozen") or []
    if not frozen:
        return ""
    by_host: dict[str, list[dict[str, Any]]] = {}
    for w in frozen:
        by_host.setdefault(w["host"], []).append(w)
    on_host: dict[str, set[int]] = {}  # each host's workloads, to say "all 64 of esx01's VMs"
    for j in model.jobs:
        on_host.setdefault(model.hosts[j.host], set()).add(j.vm)
    parts = []
    for host, ws in by_host.items():
        names = [w["workload"] for w in ws]
        whose = f"{host}'s " if host and len(model.hosts) > 1 else ""
        if len(names) > HANDFUL_VMS and len(names) == len(on_host.get(host, ())):
            parts.append(f"all {len(names):,} of {whose}VMs")
        else:
            parts.append(f"{whose}{'VM' if len(names) == 1 else 'VMs'} {_vms(names)}")
    longest = max(w["max_stall_ms"] for w in frozen) / 1e3
    stalled = sum(w["stalled_ios"] for w in frozen)
    failed = sum(w["failed"] for w in frozen)
    their = "its" if len(frozen) == 1 else "their"
    waiting = sum(w.get("waiting_at_end", 0) for w in frozen)
    still = f" ({waiting:,} still waiting when the run ended)" if waiting else ""
    s = f"{and_list(parts)} froze for up to {_ms(longest)}: {stalled:,} of {their} I/Os took {_ms(STALL_S)} or more{still}"
    why = _why(fault, model, frozen, longest, failed, noticed_after)
    return s + (", " + why if why else "")


def _why(fault: dict[str, Any], model: Any, frozen: list[dict[str, Any]], longest: float, failed: int, noticed_after: float | None) -> str:
    """Why they waited, from what the host does: detection delay and retry, io_timeout, APD."""
    hosts = {w["host"] for w in frozen}
    params = [model.host_params[i] for i, name in enumerate(model.hosts) if name in hosts] if model.host_params else []
    reasons = []
    what = fault["what"]
    behind = ", or queued in the host behind them," if getattr(model, "host_queues", False) else ""
    waiting = sum(w.get("waiting_at_end", 0) for w in frozen)
    # all failed or still waiting at the end: none retried
    then = ", then retried" if failed + waiting < sum(w["stalled_ios"] for w in frozen) else ""
    if waiting and not then:  # noticed, and no usable path came back before the run ended
        then = ", then waited for a usable path"
    detection = sorted({p.detection for p in params if math.isfinite(p.detection) and p.detection > 0})
    if what in ("path_down", "array_down") and noticed_after is not None and noticed_after > 0:
        reasons.append(f"held on the lost paths{behind} until the host noticed ({fmt_time(noticed_after)} later, its detection delay){then}")
    elif what in ("path_down", "array_down") and noticed_after is None and len(detection) == 1:
        # no path event of this fault's own before the next one on its paths (a path back before the host looked):
        # the I/Os on the lost paths still waited for the host's detection, which the next fault's event records
        reasons.append(f"held on the lost paths{behind} for up to the host's {fmt_time(detection[0])} detection delay{then}")
    timeouts = sorted({p.io_timeout for p in params if math.isfinite(p.io_timeout)})
    if timeouts and longest >= timeouts[0] and what not in ("path_down", "array_down"):
        reasons.append(f"aborted after the host's {fmt_time(timeouts[0])} io_timeout, then retried")
    if failed:
        apd = sorted({p.apd_timeout for p in params if math.isfinite(p.apd_timeout)})
        tail = f" after waiting {fmt_time(apd[0])} for a usable path (the APD timeout)" if apd else ""
        reasons.append(f"{failed:,} failed{tail}")
    return "; ".join(reasons)


def unfrozen_words(fault: dict[str, Any], several_hosts: bool) -> str:
    """``no VM froze: the longest I/O outstanding during it took 4.02 ms (esxi04)``."""
    longest = _ms(fault["max_stall_ms"] / 1e3)
    if not fault.get("by_host") and not fault["max_stall_ms"]:
        return "no VM froze"  # no I/O counts for it (those outstanding then were an earlier fault's)
    top = (fault.get("by_host") or [{}])[0]
    if fault["max_stall_ms"] / 1e3 >= STALL_S and top.get("max_stall_ms", 0.0) < fault["max_stall_ms"]:
        # only an I/O still in flight at the run's end waited that long (counted for the run, not per VM)
        return f"an I/O still in flight at the run's end had waited {longest}"
    where = f" (on {top['host']})" if several_hosts and top.get("host") else ""
    return f"no VM froze: the longest I/O outstanding during it took {longest}{where}"
