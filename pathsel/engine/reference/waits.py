"""Where an I/O waits for the host to see a path change, in the reference engine.

An I/O with no usable path (or whose frame was lost in silence) waits until the host sees a path change (at most
its APD timeout, or until its policy's wake time); a path change wakes every waiting I/O. Fast twin: fast/waits.py.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any

import simpy

from .state import State

__all__ = ["Waits"]


class Waits(State):
    """Waiting for a path change, and the wake-up."""

    def wait_for_change(self, timeout: float, wake: float = math.inf) -> Generator[simpy.Event, Any, bool]:
        """Wait until the host sees a path change: True, or False after ``timeout`` seconds (fast/waits.start_wait);
        True at ``wake`` too (the policy's wake time, fast/waits.arm_wake)."""
        woken = self.env.event()
        self.waiters.append(woken)
        if timeout < math.inf:
            timer = self.env.timeout(timeout)

            def expire(_t: simpy.Event) -> None:
                if not woken.triggered:
                    woken.succeed(False)

            timer.callbacks.append(expire)
        if wake < math.inf:
            alarm = self.env.timeout(max(wake - self.env.now, 0.0))

            def ring(_t: simpy.Event) -> None:
                if not woken.triggered:
                    woken.succeed(True)

            alarm.callbacks.append(ring)
        changed: bool = yield woken
        return changed

    def wake_waiters(self) -> None:
        """The host saw a path change: every I/O waiting for one goes on (fast/waits.wake_waiters)."""
        waiting, self.waiters = self.waiters, []
        for ev in waiting:
            if not ev.triggered:
                ev.succeed(True)
