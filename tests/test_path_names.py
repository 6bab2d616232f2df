"""Issue 48: a path is named as its host prints it, wherever a path is named.

Every device's path has the concrete runtime name its system prints (ESXi ``vmhba1:C0:T0:L3``, Linux
``H:C:T:L``, NVMe ``nvme0c1n3``); a nexus (``vmhba1:C0:T0``, as pathsel prints it) addresses every device's path
over it; the template as written (``vmhba1:C0:T0:L{lun}``) stays accepted as input and is never printed. Tables of
every form in a fault and in ``fixed:preferred=``, what a bad name is told, and no emitted line of any emitter for
any example holding a template.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
from pathlib import Path

import pytest

from pathsel.cli.systems import emit_simulate
from pathsel.errors import ScenarioError
from pathsel.model.compile import compile_model
from pathsel.policies.selectors import fixed_preferred
from pathsel.scenario.load import Scenario, load_scenario
from pathsel.scenario.names import path_names
from pathsel.scenario.systems import EMIT_KINDS

SIMS = Path(__file__).resolve().parent.parent / "sims"

# two LUNs over four nexuses, one host: ESXi, Linux dm-multipath and NVMe spellings of the same SAN
SAN = """
name = "names"
seed = 1
duration = "20ms"
protocol = "{protocol}"

[[arrays]]
name = "array"
controllers = ["A", "B"]
port_groups = [{{ name = "tpg-A", controller = "A" }}, {{ name = "tpg-B", controller = "B" }}]
service_time = "100us"

[[hosts]]
name = "h1"

[[volumes]]
name = "naa.600a0"
lun = {lun0}

[[volumes]]
name = "naa.600a1"
lun = {lun1}

[[paths]]
name = "{a}"
count = 2
array = "array"
port_group = "tpg-A"
one_way_latency = "20us"

[[paths]]
name = "{b}"
count = 2
start = 2
array = "array"
port_group = "tpg-B"
one_way_latency = "20us"

[[workloads]]
name = "vm1"
volume = "naa.600a0"
rw = "randread"
bs = "4k"
iodepth = 4

[[workloads]]
name = "vm2"
volume = "naa.600a1"
rw = "randread"
bs = "4k"
iodepth = 4
"""

SYSTEMS = {
    "esxi": dict(protocol="scsi", a="vmhba1:C0:T{i}:L{lun}", b="vmhba2:C0:T{i}:L{lun}", lun0=3, lun1=4),
    "linux": dict(protocol="scsi", a="1:0:{i}:{lun}", b="2:0:{i}:{lun}", lun0=3, lun1=4),
    "nvme": dict(protocol="nvme", a="nvme0c{i}n{lun}", b="nvme0c{i}n{lun}", lun0=1, lun1=2),
}


def _scenario(tmp_path: Path, system: str, fault_path: str | None = None) -> Path:
    text = SAN.format(**SYSTEMS[system])  # the values' own braces are kept: format does not read them
    if fault_path is not None:
        text += f'\n[[faults]]\nat = "10ms"\nwhat = "path_down"\npath = "{fault_path}"\n'
    f = tmp_path / f"{system}.toml"
    f.write_text(text, encoding="utf-8")
    return f


# (system, a name as written, the nexus it addresses as pathsel prints it, the device path preferred= picks on the
# first device and on the second: None for the first AO path, which a device without the named path keeps)
CASES = [
    ("esxi", "vmhba2:C0:T3:L3", "vmhba2:C0:T3", "vmhba2:C0:T3:L3", None),  # one device's path, as ESXi prints it
    ("esxi", "vmhba2:C0:T3:L4", "vmhba2:C0:T3", None, "vmhba2:C0:T3:L4"),
    ("esxi", "vmhba2:C0:T3", "vmhba2:C0:T3", "vmhba2:C0:T3:L3", "vmhba2:C0:T3:L4"),  # the nexus: its path on each
    ("esxi", "vmhba2:C0:T3:L{lun}", "vmhba2:C0:T3", "vmhba2:C0:T3:L3", "vmhba2:C0:T3:L4"),  # the template, as before
    ("linux", "2:0:3:4", "2:0:3", None, "2:0:3:4"),  # multipath -ll's H:C:T:L
    ("linux", "2:0:3:4 sdk", "2:0:3", None, "2:0:3:4"),  # its path line as pasted, device node and all
    ("linux", "2:0:3", "2:0:3", "2:0:3:3", "2:0:3:4"),
    ("linux", "2:0:3:{lun}", "2:0:3", "2:0:3:3", "2:0:3:4"),
    ("nvme", "nvme0c3n2", "nvme0c3", None, "nvme0c3n2"),
    ("nvme", "nvme0c3", "nvme0c3", "nvme0c3n1", "nvme0c3n2"),
    ("nvme", "nvme0c3n{lun}", "nvme0c3", "nvme0c3n1", "nvme0c3n2"),
]


@pytest.mark.parametrize(("system", "given", "nexus", "first", "second"), CASES)
def test_every_runtime_name_is_accepted_in_a_fault(tmp_path, system, given, nexus, first, second):
    """A fault takes the nexus its name addresses: a device's path, the nexus or the template alike."""
    scenario = load_scenario(_scenario(tmp_path, system, given))
    model = compile_model(scenario, scenario.runs[0])
    (fault,) = [f for f in model.faults if not f.revert]
    assert [model.controllers[c].name for c in fault.controllers] == [nexus]


