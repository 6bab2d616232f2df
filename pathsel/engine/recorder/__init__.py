"""The recorder: what a run measures, kept in one record that both engines fill with the same compiled code.

The fast engine's loop calls these functions inline; the reference engine
calls them from Python through :class:`Recorder` (each call is one compiled
call on the same record). :func:`to_metrics` turns the record into
:class:`~pathsel.metrics.RunMetrics`.

* Latency histograms (overall, read, write, one per path) in log-linear bins
  of whole nanoseconds (:mod:`pathsel.metrics` reads them: percentiles
  within 0.4 %), with exact count, sum, minimum and maximum.
* Per-interval time series over the whole run (ramp included): completions,
  bytes, latency sum and maximum, completions per path, failures.
* Time integrals of I/Os in flight over the measured window, overall and per
  path (Little's law); wire busy and queueing time and frames per direction.
* Accounting: issued, completed, failed, retried, timed out, frames lost.
* esxtop's split of latency: the time an I/O waited in the host before its
  device took it (KAVG) and from then to completion (DAVG; GAVG is the
  overall latency), as histograms and per device; per device and interval
  the I/Os active on it (ACTV) and waiting in the host (QUED), as time
  integrals (their time averages), and over the window for Little's law.
* Per workload (a ``[[workloads]]`` entry: a VM or fio job, its numjobs
  copies one world): per op its completions, bytes, latency count, sum,
  minimum and maximum, KAVG sum and a histogram at the paths' coarser
  resolution, in the window; its completions and bytes over the whole run
  (``pathsel top``); its ACTV and QUED now and their integrals over the
  window (with host queues; else its slots, filled in at the end).
* Per fault window (:func:`~pathsel.metrics.stall_windows`) and workload:
  the I/Os outstanding at some time in it (issued before its end, completed
  or failed after its start; each in one window only: the first not opened
  by a path or array coming back, else the first), the
  longest of them from issue to completion or failure, those that took
  ``STALL_S`` or more, and those that failed: a fault's stall per VM,
  whichever interval the I/O completes in.

Its modules:

* :mod:`.record`: the record's fields, declared once (``RECORDER``), and a zeroed record for a run (:func:`~.record.new_record`);
* :mod:`.bookkeeping`: the compiled functions that count each event into it (the fast engine's loop inlines them),
  and :class:`~.bookkeeping.Recorder`, the reference engine's handle that calls the same functions from Python;
* :mod:`.readout`: the record read back as :class:`~pathsel.metrics.RunMetrics` (:func:`~.readout.to_metrics`),
  and :class:`~.readout.Live`, what a live view reads while the run goes on.
"""
