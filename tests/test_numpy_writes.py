"""NumPy's functions that write into their first argument (lazyarr.numpy_writes): put,
put_along_axis, place and putmask, each against NumPy's on a copy of the same data, into arrays
made several ways (NumPy data, a lazy graph, a view that writes through to its base, a 0-d
array), with values given as lists, arrays and lazy graphs, NumPy's modes and errors, gradients."""
import numpy as np
import pytest

import lazyarr as xp

BASE = np.arange(12.0).reshape(3, 4)


def targets():
    """(name, the lazyarr array to write into, what NumPy writes into, what to compare after)."""
    a = xp.asarray(BASE)
    g = xp.arange(12.0).reshape(3, 4) * 1.0
    base = xp.asarray(np.zeros((4, 4)))
    view = base[1:, ::1][:, :4]   # (a view: the write reaches base)
    return [("asarray", a, BASE.copy(), lambda t: t), ("graph", g, BASE.copy(), lambda t: t),
            ("view", view, np.zeros((3, 4)), lambda t: base[1:])]


def check(write_xp, write_np):
    for name, t, n, after in targets():
        write_xp(t)
        write_np(n)
        got = after(t).numpy()
        assert got.dtype == n.dtype and np.array_equal(got, n), (name, got, n)


def test_put_matches_numpy():
    check(lambda t: xp.put(t, [0, 5, -1], [10.0, 20.0, 30.0]), lambda n: np.put(n, [0, 5, -1], [10.0, 20.0, 30.0]))
    check(lambda t: xp.put(t, np.array([1, 1, 2]), xp.asarray([7.0, 8.0]) * 2),   # repeated: the last wins; cyclic
          lambda n: np.put(n, np.array([1, 1, 2]), np.array([7.0, 8.0]) * 2))
    check(lambda t: xp.put(t, [13, -20], 5.0, mode="wrap"), lambda n: np.put(n, [13, -20], 5.0, mode="wrap"))
    check(lambda t: xp.put(t, [13, -20], [1.0, 2.0], mode="clip"), lambda n: np.put(n, [13, -20], [1.0, 2.0], mode="clip"))
    check(lambda t: xp.put(t, [0, 1], [2.7, -1.5]), lambda n: np.put(n, [0, 1], [2.7, -1.5]))
    ints = xp.arange(5)
    xp.put(ints, [0, 4], [2.7, -1.9])   # cast to the array's dtype, as NumPy's
    want = np.arange(5)
    np.put(want, [0, 4], [2.7, -1.9])
    assert np.array_equal(ints.numpy(), want)
    scalar = xp.asarray(3.0)
    xp.put(scalar, [0, -1], [1.0, 9.0])
    assert float(scalar) == 9.0
    with pytest.raises(IndexError, match="out of bounds"):
        xp.put(xp.zeros(3), [3], 1.0)
    with pytest.raises(ValueError, match="mode"):
        xp.put(xp.zeros(3), [0], 1.0, mode="nearest")
    with pytest.raises(TypeError, match="integers"):
        xp.put(xp.zeros(3), [0.5], 1.0)
    with pytest.raises(TypeError, match="array to write into"):
        xp.put([1.0, 2.0], [0], 1.0)
    host = np.zeros(3)
    xp.put(host, [1], xp.asarray([4.0]))   # a NumPy target: NumPy's own put
    assert host.tolist() == [0.0, 4.0, 0.0]


def test_put_along_axis_matches_numpy():
    idx = np.array([[0, 3], [2, 2], [1, 0]])
    check(lambda t: xp.put_along_axis(t, idx, -1.0, axis=1), lambda n: np.put_along_axis(n, idx, -1.0, axis=1))
    col = np.array([[2, 0, 1, 0]])
    check(lambda t: xp.put_along_axis(t, col, xp.asarray([[5.0, 6.0, 7.0, 8.0]]), axis=0),
          lambda n: np.put_along_axis(n, col, np.array([[5.0, 6.0, 7.0, 8.0]]), axis=0))
    check(lambda t: xp.put_along_axis(t, np.array([[1], [3], [0]]), xp.asarray([[1.0], [2.0], [3.0]]), axis=-1),
          lambda n: np.put_along_axis(n, np.array([[1], [3], [0]]), np.array([[1.0], [2.0], [3.0]]), axis=-1))
    check(lambda t: xp.put_along_axis(t, np.array([11, 0]), 4.0, axis=None),
          lambda n: np.put_along_axis(n, np.array([11, 0]), 4.0, axis=None))
    with pytest.raises(ValueError, match="dimensions"):
        xp.put_along_axis(xp.zeros((2, 2)), np.array([0]), 1.0, axis=0)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.put_along_axis(xp.zeros((2, 2)), np.array([[2, 0]]), 1.0, axis=0)


def test_place_and_putmask_match_numpy():
    mask = BASE % 3 == 0
    check(lambda t: xp.place(t, mask, [-1.0, -2.0]), lambda n: np.place(n, mask, [-1.0, -2.0]))
    check(lambda t: xp.place(t, xp.asarray(mask), xp.asarray([5.0, 6.0, 7.0]) + 1),
          lambda n: np.place(n, mask, np.array([5.0, 6.0, 7.0]) + 1))
    check(lambda t: xp.putmask(t, mask, [-1.0, -2.0, -3.0]), lambda n: np.putmask(n, mask, [-1.0, -2.0, -3.0]))
    check(lambda t: xp.putmask(t, t > 4, t * 10), lambda n: np.putmask(n, n > 4, n * 10))   # lazy mask and values
    with pytest.raises(ValueError, match="empty"):
        xp.place(xp.zeros(3), [True, False, False], [])
    xp.place(xp.zeros(3), [False, False, False], [])   # nothing to place: no values needed, as NumPy
    with pytest.raises(ValueError, match="same size"):
        xp.putmask(xp.zeros(3), [True, False], 1.0)
    with pytest.raises(ValueError, match="same size"):
        xp.place(xp.zeros(3), [True], 1.0)


def test_writes_are_lazy_and_carry_gradients():
    w = xp.asarray(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    out = xp.zeros(5) + 0.0
    xp.put(out, [1, 3], w[:2] * 2)
    xp.putmask(out, xp.asarray([True, False, False, False, True]), w[2] ** 2)
    assert not out.is_realized
    xp.sum(out * xp.asarray([1.0, 2.0, 3.0, 4.0, 5.0])).backward()
    np.testing.assert_allclose(w.grad.numpy(), [4.0, 8.0, 6.0 * 6.0])
