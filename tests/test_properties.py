"""Properties of every run, on small random scenarios (Hypothesis).

A drawn scenario has 1-2 arrays (optionally replicated), one host or two
(each with 1-3 NUMA nodes: LAYOUTS), 1-6 paths per host with latencies between
10 us and 2 ms in random ALUA states (and weights, and NUMA nodes), a workload per
host (two on some NUMA hosts) with a read/write mix, block sizes and iodepth 1-16,
SCSI or NVMe, one built-in policy, and optionally path faults. The measured time is sized so a run completes a few thousand
I/Os at most, which keeps each example well under a second. Half the examples also draw issue 33's keys (last, so
the draws above keep their distribution): transports, GFC/GbE speeds and MTUs on hosts and paths, a cpu table on some
hosts, a fabric (an ISL, switches, target port links, bb_credits, frame_size, credit_return) and a slow_drain fault.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

import pathsel
from pathsel.policies import LatencyRoundRobin, build_policy, parse_spec

# PATHSEL_EXAMPLES=1000 for a longer search; the default keeps the suite quick.
SETTINGS = settings(
    max_examples=int(os.environ.get("PATHSEL_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

ALUA = ["AO", "ANO", "standby", "unavailable", "transitioning"]
BS = ["512", "4k", "32k", "128k", "4k/50:64k/50", "4k:16k:1m"]


@dataclass(frozen=True)
class Case:
    toml: str
    policy: object  # spec string or a Policy instance
    population: int  # sum of iodepth x numjobs
    faults: int
    duration: float
    ramp: float
    can_fail: bool = False  # a short APD timeout lets I/Os fail visibly

    def __repr__(self) -> str:  # what Hypothesis prints for a failing example
        return f"Case(policy={self.policy!r}, population={self.population}, duration={self.duration})\n{self.toml}"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3f}us"


POLICY_SPECS = [
    "fixed",
    "fixed:preferred={path}",
    "mru",
    "rr",
    "rr:iops=1",
    "rr:iops=3",
    "rr:type=bytes,bytes=65536",
    "rr:iops=1,use_ano=1",
    "latency",
    "latency:variant=score",
    "latency:use_ano=1,tolerance=0.5",
    "latency:variant=min-set",
    "short-eval-latency",  # LatencyRoundRobin(num_sampling_cycles=2, latency_eval_time=2): re-evaluates often
    "short-eval-latency-score",
    "short-eval-latency-min-set",
    # issue 4
    "dm:round-robin",
    "dm:queue-length",
    "dm:service-time",
    "dm:historical-service-time",
    "dm:round-robin:path_grouping_policy=multibus",
    "dm:queue-length:path_grouping_policy=failover,failback=immediate",
    "dm:service-time:failback=immediate",
    "dm:historical-service-time:base_weight=600,threshold_multiplier=2,failback=immediate",
    "dm:historical-service-time:path_grouping_policy=failover,threshold_multiplier=4294967295",
    "nvme:numa",
    "nvme:round-robin",
    "nvme:queue-depth",
    "dm:io-affinity",  # issue 16: the issuing node's path (NUMA)
    "mpio:fo",
    "mpio:fo:failback=0",
    "mpio:rr",
    "mpio:rrws",
    "mpio:lqd",
    "mpio:wp",
    "mpio:lb",
    "hpp:fixed",
    "hpp:fixed:preferred={path}",
    "hpp:lb-rr:iops=3,bytes=65536",
    "hpp:lb-iops:iops=2",
    "hpp:lb-bytes:bytes=65536",
    "hpp:lb-latency",
    "hpp:lb-latency:variant=score",
    "hpp:lb-latency:variant=min-set",
    "p2c-ewma",
    "p2c-ewma:decay=0.001,use_ano=1",
]


def ao_first(spec: str) -> bool:
    """Whether the policy never takes an ANO path while an AO path is usable.

    Not so: a preferred or primary path (FIXED, HPP FIXED, MPIO Fail Over Only), every usable path
    (use_ano=1, MPIO Round Robin, dm multibus), a dm path group kept until it fails (failback manual or N).
    """
    spec_, _ = parse_spec(spec)
    params = spec_.as_dict()
    if spec_.name in ("fixed", "hpp:fixed", "mpio:fo", "mpio:rr") or params.get("use_ano"):
        return False
    if spec_.name.startswith("dm:"):
        return params["path_grouping_policy"] != "multibus" and params["failback"] == "immediate"
    return True


# Hosts and NUMA nodes (issue 38: the engines once disagreed on a one-node host beside a two-node one). "plain" is
# the one host without NUMA keys that most properties were first written for; the others give each host its own
# numa_nodes, SLIT matrix and penalty, and put paths' adapters and workloads on its nodes.
LAYOUTS = ["plain", "plain", "numa", "mixed", "mixed", "two"]


def _slit(draw, n: int) -> str:
    """A SLIT matrix numactl could print: 10 on the diagonal, each row's diagonal its smallest entry."""
    rows = [[10 if a == b else draw(st.sampled_from([11, 12, 20, 21, 31, 40])) for b in range(n)] for a in range(n)]
    return "[" + ", ".join("[" + ", ".join(map(str, r)) + "]" for r in rows) + "]"


