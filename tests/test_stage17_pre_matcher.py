"""Stage 17, pre-matcher: each renderer's own rules, applied before the decompositions."""
import numpy as np

import lazyarr as xp
from lazyarr import dtypes
from lazyarr.compiler.codegen import generate
from lazyarr.compiler.patterns import graph_rewrite
from lazyarr.compiler.pre_matcher import c_pre_matcher
from lazyarr.compiler.render_c import CRenderer
from lazyarr.compiler.uop import Ops, UOp

f64 = dtypes.float64


def pow_of(e):
    x = UOp(Ops.DEFINE_VAR, f64, (), ("x", 0, 1))
    return x, UOp(Ops.POW, f64, (x, UOp.const(f64, e)))


def test_c_pre_matcher_turns_pow_by_small_exponents_into_arithmetic():
    x, p = pow_of(2.0)
    assert graph_rewrite(p, c_pre_matcher) is x * x
    x, p = pow_of(1.0)
    assert graph_rewrite(p, c_pre_matcher) is x
    x, p = pow_of(0.0)
    assert graph_rewrite(p, c_pre_matcher) is UOp.const(f64, 1.0)
    x, p = pow_of(-1.0)
    assert graph_rewrite(p, c_pre_matcher) is UOp.const(f64, 1.0).alu(Ops.FDIV, x)


def test_other_exponents_are_left_to_pow():
    for e in (0.5, 3.0, -2.0):
        _, p = pow_of(e)
        assert graph_rewrite(p, c_pre_matcher) is p      # pow(-0, 0.5) is +0 where sqrt gives -0


def kernel_with_pow(e):
    g, g1 = (UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f64), (), k) for k in range(2))
    r = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, 4),), 0)
    true = UOp.const(dtypes.bool_, True)
    x = UOp(Ops.LOAD, f64, (UOp(Ops.INDEX, g1.dtype, (g1, r, true)),))
    st = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, g.dtype, (g, r, true)), UOp(Ops.POW, f64, (x, UOp.const(f64, e)))))
    return UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (st, r)),))


class NoPreMatcherC(CRenderer):
    pre_matcher = None


def test_the_hook_runs_in_codegen_and_can_be_absent():
    assert "pow(" not in generate(kernel_with_pow(2.0), CRenderer(), name="sq", transcendentals="native").source
    assert "pow(" in generate(kernel_with_pow(2.0), NoPreMatcherC(), name="sq2", transcendentals="native").source


def test_squares_match_numpy_specials_included():
    a = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 1e200, 1e-200])
    got = (xp.asarray(a) ** 2).numpy()
    np.testing.assert_array_equal(got, np.power(a, 2.0))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.power(a, 2.0)))
