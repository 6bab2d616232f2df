"""The ``[[policies]]`` section resolved into runs: each entry's spec parsed (:mod:`pathsel.policies.spec`) into a
:class:`RunSpec`, what the comparison table calls a row, with a located message for a bad spec, a parameter given
twice, a preferred array or path that is not in the scenario, a policy per volume (``[[volumes]] policy``, an entry's
``volumes``) and two rows of one label.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..errors import ScenarioError, closest
from ..policies.spec import RUN_KEYS, PolicySpec, families, norm_key, parse_spec
from .names import path_names
from .schema import ScenarioModel

__all__ = [
    "PER_DEVICE_LABEL",
    "RunSpec",
    "run_from_entry",
    "run_from_policies_entry",
    "unique_labels",
    "volume_policies",
]


@dataclass(frozen=True)
class RunSpec:
    """One policy to run: what the comparison table calls a row."""

    label: str
    policy: Any  # a PolicySpec for built-in policies, or a user's Policy class/instance
    preferred_array: str | None = None  # None: as the hosts say; "none": no preference
    expect_iops: float | None = None
    expect_tolerance: float = 0.15
    expect_source: str = ""
    # a policy per device (issue 32): (volume, PolicySpec) for every volume when the run assigns any volume its own
    # policy ([[volumes]] policy, a [[policies]] entry's volumes); () when ``policy`` runs on every device
    devices: tuple[tuple[str, PolicySpec], ...] = ()

    @property
    def builtin(self) -> bool:
        return isinstance(self.policy, PolicySpec)

    def policy_of(self, volume: str) -> Any:
        """The policy the devices of ``volume`` run: their own when the run assigns one, else ``policy``."""
        for name, spec in self.devices:
            if name == volume:
                return spec
        return self.policy

    @property
    def assignment(self) -> str:
        """The policy each volume's devices run, as text: ``lun0=latency; lun1=rr:iops=1000`` ("" without one)."""
        return "; ".join(f"{name}={spec.text}" for name, spec in self.devices)


def run_from_entry(model: ScenarioModel, entry: dict[str, Any], place: str, source: str | None) -> RunSpec:
    """Parse a policy entry (from the file or the command line) into a RunSpec."""
    src = source or "command line"
    extra = {k: v for k, v in entry.items() if k not in ("spec", "label", "preferred_array", "expect")}

    def at(key: str | None) -> str:
        """The place of a parameter: the TOML key beside ``spec`` that gave it, else ``spec`` itself."""
        if source is None:
            return place
        given = next((k for k in extra if key is not None and norm_key(k) == key), "spec")
        return f"{place}.{given}"

    problem = _repeated_or_boolean(entry, extra)
    if problem is not None:
        key, message = problem
        raise ScenarioError(src, place if source is None else f"{place}.{key}", message)

    try:
        spec, run_opts = parse_spec(entry["spec"], extra)
    except ValueError as e:
        raise ScenarioError(src, at(getattr(e, "key", None)), str(e)) from None
    preferred = entry.get("preferred_array", run_opts.get("preferred_array"))
    label = entry.get("label") or run_opts.get("label")
    if preferred is not None and preferred != "none":
        pair = model.replication.arrays if model.replication else ()
        if preferred not in pair:
            raise ScenarioError(
                src,
                f"{place}.preferred_array" if source and "preferred_array" in entry else at("preferred_array"),
                f"preferred_array {preferred!r} is not in the replication pair ({', '.join(pair) or 'no [replication] section'})",
            )
    if spec.name in ("fixed", "hpp:fixed") and spec["preferred"]:
        # one device's path as the host prints it (vmhba2:C0:T0:L3), or a nexus (vmhba2:C0:T0: its path on each
        # device); the template as written is read as its nexus, so no template is ever printed (issue 48)
        given = spec["preferred"]
        by_host = path_names(model)
        if not any(h.group(given) is not None for h in by_host.values()):
            real = [n for h in by_host.values() for n in h.shown()]
            hint = closest(given, real)
            nexuses = list(dict.fromkeys(n for h in by_host.values() for n in h.nexus_names()))
            raise ScenarioError(
                src,
                at("preferred"),
                f"{spec.name}: preferred path {given!r} is not a path of this scenario"
                + (f" (did you mean {hint!r}?)" if hint else "")
                + (
                    f"; nexuses: {', '.join(nexuses[:8])}{' ...' if len(nexuses) > 8 else ''} (a nexus names its path on each device)"
                    if set(nexuses) - set(real)  # single-LUN paths: the nexus is the path's own name, said already
                    else ""
                ),
            )
        canonical = next(c for c in (h.canonical(given) for h in by_host.values()) if c is not None)
        if canonical != given:  # the policy matches a device's path or its nexus as the results print them
            spec = parse_spec(spec.name, {**dict(spec.params), "preferred": canonical})[0]
    if not label:
        label = spec.text + (f" (preferred array {preferred})" if preferred and preferred != "none" else "")
    expect = entry.get("expect")
    return RunSpec(
        label=label,
        policy=spec,
        preferred_array=preferred,
        expect_iops=getattr(expect, "iops", None),
        expect_tolerance=getattr(expect, "tolerance", 0.15),
        expect_source=getattr(expect, "source", ""),
    )


