"""Element-wise functions (array API section "Element-wise Functions"), with NumPy's names too.

Each function checks its operands' dtypes (TypeError when the kind is not allowed), promotes and
broadcasts them (`operands`), and lowers to primitive ALU ops. Where C's arithmetic differs from
NumPy's, the lowering composes primitives so that the result is NumPy's: floor division and
remainder round toward minus infinity, logaddexp handles equal infinities, signbit reads the sign
bit. Floating-point functions of integer or boolean arrays give NumPy's float type: float16 for
8-bit types, float32 for 16-bit ones, float64 for wider ones.

Complex arrays (complex64, complex128) take every function the standard defines for them: the
arithmetic, the exponentials, logarithms, powers, roots, the circular and hyperbolic functions and
their inverses (ops of complex dtype, lowered to real arithmetic by `lazyarr.compiler.complex`,
with the standard's special cases), abs, sign, round, real, imag, conj, the comparisons == and !=,
isnan/isinf/isfinite and where; NumPy's angle too. The real and imaginary parts are GEP nodes of
the complex value and VECTORIZE builds one from its parts (also lowered).
"""
from __future__ import annotations

import builtins as _builtins
import math
import operator
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.buffer_views import is_buffer_view, view_buffer
from lazyarr.compiler.uop import Ops, UOp, native_module, realized
from lazyarr.dtypes import DType
from lazyarr.arrays import Array, grad_mode, make_view, wrap
from lazyarr.creation import as_tensor, is_scalar
from lazyarr.graph import _consts, alu, broadcast_shapes, cast_uop, const, expand_uop, imag_part, make_complex, real_part
from lazyarr.runtime.device import Device

KINDS = {"numeric": "biufc", "real": "biuf", "integer": "iu", "integer_or_bool": "biu", "float": "fc", "real_float": "f",
         "any": "biufc", "bool": "b", "real_number": "iuf", "number": "iufc"}


def operands(*args: Any, dtype_rule: str = "promote") -> tuple[list[UOp], DType, Device]:
    """The arguments of an elementwise operation as nodes of one shape and dtype: Tensors promoted
    by the array API's table, Python scalars weakly (they take the arrays' dtype when their kind
    fits), NumPy arrays as arrays. Raises ValueError for mismatched shapes or devices, TypeError for
    unsupported operands, OverflowError for a Python int outside the dtype's range."""
    if len(args) == 2:   # the common cases, without the general bookkeeping: recording must be cheap
        fast = _two_operands(*args)
        if fast is not None:
            return fast
    tensors: list[Array | None] = []
    for a in args:
        if isinstance(a, Array):
            tensors.append(a)
        elif is_scalar(a):
            tensors.append(None)
        elif isinstance(a, (np.ndarray, np.generic, list, tuple)):
            tensors.append(as_tensor(a))
        else:
            raise TypeError(f"unsupported operand type {type(a).__name__}")
    arrays = [t for t in tensors if t is not None]
    if not arrays:
        raise TypeError("at least one operand must be an array")
    device = arrays[0].device
    for t in arrays[1:]:
        if t.device is not device:
            raise ValueError(f"operands are on different devices: {device.name} and {t.device.name}; "
                             f"move one with to_device()")
    dtype = dtypes.promote_types(*(t.dtype for t in arrays))
    for a, t in zip(args, tensors):
        if t is None:
            dtype = dtypes.weak_result(dtype, a) if dtype_rule == "promote" else dtype
    for a, t in zip(args, tensors):
        if t is None:
            dtypes.check_scalar_fits(a, dtype)
    shape = broadcast_shapes(*(t.shape for t in arrays))
    out = []
    for a, t in zip(args, tensors):
        if t is None:
            out.append(const(a, dtype, shape))
        else:
            out.append(expand_uop(cast_uop(t.uop, dtype), shape))
    return out, dtype, device


_weak_dtype: dict[tuple[int, type], DType] = {}


def _two_operands(a: Any, b: Any) -> tuple[list[UOp], DType, Device] | None:
    """operands() for two tensors of one dtype and device, or a tensor and a Python int or float."""
    ta, tb, made = type(a), type(b), Array.made
    if ta is made and tb is made:
        ua, ub = a._uop, b._uop
        if ua.dtype is not ub.dtype or a.device is not b.device:
            return None
        if ua.shape != ub.shape:   # a bias, a row's max: broadcast as operands() would
            shape = broadcast_shapes(ua.shape, ub.shape)
            ua, ub = expand_uop(ua, shape), expand_uop(ub, shape)
        return [ua, ub], ua.dtype, a.device
    if ta is made and (tb is float or tb is int):
        t, scalar, first = a, b, True
    elif tb is made and (ta is float or ta is int):
        t, scalar, first = b, a, False
    else:
        return None
    u = t._uop
    key = (id(u.dtype), type(scalar))   # dtypes are interned; hashing one is a Python call
    dtype = _weak_dtype.get(key)
    if dtype is None:
        dtype = _weak_dtype[key] = dtypes.weak_result(u.dtype, scalar)
    if dtype.kind in "iu":
        dtypes.check_scalar_fits(scalar, dtype)
    c = const(scalar, dtype, u.shape)
    u = cast_uop(u, dtype)
    return ([u, c] if first else [c, u]), dtype, t.device


