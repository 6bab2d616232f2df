"""Differential tests: the fast engine gives the reference engine's numbers.

The fast engine replays the reference model event for event with the same
random streams, so for the same seed the whole JSON result (IOPS, every
percentile, per-path shares, time series sums, policy events, device config)
must be identical, random service times and faults included. A table of
hand-written scenarios covers each feature; Hypothesis draws more, among them
two hosts with different NUMA node counts (issue 38: a one-node host beside a
two-node one once printed a second node's current_path on the fast engine).
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given

import pathsel
from pathsel.policies import POLICY_DEFS, LatencyRoundRobin, PolicySpec, parse_spec

from .test_properties import SETTINGS, cases

BASE = """
name = "diff"
seed = 11
duration = "{duration}"
protocol = "{protocol}"

[[arrays]]
name = "a"
concurrency = {conc}
service_time = {{ read = {{ dist = "exponential", mean = "120us" }}, write = {{ dist = "uniform", low = "50us", high = "150us" }} }}

[[arrays]]
name = "b"
concurrency = {conc}
service_time = {{ read = "80us", write = {{ dist = "exponential", mean = "200us" }} }}

{replication}

[[hosts]]
name = "h1"
{preferred}

[[paths]]
name = "vmhba1:C0:T{{i}}:L1"
count = 2
array = "a"
one_way_latency = "{lat_a}"
bandwidth = "16Gbit"

[[paths]]
name = "vmhba2:C0:T{{i}}:L1"
start = 2
count = 2
array = "b"
one_way_latency = {lat_b}

[[workloads]]
rw = "{rw}"
rwmixread = 70
bs = "{bs}"
iodepth = {iodepth}
numjobs = 2
ramp_time = "5ms"
{faults}
"""

REPL = '[replication]\narrays = ["a", "b"]\none_way_latency = "300us"\nbandwidth = "10Gbit"'
FAULTS = """
[[faults]]
at = "20ms"
what = "path_down"
path = "vmhba1:C0:T0:L1"

[[faults]]
at = "20ms"
what = "alua"
path = "vmhba2:C0:T3:L1"
state = "standby"

[[faults]]
at = "60ms"
what = "path_up"
path = "vmhba1:C0:T0:L1"
"""

# issue 5: the host notices after 5 ms; latency step, loss burst, array and replication failures
ROUGH_HOST = 'preferred_array = "a"\ndetection = "5ms"\napd_timeout = "8ms"\nio_timeout = "15ms"'
ROUGH_REPL = REPL + '\ndistance_km = 40\nloss_ppm = 20000\nloss_recovery = "2ms"'
ROUGH = """
[[faults]]
at = "10ms"
what = "latency"
path = "vmhba1:C0:T1:L1"
add = "2ms"
duration = "30ms"

[[faults]]
at = "15ms"
what = "loss"
link = "replication"
ppm = 300000
duration = "20ms"

[[faults]]
at = "30ms"
what = "replication_down"

[[faults]]
at = "40ms"
what = "array_down"
array = "a"

[[faults]]
at = "45ms"
what = "path_down"
path = "vmhba2:C0:T2:L1"

[[faults]]
at = "48ms"
what = "path_down"
path = "vmhba2:C0:T3:L1"

[[faults]]
at = "70ms"
what = "array_up"
array = "a"

[[faults]]
at = "80ms"
what = "replication_up"

[[faults]]
at = "90ms"
what = "alua"
path = "vmhba1:C0:T0:L1"
state = "transitioning"
"""

# issue 4: two volumes (devices) over shared nexuses of different speeds, so the per-controller counters
# (nvme:queue-depth, mpio:lqd, mpio:lb) see both devices' I/Os; path weights (mpio:wp); ALUA flips and path
# faults that move dm-multipath between path groups. Fault and preferred-path names are the nexus names.
VOLUMES = """
name = "volumes"
seed = 5
duration = "150ms"
protocol = "nvme"

[[arrays]]
name = "a"
concurrency = 4
service_time = { read = { dist = "exponential", mean = "100us" }, write = { dist = "exponential", mean = "150us" } }

[[arrays]]
name = "b"
concurrency = 4
service_time = { read = "90us", write = { dist = "uniform", low = "100us", high = "300us" } }

[replication]
arrays = ["a", "b"]
one_way_latency = "200us"

[[hosts]]
name = "h1"
preferred_array = "a"
detection = "2ms"

[[volumes]]
name = "db"

[[volumes]]
name = "logs"
arrays = ["a"]

[[paths]]
name = "vmhba1:C0:T0:L1"
array = "a"
one_way_latency = "30us"
bandwidth = "16Gbit"
weight = 2

[[paths]]
name = "vmhba2:C0:T2:L1"
array = "a"
one_way_latency = { dist = "exponential", mean = "120us" }
bandwidth = "2Gbit"
weight = 1

[[paths]]
name = "vmhba2:C0:T3:L1"
array = "b"
one_way_latency = "400us"
weight = 3

[[workloads]]
name = "db"
volume = "db"
rw = "randrw"
rwmixread = 60
bs = "4k/60:64k/40"
iodepth = 8
ramp_time = "5ms"

