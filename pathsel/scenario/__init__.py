"""Scenario files: the user's words, validated into immutable models."""

from .load import (
    DEFAULT_SCENARIO_NAME,
    RunSpec,
    Scenario,
    default_scenario,
    load_scenario,
    loads_scenario,
)
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
