"""Data-dependent shapes (nonzero, boolean-mask reads, one-argument where, argwhere, flatnonzero)
and sorted search (searchsorted, digitize) against NumPy, with inputs made every way a user makes
them, gradients through masks against PyTorch and finite differences, and NumPy's errors."""
import zlib

import numpy as np
import pytest
import torch

import lazyarr as xp
from tests.test_autograd import check_gradient

DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float32", "float64", "complex64"]


def made(a: np.ndarray, how: str):
    """The array a as a user might make it: from NumPy, as a lazy computation, a view, a list."""
    if how == "asarray":
        return xp.asarray(a)
    if how == "list":
        return xp.asarray(a.tolist(), dtype=getattr(xp, str(a.dtype)))
    if how == "computed":   # never realized: the mask's count and positions come from a graph
        t = xp.asarray(a)
        return t if a.dtype == np.bool_ else (t * 1 + xp.zeros_like(t)).astype(t.dtype)
    if how == "transposed_back":   # a non-contiguous view
        return xp.permute_dims(xp.asarray(np.ascontiguousarray(a.T)), tuple(reversed(range(a.ndim))))
    raise ValueError(how)


HOWS = ["asarray", "list", "computed", "transposed_back"]


def sample(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.4
    v = rng.integers(-2, 3, shape) * (rng.random(shape) < 0.5)
    if dtype.startswith("complex"):
        return (v + 1j * rng.integers(0, 2, shape) * (rng.random(shape) < 0.3)).astype(dtype)
    return np.abs(v).astype(dtype) if dtype.startswith("u") else v.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("how", HOWS)
def test_nonzero_matches_numpy(dtype, how):
    rng = np.random.default_rng(zlib.crc32(f"{dtype} {how}".encode()))
    for shape in [(1,), (7,), (3, 5), (2, 3, 4), (0,), (4, 0, 2), (1, 1)]:
        if how == "list" and 0 in shape[1:]:
            continue   # a nested list of empty lists loses the axes after the empty one
        a = sample(rng, shape, dtype)
        got = xp.nonzero(made(a, how))
        want = np.nonzero(a)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == xp.int64
            np.testing.assert_array_equal(np.asarray(g), w)
    none = np.zeros((3, 4), dtype)
    assert all(t.shape == (0,) for t in xp.nonzero(xp.asarray(none)))


def test_nonzero_results_stay_lazy_downstream():
    x = xp.asarray(np.array([[0., 2.], [3., 0.]]))
    rows, cols = xp.nonzero(x)
    y = rows * 10 + cols            # not computed until read
    assert not y.is_realized if hasattr(y, "is_realized") else True
    np.testing.assert_array_equal(np.asarray(y), [1, 10])


def test_nonzero_of_0d_raises_valueerror():
    with pytest.raises(ValueError, match="0-dimensional"):
        xp.nonzero(xp.asarray(3.0))


KEYS = [
    lambda a, m: (m(a[..., 0] > 0),),
    lambda a, m: (m(a > 0),),
    lambda a, m: (slice(None), m(a[0, :, 0] > 0)),
    lambda a, m: (m(a[:, :, 0] > 0), slice(1, 3)),
    lambda a, m: (Ellipsis, m(a[0, 0] > 0)),
    lambda a, m: (None, m(a[:, 0, 0] > 0), Ellipsis, None),
    lambda a, m: (slice(None, None, -1), m(a[0, :, 0] > 0), slice(0, 4, 2)),
    lambda a, m: (0, m(a[0, :, 0] > 0)),                          # with an integer
    lambda a, m: (slice(None), m(a[0, :, 0] > 0), [0, 3]),        # with an integer array
    lambda a, m: (m(a[:, 0, 0] > 0), slice(None), np.array([1, 2])),
    lambda a, m: (True,),
    lambda a, m: (False,),
    lambda a, m: (slice(None), True, 1),
    lambda a, m: (m(np.zeros(a.shape[:2], bool)),),               # selects nothing
]


@pytest.mark.parametrize("key", range(len(KEYS)))
@pytest.mark.parametrize("how", ["asarray", "computed", "list_mask", "numpy_mask"])
def test_mask_reads_match_numpy(key, how):
    rng = np.random.default_rng(key)
    a = rng.standard_normal((4, 3, 4))
    as_mask = {"asarray": xp.asarray, "computed": lambda m: xp.asarray(m) & True,
               "list_mask": lambda m: m.tolist(), "numpy_mask": lambda m: m}[how]
    np_key = KEYS[key](a, lambda m: m)
    la_key = tuple(as_mask(k) if isinstance(k, np.ndarray) and k.dtype == bool else k for k in KEYS[key](a, lambda m: m))
    x = xp.asarray(a) if how != "computed" else xp.asarray(a) * 1.0
    want = a[np_key]
    got = x[la_key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def test_a_masked_read_fuses_with_the_work_after_it():
    x = xp.asarray(np.arange(10.0))
    z = xp.exp(x[x > 3]) * 2 + 1    # the count is read back here; the rest is lazy
    assert len(z.schedule()) == 1
    np.testing.assert_allclose(np.asarray(z), np.exp(np.arange(4.0, 10.0)) * 2 + 1)


def test_mask_errors_are_numpys():
    x = xp.ones((2, 3))
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0; size of axis "
                                         "is 2 but size of corresponding boolean axis is 3"):
        x[xp.asarray([True, False, True])]
    with pytest.raises(IndexError, match="along axis 1"):
        x[:, np.array([True, False])]
    with pytest.raises(IndexError, match="too many indices"):
        x[np.ones((2, 3), bool), 0]
    with pytest.raises(IndexError, match="integer"):
        x[xp.asarray([0.5])]
    with pytest.raises(IndexError, match="along axis 0"):
        x[np.zeros((1, 3), bool)] = 1.0


@pytest.mark.parametrize("mask_shape", [(2, 0), (0, 3), (0, 0), (0,)])
def test_a_mask_with_an_empty_axis_fits_any_length_and_selects_nothing(mask_shape):
    a = np.arange(6.0).reshape(2, 3)
    mask = np.zeros(mask_shape, bool)
    for key in [mask, (mask, Ellipsis), (None, mask)]:
        lazy_key = tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key) \
            if isinstance(key, tuple) else xp.asarray(key)
        assert xp.asarray(a)[lazy_key].shape == a[key].shape
    t, b = xp.asarray(a), a.copy()
    t[xp.asarray(mask)] = 7.0
    b[mask] = 7.0
    np.testing.assert_array_equal(t.numpy(), b)


