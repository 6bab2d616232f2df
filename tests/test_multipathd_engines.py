"""Both engines run multipathd's path handling alike: sims/dm-flapping-path.toml sped up 10 times (faults, detection,
io_timeout, polling_interval), with every policy of the sim, held paths and the policy's wake time included."""

from __future__ import annotations

import pytest

from .conftest import ROOT
from .test_engines import _agree, _compressed

FACTOR = 10


def _tweak(data):
    data["hosts"][0]["io_timeout"] = f"{1.0 / FACTOR * 1e6:.3f}us"
    for f in data["faults"]:
        f["add"] = f"{3.0 / FACTOR * 1e6:.3f}us"
    data["policies"] = [p + f",polling_interval={5.0 / FACTOR}" for p in data["policies"]]


@pytest.mark.parametrize("every_path", [False, True])
def test_engines_agree_on_the_flapping_dm_path(every_path):
    def tweak(data):
        _tweak(data)
        if every_path:  # both paths stall together: every path failed at once, the I/Os wait for the next check
            for f in list(data["faults"]):
                data["faults"].append(dict(f, path="sd0"))
            data["faults"].sort(key=lambda f: f["at"])

    sc = _compressed(ROOT / "sims" / "dm-flapping-path.toml", FACTOR, tweak)
    fast, _ = _agree(sc, None, trace=True)
    for f in fast.runs:
        assert f.accounting["balanced"] and f.metrics.completed > 1000


def test_the_flapping_path_sim_shows_san_path_err_and_marginal_path():
    sc = _compressed(ROOT / "sims" / "dm-flapping-path.toml", FACTOR, _tweak)
    import pathsel

    res = pathsel.simulate(sc, engine="fast")
    iops = [r.metrics.completed for r in res.runs]
    # as shipped, sd1 comes back at every check and times out again; either setting keeps it out after two failures
    assert iops[1] > iops[0] * 1.03 and iops[2] > iops[0] * 1.03
