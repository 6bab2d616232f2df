"""What a path-selection policy sees and what it must do.

A policy is a small class: :meth:`Policy.select` picks a path for one I/O;
:meth:`Policy.on_complete`, :meth:`Policy.on_fail` and :meth:`Policy.on_path_change` let it learn.
It sees the device's paths through :class:`PathView` objects, which are
read-only windows on state the engine keeps (up/down, ALUA state, I/Os and
bytes in flight). It never sees an engine, so the same policy runs on any.

Writing your own::

    import pathsel

    class LeastPending(pathsel.Policy):
        name = "least-pending"

        def select(self, io):
            usable = pathsel.alua_working_set(self.device.paths)
            return min(usable, key=lambda p: p.outstanding, default=None)

    pathsel.simulate("sims/esxi-latency-testdrive.toml", policies=[LeastPending])

One instance serves one device (one host's view of the volume); the engine
makes a fresh copy for every device and every run, so instance state is safe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .kernel import ALUA_CODES, ALUA_NAMES

__all__ = ["Policy", "PathView", "DeviceView", "IORequest", "PathTable", "AluaStates", "alua_working_set", "USABLE_STATES", "Truth"]

# ALUA states in which a path accepts I/O. Standby and unavailable ports reject
# commands (SPC-4 5.16.2), so no policy may use them.
USABLE_STATES = ("AO", "ANO")


@dataclass(slots=True)
class IORequest:
    """One I/O as the host issues it. ``seq`` is unique within a run."""

    seq: int
    job: int
    op: str  # "read" | "write"
    size: int  # bytes
    issued_at: float  # seconds
    attempts: int = 0
    slot: int = -1  # the job slot it occupies while in flight (-1: issued outside an engine)
    node: int = 0  # the NUMA node of the CPU that issued it (its job's numa_node)
    seq_job: int = -1  # its job's index when that job is sequential (fio rw read, write, rw/readwrite), else -1

    @property
    def is_write(self) -> bool:
        return self.op == "write"


class AluaStates:
    """A path table's ALUA states: read and written by name (``"AO"``), kept as codes in ``codes``."""

    __slots__ = ("codes",)

    def __init__(self, codes: np.ndarray) -> None:
        self.codes = codes

    def __getitem__(self, p: int) -> str:
        return ALUA_NAMES[int(self.codes[p])]

    def __setitem__(self, p: int, state: str) -> None:
        self.codes[p] = ALUA_CODES[state]

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self) -> Iterator[str]:
        return (ALUA_NAMES[int(c)] for c in self.codes)


class Truth:
    """The engine's true state as the view's ``t_*`` arrays (:data:`~pathsel.policies.framework.kernel.VIEW`), and
    ``refresh``, which brings them up to date before a policy reads them (the reference engine's; the clairvoyant
    ``oracle`` is the only reader)."""

    def __init__(self, arrays: dict[str, np.ndarray], refresh: Callable[[], None], readers: frozenset[str] = frozenset()) -> None:
        self.arrays = arrays
        self.refresh = refresh
        self.readers = readers  # the policies (by name) that read the truth: only their calls refresh it


