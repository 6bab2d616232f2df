"""``pathsel top``'s run: one policy's run with a sample every ``-d`` simulated seconds, paced to the wall clock,
shown on the terminal (keys change the view and the speed), or written as esxtop's batch CSV (``-b``) or plain
text (``--text``); and the limits on ``-d``, ``-n`` and ``--speed``.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO, TypedDict

import numpy as np

from ..engine import prepare, resolve, run_fast, run_reference, supports
from ..engine.recorder.readout import Live
from ..engine.recorder.record import C_FAILED, C_RETRIED, H_PATH0
from ..errors import ScenarioError
from ..model import Model, compile_model
from ..scenario import RunSpec, Scenario
from .counters import Top
from .esxtop_csv import PerfmonCsv
from .snapshot import Snapshot
from .terminal import Keys
from .views import DONE_HELP, VIEWS, rich_view, text_view

__all__ = ["run_top", "pick_run", "first_snapshot", "fitting_delay", "SPEED_MIN", "SPEED_MAX", "MIN_DELAY", "MAX_SAMPLES"]

# --speed's range (simulated seconds per wall second), which + and - stay within: below a microsecond a second a
# refresh would wait for weeks; above 1e6 no run lasts a refresh of the wall clock anyway
SPEED_MIN, SPEED_MAX = 1e-6, 1e6
MIN_DELAY = 1e-6  # -d's floor: the CSV's sample times carry microseconds at most (as Python's datetime)
MAX_SAMPLES = 10_000  # samples in one run at most (-d over the run's length): more is a flood, not a view
_NAP = 0.5  # the longest single sleep while pacing: time.sleep refuses a wait past time_t, and Ctrl-C stays prompt


class Quit(Exception):
    """The user pressed q: stop the run."""


def pick_run(scenario: Scenario, policy: str | None) -> RunSpec:
    """The run ``policy`` names among the scenario's (a label or spec), a new one from a spec, or the first."""
    if policy is None:
        return scenario.runs[0]
    for r in scenario.runs:
        if policy == r.label or policy == getattr(r.policy, "text", None):
            return r
    return scenario.with_policies([policy]).runs[0]


class _State(TypedDict):
    """run_top's view state, which the key handler changes."""

    view: str
    speed: float | None
    paused: bool
    wall: float  # the wall clock and simulated time pacing counts from
    sim: float


class _Enough(Exception):
    """-n frames shown: stop the run."""


def _zero_record(model: Model) -> Any:
    """A record with nothing in it yet, shaped as the engines' (time 0: no I/O issued)."""
    from types import SimpleNamespace

    P, D = len(model.paths), max(len(model.devices), 1)
    W = max(len(model.workloads), max((j.vm for j in model.jobs), default=0) + 1, 1)
    depth = np.array([model.host_params[d.host].queue_depth for d in model.devices] or [0], dtype=np.int64)
    return SimpleNamespace(
        ts_path_ios=np.zeros((P, 1), dtype=np.int64),
        h_stat=np.zeros((H_PATH0 + P, 8)),
        ts_ios=np.zeros(1, dtype=np.int64),
        ts_lat_sum=np.zeros(1),
        ts_bytes=np.zeros(1, dtype=np.int64),
        rc=np.zeros(max(C_FAILED, C_RETRIED) + 1, dtype=np.int64),
        dev_n=np.zeros(D, dtype=np.int64),
        dev_kavg=np.zeros(D),
        dev_davg=np.zeros(D),
        dev_actv=np.zeros(D, dtype=np.int64),
        dev_qued=np.zeros(D, dtype=np.int64),
        dev_queue_depth=depth,
        wl_stat=np.zeros((2 * W, 8)),
        wl_q=np.zeros((W, 8)),
    )


def first_snapshot(top: Top) -> Snapshot:
    """The view at time 0, before the first I/O: no rate yet, nothing active, every path as the scenario sets it."""
    model = top.model
    zero = np.zeros(len(model.paths), dtype=np.int64)
    snap = top.snapshot(Live(0.0, _zero_record(model), zero, zero))
    top.wl = None  # the engines' record starts from zero as well
    return snap


def fitting_delay(end: float) -> str:
    """The shortest -d, in 3 significant digits rounded up, that samples a run of ``end`` seconds at most
    :data:`MAX_SAMPLES` times (the exact quotient, rounded to the nearest, can be the -d that was refused)."""
    exact = end / MAX_SAMPLES
    unit = 10.0 ** (math.floor(math.log10(exact)) - 2)
    k = math.ceil(exact / unit - 1e-9)
    while math.ceil(end / float(f"{k * unit:.3g}") - 1e-9) > MAX_SAMPLES:
        k += 1
    return f"{k * unit:.3g}"


