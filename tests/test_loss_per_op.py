"""Loss per op (issue 37): ``loss_ops`` says whose frames a loss drops: a read's, a write's, or both.

The engines agree on every case (the loss stream is drawn alike: every frame draws at the nexus's full loss, a frame
of an op the loss spares takes those draws and is not lost), a write-only drop leaves reads alone and a read-only one writes, ``"both"`` is what a scenario without the
key always did, and a bad value gets one located message.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import pathsel

from .conftest import ROOT

RECOVERY_US = 20_000.0  # the scenarios' loss_recovery: a lost frame shows as an I/O at least this long

BASE = """
name = "loss per op"
seed = 7
duration = "{duration}"
protocol = "{protocol}"

[[arrays]]
name = "a"
concurrency = 32
service_time = {{ read = {{ dist = "exponential", mean = "120us" }}, write = {{ dist = "exponential", mean = "100us" }} }}

[[hosts]]
name = "h1"
queue_depth = 32

[[links]]
name = "isl"
bandwidth = "10Gbit"
{link_loss}

[[paths]]
name = "p{{i}}"
count = 2
array = "a"
one_way_latency = {{ dist = "uniform", low = "40us", high = "60us" }}
bandwidth = "10Gbit"

[[paths]]
name = "lossy"
array = "a"
one_way_latency = {{ dist = "uniform", low = "40us", high = "60us" }}
bandwidth = "10Gbit"
links = ["isl"]
loss_recovery = "20ms"
{path_loss}

