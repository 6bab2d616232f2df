"""pathsel top as esxtop (issue 36): -b writes esxtop's perfmon CSV that the esxtop importer and pandas read back,
-d and -n as esxtop means them, a first frame at time 0, esxtop's keys and device fields, stuck I/Os as ACTV."""

from __future__ import annotations

import csv
import io
import math
import re

import numpy as np
import pandas as pd
import pytest

import pathsel
import pathsel.top as top_module
import pathsel.top.run as top_run  # where run_top looks its names up: what a test replaces
import pathsel.top.views as top_views
from pathsel.cli import main
from pathsel.engine import run_fast
from pathsel.measured.esxtop import read_esxtop
from pathsel.model import compile_model
from pathsel.top import Top, adapter_of, first_snapshot, pick_run, share
from pathsel.top.esxtop_csv import DEVICE_COUNTERS, HEADER_FIRST, decimals, timestamp

from .conftest import SIMS

# esxtop's disk counters (VMware, "Interpreting esxtop Statistics", section 4.2; the names -b writes)
ESXTOP_COUNTERS = set(DEVICE_COUNTERS) | {"Commands/sec", "Average Driver MilliSec/Command", "Active Commands"}
COLUMN = re.compile(r"^\\\\(?P<host>[^\\]+)\\(?P<object>Physical Disk (SCSI Device|Adapter|Path))\((?P<instance>[^)]+)\)\\(?P<counter>.+)$")


def top_csv(capsys, *argv: str) -> str:
    assert main(["top", *argv]) == 0
    return capsys.readouterr().out


def test_batch_writes_esxtops_perfmon_csv(capsys):
    text = top_csv(capsys, str(SIMS / "fast-failover.toml"), "-b", "-d", "0.5", "-n", "8")
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0][0] == HEADER_FIRST == "(PDH-CSV 4.0) (UTC)(0)"
    assert text.splitlines()[0].startswith('"(PDH-CSV 4.0) (UTC)(0)","\\\\linux01\\Physical Disk SCSI Device(volume)\\')
    for name in lines[0][1:]:
        m = COLUMN.match(name)
        assert m and m.group("counter") in ESXTOP_COUNTERS, name
    # the device as the scenario names it (its implicit volume), its paths after it as esxtop's per-path instances
    assert "\\\\linux01\\Physical Disk Path(volume-nvme0c1n1)\\Commands/sec" in lines[0]
    # one line per sample, time first (simulated seconds from the epoch, UTC; the tenths -d 0.5 needs), every cell quoted
    assert [r[0] for r in lines[1:]] == [f"01/01/1970 00:00:0{k // 2}.{5 if k % 2 else 0}" for k in range(1, 9)]
    assert all(len(r) == len(lines[0]) for r in lines)
    assert all(line.startswith('"') and line.endswith('"') for line in text.splitlines())


def test_pandas_opens_it_and_the_times_parse(capsys):
    text = top_csv(capsys, str(SIMS / "esxi-24-vms-dqlen.toml"), "-b", "-d", "0.5", "--duration", "1")
    df = pd.read_csv(io.StringIO(text))
    assert df.columns[0] == HEADER_FIRST and len(df) == 3  # ramp 0.2 s + 1 s: at 0.5, 1.0 and the end, 1.2
    times = pd.to_datetime(df[HEADER_FIRST], format="%m/%d/%Y %H:%M:%S.%f")
    assert (times.diff().dropna() <= pd.Timedelta(seconds=0.5)).all()
    dq = df[[c for c in df.columns if c.endswith("\\Device Q Depth")]]
    assert dq.shape[1] == 1 and (dq.iloc[:, 0] == 32).all()  # DQLEN: the host's queue_depth


@pytest.mark.parametrize("sim", ["fast-failover.toml", "esxi-24-vms-dqlen.toml", "esxi-latency-testdrive.toml"])
def test_round_trip_through_the_esxtop_importer(capsys, sim):
    """top -b > file; pathsel's esxtop importer reads it; its IOPS and GAVG are the run's."""
    duration, delay = "2", "0.5"
    text = top_csv(capsys, str(SIMS / sim), "-b", "-d", delay, "--duration", duration)
    sc = pathsel.load_scenario(SIMS / sim)
    run = pick_run(sc, None)
    model = compile_model(sc, run, duration=float(duration))
    metrics = run_fast(model, run.policy)
    m = read_esxtop(text, "top.csv")
    assert m.device == "volume" and m.details["samples"] == math.ceil(model.end / float(delay) - 1e-9)
    iops = next(f for f in m.figures if f.metric == "iops" and f.path is None).value
    if model.end / float(delay) == int(model.end / float(delay)):  # equal samples: their mean is the run's rate
        assert iops == pytest.approx(metrics.ts_ios.sum() / model.end, rel=1e-6)
    # GAVG weighted by each sample's commands: the mean latency over the measured window (3 decimals of ms per sample)
    gavg = next(f for f in m.figures if f.metric == "mean" and f.path is None).value
    assert gavg == pytest.approx(metrics.overall.mean, rel=2e-3)
    # per path: every path is read back under its own name
    assert {f.path for f in m.figures if f.path} <= {p.name for p in model.paths}


def test_the_engines_write_the_same_csv(monkeypatch):
    """top only reads the record: the reference engine's CSV is the fast engine's, byte for byte."""
    sc = pathsel.load_scenario(SIMS / "fast-failover.toml")
    run = pick_run(sc, None)
    outs = []
    for fast in (True, False):
        monkeypatch.setattr(top_run, "supports", lambda policy, fast=fast: fast)
        buf = io.StringIO()
        assert top_module.run_top(sc, run, speed=None, refresh=0.25, batch=True, duration=2.5, out=buf) == 0
        outs.append(buf.getvalue())
    assert outs[0] == outs[1] and outs[0].count("\n") == 11


