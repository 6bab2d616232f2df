"""The second pass over a scenario, once every key has passed its own checks (:mod:`pathsel.scenario.sections`): the
names one section gives that another must hold, section by section. The driver keeps the order in which one entry's
problems are listed (the loader sorts them by section and entry, and keeps that order within one).
"""

from __future__ import annotations

from ..schema import ScenarioModel
from .arrays import check_arrays
from .base import CrossCheck
from .fabric import check_fabric, check_framing, check_loss
from .faults import check_faults
from .hosts import check_hosts
from .paths import check_paths, check_port_groups
from .size import check_size
from .workloads import check_workloads

__all__ = ["check_references"]


def check_references(m: ScenarioModel) -> list[tuple[str, str]]:
    """Every (place, problem) across sections. A check that depends on a failed one is skipped, so one
    defect is one problem (an unknown host does not also make its paths' names unknown)."""
    r = CrossCheck(m)
    if not check_size(r):
        return r.problems
    check_arrays(r)
    check_hosts(r)
    check_paths(r)
    check_fabric(r)
    r.problems.extend(check_port_groups(m))
    r.problems.extend(check_framing(m))
    check_workloads(r)
    check_loss(r)
    check_faults(r)
    return r.problems
