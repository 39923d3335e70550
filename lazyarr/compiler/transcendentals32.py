"""float32 transcendental functions computed in float32, for stage 18 (decompositions): sixteen
lanes to a 512-bit vector where float64 gets eight. The design and the accuracy are
`lazyarr.compiler.transcendentals`' (whose building blocks these use); the coefficients and
constants are in `transcendentals_coefficients`."""
from __future__ import annotations

from lazyarr.compiler.uop import Ops, UOp
from lazyarr.compiler.transcendentals import (
    ESCAPE_AT, ESCAPE_F32_FUSED, F32, F64, I32, I64, dd_div, escape, estrin, f, fabs, fast_two_sum, fdiv, finite_clamped,
    fused, horner, i, is_int, is_nan, is_odd_int, log_input, log_specials, mad, newton_sqrt, pow2, rint, select, shl, shr,
    two_prod, two_sum)
from lazyarr.compiler.transcendentals_coefficients import (
    COSF_C, COS_C, EXP2F_Q, EXPF_P, IVLN2F_HI, IVLN2F_LO, LN2F_HI, LN2F_LO, LN2_HI, LOG2EF_LO, LOG2E_F, LOG2E_HI,
    LOG2F_P, LOGF_R, PIO2F, PIO2_CW, PIO2_HI, POWF_EXP_Q, POWF_LOG_T, SINF_S, SIN_S, SQRT_HALF_BITS, TANF_T, TANHF_T,
    TWO_OVER_PI_29, TWO_OVER_PI_F, TWO_THIRDS_HI)


def g(v: float) -> UOp:
    return UOp.const(F32, v)


def j(v: int) -> UOp:
    return UOp.const(I32, v)


def bits32(x: UOp) -> UOp:
    return UOp(Ops.BITCAST, I32, (x,))


def from_bits32(n: UOp) -> UOp:
    return UOp(Ops.BITCAST, F32, (n,))


def pow2f(n: UOp) -> UOp:
    """2^n for an int32 n in [-126, 127], from its bits."""
    return from_bits32(shl(n + 127, 23))


def scalef(y: UOp, n: UOp) -> UOp:
    """y·2^n for an int32 n in [-252, 254]: two exact multiplications, one rounding for a subnormal
    result, inf on overflow."""
    half = shr(n, 1)
    return y * pow2f(half) * pow2f(n - half)


def expf_reduce(x: UOp) -> tuple[UOp, UOp]:
    """x = n·ln2 + r, |r| ≤ ln2/2 (+ rounding), n a float32 integer; x finite in [-104, 89]. x −
    n·LN2F_HI is exact (the product has at most 24 bits, Sterbenz for the difference); where the
    target fuses, each step is one FMA (the first as exact, the second rounded once)."""
    n = rint(x * LOG2E_F)
    return n, mad(n, g(-LN2F_LO), mad(n, g(-LN2F_HI), x))


def expf(x: UOp) -> UOp:
    n, r = expf_reduce(finite_clamped(x, -104.0, 89.0))
    y = (r + r * r * horner(r, EXPF_P)) + 1.0
    return select(is_nan(x), x, scalef(y, n.cast(I32)))


def exp2f(x: UOp) -> UOp:
    xc = finite_clamped(x, -151.0, 129.0)
    n = rint(xc)
    r = xc - n                                  # exact
    y = r * horner(r, EXP2F_Q) + 1.0
    return select(is_nan(x), x, scalef(y, n.cast(I32)))


def expm1f(x: UOp) -> UOp:
    """2^n·((1 − 2^−n) + u) with u = e^r − 1 as a float32 pair and the sum exact until its last
    rounding: one rounding, then an exact scaling (n ≤ 0 included: 1 − 2^−n is exact down to −24
    and beyond that below the result's ulp)."""
    xc = finite_clamped(x, -20.0, 89.0)
    n = rint(xc * LOG2E_F)
    r, rl = two_sum(xc - n * LN2F_HI, -(n * LN2F_LO))
    uh, ul = fast_two_sum(r, r * r * horner(r, EXPF_P) + (rl + r * rl))
    ni = n.cast(I32)
    t, tl = two_sum(g(1.0), -pow2f(-ni.minimum(j(126))))
    s, e = two_sum(t, uh)
    out = scalef(s + ((tl + e) + ul), ni)
    return select(fabs(x).lt(g(2.0 ** -25)), x, select(is_nan(x), x, out))


