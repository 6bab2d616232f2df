"""`oracle`, the league's clairvoyant bar: what it reads (the truth), what it picks, both engines alike, never shipped."""

from __future__ import annotations

import numpy as np
import pytest

import pathsel
from pathsel.engine.truth import truth_static
from pathsel.model import compile_model
from pathsel.policies import Oracle
from pathsel.policies.framework.base import Truth
from pathsel.policies.oracle import NOT_SHIPPED, T_COLS, T_LAT, T_SVC_R, T_SVC_W
from pathsel.studies.league import contenders, league, standings

from .conftest import ROOT
from .policy_rig import Rig
from .test_engines import SCENARIOS, _agree, _compressed, scenario

LIB = ROOT / "sims" / "library"


def _rig_with_truth(alua, controllers=None):
    """A hand-driven host whose table carries a truth the test sets (every wire up, nothing queued)."""
    rig = Rig(alua, controllers=controllers)
    n = len(alua)
    nc = max(controllers) + 1 if controllers else n
    arrays = dict(
        t_up=np.ones(nc, dtype=np.int64),
        t_extra=np.zeros(nc, dtype=np.float64),
        t_loss=np.zeros(nc, dtype=np.float64),
        t_loss_op=np.zeros((nc, 2), dtype=np.float64),
        t_wfree=np.zeros((nc, 2), dtype=np.float64),
        t_q=np.zeros((1, 8), dtype=np.int64),
        t_path=np.zeros((n, T_COLS), dtype=np.float64),
        t_row=np.full((n, 2), -1, dtype=np.int64),
        t_links=np.full((nc, 1), -1, dtype=np.int64),
    )
    arrays["t_path"][:, T_LAT] = 50e-6
    arrays["t_path"][:, T_SVC_R] = arrays["t_path"][:, T_SVC_W] = 200e-6
    rig.table.truth = Truth(arrays, lambda: None, NOT_SHIPPED)
    rig.bind(Oracle())
    return rig, arrays


def test_oracle_never_picks_a_path_whose_death_the_host_has_not_noticed():
    rig, t = _rig_with_truth(["AO"] * 3)
    t["t_up"][0] = 0  # the wire of p0 is dark; the host still believes it up
    assert rig.table.up[0] == 1
    assert set(rig.names_of(30)) <= {"p1", "p2"}
    t["t_up"][1] = t["t_up"][2] = 0  # every usable path really down: the I/O is lost whatever it picks
    assert rig.names_of(1) == ["p0"]


def test_oracle_reads_latency_faults_and_queued_bytes_the_host_cannot_see():
    rig, t = _rig_with_truth(["AO"] * 2)
    t["t_extra"][0] = 1e-3  # a latency fault on p0's nexus
    assert rig.names_idle(5) == ["p1"] * 5
    t["t_extra"][0] = 0.0
    t["t_path"][:, 5] = 1e9  # T_BW: both wires serialise at 1 GB/s
    rig.now = 1.0
    t["t_wfree"][1, 0] = 1.01  # p1's wire towards the array is busy for 10 ms more (the rig's I/Os are writes)
    assert rig.names_idle(3) == ["p0"] * 3


def test_oracle_keeps_to_the_alua_working_set_while_one_of_it_is_really_up():
    rig, t = _rig_with_truth(["ANO", "AO", "AO"])
    t["t_extra"][1] = t["t_extra"][2] = 5e-3
    assert set(rig.names_idle(4)) <= {"p1", "p2"}
    t["t_up"][1] = t["t_up"][2] = 0  # the AO paths really down: a usable ANO path really up beats a lost I/O
    assert rig.names_idle(2) == ["p0", "p0"]


def test_oracle_with_every_usable_path_really_down_takes_the_first_ao_path():
    # the host still believes all three up; the clairvoyant bound knows none is: the I/O is lost whatever it picks,
    # and it stays in the working set (docstring and docs/model.md say the same)
    rig, t = _rig_with_truth(["ANO", "AO", "AO"])
    t["t_up"][:] = 0
    assert rig.names_idle(2) == ["p1", "p1"]
    t["t_up"][0] = 1  # the ANO path really up, every AO path really down: ANO is the honest choice
    assert rig.names_idle(2) == ["p0", "p0"]


def test_truth_static_takes_means_rows_and_links_from_the_model():
    sc = pathsel.load_scenario(LIB / "gray-slow-path-10x.toml")
    model = compile_model(sc, sc.runs[0])
    t = truth_static(model)
    assert t["t_path"].shape == (len(model.paths), T_COLS)
    assert (t["t_path"][:, T_LAT] > 0).all() and (t["t_row"][:, 0] >= 0).all()


@pytest.mark.parametrize(
    "name, duration",
    [
        ("gray-slow-path-10x", "60ms"),
        ("failover-path-down-esxi", "60ms"),
        ("metro-uniform-10km", "40ms"),
        ("gray-lossy-path-1000ppm", "40ms"),
        ("scale-8-esxi-hosts", "20ms"),
        ("gray-overloaded-target-port", "40ms"),
        ("fabric-fewer-links", "40ms"),
        ("gray-slow-drain-isl", "40ms"),
    ],
)
def test_engines_agree_on_oracle(name, duration):
    _agree(LIB / f"{name}.toml", ["oracle"], trace=True, duration=duration)


