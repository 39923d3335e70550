"""Sorting functions (array API section "Sorting Functions"), with NumPy's names and keywords,
computed by kernels lazyarr's compiler generates on every device. Three sorts, chosen by the axis's
length and the device:
- a short axis is sorted by counting (each element's rank is how many elements come before it);
- on a device whose threads run long loops well (`Device.long_loops`: the CPU, PoCL) by radix
  sort (`lazyarr.radix_sort`: a few passes of kernels written in the IR, ~3 ms for 1M float32);
- elsewhere (a GPU) by a bitonic sorting network built from lazyarr's own ops.

The network: the axis to sort is moved last and padded to a power of two N with a sentinel that
sorts after every value. The network is log2(N)·(log2(N)+1)/2 compare-exchange stages; stage (k, j)
views the axis as (N/2j, 2, j), compares the two halves of each pair elementwise and keeps the
smaller first in the blocks of length k that sort ascending (the others descending), so each stage
is movement ops, comparisons and selects, one kernel (a CONTIGUOUS) per stage: fusing t stages
would save t - 1 passes over memory but make each element read 2^t elements of the stage before,
which measured slower (1M float32: 83 ms a kernel per stage, 110-900 ms two stages per kernel).

Order: NaNs after every number (NumPy's order); with `descending`, the reverse order (NaNs first)
while equal elements keep their order when `stable`. `argsort` is always stable. The relative
order of -0.0 and 0.0 in `sort`'s result is unspecified (the standard leaves it so; the radix
sort puts -0.0 first). Complex arrays sort as NumPy's do: by the real part, then the imaginary
part (their positions sorted, the values gathered). Gradients flow through `sort`: the network's
selects carry them, and a radix sort's values are gathered at its positions, a gather whose
gradient is a scatter (`ir_kernels.scatter_last`).
"""
from __future__ import annotations

import math
import operator
from typing import Any

from lazyarr import dtypes
from lazyarr.arrays import Array, graph_requires_grad, wrap
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.creation import as_tensor
from lazyarr.dtypes import DType
from lazyarr.radix_sort import radix_sort
from lazyarr.graph import (alu, cast_uop, const, expand_uop, flip_uop, gather_uop, imag_part, normalize_axis, pad_uop,
                           permute_uop, real_part, reshape_uop, shrink_uop, sorts_before, sorts_equal)

def _less(descending: bool):
    """a before b: sort's order (NaNs last), or its reverse when descending (NaNs first)."""
    return (lambda a, b: sorts_before(b, a)) if descending else sorts_before


def _sentinel(d: DType, descending: bool) -> Any:
    """A value no element comes after (ties with it are broken by position, where positions count)."""
    if d.is_float:
        return -float("inf") if descending else float("nan")
    return dtypes.min_value(d) if descending else dtypes.max_value(d)


