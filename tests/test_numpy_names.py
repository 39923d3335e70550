"""NumPy's names added for issue 32 (elementwise functions, index tricks, manipulation, sets,
statistics, polynomials, memory, printing, files and dtype), against NumPy: values, dtypes and
shapes, on inputs made several ways (lists, NumPy arrays, lazy graphs, strided views), the
gradients of the differentiable ones, and NumPy's exception types for bad input."""
import io

import numpy as np
import pytest

import lazyarr as xp
from tests.helpers import HOWS, fails, grad_check, made, same

RNG = np.random.default_rng(32)
A = RNG.standard_normal((4, 6))


def ref(a, how):
    """What NumPy is given for the same input (a list loses the array's dtype)."""
    return np.asarray(a).tolist() if how == "list" else a


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
    fails(TypeError, xp.i0, xp.asarray([1j]))
    fails(TypeError, xp.degrees, xp.asarray([1j]))
    fails(TypeError, xp.fix, xp.asarray([1 + 1j]))


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
    fails(TypeError, xp.fmax, xp.asarray([1j]), 1)


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
    fails(TypeError, xp.ldexp, xp.asarray([1.0]), 2.0)   # a float exponent: no loop, as NumPy
    fails(TypeError, xp.frexp, xp.asarray([1j]))


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
    fails(TypeError, xp.gcd, xp.asarray([1.0, 2.0]), 2)
    fails(TypeError, xp.lcm, xp.asarray([True]), xp.asarray([False]))
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


# ---- index tricks and creation --------------------------------------------------------------------

def test_ix_and_indices():
    same(xp.ix_([1, 0, 1], [True, False, True]), np.ix_([1, 0, 1], [True, False, True]))
    same(xp.ix_(xp.arange(3) * 2, np.array([4, 1])), np.ix_(np.arange(3) * 2, np.array([4, 1])))
    same(xp.ix_([]), np.ix_([]))
    m = xp.asarray(np.arange(20).reshape(4, 5))
    same(m[xp.ix_([0, 3], [1, 2, 4])], np.arange(20).reshape(4, 5)[np.ix_([0, 3], [1, 2, 4])])
    fails(ValueError, xp.ix_, [[1, 2]])
    for dims in [(2, 3), (4,), (2, 1, 3), ()]:
        same(xp.indices(dims), np.indices(dims))
        same(xp.indices(dims, sparse=True), np.indices(dims, sparse=True))
    same(xp.indices((2, 3), dtype=xp.float32), np.indices((2, 3), dtype=np.float32))
    same(xp.fromfunction(lambda i, j: i * 10 + j, (2, 3)), np.fromfunction(lambda i, j: i * 10 + j, (2, 3)))
    same(xp.fromfunction(lambda i, j: i == j, (3, 3), dtype=int), np.fromfunction(lambda i, j: i == j, (3, 3), dtype=int))
    same(xp.identity(3), np.identity(3))
    same(xp.identity(2, dtype=xp.int32), np.identity(2, dtype=np.int32))


@pytest.mark.parametrize("how", ["list", "asarray", "computed", "strided"])
def test_unravel_and_ravel_multi_index(how):
    flat = np.array([5, 11, 0, 7, 3, 2])
    for order in ["C", "F"]:
        same(xp.unravel_index(made(flat, how), (3, 4), order=order), np.unravel_index(flat, (3, 4), order=order))
        same(xp.unravel_index(7, (2, 3, 2), order=order), np.unravel_index(7, (2, 3, 2), order=order))
    coords = (np.array([1, 2, 0, 2]), np.array([3, 0, 1, 1]))
    same(xp.ravel_multi_index((made(coords[0], how), made(coords[1], how)), (3, 4)),
         np.ravel_multi_index(coords, (3, 4)))
    wild = (np.array([1, 5, -1]), np.array([-3, 0, 9]))
    for mode in ["wrap", "clip", ("clip", "wrap")]:
        for order in ["C", "F"]:
            same(xp.ravel_multi_index((made(wild[0], how), made(wild[1], how)), (3, 4), mode=mode, order=order),
                 np.ravel_multi_index(wild, (3, 4), mode=mode, order=order))
    with pytest.raises(ValueError, match="out of bounds"):
        xp.unravel_index(made(np.array([3, 12]), how), (3, 4))
    fails(ValueError, xp.unravel_index, made(np.array([-1]), how), (3, 4))
    with pytest.raises(ValueError, match="invalid entry"):
        xp.ravel_multi_index((made(np.array([3]), how), made(np.array([1]), how)), (3, 4))
    fails(TypeError, xp.ravel_multi_index, ([1.0], [1]), (3, 4))
    fails(TypeError, xp.unravel_index, [1.5], (3, 4))
    fails(ValueError, xp.ravel_multi_index, ([1],), (3, 4))


def test_mgrid_and_ogrid():
    for key in [np.s_[0:5], np.s_[0:1:3j], np.s_[0.5:3], np.s_[3:0:-1], np.s_[0:5:2], np.s_[-1:1:1j]]:
        same(xp.mgrid[key], np.mgrid[key], rtol=1e-15)
        same(xp.ogrid[key], np.ogrid[key], rtol=1e-15)
    for key in [np.s_[0:2, 0:3], np.s_[0:2, 0:3.0], np.s_[0:2:2j, 0:3], np.s_[-1:1:5j, 0:10:3], np.s_[0:1:3j, 1:2:2j, 0:2]]:
        same(xp.mgrid[key], np.mgrid[key], rtol=1e-15)
        same(xp.ogrid[key], np.ogrid[key], rtol=1e-15)
    with pytest.raises(TypeError):
        xp.mgrid[3]


def test_diagonal_and_triangle_indices():
    same(xp.diag_indices(3), np.diag_indices(3))
    same(xp.diag_indices(2, 3), np.diag_indices(2, 3))
    same(xp.diag_indices_from(xp.ones((3, 3))), np.diag_indices_from(np.ones((3, 3))))
    fails(ValueError, xp.diag_indices_from, xp.ones((3, 4)))
    for n, k, m in [(3, 0, None), (3, 1, 4), (4, -1, None), (4, -5, None), (3, 5, 2), (0, 0, None), (4, 2, 3)]:
        same(xp.tril_indices(n, k, m), np.tril_indices(n, k, m))
        same(xp.triu_indices(n, k, m), np.triu_indices(n, k, m))
    a = np.arange(12.0).reshape(3, 4)
    same(xp.tril_indices_from(xp.asarray(a), 1), np.tril_indices_from(a, 1))
    same(xp.triu_indices_from(xp.asarray(a), -1), np.triu_indices_from(a, -1))
    same(xp.asarray(a)[xp.triu_indices(3, 1, 4)], a[np.triu_indices(3, 1, 4)])


