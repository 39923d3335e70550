"""Stage 16, post-index symbolic: simplify a kernel graph once its indices are concrete integers.

Every node has value bounds (`vmin`, `vmax`, from `lazyarr.compiler.uop.compute_bounds`): constants are themselves,
a RANGE of n runs over [0, n-1], a DEFINE_VAR over its declared interval, ALU ops combine their
sources' bounds, and any value that might wrap around has its dtype's full range. Vector values
(VECTORIZE, GEP, CAT, ALU ops on vector dtypes) have the union of their lanes' bounds.

The rules, applied by `graph_rewrite` to a fixed point, in the order they are listed:
1. constant folding: an ALU op or cast of constants is the constant it computes in the target's
   arithmetic (C division and remainder truncate, integers wrap; floats round in their dtype);
2. identities of +, -, *, //, %, bitwise and boolean ops, negation, shifts and casts;
3. signs: negations are pushed out of sums and products, x-(-y) is x+y;
4. comparisons: x<x, x==x and friends of integers, constants moved to one side (for ==, which
   is exact in wrap-around arithmetic; for < only where the bounds show that nothing wraps),
   conjunctions and disjunctions of bounds on one value, negated comparisons and bools;
5. WHERE: constant or negated conditions, equal branches, nested WHEREs of one condition, and
   x<y ? x : y as MIN/MAX of integers;
6. MAX and MIN: nested constants, absorption, and decisions by bounds;
7. bounds: an integer or boolean node whose bounds meet is that constant (so comparisons decided
   by bounds fold); x//c and x%c of an x within (-c, c) fold; ABS of a value of known sign;
8. sums: an ADD/SUB tree of integers is flattened into terms with constant coefficients, like
   terms combined, (x//c)*c + x%c recombined into x, and rebuilt with the constant last;
   constant factors are distributed over sums and gathered from products;
9. division and modulo: by -1 and by x itself; nested divisions and modulos; and by a positive
   constant of a non-negative sum, where terms whose coefficient the constant divides leave the
   remainder and what is left folds by its bounds (range-aware: a RANGE's bound is its size);
10. vectors: GEP is pushed through ALU ops and casts whose dtypes are not pointers, GEP of
   VECTORIZE, of CAT, of a vector constant and of a GEP resolve to their lanes, VECTORIZE of a
   value's lanes in order is the value, and VECTORIZE of one constant is a vector constant.
Integer rules hold in wrap-around arithmetic over the full range of their dtype, or state the
bounds they need (checked with vmin/vmax); tests/test_z3_rules.py proves each one with z3.
Floating-point rules are only those that hold exactly in IEEE arithmetic (x*1, x/1, x+(-0.0),
x-(-y)); nothing that rounds differently, or that changes a signed zero, is rewritten.
"""
from __future__ import annotations

import math
from typing import Any

from lazyarr import dtypes
from lazyarr.compiler.patterns import PatternMatcher, UPat, graph_rewrite
from lazyarr.compiler.uop import GroupOp, Ops, UOp, fold_alu

P = UPat
INTS = frozenset(dtypes.INTS)
SIGNED = frozenset(d for d in dtypes.INTS if not d.is_unsigned)
BOOL = dtypes.bool_
FLOATS = frozenset(dtypes.FLOATS)
INTS_BOOL = INTS | {BOOL}


# ---- helpers of the rules ------------------------------------------------------------------

def fold_cast(v: Any, to: dtypes.DType) -> Any:
    """C's conversion of the constant `v`, or None where C leaves it undefined."""
    if to.is_bool:
        return v != 0
    if to.is_int and isinstance(v, float):
        if not math.isfinite(v) or not dtypes.min_value(to) <= math.trunc(v) <= dtypes.max_value(to):
            return None
        return math.trunc(v)
    if to.is_float and isinstance(v, complex):
        return None
    return v


def vconst(d: dtypes.DType, v: Any) -> UOp:
    """The constant `v` of dtype `d`, a scalar or a vector (every lane `v`)."""
    return UOp(Ops.CONST, d, (), dtypes.python_value(v, d.scalar)) if d.count > 1 else UOp.const(d, v)


def fold_constants(u: UOp) -> UOp | None:
    if not all(s.op is Ops.CONST for s in u.src) or isinstance(u.dtype, dtypes.PtrDType):
        return None
    if any(s.dtype.count != u.dtype.count for s in u.src):
        return None
    if u.op is Ops.CAST:
        v = fold_cast(u.src[0].arg, u.dtype.scalar)
    else:
        v = fold_alu(u.op, u.dtype.scalar, [s.arg for s in u.src])
    return None if v is None else vconst(u.dtype, v)


def fold_by_bounds(u: UOp) -> UOp | None:
    if u.op is Ops.CONST or not (u.dtype.is_int or u.dtype.is_bool) or isinstance(u.dtype, dtypes.PtrDType):
        return None
    if u.op not in GroupOp.ALU and u.op not in (Ops.CAST, Ops.RANGE):
        return None
    lo, hi = u.bounds
    return vconst(u.dtype, lo) if lo == hi else None


def fits(d: dtypes.DType, *values: int) -> bool:
    """Every value is representable in the integer dtype `d`."""
    return all(dtypes.min_value(d) <= v <= dtypes.max_value(d) for v in values)


def ones(d: dtypes.DType) -> int:
    """The integer of `d` with every bit set: -1 signed, the maximum unsigned."""
    return dtypes.max_value(d) if d.is_unsigned else -1


def no_wrap(x: UOp, lo: int, hi: int) -> bool:
    """x's value range shifted/scaled to [lo, hi] stays inside x's dtype."""
    return fits(x.dtype, lo, hi)


