"""NumPy's polynomial functions (coefficients highest power first): polyval, polyder, polyint,
polyadd, polysub, polymul, polydiv, polyfit, roots, poly, vander, and the poly1d class.

Coefficient arithmetic is lazy and differentiable: Horner's rule, shifted sums, convolution.
polyfit solves the least-squares problem of the column-scaled Vandermonde matrix with
lazyarr.linalg.lstsq; roots are the eigenvalues of the companion matrix (lazyarr.linalg.eigvals).
Where NumPy's result has a length or dtype that depends on the coefficients' values, the values
are read back: the leading zeros poly1d and polymul trim and the zeros roots strips, whether all
roots are real (NumPy's eigvals then gives real numbers), and the remainder polydiv trims.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array
from lazyarr.creation import arange, as_tensor, asarray, eye, ones, zeros
from lazyarr.elementwise import add, conj, divide, equal, imag, multiply, negative, real, sqrt, subtract
from lazyarr.linalg import eigvals, inv, lstsq
from lazyarr.linear_algebra import matmul, outer
from lazyarr.manipulation import broadcast_to, concat, expand_dims, flip, reshape, stack
from lazyarr.padding import pad
from lazyarr.numpy_functions import convolve
from lazyarr.statistics import all as all_, cumulative_prod, sum as total


def _coefficients(p: Any) -> Array:
    """p's coefficients as a 1-D array (a poly1d's, or p itself; a scalar is one coefficient)."""
    t = p.coeffs if isinstance(p, poly1d) else as_tensor(p)
    return reshape(t, (1,)) if t.ndim == 0 else t


def _leading_zeros(c: Array) -> int:
    """How many of the 1-D coefficients c are zeros before the first nonzero one (read back)."""
    nonzero = np.flatnonzero(c.numpy())
    return int(nonzero[0]) if nonzero.size else c.shape[0]


def _trimmed(c: Array) -> Array:
    """c without its leading zeros ([0] when all are zero), as NumPy's poly1d keeps them."""
    k = _leading_zeros(c)
    return c[k:] if k < c.shape[0] else zeros((1,), dtype=c.dtype, device=c.device)


# ---- evaluation and calculus ----------------------------------------------------------------------

def polyval(p: Any, x: Any) -> Any:
    """p(x) by Horner's rule (in the dtype of p and x promoted, as NumPy's); x may be a poly1d."""
    c = _coefficients(p)
    if isinstance(x, poly1d):
        y = poly1d([0])
        for k in range(c.shape[0]):
            y = y * x + c[k]
        return y
    t = as_tensor(x)
    y = zeros(t.shape, dtype=dtypes.promote_types(t.dtype, c.dtype), device=t.device)
    for k in range(c.shape[0]):
        y = add(multiply(y, t), c[k])
    return y


def polyder(p: Any, m: int = 1) -> Any:
    """The m-th derivative's coefficients (a poly1d for a poly1d)."""
    m = operator.index(m)
    if m < 0:
        raise ValueError("polyder: order of derivative must be positive (see polyint)")
    c = _coefficients(p)
    for _ in range(m):
        n = c.shape[0] - 1
        c = multiply(c[:-1], arange(n, 0, -1)) if n > 0 else multiply(c[:0], arange(0))
    return poly1d(c) if isinstance(p, poly1d) else c


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The m-th antiderivative's coefficients, with integration constants k (one, or m of them,
    the first for the first integration; zeros by default); a poly1d for a poly1d."""
    m = operator.index(m)
    if m < 0:
        raise ValueError("polyint: order of integral must be positive (see polyder)")
    constants = np.atleast_1d(np.zeros(m) if k is None else np.asarray(k.numpy() if isinstance(k, Array) else k))
    if constants.size == 1 and m > 1:
        constants = np.full(m, constants[0])
    if constants.size < m:
        raise ValueError("polyint: k must be a scalar or a rank-1 array of length 1 or >m")
    c = _coefficients(p)
    for i in range(m):
        scaled = divide(c, arange(c.shape[0], 0, -1))
        c = concat([scaled, asarray(constants[i:i + 1], dtype=dtypes.promote_types(scaled.dtype, dtypes.as_dtype(
            constants.dtype)), device=scaled.device)])
    return poly1d(c) if isinstance(p, poly1d) else c


# ---- arithmetic -----------------------------------------------------------------------------------------

def _aligned(a1: Any, a2: Any) -> tuple[Array, Array]:
    """The two coefficient arrays, the shorter padded with leading zeros."""
    a, b = _coefficients(a1), _coefficients(a2)
    n = max(a.shape[0], b.shape[0])
    return pad(a, (n - a.shape[0], 0)), pad(b, (n - b.shape[0], 0))


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum's coefficients (a poly1d when either is one)."""
    a, b = _aligned(a1, a2)
    out = add(a, b)
    return poly1d(out) if isinstance(a1, poly1d) or isinstance(a2, poly1d) else out


