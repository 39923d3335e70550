"""cumulative_sum and cumulative_prod (and NumPy's cumsum/cumprod) against NumPy: shapes, axes,
dtypes (integers wrap exactly as NumPy's), include_initial, the dtype argument, empty arrays,
errors, long axes that take the blocked path, gradients against finite differences and PyTorch,
and the number of kernels."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp
from lazyarr import statistics
from tests import strategies as S
from tests.helpers import assert_close
from tests.test_autograd import check_gradient

try:
    import torch
except ImportError:
    torch = None

OURS = {"sum": xp.cumulative_sum, "prod": xp.cumulative_prod}
NUMPY = {"sum": np.cumulative_sum, "prod": np.cumulative_prod}
COMPLEX = [np.complex64, np.complex128]
shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6)


def tol(dtype):
    return 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


@st.composite
def arrays(draw, dtypes, shape=shapes):
    dtype = draw(st.sampled_from(dtypes))
    if np.dtype(dtype).kind == "c":
        width = np.dtype(dtype).itemsize * 8
        return draw(hnp.arrays(dtype, shape, elements=st.complex_numbers(max_magnitude=2, width=width)))
    # integers over their whole range (sums and products wrap); reals where products stay finite
    return draw(S.arrays(dtype, shape=shape, special=False, lo=-2, hi=2) if np.dtype(dtype).kind == "f"
                else S.arrays(dtype, shape=shape))


@pytest.mark.parametrize("name", ["sum", "prod"])
@given(data=st.data())
def test_cumulative_matches_numpy(name, data):
    a = data.draw(arrays(S.NUMBERS + S.BOOL + COMPLEX))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    include_initial = data.draw(st.booleans())
    kw = {"axis": axis} if a.ndim > 1 or data.draw(st.booleans()) else {}
    want = NUMPY[name](a, include_initial=include_initial, axis=axis)
    got = OURS[name](xp.asarray(a), include_initial=include_initial, **kw)
    assert a.size == 0 or not got.is_realized   # lazy: nothing computed on the host (empty: a constant)
    assert_close(got, want, rtol=tol(want.dtype), atol=1e-12)


DTYPE_ARGS = [(np.int8, np.int8), (np.uint8, np.uint8), (np.int16, np.int32), (np.int32, np.float64),
              (np.float64, np.float32), (np.float32, np.float64), (np.bool_, np.bool_), (np.bool_, np.int8),
              (np.uint32, np.uint64), (np.float32, np.complex64), (np.int64, np.int64)]


@pytest.mark.parametrize("name", ["sum", "prod"])
@given(data=st.data())
def test_the_dtype_argument_accumulates_in_that_dtype(name, data):
    src, dst = data.draw(st.sampled_from(DTYPE_ARGS))
    a = data.draw(arrays([src]))
    axis = data.draw(st.integers(0, a.ndim - 1))
    want = NUMPY[name](a, axis=axis, dtype=dst)
    got = OURS[name](xp.asarray(a), axis=axis, dtype=getattr(xp, np.dtype(dst).name))
    assert_close(got, want, rtol=tol(dst), atol=1e-6)


@pytest.mark.parametrize("src, want", [(np.int8, np.int64), (np.int32, np.int64), (np.uint8, np.uint64),
                                       (np.uint32, np.uint64), (np.bool_, np.int64), (np.float32, np.float32),
                                       (np.complex64, np.complex64), (np.float64, np.float64)])
def test_default_dtypes_are_those_of_sum_and_prod(src, want):
    x = xp.asarray(np.ones(3, dtype=src))
    for fn in OURS.values():
        assert fn(x).dtype == getattr(xp, np.dtype(want).name)


def test_integers_wrap_as_numpy_does():
    a = np.array([2 ** 62, 2 ** 62, 2 ** 62, -5, 7], dtype=np.int64)
    assert_close(xp.cumulative_sum(xp.asarray(a)), np.cumsum(a))
    assert_close(xp.cumulative_prod(xp.asarray(a)), np.cumprod(a))
    b = np.array([100, 100, 100, 3], dtype=np.int8)
    assert_close(xp.cumulative_sum(xp.asarray(b), dtype=xp.int8), np.cumsum(b, dtype=np.int8))
    assert_close(xp.cumulative_prod(xp.asarray(b), dtype=xp.int8), np.cumprod(b, dtype=np.int8))


def test_include_initial_prepends_the_identity():
    x = xp.asarray([[2.0, 3.0], [4.0, 5.0]])
    assert_close(xp.cumulative_sum(x, axis=1, include_initial=True), np.array([[0.0, 2, 5], [0, 4, 9]]))
    assert_close(xp.cumulative_prod(x, axis=0, include_initial=True), np.array([[1.0, 1], [2, 3], [8, 15]]))


@pytest.mark.parametrize("shape, axis", [((0,), 0), ((3, 0), 1), ((0, 3), 1), ((2, 0, 4), -1), ((0, 4), 0)])
@pytest.mark.parametrize("include_initial", [False, True])
def test_empty_arrays(shape, axis, include_initial):
    a = np.zeros(shape, dtype=np.float32)
    for name in OURS:
        assert_close(OURS[name](xp.asarray(a), axis=axis, include_initial=include_initial),
                     NUMPY[name](a, axis=axis, include_initial=include_initial))


def test_nan_and_infinity_propagate():
    a = np.array([1.0, np.inf, -np.inf, 2.0, np.nan, 3.0])
    for name in OURS:
        assert_close(OURS[name](xp.asarray(a)), NUMPY[name](a))


def test_errors():
    m = xp.ones((2, 3))
    for fn in OURS.values():
        with pytest.raises(ValueError, match="axis must be given"):
            fn(m)
        with pytest.raises(ValueError, match="0-d"):
            fn(xp.asarray(1.0))
        with pytest.raises(IndexError, match="out of bounds"):
            fn(m, axis=2)
        with pytest.raises(ValueError, match="out of bounds"):
            fn(m, axis=-3)
        with pytest.raises(TypeError, match="integer"):
            fn(m, axis=1.0)


# ---- long axes: blocks of _SCAN_BLOCK, their totals scanned recursively ----------------------------

@pytest.mark.parametrize("n", [statistics._SCAN_TRIANGLE + 1, 1000, 4099, 100_003])
def test_long_axes_of_integers_are_exact(n):
    rng = np.random.default_rng(n)
    a = rng.integers(-2 ** 63, 2 ** 63 - 1, size=(n, 2), dtype=np.int64, endpoint=True)
    small = rng.integers(-3, 4, size=(3, n)).astype(np.int32)
    assert_close(xp.cumulative_sum(xp.asarray(a), axis=0), np.cumsum(a, axis=0))      # wraps
    assert_close(xp.cumulative_prod(xp.asarray(a), axis=0), np.cumprod(a, axis=0))    # wraps (to 0 soon)
    assert_close(xp.cumulative_sum(xp.asarray(small), axis=1, include_initial=True),
                 np.cumulative_sum(small, axis=1, include_initial=True))
    assert_close(xp.cumulative_prod(xp.asarray(small), axis=-1, dtype=xp.int8),
                 np.cumprod(small, axis=-1, dtype=np.int8))


def test_many_rows_of_a_short_axis_take_blocks():
    rng = np.random.default_rng(0)
    a = rng.integers(-1000, 1000, size=(3000, statistics._SCAN_SHORT + 25), dtype=np.int64)
    assert a.size * a.shape[1] > statistics._SCAN_TRIANGLE_WORK   # too much work for one triangle
    assert_close(xp.cumulative_sum(xp.asarray(a), axis=1), np.cumsum(a, axis=1))
    b = rng.random((3000, statistics._SCAN_SHORT + 25))
    assert_close(xp.cumulative_prod(xp.asarray(b), axis=-1), np.cumprod(b, axis=-1), rtol=1e-12)


@pytest.mark.parametrize("n", [statistics._SCAN_TRIANGLE + 1, 1000, 100_003])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_axes_of_floats_are_close(n, dtype):
    rng = np.random.default_rng(n)
    a = rng.random(n).astype(dtype)
    exact = np.cumsum(a.astype(np.float64))
    got = np.asarray(xp.cumulative_sum(xp.asarray(a)))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, exact, rtol=1e-5 if dtype == np.float32 else 1e-12)
    # a product that stays in range: each output has as many roundings in its history as NumPy's
    # sequential product (the blocks' totals are rounded too), so its error is NumPy's order
    f = np.exp(rng.standard_normal(n) * 0.01).astype(dtype)
    exact = np.cumprod(f.astype(np.longdouble))
    ours = np.max(np.abs(np.asarray(xp.cumulative_prod(xp.asarray(f))) / exact - 1))
    numpys = np.max(np.abs(np.cumprod(f) / exact - 1))
    assert ours <= 4 * numpys + 4 * np.finfo(dtype).eps, (ours, numpys)


def test_long_complex_axis():
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(300) + 1j * rng.standard_normal(300)).astype(np.complex128)
    assert_close(xp.cumulative_sum(xp.asarray(a)), np.cumsum(a), rtol=1e-12, atol=1e-12)
    b = np.exp(1j * rng.standard_normal(300))   # on the unit circle: the product stays there
    assert_close(xp.cumulative_prod(xp.asarray(b)), np.cumprod(b), rtol=1e-10, atol=1e-12)


def test_a_moderate_scan_takes_few_kernels():
    x = xp.asarray(np.ones((64, 300), dtype=np.float32))
    for fn in OURS.values():
        assert len(fn(x, axis=1).schedule()) <= 5     # blocks: two kernels a level
        assert len(fn(x[:8], axis=0).schedule()) == 1  # short: one triangle
        assert len(fn(x[0, :64]).schedule()) == 1


# ---- NumPy's names ---------------------------------------------------------------------------------

def test_numpy_cumsum_and_cumprod():
    a = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    t = xp.asarray(a)
    for name in ("cumsum", "cumprod"):
        ref = getattr(np, name)
        assert_close(getattr(xp, name)(t), ref(a))                     # axis None: flattened
        assert_close(getattr(xp, name)(t, axis=1), ref(a, axis=1))
        assert_close(getattr(xp, name)(t, 0, xp.float64), ref(a, 0, np.float64))
        assert_close(getattr(xp, name)(xp.asarray(5)), ref(np.asarray(5)))
        assert_close(getattr(t, name)(axis=-1), getattr(a, name)(axis=-1))
        assert_close(getattr(t, name)(), getattr(a, name)())
        lazy = ref(t, axis=0)     # NumPy's function on a Tensor stays lazy
        assert isinstance(lazy, xp.Tensor)
        assert_close(lazy, ref(a, axis=0))


# ---- gradients -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "prod"])
@given(data=st.data())
def test_gradients_against_finite_differences(name, data):
    a = data.draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
                             elements=st.floats(-2, 2, allow_subnormal=False)))
    # (no subnormals: a product's local gradient divides the product by the element, which a
    # subnormal element makes inexact)
    if name == "prod" and data.draw(st.booleans()):   # zeros: the gradient of a product through them
        a = np.where(np.arange(a.size).reshape(a.shape) % 3 == 1, 0.0, a)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    include_initial = data.draw(st.booleans())
    check_gradient(lambda x: OURS[name](x, axis=axis, include_initial=include_initial), a)


@pytest.mark.parametrize("name", ["sum", "prod"])
def test_gradients_through_blocks(name):
    rng = np.random.default_rng(3)
    a = 1 + (rng.random((2, 150)) - 0.5) / 4
    a[0, [3, 77, 140]] = 0.0
    a[1, 100] = 0.0
    check_gradient(lambda x: OURS[name](x, axis=1), a)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("n", [7, statistics._SCAN_TRIANGLE * 5 + 3])
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_gradients_match_pytorch(name, n):
    rng = np.random.default_rng(n)
    a = 1 + (rng.random((3, n)) - 0.5) / 2
    a[0, 2] = 0.0                       # one zero
    a[1, [1, n - 2]] = 0.0              # two zeros
    w = rng.standard_normal((3, n))
    x = xp.asarray(a, requires_grad=True)
    (OURS[name](x, axis=1) * xp.asarray(w)).sum().backward()
    t = torch.tensor(a, requires_grad=True)
    ({"sum": torch.cumsum, "prod": torch.cumprod}[name](t, 1) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_gradients_of_a_long_axis():
    # the levels' buffers hold their adjoints too: fused, the backward pass of a long product
    # nested each level's reductions in one kernel (seconds at this length)
    rng = np.random.default_rng(5)
    n = 20_000
    a = np.exp(rng.standard_normal(n) * 0.01)
    w = rng.standard_normal(n)
    for name in OURS:
        x = xp.asarray(a, requires_grad=True)
        (OURS[name](x) * xp.asarray(w)).sum().backward()
        if name == "sum":   # d/dx_j Σ_i w_i·out_i = Σ_{i≥j} w_i
            want = np.cumsum(w[::-1])[::-1]
        else:               # Σ_{i≥j} w_i·out_i / x_j
            want = np.cumsum((w * np.cumprod(a))[::-1])[::-1] / a
        np.testing.assert_allclose(np.asarray(x.grad), want, rtol=1e-9, atol=1e-9)
