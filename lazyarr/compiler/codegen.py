"""From one kernel's rangeified graph to source code: the codegen stages in order.

  symbolic (16)        index arithmetic simplified with value bounds
  lower_reduce         REDUCE → accumulator, loop, read after
  symbolic (16)        again, over what lowering exposed
  final_rewrite (19)   one END per range
  control_flow (20)    explicit edges between loops
  linearize (21)       priority-aware topological order
  cleanup (22)         gated stores → IF/STORE/ENDIF where the target has no predicated stores
  render               the renderer's source text

With LAZYARR_DEBUG=3 each stage prints its time and the graph after it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from lazyarr import settings
from lazyarr.compiler.control_flow import add_control_flow
from lazyarr.compiler.final_rewrite import final_rewrite
from lazyarr.compiler.linearize import cleanup_gated_stores, linearize
from lazyarr.compiler.lower_reduce import lower_reduce
from lazyarr.compiler.patterns import graph_rewrite
from lazyarr.compiler.symbolic import symbolic
from lazyarr.compiler.uop import Ops, UOp, pretty


@dataclass(frozen=True)
class KernelSource:
    name: str
    source: str
    program: tuple[UOp, ...]


def kernel_name(sink: UOp) -> str:
    """E_<output loop sizes> for elementwise kernels, r_<...>_<reduce loop sizes> with reductions."""
    out_loops: list[int] = []
    reduce_loops: list[int] = []
    for u in sink.toposort():
        if u.op is Ops.END and any(s.op is Ops.STORE for s in (u.src[0],)):
            out_loops = [r.src[0].arg for r in u.src[1:]]
        elif u.op is Ops.REDUCE:
            reduce_loops += [r.src[0].arg for r in u.src[1:]]
    prefix = "r" if reduce_loops else "E"
    return "_".join([prefix, *map(str, out_loops or [1]), *map(str, reduce_loops)])


def _stage(name: str, fn: Callable[[UOp], UOp], sink: UOp) -> UOp:
    start = time.perf_counter()
    out = fn(sink)
    if settings.debug >= 3:
        print(f"--- {name}: {(time.perf_counter() - start) * 1e3:.2f} ms\n{pretty(out, limit=200)}")
    return out


def generate(sink: UOp, renderer: Any, name: str | None = None) -> KernelSource:
    """Run the codegen stages on a rangeified kernel and render it."""
    name = name or kernel_name(sink)
    if settings.debug >= 3:
        print(f"=== kernel {name}\n{pretty(sink, limit=200)}")
    sink = _stage("symbolic", lambda s: graph_rewrite(s, symbolic), sink)
    sink = _stage("lower_reduce", lower_reduce, sink)
    sink = _stage("symbolic", lambda s: graph_rewrite(s, symbolic), sink)
    sink = _stage("final_rewrite", final_rewrite, sink)
    sink = _stage("control_flow", add_control_flow, sink)
    start = time.perf_counter()
    program = linearize(sink)
    if not renderer.has_predicated_store:
        program = cleanup_gated_stores(program)
    if settings.debug >= 3:
        print(f"--- linearize: {(time.perf_counter() - start) * 1e3:.2f} ms, {len(program)} instructions")
    return KernelSource(name, renderer.render(name, program), tuple(program))
