"""Sweep throughput and memory: a script that prints figures.

    python benchmarks/sweep.py            # 48 runs of 2 s simulated per worker count; long sweeps of 300 and 1200 runs
    python benchmarks/sweep.py --quick    # 16 runs; 100 and 400

Prints, on the founding test drive (its three policies per run):

* throughput on 1 worker (in this process) and on every local core (a process
  pool): runs per wall second and simulated I/Os per wall second (measured I/Os
  of every policy), the speed-up and the efficiency (speed-up / workers);
* the peak memory (RSS) of a sweep process and of its busiest worker for a
  long sweep of short runs saved to CSV, at two lengths: flat means the sweep
  holds no more than the runs in flight.

"cores busy" is CPU seconds (the sweep and its workers) per wall second: when
it stays near 1 with every worker, other processes hold the cores and the
speed-up says nothing about the sweep; "CPU per run" near 1x says the pool
itself costs little.

Each measurement runs in a fresh process (the fast engine's compiled code is
loaded from its cache first, so compiling is not timed). It asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

PROBE = """
    import json, os, resource, sys, tempfile, time
    import pathsel
    from pathsel.studies.sweep import sweep
    pathsel.simulate(duration=0.001)  # load the compiled engine before the clock starts
    runs, duration, workers, out = {runs}, {duration}, {workers}, {out!r}
    # A scenario key every run reads, so that each point runs all three policies (a policy parameter would
    # set latency round robin's runs only, and the round robin runs would run once).
    slots = [64 + i for i in range(runs)]
    t, c0 = time.perf_counter(), os.times()
    res = sweep(None, {{"arrays[*].concurrency": slots}}, replications=1, seed=1, duration=duration,
                executor="serial" if workers == 1 else None, workers=workers, out=out)
    wall, c1 = time.perf_counter() - t, os.times()
    cpu = sum(getattr(c1, k) - getattr(c0, k) for k in ("user", "system", "children_user", "children_system"))
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({{"runs": res.ran, "wall": wall, "cpu": cpu, "ios": int(res.table.ios.sum()), "rss_kb": me, "child_rss_kb": kids}}))
"""


def measure(runs: int, duration: float, workers: int, out: str | None = None) -> dict:
    code = textwrap.dedent(PROBE.format(runs=runs, duration=duration, workers=workers, out=out))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def cores() -> int:
    if hasattr(os, "process_cpu_count"):
        return os.process_cpu_count() or 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs")
    args = ap.parse_args()
    runs, long_runs = (16, (100, 400)) if args.quick else (48, (300, 1200))
    n = cores()
    print(f"sweep throughput: the founding test drive, 3 policies per run, 2 s simulated, {runs} runs; {n} local core(s)\n")
    print(f"{'workers':>8s} {'wall s':>8s} {'runs/s':>8s} {'sim I/O per wall s':>19s} {'CPU s':>7s} {'cores busy':>10s}")
    rates, cpus = {}, {}
    for w in sorted({1, n}):
        m = measure(runs, 2.0, w)
        rates[w], cpus[w] = m["runs"] / m["wall"], m["cpu"]
        print(f"{w:8d} {m['wall']:8.2f} {rates[w]:8.2f} {m['ios'] / m['wall']:19,.0f} {m['cpu']:7.2f} {m['cpu'] / m['wall']:10.2f}")
    if n > 1:
        speedup = rates[n] / rates[1]
        print(
            f"\nspeed-up on {n} workers: {speedup:.2f}x (efficiency {speedup / n:.0%}); "
            f"CPU per run {cpus[n] / cpus[1]:.2f}x the serial run's (the pool's overhead)"
        )
        print(
            f"load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (other processes on these cores cap the speed-up: read 'cores busy')"
        )

    print(f"\nmemory of a long sweep (0.05 s simulated per run, {n} workers, saved to CSV as runs finish):")
    print(f"{'runs':>8s} {'wall s':>8s} {'sweep peak RSS MB':>18s} {'worker peak RSS MB':>19s}")
    with tempfile.TemporaryDirectory() as tmp:
        for k in long_runs:
            m = measure(k, 0.05, n, out=os.path.join(tmp, f"long-{k}.csv"))
            print(f"{k:8d} {m['wall']:8.2f} {m['rss_kb'] / 1024:18.0f} {m['child_rss_kb'] / 1024:19.0f}")


if __name__ == "__main__":
    main()