[[workloads]]
name = "logs"
volume = "logs"
rw = "randwrite"
bs = "32k"
iodepth = 6

[[faults]]
at = "30ms"
what = "alua"
path = "vmhba1:C0:T0:L1"
state = "ANO"

[[faults]]
at = "40ms"
what = "alua"
path = "vmhba2:C0:T2:L1"
state = "standby"

[[faults]]
at = "50ms"
what = "alua"
path = "vmhba2:C0:T2:L1"
state = "AO"

[[faults]]
at = "60ms"
what = "alua"
path = "vmhba1:C0:T0:L1"
state = "AO"

[[faults]]
at = "80ms"
what = "path_down"
path = "vmhba1:C0:T0:L1"

[[faults]]
at = "95ms"
what = "path_up"
path = "vmhba1:C0:T0:L1"

[[faults]]
at = "110ms"
what = "path_down"
path = "vmhba2:C0:T2:L1"

[[faults]]
at = "130ms"
what = "path_up"
path = "vmhba2:C0:T2:L1"
"""

# Seconds-long and light: dm failback=1 waits out its second, MPIO fo fails back, weights pick a path.
FAILBACK = """
name = "failback"
seed = 3
duration = "2.6s"
protocol = "scsi"

[[arrays]]
name = "a"
concurrency = 2
service_time = { read = { dist = "exponential", mean = "200us" }, write = { dist = "exponential", mean = "300us" } }

[[hosts]]
name = "h1"
detection = "10ms"

[[paths]]
name = "vmhba1:C0:T0:L1"
array = "a"
one_way_latency = "300us"
weight = 5

[[paths]]
name = "vmhba1:C0:T1:L1"
array = "a"
one_way_latency = "500us"
weight = 1

[[paths]]
name = "vmhba2:C0:T2:L1"
array = "a"
one_way_latency = { dist = "exponential", mean = "400us" }
alua = "ANO"

[[paths]]
name = "vmhba2:C0:T3:L1"
array = "a"
one_way_latency = "900us"
alua = "ANO"
weight = 2

[[workloads]]
rw = "randrw"
bs = "16k"
iodepth = 3

[[faults]]
at = "300ms"
what = "path_down"
path = "vmhba1:C0:T0:L1"

[[faults]]
at = "300ms"
what = "alua"
path = "vmhba1:C0:T1:L1"
state = "standby"

[[faults]]
at = "600ms"
what = "alua"
path = "vmhba1:C0:T1:L1"
state = "AO"

[[faults]]
at = "1s"
what = "path_up"
path = "vmhba1:C0:T0:L1"

[[faults]]
at = "2.3s"
what = "path_down"
path = "vmhba2:C0:T2:L1"

[[faults]]
at = "2.3s"
what = "alua"
path = "vmhba2:C0:T3:L1"
state = "unavailable"

[[faults]]
at = "2.45s"
what = "path_up"
path = "vmhba2:C0:T2:L1"
"""

# Every delay the same constant: events fall on the same instants all the time, so the
# order of equal times (SimPy's event ids) decides which I/O gets which path. The arrays
# never queue, so the fast engine takes grants and the mirror's events in line here,
# and must do so only when nothing else is due at that instant.
TIES = """
name = "ties"
seed = 5
duration = "60ms"
protocol = "scsi"

[[arrays]]
name = "a"
concurrency = 64
service_time = { read = "100us", write = "100us" }

[[arrays]]
name = "b"
concurrency = 64
service_time = { read = "100us", write = "100us" }

[replication]
arrays = ["a", "b"]
one_way_latency = "100us"

[[hosts]]
name = "h1"

[[paths]]
name = "vmhba1:C0:T{i}:L1"
count = 2
array = "a"
one_way_latency = "100us"

[[paths]]
name = "vmhba2:C0:T{i}:L1"
start = 2
count = 2
array = "b"
one_way_latency = "100us"

[[workloads]]
rw = "randrw"
rwmixread = 50
bs = "8k"
iodepth = 8
numjobs = 2
ramp_time = "5ms"
"""

# Issue 16, the array's side: two hosts share the arrays' target ports (3 commands each), so commands come back
# QUEUE FULL; h1 throttles its DQLEN (ESXi's QFullSampleSize 2, QFullThreshold 1), retries at once and has an
# adapter queue depth below its device's; h2 retries after 150 us and aborts at io_timeout. Constant legs: ties.
PORTS = """
name = "ports"
seed = 8
duration = "80ms"
protocol = "scsi"

[[arrays]]
name = "a"
concurrency = 2
port_queue_depth = 3
service_time = { read = "100us", write = { dist = "exponential", mean = "150us" } }

[[arrays]]
name = "b"
concurrency = 4
port_queue_depth = 3
service_time = { dist = "exponential", mean = "120us" }

[replication]
arrays = ["a", "b"]
one_way_latency = "100us"

[[hosts]]
name = "h1"
queue_depth = 6
qfull_sample_size = 2
qfull_threshold = 1
qfull_retry_delay = "0s"
adapter_queue_depth = 5
detection = "3ms"

