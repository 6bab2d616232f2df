"""The league: regret per scenario, standings by worst case, the fresh held-out set, the command line.

Regret is checked on hand-made tables (every expected figure written out);
the runs are a small league (three policies, two gray scenarios, short
durations), enough to show the machinery and that guard leaves a slow path.
"""

from __future__ import annotations

import json
import math
import tomllib

import pandas as pd
import pytest

from pathsel.cli import main
from pathsel.errors import ScenarioError
from pathsel.scenario import load_scenario
from pathsel.studies.fresh import TROUBLES, fresh_scenarios, write_fresh
from pathsel.studies.league import League, category, contenders, league, library_files, sensitivity, standings


def _table(rows: list[tuple[str, str, int, float, float]]) -> pd.DataFrame:
    """(scenario, policy, replication, iops, p99_us) rows as a sweep writes them."""
    return pd.DataFrame(
        [
            {
                "scenario": s,
                "point": "defaults",
                "replication": r,
                "seed": r,
                "policy": p,
                "spec": p,
                "iops": i,
                "p99_us": lat,
                "p999_us": 2 * lat,
                "failed": 0,
                "convergence_s": math.nan,
            }
            for s, p, r, i, lat in rows
        ]
    )


def test_regret_is_relative_to_the_best_per_scenario_on_replication_means():
    t = _table(
        [
            ("a", "x", 0, 100.0, 1000.0),
            ("a", "x", 1, 100.0, 1000.0),
            ("a", "y", 0, 70.0, 1500.0),
            ("a", "y", 1, 90.0, 2500.0),  # mean 80 IOPS, 2000 us
            ("b", "x", 0, 50.0, 400.0),
            ("b", "x", 1, 50.0, 400.0),
            ("b", "y", 0, 100.0, 200.0),
            ("b", "y", 1, 100.0, 200.0),
        ]
    )
    scores, st = standings(t)
    s = scores.set_index(["scenario", "policy"])
    assert s.loc[("a", "y"), "regret_iops"] == pytest.approx(0.2)
    assert s.loc[("a", "y"), "regret_p99"] == pytest.approx(1.0)
    assert s.loc[("b", "x"), "regret_iops"] == pytest.approx(0.5)
    assert s.loc[("b", "x"), "regret_p99"] == pytest.approx(1.0)
    assert s.loc[("a", "x"), "regret_iops"] == 0 and s.loc[("b", "y"), "regret_p99"] == 0
    st = st.set_index("policy")
    # worst cases: x 50 % (b) on IOPS; y 20 % (a); both 100 % on p99: minimax ties, the mean decides (y: 10 % + 50 %)
    assert st.loc["x", "worst_iops_regret"] == pytest.approx(0.5) and st.loc["x", "worst_iops_scenario"] == "b"
    assert st.loc["y", "worst_iops_regret"] == pytest.approx(0.2) and st.loc["y", "worst_p99_scenario"] == "a"
    assert list(st.index) == ["y", "x"]
    assert st.loc["x", "behind_5pct"] == 1 and st.loc["y", "behind_5pct"] == 1


def test_a_scenario_missing_a_policy_is_left_out_and_no_iops_is_infinitely_behind():
    t = _table([("a", "x", 0, 100.0, 1000.0), ("a", "y", 0, 0.0, math.nan), ("b", "x", 0, 10.0, 10.0)])
    scores, st = standings(t)
    assert set(scores.scenario) == {"a"}
    s = scores.set_index("policy")
    assert s.loc["y", "regret_iops"] == pytest.approx(1.0)
    assert math.isinf(s.loc["y", "regret_p99"])
    two_points = pd.concat([t.assign(point="a=1"), t.assign(point="a=2")])
    with pytest.raises(ScenarioError, match="several points per scenario"):
        standings(two_points)
    with pytest.raises(ScenarioError, match="no column 'p99_us'"):
        standings(t.drop(columns="p99_us"))
    with pytest.raises(ScenarioError, match="no scenario has every policy"):
        standings(_table([("a", "x", 0, 1.0, 1.0), ("b", "y", 0, 1.0, 1.0)]))


def test_verdict_names_the_worst_cases_against_shipped_policies():
    t = _table([("a", "guard", 0, 96.0, 110.0), ("a", "rr", 0, 100.0, 100.0), ("b", "guard", 0, 100.0, 100.0), ("b", "rr", 0, 50.0, 300.0)])
    scores, st = standings(t)
    said = League(t, scores, st).verdict()
    assert said[0].startswith("guard: worst-case IOPS regret 4.0 % (a), lower than the best shipped policy's, rr 50.0 % (b)")
    assert "never more than 5 % behind" in said[2]


