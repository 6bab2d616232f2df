"""pathsel top: the live view's numbers are the run's, keys switch views and pause, --batch prints snapshots."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest

import pathsel
from pathsel.cli import main
from pathsel.engine import run_fast
from pathsel.model import compile_model
from pathsel.top import Top, pick_run, text_view

from .conftest import ROOT, SIMS


def snapshots(name: str, step: float, **kw):
    sc = pathsel.load_scenario(SIMS / name)
    run = pick_run(sc, kw.pop("policy", None))
    model = compile_model(sc, run, **kw)
    top, snaps = Top(model), []
    metrics = run_fast(model, run.policy, live=lambda lv: snaps.append(top.snapshot(lv)), live_step=step)
    return model, run, snaps, metrics


def test_rates_add_up_to_the_runs_counts():
    model, run, snaps, metrics = snapshots("fast-failover.toml", 0.2)  # 10 of its 20 ms intervals a refresh
    assert [round(s.now, 6) for s in snaps] == [round(0.2 * k, 6) for k in range(1, 20)]
    # CMDS/s x step, summed over the refreshes, is every completion up to the last refresh
    done = sum(s.cmds * s.step for s in snaps)
    last_bin = int(round(snaps[-1].now / model.interval))
    assert done == pytest.approx(metrics.ts_ios[:last_bin].sum())
    # MRU: every I/O on the first path until the failure at 2 s, then on the second
    before = next(s for s in snaps if round(s.now, 6) == 1.0)
    after = next(s for s in snaps if round(s.now, 6) == 3.0)
    assert [r.cells["%SHR"] for r in before.paths] == ["100.0", "0.0"]
    assert [r.cells["%SHR"] for r in after.paths] == ["0.0", "100.0"]
    assert before.paths[0].cells["STATE"] == "AO" and after.paths[0].cells["STATE"] == "DEAD (AO)"
    # the closed loop keeps 16 outstanding: on the paths, or queued for one
    assert all(s.actv + s.qued == 16 for s in snaps)
    assert after.retried == metrics.retried == 16
    # DAVG is the time on the paths: the mean over the window matches the run's per-path histograms
    davg = [s.davg_s for s in snaps if s.now > 2.5]
    assert np.mean(davg) == pytest.approx(metrics.path_hist[1].mean, rel=0.02)


def test_latency_rr_shows_the_remote_paths_dropped_in_the_path_view():
    model, run, snaps, _ = snapshots("esxi-latency-testdrive.toml", 0.5, policy="latency", duration=1.0)
    late = snaps[-1]
    shares = {r.name: float(r.cells["%SHR"]) for r in late.paths}
    assert sum(shares[f"vmhba1:C0:T{i}:L1"] + shares[f"vmhba2:C0:T{i}:L1"] for i in range(5)) == pytest.approx(100, abs=0.5)
    assert all(shares[f"vmhba1:C0:T{i}:L1"] == 0 for i in range(5, 10))
    text = text_view(run.label, late, model, "paths")
    assert "PATH" in text and "%SHR" in text and "vmhba2:C0:T9:L1" in text
    assert f"{late.now:8.2f} s of 2 s" in text
    devices = text_view(run.label, late, model, "devices")
    # esxtop's disk device columns; the device as the scenario names it (its implicit volume), not the host
    assert devices.splitlines()[4].split()[:7] == ["DEVICE", "DQLEN", "ACTV", "QUED", "%USD", "LOAD", "CMDS/s"]
    assert devices.splitlines()[6].split()[0] == "volume"


def test_batch_prints_a_snapshot_per_refresh(capsys):
    code = main(["top", str(SIMS / "fast-failover.toml"), "--text", "-d", "0.5", "--duration", "2", "--view", "p"])
    out = capsys.readouterr().out
    assert code == 0
    heads = re.findall(r"^ +([\d.]+) s of 2 s", out, re.M)
    assert heads == ["0.50", "1.00", "1.50", "2.00"]  # every refresh before the end, then the end
    assert out.count("nvme0c1n1") == 4 and "active/passive (MRU)" in out
    # another policy, by spec; a bad one is a located error
    assert main(["top", str(SIMS / "fast-failover.toml"), "--text", "-d", "0.5", "--duration", "1", "--policy", "round robin"]) == 0
    assert "round robin" in capsys.readouterr().out
    assert main(["top", "--batch", "--policy", "rr:iops=0"]) == 2
    assert "iops must be" in capsys.readouterr().err


def test_batch_with_a_speed_follows_the_wall_clock(capsys):
    start = time.monotonic()
    assert main(["top", str(SIMS / "fast-failover.toml"), "--text", "--speed", "2", "-d", "1", "--duration", "4"]) == 0
    took = time.monotonic() - start
    # samples every simulated second (-d 1), the last at 4 s; pacing counts from time 0: 4 s at speed 2 is 2 s
    assert took >= 1.95, took
    assert capsys.readouterr().out.count("pathsel top") == 4


# (duration, -d): the rule is a snapshot at every refresh strictly before the end of the run, then a final one at
# the end, ceil(end / refresh) in all; a run shorter than a refresh prints one (fast-failover has no ramp: end = duration)
BATCH_COUNTS = [
    ("2", "0.5", ["0.50", "1.00", "1.50", "2.00"]),
    ("1", "0.3", ["0.30", "0.60", "0.90", "1.00"]),
    ("0.7", "0.25", ["0.25", "0.50", "0.70"]),
    ("2", "5", ["2.00"]),
    ("0.1", "1", ["0.10"]),
    ("1", "1", ["1.00"]),
]


@pytest.mark.parametrize(("duration", "delay", "heads"), BATCH_COUNTS)
def test_batch_prints_ceil_of_end_over_refresh_snapshots_the_last_at_the_end(capsys, duration, delay, heads):
    assert main(["top", str(SIMS / "fast-failover.toml"), "--text", "-d", delay, "--duration", duration]) == 0
    out = capsys.readouterr().out
    assert re.findall(r"^ +([\d.]+) s of [\d.]+ s", out, re.M) == heads
    assert len(heads) == math.ceil(float(duration) / float(delay) - 1e-9)


@pytest.mark.parametrize(("duration", "delay"), [("2", "0.5"), ("0.7", "0.25"), ("2", "5")])
def test_batch_snapshots_cover_the_whole_run(monkeypatch, duration, delay):
    """The final snapshot's rates cover the rest of the run: CMDS/s x step over every snapshot is every completion."""
    import io

    import pathsel.top.run as top_module  # where run_top looks its names up

    seen = []
    real = top_module.text_view
    monkeypatch.setattr(top_module, "text_view", lambda label, snap, *a, **k: (seen.append(snap), real(label, snap, *a, **k))[1])
    sc = pathsel.load_scenario(SIMS / "fast-failover.toml")
    run = pick_run(sc, None)
    assert top_module.run_top(sc, run, speed=None, refresh=float(delay), batch=True, text=True, duration=float(duration), out=io.StringIO()) == 0
    model = compile_model(sc, run, duration=float(duration))
    metrics = run_fast(model, run.policy)
    assert seen[-1].now == model.end
    assert sum(s.step for s in seen) == pytest.approx(model.end)
    assert sum(s.cmds * s.step for s in seen) == pytest.approx(metrics.ts_ios.sum())


