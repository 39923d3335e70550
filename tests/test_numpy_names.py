"""NumPy's names added for issue 32 (elementwise functions, index tricks, manipulation, sets,
statistics, polynomials, memory, printing, files and dtype), against NumPy: values, dtypes and
shapes, on inputs made several ways (lists, NumPy arrays, lazy graphs, strided views), the
gradients of the differentiable ones, and NumPy's exception types for bad input."""
import io
import math
import warnings

import numpy as np
import pytest

import lazyarr as xp

RNG = np.random.default_rng(32)
A = RNG.standard_normal((4, 6))
HOWS = ["list", "asarray", "computed", "strided", "transposed"]


def made(a, how):
    """The NumPy array `a` as lazyarr input: a list, an array, a lazy graph, a strided view, or a
    transposed view."""
    a = np.asarray(a)
    if how == "list":
        return a.tolist()
    if how == "asarray":
        return xp.asarray(a)
    if how == "computed":
        return xp.asarray(a) * 1 if a.dtype != bool else xp.asarray(a) & True
    if how == "strided":
        return xp.asarray(np.repeat(a, 2, axis=0))[::2] if a.ndim else xp.asarray(a)
    if how == "transposed":
        return xp.asarray(np.ascontiguousarray(a.T)).T
    raise ValueError(how)


def ref(a, how):
    """What NumPy is given for the same input (a list loses the array's dtype)."""
    return np.asarray(a).tolist() if how == "list" else a


def same(got, want, rtol=1e-12, atol=1e-12, dtype=True):
    """got (a lazyarr array, or a tuple of them) equals want in shape, dtype and values."""
    if isinstance(want, tuple):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same(g, w, rtol, atol, dtype)
        return
    assert isinstance(got, xp.ndarray), type(got)
    g, w = got.numpy(), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if dtype:
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if w.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


def grad_check(fn, np_fn, *arrays, rtol=1e-6, atol=1e-8, eps=1e-6):
    """backward() of sum(fn(x) * w) against central differences of NumPy's np_fn, along two
    random directions per argument."""
    leaves = [xp.asarray(a, requires_grad=True) for a in arrays]
    out = fn(*leaves)
    w = np.linspace(0.5, 1.5, out.size).reshape(out.shape)
    xp.sum(out * xp.asarray(w)).backward()
    rng = np.random.default_rng(7)
    for i, (a, leaf) in enumerate(zip(arrays, leaves)):
        g = leaf.grad.numpy()
        for _ in range(2):
            v = rng.standard_normal(a.shape)
            at = [list(arrays), list(arrays)]
            at[0][i], at[1][i] = a + eps * v, a - eps * v
            numeric = (np.sum(np_fn(*at[0]) * w) - np.sum(np_fn(*at[1]) * w)) / (2 * eps)
            assert math.isclose(float(np.sum(g * v)), numeric, rel_tol=rtol, abs_tol=atol), (i, np.sum(g * v), numeric)


# ---- elementwise --------------------------------------------------------------------------------

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 27.0, -8.0, 1e-310, 5e-324, 1.7e308, 0.5, 2.5, -3.5])


@pytest.mark.parametrize("how", HOWS)
def test_unary_functions(how):
    for name in ["degrees", "radians", "rad2deg", "deg2rad", "cbrt", "rint", "fix", "sinc", "i0"]:
        for a in [A * 10, (A * 10).astype(np.float32), np.arange(-6, 6, dtype=np.int8).reshape(3, 4),
                  np.arange(-6, 6).reshape(4, 3)]:
            if name == "i0":
                a = a * 8   # past the series' range too
            with np.errstate(all="ignore"):
                want = getattr(np, name)(ref(a, how))
            tol = 1e-14 if want.dtype == np.float64 else 2e-7 if want.dtype == np.float32 else 1e-3
            same(getattr(xp, name)(made(a, how)), want, rtol=tol, atol=0)
    with np.errstate(all="ignore"):
        for name in ["cbrt", "rint", "fix", "sinc", "degrees"]:
            same(getattr(xp, name)(xp.asarray(SPECIAL)), getattr(np, name)(SPECIAL), rtol=1e-15, atol=0)
    big = np.array([0.0, 1.0, 19.99, 20.0, 20.01, 100.0, 700.0, 720.0, -30.0])
    with np.errstate(all="ignore"):
        same(xp.i0(big), np.i0(big), rtol=1e-14, atol=0)
    assert np.signbit(xp.cbrt(xp.asarray([-0.0])).numpy()[0])
    same(xp.cbrt(xp.asarray([27.0, -64.0, 8e-300])), np.cbrt([27.0, -64.0, 8e-300]), rtol=0)   # exact cubes
    with pytest.raises(TypeError):
        xp.i0(xp.asarray([1j]))
    with pytest.raises(TypeError):
        xp.degrees(xp.asarray([1j]))
    with pytest.raises(TypeError):
        xp.fix(xp.asarray([1 + 1j]))


@pytest.mark.parametrize("how", HOWS)
def test_binary_functions(how):
    a, b = A * 3, A[::-1] * 3
    a[0, 1] = b[0, 1] = b[1, 2] = a[2, 3] = np.nan
    for name in ["fmax", "fmin", "heaviside"]:
        same(getattr(xp, name)(made(a, how), made(b, how)), getattr(np, name)(a, b))
        a32 = a.astype(np.float32)
        same(getattr(xp, name)(made(a32, how), 0.5), getattr(np, name)(ref(a32, how), 0.5))
    ints = np.arange(-6, 6).reshape(3, 4)
    same(xp.fmax(made(ints, how), 2), np.fmax(ints, 2))
    same(xp.fmin(made(ints, how), 2.5), np.fmin(ints, 2.5))
    assert float(xp.fmax(1.0, np.nan)) == 1.0
    with pytest.raises(TypeError):
        xp.fmax(xp.asarray([1j]), 1)


