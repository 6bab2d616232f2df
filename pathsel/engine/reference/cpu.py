"""The hosts' cores in the reference engine (issue 33): FIFO servers, never preempted. Fast twin: fast/cpu.py."""

from __future__ import annotations

from .state import State

__all__ = ["Cpu"]


class Cpu(State):
    """A core takes work in the order it arrives."""

    def cpu_run(self, k: int, cost: float) -> float:
        """Core ``k`` takes ``cost`` seconds of work arriving now, after what it already has (FIFO, not preempted):
        returns how long until it is done (fast/cpu.cpu_run). Its busy time in the window is counted now."""
        now = self.env.now
        start = max(now, self.cpu_free[k])
        done = start + cost
        self.cpu_free[k] = done
        w = min(done, self.model.end) - max(start, self.model.ramp)
        if w > 0.0:
            self.cpu_busy[k] += w
        return done - now
