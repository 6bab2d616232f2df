"""Labels that don't mislead (issue 36): each case here would fail on the old wording.

* the default scenario's header names its source ("Hosterman 2018"), not "seed 004" beside ``seed=4``;
* ``pathsel league``'s columns say they hold regrets, and the table defines regret and mean recovery;
* ``pathsel recommend`` names no worst condition where every regret is 0;
* a sweep's table keeps esxtop's KAVG where host queues are modelled (the README's "KAVG per policy");
* the results table shows MiB/s beside MB/s, as fio does (``BW=14.0MiB/s (14.7MB/s)``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

import pathsel
from pathsel.cli import main
from pathsel.results.bandwidth import BW_HEAD, fio_bw, mib_s
from pathsel.studies.league import League, legend, standings
from pathsel.studies.recommend import format_recommendation, recommend

ROOT = Path(__file__).resolve().parent.parent
SIMS = ROOT / "pathsel" / "data" / "examples"


# -- "seed 004" is not the random seed ----------------------------------------------------------------------


def test_the_default_header_does_not_say_seed_twice():
    res = pathsel.simulate(duration="0.05s")
    head = res.table().splitlines()[:2]
    assert head[0] == "ESXi latency round robin test drive (Hosterman 2018)"
    assert "seed=4" in head[1]
    assert sum(line.count("seed") for line in head) == 1  # only the random seed says "seed"


@pytest.mark.parametrize(
    "path",
    [
        "pathsel/cli/entry.py",
        "pathsel/cli/run.py",
        "pathsel/cli/validation.py",
        "pathsel/cli/listings.py",
        "pathsel/cli/watch.py",
        "pathsel/cli/studies.py",
        "pathsel/cli/systems.py",
        "pathsel/api.py",
        "pathsel/scenario/load.py",
        "pathsel/data/__init__.py",
        "pathsel/studies/calibrate.py",
        "pathsel/data/examples/esxi-latency-testdrive.toml",
        "pathsel/data/examples/latency-step-latency-rr.toml",
        "pathsel/data/examples/library/seed-esxi-latency-testdrive.toml",
        "pathsel/data/examples/validation/seed004-testdrive.toml",
        "README.md",
        "docs/getting-started.md",
        "docs/cli.md",
        "docs/validation.md",
        "docs/model.md",
        "docs/policies.md",
    ],
)
def test_no_seed_004_in_what_users_read(path: str):
    text = (ROOT / path).read_text(encoding="utf-8")
    # File names (seed004-testdrive.toml, 02-seed-004-test-drive.ipynb) keep their names; the words go.
    words = re.sub(r"seed004-[\w-]+|seed-004-[\w-]+", "", text)
    if path.endswith("esxi-latency-testdrive.toml"):  # its header says where the source is listed, once
        words = words.replace('listed as "seed 004" in docs/sources.md', "")
    assert "seed 004" not in words.lower()


def test_expected_figures_name_their_source():
    res = pathsel.simulate(duration="0.05s")
    assert [r.expect_source for r in res.runs] == [
        "Hosterman 2018: RR, all paths used equally",
        "Hosterman 2018: local paths AO, remote ANO",
        "Hosterman 2018: latency RR after convergence",
    ]


# -- league: regret columns, defined under the table ---------------------------------------------------------


def _league_table() -> pd.DataFrame:
    rows = []
    for scenario, figures in {
        "gray-a": {"a": (100.0, 1000.0, 2.0), "b": (80.0, 1500.0, math.nan)},
        "metro-b": {"a": (50.0, 2000.0, math.nan), "b": (50.0, 2000.0, math.nan)},
    }.items():
        for policy, (iops, p99, conv) in figures.items():
            rows.append(
                {
                    "scenario": scenario,
                    "point": "defaults",
                    "replication": 0,
                    "seed": 1,
                    "policy": policy,
                    "spec": policy,
                    "iops": iops,
                    "p99_us": p99,
                    "p999_us": p99,
                    "convergence_s": conv,
                    "failed": 0,
                }
            )
    return pd.DataFrame(rows)


def _league() -> League:
    table = _league_table()
    scores, st = standings(table)
    return League(table=table, scores=scores, standings=st)


@pytest.mark.parametrize(
    "old, new",
    [
        ("mean IOPS  ", "mean IOPS regret"),
        ("mean p99  ", "mean p99 regret"),
        ("failed  ", "failed I/Os"),
    ],
)
def test_league_columns_say_what_they_hold(old: str, new: str):
    head = _league().text().splitlines()[2]
    assert new in head
    assert old not in head


def test_league_defines_regret_and_recovery_under_the_table():
    text = _league().text()
    assert "regret: how much worse than the best policy in that scenario, in %" in text
    assert "(best IOPS - its IOPS) / best IOPS" in text and "its p99 / best p99 - 1" in text
    assert "worst = the largest over the 2 scenario(s)" in text
    assert "mean recovery: seconds from the last fault until\n  IOPS is back within 10 % of its level before the first" in text
    # the definitions come after the rows and before the worst cases
    assert text.index("regret: how much") > text.index(" 2  ") and text.index("regret: how much") < text.index("worst cases")
    md = _league().markdown()
    assert md.endswith("\n".join(legend(2)) + "\n")


def test_league_figures_are_the_regrets_the_legend_defines():
    st = _league().standings.set_index("policy")
    assert st.loc["b", "worst_iops_regret"] == pytest.approx(0.2)  # (100 - 80) / 100
    assert st.loc["b", "worst_p99_regret"] == pytest.approx(0.5)  # 1500 / 1000 - 1
    assert st.loc["a", "mean_recovery_s"] == pytest.approx(2.0)


# -- recommend: no "worst condition" when every regret is 0 --------------------------------------------------


def _sweep_table(values: dict[tuple[str, int], float]) -> pd.DataFrame:
    """A sweep table over latency.latency_eval_time in conditions (scenario names): values[(scenario, setting)] = IOPS."""
    rows = []
    for (scenario, setting), iops in values.items():
        for rep in range(2):
            rows.append(
                {
                    "scenario": scenario,
                    "point": f"latency.latency_eval_time={setting}",
                    "latency.latency_eval_time": setting,
                    "replication": rep,
                    "seed": rep,
                    "policy": f"latency:latency_eval_time={setting}",
                    "spec": f"latency:latency_eval_time={setting}",
                    "iops": iops + rep,
                    "p99_us": 1000.0,
                }
            )
    return pd.DataFrame(rows)


def test_recommend_says_no_condition_separates_equal_settings():
    t = _sweep_table({("a", 30000): 100.0, ("a", 180000): 100.0, ("b", 30000): 50.0, ("b", 180000): 50.0})
    text = format_recommendation(recommend(t, metrics=["iops"]))
    assert "no condition separates the settings: all 2 score the same in each of the 2 condition(s)" in text
    assert "(in a)" not in text  # the old "worst-case regret 0.00 % (in a)"
    assert "worst condition" not in text
    assert "- (best in every condition)" in text
    assert "and 1 more (tied)" in text


def test_recommend_names_the_worst_condition_only_where_there_is_one():
    t = _sweep_table({("a", 30000): 100.0, ("a", 180000): 90.0, ("b", 30000): 50.0, ("b", 180000): 50.0})
    text = format_recommendation(recommend(t, metrics=["iops"]))
    assert "worst-case regret 0.00 %: the best, or tied for it, in every condition" in text
    rows = {line.split()[0]: line for line in text.splitlines() if re.match(r"\s+[12] ", line)}
    assert rows["1"].rstrip().endswith("- (best in every condition)")
    assert rows["2"].rstrip().endswith(" a")  # 180000 is 10 % behind in a: that is its worst condition
    assert "regret: how much worse than the best setting in that condition, in % of the best" in text
    assert "worst = the largest over the 2 condition(s), mean = their mean" in text


# -- sweep: KAVG per policy ------------------------------------------------------------------------------------


def test_sweep_keeps_kavg_where_host_queues_are_modelled(capsys: pytest.CaptureFixture[str]):
    assert main(["sweep", str(SIMS / "nvme-io-queues.toml"), "--param", "hosts[*].nvme_io_queues=2", "--serial", "-q"]) == 0
    out = capsys.readouterr().out
    head, *rows = out.splitlines()
    assert "KAVG (ms)" in head.split("  ") or "KAVG (ms)" in head
    numa = next(r for r in rows if "nvme:numa" in r)
    assert float(numa.split()[-1]) > 1.0  # 62 tags for 384 I/Os: most of the latency is queued in the host


def test_sweep_table_kavg_is_empty_without_host_queues():
    res = pathsel.sweep(str(SIMS / "esxi-latency-testdrive.toml"), replications=1, duration="0.05s", executor="serial")
    assert "kavg_us" in res.table.columns and res.table.kavg_us.isna().all()
    res = pathsel.sweep(str(SIMS / "nvme-io-queues.toml"), {"hosts[*].nvme_io_queues": [2]}, replications=1, executor="serial")
    assert res.table.kavg_us.notna().all() and (res.table.kavg_us > 0).all()


# -- MiB/s beside MB/s -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mbps, shown",
    [
        (14.68, "14.0 (14.7)"),  # fio: BW=14.0MiB/s (14.7MB/s)
        (47.0, "44.8 (47.0)"),  # fio: BW=44.8MiB/s (47.0MB/s)
        (534.0, "509 (534)"),
        (240.1, "229 (240)"),
        (7567.7, "7,217 (7,568)"),
        (0.0, "0 (0)"),
        (math.nan, "–"),
    ],
)
def test_bandwidth_reads_as_fio_prints_it(mbps: float, shown: str):
    assert fio_bw(mbps) == shown


def test_mib_is_binary():
    assert mib_s(1.048576) == pytest.approx(1.0)


def test_results_table_and_report_show_mib_beside_mb(tmp_path: Path):
    res = pathsel.simulate(duration="0.05s")
    lines = res.table().splitlines()
    head = next(line for line in lines if line.startswith("policy"))
    assert BW_HEAD in head and " MB/s " not in head
    row = lines[lines.index(head) + 2]
    r0 = res.runs[0]
    assert fio_bw(r0.mbps) in row
    assert BW_HEAD in res.breakdown_table("op")
    from pathsel.results.report import write

    html = write(res, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "MiB/s (MB/s)" in html and fio_bw(r0.mbps) in html
