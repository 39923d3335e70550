"""Fusion decisions, asserted with kernel counts from Tensor.schedule()."""
import numpy as np
import pytest

import lazyarr as xp
from lazyarr import settings
from tests.conftest import DEVICE
from tests.helpers import assert_close


def kernels(t):
    """The kernels realizing t. (Called outside an assert: pytest's rewriting would keep the
    expression's intermediate arrays alive, and a realization stores what live arrays hold.)"""
    return len(t.schedule())


def test_elementwise_and_movement_chains_are_one_kernel():
    a, b, c = xp.ones((8, 16)), xp.ones((8, 16)), xp.ones(16)
    count = kernels(xp.exp(a * b + c) * 0.5 - xp.sqrt(xp.abs(a)) + xp.tanh(c))
    assert count == 1
    count = kernels((a.T + b.T)[::2, 1:].reshape(-1) * 2)
    assert count == 1
    count = kernels(xp.flip(a, axis=0)[:, ::-3] + 1)
    assert count == 1


def test_a_reduction_fuses_with_the_elementwise_work_that_feeds_it():
    a, b, c = xp.ones((8, 16)), xp.ones((8, 16)), xp.ones(16)
    count = kernels(xp.sum(xp.exp(a * b + c)))
    assert count == 1
    count = kernels(xp.sum(xp.exp(a * b + c), axis=1) * 2 + 1)
    assert count == 1


def test_a_broadcast_reduction_is_materialised():
    x = xp.asarray(np.random.default_rng(0).standard_normal((6, 7)))
    y = xp.sum(xp.exp(x - xp.max(x, axis=1, keepdims=True)), axis=1)
    count = kernels(y)
    assert count <= 2
    xn = np.asarray(x)
    assert_close(y, np.exp(xn - xn.max(axis=1, keepdims=True)).sum(axis=1), rtol=1e-12)


def test_matmul_is_one_kernel():
    a, b = xp.ones((4, 5)), xp.ones((5, 6))
    count = kernels(a @ b)
    assert count == 1
    count = kernels(xp.maximum(a @ b + xp.ones(6), 0))
    assert count == 1


def test_a_costly_value_broadcast_along_an_outer_loop_gets_a_buffer():
    # exp(a)[i, k] is read for every j of a (10, 128) output: fused, it would run 128 times per value
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 10), dtype=np.float32), rng.standard_normal((64, 128), dtype=np.float32)
    y = xp.exp(xp.asarray(a)).T @ xp.asarray(b)
    items = y.schedule()
    assert len(items) == 2 and items[0].buffers[0].size == 64 * 10
    assert_close(y, np.exp(a).T @ b, rtol=1e-4, atol=1e-4)
    # cheap work stays fused, and so does a costly value broadcast along an inner loop only
    count = kernels((xp.asarray(a) * 2).T @ xp.asarray(b))
    assert count == 1
    count = kernels(xp.exp(xp.asarray(a[:, :1])) * xp.asarray(a))
    assert count == 1


def test_a_reduction_read_at_several_indexings_gets_a_buffer():
    # a softmax of logits x @ w: the row's max reads every logit in its loop and the output reads
    # them again; fused, the (64, 10, 128) matmul would run twice
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((64, 128), dtype=np.float32), rng.standard_normal((128, 10), dtype=np.float32)
    logits = xp.asarray(x) @ xp.asarray(w)
    y = xp.exp(logits - xp.max(logits, axis=1, keepdims=True))
    items = y.schedule()
    assert len(items) == 2 and items[0].buffers[0].size == 64 * 10
    ln = x @ w
    assert_close(y, np.exp(ln - ln.max(axis=1, keepdims=True)), rtol=1e-4, atol=1e-5)
    if DEVICE.startswith("opencl"):
        return   # (where work-items share the output loops, any reduction not over all of them gets a buffer)
    # a small reduction read twice stays fused (recomputing it costs less than a kernel), and a row's
    # max read by every element of its row is computed once per row either way
    def small_softmax_like(v):   # (its sum dead once it returns: a held one would be stored)
        s = xp.sum(v, axis=1, keepdims=True)
        return xp.exp(s - xp.max(s))
    count = kernels(small_softmax_like(xp.asarray(x[:4, :8])))
    assert count == 1
    xs = xp.asarray(x)
    count = kernels(xp.exp(xs - xp.max(xs, axis=1, keepdims=True)))
    assert count == 1


