"""Matrix decompositions as graph nodes of their own: cholesky, qr, eigh, eig, svd, and the LU
family (solve, inv, det, slogdet), batched over leading axes.

Each is a CALL of a precompiled routine: NumPy's `linalg` (LAPACK) on the buffers' memory, on the
CPU; on a device whose memory is not the host's (OpenCL) the same routine through a round trip
to the host (`lazyarr.runtime.executor`, reported by LAZYARR_DEBUG=1). They are scheduled, cached
and realized like kernels, without fusion across them, and each has its local gradient
(`CallSpec.grad`, written with lazyarr's own ops, so that gradients fuse, run on every device, and
differentiate again): the standard results of matrix calculus (Giles 2008; Murray 2016 for
Cholesky; Townsend 2016 for the SVD), checked against PyTorch in the tests. A singular matrix
(solve, inv), or one that is not positive definite (cholesky), raises NumPy's LinAlgError (a
ValueError) when the value is computed.

The functions here take arrays already checked and promoted (`lazyarr.linalg` does that) and
return arrays; their names are the decompositions'."""
from __future__ import annotations

from typing import Callable

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.uop import CallSpec, UOp
from lazyarr.creation import eye, tril, zeros
from lazyarr.dtypes import DType
from lazyarr.elementwise import add, divide, equal, multiply, negative, subtract, where
from lazyarr.graph import call_result, call_results
from lazyarr.linear_algebra import matmul
from lazyarr.manipulation import concat, expand_dims, matrix_transpose as mT
from lazyarr.statistics import sum as total

LinAlgError = np.linalg.LinAlgError


def _call(name: str, routine: Callable[..., None], inputs: list[Array], outputs: list[tuple[tuple[int, ...], DType]],
          grad: Callable[[UOp, int, UOp], list[UOp | None]] | None = None, scalars: tuple = ()) -> tuple[Array, ...]:
    device = inputs[0].device
    spec = CallSpec(name, None, routine, tuple((x.shape, x.dtype) for x in inputs), tuple(outputs), (), scalars,
                    device=device, grad=grad)
    return tuple(wrap(u, device) for u in call_results(spec, [x.uop for x in inputs]))


def _arrays(call: UOp) -> tuple[list[Array], list[Array]]:
    """A call's inputs and results as arrays (for its gradient)."""
    device = call.arg.device
    results = [wrap(call_result(call, i), device) for i in range(len(call.arg.result_dtypes))]
    return [wrap(s, device) for s in call.src], results


def _diag_embed(v: Array) -> Array:
    """Matrices with v's last axis on their diagonals."""
    n = v.shape[-1]
    return multiply(expand_dims(v, axis=-1), eye(n, dtype=v.dtype, device=v.device))


def _diagonal(a: Array) -> Array:
    n = min(a.shape[-2:])
    return total(multiply(a[..., :n, :n], eye(n, dtype=a.dtype, device=a.device)), axis=-1)


def _sym(a: Array) -> Array:
    return multiply(add(a, mT(a)), 0.5)


# ---- the LU family -------------------------------------------------------------------------------

