"""Linux dm-multipath: the kernel selectors' exact choices and multipath-tools' path groups.

Every case comes from drivers/md/dm-ps-*.c and dm-mpath.c (see
pathsel/policies/dm_ps.py): list order and move-to-tail (ties to the
least recently selected path), queue-length's early exit, service-time's
comparison with relative throughput, historical-service-time's fixed-point
weights, serialised service time and stale-path probes; then path groups and
failback immediate / manual / N seconds as multipathd applies them.
"""

from __future__ import annotations

import pytest

from pathsel.policies import (
    DmHistoricalServiceTime,
    DmQueueLength,
    DmRoundRobin,
    DmServiceTime,
    build_policy,
)
from pathsel.policies.dm_ps import (
    HST_FIXED_1,
    fixed_ema,
    fixed_power,
    hst_compare,
    hst_weights,
)

from .policy_rig import Rig


def hst(pol):
    """The device's hst estimates (fixed point, per path): a row of the policy's record."""
    return pol.state.hst[0]


def stale(pol):
    return pol.state.stale[0]


def lastfin(pol):
    return pol.state.lastfin[0]


MS = 1e-3


# -- round-robin ---------------------------------------------------------------
@pytest.mark.parametrize(
    "alua, grouping, expected",
    [
        (["AO", "AO", "AO"], "group_by_prio", ["p0", "p1", "p2", "p0", "p1", "p2"]),
        (["AO", "ANO", "AO"], "group_by_prio", ["p0", "p2", "p0", "p2"]),  # the AO group only
        (["ANO", "ANO", "standby"], "group_by_prio", ["p0", "p1", "p0", "p1"]),
        (["AO", "ANO", "AO"], "multibus", ["p0", "p1", "p2", "p0"]),  # one group: ANO paths too
        (["AO", "ANO", "AO"], "failover", ["p0", "p0", "p0"]),  # one path per group, the first AO
        (["ANO", "AO", "AO"], "failover", ["p1", "p1", "p1"]),  # groups by prio, then path order
        (["unavailable", "standby"], "multibus", [None, None]),
    ],
)
def test_round_robin_within_the_current_group(alua, grouping, expected):
    rig = Rig(alua)
    rig.bind(DmRoundRobin(path_grouping_policy=grouping))
    assert rig.names_of(len(expected)) == expected


def test_round_robin_reinstated_path_goes_to_the_head():
    # rr_reinstate_path uses list_move (head); the other selectors list_move_tail
    rig = Rig(["AO"] * 4)
    rig.bind(DmRoundRobin())
    assert rig.names_of(2) == ["p0", "p1"]  # list now p2 p3 p0 p1
    rig.down(2)
    assert rig.names_of(2) == ["p3", "p0"]  # list p1 p3 p0 (p2 failed)
    rig.up(2)
    assert rig.names_of(4) == ["p2", "p1", "p3", "p0"]


def test_queue_length_reinstated_path_goes_to_the_tail():
    rig = Rig(["AO"] * 3)
    rig.bind(DmQueueLength())
    assert rig.names_idle(1) == ["p0"]  # list p1 p2 p0
    rig.down(1)
    rig.up(1)  # list p2 p0 p1
    assert rig.names_idle(4) == ["p2", "p0", "p1", "p2"]


# -- queue-length --------------------------------------------------------------
@pytest.mark.parametrize(
    "in_flight, expected",
    [
        ([2, 0, 0, 1], "p1"),
        ([3, 2, 2, 5], "p1"),  # strict <: the first of the least loaded
        ([1, 1, 1], "p0"),
        ([0, 0], "p0"),
        ([4, 3, 2, 1], "p3"),
        ([1, 0], "p1"),
    ],
)
def test_queue_length_fewest_in_flight_first_in_list_order(in_flight, expected):
    rig = Rig(["AO"] * len(in_flight))
    rig.bind(DmQueueLength())
    for i, c in enumerate(in_flight):
        rig.busy(i, c)
    assert rig.names_of(1) == [expected]


