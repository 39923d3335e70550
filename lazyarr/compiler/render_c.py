"""Render a linearized kernel as C: one function taking its buffers as an array of addresses.

Loops become `for` statements, accumulators local variables, private arrays (DEFINE_REG) arrays
declared where their loop's body begins, and ALU ops C expressions. A value
used once, inside the same loops as its user, is written inline; any other value gets a `const`
local. The C follows NumPy's semantics where C's differ: integer division and remainder by zero
give 0 and INT_MIN/-1 wraps (helpers), shifts by the type's width or more give 0 (or -1 for a
negative value shifted right), MAX/MIN propagate NaN, narrow integers wrap after every operation
(casts), and signed overflow wraps (the compiler runs with -fwrapv).
"""
from __future__ import annotations

import functools
import math
import platform

from lazyarr import dtypes, settings
from lazyarr.compiler.kernel_axes import OptTarget
from lazyarr.compiler.patterns import PatternMatcher
from lazyarr.compiler.linearize import run_count
from lazyarr.compiler.pre_matcher import c_pre_matcher
from lazyarr.compiler.renderer import Renderer, ordered_loops
from lazyarr.compiler.uop import (GroupOp, Ops, UOp, is_escape, is_scalar_var, is_size_var, op_cost, scalar_var_index,
                                  size_var_index)
from lazyarr.dtypes import DType

X86_64 = platform.machine() in ("x86_64", "AMD64")
MAX_NESTING = 32              # inlined expressions one expression may nest
PARALLEL_MIN_WORK = 1 << 22   # loads, stores and ALU ops (lanes, `op_cost` each) below which threads cost more than they save
# (waking the other thread costs ~10-50 us on an idle machine, milliseconds when the machine is busy:
# a 64x128x64 matmul, ~1.5M here, runs in 23 us on one thread, 13 us on two, and 10 ms on two while
# another process keeps a core busy)

C_TYPES = {dtypes.bool_: "bool", dtypes.int8: "int8_t", dtypes.int16: "int16_t", dtypes.int32: "int32_t",
           dtypes.int64: "int64_t", dtypes.uint8: "uint8_t", dtypes.uint16: "uint16_t",
           dtypes.uint32: "uint32_t", dtypes.uint64: "uint64_t", dtypes.float16: "_Float16",
           dtypes.float32: "float", dtypes.float64: "double"}
UNSIGNED_OF = {dtypes.int8: "uint8_t", dtypes.int16: "uint16_t", dtypes.int32: "uint32_t",
               dtypes.int64: "uint64_t"}

MATH_FUNCTIONS = {Ops.SQRT: "sqrt", Ops.EXP: "exp", Ops.EXP2: "exp2", Ops.EXPM1: "expm1", Ops.LOG: "log",
                  Ops.LOG2: "log2", Ops.LOG10: "log10", Ops.LOG1P: "log1p", Ops.SIN: "sin", Ops.COS: "cos",
                  Ops.TAN: "tan", Ops.ASIN: "asin", Ops.ACOS: "acos", Ops.ATAN: "atan", Ops.SINH: "sinh",
                  Ops.COSH: "cosh", Ops.TANH: "tanh", Ops.ASINH: "asinh", Ops.ACOSH: "acosh",
                  Ops.ATANH: "atanh", Ops.FLOOR: "floor", Ops.CEIL: "ceil", Ops.TRUNC: "trunc",
                  Ops.RINT: "rint", Ops.ERF: "erf", Ops.ABS: "fabs", Ops.POW: "pow", Ops.ATAN2: "atan2", Ops.HYPOT: "hypot",
                  Ops.COPYSIGN: "copysign", Ops.NEXTAFTER: "nextafter", Ops.FMOD: "fmod"}
INFIX = {Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*", Ops.FDIV: "/", Ops.CMPLT: "<", Ops.CMPLE: "<=",
         Ops.CMPEQ: "==", Ops.CMPNE: "!=", Ops.AND: "&", Ops.OR: "|", Ops.XOR: "^"}


@functools.lru_cache(maxsize=None)
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as Linux lists them (empty where /proc/cpuinfo cannot be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            return frozenset(next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), ()))
    except OSError:
        return frozenset()


# stage 18's approximations use fused multiply-adds (a polynomial term, an exact product) where
# the processor has them, which -march=native lets gcc inline and vectorise
FUSED = X86_64 and "fma" in cpu_flags()


def widest_vector_bytes() -> int:
    """64 where the CPU has AVX-512 (gcc -march=native uses it), else 32: the register tiles of
    matmul use the widest vectors (with 32 registers, 8x2 zmm accumulators measured 1.05-1.1x
    faster than 8x4 ymm on one core here, ~100 GFLOP/s, as fast as OpenBLAS)."""
    return 64 if "avx512f" in cpu_flags() else 32


def c_type(d: DType) -> str:
    if isinstance(d, dtypes.PtrDType):
        return c_type(d.base) + "*"
    if isinstance(d, dtypes.VecDType):
        return f"lz_{d.name}"                   # a gcc vector type, declared by vector_typedef
    return C_TYPES[d]


def vector_typedef(d: DType) -> str:
    # gcc has no vectors of bool: a bool lane is a byte holding 0 or 1 (what a comparison gives)
    lane = "uint8_t" if d.scalar.is_bool else C_TYPES[d.scalar]
    return f"typedef {lane} {c_type(d)} __attribute__((vector_size({d.itemsize})));"


