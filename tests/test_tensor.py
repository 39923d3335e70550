"""The lazy Tensor: metadata without computing, what realizes, conversions and printing."""
import gc
import weakref

import numpy as np
import pytest

import lazyarr as xp
from lazyarr.runtime import executor, items
from tests.helpers import watch_launches


def count_runs(monkeypatch):
    runs = []
    watch_launches(monkeypatch, lambda items: runs.append(len(items)))
    return runs


def test_metadata_is_known_without_computing(monkeypatch):
    runs = count_runs(monkeypatch)
    t = xp.exp(xp.ones((3, 4), dtype=xp.float32)) @ xp.ones((4, 2), dtype=xp.float32)
    assert (t.shape, t.dtype, t.ndim, t.size, t.device) == ((3, 2), xp.float32, 2, 6, xp.get_device(None))
    assert not t.is_realized
    assert runs == []


@pytest.mark.parametrize("convert", [np.asarray, lambda t: t.numpy(), lambda t: t.item(), lambda t: t.tolist(),
                                     float, int, bool, repr, str, lambda t: t.realize()])
def test_conversions_realize(monkeypatch, convert):
    runs = count_runs(monkeypatch)
    t = xp.sum(xp.arange(4.0)) + 1
    convert(t)
    assert runs == [1]
    assert t.is_realized


def test_a_realized_value_is_not_recomputed(monkeypatch):
    runs = count_runs(monkeypatch)
    x = xp.sqrt(xp.arange(5.0))
    y = x * 2
    x.realize()
    y.realize()   # reads x's buffer: one kernel, not a fused recomputation of sqrt
    assert runs == [1, 1]
    z = x + 1
    assert "sqrt" not in z.schedule()[0].source


def test_realizing_frees_the_graph():
    x = xp.arange(10.0)
    y = x * 3
    node = weakref.ref(y.uop)
    y.realize()
    gc.collect()
    assert node() is None


def test_realize_several_tensors_at_once_shares_work():
    a = xp.exp(xp.arange(8.0))
    b, c = a + 1, a * 2
    xp.realize(b, c)
    np.testing.assert_allclose(np.asarray(b), np.exp(np.arange(8.0)) + 1)
    np.testing.assert_allclose(np.asarray(c), np.exp(np.arange(8.0)) * 2)


@pytest.mark.cpu_only
def test_numpy_is_a_read_only_view_of_the_buffer():
    t = xp.arange(6.0).reshape(2, 3)
    a = t.numpy()
    assert a.shape == (2, 3) and not a.flags.writeable
    assert np.shares_memory(a, t.numpy())
    assert np.asarray(t, dtype=np.float32).dtype == np.float32


def test_numpy_of_a_device_array_is_a_writable_copy():
    """Off the host, numpy() copies: the copy is the caller's (scikit-learn's KMeans subtracts the
    mean in place from what np.asarray gave it, having seen that it shares no memory)."""
    t = xp.arange(6.0)
    a = np.asarray(t)
    if t.device.host_memory:
        assert not a.flags.writeable
        return
    assert a.flags.writeable and not np.shares_memory(a, np.asarray(t))
    a -= 1
    assert t.numpy().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_repr_is_numpys():
    on = "" if xp.get_device(None).name == "cpu" else f", device='{xp.get_device(None).name}'"
    cases = [[1.0, 2.0], np.arange(6).reshape(2, 3), np.zeros((2, 2), np.int8), np.ones(3, np.float16),
             np.array([[True, False]]), np.array([1.5 - 2j]), np.arange(2000.0), np.zeros((0, 3), np.float32)]
    for values in cases:
        want = repr(np.asarray(values))
        for made in (xp.asarray(values), xp.asarray(np.asarray(values).T).T, xp.flip(xp.flip(xp.asarray(values), axis=0), axis=0)):
            assert repr(made) == want[:-1] + on + ")"
    assert repr(xp.arange(6).reshape(2, 3)) == f"array([[0, 1, 2],\n       [3, 4, 5]]{on})"
    # 0-d values as NumPy's scalars, which its reductions and indexing return
    assert repr(xp.sum(xp.arange(4))) == f"np.int64(6{on})"
    assert repr(xp.asarray(3.5, dtype=xp.float32)) == f"np.float32(3.5{on})"
    assert repr(xp.asarray([1, 2])[0] > 0) == ("np.True_" + (f" ({on[2:]})" if on else ""))
    assert str(xp.asarray([1, 2])) == "[1 2]"