@st.composite
def cases(draw, faults_allowed=True, policy=None, numa=None, issue33=None):
    """A random scenario. ``policy``: a spec, or a list to draw one from (default: any of POLICY_SPECS).
    ``numa``: a host layout of LAYOUTS ("mixed": a host with 2-3 NUMA nodes beside a one-node host), default drawn.
    ``issue33``: whether to draw issue 33's keys (transports and MTUs, a host CPU, a fabric with credits, a slow
    drain), default drawn."""
    n_arrays = draw(st.integers(1, 2))
    replicated = n_arrays == 2 and draw(st.booleans())
    protocol = draw(st.sampled_from(["scsi", "nvme"]))
    lines = ['name = "prop"', f"seed = {draw(st.integers(0, 2**16))}", f'protocol = "{protocol}"']

    arrays = []
    service_mean = []
    for a in range(n_arrays):
        svc = draw(st.floats(10e-6, 300e-6))
        service_mean.append(svc)
        conc = draw(st.integers(1, 16))
        arrays.append(
            f'[[arrays]]\nname = "a{a}"\nconcurrency = {conc}\n'
            f'service_time = {{ read = {{ dist = "exponential", mean = "{_us(svc)}" }}, '
            f'write = {{ dist = "exponential", mean = "{_us(svc)}" }} }}'
        )
    repl = []
    repl_lat = 0.0
    if replicated:
        repl_lat = draw(st.floats(10e-6, 1e-3))
        repl.append(f'[replication]\narrays = ["a0", "a1"]\none_way_latency = "{_us(repl_lat)}"')
        if draw(st.booleans()):
            repl.append('bandwidth = "10Gbit"')

    layout = numa if numa is not None else draw(st.sampled_from(LAYOUTS))
    if layout == "plain":
        nodes = [1]
    elif layout == "numa":
        nodes = [draw(st.integers(2, 3))]
    elif layout == "mixed":
        nodes = draw(st.permutations([draw(st.integers(2, 3)), 1]))
    else:
        nodes = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
    several = len(nodes) > 1
    host_names = ["h"] if not several else [f"h{h}" for h in range(len(nodes))]

    def on(h: int) -> str:
        """The host key of a path, workload or path fault: required once there are two hosts."""
        return f'\nhost = "{host_names[h]}"' if several else ""

    host_blocks = []
    for h, n in enumerate(nodes):
        block = f'[[hosts]]\nname = "{host_names[h]}"'
        if replicated and draw(st.booleans()):
            block += f'\npreferred_array = "a{draw(st.integers(0, 1))}"'
        if n > 1:
            block += f"\nnuma_nodes = {n}"
            if draw(st.booleans()):
                block += f"\nnuma_distances = {_slit(draw, n)}"
            if draw(st.booleans()):
                block += f'\nnuma_penalty = "{draw(st.sampled_from(["0us", "2us", "20us"]))}"'
        host_blocks.append(block)
    # issue 5: the host's timers and the wire's troubles, only where faults are allowed
    rough = faults_allowed and draw(st.booleans())
    can_fail = False

    def path_name(h: int, i: int) -> str:  # unique across hosts, so a trace's or event's path name is one path
        return f"vmhba{i % 2}:C{h}:T{i}:L0" if several else f"vmhba{i % 2}:C0:T{i}:L0"

    n_paths = [draw(st.integers(1, 6 if not several else 4)) for _ in nodes]
    paths = []
    lat_min = math.inf
    for h, n in enumerate(nodes):
        for i in range(n_paths[h]):
            lat = draw(st.floats(10e-6, 2e-3))
            lat_min = min(lat_min, lat)
            jitter = draw(st.booleans())
            delay = f'{{ dist = "uniform", low = "{_us(lat)}", high = "{_us(lat * 1.5)}" }}' if jitter else f'"{_us(lat)}"'
            block = f'[[paths]]\nname = "{path_name(h, i)}"{on(h)}\narray = "a{draw(st.integers(0, n_arrays - 1))}"\none_way_latency = {delay}'
            if n > 1:
                block += f"\nnuma_node = {draw(st.integers(0, n - 1))}"
            if draw(st.booleans()):
                block += f'\nbandwidth = "{draw(st.sampled_from(["1Gbit", "16Gbit", "100Gbit"]))}"'
            state = draw(st.one_of(st.none(), st.sampled_from(ALUA)))
            if state is not None:
                block += f'\nalua = "{state}"'
            if draw(st.booleans()):
                block += f"\nweight = {draw(st.integers(0, 3))}"  # Windows MPIO weighted paths
            if rough:
                ppm = draw(st.sampled_from([0, 0, 2000, 200000]))
                if ppm:
                    block += f'\nloss_ppm = {ppm}\nloss_recovery = "{_us(draw(st.floats(5e-6, 2e-3)))}"'
                if draw(st.booleans()):
                    block += f"\ndistance_km = {draw(st.sampled_from([1, 10, 50]))}"
                if draw(st.booleans()):
                    block += '\nlinks = ["hba"]'
            paths.append(block)

    # one workload per host, two on some NUMA hosts (on drawn nodes): one per node is what per-node state needs
    works = []
    population = 0
    for h, n in enumerate(nodes):
        for w in range(draw(st.integers(1, 2)) if n > 1 else 1):
            iodepth = draw(st.integers(1, 16 if not several else 8))
            numjobs = draw(st.integers(1, 2))
            work = (
                f'[[workloads]]\nname = "w{h}{w}"{on(h)}\nrw = "{draw(st.sampled_from(["randread", "randwrite", "randrw"]))}"\n'
                f'rwmixread = {draw(st.integers(0, 100))}\nbs = "{draw(st.sampled_from(BS))}"\niodepth = {iodepth}\nnumjobs = {numjobs}'
            )
            if n > 1:
                work += f"\nnuma_node = {draw(st.integers(0, n - 1))}"
            works.append(work)
            population += iodepth * numjobs

    # Size the run: an I/O takes at least 2 x the fastest leg + the fastest service
    # (the fastest path is 10 us, so at most ~32 / 30 us ~ 1e6 IOPS); aim for <= ~5000 I/Os
    # (the reference engine runs ~40,000 I/Os a second).
    fastest_io = 2 * lat_min + min(service_mean)
    iops_bound = population / fastest_io
    duration = min(max(5000.0 / iops_bound, 2e-3), 0.5)
    ramp = draw(st.sampled_from([0.0, 0.0, duration / 4]))
    if ramp:
        works = [w + f'\nramp_time = "{_us(ramp)}"' for w in works]
    lines.append(f'duration = "{_us(duration)}"')
    lines.append(f'interval = "{_us((duration + ramp) / 5)}"')

    span = duration + ramp
    extra = []
    if rough:  # the same timers on every host (test_no_attempt_outlives_io_timeout reads the least io_timeout)
        extra.append(f'[[links]]\nname = "hba"\nbandwidth = "{draw(st.sampled_from(["1Gbit", "8Gbit"]))}"')
        timers = f'\ndetection = "{_us(draw(st.sampled_from([0.0, 0.05, 0.3, 20.0])) * span)}"'
        if draw(st.booleans()):
            timers += f'\napd_timeout = "{_us(draw(st.floats(0.02, 0.5)) * span)}"'
            can_fail = True
        if draw(st.booleans()):
            timers += f'\nio_timeout = "{_us(draw(st.floats(0.05, 0.5)) * span)}"'
        host_blocks = [b + timers for b in host_blocks]
        if replicated and draw(st.booleans()):
            repl.append(f'loss_ppm = {draw(st.sampled_from([1000, 100000]))}\nloss_recovery = "{_us(0.01 * span)}"')
            repl.append(f"distance_km = {draw(st.sampled_from([5, 80]))}")
    faults = []
    if faults_allowed:
        kinds = ["path_down", "path_up", "alua"]
        if rough:
            kinds += ["latency", "loss", "array_down", "array_up"] + (["replication_down", "replication_up"] if replicated else [])
        for _ in range(draw(st.integers(0, 4 if rough else 3))):
            what = draw(st.sampled_from(kinds))
            at = draw(st.floats(0.0, 1.0)) * span
            f = f'[[faults]]\nat = "{_us(at)}"\nwhat = "{what}"'
            h = draw(st.integers(0, len(nodes) - 1))
            target = f'\npath = "{path_name(h, draw(st.integers(0, n_paths[h] - 1)))}"{on(h)}'
            if what in ("path_down", "path_up", "alua"):
                f += target
            elif what in ("latency", "loss"):
                choice = draw(st.sampled_from(["path", "hba"] + (["replication"] if replicated else [])))
                f += target if choice == "path" else f'\nlink = "{choice}"'
                if what == "latency":
                    f += f'\nadd = "{_us(draw(st.floats(0.0, 3e-3)))}"'
                else:
                    f += f"\nppm = {draw(st.sampled_from([0, 5000, 300000, 1000000]))}"
                if draw(st.booleans()):
                    f += f'\nduration = "{_us(draw(st.floats(0.05, 0.5)) * span)}"'
            elif what in ("array_down", "array_up"):
                f += f'\narray = "a{draw(st.integers(0, n_arrays - 1))}"'
            if what == "alua":
                f += f'\nstate = "{draw(st.sampled_from(ALUA))}"'
            faults.append(f)

    if isinstance(policy, list):
        spec = draw(st.sampled_from(policy))
    else:
        spec = policy if policy is not None else draw(st.sampled_from(POLICY_SPECS))
    if spec.endswith(":preferred={path}"):
        spec = spec.replace("{path}", path_name(0, draw(st.integers(0, n_paths[0] - 1))))
    elif spec == "short-eval-latency":
        spec = LatencyRoundRobin(num_sampling_cycles=2, latency_eval_time=2)
    elif spec == "short-eval-latency-score":
        spec = LatencyRoundRobin(num_sampling_cycles=2, latency_eval_time=2, variant="score")
    elif spec == "short-eval-latency-min-set":
        spec = LatencyRoundRobin(num_sampling_cycles=2, latency_eval_time=2, variant="min-set")

    # issue 33, drawn last so every draw above keeps its distribution: frames, the host's CPU, the fabric, slow drain
    if issue33 if issue33 is not None else draw(st.booleans()):
        if draw(st.booleans()):
            _frames(draw, protocol, host_blocks, paths)
        if draw(st.booleans()):
            _cpu(draw, nodes, host_blocks)
        if draw(st.booleans()):
            credited = _fabric(draw, paths, extra, rough, n_arrays)
            if faults_allowed and credited and draw(st.booleans()):
                faults.append(_slow_drain(draw, credited, span))

    toml = "\n".join(lines) + "\n\n" + "\n\n".join(arrays + ["\n".join(repl)] * bool(repl) + host_blocks + extra + paths + works + faults) + "\n"
    return Case(toml, spec, population, len(faults), duration, ramp, can_fail)


