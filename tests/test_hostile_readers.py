"""The measurement readers and calibrate's inputs against hostile files: one located line, exit 2, no traceback.

Each row of ``CASES`` is a file's bytes (a small valid fio ``json+``, esxtop batch CSV, ``iostat -x`` or
``pathsel simulate --json`` file with one defect), the place the message must name and a fragment of its
problem. Every row is read through the API (:func:`pathsel.read_measurements`) and through the command line
(``pathsel calibrate --fit service_time --measured FILE``); a few also in a fresh process. Then: what must be
read (a byte order mark, UTF-16), bin counts too large for int64, a Hypothesis property (hostile edits of each
valid file read or are one located line; PATHSEL_EXAMPLES examples, default 200), and calibrate's scenario read
as every scenario is.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
from datetime import datetime, timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pathsel
from pathsel.cli import main
from pathsel.limits import MAX_OUTSTANDING
from pathsel.measured import MeasureError, read_measurements
from pathsel.measured.base import MAX_IOPS, MAX_LATENCY
from pathsel.measured.esxtop import read_esxtop
from pathsel.measured.fio import fio_latency_table, load_fio

from .conftest import ROOT

EXAMPLES = int(os.environ.get("PATHSEL_EXAMPLES", "200"))  # the target: 10,000

# -- the small valid files each row spoils -------------------------------------------------------------------

_FIO_READ = {
    "iops": 1000.0,
    "iops_stddev": 10.0,
    "iops_samples": 20,
    "total_ios": 10000,
    "clat_ns": {
        "min": 100000,
        "max": 900000,
        "mean": 200000.0,
        "N": 10000,
        "percentile": {"99.000000": 800000},
        "bins": {"100000": 5000, "200000": 4900, "800000": 100},
    },
}


def fio(read: dict | None = None, raw: tuple[str, str] | None = None) -> bytes:
    """fio json+ output with one job's read figures (``read`` merged over the valid ones); ``raw``: a text
    replacement made after json.dumps (what json cannot write: NaN as a key, a key twice, 1e400)."""
    job_read = json.loads(json.dumps(_FIO_READ))
    for key, value in (read or {}).items():
        if key.startswith("clat_ns."):
            job_read["clat_ns"][key.removeprefix("clat_ns.")] = value
        else:
            job_read[key] = value
    doc = {"fio version": "fio-3.36", "jobs": [{"jobname": "job", "read": job_read, "write": {"total_ios": 0}}]}
    text = json.dumps(doc, indent=1)
    if raw is not None:
        assert raw[0] in text, raw
        text = text.replace(raw[0], raw[1], 1)
    return text.encode()


_H = "\\\\esxi01\\"
_DEV = "Physical Disk SCSI Device(naa.1)\\"
_PATH = "Physical Disk Path(naa.1-vmhba1:C0:T0:L1)\\"
_ESXTOP_HEADER = [
    "(PDH-CSV 4.0) (UTC)(0)",
    _H + _DEV + "Commands/sec",
    _H + _DEV + "Average Guest MilliSec/Command",
    _H + _PATH + "Commands/sec",
    _H + _PATH + "Average Driver MilliSec/Command",
]


def esxtop(cell: str = "", value: str = "", header: list[str] | None = None) -> bytes:
    """Two samples; ``cell`` (commands, gavg, path, davg) of the second sample replaced by ``value``."""
    rows = [["01/15/2025 10:00:00", "1000", "0.5", "1000", "0.4"], ["01/15/2025 10:00:05", "1100", "0.6", "1100", "0.5"]]
    if cell:
        rows[1][["commands", "gavg", "path", "davg"].index(cell) + 1] = value
    lines = [header or _ESXTOP_HEADER, *rows]
    return "\n".join(",".join(f'"{c}"' for c in line) for line in lines).encode() + b"\n"


def iostat(device: str = "sdb", column: str = "", value: str = "", extra: str = "") -> bytes:
    """Two reports (the first, since boot, dropped); ``device``'s ``column`` in the second replaced by ``value``."""
    header = "Device            r/s     w/s  r_await  w_await  aqu-sz  %util"
    rows = {"dm-0": ["900.0", "0.0", "0.30", "0.00", "0.30", "9.0"], "sdb": ["450.0", "0.0", "0.28", "0.00", "0.10", "4.5"]}
    out = ["Linux 5.14.0 (linux01) \t01/15/2025 \t_x86_64_\t(16 CPU)", ""]
    for report in (0, 1):
        out += [header]
        for name, cells in rows.items():
            cells = list(cells)
            if report == 1 and name == device and column:
                cells[header.split().index(column) - 1] = value
            out.append(f"{name:<12} " + "  ".join(cells))
        if report == 1 and extra:
            out.append(extra)
        out.append("")
    return "\n".join(out).encode()


