"""Sweeps (issue 7): grids, replications on common random numbers, resumable tables, executors, recommend.

Runs are short (0.2 s simulated) and grids tiny: the point is the bookkeeping,
which is exact, not the numbers.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pathsel
from pathsel.cli import main
from pathsel.policies.spec import parse_spec
from pathsel.scenario.overrides import format_value
from pathsel.studies.recommend import format_recommendation, recommend
from pathsel.studies.sweep import (
    convergence_time,
    parse_param,
    read_table,
    summarize,
    sweep,
)

from .conftest import SIMS

TESTDRIVE = SIMS / "esxi-latency-testdrive.toml"
FAILBACK = SIMS / "metro-failback.toml"
GRID = {"latency.num_sampling_cycles": [16, 32], "replication.one_way_latency": ["0.5ms", "1ms"]}
KW = dict(replications=2, seed=7, duration=0.2)


@pytest.fixture(scope="module")
def serial_table() -> pd.DataFrame:
    return sweep(TESTDRIVE, GRID, executor="serial", **KW).table


# -- parameters ----------------------------------------------------------------


def test_parse_param_types_values_as_toml_would():
    assert parse_param("latency.num_sampling_cycles=16,32,64") == ("latency.num_sampling_cycles", [16, 32, 64])
    assert parse_param("replication.one_way_latency=0.5ms, 1ms") == ("replication.one_way_latency", ["0.5ms", "1ms"])
    assert parse_param("latency.tolerance=0.1,0.25") == ("latency.tolerance", [0.1, 0.25])


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("latency.num_sampling_cycles", "expected NAME=VALUE"), ("=1,2", "expected NAME=VALUE"), ("x=1,,2", "empty value")],
)
def test_parse_param_rejects_bad_text(text: str, fragment: str):
    with pytest.raises(pathsel.ScenarioError, match=fragment):
        parse_param(text)


def test_table_has_one_row_per_point_replication_policy(serial_table: pd.DataFrame):
    t = serial_table
    # latency RR at 2 x 2 points; the two RR runs, which the policy parameter does not set, at the 2 points
    # of the scenario key only: rows = (4 x 1 + 2 x 2) x 2 replications.
    assert len(t) == (4 * 1 + 2 * 2) * 2
    assert list(t.columns[:6]) == ["scenario", "point", "latency.num_sampling_cycles", "replication.one_way_latency", "replication", "seed"]
    for c in ("policy", "spec", "iops", "mbps", "mean_us", "p50_us", "p99_us", "p999_us", "max_us", "paths_used", "expected_iops", "convergence_s"):
        assert c in t.columns
    # The policy parameter is in its own family's rows only; they are labelled with the spec that ran.
    lat = t[t.spec.str.startswith("latency")]
    assert set(lat["latency.num_sampling_cycles"]) == {16, 32}
    assert set(lat.spec) == {"latency", "latency:num_sampling_cycles=32"}
    assert (lat.policy == lat.spec).all()
    assert set(lat.point) == {f"latency.num_sampling_cycles={c} replication.one_way_latency={d}" for c in (16, 32) for d in ("0.5ms", "1ms")}
    rr = t[~t.spec.str.startswith("latency")]
    assert rr["latency.num_sampling_cycles"].isna().all()
    assert set(rr.point) == {"replication.one_way_latency=0.5ms", "replication.one_way_latency=1ms"}  # no value it did not use
    assert set(rr.policy) == {"RR iops=1, all paths AO", "RR iops=1, preferred array"}  # labels of runs the point leaves alone
    assert set(rr.spec) == {"rr:iops=1", "rr:iops=1,preferred_array=local"}
    assert t.convergence_s.isna().all()  # no faults in the test drive


def test_replication_seeds_are_spawned_and_common_to_points_and_policies(serial_table: pd.DataFrame):
    t = serial_table
    expected = [int(c.generate_state(1)[0]) for c in np.random.SeedSequence(7).spawn(2)]
    assert sorted(t.seed.unique()) == sorted(expected)
    assert (t.groupby("replication").seed.nunique() == 1).all()
    assert t.drop_duplicates("replication").set_index("replication").seed.tolist() == expected
    # Common random numbers: RR, which the latency parameter does not set, runs once per scenario-key value
    # and replication, with the numbers it has beside latency RR in a plain run on the same seed.
    rr = t[t.policy == "RR iops=1, all paths AO"]
    assert len(rr) == 4
    row = rr[(rr["replication.one_way_latency"] == "1ms") & (rr.replication == 1)].iloc[0]
    alone = pathsel.simulate(TESTDRIVE, duration=0.2, seed=int(row.seed)).summary().set_index("policy")
    assert row.iops == alone.loc["RR iops=1, all paths AO", "iops"]
    assert row.p99_us == alone.loc["RR iops=1, all paths AO", "p99_us"]
    lat = t[(t.spec == "latency") & (t["replication.one_way_latency"] == "1ms") & (t.replication == 1)].iloc[0]
    assert lat.iops == alone.loc["latency RR, all paths AO", "iops"]


def test_scenario_override_changes_the_run(serial_table: pd.DataFrame):
    t = serial_table
    mean = t[t.policy == "RR iops=1, preferred array"].groupby("replication.one_way_latency").iops.mean()
    assert mean["0.5ms"] > 1.3 * mean["1ms"]  # a closer peer array acknowledges writes sooner


def test_more_replications_keep_the_first_ones():
    a = sweep(TESTDRIVE, {"latency.num_sampling_cycles": [16]}, replications=1, seed=3, duration=0.2, executor="serial").table
    b = sweep(TESTDRIVE, {"latency.num_sampling_cycles": [16]}, replications=3, seed=3, duration=0.2, executor="serial").table
    pd.testing.assert_frame_equal(a, b[b.replication == 0].reset_index(drop=True))


def test_list_entries_by_index_by_name_and_all(tmp_path: Path):
    res = sweep(
        TESTDRIVE,
        {"workloads[0].iodepth": [4], "arrays[remote].concurrency": [2], "paths[*].bandwidth": ["8Gbit"]},
        policies=["rr:iops=1"],
        replications=1,
        seed=1,
        duration=0.2,
        executor="serial",
    )
    row = res.table.iloc[0]
    assert row["workloads[0].iodepth"] == 4 and row["arrays[remote].concurrency"] == 2
    assert row["paths[*].bandwidth"] == "8Gbit"


# -- executors -------------------------------------------------------------------


def test_serial_process_pool_and_dask_give_identical_tables(serial_table: pd.DataFrame):
    distributed = pytest.importorskip("distributed")
    pool = sweep(TESTDRIVE, GRID, workers=2, **KW).table
    pd.testing.assert_frame_equal(serial_table, pool, check_exact=True)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        dask = sweep(TESTDRIVE, GRID, executor=client.get_executor(), **KW).table
    pd.testing.assert_frame_equal(serial_table, dask, check_exact=True)


# -- saving and resuming ------------------------------------------------------------


class _Stop(Exception):
    pass


def _interrupt_after(k: int):
    def hook(done: int, total: int) -> None:
        if done == k:
            raise _Stop

    return hook


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_interrupted_sweep_resumes_to_the_same_table(tmp_path: Path, serial_table: pd.DataFrame, suffix: str):
    out = tmp_path / f"results{suffix}"
    with pytest.raises(_Stop):
        sweep(TESTDRIVE, GRID, out=out, executor="serial", _on_run=_interrupt_after(3), **KW)
    saved = out if suffix == ".csv" else out.with_name(out.name + ".parts")
    assert saved.exists()  # runs were written as they finished
    res = sweep(TESTDRIVE, GRID, out=out, workers=2, **KW)
    assert (res.ran, res.reused) == (9, 3)
    pd.testing.assert_frame_equal(res.table, serial_table, check_exact=True)
    assert not out.with_name(out.name + ".parts").exists()
    again = sweep(TESTDRIVE, GRID, out=out, executor="serial", **KW)
    assert again.ran == 0
    pd.testing.assert_frame_equal(again.table, serial_table, check_exact=True)


def test_a_run_cut_mid_line_is_run_again(tmp_path: Path):
    whole = tmp_path / "whole.csv"
    sweep(TESTDRIVE, GRID, out=whole, executor="serial", **KW)
    cut = tmp_path / "cut.csv"
    with pytest.raises(_Stop):
        sweep(TESTDRIVE, GRID, out=cut, executor="serial", _on_run=_interrupt_after(2), **KW)
    data = cut.read_bytes()
    cut.write_bytes(data[: len(data) - 40])  # a kill in the middle of the second run's last row
    res = sweep(TESTDRIVE, GRID, out=cut, executor="serial", **KW)
    assert res.reused == 1
    assert cut.read_bytes() == whole.read_bytes()


def test_a_results_file_of_another_sweep_is_refused(tmp_path: Path):
    out = tmp_path / "r.csv"
    sweep(TESTDRIVE, {"latency.num_sampling_cycles": [16]}, out=out, executor="serial", **KW)
    with pytest.raises(pathsel.ScenarioError, match="holds runs this sweep does not plan"):
        sweep(TESTDRIVE, {"latency.num_sampling_cycles": [16]}, out=out, executor="serial", replications=2, seed=8, duration=0.2)
    with pytest.raises(pathsel.ScenarioError, match="holds runs this sweep does not plan"):
        sweep(TESTDRIVE, {"latency.num_sampling_cycles": [16]}, out=out, executor="serial", replications=2, seed=7, duration=0.3)


# -- [sweep] in a scenario file --------------------------------------------------------


def _with_sweep_table(tmp_path: Path, table: str) -> Path:
    p = tmp_path / "study.toml"
    p.write_text(TESTDRIVE.read_text() + "\n" + table)
    return p


def test_sweep_table_in_a_file_gives_the_grid_and_the_file_still_simulates(tmp_path: Path):
    p = _with_sweep_table(
        tmp_path,
        "[sweep]\nreplications = 2\nseed = 7\n[sweep.params]\nlatency.num_sampling_cycles = [16, 32]\n"
        '"replication.one_way_latency" = ["0.5ms", "1ms"]\n',
    )
    assert pathsel.simulate(p, duration=0.05).runs  # the loader leaves [sweep] to pathsel sweep
    t = sweep(p, duration=0.2, executor="serial").table
    ref = sweep(TESTDRIVE, GRID, executor="serial", **KW).table
    pd.testing.assert_frame_equal(t.drop(columns=["scenario", "config"]), ref.drop(columns=["scenario", "config"]), check_exact=True)
    # A grid given as an argument replaces the file's.
    t2 = sweep(p, {"latency.num_sampling_cycles": [64]}, replications=1, duration=0.2, executor="serial").table
    assert set(t2.point) == {"latency.num_sampling_cycles=64", "defaults"}  # round robin: no parameter of its own


@pytest.mark.parametrize(
    ("table", "place", "fragment"),
    [
        ("[sweep]\nreplicatons = 2\n", "sweep.replicatons", "unknown key 'replicatons'"),
        ("[sweep]\nreplications = 0\n", "sweep.replications", "must be a whole number >= 1"),
        ("[sweep.params]\nlatency.num_sampling_cycles = 16\n", "sweep.params.latency.num_sampling_cycles", "must be a list"),
        ("[sweep.params]\nlatency.num_sampling_cycles = [8]\n", "sweep.params.latency.num_sampling_cycles", "must be in 16.."),
    ],
)
def test_bad_sweep_table_is_located(tmp_path: Path, table: str, place: str, fragment: str):
    p = _with_sweep_table(tmp_path, table)
    with pytest.raises(pathsel.ScenarioError) as e:
        sweep(p, executor="serial", duration=0.1)
    assert e.value.source == str(p) and e.value.place == place and fragment in e.value.problem


# -- convergence -------------------------------------------------------------------------


def test_convergence_after_failback_follows_the_evaluation_period():
    t = sweep(FAILBACK, {"latency.latency_eval_time": [30000, 180000]}, replications=1, seed=1, executor="serial").table
    conv = t.set_index(["policy", "latency.latency_eval_time"]).convergence_s
    rr = t[t.policy == "RR iops=1"].convergence_s
    assert len(rr) == 1 and (rr < 1.0).all()  # round robin takes the local paths back at once
    # Latency RR keeps the remote paths until its next evaluation: about 30 s after the last, which was at ~20 s.
    assert conv[("latency:latency_eval_time=30000", 30000)] < 10.0
    assert conv[("latency", 180000)] == pytest.approx(120.0 - 45.0)  # never back: the rest of the run, a lower bound


def test_convergence_is_nan_without_faults():
    r = pathsel.simulate(duration=0.1)
    assert math.isnan(convergence_time(r.runs[0]))


# -- several files: each parameter where it means something --------------------------------

PATHFAIL = SIMS / "path-failure-recovery.toml"  # latency RR, no replication
MPIO = SIMS / "windows-mpio-metro.toml"  # replication, no latency RR
DM = SIMS / "linux-dm-slow-path-qd1.toml"  # neither
STEP = SIMS / "latency-step-latency-rr.toml"  # two latency RR runs that differ only in latency_eval_time
MIXED = [TESTDRIVE, PATHFAIL, MPIO, DM]
MIXED_GRID = {"latency.latency_eval_time": [30000, 180000], "replication.one_way_latency": ["0.5ms", "1ms"]}


@pytest.fixture(scope="module")
def mixed():
    return sweep(MIXED, MIXED_GRID, replications=2, seed=3, duration=0.1, executor="serial")


def _point_values(text: str) -> dict[str, str]:
    return {} if text == "defaults" else dict(item.split("=", 1) for item in text.split(" "))


def test_each_parameter_applies_where_it_means_something(mixed):
    t = mixed.table
    assert mixed.skipped == {
        "latency.latency_eval_time": ["windows-mpio-metro", "linux-dm-slow-path-qd1"],
        "replication.one_way_latency": ["path-failure-recovery", "linux-dm-slow-path-qd1"],
    }
    points = t.groupby("scenario", sort=False).point.unique().map(set).to_dict()
    evals = {f"latency.latency_eval_time={v}" for v in (30000, 180000)}
    dists = {f"replication.one_way_latency={d}" for d in ("0.5ms", "1ms")}
    assert points == {
        # latency RR at every combination; round robin once per distance
        "esxi-latency-testdrive": {f"{e} {d}" for e in evals for d in dists} | dists,
        # no replication: latency RR per value of its parameter; FIXED and RR once
        "path-failure-recovery": evals | {"defaults"},
        # no latency policy: every policy once per distance
        "windows-mpio-metro": dists,
        # neither applies: the file runs once, as it is
        "linux-dm-slow-path-qd1": {"defaults"},
    }
    dm = t[t.scenario == "linux-dm-slow-path-qd1"]
    assert len(dm) == 2 * 5 and dm[list(MIXED_GRID)].isna().all().all()  # 2 replications x 5 policies
    assert len(t) == len(t.drop_duplicates(["scenario", "point", "replication", "policy"]))


def test_a_row_never_contradicts_its_point_or_its_parameter_columns(mixed):
    for row in mixed.table.to_dict("records"):
        named = _point_values(row["point"])
        spec, _ = parse_spec(row["spec"])
        for col in MIXED_GRID:
            value = row[col]
            if col in named:
                assert format_value(value) == named[col], row
            else:
                assert pd.isna(value), row  # a parameter a row did not use has no value there
            if col.startswith("latency.") and spec.name == "latency":
                assert format_value(spec["latency_eval_time"]) == named[col]
        if spec.name == "latency":  # a swept run is labelled with the spec that ran
            assert row["policy"] == row["spec"]


def test_the_sweep_says_what_each_parameter_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "r.parquet"
    args = [
        "sweep",
        *map(str, MIXED),
        "--duration",
        "0.1s",
        "--replications",
        "2",
        "--seed",
        "3",
        "--serial",
        "--param",
        "latency.latency_eval_time=30000,180000",
        "--param",
        "replication.one_way_latency=0.5ms,1ms",
        "--out",
        str(out),
        "-q",
    ]
    assert main(args) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "pathsel sweep: latency.latency_eval_time skipped 2 of 4 file(s), which ran once without it: "
        "windows-mpio-metro, linux-dm-slow-path-qd1 (no latency policy)",
        "pathsel sweep: replication.one_way_latency skipped 2 of 4 file(s), which ran once without it: "
        "path-failure-recovery, linux-dm-slow-path-qd1 (the scenario has no replication to set replication.one_way_latency in)",
    ]
    assert main(["recommend", str(out), "--metric", "iops"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("2 setting(s) of latency across 3 condition(s)")
    for condition in (
        "esxi-latency-testdrive  replication.one_way_latency=0.5ms",
        "esxi-latency-testdrive  replication.one_way_latency=1ms",
        "path-failure-recovery",
    ):
        assert condition in text
    assert "left out" not in text


def test_runs_that_differ_only_in_swept_parameters_run_once():
    res = sweep(STEP, {"latency.latency_eval_time": [30000, 180000]}, replications=1, seed=1, duration=0.1, executor="serial")
    t = res.table
    assert t[["point", "policy"]].values.tolist() == [  # plan order: the file's order of policies, then the grid's
        ["defaults", "RR iops=1"],
        ["latency.latency_eval_time=30000", "latency:latency_eval_time=30000"],
        ["latency.latency_eval_time=180000", "latency"],
    ]
    assert res.notes == [
        "latency-step-latency-rr: runs 'latency RR, eval 30 s' and 'latency RR, eval 180 s (default)' "
        "differ only in swept parameters: each point runs them once"
    ]


@pytest.mark.parametrize(
    ("files", "param", "fragment"),
    [
        ([MPIO, DM], "fixed.preferred=x", "none of the 2 scenarios runs a fixed policy"),
        ([MPIO], "latency.num_sampling_cycles=16", f"{MPIO} runs no latency policy (policies: mpio:fo,"),
        ([PATHFAIL, DM], "replication.one_way_latency=1ms", "the scenario has no replication to set replication.one_way_latency in"),
        ([PATHFAIL, DM], "replicaton.one_way_latency=1ms", "the scenario has no replicaton to set replicaton.one_way_latency in"),
    ],
)
def test_a_parameter_that_applies_to_no_file_is_bad_input(files, param, fragment, capsys: pytest.CaptureFixture[str]):
    assert main(["sweep", *map(str, files), "--param", param, "--serial"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err


# -- summary and recommendation --------------------------------------------------------


def test_summary_is_mean_and_student_t_interval(serial_table: pd.DataFrame):
    s = summarize(serial_table)
    row = s[(s.metric == "iops") & (s.policy == "latency")].iloc[0]
    vals = serial_table[(serial_table.point == row.point) & (serial_table.policy == row.policy)].iops
    assert row.n == 2 and row["mean"] == pytest.approx(vals.mean())
    assert row.ci95 == pytest.approx(12.7062 * vals.std(ddof=1) / math.sqrt(2), rel=1e-4)  # t(0.975, 1)
    assert "convergence_s" not in set(s.metric)


def _synthetic(values: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    """A sweep table by hand: settings are latency.num_sampling_cycles values, conditions scenarios."""
    rows = []
    for (scenario, cycles), reps in values.items():
        for r, v in enumerate(reps):
            rows.append(
                {
                    "scenario": scenario,
                    "point": f"latency.num_sampling_cycles={cycles}",
                    "latency.num_sampling_cycles": int(cycles),
                    "replication": r,
                    "seed": r,
                    "policy": "lat",
                    "spec": f"latency:num_sampling_cycles={cycles}" if cycles != "16" else "latency",
                    "iops": v,
                    "p99_us": 1e6 / v,
                    "convergence_s": math.nan,
                }
            )
    return pd.DataFrame(rows)


def test_recommendation_minimises_the_worst_case_regret():
    # 16 is best on average (one big win) but 32 is never more than 5 % behind: the minimax choice.
    t = _synthetic(
        {
            ("a", "16"): [2000, 2000],
            ("a", "32"): [1900, 1900],
            ("a", "64"): [1000, 1000],
            ("b", "16"): [800, 800],
            ("b", "32"): [1000, 1000],
            ("b", "64"): [1000, 1000],
        }
    )
    rec = recommend(t)
    m = rec["iops"]
    assert m.recommended == "latency [num_sampling_cycles=32]"
    assert m.max_regret == pytest.approx(0.05)
    assert m.runner_up == "latency [num_sampling_cycles=16]"
    assert m.ranking.set_index("setting").max_regret["latency [num_sampling_cycles=64]"] == pytest.approx(0.5)
    assert rec["p99"].recommended == "latency [num_sampling_cycles=32]"  # p99 = 1/iops here: the same order
    assert "convergence" not in rec.metrics


def test_regret_heatmap_draws_the_ranking():
    t = _synthetic({("a", "16"): [2000], ("a", "32"): [1900], ("b", "16"): [800], ("b", "32"): [1000]})
    fig = recommend(t).figure("iops")
    heat = fig.data[0]
    assert list(heat.y) == ["★ latency [num_sampling_cycles=32]", "latency [num_sampling_cycles=16]"]
    assert list(heat.x) == ["a", "b"]
    assert heat.z[0] == pytest.approx([5.0, 0.0]) and heat.z[1] == pytest.approx([0.0, 20.0])  # %


def test_recommend_leaves_out_and_names_a_condition_not_every_setting_ran_in():
    t = _synthetic({("a", "16"): [2000], ("a", "32"): [1900], ("b", "16"): [800], ("b", "32"): [1000], ("c", "16"): [500]})
    m = recommend(t)["iops"]
    assert m.dropped == {"c": ["latency [num_sampling_cycles=32]"]}
    assert set(m.cells.condition) == {"a", "b"} and m.recommended == "latency [num_sampling_cycles=32]"
    assert "left out condition c: setting latency [num_sampling_cycles=32] not run there" in format_recommendation(recommend(t))


def test_recommend_that_cannot_rank_names_what_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    t = _synthetic({("a", "16"): [2000], ("b", "32"): [1900], ("c", "16"): [800]})
    out = tmp_path / "r.csv"
    t.to_csv(out, index=False)
    assert main(["recommend", str(out), "--metric", "iops"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"pathsel: error: {out}: iops: cannot rank, no condition has every setting: "
        "setting latency [num_sampling_cycles=16] was not run in condition b; "
        "setting latency [num_sampling_cycles=32] was not run in 2 conditions: a, c "
        "(choose settings with --policy, or sweep the same grid in every condition)\n"
    )


def test_recommend_chooses_policies_by_label_or_family(mixed):
    by_default = recommend(mixed.table, metrics=["iops"])
    by_family = recommend(mixed.table, metrics=["iops"], policies=["latency"])
    assert by_default.policies == by_family.policies == ["latency:latency_eval_time=30000", "latency"]
    pd.testing.assert_frame_equal(by_default["iops"].ranking, by_family["iops"].ranking)
    # A baseline by label beside the swept family: compared where both ran, the rest named.
    rec = recommend(mixed.table, metrics=["iops"], policies=["latency", "RR iops=1"])
    assert rec.families == ["latency", "rr"]
    assert set(rec["iops"].ranking.setting) == {"latency [latency_eval_time=30000]", "latency [latency_eval_time=180000]", "rr [iops=1]"}
    assert set(rec["iops"].cells.condition) == {"path-failure-recovery"}
    with pytest.raises(pathsel.ScenarioError, match="no policy labelled 'bogus' and no 'bogus' family"):
        recommend(mixed.table, policies=["bogus"])


def test_cli_sweep_and_recommend_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "r.parquet"
    args = [
        "sweep",
        str(TESTDRIVE),
        str(FAILBACK),
        "--duration",
        "0.2s",
        "--replications",
        "2",
        "--seed",
        "7",
        "--param",
        "latency.num_sampling_cycles=16,32",
        "--param",
        "replication.one_way_latency=0.5ms,1ms",
        "--param",
        "latency.latency_eval_time=30000",
        "--workers",
        "2",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    # Per file: latency RR at 2 x 2 points, round robin at the 2 points of the scenario key.
    assert "pathsel sweep: 12 point(s), 24 run(s) (24 run now, 0 already saved)" in text
    assert main(args + ["--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["ran"] == 0 and doc["reused"] == 24 and doc["rows"] == len(read_table(out)) and doc["skipped"] == {}
    assert main(["recommend", str(out), "--json", "--metric", "iops"]) == 0
    doc = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert doc["metrics"]["iops"]["spec"].startswith("latency")
    html = tmp_path / "rec.html"
    assert main(["recommend", str(out), "--html", str(html)]) == 0
    text = capsys.readouterr().out
    assert "recommended: latency [num_sampling_cycles=" in text and "worst-case regret" in text
    assert html.read_text().count("plotly") > 10


# -- bad input: one line, exit 2 -------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["sweep", str(TESTDRIVE), "--param", "latency.bogus=1"],
            "pathsel: error: command line: --param latency.bogus: latency has no parameter 'bogus'",
        ),
        (
            ["sweep", str(TESTDRIVE), "--param", "latency.num_sampling_cycles=8,16"],
            "pathsel: error: command line: --param latency.num_sampling_cycles: num_sampling_cycles must be in 16..2147483647, got 8",
        ),
        (
            ["sweep", str(TESTDRIVE), "--param", "latency.num_sampling_cycles=16,,32"],
            "pathsel: error: command line: --param latency.num_sampling_cycles: empty value",
        ),
        (["sweep", str(TESTDRIVE), "--param", "latency.num_sampling_cycles"], "pathsel: error: command line: --param"),
        (["sweep", str(TESTDRIVE), "--param", "rr.iops=1,1"], "value 1 is given twice"),
        (["sweep", str(TESTDRIVE), "--param", "replicaton.one_way_latency=1ms"], "the scenario has no replicaton"),
        (
            ["sweep", str(TESTDRIVE), "--param", "replication.one_way_latncy=1ms"],
            f"pathsel: error: {TESTDRIVE} with replication.one_way_latncy=1ms: replication.one_way_latncy: unknown key 'one_way_latncy'",
        ),
        (
            ["sweep", str(TESTDRIVE), "--param", "replication.one_way_latency=0ms"],
            f"pathsel: error: {TESTDRIVE} with replication.one_way_latency=0ms: replication.one_way_latency: must be > 0",
        ),
        (["sweep", str(TESTDRIVE), "--param", "workloads[3].iodepth=1"], "workloads has 1 entry, no [3]"),
        (["sweep", str(TESTDRIVE), "--param", "fixed.preferred=x"], "runs no fixed policy"),
        (["sweep", str(TESTDRIVE), "--param", "a..b=1"], "is not a parameter name"),
        (["sweep", "no-such-file.toml"], "pathsel: error: no-such-file.toml: no such file"),
        (["sweep", str(TESTDRIVE), "--out", "results.txt"], "pathsel: error: results.txt: results go to a .parquet or .csv file"),
        (["recommend", "no-such-results.parquet"], "pathsel: error: no-such-results.parquet: no such file"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(args: list[str], expected: str, capsys: pytest.CaptureFixture[str]):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert expected in err


def test_cli_option_errors_are_one_line_exit_2(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as e:
        main(["sweep", "--replications", "0"])
    assert e.value.code == 2
    assert capsys.readouterr().err == "pathsel: error: command line: argument --replications: must be >= 1\n"


@pytest.mark.parametrize(
    ("content", "name", "fragment"),
    [
        (b"not,a,sweep\n1,2,3\n", "x.csv", "not a pathsel sweep table (no column 'scenario')"),
        (b"\x00\x01garbage", "x.parquet", "cannot read"),
        (b"", "x.txt", "sweep results are a .parquet or .csv file"),
    ],
)
def test_recommend_unreadable_results(tmp_path: Path, content: bytes, name: str, fragment: str, capsys: pytest.CaptureFixture[str]):
    p = tmp_path / name
    p.write_bytes(content)
    assert main(["recommend", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"pathsel: error: {p}: ") and fragment in err


@pytest.fixture(scope="module")
def saved_sweep(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "r.csv"
    sweep(TESTDRIVE, {"latency.num_sampling_cycles": [16]}, out=out, executor="serial", **KW)
    return out


# issue 50: text in a number column of a saved table (a pandas ValueError on resume): the file, the row (1 = the
# first after the header) and the column; (column, the value written in row 2, the problem)
SPOILT = [
    ("kavg_us", "abc", "'abc' is not a number"),
    ("iops", "abc", "'abc' is not a number"),
    ("p99_us", "12 us", "'12 us' is not a number"),
    ("mean_us", "\u0663", "is not a number"),
    ("replication", "1.5", "'1.5' is not a whole number"),
    ("ios", "", "a blank is not a whole number"),
    ("failed", "x", "'x' is not a whole number"),
]


@pytest.mark.parametrize(("column", "value", "problem"), SPOILT, ids=[f"{c}={v}" for c, v, _ in SPOILT])
def test_resume_names_the_file_row_and_column_of_a_bad_number(column, value, problem, saved_sweep, tmp_path, capsys):
    table = pd.read_csv(saved_sweep, keep_default_na=False, na_values=[""]).astype({column: object})
    table.loc[1, column] = value
    out = tmp_path / "r.csv"
    table.to_csv(out, index=False)
    with pytest.raises(pathsel.ScenarioError) as info:
        sweep(TESTDRIVE, {"latency.num_sampling_cycles": [16]}, out=out, executor="serial", **KW)
    assert (info.value.source, info.value.place) == (str(out), f"row 2, column {column}")
    assert problem in info.value.problem and "\n" not in str(info.value)
    # what reads a saved table (recommend, league --table) names it alike
    assert main(["recommend", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"pathsel: error: {out}: row 2, column {column}: ") and problem in err, err


def test_recommend_says_what_convergence_counts_beside_simulates_recovery():
    """Issue 48: on a path that goes down and comes back, simulate prints "recovered in 1.000s" (from the down) and
    recommend 0.000 s (from the last fault, the return): the convergence ranking says which it is."""
    from pathsel.studies.recommend import CONVERGENCE_MEANS

    sc = Path(pathsel.__file__).parent / "data" / "examples" / "fast-failover.toml"
    res = pathsel.sweep(str(sc), replications=1, executor="serial")
    assert res.table.convergence_s.notna().all()
    text = res.recommend().text()
    section = text[text.index("== convergence time after faults") :]
    for line in CONVERGENCE_MEANS.splitlines():
        assert line in section
    assert "from the condition's last fault" in section and "not simulate's recovery" in section
