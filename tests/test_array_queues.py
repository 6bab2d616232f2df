"""The array's and adapter's side of the host queues (issue 16): a target port's queue limit and its QUEUE FULL,
ESXi's adaptive queue-depth throttling, the adapter's (HBA's) queue depth.

Both engines run them alike (tests/test_engines.py's differential scenarios, and one here); here: what a
storage person expects of each, the limits never passed, and the I/O accounting balanced.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pathsel
from pathsel.engine.reference.run import Simulation
from pathsel.errors import ScenarioError

from .test_properties import SETTINGS

PORTS = """
name = "target ports"
seed = {seed}
duration = "{duration}"
protocol = "{protocol}"
[[arrays]]
name = "a"
concurrency = {conc}
{port}
service_time = {{ dist = "exponential", mean = "{svc}us" }}
{hosts}
{paths}
{workloads}
"""


def _scenario(
    seed=1, duration="300ms", protocol="scsi", conc=64, port="", svc=200, n_hosts=1, host="", shared=True, iodepth=16, rw="randrw", lat=20, volumes=1
):
    """``n_hosts`` hosts, each with two paths to array ``a`` (target ports fc0 and fc1, shared by every host when
    ``shared``) and one job of ``iodepth`` on each of its ``volumes``."""
    hosts, paths, workloads = [], [], []
    for h in range(n_hosts):
        name = f"esxi{h:02d}"
        hosts.append(f'[[hosts]]\nname = "{name}"\n{host}')
        tport = 'target_port = "fc{i}"' if shared else ""
        lun = ":L{lun}" if volumes > 1 else ":L1"
        paths.append(f'[[paths]]\nname = "vmhba1:C0:T{{i}}{lun}"\nhost = "{name}"\ncount = 2\narray = "a"\n{tport}\none_way_latency = "{lat}us"')
        for v in range(volumes):
            vol = f'volume = "v{v}"' if volumes > 1 else ""
            workloads.append(f'[[workloads]]\nname = "w{h}{v}"\nhost = "{name}"\n{vol}\nrw = "{rw}"\niodepth = {iodepth}')
    vols = "".join(f'\n[[volumes]]\nname = "v{v}"\nlun = {v + 1}\n' for v in range(volumes)) if volumes > 1 else ""
    text = PORTS.format(
        seed=seed,
        duration=duration,
        protocol=protocol,
        conc=conc,
        port=port,
        svc=svc,
        hosts="\n".join(hosts) + vols,
        paths="\n".join(paths),
        workloads="\n".join(workloads),
    )
    return pathsel.loads_scenario(text)


def _run(sc, engine="fast", policy="rr:iops=1"):
    return pathsel.simulate(sc, policies=[policy], engine=engine).runs[0]


# -- a target port's queue limit and QUEUE FULL ----------------------------------------------------------
@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_port_limit_above_the_outstanding_commands_changes_nothing(engine):
    """16 I/Os over two ports of 64: never full, no QUEUE FULL, the same figures as without the key."""
    plain = _run(_scenario(), engine)
    limited = _run(_scenario(port="port_queue_depth = 64"), engine)
    assert limited.accounting["qfull"] == 0 and all(p["qfull"] == 0 for p in limited.paths())
    assert plain.iops == limited.iops and plain.latency_us == limited.latency_us
    assert plain.accounting["retried"] == limited.accounting["retried"] == 0
    assert "qfull" not in plain.accounting and "qfull" not in plain.paths()[0]  # no port limit: no column


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_an_overrun_port_answers_queue_full_and_the_host_retries(engine):
    """Four hosts x 16 I/Os on two ports of 8: QUEUE FULL statuses, counted per path and per device, each retried."""
    sc = _scenario(n_hosts=4, port="port_queue_depth = 8", host='queue_depth = 16\nqfull_retry_delay = "500us"')
    run = _run(sc, engine)
    acc = run.accounting
    assert acc["balanced"] and acc["qfull"] > 100
    per_path = sum(p["qfull"] for p in run.paths())
    per_device = sum(q["qfull"] for q in run.device_queues())
    assert per_path == per_device > 0 and per_device <= acc["qfull"]  # the window's, of the run's
    assert acc["retried"] <= acc["qfull"] <= acc["retried"] + 4 * 16  # each is sent again (a few still waiting)
    # 16 commands at the array at most, each holding its port for its service time (200 us mean): at most 80,000 IOPS
    assert 0.6 * 16 / 200e-6 < run.iops < 1.05 * 16 / 200e-6
    table = pathsel.simulate(sc, policies=["rr:iops=1"], engine=engine).table()
    assert "QFULL" in table and "DQLEN mean" in table


def test_a_sweep_counts_queue_full_where_a_port_can_answer_it(tmp_path, capsys):
    """The tour's `pathsel sweep sims/port-queue-full.toml` promises QUEUE FULL: a QFULL column, the window's statuses
    over every device (as the host-queue table's QFULL column sums them); empty where no port has a queue depth."""
    import pandas as pd

    from pathsel.cli import main
    from pathsel.studies.table import qfull_count

    sims = Path(pathsel.__file__).parent / "data" / "examples"
    res = pathsel.sweep(str(sims / "port-queue-full.toml"), replications=1, duration="0.2s", executor="serial")
    assert res.table.qfull.notna().all() and (res.table.qfull > 0).all()
    run = pathsel.simulate(sims / "port-queue-full.toml", duration=0.2).runs[0]
    assert qfull_count(run) == sum(q["qfull"] for q in run.device_queues()) > 0
    plain = pathsel.sweep(str(sims / "esxi-latency-testdrive.toml"), replications=1, duration="0.05s", executor="serial")
    assert "qfull" in plain.table.columns and plain.table.qfull.isna().all()
    assert main(["sweep", str(sims / "port-queue-full.toml"), "--duration", "0.2s", "--serial", "-q"]) == 0
    head, *rows = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("pathsel sweep:")]
    assert len(rows) == 2 and head.split()[-1] == "QFULL" and all(int(r.split()[-1].replace(",", "")) > 0 for r in rows)
    # a results file from before the column cannot be resumed, and says why
    out = tmp_path / "old.csv"
    pathsel.sweep(str(sims / "port-queue-full.toml"), replications=1, duration="0.05s", executor="serial", out=out)
    pd.read_csv(out).drop(columns=["qfull"]).to_csv(out, index=False)
    with pytest.raises(ScenarioError, match=r"written before sweeps kept QUEUE FULL counts \(no qfull column\)"):
        pathsel.sweep(str(sims / "port-queue-full.toml"), replications=1, duration="0.05s", executor="serial", out=out)


