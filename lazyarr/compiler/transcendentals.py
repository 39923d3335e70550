"""Transcendental functions as graphs of arithmetic, for stage 18 (decompositions).

Stage 18 (`decompositions.approximation`) rewrites one EXP2, EXP, EXPM1, LOG2, LOG, LOG1P, SIN,
COS, TAN, TANH, POW or SQRT node of float64 (these functions) or float32 (`transcendentals32`'s)
into additions, multiplications, divisions, comparisons, WHERE, RINT, casts and bit casts, which
every target has and which vectorise. The design, in order:
- float64 functions reduce their argument exactly (Cody–Waite: ln2 and π/2 split into parts
  whose products with the reduction's integer are exact; Payne–Hanek for |x| ≥ 2^22 in sin, cos
  and tan: the product of x with 2/π's bits, 24 at a time, reduced modulo 4 term by term, the
  window of bits chosen by x's exponent with a chain of WHERE), evaluate a near-minimax
  polynomial of the reduced argument (coefficients from bench/transcendentals_fit.py), and carry
  the leading terms in double-double arithmetic (exact two-sum and two-product) so that the
  single final rounding dominates the error;
- where the target has exact fused multiply-adds (`fused`: x86-64 with FMA), polynomial terms
  are one MULACC each and the exact product one MULACC (1.1-2x faster); elsewhere polynomials
  round twice a term and the exact product is Dekker's splitting (gcc runs with
  -ffp-contract=off: nothing is fused that the graph does not say), within the same bounds;
- float32 functions are computed in float32, sixteen lanes to a 512-bit vector where float64
  gets eight: Cody–Waite with float32 constants split so that the products are exact (ln2 with
  16 bits, |n| < 2^8), float32 minimax polynomials of the degree float32 needs (5 to 7 terms),
  exponents from int32 bit tricks (log: subtracting √½'s bits lands the significand in [√½, √2)
  with no comparison; scaling by 2^n: two exact multiplications by powers of two built from
  bits), and float32 pairs where one rounding would cost an ulp (expm1: 2^n·((1 − 2^−n) + u)
  summed exactly until its last rounding; log2: the logarithm split into a 12-bit head whose
  product with log2(e)'s head is exact, or with FMA a division-free polynomial of log2(1 + f)/f;
  log1p: 1 + x as an exact float32 pair; sin, cos, tan: the reduced argument, sin and cos as
  float32 pairs, tan as their pair quotient; where FMA fuses and escapes: sin, cos and tan in
  float32 alone, Cody–Waite by FMAs and one polynomial, each step rounded once: 1.1 ulp at most
  for sin and cos; tan's reduced argument a float32 pair and its odd quadrants' quotient refined
  by a Newton step: 1.3 ulp). Two parts stay in float64, where float32 cannot be exact cheaply:
  the reduction of sin, cos and tan without escapes (every x whatever its size, branch-free: x's
  24-bit significand times five 29-bit chunks of 2/π, each product exact in float64, the window
  chosen by x's exponent among two, summed modulo 4 as int64 in units of 2^-60 of a quarter
  turn: the float32 closest to a multiple of π/2 needs far less), and pow's log2|x| and
  2^(y·log2|x|) (y·log2|x| up to ±150 needs 2^-32 of log2's precision), each rounded once to
  float32;
- on a target with escapes (C on x86-64: `escape`, rendered as a libm call that gcc makes once
  a vector and that calls libm only for the lanes that need it), sin, cos and tan reduce only
  arguments below 2^20 (float32: Cody–Waite in float64, `trigf_escaping`; sin and cos with FMA
  below 2^17, in float32: `_trigf_fused`) or 2^22 (float64:
  Cody–Waite), and larger ones, inf and nan are libm's: about half the work for float32, a fifth
  for float64, which no longer runs Payne–Hanek beside Cody–Waite on every element;
- scaling by 2^n is two exact multiplications by powers of two built from bits, so results that
  are subnormal round once, and overflow gives inf;
- special values are explicit: nan propagates, ±inf and ±0 give what C99 (and NumPy) give, tiny
  arguments of odd functions return the argument itself (keeping -0 and subnormals exact).
Measured against NumPy (bench/transcendentals_accuracy.py; tests/test_decompositions_accuracy.py
checks the same over millions of points): float64 within 1 ulp of NumPy for every function;
float32 within 1 ulp of NumPy's float64 result rounded to float32 (the correctly rounded result),
over all 2^32 float32 inputs for the unary functions (bench/transcendentals_exhaustive.py; 0.1 to
0.4% of inputs are 1 ulp off; with escapes and FMA, sin 1.6%, cos 1.7% and tan 2.0%),
and so never further from NumPy's own float32 functions than those are from it plus one ulp (they
are up to 2 ulp off for exp, exp2, log2, 3 for log, 4 for tan: NumPy's SIMD float32 code).
Payne–Hanek sums its terms in double-double, which leaves about 2^-100 of absolute error in the
reduced argument: arguments within 2^-50 of a multiple of π/2 whose magnitude is above 2^22 (a
fraction of about 2^-48 of such doubles) can be off by more than an ulp.
"""
from __future__ import annotations

