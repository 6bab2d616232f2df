"""The scenario library (``sims/library/``): the ground the policy league runs every built-in policy on.

Every file is a normal scenario that ``pathsel simulate`` runs, says what it
stands for (``description``) and which public document it stands for
(``source``, with an address), is named ``<category>-<what>.toml`` for one of
the league's categories, sets its hosts' queue depths, keeps its faults inside
the run, and runs with every issued I/O accounted for. The league's budget
(each scenario x policy in at most 0.4 s of wall time once compiled) is
measured by ``benchmarks/library.py``, not here: wall time on a shared machine
is no test. What is checked here is what drives it, the simulated time.
"""

from __future__ import annotations

import re
import tomllib

import pytest

import pathsel
from pathsel import examples
from pathsel.cli import main
from pathsel.data import EXAMPLES

from .conftest import SIMS

LIBRARY = SIMS / "library"
FILES = sorted(LIBRARY.glob("*.toml"))
CATEGORIES = ("seed", "metro", "fabric", "gray", "neighbour", "scale", "mixed", "load", "failover")
URL = re.compile(r"https?://[^\s;,)]+")
MAX_SIMULATED_S = 3.5  # ramp + duration: the league's 0.4 s per run rests on short runs
POLICY = "rr:iops=1"  # one policy for every run here: one compile


def _toml(path) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def test_the_library_holds_enough_scenarios_in_every_category():
    assert len(FILES) >= 24
    by_category = {c: [f.name for f in FILES if f.name.startswith(c + "-")] for c in CATEGORIES}
    assert all(by_category.values()), {c: n for c, n in by_category.items() if not n}
    protocols = {pathsel.load_scenario(f).model.protocol for f in FILES}
    assert protocols == {"scsi", "nvme"}  # the nvme:* selectors have ground of their own


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_each_file_says_what_it_is_and_where_it_comes_from(path):
    category, _, what = path.stem.partition("-")
    assert category in CATEGORIES and what, f"{path.name}: name it <category>-<what>.toml, category one of {CATEGORIES}"
    data = _toml(path)
    sc = pathsel.load_scenario(path)  # a normal scenario: loads, every reference and policy spec checked
    assert sc.runs
    assert isinstance(data.get("name"), str) and data["name"].startswith(category + ":"), "name starts with its category"
    assert len(data.get("description", "")) >= 60, "description: what situation it stands for, in a sentence or two"
    source = data.get("source", "")
    assert URL.search(source), "source: the public document, with its address"
    assert re.search(r"\b(19|20)\d\d\b", source) or "n.d." in source, "source: with its year"
    assert "../shared" not in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_each_file_is_set_up_as_the_league_needs(path):
    model = pathsel.load_scenario(path).model
    assert all(h.queue_depth is not None for h in model.hosts), "every host states its queue depth (DQLEN, lpfc, queue_size)"
    ramp = max(w.ramp_time for w in model.workloads)
    end = ramp + model.duration
    assert end <= MAX_SIMULATED_S
    assert all(f.at < end for f in model.faults), "faults happen inside the run"
    if path.stem.startswith("load-"):
        assert any(w.rate_iops or w.rate for w in model.workloads), "load- scenarios are open loop"
    if path.stem.startswith(("gray-", "failover-")):
        conditions = any(p.loss_ppm for p in model.paths) or any(link.extra_latency for link in model.links)
        assert model.faults or conditions, "gray- and failover- scenarios have something going wrong"


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_each_file_runs_with_every_io_accounted_for(path):
    result = pathsel.simulate(path, policies=[POLICY], duration="50ms", engine="fast")
    acc = result.runs[0].accounting
    assert acc["issued"] == acc["completed"] + acc["failed"] + acc["in_flight"] and acc["balanced"], acc
    assert acc["completed"] > 0


def test_a_library_file_runs_from_the_command_line(capsys):
    assert main(["simulate", str(LIBRARY / "gray-slow-path-10x.toml"), "--policy", POLICY, "--duration", "50ms", "-q"]) == 0
    assert "gray: one FC path turns 10x slower mid-run" in capsys.readouterr().out


def test_the_library_is_installed_with_pathsel():
    names = examples.names()
    assert [n for n in names if n.startswith("library/")] == [f"library/{f.stem}" for f in FILES]
    assert examples.path("library/gray-flapping-path") == EXAMPLES / "library" / "gray-flapping-path.toml"
    assert examples.files("library/seed-cloud-metro-az")[1:] == [EXAMPLES / "data" / "ping-cross-az.txt", EXAMPLES / "data" / "ping-same-az.txt"]


def test_the_readme_lists_every_scenario_once():
    readme = (LIBRARY / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| \[`([\w.-]+\.toml)`\]", readme, flags=re.MULTILINE)
    assert sorted(listed) == [f.name for f in FILES]
    assert "../shared" not in readme
