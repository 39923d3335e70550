"""Symbolic simplification of kernel graphs, index arithmetic above all.

Every node has value bounds (`vmin`, `vmax`, from `compute_bounds`). The rules, in order of the
matcher:
1. constant folding: an ALU op of constants is the constant it computes in the target's
   arithmetic (C integer division and remainder truncate; integers wrap);
2. identities: x+0, x*1, x*0 (integers), x//1, x%1, x-x (integers), boolean absorption, WHERE of
   a constant condition or of equal branches;
3. bounds: an integer or boolean node whose bounds meet is that constant; comparisons decided by
   the bounds are constants; x%c and x//c of a non-negative x below c fold;
4. sums: an ADD/SUB tree of integers is flattened into terms with constant coefficients, like
   terms combined, (x//c)*c + x%c recombined into x, and rebuilt with the constant last;
5. division and modulo by a positive constant of a non-negative sum: terms whose coefficient the
   constant divides leave the remainder, and what is left folds by its bounds; nested divisions
   and modulos of non-negative values combine.
Floating-point rules are only those that hold exactly in IEEE arithmetic (x*1, x/1, x+(-0.0)).
"""
from __future__ import annotations

import math
from typing import Any

from lazyarr import dtypes
from lazyarr.compiler.patterns import PatternMatcher, UPat
from lazyarr.compiler.uop import GroupOp, Ops, UOp
from lazyarr.ops import fold_alu

P = UPat
INTS = frozenset(dtypes.INTS)
SIGNED = frozenset(d for d in dtypes.INTS if not d.is_unsigned)


# ---- bounds --------------------------------------------------------------------------------

def _dtype_bounds(u: UOp) -> tuple[Any, Any]:
    d = u.dtype
    if isinstance(d, dtypes.PtrDType) or d.is_complex:
        return (-math.inf, math.inf)
    return (dtypes.min_value(d), dtypes.max_value(d))


def _c_trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def compute_bounds(u: UOp) -> tuple[Any, Any]:
    """The least and greatest value `u` can take (its sources' bounds already computed)."""
    full = _dtype_bounds(u)
    if u.op is Ops.CONST:
        return (u.arg, u.arg)
    if u.op is Ops.RANGE:
        return (0, u.src[0].vmax - 1)
    if u.op is Ops.DEFINE_VAR:
        return (u.arg[1], u.arg[2])
    if u.dtype.is_bool and u.op in GroupOp.Comparison:
        a, b = u.src
        if not a.dtype.is_float or (a.op is Ops.CONST and b.op is Ops.CONST):
            if u.op is Ops.CMPLT:
                if a.vmax < b.vmin: return (True, True)
                if a.vmin >= b.vmax: return (False, False)
            elif u.op is Ops.CMPLE:
                if a.vmax <= b.vmin: return (True, True)
                if a.vmin > b.vmax: return (False, False)
            elif u.op in (Ops.CMPEQ, Ops.CMPNE):
                differ = a.vmax < b.vmin or b.vmax < a.vmin
                same = a.vmin == a.vmax == b.vmin == b.vmax
                if differ or same:
                    v = same if u.op is Ops.CMPEQ else differ
                    return (v, v)
        return (False, True)
    if not (u.dtype.is_int or u.dtype.is_bool) or u.op not in GroupOp.ALU | {Ops.CAST}:
        return full
    s = [x.bounds for x in u.src]
    lo, hi = full
    out: tuple[Any, Any] = full
    if u.op is Ops.ADD:
        out = (s[0][0] + s[1][0], s[0][1] + s[1][1])
    elif u.op is Ops.SUB:
        out = (s[0][0] - s[1][1], s[0][1] - s[1][0])
    elif u.op is Ops.MUL:
        corners = [a * b for a in s[0] for b in s[1]]
        out = (min(corners), max(corners))
    elif u.op is Ops.NEG:
        out = (-s[0][1], -s[0][0])
    elif u.op is Ops.IDIV and u.src[1].op is Ops.CONST and u.src[1].arg != 0:
        c = u.src[1].arg
        corners = [_c_trunc_div(a, c) for a in s[0]]
        out = (min(corners), max(corners))
    elif u.op is Ops.MOD and u.src[1].op is Ops.CONST and u.src[1].arg != 0:
        c = abs(u.src[1].arg)
        if s[0][0] >= 0:
            out = (0, c - 1) if s[0][1] >= c else s[0]
        else:
            out = (-(c - 1), c - 1) if s[0][1] > 0 else (-(c - 1), 0)
    elif u.op is Ops.MAX:
        out = (max(s[0][0], s[1][0]), max(s[0][1], s[1][1]))
    elif u.op is Ops.MIN:
        out = (min(s[0][0], s[1][0]), min(s[0][1], s[1][1]))
    elif u.op is Ops.WHERE:
        out = (min(s[1][0], s[2][0]), max(s[1][1], s[2][1]))
    elif u.op is Ops.CAST and u.dtype.is_bool:
        lo_src, hi_src = s[0]
        out = (False, False) if lo_src == hi_src == 0 else (True, True) if not lo_src <= 0 <= hi_src else (False, True)
    elif u.op is Ops.CAST and (u.src[0].dtype.is_int or u.src[0].dtype.is_bool):
        out = (int(s[0][0]), int(s[0][1]))
    elif u.op is Ops.AND and u.dtype.is_int and s[1][0] >= 0 and s[0][0] >= 0:
        out = (0, min(s[0][1], s[1][1]))
    elif u.op is Ops.AND and u.dtype.is_bool:
        out = (s[0][0] and s[1][0], s[0][1] and s[1][1])
    elif u.op is Ops.OR and u.dtype.is_bool:
        out = (s[0][0] or s[1][0], s[0][1] or s[1][1])
    elif u.op is Ops.NOT and u.dtype.is_bool:
        out = (not s[0][1], not s[0][0])
    if u.dtype.is_bool:
        return (bool(out[0]), bool(out[1]))
    # values that may wrap around have the dtype's full range
    if out[0] < lo or out[1] > hi:
        return full
    return out


