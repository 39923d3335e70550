"""Rangeify: turn one kernel's tensor graph into loops over explicit ranges and index expressions.

The kernel stores a value of shape S into its output buffer. Rangeify gives the output one RANGE
per axis of S (an axis of length 1 gets the constant 0), and asks for the value at those indices
with an INDEX node. Rules then push every INDEX from the root towards the leaves:
- through an ALU op, a cast, a DETACH or a NOOP marker: each source is indexed the same way;
- through a movement op, the indices are mapped to the source's: reshape flattens and unflattens
  within groups of axes whose lengths multiply to the same number, permute reorders, expand
  drops the index of a stretched axis (0), shrink adds the start, flip mirrors, and pad subtracts
  the padding and gates the value with the condition that the index lies inside the source
  (`valid ? value : 0`), the condition also guarding every load below it;
- into a reduction over axes: the reduced axes get new RANGEs of their own and the value becomes
  a REDUCE over them;
- through a gather: the index arrays are read at the indices, and what they hold indexes the
  gathered array (data-dependent indices; their range is checked when the gather is built);
- at the leaves: a constant is itself, IOTA is its index, and a buffer becomes a LOAD from a
  kernel argument (DEFINE_GLOBAL) at the row-major linear index, under the gate.
The output is a STORE into argument 0 at the output's linear index, closed by an END of the
output's ranges (a kernel of several outputs of one shape: a STORE into each of its first
arguments, grouped by a NOOP under the one END). Rangeify also reports the reductions the kernel
would evaluate redundantly (inside loops they do not depend on, or again at other indexings), and
the costly elementwise values it would evaluate inside loops they do not depend on, which the
scheduler then gives buffers of their own (`redundant_reductions`, `repeated_reductions`,
`recomputed_values`). The result holds no Buffer objects: the same computation on other buffers
is the same graph, which is what the kernel caches key on.

Shape-generic kernels (`generic_limit`): a small kernel's sizes (axis lengths from 2, offsets of
shrinks and pads from 1, up to the limit) become kernel arguments, DEFINE_VARs n0, n1, ... one per
distinct value (and least value), so the same computation on arrays of other sizes is the same graph
too and reuses the compiled kernel, where its sizes are equal in the same places. Every decision
taken on a size's value (an axis of length 1 has no loop, an offset of 0 is no addition, how a
reshape groups its axes) shows in the graph. Decisions about buffers
(`redundant_reductions`, `repeated_reductions`, `recomputed_values`) still count the concrete trips.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from lazyarr import dtypes
from lazyarr.compiler.patterns import PatternMatcher, UPat, graph_rewrite, substitute
from lazyarr.compiler.uop import GroupOp, Ops, UOp, is_size_var, op_cost, size_var_index
from lazyarr.ops import source_index

P = UPat
TRUE = UOp.const(dtypes.bool_, True)
Size = "int | UOp"   # a length or offset in index arithmetic: a number, or a shape-generic kernel's argument


@functools.lru_cache(maxsize=4096)
def idx_const(v: int) -> UOp:
    return UOp.const(dtypes.index, v)


def as_index(v: int | UOp) -> UOp:
    return v if isinstance(v, UOp) else idx_const(v)


@dataclass
class RangeifyContext:
    buffers: list[Any] = field(default_factory=list)
    globals: dict[int, UOp] = field(default_factory=dict)
    next_range: int = 0
    reduce_origin: dict[UOp, UOp] = field(default_factory=dict)   # a REDUCE's first range → its REDUCE_AXIS
    # each range → the loops around it (the output loops before it; a reduction's: those around the
    # reduction), and the elementwise values evaluated inside loops they do not depend on, with
    # (how often they run, how many values they have)
    enclosing: dict[UOp, frozenset[UOp]] = field(default_factory=dict)
    recomputed: dict[UOp, tuple[int, int]] = field(default_factory=dict)
    # each REDUCE_AXIS → how often its body runs at each indexing the kernel evaluates it at
    reduce_runs: dict[UOp, list[int]] = field(default_factory=dict)
    generic_limit: int = 0                                    # sizes up to this become arguments (0: none)
    sizes: list[int] = field(default_factory=list)            # the size arguments' values, in order
    # (value, least) → its argument: uses of equal sizes share one, so that index expressions
    # reached along many paths (diff(x, n=12) reads x at 13 offsets along 4096 paths) stay one
    size_vars: dict[tuple[int, int], UOp] = field(default_factory=dict)
    trips: dict[UOp, int] = field(default_factory=dict)       # range → how many times its loop runs
    # the schedule's scalars (tensor-level DEFINE_VARs) the kernel reads, in argument order, and
    # each one's argument (DEFINE_VAR "s0", "s1", ...)
    scalars: list[UOp] = field(default_factory=list)
    scalar_args: dict[UOp, UOp] = field(default_factory=dict)

    def size(self, n: int, least: int = 2) -> Size:
        """n in index arithmetic: in a shape-generic kernel an argument of its own (when n lies in
        [least, generic_limit]: lengths from 2, offsets from 1; a length of 1 means no loop), else n."""
        if not least <= n <= self.generic_limit:
            return n
        var = self.size_vars.get((n, least))
        if var is None:
            self.sizes.append(n)
            var = self.size_vars[(n, least)] = UOp(Ops.DEFINE_VAR, dtypes.index, (), (f"n{len(self.sizes) - 1}", least,
                                                                                     self.generic_limit))
        return var

    @functools.cached_property
    def index_arith(self) -> _NodeIndex:
        """How index expressions pass through movement ops in this kernel (its size arguments)."""
        return _NodeIndex(self.size, self.offset)

    def offset(self, n: int) -> Size:
        return self.size(n, 1)

    def trip_count(self, loops: frozenset[UOp]) -> int:
        """How often the body of `loops` runs."""
        return math.prod(self.trips[r] for r in loops)

    def around(self, ix: UOp) -> tuple[frozenset[UOp], frozenset[UOp]]:
        """The ranges the value INDEX `ix` asks for depends on, and the loops it runs inside."""
        deps = frozenset().union(*(i.ranges for i in ix.src[1:]))
        return deps, deps.union(*(self.enclosing.get(d, frozenset()) for d in deps))

    def scalar_for(self, var: UOp) -> UOp:
        """The kernel's argument holding the schedule's scalar `var` (numbered in the kernel's own
        order, so that the kernel does not depend on the rest of the schedule)."""
        arg = self.scalar_args.get(var)
        if arg is None:
            d = var.dtype
            lo, hi = (-math.inf, math.inf) if d.is_float else (dtypes.min_value(d), dtypes.max_value(d))
            arg = self.scalar_args[var] = UOp(Ops.DEFINE_VAR, var.dtype, (), (f"s{len(self.scalars)}", lo, hi))
            self.scalars.append(var)
        return arg

    def global_for(self, buf: Any) -> UOp:
        if id(buf) not in self.globals:
            self.globals[id(buf)] = UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(buf.dtype), (), len(self.buffers))
            self.buffers.append(buf)
        return self.globals[id(buf)]

    def new_range(self, size: int) -> UOp:
        self.next_range += 1
        r = UOp(Ops.RANGE, dtypes.index, (as_index(self.size(size)),), self.next_range - 1)
        self.trips[r] = size
        return r


def index(x: UOp, idxs: Sequence[UOp], gate: UOp = TRUE) -> UOp:
    """The value of tensor node `x` at `idxs` (one per axis), loads guarded by `gate`."""
    assert len(idxs) == len(x.shape), (x.op, x.shape, len(idxs))
    return UOp(Ops.INDEX, x.dtype, (x, *idxs, gate))


def _same(n: int) -> Size:
    return n


def _is_one(v: Size) -> bool:
    return isinstance(v, int) and v == 1


def _mul(a: Size | UOp, b: Size) -> Size | UOp:
    """a·b without a factor of 1 (the index arithmetic stays as short as with sizes in the code)."""
    return b if _is_one(a) else a if _is_one(b) else a * b


def linear_index(idxs: Sequence[UOp], shape: Sequence[int], size: Callable[[int], Size] = _same) -> UOp:
    """Σ idx_i · stride_i for a row-major array of `shape` (`size`: how a length appears)."""
    out, stride = idx_const(0), 1
    for i, s in reversed(list(zip(idxs, shape))):
        if s != 1:
            out = out + _mul(i, stride)
            stride = _mul(stride, size(s))
    return out


def reshape_groups(old: Sequence[int], new: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Runs of axes of `old` and `new` whose lengths multiply to the same number, in order."""
    groups, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        oa, na, po, pn = [], [], 1, 1
        if i < len(old):
            po, i = old[i], i + 1
            oa.append(i - 1)
        if j < len(new):
            pn, j = new[j], j + 1
            na.append(j - 1)
        while po != pn:
            if po < pn and i < len(old):
                po, i = po * old[i], i + 1
                oa.append(i - 1)
            elif j < len(new):
                pn, j = pn * new[j], j + 1
                na.append(j - 1)
            else:
                oa += list(range(i, len(old)))
                i = len(old)
                break
        groups.append((oa, na))
    return groups


