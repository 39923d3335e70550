"""NumPy's elementwise functions beyond the array API: fmax, fmin, degrees, radians, rad2deg,
deg2rad, cbrt, rint, fix, ldexp, frexp, sinc, i0, heaviside, gcd, lcm and divmod.

Each is a composition of `lazyarr.elementwise`'s functions, so it stays lazy, fuses and
differentiates. The result's dtype is NumPy's: NumPy's own type resolution is asked on empty
arrays of the operands' dtypes (Python scalars passed as they are, so they stay weak as in
NumPy 2), which also gives NumPy's TypeError for dtypes a function has no loop for.

Where the result must be exact (ldexp, frexp), powers of two are made by exp2 of integers in
float64, which is exact there, and a scaling is split so that no intermediate product overflows
or underflows. Float16 and float32 values are scaled in float64 (exact) and rounded once.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array
from lazyarr.creation import as_tensor, asarray
from lazyarr.dtypes import DType
from lazyarr.elementwise import (abs as absolute, add, clip, divide, equal, exp, exp2, floor, floor_divide, greater,
                                 greater_equal,
                                 isfinite, isnan, less, log2, logical_and, maximum, minimum, multiply, not_equal, pow,
                                 remainder, round as round_half_even, signbit, sin, sqrt, subtract, trunc, where)


def resolved(name: str, numpy_fn: Callable[..., Any], *args: Any) -> tuple[list[Array], Any]:
    """The operands as arrays (Python scalars and sequences converted), and NumPy's result dtype(s)
    of `numpy_fn` for their dtypes (a DType, or a tuple of them for several outputs). Raises
    NumPy's TypeError, prefixed with `name`, where NumPy has no loop for the dtypes."""
    device = next((a.device for a in args if isinstance(a, Array)), None)
    arrays: list[Array | None] = []
    probes: list[Any] = []
    for a in args:
        if isinstance(a, Array) or not dtypes.scalar_kind(a):
            t = as_tensor(a, device)
            arrays.append(t)
            probes.append(np.empty(0, t.dtype.np))
        else:   # a Python scalar: weak, as NumPy 2 treats it
            if isinstance(a, int) and not isinstance(a, bool) and not -2 ** 63 <= a < 2 ** 64:
                raise OverflowError(f"{name}: Python integer {a} out of bounds for int64")
            arrays.append(None)
            probes.append(a)
    try:
        with np.errstate(all="ignore"):
            out = numpy_fn(*probes)
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None
    result = tuple(dtypes.as_dtype(np.asarray(o).dtype) for o in out) if isinstance(out, tuple) else \
        dtypes.as_dtype(np.asarray(out).dtype)
    first = result[0] if isinstance(result, tuple) else result
    made = [t if t is not None else asarray(a, dtype=_scalar_dtype(a, first), device=device)
            for a, t in zip(args, arrays)]
    return made, result


def _scalar_dtype(value: Any, result: DType) -> DType:
    """The dtype a weak Python scalar takes next to a result of dtype `result` (an int next to a
    float result is converted to it; a float next to an int result keeps the default float)."""
    if isinstance(value, bool):
        return dtypes.bool_ if result.is_bool else result
    if isinstance(value, int):
        return result
    if isinstance(value, float):
        return result if result.is_inexact else dtypes.default_float
    return result if result.is_complex else dtypes.default_complex


def _as(x: Array, d: DType) -> Array:
    return x if x.dtype is d else x.astype(d)


# ---- NaN-ignoring extremes -------------------------------------------------------------------------

def _nan_ignoring(name: str, numpy_fn: Any, pick: Callable[[Any, Any], Array], x1: Any, x2: Any) -> Array:
    (a, b), d = resolved(name, numpy_fn, x1, x2)
    if d.is_complex:
        raise TypeError(f"{name}: complex values are not supported (they have no order)")
    a, b = _as(a, d), _as(b, d)
    out = pick(a, b)
    if not d.is_inexact:
        return out
    # a NaN on one side gives the other side; NaN on both stays NaN
    return where(isnan(b), a, where(isnan(a), b, out))


def fmax(x1: Any, x2: Any, /) -> Array:
    """The larger of x1 and x2 elementwise, ignoring a NaN on one side (NaN only where both are)."""
    return _nan_ignoring("fmax", np.fmax, maximum, x1, x2)


def fmin(x1: Any, x2: Any, /) -> Array:
    """The smaller of x1 and x2 elementwise, ignoring a NaN on one side (NaN only where both are)."""
    return _nan_ignoring("fmin", np.fmin, minimum, x1, x2)


# ---- angles ------------------------------------------------------------------------------------------

def degrees(x: Any, /) -> Array:
    """Radians to degrees: x · 180/π."""
    (t,), d = resolved("degrees", np.degrees, x)
    return multiply(_as(t, d), 180.0 / math.pi)


def radians(x: Any, /) -> Array:
    """Degrees to radians: x · π/180."""
    (t,), d = resolved("radians", np.radians, x)
    return multiply(_as(t, d), math.pi / 180.0)


