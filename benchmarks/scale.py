"""Memory and speed as the topology grows: a script that prints figures.

    python benchmarks/scale.py            # every topology, 10 simulated seconds on the largest
    python benchmarks/scale.py --quick    # 1 simulated second each, up to 8 hosts
    python benchmarks/scale.py --only 32x64x8
    python benchmarks/scale.py --only 32x64x8 --repeat 3   # the best and the median of 3 runs

Each topology is ``hosts x volumes x paths``: every host has ``paths`` nexuses
(half to each array of a metro pair, its own array's AO), every volume is
stretched over both arrays, and every (host, volume) device carries one fio
job at iodepth 32 (so 32 x hosts x volumes I/Os outstanding), 70 % reads,
round robin over the AO paths. Each runs on the fast engine in a fresh
process (its cache warm): peak RSS of that process; its RSS after importing
pathsel and loading the engine (the part no model changes), once the memory
the warm-up freed has gone back to the system; the run's own peak above
that (on Linux the peak is reset before the run: otherwise a small run
reuses freed memory unseen); and simulated I/Os per wall second of the run
itself.

Then the ratios that say whether memory is linear: for each step between
topologies, (growth of peak RSS above the baseline) / (growth of paths) and
/ (growth of outstanding I/Os); at most 1 means no worse than linear.

Then the cluster as a user writes it (issue 35; ``--only user-32x64x8``, ``--quick``: ``user-8x32x8``
for 1 s): a TOML file with a ``[[hosts]]`` table per ESXi host, four ``[[paths]]`` templates per host
(vmhba1 and vmhba2, two target ports on each array), a ``[[volumes]]`` table per stretched datastore,
a ``[[workloads]]`` table per VM disk, arrays of 512 slots with exponential service of 400 us reads and
500 us writes, synchronous replication (200 us, 100 Gbit), 30 % writes at iodepth 32, ``rr:iops=1``
over all eight nexuses (no preferred array), and one nexus of esx01 (its 64 paths) down at 2 s and
back at 4 s. It prints the whole command, ``pathsel simulate FILE --duration 10s -q`` timed from the
outside (start-up, TOML, model, run, table and story: what a user waits for) and its peak RSS, and the
run itself in a probe as above (steady state), with its CPU time: on a shared machine a run's wall
time stretches with the other processes, its CPU time much less.

Prints, asserts nothing. The targets: the 32 x 64 x 8 topology at most 1 GB
peak RSS and at least 1 M simulated I/Os per wall second; the user's cluster at least 1 M for the
whole command, at most 1 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from peak import PEAK  # noqa: E402  (a probe's own peak memory: one reading for both scripts)

TOPOLOGIES = [(1, 1, 4), (1, 4, 8), (2, 8, 8), (4, 16, 8), (8, 32, 8), (16, 64, 8), (32, 64, 8), (1, 1, 64), (32, 64, 16)]
QUICK = [(1, 1, 4), (1, 4, 8), (2, 8, 8), (4, 16, 8), (8, 32, 8)]
IODEPTH = 32


def scenario(hosts: int, volumes: int, paths: int, seconds: float) -> dict:
    """The scenario as parsed TOML: a metro pair, ``hosts`` ESXi hosts, ``volumes`` stretched datastores."""
    half = max(1, paths // 2)
    data: dict = {
        "name": f"{hosts} hosts x {volumes} volumes x {paths} paths",
        "seed": 1,
        "duration": f"{seconds}s",
        "interval": "1s",
        # enough array slots that the arrays, not the hosts, set the pace: about 1 ms a service
        "arrays": [
            {"name": n, "concurrency": max(8, 4 * hosts * volumes), "service_time": {"dist": "exponential", "mean": "1ms"}}
            for n in ("siteA", "siteB")
        ],
        "replication": {"arrays": ["siteA", "siteB"], "one_way_latency": "100us", "bandwidth": "25Gbit"},
        "volumes": [{"name": f"ds{v}", "lun": v} for v in range(volumes)],
        "hosts": [{"name": f"esx{h:02d}", "preferred_array": "siteA" if h % 2 == 0 else "siteB"} for h in range(hosts)],
        "paths": [],
        "workloads": [],
        "policies": [{"spec": "rr:iops=1"}],
    }
    for h in range(hosts):
        for k, (array, start) in enumerate((("siteA", 0), ("siteB", half))):
            data["paths"].append(
                {
                    "name": f"vmhba{k + 1}:C0:T{{i}}:L{{lun}}",
                    "host": f"esx{h:02d}",
                    "count": half if k == 0 else paths - half,
                    "start": start,
                    "array": array,
                    "one_way_latency": "20us" if k == h % 2 else "200us",
                    "bandwidth": "32Gbit",
                }
            )
        for v in range(volumes):
            data["workloads"].append(
                {"name": f"vm{h}-{v}", "host": f"esx{h:02d}", "volume": f"ds{v}", "rw": "randrw", "rwmixread": 70, "bs": "8k", "iodepth": IODEPTH}
            )
    data["paths"] = [p for p in data["paths"] if p["count"] > 0]
    return data


USER_CLUSTERS = {"user-32x64x8": (32, 64, 8), "user-8x32x8": (8, 32, 8)}


def user_cluster_toml(hosts: int, volumes: int, nexuses: int, seconds: float) -> str:
    """Issue 35's cluster as a user writes it: a table per host, path template, datastore and VM disk."""
    per_port = nexuses // 4  # two HBAs x two arrays; T0.. on site-a, the next ones on site-b
    out = [
        f"# {hosts} ESXi hosts x {volumes} stretched datastores x {nexuses} nexuses per host: issue 35's cluster",
        f'name = "Stretched cluster, {hosts} hosts x {volumes} datastores x {nexuses} nexuses"',
        "seed = 35",
        f'duration = "{seconds:g}s"',
        'interval = "1s"',
        'protocol = "scsi"',
        "",
    ]
    for array in ("site-a", "site-b"):
        out += [
            "[[arrays]]",
            f'name = "{array}"',
            "concurrency = 512",
            'service_time = { read = { dist = "exponential", mean = "400us" }, write = { dist = "exponential", mean = "500us" } }',
            "",
        ]
    out += ["[replication]", 'arrays = ["site-a", "site-b"]', 'one_way_latency = "200us"', 'bandwidth = "100Gbit"', ""]
    for v in range(volumes):
        out += ["[[volumes]]", f'name = "ds{v:02d}"', f"lun = {v}", ""]
    for h in range(1, hosts + 1):
        out += ["[[hosts]]", f'name = "esx{h:02d}"', 'detection = "1s"', ""]  # FC: the fabric's RSCN, well inside 1 s
        for hba in (1, 2):
            for k, array in enumerate(("site-a", "site-b")):
                out += [
                    "[[paths]]",
                    f'name = "vmhba{hba}:C0:T{{i}}:L{{lun}}"',
                    f'host = "esx{h:02d}"',
                    f"start = {k * per_port}",
                    f"count = {per_port}",
                    f'array = "{array}"',
                    'one_way_latency = "20us"',
                    'bandwidth = "32Gbit"',
                    "",
                ]
    for h in range(1, hosts + 1):
        for v in range(volumes):
            out += [
                "[[workloads]]",
                f'name = "esx{h:02d}-vm{v:02d}"',
                f'host = "esx{h:02d}"',
                f'volume = "ds{v:02d}"',
                'rw = "randrw"',
                "rwmixread = 70",
                'bs = "8k"',
                f"iodepth = {IODEPTH}",
                "",
            ]
    out += ["[[policies]]", 'spec = "rr:iops=1"', ""]
    for at, what in (("2s", "path_down"), ("4s", "path_up")):  # one nexus of esx01: its path to every datastore
        out += ["[[faults]]", f'at = "{at}"', f'what = "{what}"', 'host = "esx01"', 'path = "vmhba1:C0:T0:L{lun}"', ""]
    return "\n".join(out)


