"""lazyarr.linalg against NumPy (values, shapes, dtypes, errors) and its gradients against PyTorch
(float64) and finite differences, batched, with inputs and parameters made several ways; the
products of the main namespace (dot, vdot, inner, outer, kron)."""
import math

import numpy as np
import pytest
import torch

import lazyarr as xp
from tests.helpers import assert_close

RNG = np.random.default_rng(17)
A = RNG.standard_normal((3, 4, 4))
SPD = A @ np.swapaxes(A, -1, -2) + 4 * np.eye(4)
B = RNG.standard_normal((3, 4, 2))
TALL = RNG.standard_normal((2, 5, 3))
WIDE = np.swapaxes(TALL, -1, -2).copy()


def made(a: np.ndarray, how: str) -> xp.Tensor:
    if how == "asarray":
        return xp.asarray(a)
    if how == "computed":     # a lazy expression, never realized
        return xp.asarray(a * 2) * 0.5
    if how == "transposed":   # a view: the transpose of a transposed buffer
        return xp.matrix_transpose(xp.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2))))
    raise ValueError(how)


HOWS = ["asarray", "computed", "transposed"]


@pytest.mark.parametrize("how", HOWS)
def test_decompositions_match_numpy(how):
    spd, a, b, tall = made(SPD, how), made(A, how), made(B, how), made(TALL, how)
    assert_close(xp.linalg.cholesky(spd), np.linalg.cholesky(SPD), rtol=1e-10)
    assert_close(xp.linalg.cholesky(spd, upper=True), np.linalg.cholesky(SPD, upper=True), rtol=1e-10)
    assert_close(xp.linalg.det(a), np.linalg.det(A), rtol=1e-10)
    sign, logabs = xp.linalg.slogdet(a)
    assert_close(sign, np.linalg.slogdet(A).sign)
    assert_close(logabs, np.linalg.slogdet(A).logabsdet, rtol=1e-10)
    assert_close(xp.linalg.inv(a), np.linalg.inv(A), rtol=1e-9)
    assert_close(xp.linalg.solve(a, b), np.linalg.solve(A, B), rtol=1e-9)
    assert_close(xp.linalg.solve(a, made(B[0, :, 0], how) if how != "transposed" else xp.asarray(B[0, :, 0])),
                 np.linalg.solve(A, B[0, :, 0]), rtol=1e-9)
    w, v = xp.linalg.eigh(spd)
    assert_close(w, np.linalg.eigvalsh(SPD), rtol=1e-10)
    assert_close(xp.matmul(v * xp.expand_dims(w, axis=-2), xp.matrix_transpose(v)), SPD, rtol=1e-9)
    assert_close(xp.linalg.eigvalsh(spd), np.linalg.eigvalsh(SPD), rtol=1e-10)
    for full in [False, True]:
        u, s, vh = xp.linalg.svd(tall, full_matrices=full)
        nu, ns, nvh = np.linalg.svd(TALL, full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (nu.shape, ns.shape, nvh.shape)
        assert_close(s, ns, rtol=1e-10)
        assert_close(xp.matmul(u[..., :3] * xp.expand_dims(s, axis=-2), vh[..., :3, :]), TALL, rtol=1e-9)
    assert_close(xp.linalg.svdvals(tall), np.linalg.svd(TALL, compute_uv=False), rtol=1e-10)
    for mode in ["reduced", "complete"]:
        for m in (tall, made(WIDE, how)):
            q, r = xp.linalg.qr(m, mode=mode)
            nq, nr = np.linalg.qr(m.numpy(), mode=mode)
            assert q.shape == nq.shape and r.shape == nr.shape
            assert_close(xp.matmul(q, r), m.numpy(), rtol=1e-9)
            assert_close(xp.abs(r), np.abs(nr), rtol=1e-9, atol=1e-12)   # unique up to signs
    ev = xp.linalg.eigvals(a)
    assert ev.dtype == xp.complex128
    assert_close(np.sort_complex(ev.numpy()), np.sort_complex(np.linalg.eigvals(A)), rtol=1e-9)
    w, v = xp.linalg.eig(a)
    assert w.dtype == v.dtype == xp.complex128 and v.shape == (3, 4, 4)
    assert_close(A @ v.numpy(), v.numpy() * w.numpy()[..., None, :], rtol=1e-8, atol=1e-10)


def test_built_on_the_svd_match_numpy():
    t = xp.asarray(TALL)
    assert_close(xp.linalg.pinv(t), np.linalg.pinv(TALL), rtol=1e-9)
    low_rank = TALL[0] @ np.diag([1, 1, 0]) @ TALL[1].T[:3]
    np.testing.assert_array_equal(xp.linalg.matrix_rank(xp.asarray(low_rank)).numpy(), np.linalg.matrix_rank(low_rank))
    np.testing.assert_array_equal(xp.linalg.matrix_rank(t).numpy(), [3, 3])
    assert xp.linalg.matrix_rank(t, rtol=0.99).numpy().tolist() == [1, 1]
    assert_close(xp.linalg.cond(xp.asarray(A)), np.linalg.cond(A), rtol=1e-8)
    y = RNG.standard_normal(5)
    x, res, rank, sv = xp.linalg.lstsq(xp.asarray(TALL[0]), xp.asarray(y))
    nx, nres, nrank, nsv = np.linalg.lstsq(TALL[0], y)
    assert_close(x, nx, rtol=1e-9)
    assert_close(res, nres, rtol=1e-9)
    assert rank == nrank and type(rank) is type(nrank) and res.shape == nres.shape   # (NumPy's int32 scalar)
    assert xp.linalg.lstsq(xp.asarray(WIDE[0]), xp.asarray(y[:3]))[1].shape == (0,)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norms(ord):
    got = xp.linalg.matrix_norm(xp.asarray(TALL), ord=ord)
    assert_close(got, np.linalg.matrix_norm(TALL, ord=ord), rtol=1e-10)
    assert xp.linalg.matrix_norm(xp.asarray(TALL), ord=ord, keepdims=True).shape == (2, 1, 1)


@pytest.mark.parametrize("ord", [1, 2, 3.5, 0, math.inf, -math.inf, -1])
def test_vector_norms_and_numpys_norm(ord):
    for axis in [None, 1, (0, 2), -1]:
        got = xp.linalg.vector_norm(xp.asarray(TALL), ord=ord, axis=axis)
        assert_close(got, np.linalg.vector_norm(TALL, ord=ord, axis=axis), rtol=1e-10)
    assert_close(xp.linalg.vector_norm(xp.asarray(np.array([3 + 4j, 0j]))), 5.0)
    assert_close(xp.linalg.norm(xp.asarray(TALL)), np.linalg.norm(TALL))
    assert_close(xp.linalg.norm(xp.asarray(TALL[0]), ord=ord if ord in (1, 2, math.inf, -math.inf) else "fro"),
                 np.linalg.norm(TALL[0], ord=ord if ord in (1, 2, math.inf, -math.inf) else "fro"))
    assert_close(xp.linalg.norm(xp.asarray(TALL), axis=1, ord=ord), np.linalg.norm(TALL, axis=1, ord=ord), rtol=1e-10)
    assert_close(xp.linalg.norm(xp.asarray(TALL), axis=(2, 0), keepdims=True),
                 np.linalg.norm(TALL, axis=(2, 0), keepdims=True))


def test_compositions_match_numpy_and_fuse():
    a = xp.asarray(TALL)
    for offset in [-6, -2, 0, 1, 3]:
        assert_close(xp.linalg.diagonal(a, offset=offset), np.linalg.diagonal(TALL, offset=offset))
        assert_close(xp.linalg.trace(a, offset=offset), np.linalg.trace(TALL, offset=offset))
    ints = np.arange(12, dtype=np.int8).reshape(3, 4)
    t = xp.linalg.trace(xp.asarray(ints))
    assert t.dtype == xp.int64 and int(t) == np.trace(ints)
    u, v = RNG.standard_normal((4, 3)), RNG.standard_normal((2, 1, 3))
    assert_close(xp.linalg.cross(xp.asarray(u), xp.asarray(v)), np.linalg.cross(u, v))
    assert_close(xp.linalg.cross(xp.asarray(u.T), xp.asarray(u.T[::-1]), axis=0), np.cross(u.T, u.T[::-1], axis=0))
    assert_close(xp.linalg.outer(xp.asarray(u[0]), xp.asarray(u[1])), np.outer(u[0], u[1]))
    for n in [0, 1, 2, 3, 6, -1, -2]:
        assert_close(xp.linalg.matrix_power(xp.asarray(A), n), np.linalg.matrix_power(A, n), rtol=1e-8)
    chain = [RNG.standard_normal(s) for s in [(10,), (10, 30), (30, 5), (5, 2)]]
    assert_close(xp.linalg.multi_dot([xp.asarray(c) for c in chain]), np.linalg.multi_dot(chain), rtol=1e-10)
    # a norm of a product is one kernel with it (counted outside the asserts: pytest's rewriting
    # keeps an assert's parts alive, and a realization stores the values live arrays hold)
    x = xp.asarray(TALL)
    kernels = len(xp.linalg.vector_norm(x * 2 + 1, axis=-1).schedule())
    assert kernels == 1
    kernels = len(xp.linalg.trace(xp.matmul(x, xp.matrix_transpose(x))).schedule())
    assert kernels == 1


def test_main_namespace_products_match_numpy():
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 2, 3), (4, 3, 5)), ((), (3,)), ((3,), (3, 2))]:
        a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
        assert_close(xp.dot(xp.asarray(a), xp.asarray(b)), np.dot(a, b))
    for sa, sb in [((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (5, 3))]:
        a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
        assert_close(xp.inner(xp.asarray(a), xp.asarray(b)), np.inner(a, b))
    for sa, sb in [((3,), (2,)), ((2, 3), (4,)), ((2, 2, 3), (5, 1)), ((2,), (2, 3))]:
        a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
        assert_close(xp.kron(xp.asarray(a), xp.asarray(b)), np.kron(a, b))
        assert_close(xp.outer(xp.asarray(a), xp.asarray(b)), np.outer(a, b))
    z = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))
    assert_close(xp.vdot(xp.asarray(z), xp.asarray(z[::-1])), np.vdot(z, z[::-1]))


