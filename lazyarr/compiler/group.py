"""Group reductions: the work-items of a work-group share a long reduction (the GROUP action of
`lazyarr.compiler.opts`, for renderers whose `OptTarget.group_reduce` is the group size, OpenCL).

GROUP(axis, g) on a reduction axis r of a kernel (one store, as `opts.analyse` sees it):
- every REDUCE over r that runs only inside output loops (not inside another reduction) becomes
  a per-work-item partial: the same REDUCE over a *strided* range, RANGE(n, lid), of which a
  work-item runs the iterations lid, lid + g, lid + 2g, ... (lid is DEFINE_VAR("lidx0", 0, g-1),
  the work-item's number in its group); its other ranges stay whole loops;
- the partial is stored into DEFINE_LOCAL (work-group memory) at lid, a BARRIER follows, and
  the partials combine in a tree, a BARRIER after each level (`combine_in_group`). Every
  work-item then reads the result, which a broadcast back (softmax's quotient, layer norm)
  uses without more synchronisation;
- the output loops split in two: the *group loops*, up to the last output loop a grouped
  reduction runs in, run the same iterations in every work-item of a group (the renderer spreads
  them over groups); the loops after them become strided ranges, their iterations shared among
  the group's work-items (softmax's columns). Without any, the store is gated to lid == 0.
A strided range has the meaning above only for renderers that map lid to work-items: the
renderer also ends every loop around a BARRIER with another one, so that a group's next
iteration does not overwrite partials that slower work-items still read.
Reduction values that do not depend on r are not grouped (lowering would count each work-item's
iterations as n). Sums change order as any parallel sum does (a work-item's share of a long
float sum is summed in blocks with compensation, `lazyarr.compiler.lower_reduce`, and the tree
adds values of like size); MAX/MIN keep NaN (the renderer's MAX/MIN propagate it in the combine
as in the loop); integer sums wrap as before.
"""
from __future__ import annotations

import math

from lazyarr import dtypes
from lazyarr.compiler.kernel_axes import Opt, stride
from lazyarr.compiler.patterns import substitute
from lazyarr.compiler.uop import Ops, UOp

GROUP_OPS = frozenset({Ops.ADD, Ops.MUL, Ops.MAX, Ops.MIN})
TILE_COLUMNS = 4   # columns of matmul's register tile per work-item


def local_id(g: int) -> UOp:
    return UOp(Ops.DEFINE_VAR, dtypes.index, (), ("lidx0", 0, g - 1))


def groupable(k, red: UOp, r: UOp) -> bool:
    """Whether REDUCE `red` can be grouped along its range r."""
    out = frozenset(k.out_ranges)
    return red.arg in GROUP_OPS and r in red.src[1:] and red.ranges <= out and r in red.src[0].ranges


def group_inapplicable(k, opts: list) -> str | None:
    """Why kernel `k` (an `opts.Kernel`) cannot take the GROUP actions `opts` (None: it can)."""
    amounts = {o.amount for o in opts}
    if len(amounts) != 1 or min(amounts) < 1 or k.inner_loops:
        return f"{opts}: GROUP takes one group size per kernel, on a kernel without inner loops"
    for o in opts:
        if not k.is_reduce(o.axis) or o.axis >= len(k.axes):
            return f"{o}: GROUP takes a reduction axis"
    axes = {k.axes[o.axis] for o in opts}
    if not any(groupable(k, red, r) for red in k.reduces for r in axes):
        return f"{opts}: no reduction of the kernel can be grouped along these axes"
    return None


def apply_group(k, opts: list) -> UOp:
    """The kernel `k` with the GROUP actions `opts` applied (`group_inapplicable` has found none
    that does not apply)."""
    g = opts[0].amount
    axes = {k.axes[o.axis] for o in opts}
    grouped = [red for red in k.reduces if any(groupable(k, red, r) for r in axes)]
    lid = local_id(g)
    # the group loops: every output loop up to the last one a grouped reduction runs in
    last = max((k.out_ranges.index(r) for red in grouped for r in red.ranges), default=-1)
    number = max(r.arg for r in k.axes) + 1
    strided = {r: r.replace(src=(r.src[0], lid)) for r in k.out_ranges[last + 1:]}
    done: dict[UOp, UOp] = dict(strided)
    for u in k.store.toposort():
        if u in done:
            continue
        src = tuple(done[s] for s in u.src)
        if u not in grouped:
            done[u] = u if src == u.src else u.replace(src=src)
            continue
        r = next(x for x in u.src[1:] if x in axes)
        rs = r.replace(src=(r.src[0], lid))
        partial = UOp(Ops.REDUCE, u.dtype, (substitute(src[0], {r: rs}), *(rs if x is r else x for x in src[1:])), u.arg)
        done[u], number = combine_in_group(u, partial, lid, g, number)
    store = done[k.store]
    if not strided:   # one value per group: one work-item stores it
        ix = store.src[0]
        store = store.replace(src=(ix.replace(src=(*ix.src[:-1], lid.eq(0))), store.src[1]))
    loops = [strided.get(r, r) for r in k.out_ranges]
    return UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (store, *loops)) if loops else store,))


def index(buf: UOp, i: UOp, gate: UOp | None = None) -> UOp:
    return UOp(Ops.INDEX, buf.dtype, (buf, i, UOp.const(dtypes.bool_, True) if gate is None else gate))


