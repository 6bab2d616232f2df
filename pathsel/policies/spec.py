"""Policy specs: the words users type (``rr:iops=1``, ``dm:service-time``, ``mpio:lqd``).

This module only *describes* policies (names, parameters, real defaults and
the ranges the real tools accept) so that a scenario file can be validated
without building anything. Behaviour lives in one module per family.

Grammar: ``NAME[:key=value[,key=value...]]``. A NAME is either a bare word
(the ESXi NMP policies, ``p2c-ewma``) or ``FAMILY:WORD`` for the operating
system families ``dm:``, ``nvme:``, ``mpio:`` and ``hpp:``, so
``dm:historical-service-time:base_weight=972`` is the policy
``dm:historical-service-time`` with ``base_weight=972``. Names are
case-insensitive and multipath.conf's ``"service-time 0"`` spelling works
(the trailing selector argument count is dropped). Values may contain ``:``
(path names do), so a key is split from its value at the first ``=``.
Hyphens and underscores in keys are the same (esxcli writes
``--num-sampling-cycles``). Two keys are not policy parameters but apply to
the run that uses the policy: ``preferred_array`` (the ALUA preference the
arrays advertise) and ``label``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import closest

__all__ = ["Param", "PolicyDef", "PolicySpec", "POLICY_DEFS", "FAMILIES", "parse_spec", "SpecError", "RUN_KEYS", "norm_key"]

INT32_MAX = 2147483647
UINT32_MAX = 4294967295

# Name prefixes of the operating-system families: "dm:service-time" is one name.
FAMILIES = ("dm", "nvme", "mpio", "hpp")

# Keys in a spec that configure the run rather than the policy.
RUN_KEYS = ("preferred_array", "label")


class SpecError(ValueError):
    """A bad policy spec; ``key`` is the (normalised) parameter at fault, None for the spec as a whole."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@dataclass(frozen=True)
class Param:
    name: str
    default: Any
    kind: type
    doc: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    parse: Callable[[Any], Any] | None = None  # a value with its own grammar (dm's failback); choices then only describe it

    def coerce(self, raw: Any) -> Any:
        """Turn a spec or TOML value into this parameter's type, or raise ValueError."""
        if self.parse is not None:
            return self.parse(raw)
        if self.kind is str:
            value = str(raw)
            if self.choices and value not in self.choices:
                raise ValueError(f"{self.name} must be one of {', '.join(self.choices)}, got {value!r}")
            return value
        if isinstance(raw, bool):
            raw = int(raw)
        try:
            value = self.kind(raw)
            if self.kind is int and isinstance(raw, float) and raw != value:
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError(f"{self.name} must be {'an integer' if self.kind is int else 'a number'}, got {raw!r}") from None
        if (self.low is not None and not value >= self.low) or (self.high is not None and not value <= self.high):
            raise ValueError(f"{self.name} must be in {_num(self.low)}..{_num(self.high)}, got {value!r}")
        return value


@dataclass(frozen=True)
class PolicyDef:
    name: str
    summary: str
    source: str
    params: tuple[Param, ...] = ()
    aliases: tuple[str, ...] = ()

    def param(self, key: str) -> Param | None:
        return next((p for p in self.params if p.name == key), None)


_USE_ANO = Param("use_ano", 0, int, "1 adds ANO paths to the set the policy uses (esxcli useANO)", 0, 1)
_VARIANT = Param(
    "variant",
    "min-set",
    str,
    "pathsel assumption: min-set (rotate over paths within tolerance of the best) or score (per I/O argmin latency x (pending+1))",
    choices=("min-set", "score"),
)
_TOLERANCE = Param("tolerance", 0.1, float, "pathsel assumption (min-set): keep paths whose latency is within this fraction of the best", 0.0, 100.0)