def test_queue_length_takes_the_first_idle_path():
    rig = Rig(["AO"] * 5)
    rig.bind(DmQueueLength())
    for i, c in enumerate([2, 0, 0, 1, 0]):
        rig.busy(i, c)
    assert rig.names_of(1) == ["p1"]  # ql_select_path stops at the first path with 0 in flight


def test_queue_length_ties_go_to_the_least_recently_selected():
    # the chosen path moves to the tail: idle paths are used in turn, not always p0
    rig = Rig(["AO"] * 3)
    rig.bind(DmQueueLength())
    assert rig.names_idle(7) == ["p0", "p1", "p2", "p0", "p1", "p2", "p0"]


def test_queue_length_balances_in_flight():
    rig = Rig(["AO"] * 3)
    rig.bind(DmQueueLength())
    assert rig.names_of(6) == ["p0", "p1", "p2", "p0", "p1", "p2"]
    rig.busy(0, 5)
    assert rig.names_of(2) == ["p1", "p2"]


# -- service-time ----------------------------------------------------------------
@pytest.mark.parametrize(
    "in_flight_bytes, throughput, size, expected, case",
    [
        ([8192, 4096, 4096], [1, 1, 1], 4096, "p1", "1: equal throughput, fewer bytes, first of equals"),
        ([4096, 4096], [1, 2], 4096, "p1", "2a: equal load, higher throughput"),
        ([0, 65536], [0, 1], 4096, "p1", "2b: a path with throughput 0 only when no other"),
        ([65536, 0], [1, 0], 4096, "p0", "2b, the other way round"),
        ([4096, 8192], [1, 3], 4096, "p1", "3: (8k+4k)/3 < (4k+4k)/1"),
        ([0, 4096], [1, 2], 4096, "p1", "4: (4k+4k)/2 == (0+4k)/1: the higher throughput"),
        ([0, 4096], [1, 2], 1024, "p0", "3: the incoming size matters: 1k/1 < 5k/2"),
        ([0, 4096], [1, 2], 8192, "p1", "3: 12k/2 < 8k/1"),
        ([0, 0, 0], [0, 0, 0], 4096, "p0", "all zero throughput: compare load"),
    ],
)
def test_service_time_st_compare_load(in_flight_bytes, throughput, size, expected, case):
    rig = Rig(["AO"] * len(in_flight_bytes))
    rig.bind(DmServiceTime(relative_throughput=throughput))
    for i, b in enumerate(in_flight_bytes):
        if b:
            rig.busy(i, 1, b)
    assert rig.names_of(1, size=size) == [expected], case


def test_service_time_default_counts_bytes_not_ios():
    rig = Rig(["AO", "AO"])
    rig.bind(DmServiceTime())
    rig.busy(0, 4, 512)  # 2 KiB in four I/Os
    rig.busy(1, 1, 65536)  # 64 KiB in one
    assert rig.names_of(1) == ["p0"]
    rig2 = Rig(["AO", "AO"])
    rig2.bind(DmQueueLength())
    rig2.busy(0, 4, 512)
    rig2.busy(1, 1, 65536)
    assert rig2.names_of(1) == ["p1"]


def test_service_time_difference_is_truncated_to_int():
    # st_compare_load returns size_t differences as int: 2 GiB + 4 KiB more in flight reads as negative
    rig = Rig(["AO", "AO"])
    rig.bind(DmServiceTime())
    rig.table.outstanding_bytes[0] = (1 << 31) + 4096
    assert rig.names_of(1) == ["p0"]  # p1 (idle) "worse" than p0
    rig2 = Rig(["AO", "AO"])
    rig2.bind(DmServiceTime())
    rig2.table.outstanding_bytes[0] = (1 << 31) - 4096
    assert rig2.names_of(1) == ["p1"]


def test_service_time_ties_go_to_the_least_recently_selected():
    rig = Rig(["AO"] * 3)
    rig.bind(DmServiceTime())
    assert rig.names_idle(5) == ["p0", "p1", "p2", "p0", "p1"]


