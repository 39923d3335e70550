"""Complex arrays (complex64, complex128) against NumPy: creation, conversion, arithmetic with
promotion and weak Python scalars, comparisons, casts, movement, where, reductions, linear algebra,
powers, views, buffers and the schedule cache. (The transcendental functions are in
test_complex_functions.py.) The API tests run on every device (LAZYARR_DEVICE)."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp
from lazyarr.compiler.uop import GroupOp, Ops, alu_dtype

COMPLEX = [np.complex64, np.complex128]
SPECIAL = [0.0, -0.0, 1.0, -1.5, 2.5e-3, 3e5, math.inf, -math.inf, math.nan]
SPECIAL_Z = [complex(a, b) for a in SPECIAL for b in SPECIAL]


def complex_elements(dtype, special=True, magnitude=1e3):
    width = np.dtype(dtype).itemsize * 8
    finite = st.complex_numbers(max_magnitude=magnitude, allow_nan=False, allow_infinity=False, width=width)
    return finite | st.sampled_from(SPECIAL_Z) if special else finite


def complex_arrays(dtype, shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), **kw):
    return hnp.arrays(dtype, shape, elements=complex_elements(dtype, **kw))


def same_values(got, want, rtol=0.0, atol=0.0, zero_signs=True):
    """Element by element, part by part: NaN where NumPy has NaN, equal infinities, zeros of the
    same sign, and finite values within rtol (of the element's largest finite part) and atol."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    g_flat, w_flat = got.reshape(-1), want.reshape(-1)
    with np.errstate(invalid="ignore", over="ignore"):
        parts = [np.abs(p(w_flat)) for p in ((np.real, np.imag) if want.dtype.kind == "c" else (lambda v: v,))]
        scale = np.max([np.where(np.isfinite(p), p, 0) for p in parts], axis=0)   # the largest finite part
        bad = np.zeros(w_flat.shape, bool)
        for part in (np.real, np.imag) if want.dtype.kind == "c" else (lambda v: v,):
            g, w = part(g_flat), part(w_flat)
            fin = np.isfinite(w)
            bad |= np.isnan(g) != np.isnan(w)
            bad |= np.isinf(w) & (g != w)
            bad |= fin & ~(np.abs(g - w) <= atol + rtol * scale)
            if zero_signs:
                bad |= fin & (w == 0) & (g == 0) & (np.signbit(g) != np.signbit(w))
    if bad.any():
        pairs = ", ".join(f"{g!r} (want {w!r})" for g, w in zip(g_flat[bad][:8], w_flat[bad][:8]))
        raise AssertionError(f"{bad.sum()} of {bad.size} differ: {pairs}; at flat positions {np.nonzero(bad)[0][:8]}")


def rtol_of(dtype):
    return 2e-6 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-14


# ---- creation and conversion ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
def test_creation_functions(dtype):
    d = xp.asarray(np.zeros(1, dtype)).dtype
    assert d == dtype and xp.zeros(3, dtype=d).dtype == d
    np.testing.assert_array_equal(xp.zeros((2, 3), dtype=d).numpy(), np.zeros((2, 3), dtype))
    np.testing.assert_array_equal(xp.ones((2,), dtype=d).numpy(), np.ones(2, dtype))
    np.testing.assert_array_equal(xp.full((2, 2), 1 - 2j, dtype=d).numpy(), np.full((2, 2), 1 - 2j, dtype))
    np.testing.assert_array_equal(xp.eye(3, 4, k=1, dtype=d).numpy(), np.eye(3, 4, k=1, dtype=dtype))
    np.testing.assert_allclose(xp.linspace(1 - 1j, 3 + 5j, 7, dtype=d).numpy(),
                               np.linspace(1 - 1j, 3 + 5j, 7, dtype=dtype), rtol=1e-6)
    np.testing.assert_allclose(xp.linspace(0, 2j, 4, endpoint=False, dtype=d).numpy(),
                               np.linspace(0, 2j, 4, endpoint=False, dtype=dtype), rtol=1e-6)
    x = xp.asarray(np.array([[1 + 2j, -3j]], dtype))
    assert xp.zeros_like(x).dtype == d and xp.full_like(x, 2j).numpy().tolist() == [[2j, 2j]]
    assert xp.empty((2, 0), dtype=d).shape == (2, 0)
    np.testing.assert_array_equal(xp.tril(xp.ones((3, 3), dtype=d)).numpy(), np.tril(np.ones((3, 3), dtype)))


def test_defaults_and_python_complex():
    assert xp.asarray(1j).dtype == xp.complex128 and xp.full(2, 1 + 1j).dtype == xp.complex128
    assert xp.asarray([1, 2j]).numpy().tolist() == [1, 2j]
    assert xp.linspace(0, 1j, 3).dtype == xp.complex128
    with pytest.raises(TypeError):
        xp.full(2, 1j, dtype=xp.float64)
    with pytest.raises(TypeError):
        xp.linspace(0, 1j, 3, dtype=xp.float32)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_reading_values(dtype):
    data = np.array([[1.5 - 2j, -0.0 + 0j], [math.inf, complex(0, math.nan)]], dtype)
    t = xp.asarray(data)
    np.testing.assert_array_equal(t.numpy(), data)
    assert t.numpy().dtype == dtype and t[0].tolist() == data[0].tolist()
    assert complex(t[0, 0]) == 1.5 - 2j and t[0, 0].item() == 1.5 - 2j
    computed = t * 2
    assert complex(computed[0, 0]) == 3 - 4j and float(computed[0, 0]) == 3.0
    assert "1.5-2.j" in repr(t) or "1.5 -2.j" in repr(t)


@pytest.mark.cpu_only
def test_numpy_views_the_complex_buffer():
    t = xp.asarray(np.arange(6, dtype=np.float32)) * (1 + 1j)
    a, b = t.numpy(), t.numpy()
    assert a.dtype == np.complex64 and np.shares_memory(a, b)


# ---- arithmetic and promotion -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide"])
@given(data=st.data())
def test_arithmetic_against_numpy(dtype, name, data):
    sa, sb = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4)).input_shapes
    a = data.draw(complex_arrays(dtype, st.just(sa)))
    b = data.draw(complex_arrays(dtype, st.just(sb)))
    got = getattr(xp, name)(xp.asarray(a), xp.asarray(b)).numpy()
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
    if name in ("add", "subtract"):
        same_values(got, want)
    else:   # NumPy's loops may fuse a*c - b*d (FMA), lazyarr rounds each product: compare finite results
        finite = np.isfinite(want) & np.isfinite(a + 0 * b) & np.isfinite(b + 0 * a)
        same_values(got[finite], want[finite], rtol=8 * rtol_of(dtype), atol=1e-30, zero_signs=False)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_division_special_values(dtype):
    z = np.array(SPECIAL_Z, dtype)
    a, b = np.repeat(z, len(z)), np.tile(z, len(z))
    with np.errstate(all="ignore"):
        want = a / b
    got = (xp.asarray(a) / xp.asarray(b)).numpy()
    exact = np.isfinite(a) & np.isfinite(b) & (np.abs(b) > 0) & (np.abs(a) < 1e3) & (np.abs(b) < 1e3)
    same_values(got[exact], want[exact], rtol=4 * rtol_of(dtype))
    np.testing.assert_array_equal(np.isnan(got[~exact]), np.isnan(want[~exact]))


