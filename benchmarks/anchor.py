"""The fast engine against a bare C event loop (benchmarks/anchor.c) on the engine benchmark's model: a script that prints figures.

    python benchmarks/anchor.py                        # rr:iops=1 and fixed, 60 simulated s, 5 alternated rounds
    python benchmarks/anchor.py --repeat 9 --seconds 10 --spec rr:iops=1 --spec fixed --spec rr:bytes=65536

Compiles ``anchor.c`` with ``cc -O2`` (``$CC`` if set) into a temporary
directory, or says plainly that no C compiler was found. For each spec it runs
the founding test drive (``pathsel.default_scenario()``, as benchmarks/engines.py
does) on pathsel's fast engine, in this process with its compiled code loaded
(a warm-up run first), and the C loop on the same model's parameters (read
from pathsel's compiled model: paths, their arrays, latencies and bandwidths,
the arrays' slots and exponential service means, the replication link, the
job's iodepth, I/O size, ramp and duration). Both count simulated I/Os
completed over the whole run per wall second (pathsel: ``run_fast`` timed
alone, the model compiled before; C: its set-up and loop, timed inside the
program, not the process start). The two run alternately, C then pathsel, then
pathsel then C (which goes first alternates round by round: a slow spell slows
one run of each), ``--repeat`` rounds; it prints the median and the best of
each, and the median of the paired ratios pathsel/C (each round's pathsel run
over the C run beside it).

The C loop processes the same events per I/O as the fast engine on this
scenario (8 per write: four frames, the local service, the mirror's arrival,
the peer's service, the acknowledgement; see anchor.c's header), and it prints
its own count. To check the C model is right, the script prints both sides'
IOPS over the measurement window, the IOPS by Little's law (iodepth / mean
latency) and the largest difference in any path's share of the I/Os: the
random numbers differ, so they agree within a few %, not exactly. It prints
the load average at the start and the end, and the busiest other processes:
on a shared machine the ratio means little without them. It asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SPECS = ["rr:iops=1", "fixed"]


def compiler() -> str | None:
    """The C compiler to use: ``$CC``, else cc, gcc or clang on the PATH."""
    for name in ([os.environ["CC"]] if os.environ.get("CC") else []) + ["cc", "gcc", "clang"]:
        found = shutil.which(name)
        if found:
            return found
    return None


def build(cc: str, where: Path) -> Path:
    exe = where / "anchor"
    subprocess.run([cc, "-O2", "-std=c99", "-o", str(exe), str(HERE / "anchor.c"), "-lm"], check=True)
    return exe


def c_params(model, run) -> str:
    """anchor.c's stdin for this run, or a SystemExit naming what the C loop does not model."""
    from pathsel.timing.delay_kinds import Constant, Exponential

    def refuse(why: str) -> None:
        sys.exit(f"anchor.py: {run.policy}: the C loop does not model {why}")

    if len(model.jobs) != 1 or model.jobs[0].rate_iops or len(model.jobs[0].sizes) != 1 or model.jobs[0].read_fraction != 0.0:
        refuse("this workload (one closed-loop job of writes of one size only)")
    if model.faults or model.links or model.cpu is not None or model.protocol != "scsi":
        refuse("faults, fabric links, host CPU or NVMe")
    job = model.jobs[0]
    name, params = run.policy.name, dict(run.policy.params)
    if name == "rr" and not params.get("use_ano"):
        policy, iops, nbytes = 0, int(params["iops"]) if params["type"] == "iops" else 0, int(params["bytes"])
    elif name in ("fixed", "mru") and not params.get("preferred"):
        policy, iops, nbytes = 1, 0, 0
    else:
        refuse(f"the policy {name} (rr, fixed and mru only)")
    rep = model.replication
    if rep is not None and (not isinstance(rep.one_way_latency, Constant) or rep.bandwidth or rep.extra or rep.loss_ppm):
        refuse("this replication link (a constant one-way latency only)")
    lines = [
        f"{model.duration!r} {model.ramp!r} {job.iodepth} {model.seed} {policy} {iops} {nbytes} {job.sizes[0]} "
        f"{job.read_fraction!r} {rep.one_way_latency.value if rep else 0.0!r} {len(model.arrays)} {len(model.paths)}"
    ]
    for a in model.arrays:
        if not isinstance(a.write_service, Exponential) or a.per_kib:
            refuse(f"array {a.name}'s service (exponential only)")
        lines.append(f"{a.concurrency} {a.write_service.mean_value!r} {a.peer if rep is not None and a.peer is not None else -1}")
    for p in model.paths:
        c = model.controllers[p.controller]
        if not isinstance(p.one_way_latency, Constant) or c.extra or c.loss_ppm or c.links or p.crossing or not p.bandwidth:
            refuse(f"path {p.name} (a constant one-way latency and a bandwidth only)")
        lines.append(f"{p.array} {p.one_way_latency.value!r} {p.bandwidth!r}")
    return "\n".join(lines) + "\n"


def run_c(exe: Path, params: str) -> dict[str, list[float]]:
    out = subprocess.run([str(exe)], input=params, capture_output=True, text=True, check=True).stdout
    return {k: [float(x) for x in v] for k, *v in (line.split() for line in out.splitlines())}


