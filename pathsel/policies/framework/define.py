"""Defining a path selector once, for both engines: parameters, state, compiled hooks, config string.

A built-in policy is a :class:`PolicyDef` in one file per family, in the
shape of the Linux selectors (``dm-ps-service-time.c``: arguments, per-path
state, select, start and end of an I/O, status, together):

* ``params``: :class:`Param` entries with the names users type (esxcli's,
  multipath.conf's), real defaults, ranges and help. Numeric parameters and
  parameters with choices are also compiled into the state record as
  scalars of the same name (a choice as its index in ``choices``).
* ``state``: :class:`Field` entries (:func:`per_device`, :func:`per_path`,
  :func:`per_io`, :func:`scratch`, :func:`scalar`, :func:`table`), numpy
  arrays an engine allocates for the run.
* hooks, compiled by numba (decorate them with :data:`compiled`):
  ``select(v, st, d, slot) -> k`` picks device ``d``'s path ``k`` for the I/O
  in ``slot`` (-1: no path, the I/O waits); ``start(v, st, d, k, slot)`` an
  attempt starts on path ``k``; ``complete(v, st, d, k, slot, latency)`` it
  completed after ``latency`` seconds on the path; ``fail(v, st, d, k, slot, elapsed)`` it ended without a
  completion (lost on a path the host then saw go down, or aborted at io_timeout) ``elapsed`` seconds after it
  started, called just before the retry's ``select``; ``path_change(v, st, d, k)``
  the host saw path ``k`` go up or down or change ALUA state. ``v`` is the
  :data:`pathsel.policies.framework.kernel.VIEW` record, ``st`` the policy's own.
* Python: ``setup(s)`` fills the state from the parameters and the
  topology before the run; ``config_string(c)`` prints the device config as
  the OS would; ``events`` turn the policy's log entries into dicts.

Both engines run the same compiled hooks: the fast engine calls them through
function pointers from its loop, the reference engine from Python
(:mod:`pathsel.policies.framework.adapter`). A built-in policy's entry points are
generated once into the cache directory and cached by numba, keyed by a hash
of the sources they are built from; a user's policy compiles in a few
seconds when first used, and neither recompiles the engine.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np
from numba.core import types
from numba.experimental import structref

from ...jit import (
    Layout,
    Packed,
    address_of,
    generated_dir,
    mark_ready,
    njit,
    source_hash,
)
from .kernel import ALUA_CODES, view_at

__all__ = [
    "Param",
    "Field",
    "Event",
    "PolicyDef",
    "Hooks",
    "Setup",
    "Snapshot",
    "EventData",
    "DeviceInfo",
    "compiled",
    "compiled_inline",
    "per_device",
    "per_path",
    "per_io",
    "scratch",
    "scalar",
    "table",
    "INT32_MAX",
    "UINT32_MAX",
]

INT32_MAX = 2147483647
UINT32_MAX = 4294967295

_JIT = dict(cache=False, nogil=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
# A policy's compiled functions. Not cached themselves: only its entry points are (their
# records' types are made per policy at run time, and numba pickles cached signatures).
compiled = njit(forceinline=False, **_JIT)
compiled_inline = njit(forceinline=True, **_JIT)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@dataclass(frozen=True)
class Param:
    """A parameter users set in a spec (``rr:iops=1``) or beside ``spec`` in a scenario file."""

    name: str
    default: Any
    kind: type
    doc: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    parse: Callable[[Any], Any] | None = None  # a value with its own grammar (dm's failback); choices then only describe it
    unit: str = ""  # shown after the default in the docs (ms, s)
    shown: str = ""  # the docs' text after "=" when the default and range say less (a path name, a pathsel reading)

    def coerce(self, raw: Any) -> Any:
        """Turn a spec or TOML value into this parameter's type, or raise ValueError."""
        if self.parse is not None:
            return self.parse(raw)
        if self.kind is str:
            value = str(raw)
            if self.choices and value not in self.choices:
                raise ValueError(f"{self.name} must be one of {', '.join(self.choices)}, got {value!r}")
            return value
        if isinstance(raw, bool):
            raw = int(raw)
        try:
            if isinstance(raw, str) and not raw.isascii():  # int() and float() read '\u0663' as 3: ASCII digits only
                raise ValueError
            value = self.kind(raw)
            if self.kind is int and isinstance(raw, float) and raw != value:
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{self.name} must be {'an integer' if self.kind is int else 'a number'}, got {raw!r}") from None
        if (self.low is not None and not value >= self.low) or (self.high is not None and not value <= self.high):
            low = _num(self.low) if self.low is not None else "-inf"
            high = _num(self.high) if self.high is not None else "inf"
            raise ValueError(f"{self.name} must be in {low}..{high}, got {value!r}")
        return value

    @property
    def compiled_as(self) -> str | None:
        """The scalar type the hooks read it as (``i8`` or ``f8``), None when only Python reads it."""
        if self.parse is not None:
            return None
        if self.kind is int:
            return "i8"
        if self.kind is float:
            return "f8"
        return "i8" if self.choices else None

    def describe(self) -> str:
        """``name = default [range]`` as the docs table and ``pathsel policies`` show it."""
        if self.shown:
            return f"`{self.name}` = {self.shown}"
        text = f"`{self.name}` = {self.default}" + (f" {self.unit}" if self.unit else "")
        if self.low is not None and self.high is not None:
            text += f" [{_num(self.low)} … {_num(self.high)}]"
        elif self.choices:
            text += f" [{', '.join(self.choices)}]"
        return text

    def compiled_value(self, value: Any) -> float:
        return self.choices.index(value) if self.kind is str else value  # type: ignore[union-attr]


