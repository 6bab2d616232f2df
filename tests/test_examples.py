"""The examples installed with pathsel: one copy (``sims/`` links to it), all shipped, all runnable from anywhere."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
import tomllib

import pytest

import pathsel
from pathsel import examples
from pathsel.cli import main
from pathsel.data import EXAMPLES, VALIDATION
from pathsel.studies.validate import default_dir

from .conftest import ROOT, SIMS


def _tree(root) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def test_sims_is_a_link_to_the_installed_examples():
    # One source of truth: the files live in the package (so a wheel carries them) and a checkout's sims/
    # is a symbolic link to them, not a copy that could drift.
    assert SIMS.is_symlink()
    assert SIMS.resolve() == EXAMPLES
    assert os.readlink(SIMS) == "pathsel/data/examples"  # relative: it works wherever the checkout is
    try:
        staged = subprocess.run(["git", "ls-files", "-s", "sims"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    assert staged.split()[0] == "120000", "git must store sims as a symbolic link"


def test_no_second_copy_of_an_example_in_the_package():
    stray = [p for p in (ROOT / "pathsel").rglob("*.toml") if not p.resolve().is_relative_to(EXAMPLES)]
    assert stray == []


def test_the_wheel_ships_every_example_file():
    """Every file in sims/ matches a package-data pattern of pyproject.toml (a new folder needs a pattern)."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["pathsel"]
    package = ROOT / "pathsel"
    missed = [
        name for name in _tree(EXAMPLES) if not any(fnmatch.fnmatchcase((EXAMPLES / name).relative_to(package).as_posix(), pat) for pat in patterns)
    ]
    assert missed == []


def test_names_cover_every_scenario_and_case():
    names = examples.names()
    assert names == (
        sorted(p.stem for p in SIMS.glob("*.toml"))
        + sorted(f"library/{p.stem}" for p in (SIMS / "library").glob("*.toml"))
        + sorted(f"validation/{p.stem}" for p in (SIMS / "validation").glob("*.toml"))
    )
    assert "esxi-latency-testdrive" in names and "validation/failover" in names and "library/seed-dm-slow-path" in names


@pytest.mark.parametrize("name", examples.names())
def test_every_example_loads_and_says_what_it_is(name):
    assert examples.path(name).is_file()
    assert examples.title(name)
    scenario = examples.load(name)
    assert isinstance(scenario, pathsel.Scenario)
    assert scenario.runs


def test_a_name_may_be_written_as_its_path_in_sims():
    want = EXAMPLES / "validation" / "failover.toml"
    for spelling in ("validation/failover", "validation/failover.toml", "sims/validation/failover.toml", "./sims/validation/failover.toml"):
        assert examples.path(spelling) == want


def test_an_unknown_name_says_the_closest():
    with pytest.raises(pathsel.ScenarioError) as info:
        examples.path("fast-failvoer")
    assert str(info.value) == (
        "pathsel.examples: 'fast-failvoer': no such example (did you mean 'fast-failover'?); pathsel.examples.names() lists them"
    )


def test_files_lists_what_an_example_reads():
    assert [p.relative_to(EXAMPLES).as_posix() for p in examples.files("cloud-metro-az")] == [
        "cloud-metro-az.toml",
        "data/ping-cross-az.txt",
        "data/ping-same-az.txt",
    ]
    assert [p.relative_to(EXAMPLES).as_posix() for p in examples.files("validation/seed004-testdrive")] == [
        "validation/seed004-testdrive.toml",
        "esxi-latency-testdrive.toml",
    ]
    assert examples.files("fast-failover") == [EXAMPLES / "fast-failover.toml"]


def test_a_copied_example_runs_where_it_is_written(tmp_path):
    written = examples.copy("cloud-metro-az", tmp_path / "mine")
    assert [p.relative_to(tmp_path / "mine").as_posix() for p in written] == [
        "cloud-metro-az.toml",
        "data/ping-cross-az.txt",
        "data/ping-same-az.txt",
    ]
    copied = pathsel.load_scenario(tmp_path / "mine" / "cloud-metro-az.toml")  # its empirical delays read the copies
    original = pathsel.load_scenario(SIMS / "cloud-metro-az.toml")
    for mine, theirs in zip(copied.model.paths, original.model.paths, strict=True):
        assert mine.one_way_latency.describe() == theirs.one_way_latency.describe()
        assert list(mine.one_way_latency.values) == list(theirs.one_way_latency.values)
    case = examples.copy("validation/seed004-testdrive", tmp_path / "mine")  # the scenario it names comes along
    assert (tmp_path / "mine" / "esxi-latency-testdrive.toml").read_bytes() == examples.path("esxi-latency-testdrive").read_bytes()
    assert case[0] == tmp_path / "mine" / "validation" / "seed004-testdrive.toml"


