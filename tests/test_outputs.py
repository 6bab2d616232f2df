"""No output overwrites an input of the same command, and every output is written whole or not at all (issue 38).

A table of command lines whose output names one of their own inputs, each tried with the input named as given,
as ``./NAME``, through a folder and back, by absolute path, through a symlink and through a hard link: exit status
2, one line on stderr naming the output, and every file in the folder unchanged byte for byte (nothing added).
Then :mod:`pathsel.outputs` itself: a failure while writing leaves the old file and no temporary file, permission
bits are kept, a symlink stays a symlink, a stream is written in place, a killed writer leaves the old file.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathsel import outputs
from pathsel.cli import main
from pathsel.errors import ScenarioError
from pathsel.outputs import TMP_SUFFIX, atomic_path, check_not_input, same_file, scenario_files, write_atomic

from .conftest import ROOT, SIMS

IMPORT = ROOT / "tests" / "data" / "import"


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A folder holding one command's inputs: a scenario, one that replays a trace, captures, fio output, results."""
    shutil.copy(SIMS / "fast-failover.toml", tmp_path / "in.toml")
    shutil.copy(SIMS / "trace-replay.toml", tmp_path / "trace.toml")
    (tmp_path / "data").mkdir()
    shutil.copy(SIMS / "data" / "oltp-burst.blkparse.txt", tmp_path / "data" / "oltp-burst.blkparse.txt")
    for name in ("esxcli-nmp-device-list.txt", "esxcli-core-path-list.txt", "fio-randwrite.json"):
        shutil.copy(IMPORT / name, tmp_path / name)
    (tmp_path / "r.csv").write_text("scenario,point,policy\nx,y,z\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


# (command line with {out} where the output goes, the input the output names, its role in the message)
CASES = [
    (["report", "in.toml", "-o", "{out}"], "in.toml", "the scenario"),
    (["report", "trace.toml", "-o", "{out}"], "data/oltp-burst.blkparse.txt", "a file trace.toml reads"),
    (
        ["import", "esxcli", "esxcli-nmp-device-list.txt", "esxcli-core-path-list.txt", "-o", "{out}"],
        "esxcli-core-path-list.txt",
        "a captured output",
    ),
    (
        ["import", "esxcli", "esxcli-nmp-device-list.txt", "esxcli-core-path-list.txt", "--workload", "fio-randwrite.json", "-o", "{out}"],
        "fio-randwrite.json",
        "--workload",
    ),
    (["calibrate", "in.toml", "--fit", "service_time", "-o", "{out}"], "in.toml", "the scenario"),
    (["calibrate", "in.toml", "--fit", "service_time", "--measured", "fio-randwrite.json", "-o", "{out}"], "fio-randwrite.json", "--measured"),
    (["sweep", "in.toml", "--out", "{out}"], "in.toml", "a scenario file"),
    (["league", "in.toml", "--html", "{out}"], "in.toml", "a scenario file"),
    (["league", "in.toml", "--markdown", "{out}"], "in.toml", "a scenario file"),
    (["league", "in.toml", "--out", "{out}"], "in.toml", "a scenario file"),
    (["league", "--table", "r.csv", "--html", "{out}"], "r.csv", "--table"),
    (["recommend", "r.csv", "--html", "{out}"], "r.csv", "the results table"),
]

# how the output names the input: as given, ./NAME, sub/../NAME, absolute, a symlink to it, a hard link to it
VARIANTS = ["same", "dot", "dotdot", "absolute", "symlink", "hardlink"]


def _name(work: Path, target: str, how: str) -> str:
    if how == "same":
        return target
    if how == "dot":
        return f"./{target}"
    if how == "dotdot":
        return f"sub/../{target}"
    if how == "absolute":
        return str(work / target)
    link = work / f"{how}-{Path(target).name}"
    if how == "symlink":
        link.symlink_to(work / target)
    else:
        os.link(work / target, link)
    return link.name


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (links as links) and a hash of its bytes."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(folder))] = "-> " + os.readlink(p)
        elif p.is_file():
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize("how", VARIANTS)
@pytest.mark.parametrize(("argv", "target", "role"), CASES, ids=[" ".join(c[0][:2]) + f" {c[1]}" for c in CASES])
def test_an_output_that_names_an_input_is_refused_and_the_input_is_unchanged(work, capsys, argv, target, role, how):
    out = _name(work, target, how)
    before = _snapshot(work)
    code = main([a.replace("{out}", out) for a in argv])
    after = _snapshot(work)
    _, err = capsys.readouterr()
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"pathsel: error: {out}: is one of this command's inputs ({role}"), lines[0]
    assert after == before  # byte for byte, and no file added (no temporary file, no half a report)


