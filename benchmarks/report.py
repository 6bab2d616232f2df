"""How the HTML report's cost grows with the number of faults: a script that prints figures.

    python benchmarks/report.py                  # a flapping path with 100, 200 and 400 faults
    python benchmarks/report.py --faults 50,100  # other counts

A flapping path: one of four paths goes down and comes back up again and again
(alternating ``path_down`` and ``path_up``, evenly spread over a 10 s run), under
round robin and latency round robin. For each count it prints the seconds
``pathsel.simulate`` takes, then the seconds the report takes to build
(``pathsel.report.render``: tables and figures), and the report's seconds per
fault. Near-linear growth keeps the last column roughly flat as the count
doubles; quadratic growth doubles it.

Prints, and asserts nothing: timings depend on the machine (and, on a shared
virtual machine, on the moment).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def flapping(n_faults: int, duration: float = 10.0) -> str:
    """A scenario whose path p0 goes down and up ``n_faults`` times (down, up, down, ...)."""
    lines = [
        'name = "flapping path"',
        f'duration = "{duration:g}s"',
        "[[arrays]]",
        'name = "a"',
        "[[hosts]]",
        'name = "h"',
        'detection = "0s"',
        "[[paths]]",
        'name = "p{i}"',
        "count = 4",
        'array = "a"',
        'one_way_latency = "50us"',
        "[[workloads]]",
        "iodepth = 8",
        "[[policies]]",
        'spec = "rr:iops=1"',
        "[[policies]]",
        'spec = "latency"',
    ]
    for k in range(n_faults):
        at = (k + 1) * duration / (n_faults + 1)
        lines += ["[[faults]]", f'at = "{at:.6f}s"', f'what = "{"path_down" if k % 2 == 0 else "path_up"}"', 'path = "p0"']
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--faults", default="100,200,400", help="fault counts, comma-separated (default: 100,200,400)")
    args = ap.parse_args()
    counts = [int(c) for c in args.faults.split(",")]

    import pathsel
    from pathsel.results.report import render

    pathsel.simulate(duration=0.01)  # load (or compile) the fast engine first: not the report's cost
    print(f"{'faults':>6}  {'simulate (s)':>12}  {'report (s)':>10}  {'report per fault (ms)':>21}  {'HTML (MB)':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in counts:
            path = Path(tmp) / f"flap{n}.toml"
            path.write_text(flapping(n))
            t0 = time.perf_counter()
            result = pathsel.simulate(path)
            t1 = time.perf_counter()
            page = render(result)
            t2 = time.perf_counter()
            print(f"{n:>6}  {t1 - t0:>12.2f}  {t2 - t1:>10.2f}  {(t2 - t1) / n * 1e3:>21.1f}  {len(page) / 1e6:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