@dataclass(frozen=True)
class Field:
    """A piece of a policy's state: ``shape`` in dimensions D (devices), MP (paths of a device), N (I/O slots), or numbers."""

    name: str
    dtype: str = "i8"
    shape: tuple[str | int, ...] = ("D",)
    init: float = 0


def per_device(name: str, dtype: str = "i8", init: float = 0) -> Field:
    return Field(name, dtype, ("D",), init)


def per_path(name: str, dtype: str = "i8", init: float = 0) -> Field:
    """One value per device path (``st.x[d, k]``)."""
    return Field(name, dtype, ("D", "MP"), init)


def per_io(name: str, dtype: str = "i8", init: float = -1) -> Field:
    """One value per I/O slot (``st.x[slot]``): the I/O in that slot, while it is in flight."""
    return Field(name, dtype, ("N",), init)


def scratch(name: str, dtype: str = "i8") -> Field:
    """Room for one device's paths (``st.x[k]``), reused by every call."""
    return Field(name, dtype, ("MP",), 0)


def scalar(name: str, dtype: str = "i8", init: float = 0) -> Field:
    """One number (``setup`` may set it: ``s.state.set_scalar(name, value)``)."""
    return Field(name, dtype, (), init)


def table(name: str, dtype: str, length: int, init: float = 0) -> Field:
    """A fixed-length array (``setup`` fills it)."""
    return Field(name, dtype, (length,), init)


@dataclass(frozen=True)
class DeviceInfo:
    """One device as ``setup`` sees it: its paths' names, ALUA states at the start, and run-wide indices."""

    names: tuple[str, ...]
    alua: tuple[str, ...]
    paths: tuple[int, ...]
    nexus: tuple[str, ...] = ()  # each path's nexus (vmhba1:C0:T0): what a nexus-wide preferred path names


@dataclass
class Setup:
    """What ``setup`` gets: the parameters (as given), the state record (arrays writable) and the devices."""

    params: dict[str, Any]
    state: Packed
    devices: list[DeviceInfo]


@dataclass
class Snapshot:
    """What ``config_string`` gets: one device's state at the end of the run (numpy arrays, read-only by convention)."""

    params: dict[str, Any]
    state: Packed
    view: Packed
    d: int
    names: tuple[str, ...]
    paths: tuple[int, ...]


