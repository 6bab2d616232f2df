"""Policy specs: the words users type (``rr:iops=1``, ``latency:num_sampling_cycles=32``).

This module only *describes* policies (names, parameters, real defaults and
the ranges the real tools accept) so that a scenario file can be validated
without building anything. Behaviour lives in one module per family.

Grammar: ``NAME[:key=value[,key=value...]]``. Values may contain ``:`` (path
names do), so a key is split from its value at the first ``=``. Hyphens and
underscores in keys are the same (esxcli writes ``--num-sampling-cycles``).
Two keys are not policy parameters but apply to the run that uses the policy:
``preferred_array`` (the ALUA preference the arrays advertise) and ``label``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Param", "PolicyDef", "PolicySpec", "POLICY_DEFS", "parse_spec", "SpecError", "RUN_KEYS"]

INT32_MAX = 2147483647

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

    def coerce(self, raw: Any) -> Any:
        """Turn a spec or TOML value into this parameter's type, or raise ValueError."""
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
                Param(
                    "variant",
                    "min-set",
                    str,
                    "pathsel assumption: min-set (rotate over paths within tolerance of the best) or score (per I/O argmin latency x (pending+1))",
                    choices=("min-set", "score"),
                ),
                Param("tolerance", 0.1, float, "pathsel assumption (min-set): keep paths whose latency is within this fraction of the best", 0.0, 100.0),
            ),
            ("rr:type=latency",),
        ),
    )
}

_ALIASES = {alias.lower(): d.name for d in POLICY_DEFS.values() for alias in d.aliases if ":" not in alias}


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


def _norm_key(key: str) -> str:
    return key.strip().lower().replace("-", "_").lstrip("_")


def parse_spec(text: str, extra: dict[str, Any] | None = None) -> tuple[PolicySpec, dict[str, Any]]:
    """``"rr:iops=1,preferred_array=local"`` -> (PolicySpec, {"preferred_array": "local"}).

    ``extra`` holds parameters given as TOML keys beside ``spec``. Raises
    SpecError (a ValueError) with a message that names the bad key or value.
    """
    if not isinstance(text, str) or not text.strip():
        raise SpecError("a policy spec must be a non-empty string such as \"rr:iops=1\"")
    name, _, rest = text.strip().partition(":")
    name = name.strip()
    raw: dict[str, Any] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise SpecError(f"{item.strip()!r} in policy spec {text!r} is not key=value")
            raw[_norm_key(key)] = value.strip()
    for key, value in (extra or {}).items():
        raw[_norm_key(key)] = value
    canonical = _ALIASES.get(name.lower(), name.lower())
    if canonical == "rr" and str(raw.get("type", "")).lower() == "latency":
        canonical = "latency"
        raw.pop("type")
    if canonical not in POLICY_DEFS:
        raise SpecError(f"unknown policy {name!r} (known: {', '.join(POLICY_DEFS)})")
    d = POLICY_DEFS[canonical]
    run_opts = {k: raw.pop(k) for k in RUN_KEYS if k in raw}
    if canonical == "rr" and "type" not in raw:
        raw["type"] = "bytes" if "bytes" in raw and "iops" not in raw else "iops"
    params = []
    for key in raw:
        if d.param(key) is None:
            known = ", ".join(p.name for p in d.params) or "none"
            raise SpecError(f"{canonical} has no parameter {key!r} (parameters: {known})", key)
    for p in d.params:
        try:
            params.append((p.name, p.coerce(raw[p.name]) if p.name in raw else p.default))
        except ValueError as e:
            raise SpecError(str(e), p.name) from None
    return PolicySpec(canonical, tuple(params)), run_opts
