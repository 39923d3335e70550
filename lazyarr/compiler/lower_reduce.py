"""Lower each REDUCE to an accumulator: a register, a loop that updates it, and a read after.

REDUCE(value, *ranges, op) becomes:
- DEFINE_ACC(identity, *outer ranges): a register holding the reduction's identity, defined
  inside the ranges the value runs in besides the reduced ones and the loops around those (so a
  nested reduction restarts its accumulator on every outer iteration, and control flow orders
  the reduction's loops with the other loops inside the same ones);
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

A long float sum is lowered in blocks (`_lower_blocked`), since one accumulator updated n times
gathers rounding errors that grow with n (float32 rows of 4096 summed by one loop erred by up to
3e-6 relative, NumPy's pairwise sums by 1.4e-7): its innermost loop(s), cut into blocks
of `block_length` iterations, sum each block into a fresh accumulator, and the blocks' partial
sums are added into the result with Kahan's compensated summation (a second accumulator keeps
what each addition rounded away and subtracts it from the next partial). The error is then
about that of one block plus a few ulps, whatever n is, at the cost of a few operations per
block; on every device (no float64 needed). A sum whose loops run at most `LONG_SUM` (64)
times in all, or one block's iterations, stays one loop.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.patterns import substitute
from lazyarr.compiler.uop import Ops, UOp, reduce_identity

SCALAR_BLOCK = 16   # iterations of a block of a long float sum (see block_length)
SIMD_BLOCK = 128    # ... of a scalar sum whose block loop the renderer splits over vector lanes
VECTOR_BLOCK = 32
LONG_SUM = 64   # a float sum of at most this many iterations stays one loop


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


def _read(acc: UOp, value: UOp, loops) -> UOp:
    """The accumulator as its update reads it: AFTER(acc, loops the value does not run in), so
    that the update depends on every loop and is not hoisted out of one (a product of a broadcast
    value was the value itself, a sum over a broadcast axis counted one repeat)."""
    missing = [r for r in loops if r not in value.ranges]
    return UOp(Ops.AFTER, acc.dtype, (acc, *missing)) if missing else acc


def enclosing_loops(sink: UOp) -> dict[UOp, frozenset[UOp]]:
    """Each loop of the kernel's ENDs and REDUCEs → the loops it runs inside: those listed before it
    in its END or REDUCE (outermost first) and those around that node. (A REDUCE's loops enclose
    the reductions in its value: `sum(a + a @ w)` computes the matmul inside the sum's loops.)"""
    out: dict[UOp, frozenset[UOp]] = {}
    for u in sink.toposort():
        if u.op in (Ops.END, Ops.REDUCE):
            for i, r in enumerate(u.src[1:]):
                out[r] = out.get(r, frozenset()) | frozenset(u.src[1:i + 1]) | u.ranges
    return out


def _around(red: UOp, enclosing: dict[UOp, frozenset[UOp]]) -> list[UOp]:
    """The loops a REDUCE's accumulators are defined inside: those its value runs in besides the
    reduced ones, and the loops around those (an output loop that the value does not read but
    that encloses one it reads: without it, control flow would not order the reduction's loops
    with that loop's other children, and could nest them in one another)."""
    out = set(red.src[0].ranges - frozenset(red.src[1:]))
    todo = list(out)
    while todo:
        for r in enclosing.get(todo.pop(), ()):
            if r not in out:
                out.add(r)
                todo.append(r)
    return sorted(out, key=lambda r: r.arg)


def _lower_group(members: list[UOp], counter: list[int], enclosing: dict[UOp, frozenset[UOp]]) -> dict[UOp, UOp]:
    """Accumulators, one shared loop and the reads after it for REDUCEs over the same ranges."""
    ranges = members[0].src[1:]
    accs = []
    for red in members:
        outer = _around(red, enclosing)
        identity = splat(red.dtype, reduce_identity(red.arg, red.dtype.scalar))
        accs.append(UOp(Ops.DEFINE_ACC, red.dtype, (identity, *outer), len(counter)))
        counter.append(1)
    loops = {r: r.replace(src=(*r.src, *accs)) for r in ranges}
    # the loops are sources of each update so that it runs inside them even when the value
    # does not read them
    updates = []
    for red, acc in zip(members, accs):
        value = substitute(red.src[0], loops)
        updates.append(UOp(Ops.ASSIGN, red.dtype, (acc, UOp(red.arg, red.dtype, (_read(acc, value, loops.values()), value)),
                                                   *loops.values())))
    body = updates[0] if len(updates) == 1 else UOp(Ops.NOOP, dtypes.void, tuple(updates))
    end = UOp(Ops.END, dtypes.void, (body, *loops.values()))
    return {red: UOp(Ops.AFTER, red.dtype, (acc, end)) for red, acc in zip(members, accs)}


def block_length(members: list[UOp], simd_sums: bool = False) -> int:
    """Iterations of a block of the float sums `members`, which update their accumulators in one
    loop. The result's error is about one block's, and each block's update costs ~12 operations
    per accumulator: a scalar sum's blocks are short (16 iterations; blocks of 64 left a loop over
    250 values ~3x NumPy's error), unless the renderer splits the block's loop over vector lanes
    (`simd_sums`: the C renderer's `omp simd reduction`), where each lane sums a 16th to an 8th of
    a block of 128 and the update's serial chain (a horizontal sum, then the compensation: ~70
    cycles) is paid once per 128 (a block of 16 made sum(exp(x)) of float32 2.3x slower); a
    vectorised sum's lanes average their blocks' errors (32); a register tile (8 accumulators or
    more: matmul) is compute-bound, with its update's state spilled, so its blocks are long (512:
    matmul's k up to 512 keeps one loop)."""
    if len(members) >= 8:
        return 512
    if members[0].dtype.count != 1:
        return VECTOR_BLOCK
    return SIMD_BLOCK if simd_sums else SCALAR_BLOCK


def _stride(r: UOp) -> int | None:
    """How many work-items share range r's iterations: 1 for a plain loop, g for a group
    reduction's strided range RANGE(n, lid) (each work-item runs every g-th iteration); None for
    a range of other sources."""
    if len(r.src) == 1:
        return 1
    lid = r.src[1]
    return lid.arg[2] + 1 if len(r.src) == 2 and lid.op is Ops.DEFINE_VAR and lid.arg[0] == "lidx0" else None


def _blocks(ranges: tuple[UOp, ...], block: int) -> tuple[int, int] | None:
    """Where a float sum over `ranges` (its loops, outermost first) is cut into blocks of about
    `block` iterations (a work-item's: a strided range of n runs n/g of them): (j, m) for blocks
    that run the loops after ranges[j] whole and ranges[j] in pieces of m of its elements (m = 0:
    ranges[j] runs whole, outside the blocks). m is a multiple of the stride near block / (the
    iterations of the loops after it), one that divides ranges[j]'s length where there is one
    (no short last piece). None for a sum of at most `block` (and `LONG_SUM`) iterations, and
    for ranges of other sources (a group's combining loop)."""
    strides = [_stride(r) for r in ranges]
    if None in strides:
        return None
    its = [-(-r.src[0].vmax // g) for r, g in zip(ranges, strides)]
    if math.prod(its) <= max(block, LONG_SUM):
        return None
    inner, j = 1, len(ranges) - 1
    while ranges[j].src[0].op is Ops.CONST and inner * its[j] <= block:
        inner, j = inner * its[j], j - 1
    m, g, n = block // inner, strides[j], ranges[j].src[0]
    if m <= 1:
        return j, 0
    if n.op is Ops.CONST:   # a divisor, a multiple of the vector lanes first (10 of 1000 leaves a tail of 2)
        divisors = [d for d in range(m, (m + 1) // 2 - 1, -1) if n.arg % (d * g) == 0]
        m = next((d for d in divisors if d % 8 == 0), next(iter(divisors), m))
    return j, m * g


def _blockable(members: list[UOp]) -> bool:
    """Float sums whose values run no loops of their own inside the sum's loops."""
    ranges = frozenset(members[0].src[1:])
    return all(red.arg is Ops.ADD and red.dtype.scalar.is_float and
               not any(u.op is Ops.DEFINE_ACC and u.ranges & ranges for u in red.src[0].toposort()) for red in members)


def _lower_blocked(members: list[UOp], counter: list[int], enclosing: dict[UOp, frozenset[UOp]], numbers: list[int],
                   j: int, m: int) -> dict[UOp, UOp]:
    """Blocked lowering of float sums over the same ranges (see the module docstring): per sum
    a Kahan sum s and compensation c defined outside the loops; the outer loops (the ranges
    before ranges[j], then the loop over pieces of ranges[j], or ranges[j] itself when m = 0)
    open after them; inside, a block's accumulator p, the inner loops (a piece of m elements of
    ranges[j], or what is left of it in the last piece, strided like ranges[j]; then the ranges
    after it) that add the value into p, and the update y = p - c, t = s + y, c = (t - s) - y,
    s = t (c's update reads s before s's: its ASSIGN is a source of s's). The result is s - c.
    t is clamped to the finite range in c's update, so that a sum that reaches ±inf stays ±inf
    (inf - inf would make c, and then s, NaN) while NaN still propagates."""
    ranges = members[0].src[1:]

    def acc(dtype: dtypes.DType, around) -> UOp:
        counter.append(1)
        return UOp(Ops.DEFINE_ACC, dtype, (splat(dtype, 0.0), *around), len(counter) - 1)

    def new_range(length: UOp, *src: UOp) -> UOp:
        numbers[0] += 1
        return UOp(Ops.RANGE, dtypes.index, (length, *src), numbers[0] - 1)

    around = [_around(red, enclosing) for red in members]
    sums = [acc(red.dtype, a) for red, a in zip(members, around)]
    comps = [acc(red.dtype, a) for red, a in zip(members, around)]
    state = (*sums, *comps)
    sub = {r: r.replace(src=(*r.src, *state)) for r in ranges[:j]}
    cut, n = ranges[j], ranges[j].src[0]
    if m:
        pieces = new_range(n // m if n.op is Ops.CONST and n.arg % m == 0 else (n + (m - 1)) // m, *state)
        outer = [*sub.values(), pieces]
    else:
        sub[cut] = cut.replace(src=(*cut.src, *state))
        outer = list(sub.values())
    partials = [acc(red.dtype, (*a, *outer)) for red, a in zip(members, around)]
    inner = {r: r.replace(src=(*r.src, *partials)) for r in ranges[j + 1:]}
    if m:
        length = UOp.const(dtypes.index, m) if n.op is Ops.CONST and n.arg % m == 0 else (n - pieces * m).minimum(m)
        piece = new_range(length, *cut.src[1:], *partials)   # a strided range stays strided: lid, lid + g, ...
        sub[cut] = pieces * m + piece
        inner = {piece: piece, **inner}
    sub.update(inner)
    loops = (*outer, *inner.values())
    updates = []
    for red, p in zip(members, partials):
        value = substitute(red.src[0], sub)
        updates.append(UOp(Ops.ASSIGN, red.dtype, (p, _read(p, value, inner.values()) + value, *loops)))
    end = UOp(Ops.END, dtypes.void, (_group(updates), *inner.values()))
    steps = []
    for red, s, c, p in zip(members, sums, comps, partials):
        big = float(np.finfo(red.dtype.scalar.np).max)
        y = UOp(Ops.AFTER, red.dtype, (p, end)) - c
        t = s + y
        finite = t.maximum(splat(red.dtype, -big)).minimum(splat(red.dtype, big))
        c_step = UOp(Ops.ASSIGN, red.dtype, (c, (finite - s) - y, *outer))
        steps.append(UOp(Ops.ASSIGN, red.dtype, (s, t, *outer, c_step)))
    done = UOp(Ops.END, dtypes.void, (_group(steps), *outer))
    return {red: UOp(Ops.AFTER, red.dtype, (s, done)) - UOp(Ops.AFTER, red.dtype, (c, done))
            for red, s, c in zip(members, sums, comps)}


def _group(updates: list[UOp]) -> UOp:
    return updates[0] if len(updates) == 1 else UOp(Ops.NOOP, dtypes.void, tuple(updates))


def lower_reduce(sink: UOp, simd_sum: Callable[[UOp], bool] | None = None) -> UOp:
    """Every REDUCE of `sink` lowered (the module docstring). `simd_sum(value)`: whether the
    renderer runs an innermost loop summing `value` on vector lanes (see block_length); None:
    it never does."""
    counter: list[int] = []
    numbers = [1 + max((u.arg for u in sink.toposort() if u.op is Ops.RANGE), default=-1)]
    enclosing = enclosing_loops(sink)
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
            simd = simd_sum is not None and all(simd_sum(red.src[0]) for red in members)
            plan = _blocks(members[0].src[1:], block_length(members, simd)) if _blockable(members) else None
            mapping.update(_lower_group(members, counter, enclosing) if plan is None else
                           _lower_blocked(members, counter, enclosing, numbers, *plan))
        sink = substitute(sink, mapping)