[[workloads]]
rw = "randrw"
rwmixread = 70
bs = "{bs}"
iodepth = 8
numjobs = 2
ramp_time = "5ms"
{faults}
"""


def scenario(path_loss: str = "", link_loss: str = "", faults: str = "", protocol: str = "scsi", bs: str = "64k", duration: str = "150ms") -> str:
    return BASE.format(path_loss=path_loss, link_loss=link_loss, faults=faults, protocol=protocol, bs=bs, duration=duration)


def loss_fault(at: str, ppm: int, ops: str | None = None, duration: str | None = None, target: str = 'path = "lossy"') -> str:
    lines = ["[[faults]]", f'at = "{at}"', 'what = "loss"', target, f"ppm = {ppm}"]
    lines += [f'loss_ops = "{ops}"'] if ops is not None else []
    lines += [f'duration = "{duration}"'] if duration is not None else []
    return "\n" + "\n".join(lines) + "\n"


CASES = {
    "read-only": scenario('loss_ppm = 20000\nloss_ops = "read"'),
    "write-only": scenario('loss_ppm = 20000\nloss_ops = "write"'),
    "both": scenario("loss_ppm = 20000"),
    "write-only-nvme": scenario('loss_ppm = 20000\nloss_ops = "write"', protocol="nvme"),
    "link-write-path-read": scenario('loss_ppm = 10000\nloss_ops = "read"', 'loss_ppm = 10000\nloss_ops = "write"'),
    "fault-switches-ops": scenario('loss_ppm = 20000\nloss_ops = "write"', faults=loss_fault("60ms", 20000, "read")),
    "fault-undone": scenario(faults=loss_fault("30ms", 30000, "write", duration="50ms")),
    "link-fault-write": scenario(faults=loss_fault("20ms", 30000, "write", target='link = "isl"')),
}


def _json(result: pathsel.SimulationResult) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


def _ops(text: str, policy: str = "rr:iops=1") -> dict:
    run = json.loads(pathsel.simulate(pathsel.loads_scenario(text), policies=[policy], engine="fast").to_json())["runs"][0]
    return {
        "read": run["ops"]["read"]["latency_us"]["max"],
        "write": run["ops"]["write"]["latency_us"]["max"],
        "lost": run["accounting"]["frames_lost"],
    }


@pytest.mark.parametrize("name", list(CASES))
def test_engines_agree(name):
    sc = pathsel.loads_scenario(CASES[name])
    policies = ["rr:iops=1", "dm:service-time"]
    fast = pathsel.simulate(sc, policies=policies, engine="fast")
    ref = pathsel.simulate(sc, policies=policies, engine="reference")
    assert _json(fast) == _json(ref)


def test_engines_agree_on_the_library_scenario():
    sc = pathsel.load_scenario(ROOT / "sims" / "library" / "gray-write-only-drop.toml")
    fast = pathsel.simulate(sc, policies=["dm:historical-service-time", "rr"], engine="fast", duration=0.3)
    ref = pathsel.simulate(sc, policies=["dm:historical-service-time", "rr"], engine="reference", duration=0.3)
    assert _json(fast) == _json(ref)
    assert json.loads(fast.to_json())["runs"][1]["accounting"]["frames_lost"] > 0


def test_a_write_only_drop_spares_reads_and_a_read_only_one_writes():
    w, r, both = _ops(CASES["write-only"]), _ops(CASES["read-only"]), _ops(CASES["both"])
    assert w["lost"] > 0 and r["lost"] > 0 and both["lost"] > 0
    assert w["write"] >= RECOVERY_US > w["read"]
    assert r["read"] >= RECOVERY_US > r["write"]
    assert min(both["read"], both["write"]) >= RECOVERY_US


def test_the_fault_moves_the_loss_and_its_revert_ends_it():
    switched = _ops(CASES["fault-switches-ops"])
    assert switched["read"] >= RECOVERY_US and switched["write"] >= RECOVERY_US  # writes before 60 ms, reads after
    before = _ops(scenario(faults=loss_fault("30ms", 30000, "write")))
    undone = _ops(CASES["fault-undone"])
    assert undone["read"] < RECOVERY_US <= undone["write"]
    assert 0 < undone["lost"] < before["lost"]  # no loss once the 50 ms are over


def test_both_is_what_no_key_always_meant():
    for plain, explicit in (
        (scenario("loss_ppm = 20000"), scenario('loss_ppm = 20000\nloss_ops = "both"')),
        (scenario(faults=loss_fault("30ms", 30000)), scenario(faults=loss_fault("30ms", 30000, "both"))),
    ):
        a = pathsel.simulate(pathsel.loads_scenario(plain), policies=["rr"], engine="fast")
        b = pathsel.simulate(pathsel.loads_scenario(explicit), policies=["rr"], engine="fast")
        assert a.to_json() == b.to_json()


ONE_PATH = """
name = "one path"
seed = 3
duration = "300ms"
[[arrays]]
name = "a"
service_time = "100us"
[[paths]]
name = "p"
array = "a"
one_way_latency = "50us"
loss_recovery = "1ms"
loss_ppm = 30000
{ops}
[[workloads]]
rw = "randrw"
rwmixread = 50
bs = "4k"
iodepth = 1
"""


def _lossy_writes(ops: str, engine: str = "fast") -> tuple[list[int], int]:
    """The ordinals (by start) of the writes that paid a loss recovery, and how many writes there were."""
    sc = pathsel.loads_scenario(ONE_PATH.format(ops=ops))
    trace = pathsel.simulate(sc, policies=["rr"], engine=engine, trace=True).runs[0].metrics.trace
    writes = [row for row in sorted(trace, key=lambda r: r[4]) if row[2] == "write"]
    return [k for k, row in enumerate(writes) if row[5] - row[4] >= 1e-3], len(writes)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_the_ops_a_loss_spares_still_draw_so_streams_stay_in_step(engine):
    # one path, queue depth 1: each I/O's op comes from the workload's stream, each frame's loss from the loss
    # stream; a spared read frame takes the draws it takes under "both", so the k-th write meets the same draws and
    # "write" loses exactly the writes "both" does (before the fix a lost read frame took one draw under "write"
    # and two or more under "both", and the two sets parted after the first). Reads lose no time under "write", so
    # its run completes more writes: compare the writes both runs made
    write_only, n_w = _lossy_writes('loss_ops = "write"', engine)
    both, n_b = _lossy_writes("", engine)
    assert n_w > n_b and len(both) > 10
    assert [k for k in write_only if k < n_b] == both


ORACLE = """
name = "oracle per op"
seed = 11
duration = "200ms"
[[arrays]]
name = "a"
service_time = "100us"
[[paths]]
name = "p{i}"
count = 2
array = "a"
one_way_latency = "50us"
[[paths]]
name = "lossy"
array = "a"
one_way_latency = "40us"
loss_recovery = "2ms"
loss_ppm = 20000
loss_ops = "write"
[[workloads]]
rw = "randrw"
rwmixread = 50
bs = "4k"
iodepth = 4
"""


def test_the_oracle_knows_which_ops_a_path_loses():
    sc = pathsel.loads_scenario(ORACLE)
    fast = pathsel.simulate(sc, policies=["oracle"], engine="fast")
    ref = pathsel.simulate(sc, policies=["oracle"], engine="reference")
    assert _json(fast) == _json(ref)
    # the lossy path is the quickest for reads (its loss spares them): the oracle sends them there; a write's
    # expected recovery (4 legs x 2% x 2 ms) makes it the slowest for writes. Before the per-op view the oracle
    # charged reads the write loss too and left the path idle
    trace = pathsel.simulate(sc, policies=["oracle"], engine="fast", trace=True).runs[0].metrics.trace
    on_lossy = {op: sum(1 for row in trace if row[2] == op and row[6] == "lossy") for op in ("read", "write")}
    assert on_lossy["read"] > 100 and on_lossy["write"] == 0, on_lossy


# (what is put in, where the message points, what it says)
BAD = [
    (scenario('loss_ppm = 100\nloss_ops = "writes"'), "paths[1].loss_ops", "did you mean 'write'?"),
    (scenario('loss_ppm = 100\nloss_ops = "rw"'), "paths[1].loss_ops", "'read', 'write' or 'both'"),
    (scenario("loss_ppm = 100\nloss_ops = 3"), "paths[1].loss_ops", "'read', 'write' or 'both'"),
    (scenario('loss_ppm = 100\nloss_ops = ""'), "paths[1].loss_ops", "'read', 'write' or 'both'"),
    (scenario('loss_ops = "write"'), "paths[1].loss_ops", "loss_ppm is 0 here"),
    (scenario("", 'loss_ops = "read"'), "links[0].loss_ops", "loss_ppm is 0 here"),
    (scenario("", 'loss_ppm = 10\nloss_ops = "Write"'), "links[0].loss_ops", "did you mean 'write'?"),
    (scenario("", 'loss_ppm = 10\nloss_ops = "WRITE"'), "links[0].loss_ops", "did you mean 'write'?"),
    (scenario(faults=loss_fault("10ms", 0, "write")), "faults[0].loss_ops", "ppm is 0 here"),
    (scenario(faults=loss_fault("10ms", 100, "reads")), "faults[0].loss_ops", "did you mean 'read'?"),
    (
        scenario(faults='\n[[faults]]\nat = "10ms"\nwhat = "latency"\npath = "lossy"\nadd = "1ms"\nloss_ops = "write"\n'),
        "faults[0].loss_ops",
        "only a loss burst takes loss_ops, not latency",
    ),
    (
        scenario(faults='\n[[faults]]\nat = "10ms"\nwhat = "path_down"\npath = "lossy"\nloss_ops = "read"\n'),
        "faults[0].loss_ops",
        "only a loss burst takes loss_ops, not path_down",
    ),
]


@pytest.mark.parametrize(("text", "place", "fragment"), BAD)
def test_bad_loss_ops_gets_one_located_message(text, place, fragment):
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(text)
    msg = str(info.value)
    assert len(msg.strip().splitlines()) == 1, msg
    assert place in msg and fragment in msg, msg


def test_the_replication_link_takes_no_loss_ops():
    # only writes' mirror copies cross it: "read" would be no loss, "write" the same as "both"
    repl = """
