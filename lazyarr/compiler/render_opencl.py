"""Render a linearized kernel as OpenCL C: the C renderer's program with OpenCL's syntax.

Everything but the syntax is the C renderer's (lazyarr.compiler.render_c): expressions, helpers
with NumPy's semantics, loads as statements, accumulators. What differs:
- the prelude defines the C names the C renderer writes (int64_t, expf, ...) in OpenCL's terms
  and enables double precision where the kernel uses it;
- buffers are `__global` kernel arguments (booleans travel as uchar, which OpenCL allows in
  arguments where bool is not);
- the two outermost loops over the output are spread over a 2-D grid of work-items as
  grid-stride loops (`for (i = get_global_id(d); i < n; i += get_global_size(d))`, the inner
  loop on dimension 0 so that neighbouring work-items touch neighbouring elements); the grid's
  size is recorded in the source's first line for the runtime; other loops stay loops. Work
  outside the inner parallel loop runs in every work-item, so the scheduler keeps reductions
  out of it;
- no OpenMP pragmas, and transcendental functions use the device's built-ins (OpenCL requires
  them to be within a few ulp; they are fast on GPUs).
"""
from __future__ import annotations

from lazyarr import dtypes
from lazyarr.compiler.render_c import MATH_FUNCTIONS, CRenderer, c_type
from lazyarr.compiler.uop import Ops, UOp

TYPEDEFS = ("typedef char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t; "
            "typedef uchar uint8_t; typedef ushort uint16_t; typedef uint uint32_t; typedef ulong uint64_t;")
MAX_WORK_ITEMS = 1 << 20


class OpenCLRenderer(CRenderer):
    device = "opencl"
    has_predicated_store = False
    # the first two loops over the output are spread over a 2-D grid of work-items; every work-item
    # runs what lies outside the inner one, so rangeify keeps reductions out of there
    parallel_loops = 2
    approx_by_default = frozenset()

    def __init__(self, fp64: bool = True) -> None:
        super().__init__()
        self.fp64 = fp64
        self._dims: dict[UOp, int] = {}

    def loop_pragmas(self, program: list[UOp]) -> dict[UOp, str]:
        return {}

    def render(self, name: str, program: list[UOp]) -> str:
        store_ranges = frozenset().union(*(u.ranges for u in program if u.op is Ops.STORE))
        outer = sorted((u for u in program if u.op is Ops.RANGE and u in store_ranges), key=lambda r: r.arg)
        parallel = outer[:self.parallel_loops]   # output ranges nest in the order of their numbers
        self._dims = {r: len(parallel) - 1 - i for i, r in enumerate(parallel)}   # the innermost is dimension 0
        sizes = [min(r.src[0].arg, MAX_WORK_ITEMS) for r in reversed(parallel)] or [1]
        return f"// lazyarr launch {' '.join(map(str, sizes))}\n" + super().render(name, program)

    def prelude(self, program: list[UOp]) -> list[str]:
        uses_double = any(u.dtype.scalar is dtypes.float64 or (u.op is Ops.DEFINE_GLOBAL and u.dtype.base is dtypes.float64)
                          for u in program)
        lines = [TYPEDEFS]
        if uses_double:
            lines.insert(0, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        used = {MATH_FUNCTIONS[u.op] for u in program if u.op in MATH_FUNCTIONS}
        lines += [f"#define {fn}f {fn}" for fn in sorted(used)]   # OpenCL's math functions are overloaded
        return lines

    def param(self, g: UOp) -> str:
        base = "uchar" if g.dtype.base is dtypes.bool_ else c_type(g.dtype.base)
        return f"__global {base}* restrict data{g.arg}"

    def signature(self, name: str, params: list[str]) -> list[str]:
        ordered = sorted(params, key=lambda p: int(p.rsplit("data", 1)[1]))   # the launch passes buffers in order
        return [f"__kernel void {name}({', '.join(ordered)}) {{"]

    def open_range(self, r: UOp, size: str) -> str:
        if r in self._dims:
            d = self._dims[r]
            return f"for (int64_t r{r.arg} = get_global_id({d}); r{r.arg} < {size}; r{r.arg} += get_global_size({d})) {{"
        return super().open_range(r, size)

