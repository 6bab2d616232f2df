"""ESXi's Disk.SchedNumReqOutstanding (DSNRO, issue 32): VMs sharing a device are held to it; a lone VM is not.

A workload is a VM (an ESXi world; its numjobs copies are one). While more
than one VM has I/O outstanding on a device (issued to it and not done:
active or waiting in the host), the device's queue takes at most DSNRO of
them at once (``dsnro_scope = "all_vms"``, the default) or at most DSNRO of
each VM's (``"per_vm"``); alone, a VM fills the device queue depth (DQLEN).
Both engines run it alike (a differential test here, traces included).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pathsel

from .test_properties import SETTINGS

ONE_DATASTORE = """
name = "dsnro"
seed = {seed}
duration = "{duration}"
[[arrays]]
name = "a"
concurrency = 256
{port}
service_time = {{ dist = "exponential", mean = "200us" }}
[[hosts]]
name = "esxi01"
queue_depth = 64
{host}
[[paths]]
name = "vmhba1:C0:T{{i}}:L1"
count = 2
array = "a"
one_way_latency = "20us"
{workloads}
{faults}
"""


def _vm(name: str, iodepth: int, extra: str = "") -> str:
    return f'[[workloads]]\nname = "{name}"\nrw = "randrw"\nrwmixread = 70\nbs = "8k"\niodepth = {iodepth}\n{extra}\n'


def _scenario(vms: list[tuple[str, int]], host: str = "", duration: str = "1s", seed: int = 3, port: str = "", faults: str = "", extra: str = ""):
    workloads = "".join(_vm(n, d, extra) for n, d in vms)
    return pathsel.loads_scenario(ONE_DATASTORE.format(seed=seed, duration=duration, host=host, port=port, workloads=workloads, faults=faults))


DSNRO = "sched_num_req_outstanding = 32"
PER_VM = 'sched_num_req_outstanding = 32\ndsnro_scope = "per_vm"'


def _run(sc, engine: str):
    return pathsel.simulate(sc, policies=["rr:iops=1"], engine=engine).runs[0]


def _actv(run) -> dict[str, float]:
    return {w["workload"]: w["actv"] for w in run.workloads() if w["op"] == "all"}


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("host", [DSNRO, PER_VM])
def test_a_lone_busy_vm_still_fills_dqlen(engine, host):
    """One VM with 96 I/Os outstanding on DQLEN 64, DSNRO 32: 64 active, 32 queued, as without DSNRO."""
    run = _run(_scenario([("vm1", 96)], host, duration="500ms"), engine)
    (q,) = run.device_queues()
    assert q["actv"] == pytest.approx(64, abs=0.01) and q["qued"] == pytest.approx(32, abs=0.01)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_two_busy_vms_are_held_to_dsnro_together(engine):
    """all_vms: two VMs of 48 each on DQLEN 64 take 32 places between them (16 each), the rest wait (KAVG)."""
    run = _run(_scenario([("vm1", 48), ("vm2", 48)], DSNRO, duration="500ms"), engine)
    (q,) = run.device_queues()
    assert q["actv"] == pytest.approx(32, abs=0.01) and q["qued"] == pytest.approx(64, abs=0.01)
    actv = _actv(run)
    assert sum(actv.values()) == pytest.approx(32, abs=0.01)
    assert actv["vm1"] == pytest.approx(16, abs=1.0) and actv["vm2"] == pytest.approx(16, abs=1.0)
    without = _run(_scenario([("vm1", 48), ("vm2", 48)], "", duration="500ms"), engine)
    assert without.device_queues()[0]["actv"] == pytest.approx(64, abs=0.01)  # DQLEN alone lets them fill 64


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_per_vm_caps_each_vm_on_its_own(engine):
    """per_vm: a greedy VM (96) is held to 32 beside a modest one (8), which is never held back; three greedy VMs
    fill DQLEN between them (64), none above 32."""
    run = _run(_scenario([("greedy", 96), ("modest", 8)], PER_VM, duration="500ms"), engine)
    actv = _actv(run)
    assert actv["greedy"] == pytest.approx(32, abs=0.01) and actv["modest"] == pytest.approx(8, abs=0.01)
    run = _run(_scenario([("vm1", 48), ("vm2", 48), ("vm3", 48)], PER_VM, duration="500ms"), engine)
    actv = _actv(run)
    assert sum(actv.values()) == pytest.approx(64, abs=0.01)
    assert all(a <= 32 + 1e-9 for a in actv.values())


def test_the_cap_lifts_when_the_other_vm_is_idle():
    """A busy VM (96) beside one issuing 50 I/Os a second: the cap binds only while the light VM's I/O is
    outstanding, so the busy VM keeps DQLEN nearly all the time (all_vms), far above DSNRO."""
    light = _vm("light", 1, "rate_iops = 50")
    sc = pathsel.loads_scenario(ONE_DATASTORE.format(seed=5, duration="1s", host=DSNRO, port="", workloads=_vm("busy", 96) + light, faults=""))
    actv = _actv(_run(sc, "fast"))
    assert 60 < actv["busy"] <= 64


def test_numjobs_copies_are_one_vm():
    """A VM's numjobs copies are one world: 2 copies of 48 on DSNRO 32 are not capped (alone), as ESXi counts worlds."""
    sc = _scenario([("vm1", 48)], DSNRO, duration="300ms", extra="numjobs = 2")
    (q,) = _run(sc, "fast").device_queues()
    assert q["actv"] == pytest.approx(64, abs=0.01)


