"""The fabric (issue 33): switches, FC buffer-to-buffer credits, back-pressure and slow drain.

The credit bound against its formula (and ``pathsel validate``'s case), back-pressure against the exact hold
time of one transfer, a slow-drain fault that reverts, both engines giving the same JSON, and routes that do
not connect refused in one located line.
"""

from __future__ import annotations

import json
import re

import pytest

import pathsel
from pathsel.cli import main
from pathsel.engine.reference.run import Simulation
from pathsel.engine.reference.wire import TO_HOST
from pathsel.model import compile_model
from pathsel.model.fabric import credit_rate, drain_directions, round_trip
from pathsel.scenario.load import loads_scenario
from pathsel.studies.validate import load_case, run_case

from .conftest import ROOT

SIMS = ROOT / "sims"

BASE = """
name = "fabric"
seed = 1
duration = "{duration}"
interval = "100ms"
policies = ["rr:iops=1"]

[[arrays]]
name = "a"
concurrency = 64
service_time = "100us"

[[hosts]]
name = "h1"

[[hosts]]
name = "h2"

[[switches]]
name = "sw1"

[[switches]]
name = "sw2"

[[links]]
name = "h1-port"
between = ["h1:hba0", "sw1"]
bandwidth = "3200MB/s"
bb_credits = 8
{h1_extra}

[[links]]
name = "h2-port"
between = ["h2:hba0", "sw1"]
bandwidth = "3200MB/s"
bb_credits = 8

[[links]]
name = "isl"
between = ["sw1", "sw2"]
bandwidth = "3200MB/s"
bb_credits = 16

[[links]]
name = "a-port"
between = ["sw2", "a:fc0"]
bandwidth = "3200MB/s"
bb_credits = 8

[[paths]]
name = "p0"
host = "h1"
array = "a"
one_way_latency = "10us"
links = ["h1-port", "isl", "a-port"]

[[paths]]
name = "p0"
host = "h2"
array = "a"
one_way_latency = "10us"
links = ["h2-port", "isl", "a-port"]

[[workloads]]
name = "w1"
host = "h1"
rw = "{rw}"
bs = "32k"
iodepth = 8

[[workloads]]
name = "w2"
host = "h2"
rw = "{rw}"
bs = "32k"
iodepth = 8
{faults}
"""

SLOW = """
[[faults]]
at = "{at}"
what = "slow_drain"
link = "h1-port"
{how}
duration = "{duration}"
"""


def scenario(duration: str = "1s", rw: str = "randread", h1_extra: str = "", faults: str = "") -> str:
    return BASE.format(duration=duration, rw=rw, h1_extra=h1_extra, faults=faults)


def _model(text: str, source: str):
    sc = loads_scenario(text, source)
    return compile_model(sc, sc.runs[0])


def run(text: str, engine: str = "reference") -> pathsel.Result:
    return pathsel.simulate(loads_scenario(text, "<fabric>"), engine=engine)


# -- the credit bound ------------------------------------------------------------------------------------
def test_credit_rate_is_credits_times_frame_over_round_trip():
    rtt = 2 * 50 * 5e-6 + 2148 / 3.2e9
    assert round_trip(50, 2148, 3.2e9) == pytest.approx(rtt, rel=1e-15)
    assert credit_rate(8, 2148, 3.2e9, 50) == pytest.approx(8 * 2148 / rtt, rel=1e-15)
    # short and with plenty of credits: the bandwidth binds
    assert credit_rate(500, 2148, 3.2e9, 0.1) == 3.2e9
    # a slow-drain port's credit_return lengthens the round trip
    assert credit_rate(8, 2148, 3.2e9, 0, 2e-3) == pytest.approx(8 * 2148 / (2148 / 3.2e9 + 2e-3), rel=1e-15)


def test_validate_case_credit_bound_within_2_percent():
    case = load_case(ROOT / "sims" / "validation" / "fc-credit-bound.toml")
    rows = run_case(case, quick=True, engines=("reference",))
    assert rows and all(r.passed for r in rows), [(r.simulated, r.expected) for r in rows]
    assert all(abs(r.error) < 0.02 for r in rows)


