"""Frames on the wire: the bytes each leg of an exchange puts on a link, by transport (issue 33).

A path (nexus) with a ``transport`` serialises, on each leg of an exchange,
its payload plus every header, trailer and gap its frames carry, and the
command, transfer-ready and status frames too (without a transport those
are free and data is payload bytes only). One leg is one or more messages
(information units, PDUs, RDMA messages) framed either

* **one by one** (``MODE_MESSAGES``: FC, RoCEv2): each message is cut into
  frames of at most ``pay`` bytes; a frame costs ``ovh`` bytes more, or
* **as a byte stream** (``MODE_STREAM``: TCP): the leg's messages are one run
  of bytes cut into segments of at most the MSS; a segment costs ``ovh``.

The figures (docs/model.md, "Frames and line rates", gives their sources):

==============  ===========================================================================================
FC, FC-NVMe     SOF 4 + header 24 + CRC 4 + EOF 4 + six primitive signals (IDLE/R_RDY) between frames, 24:
                60 bytes a frame; data frames carry 2,048 bytes (a 2,112-byte data field at most, FC-FS;
                2,048 is what HBAs and switches negotiate as the receive data field size at PLOGI).
                FCP_CMND 32 (16-byte CDB), FCP_XFER_RDY 12, FCP_RSP 24 (no sense data) (FCP-4);
                NVMe_CMND IU 96, NVMe ERSP IU 32, NVMe XFER_RDY 12 (FC-NVMe; Linux include/linux/nvme-fc.h).
Ethernet        preamble + SFD 8, header 14, FCS 4, inter-frame gap 12: 38 bytes a frame (IEEE 802.3; no
                VLAN tag); IPv4 20 (RFC 791, no options); TCP 20 + 12 of the timestamps option (RFC 7323,
                on in Linux by default: net.ipv4.tcp_timestamps = 1): 90 bytes a segment, MSS = MTU - 52.
iSCSI           a 48-byte BHS per PDU (RFC 7143), no AHS or digests; Data-In/Data-Out PDUs carry at most
                MaxRecvDataSegmentLength = 8,192 bytes (RFC 7143's default); R2T and SCSI Response 48.
NVMe/TCP        CapsuleCmd 72 (8 + 64-byte SQE), CapsuleResp 24 (8 + 16-byte CQE), C2HData/H2CData and R2T
                24; header and data digests off (Linux's default); a write's data in the command capsule.
RoCEv2          Ethernet 38 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4: 82 bytes a packet; the IB path MTU is the
                largest of 256 ... 4,096 whose packet fits the Ethernet MTU (1,024 at 1,500; 4,096 at
                9,000); an RDMA WRITE's first packet carries a RETH, 16. NVMe/RDMA: a 64-byte command
                capsule (SEND), a read's data by RDMA WRITE, the 16-byte response capsule (SEND).
==============  ===========================================================================================

Not counted (assumptions, docs/model.md): the reverse direction's TCP ACKs and RoCE ACKs, VLAN tags, FEC
and line encoding (the link speed's job: ``units.fc_line_rate``), Ethernet padding (no frame here is below 64 bytes).

:func:`leg_wire` is plain integer arithmetic on one row of :func:`frame_row`: the reference engine calls
it as it is and the fast engine compiles the same function (engine/fast/wire.py), so both count the same
bytes.
"""

from __future__ import annotations

from typing import Any

# the row of per-nexus framing figures (frame_row): index names
F_MODE, F_PAY, F_OVH, F_CMD, F_STS, F_XRDY, F_DHDR, F_DSEG, F_DEXT, F_INLINE, F_NVME = range(11)
N_FRAME = 11
MODE_NONE, MODE_MESSAGES, MODE_STREAM = 0, 1, 2

TRANSPORTS = ("fc", "nvme-fc", "iscsi", "nvme-tcp", "nvme-roce")
ETHERNET = ("iscsi", "nvme-tcp", "nvme-roce")

