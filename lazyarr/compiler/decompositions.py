"""Stage 18, decompositions: rewrite what the target lacks into what it has.

Each renderer declares the ops it has natively (`renderer.native_ops`), whether it has a fused
multiply-add (`renderer.has_fma`), and which transcendental functions it approximates by default
(`renderer.approx_by_default`: those measured faster, bench/transcendentals.py, per dtype), which
`lazyarr.settings.transcendentals` ("native" or "approx") overrides for all of them.
`Target.of(renderer)` reads those. The pass runs `symbolic_simple` together with these rules, in this order:
1. operations that only remove work, on every target: x*-1 → NEG(x) (integers: for floats the
   sign of a NaN would change), De Morgan toward fewer NOTs (¬a ∧ ¬b → ¬(a ∨ b), ¬a ∨ ¬b →
   ¬(a ∧ b)), and negated integer comparisons (¬(x<c) → c-1<x, ¬(x<y) → y≤x, ...);
2. integer ops the target lacks: x % 2^k → x & (2^k−1), x * 2^k → x << k, x // 2^k → x >> k
   (for a dividend that may be negative, a bias of 2^k−1 is added first, which makes the shift
   truncate toward zero as C's division does), x // d → (x·M) >> S and x % d → x − (x // d)·d
   for any other constant d (the multiply in a wider integer type where the product could
   overflow, and only where the dividend's bounds make the magic number exact), and De Morgan the
   other way (a ∨ b → ¬(¬a ∧ ¬b), a ∧ b → ¬(¬a ∨ ¬b)) where OR or AND is missing;
3. a·b + c → MULACC(a, b, c) where the target has MULACC: for integers always, for floats only
   with `has_fma` (the C renderer says no: a fused multiply-add rounds once where NumPy rounds
   twice, and lazyarr's CPU results match NumPy's bit for bit; gcc runs with -ffp-contract=off);
4. floating-point division by a power of two, x / 2^k → x · 2^-k, where the target lacks FDIV
   (exact: both round the same real number; other reciprocals are inexact and never used);
5. transcendental functions the target lacks, or all of them with transcendentals="approx":
   exp2, exp, expm1, log2, log, log1p, sin, cos, tan, tanh, pow and sqrt become polynomials and
   bit manipulations (`lazyarr.compiler.transcendentals`, which says how and how accurately);
   on a target with `escapes` (`renderer.escapes`: C on x86-64), sin, cos and tan reduce only
   arguments below 2^20 (float32) or 2^22 (float64) and leave the others to the target's library
   through an escape node, which the renderer runs only for vector lanes that need it; on a
   target with `fused_approximations` (C on x86-64 with FMA) the approximations use MULACC
   themselves (their own rounding, not NumPy's a·b + c: rule 3 still never fuses the user's).
Every integer rule here is proven by z3 in tests/test_z3_rules.py.
"""
from __future__ import annotations

from dataclasses import dataclass

from lazyarr import dtypes, settings
from lazyarr.compiler import transcendentals as t64, transcendentals32 as t32
from lazyarr.compiler.patterns import PatternMatcher, UPat, graph_rewrite
from lazyarr.compiler.symbolic import BOOL, INTS, SIGNED, fits, symbolic_simple
from lazyarr.compiler.uop import Ops, UOp

P = UPat
# the functions this stage has approximations of: the unary tables of both modules, and the trig
# functions and pow, which take arguments of their own (`approximation`); SQRT is no
# transcendental (what each costs is its OpDef's `cost`)
TRANSCENDENTAL = frozenset(t64.UNARY.keys() | t32.UNARY.keys() | {Ops.SIN, Ops.COS, Ops.TAN, Ops.POW}) - {Ops.SQRT}


