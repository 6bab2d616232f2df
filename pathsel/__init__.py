"""pathsel: see what a multipath path-selection policy does to IOPS and latency.

    >>> import pathsel
    >>> result = pathsel.simulate("sims/esxi-latency-testdrive.toml", duration=2.0)  # doctest: +SKIP
    >>> result.summary()                                                            # doctest: +SKIP
"""

from .api import simulate, simulate_seeds
from .errors import ScenarioError
from .policies import DeviceView, IORequest, PathView, Policy, alua_working_set
from .results import Result, RunResult
from .scenario import Scenario, default_scenario, load_scenario, loads_scenario
from .sweeps import SweepResult, sweep

__version__ = "0.1.0"

__all__ = [
    "simulate",
    "simulate_seeds",
    "sweep",
    "SweepResult",
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
]
