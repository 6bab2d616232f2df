"""A compiled-style policy as a Python :class:`~pathsel.policies.framework.base.Policy`: how the reference engine runs it.

The adapter lays the device's paths out in a :data:`~pathsel.policies.framework.kernel.VIEW`
record over the :class:`~pathsel.policies.framework.base.PathTable`'s own arrays (so the
hooks read exactly what Python policies read), keeps the policy's state
record, and calls the policy's compiled entry points (the same machine code
the fast engine calls) through ctypes. Events the hooks log go to the
device's log as they happen; the config string comes from the policy's own
``config_string``.

One adapter serves one device, so its records have one device (``d = 0``).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from ...jit import Packed
from .base import DeviceView, IORequest, PathView, Policy
from .define import DeviceInfo, PolicyDef, Snapshot
from .kernel import EV_POLICY, FL_EV_ROOM, FL_NEV, N_FLAGS, VIEW

__all__ = ["CompiledPolicy", "policy_class", "event_details", "EVENT_ROWS"]

EVENT_ROWS = 64  # log rows per device between drains (a hook logs a few at most)
_SELECT = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
_START = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
_COMPLETE = ctypes.CFUNCTYPE(None, *([ctypes.c_int64] * 5), ctypes.c_double)
_PATH = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
_FAIL = _COMPLETE


def event_details(
    defn: PolicyDef, kind: int, a: int, b: int, k: int, mask: np.ndarray, val: np.ndarray, names: tuple[str, ...]
) -> tuple[str, dict[str, Any]]:
    """A policy's log entry as the results show it: (event name, details). Both engines use this."""
    from .define import EventData

    ev = defn.events[kind - EV_POLICY]
    return ev.name, ev.describe(EventData(a, b, k, mask, val, names))


