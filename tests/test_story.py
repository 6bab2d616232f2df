"""What happened, in words: every number a sentence gives is the result's own."""

from __future__ import annotations

import json

import pytest

import pathsel
from pathsel.cli import main
from pathsel.results import report
from pathsel.results.story import fmt_change, fmt_time, story, text

from .conftest import SIMS

LATENCY = "latency RR, all paths AO"
RR_ALL = "RR iops=1, all paths AO"
RR_PREF = "RR iops=1, preferred array"


@pytest.fixture(scope="module")
def testdrive() -> pathsel.Result:
    return pathsel.simulate(SIMS / "esxi-latency-testdrive.toml", duration=2.0)


@pytest.fixture(scope="module")
def failover() -> pathsel.Result:
    return pathsel.simulate(SIMS / "fast-failover.toml")


def said(result: pathsel.Result, label: str | None) -> str:
    return " ".join(dict(story(result))[label])


def test_formats():
    assert [fmt_time(t) for t in (0.0, 0.0489453, 0.5, 1.0, 2.02, 11.0)] == ["0 s", "48.9 ms", "500 ms", "1 s", "2.02 s", "11 s"]
    assert [fmt_change(x) for x in (0.8437, -0.4612, 0.0012, -0.0004)] == ["+84 %", "-46 %", "+0.1 %", "-0.0 %"]


def test_latency_rr_says_when_it_dropped_which_paths_and_what_that_bought(testdrive):
    lat, rr, pref = testdrive[LATENCY], testdrive[RR_ALL], testdrive[RR_PREF]
    first = next(e for e in lat.metrics.events if e["event"] == "evaluation")
    s = said(testdrive, LATENCY)
    # the evaluation's time and verdict, from its event
    assert f"At {fmt_time(first['t'])} it evaluated the paths" in s
    assert len(first["dropped"]) == 10 and all(int(n.split(":T")[1].split(":")[0]) >= 5 for n in first["dropped"])
    assert "dropped the 10 remote paths and kept the 10 local paths" in s
    # the latencies it measured, per array, as ranges
    local = [v for k, v in first["latency_us"].items() if int(k.split(":T")[1].split(":")[0]) < 5]
    remote = [v for k, v in first["latency_us"].items() if int(k.split(":T")[1].split(":")[0]) >= 5]
    assert f"local {min(local) / 1e3:.3g}-{max(local) / 1e3:.3g} ms" in s
    assert f"remote {min(remote) / 1e3:.3g}-{max(remote) / 1e3:.3g} ms" in s
    # what that bought, against the others, from their IOPS
    gain = lat.iops / rr.iops - 1
    assert gain > 0.5
    assert f"{gain * 100:.0f} % more IOPS than {RR_ALL}" in s
    assert f"the same IOPS as {RR_PREF} ({fmt_change(lat.iops / pref.iops - 1)})" in s
    assert s.startswith(f"{lat.iops:,.0f} IOPS at {lat.latency_us['mean'] / 1e3:.3g} ms mean")
    assert f"from the measured {lat.expect_iops:,.0f} IOPS" in s and "within its ±15 % tolerance" in s
    # RR on all paths: fewer IOPS, over every path; no fault, no retry: no such sentence
    s_rr = said(testdrive, RR_ALL)
    assert f"on all 20 paths; {(1 - rr.iops / lat.iops) * 100:.0f} % fewer IOPS than {LATENCY}" in s_rr
    assert "retried" not in s_rr and "went down" not in s_rr and "evaluated" not in s_rr
    assert "on the 10 local paths" in said(testdrive, RR_PREF)
    best = max(testdrive.runs, key=lambda r: r.iops)
    overview = dict(story(testdrive))[None]
    assert overview[0].startswith("This scenario is about distance (paths to local 50 us, to remote ")
    assert overview[1].startswith(f"Most IOPS: {best.label} ({best.iops:,.0f})")


def test_a_path_failure_is_told_with_detection_recovery_and_retries(failover):
    mru, rr = failover["active/passive (MRU)"], failover["round robin"]
    for r, share in ((mru, 1.0), (rr, 0.5)):
        fault = r.faults()[0]
        noticed = next(e for e in r.metrics.events if e["event"] == "path_down")
        assert noticed["t"] == pytest.approx(2.02)
        s = said(failover, r.label)
        assert (f"At 2 s nvme0c0n1 went down; the host noticed at {fmt_time(noticed['t'])}, after its 20 ms detection delay") in s
        # the share it had on the dead path the interval before, from the time series
        b = int(2.0 / r.metrics.interval) - 1
        measured = r.metrics.ts_path_ios[b, 0] / r.metrics.ts_ios[b]
        assert measured == pytest.approx(share, abs=0.05)
        assert f"this policy had {measured * 100:.0f} % of its I/Os there" in s
        assert f"IOPS was back within 5 % of its earlier level {fmt_time(fault['recovery_s'])} after the fault" in s
        assert f"no VM froze: the longest I/O outstanding during it took {fault['max_stall_ms']:.3g} ms" in s
        retried = r.accounting["retried"]
        assert retried > 0 and f"Over the whole run {retried} I/Os were retried and none failed." in s