def _spec_keys(text: Any) -> list[tuple[str, str]]:
    """The ``key=value`` items of a spec string as ``parse_spec`` splits them: [(key as written, value)]."""
    if not isinstance(text, str):
        return []
    head, _, rest = text.strip().partition(":")
    if head.strip().lower() in families():
        _, _, rest = rest.partition(":")  # FAMILY:WORD:key=value
    if not rest.strip():
        return []
    out = []
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        if eq and key.strip():
            out.append((key.strip(), value.strip()))
    return out


def _repeated_or_boolean(entry: dict[str, Any], extra: dict[str, Any]) -> tuple[str, str] | None:
    """(place under the entry, problem) for a parameter given twice, or a boolean given as a number; else None.

    ``rr:iops=1,iops=2``, ``{spec = "rr:iops=5", iops = 7}``, ``num_sampling_cycles`` beside
    ``num-sampling-cycles`` and ``label=x,label=y`` each say one thing twice: refused rather than
    letting the last win. ``iops = true`` is not read as 1.
    """
    spec = entry.get("spec")
    seen: dict[str, str] = {}
    for key, _ in _spec_keys(spec):
        k = norm_key(key)
        if k in seen:
            same = "" if seen[k] == key else f" (as {seen[k]!r})"
            return "spec", f"{key!r} is given twice in policy spec {spec!r}{same}: give each parameter once"
        seen[k] = key
    given: dict[str, str] = {}
    for key in [*extra, *(k for k in RUN_KEYS if entry.get(k) is not None)]:
        k = norm_key(key)
        if k in seen:
            return str(key), f"{key!r} is given twice: in the spec ({spec!r}) and as a key beside it; give it once"
        if k in given:
            return str(key), f"{key!r} is given twice (as {given[k]!r} and {key!r}): hyphens and underscores are the same; give it once"
        given[k] = key
    for key, value in extra.items():
        if isinstance(value, bool):
            word = "true" if value else "false"
            return str(key), f"{key} = {word}: a boolean is not a policy parameter value (write a number, {key} = {int(value)}, or a word)"
    return None


def unique_labels(runs: list[RunSpec], places: list[tuple[str, str]], hint: str) -> list[tuple[str, str]]:
    """(place, problem) for each run labelled as an earlier one: two rows of one name in every table.

    ``places``: per run, (where to point, how to name it in a message); ``hint``: how to give a label.
    """
    problems = []
    first: dict[str, str] = {}
    for run, (place, name) in zip(runs, places):
        if run.label in first:
            problems.append(
                (
                    place,
                    f"is labelled {run.label!r}, as {first[run.label]} is: two rows of one name; give one its own label ({hint}) or drop it",
                )
            )
        else:
            first[run.label] = name
    return problems


PER_DEVICE_LABEL = "per device"  # the one run of a file whose volumes name their policies and that gives no [[policies]]


def _device_spec(model: ScenarioModel, value: Any, place: str, source: str) -> PolicySpec:
    """One volume's policy (a spec string or a table ``{ spec = ..., key = value }``) as a PolicySpec, or a located
    ScenarioError. Keys that configure a run (label, preferred_array, expect) belong to a [[policies]] entry."""
    text = value if isinstance(value, str) else value.get("spec")
    keys = [norm_key(k) for k, _ in _spec_keys(text)]
    if any(k in RUN_KEYS for k in keys):
        word = next(k for k in keys if k in RUN_KEYS)
        raise ScenarioError(source, place, f"{word} belongs to a [[policies]] entry (a run), not to one volume's policy")
    if isinstance(value, str):
        try:
            run = run_from_entry(model, {"spec": value}, place, None)
        except ScenarioError as e:
            raise ScenarioError(source, place, e.problem) from None
    else:
        raw = dict(value)
        for key in raw:
            if norm_key(str(key)) in (*RUN_KEYS, "expect", "volumes"):
                raise ScenarioError(source, f"{place}.{key}", f"{key} belongs to a [[policies]] entry (a run), not to one volume's policy")
        if "spec" not in raw:
            raise ScenarioError(source, place, 'a policy table needs spec, e.g. { spec = "rr", iops = 1000 }')
        run = run_from_entry(model, raw, place, source)
    spec: PolicySpec = run.policy
    return spec