@dataclass(frozen=True)
class Target:
    """What a renderer computes natively. `approx`: (op, dtype) pairs of transcendental functions
    approximated for that dtype although the target has them (the renderer's measured defaults)."""
    native_ops: frozenset
    has_fma: bool = False
    approx: frozenset = frozenset()
    escapes: bool = False     # takes transcendentals.escape nodes (the renderer's `escapes`)
    fused: bool = False       # approximations may use fused multiply-adds (`fused_approximations`)

    def has(self, op: Ops) -> bool:
        return op in self.native_ops

    def native(self, op: Ops, dtype: dtypes.DType) -> bool:
        """Whether `op` on `dtype` is left to the target (else stage 18 decomposes it)."""
        return op in self.native_ops and (op, dtype) not in self.approx

    @staticmethod
    def of(renderer, transcendentals: str | None = None) -> Target:
        """The target of `renderer`. transcendentals: "native" (the renderer's math library for
        every function it has), "approx" (this stage's approximations for all of them), or None:
        `lazyarr.settings.transcendentals`, and where that is None too the renderer's default,
        `renderer.approx_by_default` (the functions whose approximations measured faster): a
        mapping from dtype to ops, or a set of ops (for every float dtype) and (op, dtype) pairs."""
        mode = transcendentals or settings.transcendentals
        if mode not in (None, "native", "approx"):
            raise ValueError(f"transcendentals must be 'native' or 'approx', got {mode!r}")
        ops = frozenset(renderer.native_ops)
        approx: frozenset = frozenset()
        if mode == "approx":
            ops = ops - TRANSCENDENTAL
        elif mode is None:
            approx = approx_pairs(renderer.approx_by_default)
        return Target(ops, renderer.has_fma, approx, renderer.escapes, renderer.fused_approximations)


def approx_pairs(default) -> frozenset:
    """`approx_by_default` as (op, dtype) pairs."""
    if isinstance(default, dict):
        return frozenset((op, d) for d, ops in default.items() for op in ops)
    out: set = set()
    for e in default:
        out |= {e} if isinstance(e, tuple) else {(e, dtypes.float32), (e, dtypes.float64)}
    return frozenset(out)


# ---- integer helpers ----------------------------------------------------------------------

def log2_exact(c: int) -> int | None:
    """k where c == 2^k (c > 0), else None."""
    return c.bit_length() - 1 if c > 0 and c & (c - 1) == 0 else None


def shift_div(x: UOp, k: int) -> UOp:
    """x // 2^k with C's truncation: x >> k, biased by 2^k−1 first where x may be negative."""
    if x.vmin >= 0:
        return x.alu(Ops.SHR, x.const_like(k))
    bias = x.alu(Ops.SHR, x.const_like(x.dtype.bits - 1)).alu(Ops.AND, x.const_like(2 ** k - 1))
    return (x + bias).alu(Ops.SHR, x.const_like(k))


WIDER = {dtypes.int8: dtypes.int64, dtypes.int16: dtypes.int64, dtypes.int32: dtypes.int64,
         dtypes.int64: dtypes.int64, dtypes.uint8: dtypes.uint64, dtypes.uint16: dtypes.uint64,
         dtypes.uint32: dtypes.uint64, dtypes.uint64: dtypes.uint64}


