"""The one list of policies: every built-in :class:`~pathsel.policies.framework.define.PolicyDef`, and the ones users register.

Specs (``pathsel.policies.spec``), ``pathsel policies``, the docs table and
both engines read policies from here. Adding a built-in policy is its file
and one line in :data:`BUILTIN`.
"""

from __future__ import annotations

from . import aix, dm, esxi, guard, guard_v1, hdlm, hpp, mpio, nvme, nvme_adaptive, oracle, p2c
from .framework.define import PolicyDef

__all__ = ["BUILTIN", "POLICY_DEFS", "builtin", "register", "families", "markdown_table"]

BUILTIN: tuple[PolicyDef, ...] = (
    # VMware ESXi NMP
    esxi.FIXED,
    esxi.MRU,
    esxi.RR,
    esxi.LATENCY,
    # Linux device-mapper multipath
    dm.ROUND_ROBIN,
    dm.QUEUE_LENGTH,
    dm.SERVICE_TIME,
    dm.HISTORICAL_SERVICE_TIME,
    dm.IO_AFFINITY,
    # Linux NVMe native multipath
    nvme.NUMA,
    nvme.ROUND_ROBIN,
    nvme.QUEUE_DEPTH,
    nvme_adaptive.ADAPTIVE,  # an RFC (2025), not merged
    # Windows MPIO (Microsoft DSM)
    mpio.FO,
    mpio.RR,
    mpio.RRWS,
    mpio.LQD,
    mpio.WP,
    mpio.LB,
    # VMware ESXi HPP
    hpp.HPP_FIXED,
    hpp.LB_RR,
    hpp.LB_IOPS,
    hpp.LB_BYTES,
    hpp.LB_LATENCY,
    # IBM AIX MPIO
    aix.SHORTEST_QUEUE,
    # Hitachi Dynamic Link Manager
    hdlm.EXLIO,
    hdlm.EXRR,
    hdlm.EXLBK,
    # from outside storage
    p2c.P2C_EWMA,
    # pathsel's own (docs/league.md)
    guard.GUARD,
    guard_v1.GUARD_V1,  # guard as it was before issue 37, for comparison
    # the league's clairvoyant bar: reads the engine's truth, not shippable (oracle.NOT_SHIPPED)
    oracle.ORACLE,
)

for _d in BUILTIN:
    _d.builtin = True

# Every policy a spec may name: the built-in ones, then those registered at run time.
POLICY_DEFS: dict[str, PolicyDef] = {d.name: d for d in BUILTIN}


def builtin(name: str) -> PolicyDef:
    """The built-in policy called ``name`` (KeyError for any other name)."""
    d = POLICY_DEFS[name]
    if not d.builtin:
        raise KeyError(name)
    return d


def register(defn: PolicyDef) -> PolicyDef:
    """Make a policy of your own nameable in specs (``pathsel.simulate(policies=["mine:x=1"])``) and scenario files.

    A name already taken by a different policy is an error; registering the same definition again is not.
    """
    if not isinstance(defn, PolicyDef):
        raise TypeError(f"register() takes a PolicyDef, not {type(defn).__name__}")
    key = defn.name.strip().lower()
    if not key or key != defn.name or any(c in key for c in ",= "):
        raise ValueError(f"policy name {defn.name!r}: use lower-case letters, digits, '-' and one optional 'family:' prefix")
    old = POLICY_DEFS.get(key)
    if old is not None and old is not defn:
        raise ValueError(f"a policy called {key!r} exists already ({old.summary})")
    POLICY_DEFS[key] = defn
    return defn


def families() -> tuple[str, ...]:
    """The name prefixes of the operating-system families: ``dm:service-time`` is one name."""
    return tuple(sorted({n.partition(":")[0] for n in POLICY_DEFS if ":" in n}))


TABLE_HEAD = "| spec | what it models, source | parameters: default [range] | what it counts | quirks and assumptions |\n|---|---|---|---|---|\n"


def markdown_table(defs: tuple[PolicyDef, ...] | None = None) -> str:
    """docs/policies.md's table of policies, one row per policy (``pathsel policies --markdown``)."""
    rows = []
    for d in BUILTIN if defs is None else defs:
        params = "; ".join(p.describe() for p in d.params) or "none"
        cells = [f"`{d.name}`", d.source, params, d.counts, d.notes]
        rows.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |\n")
    return TABLE_HEAD + "".join(rows)