def busiest() -> str:
    """The three busiest processes (ps's %CPU, over each one's lifetime) and the load average."""
    load = "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    try:
        ps = subprocess.run(["ps", "-eo", "pcpu,comm", "--sort=-pcpu", "--no-headers"], capture_output=True, text=True, check=True).stdout
        top = "; ".join(" ".join(line.split()) for line in ps.splitlines()[:3])
        return f"{load}; busiest: {top}"
    except (OSError, subprocess.CalledProcessError):
        return load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="alternated rounds (default 5)")
    ap.add_argument("--seconds", type=float, default=60.0, help="simulated seconds per run (default 60, as benchmarks/engines.py)")
    ap.add_argument("--spec", action="append", help="a policy spec (repeatable; default rr:iops=1 and fixed)")
    args = ap.parse_args()
    if args.repeat < 1 or not args.seconds > 1.0:
        ap.error("--repeat must be at least 1 and --seconds more than the 1 s ramp")
    cc = compiler()
    if cc is None:
        sys.exit("anchor.py: no C compiler found (looked for $CC, cc, gcc, clang): install one (e.g. apt-get install gcc) to run the anchor")
    print(f"start: {busiest()}")
    tmp = Path(tempfile.mkdtemp(prefix="pathsel-anchor-"))
    try:
        exe = build(cc, tmp)
        measure(exe, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"end: {busiest()}")


def measure(exe: Path, args: argparse.Namespace) -> None:
    import pathsel
    from pathsel.engine import prepare, run_fast
    from pathsel.model import compile_model
    from pathsel.policies import POLICY_DEFS

    sc = pathsel.default_scenario()
    specs = args.spec or DEFAULT_SPECS
    runs = {spec: sc.with_policies([spec]).runs[0] for spec in specs}
    prepare([POLICY_DEFS[r.policy.name] for r in runs.values()])
    models = {spec: compile_model(sc, run, duration=args.seconds) for spec, run in runs.items()}
    params = {spec: c_params(models[spec], run) for spec, run in runs.items()}
    for spec, run in runs.items():  # warm: pathsel's compiled code loaded, the C program's pages in cache
        run_fast(compile_model(sc, run, duration=0.01), run.policy)
        run_c(exe, params[spec].replace(f"{args.seconds!r} ", "0.01 ", 1))
    rate_p: dict[str, list[float]] = {s: [] for s in specs}
    rate_c: dict[str, list[float]] = {s: [] for s in specs}
    last_p, last_c = {}, {}
    for round_ in range(args.repeat):
        for spec, run in runs.items():
            order = ("c", "p") if round_ % 2 == 0 else ("p", "c")
            for which in order:
                if which == "c":
                    out = run_c(exe, params[spec])
                    rate_c[spec].append(out["completed"][0] / out["wall"][0])
                    last_c[spec] = out
                else:
                    t = time.perf_counter()
                    m = run_fast(models[spec], run.policy)
                    rate_p[spec].append(m.completed / (time.perf_counter() - t))
                    last_p[spec] = m
    print(f"\n{args.seconds:g} simulated s per run, {args.repeat} alternated rounds; simulated I/Os per wall second")
    print(f"{'policy':16s} {'pathsel median':>14s} {'best':>11s} {'C median':>11s} {'best':>11s} {'pathsel/C paired median':>24s} {'best/best':>9s}")
    for spec in specs:
        p, c = rate_p[spec], rate_c[spec]
        ratio = statistics.median(a / b for a, b in zip(p, c, strict=True))
        print(
            f"{spec:16s} {statistics.median(p):14,.0f} {max(p):11,.0f} {statistics.median(c):11,.0f} {max(c):11,.0f} "
            f"{ratio:24.3f} {max(p) / max(c):9.3f}"
        )
    print("\nthe models side by side (the last run of each): IOPS over the window, iodepth / mean latency, events per I/O")
    for spec in specs:
        m, out = last_p[spec], last_c[spec]
        depth = models[spec].jobs[0].iodepth
        win = m.window[1] - m.window[0]
        c_win = out["window"][0]
        c_n, c_mean = out["window_completed"][0], out["mean_latency"][0]
        p_share = [h.n / m.overall.n for h in m.path_hist]
        c_share = [n / c_n for n in out["path_counts"]]
        share_diff = max(abs(a - b) for a, b in zip(p_share, c_share, strict=True))
        ev = out["events"][0] / out["completed"][0]
        print(
            f"{spec:16s} pathsel {m.overall.n / win:9,.1f} IOPS, Little {depth / m.overall.mean:9,.1f}; "
            f"C {c_n / c_win:9,.1f} IOPS, Little {depth / c_mean:9,.1f} ({(c_n / c_win) / (m.overall.n / win) - 1:+.1%}); "
            f"largest path-share difference {share_diff:.3f}; C: {ev:.3f} events, "
            f"{out['pushes'][0] / out['completed'][0]:.3f} heap insertions ({out['replaces'][0] / out['completed'][0]:.3f} replacing the root) per I/O "
            "(pathsel's fast engine: 8 events, 8 insertions, 7 replacing the root, by an instrumented copy)"
        )


if __name__ == "__main__":
    main()
