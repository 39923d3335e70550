"""Sorting (the counting sort, the device's sort for longer axes: the radix sort on the CPU and
PoCL, the network on GPUs, and the network forced on every device), unique_* and isin against
NumPy, over dtypes, shapes (each sort's sizes, the network's padding to a power of two), axes,
NaNs, ties and inputs made several ways."""
import zlib

import numpy as np
import pytest

import lazyarr as xp

DTYPES = ["bool", "int8", "uint8", "int32", "uint32", "int64", "float32", "float64"]
SIZES = [1, 2, 3, 7, 16, 17, 64, 100]   # the counting sort (up to 256 elements)
NETWORK_SIZES = [257, 1000]             # the device's sort (the network pads them to 512 and 1024)
# the network's comparisons differ by kind only: its sizes for one dtype of each (each dtype's
# kernels are compiled anew, which costs minutes on OpenCL)
NETWORK_DTYPES = {"bool", "uint8", "int32", "float32"}


def sample(rng, shape, dtype, ties=True):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("float"):
        v = rng.integers(-4, 5, shape).astype(dtype) if ties else rng.standard_normal(shape).astype(dtype)
        flat = v.reshape(-1)
        if flat.size > 3:
            flat[rng.integers(0, flat.size, 2)] = np.nan
            flat[rng.integers(0, flat.size)] = -np.inf
        return v
    info = np.iinfo(dtype)
    lo, hi = (0, 7) if ties else (max(info.min, -1000), min(info.max, 1000))
    return rng.integers(lo, hi, shape).astype(dtype) if not ties else rng.integers(lo, hi, shape).astype(dtype)


def made(a, how):
    if how == "asarray":
        return xp.asarray(a)
    if how == "computed":     # a lazy graph, never realized before the sort
        t = xp.asarray(a)
        return t if a.dtype == np.bool_ else xp.where(xp.asarray(np.ones(a.shape, bool)), t, t)
    if how == "view":         # a strided, reversed view
        return xp.flip(xp.asarray(np.ascontiguousarray(np.flip(a, -1))), axis=-1)
    raise ValueError(how)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("how", ["asarray", "computed", "view"])
def test_sort_and_argsort_match_numpy(dtype, how):
    rng = np.random.default_rng(zlib.crc32(f"{dtype} {how}".encode()))
    for n in SIZES + (NETWORK_SIZES if dtype in NETWORK_DTYPES else []):
        a = sample(rng, (n,), dtype)
        x = made(a, how)
        np.testing.assert_array_equal(np.asarray(xp.sort(x)), np.sort(a), err_msg=f"n={n}")
        got = np.asarray(xp.argsort(x))
        np.testing.assert_array_equal(got, np.argsort(a, kind="stable"), err_msg=f"n={n}")
        assert xp.argsort(x).dtype == xp.int64


@pytest.mark.parametrize("dtype", sorted(NETWORK_DTYPES))
def test_the_network_sorts_as_numpy(network, dtype):
    rng = np.random.default_rng(zlib.crc32(f"network {dtype}".encode()))
    for n in NETWORK_SIZES:
        a = sample(rng, (2, n), dtype)
        x = made(a, "view")
        np.testing.assert_array_equal(np.asarray(xp.sort(x)), np.sort(a), err_msg=f"n={n}")
        np.testing.assert_array_equal(np.asarray(xp.argsort(x)), np.argsort(a, kind="stable"), err_msg=f"n={n}")
        picked = np.take_along_axis(a, np.asarray(xp.argsort(x, descending=True)), -1)
        np.testing.assert_array_equal(picked, np.flip(np.sort(a), -1))
    z = (rng.integers(0, 3, 300) + 1j * rng.integers(0, 3, 300)).astype(np.complex64)
    np.testing.assert_array_equal(np.asarray(xp.sort(xp.asarray(z))), np.sort(z))


def test_the_network_is_one_kernel_run_once_a_stage(network):
    """Every stage runs the same compiled kernel (its (k, j) in a buffer): a GPU compiles one."""
    x = xp.asarray(np.random.default_rng(3).standard_normal((2, 3000)).astype(np.float32))
    names = [item.name for item in xp.sort(x).schedule()]
    stages = [n for n in names if n.startswith("bitonic")]
    assert len(stages) == 12 * 13 // 2 and len(set(stages)) == 1, names   # 3000 pads to 4096
    assert len(names) <= len(stages) + 2   # and the keys (the values come back in what reads them)
    z = np.array([0.0, -0.0, np.nan, -np.nan, -1.0] * 100)
    got = xp.sort(xp.asarray(z)).numpy()
    assert np.array_equal(np.signbit(got[100:300]), [True] * 100 + [False] * 100)   # -0.0 first


