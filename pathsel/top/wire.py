"""Each path as the scenario's faults leave it, for ``pathsel top``: its state on the wire now (``STATE``), and the
windows in which I/Os sent down it are stuck there, cut off before its host has noticed.

Read from the model's fault timeline alone, as the engines apply it; :class:`pathsel.top.counters.Top` asks at
every refresh.
"""

from __future__ import annotations

from ..model import Model

__all__ = ["wire_state", "blind_windows"]


def wire_state(model: Model, now: float) -> list[str]:
    """Each path's state on the wire at ``now``: the scenario's faults up to then, applied in order."""
    alua = [p.alua for p in model.paths]
    up = [True] * len(model.paths)
    by_controller: dict[int, list[int]] = {}
    for p in model.paths:
        by_controller.setdefault(p.controller, []).append(p.index)
    for f in model.faults:
        if f.at >= now:  # the engines call back before any event of the instant
            break
        hit = [i for c in f.controllers for i in by_controller.get(c, ())]
        for i, s in zip(f.paths, f.states):  # alua by volume or port group, owner (issue 32)
            alua[i] = s
        if f.what in ("path_down", "array_down"):
            for i in hit:
                up[i] = False
        elif f.what in ("path_up", "array_up"):
            for i in hit:
                up[i] = True
        elif f.what == "alua" and f.state:
            for i in hit:
                alua[i] = f.state
    return [a if u else f"DEAD ({a})" for a, u in zip(alua, up)]


def blind_windows(model: Model) -> list[list[tuple[float, float]]]:
    """Per path, the windows ``(cut, end]`` of :meth:`pathsel.top.counters.Top.unnoticed`, from the scenario's faults."""
    by_controller: dict[int, list[int]] = {}
    for p in model.paths:
        by_controller.setdefault(p.controller, []).append(p.index)
    wire = ("path_down", "array_down", "path_up", "array_up")
    # the instants the engines wake the I/Os waiting for a path change (faults.notice and apply_fault's
    # wake_waiters): each wire change's notice, per host, and ALUA, owner and replication changes at once
    wakes: list[float] = []
    for f in model.faults:
        if f.what in wire:
            wakes.extend(f.at + model.host_params[model.controllers[c].host].detection for c in f.controllers)
        elif f.what in ("alua", "owner", "replication_down", "replication_up") or f.paths:
            wakes.append(f.at)
    wakes.sort()
    windows: list[list[tuple[float, float]]] = [[] for _ in model.paths]
    up = [True] * len(model.paths)
    cut_at: list[tuple[float, float] | None] = [None] * len(model.paths)  # an open cut: (its time, its notice)
    for f in model.faults:
        if f.what not in wire:
            continue
        down = f.what in ("path_down", "array_down")
        for c in f.controllers:
            notice = f.at + model.host_params[model.controllers[c].host].detection
            for i in by_controller.get(c, ()):
                opened = cut_at[i]
                if down and up[i]:
                    cut_at[i] = (f.at, notice)
                elif not down and not up[i] and opened is not None:
                    cut, own = opened
                    # back before the host noticed: held until its next look at the paths
                    end = own if f.at >= own else next((w for w in wakes if w >= f.at), own)
                    windows[i].append((cut, min(end, own)))
                    cut_at[i] = None
                up[i] = not down
    for i, open_cut in enumerate(cut_at):
        if open_cut is not None:
            windows[i].append(open_cut)
    return windows
