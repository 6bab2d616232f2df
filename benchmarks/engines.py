"""Engine speed and memory on seed 004's test drive: a script that prints figures.

    python benchmarks/engines.py            # 60 s simulated per policy (fast), 10 s (reference)
    python benchmarks/engines.py --quick    # 5 s and 2 s

Prints, for every built-in policy (the six ESXi specs issue 3 names first, then
each other family at its defaults): simulated I/Os per wall second on the
reference (SimPy) and fast (numba) engines and their ratio; the fast engine's
compile time (cold, in a fresh process with an empty cache) and start time
(cached, in a fresh process); and its peak memory for 1 and 10 simulated
minutes. It asserts nothing: read the figures against the targets in issue 3.

Each fast figure is the best and the median of several runs of the same
simulation (``--repeat``): on a shared virtual machine the same run's speed
varies by a third from one second to the next, and interference only ever
slows a run down, so the best is the machine's speed and the median what a
user sees. The runs go round by round over the policies, so a slow spell
costs each policy one run rather than one policy all of them. The ratio
divides the median by the reference engine's figure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import pathsel
from pathsel.engine import run_fast, run_reference
from pathsel.model import compile_model
from pathsel.policies import POLICY_DEFS

ESXI = ["fixed", "mru", "rr:iops=1", "rr:bytes=65536", "latency", "latency:variant=score"]
OTHERS = [name for name in POLICY_DEFS if name not in ("fixed", "mru", "rr", "latency")]


def rates(engine, model, policy, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        m = engine(model, policy)
        out.append(m.completed / (time.perf_counter() - t))
    return out


def fresh_process(code: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 simulated seconds instead of 60 (reference engine: 2 s)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each fast simulation (default 5)")
    ap.add_argument("--esxi-only", action="store_true", help="only the six ESXi specs issue 3 names")
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

    print(f"{'policy':30s} {'reference I/O/s':>15s} {'fast best':>11s} {'fast median':>12s} {'median/ref':>10s}")
    run_fast(compile_model(sc, sc.runs[0], duration=0.01), "rr")  # load the cache before timing
    specs = ESXI + ([] if args.esxi_only else OTHERS)
    runs = {spec: sc.with_policies([spec]).runs[0] for spec in specs}
    ref = {spec: rates(run_reference, compile_model(sc, run, duration=ref_s), run.policy, 1)[0] for spec, run in runs.items()}
    fast: dict[str, list[float]] = {spec: [] for spec in specs}
    models = {spec: compile_model(sc, run, duration=fast_s) for spec, run in runs.items()}
    for _ in range(args.repeat):  # round after round: a slow spell slows one run of each, not all runs of one
        for spec, run in runs.items():
            fast[spec] += rates(run_fast, models[spec], run.policy, 1)
    for spec in specs:
        med = statistics.median(fast[spec])
        print(f"{spec:30s} {ref[spec]:15,.0f} {max(fast[spec]):11,.0f} {med:12,.0f} {med / ref[spec]:9.1f}x")

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