def _failback(raw: Any) -> str:
    """multipath.conf's failback: immediate, manual, or a number of seconds (kept as its decimal string)."""
    text = str(raw).strip().lower()
    if text in ("immediate", "manual"):
        return text
    try:
        seconds = int(text)
    except ValueError:
        seconds = 0
    if isinstance(raw, bool) or seconds <= 0 or seconds > INT32_MAX:
        raise ValueError(f"failback must be immediate, manual or a whole number of seconds > 0, got {raw!r}")
    return str(seconds)


# multipath-tools' path groups. With ALUA paths detect_pgpolicy (default yes since 0.9.6)
# picks group_by_prio; failback's built-in default is manual (libmultipath/defaults.h).
_DM_GROUPS = (
    Param(
        "path_grouping_policy",
        "group_by_prio",
        str,
        "group_by_prio (AO prio 50, ANO prio 10), multibus (one group) or failover (one path per group)",
        choices=("group_by_prio", "multibus", "failover"),
    ),
    Param(
        "failback",
        "manual",
        str,
        "when to return to a better path group: immediate, manual, or N seconds after it comes back",
        choices=("immediate", "manual", "<seconds>"),
        parse=_failback,
    ),
)
# HPP ranges and defaults: vSphere API HostMultipathInfoHppLogicalUnitPolicy.
_HPP_IOPS = Param("iops", 1000, int, "I/Os on a path before switching (--iops)", 1, 10000)
_HPP_BYTES = Param("bytes", 10485760, int, "bytes on a path before switching (--bytes)", 1, 104857600)