class PathTable:
    """Per-path state, owned and updated by the engine; policies read it through views.

    A path here is one device's path (I_T_L: initiator, target port, LUN or
    namespace). Paths of several devices that cross the same initiator-target
    nexus (NVMe: the same controller) share ``controller`` and its counters,
    which is what NVMe's queue-depth and Windows' least queue depth count.

    The columns are numpy arrays (ALUA states as codes, read and written by
    name through ``alua``), so a compiled policy reads the very same numbers
    (:data:`pathsel.policies.framework.kernel.VIEW`).
    """

    def __init__(
        self,
        names: Sequence[str],
        arrays: Sequence[str],
        alua: Sequence[str],
        bandwidth: Sequence[float | None],
        controllers: Sequence[int] | None = None,
        controller_names: Sequence[str] | None = None,
        weights: Sequence[int] | None = None,
        numa_nodes: Sequence[int] | None = None,
        numa_distances: Sequence[Sequence[Sequence[int]]] | None = None,
        hosts: Sequence[int] | None = None,
    ):
        n = len(names)
        self.names = list(names)
        self.arrays = list(arrays)
        self.bandwidth = list(bandwidth)
        self.bandwidth_bps = np.array([b or 0.0 for b in self.bandwidth], dtype=np.float64)
        self.alua = AluaStates(np.array([ALUA_CODES[a] for a in alua], dtype=np.int64))
        self.up = np.ones(n, dtype=np.int64)
        self.outstanding = np.zeros(n, dtype=np.int64)
        self.outstanding_bytes = np.zeros(n, dtype=np.int64)
        self.controller = np.array(list(controllers) if controllers is not None else range(n), dtype=np.int64)
        if controller_names is None:  # a hand-built table (tests): each nexus named as its first path
            first = {int(c): self.names[i] for i, c in reversed(list(enumerate(self.controller)))}
            controller_names = [first.get(c, f"nexus{c}") for c in range(int(self.controller.max()) + 1 if n else 0)]
        self.controller_names = list(controller_names)
        self.weight = np.array(list(weights) if weights is not None else [0] * n, dtype=np.int64)
        # NUMA: each path's adapter's node, each host's SLIT matrix (numa_distances[h][a][b]), each path's host
        self.numa_node = np.array(list(numa_nodes) if numa_nodes is not None else [0] * n, dtype=np.int64)
        self.host = np.array(list(hosts) if hosts is not None else [0] * n, dtype=np.int64)
        self.numa_distances = [np.array(m, dtype=np.int64) for m in (numa_distances or [[[10]]])]
        nc = int(self.controller.max()) + 1 if n else 0
        self.controller_outstanding = np.zeros(nc, dtype=np.int64)
        self.controller_outstanding_bytes = np.zeros(nc, dtype=np.int64)
        # the engine's true state, for the clairvoyant oracle only (the reference engine sets it when one runs)
        self.truth: Truth | None = None

    def start(self, p: int, nbytes: int) -> None:
        """An attempt begins on path ``p`` (the engine calls this)."""
        c = self.controller[p]
        self.outstanding[p] += 1
        self.outstanding_bytes[p] += nbytes
        self.controller_outstanding[c] += 1
        self.controller_outstanding_bytes[c] += nbytes

    def end(self, p: int, nbytes: int) -> None:
        """An attempt on path ``p`` ended: completed or lost (the engine calls this)."""
        c = self.controller[p]
        self.outstanding[p] -= 1
        self.outstanding_bytes[p] -= nbytes
        self.controller_outstanding[c] -= 1
        self.controller_outstanding_bytes[c] -= nbytes


class PathView:
    """Read-only view of one path."""

    __slots__ = ("_t", "index")

    def __init__(self, table: PathTable, index: int) -> None:
        self._t = table
        self.index = index  # position in the run's path table

    @property
    def name(self) -> str:
        """Runtime name, e.g. ``vmhba1:C0:T3:L1``."""
        return self._t.names[self.index]

    @property
    def nexus(self) -> str:
        """The nexus it runs over, e.g. ``vmhba1:C0:T3`` (every device's path over it shares the name)."""
        return self._t.controller_names[int(self._t.controller[self.index])]

    @property
    def array(self) -> str:
        return self._t.arrays[self.index]

    @property
    def alua(self) -> str:
        """AO, ANO, standby, unavailable or transitioning."""
        return ALUA_NAMES[int(self._t.alua.codes[self.index])]

    @property
    def is_up(self) -> bool:
        return bool(self._t.up[self.index])

    @property
    def usable(self) -> bool:
        """Up and in an ALUA state that accepts I/O (AO or ANO)."""
        t = self._t
        return bool(t.up[self.index]) and int(t.alua.codes[self.index]) <= 1

    @property
    def outstanding(self) -> int:
        """This device's I/Os issued on this path and not yet completed."""
        return int(self._t.outstanding[self.index])

    @property
    def outstanding_bytes(self) -> int:
        """Bytes of this device's I/Os in flight on this path."""
        return int(self._t.outstanding_bytes[self.index])

    @property
    def controller(self) -> str:
        """The initiator-target nexus this path crosses (NVMe: its controller), e.g. ``vmhba1:C0:T3``."""
        return self._t.controller_names[int(self._t.controller[self.index])]

    @property
    def controller_outstanding(self) -> int:
        """I/Os in flight over this path's nexus from every device (NVMe's per-controller nr_active)."""
        return int(self._t.controller_outstanding[self._t.controller[self.index]])

    @property
    def controller_outstanding_bytes(self) -> int:
        return int(self._t.controller_outstanding_bytes[self._t.controller[self.index]])

    @property
    def numa_node(self) -> int:
        """The host's NUMA node the path's adapter (HBA/NIC) sits on."""
        return int(self._t.numa_node[self.index])

    @property
    def weight(self) -> int:
        """The administrator's static path weight (Windows MPIO weighted paths; 0 if unset)."""
        return int(self._t.weight[self.index])

    @property
    def bandwidth(self) -> float | None:
        """Link speed in bytes per second (None: not modelled)."""
        return self._t.bandwidth[self.index]

    def __repr__(self) -> str:
        state = "up" if self.is_up else "down"
        return f"<path {self.name} -> {self.array} {self.alua} {state} pending={self.outstanding}>"