def polysub(a1: Any, a2: Any) -> Any:
    """The difference's coefficients (a poly1d when either is one)."""
    a, b = _aligned(a1, a2)
    out = subtract(a, b)
    return poly1d(out) if isinstance(a1, poly1d) or isinstance(a2, poly1d) else out


def polymul(a1: Any, a2: Any) -> Any:
    """The product's coefficients: the convolution of the two, their leading zeros trimmed first
    (as NumPy's, which makes poly1d's of them); a poly1d when either is one."""
    a, b = _trimmed(_coefficients(a1)), _trimmed(_coefficients(a2))
    out = convolve(a, b)
    return poly1d(out) if isinstance(a1, poly1d) or isinstance(a2, poly1d) else out


def polydiv(u: Any, v: Any) -> tuple[Any, Any]:
    """(quotient, remainder) of polynomial long division, in floats; the remainder's leading
    values within 1e-14 of zero are dropped (read back), as NumPy's."""
    a, b = _coefficients(u), _coefficients(v)
    d = dtypes.promote_types(a.dtype, b.dtype, dtypes.float64)
    a, b = a.astype(d), b.astype(d)
    m, n = a.shape[0] - 1, b.shape[0] - 1
    scale = divide(1.0, b[0])
    rest = [a[i] for i in range(m + 1)]
    quotient = []
    for k in range(m - n + 1):   # each step removes the leading term
        q = multiply(scale, rest[k])
        quotient.append(q)
        for j in range(n + 1):
            rest[k + j] = subtract(rest[k + j], multiply(q, b[j]))
    q = stack(quotient) if quotient else zeros((1,), dtype=d, device=a.device)
    r = stack(rest)
    values = r.numpy()
    k = 0
    while k < values.shape[0] - 1 and np.allclose(values[k], 0, rtol=1e-14):
        k += 1
    r = r[k:]
    if isinstance(u, poly1d) or isinstance(v, poly1d):
        return poly1d(q), poly1d(r)
    return q, r


# ---- fitting, roots and construction ---------------------------------------------------------------------