@dataclass
class EventData:
    """One of the policy's log entries: ``a``, ``b``, the path ``k`` (-1 for none) and the per-path columns."""

    a: int
    b: int
    k: int
    mask: np.ndarray
    val: np.ndarray
    names: tuple[str, ...]


@dataclass(frozen=True)
class Event:
    """A kind of log entry the policy writes (``log_event(v, d, EV_POLICY + i, ...)`` for the i-th): its name and how to read it."""

    name: str
    describe: Callable[[EventData], dict[str, Any]]


SELECT_SIG = types.int64(types.int64, types.int64, types.int64, types.int64)
START_SIG = types.void(types.int64, types.int64, types.int64, types.int64, types.int64)
COMPLETE_SIG = types.void(types.int64, types.int64, types.int64, types.int64, types.int64, types.float64)
PATH_SIG = types.void(types.int64, types.int64, types.int64, types.int64)
FAIL_SIG = COMPLETE_SIG  # (view, state, d, k, slot, elapsed seconds since the attempt started)


@dataclass(frozen=True)
class Hooks:
    """A policy's compiled entry points: C functions taking (view address, state address, ...); 0 for none."""

    select: int
    start: int
    complete: int
    path_change: int
    fail: int = 0  # an attempt ended without a completion (FAIL_SIG)
    keep: tuple[Any, ...] = ()  # the cfunc objects, which own the code


_IDENT = re.compile(r"[^0-9A-Za-z]+")


@dataclass(eq=False)
class PolicyDef:
    """One path selector, written once: see the module's docstring."""

    name: str
    summary: str
    source: str  # what it models: the OS's name for it and the public source (markdown)
    select: Any
    params: tuple[Param, ...] = ()
    aliases: tuple[str, ...] = ()
    state: tuple[Field, ...] = ()
    start: Any = None
    complete: Any = None
    path_change: Any = None
    fail: Any = None  # fail(v, st, d, k, slot, elapsed): an attempt failed (lost, aborted at io_timeout)
    setup: Callable[[Setup], None] | None = None
    config_string: Callable[[Snapshot], str] | None = None
    events: tuple[Event, ...] = ()
    draws: int = 0  # standard uniforms one call may draw from the device's stream (uniform(v, d))
    class_name: str = ""  # the Python class pathsel.policies exports for it (the reference engine's adapter)
    counts: str = ""  # docs: what the policy counts or measures to choose
    notes: str = ""  # docs: its quirks, and the assumptions pathsel makes where the source is silent
    # keyword arguments the Python class takes beside the parameters (not in specs): (name, check) pairs;
    # ``setup`` finds them in ``params``
    options: tuple[tuple[str, Callable[[Any], Any]], ...] = ()
    builtin: bool = False  # set by the registry: entry points generated into the cache and cached on disk
    _layout: Layout | None = field(default=None, init=False, repr=False)
    _hooks: Hooks | None = field(default=None, init=False, repr=False)
    _lock: Any = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        names = [p.name for p in self.params] + [f.name for f in self.state]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"policy {self.name!r}: {', '.join(sorted(dup))} declared twice (parameters and state share names)")
        if self.select is None:
            raise ValueError(f"policy {self.name!r} needs a select hook")

    def param(self, key: str) -> Param | None:
        return next((p for p in self.params if p.name == key), None)

    @property
    def ident(self) -> str:
        return _IDENT.sub("_", self.name).strip("_") or "policy"

    # -- the state record --------------------------------------------------------
    @property
    def layout(self) -> Layout:
        if self._layout is None:
            cls = type(f"{self.ident.title().replace('_', '')}State", (types.StructRef,), {})
            structref.register(cls)
            fields = [(p.name, p.compiled_as, 0) for p in self.params if p.compiled_as]
            fields += [(f.name, f.dtype, len(f.shape)) for f in self.state]
            self._layout = Layout(cls, fields)
        return self._layout

    @property
    def state_at(self) -> Any:
        """The intrinsic that reads this policy's record at an address (what an entry point does)."""
        return address_of(self.layout)

    def new_state(self, params: Mapping[str, Any], devices: Sequence[DeviceInfo], slots: int) -> Packed:
        """The record for a run: ``devices`` (each with its paths), ``slots`` I/O slots; then ``setup``."""
        dims = {"D": len(devices), "MP": max(1, max((len(x.paths) for x in devices), default=1)), "N": max(1, slots)}
        values: dict[str, Any] = {}
        for p in self.params:
            if p.compiled_as:
                values[p.name] = p.compiled_value(params.get(p.name, p.default))
        for f in self.state:
            if not f.shape:
                values[f.name] = f.init
                continue
            shape = tuple(dims[s] if isinstance(s, str) else s for s in f.shape)
            values[f.name] = np.full(shape, f.init, dtype={"i8": np.int64, "f8": np.float64, "u8": np.uint64, "i1": np.int8}[f.dtype])
        packed = self.layout.pack(values)
        if self.setup is not None:
            self.setup(Setup(dict(params), packed, list(devices)))
        return packed

    def describe_config(self, snap: Snapshot) -> str:
        if self.config_string is None:
            return f"{{policy={self.name}}}"
        return self.config_string(snap)

    # -- compiled entry points -------------------------------------------------------
    def cache_key(self) -> str:
        """What names this built-in policy's compiled entry points in the cache (a hash of their sources)."""
        return f"policy-{self.ident}-" + source_hash(module_files(self), self.name)

    @property
    def loaded(self) -> bool:
        """True once this process has the entry points (:meth:`hooks` compiled or loaded them)."""
        return self._hooks is not None

    def hooks(self) -> Hooks:
        """The entry points, compiled (or loaded from the cache) on first use."""
        with self._lock:
            if self._hooks is None:
                self._hooks = _generated_hooks(self) if self.builtin else _closure_hooks(self)
            return self._hooks


