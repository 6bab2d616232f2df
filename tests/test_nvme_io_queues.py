"""NVMe-oF I/O queues (issue 16): ``nvme_io_queues`` x (``nvme_queue_size`` - 1) tags per controller, shared by every
namespace on it; an I/O whose chosen path's controller has none free waits for one there, in order (KAVG, QUED).

Both engines run them alike (tests/test_engines.py's differential scenario, and the property here); here: what a
storage person expects, the limit never passed, Little's law, and the I/O accounting balanced.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pathsel
from pathsel.engine.reference.run import Simulation
from pathsel.errors import ScenarioError

from .test_properties import SETTINGS

NVME = """
name = "nvme io queues"
seed = {seed}
duration = "{duration}"
protocol = "{protocol}"

[[arrays]]
name = "subsystem"
concurrency = {conc}
service_time = {{ dist = "exponential", mean = "{svc}us" }}

[[hosts]]
name = "linux01"
{host}

[[volumes]]
name = "n1"
lun = 1

[[volumes]]
name = "n2"
lun = 2

[[paths]]
name = "nvme0c{{i}}n{{lun}}"
count = {n_ctrl}
array = "subsystem"
one_way_latency = {{ dist = "uniform", low = "20us", high = "60us" }}

[[workloads]]
name = "db"
volume = "n1"
rw = "{rw}"
iodepth = {iodepth}

