"""The story's sentence on the host's queues: how much of the latency was spent queued in the host (KAVG).

esxtop splits an I/O's latency as GAVG = KAVG + DAVG: KAVG the time queued in
the host (the VMkernel) before the device took it, DAVG from then to the
completion. With a device queue depth (DQLEN), an adapter queue, NVMe tags or
an open-loop workload, I/Os can wait in the host; the table under "host
queues" gives the figures per device, this sentence the one that matters:
"Of its 2 ms mean latency (GAVG), 1.67 ms (83 %) was queued in the host
(KAVG)".
"""

from __future__ import annotations

from typing import Any

from ...model.queues import ARRAY_SLOTS, DEVICE_QUEUE
from .subject import binding_queues

__all__ = ["queue_sentence", "array_queue_sentence", "LITTLE", "ARRAY_QUEUED"]

#: KAVG below this share of GAVG: "almost nothing waited in the host"
LITTLE = 0.05
#: a limit is named as the one I/Os waited for when the mean ACTV reached this share of it
AT_LIMIT = 0.9
#: an array's queue is said when its requests spent at least this share of their time at it waiting for a slot
ARRAY_QUEUED = 0.5


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:,.0f} ms" if ms >= 100 else (f"{ms:.3g} ms" if ms >= 0.01 else f"{ms:.2g} ms")


def _ios(n: float) -> str:
    """A mean count of I/Os, one format wherever the sentence gives one: whole from 10 up (``160``, ``322``), one
    decimal below (``2.4``)."""
    return f"{n:,.0f}" if n >= 9.95 else f"{n:.1f}"


def _limits(r: Any, d: Any) -> list[tuple[str, int]]:
    """The host-side limits on device ``d``'s I/Os at once, as (what, places): its DQLEN, its DSNRO (all VMs
    together, when several VMs share the device: the only time ESXi applies it) and its host's adapter queue."""
    model = r.model
    hp = model.host_params[d.host]
    out: list[tuple[str, int]] = []
    if hp.queue_depth:
        out.append(("DQLEN", int(hp.queue_depth)))
    row = next((q for q in model.queues if q.kind == DEVICE_QUEUE and q.owner == d.index), None)
    vms = {j.vm for j in model.jobs if j.device == d.index}
    if row is not None and row.dsnro and not row.dsnro_per_vm and len(vms) > 1:
        out.append(("DSNRO", int(row.dsnro)))
    if hp.adapter_queue_depth:
        out.append(("adapter queue depth", int(hp.adapter_queue_depth)))
    return out


def _dsnro_per_vm(r: Any, d: Any) -> int:
    """Device ``d``'s DSNRO when it caps each VM's I/Os (``dsnro_scope = "per_vm"``) and a VM on it kept more than
    that outstanding on average (ACTV + QUED): then some of its I/Os waited for their VM's DSNRO; else 0."""
    model, m = r.model, r.metrics
    row = next((q for q in model.queues if q.kind == DEVICE_QUEUE and q.owner == d.index), None)
    if row is None or not row.dsnro or not row.dsnro_per_vm or m.wl_area_actv is None or m.wl_area_qued is None:
        return 0
    vms = {j.vm for j in model.jobs if j.device == d.index}
    held = [(float(m.wl_area_actv[v]) + float(m.wl_area_qued[v])) / r.duration for v in vms if v < len(m.wl_area_actv)]
    return int(row.dsnro) if any(h > row.dsnro for h in held) else 0


def _waited_for(r: Any, qued: float) -> str:
    """The sentence's ``, where 160 I/Os waited on average (QUED) for esxi01's DSNRO of 32 (...),``: the limit the I/Os waited
    for is the lowest of the device's limits, named only when the device's mean ACTV sat at it (at least
    :data:`AT_LIMIT` of it): a DSNRO of 32 under a DQLEN of 64 is the one that binds (ACTV 32), and a limit the
    run never reached is not the reason anything waited."""
    model, m = r.model, r.metrics
    # per device, what its I/Os waited for: the lowest limit its ACTV sat at, and under dsnro_scope = "per_vm" each
    # VM's DSNRO when its VMs kept more than that outstanding (a per-VM cap never fills the device, so ACTV cannot
    # tell it); both when both bound
    bound: dict[tuple[tuple[str, int], ...], set[str]] = {}
    for d in model.devices:
        limits = _limits(r, d)
        per_vm = _dsnro_per_vm(r, d)
        if not limits and not per_vm:
            continue
        key: tuple[tuple[str, int], ...] = ()
        if limits:
            what, places = min(limits, key=lambda wp: wp[1])
            actv = float(m.dev_area_actv[d.index]) / r.duration
            if what == "adapter queue depth":  # the adapter's places are shared by the host's devices
                actv = sum(float(m.dev_area_actv[e.index]) for e in model.devices if e.host == d.host) / r.duration
            if actv >= AT_LIMIT * places:
                key = ((what, places),)
        if per_vm:
            key += (("DSNRO per VM", per_vm),)
        if not key:
            return f", where {_ios(qued)} I/Os waited on average (QUED),"
        bound.setdefault(key, set()).add(model.hosts[d.host])
    if len(bound) != 1:
        return f", where {_ios(qued)} I/Os waited on average (QUED),"
    key, hosts = next(iter(bound.items()))
    devices = len(model.devices)
    whose = f"{next(iter(hosts))}'s" if len(hosts) == 1 else f"{len(hosts):,} hosts'"
    parts = []
    for what, places in key:
        each = " each" if devices > 1 and what in ("DQLEN", "DSNRO") else ""  # both per device; DSNRO per VM is said so
        parts.append(f"DSNRO of {places} per VM" if what == "DSNRO per VM" else f"{what} of {places}{each}")
    named = " and ".join(parts)
    dqlen = sorted({model.host_params[d.host].queue_depth for d in model.devices})
    if any(what == "DSNRO" for what, _ in key):
        named += f" (Disk.SchedNumReqOutstanding, the cap while several VMs have I/O on a device; DQLEN {'/'.join(map(str, dqlen))})"
    elif any(what == "DSNRO per VM" for what, _ in key):
        alone = "" if any(what == "DQLEN" for what, _ in key) else f"; DQLEN {'/'.join(map(str, dqlen))}"
        named += f' (Disk.SchedNumReqOutstanding with dsnro_scope = "per_vm": each VM\'s cap on a device it shares{alone})'
    return f", where {_ios(qued)} I/Os waited on average{' in all' if devices > 1 else ''} (QUED) for {whose} {named},"


