"""Stage 19, final rewrite: the last graph changes before linearization, so that every node is
something a renderer writes directly.

In order:
1. a constant used as a vector (a CONST of a vector dtype) becomes VECTORIZE of the scalar
   constant, one source per lane: CONST(1.0) as float32x4 → VECTORIZE(1.0, 1.0, 1.0, 1.0);
2. CAT of vectors and scalars becomes VECTORIZE of their lanes (a scalar is its own lane, a
   vector's lane i is GEP(v, i)): renderers build vectors from lanes, they do not concatenate;
3. remaining GEPs are resolved: GEP of a VECTORIZE is the chosen source lane (or a VECTORIZE of
   the chosen lanes), GEP of a GEP takes the composed lanes, a GEP taking every lane in order is
   its source, and a GEP taking several lanes becomes VECTORIZE of single-lane GEPs, which is
   the only GEP a renderer sees (`x[i]`);
4. an END that closes several ranges is split into nested ENDs that close one range each, the
   innermost (last listed) first: END(x, a, b) → END(END(x, b), a). After this every loop has
   exactly one END, which is what control flow (stage 20) and the renderer expect.
Pointer-typed GEPs (addresses) are left alone. Scalar kernels, which have no vector dtypes, are
only touched by 4.
"""
from __future__ import annotations

from lazyarr import dtypes
from lazyarr.compiler.patterns import PatternMatcher, UPat, graph_rewrite
from lazyarr.compiler.symbolic import cat_lanes, gep_cat, gep_vectorize
from lazyarr.compiler.uop import Ops, UOp

P = UPat


def const_to_vectorize(c: UOp) -> UOp | None:
    if c.dtype.count == 1 or isinstance(c.dtype, dtypes.PtrDType):
        return None
    lane = UOp(Ops.CONST, c.dtype.scalar, (), c.arg)
    return UOp(Ops.VECTORIZE, c.dtype, (lane,) * c.dtype.count)


def cat_to_vectorize(cat: UOp) -> UOp:
    return UOp(Ops.VECTORIZE, cat.dtype, tuple(cat_lanes(cat)))


def resolve_gep(g: UOp) -> UOp | None:
    if isinstance(g.dtype, dtypes.PtrDType):
        return None
    x = g.src[0]
    if x.op is Ops.VECTORIZE:
        return gep_vectorize(g, x)
    if x.op is Ops.CAT:
        return gep_cat(g, x)
    if x.op is Ops.GEP:
        return UOp(Ops.GEP, g.dtype, (x.src[0],), tuple(x.arg[i] for i in g.arg))
    if g.arg == tuple(range(x.dtype.count)) and g.dtype is x.dtype:
        return x
    if len(g.arg) > 1:
        return UOp(Ops.VECTORIZE, g.dtype, tuple(UOp(Ops.GEP, g.dtype.scalar, (x,), (i,)) for i in g.arg))
    return None


def split_end(end: UOp) -> UOp | None:
    if len(end.src) <= 2:
        return None
    out = end.src[0]
    for r in reversed(end.src[1:]):
        out = UOp(Ops.END, dtypes.void, (out, r))
    return out


pm_final_rewrite = PatternMatcher([
    (P(Ops.CONST, name="c"), const_to_vectorize),            # CONST as vector → VECTORIZE(c, c, ...)
    (P(Ops.CAT, name="cat"), cat_to_vectorize),              # CAT(a, b) → VECTORIZE(lanes of a, b)
    (P(Ops.GEP, name="g"), resolve_gep),                     # GEPs resolved to lanes
    (P(Ops.END, name="end"), split_end),                     # END(x, a, b) → END(END(x, b), a)
])


def final_rewrite(sink: UOp) -> UOp:
    return graph_rewrite(sink, pm_final_rewrite)
