"""Policy specs in the words users know, and what every built-in policy promises.

The grammar: ``NAME[:key=value,...]`` with family names ``dm:``, ``nvme:``,
``mpio:``, ``hpp:`` (``dm:historical-service-time:base_weight=972``); the
ESXi specs keep their meaning exactly; bad specs give one line. Then, for
every built-in policy: a factory, a cited source and assumptions in its
module, a row in docs/policies.md, only usable paths under random events,
a one-line config string, and a short run on the reference engine.
"""

from __future__ import annotations

import importlib
import random

import numpy as np
import pytest

import pathsel
from pathsel.policies import POLICY_DEFS, build_policy, parse_spec
from pathsel.policies.registry import BUILTIN, families

from .conftest import ROOT
from .policy_rig import Rig

NEW = [n for n in POLICY_DEFS if n not in ("fixed", "mru", "rr", "latency")]


@pytest.mark.parametrize(
    "text, name, params",
    [
        ("dm:service-time", "dm:service-time", {"path_grouping_policy": "group_by_prio", "failback": "manual"}),
        ("dm:service-time 0", "dm:service-time", {}),  # multipath.conf's selector spelling
        ("dm:st", "dm:service-time", {}),
        ("DM:Service-Time", "dm:service-time", {}),
        ("dm:historical-service-time:base_weight=972", "dm:historical-service-time", {"base_weight": 972, "threshold_multiplier": 0}),
        ("dm:hst:base-weight=900,threshold-multiplier=2", "dm:historical-service-time", {"base_weight": 900, "threshold_multiplier": 2}),
        ("dm:rr:failback=immediate", "dm:round-robin", {"failback": "immediate"}),
        ("dm:ql:failback=60", "dm:queue-length", {"failback": "60"}),
        ("dm:queue-length:path_grouping_policy=multibus", "dm:queue-length", {"path_grouping_policy": "multibus"}),
        ("nvme:queue-depth", "nvme:queue-depth", {}),
        ("nvme:qd", "nvme:queue-depth", {}),
        ("nvme:numa", "nvme:numa", {}),
        ("mpio:lqd", "mpio:lqd", {}),
        ("mpio:LQD", "mpio:lqd", {}),
        ("mpio:foo", "mpio:fo", {"failback": 1}),
        ("hpp:lb-latency", "hpp:lb-latency", {"latency_eval_time": 30000, "sampling_ios_per_path": 16}),
        ("hpp:LB-RR:iops=1", "hpp:lb-rr", {"iops": 1, "bytes": 10485760}),
        ("hpp:fixed:preferred=vmhba1:C0:T3:L1", "hpp:fixed", {"preferred": "vmhba1:C0:T3:L1"}),
        ("p2c-ewma", "p2c-ewma", {"decay": 10.0, "use_ano": 0}),
        ("p2c-ewma:decay=2.5", "p2c-ewma", {"decay": 2.5}),
    ],
)
def test_spec_names_and_params(text, name, params):
    spec, run_opts = parse_spec(text)
    assert spec.name == name
    assert run_opts == {}
    for k, v in params.items():
        assert spec[k] == v
    assert parse_spec(spec.text)[0] == spec  # the canonical text round-trips


def test_family_spec_with_run_keys_and_toml_params():
    spec, run_opts = parse_spec("dm:st:preferred_array=local,label=x", {"failback": 30})
    assert spec["failback"] == "30"
    assert run_opts == {"preferred_array": "local", "label": "x"}
    assert spec.text == "dm:service-time:failback=30"


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("rr:iops=1", "rr:iops=1"),
        ("rr", "rr"),
        ("rr:bytes=65536", "rr:bytes=65536"),
        ("rr:type=latency", "latency"),
        ("VMW_PSP_RR:iops=1", "rr:iops=1"),
        ("latency:num-sampling-cycles=32,variant=score", "latency:num_sampling_cycles=32,variant=score"),
        ("fixed:preferred=vmhba1:C0:T3:L1", "fixed:preferred=vmhba1:C0:T3:L1"),
        ("mru", "mru"),
    ],
)
def test_esxi_specs_unchanged(text, canonical):
    assert parse_spec(text)[0].text == canonical