def test_two_outputs_of_one_command_on_one_file_are_refused(work, capsys):
    before = _snapshot(work)
    assert main(["league", "in.toml", "--out", "x.csv", "--html", "./x.csv"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "pathsel: error: ./x.csv: is given to both --out and --html: one would overwrite the other; give each its own file"
    ]
    assert _snapshot(work) == before


@pytest.mark.parametrize(
    ("argv", "target"),
    [
        (["report", "in.toml", "-o", "./in.toml"], "in.toml"),
        (
            ["import", "esxcli", "esxcli-nmp-device-list.txt", "esxcli-core-path-list.txt", "-o", "esxcli-core-path-list.txt"],
            "esxcli-core-path-list.txt",
        ),
        (["calibrate", "in.toml", "--fit", "service_time", "-o", "in.toml"], "in.toml"),
    ],
)
def test_through_the_real_command(work, argv, target):
    before = _snapshot(work)
    proc = subprocess.run([sys.executable, "-m", "pathsel.cli", *argv], capture_output=True, text=True, cwd=work, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "is one of this command's inputs" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"pathsel: error: {argv[-1]}: ")
    assert _snapshot(work) == before


def test_a_sweep_resumes_into_its_own_results_file(work, capsys):
    """--out is read back on purpose (a resume): it is an output that is also read, not an input to refuse."""
    argv = ["sweep", "in.toml", "--out", "res.csv", "--duration", "0.02", "--replications", "1", "--serial", "-q"]
    assert main(argv) == 0
    first = (work / "res.csv").read_text(encoding="utf-8")
    assert main(argv) == 0
    assert (work / "res.csv").read_text(encoding="utf-8") == first
    assert "1 already saved" in capsys.readouterr().out
    assert not [p for p in work.iterdir() if p.name.endswith((TMP_SUFFIX, ".tmp"))]


# --- the scenario's own inputs ---------------------------------------------------------------------------------


def test_scenario_files_lists_the_files_a_scenario_reads(work):
    case = work / "case.toml"
    case.write_text('[validation]\ncase = "c"\nscenario = "trace.toml"\n', encoding="utf-8")
    found = {str(p.relative_to(work)) if p.is_absolute() else str(p) for _, p in scenario_files(case)}
    assert {"case.toml", "trace.toml", "data/oltp-burst.blkparse.txt"} <= {os.path.normpath(f) for f in found}
    assert scenario_files(None) == []
    # a file that cannot be read (or parsed) again is itself only; a case naming itself does not loop
    (work / "bin.toml").write_bytes(b"\x00\xff" * 10)
    assert scenario_files(work / "bin.toml") == [("the scenario", work / "bin.toml")]
    (work / "self.toml").write_text('[validation]\nscenario = "self.toml"\n', encoding="utf-8")
    assert len(scenario_files(work / "self.toml")) == 1
    (work / "deep.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")  # tomllib recurses
    assert scenario_files(work / "deep.toml") == [("the scenario", work / "deep.toml")]


def test_same_file_by_path_and_by_inode(tmp_path):
    a = tmp_path / "a"
    a.write_text("x")
    (tmp_path / "hard").hardlink_to(a)
    (tmp_path / "soft").symlink_to(a)
    (tmp_path / "copy").write_text("x")
    assert same_file(a, tmp_path / "hard") and same_file(a, tmp_path / "soft") and same_file(tmp_path / "soft", tmp_path / "hard")
    assert same_file(tmp_path / "missing", tmp_path / "." / "missing")  # neither exists: the path decides
    assert not same_file(a, tmp_path / "copy") and not same_file(a, tmp_path / "missing")
    assert not same_file(a, "bad\x00name")
    check_not_input(tmp_path / "copy", [("x", a), ("none", None)])  # no error
    with pytest.raises(ScenarioError) as e:
        check_not_input(tmp_path / "soft", [("the scenario", a)], option="-o")
    assert (
        str(e.value)
        == f"{tmp_path / 'soft'}: is one of this command's inputs (the scenario {str(a)!r}): -o would overwrite it; write the output to another file"
    )


# --- atomic writes ---------------------------------------------------------------------------------------------


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if TMP_SUFFIX in p.name)