MTUS = st.sampled_from([576, 1500, 4200, 9000, 9216])


def _frames(draw, protocol: str, host_blocks: list[str], paths: list[str]) -> None:
    """Issue 33's frames: a transport (the host's, a path's own, or implied by a GFC speed), an MTU on Ethernet ones."""
    eth = ["iscsi"] if protocol == "scsi" else ["nvme-tcp", "nvme-roce"]
    fc = "fc" if protocol == "scsi" else "nvme-fc"
    for h in range(len(host_blocks)):
        t = draw(st.sampled_from([None, None, fc, *eth]))
        if t is not None:
            host_blocks[h] += f'\ntransport = "{t}"'
            if t in eth and draw(st.booleans()):
                host_blocks[h] += f"\nmtu = {draw(MTUS)}"
    for i, block in enumerate(paths):
        kind = draw(st.sampled_from([None, None, "speed", fc, *eth]))
        if kind is None:
            continue
        if kind == "speed":  # a GFC speed and no transport: FC framing, unless the host gives a transport
            speed = draw(st.sampled_from(["8GFC", "16GFC", "32GFC", "10GbE", "25GbE"]))
        else:
            block += f'\ntransport = "{kind}"'
            if kind in eth and draw(st.booleans()):
                block += f"\nmtu = {draw(MTUS)}"
            speed = draw(st.sampled_from([None, "10GbE", "25GbE", "16GFC"]))
        if speed is not None:
            block = re.sub(r'\nbandwidth = "[^"]*"', "", block) + f'\nbandwidth = "{speed}"'
        paths[i] = block


