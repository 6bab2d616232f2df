"""``pathsel validate`` in a minute (issue 35): what the default, ``--quick`` and ``--full`` run, the line per case
on stderr, and the case files' three lengths (``quick_duration`` <= ``duration`` <= ``full_duration``).

CI cannot afford ``--full`` (tens of minutes, mostly the reference engine); tests/test_analytic.py runs every case
on both engines at its ``quick_duration``. The four open-loop cases that only the fast engine runs
(``engines = ["fast"]``: a reference run long enough for their checks takes minutes) are run here on the reference
engine at a short length and must give the fast engine's figures exactly, so the fast engine's verdict is the
reference engine's too.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pathsel.cli import main
from pathsel.data import VALIDATION
from pathsel.studies.validate import Row, case_line, load_case, run_case

from .conftest import ROOT

FAST_CASE = VALIDATION / "frames-32gfc.toml"  # built-in policy, a few milliseconds on the fast engine
PYTHON_CASE = VALIDATION / "mva-delay-only.toml"  # RandomSplit, a Python policy: the reference engine


def _meta(text: str, key: str, line: str) -> str:
    """The case file's text with the ``[validation]`` table's ``key = ...`` line replaced by ``line`` ("" drops it)."""
    head, sep, meta = text.partition("[validation]\n")
    meta, n = re.subn(rf"^{key} = [^\n]*\n", line + "\n" if line else "", meta, count=1, flags=re.M)
    assert n == 1, key
    return head + sep + meta


def _short_python_case(tmp_path: Path) -> Path:
    """mva-delay-only cut to 50 ms (its checks may fail: these tests look at engines and lines, not figures)."""
    text = PYTHON_CASE.read_text()
    for key in ("quick_duration", "duration", "full_duration"):
        text = _meta(text, key, f'{key} = "50ms"')
    out = tmp_path / "mva-short.toml"
    out.write_text(text)
    return out


def _rows(capsys, *args: str) -> tuple[int, list[dict]]:
    status = main(["validate", "--json", "-q", *args])
    return status, json.loads(capsys.readouterr().out)["cases"]


def test_every_shipped_case_has_three_ordered_lengths():
    for f in sorted(VALIDATION.glob("*.toml")):
        case = load_case(f)
        assert case.quick_duration and case.duration and case.full_duration, f.name
        assert case.quick_duration <= case.duration <= case.full_duration, f.name
        # a Python policy runs on the reference engine: the default keeps it at its quick length
        if not case.builtin:
            assert case.duration == case.quick_duration, f.name


def test_default_runs_the_fast_engine_and_python_policies_on_reference(tmp_path: Path, capsys):
    _, rows = _rows(capsys, str(FAST_CASE), str(_short_python_case(tmp_path)))
    engines = {(r["case"], r["engine"]) for r in rows}
    assert engines == {("frames-32gfc", "fast"), ("mva-delay-only", "reference")}


def test_full_runs_both_engines(tmp_path: Path, capsys):
    short = tmp_path / "frames.toml"
    text = _meta(_meta(FAST_CASE.read_text(), "full_duration", 'full_duration = "0.1s"'), "duration", 'duration = "0.1s"')
    short.write_text(text)
    status, rows = _rows(capsys, "--full", str(short))
    assert status == 0
    assert sorted(r["engine"] for r in rows) == ["fast", "reference"]
    assert len({r["simulated"] for r in rows}) == 1  # the engines agree


def test_engine_narrows_any_length(tmp_path: Path, capsys):
    _, rows = _rows(capsys, "--engine", "both", "--quick", str(_short_python_case(tmp_path)))
    assert {r["engine"] for r in rows} == {"reference"}  # a Python policy runs on reference whatever was asked
    _, rows = _rows(capsys, "--full", "--engine", "fast", str(_short_python_case(tmp_path)))
    assert {r["engine"] for r in rows} == {"reference"}


def test_workers_give_the_rows_of_one_process(tmp_path: Path):
    from pathsel.studies.validate import validate

    files = [str(FAST_CASE), str(_short_python_case(tmp_path)), str(VALIDATION / "policy-splits.toml")]
    seen: list[str] = []
    serial = validate(files)
    parallel = validate(files, workers=2, done=lambda name, rows, s: seen.append(name))
    assert [r.to_dict() for r in parallel] == [r.to_dict() for r in serial]
    assert sorted(seen) == ["frames-32gfc", "mva-delay-only", "policy-splits"]
    assert seen[-1] == "mva-delay-only"  # the worker's case reports after this process's own


@pytest.mark.parametrize("args", [["--workers", "0"], ["--workers", "-1"], ["--workers", "two"], ["--workers", "2", "--serial"]])
def test_bad_workers_is_status_2(capsys, args: list[str]):
    with pytest.raises(SystemExit) as e:
        main(["validate", *args])
    assert e.value.code == 2
    assert "--workers" in capsys.readouterr().err


def test_quick_and_full_are_exclusive(capsys):
    with pytest.raises(SystemExit) as e:
        main(["validate", "--quick", "--full"])
    assert e.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_lengths_pick_durations_and_engines(tmp_path: Path):
    case = load_case(FAST_CASE)
    assert (case.duration_for("quick"), case.duration_for("default"), case.duration_for("full")) == (0.1, 0.5, 0.5)
    assert case.engines_for("default") == ("fast",) and case.engines_for("full") == ("fast", "reference")
    # a file written before full_duration existed: its duration was the long run, and --full still runs it
    old = tmp_path / "old.toml"
    old.write_text(_meta(_meta(FAST_CASE.read_text(), "full_duration", ""), "duration", 'duration = "0.3s"'))
    case = load_case(old)
    assert (case.duration_for("quick"), case.duration_for("default"), case.duration_for("full")) == (0.1, 0.3, 0.3)


@pytest.mark.parametrize("name", ["mm1-open", "mmc-host-queue", "mmc-open", "mmck-blocking"])
def test_fast_only_cases_give_the_same_figures_on_the_reference_engine(name: str):
    case = dataclasses.replace(load_case(VALIDATION / f"{name}.toml"), engines=None, duration=0.2)
    rows = run_case(case, engines=("fast", "reference"))
    by: dict[tuple[str, str], set[float]] = {}
    for r in rows:
        by.setdefault((r.check, r.run), set()).add(r.simulated)
    assert {r.engine for r in rows} == {"fast", "reference"}
    assert all(len(v) == 1 for v in by.values()), by


# -- the line per case ----------------------------------------------------------------


def _row(passed: bool, engine: str = "fast") -> Row:
    return Row("c", "iops", "rr", engine, "s", 1.0, 1.0, 0.0, 0.01, passed)


def test_case_line_says_checks_engines_and_seconds():
    assert case_line("mm1-open", [_row(True), _row(True)], 2.06) == "mm1-open: 2/2 checks passed on fast (2.1 s)"
    both = [_row(True), _row(False, "reference")]
    assert case_line("x", both, 0.04) == "x: 1/2 checks passed, 1 FAILED on fast and reference (0.0 s)"


def _pathsel(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-c", "import sys; from pathsel.cli import main; sys.exit(main())", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_a_line_per_case_on_stderr_when_not_a_terminal():
    cases = [str(FAST_CASE), str(VALIDATION / "policy-splits.toml")]
    proc = _pathsel("validate", *cases)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 2, lines
    assert re.fullmatch(r"pathsel validate: frames-32gfc: 1/1 checks passed on fast \(\d+\.\d s\)", lines[0]), lines
    assert re.fullmatch(r"pathsel validate: policy-splits: 7/7 checks passed on fast \(\d+\.\d s\)", lines[1]), lines
    assert "\r" not in proc.stderr and "\x1b" not in proc.stderr
    assert "7 of 7 checks passed" in proc.stdout or "8 of 8 checks passed" in proc.stdout
    quiet = _pathsel("validate", "-q", *cases)
    assert quiet.returncode == 0 and quiet.stderr == ""


# -- the keys: one located line, exit 2 -------------------------------------------------

# (key in frames-32gfc's [validation] table, its new line, the place and problem of the one-line error)
BAD_LENGTHS = [
    ("full_duration", 'full_duration = "0s"', "validation.full_duration: must be > 0"),
    ("full_duration", 'full_duration = "-1s"', "validation.full_duration: must be > 0"),
    ("full_duration", "full_duration = 5", "validation.full_duration: 5 has no unit"),
    ("full_duration", 'full_duration = "inf"', "validation.full_duration: 'inf': must be finite"),
    ("full_duration", 'full_duration = "nan"', "validation.full_duration: 'nan': must be finite"),
    ("full_duration", "full_duration = true", "validation.full_duration: expected a duration"),
    ("full_duration", 'full_duration = "1e12s"', "validation.full_duration: '1e12s' is more than the 1e6s"),
    ("full_duration", 'full_duration = "5 minutes"', "validation.full_duration: '5 minutes': unknown time unit 'minutes'"),
    ("full_duration", 'full_duration = "0.2s"', "validation.full_duration: '0.2s' is shorter than duration = '0.5s'"),
    ("quick_duration", 'quick_duration = "1s"', "validation.duration: '0.5s' is shorter than quick_duration = '1s'"),
    ("full_duration", 'ful_duration = "0.5s"', "validation.ful_duration: unknown key 'ful_duration' (did you mean 'full_duration'?)"),
    ("duration", 'duration = "500"', "validation.duration: '500' has no unit"),
]


@pytest.mark.parametrize("key,line,fragment", BAD_LENGTHS, ids=[b[1] for b in BAD_LENGTHS])
def test_bad_length_is_one_located_line_and_status_2(tmp_path: Path, capsys, key: str, line: str, fragment: str):
    bad = tmp_path / "bad.toml"
    bad.write_text(_meta(FAST_CASE.read_text(), key, line))
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pathsel: error: ") and str(bad) in err[0] and fragment in err[0], err
