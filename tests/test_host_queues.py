"""The host's queues (issue 16): a device queue depth, open-loop arrivals, esxtop's latency split.

Both engines run them alike (tests/test_engines.py's differential scenarios);
here: the semantics a storage person expects, Little's law for the host-queued
and the device time separately, and bad input.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pathsel
from pathsel.cli import main
from pathsel.errors import ScenarioError

from .test_properties import SETTINGS

ONE_DEVICE = """
name = "host queue"
seed = {seed}
duration = "{duration}"
[[arrays]]
name = "a"
concurrency = {conc}
service_time = {{ dist = "exponential", mean = "{svc}us" }}
[[hosts]]
name = "esxi01"
{host}
[[paths]]
name = "vmhba1:C0:T{{i}}:L1"
count = 2
array = "a"
one_way_latency = "{lat}us"
[[workloads]]
rw = "randrw"
iodepth = {iodepth}
numjobs = {numjobs}
{rate}
"""


def _scenario(seed=1, duration="1s", conc=8, svc=100, host="", lat=20, iodepth=8, numjobs=1, rate=""):
    return pathsel.loads_scenario(
        ONE_DEVICE.format(seed=seed, duration=duration, conc=conc, svc=svc, host=host, lat=lat, iodepth=iodepth, numjobs=numjobs, rate=rate)
    )


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_queue_depth_holds_io_in_the_host(engine):
    """24 I/Os outstanding over DQLEN 8: 8 active on the device, 16 queued; KAVG is about twice DAVG."""
    sc = _scenario(host="queue_depth = 8", iodepth=24, duration="2s")
    run = pathsel.simulate(sc, policies=["rr:iops=1"], engine=engine).runs[0]
    (q,) = run.device_queues()
    assert q["dqlen"] == 8
    assert q["actv"] == pytest.approx(8, abs=0.01) and q["qued"] == pytest.approx(16, abs=0.01)
    assert q["kavg_us"] == pytest.approx(2 * q["davg_us"], rel=0.05)  # 16 ahead, served 8 at a time
    split = run.latency_split_us
    assert split["gavg"]["mean"] == pytest.approx(split["kavg"]["mean"] + split["davg"]["mean"], rel=1e-9)


def test_no_queue_depth_means_no_host_wait_and_the_same_results():
    """Without queue_depth nothing waits in the host (KAVG 0), and the results are those of a scenario without the key."""
    plain = pathsel.simulate(_scenario(iodepth=24), policies=["rr"])
    huge = pathsel.simulate(_scenario(iodepth=24, host="queue_depth = 1000"), policies=["rr"])
    run = plain.runs[0]
    assert run.latency_split_us["kavg"]["max"] == 0.0
    assert run.device_queues()[0]["qued"] == 0.0
    assert plain.runs[0].latency_us == huge.runs[0].latency_us and plain.runs[0].iops == huge.runs[0].iops


@pytest.mark.parametrize("process", ["linear", "poisson"])
def test_open_loop_serves_the_offered_load(process):
    """Below saturation the measured IOPS is the offered rate, whatever the latency."""
    run = pathsel.simulate(_scenario(rate=f'rate_iops = 20000\nrate_process = "{process}"', iodepth=64, duration="2s"), policies=["rr"]).runs[0]
    assert run.iops == pytest.approx(20000, rel=0.02)
    if process == "linear":  # evenly spaced: never more than a few in flight, no host wait
        assert run.latency_split_us["kavg"]["max"] == 0.0


def test_rate_in_bytes_is_rate_iops_times_the_block_size():
    sc = _scenario(rate='rate = "80MB/s"', iodepth=64)  # 4k (the default bs): 19,531 IOPS
    assert sc.model.workloads[0].rate_iops == pytest.approx(80e6 / 4096)


def test_an_offered_load_above_capacity_stops_with_one_message():
    """One array slot at 100 us serves 10,000 IOPS; 50,000 offered: the backlog grows until the run says so."""
    sc = _scenario(conc=1, rate="rate_iops = 50000", iodepth=4, duration="5s")
    for engine in ("fast", "reference"):
        with pytest.raises(ScenarioError, match="arrivals of one job copy waiting in the host"):
            pathsel.simulate(sc, policies=["rr"], engine=engine)


def test_the_cli_says_overload_in_one_line(tmp_path, capsys):
    f = tmp_path / "over.toml"
    f.write_text(ONE_DEVICE.format(seed=1, duration="5s", conc=1, svc=100, host="", lat=20, iodepth=4, numjobs=1, rate="rate_iops = 50000"))
    assert main(["simulate", str(f), "--policy", "rr"]) == 2
    err = capsys.readouterr().err
    assert "rate_iops" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "workload, host, message",
    [
        ('rate_iops = 1000\nrate = "10MB/s"', "", "not both"),
        ('rate_process = "poisson"', "", "rate_process needs rate_iops"),
        ("rate_iops = -5", "", "rate_iops"),
        ("rate_iops = 0", "", "rate_iops"),
        ("rate_iops = inf", "", "rate_iops"),
        ('rate_process = "bursty"\nrate_iops = 10', "", "rate_process"),
        ("", "queue_depth = 0", "queue_depth"),
        ("", "queue_depth = 65537", "queue_depth"),
        ("", "queue_depth = true", "queue_depth"),
        ("", 'queue_depth = "32"', "queue_depth"),
    ],
)
def test_bad_host_queue_input_is_one_located_message(workload, host, message):
    with pytest.raises(ScenarioError, match=message):
        _scenario(host=host, rate=workload)


@SETTINGS
@given(
    qd=st.sampled_from([None, 1, 2, 5]),
    iodepth=st.integers(1, 12),
    numjobs=st.integers(1, 3),
    conc=st.integers(1, 6),
    rate=st.sampled_from([None, 3000, 15000]),
    seed=st.integers(0, 1000),
)
def test_littles_law_for_host_queued_and_device_time_separately(qd, iodepth, numjobs, conc, rate, seed):
    """Per device, over the window: mean QUED = IOPS x mean KAVG and mean ACTV = IOPS x mean DAVG."""
    host = f"queue_depth = {qd}" if qd else ""
    arrivals = f'rate_iops = {rate}\nrate_process = "poisson"' if rate else ""
    sc = _scenario(seed=seed, duration="3s", conc=conc, host=host, iodepth=iodepth, numjobs=numjobs, rate=arrivals)
    try:
        run = pathsel.simulate(sc, policies=["rr"]).runs[0]
    except ScenarioError:  # an offered load above what the set-up serves: said, not measured
        return
    (q,) = run.device_queues()
    if not q["ios"] or run.accounting["in_flight"] > 2 * iodepth * numjobs:
        return  # no completions, or a backlog that grows all run long: no steady state for the law to hold in
    # boundary effects: I/Os in flight at the window's edges, at most a few latencies out of 3 s
    slack = 0.03 * max(q["qued"], q["actv"], 1.0)
    assert abs(q["qued"] - q["iops"] * q["kavg_us"] * 1e-6) <= slack
    assert abs(q["actv"] - q["iops"] * q["davg_us"] * 1e-6) <= slack


def test_a_slower_path_is_a_condition_not_a_fault():
    """extra_latency on a path adds one-way time to its frames from t = 0, with no fault to recover from."""
    base = ONE_DEVICE.format(seed=2, duration="1s", conc=8, svc=100, host="", lat=20, iodepth=1, numjobs=1, rate="")
    slow = base.replace('one_way_latency = "20us"', 'one_way_latency = "20us"\nextra_latency = "500us"')
    fast_run = pathsel.simulate(pathsel.loads_scenario(base), policies=["fixed"]).runs[0]
    slow_run = pathsel.simulate(pathsel.loads_scenario(slow), policies=["fixed"]).runs[0]
    # a SCSI read crosses the path twice (1 ms more), a write four times (2 ms more); no fault in the results
    ops = {o["op"]: o for o in slow_run.ops()}
    expected = {op: (1000.0 if op == "read" else 2000.0) for op in ops}
    for op, o in ops.items():
        base_mean = {b["op"]: b for b in fast_run.ops()}[op]["latency_us"]["mean"]
        assert o["latency_us"]["mean"] - base_mean == pytest.approx(expected[op], rel=0.02)
    assert slow_run.faults() == [] and slow_run.metrics.events == []


def test_both_engines_agree_on_size_dependent_service_and_slower_paths():
    """service_time_per_kib and extra_latency, with a host queue and Poisson arrivals: the same JSON on both engines."""
    text = ONE_DEVICE.format(
        seed=9,
        duration="150ms",
        conc=2,
        svc=80,
        host="queue_depth = 3",
        lat=30,
        iodepth=6,
        numjobs=2,
        rate='rate_iops = 9000\nrate_process = "poisson"',
    )
    text = text.replace(
        'service_time = { dist = "exponential", mean = "80us" }',
        'service_time = { dist = "exponential", mean = "80us" }\nservice_time_per_kib = "2us"',
    )
    text = text.replace('one_way_latency = "30us"', 'one_way_latency = "30us"\nextra_latency = "120us"')
    text = text.replace('rw = "randrw"', 'rw = "randrw"\nbs = "4k/50:256k/50"')
    sc = pathsel.loads_scenario(text)
    fast = pathsel.simulate(sc, policies=["rr:iops=1", "dm:service-time"], engine="fast", trace=True)
    ref = pathsel.simulate(sc, policies=["rr:iops=1", "dm:service-time"], engine="reference", trace=True)
    assert fast.to_json().replace('"fast"', '"x"') == ref.to_json().replace('"reference"', '"x"')
    assert all(f.metrics.trace == r.metrics.trace for f, r in zip(fast.runs, ref.runs))
    # a 256k I/O holds its slot 512 us longer than a 4k one: the mean is past the draws' 80 us
    assert fast.runs[0].latency_split_us["davg"]["mean"] > 2 * 150 + 80 + 200


IDLE_SAN = """
name = "2 hosts x 4 LUNs, VMs on lun0 only"
seed = 5
duration = "0.2s"
[[arrays]]
name = "array"
concurrency = 256
service_time = { dist = "exponential", mean = "150us" }
[[hosts]]
name = "esxi01"
queue_depth = 32
[[hosts]]
name = "esxi02"
queue_depth = 32
[[volumes]]
name = "lun0"
[[volumes]]
name = "lun1"
[[volumes]]
name = "lun2"
[[volumes]]
name = "lun3"
[[paths]]
host = "esxi01"
name = "vmhba{i}:C0:T0:L{lun}"
count = 2
array = "array"
one_way_latency = "20us"
[[paths]]
host = "esxi02"
name = "vmhba{i}:C0:T0:L{lun}"
count = 2
array = "array"
one_way_latency = "20us"
[[workloads]]
name = "vm1"
host = "esxi01"
volume = "lun0"
[[workloads]]
name = "vm2"
host = "esxi02"
volume = "lun0"
"""


def test_idle_devices_are_one_line_in_the_host_queue_table():
    """Issue 48: a cluster's host-queue table printed 96 rows, 72 of them devices no VM used: those are one line per
    policy, counted and named in part; the devices with I/O keep their rows."""
    from pathsel.results.tables import IDLE_FOLDED

    res = pathsel.simulate(pathsel.loads_scenario(IDLE_SAN, "idle"), policies=["rr:iops=1", "fixed"])
    table = res.table()
    section = table[table.index("host queues") : table.index("what happened") if "what happened" in table else None]
    for r in res.runs:
        queues = r.device_queues()
        idle = [q for q in queues if not q["ios"]]
        assert len(idle) == 6 >= IDLE_FOLDED and len(queues) == 8
        line = f"  {r.label}: 6 of its 8 devices had no I/O in the measured window (ACTV 0, QUED 0), not listed: esxi01/lun1, esxi01/lun2, esxi01/lun3 and 3 more"
        assert line in section.splitlines()
        for q in idle:
            assert not any(row.split()[:2] == [r.label, q["device"]] for row in section.splitlines())
        for q in queues:
            if q["ios"]:
                assert any(row.split()[1:2] == [q["device"]] and row.startswith(r.label) for row in section.splitlines())
