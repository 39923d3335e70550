"""Render a linearized kernel as OpenCL C: the C renderer's program with OpenCL's syntax.

Everything but the syntax is the C renderer's (lazyarr.compiler.render_c): expressions, helpers
with NumPy's semantics, loads as statements, accumulators. What differs:
- the prelude defines the C names the C renderer writes (int64_t, expf, ...) in OpenCL's terms,
  enables double precision where the kernel uses it, and turns off the contraction of a*b + c
  into a fused multiply-add (OpenCL allows it by default; NumPy rounds the product first);
- buffers are `__global` kernel arguments (booleans travel as uchar, which OpenCL allows in
  arguments where bool is not);
- two loops over the output are spread over a 2-D grid of work-items (the two outermost, or in a
  kernel without reductions whose loops have known sizes, the two longest, wherever they nest) as
  grid-stride loops (`for (i = get_global_id(d); i < n; i += get_global_size(d))`, the inner
  loop on dimension 0 so that neighbouring work-items touch neighbouring elements); the grid's
  size is recorded in the source's first line for the runtime; other loops stay loops. Work
  outside the inner parallel loop runs in every work-item: the second loop is spread only when
  every reduction runs inside it, and rangeify keeps reductions that do not run inside the first
  out of the kernel (`parallel_loops`);
- group reductions (`lazyarr.compiler.group`, chosen by kernel optimisation through
  `opt_target`): a kernel with a work-item number (DEFINE_VAR "lidx0") runs in work-groups of
  that many work-items (the launch line adds "local g"); its group loops step over work-groups
  (`get_group_id`), its strided ranges over the work-items of a group (`get_local_id`), work-group
  memory is `__local`, BARRIER is `barrier(CLK_LOCAL_MEM_FENCE)`, and a loop around a BARRIER
  ends with one too;
- float16 is stored as half and held as float: vload_half/vstore_half convert at loads and
  stores, and a cast to float16 rounds through them (half arithmetic needs cl_khr_fp16);
- a kernel with loops that run in order (`renderer.ordered_loops`: they update a private array,
  DEFINE_REG, or scatter-add into a buffer) spreads only the loops around all of its stores,
  never an ordered one;
- no OpenMP pragmas, and transcendental functions use the device's built-ins (OpenCL requires
  them to be within a few ulp; they are fast on GPUs).
"""
from __future__ import annotations

from lazyarr import dtypes
from lazyarr.compiler.kernel_axes import OptTarget
from lazyarr.compiler.render_c import INFIX, MATH_FUNCTIONS, UNSIGNED_OF, CRenderer, c_type
from lazyarr.compiler.renderer import ordered_loops
from lazyarr.compiler.uop import Ops, UOp, is_scalar_var, scalar_var_index

TYPEDEFS = ("typedef char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t; "
            "typedef uchar uint8_t; typedef ushort uint16_t; typedef uint uint32_t; typedef ulong uint64_t;")
MAX_WORK_ITEMS = 1 << 20
MAX_GROUPS = 1 << 16   # work-groups along a dimension (the group loops are grid-stride too)
GROUP_SIZE = 256       # work-items that share a group reduction (lazyarr.compiler.group)
WRAPPING = (Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.ABS, Ops.MULACC)   # signed ops that may overflow


def index_only(program: list[UOp]) -> frozenset[UOp]:
    """The nodes computed only for addresses, loop bounds and gates: index arithmetic, which
    stays signed (it never overflows for a valid address, and the compiler may simplify it)."""
    users: dict[UOp, list[UOp]] = {u: [] for u in program}
    for u in program:
        for s in u.src:
            users.setdefault(s, []).append(u)
    out: set[UOp] = set()
    for u in reversed(program):   # users first
        if users[u] and all(v.op in (Ops.INDEX, Ops.RANGE) or v in out for v in users[u]):
            out.add(u)
    return frozenset(out)


