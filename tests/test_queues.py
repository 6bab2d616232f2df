"""Every queue is one resource (issue 31): the model's table of queues (pathsel/model/queues.py), as both engines run it.

A table of small scenarios, one per rule (a "host" queue's capacity and FIFO order, its hand-over to the first
waiting, a "path" queue, a "refuse" port, the "array" slots, a throttled capacity), each run on both engines
(the same JSON) with what a storage person expects of the rows' counters; and a Hypothesis property: for random
small models, stopping the fast engine between events, no queue ever holds more than its queue depth, and at the
end every I/O is where the table says it is.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pathsel
from pathsel.model import compile_model
from pathsel.model.queues import ADAPTER_QUEUE, ARRAY_SLOTS, DEVICE_QUEUE, HOST, NVME_TAGS, PATH, TARGET_PORT, queue_table

from .test_properties import SETTINGS

SCENARIO = """
name = "queues"
seed = {seed}
duration = "{duration}"
protocol = "{protocol}"
[[arrays]]
name = "a"
concurrency = {conc}
{port}
service_time = {svc_spec}
{hosts}
{volumes}
{paths}
{workloads}
"""


def _scenario(
    seed=1,
    duration="200ms",
    protocol="scsi",
    conc=64,
    port="",
    svc=100,
    svc_dist="exponential",
    n_hosts=1,
    host="",
    volumes=1,
    n_paths=2,
    iodepth=8,
    rw="randrw",
    rate="",
):
    """``n_hosts`` hosts, each with ``n_paths`` paths to array ``a`` (target ports fc0.., shared by every host) and one
    job of ``iodepth`` on each of its ``volumes``."""
    hosts, paths, workloads = [], [], []
    for h in range(n_hosts):
        name = f"h{h}"
        hosts.append(f'[[hosts]]\nname = "{name}"\n{host}')
        lun = ":L{lun}" if volumes > 1 else ":L1"
        paths.append(
            f'[[paths]]\nname = "{name}:T{{i}}{lun}"\nhost = "{name}"\ncount = {n_paths}\narray = "a"\n'
            'target_port = "fc{i}"\none_way_latency = "20us"'
        )
        for v in range(volumes):
            vol = f'volume = "v{v}"' if volumes > 1 else ""
            workloads.append(f'[[workloads]]\nname = "w{h}{v}"\nhost = "{name}"\n{vol}\nrw = "{rw}"\niodepth = {iodepth}\n{rate}')
    vols = "".join(f'\n[[volumes]]\nname = "v{v}"\nlun = {v + 1}\n' for v in range(volumes)) if volumes > 1 else ""
    text = SCENARIO.format(
        seed=seed,
        duration=duration,
        protocol=protocol,
        conc=conc,
        port=port,
        svc_spec=f'{{ dist = "exponential", mean = "{svc}us" }}' if svc_dist == "exponential" else f'"{svc}us"',
        hosts="\n".join(hosts),
        volumes=vols,
        paths="\n".join(paths),
        workloads="\n".join(workloads),
    )
    return pathsel.loads_scenario(text)


def _json(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


def _rows(run, kind):
    """The rows of ``kind`` in the run's model, with their mean places in use and mean waiting over the window."""
    m, model = run.metrics, run.model
    span = model.duration
    return [(q, m.queue_in_use_area[q.index] / span, m.queue_waiting_area[q.index] / span) for q in model.queues if q.kind == kind]


# -- the model's table ---------------------------------------------------------------------------------------
def test_the_table_has_a_row_per_queue_and_each_device_its_admission():
    """Every device has its device queue (limited or not); adapters, tags and ports only where limited; every array."""
    sc = _scenario(n_hosts=2, volumes=2, host="queue_depth = 4\nadapter_queue_depth = 6", port="port_queue_depth = 3")
    model = compile_model(sc, sc.with_policies(["rr"]).runs[0])
    kinds = [q.kind for q in model.queues]
    assert kinds.count(DEVICE_QUEUE) == 4 and kinds.count(ADAPTER_QUEUE) == 2 and kinds.count(TARGET_PORT) == 2
    assert kinds.count(ARRAY_SLOTS) == 1 and NVME_TAGS not in kinds
    assert [q.index for q in model.queues] == list(range(len(model.queues)))
    for d in model.devices:
        dev, adapter = (model.queues[r] for r in d.admission)
        assert (dev.kind, dev.owner, dev.queue_depth, dev.rule) == (DEVICE_QUEUE, d.index, 4, HOST)
        assert (adapter.kind, adapter.owner, adapter.queue_depth) == (ADAPTER_QUEUE, d.host, 6)
    assert model.queue_rows(DEVICE_QUEUE) == tuple(d.admission[0] for d in model.devices)
    assert model.queue_rows(ARRAY_SLOTS) == (len(model.queues) - 1,)
    plain = _scenario()
    model = compile_model(plain, plain.with_policies(["rr"]).runs[0])
    assert [q.kind for q in model.queues] == [DEVICE_QUEUE, ARRAY_SLOTS] and model.devices[0].admission == (0,)
    assert model.queues[0].queue_depth == 0  # no limit: a row all the same (ACTV counts from it)