def _entry_address(fn: Any) -> int:
    return int(fn.address) if fn is not None else 0


def _closure_hooks(defn: PolicyDef) -> Hooks:
    """Entry points for a policy defined at run time (a notebook): compiled in this process, not cached."""
    state_at = defn.state_at
    select: Callable[..., int] = defn.select  # a compiled function (numba dispatcher): the path slot it chose
    start, complete, path_change, fail = defn.start, defn.complete, defn.path_change, defn.fail
    keep: list[Any] = []

    @nb.cfunc(SELECT_SIG, nogil=True, error_model="numpy")
    def select_entry(va: int, sa: int, d: int, slot: int) -> int:
        return select(view_at(va), state_at(sa), d, slot)

    keep.append(select_entry)
    start_entry = complete_entry = path_entry = fail_entry = None
    if start is not None:

        @nb.cfunc(START_SIG, nogil=True, error_model="numpy")
        def start_entry(va: int, sa: int, d: int, k: int, slot: int) -> None:
            start(view_at(va), state_at(sa), d, k, slot)

        keep.append(start_entry)
    if complete is not None:

        @nb.cfunc(COMPLETE_SIG, nogil=True, error_model="numpy")
        def complete_entry(va: int, sa: int, d: int, k: int, slot: int, latency: float) -> None:
            complete(view_at(va), state_at(sa), d, k, slot, latency)

        keep.append(complete_entry)
    if path_change is not None:

        @nb.cfunc(PATH_SIG, nogil=True, error_model="numpy")
        def path_entry(va: int, sa: int, d: int, k: int) -> None:
            path_change(view_at(va), state_at(sa), d, k)

        keep.append(path_entry)
    if fail is not None:

        @nb.cfunc(FAIL_SIG, nogil=True, error_model="numpy")
        def fail_entry(va: int, sa: int, d: int, k: int, slot: int, elapsed: float) -> None:
            fail(view_at(va), state_at(sa), d, k, slot, elapsed)

        keep.append(fail_entry)
    return Hooks(
        _entry_address(select_entry),
        _entry_address(start_entry),
        _entry_address(complete_entry),
        _entry_address(path_entry),
        _entry_address(fail_entry),
        tuple(keep),
    )