PARAMS = {
    "asarray": lambda a: xp.asarray(a),
    "ones_times": lambda a: xp.ones(a.shape, dtype=xp.float64) * xp.asarray(a),
    "full": lambda a: xp.full(a.shape, 0.5, dtype=xp.float64),
    "zeros": lambda a: xp.zeros(a.shape, dtype=xp.float64),
    "arange": lambda a: xp.reshape(xp.arange(a.size, dtype=xp.float64), a.shape) / 7 - 1,
}


@pytest.mark.parametrize("make", PARAMS.values(), ids=PARAMS.keys())
def test_gradients_through_masks_match_pytorch(make):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 6, 3))
    m = a[..., 0] > 0
    w = make(a)
    start = np.asarray(w).copy()
    w.requires_grad_()
    loss = (w[xp.asarray(m)] ** 2 * xp.asarray(np.arange(3.0))).sum() + xp.sin(w[:, m[0]]).sum() \
        + w[m[:, 0], 1:].sum() * 3
    loss.backward()
    t = torch.tensor(start, requires_grad=True)
    tl = (t[torch.tensor(m)] ** 2 * torch.arange(3.0)).sum() + torch.sin(t[:, torch.tensor(m[0])]).sum() \
        + t[torch.tensor(m[:, 0]), 1:].sum() * 3
    tl.backward()
    np.testing.assert_allclose(float(loss), tl.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(w.grad), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_gradients_through_masks_match_finite_differences():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 5))
    m = rng.random((4, 5)) < 0.5
    check_gradient(lambda v: xp.exp(v[xp.asarray(m)]), a)
    check_gradient(lambda v: v[:, m[0]] * v[:, m[1]].sum(), a)
    check_gradient(lambda v: v[xp.nonzero(xp.asarray(m))], a)   # through nonzero's indices


