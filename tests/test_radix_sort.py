"""The radix sort (`lazyarr.radix_sort`), the sort of devices with long loops (the CPU, PoCL): keys
in the sort's order for every real dtype, rows cut into chunks, passes of three kernels, and
gradients through the permutation (a scatter); against NumPy and PyTorch, with inputs made
several ways."""
import numpy as np
import pytest
import torch

import lazyarr as xp
from lazyarr.arrays import wrap
from lazyarr.radix_sort import CHUNK, keys_of, values_of

SPECIAL = {
    "float32": [np.nan, -np.inf, -3.5, -1e-45, -0.0, 0.0, 1e-45, 2.0, np.inf, -np.nan],
    "float64": [np.nan, -np.inf, -1e300, -5e-324, -0.0, 0.0, 5e-324, 7.0, np.inf, -np.nan],
    "int8": [-128, -1, 0, 1, 127], "uint8": [0, 1, 255], "int16": [-32768, -1, 0, 32767],
    "uint16": [0, 65535], "int32": [-2 ** 31, -1, 0, 2 ** 31 - 1], "uint32": [0, 2 ** 32 - 1],
    "int64": [-2 ** 63, -1, 0, 2 ** 63 - 1], "uint64": [0, 2 ** 64 - 1], "bool": [False, True]}


@pytest.fixture
def radix(monkeypatch):
    """Every device sorts by radix in the test (a GPU's OpenCL would otherwise use the network)."""
    monkeypatch.setattr(xp.asarray(1).device, "long_loops", True)


@pytest.mark.parametrize("dtype", sorted(SPECIAL))
@pytest.mark.parametrize("descending", [False, True])
def test_keys_order_values_as_the_sort_does_and_come_back(dtype, descending):
    a = np.array(SPECIAL[dtype], dtype=dtype)
    x = xp.asarray(a)
    keys = wrap(keys_of(x.uop, descending), x.device).numpy()
    assert keys.dtype.kind == "u" and keys.dtype.itemsize == a.dtype.itemsize
    order = np.argsort(a, kind="stable")
    if descending:
        order = order[::-1]
    ranked = keys[order]
    assert np.all(ranked[:-1] <= ranked[1:])   # NaNs (either sign) last, or first descending
    back = wrap(values_of(keys_of(x.uop, descending), x.uop.dtype, descending), x.device).numpy()
    np.testing.assert_array_equal(back, a)   # NaNs compare equal here, and -0.0 keeps its sign:
    if a.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(back[~np.isnan(a)]), np.signbit(a[~np.isnan(a)]))


def made(a: np.ndarray, how: str) -> xp.Tensor:
    if how == "asarray":
        return xp.asarray(a)
    if how == "transposed":   # sorted along a strided axis of a transposed buffer
        return xp.permute_dims(xp.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2))), (1, 0))
    if how == "computed":     # a lazy expression, never realized
        return xp.asarray(a) + xp.zeros(a.shape, dtype=xp.asarray(a).dtype)
    raise ValueError(how)


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint16", "float64"])
@pytest.mark.parametrize("how", ["asarray", "transposed", "computed"])
def test_sort_and_argsort_match_numpy_across_chunks_and_rows(radix, dtype, how):
    rng = np.random.default_rng(len(dtype) * 7 + len(how))
    for n in [300, CHUNK + 1, 2 * CHUNK + 17]:
        if dtype.startswith("float"):
            a = rng.standard_normal((3, n)).astype(dtype)
            a[0, rng.integers(0, n, 5)] = np.nan
            a[1, :n // 2] = a[1, n // 2:n // 2 * 2]   # ties
        else:
            info = np.iinfo(dtype)
            a = rng.integers(info.min, info.max, (3, n), dtype=dtype, endpoint=True)
            a[2] = rng.integers(0, 5, n)            # many ties
        x = made(a, how)
        np.testing.assert_array_equal(xp.sort(x).numpy(), np.sort(a), err_msg=f"n={n}")
        np.testing.assert_array_equal(xp.argsort(x).numpy(), np.argsort(a, kind="stable"), err_msg=f"n={n}")
        got = xp.argsort(x, descending=True).numpy()
        picked = np.take_along_axis(a, got, -1)
        np.testing.assert_array_equal(picked, np.flip(np.sort(a), -1))
        for row, v in zip(got, picked):   # stable: equal values keep their order
            same = (v[1:] == v[:-1]) | (np.isnan(v[1:]) & np.isnan(v[:-1])) if a.dtype.kind == "f" else v[1:] == v[:-1]
            assert np.all(row[1:][same] > row[:-1][same])


def test_complex_values_sort_by_real_then_imaginary_part(radix):
    rng = np.random.default_rng(5)
    z = (rng.integers(0, 4, (2, 700)) + 1j * rng.standard_normal((2, 700))).astype(np.complex64)
    z[0, 3] = complex(np.nan, 1)
    x = xp.asarray(z)
    np.testing.assert_array_equal(xp.sort(x).numpy(), np.sort(z))
    np.testing.assert_array_equal(xp.argsort(x).numpy(), np.argsort(z, kind="stable"))


def test_a_sort_is_a_key_kernel_three_kernels_a_digit_and_the_values(radix):
    x = xp.asarray(np.random.default_rng(0).standard_normal(1 << 16).astype(np.float32))
    names = [item.name for item in xp.sort(x).schedule()]
    assert len(names) == 1 + 4 * 3 + 1, names
    assert [n.split("_")[1] for n in names[1:4]] == ["histogram0", "offsets", "scatter0"]
    assert len(xp.argsort(x).schedule()) == 1 + 4 * 3   # the positions come out of the last scatter


def parameter(shape: tuple[int, ...], how: str) -> tuple[xp.Tensor, torch.Tensor]:
    """A parameter made as users make them, and PyTorch's twin."""
    rng = np.random.default_rng(len(how))
    if how == "asarray":
        a = rng.standard_normal(shape).astype(np.float32)
        return xp.asarray(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    if how == "ones":
        return xp.ones(shape).requires_grad_(), torch.ones(shape, requires_grad=True)
    if how == "full":
        return xp.full(shape, 0.5).requires_grad_(), torch.full(shape, 0.5, requires_grad=True)
    raise ValueError(how)


@pytest.mark.parametrize("how", ["asarray", "ones", "full"])
@pytest.mark.parametrize("axis", [0, -1])
def test_gradients_through_sort_match_pytorch(radix, how, axis):
    rng = np.random.default_rng(9)
    data = rng.standard_normal((3, 400)).astype(np.float32)
    w = rng.standard_normal(data.shape).astype(np.float32)
    p, t = parameter(data.shape, how)
    ((xp.sort(p * xp.asarray(data), axis=axis) ** 2) * xp.asarray(w)).sum().backward()
    ((torch.sort(t * torch.tensor(data), dim=axis).values ** 2) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_the_gradient_of_a_large_sort_is_a_scatter_not_a_one_hot_sum(radix):
    n = 1 << 18   # a one-hot gradient would be n² = 7e10 products
    a = np.random.default_rng(1).permutation(n).astype(np.float32)
    p = xp.asarray(a, requires_grad=True)
    (xp.sort(p) * xp.arange(n, dtype=xp.float32)).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), a)   # the rank of each element