# -d: seconds between samples on the simulated clock (in batch as on screen); -n: that many samples
@pytest.mark.parametrize(
    ("argv", "times"),
    [
        (["-d", "0.5", "-n", "3"], ["00:00:00.5", "00:00:01.0", "00:00:01.5"]),
        (["-d", "2", "-n", "3"], ["00:00:02", "00:00:04", "00:00:06"]),  # past the file's 4 s: run longer
        (["-d", "1", "-n", "10", "--duration", "2"], ["00:00:01", "00:00:02"]),  # the run ends first
        (["-d", "1.5", "--duration", "4"], ["00:00:01.5", "00:00:03.0", "00:00:04.0"]),
    ],
)
def test_delay_and_iterations_as_esxtop_means_them(capsys, argv, times):
    text = top_csv(capsys, str(SIMS / "fast-failover.toml"), "-b", *argv)
    assert [r[0][11:] for r in csv.reader(io.StringIO(text))][1:] == times


def test_text_keeps_the_plain_snapshots_with_n(capsys):
    out = top_csv(capsys, str(SIMS / "fast-failover.toml"), "--text", "-d", "0.5", "-n", "6", "--view", "p")
    heads = re.findall(r"^ +([\d.]+) s of ([\d.]+) s", out, re.M)
    assert [h for h, _ in heads] == ["0.50", "1.00", "1.50", "2.00", "2.50", "3.00"]
    # the README's command shows the fault (2 s) and the failover: the second path carries every I/O after it
    last = out.split("pathsel top - ")[-1]
    assert re.search(r"nvme0c0n1 +array +DEAD \(AO\) +0 ", last) and re.search(r"nvme0c1n1 +array +AO +[\d,]+ +100\.0", last)


