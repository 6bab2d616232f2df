"""multipathd's path handling beside dm's selectors (pathsel/policies/multipathd.py): fail_path on an error and the
checker's reinstatement, san_path_err, marginal_path, failback followover; exact choices on a hand-driven host."""

from __future__ import annotations

import pytest

from pathsel.policies.dm import DmQueueLength, DmRoundRobin, DmServiceTime
from tests.policy_rig import Rig


def fail(rig: Rig, path: int, io=None) -> None:
    """An attempt on ``path`` fails (aborted at io_timeout): off the path, then the policy's fail hook."""
    view = rig.views[path]
    if io is None:
        io = rig.io()
        rig.table.start(path, io.size)
    rig.table.end(path, io.size)
    rig.policy.on_fail(view, io, 0.0)


def test_a_timed_out_path_is_failed_until_the_next_checker_tick() -> None:
    rig = Rig(["AO", "AO"])
    rig.bind(DmRoundRobin(path_grouping_policy="multibus"))
    assert rig.names_idle(2) == ["p0", "p1"]
    rig.now = 1.0
    fail(rig, 0)
    assert rig.names_idle(3) == ["p1", "p1", "p1"]
    rig.now = 4.999
    assert rig.names_idle(1) == ["p1"]
    rig.now = 5.0  # polling_interval 5: ticks at 5, 10, ... from the run's start
    assert rig.names_idle(2) == ["p0", "p1"]  # round-robin reinstates at the head


def test_polling_interval_moves_the_tick() -> None:
    rig = Rig(["AO", "AO"])
    rig.bind(DmQueueLength(path_grouping_policy="multibus", polling_interval=2))
    rig.now = 2.5
    fail(rig, 0)
    rig.now = 3.99
    assert rig.names_idle(1) == ["p1"]
    rig.now = 4.0
    assert set(rig.names_of(2)) == {"p0", "p1"}


def test_every_path_failed_gives_no_path_until_a_tick() -> None:
    rig = Rig(["AO", "AO"])
    rig.bind(DmServiceTime(path_grouping_policy="multibus"))
    rig.now = 0.5
    fail(rig, 0)
    fail(rig, 1)
    assert rig.names_idle(1) == [None]
    assert rig.policy.wake_at() == 5.0  # the engines end the I/O's wait at the next check
    rig.now = 5.0
    assert rig.names_idle(1) == ["p0"]


def test_no_wake_time_when_every_path_is_down() -> None:
    rig = Rig(["AO", "AO"])
    rig.bind(DmServiceTime(path_grouping_policy="multibus"))
    rig.down(0, 1)
    assert rig.names_idle(1) == [None]
    assert rig.policy.wake_at() == float("inf")


def test_a_failure_on_a_path_seen_down_changes_nothing() -> None:
    rig = Rig(["AO", "AO"])
    rig.bind(DmRoundRobin(path_grouping_policy="multibus"))
    rig.now = 1.0
    rig.down(0)
    fail(rig, 0)
    rig.now = 1.5
    rig.up(0)  # the checker saw it up: back at once
    assert rig.names_idle(1) == ["p0"]


def san(**kw):
    return DmRoundRobin(path_grouping_policy="multibus", san_path_err_threshold=2, san_path_err_forget_rate=10, san_path_err_recovery_time=30, **kw)


def test_san_path_err_keeps_a_path_out_after_more_than_threshold_failures() -> None:
    rig = Rig(["AO", "AO"])
    rig.bind(san())
    for t in (1.0, 6.0):  # failures 1 and 2: reinstated at the next tick
        rig.now = t
        fail(rig, 0)
        rig.now = t + 4.0
        assert "p0" in rig.names_idle(2)
    rig.now = 11.0
    fail(rig, 0)  # the third: more than 2
    for t in (15.0, 30.0, 45.0):  # delayed at the tick at 15; out while now - 15 <= 30
        rig.now = t
        assert rig.names_idle(2) == ["p1", "p1"]
    rig.now = 50.0  # 50 - 15 > 30
    assert rig.names_idle(2) == ["p0", "p1"]


def test_san_path_err_forgets_one_failure_per_forget_rate_checks() -> None:
    rig = Rig(["AO", "AO"])
    rig.bind(san())
    rig.now = 1.0
    fail(rig, 0)
    rig.now = 6.0
    fail(rig, 0)  # two counted at the ticks at 5 and 10
    # 10 working checks reset the countdown, 10 more forget one, ... : by t = 10 + 5 * 22 one is forgotten
    rig.now = 10.0 + 5 * 22
    rig.names_idle(1)
    fail(rig, 0)
    rig.now += 5.0
    assert "p0" in rig.names_idle(2)  # 1 + 1 = 2 failures: not more than the threshold


