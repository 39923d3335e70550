"""Kernels written in the IR by hand (`lazyarr.compiler.ir_kernels`): private arrays, the loops
that update them running in order, the outermost loop spread, kernel optimisation leaving them as
written, and CALL nodes running them on the device like generated kernels."""
import numpy as np
import pytest

import lazyarr as xp
from lazyarr import dtypes
from lazyarr.arrays import wrap
from lazyarr.compiler.codegen import generate
from lazyarr.compiler.ir_kernels import Kernel, after, arg, at, end, ir_call, load, scatter_add, scatter_last, sink, store
from lazyarr.compiler.kernel_axes import analyse
from lazyarr.compiler.linearize import linearize
from lazyarr.compiler.render_c import CRenderer
from lazyarr.compiler.render_opencl import OpenCLRenderer
from lazyarr.compiler.renderer import ordered_loops
from lazyarr.compiler.uop import Ops, UOp


def counting_kernel(chunks: int, length: int, buckets: int = 16) -> tuple[UOp, list[UOp]]:
    """counts[c, b]: how many of chunk c's values (uint8, below `buckets`) equal b; and its loops
    (chunks, zeroing, counting, copying out)."""
    k = Kernel()
    counts, values = arg(0, dtypes.int32), arg(1, dtypes.uint8)
    c = k.loop(chunks)
    tally = k.private(dtypes.int32, buckets, c)
    z = k.loop(buckets)
    zeroed = end(store(at(tally, z), UOp.const(dtypes.int32, 0)), z)
    i = k.loop(length)
    slot = at(after(tally, zeroed, i), load(at(values, c * length + i)).cast(dtypes.index))
    counted = end(store(slot, load(slot) + 1), i)
    b = k.loop(buckets)
    out = store(at(counts, c * buckets + b), load(at(after(tally, counted), b)))
    return sink(end(out, c, b), 2, "count_values"), [c, z, i, b]


def test_the_loop_updating_a_private_array_runs_in_order_and_no_other():
    kernel, (c, z, i, b) = counting_kernel(4, 100)
    program = linearize(kernel)
    assert ordered_loops(program) == frozenset({i})


def test_c_gives_the_ordered_loop_no_pragma_and_spreads_the_outermost():
    kernel, _ = counting_kernel(64, 1 << 17)
    src = generate(kernel, CRenderer(), opts=[]).source
    lines = src.splitlines()
    counting = next(n for n, line in enumerate(lines) if "for (int64_t r2 " in line)
    assert "pragma" not in lines[counting - 1]   # neither ivdep nor omp simd: iterations depend on each other
    assert "int32_t reg0[16];" in src            # inside the parallel loop: one array per thread
    outer = next(n for n, line in enumerate(lines) if "for (int64_t r0 " in line)
    assert "omp parallel for" in lines[outer - 1]
    assert lines.index("    int32_t reg0[16];") > outer


def test_opencl_spreads_only_the_loop_around_every_store():
    kernel, _ = counting_kernel(8, 100)
    src = generate(kernel, OpenCLRenderer(), opts=[]).source
    assert src.count("get_global_id") == 1 and "r0 = get_global_id(0)" in src
    assert src.startswith("// lazyarr launch 8\n")


def test_kernel_optimisation_leaves_a_hand_written_kernel_as_written():
    kernel, _ = counting_kernel(4, 100)
    assert analyse(kernel) is None
    assert generate(kernel, CRenderer()).source == generate(kernel, CRenderer(), opts=[]).source


def test_a_hand_written_kernel_runs_as_a_call_on_the_device():
    rng = np.random.default_rng(3)
    data = rng.integers(0, 16, 4 * 100).astype(np.uint8)
    x = xp.asarray(data)
    kernel, _ = counting_kernel(4, 100)
    counts, = ir_call(kernel, x.device, [x.uop], [((4 * 16,), dtypes.int32)])
    got = wrap(counts, x.device).numpy().reshape(4, 16)
    want = np.stack([np.bincount(part, minlength=16) for part in data.reshape(4, 100)])
    np.testing.assert_array_equal(got, want)
    # its result is lazy like any other: it fuses into what reads it
    total = wrap(counts, x.device).sum()
    assert int(total) == 400


@pytest.mark.parametrize("shape", [(7,), (3, 50), (2, 3, 4)])
def test_scatter_last_puts_each_value_at_its_position(shape):
    rng = np.random.default_rng(len(shape))
    values = rng.standard_normal(shape).astype(np.float32)
    perm = np.argsort(rng.random(shape), axis=-1)
    v, p = xp.asarray(values), xp.asarray(perm)
    got = wrap(scatter_last(v.uop, p.uop), v.device).numpy()
    want = np.empty_like(values)
    np.put_along_axis(want, perm, values, axis=-1)
    np.testing.assert_array_equal(got, want)
    assert any(u.op is Ops.CALL_RESULT for u in scatter_last(v.uop, p.uop).toposort())


def test_scatter_add_adds_repeated_positions_in_order_and_runs_in_one_loop():
    rng = np.random.default_rng(4)
    values = rng.standard_normal((50, 3)).astype(np.float32)
    rows, cols = rng.integers(0, 6, (50, 3)), rng.integers(0, 2, (50, 3))
    v, r, c = xp.asarray(values), xp.asarray(rows), xp.asarray(cols)
    got = wrap(scatter_add(v.uop, [r.uop, c.uop], (6, 2)), v.device).numpy()
    want = np.zeros((6, 2), np.float32)
    np.add.at(want, (rows, cols), values)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    kernel = next(u for u in scatter_add(v.uop, [r.uop, c.uop], (6, 2)).toposort() if u.op is Ops.CALL).arg.kernel
    program = linearize(kernel)
    adding = [u for u in program if u.op is Ops.RANGE and u.src[0].arg == 150]
    assert ordered_loops(program) == frozenset(adding)   # the zeroing loop may run in parallel
    assert "get_global_id" not in generate(kernel, OpenCLRenderer(), opts=[]).source   # one work-item adds


def test_a_gathers_gradient_is_a_scatter_add_at_any_size():
    """An embedding's gradient: 50k rows looked up 40k times would be 2e9 products as a one-hot sum."""
    rng = np.random.default_rng(8)
    table = rng.standard_normal((50_000, 4)).astype(np.float32)
    idx = rng.integers(0, 50_000, 40_000)
    w = xp.asarray(table, requires_grad=True)
    (w[xp.asarray(idx)] * 2.0).sum().backward()
    want = np.zeros_like(table)
    np.add.at(want, idx, 2.0)
    np.testing.assert_array_equal(w.grad.numpy(), want)


def test_a_loop_declared_independent_is_spread_though_data_address_its_memory():
    """Gauss-Jordan swaps rows found by a search (positions from data): its batch loop, declared
    independent (each matrix in its own part of memory), runs one matrix a work-item, not all in one."""
    from lazyarr import small_matrices as small
    a, b = xp.asarray(np.random.rand(100, 8, 8)), xp.asarray(np.random.rand(100, 8, 2))
    x, _, _ = small.gauss_jordan(a, b)
    kernel = next(u for u in x.uop.toposort() if u.op is Ops.CALL).arg.kernel
    src = generate(kernel, OpenCLRenderer(), opts=[]).source
    assert src.startswith("// lazyarr launch 100\n") and src.count("get_global_id") == 1
