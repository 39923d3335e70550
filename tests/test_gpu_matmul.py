"""The tiled matrix product of GPUs (lazyarr.gpu_matmul), forced on whatever OpenCL device the
suite runs on (PoCL in CI; a GPU takes it by itself for large products): values against NumPy over
shapes that are and are not multiples of the tiles, batches on both sides or one, float64, mixed
dtypes, operands made every way (lazy expressions, transposed and sliced views, realized buffers),
an epilogue, and gradients against PyTorch. Runs in the OpenCL pass of the suite only."""
import numpy as np
import pytest

import lazyarr as xp
from lazyarr import gpu_matmul
from tests.conftest import DEVICE

pytestmark = pytest.mark.skipif(not DEVICE.startswith("opencl"), reason="the tiled product is OpenCL's")

rng = np.random.default_rng(11)


@pytest.fixture
def tiled(monkeypatch):
    """The device takes the tiled product as a GPU does, for products of any size from 64 on."""
    monkeypatch.setattr(xp.asarray(1.0).device, "long_loops", False)
    monkeypatch.setattr(gpu_matmul, "MIN_WORK", 1)
    monkeypatch.setattr(gpu_matmul, "MIN_WORK_BATCHED", 1)
    monkeypatch.setattr(gpu_matmul, "MIN_SIDE", 64)


def kernels(y) -> list[str]:
    return [k.name for k in y.schedule()]


def check(y, want, rtol=2e-5):
    assert any(n.startswith("lz_gemm") for n in kernels(y)), kernels(y)
    got = y.numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


@pytest.mark.parametrize("n,k,m", [(64, 1, 64), (128, 16, 128), (130, 77, 300), (257, 129, 65), (200, 500, 131)])
def test_values_at_tile_edges(tiled, n, k, m):
    a, b = rng.standard_normal((n, k)).astype(np.float32), rng.standard_normal((k, m)).astype(np.float32)
    check(xp.asarray(a) @ xp.asarray(b), a @ b)


@pytest.mark.parametrize("sa,sb", [((3, 70, 33), (3, 33, 90)), ((70, 33), (2, 33, 90)), ((2, 70, 33), (33, 90)),
                                   ((2, 1, 70, 9), (1, 1, 9, 80))])
def test_batches(tiled, sa, sb):
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    check(xp.asarray(a) @ xp.asarray(b), a @ b)


def test_batches_broadcast_against_each_other_take_the_generated_product(tiled):
    a, b = rng.standard_normal((2, 1, 70, 9)).astype(np.float32), rng.standard_normal((3, 9, 80)).astype(np.float32)
    y = xp.asarray(a) @ xp.asarray(b)
    assert not any(n.startswith("lz_gemm") for n in kernels(y))
    np.testing.assert_allclose(y.numpy(), a @ b, rtol=2e-5, atol=1e-4)


def test_float64_and_mixed_dtypes(tiled):
    if not xp.asarray(1.0).device.fp64:
        pytest.skip("no float64 on this device")
    a, b = rng.standard_normal((100, 70)), rng.standard_normal((70, 90)).astype(np.float32)
    check(xp.asarray(a) @ xp.asarray(b), a @ b, rtol=1e-12)


def test_operands_made_every_way(tiled):
    a, b = rng.standard_normal((90, 150)).astype(np.float32), rng.standard_normal((150, 100)).astype(np.float32)
    x, w = xp.asarray(a), xp.asarray(b)
    check(xp.sin(x) * 2 @ (w + 1), (np.sin(a) * 2) @ (b + 1), rtol=1e-4)          # lazy expressions
    check(x.T.T @ w.T.T, a @ b)
    check(w.T @ x.T, b.T @ a.T)                                                    # transposed views
    check(x[::1, 10:140] @ w[5:135, ::-1], a[:, 10:140] @ b[5:135, ::-1])          # slices
    check(xp.ones((64, 64), dtype=xp.float32) @ xp.arange(64 * 80, dtype=xp.float32).reshape(64, 80),
          np.ones((64, 64), np.float32) @ np.arange(64 * 80, dtype=np.float32).reshape(64, 80))
    x.realize()
    check(x @ w, a @ b)                                                            # a realized buffer


def test_epilogue_and_reuse(tiled):
    a, b = rng.standard_normal((70, 65)).astype(np.float32), rng.standard_normal((65, 66)).astype(np.float32)
    bias = rng.standard_normal(66).astype(np.float32)
    y = xp.maximum(xp.asarray(a) @ xp.asarray(b) + xp.asarray(bias), 0.0)
    np.testing.assert_allclose(y.numpy(), np.maximum(a @ b + bias, 0), rtol=2e-5, atol=1e-4)
    c = xp.asarray(a) @ xp.asarray(b)
    np.testing.assert_allclose((c @ c.T).numpy(), (a @ b) @ (a @ b).T, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("sa,sb", [((80, 70), (70, 90)), ((2, 80, 7), (7, 90)), ((80, 7), (3, 7, 90))])
def test_gradients_match_pytorch(tiled, sa, sb):
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    g = rng.standard_normal(np.broadcast_shapes(sa[:-2], sb[:-2]) + (sa[-2], sb[-1])).astype(np.float32)
    x, w = xp.asarray(a, requires_grad=True), xp.asarray(b, requires_grad=True)
    y = x @ w
    assert any(n.startswith("lz_gemm") for n in kernels(y))
    (y * xp.asarray(g)).sum().backward()
    tx, tw = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ((tx @ tw) * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_which_devices_and_sizes_take_it():
    a = rng.standard_normal((300, 300)).astype(np.float32)
    y = xp.asarray(a).reshape(1, 300, 300) @ xp.asarray(np.stack([a] * 2))   # (a batch: PoCL keeps the generated product; a GPU tiles)
    assert any(n.startswith("lz_gemm") for n in kernels(y)) == (not xp.asarray(1.0).device.long_loops)
    small = xp.asarray(a[:100]) @ xp.asarray(a[:, :100])   # (fewer than MIN_SIDE rows: generated anywhere)
    assert not any(n.startswith("lz_gemm") for n in kernels(small))
    np.testing.assert_allclose(y.numpy(), np.stack([a @ a] * 2), rtol=1e-4, atol=1e-3)


def test_a_custom_kernel_declaring_its_group_size_launches_with_it():
    source = """__kernel __attribute__((reqd_work_group_size(8, 1, 1)))
    void sizes(__global long* out) { if (get_global_id(0) < 13) out[get_global_id(0)] = get_local_size(0); }"""
    y = xp.custom_kernel(source, "sizes", [], outputs=[((13,), xp.int64)], global_size=(13,))
    assert y.numpy().tolist() == [8] * 13   # (13 work-items rounded up to two whole groups)