def _check(name: str, dtype: DType, kinds: str) -> None:
    if dtype.kind not in KINDS[kinds]:
        raise TypeError(f"{name}: arrays of dtype {dtype} are not supported (expected {kinds.replace('_', ' ')} "
                        f"dtypes)")


def _float_of(d: DType) -> DType:
    """The float type NumPy computes a float function of d in (float16 for 8-bit types)."""
    if d.is_inexact:
        return d
    return dtypes.float16 if d.itemsize == 1 else dtypes.float32 if d.itemsize == 2 else dtypes.float64


def _unary(name: str, x: Any, build, kinds: str = "real") -> Array:
    t = as_tensor(x)
    _check(name, t.dtype, kinds)
    return wrap(build(t.uop), t.device)


def _float_unary(name: str, x: Any, op: Ops) -> Array:
    if _record_unary is not None and (out := _record_unary(x, op, "f")) is not NotImplemented:
        return out   # (a float array: the node below, built in C)
    t = as_tensor(x)
    _check(name, t.dtype, "numeric")
    u = cast_uop(t.uop, _float_of(t.dtype))
    return wrap(UOp(op, u.dtype, (u,)), t.device)


def _binary(name: str, a: Any, b: Any, build, kinds: str = "real", to_float: bool = False) -> Array:
    (ua, ub), dtype, device = _two_operands(a, b) or operands(a, b)
    if dtype.kind not in KINDS[kinds]:
        _check(name, dtype, kinds)
    if to_float and not dtype.is_inexact:
        # NumPy divides integers in float64 whatever their size
        f = dtypes.default_float if name == "divide" else _float_of(dtype)
        ua, ub = cast_uop(ua, f), cast_uop(ub, f)
    return wrap(build(ua, ub), device)


def _op(op: Ops):
    return lambda *src: alu(op, *src)


# ---- arithmetic ------------------------------------------------------------------------------

# the builders of the commonest operations, made once (a closure made per call costs every operation)
def _add(a: UOp, b: UOp) -> UOp: return alu(Ops.OR if a.dtype.kind == "b" else Ops.ADD, a, b)
def _multiply(a: UOp, b: UOp) -> UOp: return alu(Ops.AND if a.dtype.kind == "b" else Ops.MUL, a, b)
_subtract, _divide = _op(Ops.SUB), _op(Ops.FDIV)


def fast_operator(op: Ops, general: Any, reflected: bool = False) -> Any:
    """The operator `x (op) other` (or `other (op) x`, reflected) with the commonest operands recorded
    directly: a float array and a Python float or int, an integer array and a Python int (ADD, SUB
    and MUL), or two arrays of one dtype and device (broadcast). The result's dtype is the array's (weak
    scalars take it), the sources need no cast, and the op's dtype rule holds; any
    other operands go to `general`, the operator's general form. (A loop records dozens of these
    an iteration: the calls this saves are most of the time it takes to record one.)"""
    ints = op is not Ops.FDIV

    def operator(x: Array, other: Any) -> Any:
        u = x._uop
        d, kind, t = u.dtype, u.dtype.kind, type(other)
        if kind == "f" and (t is float or t is int) or kind in "iu" and ints and t is int:
            if kind != "f":
                dtypes.check_scalar_fits(other, d)
            shape = u.shape
            c = const(other, d, shape)
            n = UOp(op, d, (c, u) if reflected else (u, c))
        elif t is Array.made and (kind == "f" or kind in "iu" and ints) and (v := other._uop).dtype is d and \
                other.device is x.device:
            shape = u.shape
            if shape != v.shape:   # a bias, a 0-d array, a row's mean: broadcast as operands() would
                shape = broadcast_shapes(shape, v.shape)
                u, v = expand_uop(u, shape), expand_uop(v, shape)
            n = UOp(op, d, (v, u) if reflected else (u, v))
        else:
            return general(x, other)
        if n._shape is None:
            n._shape = shape
        return wrap(n, x.device)
    record = _record
    if record is None:
        return operator

    def recorded(x: Array, other: Any) -> Any:   # the cases above in C (record_native.c), any other there
        out = record(x, other, op, reflected, ints)
        return operator(x, other) if out is NotImplemented else out
    return recorded


