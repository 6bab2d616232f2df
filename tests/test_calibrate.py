"""pathsel calibrate: fitting a scenario's unknowns to measured figures.

The recovery tests measure a scenario pathsel made itself with known
parameters (on other seeds than the fit's), start the fit from wrong
values and check that it finds the known ones again, within 10 %.
"""

from __future__ import annotations

import json
import tomllib

import pytest

import pathsel
from pathsel.cli import main
from pathsel.errors import ScenarioError
from pathsel.studies.calibrate import calibrate
from pathsel.studies.unknowns import parse_unknown, patch_text, scale_delay

from .conftest import ROOT

TRUTH = """
name = "calibration check"
seed = 11
duration = "1s"

[[arrays]]
name = "local"
service_time = { dist = "exponential", mean = "SERVICE" }

[[arrays]]
name = "remote"
service_time = { dist = "exponential", mean = "SERVICE" }

[[paths]]
name = "l{i}"
count = 2
array = "local"
one_way_latency = "LOCAL"

[[paths]]
name = "r{i}"
count = 2
array = "remote"
one_way_latency = "REMOTE"

[[workloads]]
rw = "randread"
bs = "4k"
iodepth = 16

[[policies]]
spec = "rr:iops=1"
"""

TOLERANCE = 0.10  # the fit recovers a known value within this relative error


def _scenario(tmp_path, name: str, service: str, local: str, remote: str):
    path = tmp_path / name
    path.write_text(TRUTH.replace("SERVICE", service).replace("LOCAL", local).replace("REMOTE", remote))
    return path


def _measure(tmp_path, truth) -> str:
    res = pathsel.simulate(truth, duration=2.0, seed=99)  # other seeds than the fit's
    out = tmp_path / "measured.json"
    out.write_text(res.to_json())
    return str(out)


def test_recovers_a_known_service_time(tmp_path):
    measured = _measure(tmp_path, _scenario(tmp_path, "truth.toml", "300us", "80us", "600us"))
    start = _scenario(tmp_path, "start.toml", "100us", "80us", "600us")
    cal = calibrate(start, ["service_time"], [measured], duration=0.5)
    (fitted,) = cal.fitted
    assert fitted == pytest.approx(300e-6, rel=TOLERANCE)
    low, high = cal.ranges[0]
    assert low < 300e-6 < high
    assert all(cal.within(i) for i in range(len(cal.targets)))
    text = cal.report()
    assert "service_time" in text and "within noise" in text


def test_recovers_two_path_latencies_from_per_path_figures(tmp_path):
    measured = _measure(tmp_path, _scenario(tmp_path, "truth.toml", "200us", "80us", "600us"))
    start = _scenario(tmp_path, "start.toml", "200us", "50us", "50us")
    cal = calibrate(start, ["one_way_latency@local", "one_way_latency@remote"], [measured], duration=0.5)
    local, remote = cal.fitted
    assert local == pytest.approx(80e-6, rel=TOLERANCE)
    assert remote == pytest.approx(600e-6, rel=TOLERANCE)
    assert any(t.path == "r0" for t in cal.targets)
    sc = cal.scenario()  # the calibrated text loads, with the fitted values in it
    assert sc.model.paths[1].one_way_latency.mean == pytest.approx(remote, rel=1e-4)


def test_recovers_the_sites_replication_latency_from_its_fio_run(tmp_path):
    # sims/site: esxcli listings and a fio json+ file that make_site_captures.py wrote from a simulation with
    # replication 0.4 ms; imported, with the site's other figures written in, the fit must find 0.4 ms again
    site = ROOT / "sims" / "site"
    imp = pathsel.import_outputs("esxcli", [site / "esxcli-nmp-device-list.txt", site / "esxcli-core-path-list.txt"], workload=site / "fio-vm1.json")
    text = (
        imp.text.replace('one_way_latency = "50us"', 'one_way_latency = "60us"')
        .replace('mean = "100us"', 'mean = "150us"')
        .replace('# bandwidth = "16Gbit"', 'bandwidth = "8Gbit"')
    )
    start = tmp_path / "site.toml"
    start.write_text(text)
    cal = calibrate(start, ["replication_latency=0.1ms..2ms"], [site / "fio-vm1.json"], duration=1.0, replications=1)
    assert cal.fitted[0] == pytest.approx(0.4e-3, rel=0.02)
    assert all(cal.within(i) for i in range(len(cal.targets)))


