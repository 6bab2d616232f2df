"""The set-up, drawn and listed: the figure's nodes, lines, colours and widths are the scenario's and the run's."""

from __future__ import annotations

from collections import defaultdict

import pytest

import pathsel
from pathsel.results import report
from pathsel.results.topology.compact import COMPACT_HOSTS
from pathsel.results.topology.figure import topology
from pathsel.results.topology.key_table import key_figures
from pathsel.results.topology.nexus import nexuses
from pathsel.results.topology.style import ALUA_COLORS

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


def test_the_report_opens_with_the_story_and_the_comparison_then_the_set_up(testdrive):
    # issue 54: the first screen says what happened; the set-up drawing and its key figures follow
    html = report.render(testdrive)
    order = [
        html.index(s)
        for s in ('id="story"', 'id="comparison"', 'id="setup"', 'data-figure="setup"', "workload vm1 on esxi01", 'data-figure="timeline"')
    ]
    assert order == sorted(order)
    assert html.count("Plotly.newPlot(") == len(report.default_figures(testdrive))


# -- the fabric, the controllers, ALUA per LUN, the compact form (issue 48) ------------------------------------


def switched_san(hosts: int = 2, luns: int = 4, *, policies: str = '["rr:iops=1"]') -> str:
    """``hosts`` ESXi hosts with two HBAs, one in each of two peer switches joined by an ISL; a dual-controller array
    whose four target ports sit two on each switch; ``luns`` LUNs, the first half owned by controller A. Each host
    reaches every target port from each HBA (the far ones over the ISL), so every nexus is AO for half the LUNs.
    esxi01 runs only on lun0 (owned by A): under round robin over AO paths its nexuses to B carry nothing."""
    ports = [("A-fc0", "tpg-A", "sw1"), ("B-fc0", "tpg-B", "sw1"), ("A-fc1", "tpg-A", "sw2"), ("B-fc1", "tpg-B", "sw2")]
    o = [
        'name = "switched dual-controller SAN"',
        "seed = 48",
        'duration = "300ms"',
        f"policies = {policies}",
        "[[arrays]]",
        'name = "array"',
        "concurrency = 256",
        'controllers = ["A", "B"]',
        'port_groups = [{ name = "tpg-A", controller = "A" }, { name = "tpg-B", controller = "B" }]',
        'service_time = "150us"',
        'inter_controller_latency = "40us"',
        "[[switches]]",
        'name = "sw1"',
        "[[switches]]",
        'name = "sw2"',
        "[[links]]",
        'name = "isl1"',
        'between = ["sw1", "sw2"]',
        'bandwidth = "800MB/s"',
        "bb_credits = 20",
    ]
    for p, _, sw in ports:
        o += ["[[links]]", f'name = "array-{p}"', f'between = ["{sw}", "array:{p}"]', 'bandwidth = "1600MB/s"', "bb_credits = 8"]
    for v in range(luns):
        o += ["[[volumes]]", f'name = "lun{v}"', f"lun = {v}", f'owner = "{"A" if v < luns // 2 else "B"}"']
    for h in range(1, hosts + 1):
        host = f"esxi{h:02d}"
        o += ["[[hosts]]", f'name = "{host}"']
        for hba, sw in ((1, "sw1"), (2, "sw2")):
            o += ["[[links]]", f'name = "{host}-hba{hba}"', f'between = ["{host}:vmhba{hba}", "{sw}"]', 'bandwidth = "1600MB/s"', "bb_credits = 8"]
            for t, (p, tpg, psw) in enumerate(ports):
                route = [f"{host}-hba{hba}", *(["isl1"] if psw != sw else []), f"array-{p}"]
                o += [
                    "[[paths]]",
                    f'name = "vmhba{hba}:C0:T{t}:L{{lun}}"',
                    f'host = "{host}"',
                    'array = "array"',
                    f'port_group = "{tpg}"',
                    'one_way_latency = "20us"',
                    f'target_port = "{p}"',
                    "links = [" + ", ".join(f'"{x}"' for x in route) + "]",
                ]
        for v in [0] if h == 1 else range(luns):
            o += [
                "[[workloads]]",
                f'name = "{host}-vm{v}"',
                f'host = "{host}"',
                f'volume = "lun{v}"',
                'rw = "randread"',
                'bs = "32k"',
                "iodepth = 16",
            ]
    return "\n".join(o) + "\n"


@pytest.fixture(scope="module")
def san() -> pathsel.Result:
    return pathsel.simulate(pathsel.loads_scenario(switched_san(), "san"), duration=0.3)


def test_the_fabric_is_drawn_switches_isl_and_links_with_the_wire_tables_shares(san):
    fig = topology(san)
    run = san.runs[0]
    assert list(trace(fig, "switches").text) == ["<b>sw1</b>", "<b>sw2</b>"]
    assert trace(fig, "isl isl1").fill == "toself"
    # every link with ends is marked and named with its busy and held shares, the busier direction of the wire table
    links = trace(fig, "links")
    texts = {t.split("<br>")[0]: t for t in links.text}
    assert set(texts) == {
        "isl1",
        "esxi01-hba1",
        "esxi01-hba2",
        "esxi02-hba1",
        "esxi02-hba2",
        *(f"array-{p}" for p in ("A-fc0", "A-fc1", "B-fc0", "B-fc1")),
    }
    for name, text in texts.items():
        rows = [w for w in run.links() if w["name"] == name]
        busy = max(w["utilisation"] for w in rows)
        held = max(w.get("held", 0.0) for w in rows)
        assert f"{100 * busy:.0f} % busy" in text or (busy < 0.01 and "<1 % busy" in text), (name, text)
        assert ("held" in text) == (held >= 0.005) and (held < 0.01 or f"{100 * held:.0f} % held" in text), (name, text, held)
    # a nexus over the ISL is drawn through both switches' boxes; one on the near switch through one
    x_sw = trace(fig, "switches").x[0] + 0.2  # its name is at the box's top left
    far, near = trace(fig, "path vmhba1:C0:T2"), trace(fig, "path vmhba1:C0:T0")  # esxi01's: the first of each name
    assert list(near.x[1:3]) == pytest.approx([x_sw - 0.2, x_sw + 0.2])  # across sw1's box
    assert len(far.x) == 6 and far.x[2] == far.x[3] and far.y[2] != far.y[3]  # across sw1, down the ISL, out of sw2


