"""Path-selection policies, one module per family.

``build_policy`` turns what a user wrote (a spec string, a :class:`PolicySpec`,
a Policy subclass or instance) into a fresh policy object for one device.
"""

from __future__ import annotations

import copy
from typing import Any

from .base import USABLE_STATES, DeviceView, IORequest, PathTable, PathView, Policy, alua_working_set
from .esxi import Fixed, LatencyRoundRobin, MostRecentlyUsed, RoundRobin, esxi_policy
from .spec import POLICY_DEFS, PolicySpec, parse_spec

__all__ = [
    "Policy",
    "PathView",
    "DeviceView",
    "IORequest",
    "PathTable",
    "PolicySpec",
    "POLICY_DEFS",
    "USABLE_STATES",
    "alua_working_set",
    "parse_spec",
    "build_policy",
    "policy_label",
    "Fixed",
    "MostRecentlyUsed",
    "RoundRobin",
    "LatencyRoundRobin",
]

_FAMILIES = {"fixed": esxi_policy, "mru": esxi_policy, "rr": esxi_policy, "latency": esxi_policy}


def build_policy(policy: Any) -> Policy:
    """A fresh Policy instance for one device."""
    if isinstance(policy, str):
        policy = parse_spec(policy)[0]
    if isinstance(policy, PolicySpec):
        return _FAMILIES[policy.name](policy.name, policy.as_dict())
    if isinstance(policy, type) and issubclass(policy, Policy):
        return policy()
    if isinstance(policy, Policy):
        return copy.deepcopy(policy)
    raise TypeError(f"not a policy: {policy!r} (give a spec such as 'rr:iops=1', a Policy subclass or an instance)")


def policy_label(policy: Any) -> str:
    if isinstance(policy, PolicySpec):
        return policy.text
    if isinstance(policy, type):
        return getattr(policy, "name", policy.__name__)
    return getattr(policy, "name", type(policy).__name__)
