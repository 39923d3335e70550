"""Set functions (array API section "Set Functions"): `unique_all`, `unique_counts`,
`unique_inverse`, `unique_values` and `isin`, on sorting and sorted search.

The unique values are the first of each run of equal elements of the sorted, flattened array
(`argsort`, stable, so that the first of a run is the first occurrence): a boolean mask whose count
is read back (the one wait), the rest lazy. As the standard says, NaNs compare unequal, so each NaN
is a unique value of its own (they sort last, in their original order); -0.0 and 0.0 are one.
Counts are the distances between the runs' starts; an element's inverse index is the position of
its value among the unique ones (a binary search; a NaN's is after the numbers, by its order
among the NaNs). `isin` searches x1's elements in the sorted x2 (a broadcast comparison when x2 is
short, or complex).
"""
from __future__ import annotations

from typing import Any, NamedTuple

from lazyarr import dtypes
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.creation import as_tensor
from lazyarr.graph import (alu, cast_uop, const, expand_uop, gather_uop, lower_bound, pad_uop, reshape_uop, shrink_uop,
                           sorts_before)
from lazyarr.searching import nonzero_positions
from lazyarr.sorting import argsort
from lazyarr.statistics import scan_uop


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _unique(x: Any, want_inverse: bool) -> tuple[Array, Array, Array, Array | None]:
    """The unique values, the first occurrences' indices, the counts, and the inverse indices."""
    x = as_tensor(x)
    dev, n = x.device, x.size
    flat = reshape_uop(x.uop, (n,))
    index = dtypes.default_int
    if n == 0:
        empty = wrap(const(0, index, (0,)), dev)
        return wrap(flat, dev), empty, empty, wrap(const(0, index, x.shape), dev) if want_inverse else None
    order = cast_uop(argsort(wrap(flat, dev)).uop, dtypes.int64)
    s = gather_uop(flat, [order])
    previous = pad_uop(shrink_uop(s, [(0, n - 1)]), [(1, 0)])          # s[i - 1] (s[0] itself at 0)
    iota = cast_uop(UOp(Ops.IOTA, dtypes.index, (), n), dtypes.int64)
    starts_run = alu(Ops.OR, alu(Ops.CMPEQ, iota, 0), alu(Ops.CMPNE, s, previous))
    starts = nonzero_positions(wrap(starts_run, dev))                  # (k,): where each run starts
    k = starts.shape[0]
    values = gather_uop(s, [starts])
    indices = gather_uop(order, [starts])
    ends = pad_uop(shrink_uop(starts, [(1, k)]), [(0, 1)])            # the next run's start, n last
    ends = alu(Ops.ADD, ends, alu(Ops.MUL, cast_uop(alu(Ops.CMPEQ, cast_uop(UOp(Ops.IOTA, dtypes.index, (), k),
                                                                              dtypes.int64), k - 1), dtypes.int64), n))
    counts = alu(Ops.SUB, ends, starts)
    inverse = None
    if want_inverse:
        found = lower_bound(values, flat, sorts_before)
        if x.dtype.is_float:   # each NaN is its own unique value, after the numbers, in its order
            is_nan = alu(Ops.CMPNE, flat, flat)
            nans_before = alu(Ops.SUB, scan_uop(cast_uop(is_nan, dtypes.int64), Ops.ADD, 0), 1)
            found = alu(Ops.WHERE, is_nan, alu(Ops.ADD, found, nans_before), found)
        inverse = wrap(reshape_uop(cast_uop(found, index), x.shape), dev)
    return wrap(values, dev), wrap(cast_uop(indices, index), dev), wrap(cast_uop(counts, index), dev), inverse


def unique_values(x: Array, /) -> Array:
    """The unique elements of x (flattened), sorted."""
    return _unique(x, False)[0]


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """The unique elements of x and how often each occurs."""
    values, _, counts, _ = _unique(x, False)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """The unique elements of x and, for each element of x, the index of its value among them
    (of x's shape)."""
    values, _, _, inverse = _unique(x, True)
    return UniqueInverseResult(values, inverse)


def unique_all(x: Array, /) -> UniqueAllResult:
    """The unique elements of x, the index of each one's first occurrence in x (flattened), the
    inverse indices (of x's shape) and the counts."""
    values, indices, counts, inverse = _unique(x, True)
    return UniqueAllResult(values, indices, inverse, counts)


# A second argument up to this long is compared with every element at once (one kernel); a longer
# one is sorted and searched.
ISIN_BROADCAST_MAX = 16


def _operand(x: Any, array: Array) -> Array:
    """x as an array on `array`'s device; a Python scalar takes its dtype where its kind fits (the
    standard's mixing rules: 2**63 with a uint64 array is a uint64)."""
    if isinstance(x, Array) or not dtypes.scalar_kind(x):
        return as_tensor(x, array.device)
    d = dtypes.weak_result(array.dtype, x)
    dtypes.check_scalar_fits(x, d)
    return wrap(const(x, d), array.device)


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Array:
    """Whether each element of x1 is among the elements of x2 (by ==, so NaN never is); `invert`:
    whether it is not. Of x1's shape (0-d for a scalar x1)."""
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("isin: at least one of x1 and x2 must be an array")
    array = x1 if isinstance(x1, Array) else x2
    a, b = (_operand(x, array) for x in (x1, x2))
    if a.device is not b.device:
        raise ValueError(f"isin: x1 is on {a.device.name}, x2 on {b.device.name}")
    d = dtypes.promote_types(a.dtype, b.dtype)
    ua, ub = cast_uop(a.uop, d), reshape_uop(cast_uop(b.uop, d), (b.size,))
    m = b.size
    if m == 0:
        hit = const(False, dtypes.bool_, a.shape)
    elif m <= ISIN_BROADCAST_MAX or d.is_complex:
        full = a.shape + (m,)
        eq = alu(Ops.CMPEQ, expand_uop(reshape_uop(ua, a.shape + (1,)), full),
                 expand_uop(reshape_uop(ub, (1,) * a.ndim + (m,)), full))
        hit = UOp(Ops.REDUCE_AXIS, dtypes.bool_, (eq,), (Ops.MAX, (a.ndim,)))
        hit = reshape_uop(hit, a.shape)
    else:
        s = gather_uop(ub, [cast_uop(argsort(wrap(ub, a.device)).uop, dtypes.int64)])
        at = alu(Ops.MIN, lower_bound(s, ua, sorts_before), m - 1)
        hit = alu(Ops.CMPEQ, gather_uop(s, [at]), ua)
    return wrap(alu(Ops.XOR, hit, True) if invert else hit, a.device)
