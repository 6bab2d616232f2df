"""Tooling (issue 14): ruff's lint passes on the whole project, and mypy on the modules it checks today.

Both are configured in pyproject.toml and installed with the test extras, so this
runs wherever the tests do (``.ci/run`` included). The list of type-checked
modules only grows: add a module when it passes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from .conftest import ROOT

TYPED = [
    "pathsel/engine/host_queues.py", "pathsel/engine/recorder.py", "pathsel/errors.py", "pathsel/examples.py",
    "pathsel/jit.py", "pathsel/model/delay_files.py", "pathsel/model/delay_kinds.py", "pathsel/model/distributions.py", "pathsel/policies/base.py", "pathsel/policies/registry.py",
    "pathsel/policies/spec.py", "pathsel/results/report.py", "pathsel/results/result.py", "pathsel/scenario/overrides.py",
    "pathsel/stats.py", "pathsel/studies/analytic.py", "pathsel/studies/table.py", "pathsel/studies/validate.py",
    "pathsel/units.py", "pathsel/version.py",
]


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


def test_mypy_passes_on_the_typed_modules():
    done = subprocess.run([*_tool("mypy"), "--follow-imports=silent", *TYPED], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
