"""Sorting functions (array API section "Sorting Functions"), with NumPy's names and keywords,
computed by kernels lazyarr's compiler generates on every device. Three sorts, chosen by the axis's
length and the device:
- a short axis is sorted by counting (each element's rank is how many elements come before it);
- on a device whose threads run long loops well (`Device.long_loops`: the CPU, PoCL) by radix
  sort (`lazyarr.radix_sort`: a few passes of kernels written in the IR, ~3 ms for 1M float32);
- elsewhere (a GPU) by a bitonic network (`lazyarr.bitonic_sort`: one kernel, run once a stage).

Order: NaNs after every number (NumPy's order); with `descending`, the reverse order (NaNs first)
while equal elements keep their order when `stable`. `argsort` is always stable. -0.0 and 0.0
keep their signs; their order is unspecified, as the standard leaves it (the radix sort and the
network put -0.0 first, the counting sort keeps their order). Complex arrays sort as NumPy's do: by
the real part, then the imaginary part (their positions sorted, the values gathered). Gradients
flow through `sort` as through a gather: the values are gathered at the sorting positions, and
the gather's gradient is a scatter (`ir_kernels.scatter_last`).
"""
from __future__ import annotations

import math
import operator
from typing import Any

from lazyarr import dtypes
from lazyarr.arrays import Array, graph_requires_grad, wrap
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.creation import as_tensor
from lazyarr.bitonic_sort import bitonic_sort
from lazyarr.radix_sort import key_dtype, radix_sort
from lazyarr.graph import (alu, cast_uop, const, expand_uop, gather_uop, imag_part, normalize_axis, permute_uop,
                           real_part, reshape_uop, shrink_uop, sorts_before, sorts_equal)


def _less(descending: bool):
    """a before b: sort's order (NaNs last), or its reverse when descending (NaNs first)."""
    return (lambda a, b: sorts_before(b, a)) if descending else sorts_before


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
    if picked.dtype.is_float:   # summed as its bits: -0.0 + 0.0 would lose -0.0's sign
        summed = key_dtype(picked.dtype)
        picked = UOp(Ops.BITCAST, summed, (picked,))
    else:
        summed = picked.dtype if picked.dtype.kind in "iu" else dtypes.int64
    chosen = alu(Ops.WHERE, at_rank, cast_uop(picked, summed), 0)
    out = reshape_uop(UOp(Ops.REDUCE_AXIS, summed, (chosen,), (Ops.ADD, (len(full) - 1,))), lead + (n,))
    if positions_wanted:
        return cast_uop(out, dtypes.int64)
    return UOp(Ops.BITCAST, keys[0].dtype, (out,)) if keys[0].dtype.is_float else cast_uop(out, keys[0].dtype)


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
    """x with axis ax moved last and sorted (or the positions that sort it, when asked). A
    complex array is sorted by its parts (NumPy's lexicographic order), always with positions."""
    u = permute_uop(x.uop, order)
    n = u.shape[-1]
    keys = [real_part(u), imag_part(u)] if x.dtype.is_complex else [u]
    with_positions = with_positions or x.dtype.is_complex
    if n <= 16 or (n <= COUNTING_SORT_MAX and math.prod(u.shape) * n <= COUNTING_SORT_WORK):
        return [_by_counting(keys, _order(descending, len(keys), True), with_positions)]
    if x.device.long_loops:
        return [_by_radix(keys, x.device, descending, with_positions)]
    return [bitonic_sort(keys, x.device, descending, with_positions)]


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
    # flow (the sorts' kernels carry none; the gather's is a scatter)
    gathered = x.dtype.is_complex or graph_requires_grad(x.uop)
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