# FC-FS: SOF, frame header, CRC, EOF, and the six primitive signals (4 bytes each) between frames
FC_SOF, FC_HEADER, FC_CRC, FC_EOF, FC_IDLES = 4, 24, 4, 4, 6 * 4
FC_FRAME_OVERHEAD = FC_SOF + FC_HEADER + FC_CRC + FC_EOF + FC_IDLES  # 60
FC_MAX_DATA_FIELD = 2112
FC_DATA_PAYLOAD = 2048  # what a data frame carries (the receive data field size HBAs negotiate)
FCP_CMND, FCP_XFER_RDY, FCP_RSP = 32, 12, 24
NVME_FC_CMND, NVME_FC_ERSP, NVME_FC_XFER_RDY = 96, 32, 12
# IEEE 802.3 and the IP suite
ETH_PREAMBLE_SFD, ETH_HEADER, ETH_FCS, ETH_IFG = 8, 14, 4, 12
ETH_FRAME_OVERHEAD = ETH_PREAMBLE_SFD + ETH_HEADER + ETH_FCS + ETH_IFG  # 38
IPV4, TCP, TCP_TIMESTAMPS, UDP = 20, 20, 12, 8
TCP_SEGMENT_OVERHEAD = ETH_FRAME_OVERHEAD + IPV4 + TCP + TCP_TIMESTAMPS  # 90
ISCSI_BHS, ISCSI_MAX_RECV_DSL = 48, 8192
NVME_TCP_CAPSULE_CMD, NVME_TCP_CAPSULE_RESP, NVME_TCP_DATA, NVME_TCP_R2T = 72, 24, 24, 24
ROCE_BTH, ROCE_ICRC, ROCE_RETH = 12, 4, 16
ROCE_PACKET_OVERHEAD = ETH_FRAME_OVERHEAD + IPV4 + UDP + ROCE_BTH + ROCE_ICRC  # 82
NVME_SQE, NVME_CQE = 64, 16
IB_MTUS = (4096, 2048, 1024, 512, 256)


def tcp_mss(mtu: int) -> int:
    """Payload bytes of one TCP segment at this IP MTU (IPv4 and TCP headers with timestamps taken off)."""
    return mtu - IPV4 - TCP - TCP_TIMESTAMPS


def ib_mtu(mtu: int) -> int:
    """RoCEv2's path MTU: the largest IB MTU whose packet (with IP, UDP, BTH, RETH and ICRC) fits the Ethernet MTU."""
    for m in IB_MTUS:
        if m + IPV4 + UDP + ROCE_BTH + ROCE_RETH + ROCE_ICRC <= mtu:
            return m
    return IB_MTUS[-1]


def frame_row(transport: str, mtu: int) -> tuple[int, ...]:
    """The framing figures of a nexus (indexed by the F_* names); all zero for no transport."""
    row = [0] * N_FRAME
    if not transport:
        return tuple(row)
    if transport in ("fc", "nvme-fc"):
        nvme = transport == "nvme-fc"
        row[F_MODE], row[F_PAY], row[F_OVH] = MODE_MESSAGES, FC_DATA_PAYLOAD, FC_FRAME_OVERHEAD
        row[F_CMD] = NVME_FC_CMND if nvme else FCP_CMND
        row[F_STS] = NVME_FC_ERSP if nvme else FCP_RSP
        row[F_XRDY] = NVME_FC_XFER_RDY if nvme else FCP_XFER_RDY
        row[F_NVME] = 1 if nvme else 0
    elif transport == "iscsi":
        row[F_MODE], row[F_PAY], row[F_OVH] = MODE_STREAM, tcp_mss(mtu), TCP_SEGMENT_OVERHEAD
        row[F_CMD] = row[F_STS] = row[F_XRDY] = row[F_DHDR] = ISCSI_BHS
        row[F_DSEG] = ISCSI_MAX_RECV_DSL
    elif transport == "nvme-tcp":
        row[F_MODE], row[F_PAY], row[F_OVH] = MODE_STREAM, tcp_mss(mtu), TCP_SEGMENT_OVERHEAD
        row[F_CMD], row[F_STS], row[F_XRDY], row[F_DHDR] = NVME_TCP_CAPSULE_CMD, NVME_TCP_CAPSULE_RESP, NVME_TCP_R2T, NVME_TCP_DATA
        row[F_INLINE] = row[F_NVME] = 1
    elif transport == "nvme-roce":
        row[F_MODE], row[F_PAY], row[F_OVH] = MODE_MESSAGES, ib_mtu(mtu), ROCE_PACKET_OVERHEAD
        row[F_CMD], row[F_STS], row[F_DEXT] = NVME_SQE, NVME_CQE, ROCE_RETH
        row[F_INLINE] = row[F_NVME] = 1
    else:
        raise ValueError(f"unknown transport {transport!r} (one of {', '.join(TRANSPORTS)})")
    return tuple(row)


