"""Kernel optimisation (lazyarr.compiler.opts), in the order of its docstring: the actions on
ranges (VECTOR, UPCAST, TILE, EPILOGUE), parts for sizes the amounts do not divide, the
heuristic's choices, the renderer's vector code, and results against NumPy.

Tolerance: vector lanes and several accumulators change the order of float sums, so sums and
matmuls are compared with rtol 1e-5 (float32 ~ 1e-4 for long sums); max and min are exact, with
NaN and inf as NumPy's."""
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import lazyarr as xp
from lazyarr import dtypes
from lazyarr.compiler.codegen import generate
from lazyarr.compiler.lower_reduce import lower_reduce
from lazyarr.compiler.opts import AxisPlan, Opt, OptTarget, analyse, apply_opts, heuristic, optimize, parts
from lazyarr.compiler.symbolic import simplify
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.runtime.devices import get_device


@pytest.fixture(autouse=True)
def sizes_in_the_code(monkeypatch):
    """These kernels are small; kernel optimisation acts only on kernels whose sizes are in the code
    (small kernels take theirs as arguments: lazyarr.compiler.rangeify)."""
    monkeypatch.setattr(xp.settings, "generic_sizes", 0)


RNG = np.random.default_rng(0)
CPU = OptTarget(threads=2)


def kernel_of(t):
    items = t.schedule()
    assert len(items) == 1, items
    return items[0]


def run_with(t, opts):
    """The tensor's single kernel compiled with `opts` (None: the heuristic's), run on its buffers."""
    item = kernel_of(t)
    dev = get_device()
    src = generate(item.ast, dev.renderer, opts=opts)
    prog = dev.compile(src.name, src.source)
    for b in item.buffers:
        b.ensure_allocated()
    prog(item.buffers)
    return item.buffers[0].numpy().reshape(t.shape).copy(), src


def ops_after(t, opts):
    k = analyse(simplify(kernel_of(t).ast))
    return apply_opts(k.sink, opts, CPU).toposort()


def mats(m, k, n, dtype=np.float32):
    return (RNG.standard_normal((m, k)).astype(dtype), RNG.standard_normal((k, n)).astype(dtype))


# ---- actions ---------------------------------------------------------------------------------

def test_vector_makes_vector_loads_and_stores_along_a_contiguous_axis():
    a = RNG.standard_normal((64, 96)).astype(np.float32)
    t = xp.asarray(a) * 2
    ops = ops_after(t, [Opt("vector", 1, 8)])
    loads = [u for u in ops if u.op is Ops.LOAD]
    assert loads and all(u.dtype == dtypes.float32.vec(8) for u in loads)
    assert any(u.op is Ops.STORE and u.src[1].dtype.count == 8 for u in ops)
    got, _ = run_with(t, [Opt("vector", 1, 8)])
    np.testing.assert_array_equal(got, a * 2)


def test_vector_on_a_reduced_axis_keeps_a_vector_accumulator_reduced_across_lanes():
    a = RNG.standard_normal((64, 256)).astype(np.float32)
    t = xp.sum(xp.asarray(a), axis=1)
    ops = ops_after(t, [Opt("vector", 1, 8)])
    red = [u for u in ops if u.op is Ops.REDUCE]
    assert len(red) == 1 and red[0].dtype == dtypes.float32.vec(8)
    assert sum(u.op is Ops.GEP for u in ops) == 8
    got, _ = run_with(t, [Opt("vector", 1, 8)])
    np.testing.assert_allclose(got, a.sum(1), rtol=1e-5, atol=1e-5)


def test_upcast_unrolls_copies_that_share_what_does_not_depend_on_the_axis():
    a, b = mats(64, 80, 72)
    t = xp.asarray(a) @ xp.asarray(b)
    ops = ops_after(t, [Opt("upcast", 0, 4)])
    red = [u for u in ops if u.op is Ops.REDUCE]
    assert len(red) == 4 and len({r.src[1:] for r in red}) == 1        # four accumulators, one loop
    b_loads = [u for u in ops if u.op is Ops.LOAD and u.src[0].src[0].arg == 2]
    assert len(b_loads) == 1                                               # B is read once for four rows
    got, _ = run_with(t, [Opt("upcast", 0, 4)])
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-4)


