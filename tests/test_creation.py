"""Creation functions against NumPy."""
import array

import numpy as np
import pytest
from hypothesis import given, strategies as st

import lazyarr as xp
from tests import strategies as S
from tests.helpers import assert_close


@given(data=st.data())
def test_asarray_round_trips_numpy_arrays_of_every_dtype(data):
    dtype = data.draw(st.sampled_from(S.REAL))
    a = data.draw(S.arrays(dtype))
    t = xp.asarray(a)
    assert t.shape == a.shape and t.dtype == a.dtype
    assert_close(t, a)


def test_asarray_infers_dtypes_like_numpy():
    assert xp.asarray(1).dtype == xp.int64
    assert xp.asarray(1.0).dtype == xp.float64
    assert xp.asarray(True).dtype == xp.bool
    assert xp.asarray([1, 2.5]).dtype == xp.float64
    assert xp.asarray([[True, False]]).shape == (1, 2)
    assert xp.asarray([]).shape == (0,)


def test_asarray_from_buffer_protocol_and_tensors():
    buf = array.array("f", [1.0, 2.0, 3.0])
    t = xp.asarray(buf)
    assert t.dtype == xp.float32
    assert_close(t, np.array([1, 2, 3], np.float32))
    u = xp.asarray(t)
    assert u is t
    assert xp.asarray(t, dtype=xp.float64).dtype == xp.float64
    assert_close(xp.asarray([xp.asarray(1.0), xp.asarray(2.0)]), np.array([1.0, 2.0]))


def test_asarray_copy_semantics():
    a = np.arange(4.0)
    t = xp.asarray(a, copy=True)
    a[0] = 100
    assert float(t[0]) == 0.0
    if xp.asarray(0.0).device == "cpu":   # host memory is shared with the CPU device only
        shared = xp.asarray(a, copy=False)
        assert float(shared[0]) == 100.0
    else:
        with pytest.raises(ValueError):
            xp.asarray(a, copy=False)
    with pytest.raises(ValueError):
        xp.asarray(a[::2], copy=False)
    with pytest.raises(ValueError):
        xp.asarray([1, 2], copy=False)
    with pytest.raises(ValueError):
        xp.asarray(xp.asarray([1, 2]), dtype=xp.float32, copy=False)


def test_asarray_rejects_unsupported_data():
    with pytest.raises(TypeError):
        xp.asarray(np.array(["a"]))
    with pytest.raises(TypeError):
        xp.asarray(np.ones(2, np.longdouble))
    with pytest.raises(OverflowError):
        xp.asarray(300, dtype=xp.int8)


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
@given(shape=S.shapes, dtype=st.sampled_from(S.REAL))
def test_zeros_ones_empty(fn, shape, dtype):
    t = getattr(xp, fn)(shape, dtype=dtype)
    assert t.shape == shape and t.dtype == dtype
    if fn != "empty":
        assert_close(t, getattr(np, fn)(shape, dtype=dtype))


def test_default_dtypes_are_float64_and_int64():
    assert xp.zeros(3).dtype == xp.float64
    assert xp.full(3, 7).dtype == xp.int64
    assert xp.full(3, 7.0).dtype == xp.float64
    assert xp.full(3, True).dtype == xp.bool
    assert xp.arange(3).dtype == xp.int64
    assert xp.arange(3.0).dtype == xp.float64


@given(shape=S.shapes, value=st.integers(-100, 100), dtype=st.sampled_from(S.SIGNED + S.FLOATS))
def test_full_and_like_forms(shape, value, dtype):
    t = xp.full(shape, value, dtype=dtype)
    assert_close(t, np.full(shape, value, dtype=dtype))
    assert_close(xp.zeros_like(t), np.zeros(shape, dtype))
    assert_close(xp.ones_like(t, dtype=xp.float32), np.ones(shape, np.float32))
    assert_close(xp.full_like(t, 3), np.full(shape, 3, dtype))
    assert xp.empty_like(t).shape == shape


@given(start=st.integers(-20, 20), stop=st.integers(-20, 20), step=st.integers(-5, 5).filter(bool))
def test_arange_integers(start, stop, step):
    assert_close(xp.arange(start, stop, step), np.arange(start, stop, step))


@given(start=st.floats(-10, 10), stop=st.floats(-10, 10), step=st.floats(0.1, 3))
def test_arange_floats(start, stop, step):
    assert_close(xp.arange(start, stop, step), np.arange(start, stop, step), rtol=1e-12, atol=1e-12)
    assert_close(xp.arange(start, stop, step, dtype=xp.float32), np.arange(start, stop, step, dtype=np.float32),
                 rtol=1e-6, atol=1e-6)


def test_arange_single_argument_and_zero_step():
    assert_close(xp.arange(5), np.arange(5))
    with pytest.raises(ValueError):
        xp.arange(0, 5, 0)


@given(start=st.floats(-10, 10), stop=st.floats(-10, 10), num=st.integers(0, 12), endpoint=st.booleans())
def test_linspace(start, stop, num, endpoint):
    assert_close(xp.linspace(start, stop, num, endpoint=endpoint), np.linspace(start, stop, num, endpoint=endpoint),
                 rtol=1e-12, atol=1e-12)


@given(n=st.integers(0, 6), m=st.one_of(st.none(), st.integers(0, 6)), k=st.integers(-7, 7))
def test_eye(n, m, k):
    assert_close(xp.eye(n, m, k=k), np.eye(n, m, k=k))
    assert_close(xp.eye(n, m, k=k, dtype=xp.int32), np.eye(n, m, k=k, dtype=np.int32))


@pytest.mark.parametrize("k", [2**64, -2**64, 2**63, -2**63 - 1, 10**30])
def test_diagonals_far_past_the_corners_are_empty(k):
    """An offset that does not fit int64 selects no diagonal (found by the official suite)."""
    a = np.arange(12.0).reshape(3, 4)
    far = 100 if k > 0 else -100
    assert_close(xp.eye(3, 4, k=k), np.eye(3, 4, k=far))
    assert_close(xp.tril(xp.asarray(a), k=k), np.tril(a, far))
    assert_close(xp.triu(xp.asarray(a), k=k), np.triu(a, far))


def test_negative_shapes_raise():
    with pytest.raises(ValueError):
        xp.zeros((2, -1))
    with pytest.raises(ValueError):
        xp.eye(-1)