def test_link_throughput_is_the_credit_bound():
    """A credit-limited link carries credits x frame / round trip: its busy time is all of the run, its bytes that."""
    text = scenario(duration="2s", h1_extra='distance_km = 20\ncredit_return = "0s"').replace(
        'name = "w2"\nhost = "h2"\nrw = "randread"\nbs = "32k"\niodepth = 8', 'name = "w2"\nhost = "h2"\nrw = "randread"\nbs = "32k"\niodepth = 1'
    )
    res = run(text)
    r = res.runs[0]
    link = next(ln for ln in r.model.links if ln.name == "h1-port")
    rate = link.rate(TO_HOST)
    assert rate == pytest.approx(credit_rate(8, 2148, 3.2e9, 20), rel=1e-12)
    row = next(x for x in r.links() if x["name"] == "h1-port" and x["direction"] == "to_host")
    assert row["utilisation"] == pytest.approx(1.0, abs=0.01)  # saturated at the credit bound
    h1 = next(h for h in r.hosts() if h["host"] == "h1")
    assert h1["iops"] * 32768 == pytest.approx(rate, rel=0.02)


# -- back-pressure -------------------------------------------------------------------------------------------
def test_back_pressure_holds_the_link_before_exactly():
    """One 256 KiB transfer to the host over a-port, isl, then a host port draining at 1 MB/s: the ISL finishes no
    earlier than the host port has drained all but the switch's buffer for the ISL (16 x 2148 bytes)."""
    text = scenario(h1_extra='credit_return = "17.184ms"')  # 8 x 2148 / 17.184 ms: about 1 MB/s
    model = _model(text, "<bp>")
    sim = Simulation(model, "rr:iops=1", False, None)
    nc = len(model.controllers)
    isl, hport, aport = (next(ln for ln in model.links if ln.name == n) for n in ("isl", "h1-port", "a-port"))
    n = 262144
    p = next(p.index for p in model.paths if p.host == 0)
    done = sim.fabric_wires(p, model.paths[p].controller, TO_HOST, 0.0, n)
    r_a, r_i, r_h = aport.rate(TO_HOST), isl.rate(TO_HOST), hport.rate(TO_HOST)
    assert r_h < 1.0001e6
    expected_done = n / r_a + n / r_i + n / r_h  # store and forward
    assert done == pytest.approx(expected_done, rel=1e-12)
    held_isl = expected_done - n / r_i - isl.credit_bytes / r_h
    assert sim.wire_free[nc + isl.index][TO_HOST] == pytest.approx(held_isl, rel=1e-12)
    held_a = held_isl - n / r_a - aport.credit_bytes / r_i  # and the array's port behind it, while it binds
    assert held_isl > n / r_a + n / r_i and held_a > n / r_a  # both bind
    assert sim.wire_free[nc + aport.index][TO_HOST] == pytest.approx(held_a, rel=1e-12)
    assert sim.held[isl.index][TO_HOST] == pytest.approx(held_isl - (n / r_a + n / r_i), rel=1e-9)


def test_no_back_pressure_on_a_healthy_fabric():
    res = run(scenario())
    held = res.runs[0].metrics.link_held
    assert held is not None and float(held.sum()) == 0.0


def test_drain_directions_from_the_route():
    sw = ["sw1", "sw2"]
    routes = [("h-port", "isl", "a-port")]
    assert drain_directions(("h:hba", "sw1"), sw, routes, "h-port") == (False, True)  # the host receives reads
    assert drain_directions(("sw2", "a:fc0"), sw, routes, "a-port") == (True, False)  # the array receives writes
    assert drain_directions(("sw1", "sw2"), sw, routes, "isl") == (True, True)
    assert drain_directions(None, sw, routes, "x") == (True, True)


# -- slow drain: condition and fault -------------------------------------------------------------------------
def _dev_latency_ms(r, host: int, t0: float, t1: float) -> float:
    m, model = r.metrics, r.model
    b0, b1 = int(round(t0 / m.interval)), int(round(t1 / m.interval))
    d = next(d for d in model.devices if d.host == host)
    ios = int(m.ts_path_ios[b0:b1, list(d.paths)].sum())
    return float(m.ts_dev_actv[d.index, b0:b1].sum()) / ios * 1e3


