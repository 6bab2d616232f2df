"""nvme:adaptive, the NVMe "adaptive" iopolicy of Nilay Shroff's RFC series (v5, 2025-11; not merged).

Each case names the sentence of the series (cover letter, commit message or
code comment in drivers/nvme/host/multipath.c) it checks; docs/policies.md
cites the series. A differential run of both engines closes the file.
"""

from __future__ import annotations

import json

import pytest

import pathsel
from pathsel.policies import NvmeAdaptive

from .policy_rig import Rig

US = 1e-6


def weights(pol, n, g=1):
    """Group g: node 0, op 1 (the rig's I/Os are writes)."""
    return [int(pol.state.weight[0][g][k]) for k in range(n)]


def sample(rig, k, latency, at=None):
    """One I/O on path k completing after ``latency`` seconds (at time ``at``)."""
    if at is not None:
        rig.now = at
    io = rig.io()
    rig.policy.select(io)  # the slot now carries the I/O's op and node, as in an engine
    rig.table.start(k, io.size)
    rig.complete(io, rig.views[k], latency)


# "ewma = (old * ((1 << ewma_shift) - 1) + new) >> ewma_shift" (v4 4/6)
@pytest.mark.parametrize(
    "old, new, shift, expected",
    [
        (800, 1600, 3, 900),  # "The default value of 3 assigns ~87.5% weight to the existing EWMA value"
        (800, 1600, 2, 1000),  # "adaptive_ewma_shift = 2 => 75% old, 25% new"
        (800, 1600, 1, 1200),  # "= 1 => 50% old, 50% new"
        (800, 1600, 0, 1600),  # "= 0 => 0% old, 100% new"
    ],
)
def test_ewma_update(old, new, shift, expected):
    rig = Rig(["AO", "AO"])
    pol = rig.bind(NvmeAdaptive(ewma_shift=shift, weight_timeout=0.5))
    sample(rig, 0, old * US, at=1.0)  # the first window: slat = its mean
    sample(rig, 0, new * US, at=2.0)  # the next: folded in
    assert int(pol.state.slat[0][1][0]) == expected * 1000


def test_a_path_without_weight_is_used_at_once_and_kept():
    # "the path is newly added, we don't know its weight ... we ... forward I/O to it": weight 0 -> found = ns,
    # and adp_path stays on it
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(NvmeAdaptive())
    assert rig.names_of(3) == ["p0", "p0", "p0"]


def test_weights_are_64_times_the_inverse_latency_share_at_least_1():
    # "path_A_score = NSEC_PER_SEC / path_A_ewma_latency ... weights are normalized to a 0-64 scale";
    # "Ensure the path weight never drops below 1"
    rig = Rig(["AO", "AO", "AO"])
    pol = rig.bind(NvmeAdaptive())
    sample(rig, 0, 100 * US, at=1.0)
    assert weights(pol, 3) == [64, 1, 1]  # p1, p2 unsampled: score 0, floored to 1
    sample(rig, 1, 300 * US, at=1.1)
    # scores 10,000 and 3,333: 64 * 10000 // 13333 = 48, 64 * 3333 // 13333 = 15
    assert weights(pol, 3) == [48, 15, 1]


def test_credits_one_per_io_refilled_to_the_weight_then_the_next_path():
    # "Path credits are refilled based on this weight, with one credit consumed per I/O"; "Refill credit from
    # path weight and move to next path. The refilled credit of the current path will be used next when all
    # remaining paths exhaust its credits."
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(NvmeAdaptive())
    sample(rig, 0, 100 * US, at=1.0)  # weights 64, 1, 1; every credit 0
    got = rig.names_of(2 * 66)
    assert got == (["p0"] * 64 + ["p1", "p2"]) * 2


def test_the_window_holds_the_ewma_until_the_timeout_then_folds_the_batch_mean():
    # "Every ~15 seconds, a simple average latency of per-CPU batched samples are computed and fed into an EWMA"
    rig = Rig(["AO", "AO"])
    pol = rig.bind(NvmeAdaptive())
    sample(rig, 0, 100 * US, at=1.0)  # the first window: slat = the sample
    assert int(pol.state.slat[0][1][0]) == 100_000
    sample(rig, 0, 300 * US, at=2.0)
    sample(rig, 0, 500 * US, at=10.0)
    assert int(pol.state.slat[0][1][0]) == 100_000  # still inside the 15 s window
    sample(rig, 0, 700 * US, at=16.0)  # past it: mean of 300, 500, 700 = 500 us
    assert int(pol.state.slat[0][1][0]) == (100_000 * 7 + 500_000) >> 3