[[hosts]]
name = "h2"
queue_depth = 8
qfull_retry_delay = "150us"
io_timeout = "2ms"

[[paths]]
name = "vmhba1:C0:T{i}:L1"
host = "h1"
count = 2
array = "a"
target_port = "fc{i}"
one_way_latency = "100us"

[[paths]]
name = "vmhba2:C0:T{i}:L1"
host = "h1"
start = 2
count = 2
array = "b"
target_port = "fc{i}"
one_way_latency = "100us"

[[paths]]
name = "vmhba1:C0:T{i}:L1"
host = "h2"
count = 2
array = "a"
target_port = "fc{i}"
one_way_latency = "100us"

[[paths]]
name = "vmhba2:C0:T{i}:L1"
host = "h2"
start = 2
count = 2
array = "b"
target_port = "fc{i}"
one_way_latency = { dist = "exponential", mean = "100us" }

[[workloads]]
name = "w1"
host = "h1"
rw = "randrw"
bs = "8k"
iodepth = 8
ramp_time = "5ms"

[[workloads]]
name = "w2"
host = "h2"
rw = "randrw"
bs = "4k/50:64k/50"
iodepth = 6
numjobs = 2

[[faults]]
at = "30ms"
host = "h1"
path = "vmhba1:C0:T0:L1"
what = "path_down"

