"""Stage 18's transcendental approximations against NumPy, over millions of points.

Each function is compiled into one C kernel with transcendentals="approx" (sqrt through a C
renderer that declares no SQRT) and run over: every binade of its dtype (random bit patterns,
so subnormals, ±0, ±inf and nan included), uniform samples of the ranges where the function
changes fastest, and a list of special values; float32 (computed in float32 arithmetic, see
lazyarr/compiler/transcendentals.py) also over runs of consecutive floats and the hard cases of
each of its paths: the float32 nearest to multiples of π/2 (the closest to a multiple, where the
reduction cancels most) up to the largest exponents, the overflow and underflow thresholds of
exp, exp2, expm1 and pow and the subnormal results below them, subnormal inputs of log, arguments
next to 1 for log and 0 for log1p and expm1, tanh's change of formula. The distance to NumPy is
counted in ulps (the number of floats between the two results; equal nans are 0 apart).
- float64: within 2 ulp of NumPy everywhere (measured: at most 1);
- float32: within 1 ulp of NumPy's float64 function rounded to float32, the correctly rounded
  result (measured: at most 1, also over all 2^32 float32 inputs for the unary functions:
  bench/transcendentals_exhaustive.py).
  NumPy's own float32 functions (SIMD, SVML) are up to 3 ulp from that reference, so against
  them the bound is NumPy's own error plus one ulp.
- special values (±0, ±inf, nan, the overflow and underflow thresholds) give exactly NumPy's
  result, the sign of a zero or an infinity included.
"""
import re
import warnings

import numpy as np
import pytest

from lazyarr import dtypes
from lazyarr.compiler.codegen import generate
from lazyarr.compiler.render_c import CRenderer
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.runtime.devices import get_device

F32, F64 = dtypes.float32, dtypes.float64
REFERENCE = {Ops.EXP: np.exp, Ops.EXP2: np.exp2, Ops.EXPM1: np.expm1, Ops.LOG: np.log, Ops.LOG2: np.log2,
             Ops.LOG1P: np.log1p, Ops.SIN: np.sin, Ops.COS: np.cos, Ops.TAN: np.tan, Ops.TANH: np.tanh,
             Ops.SQRT: np.sqrt, Ops.POW: np.power}
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, 3.0, -3.0, -0.5, 5e-324, -5e-324,
            2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308, 1e-300, 709.782712893384,
            709.79, -745.13, -745.2, 88.72, 88.73, -103.97, -87.3, 1024.0, -1074.0, -1075.0, 127.9, -149.0,
            -150.0, 1e300, -1e300, 1e-45, 3.4028235e38, 1.1754944e-38, 4194304.0, 1e22, 2.0 ** 60]


class NoSqrtC(CRenderer):
    native_ops = CRenderer.native_ops - {Ops.SQRT}


class NoEscapesC(CRenderer):
    """C as a target without escapes (OpenCL, C off x86-64) sees it: sin, cos and tan reduce every
    argument themselves."""
    escapes = False


class UnfusedC(CRenderer):
    """C for a processor without fused multiply-adds: polynomials and exact products unfused."""
    fused_approximations = False


class _Buffer:
    def __init__(self, a):
        self.storage = a


