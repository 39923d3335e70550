"""Stage 16's symbolic rules and value bounds, checked against brute-force evaluation."""
import pytest
from hypothesis import given, strategies as st

from lazyarr import dtypes
from lazyarr.compiler.symbolic import simplify
from lazyarr.compiler.uop import Ops, UOp
from tests.helpers import assignments, evaluate

idx = dtypes.index


def rng(n, i=0):
    return UOp(Ops.RANGE, idx, (UOp.const(idx, n),), i)


def c(v):
    return UOp.const(idx, v)


def test_constants_fold_with_c_integer_semantics():
    assert simplify(c(7) // c(-2)) is c(-3)   # C truncates toward zero
    assert simplify(c(-7) % c(2)) is c(-1)
    assert simplify(UOp.const(dtypes.int8, 100) + UOp.const(dtypes.int8, 100)).arg == -56


def test_identities():
    r = rng(10)
    assert simplify(r + 0) is r
    assert simplify(r * 1) is r
    assert simplify(r * 0) is c(0)
    assert simplify(r // 1) is r
    assert simplify(r - r) is c(0)


def test_float_rules_are_only_exact_ones():
    x = UOp(Ops.DEFINE_VAR, dtypes.float32, (), ("x", 0, 1))
    assert simplify(x * 1.0) is x
    assert simplify(x + 0.0) is not x           # -0.0 + 0.0 is 0.0, not -0.0
    assert simplify(x + -0.0) is x
    assert simplify(x * 0.0) is not UOp.const(dtypes.float32, 0.0)   # inf * 0 is nan


def test_bounds_of_ranges_and_arithmetic():
    r = rng(8)
    assert (r.vmin, r.vmax) == (0, 7)
    assert ((r * 3 + 2).vmin, (r * 3 + 2).vmax) == (2, 23)
    assert ((r // 3).vmin, (r // 3).vmax) == (0, 2)
    assert ((r % 3).vmin, (r % 3).vmax) == (0, 2)


def test_comparisons_decided_by_bounds_fold():
    r = rng(4)
    assert simplify(r.lt(10)).arg is True
    assert simplify(r.lt(0)).arg is False
    assert simplify(c(0).le(r)).arg is True


def test_mod_and_div_of_values_below_the_divisor_fold():
    r = rng(8)
    assert simplify(r % 8) is r
    assert simplify(r // 8) is c(0)


def test_div_mod_recombine():
    r = rng(32)
    assert simplify((r // 8) * 8 + r % 8) is r


def test_split_and_merge_of_axes_folds():
    r0, r1 = rng(4, 0), rng(8, 1)
    flat = r0 * 8 + r1
    assert simplify(flat // 8) is r0
    assert simplify(flat % 8) is r1
    r = rng(32)
    assert simplify(((r // 8) % 4) * 8 + (r % 8) % 8) is r


def test_like_terms_combine_and_constants_go_last():
    r = rng(10)
    assert simplify(r + 3 + r) is r * 2 + 3
    assert simplify((r + 1) * 4 - 4) is r * 4


def test_unsigned_division_is_not_folded_by_signed_reasoning():
    x = UOp(Ops.DEFINE_VAR, dtypes.uint64, (), ("x", 1, 10))
    e = (x + UOp.const(dtypes.uint64, 2**64 - 1)) // UOp.const(dtypes.uint64, 2)
    s = simplify(e)
    for v in range(1, 11):
        assert evaluate(s, {x: v}) == (v - 1) // 2


OPS = ["add", "sub", "mul", "div", "mod", "lt", "max", "min", "where"]


@st.composite
def index_expr(draw, ranges, depth=0):
    if depth > 3 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from(ranges))
        return c(draw(st.integers(-6, 12)))
    op = draw(st.sampled_from(OPS))
    a = draw(index_expr(ranges, depth + 1))
    b = draw(index_expr(ranges, depth + 1))
    if op == "add": return a + b
    if op == "sub": return a - b
    if op == "mul": return a * b
    if op in ("div", "mod"):
        d = c(draw(st.integers(1, 9)))
        return a // d if op == "div" else a % d
    if op == "max": return a.maximum(b)
    if op == "min": return a.minimum(b)
    if op == "lt": return a.lt(b).where(a, b)
    return a.lt(b).where(b, a)


@given(st.data())
def test_simplification_preserves_values(data):
    ranges = [rng(3, 0), rng(4, 1), rng(8, 2)]
    e = data.draw(index_expr(ranges))
    s = simplify(e)
    for env in assignments(ranges):
        assert evaluate(s, env) == evaluate(e, env), (env,)


# ---- stage 16's newer rules, one small graph before and after each ----

def var(name, lo, hi, d=idx):
    return UOp(Ops.DEFINE_VAR, d, (), (name, lo, hi))


def test_signs_move_out_of_sums_and_products():
    x, y = var("x", -9, 9), var("y", -9, 9)
    assert simplify(x - (-y)) is simplify(x + y)
    assert simplify((-x) * (-y)) is x * y
    assert simplify(-(-x)) is x


def test_comparisons_move_constants_when_nothing_wraps():
    x = var("x", 0, 100)
    assert simplify((x + 5).lt(12)) is x.lt(7)
    assert simplify((x * 4).lt(10)) is x.lt(3)
    assert simplify((x + 3).eq(10)) is x.eq(7)
    assert simplify(x.lt(5) & x.lt(9)) is x.lt(5)
    assert simplify(x.lt(3) & UOp.const(idx, 5).lt(x)).arg is False


def test_where_of_a_comparison_is_min_or_max():
    x, y = var("x", -9, 9), var("y", -9, 9)
    assert simplify(x.lt(y).where(x, y)) is x.minimum(y)
    assert simplify(x.lt(y).where(y, x)) is x.maximum(y)


def test_nested_division_and_modulo():
    x = var("x", -1000, 1000)
    assert simplify((x // 4) // 3) is x // 12
    assert simplify((x % 12) % 4) is x % 4
    assert simplify(x - (x // 8) * 8) is x % 8
    r = rng(16)
    assert simplify((r % 16) // 16) is c(0)          # range-aware: r < 16


def test_gep_pushes_through_alu_ops():
    lanes = [var(n, 0, 9, dtypes.int32) for n in "abcd"]
    v = UOp(Ops.VECTORIZE, dtypes.int32.vec(4), tuple(lanes))
    two = UOp(Ops.CONST, dtypes.int32.vec(4), (), 2)
    before = UOp(Ops.GEP, dtypes.int32, ((v + v) * two,), (1,))
    assert simplify(before) is (lanes[1] * 2) * 2 or simplify(before) is lanes[1] * 4
    from lazyarr.compiler.symbolic import gep_alu
    ptr = UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(dtypes.int32), (), 0)
    pointer_alu = UOp(Ops.ADD, ptr.dtype, (ptr, ptr))
    assert gep_alu(UOp(Ops.GEP, ptr.dtype, (pointer_alu,), (0,)), pointer_alu) is None   # not through pointers
