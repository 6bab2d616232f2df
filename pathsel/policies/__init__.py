"""Path-selection policies.

A built-in policy is a :class:`~pathsel.policies.define.PolicyDef` in one
file per family (``esxi``, ``dm``, ``nvme``, ``mpio``, ``hpp``, ``aix``,
``p2c``), listed once in :mod:`.registry`. Each is also a Python
:class:`Policy` class here (``RoundRobin(iops=1)``) that runs its compiled
hooks on the reference engine. Your own policy is either a Python
:class:`Policy` subclass (reference engine only) or a ``PolicyDef`` in the
compiled style (both engines, at the fast engine's speed): see
docs/compiled-policies.md.

``build_policy`` turns what a user wrote (a spec string, a :class:`PolicySpec`,
a PolicyDef, a Policy subclass or instance) into a fresh policy object for one device.
"""

from __future__ import annotations

import copy
from typing import Any

from . import kernel
from .adapter import CompiledPolicy, policy_class
from .base import (
    USABLE_STATES,
    DeviceView,
    IORequest,
    PathTable,
    PathView,
    Policy,
    alua_working_set,
)
from .define import (
    Event,
    EventData,
    Field,
    Param,
    PolicyDef,
    Setup,
    Snapshot,
    compiled,
    compiled_inline,
    per_device,
    per_io,
    per_path,
    scalar,
    scratch,
    table,
)
from .registry import BUILTIN, POLICY_DEFS, register
from .spec import PolicySpec, parse_spec

_CLASSES: dict[str, type[CompiledPolicy]] = {}
for _d in BUILTIN:
    _cls = policy_class(_d, _d.class_name)
    _cls.__module__ = __name__
    _cls.__qualname__ = _d.class_name
    globals()[_d.class_name] = _cls
    _CLASSES[_d.name] = _cls

__all__ = [
    "Policy",
    "PathView",
    "DeviceView",
    "IORequest",
    "PathTable",
    "PolicySpec",
    "PolicyDef",
    "Param",
    "Field",
    "Event",
    "EventData",
    "Setup",
    "Snapshot",
    "compiled",
    "compiled_inline",
    "per_device",
    "per_path",
    "per_io",
    "scratch",
    "scalar",
    "table",
    "kernel",
    "CompiledPolicy",
    "POLICY_DEFS",
    "USABLE_STATES",
    "alua_working_set",
    "parse_spec",
    "build_policy",
    "policy_label",
    "policy_class",
    "register",
    *(d.class_name for d in BUILTIN),
]


def class_of(defn: PolicyDef) -> type[CompiledPolicy]:
    """The Python class that runs ``defn`` on the reference engine."""
    cls = _CLASSES.get(defn.name)
    if cls is None or cls.definition is not defn:
        cls = _CLASSES[defn.name] = policy_class(defn)
    return cls


def build_policy(policy: Any) -> Policy:
    """A fresh Policy instance for one device."""
    if isinstance(policy, str):
        policy = parse_spec(policy)[0]
    if isinstance(policy, PolicySpec):
        return class_of(POLICY_DEFS[policy.name]).with_params(policy.as_dict())
    if isinstance(policy, PolicyDef):
        return class_of(policy)()
    if isinstance(policy, type) and issubclass(policy, Policy):
        return policy()
    if isinstance(policy, Policy):
        return copy.deepcopy(policy)
    raise TypeError(f"not a policy: {policy!r} (give a spec such as 'rr:iops=1', a PolicyDef, a Policy subclass or an instance)")


def policy_label(policy: Any) -> str:
    if isinstance(policy, PolicySpec):
        return policy.text
    if isinstance(policy, PolicyDef):
        return policy.name
    if isinstance(policy, type):
        return getattr(policy, "name", policy.__name__)
    return getattr(policy, "name", type(policy).__name__)