def queue_sentence(r: Any) -> str | None:
    """KAVG against GAVG over every device of the run (None: no host queue in play, or no device completed)."""
    if not r.host_queued or not r.model.devices:
        return None
    m, model = r.metrics, r.model
    n = int(m.dev_completed.sum())
    if n == 0:
        return None
    kavg = float(m.dev_kavg_sum.sum()) / n
    davg = float(m.dev_davg_sum.sum()) / n
    gavg = kavg + davg
    if gavg <= 0:
        return None
    qued = float(m.dev_area_qued.sum()) / r.duration
    devices = len(model.devices)
    across = f"Across its {devices:,} devices, of" if devices > 1 else "Of"
    if kavg < LITTLE * gavg:
        if not binding_queues(model):  # limits no workload can reach: nothing to say (a run without them is the same)
            return None
        return f"Almost nothing waited in the host: KAVG {_ms(kavg)} of the {_ms(gavg)} mean latency (GAVG)."
    why = _waited_for(r, qued)
    return (
        f"{across} its {_ms(gavg)} mean latency (GAVG), {_ms(kavg)} ({kavg / gavg * 100:.0f} %) was queued in the host "
        f"(KAVG){why} and {_ms(davg)} at the device (DAVG)."
    )


def array_queue_sentence(r: Any) -> str | None:
    """Where the time on the paths went when the arrays' slots (``concurrency``) were the queue: per array its mean
    busy slots and mean requests waiting over the measured window, and, by Little's law on the same requests, the
    share of their time at the array spent waiting for a slot (waiting / (waiting + in service)). Said only when
    some array's requests waited at least :data:`ARRAY_QUEUED` of their time there: "36 ms mean on their paths"
    over paths of 20 us one way is the array's queue, not the wire."""
    model, m = r.model, r.metrics
    if m.queue_waiting_area is None or m.queue_in_use_area is None or not r.ios or r.duration <= 0:
        return None
    rows = model.queue_rows(ARRAY_SLOTS)
    seen = []
    for a, q in enumerate(rows):
        if q < 0 or q >= len(m.queue_waiting_area):
            continue
        busy = float(m.queue_in_use_area[q]) / r.duration
        waiting = float(m.queue_waiting_area[q]) / r.duration
        if busy + waiting > 0:
            seen.append((model.arrays[a].name, int(model.queues[q].queue_depth), busy, waiting, waiting / (busy + waiting)))
    queued = [s for s in seen if s[4] >= ARRAY_QUEUED]
    if not queued:
        return None

    def alike(values: list[str]) -> str:
        return values[0] if len(set(values)) == 1 else " and ".join(values)

    shares = {f"{q[4] * 100:.0f}" for q in queued}
    share = f"{min(shares, key=float)} %" + ("" if len(shares) == 1 else " or more")
    if len(queued) <= 3:
        names = [q[0] for q in queued]
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
        busy = alike([f"{q[2]:,.0f}" for q in queued])
        slots = alike([f"{q[1]:,}" for q in queued])
        waiting = " and ".join(f"{q[3]:,.0f}" for q in queued)
        one = len(queued) == 1
        s = (
            f"The {'array was' if one else 'arrays were'} the queue: {who} had {busy} of {'its' if one else 'their'} {slots} "
            f"slots (concurrency) busy on average and {waiting} requests waiting for one, so {share} of a request's time "
            f"at {'it' if one else 'an array'} was its wait for a slot"
        )
    else:
        s = (
            f"The arrays were the queue: {len(queued):,} of the {len(seen):,} arrays had {sum(q[3] for q in queued):,.0f} "
            f"requests waiting for a slot on average, {share} of a request's time at such an array"
        )
    s += "; in the host, no queue held them (no queue depth is set)" if not r.host_queued else "; what waited in the host (KAVG) is said below"
    return s + "."
