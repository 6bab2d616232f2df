"""The analytic oracle (pathsel.studies.analytic) and the validation cases (pathsel validate).

* MVA against hand-computed closed networks and against the product-form
  solution summed state by state (load-dependent stations included).
* Hypothesis: random small closed networks with a random split (reads only or
  no replication, arrays with 1, several or >= population slots, exponential
  service, constant legs): the simulated IOPS matches exact MVA within 1 %.
* ``pathsel validate --quick`` passes, its JSON keeps the contract, and a case
  that is off makes it exit 1; ``pathsel predict`` and ``simulate --predict``.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from pathlib import Path

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import pathsel
from pathsel.cli import main
from pathsel.model import compile_model
from pathsel.scenario import RunSpec
from pathsel.studies import analytic, queueing
from pathsel.studies.analytic import (
    Fork,
    Network,
    RandomSplit,
    Route,
    Station,
    bounds,
    mva,
)
from pathsel.studies.validate import _batch_ci95, load_case

from .conftest import ROOT
from .test_properties import cases

VALIDATION = ROOT / "sims" / "validation"


def _net(stations, routes, n):
    return Network(tuple(stations), tuple(Route(p, tuple(seg)) for p, seg in routes), n)


def Q(name, s, c=1):
    return Station(name, "queue", s, c, exponential=True)


def Z(name, s):
    return Station(name, "delay", s, constant=True)


# -- MVA against hand computation ---------------------------------------------

# (stations, routes, population, expected throughput); times in arbitrary units
HAND = [
    # one queue, one delay, N = 1: X = 1 / (S + Z)
    ([Q("q", 1.0), Z("z", 3.0)], [(1.0, (0, 1))], 1, 1 / 4),
    # S = Z = 1, N = 2: n=1 R=1, X=1/2, Q=1/2; n=2 R=1.5, X = 2 / 2.5
    ([Q("q", 1.0), Z("z", 1.0)], [(1.0, (0, 1))], 2, 0.8),
    # two queues D = 1, 2, N = 3: G(n) = sum 2^k, X = G(2) / G(3) = 7 / 15
    ([Q("a", 1.0), Q("b", 2.0)], [(1.0, (0, 1))], 3, 7 / 15),
    # visit ratios: half the I/Os visit b (S = 4), so D_b = 2: same as above
    ([Q("a", 1.0), Q("b", 4.0)], [(0.5, (0,)), (0.5, (0, 1))], 3, 7 / 15),
    # two servers, N = 2, no delay: both always busy, X = 2 / S
    ([Q("m", 1.0, c=2)], [(1.0, (0,))], 2, 2.0),
    # two servers, S = 1, delay 1, N = 3: G(3) = sum_k f_m(k) f_z(3-k) with f_m = 1, 1, 1/2, 1/4 and f_z = 1/k!:
    # G(2) = 1/2 + 1 + 1/2 = 2, G(3) = 1/6 + 1/2 + 1/2 + 1/4 = 17/12; X = G(2) / G(3) = 24 / 17
    ([Q("m", 1.0, c=2), Z("z", 1.0)], [(1.0, (0, 1))], 3, 24 / 17),
    # a station with as many slots as I/Os is a pure delay: X = N / (S + Z)
    ([Q("m", 2.0, c=5), Z("z", 2.0)], [(1.0, (0, 1))], 5, 5 / 4),
]


@pytest.mark.parametrize("stations,routes,n,expected", HAND)
def test_mva_hand_computed(stations, routes, n, expected):
    res = mva(_net(stations, routes, n))
    assert res.throughput == pytest.approx(expected, rel=1e-12)
    assert res.response == pytest.approx(n / expected, rel=1e-12)
    assert res.exact


def test_bounds_hand_computed():
    # D = 1, 2, no delay, N = 3: X <= min(3 / 3, 1 / 2); X >= 3 / (3 + 2 x 3)
    b = bounds(_net([Q("a", 1.0), Q("b", 2.0)], [(1.0, (0, 1))], 3))
    assert (b.upper, b.lower, b.latency_min, b.bottleneck) == (pytest.approx(0.5), pytest.approx(1 / 3), 3.0, "b")
    # c servers: the bottleneck limit is c / D
    b = bounds(_net([Q("m", 2.0, c=4), Z("z", 1.0)], [(1.0, (0, 1))], 10))
    assert b.upper == pytest.approx(min(10 / 3, 4 / 2))


def _product_form(stations, demands, n):
    """X(n) = G(n - 1) / G(n), G summed over every state (Buzen's normalising constant, by brute force)."""

    def f(k, m):
        s = stations[k]
        if s.kind == "delay":
            return demands[k] ** m / math.factorial(m)
        return demands[k] ** m / math.prod(min(j, s.servers) for j in range(1, m + 1))

    def G(total):
        return sum(
            math.prod(f(k, m) for k, m in enumerate(state))
            for state in itertools.product(range(total + 1), repeat=len(stations))
            if sum(state) == total
        )

    return G(n - 1) / G(n)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["delay", "queue"]), st.floats(0.05, 5.0), st.integers(1, 4)), min_size=1, max_size=4),
    st.integers(1, 7),
    st.data(),
)
def test_mva_equals_product_form_by_enumeration(specs, n, data):
    stations = [Station(f"s{i}", kind, s, c, exponential=True, constant=kind == "delay") for i, (kind, s, c) in enumerate(specs)]
    # random routes over random subsets of the stations
    k = len(stations)
    routes = []
    for _ in range(data.draw(st.integers(1, 3))):
        subset = data.draw(st.lists(st.integers(0, k - 1), min_size=1, max_size=k, unique=True))
        routes.append((data.draw(st.floats(0.1, 1.0)), tuple(subset)))
    total = sum(p for p, _ in routes)
    net = _net(stations, [(p / total, seg) for p, seg in routes], n)
    assert mva(net).throughput == pytest.approx(_product_form(stations, net.demands, n), rel=1e-9)