class DeviceView:
    """One host's view of one volume (a LUN or namespace): its paths, the clock, and an event log."""

    def __init__(
        self,
        name: str,
        paths: Sequence[PathView],
        clock: Callable[[], float],
        log: Callable[[str, dict[str, Any]], None],
        host: str | None = None,
        volume: str | None = None,
    ) -> None:
        self.name = name
        self.host = host if host is not None else name
        self.volume = volume
        self.paths: tuple[PathView, ...] = tuple(paths)
        self._clock = clock
        self._log = log

    @property
    def now(self) -> float:
        """Simulated seconds since the start of the run."""
        return self._clock()

    def record(self, event: str, **details: Any) -> None:
        """Add a policy event (an evaluation, a path-set change) to the run's results."""
        self._log(event, details)


def alua_working_set(paths: Sequence[PathView], use_ano: bool = False) -> list[PathView]:
    """The paths an ALUA-aware policy may use, in path order.

    Usable AO paths; ANO paths only when no AO path is usable, or always when
    ``use_ano`` (ESXi's useANO=1 and NVMe's non-optimized fallback read the same).
    """
    if use_ano:
        return [p for p in paths if p.usable]
    ao = [p for p in paths if p.usable and p.alua == "AO"]
    return ao if ao else [p for p in paths if p.usable and p.alua == "ANO"]


class Policy:
    """Base class of every path-selection policy. Override :meth:`select`."""

    name = "custom"
    device: DeviceView
    rng: np.random.Generator

    def bind(self, device: DeviceView, rng: np.random.Generator) -> None:
        """Called once before the run; ``rng`` is this policy's own random stream."""
        self.device = device
        self.rng = rng

    def select(self, io: IORequest) -> PathView | None:
        """The path for this I/O, or None when no path can take it (the I/O waits)."""
        raise NotImplementedError

    def on_start(self, path: PathView, io: IORequest) -> None:
        """An attempt of ``io`` starts on ``path`` (right after :meth:`select` chose it)."""

    def on_complete(self, path: PathView, io: IORequest, latency: float) -> None:
        """An I/O finished on ``path``; ``latency`` is its time on that path in seconds."""

    def on_fail(self, path: PathView, io: IORequest, elapsed: float) -> None:
        """An attempt of ``io`` on ``path`` ended without a completion (its frame lost on a path the host then saw
        go down, or aborted at ``io_timeout``); ``elapsed`` is the seconds since it started. Called just before the
        I/O is retried (the next :meth:`select`), as dm-mpath's ``multipath_end_io`` calls the selector's ``end_io``
        for an errored request before requeueing it. A QUEUE FULL status is not a failure."""

    def on_path_change(self, path: PathView) -> None:
        """``path`` went up or down, or its ALUA state changed."""

    def wake_at(self) -> float:
        """After :meth:`select` returned None: the time to ask again although no path changes (dm's paths failed
        until multipathd's next check); ``math.inf`` (the default): only a path change or the APD timeout."""
        return math.inf

    def config_string(self) -> str:
        """The device config as the OS would print it (esxcli's form for ESXi policies)."""
        return f"{{policy={self.name}}}"