def test_controllers_boxed_and_alua_per_lun_and_none_drawn_as_none(san):
    fig = topology(san)
    notes = [a.text for a in fig.layout.annotations]
    assert any(n.startswith("<b>controller A</b> · tpg-A<br>AO for 2 LUNs (lun0, lun1)") for n in notes), notes
    assert any(n.startswith("<b>controller B</b> · tpg-B<br>AO for 2 LUNs (lun2, lun3)") for n in notes), notes
    assert sum(s.type == "rect" and s.line.color == "#8c564b" for s in fig.layout.shapes) == 2  # a box per controller
    run = san.runs[0]
    nx = {(n.host, n.name): n for n in nexuses(run)}
    ios = defaultdict(int)
    for p, row in zip(run.model.paths, run.paths()):
        ios[p.controller] += row["ios"]
    lines = [t for t in fig.data if (t.name or "").startswith("path ") and not t.name.endswith(": stripes")]
    assert len(lines) == len(nx) == 16
    striped = [t for t in fig.data if (t.name or "").endswith(": stripes")]
    assert [t.name for t in striped] == [t.name + ": stripes" for t in lines]
    for t, stripes, n in zip(lines, striped, nx.values()):
        # every nexus is AO for half the LUNs, ANO for the rest: said so, and striped in both colours where it carried I/O
        assert "AO for 2 of 4 LUNs" in t.hovertemplate and "ANO for 2 of 4 LUNs" in t.hovertemplate
        assert (t.line.color, stripes.line.color) == (ALUA_COLORS["AO"], ALUA_COLORS["ANO"])
        assert "nan" not in t.hovertemplate  # a device path that carried nothing has no mean: it weighs nothing
        if ios[n.index]:
            assert t.line.dash == "solid" and t.line.width > 1.5 and stripes.line.width == t.line.width
            assert "ms mean, 0% for its non-AO LUNs" in t.hovertemplate  # round robin over AO paths only
        else:  # carried none: a thin dotted line, no stripes
            assert t.line.dash == "dot" and t.line.width <= 1 and stripes.line.width == 0 and "(carried none)" in t.hovertemplate
    # esxi01 runs on lun0 only (owned by A): its four nexuses to B carried nothing, the others did
    none = sorted(n.name for n in nx.values() if not ios[n.index])
    assert none == ["vmhba1:C0:T1", "vmhba1:C0:T3", "vmhba2:C0:T1", "vmhba2:C0:T3"] and all(nx[("esxi01", x)] for x in none)


def test_compact_form_groups_hosts_wired_alike_and_a_controllers_ports():
    res = pathsel.simulate(pathsel.loads_scenario(switched_san(hosts=COMPACT_HOSTS, luns=2), "big"), duration=0.05)
    fig = topology(res)  # compact from COMPACT_HOSTS hosts
    # esxi01 (lun0 only: its nexuses to B idle) apart, the 31 others alike
    assert list(trace(fig, "hosts").text) == ["esxi01", f"{COMPACT_HOSTS - 1} hosts alike<br>esxi02, esxi03 … esxi{COMPACT_HOSTS:02d}"]
    assert list(trace(fig, "target ports").text) == ["2 ports (A-fc0, A-fc1)", "2 ports (B-fc0, B-fc1)"]
    lines = [t for t in fig.data if (t.name or "").startswith("path ") and not t.name.endswith(": stripes")]
    assert len(lines) == 2 * 2 * 2 * 2  # (esxi01, the rest) x 2 adapters x 2 controllers x (near, over the ISL)
    assert "vmhba1 → A: 31 nexuses of 31 hosts" in [t.name[5:] for t in lines]
    # the fabric is still drawn: both switches, the ISL, the links (a group's host links as one marker)
    assert list(trace(fig, "switches").text) == ["<b>sw1</b>", "<b>sw2</b>"] and trace(fig, "isl isl1")
    assert any(t.startswith("31 links<br>up to ") for t in trace(fig, "links").text)
    assert "compact: 32 hosts drawn as 2" in fig.layout.title.text
    # a host with a fault on one of its nexuses stands apart, though wired alike
    fault = '[[faults]]\nat = "10ms"\nwhat = "path_down"\nhost = "esxi02"\npath = "vmhba2:C0:T3:L{lun}"\n'
    faulty = pathsel.simulate(pathsel.loads_scenario(switched_san(hosts=COMPACT_HOSTS, luns=2) + fault, "big"), duration=0.05)
    assert list(trace(topology(faulty), "hosts").text)[:2] == ["esxi01", "esxi02"]
    # the full form on request, and below COMPACT_HOSTS by default
    assert len([t for t in topology(res, compact=False).data if (t.name or "").startswith("path ") and not t.name.endswith(": stripes")]) == 8 * 32
