"""Path-selection policies, one module per family.

``build_policy`` turns what a user wrote (a spec string, a :class:`PolicySpec`,
a Policy subclass or instance) into a fresh policy object for one device.
"""

from __future__ import annotations

import copy
from typing import Any

from .balancers import PeakEwmaP2C, balancer_policy
from .base import (
    USABLE_STATES,
    DeviceView,
    IORequest,
    PathTable,
    PathView,
    Policy,
    alua_working_set,
)
from .esxi import Fixed, LatencyRoundRobin, MostRecentlyUsed, RoundRobin, esxi_policy
from .hpp import (
    HppFixed,
    HppLatency,
    HppLoadBalanceBytes,
    HppLoadBalanceIops,
    HppRoundRobin,
    hpp_policy,
)
from .linux_dm import (
    DmHistoricalServiceTime,
    DmQueueLength,
    DmRoundRobin,
    DmServiceTime,
    dm_policy,
)
from .nvme import NvmeNuma, NvmeQueueDepth, NvmeRoundRobin, nvme_policy
from .spec import POLICY_DEFS, PolicySpec, parse_spec
from .windows import (
    MpioFailoverOnly,
    MpioLeastBlocks,
    MpioLeastQueueDepth,
    MpioRoundRobin,
    MpioRoundRobinWithSubset,
    MpioWeightedPaths,
    mpio_policy,
)

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
    "DmRoundRobin",
    "DmQueueLength",
    "DmServiceTime",
    "DmHistoricalServiceTime",
    "NvmeNuma",
    "NvmeRoundRobin",
    "NvmeQueueDepth",
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
    "PeakEwmaP2C",
]

# One factory per family; every name in POLICY_DEFS has one (tests/test_linux_policies.py checks).
_FAMILIES = {
    "fixed": esxi_policy,
    "mru": esxi_policy,
    "rr": esxi_policy,
    "latency": esxi_policy,
    **{name: dm_policy for name in POLICY_DEFS if name.startswith("dm:")},
    **{name: nvme_policy for name in POLICY_DEFS if name.startswith("nvme:")},
    **{name: mpio_policy for name in POLICY_DEFS if name.startswith("mpio:")},
    **{name: hpp_policy for name in POLICY_DEFS if name.startswith("hpp:")},
    "p2c-ewma": balancer_policy,
}


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
