"""The graph: hash-consing, traversal, ranges."""
import gc
import weakref

import pytest

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp


def test_structurally_equal_nodes_are_the_same_object():
    a = UOp.const(dtypes.int32, 3)
    b = UOp(Ops.DEFINE_VAR, dtypes.int32, (), ("n", 0, 10))
    assert (a + b) is (a + b)
    assert UOp(Ops.ADD, dtypes.int32, (a, b)) is a + b
    assert (a + b) is not (b + a)


def test_constants_of_different_sign_of_zero_are_different_nodes():
    assert UOp.const(dtypes.float32, 0.0) is not UOp.const(dtypes.float32, -0.0)
    assert UOp.const(dtypes.float32, float("nan")) is UOp.const(dtypes.float32, float("nan"))


def test_constant_values_are_normalised_to_the_dtype():
    assert UOp.const(dtypes.int8, 200).arg == -56
    assert UOp.const(dtypes.float32, 1) is UOp.const(dtypes.float32, 1.0)
    assert UOp.const(dtypes.bool_, 5).arg is True


def test_nodes_are_freed_when_unused():
    u = UOp(Ops.DEFINE_VAR, dtypes.int32, (), ("unique_var_for_gc", 0, 1))
    ref = weakref.ref(u)
    del u
    gc.collect()
    assert ref() is None


def test_toposort_puts_sources_first_and_visits_shared_nodes_once():
    a = UOp(Ops.DEFINE_VAR, dtypes.int32, (), ("a", 0, 5))
    b = a + 1
    c = b * b
    order = c.toposort()
    assert order.index(a) < order.index(b) < order.index(c)
    assert len(order) == len(set(map(id, order))) == 4  # a, 1, a+1, (a+1)*(a+1)


def test_ranges_are_closed_by_end():
    r = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, 4),), 0)
    body = r * 2
    end = UOp(Ops.END, dtypes.void, (body, r))
    assert body.ranges == {r}
    assert end.ranges == frozenset()


def test_deep_graphs_do_not_recurse():
    x = UOp(Ops.DEFINE_VAR, dtypes.int32, (), ("deep", 0, 1))
    for _ in range(5000):
        x = x + 1
    assert len(x.toposort()) > 5000


def test_an_alu_node_of_sources_of_different_shapes_raises_valueerror_naming_them():
    import lazyarr as xp
    a, b, c = xp.ones((3, 4)).uop, xp.ones(4).uop, xp.ones((3, 4), dtype=xp.bool).uop
    with pytest.raises(ValueError, match=r"ADD of sources of different shapes: \(3, 4\), \(4,\)"):
        UOp(Ops.ADD, a.dtype, (a, b)).shape
    with pytest.raises(ValueError, match="WHERE of sources of different shapes"):
        UOp(Ops.WHERE, a.dtype, (c, b, a)).shape
    assert UOp(Ops.WHERE, a.dtype, (c, a, a)).shape == (3, 4)


def test_an_alu_node_breaking_its_ops_dtype_rule_raises_typeerror_naming_the_dtypes():
    import lazyarr as xp
    f, i, b = xp.ones((2, 3)).uop, xp.ones((2, 3), dtype=xp.int32).uop, xp.ones((2, 3), dtype=xp.bool).uop
    z = xp.ones((2, 3), dtype=xp.complex64).uop
    cases = [(Ops.ADD, f.dtype, (f, i)),          # sources of two dtypes
             (Ops.EXP, i.dtype, (i,)),            # a floating-point function of integers
             (Ops.AND, f.dtype, (f, f)),          # bits of floats
             (Ops.CMPLT, xp.bool, (z, z)),        # complex numbers have no order
             (Ops.CMPEQ, f.dtype, (f, f)),        # a comparison is bool
             (Ops.ABS, z.dtype, (z,)),            # |z| is real
             (Ops.WHERE, f.dtype, (i, f, f))]     # the condition is bool
    for op, dtype, src in cases:
        with pytest.raises(TypeError, match=op.name + " of " + str(src[0].dtype)):
            UOp(op, dtype, src).shape
    assert UOp(Ops.ABS, xp.float32, (z,)).shape == (2, 3)
    assert UOp(Ops.POW, i.dtype, (i, i)).shape == (2, 3)
    assert UOp(Ops.WHERE, f.dtype, (b, f, f)).shape == (2, 3)


def test_the_shape_of_a_deep_graph_built_without_shapes_is_found_without_recursing_per_node():
    # a gradient's graph is built without asking shapes: the first shape asked is the top's
    import sys
    import lazyarr as xp
    x = xp.ones((3, 2)).uop
    one = xp.ones((3, 2)).uop
    u = x
    for _ in range(3 * sys.getrecursionlimit()):
        u = UOp(Ops.ADD, u.dtype, (u, one))
    assert u.shape == (3, 2)