from contextvars import ContextVar

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.compiler.transcendentals_coefficients import (
    EXP_Q, LOG_T, SIN_S, COS_C, LN2_CW_HI, LN2_CW_LO, LN2_HI, LN2_LO, LOG2E_HI, LOG2E_LO, TWO_THIRDS_HI,
    TWO_THIRDS_LO, PIO2_HI, PIO2_LO, PIO2_CW, TWO_OVER_PI_24)

F64, I64, F32, I32 = dtypes.float64, dtypes.int64, dtypes.float32, dtypes.int32
# sin, cos and tan on a target with escapes leave arguments of this magnitude or more to it
ESCAPE_AT = {F32: 2.0 ** 20, F64: 2.0 ** 22}
# float32 sin, cos and tan reduced in float32 (a target with escapes and FMA) leave arguments from here on
ESCAPE_F32_FUSED = 2.0 ** 17

# ---- building blocks ------------------------------------------------------------------------

def f(v: float) -> UOp:
    return UOp.const(F64, v)


def i(v: int) -> UOp:
    return UOp.const(I64, v)


def fdiv(a: UOp, b: UOp) -> UOp:
    return a.alu(Ops.FDIV, b)


def rint(x: UOp) -> UOp:
    return x.alu(Ops.RINT)


def to_bits(x: UOp) -> UOp:
    return UOp(Ops.BITCAST, I64, (x,))


def from_bits(n: UOp) -> UOp:
    return UOp(Ops.BITCAST, F64, (n,))


def shr(n: UOp, k: int) -> UOp:
    return n.alu(Ops.SHR, n.const_like(k))


def shl(n: UOp, k: int) -> UOp:
    return n.alu(Ops.SHL, n.const_like(k))


def select(cond: UOp, a: UOp, b: UOp) -> UOp:
    return UOp(Ops.WHERE, a.dtype, (cond, a, b))


def is_nan(x: UOp) -> UOp:
    return x.ne(x)


def fabs(x: UOp) -> UOp:
    return x.alu(Ops.ABS)


# whether the graph being built may use fused multiply-adds (the target's `fused_approximations`:
# its hardware has them): polynomials then take one rounding a term, and two_prod one FMA
fused: ContextVar[bool] = ContextVar("fused", default=False)


def mad(a: UOp, b: UOp, c: UOp | float) -> UOp:
    """a·b + c: rounded once (MULACC) where the target fuses, else twice."""
    return UOp(Ops.MULACC, a.dtype, (a, b, a.const_like(c) if isinstance(c, float) else c)) if fused.get() else a * b + c


