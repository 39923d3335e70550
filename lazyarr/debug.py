"""Seeing what happens: `profile()` times the kernels a block of code launches, and `graph(t)`
draws a tensor's graph and the kernels it becomes (Graphviz's DOT).

    with lazyarr.debug.profile():        # also lazyarr.profile()
        train_step()
    # kernel    device  calls  total ms  mean us  MB moved  GB/s  GFLOP/s

    lazyarr.debug.graph(y, "y.dot")      # or y.to_dot("y.dot"); then: dot -Tsvg y.dot -o y.svg

Profiling waits for each launch to finish (so the times are the kernels' own, and the program runs
slower while it profiles). Bytes moved are the sizes of a kernel's buffers (each read or written
once); operations are the compiler's estimate (loads, stores and arithmetic, a transcendental
function as several), so GFLOP/s is a rough figure.
"""
from __future__ import annotations

import math
import os
import sys
from collections import defaultdict
from typing import Any, TextIO

from lazyarr.arrays import Array
from lazyarr.compiler.uop import GroupOp, Ops, UOp, op_cost
from lazyarr.runtime import executor
from lazyarr.runtime.items import ScheduleItem

__all__ = ["profile", "graph"]


def _work(item: Any) -> int:
    """The operations a kernel executes (0 for calls and copies)."""
    if not isinstance(item, ScheduleItem):
        return 0
    ast = item.ast
    return sum(math.prod(r.src[0].arg if r.src[0].op is Ops.CONST else 1 for r in u.ranges) * op_cost(u.op)
               for u in ast.toposort() if u.op in GroupOp.ALU or u.op in (Ops.LOAD, Ops.STORE))


class profile:
    """A context manager (and decorator) that collects every kernel launch inside it and prints,
    on exit, a table per kernel: device, calls, total and mean time, bytes moved, GB/s and GFLOP/s.
    `rows()` returns the table's rows; `file` says where to print (None: nowhere)."""

    def __init__(self, file: TextIO | None = sys.stdout, sort_by: str = "total"):
        self.file, self.sort_by = file, sort_by
        self.stats: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0, 0, 0])

    def _record(self, item: Any, seconds: float) -> None:
        s = self.stats[(item.name, item.device.name)]
        s[0] += 1
        s[1] += seconds
        s[2] += sum(b.nbytes for b in item.buffers)
        s[3] += _work(item)

    def __enter__(self) -> profile:
        executor.profiles.append(self._record)
        return self

    def __exit__(self, *exc: Any) -> None:
        executor.profiles.remove(self._record)
        if self.file is not None:
            print(self.table(), file=self.file)

    def __call__(self, fn: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with profile(self.file, self.sort_by):
                return fn(*args, **kwargs)
        return wrapped

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for (name, device), (calls, seconds, nbytes, ops) in self.stats.items():
            out.append({"kernel": name, "device": device, "calls": calls, "total_ms": seconds * 1e3,
                        "mean_us": seconds / calls * 1e6, "mb": nbytes / 1e6,
                        "gb_s": nbytes / seconds / 1e9 if seconds else 0.0,
                        "gflop_s": ops / seconds / 1e9 if seconds else 0.0})
        key = {"total": "total_ms", "calls": "calls", "name": "kernel"}.get(self.sort_by, "total_ms")
        return sorted(out, key=lambda r: r[key], reverse=key != "kernel")

    def table(self) -> str:
        rows = self.rows()
        head = f"{'kernel':<32} {'device':<9} {'calls':>6} {'total ms':>10} {'mean us':>10} {'MB moved':>10} " \
               f"{'GB/s':>8} {'GFLOP/s':>8}"
        lines = [head, "-" * len(head)]
        for r in rows:
            lines.append(f"{r['kernel'][:32]:<32} {r['device']:<9} {r['calls']:>6} {r['total_ms']:>10.3f} "
                         f"{r['mean_us']:>10.1f} {r['mb']:>10.3f} {r['gb_s']:>8.2f} {r['gflop_s']:>8.2f}")
        total = sum(r["total_ms"] for r in rows)
        lines.append(f"{len(rows)} kernels, {sum(r['calls'] for r in rows)} launches, {total:.3f} ms")
        return "\n".join(lines)


def _label(u: UOp) -> str:
    shape = ""
    if u.op not in (Ops.CALL, Ops.SINK):
        try:
            shape = f" {u.shape}"
        except (TypeError, ValueError):
            shape = ""
    arg = "" if u.arg is None or u.op in (Ops.BUFFER, Ops.CALL) else f" {u.arg}"[:40]
    name = u.arg.name if u.op is Ops.CALL else u.op.name
    return f"{name}{arg}\\n{u.dtype}{shape}".replace('"', "'")


def graph(t: Array, path: str | None = None, kernels: bool = True) -> str:
    """Graphviz DOT of t's graph (a node per operation: op, argument, dtype, shape) and, with
    `kernels`, of the kernels realizing t would run, in order, each with the buffers it reads and
    writes. Written to `path` when given; returned either way."""
    if not isinstance(t, Array):
        raise TypeError(f"graph: expected a lazyarr array, got {type(t).__name__}")
    if path is not None and not isinstance(path, (str, os.PathLike)):   # an int would be a file descriptor
        raise TypeError(f"graph: path must be a file name, got {type(path).__name__}")
    order = t.uop.toposort()
    ids = {u: f"n{i}" for i, u in enumerate(order)}
    lines = ["digraph lazyarr {", "  rankdir=BT;", '  node [shape=box, fontname="monospace", fontsize=9];',
             "  subgraph cluster_graph {", '    label="graph";']
    for u in order:
        color = "lightblue" if u.op is Ops.BUFFER else "khaki" if u.op is Ops.CALL_RESULT else \
            "lightgrey" if u.op in GroupOp.Movement else "white"
        lines.append(f'    {ids[u]} [label="{_label(u)}", style=filled, fillcolor={color}];')
        for s in u.src:
            lines.append(f"    {ids[s]} -> {ids[u]};")
    lines.append("  }")
    if kernels:
        items = t.schedule()
        names: dict[int, str] = {}
        lines += ["  subgraph cluster_kernels {", '    label="kernels, in order";']
        for k, item in enumerate(items):
            kid = f"k{k}"
            lines.append(f'    {kid} [label="{k}: {item.name}\\n{item.device.name}", shape=ellipse];')
            for j, b in enumerate(item.buffers):
                bid = names.setdefault(id(b), f"b{len(names)}")
                lines.append(f'    {bid} [label="{b.dtype}[{b.size}]", shape=note];')
                written = j < item.outputs if isinstance(item, ScheduleItem) else j == 0
                lines.append(f"    {kid} -> {bid};" if written else f"    {bid} -> {kid};")
        lines.append("  }")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    if path is not None:
        with open(path, "w") as f:
            f.write(text)
    return text

