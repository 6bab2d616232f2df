"""Scenario overrides: the key paths that name one value of a scenario file.

``replication.one_way_latency``, ``workloads[0].iodepth``,
``arrays[remote].concurrency`` (a list entry by its ``name``),
``paths[*].bandwidth`` (every entry): :func:`assign` sets such a key in the
raw TOML data before it is validated, so the loader's own checks say what is
wrong with a value; :func:`lookup` reads one. Sweeps use them for scenario
parameters; values typed on a command line are read by :func:`cli_value`.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from ..errors import ScenarioError
from ..policies.spec import POLICY_DEFS

__all__ = ["path_tokens", "assign", "lookup", "cli_value", "format_value"]


def format_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if not v.is_integer() else str(int(v)) if abs(v) < 1e15 else repr(v)
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    return str(v)


def cli_value(text: str) -> Any:
    """A value typed on the command line, typed as TOML would read it: 16 -> int, 0.5 -> float, 1ms -> str."""
    t = text.strip()
    if t in ("true", "false"):
        return t == "true"
    for kind in (int, float):
        try:
            v = kind(t)
        except ValueError:
            continue
        if kind is float and not math.isfinite(v):
            break
        return v
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return t[1:-1]
    return t


_TOKEN = re.compile(r"(?P<key>[A-Za-z_][\w-]*)|\[(?P<sel>[^\]]*)\]|(?P<dot>\.)|(?P<bad>.)")


def path_tokens(name: str, source: str, place: str) -> list[tuple[str, str]]:
    """``workloads[0].iodepth`` -> [("key", "workloads"), ("sel", "0"), ("key", "iodepth")]."""
    out: list[tuple[str, str]] = []
    expect_key = True
    for m in _TOKEN.finditer(name):
        kind = m.lastgroup
        if kind == "key" and expect_key:
            out.append(("key", m.group("key")))
            expect_key = False
        elif kind == "sel" and not expect_key:
            out.append(("sel", m.group("sel").strip()))
        elif kind == "dot" and not expect_key:
            expect_key = True
        else:
            raise ScenarioError(
                source,
                place,
                f"{name!r} is not a parameter name: use FAMILY.key for a policy parameter (families: {', '.join(POLICY_DEFS)}) "
                "or a scenario key such as replication.one_way_latency, workloads[0].iodepth, arrays[local].concurrency",
            )
    if expect_key:
        raise ScenarioError(source, place, f"{name!r} ends with a dot")
    return out


def assign(data: dict[str, Any], name: str, value: Any, source: str, place: str) -> None:
    """Set the key ``name`` (``workloads[0].iodepth``) in raw TOML data to ``value``; the tables it goes through must exist.

    ``source`` and ``place`` name the override in error messages.
    """
    tokens = path_tokens(name, source, place)

    def walk(node: Any, i: int, where: str) -> None:
        kind, tok = tokens[i]
        last = i == len(tokens) - 1
        if kind == "key":
            if not isinstance(node, dict):
                raise ScenarioError(source, place, f"{where or 'the scenario'} is not a table, cannot set {tok!r} in it")
            here = f"{where}.{tok}" if where else tok
            if last:
                node[tok] = copy.deepcopy(value)
                return
            if tok not in node:
                raise ScenarioError(source, place, f"the scenario has no {here} to set {name} in")
            walk(node[tok], i + 1, here)
            return
        if not isinstance(node, list):
            raise ScenarioError(source, place, f"{where} is not a list, cannot select [{tok}] in it")
        if tok == "*":
            picks = list(range(len(node)))
        elif re.fullmatch(r"-?\d+", tok):
            k = int(tok)
            if not -len(node) <= k < len(node):
                raise ScenarioError(source, place, f"{where} has {len(node)} entr{'y' if len(node) == 1 else 'ies'}, no [{k}]")
            picks = [k % len(node)]
        else:
            picks = [j for j, item in enumerate(node) if isinstance(item, dict) and item.get("name") == tok]
            if not picks:
                names = [str(item.get("name")) for item in node if isinstance(item, dict) and "name" in item]
                raise ScenarioError(source, place, f"{where} has no entry named {tok!r} (names: {', '.join(names) or 'none'})")
        for j in picks:
            if last:
                node[j] = copy.deepcopy(value)
            else:
                walk(node[j], i + 1, f"{where}[{j}]")

    walk(data, 0, "")


def lookup(data: dict[str, Any] | None, name: str) -> Any:
    """The value a scenario file has at a parameter's place (None when absent or not one value)."""
    if data is None:
        return None
    nodes = [data]
    for kind, tok in path_tokens(name, "", ""):
        nxt = []
        for node in nodes:
            if kind == "key" and isinstance(node, dict) and tok in node:
                nxt.append(node[tok])
            elif kind == "sel" and isinstance(node, list):
                if tok == "*":
                    nxt.extend(node)
                elif re.fullmatch(r"-?\d+", tok) and -len(node) <= int(tok) < len(node):
                    nxt.append(node[int(tok)])
                else:
                    nxt.extend(i for i in node if isinstance(i, dict) and i.get("name") == tok)
        nodes = nxt
    texts = {format_value(v) for v in nodes}
    return nodes[0] if len(texts) == 1 and not isinstance(nodes[0], list) else None