def test_promotion_and_weak_scalars():
    f32, f64 = xp.ones(2, dtype=xp.float32), xp.ones(2)
    c64, c128 = xp.ones(2, dtype=xp.complex64), xp.ones(2, dtype=xp.complex128)
    assert (f32 * 1j).dtype == xp.complex64 and (1j + f32).dtype == xp.complex64
    assert (f64 * 1j).dtype == xp.complex128 and (xp.ones(2, dtype=xp.int32) + 1j).dtype == xp.complex128
    assert (c64 + 2.5).dtype == xp.complex64 and (c64 * 3).dtype == xp.complex64 and (c64 / 1j).dtype == xp.complex64
    assert (c64 + f64).dtype == xp.complex128 and (c64 + c128).dtype == xp.complex128 and (c64 + f32).dtype == xp.complex64
    assert xp.result_type(xp.float32, 1j) == xp.complex64
    np.testing.assert_array_equal((f32 * (2 - 1j)).numpy(), np.ones(2, np.float32) * np.complex64(2 - 1j))
    np.testing.assert_array_equal((c64 - 1j).numpy(), np.full(2, 1 - 1j, np.complex64))
    x = xp.asarray(np.array([1 + 1j], np.complex64))
    x += 1j
    x *= 2
    assert x.dtype == xp.complex64 and x.numpy().tolist() == [2 + 4j]
    with pytest.raises(TypeError):
        f = xp.ones(2)
        f += 1j


