"""The ``fail`` hook (issue 34): a policy hears of an attempt that ended without a completion, in both engines alike.

An attempt fails when it is aborted at ``io_timeout`` or when its frame was lost on a path the host then saw go
down (dm-mpath ``multipath_end_io`` calls the selector's ``end_io`` for an errored request; NVMe's
``nvme_failover_req`` clears the namespace's current path). A probe policy counts the calls and the time since each
failed attempt started; its config string shows them, so the engines' JSON must agree on them too.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import pathsel
from pathsel.policies import Field, PolicyDef, Snapshot, compiled, per_device
from pathsel.policies.framework.kernel import usable

from .policy_rig import Rig


@compiled
def probe_select(v, st, d, slot):
    """One I/O per usable path in turn (no ALUA tiers): enough to put I/Os on every path."""
    n = v.d_np[d]
    for step in range(1, n + 1):
        k = (st.last[d] + step) % n
        if usable(v, v.d_paths[d, k]):
            st.last[d] = k
            return k
    return -1


@compiled
def probe_fail(v, st, d, k, slot, elapsed):
    st.nfail[d, k] += 1
    st.elapsed[d, k] += elapsed
    if v.up[v.d_paths[d, k]] == 1:
        st.on_up[d] += 1  # failed while the host still sees its path up: an abort at io_timeout
    st.when[d] = v.clock[0]


def _probe_config(s: Snapshot) -> str:
    n = len(s.paths)
    fails = ",".join(str(int(s.state.nfail[s.d, k])) for k in range(n))
    spent = ",".join(f"{float(s.state.elapsed[s.d, k]):.9f}" for k in range(n))
    return f"fails={fails} elapsed={spent} on_up={int(s.state.on_up[s.d])} last={float(s.state.when[s.d]):.9f}"


PROBE = PolicyDef(
    name="fail-probe",
    summary="round robin that counts failed attempts",
    source="a test",
    select=probe_select,
    fail=probe_fail,
    state=(
        per_device("last", init=-1),
        Field("nfail", "i8", ("D", "MP"), 0),
        Field("elapsed", "f8", ("D", "MP"), 0.0),
        per_device("on_up", init=0),
        per_device("when", "f8", 0.0),
    ),
    config_string=_probe_config,
)

SCENARIO = """
name = "fail hook"
seed = 5
duration = "400ms"
protocol = "{protocol}"

[[arrays]]
name = "a"
concurrency = 16
service_time = {{ dist = "exponential", mean = "150us" }}

[[hosts]]
name = "h"
detection = "30ms"
io_timeout = "4ms"

[[paths]]
name = "vmhba1:C0:T{{i}}:L1"
count = 3
array = "a"
one_way_latency = "100us"
{alua}

[[workloads]]
rw = "randrw"
rwmixread = 70
bs = "8k"
iodepth = 8
ramp_time = "5ms"

[[faults]]
at = "50ms"
what = "path_down"
path = "vmhba1:C0:T{down}:L1"

[[faults]]
at = "200ms"
what = "path_up"
path = "vmhba1:C0:T{down}:L1"

[[faults]]
at = "250ms"
what = "latency"
path = "vmhba1:C0:T{slow}:L1"
add = "3ms"
duration = "60ms"
"""


def _json(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


def _scenario(protocol: str = "nvme", alua: str = "", down: int = 1, slow: int = 2) -> pathsel.Scenario:
    """Path ``down`` fails at 50 ms (seen at 80 ms) and comes back at 200 ms; path ``slow`` is 3 ms slower each way
    from 250 to 310 ms, past the 4 ms io_timeout."""
    return pathsel.loads_scenario(SCENARIO.format(protocol=protocol, alua=alua, down=down, slow=slow))


def _probe_counts(result) -> tuple[list[int], int]:
    """The probe's counters, read back from its config string in the result's JSON."""
    text = json.dumps(_json(result))
    start = text.index("fails=") + len("fails=")
    fails = [int(x) for x in text[start : text.index(" ", start)].split(",")]
    on_up = int(text[text.index("on_up=") + len("on_up=") :].split(" ")[0])
    return fails, on_up


@pytest.mark.parametrize("protocol", ["nvme", "scsi"])
def test_both_engines_call_fail_at_the_same_instants(protocol):
    sc = _scenario(protocol)
    fast = pathsel.simulate(sc, policies=[PROBE], engine="fast")
    ref = pathsel.simulate(sc, policies=[PROBE], engine="reference")
    assert _json(fast) == _json(ref)
    fails, on_up = _probe_counts(fast)
    m = fast.runs[0].metrics
    assert fails[1] > 0, "I/Os lost on the path that went down are told to the policy"
    assert on_up > 0 and m.timed_out > 0, "attempts aborted at io_timeout are told to the policy"
    # every failed attempt is retried: one retry per failure (no QUEUE FULL here)
    assert sum(fails) == m.retried


@pytest.mark.parametrize("policy", ["nvme:round-robin", "nvme:numa", "dm:historical-service-time", "dm:historical-service-time:failback=immediate"])
def test_engines_agree_on_the_policies_that_use_it(policy):
    numa = policy == "nvme:numa"  # it uses the first path only: fail that one
    sc = _scenario("nvme" if policy.startswith("nvme") else "scsi", down=0 if numa else 1, slow=0 if numa else 2)
    fast = pathsel.simulate(sc, policies=[policy], engine="fast")
    ref = pathsel.simulate(sc, policies=[policy], engine="reference")
    assert _json(fast) == _json(ref)
    assert fast.runs[0].metrics.retried > 0


def test_a_python_policy_hears_of_failures_on_the_reference_engine():
    seen: list[tuple[str, float, bool]] = []

    class Recorder(pathsel.Policy):
        name = "recorder"

        def select(self, io):
            paths = pathsel.alua_working_set(self.device.paths)
            return min(paths, key=lambda p: p.outstanding, default=None)

        def on_fail(self, path, io, elapsed):
            seen.append((path.name, elapsed, path.is_up))

    m = pathsel.simulate(_scenario(), policies=[Recorder], engine="reference").runs[0].metrics
    assert len(seen) == m.retried > 0
    assert all(e >= 0.0 for _, e, _ in seen)
    lost = [e for name, e, up in seen if name == "vmhba1:C0:T1:L1" and not up]
    assert lost and max(lost) >= 0.030 - 1e-9, "an I/O lost in silence is failed when the host notices (30 ms detection)"
    aborted = [e for _, e, up in seen if up]
    assert aborted and all(abs(e - 0.004) < 1e-9 for e in aborted), "an abort comes io_timeout after the attempt started"


def test_the_base_policy_ignores_failures():
    rig = Rig(["AO", "AO"])
    pol = rig.bind(pathsel.policies.NvmeQueueDepth())
    io, p = rig.pick()
    rig.table.end(p.index, io.size)
    pol.on_fail(p, io, 0.001)  # queue-depth has no fail hook: nothing happens, nothing breaks
    assert pathsel.Policy().on_fail(p, io, 0.0) is None
    assert np.all(np.asarray(pol.state.last[:1]) == 0)
