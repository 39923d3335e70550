"""Gradients through complex values, in PyTorch's convention (the adjoint of z = x + iy is
∂L/∂x + i·∂L/∂y for a real loss L): elementwise functions, parts, casts, sums and gathers of
complex values built from real parameters, and every fft transform (the adjoint transforms),
against PyTorch; and what still has no complex gradient says so."""
import numpy as np
import pytest
import torch

import lazyarr as xp
from tests.helpers import assert_close

RNG = np.random.default_rng(41)
A, B = RNG.standard_normal((3, 10)), RNG.standard_normal((3, 10))
W, WH = RNG.standard_normal((3, 10)), RNG.standard_normal((3, 6))
T = torch.tensor

ELEMENTWISE = {
    "abs": (lambda z: xp.abs(z).sum(), lambda z: torch.abs(z).sum()),
    "real of a product": (lambda z: xp.real(z * z).sum(), lambda z: (z * z).real.sum()),
    "imag, exp and conj": (lambda z: xp.imag(xp.exp(z) * xp.conj(z)).sum(), lambda z: (torch.exp(z) * torch.conj(z)).imag.sum()),
    "reciprocal and sqrt": (lambda z: xp.abs(1 / z + xp.sqrt(z)).sum(), lambda z: torch.abs(1 / z + torch.sqrt(z)).sum()),
    "a sum of sines": (lambda z: xp.abs(xp.sum(xp.sin(z) * 2)) ** 2, lambda z: torch.abs(torch.sum(torch.sin(z) * 2)) ** 2),
    "log and powers": (lambda z: xp.abs(xp.log(z) ** 2 + z ** 3).sum(), lambda z: torch.abs(torch.log(z) ** 2 + z ** 3).sum()),
    "a narrower dtype": (lambda z: xp.abs(z.astype(xp.complex64)).sum(), lambda z: torch.abs(z.to(torch.complex64)).sum()),
    "a gather": (lambda z: xp.abs(z[:, xp.asarray([0, 2, 2, 5])]).sum(), lambda z: torch.abs(z[:, T([0, 2, 2, 5])]).sum()),
    "a transpose and a where": (lambda z: xp.abs(xp.where(xp.asarray(A.T > 0), z.T, 2 * z.T)).sum(),
                                lambda z: torch.abs(torch.where(T(A.T > 0), z.T, 2 * z.T)).sum()),
}
TRANSFORMS = {
    "abs fft": (lambda x, y: xp.abs(xp.fft.fft(x + 1j * y)).sum(), lambda x, y: torch.abs(torch.fft.fft(torch.complex(x, y))).sum()),
    "fft n=7 ortho": (lambda x, y: (xp.real(xp.fft.fft(x + 1j * y, n=7, norm="ortho")) * xp.asarray(W[:, :7])).sum(),
                      lambda x, y: (torch.fft.fft(torch.complex(x, y), n=7, norm="ortho").real * T(W[:, :7])).sum()),
    "ifft n=14 forward": (lambda x, y: (xp.imag(xp.fft.ifft(x + 1j * y, n=14, norm="forward")) ** 2).sum(),
                          lambda x, y: (torch.fft.ifft(torch.complex(x, y), n=14, norm="forward").imag ** 2).sum()),
    "abs rfft": (lambda x, y: (xp.abs(xp.fft.rfft(x * y)) * xp.asarray(WH)).sum(),
                 lambda x, y: (torch.abs(torch.fft.rfft(x * y)) * T(WH)).sum()),
    "power spectrum n=7": (lambda x, y: (xp.abs(xp.fft.rfft(x, n=7)) ** 2).sum() + y.sum(),
                           lambda x, y: (torch.abs(torch.fft.rfft(x, n=7)) ** 2).sum() + y.sum()),
    "a filter": (lambda x, y: (xp.fft.irfft(xp.fft.rfft(x) * xp.asarray(WH), n=10) * y).sum(),
                 lambda x, y: (torch.fft.irfft(torch.fft.rfft(x) * T(WH), n=10) * y).sum()),
    "irfft odd n": (lambda x, y: (xp.fft.irfft(xp.fft.rfft(x) * (1 + 1j), n=11) ** 2).sum() + y.sum(),
                    lambda x, y: (torch.fft.irfft(torch.fft.rfft(x) * (1 + 1j), n=11) ** 2).sum() + y.sum()),
    "hfft": (lambda x, y: (xp.fft.hfft(x + 1j * y, n=9) * xp.asarray(W[:, :9])).sum(),
             lambda x, y: (torch.fft.hfft(torch.complex(x, y), n=9) * T(W[:, :9])).sum()),
    "ihfft": (lambda x, y: xp.abs(xp.fft.ihfft(x * y)).sum(), lambda x, y: torch.abs(torch.fft.ihfft(x * y)).sum()),
    "fftn": (lambda x, y: xp.abs(xp.fft.fftn(x + 1j * y, s=(4, 12))).sum(),
             lambda x, y: torch.abs(torch.fft.fftn(torch.complex(x, y), s=(4, 12))).sum()),
    "rfftn": (lambda x, y: xp.abs(xp.fft.rfftn(x * y, axes=(0, 1))).sum(), lambda x, y: torch.abs(torch.fft.rfftn(x * y, dim=(0, 1))).sum()),
    "irfftn": (lambda x, y: (xp.fft.irfftn(xp.fft.rfftn(x) * 1j, s=(3, 10)) * y).sum(),
               lambda x, y: (torch.fft.irfftn(torch.fft.rfftn(x) * 1j, s=(3, 10)) * y).sum()),
}


def _both(f, g):
    x, y = xp.asarray(A, requires_grad=True), xp.asarray(B, requires_grad=True)
    tx, ty = T(A, requires_grad=True), T(B, requires_grad=True)
    f(x, y).backward()
    g(tx, ty).backward()
    assert_close(x.grad, tx.grad.numpy(), rtol=1e-7, atol=1e-9)
    assert_close(y.grad, ty.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_gradients_through_complex_values_match_pytorch(name):
    f, g = ELEMENTWISE[name]
    _both(lambda x, y: f(x + 1j * y), lambda x, y: g(torch.complex(x, y)))


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_gradients_match_pytorch(name):
    _both(*TRANSFORMS[name])


def test_a_parameter_made_by_ones_through_a_filter():
    p, tp = xp.ones(10).requires_grad_(), torch.ones(10, dtype=torch.float64, requires_grad=True)
    (xp.fft.irfft(xp.fft.rfft(p * xp.asarray(A[0])) * xp.asarray(WH[0]), n=10) ** 2).sum().backward()
    (torch.fft.irfft(torch.fft.rfft(tp * T(A[0])) * T(WH[0]), n=10) ** 2).sum().backward()
    assert_close(p.grad, tp.grad.numpy(), rtol=1e-7, atol=1e-9)


def test_what_has_no_complex_gradient_says_so():
    x = xp.asarray(A[:, :3][:3], requires_grad=True)
    with pytest.raises(TypeError, match="complex"):
        xp.abs(xp.linalg.det(x + 1j)).backward()
    with pytest.raises(TypeError, match="complex"):
        xp.asarray(np.ones(3) + 1j).requires_grad_()
