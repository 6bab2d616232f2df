"""Inputs as people write them (issue 13): durations, link speeds, one service time for both
ops, fio's rwmixwrite, validation case files, suggestions for misspellings, every problem of a
file at once; and what comes out: the JSON's extra keys, per-op rows, one time unit per table.

Refusals are rows of tests/test_bad_input.py; these tables hold what is accepted and its value.
"""

from __future__ import annotations

import json
import re
import warnings

import pytest

import pathsel
from pathsel.cli import arguments, main
from pathsel.units import parse_bandwidth, parse_seconds

from .conftest import ROOT

# -- durations on the command line and in the API: a bare number is seconds ----------------

SECONDS = [
    ("20", 20.0),
    ("0.5", 0.5),
    (".25", 0.25),
    ("1e3", 1000.0),
    ("20s", 20.0),
    ("500ms", 0.5),
    ("2min", 120.0),
    ("250 us", 250e-6),
    ("1e6", 1e6),  # the longest allowed
]


@pytest.mark.parametrize(("text", "seconds"), SECONDS)
def test_command_line_durations(text, seconds):
    assert arguments.duration(text) == pytest.approx(seconds)
    assert parse_seconds(text) == pytest.approx(seconds)


def test_a_bare_number_is_seconds_on_the_command_line_and_in_the_api(capsys):
    assert main(["simulate", "-q", "--json", "--duration", "0.02", "--policy", "rr:iops=1"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["duration_s"] == 0.02
    for duration in (0.02, "0.02", "20ms"):
        api = json.loads(pathsel.simulate(duration=duration, policies=["rr:iops=1"]).to_json())
        assert api == cli


def test_a_negative_looking_value_still_reaches_its_check(capsys):
    # "--seed -1" always worked (argparse reads -1 as a number); "-1s" needs joining
    with pytest.raises(SystemExit):
        main(["simulate", "--seed", "-1"])
    assert "argument --seed: must be >= 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("duration", "problem"),
    [
        (float("nan"), "must be finite, got nan"),
        (float("inf"), "must be finite, got inf"),
        (1e12, "1000000000000.0 is more than the 1e6s (11.6 days) pathsel allows"),
        ("1e12s", "'1e12s' is more than the 1e6s"),
        (0, "must be > 0, got 0"),
        ("-1s", "must be > 0, got '-1s'"),
    ],
)
def test_api_refuses_durations_as_the_command_line_does(duration, problem):
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.simulate(duration=duration)
    assert (info.value.source, info.value.place) == ("simulate()", "duration")
    assert problem in info.value.problem
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.sweep(duration=duration)
    assert info.value.place == "duration" and problem in info.value.problem


def test_a_time_series_too_large_for_memory_is_refused_before_running(tmp_path, capsys):
    text = (
        'duration = "100000s"\ninterval = "1ms"\n[[arrays]]\nname = "a"\n'
        '[[paths]]\nname = "p0"\narray = "a"\none_way_latency = "50us"\n[[workloads]]\nrw = "randread"\n'
    )
    figures = (
        "interval 1ms over a 100000s run gives 100,000,000 bins per path; with 1 path the time series takes 6.4 GB, "
        "more than the 0.4 GB pathsel keeps: write an interval of 20ms or more"
    )
    path = tmp_path / "long.toml"
    path.write_text(text)
    # at load time, from the file's own duration
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario(path)
    assert (info.value.source, info.value.place, info.value.problem) == (str(path), "interval", figures)
    # at compile time, from a run's own duration: a file that loads, run for longer than it says
    path.write_text(text.replace('"100000s"', '"10s"'))
    sc = pathsel.load_scenario(path)
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.simulate(sc, duration=100000)
    assert (info.value.place, info.value.problem) == ("interval", figures)
    assert main(["simulate", str(path), "--duration", "1e5"]) == 2
    assert capsys.readouterr().err == f"pathsel: error: {path}: interval: {figures}\n"
    # the shortest interval it names fits
    path.write_text(text.replace('"1ms"', '"20ms"'))
    assert pathsel.load_scenario(path).model.interval == 0.02


# -- link speeds: b is a bit, B a byte; a bare prefix counts bits ---------------------------

GBIT = 1e9 / 8  # bytes per second in 1 Gbit/s

LINK_SPEEDS = [
    ("32Gb", 32 * GBIT),
    ("32gb", 32 * GBIT),
    ("32Gbps", 32 * GBIT),
    ("32Gbit", 32 * GBIT),
    ("32Gbits", 32 * GBIT),
    ("32Gbit/s", 32 * GBIT),
    ("32GBit/s", 32 * GBIT),  # "bit" spelt out: any case
    ("32 Gbit/s", 32 * GBIT),
    ("32Gb/s", 32 * GBIT),
    ("25GbE", 25 * GBIT),  # the Ethernet rate, no encoding or header allowance
    ("25gbe", 25 * GBIT),
    ("25GBE", 25 * GBIT),
    ("16GFC", 1.7e9),  # 14.025 GBd x 64/66: the data rate after encoding (issue 33)
    ("16gfc", 1.7e9),
    ("32GFC", 3.4e9),
    ("8GFC", 0.85e9),  # 8.5 GBd x 8/10
    ("10G", 10 * GBIT),  # bits, as 10G Ethernet
    ("10g", 10 * GBIT),
    ("100M", 100e6 / 8),
    ("1T", 1e12 / 8),
    ("1000Mbit", 125e6),
    ("1600mb/s", 200e6),  # lower-case b: megabits
    ("1600Mb/s", 200e6),
    ("8000000000bps", 1e9),
    ("3200MB/s", 3.2e9),
    ("3200MBps", 3.2e9),
    ("3200MByte/s", 3.2e9),
    ("3200 MB/s", 3.2e9),
    ("3.2GB/s", 3.2e9),
    ("400MiB/s", 400 * 2**20),
    ("400MiBps", 400 * 2**20),
    ("1GiB/s", 2**30),
    ("1Gibit/s", 2**30 / 8),
    ("500KB/s", 500e3),
    ("500kb/s", 500e3 / 8),
]


@pytest.mark.parametrize(("text", "bytes_per_s"), LINK_SPEEDS)
def test_link_speed_spellings(text, bytes_per_s):
    assert parse_bandwidth(text) == pytest.approx(bytes_per_s, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("32GB", '\'32GB\' is an amount of data, not a rate: write "32GB/s" for bytes per second, or "32Gb" for bits per second'),
        ("32Gbyte", "'32Gbyte' is an amount of data, not a rate: write \"32Gbyte/s\" for bytes per second"),
        ("3200MBPS", "unknown link speed unit 'MBPS'"),  # capitals leave b or B unclear
        ("25GbE/s", "unknown link speed unit 'GbE/s'"),
        ("10Xb", "unknown link speed unit 'Xb'"),
        ("10 furlongs", "unknown link speed unit 'furlongs'"),
        ("infGbit", "'infGbit': must be finite"),
        ("16", "'16' has no unit"),
        (16, "16 has no unit"),
    ],
)
def test_link_speed_nonsense_is_refused(text, problem):
    with pytest.raises(ValueError) as info:
        parse_bandwidth(text)
    assert problem in str(info.value)


