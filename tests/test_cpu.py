"""The host's CPU (issue 33): cores as FIFO servers, CPU time per I/O, I/O queues and interrupts mapped to cores.

Both engines give the same JSON and traces on scenarios that use every part of it; a CPU-bound host does
exactly cores / CPU time per I/O; a scenario without a cpu table has no ``cpus`` key; bad input gets one
located line.
"""

from __future__ import annotations

import json
import re

import pytest

import pathsel
from pathsel.model.cpu import TRANSPORT_CPU
from pathsel.results.cpu import cpulist

from .conftest import ROOT

BASE = """
name = "cpu {name}"
seed = 33
duration = "{duration}"
protocol = "{protocol}"

[[arrays]]
name = "A"
concurrency = 64
service_time = {{ dist = "exponential", mean = "60us" }}

[[hosts]]
name = "h0"
numa_nodes = 2
io_timeout = "{io_timeout}"
detection = "2ms"
{transport}
cpu = {{ {cpu} }}

[[hosts]]
name = "h1"

[[paths]]
name = "a{{i}}"
host = "h0"
count = 2
array = "A"
one_way_latency = {{ dist = "uniform", low = "10us", high = "30us" }}
bandwidth = "25GbE"
numa_node = 0

[[paths]]
name = "b{{i}}"
host = "h0"
count = 2
array = "A"
one_way_latency = "20us"
bandwidth = "25GbE"
numa_node = 1

[[paths]]
name = "c0"
host = "h1"
array = "A"
one_way_latency = "20us"

[[workloads]]
name = "db"
host = "h0"
rw = "randrw"
rwmixread = 60
bs = "4k/50:16k/50"
iodepth = 8
numjobs = 3
numa_node = 0

[[workloads]]
name = "app"
host = "h0"
rw = "randread"
bs = "8k"
iodepth = 4
numjobs = 2
numa_node = 1
{open}

[[workloads]]
name = "other"
host = "h1"
rw = "randread"
iodepth = 4
{faults}
"""

FAULT = """
[[faults]]
at = "8ms"
what = "path_down"
path = "a0"
host = "h0"

[[faults]]
at = "14ms"
what = "path_up"
path = "a0"
host = "h0"
"""

CASES = {
    "local": dict(protocol="nvme", cpu='cores = 4, submit = "3us", complete = "5us", irq = "2us"'),
    "local-grouped-coalesced": dict(protocol="scsi", cpu="cores = 8, queues = 2, coalesce = 4"),
    "affinity-list": dict(protocol="nvme", cpu='cores = 8, queues = 3, irq_affinity = "1-2"', transport='transport = "nvme-tcp"'),
    "affinity-spread": dict(protocol="scsi", cpu='cores = 8, irq_affinity = [7, 0, 4], complete = "9us"', transport='transport = "iscsi"'),
    "faults-and-timeouts": dict(protocol="scsi", cpu='cores = 2, submit = "20us", complete = "30us"', io_timeout="300us", faults=FAULT),
    "open-loop": dict(protocol="nvme", cpu="cores = 2", open="rate_iops = 20000"),
}


def _toml(name: str, duration: str = "25ms", **over: str) -> str:
    kw = dict(name=name, duration=duration, protocol="nvme", io_timeout="30s", transport="", cpu="cores = 4", open="", faults="")
    kw.update(CASES.get(name, {}))
    kw.update(over)
    return BASE.format(**kw)


