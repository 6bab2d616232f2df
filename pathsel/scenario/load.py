"""Reading scenario files: TOML -> validated, cross-checked :class:`Scenario`.

Every problem becomes a line of a :class:`~pathsel.errors.ScenarioError`
naming the file, the place (``paths[3].one_way_latency``) and the problem.
Problems are found in two passes, and each pass reports all of its own: every
key's type and range (pydantic), then, when those pass, the references across
sections and the policy specs.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from pydantic import BaseModel, ValidationError

from ..errors import ScenarioError, closest
from ..limits import MAX_DEVICE_PATHS, MAX_OUTSTANDING, MAX_PATHS, offered_problem, series_problem
from ..policies.spec import RUN_KEYS, PolicySpec, families, norm_key, parse_spec
from ..textread import TextReadError, read_capped
from ..timing.arrivals import BlockThink, Schedule, Trace
from ..timing.distributions import delay_files_relative_to
from .names import HostNames, path_names, unknown_path
from .schema import LinkConfig, PathGroup, ScenarioModel

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

__all__ = [
    "Scenario",
    "RunSpec",
    "load_scenario",
    "loads_scenario",
    "scenario_from_data",
    "build_scenario",
    "default_scenario",
    "DEFAULT_SCENARIO_NAME",
    "read_text",
    "read_toml",
    "parse_toml",
    "path_count",
    "device_count",
    "unique_labels",
    "offered_load",
]

DEFAULT_SCENARIO_NAME = "esxi-latency-testdrive.toml"


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


@dataclass(frozen=True)
class Scenario:
    """A validated scenario and where it came from."""

    model: ScenarioModel
    source: str
    runs: tuple[RunSpec, ...]

    @property
    def name(self) -> str:
        """The scenario's ``name`` (the file's top-level key; ``scenario`` when it gives none)."""
        return self.model.name

    def with_policies(self, specs: list[str]) -> Scenario:
        """The same scenario with other policies (``--policy`` on the command line)."""
        runs: list[RunSpec] = []
        places: list[tuple[str, str]] = []
        problems: list[tuple[str, str]] = []
        for s in specs:
            try:
                runs.append(_run_from_entry(self.model, {"spec": s}, f"--policy {s!r}", None))
                places.append((f"--policy {s!r}", f"--policy {s!r}"))
            except ScenarioError as e:
                problems.extend(e.problems)
        problems.extend(unique_labels(runs, places, "SPEC,label=NAME"))
        if problems:
            raise ScenarioError.several("command line", problems)
        return Scenario(self.model, self.source, tuple(runs))

    def with_runs(self, runs: tuple[RunSpec, ...]) -> Scenario:
        """The same scenario with these runs in place of its own."""
        return Scenario(self.model, self.source, runs)


def _place(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


_SECTIONS = {"arrays": "[[arrays]]", "paths": "[[paths]]", "workloads": "[[workloads]]"}


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters: a message quotes what was written, not all of it."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + " ..."


def _problem(err: ErrorDetails) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        if len(err["loc"]) == 1 and err["loc"][0] in _SECTIONS:
            return f"required section is missing (add at least one {_SECTIONS[err['loc'][0]]} table)"
        return "required key is missing"
    if kind in ("too_short", "string_too_short"):
        n = err.get("ctx", {}).get("min_length", 1)
        return "must not be empty" if n == 1 else f"needs at least {n} entries"
    if kind == "too_long":
        return f"must have at most {err['ctx']['max_length']} entries, got {err['ctx'].get('actual_length')}"
    if kind == "model_type":
        return f"must be a table, got {_short(err.get('input'))}"
    if kind == "tuple_type":
        return f"must be a list, got {_short(err.get('input'))}"
    if isinstance(err.get("input"), bool) and kind in ("int_type", "int_from_float", "float_type"):
        # TOML's true is no 1: a boolean where a number belongs is a slip, not a value
        word = "true" if err["input"] else "false"
        return f"must be {'a whole number' if kind != 'float_type' else 'a number'}, got {word} (a boolean is not a number)"
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        return msg[len("Value error, ") :]
    msg = msg.replace("Input should be", "must be").split(", unable to parse")[0].split(", got a number")[0]
    if kind == "finite_number":
        return f"must be a finite number, got {_short(err.get('input'))}"
    if kind in (
        "literal_error",
        "int_type",
        "int_parsing",
        "int_from_float",
        "float_type",
        "float_parsing",
        "string_type",
        "bool_type",
        "bool_parsing",
        "greater_than",
        "greater_than_equal",
        "less_than",
        "less_than_equal",
    ):
        # the quotes are the problem only where the type is: a range check (a lax field) already read the number
        hint = kind in ("int_type", "int_parsing", "float_type", "float_parsing")
        msg += f", got {_short(err.get('input'))}" + (quoted_number_hint(err.get("input"), kind.startswith("int")) if hint else "")
    return msg


def quoted_number_hint(value: Any, integer: bool) -> str:
    """``': write 32 without quotes (TOML reads "32" as text)'`` when ``value`` is a number written in quotes, else ''."""
    if not isinstance(value, str):
        return ""
    text = value.strip()
    try:
        number = int(text) if integer else float(text)
    except ValueError:
        return ""
    if not math.isfinite(number) or not re.fullmatch(r"[-+]?[0-9][0-9_.eE+-]*", text):
        return ""  # "nan" and "inf" in quotes are not numbers pathsel takes either
    return f': write {text} without quotes (TOML reads "{value}" as text)'


def _still_wrong(data: Any, loc: tuple[Any, ...], value: Any, integer: bool) -> str:
    """What a quoted number would still break once written without quotes ('' when nothing): so that "drop the
    quotes" is not followed by a second round trip (``iodepth = "0"`` is also below 1)."""
    try:
        text = str(value).strip()
        # as the user would write it unquoted: "0" is the integer 0 (which a float field takes), not 0.0
        number: float = int(text) if integer or re.fullmatch(r"[-+]?[0-9]+", text) else float(text)
        trial = copy.deepcopy(data)
        node = trial
        for part in loc[:-1]:
            node = node[part]
        if node[loc[-1]] != value:
            return ""
        node[loc[-1]] = number
    except (ValueError, KeyError, IndexError, TypeError):
        return ""
    try:
        ScenarioModel.model_validate(trial)
    except ValidationError as e:
        for err in e.errors():
            if tuple(p for p in err["loc"] if not (isinstance(p, str) and re.fullmatch(r"function-\w+\[.*\]", p))) == loc:
                return _problem(err)
    return ""


