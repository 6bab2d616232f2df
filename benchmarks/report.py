"""How the HTML report's cost grows with the number of faults: a script that prints figures.

    python benchmarks/report.py                  # a flapping path with 100, 200 and 400 faults
    python benchmarks/report.py --faults 50,100  # other counts
    python benchmarks/report.py --hosts 32       # issue 54: a 32-host cluster's page: size, screens, time, memory
    python benchmarks/report.py --hosts 32,128   # and at 128 hosts

A flapping path: one of four paths goes down and comes back up again and again
(alternating ``path_down`` and ``path_up``, evenly spread over a 10 s run), under
round robin and latency round robin. For each count it prints the seconds
``pathsel.simulate`` takes, then the seconds the report takes to build
(``pathsel.report.render``: tables and figures), and the report's seconds per
fault. Near-linear growth keeps the last column roughly flat as the count
doubles; quadratic growth doubles it.

With ``--hosts`` it writes :func:`scale.user_cluster_toml`'s cluster (N ESXi hosts x 64 volumes x 8 paths, two
arrays with replication) with two policies (``rr:iops=1`` and ``fixed``) and runs, as a user would,
``pathsel report FILE --duration 1s -o page.html`` from outside (its wall clock and peak memory), then in a fresh
process ``pathsel.simulate`` and ``pathsel.report.write`` apart: the page's seconds beyond the simulation. It prints the page's size (and plotly.js's
share of it, the same in every report), the table rows in it, its height in screens of 1366 x 768 px with every
``<details>`` section closed (headless Chromium, when installed) and the report command's peak memory.

Prints, and asserts nothing: timings depend on the machine (and, on a shared
virtual machine, on the moment).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import pathsel_command, user_cluster_toml  # noqa: E402

#: a laptop's screen, as the report's browser tests take it
SCREEN = (1366, 768)


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


def _timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of a command run as a user runs it; raises on a failure."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_maxrss / 1024


#: appended to a copy of the page: its height once the figures are drawn, every <details> closed
_HEIGHT = (
    "<script>window.addEventListener('load', () => setTimeout(() => {"
    "document.body.setAttribute('data-height', document.documentElement.scrollHeight)}, 500));</script>"
)


_SPLIT = """
import sys, time
import pathsel
from pathsel.results import report
t0 = time.perf_counter()
result = pathsel.simulate(sys.argv[1], duration="1s")
t1 = time.perf_counter()
report.write(result, sys.argv[2])
print(t1 - t0, time.perf_counter() - t1)
"""


def screens(page: Path) -> float | None:
    """The page's height in screens of :data:`SCREEN`, opened in headless Chromium (None without one)."""
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        return None
    probe = page.with_name("probe-" + page.name)
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _HEIGHT + "</body>"), encoding="utf-8")
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(
            [browser, "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}", "--virtual-time-budget=20000"]
            + [f"--window-size={SCREEN[0]},{SCREEN[1]}", "--dump-dom", probe.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=600,
        ).stdout
    m = re.search(r'data-height="(\d+)"', out)
    return int(m.group(1)) / SCREEN[1] if m else None


def clusters(hosts: list[int], keep: Path | None = None) -> None:
    """Issue 54's figures: the report of a cluster of each size in ``hosts`` (the pages kept in ``keep``, if given)."""
    from pathsel.results.report import plotly_loader

    # load (or compile) the fast engine first: a first run after a change to the engine compiles it, not the report's cost
    _timed([*pathsel_command(), "simulate", "--duration", "0.01s", "-q"])

    plotly_mb = len(plotly_loader().encode()) / 1e6  # the packed bundle and its loader, as the page holds them
    print(f"{'hosts':>5}  {'paths':>7}  {'simulate (s)':>12}  {'page (s)':>8}  {'command (s)':>11}  {'peak (MiB)':>10}", end="")
    print(f"  {'page (MB)':>9}  {'w/o plotly.js':>13}  {'rows':>5}  {'screens':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in hosts:
            toml = Path(tmp) / f"cluster{n}.toml"
            toml.write_text(user_cluster_toml(n, 64, 8, 1.0) + '\n[[policies]]\nspec = "fixed"\n')
            page = (keep or Path(tmp)) / f"cluster{n}.html"
            rep, peak = _timed([*pathsel_command(), "report", str(toml), "--duration", "1s", "-o", str(page)])
            # the simulation and the page apart, in one fresh process (pathsel.simulate, then pathsel.report.write)
            probe = subprocess.run([sys.executable, "-c", _SPLIT, str(toml), str(page)], capture_output=True, text=True, check=True)
            sim, render = (float(x) for x in probe.stdout.split())
            text = page.read_text(encoding="utf-8")
            size = len(text.encode()) / 1e6
            high = screens(page)
            print(
                f"{n:>5}  {n * 64 * 8:>7,}  {sim:>12.1f}  {render:>8.1f}  {rep:>11.1f}  {peak:>10.0f}  {size:>9.2f}  {size - plotly_mb:>13.2f}"
                f"  {text.count('<tr>'):>5}  {'–' if high is None else f'{high:.1f}':>7}",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--faults", default="100,200,400", help="fault counts, comma-separated (default: 100,200,400)")
    ap.add_argument("--hosts", help="instead: a cluster of this many hosts (comma-separated, e.g. 32 or 32,128): the page's figures")
    ap.add_argument("--keep", type=Path, help="with --hosts: write the pages into this directory, to open them")
    args = ap.parse_args()
    if args.hosts:
        clusters([int(h) for h in args.hosts.split(",")], args.keep)
        return
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