def test_a_chain_of_matmuls_is_scheduled_in_two_rounds(monkeypatch):
    # each layer's matmul would be nested in the next one's: one round of rangeify finds them, and
    # the points chosen in that round stay, so the next round finds nothing new
    from lazyarr.compiler import schedule
    monkeypatch.setattr(settings, "schedule_disk", False)   # (scheduled here, not found on disk)
    rounds = []
    find = schedule.find_realize_points
    monkeypatch.setattr(schedule, "find_realize_points", lambda roots, extra=frozenset(): rounds.append(1) or
                        find(roots, extra))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 48), dtype=np.float32)
    ws = [rng.standard_normal((48, 48), dtype=np.float32) * 0.1 for _ in range(8)]
    h, hn, outs = xp.asarray(x), x.astype(np.float64), []
    for i, w in enumerate(ws):
        h = xp.maximum(h @ xp.asarray(w) + 0.25, 0.0) * (1.0 + i)
        hn = np.maximum(hn @ w + 0.25, 0.0) * (1.0 + i)
        outs.append((xp.sum(h, axis=0), hn.sum(axis=0)))
    assert len(schedule.create_schedule([(t.uop, t.device) for t in [h, *(o for o, _ in outs)]]).items) == 16
    assert len(rounds) == 2
    xp.realize(h, *(o for o, _ in outs))
    for got, want in [(h, hn), *outs]:   # float32 against float64: relative to the values' size
        assert_close(got, want.astype(np.float32), rtol=1e-4, atol=1e-5 * np.abs(want).max())


