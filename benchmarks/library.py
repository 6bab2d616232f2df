"""The scenario library's budget: wall time of one policy run per scenario on the fast engine, after compile.

    python benchmarks/library.py                      # every file of sims/library, every built-in policy at its defaults
    python benchmarks/library.py --policy rr --policy latency sims/library/gray-*.toml
    python benchmarks/library.py --table              # also IOPS, p99 and max latency per policy
    python benchmarks/library.py --repeat 3           # the fastest of three runs each (a shared machine's noise)

The policy league runs every built-in policy at its shipped defaults over
every scenario of ``sims/library/``, three replications each, in under 30
minutes on two cores; so one run must take at most 0.4 s of wall time once
the engine and the policy are compiled. This script warms every policy up
first (one short run each, not timed), then times each scenario x policy in
this one process, and prints per scenario the median and the worst policy's
wall time (compiling the model from the scenario included) and the I/Os that
run issued. It asserts nothing: ``tests/test_library.py`` checks what
every file must be, this prints what the budget is spent on.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import pathsel  # noqa: E402
from pathsel.policies.registry import POLICY_DEFS  # noqa: E402

LIBRARY = ROOT / "sims" / "library"
BUDGET_S = 0.4


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="scenario files (default: every sims/library/*.toml)")
    ap.add_argument("--policy", action="append", help="a policy spec to time (default: every built-in policy at its defaults)")
    ap.add_argument("--table", action="store_true", help="print IOPS and p99 per scenario x policy too")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="time each run this many times and keep the fastest (default 1): "
        "on a shared machine interference only slows a run down, so the best is the machine's speed",
    )
    args = ap.parse_args(argv)
    files = [Path(f) for f in args.files] or sorted(LIBRARY.glob("*.toml"))
    policies = args.policy or list(POLICY_DEFS)
    scenarios = [pathsel.load_scenario(f) for f in files]

    # warm-up: the engine and each policy's compiled hooks (loaded from the cache after the first time)
    for p in policies:
        pathsel.simulate(scenarios[0], policies=[p], duration=0.01, engine="fast")

    worst_all = total = 0.0
    print(f"{'scenario':44s} {'median s':>9s} {'worst s':>8s} {'worst policy':>28s} {'I/Os (worst)':>12s}")
    rows = []
    for f, sc in zip(files, scenarios):
        times = []
        for p in policies:
            dt = float("inf")
            for _ in range(max(1, args.repeat)):
                t0 = time.perf_counter()
                res = pathsel.simulate(sc, policies=[p], engine="fast")
                dt = min(dt, time.perf_counter() - t0)
            run = res.runs[0]
            times.append((dt, p, run.accounting["issued"]))
            s = res.summary().iloc[0]
            rows.append((f.stem, p, s["iops"], s["p99_us"], s["max_us"], run.accounting["balanced"]))
        worst = max(times)
        total += sum(t for t, _, _ in times)
        worst_all = max(worst_all, worst[0])
        flag = "" if worst[0] <= BUDGET_S else "  OVER BUDGET"
        print(f"{f.stem:44s} {statistics.median(t for t, _, _ in times):9.3f} {worst[0]:8.3f} {worst[1]:>28s} {worst[2]:12,d}{flag}")
    print(f"worst run over the library: {worst_all:.3f} s (budget {BUDGET_S} s); {len(files)} scenarios x {len(policies)} policies")
    print(f"every run once: {total:.1f} s on one core (the league's 3 replications: {3 * total:.0f} s, about half that on two cores)")
    if args.table:
        print()
        print(f"{'scenario':44s} {'policy':28s} {'IOPS':>9s} {'p99 ms':>9s} {'max ms':>9s}")
        for stem, p, iops, p99, top, balanced in rows:
            ms = "".join(f" {v / 1000:9.3f}" if v == v else f" {'-':>9s}" for v in (p99, top))  # NaN: no I/O completed
            print(f"{stem:44s} {p:28s} {iops:9,.0f}{ms}{'' if balanced else '  UNBALANCED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