def fast_recorded(op: Ops, general: Any, reflected: bool = False, ints: bool = True, result: DType | None = None) -> Any:
    """The operator `x (op) other` (`other (op) x`, reflected: `x > c` is `c < x`) with
    fast_operator's operands recorded in C (integer arrays only where `ints`; of dtype `result`, a
    comparison's bool, where given): comparisons and powers, whose Python path is the general one;
    any other operands, and every one without the C module, by `general`."""
    record = _record
    if record is None:
        return general

    def recorded(x: Array, other: Any) -> Any:
        out = record(x, other, op, reflected, ints, result)
        return general(x, other) if out is NotImplemented else out
    return recorded


# `x (op) c` and `x (op) y` of one shape, recorded in C (`compiler/record_native.c`)
_record = getattr(native_module, "record_binary", None)
_record_unary = getattr(native_module, "record_unary", None)
if _record is not None:
    native_module.setup_record(Array, grad_mode, _consts, const, dtypes.check_scalar_fits, UOp,
                               (Ops.RESHAPE, Ops.EXPAND, Ops.MUL, Ops.REDUCE_AXIS, Ops.ADD, Ops.SHRINK, Ops.PAD,
                                Ops.WHERE))


def add(x1: Any, x2: Any, /) -> Array:
    return _binary("add", x1, x2, _add, "numeric")


def subtract(x1: Any, x2: Any, /) -> Array:
    return _binary("subtract", x1, x2, _subtract, "number")


def multiply(x1: Any, x2: Any, /) -> Array:
    return _binary("multiply", x1, x2, _multiply, "numeric")


def divide(x1: Any, x2: Any, /) -> Array:
    return _binary("divide", x1, x2, _divide, "numeric", to_float=True)


def _int_floor_divide(a: UOp, b: UOp) -> UOp:
    q = alu(Ops.IDIV, a, b)
    if a.dtype.is_unsigned:
        return q
    r = alu(Ops.MOD, a, b)
    rounds_down = alu(Ops.AND, alu(Ops.CMPNE, r, 0), alu(Ops.CMPNE, alu(Ops.CMPLT, r, 0), alu(Ops.CMPLT, b, 0)))
    return alu(Ops.SUB, q, cast_uop(rounds_down, q.dtype))


def _float_divmod(a: UOp, b: UOp) -> tuple[UOp, UOp]:
    """NumPy's npy_divmod: the floor quotient and the remainder with the divisor's sign."""
    mod = alu(Ops.FMOD, a, b)
    div = alu(Ops.FDIV, alu(Ops.SUB, a, mod), b)
    adjust = alu(Ops.AND, alu(Ops.CMPNE, mod, 0.0), alu(Ops.CMPNE, alu(Ops.CMPLT, b, 0.0), alu(Ops.CMPLT, mod, 0.0)))
    div = alu(Ops.WHERE, adjust, alu(Ops.SUB, div, 1.0), div)
    zero_with_b_sign = alu(Ops.COPYSIGN, const(0.0, b.dtype, b.shape), b)   # not b*0: inf*0 is nan
    mod = alu(Ops.WHERE, adjust, alu(Ops.ADD, mod, b), alu(Ops.WHERE, alu(Ops.CMPNE, mod, 0.0), mod, zero_with_b_sign))
    floor = alu(Ops.FLOOR, div)
    snapped = alu(Ops.WHERE, alu(Ops.CMPLT, 0.5, alu(Ops.SUB, div, floor)), alu(Ops.ADD, floor, 1.0), floor)
    quotient = alu(Ops.FDIV, a, b)
    floordiv = alu(Ops.WHERE, alu(Ops.CMPNE, div, 0.0), snapped, alu(Ops.COPYSIGN, const(0.0, div.dtype, div.shape), quotient))
    b_is_zero = alu(Ops.CMPEQ, b, 0.0)
    return alu(Ops.WHERE, b_is_zero, quotient, floordiv), alu(Ops.WHERE, b_is_zero, alu(Ops.FMOD, a, b), mod)


def floor_divide(x1: Any, x2: Any, /) -> Array:
    def build(a: UOp, b: UOp) -> UOp:
        if a.dtype.is_bool:
            a, b = cast_uop(a, dtypes.int8), cast_uop(b, dtypes.int8)
        return _float_divmod(a, b)[0] if a.dtype.is_float else _int_floor_divide(a, b)
    return _binary("floor_divide", x1, x2, build)


def remainder(x1: Any, x2: Any, /) -> Array:
    def build(a: UOp, b: UOp) -> UOp:
        if a.dtype.is_bool:
            a, b = cast_uop(a, dtypes.int8), cast_uop(b, dtypes.int8)
        if a.dtype.is_float:
            return _float_divmod(a, b)[1]
        r = alu(Ops.MOD, a, b)
        if a.dtype.is_unsigned:
            return r
        fix = alu(Ops.AND, alu(Ops.CMPNE, r, 0), alu(Ops.CMPNE, alu(Ops.CMPLT, r, 0), alu(Ops.CMPLT, b, 0)))
        return alu(Ops.WHERE, fix, alu(Ops.ADD, r, b), r)
    return _binary("remainder", x1, x2, build)