# The short names the tools print for a key, which spelling alone would not lead to: esxtop's DQLEN is the device's
# queue depth; VMware's "DSNRO" is Disk.SchedNumReqOutstanding, `esxcli storage core device set -O`, the key
# sched_num_req_outstanding (whose nearest spelling, dsnro_scope, only says how it counts).
_ABBREVIATED = {"dsnro": "sched_num_req_outstanding", "dqlen": "queue_depth"}


def _model_error(source: str, exc: ValidationError, data: Any = None) -> ScenarioError:
    errors = exc.errors()
    # A list whose item is bad is also reported as too short (the bad item was dropped): not a second problem.
    errors = [e for e in errors if not (e["type"] == "too_short" and any(o is not e and o["loc"][: len(e["loc"])] == e["loc"] for o in errors))]
    # pydantic names its validator functions in the location: not a key the user wrote
    locs = [tuple(p for p in e["loc"] if not (isinstance(p, str) and re.fullmatch(r"function-\w+\[.*\]", p))) for e in errors]
    missing = {loc for e, loc in zip(errors, locs) if e["type"] == "missing"}
    misspelt: set[tuple[Any, ...]] = set()  # required keys written with a typo: reported as the typo only
    problems = []
    for err, loc in zip(errors, locs):
        problem = _problem(err)
        if err["type"] == "extra_forbidden" and loc:
            keys = _keys_at(loc[:-1])
            near = closest(str(loc[-1]), keys)
            guess = _ABBREVIATED.get(str(loc[-1]).lower())
            guess = guess if guess in keys else near
            also = f", or {near!r}" if near is not None and near != guess else ""
            problem = f"unknown key {loc[-1]!r}" + (f" (did you mean {guess!r}{also}?)" if guess else "")
            if (*loc[:-1], guess) in missing:
                misspelt.add((*loc[:-1], guess))
        elif err["type"] == "literal_error":
            # case-insensitively: "WRITE" means 'write' as surely as "Write" does
            lowered = {e.lower(): e for e in re.findall(r"'([^']*)'", str(err.get("ctx", {}).get("expected", "")))}
            near = closest(str(err.get("input")).lower(), lowered)
            guess = lowered[near] if near is not None else None
            problem += f" (did you mean {guess!r}?)" if guess else ""
        if data is not None and problem.endswith("as text)"):
            rest = _still_wrong(data, loc, err.get("input"), err["type"].startswith("int"))
            problem += f"; and it {rest}" if rest.startswith("must") else f"; and then: {rest}" if rest else ""
        problems.append((err, loc, problem))
    kept = [(_place(loc), problem) for err, loc, problem in problems if not (err["type"] == "missing" and loc in misspelt)]
    return ScenarioError.several(source, _in_file_order(kept))


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The scenario model class inside a field's annotation (through Annotated, Optional and tuple[...]), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys the table at ``loc`` (("paths", 0)) may have: for "did you mean"."""
    model: type[BaseModel] | None = ScenarioModel
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if model is not None else None
        model = _model_in(field.annotation) if field is not None else None
    return list(model.model_fields) if model is not None else []


# Sections in the order of ScenarioModel's fields, which is the order the reference gives them in.
_SECTION_ORDER = {name: i for i, name in enumerate(ScenarioModel.model_fields)}