def map_reshape(old: tuple[int, ...], new: tuple[int, ...], idxs: Sequence[UOp],
                size: Callable[[int], Size] = _same) -> list[UOp]:
    if math.prod(old) == 0:
        return [idx_const(0)] * len(old)
    out: list[UOp] = [idx_const(0)] * len(old)
    for oa, na in reshape_groups(old, new):
        if len(oa) == 1 and len(na) == 1:
            out[oa[0]] = idxs[na[0]]
            continue
        flat = linear_index([idxs[a] for a in na], [new[a] for a in na], size)
        stride: Size = 1
        for a in reversed(oa):
            if old[a] == 1:
                out[a] = idx_const(0)
                continue
            part = flat if _is_one(stride) else flat // stride
            # the group's first axis needs no remainder: flat < the product of the group's lengths
            out[a] = part if a == oa[0] else part % size(old[a])
            stride = _mul(stride, size(old[a]))
    return out


class _NodeIndex:
    """`source_index`'s arithmetic on index nodes; lengths and offsets through `size`/`offset`
    (a shape-generic kernel's size arguments)."""
    zero = idx_const(0)

    def __init__(self, size: Callable[[int], Size], offset: Callable[[int], Size]):
        self.size, self.offset = size, offset

    def reshape(self, src_shape: tuple[int, ...], shape: tuple[int, ...], idxs: list[UOp]) -> list[UOp]:
        return map_reshape(src_shape, shape, idxs, self.size)

    @staticmethod
    def within(i: UOp, start: Size, end: Size) -> UOp:
        return as_index(start).le(i) & i.lt(end)

    @staticmethod
    def both(a: UOp, b: UOp) -> UOp:
        return a & b


