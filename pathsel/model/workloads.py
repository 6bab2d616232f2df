"""The workloads, compiled for a run: one job per fio job copy, its device, mix of ops and sizes, and arrivals.

What a scenario's ``[[workloads]]`` become (:class:`JobModel`, ``numjobs``
copies each); the arrivals themselves are ``pathsel.timing``'s. Part of the
compile step (:func:`pathsel.model.compile_model`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..scenario.schema import ScenarioModel
from ..scenario.sections.arrays import VolumeConfig

__all__ = ["JobModel", "compile_jobs"]


@dataclass(frozen=True)
class JobModel:
    """One fio job copy: ``iodepth`` I/Os kept outstanding on its device."""

    index: int
    workload: str
    host: int
    read_fraction: float
    sizes: tuple[int, ...]
    size_weights: tuple[float, ...]  # probabilities, summing to 1
    iodepth: int
    device: int = 0
    rate_iops: float = 0.0  # open loop: arrivals per second (0: closed loop, iodepth always outstanding)
    poisson: bool = False  # arrivals a Poisson process, else evenly spaced
    # arrivals that are not at one steady rate (arrivals.py): a Schedule (rate_schedule, thinktime_iotime), a
    # BlockThink (thinktime_blocks) or a Trace (read_iolog: op and size from the file too); None: rate_iops
    arrivals: Any = None
    refuse: bool = False  # iodepth_full = "refuse": an arrival finding iodepth I/Os issued and not done is refused
    numa_node: int = 0  # the host's NUMA node its CPUs run on (fio numa_cpu_nodes)
    vm: int = 0  # its [[workloads]] entry (Model.workloads): a VM or fio job, ESXi's world; its numjobs copies share it
    # fio rw read, write, rw/readwrite (not a trace): each I/O continues the job's previous one (HDLM's extended
    # algorithms keep such a run on one path; pathsel's I/Os carry no block address)
    sequential: bool = False

    @property
    def trace(self) -> Any:
        """The trace this job replays (its I/Os' ops and sizes), or None."""
        return self.arrivals if getattr(self.arrivals, "ops", None) is not None else None


def compile_jobs(
    m: ScenarioModel, volumes: list[VolumeConfig | None], device_of: dict[tuple[int, str], int], host_index: dict[str, int], default_host: str
) -> list[JobModel]:
    """``numjobs`` copies of each workload, in file order, on its host's device of its volume."""
    jobs: list[JobModel] = []
    for wi, w in enumerate(m.workloads):
        spec = w.arrival_spec()
        hi = host_index[w.host or default_host]
        vname = w.volume or (volumes[0].name if volumes[0] is not None else "volume")
        total = sum(p for _, p in w.bs)
        read_fraction, sizes, weights = w.read_fraction, tuple(s for s, _ in w.bs), tuple(p / total for _, p in w.bs)
        if getattr(spec, "ops", None) is not None:  # a trace: its own mix of ops and sizes (what it will issue)
            read_fraction = float((spec.ops == 0).mean())
            values, counts = np.unique(spec.sizes, return_counts=True)
            sizes, weights = tuple(int(v) for v in values), tuple(float(c) / len(spec.sizes) for c in counts)
        for _ in range(w.numjobs):
            jobs.append(
                JobModel(
                    len(jobs),
                    w.name,
                    hi,
                    read_fraction,
                    sizes,
                    weights,
                    w.iodepth,
                    device_of[(hi, vname)],
                    _rate(w, spec) if spec is not None else (w.rate_iops or 0.0),
                    w.rate_process == "poisson",
                    spec,
                    w.iodepth_full == "refuse",
                    w.numa_node,
                    wi,
                    w.rw in ("read", "write", "rw", "readwrite") and getattr(spec, "ops", None) is None,
                )
            )
    return jobs


def _rate(w: Any, spec: Any) -> float:
    """A job's nominal rate_iops when its arrivals change: the peak of a schedule or a burst, a trace's mean; 0 for a
    trace replayed without stalls (a closed loop over its records)."""
    if getattr(spec, "no_stall", False):
        return 0.0
    return float(spec.peak)
