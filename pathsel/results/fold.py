"""The report's tables at scale (issue 54): a short table in full, a long one summarised with every row a click away.

A 32-host cluster has 16,384 paths and 2,048 VMs: a page listing each of them in full is hundreds of screens that
nobody reads. A table of at most :data:`FULL_ROWS` rows is shown as it always was. A longer one shows its top and
bottom :data:`EXTREMES` rows by one column (the outliers, named) and the spread of the rest (min, quartiles, max),
then every row in a collapsed ``<details>`` section while it has at most :data:`HTML_ROWS` rows, and always a CSV
download of every row.

The CSV is a ``data:`` URI inside the page, not a file beside it: the report stays one file, readable offline and
mailable, and :func:`pathsel.report.render` stays a function of the result alone (no second file to keep in step).
Past :data:`GZIP_BYTES` the CSV is gzipped (``.csv.gz``; compressed with a fixed mtime, so a page is the same bytes
from the same result): a 32,768-row path table is some 3 MB as text and a tenth of that gzipped.
"""

from __future__ import annotations

import base64
import csv
import gzip
import html
import io
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["FULL_ROWS", "HTML_ROWS", "EXTREMES", "GZIP_BYTES", "csv_link", "flat", "folded", "spread"]

#: a table of at most this many rows is shown in full, open, as in a small report
FULL_ROWS = 40
#: above this many rows the full table is left out of the page (the CSV has every row): the page stays openable
HTML_ROWS = 2_000
#: a long table's top and bottom rows shown open, by its sort column
EXTREMES = 5
#: a CSV longer than this many bytes is gzipped in its data: URI
GZIP_BYTES = 64_000


def _plain(v: Any) -> str:
    """A cell as text: a pre-rendered markup cell (a one-tuple) without its tags."""
    if type(v) is str:
        return v
    if not isinstance(v, tuple):
        return str(v)
    if isinstance(v, tuple):
        return html.unescape(re.sub(r"<[^>]+>", " ", str(v[0]))).strip()
    return str(v)


