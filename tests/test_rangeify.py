"""Prepare and rangeify: the prepared normal form, fusion decisions, and kernel counts of typical
programs (asserted through Tensor.schedule())."""
import numpy as np
import pytest

import lazyarr as xp
from lazyarr import settings
from lazyarr.compiler.prepare import STRIDED_SPLIT_BYTES, broadcast_along, prepare, split_reduceop, split_strided
from lazyarr.compiler.uop import Ops
from tests.helpers import assert_close

rng = np.random.default_rng(0)


def kernels(t):
    return len(t.schedule())


# A device whose work-items each compute one output (OpenCL: parallel_loops) realizes a reduction
# that the whole array reads first: each work-item would compute it again. (A row's reduction
# read by the row stays fused: a work-group shares it.)
PER_ITEM = bool(getattr(xp.asarray(0.0).device.renderer, "parallel_loops", 0))


def data(*shape):
    return xp.asarray(rng.standard_normal(shape))


# ---- kernel counts ----

def test_transpose_plus_itself_is_one_kernel():
    a = data(5, 5)
    assert kernels(a.T + a) == 1


def test_strided_slices_of_two_arrays_are_one_kernel():
    x, y = data(10), data(10)
    out = x[::2] + y[1::2]
    assert kernels(out) == 1
    assert_close(out, np.asarray(x)[::2] + np.asarray(y)[1::2])


def test_concat_of_two_computed_arrays_is_one_kernel():
    a, b = data(3, 4), data(2, 4)
    out = xp.concat([xp.exp(a), b * 2])
    assert kernels(out) == 1
    assert_close(out, np.concatenate([np.exp(np.asarray(a)), np.asarray(b) * 2]), rtol=1e-12)


def test_matmul_bias_relu_is_one_kernel():
    x, w, b = data(4, 8), data(8, 3), data(3)
    out = xp.maximum(x @ w + b, 0)
    assert kernels(out) == 1
    assert_close(out, np.maximum(np.asarray(x) @ np.asarray(w) + np.asarray(b), 0), rtol=1e-12)


def test_softmax_over_rows_is_at_most_two_kernels():
    x = data(6, 9)
    e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
    out = e / xp.sum(e, axis=1, keepdims=True)
    assert kernels(out) <= 2
    xn = np.asarray(x)
    en = np.exp(xn - xn.max(1, keepdims=True))
    assert_close(out, en / en.sum(1, keepdims=True), rtol=1e-12)


def layer_norm(x):
    mu = xp.mean(x, axis=1, keepdims=True)
    var = xp.mean((x - mu) ** 2, axis=1, keepdims=True)
    return (x - mu) / xp.sqrt(var + 1e-5)   # (mu and var dead: held, they would be stored)


def test_layer_norm_is_at_most_two_kernels():
    x = data(6, 9)
    out = layer_norm(x)
    assert kernels(out) <= 2
    xn = np.asarray(x)
    want = (xn - xn.mean(1, keepdims=True)) / np.sqrt(xn.var(1, keepdims=True) + 1e-5)
    assert_close(out, want, rtol=1e-10)


def test_reduction_over_a_permuted_input_is_one_kernel():
    x = data(4, 5, 6)
    out = xp.sum(xp.permute_dims(x, (2, 0, 1)), axis=(1, 2))
    assert kernels(out) == 1
    assert_close(out, np.asarray(x).sum(axis=(0, 1)), rtol=1e-12)


def test_a_large_sum_is_split_in_two_kernels():
    a = xp.asarray(rng.standard_normal(1 << 24).astype(np.float32))
    s = xp.sum(a)
    assert kernels(s) == 2
    a64 = np.asarray(a).astype(np.float64)
    np.testing.assert_allclose(float(s), a64.sum(), atol=1e-6 * np.abs(a64).sum())   # float32 accumulation


def test_the_split_can_be_turned_off(monkeypatch):
    ones = np.ones(1 << 20, np.float32)
    assert kernels(xp.sum(xp.asarray(ones))) == 2
    # the same graph structure scheduled again after the setting changed: the schedule cache
    # must not answer with the split schedule
    monkeypatch.setattr(settings, "split_reduceop", False)
    assert kernels(xp.sum(xp.asarray(ones))) == 1


def test_the_split_threshold_and_size_settings(monkeypatch):
    ones = np.ones(1 << 20, np.float32)
    monkeypatch.setattr(settings, "reduceop_split_threshold", (1 << 20) + 1)   # input too small now
    assert kernels(xp.sum(xp.asarray(ones))) == 1
    monkeypatch.setattr(settings, "reduceop_split_threshold", 32768)
    monkeypatch.setattr(settings, "reduceop_split_size", 2)   # the first part's output at most 4 elements
    t = xp.sum(xp.asarray(ones))
    assert kernels(t) == 1 and float(t) == 1 << 20


def test_a_reduction_broadcast_along_an_outer_axis_gets_its_own_buffer():
    x = data(4, 6)
    out = x - xp.sum(x, axis=0, keepdims=True)      # column sums used by every row
    assert kernels(out) == 2
    assert_close(out, np.asarray(x) - np.asarray(x).sum(0, keepdims=True), rtol=1e-12)


