"""Defects fixed in multipathd's path handling (issue 34 review): the checker loop's float ticks, san_path_err's
restart of a delayed path that fails again, followover's NEW_UP, marginal_path's verdict within a loop (1 s)."""

from __future__ import annotations

import types

import numpy as np
import pytest

from pathsel.policies import dm_mpath, multipathd


@pytest.fixture
def py(monkeypatch):
    """The compiled helpers as plain Python, so that a namespace can stand for the state."""
    for mod in (dm_mpath, multipathd):
        for name, obj in list(vars(mod).items()):
            if hasattr(obj, "py_func"):
                monkeypatch.setattr(mod, name, obj.py_func)


def _state(n=1, poll=5.0, **scalars):
    z = lambda v=0, t=np.int64: np.full((1, n), v, dtype=t)  # noqa: E731
    st = types.SimpleNamespace(
        failed=z(-1.0, float), san_n=z(), san_fg=z(), san_dis=z(-1.0, float), pf_n=z(), pf_t=z(0.0, float), marg=z(),
        marg_t=z(-1.0, float), dn_t=z(0.0, float), dn_from=z(-1.0, float), chk_dn=z(), tick=np.zeros(1, np.int64),
        seen_rank=z(), seen_up=z(1), seen_cls=z(), order=np.arange(n, dtype=np.int64)[None, :].copy(), cur=np.zeros(1, np.int64),
        deadline=np.full(1, np.inf), fo_group=np.full(1, -1, np.int64), failback_mode=dm_mpath.FAILBACK_MANUAL,
        failback_s=np.inf, selector=dm_mpath.SEL_ST, path_grouping_policy=dm_mpath.GROUP_BY_PRIO,
        san_thr=0, san_forget=0, san_rec=0, m_dft=0, m_st=0, m_thr=0, m_gap=0,
    )  # fmt: skip
    every = max(1, int(poll))
    st.poll, st.every, st.step = poll, every, poll / every
    vars(st).update(scalars)
    return st


def _view(alua, now=0.0):
    n = len(alua)
    return types.SimpleNamespace(
        clock=np.array([now]), alua=np.array(alua, np.int64), up=np.ones(n, np.int64), d_paths=np.arange(n)[None, :], d_np=np.array([n])
    )


@pytest.mark.parametrize("poll", [0.1, 0.01, 0.2, 0.3, 0.7, 1.1, 2.5, 5.0])
def test_the_checker_loop_at_its_own_float_time_is_the_last_loop(poll, py):
    st = _state(poll=poll)
    for n in range(1, 2000):
        t = n * st.step
        assert multipathd.last_loop(st, t) == n  # floor(4.3 / 0.1) is 42: loop 43 never ran, the wait never ended
        assert multipathd.last_loop(st, np.nextafter(t, 0)) == n - 1


def test_a_fractional_polling_interval_does_not_hang_either_engine():
    """1 path, polling_interval 0.1, io_timeout 50 ms and a 3 s stall from 4 s: the held path is rechecked at 4.3 s."""
    import pathsel

    from .test_engines import _json

    text = """
name = "f2"
seed = 3401
duration = "5s"
protocol = "scsi"
policies = ["dm:service-time:polling_interval=0.1"]
[[arrays]]
name = "array"
concurrency = 64
service_time = { read = { dist = "exponential", mean = "150us" } }
[[hosts]]
name = "linux01"
queue_depth = 30
io_timeout = "50ms"
apd_timeout = "queue"
[[paths]]
name = "sd0"
array = "array"
one_way_latency = "40us"
[[workloads]]
name = "w"
rw = "randread"
bs = "8k"
iodepth = 1
[[faults]]
at = "4.0s"
what = "latency"
path = "sd0"
add = "3s"
duration = "1s"
"""
    sc = pathsel.loads_scenario(text, "f2")
    fast, ref = pathsel.simulate(sc, engine="fast"), pathsel.simulate(sc, engine="reference")
    assert _json(fast) == _json(ref) and fast.runs[0].metrics.completed > 1000


