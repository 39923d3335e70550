"""What the compiler asks of a target language: a `Renderer` declares its capabilities (class
attributes, read by the stages; the defaults are those of a plain language with none of the
extras) and turns a linearized kernel into source (`render`). `lazyarr.compiler.render_c` (C for
gcc) and `lazyarr.compiler.render_opencl` (OpenCL C) are the two there are."""
from __future__ import annotations

from typing import Any

from lazyarr.compiler.kernel_axes import OptTarget
from lazyarr.compiler.patterns import PatternMatcher
from lazyarr.compiler.uop import GroupOp, Ops, UOp


def private_array(u: UOp) -> UOp | None:
    """The DEFINE_REG an address's buffer is (through AFTERs), or None for other memory."""
    while u.op is Ops.AFTER:
        u = u.src[0]
    return u if u.op is Ops.DEFINE_REG else None


def ordered_loops(program: list[UOp]) -> frozenset[UOp]:
    """The loops whose iterations must run one after another, in one thread or work-item: those
    inside which a private array (DEFINE_REG) defined outside the loop is both read and written
    (a counter that each iteration updates). Every other loop's iterations are independent:
    rangeify's kernels store each element of a buffer once and never read one another
    iteration writes, and kernels built by hand (`lazyarr.calls.ir_kernel`) promise the same of
    global memory, keeping what iterations share in private arrays."""
    reads: dict[UOp, set[UOp]] = {}
    writes: dict[UOp, set[UOp]] = {}
    for u in program:
        if u.op in (Ops.LOAD, Ops.STORE) and (reg := private_array(u.src[0].src[0])) is not None:
            (reads if u.op is Ops.LOAD else writes).setdefault(reg, set()).update(u.ranges)
    return frozenset().union(*((reads[r] & writes[r]) - r.ranges for r in reads if r in writes))


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

    def opt_target(self) -> OptTarget | None:
        """What kernel optimisation (stage 5) targets on this language's device; None: none."""
        return None

    def render(self, name: str, program: list[UOp], arguments: tuple[int, int] | None = None) -> str:
        """The kernel `name` of the linearized `program`; `arguments`: (buffers, size arguments)."""
        raise NotImplementedError
