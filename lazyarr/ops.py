"""Operations own their semantics: one definition per primitive tensor op.

Each `OpDef` says, for its op: the shape rule (`shape`), how to fold constants exactly as the
generated code computes them (`fold`, None where folding could differ from the target's math
library), and its local gradient (`local_gradient(y, i, adjoint)`: input i's share of the
adjoint of the output y, built from graph nodes, so that gradients are lazy graphs too). The renderer's syntax for each op lives with the renderer; how index
expressions pass through a movement op lives in rangeify.

Public functions (`lazyarr.elementwise`, ...) are compositions of these primitives.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.ir_kernels import scatter_add, scatter_last
from lazyarr.compiler.uop import FUNCTION_COST, OP_DEFS, GroupOp, Ops, UOp, alu_dtype, c_idiv, value_sources
from lazyarr.dtypes import DType
from lazyarr.graph import (alu, cast_uop, conj_uop, const, expand_uop, flip_uop, gather_uop, imag_part, lower_bound,
                           make_complex, pad_uop, permute_uop, real_part, reshape_uop, shrink_uop)


Gradient = Callable[[UOp, int, UOp], "UOp | None"]


class OpDef:
    """The semantics of one primitive op. `grad(y, i, adjoint)` is the local gradient: input i's
    share of the adjoint of output y, as graph nodes; None means no contribution (zero). `cost`:
    the operations one evaluation costs in work estimates (fusion, kernel optimisation, threads).
    `holomorphic`: the op is holomorphic in its sources (or linear with real coefficients), so its
    rule serves complex values too (see `complex_gradient`)."""
    op: Ops
    grad: Gradient | None = None
    cost: int = 1
    holomorphic = False

    def shape(self, u: UOp) -> tuple[int, ...]:
        return u.src[0].shape

    def fold(self, dtype: DType, *args: Any) -> Any:
        return None

    def local_gradient(self, y: UOp, i: int, adjoint: UOp) -> UOp | None:
        if y.dtype.is_complex or y.src[i].dtype.is_complex:
            return self.complex_gradient(y, i, adjoint)
        return None if self.grad is None else self.grad(y, i, adjoint)

    def complex_gradient(self, y: UOp, i: int, g: UOp) -> UOp | None:
        """Input i's share where complex values take part, in PyTorch's convention (the adjoint of
        z = x + iy is ∂L/∂x + i·∂L/∂y, for a real L): for a holomorphic op with derivative D, conj(D)·g,
        which is conj(grad(conj(g))) for a rule linear in the adjoint; leaves are real, so what
        reaches a real source is its real part. Ops that are not holomorphic say how themselves, or
        raise TypeError."""
        if not self.holomorphic or self.grad is None:
            raise TypeError(f"gradients do not flow through {y.op.name} of complex values ({y.src[i].dtype})")
        share = self.grad(y, i, conj_uop(g))
        return None if share is None else conj_uop(share)


def _np_scalar(x: Any, d: DType) -> Any:
    return d.np.type(x)


def _wrap(d: DType, v: Any) -> Any:
    return dtypes.python_value(v, d)


def _c_mod(a: int, b: int) -> int:
    return 0 if b == 0 else a - b * c_idiv(a, b)


def _shift(a: int, b: int, d: DType, left: bool) -> int:
    if b < 0 or b >= d.bits:
        return 0 if left or a >= 0 else -1
    return a << b if left else a >> b


class Elementwise(OpDef):
    """An ALU op: the output has the sources' (equal) shape. Its dtype rule: the value sources
    (all but WHERE's condition, which is bool) share one dtype, of a kind in `kinds`; the result
    is bool for a comparison, real for the absolute value of a complex number, and of the sources'
    dtype otherwise."""

    def __init__(self, op: Ops, int_fold: Callable | None = None, float_fold: Callable | None = None,
                 grad: Gradient | None = None, kinds: str = "biufc", holomorphic: bool = False, cost: int = 1):
        self.op, self.int_fold, self.float_fold, self.grad, self.kinds = op, int_fold, float_fold, grad, kinds
        self.holomorphic, self.cost = holomorphic, cost
        # the result has the sources' dtype: checked without the general rule
        self.plain = op not in GroupOp.Comparison and op is not Ops.ABS and op is not Ops.WHERE

    def complex_gradient(self, y: UOp, i: int, g: UOp) -> UOp | None:
        if self.op is Ops.ABS:
            return _complex_abs_grad(y, i, g)
        return super().complex_gradient(y, i, g)

    def check_dtypes(self, u: UOp) -> None:
        """Raises TypeError when u's sources or u's dtype break the rule (checked with the shape)."""
        src, d = u.src, u.dtype
        if self.plain and len(src) < 3 and src[0].dtype is d and d.kind in self.kinds and (len(src) == 1 or src[1].dtype is d):
            return   # the common case (every optimizer update builds dozens), without the general rule
        values = value_sources(self.op, src)
        d = values[0].dtype
        if (d.kind not in self.kinds or any(s.dtype is not d for s in values)
                or u.dtype is not alu_dtype(self.op, d) or (self.op is Ops.WHERE and not u.src[0].dtype.is_bool)):
            raise TypeError(f"{self.op.name} of {', '.join(str(s.dtype) for s in u.src)} as {u.dtype}: its sources "
                            f"must share one dtype of kind {'/'.join(self.kinds)} (WHERE: and a bool condition)")

    def shape(self, u: UOp) -> tuple[int, ...]:
        src = u.src
        self.check_dtypes(u)
        shape = src[0].shape
        # the other sources are checked where their shapes are known: computing them only for the
        # check would cost every update of an optimizer's state a shape it never needs
        if len(src) > 1 and (((s := src[1]._shape) is not None and s != shape) or
                             (len(src) > 2 and (s := src[2]._shape) is not None and s != shape)):
            raise ValueError(f"{u.op.name} of sources of different shapes: {', '.join(str(s.shape) for s in u.src)} "
                             "(broadcast them first)")
        return shape

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
LN2, LN10 = math.log(2.0), math.log(10.0)


def _x(y: UOp, i: int = 0) -> UOp:
    return y.src[i]


def _other(y: UOp, i: int) -> UOp:
    return y.src[1 - i]


def _sign(x: UOp) -> UOp:
    return alu(Ops.WHERE, alu(Ops.CMPLT, 0, x), 1, alu(Ops.WHERE, alu(Ops.CMPLT, x, 0), -1, 0, dtype=x.dtype))


def _minmax_share(y: UOp, i: int, g: UOp) -> UOp:
    """maximum/minimum: the chosen input gets the adjoint; at a tie each gets half."""
    x, other = y.src[i], y.src[1 - i]
    picked = alu(Ops.WHERE, alu(Ops.CMPEQ, x, other), 0.5, alu(Ops.WHERE, alu(Ops.CMPEQ, x, y), 1, 0, dtype=x.dtype))
    return alu(Ops.MUL, g, picked)


def _pow_grad(y: UOp, i: int, g: UOp) -> UOp:
    a, b = y.src
    if i == 0:   # b·a^(b-1), 0 where b is 0
        return alu(Ops.MUL, g, alu(Ops.WHERE, alu(Ops.CMPEQ, b, 0), 0, alu(Ops.MUL, b, alu(Ops.POW, a, alu(Ops.SUB, b, 1)))))
    # y·log(a), 0 where a is 0 (the limit for b > 0)
    return alu(Ops.MUL, g, alu(Ops.WHERE, alu(Ops.CMPEQ, a, 0), 0, alu(Ops.MUL, y, alu(Ops.LOG, a))))


def _rsqrt_of(x: UOp) -> UOp:
    return alu(Ops.RECIP, alu(Ops.SQRT, x))


def _unary(op: Ops, float_fold: Callable | None, derivative: Callable[[UOp, UOp], UOp], int_fold=None,
           **facts: Any) -> Elementwise:
    """An op whose local gradient is adjoint · derivative(x, y)."""
    return Elementwise(op, int_fold, float_fold, lambda y, i, g: alu(Ops.MUL, g, derivative(y.src[0], y)), **facts)


def _function(op: Ops, derivative: Callable[[UOp, UOp], UOp], holomorphic: bool = True,
              kinds: str = "fc") -> Elementwise:
    """A floating-point function computed by polynomial approximations and range reductions (or
    the target's library): a function's cost, no exact folding."""
    return _unary(op, None, derivative, kinds=kinds, holomorphic=holomorphic, cost=FUNCTION_COST)


def _zero_grad(op: Ops) -> Elementwise:   # (rounding: float and complex kinds)
    return Elementwise(op, None, None, None, kinds="fc")


# the records' facts: `kinds`, the dtype kinds an op takes (floating-point functions, integer
# arithmetic and bits, ordered comparisons: complex numbers have no order); `holomorphic`, the op's
# real rule serves complex values (holomorphic, or linear with real coefficients: see
# OpDef.complex_gradient; |z| has a rule of its own). An op taking complex values has its lowering
# to real ones in lazyarr.compiler.complex (tests/test_complex.py checks each)
FC, F, IU, BIU, BIUF = "fc", "f", "iu", "biu", "biuf"
IUFC = "iufc"   # negation and subtraction: no bools (NumPy refuses them; C's bool arithmetic would differ from folding)


ALU_DEFS: dict[Ops, Elementwise] = {e.op: e for e in [
    Elementwise(Ops.NEG, operator.neg, operator.neg, lambda y, i, g: alu(Ops.NEG, g), kinds=IUFC,
                holomorphic=True),
    Elementwise(Ops.NOT, lambda a: (not a) if isinstance(a, bool) else ~a, kinds=BIU),
    _unary(Ops.ABS, abs, lambda x, y: _sign(x), int_fold=abs),
    _unary(Ops.SQRT, np.sqrt, lambda x, y: alu(Ops.RECIP, alu(Ops.MUL, y, 2)), kinds=FC, holomorphic=True),
    _unary(Ops.RECIP, lambda a: a.dtype.type(1) / a, lambda x, y: alu(Ops.NEG, alu(Ops.MUL, y, y)), kinds=FC,
           holomorphic=True),
    _function(Ops.EXP, lambda x, y: y),
    _function(Ops.EXP2, lambda x, y: alu(Ops.MUL, y, LN2)),
    _function(Ops.EXPM1, lambda x, y: alu(Ops.ADD, y, 1)),
    _function(Ops.LOG, lambda x, y: alu(Ops.RECIP, x)),
    _function(Ops.LOG2, lambda x, y: alu(Ops.RECIP, alu(Ops.MUL, x, LN2))),
    _function(Ops.LOG10, lambda x, y: alu(Ops.RECIP, alu(Ops.MUL, x, LN10))),
    _function(Ops.LOG1P, lambda x, y: alu(Ops.RECIP, alu(Ops.ADD, x, 1))),
    _function(Ops.SIN, lambda x, y: alu(Ops.COS, x)),
    _function(Ops.COS, lambda x, y: alu(Ops.NEG, alu(Ops.SIN, x))),
    _function(Ops.TAN, lambda x, y: alu(Ops.ADD, alu(Ops.MUL, y, y), 1)),
    _function(Ops.ASIN, lambda x, y: _rsqrt_of(alu(Ops.SUB, 1, alu(Ops.MUL, x, x)))),
    _function(Ops.ACOS, lambda x, y: alu(Ops.NEG, _rsqrt_of(alu(Ops.SUB, 1, alu(Ops.MUL, x, x))))),
    _function(Ops.ATAN, lambda x, y: alu(Ops.RECIP, alu(Ops.ADD, alu(Ops.MUL, x, x), 1))),
    _function(Ops.SINH, lambda x, y: alu(Ops.COSH, x)),
    _function(Ops.COSH, lambda x, y: alu(Ops.SINH, x)),
    _function(Ops.TANH, lambda x, y: alu(Ops.SUB, 1, alu(Ops.MUL, y, y))),
    _function(Ops.ASINH, lambda x, y: _rsqrt_of(alu(Ops.ADD, alu(Ops.MUL, x, x), 1))),
    _function(Ops.ACOSH, lambda x, y: _rsqrt_of(alu(Ops.SUB, alu(Ops.MUL, x, x), 1))),
    _function(Ops.ATANH, lambda x, y: alu(Ops.RECIP, alu(Ops.SUB, 1, alu(Ops.MUL, x, x)))),
    _function(Ops.ERF, lambda x, y: alu(Ops.MUL, alu(Ops.EXP, alu(Ops.NEG, alu(Ops.MUL, x, x))), 2 / math.sqrt(math.pi)),
              holomorphic=False, kinds=F),
    _zero_grad(Ops.FLOOR), _zero_grad(Ops.CEIL), _zero_grad(Ops.TRUNC), _zero_grad(Ops.RINT),
    Elementwise(Ops.ADD, operator.add, operator.add, lambda y, i, g: g, holomorphic=True),
    Elementwise(Ops.SUB, operator.sub, operator.sub, lambda y, i, g: g if i == 0 else alu(Ops.NEG, g),
                kinds=IUFC, holomorphic=True),
    Elementwise(Ops.MUL, operator.mul, operator.mul, lambda y, i, g: alu(Ops.MUL, g, _other(y, i)), holomorphic=True),
    Elementwise(Ops.FDIV, None, operator.truediv,
                lambda y, i, g: alu(Ops.FDIV, g, y.src[1]) if i == 0
                else alu(Ops.NEG, alu(Ops.FDIV, alu(Ops.MUL, g, y), y.src[1])), kinds=FC, holomorphic=True),
    Elementwise(Ops.IDIV, c_idiv, kinds=IU), Elementwise(Ops.MOD, _c_mod, kinds=IU),
    Elementwise(Ops.MAX, max, None, _minmax_share, kinds=BIUF),
    Elementwise(Ops.MIN, min, None, _minmax_share, kinds=BIUF),
    Elementwise(Ops.POW, None, None, _pow_grad, holomorphic=True, cost=FUNCTION_COST),
    Elementwise(Ops.ATAN2, None, None, lambda y, i, g: alu(Ops.FDIV, alu(Ops.MUL, g, y.src[1] if i == 0 else alu(Ops.NEG, y.src[0])),
                                                           alu(Ops.ADD, alu(Ops.MUL, y.src[0], y.src[0]), alu(Ops.MUL, y.src[1], y.src[1]))),
                kinds=F, cost=FUNCTION_COST),
    Elementwise(Ops.HYPOT, None, None, lambda y, i, g: alu(Ops.MUL, g, alu(Ops.FDIV, y.src[i], y)), kinds=F),
    Elementwise(Ops.COPYSIGN, None, None,
                lambda y, i, g: None if i else alu(Ops.MUL, g, alu(Ops.WHERE, alu(Ops.CMPEQ, y, y.src[0]), 1, -1, dtype=g.dtype)),
                kinds=F),
    Elementwise(Ops.NEXTAFTER, kinds=F),
    Elementwise(Ops.FMOD, None, None, lambda y, i, g: g if i == 0 else
                alu(Ops.NEG, alu(Ops.MUL, g, alu(Ops.TRUNC, alu(Ops.FDIV, y.src[0], y.src[1])))), kinds=F),
    Elementwise(Ops.AND, operator.and_, kinds=BIU), Elementwise(Ops.OR, operator.or_, kinds=BIU),
    Elementwise(Ops.XOR, operator.xor, kinds=BIU),
    Elementwise(Ops.SHL, lambda a, b, d: _shift(a, b, d, True), kinds=IU),
    Elementwise(Ops.SHR, lambda a, b, d: _shift(a, b, d, False), kinds=IU),
    Elementwise(Ops.WHERE, lambda c, a, b: a if c else b, None,
                lambda y, i, g: None if i == 0 else alu(Ops.WHERE, y.src[0], g, 0) if i == 1 else alu(Ops.WHERE, y.src[0], 0, g),
                holomorphic=True),
    Elementwise(Ops.MULACC, lambda a, b, c: a * b + c, None,
                lambda y, i, g: g if i == 2 else alu(Ops.MUL, g, y.src[1 - i]), kinds=BIUF, holomorphic=True),
    *(Elementwise(op, fn, kinds=BIUF if op in (Ops.CMPLT, Ops.CMPLE) else "biufc") for op, fn in _cmp.items()),
]}
assert set(ALU_DEFS) == set(GroupOp.ALU), set(GroupOp.ALU) - set(ALU_DEFS)


class Leaf(OpDef):
    """BUFFER, CONST, IOTA: no sources, so no gradient to pass on."""

    def __init__(self, op: Ops, shape: Callable[[UOp], tuple[int, ...]]):
        self.op, self._shape = op, shape

    def shape(self, u: UOp) -> tuple[int, ...]:
        return self._shape(u)


def _marker_grad(y: UOp, i: int, g: UOp) -> UOp | None:
    """A marker passes the adjoint on; a value given a gradient of its own (`graph.with_gradient`:
    arg ("gradient", rule)) gives its inputs the rule's shares, and nothing to how it was computed."""
    if type(y.arg) is tuple and y.arg[0] == "gradient":
        return None if i == 0 else y.arg[1](y, i - 1, g)
    return g


def _call_grad(y: UOp, i: int, g: UOp) -> UOp | None:
    """A call's gradient is its spec's (`CallSpec.grad`), for the inputs its results also read."""
    call = y.src[0]
    return None if i == 0 or call.arg.grad is None else call.arg.grad(call, y.arg, g)[i - 1]


class CallResult(OpDef):
    """CALL_RESULT(call[, its inputs]): the call's result number arg. A call whose spec has a
    gradient (`CallSpec.grad`) gives its results its inputs as sources too, which gradients reach;
    with complex values only if the spec says its rule is written for them (`grad_complex`)."""
    op = Ops.CALL_RESULT
    grad = staticmethod(_call_grad)

    def shape(self, u: UOp) -> tuple[int, ...]:
        return u.src[0].arg.result_shapes[u.arg]

    def complex_gradient(self, y: UOp, i: int, g: UOp) -> UOp | None:
        if i == 0:
            return None
        if not y.src[0].arg.grad_complex:
            raise TypeError(f"gradients do not flow through {y.src[0].arg.name} of complex values")
        return _call_grad(y, i, g)


def _to_real(share: UOp, source: UOp) -> UOp:
    """What of a complex adjoint reaches a real source: its real part, in the source's dtype."""
    return cast_uop(real_part(share) if share.dtype.is_complex else share, source.dtype)


def _complex_cast_grad(y: UOp, i: int, g: UOp) -> UOp | None:
    src = y.src[0]
    if not src.dtype.is_inexact or not y.dtype.is_inexact:
        return None
    if src.dtype.is_complex and y.dtype.is_complex:
        return cast_uop(g, src.dtype)
    if src.dtype.is_complex:   # a complex value's real part: the adjoint is real
        return make_complex(cast_uop(g, dtypes.component(src.dtype)), const(0.0, dtypes.component(src.dtype), g.shape))
    return _to_real(g, src)


def _parts_grad(y: UOp, i: int, g: UOp) -> UOp:
    """GEP(z, (k,)) (part k of z) and VECTORIZE(re, im): the adjoint moved between parts."""
    if y.op is Ops.VECTORIZE:
        return (real_part if i == 0 else imag_part)(g)
    zero = const(0.0, g.dtype, g.shape)
    return make_complex(g, zero) if y.arg == (0,) else make_complex(zero, g)


def _complex_abs_grad(y: UOp, i: int, g: UOp) -> UOp:
    """|z|'s: g·z/|z| (0 where z is 0)."""
    z = y.src[0]
    scale = alu(Ops.WHERE, alu(Ops.CMPEQ, y, 0), 0, alu(Ops.FDIV, g, y))
    return make_complex(alu(Ops.MUL, scale, real_part(z)), alu(Ops.MUL, scale, imag_part(z)))


class Passthrough(OpDef):
    """Ops of their source's shape that only change how or where the value is held (and the
    complex parts: `complex_grad` says how the adjoint moves where complex values take part)."""
    holomorphic = True

    def __init__(self, op: Ops, grad: Gradient | None, complex_grad: Gradient | None = None):
        self.op, self.grad, self._complex_grad = op, grad, complex_grad

    def complex_gradient(self, y: UOp, i: int, g: UOp) -> UOp | None:
        if self._complex_grad is not None:
            return self._complex_grad(y, i, g)
        return super().complex_gradient(y, i, g)


def _cast_grad(y: UOp, i: int, g: UOp) -> UOp | None:
    src = y.src[0].dtype
    return cast_uop(g, src) if src.is_inexact and y.dtype.is_inexact else None


class Bitcast(OpDef):
    op = Ops.BITCAST

    def shape(self, u: UOp) -> tuple[int, ...]:
        s, src_size, dst_size = u.src[0].shape, u.src[0].dtype.itemsize, u.dtype.itemsize
        if src_size == dst_size:
            return s
        return s[:-1] + (s[-1] * src_size // dst_size,)


def _reduce_grad(y: UOp, i: int, g: UOp) -> UOp:
    x, (op, axes) = y.src[0], y.arg
    if op is Ops.ADD:
        return expand_uop(g, x.shape)
    if op in (Ops.MAX, Ops.MIN):   # shared evenly among the elements that attain the result
        hit = cast_uop(alu(Ops.CMPEQ, x, expand_uop(y, x.shape)), x.dtype)
        count = UOp(Ops.REDUCE_AXIS, x.dtype, (hit,), (Ops.ADD, axes))
        return alu(Ops.MUL, hit, expand_uop(alu(Ops.FDIV, g, count), x.shape))
    # product: the product of the other elements, also where x holds zeros
    is_zero = alu(Ops.CMPEQ, x, 0)
    nonzero_product = UOp(Ops.REDUCE_AXIS, x.dtype, (alu(Ops.WHERE, is_zero, 1, x),), (Ops.MUL, axes))
    zeros = UOp(Ops.REDUCE_AXIS, x.dtype, (cast_uop(is_zero, x.dtype),), (Ops.ADD, axes))
    zeros, nonzero_product, gx = (expand_uop(u, x.shape) for u in (zeros, nonzero_product, g))
    others = alu(Ops.WHERE, alu(Ops.CMPEQ, zeros, 0), alu(Ops.FDIV, nonzero_product, x),
                 alu(Ops.WHERE, alu(Ops.AND, alu(Ops.CMPEQ, zeros, 1), is_zero), nonzero_product, 0))
    return alu(Ops.MUL, gx, others)


class ReduceAxis(OpDef):
    """arg = (reduce op, axes): the reduced axes keep length 1."""
    op = Ops.REDUCE_AXIS
    holomorphic = True   # sums and products (complex values have no max or min)
    grad = staticmethod(_reduce_grad)

    def shape(self, u: UOp) -> tuple[int, ...]:
        axes = u.arg[1]
        return tuple(1 if i in axes else s for i, s in enumerate(u.src[0].shape))


def _selection_grad(y: UOp, g: UOp, axis: int) -> UOp | None:
    """The gradient of a gather along `axis` at strictly increasing positions p (k of them): x's
    element j along the axis receives g's element at p's position of j, found by a binary search
    of j in p, where p holds j, and 0 elsewhere. O(n log k), where the general rule is O(n·k)."""
    x = y.src[0]
    k, n = y.shape[axis], x.shape[axis]
    if k == 0:
        return None
    ix = y.src[1 + axis]
    p = reshape_uop(shrink_uop(ix, [(0, m) if a == axis else (0, 1) for a, m in enumerate(ix.shape)]), (k,))
    j = cast_uop(UOp(Ops.IOTA, dtypes.index, (), n), dtypes.int64)
    at = alu(Ops.MIN, lower_bound(p, j, lambda e, t: alu(Ops.CMPLT, e, t)), k - 1)
    hit = alu(Ops.CMPEQ, gather_uop(p, [at]), j)
    along = tuple(n if a == axis else 1 for a in range(len(x.shape)))
    src = [expand_uop(reshape_uop(at, along), x.shape) if a == axis else
           expand_uop(reshape_uop(cast_uop(UOp(Ops.IOTA, dtypes.index, (), m), dtypes.int64),
                                  tuple(m if b == a else 1 for b in range(len(x.shape)))), x.shape)
           for a, m in enumerate(x.shape)]
    return alu(Ops.WHERE, expand_uop(reshape_uop(hit, along), x.shape), gather_uop(g, src), 0)


def _permutation_grad(y: UOp, g: UOp, axis: int) -> UOp:
    """The gradient of a gather that permutes each line along `axis`: the adjoint put back where
    each element came from (a scatter, `ir_kernels.scatter_last`, along the axis moved last)."""
    order = [a for a in range(len(y.shape)) if a != axis] + [axis]
    back = [order.index(a) for a in range(len(order))]
    moved = scatter_last(permute_uop(g, order), cast_uop(permute_uop(y.src[1 + axis], order), dtypes.int64))
    return permute_uop(moved, back)


def _gather_grad(y: UOp, i: int, g: UOp) -> UOp | None:
    """d/dx of a gather is a scatter-add of the adjoint (`ir_kernels.scatter_add`: O(n + k), where
    a one-hot product summed over the output is O(n·k)); for a selection at increasing positions
    (a mask's), a gather of the adjoint; for a permutation (a sort's), a scatter."""
    if i != 0:
        return None
    if y.arg is not None and y.arg[0] == "permutation":
        return _permutation_grad(y, g, y.arg[1])
    if y.arg is not None:
        return _selection_grad(y, g, y.arg[1])
    return scatter_add(g, [cast_uop(ix, dtypes.int64) for ix in y.src[1:]], y.src[0].shape)


class Gather(OpDef):
    """GATHER(x, i_0, ..., i_{n-1}): the shape of the index arrays (already broadcast together)."""
    op = Ops.GATHER
    holomorphic = True   # linear, with real coefficients
    grad = staticmethod(_gather_grad)

    def shape(self, u: UOp) -> tuple[int, ...]:
        return u.src[1].shape if len(u.src) > 1 else ()


class Movement(OpDef):
    holomorphic = True   # linear, with real coefficients

    def __init__(self, op: Ops, shape: Callable[[tuple[int, ...], Any], tuple[int, ...]], grad: Gradient):
        self.op, self._shape, self.grad = op, shape, grad

    def shape(self, u: UOp) -> tuple[int, ...]:
        return self._shape(u.src[0].shape, u.arg)


def _unexpand(y: UOp, i: int, g: UOp) -> UOp:
    x = y.src[0]
    axes = tuple(a for a, (s, n) in enumerate(zip(x.shape, y.shape)) if s == 1 and n != 1)
    return UOp(Ops.REDUCE_AXIS, g.dtype, (g,), (Ops.ADD, axes)) if axes else g


MOVEMENT_DEFS = {
    Ops.RESHAPE: Movement(Ops.RESHAPE, lambda s, arg: arg, lambda y, i, g: reshape_uop(g, y.src[0].shape)),
    Ops.PERMUTE: Movement(Ops.PERMUTE, lambda s, arg: tuple(s[i] for i in arg),
                          lambda y, i, g: permute_uop(g, [y.arg.index(a) for a in range(len(y.arg))])),
    Ops.EXPAND: Movement(Ops.EXPAND, lambda s, arg: arg, _unexpand),
    Ops.PAD: Movement(Ops.PAD, lambda s, arg: tuple(b + n + a for n, (b, a) in zip(s, arg)),
                      lambda y, i, g: shrink_uop(g, [(b, b + n) for n, (b, _) in zip(y.src[0].shape, y.arg)])),
    Ops.SHRINK: Movement(Ops.SHRINK, lambda s, arg: tuple(e - b for b, e in arg),
                         lambda y, i, g: pad_uop(g, [(b, n - e) for n, (b, e) in zip(y.src[0].shape, y.arg)])),
    Ops.FLIP: Movement(Ops.FLIP, lambda s, arg: s, lambda y, i, g: flip_uop(g, y.arg)),
}

class IntIndex:
    """`source_index`'s arithmetic on Python ints: one element's index, mapped on the host."""
    zero = 0

    @staticmethod
    def size(n: int) -> int:
        return n

    offset = size

    @staticmethod
    def reshape(src_shape: tuple[int, ...], shape: tuple[int, ...], idxs: list[int]) -> list[int]:
        flat = 0
        for i, n in zip(idxs, shape):
            flat = flat * n + i
        out = []
        for n in reversed(src_shape):
            out.append(flat % n if n else 0)
            flat = flat // n if n else 0
        return out[::-1]

    @staticmethod
    def within(i: int, start: int, end: int) -> bool:
        return start <= i < end

    @staticmethod
    def both(a: bool, b: bool) -> bool:
        return a and b


def source_index(mv: UOp, idxs: list, arith: Any = IntIndex) -> tuple[list, Any]:
    """How an index passes through movement op `mv`: the index into its source that its element at
    `idxs` comes from, and where it is valid (None: everywhere; PAD: inside the source, zero
    outside). `arith` does the arithmetic: `IntIndex` for one element read on the host, rangeify's
    for index expressions (nodes), with `size`/`offset` turning a length or an offset into a
    kernel's size argument where the kernel is shape-generic."""
    x, op = mv.src[0], mv.op
    if op is Ops.RESHAPE:
        return arith.reshape(x.shape, mv.shape, idxs), None
    if op is Ops.PERMUTE:
        new = [arith.zero] * len(idxs)
        for out_axis, src_axis in enumerate(mv.arg):
            new[src_axis] = idxs[out_axis]
        return new, None
    if op is Ops.EXPAND:
        return [arith.zero if s == 1 and n != 1 else i for i, s, n in zip(idxs, x.shape, mv.shape)], None
    if op is Ops.SHRINK:
        return [i + arith.offset(b) if b else i for i, (b, _) in zip(idxs, mv.arg)], None
    if op is Ops.FLIP:
        return [(arith.size(n) - 1) - i if ax in mv.arg else i for ax, (i, n) in enumerate(zip(idxs, x.shape))], None
    assert op is Ops.PAD, op
    valid, new = None, []
    for i, n, (b, a) in zip(idxs, x.shape, mv.arg):
        if b == 0 and a == 0:
            new.append(i)
            continue
        start = arith.offset(b)
        inside = arith.within(i, start, arith.offset(b + n))
        valid = inside if valid is None else arith.both(valid, inside)
        new.append(i - start if b else i)
    return new, valid


OP_DEFS.update({
    **ALU_DEFS, **MOVEMENT_DEFS,
    Ops.BUFFER: Leaf(Ops.BUFFER, lambda u: (u.arg.size,)),
    Ops.CONST: Leaf(Ops.CONST, lambda u: ()),
    Ops.IOTA: Leaf(Ops.IOTA, lambda u: (u.arg,)),
    Ops.CAST: Passthrough(Ops.CAST, _cast_grad, _complex_cast_grad),
    # a buffer in both directions when asked (arg "both"): a composition that places buffers to
    # bound its work (the levels of a blocked scan) needs them for its adjoints as well
    Ops.CONTIGUOUS: Passthrough(Ops.CONTIGUOUS,
                                lambda y, i, g: UOp(Ops.CONTIGUOUS, g.dtype, (g,), y.arg) if y.arg == "both" else g),
    Ops.COPY: Passthrough(Ops.COPY, lambda y, i, g: g),
    Ops.DETACH: Passthrough(Ops.DETACH, None),    # the point of DETACH: no gradient flows through
    Ops.NOOP: Passthrough(Ops.NOOP, _marker_grad),   # a marker (leaves, functional grad's inputs, with_gradient)
    Ops.BITCAST: Bitcast(),
    Ops.REDUCE_AXIS: ReduceAxis(),
    Ops.GATHER: Gather(),
    Ops.PARAM: Leaf(Ops.PARAM, lambda u: u.arg[1]),
    Ops.DEFINE_VAR: Leaf(Ops.DEFINE_VAR, lambda u: ()),   # a schedule's scalar (uop.scalar_var)
    Ops.CALL_RESULT: CallResult(),
    # complex parts (tensor level, lowered by lazyarr.compiler.complex): GEP(z, (i,)) is part i of
    # z (0 real, 1 imaginary), VECTORIZE(re, im) the complex number of those parts
    Ops.GEP: Passthrough(Ops.GEP, None, _parts_grad),
    Ops.VECTORIZE: Passthrough(Ops.VECTORIZE, None, _parts_grad),
})