def test_a_reshaped_view_of_a_held_value_is_a_view_of_its_buffer():
    """A view keeps the array it views alive (NumPy's `.base`), so `sum(x, axis=1)[:, None]` or
    `(A @ B).reshape(...)` stores the viewed value too (held values); the view is then that
    buffer reshaped, not a second kernel copying it (dask's matmul chunks are `matmul(a, b)[...,
    None, :]`: 20% of each chunk's time). Writes through the view and into its base still behave
    as NumPy's."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((48, 40)).astype(np.float32), rng.standard_normal((40, 24)).astype(np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    for make, want in ((lambda: (x @ y)[..., None, :], (a @ b)[..., None, :]),
                       (lambda: xp.sum(x, axis=1)[:, None], a.sum(axis=1)[:, None]),
                       (lambda: xp.reshape(xp.max(x, axis=0), (5, 8)), a.max(axis=0).reshape(5, 8))):
        t = make()
        count = kernels(t)
        assert count == 1
        assert_close(t, want, rtol=1e-5, atol=1e-5)
    for mod in (np, xp):   # writes through the view and into its base, after it was realized
        s = mod.sum(mod.asarray(a), axis=1)
        v = s[:, None]
        np.asarray(v)
        s += 1
        v[3, 0] = -7.0
        if mod is np:
            want_s, want_v = s.copy(), v.copy()
    assert_close(s, want_s, rtol=1e-5, atol=1e-5)
    assert_close(v, want_v, rtol=1e-5, atol=1e-5)


def test_large_reductions_joined_by_position_get_buffers_of_their_own():
    """The pieces of a join (concatenate, stack) that compute large reductions are kernels of their
    own; fused, the join selects between them by position, computing every piece everywhere."""
    rng = np.random.default_rng(3)
    a, b, c, d = (rng.standard_normal((160, 130)).astype(np.float32) for _ in range(4))
    x, y, z, w = (xp.asarray(v) for v in (a, b, c, d))
    joined = xp.concatenate([x @ y.T, z @ w.T])
    count = kernels(joined)
    assert count == 3
    assert_close(joined, np.concatenate([a @ b.T, c @ d.T]), rtol=1e-4, atol=1e-4)
    stacked = xp.stack([xp.sum(xp.exp(x), axis=0), xp.max(z, axis=0)], axis=1)
    count = kernels(stacked)
    assert count == 3
    assert_close(stacked, np.stack([np.exp(a).sum(axis=0), c.max(axis=0)], axis=1), rtol=1e-5, atol=1e-4)
    small = xp.stack([xp.sum(x[:10, :10]), xp.max(z[:10, :10])])   # (small reductions stay fused)
    count = kernels(small)
    assert count == 1
    assert_close(small, np.array([a[:10, :10].sum(), c[:10, :10].max()]), rtol=1e-5, atol=1e-5)


def test_contiguous_is_a_fusion_boundary():
    a = xp.ones((4, 4))
    # the contiguous value gets a buffer of its own: stored by the same kernel when its user reads it
    # elementwise (a kernel of two outputs), by a kernel of its own when its user reads it otherwise
    items = ((a * 2).contiguous() + 1).schedule()
    assert len(items) == 1 and items[0].outputs == 2
    count = kernels((a * 2).contiguous().T + 1)
    assert count == 2
    count = kernels(xp.sum((a * 2).contiguous(), axis=1))
    assert count == 2


def test_already_realized_inputs_cost_no_kernel():
    a = xp.arange(12.0).reshape(3, 4).realize()
    count = kernels(a)
    assert count == 0
    count = kernels(a.reshape(12))
    assert count == 0
    count = kernels(a.T)
    assert count == 1


def test_size_zero_values_need_no_kernel():
    count = kernels(xp.ones((0, 3)) * 2)
    assert count == 0
    assert (xp.ones((0, 3)) * 2).numpy().shape == (0, 3)


def test_padded_reads_are_not_miscompiled():
    # gcc 12 -O3 -march=native if-converted a load under a condition into zeros (roll by 4 of 12)
    a = np.arange(12, dtype=np.int32).reshape(4, 3)
    for shift in range(-13, 14):
        assert_close(xp.roll(xp.asarray(a), shift), np.roll(a, shift))


def test_selected_loads_are_not_miscompiled():
    # gcc 12 -O3 -march=native turned where(c, 0, w[i]) with w's load inside the ternary into
    # zeros on every other element; loads are now statements of their own
    b = np.array([0.0, 2, 2, 2, 2, 2] * 5)
    w = np.linspace(0.5, 1.5, b.size)
    got = xp.where(xp.asarray(b) < 1.0, 0.0, xp.asarray(w)) * xp.asarray(b)
    assert_close(got, np.where(b < 1.0, 0.0, w) * b)


@pytest.mark.parametrize("fn", ["exp", "sinh", "asinh", "arctan2"])
def test_an_expensive_value_read_by_several_outputs_is_computed_once(fn):
    # every function of the op table's one cost class counts as expensive (for the scheduler sinh,
    # asinh and arctan2 cost one operation, while kernel optimisation counted sinh as expensive)
    from lazyarr.compiler.schedule import create_schedule
    x = xp.asarray(np.random.default_rng(2).standard_normal(1 << 15))
    f = (lambda v: getattr(xp, fn)(v, v * 0.5)) if fn == "arctan2" else getattr(xp, fn)
    u = f(x)
    a, b = u * 2, u + 1
    items = create_schedule([(a.uop, a.device), (b.uop, b.device)]).items
    # u gets a buffer; u, a and b are stored by one kernel of three outputs, which computes u once
    assert len(items) == 1 and items[0].outputs == 3
    xp.realize(a, b)
    fn_np = {"exp": np.exp, "sinh": np.sinh, "asinh": np.arcsinh, "arctan2": lambda v: np.arctan2(v, v * 0.5)}[fn]
    un = fn_np(np.asarray(x))
    assert_close(a, un * 2, rtol=1e-12, atol=1e-15)
    assert_close(b, un + 1, rtol=1e-12, atol=1e-15)


def test_a_graph_deeper_than_the_recursion_limit_is_scheduled_and_cached():
    # the schedule cache's walk recurses; past the interpreter's limit it runs again with a limit the
    # graph's size allows, and restores the limit. The one kernel's expression, 2400 operations deep,
    # is cut into statements (OpenCL's compiler nests at most 256 brackets)
    import sys
    from lazyarr.compiler.walk import structure_key

    def chain(start):
        x = xp.asarray(np.full(4, start, np.float32))
        for _ in range(sys.getrecursionlimit() + 200):
            x = x * 0.5 + 1.0
        return x
    limit = sys.getrecursionlimit()
    a, b = chain(1.0), chain(3.0)
    assert structure_key([a.uop], [a.device]).key == structure_key([b.uop], [b.device]).key
    assert sys.getrecursionlimit() == limit
    assert_close(a, np.full(4, 2.0, np.float32))   # x -> x/2 + 1 converges to 2
    assert_close(b, np.full(4, 2.0, np.float32))