def test_copying_every_example_gives_sims(tmp_path):
    examples.copy(None, tmp_path)
    assert _tree(tmp_path) == _tree(EXAMPLES)
    examples.copy(None, tmp_path)  # again: the same files are there, nothing to do


def test_copy_never_overwrites_a_different_file(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "ping-same-az.txt").write_text("mine\n")
    with pytest.raises(pathsel.ScenarioError) as info:
        examples.copy("cloud-metro-az", tmp_path)
    assert str(info.value) == f"{tmp_path / 'data' / 'ping-same-az.txt'}: exists and is not the example's file: not overwritten, nothing written"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["data", "ping-same-az.txt"]  # nothing written
    assert (tmp_path / "data" / "ping-same-az.txt").read_text() == "mine\n"


# -- the command ---------------------------------------------------------------


def test_pathsel_example_lists_every_example(capsys):
    assert main(["example"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("Example scenarios")
    assert "Validation cases (pathsel validate runs them all):" in lines
    for name in examples.names():
        assert any(line.split()[0] == name and examples.title(name) in line for line in lines if line.startswith("  ")), name


def test_pathsel_example_prints_one(capsys):
    assert main(["example", "fast-failover"]) == 0
    out, err = capsys.readouterr()
    assert out == (SIMS / "fast-failover.toml").read_text()
    assert err == ""
    assert main(["example", "sims/cloud-metro-az.toml"]) == 0
    out, err = capsys.readouterr()
    assert out == (SIMS / "cloud-metro-az.toml").read_text()
    assert err == (
        "pathsel example: cloud-metro-az reads data/ping-cross-az.txt, data/ping-same-az.txt: pathsel example cloud-metro-az -o DIR writes them too\n"
    )


def test_pathsel_example_writes_one_with_what_it_reads(tmp_path, capsys):
    assert main(["example", "validation/seed004-testdrive", "-o", str(tmp_path)]) == 0
    assert capsys.readouterr().out == (
        f"pathsel: wrote {tmp_path / 'validation' / 'seed004-testdrive.toml'}\npathsel: wrote {tmp_path / 'esxi-latency-testdrive.toml'}\n"
    )
    assert main(["example", "-o", str(tmp_path / "all")]) == 0
    assert _tree(tmp_path / "all") == _tree(EXAMPLES)


def _pathsel(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pathsel.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["example", "fast-failvoer"],
            "pathsel: error: command line: example 'fast-failvoer': no such example (did you mean 'fast-failover'?); `pathsel example` lists them",
        ),
        (["example", "nothing-like-it"], "pathsel: error: command line: example 'nothing-like-it': no such example; `pathsel example` lists them"),
        (
            ["example", "fast-failover", "-o", "."],
            "pathsel: error: fast-failover.toml: exists and is not the example's file: not overwritten, nothing written",
        ),
    ],
)
def test_pathsel_example_bad_input_is_one_line(tmp_path, args, line):
    (tmp_path / "fast-failover.toml").write_text("# mine\n")
    proc = _pathsel(*args, cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", line + "\n")
    assert (tmp_path / "fast-failover.toml").read_text() == "# mine\n"


# -- pathsel validate finds the installed cases ---------------------------------------


def test_validate_defaults_to_the_installed_cases_outside_a_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert default_dir() == VALIDATION
    (tmp_path / "sims" / "validation").mkdir(parents=True)  # a folder of one's own cases, as documented
    assert default_dir().resolve() == (tmp_path / "sims" / "validation").resolve()


def test_validate_runs_an_installed_case_from_anywhere(tmp_path):
    proc = _pathsel("validate", "--quick", "--engine", "reference", str(examples.path("validation/failover")), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "failover" in proc.stdout
