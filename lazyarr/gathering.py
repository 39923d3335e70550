"""Indexing by arrays of integers (array API "Indexing Functions" and NumPy's integer-array
indexing), on the GATHER primitive: the value at each output position is x at the positions the
index arrays hold there. The gather stays lazy and fuses with the work around it; its gradient is
a scatter-add (see `lazyarr.ops`).

The index arrays are realized when the gather is built, to check every index against the axis'
length (IndexError naming the index and the axis, as NumPy does); negative indices count from
the end. `x[...]` with integer arrays follows NumPy's rules: the arrays (and integers among them)
broadcast together; their result axes go where the first of them was when they are adjacent,
first otherwise; slices and None act on the other axes as in basic indexing.

A boolean mask in a key (`x[mask]`, `x[:, mask]`, `x[mask, idx]`) stands, as in NumPy, for the
index arrays of its nonzero elements (`searching.nonzero_positions`: the mask's count is
computed and read back, the positions stay lazy), over as many axes as the mask has; a 0-d
boolean adds an axis of length 1 (True) or 0 (False). A key of one mask and basic entries gathers
along the flattened masked axes with increasing positions, whose gradient is a gather too (see
`lazyarr.ops`' Gather).
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.graph import (alu, broadcast_shapes, cast_uop, const, expand_uop, gather_uop, lower_bound, normalize_axis,
                           reshape_uop)
from lazyarr.indexing import (check_assignable, fitted_mask, getitem as basic_getitem, getitem_int, getitem_new_axes,
                              new_axes_shape, setitem as indexing_setitem, setitem_int, value_node)
from lazyarr.arrays import Array, make_view, wrap
from lazyarr.creation import as_tensor
from lazyarr.searching import nonzero_positions, unravel_positions
from lazyarr.sorting import argsort


class _InRange:
    """An index array known to lie in its axis (from a mask's positions): no check, no read-back."""
    __slots__ = ("u",)

    def __init__(self, u: UOp):
        self.u = u


def is_index_array(k: Any) -> bool:
    """Whether a key entry is an array of indices (not a basic index)."""
    if isinstance(k, Array):
        return k.ndim > 0 or k.dtype.is_bool
    return isinstance(k, (list, np.ndarray, _InRange)) or (isinstance(k, (bool, np.bool_)))


def _checked_indices(idx: Any, n: int, axis: int, device: Any) -> UOp:
    """An integer index array as an int64 node with negative indices wrapped, after checking that
    every index lies in [-n, n). An empty list is an empty array of indices, as in NumPy."""
    if isinstance(idx, _InRange):
        return idx.u
    if isinstance(idx, list) and not np.asarray(idx, dtype=object).size:
        idx = np.asarray(idx, dtype=np.int64)
    t = as_tensor(idx, device)
    if not t.dtype.is_int:
        raise IndexError(f"arrays used as indices must be of integer type, not {t.dtype}")
    if t.device is not device:
        raise ValueError(f"indices are on {t.device.name}, the array on {device.name}")
    values = np.asarray(t)
    if values.size:
        lo, hi = int(values.min()), int(values.max())
        bad = lo if lo < -n else hi if hi >= n else None
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    u = cast_uop(t.uop, dtypes.int64)
    if values.size and int(values.min()) < 0:
        u = alu(Ops.WHERE, alu(Ops.CMPLT, u, 0), alu(Ops.ADD, u, n), u)
    return u


def _positions(n: int, out_shape: tuple[int, ...], axis: int) -> UOp:
    """0, 1, ..., n-1 along output axis `axis`, broadcast to the output's shape."""
    shape = tuple(n if a == axis else 1 for a in range(len(out_shape)))
    return expand_uop(reshape_uop(UOp(Ops.IOTA, dtypes.index, (), n), shape), out_shape)


def take(x: Array, indices: Any, /, axis: int | None = None) -> Array:
    """x's elements at integer `indices` along `axis` (of the flattened array when None, as
    NumPy's take). Indices of any shape, as NumPy's: it replaces the axis in the result's shape."""
    x = as_tensor(x)
    if axis is None:
        x, axis = wrap(reshape_uop(x.uop, (x.size,)), x.device), 0
    ax = normalize_axis(axis, x.ndim)
    idx = _checked_indices(indices, x.shape[ax], ax, x.device)
    if len(idx.shape) != 1:   # taken flat, then the indices' shape put in the axis's place
        flat = take(x, wrap(reshape_uop(idx, (math.prod(idx.shape),)), x.device), axis=ax)
        return wrap(reshape_uop(flat.uop, x.shape[:ax] + idx.shape + x.shape[ax + 1:]), x.device)
    out_shape = x.shape[:ax] + idx.shape + x.shape[ax + 1:]
    src = [expand_uop(reshape_uop(idx, tuple(m if a == ax else 1 for a, m in enumerate(out_shape))), out_shape)
           if a == ax else cast_uop(_positions(n, out_shape, a), dtypes.int64) for a, n in enumerate(out_shape)]
    return wrap(gather_uop(x.uop, src), x.device)


def take_along_axis(x: Array, indices: Any, /, *, axis: int = -1) -> Array:
    """x's elements at `indices` along `axis`, indices of x's shape but for that axis (broadcast)."""
    x = as_tensor(x)
    ax = normalize_axis(axis, x.ndim)
    t = as_tensor(indices, x.device)
    if t.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices have {t.ndim} dimensions, the array {x.ndim}")
    idx = _checked_indices(t, x.shape[ax], ax, x.device)
    out_shape = broadcast_shapes(tuple(1 if a == ax else n for a, n in enumerate(x.shape)), idx.shape)
    out_shape = tuple(idx.shape[a] if a == ax else n for a, n in enumerate(out_shape))
    src = [expand_uop(idx, out_shape) if a == ax else cast_uop(_positions(out_shape[a], out_shape, a), dtypes.int64)
           for a in range(x.ndim)]
    base = expand_uop(x.uop, tuple(out_shape[a] if a != ax else x.shape[ax] for a in range(x.ndim)))
    return wrap(gather_uop(base, src), x.device)


def getitem(x: Array, key: Any) -> Array:
    """x[key]: NumPy's integer-array indexing where the key holds index arrays, else basic indexing."""
    if type(key) is int and x.ndim:   # the commonest key
        out = getitem_int(x, key)
        return out if x.ndim == 1 else make_view(out, x, key)
    if type(key) is tuple and key and (shape := new_axes_shape(key, x.shape)) is not None:   # x[:, None]
        return make_view(getitem_new_axes(x, shape), x, key)
    if any(is_index_array(k) for k in (key if isinstance(key, tuple) else (key,))):
        return getitem_with_arrays(x, list(key) if isinstance(key, tuple) else [key])
    out = basic_getitem(x, key)
    if out.ndim == 0 and not any(k is Ellipsis for k in (key if isinstance(key, tuple) else (key,))):
        return out   # NumPy gives an element (a copy), not a 0-d view, unless the key holds an ellipsis
    return make_view(out, x, key)   # NumPy's basic indexing: a view


def _as_mask(k: Any, device: Any) -> Array | None:
    """Key entry k as a boolean array, if it is one (Python and NumPy bools included)."""
    if isinstance(k, Array):
        return k if k.dtype.is_bool else None
    if isinstance(k, (bool, np.bool_)) or (isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype == np.bool_):
        return as_tensor(np.asarray(k), device)
    return None


def _is_mask(k: Any) -> bool:
    return isinstance(k, Array) and k.dtype.is_bool


def _expand_masks(x: Array, key: list[Any]) -> tuple[Array, list[Any]]:
    """x and key with each boolean mask replaced by the index arrays of its nonzero elements (a
    0-d boolean: a new axis of x, indexed by [0] or []). Raises IndexError for a mask whose shape
    is not that of the axes it indexes."""
    masks = [k if _is_mask(k) else None for k in key]
    if not any(m is not None for m in masks):
        return x, key
    used = sum(m.ndim if m is not None else 0 if k is None or k is Ellipsis else 1 for k, m in zip(key, masks))
    if used > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {used} were indexed")
    out: list[Any] = []
    axis = 0
    for k, m in zip(key, masks):
        if k is Ellipsis:
            out.extend([slice(None)] * (x.ndim - used))
            axis += x.ndim - used
        elif m is None:
            out.append(k)
            axis += k is not None
        elif m.ndim == 0:   # a new axis of length 1, kept (True) or emptied (False)
            x = wrap(reshape_uop(x.uop, x.shape[:axis] + (1,) + x.shape[axis:]), x.device)
            out.append(_InRange(const(0, dtypes.int64, (1 if bool(m) else 0,))))
            axis += 1
        else:
            m = fitted_mask(x, axis, m)
            out.extend(_InRange(u) for u in unravel_positions(nonzero_positions(m), m.shape))
            axis += m.ndim
    return x, out


def _selection(x: Array, key: list[Any], mask: Array) -> Array:
    """x[key] for a key of one mask (of at least one axis) and slices, None and Ellipsis: a gather
    along the flattened masked axes at the mask's increasing positions."""
    used = mask.ndim + sum(1 for k in key if k is not None and k is not Ellipsis and not _is_mask(k))
    if used > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {used} were indexed")
    fill = [slice(None)] * (x.ndim - used)
    if not any(k is Ellipsis for k in key):
        key = key + [Ellipsis]
    full = [e for k in key for e in (fill if k is Ellipsis else [k])]
    at = next(i for i, k in enumerate(full) if _is_mask(k))
    before, after = full[:at], full[at + 1:]
    axis = sum(1 for k in before if k is not None)   # x's first masked axis
    mask = fitted_mask(x, axis, mask)
    y = basic_getitem(x, tuple(before + [slice(None)] * mask.ndim + after))
    d = len(before)   # y's first masked axis
    n = math.prod(mask.shape)
    flat = reshape_uop(y.uop, y.shape[:d] + (n,) + y.shape[d + mask.ndim:])
    p = nonzero_positions(mask)
    out_shape = flat.shape[:d] + p.shape + flat.shape[d + 1:]
    idx = [expand_uop(reshape_uop(p, tuple(m if a == d else 1 for a, m in enumerate(out_shape))), out_shape) if a == d
           else cast_uop(_positions(m, out_shape, a), dtypes.int64) for a, m in enumerate(out_shape)]
    return wrap(gather_uop(flat, idx, increasing_axis=d), x.device)


def getitem_with_arrays(x: Array, key: list[Any]) -> Array:
    """x[key] where some entries are integer arrays or boolean masks (NumPy's advanced indexing)."""
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    key = [k if m is None else m for k, m in zip(key, (_as_mask(k, x.device) for k in key))]   # masks as arrays
    masks = [k for k in key if _is_mask(k)]
    if len(masks) == 1 and masks[0].ndim and all(k is None or k is Ellipsis or isinstance(k, slice) or _is_mask(k)
                                                  for k in key):
        return _selection(x, key, masks[0])
    x, key = _expand_masks(x, key)
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {used} were indexed")
    ellipsis = [i for i, k in enumerate(key) if k is Ellipsis]
    if ellipsis:
        i = ellipsis[0]
        key = key[:i] + [slice(None)] * (x.ndim - used) + key[i + 1:]
    else:
        key = key + [slice(None)] * (x.ndim - used)
    advanced = [i for i, k in enumerate(key) if is_index_array(k) or (k is not None and not isinstance(k, slice))]
    # basic indexing first, keeping the advanced axes whole; then where each axis of the result is
    basic = [slice(None) if i in advanced else k for i, k in enumerate(key)]
    y = basic_getitem(x, tuple(basic))
    dims, d = [], 0   # the axis of y each key entry (but None) refers to
    for k in basic:
        if k is None:
            d += 1
            continue
        dims.append(d)
        d += 1
    entry_axis = {}
    j = 0
    for i, k in enumerate(key):
        if k is None:
            continue
        entry_axis[i] = j
        j += 1
    adv_dims = [dims[entry_axis[i]] for i in advanced]
    idx = [_checked_indices(key[i] if is_index_array(key[i]) else operator.index(key[i]),
                            x.shape[entry_axis[i]], entry_axis[i], x.device) for i in advanced]
    b_shape = broadcast_shapes(*(u.shape for u in idx))
    adjacent = adv_dims == list(range(adv_dims[0], adv_dims[0] + len(adv_dims)))
    rest = [a for a in range(y.ndim) if a not in adv_dims]
    insert_at = sum(1 for a in rest if a < adv_dims[0]) if adjacent else 0
    out_shape = tuple(y.shape[a] for a in rest[:insert_at]) + b_shape + tuple(y.shape[a] for a in rest[insert_at:])
    nb = len(b_shape)
    src = []
    for a in range(y.ndim):
        if a in adv_dims:
            u = idx[adv_dims.index(a)]
            padded = (1,) * (nb - len(u.shape)) + u.shape   # broadcast against the other index arrays
            u = reshape_uop(u, (1,) * insert_at + padded + (1,) * (len(out_shape) - insert_at - nb))
            src.append(expand_uop(u, out_shape))
        else:
            pos = rest.index(a)
            out_axis = pos if pos < insert_at else pos + nb
            src.append(cast_uop(_positions(y.shape[a], out_shape, out_axis), dtypes.int64))
    return wrap(gather_uop(y.uop, src), x.device)


# ---- writes through index arrays ---------------------------------------------------------------

def _basic_key(key: Any) -> bool:
    """A key of no index arrays (indexing.setitem's, as is a whole-key mask with a scalar value)."""
    entries = key if isinstance(key, tuple) else (key,)
    return not any(is_index_array(k) for k in entries)


def selected_positions(x: Array, key: Any, value_shape: tuple[int, ...]) -> Array:
    """x's flat positions that `key` selects (int64, of x[key]'s shape; the key's checks and
    errors are getitem's), after checking that a value of `value_shape` broadcasts to them
    (NumPy's ValueError otherwise): what a write through `key` writes where."""
    positions = getitem(wrap(reshape_uop(cast_uop(UOp(Ops.IOTA, dtypes.index, (), x.size), dtypes.int64), x.shape),
                             x.device), key)
    try:
        target = broadcast_shapes(value_shape, positions.shape)
    except ValueError:
        target = None
    if target != positions.shape:
        raise ValueError(f"shape mismatch: value array of shape {value_shape} could not be broadcast to indexing "
                         f"result of shape {positions.shape}")
    return positions


def setitem(x: Array, key: Any, value: Any) -> None:
    """`x[key] = value` for every key getitem takes, with NumPy's semantics: value broadcasts to
    x[key]'s shape, and where the key names an element several times the last write wins
    (`x[idx] += v` is `x[idx] = x[idx] + v`: duplicates add once). Lazy: the positions the key
    selects (x's positions gathered through the key) are sorted, and each element of x finds the
    last write to it by a binary search among them."""
    if type(key) is int and x.ndim:   # the commonest key
        setitem_int(x, key, value)
        return
    if _basic_key(key) or (_is_whole_mask(key) and _is_scalar_value(value)):
        indexing_setitem(x, key, value)
        return
    check_assignable(x)
    n = x.size
    v = value_node(x, value)
    positions = selected_positions(x, key, v.shape)
    m = positions.size
    if m == 0:
        return
    p = reshape_uop(positions.uop, (m,))
    values = reshape_uop(expand_uop(v, positions.shape), (m,))
    order = cast_uop(argsort(wrap(p, x.device)).uop, dtypes.int64)
    s = gather_uop(p, [order])
    here = cast_uop(UOp(Ops.IOTA, dtypes.index, (), n), dtypes.int64)
    written = lower_bound(s, here, lambda e, t: alu(Ops.CMPLE, e, t))   # writes to positions ≤ here
    last = alu(Ops.MAX, alu(Ops.SUB, written, 1), 0)                     # the last of them, in order
    hit = alu(Ops.AND, alu(Ops.CMPLT, 0, written), alu(Ops.CMPEQ, gather_uop(s, [last]), here))
    new = alu(Ops.WHERE, hit, gather_uop(values, [gather_uop(order, [last])]), reshape_uop(x.uop, (n,)))
    x.rebind(reshape_uop(new, x.shape))


def _is_whole_mask(key: Any) -> bool:
    return (isinstance(key, Array) and key.dtype.is_bool) or (isinstance(key, np.ndarray) and key.dtype == np.bool_)


def _is_scalar_value(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex)) or (isinstance(value, Array) and value.ndim == 0)