def test_a_link_speed_spelling_reaches_the_model(tmp_path):
    text = (ROOT / "tests" / "bad_inputs" / "bandwidth_no_unit.toml").read_text()
    for spelling, rate in (("25GbE", 25 * GBIT), ("3200MBps", 3.2e9)):
        sc = pathsel.loads_scenario(text.replace('bandwidth = "16"', f'bandwidth = "{spelling}"'))
        assert sc.model.paths[1].bandwidth == pytest.approx(rate)


# -- service_time: one delay for both ops, or read and write ------------------------------

ONE_ARRAY = """
[[arrays]]
name = "a"
service_time = {service_time}

[[paths]]
name = "p{{i}}"
count = 2
array = "a"
one_way_latency = "50us"

[[workloads]]
rw = "randrw"
rwmixread = 70
iodepth = 4
"""


@pytest.mark.parametrize(
    ("one", "split"),
    [
        ('"150us"', '{ read = "150us", write = "150us" }'),
        (
            '{ dist = "exponential", mean = "100us" }',
            '{ read = { dist = "exponential", mean = "100us" }, write = { dist = "exponential", mean = "100us" } }',
        ),
        ('"0us"', '{ read = "0us", write = "0us" }'),
    ],
)
def test_one_service_time_is_the_same_delay_for_reads_and_writes(one, split):
    a = pathsel.loads_scenario(ONE_ARRAY.format(service_time=one))
    b = pathsel.loads_scenario(ONE_ARRAY.format(service_time=split))
    st = a.model.arrays[0].service_time
    assert st.read == st.write == b.model.arrays[0].service_time.read
    assert a.model.arrays[0].service_time == b.model.arrays[0].service_time
    # the same draws: each op keeps its own random stream either way
    ra = json.loads(pathsel.simulate(a, duration=0.01).to_json())
    rb = json.loads(pathsel.simulate(b, duration=0.01).to_json())
    assert ra["runs"] == rb["runs"]


