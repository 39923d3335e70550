"""Kernel optimisation: explicit actions on a kernel's ranges, chosen per kernel by a heuristic.

A rangeified kernel (one STORE of a value into its output under the END of the output's RANGEs,
with REDUCEs over reduction RANGEs inside the value) has *axes*: its output ranges, outermost
first, then the reduction ranges in the order they first appear. An action (`Opt`) names an
axis by that position:
- VECTOR(axis, w): the innermost w consecutive values of the axis become the w lanes of SIMD
  values (vector dtypes): a load whose address steps by one along the axis is one vector load,
  a value that does not depend on the axis is broadcast, arithmetic the renderer has on vectors
  (`renderer.vector_ops`) works lane by lane, anything else is computed per lane and gathered.
  On a reduction axis the accumulator is a vector, summed (maxed, ...) across its lanes after
  the loop. Only float values are vectorised.
- UPCAST(axis, n): the next n consecutive values (above any VECTOR lanes) are unrolled into
  registers: everything that depends on the axis is computed n times with the index a constant,
  and what does not is computed once and reused (matmul's register tile). On a reduction axis
  (UNROLL) the reduction keeps n accumulators, combined after the loop.
- TILE(axis, b): cache blocking: the axis runs in blocks of b (a multiple of its UPCAST·VECTOR
  amount), and the loop over blocks moves outside every other output loop, so that the data
  one block reads stays in cache while the other loops sweep over it.
- EPILOGUE: a kernel that stores f(REDUCE) where f has ops the renderer lacks on vectors
  (matmul then tanh) stores the REDUCE's value first, from its register tile, and applies f in a
  loop nest of its own that reads it back (gcc vectorises that loop).
- SHARE: a kernel whose store computes e(i) and sums e(j) along a reduced axis of the same
  length (softmax: exp(x - max)) computes e once: a loop inside the outer output loops stores
  e(j) into the output, and the sum and the store read it back.
- GROUP(axis, g): the reductions over a reduction axis are shared by the g work-items of a
  work-group, combined through work-group memory (`lazyarr.compiler.group`); only for targets
  whose `group_reduce` is set (OpenCL), and on its own. Such targets take no other action
  but UPCAST without VECTOR (matmul's register tile, `group.register_tile`).
An elementwise kernel that takes none of these but compares output indices with constants (a
join's pieces, a pad's border, a written slice) becomes one loop nest per interval between those
constants (`split_at_thresholds`), where each comparison is a constant.
EPILOGUE and SHARE write the output before the kernel is done reading its inputs, so neither is
applied when an input could lend the output its storage (`may_share_output`).
The outermost output loop is the one the renderer splits across threads (`#pragma omp parallel
for`, `settings.threads`), when the kernel does enough work.

Sizes that the amounts do not divide are not padded: each axis is cut into a part that takes
every action, then parts that take fewer (the TILE dropped, then the UPCAST, then the VECTOR),
then a scalar rest. A kernel becomes one loop nest per combination of output parts (several
STOREs under one SINK); a reduction becomes one REDUCE per part of its axes, combined by its op.
Floating-point sums change order (lanes and accumulators are summed after the loop); each
accumulator's loop is then cut into blocks whose sums are added with compensation
(`lazyarr.compiler.lower_reduce`), so that results are as accurate as NumPy's pairwise sums;
MAX/MIN keep their NaN semantics (lanes propagate NaN like scalars).

`heuristic(kernel, target)` picks the actions (see its docstring), `optimize(sink, target)`
applies them; `apply_opts(sink, opts, target)` applies given ones (the search in
`lazyarr.compiler.search` times variants). Kernels of another shape (several stores, gated
stores, sizes that are not constants, vector dtypes already) are returned unchanged.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable

from lazyarr import dtypes
from lazyarr.compiler.group import apply_group, group_heuristic, group_inapplicable, register_tile
from lazyarr.compiler.kernel_axes import Kernel, Opt, OptTarget, analyse, stride
from lazyarr.compiler.patterns import substitute
from lazyarr.compiler.symbolic import simplify
from lazyarr.compiler.uop import GroupOp, Ops, UOp, op_cost

REDUCE_OPS_ON_VECTORS = frozenset({Ops.ADD, Ops.MUL, Ops.MAX, Ops.MIN})


# ---- applying actions -----------------------------------------------------------------------

@dataclass
class AxisPlan:
    """The amounts an axis takes: lanes (VECTOR), unrolled copies (UPCAST), block (TILE)."""
    vector: int = 1
    upcast: int = 1
    tile: int = 0

    def levels(self) -> list[tuple[int, AxisPlan]]:
        """(chunk, plan) from every action down to none: a part whose length the chunk divides
        takes that plan."""
        out = []
        if self.tile:
            out.append((self.tile, self))
        if self.upcast > 1:
            out.append((self.vector * self.upcast, AxisPlan(self.vector, self.upcast)))
        if self.vector > 1:
            out.append((self.vector, AxisPlan(self.vector)))
        return out + [(1, AxisPlan())]


def parts(length: int, plan: AxisPlan) -> list[tuple[int, int, AxisPlan]]:
    """(start, length, plan) covering [0, length): the largest part that every action divides,
    then what is left with fewer actions."""
    out, start = [], 0
    for chunk, p in plan.levels():
        n = (length - start) // chunk * chunk
        if n:
            out.append((start, n, p))
            start += n
    return out


@dataclass
class Builder:
    """Builds one loop nest per part of the output axes, with the parts' ranges and the special
    ranges (unrolled copies and vector lanes) that `Expander` then replaces."""
    kernel: Kernel
    plans: dict[UOp, AxisPlan]
    tile_order: list[UOp]
    next_range: int
    unroll: dict[UOp, int] = field(default_factory=dict)
    lanes: dict[UOp, int] = field(default_factory=dict)

    def new_range(self, size: int) -> UOp:
        self.next_range += 1
        return UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, size),), self.next_range - 1)

    def split(self, start: int, length: int, plan: AxisPlan) -> tuple[UOp, list[UOp], UOp | None]:
        """The index start + tile·b + loop·(u·w) + copy·w + lane, its loops (tile, loop) and the
        tile loop alone."""
        idx, loops, tile = UOp.const(dtypes.index, start), [], None
        inner = plan.vector * plan.upcast
        if plan.tile:
            tile = self.new_range(length // plan.tile)
            idx, length = idx + tile * plan.tile, plan.tile
        if length // inner > 1:
            loop = self.new_range(length // inner)
            loops.append(loop)
            idx = idx + loop * inner
        if plan.upcast > 1:
            copy = self.new_range(plan.upcast)
            self.unroll[copy] = plan.upcast
            idx = idx + copy * plan.vector
        if plan.vector > 1:
            lane = self.new_range(plan.vector)
            self.lanes[lane] = plan.vector
            idx = idx + lane
        return idx, loops, tile

    def rebuild(self, value: UOp, mapping: dict[UOp, UOp]) -> UOp:
        """`value` with output ranges replaced by `mapping` and each REDUCE cut into parts."""
        done: dict[UOp, UOp] = {}
        for u in value.toposort():
            if u in mapping:
                done[u] = mapping[u]
                continue
            if u.op is Ops.RANGE and u in self.kernel.inner_loops:   # each nest has loops of its own
                done[u] = self.new_range(u.src[0].arg)
                continue
            src = tuple(done[s] for s in u.src)
            if u.op is not Ops.REDUCE:
                done[u] = u if src == u.src else u.replace(src=src)
                continue
            pieces = []
            for combo in itertools.product(*(parts(r.src[0].arg, self.plans.get(r, AxisPlan())) for r in u.src[1:])):
                sub, ranges = {}, []
                for r, (start, length, plan) in zip(u.src[1:], combo):
                    idx, loops, _ = self.split(start, length, AxisPlan(plan.vector, plan.upcast))
                    sub[r] = idx
                    ranges += loops + [x for x in idx.toposort() if x in self.unroll or x in self.lanes]
                v = substitute(src[0], sub)
                pieces.append(UOp(Ops.REDUCE, u.dtype, (v, *ranges), u.arg) if ranges else v)
            done[u] = combine(u.arg, pieces)
        return done[value]

    def nests(self) -> list[tuple[UOp, list[UOp]]]:
        """(store, loops outermost first) for each part of the output axes."""
        out = []
        store = self.kernel.store
        ranges = self.kernel.out_ranges
        for combo in itertools.product(*(parts(r.src[0].arg, self.plans.get(r, AxisPlan())) for r in ranges)):
            mapping, loops, tiles = {}, [], {}
            for r, (start, length, plan) in zip(ranges, combo):
                mapping[r], own, tile = self.split(start, length, plan)
                loops += own
                if tile is not None:
                    tiles[r] = tile
            loops = [tiles[r] for r in self.tile_order if r in tiles] + loops
            out.append((self.rebuild(store, mapping), loops))
        return out


def combine(op: Ops, values: list[UOp]) -> UOp:
    """op over `values` as a balanced tree."""
    while len(values) > 1:
        values = [UOp(op, values[i].dtype, (values[i], values[i + 1])) if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


class Expander:
    """Replaces the special ranges: an unrolled copy's range by each of its values, a lane range
    by vector dtypes. `ex(u, env)`: u with the copies in env fixed; a lane range in env is fixed
    to a constant too (a per-lane value), or to None (left as a variable, for address analysis)."""

    def __init__(self, unroll: dict[UOp, int], lanes: dict[UOp, int], vector_ops: frozenset):
        self.unroll, self.lanes, self.vector_ops = unroll, lanes, vector_ops
        self.special = frozenset(unroll) | frozenset(lanes)
        self.memo: dict[tuple, UOp] = {}
        self.under: dict[UOp, bool] = {}
        self.bases: dict[tuple[UOp, UOp], UOp | None] = {}

    def open_lane(self, u: UOp, env: dict[UOp, int | None]) -> UOp | None:
        open_ = [r for r in u.ranges if r in self.lanes and r not in env]
        assert len(open_) <= 1, "a value depends on two vector axes"
        return open_[0] if open_ else None

    def touches(self, u: UOp) -> bool:
        """Whether a special range is anywhere under u (open, or closed by a REDUCE under it)."""
        if u not in self.under:
            for x in u.toposort(lambda y: y in self.under):
                if x not in self.under:
                    self.under[x] = x in self.special or any(self.under[s] for s in x.src)
        return self.under[u]

    def ex(self, u: UOp, env: dict[UOp, int | None]) -> UOp:
        if not self.touches(u):
            return u
        deps = u.ranges & self.special
        key = (u, tuple(sorted(((r.arg, env[r]) for r in deps if r in env), key=lambda x: x[0])))
        if key in self.memo:
            return self.memo[key]
        lane = self.open_lane(u, env)
        if u.op is Ops.RANGE:
            assert u in env or u in self.lanes, "an unrolled range without a value"
            if u not in env:
                out = self.per_lane(u, env, lane)
            else:
                out = u if env[u] is None else UOp.const(dtypes.index, env[u])
        elif u.op is Ops.REDUCE:
            out = self.reduce(u, env)
        elif u.op is Ops.STORE:
            out = self.store(u, env, lane)
        elif lane is None:
            out = u.replace(src=tuple(self.ex(s, env) for s in u.src))
        elif u.op is Ops.LOAD:
            out = self.load(u, env, lane)
        elif u.op in self.vector_ops and u.dtype.is_float:
            w = self.lanes[lane]
            src = [self.ex(s, env) for s in u.src]
            out = UOp(u.op, u.dtype.vec(w), tuple(s if s.dtype.count > 1 else broadcast(s, w) for s in src), u.arg)
        else:
            out = self.per_lane(u, env, lane)
        self.memo[key] = out
        return out

    def per_lane(self, u: UOp, env: dict, lane: UOp) -> UOp:
        w = self.lanes[lane]
        return UOp(Ops.VECTORIZE, u.dtype.vec(w), tuple(self.ex(u, {**env, lane: i}) for i in range(w)))

    def contiguous_base(self, idx: UOp, env: dict, lane: UOp) -> UOp | None:
        """The address of lane 0 when the address steps by one per lane, else None. The address is
        analysed once, with the special ranges as variables: lane must be a term of its own."""
        if (idx, lane) not in self.bases:
            free = simplify(idx)
            terms, stack = [], [free]
            while stack:
                t = stack.pop()
                if t.op is Ops.ADD:
                    stack += t.src
                else:
                    terms.append(t)
            ok = sum(t is lane for t in terms) == 1 and not any(lane in t.ranges for t in terms if t is not lane)
            self.bases[(idx, lane)] = substitute(free, {lane: UOp.const(dtypes.index, 0)}) if ok else None
        base = self.bases[(idx, lane)]
        return None if base is None else self.ex(base, env)

    def load(self, u: UOp, env: dict, lane: UOp) -> UOp:
        ix = u.src[0]
        if u.dtype.is_float and not (ix.src[-1].ranges & self.special) and ix.src[-1].is_const(True):
            base = self.contiguous_base(ix.src[1], env, lane)
            if base is not None:
                pointer = self.ex(ix.src[0], env)   # a buffer, or a buffer after a loop that stored into it
                return UOp(Ops.LOAD, u.dtype.vec(self.lanes[lane]), (ix.replace(src=(pointer, base, ix.src[-1])),))
        return self.per_lane(u, env, lane)

    def store(self, st: UOp, env: dict, lane: UOp | None) -> UOp:
        ix, value = st.src
        if lane is None:
            return st.replace(src=(self.ex(ix, env), self.ex(value, env)))
        w = self.lanes[lane]
        base = self.contiguous_base(ix.src[1], env, lane) if ix.src[-1].is_const(True) else None
        if base is not None and value.dtype.is_float:
            v = self.ex(value, env)
            v = v if v.dtype.count > 1 else broadcast(v, w)
            return st.replace(src=(ix.replace(src=(self.ex(ix.src[0], env), base, ix.src[-1])), v))
        if value.dtype.is_float:   # a strided store (a transposed output): the vector computed once, stored lane by lane
            v = self.ex(value, env)
            return group([st.replace(src=(self.ex(ix, {**env, lane: i}),
                                          UOp(Ops.GEP, v.dtype.scalar, (v,), (i,)) if v.dtype.count > 1 else v))
                          for i in range(w)])
        return group([self.ex(st, {**env, lane: i}) for i in range(w)])

    def reduce(self, red: UOp, env: dict) -> UOp:
        value, ranges, op = red.src[0], red.src[1:], red.arg
        loops = [r for r in ranges if r not in self.special]
        copies = [r for r in ranges if r in self.unroll]
        lanes = [r for r in ranges if r in self.lanes]
        pieces = []
        for values in itertools.product(*(range(self.unroll[r]) for r in copies)):
            v = self.ex(value, {**env, **dict(zip(copies, values))})
            if lanes and v.dtype.count == 1:
                v = broadcast(v, self.lanes[lanes[0]])
            pieces.append(UOp(Ops.REDUCE, v.dtype, (v, *loops), op) if loops else v)
        out = combine(op, pieces)
        if lanes:
            out = combine(op, [UOp(Ops.GEP, out.dtype.scalar, (out,), (i,)) for i in range(out.dtype.count)])
        return out


def broadcast(x: UOp, w: int) -> UOp:
    return UOp(Ops.VECTORIZE, x.dtype.vec(w), (x,) * w)


def group(stores: list[UOp]) -> UOp:
    flat = [s for x in stores for s in (x.src if x.op is Ops.NOOP else (x,))]
    return flat[0] if len(flat) == 1 else UOp(Ops.NOOP, dtypes.void, tuple(flat))


def may_share_output(k: Kernel) -> bool:
    """Whether some input is read only where the output is written, so that the executor may give
    the output that input's storage (`lazyarr.runtime.items.inplace_args`): a kernel that writes the output
    before it has read all of that input must not be built then."""
    store_idx = k.store.src[0].src[1]
    reads: dict[int, set] = {}
    for u in k.sink.toposort():
        if u.op is Ops.LOAD and u.src[0].src[0].op is Ops.DEFINE_GLOBAL:
            ix = u.src[0]
            reads.setdefault(ix.src[0].arg, set()).add((ix.src[1], ix.src[-1].is_const(True)))
    return any(arg != 0 and r == {(store_idx, True)} for arg, r in reads.items())


def split_epilogue(k: Kernel) -> tuple[UOp, Callable[[UOp], UOp]] | None:
    """For a kernel that stores f(REDUCE) into an output of the REDUCE's dtype: the kernel storing
    the REDUCE itself, and a function that, given that kernel optimised, returns the whole
    kernel: it, then a loop nest over the output that reads each stored value back and stores f
    of it. None for other kernels, and for kernels whose output may take an input's storage
    (f would read that input after the REDUCE overwrote it)."""
    if may_share_output(k):
        return None
    ix, value = k.store.src
    red = [u for u in value.toposort() if u.op is Ops.REDUCE]
    if len(red) != 1 or red[0] is value or red[0].dtype is not value.dtype or red[0].ranges != frozenset(k.out_ranges):
        return None
    first = UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (k.store.replace(src=(ix, red[0])), *k.out_ranges)),))
    def whole(optimised: UOp) -> UOp:
        next_range = max(u.arg for u in optimised.toposort() if u.op is Ops.RANGE) + 1
        fresh = {r: r.replace(arg=next_range + i) for i, r in enumerate(k.out_ranges)}
        done = UOp(Ops.AFTER, ix.src[0].dtype, (ix.src[0], *optimised.src))
        stored = UOp(Ops.LOAD, red[0].dtype, (ix.replace(src=(done, *ix.src[1:])),))
        second = substitute(k.store.replace(src=(ix, substitute(value, {red[0]: stored}))), fresh)
        return UOp(Ops.SINK, dtypes.void, (*optimised.src, UOp(Ops.END, dtypes.void, (second, *fresh.values()))))
    return first, whole




def share_reduced_value(k: Kernel) -> UOp | None:
    """SHARE: a kernel whose store computes e(i) at the innermost output index i and sums
    e(j) over a reduction range j of the same length (softmax: exp(x - max) in the sum and
    in the quotient) computes e once: a loop inside the outer output loops stores e(j) into the
    output, the sum reads it back, and the store reads e(i) back too. The kernel graph with
    that loop (an END inside the value), or None when there is no such value, when e is
    cheap (no transcendental function), or when the output may take an input's storage."""
    if not k.out_ranges or may_share_output(k) or k.inner_loops:
        return None
    ix, value = k.store.src
    last = k.out_ranges[-1]
    nodes = set(value.toposort())
    for red in k.reduces:
        if red.arg is not Ops.ADD or len(red.src) != 2 or last in red.ranges or red.dtype is not value.dtype:
            continue
        r = red.src[1]
        if r.src[0].arg != last.src[0].arg:
            continue
        shared = substitute(red.src[0], {r: last})
        if shared not in nodes or not any(op_cost(u.op) > 1 for u in shared.toposort()):
            continue
        number = max(x.arg for x in k.axes) + 1
        loop = r.replace(arg=number)
        first = UOp(Ops.END, dtypes.void, (k.store.replace(src=(ix.replace(src=(ix.src[0], substitute(ix.src[1], {last: loop}),
                                                                                  ix.src[-1])),
                                                                  substitute(shared, {last: loop}))), loop))
        stored = UOp(Ops.AFTER, ix.src[0].dtype, (ix.src[0], first))

        def read(at: UOp) -> UOp:
            return UOp(Ops.LOAD, value.dtype, (ix.replace(src=(stored, substitute(ix.src[1], {last: at}), ix.src[-1])),))
        new_value = substitute(value, {red: red.replace(src=(read(r), r)), shared: read(last)})
        return UOp(Ops.SINK, dtypes.void, (k.sink.src[0].replace(src=(k.store.replace(src=(ix, new_value)),
                                                                      *k.sink.src[0].src[1:])),))
    return None