class CompiledPolicy(Policy):
    """Runs a :class:`PolicyDef`'s compiled hooks for one device. Make one with :func:`policy_class`."""

    definition: PolicyDef

    def __init__(self, **params: Any) -> None:
        d = self.definition
        self.name = d.name
        values = {p.name: p.default for p in d.params}
        options = dict(d.options)
        for key, raw in params.items():
            if key in options:
                values[key] = options[key](raw)
                continue
            p = d.param(key)
            if p is None:
                known = ", ".join(x.name for x in d.params) or "none"
                raise TypeError(f"{d.name} has no parameter {key!r} (parameters: {known})")
            values[key] = raw if p.parse is None and p.kind is not str and isinstance(raw, p.kind) else p.coerce(raw)
        self.params = values
        self._slot_of: dict[int, int] = {}

    @classmethod
    def with_params(cls, params: dict[str, Any]) -> CompiledPolicy:
        """An instance with ``params`` taken as they are (a spec's, already checked)."""
        inst = cls.__new__(cls)
        inst.name = cls.definition.name
        inst.params = {**{p.name: p.default for p in cls.definition.params}, **params}
        inst._slot_of = {}
        return inst

    # -- the records ---------------------------------------------------------------
    def bind(self, device: DeviceView, rng: Any) -> None:
        super().bind(device, rng)
        d = self.definition
        paths = device.paths
        self._local = {p.index: k for k, p in enumerate(paths)}
        self._names = tuple(p.name for p in paths)
        self._paths = tuple(p.index for p in paths)
        self._info = DeviceInfo(self._names, tuple(p.alua for p in paths), self._paths, tuple(p.nexus for p in paths))
        self._table = paths[0]._t if paths else None
        self._hooks = d.hooks()
        self._select = _SELECT(self._hooks.select)
        self._start = _START(self._hooks.start) if self._hooks.start else None
        self._complete = _COMPLETE(self._hooks.complete) if self._hooks.complete else None
        self._path_change = _PATH(self._hooks.path_change) if self._hooks.path_change else None
        self._fail = _FAIL(self._hooks.fail) if self._hooks.fail else None
        self._rows = np.zeros(64, dtype=np.float64)
        # (next value, refill mark): this adapter refills before each call, so the mark is never passed
        self._rq = np.array([[0, np.iinfo(np.int64).max]], dtype=np.int64)
        self._held = 0  # values in the row
        self._slots = 0
        self._grow(16)

    def _grow(self, slots: int) -> None:
        """(Re)lay the records out for ``slots`` I/O slots, keeping what the policy has learnt."""
        old = getattr(self, "_state", None)
        n = len(self._paths)
        mp = max(n, 1)
        t = self._table
        if t is None:  # a device with no paths: nothing to read, select has nothing to return
            empty_i, empty_f = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.float64)
            cols = dict(
                p_ctrl=empty_i,
                p_bw=empty_f,
                p_weight=empty_i,
                up=empty_i,
                alua=empty_i,
                out=empty_i,
                out_bytes=empty_i,
                c_out=empty_i,
                c_out_bytes=empty_i,
            )
            size = 1
        else:
            cols = dict(
                p_ctrl=t.controller,
                p_bw=t.bandwidth_bps,
                p_weight=t.weight,
                up=t.up,
                alua=t.alua.codes,
                out=t.outstanding,
                out_bytes=t.outstanding_bytes,
                c_out=t.controller_outstanding,
                c_out_bytes=t.controller_outstanding_bytes,
            )
            size = len(t.names)
        # the truth (the oracle's t_* fields): the engine's when it keeps one, else a world with nothing wrong
        truth = t.truth if t is not None else None
        if truth is not None:
            cols.update(truth.arrays)
        else:
            nc = max(1, int(cols["p_ctrl"].max()) + 1 if len(cols["p_ctrl"]) else 1)
            cols.update(
                t_up=np.ones(nc, dtype=np.int64),
                t_extra=np.zeros(nc, dtype=np.float64),
                t_loss=np.zeros(nc, dtype=np.float64),
                t_loss_op=np.zeros((nc, 2), dtype=np.float64),
                t_wfree=np.zeros((1, 2), dtype=np.float64),
                t_q=np.zeros((1, 8), dtype=np.int64),
                t_path=np.zeros((size, 9), dtype=np.float64),
                t_row=np.full((size, 2), -1, dtype=np.int64),
                t_links=np.full((nc, 1), -1, dtype=np.int64),
            )
        self._truth = truth if truth is not None and self.definition.name in truth.readers else None
        if t is None:
            p_node, numa_dist = np.zeros(1, dtype=np.int64), np.full((1, 1, 1), 10, dtype=np.int64)
        else:
            p_node = t.numa_node
            slit = t.numa_distances[int(t.host[self._paths[0]])] if self._paths else np.full((1, 1), 10, dtype=np.int64)
            numa_dist = np.ascontiguousarray(slit.reshape((1, *slit.shape)))
        p_local = np.full(size, -1, dtype=np.int64)
        for k, p in enumerate(self._paths):
            p_local[p] = k
        s_size = np.zeros(slots, dtype=np.int64)
        s_op = np.zeros(slots, dtype=np.int64)
        s_node = np.zeros(slots, dtype=np.int64)
        s_seq = np.full(slots, -1, dtype=np.int64)
        if getattr(self, "_view", None) is not None:
            s_size[: self._slots] = self._view.s_size
            s_op[: self._slots] = self._view.s_op
            s_node[: self._slots] = self._view.s_node
            s_seq[: self._slots] = self._view.s_seq
        self._view: Packed = VIEW.pack(
            dict(
                d_paths=np.array([list(self._paths) or [-1]], dtype=np.int64).reshape(1, mp),
                d_np=np.array([n], dtype=np.int64),
                p_local=p_local,
                p_dev=np.zeros(size, dtype=np.int64),
                clock=np.zeros(1, dtype=np.float64),
                s_size=s_size,
                s_op=s_op,
                s_node=s_node,
                s_seq=s_seq,
                p_node=p_node,
                numa_dist=numa_dist,
                d_nodes=np.array([numa_dist.shape[1]], dtype=np.int64),  # the host's own SLIT: its own node count
                d_wake=np.full(1, np.inf),  # the policy's wake time when it returns no path (wake_at)
                flags=np.zeros(N_FLAGS, dtype=np.int64),
                ev_t=np.zeros(EVENT_ROWS, dtype=np.float64),
                ev_dev=np.zeros(EVENT_ROWS, dtype=np.int64),
                ev_kind=np.zeros(EVENT_ROWS, dtype=np.int64),
                ev_path=np.zeros(EVENT_ROWS, dtype=np.int64),
                ev_a=np.zeros(EVENT_ROWS, dtype=np.int64),
                ev_b=np.zeros(EVENT_ROWS, dtype=np.int64),
                ev_mask=np.zeros((EVENT_ROWS, mp), dtype=np.int8),
                ev_val=np.zeros((EVENT_ROWS, mp), dtype=np.float64),
                rnd=self._rows,
                rq=self._rq,
                d_stream=np.zeros(1, dtype=np.int64),
                **cols,
            )
        )
        self._view.flags[FL_EV_ROOM] = EVENT_ROWS - 8
        state = self.definition.new_state(self.params, [self._info], slots)
        if old is not None:  # carry the learnt state over; per-I/O columns keep the slots they had
            for name, _, ndim in self.definition.layout.fields:
                if ndim == 0:
                    continue
                a, b = getattr(old, name), getattr(state, name)
                if a.shape == b.shape:
                    b[...] = a
                else:
                    b[: a.shape[0]] = a
        self._state: Packed = state
        self._slots = slots

    def _slot(self, io: IORequest) -> int:
        s = io.slot
        if s < 0:  # issued by hand (a test rig): a slot of our own while it is in flight
            s = self._slot_of.get(io.seq, -1)
            if s < 0:
                used = set(self._slot_of.values())
                s = next(i for i in range(len(used) + 1) if i not in used)
                self._slot_of[io.seq] = s
        if s >= self._slots:
            self._grow(max(2 * self._slots, s + 1))
        return s

    def _before(self) -> None:
        v = self._view
        v.clock[0] = self.device.now
        if self._truth is not None:
            self._truth.refresh()
        need = self.definition.draws
        if need:  # the hooks may draw ``draws`` uniforms: have them in the row first
            pos = int(self._rq[0, 0])
            left = self._held - pos
            if left < need:
                rest = self._rows[pos : self._held].copy()
                fresh = (
                    self.rng.random(len(self._rows) - left)
                    if isinstance(self.rng, np.random.Generator)
                    else np.array([self.rng.random() for _ in range(need - left)], dtype=np.float64)
                )
                self._rows[:left] = rest
                self._rows[left : left + len(fresh)] = fresh
                self._rq[0, 0] = 0
                self._held = left + len(fresh)

    def _after(self) -> None:
        v = self._view
        n = int(v.flags[FL_NEV])
        if not n:
            return
        v.flags[FL_NEV] = 0
        for e in range(n):
            name, details = event_details(
                self.definition,
                int(v.ev_kind[e]),
                int(v.ev_a[e]),
                int(v.ev_b[e]),
                int(v.ev_path[e]),
                v.ev_mask[e],
                v.ev_val[e],
                self._names,
            )
            self.device.record(name, **details)

    # -- the hooks --------------------------------------------------------------------
    def select(self, io: IORequest) -> PathView | None:
        if not self._paths:
            return None
        s = self._slot(io)
        self._view.s_size[s] = io.size
        self._view.s_op[s] = 1 if io.op == "write" else 0
        self._view.s_node[s] = io.node
        self._view.s_seq[s] = io.seq_job
        self._before()
        k = self._select(self._view.address, self._state.address, 0, s)
        self._after()
        return self.device.paths[k] if k >= 0 else None

    def wake_at(self) -> float:
        return float(self._view.d_wake[0])

    def on_start(self, path: PathView, io: IORequest) -> None:
        if self._start is not None:
            self._before()
            self._start(self._view.address, self._state.address, 0, self._local[path.index], self._slot(io))
            self._after()

    def on_complete(self, path: PathView, io: IORequest, latency: float) -> None:
        s = self._slot(io)
        if self._complete is not None:
            self._view.s_size[s] = io.size
            self._before()
            self._complete(self._view.address, self._state.address, 0, self._local[path.index], s, latency)
            self._after()
        if io.slot < 0:
            self._slot_of.pop(io.seq, None)

    def on_fail(self, path: PathView, io: IORequest, elapsed: float) -> None:
        if self._fail is not None:
            s = self._slot(io)
            self._view.s_size[s] = io.size
            self._before()
            self._fail(self._view.address, self._state.address, 0, self._local[path.index], s, elapsed)
            self._after()
        # a hand-issued I/O keeps its slot: it is retried (select again), as the engines retry a failed attempt

    def on_path_change(self, path: PathView) -> None:
        if self._path_change is not None:
            self._before()
            self._path_change(self._view.address, self._state.address, 0, self._local[path.index])
            self._after()

    def config_string(self) -> str:
        return self.definition.describe_config(Snapshot(self.params, self._state, self._view, 0, self._names, self._paths))

    @property
    def state(self) -> Packed:
        """The policy's state record (numpy arrays; device 0 is this device)."""
        return self._state

    @property
    def view(self) -> Packed:
        """The view record the hooks read (numpy arrays; device 0 is this device)."""
        return self._view


def policy_class(defn: PolicyDef, class_name: str | None = None, doc: str | None = None, *, module: str | None = None) -> type[CompiledPolicy]:
    """A :class:`Policy` subclass that runs ``defn`` (its keyword arguments are the policy's parameters).

    ``module``: the module that binds the class to ``class_name`` (a family passes its ``__name__``), so that pickle
    (Dask ships policies to its workers) finds the class where it lives.
    """
    return type(
        class_name or f"{defn.ident.title().replace('_', '')}Policy",
        (CompiledPolicy,),
        {"definition": defn, "name": defn.name, "__doc__": doc or defn.summary, "__module__": module or __name__},
    )