def compile_elementwise(op: Ops, dt, nargs: int = 1, n: int = 1 << 16, mode: str = "approx", renderer=None,
                        tier: str = "opt"):
    """A function running `op` elementwise over NumPy arrays in a compiled kernel of `n` lanes."""
    idx, true = dtypes.index, UOp.const(dtypes.bool_, True)
    gs = [UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(dt), (), k) for k in range(nargs + 1)]
    r = UOp(Ops.RANGE, idx, (UOp.const(idx, n),), 0)
    loads = [UOp(Ops.LOAD, dt, (UOp(Ops.INDEX, g.dtype, (g, r, true)),)) for g in gs[1:]]
    st = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, gs[0].dtype, (gs[0], r, true)), UOp(op, dt, tuple(loads))))
    sink = UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (st, r)),))
    ks = generate(sink, renderer or CRenderer(), name=f"acc_{op.name.lower()}_{dt}_{mode}", transcendentals=mode)
    prog = get_device("cpu").compile(ks.name, ks.source, tier=tier)

    def run(*xs):
        xs = [np.ascontiguousarray(x, dtype=dt.np) for x in xs]
        out = np.empty(xs[0].size, dt.np)
        chunk_out = np.empty(n, dt.np)
        for s in range(0, out.size, n):
            chunk = [np.resize(x[s:s + n], n) for x in xs]
            prog([_Buffer(chunk_out)] + [_Buffer(c) for c in chunk])
            out[s:s + n] = chunk_out[:min(n, out.size - s)]
        return out
    run.source = ks.source
    return run


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Floats between a and b (0 for equal values, ±0 included, and for two nans; inf for a nan
    against a number)."""
    it = np.int64 if a.dtype == np.float64 else np.int32
    lo = np.iinfo(it).min
    ai, bi = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    ai, bi = np.where(ai < 0, lo - ai, ai), np.where(bi < 0, lo - bi, bi)
    d = np.abs(ai - bi).astype(np.float64)
    d[np.isnan(a) & np.isnan(b)] = 0
    d[np.isnan(a) != np.isnan(b)] = np.inf
    return d


def specials(dt) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.array(SPECIALS, dtype=dt.np)        # float64 values out of float32's range: ±inf


def points(dt, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    it, ft = (np.uint64, np.float64) if dt is F64 else (np.uint32, np.float32)
    parts = [rng.integers(0, np.iinfo(it).max, n, dtype=it, endpoint=True).view(ft),
             specials(dt), (1 + rng.uniform(-1e-3, 1e-3, n // 8)).astype(ft),
             rng.uniform(-1, 0, n // 8).astype(ft)]
    parts += [rng.uniform(-a, a, n // 4).astype(ft) for a in (1, 4, 40, 800, 1e5, 1e10)]
    return np.concatenate(parts)


def pow_points(dt, n: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    ft = dt.np.type
    xs = points(dt, n, seed)
    ys = np.concatenate([rng.uniform(-4, 4, xs.size // 2), rng.integers(-40, 40, xs.size - xs.size // 2)]).astype(ft)
    rng.shuffle(ys)
    sp = specials(dt)
    gx, gy = np.meshgrid(sp, sp)
    # moderate bases with large exponents: |y·log2 x| past the overflow and underflow thresholds
    xb = rng.uniform(0.5, 2, n // 2).astype(ft)
    yb = (rng.uniform(-1, 1, n // 2) * (1000 if dt is F64 else 160) / np.log2(xb.astype(np.float64))).astype(ft)
    return np.concatenate([xs, gx.ravel(), xb]), np.concatenate([ys, gy.ravel(), yb])


def consecutive(start: float, count: int) -> np.ndarray:
    """`count` consecutive float32 from `start` upward."""
    b = np.float32(start).view(np.int32)
    return (b + np.arange(count, dtype=np.int32)).view(np.float32)


def hard_points32(op: Ops, n: int, seed: int = 2) -> np.ndarray:
    """The float32 arguments where `op`'s float32 path is closest to failing, and runs of
    consecutive floats through the ranges it treats differently."""
    rng = np.random.default_rng(seed)
    if op in (Ops.SIN, Ops.COS, Ops.TAN):
        # the float32 nearest to k·π/2 and its neighbours, k up to 2^20, then the same multiples
        # scaled by every power of two up to float32's largest exponent
        k = np.concatenate([np.arange(1, 1 << 16), rng.integers(1 << 16, 1 << 20, n // 16)])
        near = (k * (np.pi / 2)).astype(np.float32)
        near = np.concatenate([near, np.nextafter(near, np.float32(0)), np.nextafter(near, np.float32(np.inf))])
        big = np.ldexp(rng.uniform(0.5, 1, n // 4), rng.integers(20, 128, n // 4)).astype(np.float32)
        parts = [near, -near, big, consecutive(0.7, n // 8), consecutive(2.0 ** -13, n // 16)]
    elif op in (Ops.EXP, Ops.EXP2, Ops.EXPM1, Ops.TANH):
        hi = {Ops.EXP: 88.72, Ops.EXPM1: 88.72, Ops.EXP2: 127.99, Ops.TANH: 9.0}[op]
        lo = {Ops.EXP: -103.9, Ops.EXPM1: -17.3, Ops.EXP2: -149.5, Ops.TANH: 0.549}[op]   # crossing to 0 or -1
        parts = [consecutive(hi, n // 16), -consecutive(-lo, n // 16), rng.uniform(lo, hi, n // 4),
                 consecutive(-0.35, n // 8), consecutive(2.0 ** -26, n // 8), -consecutive(2.0 ** -26, n // 8)]
        if op is Ops.EXP:
            parts.append(-consecutive(87.3, n // 8))          # subnormal results
        if op is Ops.TANH:
            parts += [consecutive(0.5, n // 8), consecutive(8.5, n // 16)]
    elif op in (Ops.LOG, Ops.LOG2, Ops.LOG1P):
        parts = [consecutive(0.70, n // 8), consecutive(1.41, n // 8), consecutive(1e-45, n // 8),
                 rng.uniform(-1, 1e4, n // 8)]
        if op is Ops.LOG1P:                                 # next to 0 and to −1
            parts += [consecutive(2.0 ** -30, n // 8), -consecutive(2.0 ** -30, n // 8), -consecutive(0.99999, n // 16)]
        else:                                               # through 1
            parts += [consecutive(1.0 - 2.0 ** -10, n // 4)]
    else:                                                   # sqrt
        parts = [consecutive(1.0, n // 4), consecutive(1e-45, n // 8), consecutive(3e38, n // 8)]
    return np.concatenate([p.astype(np.float32) for p in parts])


N = 600_000
N32 = 2_000_000
TRIG = (Ops.SIN, Ops.COS, Ops.TAN)
CASES = [(op, dt, escapes) for op in REFERENCE for dt in (F32, F64)
         for escapes in ((True, False) if op in TRIG and CRenderer.escapes else (CRenderer.escapes,))]


def _calls(source: str, name: str) -> bool:
    """Whether the kernel calls libm's `name` (float or double) outside its escape helpers."""
    body = "\n".join(line for line in source.splitlines() if "lz_escape_" not in line or "=" in line.split("(")[0])
    return re.search(rf"(?<![\w]){name}f?\(", body) is not None


