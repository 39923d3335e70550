"""NumPy's pad, every mode but a callable: 'constant', 'edge', 'reflect', 'symmetric' and 'wrap'
as movements and joins (they fuse), 'linear_ramp' from linspace, and the statistics 'maximum',
'minimum', 'mean' and 'median' of each edge's `stat_length` values (a reduction each, a sort for
the median); 'empty' pads with zeros (NumPy leaves the values undefined). All stay lazy and
differentiate through the values they read.

Axes are padded one after another, each over the result of the ones before (so corners take the
statistics or ramps of padded values, as in NumPy). A module of its own, above statistics and
sorting, which its modes need."""
from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.creation import as_tensor, asarray, full, linspace
from lazyarr.elementwise import add, divide, isnan, multiply, round as round_half_even, where
from lazyarr.graph import alu, const, expand_uop, pad_uop, reshape_uop
from lazyarr.manipulation import broadcast_to, concat, flip, reshape, tile
from lazyarr.sorting import sort
from lazyarr.statistics import max as amax, mean, min as amin

# each mode → the keywords NumPy's pad takes with it
_MODES: dict[str, tuple[str, ...]] = {
    "constant": ("constant_values",), "edge": (), "wrap": (), "empty": (),
    "reflect": ("reflect_type",), "symmetric": ("reflect_type",), "linear_ramp": ("end_values",),
    "maximum": ("stat_length",), "minimum": ("stat_length",), "mean": ("stat_length",), "median": ("stat_length",),
}