def test_scalar_conversions():
    assert float(xp.asarray(2.5)) == 2.5
    assert int(xp.asarray(7)) == 7
    assert bool(xp.asarray([True])) is True
    assert xp.asarray(3).__index__() == 3
    assert [10, 20, 30][xp.asarray(1)] == 20
    assert complex(xp.asarray(1.5)) == 1.5 + 0j
    assert xp.asarray([[1, 2]]).tolist() == [[1, 2]]
    assert xp.asarray(2.0).item() == 2.0


def test_conversion_errors():
    with pytest.raises(ValueError, match="ambiguous"):
        bool(xp.ones(2))
    with pytest.raises(TypeError):
        float(xp.ones(3))
    with pytest.raises(TypeError):
        xp.asarray(1.5).__index__()
    with pytest.raises(ValueError):
        xp.ones(3).item()


def test_schedule_lists_kernels_with_name_device_and_source():
    t = xp.exp(xp.asarray([1.0, 2.0, 3.0, 4.0])) * 2
    kernels = t.schedule()
    assert len(kernels) == 1
    k = kernels[0]
    assert k.name.startswith("E_") and k.device is xp.get_device(None)
    assert "void " + k.name in k.source and "data1" in k.source


def test_debug_prints_kernels_and_sources(monkeypatch, capsys):
    monkeypatch.setattr(xp.settings, "debug", 2)
    (xp.arange(3.0) * 5).realize()
    out = capsys.readouterr().out
    # a small kernel takes its sizes as arguments: E_n0, launched with its sizes (3, ...)
    assert "kernel E_n0" in out and "us" in out and "void E_n0" in out and "sizes (3" in out


def test_debug_3_prints_each_stage(monkeypatch, capsys):
    monkeypatch.setattr(xp.settings, "debug", 3)
    items._kernel_sources.clear()
    (xp.arange(7.0) * 11).realize()
    out = capsys.readouterr().out
    for stage in ("symbolic", "lower_reduce", "final_rewrite", "control_flow", "linearize"):
        assert f"--- {stage}" in out


def test_numpy_functions_dispatch_lazily():
    t = xp.asarray([1.0, 2.0])
    assert isinstance(np.exp(t), xp.Tensor)
    assert isinstance(np.asarray([[1.0]]) + t, xp.Tensor)
    np.testing.assert_allclose(np.sum(t), 3.0)
    assert isinstance(np.cumsum(t), xp.Tensor)
    assert isinstance(np.convolve(t, t), xp.Tensor)
    assert isinstance(np.vander(t), xp.Tensor)
    assert isinstance(np.ediff1d(t), np.ndarray)  # no lazy version: computed by NumPy on the host


def test_array_namespace():
    t = xp.ones(2)
    assert t.__array_namespace__() is xp
    assert t.__array_namespace__(api_version="2025.12") is xp
    with pytest.raises(ValueError):
        t.__array_namespace__(api_version="1999.01")
    assert xp.__array_api_version__ == "2025.12"


def test_dlpack_round_trip():
    t = xp.arange(6.0).reshape(2, 3)
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3))
    assert t.__dlpack_device__() == (1, 0)


def test_unknown_device_raises():
    with pytest.raises(ValueError, match="unknown device"):
        xp.ones(2, device="tpu")
