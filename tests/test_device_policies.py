"""A policy per device (issue 32): a volume names its own policy, so one run is a host as it is.

Each device's path choices follow its own policy (one FIXED, one round robin
``iops=1`` on the same four paths), on both engines, the same JSON and trace;
a [[policies]] entry's ``volumes`` assigns policies per run (entry.volumes >
the volume's own > the entry's spec); ``--policy`` runs on every device;
bad input gets one located line; a sweep over two assignments runs.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pathsel
from pathsel.cli import main
from pathsel.errors import ScenarioError

from .test_properties import POLICY_SPECS, SETTINGS

BASE = """
name = "per-device"
seed = 7
duration = "60ms"

[[arrays]]
name = "a"
concurrency = 64
service_time = {{ read = {{ dist = "exponential", mean = "120us" }}, write = "100us" }}

[[hosts]]
name = "esx"

[[volumes]]
name = "lun0"
lun = 0
{policy0}

[[volumes]]
name = "lun1"
lun = 1
{policy1}

[[paths]]
name = "vmhba1:C0:T{{i}}:L{{lun}}"
count = 4
array = "a"
one_way_latency = {{ dist = "uniform", low = "40us", high = "60us" }}

[[workloads]]
name = "vm0"
volume = "lun0"
rw = "randrw"
iodepth = 8

[[workloads]]
name = "vm1"
volume = "lun1"
iodepth = 8
{policies}
"""


def scenario(policy0: str = 'policy = "fixed"', policy1: str = 'policy = { spec = "rr", iops = 1 }', policies: str = "") -> str:
    return BASE.format(policy0=policy0, policy1=policy1, policies=policies)


def _json(result: pathsel.Result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


def _shares(run, volume: str) -> list[float]:
    """The shares of the device's I/Os on each of its paths, in path order."""
    rows = [p for p in run.paths() if p["name"].endswith(f":L{volume[-1]}")]
    total = sum(p["ios"] for p in rows)
    return [p["ios"] / total for p in rows]


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_each_device_follows_its_own_policy(engine):
    res = pathsel.simulate(pathsel.loads_scenario(scenario()), engine=engine)
    (run,) = res.runs
    assert run.label == "per device"  # no [[policies]]: one run, the host as configured
    assert run.policy == "lun0=fixed; lun1=rr:iops=1"
    fixed, rr = _shares(run, "lun0"), _shares(run, "lun1")
    assert fixed[0] == 1.0 and fixed[1:] == [0.0, 0.0, 0.0]  # FIXED: its preferred (first) path only
    assert all(abs(s - 0.25) < 0.01 for s in rr)  # round robin, a path per I/O: a quarter each
    config = run.metrics.config_strings
    assert config["esx/lun0"].startswith("{preferred=vmhba1:C0:T0:L0")
    assert config["esx/lun1"].startswith("{policy=iops,iops=1,")
    devices = {d["device"]: d for d in run.to_dict()["devices"]}
    assert devices["esx/lun0"]["spec"] == "fixed" and devices["esx/lun1"]["spec"] == "rr:iops=1"
    assert list(res.devices().spec) == ["fixed", "rr:iops=1"]
    assert "rr:iops=1" in res.breakdown_table("device")


def test_the_engines_agree_per_device():
    """Two policies with different hooks (latency RR: start, complete; p2c-ewma: its own random stream) on two
    devices, a third entry with MRU: the whole JSON and every I/O's trace, fast and reference."""
    entries = """
[[policies]]
spec = "latency"
volumes = { lun1 = "p2c-ewma" }

[[policies]]
volumes = { lun0 = "mru", lun1 = "dm:service-time" }
"""
    sc = pathsel.loads_scenario(scenario(policy0="", policy1="", policies=entries))
    fast = pathsel.simulate(sc, engine="fast", trace=True)
    ref = pathsel.simulate(sc, engine="reference", trace=True)
    assert _json(fast) == _json(ref)
    for f, r in zip(fast.runs, ref.runs):
        assert f.metrics.trace == r.metrics.trace
    assert [r.label for r in fast.runs] == ["latency; lun1=p2c-ewma", "lun0=mru; lun1=dm:service-time"]
    assert fast.runs[0].policy == "lun0=latency; lun1=p2c-ewma"


def test_precedence_entry_volumes_then_the_volume_then_the_spec():
    entries = """
[[policies]]
spec = "mru"

[[policies]]
spec = "mru"
volumes = { lun1 = "rr:iops=5" }

[[policies]]
volumes = { lun0 = "rr:iops=5" }
"""
    sc = pathsel.loads_scenario(scenario(policy0="", policy1='policy = "latency"', policies=entries))
    first, second, third = sc.runs
    assert first.label == "mru" and first.assignment == "lun0=mru; lun1=latency"  # the volume's own beats spec
    assert second.label == "mru; lun1=rr:iops=5" and second.assignment == "lun0=mru; lun1=rr:iops=5"  # entry.volumes first
    assert third.label == "lun0=rr:iops=5" and third.assignment == "lun0=rr:iops=5; lun1=latency"


def test_a_file_without_per_device_policies_runs_as_before():
    sc = pathsel.loads_scenario(scenario(policy0="", policy1="", policies='[[policies]]\nspec = "rr:iops=1"\n'))
    (run,) = sc.runs
    assert run.devices == () and run.assignment == "" and run.label == "rr:iops=1"
    res = pathsel.simulate(sc, engine="reference", duration=0.01)
    assert all("spec" not in d for d in res.runs[0].to_dict()["devices"])
    assert "spec" not in res.devices().columns


