"""NumPy's arguments of functions lazyarr has (issue 32): take without an axis, repeat with a
count an element, pad's linear_ramp and statistics modes, linspace's retstep and array ends,
full/full_like casting, max/min's initial and where, and the settable real and imag parts.
Each against NumPy, on inputs made several ways (lists, NumPy arrays, lazy graphs, strided views,
transposes), with NumPy's exception types for bad input."""
import warnings

import numpy as np
import pytest

import lazyarr as xp

A = np.arange(12).reshape(3, 4) * 2
F = np.array([[1.5, -2.0, 3.25, 7.0], [0.5, np.nan, 2.0, 1.0], [4.0, 4.0, -1.0, 0.0]])


def made(how):
    """(lazyarr array, NumPy array) of the same values, made `how`."""
    if how == "graph":
        return xp.arange(12).reshape(3, 4) * 2, A
    if how == "view":
        return (xp.arange(24).reshape(6, 4) * 2)[::2], (np.arange(24).reshape(6, 4) * 2)[::2]
    if how == "T":
        return xp.asarray(A.T.copy()).T, A
    if how == "float32":
        return xp.asarray(A.astype(np.float32)), A.astype(np.float32)
    if how == "nan":
        return xp.asarray(F), F
    return xp.asarray(A), A   # ("asarray")


HOWS = ["asarray", "graph", "view", "T", "float32", "nan"]


def same(got, want, rtol=1e-12):
    got = got.numpy() if isinstance(got, xp.Tensor) else np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


def raises_like(numpy_call, lazy_call):
    """Both calls raise, lazyarr's error of the type NumPy's is."""
    with pytest.raises(Exception) as want:
        numpy_call()
    with pytest.raises(want.type):
        lazy_call()


@pytest.mark.parametrize("how", HOWS)
def test_take_without_an_axis_flattens(how):
    x, a = made(how)
    for idx in ([0, 5, -1], 3, [[1, 2], [0, 11]], np.array([], dtype=np.int64), xp.asarray([7, 7, 0])):
        same(xp.take(x, idx), np.take(a, np.asarray(idx)))
    same(xp.take(x, [[0, 2], [1, 1]], axis=0), np.take(a, [[0, 2], [1, 1]], axis=0))
    raises_like(lambda: np.take(a, 12), lambda: xp.take(x, 12))


