"""A sweep's results table: typed columns in plan order, saved as runs finish and read back to resume.

:class:`ResultsStore` appends rows to a CSV file (one write per flush: a kill
leaves at most one cut line, trimmed on resume) or writes Parquet part files
merged at the end; every whole-file write (a part, the merged or sorted table)
goes through :func:`pathsel.outputs.atomic_path` (a temporary file renamed
over the target); :func:`typed_table` gives every column one order and one
dtype whatever the rows came from, and :func:`in_plan_order` sorts rows as
the plan lists them.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ScenarioError
from ..outputs import atomic_path
from ..scenario.overrides import format_value
from .sweep_plan import SweepPlan
from .table import INT_METRICS, METRIC_COLUMNS, number_column

__all__ = ["ResultsStore", "typed_table", "in_plan_order", "whole_records"]


def whole_records(data: bytes) -> int:
    """The length of ``data``'s longest prefix of whole CSV records: up to a newline outside quotes.

    A record ends at a newline; a newline inside a quoted field (a scenario file or label holding one) does not
    end it, and is inside quotes exactly when an odd number of ``"`` come before it (RFC 4180 doubles a quote
    within a quoted field: "Common Format and MIME Type for CSV Files", Y. Shafranovich, IETF, 2005,
    https://www.rfc-editor.org/rfc/rfc4180).
    """
    end = data.rfind(b"\n") + 1
    while end > 0 and data.count(b'"', 0, end) % 2:
        end = data.rfind(b"\n", 0, end - 1) + 1
    return end


def typed_table(df: pd.DataFrame, plan: SweepPlan, source: str = "<results>") -> pd.DataFrame:
    """The table's columns in one order and one dtype each, whether rows come from memory, CSV or Parquet.

    A value a number column cannot hold (text, a fraction or a blank in a whole-number column) is a ScenarioError
    naming ``source``, the row (1 = the first after the header) and the column."""
    df = df.reindex(columns=plan.columns)
    for c in plan.columns:
        if c in plan.dtypes:
            kind = plan.dtypes[c]
        elif c in ("replication", "seed") or c in INT_METRICS:
            kind = "int64"
        elif c in METRIC_COLUMNS:
            kind = "float64"
        else:
            kind = "str"
        if kind == "str":
            col = df[c].map(lambda v: v if isinstance(v, str) or (isinstance(v, float) and math.isnan(v)) or v is None else format_value(v))
            df[c] = col.astype("str")
        else:
            df[c] = number_column(df[c], kind, source)
    return df


def in_plan_order(df: pd.DataFrame, plan: SweepPlan) -> pd.DataFrame:
    point_index = {(p.scenario, p.text): p.index for p in plan.points}
    order = pd.DataFrame(
        {
            "p": [point_index[k] for k in zip(df.scenario, df.point)],
            "r": df.replication.to_numpy(),
            "q": [plan.policy_order[(s, t)][lab] for s, t, lab in zip(df.scenario, df.point, df.policy)],
        }
    )
    idx = order.sort_values(["p", "r", "q"], kind="stable").index
    return df.iloc[idx].reset_index(drop=True)


def _other_columns(have: list[str], want: list[str]) -> str:
    """Why a results file cannot be resumed: another sweep's, or this sweep's from before a column was added."""
    added = {"kavg_us": "KAVG", "qfull": "QUEUE FULL counts"}  # columns sweeps gained, in the order they gained them
    lost = [c for c in want if c not in have]
    if lost and set(lost) <= set(added) and [c for c in have if c not in want] == []:
        return f"was written before sweeps kept {added[lost[0]]} (no {lost[0]} column): use another --out, or delete it and run again"
    if [c for c in want if c not in have] == ["timeout_scale"] and [c for c in have if c not in want] == []:
        return (
            "holds runs with no timeout_scale column (a sweep's, or a league's from before leagues scaled the hosts' "
            "timeouts): use another --out, or delete it and run again"
        )
    if [c for c in have if c not in want] == ["timeout_scale"] and [c for c in want if c not in have] == []:
        return "holds a league's runs (a timeout_scale column), not this sweep's: use another --out, or delete it"
    return "holds a different sweep (other columns): use another --out, or delete it"


class ResultsStore:
    """Results on disk: a CSV appended run by run, or Parquet part files merged at the end."""

    def __init__(self, path: Path, plan: SweepPlan) -> None:
        self.path = path
        self.plan = plan
        self.csv = path.suffix.lower() == ".csv"
        if not self.csv and path.suffix.lower() != ".parquet":
            raise ScenarioError(str(path), "", "results go to a .parquet or .csv file")
        self.parts = path.with_name(path.name + ".parts")
        self.buffer: list[dict[str, Any]] = []
        self.last_flush = time.monotonic()

    def existing(self) -> pd.DataFrame:
        frames = []
        try:
            if self.csv and self.path.exists():
                self._trim_partial_line()
                if self.path.stat().st_size:
                    df = pd.read_csv(self.path, keep_default_na=False, na_values=[""])
                    if list(df.columns) != self.plan.columns:
                        raise ScenarioError(str(self.path), "", _other_columns(list(df.columns), self.plan.columns))
                    frames.append(df)
            elif not self.csv:
                if self.path.exists():
                    frames.append(pd.read_parquet(self.path))
                if self.parts.is_dir():
                    frames.extend(pd.read_parquet(p) for p in sorted(self.parts.glob("part-*.parquet")))
        except ScenarioError:
            raise
        except Exception as e:  # unreadable: say so in one line rather than guess
            raise ScenarioError(str(self.path), "", f"cannot read the results already there: {e}") from None
        if not frames:
            return typed_table(pd.DataFrame(columns=self.plan.columns), self.plan, str(self.path))
        df = pd.concat(frames, ignore_index=True)
        if list(df.columns) != self.plan.columns:
            raise ScenarioError(str(self.path), "", _other_columns(list(df.columns), self.plan.columns))
        return typed_table(df, self.plan, str(self.path))

    def _trim_partial_line(self) -> None:
        # A run killed mid-append leaves a cut last record: drop it, that run is run again.
        with open(self.path, "rb+") as f:
            data = f.read()
            end = whole_records(data)
            if end < len(data):
                f.truncate(end)

    def add(self, rows: list[dict[str, Any]]) -> None:
        self.buffer.extend(rows)
        # Every second or two rather than every run: typing the rows costs the parent ~15 ms a write, which
        # would cap short runs; an interruption flushes first, so only a kill loses up to that much.
        if time.monotonic() - self.last_flush >= (1.0 if self.csv else 2.0):
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        df = typed_table(pd.DataFrame(self.buffer), self.plan)
        if self.csv:
            # Appended, not rewritten: the rows saved so far are the resume's, and rewriting the whole table on
            # every flush would cost a sweep of many runs dearly. One write per flush; a killed process leaves at
            # most one cut record (trimmed on resume); a failed write (a full disk) is cut back here at once.
            header = not self.path.exists() or self.path.stat().st_size == 0
            text = df.to_csv(index=False, header=header, lineterminator="\n")
            size = self.path.stat().st_size if self.path.exists() else 0
            try:
                with open(self.path, "a", encoding="utf-8", newline="") as f:
                    f.write(text)
            except OSError as e:
                with contextlib.suppress(OSError):
                    os.truncate(self.path, size)
                raise ScenarioError(str(self.path), "", f"cannot append to the results table: {e.strerror or e}") from None
        else:
            self.parts.mkdir(parents=True, exist_ok=True)
            with atomic_path(self.parts / f"part-{self._next_part():06d}.parquet") as tmp:
                df.to_parquet(tmp, index=False)  # a part is whole or absent
        self.buffer = []
        self.last_flush = time.monotonic()

    def _next_part(self) -> int:
        numbers = [int(p.stem.split("-")[1]) for p in self.parts.glob("part-*.parquet")]
        return max(numbers, default=-1) + 1

    def rewrite(self, df: pd.DataFrame) -> None:
        """Replace what is saved by ``df`` (atomically: a file is renamed over the old one)."""
        if self.csv:
            with atomic_path(self.path) as tmp:
                df.to_csv(tmp, index=False, lineterminator="\n")
            return
        self.parts.mkdir(parents=True, exist_ok=True)
        old = sorted(self.parts.glob("part-*.parquet"))
        with atomic_path(self.parts / f"part-{self._next_part():06d}.parquet") as tmp:
            df.to_parquet(tmp, index=False)
        for p in old:
            p.unlink()
        if self.path.exists():
            self.path.unlink()

    def finish(self) -> pd.DataFrame:
        self.flush()
        df = in_plan_order(self.existing(), self.plan)
        # a temporary file of its own beside the table, renamed over it: a kill here leaves the rows appended so far
        with atomic_path(self.path) as tmp:
            if self.csv:
                df.to_csv(tmp, index=False, lineterminator="\n")
            else:
                df.to_parquet(tmp, index=False)
        if not self.csv:
            shutil.rmtree(self.parts, ignore_errors=True)
        return df