def test_service_time_relative_throughput_is_checked():
    with pytest.raises(ValueError):
        DmServiceTime(relative_throughput=[1, 101])
    rig = Rig(["AO", "AO"])
    with pytest.raises(ValueError):
        rig.bind(DmServiceTime(relative_throughput=[1, 1, 1]))


# -- historical-service-time: arithmetic ---------------------------------------
def test_hst_weights_are_the_kernels_fixed_point_powers():
    w = hst_weights(972)
    assert len(w) == 64
    # fixed_power rounds at every squaring: 972^4 is 832, not round(1024 * (972/1024)^4) = 831
    assert w[:5] == [972, 923, 876, 832, 790]
    assert w[62] == 39 and w[63] == 0
    assert all(a > b for a, b in zip(w, w[1:]))
    assert hst_weights(0) == [0] * 64  # base 0 ignores history
    assert hst_weights(1023)[:3] == [1023, 1022, 1021]
    assert fixed_power(972, 10, 0) == HST_FIXED_1


@pytest.mark.parametrize(
    "delta_ns, bucket",
    [
        (0, 0),
        ((1 << 24) - 1, 0),  # 16.777215 ms
        (1 << 24, 1),
        (16_000_000, 0),
        (17_000_000, 1),
        (1_000_000_000, 59),  # 1 s is bucket 59, not yet the last
        ((63 << 24) - 1, 62),
        (63 << 24, 63),  # 1.057 s and more: weight 0, the sample replaces the history
        (10_000_000_000, 63),
    ],
)
def test_hst_bucket_of_a_service_time(delta_ns, bucket):
    pol = Rig(["AO"]).bind(DmHistoricalServiceTime())
    assert pol.state.weights[min(delta_ns >> 24, 63)] == hst_weights(972)[bucket]  # hst_weight's bucket


def test_hst_ewma_of_one_completion():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(DmHistoricalServiceTime())
    assert list(hst(pol)) == [1024, 1024]  # HST_FIXED_1: 1 ns
    io, p = rig.pick()
    rig.now = 0.1 * MS
    rig.complete(io, p)
    # st = 100000 ns, bucket 0 (w = 972): (1024 * 972 + 100000 * 1024 * 52 + 512) >> 10
    assert hst(pol)[0] == 5200972
    assert lastfin(pol)[0] == 100_000
    assert stale(pol)[0] == 100_000 + 2 * (5200972 >> 10)  # two valid paths in the group
    assert hst(pol)[1] == 1024


def test_hst_sample_longer_than_63_buckets_replaces_history():
    rig = Rig(["AO"])
    pol = rig.bind(DmHistoricalServiceTime())
    hst(pol)[0] = 5_000_000 * 1024
    io, p = rig.pick()
    rig.now = 1.2
    rig.complete(io, p)
    assert hst(pol)[0] == 1_200_000_000 * 1024


def test_hst_serialised_service_time():
    # two I/Os start together; the second's sample starts when the first finished
    rig = Rig(["AO"])
    pol = rig.bind(DmHistoricalServiceTime(base_weight=0))  # weight 0: hst is the last sample
    a, pa = rig.pick()
    b, pb = rig.pick()
    rig.now = 1 * MS
    rig.complete(a, pa)
    assert hst(pol)[0] == 1_000_000 * 1024
    rig.now = 1.5 * MS
    rig.complete(b, pb)
    assert hst(pol)[0] == 500_000 * 1024  # now - max(start, last_finish), not 1.5 ms
    c, pc = rig.pick()  # starts after the last finish: its own time counts
    rig.now = 1.8 * MS
    rig.complete(c, pc)
    assert hst(pol)[0] == 300_000 * 1024


