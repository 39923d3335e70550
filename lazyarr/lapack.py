"""Matrix decompositions as graph nodes of their own: cholesky, qr, eigh, eig, svd, and the LU
family (solve, inv, det, slogdet), batched over leading axes.

Each is a CALL of a precompiled routine: NumPy's `linalg` (LAPACK) on the buffers' memory, on the
CPU. On a device whose memory is not the host's (OpenCL), real matrices of up to
`small_matrices.SMALL` rows are factored by kernels lazyarr writes in the IR (Gauss–Jordan for the
LU family, Cholesky–Banachiewicz), one work-item a matrix; everything else goes through a round
trip to the host to the same routine (`lazyarr.runtime.executor`, reported by LAZYARR_DEBUG=1).
They are scheduled, cached and realized like kernels, without fusion across them, and each has
its local gradient, the same whichever way it was computed (a rule on the inputs and results:
the CALL's `CallSpec.grad`, or `graph.with_gradient` on the kernels' results), written with
lazyarr's own ops, so that gradients fuse, run on every device, and differentiate again: the
standard results of matrix calculus (Giles 2008; Murray 2016 for Cholesky; Townsend 2016 for the
SVD), checked against PyTorch in the tests. A singular matrix (solve, inv), or one that is not
positive definite (cholesky), raises NumPy's LinAlgError (a ValueError) when the value is
computed.

The functions here take arrays already checked and promoted (`lazyarr.linalg` does that) and
return arrays; their names are the decompositions'."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from lazyarr import dtypes, small_matrices as small
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.uop import CallSpec, UOp
from lazyarr.creation import eye, tril, zeros
from lazyarr.dtypes import DType
from lazyarr.elementwise import (abs as absolute, add, divide, equal, log, multiply, negative, remainder, sign,
                                 subtract, where)
from lazyarr.graph import call_result, call_results, with_gradient
from lazyarr.linear_algebra import matmul
from lazyarr.manipulation import broadcast_to, concat, expand_dims, matrix_transpose as mT, reshape
from lazyarr.small_matrices import SMALL
from lazyarr.statistics import prod, sum as total

LinAlgError = np.linalg.LinAlgError


@dataclass(frozen=True)
class _CallRule:
    """A decomposition's gradient, rule(inputs, results, i, adjoint of result i) → the inputs'
    adjoints (arrays, or None), as a CALL's local gradient (`CallSpec.grad`)."""
    rule: Callable[[list[Array], list[Array], int, Array], list[Array | None]]

    def __call__(self, call: UOp, i: int, g: UOp) -> list[UOp | None]:
        device = call.arg.device
        inputs = [wrap(s, device) for s in call.src]
        results = [wrap(call_result(call, k), device) for k in range(len(call.arg.result_dtypes))]
        return [None if a is None else a.uop for a in self.rule(inputs, results, i, wrap(g, device))]


@dataclass(frozen=True)
class _MarkerRule:
    """The same gradient for a result computed by lazyarr's own kernels (`small_matrices`), given
    by a marker (`graph.with_gradient`): result k of `results`, whose inputs are the marker's."""
    rule: Callable[[list[Array], list[Array], int, Array], list[Array | None]]
    k: int
    results: tuple[UOp, ...]
    device: Any

    def __call__(self, marker: UOp, i: int, g: UOp) -> UOp | None:
        inputs = [wrap(s, self.device) for s in marker.src[1:]]
        # the result itself as the marker, through which a gradient of the gradient flows too
        results = [wrap(marker if k == self.k else r, self.device) for k, r in enumerate(self.results)]
        share = self.rule(inputs, results, self.k, wrap(g, self.device))[i]
        return None if share is None else share.uop


def _on_device(a: Array) -> bool:
    """Whether a batch of small real matrices on a device whose memory is not the host's is factored
    by lazyarr's own kernels (`small_matrices`) instead of a round trip to NumPy on the host."""
    return not a.device.host_memory and a.shape[-1] <= SMALL and not a.dtype.is_complex


def _with_rule(values: tuple[Array, ...], inputs: list[Array], rule: Callable) -> tuple[Array, ...]:
    """`values` (computed by lazyarr's kernels), given the decomposition's gradient `rule`."""
    results = tuple(r.uop for r in values)
    return tuple(wrap(with_gradient(v.uop, [x.uop for x in inputs], _MarkerRule(rule, k, results, v.device)), v.device)
                 for k, v in enumerate(values))