POLICY_DEFS: dict[str, PolicyDef] = {
    d.name: d
    for d in (
        PolicyDef(
            "fixed",
            "VMW_PSP_FIXED: always the preferred path; another path only while it is down; returns to it",
            "VMware vSphere Storage: Path Selection Plug-Ins and Policies",
            (Param("preferred", "", str, "runtime name of the preferred path (default: the first AO path)"),),
            ("VMW_PSP_FIXED",),
        ),
        PolicyDef(
            "mru",
            "VMW_PSP_MRU: keep the current path until it fails; never fails back",
            "VMware vSphere Storage: Path Selection Plug-Ins and Policies",
            (),
            ("VMW_PSP_MRU",),
        ),
        PolicyDef(
            "rr",
            "VMW_PSP_RR: rotate over the working paths, switching after N I/Os (type=iops) or N bytes (type=bytes)",
            "esxcli storage nmp psp roundrobin deviceconfig set",
            (
                Param("type", "iops", str, "switch after an I/O count (iops) or a byte count (bytes)", choices=("iops", "bytes")),
                Param("iops", 1000, int, "I/Os sent down a path before switching (--iops)", 1, INT32_MAX),
                Param("bytes", 10485760, int, "bytes sent down a path before switching (--bytes)", 1, INT32_MAX),
                _USE_ANO,
            ),
            ("VMW_PSP_RR",),
        ),
        PolicyDef(
            "latency",
            "VMW_PSP_RR --type=latency (ESXi 6.7 U1+): sample every path, then use the low-latency ones",
            "esxcli storage nmp psp roundrobin deviceconfig set --type=latency; pathsel model of undocumented internals",
            (
                Param("num_sampling_cycles", 16, int, "I/Os per path used to average its latency (--num-sampling-cycles)", 16, INT32_MAX),
                Param("latency_eval_time", 180000, int, "ms between re-evaluations of path latency (--latency-eval-time)", 30000, INT32_MAX),
                _USE_ANO,
                _VARIANT,
                _TOLERANCE,
            ),
            ("rr:type=latency",),
        ),
        # -- Linux device-mapper multipath (drivers/md/dm-ps-*.c, multipath-tools) --
        PolicyDef(
            "dm:round-robin",
            "dm-multipath round-robin: one I/O per path in turn within the current path group",
            "Linux drivers/md/dm-ps-round-robin.c (rr_select_path); multipath-tools",
            _DM_GROUPS,
            ("dm:rr",),
        ),
        PolicyDef(
            "dm:queue-length",
            "dm-multipath queue-length: fewest I/Os in flight; the scan stops at an idle path",
            "Linux drivers/md/dm-ps-queue-length.c (ql_select_path); multipath-tools",
            _DM_GROUPS,
            ("dm:ql",),
        ),
        PolicyDef(
            "dm:service-time",
            "dm-multipath service-time (multipath-tools' default): fewest bytes in flight per relative throughput",
            "Linux drivers/md/dm-ps-service-time.c (st_compare_load, st_select_path); multipath-tools",
            _DM_GROUPS,
            ("dm:st",),
        ),
        PolicyDef(
            "dm:historical-service-time",
            "dm-multipath historical-service-time (5.8+): EWMA of serialised service time x (1 + in flight), stale-path probes",
            "Linux drivers/md/dm-ps-historical-service-time.c (hst_select_path, hst_compare, hst_end_io); multipath-tools",
            (
                Param("base_weight", 972, int, "EWMA weight per ~16.8 ms bucket, 10-bit fixed point (972/1024 = 0.95)", 0, 1023),
                Param("threshold_multiplier", 0, int, "paths whose estimates differ by less than this factor compare by in-flight count (0, 1: off)", 0, UINT32_MAX),
                *_DM_GROUPS,
            ),
            ("dm:hst",),
        ),
        # -- Linux NVMe native multipath (drivers/nvme/host/multipath.c) --
        PolicyDef(
            "nvme:numa",
            "NVMe iopolicy=numa (the default): the first optimized path, kept while it stays optimized",
            "Linux drivers/nvme/host/multipath.c (nvme_numa_path, __nvme_find_path)",
            (),
        ),
        PolicyDef(
            "nvme:round-robin",
            "NVMe iopolicy=round-robin: the next optimized path after the current one",
            "Linux drivers/nvme/host/multipath.c (nvme_round_robin_path)",
            (),
            ("nvme:rr",),
        ),
        PolicyDef(
            "nvme:queue-depth",
            "NVMe iopolicy=queue-depth (6.11+): fewest I/Os in flight per controller, shared by all its namespaces",
            "Linux drivers/nvme/host/multipath.c (nvme_queue_depth_path, nvme_mpath_start_request)",
            (),
            ("nvme:qd",),
        ),
        # -- Windows MPIO, Microsoft DSM --
        PolicyDef(
            "mpio:fo",
            "MSDSM Fail Over Only: one active path; another only while it is down",
            "Microsoft: MPIO Policies (Windows Server 2008 R2); Set-MSDSMGlobalDefaultLoadBalancePolicy FOO",
            (Param("failback", 1, int, "1: return to the first path when it comes back (the 2008 R2 text); 0: stay", 0, 1),),
            ("mpio:foo", "mpio:failover"),
        ),
        PolicyDef(
            "mpio:rr",
            "MSDSM Round Robin: every available path in turn, AO and ANO alike",
            "Microsoft: MPIO Policies (Windows Server 2008 R2); VDS_LBP_ROUND_ROBIN",
            (),
        ),
        PolicyDef(
            "mpio:rrws",
            "MSDSM Round Robin with Subset (the ALUA default): AO paths in turn, ANO only when no AO path is left",
            "Microsoft: MPIO Policies; mpclaim (default for ALUA disks); VDS_LBP_ROUND_ROBIN_WITH_SUBSET",
            (),
        ),
        PolicyDef(
            "mpio:lqd",
            "MSDSM Least Queue Depth: fewest outstanding requests on the path, counted across LUNs",
            "Microsoft: MPIO Policies (the LUN 1 / LUN 2 example); VDS_LBP_DYN_LEAST_QUEUE_DEPTH",
            (),
        ),
        PolicyDef(
            "mpio:wp",
            "MSDSM Weighted Paths: the available path with the least administrator weight",
            "Microsoft: MPIO Policies; VDS_LBP_WEIGHTED_PATHS",
            (),
        ),
        PolicyDef(
            "mpio:lb",
            "MSDSM Least Blocks: fewest bytes outstanding on the path",
            "Microsoft: MPIO Policies; VDS_LBP_LEAST_BLOCKS",
            (),
        ),
        # -- VMware ESXi High Performance Plug-in (NVMe) --
        PolicyDef(
            "hpp:fixed",
            "HPP FIXED: the preferred path whenever it is usable; returns to it",
            "vSphere Storage, VMware High Performance Plug-In and Path Selection Schemes; esxcli storage hpp device set",
            (Param("preferred", "", str, "runtime name of the preferred path (default: the first AO path)"),),
        ),
        PolicyDef(
            "hpp:lb-rr",
            "HPP LB-RR (the default scheme): next working path after iops I/Os or bytes bytes, whichever comes first",
            "vSphere Storage, HPP Path Selection Schemes; vSphere API HostMultipathInfoHppLogicalUnitPolicy",
            (_HPP_IOPS, _HPP_BYTES),
        ),
        PolicyDef(
            "hpp:lb-iops",
            "HPP LB-IOPS: after iops I/Os, the working path with the fewest I/Os outstanding",
            "vSphere Storage, HPP Path Selection Schemes; vSphere API HostMultipathInfoHppLogicalUnitPolicy",
            (_HPP_IOPS,),
        ),
        PolicyDef(
            "hpp:lb-bytes",
            "HPP LB-BYTES: after bytes bytes, the working path with the fewest bytes outstanding",
            "vSphere Storage, HPP Path Selection Schemes; vSphere API HostMultipathInfoHppLogicalUnitPolicy",
            (_HPP_BYTES,),
        ),
        PolicyDef(
            "hpp:lb-latency",
            "HPP LB-Latency: sample every path, then use the low-latency ones (latency RR's machinery)",
            "vSphere API HostMultipathInfoHppLogicalUnitPolicy; pathsel model of undocumented internals",
            (
                Param("latency_eval_time", 30000, int, "ms between re-evaluations of path latency (latencyEvalTime)", 10000, 300000),
                Param("sampling_ios_per_path", 16, int, "sample I/Os per path to average its latency (samplingIosPerPath)", 16, 160),
                _VARIANT,
                _TOLERANCE,
            ),
        ),
        # -- from outside storage --
        PolicyDef(
            "p2c-ewma",
            "Finagle/Linkerd P2C + peak EWMA: two distinct random paths, the lower cost x (pending + 1)",
            "Finagle loadbalancer/PeakEwma.scala (Metric.observe, get) and p2c/P2CPick.scala (pick); Balancers.p2cPeakEwma",
            (
                Param("decay", 10.0, float, "seconds: the EWMA's time constant (Finagle decayTime)", 0.001, 86400.0),
                _USE_ANO,
            ),
            ("peak-ewma",),
        ),
    )
}