def inapplicable(sink: UOp, opts: list[Opt]) -> str | None:
    """Why the kernel cannot take the actions `opts` (None: it can; a kernel of another shape
    takes none, and is left unchanged)."""
    k = analyse(sink)
    if k is None or not opts:
        return None
    if any(o.action == "group" for o in opts):
        return group_inapplicable(k, opts) if all(o.action == "group" for o in opts) else \
            f"{opts}: GROUP goes with no other action"
    if any(o.action == "share" for o in opts):
        shared = share_reduced_value(k)
        if shared is None:
            return "SHARE needs a kernel whose store recomputes a value that a sum reduces"
        return inapplicable(shared, [o for o in opts if o.action != "share"])
    if k.inner_loops and any(not k.is_reduce(o.axis) for o in opts):
        return "output axes of a kernel with loops of stores inside (SHARE) take no actions"
    if any(o.action == "epilogue" for o in opts):
        split = split_epilogue(k)
        if split is None:
            return "EPILOGUE needs a kernel that stores a function of one reduction"
        return inapplicable(split[0], [o for o in opts if o.action != "epilogue"])
    plans: dict[int, AxisPlan] = {}
    for o in opts:
        if o.action not in ("vector", "upcast", "tile"):
            return f"unknown kernel optimisation {o}"
        if not 0 <= o.axis < len(k.axes) or o.amount < 1:
            return f"{o}: the kernel has {len(k.axes)} axes"
        if o.action == "tile" and k.is_reduce(o.axis):
            return f"{o}: only output axes are tiled"
        setattr(plans.setdefault(o.axis, AxisPlan()), o.action, o.amount)
    for p in plans.values():
        if p.tile and p.tile % (p.vector * p.upcast):
            return f"a tile of {p.tile} is not a multiple of the {p.vector * p.upcast} values unrolled"
    return None


