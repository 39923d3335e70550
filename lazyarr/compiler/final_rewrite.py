"""Stage 19, final rewrite: the last graph changes before linearization.

An END that closes several ranges is split into nested ENDs that close one range each, the
innermost (last listed) first: END(x, a, b) → END(END(x, b), a). After this every loop has
exactly one END, which is what control flow and the renderer expect.
"""
from __future__ import annotations

from lazyarr import dtypes
from lazyarr.compiler.patterns import PatternMatcher, UPat, graph_rewrite
from lazyarr.compiler.uop import Ops, UOp


def split_end(end: UOp) -> UOp | None:
    if len(end.src) <= 2:
        return None
    out = end.src[0]
    for r in reversed(end.src[1:]):
        out = UOp(Ops.END, dtypes.void, (out, r))
    return out


pm_final_rewrite = PatternMatcher([(UPat(Ops.END, name="end"), split_end)])


def final_rewrite(sink: UOp) -> UOp:
    return graph_rewrite(sink, pm_final_rewrite)
