"""Preparing a tensor graph for rangeify (after Tolk's `Prepare` module).

The graph a user builds states what to compute. Before the scheduler chooses buffers and
rangeify indexes kernels, `prepare` brings it to a normal form. First complex values are lowered
to real ones (`lazyarr.compiler.complex`: a complex root becomes its (real, imaginary) pairs, of
shape + (2,), which the scheduler stores into a complex buffer through its real view); then, from
the leaves up, these rules apply (lazyarr's op for each of Tolk's is named):

- DETACH (Tolk's Detach) and the NOOP marker of functional gradients (Tolk's
  Contiguous_backward plays the same role) are their source: they only matter to autograd.
- A copy (COPY) to the device the value is already on is the value.
- A materialisation (CONTIGUOUS, Tolk's Stage) of storage, of a copy or of another
  materialisation is its source; any other keeps its own buffer.
- A reduction over an axis of length 0 to a result with elements is the reduction's identity
  (0 for sums, 1 for products, the dtype's least or greatest value for max and min); any other
  node of no elements is the constant 0 of its shape (nothing reads it).
- A bitcast between types of different sizes (Tolk's Bitcast) is shifts and masks on unsigned
  integers, lane by lane along the last axis (`expand_bitcast`).
- An operation on float16 values is computed in float32 and its result rounded to float16
  (`half_in_float`, NumPy's float16 arithmetic): kernels keep float16 in memory only.
- then `widen_product`: a float32 product of more than `WIDEN_PRODUCT` values is computed in
  float64 and rounded once, where every device the graph uses has float64. Reordering does not
  make a product more accurate (every multiplication rounds, whatever the order), and many short
  float32 chains of factors near 1 (a vectorised loop's lanes) drift: 10^7 factors lost ~1e-2
  relative in lanes, NumPy's one chain ~3e-4; in float64 the result is within an ulp. The
  wider lanes cost a product of 10^7 float32 ~25% on one thread here (3.3 -> 4.1 ms);
- then `split_reduceop`, once per reduction: a large reduction over few outputs is split in two, when the setting
  `settings.split_reduceop` is on. The first reduced axis that the input is not broadcast along,
  of length N, is reshaped to (d, N/d) with d the largest divisor of N from 256 down to 8 that
  keeps the first reduction's output (the outputs times d) within 2**`reduceop_split_size`
  elements; the first reduction (over N/d and the other reduced axes) is materialised and the
  second reduces the d partial results. It applies when the input has at least
  `reduceop_split_threshold` times as many elements as the output. The first reduction then has
  d times more outputs to spread over threads, and the second is small. On a CPU, a reduction
  along one non-innermost axis of long rows (a column sum) is split into groups of rows that fit in
  the L2 cache instead (`split_strided`).

Two questions about views are answered here too: `contiguous_view(u)` (is u a run of elements of
what it views, and from which offset) and `broadcast_destination(u)` (is u a broadcast, so that
storing into it would write one cell several times).

Raises nothing: every graph the Tensor layer builds has a prepared form. (Storing into a
broadcast is refused where the store is asked for: `Tensor.assign` and `__setitem__` raise
ValueError.)

Where lazyarr differs from Tolk: updates in place (x[idx] = v, x += y, optimizer steps) are
values, not Store/After effects. The new value reads the old one, and the executor lets the
kernel that computes it take over the old value's storage when the kernel reads it only at the
index it writes and no graph can read the old value anymore (`lazyarr.runtime.executor`). So
lazy values recorded before an update still see the old value (their graph keeps it alive, and
the update then writes elsewhere), later reads see the new one, and a training loop's updates
run in place in steady state.
"""
from __future__ import annotations

import math

from lazyarr import dtypes, settings
from lazyarr.compiler.buffer_views import is_buffer_view
from lazyarr.compiler.complex import lower_complex
from lazyarr.compiler.patterns import PatternMatcher, UPat, graph_rewrite
from lazyarr.compiler.uop import OP_DEFS, GroupOp, Ops, UOp, reduce_identity, value_sources
from lazyarr.compiler.rangeify import index, linear_index, push_movement
from lazyarr.compiler.symbolic import simplify
from lazyarr.graph import alu, cast_uop, const, expand_uop, reshape_uop

P = UPat
COMPUTED = frozenset(OP_DEFS) - GroupOp.Leaf   # tensor-level ops with sources


