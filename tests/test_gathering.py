"""Integer-array indexing, take and take_along_axis (gathers) against NumPy, and their gradients."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp
from tests.helpers import assert_close
from tests.test_autograd import check_gradient


@given(data=st.data())
def test_integer_array_indexing_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    key = []
    for n in shape:
        if data.draw(st.booleans()):
            key.append(None)   # a new axis, besides the entries for x's axes
        kind = data.draw(st.sampled_from(["array", "slice", "int"]))
        if kind == "array":
            key.append(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3))))
        elif kind == "slice":
            key.append(slice(data.draw(st.integers(0, n)), None, data.draw(st.sampled_from([1, 2, -1]))))
        else:
            key.append(data.draw(st.integers(-n, n - 1)))
    if not any(isinstance(k, np.ndarray) for k in key):
        key[key.index(None) + 1 if key[0] is None else 0] = np.array([0])
    sizes = {k.shape for k in key if isinstance(k, np.ndarray)}
    if len(sizes) > 1:   # make the arrays broadcastable
        key = [k[:1] if isinstance(k, np.ndarray) else k for k in key]
    key = tuple(key)
    assert_close(xp.asarray(a)[key], a[key])


def test_broadcast_index_arrays_and_their_placement():
    a = np.arange(60).reshape(3, 4, 5)
    for key in [(np.array([[0], [2]]), np.array([1, 3])), (slice(None), [1, 2], [3, 3]), ([0, 2], slice(None), [4, 0]),
                (1, [0, 2], slice(1, 4)), (Ellipsis, [0, -1]), (None, [1], 2)]:
        assert_close(xp.asarray(a)[key], a[key])


def test_take_and_take_along_axis():
    a = np.arange(24.0).reshape(2, 3, 4)
    assert_close(xp.take(xp.asarray(a), xp.asarray([2, 0, 2]), axis=1), np.take(a, [2, 0, 2], axis=1))
    assert_close(xp.take(xp.asarray(a[0, 0]), xp.asarray([-1, 0])), np.take(a[0, 0], [-1, 0]))
    order = np.argsort(-a, axis=2)
    assert_close(xp.take_along_axis(xp.asarray(a), xp.asarray(order), axis=2), np.take_along_axis(a, order, axis=2))
    rows = np.argsort(-a, axis=1)[:, :1]
    assert_close(xp.take_along_axis(xp.asarray(a), xp.asarray(rows), axis=1), np.take_along_axis(a, rows, axis=1))


def test_gather_errors():
    t = xp.ones((3, 4))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        t[[0, 3]]
    with pytest.raises(IndexError, match="out of bounds for axis 1"):
        t[:, [-5]]
    with pytest.raises(IndexError, match="integer"):
        t[xp.asarray([0.5])]
    with pytest.raises(IndexError, match="boolean"):
        t[xp.asarray([True, False])]
    with pytest.raises(IndexError, match="out of bounds"):   # without an axis: the flattened array's 12
        xp.take(t, xp.asarray([12]))


def test_gathers_fuse_and_differentiate():
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    idx = np.array([2, 0, 2, 1])
    t = xp.asarray(x)
    out = xp.exp(t[idx]) * 2
    assert len(out.schedule()) == 1
    check_gradient(lambda v: xp.exp(v[xp.asarray(idx)]) * 2, x)
    check_gradient(lambda v: xp.take_along_axis(v, xp.asarray(np.argsort(x, axis=1)), axis=1), x)


@pytest.mark.parametrize("shape", [(5,), (1,), (1, 3), (4, 3), (2, 3, 2)])
def test_an_int_key_reads_what_the_general_key_reads(shape):
    # x[i] takes a short path (indexing.getitem_int): the same graph as x[(i,)], the same errors
    a = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    x = xp.asarray(a)
    for i in range(-shape[0], shape[0]):
        assert x[i].uop is x[(i,)].uop and x[i].shape == a[i].shape
        np.testing.assert_array_equal(np.asarray(x[i]), a[i])
    for i in (shape[0], -shape[0] - 1):
        with pytest.raises(IndexError):
            x[i]
    if len(shape) > 1 and shape[0] > 1:   # a view: a write into x shows through it
        row = x[1]
        x[(1,) + (0,) * (len(shape) - 1)] = -7.0
        assert np.asarray(row).flat[0] == -7.0
    with pytest.raises(IndexError):
        xp.asarray(3.0)[0]


@pytest.mark.parametrize("shape", [(), (5,), (1, 3), (4, 3), (2, 3, 2)])
def test_a_key_of_new_axes_reads_what_the_general_key_reads(shape):
    # x[:, None] and the like take a short path (indexing.getitem_new_axes): the same graph as the
    # general key's, a view as NumPy's, the same errors for too many indices
    from lazyarr.indexing import getitem as general
    a = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    x = xp.asarray(a)
    keys = [(None,), (None, None)] + [k for n in range(1, len(shape) + 1) for k in
                                      [(slice(None),) * n, (slice(None),) * n + (None,), (None,) + (slice(None),) * n,
                                       (slice(None), None) + (slice(None),) * (n - 1)]]
    for key in keys:
        got = x[key]
        assert got.uop is general(x, key).uop and got.shape == a[key].shape, key
        np.testing.assert_array_equal(np.asarray(got), a[key])
    with pytest.raises(IndexError):
        x[(slice(None),) * (len(shape) + 1)]
    if shape:   # a view: a write through it reaches x
        y = xp.asarray(a)
        v = y[:, None]
        v[(0,) * v.ndim] = -3.0
        assert np.asarray(y).flat[0] == -3.0
        with pytest.raises(ValueError, match="read-only"):
            xp.broadcast_to(y, (2,) + shape)[:, None][(0,) * (len(shape) + 2)] = 1.0


@pytest.mark.parametrize("shape", [(5,), (1,), (1, 3), (4, 3), (2, 3, 2)])
def test_an_int_key_writes_what_the_general_key_writes(shape):
    # x[i] = v takes a short path (indexing.setitem_int): the same graph as x[(i,)] = v, the same errors
    a = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    rest = shape[1:]
    values = [2.5, 3, np.float32(-1.5), xp.asarray(np.full(rest, 9.0, np.float32)), xp.asarray(np.full(rest[-1:], 4.0)),
              xp.asarray(np.ones(rest, np.int32)) * 7, [1.0] * rest[-1] if rest else 1.0]
    base = xp.asarray(a)
    for value in values:
        x, y, want = base + 0.25, base + 0.25, a + 0.25   # (one node: both writes start from it)
        for i in range(-shape[0], shape[0]):
            x[i] = value
            y[(i,)] = value
            if not isinstance(value, (np.generic, list)):   # (those become a new buffer at each write)
                assert x.uop is y.uop
            want[i] = np.asarray(value)
            x = x * 0.5 - 1.0   # (the next row is written into a new value)
            y, want = y * 0.5 - 1.0, want * 0.5 - 1.0
        np.testing.assert_array_equal(np.asarray(x), want)
    x = xp.asarray(a)
    for i in (shape[0], -shape[0] - 1):
        with pytest.raises(IndexError):
            x[i] = 1.0
    if rest:
        with pytest.raises(ValueError, match="broadcast"):
            x[0] = xp.ones(rest + (2,))
    with pytest.raises(TypeError):
        x[0] = 1j
    with pytest.raises(ValueError, match="read-only"):
        xp.broadcast_to(x, (2,) + shape)[0] = 1.0
    if len(shape) > 1:   # written through a view: the root sees it
        v = x[0]
        v[0] = -5.0
        assert np.asarray(x).reshape(shape[0], -1)[0, 0] == -5.0