def test_unroll_on_a_reduced_axis_keeps_several_accumulators_in_one_loop():
    a = RNG.standard_normal((64, 200)).astype(np.float32)
    t = xp.max(xp.asarray(a), axis=1)
    ops = ops_after(t, [Opt("upcast", 1, 4)])
    red = [u for u in ops if u.op is Ops.REDUCE]
    assert len(red) == 4 and len({r.src[1:] for r in red}) == 1
    program = lower_reduce(simplify(UOp(Ops.SINK, dtypes.void, tuple(u for u in ops if u.op is Ops.END))))
    assert sum(u.op is Ops.DEFINE_ACC for u in program.toposort()) == 4
    got, _ = run_with(t, [Opt("upcast", 1, 4)])
    np.testing.assert_array_equal(got, a.max(1))


def test_tile_moves_the_block_loop_outside_the_other_output_loops():
    a, b = mats(64, 64, 256)
    t = xp.asarray(a) @ xp.asarray(b)
    sink = apply_opts(analyse(simplify(kernel_of(t).ast)).sink, [Opt("vector", 1, 8), Opt("tile", 1, 64)], CPU)
    end = sink.src[0]
    sizes = [r.src[0].arg for r in end.src[1:]]
    assert sizes == [4, 64, 8]          # blocks of columns, rows, vectors within a block
    got, _ = run_with(t, [Opt("vector", 1, 8), Opt("tile", 1, 64)])
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-4)


def test_tile_must_be_a_multiple_of_what_is_unrolled():
    a, b = mats(64, 64, 256)
    with pytest.raises(ValueError, match="multiple"):
        ops_after(xp.asarray(a) @ xp.asarray(b), [Opt("vector", 1, 8), Opt("upcast", 1, 4), Opt("tile", 1, 48)])


def test_epilogue_runs_in_a_loop_nest_of_its_own_after_the_reduction():
    a, b = mats(64, 40, 96)
    t = xp.tanh(xp.asarray(a) @ xp.asarray(b))
    opts = [Opt("epilogue", 0, 0), Opt("vector", 1, 8), Opt("upcast", 0, 4)]
    sink = apply_opts(analyse(simplify(kernel_of(t).ast)).sink, opts, CPU)
    assert len(sink.src) == 2
    assert any(u.op is Ops.AFTER and u.src[0].op is Ops.DEFINE_GLOBAL for u in sink.toposort())
    got, _ = run_with(t, opts)
    np.testing.assert_allclose(got, np.tanh(a @ b), rtol=1e-5, atol=1e-5)


def softmax(x):
    e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
    return e / xp.sum(e, axis=1, keepdims=True)


def np_softmax(a):
    e = np.exp(a - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_share_computes_a_summed_value_once_and_reads_it_back():
    a = RNG.standard_normal((65, 129)).astype(np.float32)
    t = softmax(xp.asarray(a))
    ops = ops_after(t, [Opt("share", 0, 0)])
    assert sum(u.op is Ops.EXP for u in ops) == 1
    assert any(u.op is Ops.AFTER and u.src[0].op is Ops.DEFINE_GLOBAL for u in ops)
    for opts in ([Opt("share", 0, 0)], None):
        got, _ = run_with(softmax(xp.asarray(a)), opts)
        np.testing.assert_allclose(got, np_softmax(a), rtol=1e-5, atol=1e-7)


def test_output_axes_of_a_shared_kernel_take_no_actions():
    a = RNG.standard_normal((64, 128)).astype(np.float32)
    with pytest.raises(ValueError, match="output axes"):
        ops_after(softmax(xp.asarray(a)), [Opt("share", 0, 0), Opt("upcast", 0, 2)])


def test_no_epilogue_or_share_when_the_output_may_take_an_inputs_storage(monkeypatch):
    """An input read only where the output is written may lend the output its storage
    (executor): a kernel must not write the output before it has read that input."""
    a, b = mats(64, 64, 64)
    c = RNG.standard_normal((64, 64)).astype(np.float32)
    k = analyse(simplify(kernel_of(xp.tanh(xp.asarray(a) @ xp.asarray(b) + xp.asarray(c))).ast))
    assert not any(o.action == "epilogue" for o in heuristic(k, CPU))
    k = analyse(simplify(kernel_of(softmax(xp.asarray(a)) * xp.asarray(c)).ast))
    assert not any(o.action == "share" for o in heuristic(k, CPU))
    monkeypatch.setattr(xp.settings, "tiered", False)       # optimised kernels from the first run
    for make, want in ((lambda C: xp.tanh(xp.asarray(a) @ xp.asarray(b) + C), np.tanh(a @ b + c)),
                       (lambda C: softmax(xp.asarray(a)) * C, np_softmax(a) * c)):
        C = (xp.asarray(c) * 1.0).realize()                 # a buffer nothing else reads
        out = make(C)
        del C
        # a float32 dot of 64 terms of size ~1 that cancels to ~0.005 may differ by ~1e-6 in summation order
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


# ---- parts -----------------------------------------------------------------------------------

def test_parts_take_every_action_then_fewer():
    plan = AxisPlan(vector=8, upcast=4, tile=64)
    got = [(s, n, (p.vector, p.upcast, p.tile)) for s, n, p in parts(1000, plan)]
    assert got == [(0, 960, (8, 4, 64)), (960, 32, (8, 4, 0)), (992, 8, (8, 1, 0))]
    assert [(s, n) for s, n, _ in parts(101, AxisPlan(vector=8))] == [(0, 96), (96, 5)]


@pytest.mark.parametrize("m,k,n", [(67, 65, 131), (64, 3, 77), (9, 100, 70), (130, 64, 1)])
def test_sizes_the_amounts_do_not_divide_give_exact_remainders(m, k, n):
    a, b = mats(m, k, n)
    t = xp.asarray(a) @ xp.asarray(b)
    opts = [Opt("vector", 1, 8), Opt("upcast", 1, 2), Opt("upcast", 0, 3), Opt("upcast", 2, 2)] if n > 1 else \
        [Opt("upcast", 0, 4), Opt("vector", 1, 8)]
    got, _ = run_with(t, opts)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-4)


