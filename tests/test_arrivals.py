"""Offered load that changes and traces replayed (issue 16): rate_schedule, thinktime, read_iolog.

Both engines give the same JSON and per-I/O trace for every kind of arrivals;
the arrivals are what the keys say (counts per interval, the trace's own
times, ops and sizes); every arrival is accounted for; bad keys and files get
one located message.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pathsel
from pathsel.errors import ScenarioError
from pathsel.timing.arrivals import Schedule, read_trace
from pathsel.timing.distributions import delay_files_relative_to

from .conftest import ROOT
from .test_properties import SETTINGS

TRACES = ROOT / "tests" / "data" / "traces"

BASE = """
name = "arrivals"
seed = {seed}
duration = "{duration}"
interval = "{interval}"
[[arrays]]
name = "a"
concurrency = {conc}
service_time = {{ dist = "exponential", mean = "100us" }}
[[hosts]]
name = "h"
{host}
[[paths]]
name = "p{{i}}"
count = 2
array = "a"
one_way_latency = "20us"
"""


def _scenario(workloads: str, seed=1, duration="1s", interval="100ms", conc=8, host="", base_dir=TRACES):
    text = BASE.format(seed=seed, duration=duration, interval=interval, conc=conc, host=host) + workloads
    with delay_files_relative_to(base_dir):  # traces sit beside the scenario, as load_scenario reads them
        return pathsel.loads_scenario(text, str(Path(base_dir) / "scenario.toml"))


def _same(sc, policies=("rr:iops=1", "dm:service-time")):
    fast = pathsel.simulate(sc, policies=list(policies), engine="fast", trace=True)
    ref = pathsel.simulate(sc, policies=list(policies), engine="reference", trace=True)
    assert fast.to_json().replace('"fast"', '"x"') == ref.to_json().replace('"reference"', '"x"')
    assert all(f.metrics.trace == r.metrics.trace for f, r in zip(fast.runs, ref.runs))
    return fast


# -- both engines, bit for bit ---------------------------------------------------------------
DIFFERENTIAL = {
    "schedule-poisson-periodic": """
[[workloads]]
name = "burst"
iodepth = 16
numjobs = 2
rate_iops = 5000
rate_process = "poisson"
rate_schedule = [{at = "20ms", rate_iops = 40000}, {at = "30ms", rate = "40MB/s"}, {at = "45ms", rate_iops = 0}]
rate_schedule_period = "50ms"
[[workloads]]
name = "think-blocks"
rw = "randrw"
iodepth = 4
rate_iops = 20000
thinktime = "2ms"
thinktime_blocks = 16
""",
    "thinktime-iotime-and-traces": """
[[workloads]]
name = "on-off"
rw = "randwrite"
bs = "4k/50:64k/50"
iodepth = 8
rate_iops = 30000
rate_process = "poisson"
thinktime = "7ms"
thinktime_iotime = "3ms"
[[workloads]]
name = "csv"
iodepth = 1
read_iolog = "arrivals.csv"
[[workloads]]
name = "blk"
iodepth = 2
numjobs = 2
read_iolog = "blkparse.txt"
replay_time_scale = 400
[[workloads]]
name = "v3"
iodepth = 3
read_iolog = "v3.log"
replay_no_stall = true
""",
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIAL))
def test_both_engines_agree_on_every_kind_of_arrivals(name):
    """A host queue depth of 3 too, so that arrivals wait in both of the host's queues."""
    sc = _scenario(DIFFERENTIAL[name], duration="120ms", interval="10ms", conc=2, host="queue_depth = 3")
    result = _same(sc)
    assert all(r.accounting["balanced"] for r in result.runs)