def _pad_widths(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    """NumPy's pad_width forms: n, (n,), (before, after), or one pair per axis."""
    w = np.asarray(pad_width)
    if not np.issubdtype(w.dtype, np.integer):
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
    try:
        w = np.broadcast_to(w.reshape(-1, 2) if w.ndim == 2 or w.size == 2 else w.reshape(-1, 1), (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} does not fit an array of {ndim} dimensions") from None
    if (w < 0).any():
        raise ValueError(f"pad: pad widths must be non-negative, got {pad_width!r}")
    return [(int(b), int(a)) for b, a in w]


def _pairs(values: Any, ndim: int, as_index: bool = False) -> list[tuple[Any, Any]]:
    """One (before, after) pair an axis from NumPy's forms (numpy's _as_pairs): a value, a pair,
    or a pair per axis; `as_index` rounds them to non-negative ints (None stays None)."""
    if values is None:
        return [(None, None)] * ndim
    x = np.array(values)
    if as_index:
        x = np.round(x).astype(np.intp)
        if x.size and x.min() < 0:
            raise ValueError("index can't contain negative values")
    if x.ndim < 3 and x.size == 1:
        v = x.ravel()[0].item()
        return [(v, v)] * ndim
    if x.ndim < 3 and x.size == 2 and x.shape != (2, 1):
        b, a = x.ravel().tolist()
        return [(b, a)] * ndim
    return [tuple(p) for p in np.broadcast_to(x, (ndim, 2)).tolist()]


def _along(x: Array, axis: int, start: int | None, stop: int | None) -> Array:
    return x[(slice(None),) * axis + (slice(start, stop),)]


def pad(x: Array, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Array:
    """NumPy's pad: x with pad_width elements before and after each axis, made by `mode` (one of
    _MODES, with the keywords NumPy takes: constant_values, end_values, stat_length,
    reflect_type). Wide reflections repeat, as NumPy's do."""
    x = as_tensor(x)
    if mode not in _MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(_MODES)}, got {mode!r}")
    unsupported = set(kwargs) - set(_MODES[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    widths = _pad_widths(pad_width, x.ndim)
    if mode in ("constant", "empty"):
        return _pad_constant(x, widths, kwargs.get("constant_values", 0))
    for ax, (b, a) in enumerate(widths):
        if (b or a) and x.shape[ax] == 0:
            raise ValueError(f"pad: can't extend an empty axis {ax} with mode {mode!r}")
    if mode == "linear_ramp":
        for ax, ((b, a), ends) in enumerate(zip(widths, _pairs(kwargs.get("end_values", 0), x.ndim))):
            x = _ramp_axis(x, ax, b, a, ends)
    elif mode in ("maximum", "minimum", "mean", "median"):
        for ax, ((b, a), lengths) in enumerate(zip(widths, _pairs(kwargs.get("stat_length"), x.ndim, True))):
            x = _stat_axis(x, ax, b, a, lengths, mode)
    else:
        odd = kwargs.get("reflect_type", "even")
        if odd not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {odd!r}")
        for ax, (b, a) in enumerate(widths):
            x = _pad_axis(x, ax, b, a, mode, odd == "odd")
    return x


def _pad_constant(x: Array, widths: list[tuple[int, int]], constant_values: Any) -> Array:
    u = pad_uop(x.uop, widths)
    values = np.broadcast_to(np.asarray(constant_values), (x.ndim, 2))
    if values.any():   # the padding takes the constants, axis by axis (later axes over earlier)
        for ax, ((b, a), (cb, ca)) in enumerate(zip(widths, values)):
            n, total = x.shape[ax], b + x.shape[ax] + a
            pos = UOp(Ops.IOTA, dtypes.index, (), total)
            along = tuple(total if i == ax else 1 for i in range(x.ndim))
            before = expand_uop(reshape_uop(alu(Ops.CMPLT, pos, b), along), u.shape)
            after = expand_uop(reshape_uop(alu(Ops.CMPLE, b + n, pos), along), u.shape)
            u = alu(Ops.WHERE, before, const(cb.item(), x.dtype, u.shape), u) if b else u
            u = alu(Ops.WHERE, after, const(ca.item(), x.dtype, u.shape), u) if a else u
    return wrap(u, x.device)


def _pad_axis(x: Array, ax: int, before: int, after: int, mode: str, odd: bool = False) -> Array:
    if mode == "wrap":   # periodic: out[i] = x[(i - before) mod n], a window of x tiled
        n, total = x.shape[ax], before + x.shape[ax] + after
        start = -before % n
        reps = tuple(-(-(start + total) // n) if i == ax else 1 for i in range(x.ndim))
        return _along(tile(x, reps), ax, start, start + total)
    while before or after:
        n = x.shape[ax]
        if mode == "edge":
            parts = [broadcast_to(_along(x, ax, 0, 1), x.shape[:ax] + (before,) + x.shape[ax + 1:]), x,
                     broadcast_to(_along(x, ax, n - 1, n), x.shape[:ax] + (after,) + x.shape[ax + 1:])]
            return concat([p for p in parts if p.shape[ax]], axis=ax)
        room = n if mode == "symmetric" else n - 1
        if room == 0:   # reflecting one element: it repeats
            mode = "edge"
            continue
        b, a = min(before, room), min(after, room)
        skip = 1 if mode == "reflect" else 0
        head = flip(_along(x, ax, skip, skip + b), axis=ax)
        tail = flip(_along(x, ax, n - skip - a, n - skip), axis=ax)
        if odd:   # reflected through the edge's value: 2·edge - mirror
            head = add(_along(x, ax, 0, 1), add(_along(x, ax, 0, 1), multiply(head, -1))).astype(x.dtype)
            tail = add(_along(x, ax, n - 1, n), add(_along(x, ax, n - 1, n), multiply(tail, -1))).astype(x.dtype)
        x = concat([p for p in (head, x, tail) if p.shape[ax]], axis=ax)
        before, after = before - b, after - a
    return x


def _ramp_axis(x: Array, ax: int, before: int, after: int, ends: tuple[Any, Any]) -> Array:
    """linear_ramp along `ax`: from each end value towards the edge, the edge itself left out
    (NumPy's linspace(end, edge, width, endpoint=False) in x's dtype; the after side reversed)."""
    n = x.shape[ax]
    parts = []
    for width, end, edge, last in ((before, ends[0], _along(x, ax, 0, 1), False),
                                   (after, ends[1], _along(x, ax, n - 1, n), True)):
        if not width:
            continue
        start = asarray(end, dtype=x.dtype if x.dtype.is_inexact else None, device=x.device)
        ramp = linspace(start, edge, width, endpoint=False, dtype=x.dtype, axis=ax)
        ramp = reshape(ramp, x.shape[:ax] + (width,) + x.shape[ax + 1:])
        parts.append((flip(ramp, axis=ax) if last else ramp, last))
    pieces = [p for p, last in parts if not last] + [x] + [p for p, last in parts if last]
    return concat(pieces, axis=ax) if len(pieces) > 1 else x


def _stat_axis(x: Array, ax: int, before: int, after: int, lengths: tuple[Any, Any], mode: str) -> Array:
    """maximum/minimum/mean/median padding along `ax`: each side the statistic of its edge's
    stat_length values (the whole axis for None), rounded half to even into an integer dtype."""
    n = x.shape[ax]
    left, right = (n if k is None or k > n else k for k in lengths)
    if (left == 0 or right == 0) and mode in ("maximum", "minimum"):
        raise ValueError("stat_length of 0 yields no value for padding")
    pieces = []
    for width, chunk in ((before, _along(x, ax, 0, left)), (after, _along(x, ax, n - right, n))):
        if width:
            stat = _statistic(chunk, ax, mode)
            if x.dtype.is_int and stat.dtype.is_inexact:
                stat = round_half_even(stat)
            stat = stat.astype(x.dtype)
            pieces.append(broadcast_to(stat, x.shape[:ax] + (width,) + x.shape[ax + 1:]))
        else:
            pieces.append(None)
    return concat([p for p in (pieces[0], x, pieces[1]) if p is not None], axis=ax)


def _statistic(chunk: Array, ax: int, mode: str) -> Array:
    """The statistic of `chunk` along `ax`, kept as an axis of length 1."""
    if mode == "maximum":
        return amax(chunk, axis=ax, keepdims=True)
    if mode == "minimum":
        return amin(chunk, axis=ax, keepdims=True)
    m = chunk.shape[ax]
    if m == 0:   # NumPy's NaN of an empty mean or median
        return full(chunk.shape[:ax] + (1,) + chunk.shape[ax + 1:], float("nan"), device=chunk.device)
    if mode == "mean":
        return mean(chunk, axis=ax, keepdims=True)
    ordered = sort(chunk, axis=ax)   # the median: the middle value, or the mean of the middle two
    if not ordered.dtype.is_inexact:
        ordered = ordered.astype(dtypes.float64)
    middle = _along(ordered, ax, (m - 1) // 2, m // 2 + 1)
    value = divide(add(_along(middle, ax, 0, 1), _along(middle, ax, -1, None)), 2) if m % 2 == 0 else middle
    if ordered.dtype.is_float:   # a NaN sorts last: a slice holding one has the median NaN
        value = where(isnan(_along(ordered, ax, m - 1, m)), float("nan"), value)
    return value
