"""The league's wall time: the whole library x every policy x its default replications, as `pathsel league` runs it.

    python benchmarks/league.py                       # the library, every contender and the oracle, 3 replications
    python benchmarks/league.py --workers 1           # on one core
    python benchmarks/league.py --markdown league.md  # also the table docs/league.md shows

The target (issue 34): under 10 minutes on this project's 2-core machine.
It warms the engine and every policy first (``pathsel warm``'s compile, not
timed: the league's first run on a fresh machine pays it once), then times
``pathsel.studies.league.league`` in a local process pool, and prints the
wall time, the runs, the seconds per run, the top of the standings and
guard's rank. It asserts nothing; say what else ran on the machine beside it
when you quote its figure.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from pathsel.outputs import write_atomic  # noqa: E402
from pathsel.studies.league import OURS, contenders, league, library_files  # noqa: E402

TARGET_S = 600.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replications", type=int, default=3)
    ap.add_argument("--workers", type=int, default=None, help="processes (default: every core)")
    ap.add_argument("--markdown", help="write the league's Markdown table here")
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args(argv)

    files = library_files()
    pols = contenders()
    t0 = time.perf_counter()
    league([files[0]], policies=pols, replications=1, duration="20ms", executor="serial")  # compile every policy once
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    lg = league(files, policies=pols, replications=args.replications, workers=args.workers)
    wall = time.perf_counter() - t0
    runs = len(lg.table)
    print(f"cores: {os.cpu_count()}; warm-up (compile, not timed): {warm:.1f} s")
    print(f"league: {len(pols)} policies x {len(files)} scenarios x {args.replications} replication(s) = {runs} runs")
    print(f"wall time: {wall:.1f} s ({wall / 60:.1f} min; target {TARGET_S / 60:.0f} min), {wall / max(runs, 1) * 1000:.0f} ms per run")
    print()
    print(lg.text(top=args.top))
    st = lg.standings.set_index("policy")
    if OURS in st.index:
        print(f"{OURS}: rank {int(st.loc[OURS, 'rank'])} of {int((st['rank'] > 0).sum())}")
    if args.markdown:
        write_atomic(args.markdown, lg.markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
