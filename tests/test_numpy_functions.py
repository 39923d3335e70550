"""NumPy's functions beyond the array API and NumPy's Tensor methods, against NumPy: each called as
NumPy code calls it (positional arguments included), on inputs made several ways."""
import io
import math
import warnings

import numpy as np
import pytest
import torch

import lazyarr as xp
from tests.helpers import assert_close

RNG = np.random.default_rng(53)
A = RNG.standard_normal((5, 6))
NANS = A.copy()
NANS[1, 3] = NANS[4, 0] = np.nan
NANS[2] = np.nan


def made(a, how):
    if how == "asarray":
        return xp.asarray(a)
    if how == "computed":
        return xp.asarray(a) * 1.0
    if how == "transposed":
        return xp.asarray(np.ascontiguousarray(a.T)).T
    raise ValueError(how)


HOWS = ["asarray", "computed", "transposed"]


def same(got, want, **kw):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, equal_nan=True, **({"rtol": 1e-12, "atol": 1e-12} | kw))


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_order_statistics(how, method):
    x, n = made(A, how), made(NANS, how)
    for q in [0.3, [0.0, 0.5, 1.0]]:
        for axis in [None, 0, 1, (0, 1)]:
            same(xp.quantile(x, q, axis=axis, method=method), np.quantile(A, q, axis=axis, method=method))
            same(xp.nanquantile(n, q, axis=axis, method=method), np.nanquantile(NANS, q, axis=axis, method=method))
    same(xp.percentile(x, [25, 75], axis=1, method=method), np.percentile(A, [25, 75], axis=1, method=method))
    same(xp.median(x, axis=0, keepdims=True), np.median(A, axis=0, keepdims=True))
    same(xp.median(n, axis=1), np.median(NANS, axis=1))   # a NaN makes NaN
    with np.errstate(all="ignore"):
        same(xp.nanmedian(n, axis=1), np.nanmedian(NANS, axis=1))   # a row of NaNs: NaN


def test_nan_reductions_average_and_ptp():
    n = xp.asarray(NANS)
    for name in ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin"]:
        for axis in [None, 0, 1]:
            with warnings.catch_warnings():   # NumPy warns of the all-NaN row
                warnings.simplefilter("ignore")
                want = getattr(np, name)(NANS, axis=axis)
            same(getattr(xp, name)(n, axis=axis), want)
    for axis in [None, 0]:
        same(xp.nanargmax(xp.asarray(A), axis=axis), np.nanargmax(A, axis=axis))
        same(xp.nanargmin(xp.asarray(NANS[:2]), axis=axis), np.nanargmin(NANS[:2], axis=axis))
    w = np.arange(1.0, 7.0)
    same(xp.average(xp.asarray(A), axis=1, weights=xp.asarray(w)), np.average(A, axis=1, weights=w))
    avg, scale = xp.average(xp.asarray(A), weights=xp.asarray(A ** 2), returned=True)
    navg, nscale = np.average(A, weights=A ** 2, returned=True)
    same(avg, navg)
    same(scale, nscale)
    same(xp.ptp(xp.asarray(A), axis=0), np.ptp(A, axis=0))
    same(xp.asarray(A).ptp(1), np.ptp(A, 1))


def test_logic():
    a = np.array([1.0, np.inf, np.nan, 1e-9, -np.inf])
    b = np.array([1.0 + 1e-9, np.inf, np.nan, 0.0, np.inf])
    for equal_nan in [False, True]:
        np.testing.assert_array_equal(xp.isclose(xp.asarray(a), xp.asarray(b), equal_nan=equal_nan).numpy(),
                                      np.isclose(a, b, equal_nan=equal_nan))
    assert xp.allclose(xp.asarray(A), A + 1e-10) and not xp.allclose(xp.asarray(A), A + 1e-3)
    assert xp.array_equal(xp.asarray(A), A) and not xp.array_equal(xp.asarray(A), A[:2])
    assert xp.array_equal(xp.asarray(a), xp.asarray(a), equal_nan=True) and not xp.array_equal(xp.asarray(a), a)
    assert xp.array_equiv(xp.asarray([1, 2]), xp.asarray([[1, 2], [1, 2]]))
    assert not xp.array_equiv(xp.asarray([1, 2]), xp.asarray([[1, 2, 3]]))
    assert type(xp.allclose(xp.ones(2), xp.ones(2))) is bool