_GENERATED = '''"""Entry points of the built-in policy {name!r}, generated by pathsel.policies.framework.define. Do not edit.

Sources hash {digest}: the policy's module, the policy toolkit and the numba plumbing it was built from.
"""

import numba as nb

from pathsel.policies.framework.define import COMPLETE_SIG, FAIL_SIG, PATH_SIG, SELECT_SIG, START_SIG
from pathsel.policies.framework.kernel import view_at
from pathsel.policies.registry import builtin

_defn = builtin({name!r})
_state_at = _defn.state_at
_select = _defn.select
_start = _defn.start
_complete = _defn.complete
_path_change = _defn.path_change
_fail = _defn.fail


@nb.cfunc(SELECT_SIG, cache=True, nogil=True, error_model="numpy")
def select(va, sa, d, slot):
    return _select(view_at(va), _state_at(sa), d, slot)
'''

_GENERATED_HOOKS = {
    "start": """

@nb.cfunc(START_SIG, cache=True, nogil=True, error_model="numpy")
def start(va, sa, d, k, slot):
    _start(view_at(va), _state_at(sa), d, k, slot)
""",
    "complete": """

@nb.cfunc(COMPLETE_SIG, cache=True, nogil=True, error_model="numpy")
def complete(va, sa, d, k, slot, latency):
    _complete(view_at(va), _state_at(sa), d, k, slot, latency)
""",
    "path_change": """

@nb.cfunc(PATH_SIG, cache=True, nogil=True, error_model="numpy")
def path_change(va, sa, d, k):
    _path_change(view_at(va), _state_at(sa), d, k)
""",
    "fail": """

@nb.cfunc(FAIL_SIG, cache=True, nogil=True, error_model="numpy")
def fail(va, sa, d, k, slot, elapsed):
    _fail(view_at(va), _state_at(sa), d, k, slot, elapsed)
""",
}


def module_files(defn: PolicyDef) -> list[Path]:
    """What a built-in policy's compiled entry points are built from: this module, the toolkit, the plumbing, its
    hooks' module and every module whose compiled functions that one calls (the shared selectors: they compile into
    the hooks, so an edit there must recompile them)."""
    here = Path(__file__).resolve()
    files = {here, here.with_name("kernel.py"), here.parents[2] / "jit.py"}
    todo = [
        py.__module__
        for fn in (defn.select, defn.start, defn.complete, defn.path_change, defn.fail)
        if (py := getattr(fn, "py_func", None)) is not None
    ]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        module = sys.modules[name]
        files.add(Path(module.__file__))  # type: ignore[arg-type]
        todo += [py.__module__ for value in vars(module).values() if (py := getattr(value, "py_func", None)) is not None]
    return sorted(files)


def _generated_hooks(defn: PolicyDef) -> Hooks:
    """A built-in policy's entry points: a module written once into the cache directory, its cfuncs cached by numba."""
    digest = source_hash(module_files(defn), defn.name)
    text = _GENERATED.format(name=defn.name, digest=digest)
    for hook in ("start", "complete", "path_change", "fail"):
        if getattr(defn, hook) is not None:
            text += _GENERATED_HOOKS[hook]
    folder = generated_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"policy_{defn.ident}_{digest}.py"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_name(path.name + f".{id(defn)}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # whole or absent, whatever another process does at the same time
    modname = f"pathsel_generated_{defn.ident}_{digest}"
    module = sys.modules.get(modname)
    if module is None:
        spec = importlib.util.spec_from_file_location(modname, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        spec.loader.exec_module(module)
    fns = [getattr(module, h, None) for h in ("select", "start", "complete", "path_change", "fail")]
    select, start, complete, path_change, fail = (_entry_address(f) for f in fns)
    hooks = Hooks(select, start, complete, path_change, fail, keep=(module,))
    mark_ready(defn.cache_key())  # compiled and cached: the next run starts without compiling it
    return hooks


def alua_code(name: str) -> int:
    return ALUA_CODES[name]


def nan_to_none(x: float) -> float | None:
    return None if math.isnan(x) else x