def fmod(x1: Any, x2: Any, /) -> Array:
    """C's fmod (the remainder with the dividend's sign); integers truncate."""
    return _binary("fmod", x1, x2, lambda a, b: alu(Ops.FMOD if a.dtype.is_float else Ops.MOD, a, b),
                   "real_number")


def pow(x1: Any, x2: Any, /) -> Array:
    """x1 to the power x2. An integer power with a negative exponent raises NumPy's ValueError
    ("Integers to negative integer powers are not allowed.") where the exponent's values are known
    without computing anything: a Python int or NumPy scalar, a constant array (`full`, ...) and a
    realized array, also reshaped, broadcast, permuted or flipped. A computed integer exponent (one
    that is still a lazy graph, or a slice of a realized array) is not checked, since checking it
    would realize it: where it holds a negative value, that element of the result is the integer
    reciprocal power (1 for a base of 1, ±1 for -1, 0 otherwise), as `reciprocal` gives."""
    def build(a: UOp, b: UOp) -> UOp:
        if a.dtype.is_bool:
            a, b = cast_uop(a, dtypes.int8), cast_uop(b, dtypes.int8)
        if a.dtype.kind == "i" and _has_known_negative(b):
            raise ValueError("Integers to negative integer powers are not allowed.")
        return alu(Ops.POW, a, b)
    return _binary("pow", x1, x2, build, "numeric")


# movement ops and casts after which a node holds the same set of values as its source (a pad adds
# zeros, which are not negative); a shrink may drop values, so it is not looked through
_SAME_VALUES = (Ops.RESHAPE, Ops.EXPAND, Ops.PERMUTE, Ops.FLIP, Ops.PAD, Ops.CAST, Ops.DETACH, Ops.CONTIGUOUS)


def _has_known_negative(u: UOp) -> bool:
    """Whether the integer node u holds a negative value, as far as that is known without
    computing: u is a constant or a realized buffer, under movement ops and widening casts."""
    while True:
        view = realized.get(u)
        if view is not None:
            u = view
        if u.op is Ops.CONST:
            return u.arg < 0
        if is_buffer_view(u):
            buf = view_buffer(u)
            if buf.size == 0 or buf.dtype.kind != "i":
                return False
            values = buf.numpy()
            buf.device.synchronize()
            return bool(values.min() < 0)
        if u.op not in _SAME_VALUES or (u.op is Ops.CAST and not (u.src[0].dtype.is_int or u.src[0].dtype.is_bool)):
            return False
        u = u.src[0]


def negative(x: Any, /) -> Array:
    if _record_unary is not None and (out := _record_unary(x, Ops.NEG, "fiu")) is not NotImplemented:
        return out
    return _unary("negative", x, lambda u: alu(Ops.NEG, u), "number")


def positive(x: Any, /) -> Array:
    return _unary("positive", x, lambda u: u, "number")


def abs(x: Any, /) -> Array:
    """|x|; of complex values the modulus (hypot of the parts), of their component type."""
    def build(u: UOp) -> UOp:
        if u.dtype.is_complex:
            return UOp(Ops.ABS, dtypes.component(u.dtype), (u,))
        return u if u.dtype.is_bool or u.dtype.is_unsigned else alu(Ops.ABS, u)
    if _record_unary is not None and (out := _record_unary(x, Ops.ABS, "fi")) is not NotImplemented:
        return out
    return _unary("abs", x, build, "numeric")


def square(x: Any, /) -> Array:
    def build(u: UOp) -> UOp:
        u = cast_uop(u, dtypes.int8) if u.dtype.is_bool else u  # NumPy squares booleans as int8
        return alu(Ops.MUL, u, u)
    return _unary("square", x, build, "numeric")


def reciprocal(x: Any, /) -> Array:
    """1/x; integers give NumPy's integer reciprocal (1 // x truncated, 0 for 0)."""
    def build(u: UOp) -> UOp:
        return alu(Ops.RECIP, u) if u.dtype.is_inexact else alu(Ops.IDIV, const(1, u.dtype, u.shape), u)
    return _unary("reciprocal", x, build, "number")


