"""Conversions of arrays to Python values at the boundary: `bool/int/float/complex/__index__` and
`item()` on arrays of one element.

These run thousands of times in user loops (`float(x[i])`), so they read the element without
compiling anything when they can: the one element's index is mapped through the movement ops
(reshape, permute, expand, shrink, flip, pad) on the host, down to a buffer (read it), a constant
(its value), an IOTA (the index itself) or a padded-out region (zero). Only when the walk meets a
computed node (an ALU op, a reduction, ...) is that node realized, in full, once: the arrays that
share it (`out` and `out[0]`, `out[1]`, ...) then all read its buffer. Nothing is computed on the
host but index arithmetic.
"""
from __future__ import annotations

import math
from typing import Any

from lazyarr.compiler.uop import Ops, UOp
from lazyarr.dtypes import python_value
from lazyarr.realize import realized
from lazyarr.arrays import realize, wrap

_MOVEMENT = (Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.SHRINK, Ops.FLIP, Ops.PAD)


def _ravel(idx: tuple[int, ...], shape: tuple[int, ...]) -> int:
    flat = 0
    for i, n in zip(idx, shape):
        flat = flat * n + i
    return flat


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for n in reversed(shape):
        out.append(flat % n if n else 0)
        flat = flat // n if n else 0
    return tuple(reversed(out))


def _source_index(u: UOp, idx: tuple[int, ...]) -> tuple[int, ...] | None:
    """The index into u's source that u's element at `idx` comes from; None inside padding."""
    src = u.src[0]
    if u.op is Ops.RESHAPE:
        return _unravel(_ravel(idx, u.shape), src.shape)
    if u.op is Ops.PERMUTE:
        out = [0] * len(idx)
        for out_axis, src_axis in enumerate(u.arg):
            out[src_axis] = idx[out_axis]
        return tuple(out)
    if u.op is Ops.EXPAND:
        return tuple(0 if s == 1 else i for i, s in zip(idx, src.shape))
    if u.op is Ops.SHRINK:
        return tuple(i + b for i, (b, _) in zip(idx, u.arg))
    if u.op is Ops.FLIP:
        return tuple(n - 1 - i if ax in u.arg else i for ax, (i, n) in enumerate(zip(idx, src.shape)))
    # PAD: outside the source the value is zero
    out = tuple(i - b for i, (b, _) in zip(idx, u.arg))
    return out if all(0 <= i < n for i, n in zip(out, src.shape)) else None


def element(t: Any) -> Any:
    """The value of the only element of tensor `t` (size 1) as a Python scalar."""
    u, idx = t.uop, (0,) * len(t.shape)
    while True:
        view = realized.get(u)
        if view is not None:
            u = view
        op = u.op
        if op is Ops.BUFFER:
            buf = u.arg
            data = buf.numpy()
            t.device.synchronize()
            return data[idx[0]].item()
        if op is Ops.CONST:
            return python_value(u.arg, u.dtype)
        if op is Ops.IOTA:
            return python_value(idx[0], u.dtype)
        if op in _MOVEMENT:
            src_idx = _source_index(u, idx)
            if src_idx is None:
                return python_value(0, u.dtype)
            u, idx = u.src[0], src_idx
            continue
        # a computed value: realize it once (it is shared by every view of it), then read it
        node = wrap(u, t.device)
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
