"""Conversions of arrays to Python values at the boundary: `bool/int/float/complex/__index__` and
`item()` on arrays of one element.

These run thousands of times in user loops (`float(x[i])`), so they read the element without
compiling anything when they can: the one element's index is mapped through the movement ops
(reshape, permute, expand, shrink, flip, pad) on the host, down to a buffer (read it), a constant
(its value), an IOTA (the index itself) or a padded-out region (zero). Only when the walk meets a
computed node (an ALU op, a reduction, ...) is that node realized, in full, once: the arrays that
share it (`out` and `out[0]`, `out[1]`, ...) then all read its buffer. (An array of one element
whose value is computed, a reduction's, is realized itself: it keeps its buffer.) Nothing is
computed on the host but index arithmetic.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from lazyarr.compiler.uop import Ops, UOp, realized
from lazyarr.dtypes import python_value
from lazyarr.ops import source_index
from lazyarr.arrays import host_read_hooks, realize, wrap

_MOVEMENT = (Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.SHRINK, Ops.FLIP, Ops.PAD)
_READ_ON_HOST = (*_MOVEMENT, Ops.BUFFER, Ops.CONST, Ops.IOTA)   # what the walk below reads without computing


def element(t: Any) -> Any:
    """The value of the only element of tensor `t` (size 1) as a Python scalar."""
    for hook in host_read_hooks:
        hook("bool(), int(), float() or item()")
    u = t.uop
    if u.op is Ops.RESHAPE and u.src[0].op is Ops.BUFFER:   # a computed scalar, the commonest
        buf = u.src[0].arg
        storage = buf.storage
        if type(storage) is np.ndarray and buf.device.host_memory and storage.dtype is buf.dtype.np:
            return storage.item(0)   # (a reshape keeps the size: one element)
    if u.op is Ops.RESHAPE and u not in realized and u.src[0] not in realized and u.src[0].op not in _READ_ON_HOST:
        del u   # (the graph let go of: its kernels may reuse the storage of what only it read)
        realize(t)   # a computed value of one element (a reduction's): computed into the array itself
        u = t.uop
    idx = [0] * len(t.shape)
    while True:
        view = realized.get(u)
        if view is not None:
            u = view
        op = u.op
        if op is Ops.BUFFER:
            buf = u.arg
            storage = buf.storage
            if type(storage) is np.ndarray and buf.device.host_memory and storage.dtype is buf.dtype.np:
                return storage.item(idx[0])   # (a loop reads a scalar every iteration)
            data = buf.numpy()
            t.device.synchronize()
            return data[idx[0]].item()
        if op is Ops.CONST:
            return python_value(u.arg, u.dtype)
        if op is Ops.IOTA:
            return python_value(idx[0], u.dtype)
        if op is Ops.RESHAPE and math.prod(u.arg) == 1:   # a reshape of one element: index 0 throughout
            u = u.src[0]
            idx = [0] * len(u.shape)
            continue
        if op in _MOVEMENT:
            src_idx, valid = source_index(u, idx)
            if valid is False:   # in a padded-out region
                return python_value(0, u.dtype)
            u, idx = u.src[0], src_idx
            continue
        # a computed value: realize it once (it is shared by every view of it), then read it. The
        # array's own value is realized in the array, so that it keeps its buffer
        node = t if u is t.uop else wrap(u, t.device)
        realize(node)
        u = node.uop


def scalar(t: Any, kind: str) -> Any:
    """`t` as a Python scalar for `bool()`, `int()`, `float()`, `complex()`: its one element.
    Raises ValueError (bool) or TypeError (others) for arrays of more or fewer elements."""
    size = math.prod(t.shape)
    if size != 1:
        if kind == "bool":
            raise ValueError("The truth value of an empty array is ambiguous" if size == 0 else
                             "The truth value of an array with more than one element is ambiguous")
        raise TypeError(f"only arrays of size 1 can be converted to Python {kind}s")
    return element(t)