def _device_of(u: UOp):
    for n in u.toposort(lambda x: x.op is Ops.COPY):
        if n.op is Ops.BUFFER:
            return n.arg.device
        if n.op is Ops.COPY and n is not u:
            return n.arg
    return None


def copy_to_own_device(c: UOp) -> UOp | None:
    return c.src[0] if _device_of(c.src[0]) in (None, c.arg) else None


def materialise(c: UOp) -> UOp | None:
    src = c.src[0]
    return src if is_buffer_view(src) or src.op in (Ops.COPY, Ops.CONTIGUOUS) else None


def empty_values(u: UOp) -> UOp | None:
    if u.op is Ops.REDUCE_AXIS and u.size != 0 and u.src[0].size == 0:
        return const(reduce_identity(u.arg[0], u.dtype), u.dtype, u.shape)
    return const(0, u.dtype, u.shape) if u.size == 0 else None   # (a const of no elements is itself)


def broadcast_along(x: UOp, axis: int) -> bool:
    """Whether x's elements along `axis` are copies of one (an EXPAND stretched it), looking
    through elementwise ops whose every source is broadcast along it."""
    if x.op is Ops.EXPAND:
        return x.src[0].shape[axis] == 1 and x.shape[axis] != 1
    if x.op in GroupOp.Elementwise and x.src:
        return all(s.shape == x.shape and broadcast_along(s, axis) for s in x.src)
    return False


WIDEN_PRODUCT = 64   # products of more values than this are computed in float64 (see the module docstring)


def widen_product(red: UOp) -> UOp | None:
    x, (op, _) = red.src[0], red.arg
    if op is not Ops.MUL or red.dtype is not dtypes.float32 or red.size == 0 or x.size <= WIDEN_PRODUCT * red.size:
        return None
    return cast_uop(UOp(Ops.REDUCE_AXIS, dtypes.float64, (cast_uop(x, dtypes.float64),), red.arg), dtypes.float32)


