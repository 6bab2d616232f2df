"""Engines: each turns a compiled Model and a policy into RunMetrics.

``reference`` (SimPy) is the specification and runs any policy, a user's own
Python class included. ``fast`` (numba) runs the same model event for event,
with the same random numbers, for policies in the compiled style: every
built-in one, and a user's :class:`~pathsel.policies.PolicyDef`.
"""

from .fast import prepare, resolve, run_fast, supports
from .reference.run import run_reference

__all__ = ["run_reference", "run_fast", "supports", "prepare", "resolve", "ENGINES"]

ENGINES = {"reference": run_reference, "fast": run_fast}
