"""The HTML report's "Host CPU" and "Links and switches" sections (issue 33).

Each section is there only for a run that has what it shows (a host ``cpu``
table; shared links, a fabric or a transport), with the numbers of
``result.cpus()`` and ``result.links()``; a scenario without them gets the
report it had, not an empty heading. The browser test opens both sections'
figures in headless Chromium (skipped without one, as in test_report.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pathsel
from pathsel.results import plots, report

from .test_report import FIGURES, PROBLEMS, chromium, instrumented, open_in_chromium

SIMS = Path(__file__).resolve().parent.parent / "sims"


@pytest.fixture(scope="module")
def cores() -> pathsel.Result:
    """Two NVMe/TCP hosts, 4 and 16 cores, one queue per core: every I/O costs 5 + 7 + 2 = 14 us of CPU."""
    return pathsel.simulate(SIMS / "nvme-tcp-cores.toml", duration=0.2)


@pytest.fixture(scope="module")
def numa() -> pathsel.Result:
    return pathsel.simulate(SIMS / "azure-m-series-nic-numa.toml", duration=0.2)


@pytest.fixture(scope="module")
def slow_drain() -> pathsel.Result:
    return pathsel.simulate(SIMS / "fc-slow-drain.toml")  # 3 s, the slow drain from 1 s to 2 s


def section(text: str, sid: str) -> str:
    """The report's text from the heading ``sid`` to the next h2."""
    start = text.index(f'<h2 id="{sid}">')
    end = text.find("<h2 ", start + 1)
    return text[start:end]


def cells(html: str) -> list[list[str]]:
    """Every table row's cells, markup stripped."""
    rows = re.findall(r"<tr>(.*?)</tr>", html)
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in rows]


# -- host CPU -----------------------------------------------------------------------


def test_cpu_section_gives_each_core_and_each_node(cores):
    text = report.render(cores)
    cpu = section(text, "cpu")
    assert "Host CPU" in cpu and "%USED" in cpu and 'data-figure="cpu"' in cpu
    rows = cells(cpu)
    frame = cores.cpus()
    # the folded table: one row per core, the same figures as result.cpus()
    per_core = [r for r in rows if len(r) == 5]
    assert len(per_core) == len(frame) == 4 + 16
    for r, (_, c) in zip(per_core, frame.iterrows()):
        assert r[:4] == [c.policy, c.host, str(c.node), str(c.core)]
        assert r[4] == f"{100 * c.utilisation:.1f} %"
    # the summary: per host and node, mean and max, the saturated cores
    summary = {r[1]: r for r in rows if len(r) == 9}
    assert set(summary) == {"host-4c", "host-16c"}
    for host, r in summary.items():
        u = frame[frame.host == host].utilisation
        assert r[4] == f"{100 * u.mean():.1f} %" and r[5] == f"{100 * u.max():.1f} %"
    assert summary["host-4c"][6] == "0-3"  # all four cores saturated: IOPS limited by CPU
    assert summary["host-16c"][6] == "–"  # 16 cores, the link fills first
    # CPU per I/O, measured, against the exact figure: 5 + 7 + 2 us per I/O (local queues, one node, no NUMA factor)
    for r in summary.values():
        assert float(r[8]) == pytest.approx(14.0, rel=0.02)


def test_cpu_section_groups_cores_by_numa_node(numa):
    cpu = section(report.render(numa), "cpu")
    summary = [r for r in cells(cpu) if len(r) == 9]
    assert [(r[1], r[2], r[3]) for r in summary] == [
        ("m-pinned", "0", "0-31"),
        ("m-pinned", "1", "32-63"),
        ("m-spread", "0", "0-31"),
        ("m-spread", "1", "32-63"),
    ]
    frame = numa.cpus()
    for r in summary:
        on = frame[(frame.host == r[1]) & (frame.node == int(r[2]))].utilisation
        assert r[4] == f"{100 * on.mean():.1f} %"
    # CPU per I/O is said once per host, on its first node's row
    assert summary[0][8] and not summary[1][8] and summary[2][8] and not summary[3][8]


def test_cpu_heatmap_is_cores_by_policy_in_node_order(numa):
    fig = plots.cpu_heatmap(numa)
    assert [t.name for t in fig.data] == ["m-pinned", "m-spread"]
    frame = numa.cpus()
    for t in fig.data:
        mine = frame[frame.host == t.name].sort_values(["node", "core"])
        assert list(t.x) == [str(k) for k in mine.core]
        assert [round(v, 9) for v in t.z[0]] == [round(100 * u, 9) for u in mine.utilisation]
    # a line between the NUMA nodes of each host, and the nodes named under the axis
    assert len(fig.layout.shapes) == 2
    assert "node 0: 0-31 | node 1: 32-63" in fig.layout.xaxis.title.text


# -- links and switches --------------------------------------------------------------


def test_links_section_shows_credits_held_links_and_routes(slow_drain):
    text = report.render(slow_drain)
    links = section(text, "links")
    assert "Switches: sw1" in links and "sw2" in links
    rows = cells(links)
    spec = {r[0]: r for r in rows if len(r) == 5}
    assert spec["isl1"][1] == "sw1 ↔ sw2" and spec["isl1"][3] == "20 × 2,148 B"
    assert spec["esxi01-hba0"][3] == "8 × 2,148 B"
    wires = [r for r in rows if len(r) == 8]
    frame = slow_drain.links()
    assert len(wires) == len(frame)  # one policy: in the order of result.links()
    for r, (_, w) in zip(wires, frame.iterrows()):
        assert r[0] == w["name"] and r[3] == w.policy and r[4] == f"{w.frames:,}"
        assert r[5] == f"{100 * w.utilisation:.1f} %" and r[7] == f"{100 * w.held:.1f} %"
    kind = {r[0]: r[1] for r in wires}
    assert kind["isl1"] == "ISL" and kind["array-fc0"] == "port link"
    # back-pressure from the slow port held the ISL behind it: a third of the 3 s (the fault's 1 s)
    held = {r[0]: float(r[7].rstrip(" %")) for r in wires}
    assert held["isl1"] == pytest.approx(100 / 3, abs=2.0) and held["esxi02-hba0"] == 0.0
    # each route through the fabric, in the set-up's key figures
    setup = section(text, "setup")
    assert "via esxi01-hba0 → sw1 → isl1 → sw2 → array-fc0" in setup