def test_a_new_host_queue_is_a_row_and_its_place_in_the_admission():
    """queue_table is all a new "host" queue needs: the rows and the device's admission come from it."""
    model = compile_model(sc := _scenario(host="adapter_queue_depth = 2"), sc.with_policies(["rr"]).runs[0])
    rows, admission = queue_table(model.devices, model.host_params, model.controllers, model.ports, model.arrays)
    assert rows == model.queues and admission == tuple(d.admission for d in model.devices)
    assert [rows[r].rule for r in admission[0]] == [HOST, HOST]


# -- one rule each, on both engines ---------------------------------------------------------------------------
def _device_queue_full(run):
    """queue_depth 4 under 12 outstanding: 4 in use at every instant, 8 waiting; esxtop's ACTV and QUED are those."""
    ((q, used, waiting),) = _rows(run, DEVICE_QUEUE)
    assert used == pytest.approx(4.0, rel=1e-9) and waiting == pytest.approx(8.0, rel=1e-9)
    (dev,) = run.device_queues()
    assert dev["actv"] == pytest.approx(used, rel=1e-9) and dev["qued"] == pytest.approx(waiting, rel=1e-9)


def _fifo_order(run):
    """queue_depth 1: one I/O at a time, in the order issued (FIFO), so they complete in that order too."""
    trace = sorted(run.metrics.trace, key=lambda r: r[5])  # by completion
    issued = [r[4] for r in trace]
    assert len(trace) > 50 and issued == sorted(issued)
    ((q, used, waiting),) = _rows(run, DEVICE_QUEUE)
    assert used == pytest.approx(1.0, rel=1e-9) and waiting == pytest.approx(3.0, rel=1e-9)


def _adapter_hand_over(run):
    """Two devices of 8 under one adapter of 6: the devices take all 16, the adapter 6 at a time (each release
    hands its place to the first waiting), 10 wait at it, counted QUED (ACTV only for the 6)."""
    ((_, a_used, a_waiting),) = _rows(run, ADAPTER_QUEUE)
    assert a_used == pytest.approx(6.0, rel=1e-9) and a_waiting == pytest.approx(10.0, rel=1e-9)
    for _, used, waiting in _rows(run, DEVICE_QUEUE):
        assert used == pytest.approx(8.0, rel=1e-9) and waiting == 0.0
    devs = run.device_queues()
    assert sum(d["actv"] for d in devs) == pytest.approx(6.0, rel=1e-9) and sum(d["qued"] for d in devs) == pytest.approx(10.0, rel=1e-9)


def _nvme_tags(run):
    """15 tags per controller (one I/O queue of 16), two controllers, 48 outstanding: each I/O holds a tag or waits
    for one of its path's controller."""
    rows = _rows(run, NVME_TAGS)
    assert len(rows) == 2 and all(q.rule == PATH and q.queue_depth == 15 for q, _, _ in rows)
    assert all(used <= 15.0 for _, used, _ in rows)
    assert sum(used + waiting for _, used, waiting in rows) == pytest.approx(48.0, rel=1e-9)
    assert sum(waiting for _, _, waiting in rows) >= 18.0 - 1e-9


def _port_refuses(run):
    """Ports of 2 under 32 outstanding: never more than 2 each, and the rows count the QUEUE FULLs they answered
    (at least those whose status reached the host in the window)."""
    rows = _rows(run, TARGET_PORT)
    assert len(rows) == 2 and all(0.0 < used <= 2.0 for _, used, _ in rows) and all(waiting == 0.0 for _, _, waiting in rows)
    answered = sum(int(run.metrics.queue_qfull[q.index]) for q, _, _ in rows)
    assert answered >= sum(p["qfull"] for p in run.paths()) > 0