def test_nexuses_without_a_named_port_have_their_own():
    """Without target_port each nexus is a port of its own: four hosts x 16 over 8 ports of 8 never fill one."""
    run = _run(_scenario(n_hosts=4, shared=False, port="port_queue_depth = 8", iodepth=8))
    assert run.accounting["qfull"] == 0
    model = pathsel.simulate(_scenario(n_hosts=2, port="port_queue_depth = 8"), policies=["rr"]).runs[0].model
    assert [t.name for t in model.ports] == ["fc0", "fc1"] and {c.port for c in model.controllers} == {0, 1}


@pytest.mark.parametrize("protocol, rw", [("scsi", "randwrite"), ("nvme", "randread"), ("nvme", "randwrite")])
def test_queue_full_on_every_protocol_and_op_and_both_engines_agree(protocol, rw):
    sc = _scenario(
        duration="60ms",
        protocol=protocol,
        rw=rw,
        n_hosts=2,
        conc=3,
        port="port_queue_depth = 2",
        host='queue_depth = 8\nqfull_sample_size = 4\nqfull_threshold = 2\nqfull_retry_delay = "0s"',
        iodepth=8,
    )
    fast = pathsel.simulate(sc, policies=["rr:iops=1", "mpio:lqd"], engine="fast", trace=True)
    ref = pathsel.simulate(sc, policies=["rr:iops=1", "mpio:lqd"], engine="reference", trace=True)
    assert fast.to_json().replace('"fast"', '"x"') == ref.to_json().replace('"reference"', '"x"')
    assert all(f.metrics.trace == r.metrics.trace for f, r in zip(fast.runs, ref.runs))
    assert fast.runs[0].accounting["qfull"] > 0