def combine_in_group(red: UOp, partial: UOp, lid: UOp, g: int, number: int) -> tuple[UOp, int]:
    """Every work-item's `partial` of REDUCE `red` combined across the group, and the next free
    number. For g a power of two, a tree: after each barrier the first s work-items combine
    element lid with element lid + s (s = g/2, g/4, ..., 1), and element 0 is the result (the
    buffer has g/2 spare elements so that lid + s needs no gate); otherwise every work-item
    reduces the g elements in a loop."""
    tree = g & (g - 1) == 0
    buf = UOp(Ops.DEFINE_LOCAL, dtypes.ptr(red.dtype, "local"), (), (number, g + g // 2 if tree else g))
    barrier = UOp(Ops.BARRIER, dtypes.void, (UOp(Ops.STORE, dtypes.void, (index(buf, lid), partial)),))
    if not tree:
        m = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, g), barrier), number + 1)
        after = UOp(Ops.AFTER, buf.dtype, (buf, barrier))
        return UOp(Ops.REDUCE, red.dtype, (UOp(Ops.LOAD, red.dtype, (index(after, m),)), m), red.arg), number + 2
    s = g // 2
    while s:
        after = UOp(Ops.AFTER, buf.dtype, (buf, barrier))
        pair = [UOp(Ops.LOAD, red.dtype, (index(after, i),)) for i in (lid, lid + s)]
        store = UOp(Ops.STORE, dtypes.void, (index(after, lid, lid.lt(s)), UOp(red.arg, red.dtype, tuple(pair))))
        barrier, s = UOp(Ops.BARRIER, dtypes.void, (store,)), s // 2
    return UOp(Ops.LOAD, red.dtype, (index(UOp(Ops.AFTER, buf.dtype, (buf, barrier)), UOp.const(dtypes.index, 0)),)), number + 1


def group_heuristic(k, g: int) -> list:
    """GROUP, with g work-items, for the reductions that gain from it: a reduction of at least g
    values that runs only inside output loops and whose loads step through memory one element at
    a time along its innermost range (row sums, softmax's rows; neighbouring work-items then read
    neighbouring elements), when the outputs are few enough that one work-group each still fits
    the device (at most 2^20 outputs); any such reduction of 4096 values or more when there
    are fewer than 1024 outputs, too few work-items to fill a GPU otherwise; and any reduction
    broadcast back along output loops of g elements or more (softmax, layer norm: the group's
    work-items share those loops, else one work-item would run them). Matmul keeps one work-item
    per output (its loads of B step by a row along the reduction)."""
    outputs = math.prod(r.src[0].arg for r in k.out_ranges)
    opts = []
    for red in k.reduces:
        r = red.src[-1]
        if not groupable(k, red, r):
            continue
        length = math.prod(x.src[0].arg for x in red.src[1:])
        steps = [stride(ld.src[0].src[1], r) for ld in red.src[0].toposort() if ld.op is Ops.LOAD]
        contiguous = 1 in steps and all(s in (0, 1) for s in steps)
        inner = k.out_ranges[max((k.out_ranges.index(x) for x in red.ranges), default=-1) + 1:]
        broadcast = math.prod(x.src[0].arg for x in inner) >= g
        if broadcast or (length >= g and ((contiguous and outputs <= 1 << 20) or (length >= 4096 and outputs < 1024))):
            opts.append(Opt("group", k.axes.index(r), g))
    return opts


def register_tile(k) -> list:
    """UPCASTs for a kernel with one float sum (matmul): the output axis that one load in the sum
    does not depend on, while the other steps by one element along the innermost output axis
    (matmul's rows: B's row is read once for 8 rows of A), unrolled 8 (4, 2) times where that
    divides it, and the innermost output axis unrolled 4 (2) times where that divides it (the
    renderer spreads one loop nest over the grid, not a rest part). Each work-item then keeps a
    tile of 8x4 accumulators: per step of the sum, 8 loads of A that every work-item of a row
    shares and 4 of B for 32 multiply-adds. On an H200, 4096^2 float32: one output per work-item
    31 ms, 8x1 11.7 ms, 8x2 9.6 ms, 8x4 7.1 ms, 8x8 9.7 ms."""
    if len(k.reduces) != 1 or len(k.out_ranges) < 2:
        return []
    red, inner = k.reduces[0], k.out_ranges[-1]
    loads = [u for u in red.src[0].toposort() if u.op is Ops.LOAD]
    if red.arg is not Ops.ADD or not red.dtype.is_float or len(loads) != 2 or red.ranges != frozenset(k.out_ranges):
        return []
    for axis in reversed(range(len(k.out_ranges) - 1)):
        r = k.out_ranges[axis]
        n = next((n for n in (8, 4, 2) if r.src[0].arg % n == 0), 0)   # one loop nest: no rest part
        shared = [ld for ld in loads if r not in ld.ranges and stride(ld.src[0].src[1], inner) == 1]
        if n and shared and any(r in ld.ranges for ld in loads):
            c = next((c for c in (TILE_COLUMNS, 2) if c > 1 and inner.src[0].arg % c == 0), 0)
            return [Opt("upcast", axis, n)] + ([Opt("upcast", len(k.out_ranges) - 1, c)] if c else [])
    return []