def _terms(u: UOp) -> tuple[list[tuple[UOp, int]], int]:
    """u as Σ coefficient·term + constant."""
    terms: list[tuple[UOp, int]] = []
    const = 0
    stack = [(u, 1)]
    while stack:
        x, k = stack.pop()
        if x.op is Ops.ADD:
            stack += [(x.src[1], k), (x.src[0], k)]
        elif x.op is Ops.SUB:
            stack += [(x.src[1], -k), (x.src[0], k)]
        elif x.op is Ops.NEG:
            stack.append((x.src[0], -k))
        elif x.op is Ops.CONST:
            const += k * x.arg
        elif x.op is Ops.MUL and x.src[1].op is Ops.CONST:
            stack.append((x.src[0], k * x.src[1].arg))
        elif x.op is Ops.MUL and x.src[0].op is Ops.CONST:
            stack.append((x.src[1], k * x.src[0].arg))
        else:
            terms.append((x, k))
    return terms, const


def _combine(terms: list[tuple[UOp, int]]) -> list[tuple[UOp, int]]:
    coef: dict[UOp, int] = {}
    for t, k in terms:
        coef[t] = coef.get(t, 0) + k
    # (x//c)*(k*c) + (x%c)*k → x*k: C's x == (x/c)*c + x%c holds for every x and c ≠ 0
    for t in list(coef):
        if t.op is Ops.MOD and t.src[1].op is Ops.CONST and t.src[1].arg > 0 and t in coef:
            x, c = t.src[0], t.src[1].arg
            d = UOp(Ops.IDIV, x.dtype, (x, t.src[1]))
            k = coef[t]
            if k != 0 and coef.get(d) == k * c:
                del coef[t], coef[d]
                coef[x] = coef.get(x, 0) + k
    return [(t, k) for t, k in coef.items() if k != 0]


def _build(dtype, terms: list[tuple[UOp, int]], const: int) -> UOp:
    out: UOp | None = None
    for t, k in terms:
        term = t if k == 1 else UOp(Ops.MUL, dtype, (t, UOp.const(dtype, k)))
        out = term if out is None else UOp(Ops.ADD, dtype, (out, term))
    if out is None:
        return UOp.const(dtype, const)
    return out if dtypes.python_value(const, dtype) == 0 else UOp(Ops.ADD, dtype, (out, UOp.const(dtype, const)))


def normalize_sum(u: UOp) -> UOp | None:
    """Σ k·t + c with like terms combined (exact in wrap-around arithmetic: a ring). A reduction's
    accumulator (DEFINE_ACC, once the reduction is lowered) is added last, to all the other
    terms: its value is the loop's running one, so a sum of it and a term that does not vary in
    the loop must not become a value of its own (the linearizer would hoist it out of the loop)."""
    if u.dtype.count > 1:
        return None
    terms, const = _terms(u)
    terms = _combine(terms)
    accumulators = [(t, k) for t, k in terms if t.op is Ops.DEFINE_ACC]
    if accumulators:
        if len(accumulators) > 1 or accumulators[0][1] != 1:
            return None
        rest = [(t, k) for t, k in terms if t.op is not Ops.DEFINE_ACC]
        new = UOp(Ops.ADD, u.dtype, (accumulators[0][0], _build(u.dtype, rest, const)))
    else:
        new = _build(u.dtype, terms, const)
    return None if new is u else new