# -- what the keys mean ----------------------------------------------------------------------
def test_a_linear_schedule_gives_its_rate_in_each_interval():
    """10,000 IOPS, then 40,000 from 300 ms, then none from 700 ms: arrivals per 100 ms bin are the integral."""
    sc = _scenario("""
[[workloads]]
iodepth = 64
rate_iops = 10000
rate_schedule = [{at = "300ms", rate_iops = 40000}, {at = "700ms", rate_iops = 0}]
""")
    spec = sc.model.workloads[0].arrival_spec()
    assert isinstance(spec, Schedule) and spec.starts == pytest.approx((0.0, 0.3, 0.7))
    assert spec.rates == (10000.0, 40000.0, 0.0) and spec.period == 0.0
    run = pathsel.simulate(sc, policies=["rr"], trace=True).runs[0]
    issued = np.array([t[4] for t in run.metrics.trace])
    counts = np.histogram(issued, bins=np.arange(0, 1.0001, 0.1))[0]
    assert counts.tolist() == pytest.approx([1000] * 3 + [4000] * 4 + [0] * 3, abs=1)
    assert run.accounting["issued"] == pytest.approx(3000 + 16000, abs=1)


def test_a_poisson_schedule_gives_its_mean_rate():
    sc = _scenario(
        """
[[workloads]]
iodepth = 256
rate_process = "poisson"
rate_schedule = [{at = "0s", rate_iops = 20000}, {at = "250ms", rate_iops = 60000}]
rate_schedule_period = "500ms"
""",
        duration="2s",
    )
    run = pathsel.simulate(sc, policies=["rr"]).runs[0]
    assert run.iops == pytest.approx(40000, rel=0.02)


def test_thinktime_iotime_is_on_then_off():
    """50,000 IOPS for 2 ms, then 8 ms without: a fifth of the time on, 10,000 IOPS on average, none in the gaps."""
    sc = _scenario("""
[[workloads]]
iodepth = 64
rate_iops = 50000
thinktime_iotime = "2ms"
thinktime = "8ms"
""")
    run = pathsel.simulate(sc, policies=["rr"], trace=True).runs[0]
    issued = np.array([t[4] for t in run.metrics.trace])
    assert len(issued) == pytest.approx(10000, abs=2)
    assert np.all(np.mod(issued + 1e-12, 0.010) <= 0.002 + 1e-9)  # every arrival in an on period


def test_thinktime_blocks_pauses_after_each_block():
    sc = _scenario(
        """
[[workloads]]
iodepth = 64
rate_iops = 10000
thinktime = "1ms"
thinktime_blocks = 4
""",
        duration="100ms",
    )
    run = pathsel.simulate(sc, policies=["rr"], trace=True).runs[0]
    gaps = np.diff([0.0] + sorted(t[4] for t in run.metrics.trace))
    expected = [100e-6 + (1e-3 if i > 0 and i % 4 == 0 else 0.0) for i in range(len(gaps))]
    assert gaps == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_trace_gives_each_io_its_time_op_and_size(engine):
    """The per-I/O record of the run is the file's, record for record, whatever the engine and the policy."""
    sc = _scenario('[[workloads]]\niodepth = 2\nread_iolog = "blkparse.txt"\n', duration="50ms")
    trace = read_trace("blkparse.txt", base_dir=TRACES)
    for run in pathsel.simulate(sc, policies=["rr", "fixed"], engine=engine, trace=True).runs:
        got = sorted((t[4], t[2], t[3]) for t in run.metrics.trace)
        want = [(float(t), "read" if o == 0 else "write", int(s)) for t, o, s in zip(trace.times, trace.ops, trace.sizes)]
        assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-12)
        assert [g[1:] for g in got] == [w[1:] for w in want]
        assert run.accounting["issued"] == len(trace) == run.accounting["completed"]


def test_a_trace_arriving_faster_than_iodepth_waits_in_order_and_nothing_is_dropped():
    """Every record at t = 0 (replay 1000x faster than 0..2 ms): all wait, all are issued, in the file's order."""
    sc = _scenario('[[workloads]]\niodepth = 1\nread_iolog = "arrivals.csv"\nreplay_time_scale = 1e5\n', duration="20ms")
    run = pathsel.simulate(sc, policies=["rr"], trace=True).runs[0]
    done = sorted(run.metrics.trace, key=lambda t: t[5])
    assert [t[3] for t in done] == [4096, 8192, 4096, 65536]  # the file's sizes, in time order
    assert run.accounting["issued"] == run.accounting["completed"] == 4
    assert run.latency_split_us["kavg"]["max"] > 0.0  # they waited in the host (KAVG), behind iodepth