[[faults]]
at = "50ms"
host = "h1"
path = "vmhba1:C0:T0:L1"
what = "path_up"
"""

# BASE's values most rows share; each row of SCENARIOS names only what it changes
USUAL = dict(protocol="scsi", rw="randrw", bs="32k", iodepth=8, conc=4, lat_a="50us", lat_b='"400us"', replication=REPL, preferred="", faults="")
JITTERED = '{ dist = "exponential", mean = "300us" }'
ROUGH_ROW = dict(USUAL, replication=ROUGH_REPL, preferred=ROUGH_HOST, faults=ROUGH)
NVME_OPEN_LOOP = dict(USUAL, protocol="nvme", bs="4k/70:64k/30", conc=2, lat_b=JITTERED)


def _poisson(iops: int) -> str:
    """An iodepth of 6 with open-loop Poisson arrivals at ``iops`` (BASE's iodepth line carries the workload's rate keys)."""
    return f'6\nrate_iops = {iops}\nrate_process = "poisson"'


SCENARIOS = {
    # name: template values for BASE, or a whole scenario
    "scsi writes, replicated, constant legs": dict(USUAL, rw="randwrite", lat_b='"1ms"'),
    # arrays that can never queue: the fast engine takes grants and the mirror's events in line
    "scsi writes, replicated, no queueing at the arrays": dict(USUAL, rw="randwrite", conc=64, lat_b='"1ms"'),
    "equal constant legs (ties), mixed, no queueing": dict(USUAL, bs="8k", conc=16, lat_a="10us", lat_b='"10us"'),
    "nvme mixed sizes, jittered legs": dict(USUAL, protocol="nvme", bs="4k/50:64k/30:1m/20", iodepth=16, conc=2, lat_a="40us", lat_b=JITTERED),
    "reads only, no replication": dict(
        USUAL, rw="randread", bs="8k", iodepth=4, conc=1, lat_a="100us", lat_b='{ dist = "uniform", low = "100us", high = "900us" }', replication=""
    ),
    "preferred array": dict(USUAL, bs="16k", conc=8, lat_b='"1ms"', preferred='preferred_array = "a"'),
    "faults: down, standby, up": dict(USUAL, preferred='preferred_array = "b"', faults=FAULTS),
    "detection, APD failures, latency, loss, array and replication faults": ROUGH_ROW,
    "two volumes over shared nexuses, weights, ALUA flips": VOLUMES,
    "failback after seconds, weights": FAILBACK,
    "every delay equal: ties at every instant": TIES,
    # issue 16: a device queue depth below the outstanding I/Os (KAVG), with faults and timeouts
    "host queue depth 3, faults, io_timeout": dict(ROUGH_ROW, preferred=ROUGH_HOST + "\nqueue_depth = 3"),
    # open loop: Poisson arrivals beyond iodepth wait in the host, into a device queue depth of 4
    "open loop, Poisson arrivals, host queue depth 4": dict(NVME_OPEN_LOOP, iodepth=_poisson(30000), preferred="queue_depth = 4", faults=FAULTS),
    # issue 16: target ports of 2 commands each (QUEUE FULL), throttling, an adapter queue depth, with faults
    "target ports full, throttling, adapter queue, faults, io_timeout": dict(
        ROUGH_ROW,
        conc="4\nport_queue_depth = 2",
        preferred=ROUGH_HOST + '\nqueue_depth = 12\nqfull_sample_size = 3\nqfull_threshold = 2\nqfull_retry_delay = "100us"'
        "\nadapter_queue_depth = 10",
    ),
    "nvme, target ports full, open loop": dict(
        NVME_OPEN_LOOP,
        iodepth=_poisson(1500),
        conc="2\nport_queue_depth = 1",
        preferred='queue_depth = 4\nqfull_sample_size = 1\nqfull_threshold = 1\nqfull_retry_delay = "20us"',
    ),
    "two hosts share target ports, throttling, adapter queue": PORTS,
    # issue 16: NVMe-oF I/O queues: two namespaces share each controller's 1 x (16 - 1) tags; ALUA flips, a path
    # down and up, io_timeout aborts while others wait for a tag
    "nvme io queues: two namespaces share a controller's tags, faults": VOLUMES.replace(
        'detection = "2ms"', 'detection = "2ms"\nio_timeout = "4ms"\nnvme_io_queues = 1\nnvme_queue_size = 16'
    )
    .replace("iodepth = 8", "iodepth = 16")
    .replace("iodepth = 6", "iodepth = 12"),
    # issue 32: array a has controllers A and B, its two volumes owned alternately (ALUA per volume and group over
    # one nexus), I/O on a non-owner's path crosses the inter-controller link; an owner fault and an alua fault by
    # volume and port group
    "target port groups: ALUA per volume, the crossing, owner faults": VOLUMES.replace(
        'name = "a"\nconcurrency = 4\n',
        'name = "a"\nconcurrency = 4\ncontrollers = ["A", "B"]\ninter_controller_latency = "25us"\ninter_controller_bandwidth = "1GB/s"\n',
    )
    .replace("weight = 2\n", 'weight = 2\nport_group = "A"\n')
    .replace("weight = 1\n", 'weight = 1\nport_group = "B"\n')
    + '\n[[faults]]\nat = "60ms"\nwhat = "owner"\nvolume = "db"\ncontroller = "B"\n'
    + '\n[[faults]]\nat = "90ms"\nwhat = "alua"\nvolume = "logs"\nport_group = "A"\nstate = "standby"\n',
}

POLICIES = [
    "fixed",
    "fixed:preferred=vmhba2:C0:T2:L1",
    "mru",
    "rr",
    "rr:iops=1",
    "rr:iops=3,use_ano=1",
    "rr:bytes=65536",
    "latency",
    "latency:variant=score",
    "latency:use_ano=1,tolerance=0.5",
    "latency:variant=min-set",
    "latency:variant=lqd,cutoff=1.2,use_ano=1",
    # short windows so re-evaluation happens within the run (below esxcli's range: built directly)
    PolicySpec("latency", (("num_sampling_cycles", 4), ("latency_eval_time", 10), ("use_ano", 0), ("variant", "min-set"), ("tolerance", 0.05))),
    PolicySpec(
        "latency", (("num_sampling_cycles", 4), ("latency_eval_time", 10), ("use_ano", 0), ("variant", "lqd"), ("tolerance", 0.1), ("cutoff", 1.1))
    ),
    # issue 4: Linux dm-multipath (path groups x failback x selector parameters)
    "dm:round-robin",
    "dm:queue-length",
    "dm:service-time",
    "dm:historical-service-time",
    "dm:io-affinity",
    "dm:round-robin:path_grouping_policy=multibus",
    "dm:round-robin:path_grouping_policy=failover,failback=1",
    "dm:queue-length:path_grouping_policy=failover,failback=immediate",
    "dm:service-time:failback=followover,polling_interval=0.01",  # multipathd: fail_path on a timeout, checker ticks
    "dm:service-time:failback=immediate",
    "dm:service-time:failback=1",
    "dm:historical-service-time:base_weight=600,threshold_multiplier=2,failback=1",
    "dm:historical-service-time:path_grouping_policy=multibus,threshold_multiplier=4294967295",  # u64 products wrap
    # failback after 0 s (below the grammar's range: built directly): the countdown arms, then expires at the next I/O
    PolicySpec("dm:round-robin", (("path_grouping_policy", "group_by_prio"), ("failback", "0"))),
    # Linux NVMe
    "nvme:numa",
    "nvme:round-robin",
    "nvme:queue-depth",
    # Windows MPIO
    "mpio:fo",
    "mpio:fo:failback=0",
    "mpio:rr",
    "mpio:rrws",
    "mpio:lqd",
    "mpio:wp",
    "mpio:lb",
    # ESXi HPP
    "hpp:fixed",
    "hpp:fixed:preferred=vmhba2:C0:T3:L1",
    "hpp:lb-rr",
    "hpp:lb-rr:iops=3,bytes=65536",
    "hpp:lb-iops:iops=2",
    "hpp:lb-bytes:bytes=100000",
    "hpp:lb-latency",
    "hpp:lb-latency:variant=score,tolerance=0.5",
    "hpp:lb-latency:variant=min-set",
    PolicySpec("hpp:lb-latency", (("latency_eval_time", 10), ("sampling_ios_per_path", 2), ("variant", "min-set"), ("tolerance", 0.05))),
    # AIX MPIO
    "aix:shortest_queue",
    # Finagle P2C + peak EWMA: the policy's own random stream
    "p2c-ewma",
    "p2c-ewma:decay=0.01,use_ano=1",
    # NVMe adaptive (RFC, not merged); HDLM's extended algorithms
    "nvme:adaptive:weight_timeout=0.01",
    "hdlm:exlio",
    "hdlm:exrr:seq_ios=5",
    "hdlm:exlbk",
]


def _json(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


def _both(scenario, policies, **kw):
    fast = pathsel.simulate(scenario, policies=policies, engine="fast", **kw)
    ref = pathsel.simulate(scenario, policies=policies, engine="reference", **kw)
    return fast, ref


def _agree(scenario, policies, *, trace=False, **kw):
    """Both engines' results: the whole JSON the same, and (``trace``) every I/O's record, run for run."""
    fast, ref = _both(scenario, policies, trace=trace, **kw)
    assert _json(fast) == _json(ref)
    if trace:
        for f, r in zip(fast.runs, ref.runs, strict=True):
            assert f.metrics.trace == r.metrics.trace  # every I/O: same path, same times
    return fast, ref


def scenario(name: str, duration: str = "120ms", **changes):
    """The scenario of SCENARIOS' row ``name`` (a BASE row: its ``duration``, with ``changes`` to its values)."""
    template = SCENARIOS[name]
    text = BASE.format(duration=duration, **(template | changes)) if isinstance(template, dict) else template
    return pathsel.loads_scenario(text, name)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_engines_agree_on_every_policy(name):
    fast, ref = _agree(scenario(name), POLICIES, trace=True)
    for f, r in zip(fast.runs, ref.runs):
        assert f.metrics.issued == r.metrics.issued and f.metrics.retried == r.metrics.retried
        assert (f.metrics.ts_path_ios == r.metrics.ts_path_ios).all()