def tanhf(x: UOp) -> UOp:
    """x + x³·T(x²) below ln3/2, 1 − 2/(e^2|x| + 1) above (with x's sign)."""
    a = fabs(x)
    z = x * x
    small = x + x * (z * horner(z, TANHF_T))
    n, r = expf_reduce(finite_clamped(a, 0.0, 10.0) * 2.0)
    e = ((r + r * r * horner(r, EXPF_P)) + 1.0) * pow2f(n.cast(I32))
    t = 1.0 - fdiv(g(2.0), e + 1.0)
    out = select(a.lt(g(0.5493061443340549)), small, select(x.lt(g(0.0)), -t, t))
    return select(a.lt(g(2.0 ** -12)) | is_nan(x), x, out)           # keeps −0


def logf_parts(x: UOp, subnormal: bool = True) -> tuple[UOp, ...]:
    """x = 2^k·(1 + f) with 1 + f ∈ [√½, √2) (x > 0 finite), and the pieces of ln(1 + f) =
    f − (hfsq − s·(hfsq + R)): s = f/(2 + f), hfsq = f²/2, R = 2s²/3 + 2s⁴/5 + ... (a polynomial in
    s²). Returns (k as a float32, f, s, hfsq, R). The exponent comes from subtracting √½'s bits, so
    the significand lands in [√½, √2) without a comparison."""
    adj = j(0)
    if subnormal:
        sub = x.lt(g(2.0 ** -126))
        x = select(sub, x * 2.0 ** 23, x)
        adj = select(sub, j(23), j(0))
    b = bits32(x) - SQRT_HALF_BITS
    k = shr(b, 23) - adj
    fm = from_bits32((b & 0x7FFFFF) + SQRT_HALF_BITS) - 1.0      # exact (Sterbenz)
    s = fdiv(fm, fm + 2.0)
    z = s * s
    return k.cast(F32), fm, s, fm * fm * 0.5, z * horner(z, LOGF_R)


def logf(x: UOp) -> UOp:
    k, fm, s, hfsq, r = logf_parts(log_input(x))
    return log_specials(x, k * LN2F_HI - ((hfsq - (s * (hfsq + r) + k * LN2F_LO)) - fm))


def log2f(x: UOp) -> UOp:
    """k + ln(1 + f)·log2(e) with ln(1 + f) as hi + lo, hi cut to 12 bits so that hi·IVLN2F_HI is
    exact, and k's addition compensated. Where the target fuses, no division: t = log2(1 + f) as
    f·log2(e)'s head + f·(log2(e)'s tail + f·Q(f)) (P = head + f·Q a polynomial of log2(1 + f)/f),
    rounded once at the last FMA (about 0.7 ulp), then k + t (|t| ≤ ½ ≤ |k + t| where k ≠ 0)."""
    if fused.get():
        xin = log_input(x)
        sub = xin.lt(g(2.0 ** -126))
        b = bits32(select(sub, xin * 2.0 ** 23, xin)) - SQRT_HALF_BITS
        k = shr(b, 23) - select(sub, j(23), j(0))
        fm = from_bits32((b & 0x7FFFFF) + SQRT_HALF_BITS) - 1.0      # exact (Sterbenz)
        t = mad(fm, g(LOG2F_P[0]), fm * mad(fm, horner(fm, LOG2F_P[1:]), LOG2EF_LO))
        return log_specials(x, t + k.cast(F32))
    k, fm, s, hfsq, r = logf_parts(log_input(x))
    hi = from_bits32(bits32(fm - hfsq) & -4096)
    lo = ((fm - hi) - hfsq) + s * (hfsq + r)
    vh = hi * IVLN2F_HI
    vl = (lo + hi) * IVLN2F_LO + lo * IVLN2F_HI
    w = k + vh
    return log_specials(x, (vl + ((k - w) + vh)) + w)


