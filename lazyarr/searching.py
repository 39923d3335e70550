"""Searching functions (array API section "Searching Functions"): `argmax`, `argmin` and
`count_nonzero`, lazy compositions of reductions.

`argmax` reduces twice: the maximum along the axis, then the least position that holds it (a MIN
over where(x == max, position, n)), so ties give the first occurrence. As in NumPy, a NaN is the
maximum and the minimum of any slice it is in, and the first NaN's position is the answer (the
max of a slice with a NaN is NaN, and there the positions that count are those of the NaNs).
Complex arrays raise TypeError (no order), empty slices ValueError (no position to give).
`count_nonzero` sums x != 0 (NaN counts: it is not 0) in the default integer dtype.

`searchsorted` is a binary search (`graph.lower_bound`): log2(n) + 1 gathers per value, all in
one kernel, in the order `sort` gives (NaNs last). `nonzero` has a data-dependent shape: the
running count of the nonzero elements (a scan) and their total are computed first, and the
total read back (one element: the only place these functions wait); the positions are then a
lazy binary search of 1, 2, ..., total in the running count, unravelled into one index array per
axis. NumPy's one-argument `where`, `argwhere` and `flatnonzero` are compositions of it, and
`digitize` of searchsorted."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.conversion import element
from lazyarr.elementwise import not_equal, where as _where3
from lazyarr.graph import (alu, cast_uop, const, expand_uop, flip_uop, gather_uop, lower_bound, normalize_axis,
                           reshape_uop, shaped, shrink_uop, sorts_before)
from lazyarr.manipulation import reshape, stack
from lazyarr.statistics import reduce_uop, scan_uop, reduce
from lazyarr.arrays import Array, realize, wrap
from lazyarr.creation import as_tensor


def _arg_extreme(name: str, op: Ops, x: Any, axis: int | None, keepdims: bool) -> Array:
    x = x if type(x) is Array.made else as_tensor(x)
    if x.dtype.is_complex:
        raise TypeError(f"{name}: complex numbers have no order (take abs(), real() or imag() first)")
    flat = reshape(x, (-1,)) if axis is None else x
    u = flat.uop
    full = u.shape   # (every node below built valid, its shape set: no shape rule to run)
    ax = 0 if axis is None else normalize_axis(axis, len(full))
    n = full[ax]
    if n == 0:
        raise ValueError(f"{name}: attempt to get {name} of an empty sequence (axis {ax} has length 0)")
    kept = full[:ax] + (1,) + full[ax + 1:]
    best = expand_uop(reduce_uop(flat, op, ax, True, None), full)
    hit = shaped(UOp(Ops.CMPEQ, dtypes.bool_, (u, best)), full)
    if u.dtype.is_float:   # where the extreme is NaN (a NaN in the slice), the NaNs are the hits
        hit = shaped(UOp(Ops.WHERE, dtypes.bool_, (shaped(UOp(Ops.CMPNE, dtypes.bool_, (best, best)), full),
                                                    shaped(UOp(Ops.CMPNE, dtypes.bool_, (u, u)), full), hit)), full)
    position = shaped(UOp(Ops.IOTA, dtypes.index, (), n), (n,))
    if len(full) > 1:
        position = expand_uop(reshape_uop(position, (1,) * ax + (n,) + (1,) * (len(full) - ax - 1)), full)
    candidates = shaped(UOp(Ops.WHERE, dtypes.index, (hit, position, const(n, dtypes.index, full))), full)
    first = shaped(UOp(Ops.REDUCE_AXIS, dtypes.index, (candidates,), (Ops.MIN, (ax,))), kept)
    if axis is None:
        shape = (1,) * x.ndim if keepdims else ()
    else:
        shape = kept if keepdims else full[:ax] + full[ax + 1:]
    return wrap(cast_uop(reshape_uop(first, shape), dtypes.default_int), x.device)


def argmax(x: Array, /, axis: int | None = None, *, keepdims: bool = False) -> Array:
    """The position of the first maximum along `axis` (of the flattened array when None)."""
    return _arg_extreme("argmax", Ops.MAX, x, axis, keepdims)


def argmin(x: Array, /, axis: int | None = None, *, keepdims: bool = False) -> Array:
    """The position of the first minimum along `axis` (of the flattened array when None)."""
    return _arg_extreme("argmin", Ops.MIN, x, axis, keepdims)


def count_nonzero(x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """The number of elements along `axis` (all when None) that are not zero."""
    x = as_tensor(x)
    nonzero = x if x.dtype.is_bool else not_equal(x, 0)
    return reduce(nonzero, Ops.ADD, axis, keepdims, dtypes.default_int)


# ---- searchsorted -----------------------------------------------------------------------------

def _before(side: str):
    """`before(e, v)` for a search: e < v (side left) or e <= v (right), in the order sort gives."""
    if side == "left":
        return sorts_before
    return lambda e, v: alu(Ops.CMPEQ, sorts_before(v, e), False)


def searchsorted(x1: Array, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Array:
    """The positions at which the values of `x2` would be inserted into the sorted 1-D `x1` to keep
    it sorted: before equal elements (side "left") or after them ("right"). `sorter`: the indices
    that sort `x1`, when it is not sorted itself. Default integer dtype, of x2's shape."""
    x1 = as_tensor(x1)
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-dimensional, got {x1.ndim} dimensions")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if x1.dtype.is_complex or (isinstance(x2, Array) and x2.dtype.is_complex) or isinstance(x2, complex):
        raise TypeError("searchsorted: complex numbers have no order")
    n = x1.shape[0]
    a = x1.uop
    if sorter is not None:
        order = as_tensor(sorter, x1.device)
        if not order.dtype.is_int:
            raise TypeError(f"searchsorted: sorter must be an integer array, not {order.dtype}")
        if order.shape != x1.shape:
            raise ValueError(f"searchsorted: sorter has shape {order.shape}, x1 {x1.shape}")
        values = np.asarray(order)
        if values.size and (values.min() < 0 or values.max() >= n):
            raise ValueError("searchsorted: sorter index out of range")
        a = gather_uop(a, [cast_uop(order.uop, dtypes.int64)])
    if isinstance(x2, Array) or not dtypes.scalar_kind(x2):
        x2 = as_tensor(x2, x1.device)
        if x2.device is not x1.device:
            raise ValueError(f"searchsorted: x1 is on {x1.device.name}, x2 on {x2.device.name}")
        dtype = dtypes.promote_types(x1.dtype, x2.dtype)
        values_u = cast_uop(x2.uop, dtype)
    else:   # a Python scalar takes x1's dtype where its kind fits (the standard's mixing rules)
        dtype = dtypes.weak_result(x1.dtype, x2)
        dtypes.check_scalar_fits(x2, dtype)
        values_u = const(x2, dtype)
    found = lower_bound(cast_uop(a, dtype), values_u, _before(side))
    return wrap(cast_uop(found, dtypes.default_int), x1.device)


