"""Delay distributions: each reproduces its input quantiles, draws deterministically, and refuses bad input clearly.

Quantile checks draw 200,000 values with a fixed seed through ``sample_block``
(the only way the engines draw) and compare p50, p90 and p99 with
``quantile()`` and with the figures the user gave, within 5 %.
"""

from __future__ import annotations

import math
import pickle
import re
import statistics
import tomllib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pathsel
from pathsel.stats import norm_ppf
from pathsel.timing.distributions import (
    DELAY_KINDS,
    INPUT_QUANTILES,
    Constant,
    Empirical,
    Exponential,
    LogNormal,
    Mixture,
    Normal,
    Uniform,
    delay_base_dir,
    delay_files_relative_to,
    parse_delay,
)

from .conftest import ROOT

DATA = ROOT / "tests" / "data"
SIMS_DATA = ROOT / "sims" / "data"
N = 200_000
SEED = 20240611
QS = (0.5, 0.9, 0.99)
us = 1e-6

TWO_MODES = {  # seed 003: two-way delays with modes near 70 us and 210 us
    "dist": "mixture",
    "components": [
        {"weight": 0.8, "dist": "normal", "mean": "70us", "stddev": "5us"},
        {"weight": 0.2, "dist": "normal", "mean": "210us", "stddev": "10us"},
    ],
}

# id -> (delay as written in a scenario, the figures the user gave {q: seconds}; None: check against quantile() only)
CASES = {
    "constant": ("50us", {0.5: 50 * us, 0.99: 50 * us}),
    "exponential": ({"dist": "exponential", "mean": "100us"}, {0.5: 100 * us * math.log(2)}),
    "uniform": ({"dist": "uniform", "low": "40us", "high": "60us"}, {0.5: 50 * us, 0.9: 58 * us}),
    # truncation moves the median by 0.5 * P(N < 0) in probability: 100us + 20us * z(0.5 + cdf(-5) / 2)
    "normal": (
        {"dist": "normal", "mean": "100us", "stddev": "20us"},
        {0.5: 100 * us + 20 * us * statistics.NormalDist().inv_cdf(0.5 + statistics.NormalDist().cdf(-5.0) / 2)},
    ),
    # mean 20us, stddev 40us: 31 % of the untruncated normal lies below 0, so truncation matters
    "normal-truncated": ({"dist": "normal", "mean": "20us", "stddev": "40us"}, None),
    "lognormal": ({"dist": "lognormal", "median": "120us", "p99": "900us"}, {0.5: 120 * us, 0.99: 900 * us}),
    "lognormal-shifted": (
        {"dist": "lognormal", "shift": "50us", "median": "120us", "p99": "900us"},
        {0.5: 120 * us, 0.99: 900 * us},
    ),
    "lognormal-moments": ({"dist": "lognormal", "mean": "1.4ms", "stddev": "0.2ms", "shift": "1ms"}, None),
    "mixture": (TWO_MODES, None),
    "empirical-ping": ({"dist": "empirical", "file": str(SIMS_DATA / "ping-cross-az.txt"), "scale": 0.5}, None),
    "empirical-sockperf": ({"dist": "empirical", "file": str(DATA / "sockperf.txt")}, None),
    "empirical-plain": ({"dist": "empirical", "file": str(DATA / "plain-units.txt")}, None),
}


def _draw(dist, n: int = N, seed: int = SEED) -> np.ndarray:
    return dist.sample_block(np.random.default_rng(seed), n)


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# -- the normal quantile (scipy) ------------------------------------------------------


def test_normal_quantile_matches_the_standard_library():
    p = np.concatenate([np.linspace(1e-9, 1 - 1e-9, 20_001), [1e-300, 1e-30, 0.075, 0.925, 0.5 - 0.425, 0.5 + 0.425]])
    expected = np.array([statistics.NormalDist().inv_cdf(x) for x in p])
    assert np.max(np.abs(norm_ppf(p) - expected)) < 1e-13
    assert list(norm_ppf(np.array([0.0, 1.0]))) == [-math.inf, math.inf]