def log1pf(x: UOp) -> UOp:
    """ln(u) + c/u where u + c == 1 + x exactly."""
    core = select(g(-1.0).lt(x) & x.lt(g(float("inf"))), x, g(0.0))
    u, c = two_sum(g(1.0), core)
    k, fm, s, hfsq, r = logf_parts(u, subnormal=False)           # u ≥ 2^-24
    out = k * LN2F_HI - ((hfsq - (s * (hfsq + r) + (k * LN2F_LO + fdiv(c, u)))) - fm)
    out = select(x.eq(g(-1.0)), g(float("-inf")), select(x.eq(g(float("inf"))), x, out))
    out = select(x.lt(g(-1.0)), g(float("nan")), select(is_nan(x), x, out))
    return select(fabs(x).lt(g(2.0 ** -24)), x, out)


def reduce_pio2_f32(x: UOp) -> tuple[UOp, UOp, UOp]:
    """x = k·π/2 + y_hi + y_lo (float32 pair) and k mod 4 (int32), for every finite float32 x, in
    float64 (Payne–Hanek shaped for 24-bit significands): x = M·2^e, and x·2/π mod 4 is the sum of
    x times five 29-bit chunks of 2/π at their weights (each product exact in float64: 24 × 29
    bits), the first chunk chosen by e (chunk 0, or chunk 2 from e ≥ 60 on) so that the chunks
    before it only add multiples of 4. In units of 2^-60 quarter turns the first three products
    are taken modulo 4 (exact integers below 2^61), and all five are summed as int64 (the last two
    truncated: 2 units at most; the chunks left out: 2^-2 units), wrapping around modulo 16 quarter
    turns. The nearest float32 to a multiple of π/2 is about 2^-28 of a quarter turn away from it,
    so the reduced argument keeps 2^-30 of relative accuracy even there."""
    xd = x.cast(F64)
    far = f(2.0 ** 83).le(fabs(xd))             # e ≥ 60
    t = [xd * select(far, f(TWO_OVER_PI_29[c + 2] * 2.0 ** (60 - 29 * (c + 3))),
                     f(TWO_OVER_PI_29[c] * 2.0 ** (60 - 29 * (c + 1)))) for c in range(5)]
    t[0], t[1], t[2] = (v - rint(v * 2.0 ** -62) * 2.0 ** 62 for v in t[:3])
    total = (t[0].cast(I64) + t[1].cast(I64)) + (t[2].cast(I64) + t[3].cast(I64)) + t[4].cast(I64)
    k = shr(total + (1 << 59), 60)
    y = (total - shl(k, 60)).cast(F64) * (PIO2_HI * 2.0 ** -60)
    yh = y.cast(F32)
    return yh, (y - yh.cast(F64)).cast(F32), (k & 3).cast(I32)


def trigf(x: UOp, op: Ops) -> UOp:
    finite = fabs(x).lt(g(float("inf")))
    yh, yl, q = reduce_pio2_f32(select(finite, x, g(0.0)))
    return select(finite, _trigf_reduced(x, op, yh, yl, q), g(float("nan")))


def trigf_escaping(x: UOp, op: Ops) -> UOp:
    """trigf for a target with escapes: x = k·π/2 + y in float64 by Cody–Waite for |x| < 2^20 (π/2
    in three 30-bit parts: x − k·part0 is exact, k·part exact for |k| < 2^23, and what is left of
    π/2 adds 2^-71), every other x (inf and nan too) the target's own function (`escape`). A
    third of reduce_pio2_f32's work, which serves every x whatever its size."""
    if fused.get():
        return _trigf_fused(x, op)
    small = fabs(x).lt(g(ESCAPE_AT[F32]))
    xd = select(small, x, g(0.0)).cast(F64)
    k = rint(xd * 0.6366197723675814)
    y = ((xd - k * PIO2_CW[0]) - k * PIO2_CW[1]) - k * PIO2_CW[2]
    # sin and cos of y in float64 and one rounding to float32 (the float32 pairs' work is twice
    # this where FMA makes a float64 polynomial term one instruction); five terms of each
    # polynomial: the first left out adds 2^-28 of y at |y| = π/4
    z = y * y
    s, c = mad(y * z, horner(z, SIN_S[:5]), y), mad(z * z, horner(z, COS_C[:5]), 1.0 - z * 0.5)
    q = k.cast(I64) + (1 if op is Ops.COS else 0)
    odd = (q & 1).eq(i(1))          # (conditions as wide as the values: gcc vectorises no mix)
    if op is Ops.TAN:               # one quotient, one rounding
        out = select(fabs(x).lt(g(2.0 ** -12)), x, fdiv(select(odd, -c, s), select(odd, s, c)).cast(F32))
    elif fused.get():
        v = select(odd, c, s)
        out = select((q & 2).eq(i(2)), -v, v).cast(F32)
        out = out if op is Ops.COS else select(fabs(x).lt(g(2.0 ** -12)), x, out)
    else:
        yh = y.cast(F32)
        out = _trigf_reduced(x, op, yh, (y - yh.cast(F64)).cast(F32), k.cast(I32) & 3)
    return select(small, out, escape(x, op))


