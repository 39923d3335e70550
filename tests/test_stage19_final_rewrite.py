"""Stage 19, final rewrite, in the order of its docstring: vector constants, CAT, GEPs, ENDs;
then a hand-built vector kernel compiled with gcc's vector extensions."""
import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.codegen import generate
from lazyarr.compiler.final_rewrite import final_rewrite
from lazyarr.compiler.render_c import CRenderer
from lazyarr.compiler.symbolic import simplify
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.runtime.devices import get_device

f32, idx = dtypes.float32, dtypes.index
v4 = f32.vec(4)


def var(name, d=f32):
    return UOp(Ops.DEFINE_VAR, d, (), (name, 0, 1))


def sink(*xs):
    return UOp(Ops.SINK, dtypes.void, xs)


def test_vector_constant_becomes_vectorize_of_scalars():
    before = UOp(Ops.CONST, v4, (), 1.0)
    after = final_rewrite(sink(before)).src[0]
    one = UOp.const(f32, 1.0)
    assert after is UOp(Ops.VECTORIZE, v4, (one, one, one, one))


def test_scalar_constants_are_left_alone():
    c = UOp.const(f32, 2.0)
    assert final_rewrite(sink(c)).src[0] is c


def test_cat_becomes_vectorize_of_lanes():
    a = UOp(Ops.VECTORIZE, f32.vec(2), (var("a"), var("b")))
    c = var("c")
    after = final_rewrite(sink(UOp(Ops.CAT, f32.vec(3), (a, c)))).src[0]
    # the lanes of the VECTORIZE are read straight through, the scalar is its own lane
    assert after is UOp(Ops.VECTORIZE, f32.vec(3), (var("a"), var("b"), c))


def test_cat_of_an_opaque_vector_takes_single_lane_geps():
    x = UOp(Ops.ADD, f32.vec(2), (UOp(Ops.VECTORIZE, f32.vec(2), (var("a"), var("b"))),) * 2)
    after = final_rewrite(sink(UOp(Ops.CAT, v4, (x, x)))).src[0]
    assert after.op is Ops.VECTORIZE
    assert [(s.op, s.arg) for s in after.src] == [(Ops.GEP, (0,)), (Ops.GEP, (1,))] * 2


def test_geps_resolve():
    a, b, c, d = (var(n) for n in "abcd")
    vec = UOp(Ops.VECTORIZE, v4, (a, b, c, d))
    assert final_rewrite(sink(UOp(Ops.GEP, f32, (vec,), (2,)))).src[0] is c
    x = vec + vec
    two = final_rewrite(sink(UOp(Ops.GEP, f32.vec(2), (x,), (3, 0)))).src[0]
    assert two is UOp(Ops.VECTORIZE, f32.vec(2), (UOp(Ops.GEP, f32, (x,), (3,)), UOp(Ops.GEP, f32, (x,), (0,))))
    assert final_rewrite(sink(UOp(Ops.GEP, v4, (x,), (0, 1, 2, 3)))).src[0] is x
    nested = UOp(Ops.GEP, f32, (UOp(Ops.GEP, f32.vec(2), (x,), (3, 1)),), (1,))
    assert final_rewrite(sink(nested)).src[0] is UOp(Ops.GEP, f32, (x,), (1,))


def test_multi_range_end_splits_innermost_first():
    a = UOp(Ops.RANGE, idx, (UOp.const(idx, 2),), 0)
    b = UOp(Ops.RANGE, idx, (UOp.const(idx, 3),), 1)
    x = UOp(Ops.NOOP, dtypes.void, (a, b))
    out = final_rewrite(sink(UOp(Ops.END, dtypes.void, (x, a, b)))).src[0]
    assert out.op is Ops.END and out.src[1] is a
    assert out.src[0].op is Ops.END and out.src[0].src[1] is b and out.src[0].src[0] is x


class _Buffer:
    def __init__(self, a):
        self.storage = a


def vector_kernel():
    """out[4r+i] = (in[4r+i] + 1.5) · CAT(in[4r+2:4r+4], in[4r:4r+2])[i], with vectors by hand."""
    g_out = UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f32), (), 0)
    g_in = UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f32), (), 1)
    r = UOp(Ops.RANGE, idx, (UOp.const(idx, 8),), 0)
    true = UOp.const(dtypes.bool_, True)
    lanes = [UOp(Ops.LOAD, f32, (UOp(Ops.INDEX, g_in.dtype, (g_in, r * 4 + i, true)),)) for i in range(4)]
    vec = UOp(Ops.VECTORIZE, v4, tuple(lanes))
    swapped = UOp(Ops.CAT, v4, (UOp(Ops.GEP, f32.vec(2), (vec,), (2, 3)), UOp(Ops.GEP, f32.vec(2), (vec,), (0, 1))))
    value = (vec + UOp(Ops.CONST, v4, (), 1.5)) * swapped
    stores = [UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, g_out.dtype, (g_out, r * 4 + i, true)),
                                          UOp(Ops.GEP, f32, (value,), (i,)))) for i in range(4)]
    return sink(UOp(Ops.END, dtypes.void, (UOp(Ops.SINK, dtypes.void, tuple(stores)), r)))


def run_kernel(ks):
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    get_device("cpu").compile(ks.name, ks.source)([_Buffer(out), _Buffer(x)])
    q = x.reshape(8, 4)
    np.testing.assert_array_equal(out, ((q + 1.5) * np.concatenate([q[:, 2:], q[:, :2]], axis=1)).reshape(-1))


def test_a_vector_kernel_renders_with_gcc_vector_extensions():
    from lazyarr.compiler.cleanup import cleanup
    from lazyarr.compiler.codegen import KernelSource
    from lazyarr.compiler.control_flow import add_control_flow
    from lazyarr.compiler.linearize import linearize
    program = cleanup(linearize(add_control_flow(final_rewrite(vector_kernel()))), CRenderer())
    assert not any(u.op is Ops.CAT or (u.op is Ops.CONST and u.dtype.count > 1) for u in program)
    assert all(len(u.arg) == 1 for u in program if u.op is Ops.GEP)
    source = CRenderer().render("vector_kernel", program)
    assert "vector_size(16)" in source and "lz_float32x4" in source
    run_kernel(KernelSource("vector_kernel", source, tuple(program)))


def test_the_full_pipeline_devectorises_what_is_only_read_by_lanes():
    ks = generate(vector_kernel(), CRenderer(), name="vector_kernel_scalar")
    assert not any(u.dtype.count > 1 for u in ks.program)      # stage 16 pushed every GEP through
    run_kernel(ks)


def test_stage_19_is_a_no_op_on_scalar_kernels_but_for_ends():
    r = UOp(Ops.RANGE, idx, (UOp.const(idx, 4),), 0)
    g = UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f32), (), 0)
    st = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, g.dtype, (g, r, UOp.const(dtypes.bool_, True))),
                                      UOp.const(f32, 1.0)))
    k = simplify(sink(UOp(Ops.END, dtypes.void, (st, r))))
    assert final_rewrite(k) is k
