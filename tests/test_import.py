"""Your world in, a decision out: importers, measurement readers, emitters (round trips) and presets.

The sample outputs are in tests/data/import (README.md there cites the
layout each follows); the malformed ones are rows of OUTPUT_CASES in
tests/test_bad_input.py.
"""

from __future__ import annotations

import json
import math
import tomllib

import pytest

import pathsel
from pathsel.cli import main
from pathsel.measured import read_measurements
from pathsel.policies.presets import PRESETS
from pathsel.policies.spec import parse_spec
from pathsel.scenario.systems import EMIT_KINDS, emit, import_outputs, read_emitted
from pathsel.timing.distributions import parse_delay

from .conftest import ROOT

DATA = ROOT / "tests" / "data" / "import"
NAA1 = "naa.624a93708a75393becad4e43000113ee"
NAA2 = "naa.624a93708a75393becad4e43000113ef"
AO4 = ["AO", "AO", "ANO", "ANO"]

# (kind, files, options, {path name: ALUA state}, arrays, volumes, policies as imported)
IMPORTS = [
    (
        "esxcli",
        ["esxcli-nmp-device-list.txt", "esxcli-core-path-list.txt"],
        {"devices": [NAA1]},
        {f"vmhba{h}:C0:T{t}:L1": s for h in (1, 2) for t, s in enumerate(AO4)},
        2,
        1,
        ["rr:iops=1"],
    ),
    (
        "esxcli",
        ["esxcli-core-path-list.txt", "esxcli-nmp-device-list.txt"],
        {},
        {f"vmhba{h}:C0:T{t}:L{{lun}}": s for h in (1, 2) for t, s in enumerate(AO4)},
        2,
        2,
        ["rr:iops=1"],  # one run, each device on its own PSP ([[volumes]] policy): tests/test_import_multilun.py checks them
    ),
    (
        "esxcli",
        ["esxcli-nmp-device-list.txt", "esxcli-nmp-path-list.txt"],
        {"devices": [NAA2]},
        {f"vmhba{h}:C0:T{t}:L2": s for h in (1, 2) for t, s in enumerate(AO4)},
        1,
        1,
        ["latency"],
    ),
    ("multipath", ["multipath-ll.txt"], {}, {"sdb": "AO", "sdd": "AO", "sda": "ANO", "sdc": "ANO"}, 1, 1, ["dm:service-time:failback=immediate"]),
    (
        "multipath",
        ["multipath.conf", "multipath-ll.txt"],
        {},
        {"sdb": "AO", "sdd": "AO", "sda": "ANO", "sdc": "ANO"},
        1,
        1,
        ["dm:service-time:failback=30"],
    ),
    (
        "multipath",
        ["multipath-ll-two-maps.txt"],
        {},
        {"11:0:1:{lun}": "AO", "12:0:1:{lun}": "AO", "11:0:0:{lun}": "ANO", "12:0:0:{lun}": "unavailable"},
        1,
        2,
        ["dm:service-time:failback=immediate"],
    ),
    ("nvme", ["nvme-list-subsys.txt", "nvme-iopolicy.txt"], {}, {f"nvme{i}": s for i, s in enumerate(AO4)}, 1, 1, ["nvme:queue-depth"]),
    ("nvme", ["nvme-list-subsys-verbose.txt"], {}, {"nvme0": "AO", "nvme1": "AO", "nvme2": "AO", "nvme3": "unavailable"}, 1, 1, ["nvme:round-robin"]),
    ("nvme", ["nvme-list-subsys.txt"], {}, {f"nvme{i}": s for i, s in enumerate(AO4)}, 1, 1, ["nvme:numa"]),
    (
        "mpclaim",
        ["mpclaim-s-d-0.txt"],
        {},
        {"0000000077030001": "AO", "0000000077030000": "ANO", "0000000077020001": "AO", "0000000077020000": "ANO"},
        1,
        1,
        ["mpio:rrws"],
    ),
    (
        "mpclaim",
        ["mpclaim-s-d.txt", "mpclaim-s-d-0.txt", "mpclaim-s-d-1.txt"],
        {},
        {"0000000077030001": "AO", "0000000077030000": "ANO", "0000000077020001": "AO", "0000000077020000": "ANO"},
        1,
        2,
        ["mpio:rrws"],
    ),
]