@pytest.mark.parametrize("sorts", ["device", "network"])
def test_sorting_keeps_negative_zeros(request, sorts):
    """-0.0 and 0.0 compare equal, but a sort keeps each (counting, radix and network sorts; their
    order among themselves is unspecified, as the standard leaves it)."""
    if sorts == "network":
        request.getfixturevalue("network")
    for dtype in ["float16", "float32", "float64"]:
        for n in [5, 100, 3000]:
            z = np.resize(np.array([0.0, -0.0, np.nan, -1.0, 2.0], dtype), n)
            got = xp.sort(xp.asarray(z)).numpy()
            np.testing.assert_array_equal(got, np.sort(z))
            zeros = got[got == 0]
            assert np.signbit(zeros).sum() == np.signbit(z[z == 0]).sum(), (dtype, n)


@pytest.mark.parametrize("how", ["asarray", "ones", "full", "computed"])
def test_gradients_through_the_network_match_pytorch(network, how):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    data, w = (rng.standard_normal((3, 400)).astype(np.float32) for _ in range(2))
    make = {"asarray": lambda: xp.asarray(np.ones(data.shape, np.float32), requires_grad=True),
            "ones": lambda: xp.ones(data.shape).requires_grad_(),
            "full": lambda: xp.full(data.shape, 1.0, requires_grad=True),
            "computed": lambda: xp.ones(data.shape).requires_grad_()}
    p, t = make[how](), torch.ones(data.shape, requires_grad=True)
    for axis in (0, -1):
        p.grad = t.grad = None
        q = p * 2 - 1 if how == "computed" else p   # a lazy expression of the parameter
        tq = t * 2 - 1 if how == "computed" else t
        ((xp.sort(q * xp.asarray(data), axis=axis) ** 2) * xp.asarray(w)).sum().backward()
        ((torch.sort(tq * torch.tensor(data), dim=axis).values ** 2) * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_sorting_along_each_axis_and_descending(dtype):
    rng = np.random.default_rng(7)
    for shape in [(3, 5, 4), (2, 300), (40, 3)]:
        a = sample(rng, shape, dtype)
        for axis in range(-len(shape), len(shape)):
            x = xp.asarray(a)
            np.testing.assert_array_equal(np.asarray(xp.sort(x, axis=axis)), np.sort(a, axis=axis))
            np.testing.assert_array_equal(np.asarray(xp.argsort(x, axis=axis)), np.argsort(a, axis=axis, kind="stable"))
            # descending: the reverse order (NaNs first), equal elements in their original order
            want = np.flip(np.sort(a, axis=axis), axis=axis)
            np.testing.assert_array_equal(np.asarray(xp.sort(x, axis=axis, descending=True)), want)
            order = np.asarray(xp.argsort(x, axis=axis, descending=True))
            picked = np.take_along_axis(a, order, axis=axis)
            np.testing.assert_array_equal(picked, want)
            moved = np.moveaxis(order, axis, -1).reshape(-1, a.shape[axis])
            vals = np.moveaxis(picked, axis, -1).reshape(-1, a.shape[axis])
            for row, v in zip(moved, vals):   # stable: positions increase within each run of equals
                same = (v[1:] == v[:-1]) | (np.isnan(v[1:]) & np.isnan(v[:-1]))
                assert np.all(row[1:][same] > row[:-1][same])


def test_sort_results_stay_lazy_and_empty_and_0d_cases():
    x = xp.asarray(np.array([3.0, 1.0, 2.0]))
    y = xp.sort(x) * 2 + 1
    np.testing.assert_array_equal(np.asarray(y), [3.0, 5.0, 7.0])
    assert xp.sort(xp.zeros((0, 3))).shape == (0, 3)
    assert xp.argsort(xp.zeros((2, 0))).shape == (2, 0)
    with pytest.raises(ValueError, match="0-dimensional"):
        xp.sort(xp.asarray(1.0))
    with pytest.raises(np.exceptions.AxisError):
        xp.sort(xp.ones(3), axis=1)


def test_numpy_spellings():
    a = np.array([[3, 1, 2], [9, 7, 8]])
    x = xp.asarray(a)
    for kind in [None, "quicksort", "mergesort", "heapsort", "stable"]:
        np.testing.assert_array_equal(np.asarray(xp.sort(x, kind=kind)), np.sort(a, kind=kind))
    np.testing.assert_array_equal(np.asarray(np.sort(x, axis=None)), np.sort(a, axis=None))
    np.testing.assert_array_equal(np.asarray(np.argsort(x, axis=0)), np.argsort(a, axis=0))
    np.testing.assert_array_equal(np.asarray(x.argsort()), a.argsort())
    y = xp.asarray(a.copy())
    assert y.sort() is None
    np.testing.assert_array_equal(np.asarray(y), np.sort(a))
    p = np.asarray(xp.partition(x, 1))
    assert np.all(p[:, :1] <= p[:, 1:2]) and np.all(p[:, 1:2] <= p[:, 2:])
    q = np.asarray(xp.argpartition(x, 1, axis=1))
    np.testing.assert_array_equal(np.take_along_axis(a, q, 1)[:, 1], np.partition(a, 1)[:, 1])
    with pytest.raises(ValueError, match="kind"):
        xp.sort(x, kind="bogo")
    with pytest.raises(ValueError, match="out of bounds"):
        xp.partition(x, 3)
    with pytest.raises(TypeError, match="axis"):
        y.sort(axis=None)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_functions_match_numpy(dtype):
    rng = np.random.default_rng(zlib.crc32(dtype.encode()))
    for shape in [(1,), (9,), (4, 5), (300,), (0,), (2, 0, 3)]:
        a = sample(rng, shape, dtype)
        x = xp.asarray(a)
        v, i, inv, c = np.unique(a.reshape(-1), return_index=True, return_inverse=True, return_counts=True,
                                 equal_nan=False)
        r = xp.unique_all(x)
        np.testing.assert_array_equal(np.asarray(r.values), v)
        np.testing.assert_array_equal(np.asarray(r.indices), i)
        np.testing.assert_array_equal(np.asarray(r.counts), c)
        assert r.inverse_indices.shape == a.shape
        np.testing.assert_array_equal(np.asarray(r.inverse_indices).reshape(-1), inv)
        np.testing.assert_array_equal(np.asarray(xp.unique_values(x)), v)
        np.testing.assert_array_equal(np.asarray(xp.unique_counts(x).counts), c)
        np.testing.assert_array_equal(np.asarray(xp.unique_inverse(x).inverse_indices).reshape(-1), inv)


def test_each_nan_is_unique_and_signed_zeros_are_one():
    a = np.array([np.nan, 0.0, -0.0, np.nan, 1.0])
    r = xp.unique_all(xp.asarray(a))
    assert np.asarray(r.values).shape == (4,) and np.isnan(np.asarray(r.values)[2:]).all()
    np.testing.assert_array_equal(np.asarray(r.counts), [2, 1, 1, 1])
    np.testing.assert_array_equal(np.asarray(r.inverse_indices), [2, 0, 0, 3, 1])


def test_isin_matches_numpy():
    rng = np.random.default_rng(11)
    for m, dtypes in [(0, ["int32"]), (1, ["float64"]), (5, ["int32", "float64", "uint8"]),
                      (16, ["uint8"]), (17, ["int32", "float64", "uint8"]), (500, ["int32"])]:
        for dtype in dtypes:
            a = sample(rng, (6, 7), dtype)
            b = sample(rng, (m,), dtype)
            for invert in [False, True]:
                got = xp.isin(xp.asarray(a), xp.asarray(b), invert=invert)
                assert got.dtype == xp.bool and got.shape == a.shape
                np.testing.assert_array_equal(np.asarray(got), np.isin(a, b, invert=invert), err_msg=f"{m} {dtype}")
    assert bool(xp.isin(2, xp.asarray([1, 2]))) and xp.isin(2, xp.asarray([1, 2])).shape == ()
    np.testing.assert_array_equal(np.asarray(xp.isin(xp.asarray([1, 5]), 5)), [False, True])
    z = xp.asarray(np.array([1 + 1j, 2.0]))
    np.testing.assert_array_equal(np.asarray(xp.isin(z, xp.asarray(np.array([2.0 + 0j] * 20)))), [False, True])
    with pytest.raises(TypeError, match="at least one"):
        xp.isin(1, 2)


@pytest.mark.parametrize("n", [5, 40, 300])
def test_complex_arrays_sort_by_real_then_imaginary_part_as_numpy(n):
    rng = np.random.default_rng(n)
    z = (rng.integers(0, 3, (2, n)) + 1j * rng.integers(0, 3, (2, n))).astype(np.complex64)
    x = xp.asarray(z)
    np.testing.assert_array_equal(np.asarray(xp.sort(x)), np.sort(z))
    np.testing.assert_array_equal(np.asarray(xp.argsort(x, axis=0)), np.argsort(z, axis=0, kind="stable"))
    v, inv, c = np.unique(z, return_inverse=True, return_counts=True)
    r = xp.unique_all(x)
    np.testing.assert_array_equal(np.asarray(r.values), v)
    np.testing.assert_array_equal(np.asarray(r.counts), c)
    np.testing.assert_array_equal(np.asarray(r.inverse_indices).reshape(-1), inv.reshape(-1))


def test_isin_takes_a_python_scalar_in_the_arrays_dtype():
    """2**63 fits uint64, not int64 (found by the official suite)."""
    x = xp.asarray([1, 2 ** 63], dtype=xp.uint64)
    np.testing.assert_array_equal(xp.isin(x, 2 ** 63).numpy(), [False, True])
    assert xp.isin(xp.asarray([], dtype=xp.uint64), 2 ** 63).shape == (0,)
    assert bool(xp.isin(3, xp.asarray([1, 3], dtype=xp.int8)))
    with pytest.raises(OverflowError):
        xp.isin(xp.asarray([1], dtype=xp.int8), 1000)
