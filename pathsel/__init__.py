"""pathsel: see what a multipath path-selection policy does to IOPS and latency.

>>> import pathsel
>>> result = pathsel.simulate("sims/esxi-latency-testdrive.toml", duration=2.0)  # doctest: +SKIP
>>> result.summary()                                                            # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import ScenarioError
from .version import __version__

if TYPE_CHECKING:
    from types import ModuleType

    from . import examples
    from .api import simulate, simulate_seeds
    from .measured import read_measurements
    from .policies import DeviceView, IORequest, PathView, Policy, alua_working_set
    from .results import Result, RunResult
    from .scenario import Scenario, default_scenario, load_scenario, loads_scenario
    from .scenario.systems import emit, import_outputs
    from .studies.calibrate import calibrate
    from .studies.sweep import SweepResult, sweep

# Where each public name lives: imported on first use, so `import pathsel` (and `pathsel --version`) does not load
# numba, pandas or plotly before a simulation needs them (PEP 562 module __getattr__).
_LAZY = {
    "simulate": ".api",
    "simulate_seeds": ".api",
    "read_measurements": ".measured",
    "DeviceView": ".policies",
    "IORequest": ".policies",
    "PathView": ".policies",
    "Policy": ".policies",
    "alua_working_set": ".policies",
    "Result": ".results",
    "RunResult": ".results",
    "Scenario": ".scenario",
    "default_scenario": ".scenario",
    "load_scenario": ".scenario",
    "loads_scenario": ".scenario",
    "emit": ".scenario.systems",
    "import_outputs": ".scenario.systems",
    "calibrate": ".studies.calibrate",
    "SweepResult": ".studies.sweep",
    "sweep": ".studies.sweep",
}

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


def __getattr__(name: str) -> Any:
    """A public name's module on first use; ``pathsel.plots`` and ``pathsel.report`` load plotly only when first used."""
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    if name in ("plots", "report", "examples"):
        module: ModuleType = importlib.import_module(f".results.{name}" if name != "examples" else ".examples", __name__)
        globals()[name] = module
        return module
    if name in _SUBPACKAGES:  # `import pathsel; pathsel.policies` worked when every module was imported at once
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'pathsel' has no attribute {name!r}")


# The package's own modules a user may reach as attributes after `import pathsel` (they were imported eagerly before).
_SUBPACKAGES = frozenset(
    {
        "api",
        "engine",
        "errors",
        "jit",
        "limits",
        "measured",
        "metrics",
        "model",
        "policies",
        "results",
        "scenario",
        "stats",
        "studies",
        "timing",
        "units",
    }
)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