def test_slow_drain_fault_slows_the_victim_and_reverts():
    text = scenario(duration="1.5s", faults=SLOW.format(at="0.5s", how='credit_return = "2ms"', duration="0.5s"))
    r = run(text).runs[0]
    before, during, after = (_dev_latency_ms(r, 1, a, b) for a, b in ((0.1, 0.5), (0.6, 1.0), (1.2, 1.5)))
    assert during > 5 * before  # h2's reads wait behind h1's on the ISL
    assert after == pytest.approx(before, rel=0.2)  # reverted: credits come back on time again
    h2 = next(x for x in r.links() if x["name"] == "h2-port" and x["direction"] == "to_host")
    assert h2["utilisation"] < 0.5 and h2["held"] == 0.0  # its own port is never the bottleneck
    isl = next(x for x in r.links() if x["name"] == "isl" and x["direction"] == "to_host")
    assert 0.1 < isl["held"] <= 0.6 / 1.5  # held by back-pressure while the fault lasted (and its backlog drained)
    events = [e for e in r.metrics.events if e["event"] == "fault"]
    assert [(e["what"], e["revert"]) for e in events] == [("slow_drain", False), ("slow_drain", True)]


def test_a_stopped_port_holds_frames_until_the_revert():
    text = scenario(duration="1s", faults=SLOW.format(at="0.3s", how="stop = true", duration="0.2s"))
    r = run(text).runs[0]
    m = r.metrics
    b = [int(round(t / m.interval)) for t in (0.3, 0.5)]
    assert int(m.ts_path_ios[b[0] + 1 : b[1], :].sum()) == 0  # nothing completes while the ports are stopped
    assert int(m.ts_path_ios[b[1] + 1 :, :].sum()) > 0
    assert r.latency_us["max"] >= 0.19e6


def test_story_names_the_slow_port_the_held_isl_and_the_victims():
    text = scenario(duration="1.5s", faults=SLOW.format(at="0.5s", how='credit_return = "2ms"', duration="0.5s"))
    said = " ".join(s for _, ss in run(text).story() for s in ss)
    assert "Slow drain from 500 ms to 1 s: the port on h1-port returned each buffer credit (R_RDY) 2 ms late" in said
    assert re.search(r"back-pressure held isl \d+ %", said)
    assert re.search(r"h2 0\.\d\d -> \d+\.\d\d ms", said)


