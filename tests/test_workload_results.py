"""Results per workload (a VM or fio job): the recorder's rows add up to the run's, Little's law holds per VM, a
noisy neighbour shows in the quiet VM's row, both engines agree, and the CLI, JSON, report and top show them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pathsel
from pathsel.cli import main
from pathsel.engine import run_fast
from pathsel.model import compile_model
from pathsel.results.workloads import COLUMNS
from pathsel.top import Top, pick_run, text_view

from .conftest import SIMS

# Two VMs on one datastore: ESXi's device queue (DQLEN 32) in front of an array of 16 slots. The quiet VM keeps 4
# reads outstanding; the noisy one {noisy}.
NEIGHBOURS = """
name = "noisy neighbour"
seed = 5
duration = "{duration}"

[[arrays]]
name = "array"
concurrency = 16
service_time = {{ dist = "exponential", mean = "200us" }}

[[hosts]]
name = "esxi01"
{queue_depth}

[[paths]]
name = "vmhba{{i}}:C0:T0:L1"
count = 2
array = "array"
one_way_latency = "50us"

[[workloads]]
name = "quiet"
rw = "randread"
bs = "4k"
iodepth = 4
ramp_time = "20ms"

[[workloads]]
name = "noisy"
rw = "randrw"
rwmixread = 50
bs = "64k"
iodepth = {noisy}
numjobs = 2
ramp_time = "20ms"

[[policies]]
spec = "rr:iops=1"
"""


def neighbours(noisy: int, duration: str = "300ms", queue_depth: int = 32) -> pathsel.Scenario:
    return pathsel.loads_scenario(NEIGHBOURS.format(noisy=noisy, duration=duration, queue_depth=_qd(queue_depth)), "neighbours")


def _qd(queue_depth: int) -> str:
    """The host's queue_depth line (none: no host queue)."""
    return f"queue_depth = {queue_depth}" if queue_depth else ""


def rows(result, op: str = "all") -> dict[str, dict]:
    return {w["workload"]: w for w in result.runs[0].workloads() if w["op"] == op}


@pytest.mark.parametrize("queue_depth", [32, 0])
def test_the_workloads_rows_add_up_to_the_runs_figures(queue_depth):
    res = pathsel.simulate(neighbours(16, queue_depth=queue_depth), engine="fast")
    r, m = res.runs[0], res.runs[0].metrics
    ws = r.workloads()
    total = [w for w in ws if w["op"] == "all"]
    assert [w["workload"] for w in total] == ["quiet", "noisy"]
    # every completion in the window counted once, in one workload and one op
    assert sum(w["ios"] for w in total) == r.ios == m.overall.n
    for op in ("read", "write"):
        assert sum(w["ios"] for w in ws if w["op"] == op) == m.by_op[op].n
        assert sum(int(m.wl_bytes[v, 0 if op == "read" else 1]) for v in range(2)) == m.bytes_by_op[op]
    assert sum(w["mbps"] for w in total) == pytest.approx(r.mbps)
    # over the whole run too (top's rates): every completion, ramp included
    assert int(m.wl_completed_all.sum()) == m.completed
    # a workload's latency is the run's, split: its histogram counts sum to the overall count
    assert sum(int(h.counts.sum()) for ops in m.wl_by_op for h in ops.values()) == m.overall.n
    assert max(w["max_us"] for w in total) == pytest.approx(r.latency_us["max"])
    # the quiet VM only reads: a read row, no write row
    assert [w["op"] for w in ws if w["workload"] == "quiet"] == ["all", "read"]
    assert [w["op"] for w in ws if w["workload"] == "noisy"] == ["all", "read", "write"]
    # ACTV and QUED per workload add up to the device's (one device)
    assert sum(w["actv"] for w in total) == pytest.approx(m.dev_area_actv[0] / r.duration)
    assert sum(w["qued"] for w in total) == pytest.approx(m.dev_area_qued[0] / r.duration, abs=1e-9)
    if not queue_depth:  # no host queue: each VM's slots, as the device rows count them
        assert [w["actv"] for w in total] == pytest.approx([4.0, 32.0]) and all(w["qued"] == 0 for w in total)
        assert all(w["kavg_us"] == 0 for w in total)


@pytest.mark.parametrize("queue_depth", [32, 0])
def test_littles_law_holds_per_workload(queue_depth):
    res = pathsel.simulate(neighbours(16, duration="1s", queue_depth=queue_depth), engine="fast")
    for w in rows(res).values():
        assert w["actv"] + w["qued"] == pytest.approx(w["iops"] * w["gavg_us"] / 1e6, rel=0.03)
        assert w["kavg_us"] + w["davg_us"] == pytest.approx(w["gavg_us"])


def test_a_noisy_neighbour_shows_in_the_quiet_vms_row():
    calm = rows(pathsel.simulate(neighbours(2), engine="fast"))
    loud = rows(pathsel.simulate(neighbours(32), engine="fast"))
    # the quiet VM asks for the same (4 reads outstanding); the noisy one fills DQLEN and the array, and the quiet
    # one waits behind it in ESXi's queue: its GAVG and KAVG rise, its IOPS fall
    # (measured: GAVG 0.30 -> 0.80 ms, KAVG 0 -> 0.45 ms, 13,300 -> 5,000 IOPS)
    assert loud["quiet"]["gavg_us"] > 2 * calm["quiet"]["gavg_us"]
    assert calm["quiet"]["kavg_us"] == 0 and loud["quiet"]["kavg_us"] > 200
    assert loud["quiet"]["iops"] < calm["quiet"]["iops"] / 2
    assert loud["quiet"]["p99_us"] > calm["quiet"]["p99_us"]
    assert loud["quiet"]["qued"] > 1.0 > calm["quiet"]["qued"]
    assert loud["noisy"]["iops"] > 5 * loud["quiet"]["iops"]


