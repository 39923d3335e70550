"""Stage 20, control flow: make the order of loops explicit as edges of the graph.

After stage 19 each RANGE is closed by exactly one END. The ranges an END still runs inside of
(`END.ranges`) are the loops that enclose this one. Two loops stand in one of three
relationships (`relationship(a, b, sink)` names it):
- nested: one runs inside the other. The inner RANGE takes every enclosing RANGE as a source, so
  an inner loop opens inside its outer loops (and closes before them);
- dependent siblings: both have the same enclosing loops and one's body reads what the other
  computes (its END is an ancestor of the other loop's END). The later loop's RANGE takes the
  earlier loop's END as a source: it opens only after that loop has closed;
- independent: neither nests in the other and neither reads the other. In different enclosing
  loops they need no edge. Under the same enclosing loops they could run in any order (or in
  parallel), but a sequential renderer cannot interleave two loop bodies, so they are chained
  too, by range number, which keeps the kernel deterministic; any such order is valid.
Siblings are ordered so that every dependency is respected (the first by number among those
that depend on no loop still left), and each RANGE gets an edge to the END of the sibling just
before it. Nothing else in the graph changes.
"""
from __future__ import annotations

from collections import defaultdict

from lazyarr.compiler.patterns import PatternMatcher, UPat, graph_rewrite
from lazyarr.compiler.uop import Ops, UOp


def _order_siblings(ranges: list[UOp], end_of: dict[UOp, UOp]) -> list[UOp]:
    ancestors = {r: {id(x) for x in end_of[r].toposort()} for r in ranges}
    order, left = [], sorted(ranges, key=lambda r: r.arg)
    while left:
        # the first (by number) loop that depends on no loop still left
        for r in left:
            if not any(id(end_of[o]) in ancestors[r] for o in left if o is not r):
                break
        order.append(r)
        left.remove(r)
    return order


def _add_edges(ctx: dict[int, tuple[UOp, ...]], r: UOp) -> UOp | None:
    extra = ctx.pop(r.arg, None)
    return None if not extra else r.replace(src=r.src + extra)


_pm_edges = PatternMatcher([(UPat(Ops.RANGE, name="r"), _add_edges)])


def add_control_flow(sink: UOp) -> UOp:
    end_of = {u.src[1]: u for u in sink.toposort() if u.op is Ops.END}
    siblings: dict[frozenset, list[UOp]] = defaultdict(list)
    for r, end in end_of.items():
        siblings[end.ranges].append(r)
    edges: dict[int, tuple[UOp, ...]] = {}
    for enclosing, rs in siblings.items():
        order = _order_siblings(rs, end_of)
        for i, r in enumerate(order):
            deps = tuple(sorted(enclosing - r.ranges, key=lambda x: x.arg))
            if i > 0 and end_of[order[i - 1]] not in r.src:
                deps += (end_of[order[i - 1]],)
            if deps:
                edges[r.arg] = deps
    return graph_rewrite(sink, _pm_edges, ctx=edges)


def relationship(a: UOp, b: UOp, sink: UOp) -> str:
    """'nested', 'dependent' or 'independent': how the loops of RANGEs a and b relate in `sink`
    (after stage 19: one END per range)."""
    end_of = {u.src[1]: u for u in sink.toposort() if u.op is Ops.END}
    if a in end_of[b].ranges or b in end_of[a].ranges:
        return "nested"
    reads = lambda x, y: any(u is end_of[y] for u in end_of[x].toposort())   # noqa: E731
    return "dependent" if reads(a, b) or reads(b, a) else "independent"
