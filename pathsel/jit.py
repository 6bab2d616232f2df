"""numba plumbing shared by the fast engine and compiled-style policies.

* **Where compiled code is cached.** Outside the installed package, in a
  per-user cache directory (``PATHSEL_CACHE_DIR``, else ``NUMBA_CACHE_DIR``,
  else the platform's user cache directory): installing, reinstalling or
  uninstalling pathsel never leaves files beside its sources. The cache is
  keyed by a hash of the sources the compiled code was built from
  (:func:`source_hash`), not by file times, so a reinstall of the same
  version reuses it and any change to a kernel source recompiles.
* **Decorators.** :data:`hot` (inlined into the caller: the event path),
  :data:`jit` (an ordinary compiled helper) and :data:`entry` (called from
  Python). Helpers get no CPython or C wrapper: they are only ever called
  from compiled code, and each wrapper costs compile time.
* **Layouts.** A :class:`Layout` declares a record of arrays and scalars
  once; it gives the numba type compiled code reads it through
  (:class:`Borrowed`, a plain pointer), and :meth:`Layout.pack` lays numpy
  arrays out in that record for Python, with no compiled constructor.
  Compiled code receives a record as its address (an int64), so compiled
  functions have signatures of plain numbers: they cache by value, and a
  policy compiled on its own can be called by an engine compiled before it.
* **Helpers are only linked.** numba compiles every jitted function into
  its own library: it optimises it, generates machine code for it, and then
  links its IR into each caller, which it optimises and code-generates
  again. The engine's helpers are never called on their own, so their
  libraries are *link-only* (:class:`Dispatcher` with no wrappers): their IR
  is kept for the caller and cached as bitcode, and only the entry point
  that links them is optimised and code-generated. That cut a cold engine
  compile by about a third (23.9 s against 35.3 s, alternated), and the
  loop's machine code runs as fast.
* **Calls through pointers.** A policy's hooks are C functions
  (``numba.cfunc``); the engine calls them by address (:func:`call_select`
  and friends), so adding a policy never recompiles the engine.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numba as nb
import numpy as np
from llvmlite import ir
from numba import _dynfunc
from numba.core import caching, cgutils, codegen, cpu, dispatcher, imputils, types
from numba.core.datamodel import models
from numba.core.extending import (
    infer_getattr,
    intrinsic,
    lower_getattr_generic,
    register_model,
)
from numba.core.registry import CPUDispatcher
from numba.core.typing.templates import AttributeTemplate

__all__ = [
    "cache_dir",
    "source_hash",
    "kernel_sources",
    "is_ready",
    "mark_ready",
    "njit",
    "light_passes",
    "PASS_LEVEL",
    "Dispatcher",
    "hot",
    "jit",
    "entry",
    "Borrowed",
    "Layout",
    "Packed",
    "prefetch",
    "on_lines",
    "address_of",
    "call_i_4",
    "call_v_4",
    "call_v_5",
    "call_v_6f",
]

PACKAGE_DIR = Path(__file__).resolve().parent


# -- the cache ------------------------------------------------------------------
def cache_dir() -> Path:
    """The directory pathsel keeps compiled code and generated sources in (created on use)."""
    for var in ("PATHSEL_CACHE_DIR", "NUMBA_CACHE_DIR"):
        value = os.environ.get(var, "").strip()
        if value:
            return Path(value).expanduser() / ("numba" if var == "PATHSEL_CACHE_DIR" else "pathsel")
    import platformdirs

    return Path(platformdirs.user_cache_dir("pathsel", appauthor=False)) / "numba"


def source_hash(files: Iterable[str | Path], extra: str = "") -> str:
    """A short hash of the files' contents (and ``extra``), numba's version and the Python version."""
    h = hashlib.sha256()
    for f in sorted(str(Path(x).resolve()) for x in files):
        h.update(Path(f).read_bytes())
    h.update(f"{extra}|numba {nb.__version__}|py {sys.version_info[:2]}".encode())
    return h.hexdigest()[:16]


def kernel_sources() -> list[Path]:
    """The sources whose compiled code depends on each other: the engine, the policy toolkit, this module."""
    out = [PACKAGE_DIR / "jit.py", PACKAGE_DIR / "policies" / "framework" / "kernel.py"]
    # the recorder's compiled modules (readout.py reads a record back in Python: editing it recompiles nothing)
    out += [PACKAGE_DIR / "engine" / "recorder" / f"{m}.py" for m in ("record", "bookkeeping")]
    out.append(PACKAGE_DIR / "model" / "frames.py")  # leg_wire, compiled into the fast engine's leg
    # the fast engine's compiled modules (run.py, state.py, fields.py, feed.py and warm.py drive them from Python: editing those recompiles nothing)
    out += [
        PACKAGE_DIR / "engine" / "fast" / f"{m}.py" for m in ("layout", "scheduler", "wire", "queues", "waits", "cpu", "io_life", "faults", "loop")
    ]
    return [p for p in out if p.exists()]


class _Locator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Caches pathsel's compiled functions in :func:`cache_dir`, stamped with a hash of every kernel source.

    numba checks only the file a function is in; the fast engine's functions
    are spread over several modules and inline each other, so a change to any
    of them must invalidate all (a per-file stamp would serve stale code).
    Generated modules (in the cache directory) carry their dependencies' hash
    in their name and are stamped with their own contents.
    """

    _stamp: str | None = None

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        root = cache_dir()
        path = Path(py_file).resolve()
        try:
            rel = path.relative_to(PACKAGE_DIR)
            self._cache_path = str(root / "pathsel" / rel.parent)
            self._own = False
        except ValueError:
            self._cache_path = str(root / "generated-cache")
            self._own = True

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> Any:
        if self._own:
            return super().get_source_stamp()
        if _Locator._stamp is None:
            _Locator._stamp = source_hash(kernel_sources(), "kernel")
        return (_Locator._stamp, super().get_source_stamp())

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> _Locator | None:
        path = Path(py_file).resolve()
        generated = generated_dir()
        if not (path.is_relative_to(PACKAGE_DIR) or path.is_relative_to(generated)):
            return None  # not ours: numba's own locators decide
        return super().from_function(py_func, py_file)