[[workloads]]
name = "background"
volume = "n2"
rw = "randread"
iodepth = {iodepth2}
{faults}
"""

FAULT = """
[[faults]]
at = "{at}"
what = "path_down"
path = "nvme0c0n{{lun}}"
"""


def _scenario(seed=1, duration="300ms", protocol="nvme", conc=256, svc=100, host="", n_ctrl=2, rw="randrw", iodepth=24, iodepth2=12, fault_at=None):
    faults = FAULT.format(at=fault_at) if fault_at else ""
    return pathsel.loads_scenario(
        NVME.format(
            seed=seed,
            duration=duration,
            protocol=protocol,
            conc=conc,
            svc=svc,
            host=host,
            n_ctrl=n_ctrl,
            rw=rw,
            iodepth=iodepth,
            iodepth2=iodepth2,
            faults=faults,
        )
    )


def _run(sc, engine="fast", policy="nvme:round-robin"):
    return pathsel.simulate(sc, policies=[policy], engine=engine).runs[0]


def _json(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


def test_the_tags_are_queues_times_size_less_one_per_controller():
    model = _run(_scenario(host="nvme_io_queues = 2\nnvme_queue_size = 32")).model
    assert [h.nvme_tags for h in model.host_params] == [2 * 31]
    assert _run(_scenario(host="nvme_io_queues = 3")).model.host_params[0].nvme_tags == 3 * 127  # NVMF_DEF_QUEUE_SIZE
    assert _run(_scenario()).model.host_params[0].nvme_tags == 0  # no key: no limit


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_limit_above_the_outstanding_ios_changes_nothing(engine):
    """36 I/Os over two controllers of 8 x 127 tags: never short of one, the same JSON as without the keys (but
    ACTV, which a host that can queue sums over time, to the last bits, rather than counts)."""
    plain = _json(pathsel.simulate(_scenario(), policies=["nvme:round-robin", "nvme:numa"], engine=engine))
    limited = _json(pathsel.simulate(_scenario(host="nvme_io_queues = 8"), policies=["nvme:round-robin", "nvme:numa"], engine=engine))
    for a, b in zip(plain["runs"], limited["runs"]):
        for qa, qb in zip(a["queues"], b["queues"]):
            assert qb.pop("actv") == pytest.approx(qa.pop("actv"), rel=1e-12)
            assert qa["qued"] == qb["qued"] == 0 and qa["kavg_us"] == qb["kavg_us"] == 0
        for wa, wb in zip(a["workloads"], b["workloads"]):  # each VM's ACTV the same way
            assert wb.pop("actv") == pytest.approx(wa.pop("actv"), rel=1e-12)
    assert plain == limited


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_tiny_limit_holds_io_in_the_host_and_iops_follow_littles_law(engine):
    """One queue of 16 (15 tags) on each of two controllers, 36 I/Os of two namespaces: at most 30 on the wire (a
    little less: round-robin sometimes picks the full controller while the other has a tag free), the rest waiting
    for a tag (QUED, KAVG); IOPS = tags in use / time on the wire."""
    run = _run(_scenario(host="nvme_io_queues = 1\nnvme_queue_size = 16", duration="1s"), engine)
    qs = run.device_queues()
    actv, qued = sum(q["actv"] for q in qs), sum(q["qued"] for q in qs)
    assert 27 < actv <= 30 + 1e-9 and actv + qued == pytest.approx(36, abs=1e-6)
    for q in qs:  # per namespace: QUED = IOPS x KAVG, ACTV = IOPS x DAVG
        assert q["qued"] == pytest.approx(q["iops"] * q["kavg_us"] * 1e-6, rel=0.03)
        assert q["actv"] == pytest.approx(q["iops"] * q["davg_us"] * 1e-6, rel=0.03)
    davg = sum(q["iops"] * q["davg_us"] for q in qs) / run.iops * 1e-6
    assert run.iops == pytest.approx(actv / davg, rel=0.03)
    assert run.latency_split_us["kavg"]["mean"] > 0 and run.accounting["balanced"]


def test_the_wait_is_on_the_chosen_controller_not_another():
    """nvme:numa sends every I/O down the first path: its controller's 15 tags are the limit even with a second
    controller idle (the submitter waits, it does not choose again)."""
    run = _run(_scenario(host="nvme_io_queues = 1\nnvme_queue_size = 16"), policy="nvme:numa")
    qs = run.device_queues()
    assert sum(q["actv"] for q in qs) == pytest.approx(15, abs=0.05)
    assert [p["ios"] > 0 for p in run.paths()].count(True) == 2  # one path per namespace, both on controller 0


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_path_failure_while_waiting_sends_the_io_back_to_path_selection(engine):
    """Controller 0 goes down with I/Os waiting for its tags: each gets one as the lost attempts let go, fails
    there like any attempt on a dead path, and is retried on controller 1; nothing is lost or stuck."""
    sc = _scenario(host='nvme_io_queues = 1\nnvme_queue_size = 16\ndetection = "5ms"', fault_at="100ms", duration="300ms")
    run = _run(sc, engine)
    acc = run.accounting
    assert acc["balanced"] and acc["failed"] == 0 and acc["retried"] > 0
    assert acc["in_flight"] <= 36


def test_scsi_refuses_the_keys_with_a_located_message():
    with pytest.raises(ScenarioError, match=r"hosts\[0\]\.nvme_io_queues: is for NVMe-oF only"):
        _scenario(protocol="scsi", host="nvme_io_queues = 2")


@pytest.mark.parametrize(
    "host, message",
    [
        ("nvme_io_queues = 0", "nvme_io_queues"),
        ("nvme_io_queues = 1025", "nvme_io_queues"),
        ("nvme_io_queues = 2.5", "nvme_io_queues"),
        ('nvme_io_queues = "8"', "nvme_io_queues"),
        ("nvme_io_queues = 2\nnvme_queue_size = 15", "nvme_queue_size"),
        ("nvme_io_queues = 2\nnvme_queue_size = 1025", "nvme_queue_size"),
        ("nvme_queue_size = 64", "nvme_queue_size needs nvme_io_queues"),
    ],
)
def test_bad_nvme_queue_input_is_one_located_message(host, message):
    with pytest.raises(ScenarioError, match=message):
        _scenario(host=host)


# -- a property: the tags never pass their limit, the accounting balances, the engines agree ------------------
@SETTINGS
@given(
    queues=st.sampled_from([None, 1, 2]),
    size=st.sampled_from([None, 16, 17, 20]),
    n_ctrl=st.integers(1, 3),
    iodepth=st.integers(1, 40),
    iodepth2=st.integers(1, 20),
    qd=st.sampled_from([None, 8]),
    fault=st.sampled_from([None, "15ms"]),
    policy=st.sampled_from(["nvme:round-robin", "nvme:queue-depth", "nvme:numa"]),
    seed=st.integers(0, 1000),
)
def test_tags_never_pass_their_limit_and_every_io_is_accounted(queues, size, n_ctrl, iodepth, iodepth2, qd, fault, policy, seed, watched):
    host = 'detection = "2ms"\n'
    if queues:
        host += f"nvme_io_queues = {queues}\n"
        if size:
            host += f"nvme_queue_size = {size}\n"
    if qd:
        host += f"queue_depth = {qd}\n"
    sc = _scenario(seed=seed, duration="40ms", conc=8, host=host, n_ctrl=n_ctrl, iodepth=iodepth, iodepth2=iodepth2, fault_at=fault)
    watched.clear()
    ref = pathsel.simulate(sc, policies=[policy], engine="reference")
    fast = pathsel.simulate(sc, policies=[policy], engine="fast")
    assert _json(ref) == _json(fast)
    acc = ref.runs[0].accounting
    assert acc["balanced"] and acc["issued"] == acc["completed"] + acc["failed"] + acc["in_flight"]
    if queues:
        assert 0 < watched.get("tags", 0) <= queues * ((size or 128) - 1)
    else:
        assert "tags" not in watched
    series = ref.runs[0].queues_over_time()
    assert (series.qued >= -1e-9).all() and (series.actv >= -1e-9).all()


@pytest.fixture(scope="module")
def watched():
    """The reference engine, watched: the most tags any controller had in use, each time one was taken."""
    seen: dict[str, float] = {}
    mp = pytest.MonkeyPatch()
    sim = Simulation
    path_take = sim.path_take

    def watched_tag(self, io, p, d):
        yield from path_take(self, io, p, d)
        r = self.held_path[io.slot]
        if r >= 0:
            seen["tags"] = max(seen.get("tags", -math.inf), self.queues[r].in_use)

    mp.setattr(sim, "path_take", watched_tag)
    yield seen
    mp.undo()