def test_the_sim_says_so(capsys):
    assert main(["simulate", str(SIMS / "fc-slow-drain.toml"), "--engine", "reference", "--duration", "2.5s"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert "the port on esxi01-hba0 returned each buffer credit (R_RDY) 2 ms late" in flat
    assert "back-pressure held isl1" in flat
    for h in ("esxi02", "esxi03", "esxi04"):
        m = re.search(rf"{h} (\d+\.\d\d) -> (\d+\.\d\d) ms", flat)
        assert m and float(m.group(2)) > 10 * float(m.group(1))


# -- the engines agree -------------------------------------------------------------------------------------------
CASES = {
    "reads-credit-return": scenario(faults=SLOW.format(at="0.3s", how='credit_return = "1ms"', duration="0.4s")),
    "writes-credit-return": scenario(rw="randwrite", faults=SLOW.format(at="0.3s", how='credit_return = "1ms"', duration="0.4s")),
    "mixed-stop": scenario(rw="randrw", faults=SLOW.format(at="0.2s", how="stop = true", duration="0.3s")),
    "condition": scenario(rw="randrw", h1_extra='credit_return = "300us"\ndistance_km = 10'),
    # with frames (a transport): the credits bound the wire bytes, headers and all
    "fc-frames": scenario(rw="randrw", faults=SLOW.format(at="0.3s", how='credit_return = "1ms"', duration="0.4s")).replace(
        'one_way_latency = "10us"\nlinks', 'one_way_latency = "10us"\ntransport = "fc"\nlinks'
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_engines_agree(name):
    text = CASES[name]
    docs = []
    for engine in ("reference", "fast"):
        d = json.loads(run(text, engine).to_json())
        d.pop("engine", None)
        docs.append(json.dumps(d, sort_keys=True))
    assert docs[0] == docs[1]


def test_engines_agree_on_the_sim():
    sc = pathsel.load_scenario(SIMS / "fc-slow-drain.toml")
    out = []
    for engine in ("reference", "fast"):
        d = json.loads(pathsel.simulate(sc, engine=engine, duration=2.0).to_json())
        d.pop("engine", None)
        out.append(d)
    assert out[0] == out[1]


def test_without_fabric_keys_nothing_runs():
    text = re.sub(r'\[\[switches\]\]\nname = "sw\d"\n', "", scenario())
    text = re.sub(r"between = \[[^\]]*\]\n", "", text)
    text = text.replace("bb_credits = 8\n", "").replace("bb_credits = 16\n", "")
    model = _model(text, "<plain>")
    assert not model.fabric
    assert run(text).runs[0].metrics.link_held is None


def test_switch_latency_is_added_per_switch_crossed():
    text = scenario().replace('[[switches]]\nname = "sw2"', '[[switches]]\nname = "sw2"\nlatency = "5us"')
    model = _model(text, "<lat>")
    assert model.controllers[0].extra == pytest.approx(0.8e-6 + 5e-6, rel=1e-12)  # sw1 (default) and sw2


# -- bad input: one located line each -----------------------------------------------------------------------------
BAD = [
    # (what to change in the valid scenario, place, fragment)
    (('links = ["h1-port", "isl", "a-port"]', 'links = ["h1-port", "a-port"]'), "paths[0].links[1]", "do not meet at a switch"),
    (('between = ["sw1", "sw2"]', 'between = ["sw1", "sw3"]'), "paths[0].links[2]", "(did you mean 'sw2'?)"),
    (('between = ["h1:hba0", "sw1"]', 'between = ["h1:hba0", "sw7"]'), "links[0].between", "neither 'h1:hba0' nor 'sw7' is a [[switches]] name"),
    (('between = ["sw1", "sw2"]\n', ""), "paths[0].links[1]", "link 'isl' has no between while other links of this route have"),
    (('links = ["h1-port", "isl", "a-port"]', 'links = ["h1-port", "isl", "isl"]'), "paths[0].links[2]", "names link 'isl' twice"),
    (('between = ["sw1", "sw2"]', 'between = ["sw1", "sw1"]'), "links[2]", "between names 'sw1' twice"),
    (('between = ["sw1", "sw2"]', 'between = ["sw1"]'), "links[2].between", "a link has two ends: between = [end, end], got 1 name"),
    (('between = ["sw1", "sw2"]', 'between = ["sw1", "sw2", "sw3"]'), "links[2].between", "got 3 names"),
    (('between = ["sw1", "sw2"]', 'between = ["sw1", ""]'), "links[2].between[1]", "must not be empty"),
    (("bb_credits = 16", "bb_credits = 0"), "links[2].bb_credits", "greater than or equal to 1"),
    (("bb_credits = 16", "bb_credits = -3"), "links[2].bb_credits", "greater than or equal to 1"),
    (("bb_credits = 16", "bb_credits = 1e9"), "links[2].bb_credits", "must be a valid integer"),
    (("bb_credits = 16", "bb_credits = 70000"), "links[2].bb_credits", "less than or equal to 65535"),
    (("bb_credits = 16", "bb_credits = 16\nframe_size = 9000"), "links[2].frame_size", "less than or equal to 2148"),
    (("bb_credits = 16", "bb_credits = 16\nframe_size = 0"), "links[2].frame_size", "greater than or equal to 36"),
    (("bb_credits = 16", "frame_size = 2048"), "links[2]", "frame_size needs bb_credits"),
    (("bb_credits = 16", 'credit_return = "1ms"'), "links[2]", "credit_return needs bb_credits"),
    (("bb_credits = 16", 'bb_credits = 16\ncredit_return = "-1ms"'), "links[2].credit_return", "must be >= 0"),
    (("bb_credits = 16", 'bb_credits = 16\ncredit_return = "inf"'), "links[2].credit_return", "must be finite"),
    (("bb_credits = 16", 'bb_credits = 16\ncredit_return = "nan ms"'), "links[2].credit_return", "must be finite"),
    (('[[switches]]\nname = "sw2"', '[[switches]]\nname = "sw2"\nlatency = "-1us"'), "switches[1].latency", "must be >= 0"),
    (('[[switches]]\nname = "sw2"', '[[switches]]\nname = "sw1"'), "switches[1].name", "duplicate switch name 'sw1'"),
    (('[[switches]]\nname = "sw2"', '[[switches]]\nname = "sw2"\nlatncy = "1us"'), "switches[1].latncy", "unknown key 'latncy'"),
]

SLOW_BAD = [
    ('link = "h1-port"\ncredit_return = "1ms"\nstop = true', "faults[0].credit_return", "exactly one of credit_return"),
    ('link = "h1-port"\nstop = false', "faults[0].credit_return", "exactly one of credit_return"),
    ('link = "nope"\ncredit_return = "1ms"', "faults[0].link", "no link named 'nope'"),
    ('credit_return = "1ms"', "faults[0].link", "needs the [[links]] link whose port drains slowly"),
    ('link = "replication"\ncredit_return = "1ms"', "faults[0].link", "needs the [[links]] link whose port drains slowly"),
    ('path = "p0"\nhost = "h1"\nlink = "h1-port"\ncredit_return = "1ms"', "faults[0].path", "slow_drain does not take a path"),
]


def _place(text: str) -> tuple[str, str]:
    with pytest.raises(pathsel.ScenarioError) as info:
        loads_scenario(text, "<bad>")
    err = info.value
    assert "\n" not in str(err)
    return err.place, err.problem


@pytest.mark.parametrize(("change", "place", "fragment"), BAD, ids=[b[1] + ":" + b[2][:20] for b in BAD])
def test_bad_fabric_input(change, place, fragment):
    old, new = change
    text = scenario()
    assert old in text
    got_place, problem = _place(text.replace(old, new, 1))
    assert got_place == place
    assert fragment in problem


@pytest.mark.parametrize(("body", "place", "fragment"), SLOW_BAD, ids=[b[1] + ":" + b[2][:20] for b in SLOW_BAD])
def test_bad_slow_drain_fault(body, place, fragment):
    faults = f'\n[[faults]]\nat = "1s"\nwhat = "slow_drain"\n{body}\n'
    if "stop = true" in body and "credit_return" not in body:
        faults += 'duration = "1s"\n'
    got_place, problem = _place(scenario(faults=faults))
    assert got_place == place
    assert fragment in problem


def test_slow_drain_rows_more():
    # a stop needs a duration; a link without credits cannot drain slowly; other faults refuse the keys
    cases = [
        ('\n[[faults]]\nat = "1s"\nwhat = "slow_drain"\nlink = "h1-port"\nstop = true\n', "faults[0].duration", "give the stop a duration"),
        (
            '\n[[faults]]\nat = "1s"\nwhat = "latency"\nlink = "isl"\nadd = "1ms"\ncredit_return = "1ms"\n',
            "faults[0].credit_return",
            "only a slow_drain",
        ),
    ]
    for faults, place, fragment in cases:
        got_place, problem = _place(scenario(faults=faults))
        assert (got_place, fragment in problem) == (place, True), problem
    text = scenario(faults='\n[[faults]]\nat = "1s"\nwhat = "slow_drain"\nlink = "h2-port"\ncredit_return = "1ms"\n').replace(
        'name = "h2-port"\nbetween = ["h2:hba0", "sw1"]\nbandwidth = "3200MB/s"\nbb_credits = 8',
        'name = "h2-port"\nbetween = ["h2:hba0", "sw1"]\nbandwidth = "3200MB/s"',
    )
    got_place, problem = _place(text)
    assert got_place == "faults[0].link" and "has no bb_credits" in problem


def test_cli_bad_route_one_line_exit_2(tmp_path, capsys):
    f = tmp_path / "bad.toml"
    f.write_text(scenario().replace('links = ["h1-port", "isl", "a-port"]', 'links = ["h1-port", "a-port"]'))
    assert main(["simulate", str(f)]) == 2
    _out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "paths[0].links[1]" in err and "do not meet at a switch" in err
