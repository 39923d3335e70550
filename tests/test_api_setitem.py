"""Tensor.__setitem__ (lazyarr.indexing.setitem) against NumPy: every basic key, boolean masks,
broadcasting of the value, dtype conversion, laziness, and NumPy's errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp
from tests import strategies as S
from tests.helpers import assert_close


@st.composite
def basic_keys(draw, shape):
    """A basic index for `shape`: ints, slices of any step, None and at most one ellipsis."""
    key, axis, ellipsis = [], 0, False
    for _ in range(draw(st.integers(0, len(shape) + 1))):
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis"]))
        if kind == "none":
            key.append(None)
        elif kind == "ellipsis" and not ellipsis:
            key.append(Ellipsis)
            ellipsis = True
        elif axis < len(shape) and not ellipsis:
            n = shape[axis]
            if kind == "int" and n:
                key.append(draw(st.integers(-n, n - 1)))
            else:
                bound = st.none() | st.integers(-n - 2, n + 2)
                key.append(slice(draw(bound), draw(bound), draw(st.none() | st.sampled_from([1, 2, 3, -1, -2]))))
            axis += 1
    return tuple(key)


@given(data=st.data())
def test_setitem_with_basic_keys_matches_numpy(data):
    dtype = data.draw(st.sampled_from(S.REAL))
    a = data.draw(S.arrays(dtype, shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)))
    key = data.draw(basic_keys(a.shape))
    view_shape = a[key].shape
    value_shape = data.draw(st.sampled_from([(), view_shape, view_shape[1:], view_shape[-1:]]))
    value = data.draw(S.arrays(dtype, shape=st.just(value_shape)))
    t = xp.asarray(a)
    want = a.copy()
    want[key] = value
    t[key] = xp.asarray(value)
    assert_close(t, want)


@given(data=st.data())
def test_setitem_with_boolean_masks_matches_numpy(data):
    dtype = data.draw(st.sampled_from(S.NUMBERS))
    a = data.draw(S.arrays(dtype, shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)))
    lead = data.draw(st.integers(1, a.ndim))
    mask = data.draw(hnp.arrays(np.bool_, a.shape[:lead]))
    value = data.draw(S.elements(dtype, special=False))
    t = xp.asarray(a)
    want = a.copy()
    want[mask] = value
    t[xp.asarray(mask)] = value
    assert_close(t, want)


def test_setitem_is_lazy_reaches_views_and_leaves_computed_values_alone():
    t = xp.asarray(np.arange(6.0))
    view, computed = t[:], t * 1   # NumPy's: a slice is a view of t; a product is a new array
    t[1:4] = 0.0
    assert not t.is_realized
    assert_close(t, np.array([0.0, 0.0, 0.0, 0.0, 4.0, 5.0]))
    assert_close(view, np.array([0.0, 0.0, 0.0, 0.0, 4.0, 5.0]))
    assert_close(computed, np.arange(6.0))


def test_setitem_converts_values_to_the_arrays_dtype():
    t = xp.zeros(3, dtype=xp.int32)
    t[0] = 7
    t[1] = xp.asarray(2.9)            # cast as NumPy casts: truncation
    t[2] = True
    assert t.dtype == xp.int32
    assert_close(t, np.array([7, 2, 1], np.int32))
    f = xp.zeros(2, dtype=xp.float32)
    f[...] = 1.5
    assert_close(f, np.full(2, 1.5, np.float32))


def test_setitem_errors_are_numpys():
    t = xp.zeros((2, 3))
    with pytest.raises(ValueError, match="could not broadcast"):
        t[0] = xp.ones(2)
    with pytest.raises(IndexError, match="out of bounds"):
        t[2] = 1.0
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0] = 1.0
    with pytest.raises(TypeError, match="complex"):
        t[0] = 1j
    with pytest.raises(OverflowError):
        xp.zeros(2, dtype=xp.uint8)[0] = 300
    with pytest.raises(IndexError, match="boolean index"):
        t[xp.asarray([True, False, True])] = 1.0


def test_setitem_on_a_leaf_that_requires_grad_needs_no_grad():
    w = xp.ones(3).requires_grad_()
    with pytest.raises(RuntimeError, match="no_grad"):
        w[0] = 2.0
    with xp.no_grad():
        w[0] = 2.0
    assert_close(w.detach(), np.array([2.0, 1.0, 1.0]))
