"""An open-loop job's backlog in the host, as both engines keep it: its limit and the error past it.

(The queues an issued I/O waits in, the device's, the adapter's, NVMe-oF tags,
are rows of ``Model.queues``: :mod:`pathsel.model.queues`.)

An open-loop job (``rate_iops``) whose arrivals come faster than it can
issue them keeps them waiting in the host, in order; a backlog that passes
:data:`BACKLOG_CAP` means the offered load is more than the set-up serves
(the queue would grow without end), and the run stops with one message. A
model replaying a trace (``read_iolog``) holds up to the longest trace's
length instead (``Model.backlog_cap``): every record may arrive at once, and
none is dropped. With ``iodepth_full = "refuse"`` an arrival at a full
iodepth is refused and counted instead (``accounting.refused``).
"""

from __future__ import annotations

from ..errors import ScenarioError
from ..limits import BACKLOG_CAP
from ..model import JobModel, Model

__all__ = ["BACKLOG_CAP", "overload"]


def overload(model: Model, job: JobModel, now: float, waiting: int) -> ScenarioError:
    """An open-loop job's arrivals outran what it could issue: its backlog in the host passed ``model.backlog_cap``."""
    return ScenarioError(
        model.name,
        f"workload {job.workload!r} rate_iops",
        f"{waiting:,} arrivals of one job copy waiting in the host at t = {now:.6g} s: the offered "
        f"{job.rate_iops:,.6g} IOPS is more than its iodepth ({job.iodepth}) and the paths and arrays serve; "
        "lower rate_iops, or raise iodepth or the host's queue_depth",
    )
