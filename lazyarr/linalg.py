"""The array API's linalg extension (2025.12), with NumPy's `numpy.linalg` names and keywords.

What lowers to primitives (matmul, tensordot, vecdot, outer, cross, diagonal, trace, the norms,
matrix_power) fuses with its neighbours. The decompositions and what is built on them (cholesky,
qr, eigh, eigvalsh, eig, eigvals, svd, svdvals, solve, inv, det, slogdet; pinv, matrix_rank,
lstsq, the spectral norms) are graph nodes of their own (`lazyarr.lapack`: LAPACK through NumPy,
on OpenCL small matrices by lazyarr's own kernels, the rest by a round trip through the host).
Everything is batched over leading axes and has gradients for real matrices, but eig and eigvals
(whose values are complex).

Inputs are promoted as NumPy's: booleans and integers to float64; float32, float64 and complex
stay. A stack of matrices must have at least two axes (ValueError naming the shape), a square
one equal last axes; a singular matrix (solve, inv), one not positive definite (cholesky), or a
decomposition that does not converge raises `LinAlgError` (NumPy's, a ValueError) inside the
call, as NumPy's does: the decompositions that can fail are computed at the call (`_now`; they
are library calls, a kernel boundary anyway), except while a function is traced or
differentiated (`lazyarr.function`, `grad`: `arrays.building_graphs`) or gradients are recorded
through the input (realizing would give the arrays in between their values, where the gradient
reads their graphs): there the error comes when the value is computed."""
from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple, Sequence

import numpy as np

from lazyarr import dtypes, lapack
from lazyarr.arrays import Array, building_graphs, realize
from lazyarr.creation import as_tensor, eye, zeros
from lazyarr.elementwise import (abs as absolute, conj, divide, greater, multiply, not_equal, power, sqrt, subtract,
                                 where)
from lazyarr.graph import broadcast_shapes, normalize_axes, normalize_axis
from lazyarr.lapack import LinAlgError
from lazyarr.linear_algebra import matmul, tensordot, vecdot
from lazyarr import numpy_fallback
from lazyarr.manipulation import broadcast_to, concat, expand_dims, matrix_transpose, moveaxis, reshape, stack
from lazyarr.statistics import max as amax, min as amin, sum as total
from lazyarr.searching import count_nonzero

__all__ = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet",
           "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm", "norm", "lstsq", "multi_dot",
           "cond", "LinAlgError", "EighResult", "EigResult", "QRResult", "SlogdetResult", "SVDResult"]


def __dir__() -> list[str]:
    return list(__all__)


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def _floating(x: Array) -> Array:
    """x promoted as NumPy's linalg does: booleans and integers to float64."""
    return x if x.dtype.is_inexact else x.astype(dtypes.default_float)


def _matrices(name: str, x: Any, square: bool = False, lapack: bool = True) -> Array:
    x = _floating(as_tensor(x))
    if lapack:
        _lapack_dtype(name, x)
    if x.ndim < 2:
        raise ValueError(f"{name}: expected a matrix or a stack of matrices (at least 2 dimensions), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: the last two axes must be of equal length (square matrices), got shape {x.shape}")
    return x


def _lapack_dtype(name: str, x: Array) -> None:
    if x.dtype is dtypes.float16:   # as NumPy's: LAPACK has no half precision
        raise TypeError(f"{name}: array type float16 is unsupported in linalg (convert to float32)")


def _now(*results: Array) -> None:
    """Compute a decomposition's results at the call, so that a singular matrix or a failed
    convergence raises LinAlgError there, as NumPy's does (not while a traced function builds its
    graph, whose values do not exist yet, nor where gradients flow through: see the module's
    docs)."""
    if not building_graphs and not any(r.requires_grad for r in results):
        realize(*results)


def _real_of(d: dtypes.DType) -> dtypes.DType:
    return dtypes.component(d) if d.is_complex else d


# ---- decompositions and what they compute ------------------------------------------------------------

