"""Gradients and optimizer steps of random programs against PyTorch (differential testing).

Each test draws a scalar loss (sums / means / weighted sums of a random program of
tests/random_programs/) of parameters made every way: xp.asarray(data, requires_grad=True) of
arrays, lists and scalars; ones/zeros/full/linspace/arange/eye, *_like, lazyarr.random and views
followed by `.requires_grad = True` or `.requires_grad_()`, realized before or after; 0-d ones;
parameters equal in value to each other, to non-parameters and to the program's constants. Its
gradients must equal torch.autograd's in float64 (to ~1e-9, or a little more where PyTorch's own
float32 gradients show the problem is ill-conditioned), a subset also central finite differences
of lazyarr's own values; lazyarr.optim's SGD, SGD with momentum, Adam and AdamW must take the same
steps as torch.optim's. A failure prints the program as a lazyarr script.

The number of programs scales with LAZYARR_TEST_EXAMPLES (25 by default; the OpenCL pass runs 5);
`python scripts/differential.py --programs N` runs many more.
"""
import os

import numpy as np
import pytest

import lazyarr as xp
from tests import random_programs as rp

torch = pytest.importorskip("torch")

SCALE = int(os.environ.get("LAZYARR_TEST_EXAMPLES", "25")) / 25
TIMEOUT = 60     # a correct implementation needs well under a second per program


def seeds(n, start=0):
    return [pytest.param(s, id=f"seed{s}") for s in range(start, start + max(2, round(n * SCALE)))]


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("seed", seeds(50))
def test_gradients_match_pytorch(seed):
    r = rp.check_gradients(seed)
    assert r.ok, r.report()


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("seed", seeds(20))
def test_gradients_through_unrealized_loops_match_pytorch(seed):
    r = rp.check_gradients(seed, loop=True)
    assert r.ok, r.report()


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("seed", seeds(15, start=1000))
def test_gradients_match_finite_differences(seed):
    r = rp.check_gradients(seed, finite_differences=True)
    assert r.ok, r.report()


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("name", sorted(rp.OPTIMIZERS))
@pytest.mark.parametrize("seed", seeds(8))
def test_optimizer_steps_match_pytorch(name, seed):
    r = rp.check_optimizer(seed, name)
    assert r.ok, r.report()


# ---- every way of making a parameter, each next to constants equal to it ----

MAKERS = {
    "asarray_kwarg": lambda: xp.asarray([2.0, 2.0, 2.0], requires_grad=True),
    "asarray_scalar_kwarg": lambda: xp.asarray(2.0, requires_grad=True),
    "asarray_numpy_attr": lambda: _attr(xp.asarray(np.full(3, 2.0))),
    "ones_attr": lambda: _attr(xp.ones(3)),
    "ones_method": lambda: xp.ones(3).requires_grad_(),
    "zeros_method": lambda: xp.zeros(3).requires_grad_(),
    "full_attr": lambda: _attr(xp.full(3, 2.0)),
    "full_0d_method": lambda: xp.full((), 2.0).requires_grad_(),
    "full_0d_realized": lambda: xp.full((), 2.0).realize().requires_grad_(),
    "linspace_method": lambda: xp.linspace(0.0, 2.0, 3).requires_grad_(),
    "arange_float_attr": lambda: _attr(xp.arange(0.0, 3.0)),
    "eye_method": lambda: xp.eye(3).requires_grad_(),
    "ones_like_method": lambda: xp.ones_like(xp.asarray([5.0, 6.0, 7.0])).requires_grad_(),
    "full_like_attr": lambda: _attr(xp.full_like(xp.asarray([5.0, 6.0, 7.0]), 2.0)),
    "zeros_like_method": lambda: xp.zeros_like(xp.ones(3)).requires_grad_(),
}


def _attr(t):
    t.requires_grad = True
    return t


@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_every_way_of_making_a_parameter_gets_its_own_gradient(maker):
    """Two parameters made the same way (equal values), multiplied by constants equal to them and
    by arrays made the same way that are not parameters: each gets the gradient PyTorch gives."""
    p, q = MAKERS[maker](), MAKERS[maker]()
    v = np.asarray(p.detach()).copy()
    c = xp.asarray(v)                                   # a constant equal to the parameters
    other = MAKERS[maker]().detach()                    # made the same way, not a parameter
    first = float(v.reshape(-1)[0])
    loss = xp.sum(p * c * first + xp.sin(q) * other + p * q * 3.0)
    loss.backward()
    tp, tq = (torch.tensor(v, requires_grad=True) for _ in range(2))
    tc, tother = torch.tensor(v), torch.tensor(v)
    tl = torch.sum(tp * tc * first + torch.sin(tq) * tother + tp * tq * 3.0)
    tl.backward()
    np.testing.assert_allclose(float(loss), tl.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(p.grad), tp.grad.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(q.grad), tq.grad.numpy(), rtol=1e-12, atol=1e-15)


# ---- failure classes the random programs found, as small cases ----

@pytest.mark.timeout(TIMEOUT)
def test_the_gradient_of_a_loop_of_concatenated_slices_stays_linear():
    """8 steps of s = s/2 + tanh(concat(s[-1:], s[:-1]))/2, then backward(): the backward graph reads
    each step's gradient at two shifted indexings (RewriteNotConverging; 5-6 steps took 10-55 s)."""
    x0 = np.linspace(0.5, 3.0, 6)
    x, tx = xp.asarray(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    s, ts = x, tx
    for _ in range(8):
        s = s * 0.5 + xp.tanh(xp.concat([s[-1:], s[:-1]])) * 0.5
        ts = ts * 0.5 + torch.tanh(torch.cat([ts[-1:], ts[:-1]])) * 0.5
    xp.sum(s).backward()
    torch.sum(ts).backward()
    np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-12)
