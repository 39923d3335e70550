"""Statistical functions (array API section "Statistical Functions") and the reductions they are
built on. A reduction is one REDUCE_AXIS primitive (add, mul, max, min) over the given axes;
reducing an axis of length 0 gives the reduction's identity (0 for sums, 1 for products) without
a kernel, and raises ValueError for max and min, which have none.

Complex arrays have sums and products (the complex product, multiplied out pair by pair: see
`lazyarr.compiler.complex`), means (each part averaged, as the standard asks), and NumPy's
variance and standard deviation (of |x - mean|, real); max and min raise TypeError (complex
numbers have no order).

`cumulative_sum` and `cumulative_prod` are compositions of primitives, so their gradients come
from the primitives' local gradients (also those of products with zeros). A short axis is
scanned as a triangle: out[i] = Σ_j where(j ≤ i, x[j], 0), one REDUCE_AXIS over a broadcast
(…, n, n). A long axis is cut into blocks of _SCAN_BLOCK, each scanned as a
triangle; the blocks' totals get a buffer and are scanned the same way (recursively), and each
block adds what comes before it: O(n·_SCAN_BLOCK) work and two kernels a level instead of O(n²).

The utility functions (`all`, `any`, `diff`) live here too: `diff` subtracts shifted slices."""
from __future__ import annotations

import builtins
import math
from typing import Any

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp, native_module, reduce_identity
from lazyarr.dtypes import DType
from lazyarr.elementwise import maximum, minimum, not_equal, subtract, where as choose_where
from lazyarr.manipulation import broadcast_to, concat, reshape
from lazyarr.arrays import Array, wrap
from lazyarr.creation import as_tensor
from lazyarr.graph import (alu, cast_uop, const, expand_uop, non_negative_int, normalize_axes, normalize_axis, pad_uop,
                           permute_uop, reshape_uop, shaped, shrink_uop)
from lazyarr.graph import imag_part, make_complex, real_part

_NAMES = {Ops.ADD: "sum", Ops.MUL: "prod", Ops.MAX: "maximum", Ops.MIN: "minimum"}


def reduce(x: Array, op: Ops, axis: Any = None, keepdims: bool = False, dtype: DType | None = None) -> Array:
    """The reduction `op` of x over `axis` (all axes when None), computed in `dtype`."""
    return wrap(reduce_uop(x, op, axis, keepdims, dtype), x.device)


# reduce_uop's nodes for a float array, built in C (compiler/record_native.c); every reduction takes it
_record = getattr(native_module, "record_reduce", None)


def reduce_uop(x: Array, op: Ops, axis: Any, keepdims: bool, dtype: DType | None) -> UOp:
    if _record is not None and (dtype is None or dtype is x.uop.dtype) and \
            (out := _record(x, op, axis, keepdims)) is not NotImplemented:
        return out   # (a float array of no empty axis: the nodes below, built in C)
    shape = x.shape
    axes = normalize_axes(axis, len(shape))
    u = cast_uop(x.uop, dtype or x.dtype)
    kept = tuple([1 if i in axes else s for i, s in enumerate(shape)])
    if 0 in shape and builtins.any(shape[a] == 0 for a in axes):
        if op in (Ops.MAX, Ops.MIN):
            raise ValueError(f"zero-size array to reduction operation {_NAMES[op]} which has no identity")
        out = const(reduce_identity(op, u.dtype), u.dtype, kept)
    elif 0 in kept:
        out = const(0, u.dtype, kept)
    else:
        out = u
        if axes:
            out = shaped(UOp(Ops.REDUCE_AXIS, u.dtype, (u,), (op, axes)), kept)   # (the shape rule's answer)
    if not keepdims:
        out = reshape_uop(out, tuple([s for i, s in enumerate(shape) if i not in axes]))
    return out


def _sum_dtype(d: DType) -> DType:
    """Sums and products of small integers accumulate in the default integer of their signedness."""
    if d.is_bool:
        return dtypes.default_int
    if d.is_int:
        return dtypes.uint64 if d.is_unsigned else dtypes.int64
    return d


