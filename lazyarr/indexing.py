"""Indexing (array API section "Indexing"): basic indexing with integers, slices of any step,
`None`, `Ellipsis` and fewer indices than dimensions, as movement ops.

A slice becomes a shrink to the elements it covers, a flip when its step is negative, and, when
the step's magnitude k is more than 1, a pad to a multiple of k, a reshape to (count, k) and a
shrink to the first column. An integer is a shrink to one element and a reshape that drops the
axis; `None` is a reshape that adds one. Nothing is computed; the result is a view of x's graph.

Integer arrays as indices are gathers (`lazyarr.gathering`, above this module, whose `getitem`
takes every key and hands basic ones to this one's); boolean masks are not supported
yet in reads (they raise IndexError saying so).

Assignment (`x[key] = value`, `setitem`) is lazy too: the value is broadcast to the view's shape,
moved into x's positions by the inverse movement ops (a reshape that restores dropped axes, pads
that spread strided elements apart, flips, and a pad to x's shape), and x's node is rebound to
`where(selected, value, old value)`. Other arrays holding x's old node keep the old value.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp, native_module
from lazyarr.creation import asarray
from lazyarr.arrays import Array, check_writable, grad_mode, is_broadcast_view, mark_broadcast_view, wrap
from lazyarr.graph import (alu, broadcast_shapes, cast_uop, const, expand_uop, flip_uop, pad_uop, reshape_uop,
                           shaped, shrink_uop)


def _is_int_key(k: Any) -> bool:
    if isinstance(k, bool) or isinstance(k, np.bool_):
        return False
    if isinstance(k, (Array, np.ndarray)):
        return k.ndim == 0 and k.dtype.kind in "iu"
    return isinstance(k, (int, np.integer)) or (hasattr(k, "__index__") and not isinstance(k, (list, tuple)))


def normalize_key(key: Any, ndim: int, assigning: bool = False) -> list[Any]:
    """The key as a list with one entry per axis of x (ints and slices) plus None entries.
    Raises IndexError for too many indices, several ellipses, or unsupported entries (index
    arrays are `lazyarr.gathering`'s, in reads and writes)."""
    key = list(key) if isinstance(key, tuple) else [key]
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice) or _is_int_key(k):
            continue
        raise IndexError(_bad_entry(k, assigning))
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key[i:i + 1] = [slice(None)] * (ndim - used)
        return key
    return key + [slice(None)] * (ndim - used)


def _bad_entry(k: Any, assigning: bool) -> str:
    """The IndexError message for a key entry that is not a basic index."""
    dtype = k.dtype if isinstance(k, (Array, np.ndarray, np.generic)) else None
    if dtype is not None and dtype.kind not in "iub":
        return f"arrays used as indices must be of integer (or boolean) type, not {dtype}"
    if assigning and (dtype is not None or isinstance(k, (list, bool, np.bool_))):
        return ("assigning through integer-array indices (or a boolean mask other than the whole key) is not "
                "supported yet; use a boolean mask over the leading axes, or where()")
    kind = "a boolean" if isinstance(k, (bool, np.bool_)) else type(k).__name__
    return (f"only integers, slices (`:`), ellipsis (`...`), None and integer or boolean arrays are valid "
            f"indices; got {kind}")


def _position(k: Any, n: int, axis: int) -> int:
    """Integer index k of an axis of length n as a position in it, 0 <= position < n; IndexError
    when it is out of bounds, as NumPy's."""
    i = operator.index(k)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return i % n


_record_index = getattr(native_module, "record_index", None)   # (record_native.c; set up by lazyarr.elementwise)