def csv_link(name: str, head: Sequence[str], rows: Sequence[Sequence[Any]], label: str = "Download as CSV") -> str:
    """An ``<a download>`` of ``rows`` as CSV (gzipped past :data:`GZIP_BYTES`), inside the page as a data: URI."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    w.writerows([_plain(v) for v in row] for row in rows)
    data = buf.getvalue().encode("utf-8")
    if len(data) > GZIP_BYTES:
        packed, mime, file = gzip.compress(data, compresslevel=6, mtime=0), "application/gzip", f"{name}.csv.gz"
    else:
        packed, mime, file = data, "text/csv;charset=utf-8", f"{name}.csv"
    uri = f"data:{mime};base64,{base64.b64encode(packed).decode('ascii')}"
    return f'<a class="csv" download="{html.escape(file)}" href="{uri}">{html.escape(label)} ({html.escape(file)}, {len(rows):,} rows)</a>'


def flat(records: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """(head, rows) of records as ``--json`` has them, for a CSV: a nested dict's keys joined by ``_``
    (``latency_us_p99``), numbers unrounded (Python's repr, as the JSON writes them), null (None, NaN) blank."""

    def cells(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in d.items():
            if isinstance(v, dict):
                out.update(cells(v, f"{prefix}{k}_"))
            elif isinstance(v, (list, tuple)):
                out[prefix + k] = " ".join(str(x) for x in v)
            elif v is None or (isinstance(v, float) and not math.isfinite(v)):
                out[prefix + k] = ""
            else:
                out[prefix + k] = v.item() if hasattr(v, "item") else v
        return out

    flats = [cells(d) for d in records]
    head = list(dict.fromkeys(k for f in flats for k in f))
    return head, [[f.get(k, "") for k in head] for f in flats]


def _number(v: Any) -> float:
    """A displayed cell as a number to sort by: ``1,234``, ``3.2%``, ``36.404``; NaN for a blank or a dash."""
    text = _plain(v).replace(",", "").replace("%", "").strip().split(" ")[0]
    try:
        return float(text)
    except ValueError:
        return math.nan


def spread(values: Sequence[float]) -> str:
    """min, quartiles and max of ``values`` (NaNs left out), as a reader scans them."""
    xs = sorted(x for x in values if not math.isnan(x))
    if not xs:
        return "no values"

    def q(f: float) -> float:
        return xs[min(len(xs) - 1, int(round(f * (len(xs) - 1))))]

    return ", ".join(f"{k} {v:,.6g}" for k, v in (("min", xs[0]), ("p25", q(0.25)), ("median", q(0.5)), ("p75", q(0.75)), ("max", xs[-1])))


def folded(
    table: Callable[[list[str], Any, set[int]], str],
    head: list[str],
    rows: Sequence[Sequence[Any]],
    numeric: set[int],
    *,
    what: str,
    name: str,
    by: int | None = None,
    keep: Callable[[Sequence[Any]], bool] | None = None,
    group: int | None = None,
    data: tuple[list[str], list[list[Any]]] | None = None,
) -> str:
    """``rows`` as ``table`` renders them: in full up to :data:`FULL_ROWS`; past that the top and bottom
    :data:`EXTREMES` by column ``by`` (rows ``keep`` accepts: e.g. not a per-op sub-row) with the spread of
    that column (within each value of column ``group``: a policy), every row folded (up to :data:`HTML_ROWS`) and as CSV.

    ``what`` names a row ("path", "workload"), ``name`` the CSV file; the CSV holds ``data`` (:func:`flat`: the
    numbers as ``--json`` has them) when given, else the table's cells as shown."""
    if len(rows) <= FULL_ROWS:
        return table(head, rows, numeric)
    out = []
    if by is not None:
        ranked = [r for r in rows if (keep is None or keep(r)) and not math.isnan(_number(r[by]))]
        ranked.sort(key=lambda r: _number(r[by]), reverse=True)
        # per policy (the first column), when grouped: one policy's outliers are not the other policy's whole table
        parts: dict[Any, list[Sequence[Any]]] = {}
        kept: dict[Any, int] = {}  # every row of a policy, blank or not: the count the reader is told
        for r in rows:  # the policies in the table's order
            if keep is None or keep(r):
                parts.setdefault(r[group] if group is not None else None, [])
                kept[r[group] if group is not None else None] = kept.get(r[group] if group is not None else None, 0) + 1
        for r in ranked:
            parts.setdefault(r[group] if group is not None else None, []).append(r)
        col = head[by]
        shown: list[Sequence[Any]] = []
        for key, part in parts.items():
            if not part:
                continue
            of = f" of {_plain(key)}" if key is not None and len(parts) > 1 else ""
            blank = kept.get(key, len(part)) - len(part)  # e.g. a standby path: no I/O, no latency, not ranked
            counted = f"{len(part) + blank:,} {what}s{of}" + (f" ({len(part):,} with a value, ranked below)" if blank else "")
            out.append(f'<p class="meta">{_e(counted)}; {_e(col)}: {_e(spread([_number(r[by]) for r in part]))}.</p>')
            if len(part) > 2 * EXTREMES:
                gap = [(f'<span class="note">… {len(part) - 2 * EXTREMES:,} more …</span>',)] + [""] * (len(head) - 1)
                shown += [*part[:EXTREMES], gap, *part[-EXTREMES:]]
            else:
                shown += part
        if shown:
            out.append(f'<p class="meta">The {EXTREMES} highest and the {EXTREMES} lowest by {_e(col)}{" per policy" if len(parts) > 1 else ""}:</p>')
            out.append(table(head, shown, numeric))
    link = csv_link(name, *(data or (head, rows)))
    if len(rows) <= HTML_ROWS:
        out.append(f"<details><summary>Every row ({len(rows):,}), one per {_e(what)}</summary>{link}{table(head, rows, numeric)}</details>")
    else:
        out.append(
            f'<p class="meta">The full table ({len(rows):,} rows) is left out of this page to keep it small enough to open: '
            f"{link}, or <code>pathsel simulate FILE --json</code> for every figure.</p>"
        )
    return "".join(out)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)
