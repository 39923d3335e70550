"""Stage 21, linearize: the kernel graph as a list of instructions, in an order that respects
every edge and puts work where it runs least often.

A priority-aware topological sort. Among the nodes whose sources are all placed, the next is the
one with the smallest key (run_count, priority, position): run_count is how often the node runs,
the product of the sizes of the ranges it is inside of (loop-invariant work is hoisted out of
inner loops); priority breaks ties: DEFINE_GLOBAL −20, DEFINE_VAR −19, DEFINE_LOCAL −18,
DEFINE_ACC and DEFINE_REG −17 (registers), CONST −10, END −5, LOAD and escape calls −1, STORE +1,
RANGE +5, others 0; position (the node's place in a plain topological order) keeps the result
deterministic.

The result respects every edge of the graph: a node comes after all of its sources, so
definitions come first, loads come before their uses, a RANGE opens before the nodes inside it
and its END closes after them, and (by priority) stores come as late as their loop allows. A
graph with a cycle raises AssertionError. Stage 22 (`lazyarr.compiler.cleanup`) then works on
the list.
"""
from __future__ import annotations

import heapq
import math

from lazyarr.compiler.uop import Ops, UOp, is_escape

PRIORITY = {Ops.DEFINE_GLOBAL: -20, Ops.DEFINE_VAR: -19, Ops.DEFINE_LOCAL: -18, Ops.DEFINE_ACC: -17, Ops.DEFINE_REG: -17, Ops.CONST: -10,
            Ops.END: -5, Ops.LOAD: -1, Ops.STORE: 1, Ops.RANGE: 5}
# an escape (a call once a vector in C: `transcendentals.escape`) comes as early as a load, while
# few values are alive: every vector register is the caller's to save around a call
ESCAPE_PRIORITY = -1


def run_count(u: UOp) -> int:
    """How often u runs: the product of its ranges' lengths (a size argument's at its largest)."""
    return math.prod(r.src[0].vmax for r in u.ranges)


def linearize(sink: UOp) -> list[UOp]:
    order = sink.toposort()
    position = {u: i for i, u in enumerate(order)}
    waiting = {u: len(set(u.src)) for u in order}
    users: dict[UOp, list[UOp]] = {u: [] for u in order}
    for u in order:
        for s in set(u.src):
            users[s].append(u)

    def key(u: UOp) -> tuple[int, int, int]:
        return (run_count(u), ESCAPE_PRIORITY if is_escape(u) else PRIORITY.get(u.op, 0), position[u])

    ready = [(key(u), u) for u in order if waiting[u] == 0]
    heapq.heapify(ready)
    out: list[UOp] = []
    while ready:
        _, u = heapq.heappop(ready)
        out.append(u)
        for v in users[u]:
            waiting[v] -= 1
            if waiting[v] == 0:
                heapq.heappush(ready, (key(v), v))
    assert len(out) == len(order), "the kernel graph has a cycle"
    return out

