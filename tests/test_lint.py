"""Tooling (issue 14): ruff's lint passes on the whole project, and mypy --strict on the whole package.

Both are configured in pyproject.toml and installed with the test extras, so this
runs wherever the tests do (``.ci/run`` included). mypy reads its files (all of
``pathsel``) and the few exclusions (the numba-compiled code, each with its reason)
from ``[tool.mypy]``: a new module is checked from its first commit.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from .conftest import ROOT


def _tool(name: str) -> list[str]:
    exe = shutil.which(name, path=str(ROOT / ".venv" / "bin")) or shutil.which(name)
    if exe is None:
        try:
            __import__(name)
        except ImportError:
            pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
        return [sys.executable, "-m", name]
    return [exe]


def test_ruff_finds_nothing():
    done = subprocess.run([*_tool("ruff"), "check", "pathsel", "tests", "benchmarks", "tools"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_format_leaves_everything_as_it_is():
    """The code is in ruff's format (pyproject.toml's line length): `ruff format pathsel tests benchmarks tools` fixes it."""
    done = subprocess.run([*_tool("ruff"), "format", "--check", "pathsel", "tests", "benchmarks", "tools"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_mypy_strict_passes_on_the_package():
    # no arguments: pyproject.toml's [tool.mypy] names the files (pathsel), strict and the exclusions
    done = subprocess.run(_tool("mypy"), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout, done.stdout[-4000:]
