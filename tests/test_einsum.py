"""einsum against NumPy: its grammar (explicit and implicit outputs, ellipses, repeated labels,
sublists), dtypes, fusion of a contraction into one kernel, gradients, and errors."""
import numpy as np
import pytest
import torch

import lazyarr as xp
from tests.helpers import assert_close

RNG = np.random.default_rng(31)
A, B, C = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5)), RNG.standard_normal((5, 3))
SQ, V = RNG.standard_normal((4, 4)), RNG.standard_normal(4)
BA, BB = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 6))

CASES = [("ij,jk->ik", A, B), ("ij,jk", A, B), ("ij,jk,kl->il", A, B, C), ("ii->", SQ), ("ii->i", SQ), ("ii", SQ),
         ("ij->ji", A), ("ij", A), ("ji", A), ("...ij,...jk->...ik", BA, BB), ("bij,bjk->bik", BA, BB),
         ("i,i->", V, V), ("i,j->ij", V, V), ("...j,j", BA, V), ("ij...,jk->ik...", np.moveaxis(BA, 0, -1), B),
         ("ijk->", BA), ("ij,ij->ij", A, A), ("ab,bc,cd,de->ae", A, B, C, A), ("iij->j", np.stack([SQ] * 2, -1)),
         ("...", BA), ("j,...j->...", V, BA), ("i j , j k -> i k", A, B)]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_numpy(case):
    sub, *ops = case
    got = xp.einsum(sub, *[xp.asarray(o) for o in ops])
    want = np.einsum(sub, *ops)
    assert got.shape == want.shape
    assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_sublists_dtypes_and_one_kernel():
    assert_close(xp.einsum(xp.asarray(A), [0, 1], xp.asarray(B), [1, 2], [0, 2]), A @ B)
    assert_close(xp.einsum(xp.asarray(BA), [Ellipsis, 1], [Ellipsis]), np.einsum(BA, [Ellipsis, 1], [Ellipsis]))
    a, b = A > 0, B > 0
    got = xp.einsum("ij,jk->ik", xp.asarray(a), xp.asarray(b))
    assert got.dtype == xp.bool
    np.testing.assert_array_equal(got.numpy(), np.einsum("ij,jk->ik", a, b))
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert xp.einsum("ij->i", xp.asarray(ints)).dtype == xp.int32
    assert xp.einsum("ij,jk", xp.asarray(A.astype(np.float32)), xp.asarray(B), dtype=xp.float32).dtype == xp.float32
    assert len(xp.einsum("ij,jk->ik", xp.asarray(A), xp.asarray(B)).schedule()) == 1
    assert_close(xp.einsum("ij,jk->ik", xp.asarray(A), xp.asarray(B), optimize="greedy"), A @ B)


def test_gradients_flow_as_through_products():
    x = xp.asarray(A, requires_grad=True)
    t = torch.tensor(A, requires_grad=True)
    (xp.einsum("ij,jk,kl->il", x, xp.asarray(B), xp.asarray(C)) ** 2).sum().backward()
    (torch.einsum("ij,jk,kl->il", t, torch.tensor(B), torch.tensor(C)) ** 2).sum().backward()
    assert_close(x.grad, t.grad.numpy(), rtol=1e-10)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="not among"):
        xp.einsum("ij,jk->il", xp.asarray(A), xp.asarray(B))
    with pytest.raises(ValueError, match="2 operands"):
        xp.einsum("ij,jk", xp.asarray(A))
    with pytest.raises(ValueError, match="lengths"):
        xp.einsum("ij,jk", xp.asarray(A), xp.asarray(A))
    with pytest.raises(ValueError, match="invalid character"):
        xp.einsum("i1", xp.asarray(A))
    with pytest.raises(ValueError, match="axes"):
        xp.einsum("ijk", xp.asarray(A))