def test_expected_max_of_fork_branches():
    a, b = 2.0, 3.0
    # two exponentials: a + b - ab / (a + b)
    assert queueing._expected_max(0.0, a, 0.0, b) == pytest.approx(a + b - a * b / (a + b))
    # constant + exponential, against Monte Carlo
    rng = np.random.default_rng(1)
    x = np.maximum(1.0 + rng.exponential(a, 400_000), 2.5 + rng.exponential(b, 400_000))
    assert queueing._expected_max(1.0, a, 2.5, b) == pytest.approx(x.mean(), rel=5e-3)
    assert queueing._expected_max(1.0, 0.0, 2.0, 0.0) == 2.0


def test_fork_makes_the_network_approximate():
    net = _net([Q("a", 1.0), Z("r", 3.0), Q("b", 1.0)], [(1.0, (Fork(((0,), (1, 2))),))], 2)
    assert net.has_fork and not net.exact
    assert mva(net).method == "approximate MVA"


# -- the compiled model ---------------------------------------------------------


def test_seed004_prediction_is_the_littles_law_figure():
    """docs/validation.md: 32 / 4.3664 ms and 32 / 2.3664 ms."""
    sc = pathsel.default_scenario()
    preds = analytic.predict_scenario(sc)
    iops = [p.iops for p in preds]
    assert iops[0] == pytest.approx(7328.7, rel=2e-4)
    assert iops[1] == pytest.approx(13522.7, rel=2e-4)
    assert iops[2] == pytest.approx(13522.7, rel=2e-4)  # latency RR keeps the 10 local paths
    assert "10 path(s)" in preds[2].split.basis
    for p in preds:
        assert p.bounds.lower <= p.iops <= p.bounds.upper * (1 + 1e-9)


