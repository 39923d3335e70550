"""Counting into bins, with NumPy's names: `bincount` and `histogram`.

Both count on a sorted copy of the data, as NumPy's histogram does for bins given as an array:
the number of elements below each bin edge is a binary search in the sorted data
(`graph.lower_bound`), and a bin's count the difference of two of them. Weights are sorted with
the data (by its argsort), summed cumulatively, and a bin's total is the difference of the running
sums at its edges (NumPy's method, whose rounding error is that of the running sum). Few bins
against little data count directly instead: a comparison of every element with every bin and one
reduction, exact for weights too.

`bincount`'s length depends on the data (its largest value): the minimum and the maximum are
computed and read back first (two elements), as `histogram` reads back the range it
autodetects. String bin estimators ('auto', 'fd', ...) are not supported (ValueError).
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array, realize, wrap
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.conversion import element
from lazyarr.creation import as_tensor
from lazyarr.graph import alu, cast_uop, const, expand_uop, gather_uop, lower_bound, reshape_uop, shrink_uop
from lazyarr.sorting import argsort, sort
from lazyarr.statistics import scan_uop, shift_in, reduce

# below this many comparisons (elements x bins) the bins are counted directly
DIRECT_WORK = 1 << 22


def _grid(u: UOp, along: int, shape: tuple[int, int]) -> UOp:
    """The 1-D node u laid along axis `along` of a 2-D (bins, elements) grid."""
    return expand_uop(reshape_uop(u, (u.shape[0], 1) if along == 0 else (1, u.shape[0])), shape)


def _direct(member: UOp, weights: UOp | None) -> UOp:
    """Per bin (axis 0 of the bool grid `member`: whether element j is in bin b), the count of its
    elements, or the total of their weights: one reduction over the elements."""
    if weights is None:
        picked = cast_uop(member, dtypes.default_int)
    else:
        picked = alu(Ops.WHERE, member, _grid(weights, 1, member.shape), 0)
    return reshape_uop(UOp(Ops.REDUCE_AXIS, picked.dtype, (picked,), (Ops.ADD, (1,))), (member.shape[0],))


def _between_edges(values: Array, weights: Array | None, below: Callable[[UOp], UOp]) -> UOp:
    """Per bin, the count (or the weights' total) of the elements of the 1-D `values` that come at
    or after `below[b]` and before `below[b + 1]`, where `below(sorted, targets)` gives, per edge,
    how many sorted elements come before it. Sorts the values (and their weights)."""
    if weights is None:
        at = below(sort(values).uop)
        return alu(Ops.SUB, _next(at), _this(at))
    order = cast_uop(argsort(values).uop, dtypes.int64)
    at = below(gather_uop(values.uop, [order]))
    # summed in 64 bits, as NumPy's bincount sums the weights of equal bins
    wide = dtypes.complex128 if weights.dtype.is_complex else dtypes.float64
    w = cast_uop(gather_uop(weights.uop, [order]), wide)
    running = shift_in(UOp(Ops.CONTIGUOUS, w.dtype, (scan_uop(w, Ops.ADD, 0),)), 0)   # elements before position p
    totals = gather_uop(running, [at])
    return cast_uop(alu(Ops.SUB, _next(totals), _this(totals)), weights.dtype)


def _this(u: UOp) -> UOp:
    return shrink_uop(u, [(0, u.shape[0] - 1)])


def _next(u: UOp) -> UOp:
    return shrink_uop(u, [(1, u.shape[0])])


def _before_edge(x: UOp, edge: UOp, last: UOp | None) -> UOp:
    """Whether x counts below the bin edge: x < edge, or x equal to it where `last` (the last edge
    closes the last bin). NaNs are below no edge."""
    below = alu(Ops.CMPLT, x, edge)
    return below if last is None else alu(Ops.OR, below, alu(Ops.AND, last, alu(Ops.CMPEQ, x, edge)))


def _prepared_weights(name: str, weights: Any, like: Array) -> Array | None:
    if weights is None:
        return None
    w = as_tensor(weights, like.device)
    if w.shape != like.shape:
        raise ValueError(f"{name}: weights have shape {w.shape}, the data {like.shape}")
    if w.dtype.is_complex and name == "bincount":
        raise TypeError("bincount: weights cannot be complex")
    return w


def bincount(x: Any, /, weights: Any = None, minlength: int = 0) -> Array:
    """NumPy's bincount: how many times each value 0, 1, ..., max(x) occurs in the 1-D
    non-negative integer array x (at least `minlength` of them); with `weights`, the sum of the
    weights of each value's elements instead (float64, as NumPy)."""
    x = as_tensor(x)
    if x.ndim != 1:
        raise ValueError(f"bincount: x must be 1-dimensional, got {x.ndim} dimensions")
    if x.size and (not (x.dtype.is_int or x.dtype.is_bool) or x.dtype == dtypes.uint64):   # [] is allowed
        raise TypeError(f"bincount: x must hold integers that fit int64, not {x.dtype}")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("bincount: minlength must not be negative")
    w = _prepared_weights("bincount", weights, x)
    if w is not None:
        w = wrap(cast_uop(w.uop, dtypes.float64), x.device)
    values = wrap(cast_uop(x.uop, dtypes.int64), x.device)
    n = x.shape[0]
    length = minlength
    if n:
        lo, hi = reduce(values, Ops.MIN, None), reduce(values, Ops.MAX, None)
        realize(lo, hi)
        if int(element(lo)) < 0:
            raise ValueError("bincount: x must have no negative elements")
        length = max(length, int(element(hi)) + 1)
    if n == 0 or length == 0:
        return wrap(const(0, dtypes.float64 if w is not None else dtypes.default_int, (length,)), x.device)
    if n * length <= DIRECT_WORK:
        value = cast_uop(UOp(Ops.IOTA, dtypes.index, (), length), dtypes.int64)
        grid = (length, n)
        out = _direct(alu(Ops.CMPEQ, _grid(values.uop, 1, grid), _grid(value, 0, grid)), None if w is None else w.uop)
    else:
        edges = cast_uop(UOp(Ops.IOTA, dtypes.index, (), length + 1), dtypes.int64)
        out = _between_edges(values, w, lambda s: lower_bound(s, edges, lambda e, t: alu(Ops.CMPLT, e, t)))
    return wrap(out if w is not None else cast_uop(out, dtypes.default_int), x.device)


def _range(a: Array, range_: Any) -> tuple[float, float]:
    if range_ is not None:
        lo, hi = (float(v) for v in range_)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"histogram: supplied range of [{lo}, {hi}] is not finite")
        if lo > hi:
            raise ValueError("histogram: max must be larger than min in range parameter")
    elif a.size == 0:
        lo, hi = 0.0, 1.0
    else:
        m, M = reduce(a, Ops.MIN, None), reduce(a, Ops.MAX, None)
        realize(m, M)
        lo, hi = float(element(m)), float(element(M))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"histogram: autodetected range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _uniform_edges(a: Array, range_: Any, count: int) -> Array:
    """count + 1 equal steps over the range: a handful of constants, spaced on the host exactly as
    NumPy spaces them (in the data's float dtype when the range comes from the data, whose min and
    max are of that dtype, else in float64; then cast)."""
    lo, hi = _range(a, range_)
    d = a.dtype if a.dtype.is_float else dtypes.float64
    f = np.dtype(d.name).type
    if range_ is None:
        lo, hi = f(lo), f(hi)
    return as_tensor(np.linspace(lo, hi, count + 1, dtype=f), a.device)


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> tuple[Array, Array]:
    """NumPy's histogram of the flattened `a`: `bins` equal bins over `range` (the data's, by
    default) or the bin edges as an increasing array; every bin holds its left edge, the last its
    right edge too; elements outside are not counted. Returns (counts or weight totals, edges);
    `density` divides by the total and the bins' widths."""
    a = as_tensor(a)
    if a.dtype.is_complex:
        raise TypeError("histogram: complex numbers have no order")
    flat = wrap(reshape_uop(a.uop, (a.size,)), a.device)
    w = _prepared_weights("histogram", weights, a)
    if w is not None:
        w = wrap(reshape_uop(w.uop, (a.size,)), a.device)
    if isinstance(bins, str):
        raise ValueError(f"histogram: bin estimators such as {bins!r} are not supported; give a number of bins "
                         "or their edges")
    if isinstance(bins, Array) or not dtypes.scalar_kind(bins):
        edges = as_tensor(bins, a.device)
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError("histogram: bins must be a 1-D array of at least two edges")
        steps = alu(Ops.SUB, _next(edges.uop), _this(edges.uop))
        increasing = reduce(wrap(alu(Ops.CMPLE, const(0, steps.dtype, steps.shape), steps), a.device), Ops.MIN, None)
        if not element(increasing):
            raise ValueError("histogram: bins must increase monotonically, when an array")
    else:
        count = operator.index(bins)
        if count < 1:
            raise ValueError("histogram: bins must be positive, when an integer")
        edges = _uniform_edges(a, range, count)
    d = dtypes.promote_types(a.dtype, edges.dtype)
    values = wrap(cast_uop(flat.uop, d), a.device)
    e = cast_uop(edges.uop, d)
    n_bins = edges.shape[0] - 1
    if a.size * n_bins <= DIRECT_WORK:
        grid = (n_bins, a.size)
        x = _grid(values.uop, 1, grid)
        last = _grid(alu(Ops.CMPEQ, UOp(Ops.IOTA, dtypes.index, (), n_bins), n_bins - 1), 0, grid)
        member = alu(Ops.AND, alu(Ops.CMPEQ, _before_edge(x, _grid(_this(e), 0, grid), None), False),
                     _before_edge(x, _grid(_next(e), 0, grid), last))
        hist = _direct(member, None if w is None else w.uop)
    else:
        last = alu(Ops.CMPEQ, UOp(Ops.IOTA, dtypes.index, (), n_bins + 1), n_bins)
        hist = _between_edges(values, w, lambda s: lower_bound(s, e, lambda x, t: _before_edge(x, t, last)))
    if density:
        widths = cast_uop(alu(Ops.SUB, _next(edges.uop), _this(edges.uop)), dtypes.float64)
        total = reduce(wrap(cast_uop(hist, dtypes.float64), a.device), Ops.ADD, None)
        hist = alu(Ops.FDIV, alu(Ops.FDIV, cast_uop(hist, dtypes.float64), widths),
                   expand_uop(reshape_uop(total.uop, (1,)), (n_bins,)))
    elif w is None:
        hist = cast_uop(hist, dtypes.default_int)
    return wrap(hist, a.device), edges