def _trigf_fused(x: UOp, op: Ops) -> UOp:
    """sin or cos of float32 x on a target with escapes and FMA, in float32 alone (sixteen lanes a
    512-bit vector, where float64 gets eight, and no conversions): x = k·π/2 + y for |x| < 2^17 by
    Cody–Waite with π/2 in three float32 parts, one FMA each (x − k·part0 is exact: a multiple of
    part0's ulp below 1 for |x| ≥ 1, Sterbenz below; the next two round once each, to half an ulp
    of y), then y + y³·S(y²) or 1 + y²·(−½ + y²·C(y²)), each rounded once at its last FMA, and
    the quadrant's sign flipped in the bits. About 1.1 ulp from the exact value at most, so within
    1 ulp of the correctly rounded result (bench/transcendentals_exhaustive.py: every float32).
    Every other x (inf and nan too) is the target's own function."""
    small = fabs(x).lt(g(ESCAPE_F32_FUSED))
    xs = select(small, x, g(0.0))
    k = rint(xs * TWO_OVER_PI_F)
    q = k.cast(I32) + (1 if op is Ops.COS else 0)
    if op is Ops.TAN:
        out = _tanf_fused(mad(k, g(-PIO2F[0]), xs), k, (q & 1).eq(j(1)))
    else:
        y = mad(k, g(-PIO2F[2]), mad(k, g(-PIO2F[1]), mad(k, g(-PIO2F[0]), xs)))
        z = y * y
        v = select((q & 1).eq(j(1)), mad(z, mad(z, horner(z, COSF_C), -0.5), 1.0), mad(y * z, horner(z, SINF_S), y))
        out = from_bits32(bits32(v).alu(Ops.XOR, shl(q & 2, 30)))   # quadrants 2 and 3: −v
    if op is not Ops.COS:
        out = select(fabs(x).lt(g(2.0 ** -12)), x, out)
    return select(small, out, escape(x, op, ESCAPE_F32_FUSED))


def _tanf_fused(y0: UOp, k: UOp, odd: UOp) -> UOp:
    """tan of x = k·π/2 + y in float32 with FMA, from y0 = x − k·part0 (exact). tan's slope at
    π/4 is twice its value there, so y rounded twice (sin's reduction) would cost 1.6 ulp: y is
    a float32 pair instead, y0 − k·part1 summed exactly (k·part1 split by one FMA), the rest in
    its low part. tan(y) = y + y³·T(y²), its low part added to first order, as a pair; in odd
    quadrants −1/tan(y), one quotient refined by a Newton step on the pair. 1.3 ulp from the
    exact value at most (bench/transcendentals_exhaustive.py: every float32 within 1 ulp of the
    correctly rounded result)."""
    ph, pl = two_prod(k, g(PIO2F[1]))
    yh, err = two_sum(y0, -ph)
    yl = (err - pl) - k * PIO2F[2]
    z = yh * yh
    th, tl = fast_two_sum(yh, mad(yh * z, horner(z, TANF_T), mad(yl, z, yl)))   # |tan(y) − y| < |y|
    q = fdiv(g(-1.0), th)
    return select(odd, mad(q, mad(q, tl, mad(q, th, 1.0)), q), th)