def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """The Cholesky factor of a symmetric (Hermitian) positive-definite matrix: L with x = L Lᴴ, or
    U = Lᴴ with `upper`."""
    out = lapack.cholesky(_matrices("cholesky", x, square=True), bool(upper))
    _now(out)
    return out


def det(x: Array, /) -> Array:
    return lapack.det(_matrices("det", x, square=True))


def slogdet(x: Array, /) -> SlogdetResult:
    """The sign (a unit complex number for complex x) and the log of the absolute value of the
    determinant."""
    return SlogdetResult(*lapack.slogdet(_matrices("slogdet", x, square=True)))


def inv(x: Array, /) -> Array:
    out = lapack.inv(_matrices("inv", x, square=True))
    _now(out)
    return out


def solve(x1: Array, x2: Array, /) -> Array:
    """X with x1 X = x2: x1 (..., M, M); x2 (..., M, K), or (M,) for one vector. The batch axes
    broadcast."""
    a = _matrices("solve", x1, square=True)
    b = _floating(as_tensor(x2))
    d = dtypes.promote_types(a.dtype, b.dtype)
    a, b = a.astype(d), b.astype(d)
    m = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        if b.shape[0] != m:
            raise ValueError(f"solve: x2 of shape {b.shape} does not match x1 of shape {a.shape} ({m} rows)")
        b = expand_dims(b, axis=-1)
    elif b.ndim < 2 or b.shape[-2] != m:
        raise ValueError(f"solve: x2 of shape {b.shape} does not match x1 of shape {a.shape}: expected (..., {m}, K) "
                         f"or ({m},)")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    x = lapack.solve(a, b)
    _now(x)
    return x[..., 0] if vector else x