def test_engines_agree_on_the_seed_testdrive(testdrive_path):
    fast, ref = _agree(testdrive_path, None, duration=0.3)
    assert fast.engine == "fast" and ref.engine == "reference"


def _builtin(policy):
    if isinstance(policy, LatencyRoundRobin):  # the property suite's short-window latency RR: its class runs on both
        return policy
    return parse_spec(policy)[0]


@SETTINGS
@given(cases())
def test_engines_agree_on_random_scenarios(case):
    _agree(pathsel.loads_scenario(case.toml), [_builtin(case.policy)])


@SETTINGS
@given(cases(issue33=True))
def test_engines_agree_on_random_fabric_frames_and_cpu(case):
    """Issue 33's keys on every example (transports and MTUs, host CPUs, credits and switches, slow drains): the
    whole JSON and every I/O's record are the same on both engines."""
    _agree(pathsel.loads_scenario(case.toml), [_builtin(case.policy)], trace=True)


NUMA_POLICIES = ["nvme:numa", "nvme:round-robin", "dm:io-affinity"]


def _nodes_printed(config: str) -> int:
    """How many NUMA nodes an nvme current_path names: ``current_path=NAME`` is one, ``[node0:..., node1:...]`` each."""
    listed = config.partition("current_path=")[2]
    return len(re.findall(r"(?:\[|, )node\d+:", listed)) if listed.startswith("[") else 1


@SETTINGS
@given(cases(numa="mixed", policy="nvme:numa"))
def test_engines_agree_on_mixed_numa_hosts(case):
    """Issue 38: a host with 2-3 NUMA nodes beside a one-node host, the policies with per-node state: the whole JSON
    (device_config too) is the same on both engines, and each host's current_path lists its own nodes."""
    sc = pathsel.loads_scenario(case.toml)
    fast, _ = _agree(sc, NUMA_POLICIES)
    nodes = {h.name: h.numa_nodes for h in sc.model.hosts}
    for run in fast.runs:
        if run.policy.startswith("nvme:"):
            assert {h: _nodes_printed(c) for h, c in run.metrics.config_strings.items()} == nodes


def test_auto_engine_choice():
    sc = pathsel.default_scenario()
    assert pathsel.simulate(sc, policies=["rr:iops=1"], duration=0.05).engine == "fast"

    class Mine(pathsel.Policy):
        name = "mine"

        def select(self, io):
            return pathsel.alua_working_set(self.device.paths)[0]

    with pytest.warns(UserWarning, match="reference engine"):
        assert pathsel.simulate(sc, policies=[Mine], duration=0.05).engine == "reference"
    with pytest.raises(pathsel.ScenarioError, match="built-in and compiled-style policies only"):
        pathsel.simulate(sc, policies=[Mine], engine="fast", duration=0.05)


def _compressed(path, factor: float, tweak=None):
    """A sims/ scenario with its clock sped up ``factor`` times (faults, detection, duration), for the reference engine's pace.

    ``tweak``: a function given the parsed TOML to change it (a sweep's point) before it is built."""
    import tomllib

    from pathsel.scenario.load import build_scenario
    from pathsel.timing.distributions import delay_files_relative_to
    from pathsel.units import parse_duration

    data = tomllib.loads(path.read_text(encoding="utf-8"))

    def scale(table, key):
        if key in table:
            table[key] = f"{parse_duration(table[key]) / factor * 1e6:.3f}us"

    for key in ("duration", "interval"):
        scale(data, key)
    for h in data.get("hosts", []):
        scale(h, "detection")
    for w in data.get("workloads", []):
        scale(w, "ramp_time")
    for f in data.get("faults", []):
        scale(f, "at")
        scale(f, "duration")
    if tweak is not None:
        tweak(data)
    with delay_files_relative_to(path.parent):
        return build_scenario(data, str(path))