def _elementwise(program: list[UOp], ranges: list[UOp]) -> bool:
    """Whether the kernel has no accumulator, every range of the output has a known size, and every
    store runs inside all of them (so any of them can be spread over work-items)."""
    if any(u.op is Ops.DEFINE_ACC for u in program) or any(r.src[0].op is not Ops.CONST for r in ranges):
        return False
    return all(set(ranges) <= set(u.ranges) for u in program if u.op is Ops.STORE)


class OpenCLRenderer(CRenderer):
    device = "opencl"
    has_predicated_store = False
    # the first two loops over the output are spread over a 2-D grid of work-items, the second only
    # when every reduction runs inside it: rangeify may then fuse a reduction that runs inside the
    # first loop alone (softmax's row maximum), which a group reduction shares among work-items
    parallel_loops = 1
    grid_dims = 2
    approx_by_default = frozenset()
    simd_sums = False   # a work-item's loop is scalar: a blocked sum keeps short blocks
    escapes = False
    fused_approximations = False
    # a reduction of products (matmul's register tile, a dot product) accumulates with fma(), one
    # rounding a step (with FP_CONTRACT off nothing else fuses: elementwise results round as NumPy's)
    scalar_fused_accumulation = True

    def __init__(self, fp64: bool = True, group_size: int = GROUP_SIZE, param_bytes: int = 1024) -> None:
        super().__init__()
        self.fp64 = fp64
        self.group_size = group_size   # 0: no group reductions (a device with small work-groups)
        self.param_bytes = param_bytes   # the most bytes of parameters a kernel takes (OpenCL: 1024 at least)
        self._dims: dict[UOp, int] = {}
        self._strided: frozenset = frozenset()
        self._barrier_loops: frozenset = frozenset()
        self._grouped = False
        self._group = 1
        self._sizes = 0
        self._scalars: list[str] = []   # the scalar parameters' declarations, in order
        self._index_only: frozenset = frozenset()

    def loop_pragmas(self, program: list[UOp]) -> dict[UOp, str]:
        return {}

    def opt_target(self):
        return OptTarget(group_reduce=self.group_size) if self.group_size else None

    def render(self, name: str, program: list[UOp], arguments: tuple[int, ...] | None = None) -> str:
        self._sizes = arguments[1] if arguments else 0
        # every scalar the launch passes is a parameter (a folded-away one of type long): after the sizes
        declared = {scalar_var_index(u): u for u in program if u.op is Ops.DEFINE_VAR and is_scalar_var(u)}
        self._scalars = [f"const {c_type(declared[k].dtype) if k in declared else 'long'} s{k}"
                         for k in range(arguments[2] if arguments and len(arguments) > 2 else 0)]
        self._index_only = index_only(program)
        lid = next((u for u in program if u.op is Ops.DEFINE_VAR and u.arg[0] == "lidx0"), None)
        self._strided = frozenset(u for u in program if u.op is Ops.RANGE and lid is not None and lid in u.src)
        self._barrier_loops = frozenset().union(*(u.ranges for u in program if u.op is Ops.BARRIER))
        store_ranges = frozenset().union(*(u.ranges for u in program if u.op is Ops.STORE))
        outer = sorted((u for u in program if u.op is Ops.RANGE and u in store_ranges and u not in self._strided),
                       key=lambda r: r.arg)
        parallel = outer[:self.grid_dims]   # output ranges nest in the order of their numbers
        if lid is None and len(outer) > self.grid_dims and _elementwise(program, outer):
            # no reduction: spread the longest loops, wherever they nest (a sort's stage of shape
            # (16, 2, 32768) keeps 65536 work-items busy, not 32); the others loop in each work-item
            longest = sorted(outer, key=lambda r: -r.src[0].arg)[:self.grid_dims]
            parallel = [r for r in outer if r in longest]
        if ordered := ordered_loops(program):
            # loops that run in order (a kernel written in the IR): only loops around all of the
            # stores are spread, never an ordered one (a work-item runs those)
            around = frozenset.intersection(*(u.ranges for u in program if u.op is Ops.STORE)) - ordered
            parallel = sorted(around, key=lambda r: r.arg)[:self.grid_dims]
        if lid is None and any(r not in a.ranges for a in program if a.op is Ops.DEFINE_ACC for r in parallel[1:]):
            parallel = parallel[:1]   # a work-item per element would compute the reduction again
        self._dims = {r: len(parallel) - 1 - i for i, r in enumerate(parallel)}   # the innermost is dimension 0
        self._grouped = lid is not None
        self._group = 1 if lid is None else lid.arg[2] + 1
        if lid is None:
            # a size argument's name stands for its value (clamped the same way) at launch
            sizes = [str(min(r.src[0].arg, MAX_WORK_ITEMS)) if r.src[0].op is Ops.CONST else r.src[0].arg[0]
                     for r in reversed(parallel)] or ["1"]
            launch = " ".join(sizes)
        else:   # one work-group of g work-items per iteration of the group loops
            g = lid.arg[2] + 1
            groups = [min(r.src[0].arg, MAX_GROUPS) for r in reversed(parallel)] or [1]
            launch = " ".join(map(str, [groups[0] * g, *groups[1:]])) + " local " + " ".join(map(str, [g] + [1] * (len(groups) - 1)))
        return f"// lazyarr launch {launch}\n" + super().render(name, program, arguments)

    def prelude(self, program: list[UOp]) -> list[str]:
        uses_double = any(u.dtype.scalar is dtypes.float64 or (u.op is Ops.DEFINE_GLOBAL and u.dtype.base is dtypes.float64)
                          for u in program)
        # no contraction of a*b + c into a fused multiply-add (OpenCL C allows it by default): NumPy
        # rounds the product first, as the C renderer's -ffp-contract=off does
        lines = ["#pragma OPENCL FP_CONTRACT OFF", TYPEDEFS]
        if uses_double:
            lines.insert(0, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        used = {MATH_FUNCTIONS[u.op] for u in program if u.op in MATH_FUNCTIONS}
        lines += [f"#define {fn}f {fn}" for fn in sorted(used)]   # OpenCL's math functions are overloaded
        if any(u.dtype.scalar is dtypes.float16 for u in program if not isinstance(u.dtype, dtypes.PtrDType)):
            lines.append("#define _Float16 float")   # float16 values are held as float
            lines.append("inline float lz_round_half(float x) { ushort h; vstore_half(x, 0, (__private half*)&h); "
                         "return vload_half(0, (__private half*)&h); }")
        if Ops.LOG1P in {u.op for u in program}:   # see alu
            lines.append("#define lz_log1p(x) (fabs(x) < (sizeof(x) == 4 ? 0x1p-24f : 0x1p-53f) ? (x) : log1p(x))")
        return lines

    def alu(self, u: UOp, a: list[str]) -> str:
        # log1p(x) rounds to x where |x| is below half an ulp of 1; PoCL's gives 0 for the smallest
        # subnormals (and misrounds others)
        if u.op is Ops.LOG1P:
            return f"lz_log1p({a[0]})"
        if u.op is Ops.CAST and u.dtype is dtypes.float16:
            return f"lz_round_half({a[0]})"
        d = u.dtype
        if u.op in WRAPPING and d in UNSIGNED_OF and d.itemsize >= 4 and u not in self._index_only:
            # OpenCL C takes signed overflow for impossible (clang folds x + 1 > x to true), NumPy
            # wraps: the operation runs on the unsigned type, and converts back modulo 2^n
            x = [f"(({UNSIGNED_OF[d]}){v})" for v in a]
            if u.op is Ops.NEG:
                expr = f"(0 - {x[0]})"
            elif u.op is Ops.ABS:
                expr = f"({a[0]} < 0 ? 0 - {x[0]} : {x[0]})"
            elif u.op is Ops.MULACC:
                expr = f"({x[0]} * {x[1]} + {x[2]})"
            else:
                expr = f"({x[0]} {INFIX[u.op]} {x[1]})"
            return f"(({c_type(d)}){expr})"
        return super().alu(u, a)

    def vector_fma(self, d: dtypes.DType, a: str, b: str, c: str) -> str:
        return f"fma({a}, {b}, {c})"

    def bitcast(self, src: dtypes.DType, dst: dtypes.DType, a: str) -> str:
        if dtypes.float16 not in (src, dst):
            return super().bitcast(src, dst, a)
        # a float16 value is held as float: its bits are those vstore_half writes
        name = f"lz_bitcast_{src.name}_{dst.name}"
        if src is dtypes.float16:
            body = (f"inline {c_type(dst)} {name}(float x) {{ ushort h; vstore_half(x, 0, (__private half*)&h); "
                    f"return ({c_type(dst)})h; }}")
        else:
            body = (f"inline float {name}({c_type(src)} x) {{ ushort h = (ushort)x; "
                    f"return vload_half(0, (__private half*)&h); }}")
        return f"{self.helper(name, body)}({a})"

    def param(self, g: UOp) -> str:
        base = "uchar" if g.dtype.base is dtypes.bool_ else "half" if g.dtype.base is dtypes.float16 else \
            c_type(g.dtype.base)
        return f"__global {base}* restrict data{g.arg}"

    # float16 is stored as half and held as float (half arithmetic needs an extension; the
    # conversions are core OpenCL): loads and stores convert, and a cast to float16 rounds
    def load_element(self, d: dtypes.DType, buf: str, index: str) -> str:
        return f"vload_half({index}, {buf})" if d is dtypes.float16 else super().load_element(d, buf, index)

    def store_element(self, d: dtypes.DType, buf: str, index: str, value: str) -> str:
        return f"vstore_half({value}, {index}, {buf});" if d is dtypes.float16 else \
            super().store_element(d, buf, index, value)

    def size_param(self, var: UOp, buffers: int) -> str:
        return ""   # every size is a kernel parameter (see signature)

    def scalar_param(self, var: UOp, first: int) -> str:
        return ""   # every scalar is a kernel parameter (see signature)

    def signature(self, name: str, params: list[str]) -> list[str]:
        ordered = sorted(params, key=lambda p: int(p.rsplit("data", 1)[1]))   # the launch passes buffers in order
        sizes = [f"const long n{k}" for k in range(self._sizes)]              # then every size, in order
        if 8 * (len(ordered) + len(sizes) + len(self._scalars)) <= self.param_bytes:
            return [f"__kernel void {name}({', '.join(ordered + sizes + self._scalars)}) {{"]
        # more than the device takes: the sizes travel in one buffer (the launch makes it), the scalars after it
        params = ordered + ['__global const long* restrict lz_sizes'] + self._scalars
        return [f"__kernel void {name}({', '.join(params)}) {{",
                *(f"  {p} = lz_sizes[{k}];" for k, p in enumerate(sizes))]

    def open_range(self, r: UOp, size: str) -> str:
        v = f"r{r.arg}"
        if r in self._strided:   # this work-item's share of the range
            return f"for (int64_t {v} = get_local_id(0); {v} < {size}; {v} += {self._group}) {{"   # a known trip count
        if r in self._dims:
            d = self._dims[r]
            if self._grouped:
                return f"for (int64_t {v} = get_group_id({d}); {v} < {size}; {v} += get_num_groups({d})) {{"
            return f"for (int64_t {v} = get_global_id({d}); {v} < {size}; {v} += get_global_size({d})) {{"
        return super().open_range(r, size)

    def close_range(self, r: UOp) -> list[str]:
        # the group's next iteration may overwrite partials only once every work-item has read them
        return ["barrier(CLK_LOCAL_MEM_FENCE);"] if r in self._barrier_loops else []

    def work_group(self, u: UOp) -> tuple[str, str]:
        if u.op is Ops.DEFINE_VAR and u.arg[0] == "lidx0":
            return "lidx0", "const int64_t lidx0 = get_local_id(0);"
        if u.op is Ops.DEFINE_LOCAL:
            base = "uchar" if u.dtype.base is dtypes.bool_ else c_type(u.dtype.base)
            return f"lbuf{u.arg[0]}", f"__local {base} lbuf{u.arg[0]}[{u.arg[1]}];"
        if u.op is Ops.BARRIER:
            return "", "barrier(CLK_LOCAL_MEM_FENCE);"
        return super().work_group(u)