def _solve_routine(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    x[...] = np.linalg.solve(a, b)


def _solve_grad(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    (a, _), (x,) = _arrays(call)
    gb = solve(mT(a), wrap(g, a.device))          # B's adjoint: A⁻ᵀ G
    return [negative(matmul(gb, mT(x))).uop, gb.uop]   # A's: -A⁻ᵀ G Xᵀ


def solve(a: Array, b: Array) -> Array:
    """X with A X = B, for A (..., M, M) and B (..., M, K) of one batch shape."""
    return _call("solve", _solve_routine, [a, b], [(b.shape, b.dtype)], _solve_grad)[0]


def _inv_routine(y: np.ndarray, a: np.ndarray) -> None:
    y[...] = np.linalg.inv(a)


def _inv_grad(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    _, (y,) = _arrays(call)
    return [negative(matmul(mT(y), matmul(wrap(g, y.device), mT(y)))).uop]


def inv(a: Array) -> Array:
    return _call("inv", _inv_routine, [a], [(a.shape, a.dtype)], _inv_grad)[0]


def _slogdet_routine(sign: np.ndarray, logabs: np.ndarray, a: np.ndarray) -> None:
    sign[...], logabs[...] = np.linalg.slogdet(a)


def _slogdet_grad(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    (a,), _ = _arrays(call)
    if i == 0:   # the sign is piecewise constant
        return [None]
    return [multiply(expand_dims(expand_dims(wrap(g, a.device), axis=-1), axis=-1), mT(inv(a))).uop]


def slogdet(a: Array) -> tuple[Array, Array]:
    real = dtypes.component(a.dtype) if a.dtype.is_complex else a.dtype
    return _call("slogdet", _slogdet_routine, [a], [(a.shape[:-2], a.dtype), (a.shape[:-2], real)], _slogdet_grad)


def _det_routine(d: np.ndarray, a: np.ndarray) -> None:
    d[...] = np.linalg.det(a)


def _det_grad(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    (a,), (d,) = _arrays(call)
    scale = expand_dims(expand_dims(multiply(wrap(g, a.device), d), axis=-1), axis=-1)
    return [multiply(scale, mT(inv(a))).uop]   # d det / dA = det(A) A⁻ᵀ


def det(a: Array) -> Array:
    return _call("det", _det_routine, [a], [(a.shape[:-2], a.dtype)], _det_grad)[0]


# ---- Cholesky --------------------------------------------------------------------------------------

def _cholesky_routine(out: np.ndarray, a: np.ndarray, upper: int) -> None:
    out[...] = np.linalg.cholesky(a, upper=bool(upper))


def _phi(a: Array) -> Array:
    """The lower triangle of a with its diagonal halved."""
    return subtract(tril(a), multiply(_diag_embed(_diagonal(a)), 0.5))


def _cholesky_grad(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    _, (c,) = _arrays(call)
    upper = call.arg.scalars[0]
    lower, gl = (mT(c), mT(wrap(g, c.device))) if upper else (c, wrap(g, c.device))
    # A's adjoint, symmetric: L⁻ᵀ Φ(Lᵀ Ḡ) L⁻¹, symmetrised (Murray 2016)
    inner = _phi(matmul(mT(lower), gl))
    s = solve(mT(lower), mT(solve(mT(lower), mT(inner))))
    return [_sym(s).uop]


def cholesky(a: Array, upper: bool) -> Array:
    return _call("cholesky", _cholesky_routine, [a], [(a.shape, a.dtype)], _cholesky_grad, (int(upper),))[0]


# ---- QR ---------------------------------------------------------------------------------------------

def _qr_routine(q: np.ndarray, r: np.ndarray, a: np.ndarray, complete: int) -> None:
    q[...], r[...] = np.linalg.qr(a, mode="complete" if complete else "reduced")


def _qr_square_grad(q: Array, r: Array, gq: Array, gr: Array) -> Array:
    """A's adjoint for A = QR with R square (A of m ≥ n columns): (Ḡq + Q copyltu(M)) R⁻ᵀ where
    M = R Ḡrᵀ - Ḡqᵀ Q and copyltu mirrors the lower triangle onto the upper one."""
    m = subtract(matmul(r, mT(gr)), matmul(mT(gq), q))
    low = tril(m, k=-1)
    copied = add(add(low, mT(low)), _diag_embed(_diagonal(m)))
    return mT(solve(r, mT(add(gq, matmul(q, copied)))))


def _qr_grad(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    (a,), (q, r) = _arrays(call)
    g = wrap(g, a.device)
    gq, gr = (g, zeros(r.shape, dtype=r.dtype, device=r.device)) if i == 0 else \
        (zeros(q.shape, dtype=q.dtype, device=q.device), g)
    m, n = a.shape[-2:]
    if m >= n:
        k = n
        return [_qr_square_grad(q[..., :k], r[..., :k, :], gq[..., :k], gr[..., :k, :]).uop]
    # a wide matrix: A = Q [R1 R2], R1 square; Y = A's last n - m columns, R2 = Qᵀ Y
    y, r1, gr1, gr2 = a[..., m:], r[..., :m], gr[..., :m], gr[..., m:]
    gy = matmul(q, gr2)
    gx = _qr_square_grad(q, r1, add(gq, matmul(y, mT(gr2))), gr1)
    return [concat([gx, gy], axis=-1).uop]


def qr(a: Array, complete: bool) -> tuple[Array, Array]:
    m, n = a.shape[-2:]
    k = m if complete else min(m, n)
    batch = a.shape[:-2]
    return _call("qr", _qr_routine, [a], [(batch + (m, k), a.dtype), (batch + (k, n), a.dtype)], _qr_grad,
                 (int(complete),))


# ---- eigenvalues ------------------------------------------------------------------------------------

def _eigh_routine(w: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
    w[...], v[...] = np.linalg.eigh(a)


def _eigvalsh_routine(w: np.ndarray, a: np.ndarray) -> None:
    w[...] = np.linalg.eigvalsh(a)


def _spectral_grad(v: Array, w: Array, gw: Array | None, gv: Array | None) -> Array:
    """A's adjoint for A = V diag(w) Vᵀ (symmetric): V (diag(ḡw) + F ∘ Vᵀ ḡV) Vᵀ, F_ij = 1/(w_j - w_i)
    off the diagonal, symmetrised."""
    middle = _diag_embed(gw) if gw is not None else None
    if gv is not None:
        gaps = subtract(expand_dims(w, axis=-2), expand_dims(w, axis=-1))   # w_j - w_i
        off = equal(eye(w.shape[-1], dtype=dtypes.bool_, device=w.device), False)
        f = where(off, divide(1.0, where(off, gaps, 1.0)), 0.0)
        term = multiply(f, matmul(mT(v), gv))
        middle = term if middle is None else add(middle, term)
    return _sym(matmul(v, matmul(middle, mT(v))))


def _eigh_grad(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    _, (w, v) = _arrays(call)
    g = wrap(g, w.device)
    return [_spectral_grad(v, w, g, None).uop if i == 0 else _spectral_grad(v, w, None, g).uop]


def eigh(a: Array) -> tuple[Array, Array]:
    real = dtypes.component(a.dtype) if a.dtype.is_complex else a.dtype
    return _call("eigh", _eigh_routine, [a], [(a.shape[:-1], real), (a.shape, a.dtype)], _eigh_grad)


def _eigvalsh_grad(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    (a,), _ = _arrays(call)
    w, v = eigh(a)
    return [_spectral_grad(v, w, wrap(g, a.device), None).uop]


def eigvalsh(a: Array) -> Array:
    real = dtypes.component(a.dtype) if a.dtype.is_complex else a.dtype
    return _call("eigvalsh", _eigvalsh_routine, [a], [(a.shape[:-1], real)], _eigvalsh_grad)[0]


def _eig_routine(w: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
    w[...], v[...] = np.linalg.eig(a)   # complex results always (NumPy's are real where they can be)


def _eigvals_routine(w: np.ndarray, a: np.ndarray) -> None:
    w[...] = np.linalg.eigvals(a)


def eig(a: Array) -> tuple[Array, Array]:
    """Eigenvalues and eigenvectors of a general matrix, complex (no gradient: lazyarr's autograd is
    for real values)."""
    c = a.dtype if a.dtype.is_complex else dtypes.complex_of(a.dtype)
    return _call("eig", _eig_routine, [a], [(a.shape[:-1], c), (a.shape, c)])


def eigvals(a: Array) -> Array:
    c = a.dtype if a.dtype.is_complex else dtypes.complex_of(a.dtype)
    return _call("eigvals", _eigvals_routine, [a], [(a.shape[:-1], c)])[0]


# ---- the singular value decomposition ---------------------------------------------------------------

def _svd_routine(u: np.ndarray, s: np.ndarray, vh: np.ndarray, a: np.ndarray, full: int) -> None:
    u[...], s[...], vh[...] = np.linalg.svd(a, full_matrices=bool(full))


def _svdvals_routine(s: np.ndarray, a: np.ndarray) -> None:
    s[...] = np.linalg.svd(a, compute_uv=False)


def _svd_adjoint(u: Array, s: Array, vh: Array, gu: Array | None, gs: Array | None, gvh: Array | None) -> Array:
    """A's adjoint for A = U diag(s) Vh, reduced (Townsend 2016): U (diag(ḡs) + (F ∘ (UᵀḡU - ḡUᵀU)) S
    + S (F ∘ (VᵀḡV - ḡVᵀV))) Vh, F_ij = 1/(s_j² - s_i²) off the diagonal, plus the parts of ḡU and
    ḡV outside the spans of U and V, divided by s."""
    k = s.shape[-1]
    v = mT(vh)
    s2 = multiply(s, s)
    gaps = subtract(expand_dims(s2, axis=-2), expand_dims(s2, axis=-1))   # s_j² - s_i²
    off = equal(eye(k, dtype=dtypes.bool_, device=s.device), False)
    f = where(off, divide(1.0, where(off, gaps, 1.0)), 0.0)
    sm = _diag_embed(s)
    middle = _diag_embed(gs) if gs is not None else zeros(s.shape + (k,), dtype=s.dtype, device=s.device)
    extra = None
    if gu is not None:
        ut_gu = matmul(mT(u), gu)
        middle = add(middle, matmul(multiply(f, subtract(ut_gu, mT(ut_gu))), sm))
        if u.shape[-2] > k:   # the part of ḡU outside U's span
            proj = subtract(gu, matmul(u, ut_gu))
            extra = matmul(divide(proj, expand_dims(s, axis=-2)), vh)
    if gvh is not None:
        gv = mT(gvh)
        vt_gv = matmul(mT(v), gv)
        middle = add(middle, matmul(sm, multiply(f, subtract(vt_gv, mT(vt_gv)))))
        if v.shape[-2] > k:
            proj = subtract(gv, matmul(v, vt_gv))
            part = matmul(u, mT(divide(proj, expand_dims(s, axis=-2))))
            extra = part if extra is None else add(extra, part)
    out = matmul(u, matmul(middle, vh))
    return out if extra is None else add(out, extra)


def _svd_grad(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    (a,), (u, s, vh) = _arrays(call)
    g = wrap(g, a.device)
    k = s.shape[-1]
    # with full matrices, the columns of U and rows of Vh past k carry no gradient (as PyTorch's)
    u, vh = u[..., :k], vh[..., :k, :]
    parts: list[Array | None] = [None, None, None]
    parts[i] = g[..., :k] if i == 0 else g[..., :k, :] if i == 2 else g
    return [_svd_adjoint(u, s, vh, *parts).uop]


def svd(a: Array, full_matrices: bool) -> tuple[Array, Array, Array]:
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    real = dtypes.component(a.dtype) if a.dtype.is_complex else a.dtype
    shapes = [(batch + (m, m if full_matrices else k), a.dtype), (batch + (k,), real),
              (batch + (n if full_matrices else k, n), a.dtype)]
    return _call("svd", _svd_routine, [a], shapes, _svd_grad, (int(full_matrices),))


def _svdvals_grad(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    (a,), _ = _arrays(call)
    u, s, vh = svd(a, False)
    return [matmul(multiply(u, expand_dims(wrap(g, a.device), axis=-2)), vh).uop]   # U diag(ḡ) Vh


def svdvals(a: Array) -> Array:
    real = dtypes.component(a.dtype) if a.dtype.is_complex else a.dtype
    return _call("svdvals", _svdvals_routine, [a], [(a.shape[:-2] + (min(a.shape[-2:]),), real)], _svdvals_grad)[0]
