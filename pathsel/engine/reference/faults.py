"""The fault timeline in the reference engine, and the host noticing it.

A change on the wire takes effect at once; the host notices a path going down or up only after its detection
delay, and then tells the policy and wakes the I/Os waiting for a change. Fast twin: fast/faults.py.
"""

from __future__ import annotations

from typing import Any

import simpy

from .state import Proc
from .waits import Waits
from .wire import TO_ARRAY, TO_HOST

__all__ = ["Faults"]


class Faults(Waits):
    """Each fault of the timeline applied at its time; implicit ALUA's checks."""

    # -- the timeline ------------------------------------------------------
    def log_path(self, p: int, event: str) -> None:
        t = self.table
        self.events.append(
            {
                "t": float(self.env.now),
                "device": self.model.devices[self.model.paths[p].device].name,
                "event": event,
                "path": t.names[p],
                "alua": t.alua[p],
                "up": bool(t.up[p]),
            }
        )

    def path_changed(self, p: int, event: str) -> None:
        """The host sees path ``p`` change: log it, tell the device's policy (fast/faults.path_changed)."""
        self.log_path(p, event)
        self.policies[self.model.paths[p].device].on_path_change(self.views[p])

    def notice(self, c: int) -> None:
        """The host learns the nexus's state (detection delay after the change); waiting I/Os retry (fast/faults.notice)."""
        up = self.phys_up[c]
        for p in self.model.controller_paths(c):
            if self.table.up[p] != up:
                self.table.up[p] = up
                self.path_changed(p, "path_up" if up else "path_down")
        self.wake_waiters()

    def set_wire(self, c: int, up: bool) -> None:
        """The nexus's wire goes up or down now; the host notices after its detection delay (fast/faults.set_wire)."""
        self.phys_up[c] = up
        if not up:
            self.epoch[c] += 1
        timer = self.env.timeout(self.model.host_params[self.model.controllers[c].host].detection)

        def notice(_t: simpy.Event) -> None:
            self.notice(c)

        timer.callbacks.append(notice)

    def apply(self, f: Any) -> None:
        """One fault of the timeline, now (fast/faults.apply_fault)."""
        model = self.model
        if f.what == "implicit":
            self.implicit(f.array)
            return
        self.events.append({"t": float(self.env.now), "device": "", "event": "fault", "what": f.what, "fault": f.origin, "revert": f.revert})
        if f.what in ("path_down", "path_up", "array_down", "array_up"):
            up = f.what.endswith("_up")
            if f.array is not None:
                self.alive[f.array] = up
            for c in f.controllers:
                self.set_wire(c, up)
        elif f.what == "slow_drain":  # the link's port returns credits late, or stops draining until the revert
            ln = model.links[f.link]
            w = len(model.controllers) + f.link  # the link's wire
            for d in (TO_ARRAY, TO_HOST):
                if ln.drain[d]:
                    self.cret[f.link][d] = ln.credit_return[d] if f.credit_return < 0.0 else f.credit_return
                    if f.stop_until > 0.0 and self.wire_free[w][d] < f.stop_until:
                        self.wire_free[w][d] = f.stop_until
        elif f.what == "owner" or f.paths:  # alua by volume or port group, owner: the paths' states and crossings (issue 32)
            for p, state, cross in zip(f.paths, f.states, f.crossing):
                self.table.alua[p] = state
                if cross >= 0:
                    self.cross[p] = bool(cross)
                self.path_changed(p, "alua")
            self.wake_waiters()
        elif f.what == "alua":
            for c in f.controllers:
                for p in model.controller_paths(c):
                    self.table.alua[p] = f.state
                    self.path_changed(p, "alua")
            self.wake_waiters()
        elif f.what == "latency":
            if f.replication:
                self.repl_extra = model.replication.extra + f.add  # type: ignore[union-attr]
            for c in f.controllers:
                self.extra[c] = model.controllers[c].extra + f.add
        elif f.what == "loss":
            if f.replication:
                self.repl_loss = model.replication.loss_ppm if f.ppm < 0 else f.ppm  # type: ignore[union-attr]
            # the loss of the ops it names from now on, and none of the others' (a revert: the scenario's again)
            ops = (f.loss_ops in ("read", "both"), f.loss_ops in ("write", "both"))
            for c in f.controllers:
                self.loss[c] = model.controllers[c].loss_ppm if f.ppm < 0 else f.ppm
                self.loss_op[c] = list(model.controllers[c].op_loss()) if f.ppm < 0 else [f.ppm if o else 0.0 for o in ops]
        else:  # replication_down | replication_up: the mediator keeps the preferred site serving
            repl = model.replication
            assert repl is not None
            self.repl_ok = f.what == "replication_up"
            loser = repl.arrays[1] if repl.preferred_site == repl.arrays[0] else repl.arrays[0]
            for path in model.paths:
                if path.mirror is not None and path.array == loser:
                    self.table.alua[path.index] = path.alua if self.repl_ok else "unavailable"
                    self.path_changed(path.index, "alua")
            self.wake_waiters()

    def implicit(self, array: int) -> None:
        """Implicit ALUA's check of ``array`` (fast/faults.implicit_alua): each of its volumes moves to the controller
        that received more than twice as many of its commands as the owner since the last check (of several, the
        first with the most); the counts restart."""
        model, moved = self.model, False
        for g, (a, n, paths) in enumerate(model.cells):
            if a != array:
                continue
            counts = self.ia_count[g]
            owner = next((model.paths[p].array_controller for p in paths if not self.cross[p]), -1)
            best = 0
            for k in range(1, n):
                if counts[k] > counts[best]:
                    best = k
            if owner >= 0 and best != owner and counts[best] > 2 * counts[owner]:  # a clear majority (an assumption)
                for p in paths:
                    path = model.paths[p]
                    on_owner = path.array_controller == best
                    self.table.alua[p] = "AO" if on_owner and path.pref_ao else "ANO"
                    self.cross[p] = not on_owner
                    self.path_changed(p, "alua")
                moved = True
            self.ia_count[g] = [0] * n
        if moved:
            self.wake_waiters()

    def fault_timeline(self) -> Proc:
        """Apply every fault at its time (fast/faults.fault_loop)."""
        for f in self.model.timeline:
            if f.at > self.env.now:
                yield self.env.timeout(f.at - self.env.now)
            self.apply(f)
