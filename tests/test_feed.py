"""The fast engine's rows of pre-drawn values serve each stream its own sequence, whatever the reads (Hypothesis).

``Feed`` (``pathsel/engine/fast/feed.py``) lays one row per random stream end
to end in one block; the kernel reads a row at its cursor and asks for a
refill once a row has fewer than its margin left. A refill tops rows up,
grows them and, when capacities change, moves every row to a new place in
the same block grown in place (rows moved last to first). Here random reads
from random streams, at random paces, with a refill whenever a row comes
due as the kernel asks, must read each stream's values in order: exactly
what ``Draws.take`` serves for that stream in one go.
"""

from __future__ import annotations

import os

import hypothesis.strategies as st
import numpy as np
from hypothesis import HealthCheck, given, settings

from pathsel.engine.fast.feed import Feed
from pathsel.engine.streams import Draws
from pathsel.policies.framework.kernel import FL_REFILL
from pathsel.timing.distributions import Exponential

SETTINGS = settings(max_examples=int(os.environ.get("PATHSEL_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


class _View:
    """What ``Feed`` touches of the engine's view: the block, the cursors, the clock and the flags.

    Like the engine's record, it reads the block at the address and length it was last given: a block
    resized without ``set_array`` afterwards is caught (``read``), as the kernel would read freed memory.
    """

    def __init__(self, n: int) -> None:
        self.rq = np.zeros((n + 1, 2), dtype=np.int64)
        self.clock = np.zeros(1)
        self.flags = np.zeros(FL_REFILL + 1, dtype=np.int64)
        self.rnd = np.zeros(0)
        self.placed = (0, 0)

    def set_array(self, name: str, arr: np.ndarray) -> None:
        setattr(self, name, arr)
        self.placed = (arr.ctypes.data, arr.shape[0])

    def read(self, s: int) -> float:
        assert self.placed == (self.rnd.ctypes.data, self.rnd.shape[0]), "the block moved or grew after set_array"
        pos = self.rq[s, 0]
        self.rq[s, 0] = pos + 1
        if pos + 1 > self.rq[s, 1]:
            self.flags[FL_REFILL] = 1
        return float(self.rnd[pos])


def _stream(seed: int, s: int) -> Draws:
    # uniforms (drawn into place when a whole chunk is wanted) and an elementwise distribution, alternately
    return Draws(np.random.default_rng([seed, s]), None if s % 2 == 0 else Exponential(0.001))


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    margins=st.lists(st.integers(1, 40), min_size=1, max_size=6),
    events=st.integers(50, 4000),
    end=st.floats(0.5, 50.0),
    data=st.data(),
)
def test_every_stream_reads_its_own_sequence(seed, margins, events, end, data):
    n = len(margins)
    paces = data.draw(st.lists(st.integers(1, 100), min_size=n, max_size=n), label="paces")
    view = _View(n)
    feed = Feed([_stream(seed, s) for s in range(n)], margins, view, end)
    feed.refill()  # the engine's first call: every row is due at once
    rng = np.random.default_rng(seed)
    read: list[list[float]] = [[] for _ in range(n)]
    weights = np.array(paces, dtype=float) / sum(paces)
    for _ in range(events):
        s = int(rng.choice(n, p=weights))
        for _ in range(int(rng.integers(1, margins[s] + 1))):  # an event draws at most its stream's margin
            read[s].append(view.read(s))
        view.clock[0] += float(rng.exponential(end / (2 * events)))
        if view.flags[FL_REFILL]:
            feed.refill()
            assert view.flags[FL_REFILL] == 0
    for s in range(n):
        want = _stream(seed, s).take(len(read[s]))
        assert np.array_equal(np.array(read[s]), want), f"stream {s}: value {int(np.argmax(np.array(read[s]) != want))} differs"


def test_rows_grow_and_move_with_values_unread():
    """A case that moves long rows (the slice-by-slice path): the busy stream grows past the others' rows."""
    n, margins = 3, [8, 8, 8]
    view = _View(n)
    feed = Feed([_stream(7, s) for s in range(n)], margins, view, 100.0)
    feed.refill()
    read: list[list[float]] = [[] for _ in range(n)]
    moves = []
    orig = feed._layout

    def spy(first: bool = False) -> None:
        pos = view.rq[:n, 0] - feed.off[:n]
        moves.append(int((feed.held[:n] - pos).sum()))
        orig(first)

    feed._layout = spy  # type: ignore[method-assign]
    for i in range(200_000):
        s = 0 if i % 8 else 1 + (i // 8) % 2  # stream 0 reads seven times as often as 1 and 2
        read[s].append(view.read(s))
        view.clock[0] += 1e-4
        if view.flags[FL_REFILL]:
            feed.refill()
    assert max(moves) > 256 * n  # some layout moved long rows
    for s in range(n):
        assert np.array_equal(np.array(read[s]), _stream(7, s).take(len(read[s])))