@pytest.mark.parametrize("dtype", COMPLEX)
@given(data=st.data())
def test_unary_arithmetic(dtype, data):
    z = data.draw(complex_arrays(dtype))
    t = xp.asarray(z)
    with np.errstate(all="ignore"):
        same_values((-t).numpy(), -z)
        same_values((+t).numpy(), +z)
        same_values(xp.conj(t).numpy(), np.conj(z))
        same_values(xp.real(t).numpy(), np.real(z))
        same_values(xp.imag(t).numpy(), np.imag(z))
        same_values(xp.abs(t).numpy(), np.abs(z), rtol=rtol_of(dtype))
        # a subnormal angle (atan2 of a subnormal part) may differ by an ulp of the subnormal range
        same_values(xp.angle(t).numpy(), np.angle(z), rtol=rtol_of(dtype), atol=4 * np.finfo(np.real(z).dtype).smallest_subnormal)
        same_values(xp.round(t).numpy(), np.round(z))
        same_values(xp.reciprocal(t).numpy(), np.reciprocal(z), rtol=4 * rtol_of(dtype))
        finite = np.isfinite(z)
        same_values(xp.square(t).numpy()[finite], np.square(z)[finite], rtol=4 * rtol_of(dtype), atol=1e-30,
                    zero_signs=False)


def test_round_decimals_and_sign():
    z = np.array([1.234 - 5.678j, -0.5 + 2.5j, 0j, -0.0 - 0j, complex(math.nan, 1), complex(3, math.inf), 3 - 4j])
    np.testing.assert_allclose(xp.round(xp.asarray(z[:2]), decimals=2).numpy(), np.round(z[:2], 2))
    got = xp.sign(xp.asarray(z)).numpy()
    with np.errstate(invalid="ignore"):
        want = np.sign(z)
    want[4] = complex(math.nan, math.nan)   # the standard: a NaN part gives NaN + NaN j
    same_values(got, want, rtol=1e-15)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_comparisons_and_classification(dtype):
    z = np.array(SPECIAL_Z, dtype)
    w = np.roll(z, 7)
    t, u = xp.asarray(z), xp.asarray(w)
    np.testing.assert_array_equal((t == u).numpy(), z == w)
    np.testing.assert_array_equal((t != u).numpy(), z != w)
    np.testing.assert_array_equal((t == t).numpy(), z == z)
    for name in ("isnan", "isinf", "isfinite"):
        np.testing.assert_array_equal(getattr(xp, name)(t).numpy(), getattr(np, name)(z))
    np.testing.assert_array_equal((t == 1).numpy(), z == 1)
    np.testing.assert_array_equal(xp.logical_not(t).numpy(), np.logical_not(z))
    for fn in (xp.less, xp.maximum, xp.floor, xp.floor_divide, xp.remainder):
        with pytest.raises(TypeError):
            fn(t, t) if fn not in (xp.floor,) else fn(t)
    with pytest.raises(TypeError):
        xp.max(t)
    with pytest.raises(TypeError):
        xp.min(t)


# ---- casts and views --------------------------------------------------------------------------

def test_casts():
    z = np.array([1.5 - 2j, 0j, -0.0 + 0j, complex(0, -1e-40), complex(math.nan, 0)], np.complex128)
    t = xp.asarray(z)
    np.testing.assert_array_equal(t.astype(xp.complex64).numpy(), z.astype(np.complex64))
    np.testing.assert_array_equal(t.astype(xp.complex64).astype(xp.complex128).numpy(),
                                  z.astype(np.complex64).astype(np.complex128))
    np.testing.assert_array_equal(t.astype(xp.bool).numpy(), z.astype(bool))
    for src in (np.array([True, False]), np.array([3, -4], np.int16), np.array([1.5, -0.0], np.float32),
                np.array([2 ** 60, -1], np.int64), np.array([7, 0], np.uint8)):
        for d in COMPLEX:
            np.testing.assert_array_equal(xp.asarray(src).astype(d).numpy(), src.astype(d))
    with pytest.raises(TypeError, match="real"):
        t.astype(xp.float64)
    with pytest.raises(TypeError):
        t.astype(xp.int32)


