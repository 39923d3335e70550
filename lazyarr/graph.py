"""Graph-building helpers for tensor-level nodes: constants, ALU nodes of one shape, and the
movement ops with their no-op cases folded away (a reshape to the same shape is the node itself),
plus the shape and axis rules the namespace shares (broadcasting, axis normalisation)."""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

from numpy.exceptions import AxisError

from lazyarr import dtypes
from lazyarr.compiler.uop import OP_DEFS, Ops, UOp, alu_dtype, value_sources
from lazyarr.dtypes import DType

Shape = tuple[int, ...]


_consts: dict[tuple, UOp] = {}   # recently built constants (converting the value costs microseconds)


def const(value: Any, dtype: DType, shape: Shape = ()) -> UOp:
    """A constant node of `shape` (a broadcast scalar: no memory until realized)."""
    if type(shape) is not tuple:
        shape = tuple(shape)
    kind = type(value)
    if kind is float:   # 0.0 == -0.0, but they are different constants; NaN never finds itself
        key = (kind, value, id(dtype), shape) if value != 0.0 else ("zero", math.copysign(1.0, value), id(dtype), shape)
        cacheable = value == value
    else:
        key = (kind, value, id(dtype), shape)   # dtypes are interned; hashing one is a Python call
        cacheable = kind is int or kind is bool
    if cacheable:
        u = _consts.get(key)
        if u is not None:
            return u
    c = UOp.const(dtype, value)
    if c._shape is None:   # (shapes known here, without the shape rule: a loop's new scalar each step)
        c._shape = ()
    u = c
    if shape:
        ones = (1,) * len(shape)
        u = shaped(UOp(Ops.RESHAPE, dtype, (c,), ones), ones)
        if shape != ones:
            u = shaped(UOp(Ops.EXPAND, dtype, (u,), shape), shape)
    if cacheable:
        if len(_consts) >= 4096:
            _consts.clear()
        _consts[key] = u
    return u


def reshape_uop(u: UOp, shape: Shape) -> UOp:
    shape = tuple(shape)
    # a reshape of a reshape stays two nodes: the inner one may be a tensor that gradients target
    return u if u.shape == shape else shaped(UOp(Ops.RESHAPE, u.dtype, (u,), shape), shape)


def shaped(u: UOp, shape: Shape) -> UOp:
    """u, whose shape (its arg: a reshape's or an expand's) is known without its shape rule (every
    training step builds dozens of these)."""
    if u._shape is None:
        u._shape = shape
    return u


def expand_uop(u: UOp, shape: Shape) -> UOp:
    """`u` broadcast to `shape` (leading axes added, axes of length 1 stretched)."""
    shape = tuple(shape)
    if u.shape == shape:
        return u
    if len(u.shape) < len(shape):
        u = reshape_uop(u, (1,) * (len(shape) - len(u.shape)) + u.shape)
    if u.shape == shape:
        return u
    return shaped(UOp(Ops.EXPAND, u.dtype, (u,), shape), shape)


def permute_uop(u: UOp, axes: Sequence[int]) -> UOp:
    axes = tuple(axes)
    return u if axes == tuple(range(len(axes))) else UOp(Ops.PERMUTE, u.dtype, (u,), axes)


def shrink_uop(u: UOp, bounds: Sequence[tuple[int, int]]) -> UOp:
    bounds = tuple((int(b), int(e)) for b, e in bounds)
    return u if all(b == 0 and e == n for (b, e), n in zip(bounds, u.shape)) else UOp(Ops.SHRINK, u.dtype, (u,), bounds)


def pad_uop(u: UOp, padding: Sequence[tuple[int, int]]) -> UOp:
    padding = tuple((int(b), int(a)) for b, a in padding)
    return u if all(b == 0 and a == 0 for b, a in padding) else UOp(Ops.PAD, u.dtype, (u,), padding)


def flip_uop(u: UOp, axes: Sequence[int]) -> UOp:
    axes = tuple(sorted(a for a in axes if u.shape[a] > 1))
    return UOp(Ops.FLIP, u.dtype, (u,), axes) if axes else u


def normalize_axis(axis: Any, ndim: int) -> int:
    """`axis` as a non-negative axis of an array of `ndim` dimensions. Raises NumPy's AxisError
    (a ValueError and an IndexError) naming the axis and the rank."""
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim)
    return a % ndim if ndim else 0


