"""hdlm:exlio, hdlm:exrr, hdlm:exlbk: Hitachi Dynamic Link Manager's extended load-balancing algorithms.

Each case names the User Guide's sentence it checks ("Load Balancing
Algorithms"); docs/policies.md cites the manual. pathsel's I/Os carry no
block address: an I/O is sequential with the previous one when both come
from the same sequential job (``IORequest.seq_job``).
"""

from __future__ import annotations

import json

import pytest

import pathsel
from pathsel.policies import HdlmExtendedLeastBlocks, HdlmExtendedLeastIos, HdlmExtendedRoundRobin, IORequest

from .policy_rig import Rig

SEQ, RND = 0, -1  # job 0 is sequential; -1: a random job's I/O


def issue(rig, seq_job, size=4096, keep=True):
    """One I/O of a sequential job (``seq_job`` >= 0) or a random one; left in flight unless ``keep`` is False."""
    rig.seq += 1
    io = IORequest(rig.seq, max(seq_job, 1), "read", size, rig.now, seq_job=seq_job)
    p = rig.policy.select(io)
    if p is None:
        return None
    rig.table.start(p.index, size)
    if not keep:
        rig.complete(io, p, 0.0)
    return p.name


# "If the I/O is sequential with the previous I/O, the path to which the previous I/O was distributed will be used."
@pytest.mark.parametrize("cls", [HdlmExtendedLeastIos, HdlmExtendedRoundRobin, HdlmExtendedLeastBlocks])
def test_a_sequential_run_stays_on_the_previous_path(cls):
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(cls())
    assert [issue(rig, SEQ) for _ in range(5)] == ["p0"] * 5  # in flight on p0, yet they stay


# "However, if a specified number of I/Os has been issued to a path, processing switches to the next path."
def test_a_run_switches_after_seq_ios():
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(HdlmExtendedRoundRobin(seq_ios=3))
    assert [issue(rig, SEQ) for _ in range(7)] == ["p0", "p0", "p0", "p1", "p1", "p1", "p2"]


def test_exlio_switch_goes_to_the_least_loaded_other_path():
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(HdlmExtendedLeastIos(seq_ios=2))
    rig.busy(1, 5)
    assert [issue(rig, SEQ) for _ in range(4)] == ["p0", "p0", "p2", "p2"]


# "If the I/O is not sequential with the previous I/O, these algorithms select the path ... each time"
def test_exlio_random_ios_go_to_the_fewest_ios_in_flight():
    # Extended Least I/Os: "The path that has the least number of I/Os being processed is selected"
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(HdlmExtendedLeastIos())
    assert [issue(rig, RND) for _ in range(4)] == ["p0", "p1", "p2", "p0"]


def test_exrr_random_ios_go_round_robin():
    # Extended Round Robin: "The paths are simply selected in order from among all the connected paths"
    rig = Rig(["AO", "AO", "AO"])
    rig.bind(HdlmExtendedRoundRobin())
    assert [issue(rig, RND, keep=False) for _ in range(4)] == ["p0", "p1", "p2", "p0"]


def test_exlbk_counts_blocks_not_ios():
    # Extended Least Blocks: "the path that has the least number of I/O blocks being processed"
    rig = Rig(["AO", "AO"])
    rig.bind(HdlmExtendedLeastBlocks())
    rig.busy(0, 1, size=4096)
    rig.busy(1, 2, size=512)  # more I/Os, fewer blocks
    assert issue(rig, RND) == "p1"


def test_a_random_io_between_breaks_the_run():
    rig = Rig(["AO", "AO"])
    rig.bind(HdlmExtendedLeastIos())
    got = [issue(rig, SEQ), issue(rig, RND), issue(rig, SEQ)]
    assert got == ["p0", "p1", "p0"]  # the third is not sequential with the random one: least I/Os (tie: p0)


