"""What a committed notebook says matches what it says when run today (counts and names).

Notebooks are committed with their outputs (tools/execute_notebooks.py), and GitHub shows those: a stored
"scenario files in sims/: 14" went on saying 14 after sims/ had 19. This test re-runs, in this process, every
code cell that does not simulate, plot or fit (the cells that print counts, names and file listings), in order,
from the notebook's own folder as Jupyter runs it, and compares what each prints with what is stored. A cell
that needs what a skipped cell made (a result) is not compared. Fast: no simulation runs.

When it fails: run ``python tools/execute_notebooks.py notebooks/NAME.ipynb`` to store today's outputs.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import tempfile
from pathlib import Path

import pytest

from .conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# A cell that calls one of these runs simulations, draws or fits: seconds to minutes, and covered by
# tests/test_docs_and_notebooks.py's run of the whole notebook. Its printed figures are not counts or names.
_EXPENSIVE = re.compile(
    r"\b(?:simulate|simulate_seeds|sweep|league|calibrate|recommend|validate|explore|interact|knee|report\.write|warm)\s*\("
    r"|\.show\(\)|\bplots\.\w+\(|\bpx\.\w+\(|\bgo\.\w+\("
)


# tempfile.mkdtemp's random suffix (pathsel-site-3tn6rab9): a name that differs on every run
_TEMP_NAME = re.compile(r"(?<=-)[a-z0-9_]{8}\b")


def _code_cells(notebook: Path) -> list[tuple[int, str, str]]:
    """(index, source, stored stdout) of each code cell."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    out = []
    for i, c in enumerate(cells):
        if c["cell_type"] != "code":
            continue
        stored = "".join("".join(o.get("text", "")) for o in c.get("outputs", []) if o["output_type"] == "stream" and o.get("name") == "stdout")
        out.append((i, "".join(c["source"]), stored))
    return out


def _run_cheap_cells(notebook: Path) -> list[tuple[int, str, str]]:
    """(cell, stored stdout, fresh stdout) of every cheap cell that printed something and ran without error."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    compared = []
    for i, source, stored in _code_cells(notebook):
        if _EXPENSIVE.search(source) or any(line.lstrip().startswith(("%", "!")) for line in source.splitlines()):
            continue
        tree = ast.parse(source)
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            tree.body[-1] = ast.Expr(ast.Call(ast.Name("_ignore", ast.Load()), [tree.body[-1].value], []))  # a display, not a print
            ast.fix_missing_locations(tree)
        namespace["_ignore"] = lambda value: None
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer):
                exec(compile(tree, f"{notebook.name}[{i}]", "exec"), namespace)  # noqa: S102 - the repository's own notebook
        except Exception:  # needs what a skipped cell made: not comparable
            continue
        if stored or buffer.getvalue():
            compared.append((i, _TEMP_NAME.sub("XXXXXXXX", stored), _TEMP_NAME.sub("XXXXXXXX", buffer.getvalue())))
    return compared


@pytest.fixture
def pandas_options():
    pd = pytest.importorskip("pandas")
    with pd.option_context("display.width", 80, "display.max_columns", 20):  # a notebook's set_option stays in here
        yield


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_counts_and_names_match_a_fresh_run(notebook: Path, monkeypatch, pandas_options, tmp_path):
    monkeypatch.chdir(notebook.parent)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # a notebook's work folder goes here, and goes
    compared = _run_cheap_cells(notebook)
    stale = [f"cell {i}: stored {stored!r}, today {fresh!r}" for i, stored, fresh in compared if stored != fresh]
    assert not stale, f"{notebook.name}: run python tools/execute_notebooks.py {notebook.relative_to(ROOT)}:\n" + "\n".join(stale)


def test_the_quickstart_counts_the_scenario_files_there_are():
    """The statement the issue found stale: notebook 01 counts sims/*.toml."""
    stored = [text for _, _, text in _code_cells(ROOT / "notebooks" / "01-quickstart.ipynb")]
    stated = [int(m.group(1)) for text in stored for m in re.finditer(r"scenario files in sims/: (\d+)", text)]
    assert stated == [len(list((ROOT / "sims").glob("*.toml")))]
