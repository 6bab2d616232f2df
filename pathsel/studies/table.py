"""A sweep's results table: its columns, reading it back, and summaries over replications.

One row per scenario x point x replication x policy (see :mod:`pathsel.studies.sweep`);
:func:`read_table` reads a ``.parquet`` or ``.csv`` file written by a sweep,
:func:`summarize` gives means and 95 % confidence intervals over replications.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ScenarioError
from ..results import RunResult
from ..stats import t975

__all__ = [
    "METRIC_COLUMNS",
    "SUMMARY_METRICS",
    "INT_METRICS",
    "KEY_COLUMNS",
    "NO_PARAMS",
    "CONVERGENCE_BAND",
    "DEFAULT_REPLICATIONS",
    "read_table",
    "number_column",
    "param_columns",
    "summarize",
    "convergence_time",
    "kavg_mean_us",
    "qfull_count",
]

DEFAULT_REPLICATIONS = 3
CONVERGENCE_BAND = 0.10  # IOPS within +-10 % of the level it settles at counts as converged

# Every metric of Result.summary(), then what a sweep adds: simulated I/Os, convergence after faults, failed I/Os,
# esxtop's KAVG (mean time queued in the host; empty where no host queue is modelled), and the QUEUE FULL statuses
# target ports returned in the measured window (empty where no port has a queue depth: none could be).
METRIC_COLUMNS = (
    "iops",
    "mbps",
    "mean_us",
    "p50_us",
    "p99_us",
    "p999_us",
    "max_us",
    "paths_used",
    "expected_iops",
    "ios",
    "convergence_s",
    "failed",
    "kavg_us",
    "qfull",
)
INT_METRICS = {"paths_used", "ios", "failed"}
# Summaries and recommendations read these; expected_iops is the file's figure, not a measurement.
SUMMARY_METRICS = ("iops", "mbps", "mean_us", "p50_us", "p99_us", "p999_us", "max_us", "paths_used", "convergence_s", "kavg_us", "qfull")
KEY_COLUMNS = ("scenario", "point", "replication", "seed", "policy", "spec")
NO_PARAMS = "defaults"  # the point text of a sweep without parameters


def read_table(path: str | Path) -> pd.DataFrame:
    """A sweep's results table from a ``.parquet`` or ``.csv`` file (ScenarioError when it is not one)."""
    p = Path(path)
    if not p.exists():
        parts = p.with_name(p.name + ".parts")
        if parts.is_dir():
            raise ScenarioError(str(p), "", "the sweep writing it has not finished (its part files are there): run it again to finish")
        raise ScenarioError(str(p), "", "no such file")
    if not p.is_dir() and not p.is_file():  # a device or a pipe (/dev/zero as x.csv) has no end to read to
        raise ScenarioError(str(p), "", "is not a regular file (a device or a pipe): sweep results are a .parquet or .csv file")
    try:
        if p.suffix.lower() == ".csv":
            df = pd.read_csv(p, keep_default_na=False, na_values=[""])
        elif p.suffix.lower() == ".parquet":
            df = pd.read_parquet(p)
        else:
            raise ScenarioError(str(p), "", "sweep results are a .parquet or .csv file")
    except ScenarioError:
        raise
    except IsADirectoryError:
        raise ScenarioError(str(p), "", "is a directory, not a results file") from None
    except Exception as e:
        raise ScenarioError(str(p), "", f"cannot read: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    missing = [c for c in ("scenario", "point", "replication", "policy", "spec", "iops", "p99_us") if c not in df.columns]
    if missing:
        raise ScenarioError(str(p), "", f"not a pathsel sweep table (no column {missing[0]!r})")
    # number columns read as text hold a value that is not one ("abc"), and whole-number columns read as floats a
    # fraction or a blank: name its row and column here, not in pandas' words wherever the column is first used;
    # columns already of their kind are left as they are
    for c in (*METRIC_COLUMNS, "replication", "seed", "timeout_scale"):
        whole = c in ("replication", "seed") or c in INT_METRICS
        if c in df.columns and not (pd.api.types.is_integer_dtype if whole else pd.api.types.is_numeric_dtype)(df[c]):
            df[c] = number_column(df[c], "int64" if whole else "float64", str(p))
    return df


def number_column(col: pd.Series, kind: str, source: str) -> pd.Series:
    """``col`` as ``kind`` (int64 or float64), or a located ScenarioError for its first value that is not one."""
    numbers = pd.to_numeric(col, errors="coerce")
    # text to_numeric could not read ("abc"); a blank and "nan" are a figure with no value, as written
    bad = numbers.isna() & col.notna() & (col.astype(str).str.strip().str.lower() != "nan")
    whole = kind.startswith("int")
    if whole:  # astype would truncate 1.5 to 1, and fail on a blank with pandas' own message
        v = numbers.to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            bad |= ~(np.isfinite(v) & (v == np.floor(v)))
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        value = col.iloc[i]
        shown = "a blank" if value is None or (isinstance(value, float) and math.isnan(value)) else repr(str(value)[:40])
        need = "a whole number" if whole else "a number"
        raise ScenarioError(source, f"row {i + 1}, column {col.name}", f"{shown} is not {need}")
    return numbers.astype(kind)


def param_columns(table: pd.DataFrame) -> list[str]:
    """The swept parameters' columns of a results table (between ``point`` and ``replication``)."""
    cols = list(table.columns)
    return cols[cols.index("point") + 1 : cols.index("replication")]


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Means and 95 % confidence intervals over replications (Student's t).

    One row per scenario x point x policy x metric: ``n``, ``mean``, ``std``,
    ``ci95`` (half-width), ``ci95_low``, ``ci95_high``. Metrics with no value
    (convergence without faults) are left out.
    """
    params = param_columns(table)
    keys = ["scenario", "point", *params, "policy"]
    rows = []
    for key, g in table.groupby(keys, sort=False, dropna=False):
        for metric in SUMMARY_METRICS:
            if metric not in g:
                continue
            v = g[metric].dropna().astype(float)
            n = len(v)
            if not n:
                continue
            mean = float(v.mean())
            std = float(v.std(ddof=1)) if n > 1 else math.nan
            half = t975(n - 1) * std / math.sqrt(n) if n > 1 else math.nan
            rows.append(
                {
                    **dict(zip(keys, key)),
                    "metric": metric,
                    "n": n,
                    "mean": mean,
                    "std": std,
                    "ci95": half,
                    "ci95_low": mean - half,
                    "ci95_high": mean + half,
                }
            )
    return pd.DataFrame(rows, columns=[*keys, "metric", "n", "mean", "std", "ci95", "ci95_low", "ci95_high"])


def convergence_time(run: RunResult, band: float = CONVERGENCE_BAND) -> float:
    """Seconds from the last fault until IOPS is back within ``band`` of its level before the first fault.

    The level before is the mean IOPS of the later half of the measured
    intervals (the scenario's ``interval``) that end before the first fault
    in the window (the later half: after the policy's own start-up). The time
    runs from the last fault to the start of the first interval after it
    with IOPS at least ``(1 - band)`` x that level; when there is none, to the
    end of the run (a lower bound). NaN when no fault falls in the measured
    window or no interval precedes the first. Later dips (latency round
    robin's sampling windows, say) are in the run's IOPS and p99, not here.
    The resolution is ``interval``: set it well below the times you compare.
    """
    model, m = run.model, run.metrics
    times = [f.at for f in model.faults if model.ramp <= f.at < model.end]
    if not times:
        return math.nan
    first, last = min(times), max(times)
    iops = np.asarray(m.ts_ios, dtype=float) / m.interval
    starts = np.arange(len(iops)) * m.interval
    ends = starts + m.interval
    whole = (starts >= model.ramp - 1e-12) & (ends <= model.end + 1e-12)  # a cut-off interval would look like a drop
    before = np.flatnonzero(whole & (ends <= first + 1e-12))
    if not len(before):
        return math.nan
    level = iops[before[len(before) // 2 :]].mean()
    after = np.flatnonzero(whole & (ends > last))
    back = after[iops[after] >= (1.0 - band) * level]
    if not len(back):
        return float(model.end - last)
    return float(max(starts[back[0]] - last, 0.0))


def kavg_mean_us(run: RunResult) -> float:
    """esxtop's KAVG over the measured window: the mean time an I/O waited in the host's queues (µs).

    NaN where the run models no host queue (no device or adapter queue depth, no open-loop workload, no
    target-port limit): there KAVG is not a figure the model has, rather than a measured 0.
    """
    if not (run.host_queued or run.port_limited) or not run.metrics.kavg.n:
        return math.nan
    return float(run.latency_split_us["kavg"]["mean"])


def qfull_count(run: RunResult) -> float:
    """The QUEUE FULL statuses target ports returned in the measured window, all devices together (esxtop's QFULL).

    NaN where no target port has a ``port_queue_depth``: no port could answer QUEUE FULL, so a 0 would be a
    figure the model does not have. A count, kept as a float column so that NaN can stand for that.
    """
    if not run.port_limited or run.metrics.dev_qfull is None:
        return math.nan
    return float(run.metrics.dev_qfull.sum())
