"""pathsel: see what a multipath path-selection policy does to IOPS and latency.

>>> import pathsel
>>> result = pathsel.simulate("sims/esxi-latency-testdrive.toml", duration=2.0)  # doctest: +SKIP
>>> result.summary()                                                            # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import examples
from .api import simulate, simulate_seeds
from .errors import ScenarioError
from .measured import read_measurements
from .policies import DeviceView, IORequest, PathView, Policy, alua_working_set
from .results import Result, RunResult
from .scenario import Scenario, default_scenario, load_scenario, loads_scenario
from .scenario.systems import emit, import_outputs
from .studies.calibrate import calibrate
from .studies.sweep import SweepResult, sweep
from .version import __version__

if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "simulate",
    "simulate_seeds",
    "sweep",
    "SweepResult",
    "import_outputs",
    "read_measurements",
    "calibrate",
    "emit",
    "load_scenario",
    "loads_scenario",
    "default_scenario",
    "Scenario",
    "ScenarioError",
    "Result",
    "RunResult",
    "Policy",
    "PathView",
    "DeviceView",
    "IORequest",
    "alua_working_set",
    "__version__",
    "plots",
    "report",
    "examples",
]


def __getattr__(name: str) -> ModuleType:
    """``pathsel.plots`` and ``pathsel.report`` load plotly only when first used."""
    if name in ("plots", "report"):
        import importlib

        module = importlib.import_module(f".results.{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'pathsel' has no attribute {name!r}")
