"""The complex functions as real arithmetic on (real, imaginary) parts, for the complex lowering
(`lazyarr.compiler.complex`).

Each function takes the parts (x, y) of z = x + iy as real tensor-level values of one shape (`R`,
a thin wrapper that builds graph nodes with Python operators) and returns the parts of the result.
The formulas are those of C99 Annex G, which the array API's special-case tables follow and NumPy's
functions (the C library's) implement:
- exp, expm1, sinh, cosh, tanh by their real-function forms (tanh by Kahan's formula, which avoids
  cancellation), with the infinities and NaNs of Annex G chosen explicitly where the formula would
  give NaN from inf·0 or inf/inf; sin, cos, tan through the hyperbolic ones (sin z = -i sinh iz);
- log as log|z| + i·arg z, with log|z| from log1p near the unit circle; log1p as log(1+z) with
  its real part from log1p(x(2+x) + y²) for small z;
- sqrt by Kahan's formula t = √((|x| + |z|)/2);
- asin, acos (and asinh, acosh through them) by Hull, Fairgrieve and Tang's algorithm ("Implementing
  the complex arcsine and arccosine functions using exception handling", TOMS 1997), on the first
  quadrant, the signs restored by the functions' symmetries; atanh by Kahan's formula, atan
  through it.
The functions of complex64 values are computed in float64 where the device has it (the caller
chooses the working type), then rounded: every intermediate is then far from float32's range and
precision limits. Thresholds that depend on the working type (where exp overflows, where |z|² would)
are read from it.
"""
from __future__ import annotations

import math
from typing import Any

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.graph import alu, cast_uop, const

PI = math.pi
LN2 = math.log(2.0)


class R:
    """A real tensor-level value: Python operators build ALU nodes (scalars become constants of
    the value's dtype and shape)."""
    __slots__ = ("u",)

    def __init__(self, u: UOp):
        self.u = u

    @property
    def dtype(self) -> dtypes.DType:
        return self.u.dtype

    def full(self, v: Any) -> R:
        return R(const(v, self.u.dtype, self.u.shape))

    def _bin(self, op: Ops, o: Any, reflected: bool = False) -> R:
        o = o.u if isinstance(o, R) else o
        return R(alu(op, o, self.u) if reflected else alu(op, self.u, o))

    def __add__(self, o): return self._bin(Ops.ADD, o)
    def __radd__(self, o): return self._bin(Ops.ADD, o, True)
    def __sub__(self, o): return self._bin(Ops.SUB, o)
    def __rsub__(self, o): return self._bin(Ops.SUB, o, True)
    def __mul__(self, o): return self._bin(Ops.MUL, o)
    def __rmul__(self, o): return self._bin(Ops.MUL, o, True)
    def __truediv__(self, o): return self._bin(Ops.FDIV, o)
    def __rtruediv__(self, o): return self._bin(Ops.FDIV, o, True)
    def __neg__(self): return R(alu(Ops.NEG, self.u))
    def __lt__(self, o): return self._bin(Ops.CMPLT, o)
    def __le__(self, o): return self._bin(Ops.CMPLE, o)
    def __gt__(self, o): return self._bin(Ops.CMPLT, o, True)
    def __ge__(self, o): return self._bin(Ops.CMPLE, o, True)
    def __and__(self, o): return self._bin(Ops.AND, o)
    def __or__(self, o): return self._bin(Ops.OR, o)
    def __invert__(self): return R(alu(Ops.NOT, self.u))
    def eq(self, o) -> R: return self._bin(Ops.CMPEQ, o)
    def ne(self, o) -> R: return self._bin(Ops.CMPNE, o)

    def _fn(self, op: Ops) -> R:
        return R(alu(op, self.u))

    def abs(self) -> R: return self._fn(Ops.ABS)
    def sqrt(self) -> R: return self._fn(Ops.SQRT)
    def exp(self) -> R: return self._fn(Ops.EXP)
    def expm1(self) -> R: return self._fn(Ops.EXPM1)
    def log(self) -> R: return self._fn(Ops.LOG)
    def log1p(self) -> R: return self._fn(Ops.LOG1P)
    def sin(self) -> R: return self._fn(Ops.SIN)
    def cos(self) -> R: return self._fn(Ops.COS)
    def tan(self) -> R: return self._fn(Ops.TAN)
    def asin(self) -> R: return self._fn(Ops.ASIN)
    def acos(self) -> R: return self._fn(Ops.ACOS)
    def sinh(self) -> R: return self._fn(Ops.SINH)
    def cosh(self) -> R: return self._fn(Ops.COSH)
    def rint(self) -> R: return self._fn(Ops.RINT)

    def cast(self, d: dtypes.DType) -> R:
        return R(cast_uop(self.u, d))

    def isnan(self) -> R: return self.ne(self)
    def isinf(self) -> R: return self.abs().eq(math.inf)
    def isfinite(self) -> R: return self.abs() < math.inf


