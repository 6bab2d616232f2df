"""The league's scaled timeouts: files validated before scaling, --timeout-scale, the scale kept in the table and checked on resume."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from pathsel.cli import main
from pathsel.errors import ScenarioError
from pathsel.studies.league import league, scaled_timeouts

from .conftest import ROOT

BASE = ROOT / "sims" / "library" / "gray-slow-path-10x.toml"
RUN = ["--policy", "rr", "--policy", "mru", "--replications", "1", "--duration", "50ms", "--serial", "-q"]


def _with_host_key(tmp_path, line: str, name: str = "t.toml"):
    text = BASE.read_text(encoding="utf-8")
    assert text.count("[[hosts]]") == 1
    path = tmp_path / name
    path.write_text(text.replace("[[hosts]]\n", f"[[hosts]]\n{line}\n", 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('io_timeout = "abc"', "'abc' is not a duration"),
        ("io_timeout = [1]", "expected a duration"),
        ('io_timeout = "nan"', "must be finite"),
        ("io_timeout = true", "got bool"),
        ('io_timeout = "5us"', "'5us' is shorter than the 10us"),  # the user's own value, not a scaled one
        ('apd_timeout = "-1s"', "apd_timeout"),
        ("io_timeout = 0", "has no unit"),
    ],
)
def test_a_bad_timeout_is_refused_in_the_users_words(tmp_path, capsys, line, problem):
    path = _with_host_key(tmp_path, line)
    assert main(["league", str(path), *RUN]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    key = line.split()[0]
    assert str(path) in err[0] and f"hosts[0].{key}" in err[0] and problem in err[0]
    assert "0.050us" not in err[0] and "Traceback" not in err[0]


def test_hosts_as_a_table_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "t.toml"
    path.write_text(BASE.read_text(encoding="utf-8").replace("[[hosts]]", "[hosts]", 1), encoding="utf-8")
    assert main(["league", str(path), *RUN]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "hosts: must be a list" in err[0]


def test_scaling_works_on_validated_values_and_keeps_the_floor(tmp_path):
    path = _with_host_key(tmp_path, 'io_timeout = "500us"\napd_timeout = "never"')
    sc = scaled_timeouts([path], 0.01)[0]
    h = sc.model.hosts[0]
    assert h.io_timeout == pytest.approx(10e-6)  # 5 us would be below the 10 us floor: raised to it
    assert math.isinf(h.apd_timeout)  # never stays never
    assert sc.name == "t"  # named by its file, as a sweep names a file
    plain = scaled_timeouts([BASE], 0.5)[0].model.hosts[0]
    assert plain.io_timeout == pytest.approx(15.0) and plain.apd_timeout == pytest.approx(70.0)
    assert scaled_timeouts([BASE], 1) == [BASE]  # 1: the files as written


@pytest.mark.parametrize("value", ["0", "-0.5", "2", "nan", "inf", "-inf", "abc", "1e-400"])
def test_timeout_scale_flag_is_checked(capsys, value):
    try:
        code = main(["league", str(BASE), *RUN, "--timeout-scale", value])
    except SystemExit as e:  # argparse's own check of the number
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert "--timeout-scale" in err and "Traceback" not in err


def test_timeout_scale_is_refused_with_table(tmp_path, capsys):
    assert main(["league", "--table", str(tmp_path / "x.csv"), "--timeout-scale", "0.5"]) == 2
    assert "--timeout-scale" in capsys.readouterr().err


def test_a_saved_table_keeps_its_scale_and_resume_checks_it(tmp_path, capsys):
    out = tmp_path / "lg.csv"
    assert main(["league", str(BASE), *RUN, "--out", str(out), "--timeout-scale", "0.05"]) == 0
    assert (pd.read_csv(out).timeout_scale == 0.05).all()
    ran = capsys.readouterr().out
    assert "x 0.05" in ran
    # ranked from the saved table: the legend still says how the runs were made
    assert main(["league", "--table", str(out)]) == 0
    assert re.search(r"timeouts: each host's io_timeout and apd_timeout x 0\.05", capsys.readouterr().out)
    # the same scale resumes; another is refused, naming it
    assert main(["league", str(BASE), *RUN, "--out", str(out), "--timeout-scale", "0.05"]) == 0
    assert "already saved" in capsys.readouterr().out
    assert main(["league", str(BASE), *RUN, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "timeout_scale = 0.05" in err and "timeout_scale = 0.01" in err
    # a table from before leagues kept the scale: refused with the reason, not reused beside scaled runs
    pd.read_csv(out).drop(columns="timeout_scale").to_csv(out, index=False)
    assert main(["league", str(BASE), *RUN, "--out", str(out)]) == 2
    assert "no timeout_scale column" in capsys.readouterr().err


def test_scale_one_runs_the_files_as_written_and_says_nothing():
    lg = league([BASE], policies=["rr", "mru"], replications=1, duration="50ms", executor="serial", timeout_scale=1)
    assert (lg.table.timeout_scale == 1).all() and lg.extra == {}
    assert "timeouts:" not in lg.text()
    with pytest.raises(ScenarioError, match="timeout_scale"):
        league([BASE], policies=["rr", "mru"], timeout_scale=1.5)


@pytest.fixture(scope="module")
def saved_league(tmp_path_factory):
    """A league table as a run writes it (scale 0.05), read into a DataFrame to spoil one cell of."""
    out = tmp_path_factory.mktemp("league") / "lg.csv"
    assert main(["league", str(BASE), *RUN, "--out", str(out), "--timeout-scale", "0.05"]) == 0
    return pd.read_csv(out)


# issue 50: a saved table's timeout_scale is checked on read as --timeout-scale is on write (-1 was ranked and
# printed as "x -1 (... -30 s)"); (the value of row 2, the place, the problem)
TABLE_SCALES = [
    ("-1", "row 2, column timeout_scale", "must be a number in (0, 1] (1: the files' own timeouts), got -1.0"),
    ("0", "row 2, column timeout_scale", "must be a number in (0, 1]"),
    ("1.5", "row 2, column timeout_scale", "must be a number in (0, 1]"),
    ("inf", "row 2, column timeout_scale", "got inf"),
    ("", "row 2, column timeout_scale", "got nan"),
    ("abc", "row 2, column timeout_scale", "'abc' is not a number"),
    ("0.5", "row 2, column timeout_scale", "0.5 where row 1 has 0.05: one table, one scale"),
]


@pytest.mark.parametrize(("value", "place", "problem"), TABLE_SCALES, ids=[v or "blank" for v, _, _ in TABLE_SCALES])
def test_league_table_checks_its_timeout_scale_on_read(value, place, problem, saved_league, tmp_path, capsys):
    table = saved_league.astype({"timeout_scale": object})
    table.loc[1, "timeout_scale"] = value
    path = tmp_path / "spoilt.csv"
    table.to_csv(path, index=False)
    assert main(["league", "--table", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith(f"pathsel: error: {path}: {place}: ") and problem in err, err