def test_hst_ewma_matches_fixed_ema_over_a_sequence():
    rig = Rig(["AO"])
    pol = rig.bind(DmHistoricalServiceTime())
    expected = 1024
    w = hst_weights(972)
    last_ns = 0
    for lat_us in (100, 250, 40_000, 80, 2_000_000):
        io, p = rig.pick()
        start = rig.now
        rig.now += lat_us * 1e-6
        rig.complete(io, p)
        # the documented conversion: now_ns = int(now * 1e9), start = now_ns - int(latency * 1e9)
        now_ns = int(rig.now * 1e9)
        st = now_ns - max(now_ns - int((rig.now - start) * 1e9), last_ns)
        assert abs(st - lat_us * 1000) <= 2
        last_ns = now_ns
        expected = fixed_ema(expected, st * 1024, w[min(st >> 24, 63)])
        assert hst(pol)[0] == expected


# -- historical-service-time: hst_compare ----------------------------------------
# (hst1, out1, stale_after1, hst2, out2, stale_after2, threshold_multiplier) -> hst_compare's exact return
# value at now = 1e9 ns (< 0: path 1 better, > 0: path 2 better); stale means stale_after < now.
FRESH, STALE = 9_000_000_000, 10
COMPARE_CASES = [
    # the estimate (1 + out) x hst: a loaded fast path beats an idle slow one that is still fresh
    ((1000, 1, FRESH, 3000, 0, FRESH, 0), -1, "2 x 1000 < 1 x 3000"),
    ((1000, 3, FRESH, 3000, 0, FRESH, 0), 1, "4 x 1000 > 1 x 3000"),
    ((1000, 2, FRESH, 3000, 0, FRESH, 0), -1, "3000 == 3000: path 2 not better"),
    # an idle stale path is a probe: the sign of (!out2 * stale1) - (!out1 * stale2) (the caller reads only the sign)
    ((5000, 0, STALE, 1000, 2, FRESH, 0), -1, "path 1 idle and stale"),
    ((1000, 2, FRESH, 5000, 0, STALE, 0), 1, "path 2 idle and stale"),
    ((1000, 0, 200, 5000, 0, 100, 0), 1, "both idle: the more stale wins"),
    ((1000, 0, FRESH, 5000, 0, FRESH, 0), 0, "both idle, equally fresh: no difference"),
    ((1000, 0, FRESH, 5000, 3, STALE, 0), -1, "path 1 idle but fresh, path 2 busy: estimates"),
    # a stale winner is limited to equal usage: out1 - out2
    ((1000, 3, STALE, 9000, 1, FRESH, 0), 2, "path 1 wins on estimate but is stale"),
    ((9000, 1, FRESH, 1000, 3, STALE, 0), -2, "path 2 wins on estimate but is stale"),
    ((9000, 1, FRESH, 1000, 3, FRESH, 0), 1, "path 2 wins: 2 x 9000 > 4 x 1000"),
    # threshold_multiplier: estimates within the factor compare in-flight counts only
    ((1000, 3, FRESH, 1500, 1, FRESH, 2), 2, "1500 <= 2 x 1000: out1 - out2"),
    ((1000, 3, FRESH, 2500, 1, FRESH, 2), -1, "2500 > 2 x 1000: estimates, 4000 < 5000"),
    ((1000, 1, FRESH, 1000, 1, FRESH, 1), 0, "tm 1 and equal estimates: not over the threshold"),
    # tm 0 and equal estimates are over the threshold: equal out gives -1, so the later path in the list wins
    ((1000, 1, FRESH, 1000, 1, FRESH, 0), -1, "equal hst and out, tm 0"),
    ((0, 1, FRESH, 0, 2, FRESH, 0), -1, "hst 0 on both: not over, out1 - out2"),
    # tm x hst is a u64 product: it wraps, so a huge multiplier can make paths "different" again
    ((1 << 40, 1, FRESH, 1 << 42, 3, FRESH, 1 << 24), -1, "2^24 x 2^40 wraps to 0: over, estimates"),
    ((1 << 40, 1, FRESH, 1 << 42, 3, FRESH, (1 << 24) - 1), -2, "(2^24 - 1) x 2^40 does not wrap: out1 - out2"),
    # 1024 or more in flight: both estimates are shifted down by 10 bits first, which can flip the answer
    ((2047, 1024, FRESH, 1024, 1100, FRESH, 0), -1, "1025 x 1 < 1101 x 1 after the shift (unshifted: path 2)"),
    ((3 << 10, 1500, FRESH, 1 << 10, 1024, FRESH, 0), 1, "1501 x 3 > 1025 x 1"),
]