# -- fio's rwmixwrite -----------------------------------------------------------------------

RWMIX = [
    # (keys in [[workloads]], rw, share of reads)
    ("", "randrw", 0.5),
    ("rwmixread = 70", "randrw", 0.7),
    ("rwmixwrite = 30", "randrw", 0.7),
    ("rwmixwrite = 100", "rw", 0.0),
    ("rwmixwrite = 0", "readwrite", 1.0),
    ("rwmixread = 70\nrwmixwrite = 30", "randrw", 0.7),
    ("rwmixwrite = 30", "randread", 1.0),  # as in fio: the mix applies to mixed workloads only
]


@pytest.mark.parametrize(("keys", "rw", "reads"), RWMIX)
def test_rwmixwrite_is_fios(keys, rw, reads):
    text = ONE_ARRAY.format(service_time='"100us"').replace('rw = "randrw"\nrwmixread = 70', f'rw = "{rw}"\n{keys}')
    w = pathsel.loads_scenario(text).model.workloads[0]
    assert w.read_fraction == reads
    if rw in ("rw", "readwrite", "randrw"):
        assert w.rwmixread + w.rwmixwrite == 100


def test_rwmixwrite_reaches_the_runs_op_mix():
    text = ONE_ARRAY.format(service_time='"100us"').replace("rwmixread = 70", "rwmixwrite = 100")
    run = json.loads(pathsel.simulate(pathsel.loads_scenario(text), duration=0.01).to_json())["runs"][0]
    assert list(run["ops"]) == ["write"]


# -- pathsel simulate runs a validation case file -------------------------------------------

CASES_DIR = ROOT / "sims" / "validation"