def _mtu(mtu):
    def tweak(data):
        data.pop("sweep", None)
        for g in data["paths"]:
            g["mtu"] = mtu

    return tweak


# sims/ files, each clock sped up ``factor`` times for the reference engine's pace; ``mtu``: one point of a [sweep] of
# paths[*].mtu; ``least``: the completed I/Os each run must reach.
# The fault and network sims, then issue 33's: frames (transports, MTU sweep), the host's CPU (cores, queues, IRQ
# affinity, NUMA), the fabric (switches, ISLs, bb_credits) and slow-drain faults, a few thousand I/Os a run (3-100 ms).
SIMS = [
    ("path-failure-recovery.toml", 100, None, 100),
    ("latency-step-latency-rr.toml", 200, None, 100),
    ("fast-failover.toml", 10, None, 100),
    ("cloud-metro-az.toml", 40, None, 100),
    ("fc-slow-drain.toml", 30, None, 1000),
    ("nvme-tcp-cores.toml", 50, None, 1000),
    ("azure-m-series-nic-numa.toml", 100, None, 1000),
    ("nvme-tcp-jumbo-frames.toml", 10, 1500, 1000),
    ("nvme-tcp-jumbo-frames.toml", 10, 9000, 1000),
    ("library/gray-slow-drain-isl.toml", 20, None, 1000),
    ("library/load-cpu-bound-nvme-tcp.toml", 30, None, 1000),
]


@pytest.mark.parametrize("name, factor, mtu, least", SIMS)
def test_engines_agree_on_the_sims(name, factor, mtu, least):
    from .conftest import ROOT

    sc = _compressed(ROOT / "sims" / name, factor, _mtu(mtu) if mtu else None)
    fast, _ = _agree(sc, None, trace=True)
    for f in fast.runs:
        assert f.accounting["balanced"] and f.metrics.completed > least
        if f.model.cpu is not None:  # the CPU sims: the cores did work, on both engines alike
            assert any(u > 0 for c in f.cpus() for u in c["utilisation"])
        if "slow_drain" in json.dumps(f.faults()):  # the slow drain held a link behind the slow port
            assert f.metrics.link_held is not None and f.metrics.link_held.sum() > 0


# Every wake-up of an I/O waiting for a path (here: ALUA changes while no path is usable) used to leave
# its APD timer in the fast engine's event heap until the timeout, past the heap's end.
STALE_TIMERS = (
    """
name = "stale-apd-timers"
seed = 0
duration = "300ms"

[[arrays]]
name = "a0"
concurrency = 1
service_time = { read = { dist = "exponential", mean = "10us" }, write = { dist = "exponential", mean = "10us" } }

[[hosts]]
name = "h"
apd_timeout = "10s"

[[paths]]
name = "p{i}"
count = 2
array = "a0"
one_way_latency = "2ms"
alua = "standby"

[[workloads]]
rw = "randread"
iodepth = 11
numjobs = 2
"""
    + "".join(f'\n[[faults]]\nat = "{t}ms"\nwhat = "alua"\npath = "p0"\nstate = "standby"\n' for t in range(0, 100, 10))
    + """
[[faults]]
at = "150ms"
what = "alua"
path = "p0"
state = "AO"
"""
)


def test_stale_apd_timers_stay_inside_the_event_heap():
    import math

    from pathsel.engine.fast import layout as L
    from pathsel.engine.fast.loop import run_kernel
    from pathsel.engine.fast.state import Run
    from pathsel.model import compile_model
    from pathsel.policies.framework.kernel import FL_NEV

    sc = pathsel.loads_scenario(STALE_TIMERS).with_policies(["rr"])
    model = compile_model(sc, sc.runs[0])
    run = Run(model, POLICY_DEFS["rr"], parse_spec("rr")[0].as_dict(), False)
    run.feed.refill()
    room = run.view.ev_t.shape[0] - 64
    addrs = (run.params_rec.address, run.state.address, run.view.address, run.rec.address)
    while (status := run_kernel(*addrs, math.inf, room, 1 << 40)) != L.DONE:
        if status == L.REFILL:
            run.feed.refill()
        run.view.flags[FL_NEV] = 0
    assert 0 < run.state.si[L.I_HEAPN] <= run.state.h_time.shape[0]
    fast, _ = _agree(sc, None)
    assert fast.runs[0].metrics.completed > 100


def test_the_live_view_is_the_same_on_both_engines():
    from pathsel.engine import run_fast, run_reference
    from pathsel.model import compile_model

    sc = scenario("faults: down, standby, up", "60ms")
    run = sc.with_policies(["rr:iops=1"]).runs[0]
    seen = {}
    for name, engine in (("fast", run_fast), ("reference", run_reference)):
        snaps: list = []

        def keep(lv, snaps=snaps):
            snaps.append((lv.now, lv.record.ts_ios.copy(), lv.record.ts_path_ios.copy(), lv.record.rc.copy(), lv.out.copy()))

        engine(compile_model(sc, run), run.policy, live=keep, live_step=0.005)
        seen[name] = snaps
    assert len(seen["fast"]) == len(seen["reference"]) >= 10
    for f, r in zip(seen["fast"], seen["reference"]):
        assert f[0] == r[0] and all((a == b).all() for a, b in zip(f[1:], r[1:]))
    assert seen["fast"][-1][3][0] > seen["fast"][0][3][0]  # issued grows: the view is live, not the end state