def pathsel_command() -> list[str]:
    """The ``pathsel`` script beside this Python (a venv's), else the same entry point through ``-c``."""
    script = Path(sys.executable).with_name("pathsel")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from pathsel.cli import main; sys.argv[0] = 'pathsel'; sys.exit(main())"]


def whole_command(path: Path, seconds: float) -> dict:
    """``pathsel simulate FILE --duration Ns -q`` as a user runs it: wall clock from outside, the child's peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*pathsel_command(), "simulate", str(path), "--duration", f"{seconds:g}s", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        return {"error": (err.strip().splitlines() or ["killed"])[-1]}
    # ru_maxrss: KiB on Linux; a child's counts this small script's RSS at the fork (a few tens of MiB at most)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak": usage.ru_maxrss / 1024}


def measure_user(name: str, seconds: float) -> dict:
    """The user's cluster: the whole command, then the run alone in a fresh probe."""
    hosts, volumes, nexuses = USER_CLUSTERS[name]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.toml"
        path.write_text(user_cluster_toml(hosts, volumes, nexuses, seconds))
        cmd = whole_command(path, seconds)
        if "error" in cmd:
            return cmd
        code = textwrap.dedent(PROBE.format(root=str(ROOT), peak=textwrap.indent(textwrap.dedent(PEAK), "    ")))
        code = code.replace('scenario_from_data(json.loads(sys.stdin.read()), "scale")', f"load_scenario({str(path)!r})")
        code = code.replace("from pathsel.scenario.load import scenario_from_data", "from pathsel.scenario.load import load_scenario")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["killed"])[-1]}
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "cmd_wall": cmd["wall"], "cmd_cpu": cmd["cpu"], "cmd_peak": cmd["peak"]}