def rad2deg(x: Any, /) -> Array:
    return degrees(x)


def deg2rad(x: Any, /) -> Array:
    return radians(x)


# ---- roots and rounding --------------------------------------------------------------------------------

def cbrt(x: Any, /) -> Array:
    """The real cube root: |x|^(1/3) with x's sign, refined by one Newton step in float64 (exact
    cubes give exact roots, as NumPy's)."""
    (t,), d = resolved("cbrt", np.cbrt, x)
    w = _as(t, dtypes.float64)
    a = absolute(w)
    # tiny and huge |x| scaled by 2^±999 (exact), so that r^3 below neither underflows nor overflows
    tiny, huge = less(a, 2.0 ** -600), greater(a, 2.0 ** 600)
    a = multiply(a, where(tiny, 2.0 ** 999, where(huge, 2.0 ** -999, 1.0)))
    r = pow(a, 1.0 / 3.0)
    # Newton's step for r^3 = |x|; skipped at 0 and infinity, where it would divide by 0 or inf
    refined = subtract(r, divide(subtract(multiply(multiply(r, r), r), a), multiply(3.0, multiply(r, r))))
    r = where(logical_and(isfinite(r), not_equal(r, 0.0)), refined, r)
    r = multiply(r, where(tiny, 2.0 ** -333, where(huge, 2.0 ** 333, 1.0)))
    return _as(where(signbit(w), -r, r), d)


def rint(x: Any, /) -> Array:
    """Rounded to the nearest integer, halves to even, in NumPy's float type for integer input."""
    (t,), d = resolved("rint", np.rint, x)
    return round_half_even(_as(t, d))


def fix(x: Any, /) -> Array:
    """Rounded towards zero (integers unchanged)."""
    (t,), d = resolved("fix", np.fix, x)
    if d.is_complex:
        raise TypeError("fix: complex values are not supported")
    return trunc(_as(t, d))


# ---- powers of two -----------------------------------------------------------------------------------

def _times_power_of_two(x: Array, k: Array) -> Array:
    """x · 2^k for float x and integer k, exactly where the result is representable (one rounding
    where it is subnormal). float16/float32: in float64, where the product is exact, rounded once
    by the cast. float64: 2^k in three factors of at most 2^±1023 (exp2 of integers is exact),
    the smallest first, so that only the last product can round."""
    k = clip(_as(k, dtypes.int64), -2200, 2200)   # past these every finite result is 0 or inf
    if x.dtype is not dtypes.float64:
        wide = multiply(_as(x, dtypes.float64), exp2(_as(clip(k, -400, 400), dtypes.float64)))
        return _as(wide, x.dtype)
    k1 = clip(k, -1022, 1023)
    rest = subtract(k, k1)
    k2 = clip(rest, -1022, 1023)
    k3 = subtract(rest, k2)
    out = x
    for part in (k3, k2, k1):
        out = multiply(out, exp2(_as(part, dtypes.float64)))
    return out


def ldexp(x1: Any, x2: Any, /) -> Array:
    """x1 · 2^x2 for integer x2 (TypeError for a float x2, as NumPy), exactly."""
    if isinstance(x2, int) and not isinstance(x2, bool):
        x2 = asarray(x2, dtype=dtypes.int64)   # (not a weak scalar here: it stays an integer)
    (m, e), d = resolved("ldexp", np.ldexp, x1, x2)
    if not (e.dtype.is_int or e.dtype.is_bool):
        raise TypeError(f"ldexp: the exponent must be an integer, not {e.dtype}")
    return _times_power_of_two(_as(m, d), e)


def frexp(x: Any, /) -> tuple[Array, Array]:
    """(mantissa, exponent) with x = mantissa · 2^exponent and 0.5 <= |mantissa| < 1 (int32
    exponents); 0, infinities and NaN give themselves and exponent 0."""
    (t,), (d, ed) = resolved("frexp", np.frexp, x)
    w = _as(t, dtypes.float64)
    ordinary = logical_and(isfinite(w), not_equal(w, 0.0))
    a = absolute(where(ordinary, w, 1.0))
    e = add(_as(floor(log2(a)), dtypes.int64), 1)
    m = _times_power_of_two(where(ordinary, w, 1.0), -e)
    # log2 may round across an integer: one step either way puts |m| in [0.5, 1)
    low, high = less(absolute(m), 0.5), greater_equal(absolute(m), 1.0)
    m = where(low, multiply(m, 2.0), where(high, multiply(m, 0.5), m))
    e = where(low, subtract(e, 1), where(high, add(e, 1), e))
    return _as(where(ordinary, m, w), d), _as(where(ordinary, e, 0), ed)


# ---- special functions ----------------------------------------------------------------------------------