def _array_slots(run):
    """Concurrency 2 under 8 outstanding: the array's row never holds more than 2, and requests wait for it."""
    ((q, used, waiting),) = _rows(run, ARRAY_SLOTS)
    assert q.queue_depth == 2 and 1.5 < used <= 2.0 and waiting > 1.0


def _throttled(run):
    """ESXi's throttling halves the device queue's capacity: its mean queue depth is below the scenario's, and
    what it holds back waits in the host."""
    for q in run.device_queues():
        assert q["dqlen"] == 16 and 1.0 <= q["dqlen_mean"] < 16.0 and q["qued"] > 0
    for _, used, _ in _rows(run, DEVICE_QUEUE):
        assert used <= 16.0


CASES = {
    "device queue full": (dict(host="queue_depth = 4", iodepth=12), _device_queue_full),
    "fifo order": (dict(host="queue_depth = 1", iodepth=4, svc_dist="constant", n_paths=1), _fifo_order),
    "adapter hand-over": (dict(volumes=2, host="queue_depth = 8\nadapter_queue_depth = 6", iodepth=8), _adapter_hand_over),
    "nvme tags": (dict(protocol="nvme", host="nvme_io_queues = 1\nnvme_queue_size = 16", iodepth=48), _nvme_tags),
    "port refuses": (
        dict(n_hosts=2, port="port_queue_depth = 2", host='queue_depth = 16\nqfull_retry_delay = "200us"', iodepth=16),
        _port_refuses,
    ),
    "array slots": (dict(conc=2, iodepth=8), _array_slots),
    "throttled capacity": (
        dict(n_hosts=4, port="port_queue_depth = 8", host="queue_depth = 16\nqfull_sample_size = 4\nqfull_threshold = 4", iodepth=16),
        _throttled,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_rule_on_both_engines(name):
    kw, check = CASES[name]
    sc = _scenario(**kw)
    fast = pathsel.simulate(sc, policies=["rr:iops=1"], engine="fast", trace=True)
    ref = pathsel.simulate(sc, policies=["rr:iops=1"], engine="reference", trace=True)
    assert _json(fast) == _json(ref)
    assert fast.runs[0].metrics.trace == ref.runs[0].metrics.trace
    assert fast.runs[0].accounting["balanced"]
    check(fast.runs[0])
    r = ref.runs[0].metrics
    if r.queue_in_use_area is not None:  # the reference engine keeps the same counters
        f = fast.runs[0].metrics
        assert np.allclose(r.queue_in_use_area, f.queue_in_use_area, rtol=1e-9)
        assert np.allclose(r.queue_waiting_area, f.queue_waiting_area, rtol=1e-9)
        assert (np.asarray(r.queue_qfull) == f.queue_qfull).all()


# -- the property: no queue holds more than its queue depth; every I/O is where the table says ---------------------
@st.composite
def small_models(draw):
    protocol = draw(st.sampled_from(["scsi", "nvme"]))
    host = []
    if draw(st.booleans()):
        host.append(f"queue_depth = {draw(st.integers(1, 6))}")
        if draw(st.booleans()):
            sample = draw(st.integers(1, 3))  # ESXi: the threshold at most the sample size (KB 1008113)
            host.append(f"qfull_sample_size = {sample}\nqfull_threshold = {draw(st.integers(1, sample))}")
    if draw(st.booleans()):
        host.append(f"adapter_queue_depth = {draw(st.integers(1, 8))}")
    if protocol == "nvme" and draw(st.booleans()):
        host.append(f"nvme_io_queues = {draw(st.integers(1, 2))}\nnvme_queue_size = {draw(st.integers(16, 17))}")
    host.append(f'qfull_retry_delay = "{draw(st.sampled_from(["0s", "50us"]))}"')
    port = f"port_queue_depth = {draw(st.integers(1, 4))}" if draw(st.booleans()) else ""
    rate = f"rate_iops = {draw(st.integers(5000, 60000))}" if draw(st.booleans()) else ""
    return _scenario(
        seed=draw(st.integers(0, 2**31)),
        duration="30ms",
        protocol=protocol,
        conc=draw(st.integers(1, 6)),
        port=port,
        svc=draw(st.sampled_from([20, 100, 300])),
        n_hosts=draw(st.integers(1, 2)),
        host="\n".join(host),
        volumes=draw(st.integers(1, 2)),
        n_paths=draw(st.integers(1, 3)),
        iodepth=draw(st.integers(1, 12)),
        rw=draw(st.sampled_from(["randread", "randwrite", "randrw"])),
        rate=rate,
    )


def _check_table(run, model, final):
    """The fast engine's table between two events: no row over its queue depth, and (``final``) each row holds the
    I/Os its slots say they hold."""
    from pathsel.engine.fast import layout as L

    S, R = run.state, run.rec
    q = S.q
    depth = np.array([r.queue_depth for r in model.queues])
    used, waiting, now_depth = q[:, L.Q_IN_USE], q[:, L.Q_TAIL] - q[:, L.Q_HEAD], q[:, L.Q_QUEUE_DEPTH]
    limited = depth > 0
    assert (used >= 0).all() and (waiting >= 0).all()
    assert (used[limited] <= depth[limited]).all()  # a throttled capacity may be below, never the scenario's
    assert (now_depth[limited] >= 1).all() and (now_depth <= depth).all()
    for r in model.queues:
        if r.rule in (HOST, PATH) and waiting[r.index] > 0 and now_depth[r.index] == depth[r.index]:
            assert used[r.index] == depth[r.index]  # nobody waits while a place is free
    if not final:
        return
    slot = S.slot
    live = np.isfinite(S.slotf[:, L.K_ISSUED])
    slot_dev = np.array([model.jobs[j].device for j in slot[:, L.K_JOB]])
    for d in model.devices:
        first = d.admission[0]
        assert used[first] + waiting[first] == int((live & (slot_dev == d.index)).sum())
        if model.host_queues:
            backlog = sum(int(S.jb_tail[j.index] - S.jb_head[j.index]) for j in model.jobs if j.device == d.index)
            assert R.dev_actv[d.index] + R.dev_qued[d.index] == used[first] + waiting[first] + backlog
    for r in model.queues:
        if r.rule == PATH:
            assert used[r.index] + waiting[r.index] == int((slot[:, L.K_QUEUE] == r.index + 1).sum())
        elif r.rule == "refuse":
            assert used[r.index] == int((slot[:, L.K_PORT_ROW] == r.index + 1).sum())


@SETTINGS
@given(small_models())
def test_no_queue_holds_more_than_its_queue_depth_and_every_io_is_accounted_for(sc):
    from pathsel.engine.fast import layout as L
    from pathsel.engine.fast.loop import run_kernel
    from pathsel.engine.fast.run import _queue_counters
    from pathsel.engine.fast.state import Run, resolve
    from pathsel.engine.fast.warm import prepare
    from pathsel.policies.framework.kernel import FL_NEV

    run_spec = sc.with_policies(["rr:iops=1"]).runs[0]
    model = compile_model(sc, run_spec)
    defn, params = resolve(run_spec.policy)
    prepare([defn])
    run = Run(model, defn, params, False)
    run.feed.refill()
    addrs = (run.params_rec.address, run.state.address, run.view.address, run.rec.address)
    t_stop = step = model.end / 40
    while True:
        status = run_kernel(*addrs, t_stop, run.ev_room, 1 << 40)
        run.view.flags[FL_NEV] = 0
        assert not run.state.si[L.I_OVERLOAD]
        if status == L.REFILL:
            run.feed.refill()
        elif status == L.PAUSED:
            _check_table(run, model, False)
            t_stop += step
        elif status == L.DONE:
            break
    _check_table(run, model, True)
    used, waiting, qfull = _queue_counters(run.state, model)
    depth = np.array([q.queue_depth or math.inf for q in model.queues])
    assert (used <= depth * model.duration + 1e-9).all() and (waiting >= 0).all() and (qfull >= 0).all()
    # and the whole run, from the API: balanced, and the same on the reference engine
    fast = pathsel.simulate(sc, policies=["rr:iops=1"], engine="fast")
    assert fast.runs[0].accounting["balanced"]
    assert _json(fast) == _json(pathsel.simulate(sc, policies=["rr:iops=1"], engine="reference"))
