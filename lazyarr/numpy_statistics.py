"""NumPy's statistics and calculus beyond the array API: cov, corrcoef, gradient, trapezoid (and
its old name trapz), histogram2d and histogramdd.

cov, corrcoef, gradient and trapezoid are compositions of the namespace's functions (lazy, fused,
differentiable), with NumPy's formulas: cov centres the rows on their (weighted) means and divides
their products by the degrees of freedom NumPy's rules give; gradient takes second-order central
differences inside and first- or second-order one-sided ones at the ends, on uniform or given
coordinates. Checks of weights' values (negative, non-integer frequencies) read one boolean back.

histogramdd finds each sample's bin along each axis by a binary search of the edges (a value on
the last edge counts in the last bin; values outside, NaNs included, in none), numbers the bins
in row-major order, and counts the numbers: one comparison of every sample with every bin while
that is small, else a sort and a search of each bin's start. Edges of a number of bins span the
given range, or the data's (its minima and maxima read back, as NumPy's histogram does).
"""
from __future__ import annotations

import builtins
import math
import operator
import warnings
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array, realize
from lazyarr.creation import arange, as_tensor, asarray
from lazyarr.elementwise import (add, clip, conj, divide, equal, imag, less, maximum, multiply, not_equal, real,
                                 round as round_half_even, sqrt, subtract, where)
from lazyarr.graph import normalize_axis
from lazyarr.linear_algebra import matmul
from lazyarr.linalg import diagonal
from lazyarr.manipulation import concat, expand_dims, moveaxis, reshape, squeeze
from lazyarr.numpy_functions import average
from lazyarr.searching import searchsorted
from lazyarr.sorting import argsort, sort
from lazyarr.statistics import any as any_, cumulative_sum, diff, max as amax, min as amin, sum as total

# samples x bins up to this many: histogramdd counts by comparing every sample with every bin
DIRECT_COUNT = 1 << 22


# ---- covariance ----------------------------------------------------------------------------------

def _observations(name: str, a: Any, rowvar: bool, d: dtypes.DType) -> Array:
    """a as a 2-D array of variables (rows) by observations (columns), in dtype d."""
    x = as_tensor(a)
    if x.ndim > 2:
        raise ValueError(f"{name}: {'m' if name == 'cov' else 'y'} has more than 2 dimensions")
    x = reshape(x, (1,) * (2 - x.ndim) + x.shape).astype(d)
    return x.T if not rowvar and x.shape[0] != 1 else x


class WeightsShapeError(ValueError, RuntimeError):
    """Weights of the wrong shape: NumPy's cov raises RuntimeError, lazyarr's bad input raises
    ValueError; this is both."""


def _weights(kind: str, w: Any, n: int) -> Array:
    t = as_tensor(w)
    if kind == "fweights":
        if t.dtype.is_inexact and bool(any_(not_equal(t, round_half_even(t)))):
            raise TypeError("cov: fweights must be integer")
        if t.dtype.is_complex:
            raise TypeError("cov: fweights must be integer")
    if t.ndim > 1:
        raise WeightsShapeError(f"cov: cannot handle multidimensional {kind}")
    if t.shape[0] != n:
        raise WeightsShapeError(f"cov: incompatible numbers of samples and {kind}")
    t = t.astype(dtypes.float64)
    if bool(any_(less(t, 0.0))):
        raise ValueError(f"cov: {kind} cannot be negative")
    return t


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Array:
    """The covariance matrix of the variables in m's rows (columns when not rowvar), and y's:
    Σ w (x - x̄)(y - ȳ)* over the degrees of freedom (N - ddof; ddof 1, or 0 with bias;
    frequency and reliability weights as NumPy's). Squeezed: one variable gives a 0-d array."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("cov: ddof must be integer")
    probes = [as_tensor(m).dtype] + ([as_tensor(y).dtype] if y is not None else [])
    d = dtypes.promote_types(*probes, dtypes.float64) if dtype is None else dtypes.as_dtype(dtype)
    x = _observations("cov", m, rowvar, d)
    if x.shape[0] == 0:
        return asarray(np.zeros((0, 0)))
    if y is not None:
        x = concat([x, _observations("cov", y, rowvar, d)], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = x.shape[1]
    w = f = a = None
    if fweights is not None:
        w = f = _weights("fweights", fweights, n)
    if aweights is not None:
        a = _weights("aweights", aweights, n)
        w = a if w is None else multiply(w, a)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    if w is None:
        fact: Any = n - ddof
        if fact <= 0:
            warnings.warn("cov: degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
            fact = 0.0
    else:
        w_sum = w_sum[0]
        if ddof == 0:
            fact = w_sum
        elif a is None:
            fact = subtract(w_sum, ddof)
        else:
            fact = subtract(w_sum, divide(multiply(ddof, total(multiply(w, a))), w_sum))
        fact = maximum(fact, 0.0)
    centred = subtract(x, expand_dims(avg, axis=1)).astype(d)   # (NumPy centres x in place)
    weighted = centred if w is None else multiply(centred, w)
    c = matmul(centred, conj(weighted).T)
    scale = (1.0 / fact if fact else math.inf) if not isinstance(fact, Array) else divide(1.0, fact)
    return squeeze(multiply(c, scale).astype(c.dtype))


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Array:
    """Pearson's correlation coefficients: the covariance matrix divided by the outer product of
    the standard deviations, clipped to [-1, 1] (each part, for complex values)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return divide(c, c)
    sd = sqrt(real(diagonal(c)))
    c = divide(divide(c, expand_dims(sd, axis=1)), expand_dims(sd, axis=0))
    if c.dtype.is_complex:
        return add(clip(real(c), -1.0, 1.0), multiply(clip(imag(c), -1.0, 1.0), 1j)).astype(c.dtype)
    return clip(c, -1.0, 1.0)


