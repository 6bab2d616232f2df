"""Target port groups (issue 32): ALUA per (volume, group), LUN ownership, the inter-controller link's cost.

A dual-controller array: each volume is owned by one controller; its groups there are AO, the others ANO,
and an I/O a path brings to the other controller crosses the link between them (each frame pays its
one-way latency, data serialises on it). Both engines, the owner fault, and bad inputs.
"""

from __future__ import annotations

import json

import pytest

import pathsel
from pathsel.cli import main
from pathsel.model import compile_model

BASE = """
name = "dual-controller"
seed = 3
duration = "{duration}"
[[arrays]]
name = "arr"
controllers = ["A", "B"]
service_time = "100us"
inter_controller_latency = "{icl}"
{array_extra}
[[volumes]]
name = "lun0"
{vol0}
[[volumes]]
name = "lun1"
{vol1}
[[paths]]
name = "a{{i}}"
count = 2
array = "arr"
port_group = "{ga}"
one_way_latency = "10us"
[[paths]]
name = "b{{i}}"
count = 2
array = "arr"
port_group = "{gb}"
one_way_latency = "10us"
[[workloads]]
name = "vm0"
volume = "lun0"
rw = "{rw}"
iodepth = 4
[[workloads]]
name = "vm1"
volume = "lun1"
rw = "{rw}"
iodepth = 4
{faults}
"""


def scenario(**kw: str) -> pathsel.Scenario:
    args = dict(duration="200ms", icl="30us", array_extra="", vol0="", vol1="", ga="A", gb="B", rw="randread", faults="")
    args.update(kw)
    return pathsel.loads_scenario(BASE.format(**args), "dual-controller.toml")


def model(sc: pathsel.Scenario):
    return compile_model(sc, sc.runs[0])


def states(m, volume: str) -> dict[str, tuple[str, bool]]:
    out = {}
    for p in m.paths:
        if m.devices[p.device].volume == volume:
            out[p.name] = (p.alua, p.crossing)
    return out


def test_volumes_alternate_between_the_controllers_by_default():
    m = model(scenario())
    assert states(m, "lun0") == {f"a{i}:lun0": ("AO", False) for i in range(2)} | {f"b{i}:lun0": ("ANO", True) for i in range(2)}
    assert states(m, "lun1") == {f"a{i}:lun1": ("ANO", True) for i in range(2)} | {f"b{i}:lun1": ("AO", False) for i in range(2)}


def test_two_volumes_over_one_nexus_have_their_own_states():
    m = model(scenario(vol0='owner = "B"', vol1='alua = { A = "AO", B = "standby" }'))
    assert states(m, "lun0")["a0:lun0"] == ("ANO", True)
    assert states(m, "lun0")["b0:lun0"] == ("AO", False)
    assert states(m, "lun1")["a0:lun1"] == ("AO", False)
    assert states(m, "lun1")["b0:lun1"] == ("standby", True)
    # the same nexus, two states
    a0 = [p for p in m.paths if p.name.startswith("a0:")]
    assert {p.controller for p in a0} == {a0[0].controller} and {p.alua for p in a0} == {"AO", "ANO"}


def test_named_port_groups_and_a_path_s_own_alua_first():
    extra = 'port_groups = [{ name = "tpg1", controller = "A" }, { name = "tpg2", controller = "B" }]'
    m = model(scenario(array_extra=extra, ga="tpg1", gb="tpg2", vol1='alua = { tpg1 = "ANO", tpg2 = "AO" }'))
    assert states(m, "lun0")["a1:lun0"] == ("AO", False)
    assert states(m, "lun1")["a1:lun1"] == ("ANO", True)
    assert states(m, "lun1")["b1:lun1"] == ("AO", False)


def test_no_controllers_is_today_s_model():
    text = BASE.format(duration="200ms", icl="30us", array_extra="", vol0="", vol1="", ga="A", gb="B", rw="randread", faults="")
    text = text.replace('controllers = ["A", "B"]\n', "").replace('port_group = "A"\n', "").replace('port_group = "B"\n', "")
    m = model(pathsel.loads_scenario(text))
    assert {(p.alua, p.crossing) for p in m.paths} == {("AO", False)}
    assert not m.inter_controller and m.n_wires == len(m.controllers) + len(m.links) + 1