def where(c: R, a: Any, b: Any) -> R:
    """a where c, else b (at least one of a and b a value)."""
    return R(alu(Ops.WHERE, c.u, a.u if isinstance(a, R) else a, b.u if isinstance(b, R) else b))


def atan2(y: R, x: R) -> R: return R(alu(Ops.ATAN2, y.u, x.u))
def hypot(x: R, y: R) -> R: return R(alu(Ops.HYPOT, x.u, y.u))


def copysign(a: Any, b: R) -> R:
    a = a if isinstance(a, R) else b.full(a)
    return R(alu(Ops.COPYSIGN, a.u, b.u))


def nan_like(x: R) -> R: return x.full(math.nan)
def signbit(x: R) -> R: return copysign(1.0, x) < 0.0


Parts = tuple[R, R]


def _max_finite(d: dtypes.DType) -> float:
    return dtypes.finfo(d).max


def exp_threshold(d: dtypes.DType) -> float:
    """Above this, exp overflows in type d."""
    return math.log(_max_finite(d)) - 1.0


def large_threshold(d: dtypes.DType) -> float:
    """Above this, squares (and sums of a few of them) overflow in type d."""
    return math.sqrt(_max_finite(d)) / 8


# ---- arithmetic (in the parts' own type, as NumPy computes it) -----------------------------------

def mul(a: R, b: R, c: R, d: R) -> Parts:
    """(a + bi)(c + di), the textbook formula (NumPy's and CPython's)."""
    return a * c - b * d, a * d + b * c


def reciprocal(c: R, d: R) -> Parts:
    """1/(c + di) as NumPy's reciprocal computes it (Smith's scaling, 1/d and -r/d)."""
    c_larger = d.abs() <= c.abs()
    r1 = d / c
    d1 = c + d * r1
    r2 = c / d
    d2 = c * r2 + d
    return where(c_larger, 1.0 / d1, r2 / d2), where(c_larger, -r1 / d1, -1.0 / d2)


def div(a: R, b: R, c: R, d: R) -> Parts:
    """(a + bi)/(c + di) by Smith's scaling, as NumPy divides: the larger of |c| and |d| is divided
    out first, so no intermediate overflows; by zero, each part divided by |c| (inf or NaN)."""
    ac, ad = c.abs(), d.abs()
    c_larger = ac >= ad
    both_zero = ac.eq(0.0) & ad.eq(0.0)
    # |c| >= |d|
    rat1 = d / c
    scl1 = 1.0 / (c + d * rat1)
    re1, im1 = (a + b * rat1) * scl1, (b - a * rat1) * scl1
    re0, im0 = a / ac, b / ac
    # |c| < |d| (or NaN)
    rat2 = c / d
    scl2 = 1.0 / (d + c * rat2)
    re2, im2 = (a * rat2 + b) * scl2, (b * rat2 - a) * scl2
    re = where(c_larger, where(both_zero, re0, re1), re2)
    im = where(c_larger, where(both_zero, im0, im1), im2)
    return re, im


# ---- exponentials and logarithms ---------------------------------------------------------------

def _exp_scaled(x: R) -> tuple[R, R]:
    """(e, big): e = exp(x), except where x is so large that exp overflows but exp(x)·c need not
    (|c| < 1): there big is true, e = exp(x/2), and the product is to be formed as (e·c)·e."""
    big = x > exp_threshold(x.dtype)
    return where(big, x * 0.5, x).exp(), big


def _times_exp(e: R, big: R, c: R) -> R:
    return where(big, (e * c) * e, e * c)


