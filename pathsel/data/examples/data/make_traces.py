"""Write oltp-burst.blkparse.txt: a synthetic blkparse text dump of a database volume with one burst.

Run from this folder: ``python make_traces.py``. A fixed seed: running it again
rewrites the file byte for byte.

What it holds: the ``Q`` (queued) events blkparse prints, as
``maj,min cpu seq time pid action rwbs sector + blocks [process]`` (a real
dump interleaves G, I, D and C lines too; the reader keeps Q, or D when there
is no Q). 8 KiB reads (70 %) and writes (30 %), Poisson arrivals at 5,000 IOPS
for 60 ms, a checkpoint-like burst at 30,000 IOPS for 20 ms, then 5,000 IOPS
for 60 ms again (about 1,200 I/Os). A few flushes (``FWS``, no data) and discards are
mixed in as real dumps have them; pathsel's reader leaves them out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("oltp-burst.blkparse.txt")


def main() -> None:
    rng = np.random.default_rng(20261123)
    times: list[float] = []
    for start, end, rate in ((0.0, 0.060, 5000.0), (0.060, 0.080, 30000.0), (0.080, 0.140, 5000.0)):
        t = start
        while True:
            t += rng.exponential(1.0 / rate)
            if t >= end:
                break
            times.append(t)
    lines, seq = [], 0
    for t in times:
        seq += 1
        cpu = int(rng.integers(0, 4))
        pid = 4100 + int(rng.integers(0, 8))
        sector = int(rng.integers(0, 1 << 28)) // 16 * 16
        u = rng.random()
        if u < 0.01:  # a journal flush: no data
            lines.append(f"  8,16   {cpu} {seq:8d} {t:14.9f}   501  Q FWS [jbd2/sdb1-8]")
            continue
        if u < 0.02:  # a discard
            lines.append(f"  8,16   {cpu} {seq:8d} {t:14.9f}   777  Q   D {sector} + 64 [fstrim]")
            continue
        rwbs = "RS" if u < 0.7 else "WS"
        lines.append(f"  8,16   {cpu} {seq:8d} {t:14.9f} {pid:5d}  Q {rwbs:>3} {sector} + 16 [postgres]")
    lines.append("CPU0 (8,16):")
    lines.append(f" Reads Queued: {len(times):10d}")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
