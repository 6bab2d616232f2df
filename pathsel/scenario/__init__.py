"""Scenario files: the user's words, validated into immutable models."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .load import (
        DEFAULT_SCENARIO_NAME,
        Scenario,
        default_scenario,
        load_scenario,
        loads_scenario,
    )
    from .runs import RunSpec
    from .schema import ScenarioModel

__all__ = [
    "Scenario",
    "ScenarioModel",
    "RunSpec",
    "load_scenario",
    "loads_scenario",
    "default_scenario",
    "DEFAULT_SCENARIO_NAME",
]


def __getattr__(name: str) -> Any:
    """Each name from its module on first use: ``pathsel schema`` reads the schema without loading the model compiler."""
    import importlib

    if name in __all__:
        home = {"ScenarioModel": ".schema", "RunSpec": ".runs"}.get(name, ".load")
        value = getattr(importlib.import_module(home, __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The names loaded on first use too (tab completion)."""
    return sorted(set(globals()) | set(__all__))