def test_engines_agree_on_oracle_across_faults():
    """The path-down, latency and array-down faults inside the window, the clock sped up for the reference engine."""
    for name, factor in (("failover-path-down-esxi.toml", 20), ("failover-all-paths-down-apd.toml", 30)):
        _agree(_compressed(LIB / name, factor), ["oracle"], trace=True)


def test_the_apd_scenario_fails_ios_in_the_league_and_not_at_the_real_timeout():
    lg = league([LIB / "failover-all-paths-down-apd.toml"], policies=["oracle", "rr"], replications=1, executor="serial")
    assert (lg.table.failed > 0).all()
    real = league([LIB / "failover-all-paths-down-apd.toml"], policies=["oracle", "rr"], replications=1, executor="serial", timeout_scale=None)
    assert (real.table.failed == 0).all()


def test_oracle_is_the_bar_not_a_contender():
    assert "oracle" in contenders() and contenders()[-1] == "guard"
    lg = league(
        [LIB / "gray-slow-path-10x.toml", LIB / "failover-path-down-esxi.toml"],
        policies=["rr", "oracle", "guard"],
        replications=1,
        duration="300ms",
        executor="serial",
    )
    st = lg.standings
    assert st.policy[0] == "oracle" and st["rank"][0] == 0 and list(st["rank"][1:]) == [1, 2]
    # regret is against the best shipped policy; the gap to the oracle is beside it
    shipped = lg.scores[lg.scores.policy != "oracle"]
    assert (shipped.groupby("scenario").regret_iops.min().abs() < 1e-12).all()
    assert np.isfinite(st.worst_iops_gap).all() and (st.set_index("policy").loc["oracle", ["worst_iops_gap", "worst_p99_gap"]] == 0).all()
    # rr feeds the 10x slower path: far from the bar
    assert st.set_index("policy").loc["rr", "worst_p99_gap"] > 1.0
    text = lg.text()
    assert " -  oracle" in text and "oracle gap IOPS" in text and "timeouts: each host's io_timeout" in text
    assert "worst gap to oracle" in lg.markdown()
    assert not any(v.startswith("oracle:") or "best shipped policy's, oracle" in v for v in lg.verdict())
    scores, st2 = standings(lg.table)  # a saved table ranks the same
    assert list(st2.policy) == list(st.policy)


def test_league_timeout_scale_is_checked():
    from pathsel.errors import ScenarioError

    for bad in (0, -1, 2, float("nan"), float("inf"), True, "x"):
        with pytest.raises(ScenarioError, match="timeout_scale"):
            league([LIB / "gray-slow-path-10x.toml"], policies=["rr", "oracle"], timeout_scale=bad)


def test_oracle_is_never_recommended_nor_emitted():
    from pathsel.errors import ScenarioError
    from pathsel.scenario.systems import emit
    from pathsel.studies.recommend import recommend

    lg = league([LIB / "gray-slow-path-10x.toml"], policies=["rr", "oracle", "latency"], replications=1, duration="200ms", executor="serial")
    rec = recommend(lg.table)
    assert "oracle" not in rec.policies and set(rec.policies) == {"rr", "latency"}
    with pytest.raises(ScenarioError, match="not shippable"):
        recommend(lg.table, policies=["oracle"])
    for kind in ("esxcli", "multipath.conf", "nvme-udev", "powershell", "satp-rule"):
        with pytest.raises(ScenarioError, match="clairvoyant"):
            emit("oracle", kind)


def test_the_command_line_refuses_to_emit_oracle(capsys):
    from pathsel.cli import main

    assert main(["simulate", str(LIB / "gray-slow-path-10x.toml"), "--policy", "oracle", "--emit", "esxcli"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not shippable" in err


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_engines_agree_on_oracle_over_the_engine_table(name):
    """Every scenario of tests/test_engines.py's table (faults, APD, loss, QUEUE FULL, shared ports, crossings):
    the same JSON and every I/O's trace on both engines."""
    _agree(scenario(name), ["oracle"], trace=True)


def test_in_a_run_oracle_sends_nothing_down_a_dead_path_before_the_host_notices():
    """failover-path-down-esxi: vmhba1:C0:T0:L1 goes dark at 500 ms, the host notices at 700 ms. Every I/O issued in
    between completes at its first attempt on another path; rr, which trusts the host, loses some there."""
    dead, down, noticed = "vmhba1:C0:T0:L1", 0.5, 0.7
    res = pathsel.simulate(LIB / "failover-path-down-esxi.toml", policies=["oracle", "rr:iops=1"], engine="fast", trace=True)
    oracle, rr = (run.metrics.trace for run in res.runs)
    between = [t for t in oracle if down + 1e-9 < t[4] < noticed]
    assert len(between) > 100
    assert all(t[6] != dead and t[7] == 1 for t in between)
    assert any(t[7] > 1 for t in rr if down + 1e-9 < t[4] < noticed)