def _complex_sign(u: UOp) -> UOp:
    """z/|z| (NumPy's): 0 at 0, NaN + NaN j where a part is NaN; with an infinite part, ±1 on that
    axis (NaN + NaN j when both are infinite)."""
    re, im = real_part(u), imag_part(u)
    r = UOp(Ops.ABS, re.dtype, (u,))
    nan = const(math.nan, re.dtype, u.shape)
    unit = lambda v: alu(Ops.WHERE, alu(Ops.CMPLT, 0.0, v), 1.0, alu(Ops.WHERE, alu(Ops.CMPLT, v, 0.0), -1.0, 0.0, dtype=v.dtype))  # noqa: E731
    re_inf, im_inf = (alu(Ops.CMPEQ, alu(Ops.ABS, v), math.inf) for v in (re, im))
    any_nan = alu(Ops.OR, alu(Ops.CMPNE, re, re), alu(Ops.CMPNE, im, im))
    both_inf = alu(Ops.AND, re_inf, im_inf)
    out_re = alu(Ops.WHERE, re_inf, unit(re), alu(Ops.WHERE, im_inf, 0.0, alu(Ops.FDIV, re, r)))
    out_im = alu(Ops.WHERE, im_inf, unit(im), alu(Ops.WHERE, re_inf, 0.0, alu(Ops.FDIV, im, r)))
    zero = alu(Ops.CMPEQ, r, 0.0)
    out_re, out_im = (alu(Ops.WHERE, alu(Ops.OR, any_nan, both_inf), nan, alu(Ops.WHERE, zero, 0.0, v))
                      for v in (out_re, out_im))
    return make_complex(out_re, out_im)


def sign(x: Any, /) -> Array:
    def build(u: UOp) -> UOp:
        if u.dtype.is_complex:
            return _complex_sign(u)
        if u.dtype.is_unsigned:
            return cast_uop(alu(Ops.CMPLT, 0, u), u.dtype)
        if u.dtype.is_int:
            return alu(Ops.SUB, cast_uop(alu(Ops.CMPLT, 0, u), u.dtype), cast_uop(alu(Ops.CMPLT, u, 0), u.dtype))
        zero_or_nan = alu(Ops.WHERE, alu(Ops.CMPEQ, u, u), 0.0, u)   # ±0 → +0, NaN stays
        return alu(Ops.WHERE, alu(Ops.CMPLT, 0.0, u), 1.0, alu(Ops.WHERE, alu(Ops.CMPLT, u, 0.0), -1.0, zero_or_nan))
    return _unary("sign", x, build, "number")


def sqrt(x: Any, /) -> Array: return _float_unary("sqrt", x, Ops.SQRT)
def exp(x: Any, /) -> Array: return _float_unary("exp", x, Ops.EXP)
def exp2(x: Any, /) -> Array: return _float_unary("exp2", x, Ops.EXP2)
def expm1(x: Any, /) -> Array: return _float_unary("expm1", x, Ops.EXPM1)
def log(x: Any, /) -> Array: return _float_unary("log", x, Ops.LOG)
def log2(x: Any, /) -> Array: return _float_unary("log2", x, Ops.LOG2)
def log10(x: Any, /) -> Array: return _float_unary("log10", x, Ops.LOG10)
def log1p(x: Any, /) -> Array: return _float_unary("log1p", x, Ops.LOG1P)
def sin(x: Any, /) -> Array: return _float_unary("sin", x, Ops.SIN)
def cos(x: Any, /) -> Array: return _float_unary("cos", x, Ops.COS)
def tan(x: Any, /) -> Array: return _float_unary("tan", x, Ops.TAN)
def asin(x: Any, /) -> Array: return _float_unary("asin", x, Ops.ASIN)
def acos(x: Any, /) -> Array: return _float_unary("acos", x, Ops.ACOS)
def atan(x: Any, /) -> Array: return _float_unary("atan", x, Ops.ATAN)
def sinh(x: Any, /) -> Array: return _float_unary("sinh", x, Ops.SINH)
def cosh(x: Any, /) -> Array: return _float_unary("cosh", x, Ops.COSH)
def tanh(x: Any, /) -> Array: return _float_unary("tanh", x, Ops.TANH)
def asinh(x: Any, /) -> Array: return _float_unary("asinh", x, Ops.ASINH)
def acosh(x: Any, /) -> Array: return _float_unary("acosh", x, Ops.ACOSH)
def atanh(x: Any, /) -> Array: return _float_unary("atanh", x, Ops.ATANH)


def _rounding(name: str, op: Ops):
    def fn(x: Any, /) -> Array:
        return _unary(name, x, lambda u: u if not u.dtype.is_float else alu(op, u))
    fn.__name__ = name
    fn.__doc__ = f"{name} of each element (integers are returned unchanged)."
    return fn


floor = _rounding("floor", Ops.FLOOR)
ceil = _rounding("ceil", Ops.CEIL)
trunc = _rounding("trunc", Ops.TRUNC)
_round_half_even = _rounding("round", Ops.RINT)


