"""A fault the scenario places after the run's end (a shorter --duration) did not happen: no recovery, no stall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pathsel.cli import main

FAILOVER = Path(__file__).resolve().parent.parent / "sims" / "fast-failover.toml"  # one path_down at 2 s


def _simulate(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["simulate", str(FAILOVER), "-q", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("duration", "after_end"),
    [
        ("0.2s", True),  # the run ends at 0.2 s, before the fault at 2 s
        ("4s", False),  # the scenario's own length: the fault happens
    ],
)
def test_a_fault_past_the_end_is_marked_and_has_no_figures(capsys: pytest.CaptureFixture[str], duration: str, after_end: bool) -> None:
    (f,) = json.loads(_simulate(capsys, "--duration", duration, "--json", "--policy", "rr:iops=1"))["runs"][0]["faults"]
    assert bool(f.get("after_end")) is after_end
    if after_end:
        assert f["recovery_s"] is None and f["max_stall_ms"] is None and f["errors"] == 0
    else:
        assert f["max_stall_ms"] > 0


def test_table_and_story_say_the_fault_did_not_happen(capsys: pytest.CaptureFixture[str]) -> None:
    out = " ".join(_simulate(capsys, "--duration", "0.2s", "--policy", "rr:iops=1").split())
    assert "2s path_down nvme0c0n1: after the run's end at 0.2s, so it did not happen" in out
    assert "not recovered" not in out and "longest stall" not in out
    assert "fault at 2 s came after the run's end at 200 ms, so it did not happen" in out
    # the first sentence names what the run was about, not a fault that never came
    assert "about a path failure" not in out


def test_a_fault_past_the_end_is_not_the_next_fault_of_one_that_happened(capsys: pytest.CaptureFixture[str]) -> None:
    # numa-host: a path_down at 1 s and its path_up at 1.5 s; a 1 s run ends at 1.1 s (ramp_time 100ms)
    numa = FAILOVER.parent / "numa-host.toml"
    assert main(["simulate", str(numa), "--duration", "1s", "-q"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "until the next fault at 1.5 s" not in out
    assert "fault at 1.5 s came after the run's end" in out