def _json(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


THROTTLED = (
    "qfull_sample_size = 4\nqfull_threshold = 4\nadapter_queue_depth = 80\n",
    "port_queue_depth = 40",
)
FAULTS = """
[[faults]]
at = "40ms"
what = "path_down"
path = "vmhba1:C0:T0:L1"
[[faults]]
at = "70ms"
what = "path_up"
path = "vmhba1:C0:T0:L1"
"""


@pytest.mark.parametrize("host", [DSNRO, PER_VM, "sched_num_req_outstanding = 5"])
@pytest.mark.parametrize("throttled", [False, True])
def test_engines_agree_with_dsnro(host, throttled):
    """The whole JSON (per-workload rows too) and every I/O's trace: DSNRO with open- and closed-loop VMs, numjobs
    copies, a path fault, and with ESXi's adaptive queue depth throttling on QUEUE FULL and an adapter queue."""
    extra_host, port = THROTTLED if throttled else ("", "")
    workloads = (
        _vm("vm1", 40, "numjobs = 2")
        + _vm("vm2", 24)
        + _vm("vm3", 4, 'rate_iops = 4000\nrate_process = "poisson"')
        + _vm("vm4", 16, 'rate_iops = 20000\nrate_process = "poisson"')
    )
    text = ONE_DATASTORE.format(seed=7, duration="120ms", host=host + "\n" + extra_host, port=port, workloads=workloads, faults=FAULTS)
    sc = pathsel.loads_scenario(text)
    specs = ["rr:iops=1", "fixed", "latency"]
    fast = pathsel.simulate(sc, policies=specs, engine="fast", trace=True)
    ref = pathsel.simulate(sc, policies=specs, engine="reference", trace=True)
    assert _json(fast) == _json(ref)
    for f, r in zip(fast.runs, ref.runs):
        assert f.metrics.trace == r.metrics.trace
        assert f.metrics.issued == r.metrics.issued
    if throttled:
        assert any(row["qfull"] > 0 for run in fast.runs for row in run.device_queues())


def test_a_dsnro_at_dqlen_changes_nothing():
    """DSNRO = DQLEN never binds: the same JSON as without it (ESXi's own default 32 on DQLEN 32)."""
    vms = [("vm1", 48), ("vm2", 48)]
    a = pathsel.simulate(_scenario(vms, "sched_num_req_outstanding = 64", duration="100ms"), policies=["rr:iops=1"], engine="fast")
    b = pathsel.simulate(_scenario(vms, "", duration="100ms"), policies=["rr:iops=1"], engine="fast")
    assert _json(a) == _json(b)


@st.composite
def _dsnro_cases(draw):
    """A drawn datastore: DQLEN, DSNRO at most it, its scope, 1-4 VMs (closed or open loop, numjobs 1-2), a seed."""
    dqlen = draw(st.integers(1, 48))
    dsnro = draw(st.integers(1, dqlen))
    scope = draw(st.sampled_from(["all_vms", "per_vm"]))
    workloads = ""
    for i in range(draw(st.integers(1, 4))):
        extra = f"numjobs = {draw(st.integers(1, 2))}\n"
        if draw(st.booleans()):
            extra += f'rate_iops = {draw(st.integers(500, 40000))}\nrate_process = "poisson"\n'
        workloads += _vm(f"vm{i}", draw(st.integers(1, 40)), extra)
    host = f'queue_depth = {dqlen}\nsched_num_req_outstanding = {dsnro}\ndsnro_scope = "{scope}"'
    text = ONE_DATASTORE.format(seed=draw(st.integers(0, 10**6)), duration="40ms", host=host, port="", workloads=workloads, faults="")
    return text.replace("queue_depth = 64\n", "", 1), dsnro, scope


@SETTINGS
@given(_dsnro_cases())
def test_engines_agree_on_random_datastores(case):
    """Hypothesis: both engines give the same JSON and every I/O's trace; the VMs' ACTV adds up to the device's, at
    most its DQLEN (all_vms: at most DSNRO whenever two or more VMs compete, which averages cannot show alone)."""
    text, dsnro, scope = case
    sc = pathsel.loads_scenario(text)
    fast = pathsel.simulate(sc, policies=["rr:iops=1"], engine="fast", trace=True)
    ref = pathsel.simulate(sc, policies=["rr:iops=1"], engine="reference", trace=True)
    assert _json(fast) == _json(ref)
    assert fast.runs[0].metrics.trace == ref.runs[0].metrics.trace
    (q,) = fast.runs[0].device_queues()
    assert sum(_actv(fast.runs[0]).values()) == pytest.approx(q["actv"], abs=1e-6)
    assert q["actv"] <= q["dqlen"] + 1e-9


TWO_DATASTORES = """
name = "dsnro per device"
seed = 5
duration = "500ms"
[[arrays]]
name = "a"
concurrency = 256
service_time = { dist = "exponential", mean = "200us" }
[[hosts]]
name = "esxi01"
queue_depth = 64
sched_num_req_outstanding = 32
[[volumes]]
name = "ds1"
sched_num_req_outstanding = 8
[[volumes]]
name = "ds2"
[[paths]]
name = "vmhba1:C0:T{i}:L{lun}"
count = 2
array = "a"
one_way_latency = "20us"
"""


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_volume_sets_its_own_devices_dsnro(engine):
    """ESXi sets DSNRO per device: ds1's 8 holds its two busy VMs to 8 active; ds2 keeps the host's 32 (a little
    more on the average: at time 0 the first VM is alone and fills DQLEN until the second has issued)."""
    vms = "".join(_vm(f"vm{k}", 48, f'volume = "ds{1 + k // 2}"') for k in range(4))
    run = _run(pathsel.loads_scenario(TWO_DATASTORES + vms), engine)
    actv = {q["device"]: q["actv"] for q in run.device_queues()}
    assert actv["esxi01/ds1"] == pytest.approx(8, rel=0.01) and actv["esxi01/ds2"] == pytest.approx(32, rel=0.01)


@pytest.mark.parametrize(
    ("host", "volume", "problem"),
    [
        ("queue_depth = 64", "sched_num_req_outstanding = 65", "65 must be at most the queue_depth (64) of host 'esxi01'"),
        ("", "sched_num_req_outstanding = 8", "host 'esxi01' sees volume 'ds1' but has no queue_depth"),
    ],
)
def test_a_volume_dsnro_above_or_without_a_hosts_queue_depth_is_refused(host, volume, problem):
    text = TWO_DATASTORES.replace("queue_depth = 64\nsched_num_req_outstanding = 32", host).replace("sched_num_req_outstanding = 8", volume)
    with pytest.raises(pathsel.ScenarioError) as e:
        pathsel.loads_scenario(text + _vm("vm0", 4, 'volume = "ds1"'))
    assert str(e.value).count("\n") == 0 and "volumes[0].sched_num_req_outstanding" in str(e.value) and problem in str(e.value)