def sinc(x: Any, /) -> Array:
    """sin(πx)/(πx), 1 at 0 (differentiable there: 0 is never divided by)."""
    (t,), d = resolved("sinc", np.sinc, x)
    t = _as(t, d)
    zero = equal(t, 0)
    y = multiply(math.pi, where(zero, 1.0, t))
    return where(zero, 1.0, divide(sin(y), y)).astype(d)


# I0(t) = Σ (t²/4)^k / (k!)², summed to k = 40 (relative error ~1e-15) below _I0_SPLIT; above it
# e^t/√(2πt) · Σ c_k t^-k, c_k = ((2k-1)!!)² / (k! 8^k), to k = 22 (its terms are smallest there)
_I0_SPLIT = 20.0
_I0_SERIES = [1.0 / math.factorial(k) ** 2 for k in range(41)]
_I0_ASYMPTOTIC = [1.0]
for _k in range(1, 23):
    _I0_ASYMPTOTIC.append(_I0_ASYMPTOTIC[-1] * (2 * _k - 1) ** 2 / (8 * _k))


def _horner(coefficients: list[float], u: Array) -> Array:
    """Σ coefficients[k] · u^k."""
    out = coefficients[-1] + 0.0 * u
    for c in reversed(coefficients[:-1]):
        out = add(multiply(out, u), c)
    return out


def i0(x: Any) -> Array:
    """The modified Bessel function of the first kind, of order 0 (real x; TypeError for complex).
    Finite up to where I0 itself overflows (|x| ~ 713; NumPy's overflows from 709.8)."""
    t = as_tensor(x)
    if t.dtype.is_complex:
        raise TypeError("i0: complex values are not supported")
    d = t.dtype if t.dtype.is_float else dtypes.float64
    a = absolute(_as(t, dtypes.float64))
    small = less(a, _I0_SPLIT)
    s = where(small, a, 0.0)           # each branch computed only on its own arguments
    near = _horner(_I0_SERIES, multiply(multiply(s, s), 0.25))
    big = where(small, _I0_SPLIT, a)
    half = exp(multiply(big, 0.5))     # e^t as (e^(t/2))² : no overflow before I0 itself overflows
    far = multiply(half, multiply(divide(half, sqrt(multiply(2.0 * math.pi, big))),
                                  _horner(_I0_ASYMPTOTIC, divide(1.0, big))))
    return _as(where(small, near, far), d)


def heaviside(x1: Any, x2: Any, /) -> Array:
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN where x1 is NaN)."""
    (a, b), d = resolved("heaviside", np.heaviside, x1, x2)
    a, b = _as(a, d), _as(b, d)
    return where(less(a, 0), 0.0, where(greater(a, 0), 1.0, where(equal(a, 0), b, a))).astype(d)


# ---- integers ---------------------------------------------------------------------------------------

def _euclid_steps(d: DType) -> int:
    """The most remainder steps Euclid's algorithm takes on values below 2^bits: the index of the
    first Fibonacci number past 2^bits, less two (consecutive Fibonacci numbers are the worst case)."""
    a, b, n = 1, 1, 2
    while b <= 2 ** d.bits:
        a, b, n = b, a + b, n + 1
    return n - 2


def _gcd(a: Array, b: Array) -> Array:
    """Euclid's algorithm unrolled to the dtype's worst case: (a, b) -> (b, a mod b) until b is 0,
    which then holds (the divisor is replaced by 1 where it is 0: C's division by 0 is undefined)."""
    a, b = absolute(a), absolute(b)
    for _ in range(_euclid_steps(a.dtype)):
        done = equal(b, 0)
        a, b = where(done, a, b), where(done, 0, remainder(a, where(done, 1, b)))
    return a


def gcd(x1: Any, x2: Any, /) -> Array:
    """The greatest common divisor of |x1| and |x2| (integers; gcd(0, 0) = 0)."""
    (a, b), d = resolved("gcd", np.gcd, x1, x2)
    return _gcd(_as(a, d), _as(b, d))


def lcm(x1: Any, x2: Any, /) -> Array:
    """The least common multiple of |x1| and |x2| (integers; 0 where either is 0)."""
    (a, b), d = resolved("lcm", np.lcm, x1, x2)
    a, b = _as(a, d), _as(b, d)
    g = _gcd(a, b)
    zero = equal(g, 0)
    return where(zero, 0, multiply(floor_divide(absolute(a), where(zero, 1, g)), absolute(b)))


def divmod(x1: Any, x2: Any, /) -> tuple[Array, Array]:   # noqa: A001  (NumPy's name)
    """(x1 // x2, x1 % x2), rounding the quotient towards minus infinity and giving the remainder
    the divisor's sign, as NumPy's."""
    (a, b), (d, _) = resolved("divmod", np.divmod, x1, x2)
    a, b = _as(a, d), _as(b, d)
    return floor_divide(a, b), remainder(a, b)


__all__ = ["fmax", "fmin", "degrees", "radians", "rad2deg", "deg2rad", "cbrt", "rint", "fix", "ldexp", "frexp",
           "sinc", "i0", "heaviside", "gcd", "lcm", "divmod"]