_FIXED_SIZES = _NodeIndex(_same, _same)


def push_movement(ix: UOp, mv: UOp, ctx: RangeifyContext | None = None) -> UOp:
    x, gate = mv.src[0], ix.src[-1]
    new, valid = source_index(mv, list(ix.src[1:-1]), _FIXED_SIZES if ctx is None else ctx.index_arith)
    if valid is None:
        return index(x, new, gate)
    return valid.where(index(x, new, gate & valid), UOp.const(x.dtype, 0))


def push_reduce(ctx: RangeifyContext, ix: UOp, red: UOp) -> UOp:
    x, idxs, gate = red.src[0], list(ix.src[1:-1]), ix.src[-1]
    op, axes = red.arg
    ranges = []
    for a in axes:
        if x.shape[a] != 1:
            idxs[a] = ctx.new_range(x.shape[a])
            ranges.append(idxs[a])
        else:
            idxs[a] = idx_const(0)
    inner = index(x, idxs, gate)
    if not ranges:
        return inner
    around = ctx.around(ix)[1]
    for r in ranges:
        ctx.enclosing[r] = around
    ctx.reduce_runs.setdefault(red, []).append(ctx.trip_count(around | frozenset(ranges)))
    # the REDUCE node is rebuilt as its sources are rewritten; its ranges are its own for good
    ctx.reduce_origin[ranges[0]] = red
    return UOp(Ops.REDUCE, red.dtype, (inner, *ranges), op)


def push_elementwise(ctx: RangeifyContext, ix: UOp, u: UOp) -> UOp:
    idxs, gate = ix.src[1:-1], ix.src[-1]
    deps, around = ctx.around(ix)
    if around != deps:   # broadcast along a loop outside one it depends on: computed again and again
        ctx.recomputed[u] = max(ctx.recomputed.get(u, (0, 0)), (ctx.trip_count(around), ctx.trip_count(deps)))
    return u.replace(src=tuple(index(s, idxs, gate) for s in u.src))


def push_gather(ix: UOp, gather: UOp) -> UOp:
    """The value of a gather at idxs: x at the indices the index arrays hold at idxs."""
    idxs, gate = ix.src[1:-1], ix.src[-1]
    picked = [UOp(Ops.CAST, dtypes.index, (index(i, idxs, gate),)) if i.dtype is not dtypes.index
              else index(i, idxs, gate) for i in gather.src[1:]]
    return index(gather.src[0], picked, gate)