BAD = [
    ("bogus", "unknown policy 'bogus' (known: fixed, mru, rr, latency, p2c-ewma, guard, oracle; "),
    ("dm", "dm: needs a policy name, one of dm:round-robin, dm:queue-length, dm:service-time, dm:historical-service-time"),
    ("dm:", "dm: needs a policy name"),
    (
        "dm:fastest",
        "unknown policy 'dm:fastest' (dm policies: dm:round-robin, dm:queue-length, dm:service-time, dm:historical-service-time, dm:io-affinity)",
    ),
    ("nvme:least-latency", "unknown policy 'nvme:least-latency' (nvme policies: nvme:numa, nvme:round-robin, nvme:queue-depth, nvme:adaptive)"),
    ("dm:st:failback=0", "failback must be immediate, manual, followover or a whole number of seconds > 0, got '0'"),
    ("dm:st:failback=followme", "failback must be immediate, manual, followover or a whole number of seconds > 0, got 'followme'"),
    ("dm:st:san_path_err_threshold=-1", "san_path_err_threshold must be no or a whole number > 0, got '-1'"),
    ("dm:st:polling_interval=0", "polling_interval must be a number of seconds in 0.001..2147483647, got '0'"),
    ("dm:st:path_grouping_policy=group_by_serial", "path_grouping_policy must be one of group_by_prio, multibus, failover, got 'group_by_serial'"),
    ("dm:hst:base_weight=1024", "base_weight must be in 0..1023, got 1024"),
    ("dm:hst:base_weight=0.5", "base_weight must be an integer, got '0.5'"),
    ("dm:rr:repeat_count=2", "dm:round-robin has no parameter 'repeat_count' (parameters: path_grouping_policy, failback, polling_interval, "),
    ("nvme:numa:node=1", "nvme:numa has no parameter 'node' (parameters: none)"),
    ("mpio:fo:failback=2", "failback must be in 0..1, got 2"),
    ("hpp:lb-rr:bytes=104857601", "bytes must be in 1..104857600, got 104857601"),
    ("hpp:lb-iops:iops=0", "iops must be in 1..10000, got 0"),
    ("p2c-ewma:decay=-1", "decay must be in 0.001..86400, got -1.0"),
    ("p2c-ewma:decay", "'decay' in policy spec 'p2c-ewma:decay' is not key=value"),
]


@pytest.mark.parametrize("text, message", BAD, ids=[b[0] for b in BAD])
def test_bad_specs_give_one_line(text, message):
    with pytest.raises(ValueError) as e:
        parse_spec(text)
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


def test_bad_spec_through_the_api_is_one_located_line():
    with pytest.raises(pathsel.ScenarioError) as e:
        pathsel.simulate(policies=["dm:hst:base_weight=2000"], duration=0.01)
    assert "base_weight must be in 0..1023, got 2000" in str(e.value)
    assert "\n" not in str(e.value)


# -- every built-in policy ----------------------------------------------------------------
def test_every_spec_has_a_class_and_valid_defaults():
    assert [d.name for d in BUILTIN] == list(POLICY_DEFS)  # the registry is the one list
    for name, d in POLICY_DEFS.items():
        assert d.summary and d.source, name
        for p in d.params:
            assert p.coerce(p.default) == p.default, (name, p.name)
        pol = build_policy(name)
        assert pol.name == name
    assert all(n.partition(":")[0] in families() for n in POLICY_DEFS if ":" in n)
    assert {"dm", "hpp", "mpio", "nvme"} <= set(families())