# ---- manipulation ------------------------------------------------------------------------------------

@pytest.mark.parametrize("how", HOWS)
def test_rotations_and_flips(how):
    cube = np.arange(24.0).reshape(2, 3, 4)
    for k in range(-1, 5):
        for axes in [(0, 1), (1, 2), (2, 0), (-1, 0)]:
            same(xp.rot90(made(cube, how), k, axes), np.rot90(cube, k, axes))
    same(xp.flipud(made(A, how)), np.flipud(A))
    same(xp.fliplr(made(A, how)), np.fliplr(A))
    for bad in [(0,), (0, 0), (0, 3), (1, -2)]:
        fails(ValueError, xp.rot90, xp.asarray(cube), 1, bad)
    fails(ValueError, xp.fliplr, xp.asarray([1, 2]))
    fails(ValueError, xp.flipud, xp.asarray(1.0))
    grad_check(lambda t: xp.rot90(t) * xp.asarray(np.arange(24.0).reshape(6, 4)),
               lambda a: np.rot90(a) * np.arange(24.0).reshape(6, 4), A)


@pytest.mark.parametrize("how", HOWS)
def test_insert_append_delete(how):
    b = np.arange(12).reshape(3, 4)
    cases = [(1, 9, None), (1, [7, 8, 9], 1), ([1], [[7], [8], [9]], 1), ([0, 2, 2, -1], 5.7, 1),
             (slice(0, 4, 2), [1, 2], 1), (4, [1, 2, 3], 1), (1, [1, 2, 3, 4], 0), ([], 3, 0), (-1, 3, None),
             ([3, 1], [10, 20], None), (np.array([2, 0]), np.array([[1.5], [2.5], [3.5]]), 1)]
    for obj, values, axis in cases:
        same(xp.insert(made(b, how), obj, values, axis), np.insert(b, obj, values, axis))
    same(xp.insert(made(b * 0.5, how), 2, xp.arange(4) * 10.0, 0), np.insert(b * 0.5, 2, np.arange(4) * 10.0, 0))
    for obj, axis in [(1, None), ([0, 2], 1), (slice(0, 3, 2), 0), ([True, False, True, False], 1), (-1, 0), ([], 1)]:
        same(xp.delete(made(b, how), obj, axis), np.delete(b, obj, axis))
    same(xp.delete(made(b, how), xp.asarray([2, 0]), 1), np.delete(b, [2, 0], 1))
    same(xp.append(made(b, how), [[1, 2, 3, 4]], 0), np.append(b, [[1, 2, 3, 4]], 0))
    same(xp.append(made(b, how), [1.5]), np.append(b, [1.5]))
    fails(IndexError, xp.insert, xp.asarray(b), 5, 1, axis=1)
    fails(IndexError, xp.delete, xp.asarray(b), [4], axis=1)
    fails(ValueError, xp.delete, xp.asarray(b), [True, False], axis=1)
    fails(TypeError, xp.insert, xp.asarray(b), 1.0, 9)
    fails(ValueError, xp.delete, xp.asarray(b), 0, axis=2)   # NumPy's AxisError
    fails(ValueError, xp.append, xp.asarray(b), [1, 2], axis=0)


def test_insert_and_delete_gradients():
    grad_check(lambda t, v: xp.insert(t, [1, 3, 3], v, axis=1), lambda a, v: np.insert(a, [1, 3, 3], v, axis=1),
               A[:3, :4], np.array([0.5, -1.0, 2.0]))
    grad_check(lambda t: xp.delete(t, [0, 2], axis=1), lambda a: np.delete(a, [0, 2], axis=1), A)


@pytest.mark.parametrize("how", HOWS)
def test_extract_compress_choose(how):
    b = np.arange(12).reshape(3, 4) * 1.5
    same(xp.extract(made(b % 2 == 0, how), made(b, how)), np.extract(b % 2 == 0, b))
    same(xp.compress([False, True, True], made(b, how), 0), np.compress([False, True, True], b, 0))
    same(xp.compress(made(np.array([1, 0, 1]), how), made(b, how), axis=1), np.compress([1, 0, 1], b, axis=1))
    same(xp.compress([1, 0, 1, 1, 0], made(b, how)), np.compress([1, 0, 1, 1, 0], b))
    fails(IndexError, xp.compress, [0, 0, 0, 1], xp.asarray(b), axis=0)
    choices = [[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23], [30.5, 31, 32, 33]]
    for idx, mode in [([2, 3, 1, 0], "raise"), ([2, 4, 1, -1], "wrap"), ([2, 4, 1, -1], "clip")]:
        same(xp.choose(made(np.array(idx), how), choices, mode=mode), np.choose(idx, choices, mode=mode))
    same(xp.choose(made(np.array([[0, 1], [1, 0]]), how), [xp.asarray(3), xp.asarray([5, 6])]),
         np.choose([[0, 1], [1, 0]], [3, [5, 6]]))
    many = [np.arange(4) * i for i in range(20)]
    same(xp.choose(xp.asarray([19, 3, 7, 0]), many), np.choose([19, 3, 7, 0], many))
    with pytest.raises(ValueError, match="invalid entry"):
        xp.choose(made(np.array([0, 4, 1, 2]), how), choices)
    fails(TypeError, xp.choose, xp.asarray([0.5]), choices)
    grad_check(lambda c0, c1: xp.choose(xp.asarray([0, 1, 1, 0]), [c0, c1]),
               lambda c0, c1: np.choose([0, 1, 1, 0], [c0, c1]), A[0, :4], A[1, :4])