def load_buffer(ctx: RangeifyContext, ix: UOp, buf: UOp) -> UOp:
    g = ctx.global_for(buf.arg)
    return UOp(Ops.LOAD, buf.dtype, (UOp(Ops.INDEX, g.dtype, (g, ix.src[1], ix.src[-1])),))


pm_rangeify = PatternMatcher([
    (P(Ops.INDEX, src=(P(GroupOp.Movement, name="mv"),), allow_any_len=True, name="ix"), push_movement),
    (P(Ops.INDEX, src=(P(Ops.REDUCE_AXIS, name="red"),), allow_any_len=True, name="ix"), push_reduce),
    (P(Ops.INDEX, src=(P(GroupOp.Elementwise, name="u"),), allow_any_len=True, name="ix"), push_elementwise),
    (P(Ops.INDEX, src=(P((Ops.DETACH, Ops.NOOP), name="d"),), allow_any_len=True, name="ix"),
     lambda ix, d: index(d.src[0], ix.src[1:-1], ix.src[-1])),
    (P(Ops.INDEX, src=(P(Ops.GATHER, name="gather"),), allow_any_len=True, name="ix"), push_gather),
    (P(Ops.INDEX, src=(P(Ops.CONST, name="c"),), allow_any_len=True), lambda c: c),
    (P(Ops.INDEX, src=(P(Ops.DEFINE_VAR, name="v"),), allow_any_len=True),   # a schedule's scalar: an argument
     lambda ctx, v: ctx.scalar_for(v) if v.arg[0] == "scalar" else None),
    (P(Ops.INDEX, src=(P(Ops.IOTA),), allow_any_len=True, name="ix"), lambda ix: ix.src[1]),
    (P(Ops.INDEX, src=(P(Ops.BUFFER, name="buf"),), allow_any_len=True, name="ix"), load_buffer),
])


def rangeify(out: Any, value: UOp) -> tuple[UOp, list[Any]]:
    """The kernel graph that stores `value` into buffer `out`, and the buffers it takes in argument
    order (the output first)."""
    return rangeify_kernel(out, value)[:2]


def rangeify_kernel(out: Any, value: UOp, parallel_loops: int = 0, generic_limit: int = 0,
                    more: Sequence[tuple[Any, UOp]] = ()
                    ) -> tuple[UOp, list[Any], list[UOp], tuple[int, ...], tuple[int, ...]]:
    """`rangeify`, the reductions and values the kernel would compute redundantly, the values of
    its size arguments (sizes from 2 to `generic_limit` become arguments: a shape-generic kernel),
    and which of the schedule's scalars its scalar arguments are (`uop.scalar_var`'s k, in order).
    `more`: further (buffer, value) outputs of value's shape, stored in the same loops (a kernel of
    several outputs; its outputs are its first arguments)."""
    ctx = RangeifyContext(generic_limit=generic_limit)
    outputs = [(ctx.global_for(b), v) for b, v in ((out, value), *more)]
    ranges = [ctx.new_range(s) if s != 1 else idx_const(0) for s in value.shape]
    at = linear_index(ranges, value.shape, ctx.size)
    stores = [UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, g.dtype, (g, at, TRUE)), index(v, ranges)))
              for g, v in outputs]
    store = stores[0] if len(stores) == 1 else UOp(Ops.NOOP, dtypes.void, tuple(stores))
    loops = [r for r in ranges if r.op is Ops.RANGE]
    ctx.enclosing.update((r, frozenset(loops[:i])) for i, r in enumerate(loops))
    root = UOp(Ops.END, dtypes.void, (store, *loops)) if loops else store
    sink = graph_rewrite(UOp(Ops.SINK, dtypes.void, (root,)), pm_rangeify, ctx, bottom_up=False)
    # values inside a redundant reduction are judged again once it has a buffer of its own
    redundant = redundant_reductions(sink, loops, ctx.reduce_origin, ctx.trip_count, parallel_loops)
    # the SINK counts the kernel's buffers, sizes and scalars: a launch passes them all, though codegen
    # may drop a load
    redundant = redundant or repeated_reductions(ctx.reduce_runs) or recomputed_values(ctx.recomputed)
    return (sink.replace(arg=(len(ctx.buffers), len(ctx.sizes), len(ctx.scalars))), ctx.buffers, redundant,
            tuple(ctx.sizes), tuple(v.arg[1] for v in ctx.scalars))


