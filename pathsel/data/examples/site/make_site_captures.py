"""Write the worked example's captures beside this file (README.md says what they are): a host's esxcli listings and a fio run.

Run from a checkout: ``python sims/site/make_site_captures.py``. The same
seed gives the same files, byte for byte. The esxcli files follow the
layout of VMware's esxcli documentation (tests/data/import/README.md cites
it); the fio file is fio's JSON+ layout (fio ``stat.c``), filled with a
pathsel simulation of the site whose figures the worked example then finds
again: replication one way 0.4 ms, array service 150 us (exponential), paths
60 us one way over 8 Gbit/s Fibre Channel, one VM writing 32 KB blocks, 32
outstanding.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
DEVICE = "naa.624a9370b8d5e3c2f1a04e5c00011a2b"
ARRAYS = {"A": "524a937a8f0a2b00", "B": "524a93712c445e00"}  # the two FlashArrays' target node names (WWNN)
HBAS = {"vmhba1": "20000024ff4d9a9e:21000024ff4d9a9e", "vmhba2": "20000024ff4d9a9f:21000024ff4d9a9f"}
TARGETS = [(0, "A", "10"), (1, "A", "11"), (2, "B", "10"), (3, "B", "11")]
TRUTH = {"replication": "0.4ms", "service": "150us", "path": "60us", "bandwidth": "8Gbit"}
RUNTIME_S = 20.0


def wwn(h: str) -> str:
    return ":".join(h[i:i + 2] for i in range(0, len(h), 2))


def esxcli() -> tuple[str, str]:
    working = ", ".join(f"{h}:C0:T{t}:L1" for h in HBAS for t, a, _ in TARGETS if a == "A")
    device = (
        f"{DEVICE}\n"
        f"   Device Display Name: PURE Fibre Channel Disk ({DEVICE})\n"
        "   Storage Array Type: VMW_SATP_ALUA\n"
        "   Storage Array Type Device Config: {implicit_support=on; explicit_support=off; explicit_allow=on; alua_followover=on; "
        "action_OnRetryErrors=on; {TPG_id=1,TPG_state=AO}{TPG_id=2,TPG_state=ANO}}\n"
        "   Path Selection Policy: VMW_PSP_RR\n"
        "   Path Selection Policy Device Config: {policy=iops,iops=1,bytes=10485760,useANO=0; lastPathIndex=2: NumIOsPending=0,numBytesPending=0}\n"
        "   Path Selection Policy Device Custom Config:\n"
        f"   Working Paths: {working}\n"
        "   Is USB: false\n"
    )
    blocks = []
    for h, ad in HBAS.items():
        for t, a, port in TARGETS:
            node = ARRAYS[a]
            wwpn = node[:-2] + port
            uid = f"fc.{ad}-fc.{node}:{wwpn}-{DEVICE}"
            blocks.append(
                f"{uid}\n   UID: {uid}\n   Runtime Name: {h}:C0:T{t}:L1\n   Device: {DEVICE}\n"
                f"   Device Display Name: PURE Fibre Channel Disk ({DEVICE})\n   Adapter: {h}\n   Channel: 0\n   Target: {t}\n"
                "   LUN: 1\n   Plugin: NMP\n   State: active\n   Transport: fc\n"
                f"   Adapter Identifier: fc.{ad}\n   Target Identifier: fc.{node}:{wwpn}\n"
                f"   Adapter Transport Details: WWNN: {wwn(ad[:16])} WWPN: {wwn(ad[17:])}\n"
                f"   Target Transport Details: WWNN: {wwn(node)} WWPN: {wwn(wwpn)}\n   Maximum I/O Size: 4194304\n"
            )
    return device, "\n".join(blocks)


# fio's latency histogram (stat.h: FIO_IO_U_PLAT_BITS 6): the value fio prints for a bucket
def _idx(v: int) -> int:
    msb = v.bit_length() - 1 if v > 0 else 0
    if msb <= 6:
        return v
    err = msb - 6
    return ((err + 1) << 6) + (63 & (v >> err))


def _val(i: int) -> int:
    if i < 128:
        return i
    err = (i >> 6) - 1
    return int((1 << (err + 6)) + ((i % 64) + 0.5) * (1 << err))


PERCENTILES = [1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99]


def _lat(ns: np.ndarray) -> dict[str, Any]:
    counts = np.bincount(np.array([_idx(int(v)) for v in ns]))
    cum = np.cumsum(counts)
    pct = {f"{p:f}": _val(int(np.searchsorted(cum, math.ceil(p / 100 * len(ns))))) for p in PERCENTILES}
    return {"min": int(ns.min()), "max": int(ns.max()), "mean": float(ns.mean()), "stddev": float(ns.std()), "N": int(len(ns)),
            "percentile": pct, "bins": {str(_val(i)): int(c) for i, c in enumerate(counts) if c}}


def fio(latencies_s: np.ndarray, per_second: np.ndarray) -> str:
    ns = np.maximum(np.round(latencies_s * 1e9), 1).astype(np.int64)
    n, runtime_ms, bs = len(ns), int(RUNTIME_S * 1000), 32768
    empty = {"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0, "short_ios": 0,
             "drop_ios": 0, "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}
    write = {"io_bytes": n * bs, "io_kbytes": n * bs >> 10, "bw_bytes": 1000 * n * bs // runtime_ms, "bw": (1000 * n * bs // runtime_ms) >> 10,
             "iops": 1000.0 * n / runtime_ms, "runtime": runtime_ms, "total_ios": n, "short_ios": 0, "drop_ios": 0,
             "clat_ns": _lat(ns), "iops_min": int(per_second.min()), "iops_max": int(per_second.max()),
             "iops_mean": float(per_second.mean()), "iops_stddev": float(per_second.std()), "iops_samples": len(per_second)}
    job = {"jobname": "vm1", "groupid": 0, "error": 0, "elapsed": int(RUNTIME_S) + 1,
           "job options": {"name": "vm1", "filename": "/dev/sdb", "rw": "randwrite", "bs": "32k", "iodepth": "32", "numjobs": "1"},
           "read": dict(empty), "write": write, "trim": dict(empty), "job_runtime": runtime_ms}
    doc = {"fio version": "fio-3.36", "timestamp": 1736935200, "time": "Wed Jan 15 10:00:00 2025",
           "global options": {"ioengine": "libaio", "direct": "1", "time_based": "1", "runtime": str(int(RUNTIME_S))}, "jobs": [job]}
    return json.dumps(doc, indent=2).replace('": ', '" : ') + "\n"


def main() -> None:
    import pathsel

    device, paths = esxcli()
    (HERE / "esxcli-nmp-device-list.txt").write_text(device)
    (HERE / "esxcli-core-path-list.txt").write_text(paths)
    imp = pathsel.import_outputs("esxcli", [HERE / "esxcli-nmp-device-list.txt", HERE / "esxcli-core-path-list.txt"])
    text = (imp.text.replace('one_way_latency = "1ms"', f'one_way_latency = "{TRUTH["replication"]}"')
            .replace('mean = "100us"', f'mean = "{TRUTH["service"]}"')
            .replace('one_way_latency = "50us"', f'one_way_latency = "{TRUTH["path"]}"')
            .replace('# bandwidth = "16Gbit"', f'bandwidth = "{TRUTH["bandwidth"]}"')
            .replace('rw = "randread"', 'rw = "randwrite"').replace('bs = "4k"', 'bs = "32k"'))
    res = pathsel.simulate(pathsel.loads_scenario(text, "site truth"), duration=RUNTIME_S, seed=2025, trace=True)
    run = res.runs[0]
    ramp = run.model.ramp
    assert run.metrics.trace is not None  # trace=True
    rows = [(start, end) for _, _, _, _, start, end, _, _ in run.metrics.trace if start >= ramp and end <= ramp + RUNTIME_S]
    lat = np.array([e - s for s, e in rows])
    ends = np.array([e for _, e in rows])
    per_second = np.bincount(((ends - ramp) // 1.0).astype(int), minlength=int(RUNTIME_S))[: int(RUNTIME_S)]
    (HERE / "fio-vm1.json").write_text(fio(lat, per_second.astype(float)))
    print(f"{len(lat)} writes, {len(lat) / RUNTIME_S:,.0f} IOPS, mean {lat.mean() * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