def test_the_gradient_of_a_large_mask_read_is_not_quadratic():
    n = 300_000
    a = np.random.default_rng(3).standard_normal(n)
    x = xp.asarray(a).requires_grad_()
    (x[x > 0.5] * 2).sum().backward()        # a one-hot gradient would be 10^11 operations
    np.testing.assert_array_equal(np.asarray(x.grad), np.where(a > 0.5, 2.0, 0.0))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64", "bool"])
def test_searchsorted_matches_numpy(dtype):
    rng = np.random.default_rng(4)
    for n in [0, 1, 2, 5, 16, 33, 1000]:
        a = np.sort(sample(rng, (n,), dtype) if dtype == "bool" else rng.integers(0, 9, n).astype(dtype))
        if dtype.startswith("float") and n > 3:
            a[-2:] = np.nan                      # sorted: NaNs last, as sort puts them
        v = rng.integers(-1, 11, (3, 4)).astype(dtype)
        if dtype.startswith("float"):
            v[0, 0], v[1, 1] = np.nan, 2.5
        for side in ["left", "right"]:
            got = xp.searchsorted(xp.asarray(a), xp.asarray(v), side=side)
            assert got.dtype == xp.int64 and got.shape == v.shape
            np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, v, side=side), err_msg=f"{n} {side}")


def test_searchsorted_scalars_sorter_and_methods():
    a = np.array([1.0, 2.0, 2.0, 3.0])
    x = xp.asarray(a)
    for v in [2, 2.0, 0, 10, -1.5]:
        for side in ["left", "right"]:
            got = xp.searchsorted(x, v, side=side)
            assert got.shape == () and int(got) == np.searchsorted(a, v, side=side)
    assert int(xp.searchsorted(x, xp.asarray(2.5))) == 3
    unsorted = np.array([3, 1, 2, 5, 4])
    order = np.argsort(unsorted)
    np.testing.assert_array_equal(np.asarray(xp.searchsorted(xp.asarray(unsorted), xp.asarray([0, 3, 6]),
                                                             sorter=xp.asarray(order))),
                                  np.searchsorted(unsorted, [0, 3, 6], sorter=order))
    assert int(x.searchsorted(2, side="right")) == 3
    assert int(np.searchsorted(x, 2)) == 1


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="1-dimensional"):
        xp.searchsorted(xp.ones((2, 2)), 1.0)
    with pytest.raises(ValueError, match="side"):
        xp.searchsorted(xp.ones(2), 1.0, side="middle")
    with pytest.raises(TypeError, match="complex"):
        xp.searchsorted(xp.ones(2, dtype=xp.complex64), 1.0)
    with pytest.raises(ValueError, match="sorter index out of range"):
        xp.searchsorted(xp.ones(2), 1.0, sorter=xp.asarray([0, 2]))
    with pytest.raises(TypeError, match="integer"):
        xp.searchsorted(xp.ones(2), 1.0, sorter=xp.asarray([0.0, 1.0]))


def test_numpy_functions_on_top():
    rng = np.random.default_rng(5)
    a = sample(rng, (3, 4), "float64")
    x = xp.asarray(a)
    for g, w in zip(xp.where(x), np.where(a)):
        np.testing.assert_array_equal(np.asarray(g), w)
    np.testing.assert_array_equal(np.asarray(xp.where(x > 0, x, -1.0)), np.where(a > 0, a, -1.0))
    with pytest.raises(ValueError, match="both or neither"):
        xp.where(x > 0, x)
    np.testing.assert_array_equal(np.asarray(xp.argwhere(x)), np.argwhere(a))
    assert xp.argwhere(xp.asarray(0.5)).shape == np.argwhere(0.5).shape
    assert xp.argwhere(xp.asarray(0.0)).shape == np.argwhere(0.0).shape
    np.testing.assert_array_equal(np.asarray(xp.flatnonzero(x)), np.flatnonzero(a))
    bins = np.array([0.0, 1.0, 2.5, 4.0])
    v = np.array([-1.0, 0.0, 1.0, 3.0, 4.0, 5.0, np.nan])
    for right in [False, True]:
        for b in [bins, bins[::-1].copy()]:
            np.testing.assert_array_equal(np.asarray(xp.digitize(xp.asarray(v), xp.asarray(b), right)),
                                          np.digitize(v, b, right))
    with pytest.raises(ValueError, match="monotonically"):
        xp.digitize(xp.asarray(v), xp.asarray([0.0, 2.0, 1.0]))