# ---- rules ---------------------------------------------------------------------------------

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


def fold_constants(u: UOp) -> UOp | None:
    if not all(s.op is Ops.CONST for s in u.src) or isinstance(u.dtype, dtypes.PtrDType):
        return None
    if u.op is Ops.CAST:
        v = fold_cast(u.src[0].arg, u.dtype)
    else:
        v = fold_alu(u.op, u.dtype, [s.arg for s in u.src])
    return None if v is None else UOp.const(u.dtype, v)


def fold_by_bounds(u: UOp) -> UOp | None:
    if u.op is Ops.CONST or not (u.dtype.is_int or u.dtype.is_bool):
        return None
    if u.op not in GroupOp.ALU and u.op not in (Ops.CAST, Ops.RANGE):
        return None
    lo, hi = u.bounds
    return UOp.const(u.dtype, lo) if lo == hi else None


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
    # (x//c)*(k*c) + (x%c)*k → x*k, for x ≥ 0 and c > 0
    for t in list(coef):
        if t.op is Ops.MOD and t.src[1].op is Ops.CONST and t.src[1].arg > 0 and t in coef:
            x, c = t.src[0], t.src[1].arg
            d = UOp(Ops.IDIV, x.dtype, (x, t.src[1]))
            k = coef[t]
            if x.vmin >= 0 and k != 0 and coef.get(d) == k * c:
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
    return out if const == 0 else UOp(Ops.ADD, dtype, (out, UOp.const(dtype, const)))


def normalize_sum(u: UOp) -> UOp | None:
    terms, const = _terms(u)
    new = _build(u.dtype, _combine(terms), const)
    return None if new is u else new


