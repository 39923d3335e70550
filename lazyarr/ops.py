"""Operations own their semantics: one definition per primitive tensor op.

Each `OpDef` says, for its op: the shape rule (`shape`), the dtype rule (`dtype`, used to check
a node when it is built), how to fold constants exactly as the generated code computes them
(`fold`, None where folding could differ from the target's math library), and its local
gradient (`local_gradient(y, i, adjoint)`: the adjoint's contribution to input `i`, filled in by
the autograd layer). The renderer's syntax for each op lives with the renderer; how index
expressions pass through a movement op lives in rangeify.

Public functions (`lazyarr.elementwise`, ...) are compositions of these primitives.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.uop import GroupOp, Ops, UOp
from lazyarr.dtypes import DType


class OpDef:
    """The semantics of one primitive op."""
    op: Ops

    def shape(self, u: UOp) -> tuple[int, ...]:
        return u.src[0].shape

    def fold(self, dtype: DType, *args: Any) -> Any:
        return None

    def local_gradient(self, y: UOp, i: int, adjoint: UOp) -> UOp | None:
        raise TypeError(f"{self.op.name} is not differentiable")


def _np_scalar(x: Any, d: DType) -> Any:
    return d.np.type(x)


def _wrap(d: DType, v: Any) -> Any:
    return dtypes.python_value(v, d)


def _c_idiv(a: int, b: int) -> int:
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _c_mod(a: int, b: int) -> int:
    return 0 if b == 0 else a - b * _c_idiv(a, b)


def _shift(a: int, b: int, d: DType, left: bool) -> int:
    if b < 0 or b >= d.bits:
        return 0 if left or a >= 0 else -1
    return a << b if left else a >> b


class Elementwise(OpDef):
    """An ALU op: the output has the sources' (equal) shape."""

    def __init__(self, op: Ops, int_fold: Callable | None = None, float_fold: Callable | None = None):
        self.op, self.int_fold, self.float_fold = op, int_fold, float_fold

    def shape(self, u: UOp) -> tuple[int, ...]:
        return u.src[-1].shape if u.op is Ops.WHERE else u.src[0].shape

    def fold(self, dtype: DType, *args: Any) -> Any:
        src_dtype = dtype
        if self.op in GroupOp.Comparison:
            # comparisons are folded in the sources' type; the caller passes values of that type
            return self.int_fold(*args) if self.int_fold else None
        if dtype.is_bool or dtype.is_int:
            if self.int_fold is None:
                return None
            if self.op in (Ops.SHL, Ops.SHR):
                return _wrap(dtype, self.int_fold(*args, src_dtype))
            return _wrap(dtype, self.int_fold(*args))
        if dtype.is_float and self.float_fold is not None:
            with np.errstate(all="ignore"):
                return float(self.float_fold(*(_np_scalar(a, dtype) for a in args)))
        return None


_cmp = {Ops.CMPLT: operator.lt, Ops.CMPLE: operator.le, Ops.CMPEQ: operator.eq, Ops.CMPNE: operator.ne}

ALU_DEFS: dict[Ops, Elementwise] = {
    Ops.NEG: Elementwise(Ops.NEG, operator.neg, operator.neg),
    Ops.NOT: Elementwise(Ops.NOT, lambda a: (not a) if isinstance(a, bool) else ~a),
    Ops.ABS: Elementwise(Ops.ABS, abs, abs),
    Ops.SQRT: Elementwise(Ops.SQRT, None, np.sqrt),
    Ops.RECIP: Elementwise(Ops.RECIP, None, lambda a: a.dtype.type(1) / a),
    Ops.ADD: Elementwise(Ops.ADD, operator.add, operator.add),
    Ops.SUB: Elementwise(Ops.SUB, operator.sub, operator.sub),
    Ops.MUL: Elementwise(Ops.MUL, operator.mul, operator.mul),
    Ops.FDIV: Elementwise(Ops.FDIV, None, operator.truediv),
    Ops.IDIV: Elementwise(Ops.IDIV, _c_idiv),
    Ops.MOD: Elementwise(Ops.MOD, _c_mod),
    Ops.MAX: Elementwise(Ops.MAX, max),
    Ops.MIN: Elementwise(Ops.MIN, min),
    Ops.AND: Elementwise(Ops.AND, operator.and_),
    Ops.OR: Elementwise(Ops.OR, operator.or_),
    Ops.XOR: Elementwise(Ops.XOR, operator.xor),
    Ops.SHL: Elementwise(Ops.SHL, lambda a, b, d: _shift(a, b, d, True)),
    Ops.SHR: Elementwise(Ops.SHR, lambda a, b, d: _shift(a, b, d, False)),
    Ops.WHERE: Elementwise(Ops.WHERE, lambda c, a, b: a if c else b, None),
    Ops.MULACC: Elementwise(Ops.MULACC, lambda a, b, c: a * b + c, None),
    **{op: Elementwise(op, fn) for op, fn in _cmp.items()},
}
for _op in GroupOp.ALU:
    ALU_DEFS.setdefault(_op, Elementwise(_op))