# ---- calculus ------------------------------------------------------------------------------------------

def _spacings(varargs: tuple, axes: tuple[int, ...], shape: tuple[int, ...]) -> list[Any]:
    """gradient's spacing per axis: a scalar, or the coordinates along that axis (float64 for
    integer coordinates)."""
    if len(varargs) == 0:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"gradient: invalid number of arguments: {len(varargs)} spacings for {len(axes)} axes")
    out = []
    for h, ax in zip(varargs, axes):
        if np.ndim(h) == 0:
            out.append(h)
            continue
        t = as_tensor(h)
        if t.ndim != 1:
            raise ValueError("gradient: distances must be either scalars or 1d")
        if t.shape[0] != shape[ax]:
            raise ValueError("gradient: when 1d, distances must match the length of the corresponding dimension")
        out.append(t if t.dtype.is_inexact else t.astype(dtypes.float64))
    return out


def _one_axis(f: Array, h: Any, edge_order: int) -> Array:
    """The gradient along the last axis of f, for spacing h (a scalar) or coordinates h (1-D)."""
    f0, f1, f2 = f[..., 0], f[..., 1], f[..., 2] if f.shape[-1] > 2 else None
    l0, l1, l2 = f[..., -1], f[..., -2], f[..., -3] if f.shape[-1] > 2 else None
    if not isinstance(h, Array):
        inside = divide(subtract(f[..., 2:], f[..., :-2]), 2.0 * h)
        if edge_order == 1:
            first, last = divide(subtract(f1, f0), h), divide(subtract(l0, l1), h)
        else:
            first = divide(add(add(multiply(-1.5, f0), multiply(2.0, f1)), multiply(-0.5, f2)), h)
            last = divide(add(add(multiply(0.5, l2), multiply(-2.0, l1)), multiply(1.5, l0)), h)
    else:
        dx = diff(h)
        a, b = dx[:-1], dx[1:]
        inside = add(add(multiply(divide(-b, multiply(a, add(a, b))), f[..., :-2]),
                         multiply(divide(subtract(b, a), multiply(a, b)), f[..., 1:-1])),
                     multiply(divide(a, multiply(b, add(a, b))), f[..., 2:]))
        if edge_order == 1:
            first, last = divide(subtract(f1, f0), dx[0]), divide(subtract(l0, l1), dx[-1])
        else:   # the second-order one-sided formulas for unequal steps
            a, b = dx[0], dx[1]
            first = add(add(multiply(divide(-(2.0 * a + b), multiply(a, add(a, b))), f0),
                            multiply(divide(add(a, b), multiply(a, b)), f1)),
                        multiply(divide(-a, multiply(b, add(a, b))), f2))
            a, b = dx[-2], dx[-1]
            last = add(add(multiply(divide(b, multiply(a, add(a, b))), l2),
                           multiply(divide(-(a + b), multiply(a, b)), l1)),
                       multiply(divide(2.0 * b + a, multiply(b, add(a, b))), l0))
    d = dtypes.promote_types(inside.dtype, first.dtype, last.dtype)
    return concat([expand_dims(first.astype(d), axis=-1), inside.astype(d), expand_dims(last.astype(d), axis=-1)],
                  axis=-1)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """NumPy's gradient: second-order central differences inside, first- or second-order
    (`edge_order`) one-sided ones at the ends, along each of `axis` (all by default); spacings:
    none (1), one scalar for all axes, or one scalar or coordinate array per axis. One array for
    one axis, else a tuple; of f's float dtype (float64 for integers)."""
    t = as_tensor(f)
    axes = tuple(range(t.ndim)) if axis is None else \
        tuple(normalize_axis(a, t.ndim) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(f"gradient: repeated axis in {axis}")
    if edge_order not in (1, 2):
        raise ValueError("gradient: 'edge_order' greater than 2 not supported" if edge_order > 2
                         else "gradient: 'edge_order' must be 1 or 2")
    spacings = _spacings(varargs, axes, t.shape)
    otype = t.dtype if t.dtype.is_inexact else dtypes.float64
    t = t.astype(otype)
    out = []
    for ax, h in zip(axes, spacings):
        if t.shape[ax] < edge_order + 1:
            raise ValueError("gradient: shape of array too small to calculate a numerical gradient, at least "
                             f"(edge_order + 1) = {edge_order + 1} elements are required")
        g = _one_axis(moveaxis(t, ax, -1), h, edge_order)
        out.append(moveaxis(g, -1, ax).astype(otype))
    return out[0] if len(out) == 1 else tuple(out)


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Array:
    """The integral of y along `axis` by the trapezoidal rule, at the sample points x (1-D, or
    of y's shape) or spaced dx apart."""
    t = as_tensor(y)
    ax = normalize_axis(axis, t.ndim)
    if x is None:
        d: Any = dx
    else:
        xs = as_tensor(x)
        if xs.ndim == 1:
            d = reshape(diff(xs), tuple(-1 if a == ax else 1 for a in range(t.ndim)))
        else:
            d = diff(xs, axis=ax)
    upper = moveaxis(moveaxis(t, ax, -1)[..., 1:], -1, ax)
    lower = moveaxis(moveaxis(t, ax, -1)[..., :-1], -1, ax)
    return total(divide(multiply(d, add(upper, lower)), 2.0), axis=ax)


def trapz(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Array:
    """trapezoid's older name (NumPy 2.4 removed it)."""
    return trapezoid(y, x, dx, axis)


# ---- histograms of several dimensions -------------------------------------------------------------------

def _columns(sample: Any) -> list[Array]:
    """The sample as D 1-D arrays of N values each: an (N, D) array's columns, or a sequence of
    D sequences (a 1-D array is one variable)."""
    if isinstance(sample, (Array, np.ndarray)):
        t = as_tensor(sample)
        if t.ndim == 2:
            return [t[:, i] for i in range(t.shape[1])]
        if t.ndim == 1:
            return [t]
        raise ValueError(f"histogramdd: the sample must be an (N, D) array, got shape {t.shape}")
    cols = [as_tensor(c) for c in sample]
    if any(c.ndim != 1 for c in cols) or len({c.shape[0] for c in cols}) > 1:
        raise ValueError("histogramdd: the sample's sequences must be 1-D and of one length")
    return cols


def _edges(cols: list[Array], bins: Any, range_: Any) -> list[Array]:
    """Each axis' bin edges: given (non-decreasing), or a number of equal bins over the range
    (the data's, its extremes read back together, by default)."""
    dims = len(cols)
    try:
        per_axis = list(bins) if not isinstance(bins, Array) or bins.ndim else None
    except TypeError:
        per_axis = None
    if per_axis is None:
        per_axis = [bins] * dims
    if len(per_axis) != dims:
        raise ValueError("histogramdd: the dimension of bins must be equal to the dimension of the sample x")
    ranges = [None] * dims if range_ is None else list(range_)
    if len(ranges) != dims:
        raise ValueError("histogramdd: range argument must have one entry per dimension")
    wanted = [i for i, b in enumerate(per_axis) if np.ndim(b) == 0 and ranges[i] is None and cols[i].size]
    extremes: dict[int, tuple[Any, Any]] = {}
    if wanted:   # the data's ranges, read back at once
        lo = [amin(cols[i]) for i in wanted]
        hi = [amax(cols[i]) for i in wanted]
        realize(*lo, *hi)
        for i, a, b in zip(wanted, lo, hi):
            extremes[i] = (a.numpy()[()], b.numpy()[()])
    out = []
    for i, (b, col) in enumerate(zip(per_axis, cols)):
        if np.ndim(b) == 1:
            e = as_tensor(b)
            if e.shape[0] > 1 and bool(any_(less(e[1:], e[:-1]))):
                raise ValueError(f"histogramdd: `bins[{i}]` must be monotonically increasing, when an array")
            out.append(e)
            continue
        if np.ndim(b) != 0:
            raise ValueError(f"histogramdd: `bins[{i}]` must be a scalar or 1d array")
        try:
            count = operator.index(b)
        except TypeError:
            raise TypeError(f"histogramdd: `bins[{i}]` must be an integer, when a scalar") from None
        if count < 1:
            raise ValueError(f"histogramdd: `bins[{i}]` must be positive, when an integer")
        if ranges[i] is not None:
            lo, hi = ranges[i]
            if lo > hi:
                raise ValueError("histogramdd: max must be larger than min in range parameter")
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise ValueError(f"histogramdd: supplied range of [{lo}, {hi}] is not finite")
        elif i in extremes:
            lo, hi = extremes[i]
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise ValueError(f"histogramdd: autodetected range of [{lo}, {hi}] is not finite")
        else:
            lo, hi = 0, 1
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        out.append(asarray(np.linspace(lo, hi, count + 1), device=col.device))
    return out


def _bin_totals(flat: Array, weights: Array | None, count: int) -> Array:
    """How many of the bin numbers `flat` equal each of 0..count-1 (or their weights' totals)."""
    n = flat.shape[0]
    if n * count <= DIRECT_COUNT:
        hit = equal(expand_dims(flat, axis=0), expand_dims(arange(count), axis=1))
        picked = hit.astype(dtypes.float64) if weights is None else where(hit, expand_dims(weights, axis=0), 0.0)
        return total(picked, axis=1)
    order = argsort(flat)
    starts = searchsorted(sort(flat), arange(count + 1), side="left")
    if weights is None:
        return diff(starts).astype(dtypes.float64)
    running = concat([asarray(np.zeros(1), device=flat.device), cumulative_sum(weights[order])])
    ends = running[starts]
    return subtract(ends[1:], ends[:-1])


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple[Array, list[Array]]:
    """NumPy's histogramdd: counts (or weight totals, or with `density` a density) of the samples
    in a grid of bins, float64, and the edges of each axis. Every bin holds its lower edges, the
    last along an axis its upper edge too."""
    cols = _columns(sample)
    if any(c.dtype.is_complex for c in cols):
        raise TypeError("histogramdd: complex numbers have no order")
    edges = _edges(cols, bins, range)
    n = cols[0].shape[0] if cols else 0
    w = None
    if weights is not None:
        w = as_tensor(weights)
        if w.shape != (n,):
            raise ValueError(f"histogramdd: weights must have the sample's length {n}, got shape {w.shape}")
        w = w.astype(dtypes.float64)
    sizes = [e.shape[0] + 1 for e in edges]   # with the bins below and above the edges
    flat = None
    for col, e, size in zip(cols, edges, sizes):
        at = searchsorted(e, col, side="right")
        at = where(equal(col, e[-1]), at - 1, at)   # the last edge closes the last bin
        flat = at if flat is None else add(multiply(flat, size), at)
    counts = _bin_totals(flat if flat is not None else arange(0), w, math.prod(sizes))
    hist = reshape(counts, tuple(sizes))[tuple(slice(1, -1) for _ in sizes)]
    if density:
        s = total(hist)
        for i, e in enumerate(edges):
            widths = diff(e.astype(dtypes.float64))
            hist = divide(hist, reshape(widths, tuple(-1 if a == i else 1 for a in builtins.range(len(edges)))))
        hist = divide(hist, s)
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple[Array, Array, Array]:
    """NumPy's histogram2d of the points (x, y): bins a number or edges for both axes, or a pair."""
    tx, ty = as_tensor(x), as_tensor(y)
    if tx.shape != ty.shape or tx.ndim != 1:
        raise ValueError(f"histogram2d: x and y must be 1-D of one length, got shapes {tx.shape} and {ty.shape}")
    try:
        pair = len(bins) == 2
    except TypeError:
        pair = False
    if not pair and np.ndim(bins) == 1:
        bins = [bins, bins]
    hist, edges = histogramdd([tx, ty], bins, range, density, weights)
    return hist, edges[0], edges[1]


__all__ = ["cov", "corrcoef", "gradient", "trapezoid", "trapz", "histogram2d", "histogramdd"]