# ---- the heuristic ---------------------------------------------------------------------------

def test_heuristic_leaves_elementwise_kernels_alone():
    t = xp.asarray(RNG.standard_normal((64, 64)).astype(np.float32)) * 3 + 1
    assert heuristic(analyse(simplify(kernel_of(t).ast)), CPU) == []


def test_heuristic_register_tiles_and_cache_blocks_matmul():
    a, b = mats(1024, 1024, 1024)
    t = xp.maximum(xp.asarray(a) @ xp.asarray(b) + 1.0, 0.0)
    opts = heuristic(analyse(simplify(kernel_of(t).ast)), CPU)
    actions = {(o.action, o.axis): o.amount for o in opts}
    assert actions[("vector", 1)] in (8, 16)                                # 32 or 64 bytes of float32
    assert actions[("upcast", 0)] * actions[("upcast", 1)] >= 16       # a register tile of accumulators
    assert actions[("upcast", 0)] * actions[("upcast", 1)] <= 28       # that fits the registers
    assert ("tile", 1) in actions                                         # cache blocks of columns
    assert ("epilogue", 0) not in actions                                 # bias and relu run on vectors


def test_matmul_source_has_a_vector_register_tile():
    a, b = mats(256, 256, 256)
    t = xp.asarray(a) @ xp.asarray(b)
    src = kernel_of(t).source
    assert len(re.findall(r"lz_float32x(?:8|16) acc\d+ =", src)) >= 16
    assert re.search(r"lz_load_float32x(8|16)", src) and re.search(r"lz_store_float32x(8|16)", src)
    assert re.search(r"acc\d+ = lz_fma_float32x(8|16)\(", src)          # accumulates with fused multiply-adds
    np.testing.assert_allclose(t.numpy(), a @ b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("m,k,n", [(256, 256, 256), (37, 53, 70), (96, 40, 130)])
@pytest.mark.parametrize("after", ["none", "add", "tanh"])
def test_a_transposed_matmul_output_gets_the_register_tile(m, k, n, after):
    """(A @ B).T consumed elementwise stores its tile lane by lane (its store steps by m along B's
    columns): it is still vectorised along those columns and register-tiled along A's rows, not
    left a loop of dot products with strided loads (1 GFLOP/s at 1024², against ~170)."""
    a, b = mats(m, k, n)
    f = {"none": lambda t: t.T * 1.0, "add": lambda t: t.T + 1.0, "tanh": lambda t: xp.tanh(t.T)}[after]
    t = f(xp.asarray(a) @ xp.asarray(b))
    opts = heuristic(analyse(simplify(kernel_of(t).ast)), CPU)
    assert any(o.action == "vector" and o.axis == 0 for o in opts), opts         # along B's columns (the output's rows)
    assert any(o.action == "upcast" and o.axis == 1 for o in opts), opts         # a row of A feeds several
    want = {"none": lambda v: v.T, "add": lambda v: v.T + 1, "tanh": lambda v: np.tanh(v.T)}[after](a @ b)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-4)