# -- every distribution reproduces its quantiles ---------------------------------------


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_draws_reproduce_quantiles_within_5_percent(case):
    value, given = CASES[case]
    dist = parse_delay(value)
    x = _draw(dist)
    assert x.dtype == np.float64 and x.shape == (N,)
    assert x.min() >= 0.0
    for q in QS:
        assert _rel(float(np.quantile(x, q)), dist.quantile(q)) < 0.05, (case, q)
    for q, figure in (given or {}).items():
        assert _rel(dist.quantile(q), figure) < 1e-9, (case, q)  # the model holds the figure itself...
        assert _rel(float(np.quantile(x, q)), figure) < 0.05, (case, q)  # ...and so do the draws


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_mean_and_variance_match_the_draws(case):
    dist = parse_delay(CASES[case][0])
    x = _draw(dist)
    assert _rel(float(x.mean()), dist.mean) < 0.01
    if dist.variance > 0:
        assert _rel(float(x.std()), math.sqrt(dist.variance)) < 0.03
    else:
        assert np.all(x == x[0])


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_cdf_and_quantile_are_inverses(case):
    dist = parse_delay(CASES[case][0])
    for q in (0.01, 0.3, 0.5, 0.9, 0.99, 0.999):
        x = dist.quantile(q)
        # the generalised inverse: F(Q(q)) >= q, and F is below q just left of Q(q)
        assert dist.cdf(x) >= q - 1e-9
        assert dist.cdf(x * (1 - 1e-9)) <= q + 1e-9
        if case not in ("constant", "empirical-ping"):  # no atoms, no tied samples: exact inverses
            assert dist.cdf(x) == pytest.approx(q, abs=1e-9)


def test_input_quantiles_report_what_the_user_gave():
    lognormal = parse_delay({"dist": "lognormal", "shift": "50us", "median": "120us", "p99": "900us"})
    reported = lognormal.input_quantiles()
    assert list(reported) == ["p50", "p90", "p99", "p99.9"]
    assert reported["p50"] == pytest.approx(120 * us, rel=1e-12)
    assert reported["p99"] == pytest.approx(900 * us, rel=1e-12)
    assert 120 * us < reported["p90"] < 900 * us < reported["p99.9"]

    ping = parse_delay({"dist": "empirical", "file": str(DATA / "ping-linux.txt")})
    raw = [1.06, 1.31, 1.12, 1.98, 1.26, 1.18, 1.40, 1.22, 1.57]  # the replies; the DUP is not one
    expected = np.quantile(np.array(raw) * 1e-3, list(INPUT_QUANTILES.values()))
    assert list(ping.input_quantiles().values()) == pytest.approx(list(expected), rel=1e-12)

    sockperf = parse_delay({"dist": "empirical", "file": str(DATA / "sockperf.txt")}).input_quantiles()
    assert sockperf == pytest.approx({"p50": 33.555 * us, "p90": 38.947 * us, "p99": 49.918 * us, "p99.9": 71.036 * us})


def test_normal_reports_the_truncated_mean():
    d = parse_delay({"dist": "normal", "mean": "20us", "stddev": "40us"})
    # E[X | X > 0] for N(20, 40²): mu + sigma * pdf(a) / (1 - cdf(a)), a = -0.5
    a = -0.5
    pdf = math.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    expected = 20 * us + 40 * us * pdf / (1 - statistics.NormalDist().cdf(a))
    assert d.mean == pytest.approx(expected, rel=1e-12)
    assert d.mean > 40 * us  # well above the untruncated mean
    assert d.quantile(1e-12) >= 0.0


def test_lognormal_from_mean_and_stddev_keeps_them():
    d = parse_delay({"dist": "lognormal", "mean": "1.4ms", "stddev": "0.2ms", "shift": "1ms"})
    assert d.mean == pytest.approx(1.4e-3, rel=1e-12)
    assert math.sqrt(d.variance) == pytest.approx(0.2e-3, rel=1e-12)
    assert d.quantile(1e-9) > 1e-3  # never below the shift


