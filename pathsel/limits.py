"""The largest runs pathsel takes, and the smallest timeouts: one place for every limit.

Each limit keeps a run that is legal on paper from exhausting memory, or from
spending hours on events that mean nothing (a retry storm), and each refusal
names the figure that crossed it. The scenario loader checks them where the
user wrote the value; :func:`pathsel.model.compile_model` checks the time
series again for a run's own duration (``--duration``, a sweep's override).
"""

from __future__ import annotations

import math

from .units import MAX_DURATION, format_duration

__all__ = [
    "MAX_DURATION",
    "MAX_SERIES_VALUES",
    "MAX_INT32",
    "MAX_OUTSTANDING",
    "MAX_PATHS",
    "MAX_DEVICE_PATHS",
    "MAX_BLOCK_SIZE",
    "MIN_BANDWIDTH",
    "MAX_FILE_BYTES",
    "MAX_DISTANCE_KM",
    "MAX_NUMA_NODES",
    "MIN_TIMEOUT",
    "RETRY_WARNING",
    "series_values",
    "series_problem",
    "outstanding_problem",
    "MAX_SWEEP_RUNS",
    "sweep_runs_problem",
    "MAX_TRACE_RECORDS",
    "MAX_RATE_STEPS",
    "BACKLOG_CAP",
    "MAX_BACKLOG_VALUES",
    "MAX_RATE_IOPS",
    "MAX_OFFERED_IOS",
    "offered_problem",
    "MAX_MEASURED_COUNT",
]

#: The time series (per interval: counters, the I/Os of every path, two queue figures per device) is kept in
#: memory, 8 bytes a value: 400 MB.
MAX_SERIES_VALUES = 50_000_000
#: I/Os kept in flight by all the workloads of a run together (sum of numjobs x iodepth).
MAX_OUTSTANDING = 1 << 20
#: Paths in one run, over every host and volume (a device's paths x devices): 1,024 devices of 64 paths run in
#: about 700 MB.
MAX_PATHS = 65_536
#: Paths of one device (a host's view of one volume): the fast engine's event rows grow with their square
#: (1,024 paths: about 75 MB; 16,384 asked for 16 GiB). Hosts stop far lower: ESXi and Windows at 32.
MAX_DEVICE_PATHS = 1024
#: The largest count or weight the engines hold in a machine integer (TOML integers have no bound in Python).
MAX_INT32 = 2**31 - 1
#: The largest block size (fio's bs): 1 GiB.
MAX_BLOCK_SIZE = 1 << 30
#: The slowest link speed: 1 kbit/s (125 bytes per second). Below it one 4 KiB frame takes more than half a minute.
MIN_BANDWIDTH = 125.0
#: The largest scenario, validation case or delay file read: 64 MiB.
MAX_FILE_BYTES = 64 << 20
#: I/Os in one trace replayed (read_iolog): the host may hold every one waiting (the fast engine's backlog
#: rows are as long as the longest trace, per job copy).
MAX_TRACE_RECORDS = 1 << 20
#: Arrivals an open-loop job copy may have waiting in the host; more: the run stops (host_queues.overload). A model
#: replaying a longer trace raises it to the trace's length (every record may arrive at once).
BACKLOG_CAP = 1 << 14
#: Backlog places over all job copies of a run that replays traces (job copies x the longest trace): 16M (128 MB).
MAX_BACKLOG_VALUES = 1 << 24
#: Steps of one rate_schedule.
MAX_RATE_STEPS = 10_000
#: The longest fibre: once round the Earth.
MAX_DISTANCE_KM = 40_075.0
# NUMA nodes of one host (issue 16): numa_distances is a square matrix of them
MAX_NUMA_NODES = 64
#: The shortest io_timeout and apd_timeout, 10 us: as short as the fastest I/O. Below it a host with no answer
#: retries (or fails) each I/O more than 100,000 times per simulated second (1ns: a billion), and a run never ends.
#: (Real hosts wait seconds; the property tests squeeze whole runs into milliseconds, so the floor is not 1 ms.)
MIN_TIMEOUT = 1e-5
#: Runs in one sweep (grid points x policies x replications, per scenario): the plan and its table hold a row each.
MAX_SWEEP_RUNS = 100_000
#: A run that retried more than this many times per completed I/O gets a warning line.
RETRY_WARNING = 10
#: The highest offered rate of one job copy, I/Os per second, however it is written (rate_iops, or rate in bytes
#: per second divided by the mean block size, in a rate_schedule too): 1e9, a thousand times the fastest arrays'
#: published IOPS. Also the most IOPS a measurement file may report for one device or path.
MAX_RATE_IOPS = 1e9
#: Arrivals offered in one run, over every job copy of every open-loop workload (numjobs x rate x the run's
#: ramp_time + duration): 2 billion, ten minutes at 3.3 M IOPS. The fast engine simulates about 1-2 M I/Os per
#: second of wall time (CONTRIBUTING.md, benchmarks/engines.py), so the most a run may offer takes 20-30 minutes
#: with a progress bar, where 4,096 job copies at 1e9 IOPS for 10 s would take years; every arrival costs an
#: event even when it is refused (iodepth_full = "refuse") or the array cannot keep up. The reference engine is
#: about 100x slower: a run near the bound is for the fast engine. A closed loop offers nothing: its I/Os are
#: bounded by what the array completes. Checked where the file is read (its duration) and again for the run's
#: own duration (--duration, a sweep's override).
MAX_OFFERED_IOS = 2_000_000_000
#: The largest count a measurement file may give (a fio latency bin, total_ios, N): fio keeps them in unsigned
#: 64-bit integers (fio, stat.h, io_u_plat); more did not come from fio. Counts are summed as Python integers.
MAX_MEASURED_COUNT = 2**64 - 1