def test_a_reduction_broadcast_everywhere_runs_once_before_the_loop():
    x = data(4, 6)
    out = x - xp.mean(x)
    assert kernels(out) == (2 if PER_ITEM else 1)
    assert_close(out, np.asarray(x) - np.asarray(x).mean(), rtol=1e-12)


def test_nested_reductions_fuse():
    x = data(3, 4, 5)
    out = xp.sum(xp.max(x, axis=2) * 2, axis=1)
    assert kernels(out) == 1
    assert_close(out, (np.asarray(x).max(2) * 2).sum(1), rtol=1e-12)


# ---- prepare ----

def test_detach_and_markers_are_their_source():
    x = xp.ones(3)
    (root,) = prepare([x.detach().uop])
    assert root is x.uop


def test_materialising_storage_is_the_storage():
    x = xp.arange(5.0).realize()
    (root,) = prepare([x.contiguous().uop])
    assert root is x.uop
    assert kernels(x.contiguous()) == 0


def test_materialising_a_copy_is_the_copy():
    devices = xp.__array_namespace_info__().devices()
    if len(devices) < 2:
        pytest.skip("one device: every copy is to the same device")
    x = xp.arange(5.0, device=devices[0]).realize()
    moved = x.to_device(devices[1]).contiguous()
    items = moved.schedule()
    assert len(items) == 1 and type(items[0]).__name__ == "CopyItem"   # the copy's buffer, no kernel after it
    assert_close(moved, np.arange(5.0))


def test_copy_to_the_same_device_is_the_value():
    x = xp.arange(5.0).realize()
    assert kernels(x.to_device(x.device) + 1) == 1


def test_reductions_of_an_empty_axis_are_their_identity():
    z = xp.ones((0, 3))
    for fn, want in ((xp.sum, 0.0), (xp.prod, 1.0), (xp.any, False), (xp.all, True)):
        r = fn(z, axis=0)
        assert kernels(r) <= 1 and np.array_equal(np.asarray(r), np.full(3, want))
    with pytest.raises(ValueError, match="identity"):   # as NumPy: max and min have none
        xp.max(z, axis=0)


def test_values_with_an_empty_axis_are_constants():
    x = xp.ones((0, 3))
    (root,) = prepare([(xp.exp(x) * 2).uop])
    assert root.op in (Ops.EXPAND, Ops.CONST, Ops.RESHAPE) and all(n.op is not Ops.EXP for n in root.toposort())
    assert_close(xp.sum(xp.exp(x), axis=0), np.zeros(3))


def test_split_reduceop_picks_the_largest_divisor_and_skips_broadcast_axes():
    big = xp.asarray(np.ones(1 << 20, np.float32))
    split = split_reduceop(next(u for u in xp.sum(big).uop.toposort() if u.op is Ops.REDUCE_AXIS))
    first = next(u for u in split.toposort() if u.op is Ops.CONTIGUOUS).src[0]
    assert first.src[0].shape == (256, 4096)
    stretched = xp.broadcast_to(xp.ones((1, 1)), (1 << 20, 1))
    red = next(u for u in xp.sum(stretched, axis=0).uop.toposort() if u.op is Ops.REDUCE_AXIS)
    assert broadcast_along(red.src[0], 0) and split_reduceop(red) is None


def test_a_column_reduction_of_long_rows_is_split_into_groups_of_rows_that_fit_in_l2():
    """sum(x, axis=0) of a large matrix: groups of consecutive rows (as many as fit in half an L2
    cache) summed first, then the groups; not for short rows (a strip of columns is then the whole
    row), small arrays, several reduced axes or an axis read by broadcasting."""
    red = next(u for u in xp.sum(xp.empty((4096, 4096)), axis=0).uop.toposort() if u.op is Ops.REDUCE_AXIS)
    first = next(u for u in split_strided(red).toposort() if u.op is Ops.CONTIGUOUS).src[0]
    assert first.src[0].shape == (256, 16, 4096) and first.arg[1] == (1,)   # 16 rows of 32 KB float64
    for x, axes in ((xp.empty((1 << 16, 64)), (0,)), (xp.empty((64, 1024)), (0,)), (xp.empty((512, 32, 64)), (0, 1)),
                    (xp.broadcast_to(xp.empty((1, 4096)), (4096, 4096)), (0,))):
        red = next(u for u in xp.sum(x, axis=axes).uop.toposort() if u.op is Ops.REDUCE_AXIS)
        assert split_strided(red) is None
    assert 64 * 1024 * 8 < STRIDED_SPLIT_BYTES


@pytest.mark.parametrize("shape,dtype", [((4096, 1024), np.float32), ((1031, 2048), np.float64), ((3000, 3, 700), np.float32),
                                         ((2048, 1024), np.int32)])