def generated_dir() -> Path:
    """Where generated modules (a policy's entry points) are written."""
    return cache_dir() / "generated"


def is_ready(key: str) -> bool:
    """True once :func:`mark_ready` was called for ``key`` with this cache directory (compiled code is cached)."""
    return (cache_dir() / f"ready-{key}").exists()


def mark_ready(key: str) -> None:
    """Remember that what ``key`` names is compiled and cached (a run can start without compiling it)."""
    path = cache_dir() / f"ready-{key}"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("ready\n", encoding="utf-8")


if _Locator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, _Locator)

_numba_load_index = caching.IndexDataCacheFile._load_index


def _load_index_or_miss(self: Any) -> Any:
    """numba's index load, except that an index naming a class that is not where it was is a miss in pathsel's cache.

    numba unpickles an index before it compares its stamp, so an index written by another layout of pathsel
    (a module moved: the policy toolkit went into ``policies/framework/``) raises instead of reading as stale.
    It is stale: the next save overwrites it.
    """
    try:
        return _numba_load_index(self)
    except (ImportError, AttributeError, pickle.UnpicklingError):
        if not Path(self._index_path).resolve().is_relative_to(cache_dir().resolve()):
            raise  # not pathsel's cache: numba's behaviour
        return {}


if caching.IndexDataCacheFile._load_index is _numba_load_index:
    caching.IndexDataCacheFile._load_index = _load_index_or_miss


# -- link-only libraries -----------------------------------------------------------
# A helper's library is named after its function (numba's NativeLowering), and it is
# created while that helper's compile is the innermost dispatcher compile running: that
# is how a library is known to be link-only. Every dispatcher's compile is on the stack
# (None for any but a link-only one), so a function of the same name compiled inside a
# helper's compile (a plain numba.njit function it calls) keeps its machine code.
# Loading a helper from the cache goes through the same compile call: a cached helper
# is link-only too.
_compiling = threading.local()