def test_views_of_complex_bytes():
    z = np.array([[1 + 2j, -3 - 4j], [5j, -6.5 + 0j]], np.complex64)
    t = xp.asarray(z)
    np.testing.assert_array_equal(t.view(xp.float32).numpy(), z.view(np.float32))
    np.testing.assert_array_equal((t * 1).view(xp.int32).numpy(), z.view(np.int32))
    np.testing.assert_array_equal(t.view(xp.float64).numpy(), z.view(np.float64))
    np.testing.assert_array_equal(t.view(xp.uint16).numpy(), z.view(np.uint16))
    f = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(xp.asarray(f).view(xp.complex64).numpy(), f.view(np.complex64))
    np.testing.assert_array_equal((xp.asarray(f) + 1).view(xp.complex64).numpy(), (f + 1).view(np.complex64))
    d = np.arange(4, dtype=np.float64)
    np.testing.assert_array_equal(xp.asarray(d).view(xp.complex64).numpy(), d.view(np.complex64))
    np.testing.assert_array_equal(xp.asarray(d.reshape(2, 2)).view(xp.complex128).numpy(), d.reshape(2, 2).view(np.complex128))
    np.testing.assert_array_equal(xp.asarray(np.float64(2.5)).view(xp.complex64).numpy(), np.float64(2.5).view(np.complex64))


# ---- movement, indexing, where, concat --------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
def test_movement_and_indexing(dtype):
    z = (np.arange(24).reshape(2, 3, 4) + 1j * np.arange(24)[::-1].reshape(2, 3, 4)).astype(dtype)
    t = xp.asarray(z)
    checks = [
        (t.T, z.T), (xp.permute_dims(t, (1, 0, 2)), z.transpose(1, 0, 2)), (t.reshape(4, 6), z.reshape(4, 6)),
        (xp.flip(t, axis=1), np.flip(z, axis=1)), (t[:, 1:, ::2], z[:, 1:, ::2]), (t[1, ::-1], z[1, ::-1]),
        (xp.broadcast_to(t[0, 0], (3, 4)), np.broadcast_to(z[0, 0], (3, 4))), (xp.expand_dims(t, 1), z[:, None]),
        (xp.roll(t, 2, axis=2), np.roll(z, 2, axis=2)), (xp.tile(t[0], (2, 1)), np.tile(z[0], (2, 1))),
        (xp.repeat(t[0, 0], 2), np.repeat(z[0, 0], 2)), (xp.squeeze(t[:1]), np.squeeze(z[:1])),
        (t[xp.asarray([1, 0, 1])], z[[1, 0, 1]]), (t[0][xp.asarray([[2, 0], [1, 1]])], z[0][[[2, 0], [1, 1]]]),
        ((t.T * 2).T, z * 2), (xp.moveaxis(t, 0, -1) + 1j, np.moveaxis(z, 0, -1) + 1j),
    ]
    for got, want in checks:
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_where_concat_stack_setitem(dtype):
    a = np.array([1 + 1j, -0.0 - 0j, 3j], dtype)
    b = np.array([-1j, 2 + 0j, complex(0, -0.0)], dtype)
    ta, tb = xp.asarray(a), xp.asarray(b)
    c = np.array([True, False, True])
    same_values(xp.where(xp.asarray(c), ta, tb).numpy(), np.where(c, a, b))
    same_values(xp.where(xp.asarray(c), ta, 5.0).numpy(), np.where(c, a, dtype(5)))
    same_values(xp.where(xp.asarray(c), 1j, ta).numpy(), np.where(c, dtype(1j), a))
    same_values(xp.concat([ta, tb, ta]).numpy(), np.concatenate([a, b, a]))
    same_values(xp.stack([ta, tb], axis=1).numpy(), np.stack([a, b], axis=1))
    same_values(xp.concat([ta, xp.asarray(np.array([2.5], np.float32))]).numpy(),
                np.concatenate([a, np.array([2.5], np.float32)]))
    t = xp.asarray(a)
    t[1] = 7 - 1j
    t[xp.asarray([True, False, False])] = 2j
    t[2:] = xp.asarray(np.array([5.0], np.float32))
    assert t.numpy().tolist() == [2j, 7 - 1j, 5 + 0j]
    u = xp.zeros((2, 2), dtype=dtype)
    u[:, 0] = xp.asarray([1j, 2j])
    assert u.numpy().tolist() == [[1j, 0j], [2j, 0j]]