def test_san_path_err_reinstates_early_when_no_other_path_is_usable() -> None:
    rig = Rig(["AO", "AO"])
    rig.bind(san())
    for t in (1.0, 6.0, 11.0):
        rig.now = t
        fail(rig, 0)
    rig.now = 16.0
    rig.down(1)
    rig.now = 20.0  # "reinstating path early": no active path
    assert rig.names_idle(1) == ["p0"]


def marginal(**kw):
    return DmRoundRobin(
        path_grouping_policy="multibus",
        marginal_path_double_failed_time=60,
        marginal_path_err_sample_time=120,
        marginal_path_err_rate_threshold=10,
        marginal_path_err_recheck_gap_time=300,
        **kw,
    )


def test_marginal_path_two_failures_start_a_sample_a_clean_one_reinstates() -> None:
    rig = Rig(["AO", "AO"])
    rig.bind(marginal())
    rig.now = 1.0
    fail(rig, 0)
    rig.now = 6.0
    fail(rig, 0)  # the second within 60 s: sampled from the tick at 10 for 120 s
    for t in (10.0, 100.0, 129.0):
        rig.now = t
        assert rig.names_idle(1) == ["p1"]
    rig.now = 130.0
    assert sorted(rig.names_idle(2)) == ["p0", "p1"]


def test_marginal_path_a_bad_sample_keeps_it_out_for_the_gap() -> None:
    rig = Rig(["AO", "AO"])
    rig.bind(marginal())
    rig.now = 1.0
    fail(rig, 0)
    rig.now = 6.0
    fail(rig, 0)
    rig.now = 50.0
    rig.down(0)
    rig.now = 52.0  # down 2 s of 120: 16.7 per thousand > 10
    rig.up(0)
    rig.now = 130.0
    assert rig.names_idle(1) == ["p1"]
    rig.now = 130.0 + 300.0  # the gap counts from the sample's end: 430 - 130 = 300, not more
    assert rig.names_idle(1) == ["p1"]
    rig.now = 435.0  # sampled again from 435 for 120 s, clean
    rig.names_idle(1)
    rig.now = 555.0
    assert sorted(rig.names_idle(2)) == ["p0", "p1"]


def test_marginal_path_turns_san_path_err_off_and_sample_time_is_at_least_120() -> None:
    pol = DmRoundRobin(
        marginal_path_double_failed_time=60,
        marginal_path_err_sample_time=10,
        marginal_path_err_rate_threshold=10,
        marginal_path_err_recheck_gap_time=300,
        san_path_err_threshold=1,
        san_path_err_forget_rate=1,
        san_path_err_recovery_time=1,
    )
    rig = Rig(["AO", "AO"])
    rig.bind(pol)
    st = pol._state
    assert int(st.m_st) == 120 and int(st.san_rec) == 0


def test_followover_fails_back_only_when_the_first_path_of_the_group_returns() -> None:
    rig = Rig(["AO", "AO", "ANO"])
    rig.bind(DmRoundRobin(failback="followover"))
    assert rig.names_idle(1) == ["p0"]
    rig.down(0, 1)
    assert rig.names_idle(1) == ["p2"]
    rig.up(0)  # the first path of the AO group back: switch
    assert rig.names_idle(1) == ["p0"]
    rig.down(0)
    rig.down(1)
    rig.up(1)
    rig.down(1)
    rig.up(0)
    assert rig.names_idle(1) == ["p0"]


def test_followover_does_not_switch_on_a_priority_change() -> None:
    rig = Rig(["AO", "ANO"])
    rig.bind(DmRoundRobin(failback="followover"))
    rig.down(0)
    assert rig.names_idle(1) == ["p1"]
    rig.up(0)
    assert rig.names_idle(1) == ["p0"]
    rig.alua(0, "ANO")
    rig.alua(1, "AO")
    rig.alua(1, "ANO")
    rig.alua(0, "AO")  # the AO group is back by an ALUA change, not a path coming up: stay
    assert rig.names_idle(1) in (["p0"], ["p1"])


@pytest.mark.parametrize(
    "key,value",
    [
        ("san_path_err_threshold", -1),
        ("san_path_err_threshold", "often"),
        ("marginal_path_err_sample_time", 1.5),
        ("polling_interval", 0),
        ("polling_interval", 1e-9),
        ("polling_interval", "inf"),
        ("polling_interval", "nan"),
        ("failback", "followme"),
    ],
)
def test_bad_values_are_refused(key: str, value: object) -> None:
    with pytest.raises(ValueError, match=key):
        DmRoundRobin(**{key: value})