@pytest.mark.parametrize("state, expected, case", COMPARE_CASES, ids=[c[2] for c in COMPARE_CASES])
def test_hst_compare(state, expected, case):
    hst1, out1, stale1, hst2, out2, stale2, tm = state
    rig = Rig(["AO", "AO"])
    pol = rig.bind(DmHistoricalServiceTime(threshold_multiplier=tm))
    hst(pol)[:] = [hst1, hst2]
    stale(pol)[:] = [stale1, stale2]
    rig.busy(0, out1)
    rig.busy(1, out2)
    assert hst_compare.py_func(pol.view, pol.state, 0, 0, 1, 1_000_000_000) == expected


def test_hst_equal_busy_paths_go_to_the_later_in_the_list():
    # a kernel quirk: with tm 0, equal estimates and equal in-flight counts, hst_compare(pi, best) is -1
    rig = Rig(["AO"] * 3)
    pol = rig.bind(DmHistoricalServiceTime())
    rig.now = 1e-9  # not stale yet: stale_after is 0, so make it later than now
    stale(pol)[:] = [FRESH] * 3
    for i in range(3):
        rig.busy(i, 1)
    assert rig.names_of(1) == ["p2"]


def test_hst_learns_a_slow_path_and_prefers_the_fast_one():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(DmHistoricalServiceTime(base_weight=0))
    a, pa = rig.pick()
    b, pb = rig.pick()
    assert (pa.name, pb.name) == ("p0", "p1")
    rig.now = 9.9 * MS
    rig.complete(a, pa, 0.1 * MS)  # p0: 0.1 ms (it started at 9.8 ms)
    rig.now = 10 * MS
    rig.complete(b, pb)  # p1: 10 ms
    assert hst(pol)[1] == 10_000_000 * 1024
    assert stale(pol)[0] == 9_900_000 + 2 * 100_000
    assert stale(pol)[1] == 10_000_000 + 2 * 10_000_000
    rig.now = 10.05 * MS  # both fresh: (1 + out) x 0.1 ms stays below 10 ms
    assert rig.names_of(5) == ["p0"] * 5


def test_hst_probes_an_idle_stale_path_once():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(DmHistoricalServiceTime())
    hst(pol)[:] = [100_000 * 1024, 10_000_000 * 1024]
    stale(pol)[:] = [FRESH, 30_000_000]
    rig.busy(0, 3)
    rig.now = 20 * MS
    assert rig.names_of(1) == ["p0"]  # 4 x 0.1 ms < 1 x 10 ms
    rig.now = 31 * MS  # p1 idle and stale: a probe
    assert rig.names_of(1) == ["p1"]
    assert rig.names_of(1) == ["p0"]  # p1 now busy: back to the estimates


def test_hst_stale_busy_winner_is_limited_to_equal_usage():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(DmHistoricalServiceTime())
    hst(pol)[:] = [100_000 * 1024, 10_000_000 * 1024]
    stale(pol)[:] = [STALE, FRESH]  # p0 has not finished anything for too long
    rig.busy(0, 2)
    rig.busy(1, 1)
    rig.now = 1.0
    assert rig.names_of(1) == ["p1"]  # p0 wins on estimate, but stale: fewer in flight wins
    assert rig.names_of(2) == ["p0", "p1"]  # 2 vs 2: no difference keeps the first in the list


def test_hst_ties_at_start_go_in_list_order_then_rotate():
    rig = Rig(["AO"] * 3)
    rig.bind(DmHistoricalServiceTime())
    assert rig.names_idle(4) == ["p0", "p1", "p2", "p0"]


