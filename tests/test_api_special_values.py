"""Element-wise functions on every pair of special values (±0, ±inf, nan, ±1, ±2.5) against
NumPy, bit for bit: NaN where NumPy has NaN, and the sign of every zero. The standard's special
cases are NumPy's here, except for the floor divisions of an infinity that the standard allows to
differ (lazyarr answers as NumPy and Python: see array_api_tests/xfails.txt)."""
import itertools
import math

import numpy as np
import pytest

import lazyarr as xp

SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 2.5, -2.5, 1e-30, -7.0, 3.0]
PAIRS = list(itertools.product(SPECIAL, repeat=2))

BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow", "atan2", "copysign",
          "hypot", "maximum", "minimum", "logaddexp", "nextafter", "equal", "less", "greater_equal"]
UNARY = ["abs", "negative", "sign", "sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos",
         "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "floor", "ceil",
         "trunc", "round", "square", "reciprocal", "signbit", "isnan", "isinf", "isfinite"]
NUMPY_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2", "asinh": "arcsinh",
               "acosh": "arccosh", "atanh": "arctanh", "pow": "power"}


def same(got: np.ndarray, want: np.ndarray, ulps: int = 0) -> np.ndarray:
    """Elementwise: equal (with the sign of zero), both NaN, or within `ulps` units in the last place."""
    if want.dtype.kind != "f":
        return got == want
    both_nan = np.isnan(got) & np.isnan(want)
    exact = (got == want) & (np.signbit(got) == np.signbit(want))
    if ulps:
        with np.errstate(all="ignore"):
            close = np.abs(got - want) <= ulps * np.spacing(np.abs(want).astype(want.dtype))
        exact |= close & (np.signbit(got) == np.signbit(want))
    return both_nan | exact


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", BINARY)
def test_binary_special_values_match_numpy(name, dtype):
    a = np.array([p[0] for p in PAIRS], dtype)
    b = np.array([p[1] for p in PAIRS], dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, NUMPY_NAMES.get(name, name))(a, b)
    got = getattr(xp, name)(xp.asarray(a), xp.asarray(b)).numpy()
    assert got.dtype == want.dtype
    ok = same(got, want, ulps=2 if name in ("pow", "atan2", "hypot", "logaddexp") else 0)
    bad = [(PAIRS[i], got[i], want[i]) for i in np.flatnonzero(~ok)]
    assert not bad, bad[:8]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UNARY)
def test_unary_special_values_match_numpy(name, dtype):
    a = np.array(SPECIAL, dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, NUMPY_NAMES.get(name, name))(a)
    got = getattr(xp, name)(xp.asarray(a)).numpy()
    assert got.dtype == want.dtype
    ok = same(got, want, ulps=2)
    bad = [(SPECIAL[i], got[i], want[i]) for i in np.flatnonzero(~ok)]
    assert not bad, bad


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "add", "multiply", "maximum", "copysign"])
def test_python_scalar_operands_take_the_arrays_dtype(name):
    a = np.array(SPECIAL, np.float32)
    for s in (0.0, -0.0, math.inf, -2.5):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a, np.float32(s))
        got = getattr(xp, name)(xp.asarray(a), s).numpy()
        assert got.dtype == np.float32 and same(got, want).all(), (s, got, want)


def test_floor_division_of_infinities_is_numpys_not_the_spec_preference():
    # the standard prefers floor(x1/x2) (inf, -0) but allows NaN and -1.0, as Python and NumPy
    x = xp.asarray([math.inf, -math.inf, 3.0, -3.0])
    y = xp.asarray([2.0, 2.0, -math.inf, math.inf])
    got = xp.floor_divide(x, y).numpy()
    assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == -1.0 and got[3] == -1.0
    assert xp.remainder(xp.asarray(0.0), xp.asarray(math.inf)).item() == 0.0