def apply_opts(sink: UOp, opts: list[Opt], target: OptTarget = OptTarget()) -> UOp:
    """The kernel with `opts` applied (see the module docstring). Raises ValueError saying why
    when the kernel cannot take them (`inapplicable`)."""
    reason = inapplicable(sink, opts)
    if reason is not None:
        raise ValueError(reason)
    return _apply(sink, opts, target)


def _apply(sink: UOp, opts: list[Opt], target: OptTarget) -> UOp:
    k = analyse(sink)
    if k is None or not opts:
        return sink
    if any(o.action == "group" for o in opts):
        return apply_group(k, opts)
    if any(o.action == "share" for o in opts):
        return _apply(share_reduced_value(k), [o for o in opts if o.action != "share"], target)
    if any(o.action == "epilogue" for o in opts):
        split = split_epilogue(k)
        return split[1](_apply(split[0], [o for o in opts if o.action != "epilogue"], target))
    plans: dict[UOp, AxisPlan] = {}
    tile_order: list[UOp] = []
    for o in opts:
        r = k.axes[o.axis]
        setattr(plans.setdefault(r, AxisPlan()), o.action, o.amount)
        if o.action == "tile":
            tile_order.append(r)
    builder = Builder(k, plans, tile_order, max(r.arg for r in k.axes + k.inner_loops) + 1)
    nests = builder.nests()
    ex = Expander(builder.unroll, builder.lanes, target.vector_ops)
    roots = []
    for store, loops in nests:
        copies = sorted((r for r in store.ranges if r in ex.unroll), key=lambda r: r.arg)
        body = group([ex.ex(store, dict(zip(copies, values)))
                      for values in itertools.product(*(range(ex.unroll[r]) for r in copies))])
        roots.append(UOp(Ops.END, dtypes.void, (body, *loops)) if loops else body)
    return UOp(Ops.SINK, dtypes.void, tuple(roots))