def _trigf_reduced(x: UOp, op: Ops, yh: UOp, yl: UOp, q: UOp) -> UOp:
    """sin, cos or tan of x = q·π/2 + yh + yl (q mod 4, int32): sin and cos of y as float32 pairs,
    tan as their pair quotient."""
    z = yh * yh
    sh, sl = fast_two_sum(yh, yh * z * horner(z, SINF_S) + yl * (1.0 - z * 0.5))
    hz = z * 0.5
    w = 1.0 - hz
    ch, cl = fast_two_sum(w, ((g(1.0) - w) - hz) + (z * z * horner(z, COSF_C) - yh * yl))
    if op is Ops.TAN:
        odd = q.eq(j(1)) | q.eq(j(3))           # tan = sin/cos, or −cos/sin: one pair quotient
        out = dd_div(select(odd, -ch, sh), select(odd, -cl, sl), select(odd, sh, ch), select(odd, sl, cl))
    else:
        sv, cv = sh + sl, ch + cl
        if op is Ops.COS:
            q = (q + 1) & 3
        out = select(q.eq(j(0)), sv, select(q.eq(j(1)), cv, select(q.eq(j(2)), -sv, -cv)))
    if op is not Ops.COS:
        out = select(fabs(x).lt(g(2.0 ** -12)), x, out)
    return out


def powf(x: UOp, y: UOp) -> UOp:
    """C99's pow for float32: log2|x| and 2^(y·log2|x|) in plain float64 (the float32 significand
    and exponent split off with float32 bit tricks), which leaves the result within a small
    fraction of a float32 ulp before its one rounding to float32 (polynomials fitted to that need,
    POWF_LOG_T and POWF_EXP_Q: shorter than float64's); the special cases in float32."""
    ax = fabs(x)
    xin = log_input(ax)
    sub = xin.lt(g(2.0 ** -126))
    b = bits32(select(sub, xin * 2.0 ** 23, xin)) - SQRT_HALF_BITS
    k = shr(b, 23) - select(sub, j(23), j(0))
    fm = from_bits32((b & 0x7FFFFF) + SQRT_HALF_BITS).cast(F64) - 1.0
    sd = fdiv(fm, fm + 2.0)
    z = sd * sd
    l2 = k.cast(F64) + (sd * 2.0 + sd * z * (TWO_THIRDS_HI + z * estrin(z, POWF_LOG_T))) * LOG2E_HI
    yl = y.cast(F64) * l2
    yc = select(yl.le(f(-160.0)), f(-160.0), select(yl.lt(f(130.0)), yl, f(130.0)))   # beyond: 0 or inf
    yc = select(is_nan(yl), f(0.0), yc)
    n = rint(yc)
    t = (yc - n) * LN2_HI
    mag = ((t + t * t * estrin(t, POWF_EXP_Q)) + 1.0) * pow2(n.cast(I64))
    out = mag.cast(F32)               # x = ±1 gives 1 (y·0 = 0, or nan for y = ±inf: clamped to 0)
    # |x| == 0 or inf: 0 or inf by the sign of y·log2|x|; a negative x (−0 and −inf included: the
    # sign bit) with an odd integer y negates
    up = select(ax.eq(g(0.0)), y.lt(g(0.0)), g(0.0).lt(y))
    out = select(ax.eq(g(0.0)) | ax.eq(g(float("inf"))), select(up, g(float("inf")), g(0.0)), out)
    out = select(bits32(x).lt(j(0)) & is_odd_int(y), -out, out)
    nan = is_nan(x) | is_nan(y) | (x.lt(g(0.0)) & is_int(y).alu(Ops.NOT) & fabs(y).lt(g(float("inf"))) &
                                   ax.lt(g(float("inf"))))
    return select(y.eq(g(0.0)) | x.eq(g(1.0)), g(1.0), select(nan, g(float("nan")), out))


def sqrtf(x: UOp) -> UOp:
    """√x in float32: `newton_sqrt`, as sqrt64 is, with float32's range and three Newton steps."""
    return newton_sqrt(x, edge=100, scale=30, magic=0x5F3759DF, steps=3)


UNARY = {Ops.EXP: expf, Ops.EXP2: exp2f, Ops.EXPM1: expm1f, Ops.LOG: logf, Ops.LOG2: log2f,
         Ops.LOG1P: log1pf, Ops.TANH: tanhf, Ops.SQRT: sqrtf}