def test_random_rows_are_sized_by_their_streams_use():
    """A thousand jobs of one I/O each cost a short row each; busy streams' rows grow; the values stay the reference's."""
    from pathsel.engine.fast.feed import Feed
    from pathsel.engine.fast.state import Run
    from pathsel.model import compile_model

    text = BASE.format(duration="10ms", **dict(SCENARIOS["reads only, no replication"], iodepth=1)).replace("numjobs = 2", "numjobs = 1000")
    sc = pathsel.loads_scenario(text, "many jobs").with_policies(["rr:iops=1"])
    assert len(compile_model(sc, sc.runs[0]).jobs) == 1000
    feeds = []
    orig = Run.__init__

    def keep(self, *a, **k):
        orig(self, *a, **k)
        feeds.append(self.feed)

    Run.__init__ = keep
    try:
        _agree(sc, None)
    finally:
        Run.__init__ = orig
    feed = feeds[0]
    jobs = feed.cap[:1000]
    assert jobs.max() == Feed.FIRST  # each job draws a few dozen values: none holds more than the first row
    assert feed.cap.max() > Feed.FIRST  # the streams every I/O reads (the nexuses', the arrays') grew
    assert feed.v.rnd.shape[0] < 2 * Feed.FIRST * 1000 + feed.cap[1000:].sum() + 1000


def test_a_run_ends_without_rows_of_values_never_read():
    """Top-ups follow each stream's pace to the end of the run: few drawn values are left unread, refills stay few,
    and the values are the reference engine's."""
    import numpy as np

    from pathsel.engine.fast.feed import Feed
    from pathsel.engine.fast.state import Run
    from pathsel.engine.streams import Draws
    from pathsel.model import compile_model

    sc = pathsel.default_scenario().with_policies(["rr:iops=1"])
    model = compile_model(sc, sc.runs[0], duration=5.0)
    feeds, drawn, refills = [], [0], [0]
    init, take, refill = Run.__init__, Draws.take, Feed.refill

    def keep(self, *a, **k):
        init(self, *a, **k)
        feeds.append(self.feed)

    def count_take(self, n, *a, **k):
        drawn[0] += n
        return take(self, n, *a, **k)

    def count_refill(self):
        refills[0] += 1
        return refill(self)

    Run.__init__, Draws.take, Feed.refill = keep, count_take, count_refill
    try:
        from pathsel.engine import run_fast

        m = run_fast(model, sc.runs[0].policy)
    finally:
        Run.__init__, Draws.take, Feed.refill = init, take, refill
    feed = feeds[0]
    n = len(feed.draws)
    unread = int(np.where(feed.constant, 0, feed.held[:n] - (feed.v.rq[:n, 0] - feed.off[:n])).sum())
    assert m.completed > 30_000
    assert unread < 0.12 * drawn[0]  # 6 % here; whole rows were left unread before (32 % here, 46 % in 20 s)
    assert refills[0] < 100  # a row that follows the pace is not topped up a handful of values at a time
    _agree(pathsel.default_scenario(), ["rr:iops=1"], duration=1.0)


SLOW_ARRAY = """
name = "slow array"
duration = "{duration}"
[[arrays]]
name = "a"
service_time = "60s"
{replication}
[[hosts]]
name = "h"
io_timeout = "30s"
[[paths]]
name = "vmhba1:C0:T{{i}}:L1"
count = 2
array = "{path_array}"
one_way_latency = "100us"
[[workloads]]
rw = "{rw}"
iodepth = 1
"""


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize(
    "duration, rw, mirrored, timed_out",
    [
        ("29s", "randread", False, 0),  # not yet
        ("35s", "randread", False, 1),  # aborted at 30 s while the array serves it (issue 15: was 0 until 61 s)
        ("59s", "randread", False, 1),  # the retry, sent at 30 s, is not due before 60 s
        ("61s", "randread", False, 2),
        ("35s", "randwrite", True, 1),  # a mirrored write: aborted while the peer stores its copy
        ("95s", "randwrite", True, 3),
    ],
)
def test_io_timeout_aborts_an_attempt_wherever_it_is(engine, duration, rw, mirrored, timed_out):
    replication = ""
    path_array = "a"
    if mirrored:  # the slow array is the peer: the write waits for its mirror copy
        replication = '[[arrays]]\nname = "b"\nservice_time = "10us"\n[replication]\narrays = ["b", "a"]\none_way_latency = "1ms"'
        path_array = "b"
    sc = pathsel.loads_scenario(SLOW_ARRAY.format(duration=duration, rw=rw, replication=replication, path_array=path_array))
    m = pathsel.simulate(sc, policies=["rr:iops=1"], engine=engine).runs[0].metrics
    assert (m.timed_out, m.completed, m.retried) == (timed_out, 0, timed_out)
    assert m.issued == 1 and m.oldest_in_flight == 0.0  # the one I/O waits from t = 0 to the end


