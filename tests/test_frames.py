"""Frames on the wire (issue 33): per-transport overhead, the speeds people write, utilisation never above 1.

Tables of the frame arithmetic (model/frames.py) worked by hand from the
figures docs/model.md cites; both engines on framed scenarios (every
transport, reads and writes, a shared link); bad input for the new keys; and
a Hypothesis search that no wire reports a utilisation above 1.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pathsel
from pathsel.cli import main
from pathsel.model.frames import frame_row, ib_mtu, leg_wire, tcp_mss, wire_bytes
from pathsel.units import fc_line_rate, parse_bandwidth

# (transport, mtu, payload, kind, wire bytes, frames): each worked by hand
ARITHMETIC = [
    # FC: 60 bytes a frame (SOF 4 + header 24 + CRC 4 + EOF 4 + six idles 24), 2,048-byte data frames
    ("fc", 0, 4096, "read", 4096 + 2 * 60 + (24 + 60), 3),  # 2 FCP_DATA + FCP_RSP
    ("fc", 0, 2048, "read", 2048 + 60 + 84, 2),
    ("fc", 0, 2049, "read", 2049 + 2 * 60 + 84, 3),
    ("fc", 0, 4096, "write", 4096 + 2 * 60, 2),  # the data after XFER_RDY
    ("fc", 0, 0, "command", 32 + 60, 1),  # FCP_CMND
    ("fc", 0, 0, "xfer_rdy", 12 + 60, 1),
    ("fc", 0, 0, "status", 24 + 60, 1),
    ("fc", 0, 65536, "read", 65536 + 32 * 60 + 84, 33),
    # FC-NVMe: 96-byte CMND IU, 32-byte ERSP IU
    ("nvme-fc", 0, 4096, "read", 4096 + 2 * 60 + 92, 3),
    ("nvme-fc", 0, 4096, "write", 156 + 4096 + 2 * 60, 3),  # the command IU, then the data
    ("nvme-fc", 0, 0, "status", 92, 1),
    # NVMe/TCP at MTU 1,500: MSS 1,448, 90 bytes a segment (8 + 14 + 4 + 12 + IPv4 20 + TCP 32)
    ("nvme-tcp", 1500, 4096, "read", 4144 + 3 * 90, 3),  # C2HData 24 + data + CapsuleResp 24 = 4,144: 3 segments
    ("nvme-tcp", 1500, 4096, "write", 72 + 4096 + 3 * 90, 3),  # CapsuleCmd with in-capsule data
    ("nvme-tcp", 1500, 0, "command", 72 + 90, 1),
    ("nvme-tcp", 1500, 0, "status", 24 + 90, 1),
    ("nvme-tcp", 9000, 4096, "read", 4144 + 90, 1),
    ("nvme-tcp", 9000, 131072, "read", 131120 + 15 * 90, 15),  # ceil(131,120 / 8,948) = 15
    # iSCSI: a 48-byte BHS per PDU, Data-In PDUs of at most 8,192 bytes
    ("iscsi", 1500, 4096, "read", 4096 + 48 + 48 + 3 * 90, 3),
    ("iscsi", 1500, 16384, "read", 16384 + 2 * 48 + 48 + 12 * 90, 12),  # 16,528 bytes: ceil(/1,448) = 12
    ("iscsi", 1500, 4096, "write", 4096 + 48 + 3 * 90, 3),  # one Data-Out PDU
    ("iscsi", 1500, 0, "command", 48 + 90, 1),
    ("iscsi", 1500, 0, "xfer_rdy", 48 + 90, 1),  # R2T
    # RoCEv2: 82 bytes a packet (38 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4), IB MTU 1,024 at 1,500
    ("nvme-roce", 1500, 4096, "read", 4096 + 16 + 4 * 82 + (16 + 82), 5),  # RDMA WRITE (RETH) + response SEND
    ("nvme-roce", 9000, 4096, "read", 4096 + 16 + 82 + 98, 2),
    ("nvme-roce", 1500, 4096, "write", 64 + 4096 + 5 * 82, 5),  # SEND of the command with its data
    ("nvme-roce", 1500, 0, "command", 64 + 82, 1),
]


@pytest.mark.parametrize(("transport", "mtu", "payload", "kind", "wire", "frames"), ARITHMETIC)
def test_wire_bytes_by_hand(transport, mtu, payload, kind, wire, frames):
    assert wire_bytes(transport, mtu, payload, kind) == (wire, frames)


def test_the_issue_s_case_4k_over_nvme_tcp_at_mtu_1500():
    wire, frames = wire_bytes("nvme-tcp", 1500, 4096, "read")
    assert (wire, frames) == (4414, 3)
    assert 4096 / wire == pytest.approx(0.928, abs=5e-4)
    assert tcp_mss(1500) == 1448 and tcp_mss(9000) == 8948
    assert ib_mtu(1500) == 1024 and ib_mtu(9000) == 4096 and ib_mtu(4100) == 2048


def test_no_transport_adds_nothing():
    assert frame_row("", 0)[0] == 0
    with pytest.raises(ValueError, match="unknown transport"):
        frame_row("infiniband", 0)


@given(st.sampled_from(["fc", "nvme-fc", "iscsi", "nvme-tcp", "nvme-roce"]), st.integers(576, 9216), st.integers(1, 1 << 20))
@settings(max_examples=int(os.environ.get("PATHSEL_EXAMPLES", "100")), deadline=None)
def test_overhead_is_positive_and_bounded(transport, mtu, n):
    """Every leg carries its payload and at least one frame's overhead; never more than a third more than payload
    plus a frame's worth per frame (a sanity bound on the arithmetic, not a model figure)."""
    f = frame_row(transport, mtu)
    for to_host in (0, 1):
        wire, frames = leg_wire(f, to_host, n, 0)
        assert frames >= 1 and wire > n
        assert wire <= n + frames * (f[2] + 200) + 2 * 96 + (n // 512) * 48


# "32GFC": the data rate after encoding; "25GbE": already the MAC's rate
SPEEDS = [
    ("1GFC", 106.25e6),
    ("2GFC", 212.5e6),
    ("4GFC", 425e6),
    ("8GFC", 850e6),
    ("16GFC", 1700e6),
    ("32GFC", 3400e6),
    ("64GFC", 57.8e9 * (256 / 257) * (514 / 544) / 8),
    ("128GFC", 13600e6),
    ("25GbE", 3125e6),
    ("10GbE", 1250e6),
    ("100GbE", 12500e6),
]


@pytest.mark.parametrize(("text", "rate"), SPEEDS)
def test_the_speeds_people_write(text, rate):
    assert parse_bandwidth(text) == pytest.approx(rate, rel=1e-12)


def test_fc_line_rate_table():
    assert fc_line_rate(16) == pytest.approx(14.025e9 * 64 / 66 / 8)
    assert 6.7e9 < fc_line_rate(64) < 6.9e9


# -- the scenario keys -------------------------------------------------------------------------------------------
BASE = """
name = "frames"
seed = 7
duration = "{duration}"
protocol = "{protocol}"
{host}
[[arrays]]
name = "a"
concurrency = 64
service_time = {{ dist = "exponential", mean = "60us" }}

[[links]]
name = "isl"
bandwidth = "{link_bw}"

[[paths]]
name = "p{{i}}"
count = 2
array = "a"
one_way_latency = {{ dist = "uniform", low = "5us", high = "15us" }}
bandwidth = "{bw}"
links = ["isl"]
{path}
[[workloads]]
name = "w"
rw = "randrw"
bs = "4k/50:64k/30:1m/20"
iodepth = 16
"""


def _scenario(
    transport: str = "",
    mtu: int | None = None,
    *,
    protocol: str | None = None,
    bw: str = "8Gbit",
    link_bw: str = "12Gbit",
    host: str = "",
    duration: str = "150ms",
) -> str:
    if protocol is None:
        protocol = "scsi" if transport in ("", "fc", "iscsi") else "nvme"
    path = (f'transport = "{transport}"\n' if transport else "") + (f"mtu = {mtu}\n" if mtu is not None else "")
    return BASE.format(duration=duration, protocol=protocol, host=host, bw=bw, link_bw=link_bw, path=path)


def _json(result) -> dict:
    d = json.loads(result.to_json())
    d.pop("engine")
    return d


@pytest.mark.parametrize(
    ("transport", "mtu"), [("fc", None), ("nvme-fc", None), ("iscsi", 1500), ("nvme-tcp", 1500), ("nvme-tcp", 9000), ("nvme-roce", 1500)]
)
def test_engines_agree_on_framed_scenarios(transport, mtu):
    sc = pathsel.loads_scenario(_scenario(transport, mtu), transport)
    policies = ["rr:iops=1", "latency"]
    fast = pathsel.simulate(sc, policies=policies, engine="fast", trace=True)
    ref = pathsel.simulate(sc, policies=policies, engine="reference", trace=True)
    assert _json(fast) == _json(ref)
    for f, r in zip(fast.runs, ref.runs):
        assert f.metrics.trace == r.metrics.trace
        assert (f.metrics.wire_busy == r.metrics.wire_busy).all()


def test_framing_costs_bytes_on_every_leg():
    """4 KiB reads: each costs its path's to-host wire 4,300 bytes framed (2 FCP_DATA + FCP_RSP), 4,096 plain, and
    the to-array wire 92 (FCP_CMND) framed, nothing plain."""
    per_io = {}
    for transport in ("", "fc"):
        text = _scenario(transport, bw="100Gbit", link_bw="100Gbit").replace('rw = "randrw"', 'rw = "randread"')
        r = pathsel.simulate(pathsel.loads_scenario(text.replace('bs = "4k/50:64k/30:1m/20"', 'bs = "4k"')), policies=["rr"], engine="fast")
        m = r.runs[0].metrics
        per_io[transport] = (m.wire_busy[:2, 1].sum() * 12.5e9 / m.completed, m.wire_busy[:2, 0].sum() * 12.5e9 / m.completed)
    assert per_io[""][0] == pytest.approx(4096, rel=0.01) and per_io[""][1] == 0.0
    assert per_io["fc"][0] == pytest.approx(4300, rel=0.01) and per_io["fc"][1] == pytest.approx(92, rel=0.01)


def test_a_gfc_speed_implies_fc_framing():
    sc = pathsel.loads_scenario(_scenario(bw="32GFC"))
    assert sc.model.paths[0].transport == "fc" and sc.model.paths[0].bandwidth == pytest.approx(3.4e9)
    nvme = pathsel.loads_scenario(_scenario(bw="32GFC", protocol="nvme"))
    assert nvme.model.paths[0].transport == "nvme-fc"
    plain = pathsel.loads_scenario(_scenario(bw="25GbE"))  # an Ethernet speed alone implies nothing
    assert plain.model.paths[0].transport is None


def test_a_host_s_transport_is_its_paths_default():
    sc = pathsel.loads_scenario(_scenario(host='[[hosts]]\nname = "h"\ntransport = "nvme-tcp"\nmtu = 9000\n', protocol="nvme"))
    from pathsel.model.compile import compile_model

    m = compile_model(sc, sc.runs[0])
    assert {(c.transport, c.mtu) for c in m.controllers} == {("nvme-tcp", 9000)}
    sc = pathsel.loads_scenario(_scenario("iscsi"))
    assert {(c.transport, c.mtu) for c in compile_model(sc, sc.runs[0]).controllers} == {("iscsi", 1500)}


# (scenario text, place, fragment): one located line, exit status 2
BAD = [
    (_scenario("fibre"), "paths[0].transport", "'fc', 'nvme-fc', 'iscsi', 'nvme-tcp' or 'nvme-roce'"),
    (_scenario("fc", 9000), "paths[0].mtu", "mtu = 9000 is for Ethernet transports"),
    (_scenario("nvme-fc", 1500), "paths[0].mtu", "mtu = 1500 is for Ethernet transports"),
    (_scenario("nvme-tcp", 0), "paths[0].mtu", "greater than or equal to 576"),
    (_scenario("nvme-tcp", -1500), "paths[0].mtu", "greater than or equal to 576"),
    (_scenario("nvme-tcp", 65536), "paths[0].mtu", "less than or equal to 9216"),
    (_scenario("", 1500), "paths[0].mtu", "needs a transport"),
    (_scenario("nvme-tcp", protocol="scsi"), "paths[0].transport", "'nvme-tcp' carries NVMe, but the scenario's protocol is 'scsi'"),
    (_scenario("fc", protocol="nvme"), "paths[0].transport", "'fc' carries SCSI, but the scenario's protocol is 'nvme'"),
    (_scenario(bw="12GFC"), "paths[0].bandwidth", "'12GFC': not a Fibre Channel speed (1GFC, 2GFC"),
    (_scenario(bw="2.5GFC"), "paths[0].bandwidth", "not a Fibre Channel speed"),
    (_scenario(bw="16MFC"), "paths[0].bandwidth", "not a Fibre Channel speed"),
    (_scenario(host='[[hosts]]\nname = "h"\ntransport = "fc"\nmtu = 1500\n'), "hosts[0].mtu", "is for Ethernet transports"),
    (_scenario(host='[[hosts]]\nname = "h"\nmtu = 1500\n'), "hosts[0].mtu", "needs a transport"),
    (_scenario("nvme-tcp", host='[[hosts]]\nname = "h"\ntransport = "fc"\n'), "hosts[0].transport", "'fc' carries SCSI"),
]


@pytest.mark.parametrize(("text", "place", "fragment"), BAD, ids=[f"{i}-{b[1]}" for i, b in enumerate(BAD)])
def test_bad_framing_input_is_one_located_line(text, place, fragment, tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(pathsel.ScenarioError) as info:
        pathsel.load_scenario(path)
    assert info.value.place == place, str(info.value)
    assert fragment in info.value.problem
    assert "\n" not in str(info.value)
    assert main(["simulate", str(path)]) == 2
    _out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith(f"pathsel: error: {path}: {place}: ")


# -- utilisation never above 1 ------------------------------------------------------------------------------------
@given(
    bs=st.sampled_from(["512", "4k", "8k", "64k", "256k", "1m"]),
    iodepth=st.integers(1, 64),
    bw=st.sampled_from(["1Gbit", "2Gbit", "4GFC", "10GbE", "123Mbit", "3Gbit"]),
    link_bw=st.sampled_from(["1Gbit", "1500Mbit", "5Gbit"]),
    transport=st.sampled_from(["", "fc", "iscsi"]),
    duration=st.sampled_from(["20ms", "37ms", "50ms"]),
)
@settings(max_examples=int(os.environ.get("PATHSEL_EXAMPLES", "25")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_wire_is_ever_more_than_busy(bs, iodepth, bw, link_bw, transport, duration):
    text = _scenario(transport, bw=bw, link_bw=link_bw, duration=duration).replace('bs = "4k/50:64k/30:1m/20"', f'bs = "{bs}"')
    text = text.replace("iodepth = 16", f"iodepth = {iodepth}")  # "4GFC" alone implies fc framing
    r = pathsel.simulate(pathsel.loads_scenario(text), policies=["rr"], engine="fast")
    for row in r.runs[0].links():
        assert 0.0 <= row["utilisation"] <= 1.0, row


def test_a_backlog_at_the_end_no_longer_counts():
    """A saturated link with 64 large reads queued: before the fix its busy seconds exceeded the run."""
    text = _scenario(bw="1Gbit", link_bw="1Gbit", duration="50ms").replace('bs = "4k/50:64k/30:1m/20"', 'bs = "1m"')
    text = text.replace("iodepth = 16", "iodepth = 64")
    r = pathsel.simulate(pathsel.loads_scenario(text), policies=["rr"], engine="fast").runs[0]
    m = r.metrics
    assert (m.wire_busy > r.model.end).any()  # the backlog: what the old figure divided by the run
    rows = r.links()
    assert max(row["utilisation"] for row in rows) <= 1.0
    assert max(row["utilisation"] for row in rows) > 0.95


def test_the_jumbo_frames_sim_gets_the_links_payload_rate():
    """sims/nvme-tcp-jumbo-frames.toml: two saturated 10GbE paths carry 2 x 1.25e9 x payload share of MB/s."""
    text = pathsel.examples.path("nvme-tcp-jumbo-frames").read_text()
    for mtu in (1500, 9000):
        sc = pathsel.loads_scenario(text.replace("mtu = 1500", f"mtu = {mtu}"))
        run = pathsel.simulate(sc, duration=0.2, engine="fast").runs[0]
        share = 65536 / wire_bytes("nvme-tcp", mtu, 65536, "read")[0]
        assert run.metrics.bytes_by_op["read"] / 0.2 == pytest.approx(2 * 1.25e9 * share, rel=0.01)
        assert all(row["utilisation"] <= 1.0 for row in run.links())


def test_links_show_the_payload_rate_and_share_of_a_framed_wire():
    r = pathsel.simulate(pathsel.examples.path("nvme-tcp-jumbo-frames"), duration=0.1, engine="fast")
    rows = [w for w in r.runs[0].links() if w["direction"] == "to_host"]
    share = 65536 / wire_bytes("nvme-tcp", 1500, 65536, "read")[0]
    for w in rows:
        assert w["payload_share"] == pytest.approx(share, rel=1e-9)
        assert w["payload_mb_s"] == pytest.approx(w["utilisation"] * 1250 * share, rel=2e-3)
    assert {"payload_mb_s", "payload_share"} <= set(r.links().columns)
    plain = pathsel.simulate(pathsel.loads_scenario(_scenario()), policies=["rr"], engine="fast")
    assert "payload_mb_s" not in plain.links().columns  # no transport: the table and the JSON as before