@pytest.mark.parametrize(
    "scenario",
    [
        "neighbours",
        "neighbours without a queue depth",
        "open-loop-knee.toml",
        "nvme-slow-path-queue-depth.toml",
        "port-queue-full.toml",
    ],
)
def test_both_engines_give_the_same_workload_rows(scenario):
    if scenario.startswith("neighbours"):
        sc, kw = neighbours(24, duration="60ms", queue_depth=0 if "without" in scenario else 32), {}
    else:
        sc, kw = pathsel.load_scenario(SIMS / scenario), {"duration": 0.1}
    fast = pathsel.simulate(sc, engine="fast", **kw)
    ref = pathsel.simulate(sc, engine="reference", **kw)
    f, r = json.loads(fast.to_json()), json.loads(ref.to_json())
    assert [run["workloads"] for run in f["runs"]] == [run["workloads"] for run in r["runs"]]
    assert all(w["ios"] > 0 for run in f["runs"] for w in run["workloads"])
    for a, b in zip(fast.runs, ref.runs):
        assert (a.metrics.wl_completed_all == b.metrics.wl_completed_all).all()


def test_json_has_workloads_after_devices():
    res = pathsel.simulate(neighbours(8, duration="50ms"), engine="fast")
    run = json.loads(res.to_json())["runs"][0]
    keys = list(run)
    assert keys.index("workloads") == keys.index("devices") + 1
    quiet, noisy = run["workloads"]
    assert quiet["name"] == "quiet" and quiet["host"] == "esxi01" and set(quiet["ops"]) == {"read"}
    assert set(noisy["ops"]) == {"read", "write"}
    for k in ("ios", "iops", "mbps", "latency_us", "kavg_us", "davg_us", "gavg_us", "actv", "qued"):
        assert k in quiet
    assert set(quiet["latency_us"]) == {"mean", "p50", "p99", "p999", "max"}
    assert noisy["ops"]["read"]["ios"] + noisy["ops"]["write"]["ios"] == noisy["ios"]


def test_the_dataframe_and_by_workload(tmp_path, capsys):
    res = pathsel.simulate(neighbours(8, duration="50ms"), engine="fast")
    df = res.workloads()
    assert list(df.columns) == ["policy", *COLUMNS]
    assert list(df[df.op == "all"].workload) == ["quiet", "noisy"]
    assert df[df.op == "all"].ios.sum() == res.runs[0].ios
    path = tmp_path / "n.toml"
    path.write_text(NEIGHBOURS.format(noisy=8, duration="50ms", queue_depth=_qd(32)))
    assert main(["simulate", str(path), "--by", "workload", "-q"]) == 0
    out = capsys.readouterr().out
    assert "per workload" in out
    lines = out.splitlines()
    head = lines[next(i for i, line in enumerate(lines) if line.startswith("per workload")) + 1]
    assert head.split() == ["policy", "workload", "device", "IOPS", "MB/s", "GAVG", "KAVG", "DAVG", "ACTV", "QUED", "p50", "p99", "p99.9"]
    at = lines.index(head)
    assert lines[at + 2].split()[1] == "quiet" and lines[at + 3].split()[1] == "noisy"
    assert lines[at + 4].split()[0] == "read" and lines[at + 5].split()[0] == "write"  # the noisy VM reads and writes


def test_tops_vm_view():
    sc = neighbours(16, duration="200ms")
    run = pick_run(sc, None)
    model = compile_model(sc, run)
    top, snaps = Top(model), []
    metrics = run_fast(model, run.policy, live=lambda lv: snaps.append(top.snapshot(lv)), live_step=0.05)
    assert len(snaps) >= 3
    assert [r.name for r in snaps[-1].vms] == ["quiet", "noisy"]
    cols = list(snaps[-1].vms[0].cells)
    assert cols[:7] == ["CMDS/s", "READS/s", "WRITES/s", "MBREAD/s", "MBWRTN/s", "LAT/rd", "LAT/wr"]
    assert {"GAVG/cmd", "KAVG/cmd", "ACTV", "QUED"} <= set(cols)
    # the rates over each refresh add up to the completions so far (ramp included)
    done = sum(float(r.cells["CMDS/s"].replace(",", "")) * s.step for s in snaps for r in s.vms)
    assert done == pytest.approx(sum(s.cmds * s.step for s in snaps), rel=0.001)
    assert done <= metrics.completed
    # the quiet VM only reads; DQLEN 32 holds: ACTV at most 32 over both VMs
    last = snaps[-1]
    assert last.vms[0].cells["WRITES/s"] == "0" and last.vms[0].cells["LAT/wr"] == "-"
    assert sum(int(r.cells["ACTV"]) for r in last.vms) == last.actv <= 32
    assert sum(int(r.cells["QUED"]) for r in last.vms) == last.qued
    text = text_view(run.label, last, model, "vms")
    assert "VMNAME" in text and "quiet" in text and "noisy" in text


def test_top_batch_starts_in_the_vm_view(capsys):
    assert main(["top", str(SIMS / "esxi-24-vms-dqlen.toml"), "--text", "--view", "v", "--duration", "0.3", "-d", "0.25", "--speed", "1000"]) == 0
    out = capsys.readouterr().out
    assert "VMNAME" in out and "LAT/rd" in out


def test_the_report_has_a_workload_table(tmp_path):
    from pathsel.results.report import render

    res = pathsel.simulate(neighbours(8, duration="50ms"), engine="fast")
    html = render(res)
    assert "Per workload" in html and "quiet" in html and "noisy" in html
    assert np.isfinite(res.workloads().gavg_us).all()
