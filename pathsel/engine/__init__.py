"""Engines: each turns a compiled Model and a policy into RunMetrics.

``reference`` (SimPy) is the specification and runs any policy, a user's own
Python class included. ``fast`` (numba) runs the same model event for event,
with the same random numbers, for the built-in policies.
"""

from .fast import run_fast, supports
from .reference import run_reference

__all__ = ["run_reference", "run_fast", "supports", "ENGINES"]

ENGINES = {"reference": run_reference, "fast": run_fast}
