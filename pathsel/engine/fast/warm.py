"""The fast engine's first compile: say so, show it, and do it in parallel.

numba compiles the engine (~110 functions) and each policy's entry points the
first time they run on a machine, then loads them from the cache directory
(:func:`pathsel.jit.cache_dir`) in a fraction of a second. :func:`prepare`
makes that first time visible and shorter: it tells the caller in one line
that it is compiling and about how long it takes, shows a progress bar that
moves with time (the functions compiled beside it), runs LLVM's passes at
level 1 (:func:`pathsel.jit.light_passes`), and shares the work with a
second process (they share the cache). ``pathsel warm`` calls it ahead of a
first run. This process compiles the loop, ``run_kernel``, which
compiles the event handlers it calls in the order it calls them; the second
process compiles the handlers the loop reaches last (:func:`late_handlers`),
from the last one back, so that the loop finds them in the cache when it
gets there, and then the built-in policies.

``python -m pathsel.engine.fast.warm [--engine] NAME...`` does the second
process's part: the late handlers (with ``--engine``), then the named
built-in policies' entry points.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence

from numba.core import event, types

from ...jit import cache_dir, is_ready, kernel_sources, light_passes, mark_ready, njit, source_hash
from ...policies.framework.define import PolicyDef
from ..recorder.bookkeeping import rec_fail
from .faults import apply_fault, fault_loop, notice
from .io_life import abort, arrival, complete, on_deadline, on_service_done, qfull_back, queue_granted
from .layout import K_ISSUED, K_JOB
from .loop import records_at, run_kernel
from .scheduler import KIND_BITS

__all__ = ["prepare", "is_warm", "late_handlers", "USUAL_SECONDS"]

# A cold compile of the engine and the default scenario's policies: 27-28 s on this project's 2-core machine with
# another busy process beside it, peak RSS ~420 MB (issue 35; it was 63 s before LLVM's passes ran at level 1).
USUAL_SECONDS = 30
_SIGNATURE = (types.int64,) * 4 + (types.float64, types.int64, types.int64)
_LATE_SIGNATURE = (types.int64,) * 5


# Link-only and not cached: compiling it only compiles (and caches) what it calls.
@njit(nogil=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def late_handlers(pa, sa, va, ra, s):
    """Never run. The handlers run_kernel reaches last, called as run_kernel calls them, last first.

    Keep the argument types as run_kernel's calls have them: a handler typed
    differently here is compiled twice (a test checks that each one here
    is found in the cache after run_kernel is compiled).
    """
    P, S, V, R = records_at(pa, sa, va, ra)
    arrival(P, S, V, R, s)
    queue_granted(P, S, V, R, s)
    rec_fail(R, V.clock[0], V.clock[0] - S.slotf[s, K_ISSUED], S.slot[s, K_JOB])
    abort(P, S, V, R, s)
    on_deadline(P, S, V, s, S.h_ka[0, 0] >> KIND_BITS)
    notice(P, S, V, s)
    apply_fault(P, S, V, s)
    fault_loop(P, S, V)
    on_service_done(P, S, V, R, s)
    complete(P, S, V, R, s)
    qfull_back(P, S, V, R, s)


_lock = threading.Lock()
_ready = False


def _engine_key() -> str:
    return "engine-" + source_hash(kernel_sources(), "engine")


def is_warm(defs: Sequence[PolicyDef] = ()) -> bool:
    """True when the engine and these built-in policies are in the cache (a run starts at once)."""
    return is_ready(_engine_key()) and all(is_ready(d.cache_key()) for d in defs if d.builtin)


class _Counter(event.Listener):
    """Counts numba's finished compiles (shown beside the progress bar)."""

    def __init__(self, tick: Callable[[], None]) -> None:
        self.tick = tick

    def on_start(self, ev: event.Event) -> None:
        pass

    def on_end(self, ev: event.Event) -> None:
        self.tick()


class _Clock:
    """A progress bar in seconds that moves while numba works (tqdm).

    Counting finished functions left the bar still for the longest step, LLVM
    optimising the loop with every handler inlined (a third of the compile);
    so the bar shows time against the usual figure, and the functions done
    beside it. Past the usual figure it stays short of the end until done.
    """

    def __init__(self, usual: float) -> None:
        from tqdm.auto import tqdm

        self.functions = 0
        self.started = time.perf_counter()
        self.bar = tqdm(
            total=round(usual),
            unit="s",
            desc="compiling",
            leave=False,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s{postfix}",
        )
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def tick(self) -> None:
        self.functions += 1

    def _run(self) -> None:
        while not self.done.wait(0.5):
            self.advance(time.perf_counter() - self.started)

    def advance(self, elapsed: float) -> None:
        """Show ``elapsed`` seconds (the bar's total grows past the usual figure, staying ahead of it)."""
        if elapsed > 0.95 * self.bar.total:
            self.bar.total = math.ceil(elapsed / 0.95)
        self.bar.n = round(elapsed)
        self.bar.set_postfix_str(f"{self.functions} functions", refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        self.done.set()
        self.thread.join()
        self.bar.close()


def prepare(defs: Sequence[PolicyDef], *, notify: Callable[[str], None] | None = None, progress: bool = False) -> None:
    """Compile (or load from the cache) the engine and these policies before the first run in this process.

    When something must be compiled, ``notify`` gets one line saying so;
    ``progress`` shows a bar (tqdm) of the functions compiled.
    """
    global _ready
    with _lock:
        # once loaded in this process, nothing is looked up again (hashing the engine's sources took ~1 ms a run)
        cold_engine = not _ready and not is_ready(_engine_key())
        cold = [d for d in defs if d.builtin and not d.loaded and not is_ready(d.cache_key())]
        if not cold_engine and not cold:
            with light_passes():  # a policy of the user's own is compiled here (not cached)
                if not _ready:
                    run_kernel.compile(_SIGNATURE)  # from the cache: a fraction of a second
                    _ready = True
                for d in defs:
                    d.hooks()
            return
        started = time.perf_counter()
        if notify is not None:
            notify(
                f"pathsel: compiling the fast engine once (about {USUAL_SECONDS} s on 2 cores with other work beside it, "
                f"~420 MB); it is cached in {cache_dir()} and later runs start at once (`pathsel warm` does it ahead)"
            )
        bar = _Clock(USUAL_SECONDS if cold_engine else 5.0) if progress else None
        helper = None
        if cold_engine:  # the late handlers and the policies in a second process, while this one does the loop
            helper = subprocess.Popen(
                [sys.executable, "-m", __name__, "--engine", *(d.name for d in cold)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=os.environ.copy(),
            )
        counter = _Counter(bar.tick if bar is not None else (lambda: None))
        try:
            with event.install_listener("numba:compile", counter), light_passes():
                if cold_engine:
                    run_kernel.compile(_SIGNATURE)
                    mark_ready(_engine_key())
                _ready = True
                if helper is not None:
                    helper.wait()
                for d in defs:
                    d.hooks()
        finally:
            if bar is not None:
                bar.close()
            if helper is not None and helper.poll() is None:
                helper.kill()
        if notify is not None:
            notify(f"pathsel: compiled in {time.perf_counter() - started:.0f} s")


def _main(args: Sequence[str]) -> None:
    from ...policies.registry import builtin

    names = list(args)
    with light_passes():  # as prepare compiles them: the cache holds one kind of code
        if names[:1] == ["--engine"]:
            names = names[1:]
            late_handlers.compile(_LATE_SIGNATURE)
        for name in names:
            builtin(name).hooks()


if __name__ == "__main__":
    _main(sys.argv[1:])