def series_values(end: float, interval: float, n_paths: int, n_devices: int = 1) -> tuple[int, int]:
    """(bins, values) of the time series of a run ``end`` seconds long: per bin, I/Os per path, five counters
    and two queue figures per device."""
    bins = math.ceil(end / interval - 1e-9)
    return bins, bins * (n_paths + 5 + 2 * n_devices)


def _nice_up(seconds: float) -> float:
    """The smallest of 1, 2 or 5 x 10^k at or above ``seconds``."""
    k = math.floor(math.log10(seconds))
    for m in (1, 2, 5, 10):
        v = m * 10.0**k
        if v >= seconds * (1 - 1e-12):
            return v
    return 10.0 ** (k + 1)  # pragma: no cover - the loop always returns


def series_problem(end: float, interval: float, n_paths: int, n_devices: int = 1) -> str | None:
    """Why a run ``end`` seconds long, in ``interval`` bins, over ``n_paths`` paths and ``n_devices`` devices,
    keeps too large a time series; else None.

    The message names the bins the interval gives, the memory, and the shortest interval that fits.
    """
    bins, values = series_values(end, interval, n_paths, n_devices)
    if values <= MAX_SERIES_VALUES:
        return None
    fits = max(1, MAX_SERIES_VALUES // (values // bins))
    shortest = _nice_up(end / fits)
    over = f"{n_paths:,} path{'s' if n_paths != 1 else ''}" + (f" and {n_devices:,} devices" if n_devices > 1 else "")
    return (
        f"interval {format_duration(interval)} over a {end:g}s run gives {bins:,} bins per path; with {over} the "
        f"time series takes {values * 8 / 1e9:,.1f} GB, more than the {MAX_SERIES_VALUES * 8 / 1e9:g} GB pathsel "
        f"keeps: write an interval of {format_duration(shortest)} or more"
    )


def outstanding_problem(numjobs: int, iodepth: int) -> str | None:
    """Why one workload keeps too many I/Os in flight, else None."""
    total = numjobs * iodepth
    if total <= MAX_OUTSTANDING:
        return None
    return (
        f"{numjobs:,} job{'s' if numjobs != 1 else ''} x iodepth {iodepth:,} = {total:,} outstanding I/Os, "
        f"more than the {MAX_OUTSTANDING:,} pathsel simulates in one run"
    )


def sweep_runs_problem(values_per_param: list[int], policies: int, replications: int) -> str | None:
    """Why a sweep of one scenario (a grid of these many values per parameter, x policies x replications) plans
    too many runs, else None."""
    points = math.prod(values_per_param)
    runs = points * policies * replications
    if runs <= MAX_SWEEP_RUNS:
        return None
    return (
        f"{points:,} grid point{'s' if points != 1 else ''} x {policies:,} polic{'ies' if policies != 1 else 'y'} x "
        f"{replications:,} replication{'s' if replications != 1 else ''} = {runs:,} runs, more than the "
        f"{MAX_SWEEP_RUNS:,} pathsel plans in one sweep: fewer replications or values"
    )


def offered_problem(offered: list[tuple[str, int, float]], seconds: float) -> str | None:
    """Why the open-loop workloads ``offered`` ((name, numjobs, mean I/Os per second per job copy) each) offer
    too many arrivals over a run ``seconds`` long (ramp_time included), else None; the message names the figure."""
    total = sum(numjobs * rate for _, numjobs, rate in offered) * seconds
    if total <= MAX_OFFERED_IOS:
        return None
    top = max(offered, key=lambda o: o[1] * o[2])
    many = f", {len(offered):,} open-loop workloads together" if len(offered) > 1 else ""
    return (
        f"the workloads offer {total:,.4g} I/Os over the {seconds:g}s run ({top[0]!r}: {top[1]:,} job "
        f"cop{'ies' if top[1] != 1 else 'y'} x {top[2]:,.6g} IOPS{many}), more than the {MAX_OFFERED_IOS:,} "
        "pathsel simulates in one run (about 1-2 M a second of wall time): a lower rate, fewer numjobs or a "
        "shorter duration"
    )