def test_a_delayed_path_that_fails_again_restarts_its_recovery_time(py):
    # threshold 1, forget 10, recovery 60: failures at 1 and 7 delay it at 10; down at 69, up at 71: out until > 131
    st = _state(san_thr=1, san_forget=10, san_rec=60)
    multipathd.pathfail(st, 0, 0, 1.0)
    assert multipathd.check_up(st, 0, 0, 5.0, 1)
    multipathd.pathfail(st, 0, 0, 7.0)
    assert not multipathd.check_up(st, 0, 0, 10.0, 1) and st.san_dis[0, 0] == 10.0
    multipathd.seen_down(st, 0, 0, 69.0)
    multipathd.seen_up(st, 0, 0, 71.0)
    assert not multipathd.check_up(st, 0, 0, 71.0, 1)  # multipathd: dis_reinstate_time = now, then the comparison
    assert not multipathd.check_up(st, 0, 0, 131.0, 1)
    assert multipathd.check_up(st, 0, 0, 132.0, 1)
    multipathd.pathfail(st, 0, 0, 200.0)
    st.san_dis[0, 0], st.failed[0, 0] = 190.0, 200.0
    assert multipathd.check_up(st, 0, 0, 201.0, 0)  # no active path: reinstated early, first


@pytest.mark.parametrize(
    "dm_failed, checker_down, expect",
    [
        (True, False, -1),  # the other AO path dm failed on an I/O error is up for the checker: not the first back
        (False, True, 0),  # the other AO path is down for the checker: the first back, followover fails back
    ],
)
def test_followover_needs_the_checker(dm_failed, checker_down, expect, py):
    st = _state(n=3, failback_mode=dm_mpath.FAILBACK_FOLLOWOVER)
    v = _view([dm_mpath.AO, dm_mpath.AO, dm_mpath.ANO])
    st.cur[0] = 1
    if dm_failed:
        multipathd.pathfail(st, 0, 0, 1.0)
    if checker_down:
        multipathd.seen_down(st, 0, 0, 1.0)
    multipathd.seen_down(st, 0, 1, 1.0)  # path 1 down, then seen up: NEW_UP
    multipathd.seen_up(st, 0, 1, 2.0)
    dm_mpath.check(v, st, 0, 3, 1, 2.0, False)
    assert st.fo_group[0] == expect


def test_a_path_dm_failed_is_not_new_up_at_its_tick(py):
    st = _state(n=3, failback_mode=dm_mpath.FAILBACK_FOLLOWOVER)
    v = _view([dm_mpath.AO, dm_mpath.AO, dm_mpath.ANO])
    multipathd.pathfail(st, 0, 0, 1.0)
    multipathd.seen_down(st, 0, 1, 1.0)
    dm_mpath.check(v, st, 0, 3, 0, 5.0, False)  # the checker never saw path 0 down: oldchkrstate UP
    assert st.failed[0, 0] < 0 and st.fo_group[0] == -1


def test_the_marginal_verdict_comes_at_the_next_loop_not_the_next_polling_interval(py):
    # sampling from 10.5 s for 120 s, good: multipathd sets pp->tick = 1, the path is back at the 131 s loop (not 135)
    st = _state(n=2, m_dft=60, m_st=120, m_thr=10, m_gap=300)  # path 1 healthy: no "recovering early"
    st.marg[0, 0], st.marg_t[0, 0], st.failed[0, 0], st.tick[0], st.seen_rank[0, 0] = multipathd.M_SAMPLING, 10.5, 1.0, 10, -1
    for now, back in ((130.9, False), (131.0, True)):
        v = _view([dm_mpath.AO, dm_mpath.AO], now)
        dm_mpath.checker(v, st, 0, 2)
        assert (not multipathd.held(st, 0, 0)) is back, now