def test_heuristic_splits_a_transcendental_epilogue_from_the_matmul():
    a, b = mats(128, 64, 128)
    opts = heuristic(analyse(simplify(kernel_of(xp.tanh(xp.asarray(a) @ xp.asarray(b))).ast)), CPU)
    assert Opt("epilogue", 0, 0) in opts and Opt("vector", 1, 8) in opts


def test_heuristic_vectorises_row_reductions_with_several_accumulators():
    a = RNG.standard_normal((64, 4096)).astype(np.float32)
    opts = heuristic(analyse(simplify(kernel_of(xp.sum(xp.asarray(a), axis=1)).ast)), CPU)
    assert Opt("vector", 1, 8) in opts and Opt("upcast", 1, 4) in opts


def test_heuristic_vectorises_dot_products_of_transposed_matmul_and_upcasts_outputs():
    a, b = mats(64, 256, 64)
    t = xp.asarray(a) @ xp.asarray(np.ascontiguousarray(b.T)).T
    opts = heuristic(analyse(simplify(kernel_of(t).ast)), CPU)
    assert Opt("vector", 2, 8) in opts and any(o.action == "upcast" and o.axis < 2 for o in opts)


def test_heuristic_does_not_vectorise_integers_or_transcendental_reductions():
    ai = RNG.integers(-9, 9, (64, 256)).astype(np.int32)
    assert heuristic(analyse(simplify(kernel_of(xp.sum(xp.asarray(ai), axis=1)).ast)), CPU) == []
    a = RNG.standard_normal((64, 256)).astype(np.float32)
    chosen = heuristic(analyse(simplify(kernel_of(xp.sum(xp.exp(xp.asarray(a)), axis=1)).ast)), CPU)
    assert chosen == []   # (outside the assert: pytest would hold exp(a) alive, and a held value is stored)


def test_optimize_without_a_target_changes_nothing():
    t = xp.sum(xp.asarray(RNG.standard_normal((64, 64)).astype(np.float32)), axis=1)
    ast = kernel_of(t).ast
    assert optimize(ast, None) is ast


# ---- rendering -------------------------------------------------------------------------------

def test_every_vector_load_is_a_statement_of_its_own():
    a, b = mats(96, 96, 96)
    src = kernel_of(xp.maximum(xp.asarray(a) @ xp.asarray(b), 0.0)).source
    for line in src.splitlines():
        if "lz_load_float32x" in line and "(&data" in line:
            assert re.fullmatch(r"\s*const lz_float32x(\d+) val\d+ = lz_load_float32x\1\(&data\d+\[[^;]*\]\);", line), line


def test_vector_max_propagates_nan_and_inf():
    a = RNG.standard_normal((70, 200)).astype(np.float32)
    a[3, 50] = np.nan
    a[4, 7] = np.inf
    a[5, :] = -np.inf
    a[6, 199] = np.nan
    a[7, 0] = np.nan
    got, src = run_with(xp.max(xp.asarray(a), axis=1), None)
    assert "lz_max_float32x8" in src.source
    np.testing.assert_array_equal(got, a.max(1))
    got, _ = run_with(xp.min(xp.asarray(a), axis=1), None)
    np.testing.assert_array_equal(got, a.min(1))
    got, _ = run_with(xp.maximum(xp.asarray(a) @ xp.asarray(a.T.copy()), 0.0), None)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(np.maximum(a @ a.T, 0)))


@pytest.mark.parametrize("dtype,lanes", [(np.float32, 8), (np.float64, 4), (np.float32, 4), (np.float32, 16)])
def test_a_vector_accumulator_is_summed_across_its_lanes_by_halves(dtype, lanes):
    """x @ W.T (a dot product per output, vectorised along k): each accumulator's lanes are summed
    by one helper that adds halves of the vector (no lane-by-lane extracts), to NumPy's result."""
    a, b = mats(40, 64, 24, dtype)
    w = np.ascontiguousarray(b.T)
    t = xp.asarray(a) @ xp.asarray(w).T
    got, src = run_with(t, [Opt("vector", 2, lanes), Opt("upcast", 1, 4)])
    name = f"lz_lane_sum_{np.dtype(dtype).name}x{lanes}"
    assert name in src.source and "[7]" not in src.source.split("void ")[-1]
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, a @ b, **tol)
    row_sums, src = run_with(xp.sum(xp.asarray(a), axis=1), [Opt("vector", 1, lanes)])
    assert name in src.source
    np.testing.assert_allclose(row_sums, a.sum(1), **tol)