def _flat(a: Array) -> Array:
    """A stack of matrices as one batch axis."""
    return reshape(a, (math.prod(a.shape[:-2]),) + a.shape[-2:])


def _call(name: str, routine: Callable[..., None], inputs: list[Array], outputs: list[tuple[tuple[int, ...], DType]],
          rule: Callable | None = None, scalars: tuple = ()) -> tuple[Array, ...]:
    device = inputs[0].device
    spec = CallSpec(name, None, routine, tuple((x.shape, x.dtype) for x in inputs), tuple(outputs), (), scalars,
                    device=device, grad=None if rule is None else _CallRule(rule))
    return tuple(wrap(u, device) for u in call_results(spec, [x.uop for x in inputs]))


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


def _solve_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    (a, _), (x,) = inputs, results
    gb = solve(mT(a), g)          # B's adjoint: A⁻ᵀ G
    return [negative(matmul(gb, mT(x))), gb]   # A's: -A⁻ᵀ G Xᵀ


def solve(a: Array, b: Array) -> Array:
    """X with A X = B, for A (..., M, M) and B (..., M, K) of one batch shape."""
    if _on_device(a):
        reduced, pivots, _ = small.gauss_jordan(_flat(a), _flat(b))
        x = small.nonsingular(divide(reduced, expand_dims(pivots, axis=-1)), pivots)
        return _with_rule((reshape(x, b.shape),), [a, b], _solve_grad)[0]
    return _call("solve", _solve_routine, [a, b], [(b.shape, b.dtype)], _solve_grad)[0]


def _inv_routine(y: np.ndarray, a: np.ndarray) -> None:
    y[...] = np.linalg.inv(a)


def _inv_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    _, (y,) = inputs, results
    return [negative(matmul(mT(y), matmul(g, mT(y))))]


def inv(a: Array) -> Array:
    if _on_device(a):
        flat = _flat(a)
        identity = broadcast_to(eye(a.shape[-1], dtype=a.dtype, device=a.device), flat.shape)
        reduced, pivots, _ = small.gauss_jordan(flat, identity)
        y = small.nonsingular(divide(reduced, expand_dims(pivots, axis=-1)), pivots)
        return _with_rule((reshape(y, a.shape),), [a], _inv_grad)[0]
    return _call("inv", _inv_routine, [a], [(a.shape, a.dtype)], _inv_grad)[0]


def _pivots(a: Array) -> tuple[Array, Array]:
    """The pivots of a's elimination (..., M) and whether it swapped rows an odd number of times."""
    _, pivots, swaps = small.gauss_jordan(_flat(a), None)
    odd = equal(remainder(total(swaps, axis=-1), 2), 1)
    return reshape(pivots, a.shape[:-1]), reshape(odd, a.shape[:-2])


def _slogdet_routine(sign: np.ndarray, logabs: np.ndarray, a: np.ndarray) -> None:
    sign[...], logabs[...] = np.linalg.slogdet(a)


def _slogdet_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    (a,), _ = inputs, results
    if i == 0:   # the sign is piecewise constant
        return [None]
    return [multiply(expand_dims(expand_dims(g, axis=-1), axis=-1), mT(inv(a)))]


def slogdet(a: Array) -> tuple[Array, Array]:
    real = dtypes.component(a.dtype) if a.dtype.is_complex else a.dtype
    if _on_device(a):
        pivots, odd = _pivots(a)
        signs = prod(sign(pivots), axis=-1)
        return _with_rule((where(odd, negative(signs), signs), total(log(absolute(pivots)), axis=-1)), [a],
                          _slogdet_grad)
    return _call("slogdet", _slogdet_routine, [a], [(a.shape[:-2], a.dtype), (a.shape[:-2], real)], _slogdet_grad)


def _det_routine(d: np.ndarray, a: np.ndarray) -> None:
    d[...] = np.linalg.det(a)


def _det_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    (a,), (d,) = inputs, results
    scale = expand_dims(expand_dims(multiply(g, d), axis=-1), axis=-1)
    return [multiply(scale, mT(inv(a)))]   # d det / dA = det(A) A⁻ᵀ


def det(a: Array) -> Array:
    if _on_device(a):
        pivots, odd = _pivots(a)
        d = prod(pivots, axis=-1)
        return _with_rule((where(odd, negative(d), d),), [a], _det_grad)[0]
    return _call("det", _det_routine, [a], [(a.shape[:-2], a.dtype)], _det_grad)[0]


