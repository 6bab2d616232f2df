"""Policy specs: the words users type (``rr:iops=1``, ``dm:service-time``, ``mpio:lqd``).

Grammar: ``NAME[:key=value[,key=value...]]``. A NAME is either a bare word
(the ESXi NMP policies, ``p2c-ewma``) or ``FAMILY:WORD`` for the operating
system families (``dm:``, ``nvme:``, ``mpio:``, ``hpp:``, ...), so
``dm:historical-service-time:base_weight=972`` is the policy
``dm:historical-service-time`` with ``base_weight=972``. Names are
case-insensitive and multipath.conf's ``"service-time 0"`` spelling works
(the trailing selector argument count is dropped). Values may contain ``:``
(path names do), so a key is split from its value at the first ``=``.
Hyphens and underscores in keys are the same (esxcli writes
``--num-sampling-cycles``). Two keys are not policy parameters but apply to
the run that uses the policy: ``preferred_array`` (the ALUA preference the
arrays advertise) and ``label``. ``preset:NAME`` names a shipped default
(:mod:`pathsel.policies.presets`) and resolves to its spec, labelled with
its name; keys after it (``preset:dm-netapp-ontap:failback=manual``)
override its parameters.

What a name means (parameters, defaults, ranges) is the policy's
:class:`~pathsel.policies.framework.define.PolicyDef`, listed in :mod:`pathsel.policies.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import closest
from .framework.define import Param, PolicyDef
from .presets import PRESET_PREFIX, resolve_preset
from .registry import POLICY_DEFS, families

__all__ = ["Param", "PolicyDef", "PolicySpec", "POLICY_DEFS", "parse_spec", "SpecError", "RUN_KEYS", "norm_key", "families"]

# Keys in a spec that configure the run rather than the policy.
RUN_KEYS = ("preferred_array", "label")


class SpecError(ValueError):
    """A bad policy spec; ``key`` is the (normalised) parameter at fault, None for the spec as a whole."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


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
    if head.lower() not in families():
        return head, rest
    if "=" in rest.partition(":")[0] or not rest.strip():
        # a family name that is also one policy's name or alias (guard beside guard:v1; hdlm: hdlm:exlio, HDLM's
        # default), with parameters or none
        if any(head.lower() == a.lower() for d in POLICY_DEFS.values() for a in (d.name, *d.aliases)):
            return head, rest
    word, _, rest = rest.partition(":")
    # multipath.conf writes a selector with its argument count: "service-time 0"
    parts = word.split()
    if len(parts) == 2 and parts[1] == "0":
        parts = parts[:1]
    return f"{head}:{' '.join(parts)}", rest


def _multipath_conf_guess(name: str) -> str | None:
    """``"service-time 0"`` (multipath.conf's ``path_selector`` value, with its argument count) -> ``"dm:service-time"``.

    Only a suggestion: without the ``dm:`` a bare ``round-robin`` could as well mean NVMe's iopolicy.
    """
    text = name.strip()
    if text.lower().startswith("path_selector"):  # the whole multipath.conf line pasted
        text = text[len("path_selector") :]
    words = text.strip().strip("\"'").split()
    if not words or len(words) > 2 or (len(words) == 2 and not words[1].isdigit()):
        return None
    selectors = [n.partition(":")[2] for n in POLICY_DEFS if n.startswith("dm:")]
    word = words[0].lower()
    guess = word if word in selectors else closest(word, selectors) if len(words) == 2 else None
    return "dm:" + guess if guess else None


def _unknown(name: str) -> str:
    dm = _multipath_conf_guess(name)
    if dm is not None and ":" not in name:
        selector = dm.partition(":")[2]
        nvme = f"; NVMe's native iopolicy {selector} is nvme:{selector}" if f"nvme:{selector}" in POLICY_DEFS else ""
        return f"unknown policy {name!r} (did you mean {dm!r}? multipath.conf's path_selector \"{selector} 0\" is pathsel's {dm}{nvme})"
    bare = [n for n in POLICY_DEFS if ":" not in n]
    family = name.partition(":")[0].strip().lower()
    in_a_family = family in families()
    # suggest within the family only, comparing the word after it ("dm:" alone is not a likeness)
    known = [n for d in POLICY_DEFS.values() for n in (d.name, *d.aliases) if "=" not in n]
    in_family = [n for n in known if n.partition(":")[0].lower() == family] if in_a_family else [n for n in known if ":" not in n]
    words = {n.partition(":")[2].lower() if in_a_family else n.lower(): n for n in in_family}
    guess = closest(name.strip().lower().partition(":")[2] if in_a_family else name.strip().lower(), words)
    if guess:
        return f"unknown policy {name!r} (did you mean {words[guess]!r}?)"
    if in_a_family:
        members = [n for n in POLICY_DEFS if n.startswith(family + ":")]
        if name.strip().lower() == family + ":":
            return f"{family}: needs a policy name, one of {', '.join(members)}"
        return f"unknown policy {name!r} ({family} policies: {', '.join(members)})"
    groups = [f + ":" + "|".join(n.partition(":")[2] for n in POLICY_DEFS if n.startswith(f + ":")) for f in families()]
    return f"unknown policy {name!r} (known: {', '.join(bare)}; {'; '.join(groups)})"


def norm_key(key: str) -> str:
    return key.strip().lower().replace("-", "_").lstrip("_")


def parse_spec(text: str, extra: dict[str, Any] | None = None) -> tuple[PolicySpec, dict[str, Any]]:
    """``"rr:iops=1,preferred_array=local"`` -> (PolicySpec, {"preferred_array": "local"}).

    ``extra`` holds parameters given as TOML keys beside ``spec``. Raises
    SpecError (a ValueError) with a message that names the bad key or value.
    """
    if not isinstance(text, str) or not text.strip():
        raise SpecError('a policy spec must be a non-empty string such as "rr:iops=1"')
    if text.strip().lower().startswith(PRESET_PREFIX):  # a shipped default (pathsel.policies.presets)
        try:
            found, keys = resolve_preset(text)
        except ValueError as e:
            raise SpecError(str(e)) from None
        spec, run_opts = parse_spec(found.spec, {**keys, **(extra or {})})
        given = ",".join(f"{k}={v}" for k, v in keys.items())
        run_opts.setdefault("label", found.label + (":" + given if given else ""))
        return spec, run_opts
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
    aliases = {alias.lower(): d.name for d in POLICY_DEFS.values() for alias in d.aliases if "=" not in alias}
    canonical = aliases.get(name.lower(), name.lower())
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