# ---- reductions -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
@given(data=st.data())
def test_sum_mean_against_numpy(dtype, data):
    z = data.draw(complex_arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5),
                                 special=False, magnitude=100))
    axis = data.draw(st.none() | st.integers(0, z.ndim - 1))
    keep = data.draw(st.booleans())
    t = xp.asarray(z)
    np.testing.assert_allclose(xp.sum(t, axis=axis, keepdims=keep).numpy(), np.sum(z, axis=axis, keepdims=keep),
                               rtol=1e-5, atol=1e-3)
    if z.size:
        with np.errstate(all="ignore"):
            want = np.mean(z, axis=axis, keepdims=keep)
        np.testing.assert_allclose(xp.mean(t, axis=axis, keepdims=keep).numpy(), want, rtol=1e-5, atol=1e-3)
        np.testing.assert_allclose(xp.var(t, axis=axis).numpy(), np.var(z, axis=axis), rtol=1e-4, atol=1e-2)
        np.testing.assert_allclose(xp.std(t, axis=axis, correction=1).numpy() if z.size > 1 else 0,
                                   np.std(z, axis=axis, ddof=1) if z.size > 1 else 0, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape,axis", [((5,), None), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), (0, 2)),
                                        ((17,), 0), ((4, 40), 1), ((300,), None), ((2, 1000), 1), ((0,), None),
                                        ((3, 0), 1), ((3, 1), 1)])
def test_prod_is_the_complex_product(dtype, shape, axis):
    rng = np.random.default_rng(0)
    n = math.prod(shape)
    # factors near the unit circle keep long products finite
    z = (np.exp(1j * rng.uniform(-3, 3, n)) * rng.uniform(0.9, 1.1, n)).reshape(shape).astype(dtype)
    got = xp.prod(xp.asarray(z), axis=axis).numpy()
    np.testing.assert_allclose(got, np.prod(z, axis=axis), rtol=1e-4 if dtype == np.complex64 else 1e-12)
    assert got.dtype == dtype
    np.testing.assert_allclose(xp.prod(xp.asarray(z), axis=axis, keepdims=True).numpy(),
                               np.prod(z, axis=axis, keepdims=True), rtol=1e-4 if dtype == np.complex64 else 1e-12)


def test_prod_special_values():
    z = np.array([[1j, 1j, 1j, 1j], [2 + 0j, complex(math.inf, 0), 0.5, 1], [1, 0j, 3j, 1]], np.complex128)
    with np.errstate(all="ignore"):
        want = np.prod(z, axis=1)
    same_values(xp.prod(xp.asarray(z), axis=1).numpy(), want, rtol=1e-15)
    assert xp.prod(xp.asarray(np.zeros(0, np.complex64))).numpy() == 1 + 0j


# ---- linear algebra and powers ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
def test_matmul_vecdot_tensordot(dtype):
    rng = np.random.default_rng(1)
    def r(*s): return (rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(dtype)
    rtol = 1e-5 if dtype == np.complex64 else 1e-12
    a, b, v = r(3, 4), r(4, 5), r(4)
    np.testing.assert_allclose((xp.asarray(a) @ xp.asarray(b)).numpy(), a @ b, rtol=rtol)
    np.testing.assert_allclose((xp.asarray(a) @ xp.asarray(v)).numpy(), a @ v, rtol=rtol)
    batch = r(2, 3, 4)
    np.testing.assert_allclose(xp.matmul(xp.asarray(batch), xp.asarray(b)).numpy(), batch @ b, rtol=rtol)
    x, y = r(2, 4), r(2, 4)
    np.testing.assert_allclose(xp.vecdot(xp.asarray(x), xp.asarray(y)).numpy(), np.sum(np.conj(x) * y, axis=-1),
                               rtol=rtol)
    np.testing.assert_allclose(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=1).numpy(),
                               np.tensordot(a, b, axes=1), rtol=rtol)
    f = rng.standard_normal((4, 2)).astype(np.float32)
    np.testing.assert_allclose((xp.asarray(a) @ xp.asarray(f)).numpy(), a @ f, rtol=rtol)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_integer_powers(dtype):
    z = np.array([1 + 2j, -0.5 + 0.25j, 3j, 0j, -2 + 0j, complex(1e-3, -4)], dtype)
    t = xp.asarray(z)
    rtol = 1e-5 if dtype == np.complex64 else 1e-13
    for n in (0, 1, 2, 3, 4, 7, -1, -2, 5.0):
        with np.errstate(all="ignore"):
            want = z ** n
        got = (t ** n).numpy()
        ok = np.isfinite(want)
        np.testing.assert_allclose(got[ok], want[ok], rtol=rtol)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose((t ** 2).numpy(), (t * t).numpy(), rtol=0)


