"""Write the two synthetic ping captures beside this file (see README.md).

Run from anywhere: ``python sims/data/make_ping_captures.py``. The same seed
gives the same files, byte for byte.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
Z99 = 2.3263478740408408

# name, address, round trip (shift, median, p99) in ms, seed
CAPTURES = [
    ("ping-same-az.txt", "10.1.0.12", (0.045, 0.078, 0.190), 1),
    ("ping-cross-az.txt", "10.2.0.12", (1.050, 1.380, 2.050), 2),
]
COUNT = 600  # ping -c 600 -i 0.2: two minutes


def iputils_time(ms: float) -> str:
    """How Linux ping (iputils) prints a round trip: three significant figures below 100 ms."""
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def capture(address: str, shift: float, median: float, p99: float, seed: int) -> str:
    rng = np.random.default_rng(seed)
    mu = math.log(median - shift)
    sigma = (math.log(p99 - shift) - mu) / Z99
    rtt = shift + rng.lognormal(mu, sigma, COUNT)
    printed = [iputils_time(x) for x in rtt]
    values = np.array([float(p) for p in printed])
    lines = [f"PING {address} ({address}) 56(84) bytes of data."]
    lines += [f"64 bytes from {address}: icmp_seq={i} ttl=64 time={t} ms" for i, t in enumerate(printed, 1)]
    mdev = math.sqrt(max(0.0, float(np.mean(values**2) - np.mean(values) ** 2)))
    lines += [
        "",
        f"--- {address} ping statistics ---",
        f"{COUNT} packets transmitted, {COUNT} received, 0% packet loss, time {int(COUNT * 200 - 200 + 12)}ms",
        f"rtt min/avg/max/mdev = {values.min():.3f}/{values.mean():.3f}/{values.max():.3f}/{mdev:.3f} ms",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    for name, address, (shift, median, p99), seed in CAPTURES:
        (HERE / name).write_text(capture(address, shift, median, p99, seed), encoding="utf-8")
