"""The unknowns ``pathsel calibrate --fit NAME`` can fit: where each lives in a scenario file and how to set it.

An unknown is one entry of :data:`UNKNOWNS`: the section and key it sets,
whether it is a delay (its distribution is scaled, so its shape stays and
its mean becomes the value tried; several entries are scaled together and
keep their ratios) or a whole number, which entries ``@X``
selects, and its search range. ``NAME`` alone sets every entry of the
section; ``NAME@X`` the entries ``X`` names (an array, a path, or the paths
to an array); ``NAME=LOW..HIGH`` gives the range. A new unknown (the hosts'
queue depth, say) is one more :class:`UnknownKind` in the table.

:func:`patch_text` writes fitted values into the scenario file's own text,
key by key, so its comments stay.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ScenarioError, closest
from ..timing.distributions import parse_delay
from ..units import format_duration, parse_duration

__all__ = ["UnknownKind", "Unknown", "UNKNOWNS", "parse_unknown", "patch_text", "dump_toml", "scale_delay"]


@dataclass(frozen=True)
class UnknownKind:
    """How to find, read and set one kind of unknown in a scenario's TOML data."""

    name: str
    section: str  # "arrays", "paths", "replication" (a table), "hosts"
    key: str
    kind: str  # "delay" (scaled; value = its mean, in seconds) or "int"
    help: str
    default: Any  # the schema's default when the key is absent
    span: float = 50.0  # default range: value / span .. value * span (delays)
    low: float | None = None  # absolute bounds (whole numbers; a floor for delays)
    high: float | None = None
    select: Callable[[dict[str, Any], str], bool] | None = None  # does entry match @X?


def _by_name(entry: dict[str, Any], x: str) -> bool:
    return entry.get("name") == x


def _path_or_array(entry: dict[str, Any], x: str) -> bool:
    return entry.get("array") == x or entry.get("name") == x


UNKNOWNS: dict[str, UnknownKind] = {
    k.name: k
    for k in (
        UnknownKind(
            "service_time",
            "arrays",
            "service_time",
            "delay",
            "an array's time per I/O (its mean; the shape stays)",
            "100us",
            low=1e-7,
            select=_by_name,
        ),
        UnknownKind("concurrency", "arrays", "concurrency", "int", "I/Os an array serves at once", 64, low=1, high=4096, select=_by_name),
        UnknownKind(
            "one_way_latency",
            "paths",
            "one_way_latency",
            "delay",
            "host to array, one way (@ARRAY: the paths to it; @PATH: one path)",
            None,
            low=1e-7,
            select=_path_or_array,
        ),
        UnknownKind("replication_latency", "replication", "one_way_latency", "delay", "array to array, one way", None, low=1e-7),
    )
}


@dataclass
class Unknown:
    """One unknown of a fit: its kind, the entries it sets, its starting value and range."""

    text: str
    kind: UnknownKind
    places: list[int]  # entry indices in the section (empty for a table section)
    start: float
    low: float
    high: float
    where: str  # "every array", "arrays local", ...
    origin: float = 0.0  # the first entry's value in the file: a delay unknown scales every entry by value / origin

    @property
    def integer(self) -> bool:
        return self.kind.kind == "int"

    def show(self, value: float) -> str:
        return str(int(round(value))) if self.integer else format_duration(float(f"{value:.4g}"))

    def apply(self, data: dict[str, Any], value: float) -> None:
        """Set this unknown to ``value`` in ``data`` (the file's TOML data, changed in place).

        A whole number is set in every entry; a delay is scaled in every entry by the same
        factor, ``value / origin``, so the first entry's mean becomes ``value`` and the
        others keep their ratios to it (a slower path stays slower)."""
        for entry in _entries(data, self.kind, self.places):
            if self.integer:
                entry[self.kind.key] = int(round(value))
            else:
                entry[self.kind.key] = scale_delay(entry.get(self.kind.key, self.kind.default), value / self.origin)


def _entries(data: dict[str, Any], kind: UnknownKind, places: list[int]) -> list[dict[str, Any]]:
    if kind.section == "replication":
        return [data["replication"]]
    return [data[kind.section][i] for i in places]