def test_replay_time_scale_and_no_stall():
    fast = read_trace("v3.log", scale=200, base_dir=TRACES)
    assert fast.times.tolist() == pytest.approx([0.0005, 0.001, 0.001, 0.0025])
    sc = _scenario('[[workloads]]\niodepth = 2\nread_iolog = "v3.log"\nreplay_no_stall = true\n', duration="10ms")
    run = pathsel.simulate(sc, policies=["rr"], trace=True).runs[0]
    assert run.accounting["issued"] == run.accounting["completed"] == 4
    assert min(t[4] for t in run.metrics.trace) == 0.0  # issued at once, not at 1 ms


@pytest.mark.parametrize(
    "file, times, ops, sizes, skipped",
    [
        ("v2.log", [0.0, 0.0005, 0.0005, 0.0015], [0, 1, 0, 1], [4096, 8192, 4096, 65536], 1),
        ("v3.log", [0.001, 0.002, 0.002, 0.005], [0, 1, 0, 1], [4096, 16384, 4096, 4096], 1),
        ("blkparse.txt", [0.0, 0.00025, 0.001], [0, 1, 0], [4096, 8192, 131072], 1),
        ("arrivals.csv", [0.0001, 0.0005, 0.001, 0.002], [0, 1, 0, 1], [4096, 8192, 4096, 65536], 0),
    ],
)
def test_each_trace_format_is_read(file, times, ops, sizes, skipped):
    """fio v2 (wait in us, below 100 discarded), fio v3 (ms), blkparse's Q events (blocks x 512), CSV (sorted)."""
    t = read_trace(file, base_dir=TRACES)
    assert t.times.tolist() == pytest.approx(times)
    assert t.ops.tolist() == ops and t.sizes.tolist() == sizes and t.skipped == skipped


def test_blkparse_takes_d_events_when_there_are_no_q(tmp_path):
    lines = [ln.replace(" D ", " X ").replace(" Q ", " D ") for ln in (TRACES / "blkparse.txt").read_text().splitlines()]
    (tmp_path / "d.txt").write_text("\n".join(lines))
    t = read_trace("d.txt", base_dir=tmp_path)
    assert t.kind == "blkparse" and len(t) == 3


# -- accounting, as properties -----------------------------------------------------------------
@SETTINGS
@given(
    seed=st.integers(0, 1000),
    iodepth=st.integers(1, 6),
    qd=st.sampled_from([None, 1, 3]),
    scale=st.sampled_from([25, 100, 1000]),
    period=st.sampled_from([None, "20ms"]),
    peak=st.sampled_from([5000, 30000]),
)
def test_every_arrival_is_accounted_for(seed, iodepth, qd, scale, period, peak):
    """issued = completed + failed + in flight, for schedules and traces; a trace's records all issue in a long run."""
    host = f"queue_depth = {qd}" if qd else ""
    sched = f'rate_schedule = [{{at = "0s", rate_iops = 2000}}, {{at = "10ms", rate_iops = {peak}}}]'
    sched += f'\nrate_schedule_period = "{period}"' if period else ""
    text = f"""
[[workloads]]
name = "sched"
iodepth = {iodepth}
rate_process = "poisson"
{sched}
[[workloads]]
name = "trace"
iodepth = {iodepth}
read_iolog = "blkparse.txt"
replay_time_scale = {scale}
"""
    sc = _scenario(text, seed=seed, duration="60ms", interval="10ms", conc=4, host=host)
    try:
        run = pathsel.simulate(sc, policies=["rr"], trace=True).runs[0]
    except ScenarioError:  # the schedule's peak above what the set-up serves: said, not measured
        return
    acc = run.accounting
    assert acc["issued"] == acc["completed"] + acc["failed"] + acc["in_flight"]
    traced = [t for t in run.metrics.trace if t[1] == 1]
    assert len(traced) == 3  # the trace's three records, long done by 60 ms