def test_mathematics():
    same(xp.nan_to_num(xp.asarray([np.nan, np.inf, -np.inf, 1.0])), np.nan_to_num([np.nan, np.inf, -np.inf, 1.0]))
    same(xp.nan_to_num(xp.asarray([np.nan, np.inf], dtype=xp.float32), nan=-1, posinf=9),
         np.nan_to_num(np.array([np.nan, np.inf], np.float32), nan=-1, posinf=9), rtol=1e-6)
    z = np.array([complex(np.nan, np.inf), 1 + 2j])
    same(xp.nan_to_num(xp.asarray(z)), np.nan_to_num(z))
    xs, px = RNG.uniform(-1, 11, 30), np.sort(RNG.uniform(0, 10, 8))
    fp = RNG.standard_normal(8)
    same(xp.interp(xp.asarray(xs), xp.asarray(px), xp.asarray(fp)), np.interp(xs, px, fp))
    same(xp.interp(xp.asarray(xs), xp.asarray(px), xp.asarray(fp), left=-5, right=5),
         np.interp(xs, px, fp, left=-5, right=5))
    same(xp.interp(xp.asarray(xs), xp.asarray(px), xp.asarray(fp), period=3), np.interp(xs, px, fp, period=3))
    for n, m in [(10, 3), (3, 10), (200, 80), (5, 5), (1, 1)]:
        u, v = RNG.standard_normal(n), RNG.standard_normal(m)
        for mode in ["full", "same", "valid"]:
            same(xp.convolve(xp.asarray(u), xp.asarray(v), mode), np.convolve(u, v, mode))
            same(xp.correlate(xp.asarray(u), xp.asarray(v), mode), np.correlate(u, v, mode))
    same(xp.cross(xp.asarray(A[:, :3]), xp.asarray(A[:, 3:])), np.cross(A[:, :3], A[:, 3:]))
    # 2-vectors (NumPy before 2.5 takes them; later ones raise): the z-component alone
    u, v = A[:2, :3], A[2:4, :3]
    same(xp.cross(xp.asarray(u), xp.asarray(v), axis=0), u[0] * v[1] - u[1] * v[0])
    cube = RNG.standard_normal((3, 4, 5))
    same(xp.trace(xp.asarray(cube), 1, 1, 2), np.trace(cube, 1, 1, 2))
    same(xp.trace(xp.asarray(A)), np.trace(A))


def test_creation_and_shapes():
    same(xp.logspace(0, 3, 7), np.logspace(0, 3, 7))
    same(xp.logspace(1, 2, 5, base=2.0, endpoint=False), np.logspace(1, 2, 5, base=2.0, endpoint=False))
    same(xp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4))
    same(xp.geomspace(-1, -1000, 5), np.geomspace(-1, -1000, 5))
    for k in [-2, 0, 1]:
        same(xp.diag(xp.asarray([1.0, 2.0, 3.0]), k), np.diag([1.0, 2.0, 3.0], k))
        same(xp.diag(xp.asarray(A), k), np.diag(A, k))
    same(xp.diagflat(xp.asarray([[1, 2], [3, 4]]), 1), np.diagflat([[1, 2], [3, 4]], 1))
    t = xp.asarray([1.0, 2.0])
    c = xp.array(t)   # a copy, as np.array's
    c[0] = 5.0
    assert t.numpy().tolist() == [1.0, 2.0] and c.numpy().tolist() == [5.0, 2.0]
    assert xp.array([1, 2], ndmin=3).shape == (1, 1, 2)
    assert (xp.ndim(A), xp.shape(xp.asarray(A)), xp.size(A, 1)) == (2, (5, 6), 6)
    with xp.printoptions(precision=2):
        assert "1.23" in repr(xp.asarray([1.23456])) and "1.2346" not in repr(xp.asarray([1.23456]))
    buf = io.StringIO()
    xp.savetxt(buf, xp.asarray(A[:2]))
    buf.seek(0)
    same(xp.loadtxt(buf), A[:2], rtol=1e-15)


