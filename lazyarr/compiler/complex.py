"""Complex values lowered to real ones: the pass that lets every renderer compute with complex64
and complex128 without knowing complex types.

At the tensor level complex tensors have complex dtypes and their own shapes, and operations on
them are the ordinary ops with complex dtypes (ADD, MUL, EXP, ... of complex64; REDUCE_AXIS; the
movement ops; CAST to and from complex; CMPEQ/CMPNE and ABS of complex sources), plus two that only
the complex functions build: GEP(z, (i,)) is part i of z (0 the real part, 1 the imaginary part),
and VECTORIZE(re, im) the complex number with those parts. `prepare` applies `lower_complex` first;
afterwards no node is complex:
- a complex value of shape S is held as its two parts, real nodes of shape S of the component type
  (float32 for complex64), or as one real node of shape S+(2,) whose last axis is (real, imaginary):
  the pair form, NumPy's memory layout. Each form is made from the other when needed: the parts of
  a pair are two shrinks of it; the pair of two parts is a WHERE along a new last axis of length 2;
- a complex buffer (BUFFER of complex64, n elements) is read through its real view (the Buffer of
  2n float32 over the same storage, `Buffer.real_view`): the pair form, a reshape of that BUFFER;
- movement ops apply to the parts (or to the pair, the last axis kept in place); casts, WHERE, sums
  and gathers part by part; the arithmetic and the functions by the formulas of
  `lazyarr.compiler.complex_math`; products over axes (prod) by a tree of complex products;
- what becomes a buffer is given the pair form: the roots (the scheduler allocates a complex buffer
  for a complex root and has its kernel store the pairs through the real view), CONTIGUOUS and COPY.
The arithmetic (+, -, *, /, sums, products) is computed in the component type, as NumPy does; the
transcendental functions of complex64 in float64 when `wide` (every device of the graph has it),
then rounded to float32.

A call (custom kernel, precompiled routine, IR kernel) with complex operands or results takes and
gives them as pairs of reals in NumPy's layout (a precompiled routine is still handed NumPy's
complex arrays over that memory).

Raises TypeError for what complex values do not have here: max/min reductions, ordering, integer
ops.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable

from lazyarr import dtypes
from lazyarr.compiler import complex_math as cm
from lazyarr.compiler.complex_math import R
from lazyarr.compiler.uop import CallSpec, GroupOp, Ops, UOp
from lazyarr.dtypes import DType
from lazyarr.graph import alu, call_result, cast_uop, const, expand_uop, permute_uop, reshape_uop, shrink_uop

PROD_CHUNK = 16   # a product over an axis multiplies chunks of this many in one kernel, then the chunks'


def _iota(n: int) -> UOp:
    return UOp(Ops.IOTA, dtypes.index, (), n)


class CValue:
    """A complex value of `shape` in the lowering: its parts (real nodes of `shape`), its pair form
    (a real node of shape + (2,)), or both, of the component type `f`."""
    __slots__ = ("shape", "f", "_re", "_im", "_pair")

    def __init__(self, shape: tuple[int, ...], f: DType, re: UOp | None = None, im: UOp | None = None,
                 pair: UOp | None = None):
        self.shape, self.f, self._re, self._im, self._pair = shape, f, re, im, pair

    def parts(self) -> tuple[UOp, UOp]:
        if self._re is None:
            p, s = self._pair, self.shape
            def take(k: int) -> UOp:
                return reshape_uop(shrink_uop(p, [(0, n) for n in s] + [(k, k + 1)]), s)
            self._re, self._im = take(0), take(1)
        return self._re, self._im

    def pair(self) -> UOp:
        if self._pair is None:
            s, wide = self.shape, self.shape + (2,)
            lane = expand_uop(reshape_uop(alu(Ops.CMPEQ, _iota(2), 0), (1,) * len(s) + (2,)), wide)
            re, im = (expand_uop(reshape_uop(p, s + (1,)), wide) for p in (self._re, self._im))
            self._pair = UOp(Ops.WHERE, self.f, (lane, re, im))
        return self._pair

    def r(self) -> tuple[R, R]:
        re, im = self.parts()
        return R(re), R(im)


def _parts(shape: tuple[int, ...], f: DType, re: UOp | R, im: UOp | R) -> CValue:
    re, im = (p.u if isinstance(p, R) else p for p in (re, im))
    return CValue(shape, f, cast_uop(re, f), cast_uop(im, f))


def has_complex(nodes: list[UOp]) -> bool:
    return any(u.dtype.kind == "c" for u in nodes)


def lower_complex(roots: list[UOp], wide: bool | Callable[[list[UOp]], bool] = True) -> list[UOp]:
    """The roots with every complex value lowered to real ones (see the module's docs); a complex
    root becomes its pair form (shape + (2,), the component type). `wide`: whether complex64's
    functions may compute in float64 (or a function of the roots that says so, asked only when
    there are complex values)."""
    order = UOp(Ops.SINK, dtypes.void, tuple(roots)).toposort()[:-1]
    if not has_complex(order):
        return roots
    lw = _Lowering(wide(roots) if callable(wide) else wide)
    for u in order:
        lw.visit(u)
    return [lw.cx[r].pair() if r.dtype.is_complex else lw.done[r] for r in roots]


_MOVEMENT_PAIR_ARG: dict[Ops, Callable] = {
    Ops.RESHAPE: lambda arg, nd: tuple(arg) + (2,),
    Ops.EXPAND: lambda arg, nd: tuple(arg) + (2,),
    Ops.PERMUTE: lambda arg, nd: tuple(arg) + (nd,),
    Ops.PAD: lambda arg, nd: tuple(arg) + ((0, 0),),
    Ops.SHRINK: lambda arg, nd: tuple(arg) + ((0, 2),),
    Ops.FLIP: lambda arg, nd: arg,
}


class _Lowering:
    def __init__(self, wide: bool):
        self.wide = wide
        self.cx: dict[UOp, CValue] = {}     # complex node → its lowered value
        self.done: dict[UOp, UOp] = {}      # real node → its lowered node

    def visit(self, u: UOp) -> None:
        if u.op is Ops.CALL:
            srcs = tuple(self.cx[s].pair() if s.dtype.is_complex else self.done[s] for s in u.src)
            self.done[u] = UOp(Ops.CALL, u.dtype, srcs, _real_spec(u.arg))
        elif u.op is Ops.CALL_RESULT:   # a complex result is its pair form, as the call writes it
            r = call_result(self.done[u.src[0]], u.arg)
            if u.dtype.is_complex:
                self.cx[u] = CValue(u.shape, dtypes.component(u.dtype), pair=r)
            else:
                self.done[u] = r
        elif u.dtype.kind == "c":
            self.cx[u] = self.complex_node(u)
        elif any(s.dtype.kind == "c" for s in u.src):
            self.done[u] = self.real_of_complex(u)
        else:
            src = tuple(self.done[s] for s in u.src)
            self.done[u] = u if src == u.src else u.replace(src=src)

    # ---- complex-valued nodes --------------------------------------------------------------------
    def complex_node(self, u: UOp) -> CValue:
        f, shape, op = dtypes.component(u.dtype), u.shape, u.op
        if op is Ops.BUFFER:
            view = u.arg.real_view()
            return CValue(shape, f, pair=reshape_uop(UOp(Ops.BUFFER, f, (), view), shape + (2,)))
        if op is Ops.CONST:
            c = complex(u.arg)
            return CValue((), f, UOp.const(f, c.real), UOp.const(f, c.imag))
        if op in GroupOp.Movement:
            return self.movement(u, f)
        if op in (Ops.DETACH, Ops.NOOP):
            return self.cx[u.src[0]]
        if op is Ops.CONTIGUOUS:
            return CValue(shape, f, pair=UOp(Ops.CONTIGUOUS, f, (self.cx[u.src[0]].pair(),)))
        if op is Ops.COPY:
            return CValue(shape, f, pair=UOp(Ops.COPY, f, (self.cx[u.src[0]].pair(),), u.arg))
        if op is Ops.CAST:
            return self.cast_to_complex(u, f)
        if op is Ops.VECTORIZE:
            return _parts(shape, f, self.done[u.src[0]], self.done[u.src[1]])
        if op is Ops.BITCAST:
            return self.bitcast_to_complex(u, f)
        if op is Ops.WHERE:
            c = self.done[u.src[0]]
            (a_re, a_im), (b_re, b_im) = self.cx[u.src[1]].parts(), self.cx[u.src[2]].parts()
            return CValue(shape, f, UOp(Ops.WHERE, f, (c, a_re, b_re)), UOp(Ops.WHERE, f, (c, a_im, b_im)))
        if op is Ops.GATHER:
            idx = tuple(self.done[s] for s in u.src[1:])
            re, im = self.cx[u.src[0]].parts()
            return CValue(shape, f, UOp(Ops.GATHER, f, (re, *idx)), UOp(Ops.GATHER, f, (im, *idx)))
        if op is Ops.REDUCE_AXIS:
            return self.reduce(u, f)
        if op in GroupOp.ALU:
            return self.arithmetic(u, f)
        raise TypeError(f"{op.name} of complex values is not supported")

    def movement(self, u: UOp, f: DType) -> CValue:
        v = self.cx[u.src[0]]
        if v._pair is not None:   # keep the pair form: a view of a complex buffer stays a view of its real view
            arg = _MOVEMENT_PAIR_ARG[u.op](u.arg, len(v.shape))
            return CValue(u.shape, f, pair=UOp(u.op, f, (v._pair,), arg))
        re, im = v.parts()
        return CValue(u.shape, f, UOp(u.op, f, (re,), u.arg), UOp(u.op, f, (im,), u.arg))

    def cast_to_complex(self, u: UOp, f: DType) -> CValue:
        src = u.src[0]
        if src.dtype.is_complex:
            v = self.cx[src]
            if v.f is f:
                return v
            re, im = v.parts()
            return CValue(u.shape, f, cast_uop(re, f), cast_uop(im, f))
        x = self.done[src]
        return CValue(u.shape, f, cast_uop(x, f), const(0.0, f, u.shape))

    def bitcast_to_complex(self, u: UOp, f: DType) -> CValue:
        """NumPy's view of real data as complex: the bytes of the last axis read as (re, im) pairs."""
        x = self.done[u.src[0]]
        if x.dtype is not f:
            if not x.shape:
                x = reshape_uop(x, (1,))
            x = UOp(Ops.BITCAST, f, (x,))
        return CValue(u.shape, f, pair=reshape_uop(x, u.shape + (2,)))

    def reduce(self, u: UOp, f: DType) -> CValue:
        op, axes = u.arg
        v = self.cx[u.src[0]]
        if op is Ops.ADD:
            re, im = v.parts()
            return CValue(u.shape, f, *(UOp(Ops.REDUCE_AXIS, f, (p,), u.arg) for p in (re, im)))
        if op is Ops.MUL:
            return self.product(v, axes, u.shape, f)
        raise TypeError(f"{'max' if op is Ops.MAX else 'min'} of complex values is not defined (complex numbers "
                        f"have no order)")

    def product(self, v: CValue, axes: tuple[int, ...], out_shape: tuple[int, ...], f: DType) -> CValue:
        """The complex product over `axes`: the reduced axes moved last and flattened, then multiplied
        in chunks of PROD_CHUNK by a balanced tree of complex products, each level's chunk products
        a buffer of its own (CONTIGUOUS) until one is left."""
        shape = v.shape
        keep = [a for a in range(len(shape)) if a not in axes]
        kept = tuple(shape[a] for a in keep)
        n = math.prod(shape[a] for a in axes)
        re, im = (reshape_uop(permute_uop(p, keep + list(axes)), kept + (n,)) for p in v.parts())
        while n > 1:
            chunk = min(n, PROD_CHUNK)
            groups = -(-n // chunk)
            if groups * chunk != n:   # pad with ones (1 + 0i) up to whole chunks
                inside = expand_uop(reshape_uop(alu(Ops.CMPLT, _iota(groups * chunk), n), (1,) * len(kept) + (groups * chunk,)),
                                    kept + (groups * chunk,))
                pad = [(0, 0)] * len(kept) + [(0, groups * chunk - n)]
                re = alu(Ops.WHERE, inside, UOp(Ops.PAD, f, (re,), tuple(pad)), 1.0)
                im = UOp(Ops.PAD, f, (im,), tuple(pad))
            re, im = (reshape_uop(p, kept + (groups, chunk)) for p in (re, im))
            leaves = [tuple(R(reshape_uop(shrink_uop(p, [(0, s) for s in kept] + [(0, groups), (j, j + 1)]), kept + (groups,)))
                            for p in (re, im)) for j in range(chunk)]
            while len(leaves) > 1:
                leaves = [cm.mul(*leaves[i], *leaves[i + 1]) if i + 1 < len(leaves) else leaves[i]
                          for i in range(0, len(leaves), 2)]
            re, im = leaves[0][0].u, leaves[0][1].u
            n = groups
            if n > 1:
                level = CValue(kept + (n,), f, re, im)
                level = CValue(kept + (n,), f, pair=UOp(Ops.CONTIGUOUS, f, (level.pair(),)))
                re, im = level.parts()
        return CValue(out_shape, f, reshape_uop(re, out_shape), reshape_uop(im, out_shape))

    def arithmetic(self, u: UOp, f: DType) -> CValue:
        op = u.op
        args = [self.cx[s].r() for s in u.src]
        if op is Ops.NEG:
            (x, y), = args
            return _parts(u.shape, f, -x, -y)
        if op in (Ops.ADD, Ops.SUB):
            (a, b), (c, d) = args
            return _parts(u.shape, f, a + c, b + d) if op is Ops.ADD else _parts(u.shape, f, a - c, b - d)
        if op is Ops.MUL:
            return _parts(u.shape, f, *cm.mul(*args[0], *args[1]))
        if op is Ops.FDIV:
            return _parts(u.shape, f, *cm.div(*args[0], *args[1]))
        if op is Ops.RECIP:
            return _parts(u.shape, f, *cm.reciprocal(*args[0]))
        if op in (Ops.RINT, Ops.FLOOR, Ops.CEIL, Ops.TRUNC):
            (x, y), = args
            return _parts(u.shape, f, x._fn(op), y._fn(op))
        if op is Ops.POW:
            return self.power(u, f, args)
        fn = _FUNCTIONS.get(op)
        if fn is None:
            raise TypeError(f"{op.name} is not defined for complex values")
        w = dtypes.float64 if self.wide else f
        (x, y), = args
        re, im = fn(x.cast(w), y.cast(w))
        return _parts(u.shape, f, re, im)

    def power(self, u: UOp, f: DType, args: list[tuple[R, R]]) -> CValue:
        (a, b), (c, d) = args
        e = _const_value(u.src[1])
        if e is not None and e == 0:
            return _parts(u.shape, f, a.full(1.0), a.full(0.0))
        if e is not None and e.imag == 0 and math.isfinite(e.real) and e.real == int(e.real) and abs(e.real) < 100:
            return _parts(u.shape, f, *cm.pow_int(a, b, int(e.real)))
        w = dtypes.float64 if self.wide else f
        re, im = cm.pow_general(a.cast(w), b.cast(w), c.cast(w), d.cast(w))
        # NumPy's cpow takes a real integer exponent of small size by products at run time too
        # (an exponent of 1 - 0j gives the base itself, signs of zeros included)
        for n in (-3, -2, -1, 1, 2, 3):
            pr, pi = cm.pow_int(a, b, n)
            hit = d.eq(0.0) & c.eq(float(n))
            re, im = cm.where(hit, pr.cast(w), re), cm.where(hit, pi.cast(w), im)
        return _parts(u.shape, f, re, im)

    # ---- real-valued nodes of complex sources ----------------------------------------------------
    def real_of_complex(self, u: UOp) -> UOp:
        op = u.op
        if op is Ops.GEP:
            return cast_uop(self.cx[u.src[0]].parts()[u.arg[0]], u.dtype)
        if op is Ops.ABS:
            x, y = self.cx[u.src[0]].parts()
            return cast_uop(alu(Ops.HYPOT, x, y), u.dtype)
        if op in (Ops.CMPEQ, Ops.CMPNE):
            (a, b), (c, d) = (self.cx[s].parts() for s in u.src)
            if op is Ops.CMPEQ:
                return alu(Ops.AND, alu(Ops.CMPEQ, a, c), alu(Ops.CMPEQ, b, d))
            return alu(Ops.OR, alu(Ops.CMPNE, a, c), alu(Ops.CMPNE, b, d))
        if op is Ops.CAST:
            x, y = self.cx[u.src[0]].parts()
            if u.dtype.is_bool:
                return alu(Ops.OR, alu(Ops.CMPNE, x, 0.0), alu(Ops.CMPNE, y, 0.0))
            return cast_uop(x, u.dtype)   # the real part (NumPy's cast; astype refuses it)
        if op is Ops.BITCAST:
            return self.bitcast_from_complex(u)
        raise TypeError(f"{op.name} of complex values is not supported")

    def bitcast_from_complex(self, u: UOp) -> UOp:
        v = self.cx[u.src[0]]
        p, s = v.pair(), v.shape
        flat = reshape_uop(p, s[:-1] + (2 * s[-1],) if s else (2,))
        if u.dtype is not v.f:
            flat = UOp(Ops.BITCAST, u.dtype, (flat,))
        return reshape_uop(flat, u.shape)


@dataclass(frozen=True)
class _ComplexViews:
    """A precompiled routine given its complex arguments as NumPy's complex arrays, where the call
    passes them as pairs of reals (the lowered call's arrays of shape + (2,))."""
    routine: Callable[..., Any]
    complex_args: tuple[tuple[int, DType], ...]   # (argument number, complex dtype)

    def __call__(self, *args: Any) -> Any:
        args = list(args)
        for i, d in self.complex_args:
            args[i] = args[i].view(d.np).reshape(args[i].shape[:-1])
        return self.routine(*args)


def _real_spec(spec: CallSpec) -> CallSpec:
    """The spec of a call whose complex arguments and results travel as pairs of reals (NumPy's
    layout: shape + (2,) of the component type); a precompiled routine still sees complex arrays."""
    def real(s: tuple[tuple[int, ...], DType]) -> tuple[tuple[int, ...], DType]:
        return (s[0] + (2,), dtypes.component(s[1])) if s[1].is_complex else s
    ordered = list(spec.outputs) + list(spec.input_specs)
    if not any(d.is_complex for _, d in ordered):
        return spec
    routine = spec.routine and _ComplexViews(spec.routine, tuple((i, d) for i, (_, d) in enumerate(ordered)
                                                                 if d.is_complex))
    return replace(spec, routine=routine, outputs=tuple(map(real, spec.outputs)),
                   input_specs=tuple(map(real, spec.input_specs)))


def _const_value(u: UOp) -> complex | None:
    """The value of a constant complex node (a CONST under movement ops and casts), else None."""
    while u.op in GroupOp.Movement or u.op is Ops.CAST:
        u = u.src[0]
    return complex(u.arg) if u.op is Ops.CONST else None


_FUNCTIONS: dict[Ops, Callable] = {
    Ops.EXP: cm.exp, Ops.EXPM1: cm.expm1, Ops.LOG: cm.log, Ops.LOG1P: cm.log1p, Ops.SQRT: cm.sqrt,
    Ops.SIN: cm.sin, Ops.COS: cm.cos, Ops.TAN: cm.tan, Ops.SINH: cm.sinh, Ops.COSH: cm.cosh, Ops.TANH: cm.tanh,
    Ops.ASIN: cm.asin, Ops.ACOS: cm.acos, Ops.ATAN: cm.atan, Ops.ASINH: cm.asinh, Ops.ACOSH: cm.acosh,
    Ops.ATANH: cm.atanh,
    Ops.EXP2: lambda x, y: cm.exp(x * cm.LN2, y * cm.LN2),
    Ops.LOG2: lambda x, y: tuple(p * (1 / cm.LN2) for p in cm.log(x, y)),
    Ops.LOG10: lambda x, y: tuple(p * (1 / math.log(10.0)) for p in cm.log(x, y)),
}