def test_library_categories_and_contenders():
    files = library_files()
    assert len(files) >= 24
    cats = {category(f.stem) for f in files}
    assert {"gray", "metro", "failover", "seed"} <= cats and "other" not in cats
    names = contenders()
    assert names[-1] == "guard" and len(names) == len(set(names)) >= 25
    assert "guard" not in contenders(include_ours=False)


def test_fresh_scenarios_are_valid_reproducible_and_varied(tmp_path):
    a = fresh_scenarios(12, seed=5)
    assert a == fresh_scenarios(12, seed=5)
    assert a != fresh_scenarios(12, seed=6)
    files = write_fresh(tmp_path, 12, seed=5)
    troubles = set()
    for f in files:
        sc = load_scenario(f)  # every generated file passes the loader
        assert sc.model.duration > 0
        troubles.add(tomllib.loads(f.read_text())["name"].split("-", 2)[2])
    assert len(troubles) >= 4 and troubles <= {t.replace("_", "-") for t in TROUBLES}


GRAY = ["gray-slow-path-10x", "gray-flapping-path"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    files = [f for f in library_files() if f.stem in GRAY]
    assert len(files) == 2
    return league(files, policies=["rr", "dm:historical-service-time", "guard"], replications=2, duration=0.4, executor="serial")


def test_a_small_league_runs_and_ranks(small):
    assert set(small.scores.scenario) == set(GRAY)
    assert len(small.table) == 2 * 3 * 2
    assert (small.table.failed >= 0).all()
    st = small.standings.set_index("policy")
    assert st.loc["guard", "worst_iops_regret"] < st.loc["rr", "worst_iops_regret"]
    assert "league: 3 policies x 2 scenarios x 2 replication(s)" in small.text()
    md = small.markdown()
    table_md, definitions = md.split("\n\n")  # the table, then what its columns hold (regret, recovery)
    assert table_md.count("\n") + 1 == 2 + 3 and "`guard`" in md and definitions.startswith("regret: how much worse")
    fig = small.heatmap("p99")
    assert list(fig.data[0].y) == list(small.standings.policy)


def test_sensitivity_runs_each_value_once_and_the_default_once(small):
    files = [f for f in library_files() if f.stem in GRAY]
    s = sensitivity(small, {"eject_ratio": [2.0, 3.0]}, scenarios=files, replications=2, duration=0.4, executor="serial")
    assert list(s.value) == [2.0, 3.0] and list(s.default) == [False, True]
    assert (s.worst_iops_regret >= 0).all() and (s.scenarios == 2).all()
    with pytest.raises(ScenarioError, match="guard has no parameter 'nope'"):
        sensitivity(small, {"nope": [1]}, scenarios=files)


def test_command_line_league_writes_table_html_and_markdown(tmp_path, capsys):
    out, html, md = tmp_path / "l.csv", tmp_path / "l.html", tmp_path / "l.md"
    files = [str(f) for f in library_files() if f.stem in GRAY]
    argv = [
        "league",
        *files,
        "--policy",
        "rr",
        "--policy",
        "guard",
        "--replications",
        "1",
        "--duration",
        "200ms",
        "--serial",
        "-q",
        "--out",
        str(out),
        "--html",
        str(html),
        "--markdown",
        str(md),
    ]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "league: 2 policies x 2 scenarios x 1 replication(s)" in text and f"table in {out}" in text
    assert "plotly" in html.read_text() and md.read_text().startswith("| # | policy |")
    assert main(["league", "--table", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {r["policy"] for r in doc["standings"]} == {"rr", "guard"}
    assert main(argv) == 0  # again: every run is read back from the table
    assert "(0 run now, 2 already saved)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["league", "--table", "nope.parquet"], "nope.parquet"),
        (["league", "--fresh", "2", "x.toml"], "--fresh: generates its own scenarios"),
        (["league", "--policy", "rr"], "a league needs two policies or more"),
        (["league", "--policy", "bogus", "--policy", "rr"], "unknown policy 'bogus'"),
        (["league", "/nonexistent-folder/"], "nonexistent-folder"),
        (["league", "--fresh", "2", "--write-fresh", "/proc/pathsel-x"], "cannot write the generated scenarios there"),
        (["league", "--fresh", "5000"], "must be 1 .. 1,000, got 5000"),
        (["league", "--write-fresh", "/tmp/x"], "--write-fresh: keeps the scenarios --fresh N generates"),
        (["league", "--table", "/etc/passwd"], "a .parquet or .csv file"),
    ],
)
def test_command_line_league_bad_input(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_league_on_dask_gives_the_serial_table(small):
    distributed = pytest.importorskip("distributed")
    files = [f for f in library_files() if f.stem in GRAY]
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_dask = league(files, policies=["rr", "dm:historical-service-time", "guard"], replications=2, duration=0.4, executor=client.get_executor())
    pd.testing.assert_frame_equal(small.table, on_dask.table, check_exact=True)
    pd.testing.assert_frame_equal(small.standings, on_dask.standings, check_exact=True)