BAD_N = [
    (["-n", "0"], "argument -n/--iterations: must be >= 1"),
    (["-n", "-1"], "argument -n/--iterations: must be >= 1"),
    (["-n", "three"], "argument -n/--iterations: 'three' is not a whole number"),
    (["-n", "2000000"], "argument -n: 2000000 samples every 1 s is 2e+06 simulated seconds, more than 1e+06"),
    (["-n", "5", "-d", "1e6"], "more than 1e+06: fewer samples or a shorter -d"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_N)
def test_bad_iterations_are_one_located_line(capsys, argv, message):
    try:
        code = main(["top", "-b", *argv])
    except SystemExit as e:
        code = e.code
    assert code == 2
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and err.startswith("pathsel: error: command line: argument -n"), err
    assert message in err and out == ""


def test_the_first_frame_is_at_time_zero_and_frames_are_due_at_their_time(monkeypatch):
    """On screen: time 0 first (before the first I/O), then each frame when the wall clock reaches its simulated
    time at --speed, counted from the frame at time 0 (not shown early and then held, as before)."""
    now = [100.0]
    drawn: list[tuple[float, float]] = []
    monkeypatch.setattr(top_run.time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    real = top_run.rich_view
    monkeypatch.setattr(top_run, "rich_view", lambda label, snap, *a, **k: (drawn.append((snap.now, now[0])), real(label, snap, *a, **k))[1])
    sc = pathsel.load_scenario(SIMS / "fast-failover.toml")
    assert top_module.run_top(sc, pick_run(sc, None), speed=2.0, refresh=0.5, duration=2.0, out=io.StringIO(), clock=lambda: now[0]) == 0
    assert drawn[0][0] == 0.0
    start = drawn[0][1]
    frames = [(t, wall - start) for t, wall in drawn]
    assert [t for t, _ in frames] == [0.0, 0.5, 1.0, 1.5, 2.0, 2.0]  # the last: the "run finished" screen
    for t, wall in frames[1:-1]:
        assert wall == pytest.approx(t / 2.0, abs=0.11)  # due at t / speed (keys are polled every 0.1 s)


def test_first_snapshot_has_nothing_yet():
    sc = pathsel.load_scenario(SIMS / "esxi-24-vms-dqlen.toml")
    top = Top(compile_model(sc, pick_run(sc, None)))
    snap = first_snapshot(top)
    assert snap.now == 0 and snap.cmds == 0 and snap.actv == 0 and snap.qued == 0
    row = snap.devices[0].cells
    assert row["DQLEN"] == "32" and row["ACTV"] == "0" and row["CMDS/s"] == "0" and row["DAVG/cmd"] == "-"


def _snaps(name: str, step: float, **kw):
    sc = pathsel.load_scenario(SIMS / name)
    run = pick_run(sc, kw.pop("policy", None))
    model = compile_model(sc, run, **kw)
    top, snaps = Top(model), []
    run_fast(model, run.policy, live=lambda lv: snaps.append(top.snapshot(lv)), live_step=step)
    return model, snaps


def test_stuck_ios_on_a_dead_unnoticed_path_are_actv():
    """fast-failover: the active path dies at 2 s, the host notices 20 ms later. Meanwhile its 16 I/Os were issued
    and have not come back: esxtop counts them ACTV on the device (and the dead path), not QUED."""
    model, snaps = _snaps("fast-failover.toml", 0.005, duration=2.05)
    during = [s for s in snaps if 2.0 < s.now < 2.02 - 1e-9]
    assert during and all(s.cmds == 0 for s in during)
    for s in during:
        dev = s.devices[0].cells
        assert (dev["ACTV"], dev["QUED"]) == ("16", "0") and (s.actv, s.qued) == (16, 0)
        dead = s.paths[0].cells
        assert dead["STATE"] == "DEAD (AO)" and dead["ACTV"] == "16"
    after = [s for s in snaps if s.now > 2.025]
    assert after and all(s.paths[1].cells["ACTV"] == "16" and s.paths[0].cells["ACTV"] == "0" for s in after)


def test_device_rows_have_esxtops_fields():
    model, snaps = _snaps("esxi-24-vms-dqlen.toml", 0.5, duration=2.0)
    late = [s for s in snaps if s.now > model.ramp][-1]
    v = late.devices[0].values
    dqlen = model.host_params[0].queue_depth
    assert v["DQLEN"] == dqlen
    assert v["%USD"] == pytest.approx(100.0 * v["ACTV"] / dqlen) and v["LOAD"] == pytest.approx((v["ACTV"] + v["QUED"]) / dqlen)
    assert v["LOAD"] > 1  # more outstanding than DQLEN: the rest waits in the host
    assert v["READS/s"] + v["WRITES/s"] == pytest.approx(v["CMDS/s"])
    # QAVG: the time queued in the VMkernel, all of KAVG here (the host adds latency only by queueing)
    assert v["QAVG/cmd"] == pytest.approx(v["KAVG/cmd"]) and v["QAVG/cmd"] > 0
    assert v["GAVG/cmd"] == pytest.approx(v["KAVG/cmd"] + v["DAVG/cmd"])
    # MBREAD/s and MBWRTN/s are esxtop's MB: 2^20 bytes
    sizes = {s for j in model.jobs for s in j.sizes}
    if len(sizes) == 1 and v["READS/s"]:
        assert v["MBREAD/s"] * 2**20 / v["READS/s"] == pytest.approx(sizes.pop())
    # without host queues there is no DQLEN: "-" on screen, no column in the CSV
    _, plain = _snaps("fast-failover.toml", 0.5, duration=1.0)
    cells = plain[-1].devices[0].cells
    assert cells["DQLEN"] == cells["%USD"] == cells["LOAD"] == "-" and cells["QAVG/cmd"] == "0.00"


def test_adapters_view_groups_paths_by_vmhba():
    model, snaps = _snaps("esxi-latency-testdrive.toml", 0.5, duration=1.0)
    rows = {r.name: r for r in snaps[-1].adapters}
    assert set(rows) == {"vmhba1", "vmhba2"} and all(r.cells["NPTH"] == "10" for r in rows.values())
    assert sum(r.values["CMDS/s"] for r in rows.values()) == pytest.approx(snaps[-1].cmds)
    assert np.isfinite(rows["vmhba1"].values["DAVG/cmd"])


# --- review fixes (issue 36, T2) ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sim", "names"),
    [
        ("port-queue-full.toml", [f"esxi0{h}/vmhba1" for h in range(1, 9)]),  # 8 hosts, each its own vmhba1
        ("metro-two-hosts.toml", ["esxi-a/vmhba1", "esxi-a/vmhba2", "esxi-b/vmhba1", "esxi-b/vmhba2"]),
        ("esxi-latency-testdrive.toml", ["vmhba1", "vmhba2"]),  # one host: esxtop's own names
    ],
)
def test_each_host_has_its_own_adapters(capsys, sim, names):
    """Review item 1: adapters of the same name on several hosts were added together under the first host."""
    model, snaps = _snaps(sim, 0.5, duration=1.0)
    last = snaps[-1]
    assert [r.name for r in last.adapters] == names
    assert sum(int(r.cells["NPTH"]) for r in last.adapters) == len(model.paths)
    assert sum(r.values["CMDS/s"] for r in last.adapters) == pytest.approx(last.cmds)
    header = next(csv.reader(io.StringIO(top_csv(capsys, str(SIMS / sim), "-b", "-d", "0.5", "--duration", "1"))))
    adapters = sorted(c for c in header if "\\Physical Disk Adapter(" in c and c.endswith("\\Commands/sec"))
    want = sorted(f"\\\\{n.split('/')[0] if '/' in n else model.hosts[0]}\\Physical Disk Adapter({n.split('/')[-1]})\\Commands/sec" for n in names)
    assert adapters == want


AD_TOML = """
name = "array down, 1 s detection"
seed = 2
duration = "4s"
interval = "20ms"
protocol = "nvme"
[[arrays]]
name = "array"
concurrency = 32
service_time = { read = { dist = "exponential", mean = "100us" }, write = { dist = "exponential", mean = "100us" } }
[[hosts]]
name = "linux01"
detection = "1s"
[[paths]]
name = "nvme0c0n1"
array = "array"
one_way_latency = { dist = "uniform", low = "500us", high = "700us" }
[[paths]]
name = "nvme0c1n1"
array = "array"
one_way_latency = { dist = "uniform", low = "500us", high = "700us" }
[[workloads]]
rw = "randread"
bs = "4k"
iodepth = 16
[[policies]]
spec = "rr:iops=1"
[[faults]]
at = "2s"
what = "array_down"
array = "array"
"""


def _stuck_run(path, policy, step, **kw):
    """Snapshots with the engine's own in-flight counts (live.out) beside them."""
    sc = pathsel.load_scenario(path)
    run = pick_run(sc, policy)
    model = compile_model(sc, run, **kw)
    top, seen = Top(model), []
    run_fast(model, run.policy, live=lambda lv: seen.append((top.snapshot(lv), np.asarray(lv.out).copy())), live_step=step)
    return model, top, seen


# (scenario, policy, refresh, duration, the cut, detection): with host queues or without; both paths cut at once
# (their in-flight I/Os stay where they were) or one (later I/Os may go down it too)
STUCK = [
    (SIMS / "library" / "failover-array-down-metro.toml", "rr:iops=1", 0.1, None),
    (SIMS / "fast-failover.toml", "rr:iops=1", 0.005, 2.05),
    (SIMS / "fast-failover.toml", None, 0.005, 2.05),
    ("AD", None, 0.5, None),
]


@pytest.mark.parametrize(("sim", "policy", "step", "duration"), STUCK)
def test_stuck_ios_stay_on_the_dead_paths_they_were_sent_down(tmp_path, sim, policy, step, duration):
    """Review item 2: while a dead path is not noticed, the device's ACTV is the sum of its paths' (no I/O lost or
    counted twice), the live paths show what is on them, and the dead ones hold what they held before the cut."""
    if sim == "AD":
        sim = tmp_path / "ad.toml"
        sim.write_text(AD_TOML)
    model, top, seen = _stuck_run(sim, policy, step, **({"duration": duration} if duration else {}))
    window = 0
    for k, (snap, out) in enumerate(seen):
        hidden = top.unnoticed(snap.now)
        paths = {p.index: int(snap.paths[p.index].cells["ACTV"]) for p in model.paths}
        for d in model.devices:
            dead = [i for i in d.paths if hidden[i]]
            if not dead:
                continue
            window += 1
            dev = snap.devices[d.index].values["ACTV"]
            assert dev == sum(paths[i] for i in d.paths), snap.now
            assert all(paths[i] == out[i] for i in d.paths if not hidden[i])
            newly = [i for i in dead if not top.unnoticed(seen[k - 1][0].now)[i]] if k else dead
            if newly == dead and len(dead) > 1:  # all cut since the last refresh: shared as they were before it
                assert [paths[i] for i in dead] == share(int(dev) - int(out[list(d.paths)].sum()), [int(seen[k - 1][1][i]) for i in dead])
        # the adapters add up to the paths
        assert sum(r.values["ACTV"] for r in snap.adapters) == sum(paths.values())
    assert window > 0


def test_stuck_ios_on_both_dead_paths_are_what_each_held(tmp_path):
    """The reviewer's case: the paths hold 7 and 9 I/Os before the cut; at 2.5 s, before the 1 s detection, they
    still do (the old code put all 16 on the first dead path)."""
    sim = tmp_path / "ad.toml"
    sim.write_text(AD_TOML)
    model, top, seen = _stuck_run(sim, None, 0.5)
    before = next(out for s, out in seen if s.now == pytest.approx(2.0))
    during = next(s for s, _ in seen if s.now == pytest.approx(2.5))
    assert [int(r.cells["ACTV"]) for r in during.paths] == [int(x) for x in before] and sum(before) == 16
    assert all(r.cells["STATE"] == "DEAD (AO)" for r in during.paths)


def test_stuck_ios_with_host_queues_reach_the_csv(capsys):
    """failover-array-down-metro with host queues: the CSV's dead path columns carry the device's ACTV (were 0)."""
    text = top_csv(capsys, str(SIMS / "library" / "failover-array-down-metro.toml"), "--policy", "rr:iops=1", "-b", "-d", "0.1")
    df = pd.read_csv(io.StringIO(text))
    dev = [c for c in df.columns if "SCSI Device" in c and c.endswith("\\Active Commands")]
    paths = [c for c in df.columns if "Physical Disk Path" in c and c.endswith("\\Active Commands")]
    adapters = [c for c in df.columns if "Physical Disk Adapter" in c and c.endswith("\\Active Commands")]
    window = df[(df[HEADER_FIRST] >= "01/01/1970 00:00:00.7") & (df[HEADER_FIRST] <= "01/01/1970 00:00:00.9")]
    assert len(window) == 3 and len(dev) == 1
    assert (window[dev[0]] == 32).all()
    assert (window[paths].sum(axis=1) == window[dev[0]]).all() and (window[adapters].sum(axis=1) == window[dev[0]]).all()


@pytest.mark.parametrize(
    ("total", "weights", "parts"),
    [(16, [7, 9], [7, 9]), (16, [0, 0], [8, 8]), (5, [0, 0], [3, 2]), (10, [1, 1, 1], [4, 3, 3]), (3, [5], [3]), (0, [3, 4], [0, 0]), (0, [], [])],
)
def test_share_is_whole_ios_that_add_up(total, weights, parts):
    assert share(total, weights) == parts and sum(parts) == total


# Review item 10: esxtop's whole-second times when the samples fall on whole seconds, else the decimals they need
@pytest.mark.parametrize(
    ("argv", "first"),
    [
        (["-d", "1", "-n", "3"], ["01/01/1970 00:00:01", "01/01/1970 00:00:02", "01/01/1970 00:00:03"]),
        (["-d", "0.0004", "-n", "4"], [f"01/01/1970 00:00:00.{k:04d}" for k in (4, 8, 12, 16)]),  # were .000 .001 .001 .002
        (["-d", "0.25", "-n", "2"], ["01/01/1970 00:00:00.25", "01/01/1970 00:00:00.50"]),
        (["-d", "1", "--duration", "1.5"], ["01/01/1970 00:00:01.0", "01/01/1970 00:00:01.5"]),  # the end at 1.5 s
    ],
)
def test_sample_times_are_esxtops_and_distinct(capsys, argv, first):
    text = top_csv(capsys, str(SIMS / "fast-failover.toml"), "-b", *argv)
    times = [r[0] for r in csv.reader(io.StringIO(text))][1:]
    assert times == first and len(set(times)) == len(times)
    parsed = pd.to_datetime(pd.Series(times), format="mixed")
    assert (parsed.diff().dropna() > pd.Timedelta(0)).all()


@pytest.mark.parametrize(
    ("times", "places", "text"),
    [
        ((1.0, 4.0), 0, "01/01/1970 00:00:04"),
        ((0.5, 4.2), 1, "01/01/1970 00:00:04.2"),
        ((0.0004, 4.0), 4, "01/01/1970 00:00:04.0000"),
        ((1 / 3, 1.0), 6, "01/01/1970 00:00:01.000000"),
    ],
)
def test_decimals_and_timestamp(times, places, text):
    assert decimals(*times) == places and timestamp(times[1], places) == text


# Review item 12: -d and -n as typed, blamed on the command line
BAD_DELAY = [
    (["-d", "-1s"], "argument -d/--delay: must be > 0, got '-1s'"),  # was "expected one argument"
    (["-d", "-1"], "argument -d/--delay: must be > 0, got '-1'"),
    (["-n", "-1s"], "argument -n/--iterations: '-1s' is not a whole number"),
    (["-d", "1d", "-n", "2"], "arguments -d and -n: 2 samples every 86400 s need a 172800 s run"),  # blamed interval
    (["-d", "0.0001"], "argument -d: a sample every 0.0001 s over a 4 s run is 40,000 samples, more than 10,000: -d 0.0004"),
    (["-d", "1e-7", "-n", "3"], "argument -d: 1e-07 s is below a microsecond"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_DELAY)
def test_bad_delay_is_one_line_blaming_the_command_line(capsys, argv, message):
    try:
        code = main(["top", str(SIMS / "fast-failover.toml"), "-b", *argv])
    except SystemExit as e:
        code = e.code
    assert code == 2
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and err.startswith("pathsel: error: command line: argument"), err
    assert message in err and out == ""


def _capture(times: list[str], cmds: list[float], gavg: list[float] | None = None) -> str:
    dev = "\\\\esxi01\\Physical Disk SCSI Device(naa.1)\\"
    head = [HEADER_FIRST, dev + "Commands/sec", dev + "Average Guest MilliSec/Command"]
    gavg = gavg or [1.0] * len(cmds)
    lines = [head] + [[t, f"{c}", f"{g}"] for t, c, g in zip(times, cmds, gavg)]
    return "\n".join(",".join(f'"{c}"' for c in line) for line in lines) + "\n"


# Review item 11: each sample weighs the time it covers (times, commands/s, the IOPS, GAVG, a note)
WEIGHTS = [
    # pathsel top -b: from time 0; the last sample is short (0.2 s)
    (["01/01/1970 00:00:00.5", "01/01/1970 00:00:01.0", "01/01/1970 00:00:01.2"], [100, 100, 400], (50 + 50 + 80) / 1.2, None),
    # esxtop -d 5: the first sample covers 5 s as well (the median gap); the last, 2 s
    (["01/15/2025 10:00:00", "01/15/2025 10:00:05", "01/15/2025 10:00:10", "01/15/2025 10:00:12"], [100, 100, 100, 400], 2300 / 17, None),
    # equal gaps: the plain mean
    (["01/15/2025 10:00:00", "01/15/2025 10:00:05"], [100, 300], 200.0, None),
    # unreadable or repeated times: equal weights, said so
    (["yesterday", "today"], [100, 300], 200.0, "line 2: the sample time 'yesterday' is not esxtop's"),
    (["01/15/2025 10:00:05", "01/15/2025 10:00:05"], [100, 300], 200.0, "line 3: the sample times do not increase"),
]


@pytest.mark.parametrize(("times", "cmds", "iops", "note"), WEIGHTS)
def test_importer_weighs_samples_by_their_time(times, cmds, iops, note):
    m = read_esxtop(_capture(times, cmds, [1.0, *[2.0] * (len(cmds) - 1)]), "x.csv")
    got = next(f for f in m.figures if f.metric == "iops" and f.path is None).value
    assert got == pytest.approx(iops)
    assert any(note in n for n in m.notes) if note else not m.notes


def test_round_trip_with_a_short_last_sample(capsys):
    """esxi-24-vms-dqlen, -d 0.5 over 1.2 s: the last sample covers 0.2 s; the importer's IOPS is the run's
    completions over its time (the ramp's included: the importer cannot see it), not the samples' plain mean."""
    text = top_csv(capsys, str(SIMS / "esxi-24-vms-dqlen.toml"), "-b", "-d", "0.5", "--duration", "1")
    sc = pathsel.load_scenario(SIMS / "esxi-24-vms-dqlen.toml")
    run = pick_run(sc, None)
    model = compile_model(sc, run, duration=1.0)
    metrics = run_fast(model, run.policy)
    m = read_esxtop(text, "dq.csv")
    iops = next(f for f in m.figures if f.metric == "iops" and f.path is None).value
    assert iops == pytest.approx(metrics.ts_ios.sum() / model.end, rel=1e-6)
    # item 4: pathsel models the VMkernel's queue now: the note points at the keys
    note = next(n for n in m.notes if n.startswith("KAVG is"))
    assert "queue_depth" in note and "sched_num_req_outstanding" in note and "does not model" not in note


def test_stale_words_are_gone():
    """Review items 4 and 13: the top docstring's keys and -b, docs/cli.md's MB/s, docs/import.md's KAVG note."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    doc = top_module.__doc__ or ""
    assert "``u`` devices, ``d`` adapters" in doc and "``d`` devices" not in doc
    assert "prints one plain-text snapshot per refresh, as ``esxtop -b``" not in doc
    cli = (root / "docs" / "cli.md").read_text()
    assert "completed per second), MB/s" not in cli and "completed per second), `MiB/s`" in cli
    assert "thinned to" not in cli
    imp = (root / "docs" / "import.md").read_text()
    assert "since pathsel has no VMkernel queue" not in imp and "sched_num_req_outstanding" in imp


# --- second review fixes (issue 36, T3) --------------------------------------------------------------------------

FLAP_TOML = """
name = "a flapping FC path"
seed = 404
duration = "600ms"
interval = "25ms"
protocol = "scsi"
[[arrays]]
name = "array"
concurrency = 128
service_time = { read = { dist = "exponential", mean = "150us" }, write = { dist = "exponential", mean = "120us" } }
[[hosts]]
name = "esxi01"
detection = "200ms"
QUEUE
[[paths]]
name = "vmhba1:C0:T0:L1"
array = "array"
one_way_latency = { dist = "uniform", low = "40us", high = "60us" }
[[paths]]
name = "vmhba1:C0:T1:L1"
array = "array"
one_way_latency = { dist = "uniform", low = "40us", high = "60us" }
[[paths]]
name = "vmhba2:C0:T0:L1"
array = "array"
one_way_latency = { dist = "uniform", low = "40us", high = "60us" }
[[workloads]]
name = "oltp"
rw = "randrw"
rwmixread = 70
bs = "8k"
iodepth = 16
ramp_time = "200ms"
FAULTS
"""


def _flap(tmp_path, faults: list[tuple[str, str, str]], queue: str = "") -> tuple[object, Top]:
    text = FLAP_TOML.replace("QUEUE", queue).replace(
        "FAULTS", "".join(f'[[faults]]\nat = "{at}"\nwhat = "{what}"\npath = "{path}"\n' for at, what, path in faults)
    )
    sim = tmp_path / "flap.toml"
    sim.write_text(text)
    return sim, Top(compile_model(pathsel.load_scenario(sim), pick_run(pathsel.load_scenario(sim), None)))


T1, T2 = "vmhba1:C0:T1:L1", "vmhba2:C0:T0:L1"
# (faults, path, the times it holds stuck I/Os, the times it does not): the wire back before the host noticed
# (200 ms) holds them until the host next looks at its paths (review item 1: they turned into QUED at 550 ms)
WINDOWS = [
    ([("400ms", "path_down", T1), ("550ms", "path_up", T1)], 1, [0.401, 0.5, 0.55, 0.575, 0.6], [0.4, 0.3, 0.601, 0.7]),
    ([("400ms", "path_down", T1), ("700ms", "path_up", T1)], 1, [0.45, 0.6], [0.601, 0.65, 0.75]),  # noticed while down
    ([("400ms", "path_down", T1), ("900ms", "path_up", T1)], 1, [0.45, 0.6], [0.61, 0.95]),
    # another path's notice at 500 ms wakes them before the flapping path's own at 600 ms
    ([("300ms", "path_down", T2), ("400ms", "path_down", T1), ("450ms", "path_up", T1)], 1, [0.45, 0.5], [0.501, 0.55, 0.6]),
    ([("300ms", "path_down", T2), ("400ms", "path_down", T1), ("450ms", "path_up", T1)], 2, [0.35, 0.5], [0.501, 0.6]),
    # two flaps: each its own window
    (
        [("250ms", "path_down", T1), ("300ms", "path_up", T1), ("500ms", "path_down", T1), ("560ms", "path_up", T1)],
        1,
        [0.3, 0.45, 0.55, 0.7],
        [0.25, 0.451, 0.701],
    ),
]


@pytest.mark.parametrize(("faults", "path", "held", "free"), WINDOWS)
def test_a_path_back_before_the_host_noticed_still_holds_its_stuck_ios(tmp_path, faults, path, held, free):
    _, top = _flap(tmp_path, faults)
    assert all(top.unnoticed(t)[path] for t in held), [top.unnoticed(t)[path] for t in held]
    assert not any(top.unnoticed(t)[path] for t in free), [top.unnoticed(t)[path] for t in free]


@pytest.mark.parametrize(("policy", "queue"), [("rr:iops=1", ""), ("rr:iops=1", "queue_depth = 64"), ("fixed", ""), ("mpio:lqd", "queue_depth = 64")])
def test_stuck_ios_stay_actv_when_the_path_returns_before_the_notice(tmp_path, policy, queue):
    """Review item 1: down at 400 ms, back at 550 ms, noticed at 600 ms. The engines hold the lost I/Os until 600 ms:
    ACTV on the device and on the flapping path (were QUED 16 and every path 0), the device's ACTV its paths' sum."""
    sim, _ = _flap(tmp_path, [("400ms", "path_down", T1), ("550ms", "path_up", T1)], queue)
    sc = pathsel.load_scenario(sim)
    run = pick_run(sc, policy)
    model = compile_model(sc, run)
    top, snaps = Top(model), []
    run_fast(model, run.policy, live=lambda lv: snaps.append(top.snapshot(lv)), live_step=0.025)
    window = [s for s in snaps if 0.54 < s.now < 0.59]  # 550 and 575 ms (the refresh at 600 ms falls just after the notice)
    assert len(window) == 2
    for s in snaps:
        dev = s.devices[0].values
        assert dev["ACTV"] == sum(p.values["ACTV"] for p in s.paths), s.now
        assert (dev["ACTV"], dev["QUED"]) == (16, 0), s.now  # a closed loop of 16, 3 live paths: nothing waits
    if policy == "rr:iops=1":  # round robin sends every I/O down the dead path in turn: all 16 held there
        assert all(s.paths[1].values["ACTV"] == 16 for s in window)


@pytest.mark.parametrize("sim", ["metro-two-hosts.toml", "fast-failover.toml", "esxi-24-vms-dqlen.toml"])
def test_the_time_zero_frame_has_nothing_issued(sim):
    """Review item 7: without host queues the first frame read ACTV 0 QUED 24 before any I/O was issued."""
    sc = pathsel.load_scenario(SIMS / sim)
    snap = first_snapshot(Top(compile_model(sc, pick_run(sc, None))))
    assert (snap.actv, snap.qued) == (0, 0)
    assert all((r.cells["ACTV"], r.cells["QUED"]) == ("0", "0") for r in snap.devices + snap.hosts + snap.vms)
    head = top_module.text_view("x", snap, Top(compile_model(sc, pick_run(sc, None))).model, "devices").splitlines()[2]
    assert "ACTV 0   QUED 0" in head and "- ms" not in head and "GAVG/cmd -   DAVG/cmd -   KAVG/cmd -" in head  # item 11


# Review item 8: the sample limits say what helps
LIMITS = [
    (["-n", "99999"], "argument -n: 99,999 samples are more than 10,000 in one run: -n 10,000 or fewer", "-d 10"),
    (["-n", "10001", "-d", "1ms"], "argument -n: 10,001 samples are more than 10,000 in one run: -n 10,000 or fewer", "-d 0.001 or"),
    (["-d", "0.0001"], "argument -d: a sample every 0.0001 s over a 4 s run is 40,000 samples, more than 10,000: -d 0.0004 or longer", None),
    (["-d", "0.0001", "-n", "20000", "--duration", "2"], "-d 0.0002 or longer, or -n 10,000 or fewer", None),
]


@pytest.mark.parametrize(("argv", "message", "unwanted"), LIMITS)
def test_sample_limits_name_what_helps(capsys, argv, message, unwanted):
    assert main(["top", str(SIMS / "fast-failover.toml"), "-b", *argv]) == 2
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and message in err and out == "", err
    assert unwanted is None or unwanted not in err


@pytest.mark.parametrize(("end", "text"), [(4.0, "0.0004"), (10.001, "0.00101"), (1.5, "0.00015"), (86400.0, "8.64"), (10.0007, "0.00101")])
def test_fitting_delay_is_rounded_up_so_it_fits(end, text):
    d = top_module.fitting_delay(end)
    assert d == text and math.ceil(end / float(d) - 1e-9) <= top_module.MAX_SAMPLES


def test_microsecond_samples_carry_microseconds(capsys):
    """Review item 8: -d 1us wrote 00:00:00 on every line (1e-6 passed for a whole second)."""
    text = top_csv(capsys, str(SIMS / "fast-failover.toml"), "-b", "-d", "1us", "-n", "3")
    assert [r[0] for r in csv.reader(io.StringIO(text))][1:] == [f"01/01/1970 00:00:00.00000{k}" for k in (1, 2, 3)]
    assert decimals(1e-6, 4.0) == 6 and decimals(2e-6, 3e-6) == 6 and decimals(1.0, 4.0) == 0
    times = pd.to_datetime(pd.Series([r[0] for r in csv.reader(io.StringIO(text))][1:]), format="%m/%d/%Y %H:%M:%S.%f")
    assert (times.diff().dropna() == pd.Timedelta(microseconds=1)).all()  # the importer's spans, no longer "do not increase"


def test_a_run_made_longer_for_n_says_so(capsys):
    assert main(["top", str(SIMS / "fast-failover.toml"), "-b", "-d", "2", "-n", "3"]) == 0
    err = capsys.readouterr().err
    assert "pathsel top: 3 samples every 2 s: the run is made 6 s long (the file's is 4 s; --duration sets it)" in err
    assert main(["top", str(SIMS / "fast-failover.toml"), "-b", "-d", "1", "-n", "3"]) == 0
    assert "the run is made" not in capsys.readouterr().err  # the file's run is long enough: nothing to say


def _queue_capture(kavg: float, gavg: float, qavg: float | None, qued: float | None) -> str:
    dev = "\\\\esxi01\\Physical Disk SCSI Device(naa.1)\\"
    cols = {"Commands/sec": 1000.0, "Average Kernel MilliSec/Command": kavg, "Average Guest MilliSec/Command": gavg}
    if qavg is not None:
        cols["Average Queue MilliSec/Command"] = qavg
    if qued is not None:
        cols["Queued Commands"] = qued
    head = [HEADER_FIRST, *(dev + c for c in cols)]
    rows = [[f"01/15/2025 10:00:0{k}", *(f"{v}" for v in cols.values())] for k in (0, 5)]
    return "\n".join(",".join(f'"{c}"' for c in line) for line in [head, *rows]) + "\n"


# Review item 6: what KAVG was, from QAVG (or QUED): queued (queue_depth advice) or waits for a path (none)
KAVG_NOTES = [
    ((1.0, 2.0, 0.9, 40.0), ["QAVG (the time queued) 45%", "queue_depth", "sched_num_req_outstanding"], ["the rest of KAVG"]),
    ((1.0, 2.0, 0.5, 40.0), ["queue_depth", "the rest of KAVG (0.500 ms) is the host's waits for a path"], []),
    ((0.1, 0.8, 0.0, 0.0), ["QAVG (the time queued) is 0.000 ms", "waits for a path (retries after a lost path or QUEUE FULL"], ["sched_num_req"]),
    ((0.1, 0.8, None, 0.0), ["nothing queued (QUED 0)", "waits for a path"], ["queue_depth"]),
    ((1.0, 2.0, None, 12.0), ["QUED 12.0 on average", "queue_depth", "KAVG also counts the host's waits for a path"], []),
    ((1.0, 2.0, None, None), ["queued (the host's queue_depth and sched_num_req_outstanding) or waits for a path"], []),
    ((0.1, 2.0, 0.0, 0.0), [], ["KAVG is"]),  # 5 %: no note
]


@pytest.mark.parametrize(("figures", "wanted", "unwanted"), KAVG_NOTES)
def test_the_kavg_note_says_what_kavg_was(figures, wanted, unwanted):
    notes = " ".join(read_esxtop(_queue_capture(*figures), "x.csv").notes)
    assert all(w in notes for w in wanted), notes
    assert not any(u in notes for u in unwanted), notes


def test_pathsels_own_csv_of_a_fault_run_gets_no_queue_advice(capsys):
    """Review item 6: metro-two-hosts has no host queues; its KAVG is the failover's wait, not a queue."""
    m = read_esxtop(top_csv(capsys, str(SIMS / "metro-two-hosts.toml"), "-b", "-d", "0.5"), "m2.csv")
    note = next(n for n in m.notes if n.startswith("KAVG is"))
    assert "queue_depth" not in note.split("not from")[0] and "waits for a path" in note and m.details["QAVG"] == 0


def test_importer_weighs_actv_and_qued_by_time():
    """Review item 11: ACTV and QUED are counts now; a sample covering 0.2 s weighs 0.2, not a whole sample."""
    dev = "\\\\esxi01\\Physical Disk SCSI Device(naa.1)\\"
    head = [HEADER_FIRST, dev + "Commands/sec", dev + "Active Commands", dev + "Queued Commands", dev + "Device Q Depth"]
    rows = [
        ["01/01/1970 00:00:00.5", "100", "10", "0", "32"],
        ["01/01/1970 00:00:01.0", "100", "10", "0", "32"],
        ["01/01/1970 00:00:01.2", "100", "40", "6", "32"],
    ]
    m = read_esxtop("\n".join(",".join(f'"{c}"' for c in r) for r in [head, *rows]) + "\n", "x.csv")
    assert m.details["ACTV"] == pytest.approx((5 + 5 + 8) / 1.2) and m.details["QUED"] == pytest.approx(1.2 / 1.2)
    assert m.details["DQLEN"] == 32


def test_queue_full_retries_on_no_path_are_said():
    """Review item 10: port-queue-full's devices count ACTV 64 over paths holding ~38: the rest wait out QUEUE FULL's
    retry delay on no path. The snapshot counts them and the text view says so under the table."""
    model, snaps = _snaps("port-queue-full.toml", 0.5, duration=1.0)
    late = snaps[-1]
    on_paths = sum(int(p.values["ACTV"]) for p in late.paths)
    assert late.off_path == late.actv - on_paths > 0
    text = top_module.text_view("rr", late, model, "devices")
    assert f"ACTV counts {late.off_path:,} I/Os on no path now: answered QUEUE FULL" in text
    _, plain = _snaps("fast-failover.toml", 0.5, duration=1.0)  # no host queues: those I/Os are QUED, no note
    assert plain[-1].off_path == 0 and "on no path now" not in top_module.text_view("x", plain[-1], model, "devices")


def test_second_review_words():
    """Review item 11 and 10: text_view is --text's; the docs say what QUEUE FULL's waits do to ACTV and DAVG."""
    from pathlib import Path

    assert "``--text``" in (top_module.text_view.__doc__ or "") and "--batch" not in (top_module.text_view.__doc__ or "")
    assert "qfull_retry_delay" in (top_module.__doc__ or "")
    cli = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    assert "keeps its\nplace in the device queue" in cli and "-n 10,000 or fewer" in cli and "until the\nhost next looks at its paths" in cli


# --- issue 48: adapter names per host, the VM view's KAVG as the header's -------------------------------------------


@pytest.mark.parametrize(
    ("path", "host", "adapter"),
    [
        ("vmhba2:C0:T1:L3", "esxi01", "vmhba2"),  # ESXi: the vmhba of the runtime name
        ("vmhba64:C0:T0:L0", "esxi01", "vmhba64"),
        ("2:0:1:3 sdc", "linux01", "host2"),  # multipath -ll's H:C:T:L sdX: SCSI host H
        ("3:0:0:1", "linux01", "host3"),
        ("nvme0c1n1", "linux01", "nvme1"),  # native NVMe: controller 1 of subsystem 0
        ("nvme2c0n4", "linux01", "nvme0"),
        ("p0", "linux01", "linux01"),  # nothing in the name: the host's one adapter
        ("vmhba1", "esxi01", "esxi01"),  # not a runtime name
        ("2:0:1", "linux01", "linux01"),
    ],
)
def test_adapters_are_named_as_their_system_names_them(path, host, adapter):
    assert adapter_of(path, host) == adapter


def test_an_nvme_host_shows_its_controllers_not_its_name():
    """fast-failover: linux01's nvme0c0n1 and nvme0c1n1 leave by controllers nvme0 and nvme1, not 'linux01'."""
    _, snaps = _snaps("fast-failover.toml", 0.5, duration=1.0)
    rows = {r.name: r for r in snaps[-1].adapters}
    assert list(rows) == ["nvme0", "nvme1"] and all(r.cells["NPTH"] == "1" for r in rows.values())


@pytest.mark.parametrize(("sim", "duration"), [("path-failure-recovery.toml", 12.0), ("fast-failover.toml", 2.5), ("esxi-24-vms-dqlen.toml", 1.0)])
def test_the_vm_views_kavg_is_the_headers(sim, duration):
    """The VM view's KAVG/cmd, I/O-weighted over the VMs, is the header's (GAVG - DAVG): with retries and no host
    queue it was 0.00 under a header of 1.24 ms."""
    model, snaps = _snaps(sim, 0.25, duration=duration)
    checked = 0
    for s in snaps:
        if not (math.isfinite(s.gavg_s) and math.isfinite(s.davg_s)) or s.now - s.step < model.ramp:
            continue  # the VMs' counters are the measured window's: a refresh across the ramp's end has more I/Os
        header = float(top_views.header("x", s, model, None, False)[2].split("KAVG/cmd ")[1].split()[0])
        n = [float(r.cells["CMDS/s"].replace(",", "")) for r in s.vms]
        k = [float(r.cells["KAVG/cmd"]) for r in s.vms]
        mean = sum(a * b for a, b in zip(n, k)) / sum(n)
        assert mean == pytest.approx(header, abs=0.011), (s.now, header, k)
        checked += header > 0.02
    assert checked  # some refresh had time in the host to agree on