def _in_file_order(problems: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Problems sorted by section and entry (stable: within an entry, in the order found)."""

    def key(item: tuple[str, str]) -> tuple[int, int]:
        m = re.match(r"([A-Za-z_]+)(?:\[(\d+)\])?", item[0])
        if not m or m.group(1) not in _SECTION_ORDER:
            return (-1, 0)  # an unknown top-level key: TOML puts those before every table
        return (_SECTION_ORDER[m.group(1)], int(m.group(2) or 0))

    return sorted(problems, key=key)


def _run_from_entry(model: ScenarioModel, entry: dict[str, Any], place: str, source: str | None) -> RunSpec:
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


def path_count(m: ScenarioModel) -> int:
    """The paths a run has (what the engines and the time series hold): each [[paths]] table's count, once per
    volume on its array (once when there are no [[volumes]]). Arrays are matched by name; unknown ones count once."""
    held = [set(v.arrays) if v.arrays else None for v in m.volumes] or [None]
    return sum(g.count * max(1, sum(1 for h in held if h is None or g.array in h)) for g in m.paths)


def device_count(m: ScenarioModel) -> int:
    """The devices a run has, at most: each host's view of each volume (of the one volume without [[volumes]])."""
    return len(m.hosts) * max(1, len(m.volumes))


def _widest_device(m: ScenarioModel) -> tuple[str, str | None, int]:
    """(host, volume or None, paths) of the device with the most paths: a host's [[paths]] tables to the
    volume's arrays (all of them without [[volumes]]). A path with no host belongs to the first."""
    first = m.hosts[0].name
    best: tuple[str, str | None, int] = (first, None, 0)
    for host in {g.host or first for g in m.paths}:
        mine = [g for g in m.paths if (g.host or first) == host]
        for vol in m.volumes or [None]:
            arrays = vol.arrays if vol is not None else None
            n = sum(g.count for g in mine if arrays is None or g.array in arrays)
            if n > best[2]:
                best = (host, vol.name if vol is not None else None, n)
    return best


def _check_references(m: ScenarioModel, source: str) -> list[tuple[str, str]]:
    """Every (place, problem) across sections. A check that depends on a failed one is skipped, so one
    defect is one problem (an unknown host does not also make its paths' names unknown)."""
    problems: list[tuple[str, str]] = []

    def fail(place: str, problem: str) -> None:
        problems.append((place, problem))

    def unique(items: list[str], section: str) -> None:
        seen: set[str] = set()
        for i, name in enumerate(items):
            if name in seen:
                fail(f"{section}[{i}].name", f"duplicate name {name!r}")
            seen.add(name)

    arrays = [a.name for a in m.arrays]
    hosts = [h.name for h in m.hosts]
    n_paths = path_count(m)
    if n_paths > MAX_PATHS:
        # before any name is spelt out: a billion of them would take the rest of the day
        fail(
            "paths",
            f"{n_paths:,} paths (count over every [[paths]] table{', once per volume on its array' if m.volumes else ''}) "
            f"is more than the {MAX_PATHS:,} pathsel simulates in one run",
        )
        return problems
    wide_host, volume, widest = _widest_device(m)
    if widest > MAX_DEVICE_PATHS:
        seen = f"host {wide_host!r} sees volume {volume!r}" if volume is not None else f"host {wide_host!r} sees its volume"
        fail(
            "paths",
            f"{seen} over {widest:,} paths, more than the {MAX_DEVICE_PATHS:,} paths per device pathsel "
            "simulates (the engine's memory grows with their square; ESXi and Windows stop at 32)",
        )
        return problems
    outstanding = sum(w.numjobs * w.iodepth for w in m.workloads)
    if outstanding > MAX_OUTSTANDING:
        parts = " + ".join(f"{w.numjobs:,} x {w.iodepth:,}" for w in m.workloads)
        fail(
            "workloads",
            f"the workloads keep {outstanding:,} I/Os outstanding together ({parts}, numjobs x iodepth), "
            f"more than the {MAX_OUTSTANDING:,} pathsel simulates in one run",
        )
    span = max(w.ramp_time for w in m.workloads) + m.duration
    series = series_problem(span, m.interval, n_paths, device_count(m))
    if series is not None:
        fail("interval", series)
    offered = offered_problem(offered_load(m, span), span)
    if offered is not None:
        fail("workloads", offered)
    unique(arrays, "arrays")
    unique(hosts, "hosts")
    unique([w.name for w in m.workloads], "workloads")

    def host_of(section: str, i: int, host: str | None) -> str | None:
        """The entry's host, or None when it is missing or unknown (reported)."""
        if host is None:
            if len(hosts) > 1:
                fail(f"{section}[{i}].host", f"required when there is more than one host ({', '.join(hosts)})")
                return None
            return hosts[0]
        if host not in hosts:
            fail(f"{section}[{i}].host", f"no host named {host!r} (hosts: {', '.join(hosts)})")
            return None
        return host

    if m.protocol != "nvme":  # NVMe-oF's I/O queues: a SCSI host has none
        for i, h in enumerate(m.hosts):
            for key in ("nvme_io_queues", "nvme_queue_size"):
                if getattr(h, key) is not None:
                    fail(
                        f"hosts[{i}].{key}",
                        f"is for NVMe-oF only: the scenario's protocol is {m.protocol!r} "
                        '(set protocol = "nvme", or use queue_depth / adapter_queue_depth)',
                    )

    if m.replication is not None:
        for j, a in enumerate(m.replication.arrays):
            if a not in arrays:
                fail(f"replication.arrays[{j}]", f"no array named {a!r} (arrays: {', '.join(arrays)})")
        if m.replication.arrays[0] == m.replication.arrays[1]:
            fail("replication.arrays", f"names {m.replication.arrays[0]!r} twice: the two arrays must differ")
    for i, h in enumerate(m.hosts):
        if h.preferred_array is not None:
            pair = m.replication.arrays if m.replication else ()
            if h.preferred_array not in pair:
                fail(
                    f"hosts[{i}].preferred_array",
                    f"{h.preferred_array!r} is not in the replication pair ({', '.join(pair) or 'no [replication] section'})",
                )

    names_by_host: dict[str, set[str]] = {h: set() for h in hosts}
    runtime: list[dict[str, HostNames]] = []

    def runtime_names() -> dict[str, HostNames]:
        """Every name each host's paths answer to, worked out once and only when a fault names a path."""
        if not runtime:
            runtime.append(path_names(m))
        return runtime[0]

    for i, g in enumerate(m.paths):
        if g.array not in arrays:
            fail(f"paths[{i}].array", f"no array named {g.array!r} (arrays: {', '.join(arrays)})")
        host = host_of("paths", i, g.host)
        if g.count > 1 and "{i}" not in g.name:
            fail(f"paths[{i}].name", f"count = {g.count} needs {{i}} in the name to give each path its own name")
            continue  # its names would all be the same: not duplicates to report as well
        if host is None:
            continue
        for name in g.names():
            if name in names_by_host[host]:
                fail(f"paths[{i}].name", f"duplicate path name {name!r} on host {host!r}")
            names_by_host[host].add(name)
    nodes_of = {h.name: h.numa_nodes for h in m.hosts}

    def numa_node(section: str, i: int, host: str | None, node: int) -> None:
        """The entry's numa_node must be one of its host's nodes."""
        n = nodes_of.get(host or "", 1) if host is not None else None
        if n is not None and node >= n:
            fail(
                f"{section}[{i}].numa_node",
                f"node {node} is out of range: host {host!r} has numa_nodes = {n} (nodes 0{' ... ' + str(n - 1) if n > 1 else ''})",
            )

    for i, g in enumerate(m.paths):
        if g.numa_node:
            numa_node("paths", i, g.host or (hosts[0] if len(hosts) == 1 else None), g.numa_node)
    for i, w in enumerate(m.workloads):
        if w.numa_node:
            numa_node("workloads", i, w.host or (hosts[0] if len(hosts) == 1 else None), w.numa_node)
    links = [ln.name for ln in m.links]
    unique(links, "links")
    for i, g in enumerate(m.paths):
        for j, ln in enumerate(g.links):
            if ln not in links:
                fail(f"paths[{i}].links[{j}]", f"no link named {ln!r} ({'links: ' + ', '.join(links) if links else 'no [[links]] section'})")
    problems.extend(_check_fabric(m))
    volumes = [v.name for v in m.volumes]
    unique(volumes, "volumes")
    for i, v in enumerate(m.volumes):
        for j, a in enumerate(v.arrays or ()):
            if a not in arrays:
                fail(f"volumes[{i}].arrays[{j}]", f"no array named {a!r} (arrays: {', '.join(arrays)})")
    problems.extend(_check_port_groups(m))
    problems.extend(_check_framing(m))
    if m.replication is not None and m.replication.preferred_site is not None:
        if m.replication.preferred_site not in m.replication.arrays:
            fail("replication.preferred_site", f"{m.replication.preferred_site!r} is not in the replication pair ({', '.join(m.replication.arrays)})")
    arrays_of_host: dict[str, set[str]] = {h: set() for h in hosts}
    for g in m.paths:
        if (g.host or hosts[0]) in arrays_of_host and g.array in arrays:
            arrays_of_host[g.host or hosts[0]].add(g.array)
    for i, w in enumerate(m.workloads):
        host = host_of("workloads", i, w.host)
        if host is not None and not names_by_host[host]:
            fail(f"workloads[{i}].host", f"host {host!r} has no paths")
            continue
        if w.volume is None and len(volumes) > 1:
            fail(f"workloads[{i}].volume", f"required when there is more than one volume ({', '.join(volumes)})")
            continue
        if w.volume is not None and w.volume not in (volumes or []):
            fail(
                f"workloads[{i}].volume",
                f"no volume named {w.volume!r} ({'volumes: ' + ', '.join(volumes) if volumes else 'no [[volumes]] section'})",
            )
            continue
        vol = next((v for v in m.volumes if v.name == w.volume), None) if w.volume is not None else (m.volumes[0] if m.volumes else None)
        if host is None or vol is None or not vol.arrays or not arrays_of_host[host]:
            continue  # no volumes: the implicit one is on every array, so any path reaches it
        if not set(vol.arrays) & arrays_of_host[host]:
            fail(
                f"workloads[{i}].volume",
                f"workload {w.name!r} on host {host!r} uses volume {vol.name!r}, on array{'s' if len(vol.arrays) > 1 else ''} "
                f"{', '.join(vol.arrays)}, but {host!r} has paths to {', '.join(sorted(arrays_of_host[host]))} only: "
                "no path reaches the volume, so the workload would never complete an I/O",
            )
    lossy: list[tuple[str, PathGroup | LinkConfig]] = [
        *((f"paths[{i}]", g) for i, g in enumerate(m.paths)),
        *((f"links[{i}]", ln) for i, ln in enumerate(m.links)),
    ]
    for place, t in lossy:
        if t.loss_ops != "both" and t.loss_ppm == 0:  # a key with no effect is a mistake worth saying
            fail(f"{place}.loss_ops", f'loss_ops = "{t.loss_ops}" says whose frames loss_ppm drops, but loss_ppm is 0 here')
    needs = {
        "path_down": "path",
        "path_up": "path",
        "alua": "path",
        "latency": "path or link",
        "loss": "path or link",
        "array_down": "array",
        "array_up": "array",
        "replication_down": "",
        "replication_up": "",
        "owner": "",
        "slow_drain": "link",
    }
    for i, f in enumerate(m.faults):
        at = f"faults[{i}]"
        need = needs[f.what]
        by_volume = f.what == "alua" and (f.volume is not None or f.port_group is not None)
        if need == "path" and f.path is None and not by_volume:
            fail(f"{at}.path", f"{f.what} needs the path it happens to" + (" (or a volume or port_group)" if f.what == "alua" else ""))
        if need == "path or link" and (f.path is None) == (f.link is None):
            fail(f"{at}.path", f'{f.what} needs exactly one of path or link (a [[links]] name or "replication")')
        if need == "link" and (f.link is None or f.link == "replication"):
            fail(f"{at}.link", f"{f.what} needs the [[links]] link whose port drains slowly (one with bb_credits)")
        if need == "array" and f.array is None:
            fail(f"{at}.array", f"{f.what} needs the array it happens to")
        if f.path is not None and need not in ("path", "path or link"):
            fail(f"{at}.path", f"{f.what} does not take a path")
        if f.link is not None and need not in ("path or link", "link"):
            fail(f"{at}.link", f"{f.what} does not take a link")
        if f.array is not None and need != "array":
            fail(f"{at}.array", f"{f.what} does not take an array")
        if f.path is not None:
            host = host_of("faults", i, f.host)
            if host is not None:
                # a device's path as the host prints it, its nexus, or the template as written (issue 48)
                known = runtime_names().get(host)
                if known is not None and known.group(f.path) is None:
                    fail(f"{at}.path", unknown_path(f.path, host, known))
        if f.link is not None and f.link != "replication" and f.link not in links:
            fail(f"{at}.link", f"no link named {f.link!r} (links: {', '.join(['replication', *links])})")
        if f.link == "replication" and m.replication is None and need != "link":
            fail(f"{at}.link", "there is no [replication] section")
        if f.array is not None and f.array not in arrays:
            fail(f"{at}.array", f"no array named {f.array!r} (arrays: {', '.join(arrays)})")
        if f.what.startswith("replication") and m.replication is None:
            fail(f"{at}.what", f"{f.what} needs a [replication] section")
        if f.what == "alua" and f.state is None:
            fail(f"{at}.state", "an alua change needs the new state (AO, ANO, standby, unavailable or transitioning)")
        if f.what != "alua" and f.state is not None:
            fail(f"{at}.state", f"only an alua change takes a state, not {f.what}")
        if f.what == "latency" and f.add is None:
            fail(f"{at}.add", 'a latency step needs add (the one-way delay to add, e.g. "5ms")')
        if f.what != "latency" and f.add is not None:
            fail(f"{at}.add", f"only a latency step takes add, not {f.what}")
        if f.what == "loss" and f.ppm is None:
            fail(f"{at}.ppm", "a loss burst needs ppm (frames lost per million)")
        if f.what != "loss" and f.ppm is not None:
            fail(f"{at}.ppm", f"only a loss burst takes ppm, not {f.what}")
        if f.loss_ops is not None and f.what != "loss":
            fail(f"{at}.loss_ops", f"only a loss burst takes loss_ops, not {f.what}")
        elif f.loss_ops is not None and f.ppm == 0:  # as on a path or link: the key would say nothing
            fail(f"{at}.loss_ops", f'loss_ops = "{f.loss_ops}" says whose frames ppm drops, but ppm is 0 here')
        elif f.loss_ops is not None and f.link == "replication":
            fail(f"{at}.loss_ops", "only writes cross the replication link (their mirror copies): drop loss_ops")
        if f.duration is not None and f.what not in ("latency", "loss", "slow_drain"):
            fail(f"{at}.duration", f"only a latency step, a loss burst or a slow drain takes a duration, not {f.what}")
        problems.extend(_check_slow_drain(m, i, f))
        problems.extend(_check_group_fault(m, i, f))
    return problems


def _check_framing(m: ScenarioModel) -> list[tuple[str, str]]:
    """A path's transport (its own or its host's) carries the scenario's protocol; mtu is for Ethernet ones."""
    problems: list[tuple[str, str]] = []
    hosts = {h.name: h for h in m.hosts}
    scsi = ("fc", "iscsi")
    for i, h in enumerate(m.hosts):
        if h.transport is not None and (h.transport in scsi) != (m.protocol == "scsi"):
            problems.append((f"hosts[{i}].transport", _protocol_clash(h.transport, m.protocol)))
    for i, g in enumerate(m.paths):
        own = hosts.get(g.host or m.hosts[0].name) if g.host is not None or len(m.hosts) == 1 else None
        if g.transport is not None and (g.transport in scsi) != (m.protocol == "scsi"):
            problems.append((f"paths[{i}].transport", _protocol_clash(g.transport, m.protocol)))
        transport = g.transport or (own.transport if own is not None else None)
        if g.mtu is not None and transport is None:
            problems.append((f"paths[{i}].mtu", 'needs a transport (e.g. transport = "nvme-tcp"): without one a path has no frames'))
        elif g.mtu is not None and transport in ("fc", "nvme-fc"):
            why = f"is for Ethernet transports; its transport is {transport!r} (its host's), whose frames carry at most 2,112 bytes"
            problems.append((f"paths[{i}].mtu", why + " (FC-FS): drop mtu"))
    for i, h in enumerate(m.hosts):
        if h.mtu is not None and h.transport is None and not any(g.transport for g in m.paths):
            problems.append((f"hosts[{i}].mtu", 'needs a transport (e.g. transport = "nvme-tcp"): without one a path has no frames'))
    return problems


def _protocol_clash(transport: str, protocol: str) -> str:
    carries = "SCSI" if transport in ("fc", "iscsi") else "NVMe"
    want = "scsi" if carries == "SCSI" else "nvme"
    return f"{transport!r} carries {carries}, but the scenario's protocol is {protocol!r} (set protocol = {want!r}, or another transport)"


def _check_fabric(m: ScenarioModel) -> list[tuple[str, str]]:
    """The fabric (issue 33): unique switches, and each path's route of [[links]] meeting at switches."""
    problems: list[tuple[str, str]] = []
    switches = [s.name for s in m.switches]
    seen: set[str] = set()
    for i, s in enumerate(m.switches):
        if s.name in seen:
            problems.append((f"switches[{i}].name", f"duplicate switch name {s.name!r}"))
        seen.add(s.name)
    if problems:
        return problems  # routes through a switch named twice: that defect first
    for i, ln in enumerate(m.links):
        # with a fabric declared, a link touching no switch is most likely a mistyped switch name (a direct-attached
        # port-to-port link needs no between)
        if switches and ln.between is not None and not any(e in switches for e in ln.between):
            hint = "".join(dict.fromkeys(_guess(e, switches) for e in ln.between))[:200]
            problems.append(
                (
                    f"links[{i}].between",
                    f"neither {ln.between[0]!r} nor {ln.between[1]!r} is a [[switches]] name: a fabric link has a switch at one end at least{hint}",
                )
            )
    if problems:
        return problems
    by_name = {ln.name: ln for ln in m.links}
    reported: set[tuple[str, str]] = set()  # a pair of links that do not meet: one line, for its first route
    for i, g in enumerate(m.paths):
        route = [by_name[n] for n in g.links if n in by_name]
        if len(route) != len(g.links):
            continue  # an unknown link: reported already
        for j, ln in enumerate(route):
            if g.links.index(ln.name) != j:
                problems.append((f"paths[{i}].links[{j}]", f"names link {ln.name!r} twice: a route crosses each link once"))
                break
        ends = [ln.between for ln in route]
        if all(e is None for e in ends):
            continue  # the shorthand: links in order, no switches
        if any(e is None for e in ends):
            j = next(k for k, e in enumerate(ends) if e is None)
            if (route[j].name, "") not in reported:
                reported.add((route[j].name, ""))
                problems.append(
                    (
                        f"paths[{i}].links[{j}]",
                        f"link {route[j].name!r} has no between while other links of this route have: give every link of a "
                        "route its two ends, or none",
                    )
                )
            continue
        for j in range(1, len(route)):
            a, b = ends[j - 1], ends[j]
            assert a is not None and b is not None
            meet = [x for x in a if x in b and x in switches]
            if not meet and (route[j - 1].name, route[j].name) in reported:
                break
            if not meet:
                reported.add((route[j - 1].name, route[j].name))
                unknown = list(dict.fromkeys(x for x in (*a, *b) if x not in switches))
                hint = "".join(dict.fromkeys(_guess(x, switches) for x in unknown))[:200] if switches else " (no [[switches]] section)"
                problems.append(
                    (
                        f"paths[{i}].links[{j}]",
                        f"links {route[j - 1].name!r} ({' - '.join(a)}) and {route[j].name!r} ({' - '.join(b)}) do not "
                        f"meet at a switch: consecutive links of a route share a [[switches]] end{hint}",
                    )
                )
                break
    return problems


def _check_slow_drain(m: ScenarioModel, i: int, f: Any) -> list[tuple[str, str]]:
    """A slow_drain fault: on a link with bb_credits; credit_return or stop (which needs a duration)."""
    at = f"faults[{i}]"
    if f.what != "slow_drain":
        for key in ("credit_return", "stop"):
            if getattr(f, key) is not None:
                return [(f"{at}.{key}", f"only a slow_drain fault takes {key}, not {f.what}")]
        return []
    link = next((ln for ln in m.links if ln.name == f.link), None)
    if link is not None and link.bb_credits is None:
        return [(f"{at}.link", f"link {f.link!r} has no bb_credits: a slow drain is credits returned late (give the link bb_credits)")]
    if (f.credit_return is None) == (not f.stop):
        return [(f"{at}.credit_return", 'a slow_drain needs exactly one of credit_return (e.g. "1ms") or stop = true')]
    if f.stop and f.duration is None:
        return [(f"{at}.duration", "a stopped port drains again only when the fault reverts: give the stop a duration")]
    return []


def _guess(word: str, candidates: list[str]) -> str:
    """The " (did you mean 'x'?)" when a misspelt name is close to one of ``candidates``, else ""."""
    guess = closest(word, candidates)
    return f" (did you mean {guess!r}?)" if guess and guess != word else ""


def _check_port_groups(m: ScenarioModel) -> list[tuple[str, str]]:
    """Target port groups (issue 32): each path's group, each volume's owner and ALUA table, every group reached."""
    problems: list[tuple[str, str]] = []
    by_name = {a.name: a for a in m.arrays}
    reached: set[tuple[str, str]] = set()
    for i, g in enumerate(m.paths):
        a = by_name.get(g.array)
        if a is None:
            continue
        groups = [n for n, _ in a.groups()]
        if g.port_group not in groups:  # reported below: its array's unreached groups would be the same defect again
            reached.add((a.name, "\0"))
        if g.port_group is None:
            if a.controllers:
                problems.append(
                    (
                        f"paths[{i}].port_group",
                        f"required: array {a.name!r} has controllers ({', '.join(a.controllers)}), so each path names the "
                        f"target port group it lands on ({', '.join(groups)})",
                    )
                )
        elif not a.controllers:
            if (a.name, "\1") not in reached:  # one line per array: the defect is its missing controllers
                problems.append((f"paths[{i}].port_group", f"array {a.name!r} has no controllers: give it controllers = [...] or drop port_group"))
            reached.add((a.name, "\1"))
        elif g.port_group not in groups:
            problems.append(
                (
                    f"paths[{i}].port_group",
                    f"no port group {g.port_group!r} on array {a.name!r} (groups: {', '.join(groups)}){_guess(g.port_group, groups)}",
                )
            )
        else:
            reached.add((a.name, g.port_group))
    for i, a in enumerate(m.arrays):
        if not any(g.array == a.name for g in m.paths) or (a.name, "\0") in reached:
            continue
        for n, c in a.groups():
            if (a.name, n) not in reached:
                problems.append(
                    (
                        f"arrays[{i}].port_groups" if a.port_groups else f"arrays[{i}].controllers",
                        f"no path reaches target port group {n!r} (controller {c!r}) of array {a.name!r}: "
                        "give a [[paths]] entry port_group = " + repr(n) + ", or leave the group out",
                    )
                )
    for i, v in enumerate(m.volumes):
        held = [by_name[n] for n in (v.arrays or [a.name for a in m.arrays]) if n in by_name]
        with_ctrl = [a for a in held if a.controllers]
        if v.sched_num_req_outstanding is not None:  # DSNRO per device: at most each seeing host's DQLEN
            problems.extend(_check_volume_dsnro(m, i, v, {a.name for a in held}))
        if v.owner is not None:
            if not with_ctrl:
                problems.append((f"volumes[{i}].owner", f"none of the arrays holding volume {v.name!r} has controllers: owner needs them"))
            problems.extend(_unknown_controller(f"volumes[{i}].owner", v.owner, with_ctrl))
        if v.alua is not None:
            groups = [n for a in with_ctrl for n, _ in a.groups()]
            if not with_ctrl:
                problems.append(
                    (f"volumes[{i}].alua", f"none of the arrays holding volume {v.name!r} has controllers: an ALUA table per group needs them")
                )
                continue
            unknown = [k for k in v.alua if k not in groups]
            for k in unknown:
                problems.append(
                    (
                        f"volumes[{i}].alua.{k}",
                        f"no target port group {k!r} on the arrays holding volume {v.name!r} (groups: {', '.join(groups)}){_guess(k, groups)}",
                    )
                )
            if not unknown and "AO" not in v.alua.values() and all(v.alua.get(n, "AO") != "AO" for n in groups):
                problems.append(
                    (
                        f"volumes[{i}].alua",
                        f"volume {v.name!r} has no optimized (AO) target port group: a LUN is AO on its owner's groups; "
                        "mark one group AO (all ANO/standby is a bad input: no array reports it)",
                    )
                )
    return problems


def _unknown_controller(place: str, name: str, arrays: list[Any]) -> list[tuple[str, str]]:
    """``name`` is not a controller of one of ``arrays``: a line each, with a guess at the misspelt name."""
    return [
        (place, f"no controller {name!r} on array {a.name!r} (controllers: {', '.join(a.controllers)}){_guess(name, list(a.controllers))}")
        for a in arrays
        if name not in a.controllers
    ]


def _check_volume_dsnro(m: ScenarioModel, i: int, v: Any, held: set[str]) -> list[tuple[str, str]]:
    """A volume's own DSNRO: every host with a path to it needs a queue_depth at least as large (as [[hosts]]')."""
    first = m.hosts[0].name
    seeing = {g.host or first for g in m.paths if g.array in held}
    for h in m.hosts:
        if h.name not in seeing:
            continue
        n = v.sched_num_req_outstanding
        if h.queue_depth is None:
            return [
                (
                    f"volumes[{i}].sched_num_req_outstanding",
                    f"host {h.name!r} sees volume {v.name!r} but has no queue_depth: DSNRO caps the device queue (DQLEN) "
                    "while VMs compete, so the host must have one (e.g. queue_depth = 64)",
                )
            ]
        if n > h.queue_depth:
            return [
                (
                    f"volumes[{i}].sched_num_req_outstanding",
                    f"{n} must be at most the queue_depth ({h.queue_depth}) of host {h.name!r}, which sees volume {v.name!r}: "
                    "a DSNRO above the device's queue depth would never bind",
                )
            ]
    return []


def _check_group_fault(m: ScenarioModel, i: int, f: Any) -> list[tuple[str, str]]:
    """An alua change naming a volume or a port group; an owner change (issue 32)."""
    problems: list[tuple[str, str]] = []
    at = f"faults[{i}]"
    volumes = [v.name for v in m.volumes]
    groups = sorted({n for a in m.arrays for n, _ in a.groups()})
    if f.volume is not None and f.what not in ("alua", "owner"):
        problems.append((f"{at}.volume", f"only an alua or owner change takes a volume, not {f.what}"))
    if f.port_group is not None and f.what != "alua":
        problems.append((f"{at}.port_group", f"only an alua change takes a port_group, not {f.what}"))
    if f.controller is not None and f.what != "owner":
        problems.append((f"{at}.controller", f"only an owner change takes a controller, not {f.what}"))
    if f.volume is not None and f.volume not in volumes:
        listed = "volumes: " + ", ".join(volumes) if volumes else "no [[volumes]] section"
        problems.append((f"{at}.volume", f"no volume named {f.volume!r} ({listed}){_guess(f.volume, volumes)}"))
    if f.port_group is not None and f.port_group not in groups:
        listed = "groups: " + ", ".join(groups) if groups else "no array has controllers"
        problems.append((f"{at}.port_group", f"no target port group {f.port_group!r} ({listed}){_guess(f.port_group, groups)}"))
    if f.what == "owner":
        if f.volume is None:
            problems.append((f"{at}.volume", "an owner change needs the volume that moves"))
        if f.controller is None:
            problems.append((f"{at}.controller", "an owner change needs the controller that owns the volume from now on"))
        if f.path is not None:
            problems.append((f"{at}.path", "an owner change takes a volume and a controller, not a path"))
        vol = next((v for v in m.volumes if v.name == f.volume), None)
        if vol is not None and f.controller is not None:
            held = [a for a in m.arrays if a.controllers and (vol.arrays is None or a.name in vol.arrays)]
            if not held:
                problems.append((f"{at}.volume", f"volume {vol.name!r} is on no array with controllers: nothing owns it"))
            problems.extend(_unknown_controller(f"{at}.controller", f.controller, held))
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
            run = _run_from_entry(model, {"spec": value}, place, None)
        except ScenarioError as e:
            raise ScenarioError(source, place, e.problem) from None
    else:
        raw = dict(value)
        for key in raw:
            if norm_key(str(key)) in (*RUN_KEYS, "expect", "volumes"):
                raise ScenarioError(source, f"{place}.{key}", f"{key} belongs to a [[policies]] entry (a run), not to one volume's policy")
        if "spec" not in raw:
            raise ScenarioError(source, place, 'a policy table needs spec, e.g. { spec = "rr", iops = 1000 }')
        run = _run_from_entry(model, raw, place, source)
    spec: PolicySpec = run.policy
    return spec


def _volume_policies(model: ScenarioModel, source: str) -> tuple[dict[str, PolicySpec], list[tuple[str, str]]]:
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


def _run_from_policies_entry(model: ScenarioModel, entry: Any, i: int, own: dict[str, PolicySpec], source: str) -> RunSpec:
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
        return _run_from_entry(model, raw, place, source)
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
    base = _run_from_entry(model, raw, place, source)
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


def build_scenario(data: dict[str, Any], source: str) -> Scenario:
    """Validate parsed TOML (``[sweep]`` and other tables of other commands already taken out)."""
    try:
        model = ScenarioModel.model_validate(data)
    except ValidationError as e:
        raise _model_error(source, e, data) from None
    problems = _check_references(model, source)
    runs, places = [], []
    own, own_problems = _volume_policies(model, source)
    problems.extend(own_problems)
    for i, entry in enumerate(model.policies):
        try:
            run = _run_from_policies_entry(model, entry, i, own, source)
        except ScenarioError as e:
            problems.extend(e.problems)
            continue
        runs.append(run)
        places.append((f"policies[{i}]" + (".label" if entry.label else ".spec"), f"policies[{i}]"))
    problems.extend(unique_labels(runs, places, 'label = "NAME"'))
    if problems:
        raise ScenarioError.several(source, _in_file_order(problems))
    return Scenario(model=model, source=source, runs=tuple(runs))


def _deep_line(text: str, depth: int = 100) -> int | None:
    """The line where brackets and braces (outside strings, roughly) first nest ``depth`` deep."""
    level, line, quote = 0, 1, ""
    for ch in text:
        if ch == "\n":
            line += 1
        elif quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            level += 1
            if level >= depth:
                return line
        elif ch in "]}":
            level = max(0, level - 1)
    return None


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """TOML text -> a dict; a UTF-8 byte order mark is skipped. Bad TOML is a located ScenarioError."""
    text = text.removeprefix("\ufeff")  # Notepad and PowerShell write one; it is not a TOML statement
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        place = ""
        if "(at line" in msg:
            msg, _, where = msg.partition(" (at ")
            place = where.rstrip(")")
        raise ScenarioError(source, place, f"not valid TOML: {msg}") from None
    except RecursionError:
        line = _deep_line(text)
        raise ScenarioError(source, f"line {line}" if line else "", "arrays or inline tables nested too deep to read (hundreds of levels)") from None


def loads_scenario(text: str, source: str = "<string>") -> Scenario:
    """Parse scenario TOML text. ``source`` names it in error messages."""
    return scenario_from_data(parse_toml(text, source), source)


def scenario_from_data(data: dict[str, Any], source: str = "<data>") -> Scenario:
    """Validate parsed TOML (a dict) as :func:`loads_scenario` validates text.

    A ``[sweep]`` table is skipped: it belongs to ``pathsel sweep`` (which
    checks it), so a file with one still simulates as it stands.
    """
    if not data:
        raise ScenarioError(
            source,
            "",
            "holds no settings (only comments and blank lines): a scenario needs at least [[arrays]], "
            "[[paths]] and [[workloads]] (pathsel schema lists every key)",
        )
    if "validation" in data:
        # a validation case's scenario may live in another file or run a Python policy: studies know how
        raise ScenarioError(
            source,
            "validation",
            "a validation case file: from Python, run its scenario with pathsel.simulate(scenario_of(file)) "
            "(scenario_of from pathsel.studies.validate); pathsel simulate and pathsel validate take the file as it is",
        )
    try:
        return build_scenario({k: v for k, v in data.items() if k != "sweep"}, source)
    except RecursionError:  # a value nested hundreds deep that TOML read but a check cannot walk
        raise ScenarioError(source, "", "a value nested too deep to check (arrays or tables hundreds of levels deep)") from None


def offered_load(m: ScenarioModel, seconds: float) -> list[tuple[str, int, float]]:
    """(name, numjobs, mean I/Os per second per job copy over ``seconds``) of every open-loop workload of ``m``:
    what :func:`pathsel.limits.offered_problem` bounds (a run's own duration may differ from the file's)."""
    out = []
    for w in m.workloads:
        spec = w.arrival_spec()
        if isinstance(spec, Schedule):
            rate = spec.integral(seconds) / seconds
        elif isinstance(spec, Trace):
            rate = len(spec) / seconds  # replayed once: each record arrives at most once
        elif isinstance(spec, BlockThink):
            rate = spec.mean_rate()
        elif w.rate_iops is not None:
            rate = w.rate_iops
        else:
            continue  # a closed loop offers nothing: the array's completions pace it
        out.append((w.name, w.numjobs, rate))
    return out


def read_text(path: str | Path, what: str = "scenario file") -> str:
    """A TOML file's text: at most 64 MB, UTF-8 (a byte order mark is skipped) or UTF-16 with its byte order mark.

    Every scenario, validation case and sweep file is read here, through :func:`pathsel.textread.read_capped`;
    every failure is a located ScenarioError naming the file. An empty file is read (as no settings): the
    loader says what a scenario needs.
    """
    try:
        return read_capped(path, what=what, allow_empty=True)
    except TextReadError as e:
        raise ScenarioError(str(path), e.place, e.problem) from None


def read_toml(path: str | Path, what: str = "scenario file") -> dict[str, Any]:
    """:func:`read_text` then :func:`parse_toml`: a TOML file as a dict, or a located ScenarioError."""
    return parse_toml(read_text(path, what), str(path))


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    source = str(path)
    text = read_text(path)
    with delay_files_relative_to(Path(path).resolve().parent):  # empirical delay files sit beside the scenario
        return loads_scenario(text, source)


def default_scenario() -> Scenario:
    """The embedded default: the founding ESXi latency round robin test drive (Hosterman 2018)."""
    text = resources.files("pathsel.data").joinpath("examples", DEFAULT_SCENARIO_NAME).read_text(encoding="utf-8")
    return loads_scenario(text, f"<default: {DEFAULT_SCENARIO_NAME}>")
