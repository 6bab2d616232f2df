"""Records compiled code reads by address (pathsel.jit.Layout): fixed columns and what compiled code sees.

A Layout may fix the number of columns of a 2-D array field: compiled code
then indexes its rows with that constant instead of the shape in the record,
so an array of any other width must be refused where it is laid out, or
compiled code would read the wrong cells.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit
from numba.core import types
from numba.experimental import structref

from pathsel.jit import Layout, address_of

from .test_properties import SETTINGS


@structref.register
class _RowsType(types.StructRef):
    pass


COLS = 6
ROWS = Layout(_RowsType, [("n", "i8", 0), ("x", "f8", 0), ("fixed", "i8", 2), ("free", "f8", 2), ("flat", "i8", 1)], cols={"fixed": COLS})
rows_at = address_of(ROWS)


@njit
def _read(addr, out):
    """Every cell of both 2-D fields and the scalars, as compiled code indexes them; then one write per row."""
    r = rows_at(addr)
    k = 0
    for i in range(r.fixed.shape[0]):
        for j in range(r.fixed.shape[1]):
            out[k] = r.fixed[i, j]
            k += 1
    for i in range(r.free.shape[0]):
        for j in range(r.free.shape[1]):
            out[k] = r.free[i, j]
            k += 1
    for i in range(r.fixed.shape[0]):
        r.fixed[i, COLS - 1] += r.n  # a store between reads: the next read of the record must still be right
        out[k] = r.fixed[i, COLS - 1] + r.x + r.flat[0]
        k += 1
    return k


@SETTINGS
@given(st.integers(1, 9), st.integers(1, 5), st.integers(-5, 5))
def test_compiled_code_reads_every_cell_of_a_record(n_rows, free_cols, n):
    fixed = np.arange(n_rows * COLS, dtype=np.int64).reshape(n_rows, COLS) * 7 - 3
    free = np.linspace(-1.0, 1.0, n_rows * free_cols).reshape(n_rows, free_cols)
    flat = np.array([11], dtype=np.int64)
    packed = ROWS.pack({"n": n, "x": 0.5, "fixed": fixed.copy(), "free": free, "flat": flat})
    out = np.zeros(n_rows * COLS + n_rows * free_cols + n_rows)
    k = _read(packed.address, out)
    want = np.concatenate([fixed.ravel(), free.ravel(), fixed[:, COLS - 1] + n + 0.5 + 11])
    assert k == out.size
    assert np.array_equal(out, want)
    assert np.array_equal(packed.fixed[:, COLS - 1], fixed[:, COLS - 1] + n)  # the writes reached the array


def test_compiled_code_indexes_fixed_columns_with_the_constant():
    # the record's own shape and strides of the fixed field, overwritten: compiled code must not read them
    fixed = np.arange(3 * COLS, dtype=np.int64).reshape(3, COLS)
    packed = ROWS.pack({"n": 0, "x": 0.0, "fixed": fixed, "free": np.zeros((3, 2)), "flat": np.zeros(1, dtype=np.int64)})
    at = ROWS.offsets["fixed"] // 8
    packed._buf[at + 5 + 1] = 1  # shape[1]
    packed._buf[at + 5 + 2 : at + 5 + 4] = (8, 8)  # strides
    out = np.zeros(3 * COLS + 3 * 2 + 3)
    _read(packed.address, out)
    assert np.array_equal(out[: 3 * COLS], np.arange(3 * COLS))


def test_an_array_of_another_width_is_refused_where_it_is_laid_out():
    base = {"n": 0, "x": 0.0, "fixed": np.zeros((2, COLS), dtype=np.int64), "free": np.zeros((2, 3)), "flat": np.zeros(1, dtype=np.int64)}
    ROWS.pack(base)
    with pytest.raises(TypeError, match=r"fixed: needs 6 columns, not 5"):
        ROWS.pack(dict(base, fixed=np.zeros((2, COLS - 1), dtype=np.int64)))
    packed = ROWS.pack(base)
    with pytest.raises(TypeError, match=r"fixed: needs 6 columns, not 7"):
        packed.set_array("fixed", np.zeros((4, COLS + 1), dtype=np.int64))


@pytest.mark.parametrize("cols", [{"flat": 4}, {"n": 4}, {"fixed": 0}, {"missing": 3}])
def test_fixed_columns_only_for_a_2d_array_field(cols):
    with pytest.raises(ValueError, match="fixed columns need a 2-D array field"):
        Layout(_RowsType, [("n", "i8", 0), ("fixed", "i8", 2), ("flat", "i8", 1)], cols=cols)
