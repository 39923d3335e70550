"""The complex transcendental functions (exp, log, sqrt, the circular and hyperbolic functions and
their inverses, expm1, log1p, log2, log10) against NumPy: random values (hypothesis), a grid of
special values (±0, ±1, ±inf, NaN, tiny, huge), and the accuracy against mpmath's arbitrary
precision. Where lazyarr departs from NumPy it is because the array API's special-case tables say
so, or because NumPy is inaccurate there (its complex log1p is log(1 + z), and it has no complex
expm1); those cases are listed below. The API tests run on every device (LAZYARR_DEVICE)."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp
from test_complex import SPECIAL_Z, complex_arrays, same_values

FUNCTIONS = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
             "asinh", "acosh", "atanh", "log2", "log10", "expm1", "log1p"]
NUMPY = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
         "atanh": np.arctanh}
# relative error allowed against NumPy (of the result's modulus): lazyarr computes complex64's
# functions in float64, NumPy in float32 (a few float32 ulps apart)
RTOL = {np.complex64: 4e-6, np.complex128: 5e-13}


def numpy_fn(name):
    if name == "expm1":
        return lambda z: np.exp(z) - 1
    return NUMPY.get(name) or getattr(np, name)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", FUNCTIONS)
@given(data=st.data())
def test_against_numpy(dtype, name, data):
    z = data.draw(complex_arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=6), special=False,
                                 magnitude=30))
    got = getattr(xp, name)(xp.asarray(z)).numpy()
    with np.errstate(all="ignore"):
        want = numpy_fn(name)(z)
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    rtol = RTOL[dtype]
    if name in ("expm1", "log1p"):   # NumPy's forms lose digits near 0: absolute error of |z|·eps
        keep = np.abs(z) > 0.5
        same_values(got[keep], want[keep], rtol=rtol * 4, zero_signs=False)
        same_values(got[~keep], want[~keep], rtol=rtol * 4, atol=np.finfo(dtype).eps * 4, zero_signs=False)
        return
    # near the branch points and in the poles' neighbourhood results are ill-conditioned: compare
    # where a relative change of the input by eps moves the result by little
    same_values(got, want, rtol=rtol * 8 if name in ("tan", "tanh", "atan", "atanh") else rtol)


# ---- special values ---------------------------------------------------------------------------

def cplx(re, im):
    """The complex array of parts re and im (re + 1j*im would lose the signs of zeros)."""
    out = np.empty(np.shape(re), complex)
    out.real, out.imag = re, im
    return out


def _spec_departures(name, z, want):
    """NumPy's answers that lazyarr changes as the standard says (or that are NumPy's rounding)."""
    want = want.copy()
    x, y = z.real, z.imag
    if name == "tanh":   # the standard: tanh(+inf + iy) = 1 + 0j for finite y > 0 (C99: 1 + i0·sin 2y)
        sel = np.isinf(x) & np.isfinite(y)
        want[sel] = cplx(np.copysign(1, x[sel]), np.copysign(0.0, y[sel]))
    if name == "tan":    # tan z = -i tanh(iz)
        sel = np.isinf(y) & np.isfinite(x)
        want[sel] = cplx(np.copysign(0.0, x[sel]), np.copysign(1, y[sel]))
    if name == "expm1":  # the standard's table, where exp(z) - 1 in NumPy differs
        sel = (x == 0) & (y == 0)
        want[sel] = cplx(np.zeros(sel.sum()), y[sel])
        sel = (x == math.inf) & (y == 0)
        want[sel] = cplx(np.full(sel.sum(), math.inf), y[sel])
        sel = (x == -math.inf) & ~np.isfinite(y)
        want[sel] = -1 + 0j
    return want


# the signs the standard leaves unspecified (its "±"), where lazyarr and NumPy may differ
UNSPECIFIED_SIGNS = {
    "sinh": lambda x, y: np.isinf(x) & ~np.isfinite(y),
    "sin": lambda x, y: np.isinf(y) & ~np.isfinite(x),
    "cosh": lambda x, y: (x == 0) & ~np.isfinite(y),
    "cos": lambda x, y: (y == 0) & ~np.isfinite(x),
    "acos": lambda x, y: np.isinf(x) & np.isnan(y),
    "acosh": lambda x, y: ((x == 0) & np.isnan(y)) | (np.isinf(x) & np.isnan(y)),
    "asinh": lambda x, y: np.isnan(x) & np.isinf(y),
    "asin": lambda x, y: np.isinf(x) & np.isnan(y),
    "atan": lambda x, y: np.isinf(x) & np.isnan(y),
    "atanh": lambda x, y: np.isnan(x) & np.isinf(y),
    "exp": lambda x, y: np.isinf(x) & ~np.isfinite(y),
    "expm1": lambda x, y: np.isinf(x) & ~np.isfinite(y),
    "tanh": lambda x, y: np.isinf(x) & ~np.isfinite(y),
    "tan": lambda x, y: np.isinf(y) & ~np.isfinite(x),
}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", [n for n in FUNCTIONS if n != "log1p"])
def test_special_values_against_numpy(dtype, name):
    tiny, huge = np.finfo(dtype).tiny, np.finfo(dtype).max / 4
    parts = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, tiny, -huge, 1e-5, 60.0, -60.0, math.inf, -math.inf, math.nan]
    z = np.array([complex(a, b) for a in parts for b in parts], dtype)
    got = getattr(xp, name)(xp.asarray(z)).numpy()
    with np.errstate(all="ignore"):
        want = _spec_departures(name, z, numpy_fn(name)(z))
    free = UNSPECIFIED_SIGNS.get(name, lambda x, y: np.zeros(x.shape, bool))(z.real, z.imag)
    if name == "expm1":   # exp(z) - 1 is not a reference for finite z; the special values are
        free |= np.isfinite(z)
    same_values(got[~free], want[~free], rtol=RTOL[dtype] * 8, atol=float(np.finfo(dtype).tiny) * 4)
    # unspecified signs: the magnitudes and NaNs still agree
    same_values(np.abs(got[free].real) + 1j * np.abs(got[free].imag),
                np.abs(want[free].real) + 1j * np.abs(want[free].imag), rtol=RTOL[dtype] * 8) \
        if name != "expm1" else None


def test_standard_special_cases():
    """A sample of the standard's tables, exactly (signs of zero included)."""
    inf, nan, pi = math.inf, math.nan, math.pi
    cases = [
        ("sqrt", complex(-0.0, 0.0), complex(0.0, 0.0)), ("sqrt", complex(nan, inf), complex(inf, inf)),
        ("sqrt", complex(-inf, 2.0), complex(0.0, inf)), ("sqrt", complex(inf, nan), complex(inf, nan)),
        ("exp", complex(-0.0, 0.0), complex(1, 0)), ("exp", complex(inf, 0.0), complex(inf, 0)),
        ("exp", complex(nan, 0.0), complex(nan, 0)), ("log", complex(-0.0, 0.0), complex(-inf, pi)),
        ("log", complex(-inf, inf), complex(inf, 3 * pi / 4)), ("log", complex(inf, nan), complex(inf, nan)),
        ("log1p", complex(-1.0, 0.0), complex(-inf, 0)), ("log1p", complex(-inf, 2.0), complex(inf, pi)),
        ("expm1", complex(-0.0, 0.0), complex(0, 0)), ("expm1", complex(-inf, inf), complex(-1, 0)),
        ("acos", complex(0.0, 0.0), complex(pi / 2, -0.0)), ("acos", complex(-inf, inf), complex(3 * pi / 4, -inf)),
        ("acosh", complex(-0.0, 0.0), complex(0, pi / 2)), ("acosh", complex(-inf, 1.0), complex(inf, pi)),
        ("asinh", complex(nan, 0.0), complex(nan, 0)), ("asinh", complex(inf, inf), complex(inf, pi / 4)),
        ("atanh", complex(1.0, 0.0), complex(inf, 0)), ("atanh", complex(0.0, nan), complex(0, nan)),
        ("atanh", complex(inf, nan), complex(0, nan)), ("atanh", complex(3.0, inf), complex(0, pi / 2)),
        ("cosh", complex(0.0, 0.0), complex(1, 0)), ("cosh", complex(inf, 0.0), complex(inf, 0)),
        ("sinh", complex(nan, 0.0), complex(nan, 0)), ("sinh", complex(inf, 0.0), complex(inf, 0)),
        ("tanh", complex(inf, 2.0), complex(1, 0)), ("tanh", complex(0.0, inf), complex(0, nan)),
        ("tanh", complex(nan, 0.0), complex(nan, 0)), ("sign", complex(-0.0, 0.0), complex(0, 0)),
        ("sign", complex(nan, 1.0), complex(nan, nan)), ("abs", complex(nan, -inf), inf),
    ]
    for dtype in (xp.complex64, xp.complex128):
        for name, z, want in cases:
            got = getattr(xp, name)(xp.asarray([z], dtype=dtype)).numpy()[0]
            same_values(np.asarray(got), np.asarray(want, dtype=got.dtype), rtol=1e-6)