def pathsel_json(run: object = None, paths: list | None = None) -> bytes:
    good = {"policy": "rr", "iops": 5000.0, "latency_us": {"mean": 200.0, "p99": 900.0}, "paths": paths or []}
    return json.dumps({"pathsel_version": "0.0", "scenario": "s", "runs": [good if run is None else run]}).encode()


_P = {"ios": 10, "iops": 2500.0, "latency_us": {"mean": 190.0}}
_BINS = "jobs[0].read.clat_ns.bins"

# (id, the file's bytes, the place the message names, a fragment of its problem)
CASES = [
    # fio: numbers fio never writes, and values out of range
    ("fio-bin-nan", fio(raw=('"100000": 5000', '"nan": 5000')), _BINS, "bin 'nan' is not a latency >= 0"),
    ("fio-bin-inf", fio(raw=('"100000": 5000', '"inf": 5000')), _BINS, "bin 'inf' is not a latency >= 0"),
    ("fio-bin-negative", fio(raw=('"100000": 5000', '"-100000": 5000')), _BINS, "bin '-100000' is not a latency >= 0"),
    ("fio-bin-1e400", fio(raw=('"100000": 5000', '"1e400": 5000')), _BINS, "bin '1e400' is not a latency"),
    ("fio-bin-superscript", fio(raw=('"100000": 5000', '"10\u00b2": 5000')), _BINS, "bin '10\u00b2' is not a latency"),
    (
        "fio-bin-arabic-indic",
        fio(raw=('"100000": 5000', '"\u0661\u0660\u0660\u0660\u0660\u0660": 5000')),
        _BINS,
        "bin '\u0661\u0660\u0660\u0660\u0660\u0660' is not a latency",
    ),
    ("fio-count-1e400", fio(raw=('"100000": 5000', '"100000": 1e400')), f"{_BINS}['100000']", "a count must be a whole number >= 0, got inf"),
    ("fio-count-past-uint64", fio(raw=('"100000": 5000', '"100000": ' + "9" * 30)), f"{_BINS}['100000']", "more than fio counts (2^64 - 1)"),
    ("fio-count-negative", fio(raw=('"100000": 5000', '"100000": -5')), f"{_BINS}['100000']", "a count must be a whole number >= 0, got -5"),
    ("fio-count-fraction", fio(raw=('"100000": 5000', '"100000": 1.5')), f"{_BINS}['100000']", "a count must be a whole number >= 0, got 1.5"),
    ("fio-count-nan", fio(raw=('"100000": 5000', '"100000": NaN')), f"{_BINS}['100000']", "got nan"),
    ("fio-iops-zero", fio({"iops": 0}), "jobs", "I/Os completed per second is 0 IOPS: a figure must be > 0"),
    ("fio-iops-negative", fio({"iops": -5}), "jobs[0].read.iops", "must be a number >= 0 and at most 1e+09, got -5"),
    ("fio-iops-1e300", fio({"iops": 1e300}), "jobs[0].read.iops", "at most 1e+09, got 1e+300"),
    ("fio-iops-1e400", fio(raw=('"iops": 1000.0', '"iops": 1e400')), "jobs[0].read.iops", "got inf"),
    ("fio-iops-nan", fio(raw=('"iops": 1000.0', '"iops": NaN')), "jobs[0].read.iops", "got nan"),
    ("fio-iops-huge-integer", fio(raw=('"iops": 1000.0', '"iops": 1' + "0" * 400)), "jobs[0].read.iops", "got an integer of 401 digits"),
    ("fio-iops-4301-digits", fio(raw=('"iops": 1000.0', '"iops": 1' + "0" * 4301)), "", "not readable JSON (Exceeds the limit (4300 digits)"),
    ("fio-iops-string", fio({"iops": "5000"}), "jobs[0].read.iops", "must be a number >= 0, got '5000'"),
    ("fio-iops-stddev-1e200", fio({"iops_stddev": 1e200}), "jobs[0].read.iops_stddev", "at most 1e+09"),
    ("fio-iops-samples-negative", fio({"iops_samples": -3}), "jobs[0].read.iops_samples", "a count must be a whole number >= 0"),
    ("fio-mean-zero", fio({"clat_ns.mean": 0}), "jobs", "mean latency (s) is 0 s: a figure must be > 0"),
    ("fio-mean-1e300", fio({"clat_ns.mean": 1e300}), "jobs[0].read.clat_ns.mean", "at most 1e+15, got 1e+300"),
    ("fio-mean-negative", fio({"clat_ns.mean": -1.0}), "jobs[0].read.clat_ns.mean", "must be a number >= 0"),
    ("fio-total-ios-negative", fio({"total_ios": -1}), "jobs[0].read.total_ios", "a count must be a whole number >= 0, got -1"),
    ("fio-total-ios-1e400", fio(raw=('"total_ios": 10000', '"total_ios": 1e400')), "jobs[0].read.total_ios", "got inf"),
    ("fio-key-twice", fio(raw=('"iops": 1000.0', '"iops": 1000.0, "iops": 1')), "", "the key 'iops' appears twice in one JSON object"),
    ("fio-nested-too-deep", b'{"jobs": ' + b"[" * 100_000 + b"]" * 100_000 + b', "clat_ns": 1}', "", "nested too deep"),
    # esxtop: numbers, a cell past csv's field limit, a counter twice
    ("esxtop-cell-200000", esxtop("commands", "1" * 200_000), "line 3", "not CSV esxtop writes (field larger than field limit"),
    ("esxtop-header-cell-200000", esxtop(header=[*_ESXTOP_HEADER[:-1], "x" * 200_000]), "line 1", "field larger than field limit"),
    (
        "esxtop-superscript",
        esxtop("commands", "1\u00b2"),
        "line 3",
        "column 2 (" + (_H + _DEV + "Commands/sec")[-60:] + "): '1\u00b2' is not a number",
    ),
    ("esxtop-nan", esxtop("commands", "nan"), "line 3", "'nan' is not a number >= 0 and at most 1e+09"),
    # issue 50: ASCII digits only (float() reads Arabic-Indic and fullwidth digits as numbers)
    ("esxtop-arabic-indic", esxtop("commands", "\u0661\u0660\u0660"), "line 3", "'\u0661\u0660\u0660' is not a number"),
    ("esxtop-fullwidth", esxtop("gavg", "\uff10.5"), "line 3", "'\uff10.5' is not a number"),
    ("esxtop-negative", esxtop("commands", "-5"), "line 3", "'-5' is not a number >= 0"),
    ("esxtop-iops-1e300", esxtop("commands", "1e300"), "line 3", "'1e300' is not a number >= 0 and at most 1e+09"),
    ("esxtop-iops-1e400", esxtop("commands", "1e400"), "line 3", "'1e400' is not a number >= 0"),
    ("esxtop-latency-1e300", esxtop("gavg", "1e300"), "line 3", "'1e300' is not a number >= 0 and at most 1e+09"),
    ("esxtop-path-negative", esxtop("path", "-1"), "line 3", "column 4"),
    (
        "esxtop-counter-twice",
        esxtop(header=[*_ESXTOP_HEADER[:-1], _H + _DEV + "Commands/sec"]),
        "line 1",
        "columns 2 and 5 are both device 'naa.1''s Commands/sec",
    ),
    ("esxtop-no-commands", esxtop("commands", "0").replace(b'"1000","0.5"', b'"0","0.5"'), "", "completed no commands"),
    # iostat: a negative rate no longer drops a path's figures silently
    ("iostat-negative-rate", iostat("sdb", "r/s", "-450.0"), "line 9", "r/s = '-450.0' is not a number >= 0 and at most 1e+09"),
    ("iostat-nan", iostat("dm-0", "r/s", "nan"), "line 8", "r/s = 'nan' is not a number >= 0"),
    ("iostat-1e400", iostat("dm-0", "r/s", "1e400"), "line 8", "r/s = '1e400' is not a number >= 0"),
    ("iostat-rate-1e300", iostat("dm-0", "r/s", "1e300"), "line 8", "at most 1e+09"),
    ("iostat-await-1e300", iostat("dm-0", "r_await", "1e300"), "line 8", "r_await = '1e300' is not a number >= 0 and at most 1e+09"),
    ("iostat-superscript", iostat("dm-0", "w/s", "0\u00b2"), "line 8", "w/s = '0\u00b2' is not a number"),
    ("iostat-arabic-indic", iostat("dm-0", "r/s", "\u0663"), "line 8", "r/s = '\u0663' is not a number"),
    ("iostat-negative-util", iostat("sdb", "%util", "-1"), "line 9", "%util = '-1' is not a number >= 0"),
    ("iostat-device-twice", iostat(extra="sdb 1.0 0.0 0.1 0.0 0.0 0.1"), "line 10", "device 'sdb' is listed twice in the report of line 7"),
    ("iostat-idle", b"Device r/s w/s await\nsdb 0.0 0.0 0.0\n\nDevice r/s w/s await\nsdb 0.0 0.0 0.0\n", "", "device sdb completed no I/Os"),
    # pathsel's own JSON
    ("pathsel-path-twice", pathsel_json(paths=[{**_P, "name": "p0"}, {**_P, "name": "p0"}]), "runs[0].paths[1].name", "path 'p0' is listed twice"),
    ("pathsel-iops-zero", pathsel_json({"iops": 0, "latency_us": {"mean": 1.0, "p99": 2.0}}), "runs[0].iops", "is 0 IOPS"),
    ("pathsel-iops-huge", pathsel_json({"iops": 10**400, "latency_us": {"mean": 1.0, "p99": 2.0}}), "runs[0].iops", "is inf IOPS"),
    ("pathsel-run-not-object", pathsel_json(5), "runs[0]", "not a pathsel run (not a JSON object)"),
    ("pathsel-path-ios-negative", pathsel_json(paths=[{**_P, "name": "p0", "ios": -1}]), "runs[0].paths[0].ios", "must be a count >= 0"),
    # files that are not text
    ("binary", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "line 1", "not text (byte 0x89)"),
    ("nul-bytes", b"Device r/s w/s\n\x00\x00\x00", "line 2", "not text (a NUL byte: a binary file?)"),
    ("latin-1", "Device r/s w/s await\nsdb 1,0 0 \xe9\n".encode("latin-1"), "line 2", "not text (byte 0xe9)"),
    ("empty", b"", "", "is empty"),
    ("blank", b" \n\t\n", "", "is empty"),
]