def round(x: Any, /, decimals: int = 0) -> Array:
    """Round half to even, as NumPy does; `decimals` scales by a power of ten first. Complex values
    round their real and imaginary parts."""
    t = as_tensor(x)
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"round: decimals must be an integer, got {type(decimals).__name__}") from None
    if not -2 ** 63 <= decimals < 2 ** 63:
        raise OverflowError(f"round: decimals {decimals} does not fit a C long")
    if t.dtype.is_complex:
        parts = [round(wrap(p(t.uop), t.device), decimals).uop for p in (real_part, imag_part)]
        return wrap(make_complex(*parts), t.device)
    if decimals == 0:
        return _round_half_even(t)
    if t.dtype.is_bool:
        raise TypeError(f"round: a boolean array cannot be rounded to {decimals} decimals (the scaled values are "
                        f"not booleans)")
    if not t.dtype.is_float:
        _check("round", t.dtype, "real")
        if decimals >= 0:
            return t
        if -decimals >= len(str(dtypes.iinfo(t.dtype).max)):   # 10**-decimals is past the dtype's range: all round to 0
            return wrap(const(0, t.dtype, t.shape), t.device)
        return multiply(round(divide(t, 10 ** -decimals)), 10 ** -decimals).astype(t.dtype)
    # NumPy's x * 10**d / 10**d: past float's range the scale is inf (or 0) and every value NaN
    scale = 10.0 ** decimals if decimals <= 308 else math.inf
    return _round_half_even(t * scale) / scale


def atan2(x1: Any, x2: Any, /) -> Array:
    return _binary("atan2", x1, x2, _op(Ops.ATAN2), to_float=True)


def hypot(x1: Any, x2: Any, /) -> Array:
    return _binary("hypot", x1, x2, _op(Ops.HYPOT), to_float=True)


def copysign(x1: Any, x2: Any, /) -> Array:
    return _binary("copysign", x1, x2, _op(Ops.COPYSIGN), to_float=True)


def nextafter(x1: Any, x2: Any, /) -> Array:
    return _binary("nextafter", x1, x2, lambda a, b: _half_nextafter(a, b) if a.dtype is dtypes.float16
                   else alu(Ops.NEXTAFTER, a, b), "real_float")


def _half_nextafter(x: UOp, y: UOp) -> UOp:
    """nextafter of float16 values on their bits (C has no nextafter for them): one step of the
    16-bit pattern away from zero or towards it, the smallest subnormal of y's sign from zero, x
    itself where y == x (NumPy's float16 nextafter keeps the sign of x's zero)."""
    bits = UOp(Ops.BITCAST, dtypes.int16, (x,))
    away = alu(Ops.CMPEQ, alu(Ops.CMPLT, x, y), alu(Ops.CMPLT, 0.0, x))
    stepped = alu(Ops.ADD, bits, alu(Ops.WHERE, away, const(1, dtypes.int16, x.shape), const(-1, dtypes.int16, x.shape)))
    from_zero = alu(Ops.WHERE, alu(Ops.CMPLT, 0.0, y), const(1, dtypes.int16, x.shape), const(-32767, dtypes.int16, x.shape))
    out = UOp(Ops.BITCAST, dtypes.float16, (alu(Ops.WHERE, alu(Ops.CMPEQ, x, 0.0), from_zero, stepped),))
    unordered = alu(Ops.OR, alu(Ops.CMPNE, x, x), alu(Ops.CMPNE, y, y))
    return alu(Ops.WHERE, unordered, alu(Ops.ADD, x, y), alu(Ops.WHERE, alu(Ops.CMPEQ, x, y), x, out))


def logaddexp(x1: Any, x2: Any, /) -> Array:
    """log(exp(x1) + exp(x2)) without overflow: max(a, b) + log1p(exp(-|a - b|)); equal infinities
    give themselves. Differentiable at a == b (each side gets half), as the composition shows."""
    def build(a: UOp, b: UOp) -> UOp:
        m = alu(Ops.MAX, a, b)
        out = alu(Ops.ADD, m, alu(Ops.LOG1P, alu(Ops.EXP, alu(Ops.NEG, alu(Ops.ABS, alu(Ops.SUB, a, b))))))
        same_infinity = alu(Ops.AND, alu(Ops.CMPEQ, a, b), alu(Ops.CMPEQ, alu(Ops.ABS, a), math.inf))
        return alu(Ops.WHERE, same_infinity, a, out)
    return _binary("logaddexp", x1, x2, build, to_float=True)


# (fast_operator's operands recorded in C, the rest by _binary)
_maximum = fast_recorded(Ops.MAX, lambda x1, x2: _binary("maximum", x1, x2, _op(Ops.MAX)))
_minimum = fast_recorded(Ops.MIN, lambda x1, x2: _binary("minimum", x1, x2, _op(Ops.MIN)))


def maximum(x1: Any, x2: Any, /) -> Array:
    return _maximum(x1, x2)


def minimum(x1: Any, x2: Any, /) -> Array:
    return _minimum(x1, x2)


