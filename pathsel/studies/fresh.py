"""Fresh scenarios for an honest league: random set-ups and troubles, drawn from a seed nobody tuned against.

``guard`` (pathsel/policies/guard.py) was designed while looking at the
library (``sims/library/``); a result that holds only there proves little.
:func:`fresh_scenarios` draws a held-out set: each scenario a random
topology (one array or a metro pair 5-150 km apart, 1-3 hosts, 2-8 paths per
host and array, FC or NVMe-oF), a random workload at a realistic queue
depth, and one random trouble (none, a slower path, a lossy path, a flapping
path, a creeping path, a congested replication link, a path failure and
return), at random times inside the run. The ranges are the library's; the
draws are :class:`numpy.random.Generator` streams from
``SeedSequence(seed)``, so a seed names a set.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ScenarioError
from ..outputs import write_atomic

__all__ = ["fresh_scenarios", "write_fresh", "TROUBLES", "MAX_FRESH"]

MAX_FRESH = 1000  # a held-out set of more is a different study: a thousand files is already ~25 s of runs per policy

TROUBLES = ("none", "slow_path", "lossy_path", "flapping_path", "creeping_path", "congested_replication", "path_failure")
DURATION = 1.5  # measured seconds: the league runs 26 policies x many scenarios x 3 seeds
RAMP = 0.3


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
    if trouble == "congested_replication" and not metro:
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
    preferred = metro and rng.random() < 0.7
    name = f"fresh-{index:02d}-{trouble.replace('_', '-')}"
    arrays = ["site-a", "site-b"] if metro else ["array"]
    lines = [
        f"# A held-out scenario drawn by pathsel.studies.fresh from seed {seed} (scenario {index}); nobody tuned against it.",
        f'name = "{name}"',
        f'description = "held-out draw {index}: {"metro pair " + f"{km:.0f} km" if metro else "one array"}, {hosts} host(s) x {per} path(s) per array, '
        f'{"NVMe-oF" if nvme else "FC SCSI"}, {mix}/{100 - mix} {bs} at iodepth {iodepth} x {numjobs}; trouble: {trouble.replace("_", " ")}"',
        'source = "generated: pathsel.studies.fresh (random ranges as in the library, docs/league.md)"',
        f"seed = {int(rng.integers(1, 2**31))}",
        f'duration = "{DURATION}s"',
        'interval = "50ms"',
        f'protocol = "{"nvme" if nvme else "scsi"}"',
        'policies = ["rr"]',
        "",
    ]
    for a in arrays:
        lines += [
            "[[arrays]]",
            f'name = "{a}"',
            f"concurrency = {conc}",
            f'service_time = {{ read = {{ dist = "exponential", mean = "{_us(read_us)}" }}, '
            f'write = {{ dist = "exponential", mean = "{_us(write_us)}" }} }}',
            "",
        ]
    if metro:
        lines += ["[replication]", 'arrays = ["site-a", "site-b"]', f'one_way_latency = "{_us(km * 5)}"', 'bandwidth = "25GbE"', ""]
    for h in range(hosts):
        lines += ["[[hosts]]", f'name = "host{h}"', f'detection = "{detection}"', f"queue_depth = {qd}"]
        if preferred:
            lines.append(f'preferred_array = "{"site-a" if h % 2 == 0 else "site-b"}"')
        lines.append("")
    paths: list[tuple[int, str]] = []  # (host, name) of each path
    for h in range(hosts):
        for ai, a in enumerate(arrays):
            near = (h % 2 == ai) if metro else True
            lat = float(rng.uniform(20, 80)) + (0.0 if near else km * 5)
            for i in range(per):
                pname = f"nvme{h}c{ai * per + i}n1" if nvme else f"vmhba{h}:C0:T{ai * per + i}:L1"
                paths.append((h, pname))
                lines += [
                    "[[paths]]",
                    f'name = "{pname}"',
                    f'host = "host{h}"',
                    f'array = "{a}"',
                    f'one_way_latency = {{ dist = "uniform", low = "{_us(lat * 0.9)}", high = "{_us(lat * 1.1)}" }}',
                    f'bandwidth = "{bw}"',
                    "",
                ]
    for h in range(hosts):
        lines += [
            "[[workloads]]",
            f'name = "app{h}"',
            f'host = "host{h}"',
            'rw = "randrw"',
            f"rwmixread = {mix}",
            f'bs = "{bs}"',
            f"iodepth = {iodepth}",
            f"numjobs = {numjobs}",
            f'ramp_time = "{_ms(RAMP)}"',
            "",
        ]
    h, victim = paths[int(rng.integers(len(paths)))]
    t0 = RAMP + float(rng.uniform(0.1, 0.6))

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
        while t + period < RAMP + DURATION:
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
