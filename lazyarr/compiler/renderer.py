"""What the compiler asks of a target language: a `Renderer` declares its capabilities (class
attributes, read by the stages; the defaults are those of a plain language with none of the
extras) and turns a linearized kernel into source (`render`). `lazyarr.compiler.render_c` (C for
gcc) and `lazyarr.compiler.render_opencl` (OpenCL C) are the two there are."""
from __future__ import annotations

from typing import Any

from lazyarr.compiler.kernel_axes import OptTarget
from lazyarr.compiler.patterns import PatternMatcher
from lazyarr.compiler.uop import GroupOp, UOp


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
