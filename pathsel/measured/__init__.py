"""Measurements in: fio JSON, esxtop batch CSV, ``iostat -x`` and pathsel's own JSON, as figures to reproduce.

:func:`read_measurements` reads a file (its kind found from its content, or
given) into :class:`Measurement` objects: IOPS, mean and p99 latency of a
device, and per path where the file has them. ``pathsel calibrate`` fits a
scenario's unknowns to them; a fio file is also an empirical latency
distribution in a scenario (``{ dist = "empirical", file = "fio.json",
format = "fio", op = "write" }``, :mod:`pathsel.model.distributions`).
"""

from __future__ import annotations

import json
from pathlib import Path

from .base import METRICS, Figure, MeasureError, Measurement, read_text
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
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise MeasureError(source, f"line {e.lineno}, column {e.colno}", f"not valid JSON ({e.msg})") from None
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or not runs:
        raise MeasureError(source, "runs", "missing or empty: not pathsel simulate --json output")
    out = []
    for i, run in enumerate(runs):
        place = f"runs[{i}]"
        try:
            lat = run["latency_us"]
            figures = [
                Figure("iops", float(run["iops"]), where=f"{place}.iops"),
                Figure("mean", float(lat["mean"]) * 1e-6, where=f"{place}.latency_us.mean"),
                Figure("p99", float(lat["p99"]) * 1e-6, where=f"{place}.latency_us.p99"),
            ]
            for p in run.get("paths", []):
                if p.get("ios", 0) > 0:
                    figures.append(Figure("iops", float(p["iops"]), path=p["name"], where=f"{place}.paths"))
                    figures.append(Figure("mean", float(p["latency_us"]["mean"]) * 1e-6, path=p["name"], where=f"{place}.paths"))
        except (KeyError, TypeError, ValueError) as e:
            raise MeasureError(source, place, f"not a pathsel run ({e})") from None
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
