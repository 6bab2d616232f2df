"""Per host, per device and per op: the split adds up to the run, in Python, JSON, the CLI and the report."""

from __future__ import annotations

import json

import pytest

import pathsel
from pathsel.cli import main
from pathsel.results import report

from .test_story import TWO_HOSTS

VOLUMES = """
name = "two volumes"
seed = 3
duration = "300ms"
policies = ["rr:iops=1", "latency"]

[[arrays]]
name = "a"

[[volumes]]
name = "db"
lun = 1

[[volumes]]
name = "logs"
lun = 2

[[hosts]]
name = "esx1"

[[paths]]
name = "vmhba1:C0:T{i}:L{lun}"
count = 2
array = "a"
one_way_latency = "50us"

[[workloads]]
name = "oltp"
volume = "db"
rw = "randrw"
iodepth = 8

[[workloads]]
name = "redo"
volume = "logs"
rw = "write"
bs = "64k"
iodepth = 2
"""


@pytest.fixture(scope="module")
def two_hosts() -> pathsel.Result:
    return pathsel.simulate(pathsel.loads_scenario(TWO_HOSTS, "two hosts"))


@pytest.fixture(scope="module")
def volumes() -> pathsel.Result:
    return pathsel.simulate(pathsel.loads_scenario(VOLUMES, "two volumes"))


def test_hosts_add_up_to_the_run_and_to_their_paths(two_hosts):
    hosts, paths = two_hosts.hosts(), two_hosts.paths()
    assert list(hosts.columns[:2]) == ["policy", "host"]
    for r in two_hosts.runs:
        mine = hosts[hosts.policy == r.label]
        assert list(mine.host) == ["esx1", "esx2"]
        assert mine.ios.sum() == r.ios and mine.iops.sum() == pytest.approx(r.iops)
        assert mine.mbps.sum() == pytest.approx(r.mbps)
        for row in mine.itertuples():
            on = paths[(paths.policy == r.label) & (paths.host == row.host)]
            assert row.ios == on.ios.sum() > 0 and row.paths == len(on)
            # the mean over the host's paths, weighted by their I/Os; in flight adds up
            assert row.mean_us == pytest.approx((on.mean_us * on.ios).sum() / on.ios.sum(), rel=1e-9)
            assert row.in_flight_mean == pytest.approx(on.in_flight_mean.sum())
            assert row.p50_us <= row.p99_us <= row.p999_us <= row.max_us
    # esx2 reads 4 KiB at a time: its MB/s is what its I/Os carried
    esx2 = hosts[(hosts.policy == "rr:iops=1") & (hosts.host == "esx2")].iloc[0]
    assert esx2.mbps == pytest.approx(esx2.iops * 4096 / 1e6)


def test_devices_split_a_host_by_volume(volumes):
    devices = volumes.devices()
    for r in volumes.runs:
        mine = devices[devices.policy == r.label]
        assert list(mine.device) == ["esx1/db", "esx1/logs"] and list(mine.volume) == ["db", "logs"]
        assert mine.ios.sum() == r.ios
        # the redo log writes 64 KiB only
        logs = mine[mine.volume == "logs"].iloc[0]
        assert logs.mbps == pytest.approx(logs.iops * 65536 / 1e6)
    assert list(volumes.hosts().host.unique()) == ["esx1"]


def test_json_has_hosts_and_devices_per_run(two_hosts):
    doc = json.loads(two_hosts.to_json())
    for run, r in zip(doc["runs"], two_hosts.runs):
        assert [h["host"] for h in run["hosts"]] == ["esx1", "esx2"]
        assert sum(h["ios"] for h in run["hosts"]) == r.ios
        assert [d["device"] for d in run["devices"]] == ["esx1", "esx2"]
        assert set(run["hosts"][0]["latency_us"]) == {"mean", "p50", "p99", "p999", "max"}


def test_cli_by_host_device_and_op(capsys, tmp_path):
    scenario = tmp_path / "volumes.toml"
    scenario.write_text(VOLUMES, encoding="utf-8")
    code = main(["simulate", str(scenario), "-q", "--by", "device", "--by", "op", "--by", "host"])
    out = capsys.readouterr().out
    assert code == 0
    order = [out.index(s) for s in ("what happened:", "per device:", "per op", "per host")]
    assert order == sorted(order)
    device = out[out.index("per device:") : out.index("per op")]
    assert "esx1/db" in device and "esx1/logs" in device
    op = out[out.index("per op") : out.index("per host")]
    assert len([line for line in op.splitlines() if " write " in f" {line} "]) == 2  # one per policy
    with pytest.raises(SystemExit) as e:
        main(["simulate", "-q", "--by", "array"])
    assert e.value.code == 2
    assert "invalid choice: 'array'" in capsys.readouterr().err


def test_events_and_the_report_name_the_host(two_hosts):
    events = two_hosts.events()
    downs = events[events.event == "path_down"]
    assert set(downs.host) == {"esx1"}
    assert set(events[events.event == "fault"].host) == {""}
    html = report.render(two_hosts, figures=[])
    assert 'id="breakdowns"' in html and "<h3>Per host</h3>" in html and "<h3>Per device</h3>" not in html
    events_html = html[html.index('id="events"') :]
    assert "<th>host</th>" in events_html and "<td>esx1</td>" in events_html
    assert "Per host: esx1 " in " ".join(dict(two_hosts.story())["latency"])


def test_a_single_host_report_has_no_breakdown_section():
    res = pathsel.simulate(policies=["rr:iops=1"], duration=0.2)
    assert 'id="breakdowns"' not in report.render(res, figures=[])
