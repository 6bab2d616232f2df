"""The model layer: a scenario compiled for one run (its delays and arrivals are :mod:`pathsel.timing`'s).

:func:`compile_model` turns a :class:`~pathsel.scenario.Scenario` and one run
(a policy, a preferred array) into a :class:`Model`: plain numbers, indices
and distributions that both engines read.
"""

from .compile import (
    US_PER_KM,
    ArrayModel,
    ControllerModel,
    DeviceModel,
    FaultModel,
    HostModel,
    JobModel,
    LinkModel,
    Model,
    PathModel,
    PortModel,
    ReplicationModel,
    SwitchModel,
    compile_model,
)

__all__ = [
    "Model",
    "PathModel",
    "ArrayModel",
    "ReplicationModel",
    "JobModel",
    "FaultModel",
    "ControllerModel",
    "DeviceModel",
    "LinkModel",
    "SwitchModel",
    "HostModel",
    "PortModel",
    "compile_model",
    "US_PER_KM",
]