# ---- the heuristic --------------------------------------------------------------------------

def _value_nodes(root: UOp, r: UOp) -> list[UOp]:
    """The nodes under `root` that depend on range r and compute values (not addresses or gates)."""
    return [u for u in root.toposort() if r in u.ranges and u.dtype is not dtypes.index and u.op not in
            (Ops.INDEX, Ops.RANGE, Ops.END, Ops.SINK, Ops.NOOP) and not (u.dtype.is_bool and u.op in GroupOp.Comparison)]


# ops computed lane by lane (then gathered into a vector) that cost about what the scalar loop pays
# for them: a select (relu's where) should not keep a matmul's loads and sums from vectors
CHEAP_PER_LANE = frozenset({Ops.WHERE})


def vectorizable(root: UOp, r: UOp, target: OptTarget) -> bool:
    """Whether every value under `root` that depends on r is computed on vectors without a costly
    per-lane fallback: float loads, the renderer's vector ops, selects (`CHEAP_PER_LANE`),
    reductions by ADD/MUL/MAX/MIN, stores."""
    for u in _value_nodes(root, r):
        if u.op is Ops.STORE or u.op in CHEAP_PER_LANE:
            continue
        if not u.dtype.is_float or u.dtype.count > 1:
            return False
        if u.op is Ops.LOAD:
            if not u.src[0].src[-1].is_const(True):
                return False
        elif u.op is Ops.REDUCE:
            if u.arg not in REDUCE_OPS_ON_VECTORS:
                return False
        elif u.op not in target.vector_ops:
            return False
    return True