def test_mixture_shows_both_modes():
    dist = parse_delay(TWO_MODES)
    x = _draw(dist)
    low, gap, high = (x < 100 * us).mean(), ((x > 110 * us) & (x < 170 * us)).mean(), (x > 180 * us).mean()
    assert low == pytest.approx(0.8, abs=0.005)
    assert high == pytest.approx(0.2, abs=0.005)
    assert gap < 1e-4  # nothing between the modes
    assert np.median(x[x < 140 * us]) == pytest.approx(70 * us, rel=0.01)
    assert np.median(x[x > 140 * us]) == pytest.approx(210 * us, rel=0.01)
    # p50 is the low mode's 62.5th percentile; p99 the high mode's 95th
    nd = statistics.NormalDist()
    assert dist.quantile(0.5) == pytest.approx(70 * us + 5 * us * nd.inv_cdf(0.5 / 0.8), rel=1e-9)
    assert dist.quantile(0.99) == pytest.approx(210 * us + 10 * us * nd.inv_cdf(0.95), rel=1e-6)
    assert _rel(float(np.quantile(x, 0.5)), dist.quantile(0.5)) < 0.05
    assert _rel(float(np.quantile(x, 0.99)), dist.quantile(0.99)) < 0.05


def test_mixture_weights_are_normalised():
    a = parse_delay(
        {"dist": "mixture", "components": [{"weight": 4, "dist": "constant", "value": "70us"}, {"weight": 1, "dist": "constant", "value": "210us"}]}
    )
    assert a.weights == (0.8, 0.2)
    x = _draw(a, 100_000)
    assert set(np.unique(x)) == {70 * us, 210 * us}
    assert (x == 70 * us).mean() == pytest.approx(0.8, abs=0.005)
    assert a.quantile(0.79) == pytest.approx(70 * us) and a.quantile(0.81) == pytest.approx(210 * us)


# -- drawing: the engines' contract ---------------------------------------------------------


@pytest.mark.parametrize("dist", [Exponential(100 * us), Uniform(40 * us, 60 * us), Uniform(50 * us, 50 * us)], ids=repr)
def test_block_is_the_same_as_repeated_single_draws(dist):
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    block = dist.sample_block(a, 10_000)
    singles = np.array([dist.sample(b) for _ in range(10_000)])
    assert np.array_equal(block, singles)
    assert a.random() == b.random()  # and both left the stream in the same place


def test_blocks_of_the_existing_kinds_are_numpys_own_draws():
    assert np.array_equal(Exponential(3 * us).sample_block(np.random.default_rng(1), 5), np.random.default_rng(1).exponential(3 * us, 5))
    assert np.array_equal(Uniform(1 * us, 2 * us).sample_block(np.random.default_rng(1), 5), np.random.default_rng(1).uniform(1 * us, 2 * us, 5))


def test_constant_draws_nothing():
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert np.array_equal(Constant(50 * us).sample_block(rng, 1000), np.full(1000, 50 * us))
    assert rng.bit_generator.state == state


@pytest.mark.parametrize("case", [c for c in CASES if c not in ("constant", "exponential", "uniform")])
def test_inverse_cdf_kinds_give_draw_k_whatever_the_block_size(case):
    dist = parse_delay(CASES[case][0])
    whole = dist.sample_block(np.random.default_rng(11), 1000)
    rng = np.random.default_rng(11)
    pieces = np.concatenate([dist.sample_block(rng, 1), dist.sample_block(rng, 99), dist.sample_block(rng, 900)])
    assert np.array_equal(whole, pieces)
    rng = np.random.default_rng(11)
    assert [dist.sample(rng) for _ in range(5)] == list(whole[:5])


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_same_seed_same_block(case):
    dist = parse_delay(CASES[case][0])
    a, b = _draw(dist, 5000, seed=5), _draw(dist, 5000, seed=5)
    assert np.array_equal(a, b)
    if not dist.is_constant:
        assert not np.array_equal(a, _draw(dist, 5000, seed=6))


def test_empty_block_and_bad_arguments():
    assert parse_delay(TWO_MODES).sample_block(np.random.default_rng(0), 0).shape == (0,)
    with pytest.raises(ValueError, match=r"sample_block: n must be an integer >= 0, got -1"):
        Normal(1e-4, 1e-5).sample_block(np.random.default_rng(0), -1)
    with pytest.raises(ValueError, match=r"quantile: q must be between 0 and 1 \(exclusive\), got 1.0"):
        Exponential(1e-4).quantile(1.0)


# -- the scenario-file form: what is accepted ---------------------------------------------------