name = "metro"
[[arrays]]
name = "a"
service_time = "100us"
[[arrays]]
name = "b"
service_time = "100us"
[replication]
arrays = ["a", "b"]
one_way_latency = "200us"
loss_ppm = 100
{key}
[[paths]]
name = "p"
array = "a"
one_way_latency = "50us"
[[workloads]]
rw = "randwrite"
bs = "4k"
iodepth = 1
{fault}
"""
    fault = '[[faults]]\nat = "1ms"\nwhat = "loss"\nlink = "replication"\nppm = 100\nloss_ops = "write"'
    for text, place, fragment in (
        (repl.format(key='loss_ops = "write"', fault=""), "replication.loss_ops", "unknown key 'loss_ops'"),
        (repl.format(key="", fault=fault), "faults[0].loss_ops", "only writes cross the replication link"),
    ):
        with pytest.raises(pathsel.ScenarioError) as info:
            pathsel.loads_scenario(text)
        assert place in str(info.value) and fragment in str(info.value), str(info.value)


def test_the_cli_refuses_a_bad_value_with_exit_2(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text(scenario('loss_ppm = 100\nloss_ops = "writes"'))
    proc = subprocess.run([sys.executable, "-m", "pathsel.cli", "simulate", str(f)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"pathsel: error: {f}: paths[1].loss_ops: "), proc.stderr
    assert "did you mean 'write'?" in proc.stderr