def _cpu(draw, nodes: list[int], host_blocks: list[str]) -> None:
    """Issue 33's host CPU on some hosts: a few cores (a multiple of its nodes), small costs, queues, IRQ affinity."""
    for h, n in enumerate(nodes):
        if not draw(st.booleans()):
            continue
        cores = n * draw(st.integers(1, 4))
        parts = [f"cores = {cores}"]
        for key in ("submit", "complete", "irq"):
            cost = draw(st.sampled_from([None, "0us", "0.5us", "2us", "10us", "100us"]))
            if cost is not None:
                parts.append(f'{key} = "{cost}"')
        if draw(st.booleans()):
            parts.append(f"coalesce = {draw(st.integers(1, 4))}")
        if draw(st.booleans()):
            parts.append(f"queues = {draw(st.integers(1, cores))}")
        affinity = draw(st.sampled_from([None, "local", "range", "list"]))
        if affinity == "local":
            parts.append('irq_affinity = "local"')
        elif affinity == "range":  # a cpulist, as smp_affinity_list writes it
            lo = draw(st.integers(0, cores - 1))
            parts.append(f'irq_affinity = "{lo}-{draw(st.integers(lo, cores - 1))}"')
        elif affinity == "list":
            listed = draw(st.lists(st.integers(0, cores - 1), min_size=1, max_size=cores, unique=True))
            parts.append(f"irq_affinity = {listed}")
        host_blocks[h] += "\ncpu = { " + ", ".join(parts) + " }"