def test_ldexp_and_frexp():
    x = np.concatenate([A.ravel() * 1e3, SPECIAL[:5], [1e-310, 5e-324, 1.7e308, 1.0, 0.5, 2.0 ** -1022]])
    k = RNG.integers(-1200, 1200, x.size)
    with np.errstate(all="ignore"):
        same(xp.ldexp(xp.asarray(x), xp.asarray(k)), np.ldexp(x, k), rtol=0, atol=0)
        x32, k32 = x.astype(np.float32), RNG.integers(-200, 200, x.size).astype(np.int32)
        same(xp.ldexp(xp.asarray(x32), xp.asarray(k32)), np.ldexp(x32, k32), rtol=0, atol=0)
    with np.errstate(all="ignore"):
        x32 = x.astype(np.float32)
    for arr in [x, x32, np.arange(-4, 5, dtype=np.int16), A]:
        with np.errstate(all="ignore"):
            want = np.frexp(arr)
        same(xp.frexp(made(arr, "strided")), want, rtol=0, atol=0)
    same(xp.ldexp(xp.asarray([1, 2], dtype=xp.int8), 3), np.ldexp(np.array([1, 2], np.int8), 3))
    same(xp.ldexp(xp.asarray(A.T)[::2], 3), np.ldexp(A.T[::2], 3))
    same(xp.ldexp(1.5, [1, -2]), np.ldexp(1.5, [1, -2]))
    with pytest.raises(TypeError):
        xp.ldexp(xp.asarray([1.0]), 2.0)   # a float exponent: no loop, as NumPy
    with pytest.raises(TypeError):
        xp.frexp(xp.asarray([1j]))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
def test_gcd_lcm(dtype):
    info = np.iinfo(dtype)
    hi = min(info.max, 10 ** 6)
    a = RNG.integers(max(info.min, -hi), hi, 24).astype(dtype)
    b = RNG.integers(max(info.min, -hi), hi, 24).astype(dtype)
    a[:3], b[2:5] = 0, 0
    if info.max >= 6765:   # consecutive Fibonacci numbers: Euclid's worst case
        a[5], b[5] = 6765, 4181
    with np.errstate(all="ignore"):
        same(xp.gcd(xp.asarray(a), xp.asarray(b)), np.gcd(a, b))
        same(xp.lcm(xp.asarray(a[:8] % 50), xp.asarray(b[:8] % 50)), np.lcm(a[:8] % 50, b[:8] % 50))
        same(xp.gcd(xp.asarray(a)[::2], 12), np.gcd(a[::2], 12))


def test_gcd_lcm_bad_input_and_divmod():
    with pytest.raises(TypeError):
        xp.gcd(xp.asarray([1.0, 2.0]), 2)
    with pytest.raises(TypeError):
        xp.lcm(xp.asarray([True]), xp.asarray([False]))
    same(xp.gcd([12, 18], [8, 27]), np.gcd([12, 18], [8, 27]))
    a, b = A * 7, A[::-1] + 0.5
    for x, y in [(a, b), (np.arange(-7, 8), 3), (np.arange(-7, 8), -4), (np.arange(-7, 8).astype(np.float32), -2.5)]:
        same(xp.divmod(made(x, "computed"), y), np.divmod(x, y))
    same(xp.divmod(7, -2), np.divmod(7, -2))
    q, r = np.divmod(xp.asarray([7.5, -7.5]), 2)   # through the ufunc protocol
    same(q, np.array([3.0, -4.0]))
    same(r, np.array([1.5, 0.5]))


def test_elementwise_gradients():
    x = A[:2] * 2 + 0.1
    grad_check(lambda t: xp.cbrt(t), np.cbrt, x)
    grad_check(lambda t: xp.sinc(t), np.sinc, np.concatenate([x.ravel(), [0.0]]))
    grad_check(lambda t: xp.i0(t), np.i0, np.concatenate([x.ravel() * 10, [25.0, -30.0]]))
    grad_check(lambda t: xp.degrees(t) + xp.deg2rad(t), lambda a: np.degrees(a) + np.deg2rad(a), x)
    grad_check(lambda t, u: xp.fmax(t, u) * xp.fmin(t, u), lambda a, b: np.fmax(a, b) * np.fmin(a, b), x, x[::-1] + 0.3)
    grad_check(lambda t: xp.ldexp(t, xp.asarray([[3, -2, 0, 1, 5, -7]])), lambda a: np.ldexp(a, [[3, -2, 0, 1, 5, -7]]), x)
    grad_check(lambda t: xp.frexp(t)[0], lambda a: np.frexp(a)[0], x)
    grad_check(lambda t: xp.heaviside(xp.asarray([-1.0, 0.0, 2.0]), t), lambda a: np.heaviside([-1.0, 0.0, 2.0], a),
               np.array([0.3, 0.7, 0.1]))


def test_numpy_ufuncs_dispatch_to_the_new_names():
    t = xp.asarray([1, 2, 3])
    got = np.rint(t)   # NumPy's rint of integers gives floats
    assert isinstance(got, xp.ndarray) and got.dtype == xp.float64
    assert isinstance(np.fmax(t, 2), xp.ndarray)
    m, e = np.frexp(xp.asarray([8.0]))
    same(m, [0.5])
    same(e, np.array([4], np.int32))