@pytest.mark.parametrize(("rw", "frames"), [("randread", 2), ("randwrite", 4)])
@pytest.mark.parametrize("engine", ["reference", "fast"])
def test_the_crossing_costs_the_link_s_latency_once_per_frame(engine, rw, frames):
    """Constant latencies, one I/O per volume at a time (no queueing): a read is command + data/status (2 frames),
    a SCSI write command, XFER_RDY, data, status (4); an I/O on an ANO path takes frames x 30us more, and its data frame serialises on the link."""
    text = BASE.format(duration="50ms", icl="30us", array_extra="", vol0="", vol1="", ga="A", gb="B", rw=rw, faults="")
    sc = pathsel.loads_scenario(text.replace("iodepth = 4", "iodepth = 1"), "t.toml")
    r = pathsel.simulate(sc, policies=["rr:iops=1,use_ano=1"], engine=engine, trace=True).runs[0]
    crossing = {p.name: p.crossing for p in r.model.paths}
    took: dict[bool, set[float]] = {False: set(), True: set()}
    for _seq, _job, _op, _size, issued, done, path, _attempts in r.metrics.trace:
        took[crossing[path]].add(round((done - issued) * 1e6, 6))
    base = frames * 10 + 100
    assert took[False] == {base}
    # plus the one data frame's serialisation on the link (default 8GB/s): 4 KiB in 0.512us
    assert took[True] == {round(base + frames * 30 + 4096 / 8e9 * 1e6, 6)}


def test_the_owner_fault_moves_the_states_and_the_crossing():
    faults = '[[faults]]\nat = "100ms"\nwhat = "owner"\nvolume = "lun0"\ncontroller = "B"\n'
    sc = scenario(faults=faults)
    m = model(sc)
    (f,) = m.faults
    assert f.what == "owner" and len(f.paths) == 4
    new = {m.paths[p].name: (s, c) for p, s, c in zip(f.paths, f.states, f.crossing)}
    assert new == {"a0:lun0": ("ANO", 1), "a1:lun0": ("ANO", 1), "b0:lun0": ("AO", 0), "b1:lun0": ("AO", 0)}
    for engine in ("reference", "fast"):
        r = pathsel.simulate(sc, policies=["rr:iops=1"], engine=engine).runs[0]
        after = [e for e in r.metrics.events if e.get("event") == "alua"]
        assert {(e["path"], e["alua"]) for e in after} == {(n, s) for n, (s, _) in new.items()}
        assert r.faults()[0]["target"] == "volume lun0 to controller B"


def test_an_alua_fault_can_name_a_volume_and_a_port_group():
    faults = '[[faults]]\nat = "100ms"\nwhat = "alua"\nvolume = "lun1"\nport_group = "B"\nstate = "unavailable"\n'
    m = model(scenario(faults=faults))
    (f,) = m.faults
    assert sorted(m.paths[p].name for p in f.paths) == ["b0:lun1", "b1:lun1"]
    assert set(f.states) == {"unavailable"} and set(f.crossing) == {-1}


OWNER_SWAP = """
[[faults]]
at = "60ms"
what = "owner"
volume = "lun0"
controller = "B"
[[faults]]
at = "90ms"
what = "alua"
port_group = "A"
state = "standby"
[[faults]]
at = "120ms"
what = "owner"
volume = "lun1"
controller = "A"
"""


@pytest.mark.parametrize("rw", ["randread", "randrw"])
@pytest.mark.parametrize("policy", ["rr:iops=1", "rr:iops=1,use_ano=1", "dm:service-time", "dm:service-time:path_grouping_policy=multibus"])
def test_engines_agree_with_controllers_and_owner_faults(rw, policy):
    sc = scenario(rw=rw, faults=OWNER_SWAP, array_extra='inter_controller_bandwidth = "100MB/s"', duration="150ms")
    fast = pathsel.simulate(sc, policies=[policy], engine="fast", trace=True)
    ref = pathsel.simulate(sc, policies=[policy], engine="reference", trace=True)
    jf, jr = json.loads(fast.to_json()), json.loads(ref.to_json())
    jf.pop("engine"), jr.pop("engine")
    assert jf == jr
    assert fast.runs[0].metrics.trace == ref.runs[0].metrics.trace
    links = [x for x in jf["runs"][0]["links"] if x["kind"] == "inter_controller"]
    assert links and {x["name"] for x in links} == {"arr:inter-controller"}