def fold_div_mod(u: UOp, x: UOp, c: UOp) -> UOp | None:
    """x//c and x%c for a positive constant c and a non-negative x."""
    d = c.arg
    if d <= 0 or x.vmin < 0 or u.dtype.count > 1:
        return None
    if x.vmax < d:
        return UOp.const(u.dtype, 0) if u.op is Ops.IDIV else x
    if x.op is Ops.MOD and x.src[1].op is Ops.CONST and x.src[1].arg > 0 and x.src[0].vmin >= 0:
        m = x.src[1].arg
        if u.op is Ops.IDIV and m % d == 0:          # (y % (k·d)) // d → (y // d) % k
            return UOp(Ops.MOD, u.dtype, (UOp(Ops.IDIV, u.dtype, (x.src[0], c)),
                                          UOp.const(u.dtype, m // d)))
    terms, const = _terms(x)
    if any(t.vmin < 0 for t, k in terms) or not fits(u.dtype, *(t.vmax * k for t, k in terms)):
        return None
    whole = [(t, k // d) for t, k in terms if k % d == 0]
    rest = [(t, k) for t, k in terms if k % d != 0]
    q, r = divmod(const, d)
    remainder = _build(u.dtype, rest, r)
    if remainder.vmin < 0 or (not whole and q == 0):
        # try dividing everything by a common factor of the coefficients and the divisor
        g = math.gcd(d, *(k for _, k in terms), const) if terms else d
        if g > 1 and g != d:
            smaller = _build(u.dtype, [(t, k // g) for t, k in terms], const // g)
            if u.op is Ops.IDIV:
                return UOp(Ops.IDIV, u.dtype, (smaller, UOp.const(u.dtype, d // g)))
            return UOp(Ops.MUL, u.dtype, (UOp(Ops.MOD, u.dtype, (smaller, UOp.const(u.dtype, d // g))),
                                          UOp.const(u.dtype, g)))
        return None
    if u.op is Ops.MOD:
        new = remainder if remainder.vmax < d else UOp(Ops.MOD, u.dtype, (remainder, c))
    else:
        quotient = _build(u.dtype, whole, q)
        new = quotient if remainder.vmax < d else quotient + UOp(Ops.IDIV, u.dtype, (remainder, c))
    return None if new is u else new


def _is_neg_zero(c: UOp) -> bool:
    return c.op is Ops.CONST and c.arg == 0 and math.copysign(1.0, c.arg) < 0


def lt_const(x: UOp, c: int) -> UOp:
    return UOp(Ops.CMPLT, BOOL.vec(x.dtype.count), (x, UOp.const(x.dtype, c)))


def const_lt(c: int, x: UOp) -> UOp:
    return UOp(Ops.CMPLT, BOOL.vec(x.dtype.count), (UOp.const(x.dtype, c), x))


def add_lt(x: UOp, a: UOp, b: UOp) -> UOp | None:
    """x+a < b → x < b-a, where neither side wraps."""
    if fits(x.dtype, x.vmin + a.arg, x.vmax + a.arg, b.arg - a.arg):
        return lt_const(x, b.arg - a.arg)
    return None


def lt_add(a: UOp, x: UOp, b: UOp) -> UOp | None:
    """a < x+b → a-b < x, where neither side wraps."""
    if fits(x.dtype, x.vmin + b.arg, x.vmax + b.arg, a.arg - b.arg):
        return const_lt(a.arg - b.arg, x)
    return None


def mul_lt(x: UOp, a: UOp, b: UOp) -> UOp | None:
    """x*a < b with a > 0 → x < ceil(b/a), where x*a does not wrap."""
    if a.arg > 0 and fits(x.dtype, x.vmin * a.arg, x.vmax * a.arg):
        return lt_const(x, -((-b.arg) // a.arg))
    return None


def lt_mul(b: UOp, x: UOp, a: UOp) -> UOp | None:
    """b < x*a with a > 0 → floor(b/a) < x, where x*a does not wrap."""
    if a.arg > 0 and fits(x.dtype, x.vmin * a.arg, x.vmax * a.arg):
        return const_lt(b.arg // a.arg, x)
    return None


def div_lt(x: UOp, a: UOp, b: UOp) -> UOp | None:
    """x//a < b with a > 0, x ≥ 0 → x < a*b."""
    if a.arg > 0 and x.vmin >= 0 and fits(x.dtype, a.arg * b.arg):
        return lt_const(x, a.arg * b.arg)
    return None


def gep_alu(g: UOp, alu: UOp) -> UOp | None:
    """GEP(op(a, b), i) → op(GEP(a, i), GEP(b, i)) for values (not pointers). Not through a float
    ADD, MUL or MAX tree over reductions: the lanes of a reduction's accumulators are extracted only
    after the accumulators are combined (`opts.reduce`), and pushed through, each lane would be
    combined on its own (a softmax row's max: 24 scalar maxes where 3 vector ones do)."""
    if isinstance(g.dtype, dtypes.PtrDType) or isinstance(alu.dtype, dtypes.PtrDType):
        return None
    if alu.op in (Ops.ADD, Ops.MUL, Ops.MAX) and alu.dtype.is_float and \
            all(s.op in (alu.op, Ops.REDUCE) for s in alu.src):
        return None
    n = len(g.arg)
    src = tuple(UOp(Ops.GEP, s.dtype.scalar.vec(n), (s,), g.arg) if s.dtype.count > 1 else s for s in alu.src)
    return UOp(alu.op, alu.dtype.scalar.vec(n), src, alu.arg)


def gep_vectorize(g: UOp, v: UOp) -> UOp:
    lanes = [v.src[i] for i in g.arg]
    return lanes[0] if len(lanes) == 1 else UOp(Ops.VECTORIZE, g.dtype, tuple(lanes))


def cat_lanes(cat: UOp) -> list[UOp]:
    """The lanes of CAT(a, b, ...) as GEPs (or scalars)."""
    out = []
    for s in cat.src:
        out += [s] if s.dtype.count == 1 else [UOp(Ops.GEP, s.dtype.scalar, (s,), (i,)) for i in range(s.dtype.count)]
    return out


def gep_cat(g: UOp, cat: UOp) -> UOp:
    lanes = cat_lanes(cat)
    picked = [lanes[i] for i in g.arg]
    return picked[0] if len(picked) == 1 else UOp(Ops.VECTORIZE, g.dtype, tuple(picked))


def vectorize_of_geps(v: UOp) -> UOp | None:
    """VECTORIZE(GEP(x, 0), ..., GEP(x, n-1)) → x."""
    x = v.src[0].src[0] if v.src[0].op is Ops.GEP else None
    if x is None or x.dtype is not v.dtype:
        return None
    ok = all(s.op is Ops.GEP and s.src[0] is x and s.arg == (i,) for i, s in enumerate(v.src))
    return x if ok else None


def shl_shl(x: UOp, a: UOp, b: UOp) -> UOp | None:
    """(x<<a)<<b → x<<(a+b), or 0 once the shift reaches the width (shifts of ≥ bits give 0)."""
    bits = x.dtype.bits
    if not (0 <= a.arg < bits and 0 <= b.arg < bits):
        return None
    return x.const_like(0) if a.arg + b.arg >= bits else x.alu(Ops.SHL, x.const_like(a.arg + b.arg))


def shr_shr(x: UOp, a: UOp, b: UOp) -> UOp | None:
    """(x>>a)>>b → x>>(a+b), at most bits-1 for signed (what a shift of ≥ bits gives)."""
    bits = x.dtype.bits
    if not (0 <= a.arg < bits and 0 <= b.arg < bits):
        return None
    total = a.arg + b.arg
    if total >= bits:
        return x.const_like(0) if x.dtype.is_unsigned else x.alu(Ops.SHR, x.const_like(bits - 1))
    return x.alu(Ops.SHR, x.const_like(total))


def _widens(a: dtypes.DType, b: dtypes.DType) -> bool:
    """Every value of the integer type a is a value of b."""
    return fits(b, dtypes.min_value(a), dtypes.max_value(a))


def cast_cast(x: UOp, mid: UOp, u: UOp) -> UOp | None:
    """cast(cast(x, mid), to): skip mid when it holds every value of x."""
    a, m, b = x.dtype, mid.dtype, u.dtype
    if not (a.is_int or a.is_bool) or not m.is_int or not (b.is_int or b.is_bool) or not _widens(a, m):
        return None
    return x if a is b else UOp(Ops.CAST, b, (x,))


# ---- the rules -----------------------------------------------------------------------------

x_, y_, z_ = P.var("x"), P.var("y"), P.var("z")
xi, yi = P.var("x", INTS), P.var("y", INTS)
xf = P.var("x", FLOATS)
xb, yb = P.var("x", BOOL), P.var("y", BOOL)
c1, c2 = P.cvar("a"), P.cvar("b")


def _log2(v: int) -> int | None:
    """k where v == 2^k with k ≥ 1, else None."""
    return v.bit_length() - 1 if isinstance(v, int) and v > 1 and v & (v - 1) == 0 else None


def _op(op, *src, dtype=None, name=None):
    return P(op, dtype, src=tuple(src), name=name)


def _neg(p): return _op(Ops.NEG, p)
def _not(p): return _op(Ops.NOT, p)


symbolic_simple = PatternMatcher([
    # 1. constant folding
    (P(GroupOp.ALU | {Ops.CAST}, name="u"), fold_constants),                        # op(c1, c2) → c
    # 2. identities
    (xi * 1, lambda x: x),                                                          # x*1 → x
    (xf * 1.0, lambda x: x),                                                        # x*1.0 → x
    (xi + 0, lambda x: x),                                                          # x+0 → x
    (xf + P.cvar("c"), lambda x, c: x if _is_neg_zero(c) else None),                # x+(-0.0) → x
    (xi - 0, lambda x: x),                                                          # x-0 → x
    (xf - P.const(0.0), lambda x: x),                                               # x-0.0 → x
    (xi * 0, lambda x: x.const_like(0)),                                            # x*0 → 0
    (_op(Ops.IDIV, x_, P.const(1)), lambda x: x),                                   # x//1 → x
    (_op(Ops.MOD, x_, P.const(1)), lambda x: x.const_like(0)),                      # x%1 → 0
    (_op(Ops.FDIV, x_, P.const(1.0)), lambda x: x),                                 # x/1.0 → x
    (_op(Ops.SUB, x_, x_, dtype=INTS), lambda x: x.const_like(0)),                  # x-x → 0
    (xb & True, lambda x: x),                                                       # x∧T → x
    (xb & False, lambda x: x.const_like(False)),                                    # x∧F → F
    (xb | False, lambda x: x),                                                      # x∨F → x
    (xb | True, lambda x: x.const_like(True)),                                      # x∨T → T
    (_op(Ops.AND, x_, x_), lambda x: x),                                            # x∧x → x
    (_op(Ops.OR, x_, x_), lambda x: x),                                             # x∨x → x
    (_op(Ops.WHERE, P.const(True), P.var("a"), P.var()), lambda a: a),              # T?a:b → a
    (_op(Ops.WHERE, P.const(False), P.var(), P.var("b")), lambda b: b),             # F?a:b → b
    (_op(Ops.WHERE, P.var(), P.var("a"), P.var("a")), lambda a: a),                 # c?a:a → a
    (P(Ops.CAST, name="u"), lambda u: u.src[0] if u.src[0].dtype is u.dtype else None),   # cast(x:T, T) → x
    (_op(Ops.MAX, x_, x_), lambda x: x),                                            # max(x,x) → x
    (_op(Ops.MIN, x_, x_), lambda x: x),                                            # min(x,x) → x
    (xi & 0, lambda x: x.const_like(0)),                                            # x&0 → 0
    (xi | 0, lambda x: x),                                                          # x|0 → x
    (xi ^ 0, lambda x: x),                                                          # x^0 → x
    (xb ^ False, lambda x: x),                                                      # x⊕F → x
    (xb ^ True, lambda x: x.alu(Ops.NOT)),                                          # x⊕T → ¬x
    (xi & P.cvar("c"), lambda x, c: x if c.arg == ones(x.dtype) else None),         # x&~0 → x
    (xi | P.cvar("c"), lambda x, c: c if c.arg == ones(x.dtype) else None),         # x|~0 → ~0
    (_op(Ops.XOR, x_, x_, dtype=INTS_BOOL), lambda x: x.const_like(0)),             # x^x → 0
    (_not(_not(x_)), lambda x: x),                                                  # ¬¬x → x
    (_neg(_neg(x_)), lambda x: x),                                                  # -(-x) → x
    (_op(Ops.SHL, xi, P.const(0)), lambda x: x),                                    # x<<0 → x
    (_op(Ops.SHR, xi, P.const(0)), lambda x: x),                                    # x>>0 → x
    (_op(Ops.SHL, P.const(0), xi), lambda x: x.const_like(0)),                      # 0<<x → 0
    (_op(Ops.IDIV, P.const(0), xi), lambda x: x.const_like(0)),                     # 0//x → 0 (0//0 is 0)
    (_op(Ops.MOD, P.const(0), xi), lambda x: x.const_like(0)),                      # 0%x → 0
    (_op(Ops.MOD, xi, xi), lambda x: x.const_like(0)),                              # x%x → 0 (x%0 is 0)
    (_op(Ops.IDIV, xi, P.const(-1)), lambda x: x.alu(Ops.NEG)),                     # x//-1 → -x (wraps)
    (_op(Ops.MOD, xi, P.const(-1)), lambda x: x.const_like(0)),                     # x%-1 → 0
    (_op(Ops.CMPEQ, xb, P.const(True)), lambda x: x),                               # (x==T) → x
    (_op(Ops.CMPNE, xb, P.const(False)), lambda x: x),                              # (x!=F) → x
    (_op(Ops.CMPEQ, xb, P.const(False)), lambda x: x.alu(Ops.NOT)),                 # (x==F) → ¬x
    (_op(Ops.CMPNE, xb, P.const(True)), lambda x: x.alu(Ops.NOT)),                  # (x!=T) → ¬x
    (_op(Ops.WHERE, xb, P.const(True), P.const(False)), lambda x: x),               # x?T:F → x
    (_op(Ops.WHERE, xb, P.const(False), P.const(True)), lambda x: x.alu(Ops.NOT)),  # x?F:T → ¬x
    (_op(Ops.CAST, _op(Ops.CAST, x_, name="mid"), name="u"), cast_cast),            # cast(cast(x,wider),T) → cast(x,T)
])

symbolic = symbolic_simple + PatternMatcher([
    # 3. signs
    (_op(Ops.SUB, P.const(0), xi), lambda x: x.alu(Ops.NEG)),                       # 0-x → -x
    (_op(Ops.SUB, x_, _neg(y_), dtype=INTS | FLOATS), lambda x, y: x + y),          # x-(-y) → x+y (exact)
    (_op(Ops.ADD, x_, _neg(y_), dtype=INTS | FLOATS), lambda x, y: x - y),          # x+(-y) → x-y (exact)
    (_op(Ops.ADD, _neg(x_), y_, dtype=INTS | FLOATS), lambda x, y: y - x),          # (-x)+y → y-x (exact)
    (_neg(_op(Ops.SUB, xi, yi)), lambda x, y: y - x),                               # -(x-y) → y-x
    (_op(Ops.MUL, _neg(xi), _neg(yi)), lambda x, y: x * y),                         # (-x)·(-y) → x·y
    (_op(Ops.MUL, _neg(xi), yi), lambda x, y: (x * y).alu(Ops.NEG)),                # (-x)·y → -(x·y)
    (_op(Ops.MUL, yi, _neg(xi)), lambda x, y: (y * x).alu(Ops.NEG)),                # y·(-x) → -(y·x)
    (_op(Ops.ADD, _neg(xi), _neg(yi)), lambda x, y: (x + y).alu(Ops.NEG)),          # (-x)+(-y) → -(x+y)
    (_op(Ops.ABS, _op(Ops.ABS, x_, name="a")), lambda x, a: a),                     # |(|x|)| → |x|
    (_op(Ops.ABS, _neg(P.var("x", SIGNED))), lambda x: x.alu(Ops.ABS)),             # |-x| → |x| (signed)
    (_op(Ops.ABS, xi), lambda x: x if x.vmin >= 0 else x.alu(Ops.NEG) if x.vmax <= 0 else None),  # |x| by sign
    # 4. comparisons
    (_op(Ops.CMPLT, xi, xi), lambda x: UOp.const(BOOL, False)),                     # x<x → F
    (_op(Ops.CMPLE, xi, xi), lambda x: UOp.const(BOOL, True)),                      # x≤x → T
    (_op(Ops.CMPEQ, x_, x_, dtype=BOOL),                                            # x==x → T (not NaN)
     lambda x: UOp.const(BOOL, True) if not x.dtype.is_float else None),
    (_op(Ops.CMPNE, x_, x_, dtype=BOOL),                                            # x!=x → F (not NaN)
     lambda x: UOp.const(BOOL, False) if not x.dtype.is_float else None),
    (_op(Ops.CMPEQ, xi + c1, c2), lambda x, a, b: x.eq(b.arg - a.arg)),            # x+a==b → x==b-a (wraps alike)
    (_op(Ops.CMPNE, xi + c1, c2), lambda x, a, b: x.ne(b.arg - a.arg)),            # x+a!=b → x!=b-a
    (_op(Ops.CMPEQ, _neg(xi), c1), lambda x, a: x.eq(-a.arg)),                      # -x==a → x==-a
    (_op(Ops.CMPNE, _neg(xi), c1), lambda x, a: x.ne(-a.arg)),                      # -x!=a → x!=-a
    (_op(Ops.CMPEQ, xi ^ c1, c2), lambda x, a, b: x.eq(a.arg ^ b.arg)),            # x^a==b → x==a^b
    (_op(Ops.CMPNE, xi ^ c1, c2), lambda x, a, b: x.ne(a.arg ^ b.arg)),            # x^a!=b → x!=a^b
    (_op(Ops.CMPEQ, xi - yi, P.const(0)), lambda x, y: x.eq(y)),                    # x-y==0 → x==y
    (_op(Ops.CMPNE, xi - yi, P.const(0)), lambda x, y: x.ne(y)),                    # x-y!=0 → x!=y
    (_op(Ops.CMPEQ, xi * c1, P.const(0)), lambda x, a: x.eq(0) if a.arg % 2 else None),   # x·odd==0 → x==0
    (_op(Ops.CMPNE, xi * c1, P.const(0)), lambda x, a: x.ne(0) if a.arg % 2 else None),   # x·odd!=0 → x!=0
    (_op(Ops.CMPLT, xi + c1, c2), add_lt),                                          # x+a<b → x<b-a (no wrap)
    (_op(Ops.CMPLT, c1, xi + c2), lt_add),                                          # a<x+b → a-b<x (no wrap)
    (_op(Ops.CMPLT, xi * c1, c2), mul_lt),                                          # x·a<b → x<⌈b/a⌉ (a>0, no wrap)
    (_op(Ops.CMPLT, c2, xi * c1), lt_mul),                                          # b<x·a → ⌊b/a⌋<x (a>0, no wrap)
    (_op(Ops.CMPLT, _op(Ops.IDIV, xi, c1), c2), div_lt),                            # x//a<b → x<a·b (x≥0, a>0)
    (_op(Ops.CMPLT, _neg(P.var("x", SIGNED)), c1),                                                  # -x<a → -a<x (x, a > min)
     lambda x, a: const_lt(-a.arg, x) if x.vmin > dtypes.min_value(x.dtype) and fits(x.dtype, -a.arg) else None),
    (_op(Ops.CMPLE, xi, c1),                                                        # x≤a → x<a+1 (a < max)
     lambda x, a: lt_const(x, a.arg + 1) if a.arg < dtypes.max_value(x.dtype) else None),
    (_op(Ops.CMPLE, c1, xi),                                                        # a≤x → a-1<x (a > min)
     lambda x, a: const_lt(a.arg - 1, x) if a.arg > dtypes.min_value(x.dtype) else None),
    (_op(Ops.CMPLT, xi + yi, xi + P.var("z", INTS)),                                # x+y<x+z → y<z (no wrap)
     lambda x, y, z: y.lt(z) if fits(x.dtype, *(a + b for a in x.bounds for w in (y, z) for b in w.bounds)) else None),
    (_op(Ops.CMPLT, xi, xi + c1),                                                   # x<x+a → a>0 (no wrap)
     lambda x, a: UOp.const(BOOL, a.arg > 0) if fits(x.dtype, x.vmin + a.arg, x.vmax + a.arg) else None),
    (_op(Ops.AND, _op(Ops.CMPLT, xi, c1), _op(Ops.CMPLT, xi, c2)),                  # x<a ∧ x<b → x<min(a,b)
     lambda x, a, b: lt_const(x, min(a.arg, b.arg))),
    (_op(Ops.OR, _op(Ops.CMPLT, xi, c1), _op(Ops.CMPLT, xi, c2)),                   # x<a ∨ x<b → x<max(a,b)
     lambda x, a, b: lt_const(x, max(a.arg, b.arg))),
    (_op(Ops.AND, _op(Ops.CMPLT, c1, xi), _op(Ops.CMPLT, c2, xi)),                  # a<x ∧ b<x → max(a,b)<x
     lambda x, a, b: const_lt(max(a.arg, b.arg), x)),
    (_op(Ops.OR, _op(Ops.CMPLT, c1, xi), _op(Ops.CMPLT, c2, xi)),                   # a<x ∨ b<x → min(a,b)<x
     lambda x, a, b: const_lt(min(a.arg, b.arg), x)),
    (_op(Ops.AND, _op(Ops.CMPLT, xi, c1), _op(Ops.CMPLT, c2, xi)),                  # x<a ∧ b<x → F if b ≥ a-1
     lambda x, a, b: UOp.const(BOOL, False) if b.arg >= a.arg - 1 else None),
    (_op(Ops.AND, _op(Ops.CMPEQ, xi, c1), _op(Ops.CMPEQ, xi, c2)),                  # x==a ∧ x==b → F if a≠b
     lambda x, a, b: UOp.const(BOOL, False) if a.arg != b.arg else None),
    (xb & _not(xb), lambda x: x.const_like(False)),                    # x∧¬x → F
    (xb | _not(xb), lambda x: x.const_like(True)),                      # x∨¬x → T
    (xi & _not(xi), lambda x: x.const_like(0)),                        # x&~x → 0
    (xi | _not(xi), lambda x: x.const_like(ones(x.dtype))),             # x|~x → ~0
    (xi ^ _not(xi), lambda x: x.const_like(ones(x.dtype))),            # x^~x → ~0
    (_not(_op(Ops.CMPEQ, x_, y_)), lambda x, y: x.ne(y)),                           # ¬(x==y) → x!=y (floats too)
    (_not(_op(Ops.CMPNE, x_, y_)), lambda x, y: x.eq(y)),                           # ¬(x!=y) → x==y (floats too)
    (_op(Ops.CMPNE, _op(Ops.CAST, xb, dtype=INTS), P.const(0)), lambda x: x),       # int(b)!=0 → b
    (_op(Ops.CMPEQ, _op(Ops.CAST, xb, dtype=INTS), P.const(0)), lambda x: x.alu(Ops.NOT)),   # int(b)==0 → ¬b
    (_op(Ops.CMPLT, P(Ops.RANGE, name="r"), P.cvar("n")),     # r<n for n ≥ size → T
     lambda r, n: UOp.const(BOOL, True) if r.src[0].op is Ops.CONST and n.arg >= r.src[0].arg else None),
    # 5. WHERE
    (_op(Ops.WHERE, _not(P.var("c")), x_, y_), lambda c, x, y: c.where(y, x)),      # ¬c?x:y → c?y:x
    (_op(Ops.WHERE, P.var("c"), _op(Ops.WHERE, P.var("c"), x_, P.var()), y_),       # c?(c?x:_):y → c?x:y
     lambda c, x, y: c.where(x, y)),
    (_op(Ops.WHERE, P.var("c"), x_, _op(Ops.WHERE, P.var("c"), P.var(), y_)),       # c?x:(c?_:y) → c?x:y
     lambda c, x, y: c.where(x, y)),
    (_op(Ops.WHERE, _op(Ops.CMPLT, xi, yi), xi, yi), lambda x, y: x.minimum(y)),    # x<y?x:y → min(x,y)
    (_op(Ops.WHERE, _op(Ops.CMPLT, xi, yi), yi, xi), lambda x, y: x.maximum(y)),    # x<y?y:x → max(x,y)
    (_op(Ops.WHERE, P.var("c"), _op(Ops.WHERE, P.var("d"), x_, y_), y_),            # c?(d?x:y):y → (c∧d)?x:y
     lambda c, d, x, y: (c & d).where(x, y) if c.dtype is d.dtype else None),
    # 6. MAX and MIN
    (xi.maximum(yi), lambda x, y: x if x.vmin >= y.vmax else y if y.vmin >= x.vmax else None),   # by bounds
    (xi.minimum(yi), lambda x, y: x if x.vmax <= y.vmin else y if y.vmax <= x.vmin else None),   # by bounds
    (xi.maximum(c1).maximum(c2), lambda x, a, b: x.maximum(max(a.arg, b.arg))),   # max(max(x,a),b)
    (xi.minimum(c1).minimum(c2), lambda x, a, b: x.minimum(min(a.arg, b.arg))),   # min(min(x,a),b)
    (xi.maximum(c1).minimum(c2),                                        # min(max(x,a),b) → b if a ≥ b
     lambda x, a, b: b if a.arg >= b.arg else None),
    (xi.minimum(c1).maximum(c2),                                        # max(min(x,a),b) → b if b ≥ a
     lambda x, a, b: b if b.arg >= a.arg else None),
    (xi.maximum(xi.minimum(yi)), lambda x, y: x),                       # max(x, min(x,y)) → x
    (xi.minimum(xi.maximum(yi)), lambda x, y: x),                       # min(x, max(x,y)) → x
    (xi.minimum(yi) + xi.maximum(yi), lambda x, y: x + y), # min+max → x+y
    (xi.maximum(xi + c1),                                                     # max(x, x+a) by a's sign
     lambda x, a: (x + a if a.arg >= 0 else x) if fits(x.dtype, x.vmin + a.arg, x.vmax + a.arg) else None),
    (xi.minimum(xi + c1),                                                     # min(x, x+a) by a's sign
     lambda x, a: (x if a.arg >= 0 else x + a) if fits(x.dtype, x.vmin + a.arg, x.vmax + a.arg) else None),
    # bitwise
    ((xi & c1) & c2, lambda x, a, b: x & (a.arg & b.arg)),  # (x&a)&b → x&(a&b)
    ((xi | c1) | c2, lambda x, a, b: x | (a.arg | b.arg)),    # (x|a)|b → x|(a|b)
    ((xi ^ c1) ^ c2, lambda x, a, b: x.alu(Ops.XOR, x.const_like(a.arg ^ b.arg))),  # (x^a)^b → x^(a^b)
    (P(Ops.XOR, INTS_BOOL, src=[x_ ^ y_, y_]), lambda x, y: x),      # (x^y)^y → x
    (P(Ops.AND, INTS_BOOL, src=[x_, x_ | y_]), lambda x, y: x),       # x&(x|y) → x
    (P(Ops.OR, INTS_BOOL, src=[x_, x_ & y_]), lambda x, y: x),       # x|(x&y) → x
    (xi & c1,                                                          # x&(2^k-1) → x if 0≤x<2^k
     lambda x, a: x if x.vmin >= 0 and a.arg >= 0 and (a.arg & (a.arg + 1)) == 0 and x.vmax <= a.arg else None),
    (_op(Ops.SHL, _op(Ops.SHL, xi, c1), c2), shl_shl),                              # (x<<a)<<b → x<<(a+b)
    (_op(Ops.SHR, _op(Ops.SHR, xi, c1), c2), shr_shr),                              # (x>>a)>>b → x>>(a+b)
    (_op(Ops.SHR, xi, c1),                                                          # x>>a → 0 for 0≤x<2^a
     lambda x, a: x.const_like(0) if 0 <= a.arg < x.dtype.bits and x.vmin >= 0 and x.vmax < 2 ** a.arg else None),
    # 7. bounds
    (P(GroupOp.ALU | {Ops.CAST}, name="u"), fold_by_bounds),                        # vmin == vmax → const
    (_op(Ops.IDIV, xi, c1),                                                         # x//a → 0 for |x| < |a|
     lambda x, a: x.const_like(0) if a.arg != 0 and -abs(a.arg) < x.vmin and x.vmax < abs(a.arg) else None),
    (_op(Ops.MOD, xi, c1),                                                          # x%a → x for |x| < |a|
     lambda x, a: x if a.arg != 0 and -abs(a.arg) < x.vmin and x.vmax < abs(a.arg) else None),
    # 8. sums of integers, canonical with the constant last
    (_op(Ops.SUB, xi, _op(Ops.MUL, _op(Ops.IDIV, xi, c1), c1)), lambda x, a: x % a if a.arg else None),  # x-(x//a)·a → x%a
    (_op(Ops.SUB, xi, _op(Ops.MOD, xi, c1)), lambda x, a: (x // a) * a if a.arg else None),   # x-x%a → (x//a)·a
    (P((Ops.ADD, Ops.SUB), INTS, name="u"), normalize_sum),                         # Σk·t + c, like terms combined
    (_op(Ops.MUL, c1, xi, dtype=INTS), lambda a, x: x * a if x.op is not Ops.CONST else None),    # a·x → x·a
    (_op(Ops.MUL, _op(Ops.MUL, xi, c1), c2), lambda x, a, b: x * (a.arg * b.arg)),  # (x·a)·b → x·(a·b)
    (_op(Ops.MUL, _op(Ops.ADD, xi, c1), c2), lambda x, a, b: x * b + a.arg * b.arg),   # (x+a)·b → x·b + a·b
    (_op(Ops.MUL, _op(Ops.SUB, xi, yi), c1), lambda x, y, a: x * a - y * a),        # (x-y)·a → x·a - y·a
    (_op(Ops.MUL, xi, _op(Ops.MUL, yi, c1)), lambda x, y, a: (x * y) * a),          # x·(y·a) → (x·y)·a
    (_op(Ops.MUL, _op(Ops.NEG, xi), c1), lambda x, a: x * (-a.arg)),                # (-x)·a → x·(-a)
    (_op(Ops.ADD, xi, xi), lambda x: x * 2),                                        # x+x → x·2
    # 9. division and modulo
    (_op(Ops.IDIV, _op(Ops.MUL, xi, c1), c1),                                       # (x·a)//a → x (no wrap)
     lambda x, a: x if a.arg != 0 and fits(x.dtype, x.vmin * a.arg, x.vmax * a.arg) else None),
    (_op(Ops.MOD, _op(Ops.MUL, xi, c1), c1),                                        # (x·a)%a → 0 (no wrap)
     lambda x, a: x.const_like(0) if fits(x.dtype, x.vmin * a.arg, x.vmax * a.arg) else None),
    (_op(Ops.IDIV, _op(Ops.MUL, xi, c1), c2),                                       # (x·a)//b → x·(a/b) if b|a
     lambda x, a, b: x * (a.arg // b.arg) if b.arg > 0 and a.arg % b.arg == 0 and fits(x.dtype, x.vmin * a.arg, x.vmax * a.arg) else None),
    (_op(Ops.IDIV, _op(Ops.IDIV, xi, c1), c2),                                      # (x//a)//b → x//(a·b)
     lambda x, a, b: x // (a.arg * b.arg) if a.arg > 0 and b.arg > 0 and fits(x.dtype, a.arg * b.arg) else None),
    (_op(Ops.MOD, _op(Ops.MOD, xi, c1), c2),                                        # (x%(k·b))%b → x%b
     lambda x, a, b: x % b if a.arg > 0 and b.arg > 0 and a.arg % b.arg == 0 else None),
    (_op(Ops.IDIV, _neg(P.var("x", SIGNED)), c1),                                   # (-x)//a → -(x//a) (x > min)
     lambda x, a: (x // a).alu(Ops.NEG) if x.vmin > dtypes.min_value(x.dtype) and a.arg != 0 else None),
    (_op(Ops.MOD, _neg(P.var("x", SIGNED)), c1),                                    # (-x)%a → -(x%a) (x > min)
     lambda x, a: (x % a).alu(Ops.NEG) if x.vmin > dtypes.min_value(x.dtype) and a.arg != 0 else None),
    (_op(Ops.IDIV, P.var("x", SIGNED), c1),                                         # x//(-a) → -(x//a)
     lambda x, a: (x // -a.arg).alu(Ops.NEG) if a.arg < -1 and a.arg != dtypes.min_value(x.dtype) else None),
    (_op(Ops.MOD, P.var("x", SIGNED), c1),                                          # x%(-a) → x%a
     lambda x, a: x % -a.arg if a.arg < -1 and a.arg != dtypes.min_value(x.dtype) else None),
    (P((Ops.IDIV, Ops.MOD), SIGNED, src=(xi, P.cvar("c")), name="u"), fold_div_mod),   # (Σk·t + c) // d
    # NumPy's floor division and remainder (elementwise: C's truncating ones, fixed up where the
    # remainder is negative) by a power of two: an arithmetic shift and a mask in two's complement
    (P(Ops.AND, BOOL, src=[_op(Ops.CMPNE, xi, P.const(0)), _op(Ops.CMPLT, xi, P.const(0))]),   # x≠0 ∧ x<0 → x<0
     lambda x: x.alu(Ops.CMPLT, x.const_like(0))),
    (P(Ops.ADD, SIGNED, src=[_op(Ops.IDIV, xi, c1), _op(Ops.MUL, _op(Ops.CAST, _op(Ops.CMPLT, _op(Ops.MOD, xi, c1),
                                                                              P.const(0))), P.const(-1))]),
     lambda x, a: x.alu(Ops.SHR, x.const_like(_log2(a.arg))) if _log2(a.arg) else None),   # x//2^k − (x%2^k<0) → x>>k
    (_op(Ops.WHERE, _op(Ops.CMPLT, _op(Ops.MOD, P.var("x", SIGNED), c1), P.const(0)),      # x%2^k<0 ? x%2^k+2^k : x%2^k
         _op(Ops.ADD, _op(Ops.MOD, xi, c1), c1), _op(Ops.MOD, xi, c1)),                 #   → x & (2^k−1)
     lambda x, a: x.alu(Ops.AND, x.const_like(a.arg - 1)) if _log2(a.arg) else None),
    # 10. vectors
    (_op(Ops.GEP, P(GroupOp.ALU | {Ops.CAST, Ops.BITCAST}, name="alu"), name="g"), gep_alu),   # GEP(op(a,b)) → op(GEP a, GEP b)
    (_op(Ops.GEP, P(Ops.VECTORIZE, name="v"), name="g"), gep_vectorize),           # GEP(VEC(a,b,..),i) → lane i
    (_op(Ops.GEP, P(Ops.CAT, name="cat"), name="g"), gep_cat),                     # GEP(CAT(a,b),i) → lane i
    (_op(Ops.GEP, P(Ops.CONST, name="c"), name="g"), lambda g, c: vconst(g.dtype, c.arg)),  # GEP(const) → const
    (_op(Ops.GEP, _op(Ops.GEP, x_, name="inner"), name="g"),                       # GEP(GEP(x,a),b) → GEP(x,a[b])
     lambda g, inner, x: UOp(Ops.GEP, g.dtype, (x,), tuple(inner.arg[i] for i in g.arg))),
    (_op(Ops.GEP, x_, name="g"),                                                    # GEP(x, 0..n-1) → x
     lambda g, x: x if g.arg == tuple(range(x.dtype.count)) and g.dtype is x.dtype else None),
    (P(Ops.VECTORIZE, name="v"), vectorize_of_geps),                                # VEC(GEP(x,0..n-1)) → x
    (P(Ops.VECTORIZE, src=P(Ops.CONST), name="v"),                                  # VEC(c,c,..) → vector const
     lambda v: vconst(v.dtype, v.src[0].arg) if all(s is v.src[0] for s in v.src) else None),
])


def simplify(u: UOp) -> UOp:
    """`u` with the symbolic rules applied to a fixed point."""
    return graph_rewrite(u, symbolic)