def _stack() -> list[str | None]:
    stack = getattr(_compiling, "stack", None)
    if stack is None:
        stack = _compiling.stack = []
    return stack


def _link_only(library: Any) -> bool:
    return getattr(library, "_pathsel_link_only", False)


def _patch_codegen() -> bool:
    """Teach numba's JIT libraries to be link-only (False, and nothing patched, if numba's internals moved)."""
    lib, gen, ctx = codegen.JITCodeLibrary, codegen.JITCPUCodegen, cpu.CPUContext
    needed = [(gen, "create_library"), (lib, "_finalize_final_module"), (lib, "_optimize_final_module")]
    needed += [(lib, "serialize_using_object_code"), (lib, "_finalize_dynamic_globals"), (lib, "_verify_declare_only_symbols")]
    needed += [(ctx, "get_executable"), (gen, "set_env"), (dispatcher.Dispatcher, "compile")]
    if not all(hasattr(owner, name) for owner, name in needed):  # pragma: no cover - a numba change
        return False
    create, finalize, optimize = gen.create_library, lib._finalize_final_module, lib._optimize_final_module
    serialize, executable, set_env = lib.serialize_using_object_code, ctx.get_executable, gen.set_env
    compile_ = dispatcher.Dispatcher.compile

    def compile(self, sig):
        stack = _stack()
        stack.append(self.py_func.__qualname__ if getattr(self, "link_only", False) else None)
        try:
            return compile_(self, sig)
        finally:
            stack.pop()

    def create_library(self, name, **kwargs):
        library = create(self, name, **kwargs)
        stack = _stack()
        if stack and stack[-1] == name:
            library._pathsel_link_only = True
        return library

    def optimize_final_module(self):
        if not _link_only(self):  # a link-only module is optimised once, inside the entry point that links it
            optimize(self)

    def finalize_final_module(self):
        if not _link_only(self):
            return finalize(self)
        # no machine code: the module is never added to the JIT engine, only linked into callers
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._finalized = True

    def serialize_using_object_code(self):
        if not _link_only(self):
            return serialize(self)
        self._ensure_finalized()
        return (self.name, "bitcode", self._final_module.as_bitcode())  # numba's own bitcode kind

    def get_executable(self, library, fndesc, env):
        if not _link_only(library):
            return executable(self, library, fndesc, env)
        # no wrapper to point at (as for any helper without a CPython wrapper) and no environment to set
        return _dynfunc.make_function(fndesc.lookup_module(), fndesc.qualname.split(".")[-1], "link-only", 0, env, (library,))

    def set_env_if_loaded(self, env_name, env):
        # a helper loaded from the cache has its environment's global in no JIT module: nothing to set
        if self._engine.get_global_value_address(env_name):
            set_env(self, env_name, env)

    dispatcher.Dispatcher.compile = compile
    gen.create_library = create_library
    gen.set_env = set_env_if_loaded
    lib._optimize_final_module = optimize_final_module
    lib._finalize_final_module = finalize_final_module
    lib.serialize_using_object_code = serialize_using_object_code
    ctx.get_executable = get_executable
    return True


LINK_ONLY = _patch_codegen()


def _skip_blas_probe() -> bool:
    """Let numba's CPU target load without importing SciPy's linear algebra (about 0.3-0.5 s of a cached run).

    When numba's CPU target first loads (a compile, or loading the engine from
    the cache), ``numba.np.arraymath`` probes for a BLAS by importing
    ``scipy.linalg.cython_blas``. SciPy is one of pathsel's dependencies, so
    the answer is known: yes. The probe is answered without the import, and
    numba's own check is put back for its first real BLAS call (``np.dot`` in
    compiled code), which imports SciPy then. False, and nothing changed, if
    numba's internals moved or the target has loaded already.
    """
    if "numba.np.arraymath" in sys.modules:
        return False
    try:
        from numba.np import linalg
    except ImportError:  # pragma: no cover - a numba change
        return False
    real = getattr(linalg, "ensure_blas", None)
    if real is None:  # pragma: no cover - a numba change
        return False
    linalg.ensure_blas = lambda: None
    try:
        from numba.np import arraymath
    finally:
        linalg.ensure_blas = real
    if getattr(arraymath, "ensure_blas", None) is not None:
        arraymath.ensure_blas = real
    return bool(getattr(arraymath, "_HAVE_BLAS", False))


