"""Preparing a tensor graph for rangeify (after Tolk's `Prepare` module).

The graph a user builds states what to compute. Before the scheduler chooses buffers and
rangeify indexes kernels, `prepare` brings it to a normal form, from the leaves up, with these
rules (lazyarr's op for each of Tolk's is named):

- DETACH (Tolk's Detach) and the NOOP marker of functional gradients (Tolk's
  Contiguous_backward plays the same role) are their source: they only matter to autograd.
- A copy (COPY) to the device the value is already on is the value.
- A materialisation (CONTIGUOUS, Tolk's Stage) of storage, of a copy or of another
  materialisation is its source; any other keeps its own buffer.
- A reduction over an axis of length 0 to a result with elements is the reduction's identity
  (0 for sums, 1 for products, the dtype's least or greatest value for max and min); any other
  node of no elements is the constant 0 of its shape (nothing reads it).
- then `split_reduceop`, once per reduction: a large reduction over few outputs is split in two, when the setting
  `settings.split_reduceop` is on. The first reduced axis that the input is not broadcast along,
  of length N, is reshaped to (d, N/d) with d the largest divisor of N from 256 down to 8 that
  keeps the first reduction's output (the outputs times d) within 2**`reduceop_split_size`
  elements; the first reduction (over N/d and the other reduced axes) is materialised and the
  second reduces the d partial results. It applies when the input has at least
  `reduceop_split_threshold` times as many elements as the output. The first reduction then has
  d times more outputs to spread over threads, and the second is small.

Raises nothing: every graph the Tensor layer builds has a prepared form.
"""
from __future__ import annotations

from lazyarr import dtypes, settings
from lazyarr.compiler.patterns import PatternMatcher, UPat, graph_rewrite, substitute
from lazyarr.compiler.uop import GroupOp, Ops, UOp
from lazyarr.graph import const, reshape_uop
from lazyarr.ops import OP_DEFS, reduce_identity

P = UPat
COMPUTED = frozenset(OP_DEFS) - GroupOp.Leaf   # tensor-level ops with sources


def _is_storage(u: UOp) -> bool:
    while u.op is Ops.RESHAPE:
        u = u.src[0]
    return u.op is Ops.BUFFER


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
    return src if _is_storage(src) or src.op in (Ops.COPY, Ops.CONTIGUOUS) else None


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


def split_reduceop(red: UOp) -> UOp | None:
    if not settings.split_reduceop:
        return None
    x, (op, axes) = red.src[0], red.arg
    if red.size == 0 or x.size < settings.reduceop_split_threshold * max(red.size, 1):
        return None
    for axis in axes:
        if broadcast_along(x, axis):
            continue
        n = x.shape[axis]
        divisor = next((d for d in range(256, 7, -1) if n % d == 0 and red.size * d <= 2 ** settings.reduceop_split_size
                        and n // d > 1), None)
        if divisor is None:
            continue
        split_shape = x.shape[:axis] + (divisor, n // divisor) + x.shape[axis + 1:]
        # axes after `axis` move one place right; the inner part (axis + 1) is reduced first
        first_axes = tuple(sorted({a + (a > axis) for a in axes if a != axis} | {axis + 1}))
        first = UOp(Ops.REDUCE_AXIS, red.dtype, (reshape_uop(x, split_shape),), (op, first_axes))
        first = UOp(Ops.CONTIGUOUS, red.dtype, (first,))
        second = UOp(Ops.REDUCE_AXIS, red.dtype, (first,), (op, (axis,)))
        return reshape_uop(second, red.shape)
    return None


pm_prepare = PatternMatcher([
    (P((Ops.DETACH, Ops.NOOP), name="u"), lambda u: u.src[0] if u.src and u.shape == u.src[0].shape else None),
    (P(Ops.COPY, name="c"), copy_to_own_device),
    (P(Ops.CONTIGUOUS, name="c"), materialise),
    (P(COMPUTED, name="u"), empty_values),
])


def prepare(roots: list[UOp]) -> list[UOp]:
    """The roots in prepared form: the rules above from the leaves up to a fixed point, then each
    reduction split at most once (a split's first half is not split again)."""
    sink = graph_rewrite(UOp(Ops.SINK, dtypes.void, tuple(roots)), pm_prepare)
    splits = {u: s for u in sink.toposort() if u.op is Ops.REDUCE_AXIS and (s := split_reduceop(u)) is not None}
    return list(substitute(sink, splits).src)