def exp(x: R, y: R) -> Parts:
    e, big = _exp_scaled(x)
    cy, sy = y.cos(), y.sin()
    re = _times_exp(e, big, cy)
    im = where(y.eq(0.0), y, _times_exp(e, big, sy))      # exp(x ± 0i) = exp(x) ± 0i, x inf or NaN too
    # an infinite real part with an imaginary part that is not finite: inf·NaN by the formula
    y_bad = ~y.isfinite()
    re = where(x.eq(math.inf) & y_bad, math.inf, where(x.eq(-math.inf) & y_bad, 0.0, re))
    im = where(x.eq(math.inf) & y_bad, nan_like(y), where(x.eq(-math.inf) & y_bad, copysign(0.0, y), im))
    return re, im


def expm1(x: R, y: R) -> Parts:
    """e^z - 1 = (expm1(x)·cos y - 2 sin²(y/2)) + i e^x sin y, accurate for small z."""
    s = (y * 0.5).sin()
    re = x.expm1() * y.cos() - 2.0 * (s * s)
    big_re, big_im = exp(x, y)
    far = x > exp_threshold(x.dtype)                          # exp overflows: e^x·cos y - 1 as exp's
    re = where(far, big_re - 1.0, re)
    e, big = _exp_scaled(x)
    im = where(y.eq(0.0), y, _times_exp(e, big, y.sin()))
    y_bad = ~y.isfinite()
    re = where(x.eq(0.0) & y.eq(0.0), 0.0, re)
    re = where(x.eq(math.inf) & y_bad, math.inf, where(x.eq(-math.inf) & y_bad, -1.0, re))
    im = where(x.eq(math.inf) & y_bad, nan_like(y), where(x.eq(-math.inf) & y_bad, copysign(0.0, y), im))
    return re, im


def log_abs(x: R, y: R) -> R:
    """log|z|, by log1p of |z|² - 1 when |z| is near 1 (where log(hypot) would lose the digits)."""
    ax, ay = x.abs(), y.abs()
    hi, lo = where(ax < ay, ay, ax), where(ax < ay, ax, ay)
    near = (hi > 0.5) & (hi < 2.0) & (lo < 2.0)
    near_one = 0.5 * ((hi - 1.0) * (hi + 1.0) + lo * lo).log1p()
    # subnormal parts: |z| itself would round away digits, so scale both by 2^(mantissa + 1) first
    info = dtypes.finfo(x.dtype)
    k = 1 - round(math.log2(info.eps))
    tiny = hi < info.smallest_normal
    scaled = hypot(x * 2.0 ** k, y * 2.0 ** k).log() - k * math.log(2.0)
    return where(near, near_one, where(tiny, scaled, hypot(x, y).log()))


def log(x: R, y: R) -> Parts:
    return log_abs(x, y), atan2(y, x)


def log1p(x: R, y: R) -> Parts:
    """log(1 + z): the real part from log1p(x(2 + x) + y²) = log1p(|1 + z|² - 1) for small z."""
    small = (x.abs() < 0.5) & (y.abs() < 0.5)
    xp1 = x + 1.0
    re = where(small, 0.5 * (x * (x + 2.0) + y * y).log1p(), log_abs(xp1, y))
    return re, atan2(y, xp1)