@pytest.mark.parametrize(
    ("kind", "files", "options", "paths", "arrays", "volumes", "policies"), IMPORTS, ids=[f"{c[0]}:{'+'.join(c[1])}" for c in IMPORTS]
)
def test_import_reads_the_documented_sample(kind, files, options, paths, arrays, volumes, policies):
    imp = import_outputs(kind, [DATA / f for f in files], **options)
    m = imp.scenario.model
    assert {g.name: g.alua for g in m.paths} == paths
    assert [g.name for g in m.paths] == list(paths)  # the order the OS lists them in
    assert len(m.arrays) == arrays
    assert max(len(m.volumes), 1) == volumes
    assert [r.policy.text for r in imp.scenario.runs] == policies
    assert all(r.label.startswith("as imported: ") for r in imp.scenario.runs)
    assert "FILL IN" in imp.text and [p for p, _, _ in imp.to_fill][:3] == [
        "arrays[*].service_time",
        "arrays[*].concurrency",
        "paths[*].one_way_latency",
    ]
    assert (arrays == 2) == ("replication.one_way_latency" in [p for p, _, _ in imp.to_fill])


@pytest.mark.parametrize("case", [IMPORTS[1], IMPORTS[5], IMPORTS[6], IMPORTS[10]], ids=lambda c: c[0])
def test_imported_skeleton_loads_and_runs(case, tmp_path):
    kind, files, options = case[:3]
    out = tmp_path / "imported.toml"
    imp = import_outputs(kind, [DATA / f for f in files], output=out, **options)
    imp.write(out)
    res = pathsel.simulate(pathsel.load_scenario(out), duration=0.05, engine="fast")
    assert all(r.iops > 0 for r in res.runs)


def test_import_cli_writes_the_file_and_lists_what_to_fill(tmp_path, capsys):
    out = tmp_path / "site.toml"
    args = [
        "import",
        "esxcli",
        str(DATA / "esxcli-nmp-device-list.txt"),
        str(DATA / "esxcli-core-path-list.txt"),
        "-o",
        str(out),
        "--device",
        NAA1,
        "--host",
        "esx7",
        "--workload",
        str(DATA / "fio-randwrite.json"),
    ]
    assert main(args) == 0
    _, err = capsys.readouterr()
    assert f"wrote {out}" in err and "--fit service_time" in err and "replication.one_way_latency" in err
    assert "workloads[0]" not in err  # fio's job filled it
    sc = pathsel.load_scenario(out)
    w = sc.model.workloads[0]
    assert (w.rw, w.bs, w.iodepth, sc.model.hosts[0].name) == ("randwrite", ((32768, 100.0),), 32, "esx7")
    assert main(["simulate", str(out), "--duration", "0.05", "-q"]) == 0


def test_imported_file_keeps_its_layout():
    # written through tomlkit (issue 38): the same keys in the same order, and the FILL IN comments beside them
    imp = import_outputs("esxcli", [DATA / "esxcli-nmp-device-list.txt", DATA / "esxcli-core-path-list.txt"], devices=[NAA1])
    doc = tomllib.loads(imp.text)
    assert list(doc) == ["name", "source", "protocol", "duration", "arrays", "replication", "hosts", "paths", "workloads", "policies"]
    assert list(doc["paths"][0]) == ["name", "array", "alua", "one_way_latency"]
    lines = imp.text.splitlines()
    assert lines[0].startswith("# Imported by `pathsel import esxcli ") and "# FILL IN marks what the output cannot tell" in imp.text
    assert "concurrency = 64  # FILL IN: I/Os the array serves at once (--fit concurrency)" in lines
    assert 'one_way_latency = "50us"  # FILL IN: host to array, one way, per frame (--fit one_way_latency)' in lines
    assert imp.text.count('# bandwidth = "16Gbit"  # FILL IN:') == len(doc["paths"]) == 8
    assert "[[paths]]  # WWNN: 52:4a:93:7a:8f:0a:2b:00 WWPN: 52:4a:93:7a:8f:0a:2b:10" in lines


@pytest.mark.parametrize("host", ["esx\nseed = 666", 'a"b', "x\u2028[[hosts]]", "tab\there", "#not a comment"])
def test_a_host_name_is_one_toml_value(host):
    imp = import_outputs("nvme", [DATA / "nvme-list-subsys.txt"], host=host)
    doc = tomllib.loads(imp.text)
    assert [h["name"] for h in doc["hosts"]] == [host] and "seed" not in doc
    assert imp.scenario.model.hosts[0].name == host
    assert len(imp.text.splitlines()) == len(
        pathsel.scenario.systems.import_outputs("nvme", [DATA / "nvme-list-subsys.txt"], host="h").text.splitlines()
    )