def test_hst_valid_count_is_the_paths_group():
    rig = Rig(["AO", "AO", "ANO"])
    pol = rig.bind(DmHistoricalServiceTime(base_weight=0))
    io, p = rig.pick()
    rig.now = 1 * MS
    rig.complete(io, p)
    assert stale(pol)[0] == 1_000_000 + 2 * 1_000_000  # two AO paths valid, not three
    rig2 = Rig(["AO", "AO", "ANO"])
    pol2 = rig2.bind(DmHistoricalServiceTime(base_weight=0, path_grouping_policy="multibus"))
    io, p = rig2.pick()
    rig2.now = 1 * MS
    rig2.complete(io, p)
    assert stale(pol2)[0] == 1_000_000 + 3 * 1_000_000


# -- path groups and failback --------------------------------------------------------
def test_group_by_prio_stays_on_the_ano_group_with_failback_manual():
    rig = Rig(["AO", "AO", "ANO", "ANO"])
    rig.bind(DmRoundRobin())  # failback manual: multipath-tools' default
    assert rig.names_of(4) == ["p0", "p1", "p0", "p1"]
    rig.down(0, 1)
    assert rig.names_of(4) == ["p2", "p3", "p2", "p3"]
    rig.up(0)
    rig.now = 1000.0
    assert rig.names_of(2) == ["p2", "p3"]  # never fails back by itself
    rig.down(2, 3)  # the current group has no path left: the next group in priority order
    assert rig.names_of(2) == ["p0", "p0"]
    rig.up(1)
    assert rig.names_of(2) == ["p1", "p0"]  # p1 reinstated at the head of round-robin's list


def test_group_by_prio_failback_immediate():
    rig = Rig(["AO", "AO", "ANO", "ANO"])
    rig.bind(DmRoundRobin(failback="immediate"))
    rig.down(0, 1)
    assert rig.names_of(2) == ["p2", "p3"]
    rig.up(1)
    assert rig.names_of(3) == ["p1", "p1", "p1"]
    assert "path_group_switch" in rig.event_names()


@pytest.mark.parametrize("failback", ["manual", "immediate", "30"])
def test_current_group_is_left_when_it_has_no_usable_path(failback):
    rig = Rig(["AO", "ANO"])
    rig.bind(DmQueueLength(failback=failback))
    assert rig.names_idle(1) == ["p0"]
    rig.alua(0, "standby")
    assert rig.names_idle(1) == ["p1"]
    rig.alua(1, "unavailable")
    assert rig.names_idle(1) == [None]
    rig.alua(1, "ANO")
    assert rig.names_idle(1) == ["p1"]


def test_failback_after_n_seconds():
    rig = Rig(["AO", "AO", "ANO"])
    rig.bind(DmRoundRobin(failback="30"))
    rig.down(0, 1)
    assert rig.names_of(1) == ["p2"]
    rig.now = 100.0
    rig.up(0)
    for t in (100.0, 110.0, 129.9):
        rig.now = t
        assert rig.names_of(1) == ["p2"], t
    rig.now = 130.0
    assert rig.names_of(2) == ["p0", "p0"]


def test_failback_countdown_restarts_on_a_new_path_up_not_on_a_prio_change():
    rig = Rig(["AO", "AO", "standby", "ANO"])
    rig.bind(DmRoundRobin(failback="30"))
    rig.down(0, 1)
    assert rig.names_of(1) == ["p3"]
    rig.now = 100.0
    rig.up(0)  # deadline 130
    rig.now = 110.0
    rig.alua(2, "AO")  # a priority change of a path that was up: the countdown runs on
    rig.now = 129.0
    assert rig.names_of(1) == ["p3"]
    rig.now = 130.0
    assert rig.names_of(1)[0] in ("p0", "p2")
    # again, but this time another path comes up at 120: deadline 150
    rig2 = Rig(["AO", "AO", "ANO"])
    rig2.bind(DmRoundRobin(failback="30"))
    rig2.down(0, 1)
    rig2.names_of(1)
    rig2.now = 100.0
    rig2.up(0)
    rig2.now = 120.0
    rig2.up(1)
    rig2.now = 140.0
    assert rig2.names_of(1) == ["p2"]
    rig2.now = 150.0
    assert rig2.names_of(1)[0] in ("p0", "p1")