@pytest.mark.parametrize("how", HOWS)
def test_select_and_piecewise(how):
    x = np.arange(10)
    xl = made(x, how)
    conds = [xl < 3, xl > 5] if how != "list" else [x < 3, x > 5]
    same(xp.select(conds, [xl, xl ** 2 if how != "list" else x ** 2], 42), np.select([x < 3, x > 5], [x, x ** 2], 42))
    same(xp.select([x < 3, x > 5], [x.astype(np.float32), 1], 0), np.select([x < 3, x > 5], [x.astype(np.float32), 1], 0))
    same(xp.select([x < 3], [x.astype(np.float32)], 0.5), np.select([x < 3], [x.astype(np.float32)], 0.5))
    fails(ValueError, xp.select, [x < 3], [x, x])
    fails(ValueError, xp.select, [], [])
    fails(TypeError, xp.select, [x], [x])
    f = np.linspace(-2, 2, 9)
    fl = made(f, how)
    same(xp.piecewise(fl, [f < 0, f >= 0], [lambda v: -v, lambda v: v ** 2]),
         np.piecewise(f, [f < 0, f >= 0], [lambda v: -v, lambda v: v ** 2]))
    same(xp.piecewise(fl, [f < 0], [lambda v: -v, 7]), np.piecewise(f, [f < 0], [lambda v: -v, 7]))
    same(xp.piecewise(made(x, how), [x < 3, x > 7], [1.5, lambda v: v * 2]),
         np.piecewise(x, [x < 3, x > 7], [1.5, lambda v: v * 2]))
    same(xp.piecewise(fl, f > 0, [1, 0]), np.piecewise(f, f > 0, [1, 0]))
    fails(ValueError, xp.piecewise, fl, [f < 0], [1, 2, 3])
    grad_check(lambda t: xp.piecewise(t, [t < 0], [lambda v: v * v, lambda v: xp.sin(v)]),
               lambda a: np.piecewise(a, [a < 0], [lambda v: v * v, np.sin]), A[0])
    grad_check(lambda t: xp.select([t < 0, t > 1], [t * 3, t * t], 0.0),
               lambda a: np.select([a < 0, a > 1], [a * 3, a * a], 0.0), A[1] * 2)


# ---- sets and sorting ----------------------------------------------------------------------------------

@pytest.mark.parametrize("how", HOWS)
def test_set_functions(how):
    a, b = np.array([5, 1, 3, 3, 7, 1, 9, 0]), np.array([[3, 1], [4, 8.0]])
    for name in ["intersect1d", "union1d", "setdiff1d", "setxor1d"]:
        same(getattr(xp, name)(made(a, how), made(b, how)), getattr(np, name)(a, b))
    same(xp.intersect1d(made(a, how), b, return_indices=True), np.intersect1d(a, b, return_indices=True))
    u1, u2 = np.array([5, 2, 9, 1]), np.array([9, 3, 5])
    same(xp.intersect1d(made(u1, how), u2, assume_unique=True, return_indices=True),
         np.intersect1d(u1, u2, assume_unique=True, return_indices=True))
    same(xp.setdiff1d(made(u1, how), u2, assume_unique=True), np.setdiff1d(u1, u2, assume_unique=True))
    same(xp.setxor1d(made(u1, how), u2, assume_unique=True), np.setxor1d(u1, u2, assume_unique=True))
    same(xp.in1d(made(b, how), a), np.isin(b, a).ravel())
    same(xp.in1d(made(b, how), a, invert=True), np.isin(b, a, invert=True).ravel())
    n1, n2 = np.array([1.0, np.nan, 2, np.nan, -0.0]), np.array([np.nan, 2.0, 0.0])
    for name in ["intersect1d", "union1d", "setdiff1d", "setxor1d"]:
        same(getattr(xp, name)(n1, n2), getattr(np, name)(n1, n2))
    same(xp.intersect1d([], [1]), np.intersect1d([], [1]))
    same(xp.setxor1d(np.zeros(0), np.zeros(0)), np.setxor1d(np.zeros(0), np.zeros(0)))


@pytest.mark.parametrize("how", HOWS)
def test_lexsort(how):
    k1, k2 = np.array([1, 5, 1, 4, 3, 4, 4]), np.array([9, 4, 0, 4, 0, 2, 1])
    same(xp.lexsort((made(k1, how), made(k2, how))), np.lexsort((k1, k2)))
    same(xp.lexsort(xp.asarray(np.stack([k1, k2]))), np.lexsort(np.stack([k1, k2])))
    keys = RNG.integers(0, 3, (3, 4, 5))
    for axis in [0, 1, -1]:
        same(xp.lexsort([made(k, how) for k in keys], axis=axis), np.lexsort(list(keys), axis=axis))
    floats = [np.array([1.0, np.nan, 0.0, 1.0]), np.array([True, False, True, True])]
    same(xp.lexsort(floats), np.lexsort(floats))
    fails(TypeError, xp.lexsort, [])
    fails(ValueError, xp.lexsort, [[1, 2], [1, 2, 3]])
    assert xp.lexsort([xp.asarray(k1) * 2]).schedule()   # lazy: nothing computed yet


# ---- statistics and calculus -----------------------------------------------------------------------

COV_WEIGHTS = [{}, {"bias": True}, {"ddof": 3}, {"fweights": [1, 2, 0, 3, 1, 1, 2]},
               {"aweights": [0.5, 1.0, 1.5, 0.2, 2.0, 1.0, 0.7]},
               {"fweights": [1, 2, 0, 3, 1, 1, 2], "aweights": [0.5, 1.0, 1.5, 0.2, 2.0, 1.0, 0.7]},
               {"fweights": np.array([1, 2, 1, 3, 1, 1, 2.0]), "aweights": np.ones(7), "ddof": 0}]


