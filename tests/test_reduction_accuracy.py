"""float32 reductions are as accurate as NumPy's: sum, mean, var, std, prod, matmul and vecdot
against a float64 reference, at 10^4, 10^6 and 10^7 elements, over all axes and along rows and
columns, on the test run's device (the CPU pass and the OpenCL pass).

The bound is NumPy's own error (pairwise sums; for matmul, BLAS) times FACTOR plus FLOOR, one ulp
relative (2^-23): the rounding of the sum and of the division after it (mean, var), which no
summation order avoids, while NumPy's error is sometimes far smaller by luck. The error of an
array result is its largest relative error. Data are chosen where order matters: values far
from 0 compared with their spread (1000 + U(0, 1)) for mean, var and std, factors near 1 for
prod (no overflow). Long sums with special values keep NumPy's results (inf, -inf, nan), also
where a block of the blocked sum overflows."""
import zlib

import numpy as np
import pytest

import lazyarr as xp
from lazyarr.runtime.cpu_compiler import wait_for_optimised

FACTOR = 3.0
FLOOR = 2.0 ** -23


def rel_error(got, ref) -> float:
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    return float(np.max(np.abs(got - ref) / np.abs(ref)))


_data: dict = {}


def data(kind: str, shape: tuple[int, ...]) -> np.ndarray:
    """Seeded float32 data of a kind, made once per run."""
    key = (kind, shape)
    if key not in _data:
        rng = np.random.default_rng(zlib.crc32(repr(key).encode()))
        if kind == "uniform":
            x = rng.uniform(0, 1, shape)
        elif kind == "offset":      # far from 0 compared with the spread
            x = 1000 + rng.uniform(0, 1, shape)
        else:                       # factors near 1 whose product stays near 1
            x = 1 + rng.uniform(-1, 1, shape) / np.sqrt(shape[-1])
        _data[key] = x.astype(np.float32)
    return _data[key]


KIND = {"sum": "uniform", "mean": "offset", "var": "offset", "std": "offset", "prod": "factors"}


def check(name: str, got, numpy_f32, ref) -> None:
    ours, theirs = rel_error(got, ref), rel_error(numpy_f32, ref)
    assert ours <= FACTOR * theirs + FLOOR, f"{name}: relative error {ours:.3g}, NumPy's {theirs:.3g}"


@pytest.mark.parametrize("n", [10_000, 1_000_000, 10_000_000])
@pytest.mark.parametrize("fn", ["sum", "mean", "var", "std", "prod"])
def test_full_reduction(fn, n):
    x = data(KIND[fn], (n,))
    got = getattr(xp, fn)(xp.asarray(x)).numpy()
    check(f"{fn} of {n}", got, getattr(np, fn)(x), getattr(np, fn)(x.astype(np.float64)))