def test_kinds_and_descriptions():
    assert DELAY_KINDS == ("constant", "empirical", "exponential", "lognormal", "mixture", "normal", "uniform")
    assert parse_delay({"dist": "normal", "mean": "100us", "stddev": "20us"}).describe() == ("normal(mean 100us, stddev 20us, truncated at 0)")
    assert parse_delay({"dist": "lognormal", "median": "120us", "p99": "900us"}).describe() == ("lognormal(median 120us, p99 900us)")
    assert parse_delay({"dist": "lognormal", "shift": "50us", "median": "120us", "p99": "900us"}).describe() == (
        "lognormal(shift 50us, median 120us, p99 900us)"
    )
    assert parse_delay(TWO_MODES).describe() == (
        "mixture(80% normal(mean 70us, stddev 5us, truncated at 0), 20% normal(mean 210us, stddev 10us, truncated at 0))"
    )
    ping = parse_delay({"dist": "empirical", "file": str(DATA / "ping-linux.txt")})
    assert ping.describe() == "empirical(ping-linux.txt: 9 ping round trips, median 1.26ms, p99 1.9472ms)"


def test_parsed_values_are_the_classes():
    assert parse_delay({"dist": "lognormal", "median": "1ms", "p99": "2ms"}) == LogNormal.from_median_p99(1e-3, 2e-3)
    assert isinstance(parse_delay(TWO_MODES), Mixture)
    d = parse_delay({"dist": "normal", "mean": "1ms", "stddev": "0.1ms"})
    assert d == Normal(1e-3, 1e-4) and parse_delay(d) is d
    e1 = parse_delay({"dist": "empirical", "file": str(DATA / "sockperf.txt")})
    e2 = parse_delay({"dist": "empirical", "file": str(DATA / "sockperf.txt")})
    assert e1 == e2 and hash(e1) == hash(e2) and isinstance(e1, Empirical)
    assert not e1.values.flags.writeable
    copy = pickle.loads(pickle.dumps(e1))  # runs may cross process boundaries
    assert copy == e1 and not copy.values.flags.writeable
    half = parse_delay({"dist": "empirical", "file": str(DATA / "ping-linux.txt"), "scale": 0.5})
    assert half.describe() == "empirical(ping-linux.txt: 9 ping round trips x 0.5, median 630us, p99 973.6us)"


def test_zero_rule_still_means_something():
    # a path leg (allow_zero=False) may not be zero on average; a service time may
    zeros = {"dist": "mixture", "components": [{"weight": 1, "dist": "constant", "value": "0us"}]}
    with pytest.raises(ValueError, match=r"^must be > 0$"):
        parse_delay(zeros)
    assert parse_delay(zeros, allow_zero=True).mean == 0.0
    # a mixture may hold a zero part as long as the delay is not all zero
    some = {
        "dist": "mixture",
        "components": [{"weight": 1, "dist": "constant", "value": "0us"}, {"weight": 1, "dist": "exponential", "mean": "10us"}],
    }
    assert parse_delay(some).mean == pytest.approx(5 * us)


# -- the scenario-file form: what is refused ------------------------------------------------------

_LN = {"dist": "lognormal"}
_N = {"dist": "normal"}