# -- ESXi's adaptive queue-depth throttling --------------------------------------------------------------
def test_throttling_halves_dqlen_and_grows_it_back():
    """QFullSampleSize 4: DQLEN drops below the configured 32 and the time series shows it; without it, 32 throughout."""
    common = dict(n_hosts=4, port="port_queue_depth = 16", iodepth=32, duration="400ms")
    off = _run(_scenario(host="queue_depth = 32", **common))
    on = _run(_scenario(host="queue_depth = 32\nqfull_sample_size = 4\nqfull_threshold = 4", **common))
    for q in off.device_queues():
        assert q["dqlen"] == 32 and q["dqlen_mean"] == pytest.approx(32.0)
    for q in on.device_queues():
        assert q["dqlen"] == 32 and 1.0 <= q["dqlen_mean"] < 32.0
        assert q["qued"] > 0  # what DQLEN holds back waits in the host (KAVG)
    series = on.queues_over_time()
    assert ((series.dqlen >= 1.0) & (series.dqlen <= 32.0)).all() and (series.dqlen < 31.0).any()
    assert (off.queues_over_time().dqlen == 32.0).all()
    assert on.accounting["qfull"] < off.accounting["qfull"]  # fewer commands sent into a full port


def test_throttling_is_off_by_default_and_without_a_queue_full():
    """qfull_sample_size alone changes nothing while no port is full: DQLEN stays where it was set."""
    run = _run(_scenario(host="queue_depth = 8\nqfull_sample_size = 1\nqfull_threshold = 1", iodepth=16))
    (q,) = run.device_queues()
    assert q["dqlen"] == 8 and q["actv"] == pytest.approx(8, abs=0.01)
    assert "dqlen_mean" not in q  # no port limit in the scenario: no QUEUE FULL columns


# -- the adapter's queue depth ---------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_an_adapter_queue_depth_holds_io_across_devices(engine):
    """Two devices of DQLEN 8 with 12 I/Os each behind an adapter of 6: 6 active in all, the rest queued (KAVG)."""
    sc = _scenario(host="queue_depth = 8\nadapter_queue_depth = 6", iodepth=12, volumes=2, duration="400ms")
    run = _run(sc, engine)
    qs = run.device_queues()
    assert sum(q["actv"] for q in qs) == pytest.approx(6, abs=0.02)
    assert sum(q["qued"] for q in qs) == pytest.approx(24 - 6, abs=0.02)
    assert run.latency_split_us["kavg"]["mean"] > 2 * run.latency_split_us["davg"]["mean"]
    assert run.accounting["balanced"]


def test_an_adapter_queue_depth_alone_queues_in_the_host():
    """No device queue depth: the adapter still holds back what is beyond it (and the host queues table shows)."""
    sc = _scenario(host="adapter_queue_depth = 4", iodepth=10)
    result = pathsel.simulate(sc, policies=["rr"])
    (q,) = result.runs[0].device_queues()
    assert q["actv"] == pytest.approx(4, abs=0.01) and q["qued"] == pytest.approx(6, abs=0.01)
    assert "KAVG" in result.table()


# -- bad input, as tests/test_bad_input.py's table has it for files -----------------------------------------
@pytest.mark.parametrize(
    "port, host, message",
    [
        ("port_queue_depth = 0", "", "port_queue_depth"),
        ("port_queue_depth = -1", "", "port_queue_depth"),
        ("port_queue_depth = 2.5", "", "port_queue_depth"),
        ('port_queue_depth = "4096"', "", "port_queue_depth"),
        ("port_queue_depth = true", "", "port_queue_depth"),
        ("", "qfull_sample_size = 32", "qfull_sample_size needs queue_depth"),
        ("", "queue_depth = 32\nqfull_sample_size = 65", "qfull_sample_size"),
        ("", "queue_depth = 32\nqfull_sample_size = -1", "qfull_sample_size"),
        ("", "queue_depth = 32\nqfull_sample_size = 2\nqfull_threshold = 4", "at most qfull_sample_size"),
        ("", "qfull_threshold = 17", "qfull_threshold"),
        ("", 'qfull_retry_delay = "-1ms"', "qfull_retry_delay"),
        ("", "qfull_retry_delay = 5", "qfull_retry_delay"),
        ("", "adapter_queue_depth = 0", "adapter_queue_depth"),
        ("", "adapter_queue_depth = 65537", "adapter_queue_depth"),
        ("", 'adapter_queue_depth = "8192"', "adapter_queue_depth"),
    ],
)
def test_bad_array_and_adapter_queue_input_is_one_located_message(port, host, message):
    with pytest.raises(ScenarioError, match=message):
        _scenario(port=port, host=host)


