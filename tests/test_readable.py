"""Figures that read at any size: coinciding policies stay apart, every panel has a time axis, many paths are grouped."""

from __future__ import annotations

import numpy as np
import pytest

import pathsel
from pathsel import plots

from .conftest import SIMS


def many_paths(per_group: int = 11) -> pathsel.Scenario:
    """Two hosts x two arrays x ``per_group`` paths (44 by default: above plots.GROUP_ABOVE); array b fails at 0.2 s."""
    lines = [
        'name = "many paths"',
        "seed = 5",
        'duration = "400ms"',
        'interval = "100ms"',
        'policies = ["rr:iops=1", "latency"]',
        "[[arrays]]",
        'name = "a"',
        "[[arrays]]",
        'name = "b"',
        "[replication]",
        'arrays = ["a", "b"]',
        'one_way_latency = "200us"',
    ]
    for h, pref in (("esx1", "a"), ("esx2", "b")):
        lines += ["[[hosts]]", f'name = "{h}"', f'preferred_array = "{pref}"', 'detection = "50ms"']
    for h in ("esx1", "esx2"):
        for arr, lat, start in (("a", "50us", 0), ("b", "300us", 100)):
            lines += [
                "[[paths]]",
                'name = "vmhba1:C0:T{i}:L1"',
                f'host = "{h}"',
                f"start = {start}",
                f"count = {per_group}",
                f'array = "{arr}"',
                f'one_way_latency = "{lat}"',
            ]
        lines += ["[[workloads]]", f'name = "w{h}"', f'host = "{h}"', 'rw = "randread"', "iodepth = 32"]
    lines += ["[[faults]]", 'at = "200ms"', 'what = "array_down"', 'array = "b"']
    return pathsel.loads_scenario("\n".join(lines) + "\n", "many paths")


@pytest.fixture(scope="module")
def testdrive() -> pathsel.Result:
    return pathsel.simulate(SIMS / "esxi-latency-testdrive.toml", duration=1.0)


def test_coinciding_policies_differ_in_dash_and_width(testdrive):
    for fig in (plots.timeline(testdrive), plots.latency_cdf(testdrive)):
        first = {}
        for t in fig.data:  # the timeline names each policy twice: take the IOPS panel's
            if t.name in [r.label for r in testdrive.runs]:
                first.setdefault(t.name, t)
        lines = list(first.values())
        assert len(lines) == 3
        assert len({t.line.dash for t in lines}) == 3
        widths = [t.line.width for t in lines]
        assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1]
        assert len({t.line.color for t in lines}) == 3
    # the test drive's preferred-array run and latency RR give the same IOPS: the later line is thinner, inside
    tl = plots.timeline(testdrive)
    iops = {t.name: t for t in tl.data if t.yaxis in (None, "y")}
    pref, lat = iops["RR iops=1, preferred array"], iops["latency RR, all paths AO"]
    assert np.allclose(pref.y[1:], lat.y[1:], rtol=0.02) and pref.line.width > lat.line.width


def test_every_timeline_panel_has_a_time_axis_and_the_ramp_is_named_once(testdrive):
    fig = plots.timeline(testdrive)
    assert fig.layout.xaxis.showticklabels and fig.layout.xaxis2.showticklabels is not False
    ramp = [a for a in fig.layout.annotations if a.text == "ramp"]
    assert len(ramp) == 1 and ramp[0].y == 0 and ramp[0].yanchor == "bottom"  # at the foot, clear of the markers
    assert fig.layout.legend.traceorder == "grouped"
    heat = plots.path_share_heatmap(testdrive)
    axes = [k for k in heat.layout if k.startswith("xaxis")]
    assert len(axes) == 2 * len(testdrive.runs) and all(heat.layout[k].showticklabels for k in axes)


def test_many_paths_are_grouped_by_host_array_and_state_with_every_path_a_click_away():
    res = pathsel.simulate(many_paths())
    r = res.runs[0]
    assert len(r.model.paths) == 44 > plots.GROUP_ABOVE
    fig = plots.path_share_heatmap(res)
    label = r.label
    names = [t.name for t in fig.data]
    share = fig.data[names.index(f"{label}: share")]
    assert list(share.y) == ["esx1: a AO (11 paths)", "esx1: b ANO (11 paths)", "esx2: a ANO (11 paths)", "esx2: b AO (11 paths)"]
    # each row is the sum of its paths' shares; a column still sums to 1
    by_path = fig.data[names.index(f"{label}: share by path")]
    z, zp = np.asarray(share.z), np.asarray(by_path.z)
    assert z[0] == pytest.approx(zp[:11].sum(axis=0)) and z[3] == pytest.approx(zp[33:].sum(axis=0))
    busy = r.metrics.ts_ios > 0
    assert z.sum(axis=0)[busy] == pytest.approx(1.0)
    # state: the worst of the group's paths; array b's paths are down once the hosts notice (50 ms after 200 ms)
    state = np.asarray(fig.data[names.index(f"{label}: state")].z)
    edges = list(fig.data[names.index(f"{label}: state")].x)
    after = edges.index(pytest.approx(0.25))
    assert plots.STATES[state[1, after]] == "down" and plots.STATES[state[0, after]] == "AO"
    assert "11 down" in fig.data[names.index(f"{label}: state")].text[3][after]
    # the per-path traces are there, hidden, and the buttons swap the two views
    assert share.visible is not False and by_path.visible is False
    group, every = fig.layout.updatemenus[0].buttons
    assert [n for n, v in zip(names, group.args[0]["visible"]) if v] == [n for n in names if "by path" not in n]
    assert [n for n, v in zip(names, every.args[0]["visible"]) if v] == [n for n in names if "by path" in n]
    # asked for, every path
    assert len(plots.path_share_heatmap(res, by="path").data[0].y) == 44
    with pytest.raises(ValueError):
        plots.path_share_heatmap(res, by="array")