_ALIASES = {alias.lower(): d.name for d in POLICY_DEFS.values() for alias in d.aliases if "=" not in alias}


@dataclass(frozen=True)
class PolicySpec:
    """A policy name with every parameter filled in (defaults included)."""

    name: str
    params: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    def __getitem__(self, key: str) -> Any:
        return dict(self.params)[key]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def text(self) -> str:
        """Canonical short text: only the parameters that differ from the defaults."""
        d = POLICY_DEFS[self.name]
        shown = []
        for key, value in self.params:
            p = d.param(key)
            if p is None or value == p.default:
                continue
            if self.name == "rr" and key == "type":
                continue
            shown.append(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}")
        if self.name == "rr" and self["type"] == "bytes" and not any(s.startswith("bytes=") for s in shown):
            shown.insert(0, f"bytes={self['bytes']}")
        return self.name + (":" + ",".join(shown) if shown else "")


def _split_name(text: str) -> tuple[str, str]:
    """``"dm:service-time:failback=30"`` -> ("dm:service-time", "failback=30"); ``"rr:iops=1"`` -> ("rr", "iops=1")."""
    head, _, rest = text.partition(":")
    head = head.strip()
    if head.lower() not in FAMILIES:
        return head, rest
    word, _, rest = rest.partition(":")
    # multipath.conf writes a selector with its argument count: "service-time 0"
    parts = word.split()
    if len(parts) == 2 and parts[1] == "0":
        parts = parts[:1]
    return f"{head}:{' '.join(parts)}", rest