ALL_DOWN = """
name = "all down"
duration = "2s"
[[arrays]]
name = "a"
service_time = "100us"
[[hosts]]
name = "h"
apd_timeout = "never"
[[paths]]
name = "vmhba1:C0:T{{i}}:L1"
count = 2
array = "a"
one_way_latency = "100us"
[[workloads]]
rw = "randread"
iodepth = 4
[[faults]]
at = "{at}"
what = "path_down"
path = "vmhba1:C0:T0:L1"
[[faults]]
at = "{at}"
what = "path_down"
path = "vmhba1:C0:T1:L1"
"""


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("at, stall_ms", [("0s", 2000.0), ("500ms", 1500.0)])
def test_a_stall_counts_the_ios_still_waiting_at_the_end(engine, at, stall_ms):
    """Every path down to the end: the I/Os wait from the fault (or their issue) to the end, and that is the stall."""
    res = pathsel.simulate(pathsel.loads_scenario(ALL_DOWN.format(at=at)), policies=["rr"], engine=engine)
    (fault,) = res.runs[0].faults()
    assert fault["recovery_s"] is None
    assert fault["max_stall_ms"] == pytest.approx(stall_ms, rel=0.01)


# issue 16: NUMA. Two nodes, an adapter on each, a workload on each: the penalty for a cross-node attempt and the
# policies that read the issuing node (nvme:numa's per-node current_path, dm:io-affinity's map) on both engines.
NUMA = """
name = "numa"
seed = 5
duration = "60ms"
protocol = "{protocol}"

[[arrays]]
name = "a"
concurrency = 4
service_time = {{ dist = "exponential", mean = "100us" }}

[[hosts]]
name = "h"
numa_nodes = 3
numa_distances = [[10, 21, 31], [21, 10, 21], [31, 21, 10]]
numa_penalty = "2us"

[[paths]]
name = "c{{i}}"
count = 2
array = "a"
one_way_latency = {{ dist = "exponential", mean = "30us" }}
bandwidth = "10Gbit"

[[paths]]
name = "d{{i}}"
count = 2
start = 2
array = "a"
one_way_latency = {{ dist = "exponential", mean = "30us" }}
numa_node = 2

[[workloads]]
name = "n0"
rw = "randrw"
bs = "4k/60:64k/40"
iodepth = 4

[[workloads]]
name = "n1"
rw = "randread"
iodepth = 3
numa_node = 1

[[workloads]]
name = "n2"
rw = "randwrite"
iodepth = 2
numa_node = 2

[[faults]]
at = "20ms"
what = "path_down"
path = "d2"

[[faults]]
at = "30ms"
what = "alua"
path = "c0"
state = "ANO"

[[faults]]
at = "45ms"
what = "path_up"
path = "d2"
"""


@pytest.mark.parametrize("protocol", ["scsi", "nvme"])
def test_engines_agree_with_numa_nodes(protocol):
    sc = pathsel.loads_scenario(NUMA.format(protocol=protocol), "numa")
    policies = ["nvme:numa", "nvme:round-robin", "nvme:queue-depth", "dm:io-affinity", "dm:service-time", "rr:iops=1"]
    _agree(sc, policies, trace=True)


def test_the_late_handlers_are_typed_as_the_loop_calls_them(tmp_path):
    """A cold compile's second process types the handlers the loop reaches last (warm.late_handlers).

    Typed with other argument types than run_kernel's calls, a handler would be
    compiled a second time instead of being found in the cache: after the loop is
    compiled (or loaded), compiling late_handlers must compile nothing but itself.
    """
    import subprocess
    import sys

    code = """
from numba.core import event
from pathsel.engine.fast import warm
from pathsel.jit import light_passes
with light_passes():  # as prepare compiles it
    warm.run_kernel.compile(warm._SIGNATURE)
compiled = []
class Listen(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
with event.install_listener("numba:compile", Listen()), light_passes():
    warm.late_handlers.compile(warm._LATE_SIGNATURE)
print(",".join(compiled))
"""
    # An empty cache of its own: with the loop already in the user's cache (after `pathsel warm`), the loop is
    # loaded rather than compiled, its handlers are never typed in this process, and late_handlers compiles them all.
    import os

    env = {**os.environ, "PATHSEL_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600, env=env)
    assert out.stdout.strip() == "late_handlers", out.stdout


def test_a_plain_numba_function_called_by_a_compiled_helper_keeps_its_machine_code():
    """Helpers without wrappers are link-only (pathsel.jit); a plain numba.njit function they call is not.

    The two share a name here (a library is known by its function's name):
    the plain one, compiled inside the helper's compile, must still run from
    Python (it crashed the process when it was taken for link-only).
    """
    import subprocess
    import sys

    code = """
import numba
from pathsel.policies.framework.define import compiled

def make():
    @numba.njit
    def twin(x):
        return x + 1
    plain = twin

    @compiled
    def twin(x):
        return plain(x) * 2

    @numba.njit
    def outer(x):
        return twin(x)

    return plain, outer

plain, outer = make()
print(outer(1), plain(1))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["4", "2"]
