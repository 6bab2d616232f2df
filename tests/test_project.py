"""The project keeps its promises: README commands, CI, embedded default, public API."""

from __future__ import annotations

import re
import subprocess
import tomllib

import pytest

import pathsel

from .conftest import ROOT


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(.+?)\n```", text)


def test_ci_runs_exactly_the_readme_test_command():
    commands = _readme_commands()
    assert len(commands) >= 2
    install_and_run, install_and_test = commands[0], commands[1]
    assert "pathsel simulate" in install_and_run
    assert "pytest" in install_and_test
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert install_and_test in ci


def test_embedded_default_is_the_sims_testdrive():
    from pathsel.data import DEFAULT_SCENARIO  # one file: sims/ links to the installed examples

    assert DEFAULT_SCENARIO.resolve() == (ROOT / "sims" / "esxi-latency-testdrive.toml").resolve()
    assert pathsel.default_scenario().model == pathsel.load_scenario(ROOT / "sims" / "esxi-latency-testdrive.toml").model


def test_public_api_is_curated():
    assert sorted(pathsel.__all__) == sorted(
        [
            "simulate",
            "simulate_seeds",
            "sweep",
            "SweepResult",
            "load_scenario",
            "loads_scenario",
            "default_scenario",
            "Scenario",
            "ScenarioError",
            "Result",
            "RunResult",
            "Policy",
            "PathView",
            "DeviceView",
            "IORequest",
            "alua_working_set",
            "__version__",
            "plots",
            "report",
            "examples",
            "import_outputs",
            "read_measurements",
            "calibrate",
            "emit",
        ]
    )
    for name in pathsel.__all__:
        assert hasattr(pathsel, name)


def test_no_tracked_file_refers_to_the_developers_shared_folder():
    # Users have only the repository: sources are cited publicly (docs/sources.md), never by a path beside
    # the checkout. The needle is built from parts so that this file does not match it.
    needle = ("sha" + "red" + "/").encode()
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    hits = []
    for name in filter(None, listed.decode().split("\0")):
        path = ROOT / name
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            if needle in line:
                hits.append(f"{name}:{number}")
    assert not hits, f"cite the public source (docs/sources.md) instead of the shared folder: {', '.join(hits)}"


def test_readme_says_how_to_get_jupyter_for_the_notebooks():
    """The README installs an extra that holds the notebooks' kernel and widgets, and a Jupyter to open them in."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    lines = [line for line in readme.splitlines() if "pip install" in line and "jupyter" in line and "notebooks/" in line]
    assert lines, "README: no command that installs Jupyter and opens notebooks/"
    extra = re.search(r"'\.\[(\w+)\]'", lines[0])
    assert extra and extra.group(1) in extras, lines[0]
    names = {re.split(r"[<>=\[ ]", d)[0] for d in extras[extra.group(1)]}
    assert {"ipykernel", "ipywidgets"} <= names, names