@pytest.mark.parametrize("dtype", COMPLEX)
@given(data=st.data())
def test_general_powers(dtype, data):
    a = data.draw(complex_arrays(dtype, st.just((6,)), special=False, magnitude=4))
    b = data.draw(complex_arrays(dtype, st.just((6,)), special=False, magnitude=3))
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    got = xp.pow(xp.asarray(a), xp.asarray(b)).numpy()
    ok = np.isfinite(want) & (np.abs(a) > 1e-3)
    # within a tolerance, a zero part's sign is rounding: (-1.5j) ** (-0 - 1e-45j) is 1+0j in NumPy's
    # order of operations and 1-0j in ours (the exact cases below keep their signs)
    same_values(got[ok], want[ok], rtol=5e-5 if dtype == np.complex64 else 1e-11, atol=1e-30, zero_signs=False)
    zero = np.zeros(3, dtype)
    exps = np.array([2 + 0j, 1j, 0j], dtype)
    with np.errstate(all="ignore"):
        same_values(xp.pow(xp.asarray(zero), xp.asarray(exps)).numpy(), np.power(zero, exps))


# ---- buffers, the schedule cache, autograd ----------------------------------------------------

def test_complex_kernels_are_real():
    t = xp.asarray(np.ones(4, np.complex64))
    for item in xp.exp(t * (1 + 2j)).schedule():
        assert "complex" not in item.source.lower()
        assert all(b.dtype in (xp.float32, xp.float64) for b in item.buffers)
        assert all(u.dtype.kind != "c" for u in item.ast.toposort())


def test_real_view_shares_the_storage():
    t = xp.asarray(np.array([1 + 2j, 3 - 4j], np.complex64))
    buf = t.uop.arg
    view = buf.real_view()
    assert view is buf.real_view() and view.parent is buf and view.size == 4 and view.dtype == xp.float32
    np.testing.assert_array_equal(view.numpy(), [1, 2, 3, -4])
    view.copyin(np.array([5, 6, 7, 8], np.float32))
    assert t.numpy().tolist() == [5 + 6j, 7 + 8j]


def test_schedule_cache_and_updates():
    rng = np.random.default_rng(2)
    values = [rng.standard_normal(5) + 1j * rng.standard_normal(5) for _ in range(3)]
    for v in values:   # one graph structure on new buffers each time: the cached schedule
        t = xp.asarray(v)
        np.testing.assert_allclose((xp.exp(t) * t.conj() + xp.sum(t)).numpy(), np.exp(v) * np.conj(v) + np.sum(v))
    x = xp.asarray(values[0])
    want = values[0].copy()
    for _ in range(4):   # updates in place where safe
        x = x * (1 - 0.5j) + 1
        want = want * (1 - 0.5j) + 1
        x.realize()
    np.testing.assert_allclose(x.numpy(), want)
    old = xp.asarray(values[1])
    view = old.view(xp.float64)
    old = old * 2
    np.testing.assert_allclose(view.numpy(), values[1].view(np.float64))
    np.testing.assert_allclose(old.numpy(), values[1] * 2)


def test_contiguous_and_several_outputs():
    z = np.array([1 + 1j, 2 - 1j, -3j], np.complex128)
    t = xp.asarray(z)
    a = (t * 2).contiguous()
    b, c = a + 1, xp.real(a) * xp.imag(a)
    xp.realize(a, b, c)
    np.testing.assert_array_equal(a.numpy(), z * 2)
    np.testing.assert_array_equal(b.numpy(), z * 2 + 1)
    np.testing.assert_array_equal(c.numpy(), (z * 2).real * (z * 2).imag)
    d = xp.sum(t * t) * t     # a reduction broadcast back: fused or its own buffer
    np.testing.assert_allclose(d.numpy(), np.sum(z * z) * z)


