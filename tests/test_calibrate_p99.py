"""Calibration keeps fio's per-op percentiles: a one-job randrw fio JSON gives read's and write's p50 and p99.

fio's JSON (stat.c, add_ddir_lat_json) gives each op of each job its own ``clat_ns.percentile`` table
(``"50.000000"``, ``"99.000000"``). One job's read and write tables cannot be merged into one p99 of both (that
needs json+'s bins), and pathsel used to drop the p99 altogether; now each op keeps its own p50 and p99, and
calibration compares them with the simulated run's figures of that op.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import pathsel
from pathsel.measured import read_measurements
from pathsel.measured.fio import fio_measurement
from pathsel.studies.calibrate import Target, _sim_value, targets_from

from .conftest import ROOT

SAMPLES = ROOT / "tests" / "data" / "import"


def _randrw() -> dict:
    """tests/data/import/fio-randwrite.json made a one-job randrw (70 % reads), as fio writes it."""
    doc = json.loads((SAMPLES / "fio-randwrite.json").read_text())
    job = doc["jobs"][0]
    job["job options"].update(rw="randrw", rwmixread="70")
    read = copy.deepcopy(job["write"])
    read.update(iops=31852.2, total_ios=933333)
    read["clat_ns"]["mean"] = 812345.6
    read["clat_ns"]["percentile"] = {k: v // 3 for k, v in read["clat_ns"]["percentile"].items()}
    job["read"] = read
    return doc


def test_a_one_job_randrw_keeps_each_ops_p50_and_p99():
    doc = _randrw()
    m = fio_measurement(doc, "rw.json")
    pct = {op: doc["jobs"][0][op]["clat_ns"]["percentile"] for op in ("read", "write")}
    for op in ("read", "write"):
        assert m.get("p99", op=op).value == pytest.approx(pct[op]["99.000000"] * 1e-9)
        assert m.get("p50", op=op).value == pytest.approx(pct[op]["50.000000"] * 1e-9)
        assert m.get("p99", op=op).where == f"{op} clat percentile 99.000000"
    assert m.get("p99") is None  # read and write together: no table gives it
    assert m.get("iops").value == pytest.approx(31852.2 + doc["jobs"][0]["write"]["iops"])
    assert any("kept per op" in n for n in m.notes)
    assert "p99 read 1.130 ms" in m.describe() and "p99 write 3.391 ms" in m.describe()


def test_the_per_op_figures_become_per_op_targets(tmp_path: Path):
    path = tmp_path / "fio-randrw.json"
    path.write_text(json.dumps(_randrw(), indent=2))
    (m,) = read_measurements(path)
    sc = pathsel.load_scenario(ROOT / "sims" / "esxi-latency-testdrive.toml")
    targets, notes = targets_from(sc, [m], None)
    named = {t.name for t in targets}
    run = sc.runs[0].label
    assert {f"{run}: p99 read", f"{run}: p99 write", f"{run}: p50 read", f"{run}: p50 write", f"{run}: IOPS", f"{run}: mean"} == named
    assert any("kept per op" in n for n in notes)
    p99_noise = next(t.noise for t in targets if t.metric == "p99")
    assert p99_noise == pytest.approx(0.10)


def test_a_per_op_target_compares_that_ops_simulated_figure():
    result = pathsel.simulate(ROOT / "sims" / "esxi-latency-testdrive.toml", policies=["rr:iops=1"], duration=0.05)
    run = result.runs[0]
    ops = {o["op"]: o for o in run.ops()}
    for op, row in ops.items():
        for metric in ("p50", "p99"):
            got = _sim_value(run, Target(run.label, metric, 1e-3, 0.1, op=op))
            assert got == pytest.approx(row["latency_us"][metric] * 1e-6)


def test_one_job_one_op_keeps_p50_and_p99_as_before():
    doc = json.loads((SAMPLES / "fio-randwrite.json").read_text())
    m = fio_measurement(doc, "w.json")
    pct = doc["jobs"][0]["write"]["clat_ns"]["percentile"]
    assert m.get("p99").value == pytest.approx(pct["99.000000"] * 1e-9)
    assert m.get("p50").value == pytest.approx(pct["50.000000"] * 1e-9)
    assert m.get("p99").op is None and not m.notes


def test_json_plus_bins_give_p50_and_p99():
    (m,) = read_measurements(SAMPLES / "fio-randwrite-plus.json")
    assert m.get("p50").where == "clat bins" and m.get("p99").where == "clat bins"
    assert m.get("p50").value < m.get("p99").value


def test_two_jobs_without_bins_still_leave_p99_out_and_say_why():
    doc = json.loads((SAMPLES / "fio-randwrite.json").read_text())
    doc["jobs"].append(copy.deepcopy(doc["jobs"][0]))
    m = fio_measurement(doc, "two.json")
    assert m.get("p99") is None and m.get("p99", op="write") is None
    assert m.notes == (
        "p50 and p99 of several jobs with write I/Os left out: percentile tables without json+ bins cannot be merged (--group_reporting or json+)",
    )


def test_a_table_without_p50_keeps_its_p99():
    doc = _randrw()
    for op in ("read", "write"):
        del doc["jobs"][0][op]["clat_ns"]["percentile"]["50.000000"]
    m = fio_measurement(doc, "rw.json")
    assert m.get("p50", op="read") is None and m.get("p99", op="read") is not None