def run_top(
    scenario: Scenario,
    run: RunSpec,
    *,
    speed: float | None = 1.0,
    refresh: float = 1.0,
    view: str = "devices",
    batch: bool = False,
    text: bool = False,
    iterations: int | None = None,
    duration: float | None = None,
    seed: int | None = None,
    out: TextIO | None = None,
    notify: Callable[[str], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Run ``run`` of ``scenario`` with a live view; return the exit status.

    ``refresh`` is esxtop's ``-d``: seconds between samples on the simulated
    host's clock. ``speed`` paces them (simulated seconds per wall second: a
    frame every ``refresh / speed`` wall seconds; None: as fast as the engine
    runs). ``iterations`` is esxtop's ``-n``: stop after that many samples
    (without ``duration``, the run is made long enough for them). ``batch``
    writes esxtop's perfmon CSV (``text``: plain-text snapshots instead);
    otherwise a terminal view with keys, which opens with a frame at time 0.
    """
    out = out or sys.stdout
    model = compile_model(scenario, run, duration=duration, seed=seed)
    if iterations is not None and duration is None and iterations > MAX_SAMPLES:
        # without --duration the run grows with -n x -d: a longer -d gives as many samples, only a smaller -n helps
        raise ScenarioError(
            "command line", "argument -n", f"{iterations:,} samples are more than {MAX_SAMPLES:,} in one run: -n {MAX_SAMPLES:,} or fewer"
        )
    grown = ""
    if iterations is not None and duration is None and model.end < iterations * refresh:
        # -n without --duration: long enough for every sample (the ramp counts: samples start at time 0)
        longer = max(iterations * refresh - model.ramp, refresh)
        try:
            grown_model = compile_model(scenario, run, duration=longer, seed=seed)
        except ScenarioError as e:  # the run -d and -n ask for, not the file, is what is too long
            raise ScenarioError(
                "command line",
                "arguments -d and -n",
                f"{iterations:,} samples every {refresh:g} s need a {model.ramp + longer:g} s run, which {e.source} "
                f"cannot give ({e.place}: {e.problem}): fewer samples (-n), a shorter -d, or --duration",
            ) from None
        # said on stderr (and on the screen): a long -d can ask for a simulated day the file never meant
        grown = (
            f"pathsel top: {iterations:,} sample{'s' if iterations > 1 else ''} every {refresh:g} s: the run is made "
            f"{grown_model.end:g} s long (the file's is {model.end:g} s; --duration sets it)"
        )
        model = grown_model
    fast = supports(run.policy)
    engine = run_fast if fast else run_reference
    top = Top(model)
    state: _State = {"view": view, "speed": speed, "paused": False, "wall": clock(), "sim": 0.0}
    in_run = math.ceil(model.end / refresh - 1e-9)
    samples = iterations if iterations is not None else in_run
    if min(samples, in_run) > MAX_SAMPLES:
        # a flood, and a sample every few events keeps the engine from running: say so rather than sample less often
        raise ScenarioError(
            "command line",
            "argument -d",
            f"a sample every {refresh:g} s over a {model.end:g} s run is {in_run:,} samples, "
            f"more than {MAX_SAMPLES:,}: -d {fitting_delay(model.end)} or longer, or -n {MAX_SAMPLES:,} or fewer",
        )
    if refresh < MIN_DELAY:
        raise ScenarioError(
            "command line", "argument -d", f"{refresh:g} s is below a microsecond, the finest time -b's samples can carry: -d 1us or longer"
        )
    step = refresh

    # A sample at every refresh before the end of the run, then a final one at its end. A run shorter than a
    # refresh still needs one callback, for the record the final sample reads: the engines call back at half the
    # run, not shown.
    every = step < model.end
    engine_step = step if every else model.end / 2
    lives: list[Live] = []
    shown = [0]

    def final(live: Live) -> Live:
        """The run's end, once the engine has returned: the record is closed at ``model.end``."""
        return Live(model.end, live.record, live.out, live.out_bytes)

    def warm(tell: Callable[[str], None] | None) -> None:
        """Load (or compile, the first time) the fast engine before the clock starts: not simulated time."""
        if fast:
            defn = resolve(run.policy)[0]
            prepare([defn, *(resolve(d.policy)[0] for d in model.devices if d.policy is not None)], notify=tell)

    def counted() -> None:
        shown[0] += 1
        if iterations is not None and shown[0] >= iterations:
            raise _Enough

    if batch:
        csv_out = None if text else PerfmonCsv(top, step)

        def pace(now: float) -> None:
            if state["speed"] is None:
                return
            while True:  # in naps: a wait of years (a tiny --speed) must not overflow time.sleep
                wait = state["wall"] + (now - state["sim"]) / state["speed"] - clock()
                if wait <= 0:
                    return
                time.sleep(min(wait, _NAP))

        def print_snapshot(live: Live) -> None:
            snap = top.snapshot(live)
            pace(live.now)  # the sample is due when the wall clock reaches its simulated time
            out.write(text_view(run.label, snap, model, state["view"], state["speed"]) + "\n" if csv_out is None else csv_out.row(snap))
            out.flush()
            counted()

        def show(live: Live) -> None:
            lives[:] = [live]
            if every:
                print_snapshot(live)

        if grown and notify is not None:
            notify(grown)
        warm(notify)
        if csv_out is not None:
            out.write(csv_out.header())
            out.flush()
        state["wall"], state["sim"] = clock(), 0.0  # pace from time 0: compiling and starting up are not simulated time
        try:
            engine(model, run.policy, live=show, live_step=engine_step)
            if lives:  # rates over what is left of the last refresh
                print_snapshot(final(lives[-1]))
        except _Enough:
            pass
        return 0

    from rich.console import Console
    from rich.live import Live as RichLive
    from rich.text import Text

    console = Console(file=out)
    with Keys(sys.stdin) as keys, RichLive(console=console, screen=True, auto_refresh=False, vertical_overflow="crop") as screen:
        last: list[Snapshot] = []
        starting = [f"pathsel top: starting... {model.name} - {run.label}", *([grown] if grown else []), "loading the engine"]

        def say_on_screen(line: str) -> None:
            starting.append(line)
            screen.update(Text("\n".join(starting)), refresh=True)

        screen.update(Text("\n".join(starting)), refresh=True)

        def draw() -> None:
            screen.update(rich_view(run.label, last[-1], model, state["view"], state["speed"], state["paused"]), refresh=True)

        def handle(key: str | None) -> None:
            if key is None:
                return
            if key in ("q", "Q"):
                raise Quit
            if key in VIEWS:
                state["view"] = VIEWS[key]
            elif key == " ":
                state["paused"] = not state["paused"]
            elif key in ("+", "=") and state["speed"] is not None:
                state["speed"] = min(state["speed"] * 2, SPEED_MAX)
            elif key == "-" and state["speed"] is not None:
                state["speed"] = max(state["speed"] / 2, SPEED_MIN)
            state["wall"], state["sim"] = clock(), last[-1].now  # pace from here at the new speed
            draw()

        def show(live: Live) -> None:
            lives[:] = [live]
            if every:
                view_now(live)

        def view_now(live: Live) -> None:
            snap = top.snapshot(live)  # read now: the record moves on once this returns
            while True:  # the frame is due when the wall clock reaches its simulated time; keys meanwhile
                if state["paused"]:
                    handle(keys.read(0.1))
                    continue
                target = (state["wall"] + (live.now - state["sim"]) / state["speed"]) if state["speed"] else clock()
                wait = target - clock()
                if wait <= 0:
                    handle(keys.read(0))  # a key pressed meanwhile still counts
                    if not state["paused"]:
                        break
                    continue
                handle(keys.read(min(wait, 0.1)))
            last[:] = [snap]
            draw()
            counted()

        try:
            warm(say_on_screen)  # a first compile says so on the screen
            last[:] = [first_snapshot(top)]
            draw()
            state["wall"], state["sim"] = clock(), 0.0  # pace from time 0: compiling and starting up are not simulated time
            engine(model, run.policy, live=show, live_step=engine_step)
            if lives:  # the end of the run, paced as a refresh
                view_now(final(lives[-1]))
        except Quit:
            return 0
        except _Enough:
            pass
        # the run is over (or -n samples shown): the last view stays until a key is pressed
        if last:
            state["paused"] = False
            screen.update(
                rich_view(run.label, last[-1], model, state["view"], state["speed"], False, DONE_HELP),
                refresh=True,
            )
        if keys.fd is not None:
            while True:
                key = keys.read(0.2)
                if key is None:
                    continue
                if key in VIEWS and last:
                    state["view"] = VIEWS[key]
                    screen.update(
                        rich_view(run.label, last[-1], model, state["view"], state["speed"], False, DONE_HELP),
                        refresh=True,
                    )
                    continue
                break
    return 0