def clip(x: Any, /, min: Any = None, max: Any = None) -> Array:
    """x limited to [min, max], in x's dtype (bounds are converted to it; a fractional bound of an
    integer array rounds inwards). NaN in x stays NaN. Selected, not a maximum and a minimum, so
    that an element equal to a bound takes the whole gradient (PyTorch's clamp), not half."""
    t = as_tensor(x)
    _check("clip", t.dtype, "real")
    out = t.uop
    for bound, op, to_int in ((min, Ops.MAX, math.ceil), (max, Ops.MIN, math.floor)):
        if bound is None:
            continue
        if isinstance(bound, (int, float)) and not isinstance(bound, Array):
            if t.dtype.is_int:
                if isinstance(bound, float) and not math.isfinite(bound):
                    continue
                info = dtypes.iinfo(t.dtype)
                bound = _builtins.max(info.min, _builtins.min(info.max, to_int(bound)))
            b = const(bound, t.dtype, out.shape)
        else:
            b = as_tensor(bound, t.device)
            if b.device is not t.device:
                raise ValueError(f"clip: x is on {t.device.name} and a bound on {b.device.name}")
            shape = broadcast_shapes(out.shape, b.shape)
            out, b = expand_uop(out, shape), expand_uop(cast_uop(b.uop, t.dtype), shape)
        beyond = alu(Ops.CMPLT, out, b) if op is Ops.MAX else alu(Ops.CMPLT, b, out)   # (false for NaN)
        out = alu(Ops.WHERE, beyond, b, out)
    return wrap(out, t.device)


# ---- comparisons -----------------------------------------------------------------------------

def equal(x1: Any, x2: Any, /) -> Array: return _binary("equal", x1, x2, _op(Ops.CMPEQ), "any")
def not_equal(x1: Any, x2: Any, /) -> Array: return _binary("not_equal", x1, x2, _op(Ops.CMPNE), "any")
def less(x1: Any, x2: Any, /) -> Array: return _binary("less", x1, x2, _op(Ops.CMPLT))
def less_equal(x1: Any, x2: Any, /) -> Array: return _binary("less_equal", x1, x2, _op(Ops.CMPLE))
def greater(x1: Any, x2: Any, /) -> Array: return _binary("greater", x1, x2, lambda a, b: alu(Ops.CMPLT, b, a))
def greater_equal(x1: Any, x2: Any, /) -> Array:
    return _binary("greater_equal", x1, x2, lambda a, b: alu(Ops.CMPLE, b, a))


def _by_parts(u: UOp, test, combine: Ops) -> UOp:
    """test of a complex value's two parts, combined (a complex value is NaN if a part is...)."""
    return alu(combine, test(real_part(u)), test(imag_part(u)))


def _isnan(u: UOp) -> UOp:
    if u.dtype.is_complex:
        return _by_parts(u, _isnan, Ops.OR)
    return alu(Ops.CMPNE, u, u) if u.dtype.is_float else _false(u)


def _isinf(u: UOp) -> UOp:
    if u.dtype.is_complex:
        return _by_parts(u, _isinf, Ops.OR)
    return alu(Ops.CMPEQ, alu(Ops.ABS, u), math.inf) if u.dtype.is_float else _false(u)


def _isfinite(u: UOp) -> UOp:
    if u.dtype.is_complex:
        return _by_parts(u, _isfinite, Ops.AND)
    return alu(Ops.CMPLT, alu(Ops.ABS, u), math.inf) if u.dtype.is_float else alu(Ops.CMPEQ, _false(u), False)


def isnan(x: Any, /) -> Array:
    return _unary("isnan", x, _isnan, "numeric")


def isinf(x: Any, /) -> Array:
    return _unary("isinf", x, _isinf, "numeric")


def isfinite(x: Any, /) -> Array:
    return _unary("isfinite", x, _isfinite, "numeric")


def _false(u: UOp) -> UOp:
    return const(False, dtypes.bool_, u.shape)


def signbit(x: Any, /) -> Array:
    def build(u: UOp) -> UOp:
        if u.dtype.is_float:
            as_int = {2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}[u.dtype.itemsize]
            return alu(Ops.CMPLT, UOp(Ops.BITCAST, as_int, (u,)), 0)
        return alu(Ops.CMPLT, u, 0) if u.dtype.kind == "i" else _false(u)
    return _unary("signbit", x, build)


# ---- logical and bitwise ---------------------------------------------------------------------

def _as_bool(u: UOp) -> UOp:
    return u if u.dtype.is_bool else cast_uop(u, dtypes.bool_)


def logical_and(x1: Any, x2: Any, /) -> Array:
    return _binary("logical_and", x1, x2, lambda a, b: alu(Ops.AND, _as_bool(a), _as_bool(b)), "any")


def logical_or(x1: Any, x2: Any, /) -> Array:
    return _binary("logical_or", x1, x2, lambda a, b: alu(Ops.OR, _as_bool(a), _as_bool(b)), "any")


def logical_xor(x1: Any, x2: Any, /) -> Array:
    return _binary("logical_xor", x1, x2, lambda a, b: alu(Ops.XOR, _as_bool(a), _as_bool(b)), "any")