@pytest.mark.parametrize("how", HOWS)
def test_cov_and_corrcoef(how):
    a, b = RNG.standard_normal((3, 7)), RNG.standard_normal((2, 7))
    for kw in COV_WEIGHTS:
        same(xp.cov(made(a, how), **kw), np.cov(a, **kw))
        same(xp.cov(made(a, how), made(b, how), **kw), np.cov(a, b, **kw))
        same(xp.cov(made(a.T, how), rowvar=False, **kw), np.cov(a.T, rowvar=False, **kw))
    same(xp.cov(made(a[0], how)), np.cov(a[0]))   # one variable: 0-d
    same(xp.cov(made(a[0], how), made(a[1], how)), np.cov(a[0], a[1]))
    same(xp.cov(made(a.astype(np.float32), how)), np.cov(ref(a.astype(np.float32), how)))
    same(xp.cov(made(a, how), dtype=xp.float32), np.cov(a, dtype=np.float32), rtol=1e-6)
    same(xp.cov(xp.arange(12).reshape(3, 4) * 2), np.cov(np.arange(12).reshape(3, 4) * 2))
    z = a + 1j * RNG.standard_normal((3, 7))
    same(xp.cov(xp.asarray(z)), np.cov(z))
    same(xp.corrcoef(xp.asarray(z)), np.corrcoef(z))
    same(xp.corrcoef(made(a, how)), np.corrcoef(a))
    same(xp.corrcoef(made(a, how), made(b, how)), np.corrcoef(a, b))
    same(xp.corrcoef(made(a.T, how), rowvar=False), np.corrcoef(a.T, rowvar=False))
    same(xp.corrcoef(made(a[0], how)), np.corrcoef(a[0]))
    fails(ValueError, xp.cov, xp.ones((2, 2, 2)))
    fails(TypeError, xp.cov, xp.asarray(a), fweights=[1.5, 1, 1, 1, 1, 1, 1])
    fails(ValueError, xp.cov, xp.asarray(a), aweights=[-1.0, 1, 1, 1, 1, 1, 1])
    with pytest.raises(RuntimeError):   # NumPy's type for weights of the wrong length (and a ValueError)
        xp.cov(xp.asarray(a), fweights=[1, 2])
    fails(ValueError, xp.cov, xp.asarray(a), aweights=np.ones((7, 1)))
    with pytest.warns(RuntimeWarning):
        xp.cov(xp.asarray([[1.0], [2.0]]))


def test_cov_gradient():
    a = RNG.standard_normal((3, 5))
    grad_check(lambda t: xp.cov(t), lambda x: np.cov(x), a)
    grad_check(lambda t: xp.corrcoef(t), lambda x: np.corrcoef(x), a)
    grad_check(lambda t: xp.cov(t, aweights=xp.asarray([1.0, 2, 1, 3, 1])),
               lambda x: np.cov(x, aweights=[1.0, 2, 1, 3, 1]), a)


@pytest.mark.parametrize("how", HOWS)
def test_gradient(how):
    f = RNG.standard_normal((5, 6))
    xc, yc = np.cumsum(RNG.uniform(0.5, 2, 6)), np.cumsum(RNG.uniform(0.5, 2, 5))
    for edge_order in [1, 2]:
        for args, kw in [((), {}), ((0.5,), {}), ((yc, xc), {}), ((2.0, xc), {}), ((xc,), {"axis": 1}),
                         ((), {"axis": -2}), ((), {"axis": (1, 0)}), ((np.array(3.0),), {"axis": 0})]:
            same(xp.gradient(made(f, how), *args, edge_order=edge_order, **kw),
                 np.gradient(f, *args, edge_order=edge_order, **kw))
        ints = np.arange(6) ** 2
        same(xp.gradient(made(ints, how), edge_order=edge_order), np.gradient(ints, edge_order=edge_order))
        f32 = f.astype(np.float32)
        same(xp.gradient(made(f32, how), np.arange(6), axis=1, edge_order=edge_order),
             np.gradient(ref(f32, how), np.arange(6), axis=1, edge_order=edge_order), rtol=1e-5)
    same(xp.gradient(made(f[:, :2], how), axis=1), np.gradient(f[:, :2], axis=1))
    fails(ValueError, xp.gradient, xp.asarray(f[:, :2]), axis=1, edge_order=2)
    fails(ValueError, xp.gradient, xp.asarray(f), edge_order=3)
    fails(TypeError, xp.gradient, xp.asarray(f), 1.0, 2.0, 3.0)
    fails(ValueError, xp.gradient, xp.asarray(f), xc[:3], axis=1)
    fails(ValueError, xp.gradient, xp.asarray(f), axis=2)   # NumPy's AxisError
    grad_check(lambda t: xp.gradient(t, xp.asarray(xc), axis=1, edge_order=2),
               lambda x: np.gradient(x, xc, axis=1, edge_order=2), f)


@pytest.mark.parametrize("how", HOWS)
def test_trapezoid(how):
    y, xs = RNG.standard_normal((4, 5)), np.cumsum(RNG.uniform(0.1, 1, 5))
    same(xp.trapezoid(made(y, how)), np.trapezoid(y))
    same(xp.trapezoid(made(y, how), made(xs, how)), np.trapezoid(y, xs))
    same(xp.trapezoid(made(y, how), dx=0.3, axis=0), np.trapezoid(y, dx=0.3, axis=0))
    same(xp.trapezoid(made(y, how), np.tile(xs, (4, 1))), np.trapezoid(y, np.tile(xs, (4, 1))))
    same(xp.trapezoid(made(np.arange(5), how)), np.trapezoid(np.arange(5)))
    same(xp.trapezoid(made(np.arange(5), how), dx=2), np.trapezoid(np.arange(5), dx=2))
    same(xp.trapz(made(y, how), axis=0), np.trapezoid(y, axis=0))
    y32 = y.astype(np.float32)
    same(xp.trapezoid(made(y32, how)), np.trapezoid(ref(y32, how)), rtol=1e-6)
    grad_check(lambda t, u: xp.trapezoid(t, u), lambda a, b: np.trapezoid(a, b), y, xs)