# (delay, the whole message)
ERRORS = [
    ({**_LN, "median": "120us", "p99": "100us"}, "lognormal: p99 must be above the median (median 120us, p99 100us)"),
    ({**_LN, "median": "120us", "p99": "120us"}, "lognormal: p99 must be above the median (median 120us, p99 120us)"),
    ({**_LN, "shift": "200us", "median": "120us", "p99": "900us"}, "lognormal: median must be above the shift (median 120us, shift 200us)"),
    ({**_LN, "median": "120us"}, "a lognormal distribution needs 'p99' (give median and p99, or mean and stddev)"),
    ({**_LN, "shift": "10us"}, "a lognormal distribution needs median and p99 (or mean and stddev)"),
    ({**_LN, "median": "1ms", "p99": "2ms", "stddev": "1ms"}, "lognormal: give median and p99, or mean and stddev, not both"),
    ({**_LN, "mean": "1ms", "stddev": "-1ms"}, "lognormal: stddev must be > 0, got -1ms"),
    ({**_LN, "median": "1ms", "p99": "2ms", "p90": "1.5ms"}, "unknown key 'p90' for a lognormal distribution"),
    ({**_N, "mean": "100us", "stddev": "-20us"}, "normal: stddev must be > 0, got -20us"),
    ({**_N, "mean": "100us", "stddev": "0us"}, "normal: stddev must be > 0, got 0us"),
    ({**_N, "mean": "-5us", "stddev": "20us"}, "normal: mean must be > 0, got -5us"),
    ({**_N, "mean": "100us"}, "a normal distribution needs 'stddev'"),
    ({**_N, "mean": "100us", "sdev": "20us"}, "unknown key 'sdev' for a normal distribution (did you mean 'stddev'?)"),
    ({**_N, "mean": 100, "stddev": "20us"}, '100 has no unit (write it like "100us", "100ms" or "100s")'),
    ({"dist": "gamma", "mean": "1ms"}, "dist must be one of constant, empirical, exponential, lognormal, mixture, normal, uniform, got 'gamma'"),
    ({"dist": ["normal"]}, "dist must be one of constant, empirical, exponential, lognormal, mixture, normal, uniform, got ['normal']"),
    ({"dist": "mixture", "components": [{"weight": 0, "dist": "constant", "value": "1ms"}]}, "mixture components[0]: weight must be > 0, got 0"),
    (
        {"dist": "mixture", "components": [{"weight": 1, "dist": "constant", "value": "1ms"}, {"weight": -0.5, "dist": "constant", "value": "2ms"}]},
        "mixture components[1]: weight must be > 0, got -0.5",
    ),
    (
        {"dist": "mixture", "components": [{"weight": True, "dist": "constant", "value": "1ms"}]},
        "mixture components[0]: weight must be a finite number, got True",
    ),
    ({"dist": "mixture", "components": [{"dist": "constant", "value": "1ms"}]}, "mixture components[0] needs 'weight'"),
    ({"dist": "mixture", "components": []}, "mixture: components must be a non-empty list of tables such as {weight = 0.8, dist = ...}"),
    (
        {"dist": "mixture", "components": ["70us"]},
        'mixture components[0]: must be a table such as {weight = 0.8, dist = "normal", mean = ..., stddev = ...}',
    ),
    (
        {"dist": "mixture", "components": [{"weight": 1, "dist": "mixture", "components": []}]},
        "mixture components[0]: a component cannot itself be a mixture (list its parts in this one)",
    ),
    (
        {"dist": "mixture", "components": [{"weight": 1, "dist": "normal", "mean": "70us", "stdev": "5us"}]},
        "mixture components[0]: unknown key 'stdev' for a normal distribution (did you mean 'stddev'?)",
    ),
    (
        {"dist": "mixture", "components": [{"weight": 1, "value": "70us"}]},
        "mixture components[0] needs dist (constant, empirical, exponential, lognormal, normal, uniform)",
    ),
    (
        {"dist": "empirical", "file": str(DATA / "ping-linux.txt"), "format": "csv"},
        "empirical: format must be one of auto, plain, ping, sockperf, latte, fio, got 'csv'",
    ),
    (
        {"dist": "empirical", "file": str(DATA / "ping-linux.txt"), "scale": 0},
        "empirical: scale must be a number > 0 (0.5 turns round trips into one way), got 0",
    ),
    (
        {"dist": "empirical", "file": str(DATA / "ping-linux.txt"), "unit": "furlongs"},
        "empirical: unit must be a time unit (ns, us, ms or s), got 'furlongs'",
    ),
    (
        {"dist": "empirical", "file": str(DATA / "ping-linux.txt"), "unit": "us"},
        "empirical: unit applies to plain files only (ping output says its own units)",
    ),
    ({"dist": "empirical", "file": str(DATA / "ping-linux.txt"), "skip": 3}, "unknown key 'skip' for an empirical distribution"),
    ({"dist": "empirical"}, "an empirical distribution needs 'file'"),
    ({"dist": "empirical", "file": ""}, "empirical: file must be a file name such as \"data/ping.txt\", got ''"),
    ({"dist": "empirical", "file": str(DATA / "empty.txt")}, f"empirical: {str(DATA / 'empty.txt')!r} is empty"),
    ({"dist": "empirical", "file": str(DATA)}, f"empirical: {str(DATA)!r} is a directory, not a file of samples"),
    (
        {"dist": "empirical", "file": str(DATA / "sockperf.txt"), "format": "ping"},
        f"empirical: {str(DATA / 'sockperf.txt')!r} holds no ping replies (lines such as '64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=0.213 ms')",
    ),
    (
        {"dist": "empirical", "file": str(DATA / "ping-linux.txt"), "format": "latte"},
        f"empirical: {str(DATA / 'ping-linux.txt')!r} holds no latte result (a line such as 'Latency(usec) 2026.40')",
    ),
    (
        {"dist": "empirical", "file": str(DATA / "latte.txt"), "format": "sockperf"},
        f"empirical: {str(DATA / 'latte.txt')!r} holds no sockperf percentile table (lines such as '---> percentile 99.000 = 48.123')",
    ),
    (
        {"dist": "empirical", "file": str(DATA / "ping-windows.txt")},
        f"empirical: {str(DATA / 'ping-windows.txt')!r} line 4: 'time<1ms' is below ping's resolution "
        "(Windows ping counts whole milliseconds); measure with sockperf, latte or Linux ping",
    ),
    (
        {"dist": "empirical", "file": str(DATA / "plain-bare.txt")},
        f"empirical: {str(DATA / 'plain-bare.txt')!r} line 2: '70' has no unit (write 70us, or give unit = \"us\")",
    ),
    (
        {"dist": "empirical", "file": str(DATA / "not-a-capture.txt")},
        f"empirical: {str(DATA / 'not-a-capture.txt')!r} is not ping, sockperf or latte output, and as plain numbers "
        "not readable: line 1: 'iperf3 -c 10.2.0.12' is not a duration (plain format: one number per line, such as 120us)",
    ),
]


