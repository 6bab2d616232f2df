"""pathsel.plots: every function returns a plotly Figure with the traces it documents, drawn from the run's numbers."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

import pathsel
from pathsel import plots
from pathsel.stats import ci95, t975

from .conftest import SIMS

FAULTS = """
[[faults]]
at = "1.5s"
what = "path_down"
path = "vmhba1:C0:T0:L1"

[[faults]]
at = "2s"
what = "alua"
path = "vmhba1:C0:T1:L1"
state = "standby"

[[faults]]
at = "2.5s"
what = "path_up"
path = "vmhba1:C0:T0:L1"
"""

LATENCY = "latency RR, all paths AO"


def faulty_scenario() -> pathsel.Scenario:
    """The founding test drive (three policies) with a path going down and back, and an ALUA change."""
    text = (SIMS / "esxi-latency-testdrive.toml").read_text(encoding="utf-8") + FAULTS
    # the host learns of each fault at once, so the state strip changes at the fault times
    text = text.replace('name = "esxi01"', 'name = "esxi01"\ndetection = "0s"', 1)
    return pathsel.loads_scenario(text, "testdrive+faults")


@pytest.fixture(scope="module")
def result() -> pathsel.Result:
    return pathsel.simulate(faulty_scenario(), duration=2.0)  # 1 s ramp + 2 s: three 1 s intervals


def names(fig: go.Figure) -> list[str]:
    return [t.name for t in fig.data]


def test_timeline_has_iops_and_latency_per_policy_faults_and_evaluations(result):
    fig = plots.timeline(result)
    assert isinstance(fig, go.Figure)
    labels = [r.label for r in result.runs]
    for label in labels:
        assert names(fig).count(label) == 2  # IOPS panel and latency panel
    assert f"{LATENCY}: evaluations" in names(fig)
    assert [n for n in names(fig) if n.endswith(": evaluations")] == [f"{LATENCY}: evaluations"]
    faults = fig.data[names(fig).index("faults")]
    assert list(faults.x) == [1.5, 2.0, 2.5]
    assert "path_down vmhba1:C0:T0:L1" in faults.hovertext[0]
    vlines = [s for s in fig.layout.shapes if s.type == "line"]
    assert sorted(s.x0 for s in vlines) == [1.5, 1.5, 2.0, 2.0, 2.5, 2.5]  # in both panels
    # the numbers are the run's time series, mid-interval
    run = result[labels[0]]
    ts = run.timeseries()
    iops = fig.data[0]
    assert list(iops.x) == pytest.approx(list(ts.t_s + 0.5))
    assert list(iops.y) == pytest.approx(list(ts.iops))
    lat = fig.data[1]
    assert list(lat.y) == pytest.approx(list(ts.latency_mean_us / 1e3))
    # the evaluation marker sits at the evaluation's time
    evals = fig.data[names(fig).index(f"{LATENCY}: evaluations")]
    assert list(evals.x) == [e["t"] for e in result[LATENCY].metrics.events if e["event"] == "evaluation"]


def test_a_flapping_path_draws_every_fault_line_in_one_go(monkeypatch):
    """A report on hundreds of faults once took minutes: plotly's add_vline re-validates every shape already
    there, so adding one line per fault costs quadratic time. The lines are set at once, the same lines."""
    import importlib.util

    from .conftest import ROOT

    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "benchmarks" / "report.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = pathsel.simulate(pathsel.loads_scenario(bench.flapping(200, duration=2.0), "flap.toml"))
    calls = []
    monkeypatch.setattr(go.Figure, "add_vline", lambda self, *a, **k: calls.append(k) or self)
    monkeypatch.setattr(go.Figure, "add_shape", lambda self, *a, **k: calls.append(k) or self)
    fig = plots.timeline(result)
    assert calls == []  # no per-fault call
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert len(lines) == 2 * 200  # both panels
    at = sorted({f.at for f in result.runs[0].model.faults})
    assert sorted(s.x0 for s in lines if s.xref == "x") == pytest.approx(at)
    assert sorted(s.x0 for s in lines if s.xref == "x2") == pytest.approx(at)
    assert {(s.yref, s.y0, s.y1, s.line.dash) for s in lines} == {("y domain", 0, 1, "dash"), ("y2 domain", 0, 1, "dash")}


def test_timeline_without_faults_has_no_fault_trace():
    fig = plots.timeline(pathsel.simulate(policies=["rr:iops=1"], duration=0.5))
    assert names(fig) == ["rr:iops=1", "rr:iops=1"]
    assert not [s for s in fig.layout.shapes if s.type == "line"]


def test_latency_percentiles_are_the_summary_in_ms(result):
    fig = plots.latency_percentiles(result)
    assert names(fig) == ["p50", "p99", "p99.9"]
    summary = result.summary()
    for trace, col in zip(fig.data, ["p50_us", "p99_us", "p999_us"]):
        assert list(trace.x) == list(summary.policy)
        assert list(trace.y) == pytest.approx(list(summary[col] / 1e3))


def test_latency_cdf_is_monotone_ends_at_one_and_agrees_with_percentiles(result):
    fig = plots.latency_cdf(result)
    assert names(fig) == [r.label for r in result.runs]
    for trace, run in zip(fig.data, result.runs):
        x, y = np.asarray(trace.x), np.asarray(trace.y)
        assert len(x) > 10
        assert np.all(np.diff(x) > 0) and np.all(np.diff(y) >= 0)
        assert y[0] > 0 and y[-1] == pytest.approx(1.0)
        # the median read off the CDF is the run's p50 (within a histogram bin, < 1 %)
        p50_ms = x[np.searchsorted(y, 0.5)]
        assert p50_ms == pytest.approx(run.latency_us["p50"] / 1e3, rel=0.01)
    assert fig.layout.xaxis.type == "log"
    assert plots.latency_cdf(result, log_x=False).layout.xaxis.type == "linear"


def test_path_share_heatmap_is_paths_by_intervals_with_a_state_timeline(result):
    fig = plots.path_share_heatmap(result)
    labels = [r.label for r in result.runs]
    assert names(fig) == [n for label in labels for n in (f"{label}: share", f"{label}: state")]
    shares = result.path_share()
    for label in labels:
        run = result[label]
        share = fig.data[names(fig).index(f"{label}: share")]
        z = np.asarray(share.z)
        assert z.shape == (len(run.model.paths), run.metrics.n_bins) == (20, 3)
        assert list(share.y) == [p.name for p in run.model.paths]
        expected = shares[shares.policy == label].pivot(index="path", columns="t_s", values="share")
        assert z == pytest.approx(expected.loc[list(share.y)].to_numpy())
        assert np.all(z.sum(axis=0) == pytest.approx(1.0))
    # the path that went down has no I/Os in the interval it was down for most of
    rr = fig.data[names(fig).index(f"{labels[0]}: share")]
    assert np.asarray(rr.z)[0, 2] < np.asarray(rr.z)[2, 2]
    # state: T0 down from 1.5 s to 2.5 s, T1 standby from 2 s; the preferred-array run's remote paths are ANO
    state = fig.data[names(fig).index(f"{labels[0]}: state")]
    assert list(state.x) == [0.0, 1.5, 2.0, 2.5, 3.0]
    codes = np.asarray(state.z)
    assert codes.shape == (20, 4)
    s = plots.STATES
    assert [s[c] for c in codes[0]] == ["AO", "down", "down", "AO"]
    assert [s[c] for c in codes[1]] == ["AO", "AO", "standby", "standby"]
    assert {s[c] for c in codes[2:].ravel()} == {"AO"}
    pref = np.asarray(fig.data[names(fig).index(f"{labels[1]}: state")].z)
    assert {s[c] for c in pref[10:].ravel()} == {"ANO"}


def test_path_share_heatmap_of_one_run_and_one_policy(result):
    one = plots.path_share_heatmap(result[LATENCY])
    assert names(one) == [f"{LATENCY}: share", f"{LATENCY}: state"]
    assert names(plots.path_share_heatmap(result, policy="latency")) == names(one)  # by spec too
    with pytest.raises(KeyError):
        plots.path_share_heatmap(result, policy="no such policy")
    with pytest.raises(TypeError):
        plots.timeline(result.summary())


def test_compare_seeds_plots_mean_and_95_ci_across_seeds():
    seeds = [1, 2, 3]
    policies = ["rr:iops=1", "rr:iops=1,preferred_array=local"]
    table = pathsel.simulate_seeds(None, seeds, duration=0.3, policies=policies)
    assert list(table.columns[:2]) == ["seed", "policy"]
    assert len(table) == len(seeds) * len(policies)
    assert table.seed.tolist() == [1, 1, 2, 2, 3, 3]
    fig = plots.compare_seeds(table)
    assert names(fig) == ["IOPS", "p99"]
    iops, p99 = fig.data
    assert list(iops.x) == list(dict.fromkeys(table.policy))
    for i, label in enumerate(iops.x):
        rows = table[table.policy == label]
        assert iops.y[i] == pytest.approx(rows.iops.mean())
        half = t975(2) * rows.iops.std(ddof=1) / np.sqrt(3)
        assert iops.error_y.array[i] == pytest.approx(half)
        assert p99.y[i] == pytest.approx(rows.p99_us.mean() / 1e3)
        assert p99.error_y.array[i] >= 0
    assert len(fig.layout.meta["seed_table"]) == len(table)
    # a different seed gives other numbers
    assert table[table.policy == "rr:iops=1"].iops.nunique() > 1


def test_t_quantiles():
    assert t975(1) == pytest.approx(12.706, abs=5e-4)  # the printed tables' figures
    assert t975(4) == pytest.approx(2.776, abs=5e-4)
    assert 2.042 > t975(35) > 2.021
    assert t975(1000) == pytest.approx(1.962, abs=5e-4)
    assert ci95([1.0, 2.0, 3.0]) == pytest.approx((2.0, t975(2) / 3**0.5))
    assert ci95([5.0])[0] == 5.0 and math.isnan(ci95([5.0])[1])


def test_importing_pathsel_does_not_import_plotting():
    code = (
        "import sys, pathsel, pathsel.results, pathsel.api\n"
        "drawing = ('pathsel.results.plots', 'pathsel.results.topology', 'pathsel.results.report')\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] == 'plotly' or m.startswith(drawing)]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_plots_and_reports_doc_examples_run(tmp_path, monkeypatch):
    """The python blocks of docs/plots-and-reports.md run in order, in one namespace, from a copy of the root."""
    from .conftest import ROOT
    from .test_docs_and_notebooks import fenced_blocks

    page = ROOT / "docs" / "plots-and-reports.md"
    blocks = fenced_blocks(page, "python")
    assert len(blocks) >= 5
    (tmp_path / "sims").symlink_to(SIMS, target_is_directory=True)  # the page runs from the root
    monkeypatch.chdir(tmp_path)
    shown = []
    monkeypatch.setattr(go.Figure, "show", lambda self, *a, **k: shown.append(self))  # no browser
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for line, code in blocks:
        exec(compile("\n" * (line - 1) + code, str(page), "exec"), namespace)
    assert len(shown) >= 2 and namespace["cdf"].data[0].y[-1] == pytest.approx(1.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sims"]  # the examples write nothing beside the page


# -- offered load ----------------------------------------------------------------


def _knee_table():
    import pandas as pd

    rows = []
    for policy, p99 in (("rr", [2500.0, 2600.0, 40000.0]), ("latency", [800.0, 800.0, 900.0])):
        for rate, v in zip((20000, 60000, 100000), p99):
            for rep in (0, 1):
                rows.append(
                    {
                        "policy": policy,
                        "workloads[0].rate_iops": rate,
                        "replication": rep,
                        "iops": rate * 0.99,
                        "p50_us": v / 2 + rep,
                        "p99_us": v + 2 * rep,
                    }
                )
    return pd.DataFrame(rows)


def test_load_latency_draws_p50_and_p99_per_policy_against_the_offered_rate():
    fig = plots.load_latency(_knee_table())
    assert names(fig) == ["rr p50", "rr p99", "latency p50", "latency p99"]
    rr99 = fig.data[1]
    assert list(rr99.x) == [20000, 60000, 100000]
    assert list(rr99.y) == pytest.approx([2.501, 2.601, 40.001])  # ms, mean over the replications
    assert fig.data[0].line.dash == "dash" and fig.data[1].line.dash == "solid"
    assert fig.layout.yaxis.type == "log"  # past a knee latency grows a hundredfold
    assert fig.data[0].marker.symbol != fig.data[2].marker.symbol  # two policies on one curve both show
    assert fig.layout.xaxis.title.text == "offered IOPS" and fig.layout.yaxis.title.text == "latency (ms)"


def test_load_latency_linear_axis_and_a_table_without_a_rate_column():
    fig = plots.load_latency(_knee_table(), log_y=False)
    assert fig.layout.yaxis.type != "log" and fig.layout.yaxis.rangemode == "tozero"
    with pytest.raises(ValueError, match="rate_iops"):
        plots.load_latency(_knee_table().rename(columns={"workloads[0].rate_iops": "x"}))
    assert names(plots.load_latency(_knee_table().rename(columns={"workloads[0].rate_iops": "x"}), rate="x"))[0] == "rr p50"


def test_pathsel_plots_gathers_each_figure_from_the_module_of_its_kind():
    """``pathsel.plots`` is the figures' one public name; each lives in a module of one kind of figure (issue 49)."""
    from pathsel.results.plots import latency, over_time, per_path, resources, studies
    from pathsel.results.topology import figure, key_table

    homes = {
        figure: ["topology"],
        key_table: ["key_figures"],
        over_time: ["timeline", "FAULT_EVENTS"],
        latency: ["latency_percentiles", "latency_cdf"],
        per_path: ["path_share_heatmap", "path_states", "GROUP_ABOVE", "STATES"],
        studies: ["compare_seeds", "regret_heatmap", "load_latency"],
        resources: ["cpu_heatmap", "link_utilisation", "wire_rows"],
    }
    assert sorted(n for names in homes.values() for n in names) == sorted(plots.__all__)
    for module, names in homes.items():
        for name in names:
            assert getattr(plots, name) is getattr(module, name), name


@pytest.mark.parametrize("package", ["plots", "topology"])
def test_the_figures_modules_stay_short_enough_to_read(package):
    """No module of the figures or the set-up drawing over 650 lines: one idea each, room for the next feature."""
    root = Path(pathsel.__file__).parent / "results" / package
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in root.glob("*.py")}
    assert len(sizes) > 3
    assert {name: n for name, n in sizes.items() if n > 650} == {}