def eigh(x: Array, /, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric (Hermitian) matrix, from
    its lower triangle (NumPy's UPLO='U': the upper)."""
    a = _uplo(_matrices("eigh", x, square=True), UPLO)
    out = EighResult(*lapack.eigh(a))
    _now(*out)
    return out


def eigvalsh(x: Array, /, UPLO: str = "L") -> Array:
    out = lapack.eigvalsh(_uplo(_matrices("eigvalsh", x, square=True), UPLO))
    _now(out)
    return out


def _uplo(a: Array, uplo: str) -> Array:
    if uplo not in ("L", "U"):
        raise ValueError(f"UPLO must be 'L' or 'U', got {uplo!r}")
    return a if uplo == "L" else conj(matrix_transpose(a))


def eig(x: Array, /) -> EigResult:
    """Eigenvalues and eigenvectors of a general matrix, always complex (the standard's rule)."""
    out = EigResult(*lapack.eig(_matrices("eig", x, square=True)))
    _now(*out)
    return out


def eigvals(x: Array, /) -> Array:
    out = lapack.eigvals(_matrices("eigvals", x, square=True))
    _now(out)
    return out


def qr(x: Array, /, *, mode: str = "reduced") -> Any:
    """Q (orthonormal columns) and R (upper triangular) with x = QR; mode 'reduced' (K = min(M, N)),
    'complete' (Q square), or NumPy's 'r' (R alone)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    q, r = lapack.qr(_matrices("qr", x), mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def svd(x: Array, /, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """U, S (descending) and Vh with x = U diag(S) Vh; `full_matrices` makes U and Vh square.
    NumPy's compute_uv=False gives S alone."""
    a = _matrices("svd", x)
    out = SVDResult(*lapack.svd(a, bool(full_matrices))) if compute_uv else lapack.svdvals(a)
    _now(*(out if compute_uv else (out,)))
    return out


def svdvals(x: Array, /) -> Array:
    out = lapack.svdvals(_matrices("svdvals", x))
    _now(out)
    return out


def _cutoff(s: Array, shape: tuple[int, ...], rtol: Any) -> Array:
    """The singular values below which a stack's matrices count as singular: rtol times the
    largest (rtol by default max(M, N)·eps of the dtype)."""
    if rtol is None:
        rtol = max(shape[-2:]) * dtypes.finfo(s.dtype).eps
    largest = amax(s, axis=-1, keepdims=True) if s.shape[-1] else zeros(s.shape[:-1] + (1,), dtype=s.dtype,
                                                                       device=s.device)
    rtol = as_tensor(rtol, s.device)
    if rtol.ndim:
        rtol = expand_dims(rtol, axis=-1)
    return multiply(largest, rtol.astype(s.dtype))


def matrix_rank(x: Array, /, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Array:
    """How many singular values exceed rtol times the largest (NumPy's `tol`: an absolute cutoff)."""
    a = _matrices("matrix_rank", x)
    s = lapack.svdvals(a)
    cut = as_tensor(tol, s.device).astype(s.dtype) if tol is not None else _cutoff(s, a.shape, rtol)
    if tol is not None and cut.ndim:
        cut = expand_dims(cut, axis=-1)
    return count_nonzero(greater(s, cut), axis=-1)


def pinv(x: Array, /, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Array:
    """The Moore–Penrose pseudo-inverse: V diag(1/s) Uᴴ over the singular values above the cutoff
    (rtol times the largest; NumPy's `rcond` is rtol)."""
    a = _matrices("pinv", x)
    u, s, vh = lapack.svd(a, False)
    keep = greater(s, _cutoff(s, a.shape, rcond if rtol is None else rtol))
    inverse = where(keep, divide(1.0, where(keep, s, 1.0)), 0.0).astype(s.dtype)
    return matmul(multiply(conj(matrix_transpose(vh)), expand_dims(inverse, axis=-2)), conj(matrix_transpose(u)))


def lstsq(a: Array, b: Array, rcond: Any = None) -> tuple[Array, Array, np.int32, Array]:
    """NumPy's lstsq: the least-squares solution x of a x ≈ b (by the pseudo-inverse), the sums of
    squared residuals (when a has full column rank and more rows than columns, else empty), the
    rank of a, and its singular values."""
    a = _matrices("lstsq", a)
    b = _floating(as_tensor(b))
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise ValueError(f"lstsq: expected a of shape (M, N) and b of shape (M,) or (M, K), got {a.shape} and {b.shape}")
    d = dtypes.promote_types(a.dtype, b.dtype)
    a, b = a.astype(d), b.astype(d)
    m, n = a.shape
    u, s, vh = lapack.svd(a, False)
    cut = _cutoff(s, a.shape, rcond if rcond is not None and rcond >= 0 else None)
    keep = greater(s, cut)
    inverse = where(keep, divide(1.0, where(keep, s, 1.0)), 0.0).astype(s.dtype)
    bb = b if b.ndim == 2 else expand_dims(b, axis=-1)
    x = matmul(conj(matrix_transpose(vh)), multiply(expand_dims(inverse, axis=-1), matmul(conj(matrix_transpose(u)), bb)))
    rank = int(count_nonzero(keep))   # (read back: the residuals' shape depends on it; NumPy's int32 scalar)
    if rank == n and m > n:
        r = subtract(bb, matmul(a, x))
        residuals = total(multiply(conj(r), r).real if r.dtype.is_complex else multiply(r, r), axis=0)
    else:
        residuals = zeros((0,), dtype=s.dtype, device=a.device)
    return (x if b.ndim == 2 else x[..., 0]), residuals, np.int32(rank), s


def cond(x: Array, p: Any = None) -> Array:
    """NumPy's cond: the condition number in norm p (the 2-norm by default: the ratio of the largest
    singular value to the smallest)."""
    a = _matrices("cond", x)
    if p is None or p in (2, -2):
        s = lapack.svdvals(a)
        big, small = amax(s, axis=-1), amin(s, axis=-1)
        return divide(big, small) if p != -2 else divide(small, big)
    return multiply(matrix_norm(a, ord=p), matrix_norm(inv(a), ord=p))


# ---- compositions of primitives --------------------------------------------------------------------

def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The diagonals of the last two axes (`offset` above the main one, or below where negative)."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal: expected at least 2 dimensions, got shape {x.shape}")
    offset = operator.index(offset)
    m, n = x.shape[-2:]
    start, rows = (offset, 0) if offset >= 0 else (0, -offset)
    length = max(0, min(m - rows, n - start))
    batch = x.shape[:-2]
    if length == 0:
        return zeros(batch + (0,), dtype=x.dtype, device=x.device)
    # the elements (rows + i, start + i) sit n + 1 apart in the flattened matrix
    first = rows * n + start
    flat = reshape(x, batch + (m * n,))
    span = length * (n + 1)
    if first + span > m * n:   # the last stride runs past the end: pad it
        flat = concat([flat, zeros(batch + (first + span - m * n,), dtype=x.dtype, device=x.device)], axis=-1)
    window = flat[..., first:first + span]
    return reshape(window, batch + (length, n + 1))[..., 0]


def trace(x: Array, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """The sums of the diagonals (of the last two axes), in sum's dtype unless `dtype` is given."""
    return total(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: Array, x2: Array, /) -> Array:
    """Every product of an element of the vector x1 with one of the vector x2."""
    a, b = as_tensor(x1), as_tensor(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"outer: expected two vectors (1-D arrays), got shapes {a.shape} and {b.shape}")
    return multiply(expand_dims(a, axis=1), expand_dims(b, axis=0))


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """The cross product of 3-element vectors along `axis` (the other axes broadcast)."""
    a, b = as_tensor(x1), as_tensor(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("cross: 0-dimensional arrays have no vectors")
    shape = broadcast_shapes(a.shape, b.shape)
    if not -min(a.ndim, b.ndim) <= axis < min(a.ndim, b.ndim):
        raise ValueError(f"cross: axis {axis} is out of bounds for arrays of shapes {a.shape} and {b.shape}")
    ax = normalize_axis(axis, len(shape))
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError(f"cross: the vectors along axis {axis} must have 3 elements, got shapes {a.shape} and {b.shape}")
    a, b = moveaxis(broadcast_to(a, shape), ax, -1), moveaxis(broadcast_to(b, shape), ax, -1)
    parts = [subtract(multiply(a[..., i], b[..., j]), multiply(a[..., j], b[..., i])) for i, j in ((1, 2), (2, 0), (0, 1))]
    return moveaxis(stack(parts, axis=-1), -1, ax)


def matrix_power(x: Array, n: int, /) -> Array:
    """x multiplied by itself n times (the identity for 0, the inverse's power for n < 0), by
    repeated squaring."""
    a = _matrices("matrix_power", x, square=True, lapack=False) if not as_tensor(x).dtype.is_int else as_tensor(x)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"matrix_power: expected square matrices, got shape {a.shape}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: the exponent must be an integer, got {type(n).__name__}") from None
    if n == 0:
        return broadcast_to(eye(a.shape[-1], dtype=a.dtype, device=a.device), a.shape)
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def vector_norm(x: Array, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Array:
    """The p-norm of the vectors along `axis` (every axis when None): ord ±inf (the largest or
    smallest magnitude), 0 (how many are not zero), or any other p: (Σ |x|^p)^(1/p)."""
    x = _floating(as_tensor(x))
    mag = absolute(x)
    axes = normalize_axes(axis, x.ndim)
    if ord == math.inf:
        return amax(mag, axis=axes, keepdims=keepdims) if mag.size else total(mag, axis=axes, keepdims=keepdims)
    if ord == -math.inf:
        return amin(mag, axis=axes, keepdims=keepdims) if mag.size else total(mag, axis=axes, keepdims=keepdims)
    if ord == 0:
        return total(not_equal(mag, 0).astype(mag.dtype), axis=axes, keepdims=keepdims)
    if ord == 1:
        return total(mag, axis=axes, keepdims=keepdims)
    if ord == 2:
        return sqrt(total(multiply(mag, mag), axis=axes, keepdims=keepdims))
    if not isinstance(ord, (int, float)) or isinstance(ord, bool):
        raise ValueError(f"vector_norm: ord must be a number, got {ord!r}")
    return power(total(power(mag, float(ord)), axis=axes, keepdims=keepdims), 1.0 / ord)


def matrix_norm(x: Array, /, *, keepdims: bool = False, ord: Any = "fro") -> Array:
    """The norm of the matrices of the last two axes: 'fro' (Frobenius), 'nuc' (the sum of the
    singular values), 1 / -1 (the largest / smallest column sum of magnitudes), inf / -inf (row
    sums), 2 / -2 (the largest / smallest singular value)."""
    a = _matrices("matrix_norm", x, lapack=False)
    if ord == "fro":
        out = vector_norm(a, axis=(-2, -1), keepdims=True)
    elif ord in ("nuc", 2, -2):
        _lapack_dtype("matrix_norm", a)
        s = lapack.svdvals(a)
        pick = total if ord == "nuc" else amax if ord == 2 else amin
        out = expand_dims(expand_dims(pick(s, axis=-1), axis=-1), axis=-1)
    elif ord in (1, -1, math.inf, -math.inf):
        sums = total(absolute(a), axis=-2 if ord in (1, -1) else -1, keepdims=True)
        pick = amax if ord in (1, math.inf) else amin
        out = pick(sums, axis=-1 if ord in (1, -1) else -2, keepdims=True)
    else:
        raise ValueError(f"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")
    return out if keepdims else reshape(out, a.shape[:-2])


def norm(x: Array, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Array:
    """NumPy's norm: a vector norm over one axis (or the flattened array when axis is None and ord
    is None), a matrix norm over two."""
    x = _floating(as_tensor(x))
    if axis is None:
        if ord is None:
            return vector_norm(x, keepdims=keepdims)
        if x.ndim == 1:
            return vector_norm(x, ord=ord, keepdims=keepdims)
        if x.ndim == 2:
            return norm(x, ord, (0, 1), keepdims)
        raise ValueError(f"norm: give axis for an array of {x.ndim} dimensions and ord={ord!r}")
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"norm: ord {ord!r} is a matrix norm; a vector's needs a number")
        return vector_norm(x, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) == 2:
        r, c = (normalize_axis(a, x.ndim) for a in axes)
        if r == c:
            raise ValueError(f"norm: duplicate axes {axis}")
        moved = moveaxis(x, (r, c), (-2, -1))
        out = matrix_norm(moved, ord="fro" if ord is None else ord, keepdims=keepdims)
        if keepdims:
            out = moveaxis(out, (-2, -1), (r, c))
        return out
    raise ValueError(f"norm: axis must name one or two axes, got {axis!r}")


def multi_dot(arrays: Sequence[Array], /) -> Array:
    """NumPy's multi_dot: the product of the matrices in turn (the first may be a row vector, the
    last a column vector), in the order of fewest multiplications."""
    ts = [as_tensor(a) for a in arrays]
    if len(ts) < 2:
        raise ValueError("multi_dot: needs at least two arrays")
    first, last = ts[0].ndim == 1, ts[-1].ndim == 1
    if first:
        ts[0] = expand_dims(ts[0], axis=0)
    if last:
        ts[-1] = expand_dims(ts[-1], axis=-1)
    if any(t.ndim != 2 for t in ts):
        raise ValueError(f"multi_dot: expected 2-D arrays (1-D at the ends), got shapes {[t.shape for t in arrays]}")
    dims = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    k = len(ts)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):   # the chain order of fewest scalar multiplications
        for i in range(k - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def product(i: int, j: int) -> Array:
        return ts[i] if i == j else matmul(product(i, split[i][j]), product(split[i][j] + 1, j))
    out = product(0, k - 1)
    if first:
        out = out[0]
    if last:
        out = out[..., 0]
    return out


def __getattr__(name: str) -> Any:
    """NumPy's np.linalg functions lazyarr lacks, computed by NumPy on the host (lazyarr.numpy_fallback)."""
    return numpy_fallback.resolve(__name__, name)