@pytest.mark.parametrize("name", ["mva-single-server", "mva-multi-server", "mva-delay-only"])
def test_mva_case_files_hold_the_mva_figures(name):
    case = load_case(VALIDATION / f"{name}.toml")
    model = compile_model(case.scenario, RunSpec("rs", case.policies[0]))
    pred = analytic.predict(model, case.policies[0])
    assert pred.split.fixed and pred.mva.exact and pred.network.exact
    expected = {c.metric: c.expected for c in case.checks}
    assert pred.iops == pytest.approx(expected["iops"], rel=1e-6)
    assert pred.mva.response * 1e6 == pytest.approx(expected["latency_mean_us"], rel=1e-5)


def test_policy_splits_follow_the_definitions():
    case = load_case(VALIDATION / "policy-splits.toml")
    sc = case.scenario
    names = [p.name for p in compile_model(sc, sc.runs[0]).paths]
    got = {}
    for run in sc.runs:
        split = analytic.policy_split(compile_model(sc, run), run.policy)
        got[run.label] = {names[i]: s for i, s in enumerate(split.shares) if s > 0}
    assert got["rr:iops=1"] == {n: pytest.approx(1 / 7) for n in names if n != "vmhba1:C0:T3:L0"}
    assert got["rr:iops=1 (preferred array local)"] == {n: pytest.approx(1 / 3) for n in names[:3]}
    assert got["fixed:preferred=vmhba2:C0:T5:L0"] == {"vmhba2:C0:T5:L0": 1.0}
    assert got["mru (preferred array local)"] == {"vmhba1:C0:T0:L0": 1.0}


def test_random_split_draws_its_weights_and_skips_unusable_paths():
    text = """
name = "rs"
duration = "200ms"
[[arrays]]
name = "a"
[[paths]]
name = "p{i}"
count = 3
array = "a"
one_way_latency = "50us"
[[paths]]
name = "s"
array = "a"
one_way_latency = "50us"
alua = "standby"
[[workloads]]
iodepth = 4
"""
    res = pathsel.simulate(pathsel.loads_scenario(text), policies=[RandomSplit({"p0": 1, "p1": 3, "s": 5})], engine="reference")
    shares = {p["name"]: p["share"] for p in res.runs[0].paths()}
    assert shares["p2"] == 0 and shares["s"] == 0
    assert shares["p1"] == pytest.approx(0.75, abs=0.02)
    with pytest.raises(ValueError):
        RandomSplit([0, 0])


# -- simulated against exact MVA (hypothesis) ---------------------------------

TARGET_IOS = 80_000  # ~1.5 s of the reference engine per example


def _us(x: float) -> str:
    return f"{x * 1e6:.3f}us"