def test_use_ano_loses_on_a_dual_controller_array():
    sc = scenario(duration="300ms", array_extra='inter_controller_bandwidth = "2GB/s"')
    res = pathsel.simulate(sc, policies=["rr:iops=1", "rr:iops=1,use_ano=1"], engine="fast")
    opt, ano = (json.loads(res.to_json())["runs"][i] for i in range(2))
    assert ano["iops"] < opt["iops"]
    assert ano["latency_us"]["p99"] > opt["latency_us"]["p99"]


# -- bad input: one located line -------------------------------------------------------------------
BAD = [
    # a group no path reaches
    (
        dict(array_extra='port_groups = [{ name = "A", controller = "A" }, { name = "B", controller = "B" }, { name = "C", controller = "B" }]'),
        "arrays[0].port_groups",
        "no path reaches target port group 'C' (controller 'B') of array 'arr'",
    ),
    # port_group naming an unknown group
    (dict(gb="Bee"), "paths[1].port_group", "no port group 'Bee' on array 'arr' (groups: A, B)"),
    # owner naming an unknown controller
    (dict(vol0='owner = "C"'), "volumes[0].owner", "no controller 'C' on array 'arr' (controllers: A, B)"),
    # a volume with no optimized group
    (dict(vol1='alua = { A = "ANO", B = "standby" }'), "volumes[1].alua", "volume 'lun1' has no optimized (AO) target port group"),
    (dict(vol1='alua = { A = "AO", Q = "ANO" }'), "volumes[1].alua.Q", "no target port group 'Q' on the arrays holding volume 'lun1'"),
    (dict(array_extra='port_groups = [{ name = "t1", controller = "Z" }]'), "arrays[0].port_groups", "port group 't1': no controller named 'Z'"),
    (dict(faults='[[faults]]\nat = "1ms"\nwhat = "owner"\nvolume = "lun0"\n'), "faults[0].controller", "an owner change needs the controller"),
    (dict(faults='[[faults]]\nat = "1ms"\nwhat = "owner"\nvolume = "lun9"\ncontroller = "A"\n'), "faults[0].volume", "no volume named 'lun9'"),
    (
        dict(faults='[[faults]]\nat = "1ms"\nwhat = "owner"\nvolume = "lun0"\ncontroller = "C"\n'),
        "faults[0].controller",
        "no controller 'C' on array 'arr'",
    ),
    (dict(faults='[[faults]]\nat = "1ms"\nwhat = "alua"\nport_group = "X"\nstate = "ANO"\n'), "faults[0].port_group", "no target port group 'X'"),
    (
        dict(faults='[[faults]]\nat = "1ms"\nwhat = "path_down"\npath = "a0"\nport_group = "A"\n'),
        "faults[0].port_group",
        "only an alua change takes a port_group",
    ),
]