def c_literal(v, d: DType) -> str:
    if d.is_bool:
        return "1" if v else "0"
    if d is dtypes.float16:
        return f"((_Float16){c_literal(v, dtypes.float32)})"
    if d.is_float:
        suffix = "f" if d is dtypes.float32 else ""
        if math.isnan(v):
            return "NAN" if d is dtypes.float32 else "((double)NAN)"
        if math.isinf(v):
            inf = "INFINITY" if d is dtypes.float32 else "((double)INFINITY)"
            return inf if v > 0 else f"(-{inf})"
        return f"{float(v).hex()}{suffix}"
    if d is dtypes.int64 and v == dtypes.iinfo(d).min:
        return "(-9223372036854775807LL-1)"
    if d is dtypes.int32 and v == dtypes.iinfo(d).min:
        return "(-2147483647-1)"
    if d is dtypes.uint64:
        return f"{v}ULL"
    if d is dtypes.int64:
        return f"{v}LL"
    if d is dtypes.uint32:
        return f"{v}U"
    if d.itemsize < 4:
        return f"(({C_TYPES[d]}){v})"
    return str(v)


class CRenderer(Renderer):
    """C for gcc. `helpers` collects the static inline functions a kernel uses.

    What the codegen stages read: `native_ops` (every ALU op but MULACC: gcc has all of them, and
    libm every transcendental function), `has_fma` (False: an explicit fused multiply-add would
    round differently from NumPy), `approx_by_default` (the transcendental functions stage 18
    approximates unless `lazyarr.settings.transcendentals` says otherwise), `pre_matcher`
    (stage 17) and `has_predicated_store` (stage 22)."""
    device = "cpu"
    has_predicated_store = False
    native_ops = frozenset(GroupOp.ALU - {Ops.MULACC})
    has_fma = False
    # measured with bench/transcendentals.py (median ns per element, 2^20 elements, one thread),
    # per dtype. float32 is computed in float32 (16 lanes to a vector): every function is faster
    # approximated than glibc's scalar float32 calls, 1.6x (pow) to 30x (log1p, tanh); float64:
    # the approximations of exp, exp2, expm1, log1p, tanh vectorise and beat glibc 1.1-4x, and with
    # escapes (x86-64) sin, cos and tan 3-5x (3.7-5.8 ns against 17-18: Zen 4, glibc 2.36); with
    # FMA (`fused_approximations`) log and pow too (3.1 and 7.2 ns against 3.3 and 10.2), while
    # libm's log2 stays as fast (without escapes, trig's Payne–Hanek on every element loses to
    # libm too)
    approx_by_default = {
        dtypes.float32: frozenset({Ops.EXP, Ops.EXP2, Ops.EXPM1, Ops.LOG, Ops.LOG2, Ops.LOG1P, Ops.SIN, Ops.COS,
                                   Ops.TAN, Ops.TANH, Ops.POW}),
        dtypes.float64: frozenset({Ops.EXP, Ops.EXP2, Ops.EXPM1, Ops.LOG1P, Ops.TANH} |
                                  ({Ops.SIN, Ops.COS, Ops.TAN} if X86_64 else set()) |
                                  ({Ops.LOG, Ops.POW} if FUSED else set()))}
    pre_matcher: PatternMatcher | None = c_pre_matcher   # stage 17 (lazyarr.compiler.pre_matcher)
    # kernel optimisation (lazyarr.compiler.opts): the ops rendered lane by lane on gcc vectors
    # (float vectors; MAX/MIN keep NaN semantics; CAST between float types, a product widened to
    # float64 by prepare), and the SIMD width used: 32 bytes, since gcc tunes this Zen 4 as znver3
    # (256-bit preferred) and AVX-512 was no faster here
    vector_ops = frozenset({Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.NEG, Ops.MAX, Ops.MIN, Ops.CAST})
    vector_bytes = 32
    # small kernels take their sizes as arguments (lazyarr.compiler.rangeify): DEFINE_VAR nk is the
    # k-th word after the buffers' addresses
    generic_sizes = True
    # an innermost loop summing floats is `omp simd reduction` (loop_pragmas): lower_reduce sizes
    # a blocked sum's blocks for the vector lanes that split them, unless the loop calls libm
    # (which gcc does not vectorise; sqrt, fabs and the roundings it inlines)
    simd_sums = True
    library_calls = frozenset(MATH_FUNCTIONS) - {Ops.SQRT, Ops.ABS, Ops.FLOOR, Ops.CEIL, Ops.TRUNC, Ops.RINT,
                                                Ops.COPYSIGN}
    # stage 18 may leave large arguments of sin, cos and tan to libm (escape_call): on x86-64,
    # where gcc calls an escape once a vector through the x86 vector function ABI
    escapes = X86_64
    fused_approximations = FUSED

    def opt_target(self):
        """What kernel optimisation targets on this device (None: no kernel optimisation)."""
        if self.device != "cpu":
            return None
        return OptTarget(vector_bytes=self.vector_bytes, tile_vector_bytes=widest_vector_bytes(), threads=settings.threads,
                         vector_ops=self.vector_ops)

    def __init__(self) -> None:
        self.helpers: dict[str, str] = {}

    # ---- helpers with NumPy semantics -------------------------------------------------------
    def helper(self, name: str, body: str) -> str:
        self.helpers.setdefault(name, body)
        return name

    def int_div(self, d: DType, a: str, b: str, mod: bool) -> str:
        t = c_type(d)
        name = f"lz_{'mod' if mod else 'div'}_{d.name}"
        if d.is_unsigned:
            body = f"static inline {t} {name}({t} a, {t} b) {{ return b == 0 ? 0 : ({t})(a {'%' if mod else '/'} b); }}"
        elif mod:
            body = f"static inline {t} {name}({t} a, {t} b) {{ return (b == 0 || b == -1) ? 0 : ({t})(a % b); }}"
        else:
            body = (f"static inline {t} {name}({t} a, {t} b) {{ return b == 0 ? 0 : "
                    f"(b == -1 ? ({t})(0 - ({UNSIGNED_OF[d]})a) : ({t})(a / b)); }}")
        return f"{self.helper(name, body)}({a}, {b})"

    def shift(self, d: DType, a: str, b: str, left: bool) -> str:
        t, bits = c_type(d), d.bits
        name = f"lz_{'shl' if left else 'shr'}_{d.name}"
        if left:
            u = UNSIGNED_OF.get(d, t)
            body = (f"static inline {t} {name}({t} a, {t} b) {{ return (b < 0 || b >= {bits}) ? 0 : "
                    f"({t})(({u})a << b); }}")
        elif d.is_unsigned:
            body = f"static inline {t} {name}({t} a, {t} b) {{ return (b >= {bits}) ? 0 : ({t})(a >> b); }}"
        else:
            body = (f"static inline {t} {name}({t} a, {t} b) {{ return (b < 0 || b >= {bits}) ? "
                    f"(a < 0 ? -1 : 0) : ({t})(a >> b); }}")
        return f"{self.helper(name, body)}({a}, {b})"

    def select(self, d: DType, c: str, a: str, b: str) -> str:
        """c ? a : b as a bit blend, which gcc keeps branch-free: with many selects in a loop (the
        decomposed transcendentals), gcc's jump threading otherwise turns ?: into branches with
        many-way joins that its if-conversion gives up on, and the loop is not vectorised."""
        t = c_type(d)
        name = f"lz_where_{d.name}"
        if d.is_int:
            body = f"static inline {t} {name}(bool c, {t} a, {t} b) {{ {t} m = -({t})c; return (a & m) | (b & ~m); }}"
        else:
            it = "int64_t" if d.itemsize == 8 else "int32_t"
            body = (f"static inline {t} {name}(bool c, {t} a, {t} b) {{ {it} ia, ib, m = -({it})c; "
                    f"__builtin_memcpy(&ia, &a, sizeof ia); __builtin_memcpy(&ib, &b, sizeof ib); "
                    f"ia = (ia & m) | (ib & ~m); __builtin_memcpy(&a, &ia, sizeof a); return a; }}")
        return f"{self.helper(name, body)}({c}, {a}, {b})"

    def minmax(self, d: DType, a: str, b: str, is_max: bool) -> str:
        t = c_type(d)
        name = f"lz_{'max' if is_max else 'min'}_{d.name}"
        cmp = ">" if is_max else "<"
        if d.is_float:   # NaN propagates; a blend, as for WHERE, keeps it branch-free
            pick = self.select(d, f"(a != a) | (a {cmp} b)", "a", "b")
            body = f"static inline {t} {name}({t} a, {t} b) {{ return {pick}; }}"
        else:
            body = f"static inline {t} {name}({t} a, {t} b) {{ return (a {cmp} b) ? a : b; }}"
        return f"{self.helper(name, body)}({a}, {b})"

    def int_pow(self, d: DType, a: str, b: str) -> str:
        t = c_type(d)
        name = f"lz_pow_{d.name}"
        neg = "" if d.is_unsigned else "if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0); "
        body = (f"static inline {t} {name}({t} b, {t} e) {{ {neg}{t} r = 1; "
                f"while (e) {{ if (e & 1) r = ({t})(r * b); b = ({t})(b * b); e >>= 1; }} return r; }}")
        return f"{self.helper(name, body)}({a}, {b})"

    def escape_call(self, fn: str, d: DType, at: float, x: str) -> str:
        """A call of libm's `fn` for an x of magnitude `at` or more, inf or nan (the others get 0,
        which the decomposition never selects: transcendentals.escape). gcc vectorises a loop
        calling it: the function is declared `simd`, and its vector versions (the x86 vector
        function ABI's names, for SSE2, AVX, AVX2 and AVX-512 vectors) test all lanes at once and
        call the scalar version lane by lane only when a lane needs it."""
        t, lit, name = c_type(d), c_literal(at, d), f"lz_escape_{fn}"
        lines = ["#include <immintrin.h>", f'__attribute__((used, visibility("hidden"))) {escape_scalar(fn, d, at, name + "_1")}',
                 f'__asm__(".globl {name}\\n.hidden {name}\\n.set {name}, {name}_1");',   # no body: gcc clones nothing
                 f'__attribute__((simd("notinbranch"), const, visibility("hidden"))) {t} {name}({t} x);']
        sfx = "ps" if d is dtypes.float32 else "pd"
        for isa, feature, width in (("b", "sse2", 128), ("c", "avx", 256), ("d", "avx2", 256), ("e", "avx512f", 512)):
            v, p, n = f"__m{width}{'' if d is dtypes.float32 else 'd'}", f"_mm{'' if width == 128 else width}", width // 8 // d.itemsize
            if width == 512:
                outside = f"_mm512_cmp_{sfx}_mask(_mm512_abs_{sfx}(x), _mm512_set1_{sfx}({lit}), _CMP_NLT_UQ)"
            else:
                ax = f"{p}_andnot_{sfx}({p}_set1_{sfx}(-0.0), x)"
                cmp = (f"_mm_cmpnlt_{sfx}({ax}, _mm_set1_{sfx}({lit}))" if width == 128 else
                       f"{p}_cmp_{sfx}({ax}, {p}_set1_{sfx}({lit}), _CMP_NLT_UQ)")
                outside = f"{p}_movemask_{sfx}({cmp})"
            lines.append(f'__attribute__((target("{feature}"), visibility("hidden"))) {v} _ZGV{isa}N{n}v_{name}({v} x) {{ '
                         f'if (__builtin_expect(!{outside}, 1)) return x; {t} v[{n}]; __builtin_memcpy(v, &x, sizeof v); '
                         f'for (int i = 0; i < {n}; i++) v[i] = {name}_1(v[i]); __builtin_memcpy(&x, v, sizeof v); return x; }}')
        return f"{self.helper(name, chr(10).join(lines))}({x})"

    def bitcast(self, src: DType, dst: DType, a: str) -> str:
        name = f"lz_bitcast_{src.name}_{dst.name}"
        body = (f"static inline {c_type(dst)} {name}({c_type(src)} x) {{ union {{ {c_type(src)} a; "
                f"{c_type(dst)} b; }} u; u.a = x; return u.b; }}")
        return f"{self.helper(name, body)}({a})"

    # ---- expressions ------------------------------------------------------------------------
    def wrap(self, d: DType, expr: str) -> str:
        """Narrow integers are promoted to int by C: cast back so that they wrap as NumPy's do."""
        return f"(({c_type(d)})({expr}))" if (d.is_int and d.itemsize < 4) or d.is_bool else expr

    def alu(self, u: UOp, a: list[str]) -> str:
        op, d = u.op, u.dtype
        sd = u.src[0].dtype if u.src else d
        if isinstance(d, dtypes.VecDType) or op is Ops.GEP:
            return self.vector(u, a)
        if op is Ops.WHERE:
            if (d.is_float or d.is_int) and d.itemsize >= 4 and not isinstance(d, dtypes.PtrDType):
                return self.select(d, a[0], a[1], a[2])
            if d.is_bool:
                return f"(({a[0]} & {a[1]}) | (!{a[0]} & {a[2]}))"
            return f"({a[0]} ? {a[1]} : {a[2]})"
        if op is Ops.MULACC:
            if d.is_float:   # (only stage 18's approximations make float ones: rounded once)
                return f"{self.fma_function(d)}({a[0]}, {a[1]}, {a[2]})"
            return self.wrap(d, f"({a[0]} * {a[1]} + {a[2]})")
        if op is Ops.CAST:
            if d.is_bool:
                return f"({a[0]} != 0)"
            return f"(({c_type(d)})({a[0]}))"
        if op is Ops.BITCAST:
            return self.bitcast(sd, d, a[0])
        if sd.is_float and op in MATH_FUNCTIONS:
            fn = MATH_FUNCTIONS[op] + ("f" if sd is dtypes.float32 else "")
            if is_escape(u):
                return self.escape_call(fn, d, u.arg[1], a[0])
            return f"{fn}({', '.join(a)})"
        if op in (Ops.MAX, Ops.MIN):
            if sd.is_bool:
                return f"({a[0]} {'|' if op is Ops.MAX else '&'} {a[1]})"
            return self.minmax(d, a[0], a[1], op is Ops.MAX)
        if op is Ops.NEG:
            return f"(!{a[0]})" if d.is_bool else self.wrap(d, f"(-{a[0]})")
        if op is Ops.NOT:
            return f"(!{a[0]})" if d.is_bool else self.wrap(d, f"(~{a[0]})")
        if op is Ops.RECIP:
            return f"({c_literal(1.0, d)} / {a[0]})"
        if op is Ops.ABS:
            return a[0] if d.is_unsigned or d.is_bool else self.wrap(d, f"({a[0]} < 0 ? -{a[0]} : {a[0]})")
        if op in (Ops.IDIV, Ops.MOD):
            c = u.src[1]
            if c.op is Ops.CONST and (c.arg > 0 or (c.arg < -1)):
                return self.wrap(d, f"({a[0]} {'/' if op is Ops.IDIV else '%'} {a[1]})")
            return self.int_div(d, a[0], a[1], op is Ops.MOD)
        if op in (Ops.SHL, Ops.SHR):
            c = u.src[1]
            if c.op is Ops.CONST and 0 <= c.arg < d.bits and (op is Ops.SHR or d.is_unsigned):
                return self.wrap(d, f"({a[0]} {'<<' if op is Ops.SHL else '>>'} {a[1]})")
            if c.op is Ops.CONST and 0 <= c.arg < d.bits and d in UNSIGNED_OF:
                return self.wrap(d, f"(({c_type(d)})(({UNSIGNED_OF[d]}){a[0]} << {a[1]}))")
            return self.shift(d, a[0], a[1], op is Ops.SHL)
        if op is Ops.POW:
            return self.int_pow(d, a[0], a[1])
        if op in INFIX:
            expr = f"({a[0]} {INFIX[op]} {a[1]})"
            return expr if op in GroupOp.Comparison else self.wrap(d, expr)
        raise NotImplementedError(f"the C renderer has no {op.name} for {d}")

    def vector(self, u: UOp, a: list[str]) -> str:
        """gcc vector extensions: VECTORIZE is a compound literal, GEP of one lane a subscript, and
        the arithmetic operators act lane by lane, a CAST to a float vector converts lane by lane
        (`__builtin_convertvector`). Other ops on vectors are not rendered yet."""
        for x in (u, *u.src):
            if isinstance(x.dtype, dtypes.VecDType):
                self.helper(c_type(x.dtype), vector_typedef(x.dtype))
        if u.op is Ops.VECTORIZE:
            return f"(({c_type(u.dtype)}){{{', '.join(a)}}})"
        if u.op is Ops.GEP and len(u.arg) == 1:
            return f"({a[0]}[{u.arg[0]}])"
        if u.op in (Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.AND, Ops.OR, Ops.XOR):
            return f"({a[0]} {INFIX[u.op]} {a[1]})"
        if u.op is Ops.NEG:
            return f"(-{a[0]})"
        if u.op is Ops.CAST and u.dtype.is_float and u.dtype.count == u.src[0].dtype.count:
            return f"__builtin_convertvector({a[0]}, {c_type(u.dtype)})"
        if u.op in (Ops.MAX, Ops.MIN) and u.dtype.is_float:
            return self.vector_minmax(u.dtype, a[0], a[1], u.op is Ops.MAX)
        raise NotImplementedError(f"the C renderer has no {u.op.name} for {u.dtype}")

    def vector_minmax(self, d: DType, a: str, b: str, is_max: bool) -> str:
        """Lane-wise MAX/MIN of float vectors that propagates NaN: a blend by the lane mask
        (a != a) | (a > b), as the scalar helper."""
        mask = dtypes.int64 if d.scalar.itemsize == 8 else dtypes.int32
        m = mask.vec(d.count)
        self.helper(c_type(m), vector_typedef(m))
        t, mt = c_type(d), c_type(m)
        name = f"lz_{'max' if is_max else 'min'}_{d.name}"
        body = (f"static inline {t} {name}({t} a, {t} b) {{ {mt} m = (a != a) | (a {'>' if is_max else '<'} b); "
                f"return ({t})((({mt})a & m) | (({mt})b & ~m)); }}")
        return f"{self.helper(name, body)}({a}, {b})"

    # whether scalar accumulator updates fuse too (OpenCL's: a work-item's reduction is scalar)
    scalar_fused_accumulation = False

    def fused_accumulation(self, u: UOp, users: dict[UOp, list[UOp]]) -> UOp | None:
        """The MUL of acc + a·b on float vectors (or scalars: `scalar_fused_accumulation`) that an
        accumulator update adds (and nothing else reads): reductions (matmul's register tile)
        accumulate with a fused multiply-add. Their sums change order anyway (lanes,
        accumulators), as BLAS's do; other arithmetic never fuses, so elementwise results stay
        NumPy's bit for bit."""
        if u.op is not Ops.ADD or (u.dtype.count == 1 and not self.scalar_fused_accumulation) or not u.dtype.is_float or \
                not any(s.op is Ops.DEFINE_ACC for s in u.src) or [x.op for x in users[u]] != [Ops.ASSIGN]:
            return None
        mul = next((s for s in u.src if s.op is Ops.MUL), None)
        return mul if mul is not None and len(users.get(mul, ())) == 1 else None

    @staticmethod
    def lane_sum(u: UOp) -> UOp | None:
        """The float vector v whose lanes the scalar ADD tree u sums, each once (a vectorised
        reduction's accumulator summed across its lanes after the loop: opts' `combine` of its
        GEPs). Rendered by halving the vector (`vector_lane_sum`): lane extracts and scalar adds
        cost matmul's small-k tile more than its loop (x @ W.T with k = 64: 21 -> 14 us)."""
        if u.op is not Ops.ADD or u.dtype.count != 1 or not u.dtype.is_float:
            return None
        leaves, stack = [], [u]
        while stack:
            x = stack.pop()
            if x.op is Ops.ADD and x.dtype is u.dtype:
                stack += [x.src[1], x.src[0]]
            elif x.op is Ops.GEP and len(x.arg) == 1 and len(leaves) < 16:
                leaves.append(x)
            else:
                return None
        v = leaves[0].src[0]
        n = v.dtype.count
        ok = n in (4, 8, 16) and len(leaves) == n and all(g.src[0] is v and g.arg == (i,) for i, g in enumerate(leaves))
        return v if ok else None

    def vector_lane_sum(self, d: DType, v: str) -> str:
        """The sum of vector v's lanes: halves added lane by lane down to 16 bytes (one SSE
        register), then the lanes of that register swapped and added."""
        self.helper(c_type(d), vector_typedef(d))
        t, name = c_type(d), f"lz_lane_sum_{d.name}"
        if d.itemsize > 16:
            half = d.scalar.vec(d.count // 2)
            self.helper(c_type(half), vector_typedef(half))
            h, size = c_type(half), half.itemsize
            body = (f"static inline {c_type(d.scalar)} {name}({t} v) {{ {h} lo, hi; __builtin_memcpy(&lo, &v, {size}); "
                    f"__builtin_memcpy(&hi, (char*)&v + {size}, {size}); return {self.vector_lane_sum(half, 'lo + hi')}; }}")
        else:
            mask = (dtypes.int64 if d.scalar.itemsize == 8 else dtypes.int32).vec(d.count)
            self.helper(c_type(mask), vector_typedef(mask))
            steps, width = [], d.count // 2
            while width:   # lane i += lane i ^ width
                steps.append(f"v = v + __builtin_shuffle(v, ({c_type(mask)}){{{', '.join(str(i ^ width) for i in range(d.count))}}});")
                width //= 2
            body = f"static inline {c_type(d.scalar)} {name}({t} v) {{ {' '.join(steps)} return v[0]; }}"
        return f"{self.helper(name, body)}({v})"

    def fma_function(self, d: DType) -> str:
        """The C function computing a·b + c rounded once (gcc's builtin: an instruction)."""
        return "__builtin_fmaf" if d is dtypes.float32 else "__builtin_fma"

    def vector_fma(self, d: DType, a: str, b: str, c: str) -> str:
        """a·b + c rounded once, lane by lane: gcc's x86 FMA builtins where the target has them
        (the intrinsics' header alone costs ~0.3 s of compile time), a·b + c elsewhere."""
        self.helper(c_type(d), vector_typedef(d))
        t, name = c_type(d), f"lz_fma_{d.name}"
        single = d.scalar.itemsize == 4
        fused = {32: ("__FMA__", f"__builtin_ia32_vfmadd{'ps' if single else 'pd'}256(a, b, c)"),
                 64: ("__AVX512F__", f"__builtin_ia32_vfmadd{'ps' if single else 'pd'}512_mask(a, b, c, "
                                     f"({'unsigned short' if single else 'unsigned char'})-1, 4)")}.get(d.itemsize)
        if fused is None:
            body = f"static inline {t} {name}({t} a, {t} b, {t} c) {{ return a * b + c; }}"
        else:
            body = (f"static inline {t} {name}({t} a, {t} b, {t} c) {{\n#if defined({fused[0]}) && defined(__GNUC__)\n"
                    f"  return {fused[1]};\n#else\n  return a * b + c;\n#endif\n}}")
        return f"{self.helper(name, body)}({a}, {b}, {c})"

    def vector_load(self, d: DType, address: str) -> str:
        """Lanes of type d read from consecutive elements at `address` (any alignment)."""
        self.helper(c_type(d), vector_typedef(d))
        t, name = c_type(d), f"lz_load_{d.name}"
        body = (f"static inline {t} {name}(const {c_type(d.scalar)}* p) {{ {t} v; "
                f"__builtin_memcpy(&v, p, sizeof v); return v; }}")
        return f"{self.helper(name, body)}({address})"

    def vector_store(self, d: DType, address: str, value: str) -> str:
        """Lanes of `value` (type d) written to consecutive elements at `address`."""
        self.helper(c_type(d), vector_typedef(d))
        t, name = c_type(d), f"lz_store_{d.name}"
        body = (f"static inline void {name}({c_type(d.scalar)}* p, {t} v) {{ "
                f"__builtin_memcpy(p, &v, sizeof v); }}")
        return f"{self.helper(name, body)}({address}, {value})"

    # ---- loops ------------------------------------------------------------------------------
    def loop_pragmas(self, program: list[UOp]) -> dict[UOp, str]:
        """OpenMP pragmas for loops (formatted with the names of the accumulators a loop updates):
        the outermost loop over the output is split across `settings.threads` threads when the
        kernel does enough work to pay for them (how many threads is the launch's last argument,
        `lz_threads`: the runtime passes fewer while other processes keep the cores busy); an
        innermost loop that sums into a float
        accumulator may reassociate the sum (`omp simd reduction`), so that it vectorises. Loops that
        update a private array (`ordered_loops`) get neither."""
        out: dict[UOp, str] = {}
        ordered = ordered_loops(program)
        store_ranges = frozenset().union(*(u.ranges for u in program if u.op is Ops.STORE))
        # (a library call counts as what it costs: a sin of float64 is ~30 operations, not one)
        work = sum(run_count(u) * u.dtype.count * op_cost(u.op) for u in program
                   if u.op in GroupOp.ALU or u.op in (Ops.LOAD, Ops.STORE))
        elementwise = not any(u.op is Ops.DEFINE_ACC for u in program)
        depth = 0
        for i, u in enumerate(program):
            if u.op is Ops.RANGE and u in ordered:
                depth += 1
            elif u.op is Ops.RANGE:
                size = u.src[0].arg if u.src[0].op is Ops.CONST else 0
                if depth == 0 and u in store_ranges and settings.threads > 1 and size >= settings.threads and \
                        work >= PARALLEL_MIN_WORK:
                    out[u] = "#pragma omp parallel for num_threads(lz_threads) schedule(static)"
                accs = [a for a in u.src if a.op is Ops.DEFINE_ACC]
                if accs and self._innermost(program, i) and all(self._sums_floats(program, a) for a in accs):
                    out[u] = "#pragma omp simd " + " ".join("reduction(+:{})" for _ in accs)
                elif elementwise and u not in out and self._innermost(program, i):
                    # an element is stored once and loaded (where an output took an input's storage)
                    # only at its own index: no iteration depends on another's memory. gcc cannot
                    # tell for many arguments (one check per pair) and would not vectorise
                    out[u] = "#pragma GCC ivdep"
                depth += 1
            elif u.op is Ops.END:
                depth -= 1
        return out

    @staticmethod
    def _innermost(program: list[UOp], i: int) -> bool:
        for u in program[i + 1:]:
            if u.op is Ops.RANGE:
                return False
            if u.op is Ops.END and u.src[1] is program[i]:
                return True
        return False

    @staticmethod
    def _sums_floats(program: list[UOp], acc: UOp) -> bool:
        updates = [u for u in program if u.op is Ops.ASSIGN and u.src[0] is acc]
        return acc.dtype.is_float and acc.dtype.count == 1 and all(v.src[1].op is Ops.ADD and acc in v.src[1].src for v in updates)

    # ---- the kernel -------------------------------------------------------------------------
    def render(self, name: str, program: list[UOp], arguments: tuple[int, ...] | None = None) -> str:
        """The kernel's source. `arguments`: how many buffers, sizes and scalars the launch passes
        (the rangeified kernel's SINK says), which can be more than the program reads once
        simplification has dropped a load. In C the sizes, the scalars, then the thread count follow
        the buffers' addresses, one word each."""
        self.helpers = {}
        users: dict[UOp, list[UOp]] = {u: [] for u in program}
        for u in program:
            for s in u.src:
                if s in users:
                    users[s].append(u)
        names: dict[UOp, str] = {}
        nesting: dict[UOp, int] = {}   # an inlined expression → how many inlined expressions it nests
        counters: dict[str, int] = {}
        params: list[str] = []
        lines: list[str] = []
        depth = 1

        def fresh(prefix: str) -> str:
            counters[prefix] = counters.get(prefix, 0) + 1
            return f"{prefix}{counters[prefix] - 1}"

        def ref(u: UOp) -> str:
            if u.op is Ops.CONST:
                return c_literal(u.arg, u.dtype)
            return names[u]

        def emit(line: str) -> None:
            lines.append("  " * depth + line)

        pragmas = self.loop_pragmas(program)
        buffers = arguments[0] if arguments is not None else \
            1 + max((u.arg for u in program if u.op is Ops.DEFINE_GLOBAL), default=-1)

        for u in program:
            op = u.op
            if op is Ops.DEFINE_GLOBAL:
                names[u] = f"data{u.arg}"
                params.append(self.param(u))
            elif op is Ops.CONST:
                names[u] = c_literal(u.arg, u.dtype)
            elif op is Ops.RANGE:
                names[u] = f"r{u.arg}"
                if u in pragmas:
                    emit(pragmas[u].format(*(names[a] for a in u.src if a.op is Ops.DEFINE_ACC)))
                emit(self.open_range(u, ref(u.src[0])))
                depth += 1
            elif op is Ops.END:
                for line in self.close_range(u.src[1]):
                    emit(line)
                depth -= 1
                emit("}")
            elif op is Ops.DEFINE_VAR and is_size_var(u):
                names[u] = u.arg[0]
                if line := self.size_param(u, buffers):
                    params.append(line)
            elif op is Ops.DEFINE_VAR and is_scalar_var(u):
                names[u] = u.arg[0]
                if line := self.scalar_param(u, buffers + (arguments[1] if arguments else 0)):
                    params.append(line)
            elif op in (Ops.DEFINE_VAR, Ops.DEFINE_LOCAL, Ops.BARRIER):
                names[u], line = self.work_group(u)
                if line:
                    emit(line)
            elif op is Ops.IF:
                emit(f"if ({ref(u.src[0])}) {{")
                depth += 1
            elif op is Ops.ENDIF:
                depth -= 1
                emit("}")
            elif op is Ops.INDEX:
                names[u] = f"{ref(u.src[0])}[{ref(u.src[1])}]"
            elif op is Ops.STORE and u.src[1].dtype.count > 1:
                emit(self.vector_store(u.src[1].dtype, f"&{ref(u.src[0])}", ref(u.src[1])) + ";")
            elif op is Ops.STORE:
                ix = u.src[0]
                emit(self.store_element(ix.dtype.base, ref(ix.src[0]), ref(ix.src[1]), ref(u.src[1])))
            elif op is Ops.DEFINE_REG:
                names[u] = f"reg{u.arg[0]}"
                emit(f"{c_type(u.dtype.base)} {names[u]}[{u.arg[1]}];")
            elif op is Ops.DEFINE_ACC:
                names[u] = fresh("acc")
                emit(f"{c_type(u.dtype)} {names[u]} = {ref(u.src[0])};")
            elif op is Ops.ASSIGN:
                emit(f"{ref(u.src[0])} = {ref(u.src[1])};")
            elif op is Ops.AFTER:
                names[u] = ref(u.src[0])
            elif op in (Ops.SINK, Ops.NOOP):
                continue
            else:
                if op is Ops.LOAD and not u.src[0].src[-1].is_const(True):
                    # a gated load reads a clamped address unconditionally, then selects: no load
                    # under a condition (see below)
                    ix, gate = u.src[0], ref(u.src[0].src[-1])
                    loaded = fresh("val")
                    emit(f"const {c_type(u.dtype)} {loaded} = "
                         f"{self.load_element(u.dtype, ref(ix.src[0]), f'{gate} ? {ref(ix.src[1])} : 0')};")
                    names[u] = f"({gate} ? {loaded} : {c_literal(0, u.dtype)})"
                    continue
                if op is Ops.LOAD and u.dtype.count > 1:
                    expr = self.vector_load(u.dtype, f"&{names[u.src[0]]}")
                elif op is Ops.LOAD:
                    expr = self.load_element(u.dtype, ref(u.src[0].src[0]), ref(u.src[0].src[1]))
                elif (lanes := self.lane_sum(u)) is not None:
                    expr = self.vector_lane_sum(lanes.dtype, ref(lanes))
                else:
                    mul = self.fused_accumulation(u, users)
                    expr = self.alu(u, [ref(s) for s in u.src]) if mul is None else \
                        self.vector_fma(u.dtype, ref(mul.src[0]), ref(mul.src[1]), ref(u.src[1 - u.src.index(mul)]))
                us = users[u]
                nested = 1 + max((nesting.get(s, 0) for s in u.src), default=0)
                # loads always get a statement of their own: a load inlined into a branch of a
                # ternary is a conditional load, which gcc 12 -O3 -march=native miscompiles; and
                # a long chain is cut into statements (clang, OpenCL's compiler, nests at most 256
                # brackets)
                if op is not Ops.LOAD and not is_escape(u) and len(us) == 1 and us[0].src.count(u) == 1 and \
                        us[0].ranges == u.ranges and us[0].op is not Ops.RANGE and nested <= MAX_NESTING:
                    names[u], nesting[u] = expr, nested
                else:
                    names[u] = fresh("val" if op is Ops.LOAD else "alu")
                    emit(f"const {c_type(u.dtype)} {names[u]} = {expr};")
        if any("lz_threads" in p for p in pragmas.values()):   # the thread count follows the buffers
            words = buffers + (sum(arguments[1:3]) if arguments else 0)   # (after the sizes and scalars)
            params.append(f"  const int lz_threads = (int)args[{words}];")
        head = [*self.prelude(program), *self.helpers.values()]
        return "\n".join(head + self.signature(name, params) + lines + ["}"]) + "\n"

    # ---- syntax hooks (the OpenCL renderer overrides these) ---------------------------------
    def load_element(self, d: DType, buf: str, index: str) -> str:
        """The expression reading element `index` of buffer `buf` (of elements of dtype d)."""
        return f"{buf}[{index}]"

    def store_element(self, d: DType, buf: str, index: str, value: str) -> str:
        """The statement writing `value` into element `index` of buffer `buf`."""
        return f"{buf}[{index}] = {value};"

    def prelude(self, program: list[UOp]) -> list[str]:
        return ["#include <stdint.h>", "#include <stdbool.h>", "#include <math.h>"]

    def param(self, g: UOp) -> str:
        """The line that names kernel argument `g` (a DEFINE_GLOBAL)."""
        return f"  {c_type(g.dtype)} restrict data{g.arg} = ({c_type(g.dtype)})args[{g.arg}];"

    def size_param(self, var: UOp, buffers: int) -> str:
        """The line that reads size argument `var` (the words after the buffers' addresses), if any."""
        return f"  const int64_t {var.arg[0]} = (int64_t)args[{buffers + size_var_index(var)}];"

    def scalar_param(self, var: UOp, first: int) -> str:
        """The line that reads scalar argument `var`: the words after the sizes (`first` is the
        first), a float as its float64 bits, an integer as its int64 value."""
        word = f"args[{first + scalar_var_index(var)}]"
        t = c_type(var.dtype)
        if var.dtype.is_float:
            f64 = self.helper("lz_word_f64", "static inline double lz_word_f64(uintptr_t w) "
                                             "{ union { uintptr_t w; double d; } u; u.w = w; return u.d; }")
            return f"  const {t} {var.arg[0]} = ({t}){f64}({word});"
        return f"  const {t} {var.arg[0]} = ({t})(int64_t){word};"

    def signature(self, name: str, params: list[str]) -> list[str]:
        return [f"void {name}(const uintptr_t* restrict args) {{", *params]

    def open_range(self, r: UOp, size: str) -> str:
        return f"for (int64_t r{r.arg} = 0; r{r.arg} < {size}; r{r.arg}++) {{"

    def close_range(self, r: UOp) -> list[str]:
        """Lines at the end of loop r's body."""
        return []

    def work_group(self, u: UOp) -> tuple[str, str]:
        """The name and the line of a work-group op (group reductions): C has none."""
        raise NotImplementedError(f"the C renderer has no {u.op.name}")


def escape_scalar(fn: str, d: DType, at: float, name: str) -> str:
    """The C function `name`: libm's `fn` of x where |x| is `at` or more (or nan), else 0."""
    t = c_type(d)
    return f"{t} {name}({t} x) {{ return fabs{'f' if d is dtypes.float32 else ''}(x) < {c_literal(at, d)} ? 0 : {fn}(x); }}"


class FastCRenderer(CRenderer):
    """C for the fast compiler's first tier (tcc), which inlines nothing: selects and float
    min/max as macros over ?:, since a blend through memcpy costs tcc four calls per element.
    tcc vectorises nothing: a blocked sum keeps the short blocks of a scalar loop, and an escape
    is a plain function."""
    simd_sums = False

    def fma_function(self, d: DType) -> str:
        return "fmaf" if d is dtypes.float32 else "fma"   # (libm's: tcc has no builtin; the same values)

    def escape_call(self, fn: str, d: DType, at: float, x: str) -> str:
        name = f"lz_escape_{fn}"
        return f"{self.helper(name, 'static ' + escape_scalar(fn, d, at, name))}({x})"

    def select(self, d: DType, c: str, a: str, b: str) -> str:
        name = f"lz_where_{d.name}"
        return f"{self.helper(name, f'#define {name}(c, a, b) ((c) ? (a) : (b))')}({c}, {a}, {b})"

    def minmax(self, d: DType, a: str, b: str, is_max: bool) -> str:
        if not d.is_float:
            return super().minmax(d, a, b, is_max)
        name = f"lz_{'max' if is_max else 'min'}_{d.name}"
        cmp = ">" if is_max else "<"   # NaN propagates
        body = f"#define {name}(a, b) ((((a) != (a)) | ((a) {cmp} (b))) ? (a) : (b))"
        return f"{self.helper(name, body)}({a}, {b})"