def test_dtypes_promotion_and_errors():
    f32 = xp.asarray(SPD.astype(np.float32))
    assert xp.linalg.cholesky(f32).dtype == xp.float32 and xp.linalg.inv(f32).dtype == xp.float32
    assert xp.linalg.det(xp.asarray(np.eye(3, dtype=np.int64))).dtype == xp.float64   # integers promoted, as NumPy
    assert xp.linalg.svdvals(xp.asarray(TALL + 1j)).dtype == xp.float64
    assert xp.linalg.eigvalsh(xp.asarray(SPD.astype(np.complex64))).dtype == xp.float32
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        xp.linalg.inv(xp.ones(3))
    with pytest.raises(ValueError, match="square"):
        xp.linalg.det(xp.ones((2, 3)))
    with pytest.raises(ValueError, match="does not match"):
        xp.linalg.solve(xp.eye(3), xp.ones(4))
    with pytest.raises(ValueError, match="3 elements"):
        xp.linalg.cross(xp.ones(2), xp.ones(2))
    with pytest.raises(ValueError, match="vectors"):
        xp.linalg.outer(xp.ones((2, 2)), xp.ones(2))
    with pytest.raises(ValueError, match="ord"):
        xp.linalg.matrix_norm(xp.ones((2, 2)), ord=3)
    with pytest.raises(ValueError, match="mode"):
        xp.linalg.qr(xp.ones((2, 2)), mode="economic")
    # raised inside the call, as NumPy's: `try: inv(a) except LinAlgError:` works, whatever made a
    singular = [np.zeros((2, 2)), np.ones((3, 3)), np.array([[[1.0, 2], [2, 4]]] * 2)]
    for made in (lambda a: xp.asarray(a), lambda a: xp.asarray(a) * 2.0, lambda a: xp.asarray(a.T).mT):
        for a in singular:
            with pytest.raises(xp.linalg.LinAlgError):
                xp.linalg.inv(made(a))
            with pytest.raises(xp.linalg.LinAlgError):
                xp.linalg.solve(made(a), xp.ones(a.shape[:-1]))
        with pytest.raises(xp.linalg.LinAlgError):
            xp.linalg.cholesky(made(-np.eye(2)))
    with pytest.raises(xp.linalg.LinAlgError, match="Singular"):   # through NumPy's own name
        np.linalg.inv(xp.ones((3, 3)))
    # with gradients recorded the error comes when the value is computed
    late = xp.linalg.inv(xp.asarray(np.zeros((2, 2)), requires_grad=True))
    with pytest.raises(xp.linalg.LinAlgError):
        late.numpy()
    assert issubclass(xp.linalg.LinAlgError, ValueError)
    assert set(dir(xp.linalg)) >= {"svd", "eigh", "solve", "vector_norm"} and "UOp" not in dir(xp.linalg)
    assert xp.linalg.inv(xp.zeros((0, 3, 3))).shape == (0, 3, 3)


