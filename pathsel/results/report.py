"""A self-contained HTML report of a :class:`~pathsel.results.Result`.

One file, readable offline and mailable: the scenario, the comparison table,
the per-workload (VM) table, the host's CPU per core and the links and switches (issue 33, only
for a run that has them), the per-path table, the policy events, and the figures of
:mod:`pathsel.plots` with plotly.js inlined once, gzip-compressed (:func:`plotly_loader`). No
``<script src=...>``, no fonts or styles fetched from anywhere.

``pathsel.report.write(result, path)`` and ``pathsel report FILE -o report.html``
call :func:`render`.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import math
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from ..outputs import write_atomic
from ..units import format_duration
from ..version import __version__
from .bandwidth import BW_HEAD, fio_bw
from .cpu import BUSY, cpu_rows, cpulist
from .fold import FULL_ROWS, flat, folded
from .plots.latency import latency_cdf, latency_percentiles
from .plots.over_time import FAULT_EVENTS, timeline
from .plots.per_path import path_share_heatmap
from .plots.resources import cpu_heatmap, link_utilisation, wire_rows
from .result import Result
from .story import story
from .topology.figure import topology
from .topology.key_table import key_figures
from .used import used_cell

__all__ = ["render", "write", "default_figures", "plotly_loader"]

# A figure's own script waits under this type until plotly.js is unpacked; the loader then runs each in page order.
DEFERRED = "text/x-pathsel-plot"
_SCRIPT_TAG = re.compile(r"<script\b[^>]*>")


@functools.cache
def plotly_loader() -> str:
    """plotly.js once, gzip-compressed and base64-encoded, and the few lines that unpack it in the browser.

    The bundle is 4.8 MB of the page as text, most of a big report's weight (issue 54: at most 5 MB at 32 hosts);
    gzipped and in base64 it is 2.0 MB. The browser unpacks it with ``DecompressionStream`` (the Compression Streams
    API, WHATWG; Chrome 80, Firefox 113, Safari 16.4 and later), then runs each figure's script in page order. A
    browser without it says so where the figures would be. The bytes are the same for the same plotly (gzip's mtime
    is 0), so a report stays byte for byte the same for the same result.
    """
    from plotly.offline import get_plotlyjs, get_plotlyjs_version

    packed = base64.b64encode(gzip.compress(get_plotlyjs().encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")
    return (
        f'<script type="application/gzip;base64" id="pathsel-plotlyjs">{packed}</script>\n'
        f"<script>/* plotly.js v{get_plotlyjs_version()}, unpacked here, then each figure drawn in page order */\n"
        "(function () {\n"
        '  var packed = document.getElementById("pathsel-plotlyjs");\n'
        "  function draw() {\n"
        "    document.querySelectorAll('script[type=\"" + DEFERRED + "\"]').forEach(function (held) {\n"
        '      var s = document.createElement("script"); s.text = held.text; held.parentNode.replaceChild(s, held);\n'
        "    });\n"
        "  }\n"
        '  if (typeof DecompressionStream === "undefined") {\n'
        '    document.querySelectorAll(".figure").forEach(function (f) {\n'
        '      f.textContent = "This browser cannot unpack the figures (it lacks DecompressionStream: Chrome 80, "\n'
        '        + "Firefox 113, Safari 16.4 or later draw them); the tables above and below hold every number.";\n'
        "    });\n"
        "    return;\n"
        "  }\n"
        "  var bin = atob(packed.textContent), bytes = new Uint8Array(bin.length);\n"
        "  for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);\n"
        '  new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text().then(function (src) {\n'
        '    window.PlotlyConfig = {MathJaxConfig: "local"};\n'
        '    var s = document.createElement("script"); s.text = src; document.head.appendChild(s);\n'
        "    draw();\n"
        "  }).catch(function (e) {\n"
        '    document.querySelectorAll(".figure").forEach(function (f) {\n'
        '      f.textContent = "The figures could not be drawn (" + e + "); the tables hold every number.";\n'
        "    });\n"
        "  });\n"
        "})();\n"
        "</script>"
    )


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1em auto; max-width: 1200px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.5em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.meta { color: #555; margin: 0.2em 0; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #eee; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:hover td { background: #f6f8fa; }
.ok { color: #217a21; } .outside { color: #b22; font-weight: bold; }
.note { color: #555; } .warning { color: #b22; }
.op { padding-left: 1.5em; color: #555; }
.keys td { padding: 0.15em 0.7em; } .keys thead { display: none; }
.story p { margin: 0.4em 0; line-height: 1.45; max-width: 75em; }
.story .overview { font-weight: 600; }
details summary { cursor: pointer; color: #036; margin: 0.5em 0; }
.figure { margin: 1em 0 2em; }
a.csv { display: inline-block; margin: 0.3em 0; }
.outliers li { margin: 0.2em 0; }
footer { color: #777; font-size: 0.85em; margin-top: 3em; }
"""