def horner(x: UOp, coeffs: tuple[float, ...]) -> UOp:
    """Σ coeffs[k]·x^k, in x's dtype."""
    out = x.const_like(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        out = mad(out, x, c)
    return out


def estrin(x: UOp, coeffs: tuple[float, ...]) -> UOp:
    """Σ coeffs[k]·x^k by Estrin's scheme: pairs c_k + c_(k+1)·x, then pairs of those with x², and
    so on; a shorter chain of dependent operations than Horner's, for long polynomials."""
    terms, p = [x.const_like(c) for c in coeffs], x
    while len(terms) > 1:
        terms = [mad(terms[k + 1], p, terms[k]) for k in range(0, len(terms) - 1, 2)] + terms[len(terms) - len(terms) % 2:]
        p = p * p
    return terms[0]


def two_sum(a: UOp, b: UOp) -> tuple[UOp, UOp]:
    """s + e == a + b exactly, s = fl(a + b) (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fast_two_sum(a: UOp, b: UOp) -> tuple[UOp, UOp]:
    """s + e == a + b exactly, for |a| ≥ |b| (Dekker)."""
    s = a + b
    return s, b - (s - a)


def split(a: UOp) -> tuple[UOp, UOp]:
    """a == hi + lo with halves of the significand (Veltkamp: 26 and 27 bits for float64, |a| <
    2^995; 12 and 12 for float32, |a| < 2^115)."""
    t = a * (4097.0 if a.dtype is F32 else 134217729.0)
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a: UOp, b: UOp) -> tuple[UOp, UOp]:
    """p + e == a·b exactly, p = fl(a·b): one FMA where the target fuses, else Dekker's."""
    p = a * b
    if fused.get():
        return p, mad(a, b, -p)
    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def dd_div(ah: UOp, al: UOp, bh: UOp, bl: UOp) -> UOp:
    """(ah + al) / (bh + bl), rounded once at the end."""
    q = fdiv(ah, bh)
    p, pe = two_prod(q, bh)
    r = (((ah - p) - pe) + al) - q * bl
    return q + fdiv(r, bh)


def pow2(n: UOp) -> UOp:
    """2^n for an int64 n in [-1022, 1023], from its bits."""
    return from_bits(shl(n + 1023, 52))


def scale(y: UOp, n: UOp) -> UOp:
    """y·2^n for an int64 n in [-2044, 2046], as two exact multiplications (one rounding for a
    subnormal result, inf on overflow)."""
    half = shr(n, 1)
    return y * pow2(half) * pow2(n - half)


# ---- exp family -------------------------------------------------------------------------------

def exp_reduce(x: UOp) -> tuple[UOp, UOp, UOp]:
    """x = n·ln2 + t_hi + t_lo with |t| ≤ ln2/2 and n an int64 (x finite, clamped)."""
    n = rint(x * LOG2E_HI)
    t_hi = x - n * LN2_CW_HI                    # exact: n·LN2_CW_HI has ≤ 53 bits, x ≈ n·ln2
    t, tl = fast_two_sum(t_hi, -(n * LN2_CW_LO))
    return n.cast(I64), t, tl


def expm1_kernel(t: UOp, tl: UOp) -> tuple[UOp, UOp]:
    """e^(t+tl) − 1 as a double-double (u_hi, u_lo), |t| ≤ 0.35."""
    tail = t * t * horner(t, EXP_Q) + (tl + t * tl)
    return fast_two_sum(t, tail)


def exp_kernel(t: UOp, tl: UOp) -> UOp:
    """e^(t+tl), |t| ≤ 0.35, rounded once."""
    uh, ul = expm1_kernel(t, tl)
    s, e = fast_two_sum(f(1.0), uh)
    return s + (e + ul)


def finite_clamped(x: UOp, lo: float, hi: float) -> UOp:
    """x within [lo, hi], nan as lo (callers give nan back at the end): two comparisons and two
    blends, where MAX and MIN, which propagate nan, cost more."""
    return select(x.const_like(lo).lt(x), select(x.lt(x.const_like(hi)), x, x.const_like(hi)), x.const_like(lo))


def exp64(x: UOp) -> UOp:
    n, t, tl = exp_reduce(finite_clamped(x, -760.0, 720.0))
    return select(is_nan(x), x, scale(exp_kernel(t, tl), n))


def exp2_64(x: UOp) -> UOp:
    xc = finite_clamped(x, -1100.0, 1100.0)
    n = rint(xc)
    r = xc - n                                  # exact
    p, pe = two_prod(r, f(LN2_HI))
    t, tl = fast_two_sum(p, pe + r * LN2_LO)
    return select(is_nan(x), x, scale(exp_kernel(t, tl), n.cast(I64)))


def expm1_dd(x: UOp) -> tuple[UOp, UOp]:
    """e^x − 1 as a double-double, for finite x in [-760, 40] (clamped by the caller)."""
    n, t, tl = exp_reduce(x)
    uh, ul = expm1_kernel(t, tl)
    a = scale(uh, n)
    b = scale(f(1.0), n) - 1.0                  # 2^n − 1, exact for |n| ≤ 53
    s, e = two_sum(a, b)
    return fast_two_sum(s, e + scale(ul, n))


def expm1_64(x: UOp) -> UOp:
    xc = finite_clamped(x, -760.0, 720.0)
    hi, lo = expm1_dd(select(xc.lt(f(40.0)), xc, f(40.0)))
    n, t, tl = exp_reduce(xc)
    big = scale(exp_kernel(t, tl), n)           # e^x − 1 rounds to e^x for x > 40
    out = select(f(40.0).lt(xc), big, hi + lo)
    return select(fabs(x).lt(f(2.0 ** -54)), x, select(is_nan(x), x, out))


def tanh64(x: UOp) -> UOp:
    a = fabs(x)
    uh, ul = expm1_dd(finite_clamped(a * -2.0, -760.0, 0.0))    # u = e^(−2|x|) − 1 ∈ (−1, 0]
    dh, dl = two_sum(f(2.0), uh)
    t = dd_div(-uh, -ul, dh, dl + ul)           # tanh|x| = −u / (2 + u)
    out = select(x.lt(f(0.0)), -t, t)
    return select(a.lt(f(2.0 ** -28)), x, select(is_nan(x), x, out))


# ---- log family -------------------------------------------------------------------------------

def log_parts(x: UOp) -> tuple[UOp, UOp, UOp]:
    """x = 2^k·m with m ∈ [√½, √2), and ln m as a double-double (x > 0 finite; subnormals scaled)."""
    sub = x.lt(f(2.0 ** -1022))
    xs = select(sub, x * 2.0 ** 54, x)
    b = to_bits(xs)
    k = shr(b, 52) - select(sub, i(1023 + 54), i(1023))
    m = from_bits((b & i(0x000FFFFFFFFFFFFF)) | i(0x3FF0000000000000))
    big = f(1.4142135623730951).lt(m)
    m = select(big, m * 0.5, m)
    k = select(big, k + 1, k).cast(F64)
    fm = m - 1.0                                # exact (Sterbenz)
    # s = f/(2+f) as a double-double; ln m = 2s + 2s³/3 + s⁵·T(s²)
    dh, dl = two_sum(f(2.0), fm)
    sh = fdiv(fm, dh)
    p, pe = two_prod(sh, dh)
    sl = fdiv(((fm - p) - pe) - sh * dl, dh)
    zh, ze = two_prod(sh, sh)
    zl = ze + 2.0 * sh * sl
    c3h, c3e = two_prod(zh, sh)
    c3l = c3e + zh * sl + zl * sh
    t3h, t3e = two_prod(c3h, f(TWO_THIRDS_HI))
    t3l = t3e + c3h * TWO_THIRDS_LO + c3l * TWO_THIRDS_HI
    tail = c3h * zh * horner(zh, LOG_T)
    a, ae = fast_two_sum(sh * 2.0, t3h)
    lh, ll = fast_two_sum(a, ae + sl * 2.0 + t3l + tail)
    return k, lh, ll


def log_specials(x: UOp, out: UOp) -> UOp:
    """A logarithm's value `out` of x, with C99's for 0 (-inf), inf, negatives and nan (x's dtype)."""
    c = x.const_like
    out = select(x.eq(c(0.0)), c(float("-inf")), out)
    out = select(x.eq(c(float("inf"))), x, out)
    return select(x.lt(c(0.0)), c(float("nan")), select(is_nan(x), x, out))


def log_input(x: UOp) -> UOp:
    """x where log's core applies, 1 elsewhere (0, negative, inf, nan are handled apart)."""
    c = x.const_like
    return select(c(0.0).lt(x) & x.lt(c(float("inf"))), x, c(1.0))


def log64(x: UOp) -> UOp:
    k, lh, ll = log_parts(log_input(x))
    h, e = two_sum(k * LN2_CW_HI, lh)           # k·LN2_CW_HI exact
    return log_specials(x, h + (e + ll + k * LN2_CW_LO))


def log2_dd(x: UOp) -> tuple[UOp, UOp]:
    k, lh, ll = log_parts(x)
    p, pe = two_prod(lh, f(LOG2E_HI))
    pl = pe + lh * LOG2E_LO + ll * LOG2E_HI
    h, e = two_sum(k, p)
    return fast_two_sum(h, e + pl)


def log2_64(x: UOp) -> UOp:
    h, lo = log2_dd(log_input(x))
    return log_specials(x, h + lo)


def log1p64(x: UOp) -> UOp:
    core = select(f(-1.0).lt(x) & x.lt(f(float("inf"))), x, f(0.0))
    u, c = two_sum(f(1.0), core)               # 1 + x == u + c exactly
    k, lh, ll = log_parts(u)
    h, e = two_sum(k * LN2_CW_HI, lh)
    out = h + (e + ll + k * LN2_CW_LO + fdiv(c, u))
    out = select(x.eq(f(-1.0)), f(float("-inf")), select(x.eq(f(float("inf"))), x, out))
    out = select(x.lt(f(-1.0)), f(float("nan")), select(is_nan(x), x, out))
    return select(fabs(x).lt(f(2.0 ** -60)), x, out)


# ---- pow ----------------------------------------------------------------------------------------

def is_int(y: UOp) -> UOp:
    return rint(y).eq(y)


def is_odd_int(y: UOp) -> UOp:
    half = y * 0.5
    return is_int(y) & rint(half).ne(half) & fabs(y).lt(y.const_like(2.0 ** 53))


def pow64(x: UOp, y: UOp) -> UOp:
    """C99's pow: |x|^y by exp2(y·log2|x|) in double-double, then the signs and special cases."""
    ax = fabs(x)
    lh, ll = log2_dd(log_input(ax))
    p, pe = two_prod(y, lh)
    yh, yl = fast_two_sum(p, pe + y * ll)
    clamp = yh.lt(f(-1200.0)) | f(1100.0).lt(yh) | is_nan(yh)
    yc = select(clamp, f(0.0), yh)
    n = rint(yc)
    rh, rl = two_sum(yc - n, select(clamp, f(0.0), yl))
    q, qe = two_prod(rh, f(LN2_HI))
    t, tl = fast_two_sum(q, qe + rh * LN2_LO + rl * LN2_HI)
    mag = scale(exp_kernel(t, tl), n.cast(I64))
    # |x| == 0, inf, or 1, and y = ±inf, and huge |y·log2|x||, by the sign of y·log2|x|
    lx = select(ax.eq(f(0.0)), f(-1.0), select(ax.eq(f(float("inf"))), f(1.0), lh))
    goes_up = select(y.lt(f(0.0)), lx.lt(f(0.0)), f(0.0).lt(lx))
    extreme = ax.eq(f(0.0)) | ax.eq(f(float("inf"))) | fabs(y).eq(f(float("inf"))) | clamp
    mag = select(extreme, select(goes_up, f(float("inf")), f(0.0)), mag)
    mag = select(ax.eq(f(1.0)), f(1.0), mag)
    out = select(x.lt(f(0.0)) & is_odd_int(y), -mag, mag)
    out = select(x.lt(f(0.0)) & is_int(y).alu(Ops.NOT) & fabs(y).lt(f(float("inf"))) & fabs(x).lt(f(float("inf"))),
                 f(float("nan")), out)
    out = select(x.eq(f(0.0)) & is_odd_int(y), select(y.lt(f(0.0)), UOp(Ops.COPYSIGN, F64, (f(float("inf")), x)),
                                                      UOp(Ops.COPYSIGN, F64, (f(0.0), x))), out)
    out = select(is_nan(x) | is_nan(y), f(float("nan")), out)
    out = select(x.eq(f(-1.0)) & fabs(y).eq(f(float("inf"))), f(1.0), out)
    return select(y.eq(f(0.0)) | x.eq(f(1.0)), f(1.0), out)


# ---- sin, cos, tan ------------------------------------------------------------------------------

def reduce_cody_waite(x: UOp) -> tuple[UOp, UOp, UOp]:
    """x = k·π/2 + y_hi + y_lo for |x| < 2^22, with k an int64."""
    k = rint(x * 0.6366197723675814)
    a = x - k * PIO2_CW[0]                      # exact
    h, l1 = two_sum(a, -(k * PIO2_CW[1]))       # k·part exact for |k| < 2^23
    h2, l2 = two_sum(h, -(k * PIO2_CW[2]))
    yh, yl = two_sum(h2, (l1 + l2) - k * PIO2_CW[3])
    return yh, yl, k.cast(I64)


def _mod4(t: UOp) -> UOp:
    """t − 4·rint(t/4): exact, in [-2, 2]."""
    return t - rint(t * 0.25) * 4.0


def reduce_payne_hanek(x: UOp, max_exponent: int) -> tuple[UOp, UOp, UOp]:
    """x = k·π/2 + y_hi + y_lo for finite |x| ≥ 2^22 (x's exponent at most `max_exponent`): x·(2/π)
    modulo 4 from the 7 chunks of 24 bits of 2/π that matter for x's exponent."""
    e = (shr(to_bits(x), 52) & i(0x7FF)) - 1023 - 52      # x = M·2^e, M < 2^53
    # chunks before j0 = ⌊(e−2)/24⌋ give multiples of 4; ⌊v/24⌋ = (v·2731) >> 16 for 0 ≤ v < 8192
    # (a multiply that vectorises, where a 64-bit division does not)
    j0 = shr((e - 2).maximum(i(0)) * 2731, 16)
    count = max(0, (max_exponent - 52 - 2) // 24) + 1
    chunks = []
    for c in range(7):
        g = f(float(TWO_OVER_PI_24[count - 1 + c]))
        for j in range(count - 2, -1, -1):
            g = select(j0.eq(i(j)), f(float(TWO_OVER_PI_24[j + c])), g)
        chunks.append(g)
    xs = x * from_bits(shl(1023 - j0 * 24, 52))            # x·2^(−24·j0), exact
    x1, x2 = split(xs)
    s, err = f(0.0), f(0.0)
    for c, g in enumerate(chunks):
        w = 2.0 ** (-24 * (c + 1))
        for part in (x1, x2):
            s, e2 = two_sum(s, _mod4(part * g * w))        # each product exact (≤ 51 bits)
            err = err + e2
            s = _mod4(s)
    k = rint(s)
    fh, fl = two_sum(s - k, err)
    p, pe = two_prod(fh, f(PIO2_HI))
    yh, yl = fast_two_sum(p, pe + fh * PIO2_LO + fl * PIO2_HI)
    return yh, yl, k.cast(I64)


def sin_kernel(yh: UOp, yl: UOp) -> tuple[UOp, UOp]:
    """sin(yh + yl) as a double-double, |y| ≤ 0.8."""
    z = yh * yh
    return fast_two_sum(yh, yh * z * horner(z, SIN_S) + yl * (1.0 - z * 0.5))


def cos_kernel(yh: UOp, yl: UOp) -> tuple[UOp, UOp]:
    """cos(yh + yl) as a double-double, |y| ≤ 0.8."""
    z = yh * yh
    hz = z * 0.5
    w = 1.0 - hz
    return fast_two_sum(w, ((f(1.0) - w) - hz) + (z * z * horner(z, COS_C) - yh * yl))


def trig64(x: UOp, op: Ops, escapes: bool = False) -> UOp:
    """sin, cos or tan of float64 x: Cody–Waite below 2^22, Payne–Hanek above (both computed, one
    selected), or with `escapes` the target's own function above (`escape`)."""
    small = fabs(x).lt(f(ESCAPE_AT[F64]))     # (inf, nan: not small)
    ch, cl, ck = reduce_cody_waite(select(small, x, f(0.0)))
    finite = fabs(x).lt(f(float("inf")))
    if escapes:
        yh, yl, q = ch, cl, ck & i(3)
    else:
        ph, pl, pk = reduce_payne_hanek(select(small, f(2.0 ** 22), select(finite, x, f(0.0))), 1023)
        yh, yl, q = select(small, ch, ph), select(small, cl, pl), select(small, ck, pk) & i(3)
    sh, sl = sin_kernel(yh, yl)
    c_h, c_l = cos_kernel(yh, yl)
    if op is Ops.TAN:
        odd = q.eq(i(1)) | q.eq(i(3))
        out = select(odd, dd_div(-c_h, -c_l, sh, sl), dd_div(sh, sl, c_h, c_l))
    else:
        s, c = sh + sl, c_h + c_l
        if op is Ops.COS:
            q = (q + 1) & i(3)                  # cos x = sin(x + π/2)
        out = select(q.eq(i(0)), s, select(q.eq(i(1)), c, select(q.eq(i(2)), -s, -c)))
    if op is not Ops.COS:
        out = select(fabs(x).lt(f(2.0 ** -27)), x, out)
    return select(small, out, escape(x, op)) if escapes else select(finite, out, f(float("nan")))


def escape(x: UOp, op: Ops, at: float | None = None) -> UOp:
    """The target's own function `op` of x (its math library's), for the x of magnitude
    ESCAPE_AT[dtype] or more, inf and nan, which the approximation leaves to it. The renderer
    calls it only for vector lanes that hold such an x (a branch on the whole vector), so the
    approximation's cheap reduction serves every other element."""
    return UOp(op, x.dtype, (x,), ("escape", ESCAPE_AT[x.dtype] if at is None else at))   # (uop.is_escape)


# ---- sqrt -----------------------------------------------------------------------------------------

def sqrt64(x: UOp) -> UOp:
    """√x by Newton's iteration on 1/√x from a bit-trick guess, then one correction with the exact
    residual x − y² (two_prod), which rounds as a correctly rounded square root does."""
    return newton_sqrt(x, edge=900, scale=100, magic=0x5FE6EB50C7B537A9, steps=4)


def newton_sqrt(x: UOp, edge: int, scale: int, magic: int, steps: int) -> UOp:
    """√x in x's dtype (float64 or float32): arguments below 2^-edge or above 2^edge scaled by
    2^(±2·scale) first (the result then by 2^(∓scale)), a guess of 1/√x from its bits (`magic`
    minus half the bits), `steps` Newton steps on 1/√x, then y + (x − y²)·(1/√x)/2 with the
    residual exact (two_prod); zeros and inf are themselves, negatives and nan nan."""
    c, bits = x.const_like, I64 if x.dtype is F64 else I32
    tiny, huge = x.lt(c(2.0 ** -edge)), c(2.0 ** edge).lt(x)
    xs = select(tiny, x * 2.0 ** (2 * scale), select(huge, x * 2.0 ** (-2 * scale), x))
    xs = select(c(0.0).lt(x) & x.lt(c(float("inf"))), xs, c(1.0))
    r = UOp(Ops.BITCAST, x.dtype, (UOp.const(bits, magic) - shr(UOp(Ops.BITCAST, bits, (xs,)), 1),))
    for _ in range(steps):
        r = r * (1.5 - (xs * 0.5) * r * r)
    y = xs * r
    p, pe = two_prod(y, y)
    y = y + ((xs - p) - pe) * r * 0.5
    y = select(tiny, y * 2.0 ** -scale, select(huge, y * 2.0 ** scale, y))
    y = select(x.eq(c(0.0)) | x.eq(c(float("inf"))), x, y)
    return select(x.lt(c(0.0)) | is_nan(x), c(float("nan")), y)


UNARY = {Ops.EXP: exp64, Ops.EXP2: exp2_64, Ops.EXPM1: expm1_64, Ops.LOG: log64, Ops.LOG2: log2_64,
         Ops.LOG1P: log1p64, Ops.TANH: tanh64, Ops.SQRT: sqrt64}