@pytest.mark.parametrize("how", HOWS)
def test_unique_along_an_axis(how):
    rows = np.round(A[:, :3]).repeat(2, axis=0)[::-1] % 2   # repeated rows, in no order
    for a, axis in [(rows, 0), (rows.T, 1), (rows.reshape(5, 2, 3), 1), (rows[:0], 0), (rows.astype(np.int64), -2)]:
        want = np.unique(a, return_index=True, return_inverse=True, return_counts=True, axis=axis)
        got = xp.unique(made(a, how), return_index=True, return_inverse=True, return_counts=True, axis=axis)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.numpy().tolist() == w.tolist()
    same(xp.unique(made(rows, how), axis=0), np.unique(rows, axis=0))
    with pytest.raises(TypeError):
        xp.unique(xp.asarray(rows), axis="0")
    with pytest.raises(ValueError):   # NumPy's AxisError is a ValueError and an IndexError
        xp.unique(xp.asarray(rows), axis=2)


def test_index_tricks_r_and_c():
    a, b, m = np.array([1, 2, 3]), np.array([4.0, 5, 6]), np.arange(6).reshape(2, 3)
    for tricks in [lambda t: t.r_[a, b], lambda t: t.r_[a, 0, b], lambda t: t.r_[1:4, 7], lambda t: t.r_[2:8:2],
                   lambda t: t.r_[-1:1:6j, [0] * 3, 5], lambda t: t.c_[a, b], lambda t: t.c_[m, m], lambda t: t.c_[a, m.T],
                   lambda t: t.r_["0,2", a, b], lambda t: t.r_["1", m, m], lambda t: t.r_[m, m]]:
        got, want = tricks(xp), tricks(np)
        assert got.dtype == want.dtype
        same(got, want)
    same(xp.r_[xp.asarray(a), xp.asarray(b) * 2], np.r_[a, b * 2])
    with pytest.raises(ValueError, match="directive"):
        xp.r_["r", a, b]


@pytest.mark.parametrize("how", HOWS)
def test_joining_splitting_and_padding(how):
    x, v = made(A, how), xp.asarray(A[0])
    for mode in ["constant", "edge", "reflect", "symmetric", "wrap"]:
        for width in [1, (2, 3), ((1, 2), (0, 5)), ((7, 9), (10, 3))]:
            same(xp.pad(x, width, mode=mode), np.pad(A, width, mode=mode))
    same(xp.pad(x, ((1, 2), (3, 1)), constant_values=((5, 6), (7, 8))),
         np.pad(A, ((1, 2), (3, 1)), constant_values=((5, 6), (7, 8))))
    for name in ["vstack", "hstack", "dstack", "column_stack"]:
        for parts in [(A, A), (A[0], A[1])]:
            same(getattr(xp, name)([xp.asarray(p) for p in parts]), getattr(np, name)(parts))
    for name, arg in [("array_split", 4), ("array_split", [1, 3]), ("split", 5), ("vsplit", 5), ("hsplit", [2])]:
        got, want = getattr(xp, name)(x, arg), getattr(np, name)(A, arg)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    with pytest.raises(ValueError, match="equal division"):
        xp.split(v, 4)
    for name in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        for a in [np.float64(3.0), A[0], A, A[None]]:
            assert getattr(xp, name)(xp.asarray(a)).shape == getattr(np, name)(a).shape
    assert xp.swapaxes(xp.ones((2, 3, 4)), 0, 2).shape == (4, 3, 2)
    assert len(xp.pad(x * 2, 2, mode="reflect").schedule()) == 1   # movements: one kernel


def test_numpy_code_passes_arguments_by_position():
    t = xp.asarray(A)
    same(xp.sum(t, 0), A.sum(0))
    same(xp.mean(t, 1), A.mean(1))
    same(xp.max(t, 0), A.max(0))
    same(xp.argmax(t, 1), A.argmax(1))
    same(xp.concatenate([t, t], 1), np.concatenate([A, A], 1))
    same(xp.stack([t, t], 2), np.stack([A, A], 2))
    same(xp.roll(t, 1, 0), np.roll(A, 1, 0))
    same(xp.tril(t, -1), np.tril(A, -1))
    same(xp.eye(3, 4, 1), np.eye(3, 4, 1))
    assert xp.zeros((2,), np.float32).dtype == xp.float32
    same(xp.take(t, xp.asarray([0, 2]), 1), np.take(A, [0, 2], 1))