BLAS_PROBE_SKIPPED = _skip_blas_probe()


# -- optimisation level -------------------------------------------------------------
PASS_LEVEL = 1  # LLVM's optimisation passes over pathsel's compiled code (numba's default is 3)


@contextlib.contextmanager
def light_passes() -> Iterator[None]:
    """Run LLVM's optimisation passes at :data:`PASS_LEVEL` for what is compiled inside (numba's default: 3).

    The engine is one loop with every handler inlined into it; at level 3 the
    passes over that one function were about a quarter of a cold compile, and
    the loop they produce ran no faster than level 1's on the test drive and the
    engine benchmark's specs (docs/model.md, "Speed"). numba reads ``config.OPT``
    when it builds a pass manager, so setting it here changes the passes only;
    machine code generation keeps the level the target machine was made with
    (numba's, 3), which is why numba's code generator is started first. An
    explicit ``NUMBA_OPT`` in the environment wins.
    """
    if "NUMBA_OPT" in os.environ:
        yield
        return
    from numba.core import config
    from numba.core.registry import cpu_target

    cpu_target.target_context.codegen()  # the target machine, made now with numba's own level
    old = config.OPT
    config.OPT = type(old)(PASS_LEVEL)
    try:
        yield
    finally:
        config.OPT = old


# -- decorators -------------------------------------------------------------------
class Dispatcher(CPUDispatcher):
    """numba's dispatcher, compiling one version of a function for all constant arguments.

    numba types a constant argument (``timeout(S, V, delay, EV_LEG, s)``,
    ``leg(..., 0, 0)``) as a literal and compiles the callee once per distinct
    value: the engine's helpers were compiled 5 to 13 times each. Calls
    between compiled functions here drop the literal types first.
    """

    link_only = False  # set by njit for functions without wrappers (only ever called from compiled code)

    def get_call_template(self, args, kws):
        args = tuple(types.unliteral(a) for a in args)
        kws = {k: types.unliteral(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)


def njit(**options: Any):
    """``numba.njit`` with :class:`Dispatcher` (one version for all constant arguments)."""
    cache = options.pop("cache", False)
    targetoptions = dict(nopython=True, **options)

    def wrap(func):
        disp = Dispatcher(py_func=func, locals={}, targetoptions=targetoptions)
        disp.link_only = bool(options.get("no_cpython_wrapper") and options.get("no_cfunc_wrapper"))
        if cache:
            disp.enable_caching()
        return disp

    return wrap


_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
# The event path: LLVM inlines these into the loop (alwaysinline), so an event costs no calls.
# forceinline is inherited by callees that do not set it (numba's ConfigStack): set it everywhere.
hot = njit(forceinline=True, **_OPTIONS)
jit = njit(forceinline=False, **_OPTIONS)
# Called from Python (a CPython wrapper), e.g. the engine's entry point.
entry = njit(cache=True, nogil=True, error_model="numpy")


# -- borrowed records -------------------------------------------------------------
class Borrowed(types.Type):
    """A pointer to a record laid out as a StructRef's payload, for reading its fields.

    Reading an array field gives the array without its meminfo: nothing is
    reference counted (that was most of the loop's time when records were
    StructRefs). The arrays belong to Python (:class:`Packed`), which keeps
    them alive for as long as compiled code may read them.
    """

    def __init__(self, struct_type: types.StructRef, fixed: dict[str, int] | None = None) -> None:
        self.struct_type = struct_type
        self.field_dict = struct_type.field_dict
        self.fixed = dict(fixed or {})  # a 2-D array field's number of columns, where the layout fixes it
        cols = "".join(f",{k}:{v}" for k, v in sorted(self.fixed.items()))
        super().__init__(name=f"Borrowed[{struct_type.name}{cols}]")


@register_model(Borrowed)
class _BorrowedModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        payload = dmm.lookup(fe_type.struct_type.get_data_type()).get_value_type()
        super().__init__(dmm, fe_type, payload.as_pointer())


@infer_getattr
class _BorrowedAttrs(AttributeTemplate):
    key = Borrowed

    def generic_resolve(self, typ, attr):
        return typ.field_dict.get(attr)


@lower_getattr_generic(Borrowed)
def _borrowed_getattr(context, builder, typ, val, attr):
    """A field's members loaded one by one, each marked ``!invariant.load``.

    Compiled code never writes a record (only the arrays it points to), and
    Python lays records out only between calls: so LLVM may keep a field's
    data pointer in a register across the stores that follow, or load it
    again instead of spilling it, where a plain load would be repeated after
    every store to an int64 array (which might alias the record). An array
    field with a fixed number of columns (:class:`Layout`) gets that number
    as a constant shape, so a row's offset is a shift and an add, not a load
    and a multiply.
    """
    fieldtype = typ.field_dict[attr]
    pos = context.data_model_manager[typ.struct_type.get_data_type()].get_field_position(attr)
    ptr = cgutils.gep_inbounds(builder, val, 0, pos)
    invariant = builder.module.add_metadata([])

    def load(*idx):
        v = builder.load(cgutils.gep_inbounds(builder, ptr, 0, *idx) if idx else ptr)
        v.set_metadata("invariant.load", invariant)
        return v

    if not isinstance(fieldtype, types.Array):
        return imputils.impl_ret_borrowed(context, builder, fieldtype, load())
    arr = context.make_array(fieldtype)(context, builder)  # no meminfo: nothing to count
    arr.meminfo = cgutils.get_null_value(arr.meminfo.type)
    arr.parent = cgutils.get_null_value(arr.parent.type)
    arr.nitems = load(2)
    arr.itemsize = load(3)
    arr.data = load(4)
    intp = context.get_value_type(types.intp)
    shape = [load(5, i) for i in range(fieldtype.ndim)]
    strides = [load(6, i) for i in range(fieldtype.ndim)]
    cols = typ.fixed.get(attr)
    if cols is not None:  # C order, (rows, cols): Layout.place checked the array
        item = context.get_abi_sizeof(context.get_data_type(fieldtype.dtype))
        shape[1] = intp(cols)
        strides = [intp(cols * item), intp(item)]
    arr.shape = cgutils.pack_array(builder, shape)
    arr.strides = cgutils.pack_array(builder, strides)
    return imputils.impl_ret_borrowed(context, builder, fieldtype, arr._getvalue())


def address_of(record: Layout):
    """An intrinsic ``f(address: int64) -> Borrowed[...]`` for a record that ``record``'s :meth:`Layout.pack` laid out."""
    borrowed = record.borrowed

    @intrinsic
    def at(typingctx, addr):
        if not isinstance(addr, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            return builder.inttoptr(args[0], context.get_value_type(borrowed))

        return borrowed(addr), codegen

    return at


@intrinsic
def prefetch(typingctx, arr, i):
    """A hint to the CPU to fetch the cache line of ``arr``'s i-th element (flat, C order); it never faults."""
    sig = types.void(arr, i)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(builder.gep(ary.data, [args[1]]), i8p), i32(0), i32(3), i32(1)])  # read, keep, data
        return context.get_dummy_value()

    return sig, codegen