# ---- Cholesky --------------------------------------------------------------------------------------

def _cholesky_routine(out: np.ndarray, a: np.ndarray, upper: int) -> None:
    out[...] = np.linalg.cholesky(a, upper=bool(upper))


def _phi(a: Array) -> Array:
    """The lower triangle of a with its diagonal halved."""
    return subtract(tril(a), multiply(_diag_embed(_diagonal(a)), 0.5))


def _cholesky_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    """A's adjoint, symmetric: L⁻ᵀ Φ(Lᵀ Ḡ) L⁻¹, symmetrised (Murray 2016)."""
    _, (lower,) = inputs, results
    inner = _phi(matmul(mT(lower), g))
    return [_sym(solve(mT(lower), mT(solve(mT(lower), mT(inner)))))]


def _cholesky_upper_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    return _cholesky_grad(inputs, [mT(results[0])], i, mT(g))


def cholesky(a: Array, upper: bool) -> Array:
    if _on_device(a):
        lower, squares = small.cholesky_lower(_flat(a))
        lower = reshape(small.positive(lower, squares), a.shape)
        return _with_rule((mT(lower) if upper else lower,), [a], _cholesky_upper_grad if upper else _cholesky_grad)[0]
    return _call("cholesky", _cholesky_routine, [a], [(a.shape, a.dtype)],
                 _cholesky_upper_grad if upper else _cholesky_grad, (int(upper),))[0]


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


def _qr_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    (a,), (q, r) = inputs, results
    gq, gr = (g, zeros(r.shape, dtype=r.dtype, device=r.device)) if i == 0 else \
        (zeros(q.shape, dtype=q.dtype, device=q.device), g)
    m, n = a.shape[-2:]
    if m >= n:
        k = n
        return [_qr_square_grad(q[..., :k], r[..., :k, :], gq[..., :k], gr[..., :k, :])]
    # a wide matrix: A = Q [R1 R2], R1 square; Y = A's last n - m columns, R2 = Qᵀ Y
    y, r1, gr1, gr2 = a[..., m:], r[..., :m], gr[..., :m], gr[..., m:]
    gy = matmul(q, gr2)
    gx = _qr_square_grad(q, r1, add(gq, matmul(y, mT(gr2))), gr1)
    return [concat([gx, gy], axis=-1)]


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


def _eigh_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    _, (w, v) = inputs, results
    return [_spectral_grad(v, w, g, None) if i == 0 else _spectral_grad(v, w, None, g)]


def eigh(a: Array) -> tuple[Array, Array]:
    real = dtypes.component(a.dtype) if a.dtype.is_complex else a.dtype
    return _call("eigh", _eigh_routine, [a], [(a.shape[:-1], real), (a.shape, a.dtype)], _eigh_grad)


def _eigvalsh_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    (a,), _ = inputs, results
    w, v = eigh(a)
    return [_spectral_grad(v, w, g, None)]


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


def _svd_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    (a,), (u, s, vh) = inputs, results
    k = s.shape[-1]
    # with full matrices, the columns of U and rows of Vh past k carry no gradient (as PyTorch's)
    u, vh = u[..., :k], vh[..., :k, :]
    parts: list[Array | None] = [None, None, None]
    parts[i] = g[..., :k] if i == 0 else g[..., :k, :] if i == 2 else g
    return [_svd_adjoint(u, s, vh, *parts)]


def svd(a: Array, full_matrices: bool) -> tuple[Array, Array, Array]:
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    real = dtypes.component(a.dtype) if a.dtype.is_complex else a.dtype
    shapes = [(batch + (m, m if full_matrices else k), a.dtype), (batch + (k,), real),
              (batch + (n if full_matrices else k, n), a.dtype)]
    return _call("svd", _svd_routine, [a], shapes, _svd_grad, (int(full_matrices),))


def _svdvals_grad(inputs: list[Array], results: list[Array], i: int, g: Array) -> list[Array | None]:
    (a,), _ = inputs, results
    u, s, vh = svd(a, False)
    return [matmul(multiply(u, expand_dims(g, axis=-2)), vh)]   # U diag(ḡ) Vh


def svdvals(a: Array) -> Array:
    real = dtypes.component(a.dtype) if a.dtype.is_complex else a.dtype
    return _call("svdvals", _svdvals_routine, [a], [(a.shape[:-2] + (min(a.shape[-2:]),), real)], _svdvals_grad)[0]