# ---- results against NumPy ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", [(64, 64, 64), (1, 100, 64), (100, 1000, 70), (257, 33, 129), (64, 1, 96)])
def test_matmul_and_fused_epilogues(dtype, m, k, n):
    a, b = mats(m, k, n, dtype)
    bias = RNG.standard_normal(n).astype(dtype)
    A, B, C = xp.asarray(a), xp.asarray(b), xp.asarray(bias)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose((A @ B).numpy(), a @ b, **tol)
    np.testing.assert_allclose(xp.maximum(A @ B + C, 0).numpy(), np.maximum(a @ b + bias, 0), **tol)
    np.testing.assert_allclose((xp.asarray(a.T.copy()).T @ B).numpy(), a @ b, **tol)
    np.testing.assert_allclose((A @ xp.asarray(b.T.copy()).T).numpy(), a @ b, **tol)
    np.testing.assert_allclose(xp.tanh(A @ B * 0.1).numpy(), np.tanh(a @ b * 0.1), **tol)


def test_batched_matmul():
    a = RNG.standard_normal((3, 67, 29)).astype(np.float32)
    b = RNG.standard_normal((3, 29, 80)).astype(np.float32)
    np.testing.assert_allclose((xp.asarray(a) @ xp.asarray(b)).numpy(), a @ b, rtol=1e-4, atol=1e-4)


def test_integer_matmul_and_reductions_are_exact():
    a = RNG.integers(-100, 100, (70, 90)).astype(np.int32)
    b = RNG.integers(-100, 100, (90, 65)).astype(np.int32)
    np.testing.assert_array_equal((xp.asarray(a) @ xp.asarray(b)).numpy(), a @ b)
    np.testing.assert_array_equal(xp.sum(xp.asarray(a), axis=1).numpy(), a.sum(1))
    np.testing.assert_array_equal(xp.max(xp.asarray(a), axis=0).numpy(), a.max(0))


