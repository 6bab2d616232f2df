"""The rows of pre-drawn random values the fast engine's loop reads (:class:`Feed`), refilled between events.

Each random stream of the model (:mod:`pathsel.engine.streams`) serves the same values in the same order as it
serves the reference engine one at a time (reference/state.py's ``streams``); here they come in rows, laid end to
end in the view's ``rnd``, so the loop never calls Python to draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...policies.framework.kernel import FL_REFILL
from ...timing.distributions import Constant
from ..streams import Draws
from . import layout as L
from .fields import pow2

__all__ = ["Feed", "EVENT_DRAWS", "LOSS_DRAWS"]

EVENT_DRAWS = 8  # the most values one event draws from a stream without loss (see state.Run)
LOSS_DRAWS = 2 * (L.MAX_RESENDS + 1) + EVENT_DRAWS


class Feed:
    """The rows of pre-drawn values, one per stream the model uses, laid end to end in ``view.rnd``.

    The kernel asks for a refill when a row has fewer than its stream's
    margin left (the most one event draws from it): the row keeps its unread
    values and is topped up from the stream's Draws, which serves the same
    sequence whatever the sizes. Rows start short and double each time they
    run low, up to ``max_row`` values while all rows fit in ``BUDGET``: a
    stream's row is as long as its use, so thousands of jobs that each issue
    a few I/Os cost a few values each, not a block each. A refill also tops
    up, and grows, every row with less than half a row left, so rows that
    run at one pace come due together and grow in one new layout (2,048
    like jobs: 60 layouts in a run, not 4,000). A top-up is no larger than
    what the stream's pace says the rest of the run will read, with a
    quarter to spare, so a run does not end with full rows never read. A
    row of a Constant delay
    (every value the same number) is filled with that number and reread
    from its start; a nexus whose latency is a constant has no row at all
    (its frames read ``p_lat``). The last row is the trap shared by streams
    the model cannot use: drawing from it is an error, reported at once.
    """

    FIRST = 256
    # A few streams (an array's service times) serve millions of draws a simulated second: at 16 k values a row,
    # 32 hosts x 64 volumes x 8 paths stopped for 955 refills (2.4 s) in 10 simulated seconds; at 256 k, 83.
    # A refill also stops and restarts the loop (tens of microseconds), and costs about a microsecond per stream:
    # a row's longest length follows the number of streams, 128 values each rounded up to a power of two, from
    # 64 k to 256 k. With 256 k for every model, 4 hosts x 16 volumes x 8 paths (69 streams) held 26 MiB of rows
    # for 22 refills in 10 s; at 64 k, 18.5 MiB for 47. At 16 k the test drive (4 streams) refilled 107 times in
    # 60 s, not 17: 1 % slower.
    MIN_ROW, MAX_ROW = 1 << 16, 1 << 18
    BUDGET = 1 << 22  # values in all rows together (32 MiB) before rows stop growing

    def __init__(self, draws: list[Draws], margins: list[int], view: Any, end: float) -> None:
        self.draws, self.v, self.end = draws, view, end
        n = len(draws)
        self.margin = np.array(margins + [max(margins, default=EVENT_DRAWS)], dtype=np.int64)
        self.cap = np.array([max(self.FIRST, pow2(4 * m)) for m in self.margin], dtype=np.int64)
        self.held = np.zeros(n + 1, dtype=np.int64)  # values in each row, from its start
        self.drawn = np.zeros(n, dtype=np.int64)  # values put in each row since its first fill
        self.since = np.zeros(n, dtype=np.float64)  # the simulated time of that first fill
        self.constant = np.array([isinstance(d.dist, Constant) for d in draws], dtype=bool)
        self.max_row = min(self.MAX_ROW, max(self.MIN_ROW, pow2(128 * n)))
        self._layout(first=True)

    def _layout(self, first: bool = False) -> None:
        """Place the rows at new offsets (capacities changed), each row's unread values moved to its start."""
        v, n = self.v, len(self.draws)
        off = np.zeros(n + 1, dtype=np.int64)
        off[1:] = np.cumsum(self.cap[:-1])
        # a spare margin past the last row: an event reading past the trap's end reads zeros, and is reported
        size = int(off[-1] + self.cap[-1] + self.margin.max())
        if first:
            v.set_array("rnd", np.zeros(size, dtype=np.float64))
        else:  # every row's unread values to its new start, in the same block grown in place: realloc extends it, or
            # remaps a large block's pages (a block that moves into its own mapping is copied once); a new block with
            # the old one still held had doubled the rows' peak memory
            rnd, old_off = v.rnd, self.off[:n]
            pos = v.rq[:n, 0] - old_off
            rest = self.held[:n] - pos
            src = old_off + pos
            rnd.resize(size, refcheck=False)
            v.set_array("rnd", rnd)  # at once: the record must not keep the old block's address
            if rest.sum() > 256 * n:  # long rows: a slice copy each (about a microsecond a row)
                # rows only grow, so a row's new place starts at or past its old one and ends before the next row's
                # new place: moved last to first, no row overwrites values of a row not yet moved
                for a, b, k in zip(off[:n].tolist()[::-1], src.tolist()[::-1], rest.tolist()[::-1]):
                    rnd[a : a + k] = rnd[b : b + k]
            else:  # tens of thousands of short rows: one gather (about 10 ns a value), read before written
                within = np.arange(int(rest.sum())) - np.repeat(np.cumsum(rest) - rest, rest)
                rnd[np.repeat(off[:n], rest) + within] = rnd[np.repeat(src, rest) + within]
            rnd[off[n] :] = 0.0
            self.held[:n] = rest
        self.off = off
        v.rq[:, 0] = off
        # a row is due when fewer than its margin are left (at once, when new); the trap's first draw stops
        # the loop, and refill reports it
        v.rq[:, 1] = off + np.maximum(self.held - self.margin, 0) - 1
        v.rq[n, 1] = off[n] - 1

    def refill(self) -> None:
        v, n = self.v, len(self.draws)
        off, cap, held = self.off, self.cap, self.held
        pos = v.rq[:, 0] - off
        if pos[n] > 0:
            raise RuntimeError("fast engine: the kernel drew from a stream this model never uses")
        if (pos[:n] > held[:n]).any():  # pragma: no cover - a margin too small for some event
            s = int(np.flatnonzero(pos[:n] > held[:n])[0])
            raise RuntimeError(f"fast engine: an event drew more than {int(self.margin[s])} values from stream {s}")
        due = v.rq[:n, 0] > v.rq[:n, 1]
        # What each stream will still use: its pace since its first fill over the simulated time left, with a
        # quarter to spare (no pace yet: a whole row). A row holds no more than that (and at least FIRST
        # values), so a run does not end with rows of values drawn and never read (46 % of those drawn in a
        # 20 s test drive; now 2 %). A stream that speeds up only refills sooner; the values are the same.
        now = float(v.clock[0])
        need = np.full(n, np.iinfo(np.int64).max // 4, dtype=np.int64)
        span = now - self.since
        paced = (held[:n] > 0) & (span > 0.0) & ~self.constant  # a Constant's row is reread, never drawn
        if paced.any():
            used = (self.drawn - (held[:n] - pos[:n]))[paced]
            with np.errstate(all="ignore"):  # a span of a few ns: huge (or 0 x inf) estimates, capped below
                ahead = np.fmin(np.ceil(used * (1.25 * max(self.end - now, 0.0) / span[paced])), 2.0 * self.max_row)
            need[paced] = np.maximum(ahead.astype(np.int64), self.FIRST) + 2 * self.margin[:n][paced]
        want = np.minimum(cap[:n], need)
        # A new layout moves every row: rows with less than half of what they want left grow with the due
        # ones, so rows that run at one pace (thousands of like jobs) grow in one layout, not one layout each.
        low = 2 * (held[:n] - pos[:n]) < want
        can = (cap[:n] < self.max_row) & (held[:n] > 0) & (need > cap[:n])
        grow = (due | low) & can
        if grow.any() and cap.sum() + cap[:n][grow].sum() > self.BUDGET:
            grow = due & can
        if grow.any() and cap.sum() + cap[:n][grow].sum() <= self.BUDGET:
            cap[:n][grow] *= 2
            self._layout()
            off, pos = self.off, v.rq[:, 0] - self.off
            want = np.minimum(cap[:n], need)
        topup = np.flatnonzero(due | (2 * (held[:n] - pos[:n]) < want) | (held[:n] == 0))
        rnd = v.rnd
        for s in topup.tolist():
            o, d = int(off[s]), self.draws[s]
            if self.constant[s]:
                size = int(cap[s])
                rnd[o : o + size] = d.dist.value
            else:
                p, h = int(pos[s]), int(held[s])
                rest = h - p
                # at least one event's margin past what is left, at most the row
                size = min(int(cap[s]), max(int(want[s]), rest + 2 * int(self.margin[s]) + 1))
                rnd[o : o + rest] = rnd[o + p : o + h]
                d.take(size - rest, out=rnd[o + rest : o + size])
                if h == 0:
                    self.since[s] = now
                self.drawn[s] += size - rest
            v.rq[s, 0] = o
            v.rq[s, 1] = o + size - int(self.margin[s]) - 1
            held[s] = size
        v.flags[FL_REFILL] = 0
