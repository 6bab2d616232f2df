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
from typing import Any, TypeVar

import tomlkit
from tomlkit.items import Array, Comment, Item, String, StringType, Trivia

from ...outputs import check_not_input, write_atomic
from ...version import __version__
from .. import Scenario, loads_scenario
from .quoting import comment_text as one_line
from .text import safe_text

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
    controllers: list[str] | None = None
    port_groups: list[tuple[str, str]] | None = None  # (group, controller)


@dataclass
class SkVolume:
    name: str
    lun: int | None = None
    arrays: list[str] | None = None
    comment: str = ""
    alua: dict[str, str] | None = None  # target port group -> state, for this volume
    owner: str | None = None  # the controller that owns it
    policy: str | None = None  # the device's own policy (esxcli's PSP per device), written when devices differ


@dataclass
class SkPath:
    name: str
    array: str
    alua: str | None = None
    weight: int = 0
    comment: str = ""
    port_group: str | None = None


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
    queue_depth: int | None = None  # the host's DQLEN (esxcli storage core device list)
    sched_num_req_outstanding: int | None = None  # DSNRO
    queue_note: str = ""
    # scenario place (its prefix: "hosts[0].queue_depth") -> the capture's file and line it came from, so that a
    # scenario the import writes and validation refuses names the capture, not the scenario nobody wrote
    origins: dict[str, tuple[str, int | None]] = field(default_factory=dict)

    def origin_of(self, place: str) -> tuple[str, int | None] | None:
        """The capture line behind ``place`` (the longest recorded prefix of it), or None."""
        hits = [k for k in self.origins if place == k or place.startswith((k + ".", k + "["))]
        return self.origins[max(hits, key=len)] if hits else None

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
        """The scenario file, written through a TOML writer (tomlkit): every name the capture or the command
        line gave is a TOML string value, escaped by the writer, and every comment that quotes one is made one
        line (:func:`~pathsel.scenario.systems.quoting.comment_text`), so no name can add a key, a table or a line."""
        doc = tomlkit.document()
        doc.add(_comment(f"Imported by `{command}` (pathsel {__version__})."))
        for line in self.told:
            doc.add(_comment(line))
        doc.add(_comment(""))
        doc.add(_comment("FILL IN marks what the output cannot tell: a placeholder value that loads and"))
        doc.add(_comment("runs. Replace it with your figure, or fit it to a measurement:"))
        doc.add(_comment("  pathsel calibrate THIS.toml --measured fio.json --fit service_time"))
        doc.add(tomlkit.nl())
        volume_names = ", ".join(v.name for v in self.volumes) or "one volume"
        doc.add("name", _str(self.host + ": " + volume_names))
        doc.add("source", _str("pathsel import " + self.kind + ": " + ", ".join(self.sources)))
        doc.add("protocol", _str(self.protocol))
        doc.add("duration", _str("10s"))
        arrays = tomlkit.aot()
        for a in self.arrays:
            t = tomlkit.table()
            t.add("name", _noted(_str(a.name), a.comment))
            t.add("concurrency", _noted(tomlkit.integer(int(PLACEHOLDERS["concurrency"][1])), _fill("concurrency")))
            st = tomlkit.inline_table()
            st.update({"dist": "exponential", "mean": PLACEHOLDERS["service_time"][1]})
            t.add("service_time", _noted(st, _fill("service_time")))
            if a.controllers:
                t.add("controllers", _noted(_strings(a.controllers), "named by pathsel: the output does not name controllers"))
            if a.port_groups:
                groups = tomlkit.array()
                for g, c in a.port_groups:
                    entry = tomlkit.inline_table()
                    entry.update({"name": _str(g), "controller": _str(c)})
                    groups.append(entry)
                t.add("port_groups", groups)
            arrays.append(t)
        doc.add("arrays", arrays)
        if self.stretched:
            pair = next((v.arrays for v in self.volumes if v.arrays and len(v.arrays) == 2), [a.name for a in self.arrays])
            rep = tomlkit.table()
            _noted(rep, "the volume is on both arrays: synchronous replication (a metro cluster)")
            rep.add("arrays", _strings(pair[:2]))
            rep.add("one_way_latency", _noted(_str(PLACEHOLDERS["replication_latency"][1]), _fill("replication_latency")))
            doc.add("replication", rep)
        hosts = tomlkit.aot()
        host = tomlkit.table()
        host.add("name", _str(self.host))
        if self.detection is not None:
            host.add("detection", _noted(_str(self.detection), self.detection_note))
        if self.apd_timeout is not None:
            host.add("apd_timeout", _str(self.apd_timeout))
        if self.queue_depth is not None:
            host.add("queue_depth", _noted(tomlkit.integer(self.queue_depth), self.queue_note))
        if self.sched_num_req_outstanding is not None:
            host.add("sched_num_req_outstanding", tomlkit.integer(self.sched_num_req_outstanding))
        hosts.append(host)
        doc.add("hosts", hosts)
        if len(self.volumes) > 1:
            volumes = tomlkit.aot()
            for v in self.volumes:
                t = tomlkit.table()
                t.add("name", _noted(_str(v.name), v.comment))
                if v.lun is not None:
                    t.add("lun", tomlkit.integer(v.lun))
                if v.arrays is not None:
                    t.add("arrays", _strings(v.arrays))
                if v.alua is not None:
                    states = tomlkit.inline_table()
                    states.update({g: _str(s) for g, s in v.alua.items()})
                    t.add("alua", states)
                if v.owner is not None:
                    t.add("owner", _str(v.owner))
                if v.policy is not None:
                    t.add("policy", _str(v.policy))
                volumes.append(t)
            doc.add("volumes", volumes)
        paths = tomlkit.aot()
        for p in self.paths:
            t = _noted(tomlkit.table(), p.comment)
            t.add("name", _str(p.name))
            t.add("array", _str(p.array))
            if p.port_group is not None:
                t.add("port_group", _str(p.port_group))
            if p.alua is not None:
                t.add("alua", _str(p.alua))
            if p.weight:
                t.add("weight", tomlkit.integer(p.weight))
            t.add("one_way_latency", _noted(_str(PLACEHOLDERS["one_way_latency"][1]), _fill("one_way_latency")))
            t.add(_comment(f'bandwidth = "16Gbit"  # FILL IN: {BANDWIDTH}'))
            paths.append(t)
        doc.add("paths", paths)
        job = self.workload if self.workload is not None else WORKLOAD
        chosen: list[SkVolume | None] = [*self.volumes] if len(self.volumes) > 1 else [None]
        workloads = tomlkit.aot()
        for i, vol in enumerate(chosen):
            if self.workload is not None:
                t = _noted(tomlkit.table(), f"fio's job options in {self.workload_source}")
            else:
                t = _noted(tomlkit.table(), "FILL IN: your workload, in fio's words (rw, bs, iodepth, numjobs)")
            t.add("name", _str("job" if vol is None else f"job{i + 1}"))
            if vol is not None:
                t.add("volume", _str(vol.name))
            for key, val in job.items():
                t.add(key, _str(val) if isinstance(val, str) else tomlkit.item(val))
            workloads.append(t)
        doc.add("workloads", workloads)
        policies = tomlkit.aot()
        for spec, label in self.policies:
            t = tomlkit.table()
            if spec:  # none: every volume runs its own policy ([[volumes]] policy), in one run
                t.add("spec", _str(spec))
            t.add("label", _str(label))
            policies.append(t)
        if self.policies:
            doc.add("policies", policies)
        return tomlkit.dumps(doc)