@pytest.mark.parametrize(("value", "message"), ERRORS, ids=[m[:60] for _, m in ERRORS])
def test_bad_delays_get_one_precise_message(value, message):
    with pytest.raises(ValueError) as info:
        parse_delay(value)
    assert str(info.value) == message
    assert "\n" not in str(info.value)


def test_missing_file_names_the_file_and_where_it_looked(tmp_path):
    with pytest.raises(ValueError) as info:
        parse_delay({"dist": "empirical", "file": "captures/ping.txt"}, base_dir=tmp_path)
    assert str(info.value) == (f"empirical: no such file 'captures/ping.txt' (looked for {tmp_path / 'captures' / 'ping.txt'})")


def test_unreadable_file(tmp_path, monkeypatch):
    path = tmp_path / "ping.txt"
    path.write_text("64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=0.213 ms\n")

    def denied(self, *args, **kwargs):  # chmod 000 does not stop root, so refuse the read here
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(type(path), "open", denied)
    with pytest.raises(ValueError, match=r"^empirical: cannot read 'ping.txt': Permission denied$"):
        parse_delay({"dist": "empirical", "file": "ping.txt"}, base_dir=tmp_path)


def test_binary_file_is_refused(tmp_path):
    (tmp_path / "capture.pcap").write_bytes(b"70us\n\xd4\xc3\xb2\xa1\x02\x00")
    with pytest.raises(ValueError, match=r"^empirical: 'capture.pcap' is not text \(line 2, byte 0xd4\)$"):
        parse_delay({"dist": "empirical", "file": "capture.pcap"}, base_dir=tmp_path)


def test_negative_sample_is_refused(tmp_path):
    (tmp_path / "d.txt").write_text("70us\n-3us\n")
    with pytest.raises(ValueError, match=r"^empirical: 'd.txt' has a negative delay \(-3us\)$"):
        parse_delay({"dist": "empirical", "file": "d.txt"}, base_dir=tmp_path)


# -- the file formats -------------------------------------------------------------------------


def _file(name: str, **keys) -> Empirical:
    return parse_delay({"dist": "empirical", "file": str(DATA / name), **keys})


