"""Issue 32, importers and emitters: multi-LUN listings with LUNs owned by different controllers import whole
(target port groups, each volume's ALUA per group, its owner), every importer's --device filter, each device's
own PSP, esxcli storage core device list (DQLEN, DSNRO), the DSNRO esxcli command, and the multipath.conf
emitter's comment on what it overrides of the vendor's built-in entry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomlkit

import pathsel
from pathsel.cli import main
from pathsel.errors import ScenarioError
from pathsel.scenario.systems import emit, import_outputs, read_emitted
from pathsel.scenario.systems.groups import choose, infer_port_groups, mixed_states

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "import"
PATHSEL = Path(sys.executable).parent / "pathsel"
ESX = ["esxcli-alternating-nmp-device-list.txt", "esxcli-alternating-core-path-list.txt"]
NAA_A = "naa.68ccf098003c4e1a9d2b5f7e00000011"
NAA_B = "naa.68ccf098003c4e1a9d2b5f7e00000012"
GROUPS = [{"name": "tpg1", "controller": "A"}, {"name": "tpg2", "controller": "B"}]
OWNED_A = {"tpg1": "AO", "tpg2": "ANO"}
OWNED_B = {"tpg1": "ANO", "tpg2": "AO"}

# (kind, files, {volume: (alua, owner)}, {path: port_group}, {volume: own policy} or None)
MULTI_LUN = [
    (
        "multipath",
        ["multipath-ll-alternating.txt"],
        {"mpatha": (OWNED_A, "A"), "mpathb": (OWNED_B, "B"), "mpathc": (OWNED_A, "A")},
        {"1:0:0:{lun}": "tpg1", "2:0:0:{lun}": "tpg1", "1:0:1:{lun}": "tpg2", "2:0:1:{lun}": "tpg2"},
        None,
    ),
    (
        "esxcli",
        [*ESX, "esxcli-alternating-nmp-path-list.txt"],
        {NAA_A: (OWNED_A, "A"), NAA_B: (OWNED_B, "B")},
        {f"vmhba{h}:C0:T{t}:L{{lun}}": f"tpg{t + 1}" for h in (1, 2) for t in (0, 1)},
        {NAA_A: "rr:iops=1", NAA_B: "latency"},
    ),
    (
        "esxcli",
        ESX,  # no nmp path list: no TPG_id, the groups come from the working paths' pattern
        {NAA_A: (OWNED_A, "A"), NAA_B: (OWNED_B, "B")},
        {f"vmhba{h}:C0:T{t}:L{{lun}}": f"tpg{t + 1}" for h in (1, 2) for t in (0, 1)},
        {NAA_A: "rr:iops=1", NAA_B: "latency"},
    ),
    (
        "mpclaim",
        ["mpclaim-alternating-s-d-0.txt", "mpclaim-alternating-s-d-1.txt"],
        {"MPIO Disk0": (OWNED_A, "A"), "MPIO Disk1": (OWNED_B, "B")},
        {"0000000077020000": "tpg1", "0000000077030000": "tpg1", "0000000077020001": "tpg2", "0000000077030001": "tpg2"},
        {"MPIO Disk0": "mpio:rrws", "MPIO Disk1": "mpio:lqd"},
    ),
]


def _doc(kind: str, files: list[str], **options: object) -> tuple[object, dict]:
    imp = import_outputs(kind, [DATA / f for f in files], **options)
    return imp, tomlkit.parse(imp.text).unwrap()


@pytest.mark.parametrize(("kind", "files", "volumes", "paths", "own"), MULTI_LUN, ids=[f"{c[0]}:{len(c[1])}" for c in MULTI_LUN])
def test_luns_owned_by_both_controllers_import_whole(kind, files, volumes, paths, own):
    imp, doc = _doc(kind, files)
    (array,) = doc["arrays"]
    assert array["controllers"] == ["A", "B"] and array["port_groups"] == GROUPS
    assert {v["name"]: (v["alua"], v["owner"]) for v in doc["volumes"]} == volumes
    assert {p["name"]: p["port_group"] for p in doc["paths"]} == paths
    if own is None:
        assert "policy" not in doc["volumes"][0] and len(doc["policies"]) == 1
    else:  # each device keeps its own PSP, in one run: the host as it is, not alternatives applied to every device
        assert {v["name"]: v["policy"] for v in doc["volumes"]} == own
        assert doc["policies"] == [{"label": "as imported: per device"}]
        (run,) = imp.scenario.runs
        assert {name: spec.text for name, spec in run.devices} == own
    assert any("target port group" in n for n in imp.notes)


@pytest.mark.parametrize("case", MULTI_LUN, ids=[f"{c[0]}:{len(c[1])}" for c in MULTI_LUN])
def test_the_imported_multi_lun_scenario_runs(case, tmp_path):
    kind, files = case[:2]
    out = tmp_path / "site.toml"
    assert main(["import", kind, *(str(DATA / f) for f in files), "-o", str(out), "-q"]) == 0
    done = subprocess.run([str(PATHSEL), "simulate", str(out), "--duration", "0.2", "-q"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    res = pathsel.simulate(pathsel.load_scenario(out), duration=0.05, engine="fast")
    assert all(r.iops > 0 for r in res.runs)


def test_a_failed_path_keeps_its_group_and_is_written_unavailable():
    imp, doc = _doc("multipath", ["multipath-ll-alternating.txt"])
    path = next(p for p in doc["paths"] if p["name"] == "2:0:1:{lun}")
    assert path["port_group"] == "tpg2" and path["alua"] == "unavailable"
    assert any("2:0:1:3 (sdm) is failed faulty" in n for n in imp.notes)


def test_uniform_states_keep_the_one_state_per_nexus_form():
    # LUNs all owned by one controller: no groups needed, the file is what it was before issue 32
    _, doc = _doc("multipath", ["multipath-ll-two-maps.txt"])
    assert "controllers" not in doc["arrays"][0] and all("port_group" not in p for p in doc["paths"])
    assert all("alua" not in v for v in doc["volumes"])


def test_groups_from_state_vectors_and_from_ids():
    states = {"n1": {"a": "AO", "b": "ANO"}, "n2": {"a": "ANO", "b": "AO"}, "n3": {"a": None, "b": "AO"}, "n4": {"a": "AO", "b": "ANO"}}
    assert mixed_states(states) and not mixed_states({"n1": {"a": "AO", "b": "AO"}})
    g = infer_port_groups(states, ["a", "b"])
    assert g.group_of == {"n1": "tpg1", "n2": "tpg2", "n3": "tpg2", "n4": "tpg1"}
    assert g.controller_of == {"tpg1": "A", "tpg2": "B"} and g.owner == {"a": "A", "b": "B"}
    # explicit TPG ids: two groups of one controller (the same states for every LUN) share it
    ids = {"n1": "1", "n2": "2", "n3": "3", "n4": "4"}
    g = infer_port_groups(states, ["a", "b"], ids)
    assert g.controller_of == {"tpg1": "A", "tpg2": "B", "tpg3": "B", "tpg4": "A"}
    assert g.alua["a"] == {"tpg1": "AO", "tpg2": "ANO", "tpg3": "unavailable", "tpg4": "AO"}
    # AO on both controllers (symmetric active-active): no owner written
    assert infer_port_groups({"n1": {"a": "AO", "b": "ANO"}, "n2": {"a": "AO", "b": "AO"}}, ["a", "b"]).owner["a"] is None


# -- filters ---------------------------------------------------------------------------------------------------

FILTERS = [
    ("multipath", ["multipath-ll-alternating.txt"], ["mpathb"], ["mpathb"]),
    ("multipath", ["multipath-ll-alternating.txt"], ["368ccf09800a1b2c3d4e5f60718293a4[13]"], ["mpatha", "mpathc"]),
    ("multipath", ["multipath-ll-alternating.txt"], ["mpath[ab]", "mpatha"], ["mpatha", "mpathb"]),
    ("esxcli", ESX, ["naa.*12"], [NAA_B]),
    ("mpclaim", ["mpclaim-alternating-s-d-0.txt", "mpclaim-alternating-s-d-1.txt"], ["1"], ["MPIO Disk1"]),
    ("mpclaim", ["mpclaim-alternating-s-d-0.txt", "mpclaim-alternating-s-d-1.txt"], ["MPIO Disk*"], ["MPIO Disk0", "MPIO Disk1"]),
    ("nvme", ["nvme-list-subsys.txt"], ["nqn.*"], ["nvme-subsys0"]),
]


@pytest.mark.parametrize(("kind", "files", "device", "kept"), FILTERS, ids=[f"{c[0]}:{c[2]}" for c in FILTERS])
def test_every_importer_takes_a_device_filter(kind, files, device, kept):
    imp = import_outputs(kind, [DATA / f for f in files], devices=device)
    names = [v.name for v in imp.scenario.model.volumes] or [imp.scenario.model.name.split(": ", 1)[1]]
    assert names == kept


def test_one_kept_lun_of_an_alternating_pair_needs_no_groups():
    _, doc = _doc("multipath", ["multipath-ll-alternating.txt"], devices=["mpathb"])
    assert "controllers" not in doc["arrays"][0]
    assert {p["name"]: p["alua"] for p in doc["paths"]} == {"sdd": "AO", "sdh": "AO", "sde": "ANO", "sdi": "ANO"}


@pytest.mark.parametrize(
    ("kind", "files", "want"),
    [
        ("multipath", ["multipath-ll-alternating.txt"], "'mpathz*' matches no map in "),
        ("esxcli", ESX, "'mpathz*' matches no device in "),
        ("mpclaim", ["mpclaim-alternating-s-d-0.txt"], "'mpathz*' matches no MPIO disk in "),
        ("nvme", ["nvme-list-subsys.txt"], "'mpathz*' matches no subsystem in "),
    ],
)
def test_a_filter_matching_nothing_is_one_located_line(kind, files, want, capsys):
    assert main(["import", kind, *(str(DATA / f) for f in files), "--device", "mpathz*"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("pathsel: error: command line: --device: "), err
    assert want in err


def test_choose_keeps_the_listing_order():
    rows = [("b", ["2"]), ("a", ["1"])]
    assert choose(rows, ["a", "b"], "f", "map") == ["b", "a"] and choose(rows, None, "f", "map") is None
    with pytest.raises(ScenarioError, match="matches no map in f"):
        choose(rows, ["c"], "f", "map")


# -- esxcli storage core device list ------------------------------------------------------------------------


def test_core_device_list_gives_dqlen_and_dsnro():
    imp, doc = _doc("esxcli", [*ESX, "esxcli-core-device-list.txt"])
    (host,) = doc["hosts"]
    assert host["queue_depth"] == 64 and host["sched_num_req_outstanding"] == 32
    h = imp.scenario.model.hosts[0]
    assert (h.queue_depth, h.sched_num_req_outstanding) == (64, 32)


def _core_list(tmp_path: Path, edit: tuple[str, str]) -> Path:
    text = (DATA / "esxcli-core-device-list.txt").read_text()
    out = tmp_path / "core-device-list.txt"
    out.write_text(text.replace(*edit, 1))
    return out


def test_core_device_list_values_that_differ_or_exceed_dqlen_get_a_note(tmp_path):
    f = _core_list(tmp_path, ("No of outstanding IOs with competing worlds: 32", "No of outstanding IOs with competing worlds: 128"))
    imp = import_outputs("esxcli", [*(DATA / x for x in ESX), f])
    assert imp.scenario.model.hosts[0].sched_num_req_outstanding == 32  # a tie between 128 and 32: the smaller
    assert any("differs between devices" in n for n in imp.notes)


@pytest.mark.parametrize(
    ("edit", "want"),
    [
        (("Device Max Queue Depth: 64", "Device Max Queue Depth: ²"), "Device Max Queue Depth: '²' is not a whole number in 1..65,536"),
        (("Device Max Queue Depth: 64", "Device Max Queue Depth: 0"), "is not a whole number in 1..65,536"),
    ],
)
def test_core_device_list_bad_numbers_are_one_located_line(edit, want, tmp_path, capsys):
    f = _core_list(tmp_path, edit)
    assert main(["import", "esxcli", *(str(DATA / x) for x in ESX), str(f)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"{f}: line 30: " in err and want in err, err


# -- emitters ------------------------------------------------------------------------------------------------


def test_esxcli_emit_sets_dsnro_per_device_and_reads_back():
    text = emit("rr:iops=1", "esxcli", device="naa.1", sched_num_req_outstanding=32)
    assert text.splitlines()[-1] == "esxcli storage core device set --device=naa.1 --sched-num-req-outstanding=32"
    back = read_emitted("esxcli", text)
    assert (back.spec, back.device, back.dsnro) == ("rr:iops=1", "naa.1", 32)
    assert read_emitted("esxcli", emit("rr:iops=1", "esxcli", device="naa.1")).dsnro is None


def test_simulate_emit_takes_dsnro_from_the_scenario(tmp_path, capsys):
    out = tmp_path / "site.toml"
    assert main(["import", "esxcli", *(str(DATA / x) for x in [*ESX, "esxcli-core-device-list.txt"]), "-o", str(out), "-q"]) == 0
    assert main(["simulate", str(out), "--policy", "rr:iops=1", "--emit", "esxcli", "--device", NAA_A]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"esxcli storage core device set --device={NAA_A} --sched-num-req-outstanding=32" in lines
    assert main(["simulate", str(out), "--policy", "rr:iops=1", "--emit", "esxcli", "--device", NAA_A, "--sched-num-req-outstanding", "16"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith("--sched-num-req-outstanding=16")


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["--emit", "esxcli", "--sched-num-req-outstanding", "16"], "--sched-num-req-outstanding: DSNRO is set per device"),
        (["--emit", "esxcli", "--device", "naa.1", "--sched-num-req-outstanding", "0"], "0 is not a whole number in ESXi's range 1..256"),
        (["--emit", "esxcli", "--device", "naa.1", "--sched-num-req-outstanding", "257"], "257 is not a whole number in ESXi's range 1..256"),
        (["--emit", "satp-rule", "--vendor", "V", "--model", "M", "--sched-num-req-outstanding", "8"], "set with --emit esxcli, not satp-rule"),
    ],
)
def test_dsnro_emit_bad_input(argv, want, capsys):
    assert main(["simulate", "--policy", "rr:iops=1", *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("pathsel: error: command line: --sched-num-req-outstanding: ") and want in err, err


def test_multipath_conf_says_what_it_overrides_of_the_built_in_entry():
    text = emit("dm:service-time", "multipath.conf", vendor="NETAPP", model="LUN")
    assert "# overrides the built-in failback immediate" in text.splitlines()
    assert any(line.startswith("# built-in entry (preset:dm-netapp-ontap, ") for line in text.splitlines())
    assert '# the same as built in: path_selector "service-time 0", path_grouping_policy group_by_prio' in text
    text = emit("dm:round-robin:path_grouping_policy=multibus,failback=immediate", "multipath.conf", vendor="PURE", model="FlashArray")
    assert '# overrides the built-in path_selector "service-time 0" (the default; the entry sets none)' in text
    assert "# overrides the built-in path_grouping_policy group_by_prio" in text and "# the same as built in: failback immediate" in text
    assert "no built-in entry" in emit("dm:service-time", "multipath.conf", vendor="ACME", model="X")
    # a map (wwid) or the defaults section: no vendor, no comment
    assert "built-in" not in emit("dm:service-time", "multipath.conf", device="3600a0980")
    back = read_emitted("multipath.conf", text)
    assert (back.vendor, back.product) == ("PURE", "FlashArray")