def sum(x: Array, /, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Array:
    if dtype is None and _record is not None and (out := _record(x, Ops.ADD, axis, keepdims, True)) is not NotImplemented:
        return out   # (a float array: reduce's array, made in C)
    x = as_tensor(x)
    return reduce(x, Ops.ADD, axis, keepdims, _sum_dtype(x.dtype) if dtype is None else dtypes.as_dtype(dtype))


def prod(x: Array, /, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Array:
    x = as_tensor(x)
    return reduce(x, Ops.MUL, axis, keepdims, _sum_dtype(x.dtype) if dtype is None else dtypes.as_dtype(dtype))


def _ordered(name: str, x: Array) -> None:
    if x.dtype.is_complex:
        raise TypeError(f"{name}: complex numbers have no order (take abs(), real() or imag() first)")


class _NoValue:
    """NumPy's 'no initial given' (None is a value NumPy's reductions reject)."""
    def __repr__(self) -> str:
        return "<no value>"


NO_VALUE = _NoValue()


def max(x: Array, /, axis: Any = None, *, keepdims: bool = False, initial: Any = NO_VALUE,
        where: Any = True) -> Array:
    """The largest element; NumPy's `initial` (a value the maximum also covers: the answer of an
    empty reduction) and `where` (which elements count; NumPy asks for initial with it)."""
    return _extreme("max", Ops.MAX, x, axis, keepdims, initial, where)


def min(x: Array, /, axis: Any = None, *, keepdims: bool = False, initial: Any = NO_VALUE,
        where: Any = True) -> Array:
    """The smallest element, with NumPy's `initial` and `where` (as max)."""
    return _extreme("min", Ops.MIN, x, axis, keepdims, initial, where)


def _extreme(name: str, op: Ops, x: Any, axis: Any, keepdims: bool, initial: Any, where: Any) -> Array:
    x = as_tensor(x)
    _ordered(name, x)
    if initial is NO_VALUE:
        if where is not True:
            raise ValueError(f"reduction operation '{'maximum' if op is Ops.MAX else 'minimum'}' does not have an "
                             f"identity, so to use a where mask one has to specify 'initial'")
        return reduce(x, op, axis, keepdims)
    value = initial.item() if isinstance(initial, Array) else initial
    value = dtypes.cast_scalar(value, x.dtype)   # NumPy casts initial to x's dtype (2.5 into int: 2)
    if where is not True:   # the elements left out take initial's place
        mask = as_tensor(where, x.device)
        if not mask.dtype.is_bool:
            raise TypeError(f"{name}: where must be a boolean mask, not {mask.dtype}")
        x = choose_where(mask, x, value)
    axes = normalize_axes(axis, x.ndim)
    if builtins.any(x.shape[a] == 0 for a in axes):   # (an empty reduction: initial alone)
        shape = tuple(1 if a in axes else n for a, n in enumerate(x.shape) if keepdims or a not in axes)
        return wrap(const(value, x.dtype, shape), x.device)
    r = reduce(x, op, axis, keepdims)
    return (maximum if op is Ops.MAX else minimum)(r, value)   # (NaN-propagating, as NumPy's)


def _count(x: Array, axis: Any) -> int:
    shape = x.shape
    return math.prod(shape) if axis is None else math.prod(shape[a] for a in normalize_axes(axis, len(shape)))


def mean(x: Array, /, axis: Any = None, *, keepdims: bool = False) -> Array:
    """The arithmetic mean; integer and boolean arrays average in float64 as NumPy does (the
    standard leaves them unspecified). Empty → NaN."""
    if _record is not None and (total := _record(x, Ops.ADD, axis, keepdims, True)) is not NotImplemented:
        return total / float(_count(x, axis))   # (a float array of no empty axis: the nodes below, in C)
    x = as_tensor(x)
    d = x.dtype if x.dtype.is_inexact else dtypes.default_float
    total = reduce_uop(x, Ops.ADD, axis, keepdims, d)
    n = _count(x, axis)
    if d.is_complex:   # each part divided by n (a complex division by n + 0j would mix the parts)
        parts = (alu(Ops.FDIV, p(total), float(n) if n else math.nan) for p in (real_part, imag_part))
        return wrap(make_complex(*parts), x.device)
    shape = total.shape   # (the division built with its shape: a loop takes a mean or two every iteration)
    return wrap(shaped(UOp(Ops.FDIV, d, (total, const(float(n) if n else math.nan, d, shape))), shape), x.device)


def var(x: Array, /, axis: Any = None, *, correction: float = 0.0, keepdims: bool = False) -> Array:
    """The variance, dividing by (N - correction)."""
    x = as_tensor(x)
    d = x.dtype if x.dtype.is_inexact else dtypes.default_float
    xf = wrap(cast_uop(x.uop, d), x.device)
    m = mean(xf, axis=axis, keepdims=True)
    dev = xf - m
    if d.is_complex:   # NumPy's: the mean of |x - mean|², real
        re, im = real_part(dev.uop), imag_part(dev.uop)
        dev2 = wrap(alu(Ops.ADD, alu(Ops.MUL, re, re), alu(Ops.MUL, im, im)), x.device)
        d = re.dtype
    else:
        dev2 = dev * dev
    ss = reduce(dev2, Ops.ADD, axis, keepdims, d)
    n = _count(x, axis) - correction
    return wrap(alu(Ops.FDIV, ss.uop, float(n) if n > 0 else 0.0), x.device)


def std(x: Array, /, axis: Any = None, *, correction: float = 0.0, keepdims: bool = False) -> Array:
    """The standard deviation, the square root of `var`."""
    v = var(x, axis=axis, correction=correction, keepdims=keepdims)
    return wrap(alu(Ops.SQRT, v.uop), v.device)


def all(x: Array, /, axis: Any = None, *, keepdims: bool = False) -> Array:
    """Whether every element along `axis` is true (non-zero)."""
    x = as_tensor(x)
    b = wrap(cast_uop(x.uop, dtypes.bool_), x.device)
    return reduce(b, Ops.MIN, axis, keepdims) if _count(x, axis) else reduce_empty_bool(x, axis, keepdims, True)


def any(x: Array, /, axis: Any = None, *, keepdims: bool = False) -> Array:
    """Whether some element along `axis` is true (non-zero)."""
    x = as_tensor(x)
    b = wrap(cast_uop(x.uop, dtypes.bool_), x.device)
    return reduce(b, Ops.MAX, axis, keepdims) if _count(x, axis) else reduce_empty_bool(x, axis, keepdims, False)


def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Array:
    """The n-th discrete difference along `axis` (x[i+1] - x[i], n times), of x joined with
    `prepend` before it and `append` after it. Booleans differ by != as in NumPy. One kernel: the
    k-th difference reads x at k+1 shifts, which the code generator loads once each."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("diff: the array must have at least one dimension, got a 0-d array")
    n = non_negative_int("diff", "the order n", n)
    ax = normalize_axis(axis, x.ndim)
    if prepend is not None or append is not None:
        pieces = []
        for p in (prepend, x, append):
            if p is None:
                continue
            p = as_tensor(p, x.device)
            if p.ndim == 0:   # a scalar stands for a slice of length 1 (NumPy's rule)
                p = broadcast_to(p, tuple(1 if a == ax else s for a, s in enumerate(x.shape)))
            pieces.append(p)
        x = concat(pieces, axis=ax)
    for _ in range(n):
        length = x.shape[ax]
        if length == 0:
            break
        later, earlier = (wrap(shrink_uop(x.uop, [(b, b + length - 1) if a == ax else (0, s)
                                                  for a, s in enumerate(x.shape)]), x.device) for b in (1, 0))
        x = not_equal(later, earlier) if x.dtype.is_bool else subtract(later, earlier)
    return x


def reduce_empty_bool(x: Array, axis: Any, keepdims: bool, value: bool) -> Array:
    axes = normalize_axes(axis, x.ndim)
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    if not keepdims:
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    return wrap(const(value, dtypes.bool_, shape), x.device)


# An axis up to _SCAN_SHORT long is scanned as one triangle (n work per element, one kernel), and
# so is one up to _SCAN_TRIANGLE long while the whole triangle is at most _SCAN_TRIANGLE_WORK
# terms (a batch of many rows is cheaper in blocks: 262144×64 float32 took 190 ms as triangles,
# 70 ms in blocks). A longer axis is cut into blocks of _SCAN_BLOCK: each output element reduces
# up to that many inputs, and each level of blocks divides the length by it. Short blocks do the
# least work per element; each level costs two small kernels (measured on the CPU: blocks of 4
# scan 16M float32 about 2x faster than blocks of 8).
_SCAN_SHORT = 16
_SCAN_TRIANGLE = 64
_SCAN_TRIANGLE_WORK = 1 << 20
_SCAN_BLOCK = 4


def _triangle_scan(u: UOp, op: Ops, identity: Any) -> UOp:
    """The inclusive scan of `u` along its last axis (length n): element i is the reduction of
    elements 0..i, picked out of a (…, n, n) broadcast by the triangle j ≤ i."""
    *lead, n = u.shape
    square = (*lead, n, n)
    rows = expand_uop(reshape_uop(UOp(Ops.IOTA, dtypes.index, (), n), (n, 1)), (n, n))
    cols = expand_uop(reshape_uop(UOp(Ops.IOTA, dtypes.index, (), n), (1, n)), (n, n))
    keep = expand_uop(alu(Ops.CMPLE, cols, rows), square)
    spread = expand_uop(reshape_uop(u, (*lead, 1, n)), square)
    picked = UOp(Ops.WHERE, u.dtype, (keep, spread, const(identity, u.dtype, square)))
    return reshape_uop(UOp(Ops.REDUCE_AXIS, u.dtype, (picked,), (op, (len(lead) + 1,))), (*lead, n))


def _shrink_last(u: UOp, begin: int, end: int) -> UOp:
    return shrink_uop(u, [(0, s) for s in u.shape[:-1]] + [(begin, end)])


def shift_in(u: UOp, value: Any) -> UOp:
    """`value` followed by `u` along the last axis (by a where: a pad would put 0 there)."""
    shape = (*u.shape[:-1], u.shape[-1] + 1)
    first = expand_uop(alu(Ops.CMPEQ, UOp(Ops.IOTA, dtypes.index, (), shape[-1]), 0), shape)
    shifted = pad_uop(u, [(0, 0)] * (len(shape) - 1) + [(1, 0)])
    return UOp(Ops.WHERE, u.dtype, (first, const(value, u.dtype, shape), shifted))


def scan_uop(u: UOp, op: Ops, identity: Any) -> UOp:
    """The inclusive scan of `u` (length n ≥ 1) along its last axis with `op` (ADD or MUL, whose
    identity is `identity`): a triangle for a short axis, blocks of _SCAN_BLOCK for a long one."""
    *lead, n = u.shape
    if n <= _SCAN_SHORT or (n <= _SCAN_TRIANGLE and math.prod(u.shape) * n <= _SCAN_TRIANGLE_WORK):
        return _triangle_scan(u, op, identity)
    block = _SCAN_BLOCK
    m = -(-n // block)
    # the padding only reaches outputs past n, which are cut off, and the last block's total, which
    # nothing uses: a zero pad serves sums and products alike
    blocks = reshape_uop(pad_uop(u, [(0, 0)] * len(lead) + [(0, m * block - n)]), (*lead, m, block))
    within = _triangle_scan(blocks, op, identity)
    # the totals of blocks 0..m-2, scanned: what comes before blocks 1..m-1
    leading = shrink_uop(blocks, [(0, s) for s in lead] + [(0, m - 1), (0, block)])
    totals = UOp(Ops.REDUCE_AXIS, u.dtype, (leading,), (op, (len(lead) + 1,)))
    # each level gets buffers: fused into their readers, the totals and their scan would be
    # recomputed for every element that reads them (exponential work in the number of levels).
    # "both": their adjoints too, for the same reason in the backward pass
    totals = UOp(Ops.CONTIGUOUS, u.dtype, (reshape_uop(totals, (*lead, m - 1)),), "both")
    before = UOp(Ops.CONTIGUOUS, u.dtype, (scan_uop(totals, op, identity),), "both")
    before = shift_in(before, identity)   # block 0 has nothing before it
    out = alu(op, within, expand_uop(reshape_uop(before, (*lead, m, 1)), (*lead, m, block)))
    return _shrink_last(reshape_uop(out, (*lead, m * block)), 0, n)


def _cumulative(name: str, op: Ops, x: Array, axis: Any, dtype: Any, include_initial: bool) -> Array:
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError(f"{name}: the array must have at least one dimension, got a 0-d array")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for an array of {x.ndim} dimensions (it may be "
                             f"omitted only for a 1-d array)")
        axis = 0
    ax = normalize_axis(axis, x.ndim)
    d = _sum_dtype(x.dtype) if dtype is None else dtypes.as_dtype(dtype)
    shape = tuple(s + (1 if include_initial and i == ax else 0) for i, s in enumerate(x.shape))
    identity = reduce_identity(op, d)
    if x.size == 0:   # no element to scan: empty, or the initial value alone
        return wrap(const(identity, d, shape), x.device)
    # scanned along the last axis, then moved back
    order = [a for a in range(x.ndim) if a != ax] + [ax]
    u = permute_uop(cast_uop(x.uop, d), order)
    out = scan_uop(u, op, identity)
    if include_initial:
        out = shift_in(out, identity)
    return wrap(permute_uop(out, [order.index(a) for a in range(x.ndim)]), x.device)


def cumulative_sum(x: Array, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Array:
    """The cumulative sum along `axis` (which may be omitted for a 1-d array); with
    `include_initial`, a leading 0. Small integers accumulate in the default integer, as in sum."""
    return _cumulative("cumulative_sum", Ops.ADD, x, axis, dtype, include_initial)


def cumulative_prod(x: Array, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Array:
    """The cumulative product along `axis` (which may be omitted for a 1-d array); with
    `include_initial`, a leading 1. Small integers accumulate in the default integer, as in prod."""
    return _cumulative("cumulative_prod", Ops.MUL, x, axis, dtype, include_initial)


def cumsum(a: Array, axis: int | None = None, dtype: Any = None) -> Array:
    """NumPy's cumsum: axis None scans the flattened array."""
    return _numpy_scan("cumsum", Ops.ADD, a, axis, dtype)


def cumprod(a: Array, axis: int | None = None, dtype: Any = None) -> Array:
    """NumPy's cumprod: axis None scans the flattened array."""
    return _numpy_scan("cumprod", Ops.MUL, a, axis, dtype)


def _numpy_scan(name: str, op: Ops, a: Array, axis: int | None, dtype: Any) -> Array:
    a = as_tensor(a)
    return _cumulative(name, op, reshape(a, (-1,)) if axis is None else a, 0 if axis is None else axis, dtype, False)
