"""The reference engine: SimPy, readable, and the specification of the model.

Read :meth:`.io_life.IoLife.io_life` to see what happens to one I/O:

0. it is issued by its job: closed loop, as soon as the job slot's previous
   I/O is done; open loop (``rate_iops``), at its arrival, and when the job
   already has ``iodepth`` I/Os issued and not done it waits in the host for
   one to finish (``job_slot``, ``arrivals``); then its device's queues in
   the host take it in order (``admit``: the device queue, when the host's
   ``queue_depth`` I/Os are active on the device already, then the adapter's),
   or it waits in each that is full, in order. These waits are esxtop's KAVG
   (QUED); from then on to completion is DAVG (ACTV);
1. the host's policy picks a path (no usable path: the I/O waits for one);
   NVMe-oF: the path's controller gives it a tag, or it waits for one there;
2. the command and data cross the path (``leg``), as the protocol needs:
   SCSI write = WRITE command -> XFER_RDY -> data -> ... -> status (two round
   trips), SCSI or NVMe read = command -> ... -> data + status (one), NVMe
   write = command with in-capsule data -> ... -> completion (one);
3. the array serves it (``serve``: a FIFO queue for one of its slots, then the
   service time); a write to a replicated volume is also mirrored to the peer
   array (``mirror``: forward over the replication link, peer service, ack)
   and is acknowledged only when both copies are stored;
4. completion: the latency is recorded and the policy told; the job's slot
   issues its next I/O (closed loop at ``iodepth``).

A frame lost to a path failure (the path went down while it was on the wire,
or the host sent it before noticing) sends the I/O back to step 1 once the
host has noticed (its detection delay); a frame lost on a lossy link is resent
after the loss recovery delay. An attempt still unanswered ``io_timeout``
after it was sent is aborted then, wherever it is (``abort``: on the wire,
queued or served at the array, mirroring), and retried at once. Either way the
policy hears of the failed attempt (``on_fail``) just before the retry's
``select``; with no usable path the I/O waits until the host's APD timeout and then fails
visibly. No I/O is ever lost: ``accounting`` checks it.

Every queue an I/O can wait in is a row of ``Model.queues``
(:mod:`pathsel.model.queues`), kept here as a :class:`Queue` (an array's
slots: a ``simpy.Resource`` in its row) with the counters the fast engine
keeps for the same row. The rule of its kind says what a full one does:
``take`` and ``give_back`` are the "host" and "path" rules, written once
(a device's "host" queues are ``DeviceModel.admission``, so a new one needs
no change here), ``accept``/``port_done`` the "refuse" rule, ``serve`` the
"array" rule; ``throttle`` changes a device queue's queue depth.

Timing details the sources leave open, stated here once:

* A leg carrying data first waits for its link direction to be free (FIFO),
  then takes ``size / bandwidth`` to serialise, then the one-way latency.
  Command, transfer-ready and status frames are taken as zero bytes.
* The receiving array stores a write in parallel with mirroring it; the host
  gets status when both are done (active-active synchronous replication).
* Reads are served by the array that received them, without replication.
* An abort (SCSI ABORT TASK, NVMe Abort) takes effect at once everywhere: the
  array drops the command whether queued or being served, and the peer drops
  its mirror copy; the slots they held are free for the next in line. Frames
  already on the wire arrive and are ignored.

Split as the fast engine is (:mod:`pathsel.engine.fast`), by mechanism, with the same module names for the
same steps: a step's twin is in the fast module of the same name. One simulation is one object whose class
gathers a class per module (each module's methods, over the state of :mod:`.state`):

* :mod:`.state`: the engine's state, laid out from the model (:class:`~.state.State`), and a queue's row
  (:class:`~.state.Queue`; an array's slots, :class:`~.state.ArraySlots`);
* :mod:`.wire`: frames on the wire (a leg over a path, the fabric's credits and back-pressure, loss and resends);
* :mod:`.queues`: the model's queues and their rules (the host's, NVMe-oF tags, target ports, array slots);
* :mod:`.waits`: waiting for the host to see a path change;
* :mod:`.cpu`: the hosts' cores;
* :mod:`.io_life`: the life of one I/O, its steps in order (issue, attempts, exchange, replication, timeouts);
* :mod:`.faults`: the fault timeline and the host noticing it;
* :mod:`.run`: the simulation put together, run, and its measures read back (:func:`~.run.run_reference`).
"""

from __future__ import annotations

from .run import run_reference

__all__ = ["run_reference"]