@pytest.mark.parametrize(("system", "given", "nexus", "first", "second"), CASES)
def test_every_runtime_name_is_accepted_in_fixed_preferred(tmp_path, system, given, nexus, first, second):
    """fixed:preferred= keeps one spelling (never a template) and prefers the device's path it names."""
    spec = "fixed" if system != "nvme" else "hpp:fixed"
    scenario = load_scenario(_scenario(tmp_path, system)).with_policies([f"{spec}:preferred={given}"])
    run = scenario.runs[0]
    assert "{" not in run.policy["preferred"] and "{" not in run.label
    model = compile_model(scenario, run)
    chosen = []
    for d in range(len(model.devices)):
        paths = [_Path(p.name, p.alua, model.controllers[p.controller].name) for p in model.device_paths(d)]
        ao = next(p for p in paths if p.alua == "AO")
        pick = fixed_preferred(paths, run.policy["preferred"])
        chosen.append(None if pick is ao and pick.name not in (first, second) else pick.name)
    assert chosen == [first, second]


class _Path:
    def __init__(self, name: str, alua: str, nexus: str) -> None:
        self.name, self.alua, self.nexus = name, alua, nexus


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_nexus_preferred_runs_on_each_device_s_path_over_it(tmp_path, engine):
    """Both engines send each device's I/O down its own path over the nexus named (an ANO one for LUN 3 here)."""
    from pathsel.api import simulate

    scenario = load_scenario(_scenario(tmp_path, "esxi")).with_policies(["fixed:preferred=vmhba2:C0:T3"])
    doc = simulate(scenario, engine=engine).to_dict()
    busy = sorted(p["name"] for r in doc["runs"] for p in r["paths"] if p["ios"] > 0)
    assert busy == ["vmhba2:C0:T3:L3", "vmhba2:C0:T3:L4"]


@pytest.mark.parametrize(
    ("system", "given", "hint"),
    [
        ("esxi", "vmhba2:C0:T3:L5", "vmhba2:C0:T3:L4"),
        ("esxi", "vmhba2:C0:T9", "vmhba2:C0:T3"),
        ("linux", "2:0:9:3", "2:0:3:3"),
        ("nvme", "nvme0c9", "nvme0c3"),
    ],
)
def test_a_name_no_host_has_is_told_the_real_names(tmp_path, system, given, hint):
    """One located line: the closest real name and the host's nexuses, never a template."""
    with pytest.raises(ScenarioError) as e:
        load_scenario(_scenario(tmp_path, system, given))
    line = str(e.value)
    assert len(line.splitlines()) == 1 and "faults[0].path" in line
    assert f"did you mean {hint!r}" in line and "{" not in line
    with pytest.raises(ScenarioError) as e:
        load_scenario(_scenario(tmp_path, system)).with_policies([f"fixed:preferred={given}"])
    assert f"did you mean {hint!r}" in str(e.value) and "{" not in str(e.value).replace(given, "")


