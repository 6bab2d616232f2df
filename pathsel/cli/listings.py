"""The commands that print what pathsel ships, without running anything: ``pathsel example``, ``policies``,
``presets`` and ``schema``.

They answer at once: numba, pandas and the scenario schema load only where a
listing needs them (tests/test_startup.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..policies.presets import PRESETS

__all__ = ["add_example", "add_policies", "add_schema", "add_presets", "presets_text"]


def _cmd_example(args: argparse.Namespace) -> int:
    from .. import examples

    if args.name is None and args.output is None:
        every = examples.names()
        width = max(map(len, every))
        heads = {
            False: "Example scenarios (pathsel example NAME prints one; add -o DIR to write it and the files it reads):",
            True: "Validation cases (pathsel validate runs them all):",
        }
        shown = None
        for example in every:
            kind = example.startswith("validation/")
            if kind != shown:
                print(heads[kind])
                shown = kind
            print(f"  {example:{width}s}  {examples.title(example)}")
        return 0
    name: str | None = None
    if args.name is not None:
        name = examples._name(args.name)
        examples.path(args.name, _source="command line", _place="example ", _hint="`pathsel example` lists them")
    if args.output is not None:
        for f in examples.copy(name, args.output):
            print(f"pathsel: wrote {f}")
        return 0
    assert name is not None  # no NAME is given only with -o (the branch above)
    sys.stdout.write(examples.text(name))
    home = examples.path(name).parent
    reads = [os.path.relpath(f, home) for f in examples.files(name)[1:]]
    if reads:
        print(f"pathsel example: {name} reads {', '.join(reads)}: pathsel example {name} -o DIR writes them too", file=sys.stderr)
    return 0


def _cmd_policies(args: argparse.Namespace) -> int:
    if args.presets:
        sys.stdout.write(presets_text(args.markdown))
        return 0
    if args.markdown:
        from ..policies.registry import markdown_table

        sys.stdout.write(markdown_table())
        return 0
    from ..policies.listing import text  # the shipped listing: no numba unless the policy sources changed

    sys.stdout.write(text())
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from ..scenario.schema import ScenarioModel

    print(json.dumps(ScenarioModel.model_json_schema(), indent=2))
    return 0


def presets_text(markdown: bool = False) -> str:
    if markdown:
        rows = ["| preset | runs | for | shipped setting | source |", "|---|---|---|---|---|"]
        for p in PRESETS.values():
            cells = [f"`preset:{p.name}`", f"`{p.spec}`", p.matches, p.setting, f"[{p.source}]({p.url})"]
            rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        return "\n".join(rows) + "\n"
    width = max(len(p.name) for p in PRESETS.values()) + 7
    out = []
    for p in PRESETS.values():
        out.append(f"{'preset:' + p.name:{width}s}  {p.spec}")
        out.append(f"{'':{width}s}  for {p.matches}: {p.setting}")
        out.append(f"{'':{width}s}  from {p.source}")
        if p.host:
            out.append(f"{'':{width}s}  not a policy parameter: {p.host}")
    return "\n".join(out) + "\n"


def _cmd_presets(args: argparse.Namespace) -> int:
    sys.stdout.write(presets_text(args.markdown))
    return 0


def add_example(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel example``: list the installed examples, print one or write them out."""
    exa = sub.add_parser(
        "example", help="list the example scenarios and validation cases installed with pathsel (a checkout's sims/), print one or write them out"
    )
    exa.add_argument(
        "name", nargs="?", metavar="NAME", help="an example, as listed (fast-failover, validation/failover): print it, or write it with -o"
    )
    exa.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="write NAME and the files it reads into DIR, laid out as in sims/ (without NAME: every example); never overwrites a different file",
    )
    exa.set_defaults(func=_cmd_example)


def add_policies(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel policies``: the built-in policies, their parameters and defaults."""
    pol = sub.add_parser("policies", help="list the built-in policies, their parameters and defaults")
    pol.add_argument("--markdown", action="store_true", help="print docs/policies.md's table instead (generated from the policies' definitions)")
    pol.add_argument("--presets", action="store_true", help="list the shipped defaults usable as preset:NAME (as pathsel presets)")
    pol.set_defaults(func=_cmd_policies)


def add_schema(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel schema``: the JSON Schema of scenario files."""
    sch = sub.add_parser("schema", help="print the JSON Schema of scenario files (for editors)")
    sch.set_defaults(func=_cmd_schema)


def add_presets(sub: argparse._SubParsersAction[Any]) -> None:
    """``pathsel presets``: the shipped defaults usable as preset:NAME."""
    pre = sub.add_parser("presets", help="list the shipped defaults usable as --policy preset:NAME (multipath-tools, nvme-cli, ESXi, MSDSM)")
    pre.add_argument("--markdown", action="store_true", help="print a Markdown table")
    pre.set_defaults(func=_cmd_presets)
