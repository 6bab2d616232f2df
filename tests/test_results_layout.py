"""The results' modules after issue 49's split: the names users, docs and notebooks import still import from where
they did, as the very objects of their new homes, and each module of the split stays short enough to read."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import pathsel

RESULTS = Path(pathsel.__file__).parent / "results"

# (where code imports it from, the name, its home)
KEPT = [
    ("pathsel.results", "Result", "pathsel.results.result"),
    ("pathsel.results", "RunResult", "pathsel.results.run"),
    ("pathsel.results.result", "Result", "pathsel.results.result"),
    ("pathsel.results.result", "RunResult", "pathsel.results.run"),
    ("pathsel.results.result", "jsonable", "pathsel.results.document"),
    ("pathsel.results.story", "story", "pathsel.results.story.tell"),
    ("pathsel.results.story", "text", "pathsel.results.story.tell"),
    ("pathsel.results.story", "fmt_time", "pathsel.results.story.words"),
    ("pathsel.results.story", "fmt_change", "pathsel.results.story.words"),
    ("pathsel.results.story", "SHARE_USED", "pathsel.results.used"),
    ("pathsel.results.story", "Run", "pathsel.results.story.run"),
    ("pathsel.results.story", "Runs", "pathsel.results.story.run"),
]


@pytest.mark.parametrize(("where", "name", "home"), KEPT, ids=[f"{w}.{n}" for w, n, _ in KEPT])
def test_a_name_imports_from_where_it_did_as_its_home_s_object(where: str, name: str, home: str) -> None:
    kept = getattr(importlib.import_module(where), name)
    assert kept is getattr(importlib.import_module(home), name)
    assert name in importlib.import_module(where).__all__


SPLIT = ["result.py", "run.py", "recovery.py", "tables.py", "document.py", *(f"story/{p.name}" for p in sorted((RESULTS / "story").glob("*.py")))]


@pytest.mark.parametrize("module", SPLIT)
def test_each_module_of_the_split_is_at_most_650_lines(module: str) -> None:
    lines = (RESULTS / module).read_text(encoding="utf-8").count("\n")
    assert lines <= 650, f"pathsel/results/{module}: {lines} lines"


def test_the_story_package_holds_every_story_module() -> None:
    # the story's modules are one package: none is left beside it under its old name
    assert not sorted(RESULTS.glob("story_*.py"))
    assert not [n for n in ("story.py", "subject.py", "words.py", "fabric.py") if (RESULTS / n).exists()]
