"""Manipulation functions (array API section "Manipulation Functions"): compositions of the
movement ops (reshape, permute, expand, pad, shrink, flip), which rangeify turns into index
arithmetic inside the kernels that read them; joins and rolls (concat, stack, roll) also select
between their padded pieces by position (a WHERE on a mask of positions), computed where read."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp, native_module
from lazyarr.dtypes import DType
from lazyarr.graph import broadcast_shapes as graph_broadcast_shapes
from lazyarr.graph import (cast_uop, check_dimensions, const, expand_uop, flip_uop, gather_uop, normalize_axes,
                           normalize_axis, permute_uop, reshape_uop, shaped)
from lazyarr.creation import empty
from lazyarr.arrays import Array, layout_strides, make_view, mark_broadcast_view, reshape_needs_no_copy, wrap
from lazyarr.creation import as_tensor, asarray

def _shape_arg(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        return check_dimensions((operator.index(shape),))
    try:
        return check_dimensions(tuple(operator.index(s) for s in shape))
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers, got {shape!r}") from None


def resolve_shape(size: int, shape: Any) -> tuple[int, ...]:
    """`shape` with its -1 filled in so that it holds `size` elements. Raises ValueError."""
    shape = _shape_arg(shape)
    if sum(1 for s in shape if s == -1) > 1:
        raise ValueError("can only specify one unknown dimension (-1)")
    if any(s < -1 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


def reshape(x: Array, /, shape: Any, *, copy: bool | None = None) -> Array:
    """x with the same elements, in row-major order, in a new shape (one length may be -1): a view
    of x where its elements are evenly spaced enough (NumPy's rule), else a copy (`copy=True`: a
    copy always; `copy=False`: ValueError where a view cannot be)."""
    x = as_tensor(x)
    shape = resolve_shape(x.size, shape)
    out = wrap(reshape_uop(x.uop, shape), x.device)
    if copy:
        return out
    if reshape_needs_no_copy(x, shape):
        return make_view(out, x)
    if copy is False:
        raise ValueError(f"reshape: a view of this array (shape {x.shape}, strides {layout_strides(x)}) in shape "
                         f"{shape} would need a copy, and copy=False")
    return out


def permute_dims(x: Array, /, axes: Sequence[int]) -> Array:
    """x with its axes reordered: axis i of the result is axis axes[i] of x."""
    x = as_tensor(x)
    ax = tuple(normalize_axis(a, x.ndim) for a in axes)
    if sorted(ax) != list(range(x.ndim)):
        raise ValueError(f"axes {tuple(axes)} are not a permutation of the {x.ndim} axes of the array")
    return make_view(wrap(permute_uop(x.uop, ax), x.device), x)


def matrix_transpose(x: Array, /) -> Array:
    """x with its last two axes swapped."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs an array of at least 2 dimensions, got {x.ndim}")
    return permute_dims(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def transpose(x: Array, /, axes: Sequence[int] | None = None) -> Array:
    """NumPy's transpose: axes reversed unless given."""
    x = as_tensor(x)
    if axes is None and len(shape := x.shape) == 2:   # a matrix's (`M.T` every iteration of a loop)
        return make_view(wrap(shaped(UOp(Ops.PERMUTE, x.dtype, (x.uop,), (1, 0)), (shape[1], shape[0])), x.device), x)
    return permute_dims(x, tuple(reversed(range(x.ndim))) if axes is None else axes)


def expand_dims(x: Array, /, axis: int | tuple[int, ...] = 0) -> Array:
    """x with new axes of length 1 at the positions `axis` of the result."""
    x = as_tensor(x)
    axes = axis if isinstance(axis, tuple) else (axis,)
    ndim = x.ndim + len(axes)
    new = normalize_axes(axes, ndim)
    it = iter(x.shape)
    shape = tuple(1 if i in new else next(it) for i in range(ndim))
    return make_view(wrap(reshape_uop(x.uop, shape), x.device), x)


def squeeze(x: Array, /, axis: int | tuple[int, ...] | None = None) -> Array:
    """x without the axes `axis` (all axes of length 1 when None), which must have length 1."""
    x = as_tensor(x)
    axes = tuple(i for i, s in enumerate(x.shape) if s == 1) if axis is None else normalize_axes(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one "
                             f"(axis {a} has length {x.shape[a]})")
    return make_view(wrap(reshape_uop(x.uop, tuple(s for i, s in enumerate(x.shape) if i not in axes)), x.device), x)


def broadcast_to(x: Array, /, shape: Any) -> Array:
    """x broadcast to `shape`. Raises ValueError when it does not broadcast. The result is
    read-only, as NumPy's: storing into it (`b[i] = v`, `b += 1`) raises ValueError."""
    x = as_tensor(x)
    shape = _shape_arg(shape)
    if len(shape) < x.ndim or any(s != n and s != 1 for s, n in zip(x.shape, shape[len(shape) - x.ndim:])):
        raise ValueError(f"cannot broadcast an array of shape {x.shape} to shape {shape}")
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    out = make_view(wrap(expand_uop(x.uop, shape), x.device), x)
    mark_broadcast_view(out)
    return out


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape arrays of `shapes` broadcast to (() for none). Raises ValueError when they do not,
    for a negative size, or for a result with more elements than an int64 can count."""
    shapes = tuple(_shape_arg(s) for s in shapes)
    for s in shapes:
        if any(n < 0 for n in s):
            raise ValueError(f"negative dimensions are not allowed: {s}")
    return check_dimensions(graph_broadcast_shapes(*shapes))


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    """The arrays broadcast to their common shape (a tuple, as the 2025.12 standard says). Those
    that are stretched along an axis are read-only (NumPy warns that it will make them so); the
    others are plain arrays."""
    ts = [as_tensor(a) for a in arrays]
    shape = broadcast_shapes(*(t.shape for t in ts))
    out = tuple(wrap(expand_uop(t.uop, shape), t.device) for t in ts)
    for t, o in zip(ts, out):
        if t.shape != shape:
            mark_broadcast_view(o)
    return out


def flip(x: Array, /, axis: int | tuple[int, ...] | None = None) -> Array:
    """x with the order of elements along `axis` (all axes when None) reversed."""
    x = as_tensor(x)
    return make_view(wrap(flip_uop(x.uop, normalize_axes(axis, x.ndim)), x.device), x)


def _same_device(ts: list[Array], name: str) -> None:
    for t in ts[1:]:
        if t.device is not ts[0].device:
            raise ValueError(f"{name}: arrays are on different devices: {ts[0].device.name} and {t.device.name}")


def concat(arrays: Sequence[Array], /, axis: int | None = 0) -> Array:
    """The arrays joined along `axis` (flattened first when axis is None)."""
    ts = [as_tensor(a) for a in arrays]
    if not ts:
        raise ValueError("concat needs at least one array")
    _same_device(ts, "concat")
    if axis is None:
        ts = [reshape(t, (-1,)) for t in ts]
        axis = 0
    ndim = ts[0].ndim
    if any(t.ndim != ndim for t in ts):
        raise ValueError(f"concat: all arrays must have the same number of dimensions, got "
                         f"{[t.ndim for t in ts]}")
    if ndim == 0:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, ndim)
    for t in ts[1:]:
        if any(a != b for i, (a, b) in enumerate(zip(t.shape, ts[0].shape)) if i != ax):
            raise ValueError(f"concat: shapes {ts[0].shape} and {t.shape} differ outside axis {ax}")
    return wrap(_joined([t.uop for t in ts], dtypes.promote_types(*(t.dtype for t in ts)), ax), ts[0].device)


def _joined(parts: list[UOp], dtype: DType, ax: int) -> UOp:
    """`parts` (of one shape but along axis ax) joined along ax, in `dtype`. (Shapes are set as the
    nodes are built: a loop stacks a few values every iteration.)"""
    first = parts[0].shape
    ndim = len(first)
    total = sum(p.shape[ax] for p in parts)
    shape = first[:ax] + (total,) + first[ax + 1:]
    out, offset = None, 0
    for p in parts:
        n = p.shape[ax]
        piece = cast_uop(p, dtype)
        if n != total:
            piece = shaped(UOp(Ops.PAD, dtype, (piece,), ((0, 0),) * ax + ((offset, total - offset - n),) +
                               ((0, 0),) * (ndim - ax - 1)), shape)
        # from this piece's offset on, this piece (a sum of zero padding would lose -0.0's sign)
        out = piece if out is None else shaped(UOp(Ops.WHERE, dtype, (_from_on(shape, ax, offset), piece, out)), shape)
        offset += n
    return out


_from_on_masks: dict[tuple, UOp] = {}


def _from_on(shape: tuple[int, ...], a: int, start: int) -> UOp:
    """Whether each position of `shape` lies at `start` or later along axis a: how joins and rolls
    select between their pieces. Built once per (shape, axis, start): a loop stacks or rolls the
    same shapes every iteration."""
    key = (shape, a, start)
    mask = _from_on_masks.get(key)
    if mask is None:
        if len(_from_on_masks) >= 512:
            _from_on_masks.clear()
        n = shape[a]
        position = shaped(UOp(Ops.IOTA, dtypes.index, (), n), (n,))
        mask = shaped(UOp(Ops.CMPLE, dtypes.bool_, (const(start, dtypes.index, (n,)), position)), (n,))
        line = (1,) * a + (n,) + (1,) * (len(shape) - a - 1)
        mask = _from_on_masks[key] = expand_uop(reshape_uop(mask, line), shape)
    return mask


def stack(arrays: Sequence[Array], /, axis: int = 0) -> Array:
    """The arrays, of one shape, joined along a new axis."""
    ts = [a if type(a) is Array.made else as_tensor(a) for a in arrays]
    if not ts:
        raise ValueError("stack needs at least one array")
    shape, device, dtype = ts[0].shape, ts[0].device, ts[0].dtype
    for t in ts:
        if t.shape != shape:
            raise ValueError(f"stack: all arrays must have the same shape, got {[t.shape for t in ts]}")
        if t.device is not device:
            _same_device(ts, "stack")
        if t.dtype is not dtype:
            dtype = dtypes.promote_types(dtype, t.dtype)
    ax = normalize_axis(axis, len(shape) + 1)
    shape = shape[:ax] + (1,) + shape[ax:]   # (the new axis on the nodes: no views to register)
    return wrap(_joined([reshape_uop(t.uop, shape) for t in ts], dtype, ax), device)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of x along `axis`."""
    x = as_tensor(x)
    ax = normalize_axis(axis, x.ndim)
    return tuple(x[(slice(None),) * ax + (i,)] for i in range(x.shape[ax]))


def moveaxis(x: Array, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array:
    """x with the axes `source` moved to the positions `destination`."""
    x = as_tensor(x)
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    src = tuple(normalize_axis(a, x.ndim) for a in src)
    dst = tuple(normalize_axis(a, x.ndim) for a in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis: repeated axis")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, order)


def roll(x: Array, /, shift: int | tuple[int, ...], axis: int | tuple[int, ...] | None = None) -> Array:
    """x with elements shifted along `axis` (the flattened array when None), wrapping around."""
    x = as_tensor(x)
    u = x.uop
    if axis is None:   # (on the nodes: the flattened array is no view anyone sees)
        shape = x.shape
        rolled = roll(wrap(reshape_uop(u, (x.size,)), x.device), shift, axis=0).uop
        return wrap(reshape_uop(rolled, shape), x.device)
    shifts, axes = _integers(shift, "shift"), _integers(axis, "axis")
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1 and len(shifts) > 1:   # (NumPy: each shift along that axis)
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("roll: shift and axis must have the same length")
    for s, a in zip(shifts, axes):
        a = normalize_axis(a, x.ndim)
        n = x.shape[a]
        if n == 0 or s % n == 0:
            continue
        u = _rolled(u, a, s % n)
    return wrap(u, x.device)


def _integers(v: Any, what: str) -> tuple[int, ...]:
    """An int (a NumPy integer too) or a sequence of them, as a tuple of ints."""
    try:
        return (operator.index(v),) if not isinstance(v, (tuple, list)) else tuple(operator.index(k) for k in v)
    except TypeError:
        raise TypeError(f"roll: {what} must be an integer or a tuple of integers, got {v!r}") from None


_record_rolled = getattr(native_module, "record_rolled", None)   # (record_native.c; set up by lazyarr.elementwise)


def _rolled(u: UOp, a: int, s: int) -> UOp:
    """u rolled by 0 < s < n along axis a (of length n): x[:n-s] moved s on, x[n-s:] to the front,
    the two padded and selected between (a sum of the pads would lose -0.0's sign; a game of life
    rolls its board sixteen times a generation: the nodes are built in C where it is loaded)."""
    shape = u.shape
    if _record_rolled is not None:
        return _record_rolled(u, a, s, _from_on(shape, a, s))
    n = shape[a]
    whole = ((0, 0),) * a, ((0, 0),) * (len(shape) - a - 1)
    kept = tuple((0, d) for d in shape[:a]), tuple((0, d) for d in shape[a + 1:])
    head = shaped(UOp(Ops.SHRINK, u.dtype, (u,), kept[0] + ((0, n - s),) + kept[1]), shape[:a] + (n - s,) + shape[a + 1:])
    tail = shaped(UOp(Ops.SHRINK, u.dtype, (u,), kept[0] + ((n - s, n),) + kept[1]), shape[:a] + (s,) + shape[a + 1:])
    head = shaped(UOp(Ops.PAD, u.dtype, (head,), whole[0] + ((s, 0),) + whole[1]), shape)
    tail = shaped(UOp(Ops.PAD, u.dtype, (tail,), whole[0] + ((0, n - s),) + whole[1]), shape)
    return shaped(UOp(Ops.WHERE, u.dtype, (_from_on(shape, a, s), head, tail)), shape)


def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    """x repeated `repetitions[i]` times along each axis i (an int: along the last axis)."""
    x = as_tensor(x)
    try:
        reps = (operator.index(repetitions),) if not isinstance(repetitions, (tuple, list)) else\
            tuple(operator.index(r) for r in repetitions)
    except TypeError:
        raise TypeError(f"tile: repetitions must be an int or a tuple of ints, got {repetitions!r}") from None
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    ndim = max(len(reps), x.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - x.ndim) + x.shape
    check_dimensions(tuple(r * s for r, s in zip(reps, shape)))
    u = reshape_uop(x.uop, tuple(v for s in shape for v in (1, s)))
    u = expand_uop(u, tuple(v for r, s in zip(reps, shape) for v in (r, s)))
    return wrap(reshape_uop(u, tuple(r * s for r, s in zip(reps, shape))), x.device)


def repeat(x: Array, repeats: Any, /, axis: int | None = None) -> Array:
    """Each element of x repeated `repeats` times along `axis` (of the flattened array when None):
    one count for all, or one count an element (a list, a NumPy or lazyarr array; one of length 1
    counts for all), as NumPy's repeat. Counts of each element are read on the host (they make the
    shape); the values stay lazy: a broadcast for one count, a gather for several."""
    x = as_tensor(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ax = normalize_axis(axis, x.ndim)
    if not isinstance(repeats, (int, np.integer)):
        counts = _repeat_counts(repeats)
        if counts.size != 1:
            return _repeat_each(x, counts, ax)
        repeats = int(counts[0])
    r = operator.index(repeats)
    if r < 0:
        raise ValueError(f"repeat: repeats may not contain negative values, got {r}")
    shape = x.shape
    check_dimensions(shape[:ax] + (shape[ax] * r,) + shape[ax + 1:])
    u = reshape_uop(x.uop, shape[:ax + 1] + (1,) + shape[ax + 1:])
    u = expand_uop(u, shape[:ax + 1] + (r,) + shape[ax + 1:])
    return wrap(reshape_uop(u, shape[:ax] + (shape[ax] * r,) + shape[ax + 1:]), x.device)


def _repeat_counts(repeats: Any) -> np.ndarray:
    """repeat's counts on the host, 1-D, checked as NumPy checks them."""
    counts = np.asarray(repeats.numpy() if isinstance(repeats, Array) else repeats)
    if counts.dtype.kind not in "biu":
        raise TypeError(f"repeat: repeats must be integers, not {counts.dtype}")
    if counts.ndim > 1:
        raise ValueError(f"repeat: repeats must be an int or a 1-D array, got shape {counts.shape}")
    counts = counts.reshape(-1).astype(np.int64)
    if (counts < 0).any():
        raise ValueError("repeat: repeats may not contain negative values")
    return counts


def _repeat_each(x: Array, counts: np.ndarray, ax: int) -> Array:
    """x's element i along `ax` counts[i] times: a gather of the positions np.repeat makes."""
    n = x.shape[ax]
    if counts.size != n:
        raise ValueError(f"repeat: operands could not be broadcast together with shape ({n},) ({counts.size},)")
    out_shape = x.shape[:ax] + (int(counts.sum()),) + x.shape[ax + 1:]
    check_dimensions(out_shape)
    if not math.prod(out_shape):
        return empty(out_shape, dtype=x.dtype, device=x.device)
    picked = asarray(np.repeat(np.arange(n, dtype=np.int64), counts), device=x.device).uop
    src = []
    for a, m in enumerate(out_shape):
        along = tuple(m if b == a else 1 for b in range(len(out_shape)))
        pos = picked if a == ax else cast_uop(UOp(Ops.IOTA, dtypes.index, (), m), dtypes.int64)
        src.append(expand_uop(reshape_uop(pos, along), out_shape))
    return wrap(gather_uop(x.uop, src), x.device)


# ---- NumPy's joining and splitting ---------------------------------------------------------

def _along(x: Array, axis: int, start: int | None, stop: int | None, step: int | None = None) -> Array:
    return x[(slice(None),) * axis + (slice(start, stop, step),)]


def ravel(x: Array, /) -> Array:
    """x one-dimensional: a view where its elements allow one, else a copy (NumPy's ravel)."""
    x = as_tensor(x)
    return reshape(x, (x.size,))


def swapaxes(x: Array, axis1: int, axis2: int, /) -> Array:
    """x with two axes exchanged (NumPy's swapaxes)."""
    x = as_tensor(x)
    a, b = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    order = list(range(x.ndim))
    order[a], order[b] = b, a
    return permute_dims(x, order)


def _at_least(arrays: tuple, ndim: int) -> Any:
    out = []
    for a in arrays:
        t = as_tensor(a)
        if t.ndim < ndim:
            # NumPy's placement: a vector becomes a row (1, n) and, for 3-D, (1, n, 1)
            shape = {0: (1,) * ndim, 1: (1, t.size, 1)[:ndim] if ndim == 3 else (1,) * (ndim - 1) + t.shape,
                     2: t.shape + (1,)}[t.ndim]
            t = reshape(t, shape)
        out.append(t)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arrays: Any) -> Any:
    return _at_least(arrays, 1)


def atleast_2d(*arrays: Any) -> Any:
    return _at_least(arrays, 2)


def atleast_3d(*arrays: Any) -> Any:
    return _at_least(arrays, 3)


def vstack(tup: Sequence[Any], /) -> Array:
    """The arrays joined along the first axis (vectors as rows)."""
    return concat(_listed(atleast_2d(*tup)), axis=0)


row_stack = vstack


def hstack(tup: Sequence[Any], /) -> Array:
    """The arrays joined along the second axis (vectors: along their only one)."""
    ts = _listed(atleast_1d(*tup))
    return concat(ts, axis=0 if ts[0].ndim == 1 else 1)


def dstack(tup: Sequence[Any], /) -> Array:
    """The arrays joined along the third axis."""
    return concat(_listed(atleast_3d(*tup)), axis=2)


def column_stack(tup: Sequence[Any], /) -> Array:
    """Vectors as columns (and 2-D arrays as they are), joined along the second axis."""
    ts = [as_tensor(a) for a in tup]
    return concat([reshape(t, (t.size, 1)) if t.ndim < 2 else t for t in ts], axis=1)


def _listed(x: Any) -> list:
    return x if isinstance(x, list) else [x]


MAX_SECTIONS = 1 << 16   # empty parts array_split makes past an axis's length, at most


def array_split(x: Array, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """NumPy's array_split: `sections` nearly equal parts (the first ones one longer), or the parts
    between the given indices."""
    x = as_tensor(x)
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(indices_or_sections, bool):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"array_split: the number of sections must be larger than 0, got {sections}")
        if sections > max(n, 1) + MAX_SECTIONS:
            raise ValueError(f"array_split: {sections} sections of an axis of {n} elements: at most "
                             f"{n + MAX_SECTIONS} (the rest would all be empty)")
        size, extra = divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + size + (i < extra))
    else:
        bounds = [0] + [operator.index(i) for i in indices_or_sections] + [n]
    return [_along(x, ax, lo, max(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def split(x: Array, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """NumPy's split: as array_split, but `sections` must divide the axis evenly."""
    x = as_tensor(x)
    if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(indices_or_sections, bool):
        n = x.shape[normalize_axis(axis, x.ndim)]
        if indices_or_sections <= 0 or n % indices_or_sections:
            raise ValueError(f"split: array split does not result in an equal division ({n} into "
                             f"{indices_or_sections})")
    return array_split(x, indices_or_sections, axis)


def hsplit(x: Array, indices_or_sections: Any) -> list[Array]:
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, axis=1 if x.ndim > 1 else 0)


def vsplit(x: Array, indices_or_sections: Any) -> list[Array]:
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, axis=0)


def dsplit(x: Array, indices_or_sections: Any) -> list[Array]:
    x = as_tensor(x)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, axis=2)
