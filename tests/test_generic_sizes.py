"""Shape-generic kernels: a small kernel takes its sizes as arguments (lazyarr.compiler.rangeify), so
the same expression on arrays of other sizes reuses its compiled code; large kernels keep theirs in
the code for kernel optimisation."""
import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

import lazyarr as xp
from lazyarr.runtime import executor
from tests.conftest import DEVICE
from tests.helpers import assert_close


def expression(a):
    return (xp.exp(a) * 2 + a[::-1]).sum(axis=-1) if isinstance(a, xp.Tensor) else (np.exp(a) * 2 + a[::-1]).sum(axis=-1)


def test_one_compiled_kernel_serves_every_small_size():
    before = len(executor._programs)
    for n in (3, 5, 7, 11, 40):
        a = np.linspace(-1, 1, 2 * n, dtype=np.float32).reshape(2, n)
        t = expression(xp.asarray(a))
        (item,) = t.schedule()
        assert item.sizes and "n0" in item.source and str(n) not in item.name
        assert_close(t, expression(a), rtol=1e-5, atol=1e-5)
    assert len(executor._programs) - before == 1


def test_large_kernels_keep_their_sizes_in_the_code():
    a = np.ones((256, 128), np.float32)
    (item,) = expression(xp.asarray(a)).schedule()
    assert item.sizes == () and item.name == "r_256_128"


def test_the_setting_turns_them_off(monkeypatch):
    monkeypatch.setattr(xp.settings, "generic_sizes", 0)
    (item,) = expression(xp.asarray(np.ones((2, 6), np.float32))).schedule()
    assert item.sizes == () and "n0" not in item.source


@hsettings(max_examples=60, deadline=None)
@given(st.data())
def test_slices_pads_flips_reshapes_and_reductions_match_numpy(data):
    shape = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple))
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * 0.5 - 3
    key = tuple(slice(data.draw(st.integers(0, n - 1)), None, data.draw(st.sampled_from([1, 2, -1]))) for n in shape)
    before, after = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))   # concat pads its parts
    want, t = a[key], xp.asarray(a)[key]
    rest = want.shape[1:]
    want = np.concatenate([np.zeros((before, *rest)), want, np.ones((after, *rest))]) * 2 + 1
    t = xp.concat([xp.zeros((before, *rest), dtype=xp.float64), t, xp.ones((after, *rest), dtype=xp.float64)]) * 2 + 1
    assert_close(t, want)
    assert_close(xp.reshape(t, (-1,)), want.reshape(-1))
    assert_close(xp.sum(t, axis=0), want.sum(axis=0))
    assert_close(xp.max(xp.flip(t, axis=-1), axis=-1), np.flip(want, -1).max(-1))


def test_a_kernel_whose_load_is_dropped_finds_its_later_arguments():
    """A launch passes every buffer of the kernel; a load codegen drops (an input overwritten whole)
    must not shift the words after them: the sizes, and the thread count of a large kernel."""
    small = xp.asarray(np.arange(5, dtype=np.float32).reshape(1, 5))
    small[0, :] = xp.asarray(np.float32(-1))
    assert small.numpy().tolist() == [[-1.0] * 5]
    big = xp.asarray(np.zeros((1, 1 << 21), np.float32))
    big[0, :] = xp.exp(xp.ones(1 << 21, dtype=xp.float32))
    assert_close(big, np.full((1, 1 << 21), np.e, np.float32))


def test_shape_generic_updates_still_run_in_place():
    from lazyarr.compiler import schedule
    p = (xp.asarray(np.arange(12.0).reshape(3, 4)) * 1).realize()
    before = p._buffer().storage
    p[...] = p * 0.5 + 1
    p.realize()
    assert p._buffer().storage is before
    np.testing.assert_allclose(p.numpy(), np.arange(12.0).reshape(3, 4) * 0.5 + 1)


@pytest.mark.skipif(not DEVICE.startswith("opencl"), reason="an OpenCL device's")
def test_an_opencl_device_reads_its_capabilities_once_and_the_renderer_follows_them():
    dev = xp.get_device(DEVICE)
    caps = dev.capabilities
    assert caps.max_parameter_size >= 1024 and caps.max_work_group_size >= 1 and caps.local_mem_size > 0
    assert dev.renderer.param_bytes == caps.max_parameter_size and dev.fp64 == caps.fp64
    assert dev.long_loops == caps.cpu and 0 <= dev.renderer.group_size <= caps.max_work_group_size


def test_sizes_beyond_the_devices_parameter_space_travel_in_a_buffer(monkeypatch):
    """A device takes a bounded parameter list (NVIDIA's OpenCL: 4 KB; a CPU's C kernels take one
    pointer): past it, the sizes go in one buffer. On the CPU the kernel's arguments are one array."""
    a = np.random.default_rng(3).random((3, 37))
    if DEVICE.startswith("opencl"):
        monkeypatch.setattr(xp.get_device(DEVICE).renderer, "param_bytes", 24)
    d = xp.diff(xp.asarray(a), n=3)
    (item,) = d.schedule()
    assert item.sizes
    assert ("lz_sizes" in item.source) == DEVICE.startswith("opencl")
    assert_close(d, np.diff(a, n=3), rtol=1e-12, atol=1e-12)