def test_write_atomic_replaces_the_file_and_keeps_its_permission_bits(tmp_path):
    f = tmp_path / "out.html"
    f.write_text("old")
    f.chmod(0o640)
    assert write_atomic(f, "new é") == f
    assert f.read_text(encoding="utf-8") == "new é" and stat.S_IMODE(f.stat().st_mode) == 0o640
    write_atomic(f, b"\x00bytes")
    assert f.read_bytes() == b"\x00bytes" and stat.S_IMODE(f.stat().st_mode) == 0o640
    assert _leftovers(tmp_path) == []


def test_a_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_a_symlink_stays_and_its_target_is_replaced(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "report.html"
    target.write_text("old")
    link = tmp_path / "report.html"
    link.symlink_to(target)
    write_atomic(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert _leftovers(tmp_path) == [] and _leftovers(tmp_path / "real") == []


@pytest.mark.parametrize("fail", ["render", "write", "fsync", "replace", "interrupt"], ids=lambda f: f"a failure at {f}")
def test_a_failure_while_writing_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch, fail):
    f = tmp_path / "out.csv"
    f.write_text("old contents\n")

    def boom(*a, **k):
        if fail == "interrupt":
            raise KeyboardInterrupt
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as m, pytest.raises((OSError, RuntimeError, KeyboardInterrupt)):
        if fail in ("fsync", "replace"):
            m.setattr(outputs.os, fail, boom)
        with atomic_path(f) as tmp:
            tmp.write_text("half a new fi")
            if fail == "render":
                raise RuntimeError("a figure failed to draw")
            if fail in ("write", "interrupt"):
                boom()
    assert f.read_text() == "old contents\n"
    assert _leftovers(tmp_path) == []


def test_a_report_that_fails_to_render_leaves_the_old_report(work, monkeypatch, capsys):
    import pathsel.results.report as report

    (work / "report.html").write_text("the old report")

    def fail(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(outputs.os, "fsync", fail)  # the disk fills as the new report is flushed
        assert main(["report", "in.toml", "-o", "report.html", "--duration", "0.02", "-q"]) == 2
    assert capsys.readouterr().err.splitlines() == ["pathsel: error: report.html: cannot write the report: No space left on device"]
    assert (work / "report.html").read_text() == "the old report"
    assert _leftovers(work) == []
    monkeypatch.setattr(report, "render", lambda *a, **k: "<html>new</html>")
    assert main(["report", "in.toml", "-o", "report.html", "--duration", "0.02", "-q"]) == 0
    assert (work / "report.html").read_text() == "<html>new</html>"


def test_a_killed_writer_leaves_the_old_file(tmp_path):
    """SIGKILL halfway through a write: the target still holds the old file whole. The killed process cannot
    remove its temporary file; it is a hidden ``.NAME.XXXXXXXX.pathsel-tmp`` beside the target, never the target."""
    f = tmp_path / "big.txt"
    f.write_text("old\n" * 1000)
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathsel.outputs import atomic_open
        with atomic_open({str(f)!r}) as out:
            out.write("new\\n" * 100000)
            out.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, timeout=120)
    assert proc.returncode == -9
    assert f.read_text() == "old\n" * 1000
    left = _leftovers(tmp_path)
    assert len(left) == 1 and left[0].startswith(".big.txt.") and left[0].endswith(TMP_SUFFIX)


def test_a_stream_is_written_in_place_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomic(fifo, "through the pipe")
    reader.join(timeout=30)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)
    assert _leftovers(tmp_path) == []


