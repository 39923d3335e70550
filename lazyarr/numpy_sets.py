"""NumPy's set functions on flattened arrays (intersect1d, union1d, setdiff1d, setxor1d, in1d)
and lexsort, on lazyarr's sorting, unique values and `isin`.

The set functions' lengths depend on the data: they select with boolean masks, whose counts
lazyarr reads back (as its unique values do). NaNs follow NumPy: unique() makes the NaNs of one
array one value, and a NaN is never equal to another (so never in an intersection).
lexsort stays lazy: one stable argsort per key, from the first key to the last (the last is the
primary one), each gathering the order so far.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array
from lazyarr.creation import arange, as_tensor
from lazyarr.elementwise import logical_and, not_equal
from lazyarr.graph import normalize_axis
from lazyarr.manipulation import broadcast_to, concat, ravel, reshape
from lazyarr.numpy_functions import unique
from lazyarr.numpy_indexing import gather_along
from lazyarr.searching import searchsorted
from lazyarr.sets import isin
from lazyarr.sorting import argsort, sort


def _flat(x: Any) -> Array:
    return ravel(as_tensor(x))


def _unique_with_first(x: Array, assume_unique: bool) -> tuple[Array, Array]:
    """x's unique values, sorted, with the index of each one's first occurrence (x itself, sorted,
    when the caller says its values are unique)."""
    if assume_unique:
        order = argsort(x, stable=True)
        return gather_along(x, order, 0), order
    return unique(x, return_index=True)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False) -> Any:
    """The sorted values found in both arrays; with `return_indices`, also the index of each
    one's first occurrence in the flattened ar1 and ar2."""
    a, b = _flat(ar1), _flat(ar2)
    d = dtypes.promote_types(a.dtype, b.dtype)
    if not return_indices:
        values = sort(a) if assume_unique else unique(a)
        return values[isin(values, b)].astype(d)
    ua, first_a = _unique_with_first(a, assume_unique)
    ub, first_b = _unique_with_first(b, assume_unique)
    found = isin(ua, ub)
    common = ua[found]
    where_b = searchsorted(ub.astype(d), common.astype(d))
    return common.astype(d), first_a[found], first_b[where_b] if common.size else first_b[:0]


def union1d(ar1: Any, ar2: Any) -> Array:
    """The sorted values found in either array."""
    return unique(concat([_flat(ar1), _flat(ar2)]))


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Array:
    """The values of ar1 not in ar2: sorted and unique, or in ar1's order when assume_unique."""
    a = _flat(ar1)
    values = a if assume_unique else unique(a)
    return values[isin(values, _flat(ar2), invert=True)]


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Array:
    """The sorted values found in exactly one of the arrays."""
    a, b = _flat(ar1), _flat(ar2)
    if not assume_unique:
        a, b = unique(a), unique(b)
    joined = sort(concat([a, b]))
    n = joined.shape[0]
    if n == 0:
        return joined
    differs = not_equal(joined[1:], joined[:-1])
    edge = as_tensor(np.ones(1, bool), joined.device)
    flag = concat([edge, differs, edge])   # a value that differs from its neighbour on each side
    return joined[logical_and(flag[1:], flag[:-1])]


def in1d(ar1: Any, ar2: Any, assume_unique: bool = False, invert: bool = False, *, kind: Any = None) -> Array:
    """Whether each element of the flattened ar1 is in ar2 (NumPy's older isin, 1-D)."""
    return isin(_flat(ar1), as_tensor(ar2), invert=invert)


def lexsort(keys: Any, axis: int = -1) -> Array:
    """The indices that sort along `axis` by the last key, then by the one before it for equal
    values, and so on (keys: a sequence of arrays of one shape, or the rows of a 2-D array)."""
    if isinstance(keys, (Array, np.ndarray)):
        t = as_tensor(keys)
        if t.ndim == 0:
            raise TypeError("lexsort: need sequence of keys with len > 0")
        ks = [t[i] for i in range(t.shape[0])]
    else:
        ks = [as_tensor(k) for k in keys]
    if not ks:
        raise TypeError("lexsort: need sequence of keys with len > 0")
    shape = ks[0].shape
    if any(k.shape != shape for k in ks):
        raise ValueError(f"lexsort: all keys need to be the same shape, got {[k.shape for k in ks]}")
    if not shape:
        return as_tensor(0)
    ax = normalize_axis(axis, len(shape))
    line = tuple(n if a == ax else 1 for a, n in enumerate(shape))
    order = broadcast_to(reshape(arange(shape[ax]), line), shape)
    for k in ks:   # stable sorts from the least significant key: equal values keep the order so far
        order = gather_along(order, argsort(gather_along(k, order, ax), axis=ax, stable=True), ax)
    return order


__all__ = ["intersect1d", "union1d", "setdiff1d", "setxor1d", "in1d", "lexsort"]