_Noted = TypeVar("_Noted", bound=Item)


_LINE_ENDS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _str(text: str) -> String:
    """A basic string: the writer escapes quotes, backslashes and control characters; a file name's undecodable
    bytes (surrogate escapes) become \\xNN so that the file can be written as UTF-8. NEL and the Unicode line and
    paragraph separators, which TOML allows raw, are escaped too: str.splitlines and some editors end a line
    there, and every tool should see the lines TOML sees."""
    plain = tomlkit.string(safe_text(text))
    inner = plain.as_string()[1:-1]
    if not any(c in inner for c in _LINE_ENDS):
        return plain
    for c, escaped in _LINE_ENDS.items():
        inner = inner.replace(c, escaped)
    return String(StringType.SLB, plain.value, inner, Trivia())


def _strings(items: list[str]) -> Array:
    out = tomlkit.array()
    out.extend(_str(x) for x in items)
    return out


def comment_text(text: str) -> str:
    """``text`` for a TOML comment: one line (the emitters' rule: every control character and line separator
    escaped), a file name's undecodable bytes as ``\\xNN``; long enough for a command line of many captures."""
    return one_line(safe_text(text), limit=1 << 16)


def _comment(text: str) -> Comment:
    return tomlkit.comment(comment_text(text))


def _noted(value: _Noted, text: str) -> _Noted:
    """``value`` with ``text`` as its end-of-line comment (none when empty), two spaces before the ``#``."""
    if text:
        value.comment(comment_text(text))
        value.trivia.comment_ws = "  "
    return value


def _fill(unknown: str) -> str:
    what = PLACEHOLDERS[unknown][2]
    return f"FILL IN: {what} (--fit {unknown})"


@dataclass
class Imported:
    """What ``pathsel import`` made: the scenario text, the loaded scenario, what to fill in and what to check."""

    kind: str
    text: str
    scenario: Scenario
    to_fill: list[tuple[str, str, str]]
    notes: list[str]
    inputs: list[str] = field(default_factory=list)  # the captured outputs it was read from

    @classmethod
    def of(cls, sk: Skeleton, command: str, source: str) -> Imported:
        text = sk.toml(command)
        return cls(sk.kind, text, loads_scenario(text, source), sk.to_fill, list(sk.notes), list(sk.sources))

    def write(self, path: str | Path) -> None:
        """Write the scenario to ``path``: never over one of its captures, and atomically (a failure leaves no half file)."""
        check_not_input(path, [("captured output", s) for s in self.inputs])
        write_atomic(path, self.text)
