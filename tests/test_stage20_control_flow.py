"""Stage 20, control flow: the three relationships between loops and the edges that order them."""
import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.control_flow import add_control_flow, relationship
from lazyarr.compiler.final_rewrite import final_rewrite
from lazyarr.compiler.linearize import linearize
from lazyarr.compiler.lower_reduce import lower_reduce
from lazyarr.compiler.rangeify import rangeify
from lazyarr.compiler.buffer_views import buffer_view
from lazyarr.compiler.symbolic import simplify
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.runtime.device import Buffer
from lazyarr.runtime.devices import get_device

f32, idx = dtypes.float32, dtypes.index
TRUE = UOp.const(dtypes.bool_, True)


def buf(shape):
    b = Buffer(get_device("cpu"), int(np.prod(shape)), f32)
    return b, buffer_view(b, shape)


def prepared(out, value):
    sink, _ = rangeify(out, value)
    return final_rewrite(lower_reduce(simplify(sink)))


def ranges_of(sink, size):
    return sorted((u for u in sink.toposort() if u.op is Ops.RANGE and u.src[0].arg == size), key=lambda r: r.arg)


def end_of(sink, r):
    return next(u for u in sink.toposort() if u.op is Ops.END and u.src[1] is r)


def test_nested_loops_get_their_enclosing_range_as_a_source():
    out, _ = buf((4, 8))
    _, a = buf((4, 8))
    before = prepared(out, UOp(Ops.ADD, f32, (a, a)))
    (outer,), (inner,) = ranges_of(before, 4), ranges_of(before, 8)
    assert relationship(outer, inner, before) == "nested"
    after = add_control_flow(before)
    (outer,), (inner,) = ranges_of(after, 4), ranges_of(after, 8)
    assert outer in inner.src


def softmax_denominator():
    """Σ_j exp(a_ij − max_j a_ij): the sum's loop reads the max's result."""
    out, _ = buf((4, 1))
    _, a = buf((4, 8))
    m = UOp(Ops.REDUCE_AXIS, f32, (a,), (Ops.MAX, (1,)))
    d = UOp(Ops.EXP, f32, (UOp(Ops.SUB, f32, (a, UOp(Ops.EXPAND, f32, (m,), (4, 8)))),))
    return prepared(out, UOp(Ops.REDUCE_AXIS, f32, (d,), (Ops.ADD, (1,))))


def test_dependent_siblings_wait_for_the_end_they_read():
    before = softmax_denominator()
    first, second = ranges_of(before, 8)
    assert relationship(first, second, before) == "dependent"
    reader = next(r for r in (first, second) if any(u is end_of(before, first if r is second else second)
                                                   for u in end_of(before, r).toposort()))
    written = second if reader is first else first
    after = add_control_flow(before)
    reader_after = next(r for r in ranges_of(after, 8) if r.arg == reader.arg)
    assert any(s.op is Ops.END and s.src[1].arg == written.arg for s in reader_after.src)
    program = linearize(after)
    pos = {u: i for i, u in enumerate(program)}
    written_end = next(u for u in program if u.op is Ops.END and u.src[1].arg == written.arg)
    assert pos[written_end] < pos[reader_after]           # the reader opens after the other closes


def two_independent_reductions():
    out, _ = buf((4, 1))
    _, a = buf((4, 8))
    s = UOp(Ops.REDUCE_AXIS, f32, (a,), (Ops.ADD, (1,)))
    m = UOp(Ops.REDUCE_AXIS, f32, (a,), (Ops.MAX, (1,)))
    return prepared(out, UOp(Ops.ADD, f32, (s, m)))


def test_independent_siblings_are_chained_by_range_number():
    before = two_independent_reductions()
    first, second = ranges_of(before, 8)
    assert relationship(first, second, before) == "independent"
    after = add_control_flow(before)
    first, second = ranges_of(after, 8)
    assert any(s.op is Ops.END and s.src[1] is first for s in second.src)
    assert not any(s.op is Ops.END for s in first.src)


def test_independent_loops_in_different_enclosing_loops_get_no_edge():
    g = [UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f32), (), k) for k in range(2)]
    r0, r1, r2, r3 = (UOp(Ops.RANGE, idx, (UOp.const(idx, n),), k) for k, n in enumerate((2, 3, 4, 5)))
    st0 = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, g[0].dtype, (g[0], r0 * 4 + r2, TRUE)), UOp.const(f32, 1.0)))
    st1 = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, g[1].dtype, (g[1], r1 * 5 + r3, TRUE)), UOp.const(f32, 2.0)))
    before = final_rewrite(UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (st0, r0, r2)),
                                                       UOp(Ops.END, dtypes.void, (st1, r1, r3)))))
    assert relationship(r2, r3, before) == "independent"
    after = add_control_flow(before)
    inner2, inner3 = ranges_of(after, 4)[0], ranges_of(after, 5)[0]
    assert not any(s.op is Ops.END for s in inner2.src + inner3.src)       # no edge between them
    outer0, outer1 = ranges_of(after, 2)[0], ranges_of(after, 3)[0]
    assert any(s.op is Ops.END and s.src[1] is outer0 for s in outer1.src)   # top-level siblings chain