def test_the_sims_examples_run_on_both_engines():
    for name in ("open-loop-bursts", "trace-replay"):
        sc = pathsel.load_scenario(ROOT / "sims" / f"{name}.toml")
        fast = pathsel.simulate(sc, policies=[sc.runs[0].policy], duration=0.15, engine="fast")
        ref = pathsel.simulate(sc, policies=[sc.runs[0].policy], duration=0.15, engine="reference")
        assert fast.to_json().replace('"fast"', '"x"') == ref.to_json().replace('"reference"', '"x"')


# -- bad input: one located message -------------------------------------------------------------
@pytest.mark.parametrize(
    "workload, message",
    [
        ('rate_iops = 10\nrate_schedule = [{at = "1s", rate_iops = 5, rate = "1MB/s"}]', "needs rate_iops or rate"),
        ('rate_iops = 10\nrate_schedule = [{at = "1s"}]', "needs rate_iops or rate"),
        ('rate_schedule = [{at = "1s", rate_iops = 5}]', 'start it at "0s", or give rate_iops'),
        ('rate_schedule = [{at = "0s", rate_iops = -5}]', "rate_iops"),
        ('rate_schedule = [{at = "0s", rate_iops = 0}]', "needs a rate above 0"),
        ('rate_schedule = [{at = "0s", rate_iops = inf}]', "rate_iops"),
        ('rate_schedule = [{at = "-1s", rate_iops = 5}]', "at"),
        ("rate_schedule = []", "rate_schedule"),
        ('rate_iops = 10\nrate_schedule_period = "1s"', "rate_schedule_period needs rate_schedule"),
        ('rate_schedule = [{at = "0s", rate_iops = 5}, {at = "1s", rate_iops = 9}]\nrate_schedule_period = "1s"', "not within rate_schedule_period"),
        ('rate_schedule = [{at = "0s", rate_iops = 5}, {at = "0s", rate_iops = 9}]', "must come after the one before"),
        ("rate_iops = 10\nthinktime_blocks = 4", "thinktime_blocks needs thinktime"),
        ('rate_iops = 10\nthinktime_iotime = "1ms"', "thinktime_iotime needs thinktime"),
        ('rate_iops = 10\nthinktime = "1ms"\nthinktime_blocks = 4\nthinktime_iotime = "1ms"', "not both"),
        ('thinktime = "1ms"\nrate_schedule = [{at = "0s", rate_iops = 5}]', "no rate_schedule"),
        ('rate_iops = 10\nthinktime = "1ms"\nthinktime_blocks = 0', "thinktime_blocks"),
        ('rate_iops = 10\nthinktime = "0s"', "thinktime"),
        ("read_iolog = 5", "must be a file name"),
        ('read_iolog = "v2.log"\nrw = "randwrite"', "drop rw"),
        ('read_iolog = "v2.log"\nbs = "8k"', "drop bs"),
        ('read_iolog = "v2.log"\nrate_process = "poisson"', "drop rate_process"),
        ('read_iolog = "v2.log"\nreplay_time_scale = 0', "replay_time_scale"),
        ('read_iolog = "v2.log"\nreplay_no_stall = "yes"', "replay_no_stall"),
        ('iolog_format = "csv"', "iolog_format needs read_iolog"),
        ("replay_no_stall = true", "replay_no_stall needs read_iolog"),
        # issue 38: the rate limit holds for the IOPS a rate in bytes per second gives, in a schedule too
        ('rate = "1000Tbit"', "is 3.052e+10 IOPS per job copy, more than the 1,000,000,000"),
        ('rate = "8Tbit"\nbs = "512"', "is 1.953e+09 IOPS per job copy"),
        ('rate_iops = 5\nrate_schedule = [{at = "1s", rate = "1000Tbit"}]', "rate_schedule: the step at 1s: rate = 1.25e+14 bytes per second"),
    ],
)
def test_bad_arrival_keys_are_one_located_message(workload, message):
    with pytest.raises(ScenarioError, match="workloads\\[0\\]") as info:
        _scenario("[[workloads]]\niodepth = 4\n" + workload)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "content, fmt, message",
    [
        ("", "auto", "'t' is empty"),
        ("hello\nworld\n", "auto", "is neither fio's iolog header"),
        ("time,op,size\n", "csv", "holds no read or write I/O"),
        ("when,op,size\n1,read,4k\n", "csv", "line 1: the CSV header needs columns time, op and size"),
        ("time,op,size\n1,read\n", "csv", "line 2: 2 columns, the header has 3"),
        ("time,op,size\nsoon,read,4k\n", "csv", "line 2: time:"),
        ("time,op,size\n-1,read,4k\n", "csv", "line 2: time -1.0 must be finite and >= 0"),
        ("time,op,size\n1e12,read,4k\n", "csv", "line 2: time 1e+12 s is more than the 1e6s"),
        ("time,op,size\n1,read,lots\n", "csv", "line 2: size:"),
        ("time,op,size\n1,read,2g\n", "csv", "line 2: size 2,147,483,648 is more than the 1g (1 GiB) pathsel takes"),
        ("time,op,size\n1,read,0\n", "csv", "line 2: size 0 must be > 0"),
        ("fio version 1 iolog\n", "fio", "line 1: fio iolog versions 2 and 3 are read"),
        ("fio version 2 iolog\n/dev/sdb erase 0 4096\n", "fio", "line 2: unknown action 'erase'"),
        ("fio version 2 iolog\n/dev/sdb read zero 4096\n", "fio", "line 2: offset and length must be whole numbers"),
        ("fio version 2 iolog\n/dev/sdb eject\n", "fio", "line 2: unknown file action 'eject'"),
        ("fio version 3 iolog\nnow /dev/sdb read 0 4096\n", "fio", "line 2: 'now' is not a timestamp in ms"),
        ("fio version 2 iolog\n/dev/sdb trim 0 4096\n", "fio", "holds no read or write I/O"),
        ("CPU0 (8,16):\n Reads Queued: 0\n", "blkparse", "holds no Q (queued) or D (issued) read or write records"),
        ("  8,16 1 1 0.5 4121 Q RS 2048 + 0 [x]\n", "blkparse", "holds no Q (queued) or D (issued)"),
        ("time,op,size\n1,read,4k\n", "fio", "line 1: fio iolog versions 2 and 3 are read"),
        # issue 38: numbers a float or int reads that no tool writes, past what pathsel takes
        ("time,op,size\nnan,read,4k\n", "csv", "line 2: time nan must be finite and >= 0"),
        ("time,op,size\n1e400,read,4k\n", "csv", "line 2: time inf must be finite and >= 0"),
        ("time,op,size\n1,read,4k\u00b2\n", "csv", "line 2: size: '4k\u00b2' is not a size"),
        ("time,op,size\n1,read," + "9" * 5000 + "\n", "csv", "line 2: size:"),
        ("fio version 2 iolog\n/dev/sdb read 0 4096\u00b2\n", "fio", "line 2: offset and length must be whole numbers"),
        ("fio version 2 iolog\n/dev/sdb read 0 " + "9" * 5000 + "\n", "fio", "line 2: offset and length must be whole numbers"),
        ("fio version 2 iolog\n/dev/sdb wait " + "9" * 400 + " 0\n/dev/sdb read 0 4096\n", "fio", "line 2: a wait of 400 digits (us)"),
        ("fio version 3 iolog\n" + "9" * 400 + " /dev/sdb read 0 4096\n", "fio", "line 2: time inf must be finite"),
        ("8,16 1 1 0.5 4121 Q R 2048 + " + "9" * 5000 + " [x]\n", "blkparse", "line 1: a block count of 5000 digits is not an I/O's size"),
        ("time,op,size\n1,read,4k\n\x00\x00", "csv", "is not text (line 3, a NUL byte: a binary file?)"),
    ],
)
def test_bad_trace_files_name_the_file_and_line(tmp_path, content, fmt, message):
    (tmp_path / "t").write_text(content)
    with pytest.raises(ScenarioError, match="workloads\\[0\\].read_iolog") as info:
        _scenario(f'[[workloads]]\nread_iolog = "t"\niolog_format = "{fmt}"\n', base_dir=tmp_path)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert "Traceback" not in str(info.value)


