"""A scenario skeleton from what a host printed: what the output tells, and placeholders for what it cannot.

An importer fills a :class:`Skeleton` (hosts, volumes, paths with their
runtime names and ALUA/ANA states, arrays as far as the output tells, the
current policy); :meth:`Skeleton.toml` writes it as a scenario file whose
unknowns (latencies, service times, concurrency, the workload) are
placeholder values that load and run, each marked ``FILL IN`` with the
``pathsel calibrate --fit`` name that fits it; :attr:`Skeleton.to_fill`
lists them for the command line to print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..scenario import Scenario, loads_scenario
from ..version import __version__
from .text import toml_str

__all__ = ["Skeleton", "SkArray", "SkPath", "SkVolume", "PLACEHOLDERS", "Imported"]

# What no multipath listing tells, the placeholder written, and the calibrate unknown that fits it.
PLACEHOLDERS = {
    "service_time": ("arrays[*].service_time", "100us", "the array's time per I/O (exponential: a guess at its spread)"),
    "concurrency": ("arrays[*].concurrency", "64", "I/Os the array serves at once"),
    "one_way_latency": ("paths[*].one_way_latency", "50us", "host to array, one way, per frame"),
    "replication_latency": ("replication.one_way_latency", "1ms", "array to array, one way"),
}
WORKLOAD = {"rw": "randread", "bs": "4k", "iodepth": 32}
BANDWIDTH = "the link's speed (esxcli storage san fc list, ethtool); while unset, frames take no time to send"


@dataclass
class SkArray:
    name: str
    comment: str = ""


@dataclass
class SkVolume:
    name: str
    lun: int | None = None
    arrays: list[str] | None = None
    comment: str = ""


@dataclass
class SkPath:
    name: str
    array: str
    alua: str | None = None
    weight: int = 0
    comment: str = ""


@dataclass
class Skeleton:
    kind: str  # the importer: esxcli, multipath, nvme, mpclaim
    sources: list[str]
    host: str
    protocol: str = "scsi"
    arrays: list[SkArray] = field(default_factory=list)
    volumes: list[SkVolume] = field(default_factory=list)
    paths: list[SkPath] = field(default_factory=list)
    policies: list[tuple[str, str]] = field(default_factory=list)  # (spec, label)
    detection: str | None = None  # a host stack's default ("dm", "nvme") or a duration
    apd_timeout: str | None = None
    told: list[str] = field(default_factory=list)  # what the output said, as comments at the top
    notes: list[str] = field(default_factory=list)  # what to check, printed with the list to fill in
    detection_note: str = ""
    workload: dict[str, Any] | None = None  # fio's job options (rw, bs, iodepth, numjobs) when given; else a placeholder
    workload_source: str = ""

    @property
    def stretched(self) -> bool:
        return any(v.arrays is not None and len(v.arrays) == 2 for v in self.volumes) or (not self.volumes and len(self.arrays) == 2)

    @property
    def to_fill(self) -> list[tuple[str, str, str]]:
        """(place, placeholder, how to fill it) for everything the capture does not tell."""
        rows = []
        for unknown in ("service_time", "concurrency", "one_way_latency"):
            place, value, what = PLACEHOLDERS[unknown]
            rows.append((place, ("exponential " if unknown == "service_time" else "") + value, f"{what}: measure, or --fit {unknown}"))
        rows.append(("paths[*].bandwidth", "unset", BANDWIDTH))
        if self.stretched:
            place, value, what = PLACEHOLDERS["replication_latency"]
            rows.append((place, value, f"{what}: measure, or --fit replication_latency"))
        if self.workload is None:
            rows.append(
                (
                    "workloads[*]" if len(self.volumes) > 1 else "workloads[0]",
                    f"{WORKLOAD['rw']} {WORKLOAD['bs']} iodepth={WORKLOAD['iodepth']}",
                    "your fio job: rw, bs, iodepth, numjobs (or import with --workload fio.json)",
                )
            )
        if self.detection_note:
            rows.append(("hosts[0].detection", self.detection or "5s", self.detection_note))
        return rows

    def toml(self, command: str) -> str:
        out: list[str] = []
        w = out.append
        w(f"# Imported by `{command}` (pathsel {__version__}).")
        for line in self.told:
            w(f"# {line}")
        w("#")
        w("# FILL IN marks what the output cannot tell: a placeholder value that loads and")
        w("# runs. Replace it with your figure, or fit it to a measurement:")
        w("#   pathsel calibrate THIS.toml --measured fio.json --fit service_time")
        w("")
        volume_names = ", ".join(v.name for v in self.volumes) or "one volume"
        w(f"name = {toml_str(self.host + ': ' + volume_names)}")
        w(f"source = {toml_str('pathsel import ' + self.kind + ': ' + ', '.join(self.sources))}")
        w(f"protocol = {toml_str(self.protocol)}")
        w('duration = "10s"')
        for a in self.arrays:
            w("")
            w("[[arrays]]")
            w(f"name = {toml_str(a.name)}" + (f"  # {a.comment}" if a.comment else ""))
            w(f"concurrency = {PLACEHOLDERS['concurrency'][1]}  # FILL IN: {PLACEHOLDERS['concurrency'][2]} (--fit concurrency)")
            w(
                f'service_time = {{ dist = "exponential", mean = {toml_str(PLACEHOLDERS["service_time"][1])} }}  '
                f"# FILL IN: {PLACEHOLDERS['service_time'][2]} (--fit service_time)"
            )
        if self.stretched:
            pair = next((v.arrays for v in self.volumes if v.arrays and len(v.arrays) == 2), [a.name for a in self.arrays])
            w("")
            w("[replication]  # the volume is on both arrays: synchronous replication (a metro cluster)")
            w(f"arrays = [{toml_str(pair[0])}, {toml_str(pair[1])}]")
            value, what = PLACEHOLDERS["replication_latency"][1:]
            w(f"one_way_latency = {toml_str(value)}  # FILL IN: {what} (--fit replication_latency)")
        w("")
        w("[[hosts]]")
        w(f"name = {toml_str(self.host)}")
        if self.detection is not None:
            w(f"detection = {toml_str(self.detection)}" + (f"  # {self.detection_note}" if self.detection_note else ""))
        if self.apd_timeout is not None:
            w(f"apd_timeout = {toml_str(self.apd_timeout)}")
        if len(self.volumes) > 1:
            for v in self.volumes:
                w("")
                w("[[volumes]]")
                w(f"name = {toml_str(v.name)}" + (f"  # {v.comment}" if v.comment else ""))
                if v.lun is not None:
                    w(f"lun = {v.lun}")
                if v.arrays is not None:
                    w(f"arrays = [{', '.join(toml_str(a) for a in v.arrays)}]")
        value, what = PLACEHOLDERS["one_way_latency"][1:]
        for p in self.paths:
            w("")
            w("[[paths]]" + (f"  # {p.comment}" if p.comment else ""))
            w(f"name = {toml_str(p.name)}")
            w(f"array = {toml_str(p.array)}")
            if p.alua is not None:
                w(f"alua = {toml_str(p.alua)}")
            if p.weight:
                w(f"weight = {p.weight}")
            w(f"one_way_latency = {toml_str(value)}  # FILL IN: {what} (--fit one_way_latency)")
            w(f'# bandwidth = "16Gbit"  # FILL IN: {BANDWIDTH}')
        job = self.workload if self.workload is not None else WORKLOAD
        volumes: list[SkVolume | None] = [*self.volumes] if len(self.volumes) > 1 else [None]
        for i, vol in enumerate(volumes):
            w("")
            if self.workload is not None:
                w(f"[[workloads]]  # fio's job options in {self.workload_source}")
            else:
                w("[[workloads]]  # FILL IN: your workload, in fio's words (rw, bs, iodepth, numjobs)")
            w(f"name = {toml_str('job' if vol is None else f'job{i + 1}')}")
            if vol is not None:
                w(f"volume = {toml_str(vol.name)}")
            for key, val in job.items():
                w(f"{key} = {toml_str(val) if isinstance(val, str) else val}")
        for spec, label in self.policies:
            w("")
            w("[[policies]]")
            w(f"spec = {toml_str(spec)}")
            w(f"label = {toml_str(label)}")
        return "\n".join(out) + "\n"


@dataclass
class Imported:
    """What ``pathsel import`` made: the scenario text, the loaded scenario, what to fill in and what to check."""

    kind: str
    text: str
    scenario: Scenario
    to_fill: list[tuple[str, str, str]]
    notes: list[str]

    @classmethod
    def of(cls, sk: Skeleton, command: str, source: str) -> Imported:
        text = sk.toml(command)
        return cls(sk.kind, text, loads_scenario(text, source), sk.to_fill, list(sk.notes))

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.text, encoding="utf-8")