@st.composite
def random_split_networks(draw):
    n_arrays = draw(st.integers(1, 2))
    population = draw(st.integers(1, 12))
    reads_only = draw(st.booleans())
    lines = ['name = "mva-property"', f"seed = {draw(st.integers(0, 2**16))}", f'protocol = "{draw(st.sampled_from(["scsi", "nvme"]))}"']
    blocks = []
    for a in range(n_arrays):
        mode = draw(st.sampled_from(["single", "multi", "delay"]))
        slots = {"single": 1, "delay": population, "multi": max(1, draw(st.integers(2, max(2, population - 1))))}[mode]
        svc = _us(draw(st.floats(10e-6, 200e-6)))
        blocks.append(
            f'[[arrays]]\nname = "a{a}"\nconcurrency = {slots}\n'
            f'service_time = {{ read = {{ dist = "exponential", mean = "{svc}" }}, write = {{ dist = "exponential", mean = "{svc}" }} }}'
        )
    n_paths = draw(st.integers(1, 4))
    weights = {}
    for i in range(n_paths):
        blocks.append(
            f'[[paths]]\nname = "p{i}"\narray = "a{draw(st.integers(0, n_arrays - 1))}"\none_way_latency = "{_us(draw(st.floats(10e-6, 300e-6)))}"'
        )
        weights[f"p{i}"] = draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]))
    if not any(weights.values()):
        weights["p0"] = 1.0
    rw = 'rw = "randread"' if reads_only else f'rw = "randrw"\nrwmixread = {draw(st.integers(0, 100))}'
    blocks.append(f"[[workloads]]\n{rw}\niodepth = {population}")
    return "\n".join(lines) + "\n\n" + "\n\n".join(blocks) + "\n", weights


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(random_split_networks())
def test_simulated_iops_matches_exact_mva_on_random_split_networks(net):
    text, weights = net
    sc = pathsel.loads_scenario(text)
    policy = RandomSplit(weights)
    pred = analytic.predict(compile_model(sc, RunSpec("rs", policy)), policy)
    assert pred.split.fixed and pred.network.exact, pred.notes
    duration = TARGET_IOS / pred.iops
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = pathsel.simulate(
            pathsel.loads_scenario(text.replace('name = "mva-property"', f'name = "mva-property"\ninterval = "{_us(duration / 20)}"')),
            policies=[policy],
            duration=duration,
            engine="reference",
        ).runs[0]
    error = run.iops / pred.iops - 1
    # The tolerance is 1 %, widened only if this run's own sampling error (95 % batch-means
    # half-width, x 1.5: about 3 standard errors) says 80,000 I/Os cannot resolve 1 %.
    ci = _batch_ci95(run) or 0.0
    assert ci < 0.02, f"run too short to test: 95 % half-width {ci:.2%}"
    assert abs(error) <= max(0.01, 1.5 * ci), f"simulated {run.iops:.0f} vs MVA {pred.iops:.0f} ({error:+.2%}, ci {ci:.2%})"


# -- the commands --------------------------------------------------------------


@pytest.fixture(scope="module")
def quick_validation():
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        # CI's one run of every case on both engines, at the shortest lengths its checks hold at (issue 35)
        status = main(["validate", "--quick", "--engine", "both", "--json", "-q"])
    return status, json.loads(out.getvalue())


def test_validate_quick_passes_with_the_json_contract(quick_validation):
    status, doc = quick_validation
    assert status == 0
    assert set(doc) == {"cases"}
    rows = doc["cases"]
    for row in rows:
        assert {"case", "source", "expected", "simulated", "error", "tolerance", "passed"} <= row.keys()
        assert row["passed"] is True, row
        assert isinstance(row["case"], str) and row["source"]
    cases = {r["case"] for r in rows}
    assert {p.stem for p in VALIDATION.glob("*.toml")} == cases
    # built-in policies on both engines, RandomSplit on the reference engine only
    engines = {(r["case"], r["engine"]) for r in rows}
    assert ("seed004-testdrive", "fast") in engines and ("seed004-testdrive", "reference") in engines
    assert ("mva-single-server", "fast") not in engines
    # both engines give the same numbers
    by = {}
    for r in rows:
        by.setdefault((r["case"], r["check"], r["run"]), set()).add(r["simulated"])
    assert all(len(v) == 1 for v in by.values())


