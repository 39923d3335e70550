"""Statistical functions (array API section "Statistical Functions") and the reductions they are
built on. A reduction is one REDUCE_AXIS primitive (add, mul, max, min) over the given axes;
reducing an axis of length 0 gives the reduction's identity (0 for sums, 1 for products) without
a kernel, and raises ValueError for max and min, which have none.

Complex arrays have sums and products (the complex product, multiplied out pair by pair: see
`lazyarr.compiler.complex`), means (each part averaged, as the standard asks), and NumPy's
variance and standard deviation (of |x - mean|, real); max and min raise TypeError (complex
numbers have no order)."""
from __future__ import annotations

import builtins
import math
from typing import Any

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.dtypes import DType
from lazyarr.ops import reduce_identity
from lazyarr.tensor import Tensor, as_tensor, wrap
from lazyarr.graph import alu, cast_uop, const, normalize_axes, reshape_uop

_NAMES = {Ops.ADD: "sum", Ops.MUL: "prod", Ops.MAX: "maximum", Ops.MIN: "minimum"}


def reduce(x: Tensor, op: Ops, axis: Any = None, keepdims: bool = False, dtype: DType | None = None) -> Tensor:
    """The reduction `op` of x over `axis` (all axes when None), computed in `dtype`."""
    axes = normalize_axes(axis, x.ndim)
    u = cast_uop(x.uop, dtype or x.dtype)
    kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    if builtins.any(x.shape[a] == 0 for a in axes):
        if op in (Ops.MAX, Ops.MIN):
            raise ValueError(f"zero-size array to reduction operation {_NAMES[op]} which has no identity")
        out = const(reduce_identity(op, u.dtype), u.dtype, kept)
    elif math.prod(kept) == 0:
        out = const(0, u.dtype, kept)
    else:
        out = UOp(Ops.REDUCE_AXIS, u.dtype, (u,), (op, axes)) if axes else u
    if not keepdims:
        out = reshape_uop(out, tuple(s for i, s in enumerate(x.shape) if i not in axes))
    return wrap(out, x.device)


def _sum_dtype(d: DType) -> DType:
    """Sums and products of small integers accumulate in the default integer of their signedness."""
    if d.is_bool:
        return dtypes.default_int
    if d.is_int:
        return dtypes.uint64 if d.is_unsigned else dtypes.int64
    return d


def _numeric(name: str, x: Tensor) -> None:
    if x.dtype.is_bool and name not in ("sum", "prod", "max", "min"):
        raise TypeError(f"{name}: boolean arrays are not supported")


def sum(x: Tensor, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    x = as_tensor(x)
    return reduce(x, Ops.ADD, axis, keepdims, _sum_dtype(x.dtype) if dtype is None else dtypes.as_dtype(dtype))


def prod(x: Tensor, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    x = as_tensor(x)
    return reduce(x, Ops.MUL, axis, keepdims, _sum_dtype(x.dtype) if dtype is None else dtypes.as_dtype(dtype))


def _ordered(name: str, x: Tensor) -> None:
    if x.dtype.is_complex:
        raise TypeError(f"{name}: complex numbers have no order (take abs(), real() or imag() first)")


def max(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    x = as_tensor(x)
    _ordered("max", x)
    return reduce(x, Ops.MAX, axis, keepdims)


def min(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    x = as_tensor(x)
    _ordered("min", x)
    return reduce(x, Ops.MIN, axis, keepdims)


def _count(x: Tensor, axis: Any) -> int:
    return math.prod(x.shape[a] for a in normalize_axes(axis, x.ndim))


def mean(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """The arithmetic mean; integer arrays average in float64 as NumPy does. Empty → NaN."""
    x = as_tensor(x)
    _numeric("mean", x)
    d = x.dtype if x.dtype.is_inexact else dtypes.default_float
    total = reduce(x, Ops.ADD, axis, keepdims, d)
    n = _count(x, axis)
    if d.is_complex:   # each part divided by n (a complex division by n + 0j would mix the parts)
        from lazyarr.elementwise import imag_part, make_complex, real_part
        u = total.uop
        return wrap(make_complex(*(alu(Ops.FDIV, p(u), float(n) if n else math.nan) for p in (real_part, imag_part))),
                    x.device)
    return wrap(alu(Ops.FDIV, total.uop, float(n) if n else math.nan), x.device)


def var(x: Tensor, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Tensor:
    """The variance, dividing by (N - correction)."""
    x = as_tensor(x)
    _numeric("var", x)
    d = x.dtype if x.dtype.is_inexact else dtypes.default_float
    xf = wrap(cast_uop(x.uop, d), x.device)
    m = mean(xf, axis=axis, keepdims=True)
    dev = xf - m
    if d.is_complex:   # NumPy's: the mean of |x - mean|², real
        from lazyarr.elementwise import imag_part, real_part
        re, im = real_part(dev.uop), imag_part(dev.uop)
        dev2 = wrap(alu(Ops.ADD, alu(Ops.MUL, re, re), alu(Ops.MUL, im, im)), x.device)
        d = re.dtype
    else:
        dev2 = dev * dev
    ss = reduce(dev2, Ops.ADD, axis, keepdims, d)
    n = _count(x, axis) - correction
    return wrap(alu(Ops.FDIV, ss.uop, float(n) if n > 0 else 0.0), x.device)


def std(x: Tensor, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Tensor:
    """The standard deviation, the square root of `var`."""
    v = var(x, axis=axis, correction=correction, keepdims=keepdims)
    return wrap(alu(Ops.SQRT, v.uop), v.device)


def all(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether every element along `axis` is true (non-zero)."""
    x = as_tensor(x)
    b = wrap(cast_uop(x.uop, dtypes.bool_), x.device)
    return reduce(b, Ops.MIN, axis, keepdims) if _count(x, axis) else reduce_empty_bool(x, axis, keepdims, True)


def any(x: Tensor, /, *, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether some element along `axis` is true (non-zero)."""
    x = as_tensor(x)
    b = wrap(cast_uop(x.uop, dtypes.bool_), x.device)
    return reduce(b, Ops.MAX, axis, keepdims) if _count(x, axis) else reduce_empty_bool(x, axis, keepdims, False)


def reduce_empty_bool(x: Tensor, axis: Any, keepdims: bool, value: bool) -> Tensor:
    axes = normalize_axes(axis, x.ndim)
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    if not keepdims:
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    return wrap(const(value, dtypes.bool_, shape), x.device)