def default_figures(result: Result) -> list[tuple[str, str, go.Figure]]:
    """The report's figures: (id, heading, figure)."""
    return [
        ("setup", "The set-up", topology(result)),
        ("timeline", "IOPS and latency over time", timeline(result)),
        ("percentiles", "Latency percentiles", latency_percentiles(result)),
        ("cdf", "Latency distribution", latency_cdf(result)),
        ("paths", "Share of I/Os per path, and path state", path_share_heatmap(result)),
        # issue 33, only for a run that has them; drawn in their sections, "Host CPU" and "Links and switches"
        *([("cpu", "Host CPU per core", cpu_heatmap(result))] if _has_cpu(result) else []),
        *([("links", "Wires: utilisation and back-pressure", link_utilisation(result))] if _wire_runs(result) else []),
    ]


def _has_cpu(result: Result) -> bool:
    return any(r.model.cpu is not None and r.metrics.cpu_busy is not None for r in result.runs)


def _wire_runs(result: Result) -> list[Any]:
    """The runs whose wires the report shows: with shared links, a fabric or a transport (framing)."""
    return [r for r in result.runs if r.model.links or r.model.fabric or r.metrics.frame_bytes is not None]


class _Rows:
    """A run's per-path, per-host, per-device and per-workload rows, each computed once for a report: the outliers
    and the tables read the same rows (at 32 hosts each costs a fraction of a second)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int, str], list[dict[str, Any]]] = {}

    def __call__(self, r: Any, kind: str) -> list[dict[str, Any]]:
        key = (id(r), kind)
        if key not in self._seen:
            self._seen[key] = getattr(r, kind)()
        return self._seen[key]


def _records(result: Result, of: _Rows, kind: str) -> tuple[list[str], list[list[Any]]] | None:
    """A table's rows for its CSV as ``--json`` has them (unrounded), the policy first; None for a short table (no CSV)."""
    records = [{"policy": r.label, **x} for r in result.runs for x in of(r, kind)]
    return flat(records) if len(records) > FULL_ROWS else None


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _table(head: list[str], rows: Iterable[list[Any]], numeric: set[int]) -> str:
    out = ["<table><thead><tr>"]
    out += [f'<th class="num">{_e(h)}</th>' if i in numeric else f"<th>{_e(h)}</th>" for i, h in enumerate(head)]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for i, v in enumerate(row):
            cls = ' class="num"' if i in numeric else ""
            # a cell may be pre-rendered markup: (markup,) as a one-tuple
            out.append(f"<td{cls}>{v[0] if isinstance(v, tuple) else _e(v)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _ms(us: float) -> str:
    return "" if us is None or (isinstance(us, float) and math.isnan(us)) else f"{us / 1e3:.3f}"


def _latency_cells(lat: dict[str, float]) -> list[str]:
    """The latency columns of a comparison row; a dash where no I/O completed."""
    return [_ms(lat[k]) or "–" for k in ("mean", "p50", "p99", "p999", "max")]


def _comparison(result: Result) -> str:
    head = ["policy", "spec", "IOPS", BW_HEAD, "mean (ms)", "p50 (ms)", "p99 (ms)", "p99.9 (ms)", "max (ms)", "paths used", "measured IOPS"]
    rows = []
    for r in result.runs:
        lat = r.latency_us
        expected: Any = ""
        if r.expect_iops is not None:
            err = r.expectation_error or 0.0
            ok = abs(err) <= r.expect_tolerance
            cls, word = ("ok", "ok") if ok else ("outside", "OUTSIDE")
            expected = (
                f'{r.expect_iops:,.0f} <span class="{cls}">({err:+.1%}, {word} at ±{r.expect_tolerance:.0%})</span>'
                + (f"<br><small>{_e(r.expect_source)}</small>" if r.expect_source else ""),
            )
        rows.append([r.label, r.policy, f"{r.iops:,.0f}", fio_bw(r.mbps), *_latency_cells(lat), used_cell(r), expected])
        ops = r.ops()
        if len(ops) > 1:  # a mix: reads and writes apart, as fio prints them
            rows += [
                [(f'<span class="op">{o["op"]}</span>',), "", f"{o['iops']:,.0f}", fio_bw(o["mbps"]), *_latency_cells(o["latency_us"]), "", ""]
                for o in ops
            ]
    notes = [
        f'<p class="note">{_e(r.label)}: no I/O completed in the measured window, so no latency (–): {_e(r.no_io_reason())}</p>'
        for r in result.runs
        if not r.ios
    ]
    notes += [f'<p class="warning">Warning: {_e(r.label)}: {_e(w)}</p>' for r in result.runs for w in r.warnings()]
    return _table(head, rows, {2, 3, 4, 5, 6, 7, 8}) + "".join(notes)


def _paths(result: Result, rows_of: _Rows | None = None) -> str:
    of = rows_of or _Rows()
    several_hosts = any(len(r.model.hosts) > 1 for r in result.runs)
    head = [
        "policy",
        *(["host"] if several_hosts else []),
        "path",
        "array",
        "ALUA at end",
        "I/Os",
        "share",
        "IOPS",
        "in flight (mean)",
        "mean (ms)",
        "p50 (ms)",
        "p99 (ms)",
    ]
    rows = []
    for r in result.runs:
        for p in of(r, "paths"):
            lat = p["latency_us"]
            rows.append(
                [
                    r.label,
                    *([p["host"]] if several_hosts else []),
                    p["name"],
                    p["array"],
                    p["alua"],
                    f"{p['ios']:,}",
                    f"{p['share']:.1%}",
                    f"{p['iops']:,.0f}",
                    f"{p['in_flight_mean']:.2f}",
                    *(_ms(lat[k]) if p["ios"] else "" for k in ("mean", "p50", "p99")),
                ]
            )
    k = 1 if several_hosts else 0
    return folded(
        _table, head, rows, set(range(4 + k, 11 + k)), what="path", name="paths", by=len(head) - 1, group=0, data=_records(result, of, "paths")
    )


def _breakdowns(result: Result, rows_of: _Rows | None = None) -> str:
    """Per host, per device and per op, where they say more than the comparison does."""
    of = rows_of or _Rows()
    several_hosts = any(len(r.model.hosts) > 1 for r in result.runs)
    several_devices = any(len(r.model.devices) > len(r.model.hosts) for r in result.runs)
    out = []
    head = [
        "policy",
        "I/Os",
        "share",
        "IOPS",
        BW_HEAD,
        "mean (ms)",
        "p50 (ms)",
        "p99 (ms)",
        "p99.9 (ms)",
        "max (ms)",
        "paths used",
        "in flight (mean)",
    ]
    for by, show, names, note in (
        ("host", several_hosts, ["host"], "Latency here is the time on the host's paths."),
        ("device", several_devices, ["host", "device"], "A device is one host's view of one volume."),
    ):
        if not show:
            continue
        rows = []
        for r in result.runs:
            for g in of(r, "hosts" if by == "host" else "devices"):
                lat = g["latency_us"]
                rows.append(
                    [
                        r.label,
                        *(g[n] for n in names),
                        f"{g['ios']:,}",
                        f"{g['share']:.1%}",
                        f"{g['iops']:,.0f}",
                        fio_bw(g["mbps"]),
                        *(_latency_cells(lat) if g["ios"] else [""] * 5),
                        f"{g['paths_used']} of {g['paths']}",
                        f"{g['in_flight_mean']:.2f}",
                    ]
                )
        k = len(names)
        cols = [head[0], *names, *head[1:]]
        table = folded(
            _table,
            cols,
            rows,
            set(range(1 + k, len(head) + k)),
            what=by,
            name=f"per-{by}",
            by=cols.index("p99 (ms)"),
            group=0,
            data=_records(result, of, f"{by}s"),
        )
        out.append(f'<h3>Per {by}</h3><p class="meta">{_e(note)}</p>' + table)
    if any(len(r.ops()) > 1 for r in result.runs):
        out.append('<h3>Per op</h3><p class="meta">Reads and writes apart, as fio prints them; also under each policy in the comparison.</p>')
        rows = [
            [
                r.label,
                o["op"],
                f"{o['ios']:,}",
                f"{o['ios'] / max(r.ios, 1):.1%}",
                f"{o['iops']:,.0f}",
                fio_bw(o["mbps"]),
                *_latency_cells(o["latency_us"]),
            ]
            for r in result.runs
            for o in r.ops()
        ]
        out.append(_table(["policy", "op", *head[1:10]], rows, set(range(2, 11))))
    if not out:
        return ""
    return '<h2 id="breakdowns">Per host, device and op</h2>' + "".join(out)


def _workloads(result: Result, rows_of: _Rows | None = None) -> str:
    """Per workload (a VM or fio job) and op, as esxtop's VM view: what each VM saw, a noisy neighbour's effect."""
    of = rows_of or _Rows()
    head = ["policy", "workload", "device", "I/Os", "IOPS", "MB/s", "GAVG (ms)", "KAVG (ms)", "DAVG (ms)", "ACTV", "QUED"]
    head += ["p50 (ms)", "p99 (ms)", "p99.9 (ms)"]
    rows = []
    for r in result.runs:
        ws = of(r, "workloads")
        mixed = {w["workload"] for w in ws if w["op"] == "write"} & {w["workload"] for w in ws if w["op"] == "read"}
        for w in ws:
            if w["op"] != "all" and w["workload"] not in mixed:
                continue
            first = [r.label, w["workload"], w["device"]] if w["op"] == "all" else ["", (f'<span class="op">{_e(w["op"])}</span>',), ""]
            rows.append(
                [
                    *first,
                    f"{w['ios']:,}",
                    f"{w['iops']:,.0f}",
                    f"{w['mbps']:,.1f}",
                    *((_ms(w[k]) or "–") for k in ("gavg_us", "kavg_us", "davg_us")),
                    *("" if w[k] is None else f"{w[k]:.1f}" for k in ("actv", "qued")),
                    *((_ms(w[k]) or "–") for k in ("p50_us", "p99_us", "p999_us")),
                ]
            )
    if not rows:
        return ""
    note = (
        "Latency as the VM sees it, from issue to completion: GAVG = KAVG (queued in the host) + DAVG; "
        "ACTV and QUED are the mean I/Os active on the device and waiting in the host."
    )
    table = folded(
        _table,
        head,
        rows,
        set(range(3, len(head))),
        what="workload",
        name="per-workload",
        by=head.index("p99 (ms)"),
        keep=lambda row: row[0] != "",
        group=0,
        data=_records(result, of, "workloads"),
    )
    return f'<h2 id="workloads">Per workload (VM)</h2><p class="meta">{_e(note)}</p>' + table


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _cpu(result: Result, figure: str) -> str:
    """Per host with a cpu table, its cores' utilisation as esxtop's %USED: per NUMA node, then per core (folded)."""
    per = [(r, cpu_rows(r)) for r in result.runs]
    if not any(rows for _r, rows in per):
        return ""
    summary, cores = [], []
    for r, rows in per:
        ios = {h["host"]: h["ios"] for h in r.hosts()}
        for host in dict.fromkeys(x["host"] for x in rows):
            mine = [x for x in rows if x["host"] == host]
            busy_s = sum(x["utilisation"] for x in mine) * r.model.duration
            for n in dict.fromkeys(x["node"] for x in mine):
                on = [x for x in mine if x["node"] == n]
                u = [x["utilisation"] for x in on]
                hot = [x["core"] for x in on if x["utilisation"] >= BUSY]
                idle = [x["core"] for x in on if x["utilisation"] < 0.01]
                summary.append(
                    [
                        r.label,
                        host,
                        n,
                        cpulist([x["core"] for x in on]),
                        _pct(sum(u) / len(u)),
                        _pct(max(u)),
                        cpulist(hot) or "–",
                        cpulist(idle) or "–",
                        # CPU time per I/O, measured: the host's busy seconds over its completed I/Os (all nodes)
                        (f"{busy_s / ios[host] * 1e6:.2f}" if ios.get(host) else "–") if n == mine[0]["node"] else "",
                    ]
                )
            cores += [[r.label, host, x["node"], x["core"], _pct(x["utilisation"])] for x in mine]
    note = (
        "Each core's busy time in the measured window (submissions, completions and their interrupts) over the window, "
        f"as esxtop's %USED or mpstat's per-CPU view; a core at least {100 * BUSY:.0f} % busy is saturated: the work queued "
        "for it waits. CPU per I/O is the host's busy time over its completed I/Os (the NUMA factor included)."
    )
    head = ["policy", "host", "NUMA node", "cores", "mean %USED", "max %USED", f"cores ≥ {100 * BUSY:.0f} %", "idle cores", "CPU per I/O (µs)"]
    return (
        f'<h2 id="cpu">Host CPU</h2><p class="meta">{_e(note)}</p>'
        + _table(head, summary, {2, 4, 5, 8})
        + figure
        + "<details><summary>One row per policy and core (measured window)</summary>"
        + folded(_table, ["policy", "host", "NUMA node", "core", "%USED"], cores, {2, 3, 4}, what="core", name="cores", by=4, group=0)
        + "</details>"
    )


_KINDS = {
    "path": "path",
    "link": "shared link",
    "isl": "ISL",
    "port": "port link",
    "replication": "replication",
    "inter_controller": "inter-controller",
}


def _wires(result: Result, figure: str) -> str:
    """Each wire's utilisation, payload (framing) and back-pressure (the fabric): the shared links, ISLs and port links
    a run has, and with framing each path's own wire. Nothing for a run without shared links, a fabric or a transport."""
    runs = _wire_runs(result)
    if not runs:
        return ""
    rows = [(i, r, w) for i, r in enumerate(runs) for w in wire_rows(r)]
    order: dict[tuple[str, str], int] = {}
    for _i, _r, w in rows:
        order.setdefault((w["name"], w["direction"]), len(order))
    rows.sort(key=lambda x: (order[(x[2]["name"], x[2]["direction"])], x[0]))  # a wire's policies together, to compare
    framed = any("payload_mb_s" in w for _i, _r, w in rows)
    held = any("held" in w for _i, _r, w in rows)
    head = ["wire", "kind", "direction", "policy", "frames", "utilisation", "queue wait (µs)"]
    head += ["payload MB/s", "payload share"] if framed else []
    head += ["held"] if held else []
    body, hot_body = [], []
    for _i, r, w in rows:
        full = w["utilisation"] >= 0.95
        util = (f'<span class="outside">{_pct(w["utilisation"])}</span>',) if full else _pct(w["utilisation"])
        row: list[Any] = [w["name"], _KINDS.get(w["kind"], w["kind"]), _DIR.get(w["direction"], w["direction"]), r.label]
        row += [f"{w['frames']:,}", util, f"{w['queue_wait_us']:.2f}"]
        if framed:
            row += [f"{w['payload_mb_s']:,.1f}", _pct(w["payload_share"])] if "payload_mb_s" in w else ["", ""]
        h = w.get("held", 0.0)
        if held:
            row.append((f'<span class="outside">{_pct(h)}</span>',) if h >= 0.01 else _pct(h))
        body.append(row)
        if w["utilisation"] >= HOT_WIRE or h >= 0.01:
            hot_body.append(row)
    notes = [
        "Per wire and direction: the share of the run it was busy serialising frames (at most 100 %) and the mean wait of a frame queued for it."
    ]
    if framed:
        notes.append(
            "With a transport (FC, iSCSI, NVMe/TCP...): payload MB/s is the data carried; payload share is the data's part "
            "of the bytes on the wire, the rest being frame headers, trailers and gaps."
        )
    if held:
        notes.append(
            "Held: the share of the measured window the link had sent its frames and waited for the next link to drain "
            "them (back-pressure from a slow-drain port behind it: FC buffer-to-buffer credits not returned, no R_RDY)."
        )
    if any(r.model.links for r in runs):
        notes.append("Each path's route over the links is in the set-up's key figures.")
    numeric = {4, 5, 6, *((7, 8) if framed else ()), *((len(head) - 1,) if held else ())}
    if len(body) <= FOLD_WIRES:
        table = _table(head, body, numeric)
    else:  # many wires: the busy and held ones open, every one folded
        table = (
            (
                f"<h3>Wires at least {100 * HOT_WIRE:.0f} % busy or held by back-pressure</h3>" + _table(head, hot_body, numeric)
                if hot_body
                else f'<p class="meta">No wire was {100 * HOT_WIRE:.0f} % busy or held by back-pressure.</p>'
            )
            + f"<details><summary>Every wire: one row per wire, direction and policy ({len(body)} rows)</summary>"
            + _table(head, body, numeric)
            + "</details>"
        )
    return f'<h2 id="links">Links and switches</h2>{_fabric(runs[0])}<p class="meta">{_e(" ".join(notes))}</p>' + table + figure


#: above this many rows the wire table is folded, the wires at least HOT_WIRE busy (or held) shown open
FOLD_WIRES = 40
HOT_WIRE = 0.8


_DIR = {"to_array": "to the array", "to_host": "to the host"}


def _fabric(r: Any) -> str:
    """The fabric as the scenario gives it: each switch and its latency, each link with ends, speed and credits."""
    model = r.model
    out = []
    if model.switches:
        sw = ", ".join(f"{s.name} ({format_duration(s.latency)} latency)" if s.latency else s.name for s in model.switches)
        out.append(f'<p class="meta">Switches: {_e(sw)}.</p>')
    rows = []
    for ln in model.links:
        ends = " ↔ ".join(ln.between) if ln.between else "–"
        credits = f"{ln.bb_credits} × {ln.frame_size:,} B" if ln.bb_credits else "–"
        bound = ""
        if ln.credit_bytes > 0:  # what the credits allow over the round trip, when below the speed
            rate = min(ln.rate(0), ln.rate(1))
            bound = f"{rate / 1e6:,.0f}" + (" (the speed)" if rate >= ln.bandwidth else "")
        rows.append([ln.name, ends, f"{ln.bandwidth / 1e6:,.0f}" if ln.bandwidth else "–", credits, bound])
    if rows:
        head = ["link", "between", "speed (MB/s)", "bb_credits × frame", "credit bound (MB/s)"]
        if not any(ln.credit_bytes > 0 or ln.between for ln in model.links):
            rows, head = [x[:3:2] for x in rows], ["link", "speed (MB/s)"]
            return "".join(out) + _table(head, rows, {1})
        out.append(_table(head, rows, {2, 4}))
    return "".join(out)


def _stalls(result: Result) -> str:
    """Per policy, fault and host: the longest I/O outstanding during the fault (issue to completion or failure),
    the I/Os then, those of 100 ms or more, and the VMs they froze (RunResult.stalls; '' without faults)."""
    rows = []
    for r in result.runs:
        for f in r.faults():
            if f.get("after_end"):
                continue
            for h in f["by_host"]:
                vms = ", ".join(w["workload"] for w in f["frozen"] if w["host"] == h["host"])
                rows.append(
                    [
                        r.label,
                        f"{f['at_s']:g} s {f['what']} {f['target']}",
                        h["host"],
                        f"{h['max_stall_ms']:.3g}",
                        f"{h['ios']:,}",
                        f"{h['stalled_ios']:,}",
                        vms or "none",
                    ]
                )
    if not rows:
        return ""
    note = "Per host, every I/O outstanding at some time during the fault (to the next change), from issue to completion or failure; a VM froze when one of its I/Os took 100 ms or more."
    head = ["policy", "fault", "host", "longest (ms)", "I/Os", "≥ 100 ms", "frozen VMs"]
    return f'<h3 id="stalls">Fault stalls per host and VM</h3><p class="meta">{_e(note)}</p>' + _table(head, rows, {3, 4, 5})


def _events(result: Result, limit: int = 200) -> str:
    rows = []
    several_devices = any(len(r.model.devices) > len(r.model.hosts) for r in result.runs)
    for r in result.runs:
        model = r.model
        host_of = {d.name: (model.hosts[d.host], d.volume, d.host) for d in model.devices}
        fault_times = sorted({f.at for f in model.faults})
        for e in r.metrics.events:
            what = e["event"]
            host, volume, h = host_of.get(e.get("device", ""), ("", "", None))
            if what == "fault":
                f = next((f for f in model.faults if f.origin == e.get("fault") and f.revert == e.get("revert")), None)
                target = r.fault_target(f) if f is not None else ""
                state = f" -> {f.state}" if f is not None and f.state else ""
                detail = f"{e.get('what', '')} {target}{state}{' (undone)' if e.get('revert') else ''} on the wire"
                if e.get("what") in ("path_down", "path_up", "array_down", "array_up"):
                    detail += "; hosts notice it after their detection delay"
                what = "fault"
            elif what == "evaluation":
                detail = f"kept {len(e.get('active', ()))} path(s), dropped {len(e.get('dropped', ()))}"
                if e.get("dropped"):
                    shown = ", ".join(e["dropped"][:6])
                    detail += f": {shown}{', ...' if len(e['dropped']) > 6 else ''}"
            elif what in FAULT_EVENTS:
                detail = f"{e.get('path', '')} now {e.get('alua', '?')}, {'up' if e.get('up', True) else 'down'}"
                # why it comes later than the fault: the host's detection delay
                detection = model.host_params[h].detection if h is not None and model.host_params else None
                before = [t for t in fault_times if t <= e["t"] + 1e-12]
                if detection and before and math.isclose(e["t"] - before[-1], detection, abs_tol=1e-9):
                    detail += f" (noticed {detection:g} s after the fault at {before[-1]:g} s: the host's detection delay)"
            elif what == "sampling_started":
                detail = f"sampling {len(e.get('candidates', ()))} path(s)"
            else:
                detail = ", ".join(f"{k}={v}" for k, v in e.items() if k not in ("t", "event", "device"))
            rows.append([f"{e['t']:.4f}", r.label, host, *([volume] if several_devices else []), what, detail])
    if not rows:
        return "<p>No policy events or faults.</p>"
    rows.sort(key=lambda row: float(row[0]))
    # the page says what it left out and where the rest is (issue 54)
    note = (
        f"<p>First {limit} of {len(rows):,} events; every one in <code>pathsel simulate FILE --json</code> (each run's <code>events</code>).</p>"
        if len(rows) > limit
        else ""
    )
    head = ["t (s)", "policy", "host", *(["volume"] if several_devices else []), "event", "detail"]
    return note + _table(head, rows[:limit], {0})


def _n_paths(result: Result) -> int:
    return sum(len(r.model.paths) for r in result.runs)


def _p99_host(x: dict[str, Any]) -> float:
    return float(x["latency_us"]["p99"])


def _p99_vm(x: dict[str, Any]) -> float:
    return float("nan") if x["p99_us"] is None else float(x["p99_us"])


_p99_of: dict[str, Callable[[dict[str, Any]], float]] = {"host": _p99_host, "VM": _p99_vm, "path": _p99_host}
_name_of: dict[str, Callable[[dict[str, Any]], str]] = {
    "host": lambda x: str(x["host"]),
    "VM": lambda x: str(x["workload"]),
    "path": lambda x: f"{x['host']}/{x['name']}",
}


def _outliers(result: Result, rows_of: _Rows | None = None) -> str:
    """The hosts, VMs and paths furthest from the rest, named, for a run with more of them than a table shows in
    full (issue 54): the highest p99 and the fewest IOPS against the median. Nothing for a small run: its tables
    show every row."""
    of = rows_of or _Rows()
    items = []
    for r in result.runs:
        for what, rows in (
            ("host", of(r, "hosts") if len(r.model.hosts) > 1 else []),
            ("VM", [w for w in of(r, "workloads") if w["op"] == "all"]),
            ("path", [p for p in of(r, "paths") if p["ios"]]),
        ):
            if len(rows) <= FULL_ROWS:
                continue
            p99, name = _p99_of[what], _name_of[what]
            lat = sorted((x for x in rows if not math.isnan(p99(x))), key=p99)
            iops = sorted(rows, key=lambda x: x["iops"])
            if not lat:
                continue
            mid, slow = lat[len(lat) // 2], lat[-1]
            few, mid_iops = iops[0], iops[len(iops) // 2]["iops"]
            # a slowest that is the median's equal is no outlier: say they are alike, not one name among equals
            slowest = (
                f"p99 alike, {_ms(p99(slow))} ms each"
                if _ms(p99(slow)) == _ms(p99(mid))
                else f"slowest {_e(name(slow))}, p99 {_ms(p99(slow))} ms (median {what} {_ms(p99(mid))} ms)"
            )
            items.append(
                f"<li><b>{_e(r.label)}</b>, {len(rows):,} {what}s: {slowest}; "
                f"fewest IOPS {_e(name(few))}, {few['iops']:,.0f} (median {mid_iops:,.0f}).</li>"
            )
    if not items:
        return ""
    return '<h3 id="outliers">Outliers</h3><ul class="outliers">' + "".join(items) + "</ul>"


def _key_figures(result: Result) -> str:
    rows = key_figures(result)
    if not rows:
        return ""
    return '<div class="keys">' + _table(["", ""], ([(f"<b>{_e(k)}</b>",), v] for k, v in rows), set()) + "</div>"


def _story(result: Result) -> tuple[str, str]:
    """What happened, in words: (the overview, a paragraph per policy).

    The report puts the comparison between the two: the headline and the table then fill the first screen however
    long each policy's paragraph grows (at 128 hosts they run to several lines each).
    """
    overview, policies = ['<div class="story">'], ['<div class="story">']
    for label, said in story(result):
        if label is None:
            overview.append(f'<p class="overview">{_e(" ".join(said))}</p>')
        else:
            policies.append(f"<p><b>{_e(label)}</b>: {_e(' '.join(said))}</p>")
    return (
        "".join(overview) + "</div>" if len(overview) > 1 else "",
        "".join(policies) + "</div>" if len(policies) > 1 else "",
    )


def render(
    result: Result,
    *,
    title: str | None = None,
    figures: list[tuple[str, str, go.Figure]] | None = None,
) -> str:
    """The report as one HTML document (a string).

    ``figures`` replaces :func:`default_figures` (a list of (id, heading,
    figure)); plotly.js is inlined once, packed, at the end.
    """
    figures = default_figures(result) if figures is None else figures
    name = title or result.scenario
    # the set-up figure opens the report, beside its key figures; the others follow the tables
    setup = [f for f in figures if f[0] == "setup"][:1]
    figures = setup + [f for f in figures if f not in setup]
    # the host's CPU and the wires (issue 33) are drawn in their own sections, beside their tables
    shown = {"cpu": _has_cpu(result), "links": bool(_wire_runs(result))}
    inline = {fid: f for f in figures if shown.get(fid := f[0], False)}

    rows_of = _Rows()
    told = _story(result)
    inlined = [False]  # whether any figure was drawn: plotly.js then goes once, at the end (plotly_loader)

    def figure_html(i: int, fid: str, heading: str, fig: go.Figure, *, heading_tag: bool = True) -> str:
        div = fig.to_html(
            full_html=False,
            include_plotlyjs=False,  # once, packed, at the end of the page (plotly_loader)
            div_id=f"fig-{fid}",
            config={"displaylogo": False, "responsive": True},
        )
        tags = _SCRIPT_TAG.findall(div)  # plotly 5 writes <script type="text/javascript">, 6 and later <script>
        if len(tags) != 1:  # the one script plotly writes for a figure
            raise RuntimeError(f"plotly's figure HTML has changed: {len(tags)} scripts in figure {fid}")
        div = div.replace(tags[0], f'<script type="{DEFERRED}">', 1)
        inlined[0] = True
        head = f'<h2 id="{_e(fid)}">{_e(heading)}</h2>' if heading_tag else ""
        return f'{head}<div class="figure" data-figure="{_e(fid)}">{div}</div>'

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="pathsel {_e(__version__)}">',
        f"<title>{_e(name)} · pathsel report</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(name)}</h1>",
        f'<p class="meta">Scenario: <code>{_e(result.source)}</code></p>',
        f'<p class="meta">engine {_e(result.engine)} · seed {result.seed} · measured {result.duration_s:g} s after a '
        f"{result.ramp_s:g} s ramp · {len(result.runs)} polic{'y' if len(result.runs) == 1 else 'ies'}</p>",
        # the first screen says what happened (issue 54): the story's headline, the policies compared, each policy in
        # words, the outliers; then the set-up and the detail
        '<h2 id="story">What happened</h2>',
        told[0],
        '<h2 id="comparison">Comparison</h2>',
        _comparison(result),
        told[1],
        _outliers(result, rows_of),
        '<h2 id="setup">The set-up</h2>',
        *(figure_html(0, fid, heading, fig, heading_tag=False) for fid, heading, fig in setup),
        _key_figures(result),
        _breakdowns(result, rows_of),
        _workloads(result, rows_of),
        # the host's CPU and the wires (issue 33): only for a run that has them; their figures beside their tables
        *(
            part
            for part in (
                _cpu(result, figure_html(1, *inline["cpu"], heading_tag=False) if "cpu" in inline else ""),
                _wires(result, figure_html(1, *inline["links"], heading_tag=False) if "links" in inline else ""),
            )
            if part  # nothing, not even a blank line, for a run without them
        ),
        '<h2 id="events">Policy events and faults</h2>',
        _stalls(result),
        _events(result),
    ]
    for i, (fid, heading, fig) in enumerate(figures):
        if i >= len(setup) and fid not in inline:
            parts.append(figure_html(i, fid, heading, fig))
    paths = _paths(result, rows_of)
    parts += [
        '<h2 id="per-path">Per path</h2>',
        # a short table folded as always; a long one's summary open, its rows folded within it (fold.py)
        f"<details><summary>One row per policy and path (measured window)</summary>{paths}</details>" if _n_paths(result) <= FULL_ROWS else paths,
        f"<footer>Made by pathsel {_e(__version__)}. Times are from the start of the run, the ramp included; "
        "tables cover the measured window only.</footer>",
        plotly_loader() if inlined[0] else "",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p)  # nothing, not even a blank line, for a section a run lacks


def write(result: Result, path: str | Path, **kwargs: Any) -> Path:
    """Write :func:`render`'s document to ``path`` (UTF-8) and return the path.

    Rendered first, then written atomically (:func:`pathsel.outputs.write_atomic`): an error while drawing a
    figure, or a full disk, leaves the file that was there.
    """
    return write_atomic(path, render(result, **kwargs))
