"""The first pass's messages: pydantic's errors as located lines (``paths[3].one_way_latency: must be > 0``), with
"did you mean" for a misspelt key or word, "drop the quotes" for a number written as text, and every problem sorted
into the order the file gives its sections in.
"""

from __future__ import annotations

import copy
import math
import re
from typing import TYPE_CHECKING, Any, get_args

from pydantic import BaseModel, ValidationError

from ..errors import ScenarioError, closest
from .schema import ScenarioModel

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

__all__ = ["in_file_order", "model_error", "quoted_number_hint"]


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


def model_error(source: str, exc: ValidationError, data: Any = None) -> ScenarioError:
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
    return ScenarioError.several(source, in_file_order(kept))


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


def in_file_order(problems: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Problems sorted by section and entry (stable: within an entry, in the order found)."""

    def key(item: tuple[str, str]) -> tuple[int, int]:
        m = re.match(r"([A-Za-z_]+)(?:\[(\d+)\])?", item[0])
        if not m or m.group(1) not in _SECTION_ORDER:
            return (-1, 0)  # an unknown top-level key: TOML puts those before every table
        return (_SECTION_ORDER[m.group(1)], int(m.group(2) or 0))

    return sorted(problems, key=key)