@pytest.mark.parametrize("module", ["esxi", "dm", "dm_mpath", "dm_ps", "nvme", "mpio", "hpp", "p2c"])
def test_each_module_cites_its_source_and_names_its_assumptions(module):
    doc = importlib.import_module(f"pathsel.policies.{module}").__doc__
    assert "Source" in doc
    assert "Assumption" in doc


def test_docs_table_is_the_generated_one():
    from pathsel.policies.registry import markdown_table

    text = (ROOT / "docs" / "policies.md").read_text(encoding="utf-8")
    assert markdown_table() in text, "docs/policies.md's table is stale: paste `pathsel policies --markdown` over it"
    rows = {line.split("`")[1] for line in text.splitlines() if line.startswith("| `")}
    assert set(POLICY_DEFS) == rows
    for d in POLICY_DEFS.values():
        assert d.source and d.counts and d.notes, d.name


@pytest.mark.parametrize("name", list(POLICY_DEFS))
def test_only_usable_paths_under_random_events(name):
    rnd = random.Random(name)
    states = ["AO", "ANO", "standby", "unavailable"]
    rig = Rig([rnd.choice(["AO", "AO", "ANO"]) for _ in range(5)], controllers=[0, 1, 2, 0, 1], weights=[3, 1, 2, 1, 0])
    pol = rig.bind(build_policy(name), rng=np.random.default_rng(3))
    inflight = []
    for step in range(1500):
        r = rnd.random()
        if r < 0.45:
            io, p = rig.pick(rnd.choice([512, 4096, 65536]))
            if p is not None:
                assert p.usable, (name, step, p)
                inflight.append((io, p))
        elif r < 0.8 and inflight:
            io, p = inflight.pop(rnd.randrange(len(inflight)))
            rig.now += rnd.random() * 1e-3
            if rig.table.up[p.index]:
                rig.complete(io, p)
            else:
                rig.table.end(p.index, io.size)  # lost with its path: the policy is not told
        elif r < 0.9:
            rig.now += rnd.random() * 5.0
        else:
            i = rnd.randrange(5)
            if rnd.random() < 0.5:
                (rig.up if not rig.table.up[i] else rig.down)(i)
            else:
                rig.alua(i, rnd.choice(states))
        usable = any(v.usable for v in rig.views)
        # fixed: its preferred path only; dm:io-affinity: only the paths its CPU map holds (one per node, here the
        # group's first): when those have failed it has none, as ioa_select_path returns NULL
        if r < 0.45 and usable and name not in ("fixed", "hpp:fixed", "dm:io-affinity"):
            assert p is not None, (name, step)
    assert "\n" not in pol.config_string()


SMALL = """
name = "small"
seed = 5
duration = "200ms"
interval = "10ms"
protocol = "scsi"

[[arrays]]
name = "a"
service_time = {{ read = {{ dist = "exponential", mean = "50us" }}, write = {{ dist = "exponential", mean = "50us" }} }}

[[paths]]
name = "p{{i}}"
count = 3
array = "a"
one_way_latency = "20us"

[[workloads]]
rw = "randrw"
bs = "4k/50:64k/50"
iodepth = 6

[[faults]]
at = "50ms"
what = "path_down"
path = "p{down}"

[[faults]]
at = "120ms"
what = "path_up"
path = "p{down}"
"""


@pytest.mark.parametrize("name", NEW)
def test_short_reference_run_with_a_path_failure(name):
    sc = pathsel.loads_scenario(SMALL.format(down=0))
    res = pathsel.simulate(sc, policies=[name], engine="reference")
    run = res.runs[0]
    acc = run.accounting
    assert acc["issued"] == acc["completed"] + acc["failed"] + acc["in_flight"]
    assert acc["completed"] > 500
    ts = run.metrics.ts_path_ios
    p0 = next(p.index for p in run.model.paths if p.name == "p0")
    assert ts[6:12, p0].sum() == 0  # nothing completes on p0 while it is down (60-120 ms)
    again = pathsel.simulate(sc, policies=[name], engine="reference").runs[0]
    assert again.iops == run.iops  # same seed, same run
