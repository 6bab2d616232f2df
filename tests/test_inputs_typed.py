"""Inputs as people type them: fio's time suffixes, a number in quotes, multipath.conf's selector names.

* Durations take fio's time suffixes (fio HOWTO, "Parameter types", time: ``d``, ``h``, ``m`` minutes, ``s``,
  ``ms``/``msec``, ``us``/``usec``), on the command line, in ``pathsel.simulate(duration=...)`` and in every
  scenario key that holds a duration; ``ms`` stays milliseconds.
* A number written in quotes (``iodepth = "32"``) gets one located line that says to drop the quotes.
* ``--policy 'service-time 0'`` (multipath.conf's ``path_selector`` value) gets "did you mean 'dm:service-time'?".
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

import pathsel
from pathsel.api import duration_seconds
from pathsel.cli import arguments, main
from pathsel.policies.spec import SpecError, parse_spec
from pathsel.units import parse_duration, parse_seconds

from .conftest import ROOT

BASE = (ROOT / "tests" / "bad_inputs" / "iodepth_string.toml").read_text().replace('iodepth = "many"', "iodepth = 4")


# -- 1. fio's time suffixes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("10m", 600.0),
        ("10M", 600.0),  # fio: "units are not case sensitive"
        ("1.5m", 90.0),
        ("2min", 120.0),
        ("1h", 3600.0),
        ("1H", 3600.0),
        ("1hour", 3600.0),
        ("2d", 172800.0),
        ("1day", 86400.0),
        ("10 m", 600.0),  # a space between number and unit is read, as "10 ms" always was
        ("10ms", 0.01),  # ms stays milliseconds
        ("10MS", 0.01),
        ("10msec", 0.01),
        ("10us", 1e-5),
        ("10usec", 1e-5),
        ("30s", 30.0),
        ("30sec", 30.0),
    ],
)
def test_fio_time_suffixes(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds, rel=1e-12)
    assert parse_seconds(text) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("10mm", "'10mm': unknown time unit 'mm' (use ns, us, ms, s, m or min, h or d, as fio does)"),
        ("10 minutes", "unknown time unit 'minutes'"),
        ("1e400m", "'1e400m': must be finite"),
        ("nan s", "'nan s': must be finite"),
        ("inf m", "must be finite"),
        ("12d", "'12d' is more than the 1e6s (11.6 days) pathsel allows"),
        ("1e300m", "is more than the 1e6s"),  # finite, but not once made seconds
        ("1e-12m", "shorter than 1ns"),
    ],
)
def test_hostile_durations_are_one_sentence(text, fragment):
    with pytest.raises(ValueError) as info:
        parse_seconds(text)
    assert fragment in str(info.value)


def test_a_negative_minute_reaches_the_range_check():
    assert parse_seconds("-1m") == -60.0  # the caller refuses it: "must be > 0"
    with pytest.raises(argparse.ArgumentTypeError, match=r"must be > 0, got '-1m'"):
        arguments.duration("-1m")


def test_the_command_line_and_the_api_read_minutes():
    assert arguments.duration("10m") == 600.0
    assert arguments.duration("0.5h") == 1800.0
    assert duration_seconds("10m") == 600.0
    with pytest.raises(pathsel.ScenarioError, match="unknown time unit 'mm'"):
        duration_seconds("10mm")


@pytest.mark.parametrize("value", ["-1m", "10mm", "1e400m"])
def test_cli_refuses_bad_minutes_in_one_line(value, capsys):
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--duration", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pathsel: error: command line: argument --duration: ")


def test_cli_runs_with_a_duration_in_minutes(capsys):
    # 0.001m = 60 ms: a short run, read through the same path as --duration 10m
    assert main(["simulate", "sims/esxi-latency-testdrive.toml", "--duration", "0.001m", "--json", "-q", "--engine", "fast"]) == 0
    assert '"duration_s": 0.06' in capsys.readouterr().out


def test_scenario_keys_read_minutes_and_hours():
    sc = pathsel.loads_scenario('duration = "0.01m"\n' + BASE, "minutes.toml")
    assert sc.model.duration == pytest.approx(0.6)
    sc = pathsel.loads_scenario('duration = "0.0002h"\n' + BASE, "hours.toml")
    assert sc.model.duration == pytest.approx(0.72)


# -- 2. a number in quotes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "place", "problem"),
    [
        ('iodepth = "32"', "workloads[0].iodepth", "must be a valid integer, got '32': write 32 without quotes (TOML reads \"32\" as text)"),
        ('iodepth = " 32 "', "workloads[0].iodepth", "got ' 32 ': write 32 without quotes (TOML reads \" 32 \" as text)"),
        ('iodepth = "-3"', "workloads[0].iodepth", "write -3 without quotes"),
    ],
)
def test_a_quoted_integer_says_drop_the_quotes(written, place, problem, tmp_path, capsys):
    path = tmp_path / "quoted.toml"
    path.write_text(BASE.replace("iodepth = 4", written))
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario(path)
    assert info.value.place == place
    assert problem in info.value.problem
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"pathsel: error: {path}: {place}: ") and problem in err


def test_a_quoted_float_says_drop_the_quotes():
    text = BASE.replace("[replication]", '[[arrays]]\nname = "third"\nread_hit_ratio = "0.5"\n\n[replication]')
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(text, "q.toml")
    assert info.value.place == "arrays[2].read_hit_ratio"
    assert info.value.problem.endswith("got '0.5': write 0.5 without quotes (TOML reads \"0.5\" as text)")


@pytest.mark.parametrize(
    ("written", "also"),
    [
        ('iodepth = "0"', "; and it must be greater than or equal to 1, got 0"),  # unquoted, still out of range
        ('iodepth = "-3"', "; and it must be greater than or equal to 1, got -3"),
        ('iodepth = "32"', None),  # unquoted, it is fine: nothing more to say
    ],
)
def test_drop_the_quotes_also_says_what_the_number_still_breaks(written, also):
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(BASE.replace("iodepth = 4", written), "q.toml")
    problem = info.value.problem
    if also is None:
        assert problem.endswith("as text)")
    else:
        assert problem.endswith(also) and problem.count("without quotes") == 1


@pytest.mark.parametrize(
    ("written", "place", "problem"),
    [
        # rate_iops was read leniently: "5000" passed silently, "0" said both "drop the quotes" and the range twice
        (
            'rate_iops = "5000"',
            "workloads[0].rate_iops",
            "must be a valid number, got '5000': write 5000 without quotes (TOML reads \"5000\" as text)",
        ),
        ('rate_iops = "0"', "workloads[0].rate_iops", 'write 0 without quotes (TOML reads "0" as text); and it must be greater than 0, got 0'),
        ("rate_iops = 0", "workloads[0].rate_iops", "must be greater than 0, got 0"),
        ('rate_iops = 100\nreplay_time_scale = "200"', "workloads[0].replay_time_scale", 'write 200 without quotes (TOML reads "200" as text)'),
    ],
)
def test_every_number_field_refuses_quotes_alike(written, place, problem):
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(BASE.replace("iodepth = 4", "iodepth = 4\n" + written), "q.toml")
    assert info.value.place == place
    assert info.value.problem.endswith(problem) and info.value.problem.count("must be") <= 2


@pytest.mark.parametrize("written", ['iodepth = "many"', 'iodepth = "32k"', 'iodepth = "nan"', 'iodepth = "32.5"', 'iodepth = "inf"'])
def test_text_that_is_no_number_gets_no_quotes_hint(written):
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(BASE.replace("iodepth = 4", written), "q.toml")
    assert "without quotes" not in info.value.problem


def test_a_quoted_sweep_replications_says_drop_the_quotes():
    from pathsel.studies.sweep_plan import _sweep_table

    with pytest.raises(pathsel.ScenarioError, match=r"sweep.replications: must be a whole number >= 1, got '3': write 3 without quotes"):
        _sweep_table({"sweep": {"replications": "3"}}, "plan.toml")


# -- 3. multipath.conf's selector spellings -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "suggested"),
    [
        ("service-time 0", "dm:service-time"),
        ("service-time", "dm:service-time"),
        ("Service-Time 0", "dm:service-time"),
        ("round-robin 0", "dm:round-robin"),
        ("queue-length 0", "dm:queue-length"),
        ("historical-service-time 0", "dm:historical-service-time"),
        ("io-affinity 0", "dm:io-affinity"),
        ('path_selector "service-time 0"', "dm:service-time"),  # the multipath.conf line pasted whole
        ("service-tim 0", "dm:service-time"),
        ("service-time 0:failback=3", "dm:service-time"),
    ],
)
def test_multipath_conf_selectors_get_did_you_mean(text, suggested):
    with pytest.raises(SpecError) as info:
        parse_spec(text)
    message = str(info.value)
    assert f"(did you mean {suggested!r}? multipath.conf's path_selector" in message
    assert f"is pathsel's {suggested}" in message


def test_round_robin_names_nvme_too():
    with pytest.raises(SpecError, match=r"NVMe's native iopolicy round-robin is nvme:round-robin"):
        parse_spec("round-robin 0")


def test_the_dm_forms_are_taken_as_before():
    assert parse_spec("dm:service-time 0")[0].name == "dm:service-time"
    assert parse_spec("dm:round-robin")[0].name == "dm:round-robin"


@pytest.mark.parametrize("text", ["foo 0", "service-time 0 1", "servce-time"])
def test_other_words_get_the_usual_list(text):
    with pytest.raises(SpecError) as info:
        parse_spec(text)
    assert "multipath.conf" not in str(info.value)


def test_the_command_line_suggests_dm_service_time(capsys):
    assert main(["simulate", "--policy", "service-time 0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--policy 'service-time 0': unknown policy 'service-time 0' (did you mean 'dm:service-time'?" in err


def test_a_scenario_file_suggests_dm_service_time():
    text = BASE.replace('spec = "rr:iops=1"', 'spec = "service-time 0"')
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.loads_scenario(text, "dm.toml")
    assert info.value.place == "policies[0].spec"
    assert "did you mean 'dm:service-time'?" in info.value.problem


def test_fio_is_cited_for_the_suffixes():
    sources = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    assert "Parameter types" in sources and "'m' for minutes" in sources
    assert Path(ROOT / "docs" / "scenario-reference.md").read_text(encoding="utf-8").count("`m` (`min`)") == 1