def test_histogram2d_and_histogramdd():
    s = RNG.standard_normal((60, 3))
    s[3, 1] = np.nan   # in no bin
    for kw in [{"bins": 4, "range": [(-2, 2), (-1, 1), (-3, 3)]}, {"bins": [2, 3, 4], "range": [None, (-1, 1), (-3, 3)]},
               {"bins": [np.array([-1, 0, 0.5, 2]), 3, 2], "range": [None, (0, 1), (-1, 1)], "density": True}]:
        for sample in [s, xp.asarray(s), xp.asarray(s.T).T, [xp.asarray(c) for c in s.T]]:
            h, e = xp.histogramdd(sample, **kw)
            wh, we = np.histogramdd(s, **kw)
            same(h, wh)
            same(e, tuple(we))
    finite = s[np.isfinite(s).all(1)]
    weights = np.arange(len(finite)) * 0.5
    h, e = xp.histogramdd(xp.asarray(finite) * 1.0, bins=3, weights=weights)
    wh, we = np.histogramdd(finite, bins=3, weights=weights)
    same(h, wh)
    same(e, tuple(we))
    x, y = RNG.standard_normal(100), RNG.standard_normal(100)
    for kw in [{}, {"bins": 5}, {"bins": [3, 4]}, {"bins": np.linspace(-2, 2, 5)}, {"bins": [np.linspace(-2, 2, 5), 3]},
               {"bins": 4, "density": True}, {"bins": 3, "weights": x ** 2}, {"bins": 6, "range": [[-1, 1], [0, 2]]}]:
        same(xp.histogram2d(xp.asarray(x), xp.asarray(y)[::1], **kw), np.histogram2d(x, y, **kw))
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    same(xp.histogram2d(xp.asarray(x32), xp.asarray(y32)), np.histogram2d(x32, y32))
    same(xp.histogram2d(xp.arange(10), xp.arange(10) % 3), np.histogram2d(np.arange(10), np.arange(10) % 3))
    fails(ValueError, xp.histogramdd, s, bins=[2, 3])
    fails(ValueError, xp.histogramdd, s, bins=0)
    fails(ValueError, xp.histogramdd, s, bins=[np.array([1.0, 0.0]), 2, 2])
    fails(ValueError, xp.histogramdd, s, bins=2)   # the NaN column's autodetected range
    fails(ValueError, xp.histogram2d, xp.asarray(x), xp.asarray(y[:5]))


def test_histogram_sorted_counting_and_weights_gradient(monkeypatch):
    from lazyarr import numpy_statistics
    monkeypatch.setattr(numpy_statistics, "DIRECT_COUNT", 10)   # the sort-and-search path
    x, y = RNG.standard_normal(80), RNG.standard_normal(80)
    same(xp.histogram2d(xp.asarray(x), xp.asarray(y), bins=3), np.histogram2d(x, y, bins=3))
    same(xp.histogram2d(xp.asarray(x), xp.asarray(y), bins=3, weights=x ** 2), np.histogram2d(x, y, bins=3, weights=x ** 2))
    grad_check(lambda w: xp.histogram2d(xp.asarray(x), xp.asarray(y), bins=3, weights=w)[0],
               lambda w: np.histogram2d(x, y, bins=3, weights=w)[0], np.abs(y))


# ---- polynomials ------------------------------------------------------------------------------------------

def _sorted(a):
    a = np.asarray(a.numpy() if isinstance(a, xp.ndarray) else a)
    return np.sort_complex(a) if np.iscomplexobj(a) else np.sort(a)


@pytest.mark.parametrize("how", HOWS)
def test_polynomial_functions(how):
    p, x = np.array([3, 0, -2, 1]), np.linspace(-2, 2, 7)
    same(xp.polyval(made(p, how), made(x, how)), np.polyval(p, x))
    p32, x32 = p.astype(np.float32), x.astype(np.float32)
    same(xp.polyval(made(p32, how), made(x32, how)), np.polyval(ref(p32, how), ref(x32, how)), rtol=1e-6)
    same(xp.polyval(made(p, how), 3), np.polyval(p, 3))
    same(xp.polyval(made(p, how), xp.arange(4)), np.polyval(p, np.arange(4)))
    for m in range(5):
        same(xp.polyder(made(p, how), m), np.polyder(p, m))
        same(xp.polyint(made(p, how), m), np.polyint(p, m))
        same(xp.polyint(made(p, how), m, k=[1, 2, 3, 4][:max(m, 1)]), np.polyint(p, m, k=[1, 2, 3, 4][:max(m, 1)]))
    same(xp.polyder([5]), np.polyder([5]))
    same(xp.polyint([1, 2], 3, 5), np.polyint([1, 2], 3, 5))
    same(xp.polyadd(made(np.array([0, 1]), how), [1]), np.polyadd([0, 1], [1]))
    same(xp.polysub(made(np.array([1, 2, 3]), how), [5, 1.5]), np.polysub([1, 2, 3], [5, 1.5]))
    same(xp.polymul(made(np.array([0, 1, 2]), how), [1, 1]), np.polymul([0, 1, 2], [1, 1]))   # leading zeros trimmed
    same(xp.polymul([1, 2], made(np.array([3.5, 1, 0]), how)), np.polymul([1, 2], [3.5, 1, 0]))
    for u, v in [([1, 3, 2], [1, 1]), ([1, 2, 3, 4], [2, 1]), ([1, 2], [1, 2, 3])]:
        same(xp.polydiv(made(np.array(u), how), v), np.polydiv(u, v))
    same(xp.vander(made(np.array([1, 2, 3]), how)), np.vander([1, 2, 3]))
    same(xp.vander(made(np.array([1.5, 2, -1]), how), 4, increasing=True), np.vander([1.5, 2, -1], 4, increasing=True))
    fails(ValueError, xp.polyder, p, -1)
    fails(ValueError, xp.polyint, p, 3, k=[1, 2])
    grad_check(lambda c, t: xp.polyval(c, t), np.polyval, p * 1.0, x)