def test_ping_replies_are_round_trips_in_ms():
    d = _file("ping-linux.txt")
    assert d.count == 9 and d.what == "ping round trips"  # the DUP! and the unreachable line are not replies
    assert list(d.values) == pytest.approx(sorted(np.array([1.06, 1.31, 1.12, 1.98, 1.26, 1.18, 1.40, 1.22, 1.57]) * 1e-3))
    half = _file("ping-linux.txt", scale=0.5, format="ping")
    assert list(half.values) == pytest.approx(list(d.values * 0.5))
    assert half.mean == pytest.approx(d.mean / 2)


def test_sockperf_percentile_table_is_interpolated():
    d = _file("sockperf.txt")
    assert d.count == 861906 and d.what == "sockperf observations"
    assert list(d.probs) == pytest.approx([0.0, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 0.99999, 1.0], abs=1e-15)
    assert list(d.values * 1e6) == pytest.approx([26.371, 31.978, 33.555, 35.740, 38.947, 49.918, 71.036, 152.128, 412.770, 893.446])
    assert d.quantile(0.6) == pytest.approx((33.555 + 0.4 * (35.740 - 33.555)) * us)  # linear between points
    x = _draw(d)
    assert x.min() >= 26.371 * us and x.max() <= 893.446 * us
    assert (x > 49.918 * us).mean() == pytest.approx(0.01, abs=0.001)


def test_sockperf_full_log_gives_one_sample_per_packet():
    d = _file("sockperf-full-log.csv")
    assert d.count == 6 and d.what == "sockperf packets"
    assert sorted(d.values * 1e6) == pytest.approx(sorted([34.422, 33.956, 32.235, 35.901, 49.918, 31.978]))


def test_latte_gives_one_sample_per_run():
    d = _file("latte.txt")
    assert d.count == 3 and d.what == "latte runs"
    assert list(d.values) == pytest.approx([1546.00 * us, 1840.29 * us, 2026.40 * us])


def test_plain_numbers_with_and_without_units():
    d = _file("plain-units.txt")
    assert list(d.values) == pytest.approx([68.5 * us, 70 * us, 71 * us, 72 * us, 210 * us])
    bare = _file("plain-bare.txt", unit="us", format="plain")
    assert list(bare.values) == pytest.approx(list(d.values))
    assert list(_file("plain-bare.txt", unit="ms").values) == pytest.approx(list(d.values * 1000))


def test_one_sample_is_a_constant(tmp_path):
    (tmp_path / "one.txt").write_text("Latency(usec) 61.09\n")
    d = parse_delay({"dist": "empirical", "file": "one.txt"}, base_dir=tmp_path)
    assert d.is_constant and d.mean == pytest.approx(61.09 * us)
    assert np.all(_draw(d, 100) == pytest.approx(61.09 * us))


def test_utf16_capture_from_powershell(tmp_path):
    text = (DATA / "latte.txt").read_text()
    (tmp_path / "latte-utf16.txt").write_bytes(text.encode("utf-16"))  # what PowerShell's '>' writes
    d = parse_delay({"dist": "empirical", "file": "latte-utf16.txt"}, base_dir=tmp_path)
    assert d == Empirical.from_samples(_file("latte.txt").values, str(tmp_path / "latte-utf16.txt"), "latte runs")


# -- where relative files are found ---------------------------------------------------------------


def test_relative_files_resolve_against_base_dir_then_contextvar_then_cwd(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "d.txt").write_text("10us\n")
    (tmp_path / "b" / "d.txt").write_text("20us\n")
    value = {"dist": "empirical", "file": "d.txt"}
    monkeypatch.chdir(tmp_path / "a")
    assert parse_delay(value).mean == pytest.approx(10 * us)
    with delay_files_relative_to(tmp_path / "b"):
        assert delay_base_dir.get() == tmp_path / "b"
        assert parse_delay(value).mean == pytest.approx(20 * us)
        assert parse_delay(value, base_dir=tmp_path / "a").mean == pytest.approx(10 * us)
    assert delay_base_dir.get() is None


SCENARIO = """
[[arrays]]
name = "local"

[[hosts]]
name = "esxi01"

[[paths]]
name = "p0"
array = "local"
one_way_latency = {{ dist = "empirical", file = "{file}", scale = 0.5 }}

[[workloads]]
name = "vm1"

[[policies]]
spec = "rr:iops=1"
"""