# -- properties: accounting balances, no queue passes its limit, the engines agree -------------------------
@SETTINGS
@given(
    pqd=st.sampled_from([None, 1, 2, 5]),
    qd=st.sampled_from([None, 2, 6]),
    aqd=st.sampled_from([None, 1, 3, 8]),
    sample=st.sampled_from([0, 1, 3]),
    n_hosts=st.integers(1, 3),
    iodepth=st.integers(1, 10),
    conc=st.integers(1, 6),
    delay=st.sampled_from(["0s", "50us", "1ms"]),
    protocol=st.sampled_from(["scsi", "nvme"]),
    seed=st.integers(0, 1000),
)
def test_queues_never_pass_their_limits_and_every_io_is_accounted(
    pqd, qd, aqd, sample, n_hosts, iodepth, conc, delay, protocol, seed, monkeypatch_module
):
    host = ""
    if qd:
        host += f"queue_depth = {qd}\n"
        if sample:
            host += f"qfull_sample_size = {sample}\nqfull_threshold = 1\n"
    if aqd:
        host += f"adapter_queue_depth = {aqd}\n"
    host += f'qfull_retry_delay = "{delay}"'
    port = f"port_queue_depth = {pqd}" if pqd else ""
    sc = _scenario(seed=seed, duration="40ms", protocol=protocol, conc=conc, port=port, n_hosts=n_hosts, host=host, iodepth=iodepth)
    seen = monkeypatch_module
    seen.clear()
    ref = pathsel.simulate(sc, policies=["rr"], engine="reference")
    fast = pathsel.simulate(sc, policies=["rr"], engine="fast")
    assert json.loads(ref.to_json()) | {"engine": ""} == json.loads(fast.to_json()) | {"engine": ""}
    run = ref.runs[0]
    acc = run.accounting
    assert acc["balanced"] and acc["issued"] == acc["completed"] + acc["failed"] + acc["in_flight"]
    if pqd:
        assert seen.get("port", 0) <= pqd
        assert acc["qfull"] >= sum(p["qfull"] for p in run.paths())
    if qd:
        assert seen.get("device", 0) <= qd
        assert seen.get("dqlen_min", 1) >= 1
    if aqd:
        assert seen.get("adapter", 0) <= aqd
    series = run.queues_over_time()
    if qd:
        assert ((series.dqlen >= 1.0 - 1e-9) & (series.dqlen <= qd + 1e-9)).all()
    else:
        assert series.dqlen.isna().all()
    assert (series.qued >= -1e-9).all() and (series.actv >= -1e-9).all()


@pytest.fixture(scope="module")
def monkeypatch_module():
    """The reference engine, watched: the most commands a port held, I/Os a device and an adapter took, the lowest
    DQLEN, each time one of them grew."""
    seen: dict[str, float] = {}
    mp = pytest.MonkeyPatch()
    sim = Simulation
    accept, take, throttle = sim.accept, sim.take, sim.throttle
    kinds = {"device_queue": "device", "adapter_queue": "adapter"}

    def note(key, value, lower=False):
        old = seen.get(key, math.inf if lower else -math.inf)
        seen[key] = min(old, value) if lower else max(old, value)

    def watched_accept(self, io, p, deadline):
        yield from accept(self, io, p, deadline)
        note("port", max((q.in_use for q in self.queues if q.row.kind == "target_port"), default=0))

    def watched_take(self, r, d, first, j):
        yield from take(self, r, d, first, j)
        q = self.queues[r]
        if q.row.kind in kinds:
            note(kinds[q.row.kind], q.in_use)

    def watched_throttle(self, d, qfull):
        throttle(self, d, qfull)
        note("dqlen_min", self.queues[self.device_queue[d]].queue_depth, lower=True)

    mp.setattr(sim, "accept", watched_accept)
    mp.setattr(sim, "take", watched_take)
    mp.setattr(sim, "throttle", watched_throttle)
    yield seen
    mp.undo()