@pytest.mark.parametrize("shape", [(64, 64), (100, 1000), (65, 129), (3, 4097)])
def test_row_and_column_reductions_and_softmax(shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    A = xp.asarray(a)
    np.testing.assert_allclose(xp.sum(A, axis=1).numpy(), a.sum(1), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(xp.sum(A, axis=0).numpy(), a.sum(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(xp.max(A, axis=1).numpy(), a.max(1))
    np.testing.assert_array_equal(xp.min(A, axis=0).numpy(), a.min(0))
    e = np.exp(a - a.max(1, keepdims=True))
    x = xp.exp(A - xp.max(A, axis=1, keepdims=True))
    np.testing.assert_allclose((x / xp.sum(x, axis=1, keepdims=True)).numpy(), e / e.sum(1, keepdims=True),
                               rtol=1e-5, atol=1e-6)


@given(m=st.integers(2, 80), k=st.integers(2, 80), n=st.integers(2, 80),
       opts=st.lists(st.sampled_from([Opt("vector", 1, 8), Opt("vector", 1, 4), Opt("upcast", 0, 2),
                                      Opt("upcast", 0, 5), Opt("upcast", 1, 3), Opt("upcast", 2, 4),
                                      Opt("vector", 2, 8)]), max_size=3, unique_by=lambda o: (o.action, o.axis)))
def test_any_actions_give_numpys_matmul(m, k, n, opts):
    if sum(o.action == "vector" for o in opts) > 1:
        opts = [o for o in opts if o.action != "vector" or o.axis == 1]
    a, b = mats(m, k, n)
    got, _ = run_with(xp.asarray(a) @ xp.asarray(b), opts)
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_threads_count_a_library_call_as_what_it_costs(monkeypatch):
    """A kernel is split across threads once its work pays for waking them; a call to the C
    library's sin counts as the ~30 operations it costs (`op_cost`), not as one: sin on 300k
    float64 was one thread, 1.8x slower than two here, while an addition on as many stays on one."""
    monkeypatch.setattr(xp.settings, "threads", 2)
    monkeypatch.setattr(xp.settings, "transcendentals", "native")
    x = xp.asarray(RNG.standard_normal(300_000))
    assert "sin(" in kernel_of(xp.sin(x * 2.0)).source
    assert "omp parallel for" in kernel_of(xp.sin(x * 2.0)).source
    assert "omp parallel for" not in kernel_of(x * 2.0 + 1.0).source


def test_a_shared_softmax_kernel_splits_its_rows_across_threads():
    """SHARE's kernel stores exp(x - max) into the output and reads it back in a loop of its own
    after loops that load: the read-back addresses only its row, so the row loop is still split
    across threads (it ran on one thread, 3.2 ms against 1.7 for 4096x1024 here)."""
    x = RNG.standard_normal((512, 1024)).astype(np.float32)

    def softmax(a):
        e = xp.exp(a - xp.max(a, axis=1, keepdims=True))
        return e / xp.sum(e, axis=1, keepdims=True)
    t = softmax(xp.asarray(x))
    src = kernel_of(t).source
    if xp.settings.threads > 1:
        assert "#pragma omp parallel for" in src, src
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(t.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_elementwise_kernels_split_where_an_index_is_compared_with_a_constant():
    """A join, a pad, a written slice or a roll compares output indices with constants: the kernel
    is one loop nest per interval between them, each a plain copy without gated loads (a
    concatenation of four blocks: four nests, no `?:`); values as NumPy's for shapes the cuts do
    not divide evenly, made as buffers and as expressions."""
    blocks = [RNG.standard_normal((37, 45)).astype(np.float32) for _ in range(4)]
    a, b, c, d = (xp.asarray(v) for v in blocks)
    t = xp.concatenate([xp.concatenate([a, b], axis=1), xp.concatenate([c * 2, d], axis=1)], axis=0)
    src = kernel_of(t).source.split("void ")[-1]
    assert src.count("for (int64_t r") == 6 and "?" not in src   # two row nests, each two column loops
    np.testing.assert_array_equal(t.numpy(), np.block([[blocks[0], blocks[1]], [blocks[2] * 2, blocks[3]]]))
    x = RNG.standard_normal((30, 50)).astype(np.float32)
    cases = [(lambda m: m.pad(xp.asarray(x), ((2, 3), (4, 1))) if m is xp else np.pad(x, ((2, 3), (4, 1)))),
             (lambda m: m.roll(m.asarray(x) + 1, 7, axis=1)),
             (lambda m: m.stack([m.asarray(x)[:, 0], m.asarray(x)[:, 1] * 3, m.asarray(x)[:, 2]], axis=1)),
             (lambda m: m.concatenate([m.asarray(x)[:11], m.asarray(x)[11:] * 2], axis=0)),
             (lambda m: m.roll(m.asarray(x), -3, axis=0)),
             (lambda m: m.concatenate([m.asarray(x).reshape(3, 10, 50), m.asarray(x).reshape(3, 10, 50) - 1], axis=1)),
             (lambda m: m.concatenate([m.asarray(x[:, :7]), m.asarray(x[:, 7:9]), m.asarray(x)], axis=1)),
             (lambda m: m.concatenate([m.asarray(x[0]), m.asarray(x[1]) * 2, m.asarray(x[2, :13])]))]
    for make in cases:
        np.testing.assert_array_equal(make(xp).numpy(), make(np))
    y = xp.asarray(x)
    y[5:17, 10:] = 7.0
    want = x.copy()
    want[5:17, 10:] = 7.0
    np.testing.assert_array_equal(y.numpy(), want)


def test_no_split_past_max_split_nests():
    """A stack of more pieces than MAX_SPLIT_NESTS stays one loop nest (selecting by position)."""
    from lazyarr.compiler.opts import MAX_SPLIT_NESTS
    pieces = [RNG.standard_normal(64).astype(np.float32) for _ in range(MAX_SPLIT_NESTS + 3)]
    t = xp.concatenate([xp.asarray(p) for p in pieces])
    src = kernel_of(t).source.split("void ")[-1]
    assert src.count("for (int64_t r") == 1
    np.testing.assert_array_equal(t.numpy(), np.concatenate(pieces))