@pytest.mark.parametrize("how", HOWS)
def test_polyfit_and_roots(how):
    x = np.linspace(0, 3, 9)
    y = 2 * x ** 2 - x + 0.5 + np.sin(x) * 0.1
    same(xp.polyfit(made(x, how), made(y, how), 2), np.polyfit(x, y, 2), rtol=1e-10)
    same(xp.polyfit(made(x, how), made(y, how), 3, w=np.linspace(1, 2, 9)), np.polyfit(x, y, 3, w=np.linspace(1, 2, 9)),
         rtol=1e-9)
    got, want = xp.polyfit(made(x, how), y, 2, full=True), np.polyfit(x, y, 2, full=True)
    same((got[0], got[1], got[3]), (want[0], want[1], want[3]), rtol=1e-9, atol=1e-20)
    assert got[2] == want[2] and type(got[2]) is type(want[2]) and got[4] == want[4]   # (the rank: NumPy's int32)
    same(xp.polyfit(made(x, how), y, 2, cov=True), np.polyfit(x, y, 2, cov=True), rtol=1e-8)
    same(xp.polyfit(made(x, how), y, 2, cov="unscaled"), np.polyfit(x, y, 2, cov="unscaled"), rtol=1e-8)
    two = np.stack([y, y * 2 + 1], 1)
    same(xp.polyfit(x, made(two, how), 2), np.polyfit(x, two, 2), rtol=1e-10)
    same(xp.polyfit(x, made(two, how), 2, cov=True), np.polyfit(x, two, 2, cov=True), rtol=1e-8)
    with pytest.warns(np.exceptions.RankWarning):
        xp.polyfit([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 4)
    for bad in [dict(x=[[1.0, 2.0]], y=[1.0, 2.0], deg=1), dict(x=[], y=[], deg=1), dict(x=[1.0, 2.0], y=[1.0], deg=1)]:
        fails(TypeError, xp.polyfit, **bad)
    fails(ValueError, xp.polyfit, [1.0, 2.0], [1.0, 2.0], -1)
    grad_check(lambda t: xp.polyfit(xp.asarray(x), t, 2), lambda v: np.polyfit(x, v, 2), y)
    for r in [[1, -3, 2], [1, 0, 1], [0, 0], [0, 1, 0, 0], [1, 2], [2], [1j, 1], [0, 2, -6, 4, 0], [1, -6, 11, -6]]:
        got, want = xp.roots(made(np.array(r), how) if how != "list" else r), np.roots(r)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(_sorted(got), _sorted(want), atol=1e-12)
    fails(ValueError, xp.roots, np.ones((2, 2)))
    for zeros in [[1, 2], [1j, -1j], [1 + 1j, 2], np.array([[1.0, 2], [3, 4]]), np.array([1, 2], np.float32)]:
        same(xp.poly(zeros), np.poly(zeros), rtol=1e-6)
    assert xp.poly([]) == np.poly([]) == 1.0


def test_poly1d():
    P, Q = xp.poly1d([1, 2, 3]), np.poly1d([1, 2, 3])

    def same_poly(got, want, rtol=1e-12):
        assert isinstance(got, xp.poly1d)
        same(got.coeffs, want.coeffs, rtol=rtol)

    for got, want in [(P * 2, Q * 2), (2 * P, 2 * Q), (P + [1], Q + [1]), (P - P, Q - Q), (1 - P, 1 - Q), (-P, -Q),
                      (P ** 2, Q ** 2), (P * P, Q * Q), (P.deriv(), Q.deriv()), (P.deriv(2), Q.deriv(2)),
                      (P.integ(k=1), Q.integ(k=1)), (P / 2, Q / 2), (P(xp.poly1d([1, 0, 1])), Q(np.poly1d([1, 0, 1]))),
                      (xp.poly1d([1, -3, 2], r=True), np.poly1d([1, -3, 2], r=True)),
                      (xp.poly1d([0, 0, 1.5]), np.poly1d([0, 0, 1.5])), (xp.polyadd(P, [1]), np.polyadd(Q, [1]))]:
        same_poly(got, want)
    for got, want in zip(P / xp.poly1d([1, 1]), Q / np.poly1d([1, 1])):
        same_poly(got, want)
    assert (P[0], P[2], P[5], P.order, len(P)) == (Q[0], Q[2], Q[5], Q.order, len(Q))
    same(P.c, Q.c)
    same(P.coeffs, Q.coeffs)
    same(P(2), Q(2))
    same(P(xp.arange(3) * 0.5), Q(np.arange(3) * 0.5))
    same(P.roots, Q.roots)
    assert repr(P) == repr(Q) == "poly1d([1, 2, 3])"
    assert repr(xp.poly1d([0, 1.5, 2])) == repr(np.poly1d([0, 1.5, 2]))
    assert str(P) == str(Q) and str(xp.poly1d([1, 2], variable="z")) == str(np.poly1d([1, 2], variable="z"))
    assert P == xp.poly1d([1, 2, 3]) and P != xp.poly1d([1, 2]) and P != xp.poly1d([1, 2, 4])
    np.testing.assert_array_equal(np.asarray(P), [1, 2, 3])
    with pytest.raises(ValueError):
        P ** -1
    fails(ValueError, xp.poly1d, [[1, 2]])


# ---- dtype, kinds of values, memory ----------------------------------------------------------------------

def test_dtype():
    assert xp.dtype(xp.float16).itemsize == 2
    assert xp.dtype("float32") == xp.float32 and xp.dtype("float32") is xp.float32
    for given, want in [("f8", xp.float64), ("<i4", xp.int32), (np.int16, xp.int16), (np.dtype("uint8"), xp.uint8),
                        (float, xp.float64), (int, xp.int64), (complex, xp.complex128), (bool, xp.bool), (None, xp.float64),
                        ("c8", xp.complex64), ("e", xp.float16), (">f4", xp.float32), (xp.int8, xp.int8)]:
        assert xp.dtype(given) is want, given
    assert isinstance(xp.float32, xp.dtype) and not isinstance("float32", xp.dtype)
    assert xp.dtype("i8").kind == np.dtype("i8").kind and xp.zeros(2, dtype=xp.dtype("f4")).dtype == xp.float32
    for bad in ["U5", "S3", "f4,i4", "datetime64[s]", object]:
        with pytest.raises(TypeError, match="not supported"):
            xp.dtype(bad)
    with pytest.raises(TypeError, match="not understood"):
        xp.dtype("no such type")
    fails(TypeError, xp.dtype, xp.ones(2))


def test_complex_objects():
    assert xp.iscomplexobj([1j]) and xp.iscomplexobj(xp.asarray([1 + 0j])) and xp.iscomplexobj(1j)
    assert not xp.iscomplexobj(xp.arange(3) * 2.0) and xp.isrealobj(A) and not xp.isrealobj(xp.asarray([1j]))
    assert xp.iscomplexobj(xp.complex64) and not xp.iscomplexobj(np.float32)
    for a in [np.array([1 + 1e-15j, 2]), np.array([1 + 1e-6j], np.complex64), np.array([1 + 1e-3j]), np.array([1.0, 2.0]),
              np.array([1 + np.nan * 1j])]:
        same(xp.real_if_close(xp.asarray(a) * 1), np.real_if_close(a))
    same(xp.real_if_close(xp.asarray([1 + 1e-3j]), tol=1e-2), np.real_if_close(np.array([1 + 1e-3j]), tol=1e-2))


def test_shares_memory():
    a, na = xp.asarray(np.arange(12.0).reshape(3, 4)), np.arange(12.0).reshape(3, 4)
    pairs = [(lambda x: x, lambda x: x[::2]), (lambda x: x[:, ::2], lambda x: x[:, 1::2]), (lambda x: x.T, lambda x: x[1]),
             (lambda x: x[0], lambda x: x[1]), (lambda x: x[::-1], lambda x: x[2:, 1:]),
             (lambda x: x.reshape(4, 3), lambda x: x[1:2, 3]), (lambda x: x[0, :2], lambda x: x[0, 2:]),
             (lambda x: x[:, 1], lambda x: x.T[2]), (lambda x: x[1:, ::3], lambda x: x[::2, 3])]
    for f, g in pairs:
        assert xp.shares_memory(f(a), g(a)) == np.shares_memory(f(na), g(na))
        assert xp.may_share_memory(f(a), g(a)) == np.may_share_memory(f(na), g(na))
    z, nz = xp.asarray(np.arange(4) + 1j), np.arange(4) + 1j
    assert xp.shares_memory(z.real, z.imag) == np.shares_memory(nz.real, nz.imag) is False
    assert xp.may_share_memory(z.real, z.imag) == np.may_share_memory(nz.real, nz.imag) is True
    assert xp.shares_memory(z, z.imag) and not xp.shares_memory(z.real[1:], z.imag[:1])
    assert xp.shares_memory(xp.broadcast_to(a[0], (3, 4)), a[0, 1:2])
    for independent in [a.copy(), a + 0, xp.asarray(na), xp.asarray(na).T, na]:
        assert not xp.shares_memory(a, independent) and not xp.may_share_memory(a, independent)
    assert xp.shares_memory(a, a.numpy()) is a.device.host_memory   # the buffer NumPy reads, or a copy
    assert xp.shares_memory(na, na[1:]) and not xp.shares_memory(na, na.copy())
    assert not xp.shares_memory(xp.arange(3) * 2, xp.arange(3))   # nothing computed yet: no memory to share
    assert xp.shares_memory(a[::2], a[2:], max_work=0) is True and xp.shares_memory(a[::2], a[1:2]) is False


# ---- applying functions -----------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["asarray", "computed", "transposed"])
def test_apply_along_and_over_axes(how):
    m = np.arange(12.0).reshape(3, 4)
    for axis in [0, 1, -1]:
        same(xp.apply_along_axis(lambda r: xp.stack([xp.sum(r), xp.max(r)]), axis, made(m, how)),
             np.apply_along_axis(lambda r: np.stack([r.sum(), r.max()]), axis, m))
        same(xp.apply_along_axis(lambda r: xp.outer(r, r), axis, made(m, how)), np.apply_along_axis(lambda r: np.outer(r, r), axis, m))
        same(xp.apply_along_axis(xp.sum, axis, made(m, how)), np.apply_along_axis(np.sum, axis, m))
    same(xp.apply_along_axis(lambda r, k: r[k:], 1, made(m, how), 2), np.apply_along_axis(lambda r, k: r[k:], 1, m, 2))
    c = np.arange(24).reshape(2, 3, 4)
    same(xp.apply_over_axes(xp.sum, xp.asarray(c), [0, 2]), np.apply_over_axes(np.sum, c, [0, 2]))
    same(xp.apply_over_axes(lambda x, ax: xp.max(x, axis=ax, keepdims=True), xp.asarray(c) * 2, -1),
         np.apply_over_axes(np.max, c * 2, -1))
    fails(ValueError, xp.apply_along_axis, xp.sum, 1, xp.ones((0, 3)))
    fails(ValueError, xp.apply_over_axes, lambda x, ax: xp.sum(x), xp.ones((2, 3)), [0])
    grad_check(lambda t: xp.apply_along_axis(lambda r: xp.sum(r * r), 1, t), lambda x: np.sum(x * x, axis=1), A)


def test_vectorize_and_frompyfunc():
    def pick(p, q):
        return p + q if p > q else p - q

    v = xp.vectorize(pick)
    same(v(xp.asarray([1, 5, 3]), 2), np.vectorize(pick)([1, 5, 3], 2))
    same(v(xp.asarray(A[:2]), A[2]), np.vectorize(pick)(A[:2], A[2]))
    same(xp.vectorize(lambda p: (p, p * 2.0))(xp.asarray([1, 2])), np.vectorize(lambda p: (p, p * 2.0))([1, 2]))
    assert xp.vectorize(otypes=[xp.float32])(lambda p: p / 2)(xp.asarray([1, 2])).dtype == xp.float32
    same(xp.vectorize(lambda r: r.sum(), signature="(n)->()")(xp.asarray(A)), A.sum(axis=1))
    assert v.__name__ == "pick"
    f = xp.frompyfunc(lambda p, q: p * q, 2, 1)
    same(f(xp.asarray([1, 2, 3]), 2), np.array([2, 4, 6]))
    same(f(3, 4), np.array(12))
    same(f.reduce(xp.asarray([1, 2, 3, 4])), np.array(24))
    same(f.accumulate([1.5, 2, 3]), np.array([1.5, 3.0, 9.0]))
    same(f.outer([1, 2], xp.asarray([3, 4])), np.array([[3, 4], [6, 8]]))
    assert (f.nin, f.nout, f.nargs) == (2, 1, 3)
    two = xp.frompyfunc(lambda p: (p + 1, p * 2), 1, 2)
    same(two(xp.asarray([1, 2])), (np.array([2, 3]), np.array([2, 4])))
    with pytest.raises(TypeError):
        xp.frompyfunc(lambda p: str(p), 1, 1)(xp.asarray([1, 2]))


def test_printing():
    t = xp.asarray(A[:2]) * 2
    assert xp.array2string(t, precision=3) == np.array2string(A[:2] * 2, precision=3)
    assert xp.array_repr(xp.asarray([1, 2], dtype=xp.int8)) == np.array_repr(np.array([1, 2], np.int8))
    assert xp.array_str(t.T[::2]) == np.array_str((A[:2] * 2).T[::2])
    assert xp.array2string(xp.asarray([1.5, 2.0]), separator=", ") == "[1.5, 2. ]"


# ---- files --------------------------------------------------------------------------------------------

def test_save_and_load(tmp_path):
    t = xp.asarray(A) * 2
    xp.save(tmp_path / "a.npy", t)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), A * 2)   # NumPy reads lazyarr's file
    np.save(tmp_path / "b.npy", A.astype(np.float32))
    got = xp.load(tmp_path / "b.npy")                                    # and lazyarr NumPy's
    same(got, A.astype(np.float32), rtol=0, atol=0)
    xp.save(tmp_path / "c.npy", xp.asarray(A).T[::2])
    same(xp.load(tmp_path / "c.npy"), A.T[::2], rtol=0, atol=0)
    np.save(tmp_path / "d.npy", xp.arange(5, dtype=xp.int16))             # through the array protocol
    same(xp.load(tmp_path / "d.npy", mmap_mode="r"), np.arange(5, dtype=np.int16))
    buf = io.BytesIO()
    xp.save(buf, xp.asarray([1 + 2j, 3j]))
    buf.seek(0)
    same(xp.load(buf), np.array([1 + 2j, 3j]))
    for saver, loader in [(xp.savez, np.load), (xp.savez_compressed, xp.load), (np.savez, xp.load)]:
        path = tmp_path / f"{saver.__name__}{loader.__module__}.npz"
        saver(path, t, np.arange(3), weights=xp.asarray([True, False]))
        with loader(path) as archive:
            assert sorted(archive.files) == ["arr_0", "arr_1", "weights"]
            same(xp.asarray(archive["arr_0"]), A * 2, rtol=0, atol=0)
            same(xp.asarray(archive["arr_1"]), np.arange(3))
            same(xp.asarray(archive["weights"]), np.array([True, False]))
            if loader is xp.load:
                assert isinstance(archive["arr_0"], xp.ndarray) and len(archive) == 3 and "weights" in archive
                assert dict(archive).keys() == {"arr_0", "arr_1", "weights"}
    np.save(tmp_path / "s.npy", np.array(["a", "b"]))
    fails(TypeError, xp.load, tmp_path / "s.npy")


