"""Data types and data type functions as the array API (2025.12) specifies them: dtype objects that
compare, hash and print as users expect; result_type and can_cast by the standard's promotion
table (NumPy where it is silent), Python scalars weak; finfo and iinfo with Python numbers."""
import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st

import lazyarr as xp

REAL = [xp.bool, xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.uint16, xp.uint32, xp.uint64,
        xp.float32, xp.float64]


def test_dtypes_compare_hash_and_print_as_users_expect():
    assert xp.float32 == np.float32 == xp.float32 and xp.float32 == "float32" and xp.float32 == np.dtype("float32")
    assert xp.float32 != xp.float64 and xp.int64 != "int32"
    assert xp.float32 != (1, 2) and xp.float32 != None and xp.float32 != 3   # noqa: E711
    assert (xp.float32 == (1, 2)) is False
    assert {xp.int8: 1}[xp.int8] == 1 and len({xp.int8, xp.int8, xp.uint8}) == 2
    assert str(xp.float64) == repr(xp.float64) == "float64"


def test_result_type_follows_the_standards_table_and_numpy_elsewhere():
    for a, b in itertools.product(REAL, repeat=2):
        want = np.result_type(a.np, b.np)
        assert xp.result_type(a, b) == want, (a, b)
        assert xp.result_type(xp.ones(1, dtype=a), b) == want


@given(st.sampled_from(REAL), st.one_of(st.booleans(), st.integers(0, 100), st.floats(-1, 1)))
def test_python_scalars_are_weak(dtype, scalar):
    got = xp.result_type(dtype, scalar)
    if isinstance(scalar, bool) or (isinstance(scalar, int) and not dtype.is_bool) or \
            (isinstance(scalar, float) and dtype.is_float):
        assert got == dtype                    # the scalar's kind fits: the array's dtype
    elif isinstance(scalar, int):
        assert got == xp.int64                 # an int with a bool array: the default integer
    else:
        assert got == xp.float64               # a float with a bool or integer array: the default float
    if not dtype.is_bool or isinstance(scalar, bool):
        assert (xp.ones(2, dtype=dtype) * scalar).dtype == got


def test_can_cast_is_the_promotion_table_and_numpys_safe_casting_across_kinds():
    for a, b in itertools.product(REAL + [xp.complex64, xp.complex128], repeat=2):
        assert xp.can_cast(a, b) == np.can_cast(a.np, b.np, "safe"), (a, b)
    assert xp.can_cast(xp.ones(1, dtype=xp.int8), xp.int16) and not xp.can_cast(xp.float64, xp.float32)


def test_finfo_and_iinfo_hold_python_numbers_and_accept_arrays():
    f = xp.finfo(xp.ones(1, dtype=xp.float32))
    assert type(f.eps) is float and type(f.max) is float and type(f.bits) is int and f.dtype == xp.float32
    assert f.eps == float(np.finfo(np.float32).eps) and f.smallest_normal == float(np.finfo(np.float32).tiny)
    assert xp.finfo(xp.complex64).dtype == xp.float32 and xp.finfo(xp.complex128).bits == 64
    i = xp.iinfo(xp.zeros(1, dtype=xp.uint16))
    assert (i.min, i.max, i.bits, i.dtype) == (0, 65535, 16, xp.uint16) and type(i.max) is int
    with pytest.raises(ValueError):
        xp.iinfo(xp.float32)
    with pytest.raises(ValueError):
        xp.finfo(xp.int8)


def test_isdtype_kinds():
    assert xp.isdtype(xp.int8, "signed integer") and not xp.isdtype(xp.uint8, "signed integer")
    assert xp.isdtype(xp.float32, ("integral", "real floating"))
    assert xp.isdtype(xp.complex64, "numeric") and not xp.isdtype(xp.bool, "numeric")
    assert xp.isdtype(xp.int64, xp.int64) and not xp.isdtype(xp.int64, xp.int32)
    with pytest.raises(ValueError, match="unknown kind"):
        xp.isdtype(xp.int8, "integer")


def test_dtypes_and_numpys_read_each_other():
    """np.dtype(d) and NumPy's dtype= arguments take lazyarr's dtypes (scikit-learn's KMeans and dask
    do np.zeros(..., dtype=x.dtype)); finfo, iinfo and isdtype take NumPy's dtypes and scalar types."""
    for d in (xp.float32, xp.float64, xp.int8, xp.uint64, xp.bool, xp.complex64):
        assert np.dtype(d) == np.dtype(d.name)
        assert np.zeros(2, dtype=d).dtype == np.dtype(d.name)
        assert d == np.dtype(d.name) and d == getattr(np, d.name if d.name != "bool" else "bool_") and d == d.name
    assert xp.asarray([1, 2], dtype=np.float32).dtype == xp.float32
    assert xp.finfo(np.float32).eps == np.finfo(np.float32).eps and xp.finfo(np.dtype("float64")).bits == 64
    assert xp.iinfo(np.int8).min == -128 and xp.iinfo("uint16").max == 65535
    assert xp.finfo(xp.ones(2, dtype=xp.float32)).dtype == xp.float32
    assert xp.isdtype(np.float32, "real floating") and not xp.isdtype(np.dtype("int8"), "real floating")
    with pytest.raises(TypeError):
        xp.isdtype(3, "integral")


def test_subpackages_are_attributes():
    assert xp.optim.SGD and xp.nn.functional.relu and xp.random.normal and xp.linalg.svd and xp.fft.rfft
    with pytest.raises(AttributeError, match="no attribute"):
        xp.not_a_name
