"""fio's JSON output (``--output-format=json`` and ``json+``): a latency distribution, and IOPS and latency as figures.

Source: fio, ``stat.c`` (``add_ddir_status_json``, ``add_ddir_lat_json``),
Jens Axboe et al., https://github.com/axboe/fio (read at fio-3.42), and the
fio HOWTO, "Interpreting the output" / ``--output-format``
(https://fio.readthedocs.io/en/latest/fio_doc.html): each job of ``"jobs"``
has a ``"read"``, ``"write"`` (and ``"trim"``) object, or one ``"mixed"``
with ``unified_rw_reporting``, each with ``iops``, ``iops_stddev``,
``iops_samples``, ``total_ios`` and the latencies ``slat_ns``, ``clat_ns``
and ``lat_ns`` in nanoseconds: ``min``, ``max``, ``mean``, ``stddev``,
``N``, a ``percentile`` table (``"99.000000": 123456``) and, with
``json+``, ``bins``: every latency bucket fio kept (its value in ns) and its
count. fio before 3.0 wrote ``clat`` in microseconds; that is read too.

pathsel reads **completion latency** (``clat``): what a path and an array
add to an I/O once it is issued, which is what pathsel simulates.
``json+`` bins give the whole distribution (every I/O fio counted); plain
``json`` gives its percentile table, from ``min`` (at 0) to ``max`` (at 1),
drawn with linear interpolation between the points as sockperf's table is.
fio may print notes before the JSON (``note: both iodepth >= 1 and
synchronous I/O engine ...``); they are skipped.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..limits import MAX_MEASURED_COUNT
from .base import MAX_IOPS, MAX_LATENCY, MeasureError, Measurement, figure, json_document

__all__ = ["load_fio", "fio_latency_table", "fio_measurement", "is_fio", "FIO_OPS"]

FIO_OPS = ("read", "write", "trim", "mixed")


def is_fio(text: str) -> bool:
    return '"fio version"' in text[:4096] or ('"jobs"' in text[:65536] and '"clat' in text)


def load_fio(text: str, source: str) -> dict[str, Any]:
    """The JSON document fio printed (notes before it skipped), or a located MeasureError."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("{")), None)
    if start is None:
        raise MeasureError(source, "line 1", "no JSON object: not fio --output-format=json output")
    doc = json_document("".join(lines[start:]), source, start + 1)
    if not isinstance(doc, dict):
        raise MeasureError(source, "", "not fio --output-format=json output (not a JSON object)")
    # fio writes its options as objects of name -> text; anything else (a list) is no fio output, refused here
    # once for every reader of them (import --workload, calibrate's notes)
    if "global options" in doc and not isinstance(doc["global options"], dict):
        raise MeasureError(source, "global options", f"must be a JSON object of fio's options, got {_kind(doc['global options'])}")
    jobs = doc.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        raise MeasureError(source, "jobs", "no jobs: not fio --output-format=json output" if "jobs" not in doc else "is empty")
    for j, job in enumerate(jobs):
        if not isinstance(job, dict):
            raise MeasureError(source, f"jobs[{j}]", "must be a JSON object")
        if "job options" in job and not isinstance(job["job options"], dict):
            raise MeasureError(source, f"jobs[{j}].job options", f"must be a JSON object of fio's options, got {_kind(job['job options'])}")
        for op in FIO_OPS:  # checked once here: every later use of total_ios trusts it
            if isinstance(job.get(op), dict) and "total_ios" in job[op]:
                _count(job[op]["total_ios"], source, f"jobs[{j}].{op}.total_ios")
    return doc


def _kind(value: Any) -> str:
    """A JSON value's kind, as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "an object" if isinstance(value, dict) else "a number"


def _ops_with_io(doc: dict[str, Any]) -> list[str]:
    found = []
    for op in FIO_OPS:
        if any(isinstance(job.get(op), dict) and _ios(job[op]) > 0 for job in doc["jobs"]):
            found.append(op)
    return found


def _ios(d: dict[str, Any]) -> int:
    """total_ios (load_fio checked it: a whole number in [0, MAX_MEASURED_COUNT])."""
    value = d.get("total_ios", 0)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _count(value: Any, source: str, place: str) -> int:
    """A count fio wrote (a bin's I/Os, total_ios, N): a whole number in [0, MAX_MEASURED_COUNT], as a Python int
    (no overflow however many are summed)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MeasureError(source, place, f"a count must be a whole number >= 0, got {_short(value)}")
    if isinstance(value, float) and not (math.isfinite(value) and value == int(value)):
        raise MeasureError(source, place, f"a count must be a whole number >= 0, got {_short(value)}")
    n = int(value)
    if n < 0:
        raise MeasureError(source, place, f"a count must be a whole number >= 0, got {_short(value)}")
    if n > MAX_MEASURED_COUNT:
        raise MeasureError(source, place, f"a count of {_short(n)} is more than fio counts (2^64 - 1): not fio's output")
    return n


def _short(value: Any) -> str:
    if isinstance(value, int) and abs(value) >= 10**30:  # f"{value:.3e}" overflows past 1e308
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _choose_op(doc: dict[str, Any], source: str, op: str | None) -> str:
    if op is not None:
        if op not in FIO_OPS:
            raise MeasureError(source, "", f"op must be one of {', '.join(FIO_OPS)}, got {op!r}")
        if op not in _ops_with_io(doc):
            has = _ops_with_io(doc)
            raise MeasureError(source, f"jobs[0].{op}", f"no {op} I/Os (total_ios = 0)" + (f": the file has {' and '.join(has)}" if has else ""))
        return op
    has = _ops_with_io(doc)
    if not has:
        raise MeasureError(source, "jobs[0]", "no completed I/Os (total_ios = 0 for read, write and trim)")
    if len(has) > 1:
        raise MeasureError(source, "jobs[0]", f'has both {" and ".join(has)} I/Os: choose one with op = "{has[0]}"')
    return has[0]


def _clat(job: dict[str, Any], j: int, op: str, source: str) -> tuple[dict[str, Any], float, str]:
    """(latency object, seconds per unit, its key) of one job's op."""
    d = job.get(op)
    if not isinstance(d, dict):
        raise MeasureError(source, f"jobs[{j}].{op}", "missing")
    for key, scale in (("clat_ns", 1e-9), ("clat_us", 1e-6), ("clat", 1e-6)):
        if isinstance(d.get(key), dict):
            return d[key], scale, key
    raise MeasureError(source, f"jobs[{j}].{op}.clat_ns", "missing (no completion latency: is the file cut short?)")


def _number(value: Any, source: str, place: str, high: float = math.inf) -> float:
    """A number >= 0 and at most ``high`` (a JSON integer too large for a float is refused, not an OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MeasureError(source, place, f"must be a number >= 0, got {_short(value)}")
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if not (math.isfinite(x) and 0 <= x <= high):
        bound = f" and at most {high:g}" if math.isfinite(high) else ""
        raise MeasureError(source, place, f"must be a number >= 0{bound}, got {_short(value)}")
    return x


def _latency(value: Any, scale: float, source: str, place: str) -> float:
    """A latency in fio's unit as seconds, at most MAX_LATENCY."""
    return _number(value, source, place, MAX_LATENCY / scale) * scale


def _bins(lat: dict[str, Any], scale: float, source: str, place: str) -> dict[float, int]:
    out: dict[float, int] = {}
    for key, count in lat["bins"].items():
        try:
            if not key.isascii():  # float() reads other scripts' digits ('\u0663' as 3); fio writes ASCII
                raise ValueError(key)
            value = float(key) * scale
        except ValueError:
            raise MeasureError(source, f"{place}.bins", f"bin {_short(key)} is not a latency") from None
        # float() reads "nan", "inf" and "1e400" too: fio names its bins by whole nanoseconds
        if not (math.isfinite(value) and 0 <= value <= MAX_LATENCY):
            raise MeasureError(source, f"{place}.bins", f"bin {_short(key)} is not a latency >= 0 and at most {MAX_LATENCY:g} s")
        n = _count(count, source, f"{place}.bins[{_short(key)}]")
        out[value] = out.get(value, 0) + n
    return out


def _table_from_bins(bins: dict[float, int]) -> tuple[np.ndarray, np.ndarray, int]:
    """The piecewise-linear quantile function of the samples the bins hold (np.repeat of them, without the memory).

    Counts are summed as Python integers: in int64 a few bins near 2^63 wrap round, and the p99 came out at the
    smallest bin. Each index / (n - 1) is then a float in [0, 1], exact enough whatever n is.
    """
    items = [(v, bins[v]) for v in sorted(bins) if bins[v] > 0]
    n = sum(c for _, c in items)
    if n == 1:
        return np.array([0.0, 1.0]), np.array([items[0][0]] * 2), 1
    probs, vals = [], []
    end = 0  # sample indices [end - count, end - 1] hold a bin's value
    for v, c in items:
        first, end = end, end + c
        for idx in (first, end - 1) if c > 1 else (first,):
            probs.append(idx / (n - 1))
            vals.append(v)
    return np.array(probs, dtype=np.float64), np.array(vals, dtype=np.float64), n


def fio_latency_table(doc: dict[str, Any], source: str, op: str | None = None) -> tuple[np.ndarray, np.ndarray, int, str]:
    """(probabilities, seconds, I/Os behind it, what) of the completion latency of ``op`` over every job."""
    op = _choose_op(doc, source, op)
    jobs = [(j, job) for j, job in enumerate(doc["jobs"]) if isinstance(job.get(op), dict) and _ios(job[op]) > 0]
    lats = [(j, *_clat(job, j, op, source)) for j, job in jobs]
    if all(isinstance(lat.get("bins"), dict) and lat["bins"] for _, lat, _, _ in lats):
        merged: dict[float, int] = {}
        for j, lat, scale, key in lats:
            for v, c in _bins(lat, scale, source, f"jobs[{j}].{op}.{key}").items():
                merged[v] = merged.get(v, 0) + c
        if not merged or sum(merged.values()) == 0:
            raise MeasureError(source, f"jobs[{lats[0][0]}].{op}.{lats[0][3]}.bins", "holds no I/Os")
        probs, values, n = _table_from_bins(merged)
        return probs, values, n, f"fio {op} completions (json+ bins)"
    if len(lats) > 1:
        raise MeasureError(
            source,
            "jobs",
            f"{len(lats)} jobs with {op} I/Os and no latency bins: their percentile tables cannot be merged "
            "(run fio with --group_reporting, or --output-format=json+)",
        )
    j, lat, scale, key = lats[0]
    place = f"jobs[{j}].{op}.{key}"
    pct = lat.get("percentile")
    if not isinstance(pct, dict) or not pct:
        raise MeasureError(source, f"{place}.percentile", "missing (fio prints it unless clat_percentiles=0)")
    points: dict[float, float] = {}
    for key_p, value in pct.items():
        try:
            if not key_p.isascii():  # as the bins: fio writes ASCII digits
                raise ValueError(key_p)
            p = float(key_p) / 100.0
        except ValueError:
            raise MeasureError(source, f"{place}.percentile", f"{_short(key_p)} is not a percentile") from None
        if not 0.0 < p < 1.0:
            raise MeasureError(source, f"{place}.percentile", f"percentile {_short(key_p)} is not between 0 and 100")
        points[p] = _latency(value, scale, source, f"{place}.percentile[{_short(key_p)}]")
    for end, p in (("min", 0.0), ("max", 1.0)):
        if end not in lat:
            raise MeasureError(source, f"{place}.{end}", "missing (the percentile table needs min and max)")
        points[p] = _latency(lat[end], scale, source, f"{place}.{end}")
    ps = sorted(points)
    vs = [points[p] for p in ps]
    for a, b, pa, pb in zip(vs, vs[1:], ps, ps[1:]):
        if b < a:
            raise MeasureError(source, f"{place}.percentile", f"falls from {a * 1e6:g}us at p{pa * 100:g} to {b * 1e6:g}us at p{pb * 100:g}")
    n = _count(lat.get("N", 0), source, f"{place}.N")
    return np.array(ps), np.array(vs), n, f"fio {op} completions (percentiles)"


def fio_measurement(doc: dict[str, Any], source: str, op: str | None = None) -> Measurement:
    """IOPS, mean, p50 and p99 completion latency of ``op`` (every op with I/Os when None), summed over jobs.

    The percentiles come from json+ bins merged over jobs and ops, else from fio's percentile table
    (``"50.000000"``, ``"99.000000"``) of the one job and op; tables of one job's read and write (randrw)
    cannot be merged into one, so each op keeps its own p50 and p99 (a figure with ``op``)."""
    ops = [op] if op is not None else _ops_with_io(doc)
    if op is not None:
        _choose_op(doc, source, op)
    if not ops:
        raise MeasureError(source, "jobs[0]", "no completed I/Os (total_ios = 0 for read, write and trim)")
    iops = 0.0
    var_iops = 0.0
    noise_known = True
    weighted_mean = 0.0
    ios_total = 0
    bins: dict[float, int] = {}
    have_bins = True
    # per op: the percentile table's p50 and p99 of each job that has the op, for when they cannot be merged
    tables: dict[str, list[dict[str, float]]] = {}
    entries: dict[str, int] = {}  # jobs with I/Os of each op
    lat_entries = 0
    for j, job in enumerate(doc["jobs"]):
        for o in ops:
            d = job.get(o)
            if not isinstance(d, dict) or _ios(d) == 0:
                continue
            place = f"jobs[{j}].{o}"
            if "iops" not in d:
                raise MeasureError(source, f"{place}.iops", "missing (is the file cut short?)")
            iops += _number(d["iops"], source, f"{place}.iops", MAX_IOPS)
            sd, ns = d.get("iops_stddev"), d.get("iops_samples")
            if sd is not None and ns is not None:
                sd = _number(sd, source, f"{place}.iops_stddev", MAX_IOPS)
                ns = _count(ns, source, f"{place}.iops_samples")
            if sd is not None and ns is not None and ns > 1:
                var_iops += sd * sd / ns
            else:
                noise_known = False
            lat, scale, key = _clat(job, j, o, source)
            if "mean" not in lat:
                raise MeasureError(source, f"{place}.{key}.mean", "missing")
            n = _ios(d)
            weighted_mean += _latency(lat["mean"], scale, source, f"{place}.{key}.mean") * n
            ios_total += n
            lat_entries += 1
            entries[o] = entries.get(o, 0) + 1
            if isinstance(lat.get("bins"), dict) and lat["bins"]:
                for v, c in _bins(lat, scale, source, f"{place}.{key}").items():
                    bins[v] = bins.get(v, 0) + c
            else:
                have_bins = False
                given = lat.get("percentile")
                pct = given if isinstance(given, dict) else {}
                found = {}
                for metric, at in (("p50", 50.0), ("p99", 99.0)):
                    hit = next((v for k, v in pct.items() if _is_percentile(k, at)), None)
                    if hit is not None:
                        found[metric] = _latency(hit, scale, source, f"{place}.{key}.percentile")
                tables.setdefault(o, []).append(found)
    # the figures sum or average over jobs: a bad one is located at "jobs"
    figures = [figure(source, "iops", iops, math.sqrt(var_iops) if noise_known and var_iops > 0 else None, where="iops", place="jobs")]
    notes = []
    if ios_total:
        figures.append(figure(source, "mean", weighted_mean / ios_total, where="clat mean", place="jobs"))
    if have_bins and bins:
        probs, values, _ = _table_from_bins(bins)
        for metric, q in (("p50", 0.50), ("p99", 0.99)):
            figures.append(figure(source, metric, float(np.interp(q, probs, values)), where="clat bins", place="jobs"))
    elif lat_entries == 1:
        (found,) = next(iter(tables.values()))
        for metric, value in sorted(found.items()):
            figures.append(figure(source, metric, value, where=f"clat percentile {metric[1:]}.000000", place="jobs"))
    elif lat_entries > 1:
        # one job of randrw: read's and write's tables cannot be merged into one, but each is that op's own figure
        per_op = [o for o, found in tables.items() if entries[o] == 1 and found[0]]
        for o in per_op:
            for metric, value in sorted(tables[o][0].items()):
                figures.append(figure(source, metric, value, where=f"{o} clat percentile {metric[1:]}.000000", place="jobs", op=o))
        merged = "; kept per op" if per_op else ""
        several = [o for o in tables if entries[o] > 1]
        why = f"several jobs with {' and '.join(several)} I/Os" if several else f"{' and '.join(tables)} together"
        notes.append(f"p50 and p99 of {why} left out: percentile tables without json+ bins cannot be merged (--group_reporting or json+){merged}")
    job0 = doc["jobs"][0]
    opts = job0.get("job options", {}) if isinstance(job0.get("job options"), dict) else {}
    glob = doc.get("global options", {}) if isinstance(doc.get("global options"), dict) else {}
    job_opts = {
        k: v for k, v in {**glob, **opts}.items() if k in ("rw", "bs", "iodepth", "numjobs", "rwmixread", "rwmixwrite", "runtime", "filename")
    }
    return Measurement(
        source=source,
        kind="fio",
        figures=tuple(figures),
        device=str(job_opts.get("filename", "")),
        notes=tuple(notes),
        details={"ops": ops, "job options": job_opts, "fio version": doc.get("fio version", ""), "ios": ios_total},
    )


def _is_percentile(key: str, at: float) -> bool:
    try:
        return abs(float(key) - at) < 1e-9
    except ValueError:
        return False