@pytest.mark.parametrize(("kw", "place", "fragment"), BAD)
def test_bad_port_group_input_is_one_located_line(kw, place, fragment, tmp_path, capsys):
    args = dict(duration="200ms", icl="30us", array_extra="", vol0="", vol1="", ga="A", gb="B", rw="randread", faults="")
    args.update(kw)
    path = tmp_path / "bad.toml"
    path.write_text(BASE.format(**args))
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario(path)
    assert info.value.place == place
    assert fragment in info.value.problem
    assert "more problem" not in info.value.problem
    assert main(["simulate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(f"pathsel: error: {path}: {place}: ")


def test_a_path_needs_its_group_when_the_array_has_controllers(tmp_path):
    text = BASE.format(duration="200ms", icl="30us", array_extra="", vol0="", vol1="", ga="A", gb="B", rw="randread", faults="")
    text = text.replace('port_group = "B"\n', "", 1)
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(text, "x.toml")
    assert info.value.place == "paths[1].port_group"
    assert "required: array 'arr' has controllers (A, B)" in info.value.problem


def _no_controllers(text: str) -> str:
    return text.replace('controllers = ["A", "B"]\n', "")


def _no_groups(text: str) -> str:
    return _no_controllers(text).replace('port_group = "A"\n', "").replace('port_group = "B"\n', "")


BAD_TEXTS = [
    (lambda t: t.replace('controllers = ["A", "B"]', 'controllers = ["A", "A"]'), {}, "arrays[0].controllers", "names 'A' twice"),
    (_no_controllers, dict(array_extra='port_groups = [{ name = "t", controller = "A" }]'), "arrays[0].port_groups", "needs controllers"),
    (_no_controllers, {}, "paths[0].port_group", "array 'arr' has no controllers"),
    (_no_groups, dict(vol0='owner = "A"'), "volumes[0].owner", "none of the arrays holding volume 'lun0' has controllers"),
    (_no_groups, dict(vol0='alua = { A = "AO" }'), "volumes[0].alua", "none of the arrays holding volume 'lun0' has controllers"),
    (lambda t: t, dict(icl="-1us"), "arrays[0].inter_controller_latency", "must be >= 0"),
    (lambda t: t, dict(faults='[[faults]]\nat = "1ms"\nwhat = "alua"\nstate = "ANO"\n'), "faults[0].path", "(or a volume or port_group)"),
]


@pytest.mark.parametrize(("edit", "kw", "place", "fragment"), BAD_TEXTS)
def test_bad_controllers_are_one_located_line(edit, kw, place, fragment):
    args = dict(duration="200ms", icl="30us", array_extra="", vol0="", vol1="", ga="A", gb="B", rw="randread", faults="")
    args.update(kw)
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(edit(BASE.format(**args)), "x.toml")
    assert (info.value.place, "more problem" in info.value.problem) == (place, False)
    assert fragment in info.value.problem


# -- implicit ALUA (an option) -----------------------------------------------------------------------
IMPLICIT_HOST = '\n[[hosts]]\nname = "host"\ndetection = "1ms"\n'
A_DOWN = '[[faults]]\nat = "30ms"\nwhat = "path_down"\npath = "a0"\n[[faults]]\nat = "30ms"\nwhat = "path_down"\npath = "a1"\n'


@pytest.mark.parametrize(("policy", "at"), [("rr:iops=1", 0.06), ("rr:iops=1,use_ano=1", 0.04)])
def test_implicit_alua_moves_a_volume_to_the_controller_receiving_its_io(policy, at):
    """Controller A's paths go down at 30ms: lun0's I/O arrives at B only, crossing back to A; at the first check
    (every 20ms) whose window B took more than twice A's share of, the array moves lun0 to B: its paths there
    become AO and stop crossing. Before, with every path up, round robin over AO and ANO alike sends each controller
    the same share: nothing moves (lun1 neither). Both engines agree."""
    sc = scenario(array_extra='implicit_alua = "20ms"' + IMPLICIT_HOST, faults=A_DOWN, duration="100ms")
    m = model(sc)
    assert [f.at for f in m.checks] == pytest.approx([0.02, 0.04, 0.06, 0.08]) and [f.what for f in m.faults] == ["path_down"] * 2
    fast = pathsel.simulate(sc, policies=[policy], engine="fast", trace=True)
    ref = pathsel.simulate(sc, policies=[policy], engine="reference", trace=True)
    jf, jr = json.loads(fast.to_json()), json.loads(ref.to_json())
    jf.pop("engine"), jr.pop("engine")
    assert jf == jr and fast.runs[0].metrics.trace == ref.runs[0].metrics.trace
    moved = {(round(e["t"], 6), e["path"], e["alua"]) for e in ref.runs[0].metrics.events if e.get("event") == "alua"}
    # optimized only, 20-40ms: A took all of lun0's I/O until 30ms, not a clear majority for B; 40-60ms: B only.
    # Over every path, B took half until 30ms and all after: more than twice A's share by 40ms
    assert moved == {(at, "a0:lun0", "ANO"), (at, "a1:lun0", "ANO"), (at, "b0:lun0", "AO"), (at, "b1:lun0", "AO")}
    assert [f["what"] for f in ref.runs[0].faults()] == ["path_down"]  # the checks are no faults of the file


def test_implicit_alua_needs_controllers_and_a_sane_interval():
    for extra, fragment in (('implicit_alua = "1ms"', "shorter than the 10ms"),):
        with pytest.raises(pathsel.ScenarioError) as info:
            scenario(array_extra=extra)
        assert info.value.place == "arrays[0].implicit_alua" and fragment in info.value.problem
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(
            _no_groups(
                BASE.format(duration="1s", icl="30us", array_extra='implicit_alua = "1s"', vol0="", vol1="", ga="A", gb="B", rw="randread", faults="")
            )
        )
    assert info.value.place == "arrays[0].implicit_alua" and "needs two or more controllers" in info.value.problem