def test_take_differentiates():
    t = xp.asarray([[1.0, 2.0], [3.0, 4.0]]).requires_grad_()
    (xp.take(t, [0, 3, 3]) * xp.asarray([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [[1.0, 0.0], [0.0, 5.0]])


@pytest.mark.parametrize("how", HOWS)
def test_repeat_with_a_count_an_element(how):
    x, a = made(how)
    for repeats, axis in (([1, 0, 3], 0), ([1, 0, 3, 2], 1), (np.arange(12) % 3, None), ([0, 0, 0], 0),
                          (xp.asarray([2, 1, 0, 1]), -1), ([2], 1), (np.array([3]), None)):
        same(xp.repeat(x, repeats, axis=axis), np.repeat(a, np.asarray(repeats), axis=axis))
    raises_like(lambda: np.repeat(a, [1, -1, 2], axis=0), lambda: xp.repeat(x, [1, -1, 2], axis=0))
    raises_like(lambda: np.repeat(a, [1, 2], axis=0), lambda: xp.repeat(x, [1, 2], axis=0))
    raises_like(lambda: np.repeat(a, np.array([1.0, 2.0, 1.0]), axis=0), lambda: xp.repeat(x, [1.0, 2.0, 1.0], axis=0))


def test_repeat_differentiates():
    t = xp.asarray([1.0, 2.0, 3.0]).requires_grad_()
    xp.repeat(t, [1, 0, 3]).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [1.0, 0.0, 3.0])


PAD_CASES = [("linear_ramp", {}), ("linear_ramp", {"end_values": (5, -3)}),
             ("linear_ramp", {"end_values": ((1, 2), (3, 4))}), ("maximum", {}), ("minimum", {"stat_length": 2}),
             ("mean", {}), ("mean", {"stat_length": ((1, 2), (3, 1))}), ("median", {}),
             ("median", {"stat_length": (2, 3)}), ("maximum", {"stat_length": 10}),
             ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"})]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("mode,kwargs", PAD_CASES, ids=[f"{m}-{k}" for m, k in PAD_CASES])
def test_pad_modes(mode, kwargs, how):
    x, a = made(how)
    for width in ((2, 3), ((1, 2), (0, 5)), 4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = np.pad(a, width, mode=mode, **kwargs)
        same(xp.pad(x, width, mode=mode, **kwargs), want, rtol=1e-5 if how == "float32" else 1e-12)


def test_pad_empty_mode_and_errors():
    x = xp.arange(6).reshape(2, 3)
    assert xp.pad(x, (1, 2), mode="empty").shape == np.pad(np.zeros((2, 3)), (1, 2), mode="empty").shape
    a = np.ones((2, 2))
    for mode, kwargs in (("edge", {"constant_values": 3}), ("maximum", {"stat_length": 0}),
                         ("mean", {"stat_length": -1}), ("linear_ramp", {"stat_length": 1})):
        raises_like(lambda: np.pad(a, 1, mode=mode, **kwargs), lambda: xp.pad(xp.asarray(a), 1, mode=mode, **kwargs))
    raises_like(lambda: np.pad(a, 1, mode="nope"), lambda: xp.pad(xp.asarray(a), 1, mode="nope"))


def test_pad_statistics_and_ramps_differentiate():
    t = xp.asarray([[1.0, 5.0, 2.0], [3.0, 0.0, 4.0]]).requires_grad_()
    xp.pad(t, 1, mode="maximum").sum().backward()
    # axis 0 first: the column maxima (3, 5, 4) become a row above and below; then each of the four
    # rows' maximum (5, 5, 4, 5) fills its left and right: 5 is t[0, 1] 8 times, 4 t[1, 2] twice
    np.testing.assert_array_equal(t.grad.numpy(), [[1.0, 9.0, 1.0], [3.0, 1.0, 5.0]])
    for mode in ("linear_ramp", "mean", "median"):   # linear in t (here): each element's gradient is the sum of
        t.grad = None                                # NumPy's padding of that element alone
        xp.pad(t, (1, 2), mode=mode).sum().backward()
        unit = np.eye(6).reshape(6, 2, 3)
        want = [np.pad(u, (1, 2), mode=mode).sum() for u in unit] if mode == "linear_ramp" else None
        if want is not None:
            np.testing.assert_allclose(t.grad.numpy().ravel(), want, rtol=1e-12)
        else:
            assert t.grad.numpy().sum() == pytest.approx(np.pad(np.ones((2, 3)), (1, 2), mode=mode).sum())


@pytest.mark.parametrize("dtype", [None, np.float32, np.int64])
def test_linspace_retstep_and_array_ends(dtype):
    for args, kwargs in (((0, 1, 5), {}), ((0, 1, 1), {}), ((-5, 0, 4), {}), ((2, 2, 3), {}),
                         (([0, 1], [1, 3], 3), {}), (([0, 1], [1, 3], 3), {"axis": 1}),
                         (([0, 1], [1, 3], 4), {"axis": -1, "endpoint": False}),
                         (([[0, 1]], 2, 3), {"axis": 2}), (([0, 1], [0, 3], 3), {}), (([0, 1], [1, 3], 0), {})):
        want, step = np.linspace(*args, retstep=True, dtype=dtype, **kwargs)
        got, got_step = xp.linspace(*args, retstep=True, dtype=dtype, **kwargs)
        same(got, want, rtol=1e-6)
        same(got_step, step, rtol=1e-6)
        same(xp.linspace(*args, dtype=dtype, **kwargs), want, rtol=1e-6)


def test_linspace_of_lazy_arrays_differentiates_and_checks_its_axis():
    x, a = made("graph")
    same(xp.linspace(x[0], x[2], 5, axis=1), np.linspace(a[0], a[2], 5, axis=1))
    same(xp.linspace(x.T[1], 100.0, 3), np.linspace(a.T[1], 100.0, 3))
    same(xp.linspace(np.float32([0, 1]), xp.asarray(np.float32([1, 3])), 4), np.linspace(np.float32([0, 1]), np.float32([1, 3]), 4), rtol=1e-6)
    t = xp.asarray([0.0, 1.0]).requires_grad_()
    xp.linspace(t, 3.0, 4, axis=1).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), [2.0, 2.0])
    raises_like(lambda: np.linspace([0, 1], [1, 3], 3, axis=3), lambda: xp.linspace([0, 1], [1, 3], 3, axis=3))
    raises_like(lambda: np.linspace([0, 1], [1, 2, 3], 3), lambda: xp.linspace([0, 1], [1, 2, 3], 3))


def test_full_and_full_like_cast_the_fill_value():
    for x, a in (made("asarray"), made("view"), (xp.asarray([1, 2, 3], dtype=xp.int8), np.array([1, 2, 3], np.int8))):
        same(xp.full_like(x, 2.7), np.full_like(a, 2.7))
        same(xp.full_like(x, -2.7), np.full_like(a, -2.7))
        same(xp.full_like(x, 1.9, dtype=xp.uint8), np.full_like(a, 1.9, dtype=np.uint8))
    for args in (((3,), 2.7, int), ((2, 2), -2.7, np.int16), ((3,), 2.5, bool), ((3,), 0.0, bool), ((2,), 5, bool),
                 ((2,), True, np.int8), ((2,), 3, np.float32)):
        same(xp.full(*args), np.full(*args))
    raises_like(lambda: np.full(3, 300, dtype=np.uint8), lambda: xp.full(3, 300, dtype=xp.uint8))
    raises_like(lambda: np.full_like(np.arange(3, dtype=np.uint8), 300),
                lambda: xp.full_like(xp.arange(3, dtype=xp.uint8), 300))


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_initial_and_where(name, how):
    x, a = made(how)
    mask = np.array([[True, False, True, False]])
    for kwargs in ({"initial": 100}, {"initial": -100}, {"initial": 2.5}, {"axis": 0, "initial": 9},
                   {"axis": 1, "where": mask, "initial": -1, "keepdims": True},
                   {"where": [True, False, True, True], "initial": 7, "axis": 1}):
        want = getattr(np, name)(a, **kwargs)
        same(getattr(xp, name)(x, **kwargs), want)
        same(getattr(x, name)(**kwargs), want)   # the Tensor method
    raises_like(lambda: getattr(np, name)(a, where=mask), lambda: getattr(xp, name)(x, where=mask))


def test_max_min_initial_of_empty_arrays_and_gradients():
    same(xp.max(xp.zeros((0, 3)), axis=0, initial=1), np.max(np.zeros((0, 3)), axis=0, initial=1))
    same(xp.min(xp.zeros((3, 0)), axis=1, initial=4, keepdims=True), np.min(np.zeros((3, 0)), axis=1, initial=4,
                                                                             keepdims=True))
    same(xp.max(xp.asarray([np.nan, 1.0]), initial=5), np.max([np.nan, 1.0], initial=5))
    raises_like(lambda: np.max(np.arange(3, dtype=np.uint8), initial=-1),
                lambda: xp.max(xp.arange(3, dtype=xp.uint8), initial=-1))
    t = xp.asarray([1.0, 5.0, 3.0]).requires_grad_()
    xp.max(t, initial=2.0, where=xp.asarray([True, False, True])).backward()
    np.testing.assert_array_equal(t.grad.numpy(), [0.0, 0.0, 1.0])


def test_setting_real_and_imag_parts():
    for dtype in (np.complex64, np.complex128):
        values = np.array([1 + 2j, 3 - 4j, 5j, -1 - 1j], dtype=dtype)
        w, n = xp.asarray(values), values.copy()
        w.imag = 0
        n.imag = 0
        same(w, n)
        w.real = [7, 8, 9, 10]
        n.real = [7, 8, 9, 10]
        same(w, n)
        b, nb = xp.asarray(values), values.copy()   # through a strided view, into its base
        v, nv = b[::2], nb[::2]
        v.imag = xp.asarray([10.0, 20.0])
        nv.imag = [10.0, 20.0]
        same(b, nb)
        m, nm = xp.ones((2, 2), dtype=dtype), np.ones((2, 2), dtype=dtype)   # broadcast
        m.T.imag = xp.asarray([1.0, 2.0])
        nm.T.imag = [1.0, 2.0]
        same(m, nm)
    x, a = xp.asarray([1.0, 2.0]), np.array([1.0, 2.0])
    x.real = 5
    a.real = 5
    same(x, a)
    raises_like(lambda: setattr(a, "imag", 1), lambda: setattr(x, "imag", 1))
    raises_like(lambda: setattr(np.arange(3), "imag", 1), lambda: setattr(xp.arange(3), "imag", 1))
