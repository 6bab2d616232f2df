"""The set-up, drawn and listed: the figure's nodes, lines, colours and widths are the scenario's and the run's."""

from __future__ import annotations

import pytest

import pathsel
from pathsel.results import report
from pathsel.results.topology import ALUA_COLORS, key_figures, nexuses, topology

from .conftest import SIMS
from .test_story import TWO_HOSTS


@pytest.fixture(scope="module")
def testdrive() -> pathsel.Result:
    return pathsel.simulate(SIMS / "esxi-latency-testdrive.toml", duration=1.0)


def trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def test_nexuses_come_from_the_path_names(testdrive):
    nx = nexuses(testdrive.runs[0])
    assert len(nx) == 20
    assert {n.adapter for n in nx} == {"vmhba1", "vmhba2"}
    assert sorted({(n.array, n.target) for n in nx}) == sorted([("local", f"T{i}") for i in range(5)] + [("remote", f"T{i}") for i in range(5, 10)])
    # names without the ESXi convention: each nexus is its own target port, no adapter column
    res = pathsel.simulate(SIMS / "fast-failover.toml", duration=0.2)
    assert [(n.adapter, n.target) for n in nexuses(res.runs[0])] == [("", "nvme0c0n1"), ("", "nvme0c1n1")]
    assert "adapters" not in [t.name for t in topology(res).data]


def test_lines_are_as_wide_as_each_policys_share_and_coloured_by_alua(testdrive):
    fig = topology(testdrive)
    paths = [t for t in fig.data if (t.name or "").startswith("path ")]
    assert len(paths) == 20
    assert [t.name for t in fig.data if t.name in ("hosts", "adapters", "target ports", "arrays", "replication")] == [
        "hosts",
        "adapters",
        "target ports",
        "arrays",
        "replication",
    ]
    assert list(trace(fig, "hosts").text) == ["esxi01"] and list(trace(fig, "arrays").text) == ["local", "remote"]
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == [r.label for r in testdrive.runs]
    for b, r in zip(buttons, testdrive.runs):
        style, indices = b.args
        assert [fig.data[i].name for i in indices] == [f"path {p['name']}" for p in r.paths()]
        share = [p["share"] for p in r.paths()]
        width = style["line.width"]
        # wider where the share is larger; dotted where nothing went
        assert all((w1 > w2) == (s1 > s2) for w1, s1 in zip(width, share) for w2, s2 in zip(width, share))
        assert [d == "dot" for d in style["line.dash"]] == [s == 0 for s in share]
        assert style["line.color"] == [ALUA_COLORS[p.alua] for p in r.model.paths]
    # latency RR dropped the remote paths: thin dotted lines there; the preferred-array run colours them ANO
    latency = dict(zip([b.label for b in buttons], [b.args[0] for b in buttons]))
    assert latency["latency RR, all paths AO"]["line.dash"][10:] == ["dot"] * 10
    assert set(latency["RR iops=1, preferred array"]["line.color"][10:]) == {ALUA_COLORS["ANO"]}
    assert set(latency["RR iops=1, preferred array"]["line.color"][:10]) == {ALUA_COLORS["AO"]}
    # the figure starts on the first run, or the one asked for
    assert [t.line.width for t in paths] == list(buttons[0].args[0]["line.width"])
    third = topology(testdrive, policy="latency")
    assert [t.line.width for t in third.data if (t.name or "").startswith("path ")] == list(buttons[2].args[0]["line.width"])
    with pytest.raises(KeyError):
        topology(testdrive, policy="nope")
    # hover gives every policy's share of a path
    assert "latency RR, all paths AO: 0.0% of I/Os" in paths[12].hovertemplate
    assert "replication" in trace(fig, "replication").hovertext and "1ms" in trace(fig, "replication").hovertext


def test_key_figures_give_the_workload_latencies_and_timers(testdrive):
    rows = dict(key_figures(testdrive))
    assert rows["workload vm1 on esxi01"] == "rw=randwrite, bs=32k, iodepth=32, numjobs=1, ramp_time=1s"
    assert rows["I/Os kept in flight"] == "32 (SCSI)"
    assert rows["paths esxi01 → local"].startswith("10 paths (vmhba1:C0:T0:L1 … vmhba2:C0:T4:L1), one way 50us, 16 Gbit/s")
    remote = [v for k, v in key_figures(testdrive) if k == "paths esxi01 → remote"]
    assert [v.split(", ")[1] for v in remote] == ["one way 1ms", "one way 1.5ms"]
    assert rows["replication local ↔ remote"] == "synchronous, one way 1ms, no serialisation"
    assert rows["host esxi01"] == "detection 5s, APD timeout 140s, I/O timeout 30s"
    assert rows["paths for RR iops=1, preferred array"] == "10 AO, 10 ANO"
    assert rows["measured"] == "1s after a 1s ramp, interval 1s, seed 4"


def test_two_hosts_and_distances():
    text = TWO_HOSTS.replace('one_way_latency = "60us"', 'one_way_latency = "60us"\ndistance_km = 40')
    res = pathsel.simulate(pathsel.loads_scenario(text, "two hosts"), duration=0.2)
    rows = dict(key_figures(res))
    assert rows["paths esx2 → site-b"] == "2 paths (vmhba1:C0:T0:L1 and vmhba1:C0:T1:L1), one way 60us + 40 km, no serialisation, AO at start"
    assert rows["workload b on esx2"].startswith("rw=randread, bs=4k, iodepth=8")
    fig = topology(res)
    assert list(trace(fig, "hosts").text) == ["esx1", "esx2"]
    # the same path name on two hosts is two lines, told apart on hover
    lines = [t for t in fig.data if t.name == "path vmhba1:C0:T0:L1"]
    assert len(lines) == 2 and "(esx1)" in lines[0].hovertemplate and "(esx2)" in lines[1].hovertemplate


def test_the_report_opens_with_the_set_up_then_the_story(testdrive):
    html = report.render(testdrive)
    order = [
        html.index(s)
        for s in ('id="setup"', 'data-figure="setup"', "workload vm1 on esxi01", 'id="story"', 'id="comparison"', 'data-figure="timeline"')
    ]
    assert order == sorted(order)
    assert html.count("Plotly.newPlot(") == len(report.default_figures(testdrive))
