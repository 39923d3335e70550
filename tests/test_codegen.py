"""Each compiler pass on small graphs: rangeify, lower_reduce, final_rewrite (19),
control_flow (20), linearize (21) and cleanup (22)."""
import re

import numpy as np
import pytest

from lazyarr import dtypes
from lazyarr.compiler.control_flow import add_control_flow
from lazyarr.compiler.final_rewrite import final_rewrite
from lazyarr.compiler.cleanup import cleanup_gated_stores
from lazyarr.compiler.linearize import linearize
from lazyarr.compiler.lower_reduce import lower_reduce
from lazyarr.compiler.rangeify import map_reshape, rangeify, reshape_groups
from lazyarr.compiler.buffer_views import buffer_view
from lazyarr.compiler.symbolic import simplify
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.runtime.device import Buffer
from lazyarr.runtime.devices import get_device
from tests.helpers import assignments, evaluate

idx = dtypes.index
f32 = dtypes.float32


def rng(n, i):
    return UOp(Ops.RANGE, idx, (UOp.const(idx, n),), i)


def buf(shape, dtype=f32):
    b = Buffer(get_device("cpu"), int(np.prod(shape)), dtype)
    return b, buffer_view(b, shape)


def ops_of(u):
    return [x.op for x in u.toposort()]


# ---- rangeify ----

def test_reshape_groups_pair_axes_with_equal_products():
    assert reshape_groups((4, 8), (32,)) == [([0, 1], [0])]
    assert reshape_groups((2, 3, 4), (6, 4)) == [([0, 1], [0]), ([2], [1])]
    assert reshape_groups((4, 1, 8), (4, 8)) == [([0], [0]), ([1, 2], [1])]


def test_reshape_index_mapping_is_exact():
    r0, r1 = rng(4, 0), rng(6, 1)
    old = map_reshape((2, 3, 4), (4, 6), [r0, r1])
    for env in assignments([r0, r1]):
        flat = env[r0] * 6 + env[r1]
        assert [evaluate(simplify(o), env) for o in old] == [flat // 12, (flat // 4) % 3, flat % 4]


def test_rangeify_gives_one_range_per_axis_and_a_store_closed_by_end():
    out, _ = buf((3, 4))
    _, a = buf((4, 3))
    sink, buffers = rangeify(out, UOp(Ops.PERMUTE, f32, (a,), (1, 0)))
    assert buffers[0] is out and len(buffers) == 2
    end = sink.src[0]
    assert end.op is Ops.END and [r.src[0].arg for r in end.src[1:]] == [3, 4]
    assert end.src[0].op is Ops.STORE
    assert Ops.PERMUTE not in ops_of(sink) and Ops.LOAD in ops_of(sink)


def test_rangeify_pad_gates_the_value_and_the_load():
    out, _ = buf((5,))
    _, a = buf((3,))
    sink, _ = rangeify(out, UOp(Ops.PAD, f32, (a,), ((1, 1),)))
    where = [u for u in sink.toposort() if u.op is Ops.WHERE]
    loads = [u for u in sink.toposort() if u.op is Ops.LOAD]
    assert where and loads and not loads[0].src[0].src[-1].is_const(True)


def _load_index_map(out_shape, value):
    """For every output position, the element of the source buffer its kernel loads."""
    out, _ = buf(out_shape)
    sink, _ = rangeify(out, value)
    (load,) = [u for u in sink.toposort() if u.op is Ops.LOAD]
    end = sink.src[0]
    ranges = list(end.src[1:]) if end.op is Ops.END else []
    got = {}
    for env in assignments(ranges):
        position = tuple(env[r] for r in ranges)
        got[position] = evaluate(simplify(load.src[0].src[1]), env)
    return ranges, got


def test_rangeify_shrink_adds_an_offset_flip_mirrors_and_expand_drops_the_range():
    _, a = buf((5, 6))
    ranges, got = _load_index_map((2, 3), UOp(Ops.SHRINK, f32, (a,), ((1, 3), (2, 5))))
    assert got == {(i, j): (i + 1) * 6 + (j + 2) for i in range(2) for j in range(3)}
    ranges, got = _load_index_map((5, 6), UOp(Ops.FLIP, f32, (a,), (1,)))
    assert got == {(i, j): i * 6 + (5 - j) for i in range(5) for j in range(6)}
    _, v = buf((1, 6))
    ranges, got = _load_index_map((4, 6), UOp(Ops.EXPAND, f32, (v,), (4, 6)))
    assert got == {(i, j): j for i in range(4) for j in range(6)}   # the row index is gone
    (load,) = [u for u in rangeify(buf((4, 6))[0], UOp(Ops.EXPAND, f32, (v,), (4, 6)))[0].toposort()
               if u.op is Ops.LOAD]
    assert ranges[0] not in load.toposort() and ranges[1] in load.toposort()


def test_rangeify_reduction_gets_its_own_ranges():
    out, _ = buf((4, 1))
    _, a = buf((4, 8))
    sink, _ = rangeify(out, UOp(Ops.REDUCE_AXIS, f32, (a,), (Ops.ADD, (1,))))
    red = [u for u in sink.toposort() if u.op is Ops.REDUCE]
    assert len(red) == 1 and [r.src[0].arg for r in red[0].src[1:]] == [8]


# ---- lower_reduce ----

def reduce_kernel():
    out, _ = buf((4, 1))
    _, a = buf((4, 8))
    sink, _ = rangeify(out, UOp(Ops.REDUCE_AXIS, f32, (a,), (Ops.ADD, (1,))))
    return simplify(sink)


def test_lower_reduce_makes_an_accumulator_loop_and_read():
    sink = lower_reduce(reduce_kernel())
    ops = ops_of(sink)
    assert Ops.REDUCE not in ops
    for op in (Ops.DEFINE_ACC, Ops.ASSIGN, Ops.AFTER):
        assert ops.count(op) == 1
    acc = next(u for u in sink.toposort() if u.op is Ops.DEFINE_ACC)
    assert acc.src[0].arg == 0.0 and [r.src[0].arg for r in acc.src[1:]] == [4]   # inside the outer loop
    reduce_range = next(u for u in sink.toposort() if u.op is Ops.RANGE and u.src[0].arg == 8)
    assert acc in reduce_range.src   # the loop opens after the accumulator exists


def test_lower_reduce_of_a_loop_invariant_value_multiplies():
    v = UOp(Ops.DEFINE_VAR, f32, (), ("v", 0, 1))
    r = rng(5, 0)
    red = UOp(Ops.REDUCE, f32, (v, r), Ops.ADD)
    assert lower_reduce(red) is UOp(Ops.MUL, f32, (v, UOp.const(f32, 5)))


# ---- stage 19 ----

def test_final_rewrite_splits_multi_range_ends_innermost_first():
    a, b = rng(2, 0), rng(3, 1)
    x = UOp(Ops.NOOP, dtypes.void, (a, b))
    out = final_rewrite(UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (x, a, b)),)))
    outer = out.src[0]
    assert outer.op is Ops.END and outer.src[1] is a
    assert outer.src[0].op is Ops.END and outer.src[0].src[1] is b