def non_negative_int(name: str, what: str, v: Any) -> int:
    """v as a count (an integer of at least 0): TypeError naming `what` of function `name` for
    anything else than an integer, ValueError for a negative one."""
    try:
        n = operator.index(v)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an integer, got {type(v).__name__}") from None
    if n < 0:
        raise ValueError(f"{name}: {what} must be non-negative, got {n}")
    return n


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """`axis` (None for all, an int, or a tuple of ints) as sorted non-negative axes. Raises
    AxisError for an axis out of range and ValueError for a repeated one."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(normalize_axis(a, ndim) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return tuple(sorted(axes))


def cast_uop(u: UOp, dtype: DType) -> UOp:
    if u.dtype is dtype:
        return u
    if u.op is Ops.CONST:
        return UOp.const(dtype, _cast_value(u.arg, dtype))
    return UOp(Ops.CAST, dtype, (u,))


def _cast_value(v: Any, dtype: DType) -> Any:
    if dtype.is_bool:
        return bool(v)
    if dtype.is_int and isinstance(v, float):
        if not math.isfinite(v):
            return dtypes.min_value(dtype) if dtype.kind == "i" else 0
        return int(v)
    return v


def alu(op: Ops, *srcs: UOp | Any, dtype: DType | None = None) -> UOp:
    """A tensor-level ALU node of sources of one shape. Python scalars among them become constants
    of that shape and of the value sources' dtype (or `dtype` when every value is a scalar, as in
    where(c, 1.0, 0.0)). The result's dtype is the op's rule (`uop.alu_dtype`: comparisons are bool)."""
    if dtype is None and len(srcs) == 2 and type(srcs[0]) is UOp and type(srcs[1]) is UOp:   # the common case
        a, b = srcs
        u = UOp(op, alu_dtype(op, a.dtype), srcs)
        shape = a._shape
        if u._shape is None and shape is not None and b._shape == shape:   # the shape rule, inline
            OP_DEFS[op].check_dtypes(u)
            u._shape = shape
        return u
    shaped = [s for s in srcs if isinstance(s, UOp)]
    values = [s for s in value_sources(op, srcs) if isinstance(s, UOp)]
    if values:
        value_dtype = values[0].dtype
    else:
        assert dtype is not None, "alu: give the dtype when every value is a Python scalar"
        value_dtype = dtype
    shape = shaped[0].shape
    full = [s if isinstance(s, UOp) else const(s, dtypes.bool_ if op is Ops.WHERE and i == 0 else value_dtype, shape)
            for i, s in enumerate(srcs)]
    return UOp(op, alu_dtype(op, value_dtype) if dtype is None else dtype, tuple(full))


_broadcast: dict[tuple[Shape, ...], Shape] = {}   # shapes met → the shape they broadcast to


def broadcast_shapes(*shapes: Shape) -> Shape:
    """The shape all `shapes` broadcast to. Raises ValueError naming the shapes that do not."""
    try:
        out = _broadcast.get(shapes)   # (a loop broadcasts the same shapes every iteration)
    except TypeError:   # (a shape given as a list)
        return _broadcast_shapes(shapes)
    if out is None:
        out = _broadcast_shapes(shapes)
        if len(_broadcast) >= 4096:
            _broadcast.clear()
        _broadcast[shapes] = out
    return out


def _broadcast_shapes(shapes: tuple[Shape, ...]) -> Shape:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ValueError("operands could not be broadcast together with shapes "
                             + " ".join(f"({','.join(map(str, s))}{',' if len(s) == 1 else ''})" for s in shapes))
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def gather_uop(x: UOp, indices: Sequence[UOp], increasing_axis: int | None = None,
               permutation_axis: int | None = None) -> UOp:
    """x at data-dependent positions: one integer index array per axis of x, all of one shape
    (the result's). The caller has checked that the indices are in range. `increasing_axis` d
    says that the gather picks along axis d only, at strictly increasing positions (the indices of
    the other axes are the output's own positions): a selection, such as a mask's, whose gradient
    is a gather as well (arg ("increasing", d)). `permutation_axis` d says the same of positions
    that permute each line along axis d (a sort's), whose gradient is a scatter (arg
    ("permutation", d))."""
    assert len(indices) == len(x.shape) and all(i.shape == indices[0].shape for i in indices)
    arg = ("increasing", increasing_axis) if increasing_axis is not None else \
        ("permutation", permutation_axis) if permutation_axis is not None else None
    return UOp(Ops.GATHER, x.dtype, (x, *indices), arg)


def lower_bound(sorted_u: UOp, targets: UOp, before: Callable[[UOp, UOp], UOp]) -> UOp:
    """For each target t, how many elements e of the 1-D node `sorted_u` come before it
    (`before(e, t)`, a bool node, true for a prefix of `sorted_u`): a binary search of
    log2(n) + 1 steps, each a gather of one element per target, all in one kernel. int64, of the
    targets' shape."""
    n = sorted_u.shape[0]
    pos = const(0, dtypes.int64, targets.shape)
    step = 1 << (n.bit_length() - 1) if n else 0   # the largest power of two ≤ n, then halves
    while step:
        cand = alu(Ops.ADD, pos, step)
        e = gather_uop(sorted_u, [alu(Ops.MIN, alu(Ops.SUB, cand, 1), n - 1)])
        pos = alu(Ops.WHERE, alu(Ops.AND, alu(Ops.CMPLE, cand, n), before(e, targets)), cand, pos)
        step >>= 1
    return pos


def sorts_before(a: UOp, b: UOp) -> UOp:
    """a < b in the order sort gives (bool node): NaNs after every number; complex numbers by their
    real parts, then their imaginary parts."""
    if a.dtype.is_complex:
        (ar, ai), (br, bi) = (real_part(a), imag_part(a)), (real_part(b), imag_part(b))
        return alu(Ops.OR, sorts_before(ar, br), alu(Ops.AND, sorts_equal(ar, br), sorts_before(ai, bi)))
    less = alu(Ops.CMPLT, a, b)
    if not a.dtype.is_float:
        return less
    return alu(Ops.OR, less, alu(Ops.AND, alu(Ops.CMPNE, b, b), alu(Ops.CMPEQ, a, a)))   # b NaN, a not


def sorts_equal(a: UOp, b: UOp) -> UOp:
    """Whether neither of a and b sorts before the other (NaNs are equal here)."""
    eq = alu(Ops.CMPEQ, a, b)
    if not a.dtype.is_float:
        return eq
    return alu(Ops.OR, eq, alu(Ops.AND, alu(Ops.CMPNE, a, a), alu(Ops.CMPNE, b, b)))


def call_results(spec: Any, srcs: Sequence[UOp]) -> tuple[UOp, ...]:
    """The results of a CALL running `spec` (a `CallSpec`) on `srcs`."""
    call = UOp(Ops.CALL, dtypes.void, tuple(srcs), spec)
    return tuple(call_result(call, i) for i in range(len(spec.result_dtypes)))


def call_result(call: UOp, i: int) -> UOp:
    """Result i of a CALL; one of a call that has a gradient reads the call's inputs too, so that
    gradients reach them (`lazyarr.ops.CallResult`)."""
    src = (call, *call.src) if call.arg.grad is not None else (call,)
    return UOp(Ops.CALL_RESULT, call.arg.result_dtypes[i], src, i)


def with_gradient(value: UOp, inputs: Sequence[UOp], rule: Any) -> UOp:
    """value, whose gradient flows to `inputs` by `rule(marker, i, adjoint)` (input i's share), not
    through the nodes value was computed by (`lazyarr.ops`: a NOOP marker; prepare drops it)."""
    return UOp(Ops.NOOP, value.dtype, (value, *inputs), ("gradient", rule))


def real_part(u: UOp) -> UOp:
    """The real part of a complex node (GEP lane 0), of its component type."""
    return UOp(Ops.GEP, dtypes.component(u.dtype), (u,), (0,))


def imag_part(u: UOp) -> UOp:
    """The imaginary part of a complex node (GEP lane 1), of its component type."""
    return UOp(Ops.GEP, dtypes.component(u.dtype), (u,), (1,))


def conj_uop(u: UOp) -> UOp:
    """The complex conjugate (a real node itself)."""
    return make_complex(real_part(u), alu(Ops.NEG, imag_part(u))) if u.dtype.is_complex else u


def make_complex(re: UOp, im: UOp) -> UOp:
    """The complex node of parts re and im (real nodes of one shape and float type)."""
    return UOp(Ops.VECTORIZE, dtypes.complex_of(re.dtype), (re, im))


MAX_SIZE = 2 ** 63 - 1   # NumPy's npy_intp: the most elements along an axis, and in an array

def check_dimensions(shape: tuple[int, ...]) -> tuple[int, ...]:
    """`shape`, after NumPy's limits: ValueError for an axis longer than an int64 can count
    ("Maximum allowed dimension exceeded") or for more elements in all than that ("array is too
    big"), where lazyarr's kernels would compute indices that overflow."""
    total = 1
    for s in shape:
        if s > MAX_SIZE:
            raise ValueError(f"Maximum allowed dimension exceeded: shape {shape}")
        if s:
            total *= s
    if total > MAX_SIZE:
        raise ValueError(f"array is too big: shape {shape} has more elements than an int64 can count")
    return shape