def getitem_int(x: Array, i: int) -> Array:
    """x[i] for a Python int i and x of at least one axis: `getitem`'s graph, without its general
    bookkeeping (a loop reads `state[0]` every iteration), recorded in C where it can be."""
    out = NotImplemented if _record_index is None else _record_index(x, i)
    if out is NotImplemented:   # (also an index out of range: its error below)
        shape = x.shape
        n = shape[0]
        i = _position(i, n, 0)
        u, rest = x.uop, shape[1:]
        if n != 1:   # (shapes known here, without the shape rules)
            u = shaped(UOp(Ops.SHRINK, u.dtype, (u,), ((i, i + 1),) + tuple((0, m) for m in rest)), (1,) + rest)
        u = shaped(UOp(Ops.RESHAPE, u.dtype, (u,), rest), rest)
        out = wrap(u, x.device)
    if is_broadcast_view(x):
        mark_broadcast_view(out)
    return out


def new_axes_shape(key: tuple, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape of x[key] when the key holds whole slices (`:`) and Nones alone (`x[:, None]`,
    `v[None, :]`: new axes, a reshape), or None for any other key."""
    out, axis = [], 0
    for k in key:
        if k is None:
            out.append(1)
        elif type(k) is slice and k.start is None and k.stop is None and k.step is None and axis < len(shape):
            out.append(shape[axis])
            axis += 1
        else:
            return None
    return tuple(out) + shape[axis:]


def getitem_new_axes(x: Array, shape: tuple[int, ...]) -> Array:
    """x[key] for a key `new_axes_shape` gave `shape` for: `getitem`'s graph, without its general
    bookkeeping (a loop broadcasts with `x[:, None]` every iteration)."""
    out = wrap(reshape_uop(x.uop, shape), x.device)
    if is_broadcast_view(x):
        mark_broadcast_view(out)
    return out


def getitem(x: Array, key: Any) -> Array:
    """x[key] for a basic key (integers, slices, None, Ellipsis); keys with integer arrays are
    `lazyarr.gathering.getitem`'s."""
    entries = normalize_key(key, x.ndim)
    shape = x.shape
    bounds, flips, steps, out_shape = [], [], [], []
    axis = 0
    for k in entries:
        if k is None:
            out_shape.append(1)
            continue
        n = shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            count = len(range(start, stop, step))
            if count == 0:
                bounds.append((0, 0))
            elif step > 0:
                bounds.append((start, start + (count - 1) * step + 1))
            else:
                bounds.append((start + (count - 1) * step, start + 1))
            if step < 0:
                flips.append(axis)
            steps.append((abs(step), count))
            out_shape.append(count)
        else:
            i = _position(k, n, axis)
            bounds.append((i, i + 1))
            steps.append((1, 1))
        axis += 1
    u = shrink_uop(x.uop, bounds)
    u = flip_uop(u, flips)
    if any(k > 1 and c > 1 for k, c in steps):
        u = pad_uop(u, [(0, c * k - ((c - 1) * k + 1)) if k > 1 and c > 1 else (0, 0) for k, c in steps])
        split = tuple(v for (k, c), n in zip(steps, u.shape) for v in ((c, k) if k > 1 and c > 1 else (n, 1)))
        u = reshape_uop(u, split)
        u = shrink_uop(u, [b for (k, c), n in zip(steps, u.shape[::2]) for b in ((0, n), (0, 1))])
    out = wrap(reshape_uop(u, tuple(out_shape)), x.device)
    if is_broadcast_view(x):   # a view of a read-only broadcast is read-only, as in NumPy
        mark_broadcast_view(out)
    return out


# ---- assignment ------------------------------------------------------------------------------

def check_assignable(x: Array) -> None:
    """Raises for an assignment into a read-only view, or into a leaf that requires grad (outside
    no_grad)."""
    check_writable(x, "assignment destination")
    if x._leaf_grad and not grad_mode.disabled:
        raise RuntimeError("a leaf tensor that requires grad is being assigned to; do it under no_grad()")


def value_node(x: Array, value: Any) -> UOp:
    """`value` (a Python scalar or an array) as a node of x's dtype, on x's device."""
    d = x.dtype
    if isinstance(value, Array):
        if value.device is not x.device:
            raise ValueError(f"cannot assign an array on {value.device.name} into an array on {x.device.name}")
        v = value
    elif isinstance(value, (bool, int, float, complex)):
        if isinstance(value, complex) and not d.is_complex:
            raise TypeError(f"cannot assign a complex value to an array of {d}")
        if d.is_int and isinstance(value, int) and not isinstance(value, bool):
            dtypes.check_scalar_fits(value, d)
        if d.is_int and isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"cannot convert float {value} to integer")
        return UOp.const(d, value if not (d.is_int and isinstance(value, float)) else int(value))
    else:
        v = asarray(value, device=x.device)
    if v.dtype.is_complex and not d.is_complex:
        raise TypeError(f"cannot assign complex values to an array of {d}")
    return cast_uop(v.uop, d)