class Leaf(OpDef):
    def __init__(self, op: Ops, shape: Callable[[UOp], tuple[int, ...]]):
        self.op, self._shape = op, shape

    def shape(self, u: UOp) -> tuple[int, ...]:
        return self._shape(u)

    def local_gradient(self, y: UOp, i: int, adjoint: UOp) -> UOp | None:
        return None


class Passthrough(OpDef):
    """CAST, CONTIGUOUS, COPY, DETACH: the source's shape."""

    def __init__(self, op: Ops):
        self.op = op


class Bitcast(OpDef):
    op = Ops.BITCAST

    def shape(self, u: UOp) -> tuple[int, ...]:
        s, src_size, dst_size = u.src[0].shape, u.src[0].dtype.itemsize, u.dtype.itemsize
        if src_size == dst_size:
            return s
        return s[:-1] + (s[-1] * src_size // dst_size,)


class ReduceAxis(OpDef):
    """arg = (reduce op, axes): the reduced axes keep length 1."""
    op = Ops.REDUCE_AXIS

    def shape(self, u: UOp) -> tuple[int, ...]:
        axes = u.arg[1]
        return tuple(1 if i in axes else s for i, s in enumerate(u.src[0].shape))


class Movement(OpDef):
    def __init__(self, op: Ops, shape: Callable[[tuple[int, ...], Any], tuple[int, ...]]):
        self.op, self._shape = op, shape

    def shape(self, u: UOp) -> tuple[int, ...]:
        return self._shape(u.src[0].shape, u.arg)


MOVEMENT_DEFS = {
    Ops.RESHAPE: Movement(Ops.RESHAPE, lambda s, arg: arg),
    Ops.PERMUTE: Movement(Ops.PERMUTE, lambda s, arg: tuple(s[i] for i in arg)),
    Ops.EXPAND: Movement(Ops.EXPAND, lambda s, arg: arg),
    Ops.PAD: Movement(Ops.PAD, lambda s, arg: tuple(b + n + a for n, (b, a) in zip(s, arg))),
    Ops.SHRINK: Movement(Ops.SHRINK, lambda s, arg: tuple(e - b for b, e in arg)),
    Ops.FLIP: Movement(Ops.FLIP, lambda s, arg: s),
}

OP_DEFS: dict[Ops, OpDef] = {
    **ALU_DEFS, **MOVEMENT_DEFS,
    Ops.BUFFER: Leaf(Ops.BUFFER, lambda u: (u.arg.size,)),
    Ops.CONST: Leaf(Ops.CONST, lambda u: ()),
    Ops.IOTA: Leaf(Ops.IOTA, lambda u: (u.arg,)),
    Ops.CAST: Passthrough(Ops.CAST),
    Ops.CONTIGUOUS: Passthrough(Ops.CONTIGUOUS),
    Ops.COPY: Passthrough(Ops.COPY),
    Ops.DETACH: Passthrough(Ops.DETACH),
    Ops.BITCAST: Bitcast(),
    Ops.REDUCE_AXIS: ReduceAxis(),
}


def shape_of(u: UOp) -> tuple[int, ...]:
    d = OP_DEFS.get(u.op)
    if d is None:
        raise TypeError(f"{u.op.name} nodes have no shape")
    return d.shape(u)


def fold_alu(op: Ops, dtype: DType, args: list[Any]) -> Any:
    """The constant `op(*args)` of `dtype`, or None when it is not folded."""
    return ALU_DEFS[op].fold(dtype, *args)


# ---- identities of the reductions -------------------------------------------------------------

def reduce_identity(op: Ops, d: DType) -> Any:
    """The value a reduction of no elements gives (NumPy: 0 for sum, 1 for prod)."""
    if op is Ops.ADD:
        return dtypes.python_value(0, d)
    if op is Ops.MUL:
        return dtypes.python_value(1, d)
    if op is Ops.MAX:
        return dtypes.min_value(d)
    if op is Ops.MIN:
        return dtypes.max_value(d)
    raise ValueError(f"{op} is not a reduction")