def test_path_names_agree_with_the_model():
    """The loader's names (what a fault or preferred= may say) are the model's device paths, on every example."""
    for f in sorted([*SIMS.glob("*.toml"), *SIMS.glob("library/*.toml")]):
        scenario = load_scenario(f)
        model = compile_model(scenario, scenario.runs[0])
        names = path_names(scenario.model)
        for h, host in enumerate(model.hosts):
            want = sorted(p.name for p in model.paths if p.host == h)
            assert sorted(names[host].paths) == want, f
            for p in model.paths:
                if p.host == h:
                    assert names[host].group(p.name) is not None, (f, p.name)
                    assert names[host].canonical(model.controllers[p.controller].name) == model.controllers[p.controller].name


# the formats' own braces: multipath.conf's sections, udev's ATTR{key}; anything else is a template
_SYNTAX = re.compile(r"\b(?:ATTRS?|ENV)\{[a-z_]+\}|\s\{$|^\s*\}$")


def _emitted(scenario: Scenario, kind: str, device: str | None) -> str | None:
    args = argparse.Namespace(emit=kind, device=device, vendor=None, model=None, satp="VMW_SATP_ALUA", sched_num_req_outstanding=None)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            emit_simulate(args, scenario)
    except ScenarioError:
        return None  # refused, in one line (tests/test_emit_injection.py): nothing emitted
    return out.getvalue()


def _specs(scenario: Scenario) -> list[str]:
    specs = [r.policy.text for r in scenario.runs if r.builtin and r.policy is not None and not r.devices]
    groups = [g.name.replace("{i}", str(g.start)) for g in scenario.model.paths]
    specs += [f"fixed:preferred={g}" for g in groups[:1]]  # the template as written, where the file has one
    names = next(iter(path_names(scenario.model).values()), None)
    if names is not None:
        specs += [f"fixed:preferred={n}" for n in names.nexus_names()[:1]]
        specs += [f"fixed:preferred={n}" for n in list(names.paths)[-1:]]
    return list(dict.fromkeys(s for s in specs if "," not in s))


def test_no_emitted_line_holds_a_template():
    """Every emitter, every example, its own policies and a preferred path written as a template, a nexus and a
    device's path: no emitted line has a brace but the format's own."""
    seen = 0
    for f in sorted([*SIMS.glob("*.toml"), *SIMS.glob("library/*.toml")]):
        base = load_scenario(f)
        volumes = [v.name for v in base.model.volumes]
        for spec in _specs(base):
            try:
                scenario = base.with_policies([spec])
            except ScenarioError:
                continue
            for kind in EMIT_KINDS:
                for device in dict.fromkeys([None, volumes[-1] if volumes else "naa.1"]):
                    text = _emitted(scenario, kind, device)
                    if text is None:
                        continue
                    seen += 1
                    for line in text.splitlines():
                        assert "{" not in _SYNTAX.sub("", line), (f.name, spec, kind, device, line)
    assert seen > 100


def test_esxcli_refuses_a_template_or_a_nexus_as_the_path():
    """Without a scenario to name each device's path, esxcli's --path must be one: one located line otherwise."""
    from pathsel.scenario.systems import emit

    for preferred in ("vmhba2:C0:T0:L{lun}", "vmhba2:C0:T0"):
        with pytest.raises(ScenarioError) as e:
            emit(f"fixed:preferred={preferred}", "esxcli", device="naa.1")
        assert e.value.place == "--policy fixed:preferred" and len(str(e.value).splitlines()) == 1
    assert "--path=vmhba2:C0:T0:L3" in emit("fixed:preferred=vmhba2:C0:T0:L3", "esxcli", device="naa.1")


