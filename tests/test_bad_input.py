"""Bad input gets one located message (``file: place: problem``), never a traceback.

Each file in ``tests/bad_inputs/`` is the same small valid scenario with exactly
one defect (named in its first line). The table says where the loader must
point and what it must say; every row is checked through the API and the CLI.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import pathsel
from pathsel.cli import main

from .conftest import ROOT

BAD = ROOT / "tests" / "bad_inputs"

# (file in tests/bad_inputs, expected place, fragment of the expected problem)
CASES = [
    ("unknown_top_key.toml", "colour", "unknown key 'colour'"),
    ("unknown_path_key.toml", "paths[1].latnecy", "unknown key 'latnecy'"),
    ("iodepth_string.toml", "workloads[0].iodepth", "must be a valid integer, got 'many'"),
    ("latency_no_unit.toml", "paths[1].one_way_latency", "50 has no unit"),
    ("latency_wrong_unit.toml", "paths[1].one_way_latency", "unknown time unit 'kb'"),
    ("latency_zero.toml", "paths[1].one_way_latency", "must be > 0"),
    ("latency_negative.toml", "paths[1].one_way_latency", "must be > 0"),
    (
        "unknown_dist.toml",
        "paths[1].one_way_latency",
        "dist must be one of constant, empirical, exponential, lognormal, mixture, normal, uniform, got 'gamma'",
    ),
    ("lognormal_p99_below_median.toml", "paths[1].one_way_latency", "lognormal: p99 must be above the median (median 1.2ms, p99 900us)"),
    ("normal_negative_stddev.toml", "paths[1].one_way_latency", "normal: stddev must be > 0, got -20us"),
    ("mixture_weight_zero.toml", "paths[1].one_way_latency", "mixture components[1]: weight must be > 0, got 0"),
    ("empirical_missing_file.toml", "paths[1].one_way_latency", f"empirical: no such file 'no-such-capture.txt' (looked for {BAD / 'no-such-capture.txt'})"),
    (
        "empirical_unknown_format.toml",
        "paths[1].one_way_latency",
        "empirical: format must be one of auto, plain, ping, sockperf, latte, got 'csv'",
    ),
    ("bandwidth_no_unit.toml", "paths[1].bandwidth", "'16' has no unit"),
    # issue 13: units as people write them, and their limits
    (
        "bandwidth_bytes_without_rate.toml",
        "paths[1].bandwidth",
        "'32GB' is an amount of data, not a rate: write \"32GB/s\" for bytes per second, or \"32Gb\" for bits per second",
    ),
    ("bandwidth_unknown_unit.toml", "paths[1].bandwidth", "'10Gbq': unknown link speed unit 'Gbq' (bits: Gbit, Gb, Gbps"),
    ("duration_too_long.toml", "duration", "'1e12s' is more than the 1e6s (11.6 days) pathsel allows: its clock counts seconds in float64"),
    ("duration_infinite.toml", "duration", "'inf s': must be finite"),
    ("service_time_negative.toml", "arrays[0].service_time", "must be >= 0"),
    # did you mean ...?
    ("required_key_misspelt.toml", "paths[1].one_way_latncy", "unknown key 'one_way_latncy' (did you mean 'one_way_latency'?)"),
    ("top_key_misspelt.toml", "polices", "unknown key 'polices' (did you mean 'policies'?)"),
    ("policy_name_misspelt.toml", "policies[0].spec", "unknown policy 'latncy' (did you mean 'latency'?)"),
    ("delay_key_misspelt.toml", "paths[1].one_way_latency", "unknown key 'meen' for an exponential distribution (did you mean 'mean'?)"),
    # issue 5: links, loss, detection, volumes and the fault timeline
    ("fault_negative_time.toml", "faults[0].at", "must be >= 0"),
    ("fault_unknown_link.toml", "faults[0].link", "no link named 'isl-9' (links: replication)"),
    ("path_unknown_link.toml", "paths[1].links[0]", "no link named 'hba2' (links: hba1)"),
    ("fault_latency_no_add.toml", "faults[0].add", "a latency step needs add"),
    ("fault_loss_ppm_over_million.toml", "faults[0].ppm", "must be less than or equal to 1000000, got 2000000"),
    ("fault_array_unknown.toml", "faults[0].array", "no array named 'middle' (arrays: local, remote)"),
    ("fault_path_and_link.toml", "faults[0].path", "loss needs exactly one of path or link"),
    ("workload_unknown_volume.toml", "workloads[0].volume", "no volume named 'logs' (volumes: db)"),
    ("host_detection_negative.toml", "hosts[0].detection", "must be >= 0"),
    ("loss_recovery_zero.toml", "paths[1].loss_recovery", "must be > 0"),
    ("path_unknown_array.toml", "paths[1].array", "no array named 'remot' (arrays: local, remote)"),
    ("workload_unknown_host.toml", "workloads[0].host", "no host named 'esxi02' (hosts: esxi01)"),
    ("empty_hosts.toml", "hosts", "must not be empty"),
    ("host_preferred_not_in_pair.toml", "hosts[0].preferred_array", "'middle' is not in the replication pair (local, remote)"),
    ("policy_preferred_not_in_pair.toml", "policies[0].preferred_array", "'middle' is not in the replication pair (local, remote)"),
    ("policy_spec_preferred_not_in_pair.toml", "policies[0].spec", "'middle' is not in the replication pair (local, remote)"),
    ("replication_unknown_array.toml", "replication.arrays[1]", "no array named 'remot' (arrays: local, remote)"),
    ("replication_same_array.toml", "replication.arrays", "names 'local' twice"),
    ("latency_sampling_cycles_8.toml", "policies[0].spec", "num_sampling_cycles must be in 16..2147483647, got 8"),
    ("latency_eval_time_1000.toml", "policies[0].spec", "latency_eval_time must be in 30000..2147483647, got 1000"),
    ("latency_cutoff_half.toml", "policies[0].spec", "cutoff must be in 1..100, got 0.5"),
    ("latency_variant_unknown.toml", "policies[0].spec", "variant must be one of min-set, score, lqd, got 'lq'"),
    ("rr_iops_0.toml", "policies[0].spec", "iops must be in 1..2147483647, got 0"),
    ("use_ano_2.toml", "policies[0].use_ano", "use_ano must be in 0..1, got 2"),
    ("unknown_policy.toml", "policies[0].spec", "unknown policy 'bogus' (known: fixed, mru, rr, latency, p2c-ewma; "),
    ("unknown_param_in_spec.toml", "policies[0].spec", "rr has no parameter 'iopz' (did you mean 'iops'? parameters: type, iops, bytes, use_ano)"),
    ("unknown_param_key.toml", "policies[0].iopz", "rr has no parameter 'iopz'"),
    ("policy_not_a_table.toml", "policies[0]", "must be a spec string such as \"rr:iops=1\" or a table with a spec key, got 5"),
    ("fixed_preferred_unknown.toml", "policies[0].spec", "preferred path 'p9' is not a path of this scenario"),
    ("hpp_fixed_preferred_unknown.toml", "policies[0].spec", "hpp:fixed: preferred path 'p9' is not a path of this scenario"),
    ("invalid_toml.toml", "line 27, column 12", "not valid TOML"),
    ("duplicate_path_names.toml", "paths[1].name", "duplicate path name 'p0' on host 'esxi01'"),
    ("count_without_i.toml", "paths[0].name", "count = 3 needs {i} in the name"),
    ("bs_split_over_100.toml", "workloads[0].bs", "bs split percentages add up to 120, more than 100"),
    ("rwmixread_150.toml", "workloads[0].rwmixread", "less than or equal to 100, got 150"),
    ("rwmixwrite_101.toml", "workloads[0].rwmixwrite", "less than or equal to 100, got 101"),
    (
        "rwmix_read_and_write_disagree.toml",
        "workloads[0]",
        "rwmixread = 70 and rwmixwrite = 40 add up to 110, not 100: give one of them, or two that add up to 100",
    ),
    ("rw_unknown.toml", "workloads[0].rw", "got 'randomread' (did you mean 'randread'?)"),
    ("ramp_time_negative.toml", "workloads[0].ramp_time", "must be >= 0"),
    ("seed_negative.toml", "seed", "greater than or equal to 0, got -1"),
    ("alua_fault_no_state.toml", "faults[0].state", "an alua change needs the new state"),
    ("fault_unknown_path.toml", "faults[0].path", "no path named 'p9' on host 'esxi01'"),
    ("missing_paths.toml", "paths", "required section is missing (add at least one [[paths]] table)"),
    ("not_utf8.toml", "line 2", "not UTF-8 text"),
    ("does_not_exist.toml", "", "no such file"),
    (".", "", "is a directory, not a scenario file"),  # tests/bad_inputs itself
]

IDS = [name.removesuffix(".toml") if name != "." else "directory" for name, _, _ in CASES]


def _prefix(path, place: str) -> str:
    return f"{path}: {place}: " if place else f"{path}: "


def test_every_bad_input_file_has_a_row():
    files = {p.name for p in BAD.glob("*.toml")}
    rows = {name for name, _, _ in CASES}
    assert files - rows == set(), "bad input files without a row in CASES"
    assert len(files) >= 20


@pytest.mark.parametrize(("name", "place", "fragment"), CASES, ids=IDS)
def test_load_scenario_locates_the_problem(name, place, fragment):
    path = BAD / name
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario(path)
    err = info.value
    assert err.place == place
    assert fragment in err.problem
    assert err.source == str(path)
    assert str(err).startswith(_prefix(path, place))
    assert "\n" not in str(err)
    assert "more problem" not in err.problem  # one defect, one problem


@pytest.mark.parametrize(("name", "place", "fragment"), CASES, ids=IDS)
def test_cli_prints_one_line_and_exits_2(name, place, fragment, capsys):
    path = BAD / name
    assert main(["simulate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("pathsel: error: " + _prefix(path, place))
    assert fragment in err


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pathsel.cli", "simulate", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def _assert_one_clean_line(proc: subprocess.CompletedProcess, start: str, fragment: str) -> None:
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(start)
    assert fragment in proc.stderr


@pytest.mark.parametrize(
    ("name", "place", "fragment"),
    [c for c in CASES if c[0] in ("latency_no_unit.toml", "invalid_toml.toml", "use_ano_2.toml", "does_not_exist.toml")],
)
def test_cli_subprocess_exit_status_and_no_traceback(name, place, fragment):
    path = BAD / name
    _assert_one_clean_line(_run_cli(str(path)), "pathsel: error: " + _prefix(path, place), fragment)


ARG_CASES = [
    (["--duration", "0s"], "argument --duration: must be > 0"),
    # "-1s" looks like an option to argparse: it must still reach the duration check
    (["--duration", "-1s"], "argument --duration: must be > 0, got '-1s'"),
    (["--duration", "-1"], "argument --duration: must be > 0, got '-1'"),
    (["--duration", "inf"], "argument --duration: must be finite, got 'inf'"),
    (["--duration", "nan"], "argument --duration: must be finite, got 'nan'"),
    (["--duration", "1e12s"], "argument --duration: '1e12s' is more than the 1e6s (11.6 days) pathsel allows"),
    (["--duration", "1e12"], "argument --duration: '1e12' is more than the 1e6s (11.6 days) pathsel allows"),
    (["--duration", "10 furlongs"], "argument --duration: '10 furlongs': unknown time unit 'furlongs'"),
    (["--seed", "-1"], "argument --seed: must be >= 0"),
    (["--policy", "bogus"], "--policy 'bogus': unknown policy 'bogus'"),
    (["--policy", "latncy"], "--policy 'latncy': unknown policy 'latncy' (did you mean 'latency'?)"),
    (["--policy", "rr:iop=3"], "--policy 'rr:iop=3': rr has no parameter 'iop' (did you mean 'iops'? parameters: type, iops, bytes, use_ano)"),
    (
        ["--policy", "latency:num_sampling_cycles=8"],
        "--policy 'latency:num_sampling_cycles=8': num_sampling_cycles must be in 16..2147483647, got 8",
    ),
]


@pytest.mark.parametrize(("args", "fragment"), ARG_CASES, ids=[" ".join(a) for a, _ in ARG_CASES])
def test_cli_argument_errors(args, fragment):
    _assert_one_clean_line(_run_cli("sims/esxi-latency-testdrive.toml", *args), "pathsel: error: command line: ", fragment)


def test_unreadable_file(tmp_path, monkeypatch, capsys):
    path = tmp_path / "secret.toml"
    path.write_text((BAD / "latency_zero.toml").read_text())

    def denied(self, *args, **kwargs):  # chmod 000 does not stop root, so refuse the read here
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(type(path), "read_text", denied)
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario(path)
    assert (info.value.place, info.value.problem) == ("", "cannot read: Permission denied")
    assert str(info.value) == f"{path}: cannot read: Permission denied"
    assert main(["simulate", str(path)]) == 2
    assert capsys.readouterr().err == f"pathsel: error: {path}: cannot read: Permission denied\n"


@pytest.mark.parametrize("command", ["simulate", "report", "sweep"])
@pytest.mark.parametrize(
    ("value", "fragment"),
    [("-1s", "must be > 0, got '-1s'"), ("nan", "must be finite, got 'nan'"), ("1e12s", "is more than the 1e6s")],
)
def test_every_duration_option_refuses_alike(command, value, fragment, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--duration", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("pathsel: error: command line: argument --duration: ")
    assert fragment in err
