"""Engine speed and memory on seed 004's test drive: a script that prints figures.

    python benchmarks/engines.py            # 60 s simulated per policy on each engine
    python benchmarks/engines.py --quick    # 5 s

Prints, for each built-in policy: simulated I/Os per wall second on the
reference (SimPy) and fast (numba) engines and their ratio; the fast engine's
compile time (cold, in a fresh process with an empty cache) and start time
(cached, in a fresh process); and its peak memory for 1 and 10 simulated
minutes. It asserts nothing: read the figures against the targets in issue 3.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pathsel
from pathsel.engine import run_fast, run_reference
from pathsel.model import compile_model

POLICIES = ["fixed", "mru", "rr:iops=1", "rr:bytes=65536", "latency", "latency:variant=score"]


def rate(engine, model, policy) -> tuple[float, int]:
    t = time.perf_counter()
    m = engine(model, policy)
    return m.completed / (time.perf_counter() - t), m.completed


def fresh_process(code: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 simulated seconds instead of 60 (reference engine: 2 s)")
    args = ap.parse_args()
    fast_s, ref_s = (5.0, 2.0) if args.quick else (60.0, 10.0)
    sc = pathsel.default_scenario()

    # Cold compile: a throwaway cache directory, so nothing is reused.
    cache = tempfile.mkdtemp(prefix="pathsel-numba-")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    probe = """
        import time; t = time.perf_counter()
        import pathsel
        from pathsel.engine import run_fast
        from pathsel.model import compile_model
        sc = pathsel.default_scenario(); m = compile_model(sc, sc.runs[0], duration=0.01)
        t1 = time.perf_counter(); run_fast(m, sc.runs[0].policy); print(time.perf_counter() - t1, t1 - t)
    """
    cold = float(fresh_process(probe, env).split()[0])
    warm, imports = map(float, fresh_process(probe, env).split())
    shutil.rmtree(cache, ignore_errors=True)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pathsel.cli", "simulate", "-q", "--duration", "0.01s"], capture_output=True, check=True)
    cli_start = time.perf_counter() - t
    print(f"fast engine compile (cold, empty cache):   {cold:6.2f} s")
    print(f"fast engine start (cached, fresh process): {warm:6.2f} s  (+ {imports:.2f} s importing pathsel)")
    print(f"`pathsel simulate --duration 0.01s` whole command, cached: {cli_start:.2f} s\n")

    print(f"{'policy':24s} {'reference I/O/s':>16s} {'fast I/O/s':>12s} {'fast/ref':>9s}")
    run_fast(compile_model(sc, sc.runs[0], duration=0.01), "rr")  # load the cache before timing
    for spec in POLICIES:
        runs = sc.with_policies([spec]).runs
        ref_rate, _ = rate(run_reference, compile_model(sc, runs[0], duration=ref_s), runs[0].policy)
        fast_rate, n = rate(run_fast, compile_model(sc, runs[0], duration=fast_s), runs[0].policy)
        print(f"{spec:24s} {ref_rate:16,.0f} {fast_rate:12,.0f} {fast_rate / ref_rate:8.1f}x")

    mem = """
        import resource, sys, pathsel
        from pathsel.engine import run_fast
        from pathsel.model import compile_model
        sc = pathsel.default_scenario(); run = sc.with_policies(["latency"]).runs[0]
        run_fast(compile_model(sc, run, duration=float(sys.argv[1])), run.policy)
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """
    peaks = {}
    for minutes in (1, 10):
        out = subprocess.run([sys.executable, "-c", textwrap.dedent(mem), str(60.0 * minutes)], capture_output=True, text=True, check=True)
        peaks[minutes] = int(out.stdout.strip()) / 1024
    print(f"\nfast engine peak RSS, latency RR: 1 min {peaks[1]:.1f} MiB, 10 min {peaks[10]:.1f} MiB "
          f"(+{(peaks[10] / peaks[1] - 1) * 100:.1f} %)")


if __name__ == "__main__":
    main()
