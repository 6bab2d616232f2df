"""The documentation site builds with ``mkdocs build --strict`` (mkdocs.yml).

Strict mode turns every warning into a failure: a link to a missing page or
heading (between pages, from a notebook to a page: tools/mkdocs_hooks.py), a
page of docs/ missing from ``nav``, a docstring the API reference cannot
find. The build does not run the notebooks; it shows what they store
(tests/test_docs_and_notebooks.py checks they store figures). Skipped when
mkdocs is not installed (``pip install -e '.[docs]'``; the test extra has it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .conftest import ROOT


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    pytest.importorskip("mkdocstrings_handlers.python")
    pytest.importorskip("mkdocs_jupyter")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    warnings = [ln for ln in done.stderr.splitlines() if ln.startswith(("WARNING", "ERROR"))]
    assert done.returncode == 0, "mkdocs build --strict failed:\n" + "\n".join(warnings or done.stderr.splitlines()[-30:])
    return out


def test_every_page_and_notebook_is_in_the_site(site: Path):
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")} - {"index"}
    notebooks = {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}
    built = {p.parent.name for p in site.glob("*/index.html")}
    assert pages <= built, f"pages missing from the site: {sorted(pages - built)}"
    built_notebooks = {p.parent.name for p in (site / "notebooks").glob("*/index.html")}
    assert notebooks == built_notebooks


def test_the_api_reference_is_generated_from_the_docstrings(site: Path):
    api = (site / "api" / "pathsel" / "index.html").read_text(encoding="utf-8")
    for name in ("simulate", "simulate_seeds", "load_scenario", "sweep", "calibrate", "emit"):
        assert f'id="pathsel.{name}"' in api, f"pathsel.{name} has no entry in the API reference"
    assert "Run every policy of a scenario on the same seed" in api  # simulate's docstring
    plots = (site / "api" / "plots" / "index.html").read_text(encoding="utf-8")
    assert 'id="pathsel.results.plots.timeline"' in plots
    results = (site / "api" / "results" / "index.html").read_text(encoding="utf-8")
    assert 'id="pathsel.results.Result.summary"' in results
    for page in (site / "api").glob("*/index.html"):
        assert not re.search(r":(class|func|meth|mod):<code>", page.read_text(encoding="utf-8")), f"{page}: a Sphinx role shows"


def test_notebook_links_point_into_the_site(site: Path):
    html = (site / "notebooks" / "01-quickstart" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../getting-started/"' in html
    assert "../docs/" not in html


def test_the_test_extra_has_the_doc_tools():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert set(extras["docs"]) <= set(extras["test"]), "CI installs only .[test]: it needs the docs extra to build the site"