def test_a_binary_file_or_a_directory_is_no_trace(tmp_path):
    (tmp_path / "bin").write_bytes(b"\x00\xffblktrace\xfe\x80")
    (tmp_path / "dir").mkdir()
    for name, message in (
        ("bin", "is not text (line 1, byte 0xff): blktrace's binary files are read as blkparse's"),
        ("dir", "'dir' is a directory, not a trace"),
    ):
        with pytest.raises(ScenarioError, match="read_iolog") as info:
            _scenario(f'[[workloads]]\nread_iolog = "{name}"\n', base_dir=tmp_path)
        assert message in str(info.value)


def test_too_many_job_copies_of_a_long_trace_are_refused(tmp_path):
    lines = ["time,op,size"] + [f"{i * 1e-6},read,4k" for i in range(20000)]
    (tmp_path / "long.csv").write_text("\n".join(lines))
    sc = _scenario('[[workloads]]\nread_iolog = "long.csv"\nnumjobs = 1000\n', base_dir=tmp_path)
    with pytest.raises(ScenarioError, match="more than the 16,777,216 places pathsel keeps"):
        pathsel.simulate(sc, policies=["rr"], duration=0.001)


# -- a full iodepth that refuses (M/M/c/K) ----------------------------------------------------------
def test_refused_arrivals_are_counted_and_both_engines_agree():
    sc = _scenario(
        """
[[workloads]]
iodepth = 3
rate_iops = 40000
rate_process = "poisson"
iodepth_full = "refuse"
[[workloads]]
name = "trace"
iodepth = 1
read_iolog = "arrivals.csv"
replay_time_scale = 1e5
iodepth_full = "refuse"
""",
        duration="50ms",
        interval="10ms",
        conc=2,
        host="queue_depth = 2",
    )
    result = _same(sc)
    for run in result.runs:
        acc = run.accounting
        assert acc["refused"] > 0 and acc["balanced"]
        assert len([t for t in run.metrics.trace if t[1] == 1]) == 1  # the trace's four arrive at once: 1 taken
    assert "refused at a full iodepth" in str(result.story())