def test_seed_004_remote_latency_closes_the_round_robin_gap():
    cal = calibrate(None, ["one_way_latency@remote"], duration=1.0, replications=1, confidence_seeds=2)
    by_run = {t.run: i for i, t in enumerate(cal.targets)}
    rr_all = by_run["RR iops=1, all paths AO"]
    assert abs(cal.residuals[rr_all]) < abs(cal.start_sim[rr_all] / 8500 - 1)
    assert cal.fitted[0] < 1e-3  # the remote paths must be faster than the file's 1 ms to give 8,500 IOPS


def test_cli_writes_the_calibrated_scenario(tmp_path, capsys):
    measured = _measure(tmp_path, _scenario(tmp_path, "truth.toml", "300us", "80us", "600us"))
    start = _scenario(tmp_path, "start.toml", "100us", "80us", "600us")
    out = tmp_path / "calibrated.toml"
    assert (
        main(
            [
                "calibrate",
                str(start),
                "--measured",
                measured,
                "--fit",
                "service_time=20us..2ms",
                "--duration",
                "0.5",
                "--replications",
                "1",
                "-o",
                str(out),
                "--json",
                "-q",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    (u,) = doc["unknowns"]
    assert (u["low"], u["high"]) == pytest.approx((20e-6, 2e-3))
    data = tomllib.loads(out.read_text())
    assert data["arrays"][0]["service_time"]["mean"] == f"{u['fitted'] * 1e6:.6g}us"
    assert "calibrated (service_time:" in out.read_text()
    assert pathsel.load_scenario(out).runs


@pytest.mark.parametrize(
    ("fit", "fragment"),
    [
        ("servce_time", "unknown 'servce_time' (did you mean 'service_time'?"),
        ("service_time@middle", "no arrays entry 'middle'"),
        ("one_way_latency@vmhba1:C0:T1:L1", "names 5 paths (count = 5): give vmhba1:C0:T1:L1 its own [[paths]] entry"),
        ("replication_latency@local", "replication_latency takes no @"),
        ("service_time=2ms..1ms", "the range must be 0 < LOW < HIGH"),
    ],
)
def test_bad_unknowns_get_one_line(fit, fragment):
    data = tomllib.loads((ROOT / "sims" / "esxi-latency-testdrive.toml").read_text())
    with pytest.raises(ScenarioError) as info:
        parse_unknown(fit, data, "testdrive.toml")
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_nothing_to_fit_to(tmp_path):
    start = _scenario(tmp_path, "start.toml", "100us", "80us", "600us")
    with pytest.raises(ScenarioError, match="nothing to fit to"):
        calibrate(start, ["service_time"])


def test_scaling_keeps_the_shape():
    assert scale_delay("50us", 2) == "100us"
    assert scale_delay({"dist": "lognormal", "median": "1ms", "p99": "3ms"}, 0.5) == {"dist": "lognormal", "median": "500us", "p99": "1500us"}
    assert scale_delay({"read": "80us", "write": {"dist": "exponential", "mean": "150us"}}, 2) == {
        "read": "160us",
        "write": {"dist": "exponential", "mean": "300us"},
    }
    assert scale_delay({"dist": "empirical", "file": "x.txt", "scale": 0.5}, 3)["scale"] == 1.5


def test_patch_keeps_comments_and_adds_missing_keys():
    text = '# mine\n[[arrays]]\nname = "a"  # first\n\n[[arrays]]\nname = "b"\nconcurrency = 8  # old\n\n[replication]\none_way_latency = "1ms"\n'
    out = patch_text(
        text,
        [
            ("arrays", 0, "concurrency", 16, "fitted"),
            ("arrays", 1, "concurrency", 32, "fitted"),
            ("replication", None, "one_way_latency", "2ms", "fitted"),
        ],
    )
    data = tomllib.loads(out)
    assert [a["concurrency"] for a in data["arrays"]] == [16, 32] and data["replication"]["one_way_latency"] == "2ms"
    assert out.startswith("# mine\n") and "# first" in out and "# old" not in out


def test_recovers_a_known_concurrency(tmp_path):
    def with_concurrency(name: str, n: int):
        path = _scenario(tmp_path, name, "300us", "80us", "600us")
        path.write_text(
            path.read_text()
            .replace('name = "local"\n', f'name = "local"\nconcurrency = {n}\n')
            .replace('name = "remote"\n', f'name = "remote"\nconcurrency = {n}\n')
        )
        return path

    measured = _measure(tmp_path, with_concurrency("truth.toml", 3))
    cal = calibrate(with_concurrency("start.toml", 64), ["concurrency"], [measured], duration=0.5)
    assert cal.fitted == [3.0]
    assert cal.unknowns[0].show(cal.fitted[0]) == "3"
