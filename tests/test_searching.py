"""argmax, argmin and count_nonzero against NumPy: axes (None, negative, tuples for count_nonzero),
keepdims, ties (the first occurrence), NaN (the first NaN), every dtype, errors, kernel counts."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp
from tests import strategies as S
from tests.helpers import assert_close

COMPLEX = [np.complex64, np.complex128]
nonempty = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5)


@st.composite
def arrays(draw, dtypes, shape=nonempty):
    dtype = draw(st.sampled_from(dtypes))
    if np.dtype(dtype).kind == "c":
        values = [0j, 1j, 1 + 0j, complex("nan"), -0.0 + 0j]
        return draw(hnp.arrays(dtype, shape, elements=st.sampled_from(values)))
    if np.dtype(dtype).kind in "iu":   # a small range: ties are common
        return draw(S.arrays(dtype, shape=shape, lo=0, hi=3))
    return draw(S.arrays(dtype, shape=shape))   # floats with NaN, ±inf, ±0 among them


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(data=st.data())
def test_argmax_argmin_match_numpy(name, data):
    a = data.draw(arrays(S.REAL))
    axis = data.draw(st.none() | (st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none()))
    keepdims = data.draw(st.booleans())
    got = getattr(xp, name)(xp.asarray(a), axis=axis, keepdims=keepdims)
    assert not got.is_realized
    assert_close(got, getattr(np, name)(a, axis=axis, keepdims=keepdims))


def test_ties_give_the_first_and_nan_wins():
    a = np.array([[1.0, 7.0, 7.0, -2.0, -2.0], [3.0, np.nan, 9.0, np.nan, -np.inf], [0.0, -0.0, 0.0, -0.0, 0.0]])
    for name in ("argmax", "argmin"):
        for axis in (None, 0, 1):
            assert_close(getattr(xp, name)(xp.asarray(a), axis=axis), getattr(np, name)(a, axis=axis))
    assert int(xp.argmax(xp.asarray([False, True, True]))) == 1
    assert int(xp.argmin(xp.asarray([5, 2, 2], dtype=xp.uint8))) == 1


def test_argmax_errors():
    with pytest.raises(ValueError, match="empty"):
        xp.argmax(xp.zeros((2, 0)), axis=1)
    with pytest.raises(ValueError, match="empty"):
        xp.argmin(xp.zeros(0))
    assert xp.argmax(xp.zeros((0, 3)), axis=1).shape == (0,)   # no slices: nothing to find
    with pytest.raises(TypeError, match="complex"):
        xp.argmax(xp.asarray([1j]))
    with pytest.raises(IndexError, match="out of bounds"):
        xp.argmin(xp.ones((2, 2)), axis=2)


def test_argmax_is_one_kernel_and_a_method():
    a = np.random.default_rng(0).random((50, 70))
    t = xp.asarray(a)
    assert len(xp.argmax(t, axis=1).schedule()) == 1
    assert_close(t.argmax(axis=0), a.argmax(axis=0))
    assert_close(t.argmin(), a.argmin())
    assert_close(t.argmax(1, keepdims=True), a.argmax(1, keepdims=True))
    assert_close(np.argmax(t), np.argmax(a))


@given(data=st.data())
def test_count_nonzero_matches_numpy(data):
    a = data.draw(arrays(S.REAL + COMPLEX, shape=S.shapes))
    axis = data.draw(st.none() | (st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none())
                     | st.lists(st.integers(0, max(a.ndim - 1, 0)), unique=True, max_size=a.ndim).map(tuple))
    keepdims = data.draw(st.booleans())
    got = xp.count_nonzero(xp.asarray(a), axis=axis, keepdims=keepdims)
    want = np.asarray(np.count_nonzero(a, axis=axis, keepdims=keepdims)).astype(np.int64)
    assert_close(got, want)


def test_count_nonzero_counts_nan_and_not_negative_zero():
    assert int(xp.count_nonzero(xp.asarray([np.nan, -0.0, 0.0, np.inf]))) == 2
    with pytest.raises(IndexError):
        xp.count_nonzero(xp.ones(3), axis=1)