def test_tensor_methods():
    t = xp.asarray(A)
    assert t.item(4) == A.item(4) and t.item((1, 2)) == A.item((1, 2)) and t.item(1, 2) == A.item(1, 2)
    assert t.strides == A.strides and (A[0, 0] in t) and (12345.0 not in t)
    same(t.max(initial=10), A.max(initial=10))
    same(t.sum(where=xp.asarray(A > 0)), A.sum(where=A > 0))
    same(t.max(where=xp.asarray(A < 0), initial=-9), A.max(where=A < 0, initial=-9))
    same(t.sum(initial=1), A.sum(initial=1))
    assert round(xp.asarray(2.5)) == 2 and round(xp.asarray(2.567), 1) == 2.6
    same(round(xp.asarray([1.5, 2.5])), [2.0, 2.0])
    c = xp.zeros(3)
    c.fill(7)
    same(c, [7.0, 7.0, 7.0])
    same(t.repeat(2, axis=0), A.repeat(2, axis=0))
    same(t.take([0, 4]), A.take([0, 4]))
    same(t.swapaxes(0, 1), A.swapaxes(0, 1))
    same(t.diagonal(1), A.diagonal(1))
    same(t.trace(), A.trace())
    assert t.tobytes() == A.tobytes()
    with pytest.raises(IndexError):
        t.item(30)


def test_retain_grad_and_zero_():
    x = xp.asarray([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    (y ** 2).sum().backward()
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = tx * 3
    ty.retain_grad()
    (ty ** 2).sum().backward()
    same(y.grad, ty.grad.numpy())
    same(x.grad, tx.grad.numpy())
    x.grad.zero_()
    same(x.grad, [0.0, 0.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        xp.ones(2).retain_grad()


def test_requires_grad_on_creation_functions():
    for make in [lambda: xp.zeros(3, requires_grad=True), lambda: xp.ones(3, requires_grad=True),
                 lambda: xp.full(3, 2.0, requires_grad=True), lambda: xp.linspace(0, 1, 3, requires_grad=True),
                 lambda: xp.zeros_like(xp.ones(3), requires_grad=True)]:
        p = make()
        assert p.requires_grad and p.is_leaf
        (p * p * 0.5).sum().backward()
        same(p.grad, p.numpy())
    assert not xp.zeros(3).requires_grad and math.isclose(float(xp.ones(3, requires_grad=True).sum()), 3.0)


def test_diagonal_is_numpys():
    """NumPy's diagonal (axis1 and axis2, the first two by default; the diagonal along a new last
    axis), natively: lazy, differentiable, NumPy's errors; the method and trace share it."""
    b = np.arange(60.0).reshape(3, 4, 5)
    for made in (xp.asarray(b), xp.asarray(b) * 1.0, xp.asarray(np.ascontiguousarray(b.T)).T):
        for offset, a1, a2 in [(0, 0, 1), (1, 0, 1), (-1, 0, 1), (2, 1, 2), (0, 2, 0), (-2, -1, 0), (7, 0, 1)]:
            got = xp.diagonal(made, offset, a1, a2)
            np.testing.assert_array_equal(got.numpy(), np.diagonal(b, offset, a1, a2))
            np.testing.assert_array_equal(made.diagonal(offset, a1, a2).numpy(), b.diagonal(offset, a1, a2))
            np.testing.assert_array_equal(xp.trace(made, offset, a1, a2).numpy(), np.trace(b, offset, a1, a2))
    assert not xp.numpy_fallback.is_fallback(xp.diagonal)
    np.testing.assert_array_equal(np.diagonal(xp.asarray(b)).numpy(), np.diagonal(b))   # NumPy's name on a Tensor
    x = xp.asarray(np.arange(9.0).reshape(3, 3), requires_grad=True)
    xp.sum(xp.diagonal(x, 1) * 2).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.diag([2.0, 2.0], 1))
    with pytest.raises(ValueError, match="same"):
        xp.diagonal(xp.zeros((2, 2)), 0, 1, 1)
    with pytest.raises(ValueError, match="two dimensions"):
        xp.diagonal(xp.zeros(3))
    with pytest.raises(np.exceptions.AxisError):
        xp.diagonal(xp.zeros((2, 2)), 0, 0, 2)