def leg_wire(f: Any, to_host: int, nbytes: int, xrdy: int) -> tuple[int, int]:
    """(wire bytes, frames) of one leg on a nexus framed by row ``f``.

    A leg to the array with no data is a command; one with data is SCSI write data (FCP_DATA, Data-Out) or,
    on NVMe transports, the command with its data; a leg to the host with no data is a status, or the transfer-
    ready (``xrdy`` = 1: FCP_XFER_RDY, R2T); one with data is read data and then the status. Numba compiles
    this function as it is (engine/fast/wire.py): ints and branches only.
    """
    pay = f[F_PAY]
    lead = 0  # a message before the data (a command), tail: one after it (a status)
    tail = 0
    joined = 0  # the data travels in the lead message (NVMe/TCP, NVMe/RDMA in-capsule data)
    if to_host == 0:
        if nbytes == 0:
            lead = f[F_CMD]
        elif f[F_NVME] != 0:
            lead = f[F_CMD]
            joined = f[F_INLINE]
    elif nbytes == 0:
        lead = f[F_XRDY] if xrdy != 0 else f[F_STS]
    else:
        tail = f[F_STS]
    data = 0  # the data message's bytes (with its PDU headers)
    ext = 0  # header bytes outside the frames' payload (RoCE's RETH)
    if nbytes > 0:
        if joined != 0:
            data = lead + nbytes
            lead = 0
        else:
            pdus = 1
            if f[F_DSEG] > 0:
                pdus = (nbytes + f[F_DSEG] - 1) // f[F_DSEG]
            data = nbytes + pdus * f[F_DHDR]
            ext = f[F_DEXT]
    if f[F_MODE] == MODE_STREAM:
        total = lead + data + tail
        frames = max(1, (total + pay - 1) // pay)
        return total + frames * f[F_OVH], frames
    frames = 0
    total = ext
    for m in (lead, data, tail):
        if m > 0:
            frames += max(1, (m + pay - 1) // pay)
            total += m
    return total + frames * f[F_OVH], frames


# -- the speeds people write: units.parse_bandwidth ("32GFC" -> 3,400 MB/s: units.FC_SPEEDS); "25GbE" is 25 Gbit/s,
# already the MAC's rate (IEEE 802.3 runs the line at 25.78125 GBd so that 64b/66b leaves 25 Gb/s)


def efficiency(transport: str, mtu: int, bs: int, read: bool = True) -> float:
    """Payload bytes over wire bytes of one I/O's data leg (with its status, for a read)."""
    f = frame_row(transport, mtu)
    wire, _ = leg_wire(f, 1 if read else 0, bs, 0)
    return bs / wire


def wire_bytes(transport: str, mtu: int, payload: int, kind: str) -> tuple[int, int]:
    """(wire bytes, frames) of one leg: ``kind`` "read" (data and status to the host), "write" (the data to the
    array; NVMe: the command with it), "command", "status", "xfer_rdy"."""
    f = frame_row(transport, mtu or 1500)
    if kind == "read":
        return leg_wire(f, 1, payload, 0)
    if kind == "write":
        return leg_wire(f, 0, payload, 0)
    if kind == "command":
        return leg_wire(f, 0, 0, 0)
    if kind == "status":
        return leg_wire(f, 1, 0, 0)
    if kind == "xfer_rdy":
        return leg_wire(f, 1, 0, 1)
    raise ValueError(f"unknown leg kind {kind!r}")


__all__ = ["TRANSPORTS", "efficiency", "frame_row", "leg_wire", "tcp_mss", "wire_bytes"]