@pytest.mark.parametrize("shape", [(500, 4096), (4096, 500)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("fn", ["sum", "mean", "var", "std", "prod"])
def test_along_axis(fn, shape, axis):
    kind = KIND[fn]
    x = data(kind, shape) if kind != "factors" or axis == 1 else data(kind, shape[::-1]).T.copy()
    got = getattr(xp, fn)(xp.asarray(x), axis=axis).numpy()
    check(f"{fn} of {shape} along {axis}", got, getattr(np, fn)(x, axis=axis),
          getattr(np, fn)(x.astype(np.float64), axis=axis))


@pytest.mark.parametrize("m, k, n", [(8, 131072, 8), (16, 8192, 64)])   # (shapes OpenBLAS runs on one thread:
def test_matmul_long_inner_dimension(m, k, n):                           # its threads spin on a busy machine)
    a, b = data("uniform", (m, k)), data("uniform", (k, n))
    got = (xp.asarray(a) @ xp.asarray(b)).numpy()
    check(f"matmul {m}x{k}x{n}", got, a @ b, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("shape", [(1_000_000,), (3_000_017,), (4096, 500), (16, 100_000)])
@pytest.mark.parametrize("fn", ["exp", "sin"])
def test_sum_of_a_transcendental(fn, shape):
    """Sums whose values are float32 code of their own, which the CPU sums in scalar blocks: gcc
    splits a block of 128 over vector lanes, tcc's first tier runs blocks of 16 as a plain loop.
    Both tiers' results (the first call's, and one after the optimised object is in), along the
    last axis; the reference sums the correctly rounded values in float64."""
    x = data("uniform", shape)
    a, f = xp.asarray(x), getattr(xp, fn)
    first = [xp.sum(f(a), axis=-1).numpy() for _ in range(3)][0]
    wait_for_optimised()
    later = xp.sum(f(a), axis=-1).numpy()
    ref = np.sum(getattr(np, fn)(x.astype(np.float64)).astype(np.float32).astype(np.float64), axis=-1)
    for got in (first, later):
        check(f"sum of {fn} of {shape}", got, np.sum(getattr(np, fn)(x), axis=-1), ref)


@pytest.mark.parametrize("shape", [(1_000_000,), (16, 100_000)])
def test_vecdot(shape):
    a, b = data("uniform", shape), data("offset", shape)
    got = xp.vecdot(xp.asarray(a), xp.asarray(b)).numpy()
    check(f"vecdot {shape}", got, np.vecdot(a, b), np.sum(a.astype(np.float64) * b, axis=-1))


@pytest.mark.parametrize("n", [5003, 1_000_003])   # prime lengths: a short last block
def test_sums_of_other_lengths(n):
    x = data("offset", (n,))
    check(f"sum of {n}", xp.sum(xp.asarray(x)).numpy(), np.sum(x), np.sum(x.astype(np.float64)))
    check(f"mean of {n}", xp.mean(xp.asarray(x)).numpy(), np.mean(x), np.mean(x.astype(np.float64)))


@pytest.mark.parametrize("n", [3000, 1_000_000])
def test_long_sums_keep_special_values(n):
    def total(values: dict) -> float:
        x = np.ones(n, np.float32)
        for i, v in values.items():
            x[i] = v
        with np.errstate(all="ignore"):
            want = np.sum(x)
        got = xp.sum(xp.asarray(x)).numpy()
        np.testing.assert_array_equal(got, want)
        return float(got)
    assert total({n // 2: np.inf}) == np.inf
    assert total({7: -np.inf}) == -np.inf
    assert np.isnan(total({5: np.inf, n - 3: -np.inf}))
    assert np.isnan(total({n // 3: np.nan}))
    big = np.finfo(np.float32).max
    assert total({i: big for i in range(0, n, n // 4)}) == np.inf      # overflows to inf
    assert total({i: -big for i in range(1, n, n // 4)}) == -np.inf


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("how", ["plain", "transposed", "bias", "grad"])
def test_products_with_packed_panels(dt, how, monkeypatch):
    """Products large enough that the CPU packs B's columns into contiguous panels first
    (linear_algebra.PACK_FROM: k of 2048 and more), operands made plainly or as transposed views,
    with a bias and relu fused after, and the gradient through them: NumPy's values (its BLAS's
    accuracy bound, as the other products here), on every device (others take the plain path)."""
    from lazyarr import linear_algebra
    n, k, m = 256, 2048, 160
    assert linear_algebra._packs(n, k, m, xp.asarray(np.zeros(1, dt)).dtype)
    a = data("uniform", (n, k)).astype(dt)
    b = data("uniform", (k, m)).astype(dt)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if how == "transposed":   # views of transposed storage
        got = (xp.matrix_transpose(xp.asarray(np.ascontiguousarray(a.T))) @ xp.asarray(b)).numpy()
    elif how == "bias":
        bias = data("offset", (m,)).astype(dt)
        got = xp.maximum(xp.asarray(a) @ xp.asarray(b) + xp.asarray(bias), 0).numpy()
        ref = np.maximum(ref + bias, 0)
    elif how == "grad":       # d sum(w * (a @ b)) / da = w @ b.T
        w = data("offset", (n, m)).astype(dt)
        ta = xp.asarray(a, requires_grad=True)
        xp.sum(xp.asarray(w) * (ta @ xp.asarray(b))).backward()
        got, ref = np.asarray(ta.grad), w.astype(np.float64) @ b.T.astype(np.float64)
    else:
        from tests.helpers import watch_launches
        kernels = []
        watch_launches(monkeypatch, kernels.extend)
        got = (xp.asarray(a) @ xp.asarray(b)).numpy()
        if xp.asarray(a).device.host_memory:   # the panels, their products, the result back
            assert len(kernels) == 3, kernels
    assert got.dtype == dt
    numpy = {"grad": lambda: w @ b.T, "bias": lambda: np.maximum(a @ b + bias, 0)}.get(how, lambda: a @ b)()
    check(f"packed product {how} {dt.__name__}", got, numpy, ref)
