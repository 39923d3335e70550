"""NumPy's functions lazyarr lacks, called through lazyarr's namespaces (lazyarr.numpy_fallback):
NumPy's values as lazyarr arrays, the warning once a name, gradients refused, AttributeError for
what NumPy lacks or is not served, and NumPy's protocols on Tensors unchanged."""
import warnings

import numpy as np
import pytest

import lazyarr as xp
from lazyarr import numpy_fallback

A = np.array([[1.5, -2.0, 3.0], [0.25, 4.0, -1.0]])
V = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    if isinstance(want, np.ndarray):
        assert isinstance(got, xp.Tensor), type(got)
        got = got.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


# (name, the arguments as NumPy arrays): each called on lazyarr arrays made several ways
CALLS = [
    ("fabs", (A,)), ("around", (A,)), ("spacing", (V,)), ("modf", (A,)), ("logaddexp2", (A, A)),
    ("float_power", (V, 2.0)), ("isneginf", (A,)), ("isposinf", (A,)), ("iscomplex", (A,)), ("isreal", (A,)),
    ("ediff1d", (V,)), ("nancumsum", (A,)), ("nancumprod", (A,)), ("trim_zeros", (np.array([0., 1., 2., 0.]),)),
    ("rollaxis", (A, 1)), ("resize", (V, (2, 4))), ("tri", (3,)), ("hanning", (5,)),
    ("hamming", (4,)), ("blackman", (6,)), ("bartlett", (5,)), ("kaiser", (5, 2.0)), ("amax", (A,)),
    ("amin", (A,)), ("histogram_bin_edges", (V,)), ("block", ([A, A],)), ("sort_complex", (V,)),
    ("unwrap", (V,)), ("asarray_chkfinite", (A,)), ("ascontiguousarray", (A.T,)), ("vecmat", (A[0], A.T)),
    ("matvec", (A, A[0])), ("bitwise_count", (np.arange(6),)), ("packbits", (np.array([1, 0, 1, 1]),)),
    ("unpackbits", (np.array([5], dtype=np.uint8),)),
]


def lazy(v, how):
    if not isinstance(v, np.ndarray):
        return [lazy(p, how) for p in v] if isinstance(v, list) else v
    if how == "asarray":
        return xp.asarray(v)
    if how == "graph":   # a lazy graph: computed, never realized before the call
        return xp.asarray(v) * 1 if v.dtype != np.uint8 else xp.asarray(v)
    if v.ndim == 1 or how == "view":   # a strided view of a larger array
        return xp.asarray(np.repeat(v, 2, axis=-1))[..., ::2]
    return xp.asarray(np.ascontiguousarray(v.T)).T   # ("transpose")


@pytest.mark.parametrize("how", ["asarray", "graph", "view", "transpose"])
@pytest.mark.parametrize("name,args", CALLS, ids=[c[0] for c in CALLS])
def test_a_missing_function_gives_numpys_values_as_lazyarr_arrays(name, args, how):
    assert name not in vars(xp), f"lazyarr has {name} now: take it off this list"
    got = quiet(getattr(xp, name), *[lazy(a, how) for a in args])
    same(got, getattr(np, name)(*args))


def test_the_wrapper_is_made_once_and_named():
    f = xp.ediff1d
    assert f is xp.ediff1d and f.__name__ == "ediff1d" and f.__wrapped__ is np.ediff1d
    assert numpy_fallback.is_fallback(f) and not numpy_fallback.is_fallback(xp.diff)


def test_the_warning_comes_once_a_name():
    name = "isfortran"   # (a name no other test calls)
    numpy_fallback._served.discard(name)
    with pytest.warns(RuntimeWarning, match=r"lazyarr\.isfortran is not implemented in lazyarr; computed by NumPy"):
        assert xp.isfortran(xp.ones((2, 2))) is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert xp.isfortran(xp.ones((2, 2))) is False   # no second warning
    assert name in xp.fallbacks()