def test_dev_full_is_one_located_line(work, capsys):
    """A device that is full: written in place (never replaced), and the error is one line."""
    assert main(["import", "nvme", str(IMPORT / "nvme-list-subsys.txt"), "-q", "-o", "/dev/full"]) == 2
    lines = capsys.readouterr().err.splitlines()
    # as root: the write fails (no space); otherwise /dev is not writable and check_writable says so first
    assert len(lines) == 1 and lines[0].startswith("pathsel: error: /dev/full: cannot write"), lines
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        (["report", "in.toml", "-o", "{long}"], "report"),
        (["import", "esxcli", "esxcli-nmp-device-list.txt", "esxcli-core-path-list.txt", "-o", "{long}"], "scenario"),
        (["calibrate", "in.toml", "--fit", "service_time", "-o", "{long}"], "scenario"),
        (["sweep", "in.toml", "--out", "{long}"], "results table"),
        (["league", "in.toml", "--markdown", "{long}"], "Markdown file"),
        (["recommend", "r.csv", "--html", "{long}"], "HTML file"),
    ],
)
def test_a_name_the_system_refuses_is_one_line_before_any_work(work, capsys, argv, what):
    long = "x" * 300 + ".csv"  # past NAME_MAX (255 on Linux file systems)
    before = _snapshot(work)
    assert main([a.replace("{long}", long) for a in argv]) == 2
    assert capsys.readouterr().err.splitlines() == [f"pathsel: error: {long}: cannot write the {what} there: File name too long"]
    assert _snapshot(work) == before


# --- the sweep's appended CSV: a cut record is trimmed on resume, a newline inside quotes included ---------------

WHOLE = [
    (b"", 0),
    (b"a,b\n1,2\n", 8),
    (b"a,b\n1,2", 4),  # cut before the newline
    (b'a,b\n"x\ny",2\n', 12),  # a newline inside a quoted field is not a record's end
    (b'a,b\n"x\n', 4),  # cut just after a quoted newline: the file ends in a newline, the record is not whole
    (b'a,b\n"x""\n', 4),  # a doubled quote inside the field
    (b'a,b\n"x""y",2\n"p\nq', 13),
    (b"no newline at all", 0),
]


@pytest.mark.parametrize(("data", "end"), WHOLE)
def test_whole_records(data, end):
    from pathsel.studies.sweep_store import whole_records

    assert whole_records(data) == end


def test_a_sweep_cut_inside_a_multiline_record_resumes_to_the_same_table(work, capsys):
    weird = work / 'we"ird\nname.toml'  # a file name with a quote and a newline: its records span two lines
    shutil.copy(work / "in.toml", weird)
    argv = ["sweep", str(weird), "--out", "res.csv", "--duration", "0.01", "--replications", "2", "--serial", "-q"]
    assert main(argv) == 0
    whole = (work / "res.csv").read_bytes()
    last = whole.rindex(b'"we""ird\n')
    (work / "res.csv").write_bytes(whole[: last + len(b'"we""ird\n')])  # killed just after the quoted newline
    capsys.readouterr()
    assert main(argv) == 0
    assert "1 run now, 1 already saved" in capsys.readouterr().out
    assert (work / "res.csv").read_bytes() == whole


