"""float16, as NumPy has it: stored in 2 bytes, each operation computed in float32 and rounded
once (NumPy's float16 loops do the same), promoted by NumPy's table. Compared bit for bit with
NumPy where the operation is exact or correctly rounded, within one float16 ulp elsewhere."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis.extra import numpy as hnp

import lazyarr as xp

# every bit pattern: subnormals, infinities, NaNs, both zeros
HALVES = hnp.arrays(np.uint16, hnp.array_shapes(max_dims=2, max_side=6)).map(lambda a: a.view(np.float16))
EDGES = np.array([0.0, -0.0, 1.0, -1.5, 65504.0, -65504.0, 6.0e-8, -6.0e-8, 6.104e-5, np.inf, -np.inf, np.nan,
                  0.1, 2049.0, 3.0e4], np.float16)

# OpenCL holds float16 as float (vload_half): a GPU driver's conversion may give every NaN one
# sign (NVIDIA's does), so copysign from a NaN's sign is the driver's there (README, float16)
_DEVICE = xp.asarray(1).device
HALF_DROPS_NAN_SIGNS = hasattr(_DEVICE, "capabilities") and not _DEVICE.capabilities.cpu


def same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


def test_float16_is_a_dtype_numpy_reads_and_writes():
    h = np.array([1.5, -2.25, 65504.0], np.float16)
    x = xp.asarray(h)
    assert x.dtype == xp.float16 and x.dtype == np.float16 and xp.float16.itemsize == 2
    same(np.asarray(x), h)
    same(np.from_dlpack(x), h)
    same(xp.asarray([1.5, 2.0], dtype=np.float16).numpy(), np.array([1.5, 2.0], np.float16))
    same(xp.zeros(3, dtype=xp.float16).numpy(), np.zeros(3, np.float16))
    assert xp.finfo(xp.float16).eps == float(np.finfo(np.float16).eps)
    assert xp.finfo(xp.float16).max == 65504.0 and xp.isdtype(xp.float16, "real floating")
    assert "dtype=float16" in repr(x)
    # the standard's dtypes stay the standard's: float16 is an extension, as in NumPy
    assert "float16" not in xp.__array_namespace_info__().dtypes()


def test_promotion_is_numpys():
    names = ["bool", "int8", "uint8", "int16", "uint16", "int32", "int64", "float16", "float32", "float64",
             "complex64", "complex128"]
    for a, b in itertools.product(names, repeat=2):
        got = xp.result_type(getattr(xp, a), getattr(xp, b))
        assert got == np.result_type(a, b), (a, b, got)
    h = xp.asarray(np.ones(2, np.float16))
    assert (h + 1.5).dtype == xp.float16 and (h * 2).dtype == xp.float16
    assert (h + 1j).dtype == xp.complex64 == (np.ones(2, np.float16) + 1j).dtype
    # float functions of 8-bit integers give float16, as NumPy's
    assert xp.sqrt(xp.asarray(np.arange(4, dtype=np.uint8))).dtype == xp.float16


@given(a=HALVES, b=HALVES)
def test_arithmetic_rounds_once_as_numpys(a, b):
    b = np.resize(b, a.shape) if b.size else np.ones(a.shape, np.float16)
    x, y = xp.asarray(a), xp.asarray(b)
    with np.errstate(all="ignore"):
        for op in ("__add__", "__sub__", "__mul__", "__truediv__", "__lt__", "__eq__"):
            same(getattr(x, op)(y).numpy(), getattr(a, op)(b))
        for name in ("maximum", "minimum", "copysign", "nextafter"):
            got = getattr(xp, name)(x, y).numpy()
            want = getattr(np, name)(a, b)
            assert got.dtype == np.float16
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            ok = ~np.isnan(want)
            if name == "copysign" and HALF_DROPS_NAN_SIGNS:
                ok &= ~np.isnan(b)
            if name in ("copysign", "nextafter"):   # bit for bit: -0.0 and 0.0 too
                assert np.array_equal(got[ok].view(np.int16), want[ok].view(np.int16)), name
            else:   # the sign of max(0.0, -0.0) is unspecified
                assert np.array_equal(got[ok], want[ok]), name


def test_functions_match_numpy_within_an_ulp():
    with np.errstate(all="ignore"):
        for name in ("exp", "log", "sqrt", "sin", "tanh", "expm1", "log1p", "floor", "ceil", "trunc", "round",
                     "abs", "sign", "square", "isnan", "isfinite", "signbit"):
            got = getattr(xp, name)(xp.asarray(EDGES)).numpy()
            want = getattr(np, name)(EDGES)
            assert got.dtype == want.dtype, name
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3, atol=0,
                                       err_msg=name)


def test_casts_bitcasts_and_views():
    x = xp.asarray(EDGES)
    ok = ~np.isnan(EDGES)   # a NaN's payload is the device's (OpenCL's vstore_half writes its own)
    assert np.array_equal(x.view(xp.int16).numpy()[ok], EDGES.view(np.int16)[ok])
    same(xp.asarray(EDGES.view(np.uint16)).view(xp.float16).numpy()[ok], EDGES[ok])
    with np.errstate(all="ignore"):
        same(x.astype(xp.float32).numpy(), EDGES.astype(np.float32))
        big = np.array([1e5, 65519.0, 65520.0, 1e-9, 0.1, 2049.0, 2051.0], np.float64)   # overflow, ties
        same(xp.asarray(big).astype(xp.float16).numpy(), big.astype(np.float16))
        same(x[ok].astype(xp.int32).numpy()[np.isfinite(EDGES[ok])], EDGES[ok][np.isfinite(EDGES[ok])].astype(np.int32))


def test_reductions_accumulate_in_float32():
    rng = np.random.default_rng(0)
    h = rng.standard_normal(10_000).astype(np.float16)
    exact = h.astype(np.float64).sum()
    got = xp.sum(xp.asarray(h))
    assert got.dtype == xp.float16
    assert abs(float(got) - exact) <= abs(exact) * 1e-3 + 0.05
    m = rng.standard_normal((30, 40)).astype(np.float16)
    same(xp.max(xp.asarray(m), axis=0).numpy(), m.max(axis=0))
    same(xp.argmin(xp.asarray(m), axis=1).numpy(), m.argmin(axis=1))
    np.testing.assert_allclose(xp.mean(xp.asarray(m), axis=1).numpy().astype(np.float32),
                               m.astype(np.float32).mean(axis=1), rtol=2e-3, atol=2e-3)
    got = (xp.asarray(m) @ xp.asarray(m.T)).numpy()
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), m.astype(np.float32) @ m.T.astype(np.float32), rtol=2e-3, atol=0.1)


def test_sorting_and_indexing():
    x = xp.asarray(EDGES)
    got = xp.sort(x).numpy()
    want = np.sort(EDGES)
    np.testing.assert_array_equal(got, want)
    same(x[x > 0].numpy(), EDGES[EDGES > 0])
    same(xp.flip(x).numpy(), EDGES[::-1])
    same(xp.concat([x, x]).numpy(), np.concatenate([EDGES, EDGES]))


@pytest.mark.parametrize("value", [65504.0, 7e4, 1e-8, 0.1])
def test_python_scalars_round_to_float16(value):
    x = xp.asarray(np.zeros(1, np.float16))
    with np.errstate(all="ignore"):
        same((x + value).numpy(), np.zeros(1, np.float16) + value)
        same(xp.full(1, value, dtype=xp.float16).numpy(), np.full(1, value, np.float16))


def test_linalg_refuses_float16_as_numpys_and_fft_computes_in_complex64():
    a = (np.eye(3) * 2 + 0.5).astype(np.float16)
    for name in ("inv", "det", "svd", "cholesky", "eigh", "qr"):
        with pytest.raises(TypeError, match="float16"):
            getattr(xp.linalg, name)(xp.asarray(a))
    assert float(xp.linalg.matrix_norm(xp.asarray(a))) == pytest.approx(float(np.linalg.norm(a)), rel=1e-3)
    same(xp.linalg.matrix_power(xp.asarray(a), 2).numpy(), np.linalg.matrix_power(a, 2))
    got = xp.fft.rfft(xp.asarray(a[0]))
    assert got.dtype == xp.complex64 == np.fft.rfft(a[0]).dtype
    np.testing.assert_allclose(got.numpy(), np.fft.rfft(a[0]), rtol=1e-6)
