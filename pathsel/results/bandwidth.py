"""Bandwidth as fio prints it: binary MiB/s first, decimal MB/s beside it.

fio's normal output leads with the binary unit and puts the decimal one in
parentheses, ``read: IOPS=3588, BW=14.0MiB/s (14.7MB/s)`` (fio HOWTO,
"Interpreting the output", Jens Axboe,
https://fio.readthedocs.io/en/latest/fio_doc.html#interpreting-the-output);
a reader comparing pathsel's table with fio's finds both. Results keep MB/s
(10^6 bytes a second) in their JSON and DataFrames (``mbps``); only the
tables a person reads show both.
"""

from __future__ import annotations

import math

__all__ = ["BW_HEAD", "MIB", "mib_s", "fio_bw"]

MIB = 2**20  # bytes in a MiB
BW_HEAD = "MiB/s (MB/s)"  # the column's heading: fio's order


def mib_s(mbps: float) -> float:
    """MB/s (10^6 bytes a second) as MiB/s (2^20 bytes a second)."""
    return mbps * 1e6 / MIB


def fio_bw(mbps: float) -> str:
    """``"229 (240)"``: MiB/s, then MB/s in parentheses, as fio's ``BW=`` reads; a dash for no figure.

    Three significant figures at least, as fio gives them (``14.0MiB/s``, ``9.78MiB/s``, ``510MiB/s``):
    the column stays narrow, and the JSON keeps the exact ``mbps``.
    """
    if mbps is None or not math.isfinite(mbps):
        return "–"
    return f"{_sig(mib_s(mbps))} ({_sig(mbps)})"


def _sig(x: float) -> str:
    if x == 0:
        return "0"  # no traffic (a policy whose I/Os all failed): nothing to round
    digits = 0 if abs(x) >= 99.95 else (1 if abs(x) >= 9.995 else 2)  # the boundaries rounding crosses: 99.96 -> "100"
    return f"{x:,.{digits}f}"
