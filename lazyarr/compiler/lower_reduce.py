"""Lower each REDUCE to an accumulator: a register, a loop that updates it, and a read after.

REDUCE(value, *ranges, op) becomes:
- DEFINE_ACC(identity, *outer ranges): a register holding the reduction's identity, defined
  inside the ranges the value runs in besides the reduced ones (so a nested reduction restarts
  its accumulator on every outer iteration);
- the reduced RANGEs take the register as a source, so their loops open after it is defined;
- ASSIGN(acc, op(acc, value), *ranges) inside those loops, closed by END(assign, *ranges);
- AFTER(acc, end): the register's value once the loops are done, which is the result.
REDUCEs over the very same RANGEs (the copies that kernel optimisation makes when it unrolls a
loop into several accumulators, `lazyarr.compiler.opts`) share one loop: every accumulator is a
source of the RANGEs, the updates are grouped under one NOOP that the END closes, and each
result is AFTER(its acc, that END). Reductions are lowered from the innermost out, so a
reduction nested in another's value is lowered first.
A REDUCE of a vector dtype has a vector accumulator (the identity in every lane).
A reduction whose value does not depend on its ranges is n copies of the value: value·n for a
sum, the value itself for max and min. A reduction's dtype is its value's; MAX and MIN propagate
NaN as NumPy does (the renderer's MAX/MIN do).
"""
from __future__ import annotations

import math

from lazyarr import dtypes
from lazyarr.compiler.patterns import substitute
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.ops import reduce_identity


def splat(dtype: dtypes.DType, value) -> UOp:
    """The constant `value` of `dtype`: a VECTORIZE of the scalar constant for a vector dtype."""
    scalar = UOp.const(dtype.scalar, value)
    return scalar if dtype.count == 1 else UOp(Ops.VECTORIZE, dtype, (scalar,) * dtype.count)


def _invariant(red: UOp) -> UOp | None:
    """A reduction of a value that does not depend on its ranges: n copies of the value."""
    value, ranges, op = red.src[0], red.src[1:], red.arg
    if value.ranges & frozenset(ranges) or op not in (Ops.ADD, Ops.MAX, Ops.MIN):
        return None
    if not all(r.src[0].op is Ops.CONST for r in ranges):   # lengths that are size arguments (≥ 2; never vectors)
        if op is not Ops.ADD or red.dtype.is_bool:
            return value
        return UOp(Ops.MUL, red.dtype, (value, UOp(Ops.CAST, red.dtype, (math.prod(r.src[0] for r in ranges),))))
    n = math.prod(r.src[0].arg for r in ranges)
    if op is not Ops.ADD:
        return value if n else splat(red.dtype, reduce_identity(op, red.dtype.scalar))
    if red.dtype.scalar.is_bool:
        return UOp(Ops.AND, red.dtype, (value, splat(red.dtype, n > 0)))
    return UOp(Ops.MUL, red.dtype, (value, splat(red.dtype, n)))


def _lower_group(members: list[UOp], counter: list[int]) -> dict[UOp, UOp]:
    """Accumulators, one shared loop and the reads after it for REDUCEs over the same ranges."""
    ranges = members[0].src[1:]
    accs = []
    for red in members:
        outer = sorted(red.src[0].ranges - frozenset(ranges), key=lambda r: r.arg)
        identity = splat(red.dtype, reduce_identity(red.arg, red.dtype.scalar))
        accs.append(UOp(Ops.DEFINE_ACC, red.dtype, (identity, *outer), len(counter)))
        counter.append(1)
    loops = {r: r.replace(src=(*r.src, *accs)) for r in ranges}
    # the loops are sources of each update so that it runs inside them even when the value
    # does not read them
    updates = [UOp(Ops.ASSIGN, red.dtype, (acc, UOp(red.arg, red.dtype, (acc, substitute(red.src[0], loops))),
                                           *loops.values()))
               for red, acc in zip(members, accs)]
    body = updates[0] if len(updates) == 1 else UOp(Ops.NOOP, dtypes.void, tuple(updates))
    end = UOp(Ops.END, dtypes.void, (body, *loops.values()))
    return {red: UOp(Ops.AFTER, red.dtype, (acc, end)) for red, acc in zip(members, accs)}


def lower_reduce(sink: UOp) -> UOp:
    counter: list[int] = []
    while True:
        order = sink.toposort()
        has_reduce: dict[UOp, bool] = {}
        for u in order:
            has_reduce[u] = u.op is Ops.REDUCE or any(has_reduce[s] for s in u.src)
        innermost = [u for u in order if u.op is Ops.REDUCE and not has_reduce[u.src[0]]]
        if not innermost:
            return sink
        mapping: dict[UOp, UOp] = {}
        groups: dict[tuple[UOp, ...], list[UOp]] = {}
        for red in innermost:
            inv = _invariant(red)
            if inv is not None:
                mapping[red] = inv
            else:
                groups.setdefault(red.src[1:], []).append(red)
        for members in groups.values():
            mapping.update(_lower_group(members, counter))
        sink = substitute(sink, mapping)