def magic(d: int, n: int, wide: dtypes.DType) -> tuple[int, int] | None:
    """(M, S) with floor(x·M / 2^S) == floor(x / d) for 0 ≤ x ≤ n, and n·M within `wide`; the
    condition is (M·d − 2^S)·n < 2^S (Granlund–Montgomery), which makes the error term smaller
    than one step of the quotient."""
    for s in range(0, wide.bits):
        m = -(-(1 << s) // d)
        if (m * d - (1 << s)) * n < (1 << s):
            return (m, s) if fits(wide, n * m) else None
    return None


def fast_div(x: UOp, d: int) -> UOp | None:
    """x // d for a constant d > 1 that is not a power of two: (x·M) >> S in a wide enough type,
    plus one for negative x (C truncates toward zero, the shift rounds down)."""
    n = max(abs(x.vmin), abs(x.vmax))
    wide = WIDER[x.dtype]
    found = magic(d, n, wide)
    if found is None:
        return None
    m, s = found
    xw = x.cast(wide)
    q = (xw * m).alu(Ops.SHR, UOp.const(wide, s))
    if x.vmin < 0:
        q = q - xw.alu(Ops.SHR, UOp.const(wide, wide.bits - 1))
    return q.cast(x.dtype)


def _mod_pow2(ctx, x: UOp, c: UOp) -> UOp | None:
    k = log2_exact(c.arg)
    if ctx.has(Ops.MOD) or k is None:
        return None
    if x.dtype.is_unsigned or x.vmin >= 0:
        return x & (c.arg - 1)
    return x - shift_div(x, k).alu(Ops.SHL, x.const_like(k))


def _mul_pow2(ctx, x: UOp, c: UOp) -> UOp | None:
    k = log2_exact(c.arg)
    return None if ctx.has(Ops.MUL) or k is None or k == 0 else x.alu(Ops.SHL, x.const_like(k))


def _div_pow2(ctx, x: UOp, c: UOp) -> UOp | None:
    k = log2_exact(c.arg)
    return None if ctx.has(Ops.IDIV) or k is None or k == 0 else shift_div(x, k)


def _div_const(ctx, x: UOp, c: UOp) -> UOp | None:
    if ctx.has(Ops.IDIV) or c.arg <= 1 or log2_exact(c.arg) is not None:
        return None
    return fast_div(x, c.arg)


def _mod_const(ctx, x: UOp, c: UOp) -> UOp | None:
    if ctx.has(Ops.MOD) or c.arg <= 1 or log2_exact(c.arg) is not None:
        return None
    q = fast_div(x, c.arg)
    return None if q is None else x - q * c.arg


def _fdiv_pow2(ctx, x: UOp, c: UOp) -> UOp | None:
    import math
    if ctx.has(Ops.FDIV) or not isinstance(c.arg, float) or c.arg == 0 or not math.isfinite(c.arg):
        return None
    m, e = math.frexp(abs(c.arg))
    if m != 0.5:
        return None
    inv = math.ldexp(1.0, -(e - 1))
    if dtypes.python_value(inv, x.dtype.scalar) != inv or inv == 0:
        return None
    return x * (inv if c.arg > 0 else -inv)


def _mulacc(ctx, a: UOp, b: UOp, c: UOp) -> UOp | None:
    if not ctx.has(Ops.MULACC) or (a.dtype.is_float and not ctx.has_fma) or not (a.dtype.is_int or a.dtype.is_float):
        return None
    return UOp(Ops.MULACC, a.dtype, (a, b, c))


def _not_lt_const(x: UOp, c: UOp) -> UOp | None:
    """¬(x<c) → c−1 < x (c > min)."""
    return UOp(Ops.CMPLT, BOOL, (x.const_like(c.arg - 1), x)) if c.arg > dtypes.min_value(x.dtype) else None


def _not_const_lt(c: UOp, x: UOp) -> UOp | None:
    """¬(c<x) → x < c+1 (c < max)."""
    return UOp(Ops.CMPLT, BOOL, (x, x.const_like(c.arg + 1))) if c.arg < dtypes.max_value(x.dtype) else None


xi = P.var("x", INTS)
xs = P.var("x", SIGNED)
cv = P.cvar("c")
a_, b_ = P.var("a"), P.var("b")


def _not(p: UPat) -> UPat:
    return P(Ops.NOT, src=(p,))


def _lt(a: UPat, b: UPat) -> UPat:
    return P(Ops.CMPLT, src=(a, b))


pm_decompositions = PatternMatcher([
    # 1. on every target: fewer operations
    (xi * -1, lambda x: x.alu(Ops.NEG)),                                                  # x·-1 → -x
    (P(Ops.AND, src=[_not(a_), _not(b_)], name="u"),                                      # ¬a∧¬b → ¬(a∨b)
     lambda ctx, u, a, b: (a | b).alu(Ops.NOT) if ctx.has(Ops.OR) and a.dtype is b.dtype else None),
    (P(Ops.OR, src=[_not(a_), _not(b_)], name="u"),                                       # ¬a∨¬b → ¬(a∧b)
     lambda ctx, u, a, b: (a & b).alu(Ops.NOT) if ctx.has(Ops.AND) and a.dtype is b.dtype else None),
    (_not(_lt(xi, cv)), _not_lt_const),                                                   # ¬(x<c) → c-1<x
    (_not(_lt(cv, xi)), _not_const_lt),                                                   # ¬(c<x) → x<c+1
    (_not(_lt(xi, P.var("y", INTS))), lambda x, y: y.le(x)),                              # ¬(x<y) → y≤x
    (_not(P(Ops.CMPLE, src=(xi, P.var("y", INTS)))), lambda x, y: y.lt(x)),               # ¬(x≤y) → y<x
    # 2. integer ops the target lacks
    (P(Ops.MOD, INTS, src=(xi, cv)), _mod_pow2),                                          # x%2^k → x&(2^k-1)
    (xi * cv, _mul_pow2),                                                                 # x·2^k → x<<k
    (P(Ops.IDIV, INTS, src=(xi, cv)), _div_pow2),                                         # x//2^k → x>>k (+bias)
    (P(Ops.IDIV, INTS, src=(xi, cv)), _div_const),                                        # x//d → (x·M)>>S
    (P(Ops.MOD, INTS, src=(xi, cv)), _mod_const),                                         # x%d → x-(x//d)·d
    (P(Ops.OR, src=(a_, b_), name="u"),                                                   # a∨b → ¬(¬a∧¬b)
     lambda ctx, u, a, b: a.alu(Ops.NOT).alu(Ops.AND, b.alu(Ops.NOT)).alu(Ops.NOT)
     if not ctx.has(Ops.OR) and ctx.has(Ops.AND) and ctx.has(Ops.NOT) and u.dtype.scalar in INTS | {BOOL} else None),
    (P(Ops.AND, src=(a_, b_), name="u"),                                                  # a∧b → ¬(¬a∨¬b)
     lambda ctx, u, a, b: a.alu(Ops.NOT).alu(Ops.OR, b.alu(Ops.NOT)).alu(Ops.NOT)
     if not ctx.has(Ops.AND) and ctx.has(Ops.OR) and ctx.has(Ops.NOT) and u.dtype.scalar in INTS | {BOOL} else None),
    # 3. fused multiply-add
    (P(Ops.ADD, src=[P(Ops.MUL, src=(a_, b_)), P.var("c")]), _mulacc),                    # a·b+c → MULACC
    # 4. exact reciprocals
    (P(Ops.FDIV, src=(P.var("x"), cv)), _fdiv_pow2),                                      # x/2^k → x·2^-k
])


def _transcendental(ctx, u: UOp) -> UOp | None:
    if ctx.native(u.op, u.dtype.scalar) or u.dtype.scalar not in (dtypes.float32, dtypes.float64):
        return None
    return approximation(u, ctx.escapes, ctx.fused)


def approximation(u: UOp, escapes: bool = False, fuses: bool = False) -> UOp | None:
    """The arithmetic graph computing `u` (a float32 or float64 transcendental op: the
    approximations of `transcendentals` and `transcendentals32`), or None. `escapes`: the target
    takes escape nodes (sin, cos and tan then reduce cheaply, leaving large arguments to it);
    `fuses`: it has exact fused multiply-adds (`transcendentals.fused`)."""
    d = u.dtype
    if d.count != 1 or d not in (dtypes.float32, dtypes.float64) or u.arg is not None:
        return None
    token = t64.fused.set(fuses)
    try:
        if d is dtypes.float32:
            if u.op in t32.UNARY:
                return t32.UNARY[u.op](u.src[0])
            if u.op in (Ops.SIN, Ops.COS, Ops.TAN):
                return t32.trigf_escaping(u.src[0], u.op) if escapes else t32.trigf(u.src[0], u.op)
            return t32.powf(u.src[0], u.src[1]) if u.op is Ops.POW else None
        if u.op in t64.UNARY:
            return t64.UNARY[u.op](u.src[0])
        if u.op in (Ops.SIN, Ops.COS, Ops.TAN):
            return t64.trig64(u.src[0], u.op, escapes)
        return t64.pow64(u.src[0], u.src[1]) if u.op is Ops.POW else None
    finally:
        t64.fused.reset(token)


pm_transcendentals = PatternMatcher([
    # 5. transcendental functions the target lacks
    (P(TRANSCENDENTAL | {Ops.SQRT}, name="u"), _transcendental),
])


pm_decompose = symbolic_simple + pm_decompositions + pm_transcendentals   # (made once: every kernel runs it)


def decompose(sink: UOp, target: Target) -> UOp:
    """Stage 18 on a kernel graph, for `target`."""
    return graph_rewrite(sink, pm_decompose, ctx=target)