def test_validate_exits_1_on_a_failing_case(tmp_path: Path, capsys):
    text = (VALIDATION / "mva-delay-only.toml").read_text()
    bad = tmp_path / "off.toml"
    bad.write_text(
        text.replace("expected = 88888.889", "expected = 100000")
        .replace('case = "mva-delay-only"', 'case = "off"')
        .replace('quick_duration = "0.8s"', 'quick_duration = "200ms"')
    )
    assert main(["validate", "--quick", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "1 FAILED" in out
    assert main(["validate", "--quick", "--json", str(bad)]) == 1
    rows = json.loads(capsys.readouterr().out)["cases"]
    assert [r["passed"] for r in rows] == [False, True]


# (what to replace in mva-delay-only.toml, the place and problem of the one-line error)
BAD_CASES = [
    ('metric = "iops"', 'metric = "iopz"', "validation.checks[0].metric: must be one of"),
    ("[validation]", "[validashun]", "validation.case: required: a non-empty string"),
    ('quick_duration = "0.8s"', 'quick_duration = "0.8s"\nnote = "x"', "validation.note: unknown key"),
    ('quick_duration = "0.8s"', 'quick_duration = "0s"', "validation.quick_duration: must be > 0"),
    ("expected = 88888.889", "expected = 0", "validation.checks[0].error: a relative error needs expected != 0"),
    ("expected = 88888.889", 'expected = "many"', "validation.checks[0].expected: must be a number, got 'many'"),
    ("d3 = 0.1 }", "d9 = 0.1 }", "validation.random_split.d9: no path named 'd9'"),
    ('metric = "iops"', 'metric = "share"', "validation.checks[0]: a share check needs path, paths or array"),
    ('metric = "iops"', 'metric = "iops"\ncompare = "about"', "validation.checks[0].compare: must be equal, at_most or at_least"),
    (
        'case = "mva-delay-only"',
        'case = "x"\nengines = ["fast"]',
        "validation.engines: the fast engine runs built-in and compiled-style policies only",
    ),
    ('case = "mva-delay-only"', 'case = "x"\nscenario = "nowhere.toml"', "validation.scenario: names a scenario file, so"),
    ("*", '[validation]\ncase = "x"\nsource = "y"\nscenario = "nowhere.toml"', "nowhere.toml: no such file"),
    ("[[arrays]]", "[[arrayz]]", "arrayz: unknown key 'arrayz' (did you mean 'arrays'?)"),
]


@pytest.mark.parametrize("old,new,fragment", BAD_CASES, ids=[b[2][:40] for b in BAD_CASES])
def test_validate_bad_case_file_is_one_line_and_status_2(tmp_path: Path, capsys, old, new, fragment):
    text = (VALIDATION / "mva-delay-only.toml").read_text()
    assert old == "*" or old in text
    bad = tmp_path / "bad.toml"
    bad.write_text(new if old == "*" else text.replace(old, new, 1))
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pathsel: error: ") and fragment in err[0], err


def test_predict_command(capsys):
    assert main(["predict"]) == 0
    out = capsys.readouterr().out
    assert "7,329" in out and "13,522" in out and "random split with the policy's shares" in out
    assert main(["predict", str(VALIDATION / "mva-single-server.toml"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    run = doc["runs"][0]
    assert run["mva"]["exact"] is True and run["mva"]["iops"] == pytest.approx(21582.96, rel=1e-6)
    assert run["split"] == {"p0": 0.5, "p1": 0.3, "p2": 0.2}


def test_simulate_predict_keeps_the_json_contract(capsys):
    assert main(["simulate", "--duration", "200ms", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["simulate", "--duration", "200ms", "--json", "--predict"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for a, b in zip(plain["runs"], doc["runs"]):
        assert {k: v for k, v in b.items() if k != "predicted"} == a
        assert b["predicted"]["mva"]["iops"] > 0
    assert main(["simulate", "-q", "--duration", "200ms", "--predict"]) == 0
    assert "analytic beside simulated" in capsys.readouterr().out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_predict_any_scenario_mva_within_its_bounds(case):
    """Any scenario the properties draw (replication, bandwidth, faults, every policy): no crash, MVA inside the bounds."""
    sc = pathsel.loads_scenario(case.toml)
    model = compile_model(sc, sc.runs[0])
    pred = analytic.predict(model, case.policy, "p")
    b = pred.bounds
    assert 0 <= b.lower <= b.upper
    if pred.mva is not None:
        assert b.lower * (1 - 1e-9) <= pred.iops <= b.upper * (1 + 1e-9), pred.notes
        assert pred.mva.response == pytest.approx(model.outstanding / pred.iops)
        assert sum(pred.split.shares) == pytest.approx(1.0)
    json.dumps(pred.to_dict(), allow_nan=False)
