"""Kernels written in the IR by hand (`lazyarr.compiler.ir_kernels`): private arrays, the loops
that update them running in order, the outermost loop spread, kernel optimisation leaving them as
written, and CALL nodes running them on the device like generated kernels."""
import numpy as np
import pytest

import lazyarr as xp
from lazyarr import dtypes
from lazyarr.arrays import wrap
from lazyarr.compiler.codegen import generate
from lazyarr.compiler.ir_kernels import Kernel, after, arg, at, end, ir_call, load, scatter_last, sink, store
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