def test_failed_ios_and_a_fault_never_noticed_are_said():
    base = (SIMS / "fast-failover.toml").read_text(encoding="utf-8")
    # both paths die; the host notices after 20 ms and fails what has waited 100 ms for a path
    text_ = base.replace('detection = "20ms"', 'detection = "20ms"\napd_timeout = "100ms"') + (
        '\n[[faults]]\nat = "2s"\nwhat = "path_down"\npath = "nvme0c1n1"\n'
    )
    res = pathsel.simulate(pathsel.loads_scenario(text_, "all paths down"), policies=["rr:iops=1"], duration=2.5)
    r = res.runs[0]
    assert r.accounting["failed"] > 0
    s = said(res, r.label)
    # the frozen VM first, then the cause (issue 48)
    assert "At 2 s VM job froze for up to " in s
    assert (
        f"held on the lost paths until the host noticed (20 ms later, its detection delay); {r.accounting['failed']} failed after waiting 100 ms for a usable path (the APD timeout). The cause: both paths went down"
        in s
    )
    assert f"{r.accounting['failed']:,} I/Os failed." in s
    assert f"{r.faults()[0]['errors']:,} I/Os failed" in s
    assert "IOPS stayed more than 5 % below its earlier level to the end of the run" in s
    # a 50 ms outage the host (5 s detection) never sees
    quick = base.replace('detection = "20ms"', 'detection = "5s"') + ('\n[[faults]]\nat = "2050ms"\nwhat = "path_up"\npath = "nvme0c0n1"\n')
    res = pathsel.simulate(pathsel.loads_scenario(quick, "blip"), policies=["rr:iops=1"], duration=3.0)
    s = said(res, "rr:iops=1")
    # the I/Os on the lost path wait for a detection that comes after the run's end: the VM froze (issue 48)
    assert "At 2 s VM job froze for up to 1.001 s: 16 of its I/Os took 100 ms or more (16 still waiting when the run ended)" in s
    assert "The cause: nvme0c0n1 went down; the host never noticed (detection delay 5 s)" in s
    assert "At 2.05 s nvme0c0n1 came back; the host never noticed (detection delay 5 s); no VM froze." in s


def test_two_hosts_name_the_host_of_each_path():
    sc = pathsel.loads_scenario(TWO_HOSTS, "two hosts")
    res = pathsel.simulate(sc)
    s = said(res, "latency")
    assert "On esx1, at " in s and "On esx2, at " in s
    assert "At 500 ms esx1's VM a froze for up to 100 ms" in s and "The cause: vmhba1:C0:T0:L1 on esx1 went down" in s


def test_story_is_in_the_table_output_the_report_and_the_json(testdrive, capsys, testdrive_path):
    code = main(["simulate", str(testdrive_path), "--duration", "0.5", "-q"])
    out = capsys.readouterr().out
    assert code == 0
    table, _, words = out.partition("what happened:\n")
    assert "IOPS" in table and words
    assert "dropped the 10 remote paths and kept the 10 local paths" in " ".join(words.split())
    # wrapped at 100 columns, a number never parted from its unit
    assert all(len(line) <= 100 for line in words.splitlines())
    lines = words.splitlines()
    assert not any(a[-1].isdigit() and b.lstrip().startswith(("%", "ms", "s ", "IOPS")) for a, b in zip(lines, lines[1:]))
    assert text(testdrive).startswith("what happened:\n  This scenario is about distance")

    html = report.render(testdrive, figures=[])
    assert html.index('id="story"') < html.index('id="comparison"')
    assert "dropped the 10 remote paths and kept the 10 local paths" in html

    doc = json.loads(testdrive.to_json())
    assert doc["story"][0]["policy"] is None
    assert [s["policy"] for s in doc["story"][1:]] == [r.label for r in testdrive.runs]
    assert doc["story"] == json.loads(json.dumps([{"policy": k, "sentences": v} for k, v in testdrive.story()]))


TWO_HOSTS = """
name = "two hosts, one fault"
seed = 7
duration = "1.5s"
interval = "100ms"
policies = ["rr:iops=1", "latency"]

[[arrays]]
name = "site-a"

[[arrays]]
name = "site-b"

[replication]
arrays = ["site-a", "site-b"]
one_way_latency = "1ms"

[[hosts]]
name = "esx1"
detection = "100ms"

[[hosts]]
name = "esx2"

[[paths]]
name = "vmhba1:C0:T{i}:L1"
host = "esx1"
count = 2
array = "site-a"
one_way_latency = "50us"

[[paths]]
name = "vmhba1:C0:T{i}:L1"
host = "esx2"
count = 2
array = "site-b"
one_way_latency = "60us"

[[workloads]]
name = "a"
host = "esx1"
rw = "randread"
iodepth = 8

[[workloads]]
name = "b"
host = "esx2"
rw = "randread"
iodepth = 8

[[faults]]
at = "500ms"
what = "path_down"
host = "esx1"
path = "vmhba1:C0:T0:L1"
"""
