"""Indexing (array API section "Indexing"): basic indexing with integers, slices of any step,
`None`, `Ellipsis` and fewer indices than dimensions, as movement ops.

A slice becomes a shrink to the elements it covers, a flip when its step is negative, and, when
the step's magnitude k is more than 1, a pad to a multiple of k, a reshape to (count, k) and a
shrink to the first column. An integer is a shrink to one element and a reshape that drops the
axis; `None` is a reshape that adds one. Nothing is computed; the result is a view of x's graph.

Arrays as indices (integer arrays, boolean masks) are not supported yet: they raise IndexError
saying so.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lazyarr.tensor import Tensor, wrap
from lazyarr.graph import flip_uop, pad_uop, reshape_uop, shrink_uop


def _is_int_key(k: Any) -> bool:
    if isinstance(k, bool) or isinstance(k, np.bool_):
        return False
    if isinstance(k, Tensor):
        return k.ndim == 0 and k.dtype.is_int
    return isinstance(k, (int, np.integer)) or (hasattr(k, "__index__") and not isinstance(k, (list, tuple)))


def normalize_key(key: Any, ndim: int) -> list[Any]:
    """The key as a list with one entry per axis of x (ints and slices) plus None entries.
    Raises IndexError for too many indices, several ellipses, or unsupported entries."""
    key = list(key) if isinstance(key, tuple) else [key]
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice) or _is_int_key(k):
            continue
        kind = "a boolean" if isinstance(k, (bool, np.bool_)) else type(k).__name__
        raise IndexError(f"only integers, slices (`:`), ellipsis (`...`) and None are valid indices; got "
                         f"{kind} (indexing with arrays is not supported yet)")
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


def getitem(x: Tensor, key: Any) -> Tensor:
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
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
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
    return wrap(reshape_uop(u, tuple(out_shape)), x.device)