def vander(x: Any, N: int | None = None, increasing: bool = False) -> Array:
    """The Vandermonde matrix: columns x^(N-1), ..., x, 1 (increasing powers when asked), by a
    cumulative product as NumPy's."""
    t = as_tensor(x)
    if t.ndim != 1:
        raise ValueError("vander: x must be a one-dimensional array or sequence")
    n = t.shape[0] if N is None else operator.index(N)
    d = dtypes.promote_types(t.dtype, dtypes.default_int)
    if n == 0:
        return zeros((t.shape[0], 0), dtype=d, device=t.device)
    columns = broadcast_to(expand_dims(t.astype(d), axis=1), (t.shape[0], n - 1))
    powers = cumulative_prod(columns, axis=1, include_initial=True).astype(d)
    return powers if increasing else flip(powers, axis=1)


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """The least-squares polynomial of degree deg through (x, y) (y: 1-D, or 2-D for several
    fits), highest power first; `full` adds the residuals, rank, singular values and rcond, `cov`
    the coefficients' covariance (scaled by the residuals, unless 'unscaled')."""
    order = operator.index(deg) + 1
    if order < 1:
        raise ValueError("polyfit: expected deg >= 0")
    tx, ty = as_tensor(x), as_tensor(y)
    if tx.ndim != 1:
        raise TypeError("polyfit: expected 1D vector for x")
    if tx.size == 0:
        raise TypeError("polyfit: expected non-empty vector for x")
    if ty.ndim < 1 or ty.ndim > 2:
        raise TypeError("polyfit: expected 1D or 2D array for y")
    if tx.shape[0] != ty.shape[0]:
        raise TypeError("polyfit: expected x and y to have same length")
    tx = tx.astype(dtypes.promote_types(tx.dtype, dtypes.float64))
    ty = ty.astype(dtypes.promote_types(ty.dtype, dtypes.float64))
    if rcond is None:
        rcond = tx.shape[0] * dtypes.finfo(tx.dtype).eps
    lhs, rhs = vander(tx, order), ty
    if w is not None:
        tw = as_tensor(w).astype(dtypes.float64)
        if tw.ndim != 1:
            raise TypeError("polyfit: expected a 1-d array for weights")
        if tw.shape[0] != ty.shape[0]:
            raise TypeError("polyfit: expected w and y to have the same length")
        lhs = multiply(lhs, expand_dims(tw, axis=1))
        rhs = multiply(rhs, tw if rhs.ndim == 1 else expand_dims(tw, axis=1))
    # columns scaled to unit norm: the problem's conditioning no longer depends on x's magnitude
    scale = sqrt(total(real(multiply(conj(lhs), lhs)) if lhs.dtype.is_complex else multiply(lhs, lhs), axis=0))
    lhs = divide(lhs, scale)
    c, residuals, rank, s = lstsq(lhs, rhs, rcond)
    c = divide(c, scale if c.ndim == 1 else expand_dims(scale, axis=1))
    if int(rank) != order and not full:
        warnings.warn("polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=2)
    if full:
        return c, residuals, rank.astype(dtypes.int32), s, rcond
    if not cov:
        return c
    base = divide(inv(matmul(conj(lhs).T, lhs)), outer(scale, scale))
    if cov == "unscaled":
        factor: Any = 1.0
    else:
        if tx.shape[0] <= order:
            raise ValueError("polyfit: the number of data points must exceed order to scale the covariance matrix")
        factor = divide(residuals, tx.shape[0] - order)
    if ty.ndim == 1:
        return c, multiply(base, factor)
    return c, multiply(expand_dims(base, axis=2), factor)


def roots(p: Any) -> Array:
    """The roots of the polynomial: the eigenvalues of its companion matrix, after the leading
    zeros (ignored) and trailing ones (roots at 0) are stripped; real when all are real and the
    coefficients are, as NumPy's."""
    c = as_tensor(p)
    if c.ndim == 0:
        c = reshape(c, (1,))
    if c.ndim != 1:
        raise ValueError("roots: input must be a rank-1 array")
    nonzero = np.flatnonzero(c.numpy())
    if nonzero.size == 0:
        return asarray(np.zeros(0), device=c.device)
    trailing = c.shape[0] - int(nonzero[-1]) - 1
    c = c[int(nonzero[0]):int(nonzero[-1]) + 1]
    if not c.dtype.is_inexact:
        c = c.astype(dtypes.float64)
    n = c.shape[0]
    if n > 1:
        first = reshape(negative(divide(c[1:], c[0])), (1, n - 1))
        companion = concat([first, eye(n - 2, n - 1, dtype=c.dtype, device=c.device)], axis=0) if n > 2 else first
        found = eigvals(companion)
        if not c.dtype.is_complex and bool(all_(equal(imag(found), 0.0))):
            found = real(found)
    else:
        found = zeros((0,), dtype=c.dtype, device=c.device)
    if trailing:
        found = concat([found, zeros((trailing,), dtype=found.dtype, device=found.device)])
    return found


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots (of a square matrix: its
    characteristic polynomial); real when complex roots come in conjugate pairs."""
    z = as_tensor(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        z = eigvals(z)
    elif z.ndim == 1:
        if not z.dtype.is_inexact:
            z = z.astype(dtypes.float64)
    else:
        raise ValueError("poly: input must be 1d or non-empty square 2d array")
    if z.shape[0] == 0:
        return 1.0
    out = ones((1,), dtype=z.dtype, device=z.device)
    for i in range(z.shape[0]):
        out = convolve(out, stack([ones((), dtype=z.dtype, device=z.device), negative(z[i])]))
    if z.dtype.is_complex:
        host = z.numpy()
        if np.array_equal(np.sort(host), np.sort(host.conj())):
            out = real(out)
    return out


# ---- the class ------------------------------------------------------------------------------------------

class poly1d:
    """NumPy's poly1d: a polynomial from its coefficients (highest power first, leading zeros
    dropped) or, with r=True, from its roots. Calling it evaluates it (lazily); + - * ** and /
    (by a number or a polynomial) give poly1d's; `deriv`, `integ`, `roots`, `order`, `coeffs`."""
    __hash__ = None   # mutable in NumPy, and == compares values

    def __init__(self, c_or_r: Any, r: bool = False, variable: str | None = None) -> None:
        if isinstance(c_or_r, poly1d):
            self._variable = c_or_r._variable if variable is None else variable
            self._coeffs = c_or_r._coeffs
            return
        if r:
            c_or_r = poly(c_or_r)
        c = as_tensor(c_or_r)
        if c.ndim > 1:
            raise ValueError("poly1d: polynomial must be 1d only")
        self._coeffs = _trimmed(reshape(c, (1,)) if c.ndim == 0 else c)
        self._variable = "x" if variable is None else variable

    @property
    def coeffs(self) -> Array:
        return self._coeffs

    c = coef = coefficients = coeffs

    @property
    def variable(self) -> str:
        return self._variable

    @property
    def order(self) -> int:
        return self._coeffs.shape[0] - 1

    o = order

    @property
    def roots(self) -> Array:
        return roots(self._coeffs)

    r = roots

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        values = np.array(self._coeffs.numpy())
        return values if dtype is None else values.astype(dtype)

    def __repr__(self) -> str:
        return f"poly1d({np.array_repr(np.asarray(self._coeffs.numpy()))[6:-1]})"

    def __str__(self) -> str:
        return str(np.poly1d(np.asarray(self._coeffs.numpy()), variable=self._variable))

    def __call__(self, val: Any) -> Any:
        return polyval(self._coeffs, val)

    def __len__(self) -> int:
        return self.order

    def __iter__(self):
        return iter(self._coeffs)

    def __getitem__(self, power: int) -> Any:
        """The coefficient of x**power (0 past the order)."""
        power = operator.index(power)
        if power < 0 or power > self.order:
            return self._coeffs.dtype.np.type(0)
        return self._coeffs[self.order - power]

    def __neg__(self) -> poly1d:
        return poly1d(negative(self._coeffs))

    def __pos__(self) -> poly1d:
        return self

    def __add__(self, other: Any) -> poly1d:
        return poly1d(polyadd(self._coeffs, _coefficients(_as_poly(other))))

    __radd__ = __add__

    def __sub__(self, other: Any) -> poly1d:
        return poly1d(polysub(self._coeffs, _coefficients(_as_poly(other))))

    def __rsub__(self, other: Any) -> poly1d:
        return poly1d(polysub(_coefficients(_as_poly(other)), self._coeffs))

    def __mul__(self, other: Any) -> poly1d:
        if _is_number(other):
            return poly1d(multiply(self._coeffs, other))
        return poly1d(polymul(self._coeffs, _coefficients(_as_poly(other))))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        if _is_number(other):
            return poly1d(divide(self._coeffs, other))
        return polydiv(self, _as_poly(other))

    def __rtruediv__(self, other: Any) -> Any:
        return polydiv(_as_poly(other), self)

    def __pow__(self, power: Any) -> poly1d:
        if not isinstance(power, (int, np.integer)) or isinstance(power, bool) or power < 0:
            raise ValueError("poly1d: power to non-negative integers only")
        out = poly1d([1])
        for _ in range(int(power)):
            out = out * self
        return out

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, poly1d):
            return NotImplemented
        if self._coeffs.shape != other._coeffs.shape:
            return False
        return bool(all_(equal(self._coeffs, other._coeffs)))

    def __ne__(self, other: Any) -> bool:
        same = self.__eq__(other)
        return same if same is NotImplemented else not same

    def deriv(self, m: int = 1) -> poly1d:
        return poly1d(polyder(self._coeffs, m))

    def integ(self, m: int = 1, k: Any = 0) -> poly1d:
        return poly1d(polyint(self._coeffs, m, k))


def _is_number(x: Any) -> bool:
    return dtypes.scalar_kind(x) is not None or isinstance(x, np.generic) or (isinstance(x, Array) and x.ndim == 0)


def _as_poly(x: Any) -> poly1d:
    return x if isinstance(x, poly1d) else poly1d(x)


__all__ = ["polyval", "polyder", "polyint", "polyadd", "polysub", "polymul", "polydiv", "polyfit", "roots", "poly",
           "vander", "poly1d"]