def _fmt_seconds(seconds: float) -> str:
    return f"{seconds * 1e6:.6g}us"


def scale_delay(value: Any, factor: float) -> Any:
    """A delay as written in TOML (``"50us"``, ``{dist = ...}``, or ``{read, write}``) with every time scaled."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return _fmt_seconds(parse_duration(value) * factor)
    if not isinstance(value, dict):
        raise ValueError(f"cannot scale {value!r}")
    out = copy.deepcopy(value)
    if "dist" not in out:  # service_time = { read = ..., write = ... }
        return {k: scale_delay(v, factor) for k, v in out.items()}
    dist = out["dist"]
    if dist == "empirical":
        out["scale"] = float(out.get("scale", 1.0)) * factor
    elif dist == "mixture":
        out["components"] = [{**scale_delay({k: v for k, v in c.items() if k != "weight"}, factor), "weight": c["weight"]} for c in out["components"]]
    else:
        for key in ("value", "mean", "low", "high", "stddev", "median", "p99", "shift"):
            if key in out:
                out[key] = _fmt_seconds(parse_duration(out[key]) * factor)
    return out


def _delay_mean(value: Any, kind: UnknownKind) -> float:
    if isinstance(value, dict) and "dist" not in value:
        means = [parse_delay(v, allow_zero=True).mean for v in value.values()]
        return sum(means) / len(means)
    return parse_delay(value, allow_zero=True).mean


def parse_unknown(text: str, data: dict[str, Any], source: str) -> Unknown:
    """``service_time``, ``one_way_latency@remote``, ``concurrency=8..256`` -> an Unknown of this scenario."""
    place = f"--fit {text}"
    m = re.fullmatch(r"\s*([A-Za-z_][\w-]*)\s*(?:@\s*([^=]+?))?\s*(?:=\s*(\S+?)\s*\.\.\s*(\S+))?\s*", text)
    if not m:
        raise ScenarioError("command line", place, "write NAME, NAME@ENTRY or NAME=LOW..HIGH (e.g. service_time=20us..2ms)")
    name, target, lo_text, hi_text = m.group(1).replace("-", "_"), m.group(2), m.group(3), m.group(4)
    if name not in UNKNOWNS:
        guess = closest(name, list(UNKNOWNS))
        hint = f"did you mean {guess!r}? " if guess else ""
        raise ScenarioError("command line", place, f"unknown {name!r} ({hint}unknowns: {', '.join(UNKNOWNS)})")
    kind = UNKNOWNS[name]
    if kind.section == "replication":
        if not isinstance(data.get("replication"), dict):
            raise ScenarioError(source, "replication", f"{name}: the scenario has no [replication] section")
        if target:
            raise ScenarioError("command line", place, f"{name} takes no @: there is one replication link")
        places, where = [], "replication"
    else:
        entries = data.get(kind.section) or []
        if not entries:
            raise ScenarioError(source, kind.section, f"{name}: the scenario has no [[{kind.section}]] entries")
        if target:
            places = [i for i, e in enumerate(entries) if kind.select is not None and kind.select(e, target)]
            if not places and kind.section == "paths":
                groups = [i for i, e in enumerate(entries) if target in _names(e)]
                if groups:
                    i = groups[0]
                    raise ScenarioError(
                        source,
                        f"paths[{i}]",
                        f"names {entries[i].get('count')} paths (count = {entries[i].get('count')}): give {target} its own "
                        f"[[paths]] entry to fit it alone, or fit {name}@{entries[i].get('array')}",
                    )
            if not places:
                names = sorted({str(e.get("name")) for e in entries} | ({str(e.get("array")) for e in entries} if kind.section == "paths" else set()))
                guess = closest(target, names)
                hint = f"did you mean {guess!r}? " if guess else ""
                raise ScenarioError("command line", place, f"no {kind.section} entry {target!r} ({hint}{', '.join(names[:12])})")
            where = f"{kind.section} {target}"
        else:
            places, where = list(range(len(entries))), f"every {kind.section[:-1]}"
    probe = Unknown(text, kind, places, 0.0, 0.0, 0.0, where)
    try:
        first = _entries(data, kind, places)[0]
        raw = first.get(kind.key, kind.default)
        if raw is None:
            raise ScenarioError(source, kind.section, f"{name}: no {kind.key} to start from")
        start = float(raw) if probe.integer else _delay_mean(raw, kind)
    except ValueError as e:
        raise ScenarioError(source, f"{kind.section}.{kind.key}", str(e)) from None
    if probe.integer:
        low, high = kind.low or 1, kind.high or max(start * 64, 64)
    else:
        low, high = max(start / kind.span, kind.low or 0.0), start * kind.span
        if start <= 0:
            raise ScenarioError(source, f"{kind.section}.{kind.key}", f"{name} starts at 0: give a range, {name}=10us..10ms")
    if lo_text is not None:
        try:
            low, high = (float(lo_text), float(hi_text)) if probe.integer else (parse_duration(lo_text), parse_duration(hi_text))
        except ValueError as e:
            raise ScenarioError("command line", place, str(e)) from None
        if not (0 < low < high and math.isfinite(high)):
            raise ScenarioError("command line", place, f"the range must be 0 < LOW < HIGH, got {lo_text}..{hi_text}")
    origin = start
    start = min(max(start, low), high)
    return Unknown(text, kind, places, start, low, high, where, origin)


def _names(entry: dict[str, Any]) -> list[str]:
    name = str(entry.get("name", ""))
    count, start = int(entry.get("count", 1) or 1), int(entry.get("start", 0) or 0)
    return [name.replace("{i}", str(start + k)) for k in range(count)]


# -- writing the fitted values into the file's own text ------------------------------------------------


_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z_][\w.-]*)\s*\]\]?\s*(?:#.*)?$")


def _toml_value(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise ValueError(f"cannot write {value!r} as TOML")


def patch_text(text: str, changes: list[tuple[str, int | None, str, Any, str]]) -> str:
    """``text`` with each (section, index, key, value, comment) set: the key's line replaced, or added under the table.

    ``index`` counts ``[[section]]`` tables (None for a ``[section]`` table).
    Raises ValueError when a key is written in a way this cannot edit (a dotted key).
    """
    # TOML ends lines with LF (or CRLF) only; str.splitlines would also split at U+2028 or NEL inside a string
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    for section, index, key, value, comment in changes:
        headers = [(n, m.group(1) == "[[", m.group(2)) for n, line in enumerate(lines) if (m := _HEADER.match(line))]
        matches = [n for n, is_array, name in headers if name == section and is_array == (index is not None)]
        at = index if index is not None else 0
        if at >= len(matches):
            raise ValueError(f"no {'[[' + section + ']]' if index is not None else '[' + section + ']'} table to write {key} in")
        start = matches[at]
        later = [n for n, _, _ in headers if n > start]
        end = later[0] if later else len(lines)
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        new = f"{key} = {_toml_value(value)}  # {comment}"
        for n in range(start + 1, end):
            stripped = lines[n].strip()
            if re.match(rf"{re.escape(key)}\s*\.", stripped):
                raise ValueError(f"{section}: {key} is written as dotted keys ({stripped[:40]}); write it as one value to let calibrate set it")
            if re.match(rf"{re.escape(key)}\s*=", stripped):
                lines[n] = new
                break
        else:
            lines.insert(end, new)
    return "\n".join(lines) + "\n"


def dump_toml(data: dict[str, Any]) -> str:
    """A scenario's TOML data as text (when its own text cannot be patched): tables and arrays of tables."""
    out = [
        f"{k} = {_toml_value(v)}"
        for k, v in data.items()
        if not isinstance(v, (dict, list)) or (isinstance(v, list) and not all(isinstance(x, dict) for x in v)) or (isinstance(v, list) and not v)
    ]
    for k, v in data.items():
        if isinstance(v, dict):
            out += ["", f"[{k}]"] + [f"{kk} = {_toml_value(vv)}" for kk, vv in v.items()]
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for x in v:
                out += ["", f"[[{k}]]"] + [f"{kk} = {_toml_value(vv)}" for kk, vv in x.items()]
    return "\n".join(out) + "\n"
