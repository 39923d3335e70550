"""Reductions and matmul against NumPy: axes (int, tuple, negative, None), keepdims, dtypes,
empty axes."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp
from tests import strategies as S
from tests.helpers import assert_close

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)


@st.composite
def axes(draw, ndim):
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or ndim == 0:
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    return tuple(draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)))


def tol(dtype):
    return 2e-5 if np.dtype(dtype) in (np.float32,) else 1e-12


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
@given(data=st.data())
def test_reductions_match_numpy(name, data):
    dtype = data.draw(st.sampled_from(S.NUMBERS + S.BOOL))
    a = data.draw(S.arrays(dtype, shape=shapes, special=False, lo=-3, hi=3))
    ax = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    np_fn = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean}[name]
    try:
        with np.errstate(all="ignore"):
            want = np_fn(a, axis=ax, keepdims=keepdims)
    except ValueError:
        with pytest.raises(ValueError):
            getattr(xp, name)(xp.asarray(a), axis=ax, keepdims=keepdims)
        return
    got = getattr(xp, name)(xp.asarray(a), axis=ax, keepdims=keepdims)
    assert_close(got, np.asarray(want), rtol=tol(want.dtype), atol=1e-6)


@given(data=st.data())
def test_reductions_with_nan_and_special_values(data):
    dtype = data.draw(st.sampled_from(S.FLOATS))
    a = data.draw(S.arrays(dtype, shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=4)))
    for name in ("max", "min"):
        assert_close(getattr(xp, name)(xp.asarray(a), axis=-1), getattr(np, name)(a, axis=-1))


@pytest.mark.parametrize("name", ["var", "std"])
@given(data=st.data())
def test_var_std_match_numpy(name, data):
    dtype = data.draw(st.sampled_from(S.FLOATS + S.INTS + S.BOOL))
    a = data.draw(S.arrays(dtype, shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
                           special=False, lo=-10, hi=10))
    ax = data.draw(axes(a.ndim))
    correction = data.draw(st.sampled_from([0, 1]))
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, axis=ax, ddof=correction)
    assert_close(getattr(xp, name)(xp.asarray(a), axis=ax, correction=correction), np.asarray(want),
                 rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-5)


@given(data=st.data())
def test_all_any_match_numpy(data):
    dtype = data.draw(st.sampled_from(S.REAL))
    a = data.draw(S.arrays(dtype, shape=shapes, lo=0, hi=2))
    ax = data.draw(axes(a.ndim))
    assert_close(xp.all(xp.asarray(a), axis=ax), np.all(a, axis=ax))
    assert_close(xp.any(xp.asarray(a), axis=ax), np.any(a, axis=ax))


def test_sum_dtypes_follow_the_array_api():
    assert xp.sum(xp.ones(3, dtype=xp.int8)).dtype == xp.int64
    assert xp.sum(xp.ones(3, dtype=xp.uint16)).dtype == xp.uint64
    assert xp.sum(xp.ones(3, dtype=xp.float32)).dtype == xp.float32
    assert xp.sum(xp.ones(3, dtype=xp.bool)).dtype == xp.int64
    assert xp.sum(xp.ones(3, dtype=xp.int8), dtype=xp.int8).dtype == xp.int8
    assert xp.max(xp.ones(3, dtype=xp.int8)).dtype == xp.int8


def test_empty_reductions():
    assert float(xp.sum(xp.zeros((0, 3)))) == 0.0
    assert_close(xp.sum(xp.zeros((0, 3)), axis=0), np.zeros(3))
    assert_close(xp.prod(xp.zeros((2, 0)), axis=1), np.ones(2))
    with pytest.raises(ValueError, match="zero-size array"):
        xp.max(xp.zeros((0, 3)), axis=0)


def test_invalid_axes_raise_numpy_errors():
    t = xp.ones((2, 3))
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        xp.sum(t, axis=2)
    with pytest.raises(IndexError):
        xp.sum(t, axis=-3)
    with pytest.raises(ValueError, match="duplicate"):
        xp.sum(t, axis=(0, 0))


@given(data=st.data())
def test_matmul_matches_numpy_with_batch_broadcasting(data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int32, np.int64]))
    n, k, m = (data.draw(st.integers(1, 6)) for _ in range(3))
    batch_a = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    batch_b = batch_a[data.draw(st.integers(0, len(batch_a))):]
    a_shape = batch_a + (n, k) if data.draw(st.booleans()) else (k,)
    b_shape = batch_b + (k, m) if data.draw(st.booleans()) else (k,)
    a = data.draw(S.arrays(dtype, st.just(a_shape), special=False, lo=-4, hi=4))
    b = data.draw(S.arrays(dtype, st.just(b_shape), special=False, lo=-4, hi=4))
    assert_close(xp.asarray(a) @ xp.asarray(b), np.asarray(a @ b), rtol=1e-5, atol=1e-5)


def test_matmul_errors():
    with pytest.raises(ValueError, match="not aligned"):
        xp.ones((2, 3)) @ xp.ones((2, 3))
    with pytest.raises(ValueError):
        xp.matmul(xp.asarray(1.0), xp.ones(2))


def test_tensordot_and_vecdot():
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(12.0).reshape(3, 4)
    assert_close(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=2), np.tensordot(a, b, axes=2))
    assert_close(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=([1], [0])), np.tensordot(a, b, axes=([1], [0])))
    assert_close(xp.vecdot(xp.asarray(a), xp.asarray(b[0])), np.sum(a * b[0], axis=-1))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16", "uint64", "float32", "float64"])
@pytest.mark.parametrize("shape,axis", [((3, 4), 0), ((3, 4), 1), ((3, 4), None), ((2, 3, 4), (0, 2)), ((5, 1, 3), 0),
                                        ((4, 6), (0, 1)), ((7,), 0)])
def test_reductions_of_values_computed_from_positions(dtype, shape, axis):
    """Reductions of arrays the program computes from arange (the reduced values are index
    arithmetic of the kernel's own loops, which symbolic simplification rewrites: an integer sum
    over axis 0 of arange(12).reshape(3, 4) gave its last row, the accumulator folded into a term
    hoisted out of the loop), made several ways, against NumPy."""
    n = int(np.prod(shape))
    base = np.arange(n).reshape(shape)
    makers = [lambda m: m.arange(n, dtype=getattr(m, dtype)).reshape(shape),
              lambda m: (m.arange(n).reshape(shape) * 2 + 3).astype(getattr(m, dtype)),
              lambda m: m.flip(m.arange(n, dtype=getattr(m, dtype)).reshape(shape), axis=0),
              lambda m: m.asarray(base.astype(dtype))]
    for make in makers:
        want, x = make(np), make(xp)
        for name in ("sum", "prod", "max", "min"):
            got = getattr(xp, name)(x, axis=axis)
            expected = getattr(np, name)(want, axis=axis)
            if name in ("sum", "prod") and np.dtype(dtype).kind in "iu":   # (the array API's widening)
                expected = expected.astype(got.dtype.np)
            np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)
        first = axis if isinstance(axis, int) else 0 if axis is None else axis[0]
        running = xp.cumulative_sum(x, axis=first)
        np.testing.assert_array_equal(np.asarray(running), np.cumsum(want, axis=first).astype(running.dtype.np))