def _json(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


@pytest.mark.parametrize("name", list(CASES))
def test_engines_agree_on_cpu_scenarios(name):
    sc = pathsel.loads_scenario(_toml(name), name)
    policies = ["nvme:round-robin", "nvme:numa", "dm:service-time"]
    fast = pathsel.simulate(sc, policies=policies, engine="fast", trace=True)
    ref = pathsel.simulate(sc, policies=policies, engine="reference", trace=True)
    assert _json(fast) == _json(ref)
    for f, r in zip(fast.runs, ref.runs):
        assert f.metrics.trace == r.metrics.trace  # every I/O: same path, same times
        assert f.accounting["balanced"]
        assert [h["host"] for h in f.cpus()] == ["h0"]  # h1 has no cpu table: no cores of its own
    if name == "faults-and-timeouts":  # aborts land during the CPU's work too
        assert fast.runs[0].accounting["timed_out"] > 0


def _bound(cores: int, submit: float, complete: float, irq: float, coalesce: int, engine: str) -> pathsel.RunResult:
    toml = f"""
name = "bound"
seed = 1
duration = "40ms"
protocol = "nvme"
[[arrays]]
name = "A"
concurrency = 512
service_time = "50us"
[[hosts]]
name = "h0"
cpu = {{ cores = {cores}, submit = "{submit}us", complete = "{complete}us", irq = "{irq}us", coalesce = {coalesce} }}
[[paths]]
name = "p0"
array = "A"
one_way_latency = "10us"
[[workloads]]
rw = "randread"
iodepth = 32
numjobs = {cores}
"""
    return pathsel.simulate(pathsel.loads_scenario(toml), policies=["nvme:round-robin"], engine=engine).runs[0]


@pytest.mark.parametrize(("cores", "submit", "complete", "irq", "coalesce"), [(4, 4, 6, 2, 1), (2, 5, 7, 2, 4), (8, 1, 2, 8, 8)])
def test_a_cpu_bound_host_does_cores_over_cpu_time_per_io(cores, submit, complete, irq, coalesce):
    run = _bound(cores, submit, complete, irq, coalesce, "fast")
    per_io = (submit + complete + irq / coalesce) * 1e-6
    assert run.iops == pytest.approx(cores / per_io, rel=0.01)
    for u in run.cpus()[0]["utilisation"]:
        assert u == pytest.approx(1.0, abs=0.002)  # idle only until the first completions come back


def test_a_remote_interrupt_core_costs_the_slit_ratio():
    # the only path's adapter is on node 1; "local" completes on node 0's cores: twice the completion's CPU
    toml = """
name = "remote"
seed = 1
duration = "40ms"
protocol = "nvme"
[[arrays]]
name = "A"
concurrency = 512
service_time = "50us"
[[hosts]]
name = "h0"
numa_nodes = 2
numa_penalty = "0us"
cpu = { cores = 4, submit = "2us", complete = "4us", irq = "0us" }
[[paths]]
name = "p0"
array = "A"
one_way_latency = "10us"
numa_node = 1
[[workloads]]
rw = "randread"
iodepth = 64
numjobs = 2
"""
    run = pathsel.simulate(pathsel.loads_scenario(toml), policies=["nvme:round-robin"], engine="fast").runs[0]
    assert run.iops == pytest.approx(2 / ((2 + 2 * 4) * 1e-6), rel=0.01)  # two cores (node 0's), 10 us an I/O each
    u = run.cpus()[0]["utilisation"]
    assert u[2] == u[3] == 0.0  # node 1's cores run nothing: the jobs are on node 0


def test_few_interrupt_cores_limit_the_host():
    # 4 jobs on 4 cores, every interrupt on core 3: that core does every completion
    toml = _bound(4, 1, 1, 1, 1, "fast").model  # noqa: F841 - a warm-up of the compiled engine
    text = """
name = "one irq core"
seed = 1
duration = "40ms"
protocol = "nvme"
[[arrays]]
name = "A"
concurrency = 512
service_time = "50us"
[[hosts]]
name = "h0"
cpu = { cores = 4, submit = "1us", complete = "9us", irq = "1us", irq_affinity = "3" }
[[paths]]
name = "p0"
array = "A"
one_way_latency = "10us"
[[workloads]]
rw = "randread"
iodepth = 32
numjobs = 4
"""
    res = pathsel.simulate(pathsel.loads_scenario(text), policies=["nvme:round-robin"], engine="fast")
    run = res.runs[0]
    # core 3 submits its own job's I/Os too: 1 us each, and completes everyone's: 10 us each
    u = run.cpus()[0]["utilisation"]
    assert u[3] == pytest.approx(1.0, abs=0.001)
    assert run.iops < 1 / 10e-6
    words = " ".join(s for _, said in res.story() for s in said)
    assert "core 3 was 100 % busy" in words
    assert "host CPU" in res.table()


def test_no_cpu_table_no_cpus_key():
    text = _toml("local").replace('cpu = { cores = 4, submit = "3us", complete = "5us", irq = "2us" }', "")
    res = pathsel.simulate(pathsel.loads_scenario(text), policies=["nvme:round-robin"], engine="fast", duration=0.005)
    assert "cpus" not in json.loads(res.to_json())["runs"][0]
    assert "host CPU" not in res.table()
    assert res.cpus().empty


def test_every_transport_has_defaults():
    assert set(TRANSPORT_CPU) == {"", "fc", "nvme-fc", "nvme-roce", "nvme-tcp", "iscsi"}
    for s, c, i in TRANSPORT_CPU.values():
        assert 0 < s < 1e-4 and 0 < c < 1e-4 and 0 < i < 1e-4


def test_cpulist():
    assert cpulist([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert cpulist([3]) == "3"


BAD = [
    ("cores = 0", "hosts[0].cpu.cores", "greater than or equal to 1"),
    ("cores = -4", "hosts[0].cpu.cores", "greater than or equal to 1"),
    ('cores = 4, submit = "-1us"', "hosts[0].cpu.submit", ">= 0"),
    ('cores = 4, complete = "inf"', "hosts[0].cpu.complete", "finite"),
    ('cores = 4, irq = "nan"', "hosts[0].cpu.irq", "finite"),
    ('cores = 4, submit = "1s"', "hosts[0].cpu.submit", "at most 10ms"),
    ('cores = 4, irq_affinity = "1-4"', "hosts[0].cpu", "names core 4, but the host has cores 0-3"),
    ('cores = 4, irq_affinity = "3-1"', "hosts[0].cpu.irq_affinity", "runs backwards"),
    ('cores = 4, irq_affinity = "0-99999999999"', "hosts[0].cpu.irq_affinity", "a host has at most 4,096 cores"),
    ('cores = 4, irq_affinity = "node0"', "hosts[0].cpu.irq_affinity", "cpulist"),
    # issue 50: ASCII digits only, one message: int() read Arabic-Indic three as core 3 and refused superscript two
    # in its own words
    ('cores = 4, irq_affinity = "\u0663"', "hosts[0].cpu.irq_affinity", "'\u0663': expected \"local\" or a cpulist such as"),
    ('cores = 4, irq_affinity = "\u00b2"', "hosts[0].cpu.irq_affinity", "'\u00b2': expected \"local\" or a cpulist such as"),
    ('cores = 4, irq_affinity = "0-\u0663"', "hosts[0].cpu.irq_affinity", "'0-\u0663': expected \"local\" or a cpulist such as"),
    ('cores = 4, irq_affinity = "\uff11"', "hosts[0].cpu.irq_affinity", 'expected "local" or a cpulist such as'),
    ("cores = 4, irq_affinity = []", "hosts[0].cpu.irq_affinity", "empty list"),
    ("cores = 4, irq_affinity = [1, 1]", "hosts[0].cpu.irq_affinity", "named twice"),
    ("cores = 3", "hosts[0]", "does not split evenly over numa_nodes = 2"),
    ("cores = 4, queues = 8", "hosts[0].cpu", "more than cores = 4"),
    ("cores = 4, coalesce = 0", "hosts[0].cpu.coalesce", "greater than or equal to 1"),
    ("core = 4", "hosts[0].cpu.core", "did you mean 'cores'"),
    ("cores = 100000", "hosts[0].cpu.cores", "less than or equal to 4096"),
]


@pytest.mark.parametrize(("cpu", "place", "fragment"), BAD, ids=[b[0] for b in BAD])
def test_bad_cpu_input_gets_one_located_line(cpu, place, fragment, tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text(_toml("bad", cpu=cpu))
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario(path)
    assert info.value.place == place
    assert fragment in info.value.problem
    assert "\n" not in str(info.value)
    from pathsel.cli import main

    assert main(["simulate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(f"pathsel: error: {path}: {place}: ")


def _reference_cpu_defaults() -> dict[str, list[float]]:
    """docs/scenario-reference.md's cpu.submit, cpu.complete and cpu.irq rows, per transport, in seconds."""
    text = (ROOT / "docs" / "scenario-reference.md").read_text(encoding="utf-8")
    out: dict[str, list[float]] = {t: [] for t in TRANSPORT_CPU}
    for key in ("submit", "complete", "irq"):
        row = re.search(rf"^\| `cpu\.{key}` \|[^|]*\| by transport: ([^|]*)\|", text, re.M)
        assert row, key
        seen: set[str] = set()
        for piece in row.group(1).strip().split(", "):
            value = float(re.findall(r"([\d.]+) µs", piece)[-1]) * 1e-6
            names = set(re.findall(r"`([a-z-]+)`", piece)) | ({""} if re.search(r"\bnone\b", piece) else set())
            if piece.startswith("the others"):
                names = set(TRANSPORT_CPU) - seen
            for n in names:
                out[n].append(value)
            seen |= names
    return out


def _model_cpu_defaults() -> dict[str, list[float]]:
    """docs/model.md's sentence of default CPU times: (submit, complete, interrupt) per transport, in seconds."""
    text = " ".join((ROOT / "docs" / "model.md").read_text(encoding="utf-8").split())
    m = re.search(r"in µs \(submit, complete, interrupt\): (.*?)\. ", text)
    assert m
    out: dict[str, list[float]] = {}
    for piece in m.group(1).split("; "):
        names = re.findall(r"`([a-z-]+)`", piece) + ([""] if "no transport" in piece else [])
        values = [float(v) * 1e-6 for v in re.findall(r"(?<![\w-])(\d+(?:\.\d+)?)", piece)[-3:]]
        for n in names:
            out[n] = values
    return out


@pytest.mark.parametrize("page", [_reference_cpu_defaults, _model_cpu_defaults])
def test_docs_give_the_codes_cpu_defaults(page):
    """Both pages state every transport's (submit, complete, irq) as the code has them (iSCSI 6, 6.3, 2 µs)."""
    got = page()
    assert set(got) == set(TRANSPORT_CPU)
    for transport, want in TRANSPORT_CPU.items():
        assert got[transport] == pytest.approx(list(want), rel=1e-9), transport
