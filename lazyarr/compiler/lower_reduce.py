"""Lower each REDUCE to an accumulator: a register, a loop that updates it, and a read after.

REDUCE(value, *ranges, op) becomes:
- DEFINE_ACC(identity, *outer ranges): a register holding the reduction's identity, defined
  inside the ranges the value runs in besides the reduced ones (so a nested reduction restarts
  its accumulator on every outer iteration);
- the reduced RANGEs take the register as a source, so their loops open after it is defined;
- ASSIGN(acc, op(acc, value), *ranges) inside those loops, closed by END(assign, *ranges);
- AFTER(acc, end): the register's value once the loops are done, which is the result.
A reduction whose value does not depend on its ranges is n copies of the value: value·n for a
sum, the value itself for max and min. A reduction's dtype is its value's; MAX and MIN propagate NaN as NumPy does (the renderer's
MAX/MIN do).
"""
from __future__ import annotations

import math

from lazyarr import dtypes
from lazyarr.compiler.patterns import PatternMatcher, UPat, graph_rewrite, substitute
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.ops import reduce_identity


def _lower(ctx: list[int], red: UOp) -> UOp:
    value, ranges, op = red.src[0], red.src[1:], red.arg
    if not (value.ranges & frozenset(ranges)) and op in (Ops.ADD, Ops.MAX, Ops.MIN):
        # the value is the same on every iteration: n copies of it
        n = math.prod(r.src[0].arg for r in ranges)
        if op is not Ops.ADD:
            return value if n else UOp.const(red.dtype, reduce_identity(op, red.dtype))
        return UOp(Ops.MUL, red.dtype, (value, UOp.const(red.dtype, n))) if not red.dtype.is_bool else \
            UOp(Ops.AND, red.dtype, (value, UOp.const(red.dtype, n > 0)))
    outer = sorted(value.ranges - frozenset(ranges), key=lambda r: r.arg)
    acc = UOp(Ops.DEFINE_ACC, red.dtype, (UOp.const(red.dtype, reduce_identity(op, red.dtype)), *outer),
              len(ctx))
    ctx.append(1)
    loops = {r: r.replace(src=(*r.src, acc)) for r in ranges}
    value = substitute(value, loops)
    # the loops are sources of the update so that it runs inside them even when the value
    # does not read them
    update = UOp(Ops.ASSIGN, red.dtype, (acc, UOp(op, red.dtype, (acc, value)), *loops.values()))
    end = UOp(Ops.END, dtypes.void, (update, *loops.values()))
    return UOp(Ops.AFTER, red.dtype, (acc, end))


pm_lower_reduce = PatternMatcher([(UPat(Ops.REDUCE, name="red"), _lower)])


def lower_reduce(sink: UOp) -> UOp:
    return graph_rewrite(sink, pm_lower_reduce, ctx=[])