def test_autograd_refuses_complex_leaves_and_flows_through_complex_values():
    with pytest.raises(TypeError, match="complex"):
        xp.asarray([1j]).requires_grad_()
    with pytest.raises(TypeError, match="complex"):
        xp.asarray([1 + 1j], requires_grad=True)
    x = xp.asarray([1.0, -2.0], requires_grad=True)
    xp.sum(xp.abs(x * (1 + 1j))).backward()   # |x(1 + i)| = √2|x|: more in test_complex_gradients.py
    np.testing.assert_allclose(x.grad.numpy(), [2 ** 0.5, -(2 ** 0.5)])
    with xp.no_grad():
        assert xp.abs(x * 1j).numpy().tolist() == [1.0, 2.0]


def test_graph_level_ops():
    t = xp.asarray(np.array([1 + 2j], np.complex64))
    assert xp.real(t).uop.op is Ops.GEP and xp.real(t).dtype == xp.float32
    assert (xp.exp(t)).uop.op is Ops.EXP and xp.exp(t).dtype == xp.complex64
    assert xp.abs(t).dtype == xp.float32


def test_to_device_roundtrip():
    devices = xp.__array_namespace_info__().devices()
    z = np.array([1 - 1j, 2j], np.complex64)
    t = xp.asarray(z)
    for d in devices:
        moved = t.to_device(d) * 1j
        assert moved.device == d
        np.testing.assert_array_equal(moved.to_device(t.device).numpy(), z * 1j)


def _parts_each(fn):
    return lambda z: fn(z.real) + 1j * fn(z.imag)


COMPLEX_OPS = {
    Ops.NEG: np.negative, Ops.ABS: np.abs, Ops.SQRT: np.sqrt, Ops.RECIP: np.reciprocal, Ops.EXP: np.exp,
    Ops.EXP2: np.exp2, Ops.EXPM1: np.expm1, Ops.LOG: np.log, Ops.LOG2: np.log2, Ops.LOG10: np.log10,
    Ops.LOG1P: np.log1p, Ops.SIN: np.sin, Ops.COS: np.cos, Ops.TAN: np.tan, Ops.ASIN: np.arcsin,
    Ops.ACOS: np.arccos, Ops.ATAN: np.arctan, Ops.SINH: np.sinh, Ops.COSH: np.cosh, Ops.TANH: np.tanh,
    Ops.ASINH: np.arcsinh, Ops.ACOSH: np.arccosh, Ops.ATANH: np.arctanh, Ops.FLOOR: _parts_each(np.floor),
    Ops.CEIL: _parts_each(np.ceil), Ops.TRUNC: _parts_each(np.trunc), Ops.RINT: _parts_each(np.rint),
    Ops.ADD: np.add, Ops.SUB: np.subtract, Ops.MUL: np.multiply, Ops.FDIV: np.divide, Ops.POW: np.power,
    Ops.CMPEQ: np.equal, Ops.CMPNE: np.not_equal, Ops.WHERE: lambda c, a, b: np.where(c, a, b),
}


def test_every_op_taking_complex_values_is_lowered_to_real_ones():
    # the op table says which ops take complex values (OpDef.kinds); each must have its lowering
    from lazyarr.arrays import wrap
    from lazyarr.ops import ALU_DEFS
    from lazyarr.compiler.uop import UOp
    taking = {op for op, d in ALU_DEFS.items() if "c" in d.kinds}
    assert taking == set(COMPLEX_OPS), taking ^ set(COMPLEX_OPS)
    rng = np.random.default_rng(0)
    z = [(rng.uniform(-0.9, 0.9, 12) + 1j * rng.uniform(-0.9, 0.9, 12)).astype(np.complex128) for _ in range(3)]
    cond = rng.uniform(size=12) < 0.5
    for op in sorted(taking, key=lambda o: o.name):
        n = 1 if op in GroupOp.Unary else 3 if op is Ops.WHERE else 2
        arrays = [xp.asarray(cond)] + [xp.asarray(v) for v in z[:2]] if op is Ops.WHERE else [xp.asarray(v) for v in z[:n]]
        srcs = tuple(a.uop for a in arrays)
        got = wrap(UOp(op, alu_dtype(op, srcs[-1].dtype), srcs), arrays[0].device).numpy()
        want = COMPLEX_OPS[op](*(cond, *z[:2]) if op is Ops.WHERE else z[:n])
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12, err_msg=op.name)
