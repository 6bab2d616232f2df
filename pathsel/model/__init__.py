"""The model layer: a scenario compiled for one run (its delays and arrivals are :mod:`pathsel.timing`'s).

:func:`compile_model` turns a :class:`~pathsel.scenario.Scenario` and one run
(a policy, a preferred array) into a :class:`Model`: plain numbers, indices
and distributions that both engines read (``compile.py``), one part of the
scenario per module: ``arrays.py``, ``hosts.py``, ``nexuses.py`` (with
``fabric.py`` and ``frames.py``), ``devices.py``, ``workloads.py``,
``faults.py``, ``queues.py``, ``cpu.py``.
"""

from .arrays import ArrayModel, PortModel, ReplicationModel
from .compile import Model, compile_model
from .devices import DeviceModel, PathModel
from .fabric import US_PER_KM
from .faults import FaultModel
from .hosts import HostModel
from .nexuses import ControllerModel, LinkModel, SwitchModel
from .workloads import JobModel

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
