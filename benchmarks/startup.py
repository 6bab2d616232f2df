"""Start-up: how long the commands that do not simulate take, and a cached short simulation (issue 35).

    python benchmarks/startup.py                 # this tree: median wall and CPU seconds per command
    python benchmarks/startup.py --old HEAD~1    # also that commit's tree, alternated run by run, with the ratio
    python benchmarks/startup.py --runs 9 --only version

Targets (issue 35): ``pathsel --version`` at most 0.3 s; a cached ``pathsel simulate --duration 0.01s`` at most
1 s. Each command runs as a whole process (``python -m pathsel.cli``) from a scratch folder with ``PYTHONPATH``
naming the tree, so a commit's tree (``git archive``) runs beside this one; the fast engine's compiled code comes
from the shared cache (warmed by one untimed run), so the simulation figure is the cached one. Paired figures
alternate old and new in one run; on a busy machine quote the ratio, not the seconds.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "version": ["--version"],
    "help": ["--help"],
    "simulate-help": ["simulate", "--help"],
    "presets": ["presets"],
    "policies": ["policies"],
    "schema": ["schema"],
    "simulate-0.01s": ["simulate", "--duration", "0.01s", "-q"],
}


def _tree(commit: str, into: Path) -> Path:
    """``commit``'s pathsel package, unpacked under ``into``, byte-compiled as an install would be."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "pathsel"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "pathsel")], check=True)
    return into


def _once(tree: Path, argv: list[str], cwd: str, cache: Path | None = None) -> tuple[float, float]:
    """(wall, user + system CPU) seconds of one ``python -m pathsel.cli ARGV`` run on ``tree``.

    ``cache``: the tree's own compiled-code cache. Two trees sharing one file each function's cached code under
    the same name, so alternating them replaced each other's entries and the simulation compiled again.
    """
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if cache is not None:
        env["PATHSEL_CACHE_DIR"] = str(cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pathsel.cli", *argv], cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", metavar="COMMIT", help="also time this commit's tree, alternated with this one")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each command (default 5)")
    ap.add_argument("--only", choices=list(COMMANDS), action="append", help="only these commands (repeatable)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pathsel-startup-") as tmp:
        trees = {"new": ROOT}
        if args.old:
            (Path(tmp) / "old").mkdir()
            trees = {"old": _tree(args.old, Path(tmp) / "old"), "new": ROOT}
        cwd = Path(tmp) / "cwd"  # python -m puts the working folder first on sys.path: an empty one
        cwd.mkdir()
        print(f"pathsel start-up, {args.runs} runs each, load average {os.getloadavg()[0]:.2f} at the start")
        print(f"{'command':16s} " + "  ".join(f"{k + ' wall':>9s} {k + ' cpu':>8s}" for k in trees) + ("  new/old wall" if args.old else ""))
        for name in args.only or COMMANDS:
            argv = COMMANDS[name]
            caches = {k: (Path(tmp) / f"cache-{k}" if args.old else None) for k in trees}
            for k, tree in trees.items():
                _once(tree, argv, str(cwd), caches[k])  # warm-up: the OS page cache, and the engine cache for simulate
            walls: dict[str, list[float]] = {k: [] for k in trees}
            cpus: dict[str, list[float]] = {k: [] for k in trees}
            ratios: list[float] = []
            for _ in range(args.runs):
                for k, tree in trees.items():  # old, new, old, new, ...
                    w, c = _once(tree, argv, str(cwd), caches[k])
                    walls[k].append(w)
                    cpus[k].append(c)
                if args.old:
                    ratios.append(walls["new"][-1] / walls["old"][-1])
            cells = "  ".join(f"{statistics.median(walls[k]):9.2f} {statistics.median(cpus[k]):8.2f}" for k in trees)
            ratio = f"  {statistics.median(ratios):13.2f}" if ratios else ""
            print(f"{name:16s} {cells}{ratio}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
