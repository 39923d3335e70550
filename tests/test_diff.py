"""diff against NumPy: orders n (0 and past the axis' length included), axes, prepend and append
(arrays and scalars), every dtype (unsigned integers wrap, booleans differ by !=), errors,
gradients against finite differences, and one kernel."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp
from tests import strategies as S
from tests.helpers import assert_close
from tests.test_autograd import check_gradient

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6)


@given(data=st.data())
def test_diff_matches_numpy(data):
    dtype = data.draw(st.sampled_from(S.REAL))
    a = data.draw(S.arrays(dtype, shape=shapes, special=False))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.integers(0, 7))
    with np.errstate(all="ignore"):
        want = np.diff(a, n=n, axis=axis)
    got = xp.diff(xp.asarray(a), n=n, axis=axis)
    assert_close(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12, atol=1e-6)


@given(data=st.data())
def test_diff_with_prepend_and_append(data):
    dtype = data.draw(st.sampled_from(S.NUMBERS))
    a = data.draw(S.arrays(dtype, shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
                           special=False, lo=-100, hi=100))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    kw = {}
    for key in ("prepend", "append"):
        kind = data.draw(st.sampled_from(["none", "array", "scalar"]))
        if kind == "array":
            shape = list(a.shape)
            shape[axis] = data.draw(st.integers(0, 3))
            kw[key] = data.draw(S.arrays(dtype, shape=st.just(tuple(shape)), special=False, lo=-100, hi=100))
        elif kind == "scalar":
            kw[key] = data.draw(st.integers(0, 9))
    n = data.draw(st.integers(1, 3))
    with np.errstate(all="ignore"):
        want = np.diff(a, n=n, axis=axis, **kw)
    got = xp.diff(xp.asarray(a), n=n, axis=axis, **{k: xp.asarray(v) if isinstance(v, np.ndarray) else v
                                                     for k, v in kw.items()})
    assert_close(got, want)


def test_diff_of_high_order_is_one_kernel():
    a = np.random.default_rng(0).random((4, 300))
    d = xp.diff(xp.asarray(a), n=12)
    assert len(d.schedule()) == 1
    # one size argument per distinct size: with one per use, the 4096 paths to the 13 offsets each
    # had their own, and the kernel was 900 KB of code (350 s for PoCL to build)
    assert len(d.schedule()[0].source) < 20000
    assert_close(d, np.diff(a, n=12), rtol=1e-9, atol=1e-9)


def test_diff_errors():
    with pytest.raises(ValueError, match="0-d"):
        xp.diff(xp.asarray(1.0))
    with pytest.raises(ValueError, match="non-negative"):
        xp.diff(xp.ones(3), n=-1)
    with pytest.raises(TypeError, match="integer"):
        xp.diff(xp.ones(3), n=1.5)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.diff(xp.ones(3), axis=1)
    with pytest.raises(ValueError, match="differ"):
        xp.diff(xp.ones((2, 3)), axis=1, prepend=xp.ones((3, 1)))


@given(a=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=5),
                    elements=st.floats(-2, 2)), n=st.integers(1, 3))
def test_diff_gradients(a, n):
    n = min(n, a.shape[0])   # the output keeps an element
    check_gradient(lambda x: xp.diff(x, n=n, axis=0, prepend=xp.ones((1,) + x.shape[1:]) * 0.5), a)
