"""Stage 17, the pre-matcher: each renderer's own rewrite rules, applied after symbolic
simplification and before the decompositions (stage 18).

A renderer names its rule set in its `pre_matcher` attribute (None: the stage is skipped);
`lazyarr.compiler.codegen` applies it with `graph_rewrite` to a fixed point. The rules here
rewrite what the target computes better in another form than the generic stages would leave it,
before stage 18 decides what to decompose: they see the operations as the user wrote them.

Rule sets:
- `c_pre_matcher` (C, inherited by OpenCL C): pow by a constant exponent of 0, 1, 2 or -1 as
  plain arithmetic (1, x, x·x, 1/x), where C's pow returns exactly that; other exponents (0.5:
  pow(-0, 0.5) is +0 where sqrt gives -0) keep their pow.
"""
from __future__ import annotations

from lazyarr.compiler.patterns import PatternMatcher, UPat
from lazyarr.compiler.uop import Ops, UOp


def _pow_const(x: UOp, e: UOp) -> UOp | None:
    """pow(x, e) for the exponents where C's pow equals plain arithmetic: 0 (pow(x, 0) is 1 even
    for NaN), 1, 2 (x·x, the correctly rounded square that pow also returns; NumPy squares too)
    and -1 (1/x, correctly rounded, as is pow's). Saves a libm call per element."""
    if not x.dtype.is_float or e.arg not in (0.0, 1.0, 2.0, -1.0):
        return None
    if e.arg == 0.0:
        return UOp.const(x.dtype, 1.0)
    if e.arg == 1.0:
        return x
    if e.arg == 2.0:
        return UOp(Ops.MUL, x.dtype, (x, x))
    return UOp(Ops.FDIV, x.dtype, (UOp.const(x.dtype, 1.0), x))


# C and OpenCL C (whose pow is C99's too)
c_pre_matcher = PatternMatcher([
    (UPat(Ops.POW, src=(UPat.var("x"), UPat.cvar("e"))), _pow_const),     # pow(x, 0|1|2|-1) → 1|x|x·x|1/x
])