def test_text_and_raw_files(tmp_path):
    text = io.StringIO("1,2,3\n4,,6\n7,8,9\n")
    same(xp.genfromtxt(text, delimiter=","), np.genfromtxt(io.StringIO("1,2,3\n4,,6\n7,8,9\n"), delimiter=","))
    text = io.StringIO("# x y\n1 2.5\n3 4.5\n")
    same(xp.genfromtxt(text, skip_header=1, dtype=xp.float32), np.array([[1, 2.5], [3, 4.5]], np.float32))
    fails(TypeError, xp.genfromtxt, io.StringIO("a,1\nb,2\n"), delimiter=",", dtype=None, encoding="utf-8")
    fails(TypeError, xp.genfromtxt, io.StringIO("1,2\n3,\n"), delimiter=",", usemask=True)
    t = xp.asarray(A).T * 3
    t.tofile(tmp_path / "raw.bin")
    np.testing.assert_array_equal(np.fromfile(tmp_path / "raw.bin").reshape(6, 4), A.T * 3)
    same(xp.fromfile(tmp_path / "raw.bin", dtype=xp.float64, count=5), (A.T * 3).ravel()[:5], rtol=0, atol=0)
    same(xp.fromfile(tmp_path / "raw.bin", dtype="f8", offset=8).reshape(-1)[:2], (A.T * 3).ravel()[1:3], rtol=0, atol=0)
    xp.arange(4, dtype=xp.int32).tofile(tmp_path / "ints.txt", sep=",")
    assert (tmp_path / "ints.txt").read_text() == "0,1,2,3"
    same(xp.fromfile(tmp_path / "ints.txt", dtype=int, sep=","), np.arange(4))
    fails(TypeError, xp.fromfile, tmp_path / "ints.txt", dtype="U3")
    for read in [xp.load, xp.fromfile, xp.genfromtxt]:   # NumPy's error for a missing file
        with pytest.raises(FileNotFoundError):
            read(tmp_path / "missing.npy")


