"""Stage 18, decompositions, in the order of its docstring: rules on every target, integer ops a
target lacks (unit tests, then compiled by a C renderer that declares no IDIV, MOD or MUL),
MULACC, exact reciprocals, transcendentals; and LAZYARR_DEBUG=3's per-stage report."""
import re

import numpy as np
import pytest

import lazyarr as xp
from lazyarr import dtypes, settings
from lazyarr.compiler.codegen import generate
from lazyarr.compiler.decompositions import Target, decompose, fast_div, magic
from lazyarr.compiler.render_c import CRenderer
from lazyarr.compiler.uop import GroupOp, Ops, UOp
from lazyarr.runtime.devices import get_device
from tests.helpers import evaluate

i32, i64, f32 = dtypes.int32, dtypes.int64, dtypes.float32
FULL = Target(frozenset(GroupOp.ALU))
LACKING = Target(frozenset(GroupOp.ALU - {Ops.IDIV, Ops.MOD, Ops.MUL, Ops.OR, Ops.FDIV}))


def var(name, lo, hi, d=i32):
    return UOp(Ops.DEFINE_VAR, d, (), (name, lo, hi))


def ops(u):
    return {x.op for x in u.toposort()}


def test_times_minus_one_is_neg_on_every_target():
    x = var("x", -100, 100)
    assert decompose(x * -1, FULL) is x.alu(Ops.NEG)


def test_de_morgan_toward_fewer_nots():
    a, b = var("a", 0, 1, dtypes.bool_), var("b", 0, 1, dtypes.bool_)
    assert decompose(a.alu(Ops.NOT) & b.alu(Ops.NOT), FULL) is (a | b).alu(Ops.NOT)
    assert decompose(a.alu(Ops.NOT) | b.alu(Ops.NOT), FULL) is (a & b).alu(Ops.NOT)


def test_de_morgan_the_other_way_where_or_is_missing():
    a, b = var("a", 0, 1, dtypes.bool_), var("b", 0, 1, dtypes.bool_)
    out = decompose(a | b, LACKING)
    assert Ops.OR not in ops(out) and out.op is Ops.NOT


def test_negated_integer_comparisons():
    x = var("x", -100, 100)
    assert decompose(x.lt(5).alu(Ops.NOT), FULL) is UOp.const(i32, 4).lt(x)
    assert decompose(UOp.const(i32, 5).lt(x).alu(Ops.NOT), FULL) is x.lt(6)