def volume_policies(model: ScenarioModel, source: str) -> tuple[dict[str, PolicySpec], list[tuple[str, str]]]:
    """The policies [[volumes]] name for their devices ({volume: spec}) and the problems of those that are bad."""
    own: dict[str, PolicySpec] = {}
    problems: list[tuple[str, str]] = []
    for j, v in enumerate(model.volumes):
        if v.policy is None:
            continue
        try:
            own[v.name] = _device_spec(model, v.policy, f"volumes[{j}].policy", source)
        except ScenarioError as e:
            problems.extend(e.problems)
    return own, problems


def run_from_policies_entry(model: ScenarioModel, entry: Any, i: int, own: dict[str, PolicySpec], source: str) -> RunSpec:
    """A [[policies]] entry as a RunSpec. Each volume's devices run, first found: the entry's ``volumes`` for it, the
    volume's own ``policy``, the entry's ``spec``. A file that names policies on its volumes and gives no [[policies]]
    runs once, "per device"."""
    place = f"policies[{i}]"
    volume_names = [v.name for v in model.volumes]
    assigned: dict[str, PolicySpec] = {}
    for name, value in (entry.volumes or {}).items():
        if name not in volume_names:
            known = ", ".join(volume_names) if volume_names else "none: the scenario has no [[volumes]]"
            guess = closest(name, volume_names)
            hint = f"did you mean {guess!r}? " if guess else ""
            raise ScenarioError(source, f"{place}.volumes.{name}", f"no volume named {name!r} ({hint}volumes: {known})")
        assigned[name] = _device_spec(model, value, f"{place}.volumes.{name}", source)
    if not assigned and not own:  # no volume runs a policy of its own: the entry as it always was
        if entry.spec is None:
            raise ScenarioError(source, f"{place}.spec", 'required key is missing (a policy spec such as "rr:iops=1")')
        raw: dict[str, Any] = {"spec": entry.spec, **entry.extra_params}
        if entry.label:
            raw["label"] = entry.label
        if entry.preferred_array is not None:
            raw["preferred_array"] = entry.preferred_array
        if entry.expect is not None:
            raw["expect"] = entry.expect
        return run_from_entry(model, raw, place, source)
    implicit = "policies" not in model.model_fields_set  # the schema's default entry: nobody wrote it
    per_volume = {**own, **assigned}
    rest = [n for n in volume_names if n not in per_volume]
    if entry.spec is None or implicit:
        if rest and entry.spec is None:
            raise ScenarioError(
                source,
                f"{place}.spec",
                f"required key is missing: volume {rest[0]!r} has no policy of its own ([[volumes]] policy) and volumes does not name it; "
                "spec gives the policy of the volumes the entry does not name",
            )
        if entry.extra_params:
            key = next(iter(entry.extra_params))
            raise ScenarioError(source, f"{place}.{key}", f"{key} is a parameter of spec, which this entry does not give")
    elif not rest:
        raise ScenarioError(
            source,
            f"{place}.spec",
            f"{entry.spec!r} runs on no device: every volume has its own policy ([[volumes]] policy or this entry's volumes); "
            "drop spec, or name the volumes it should run on in volumes = { NAME = SPEC }",
        )
    raw = {"spec": entry.spec if entry.spec is not None and not implicit else "rr", **entry.extra_params}
    if entry.preferred_array is not None:
        raw["preferred_array"] = entry.preferred_array
    if entry.expect is not None:
        raw["expect"] = entry.expect
    base = run_from_entry(model, raw, place, source)
    if rest:
        per_volume.update({n: base.policy for n in rest})
    else:  # every volume has its own: the run's policy is the first volume's (what a table shows as its spec)
        base = dataclasses.replace(base, policy=per_volume[volume_names[0]])
    devices = tuple((n, per_volume[n]) for n in volume_names)
    if entry.label:
        label = entry.label
    elif implicit:
        label = PER_DEVICE_LABEL
    else:  # names the assignment: what a sweep, league or recommendation shows as one setting
        parts = [f"{n}={s.text}" for n, s in assigned.items()]
        label = "; ".join(([base.label] if rest else []) + parts) or PER_DEVICE_LABEL
    return dataclasses.replace(base, label=label, devices=devices)
