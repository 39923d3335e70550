"""What the compiler asks of a target language: a `Renderer` declares its capabilities (class
attributes, read by the stages; the defaults are those of a plain language with none of the
extras) and turns a linearized kernel into source (`render`). `lazyarr.compiler.render_c` (C for
gcc) and `lazyarr.compiler.render_opencl` (OpenCL C) are the two there are."""
from __future__ import annotations

from typing import Any

from lazyarr.compiler.kernel_axes import OptTarget
from lazyarr.compiler.patterns import PatternMatcher
from lazyarr.compiler.uop import GroupOp, Ops, UOp


def _memory(address: UOp) -> UOp | None:
    """The memory an INDEX addresses where a loop may carry a dependency through it: a private array
    (DEFINE_REG, through AFTERs), or a global buffer addressed at a position computed from loaded
    data (a scatter-add's); None for other addresses."""
    buf = address.src[0]
    while buf.op is Ops.AFTER:
        buf = buf.src[0]
    if buf.op is Ops.DEFINE_REG:
        return buf
    # (a RANGE's sources are its length and what must run before the loop, not the position: a
    # SHARE kernel's read-back loop comes after loops that load, yet reads only its own row)
    if buf.op is Ops.DEFINE_GLOBAL and any(u.op is Ops.LOAD for u in address.src[1].toposort(lambda x: x.op is Ops.RANGE)):
        return buf
    return None


def ordered_loops(program: list[UOp]) -> frozenset[UOp]:
    """The loops whose iterations must run one after another, in one thread or work-item: those
    inside which memory defined outside the loop is both read and written where an iteration may
    read what another wrote: a private array (DEFINE_REG: a counter each iteration updates), or a
    global buffer at positions computed from data (a scatter-add). Every other loop's iterations
    are independent: rangeify's kernels store each element of a buffer once and read back only
    what the same iteration stored, and kernels written by hand (`lazyarr.compiler.ir_kernels`)
    keep to the same rule or to these two patterns (or declare a loop independent, `ir_kernels.sink`)."""
    reads: dict[UOp, set[UOp]] = {}
    writes: dict[UOp, set[UOp]] = {}
    independent: tuple = ()
    for u in program:
        if u.op in (Ops.LOAD, Ops.STORE) and (mem := _memory(u.src[0])) is not None:
            (reads if u.op is Ops.LOAD else writes).setdefault(mem, set()).update(u.ranges)
        elif u.op is Ops.SINK and u.arg is not None and len(u.arg) > 4:
            independent = u.arg[4]   # loops a hand-written kernel declares independent (ir_kernels.sink)
    ordered = frozenset().union(*((reads[m] & writes[m]) - m.ranges for m in reads if m in writes))
    return frozenset(r for r in ordered if r.arg not in independent)


class Renderer:
    device = ""                          # the kind of device its code runs on ("cpu", "opencl")
    # stage 18 (decompositions): the ALU ops the language has (the others are rewritten into
    # these), whether an explicit fused multiply-add may be used, and the transcendental functions
    # approximated unless `lazyarr.settings.transcendentals` says otherwise (a mapping from dtype
    # to ops, or a set of ops and (op, dtype) pairs)
    native_ops: frozenset = frozenset(GroupOp.ALU)
    has_fma = False
    approx_by_default: Any = frozenset()
    pre_matcher: PatternMatcher | None = None   # stage 17: rules of the language's own, first
    has_predicated_store = False         # stage 22: a gated store needs no IF around it
    parallel_loops = 0                   # rangeify: output loops spread over work-items (0: none)
    generic_sizes = False                # small kernels take their sizes as arguments
    simd_sums = False                    # lower_reduce: an innermost float sum's loop is vectorised
    library_calls: frozenset = frozenset()   # ... unless it calls one of these ops' functions
    escapes = False                      # stage 18: renders transcendentals.escape nodes
    fused_approximations = False         # stage 18: approximations may use MULACC, rounded once

    def opt_target(self) -> OptTarget | None:
        """What kernel optimisation (stage 5) targets on this language's device; None: none."""
        return None

    def render(self, name: str, program: list[UOp], arguments: tuple[int, int] | None = None) -> str:
        """The kernel `name` of the linearized `program`; `arguments`: (buffers, size arguments)."""
        raise NotImplementedError
