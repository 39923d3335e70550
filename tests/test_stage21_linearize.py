"""Stage 21, linearize: small graphs before, instruction lists after."""

from lazyarr import dtypes
from lazyarr.compiler.control_flow import add_control_flow
from lazyarr.compiler.final_rewrite import final_rewrite
from lazyarr.compiler.linearize import PRIORITY, linearize, run_count
from lazyarr.compiler.uop import Ops, UOp

f32, idx = dtypes.float32, dtypes.index
TRUE = UOp.const(dtypes.bool_, True)


def two_level_kernel():
    """out[i, j] = a[i] * 2 + b[j]: a[i]·2 does not depend on j."""
    g_out, g_a, g_b = (UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f32), (), k) for k in range(3))
    i, j = UOp(Ops.RANGE, idx, (UOp.const(idx, 4),), 0), UOp(Ops.RANGE, idx, (UOp.const(idx, 8),), 1)
    a = UOp(Ops.LOAD, f32, (UOp(Ops.INDEX, g_a.dtype, (g_a, i, TRUE)),))
    b = UOp(Ops.LOAD, f32, (UOp(Ops.INDEX, g_b.dtype, (g_b, j, TRUE)),))
    value = a * 2.0 + b
    st = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, g_out.dtype, (g_out, i * 8 + j, TRUE)), value))
    sink = UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (st, i, j)),))
    return add_control_flow(final_rewrite(sink))


def loads(program):
    """The loads of a[i] and b[j], found in the linearized program (control flow rebuilt them)."""
    ls = [u for u in program if u.op is Ops.LOAD]
    a = next(u for u in ls if u.src[0].src[0].arg == 1)
    return a, next(u for u in ls if u.src[0].src[0].arg == 2)


def test_priorities_are_the_specified_ones():
    assert PRIORITY[Ops.DEFINE_GLOBAL] == -20 and PRIORITY[Ops.DEFINE_VAR] == -19
    assert PRIORITY[Ops.DEFINE_ACC] == -17 and PRIORITY[Ops.CONST] == -10 and PRIORITY[Ops.END] == -5
    assert PRIORITY[Ops.LOAD] == -1 and PRIORITY[Ops.STORE] == 1 and PRIORITY[Ops.RANGE] == 5


def test_definitions_first_loads_before_use_stores_last():
    program = linearize(two_level_kernel())
    a, b = loads(program)
    ops = [u.op for u in program]
    assert ops[:3] == [Ops.DEFINE_GLOBAL] * 3
    pos = {u: k for k, u in enumerate(program)}
    assert all(pos[s] < pos[u] for u in program for s in u.src)     # every edge respected
    store = next(u for u in program if u.op is Ops.STORE)
    assert ops[pos[store] + 1:] == [Ops.END, Ops.END, Ops.SINK]      # the store is the last work
    assert pos[b] < pos[store] and pos[a] < pos[store]


def test_loop_invariant_work_is_hoisted_out_of_the_inner_loop():
    program = linearize(two_level_kernel())
    a, b = loads(program)
    pos = {u: k for k, u in enumerate(program)}
    inner = next(u for u in program if u.op is Ops.RANGE and u.arg == 1)
    doubled = next(u for u in program if u.op is Ops.MUL and a in u.src)
    assert run_count(doubled) == 4 and run_count(b) == 32
    assert pos[a] < pos[inner] and pos[doubled] < pos[inner] < pos[b]


def test_an_escape_call_comes_right_after_its_argument():
    """An escape (a call in C, around which every vector register is the caller's to save) is
    placed as soon as its argument is loaded, before the approximation's arithmetic, not where its
    value is used (the store's select): tan of 4M float32 ran 25% slower with the call last."""
    from lazyarr.compiler.transcendentals import escape
    g_out, g_x = (UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f32), (), k) for k in range(2))
    i = UOp(Ops.RANGE, idx, (UOp.const(idx, 64),), 0)
    x = UOp(Ops.LOAD, f32, (UOp(Ops.INDEX, g_x.dtype, (g_x, i, TRUE)),))
    approx = ((x * 3.0 + 1.0) * x + 2.0) * x
    value = UOp(Ops.WHERE, f32, (x.lt(UOp.const(f32, 100.0)), approx, escape(x, Ops.TAN, 100.0)))
    st = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, g_out.dtype, (g_out, i, TRUE)), value))
    program = linearize(add_control_flow(final_rewrite(UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (st, i)),)))))
    load = next(k for k, u in enumerate(program) if u.op is Ops.LOAD)
    call = next(k for k, u in enumerate(program) if u.op is Ops.TAN)
    assert call == load + 1
    assert all(u.op not in (Ops.MUL, Ops.ADD) for u in program[:call])