def report_user(name: str, seconds: float, repeat: int) -> None:
    """Rows for the user's cluster: each repeat runs the whole command, then the probe."""
    print(f"\n{name}: the cluster as a user writes it (TOML), {seconds:g} simulated s, rr:iops=1, a nexus down at 2 s, back at 4 s")
    print(
        f"{'':>4s} {'paths':>7s} {'I/Os':>11s} {'command s':>9s} {'M I/O/s':>8s} {'cpu s':>6s} {'peak RSS':>9s} | "
        f"{'run s':>6s} {'M I/O/s':>8s} {'run cpu s':>9s} {'M I/O/cpu s':>11s} {'peak RSS':>9s}"
    )
    rows = []
    for k in range(repeat):
        r = measure_user(name, seconds)
        if "error" in r:
            print(f"{k + 1:>4d}  failed: {r['error']}")
            continue
        rows.append(r)
        print(
            f"{k + 1:>4d} {r['paths']:7,d} {r['ios']:11,d} {r['cmd_wall']:9.2f} {r['ios'] / r['cmd_wall'] / 1e6:8.2f} {r['cmd_cpu']:6.1f} "
            f"{r['cmd_peak']:5.0f} MiB | {r['run']:6.2f} {r['ios'] / r['run'] / 1e6:8.2f} {r['run_cpu']:9.2f} {r['ios'] / r['run_cpu'] / 1e6:11.2f} "
            f"{r['peak']:5.0f} MiB"
        )
    if len(rows) > 1:
        med = statistics.median
        print(
            f"best: whole command {max(r['ios'] / r['cmd_wall'] for r in rows) / 1e6:.2f} M I/O/s (median "
            f"{med(r['ios'] / r['cmd_wall'] for r in rows) / 1e6:.2f}), steady state {max(r['ios'] / r['run'] for r in rows) / 1e6:.2f} "
            f"(median {med(r['ios'] / r['run'] for r in rows) / 1e6:.2f}); peak RSS at most {max(r['cmd_peak'] for r in rows):.0f} MiB"
        )


PROBE = """
    import ctypes, gc, json, resource, sys, time
    sys.path.insert(0, {root!r})

{peak}
    def rss_now_and_reset():
        # The run's own peak: memory the warm-up freed goes back to the system first (else the run reuses it
        # unseen: runs under ~10 MiB read as 0), then the peak is reset to now (Linux: clear_refs 5, which
        # resets ru_maxrss too: the peak so far is kept for the process's peak).
        gc.collect()
        before = peak_mib()
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            return status_mib("VmRSS") or before, before, True
        except (OSError, AttributeError):  # not Linux with glibc: the process's peak so far
            return before, before, False
    import pathsel
    from pathsel.engine import run_fast
    from pathsel.model import compile_model
    from pathsel.scenario.load import scenario_from_data
    run_fast(compile_model(pathsel.default_scenario(), pathsel.default_scenario().runs[0], duration=0.001), "rr:iops=1")
    base, before, _ = rss_now_and_reset()
    sc = scenario_from_data(json.loads(sys.stdin.read()), "scale")
    run = sc.runs[0]
    t0 = time.perf_counter()
    model = compile_model(sc, run)
    t1, c1 = time.perf_counter(), time.process_time()
    m = run_fast(model, run.policy)
    t2, c2 = time.perf_counter(), time.process_time()
    run_peak = peak_mib()
    print(json.dumps(dict(base=base, peak=max(before, run_peak), run_peak=run_peak,
                          build=t1 - t0, run=t2 - t1, run_cpu=c2 - c1, ios=m.completed, paths=len(model.paths),
                          outstanding=sum(j.iodepth for j in model.jobs))))
"""


