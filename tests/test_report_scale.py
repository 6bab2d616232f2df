"""The report at scale (issue 54): the first screen says what happened; long tables summarised, every row a click
away and as CSV; alike key figures folded; per-path heatmaps without 16,384 rows; a 32-host page opened in Chromium."""

from __future__ import annotations

import base64
import csv
import gzip
import io
import json
import re
import sys
from pathlib import Path

import pytest

import pathsel
from pathsel.results import fold, report
from pathsel.results.plots import per_path
from pathsel.results.topology.key_table import FOLD_KIND, fold_alike, key_figures

from .test_report import chromium, open_in_chromium

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from scale import user_cluster_toml  # noqa: E402


def _csv_rows(page: str, file: str = '[^"]+') -> list[list[str]]:
    """The rows of the first CSV download in ``page`` (named ``file``), gunzipped when it is a .csv.gz."""
    m = re.search(rf'<a class="csv" download="({file})" href="data:([^;]+)(?:;charset=utf-8)?;base64,([^"]+)"', page)
    assert m, "no CSV download"
    data = base64.b64decode(m.group(3))
    if m.group(1).endswith(".gz"):
        assert m.group(2) == "application/gzip"
        data = gzip.decompress(data)
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


HEAD = ["name", "IOPS", "p99 (ms)"]


def _rows(n: int) -> list[list[str]]:
    return [[f"p{i}", f"{1000 + i:,}", f"{i / 10:.3f}"] for i in range(n)]


@pytest.mark.parametrize("n", [0, 1, fold.FULL_ROWS])
def test_a_short_table_is_shown_in_full_as_before(n):
    assert fold.folded(report._table, HEAD, _rows(n), {1, 2}, what="path", name="paths", by=2) == report._table(HEAD, _rows(n), {1, 2})


@pytest.mark.parametrize("n", [fold.FULL_ROWS + 1, 500, fold.HTML_ROWS, fold.HTML_ROWS + 1])
def test_a_long_table_names_its_extremes_folds_its_rows_and_offers_every_row_as_csv(n):
    html = fold.folded(report._table, HEAD, _rows(n), {1, 2}, what="path", name="paths", by=2)
    # the highest and lowest by p99 are open, the rest as a spread
    top = html.split("<details>")[0]
    assert f">p{n - 1}<" in top and ">p0<" in top and f">p{n // 2}<" not in top
    assert f"{n:,} paths; p99 (ms): min 0, " in top and f"max {(n - 1) / 10:g}" in top
    assert f"{n - 2 * fold.EXTREMES:,} more" in top
    # every row as CSV: the same cells as the table, a header first; gzipped when long
    rows = _csv_rows(html)
    assert rows == [HEAD, *_rows(n)]
    # every row folded in the page while it stays openable, else a note saying where they are
    if n <= fold.HTML_ROWS:
        assert "<details><summary>Every row" in html and html.count("<tr>") == 1 + 2 * fold.EXTREMES + 1 + 1 + n
    else:
        assert "<details>" not in html and "left out of this page" in html and "pathsel simulate FILE --json" in html


def test_the_csv_is_gzipped_past_its_limit_and_the_same_bytes_each_time():
    small = fold.csv_link("t", HEAD, _rows(3))
    assert 'download="t.csv"' in small and "text/csv" in small
    big = fold.csv_link("t", HEAD, _rows(5000))
    assert 'download="t.csv.gz"' in big and big == fold.csv_link("t", HEAD, _rows(5000))  # mtime fixed: deterministic


@pytest.mark.parametrize(
    "rows, expected",
    [
        # few of a kind: as before, one row each
        (
            [(f"workload vm{i} on esx1", "rw=randread") for i in range(FOLD_KIND)],
            [(f"workload vm{i} on esx1", "rw=randread") for i in range(FOLD_KIND)],
        ),
        # many alike: one row, all alike
        (
            [(f"workload vm{i} on esx{i}, volume ds", "rw=randrw (70 % reads)") for i in range(100)],
            [("100 workloads (vm0 … vm99)", "rw=randrw (70 % reads) (all alike)")],
        ),
        # many, two kinds: a row per kind, in order of first appearance; a lone one keeps its own row
        (
            [(f"host h{i}", "detection 1s") for i in range(10)] + [("host odd", "detection 2s")],
            [("10 hosts (h0 … h9)", "detection 1s (alike)"), ("host odd", "detection 2s")],
        ),
        # hosts' paths to an array: folded per array
        (
            [(f"paths h{i} → {a}", "8 paths") for i in range(10) for a in ("A", "B")],
            [("10 hosts' paths (h0 … h9) → A", "8 paths (alike)"), ("10 hosts' paths (h0 … h9) → B", "8 paths (alike)")],
        ),
        # other rows untouched, in place
        ([("measured", "1 s")], [("measured", "1 s")]),
    ],
)
def test_alike_key_figures_fold_into_one_row(rows, expected):
    assert fold_alike(rows) == expected


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> pathsel.Result:
    """32 hosts x 4 volumes x 8 paths, two policies: every table past its full size, in seconds."""
    path = tmp_path_factory.mktemp("cluster") / "cluster32.toml"
    path.write_text(user_cluster_toml(32, 4, 8, 0.2) + '\n[[policies]]\nspec = "fixed"\n')
    return pathsel.simulate(path, duration="0.2s")