def test_power_of_two_mod_mul_div_where_the_target_lacks_them():
    x = var("x", 0, 1000)
    assert decompose(x % 8, LACKING) is x & 7
    assert decompose(x * 16, LACKING) is x.alu(Ops.SHL, UOp.const(i32, 4))
    assert decompose(x // 8, LACKING) is x.alu(Ops.SHR, UOp.const(i32, 3))
    # a dividend that may be negative gets the bias that makes the shift truncate
    y = var("y", -1000, 1000)
    biased = decompose(y // 8, LACKING)
    assert Ops.IDIV not in ops(biased) and Ops.AND in ops(biased)
    for v in (-1000, -9, -8, -7, -1, 0, 1, 7, 8, 999):
        assert evaluate(biased, {y: v}) == int(v / 8)
    # and nothing changes on a target that has the ops
    assert decompose(x % 8, FULL) is x % 8


def test_fast_division_by_any_constant():
    x = var("x", -(2 ** 31), 2 ** 31 - 1)
    q = decompose(x // 7, LACKING)
    assert Ops.IDIV not in ops(q) and any(u.dtype is i64 for u in q.toposort())    # widened to int64
    for v in (-(2 ** 31), -15, -14, -13, -1, 0, 1, 6, 7, 13, 14, 2 ** 31 - 1):
        assert evaluate(q, {x: v}) == int(v / 7)
    r = decompose(x % 7, LACKING)
    assert Ops.MOD not in ops(r) and evaluate(r, {x: -15}) == -1
    m, s = magic(7, 1000, i64)
    assert all((v * m) >> s == v // 7 for v in range(1001))
    assert fast_div(var("big", -(2 ** 63), 2 ** 63 - 1, i64), 7) is None     # no wider type: left alone


def test_mulacc_only_with_fma_for_floats():
    a, b, c = (UOp(Ops.DEFINE_VAR, f32, (), (n, 0, 1)) for n in "abc")
    assert decompose(a * b + c, Target(frozenset(GroupOp.ALU), has_fma=True)).op is Ops.MULACC
    assert decompose(a * b + c, Target(frozenset(GroupOp.ALU), has_fma=False)).op is Ops.ADD
    x, y, z = var("x", 0, 9), var("y", 0, 9), var("z", 0, 9)
    assert decompose(x * y + z, FULL).op is Ops.MULACC
    assert decompose(x * y + z, Target(frozenset(GroupOp.ALU - {Ops.MULACC}))).op is Ops.ADD


def test_float_division_by_exact_reciprocals_only():
    x = UOp(Ops.DEFINE_VAR, f32, (), ("x", 0, 1))
    assert decompose(x.alu(Ops.FDIV, UOp.const(f32, 4.0)), LACKING) is x * 0.25
    assert decompose(x.alu(Ops.FDIV, UOp.const(f32, 3.0)), LACKING).op is Ops.FDIV   # 1/3 is inexact
    assert decompose(x.alu(Ops.FDIV, UOp.const(f32, 4.0)), FULL).op is Ops.FDIV


def test_transcendentals_follow_the_setting():
    x = UOp(Ops.DEFINE_VAR, dtypes.float64, (), ("x", 0, 1))
    e = UOp(Ops.EXP, dtypes.float64, (x,))
    assert decompose(e, Target.of(CRenderer(), "native")) is e
    approx = decompose(e, Target.of(CRenderer(), "approx"))
    assert Ops.EXP not in ops(approx) and Ops.RINT in ops(approx)
    s = UOp(Ops.SQRT, dtypes.float64, (x,))
    assert decompose(s, Target.of(CRenderer(), "approx")) is s     # C has sqrt: not a transcendental


class NoDivC(CRenderer):
    native_ops = CRenderer.native_ops - {Ops.IDIV, Ops.MOD, Ops.MUL}


class _Buffer:
    def __init__(self, a):
        self.storage = a


def test_integer_decompositions_compile_and_match_c_semantics():
    g = [UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(i32), (), k) for k in range(6)]
    r = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, 4096),), 0)
    true = UOp.const(dtypes.bool_, True)
    x = UOp(Ops.LOAD, i32, (UOp(Ops.INDEX, g[5].dtype, (g[5], r, true)),))
    values = [x // 7, x % 7, x // 8, x % 8, x * 16]
    stores = [UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, gk.dtype, (gk, r, true)), v)) for gk, v in zip(g, values)]
    sink = UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (UOp(Ops.SINK, dtypes.void, tuple(stores)), r)),))
    ks = generate(sink, NoDivC(), name="int_decompositions")
    assert not any(u.op in (Ops.IDIV, Ops.MOD) for u in ks.program)
    xs = np.random.default_rng(0).integers(-2 ** 31, 2 ** 31, 4096, dtype=np.int64).astype(np.int32)
    xs[:6] = [-2 ** 31, -1, 0, 1, 2 ** 31 - 1, -8]
    outs = [np.zeros(4096, np.int32) for _ in range(5)]
    get_device("cpu").compile(ks.name, ks.source)([_Buffer(o) for o in outs] + [_Buffer(xs)])
    x64 = xs.astype(np.int64)
    trunc = lambda d: np.sign(x64) * (np.abs(x64) // d)                          # noqa: E731
    for got, want in zip(outs, [trunc(7), x64 - 7 * trunc(7), trunc(8), x64 - 8 * trunc(8), x64 * 16]):
        np.testing.assert_array_equal(got, want.astype(np.int32))


def test_debug_3_prints_every_stage_with_its_time(capsys, monkeypatch):
    monkeypatch.setattr(settings, "debug", 3)
    g, g1 = (UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f32), (), k) for k in range(2))
    r = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, 4),), 0)
    true = UOp.const(dtypes.bool_, True)
    x = UOp(Ops.LOAD, f32, (UOp(Ops.INDEX, g1.dtype, (g1, r, true)),))
    st = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, g.dtype, (g, r, true)), x * 2.0))
    generate(UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (st, r)),)), CRenderer(), name="dbg")
    out = capsys.readouterr().out
    for stage in ("symbolic (16)", "pre_matcher (17)", "decompositions (18)", "final_rewrite (19)",
                  "control_flow (20)", "linearize (21)", "cleanup (22)"):
        assert f"--- {stage}: " in out and " ms" in out


def test_approx_results_through_the_public_api(monkeypatch):
    monkeypatch.setattr(settings, "transcendentals", "approx")
    a = np.linspace(-3, 3, 1001)
    got = xp.tanh(xp.asarray(a) * 1.0001).numpy()          # a fresh graph: compiled under "approx"
    np.testing.assert_allclose(got, np.tanh(a * 1.0001), rtol=4e-16, atol=0)


def test_the_c_renderers_default_approximates_what_measured_faster(monkeypatch):
    monkeypatch.setattr(settings, "transcendentals", None)
    target = Target.of(CRenderer())
    f64 = dtypes.float64
    assert not any(target.native(op, f64) for op in (Ops.TANH, Ops.EXPM1, Ops.LOG1P, Ops.EXP))
    assert target.native(Ops.LOG2, f64)
    # float64 log and pow: approximated where fused multiply-adds make them faster than libm's
    assert all(target.native(op, f64) is not target.fused for op in (Ops.LOG, Ops.POW))
    # float64 sin, cos and tan: approximated where large arguments escape to libm (x86-64)
    assert all(target.native(op, f64) is not target.escapes for op in (Ops.SIN, Ops.COS, Ops.TAN))
    # float32, computed in float32, is faster approximated for every function
    assert not any(target.native(op, f32) for op in (Ops.EXP, Ops.LOG, Ops.SIN, Ops.COS, Ops.TAN, Ops.POW, Ops.TANH))
    assert target.native(Ops.SQRT, f32)                             # C has sqrt: not a transcendental
    monkeypatch.setattr(settings, "transcendentals", "native")
    assert Target.of(CRenderer()).native(Ops.TANH, f32)