def _write(tmp_path, content: bytes, name: str = "measured.txt"):
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_the_templates_read():
    """Each template, unspoilt, reads: every row's defect is its only one."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        for content, kind in ((fio(), "fio"), (esxtop(), "esxtop"), (iostat(), "iostat"), (pathsel_json(paths=[{**_P, "name": "p0"}]), "pathsel")):
            (m,) = read_measurements(_write(Path(d), content))
            assert m.kind == kind
            assert m.get("iops") is not None and m.get("mean") is not None


@pytest.mark.parametrize(("content", "place", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_api_locates_the_problem(content, place, fragment, tmp_path):
    path = _write(tmp_path, content)
    with pytest.raises(MeasureError) as info:
        read_measurements(path)
    err = info.value
    assert (err.source, err.place) == (str(path), place), str(err)
    assert fragment in err.problem, str(err)
    assert "\n" not in str(err) and len(str(err)) < 600


@pytest.mark.parametrize(("content", "place", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_calibrate_prints_one_line_and_exits_2(content, place, fragment, tmp_path, capsys):
    path = _write(tmp_path, content)
    assert main(["calibrate", "--fit", "service_time", "--measured", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1, err[:2000]
    assert err.startswith(f"pathsel: error: {path}: {place + ': ' if place else ''}"), err[:300]
    assert fragment in err


def _calibrate_subprocess(*args: str) -> subprocess.CompletedProcess:
    cli = [sys.executable, "-m", "pathsel.cli", "calibrate", "--fit", "service_time", *args]
    return subprocess.run(cli, capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("row", ["fio-bin-nan", "esxtop-cell-200000", "iostat-negative-rate", "fio-iops-huge-integer", "binary"])
def test_in_a_fresh_process(row, tmp_path):
    _, content, place, fragment = next(c for c in CASES if c[0] == row)
    path = _write(tmp_path, content)
    proc = _calibrate_subprocess("--measured", str(path))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr[-2000:]
    assert proc.stderr.startswith(f"pathsel: error: {path}: {place + ': ' if place else ''}") and fragment in proc.stderr


# (the path given to --measured, the one line after "pathsel: error: ")
SPECIAL = [
    ("/dev/zero", "/dev/zero: line 1: not text (a NUL byte: a binary file?)"),
    ("{tmp}", "{tmp}: is a directory, not a measurement file"),
    ("{tmp}/missing.json", "{tmp}/missing.json: no such file"),
]


@pytest.mark.parametrize(("measured", "line"), SPECIAL, ids=["dev-zero", "directory", "missing"])
def test_files_that_are_not_files(measured, line, tmp_path, capsys):
    measured, line = measured.replace("{tmp}", str(tmp_path)), line.replace("{tmp}", str(tmp_path))
    assert main(["calibrate", "--fit", "service_time", "--measured", measured]) == 2
    assert capsys.readouterr() == ("", f"pathsel: error: {line}\n")


def test_dev_zero_in_a_fresh_process():
    proc = _calibrate_subprocess("--measured", "/dev/zero")
    assert (proc.returncode, proc.stderr) == (2, f"pathsel: error: {SPECIAL[0][1]}\n")


# -- what must be read -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "prefix"), [("utf-8", "\ufeff"), ("utf-16", "")], ids=["utf-8-bom", "utf-16"])
@pytest.mark.parametrize("make", [fio, esxtop, iostat], ids=["fio", "esxtop", "iostat"])
def test_a_byte_order_mark_or_utf16_is_read(make, encoding, prefix, tmp_path):
    plain = read_measurements(_write(tmp_path, make(), "plain.txt"))[0]
    marked = read_measurements(_write(tmp_path, (prefix + make().decode()).encode(encoding), "marked.txt"))[0]
    assert [(f.metric, f.path, f.value) for f in marked.figures] == [(f.metric, f.path, f.value) for f in plain.figures]


def test_bin_counts_past_int64_give_the_right_p99(tmp_path):
    """Counts near 2^63 summed in int64 wrapped round, and the p99 came out at the smallest bin."""
    big = 2**62
    bins = {"100000": big, "200000": big, "900000": big}  # a third of the I/Os in each: p99 is the largest bin
    content = fio({"clat_ns.bins": bins, "total_ios": 3 * big})
    (m,) = read_measurements(_write(tmp_path, content))
    assert m.get("p99").value == pytest.approx(900e-6)
    probs, values, n, _ = fio_latency_table(load_fio(content.decode(), "f"), "f")
    assert n == 3 * big
    assert np.all(np.diff(probs) >= 0) and probs[0] == 0.0 and probs[-1] == 1.0
    assert float(np.interp(0.5, probs, values)) == pytest.approx(200e-6)


_TEMPLATES = {"fio": fio(), "esxtop": esxtop(), "iostat": iostat(), "pathsel": pathsel_json(paths=[{**_P, "name": "p0"}])}
# what a hostile edit puts in a measurement file: numbers float() or int() reads that no tool writes, numbers past
# every limit, digits of other scripts, quotes, separators, NUL, a byte that is not UTF-8, a long cell
_PIECES = st.sampled_from(
    [b"nan", b"NaN", b"inf", b"-1", b"0", b"1e300", b"1e400", b"-0", b"9" * 30, b"9" * 400, b"\xc2\xb2", b"\xd9\xa3"]
    + [b'"', b",", b"\n", b"\x00", b"\xff", b"{", b"]", b" ", b"x" * 200_000]
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(_TEMPLATES)), edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 12), _PIECES), min_size=1, max_size=3))
def test_any_edit_of_a_measurement_reads_or_is_one_located_line(kind, edits, tmp_path):
    """Property: any file one to three hostile edits away from a valid capture either reads, with every figure
    finite, > 0 and within the limits, or is refused with a MeasureError of one line; never another exception."""
    content = _TEMPLATES[kind]
    for where, cut, piece in edits:
        at = int(where * len(content))
        content = content[:at] + piece + content[at + cut :]
    path = _write(tmp_path, content)
    try:
        measurements = read_measurements(path)
    except MeasureError as e:
        assert e.source == str(path) and "\n" not in str(e) and len(str(e)) < 1000
        return
    for m in measurements:
        for f in m.figures:
            assert np.isfinite(f.value) and 0 < f.value <= (MAX_IOPS if f.metric == "iops" else MAX_LATENCY)


# -- calibrate's scenario: read as every scenario is -----------------------------------------------------------

_SCENARIO = (ROOT / "tests" / "bad_inputs" / "latency_zero.toml").read_text().replace('"0us"', '"60us"')


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "{s}: line 1: not text (byte 0x89)"),
        (b"\xff\xfe" + b"\x00\xd8", "{s}: line 1: not text (byte 0x00)"),  # a UTF-16 BOM, then half a surrogate pair
        (b"seed = 1\n\x00\x00", "{s}: line 2: not text (a NUL byte: a binary file?)"),
        (b'name = "x"\nseed = \nx = 1\n', "{s}: line 2, column 8: not valid TOML: Invalid value"),
        (b"", "{s}: holds no settings (only comments and blank lines)"),
    ],
    ids=["binary", "bad-utf16", "nul", "bad-toml", "empty"],
)
def test_calibrate_refuses_a_bad_scenario_in_one_line(content, line, tmp_path, capsys):
    scenario = _write(tmp_path, content, "scenario.toml")
    assert main(["calibrate", str(scenario), "--fit", "service_time"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("pathsel: error: " + line.replace("{s}", str(scenario))), err


def test_calibrate_refuses_dev_zero_as_its_scenario(capsys):
    assert main(["calibrate", "/dev/zero", "--fit", "service_time"]) == 2
    assert capsys.readouterr().err == "pathsel: error: /dev/zero: line 1: not text (a NUL byte: a binary file?)\n"


@pytest.mark.parametrize(("encoding", "prefix"), [("utf-8", "\ufeff"), ("utf-16", "")], ids=["utf-8-bom", "utf-16"])
def test_calibrate_reads_a_bom_or_utf16_scenario(encoding, prefix, tmp_path, capsys):
    """The scenario is read (a BOM once made tomllib fail): the error is then the measured file's, not the scenario's."""
    scenario = tmp_path / "notepad.toml"
    scenario.write_text(prefix + _SCENARIO, encoding=encoding)
    empty = _write(tmp_path, b"")
    assert main(["calibrate", str(scenario), "--fit", "service_time", "--measured", str(empty)]) == 2
    assert capsys.readouterr().err == f"pathsel: error: {empty}: is empty\n"
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.calibrate(scenario, ["service_time"], [empty])
    assert info.value.source == str(empty)


def test_the_same_measured_file_twice_is_refused(tmp_path, capsys, monkeypatch):
    """Its figures would count twice, as if measured twice: one line naming both spellings."""
    path = _write(tmp_path, fio(), "fio.json")
    monkeypatch.chdir(tmp_path)
    assert main(["calibrate", "--fit", "service_time", "--measured", "fio.json", "--measured", str(path)]) == 2
    assert capsys.readouterr().err == (f"pathsel: error: command line: --measured: {path} (the same file as fio.json) is given twice\n")


# -- esxtop batch CSV: a property over timestamps, widths, values and sizes (issue 50) -------------------------

_ESX_HIGH = {"CMDS/s": MAX_IOPS, **{c: float(MAX_OUTSTANDING) for c in ("Active Commands", "Queued Commands", "Device Q Depth")}}
_EPOCH = datetime(1970, 1, 1)
# device names with dashes (a path instance is the device, a dash and the path: the longest device wins), path
# names with and without an ESXi runtime name
_ESX_DEVICES = ["naa.1", "naa.1-2", "eui.abc", "t10.ATA-x", "naa.624a9370"]
_ESX_PATHS = ["vmhba1:C0:T0:L1", "vmhba2:C0:T1:L1", "sdb", "sdc", "nvme0c0n1"]
# a sample's time: anywhere esxtop's format reaches, and often near the epoch, where pathsel top -b's clock
# starts and where samples at or before 1970-01-01 once weighed 0 or less
_ESX_TIMES = st.one_of(
    st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59)),
    st.datetimes(datetime(1969, 12, 31, 23, 59, 0), datetime(1970, 1, 1, 0, 1, 0)),
    st.integers(0, 10**6).map(lambda us: _EPOCH + timedelta(microseconds=us)),
)
_ESX_HOSTILE = ["-1", "nan", "inf", "1e400", "abc", "\u0663", "1\u00b2", "0x10", "1,5"]


def _esx_time(t: datetime, places: int) -> str:
    text = t.strftime("%m/%d/%Y %H:%M:%S")
    return f"{text}.{t.microsecond:06d}"[: len(text) + 1 + places] if places else text


@st.composite
def _esxtop_captures(draw):
    """(text, {device: its Commands/sec and latency samples}, clean): esxtop -b output of 1-4 devices with 0-3
    paths each, 1-8 samples, times anywhere in esxtop's range (in order or not, with 0-6 decimals), each value
    written at its own width (decimals, exponent, spaces) or blank; sometimes one cell made hostile (clean False)."""
    devices = draw(st.lists(st.sampled_from(_ESX_DEVICES), min_size=1, max_size=4, unique=True))
    latency = draw(st.sampled_from(["Average Guest MilliSec/Command", "Average Driver MilliSec/Command", None]))
    counts = draw(st.lists(st.sampled_from(["Active Commands", "Queued Commands", "Device Q Depth"]), unique=True, max_size=3))
    columns: list[tuple[str, str, str]] = []  # (header, device or "", counter short name)
    for d in devices:
        obj = f"\\\\esxi01\\Physical Disk SCSI Device({d})\\"
        columns.append((obj + "Commands/sec", d, "CMDS/s"))
        if latency:
            columns.append((obj + latency, d, "LAT"))
        columns += [(obj + c, d, c) for c in counts]
        for p in draw(st.lists(st.sampled_from(_ESX_PATHS), max_size=3, unique=True)):
            path = f"\\\\esxi01\\Physical Disk Path({d}-{p})\\"
            columns += [(path + "Commands/sec", "", "CMDS/s"), (path + "Average Driver MilliSec/Command", "", "LAT")]
    columns = draw(st.permutations(columns))
    n_rows = draw(st.integers(1, 8))
    places = draw(st.integers(0, 6))
    times = draw(st.lists(_ESX_TIMES, min_size=n_rows, max_size=n_rows))
    if draw(st.booleans()):
        times.sort()
    rows, seen = [], {d: {"cmds": [], "lat": []} for d in devices}
    for t in times:
        cells = [_esx_time(t, places)]
        for _, d, counter in columns:
            high = _ESX_HIGH.get(counter, MAX_LATENCY * 1e3)
            # normal floats: esxtop writes 3 decimals, and a subnormal's mean over samples is 0 in float64
            value = draw(st.one_of(st.just(0.0), st.floats(0, high, allow_subnormal=False), st.integers(0, int(min(high, 10**6))).map(float)))
            form = draw(st.sampled_from(["{:.0f}", "{:.3f}", "{:.6f}", "{!r}", "{:e}", "{:g}", " {:.2f} ", "", "{:.0f}"]))
            text = form.format(value) if form else ""  # "": perfmon's blank, no value in this sample
            if text.strip() and float(text) > high:  # rounding up past the limit: a value esxtop cannot write
                text = form.format(high).strip() if float(form.format(high)) <= high else "0"
            cells.append(text)
            if d and counter in ("CMDS/s", "LAT"):
                seen[d]["cmds" if counter == "CMDS/s" else "lat"].append(float(text) if text.strip() else math.nan)
        rows.append(cells)
    clean = True
    if draw(st.integers(0, 9)) == 0:  # a hostile value in one cell
        r, c = draw(st.integers(0, n_rows - 1)), draw(st.integers(1, len(columns)))
        rows[r][c], clean = draw(st.sampled_from(_ESX_HOSTILE)), False
    header = ["(PDH-CSV 4.0) (UTC)(0)", *(h for h, _, _ in columns)]
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows([header, *rows])
    return buf.getvalue(), seen, clean


def _within(x: float, values: list[float]) -> bool:
    lo, hi = min(values), max(values)
    slack = 1e-9 * max(abs(lo), abs(hi), 1e-300)
    return lo - slack <= x <= hi + slack


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(capture=_esxtop_captures())
def test_esxtop_reads_any_capture_within_its_samples_or_refuses_it_in_one_line(capture):
    """Property: an esxtop capture of any timestamps, widths, values and sizes reads with the device's IOPS between
    its smallest and largest Commands/sec sample and its latency between its smallest and largest GAVG (DAVG)
    sample, every figure finite and > 0 (a weight of 0 or less, from samples at or before 1970, broke both), or is
    refused with one located line. A clean capture (no hostile cell) in which some device completed commands
    always reads. PATHSEL_EXAMPLES sets the examples (default 200; the issue's target: 10,000)."""
    text, seen, clean = capture
    try:
        m = read_esxtop(text, "esxtop.csv")
    except MeasureError as e:
        assert e.source == "esxtop.csv" and "\n" not in str(e) and len(str(e)) < 1000
        busy = any(max(np.nan_to_num(s["cmds"])) >= 1e-300 for s in seen.values())  # a mean over <= 8 samples stays > 0
        assert not (clean and busy), str(e)
        return
    assert m.device in seen and m.details["samples"] == len(text.splitlines()) - 1
    for f in m.figures:
        assert np.isfinite(f.value) and 0 < f.value <= (MAX_IOPS if f.metric == "iops" else MAX_LATENCY)
    if clean:
        mine = seen[m.device]
        iops = m.get("iops")
        assert _within(iops.value, np.nan_to_num(mine["cmds"]).tolist()), (iops.value, mine["cmds"])
        latency = [x for x in mine["lat"] if not math.isnan(x)]
        if m.get("mean") is not None:
            assert _within(m.get("mean").value * 1e3, latency), (m.get("mean").value, latency)


@pytest.mark.parametrize(
    ("times", "values", "iops"),
    [
        (["01/01/1970 00:00:00"], ["1000"], 1000.0),  # one sample at the epoch: its span was 0, a ZeroDivisionError
        (["12/31/1969 23:59:59", "01/01/1970 00:00:00"], ["0", "1000"], 500.0),  # spans -1 and 1: 2,000 IOPS measured
        (["01/01/1960 00:00:00", "01/01/1960 00:00:05"], ["100", "300"], 200.0),  # before the epoch: esxtop's -d rule
        (["01/01/1970 00:00:02", "01/01/1970 00:00:03"], ["100", "400"], 200.0),  # pathsel top -b: from time 0
        (["01/15/2025 10:00:00.000001", "01/15/2025 10:00:00.000002"], ["100", "300"], 200.0),  # 1 µs apart, told apart
    ],
    ids=["one-at-epoch", "either-side-of-epoch", "before-epoch", "top-b-clock", "microseconds-apart"],
)
def test_esxtop_sample_times_weigh_each_sample_by_a_positive_span(times, values, iops):
    header = _ESXTOP_HEADER[:2]
    text = "\n".join(",".join(f'"{c}"' for c in row) for row in [header, *zip(times, values)]) + "\n"
    m = read_esxtop(text, "esxtop.csv")
    assert m.get("iops").value == pytest.approx(iops)
    assert not any("do not increase" in n for n in m.notes)


def test_esxtop_sample_times_in_other_digits_are_not_esxtops():
    """strptime reads Arabic-Indic digits as digits: a time esxtop never writes weighs as an unreadable one, with
    the note, and every sample weighs the same."""
    header = _ESXTOP_HEADER[:2]
    times = ["01/15/2025 10:00:00", "\u0660\u0661/15/2025 10:00:05"]
    text = "\n".join(",".join(f'"{c}"' for c in row) for row in [header, *zip(times, ["100", "300"])]) + "\n"
    m = read_esxtop(text, "esxtop.csv")
    assert any("line 3: the sample time" in n and "is not esxtop's MM/DD/YYYY HH:MM:SS" in n for n in m.notes), m.notes
    assert m.get("iops").value == pytest.approx(200.0)


def test_esxtop_reading_is_linear_in_columns():
    """A path named after its device and a dash (sdb, nvme0c0n1: no runtime name) once tried every device in turn:
    the work grew with devices x paths. Counted here, not timed: the device-prefix lookups per path column stay
    bounded as the capture widens (benchmarks/esxtop_columns.py prints the seconds)."""
    from pathsel.measured import esxtop as mod

    calls = []
    real = mod._device_prefix

    def counting(instance, devices, lengths):
        calls.append(len(lengths))
        return real(instance, devices, lengths)

    for n in (100, 1000):
        calls.clear()
        header = ["(PDH-CSV 4.0) (UTC)(0)"]
        header += [f"\\\\h\\Physical Disk SCSI Device(naa.{i})\\Commands/sec" for i in range(n)]
        header += [f"\\\\h\\Physical Disk Path(naa.{i}-sd{i})\\Commands/sec" for i in range(n)]
        row = ["01/15/2025 10:00:00"] + ["5"] * (2 * n)
        text = "\n".join(",".join(f'"{c}"' for c in r) for r in (header, row)) + "\n"
        orig = mod._device_prefix
        mod._device_prefix = counting
        try:
            m = read_esxtop(text, "wide.csv")
        finally:
            mod._device_prefix = orig
        assert len(calls) == n and max(calls) <= 4  # one lookup per path column, over a handful of name lengths
        assert len([f for f in m.figures if f.path is not None]) == 1  # the chosen device's one path