def test_split_column_reductions_against_numpy(shape, dtype):
    """The split reductions (on a CPU) of arrays made every way: a buffer, an expression, a
    transposed view; sums as accurate as before the split (the groups are short, the
    partials few: float32 within 4e-7 of the float64 sum, NumPy's own column sum ~2e-6)."""
    rng = np.random.default_rng(0)
    h = (rng.standard_normal(shape) * 10).astype(dtype)
    x = xp.asarray(h)
    cases = [(xp.sum(x, axis=0), h.astype(np.float64).sum(0)), (xp.max(x, axis=0), h.max(0)),
             (xp.mean(x * 2 + 1, axis=0), (h.astype(np.float64) * 2 + 1).mean(0)),
             (xp.min(xp.sin(x), axis=0), np.sin(h.astype(np.float64)).min(0))]
    if len(shape) == 2:
        t = xp.asarray(np.ascontiguousarray(h.T)).T   # a transposed view: its rows are the columns in memory
        cases.append((xp.sum(t, axis=0), h.astype(np.float64).sum(0)))
    for got, want in cases:
        got = np.asarray(got)
        scale = max(np.abs(want).max(), 1.0)
        assert np.abs(got - want).max() <= (4e-7 if got.dtype == np.float32 else 1e-13) * scale


@pytest.mark.parametrize("n", [1 << 16, 3 * 5 * 7 * 11 * 13 * 17])
def test_split_sums_are_exact_for_integers(n):
    a = np.arange(n, dtype=np.int64) % 7
    assert int(xp.sum(xp.asarray(a))) == int(a.sum())


# ---- bitcasts, contiguous views, stores into broadcasts ----

@pytest.mark.parametrize("src,dst", [(np.float32, np.uint8), (np.float32, np.int16), (np.float64, np.uint32),
                                     (np.uint8, np.float32), (np.int16, np.float64), (np.int32, np.float32),
                                     (np.uint8, np.uint64)])
def test_views_between_item_sizes_are_shifts_and_masks(src, dst):
    a = (np.random.default_rng(1).standard_normal((3, 16)) * 1000).astype(src)
    t = xp.asarray(a).view(dst)
    assert not any(n.op is Ops.BITCAST and n.dtype.itemsize != n.src[0].dtype.itemsize
                   for n in prepare([t.uop])[0].toposort())
    np.testing.assert_array_equal(np.asarray(t), a.view(dst))


def test_view_errors():
    with pytest.raises(ValueError):
        xp.asarray(1.0).view(xp.uint8)
    with pytest.raises(ValueError):
        xp.ones(3, dtype=xp.uint8).view(xp.float32)


def test_contiguous_view_finds_runs_and_refuses_the_rest():
    from lazyarr.compiler.prepare import contiguous_view
    x = xp.arange(24.0).realize()
    buf = x.uop
    assert contiguous_view(x.reshape(4, 6)[1:3].uop) == (buf, 6)
    assert contiguous_view(x[3:9].reshape(2, 3).uop) == (buf, 3)
    assert contiguous_view(x.reshape(2, 12).T.T.uop) == (buf, 0)
    assert contiguous_view(x.reshape(4, 6)[:, 1:3].uop) is None        # skips elements
    assert contiguous_view(x.reshape(4, 6).T.uop) is None              # reorders
    assert contiguous_view(xp.flip(x).uop) is None                     # mirrors
    assert contiguous_view(xp.broadcast_to(x[:1], (3,)).uop) is None   # repeats
    from lazyarr.graph import pad_uop
    assert contiguous_view(pad_uop(x.uop, ((1, 1),))) is None           # pads
    assert contiguous_view(x[:0].uop) is None                          # empty
    c = xp.exp(x)
    assert contiguous_view(c.reshape(2, 12)[1].uop) == (c.uop, 12)     # a computed value


@pytest.mark.cpu_only
def test_assign_updates_in_place_and_refuses_broadcasts():
    z = xp.arange(5.0).realize()
    storage = z.numpy().ctypes.data
    z.assign(z * 2 + 1)
    np.testing.assert_array_equal(z.numpy(), np.arange(5.0) * 2 + 1)
    assert z.numpy().ctypes.data == storage      # nothing else could read the old value: in place
    kept = z * 1
    z.assign(z + 100)
    np.testing.assert_array_equal(kept.numpy(), np.arange(5.0) * 2 + 1)   # recorded before: old value
    with pytest.raises(ValueError, match="broadcast"):
        xp.broadcast_to(xp.ones(3), (2, 3)).assign(xp.zeros((2, 3)))
    with pytest.raises(ValueError, match="broadcast"):
        xp.broadcast_to(xp.ones(3), (2, 3))[0].assign(xp.zeros(3))
    with pytest.raises(ValueError):
        xp.ones(3).assign(xp.ones(4))


def test_a_constant_value_realized_on_one_device_is_computed_again_on_another():
    devices = xp.__array_namespace_info__().devices()
    if len(devices) < 2:
        pytest.skip("one device")
    first = xp.arange(6.0, device=devices[0]) * 1
    first.realize()                      # the node arange(6.0) * 1 now has a buffer on devices[0]
    again = xp.arange(6.0, device=devices[1]) * 1 + xp.ones(6, device=devices[1])
    assert all(it.device == devices[1] for it in again.schedule())
    assert_close(again, np.arange(6.0) + 1)
    assert again._buffer().device == devices[1]