def test_the_command_line_policy_runs_on_every_device():
    """--policy (simulate(policies=...)) replaces the file's runs, the volumes' own policies too."""
    sc = pathsel.loads_scenario(scenario()).with_policies(["rr:iops=1"])
    (run,) = sc.runs
    assert run.devices == () and run.label == "rr:iops=1"
    res = pathsel.simulate(sc, engine="reference")
    assert all(abs(s - 0.25) < 0.01 for s in _shares(res.runs[0], "lun0"))


BAD = [
    (
        scenario(policies='[[policies]]\nspec = "rr"\nvolumes = { lun9 = "latency" }\n'),
        "policies[0].volumes.lun9",
        "no volume named 'lun9' (did you mean 'lun1'? volumes: lun0, lun1)",
    ),
    (scenario(policy0='policy = "rr:iopz=3"'), "volumes[0].policy", "rr has no parameter 'iopz' (did you mean 'iops'?"),
    (scenario(policy0='policy = "fast-path"'), "volumes[0].policy", "unknown policy 'fast-path'"),
    (scenario(policy0='policy = { spec = "rr", iops = 0 }'), "volumes[0].policy.iops", "iops"),
    (scenario(policy0='policy = { spec = "rr", label = "x" }'), "volumes[0].policy.label", "label belongs to a [[policies]] entry"),
    (scenario(policy0='policy = "rr:preferred_array=a"'), "volumes[0].policy", "preferred_array belongs to a [[policies]] entry"),
    (scenario(policy0="policy = { iops = 3 }"), "volumes[0].policy", "a policy table needs spec"),
    (
        scenario(policy0="", policies='[[policies]]\nvolumes = { lun1 = "latency" }\n'),
        "policies[0].spec",
        "volume 'lun0' has no policy of its own",
    ),
    (scenario(policies='[[policies]]\nspec = "mru"\n'), "policies[0].spec", "'mru' runs on no device"),
    (
        scenario(policy0="", policy1="").replace('[[volumes]]\nname = "lun1"\nlun = 1\n', "").replace('volume = "lun1"', 'volume = "lun0"')
        + '[[policies]]\nspec = "rr"\nvolumes = { lun0 = "mru", lun3 = "rr" }\n',
        "policies[0].volumes.lun3",
        "no volume named 'lun3'",
    ),
]


@pytest.mark.parametrize("text, place, fragment", BAD)
def test_bad_input_is_one_located_line(text, place, fragment, tmp_path, capsys):
    with pytest.raises(ScenarioError) as e:
        pathsel.loads_scenario(text, "s.toml")
    assert len(e.value.problems) == 1, e.value.problems
    assert e.value.place == place and fragment in e.value.problem, e.value.problems
    f = tmp_path / "s.toml"
    f.write_text(text)
    assert main(["simulate", str(f)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"pathsel: error: {f}: {place}: ") and fragment in err


def test_a_sweep_over_two_assignments_runs():
    entries = """
[[policies]]
volumes = { lun0 = "fixed", lun1 = "rr:iops=1" }

[[policies]]
volumes = { lun0 = "rr:iops=1", lun1 = "rr:iops=1000" }
"""
    sc = pathsel.loads_scenario(scenario(policy0="", policy1="", policies=entries))
    res = pathsel.sweep(sc, {"rr.iops": [1, 10]}, replications=1, seed=3, duration=0.01, workers=1)
    t = res.table
    labels = sorted(set(t.policy))
    # the first assignment mixes families: it runs once, as written; the second is all rr: iops is set on both devices
    assert "lun0=fixed; lun1=rr:iops=1" in labels
    assert "lun0=rr:iops=1; lun1=rr:iops=1" in labels and "lun0=rr:iops=10; lun1=rr:iops=10" in labels
    assert (t.ios > 0).all()
    # a recommendation over the assignments: each one setting; the swept family's (rr.iops) by default
    rec = res.recommend()
    for m in rec.metrics.values():
        assert m.recommended in {"lun0=rr:iops=1; lun1=rr:iops=1", "lun0=rr:iops=10; lun1=rr:iops=10"}


# every built-in family, with parameters: specs without a path name or a Python stand-in (test_properties' list)
SPECS = [s for s in POLICY_SPECS if "{path}" not in s and not s.startswith("short-eval")]
FAULTS = """
[[faults]]
at = "15ms"
what = "path_down"
path = "vmhba1:C0:T1:L{{lun}}"

[[faults]]
at = "30ms"
what = "alua"
path = "vmhba1:C0:T2:L{{lun}}"
state = "ANO"
"""


@SETTINGS
@given(st.sampled_from(SPECS), st.sampled_from(SPECS), st.integers(0, 2**16), st.booleans())
def test_the_engines_agree_on_random_assignments(spec0, spec1, seed, faults):
    """Two devices on any two built-in policies (hooks, draws, per-node state alike): the same JSON on both engines."""
    text = scenario(policy0=f'policy = "{spec0}"', policy1=f'policy = "{spec1}"').replace("seed = 7", f"seed = {seed}")
    if faults:
        text += FAULTS.replace("{{lun}}", "{lun}")  # a fault names the nexus: every volume's path over it
    sc = pathsel.loads_scenario(text)
    fast = pathsel.simulate(sc, engine="fast", duration=0.04)
    ref = pathsel.simulate(sc, engine="reference", duration=0.04)
    assert _json(fast) == _json(ref)


def test_emit_refuses_a_run_with_a_policy_per_device(tmp_path, capsys):
    f = tmp_path / "host.toml"
    f.write_text(scenario())
    assert main(["simulate", str(f), "--emit", "esxcli"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "runs a policy per device (lun0=fixed; lun1=rr:iops=1): choose one with --policy SPEC" in err
    assert main(["simulate", str(f), "--emit", "esxcli", "--policy", "rr:iops=1", "--device", "naa.1"]) == 0  # --policy: one spec, every device
    assert "VMW_PSP_RR" in capsys.readouterr().out