def test_without_refusal_the_accounting_has_no_refused_key():
    run = pathsel.simulate(_scenario("[[workloads]]\niodepth = 2\nrate_iops = 1000\n", duration="10ms"), policies=["rr"]).runs[0]
    assert "refused" not in run.accounting


def test_the_mmck_case_holds_the_formula():
    """sims/validation/mmck-blocking.toml's expected figures are what analytic.mmck computes (Gross et al. 2008)."""
    import tomllib

    from pathsel.studies.analytic import mmck

    case = tomllib.loads((ROOT / "sims" / "validation" / "mmck-blocking.toml").read_text())
    w, h, a = case["workloads"][0], case["hosts"][0], case["arrays"][0]
    assert w["iodepth_full"] == "refuse" and a["concurrency"] >= w["iodepth"]
    fig = mmck(w["rate_iops"], 1 / 100e-6, h["queue_depth"], w["iodepth"])
    expected = {c["metric"]: c["expected"] for c in case["validation"]["checks"]}
    assert expected["refused_fraction"] == pytest.approx(fig["blocking"], rel=1e-6)
    assert expected["iops"] == pytest.approx(fig["throughput"], rel=1e-6)
    assert expected["latency_mean_us"] == pytest.approx(fig["W"] * 1e6 + 0.002, rel=1e-5)  # + two 1 ns legs
    # the limits: K = c is Erlang's loss formula (B(1, 1) = 1/2), K large is M/M/c (Erlang C, mmc-open.toml)
    assert mmck(10000, 10000, 1, 1)["blocking"] == pytest.approx(0.5)
    assert mmck(30000, 10000, 4, 4000)["W"] * 1e6 == pytest.approx(150.943, rel=1e-5)


@pytest.mark.parametrize(
    "workload, message",
    [
        ('iodepth_full = "refuse"', "iodepth_full applies to an open loop"),
        ('rate_iops = 5\niodepth_full = "drop"', "iodepth_full"),
    ],
)
def test_bad_refusal_keys(workload, message):
    with pytest.raises(ScenarioError, match="workloads\\[0\\]") as info:
        _scenario("[[workloads]]\niodepth = 4\n" + workload)
    assert message in str(info.value)