def sqrt(x: R, y: R) -> Parts:
    """Kahan: t = √((|x| + |z|)/2); x ≥ 0: t + i·y/(2t), else |y|/(2t) + i·copysign(t, y).
    Subnormal parts are scaled by an even power of two first (|z| would round away their digits)
    and the root by half that power after."""
    k = 1 - round(math.log2(dtypes.finfo(x.dtype).eps))
    k += k % 2
    tiny = (x.abs() < dtypes.finfo(x.dtype).smallest_normal) & (y.abs() < dtypes.finfo(x.dtype).smallest_normal)
    re, im = _sqrt(where(tiny, x * 2.0 ** k, x), where(tiny, y * 2.0 ** k, y))
    return where(tiny, re * 2.0 ** (-k // 2), re), where(tiny, im * 2.0 ** (-k // 2), im)


def _sqrt(x: R, y: R) -> Parts:
    t = (0.5 * x.abs() + 0.5 * hypot(x, y)).sqrt()
    q = y.abs() * 0.5 / t
    pos = ~(x < 0.0)
    re = where(pos, t, q)
    im = where(pos, y * 0.5 / t, copysign(t, y))
    zero = x.eq(0.0) & y.eq(0.0)
    re, im = where(zero, 0.0, re), where(zero, y, im)
    y_inf = y.isinf()
    return where(y_inf, math.inf, re), where(y_inf, y, im)


# ---- hyperbolic and circular functions ---------------------------------------------------------

def sinh(x: R, y: R) -> Parts:
    ax = x.abs()
    big = ax > exp_threshold(x.dtype)
    sx, cx = x.sinh(), x.cosh()
    cy, sy = y.cos(), y.sin()
    # beyond exp's range: sinh x ≈ sign(x)·e^|x|/2, formed as ((e^(|x|/2)/2)·c)·e^(|x|/2)
    half = where(big, ax * 0.5, 0.0).exp()
    re = where(big, (copysign(half * 0.5, x) * cy) * half, sx * cy)
    im = where(big, (half * 0.5 * sy) * half, cx * sy)
    im = where(y.eq(0.0), y, im)
    y_bad = ~y.isfinite()
    zero_x = x.eq(0.0) & y_bad
    inf_x = x.isinf() & y_bad
    re = where(zero_x | inf_x, x, re)
    im = where(zero_x | inf_x, nan_like(y), im)
    return re, im


def cosh(x: R, y: R) -> Parts:
    ax = x.abs()
    big = ax > exp_threshold(x.dtype)
    cy, sy = y.cos(), y.sin()
    half = where(big, ax * 0.5, 0.0).exp()
    re = where(big, (half * 0.5 * cy) * half, x.cosh() * cy)
    im = where(big, (copysign(half * 0.5, x) * sy) * half, x.sinh() * sy)
    # sinh(x)·(±0), inf and NaN x too; a NaN's sign bit is the device's accident (x86 keeps it
    # through -1·x, OpenCL's negation flips it), so a NaN x keeps y's sign as NumPy does
    im = where(y.eq(0.0), where(signbit(x) & ~x.isnan(), -y, y), im)
    y_bad = ~y.isfinite()
    zero_x = x.eq(0.0) & y_bad
    inf_x = x.isinf() & y_bad
    re = where(zero_x, nan_like(x), where(inf_x, math.inf, re))
    im = where(zero_x, 0.0, where(inf_x, nan_like(y), im))
    return re, im


def tanh(x: R, y: R) -> Parts:
    """Kahan: with t = tan y, β = 1 + t², s = sinh x, ρ = √(1 + s²):
    tanh z = (β ρ s + i t) / (1 + β s²); for large |x|, sign(x) + i·4 sin y cos y e^(-2|x|)."""
    t = y.tan()
    beta = 1.0 + t * t
    s = x.sinh()
    rho = (1.0 + s * s).sqrt()
    den = 1.0 + beta * (s * s)
    re = (beta * rho * s) / den
    im = t / den
    far = (x.abs() > (22.0 if x.dtype is dtypes.float64 else 9.0)) & y.isfinite()
    re = where(far, copysign(1.0, x), re)
    im = where(far, 4.0 * y.sin() * y.cos() * (-2.0 * x.abs()).exp(), im)
    im = where(y.eq(0.0), y, im)
    y_bad = ~y.isfinite()
    zero_x = x.eq(0.0) & y_bad
    re = where(zero_x, x, re)
    im = where(zero_x, nan_like(y), im)
    x_inf = x.isinf()
    re = where(x_inf, copysign(1.0, x), re)
    im = where(x_inf, copysign(0.0, y), im)
    return re, im


def _times_i(f, x: R, y: R) -> Parts:
    """f(z) for f(z) = -i g(iz): iz = -y + ix; -i(a + bi) = b - ai."""
    a, b = f(-y, x)
    return b, -a


def sin(x: R, y: R) -> Parts: return _times_i(sinh, x, y)
def tan(x: R, y: R) -> Parts: return _times_i(tanh, x, y)


def cos(x: R, y: R) -> Parts:
    return cosh(-y, x)     # cos z = cosh(iz)


# ---- inverse functions -------------------------------------------------------------------------

def _hull(x: R, y: R) -> tuple[R, R, R, R]:
    """For x, y ≥ 0 (or NaN): (B, D, use_b, im) with asin z = (asin B if use_b else atan2(x, D)) +
    i·im and acos z = (acos B if use_b else atan2(D, x)) - i·im (Hull, Fairgrieve and Tang)."""
    xp1, xm1, one_mx = x + 1.0, x - 1.0, 1.0 - x
    r = hypot(xp1, y)
    s = hypot(xm1, y)
    a = 0.5 * (r + s)
    b = x / a
    y_r = y / (r + xp1)                   # y/(R + x + 1); y²/(R + x + 1) = y·y_r
    small_x = x <= 1.0
    # the angle when B is near 1 (asin B loses accuracy there): atan(x / D)
    d_small = (0.5 * (a + x) * (y * y_r + (s + one_mx))).sqrt()
    apx = a + x
    d_big = y * (0.5 * (apx / (r + xp1) + apx / (s + xm1))).sqrt()
    d = where(small_x, d_small, d_big)
    use_b = b <= 0.6417
    # the imaginary part acosh(A) = log(A + √(A² - 1)), by log1p of A - 1 when A is small
    am1 = where(x < 1.0, 0.5 * (y * y_r + y * (y / (s + one_mx))), 0.5 * (y * y_r + (s + xm1)))
    im_small = (am1 + (am1 * (a + 1.0)).sqrt()).log1p()
    im_big = (a + (a * a - 1.0).sqrt()).log()
    im = where(a <= 1.5, im_small, im_big)
    # y tiny next to 1 - x: A - 1 underflows; acosh(A) ≈ y/√(1 - x²)
    tiny = (x < 1.0) & (y < 1e-100 if x.dtype is dtypes.float64 else y < 1e-15) & (one_mx > 1e-3)
    im = where(tiny, y / (one_mx * xp1).sqrt(), im)
    # |z| so large that squares overflow: asin z ≈ atan2(x, y) + i(log|z| + log 2)
    large = (x > large_threshold(x.dtype)) | (y > large_threshold(x.dtype))
    b = where(large, 2.0, b)            # (never used as asin's argument there)
    d = where(large, y, d)
    im = where(large, hypot(x, y).log() + LN2, im)
    use_b = use_b & ~large
    return b, d, use_b, im


def _asin_quadrant(x: R, y: R, acos: bool) -> Parts:
    """asin (or acos, with the imaginary part's sign left to the caller: it returns +acosh(A)) of
    x + iy for x, y ≥ 0, with Annex G's values at infinities and NaNs."""
    b, d, use_b, im = _hull(x, y)
    if acos:
        re = where(use_b, b.acos(), atan2(d, x))
    else:
        re = where(use_b, b.asin(), atan2(x, d))
    x_inf, y_inf = x.isinf(), y.isinf()
    x_nan, y_nan = x.isnan(), y.isnan()
    pi4, pi2 = PI / 4, PI / 2
    if acos:
        re = where(x_inf & y_inf, pi4, where(x_inf & ~y_nan, 0.0, where(y_inf & ~x_nan, pi2, re)))
    else:
        re = where(x_inf & y_inf, pi4, where(x_inf & ~y_nan, pi2, where(y_inf & ~x_nan, 0.0, re)))
    re = where((x_inf & y_nan) | (y_inf & x_nan), nan_like(x), re)
    im = where(x_inf | y_inf, math.inf, im)
    zero_nan = x.eq(0.0) & y_nan
    re = where(zero_nan, pi2 if acos else x, re)
    im = where(zero_nan, nan_like(y), im)
    return re, im


def asin(x: R, y: R) -> Parts:
    re, im = _asin_quadrant(x.abs(), y.abs(), False)
    return copysign(re, x), copysign(im, y)


def asinh(x: R, y: R) -> Parts:
    """asinh z = -i asin(iz): on the first quadrant the parts of asin(y + ix), swapped."""
    re, im = _asin_quadrant(y.abs(), x.abs(), False)
    return copysign(im, x), copysign(re, y)


def _acos_full(x: R, y: R) -> Parts:
    """acos(x + iy) as (ρ, σ): ρ ∈ [0, π] the real part, σ ≥ 0 the imaginary part's magnitude."""
    rho, sigma = _asin_quadrant(x.abs(), y.abs(), True)
    negative = copysign(1.0, x) < 0.0
    return where(negative, PI - rho, rho), sigma


def acos(x: R, y: R) -> Parts:
    rho, sigma = _acos_full(x, y)
    return rho, copysign(sigma, -y)


def acosh(x: R, y: R) -> Parts:
    """acosh z = ±i acos z with a non-negative real part: (|Im acos z|, copysign(Re acos z, y))."""
    rho, sigma = _acos_full(x, y)
    return sigma.abs(), copysign(rho, y)


def atanh(x: R, y: R) -> Parts:
    """Kahan: ¼ log1p(4x / ((1 - x)² + y²)) + i·½ atan2(2y, (1 - x)(1 + x) - y²) on x ≥ 0, odd."""
    ax = x.abs()
    one_mx = 1.0 - ax
    den = one_mx * one_mx + y * y
    re = 0.25 * (4.0 * ax / den).log1p()
    # near ±1 the squares underflow: ½(log|1 + z| - log|1 - z|)
    tiny = 1e-200 if x.dtype is dtypes.float64 else 1e-30
    re = where(den < tiny, 0.5 * (hypot(1.0 + ax, y).log() - hypot(one_mx, y).log()), re)
    im = 0.5 * atan2(2.0 * y, one_mx * (1.0 + ax) - y * y)
    large = ((ax > large_threshold(x.dtype)) | (y.abs() > large_threshold(x.dtype))) & ~(x.isnan() | y.isnan())
    m = hypot(ax, y)
    re = where(large, (ax / m) / m, re)
    im = where(large, copysign(PI / 2, y), im)
    re = copysign(re, x)
    re = where(x.eq(0.0), x, re)                       # atanh(±0 + iy) = ±0 + i atan(y), NaN y too
    im = where(x.eq(0.0) & y.isnan(), nan_like(y), im)
    y_inf, x_inf = y.isinf(), x.isinf()
    re = where(y_inf | x_inf, copysign(0.0, x), re)
    im = where(y_inf, copysign(PI / 2, y), where(x_inf, where(y.isnan(), nan_like(y), copysign(PI / 2, y)), im))
    return re, im


def atan(x: R, y: R) -> Parts:
    """atan z = -i atanh(iz)."""
    return _times_i(atanh, x, y)


def acos_or_asin(op: Ops):
    return {Ops.ASIN: asin, Ops.ACOS: acos}[op]


# ---- powers ------------------------------------------------------------------------------------

def pow_general(a: R, b: R, c: R, d: R) -> Parts:
    """(a + bi)^(c + di) = exp((c + di)·log(a + bi)), with NumPy's values at a zero base: 1 for a
    zero exponent, 0 for a positive real exponent, NaN otherwise."""
    la, th = log(a, b)
    e_re = c * la - d * th      # the product (c + di)(log|a| + iθ) as C computes it
    e_im = c * th + d * la
    # a real exponent at an infinite base: c·log|a| and c·θ alone (d·log|a| is 0·inf)
    real_inf = d.eq(0.0) & la.isinf()
    e_re = where(real_inf, c * la, e_re)
    e_im = where(real_inf, c * th, e_im)
    re, im = exp(e_re, e_im)
    base_zero = a.eq(0.0) & b.eq(0.0)
    exp_zero = c.eq(0.0) & d.eq(0.0)
    pos_real = (c > 0.0) & d.eq(0.0)
    re = where(base_zero, where(pos_real, 0.0, nan_like(a)), re)
    im = where(base_zero, where(pos_real, 0.0, nan_like(a)), im)
    return where(exp_zero, 1.0, re), where(exp_zero, 0.0, im)


def pow_int(a: R, b: R, n: int) -> Parts:
    """(a + bi)^n for an int 0 < |n| < 100 as NumPy computes it: n = 1, 2, 3 by products of a,
    others by binary powering from 1 (then 1/result for n < 0), and at a zero base 0 for n > 0,
    NaN for n < 0."""
    if n in (1, 2, 3):
        out = (a, b)
        for _ in range(n - 1):
            out = mul(a, b, *out)
    else:
        k, acc, sq = abs(n), (a.full(1.0), a.full(0.0)), (a, b)
        while True:
            if k & 1:
                acc = mul(*acc, *sq)
            k >>= 1
            if not k:
                break
            sq = mul(*sq, *sq)
        out = div(a.full(1.0), a.full(0.0), *acc) if n < 0 else acc
    if n < 0:
        zero = a.eq(0.0) & b.eq(0.0)
        out = (where(zero, nan_like(a), out[0]), where(zero, nan_like(a), out[1]))
    return out
