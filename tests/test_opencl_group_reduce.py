"""Group reductions on OpenCL (lazyarr.compiler.group): long reductions shared by a work-group,
against NumPy, at sizes that are and are not multiples of the group size. Runs in the OpenCL
pass of the suite only (LAZYARR_DEVICE=opencl)."""
import numpy as np
import pytest

import lazyarr as xp
from tests.conftest import DEVICE

pytestmark = pytest.mark.skipif(not DEVICE.startswith("opencl"), reason="group reductions are OpenCL's")

rng = np.random.default_rng(7)
LENGTHS = [256, 257, 1000, 4099]


def sources(y):
    return [k.source for k in y.schedule()]


def test_long_row_sum_uses_local_memory_and_barriers():
    a = rng.standard_normal((8, 5000)).astype(np.float32)
    y = xp.asarray(a).sum(axis=1)
    src = "\n".join(sources(y))
    assert "__local" in src and "barrier(CLK_LOCAL_MEM_FENCE)" in src and " local " in src.splitlines()[0]
    np.testing.assert_allclose(y.numpy(), a.sum(axis=1), rtol=1e-5, atol=1e-4)


def test_short_rows_and_matmul_keep_one_work_item_per_output():
    a = rng.standard_normal((64, 16)).astype(np.float32)
    assert "__local" not in "".join(sources(xp.asarray(a).sum(axis=1)))
    b = rng.standard_normal((300, 300)).astype(np.float32)
    y = xp.asarray(b) @ xp.asarray(b)
    assert "__local" not in "".join(sources(y))
    np.testing.assert_allclose(y.numpy(), b @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_sums_prods_and_means(n, dtype):
    a = rng.standard_normal((5, n)).astype(dtype)
    x = xp.asarray(a)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(x.sum(axis=1).numpy(), a.sum(axis=1), rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(x.mean(axis=-1).numpy(), a.mean(axis=-1), rtol=tol, atol=tol)
    p = (1 + a / n).astype(dtype)
    np.testing.assert_allclose(xp.prod(xp.asarray(p), axis=1).numpy(), p.prod(axis=1), rtol=tol * 10)


@pytest.mark.parametrize("n", LENGTHS)
def test_max_min_propagate_nan(n):
    a = rng.standard_normal((6, n)).astype(np.float32)
    a[1, n - 1] = np.nan
    a[2, 0] = np.nan
    a[3, n // 2] = np.inf
    a[4, 3] = -np.inf
    x = xp.asarray(a)
    np.testing.assert_array_equal(xp.max(x, axis=1).numpy(), a.max(axis=1))
    np.testing.assert_array_equal(xp.min(x, axis=1).numpy(), a.min(axis=1))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
def test_integer_sums_wrap_and_extrema(dtype):
    info = np.iinfo(dtype)
    a = rng.integers(info.min // 2, info.max // 2, size=(4, 3001), dtype=dtype, endpoint=True)
    a[0, :] = info.max   # a sum that wraps
    x = xp.asarray(a)
    s = x.sum(axis=1)
    np.testing.assert_array_equal(s.numpy(), a.sum(axis=1, dtype=np.dtype(s.dtype.np if hasattr(s.dtype, "np") else s.dtype)))
    np.testing.assert_array_equal(xp.max(x, axis=1).numpy(), a.max(axis=1))
    np.testing.assert_array_equal(xp.min(x, axis=1).numpy(), a.min(axis=1))


@pytest.mark.parametrize("n", [300, 4099])
def test_bool_any_all(n):
    a = np.zeros((4, n), dtype=bool)
    a[1, n - 1] = True
    a[2, :] = True
    a[3, :] = True
    a[3, 0] = False
    x = xp.asarray(a)
    np.testing.assert_array_equal(xp.any(x, axis=1).numpy(), a.any(axis=1))
    np.testing.assert_array_equal(xp.all(x, axis=1).numpy(), a.all(axis=1))


def test_empty_reductions():
    np.testing.assert_array_equal(xp.asarray(np.zeros((4, 0), np.float32)).sum(axis=1).numpy(), np.zeros(4))
    assert xp.asarray(np.zeros((0, 1000), np.float32)).sum(axis=1).shape == (0,)
    np.testing.assert_array_equal(xp.max(xp.asarray(np.ones((3, 0, 2000), np.float32)), axis=2).numpy(),
                                  np.ones((3, 0)))


def test_full_sums_and_several_reduced_axes():
    a = rng.standard_normal((3, 50, 777)).astype(np.float32)
    x = xp.asarray(a)
    np.testing.assert_allclose(float(x.sum()), a.astype(np.float64).sum(), rtol=1e-4)
    np.testing.assert_allclose(x.sum(axis=(1, 2)).numpy(), a.sum(axis=(1, 2)), rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(x.sum(axis=2).numpy(), a.sum(axis=2), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(x.sum(axis=0).numpy(), a.sum(axis=0), rtol=1e-4, atol=1e-4)
    b = rng.standard_normal(300001).astype(np.float32)
    np.testing.assert_allclose(float(xp.asarray(b).sum()), b.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)


def test_fused_elementwise_before_and_after():
    a = rng.standard_normal((7, 2500)).astype(np.float32)
    x = xp.asarray(a)
    y = xp.sqrt((xp.exp(x * 0.5) + 1).sum(axis=1)) * 3
    np.testing.assert_allclose(y.numpy(), np.sqrt((np.exp(a * 0.5) + 1).sum(axis=1)) * 3, rtol=1e-5)


@pytest.mark.parametrize("n", [257, 4096])
def test_softmax_and_layer_norm_rows(n):
    a = (rng.standard_normal((9, n)) * 4).astype(np.float32)
    x = xp.asarray(a)
    m = x - xp.max(x, axis=1, keepdims=True)
    y = xp.exp(m) / xp.exp(m).sum(axis=1, keepdims=True)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    mu = x.mean(axis=1, keepdims=True)
    ln = (x - mu) / xp.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    ref = (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln.numpy(), ref, rtol=1e-4, atol=1e-4)



def test_more_group_loops_than_grid_dimensions():
    a = rng.standard_normal((3, 4, 5, 700)).astype(np.float32)
    x = xp.asarray(a)
    np.testing.assert_allclose(x.sum(axis=-1).numpy(), a.sum(axis=-1), rtol=1e-4, atol=1e-4)
    m = x - xp.max(x, axis=-1, keepdims=True)
    np.testing.assert_allclose(m.numpy(), a - a.max(axis=-1, keepdims=True), rtol=1e-6)


def test_matmul_register_tile_with_odd_sizes():
    a = rng.standard_normal((36, 70)).astype(np.float32)
    b = rng.standard_normal((70, 33)).astype(np.float32)
    np.testing.assert_allclose((xp.asarray(a) @ xp.asarray(b)).numpy(), a @ b, rtol=1e-4, atol=1e-4)
    b = rng.standard_normal((70, 32)).astype(np.float32)
    np.testing.assert_allclose((xp.asarray(a) @ xp.asarray(b)).numpy(), a @ b, rtol=1e-4, atol=1e-4)
    c = rng.standard_normal((2, 8, 300)).astype(np.float32)
    d = rng.standard_normal((2, 300, 5)).astype(np.float32)
    np.testing.assert_allclose((xp.asarray(c) @ xp.asarray(d)).numpy(), c @ d, rtol=1e-4, atol=1e-4)


def test_an_elementwise_kernel_spreads_its_longest_loops_over_work_items():
    """A stage of a sort, (16, 2, 32768), spreads the 16 and the 32768 (not the 16 and the 2, which
    would leave 32 work-items each looping over 32768 elements)."""
    a = rng.standard_normal((16, 2, 32768)).astype(np.float32)
    y = xp.flip(xp.asarray(a), axis=1) * 2
    lines = [s.splitlines()[0] for s in sources(y)]
    assert any(line.split("launch ")[1].split()[:2] == ["32768", "16"] for line in lines), lines
    np.testing.assert_array_equal(y.numpy(), np.flip(a, axis=1) * 2)