def test_load_scenario_reads_delay_files_beside_the_scenario(tmp_path, monkeypatch):
    (tmp_path / "sims" / "data").mkdir(parents=True)
    (tmp_path / "sims" / "data" / "ping.txt").write_text((DATA / "ping-linux.txt").read_text())
    (tmp_path / "sims" / "metro.toml").write_text(SCENARIO.format(file="data/ping.txt"))
    monkeypatch.chdir(tmp_path)  # elsewhere than the scenario's folder
    scenario = pathsel.load_scenario("sims/metro.toml")
    leg = scenario.model.paths[0].one_way_latency
    assert isinstance(leg, Empirical) and leg.mean == pytest.approx(_file("ping-linux.txt").mean / 2)
    assert delay_base_dir.get() is None  # the loader's setting does not leak
    (tmp_path / "sims" / "metro.toml").write_text(SCENARIO.format(file="data/gone.txt"))
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario("sims/metro.toml")
    assert info.value.place == "paths[0].one_way_latency"
    assert info.value.problem == (f"empirical: no such file 'data/gone.txt' (looked for {tmp_path / 'sims' / 'data' / 'gone.txt'})")


# -- the shipped captures and the docs --------------------------------------------------------------


def test_sims_captures_match_the_seeds():
    same = parse_delay({"dist": "empirical", "file": str(SIMS_DATA / "ping-same-az.txt"), "scale": 0.5})
    cross = parse_delay({"dist": "empirical", "file": str(SIMS_DATA / "ping-cross-az.txt"), "scale": 0.5})
    assert same.count == cross.count == 600
    # seed 000: tens of microseconds within a zone; 1.4 to 2 ms round trips across zones
    assert 20 * us < same.quantile(0.5) < 60 * us
    assert 0.55e-3 < cross.quantile(0.5) < 0.8e-3 and cross.quantile(0.99) < 1.25e-3
    assert cross.mean > 10 * same.mean


def _empirical_examples() -> list[str]:
    text = (ROOT / "docs" / "distributions.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```text\n(.*?)^```", text, flags=re.M | re.S)
    return [b for b in blocks if 'dist = "empirical"' in b]


def test_docs_empirical_examples_load_from_sims():
    """docs/distributions.md shows these as a scenario in sims/ would write them (the toml test runs elsewhere)."""
    delays = [path["one_way_latency"] for code in _empirical_examples() for path in tomllib.loads(code)["paths"]]
    assert {d["file"] for d in delays} == {"data/ping-same-az.txt", "data/ping-cross-az.txt"}
    with delay_files_relative_to(ROOT / "sims"):
        for delay in delays:
            assert parse_delay(delay).count == 600


def test_docs_list_every_kind():
    text = (ROOT / "docs" / "distributions.md").read_text(encoding="utf-8")
    for kind in DELAY_KINDS:
        assert f'dist = "{kind}"' in text, kind
    reference = (ROOT / "docs" / "scenario-reference.md").read_text(encoding="utf-8")
    for kind in DELAY_KINDS:
        assert f'dist = "{kind}"' in reference, kind


@settings(max_examples=30, deadline=None)
@given(splits=st.lists(st.integers(1, 5000), min_size=1, max_size=6), kind=st.sampled_from(range(6)))
def test_a_stream_serves_the_same_values_whatever_the_block_sizes(splits, kind):
    """The engines read a stream in blocks of any size (Draws grows its chunks): value k never depends on them."""
    from pathsel.engine.streams import Draws

    dist = [
        None,
        Exponential(1e-3),
        Uniform(1e-3, 2e-3),
        LogNormal.from_median_p99(1e-3, 5e-3),
        Mixture((0.9, 0.1), (Constant(1e-4), Exponential(1e-3))),
        Constant(5e-5),
    ][kind]
    ss = np.random.SeedSequence(7)
    whole = Draws((ss, 0), dist).take(sum(splits))
    d = Draws((ss, 0), dist)
    parts = np.concatenate([d.take(n) for n in splits])
    assert (parts == whole).all()
    one = Draws((ss, 0), dist)
    assert all(one.next() == whole[i] for i in range(min(len(whole), 300)))
    gen = np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=(0,)))
    ref = gen.random(sum(splits)) if dist is None else np.asarray(dist.sample_block(gen, sum(splits)))
    assert (ref == whole).all()