@pytest.mark.parametrize("op,dt,escapes", CASES,
                         ids=[f"{op.name.lower()}-{dt}{'-escapes' if e else ''}" for op, dt, e in CASES])
def test_approximation_within_2_ulp_of_numpy(op, dt, escapes):
    """Every argument kind, on the target as it is and, for sin, cos and tan on x86-64, also
    without escapes (the branch-free reduction of every argument OpenCL gets): large arguments
    then go to libm with escapes, and the bounds hold either way."""
    fn = REFERENCE[op]
    if op is Ops.POW:
        args = pow_points(dt, (N32 if dt is F32 else N) // 2)
    elif dt is F32:
        args = (np.concatenate([points(dt, N32 // 2), hard_points32(op, N32 // 2)]),)
    else:
        args = (points(dt, N),)
    renderer = NoSqrtC() if op is Ops.SQRT else (CRenderer() if escapes else NoEscapesC())
    kernel = compile_elementwise(op, dt, nargs=len(args), renderer=renderer,
                                 mode="native" if op is Ops.SQRT else "approx")
    name = "sqrt" if op is Ops.SQRT else fn.__name__.replace("power", "pow")
    assert not _calls(kernel.source, name)
    assert ("lz_escape_" in kernel.source) is (escapes and op in TRIG)
    if dt is F32:       # computed in float32 (pow: its core in float64; sin, cos and tan too without FMA or escapes)
        in_float64 = (Ops.POW,) if escapes and renderer.fused_approximations else (Ops.POW, Ops.SIN, Ops.COS, Ops.TAN)
        assert ("double" in kernel.source) is (op in in_float64)
    got = kernel(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        numpy_direct = fn(*args)
        numpy_f64 = fn(*(a.astype(np.float64) for a in args)).astype(dt.np)
    reference = numpy_f64 if dt is F32 else numpy_direct
    d = ulp_distance(got, reference)
    worst = int(np.argmax(d))
    assert d.max() <= (1 if dt is F32 else 2), (f"{op.name} {dt}: {d.max()} ulp at {[a[worst] for a in args]}: got "
                                                f"{got[worst]!r}, NumPy {reference[worst]!r}")
    if dt is F32:
        numpy_own = ulp_distance(numpy_direct, numpy_f64).max()
        assert ulp_distance(got, numpy_direct).max() <= numpy_own + 1
    # special values: exactly NumPy's result, signs of zeros and infinities included
    special = np.isin(args[0], specials(dt)) | np.isnan(args[0])
    exact = special & ((reference == 0) | np.isinf(reference))
    np.testing.assert_array_equal(got[exact], reference[exact])
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(reference[exact]))
    assert np.array_equal(np.isnan(got[special]), np.isnan(reference[special]))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("fn", ["sin", "cos", "tan"])
def test_large_arguments_among_small_ones_through_the_array_api(fn, dt):
    """Arrays whose vectors mix arguments the approximation reduces with ones it leaves to libm
    (2^20 and up for float32, 2^22 for float64, inf, nan), one in seven or one alone, made by
    asarray and by arithmetic in the graph; elementwise and summed, on the first tier's kernel and
    on the optimised one, against NumPy's float64 function."""
    import lazyarr as xp
    from lazyarr.runtime.cpu_compiler import wait_for_optimised
    rng = np.random.default_rng(7)
    small = rng.uniform(-4, 4, 4099)
    mixed = small.copy()
    mixed[::7] = rng.uniform(-1, 1, mixed[::7].size) * 2.0 ** rng.integers(20, 100, mixed[::7].size)
    alone = small.copy()
    alone[2049] = 3.0e9
    ref = getattr(np, fn)
    for values in (mixed.astype(dt), alone.astype(dt), np.array([np.inf, -np.inf, np.nan, 1e30, -0.0, 0.5], dt)):
        want = ref(values.astype(np.float64)).astype(dt)
        for made in (lambda: xp.asarray(values), lambda: xp.asarray(values * 0.5) * 2.0):   # (exact: powers of 2)
            got = [getattr(xp, fn)(made()).numpy() for _ in range(3)]
            wait_for_optimised()
            got.append(getattr(xp, fn)(made()).numpy())
            for g in (got[0], got[-1]):
                assert np.array_equal(np.isnan(g), np.isnan(want))
                d = ulp_distance(g, want)
                assert d.max() <= (1 if dt is np.float32 else 2), (fn, values[np.argmax(d)])
        total = float(xp.sum(getattr(xp, fn)(xp.asarray(values))))
        if np.isfinite(want).all():
            np.testing.assert_allclose(total, want.astype(np.float64).sum(), rtol=1e-5, atol=1e-5)


FUSED_CASES = [(op, dt) for op in (Ops.EXP, Ops.EXPM1, Ops.LOG, Ops.LOG2, Ops.SIN, Ops.TAN, Ops.TANH, Ops.POW)
               for dt in (F32, F64)]


@pytest.mark.parametrize("op,dt", FUSED_CASES, ids=[f"{op.name.lower()}-{dt}" for op, dt in FUSED_CASES])
def test_fused_multiply_adds_keep_the_bounds_and_both_tiers_agree(op, dt):
    """Where the processor has FMA (x86-64 with it: `fused_approximations`), the approximations'
    polynomials and exact products use it; the first tier's compiler calls libm's fma, which
    rounds as the instruction does, so both tiers give the same bits. Without FMA (a renderer that
    says so) the unfused graphs keep the same bounds."""
    from lazyarr.runtime.cpu import fast_compiler_available
    fn = REFERENCE[op]
    args = pow_points(dt, 100_000) if op is Ops.POW else \
        (np.concatenate([points(dt, 100_000), hard_points32(op, 100_000)]) if dt is F32 else points(dt, 200_000),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = fn(*(a.astype(np.float64) for a in args)).astype(dt.np) if dt is F32 else fn(*args)
    bound = 1 if dt is F32 else 2
    unfused = compile_elementwise(op, dt, nargs=len(args), renderer=UnfusedC())
    assert "fma" not in unfused.source
    assert ulp_distance(unfused(*args), reference).max() <= bound
    if not CRenderer.fused_approximations:
        return
    fused = compile_elementwise(op, dt, nargs=len(args))
    assert "__builtin_fma" in fused.source
    got = fused(*args)
    assert ulp_distance(got, reference).max() <= bound
    if fast_compiler_available("tcc"):
        from lazyarr.compiler.render_c import FastCRenderer
        first_tier = compile_elementwise(op, dt, nargs=len(args), renderer=FastCRenderer(), tier="fast")
        assert "fma" in first_tier.source and "__builtin_fma" not in first_tier.source
        theirs, nan = first_tier(*args), np.isnan(got)   # (bits: a NaN's sign is the compiler's)
        np.testing.assert_array_equal(theirs[~nan].view(f"u{dt.itemsize}"), got[~nan].view(f"u{dt.itemsize}"))
        assert np.isnan(theirs[nan]).all()