def test_imported_write_never_overwrites_a_capture(tmp_path):
    capture = tmp_path / "subsys.txt"
    capture.write_bytes((DATA / "nvme-list-subsys.txt").read_bytes())
    imp = import_outputs("nvme", [capture])
    with pytest.raises(pathsel.ScenarioError, match="is one of this command's inputs"):
        imp.write(capture)
    assert capture.read_bytes() == (DATA / "nvme-list-subsys.txt").read_bytes()
    imp.write(tmp_path / "site.toml")
    assert pathsel.load_scenario(tmp_path / "site.toml").runs[0].policy.text == "nvme:numa"


def test_import_to_stdout(capsys):
    assert main(["import", "nvme", str(DATA / "nvme-list-subsys.txt"), "-q"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and pathsel.loads_scenario(out).runs[0].policy.text == "nvme:numa"


def test_import_notes_what_the_output_cannot_tell():
    imp = import_outputs("nvme", [DATA / "nvme-list-subsys-verbose.txt"])
    assert any("no ANA states" in n for n in imp.notes) and any("nvme3 is connecting" in n for n in imp.notes)
    imp = import_outputs("multipath", [DATA / "multipath-ll.txt"])
    assert any("built-in entry (dm-netapp-ontap)" in n for n in imp.notes)
    imp = import_outputs("multipath", [DATA / "multipath-ll.txt", DATA / "multipath.conf"])
    assert imp.scenario.model.hosts[0].apd_timeout == math.inf  # no_path_retry queue


# -- measurements ---------------------------------------------------------------------------------------

# (file, options, device, {(metric, path): value}, relative tolerance)
MEASURED = [
    ("fio-randwrite.json", {}, "/dev/sdb", {("iops", None): 13650.945, ("mean", None): 2.3443e-3, ("p99", None): 3.3915e-3}, 1e-3),
    ("fio-randwrite-plus.json", {"op": "write"}, "/dev/sdb", {("iops", None): 13650.945, ("mean", None): 2.3443e-3, ("p99", None): 3.39e-3}, 2e-3),
    ("fio-randread-plus-with-note.json", {}, "/dev/mapper/mpatha", {("iops", None): 38880.25, ("mean", None): 0.41151e-3}, 1e-3),
    (
        "esxtop-batch.csv",
        {},
        NAA1,
        {("iops", None): 13068.07, ("mean", None): 2.392e-3, ("iops", "vmhba1:C0:T0:L1"): 3224.94, ("mean", "vmhba1:C0:T0:L1"): 2.383e-3},
        1e-3,
    ),
    ("esxtop-batch.csv", {"device": "mpx.vmhba32:C0:T0:L0"}, "mpx.vmhba32:C0:T0:L0", {("iops", None): 3.2}, 1e-3),
    ("iostat-x.txt", {}, "dm-0", {("iops", None): 52466.7, ("mean", None): 0.315e-3, ("iops", "sdb"): 25689.07}, 1e-3),
    ("iostat-x.txt", {"device": "sdb"}, "sdb", {("iops", None): 25689.07, ("mean", None): 0.28e-3}, 1e-3),
]


@pytest.mark.parametrize(("name", "options", "device", "figures", "tol"), MEASURED, ids=[f"{c[0]}{c[1]}" for c in MEASURED])
def test_measurement_readers(name, options, device, figures, tol):
    (m,) = read_measurements(DATA / name, **options)
    assert m.device == device
    for (metric, path), value in figures.items():
        f = m.get(metric, path)
        assert f is not None and f.value == pytest.approx(value, rel=tol), (metric, path)


def test_pathsel_json_is_a_measurement_per_run(tmp_path):
    res = pathsel.simulate(policies=["rr:iops=1", "latency"], duration=0.1)
    (tmp_path / "r.json").write_text(res.to_json())
    ms = read_measurements(tmp_path / "r.json")
    assert [m.policy for m in ms] == ["rr:iops=1", "latency"]
    assert ms[0].get("iops").value == pytest.approx(res.runs[0].iops)


def test_fio_as_an_empirical_delay():
    plus = parse_delay({"dist": "empirical", "file": str(DATA / "fio-randwrite-plus.json"), "format": "fio"})
    table = parse_delay({"dist": "empirical", "file": str(DATA / "fio-randwrite.json"), "op": "write"})  # auto-detected
    assert plus.count == table.count == 400_000
    assert plus.mean == pytest.approx(2.3442e-3, rel=1e-3)
    for q in (0.5, 0.99):
        assert plus.quantile(q) == pytest.approx(table.quantile(q), rel=0.01)
    half = parse_delay({"dist": "empirical", "file": str(DATA / "fio-randwrite-plus.json"), "scale": 0.5})
    assert half.mean == pytest.approx(plus.mean / 2)


def test_a_scenario_with_a_fio_delay_runs(tmp_path):
    text = (ROOT / "sims" / "esxi-latency-testdrive.toml").read_text()
    text = text.replace(
        'service_time = { read = { dist = "exponential", mean = "150us" }, write = { dist = "exponential", mean = "150us" } }',
        f'service_time = {{ dist = "empirical", file = "{DATA / "fio-randread-plus-with-note.json"}", format = "fio", scale = 0.25 }}',
        1,
    )
    sc = pathsel.loads_scenario(text, "fio.toml")
    assert sc.model.arrays[0].service_time.read.mean == pytest.approx(0.41151e-3 * 0.25, rel=1e-3)
    assert pathsel.simulate(sc, policies=["rr:iops=1"], duration=0.05).runs[0].iops > 0


# -- emitters: round trips ------------------------------------------------------------------------------------

# (spec, kind, options, what the reader must find besides the spec)
EMITS = [
    ("rr:iops=1", "esxcli", {"device": NAA1}, {"device": NAA1}),
    ("rr:bytes=1048576,use_ano=1", "esxcli", {"device": NAA1}, {"device": NAA1}),
    ("latency", "esxcli", {"device": NAA1}, {"device": NAA1}),
    ("latency:num_sampling_cycles=32,latency_eval_time=30000", "esxcli", {"device": NAA1}, {"device": NAA1}),
    ("fixed:preferred=vmhba1:C0:T0:L1", "esxcli", {"device": NAA1}, {"device": NAA1}),
    ("mru", "esxcli", {}, {"satp": "VMW_SATP_ALUA"}),
    ("fixed", "esxcli", {"satp": "VMW_SATP_DEFAULT_AA"}, {"satp": "VMW_SATP_DEFAULT_AA"}),
    ("rr:iops=1", "satp-rule", {"vendor": "PURE", "model": "FlashArray"}, {"vendor": "PURE", "model": "FlashArray"}),
    ("latency", "satp-rule", {"vendor": "NETAPP", "model": "LUN C-Mode"}, {"vendor": "NETAPP", "model": "LUN C-Mode"}),
    ("mru", "satp-rule", {"device": NAA2}, {"device": NAA2}),
    ("dm:service-time:failback=immediate", "multipath.conf", {"vendor": "NETAPP", "model": "LUN.*"}, {"vendor": "NETAPP", "product": "LUN.*"}),
    ("dm:round-robin:path_grouping_policy=multibus", "multipath.conf", {}, {"wwid": None}),
    (
        "dm:historical-service-time:base_weight=900,failback=15",
        "multipath.conf",
        {"device": "3600a098038314c4a433f5774717a3046"},
        {"wwid": "3600a098038314c4a433f5774717a3046"},
    ),
    ("dm:queue-length:path_grouping_policy=failover", "multipath.conf", {}, {}),
    ("nvme:queue-depth", "nvme-udev", {"model": "NetApp ONTAP Controller"}, {"model": "NetApp ONTAP Controller"}),
    ("nvme:round-robin", "nvme-udev", {"device": "nqn.1992-08.com.netapp:sn.1:subsystem.a"}, {"nqn": "nqn.1992-08.com.netapp:sn.1:subsystem.a"}),
    ("nvme:numa", "nvme-udev", {}, {"model": None, "nqn": None}),
    ("mpio:lqd", "powershell", {}, {"disk": None}),
    ("mpio:fo", "powershell", {}, {"disk": None}),
    ("mpio:rrws", "powershell", {}, {"disk": None}),
    ("mpio:lb", "powershell", {"device": "MPIO Disk1"}, {"disk": 1}),
]


@pytest.mark.parametrize(("spec", "kind", "options", "found"), EMITS, ids=[f"{c[1]}:{c[0]}" for c in EMITS])
def test_emitted_text_reads_back_as_the_same_setting(spec, kind, options, found):
    text = emit(spec, kind, **options)
    back = read_emitted(kind, text)
    assert back.spec == parse_spec(spec)[0].text
    for key, value in found.items():
        assert getattr(back, key) == value


def test_every_emit_kind_is_covered():
    assert {k for _, k, _, _ in EMITS} == set(EMIT_KINDS)


def test_emitted_multipath_conf_imports_as_the_same_policy(tmp_path):
    conf = tmp_path / "multipath.conf"
    conf.write_text(emit("dm:round-robin:failback=45", "multipath.conf", vendor="NETAPP", model="LUN"))
    imp = import_outputs("multipath", [DATA / "multipath-ll.txt", conf])
    # the running map's selector is service-time (the -ll says so); the conf gives grouping and failback
    assert imp.scenario.runs[0].policy.text == "dm:service-time:failback=45"
    assert any("sets path_selector \"round-robin 0\" but the map runs 'service-time 0'" in n for n in imp.notes)


def test_emitted_udev_rule_matches_nvme_clis_own():
    shipped = (
        'ACTION=="add", SUBSYSTEM=="nvme-subsystem", ATTR{subsystype}=="nvm", ATTR{model}=="NetApp ONTAP Controller", ATTR{iopolicy}="queue-depth"'
    )
    assert shipped in emit("preset:nvme-netapp-ontap", "nvme-udev", model="NetApp ONTAP Controller").splitlines()


def test_brief_examples_are_what_emit_writes():
    assert (
        "esxcli storage nmp psp roundrobin deviceconfig set --device=naa.1 --type=latency --num-sampling-cycles=16 --latency-eval-time=180000"
    ) in emit("latency", "esxcli", device="naa.1")
    assert 'esxcli storage nmp satp rule add -s VMW_SATP_ALUA -V PURE -M FlashArray -P VMW_PSP_RR -O "iops=1"' in emit(
        "rr:iops=1", "satp-rule", vendor="PURE", model="FlashArray"
    )
    assert 'path_selector "service-time 0"' in emit("dm:service-time", "multipath.conf", vendor="NETAPP", model="LUN")
    assert "Set-MSDSMGlobalDefaultLoadBalancePolicy -Policy LQD" in emit("mpio:lqd", "powershell")
    assert "mpclaim.exe -l -d 1 4" in emit("mpio:lqd", "powershell", device="1")


def test_simulate_emit_prints_only_the_setting(capsys):
    assert main(["simulate", "--policy", "latency:latency_eval_time=30000", "--emit", "esxcli", "--device", NAA1]) == 0
    out, _ = capsys.readouterr()
    assert read_emitted("esxcli", out).spec == "latency:latency_eval_time=30000"


# -- presets ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_resolves_and_cites_its_source(name):
    p = PRESETS[name]
    spec, opts = parse_spec(f"preset:{name}")
    assert spec.text == parse_spec(p.spec)[0].text and opts["label"] == f"preset:{name}"
    assert p.url.startswith("https://") and p.source and p.setting
    if p.system == "linux-dm":
        assert "0.14.3" in p.source


def test_preset_keys_override_and_label():
    spec, opts = parse_spec("preset:dm-netapp-ontap:failback=manual,preferred_array=local")
    assert spec.text == "dm:service-time" and opts == {
        "preferred_array": "local",
        "label": "preset:dm-netapp-ontap:failback=manual,preferred_array=local",
    }


def test_presets_run_on_the_test_drive(capsys):
    assert (
        main(
            ["simulate", "--policy", "preset:esxi-satp-alua-default", "--policy", "preset:esxi-pure-flasharray", "--duration", "0.2", "-q", "--json"]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert [(r["policy"], r["spec"]) for r in doc["runs"]] == [("preset:esxi-satp-alua-default", "mru"), ("preset:esxi-pure-flasharray", "rr:iops=1")]


def test_presets_listing(capsys):
    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    assert all(f"preset:{n}" in out for n in PRESETS)
    assert "48263a3e9" in out and "0.14.3" in out
    assert main(["policies", "--presets", "--markdown"]) == 0
    assert capsys.readouterr().out.count("\n") == len(PRESETS) + 2


def test_docs_presets_table_is_current():
    from pathsel.cli.listings import presets_text

    page = (ROOT / "docs" / "emit.md").read_text(encoding="utf-8")
    start = page.index("<!-- generated by `pathsel presets --markdown` -->\n") + len("<!-- generated by `pathsel presets --markdown` -->\n")
    assert page[start : page.index("<!-- end of the generated table -->")] == presets_text(markdown=True), (
        "paste `pathsel presets --markdown` over the table in docs/emit.md"
    )