def test_approx_by_default_as_a_set_of_ops_or_pairs():
    class R(CRenderer):
        approx_by_default = frozenset({Ops.TANH, (Ops.SIN, f32)})
    t = Target.of(R(), None)
    assert not t.native(Ops.TANH, f32) and not t.native(Ops.TANH, dtypes.float64)
    assert not t.native(Ops.SIN, f32) and t.native(Ops.SIN, dtypes.float64)
    x = UOp(Ops.DEFINE_VAR, f32, (), ("x", 0, 1))
    out = decompose(UOp(Ops.SIN, f32, (x,)), t)   # with escapes, one SIN stays: libm's, past 2^20 (2^17 with FMA)
    at = 2.0 ** 17 if t.fused else 2.0 ** 20
    assert [u.arg for u in out.toposort() if u.op is Ops.SIN] == ([("escape", at)] if t.escapes else [])
    sd = UOp(Ops.SIN, dtypes.float64, (x.cast(dtypes.float64),))
    assert decompose(sd, t) is sd


def _elementwise(op, dt, n=4096):
    true = UOp.const(dtypes.bool_, True)
    gs = [UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(dt), (), k) for k in range(3 if op is Ops.POW else 2)]
    r = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, n),), 0)
    loads = [UOp(Ops.LOAD, dt, (UOp(Ops.INDEX, g.dtype, (g, r, true)),)) for g in gs[1:]]
    st = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, gs[0].dtype, (gs[0], r, true)), UOp(op, dt, tuple(loads))))
    return UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (st, r)),))


VECTORISED = [(op, f32) for op in (Ops.EXP, Ops.EXP2, Ops.EXPM1, Ops.LOG, Ops.LOG2, Ops.LOG1P, Ops.SIN, Ops.COS,
                                   Ops.TAN, Ops.TANH, Ops.POW)] + [(op, dtypes.float64) for op in (Ops.SIN, Ops.COS, Ops.TAN)]


def _native_lacks_int64_vector_conversions() -> bool:
    """Whether gcc's -march=native target lacks AVX-512DQ: the float32 sin/cos/tan/pow
    approximations reduce their argument through int64 and double, and without AVX-512DQ there is
    no vector conversion between them, so gcc keeps those loops scalar (the machine of
    shared/MACHINE.md is said to have AVX-512, but this kind shows none in /proc/cpuinfo)."""
    import subprocess
    try:
        out = subprocess.run([settings.cc, "-march=native", "-Q", "--help=target"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return any(line.split() == ["-mavx512dq", "[disabled]"] for line in out.splitlines())


_NEEDS_INT64_VECTORS = (Ops.SIN, Ops.COS, Ops.TAN, Ops.POW)


@pytest.mark.parametrize("op,dt", VECTORISED, ids=[f"{op.name.lower()}-{dt}" for op, dt in VECTORISED])
def test_decomposed_loops_vectorise(tmp_path, op, dt):
    """gcc vectorises the approximated function's loop (-fopt-info-vec): a select or conversion
    gcc cannot vectorise (say, an int64 bit test it folds into a bool conversion) would make the
    approximation slower than libm."""
    import subprocess
    from lazyarr.runtime.cpu_compiler import CFLAGS
    src = tmp_path / "k.c"
    src.write_text(generate(_elementwise(op, dt), CRenderer(), name="k", transcendentals="approx").source)
    out = subprocess.run([settings.cc, *CFLAGS, "-fopt-info-vec", "-o", str(tmp_path / "k.so"), str(src)],
                         capture_output=True, text=True)
    if op in _NEEDS_INT64_VECTORS and "loop vectorized" not in out.stderr and _native_lacks_int64_vector_conversions():
        pytest.xfail("no AVX-512DQ on this CPU: int64/double conversions have no vector form, the loop stays scalar")
    assert "loop vectorized" in out.stderr, f"{op.name} {dt} is not vectorised:\n{out.stderr[-2000:]}"
    if "lz_escape_" in src.read_text():   # the vector loop calls an escape's vector version
        asm = subprocess.run([settings.cc, *CFLAGS, "-S", "-o", "-", str(src)], capture_output=True, text=True).stdout
        assert re.search(r"call\s+_ZGV[bcde]N\d+v_lz_escape_", asm), f"{op.name} {dt}: no vector escape call"