# ---- gradients -------------------------------------------------------------------------------

def parameter(a: np.ndarray, how: str):
    """A parameter made as users make them (and PyTorch's twin): a copy of data, ones scaled, or
    a full array plus data, each a leaf that requires grad."""
    if how == "asarray":
        return xp.asarray(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    if how == "ones":
        return xp.ones(a.shape, dtype=xp.float64).requires_grad_(), torch.ones(a.shape, dtype=torch.float64, requires_grad=True)
    if how == "full":
        return xp.full(a.shape, 0.25, dtype=xp.float64).requires_grad_(), torch.full(a.shape, 0.25, dtype=torch.float64, requires_grad=True)
    raise ValueError(how)


def _spd_x(p):
    return xp.matmul(p, xp.matrix_transpose(p)) + 4 * xp.eye(p.shape[-1], dtype=xp.float64)


def _spd_t(p):
    return p @ p.mT + 4 * torch.eye(p.shape[-1], dtype=torch.float64)


def _sym_x(p):
    return p + xp.matrix_transpose(p)


def _sym_t(p):
    return p + p.mT


G4 = RNG.standard_normal((3, 4, 4))
GT = RNG.standard_normal((2, 5, 3))
GS = RNG.standard_normal((2, 3, 3))
GV = RNG.standard_normal((3, 4))
# name: (input data, lazyarr's scalar function, PyTorch's); each function of one matrix
CASES = {
    "solve": (A, lambda a: (xp.linalg.solve(a, xp.asarray(B)) * xp.asarray(B)).sum(),
              lambda a: (torch.linalg.solve(a, torch.tensor(B)) * torch.tensor(B)).sum()),
    "inv": (A, lambda a: (xp.linalg.inv(a) * xp.asarray(G4)).sum(), lambda a: (torch.linalg.inv(a) * torch.tensor(G4)).sum()),
    "det": (A, lambda a: xp.linalg.det(a).sum(), lambda a: torch.linalg.det(a).sum()),
    "slogdet": (A, lambda a: xp.linalg.slogdet(a)[1].sum(), lambda a: torch.linalg.slogdet(a)[1].sum()),
    "cholesky": (A, lambda p: (xp.linalg.cholesky(_spd_x(p)) * xp.asarray(G4)).sum(),
                 lambda p: (torch.linalg.cholesky(_spd_t(p)) * torch.tensor(G4)).sum()),
    "cholesky_upper": (A, lambda p: (xp.linalg.cholesky(_spd_x(p), upper=True) * xp.asarray(G4)).sum(),
                       lambda p: (torch.linalg.cholesky(_spd_t(p), upper=True) * torch.tensor(G4)).sum()),
    "eigvalsh": (A, lambda p: (xp.linalg.eigvalsh(_sym_x(p)) * xp.asarray(GV)).sum(),
                 lambda p: (torch.linalg.eigvalsh(_sym_t(p)) * torch.tensor(GV)).sum()),
    "eigh_vectors": (A, lambda p: (xp.linalg.eigh(_sym_x(p))[1] ** 2 * xp.asarray(G4)).sum(),
                     lambda p: (torch.linalg.eigh(_sym_t(p))[1] ** 2 * torch.tensor(G4)).sum()),
    "svdvals": (TALL, lambda w: (xp.linalg.svdvals(w) * xp.asarray(GS[:, 0])).sum(),
                lambda w: (torch.linalg.svdvals(w) * torch.tensor(GS[:, 0])).sum()),
    "svd_u": (TALL, lambda w: (xp.linalg.svd(w, full_matrices=False)[0] ** 2 * xp.asarray(GT)).sum(),
              lambda w: (torch.linalg.svd(w, full_matrices=False)[0] ** 2 * torch.tensor(GT)).sum()),
    "svd_vh_wide": (WIDE, lambda w: (xp.linalg.svd(w, full_matrices=False)[2] ** 2 * xp.asarray(np.swapaxes(GT, 1, 2))).sum(),
                    lambda w: (torch.linalg.svd(w, full_matrices=False)[2] ** 2 * torch.tensor(np.swapaxes(GT, 1, 2))).sum()),
    "qr": (TALL, lambda w: sum((f * xp.asarray(g)).sum() for f, g in zip(xp.linalg.qr(w), (GT, GS))),
           lambda w: sum((f * torch.tensor(g)).sum() for f, g in zip(torch.linalg.qr(w), (GT, GS)))),
    "qr_wide": (WIDE, lambda w: sum((f * xp.asarray(g)).sum() for f, g in zip(xp.linalg.qr(w), (GS, np.swapaxes(GT, 1, 2)))),
                lambda w: sum((f * torch.tensor(g)).sum() for f, g in zip(torch.linalg.qr(w), (GS, np.swapaxes(GT, 1, 2))))),
    "pinv": (TALL, lambda w: (xp.linalg.pinv(w) * xp.asarray(WIDE)).sum(), lambda w: (torch.linalg.pinv(w) * torch.tensor(WIDE)).sum()),
    "nuclear_norm": (TALL, lambda w: xp.linalg.matrix_norm(w, ord="nuc").sum(), lambda w: torch.linalg.matrix_norm(w, ord="nuc").sum()),
    "spectral_norm": (TALL, lambda w: xp.linalg.matrix_norm(w, ord=2).sum(), lambda w: torch.linalg.matrix_norm(w, ord=2).sum()),
    "vector_norm": (TALL, lambda w: xp.linalg.vector_norm(w, ord=3, axis=-1).sum(),
                    lambda w: torch.linalg.vector_norm(w, ord=3, dim=-1).sum()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_pytorch(name):
    data, f, g = CASES[name]
    x, t = xp.asarray(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    f(x).backward()
    g(t).backward()
    assert_close(x.grad, t.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("how", ["ones", "full"])
@pytest.mark.parametrize("name", ["solve", "inv", "cholesky", "eigvalsh", "svdvals"])
def test_gradients_of_parameters_made_by_creation_functions(name, how):
    """A parameter of constant values: ones times data (so the matrices are not singular)."""
    data, f, g = CASES[name]
    p, tp = parameter(data, how)
    f(p * xp.asarray(data)).backward()
    g(tp * torch.tensor(data)).backward()
    assert_close(p.grad, tp.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["solve", "det", "cholesky", "eigh_vectors", "svd_u", "qr", "pinv"])
def test_gradients_match_finite_differences(name):
    data, f, _ = CASES[name]
    x = xp.asarray(data, requires_grad=True)
    f(x).backward()
    got = x.grad.numpy()
    rng = np.random.default_rng(len(name))
    for _ in range(3):   # directional derivatives
        d = rng.standard_normal(data.shape)
        eps = 1e-6
        numeric = (float(f(xp.asarray(data + eps * d))) - float(f(xp.asarray(data - eps * d)))) / (2 * eps)
        assert abs(numeric - float(np.sum(got * d))) <= 1e-5 * max(1.0, abs(numeric))


def test_gradients_differentiate_again():
    """The backward graph of a solve holds solves: a gradient of a gradient (d²/da² of a⁻¹b)."""
    a = xp.asarray(np.array([[3.0]]))
    g = xp.grad(lambda m: xp.grad(lambda n: xp.linalg.solve(n, xp.asarray([[2.0]])).sum())(m).sum())(a)
    assert_close(g, [[2 * 2.0 / 27]])   # d²/da² (2/a) = 4/a³


# ---- lazyarr's own kernels for batches of small matrices (what OpenCL runs) ------------------------

def test_gauss_jordan_and_cholesky_kernels_match_numpy_on_every_device():
    from lazyarr import small_matrices as small
    a = RNG.standard_normal((5, 6, 6))
    a[0, 0, 0] = 0.0                 # the first pivot needs a swap past a zero
    a[1] = a[1][[3, 1, 4, 0, 5, 2]]  # rows out of order
    b = RNG.standard_normal((5, 6, 3))
    reduced, pivots, swaps = small.gauss_jordan(xp.asarray(a), xp.asarray(b))
    assert_close(reduced / xp.expand_dims(pivots, axis=-1), np.linalg.solve(a, b), rtol=1e-9)
    sign = np.where(np.sum(swaps.numpy(), -1) % 2, -1.0, 1.0)
    assert_close(np.prod(pivots.numpy(), -1) * sign, np.linalg.det(a), rtol=1e-9)
    singular = a.copy()
    singular[:, 2] = singular[:, 4]
    _, pivots, _ = small.gauss_jordan(xp.asarray(singular), None)
    assert np.all(np.any(pivots.numpy() == 0, -1))   # a zero pivot: no NaN after it
    assert np.all(np.isfinite(pivots.numpy()))
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(6)
    lower, squares = small.cholesky_lower(xp.asarray(spd))
    assert_close(lower, np.linalg.cholesky(spd), rtol=1e-9)
    assert np.all(squares.numpy() > 0)


def test_opencl_factors_small_matrices_with_its_own_kernels_and_large_ones_on_the_host():
    x = xp.asarray(A)
    if x.device.host_memory:
        pytest.skip("the CPU calls LAPACK for every size")
    # (inputs that record gradients: their decompositions are not computed at the call, so the
    # schedules are there to read)
    names = [it.name for it in xp.linalg.solve(xp.asarray(A, requires_grad=True), xp.asarray(B)).schedule()]
    assert any(n.startswith("gauss_jordan") for n in names)
    big = xp.asarray(RNG.standard_normal((70, 70)) + 70 * np.eye(70))
    lazy_big = xp.asarray(big.numpy(), requires_grad=True)
    assert [it.name for it in xp.linalg.inv(lazy_big).schedule()][-1] == "inv"   # NumPy's, by the round trip
    assert_close(xp.linalg.inv(big), np.linalg.inv(big.numpy()), rtol=1e-9)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("shapes", [((2, 0), (0, 3)), ((0,), (0,)), ((4, 0), (0,)), ((2, 3), (3, 0)), ((0, 3), (3,)),
                                    ((2, 1, 2, 3), (4, 3, 2)), ((3,), (3, 2))])
def test_matmul_of_every_kind_of_operand_matches_numpy(dtype, shapes):
    # empty sums included: a boolean matmul over an axis of length 0 is all False (it raised)
    rng = np.random.default_rng(1)
    a, b = ((rng.standard_normal(s) * 3).astype(dtype) for s in shapes)
    got = xp.asarray(a) @ xp.asarray(b)
    want = a @ b
    assert got.shape == want.shape and got.dtype == xp.asarray(want).dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
