"""Engine speed, compile time and memory on the founding test drive (Hosterman 2018): a script that prints figures.

    python benchmarks/engines.py                 # 60 s simulated per fast run, 10 s on the reference engine
    python benchmarks/engines.py --quick         # 5 s and 2 s
    python benchmarks/engines.py --old b8a7763   # also: each built-in policy against that commit, paired
    python benchmarks/engines.py --old b8a7763 --paired-only --topology 32x64x8   # only the pairs, on a cluster

Prints, and asserts nothing (read the figures against the targets in docs/model.md):

* the first ``pathsel simulate`` on a cold cache (a fresh process and an empty
  cache directory): seconds to the first figure and peak memory; then a
  cached start (a fresh process, the cache warm);
* a policy of your own in the compiled style (``benchmarks/user_policy.py``,
  the docs' worked example): compile time in a fresh process and simulated
  I/Os per wall second;
* every built-in policy: simulated I/Os per wall second on the reference
  (SimPy) and fast (numba) engines, the best and the median of ``--repeat``
  fast runs (on a shared virtual machine the same run's speed varies by a
  third from one moment to the next; interference only slows a run down, so
  the best is the machine's speed and the median what a user sees);
* with ``--old COMMIT``: that commit's fast engine beside this one, loaded in
  this process and run alternately, policy by policy (paired: a slow spell
  slows both; which of the two runs first alternates from round to round),
  each spec's median paired new/old ratio and the 95 % interval of their
  geometric mean (Student's t on the logs of the ratios: "slower" only when
  the whole interval is below 1), and the median of the specs' ratios. A spec is paired
  only where both commits complete the same I/Os with the same seed (the
  same algorithm): where a default changed in between (``latency`` runs lqd
  here and min-set before 7bc5f5d) the line says so, and the spec that runs
  the old default here (``latency:variant=min-set``) is paired instead;
* peak memory for 1 and 10 simulated minutes.

``--topology HxVxP`` runs the fast engine's specs on ``benchmarks/scale.py``'s
cluster of that size (hosts x volumes x paths, fio jobs at iodepth 32) instead of
the test drive, for ``--seconds`` simulated seconds (default 1); ``--paired-only``
prints only the fast engine's figures and the pairs (no cold start, memory probes,
own policy or reference runs).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from peak import PEAK  # a script beside this one (its directory is on sys.path)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

ESXI = ["fixed", "mru", "rr:iops=1", "rr:bytes=65536", "latency", "latency:variant=min-set", "latency:variant=score"]
# Specs run beside a policy's defaults: latency's min-set variant was the default of `latency` and
# `hpp:lb-latency` until lqd took its place, so an older commit's `latency` is this one's min-set.
VARIANTS = ["hpp:lb-latency:variant=min-set"]


def fresh_process(code: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, check=True, cwd=str(ROOT))
    return out.stdout.strip()


def cold_and_cached() -> None:
    cache = tempfile.mkdtemp(prefix="pathsel-cache-")
    env = dict(os.environ, PATHSEL_CACHE_DIR=cache)
    probe = textwrap.dedent(PEAK) + textwrap.dedent("""
        import time; t0 = time.perf_counter()
        import pathsel
        t1 = time.perf_counter()
        res = pathsel.simulate(duration=0.01)
        t2 = time.perf_counter()
        print(t1 - t0, t2 - t1, peak_mib())
    """)
    imp, cold, rss = map(float, fresh_process(probe, env).split())
    imp2, warm, rss2 = map(float, fresh_process(probe, env).split())
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pathsel.cli", "simulate", "-q", "--duration", "0.01s"], capture_output=True, check=True, env=env)
    cli = time.perf_counter() - t
    shutil.rmtree(cache, ignore_errors=True)
    print(
        f"first `pathsel.simulate()` on a cold cache: {imp + cold:5.1f} s to the first figure "
        f"(import {imp:.1f} s, compile and run {cold:.1f} s), peak RSS {rss:.0f} MiB"
    )
    print(
        f"cached start, fresh process: {warm:.2f} s (+ {imp2:.2f} s importing pathsel), peak RSS {rss2:.0f} MiB; "
        f"the whole `pathsel simulate --duration 0.01s` command: {cli:.2f} s\n"
    )


def user_policy(seconds: float, repeat: int) -> None:
    probe = f"""
        import sys, time
        sys.path.insert(0, {str(HERE)!r})
        import pathsel
        from pathsel.engine import prepare, run_fast
        from pathsel.model import compile_model
        from user_policy import EWMA_PENDING
        prepare([pathsel.policies.POLICY_DEFS["rr"]])
        t = time.perf_counter(); EWMA_PENDING.hooks(); compile_s = time.perf_counter() - t
        sc = pathsel.default_scenario(); m = compile_model(sc, sc.runs[0], duration={seconds})
        rates = []
        for _ in range({repeat}):
            t = time.perf_counter(); r = run_fast(m, EWMA_PENDING); rates.append(r.completed / (time.perf_counter() - t))
        print(compile_s, max(rates), sorted(rates)[len(rates) // 2])
    """
    compile_s, best, med = map(float, fresh_process(probe).split())
    print(
        f"your own compiled-style policy (benchmarks/user_policy.py): compiles in {compile_s:.2f} s; "
        f"{best / 1e6:.2f} M simulated I/Os per second (best), {med / 1e6:.2f} M (median)\n"
    )


def load_old(commit: str):
    """``pathsel``, ``run_fast`` and ``compile_model`` of pathsel at ``commit``, from an export beside this checkout
    (cached there). Each is wrapped so that, while it runs, ``pathsel.*`` in ``sys.modules`` is the old package:
    the old code's imports inside functions find its own modules, not this checkout's."""
    dest = Path(tempfile.gettempdir()) / f"pathsel-old-{commit}"
    if not (dest / "pathsel").exists():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "pathsel"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)

    def ours() -> dict:
        return {k: v for k, v in sys.modules.items() if k == "pathsel" or k.startswith("pathsel.")}

    def swap(to: dict) -> dict:
        was = ours()
        for k in was:
            del sys.modules[k]
        sys.modules.update(to)
        return was

    # Its own cache directory: a commit that caches in pathsel's cache directory files its functions under the
    # same names as this checkout's, and each would drop the other's entries (and compile again) at every load.
    cache_env = {"PATHSEL_CACHE_DIR": str(dest / "cache")}

    def env(to: dict) -> dict:
        was = {k: os.environ.get(k) for k in to}
        for k, v in to.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        return was

    # Compiled once in a process of its own, with its tree first on the path: a commit whose first compile starts
    # a helper process (`python -m pathsel.engine.fast.warm`) must not have that helper import this checkout.
    subprocess.run(
        [sys.executable, "-c", "import pathsel; pathsel.simulate(duration=0.01)"],
        cwd=str(dest),
        env=dict(os.environ, PYTHONPATH=str(dest), **cache_env),
        capture_output=True,
        check=False,
    )
    new = swap({})
    outer = env(cache_env)
    sys.path.insert(0, str(dest))
    try:
        import pathsel as old_pathsel
        from pathsel.engine import run_fast
        from pathsel.model import compile_model

        # read while the old modules are in place: a package that imports its names on first use would
        # otherwise import this checkout's module under the old name
        old_loads = old_pathsel.loads_scenario
    finally:
        sys.path.pop(0)
        old = swap(new)
        env(outer)

    def with_old(fn):
        def call(*a, **k):
            mine = swap(old)
            outer = env(cache_env)
            try:
                return fn(*a, **k)
            finally:
                env(outer)
                swap(mine)

        return call

    class Old:  # the old package's functions, each run with its modules in place
        loads_scenario = staticmethod(with_old(old_loads))

    return Old, with_old(run_fast), with_old(compile_model), with_old


def ratio_interval(ratios: list[float]) -> tuple[float, float]:
    """The 95 % interval of a spec's paired new/old ratio: Student's t on the logs (a ratio and its inverse are symmetric there)."""
    from pathsel.stats import ci95

    if len(ratios) < 2:
        return math.nan, math.nan
    mean, half = ci95(math.log(r) for r in ratios)
    return math.exp(mean - half), math.exp(mean + half)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 simulated seconds instead of 60 (reference engine: 2 s)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each fast simulation (default 5)")
    ap.add_argument("--esxi-only", action="store_true", help="only the six ESXi specs")
    ap.add_argument("--old", metavar="COMMIT", help="also run this commit's fast engine, paired with this one")
    ap.add_argument("--topology", metavar="HxVxP", help="benchmarks/scale.py's cluster of this size instead of the test drive")
    ap.add_argument("--seconds", type=float, default=None, help="simulated seconds per fast run (default 60, quick 5, a topology 1)")
    ap.add_argument("--paired-only", action="store_true", help="only the fast runs and the pairs (with --old)")
    args = ap.parse_args()
    fast_s, ref_s = (5.0, 2.0) if args.quick else (60.0, 10.0)
    if args.topology:
        fast_s = 1.0
    if args.seconds is not None:
        fast_s = args.seconds
    if args.paired_only:
        main_paired(args, fast_s, ref_s)
        return
    cold_and_cached()
    mem = textwrap.dedent(PEAK) + textwrap.dedent("""
        import sys, pathsel
        from pathsel.engine import run_fast
        from pathsel.model import compile_model
        sc = pathsel.default_scenario(); run = sc.with_policies(["latency"]).runs[0]
        run_fast(compile_model(sc, run, duration=float(sys.argv[1])), run.policy)
        print(peak_mib())
    """)
    peaks = {}
    # A run first, unmeasured: after a source change the first probe would compile, and print the compiler's peak.
    subprocess.run([sys.executable, "-c", mem, "0.01"], capture_output=True, text=True, check=True, cwd=str(ROOT))
    for minutes in (1, 10):
        out = subprocess.run([sys.executable, "-c", mem, str(60.0 * minutes)], capture_output=True, text=True, check=True, cwd=str(ROOT))
        peaks[minutes] = float(out.stdout.strip())
    user_policy(fast_s, args.repeat)
    main_paired(args, fast_s, ref_s)
    print(
        f"\nfast engine peak RSS (a fresh process's own), latency RR: 1 min {peaks[1]:.1f} MiB, 10 min {peaks[10]:.1f} MiB ({(peaks[10] / peaks[1] - 1) * 100:+.1f} %)"
    )


def scenario_text(args: argparse.Namespace, seconds: float) -> str:
    """The scenario the fast runs use, as TOML text (both commits load the same text): the test drive, or a cluster."""
    import pathsel
    from pathsel.scenario.load import DEFAULT_SCENARIO_NAME

    if not args.topology:
        return pathsel.examples.path(DEFAULT_SCENARIO_NAME).read_text(encoding="utf-8")
    import tomlkit

    sys.path.insert(0, str(HERE))
    from scale import scenario  # noqa: PLC0415  (a script beside this one)

    h, v, p = (int(x) for x in args.topology.lower().split("x"))
    return tomlkit.dumps(scenario(h, v, p, seconds))


def main_paired(args: argparse.Namespace, fast_s: float, ref_s: float) -> None:
    import pathsel
    from pathsel.engine import prepare, run_fast, run_reference
    from pathsel.model import compile_model
    from pathsel.policies import POLICY_DEFS

    others = [name for name in POLICY_DEFS if name not in ("fixed", "mru", "rr", "latency")]
    specs = ESXI + ([] if args.esxi_only else others + VARIANTS)
    text = scenario_text(args, fast_s)
    sc = pathsel.loads_scenario(text)
    runs = {spec: sc.with_policies([spec]).runs[0] for spec in specs}
    prepare([POLICY_DEFS[r.policy.name] for r in runs.values()])
    models = {spec: compile_model(sc, run, duration=fast_s) for spec, run in runs.items()}
    old = None
    if args.old:
        old_pathsel, old_run_fast, old_compile, with_old = load_old(args.old)
        # the scenario's text from this checkout: an older commit kept its data files elsewhere
        old_sc = old_pathsel.loads_scenario(text)
        old_runs, old_models = {}, {}
        for spec in specs:
            try:
                old_runs[spec] = with_old(lambda s: old_sc.with_policies([s]).runs[0])(spec)
            except Exception:  # a policy the old commit did not have
                continue
            old_models[spec] = old_compile(old_sc, old_runs[spec], duration=fast_s)
        t = time.perf_counter()
        for run in old_runs.values():  # each policy's compiled code, before any run is timed
            old_run_fast(old_compile(old_sc, run, duration=0.01), run.policy)
        print(f"(the old engine at {args.old} compiled or loaded in {time.perf_counter() - t:.0f} s)\n")
        old = (old_run_fast, old_runs, old_models)

    done: dict[tuple[str, str], int] = {}  # (which, spec): I/Os completed, to pair only runs of one algorithm

    def rate(engine, model, policy, key=None) -> float:
        t = time.perf_counter()
        m = engine(model, policy)
        rate = m.completed / (time.perf_counter() - t)
        if key is not None:
            done[key] = m.completed
        return rate

    ref = {spec: math.nan for spec in specs}
    if not args.paired_only:
        ref = {spec: rate(run_reference, compile_model(sc, run, duration=ref_s), run.policy) for spec, run in runs.items()}
    fast: dict[str, list[float]] = {spec: [] for spec in specs}
    paired: dict[str, list[float]] = {spec: [] for spec in specs}
    for round_ in range(args.repeat):  # round after round: a slow spell slows one run of each, not all runs of one
        for spec, run in runs.items():
            pair = old is not None and spec in old[1]
            old_first = pair and round_ % 2 == 1  # which runs first alternates: the second of a pair must not be favoured
            if old_first:
                old_rate = rate(old[0], old[2][spec], old[1][spec].policy, ("old", spec))
            new_rate = rate(run_fast, models[spec], run.policy, ("new", spec))
            fast[spec].append(new_rate)
            if pair:
                if not old_first:
                    old_rate = rate(old[0], old[2][spec], old[1][spec].policy, ("old", spec))
                paired[spec].append(new_rate / old_rate)
    head = f"{'policy':30s} {'reference I/O/s':>15s} {'fast best':>11s} {'fast median':>12s} {'median/ref':>10s}"
    print(head + (f" {'new/old paired: median':>23s} {'95 % interval':>15s}" if old else ""))
    ratios = []
    verdicts: dict[str, list[str]] = {"slower": [], "faster": [], "within noise": []}
    differ = [spec for spec in specs if paired[spec] and done[("new", spec)] != done[("old", spec)]]
    for spec in specs:
        med = statistics.median(fast[spec])
        line = f"{spec:30s} {ref[spec]:15,.0f} {max(fast[spec]):11,.0f} {med:12,.0f} {med / ref[spec]:9.1f}x"
        if old is not None:
            if spec in differ:
                line += f" {'(not the same algorithm)':>23s}"
            elif paired[spec]:
                r = statistics.median(paired[spec])
                ratios.append(r)
                lo, hi = ratio_interval(paired[spec])
                if math.isnan(lo):  # one pair (--repeat 1): no interval
                    line += f" {r:22.3f}x"
                else:
                    verdict = "slower" if hi < 1.0 else "faster" if lo > 1.0 else "within noise"
                    verdicts[verdict].append(spec)
                    line += f" {r:22.3f}x {f'{lo:.3f}-{hi:.3f}':>15s} {verdict}"
            else:
                line += f" {'(new)':>23s}"
        print(line)
    if differ:
        print(
            f"\nnot paired ({', '.join(differ)}): with the same seed {args.old} completed another number of I/Os, "
            "so it ran something else under that spec (against b8a7763: latency's default variant, lqd since 7bc5f5d)"
        )
    if ratios:
        print(
            f"\npaired new/old over {len(ratios)} specs: median {statistics.median(ratios):.3f}x, "
            f"lowest {min(ratios):.3f}x, highest {max(ratios):.3f}x"
            + (
                "; by the 95 % intervals: "
                + "; ".join(f"{k} {len(v)}" + (f" ({', '.join(v)})" if v and k != "within noise" else "") for k, v in verdicts.items())
                if any(verdicts.values())
                else ""  # one round (--repeat 1): no intervals
            )
        )


if __name__ == "__main__":
    main()