def digitize(x: Any, bins: Any, right: bool = False) -> Array:
    """NumPy's digitize: the index of the bin of `bins` (1-D, increasing or decreasing) each
    element of x falls in; `right`: bins include their right edge instead of their left."""
    b = as_tensor(bins)
    if b.ndim != 1:
        raise ValueError("digitize: bins must be 1-dimensional")
    x = as_tensor(x, b.device)
    if b.shape[0] < 2:
        return searchsorted(b, x, side="left" if right else "right")
    steps = alu(Ops.SUB, shrink_uop(b.uop, [(1, b.shape[0])]), shrink_uop(b.uop, [(0, b.shape[0] - 1)]))
    zero = const(0, b.dtype, steps.shape)
    up = reduce(wrap(alu(Ops.CMPLE, zero, steps), b.device), Ops.MIN, None)      # every step ≥ 0
    down = reduce(wrap(alu(Ops.CMPLE, steps, zero), b.device), Ops.MIN, None)    # every step ≤ 0
    realize(up, down)
    side = "left" if right else "right"
    if element(up):
        return searchsorted(b, x, side=side)
    if element(down):
        flipped = wrap(flip_uop(b.uop, (0,)), b.device)
        return wrap(alu(Ops.SUB, b.shape[0], searchsorted(flipped, x, side=side).uop, dtype=dtypes.default_int), b.device)
    raise ValueError("digitize: bins must be monotonically increasing or decreasing")


# ---- nonzero: a data-dependent shape ------------------------------------------------------------

def nonzero_positions(x: Array) -> UOp:
    """The flat positions (int64, increasing) of x's nonzero elements, in row-major order. Computes
    the running count and the total first and reads the total back (one element)."""
    flat = reshape(x, (-1,))
    n = flat.shape[0]
    if n == 0:
        return const(0, dtypes.int64, (0,))
    hit = flat.uop if flat.dtype.is_bool else not_equal(flat, 0).uop
    ones = cast_uop(hit, dtypes.int64)
    counts, total = wrap(scan_uop(ones, Ops.ADD, 0), x.device), reduce(wrap(ones, x.device), Ops.ADD, None)
    realize(counts, total)
    k = int(element(total))
    targets = alu(Ops.ADD, cast_uop(UOp(Ops.IOTA, dtypes.index, (), k), dtypes.int64), 1)
    return lower_bound(counts.uop, targets, lambda e, t: alu(Ops.CMPLT, e, t))


def unravel_positions(flat: UOp, shape: tuple[int, ...]) -> list[UOp]:
    """Flat row-major positions as one index node per axis of `shape`."""
    out, stride = [], 1
    for n in reversed(shape):
        q = flat if stride == 1 else alu(Ops.IDIV, flat, stride)
        out.append(q if stride * n == math.prod(shape) else alu(Ops.MOD, q, n))
        stride *= n
    return out[::-1]


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """The indices of x's nonzero elements, one array per axis, in row-major order (a complex
    element is nonzero when either part is). Raises ValueError for a 0-d array."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("nonzero: calling nonzero on 0-dimensional arrays is not allowed (use atleast_1d)")
    flat = nonzero_positions(x)
    return tuple(wrap(cast_uop(u, dtypes.default_int), x.device) for u in unravel_positions(flat, x.shape))


def flatnonzero(a: Any) -> Array:
    """NumPy's flatnonzero: the positions of the nonzero elements of a, flattened."""
    a = as_tensor(a)
    return wrap(cast_uop(nonzero_positions(a), dtypes.default_int), a.device)


def argwhere(a: Any) -> Array:
    """NumPy's argwhere: the indices of the nonzero elements, one row per element."""
    a = as_tensor(a)
    if a.ndim == 0:   # NumPy: a (k, 0) array, k = 1 for a nonzero value
        return wrap(const(0, dtypes.default_int, (int(element(a) != 0), 0)), a.device)
    return stack(nonzero(a), axis=-1)


_MISSING = object()


def where(condition: Any, x1: Any = _MISSING, x2: Any = _MISSING, /) -> Array | tuple[Array, ...]:
    """x1 where condition is true, x2 elsewhere (the standard's where); NumPy's one-argument
    where(condition) is nonzero(condition)."""
    if x1 is _MISSING and x2 is _MISSING:
        return nonzero(condition)
    if x1 is _MISSING or x2 is _MISSING:
        raise ValueError("where: either both or neither of x1 and x2 should be given")
    return _where3(condition, x1, x2)