def _broadcast_value(v: UOp, shape: tuple[int, ...]) -> UOp:
    try:
        out = broadcast_shapes(v.shape, shape)
    except ValueError:
        out = None
    if out != shape:
        raise ValueError(f"could not broadcast input array from shape {v.shape} into shape {shape}")
    return expand_uop(v, shape)


def setitem_int(x: Array, i: int, value: Any) -> None:
    """`x[i] = value` for a Python int i and x of at least one axis: `setitem`'s graph, without its
    general bookkeeping (a loop writes `traj[i] = state` every iteration)."""
    shape = x.shape
    if shape[0] == 1:   # (selected by a pad, not by position)
        setitem(x, (i,), value)
        return
    check_assignable(x)
    v = value_node(x, value)
    i = _position(i, shape[0], 0)
    rest = shape[1:]
    if v.shape != rest:
        v = _broadcast_value(v, rest)
    v = expand_uop(reshape_uop(v, (1,) + rest), shape)
    x.rebind(_written_row(x.uop, _position_is(shape, 0, i), v))


def _written_row(old: UOp, selected: UOp, value: UOp) -> UOp:
    """where(selected, value, old), its shape known here."""
    return shaped(UOp(Ops.WHERE, old.dtype, (selected, value, old)), old.shape)


def setitem(x: Array, key: Any, value: Any) -> None:
    """`x[key] = value`, lazily: x's node is rebound to `where(selected, value, old)`, where value is
    moved into place by the inverse of the view's movement ops (pads, flips and strides).
    Supports the keys `getitem` does and boolean masks over x's leading axes (with a scalar or
    0-d value). Raises IndexError for bad keys, ValueError when value does not broadcast, and
    RuntimeError for a leaf that requires grad (outside no_grad), as `Tensor.assign` does."""
    check_assignable(x)
    v = value_node(x, value)
    mask = _boolean_key(x, key)
    if mask is not None:
        if v.shape != ():
            raise ValueError(f"assigning through a boolean mask needs a scalar or 0-d value, got shape {v.shape}")
        sel = expand_uop(reshape_uop(mask, mask.shape + (1,) * (x.ndim - len(mask.shape))), x.shape)
        x.rebind(UOp(Ops.WHERE, x.dtype, (sel, expand_uop(v, x.shape), x.uop)))
        return
    entries = normalize_key(key, x.ndim, assigning=True)
    picks: list[tuple[int, int, int, bool]] = []   # per axis of x: start, step, count, kept in the view
    view_shape, axis_of_view = [], []
    axis = 0
    for k in entries:
        if k is None:
            view_shape.append(1)
            axis_of_view.append(None)
            continue
        n = x.shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            count = len(range(start, stop, step))
            picks.append((start, step, count, True))
            view_shape.append(count)
            axis_of_view.append(axis)
        else:
            picks.append((_position(k, n, axis), 1, 1, False))
        axis += 1
    v = _broadcast_value(v, tuple(view_shape))
    if any(c == 0 for _, _, c, _ in picks):
        return  # nothing selected
    # the value in the space of x's axes: None axes dropped, integer axes of length 1
    v = reshape_uop(v, tuple(c for _, _, c, _ in picks))
    sel = UOp.const(dtypes.bool_, True)
    sel = expand_uop(sel, v.shape)
    flips = [a for a, (_, step, c, _) in enumerate(picks) if step < 0 and c > 1]
    v, sel = flip_uop(v, flips), flip_uop(sel, flips)
    # an integer index of a longer axis selects by position (iota == i, i a kernel argument), so a
    # loop writing row i (`traj[i] = state`) builds one graph for every i; slices pad into place
    by_position = [a for a, (_, _, _, kept) in enumerate(picks) if not kept and x.shape[a] > 1]
    lows = []
    for a, (start, step, c, _) in enumerate(picks):
        k = abs(step)
        lows.append(0 if a in by_position else start + (c - 1) * step if step < 0 else start)
        if k > 1 and c > 1:
            v, sel = _unstride(v, a, k), _unstride(sel, a, k)
    pads = [(lo, n - lo - s) if a not in by_position else (0, 0)
            for a, (lo, n, s) in enumerate(zip(lows, x.shape, v.shape))]
    everywhere = not flips and all(p == (0, 0) for p in pads) and all(abs(st) == 1 or c == 1 for _, st, c, _ in picks)
    v, sel = expand_uop(pad_uop(v, pads), x.shape), expand_uop(pad_uop(sel, pads), x.shape)
    for a in by_position:   # (the first one alone where the rest selects everywhere: setitem_int's graph)
        at = _position_is(x.shape, a, picks[a][0])
        sel, everywhere = at if everywhere else alu(Ops.AND, sel, at), False
    x.rebind(_written_row(x.uop, sel, v))


