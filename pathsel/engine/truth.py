"""The truth the clairvoyant ``oracle`` reads (the view's ``t_*`` fields), laid out once for both engines.

The static part (per path: its nexus's mean latency, the array's mean
service, bandwidths, its rows of the queue table; per nexus its shared
links' wires) is built here from the model. The live part is the engine's
own state: the fast engine points the view at its arrays (``S.phys_up``,
``S.extra``, ``S.loss``, ``S.loss_op``, ``S.wire_free``, ``S.q``); the reference engine
copies its lists into the same shapes before each of the oracle's calls
(:func:`reference_truth`), and only when a device runs a policy that reads
them, so no other run pays for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model import Model
from ..model.queues import ARRAY_SLOTS, TARGET_PORT
from ..policies.framework.base import Truth
from ..policies.oracle import NOT_SHIPPED, T_BW, T_COLS, T_LAT, T_LINKBW, T_PERKIB, T_QFR, T_RECOV, T_SCSI, T_SVC_R, T_SVC_W

__all__ = ["truth_static", "reference_truth", "reads_truth"]

Q_COLS = 8  # fast/layout.py's, the columns of S.q


def reads_truth(name: str) -> bool:
    """Whether the policy called ``name`` reads the truth (the reference engine keeps it only then)."""
    return name in NOT_SHIPPED


def truth_static(model: Model) -> dict[str, np.ndarray]:
    """The view's t_* fields: the static ones filled, the live ones zero (an engine points or copies them)."""
    P, C = len(model.paths), len(model.controllers)
    t_path = np.zeros((max(P, 1), T_COLS), dtype=np.float64)
    t_row = np.full((max(P, 1), 2), -1, dtype=np.int64)
    slots, ports = model.queue_rows(ARRAY_SLOTS), model.queue_rows(TARGET_PORT)
    for p in model.paths:
        c = model.controllers[p.controller]
        a = model.arrays[p.array]
        t_path[p.index, T_LAT] = c.one_way_latency.mean
        t_path[p.index, T_RECOV] = c.loss_recovery
        t_path[p.index, T_SVC_R] = a.read_service.mean
        t_path[p.index, T_SVC_W] = a.write_service.mean
        t_path[p.index, T_PERKIB] = a.per_kib
        t_path[p.index, T_BW] = c.bandwidth or 0.0
        t_path[p.index, T_LINKBW] = min((model.links[li].bandwidth for li in c.links), default=0.0)
        t_path[p.index, T_QFR] = model.host_params[p.host].qfull_retry_delay
        t_path[p.index, T_SCSI] = 1.0 if model.protocol == "scsi" else 0.0
        t_row[p.index, 0] = slots[p.array] if p.array < len(slots) else -1
        t_row[p.index, 1] = ports[c.port] if c.port >= 0 else -1
    ML = max(1, max((len(c.links) for c in model.controllers), default=1))
    t_links = np.full((max(C, 1), ML), -1, dtype=np.int64)
    for c in model.controllers:
        t_links[c.index, : len(c.links)] = [C + li for li in c.links]
    return dict(
        t_up=np.ones(max(C, 1), dtype=np.int64),
        t_extra=np.array([c.extra for c in model.controllers] or [0.0], dtype=np.float64),
        t_loss=np.array([c.loss_ppm for c in model.controllers] or [0.0], dtype=np.float64),
        t_loss_op=np.array([c.op_loss() for c in model.controllers] or [(0.0, 0.0)], dtype=np.float64).reshape(-1, 2),
        t_wfree=np.zeros((max(model.n_wires, 1), 2), dtype=np.float64),
        t_q=np.zeros((max(len(model.queues), 1), Q_COLS), dtype=np.int64),
        t_path=t_path,
        t_row=t_row,
        t_links=t_links,
    )


def reference_truth(model: Model, sim: Any) -> Truth:
    """The reference engine's truth: ``truth_static``'s arrays, refreshed from ``sim``'s lists before each read."""
    arrays = truth_static(model)
    up, extra, loss, loss_op, wfree, q = (arrays[k] for k in ("t_up", "t_extra", "t_loss", "t_loss_op", "t_wfree", "t_q"))
    C = len(model.controllers)

    def refresh() -> None:
        up[:C] = sim.phys_up
        extra[:C] = sim.extra
        loss[:C] = sim.loss
        loss_op[:C] = sim.loss_op
        wfree[: len(sim.wire_free)] = sim.wire_free
        for r, queue in enumerate(sim.queues):
            in_use, waiting = queue.counts()
            q[r, 0], q[r, 1], q[r, 2], q[r, 3] = in_use, 0, waiting, queue.queue_depth

    return Truth(arrays, refresh, NOT_SHIPPED)
