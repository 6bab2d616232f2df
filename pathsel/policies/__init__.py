"""Path-selection policies.

A built-in policy is a :class:`~pathsel.policies.framework.define.PolicyDef` in one
file per family (``esxi``, ``dm``, ``nvme``, ``mpio``, ``hpp``, ``aix``,
``p2c``, ``guard``, ``nvme_adaptive``, ``hdlm``), listed once in :mod:`.registry`. Each is also a Python
:class:`Policy` class, made beside its PolicyDef in the family's file and
exported here (``RoundRobin(iops=1)``), that runs its compiled hooks on the
reference engine. What a policy is and how an engine runs it (the framework)
is in :mod:`.framework`; hooks more than one family runs are in
:mod:`.selectors` and :mod:`.latency_rr`. Your own policy is either a Python
:class:`Policy` subclass (reference engine only) or a ``PolicyDef`` in the
compiled style (both engines, at the fast engine's speed): see
docs/compiled-policies.md.

``build_policy`` turns what a user wrote (a spec string, a :class:`PolicySpec`,
a PolicyDef, a Policy subclass or instance) into a fresh policy object for one device.
"""

from __future__ import annotations

import copy
import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .aix import AixShortestQueue
    from .dm import DmHistoricalServiceTime, DmIoAffinity, DmQueueLength, DmRoundRobin, DmServiceTime
    from .esxi import Fixed, LatencyRoundRobin, MostRecentlyUsed, RoundRobin
    from .framework import kernel
    from .framework.adapter import CompiledPolicy, policy_class
    from .framework.base import (
        USABLE_STATES,
        DeviceView,
        IORequest,
        PathTable,
        PathView,
        Policy,
        alua_working_set,
    )
    from .framework.define import (
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
    from .guard import Guard
    from .guard_v1 import GuardV1
    from .hdlm import HdlmExtendedLeastBlocks, HdlmExtendedLeastIos, HdlmExtendedRoundRobin
    from .hpp import HppFixed, HppLatency, HppLoadBalanceBytes, HppLoadBalanceIops, HppRoundRobin
    from .mpio import MpioFailoverOnly, MpioLeastBlocks, MpioLeastQueueDepth, MpioRoundRobin, MpioRoundRobinWithSubset, MpioWeightedPaths
    from .nvme import NvmeNuma, NvmeQueueDepth, NvmeRoundRobin
    from .nvme_adaptive import NvmeAdaptive
    from .oracle import Oracle
    from .p2c import PeakEwmaP2C
    from .registry import POLICY_DEFS, register
    from .spec import PolicySpec, parse_spec

# Where each name lives, imported on first use: the policy families define compiled hooks (numba), which
# `pathsel --help`, `pathsel presets` and the presets table (pathsel.policies.presets) do not need.
_LAZY: dict[str, str] = {
    **dict.fromkeys(("USABLE_STATES", "DeviceView", "IORequest", "PathTable", "PathView", "Policy", "alua_working_set"), ".framework.base"),
    **dict.fromkeys(
        (
            "Event",
            "EventData",
            "Field",
            "Param",
            "PolicyDef",
            "Setup",
            "Snapshot",
            "compiled",
            "compiled_inline",
            "per_device",
            "per_io",
            "per_path",
            "scalar",
            "scratch",
            "table",
        ),
        ".framework.define",
    ),
    **dict.fromkeys(("CompiledPolicy", "policy_class"), ".framework.adapter"),
    **dict.fromkeys(("POLICY_DEFS", "register"), ".registry"),
    **dict.fromkeys(("PolicySpec", "parse_spec"), ".spec"),
    "AixShortestQueue": ".aix",
    **dict.fromkeys(("DmHistoricalServiceTime", "DmIoAffinity", "DmQueueLength", "DmRoundRobin", "DmServiceTime"), ".dm"),
    **dict.fromkeys(("Fixed", "LatencyRoundRobin", "MostRecentlyUsed", "RoundRobin"), ".esxi"),
    "Guard": ".guard",
    "GuardV1": ".guard_v1",
    "Oracle": ".oracle",
    **dict.fromkeys(("HppFixed", "HppLatency", "HppLoadBalanceBytes", "HppLoadBalanceIops", "HppRoundRobin"), ".hpp"),
    **dict.fromkeys(
        ("MpioFailoverOnly", "MpioLeastBlocks", "MpioLeastQueueDepth", "MpioRoundRobin", "MpioRoundRobinWithSubset", "MpioWeightedPaths"), ".mpio"
    ),
    **dict.fromkeys(("NvmeNuma", "NvmeQueueDepth", "NvmeRoundRobin"), ".nvme"),
    "NvmeAdaptive": ".nvme_adaptive",
    **dict.fromkeys(("HdlmExtendedLeastIos", "HdlmExtendedRoundRobin", "HdlmExtendedLeastBlocks"), ".hdlm"),
    "PeakEwmaP2C": ".p2c",
}

# The built-in policies' Python classes by policy name: a spec names a built-in policy, and builds its class here
# (filled on first use from the classes the family files export).
_CLASSES: dict[str, type[CompiledPolicy]] = {}
_CLASS_NAMES = tuple(
    n
    for n, m in _LAZY.items()
    if m in (".aix", ".dm", ".esxi", ".guard", ".guard_v1", ".hpp", ".mpio", ".nvme", ".nvme_adaptive", ".hdlm", ".oracle", ".p2c")
)


def __getattr__(name: str) -> Any:
    if name == "kernel":
        value: Any = importlib.import_module(".framework.kernel", __name__)
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The names loaded on first use too (tab completion)."""
    return sorted(set(globals()) | set(__all__))


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
    "Fixed",
    "MostRecentlyUsed",
    "RoundRobin",
    "LatencyRoundRobin",
    "DmRoundRobin",
    "DmQueueLength",
    "DmServiceTime",
    "DmHistoricalServiceTime",
    "DmIoAffinity",
    "NvmeNuma",
    "NvmeRoundRobin",
    "NvmeQueueDepth",
    "NvmeAdaptive",
    "MpioFailoverOnly",
    "MpioRoundRobin",
    "MpioRoundRobinWithSubset",
    "MpioLeastQueueDepth",
    "MpioWeightedPaths",
    "MpioLeastBlocks",
    "HppFixed",
    "HppRoundRobin",
    "HppLoadBalanceIops",
    "HppLoadBalanceBytes",
    "HppLatency",
    "AixShortestQueue",
    "HdlmExtendedLeastIos",
    "HdlmExtendedRoundRobin",
    "HdlmExtendedLeastBlocks",
    "PeakEwmaP2C",
    "Guard",
    "GuardV1",
    "Oracle",
]


def class_of(defn: PolicyDef) -> type[CompiledPolicy]:
    """The Python class that runs ``defn`` on the reference engine."""
    if not _CLASSES:
        for n in _CLASS_NAMES:
            builtin = __getattr__(n)
            _CLASSES[builtin.definition.name] = builtin
    cls = _CLASSES.get(defn.name)
    if cls is None or cls.definition is not defn:
        from .framework.adapter import policy_class

        cls = _CLASSES[defn.name] = policy_class(defn)
    return cls


def build_policy(policy: Any) -> Policy:
    """A fresh Policy instance for one device."""
    from .framework.base import Policy
    from .framework.define import PolicyDef
    from .registry import POLICY_DEFS
    from .spec import PolicySpec, parse_spec

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
    from .framework.define import PolicyDef
    from .spec import PolicySpec

    if isinstance(policy, PolicySpec):
        return policy.text
    if isinstance(policy, PolicyDef):
        return policy.name
    if isinstance(policy, type):
        return getattr(policy, "name", policy.__name__)
    return getattr(policy, "name", type(policy).__name__)