# ---- laziness ------------------------------------------------------------------------------------------

def test_names_whose_shape_does_not_depend_on_data_stay_lazy(monkeypatch):
    """Building these runs no kernel: they are graphs until their values are asked for."""
    from tests.helpers import watch_launches
    runs = []
    watch_launches(monkeypatch, runs.append)
    x = xp.arange(12).reshape(3, 4) * 2.0 + 1.0   # a graph, computed by nothing yet
    v = x[0] * 0.5
    built = [xp.fmax(x, v), xp.cbrt(x), xp.frexp(x)[0], xp.ldexp(x, 3), xp.i0(x), xp.sinc(x), xp.gcd(xp.arange(6), 4),
             xp.divmod(x, 3.0)[1], xp.heaviside(x - 5, 0.5), xp.rot90(x), xp.fliplr(x), xp.insert(x, [1, 2], v[:1], axis=1),
             xp.delete(x, 1, axis=0), xp.append(x, x, axis=0), xp.choose(xp.arange(4) % 2, [v, v * 2], mode="wrap"),
             xp.select([x > 3], [x]), xp.piecewise(x, [x > 3], [lambda t: t * 2, 0]), xp.lexsort([v, v * -1]),
             xp.cov(x), xp.corrcoef(x), xp.gradient(x, axis=1), xp.trapezoid(x, v), xp.polyval(v, x), xp.polyder(v),
             xp.polyint(v), xp.polyadd(v, v[:2]), xp.vander(v), xp.tril_indices(4, 1)[1], xp.indices((2, 3)),
             xp.mgrid[0:2, 0:1:3j], xp.ix_(v, v)[0],
             xp.apply_along_axis(xp.sum, 1, x), xp.ravel_multi_index((xp.arange(3), xp.arange(3)), (3, 4), mode="clip")]
    assert runs == []
    assert all(not b.is_realized for b in built if b.size)


def test_numpy_functions_reach_the_new_names():
    """NumPy's functions called on Tensors dispatch to lazyarr's (the array function protocol)."""
    a = xp.asarray(np.arange(6.0))
    assert np.shares_memory(a, a[::2]) and not np.may_share_memory(a, a.copy())
    for got in [np.insert(a, 1, 5.0), np.cov(a), np.gradient(a), np.polyval(a, a), np.rot90(a.reshape(2, 3)),
                np.trapezoid(a), np.intersect1d(a, a[::2]), np.histogram2d(a, a)[0]]:
        assert isinstance(got, xp.ndarray)
    same(np.delete(a, [0, 5]), np.arange(1.0, 5.0))