def test_failback_countdown_is_dropped_when_the_better_group_goes_away():
    rig = Rig(["AO", "ANO"])
    rig.bind(DmRoundRobin(failback="10"))
    rig.down(0)
    assert rig.names_of(1) == ["p1"]
    rig.now = 5.0
    rig.up(0)
    rig.now = 8.0
    rig.down(0)
    assert rig.names_of(1) == ["p1"]
    rig.now = 20.0
    rig.up(0)  # a new countdown from 20
    rig.now = 29.0
    assert rig.names_of(1) == ["p1"]
    rig.now = 30.0
    assert rig.names_of(1) == ["p0"]


def test_alua_change_moves_a_path_between_groups():
    rig = Rig(["AO", "AO", "ANO"])
    rig.bind(DmRoundRobin())
    assert rig.names_of(2) == ["p0", "p1"]
    rig.alua(1, "ANO")  # p1 leaves the AO group
    assert rig.names_of(2) == ["p0", "p0"]
    rig.alua(0, "ANO")  # the AO group is empty: the ANO group (p2, p0 reinstated at the head, p1)
    assert set(rig.names_of(3)) == {"p0", "p1", "p2"}


def test_failover_grouping_fails_back_only_when_asked():
    for failback, expected in (("manual", "p1"), ("immediate", "p0")):
        rig = Rig(["AO", "AO", "AO"])
        rig.bind(DmServiceTime(path_grouping_policy="failover", failback=failback))
        assert rig.names_of(2) == ["p0", "p0"]
        rig.down(0)
        assert rig.names_of(2) == ["p1", "p1"]
        rig.up(0)
        assert rig.names_of(2) == [expected, expected], failback


def test_multibus_uses_ano_paths_and_group_by_prio_does_not():
    for grouping, used in (("multibus", {"p0", "p1", "p2", "p3"}), ("group_by_prio", {"p0", "p2"})):
        rig = Rig(["AO", "ANO", "AO", "ANO"])
        rig.bind(DmQueueLength(path_grouping_policy=grouping))
        assert set(rig.names_of(8)) == used


# -- specs, config strings --------------------------------------------------------
@pytest.mark.parametrize(
    "spec, cls, attrs",
    [
        ("dm:round-robin", DmRoundRobin, {"path_grouping_policy": "group_by_prio", "failback": "manual"}),
        ("dm:rr:failback=immediate", DmRoundRobin, {"failback": "immediate"}),
        ("dm:ql:path_grouping_policy=multibus", DmQueueLength, {"path_grouping_policy": "multibus"}),
        ("dm:service-time 0", DmServiceTime, {}),
        ("dm:st:failback=15", DmServiceTime, {"failback": "15"}),
        ("dm:historical-service-time:base_weight=972", DmHistoricalServiceTime, {"base_weight": 972, "threshold_multiplier": 0}),
        ("dm:hst:base_weight=900,threshold_multiplier=3", DmHistoricalServiceTime, {"base_weight": 900, "threshold_multiplier": 3}),
    ],
)
def test_specs_build_the_selector(spec, cls, attrs):
    pol = build_policy(spec)
    assert type(pol) is cls
    for k, v in attrs.items():
        assert pol.params[k] == v


@pytest.mark.parametrize(
    "spec, text",
    [
        ("dm:service-time", "policy='service-time 0' prio=50 status=active [2 groups, group_by_prio, failback=manual]"),
        ("dm:hst:base_weight=900", "policy='historical-service-time 2 900 0' prio=50 status=active"),
        ("dm:rr:path_grouping_policy=multibus", "policy='round-robin 0' prio=30 status=active [1 group, multibus"),
    ],
)
def test_config_string_is_the_multipath_ll_group_line(spec, text):
    rig = Rig(["AO", "ANO"])
    pol = rig.bind(build_policy(spec))
    rig.names_of(1)
    assert pol.config_string().startswith(text)
    assert "\n" not in pol.config_string()
