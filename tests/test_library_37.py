"""Issue 37's library scenarios and fresh generator: situations written from public descriptions.

The library gains the kinds of situation guard was never designed on (a 10GbE
path beside a 1GbE one at 256 KiB, periodic ISL bursts, queue depth 1 with one
fabric longer, heavy-tailed paths, a busy local array in a metro pair, twelve
hosts on two target ports, a faster NIC on the far NUMA node, a workload that
changes phase, an array with few command slots, a slow path that recovers);
the fresh generator draws them too. Each new file runs on both engines with
identical JSON; every generated scenario loads and runs.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import pathsel
from pathsel.studies.fresh import TROUBLES, VARIANTS, fresh_scenarios, write_fresh

LIBRARY = Path(__file__).resolve().parent.parent / "sims" / "library"
NEW = [
    "fabric-iscsi-10g-beside-1g-256k",
    "gray-isl-periodic-bursts",
    "fabric-qd1-redo-log-longer-fabric",
    "fabric-heavy-tailed-fast-paths",
    "metro-uniform-busy-local-array",
    "scale-12-hosts-two-target-ports",
    "fabric-numa-fast-nic-far-socket",
    "mixed-phase-change-reads-then-writes",
    "metro-uniform-fewer-slots",
    "gray-slow-path-recovers",
]


@pytest.mark.parametrize("stem", NEW)
def test_each_new_file_cites_a_public_source_and_is_listed(stem):
    path = LIBRARY / f"{stem}.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert "http" in data["source"] and "../" not in data["source"]
    assert f"[`{stem}.toml`]({stem}.toml)" in (LIBRARY / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("stem", NEW)
def test_each_new_file_gives_the_same_json_on_both_engines(stem):
    path = LIBRARY / f"{stem}.toml"
    runs = [pathsel.simulate(path, policies=["dm:historical-service-time", "rr"], duration="60ms", engine=e).to_dict() for e in ("fast", "reference")]
    for r in runs:
        r.pop("engine", None)
    assert json.dumps(runs[0], sort_keys=True) == json.dumps(runs[1], sort_keys=True)


def test_the_recovering_path_heals_and_the_bursts_recur():
    slow = pathsel.load_scenario(LIBRARY / "gray-slow-path-recovers.toml").model
    assert [(f.what, f.duration) for f in slow.faults] == [("latency", pytest.approx(0.4))]
    bursts = pathsel.load_scenario(LIBRARY / "gray-isl-periodic-bursts.toml").model
    assert len(bursts.faults) == 5 and all(f.link == "isl-a" and f.duration for f in bursts.faults)


def test_the_phase_change_alternates_reads_and_writes():
    model = pathsel.load_scenario(LIBRARY / "mixed-phase-change-reads-then-writes.toml").model
    assert sorted(w.rw for w in model.workloads) == ["randread", "write"]
    assert all(w.rate_schedule_period for w in model.workloads)


def test_fresh_scenarios_of_one_seed_are_identical_text():
    assert fresh_scenarios(20) == fresh_scenarios(20)
    assert fresh_scenarios(20, seed=20261123) == fresh_scenarios(20)
    assert fresh_scenarios(20, seed=7) != fresh_scenarios(20)


def test_sixty_fresh_scenarios_load_and_run_and_cover_the_new_kinds(tmp_path):
    files = write_fresh(tmp_path, 60)
    troubles, variants = set(), set()
    for f in files:
        text = f.read_text(encoding="utf-8")
        troubles.add(tomllib.loads(text)["name"].split("-", 2)[2].replace("-", "_"))
        variants.add(tomllib.loads(text)["description"].rsplit("set-up: ", 1)[1].replace(" ", "_"))
        result = pathsel.simulate(f, policies=["rr"], duration="20ms", engine="fast")
        acc = result.runs[0].accounting
        assert acc["balanced"] and acc["completed"] > 0, (f.name, acc)
    assert troubles <= set(TROUBLES) and variants <= set(VARIANTS)
    assert {"slow_path_recovers", "periodic_bursts", "heavy_tails", "busy_local_array"} <= troubles
    assert set(VARIANTS) == variants


def test_both_engines_agree_on_a_fresh_scenario_of_each_new_kind(tmp_path):
    seen: set[str] = set()
    for f in write_fresh(tmp_path, 60):
        data = tomllib.loads(f.read_text(encoding="utf-8"))
        kinds = {data["description"].rsplit("set-up: ", 1)[1], f.stem.split("-", 2)[2]}
        if kinds <= seen:
            continue
        seen |= kinds
        runs = [pathsel.simulate(f, policies=["dm:historical-service-time"], duration="20ms", engine=e).to_dict() for e in ("fast", "reference")]
        for r in runs:
            r.pop("engine", None)
        assert json.dumps(runs[0], sort_keys=True) == json.dumps(runs[1], sort_keys=True), f.name