def _unknown(name: str) -> str:
    bare = [n for n in POLICY_DEFS if ":" not in n]
    family = name.partition(":")[0].strip().lower()
    # suggest within the family only, comparing the word after it ("dm:" alone is not a likeness)
    known = [n for d in POLICY_DEFS.values() for n in (d.name, *d.aliases) if "=" not in n]
    in_family = [n for n in known if n.partition(":")[0].lower() == family] if family in FAMILIES else [n for n in known if ":" not in n]
    words = {n.partition(":")[2].lower() if family in FAMILIES else n.lower(): n for n in in_family}
    guess = closest(name.strip().lower().partition(":")[2] if family in FAMILIES else name.strip().lower(), words)
    if guess:
        return f"unknown policy {name!r} (did you mean {words[guess]!r}?)"
    if family in FAMILIES:
        members = [n for n in POLICY_DEFS if n.startswith(family + ":")]
        if name.strip().lower() == family + ":":
            return f"{family}: needs a policy name, one of {', '.join(members)}"
        return f"unknown policy {name!r} ({family} policies: {', '.join(members)})"
    groups = [f + ":" + "|".join(n.partition(":")[2] for n in POLICY_DEFS if n.startswith(f + ":")) for f in FAMILIES]
    return f"unknown policy {name!r} (known: {', '.join(bare)}; {'; '.join(groups)})"


def norm_key(key: str) -> str:
    return key.strip().lower().replace("-", "_").lstrip("_")


def parse_spec(text: str, extra: dict[str, Any] | None = None) -> tuple[PolicySpec, dict[str, Any]]:
    """``"rr:iops=1,preferred_array=local"`` -> (PolicySpec, {"preferred_array": "local"}).

    ``extra`` holds parameters given as TOML keys beside ``spec``. Raises
    SpecError (a ValueError) with a message that names the bad key or value.
    """
    if not isinstance(text, str) or not text.strip():
        raise SpecError("a policy spec must be a non-empty string such as \"rr:iops=1\"")
    name, rest = _split_name(text.strip())
    raw: dict[str, Any] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise SpecError(f"{item.strip()!r} in policy spec {text!r} is not key=value")
            raw[norm_key(key)] = value.strip()
    for key, value in (extra or {}).items():
        raw[norm_key(key)] = value
    canonical = _ALIASES.get(name.lower(), name.lower())
    if canonical == "rr" and str(raw.get("type", "")).lower() == "latency":
        canonical = "latency"
        raw.pop("type")
    if canonical not in POLICY_DEFS:
        raise SpecError(_unknown(name))
    d = POLICY_DEFS[canonical]
    run_opts = {k: raw.pop(k) for k in RUN_KEYS if k in raw}
    if canonical == "rr" and "type" not in raw:
        raw["type"] = "bytes" if "bytes" in raw and "iops" not in raw else "iops"
    params = []
    for key in raw:
        if d.param(key) is None:
            known = ", ".join(p.name for p in d.params) or "none"
            guess = closest(key, [p.name for p in d.params])
            hint = f"did you mean {guess!r}? " if guess else ""
            raise SpecError(f"{canonical} has no parameter {key!r} ({hint}parameters: {known})", key)
    for p in d.params:
        try:
            params.append((p.name, p.coerce(raw[p.name]) if p.name in raw else p.default))
        except ValueError as e:
            raise SpecError(str(e), p.name) from None
    return PolicySpec(canonical, tuple(params)), run_opts