def test_the_cluster_report_names_the_outliers_and_folds_the_alike_workloads(cluster):
    html = report.render(cluster)
    keys = dict(key_figures(cluster))
    assert keys["128 workloads (esx01-vm00 … esx32-vm03)"].endswith("(all alike)")
    assert html.index('id="story"') < html.index('id="comparison"') < html.index('id="outliers"') < html.index('id="setup"')
    outliers = html.split('id="outliers"')[1].split("</ul>")[0]
    assert outliers.count("<li>") == 2 * 2  # VMs and paths of each policy (32 hosts: their table is short)
    assert "slowest esx" in outliers and "fewest IOPS" in outliers
    assert outliers.count("slowest") + outliers.count("p99 alike") == 4
    # 2,048 path rows left out (in the CSV), the 768 workload rows folded: far fewer rows than in full
    assert html.count("<tr>") < 1500 and "left out of this page" in html


def test_the_csv_holds_the_numbers_of_the_json(cluster):
    html = report.render(cluster)
    doc = json.loads(cluster.to_json())  # as --json writes it: NaN as null
    head, *rows = _csv_rows(html, "paths.csv.gz")
    assert head[:3] == ["policy", "name", "host"] and "latency_us_p99" in head
    paths = [(run["policy"], p) for run in doc["runs"] for p in run["paths"]]
    assert len(rows) == len(paths) == 2 * 32 * 4 * 8
    for row, (policy, p) in zip(rows, paths):
        cell = dict(zip(head, row))
        assert cell["policy"] == policy and cell["name"] == p["name"] and int(cell["ios"]) == p["ios"]
        # unrounded: the same float the JSON writes (a blank where it has null)
        assert cell["latency_us_p99"] == ("" if p["latency_us"]["p99"] is None else repr(p["latency_us"]["p99"]))
    head, *rows = _csv_rows(html, r"per-workload\.csv(?:\.gz)?")
    assert "p99_us" in head and len({r[head.index("workload")] for r in rows}) == 128


def test_no_every_path_view_past_its_limit(cluster, monkeypatch):
    names = [t.name for t in per_path.path_share_heatmap(cluster).data]
    assert any(n.endswith("by path") for n in names)
    monkeypatch.setattr(per_path, "EVERY_PATH_MAX", 100)
    fig = per_path.path_share_heatmap(cluster)
    assert not any(t.name.endswith("by path") for t in fig.data) and not fig.layout.updatemenus


_FIRST_SCREEN = """<script>window.addEventListener('load', () => setTimeout(() => {
  const bottom = (sel) => Math.round(document.querySelector(sel).getBoundingClientRect().bottom);
  document.body.setAttribute('data-first', [bottom('.story .overview'), bottom('#comparison + table')].join(','));
}, 300));</script>"""


def test_a_32_host_report_opens_on_its_headline_and_comparison(cluster, tmp_path):
    chromium()
    html = report.render(cluster)
    page = tmp_path / "cluster.html"
    page.write_text(html.replace("</body>", _FIRST_SCREEN + "</body>"), encoding="utf-8")
    dom, _log = open_in_chromium(page, screenshot=tmp_path / "first.png", size=(1366, 768))
    m = re.search(r'data-first="(\d+),(\d+)"', dom)
    assert m, "the probe did not run"
    headline, comparison = int(m.group(1)), int(m.group(2))
    assert 0 < headline < comparison <= 768  # the story's headline and the whole comparison on the first screen


def test_each_policy_has_its_own_extremes():
    # policy A's rows all slower than B's: ranked together, B would have no row among the highest
    rows = [["A", f"a{i}", f"{10 + i / 100:.3f}"] for i in range(50)] + [["B", f"b{i}", f"{i / 100:.3f}"] for i in range(50)]
    html = fold.folded(report._table, ["policy", "name", "p99 (ms)"], rows, {2}, what="path", name="paths", by=2, group=0)
    top = html.split("<details>")[0]
    assert ">a49<" in top and ">a0<" in top and ">b49<" in top and ">b0<" in top and ">b25<" not in top
    assert "50 paths of A; p99 (ms): min 10," in top and "50 paths of B; p99 (ms): min 0," in top and "per policy" in top


def test_the_grouped_heatmap_puts_hosts_together_past_its_limit(cluster, monkeypatch):
    share = next(t for t in per_path.path_share_heatmap(cluster).data if t.name.endswith(": share"))
    assert len(share.y) == 32 * 2 and share.y[0].startswith("esx01: site-a")  # a row per host and array
    monkeypatch.setattr(per_path, "HOSTS_APART", 16)
    share = next(t for t in per_path.path_share_heatmap(cluster).data if t.name.endswith(": share"))
    assert list(share.y) == ["site-a AO (512 paths)", "site-b AO (512 paths)"]


def test_a_long_event_list_says_where_the_rest_is():
    testdrive = pathsel.simulate(Path(__file__).resolve().parent.parent / "sims" / "esxi-latency-testdrive.toml", duration=1.0)
    html = report._events(testdrive, limit=1)
    assert re.search(r"First 1 of [\d,]+ events; every one in <code>pathsel simulate FILE --json</code>", html)


def test_a_summary_counts_the_rows_it_could_not_rank():
    # 20 of 60 paths did no I/O (a blank p99: standby paths): the line still counts all 60, and says how many ranked
    rows = [["A", f"p{i}", f"{1 + i / 100:.3f}" if i < 40 else ""] for i in range(60)]
    html = fold.folded(report._table, ["policy", "name", "p99 (ms)"], rows, {2}, what="path", name="paths", by=2, group=0)
    assert "60 paths (40 with a value, ranked below); p99 (ms): min 1" in html
    full = [["A", f"p{i}", f"{1 + i / 100:.3f}"] for i in range(60)]
    assert "60 paths; p99 (ms)" in fold.folded(report._table, ["policy", "name", "p99 (ms)"], full, {2}, what="path", name="paths", by=2, group=0)
