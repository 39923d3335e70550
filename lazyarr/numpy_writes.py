"""NumPy's functions that write into their first argument: put, put_along_axis, place and putmask.

Each is an assignment (`gathering.setitem`) into the lazyarr array it is given, so the write is as
lazy as `a[key] = values` (and, like it, reaches the array a view was taken from), with NumPy's
rules for the values: cast to the array's dtype, repeated cyclically where fewer than needed, the
last write winning where an index repeats. Positions given as host data (Python or NumPy
integers, as NumPy code passes them) are checked on the host; a lazyarr array of positions or a
mask is read back where the count of writes depends on it (place). A NumPy array given as the
target is written by NumPy's own function.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr.arrays import Array
from lazyarr.creation import arange, as_tensor
from lazyarr.elementwise import remainder, where
from lazyarr.gathering import setitem, take
from lazyarr.graph import normalize_axis
from lazyarr.manipulation import broadcast_to, reshape
from lazyarr.numpy_fallback import to_host
from lazyarr.numpy_indexing import _host_ints


def _target(name: str, a: Any) -> Array | None:
    """The lazyarr array to write into; None for a NumPy array (NumPy writes it)."""
    if isinstance(a, np.ndarray):
        return None
    if not isinstance(a, Array):
        raise TypeError(f"{name}: the array to write into must be an array, got {type(a).__name__}")
    return a


def _cycled(name: str, values: Any, a: Array, count: int) -> Array:
    """`values`, flattened and cast to a's dtype, repeated cyclically to `count` elements."""
    v = reshape(as_tensor(values, a.device), (-1,)).astype(a.dtype)
    if v.size == 0:
        if count:
            raise ValueError(f"{name}: cannot take values from an empty array")
        return v
    return v if v.size == count else take(v, remainder(arange(count, device=a.device), v.size))


def _write(a: Array, key: tuple, values: Array) -> None:
    """a[key] = values for index arrays `key` (host integers); a 0-d array takes the last value."""
    if a.ndim:
        setitem(a, key, values)
    else:
        setitem(a, (), values[values.size - 1])


def _flat_positions(name: str, a: Array, ind: Any, mode: str) -> tuple[tuple[Any, ...], int]:
    """a's index arrays for the flat positions `ind` (NumPy's modes: 'raise', 'wrap', 'clip'), and
    how many there are."""
    flat = _host_ints(name, ind, "indices").reshape(-1)
    n = a.size
    if mode == "raise":
        bad = flat[(flat < -n) | (flat >= n)]
        if bad.size:
            raise IndexError(f"{name}: index {int(bad[0])} is out of bounds for axis 0 with size {n}")
        flat = flat % n if n else flat
    elif mode == "wrap":
        flat = flat % n if n else flat
    elif mode == "clip":
        flat = np.clip(flat, 0, max(n - 1, 0))
    else:
        raise ValueError(f"{name}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if flat.size and n == 0:
        raise IndexError(f"{name}: cannot write into an empty array")
    return (np.unravel_index(flat, a.shape) if a.ndim else ()), int(flat.size)


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """a.flat[ind] = v, v repeated cyclically over ind (NumPy's put)."""
    t = _target("put", a)
    if t is None:
        return np.put(a, to_host(ind), to_host(v), mode=mode)
    key, count = _flat_positions("put", t, ind, mode)
    if count:
        _write(t, key, _cycled("put", v, t, count))
    return None


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None) -> None:
    """arr's elements at `indices` along `axis` (an array of arr's number of dimensions, as
    take_along_axis takes) set to `values` (broadcast to indices' shape); axis None: flat."""
    t = _target("put_along_axis", arr)
    if t is None:
        return np.put_along_axis(arr, to_host(indices), to_host(values), axis)
    idx = _host_ints("put_along_axis", indices, "indices")
    if axis is None:
        return put(t, idx.reshape(-1), broadcast_to(as_tensor(values, t.device), idx.shape), mode="raise")
    ax = normalize_axis(axis, t.ndim)
    if idx.ndim != t.ndim:
        raise ValueError(f"put_along_axis: indices must have as many dimensions as arr ({t.ndim}), got {idx.ndim}")
    n = t.shape[ax]
    if ((idx < -n) | (idx >= n)).any():
        raise IndexError(f"put_along_axis: an index is out of bounds for axis {ax} with size {n}")
    shape = np.broadcast_shapes(idx.shape, tuple(1 if d == ax else t.shape[d] for d in range(t.ndim)))
    key = tuple(np.broadcast_to(idx % n if n else idx, shape) if d == ax else
                np.broadcast_to(np.arange(t.shape[d]).reshape([-1 if e == d else 1 for e in range(t.ndim)]), shape)
                for d in range(t.ndim))
    setitem(t, key, broadcast_to(as_tensor(values, t.device).astype(t.dtype), shape))
    return None


def place(arr: Any, mask: Any, vals: Any) -> None:
    """arr's elements where `mask` holds set to `vals` in order, repeated cyclically (NumPy's place)."""
    t = _target("place", arr)
    if t is None:
        return np.place(arr, to_host(mask), to_host(vals))
    m = np.asarray(to_host(mask)).astype(bool)
    if m.size != t.size:
        raise ValueError(f"place: mask and data must be the same size, got {m.size} and {t.size}")
    m = m.reshape(t.shape)
    count = int(m.sum())
    if count:
        _write(t, np.nonzero(m) if t.ndim else (), _cycled("place", vals, t, count))
    return None


def putmask(a: Any, mask: Any, values: Any) -> None:
    """a's elements where `mask` holds set to the values at the same flat positions, `values`
    repeated cyclically over a (NumPy's putmask). Lazy in the mask and the values."""
    t = _target("putmask", a)
    if t is None:
        return np.putmask(a, to_host(mask), to_host(values))
    m = as_tensor(mask, t.device)
    if m.size != t.size:
        raise ValueError(f"putmask: mask and data must be the same size, got {m.size} and {t.size}")
    tiled = reshape(_cycled("putmask", values, t, t.size), t.shape)
    setitem(t, ..., where(reshape(m, t.shape).astype(bool), tiled, t))
    return None


__all__ = ["put", "put_along_axis", "place", "putmask"]