def test_links_section_with_framing_gives_payload(cores):
    links = section(report.render(cores), "links")
    assert "payload MB/s" in links and "held" not in re.findall(r"<th[^>]*>(.*?)</th>", links)
    wires = [r for r in cells(links) if len(r) == 9]
    frame = cores.links()
    assert len(wires) == len(frame) == 4
    for r, (_, w) in zip(wires, frame.iterrows()):
        assert r[7] == f"{w.payload_mb_s:,.1f}" and r[8] == f"{100 * w.payload_share:.1f} %"
    # the 16-core host's 25GbE link is full to the host: flagged
    full = [r for r in wires if r[0] == "host-16c/nvme1c0n1" and r[2] == "to the host"]
    assert full and float(full[0][5].rstrip(" %")) >= 99.0
    assert '<span class="outside">' in links


def test_link_figure_has_a_bar_per_wire_and_the_held_share(slow_drain):
    fig = plots.link_utilisation(slow_drain)
    assert [t.name for t in fig.data] == ["rr:iops=1", "rr:iops=1: held"]
    frame = slow_drain.links()
    assert list(fig.data[0].x) == pytest.approx(list(100 * frame.utilisation))
    assert list(fig.data[1].x) == pytest.approx(list(100 * frame.held))


def test_many_wires_fold_and_name_each_hosts_path():
    """Sixteen Linux hosts whose paths are all sda and sdb, four policies, four shared ports: 288 wire rows."""
    res = pathsel.simulate(SIMS / "library" / "scale-16-linux-hosts.toml", duration=0.2)
    links = section(report.render(res), "links")
    # the busy wires open, every wire folded below them
    assert "<h3>Wires at least 80 % busy" in links and "<details><summary>Every wire" in links
    opened, folded = links.split("<details>")
    hot, every = [r for r in cells(opened) if len(r) == 7], [r for r in cells(folded) if len(r) == 7]
    assert len(every) == len(res.links()) > report.FOLD_WIRES
    assert hot and all(float(r[5].rstrip(" %")) >= 80.0 for r in hot)
    # a path's own wire is named by its host: sda is on every host
    names = {r[0] for r in every}
    assert {"linux01/sda", "linux16/sdb", "port-0"} <= names and "sda" not in names
    # a wire's policies side by side, in the run's order
    labels = [r.label for r in res.runs]
    assert [r[3] for r in every[: len(labels)]] == labels and len({r[0] for r in every[: len(labels)]}) == 1
    # the figure draws the 24 busiest wire directions, and says so
    fig = plots.link_utilisation(res)
    assert "the 24 busiest of 72" in fig.layout.title.text and len(set(fig.data[0].y)) == 24


# -- nothing for a run without them ---------------------------------------------------


def test_no_section_and_no_figure_for_an_old_scenario():
    res = pathsel.simulate(SIMS / "esxi-latency-testdrive.toml", duration=0.3)
    text = report.render(res)
    for sid in ("cpu", "links"):
        assert f'id="{sid}"' not in text and f'data-figure="{sid}"' not in text
    assert "Host CPU" not in text and "Links and switches" not in text
    assert [f[0] for f in report.default_figures(res)] == FIGURES
    assert "\n\n" not in text.split("<body>")[1].split('<div class="figure"')[0]  # no blank part where a section is not


def test_no_figures_asked_for_gives_the_tables_only(cores):
    text = report.render(cores, figures=[])
    assert "<script" not in text  # no figure, no plotly.js
    assert 'id="cpu"' in text and 'id="links"' in text and "data-figure" not in text
    # plotly.js goes in the first figure drawn, whichever it is
    only = report.render(cores, figures=[f for f in report.default_figures(cores) if f[0] == "cpu"])
    assert only.count("<script") >= 1 and re.findall(r'data-figure="([\w-]+)"', only) == ["cpu"]


def test_sections_render_in_chromium(slow_drain, numa, tmp_path: Path):
    chromium()
    for name, res, figures in (
        ("fabric", slow_drain, ["setup", "links", "timeline", "percentiles", "cdf", "paths"]),
        ("cpu", numa, ["setup", "cpu", "links", "timeline", "percentiles", "cdf", "paths"]),
    ):
        path = report.write(res, tmp_path / f"{name}.html")
        dom, log = open_in_chromium(instrumented(path, tmp_path / f"{name}-i.html"))
        assert not PROBLEMS.findall(log), PROBLEMS.findall(log)
        parts = re.split(r'data-figure="([\w-]+)"', dom)[1:]
        assert parts[0::2] == figures
        drawn = dict(zip(parts[0::2], parts[1::2]))
        assert all('class="main-svg"' in html for html in drawn.values())
        if name == "cpu":
            assert drawn["cpu"].count('class="hm"') == 2  # a heatmap per host
        else:
            assert drawn["links"].count('class="point"') >= 6  # a bar per wire
