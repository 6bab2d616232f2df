"""The docs and notebooks run, so they cannot drift from the code.

* Every notebook in ``notebooks/`` is executed top to bottom in a fresh
  kernel (nbclient), from its own folder as Jupyter would run it. Skipped
  when nbclient, nbformat or ipykernel is not installed.
* Notebooks are committed with their outputs, as tools/execute_notebooks.py
  stores them (run top to bottom, no errors), so that GitHub, nbviewer and
  the documentation site show them unexecuted: every plotly figure carries a
  static ``image/png`` beside its interactive JSON.
* The fenced ``sh`` and ``python`` blocks of every page run in
  tests/test_docs_commands.py.
* The fenced ``toml`` blocks of every docs page are valid: complete scenarios
  load; fragments validate against the scenario schema.
"""

from __future__ import annotations

import base64
import json
import re
import textwrap
import tomllib
from pathlib import Path

import pytest

import pathsel
from pathsel.policies import parse_spec
from pathsel.scenario import ScenarioModel

from .conftest import ROOT

DOCS = ROOT / "docs"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NOTEBOOK_TIMEOUT_S = 300  # per cell; the notebooks take seconds


def fenced_blocks(path: Path, lang: str) -> list[tuple[int, str]]:
    """(line of the first code line, dedented code) of every ```lang block, indented ones included."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(rf"^(?P<indent>[ \t]*)```{lang}[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.MULTILINE | re.DOTALL)
    return [(text.count("\n", 0, m.start("body")) + 1, textwrap.dedent(m.group("body"))) for m in pattern.finditer(text)]


# -- notebooks -------------------------------------------------------------


def test_there_are_notebooks():
    assert [p.name for p in NOTEBOOKS][:2] == ["01-quickstart.ipynb", "02-seed-004-test-drive.ipynb"]


PLOTLY = "application/vnd.plotly.v1+json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MIN_PNG_BYTES = 10_000  # a blank 700 x 500 figure compresses to a few kB; a drawn one is tens


def _outputs(notebook: Path) -> list[tuple[int, dict]]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [(i, o) for i, c in enumerate(cells) if c["cell_type"] == "code" for o in c.get("outputs", [])]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_run_top_to_bottom(notebook: Path):
    """Stored as tools/execute_notebooks.py leaves it: every code cell run once, in order, without errors."""
    cells = [c for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    counts = [c.get("execution_count") for c in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        f"{notebook.name}: execution counts {counts}: run python tools/execute_notebooks.py {notebook.relative_to(ROOT)}"
    )
    errors = [i for i, o in _outputs(notebook) if o["output_type"] == "error" or o.get("name") == "stderr"]
    assert not errors, f"{notebook.name}: cells {errors} stored an error or stderr"
    text = notebook.read_text(encoding="utf-8")
    assert str(ROOT) not in text, f"{notebook.name}: an output shows this machine's checkout path"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_every_stored_plotly_figure_has_a_png_beside_it(notebook: Path):
    """GitHub, nbviewer and the site do not run plotly's JavaScript: each figure needs its static image."""
    figures = [(i, o) for i, o in _outputs(notebook) if PLOTLY in o.get("data", {})]
    missing = [i for i, o in figures if "image/png" not in o["data"]]
    assert not missing, f"{notebook.name}: figures in cells {missing} have no image/png: run python tools/execute_notebooks.py"
    for i, o in figures:
        png = base64.b64decode(o["data"]["image/png"])
        assert png.startswith(PNG_SIGNATURE), f"{notebook.name}: cell {i}'s image/png is not a PNG"
        assert len(png) > MIN_PNG_BYTES, f"{notebook.name}: cell {i}'s PNG is {len(png)} bytes: a blank figure?"
    calls = re.findall(r"\.show\(\)|plots\.\w+\(|\.figure\(", notebook.read_text(encoding="utf-8"))
    if calls:
        assert figures, f"{notebook.name} draws figures but stores none"


def test_the_explore_notebook_stores_its_figure_at_the_default_values():
    nb = ROOT / "notebooks" / "07-explore.ipynb"
    outputs = [o for _, o in _outputs(nb)]
    widget = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    figures = [o for o in outputs if PLOTLY in o.get("data", {})]
    assert widget and len(figures) == 1
    title = figures[0]["data"][PLOTLY]["layout"]["title"]["text"]
    assert title.startswith("Test drive at 20 km") and "iodepth 32" in title and "cutoff 2" in title


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_from_a_clean_kernel(notebook: Path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    if "ipywidgets" in notebook.read_text(encoding="utf-8"):
        pytest.importorskip("ipywidgets")
    nb = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=NOTEBOOK_TIMEOUT_S,
        kernel_name="python3",  # ipykernel's own kernel: this interpreter, where pathsel is installed
        resources={"metadata": {"path": str(notebook.parent)}},
    )
    client.execute()  # raises CellExecutionError naming the cell on any error
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


# -- docs --------------------------------------------------------------------


# A scenario that a fragment's sections replace, so that fragments validate on their own.
_BASE = {
    "arrays": [{"name": "local"}, {"name": "remote"}],
    "replication": {"arrays": ["local", "remote"], "one_way_latency": "1ms"},
    "paths": [{"name": "p0", "array": "local", "one_way_latency": "50us"}],
    "workloads": [{}],
}
_COMPLETE = {"arrays", "paths", "workloads"}


def _toml_blocks() -> list:
    return [
        pytest.param(page.name, line, code, id=f"{page.name}:{line}")
        for page in sorted(DOCS.glob("*.md"))
        for line, code in fenced_blocks(page, "toml")
    ]


@pytest.mark.parametrize("page,line,code", _toml_blocks())
def test_docs_toml_examples_are_valid(page: str, line: int, code: str):
    data = tomllib.loads(code)
    if _COMPLETE <= data.keys():
        scenario = pathsel.loads_scenario(code, f"docs/{page}:{line}")
        assert scenario.runs
        return
    model = ScenarioModel.model_validate({**_BASE, **data})
    for entry in model.policies:
        if entry.spec is not None:  # an entry may assign policies per volume only (a policy per device)
            parse_spec(entry.spec, entry.extra_params)


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    headings = re.findall(r"^#{1,6} +(.+?) *$", text, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_docs_links_point_at_existing_pages_and_headings():
    pages = {p.name: p for p in DOCS.glob("*.md")}
    assert {
        "index.md",
        "getting-started.md",
        "model.md",
        "scenario-reference.md",
        "policies.md",
        "cli.md",
        "validation.md",
    } <= pages.keys()
    for page in pages.values():
        for target, anchor in re.findall(r"\]\(([\w.-]*\.md)?(?:#([\w-]+))?\)", page.read_text(encoding="utf-8")):
            if not target and not anchor:
                continue
            linked = pages.get(target) if target else page
            assert linked is not None, f"{page.name} links to a missing page {target}"
            if anchor:
                assert anchor in _anchors(linked), f"{page.name} links to a missing heading {target}#{anchor}"