def logical_not(x: Any, /) -> Array:
    return _unary("logical_not", x, lambda u: alu(Ops.NOT, _as_bool(u)), "any")


def bitwise_and(x1: Any, x2: Any, /) -> Array:
    return _binary("bitwise_and", x1, x2, _op(Ops.AND), "integer_or_bool")


def bitwise_or(x1: Any, x2: Any, /) -> Array:
    return _binary("bitwise_or", x1, x2, _op(Ops.OR), "integer_or_bool")


def bitwise_xor(x1: Any, x2: Any, /) -> Array:
    return _binary("bitwise_xor", x1, x2, _op(Ops.XOR), "integer_or_bool")


def bitwise_invert(x: Any, /) -> Array:
    return _unary("bitwise_invert", x, lambda u: alu(Ops.NOT, u), "integer_or_bool")


def bitwise_left_shift(x1: Any, x2: Any, /) -> Array:
    return _binary("bitwise_left_shift", x1, x2, _op(Ops.SHL), "integer")


def bitwise_right_shift(x1: Any, x2: Any, /) -> Array:
    return _binary("bitwise_right_shift", x1, x2, _op(Ops.SHR), "integer")


def where(condition: Any, x1: Any, x2: Any, /) -> Array:
    """x1 where condition is true, x2 elsewhere; all three broadcast together, x1 and x2 promoted
    (Python scalars weakly)."""
    c = as_tensor(condition)
    if not any(isinstance(x, Array) for x in (x1, x2)):
        kinds = [dtypes.scalar_kind(x) for x in (x1, x2)]
        if None in kinds:
            x1, x2 = as_tensor(x1, c.device), as_tensor(x2, c.device)
        else:
            x1 = as_tensor(x1, c.device).astype(dtypes.promote_types(*map(dtypes.default_for_kind, kinds)))
    (ua, ub), dtype, device = operands(x1, x2)
    if c.device is not device:
        raise ValueError(f"where: condition is on {c.device.name} and the values on {device.name}")
    shape = broadcast_shapes(c.shape, ua.shape)
    return wrap(UOp(Ops.WHERE, dtype, (expand_uop(_as_bool(c.uop), shape), expand_uop(ua, shape),
                                       expand_uop(ub, shape))), device)


# ---- complex parts ----------------------------------------------------------------------------

def real(x: Any, /) -> Array:
    """The real part (of a real array, the array); of a complex array a view, as NumPy's."""
    out = _unary("real", x, lambda u: real_part(u) if u.dtype.is_complex else u, "numeric")
    return make_view(out, x) if isinstance(x, Array) and x.dtype.is_complex else out


def imag(x: Any, /) -> Array:
    """The imaginary part (of a real array, zeros of its dtype); of a complex array a view."""
    out = _unary("imag", x, lambda u: imag_part(u) if u.dtype.is_complex else const(0, u.dtype, u.shape), "numeric")
    return make_view(out, x) if isinstance(x, Array) and x.dtype.is_complex else out


def conj(x: Any, /) -> Array:
    """The complex conjugate (of a real array, the array)."""
    return _unary("conj", x, lambda u: make_complex(real_part(u), alu(Ops.NEG, imag_part(u))) if u.dtype.is_complex
                  else u, "numeric")


def angle(z: Any, /, deg: bool = False) -> Array:
    """NumPy's angle: the argument atan2(imag, real) of each element, in radians (degrees)."""
    t = as_tensor(z)
    _check("angle", t.dtype, "numeric")
    u = t.uop
    if u.dtype.is_complex:
        out = alu(Ops.ATAN2, imag_part(u), real_part(u))
    else:
        f = _float_of(u.dtype)
        out = alu(Ops.ATAN2, const(0.0, f, u.shape), cast_uop(u, f))
    return wrap(alu(Ops.MUL, out, 180.0 / math.pi) if deg else out, t.device)


# NumPy's names
absolute, power, true_divide, mod = abs, pow, divide, remainder
arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2
arcsinh, arccosh, arctanh = asinh, acosh, atanh
invert, left_shift, right_shift, bitwise_not = bitwise_invert, bitwise_left_shift, bitwise_right_shift, bitwise_invert
conjugate = conj

__all__ = [
    # the standard's element-wise functions
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert",
    "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil", "clip", "conj", "copysign",
    "cos", "cosh", "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "hypot",
    "imag", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp",
    "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round", "sign", "signbit",
    "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc",
    # searching (where) and NumPy's extra names
    "where", "exp2", "fmod", "angle", "absolute", "power", "true_divide", "mod", "arcsin", "arccos", "arctan", "arctan2",
    "arcsinh", "arccosh", "arctanh", "invert", "left_shift", "right_shift", "bitwise_not", "conjugate",
]