def _loads(u: UOp) -> list[UOp]:
    return [x for x in u.toposort() if x.op is Ops.LOAD]


def _largest_divisor(n: int, options: tuple[int, ...]) -> int:
    """The first of `options` that divides n, else the first that is at most n, else 1."""
    return next((o for o in options if n % o == 0), next((o for o in options if o <= n), 1))


def heuristic(k: Kernel, target: OptTarget) -> list[Opt]:
    """The actions for a kernel, in this order of preference:
    - elementwise kernels (no reduction) get none: gcc vectorises their loop, and the renderer
      splits the outer loop across threads (`optimize` then splits them at index thresholds);
    - a reduction whose output has an axis that a load inside the reduction steps through one
      element at a time (matmul's columns, column sums; preferably one the store steps through
      too: the innermost such axis is taken, and a strided store goes lane by lane) is vectorised along that
      output axis, upcast further along it (4 vectors), and upcast along the output axis on which
      a load inside the reduction does not depend (matmul's rows: each loaded vector of B feeds
      that many accumulators, each broadcast element of A a row of them); the accumulators stay
      within the SIMD registers. When what the reduction reads along the reduced axis for one
      block of columns exceeds half the L2 cache, the columns are tiled so that it fits;
    - otherwise a reduction whose loads step through memory along its innermost reduced axis
      (row sums, row maxima, dot products) is vectorised along that axis with several vector
      accumulators (unroll), and upcast along output axes on which a load does not depend;
    - only values the renderer computes on vectors are vectorised (float loads, + - * / max min,
      sums, products, maxima and minima); other kernels get no actions."""
    if not k.reduces:
        return []
    if target.group_reduce:   # a GPU: reductions shared by work-groups, else matmul's register tile
        return group_heuristic(k, target.group_reduce) or register_tile(k)
    if not k.inner_loops:
        shared = share_reduced_value(k)
        if shared is not None:
            return [Opt("share", 0, 0)] + heuristic(analyse(shared), target)
    opts: list[Opt] = []
    bodies = [red.src[0] for red in k.reduces]
    loads = [ld for b in bodies for ld in _loads(b)]
    out_dtype = k.store.src[1].dtype
    if not out_dtype.is_float:
        return []
    w = target.vector_bytes // out_dtype.itemsize
    root = k.store
    # vectorise an output axis
    for axis in reversed(range(0 if k.inner_loops else len(k.out_ranges))):
        r = k.out_ranges[axis]
        # (a store that does not step by one along it, a transposed output, is written lane by lane:
        # once a tile, after the reduction)
        if k.size(axis) < w or not any(stride(ld.src[0].src[1], r) == 1 for ld in loads):
            continue
        if any(red.arg not in REDUCE_OPS_ON_VECTORS for red in k.reduces if r in red.ranges):
            continue
        if not vectorizable(root, r, target):
            if not all(vectorizable(b, r, target) for b in bodies) or split_epilogue(k) is None:
                continue
            opts.append(Opt("epilogue", 0, 0))
        reuse = [a for a, i in enumerate(k.out_ranges) if a != axis and k.size(a) > 1 and
                 any(i not in ld.ranges for ld in loads) and any(i in ld.ranges for ld in loads)]
        wide = target.tile_vector_bytes // out_dtype.itemsize
        w = wide if k.size(axis) >= wide else w
        opts.append(Opt("vector", axis, w))
        # register tile: rows × vectors accumulators, at most 24 (the rest of the 32 registers hold
        # the row's vectors and a broadcast); 3 vectors where they divide the columns, else 2
        vectors = 1 if k.size(axis) < 2 * w else 3 if (k.size(axis) // w) % 3 == 0 else 2
        if not reuse and k.size(axis) >= 4 * w:
            vectors = 4
        rows = 1
        if reuse:
            n = k.size(reuse[-1])
            rows = next((m for m in (8, 6, 4, 3, 2) if m <= n and m * vectors <= 24), 1)
            if rows > 1:
                opts.append(Opt("upcast", reuse[-1], rows))
        if vectors > 1:
            opts.append(Opt("upcast", axis, vectors))
        if rows > 1:
            # cache blocking: the columns one sweep over the rows reads along the reduced axes fit in L2
            reduced = math.prod(k.size(a) for a in range(len(k.out_ranges), len(k.axes)))
            block = w * vectors
            fit = (target.l2_bytes // 2) // max(1, reduced * out_dtype.itemsize) // block * block
            if 0 < fit and fit * 2 <= k.size(axis) and k.size(axis) // fit >= target.threads:
                opts.append(Opt("tile", axis, fit))
        return opts
    # vectorise the innermost reduced axis of each reduction that steps through memory along it
    chosen: list[UOp] = []
    for red in sorted(k.reduces, key=lambda x: -math.prod(r.src[0].arg for r in x.src[1:])):
        r = red.src[-1]
        axis = k.axes.index(r)
        body_loads = _loads(red.src[0])
        steps = [stride(ld.src[0].src[1], r) for ld in body_loads]
        if red.arg not in REDUCE_OPS_ON_VECTORS or not red.dtype.is_float or k.size(axis) < w or r in chosen or \
                any(s not in (0, 1) for s in steps) or 1 not in steps or not vectorizable(red.src[0], r, target):
            continue
        chosen.append(r)
        opts.append(Opt("vector", axis, w))
        # independent accumulators hide the latency of the sums: first outputs that share loads (a
        # register tile of up to 16), then copies of the reduction up to 4 chains in all (copies are
        # summed across after the loop, which on a short reduction costs more than it hides)
        chains = 1
        if len(chosen) == 1 and not k.inner_loops:
            reuse = [a for a, i in enumerate(k.out_ranges) if k.size(a) > 1 and
                     any(i not in ld.ranges for ld in body_loads) and any(i in ld.ranges for ld in body_loads)]
            for a in reversed(reuse[-2:]):
                n = _largest_divisor(k.size(a), tuple(m for m in (4, 2) if chains * m <= 16))
                if n > 1:
                    opts.append(Opt("upcast", a, n))
                    chains *= n
        unroll = _largest_divisor(k.size(axis) // w, tuple(m for m in (4, 2) if chains * m <= 4)) \
            if k.size(axis) >= 4 * w and chains < 4 else 1
        if unroll > 1:
            opts.append(Opt("upcast", axis, unroll))
    if len(chosen) > 1:   # the reuse upcasts only go with a single vectorised reduction
        opts = [o for o in opts if o.action != "upcast" or k.is_reduce(o.axis)]
    return opts


def optimize(sink: UOp, target: OptTarget | None, opts: list[Opt] | None = None) -> UOp:
    """Kernel optimisation for `target` (None: the kernel unchanged): `opts` if given, else the
    heuristic's."""
    if target is None:
        return sink
    k = analyse(simplify(sink))
    if k is None:
        return sink
    chosen = heuristic(k, target) if opts is None else opts
    if chosen:
        return apply_opts(k.sink, chosen, target)
    split = split_at_thresholds(k) if opts is None and not target.group_reduce else None
    return sink if split is None else split


# at most this many loop nests from split_at_thresholds (a stack of this many pieces)
MAX_SPLIT_NESTS = 16


def split_at_thresholds(k: Kernel) -> UOp | None:
    """An elementwise kernel whose value compares an output index with constants (a join's pieces,
    a pad's border, a written slice: `where(i < 1024, a[i], b[i - 1024])`, loads gated by such
    conditions) as one loop per interval between those constants: in each the comparisons are
    constants, the WHERE keeps one side and the other pieces' loads go, so each loop is a plain
    copy gcc vectorises. An outer axis is cut into loop nests, the innermost into loops inside
    the outer loops (rows stay in order: two passes over half rows read memory less sequentially,
    40% slower for a join of columns). One nest loaded every piece at every index (at a clamped
    address) and selected: concatenating four 1024² float32 blocks took 10 ms, now 0.5 (NumPy's
    two concatenations: 7). Thresholds that are kernel arguments (lifted constants) are not
    cut. None where no output index is compared with a constant inside its range, or the loops
    would exceed MAX_SPLIT_NESTS."""
    if k.reduces or k.inner_loops:
        return None
    nodes = k.store.toposort()
    cuts: dict[UOp, list[int]] = {}
    for r in k.out_ranges:
        n, found = r.src[0].arg, set()
        for u in nodes:
            if u.op is Ops.CMPLT and r in u.src:
                a, b = u.src
                if a is r and b.op is Ops.CONST:
                    found.add(b.arg)        # r < c changes at c
                elif b is r and a.op is Ops.CONST:
                    found.add(a.arg + 1)    # c < r changes at c + 1
        found = sorted(t for t in found if 0 < t < n)
        if found:
            cuts[r] = [0, *found, n]
    if not cuts or math.prod(len(c) - 1 for c in cuts.values()) > MAX_SPLIT_NESTS:
        return None
    last = k.out_ranges[-1]
    outer = [r for r in k.out_ranges[:-1] if r in cuts]
    number = max(r.arg for r in k.axes) + 1

    def loop(size: int) -> UOp:
        nonlocal number
        number += 1
        return UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, size),), number - 1)
    nests = []
    for combo in itertools.product(*(list(zip(cuts[r], cuts[r][1:])) for r in outer)):
        bounds = dict(zip(outer, combo))
        mapping, loops = {}, []
        for r in k.out_ranges[:-1]:
            lo, hi = bounds.get(r, (0, r.src[0].arg))
            loops.append(loop(hi - lo))
            mapping[r] = loops[-1] + lo if lo else loops[-1]
        pieces, edges = [], cuts.get(last, [0, last.src[0].arg])
        for lo, hi in zip(edges, edges[1:]):
            inner = loop(hi - lo)
            store = simplify(substitute(k.store, {**mapping, last: inner + lo if lo else inner}))
            pieces.append(UOp(Ops.END, dtypes.void, (store, inner)))
        nests.append(UOp(Ops.END, dtypes.void, (group(pieces), *loops)) if loops else group(pieces))
    return UOp(Ops.SINK, dtypes.void, tuple(nests))