def on_lines(rows: int, cols: int, dtype: Any, fill: Any = 0, lead: int = 0) -> np.ndarray:
    """A (rows, cols) array of ``fill`` (shape (rows,) when ``cols`` is 0) laid out for the cache.

    Row ``-lead`` (row 0 with the default) starts on a 64-byte line: rows of 64
    bytes each take one line, and with ``lead=7`` the float64 rows 8i + 1 .. 8i + 8
    (an 8-ary heap entry's children) share one. numpy aligns only to 16 bytes.
    """
    width = max(cols, 1)
    item = np.dtype(dtype).itemsize
    raw = np.full((rows + lead) * width + 64 // item, fill, dtype=dtype)
    skip = (-raw.ctypes.data % 64) // item + lead * width
    out = raw[skip : skip + rows * width]
    return out if cols == 0 else out.reshape(rows, cols)


# -- calls through function pointers ------------------------------------------------
# A policy hook is a C function; the engine holds its address. Arguments are int64s
# (records by address, indices) and, for a completion, one float64.
def _caller(ret: types.Type, nint: int, nfloat: int = 0):
    i64, f64 = ir.IntType(64), ir.DoubleType()
    llret = i64 if ret == types.int64 else ir.VoidType()

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(llret, [i64] * nint + [f64] * nfloat)
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        out = builder.call(fn, args[1:])
        return out if ret == types.int64 else context.get_dummy_value()

    return codegen


@intrinsic
def call_i_4(typingctx, addr, a, b, c, d):
    """``(*addr)(a, b, c, d) -> int64``: a policy's select."""
    return types.int64(types.int64, types.int64, types.int64, types.int64, types.int64), _caller(types.int64, 4)


@intrinsic
def call_v_4(typingctx, addr, a, b, c, d):
    """``(*addr)(a, b, c, d)``: a policy's path change."""
    return types.void(types.int64, types.int64, types.int64, types.int64, types.int64), _caller(types.void, 4)


@intrinsic
def call_v_5(typingctx, addr, a, b, c, d, e):
    """``(*addr)(a, b, c, d, e)``: a policy's start of an I/O."""
    return types.void(*([types.int64] * 6)), _caller(types.void, 5)


@intrinsic
def call_v_6f(typingctx, addr, a, b, c, d, e, x):
    """``(*addr)(a, b, c, d, e, x: float64)``: a policy's completion."""
    return types.void(*([types.int64] * 6), types.float64), _caller(types.void, 5, 1)


# -- layouts ---------------------------------------------------------------------------
_DTYPES = {"i8": (types.int64, np.int64), "f8": (types.float64, np.float64), "u8": (types.uint64, np.uint64), "i1": (types.int8, np.int8)}


def _numba_type(dtype: str, ndim: int) -> types.Type:
    base = _DTYPES[dtype][0]
    return base if ndim == 0 else types.Array(base, ndim, "C")


class Layout:
    """A record of named arrays and scalars, declared once.

    ``fields`` are ``(name, dtype, ndim)`` with dtype one of ``i8 f8 u8 i1``
    (int8 only for arrays) and ndim 0 for a scalar. ``cols`` fixes the number
    of columns of 2-D array fields (compiled code indexes their rows with a
    constant; :meth:`place` refuses another shape). ``struct_class`` is a
    ``types.StructRef`` subclass registered with ``structref.register`` at
    module level (numba pickles compiled signatures by class name).
    """

    def __init__(self, struct_class: type, fields: Sequence[tuple[str, str, int]], cols: dict[str, int] | None = None) -> None:
        self.fields = tuple(fields)
        self.cols = dict(cols or {})
        names = [f[0] for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"{struct_class.__name__}: a field is declared twice")
        for name, dtype, ndim in self.fields:
            if dtype not in _DTYPES or (dtype == "i1" and ndim == 0) or ndim not in (0, 1, 2, 3):
                raise ValueError(f"{struct_class.__name__}.{name}: unsupported {dtype} with {ndim} dimensions")
        self.type = struct_class([(name, _numba_type(dtype, ndim)) for name, dtype, ndim in self.fields])
        self.kinds = {name: (dtype, ndim) for name, dtype, ndim in self.fields}
        for name, n in self.cols.items():
            if self.kinds.get(name, ("", 0))[1] != 2 or n < 1:
                raise ValueError(f"{struct_class.__name__}.{name}: fixed columns need a 2-D array field and a count >= 1")
        self.borrowed = Borrowed(self.type, self.cols)
        # C layout of numba's payload: every member is 8-byte aligned (pointers, intp, float64);
        # an array is {meminfo*, parent*, nitems, itemsize, data*, shape[ndim], strides[ndim]}.
        self.offsets: dict[str, int] = {}
        off = 0
        for name, _, ndim in self.fields:
            self.offsets[name] = off
            off += 8 if ndim == 0 else 8 * (5 + 2 * ndim)
        self.size = off
        self._checked = False

    def _check_size(self) -> None:
        from numba.core.registry import cpu_target

        ctx = cpu_target.target_context
        llty = ctx.data_model_manager[self.type.get_data_type()].get_value_type()
        size = ctx.get_abi_sizeof(llty)
        if size != self.size:  # pragma: no cover - a numba data model change
            raise RuntimeError(f"{self.type.name}: numba lays the record out in {size} bytes, pathsel assumed {self.size}")
        self._checked = True

    def pack(self, values: dict[str, Any]) -> Packed:
        """Lay ``values`` (every field, arrays as numpy arrays of the declared dtype and ndim) out as the record."""
        if not self._checked:
            self._check_size()
        missing = [n for n, _, _ in self.fields if n not in values]
        extra = [n for n in values if n not in self.offsets]
        if missing or extra:
            raise ValueError(f"{self.type.name}: missing fields {missing}, unknown fields {extra}")
        buf = np.zeros(self.size // 8, dtype=np.int64)
        fbuf = buf.view(np.float64)
        ubuf = buf.view(np.uint64)
        keep = {}
        for name, dtype, ndim in self.fields:
            value = values[name]
            at = self.offsets[name] // 8
            if ndim == 0:
                if dtype == "f8":
                    fbuf[at] = float(value)
                elif dtype == "u8":
                    ubuf[at] = int(value)
                else:
                    buf[at] = int(value)
                keep[name] = value
                continue
            self.place(buf, name, value)
            keep[name] = value
        return Packed(self, buf, keep)

    def place(self, buf: np.ndarray, name: str, arr: Any) -> None:
        """Write array field ``name``'s descriptor (a numba array's members) into the record ``buf``."""
        dtype, ndim = self.kinds[name]
        want = _DTYPES[dtype][1]
        if not isinstance(arr, np.ndarray) or arr.dtype != want or arr.ndim != ndim or not arr.flags.c_contiguous:
            raise TypeError(f"{self.type.name}.{name}: needs a C-contiguous {np.dtype(want).name} array of {ndim} dimensions")
        if name in self.cols and arr.shape[1] != self.cols[name]:  # compiled code indexes it with the constant
            raise TypeError(f"{self.type.name}.{name}: needs {self.cols[name]} columns, not {arr.shape[1]}")
        at = self.offsets[name] // 8
        buf[at + 2] = arr.size
        buf[at + 3] = arr.itemsize
        buf[at + 4] = arr.ctypes.data
        buf[at + 5 : at + 5 + ndim] = arr.shape
        buf[at + 5 + ndim : at + 5 + 2 * ndim] = arr.strides


class Packed:
    """A record laid out by :meth:`Layout.pack`: its fields as attributes (the numpy arrays themselves) and its address.

    Compiled code and Python share the arrays: a write on either side is seen
    by the other. Keep this object alive while compiled code may read the
    record.
    """

    def __init__(self, layout: Layout, buf: np.ndarray, values: dict[str, Any]) -> None:
        self._layout = layout
        self._buf = buf
        self.__dict__.update(values)

    if TYPE_CHECKING:  # the layout's fields, set in __init__ from ``values``

        def __getattr__(self, name: str) -> Any: ...

    @property
    def address(self) -> int:
        return int(self._buf.ctypes.data)

    def set_array(self, name: str, arr: np.ndarray) -> None:
        """Point array field ``name`` at ``arr`` (same dtype and ndim); only while no compiled code runs on the record."""
        self._layout.place(self._buf, name, arr)
        self.__dict__[name] = arr  # kept alive while the record points at it

    def set_scalar(self, name: str, value: float) -> None:
        """Change a scalar field (compiled code reads the record, not this object); only while no compiled code runs
        on the record: compiled code loads a record's fields as invariant (a hook that changed one through objmode
        would not be seen)."""
        at = self._layout.offsets[name] // 8
        dtype = next(d for n, d, _ in self._layout.fields if n == name)
        if dtype == "f8":
            self._buf.view(np.float64)[at] = float(value)
        elif dtype == "u8":
            self._buf.view(np.uint64)[at] = int(value)
        else:
            self._buf[at] = int(value)
        self.__dict__[name] = value
