"""Issue 48 §1: a fault's stall is per host and per VM, over every I/O outstanding during the fault.

The recorder counts, per fault window (metrics.stall_windows) and workload, each I/O issued before the window's
end and completed or failed after its start, from issue to completion or failure; ``faults[]`` reads it
(``max_stall_ms``, ``stalled_ios``, ``by_host``, ``frozen``), and the story, the table and the report say it.
A cluster whose IOPS holds while one host's VMs wait half a second must say that they froze.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import pathsel
from pathsel.cli import main
from pathsel.metrics import F_FAILED, F_IOS, F_MAX, F_STALLED, STALL_S, stall_windows
from pathsel.results.story import story

SIMS = Path(__file__).resolve().parent.parent / "sims"
FROZEN = SIMS / "frozen-vm-nexus-down.toml"

# two hosts with two VMs each on one shared volume (DSNRO 4 of DQLEN 8), one path of h1 down from 0.5 s to 1.2 s,
# noticed 300 ms after each change
TWO_HOSTS = """
name = "two hosts, one path down"
seed = 3
duration = "2s"
interval = "100ms"
[[arrays]]
name = "a"
concurrency = 8
service_time = {{ dist = "exponential", mean = "1ms" }}
[[hosts]]
name = "h1"
detection = "300ms"
queue_depth = 8
sched_num_req_outstanding = 4
{apd}
[[hosts]]
name = "h2"
detection = "300ms"
queue_depth = 8
sched_num_req_outstanding = 4
[[paths]]
name = "vmhba{{i}}:C0:T0:L1"
host = "h1"
count = 2
array = "a"
one_way_latency = "50us"
[[paths]]
name = "vmhba{{i}}:C0:T0:L1"
host = "h2"
count = 2
array = "a"
one_way_latency = "50us"
[[workloads]]
name = "h1-vm1"
host = "h1"
rw = "randread"
iodepth = 4
[[workloads]]
name = "h1-vm2"
host = "h1"
rw = "randread"
iodepth = 4
[[workloads]]
name = "h2-vm1"
host = "h2"
rw = "randread"
iodepth = 4
[[workloads]]
name = "h2-vm2"
host = "h2"
rw = "randread"
iodepth = 4
[[faults]]
at = "500ms"
what = "path_down"
host = "h1"
path = "vmhba0:C0:T0:L1"
{down}
[[faults]]
at = "1200ms"
what = "path_up"
host = "h1"
path = "vmhba0:C0:T0:L1"
"""


def _two_hosts(engine: str = "fast", apd: str = "", down: str = "", trace: bool = False) -> pathsel.Result:
    sc = pathsel.loads_scenario(TWO_HOSTS.format(apd=apd, down=down))
    return pathsel.simulate(sc, policies=["rr:iops=1"], engine=engine, trace=trace)


@pytest.mark.parametrize(
    ("faults", "end", "windows"),
    [
        ([], 10.0, []),
        ([(2.0, False)], 10.0, [(2.0, 10.0)]),  # to the end
        ([(2.0, False), (4.0, False)], 10.0, [(2.0, 4.0), (4.0, 10.0)]),  # to the next fault
        ([(2.0, False), (3.0, True)], 10.0, [(2.0, 3.0)]),  # to its revert; a revert opens no window
        ([(2.0, False), (2.0, False), (5.0, True)], 10.0, [(2.0, 5.0)]),  # two faults at one instant: one window
        ([(2.0, False), (12.0, False)], 10.0, [(2.0, 10.0)]),  # a fault after the end: none, and it ends nothing early
        ([(0.0, False)], 1.0, [(0.0, 1.0)]),  # in place from the start
    ],
)
def test_fault_windows(faults: list[tuple[float, bool]], end: float, windows: list[tuple[float, float]]) -> None:
    got = stall_windows([SimpleNamespace(at=a, revert=r, what="path_down") for a, r in faults], end)
    assert got.shape == (len(windows), 3)
    assert [tuple(map(float, w[:2])) for w in got] == windows
    assert not got[:, 2].any()


@pytest.mark.parametrize(
    ("whats", "recovery"),
    [(["path_up"], 1.0), (["array_up"], 1.0), (["replication_up"], 1.0), (["path_up", "path_down"], 0.0), (["latency"], 0.0), (["alua"], 0.0)],
)
def test_a_window_opened_by_recoveries_only_is_marked(whats: list[str], recovery: float) -> None:
    got = stall_windows([SimpleNamespace(at=1.0, revert=False, what=w) for w in whats], 5.0)
    assert got[0, 2] == recovery


def test_the_recorder_counts_every_io_outstanding_in_each_window_exactly() -> None:
    """From the per-I/O trace: each window and workload's I/Os (issued before its end, done after its start; each
    in the first such window not opened by a recovery, else the first), their longest and those of STALL_S or more,
    the same numbers to the bit."""
    res = _two_hosts(trace=True)
    r = res.runs[0]
    m, model = r.metrics, r.model
    assert m.failed == 0 and m.trace
    vm_of = {j.index: j.vm for j in model.jobs}
    fw, fs = m.fault_windows, m.fault_stall
    assert [tuple(w) for w in fw] == [(0.5, 1.2, 0.0), (1.2, 2.0, 1.0)]

    def window(issued: float, done: float) -> int | None:  # the first window it lived in not opened by a recovery
        live = [k for k, (a, b, _) in enumerate(fw) if b > issued and a < done]
        return next((k for k in live if fw[k, 2] == 0.0), live[0] if live else None)

    for k in range(fw.shape[0]):
        for v in range(fs.shape[1]):
            lat = [done - issued for (_, job, _, _, issued, done, _, _) in m.trace if vm_of[job] == v and window(issued, done) == k]
            assert fs[k, v, F_IOS] == len(lat)
            assert fs[k, v, F_MAX] == max(lat)
            assert fs[k, v, F_STALLED] == sum(x >= STALL_S for x in lat)
            assert fs[k, v, F_FAILED] == 0


@pytest.mark.parametrize("apd", ["", 'apd_timeout = "200ms"'])
def test_both_engines_record_the_same_stalls(apd: str) -> None:
    """The recorder is shared compiled code; the engines pass it the same I/Os (failed ones too: both h1 paths
    down with a 200 ms APD timeout fails what waited that long)."""
    down = '[[faults]]\nat = "500ms"\nwhat = "path_down"\nhost = "h1"\npath = "vmhba1:C0:T0:L1"' if apd else ""
    fast, ref = _two_hosts("fast", apd, down), _two_hosts("reference", apd, down)
    assert np.array_equal(fast.runs[0].metrics.fault_stall, ref.runs[0].metrics.fault_stall)
    assert json.dumps(fast.runs[0].faults()) == json.dumps(ref.runs[0].faults())
    if apd:
        (first, _) = fast.runs[0].faults()
        assert sum(w["failed"] for w in first["frozen"]) == fast.runs[0].metrics.failed > 0


def test_one_host_frozen_the_others_not() -> None:
    r = _two_hosts().runs[0]
    down, up = r.faults()
    hosts = {h["host"]: h for h in down["by_host"]}
    # h1's I/Os on the lost path waited the 300 ms detection delay (and those queued behind them in the host)
    assert hosts["h1"]["max_stall_ms"] == pytest.approx(300, rel=0.02)
    assert hosts["h1"]["stalled_ios"] > 0 and hosts["h2"]["stalled_ios"] == 0
    assert hosts["h2"]["max_stall_ms"] < 100
    assert {w["host"] for w in down["frozen"]} == {"h1"}
    assert down["max_stall_ms"] == max(h["max_stall_ms"] for h in down["by_host"])
    assert down["stalled_ios"] == sum(w["stalled_ios"] for w in down["frozen"])
    assert up["frozen"] == [] and up["stalled_ios"] == 0


@pytest.fixture(scope="module")
def frozen_sim() -> pathsel.Result:
    return pathsel.simulate(pathsel.load_scenario(FROZEN))


def test_the_frozen_sim_stall_is_the_worst_vms_max(frozen_sim: pathsel.Result) -> None:
    """The issue's target: the fault's max_stall_ms within 1 % of the worst VM's max latency during it (here the
    run's: nothing else comes near), while the cluster's IOPS did not dip 5 % (so a window closed by recovery,
    the old definition, missed it: 2.47 ms in the issue)."""
    r = frozen_sim.runs[0]
    down = r.faults()[0]
    assert down["what"] == "path_down" and down["recovery_s"] == 0.0
    doc = json.loads(frozen_sim.to_json())
    worst = max(w["latency_us"]["max"] for w in doc["runs"][0]["workloads"]) / 1e3
    assert doc["runs"][0]["faults"][0]["max_stall_ms"] == down["max_stall_ms"]
    assert down["max_stall_ms"] == pytest.approx(worst, rel=0.01)
    assert down["max_stall_ms"] > 400
    assert [w["workload"] for w in down["frozen"]] == ["esxi01-vm1", "esxi01-vm2"]
    assert [h["host"] for h in down["by_host"] if h["stalled_ios"]] == ["esxi01"]


def test_the_story_names_the_frozen_host_and_vms_first(frozen_sim: pathsel.Result) -> None:
    r = frozen_sim.runs[0]
    down = r.faults()[0]
    text = " ".join(" ".join(dict(story(frozen_sim))[r.label]).split())
    sentence = f"At 2 s esxi01's VMs esxi01-vm1 and esxi01-vm2 froze for up to {down['max_stall_ms']:.3g} ms: {down['stalled_ios']} of their I/Os took 100 ms or more"
    assert sentence in text
    assert "until the host noticed (500 ms later, its detection delay), then retried. The cause: esxi01 lost 8 of its 32 paths" in text
    assert "the cluster's IOPS did not drop by 5 %" in text
    assert "the longest I/O meanwhile" not in text


def test_table_json_and_report_agree(capsys: pytest.CaptureFixture[str], frozen_sim: pathsel.Result, tmp_path: Path) -> None:
    down = frozen_sim.runs[0].faults()[0]
    table = frozen_sim.faults()
    assert table.loc[0, "max_stall_ms"] == down["max_stall_ms"] and table.loc[0, "frozen"] == "esxi01-vm1, esxi01-vm2"
    text = frozen_sim.table()
    assert f"longest stall {down['max_stall_ms']:.1f} ms, frozen: esxi01-vm1, esxi01-vm2 ({down['stalled_ios']} I/Os of 100 ms or more)" in " ".join(
        text.split()
    )
    from pathsel.results.report import render

    html = render(frozen_sim)
    assert '<h3 id="stalls">' in html and "esxi01-vm1, esxi01-vm2" in html


def test_no_vm_froze_is_said_with_the_longest_io() -> None:
    """A fault no VM notices: the longest I/O outstanding during it, and where."""
    r = _two_hosts().runs[0]
    up = r.faults()[1]
    assert up["frozen"] == []
    text = " ".join(" ".join(dict(story(_two_hosts()))[r.label]).split())
    assert math.isfinite(up["max_stall_ms"])
    assert f"no VM froze: the longest I/O outstanding during it took {up['max_stall_ms']:.3g} ms (on {up['by_host'][0]['host']})" in text


def test_cli_json_faults_carry_the_stall_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(FROZEN), "--json", "-q", "--duration", "3s"]) == 0
    (down, up) = json.loads(capsys.readouterr().out)["runs"][0]["faults"]
    assert set(down) >= {"max_stall_ms", "stalled_ios", "by_host", "frozen"}
    assert down["frozen"][0]["host"] == "esxi01" and down["frozen"][0]["stalled_ios"] > 0


@pytest.mark.parametrize(
    ("frozen", "host_vms", "words"),
    [
        (["a"], 1, "h1's VM a froze"),
        (["a", "b"], 3, "h1's VMs a and b froze"),
        (["a", "b", "c", "d"], 4, "h1's VMs a, b, c and d froze"),
        (["a", "b", "c", "d", "e"], 6, "h1's VMs a, b, c and 2 more froze"),
        (["a", "b", "c", "d", "e"], 5, "all 5 of h1's VMs froze"),
    ],
)
def test_frozen_vms_are_named_or_counted(frozen: list[str], host_vms: int, words: str) -> None:
    from pathsel.results.story.stall import frozen_words

    model = SimpleNamespace(hosts=["h1", "h2"], jobs=[SimpleNamespace(host=0, vm=v) for v in range(host_vms)], host_params=None, host_queues=False)
    fault = {"what": "latency", "frozen": [{"workload": n, "host": "h1", "max_stall_ms": 150.0, "stalled_ios": 2, "failed": 0} for n in frozen]}
    s = frozen_words(fault, model, None)
    assert s.startswith(words + f" for up to 150 ms: {2 * len(frozen)} of ")


def test_top_says_which_vms_the_fault_froze(capsys: pytest.CaptureFixture[str], frozen_sim: pathsel.Result) -> None:
    """pathsel top's note under its table, from the same record: the fault's frozen VMs, longest, stalled I/Os."""
    down = frozen_sim.runs[0].faults()[0]
    assert main(["top", str(FROZEN), "--text", "-d", "3"]) == 0
    out = capsys.readouterr().out
    last = out[out.rindex("pathsel top - ") :]
    assert f"fault at 2 s froze esxi01-vm1, esxi01-vm2 (longest {down['max_stall_ms']:.2f} ms, {down['stalled_ios']} I/Os of 100 ms or more)" in last


def test_top_says_nothing_without_a_frozen_vm(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["top", str(SIMS / "fast-failover.toml"), "--text", "-d", "2"]) == 0
    assert "froze" not in capsys.readouterr().out


def test_vms_whose_ios_never_came_back_are_frozen() -> None:
    """Review of issue 48: a host that loses every path to the end (ESXi's APD timeout is 140 s) completes nothing
    after the loss; its VMs froze all the same, with their I/Os still outstanding at the end (both engines alike)."""
    down = '[[faults]]\nat = "500ms"\nwhat = "path_down"\nhost = "h1"\npath = "vmhba1:C0:T0:L1"'
    text = TWO_HOSTS.format(apd="", down=down).replace('at = "1200ms"', 'at = "5s"')  # h1's path_up after the end
    sc = pathsel.loads_scenario(text)
    fast, ref = (pathsel.simulate(sc, policies=["rr:iops=1"], engine=e) for e in ("fast", "reference"))
    assert json.dumps(fast.runs[0].faults()) == json.dumps(ref.runs[0].faults())
    first = fast.runs[0].faults()[0]
    frozen = {w["workload"]: w for w in first["frozen"]}
    assert set(frozen) == {"h1-vm1", "h1-vm2"}
    for w in frozen.values():
        # every one of a VM's iodepth 4 I/Os waits from the loss (or soon after) to the end of the 2 s run
        assert w["waiting_at_end"] == 4 and w["failed"] == 0
        assert w["max_stall_ms"] == pytest.approx(1500, rel=0.01)
    assert first["max_stall_ms"] == max(w["max_stall_ms"] for w in frozen.values())
    words = " ".join(dict(story(fast))["rr:iops=1"])
    assert "h1's VMs h1-vm1 and h1-vm2 froze for up to 1.5" in words and "still waiting when the run ended" in words, words
