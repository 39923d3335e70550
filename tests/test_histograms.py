"""bincount and histogram against NumPy, by both of their methods (direct comparison and sorted
search), with inputs made several ways, gradients through the weights, and NumPy's errors."""
import zlib

import numpy as np
import pytest

import lazyarr as xp
import lazyarr.histograms as histograms
from tests.test_autograd import check_gradient
from tests.test_masks_and_search import HOWS, made


@pytest.fixture(params=["direct", "sorted"])
def method(request, monkeypatch):
    if request.param == "sorted":
        monkeypatch.setattr(histograms, "DIRECT_WORK", 0)
    return request.param


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "bool"])
def test_bincount_matches_numpy(dtype, how, method):
    rng = np.random.default_rng(zlib.crc32(f"{dtype} {how} {method}".encode()))
    for n, top in [(1, 3), (50, 10), (300, 40), (40, 1)]:
        x = rng.integers(0, top, n).astype(dtype)
        got = xp.bincount(made(x, how))
        assert got.dtype == xp.int64
        np.testing.assert_array_equal(got.numpy(), np.bincount(x))
        np.testing.assert_array_equal(xp.bincount(made(x, how), minlength=top + 5).numpy(),
                                      np.bincount(x, minlength=top + 5))
        w = rng.standard_normal(n).astype(np.float32)
        got = xp.bincount(made(x, how), weights=made(w, how))
        assert got.dtype == xp.float64
        np.testing.assert_allclose(got.numpy(), np.bincount(x, weights=w), rtol=1e-12, atol=1e-12)


def test_bincount_of_nothing_and_errors():
    np.testing.assert_array_equal(xp.bincount([]).numpy(), np.bincount([]))
    np.testing.assert_array_equal(xp.bincount(np.zeros(0, np.int64), minlength=3).numpy(), [0, 0, 0])
    with pytest.raises(ValueError, match="negative"):
        xp.bincount([1, -1])
    with pytest.raises(TypeError, match="integers"):
        xp.bincount([1.5, 2.0])
    with pytest.raises(ValueError, match="1-dimensional"):
        xp.bincount([[1, 2]])
    with pytest.raises(ValueError, match="minlength"):
        xp.bincount([1], minlength=-2)
    with pytest.raises(ValueError, match="shape"):
        xp.bincount([1, 2], weights=[1.0])


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8"])
def test_histogram_matches_numpy(dtype, how, method):
    rng = np.random.default_rng(zlib.crc32(f"{dtype} {how} {method}".encode()))
    a = (rng.standard_normal((6, 40)) * 20).astype(dtype)
    if dtype.startswith("u"):
        a = np.abs(a)
    edges = np.array([-30.0, -1.0, 0.0, 0.5, 7.0, 12.0])
    for kwargs in [{}, {"bins": 1}, {"bins": 17}, {"bins": 5, "range": (-10, 10)}, {"bins": edges},
                   {"bins": 7, "density": True}, {"bins": edges, "density": True}]:
        got_h, got_e = xp.histogram(made(a, how), **kwargs)
        want_h, want_e = np.histogram(a, **kwargs)
        assert got_h.dtype == want_h.dtype and got_e.dtype == want_e.dtype, kwargs
        np.testing.assert_allclose(got_e.numpy(), want_e, rtol=1e-6)
        np.testing.assert_allclose(got_h.numpy(), want_h, rtol=1e-6, err_msg=str(kwargs))
        w = rng.standard_normal(a.shape)
        got_h, _ = xp.histogram(made(a, how), weights=made(w, how), **kwargs)
        want_h, _ = np.histogram(a, weights=w, **kwargs)
        np.testing.assert_allclose(got_h.numpy(), want_h, rtol=1e-9, atol=1e-12, err_msg=str(kwargs))


def test_histogram_edges_values_nans_and_constant_data(method):
    # values on the edges: each bin holds its left edge, the last one its right edge too
    a = np.array([0.0, 1.0, 2.0, 2.0, 3.0, 4.0, np.nan, -1.0, 5.0])
    for kwargs in [{"bins": 4, "range": (0, 4)}, {"bins": np.array([0.0, 2.0, 4.0])}]:
        got, _ = xp.histogram(a, **kwargs)
        np.testing.assert_array_equal(got.numpy(), np.histogram(a, **kwargs)[0])
    for data in [[5.0, 5.0, 5.0], [], [3]]:
        got_h, got_e = xp.histogram(data)
        want_h, want_e = np.histogram(data)
        np.testing.assert_array_equal(got_h.numpy(), want_h)
        np.testing.assert_allclose(got_e.numpy(), want_e)


def test_histogram_errors():
    with pytest.raises(ValueError, match="not finite"):
        xp.histogram([1.0, np.nan])
    with pytest.raises(ValueError, match="positive"):
        xp.histogram([1.0], bins=0)
    with pytest.raises(ValueError, match="monotonically"):
        xp.histogram([1.0], bins=[2.0, 1.0])
    with pytest.raises(ValueError, match="larger"):
        xp.histogram([1.0], range=(2, 1))
    with pytest.raises(ValueError, match="not supported"):
        xp.histogram([1.0], bins="auto")
    with pytest.raises(ValueError, match="shape"):
        xp.histogram([1.0, 2.0], weights=[1.0])
    with pytest.raises(TypeError, match="order"):
        xp.histogram([1j])


def test_gradients_flow_through_the_weights(method):
    x = np.array([3, 0, 3, 1, 5, 3, 0])
    check_gradient(lambda w: xp.bincount(xp.asarray(x), weights=w), np.linspace(-1, 1, 7))
    a = np.linspace(-2, 2, 9)
    check_gradient(lambda w: xp.histogram(xp.asarray(a), bins=3, weights=w)[0], np.cos(np.arange(9.0)))
    # d/dw of sum(c · bincount(x, w)) is c at each element's value
    w = xp.asarray(np.ones(7), requires_grad=True)
    c = np.arange(6.0) ** 2
    xp.sum(xp.bincount(xp.asarray(x), weights=w) * xp.asarray(c)).backward()
    np.testing.assert_allclose(w.grad.numpy(), c[x])