def _stage(values: list[UOp], n_lead: int, k: int, j: int, before) -> list[UOp]:
    """One compare-exchange stage of the network on the trailing axes (N elements) of each value,
    viewed as (N/2j pairs, 2, j): each element of a pair takes the pair's other element (a flip of
    the axis of 2) where the pair is out of order for its block of k (blocks at odd multiples of k
    descend). Each element reads the stage before at two places, its own position and its
    mirror, so nothing is broadcast. (A view of (N/k, k/2j, 2, j), which would move k into the
    shape, measured 13x slower.)"""
    lead, n = values[0].shape[:n_lead], math.prod(values[0].shape[n_lead:])
    pairs = tuple(lead) + (n // (2 * j), 2, j)
    own = [reshape_uop(v, pairs) for v in values]
    other = [flip_uop(v, [n_lead + 1]) for v in own]
    side = expand_uop(reshape_uop(UOp(Ops.IOTA, dtypes.index, (), 2), (1,) * n_lead + (1, 2, 1)), pairs)
    is_first = alu(Ops.CMPEQ, side, 0)
    first = [alu(Ops.WHERE, is_first, a, b) for a, b in zip(own, other)]
    second = [alu(Ops.WHERE, is_first, b, a) for a, b in zip(own, other)]
    take_other = before(second, first)
    if k < n:
        q = cast_uop(UOp(Ops.IOTA, dtypes.index, (), n // (2 * j)), dtypes.int64)
        descending_block = alu(Ops.CMPNE, alu(Ops.AND, alu(Ops.MUL, q, 2 * j), k), 0)
        along = (1,) * n_lead + (n // (2 * j), 1, 1)
        take_other = alu(Ops.XOR, take_other, expand_uop(reshape_uop(descending_block, along), pairs))
    # left at the pairs' shape: the kernel that stores it loops over pairs, halves and the
    # contiguous run of j elements, which the next stage reads at constant offsets
    return [alu(Ops.WHERE, take_other, b, a) for a, b in zip(own, other)]


def _network(values: list[UOp], before) -> list[UOp]:
    """The bitonic network over the last axis (a power of two) of each value, ordered by
    `before(list_a, list_b)` (a bool node: the elements a come before the elements b)."""
    shape = values[0].shape
    n_lead, n = len(shape) - 1, shape[-1]
    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:
            values = [UOp(Ops.CONTIGUOUS, v.dtype, (v,)) for v in _stage(values, n_lead, k, j, before)]
            j //= 2
        k *= 2
    return [reshape_uop(v, shape) for v in values]


# A short axis is sorted by counting: each element's rank is the number of elements before it (n²
# comparisons, one reduction), and the sorted array puts each element at its rank (another): two
# kernels, where the network takes log2(n)·(log2(n)+1)/2. Up to COUNTING_SORT_MAX elements, while
# the comparisons of all rows stay under COUNTING_SORT_WORK (measured: 256 float32 in 0.7 ms by
# counting, 2 ms by the network).
COUNTING_SORT_MAX = 256
COUNTING_SORT_WORK = 1 << 22


def _by_counting(keys: list[UOp], before, positions_wanted: bool) -> UOp:
    """The sorted values (or the positions that sort them) of the last axis, by ranks. `keys`: the
    values (a complex array's parts), `before(a, b)` their strict order, ties broken by position."""
    *lead, n = keys[0].shape
    lead = tuple(lead)
    full = lead + (n, n)   # [..., i, j]: element i against element j
    ki = [expand_uop(reshape_uop(u, lead + (n, 1)), full) for u in keys]
    kj = [expand_uop(reshape_uop(u, lead + (1, n)), full) for u in keys]
    pos = cast_uop(UOp(Ops.IOTA, dtypes.index, (), n), dtypes.int64)
    i = expand_uop(reshape_uop(pos, (1,) * len(lead) + (n, 1)), full)
    j = expand_uop(reshape_uop(pos, (1,) * len(lead) + (1, n)), full)
    comes_before = before(kj + [j], ki + [i])
    rank = UOp(Ops.REDUCE_AXIS, dtypes.int64, (cast_uop(comes_before, dtypes.int64),), (Ops.ADD, (len(full) - 1,)))
    # [..., r, i]: whether element i has rank r; the sum picks it
    at_rank = alu(Ops.CMPEQ, expand_uop(reshape_uop(rank, lead + (1, n)), full), i)
    picked = j if positions_wanted else kj[0]
    summed = picked.dtype if picked.dtype.kind in "iuf" else dtypes.int64
    chosen = alu(Ops.WHERE, at_rank, cast_uop(picked, summed), 0)
    out = reshape_uop(UOp(Ops.REDUCE_AXIS, summed, (chosen,), (Ops.ADD, (len(full) - 1,))), lead + (n,))
    return cast_uop(out, dtypes.int64 if positions_wanted else keys[0].dtype)


def _by_radix(keys: list[UOp], device: Any, descending: bool, positions_wanted: bool) -> UOp:
    """The sorted values (or the positions that sort them) of the last axis, by radix sort
    (`lazyarr.radix_sort`): the least significant key first, each next key sorted from the order
    the ones after it gave (gathered at those positions)."""
    positions = None
    for i in range(len(keys) - 1, -1, -1):
        key = keys[i] if positions is None else _permuted(keys[i], positions)
        values, positions = radix_sort(key, device, descending, positions, want_values=i == 0 and not positions_wanted)
    return positions if positions_wanted else values


def _permuted(u: UOp, positions: UOp) -> UOp:
    """u's last axis permuted by `positions` (int64, of u's shape): a gather whose gradient is a scatter."""
    return gather_uop(u, [_positions_along(u.shape, a) for a in range(len(u.shape) - 1)] + [positions],
                      permutation_axis=len(u.shape) - 1)


def _order(descending: bool, n_keys: int, with_positions: bool):
    """`before(a, b)` over lists of key nodes (lexicographic: a complex number by its real part,
    then its imaginary part), then, with positions, the position (the lists' last node)."""
    lt, eq = _less(descending), sorts_equal

    def before(a: list[UOp], b: list[UOp]) -> UOp:
        if with_positions:
            out = alu(Ops.CMPLT, a[n_keys], b[n_keys])
            first = n_keys - 1
        else:
            out, first = lt(a[n_keys - 1], b[n_keys - 1]), n_keys - 2
        for k in range(first, -1, -1):
            out = alu(Ops.OR, lt(a[k], b[k]), alu(Ops.AND, eq(a[k], b[k]), out))
        return out
    return before


def _prepared(name: str, x: Any, axis: int) -> tuple[Array, int, tuple[int, ...]]:
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError(f"{name}: a 0-dimensional array has no axis to sort")
    ax = normalize_axis(axis, x.ndim)
    order = tuple(a for a in range(x.ndim) if a != ax) + (ax,)
    return x, ax, order


def _sorted_last(x: Array, ax: int, order: tuple[int, ...], descending: bool, with_positions: bool) -> list[UOp]:
    """x with axis ax moved last and sorted (and its positions, when asked), still padded. A
    complex array is sorted by its parts (NumPy's lexicographic order), always with positions."""
    u = permute_uop(x.uop, order)
    n = u.shape[-1]
    keys = [real_part(u), imag_part(u)] if x.dtype.is_complex else [u]
    with_positions = with_positions or x.dtype.is_complex
    d = keys[0].dtype
    if n <= 16 or (n <= COUNTING_SORT_MAX and math.prod(u.shape) * n <= COUNTING_SORT_WORK):
        return [_by_counting(keys, _order(descending, len(keys), True), with_positions)]
    if x.device.long_loops:
        return [_by_radix(keys, x.device, descending, with_positions)]
    size = 1 << (n - 1).bit_length()
    keys = [_pad_with(k, size, _sentinel(d, descending)) for k in keys]
    if with_positions:
        keys.append(expand_uop(reshape_uop(cast_uop(UOp(Ops.IOTA, dtypes.index, (), size), dtypes.int64),
                                           (1,) * (len(u.shape) - 1) + (size,)), keys[0].shape))
    return _network(keys, _order(descending, len(keys) - with_positions, with_positions))


def _pad_with(u: UOp, size: int, value: Any) -> UOp:
    """u's last axis extended to `size` elements of `value`."""
    n = u.shape[-1]
    if size == n:
        return u
    lead = u.shape[:-1]
    inside = expand_uop(reshape_uop(alu(Ops.CMPLT, cast_uop(UOp(Ops.IOTA, dtypes.index, (), size), dtypes.int64), n),
                                    (1,) * len(lead) + (size,)), lead + (size,))
    padded = pad_uop(u, [(0, 0)] * len(lead) + [(0, size - n)])
    return alu(Ops.WHERE, inside, padded, const(value, u.dtype, lead + (size,)))


def _positions_along(shape: tuple[int, ...], axis: int) -> UOp:
    along = tuple(m if a == axis else 1 for a, m in enumerate(shape))
    return expand_uop(reshape_uop(cast_uop(UOp(Ops.IOTA, dtypes.index, (), shape[axis]), dtypes.int64), along), shape)


def _restored(u: UOp, n: int, order: tuple[int, ...]) -> UOp:
    u = shrink_uop(u, [(0, m) for m in u.shape[:-1]] + [(0, n)])
    return permute_uop(u, [order.index(a) for a in range(len(order))])


_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _numpy_options(name: str, x: Any, axis: Any, kind: Any, order: Any) -> tuple[Any, int]:
    """NumPy's extra arguments: `kind` (any is accepted: the network serves them all), `order`
    (structured arrays: not supported), axis None (the flattened array)."""
    if kind not in _KINDS:
        raise ValueError(f"{name}: kind must be one of {', '.join(str(k) for k in _KINDS[1:])}, got {kind!r}")
    if order is not None:
        raise ValueError(f"{name}: order is for structured arrays, which lazyarr does not have")
    x = as_tensor(x)
    if axis is None:
        return wrap(reshape_uop(x.uop, (x.size,)), x.device), 0
    return x, axis


def sort(x: Array, /, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
         descending: bool = False, stable: bool = True) -> Array:
    """x sorted along `axis` (ascending, NaNs last; `descending` reverses the order). NumPy's
    `kind` is accepted (every kind sorts the same way), axis None sorts the flattened array."""
    x, axis = _numpy_options("sort", x, axis, kind, order)
    x, ax, order_ = _prepared("sort", x, axis)
    if x.shape[ax] <= 1:
        return x
    # the values gathered at the sorting positions where they are complex, or where a gradient must
    # flow (a radix sort's kernels carry none; the gather's is a scatter)
    gathered = x.dtype.is_complex or (x.device.long_loops and graph_requires_grad(x.uop))
    values = _sorted_last(x, ax, order_, descending, with_positions=gathered)[-1]
    if gathered:
        u = permute_uop(x.uop, order_)
        values = _permuted(u, _restored(values, x.shape[ax], tuple(range(len(order_)))))
    return wrap(_restored(values, x.shape[ax], order_), x.device)


def argsort(x: Array, /, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
            descending: bool = False, stable: bool = True) -> Array:
    """The positions that sort x along `axis` (ties in their original order: always stable)."""
    x, axis = _numpy_options("argsort", x, axis, kind, order)
    x, ax, order_ = _prepared("argsort", x, axis)
    n = x.shape[ax]
    if n <= 1:
        return wrap(const(0, dtypes.default_int, x.shape), x.device)
    positions = _sorted_last(x, ax, order_, descending, with_positions=True)[-1]
    return wrap(cast_uop(_restored(positions, n, order_), dtypes.default_int), x.device)


def _check_kth(name: str, kth: Any, n: int) -> None:
    for k in (kth if isinstance(kth, (list, tuple)) else [kth]):
        k = operator.index(k)
        if not -n <= k < n:
            raise ValueError(f"{name}: kth(={k}) out of bounds ({n})")


def partition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect", order: Any = None) -> Array:
    """NumPy's partition: the element at each position kth is the one a sorted array has there,
    smaller ones before it and larger after (here: the sorted array, which satisfies that)."""
    a, axis = _numpy_options("partition", a, axis, None, order)
    _check_kth("partition", kth, a.shape[normalize_axis(axis, a.ndim)] if a.ndim else 1)
    return sort(a, axis=axis)


def argpartition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect", order: Any = None) -> Array:
    """NumPy's argpartition: the positions that partition `a` around kth (here: that sort it)."""
    a, axis = _numpy_options("argpartition", a, axis, None, order)
    _check_kth("argpartition", kth, a.shape[normalize_axis(axis, a.ndim)] if a.ndim else 1)
    return argsort(a, axis=axis)
