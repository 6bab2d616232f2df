"""The fast engine: the reference model compiled with numba, for sweeps and long runs.

It emulates the reference engine event for event (SimPy's order, the same
random streams), so a run gives the same numbers on either engine, and runs
any policy defined in the compiled style (every built-in one, and yours). Its modules are
split by mechanism, as the reference engine's (:mod:`pathsel.engine.reference`) are, with the same names for
the same steps:

* :mod:`.layout`: the records (model, engine state) and the codes;
* :mod:`.scheduler`: the heap and FIFOs that keep SimPy's event order;
* :mod:`.wire`: frames on the wire (a leg over a path, the replication link, loss and resends);
* :mod:`.queues`: the model's queues as one table (the host's, NVMe-oF tags, target ports, array slots) and their rules;
* :mod:`.waits`: waiting for the host to see a path change;
* :mod:`.io_life`: the life of one I/O, its steps in order (attempts, replication, timeouts, retries);
* :mod:`.cpu`: the hosts' cores;
* :mod:`.faults`: the fault timeline and the host noticing it;
* :mod:`.loop`: the loop and its switch over event kinds;
* :mod:`.state`: one run's records laid out from its model (``Run``), and its event log and trace read back;
* :mod:`.fields`: a model's parts as the records' fields (the engine's state, the queues' table, frames, cores, fabric);
* :mod:`.feed`: the rows of pre-drawn random values the loop reads, refilled between events;
* :mod:`.run`: the loop driven from Python (progress, live views, refills) and the results read back;
* :mod:`.warm`: the first compile (said, shown, and shared between two processes).
"""

from __future__ import annotations

from typing import Any

from .run import run_fast
from .state import resolve
from .warm import is_warm, prepare

__all__ = ["run_fast", "supports", "prepare", "is_warm", "resolve"]


def supports(policy: Any) -> bool:
    """True when the fast engine can run ``policy``: a spec of a registered policy, a PolicyDef, or its Python class."""
    from ...policies.framework.adapter import CompiledPolicy
    from ...policies.framework.define import PolicyDef
    from ...policies.registry import POLICY_DEFS
    from ...policies.spec import PolicySpec, parse_spec

    if isinstance(policy, str):
        try:
            policy = parse_spec(policy)[0]
        except ValueError:
            return False
    if isinstance(policy, PolicySpec):
        return policy.name in POLICY_DEFS
    if isinstance(policy, type):
        return issubclass(policy, CompiledPolicy)
    return isinstance(policy, (PolicyDef, CompiledPolicy))