def test_weight_timeout_parameter():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(NvmeAdaptive(weight_timeout=0.5))
    sample(rig, 0, 100 * US, at=1.0)
    sample(rig, 0, 900 * US, at=1.6)
    assert int(pol.state.slat[0][1][0]) == (100_000 * 7 + 900_000) >> 3


@pytest.mark.parametrize("latency", [1.5, 0.0])
def test_samples_over_one_second_or_zero_are_ignored(latency):
    # "If latency > ~1s then ignore this sample"; "if (!latency) return"
    rig = Rig(["AO", "AO"])
    pol = rig.bind(NvmeAdaptive())
    sample(rig, 0, latency, at=1.0)
    assert int(pol.state.slat[0][1][0]) == 0 and weights(pol, 2) == [0, 0]


def test_a_single_path_takes_no_samples():
    # "if (list_is_singular(&head->list)) return;"
    rig = Rig(["AO"])
    pol = rig.bind(NvmeAdaptive())
    sample(rig, 0, 100 * US, at=1.0)
    assert int(pol.state.slat[0][1][0]) == 0
    assert rig.names_of(2) == ["p0", "p0"]


def test_optimized_and_non_optimized_are_not_told_apart():
    # "we don't distinguish between ANA optimized and non-optimized states"
    rig = Rig(["ANO", "AO"])
    rig.bind(NvmeAdaptive())
    assert rig.names_of(2) == ["p0", "p0"]


@pytest.mark.parametrize("ana", [["standby", "AO"], ["unavailable", "AO"]])
def test_paths_not_ana_live_are_skipped(ana):
    # "while (nvme_path_is_disabled(ns) || !nvme_state_is_live(ns->ana_state))"
    rig = Rig(ana)
    rig.bind(NvmeAdaptive())
    assert rig.names_of(2) == ["p1", "p1"]


def test_no_usable_path():
    rig = Rig(["standby", "unavailable"])
    rig.bind(NvmeAdaptive())
    assert rig.names_of(1) == [None]


def test_a_path_that_goes_down_loses_its_statistics():
    # nvme_mpath_clear_current_path -> nvme_mpath_disable_adaptive_path_policy -> nvme_mpath_reset_adaptive_path_stat
    rig = Rig(["AO", "AO"])
    pol = rig.bind(NvmeAdaptive())
    sample(rig, 0, 100 * US, at=1.0)
    sample(rig, 1, 100 * US, at=1.0)
    assert weights(pol, 2) == [32, 32]
    rig.down(1)
    assert weights(pol, 2) == [32, 0] and int(pol.state.slat[0][1][1]) == 0
    assert rig.names_of(3) == ["p0", "p0", "p0"]  # p1 is disabled: skipped
    rig.up(1)
    sample(rig, 1, 300 * US, at=2.0)  # sampled again, its first window at once
    assert weights(pol, 2) == [48, 15]


def test_each_node_keeps_its_own_cursor_and_credits():
    rig = Rig(["AO", "AO"], nodes=[0, 1])
    pol = rig.bind(NvmeAdaptive())
    sample(rig, 0, 100 * US, at=1.0)
    sample(rig, 1, 100 * US, at=1.0)  # node 0's weights: 32, 32
    rig.node = 1
    assert rig.names_of(2) == ["p0", "p0"]  # node 1 has no weights yet: bootstrap on the first path
    assert weights(pol, 2, g=3) == [0, 0]


# -- both engines ------------------------------------------------------------------
def _json(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


@pytest.mark.parametrize("spec", ["nvme:adaptive", "nvme:adaptive:weight_timeout=0.01,ewma_shift=1"])
def test_engines_agree(spec):
    sc = pathsel.load_scenario("sims/nvme-adaptive.toml")
    fast = pathsel.simulate(sc, policies=[spec], engine="fast", duration=0.03, trace=True)
    ref = pathsel.simulate(sc, policies=[spec], engine="reference", duration=0.03, trace=True)
    assert _json(fast) == _json(ref)
    assert fast.runs[0].metrics.trace == ref.runs[0].metrics.trace


def test_engines_agree_through_a_path_failure():
    sc = pathsel.load_scenario("sims/path-failure-recovery.toml")
    fast = pathsel.simulate(sc, policies=["nvme:adaptive:weight_timeout=0.05"], engine="fast", duration=0.2)
    ref = pathsel.simulate(sc, policies=["nvme:adaptive:weight_timeout=0.05"], engine="reference", duration=0.2)
    assert _json(fast) == _json(ref)