def _fabric(draw, paths: list[str], extra: list[str], rough: bool, n_arrays: int) -> list[str]:
    """Issue 33's fabric: an ISL (between two switches, or a shorthand link) that some paths cross, credits on it and
    on the shared "hba" link, target port links per array behind the second switch. Returns the links with credits."""
    credited: list[str] = []

    def credits(name: str) -> str:
        text = f"\nbb_credits = {draw(st.integers(1, 24))}"
        if draw(st.booleans()):
            text += f"\nframe_size = {draw(st.sampled_from([36, 1024, 2148]))}"
        if draw(st.booleans()):  # a slow-drain port as a condition
            text += f'\ncredit_return = "{draw(st.sampled_from(["0s", "1us", "20us", "200us"]))}"'
        credited.append(name)
        return text

    switched = draw(st.booleans())
    if rough and draw(st.booleans()):  # extra[0] is the shared "hba" link
        extra[0] += credits("hba")
    if rough and switched:
        extra[0] += '\nbetween = ["h:hba", "sw0"]'
    isl = f'[[links]]\nname = "isl"\nbandwidth = "{draw(st.sampled_from(["1Gbit", "8GFC", "16GFC", "3200MB/s"]))}"'
    if switched:
        isl += '\nbetween = ["sw0", "sw1"]'
    if draw(st.booleans()):
        isl += f"\ndistance_km = {draw(st.sampled_from([0.1, 10, 50]))}"
    if draw(st.booleans()):
        isl += credits("isl")
    blocks = [isl]
    if switched:
        sw = ['[[switches]]\nname = "sw0"', '[[switches]]\nname = "sw1"']
        if draw(st.booleans()):
            sw[1] += f'\nlatency = "{draw(st.sampled_from(["0s", "0.8us", "5us"]))}"'
        for a in range(n_arrays):
            port = f'[[links]]\nname = "tgt{a}"\nbetween = ["sw1", "a{a}:fc0"]\nbandwidth = "{draw(st.sampled_from(["8GFC", "3200MB/s"]))}"'
            if draw(st.booleans()):
                port += credits(f"tgt{a}")
            blocks.append(port)
        blocks = sw + blocks
    extra.extend(blocks)
    for i, block in enumerate(paths):
        if not draw(st.booleans()):
            continue
        route = (["hba"] if '\nlinks = ["hba"]' in block else []) + ["isl"]
        if switched and draw(st.booleans()):
            route.append("tgt" + block.split('\narray = "a', 1)[1][0])  # its array's target port link
        paths[i] = block.replace('\nlinks = ["hba"]', "") + "\nlinks = [" + ", ".join(f'"{r}"' for r in route) + "]"
    return credited


def _slow_drain(draw, credited: list[str], span: float) -> str:
    """A slow_drain fault on a link with credits: R_RDYs returned late from now on (or for a while), or a stopped port."""
    f = f'[[faults]]\nat = "{_us(draw(st.floats(0.0, 1.0)) * span)}"\nwhat = "slow_drain"\nlink = "{draw(st.sampled_from(credited))}"'
    if draw(st.booleans()):
        f += f'\ncredit_return = "{_us(draw(st.floats(0.0, 2e-3)))}"'
        if draw(st.booleans()):
            f += f'\nduration = "{_us(draw(st.floats(0.05, 0.5)) * span)}"'
    else:
        f += f'\nstop = true\nduration = "{_us(draw(st.floats(0.02, 0.3)) * span)}"'
    return f


def _simulate(case: Case, **kw):
    return pathsel.simulate(pathsel.loads_scenario(case.toml), policies=[case.policy], **kw)


# ---------------------------------------------------------------------------
@SETTINGS
@given(cases())
def test_accounting_and_every_io_completes_exactly_once(case):
    res = _simulate(case, trace=True)
    run = res.runs[0]
    m = run.metrics
    acc = run.accounting
    assert acc["issued"] == acc["completed"] + acc["failed"] + acc["in_flight"] and acc["balanced"]
    if not case.can_fail:
        assert acc["failed"] == 0  # retried, never failed, unless an APD timeout ran out
    assert int(m.ts_failed.sum()) == acc["failed"]
    # closed loop: every slot always holds exactly one I/O, so at the end all of them are in flight
    assert acc["in_flight"] == case.population
    assert acc["issued"] == acc["completed"] + acc["failed"] + case.population
    if case.faults == 0 and "io_timeout" not in case.toml and "loss_ppm" not in case.toml:
        assert acc["retried"] == 0  # a lost frame past io_timeout is retried even without a fault
    # exactly once: the trace has one record per completed I/O, seqs unique and issued
    trace = m.trace
    assert trace is not None and len(trace) == acc["completed"]
    seqs = [t[0] for t in trace]
    assert len(set(seqs)) == len(seqs)
    assert all(1 <= s <= acc["issued"] for s in seqs)
    # every record is consistent: completed after issue, within the run, on a known path
    names = {p.name for p in run.model.paths}
    end = run.model.end
    for seq, job, op, size, issued_at, done, path, attempts in trace:
        assert 0.0 <= issued_at <= done < end + 1e-12
        assert op in ("read", "write") and size > 0 and path in names and attempts >= 1
    # completed counters agree with the time series and the histograms
    assert int(m.ts_ios.sum()) == acc["completed"]
    assert int(m.ts_path_ios.sum()) == acc["completed"]
    in_window = [t for t in trace if run.model.ramp <= t[5] < end]
    assert m.overall.n == len(in_window) == sum(h.n for h in m.path_hist)
    assert m.by_op["read"].n + m.by_op["write"].n == m.overall.n
    assert sum(m.bytes_by_op.values()) == sum(t[3] for t in in_window) == int(m.path_bytes.sum())
    # no path that was never usable carried I/O
    usable_ever = {p.name for p in run.model.paths if p.alua in ("AO", "ANO")}
    if case.faults == 0:
        assert {t[6] for t in trace} <= usable_ever


