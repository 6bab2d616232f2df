"""What issue 15 asked of the outputs once hostile input gets through: a run with no completion says so
(null latencies, a reason), a retry storm gets a warning, output paths are checked before any work, the
Python API refuses what files and command lines refuse, a run too large for memory is one message, and a
sweep's workers end with their parent.

The refusals themselves are rows of tests/test_bad_input.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import pathsel
from pathsel.cli import main
from pathsel.errors import check_writable

from .conftest import ROOT

SCENARIO = """\
duration = "0.2s"
interval = "0.05s"

[[arrays]]
name = "a"

[[hosts]]
name = "h"
{host}

[[paths]]
name = "p0"
array = "a"
one_way_latency = "50us"
{path}

[[paths]]
name = "p1"
array = "a"
one_way_latency = "60us"
{path}

[[workloads]]
iodepth = 4

[[policies]]
spec = "rr"
{faults}
"""

EVERY_PATH_DOWN = """
[[faults]]
at = "0s"
what = "path_down"
path = "p0"

[[faults]]
at = "0s"
what = "path_down"
path = "p1"
"""


def _write(tmp_path: Path, name: str = "s.toml", *, host: str = "", path: str = "", faults: str = "") -> Path:
    p = tmp_path / name
    p.write_text(SCENARIO.format(host=host, path=path, faults=faults))
    return p


def _strict(text: str) -> dict:
    def refuse(token):
        raise AssertionError(f"{token} in the JSON")

    return json.loads(text, parse_constant=refuse)


# -- no completion: no latency, and why --------------------------------------------------------------------


def test_a_run_with_no_completion_reports_null_latencies_and_why(tmp_path, capsys):
    path = _write(tmp_path, faults=EVERY_PATH_DOWN)
    result = pathsel.simulate(path)
    run = result.runs[0]
    assert run.ios == 0
    assert run.no_io_reason() == "every path down from 0 s"

    assert main(["simulate", str(path), "--json"]) == 0
    doc = _strict(capsys.readouterr().out)
    r = doc["runs"][0]
    assert r["latency_us"] == {"mean": None, "p50": None, "p99": None, "p999": None, "max": None}
    assert r["no_io"] == "every path down from 0 s"
    assert all(p["latency_us"] == {"mean": None, "p50": None, "p99": None} for p in r["paths"])

    assert main(["simulate", str(path)]) == 0
    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if line.startswith("rr "))
    assert row.split()[4:9] == ["–"] * 5  # a dash, not a perfect-looking 0.000 (after IOPS and "MiB/s (MB/s)")
    assert "  rr: no I/O completed in the measured window, so no latency (–): every path down from 0 s\n" in table


def test_a_run_that_completes_has_no_no_io_key(tmp_path, capsys):
    path = _write(tmp_path)
    assert main(["simulate", str(path), "--json"]) == 0
    r = _strict(capsys.readouterr().out)["runs"][0]
    assert "no_io" not in r and "warnings" not in r and r["latency_us"]["p50"] > 0


def test_the_report_says_why_a_run_has_no_latency(tmp_path, capsys):
    path = _write(tmp_path, faults=EVERY_PATH_DOWN)
    out = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(out), "-q"]) == 0
    html = out.read_text(encoding="utf-8")
    assert "rr: no I/O completed in the measured window, so no latency (–): every path down from 0 s" in html


# -- retry storms: a floor on the timeouts, and a warning above it ------------------------------------------


def test_a_retry_storm_gets_a_warning(tmp_path, capsys):
    # every attempt takes 200 us and times out after 10 us, the shortest io_timeout taken
    path = _write(tmp_path, host='io_timeout = "10us"')
    assert main(["simulate", str(path), "--duration", "50ms", "--json"]) == 0
    r = _strict(capsys.readouterr().out)["runs"][0]
    (warning,) = r["warnings"]
    assert "retries for" in warning and "timed out after io_timeout (10us)" in warning
    assert warning.endswith(": a retry storm, check io_timeout and loss_ppm")
    assert main(["simulate", str(path), "--duration", "50ms"]) == 0
    assert f"  warning: rr: {warning}\n" in capsys.readouterr().out


def test_a_lossy_path_with_a_sane_timeout_gets_no_warning(tmp_path, capsys):
    path = _write(tmp_path, path="loss_ppm = 1000")
    assert main(["simulate", str(path), "--json"]) == 0
    assert "warnings" not in _strict(capsys.readouterr().out)["runs"][0]


# -- outputs checked before the work -----------------------------------------------------------------------


def test_check_writable(tmp_path):
    check_writable(tmp_path / "new.csv")  # a new file in a folder that exists
    (tmp_path / "old.csv").write_text("x")
    check_writable(tmp_path / "old.csv")
    with pytest.raises(pathsel.ScenarioError) as info:
        check_writable(tmp_path / "no" / "x.csv", "results table")
    assert info.value.problem == f"no such folder {str(tmp_path / 'no')!r}: create it first, or write the results table elsewhere"
    with pytest.raises(pathsel.ScenarioError) as info:
        check_writable(tmp_path, "report")
    assert info.value.problem == "is a folder: give the report a file name"
    with pytest.raises(pathsel.ScenarioError) as info:
        check_writable(tmp_path / "old.csv" / "x.csv")
    assert info.value.problem == f"{str(tmp_path / 'old.csv')!r} is not a folder"
    assert list(tmp_path.iterdir()) == [tmp_path / "old.csv"]  # its probe leaves nothing behind


def test_the_sweep_api_checks_its_output_before_any_run(tmp_path, monkeypatch):
    import pathsel.studies.sweep as sweep_module

    monkeypatch.setattr(sweep_module, "simulate", lambda *a, **k: pytest.fail("a run started"))
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.sweep(_write(tmp_path), {"rr.iops": [1, 2]}, out=tmp_path / "none" / "x.parquet", executor="serial")
    assert info.value.problem.startswith("no such folder")


# -- the Python API refuses what the files and the command line refuse -------------------------------------


def test_two_policies_of_one_label_are_refused_by_the_api(tmp_path):
    from pathsel.policies.spec import parse_spec
    from pathsel.scenario import RunSpec

    mine = RunSpec(label="rr", policy=parse_spec("mru")[0])
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.simulate(_write(tmp_path), policies=["rr", mine])
    assert (info.value.source, info.value.place) == ("simulate()", "policies[1]")
    assert info.value.problem.startswith("is labelled 'rr', as policies[0] is: two rows of one name")


def test_a_run_too_large_for_memory_is_one_message(tmp_path, monkeypatch):
    import pathsel.api

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setitem(pathsel.api.ENGINES, "fast", exhausted)
    path = _write(tmp_path)
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.simulate(path)
    assert (info.value.source, info.value.place) == (str(path), "workloads")
    assert info.value.problem == (
        "rr: the run needs more memory than this machine has (4 outstanding I/Os from 1 jobs over 2 paths): lower numjobs, iodepth or the paths"
    )


# -- a sweep's workers end with their parent ---------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended; only its exit status is left


def _kill_parent_and_wait(parent: subprocess.Popen, workers: list[int]) -> list[int]:
    if parent.poll() is None:
        os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 20
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [w for w in workers if _alive(w)]
    for w in left:  # leave no sleeper behind, even when the test fails
        os.kill(w, signal.SIGKILL)
    return left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sweep_workers_exit_when_the_parent_is_killed(tmp_path):
    path = _write(tmp_path)
    parent = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pathsel.cli",
            "sweep",
            str(path),
            "--param",
            "rr.iops=1,2,3,4",
            "--workers",
            "2",
            "--duration",
            "60s",
            "-q",
            "--out",
            str(tmp_path / "x.csv"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_children(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = _children(parent.pid)
        assert len(workers) == 2, "the sweep did not start its two workers"
        time.sleep(1)  # at work on their first runs
    finally:
        left = _kill_parent_and_wait(parent, _children(parent.pid) if parent.poll() is None else [])
    assert left == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_watch_thread_alone_ends_a_worker(tmp_path):
    """Where the kernel does not kill a child with its parent (macOS), the worker's own thread notices."""
    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent("""
        import os, sys, time
        from concurrent.futures import ProcessPoolExecutor
        import pathsel.studies.sweep as sweep

        sys.platform = "darwin"  # no prctl: the thread alone
        if __name__ == "__main__":
            pool = ProcessPoolExecutor(2, initializer=sweep._watch_parent, initargs=(os.getpid(),))
            waiting = [pool.submit(time.sleep, 120) for _ in range(2)]
            time.sleep(1)
            print(*pool._processes, flush=True)
            time.sleep(120)
    """)
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's pathsel, as -m from ROOT gets it
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        workers = [int(w) for w in parent.stdout.readline().split()]
        assert len(workers) == 2
    finally:
        left = _kill_parent_and_wait(parent, _children(parent.pid) if parent.poll() is None else [])
        parent.stdout.close()
    assert left == []