def fold_div_mod(u: UOp, x: UOp, c: UOp) -> UOp | None:
    """x//c and x%c for a positive constant c and a non-negative x."""
    d = c.arg
    if d <= 0 or x.vmin < 0:
        return None
    if x.vmax < d:
        return UOp.const(u.dtype, 0) if u.op is Ops.IDIV else x
    if x.op is Ops.IDIV and x.src[1].op is Ops.CONST and x.src[1].arg > 0 and u.op is Ops.IDIV:
        return UOp(Ops.IDIV, u.dtype, (x.src[0], UOp.const(u.dtype, x.src[1].arg * d)))
    if x.op is Ops.MOD and x.src[1].op is Ops.CONST and x.src[1].arg > 0 and x.src[0].vmin >= 0:
        m = x.src[1].arg
        if u.op is Ops.MOD and m % d == 0:           # (y % (k·d)) % d → y % d
            return UOp(Ops.MOD, u.dtype, (x.src[0], c))
        if u.op is Ops.IDIV and m % d == 0:          # (y % (k·d)) // d → (y // d) % k
            return UOp(Ops.MOD, u.dtype, (UOp(Ops.IDIV, u.dtype, (x.src[0], c)),
                                          UOp.const(u.dtype, m // d)))
    terms, const = _terms(x)
    if any(t.vmin < 0 for t, k in terms):
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


symbolic_simple = PatternMatcher([
    # 1. constant folding
    (P(GroupOp.ALU | {Ops.CAST}, name="u"), fold_constants),
    # 2. identities
    (P.var("x", INTS) * 1, lambda x: x),                                             # x*1 → x
    (P.var("x", dtypes.FLOATS) * 1.0, lambda x: x),                                  # x*1.0 → x
    (P.var("x", INTS) + 0, lambda x: x),                                             # x+0 → x
    (P.var("x", dtypes.FLOATS) + P.cvar("c"), lambda x, c: x if _is_neg_zero(c) else None),
    (P.var("x", INTS) - 0, lambda x: x),                                             # x-0 → x
    (P.var("x", dtypes.FLOATS) - P.const(0.0), lambda x: x),                         # x-0.0 → x
    (P.var("x", INTS) * 0, lambda x: x.const_like(0)),                               # x*0 → 0
    (P(Ops.IDIV, src=(P.var("x"), P.const(1))), lambda x: x),                        # x//1 → x
    (P(Ops.MOD, src=(P.var("x"), P.const(1))), lambda x: x.const_like(0)),           # x%1 → 0
    (P(Ops.FDIV, src=(P.var("x"), P.const(1.0))), lambda x: x),                      # x/1.0 → x
    (P(Ops.SUB, INTS, src=(P.var("x"), P.var("x"))), lambda x: x.const_like(0)),    # x-x → 0
    (P.var("x", dtypes.bool_) & True, lambda x: x),                                  # x∧T → x
    (P.var("x", dtypes.bool_) & False, lambda x: x.const_like(False)),               # x∧F → F
    (P.var("x", dtypes.bool_) | False, lambda x: x),                                 # x∨F → x
    (P.var("x", dtypes.bool_) | True, lambda x: x.const_like(True)),                 # x∨T → T
    (P(Ops.AND, src=(P.var("x"), P.var("x"))), lambda x: x),                         # x∧x → x
    (P(Ops.OR, src=(P.var("x"), P.var("x"))), lambda x: x),                          # x∨x → x
    (P(Ops.WHERE, src=(P.const(True), P.var("a"), P.var())), lambda a: a),          # T?a:b → a
    (P(Ops.WHERE, src=(P.const(False), P.var(), P.var("b"))), lambda b: b),         # F?a:b → b
    (P(Ops.WHERE, src=(P.var(), P.var("a"), P.var("a"))), lambda a: a),              # c?a:a → a
    (P(Ops.CAST, name="u"), lambda u: u.src[0] if u.src[0].dtype is u.dtype else None),
    (P(Ops.MAX, src=(P.var("x"), P.var("x"))), lambda x: x),
    (P(Ops.MIN, src=(P.var("x"), P.var("x"))), lambda x: x),
])

symbolic = symbolic_simple + PatternMatcher([
    # 3. bounds
    (P(GroupOp.ALU | {Ops.CAST}, name="u"), fold_by_bounds),
    (P(Ops.MAX, INTS, src=(P.var("x"), P.var("y"))),
     lambda x, y: x if x.vmin >= y.vmax else y if y.vmin >= x.vmax else None),
    (P(Ops.MIN, INTS, src=(P.var("x"), P.var("y"))),
     lambda x, y: x if x.vmax <= y.vmin else y if y.vmax <= x.vmin else None),
    # 4. sums of integers, canonical with the constant last
    (P((Ops.ADD, Ops.SUB), INTS, name="u"), normalize_sum),
    (P(Ops.MUL, INTS, src=(P.cvar("c"), P.var("x"))), lambda c, x: x * c if x.op is not Ops.CONST else None),
    (P(Ops.MUL, INTS, src=(P(Ops.MUL, src=(P.var("x"), P.cvar("a"))), P.cvar("b"))),
     lambda x, a, b: x * (a.arg * b.arg)),                                           # (x*a)*b → x*(a·b)
    # 5. division and modulo by positive constants
    (P((Ops.IDIV, Ops.MOD), SIGNED, src=(P.var("x"), P.cvar("c")), name="u"), fold_div_mod),
])


def simplify(u: UOp) -> UOp:
    """`u` with the symbolic rules applied to a fixed point."""
    from lazyarr.compiler.patterns import graph_rewrite
    return graph_rewrite(u, symbolic)
