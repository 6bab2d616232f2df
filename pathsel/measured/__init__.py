"""Measurements in: fio JSON, esxtop batch CSV, ``iostat -x`` and pathsel's own JSON, as figures to reproduce.

:func:`read_measurements` reads a file (its kind found from its content, or
given) into :class:`Measurement` objects: IOPS, mean and p99 latency of a
device, and per path where the file has them. ``pathsel calibrate`` fits a
scenario's unknowns to them; a fio file is also an empirical latency
distribution in a scenario (``{ dist = "empirical", file = "fio.json",
format = "fio", op = "write" }``, :mod:`pathsel.timing.distributions`).
"""

from __future__ import annotations

import math
from pathlib import Path

from .base import METRICS, Figure, MeasureError, Measurement, figure, json_document, read_text
from .esxtop import is_esxtop, read_esxtop
from .fio import fio_latency_table, fio_measurement, is_fio, load_fio
from .iostat import is_iostat, read_iostat

__all__ = [
    "Figure",
    "Measurement",
    "MeasureError",
    "METRICS",
    "MEASUREMENT_KINDS",
    "read_measurements",
    "fio_latency_table",
    "load_fio",
    "read_text",
]

MEASUREMENT_KINDS = ("auto", "fio", "esxtop", "iostat", "pathsel")


def _detect(text: str) -> str:
    head = text.lstrip("\ufeff \t\r\n")
    if is_esxtop(head):
        return "esxtop"
    if '"pathsel_version"' in text[:2048] and '"runs"' in text:
        return "pathsel"
    if is_fio(text):
        return "fio"
    if is_iostat(text):
        return "iostat"
    return ""


def _pathsel(text: str, source: str) -> list[Measurement]:
    """``pathsel simulate --json``: one Measurement per run (its label is the run it measured)."""
    doc = json_document(text, source)
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or not runs:
        raise MeasureError(source, "runs", "missing or empty: not pathsel simulate --json output")
    out = []
    for i, run in enumerate(runs):
        place = f"runs[{i}]"
        if not isinstance(run, dict):
            raise MeasureError(source, place, "not a pathsel run (not a JSON object)")
        try:
            lat = run["latency_us"]
            figures = [
                figure(source, "iops", _float(run["iops"]), where=f"{place}.iops"),
                figure(source, "mean", _float(lat["mean"]) * 1e-6, where=f"{place}.latency_us.mean"),
                figure(source, "p99", _float(lat["p99"]) * 1e-6, where=f"{place}.latency_us.p99"),
            ]
            paths = run.get("paths", [])
            if not isinstance(paths, list):
                raise TypeError("paths is not a list")
            seen: set[str] = set()
            for k, p in enumerate(paths):
                ios = p.get("ios", 0)
                if isinstance(ios, bool) or not isinstance(ios, (int, float)) or not ios >= 0:
                    raise MeasureError(source, f"{place}.paths[{k}].ios", f"must be a count >= 0, got {str(ios)[:40]!r}")
                if ios > 0:
                    name = str(p["name"])
                    if name in seen:  # the second would never be read: Measurement.get finds the first
                        raise MeasureError(source, f"{place}.paths[{k}].name", f"path {name[:60]!r} is listed twice")
                    seen.add(name)
                    figures.append(figure(source, "iops", _float(p["iops"]), path=name, where=f"{place}.paths[{k}].iops"))
                    figures.append(
                        figure(source, "mean", _float(p["latency_us"]["mean"]) * 1e-6, path=name, where=f"{place}.paths[{k}].latency_us.mean")
                    )
        except (KeyError, TypeError, AttributeError) as e:
            raise MeasureError(source, place, f"not a pathsel run ({type(e).__name__}: {str(e)[:60]})") from None
        out.append(
            Measurement(
                source,
                "pathsel",
                tuple(figures),
                policy=str(run.get("policy", "")),
                details={"spec": run.get("spec", ""), "scenario": doc.get("scenario", "")},
            )
        )
    return out


def _float(value: object) -> float:
    """A JSON number as a float: inf past float's range (figure() refuses it), TypeError for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{str(value)[:40]!r} is not a number")
    try:
        return float(value)
    except OverflowError:
        return math.inf


def read_measurements(
    path: str | Path,
    kind: str = "auto",
    *,
    device: str | None = None,
    op: str | None = None,
    source: str | None = None,
) -> list[Measurement]:
    """The measurements a file holds: one, or one per run for pathsel's JSON.

    ``device`` chooses the device of an esxtop or iostat capture (default: the
    busiest); ``op`` fio's ``read`` or ``write`` (default: every op with I/Os).
    Raises :class:`MeasureError` (file, place, problem) for a file it cannot read.
    """
    source = source if source is not None else str(path)
    if kind not in MEASUREMENT_KINDS:
        raise MeasureError(source, "", f"kind must be one of {', '.join(MEASUREMENT_KINDS)}, got {kind!r}")
    text = read_text(path, source)
    found = _detect(text) if kind == "auto" else kind
    if found == "fio":
        return [fio_measurement(load_fio(text, source), source, op)]
    if found == "esxtop":
        return [read_esxtop(text, source, device)]
    if found == "iostat":
        return [read_iostat(text, source, device)]
    if found == "pathsel":
        return _pathsel(text, source)
    raise MeasureError(
        source,
        "line 1",
        "not a measurement pathsel reads: fio --output-format=json, esxtop -b (batch CSV), iostat -x, or pathsel simulate --json",
    )