@pytest.mark.parametrize("case", sorted(CASES_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_simulate_runs_every_validation_case_file(case, capsys):
    assert main(["simulate", "-q", str(case), "--duration", "0.2"]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # no warning about the random split's Python policy: the reference engine is chosen quietly
    assert f"pathsel validate {case} compares it with its" in out.splitlines()[-1]
    from pathsel.studies.validate import load_case, scenario_of

    loaded = load_case(case)
    assert f"validation case {loaded.name} ({loaded.source})" in out
    # the API runs the same scenario, with the same numbers (auto warns of a random split's reference engine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api = pathsel.simulate(scenario_of(case), duration=0.2).table()
    assert out.startswith(api)


def test_a_validation_case_runs_its_random_split_on_the_reference_engine(capsys):
    case = str(CASES_DIR / "mva-single-server.toml")
    assert main(["simulate", "-q", case, "--duration", "0.05", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["engine"] == "reference"
    assert [r["policy"] for r in doc["runs"]] == ["random-split"]
    assert main(["simulate", "-q", case, "--duration", "0.05", "--engine", "fast"]) == 2
    assert capsys.readouterr().err == (
        "pathsel: error: command line: --engine fast: the fast engine runs built-in and compiled-style policies only, "
        "and 'random-split' is a Python policy: use --engine reference\n"
    )


def test_load_scenario_points_a_case_file_at_scenario_of():
    case = CASES_DIR / "mva-single-server.toml"
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario(case)
    assert (info.value.place, str(info.value).count("\n")) == ("validation", 0)
    assert "pathsel.simulate(scenario_of(file))" in info.value.problem


# -- did you mean ...? ----------------------------------------------------------------------

SPEC_SUGGESTIONS = [
    ("latncy", "unknown policy 'latncy' (did you mean 'latency'?)"),
    ("p2c-ewm", "unknown policy 'p2c-ewm' (did you mean 'p2c-ewma'?)"),
    ("VMW_PSP_R", "unknown policy 'VMW_PSP_R' (did you mean 'VMW_PSP_RR'?)"),
    ("dm:servce-time", "unknown policy 'dm:servce-time' (did you mean 'dm:service-time'?)"),
    ("mpio:lq", "unknown policy 'mpio:lq' (did you mean 'mpio:lqd'?)"),
    # within the family only: nothing in nvme: is close, so the family's list
    ("nvme:least-latency", "unknown policy 'nvme:least-latency' (nvme policies: nvme:numa, nvme:round-robin, nvme:queue-depth, nvme:adaptive)"),
    ("bogus", "unknown policy 'bogus' (known: fixed, mru, rr, latency, p2c-ewma, guard, oracle; "),
    ("rr:iopz=1", "rr has no parameter 'iopz' (did you mean 'iops'? parameters: type, iops, bytes, use_ano)"),
    ("latency:num_sampling_cycle=16", "latency has no parameter 'num_sampling_cycle' (did you mean 'num_sampling_cycles'?"),
    ("rr:colour=1", "rr has no parameter 'colour' (parameters: type, iops, bytes, use_ano)"),
]


@pytest.mark.parametrize(("spec", "message"), SPEC_SUGGESTIONS)
def test_policy_misspellings_get_a_suggestion(spec, message):
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.simulate(policies=[spec])
    assert info.value.problem.startswith(message)


KEY_SUGGESTIONS = [
    # (what replaces 'one_way_latency = "50us"' in the first path, place, problem)
    ('one_way_latncy = "50us"', "paths[0].one_way_latncy", "unknown key 'one_way_latncy' (did you mean 'one_way_latency'?)"),
    ('one_way_latency = "50us"\nbandwith = "16Gbit"', "paths[0].bandwith", "unknown key 'bandwith' (did you mean 'bandwidth'?)"),
    ('one_way_latency = "50us"\ncolour = "red"', "paths[0].colour", "unknown key 'colour'"),
    ('one_way_latency = { dist = "exponentail", mean = "50us" }', "paths[0].one_way_latency", "got 'exponentail' (did you mean 'exponential'?)"),
    ('one_way_latency = "50us"\nalua = "stanby"', "paths[0].alua", "got 'stanby' (did you mean 'standby'?)"),
]


@pytest.mark.parametrize(("text", "place", "problem"), KEY_SUGGESTIONS)
def test_key_misspellings_get_a_suggestion(text, place, problem):
    toml = ONE_ARRAY.format(service_time='"100us"').replace('one_way_latency = "50us"', text)
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(toml)
    assert len(info.value.problems) == 1  # a misspelt required key is not also "missing"
    assert info.value.place == place
    assert info.value.problem.endswith(problem)


# -- every problem of a file, one located line each ----------------------------------------

MANY_KEY_PROBLEMS = """colour = "blue"
[[arrays]]
name = "a"
concurrency = 0
[[paths]]
name = "p0"
array = "a"
one_way_latncy = "50us"
[[paths]]
name = "p1"
array = "a"
one_way_latency = "-5us"
[[workloads]]
iodepth = "many"
"""

MANY_REFERENCE_PROBLEMS = """[[arrays]]
name = "a"
[[hosts]]
name = "h1"
[[paths]]
name = "p0"
host = "h1"
array = "b"
one_way_latency = "50us"
[[paths]]
name = "p{i}"
host = "h3"
count = 2
array = "a"
one_way_latency = "50us"
[[workloads]]
host = "h1"
[[faults]]
at = "1s"
what = "path_down"
path = "p9"
[[policies]]
spec = "latncy"
[[policies]]
spec = "fixed:preferred=p7"
"""


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        (
            MANY_KEY_PROBLEMS,
            [
                "my.toml: colour: unknown key 'colour'",
                "my.toml: arrays[0].concurrency: must be greater than or equal to 1, got 0",
                "my.toml: paths[0].one_way_latncy: unknown key 'one_way_latncy' (did you mean 'one_way_latency'?)",
                "my.toml: paths[1].one_way_latency: must be > 0",
                "my.toml: workloads[0].iodepth: must be a valid integer, got 'many'",
            ],
        ),
        (
            MANY_REFERENCE_PROBLEMS,
            [
                "my.toml: paths[0].array: no array named 'b' (arrays: a)",
                "my.toml: paths[1].host: no host named 'h3' (hosts: h1)",
                "my.toml: policies[0].spec: unknown policy 'latncy' (did you mean 'latency'?)",
                "my.toml: policies[1].spec: fixed: preferred path 'p7' is not a path of this scenario",
                "my.toml: faults[0].path: no path named 'p9' on host 'h1'",
            ],
        ),
    ],
    ids=["keys", "references"],
)
def test_every_problem_is_listed_in_file_order(text, lines, tmp_path, monkeypatch, capsys):
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(text, "my.toml")
    err = info.value
    assert err.lines() == lines
    assert str(err) == "\n".join(lines)
    assert (err.place, err.problem) == err.problems[0]  # the first, as a single problem reads
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my.toml").write_text(text)
    assert main(["simulate", "my.toml"]) == 2
    out, stderr = capsys.readouterr()
    assert out == ""
    assert stderr == "".join(f"pathsel: error: {line}\n" for line in lines)


def test_several_bad_policy_options_are_listed_together(capsys):
    assert main(["simulate", "--policy", "latncy", "--policy", "rr:iops=0"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "pathsel: error: command line: --policy 'latncy': unknown policy 'latncy' (did you mean 'latency'?)",
        "pathsel: error: command line: --policy 'rr:iops=0': iops must be in 1..2147483647, got 0",
    ]


def test_a_single_problem_reads_as_before_and_survives_pickling():
    import pickle

    err = pathsel.ScenarioError("my.toml", "paths[3].one_way_latency", "must be > 0")
    assert str(err) == "my.toml: paths[3].one_way_latency: must be > 0"
    assert err.problems == (("paths[3].one_way_latency", "must be > 0"),)
    several = pathsel.ScenarioError.several("my.toml", [("a", "x"), ("", "y")])
    back = pickle.loads(pickle.dumps(several))
    assert (back.source, back.problems, str(back)) == ("my.toml", (("a", "x"), ("", "y")), "my.toml: a: x\nmy.toml: y")


# -- what comes out: JSON keys, per-op rows, one time unit per table ------------------------

MIXED = ONE_ARRAY.format(service_time='{ read = "80us", write = "300us" }')


@pytest.fixture(scope="module")
def mixed():
    return pathsel.simulate(pathsel.loads_scenario(MIXED, "mixed.toml"), duration=0.05, policies=["rr:iops=1", "mru"])


def test_json_carries_the_version_and_per_path_iops_in_flight_and_p50(mixed):
    doc = json.loads(mixed.to_json())
    assert doc["pathsel_version"] == pathsel.__version__
    for run, r in zip(doc["runs"], mixed.runs):
        for row, p in zip(run["paths"], r.model.paths):
            assert set(row) >= {"name", "array", "alua", "ios", "share", "iops", "in_flight_mean", "latency_us"}
            assert set(row["latency_us"]) == {"mean", "p50", "p99"}
            assert row["iops"] == pytest.approx(row["ios"] / doc["duration_s"])
            assert row["in_flight_mean"] == pytest.approx(r.metrics.path_in_flight_area[p.index] / doc["duration_s"])
        # the paths' time-average I/Os in flight add up to the device's (every I/O in flight is on a path here)
        assert sum(p["in_flight_mean"] for p in run["paths"]) == pytest.approx(run["little"]["in_flight_mean"], rel=1e-6)
    df = mixed.paths()
    assert {"iops", "in_flight_mean", "p50_us"} <= set(df.columns)
    used = df[df.ios > 0]
    assert (used.p50_us <= used.p99_us).all()
    assert df[df.ios == 0][["mean_us", "p50_us", "p99_us"]].isna().all().all()  # an unused path has no latency


def test_a_mix_gets_a_read_and_a_write_row_per_policy(mixed):
    ops = mixed.ops()
    assert list(ops.columns) == ["policy", "op", "ios", "iops", "mbps", "mean_us", "p50_us", "p99_us", "p999_us", "max_us"]
    assert list(zip(ops.policy, ops.op)) == [("rr:iops=1", "read"), ("rr:iops=1", "write"), ("mru", "read"), ("mru", "write")]
    summary = mixed.summary().set_index("policy")
    for policy, rows in ops.groupby("policy"):
        assert rows.iops.sum() == pytest.approx(summary.loc[policy, "iops"])
    # writes wait for the slower service: their rows say so
    rr = ops[ops.policy == "rr:iops=1"].set_index("op")
    assert rr.loc["write", "mean_us"] > rr.loc["read", "mean_us"] + 200
    lines = mixed.table().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("rr:iops=1"))
    assert lines[i + 1].split()[:2] == ["read", f"{rr.loc['read', 'iops']:,.0f}"]
    assert lines[i + 2].split()[:2] == ["write", f"{rr.loc['write', 'iops']:,.0f}"]
    assert lines[i + 3].startswith("mru")
    from pathsel.results.report import render

    page = render(mixed, figures=[])
    start = page.index(">Comparison</h2>")  # the comparison table (the per-workload one has op rows too)
    runs = page[start : page.index("</table>", start)]
    assert runs.count('<span class="op">read</span>') == 2 and runs.count('<span class="op">write</span>') == 2


def test_reads_only_get_no_op_rows():
    text = MIXED.replace('rw = "randrw"\nrwmixread = 70', 'rw = "randread"')
    res = pathsel.simulate(pathsel.loads_scenario(text), duration=0.02)
    assert list(res.ops().op) == ["read"]
    assert not any(line.lstrip().startswith(("read", "write")) for line in res.table().splitlines())


def test_every_table_states_its_one_time_unit(mixed):
    for table in (mixed.table(), mixed.paths_table()):
        header = next(line for line in table.splitlines() if line.startswith("policy"))
        timed = [h for h in re.split(r"\s{2,}", header) if h.startswith(("mean", "p50", "p99", "max"))]
        assert timed and all(h.endswith("(ms)") for h in timed), header
        assert "_us" not in table


# -- issue 38: offered load at the limits: a rate in bytes per second is checked as IOPS, a run's arrivals summed ---

_OPEN_LOOP = """
duration = {duration}
[[arrays]]
name = "a"
[[paths]]
name = "p0"
array = "a"
one_way_latency = "50us"
[[workloads]]
name = "vm1"
{workload}
"""

# (the workload's keys, the duration, its rate_iops once loaded: None for a closed loop)
OFFERED = [
    ('rate = "8Tbit"\nbs = "1k"', '"0.1s"', 1e12 / 1024),  # 9.8e8 IOPS: under 1e9 once divided by bs
    ("rate_iops = 1e9", '"2s"', 1e9),  # 2e9 arrivals: the limit itself
    ("numjobs = 2000\nrate_iops = 1e5", '"10s"', 1e5),  # 2,000 copies: 2e9 arrivals
    ('rate_iops = 5\nrate_schedule = [{at = "8.1s", rate_iops = 1e9}]', '"10s"', 5.0),  # 1.9e9 + 40.5 arrivals
    ("numjobs = 4096", '"1e6s"', None),  # a closed loop offers nothing: its array paces it
]


@pytest.mark.parametrize(("workload", "duration", "rate_iops"), OFFERED, ids=[w.split("\n")[-1] for w, _, _ in OFFERED])
def test_offered_load_at_the_limits_loads(workload, duration, rate_iops):
    sc = pathsel.loads_scenario(_OPEN_LOOP.format(duration=duration, workload=workload))
    got = sc.model.workloads[0].rate_iops
    assert got == (pytest.approx(rate_iops) if rate_iops is not None else None)


@pytest.mark.parametrize(
    ("workload", "duration", "problem"),
    [
        ("numjobs = 2001\nrate_iops = 1e5", '"10s"', "the workloads offer 2.001e+09 I/Os over the 10s run"),
        ('rate = "8Tbit"\nbs = "999"', '"0.1s"', "is 1.001e+09 IOPS per job copy"),  # just past 1e9
        ('ramp_time = "1s"\nrate_iops = 2e8', '"9s"', "the workloads offer 2e+09 I/Os over the 10s run"),
    ],
)
def test_offered_load_just_past_the_limits_is_refused(workload, duration, problem):
    text = _OPEN_LOOP.format(duration=duration, workload=workload)
    if "ramp_time" in workload:  # exactly at the limit with its ramp: one more I/O per second is past it
        text = text.replace("2e8", "200000001")
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(text)
    assert problem in info.value.problem, info.value.problem