def measure(hosts: int, volumes: int, paths: int, seconds: float) -> dict:
    code = textwrap.dedent(PROBE.format(root=str(ROOT), peak=textwrap.indent(textwrap.dedent(PEAK), "    ")))
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(scenario(hosts, volumes, paths, seconds)), capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["killed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 simulated second each, up to 8 x 32 x 8")
    ap.add_argument("--seconds", type=float, default=None, help="simulated seconds per topology (default 10, quick 1)")
    ap.add_argument(
        "--only",
        metavar="HxVxP",
        help="topologies, comma-separated: 32x64x8, or the user's cluster user-32x64x8 (user-8x32x8: a smaller one)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per topology, each in a fresh process: the best and the median rate (a shared machine only slows a run down)",
    )
    args = ap.parse_args()
    tops = QUICK if args.quick else TOPOLOGIES
    users = ["user-8x32x8"] if args.quick else ["user-32x64x8"]
    if args.only:
        names = [x.strip() for x in args.only.split(",") if x.strip()]
        unknown = [n for n in names if n.startswith("user-") and n not in USER_CLUSTERS]
        if unknown:
            ap.error(f"--only: no user cluster {unknown[0]!r} (user clusters: {', '.join(USER_CLUSTERS)})")
        users = [n for n in names if n in USER_CLUSTERS]
        tops = [tuple(int(x) for x in n.split("x")) for n in names if n not in USER_CLUSTERS]  # type: ignore[misc]
    seconds = args.seconds or (1.0 if args.quick else 10.0)
    if not tops:
        for name in users:
            report_user(name, seconds, max(1, args.repeat))
        return
    print(f"fast engine, rr:iops=1, iodepth {IODEPTH} per device, {seconds:g} simulated s each, one fresh process per row\n")
    repeat = max(1, args.repeat)
    print(
        f"{'hosts x vols x paths':>21s} {'paths':>7s} {'outstanding':>11s} {'peak RSS':>10s} {'above base':>10s} "
        f"{'build s':>8s} {'run s':>7s} {'I/Os':>11s} {'M I/O/s':>8s}" + (f" {'median':>7s}" if repeat > 1 else "")
    )
    rows = []
    for h, v, p in tops:
        runs = [measure(h, v, p, seconds) for _ in range(repeat)]
        label = f"{h} x {v} x {p}"
        if any("error" in r for r in runs):
            print(f"{label:>21s}  failed: {next(r['error'] for r in runs if 'error' in r)}")
            continue
        r = min(runs, key=lambda x: x["run"])  # the best run; memory: the largest peak of them all
        r["peak"], r["run_peak"] = max(x["peak"] for x in runs), max(x["run_peak"] for x in runs)
        rows.append(r)
        median = statistics.median(x["ios"] / x["run"] / 1e6 for x in runs)
        print(
            f"{label:>21s} {r['paths']:7,d} {r['outstanding']:11,d} {r['peak']:7.0f} MiB {r['run_peak'] - r['base']:6.0f} MiB "
            f"{r['build']:8.2f} {r['run']:7.2f} {r['ios']:11,d} {r['ios'] / r['run'] / 1e6:8.2f}" + (f" {median:7.2f}" if repeat > 1 else "")
        )
    chain = sorted((r for r in rows), key=lambda r: (r["paths"], r["outstanding"]))
    if len(chain) > 1:
        print("\nmemory growth against model growth, step by step (above the baseline; at most 1 is linear or better):")
        for a, b in zip(chain, chain[1:]):
            grow = max(b["run_peak"] - b["base"], 1.0) / max(a["run_peak"] - a["base"], 1.0)
            gp, go = b["paths"] / a["paths"], b["outstanding"] / a["outstanding"]
            print(
                f"  {a['paths']:6,d} -> {b['paths']:6,d} paths, {a['outstanding']:6,d} -> {b['outstanding']:6,d} outstanding: "
                f"memory x{grow:5.2f}, paths x{gp:5.2f}, outstanding x{go:5.2f}; "
                f"memory/max(model) {grow / max(gp, go):4.2f}"
            )
    for name in users:
        report_user(name, seconds, repeat)


if __name__ == "__main__":
    main()