def split_reduceop(red: UOp, long_loops: bool = False) -> UOp | None:
    if not settings.split_reduceop or red.size == 0:
        return None
    x, axes = red.src[0], red.arg[1]
    if x.size < settings.reduceop_split_threshold * max(red.size, 1):
        return split_strided(red) if long_loops else None
    for axis in axes:
        if broadcast_along(x, axis):
            continue
        n = x.shape[axis]
        divisor = next((d for d in range(256, 7, -1) if n % d == 0 and red.size * d <= 2 ** settings.reduceop_split_size
                        and n // d > 1), None)
        if divisor is not None:
            return _split(red, axis, divisor)
    return None


# a reduction along an axis whose elements lie this many bytes apart or more (a column sum of rows
# at least this long), over at least STRIDED_SPLIT_BYTES, is split (`split_strided`)
STRIDED_ROW_BYTES = 1 << 10
STRIDED_SPLIT_BYTES = 4 << 20
STRIDED_GROUP_BYTES = 512 << 10   # half an L2 cache: a group of rows stays in it while it is summed


def split_strided(red: UOp) -> UOp | None:
    """A reduction along one axis that is not the innermost, over long rows (a column sum: `sum(x,
    axis=0)` of a large matrix, which reads each element once), on a device that runs long loops
    (a CPU), is split into groups of consecutive rows, as many as fit in STRIDED_GROUP_BYTES: the
    first reduction sums each group (its kernel sweeps the group's rows strip of columns after
    strip of columns, which stay in the L2 cache after the first strip read them from memory), the
    second the groups' partial rows. One kernel swept all the rows for each strip instead, 256
    bytes a row 16 KB apart, which the prefetchers follow badly: 4096² float32 4.1 -> 3.4 ms on 2
    threads, 1024 × 8192 1.9 -> 1.1 ms (Zen 4), the partial rows about 3% of the data."""
    x, axes = red.src[0], red.arg[1]
    if len(axes) != 1:
        return None
    axis, row = axes[0], math.prod(x.shape[axes[0] + 1:]) * red.dtype.itemsize
    if row < STRIDED_ROW_BYTES or x.size * red.dtype.itemsize < STRIDED_SPLIT_BYTES or broadcast_along(x, axis):
        return None
    # only a reduction that reads its input's elements once, as stored (not a product of broadcasts:
    # a matmul reads far fewer than it multiplies, from cache)
    if 2 * sum(u.arg.size for u in x.toposort() if u.op is Ops.BUFFER) < x.size:
        return None
    n = x.shape[axis]
    rows = next((d for d in range(min(n // 2, STRIDED_GROUP_BYTES // row), 7, -1) if n % d == 0), None)
    return None if rows is None else _split(red, axis, n // rows)


def _split(red: UOp, axis: int, groups: int) -> UOp:
    """The reduction with its axis `axis` reshaped to (groups, length / groups): the inner part
    reduced first (with the other reduced axes) into a buffer, then the groups."""
    x, (op, axes) = red.src[0], red.arg
    n = x.shape[axis]
    split_shape = x.shape[:axis] + (groups, n // groups) + x.shape[axis + 1:]
    # axes after `axis` move one place right; the inner part (axis + 1) is reduced first
    first_axes = tuple(sorted({a + (a > axis) for a in axes if a != axis} | {axis + 1}))
    first = UOp(Ops.REDUCE_AXIS, red.dtype, (reshape_uop(x, split_shape),), (op, first_axes))
    first = UOp(Ops.CONTIGUOUS, red.dtype, (first,))
    second = UOp(Ops.REDUCE_AXIS, red.dtype, (first,), (op, (axis,)))
    return reshape_uop(second, red.shape)


def _uint(size: int) -> dtypes.DType:
    return {1: dtypes.uint8, 2: dtypes.uint16, 4: dtypes.uint32, 8: dtypes.uint64}[size]


def expand_bitcast(bc: UOp) -> UOp | None:
    """A bitcast between types of different sizes as shifts and masks on unsigned integers, lane by
    lane along the last axis, least significant lane first (little-endian, as NumPy's view)."""
    x, src, dst = bc.src[0], bc.src[0].dtype, bc.dtype
    if src.itemsize == dst.itemsize:
        return None
    us, ud = _uint(src.itemsize), _uint(dst.itemsize)
    bits = UOp(Ops.BITCAST, us, (x,)) if src is not us else x
    *lead, n = x.shape
    lead = tuple(lead)
    if src.itemsize > dst.itemsize:   # each wide lane becomes k narrow lanes
        k = src.itemsize // dst.itemsize
        wide = expand_uop(reshape_uop(bits, lead + (n, 1)), lead + (n, k))
        shift = expand_uop(reshape_uop(cast_uop(alu(Ops.MUL, iota_uop(k), 8 * dst.itemsize), us), (1,) * (len(lead) + 1) + (k,)),
                           lead + (n, k))
        lanes = cast_uop(alu(Ops.AND, alu(Ops.SHR, wide, shift), (1 << (8 * dst.itemsize)) - 1), ud)
        out = reshape_uop(lanes, lead + (n * k,))
    else:                             # each group of k narrow lanes becomes one wide lane
        k = dst.itemsize // src.itemsize
        groups = cast_uop(reshape_uop(bits, lead + (n // k, k)), ud)
        shift = expand_uop(reshape_uop(cast_uop(alu(Ops.MUL, iota_uop(k), 8 * src.itemsize), ud), (1,) * (len(lead) + 1) + (k,)),
                           lead + (n // k, k))
        placed = alu(Ops.SHL, groups, shift)
        out = reshape_uop(UOp(Ops.REDUCE_AXIS, ud, (placed,), (Ops.ADD, (len(lead) + 1,))), lead + (n // k,))
    return out if dst is ud else UOp(Ops.BITCAST, dst, (out,))


def iota_uop(n: int) -> UOp:
    return UOp(Ops.IOTA, dtypes.index, (), n)


def contiguous_view(u: UOp) -> tuple[UOp, int] | None:
    """(b, offset) if the elements of u, in row-major order, are the elements of b from `offset`
    on, in order, where u is b viewed through movement ops (and bitcasts of the same size) that
    neither reorder, skip, repeat nor pad elements; b is what the view reads: storage (BUFFER), a
    constant or a computed value. The run is found when the simplified index of u's elements in
    b is the element's position plus a constant. None otherwise, and when u is empty. (A run that
    a reshape splits and a shrink recombines in a way the simplifier does not undo is not found.)"""
    if u.size == 0:
        return None
    r = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, u.size),), 0)
    ix = index(reshape_uop(u, (u.size,)), [r])
    while ix.op is Ops.INDEX and (ix.src[0].op in GroupOp.Movement or
                                  (ix.src[0].op is Ops.BITCAST and ix.src[0].dtype.itemsize == ix.src[0].src[0].dtype.itemsize)):
        mv = ix.src[0]
        ix = push_movement(ix, mv) if mv.op is not Ops.BITCAST else index(mv.src[0], ix.src[1:-1], ix.src[-1])
    if ix.op is not Ops.INDEX or not ix.src[-1].is_const(True):
        return None   # a pad: some elements are not b's
    base = ix.src[0]
    offset = simplify(linear_index(ix.src[1:-1], base.shape) - r)
    return (base, offset.arg) if offset.op is Ops.CONST else None


def broadcast_destination(u: UOp) -> UOp | None:
    """The EXPAND that makes u a broadcast (several of its elements one cell of what it views),
    looking through movement ops; None if u's elements are distinct cells."""
    while u.op in GroupOp.Movement:
        if u.op is Ops.EXPAND and any(s == 1 and n != 1 for s, n in zip(u.src[0].shape, u.shape)):
            return u
        u = u.src[0]
    return None


def half_in_float(u: UOp) -> UOp | None:
    """An operation on float16 values computed in float32 and rounded to float16 once (NumPy's
    arithmetic on float16: each operation in float32, its result rounded), so that kernels hold
    float16 only in memory; comparisons of float16 compare the float32 values."""
    values = value_sources(u.op, u.src)
    if not any(s.dtype is dtypes.float16 for s in values) and u.dtype is not dtypes.float16:
        return None
    src = u.src[:len(u.src) - len(values)] + tuple(cast_uop(s, dtypes.float32) if s.dtype is dtypes.float16 else s
                                                  for s in values)
    if u.dtype is dtypes.float16:
        return UOp(Ops.CAST, dtypes.float16, (u.replace(dtype=dtypes.float32, src=src),))
    return u.replace(src=src)


pm_prepare = PatternMatcher([
    (P(GroupOp.ALU | {Ops.REDUCE_AXIS}, name="u"), half_in_float),
    (P((Ops.DETACH, Ops.NOOP), name="u"), lambda u: u.src[0] if u.src and u.shape == u.src[0].shape else None),
    (P(Ops.COPY, name="c"), copy_to_own_device),
    (P(Ops.CONTIGUOUS, name="c"), materialise),
    (P(COMPUTED, name="u"), empty_values),
    (P(Ops.BITCAST, name="bc"), expand_bitcast),
])


def _all_devices(roots: list[UOp], *capabilities: str) -> list[bool]:
    """For each capability, whether every device the graph reads or copies to has it (`fp64`:
    computes with float64, `long_loops`: a CPU)."""
    devices = {u.arg.device if u.op is Ops.BUFFER else u.arg for u in UOp(Ops.SINK, dtypes.void, tuple(roots)).toposort()
               if u.op in (Ops.BUFFER, Ops.COPY)}
    return [all(getattr(d, c) for d in devices) for c in capabilities]


def prepare(roots: list[UOp]) -> list[UOp]:
    """The roots in prepared form: complex values lowered, then the rules above from the leaves up
    to a fixed point, then, from the leaves up, long float32 products widened (where the devices
    have float64) and each reduction split at most once (a split's first half is not split
    again; a reduction inside another's value, such as var's mean, is split too). A complex
    root's prepared form is real, of its shape + (2,)."""
    roots = lower_complex(roots, wide=lambda r: _all_devices(r, "fp64")[0])
    sink = graph_rewrite(UOp(Ops.SINK, dtypes.void, tuple(roots)), pm_prepare)
    wide, cpu = _all_devices(list(sink.src), "fp64", "long_loops")

    def reduction(red: UOp) -> UOp:
        widened = widen_product(red) if wide else None
        if widened is not None:
            split = split_reduceop(widened.src[0], cpu)
            return widened if split is None else cast_uop(split, red.dtype)
        split = split_reduceop(red, cpu)
        return red if split is None else split
    # from the leaves up, so that a reduction inside another's value (var's mean) is split too
    done: dict[UOp, UOp] = {}
    for u in sink.toposort():
        src = tuple(done[x] for x in u.src)
        new = u if src == u.src else u.replace(src=src)
        done[u] = reduction(new) if new.op is Ops.REDUCE_AXIS else new
    return list(done[sink].src)

