"""Stage 20, control flow: make the order of loops explicit as edges of the graph.

After stage 19 each RANGE is closed by exactly one END. The ranges an END still runs inside of
(`END.ranges`) are the loops that enclose this one. Two kinds of edges are added to each RANGE:
- nested: a RANGE takes every enclosing RANGE as a source, so an inner loop opens inside its
  outer loops;
- dependent siblings: loops with the same enclosing ranges run one after another; the later one's
  RANGE takes the earlier one's END as a source. A loop whose body reads what another computes
  (through its END) comes after it; loops that do not depend on each other are ordered by range
  number, which keeps the order deterministic.
Independent loops in different enclosing loops need no edge.
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
    return graph_rewrite(sink, PatternMatcher([(UPat(Ops.RANGE, name="r"), _add_edges)]), ctx=edges)