def bind_sizes(sink: UOp, sizes: Sequence[int]) -> UOp:
    """A shape-generic kernel with its size arguments replaced by `sizes`: the kernel for those
    sizes alone, which takes no size arguments."""
    bound = substitute(sink, {u: idx_const(sizes[size_var_index(u)]) for u in sink.toposort() if is_size_var(u)})
    return bound.replace(arg=(sink.arg[0], 0, *sink.arg[2:3])) if bound.op is Ops.SINK and sink.arg else bound


def redundant_reductions(sink: UOp, out_loops: list[UOp], origin: dict[UOp, UOp],
                         trip_count: Callable[[frozenset[UOp]], int], parallel_loops: int = 0) -> list[UOp]:
    """The reductions (as their REDUCE_AXIS nodes) that this kernel would evaluate more often than
    they have outputs. A reduction runs inside the loops of the ranges it depends on (the
    linearizer hoists it out of any other), and inside every loop that encloses those; it is
    redundant when one of those enclosing loops is not one it depends on: a reduction broadcast
    along an outer axis. A reduction broadcast only along inner axes (a row's max or sum used by
    every element of the row, as softmax and layer norm do) is evaluated once per row and stays
    fused. On a device that spreads the first `parallel_loops` output loops over work-items, each
    work-item runs everything outside the innermost of them: a reduction that does not depend on
    all of them is redundant too."""
    enclosing: dict[UOp, frozenset[UOp]] = {r: frozenset(out_loops[:i]) for i, r in enumerate(out_loops)}
    if parallel_loops:   # every work-item is "inside" all the parallel loops
        enclosing[None] = frozenset(out_loops[:parallel_loops])
    redundant = []
    for red in reversed(sink.toposort()):   # users first: an outer reduction before the ones it reads
        if red.op is not Ops.REDUCE:
            continue
        deps = red.ranges
        around = deps.union(*(enclosing.get(d, frozenset()) for d in deps), enclosing.get(None, frozenset()))
        # realizing it pays only when it has fewer outputs than the loops around it run (a sum of a
        # constant depends on no loop, yet computed on its own it would still run once per output)
        if around - deps and red.src[1] in origin and origin[red.src[1]].size < trip_count(around):
            redundant.append(origin[red.src[1]])
        for r in red.src[1:]:
            enclosing[r] = around
    return redundant


RECOMPUTE_COST = 16        # operations a value must cost per element to be worth a buffer of its own...
RECOMPUTE_WORK = 1 << 14   # ...and operations its repeated evaluations must waste (a launch costs as much)


def _cost(u: UOp) -> int:
    """The ALU operations evaluating tensor node u costs per element inside its kernel (up to buffers
    and reductions; each op as its `op_cost`)."""
    return sum(op_cost(n.op) for n in u.toposort(lambda x: x.op is Ops.REDUCE_AXIS) if n.op in GroupOp.ALU)


def repeated_reductions(reduce_runs: dict[UOp, list[int]]) -> list[UOp]:
    """The reductions that the kernel evaluates at several indexings (a matmul's result read by a
    row's max and by every element of the row: the logits of a softmax cross-entropy), wasting
    enough work that a buffer of their own pays. Only the outermost of nested ones are named."""
    repeated = [red for red, runs in reduce_runs.items() if sum(runs) - max(runs) >= RECOMPUTE_WORK]
    inner = {n for u in repeated for n in u.toposort()[:-1]}
    return [u for u in repeated if u not in inner]


def recomputed_values(recomputed: dict[UOp, tuple[int, int]]) -> list[UOp]:
    """The elementwise values that the kernel would evaluate again and again: broadcast along a loop
    outside one they depend on (a softmax's gradient broadcast along the other operand's axis of the
    matmul it feeds), costly enough that a buffer of their own pays. Only the outermost of nested
    such values are named."""
    costly = {u: c for u, (runs, values) in recomputed.items()
              if (c := _cost(u)) >= RECOMPUTE_COST and (runs - values) * c >= RECOMPUTE_WORK}
    inner = {n for u in costly for n in u.toposort(lambda x: x.op is Ops.REDUCE_AXIS) if n is not u}
    return [u for u in costly if u not in inner]
