"""Fresh scenarios for an honest league: random set-ups and troubles, drawn from a seed nobody tuned against.

``guard`` (pathsel/policies/guard.py) was designed while looking at the
library (``sims/library/``); a result that holds only there proves little.
:func:`fresh_scenarios` draws a held-out set: each scenario a random
topology (one array or a metro pair 5-150 km apart, 1-3 hosts, 2-8 paths per
host and array, FC or NVMe-oF), a random workload at a realistic queue
depth, one random variation of set-up (:data:`VARIANTS`) and one random
trouble (:data:`TROUBLES`), at random times inside the run. The draws are
:class:`numpy.random.Generator` streams from ``SeedSequence(seed)``, so a
seed names a set; the default seed stays 20261123.

Issue 37 added kinds of situation (the set a seed draws changed with them:
the default seed's scenarios are not those of earlier versions). Their
ranges come from the public descriptions the library's files cite:

* mixed bandwidths with large I/O: half the paths 2-10x narrower, 256 KiB
  to 1 MiB sequential I/O (Dell TR1105, MPIO with unequal link speeds);
* queue depth 1, one fabric 2-6 km longer: a redo-log writer (Oracle's
  log file parallel write, jrdba.com; 5 us a km), always on one array so
  no metro distance drowns the few km;
* many hosts on shared ports: 8-12 hosts on two target ports, one behind
  0-150 us more (Computer Weekly on fan-out ratios; IBM FlashSystem's
  per-port limits);
* a NUMA host whose faster NIC is on the far socket: SLIT 21, the
  application on node 0 (AMD Xilinx Onload UG1586; HP's note that BIOSes
  place PCIe slots unevenly);
* an array of a metro pair with 4-16 command slots, twice as quick when
  idle (Computer Weekly; Sakac on service time under load);
* a workload that changes phase: 4 KiB random reads, then 256 KiB or
  1 MiB sequential writes, every 0.2-0.6 s, each job on a repeating
  ``rate_schedule`` (fio's rate_iops). The reads are an open loop sized so
  one array keeps up (policies differ there in latency only); the writer
  offers more than its iodepth of 4 or 8 can carry and refuses the rest
  (``iodepth_full = "refuse"``, io_submit's EAGAIN), so in its phase it is a
  closed loop and its IOPS differ by policy. Never beside a trouble that
  stalls a path, where open arrivals would pile up;
* a slow path that recovers: 0.3-3 ms more for 0.1-0.5 s (Gunawi et al.,
  Fail-Slow at Scale, FAST 2018: transient fail-slow faults);
* periodic bursts on an ISL: 0.5-5 ms more for 10-60 ms every 0.15-0.5 s
  (Brocade FPI "10 ms Frame Delay" alerts recurring on an ISL; the period
  scaled to a 1.5 s run);
* heavy-tailed paths: half the paths lognormal, median 0.6x the steady
  ones' base latency, p99 5-20x that median (Dean and Barroso, The Tail at
  Scale, 2013); the far site's fibre (``distance_km``, 5 us a km) stays a
  fixed addition, as light in fibre has no tail;
* a busy local array in a metro pair: every host sits at site A, where
  another host's open-loop reads keep the array's 16-32 slots (fewer on a
  quick array) 50-75 % busy at no more than 100,000 IOPS; uniform access.

Paths to the far site of a metro pair carry ``distance_km`` (the pair's
distance), as the library's metro files do. Every generated run stays near
or under 1 s of wall time on the fast engine: the closed-loop jobs of a
scenario keep at most 128 I/Os outstanding (iodepth halved until they fit);
the open-loop jobs' iodepth (2,048 for phase reads, 4,096 for a busy
neighbour) is only a ceiling, their offered rates being sized to what the
array carries, and a busy neighbour offers at most 100,000 IOPS.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ScenarioError
from ..outputs import write_atomic

__all__ = ["fresh_scenarios", "write_fresh", "TROUBLES", "VARIANTS", "MAX_FRESH"]

MAX_FRESH = 1000  # a held-out set of more is a different study: a thousand files is already ~25 s of runs per policy

TROUBLES = (
    "none",
    "slow_path",
    "lossy_path",
    "flapping_path",
    "creeping_path",
    "congested_replication",
    "path_failure",
    "slow_path_recovers",
    "periodic_bursts",
    "heavy_tails",
    "busy_local_array",
)
# Variations of set-up and workload, drawn beside the trouble (issue 37's kinds of situation).
VARIANTS = ("plain", "mixed_bandwidth", "qd1_longer_fabric", "many_hosts", "numa_far_nic", "fewer_slots", "phase_change")
# Troubles under which an open-loop (phase_change) workload could pile up arrivals behind a dead or stalling path
_STALLING = ("lossy_path", "flapping_path", "path_failure")
DURATION = 1.5  # measured seconds: the league runs every policy (32) x many scenarios x 3 seeds
RAMP = 0.3
_BW = {"16Gbit": 2.0e9, "32Gbit": 4.0e9, "25Gbit": 3.125e9}  # bytes per second, as the loader reads them


def _us(x: float) -> str:
    return f"{x:.0f}us"


def _ms(x: float) -> str:
    return f"{x * 1e3:.0f}ms"


def _one(rng: np.random.Generator, index: int, seed: int) -> tuple[str, str]:
    nvme = rng.random() < 0.3
    metro = rng.random() < 0.6
    hosts = int(rng.integers(1, 4))
    per = int(rng.integers(2, 9))  # paths per host and array
    trouble = TROUBLES[int(rng.integers(len(TROUBLES)))]
    variant = VARIANTS[int(rng.integers(len(VARIANTS)))]
    if variant == "many_hosts":  # 8-12 hosts on one array's two target ports (Computer Weekly's fan-out; IBM's per-port limits)
        metro, hosts, per = False, int(rng.integers(8, 13)), 2
    if variant == "fewer_slots":  # one array of a metro pair with few command slots
        metro = True
    if variant == "qd1_longer_fabric":  # one array: the few km of the longer fabric must not drown in a metro's distance
        metro = False
    if variant == "phase_change" and trouble in _STALLING:
        variant = "plain"
    if trouble in ("congested_replication", "busy_local_array") and not metro:
        trouble = "slow_path"
    km = float(rng.uniform(5, 150))
    conc = int(rng.choice([32, 64, 128, 256]))
    read_us = float(rng.uniform(80, 400))
    write_us = float(rng.uniform(60, 300))
    bw = str(rng.choice(["16Gbit", "32Gbit", "25Gbit"]))
    qd = int(rng.choice([32, 64, 128])) if not nvme else 128
    mix = int(rng.integers(30, 91))
    bs = str(rng.choice(["4k", "8k", "16k", "32k", "64k"]))
    iodepth = int(rng.choice([8, 16, 32, 64]))
    numjobs = int(rng.integers(1, 4))
    detection = str(rng.choice(["500ms", "1s", "5s"]))
    preferred = metro and rng.random() < 0.7 and trouble != "busy_local_array"  # a busy local array matters under uniform access
    rw = "randrw"
    slow_bw = bw  # the narrow paths' bandwidth (mixed_bandwidth)
    if variant == "mixed_bandwidth":  # Dell TR1105: links of unequal speed; large sequential I/O makes bandwidth count
        ratio = float(rng.choice([2.0, 2.5, 4.0, 10.0]))
        slow_bw = f"{_BW[bw] / ratio / 1e6:.0f}MB/s"
        bs = str(rng.choice(["256k", "512k", "1m"]))
        rw = str(rng.choice(["read", "write"]))
        iodepth, numjobs = int(rng.choice([4, 8, 16])), 1
    elif variant == "qd1_longer_fabric":  # a redo-log writer: one I/O outstanding, one fabric 2-6 km longer
        iodepth, numjobs, rw = 1, 1, "write"
        extra_km = float(rng.uniform(2, 6))
    elif variant == "many_hosts":
        iodepth, numjobs = int(rng.choice([4, 8])), 1
    while hosts * iodepth * numjobs > 128 and iodepth > 1:  # keeps a run under about 1 s of wall time on the fast engine
        iodepth //= 2
    slots_b = int(rng.integers(4, 17)) if variant == "fewer_slots" else conc
    name = f"fresh-{index:02d}-{trouble.replace('_', '-')}"
    arrays = ["site-a", "site-b"] if metro else ["array"]
    lines = [
        f"# A held-out scenario drawn by pathsel.studies.fresh from seed {seed} (scenario {index}); nobody tuned against it.",
        f'name = "{name}"',
        f'description = "held-out draw {index}: {"metro pair " + f"{km:.0f} km" if metro else "one array"}, {hosts} host(s) x {per} path(s) per array, '
        f"{'NVMe-oF' if nvme else 'FC SCSI'}, {mix}/{100 - mix} {bs} at iodepth {iodepth} x {numjobs}; trouble: {trouble.replace('_', ' ')}; "
        f'set-up: {variant.replace("_", " ")}"',
        'source = "generated: pathsel.studies.fresh (random ranges as in the library and its public sources, docs/league.md)"',
        f"seed = {int(rng.integers(1, 2**31))}",
        f'duration = "{DURATION}s"',
        'interval = "50ms"',
        f'protocol = "{"nvme" if nvme else "scsi"}"',
        'policies = ["rr"]',
        "",
    ]
    slots_a = min(conc, int(rng.integers(16, 33))) if trouble == "busy_local_array" else conc  # a smaller array, kept busy
    if trouble == "busy_local_array":  # few enough slots that 75 % of them busy is at most 100,000 IOPS of the neighbour's
        slots_a = min(slots_a, int(100_000 * read_us * 1e-6 / 0.75))
    for ai, a in enumerate(arrays):
        few = ai == 1 and variant == "fewer_slots"  # quicker when idle, but few slots: its latency grows with load
        lines += [
            "[[arrays]]",
            f'name = "{a}"',
            f"concurrency = {slots_b if few else (slots_a if ai == 0 else conc)}",
            f'service_time = {{ read = {{ dist = "exponential", mean = "{_us(read_us * (0.5 if few else 1.0))}" }}, '
            f'write = {{ dist = "exponential", mean = "{_us(write_us * (0.5 if few else 1.0))}" }} }}',
            "",
        ]
    if metro:
        lines += ["[replication]", 'arrays = ["site-a", "site-b"]', f'one_way_latency = "{_us(km * 5)}"', 'bandwidth = "25GbE"', ""]
    if trouble == "periodic_bursts":  # fabric A's paths (the even ones) cross one ISL that congests in bursts
        lines += ["[[links]]", 'name = "isl-a"', f'bandwidth = "{bw}"', ""]
    if variant == "many_hosts":  # every host's path i lands on target port i: two ports shared by all
        lines += ["[[links]]", 'name = "tp0"', f'bandwidth = "{bw}"', ""]
        lines += ["[[links]]", 'name = "tp1"', f'bandwidth = "{bw}"', f'extra_latency = "{_us(float(rng.uniform(0, 150)))}"', ""]
    for h in range(hosts):
        lines += ["[[hosts]]", f'name = "host{h}"', f'detection = "{detection}"', f"queue_depth = {qd}"]
        if preferred:
            lines.append(f'preferred_array = "{"site-a" if h % 2 == 0 else "site-b"}"')
        if variant == "numa_far_nic":  # two sockets; the faster adapters sit on node 1, the application on node 0
            lines += ["numa_nodes = 2", "numa_distances = [[10, 21], [21, 10]]", "cpu = { cores = 8 }"]
        lines.append("")
    heavy = trouble == "heavy_tails"
    tail = float(rng.uniform(5, 20))  # p99 / median of a heavy-tailed path (The Tail at Scale; Tiny-Tail Flash)
    paths: list[tuple[int, str]] = []  # (host, name) of each path
    for h in range(hosts):
        for ai, a in enumerate(arrays):
            # every host sits at site A beside the busy array; otherwise hosts alternate between the sites
            near = (ai == 0 if trouble == "busy_local_array" else h % 2 == ai) if metro else True
            lat = float(rng.uniform(20, 80))  # the base one-way latency; the far site's fibre is distance_km, fixed
            for i in range(per):
                pname = f"nvme{h}c{ai * per + i}n1" if nvme else f"vmhba{h}:C0:T{ai * per + i}:L1"
                paths.append((h, pname))
                if heavy and i % 2 == 0:  # lower median, long tail, on the base latency only (light in fibre has no tail)
                    delay = f'{{ dist = "lognormal", median = "{_us(lat * 0.6)}", p99 = "{_us(lat * 0.6 * tail)}" }}'
                else:
                    delay = f'{{ dist = "uniform", low = "{_us(lat * 0.9)}", high = "{_us(lat * 1.1)}" }}'
                narrow = (variant == "mixed_bandwidth" and i % 2 == 1) or (variant == "numa_far_nic" and i % 2 == 0)
                lines += [
                    "[[paths]]",
                    f'name = "{pname}"',
                    f'host = "host{h}"',
                    f'array = "{a}"',
                    f"one_way_latency = {delay}",
                    f'bandwidth = "{slow_bw if variant == "mixed_bandwidth" and narrow else ("10Gbit" if narrow else bw)}"',
                ]
                dist_km = (0.0 if near else km) + (extra_km if variant == "qd1_longer_fabric" and i % 2 == 1 else 0.0)
                if dist_km:
                    lines.append(f"distance_km = {dist_km:.1f}")
                if variant == "numa_far_nic":
                    lines.append(f"numa_node = {i % 2}")
                links = (["isl-a"] if trouble == "periodic_bursts" and i % 2 == 0 else []) + ([f"tp{i % 2}"] if variant == "many_hosts" else [])
                if links:
                    lines.append("links = [" + ", ".join(f'"{x}"' for x in links) + "]")
                lines.append("")
    if trouble == "busy_local_array":  # another host's open-loop reads keep site-a's slots 50-75 % busy; site-b idle
        # (slots_a was sized so that the draw below never reaches the 100,000 IOPS cap)
        lines += ["[[hosts]]", f'name = "host{hosts}"', f'detection = "{detection}"', ""]
        lat = float(rng.uniform(20, 80))
        for i in range(2):
            lines += [
                "[[paths]]",
                f'name = "{"nvme" if nvme else "vmhba"}{hosts}{"c" if nvme else ":C0:T"}{i}{"n1" if nvme else ":L1"}"',
                f'host = "host{hosts}"',
                'array = "site-a"',
                f'one_way_latency = {{ dist = "uniform", low = "{_us(lat * 0.9)}", high = "{_us(lat * 1.1)}" }}',
                f'bandwidth = "{bw}"',
                "",
            ]
        busy = min(float(rng.uniform(0.5, 0.75)) * slots_a / (read_us * 1e-6), 100_000.0)
        lines += ["[[workloads]]", 'name = "neighbour"', f'host = "host{hosts}"', 'rw = "randread"', 'bs = "4k"', "iodepth = 4096"]
        lines += [f"rate_iops = {busy:.0f}", 'rate_process = "poisson"', f'ramp_time = "{_ms(RAMP)}"', ""]
    for h in range(hosts):
        if variant == "phase_change":  # small random reads, then large sequential writes, and back (two open-loop jobs)
            period = float(rng.uniform(0.2, 0.6))
            cap = min(slots_a, slots_b) / (read_us * 1e-6) / hosts  # one array alone must keep up (mru, fixed)
            reads = float(rng.uniform(0.15, 0.35)) * min(cap, 200_000)
            big = int(rng.choice([256, 1024]))  # KiB
            # The writer offers more than `depth` I/Os in flight can carry (the least latency a write can see: 10 us
            # each way, its transfer on the fastest path, the array's mean write time) and refuses the rest, as
            # io_submit answers EAGAIN: in its phase it is a closed loop of `depth`, so IOPS differ by policy.
            depth = int(rng.choice([4, 8]))
            writes = 1.25 * depth / (20e-6 + big * 1024 / _BW[bw] + write_us * 1e-6)
            half = _ms(period / 2)
            lines += ["[[workloads]]", f'name = "app{h}-reads"', f'host = "host{h}"', 'rw = "randread"', 'bs = "4k"', "iodepth = 2048"]
            lines += ['rate_process = "poisson"', f'rate_schedule = [{{ at = "0s", rate_iops = {reads:.0f} }}, {{ at = "{half}", rate_iops = 0 }}]']
            lines += [f'rate_schedule_period = "{_ms(period)}"', f'ramp_time = "{_ms(RAMP)}"']
            lines += ["numa_node = 0"] if variant == "numa_far_nic" else []
            lines += ["", "[[workloads]]", f'name = "app{h}-writes"', f'host = "host{h}"', 'rw = "write"', f'bs = "{big}k"', f"iodepth = {depth}"]
            lines += ['iodepth_full = "refuse"']
            lines += [f'rate_schedule = [{{ at = "0s", rate_iops = 0 }}, {{ at = "{half}", rate_iops = {writes:.0f} }}]']
            lines += [f'rate_schedule_period = "{_ms(period)}"', f'ramp_time = "{_ms(RAMP)}"', ""]
            continue
        lines += [
            "[[workloads]]",
            f'name = "app{h}"',
            f'host = "host{h}"',
            f'rw = "{rw}"',
        ]
        if rw == "randrw":
            lines.append(f"rwmixread = {mix}")
        lines += [
            f'bs = "{bs}"',
            f"iodepth = {iodepth}",
            f"numjobs = {numjobs}",
            f'ramp_time = "{_ms(RAMP)}"',
        ]
        if variant == "numa_far_nic":
            lines.append("numa_node = 0")
        lines.append("")
    h, victim = paths[int(rng.integers(len(paths)))]
    t0 = RAMP + float(rng.uniform(0.1, 0.6))
    end = RAMP + DURATION

    def fault(at: float, what: str, **kv: str | float) -> list[str]:
        out = ["[[faults]]", f'at = "{_ms(at)}"', f'what = "{what}"']
        out += [f'{k} = "{v}"' if isinstance(v, str) else f"{k} = {v}" for k, v in kv.items()]
        return out + [""]

    if trouble == "slow_path":
        lines += fault(t0, "latency", path=victim, host=f"host{h}", add=_us(float(rng.uniform(300, 3000))))
    elif trouble == "lossy_path":
        lines += fault(t0, "loss", path=victim, host=f"host{h}", ppm=int(rng.choice([200, 1000, 5000])))
    elif trouble == "flapping_path":
        period = float(rng.uniform(0.1, 0.3))
        t = t0
        while t + period < end:
            lines += fault(t, "path_down", path=victim, host=f"host{h}")
            lines += fault(t + period / 2, "path_up", path=victim, host=f"host{h}")
            t += period
    elif trouble == "creeping_path":
        step = float(rng.uniform(50, 300))
        for i in range(6):
            lines += fault(t0 + i * 0.15, "latency", path=victim, host=f"host{h}", add=_us(step * (i + 1)))
    elif trouble == "congested_replication":
        lines += fault(t0, "latency", link="replication", add=_us(float(rng.uniform(500, 3000))))
    elif trouble == "path_failure":
        lines += fault(t0, "path_down", path=victim, host=f"host{h}")
        lines += fault(t0 + float(rng.uniform(0.3, 0.7)), "path_up", path=victim, host=f"host{h}")
    elif trouble == "slow_path_recovers":  # a transient fail-slow fault (Gunawi et al. 2018): slow, then healed
        add, last = _us(float(rng.uniform(300, 3000))), _ms(float(rng.uniform(0.1, 0.5)))
        lines += fault(t0, "latency", path=victim, host=f"host{h}", add=add, duration=last)
    elif trouble == "periodic_bursts":  # Brocade FPI frame delays that recur; period scaled to the run
        period, length = float(rng.uniform(0.15, 0.5)), float(rng.uniform(0.01, 0.06))
        add = _us(float(rng.uniform(500, 5000)))
        t = t0
        while t < end:
            lines += fault(t, "latency", link="isl-a", add=add, duration=_ms(length))
            t += period
    return name, "\n".join(lines) + "\n"


def fresh_scenarios(n: int, seed: int = 20261123) -> list[tuple[str, str]]:
    """``n`` held-out scenarios drawn from ``seed``: (name, TOML text) pairs."""
    children = np.random.SeedSequence(seed).spawn(n)
    return [_one(np.random.default_rng(c), i, seed) for i, c in enumerate(children)]


def write_fresh(folder: str | Path, n: int, seed: int = 20261123) -> list[Path]:
    """Write :func:`fresh_scenarios` into ``folder`` (made if missing) as ``NAME.toml``; returns the files."""
    if not 1 <= n <= MAX_FRESH:
        raise ScenarioError("fresh scenarios", "count", f"must be 1 .. {MAX_FRESH:,}, got {n!r}")
    where = Path(folder)
    out = []
    try:
        where.mkdir(parents=True, exist_ok=True)
        for name, text in fresh_scenarios(n, seed):
            p = where / f"{name}.toml"
            write_atomic(p, text)
            out.append(p)
    except OSError as e:
        raise ScenarioError(str(where), "", f"cannot write the generated scenarios there: {e.strerror or e}") from None
    return out
