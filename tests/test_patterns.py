"""The rewrite engine: UPat matching, PatternMatcher, graph_rewrite in both directions."""
import pytest

from lazyarr import dtypes
from lazyarr.compiler.patterns import PatternMatcher, RewriteNotConverging, UPat, graph_rewrite, substitute
from lazyarr.compiler.uop import Ops, UOp

P = UPat
i32 = dtypes.int32


def var(name):
    return UOp(Ops.DEFINE_VAR, i32, (), (name, 0, 100))


def test_upat_binds_names_and_checks_ops_and_dtypes():
    x = var("x")
    u = x + 3
    m = (P.var("a") + P.cvar("c")).match(u, {})
    assert m == [{"a": x, "c": UOp.const(i32, 3)}]
    assert P(Ops.MUL).match(u, {}) == []
    assert P(Ops.ADD, dtype=dtypes.float32).match(u, {}) == []


def test_commutative_patterns_match_both_orders():
    x = var("x")
    pat = P.var("a") * P.cvar("c")
    assert pat.match(x * 2, {})[0]["a"] is x
    assert pat.match(UOp.const(i32, 2) * x, {})[0]["a"] is x


def test_a_name_used_twice_must_bind_the_same_node():
    x, y = var("x"), var("y")
    pat = P(Ops.ADD, src=(P.var("a"), P.var("a")))
    assert pat.match(x + x, {})
    assert not pat.match(x + y, {})


def test_allow_any_len_and_single_src_pattern():
    x = var("x")
    w = UOp(Ops.WHERE, i32, (UOp.const(dtypes.bool_, True), x, x))
    assert P(Ops.WHERE, src=(P.cvar(),), allow_any_len=True).match(w, {})
    assert not P(Ops.WHERE, src=(P.cvar(),)).match(w, {})
    assert P(Ops.ADD, src=P(Ops.DEFINE_VAR)).match(x + var("z"), {})


def test_rule_returning_none_declines():
    pm = PatternMatcher([(P.var("x") + 0, lambda x: None), (P.var("x") + 0, lambda x: x)])
    x = var("x")
    assert pm.rewrite(x + 0) is x


def test_rule_with_ctx_gets_the_context():
    seen = []
    pm = PatternMatcher([(P(Ops.DEFINE_VAR, name="v"), lambda ctx, v: seen.append(ctx) or None)])
    graph_rewrite(var("x") + 1, pm, ctx="the context")
    assert seen == ["the context"]


def test_bottom_up_rewrite_reaches_a_fixed_point():
    # x+1+1+1 with (a+c1)+c2 → a+(c1+c2)
    pm = PatternMatcher([((P.var("a") + P.cvar("c1")) + P.cvar("c2"),
                          lambda a, c1, c2: a + (c1.arg + c2.arg))])
    x = var("x")
    assert graph_rewrite(((x + 1) + 1) + 1, pm) is x + 3


def test_top_down_rewrite_matches_the_root_first():
    order = []
    pm = PatternMatcher([(P(Ops.ADD, name="u"), lambda u: order.append(u) or None)])
    x = var("x")
    inner = x + 1
    outer = inner + 2
    graph_rewrite(outer, pm, bottom_up=False)
    assert order[0] is outer
    order.clear()
    graph_rewrite(outer, pm, bottom_up=True)
    assert order[0] is inner


def test_top_down_rewrite_rewrites_what_a_rule_creates():
    # push a NEG down through ADDs: -(a+b) → (-a)+(-b)
    pm = PatternMatcher([(P(Ops.NEG, src=(P(Ops.ADD, name="s"),)), lambda s: (-s.src[0]) + (-s.src[1])),
                         (P(Ops.NEG, src=(P(Ops.NEG, src=(P.var("x"),)),)), lambda x: x)])
    a, b, c = var("a"), var("b"), var("c")
    out = graph_rewrite(-((a + b) + c), pm, bottom_up=False)
    assert out is ((-a) + (-b)) + (-c)


def test_rewrite_that_never_settles_raises():
    pm = PatternMatcher([(P(Ops.DEFINE_VAR, name="v"), lambda v: UOp(Ops.DEFINE_VAR, i32, (), (v.arg[0] + "'", 0, 1)))])
    with pytest.raises(RewriteNotConverging):
        graph_rewrite(var("x"), pm, max_steps=100)


def test_substitute_replaces_nodes_everywhere():
    x, y = var("x"), var("y")
    g = (x + 1) * (x + 2)
    assert substitute(g, {x: y}) is (y + 1) * (y + 2)


def test_deep_graph_rewrite_does_not_recurse():
    x = var("x")
    g = x
    for _ in range(3000):
        g = g + 0
    pm = PatternMatcher([(P.var("a") + 0, lambda a: a)])
    assert graph_rewrite(g, pm) is x