def _edges(run, trace, population_by_job):
    """Little's law edge terms, computed exactly from the trace.

    Over the window [r, e) of length T, the time integral of I/Os in flight is
    L x T = sum over I/Os of the part of [issued, done] inside the window, and
    lambda x W x T = sum of the latencies of I/Os completing inside it. They
    differ only by the I/Os straddling an edge: minus the age at r of those in
    flight at r that complete in the window, plus the in-window part of those
    still in flight at e. In a closed loop the issue times of the I/Os still in
    flight are known: every completion issues the job's next I/O at the same
    instant, so they are {0 x iodepth per job} + {completion times} - {issue times}.

    Returns (start edge by path, start edge total, end edge total), in seconds.
    """
    r, e = run.model.ramp, run.model.end
    pending: Counter = Counter()
    for job, n in population_by_job.items():
        pending[(job, 0.0)] += n
    start_by_path: dict[str, float] = {}
    for seq, job, op, size, a, d, path, attempts in trace:
        pending[(job, d)] += 1
        pending[(job, a)] -= 1
        if a < r <= d < e:
            start_by_path[path] = start_by_path.get(path, 0.0) + (r - a)
    assert all(v >= 0 for v in pending.values())
    in_flight_at_end = [a for (job, a), n in pending.items() for _ in range(n)]
    end_edge = sum(max(0.0, e - max(a, r)) for a in in_flight_at_end)
    return start_by_path, sum(start_by_path.values()), end_edge


@SETTINGS
@given(cases(), st.sampled_from(["fast", "reference"]))
def test_no_attempt_outlives_io_timeout(case, engine):
    """An attempt is aborted at io_timeout wherever it is (on the wire, queued or served at the array, mirroring).

    A path's histogram holds the time each completed attempt spent on it, with the exact
    maximum: none may pass the host's io_timeout. The abort is the first event of its
    instant, so an attempt that outlived it by even one event would show here.
    """
    res = _simulate(case, engine=engine)
    m = res.runs[0].metrics
    iot = min(h.io_timeout for h in res.runs[0].model.host_params)
    for h in m.path_hist:
        if h.n:
            assert h.hi <= iot * (1 + 1e-12)
    if math.isinf(iot):
        assert m.timed_out == 0


@SETTINGS
@given(cases(faults_allowed=False))
def test_littles_law_overall_and_per_path(case):
    res = _simulate(case, trace=True)
    run = res.runs[0]
    m = run.metrics
    trace = m.trace
    N = case.population
    T = run.duration
    little = run.little
    # exact: in a closed loop the time-average in flight is the population
    assert math.isclose(little["in_flight_mean"], N, rel_tol=1e-9)
    # exact: lambda x W is the sum of in-window latencies over the window length
    in_window = [t for t in trace if run.model.ramp <= t[5] < run.model.end]
    assert math.isclose(little["iops_x_latency"], sum(t[5] - t[4] for t in in_window) / T, rel_tol=1e-9, abs_tol=1e-12)
    # exact: L - lambda W is the edge terms and nothing else
    jobs = {j.index: j.iodepth for j in run.model.jobs}
    start_by_path, start_edge, end_edge = _edges(run, trace, jobs)
    gap = little["in_flight_mean"] - little["iops_x_latency"]
    assert math.isclose(gap, (end_edge - start_edge) / T, rel_tol=1e-6, abs_tol=1e-9 * N)
    # How close: each edge term is at most N x the slowest latency, so once the
    # window is long against the slowest I/O, lambda x W is within 5 % of L.
    # (A count of I/Os alone is no bound: latency RR is not stationary while it
    # samples a slow path at the start of the window, so the edges need not cancel.)
    # (Only when every host with a workload has a usable path: a host without one holds its I/Os the whole run,
    # in flight and never completing, with no latency to bound them.)
    usable_hosts = {p.host for p in run.model.paths if p.alua in ("AO", "ANO")}
    job_hosts = {j.host for j in run.model.jobs}
    w_max = max((t[5] - t[4] for t in trace), default=0.0)
    # ... and the I/Os still in flight at the end count by their age (a link a few credits of tiny frames drain at
    # kB/s holds a 1 MiB read the whole run: no completed latency bounds it)
    w_max = max(w_max, run.model.end - m.oldest_in_flight)
    if in_window and 2 * w_max / T <= 0.05 and job_hosts <= usable_hosts:
        assert abs(little["iops_x_latency"] / little["in_flight_mean"] - 1) <= 0.05
    # Per path. With no faults and a usable path from the start nothing ever
    # waits for a path, so the per-path means add up to N exactly (when every
    # host with a workload has one, as above).
    if not usable_hosts & job_hosts:
        assert m.completed == 0
        return
    rows = run.paths()
    if job_hosts <= usable_hosts:
        assert math.isclose(sum(r["in_flight_mean"] for r in rows), N, rel_tol=1e-9)
    # L_p - lambda_p W_p is path p's own edge terms: its start edge is known exactly,
    # its end edge is at most the end edge of all paths together.
    for row in rows:
        lam_w = row["iops"] * (row["latency_us"]["mean"] * 1e-6 if row["ios"] else 0.0)
        gap_p = row["in_flight_mean"] - lam_w
        assert -start_by_path.get(row["name"], 0.0) / T - 1e-9 <= gap_p <= end_edge / T + 1e-9, row


