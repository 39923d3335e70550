"""The vocabulary of kernel optimisation: the actions (`Opt`), what a device offers them
(`OptTarget`), a kernel's axes (`Kernel`, found by `analyse`) and how an index steps along one
(`stride`). `lazyarr.compiler.opts` applies the actions and picks them; `lazyarr.compiler.group`
builds the GROUP action's work-group reductions."""
from __future__ import annotations

from dataclasses import dataclass, field

from lazyarr import dtypes
from lazyarr.compiler.patterns import substitute
from lazyarr.compiler.symbolic import simplify
from lazyarr.compiler.uop import Ops, UOp, is_written_by_hand


@dataclass(frozen=True)
class Opt:
    action: str    # "vector", "upcast" (on a reduction axis: unroll), "tile", "epilogue", "share" or "group"
    axis: int
    amount: int

    def __repr__(self) -> str:
        return f"{self.action.upper()}({self.axis}, {self.amount})"


@dataclass(frozen=True)
class OptTarget:
    """What kernel optimisation needs to know about a device."""
    vector_bytes: int = 32             # SIMD width for vectorised reductions
    tile_vector_bytes: int = 32        # SIMD width for register tiles (the widest the target has)
    registers: int = 32                # SIMD registers (accumulators plus operands)
    l1_bytes: int = 32 << 10
    l2_bytes: int = 1 << 20
    threads: int = 1
    vector_ops: frozenset = frozenset({Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.NEG, Ops.MAX, Ops.MIN})
    group_reduce: int = 0              # work-items of a group reduction (0: the target has none)


# ---- the kernel's axes -----------------------------------------------------------------------

@dataclass
class Kernel:
    sink: UOp
    store: UOp
    out_ranges: list[UOp]
    reduce_ranges: list[UOp]
    reduces: list[UOp]
    inner_loops: list[UOp] = field(default_factory=list)   # loops of stores inside the value (SHARE)

    @property
    def axes(self) -> list[UOp]:
        return self.out_ranges + self.reduce_ranges

    def size(self, axis: int) -> int:
        return self.axes[axis].src[0].arg

    def is_reduce(self, axis: int) -> bool:
        return axis >= len(self.out_ranges)


def analyse(sink: UOp) -> Kernel | None:
    """The kernel's store, output and reduction ranges, or None for a kernel of another shape (or
    one written in the IR by hand, whose loops stay as written)."""
    if sink.op is not Ops.SINK or len(sink.src) != 1:
        return None
    root = sink.src[0]
    store, out_ranges = (root.src[0], list(root.src[1:])) if root.op is Ops.END else (root, [])
    if store.op is not Ops.STORE or not store.src[0].src[-1].is_const(True):
        return None
    if is_written_by_hand(sink):
        return None
    nodes = sink.toposort()
    if any(u.dtype.count > 1 for u in nodes if not isinstance(u.dtype, dtypes.PtrDType)):
        return None
    ranges = [u for u in nodes if u.op is Ops.RANGE]
    if any(r.src[0].op is not Ops.CONST or len(r.src) != 1 for r in ranges):
        return None
    reduces = [u for u in nodes if u.op is Ops.REDUCE]
    reduce_ranges = list(dict.fromkeys(r for red in reduces for r in red.src[1:]))
    inner = [r for u in nodes if u.op is Ops.END and u is not root for r in u.src[1:]]
    if set(ranges) != set(out_ranges) | set(reduce_ranges) | set(inner):
        return None
    return Kernel(sink, store, out_ranges, reduce_ranges, reduces, inner)


def stride(expr: UOp, r: UOp) -> int | None:
    """How much `expr` grows when range `r` grows by one, if that is a constant."""
    if r not in expr.ranges:
        return 0
    step = simplify(substitute(expr, {r: r + 1}) - expr)
    return step.arg if step.op is Ops.CONST else None