def test_an_append_that_fails_halfway_is_cut_back_and_is_one_line(work, monkeypatch, capsys):
    import builtins

    import pathsel.studies.sweep_store as store

    argv = ["sweep", "in.toml", "--out", "res.csv", "--duration", "0.01", "--replications", "1", "--serial", "-q"]
    assert main(argv) == 0
    whole = (work / "res.csv").read_bytes()
    header = whole[: whole.index(b"\n") + 1]
    (work / "res.csv").write_bytes(header)  # a results file with no run saved yet

    class Full:
        """A file that takes half of what is written, then the disk is full."""

        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, text):
            self.f.write(text[: len(text) // 2])
            self.f.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

    def fake_open(path, mode="r", *a, **k):
        f = builtins.open(path, mode, *a, **k)
        return Full(f) if mode == "a" else f  # reading back (the resume) as usual; appending fills the disk

    monkeypatch.setattr(store, "open", fake_open, raising=False)
    capsys.readouterr()
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == ["pathsel: error: res.csv: cannot append to the results table: No space left on device"]
    assert (work / "res.csv").read_bytes() == header


EXAMPLES = int(os.environ.get("PATHSEL_EXAMPLES", "200"))  # the target: 10,000
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIELD = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r"), max_size=12)  # quotes, commas, newlines


@SETTINGS
@given(rows=st.lists(st.lists(FIELD, min_size=2, max_size=2), min_size=1, max_size=6), cut=st.floats(0, 1))
def test_a_cut_csv_keeps_exactly_its_whole_records(rows, cut):
    """However a table pandas wrote is cut, whole_records keeps a prefix that reads back as its first rows, whole."""
    import io

    import pandas as pd

    from pathsel.studies.sweep_store import whole_records

    text = pd.DataFrame(rows, columns=["a", "b"]).to_csv(index=False, lineterminator="\n").encode("utf-8")
    data = text[: int(cut * len(text))]
    end = whole_records(data)
    assert 0 <= end <= len(data) and (end == 0 or data[end - 1 : end] == b"\n")
    if end == len(text):
        kept = rows
    else:
        header = len(b"a,b\n")
        kept = [] if end <= header else pd.read_csv(io.BytesIO(data[:end]), keep_default_na=False, dtype=str).values.tolist()
    assert kept == rows[: len(kept)]  # the first rows, each whole
    assert whole_records(text) == len(text)  # an uncut table is kept whole


@SETTINGS
@given(data=st.one_of(st.binary(max_size=300), st.text(max_size=300)), mode=st.sampled_from([0o600, 0o640, 0o644, 0o444]))
def test_write_atomic_writes_exactly_the_data_and_keeps_the_mode(data, mode):
    import tempfile

    with tempfile.TemporaryDirectory() as where:
        folder = Path(where)
        f = folder / "out"
        f.write_bytes(b"old")
        f.chmod(mode)
        write_atomic(f, data)
        assert f.read_bytes() == (data if isinstance(data, bytes) else data.encode("utf-8"))
        assert stat.S_IMODE(f.stat().st_mode) == mode
        assert sorted(p.name for p in folder.iterdir()) == ["out"]


def test_links_that_lead_nowhere_are_one_line_before_any_work(work, capsys):
    (work / "loop1").symlink_to("loop2")
    (work / "loop2").symlink_to("loop1")
    (work / "dangling.html").symlink_to(work / "nowhere" / "r.html")
    before = _snapshot(work)
    assert main(["report", "in.toml", "-o", "loop1"]) == 2
    assert main(["report", "in.toml", "-o", "dangling.html"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "pathsel: error: loop1: cannot write the report there: Too many levels of symbolic links",
        f"pathsel: error: dangling.html: is a link to {str(work / 'nowhere' / 'r.html')!r}: no such folder {str(work / 'nowhere')!r}: "
        "create it first, or write the report elsewhere",
    ]
    assert _snapshot(work) == before
    (work / "made.html").symlink_to("real.html")  # a link to a file not there yet: written through, the link kept
    assert main(["import", "nvme", str(IMPORT / "nvme-list-subsys.txt"), "-q", "-o", "made.html"]) == 0
    assert (work / "made.html").is_symlink() and (work / "real.html").read_text(encoding="utf-8").startswith("#")


def test_league_outputs_stay_off_the_scenarios_write_fresh_generates(work, capsys):
    (work / "gen").mkdir()
    (work / "gen" / "fresh-00-x.toml").write_text("kept")
    before = _snapshot(work)
    assert main(["league", "--fresh", "1", "--write-fresh", "gen", "--html", "./gen/fresh-00-x.toml"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "pathsel: error: ./gen/fresh-00-x.toml: is where --write-fresh writes a generated scenario (fresh-NN-*.toml): give --html another name"
    ]
    assert _snapshot(work) == before
