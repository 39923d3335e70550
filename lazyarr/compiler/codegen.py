"""From one kernel's rangeified graph to source code: the codegen stages in order.

  opts (5)             kernel optimisation: actions on ranges (`lazyarr.compiler.opts`), for
                       renderers with an `opt_target` (the CPU); `opts` given, or the heuristic's
  symbolic (16)        index arithmetic simplified with value bounds
  lower_reduce         REDUCE → accumulator, loop, read after
  symbolic (16)        again, over what lowering exposed
  pre_matcher (17)     the renderer's own rules (`renderer.pre_matcher`, from `lazyarr.compiler.pre_matcher`)
  decompositions (18)  what the target lacks, rewritten into what it has (with symbolic_simple)
  final_rewrite (19)   vector constants and CATs as VECTORIZE, GEPs resolved, one END per range
  control_flow (20)    explicit edges between loops
  linearize (21)       priority-aware topological order
  cleanup (22)         gated stores → IF/STORE/ENDIF where the target has no predicated stores
  render               the renderer's source text

`transcendentals` ("native" or "approx") overrides `lazyarr.settings.transcendentals` and the
renderer's default for stage 18. With LAZYARR_DEBUG=3 each stage prints its time and the graph
after it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from lazyarr import settings
from lazyarr.compiler.cleanup import cleanup
from lazyarr.compiler.control_flow import add_control_flow
from lazyarr.compiler.decompositions import Target, decompose
from lazyarr.compiler.final_rewrite import final_rewrite
from lazyarr.compiler.linearize import linearize
from lazyarr.compiler.opts import optimize
from lazyarr.compiler.lower_reduce import lower_reduce
from lazyarr.compiler.patterns import graph_rewrite
from lazyarr.compiler.symbolic import symbolic
from lazyarr.compiler.uop import Ops, UOp, is_generic, is_written_by_hand, pretty


@dataclass(frozen=True)
class KernelSource:
    name: str
    source: str
    program: tuple[UOp, ...]


def kernel_name(sink: UOp) -> str:
    """E_<output loop sizes> for elementwise kernels, r_<...>_<reduce loop sizes> with reductions
    (a size argument by its name); a kernel written in the IR by the name its SINK gives."""
    if is_written_by_hand(sink):
        return sink.arg[3]
    def length(r: UOp) -> str:
        return str(r.src[0].arg) if r.src[0].op is Ops.CONST else r.src[0].arg[0]
    out_loops: list[str] = []
    reduce_loops: list[str] = []
    for u in sink.toposort():
        if u.op is Ops.END and u.src[0].op in (Ops.STORE, Ops.NOOP):
            out_loops = [length(r) for r in u.src[1:]]
        elif u.op is Ops.REDUCE:
            reduce_loops += [length(r) for r in u.src[1:]]
    prefix = "r" if reduce_loops else "E"
    return "_".join([prefix, *(out_loops or ["1"]), *reduce_loops])


def _stage(name: str, fn: Callable[[UOp], UOp], sink: UOp) -> UOp:
    start = time.perf_counter()
    out = fn(sink)
    if settings.debug >= 3:
        print(f"--- {name}: {(time.perf_counter() - start) * 1e3:.2f} ms\n{pretty(out, limit=200)}")
    return out


def generate(sink: UOp, renderer: Any, name: str | None = None, transcendentals: str | None = None,
             opts: list | None = None) -> KernelSource:
    """Run the codegen stages on a rangeified kernel and render it. `opts`: the kernel
    optimisation actions (None: the heuristic's; [] for none)."""
    name = name or kernel_name(sink)
    # (buffers, sizes, scalars) the launch passes (rangeify's count), which stages may not keep
    arguments = sink.arg
    target = Target.of(renderer, transcendentals)
    if settings.debug >= 3:
        print(f"=== kernel {name}\n{pretty(sink, limit=200)}")
    # kernel optimisation splits loops by their lengths: a shape-generic kernel's are arguments
    opt_target = renderer.opt_target() if settings.opts and not is_generic(sink) else None
    sink = _stage("opts (5)", lambda s: optimize(s, opt_target, opts), sink)
    sink = _stage("symbolic (16)", lambda s: graph_rewrite(s, symbolic), sink)
    simd_sum = None
    if renderer.simd_sums:   # a value that calls a library function keeps its loop scalar
        simd_sum = lambda v: not any(u.op in renderer.library_calls and target.native(u.op, u.dtype) for u in v.toposort())
    sink = _stage("lower_reduce", lambda s: lower_reduce(s, simd_sum), sink)
    sink = _stage("symbolic (16)", lambda s: graph_rewrite(s, symbolic), sink)
    pre = renderer.pre_matcher
    if pre is not None:
        sink = _stage("pre_matcher (17)", lambda s: graph_rewrite(s, pre), sink)
    sink = _stage("decompositions (18)", lambda s: decompose(s, target), sink)
    sink = _stage("final_rewrite (19)", final_rewrite, sink)
    sink = _stage("control_flow (20)", add_control_flow, sink)
    start = time.perf_counter()
    program = linearize(sink)
    if settings.debug >= 3:
        print(f"--- linearize (21): {(time.perf_counter() - start) * 1e3:.2f} ms, {len(program)} instructions")
    start = time.perf_counter()
    program = cleanup(program, renderer)
    if settings.debug >= 3:
        print(f"--- cleanup (22): {(time.perf_counter() - start) * 1e3:.2f} ms, {len(program)} instructions")
        for i, u in enumerate(program):
            print(f"  {i:3d} {u.op.name:<14s} {u.dtype} {'' if u.arg is None else repr(u.arg)}")
    return KernelSource(name, renderer.render(name, program, arguments), tuple(program))