@SETTINGS
@given(cases())
def test_same_seed_same_json(case):
    a = _simulate(case).to_json()
    b = _simulate(case).to_json()
    assert a == b
    json.loads(a)  # valid JSON (no NaN, no numpy types)


@SETTINGS
@given(cases(), st.sampled_from(["fast", "reference"]))
def test_no_wire_or_core_is_busier_than_the_window(case, engine):
    """Issue 33: a wire's utilisation (frames, credits, back-pressure, slow drain) and a core's never pass 1."""
    run = _simulate(case, engine=engine).runs[0]
    for row in run.links():
        assert 0.0 <= row["utilisation"] <= 1.0 + 1e-12, row
    for host in run.cpus():
        assert all(0.0 <= u <= 1.0 + 1e-12 for u in host["utilisation"]), host


def _without_cpu_words(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("story", None)  # a sentence on the cores' load
    for r in d["runs"]:
        r.pop("cpus", None)
    return d


@SETTINGS
@given(cases(issue33=False), st.sampled_from(["fast", "reference"]))
def test_a_cpu_that_costs_nothing_changes_no_time(case, engine):
    """Issue 33: a cpu table on every host whose submit, complete and interrupt cost 0 s queues nothing: every time
    and count is the run's without it (6 cores: a multiple of 1, 2 or 3 NUMA nodes), a fault at 0 s too: work that
    costs nothing is no step of its own on either engine, so it moves no event past the faults of its instant.
    """
    free = '\ncpu = { cores = 6, submit = "0s", complete = "0s", irq = "0s" }'
    toml = re.sub(r'(\[\[hosts\]\]\nname = "[^"]*")', r"\1" + free.replace("\\", "\\\\"), case.toml)
    assert toml.count("cpu = {") == case.toml.count("[[hosts]]")
    plain = _simulate(case, engine=engine)
    costed = pathsel.simulate(pathsel.loads_scenario(toml), policies=[case.policy], engine=engine)
    assert all(len(r.cpus()) == case.toml.count("[[hosts]]") for r in costed.runs)
    assert _without_cpu_words(costed) == _without_cpu_words(plain)


def test_different_seed_can_differ():
    text = """
name = "seeds"
duration = "50ms"
[[arrays]]
name = "a"
service_time = { read = { dist = "exponential", mean = "100us" }, write = { dist = "exponential", mean = "100us" } }
[[paths]]
name = "p{i}"
count = 2
array = "a"
one_way_latency = "50us"
[[workloads]]
rw = "randrw"
bs = "4k/50:64k/50"
iodepth = 4
"""
    sc = pathsel.loads_scenario(text)
    a = pathsel.simulate(sc, policies=["rr:iops=1"], seed=1)
    b = pathsel.simulate(sc, policies=["rr:iops=1"], seed=2)
    assert a.seed == 1 and b.seed == 2
    assert a.to_json() != b.to_json()
    assert a.runs[0].latency_us != b.runs[0].latency_us
    assert pathsel.simulate(sc, policies=["rr:iops=1"], seed=1).to_json() == a.to_json()


def _per_job_prefix(trace, issued):
    """For each job, (op, size) of its I/Os in issue order, up to the first I/O not yet completed.

    seqs are numbered in issue order across jobs; only completed I/Os are in the
    trace, so the sequence is known exactly up to the first missing seq.
    """
    by_seq = {t[0]: t for t in trace}
    out: dict[int, list[tuple[str, int]]] = {}
    for s in range(1, issued + 1):
        t = by_seq.get(s)
        if t is None:
            break
        out.setdefault(t[1], []).append((t[2], t[3]))
    return out


POLICY_PAIRS = [("rr:iops=1", "fixed"), ("mru", "latency"), ("rr:type=bytes,bytes=65536", "latency:variant=score"), ("fixed", "rr:iops=1,use_ano=1")]


@SETTINGS
@given(cases(faults_allowed=False, policy="rr"), st.sampled_from(POLICY_PAIRS))
def test_common_random_numbers_across_policies(case, pair):
    sc = pathsel.loads_scenario(case.toml)
    res = pathsel.simulate(sc, policies=list(pair), trace=True)
    prefixes = [_per_job_prefix(r.metrics.trace, r.metrics.issued) for r in res.runs]
    jobs = set(prefixes[0]) & set(prefixes[1])
    checked = 0
    for job in jobs:
        k = min(len(prefixes[0][job]), len(prefixes[1][job]))
        assert prefixes[0][job][:k] == prefixes[1][job][:k], job
        checked += k
    # when both runs completed anything, some I/Os were compared (unless a host without a usable path holds one of
    # the first I/Os for ever: the prefixes stop at the first I/O not completed)
    model = res.runs[0].model
    stuck = {j.host for j in model.jobs} - {p.host for p in model.paths if p.alua in ("AO", "ANO")}
    if not stuck and all(r.metrics.completed >= 10 * case.population for r in res.runs):
        assert checked > 0


class Checked(pathsel.Policy):
    """Wraps a built-in policy and checks every choice it makes inside the engine."""

    name = "checked"

    def __init__(self, spec, ao_first: bool) -> None:
        self.inner = build_policy(spec)
        self.ao_first = ao_first

    def bind(self, device, rng) -> None:
        super().bind(device, rng)
        self.inner.bind(device, rng)

    def select(self, io):
        p = self.inner.select(io)
        usable = [q.name for q in self.device.paths if q.usable]
        if p is None:
            # dm-ps-io-affinity.c's ioa_select_path returns NULL when no unfailed path is mapped to any CPU. A path
            # whose CPUs another path took first (both on one NUMA node) is never chosen here, usable or not; the
            # kernel refuses such a table outright (ioa_add_path: "No new/valid CPU mapping found"), which pathsel
            # does not yet (issue 34)
            assert not usable or self.inner.name == "dm:io-affinity", f"t={self.device.now}: no path chosen while {usable} usable"
            return None
        assert p.usable, f"t={self.device.now}: chose {p!r}, not usable"
        if self.ao_first and any(q.usable and q.alua == "AO" for q in self.device.paths):
            assert p.alua == "AO", f"t={self.device.now}: chose ANO {p!r} while an AO path is usable"
        return p

    def on_complete(self, path, io, latency) -> None:
        self.inner.on_complete(path, io, latency)

    def on_path_change(self, path) -> None:
        self.inner.on_path_change(path)

    def config_string(self) -> str:
        return self.inner.config_string()


@SETTINGS
@given(cases(), st.sampled_from([s for s in POLICY_SPECS if "{path}" not in s and "short" not in s]))
def test_policies_choose_only_usable_paths_and_ao_first(case, spec):
    """Inside the engine, with faults: never a down/standby/unavailable path, None only
    when nothing is usable, and (useANO=0, not FIXED) no ANO path while an AO path is usable."""
    res = pathsel.simulate(pathsel.loads_scenario(case.toml), policies=[Checked(spec, ao_first(spec))], trace=True)
    run = res.runs[0]
    # completions never happen on a path while it is down
    down: dict[str, list[tuple[float, float]]] = {}
    state: dict[str, float] = {}
    for ev in run.metrics.events:
        if ev["event"] == "path_down" and ev["path"] not in state:
            state[ev["path"]] = ev["t"]
        elif ev["event"] == "path_up" and ev["path"] in state:
            down.setdefault(ev["path"], []).append((state.pop(ev["path"]), ev["t"]))
    for name, t0 in state.items():
        down.setdefault(name, []).append((t0, math.inf))
    # with a host CPU (issue 33) an I/O back over the wire before the cut is done only when a core has processed
    # its completion, which may be after the cut: the check holds for hosts without one
    model = run.model
    cpu_hosts = {h for h, n in enumerate(model.cpu.host_cores) if n} if model.cpu is not None else set()
    paths_with_cpu = {p.name for p in model.paths if p.host in cpu_hosts}
    for seq, job, op, size, a, d, path, attempts in run.metrics.trace:
        if path in paths_with_cpu:
            continue
        for t0, t1 in down.get(path, ()):
            assert not (t0 < d < t1), (seq, path, d, (t0, t1))