def test_fallbacks_lists_what_was_served_and_what_would_be():
    quiet(xp.fabs, xp.asarray([-1.0]))
    served = xp.fallbacks()
    assert served == sorted(served) and "fabs" in served
    possible = xp.fallbacks(possible=True)
    assert {"fabs", "hanning", "linalg.tensorinv", "random.beta"} <= set(possible)
    assert not {"put", "copyto", "matrix", "ndarray", "linalg", "sum", "random.get_state"} & set(possible)


def test_gradients_are_refused():
    t = xp.asarray([1.0, 2.0, 4.0]).requires_grad_()
    with pytest.raises(TypeError, match=r"lazyarr\.ediff1d computes with NumPy on the host and cannot propagate "
                                        r"gradients; detach the input first"):
        xp.ediff1d(t * 2)
    with pytest.raises(TypeError, match="block"):
        xp.block([[t, t]])   # (inside lists too)
    with pytest.raises(TypeError, match="histogram_bin_edges"):
        xp.histogram_bin_edges(xp.asarray(V), weights=t)   # (and in keywords)
    same(quiet(xp.ediff1d, t.detach()), np.array([1.0, 2.0]))


def test_names_not_served_raise_attribute_error():
    for name in ("no_such_function", "_private", "matrix", "ndarray_", "ma", "testing", "polynomial", "fill_diagonal",
                 "copyto", "test"):
        assert not hasattr(xp, name), name
    with pytest.raises(AttributeError, match="module 'lazyarr' has no attribute 'no_such_function'"):
        xp.no_such_function
    with pytest.raises(AttributeError, match="module 'lazyarr.linalg' has no attribute 'nope'"):
        xp.linalg.nope
    assert not hasattr(xp.random, "RandomState") and not hasattr(xp.random, "get_state")
    assert xp.euler_gamma == np.euler_gamma and xp.s_[1:3] == np.s_[1:3]   # NumPy's constants: their values


def test_results_on_the_arguments_device_and_numpy_scalars_stay():
    x = xp.asarray(A)
    out = quiet(xp.fabs, x)
    assert out.device == x.device and out.dtype == xp.float64
    assert quiet(xp.isscalar, 3.0) is True
    assert isinstance(quiet(xp.binary_repr, 5), str)
    strings = quiet(xp.datetime_as_string, np.array(["2024-01-02"], dtype="datetime64[D]"))
    assert isinstance(strings, np.ndarray)   # a dtype lazyarr lacks stays NumPy's


def test_numpy_functions_on_tensors_still_go_through_numpys_protocol():
    t = xp.asarray(V)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # NumPy's own call: no fallback warning
        got = np.ediff1d(t)
        assert isinstance(got, np.ndarray)
        np.testing.assert_array_equal(got, np.ediff1d(V))
        assert isinstance(np.fabs(t), np.ndarray)   # a ufunc lazyarr lacks: NumPy's result, as before
        assert isinstance(np.sum(t), xp.Tensor) and isinstance(np.exp(t), xp.Tensor)   # lazyarr's own stay lazy


def test_linalg_fft_and_random_fallbacks():
    a = np.eye(4).reshape(4, 2, 2) * 2
    same(quiet(xp.linalg.tensorinv, xp.asarray(a), ind=1), np.linalg.tensorinv(a, ind=1))
    b = np.arange(4.0).reshape(2, 2)
    m = np.eye(4).reshape(2, 2, 2, 2) * 3
    same(quiet(xp.linalg.tensorsolve, xp.asarray(m), xp.asarray(b)), np.linalg.tensorsolve(m, b))
    xp.random.seed(7)
    first = quiet(xp.random.beta, 2.0, 3.0, size=5)
    xp.random.seed(7)
    again = quiet(xp.random.beta, 2.0, 3.0, size=5)
    assert isinstance(first, xp.Tensor) and first.shape == (5,)
    np.testing.assert_array_equal(first.numpy(), again.numpy())   # lazyarr.random.seed seeds them
    assert ((first.numpy() > 0) & (first.numpy() < 1)).all()
    draws = quiet(xp.random.poisson, xp.asarray([1.0, 50.0]))
    assert draws.dtype == xp.int64 and draws.shape == (2,)
    assert "fft" in dir(xp) and not hasattr(xp.fft, "test")
