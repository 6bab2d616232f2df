"""``pathsel top``: a live, esxtop-style view of one policy's run, in simulated time scaled to the wall clock.

The engine calls back every refresh (``live_step`` simulated seconds, see
:class:`pathsel.engine.recorder.readout.Live`); each call turns the record's
counters into rates over the last refresh and draws them, then waits until
the wall clock catches up with ``simulated time / speed``. Keys, as in
esxtop: ``u`` devices, ``d`` adapters (each host's own), ``v`` VMs (workloads); pathsel's own ``p`` paths and
``h`` hosts; space pauses, ``+``/``-`` double or halve the speed, ``q`` quits.

Columns, in esxtop's words where the model has the quantity:

* ``CMDS/s``: I/Os completed per second over the last refresh.
* ``DAVG/cmd``: mean time on the path (the device's and fabric's share),
  ms; measured from the end of the ramp (the record keeps per-path latency
  for the measured window only: ``-`` before).
* ``GAVG/cmd`` (overall only): mean latency as the application sees it,
  retries and waits for a path included; ``KAVG/cmd`` = GAVG - DAVG, the
  time an I/O spent in the host without a path.
* ``ACTV`` and ``QUED``: with a device queue depth (``DQLEN``) or an
  open-loop workload, the I/Os active on the device and waiting in the
  host's queue, and ``KAVG/cmd``, ``DAVG/cmd`` per device from the engines'
  own split; otherwise ``ACTV`` is the I/Os on the paths now and ``QUED``
  those the workloads keep outstanding on no path (waiting for one, or for a
  retry); at time 0 nothing is issued yet, 0 and 0. I/Os sent down a path
  that died, before the host notices, are ``ACTV`` on the device and on its
  dead paths (:meth:`Top.stuck`: the engines keep how many per device, not
  per path; the split among several dead paths follows what each held at the
  last refresh before the cut), and stay so when the wire comes back before
  the host noticed, until the host next looks at its paths
  (:meth:`Top.unnoticed`). With host queues, an I/O answered QUEUE FULL
  keeps its place in the device queue while it waits out the host's
  ``qfull_retry_delay``: ``ACTV`` on the device, on no path (the device's
  ``ACTV`` is then more than its paths', said under the table), and the
  device's ``DAVG/cmd`` (issue to completion, the retries included) more
  than its paths' (each attempt's time on the path).
* ``%SHR``: the path's share of its device's I/Os over the last refresh.
* ``STATE``: what the wire is doing (a fault takes effect at once; the host
  notices after its detection delay), then the ALUA state.
* The VM view (``v``), one row per workload (a VM or fio job, its numjobs
  copies together), as esxtop's VM disk view: ``READS/s``, ``WRITES/s``,
  ``MBREAD/s``, ``MBWRTN/s`` over the last refresh; ``LAT/rd``, ``LAT/wr``
  and ``GAVG/cmd`` the mean latency as the VM sees it (issue to completion),
  ``KAVG/cmd`` its part in the host as the header and the device view count
  it: with host queues its time queued (the engines' own split), without
  them GAVG less the time on its devices' paths (waits for a path and for
  retries); measured from the end of the ramp: ``-`` before; ``ACTV`` and
  ``QUED`` its I/Os active on the device
  and waiting in the host now (without host queues: its job slots, and 0).
* Under the table, in every view: the VMs each fault so far froze (an I/O
  outstanding during it, done by now, of 100 ms or more), with the longest
  and how many, as ``faults[]`` counts them at the end (:meth:`Top.stall_note`).

``--batch`` writes esxtop's batch CSV (:mod:`pathsel.top.esxtop_csv`), a line per
sample, and ``--text`` a plain-text snapshot per sample, without waiting on
the wall clock unless ``--speed`` is given: one at every refresh before the
end of the run, then a final one at its end (rates over what is left of the
last refresh), so ``ceil(end / refresh)`` in all and one for a run shorter
than a refresh; more than :data:`MAX_SAMPLES` are refused.

The package, by idea: ``snapshot`` (:class:`Snapshot`, what one refresh
shows), ``counters`` (:class:`Top`, which fills one from the engines' record
at each refresh), ``wire`` (each path's state as the faults leave it),
``views`` (a snapshot as text or on the live screen), ``terminal`` (keys),
``esxtop_csv`` (``-b``'s CSV) and ``run`` (:func:`run_top`: the run, paced,
and the limits on ``-d``, ``-n`` and ``--speed``).
"""

from __future__ import annotations

from .counters import Top, adapter_of, share
from .run import MAX_SAMPLES, MIN_DELAY, SPEED_MAX, SPEED_MIN, first_snapshot, fitting_delay, pick_run, run_top
from .snapshot import Row, Snapshot
from .views import VIEWS, text_view

# the command's names, then the helpers tests and docs import from here (each also from its own module)
__all__ = [
    "Top",
    "Snapshot",
    "run_top",
    "VIEWS",
    "pick_run",
    "SPEED_MIN",
    "SPEED_MAX",
    "Row",
    "text_view",
    "first_snapshot",
    "fitting_delay",
    "adapter_of",
    "share",
    "MIN_DELAY",
    "MAX_SAMPLES",
]
