"""Every queue an I/O can wait in, declared once: one table of rows that both engines lay out.

A row is one resource with ``queue_depth`` places (0: no limit), of a
``kind``, belonging to one ``owner`` (an index into the model's devices,
hosts, controllers, ports or arrays, by kind). What happens when it is full
is its kind's admission ``rule``:

========================  ==============  ==========  ==================================================
kind                      owner           rule        when full
========================  ==============  ==========  ==================================================
``device_queue``          device          ``host``    the I/O waits in the host, in order (QUED)
``adapter_queue``         host            ``host``    the I/O waits in the host, in order (QUED again)
``nvme_tags``             controller      ``path``    the attempt waits on its path's controller, in order
``target_port``           port            ``refuse``  the command is answered QUEUE FULL (status 0x28)
``array_slots``           array           ``array``   the request waits, in order (``simpy.Resource``)
========================  ==============  ==========  ==================================================

The rules:

* ``host``: taken at issue, before the path is chosen, in the order
  ``DeviceModel.admission`` lists the device's rows; an I/O finding a row full
  waits in that row's FIFO and is handed its place by the release that frees
  one. Released at completion (or failure), last taken first. ACTV/QUED:
  waiting at a device's first row counts QUED, taking it ACTV; waiting at a
  later row moves ACTV back to QUED until it is handed its place; KAVG ends
  when the last row is taken. A new host-side queue is a row here and its
  place in ``admission``: neither engine changes.
* ``path``: taken after the policy has chosen a path (the row of the path's
  controller), waiting in that row's FIFO when full (the path is not chosen
  again); released when the attempt ends (completed, lost, aborted, QUEUE
  FULL). The wait adds to the I/O's KAVG.
* ``refuse``: taken when the command reaches the port; full, the command is
  answered QUEUE FULL and retried by the host; released when the array sends
  the command's last frame or the attempt ends. Nothing waits.
* ``array``: ``simpy.Resource`` with ``queue_depth`` = the array's
  concurrency (never 0): requests of the I/Os and of mirror copies, FIFO.

ESXi's Disk.SchedNumReqOutstanding (DSNRO) is no row of its own: it is the
device queue's ``dsnro`` (0: none), a second limit its ``host`` rule checks
while more than one VM (``JobModel.vm``) has I/O outstanding on the device:
all VMs' places together (or, ``dsnro_per_vm``, each VM's own) at most
``dsnro``. A release then hands places over in order to the waiting I/Os the
limits let in (``per_vm``: one whose VM is at its cap is passed over). Both
engines: ``dsnro_room`` and ``dsnro_give_back``.

The device queue is a row for every device, with or without a limit (ACTV is
counted from when it is taken); the other kinds have rows only where the
scenario limits them (adapter_queue_depth, nvme_io_queues,
port_queue_depth > 0), and every array has one. ESXi's adaptive queue depth
(Disk.QFullSampleSize) changes a device queue's capacity while the run goes;
its ``queue_depth`` here is the scenario's, the most it grows back to.

Lookups: ``Model.queues`` (the rows, ``index`` = position),
``DeviceModel.admission`` (the ``host`` rows its I/Os take, in order), and
``Model.queue_rows(kind)`` (each owner's row of that kind, -1 for none: a
path's port row is ``queue_rows(TARGET_PORT)[controllers[p.controller].port]``,
a controller's tags ``queue_rows(NVME_TAGS)[c]``, an array's slots
``queue_rows(ARRAY_SLOTS)[a]``, a device's throttled row
``queue_rows(DEVICE_QUEUE)[d]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "QueueModel",
    "DEVICE_QUEUE",
    "ADAPTER_QUEUE",
    "NVME_TAGS",
    "TARGET_PORT",
    "ARRAY_SLOTS",
    "KINDS",
    "HOST",
    "PATH",
    "REFUSE",
    "ARRAY",
    "RULE",
    "queue_table",
]

DEVICE_QUEUE, ADAPTER_QUEUE, NVME_TAGS, TARGET_PORT, ARRAY_SLOTS = "device_queue", "adapter_queue", "nvme_tags", "target_port", "array_slots"
KINDS = (DEVICE_QUEUE, ADAPTER_QUEUE, NVME_TAGS, TARGET_PORT, ARRAY_SLOTS)
HOST, PATH, REFUSE, ARRAY = "host", "path", "refuse", "array"
RULE = {DEVICE_QUEUE: HOST, ADAPTER_QUEUE: HOST, NVME_TAGS: PATH, TARGET_PORT: REFUSE, ARRAY_SLOTS: ARRAY}


@dataclass(frozen=True)
class QueueModel:
    """One queue (a resource): ``queue_depth`` places (0: no limit) of a ``kind`` belonging to ``owner``."""

    index: int
    kind: str
    owner: int  # the device, host, controller, port or array it belongs to (by kind)
    queue_depth: int
    name: str  # for messages and results: "<owner's name>/<kind>"
    dsnro: int = 0  # a device queue's ESXi Disk.SchedNumReqOutstanding (0: none): its cap while VMs compete
    dsnro_per_vm: bool = False  # dsnro caps each VM's places (dsnro_scope = "per_vm"), not all VMs' together

    @property
    def rule(self) -> str:
        """What a full row does: ``host``, ``path``, ``refuse`` or ``array`` (the module's table)."""
        return RULE[self.kind]


def queue_table(
    devices: Sequence[Any], hosts: Sequence[Any], controllers: Sequence[Any], ports: Sequence[Any], arrays: Sequence[Any]
) -> tuple[tuple[QueueModel, ...], tuple[tuple[int, ...], ...]]:
    """The rows for a model's parts, and each device's ``admission`` (its ``host`` rows in the order taken).

    ``devices`` need ``index``, ``name``, ``host``; ``hosts`` ``index``, ``name``, ``queue_depth``,
    ``adapter_queue_depth``, ``nvme_tags``; ``controllers`` ``index``, ``name``, ``host``; ``ports`` and
    ``arrays`` ``index``, ``name`` and ``queue_depth`` / ``concurrency``.
    """
    rows: list[QueueModel] = []

    def row(kind: str, owner: int, depth: int, name: str, dsnro: int = 0, per_vm: bool = False) -> int:
        rows.append(QueueModel(len(rows), kind, owner, depth, f"{name}/{kind}", dsnro, per_vm))
        return len(rows) - 1

    device_row = [
        row(DEVICE_QUEUE, d.index, hosts[d.host].queue_depth, d.name, _dsnro(hosts[d.host], d), getattr(hosts[d.host], "dsnro_per_vm", False))
        for d in devices
    ]
    adapter_row = {h.index: row(ADAPTER_QUEUE, h.index, h.adapter_queue_depth, h.name) for h in hosts if h.adapter_queue_depth > 0}
    for c in controllers:
        if hosts[c.host].nvme_tags > 0:
            row(NVME_TAGS, c.index, hosts[c.host].nvme_tags, c.name)
    for t in ports:
        if t.queue_depth > 0:
            row(TARGET_PORT, t.index, t.queue_depth, t.name)
    for a in arrays:
        row(ARRAY_SLOTS, a.index, a.concurrency, a.name)
    admission = tuple((device_row[d.index],) + ((adapter_row[d.host],) if d.host in adapter_row else ()) for d in devices)
    return tuple(rows), admission


def _dsnro(host: Any, device: Any) -> int:
    """The device's DSNRO (its volume's own, else its host's), where it binds: one at or above the host's queue depth
    never caps anything (a row without it)."""
    n = int(getattr(device, "sched_num_req_outstanding", 0) or getattr(host, "sched_num_req_outstanding", 0))
    return n if 0 < n < host.queue_depth else 0


def rows_by_owner(queues: Sequence[QueueModel], kind: str, owners: int) -> tuple[int, ...]:
    """Each of ``owners`` owners' row of ``kind`` (-1: it has none)."""
    out = [-1] * owners
    for q in queues:
        if q.kind == kind:
            out[q.owner] = q.index
    return tuple(out)