# ---- accuracy against arbitrary precision -----------------------------------------------------

@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_accuracy_against_mpmath(dtype):
    """Within a few units of the last place (of the modulus), where the result is representable:
    points spread over magnitudes from 1e-6 to 1e6 and around the unit circle, where cancellation
    hurts the textbook formulas."""
    mp = pytest.importorskip("mpmath")
    mp.mp.prec = 120
    rng = np.random.default_rng(3)
    radius = np.concatenate([10 ** rng.uniform(-6, 6, 120), 1 + rng.uniform(-1e-3, 1e-3, 40)])
    z = (radius * np.exp(1j * rng.uniform(-math.pi, math.pi, radius.size))).astype(dtype)
    reference = {"exp": mp.exp, "log": mp.log, "sqrt": mp.sqrt, "sin": mp.sin, "cos": mp.cos, "tan": mp.tan,
                 "sinh": mp.sinh, "cosh": mp.cosh, "tanh": mp.tanh, "asin": mp.asin, "acos": mp.acos,
                 "atan": mp.atan, "asinh": mp.asinh, "acosh": mp.acosh, "atanh": mp.atanh,
                 "expm1": mp.expm1, "log1p": mp.log1p, "log10": mp.log10,
                 "log2": lambda v: mp.log(v) / mp.log(2)}
    eps = np.finfo(dtype).eps
    worst = {}
    for name, ref in reference.items():
        got = getattr(xp, name)(xp.asarray(z)).numpy()
        errs = []
        for g, v in zip(got, z):
            w = ref(mp.mpc(complex(v)))
            m = abs(w)
            if not mp.isfinite(m) or m > np.finfo(dtype).max / 2 or m < np.finfo(dtype).tiny * 1e3:
                continue
            errs.append(float(abs(mp.mpc(complex(g)) - w) / m) / eps)
        worst[name] = max(errs)
    limit = 4 if dtype == np.complex64 else 64
    assert all(v <= limit for v in worst.values()), {k: round(v, 1) for k, v in worst.items() if v > limit}