_positions: dict[tuple[tuple[int, ...], int], UOp] = {}   # (shape, axis) -> the positions along axis


def _position_is(shape: tuple[int, ...], axis: int, i: int) -> UOp:
    """The bool node of `shape` that is true where the index along `axis` is i."""
    at = _positions.get((shape, axis))
    if at is None:
        n = shape[axis]
        at = reshape_uop(cast_uop(UOp(Ops.IOTA, dtypes.index, (), n), dtypes.int64),
                         (1,) * axis + (n,) + (1,) * (len(shape) - axis - 1))
        at = expand_uop(at, shape)
        if len(_positions) >= 256:
            _positions.clear()
        _positions[(shape, axis)] = at
    return alu(Ops.CMPEQ, at, const(i, dtypes.int64, shape))


def _unstride(u: UOp, axis: int, k: int) -> UOp:
    """u's elements along `axis` spread k apart (k-1 zeros between them): the inverse of a stride."""
    s, c = u.shape, u.shape[axis]
    u = reshape_uop(u, s[:axis] + (c, 1) + s[axis + 1:])
    u = pad_uop(u, [(0, 0)] * (axis + 1) + [(0, k - 1)] + [(0, 0)] * (len(s) - axis - 1))
    u = reshape_uop(u, s[:axis] + (c * k,) + s[axis + 1:])
    return shrink_uop(u, [(0, n) if i != axis else (0, (c - 1) * k + 1) for i, n in enumerate(u.shape)])


def _boolean_key(x: Array, key: Any) -> UOp | None:
    """The node of a boolean-array key (over x's leading axes), or None for other keys."""
    if isinstance(key, np.ndarray) and key.dtype == np.bool_:
        key = asarray(key, device=x.device)
    if not (isinstance(key, Array) and key.dtype.is_bool):
        return None
    if key.ndim > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {key.ndim} were indexed")
    return fitted_mask(x, 0, key).uop


def fitted_mask(x: Array, axis: int, mask: Array) -> Array:
    """The mask, of the shape of x's axes from `axis` on. An axis of length 0 fits any (it selects
    nothing, as in NumPy and the standard), any other length that differs raises NumPy's
    IndexError; a mask on another device raises ValueError."""
    axes = x.shape[axis:axis + mask.ndim]
    for a, (n, got) in enumerate(zip(axes, mask.shape)):
        if n != got and got != 0:
            raise IndexError(f"boolean index did not match indexed array along axis {axis + a}; size of "
                             f"axis is {n} but size of corresponding boolean axis is {got}")
    if mask.device is not x.device:
        raise ValueError(f"the mask is on {mask.device.name}, the array on {x.device.name}")
    return mask if mask.shape == axes else wrap(const(False, dtypes.bool_, axes), x.device)