def test_esxcli_from_a_scenario_names_each_device_s_path(tmp_path):
    """One block per device (esxcli sets a preferred path per device), each on its own path over the nexus."""
    scenario = load_scenario(_scenario(tmp_path, "esxi")).with_policies(["fixed:preferred=vmhba2:C0:T3:L{lun}"])
    text = _emitted(scenario, "esxcli", None)
    assert text is not None
    calls = [line for line in text.splitlines() if line.startswith("esxcli")]
    assert calls == [
        "esxcli storage nmp device set --device=naa.600a0 --psp=VMW_PSP_FIXED",
        "esxcli storage nmp psp fixed deviceconfig set --device=naa.600a0 --path=vmhba2:C0:T3:L3",
        "esxcli storage nmp device set --device=naa.600a1 --psp=VMW_PSP_FIXED",
        "esxcli storage nmp psp fixed deviceconfig set --device=naa.600a1 --path=vmhba2:C0:T3:L4",
    ]
    one = _emitted(scenario, "esxcli", "naa.600a1")
    assert one is not None and [line for line in one.splitlines() if line.startswith("esxcli")] == calls[2:]
    assert _emitted(scenario, "esxcli", "naa.ffff") is None  # not a volume of the scenario: refused in one line


@pytest.mark.parametrize(
    ("given", "changed"),
    [
        ("vmhba2:C0:T3:L3", ["vmhba2:C0:T3:L3"]),  # ALUA states are per LUN: one device's path, that device only
        ("vmhba2:C0:T3", None),  # the nexus: every device's path over it, as before
        ("vmhba2:C0:T3:L{lun}", None),
    ],
)
def test_an_alua_change_on_one_device_s_path_changes_that_device(tmp_path, given, changed):
    text = _scenario(tmp_path, "esxi").read_text(encoding="utf-8")
    text += f'\n[[faults]]\nat = "10ms"\nwhat = "alua"\nstate = "standby"\npath = "{given}"\n'
    f = tmp_path / "alua.toml"
    f.write_text(text, encoding="utf-8")
    scenario = load_scenario(f)
    model = compile_model(scenario, scenario.runs[0])
    (fault,) = model.faults
    if changed is None:
        assert [model.controllers[c].name for c in fault.controllers] == ["vmhba2:C0:T3"] and fault.paths == ()
    else:
        assert [model.paths[p].name for p in fault.paths] == changed and fault.states == ("standby",)
        assert fault.target == f"volume naa.600a0 path {given}"


def test_a_volume_without_lun_has_one_lun_on_every_host(tmp_path):
    """{lun} of a volume without lun is its place among the volumes: host 2 prints host 1's L0 and L1 (a LUN ID is
    the same on every host it is presented to), not the device's number in the run (L2, L3)."""
    text = _scenario(tmp_path, "esxi").read_text(encoding="utf-8")
    text = re.sub(r"\nlun = [0-9]+", "", text).replace('[[hosts]]\nname = "h1"\n', '[[hosts]]\nname = "h1"\n\n[[hosts]]\nname = "h2"\n')
    text = text.replace('one_way_latency = "20us"', 'one_way_latency = "20us"\nhost = "h1"')
    text += '\n[[paths]]\nname = "vmhba1:C0:T{i}:L{lun}"\ncount = 2\nhost = "h2"\narray = "array"\nport_group = "tpg-A"\none_way_latency = "20us"\n'
    text = text.replace('bs = "4k"', 'bs = "4k"\nhost = "h1"')
    f = tmp_path / "two.toml"
    f.write_text(text, encoding="utf-8")
    scenario = load_scenario(f)
    model = compile_model(scenario, scenario.runs[0])
    h2 = sorted(p.name for p in model.paths if model.hosts[p.host] == "h2")
    assert h2 == ["vmhba1:C0:T0:L0", "vmhba1:C0:T0:L1", "vmhba1:C0:T1:L0", "vmhba1:C0:T1:L1"]
    assert sorted(path_names(scenario.model)["h2"].paths) == h2