def test_another_sequential_job_is_not_sequential_with_this_one():
    rig = Rig(["AO", "AO"])
    rig.bind(HdlmExtendedLeastIos())
    assert [issue(rig, 0), issue(rig, 1), issue(rig, 1)] == ["p0", "p1", "p1"]


# "starting with owner paths, and then non-owner paths": owner = ALUA AO (assumed)
def test_owner_paths_before_non_owner_paths():
    rig = Rig(["ANO", "AO", "AO"])
    rig.bind(HdlmExtendedLeastIos())
    assert [issue(rig, RND) for _ in range(3)] == ["p1", "p2", "p1"]
    rig.down(1, 2)
    assert issue(rig, RND) == "p0"  # no owner path left: the non-owner one


def test_a_run_leaves_a_path_that_fails():
    rig = Rig(["AO", "AO"])
    rig.bind(HdlmExtendedLeastIos())
    assert [issue(rig, SEQ, keep=False) for _ in range(2)] == ["p0", "p0"]
    rig.down(0)
    assert issue(rig, SEQ) == "p1"
    rig.up(0)
    assert issue(rig, SEQ) == "p1"  # the run goes on where it is


def test_no_usable_path():
    rig = Rig(["standby", "unavailable"])
    rig.bind(HdlmExtendedRoundRobin())
    assert issue(rig, SEQ) is None


# -- both engines, and the sim ---------------------------------------------------------
def _json(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


@pytest.mark.parametrize("spec", ["hdlm:exlio", "hdlm:exrr:seq_ios=7", "hdlm:exlbk"])
def test_engines_agree(spec):
    sc = pathsel.load_scenario("sims/hdlm-sequential.toml")
    fast = pathsel.simulate(sc, policies=[spec], engine="fast", duration=0.05, trace=True)
    ref = pathsel.simulate(sc, policies=[spec], engine="reference", duration=0.05, trace=True)
    assert _json(fast) == _json(ref)
    assert fast.runs[0].metrics.trace == ref.runs[0].metrics.trace


def _same_path_share(run, job: int) -> float:
    """Of the job's I/Os in issue order, the share that went down the same path as the job's previous I/O."""
    paths = [x[6] for x in sorted(run.metrics.trace) if x[1] == job]
    return sum(a == b for a, b in zip(paths, paths[1:])) / (len(paths) - 1)


def test_sequential_runs_stay_on_one_path_in_the_sim():
    sc = pathsel.load_scenario("sims/hdlm-sequential.toml")
    res = pathsel.simulate(sc, policies=["hdlm:exlio", "mpio:lqd"], engine="fast", duration=0.2, trace=True)
    exlio, lqd = res.runs
    assert _same_path_share(exlio, 0) > 0.99  # the backup stream keeps its path
    assert _same_path_share(lqd, 0) < 0.6  # plain least I/Os alternates


@pytest.mark.parametrize(
    ("text", "seq_ios", "opts"),
    [("hdlm", 100, {}), ("HDLM", 100, {}), ("hdlm:seq_ios=5", 5, {}), ("hdlm:seq_ios=5,label=x", 5, {"label": "x"})],
)
def test_bare_hdlm_is_hdlms_default_exlio(text, seq_ios, opts):
    from pathsel.policies.spec import parse_spec

    spec, run_opts = parse_spec(text)
    assert spec.name == "hdlm:exlio" and dict(spec.params)["seq_ios"] == seq_ios and run_opts == opts


def test_the_hdlm_alias_leaves_other_names_and_families_as_they_were():
    from pathsel.policies.spec import SpecError, parse_spec

    assert parse_spec("hdlm:exrr")[0].name == "hdlm:exrr"
    with pytest.raises(SpecError, match="unknown policy 'hdlm:bogus'"):
        parse_spec("hdlm:bogus")
    for family in ("dm", "nvme"):
        with pytest.raises(SpecError, match=f"{family}: needs a policy name"):
            parse_spec(family)