def test_the_final_snapshot_on_the_reference_engine(monkeypatch):
    """A Python policy (a validation case's random split) runs on the reference engine: the same rule, the same sums."""
    import io

    import pathsel.top.run as top_module  # where run_top looks its names up
    from pathsel.engine import run_reference
    from pathsel.studies.validate import case_of

    seen = []
    real = top_module.text_view
    monkeypatch.setattr(top_module, "text_view", lambda label, snap, *a, **k: (seen.append(snap), real(label, snap, *a, **k))[1])
    sc = case_of(SIMS / "validation" / "mva-single-server.toml").runnable_scenario
    run = pick_run(sc, None)
    assert top_module.run_top(sc, run, speed=None, refresh=0.3, batch=True, text=True, duration=1.0, out=io.StringIO()) == 0
    model = compile_model(sc, run, duration=1.0)
    assert [round(s.now, 6) for s in seen] == [0.3, 0.6, 0.9, model.end]
    assert sum(s.cmds * s.step for s in seen) == pytest.approx(run_reference(model, run.policy).ts_ios.sum())


# top's pacing values: each bad one is one located line on stderr and exit status 2, never a traceback
BAD_TOP_ARGS = [
    (["--speed", "1e-300"], "--speed: must be between 1e-06 and 1e+06"),
    (["--speed", "1e300"], "--speed: must be between 1e-06 and 1e+06"),
    (["--speed", "0"], "--speed: must be > 0 and finite"),
    (["--speed", "-1"], "--speed: must be > 0 and finite"),
    (["--speed", "nan"], "--speed: must be > 0 and finite"),
    (["--speed", "inf"], "--speed: must be > 0 and finite"),
    (["--speed", "fast"], "--speed: 'fast' is not a number"),
    (["-d", "0"], "--delay: must be > 0"),
    (["-d", "-1"], "--delay: must be > 0"),
    (["-d", "nan"], "--delay: must be finite"),
    (["-d", "inf"], "--delay: must be finite"),
    (["-d", "1e300"], "--delay: '1e300' is more than"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_TOP_ARGS)
def test_bad_pacing_values_are_one_located_line(capsys, argv, message):
    with pytest.raises(SystemExit) as exit:
        main(["top", "--batch", "--duration", "0.01", *argv])
    assert exit.value.code == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pathsel: error: command line: argument"), err
    assert message in lines[0] and out == ""


def test_the_tiny_speed_that_gave_a_traceback_is_one_line_from_the_real_command():
    proc = subprocess.run(
        [sys.executable, "-m", "pathsel.cli", "top", "--batch", "--speed", "1e-300", "--duration", "0.01"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        "pathsel: error: command line: argument --speed: must be between 1e-06 and 1e+06 simulated seconds per wall-clock second, got '1e-300'"
    ]


def test_the_slowest_speed_paces_without_overflowing_sleep(monkeypatch):
    """At the slowest --speed a wait is far past what time.sleep takes at once: it is slept in short naps."""
    import io

    import pathsel.top.run as top_module  # where run_top looks its names up

    now = [0.0]
    naps = []

    def sleep(s):
        assert 0 < s <= top_module._NAP
        naps.append(s)
        now[0] += 1e6 if len(naps) % 2 else s  # the clock leaps: keep the test short

    monkeypatch.setattr(top_module.time, "sleep", sleep)
    sc = pathsel.load_scenario(SIMS / "fast-failover.toml")
    code = top_module.run_top(
        sc, pick_run(sc, None), speed=top_module.SPEED_MIN, refresh=1.0, batch=True, duration=0.01, out=io.StringIO(), clock=lambda: now[0]
    )
    assert code == 0 and naps


def test_without_a_terminal_it_says_to_use_batch(capsys):
    assert main(["top", "--duration", "1"]) == 2
    err = capsys.readouterr().err
    assert "needs a terminal" in err and "add -b for esxtop's CSV or --text" in err


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_keys_switch_views_pause_and_quit_in_a_real_terminal(tmp_path):
    session = f"pathsel-top-{uuid.uuid4().hex[:8]}"
    status = tmp_path / "status"
    env = f"PYTHONPATH={ROOT}" + (f":{os.environ['PYTHONPATH']}" if os.environ.get("PYTHONPATH") else "")
    # pytest exports COLUMNS=80 and LINES=24, which rich would take over the terminal's own size
    cmd = (
        f"cd {ROOT} && env -u COLUMNS -u LINES {env} {sys.executable} -m pathsel.cli top sims/esxi-latency-testdrive.toml "
        f"--duration 120 --speed 1 -d 0.25; echo $? > {status}; sleep 30"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "140", "-y", "40", cmd], check=True)

    def screen() -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout

    def wait_for(pattern: str, timeout: float = 60.0) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            text = screen()
            if re.search(pattern, text):
                return text
            time.sleep(0.2)
        raise AssertionError(f"{pattern!r} not on screen:\n{screen()}")

    def clock(text: str) -> float:
        return float(re.search(r"^ *([\d.]+) s of 121 s", text, re.M).group(1))

    def keys(k: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", session, k], check=True)

    try:
        first = wait_for(r"DEVICE +DQLEN +ACTV")
        assert "volume" in first and "view: devices" in first
        keys("p")
        paths = wait_for(r"PATH +ARRAY +STATE")
        assert "vmhba2:C0:T9:L1" in paths and "view: paths" in paths
        keys(" ")
        paused = wait_for("PAUSED")
        time.sleep(1.5)
        assert clock(screen()) == clock(paused)  # simulated time stands still
        keys(" ")
        time.sleep(1.5)
        assert clock(screen()) > clock(paused)
        keys("h")
        assert "esxi01" in wait_for(r"HOST +DQLEN")
        keys("d")  # esxtop's disk adapter screen: the paths' vmhbaN
        assert "vmhba2" in wait_for(r"ADAPTR +NPTH")
        keys("u")  # esxtop's disk device screen
        assert "volume" in wait_for(r"DEVICE +DQLEN")
        keys("+")
        wait_for("speed 2x")
        keys("q")
        end = time.monotonic() + 20
        while not status.exists() and time.monotonic() < end:
            time.sleep(0.2)
        assert status.read_text().strip() == "0"
        assert "Traceback" not in screen()
        # the terminal is left as it was: no "pathsel top: starting..." line printed before the live view
        assert "starting" not in screen(), screen()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def test_with_a_device_queue_depth_actv_qued_and_kavg_are_the_engines_own():
    model, run, snaps, metrics = snapshots("esxi-24-vms-dqlen.toml", 0.5, duration=2.0)
    dqlen = model.host_params[0].queue_depth
    assert dqlen and all(s.actv <= dqlen for s in snaps)
    late = [s for s in snaps if s.now > model.ramp]
    assert all(s.qued > 0 for s in late)  # more outstanding than the device takes: the rest waits in the host
    row = late[-1].devices[0].cells
    assert row["DQLEN"] == str(dqlen) and float(row["KAVG/cmd"]) > 0
    # KAVG + DAVG over the refresh is GAVG, as esxtop adds them
    s = late[-1]
    assert float(row["KAVG/cmd"]) + float(row["DAVG/cmd"]) == pytest.approx(s.gavg_s * 1e3, abs=0.02)
