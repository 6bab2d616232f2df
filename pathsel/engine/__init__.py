"""Engines: each turns a compiled Model and a policy into RunMetrics."""

from .reference import run_reference

__all__ = ["run_reference", "ENGINES"]

ENGINES = {"reference": run_reference}