# ---- stage 20 ----

def two_sibling_reductions():
    out, _ = buf((4, 1))
    _, a = buf((4, 8))
    s = UOp(Ops.REDUCE_AXIS, f32, (a,), (Ops.ADD, (1,)))
    m = UOp(Ops.REDUCE_AXIS, f32, (a,), (Ops.MAX, (1,)))
    sink, _ = rangeify(out, UOp(Ops.ADD, f32, (s, m)))
    return final_rewrite(lower_reduce(simplify(sink)))


def test_control_flow_nests_and_orders_sibling_loops():
    sink = add_control_flow(two_sibling_reductions())
    outer = next(u for u in sink.toposort() if u.op is Ops.RANGE and u.src[0].arg == 4)
    inner = [u for u in sink.toposort() if u.op is Ops.RANGE and u.src[0].arg == 8]
    assert len(inner) == 2
    first, second = sorted(inner, key=lambda r: r.arg)
    assert any(s.op is Ops.END and s.src[1] is first for s in second.src)   # dependent siblings
    assert all(outer in r.ranges for r in inner)                              # nested


# ---- stage 21 and 22 ----

def test_linearize_orders_definitions_loads_stores_and_hoists_invariants():
    program = linearize(add_control_flow(two_sibling_reductions()))
    ops = [u.op for u in program]
    assert ops.index(Ops.DEFINE_GLOBAL) < ops.index(Ops.RANGE)
    positions = {u: i for i, u in enumerate(program)}
    for u in program:
        for s in u.src:
            assert positions[s] < positions[u]
    store = next(u for u in program if u.op is Ops.STORE)
    inner_ranges = [u for u in program if u.op is Ops.RANGE and u.src[0].arg == 8]
    ends = [u for u in program if u.op is Ops.END]
    assert positions[store] > max(positions[e] for e in ends if e.src[1] in inner_ranges)
    # the accumulators are defined outside the loops that update them
    for acc in (u for u in program if u.op is Ops.DEFINE_ACC):
        loop = next(r for r in inner_ranges if acc in r.src)
        assert positions[acc] < positions[loop]


def test_cleanup_wraps_gated_stores_in_if():
    g = UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f32), (), 0)
    gate = UOp(Ops.DEFINE_VAR, dtypes.bool_, (), ("g", 0, 1))
    ix = UOp(Ops.INDEX, g.dtype, (g, UOp.const(idx, 0), gate))
    st = UOp(Ops.STORE, dtypes.void, (ix, UOp.const(f32, 1.0)))
    out = cleanup_gated_stores([g, gate, ix, st])
    ops = [u.op for u in out]
    assert ops[-3:] == [Ops.IF, Ops.STORE, Ops.ENDIF]
    assert out[-2].src[0].src[-1].is_const(True)


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64])
def test_floor_division_and_remainder_by_a_power_of_two_shift_and_mask(monkeypatch, dt):
    """NumPy's x // 2^k and x % 2^k of signed integers (C's truncating division fixed up where the
    remainder is negative) become an arithmetic shift and a mask: the values of NumPy, negative
    ones and the extremes included, from kernels without a division."""
    from tests.helpers import watch_launches
    import lazyarr as xp
    info = np.iinfo(dt)
    x = np.array([info.min, info.min + 1, -9, -8, -7, -1, 0, 1, 7, 8, 9, info.max - 1, info.max], dt)
    sources = []
    watch_launches(monkeypatch, lambda items: sources.extend(getattr(it, "source", "") or "" for it in items))
    for k in (2, 8, 64):
        a = xp.asarray(x)
        np.testing.assert_array_equal((a // k).numpy(), x // dt(k))
        np.testing.assert_array_equal((a % k).numpy(), x % dt(k))
        np.testing.assert_array_equal((a // k * 16).numpy(), x // dt(k) * dt(16))
    kernels = [s for s in sources if "data0" in s]
    assert kernels and not any(re.search(r"\bval\d+ [/%] ", s) for s in kernels), kernels[0]
