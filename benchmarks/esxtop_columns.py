"""The esxtop batch CSV reader's time against the capture's width (issue 50): it must grow linearly in the columns.

    python benchmarks/esxtop_columns.py                      # 2,000 to 50,000 device and path columns
    python benchmarks/esxtop_columns.py --columns 50000 --rows 5

Each file has N devices (``Physical Disk SCSI Device(naa.N)\\Commands/sec``) and N paths named after their device
and a dash with no ESXi runtime name (``Physical Disk Path(naa.N-sdN)\\Commands/sec``, as for Linux or NVMe paths),
so 2N + 1 columns, and a few samples. The reader once tried every device name, longest first, against each such
path column (work in the square of the columns; the issue measured 1.0, 3.1 and 9.6 s for 2,000, 4,000 and 8,000 of each, and 50,000 did
not finish in a minute). It prints the seconds per size and the seconds per thousand columns, which stay about flat
when the work is linear (issue 50 measured 2.2 s for 50,000 of each, 100,001 columns, on a shared 2-core machine).
No wall-clock limit is asserted in the unit tests (a shared machine's seconds vary); this script is where the figure
comes from.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pathsel.measured.esxtop import read_esxtop  # noqa: E402


def capture(n: int, rows: int) -> str:
    """esxtop -b output with ``n`` devices and ``n`` paths (one per device), ``rows`` samples 5 s apart."""
    header = ["(PDH-CSV 4.0) (UTC)(0)"]
    header += [f"\\\\esxi01\\Physical Disk SCSI Device(naa.{i})\\Commands/sec" for i in range(n)]
    header += [f"\\\\esxi01\\Physical Disk Path(naa.{i}-sd{i})\\Commands/sec" for i in range(n)]
    lines = [",".join(f'"{c}"' for c in header)]
    for r in range(rows):
        values = [f"01/15/2025 10:00:{5 * r:02d}"] + [str(100 + (i + r) % 7) for i in range(2 * n)]
        lines.append(",".join(f'"{c}"' for c in values))
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--columns", type=int, nargs="*", default=[2_000, 4_000, 8_000, 50_000], help="devices (and paths) per file")
    ap.add_argument("--rows", type=int, default=3, help="samples per file")
    args = ap.parse_args()
    print(f"{'devices':>8} {'paths':>8} {'columns':>8} {'MB':>6} {'seconds':>8} {'s per 1k columns':>17}")
    for n in args.columns:
        text = capture(n, args.rows)
        start = time.perf_counter()
        m = read_esxtop(text, "bench.csv")
        seconds = time.perf_counter() - start
        assert m.device is not None
        columns = 2 * n + 1
        print(f"{n:>8,} {n:>8,} {columns:>8,} {len(text) / 1e6:>6.1f} {seconds:>8.2f} {seconds / columns * 1e3:>17.4f}", flush=True)


if __name__ == "__main__":
    main()
