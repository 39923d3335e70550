"""Searching functions (array API section "Searching Functions"): `argmax`, `argmin` and
`count_nonzero`, lazy compositions of reductions.

`argmax` reduces twice: the maximum along the axis, then the least position that holds it (a MIN
over where(x == max, position, n)), so ties give the first occurrence. As in NumPy, a NaN is the
maximum and the minimum of any slice it is in, and the first NaN's position is the answer (the
max of a slice with a NaN is NaN, and there the positions that count are those of the NaNs).
Complex arrays raise TypeError (no order), empty slices ValueError (no position to give).
`count_nonzero` sums x != 0 (NaN counts: it is not 0) in the default integer dtype.

`nonzero` and `searchsorted` are not here yet: the first has a data-dependent shape, the second
needs sorted search."""
from __future__ import annotations

from typing import Any

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.elementwise import not_equal
from lazyarr.graph import alu, cast_uop, expand_uop, normalize_axis, reshape_uop
from lazyarr.manipulation import reshape
from lazyarr.statistics import reduce
from lazyarr.arrays import Array, wrap
from lazyarr.creation import as_tensor


def _arg_extreme(name: str, op: Ops, x: Any, axis: int | None, keepdims: bool) -> Array:
    x = as_tensor(x)
    if x.dtype.is_complex:
        raise TypeError(f"{name}: complex numbers have no order (take abs(), real() or imag() first)")
    flat = reshape(x, (-1,)) if axis is None else x
    ax = 0 if axis is None else normalize_axis(axis, x.ndim)
    n = flat.shape[ax]
    if n == 0:
        raise ValueError(f"{name}: attempt to get {name} of an empty sequence (axis {ax} has length 0)")
    u = flat.uop
    best = expand_uop(reduce(flat, op, ax, keepdims=True).uop, u.shape)
    hit = alu(Ops.CMPEQ, u, best)
    if x.dtype.is_float:   # where the extreme is NaN (a NaN in the slice), the NaNs are the hits
        hit = UOp(Ops.WHERE, dtypes.bool_, (alu(Ops.CMPNE, best, best), alu(Ops.CMPNE, u, u), hit))
    along = tuple(n if a == ax else 1 for a in range(len(u.shape)))
    position = expand_uop(reshape_uop(UOp(Ops.IOTA, dtypes.index, (), n), along), u.shape)
    candidates = alu(Ops.WHERE, hit, position, n)
    first = UOp(Ops.REDUCE_AXIS, dtypes.index, (candidates,), (Ops.MIN, (ax,)))
    if axis is None:
        shape = (1,) * x.ndim if keepdims else ()
    else:
        shape = first.shape if keepdims else tuple(s for a, s in enumerate(first.shape) if a != ax)
    return wrap(cast_uop(reshape_uop(first, shape), dtypes.default_int), x.device)


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """The position of the first maximum along `axis` (of the flattened array when None)."""
    return _arg_extreme("argmax", Ops.MAX, x, axis, keepdims)


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """The position of the first minimum along `axis` (of the flattened array when None)."""
    return _arg_extreme("argmin", Ops.MIN, x, axis, keepdims)


def count_nonzero(x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """The number of elements along `axis` (all when None) that are not zero."""
    x = as_tensor(x)
    nonzero = x if x.dtype.is_bool else not_equal(x, 0)
    return reduce(nonzero, Ops.ADD, axis, keepdims, dtypes.default_int)
