"""NumPy's functions beyond the array API that array code reaches for, each a composition of the
namespace's functions (so it stays lazy, fuses and differentiates), by NumPy's sections:
creation (logspace, geomspace, diag, diagflat, copy, array), statistics (median, percentile,
quantile and their nan- versions, the other nan- reductions, average, ptp), logic (isclose,
allclose, array_equal, array_equiv), mathematics (nan_to_num, interp, convolve, correlate, cross,
trace), shapes (ndim, shape, size), and printing and files through NumPy (printoptions,
errstate, savetxt, loadtxt).

Order statistics sort along the axis and read the sorted values at the (interpolated) positions
NumPy's methods define; a NaN makes the result NaN (the nan- versions leave NaNs out: each row's
count of numbers picks its positions). Functions that answer a Python bool (allclose,
array_equal, array_equiv) compute their answer, as NumPy's do."""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array
from lazyarr.creation import arange, as_tensor, asarray, eye, linspace, zeros
from lazyarr.elementwise import (abs as absolute, add, ceil, conj, divide, equal, floor, imag, isfinite, isinf, isnan,
                                 less, less_equal, logical_and, logical_not, logical_or, multiply, not_equal, power, real,
                                 subtract, where)
from lazyarr.gathering import take_along_axis
from lazyarr.graph import normalize_axis
from lazyarr.linalg import cross as linalg_cross, diagonal as linalg_diagonal
from lazyarr.manipulation import broadcast_arrays, broadcast_to, concat, expand_dims, flip, moveaxis, reshape, stack
from lazyarr.padding import pad
from lazyarr.searching import argmax, argmin, count_nonzero, nonzero, searchsorted
from lazyarr.sets import unique_all
from lazyarr.sorting import argsort, sort
from lazyarr.statistics import (all as all_, any as any_, cumulative_sum, diff, max as amax, mean, min as amin, prod,
                                sum as total, var)

# ---- creation ---------------------------------------------------------------------------------

def array(obj: Any, dtype: Any = None, *, copy: bool = True, device: Any = None, ndmin: int = 0) -> Array:
    """NumPy's array: a copy of obj (a tensor too: writes to one never reach the other)."""
    out = asarray(obj, dtype=dtype, device=device, copy=copy)
    if ndmin > out.ndim:
        out = reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def copy(a: Any, /) -> Array:
    return asarray(a, copy=True)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: float = 10.0,
             dtype: Any = None, axis: int = 0, *, device: Any = None) -> Array:
    """base ** linspace(start, stop, num)."""
    y = power(float(base), linspace(start, stop, num, endpoint=endpoint, device=device))
    return y.astype(dtypes.as_dtype(dtype)) if dtype is not None else y


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None, axis: int = 0, *,
              device: Any = None) -> Array:
    """Numbers spaced evenly on a log scale from start to stop (the ends exact, as NumPy's)."""
    if start == 0 or stop == 0:
        raise ValueError("geomspace: geometric sequence cannot include zero")
    sign = -1.0 if (start < 0 and stop < 0) else 1.0
    a, b = abs(start), abs(stop)
    if (start < 0) != (stop < 0):
        raise ValueError("geomspace: start and stop must have the same sign (complex ends are not supported)")
    y = multiply(power(10.0, linspace(math.log10(a), math.log10(b), num, endpoint=endpoint, device=device)), sign)
    if num > 0:   # the ends exactly
        k = linspace(0, num - 1, num, device=device)
        y = where(equal(k, 0), sign * a, y)
        if endpoint and num > 1:
            y = where(equal(k, num - 1), sign * b, y)
    return y.astype(dtypes.as_dtype(dtype)) if dtype is not None else y


def diag(v: Any, k: int = 0) -> Array:
    """NumPy's diag: the k-th diagonal of a matrix, or a matrix with the vector v on it."""
    v = as_tensor(v)
    k = operator.index(k)
    if v.ndim == 2:
        return linalg_diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError(f"diag: input must be 1- or 2-dimensional, got shape {v.shape}")
    n = v.shape[0] + abs(k)
    rows = pad(v, (max(-k, 0), max(k, 0)))   # v at the rows its diagonal crosses
    return multiply(expand_dims(rows, axis=1), eye(n, k=k, dtype=v.dtype, device=v.device))


def diagflat(v: Any, k: int = 0) -> Array:
    v = as_tensor(v)
    return diag(reshape(v, (v.size,)), k)


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, sorted: bool = True) -> Any:
    """NumPy's unique: of the flattened array (sorted values; with return_index, return_inverse
    (of the input's shape) and return_counts as asked; NaNs are one value with equal_nan, NumPy's
    default, each its own without), or with `axis` the unique subarrays along it in lexicographic
    order (rows of a matrix for axis=0; a NaN differs from every value there, itself included)."""
    x = as_tensor(ar)
    if axis is not None:
        out = _unique_along(x, axis)
        return out[0] if not (return_index or return_inverse or return_counts) else \
            tuple(out[:1]) + tuple(r for r, want in zip(out[1:], (return_index, return_inverse, return_counts)) if want)
    r = unique_all(x)
    values, first, inverse, counts = r.values, r.indices, r.inverse_indices, r.counts
    if equal_nan and x.dtype.is_inexact and values.size:
        nans = int(total(isnan(values).astype(dtypes.int64)))   # NaNs sort last: they are one value
        if nans > 1:
            k = values.size - nans
            values = values[:k + 1]
            counts = concat([counts[:k], reshape(total(counts[k:]), (1,))])
            first = concat([first[:k], reshape(amin(first[k:]), (1,))])
            inverse = where(less(inverse, k), inverse, k)
    out = [values] + [first] * return_index + [inverse] * return_inverse + [counts] * return_counts
    return out[0] if len(out) == 1 else tuple(out)


def _unique_along(x: Array, axis: Any) -> tuple[Array, Array, Array, Array]:
    """The unique subarrays of x along `axis`, with the first index of each, the inverse (1-D) and
    the counts: the subarrays as rows, put in lexicographic order by one stable argsort per column
    from the last (an LSD sort), a new row wherever a row differs from the one before it."""
    try:
        ax = normalize_axis(operator.index(axis), x.ndim)
    except TypeError:
        raise TypeError(f"unique: axis must be an integer, got {type(axis).__name__}") from None
    moved = moveaxis(x, ax, 0)
    n = moved.shape[0]
    rows = reshape(moved, (n, math.prod(moved.shape[1:])))
    order = asarray(np.arange(n), device=x.device)
    for j in reversed(range(rows.shape[1])):
        order = order[argsort(rows[:, j][order], stable=True)]
    ranked = rows[order]
    starts = concat([asarray([True], device=x.device), any_(not_equal(ranked[1:], ranked[:-1]), axis=1)]) if n else \
        asarray(np.zeros(0, bool), device=x.device)
    group = cumulative_sum(starts.astype(dtypes.int64)) - 1
    first = order[starts]
    values = moveaxis(reshape(ranked[starts], (first.shape[0],) + moved.shape[1:]), 0, ax)
    inverse = group[argsort(order)]
    counts = diff(concat([nonzero(starts)[0], asarray([n], device=x.device)]))
    return values, first, inverse, counts


# ---- statistics -------------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
            "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
            "normal_unbiased")
_SIMPLE = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantiles(name: str, a: Any, q: Any, axis: Any, method: str, keepdims: bool, skip_nan: bool) -> Array:
    """The q-quantiles (q in [0, 1]) of a along `axis`, NumPy's way; q of any shape leads the result."""
    if method not in _SIMPLE:
        raise ValueError(f"{name}: method must be one of {', '.join(_SIMPLE)}"
                         + (" (the others are not supported)" if method in _METHODS else f", got {method!r}"))
    x = as_tensor(a)
    if x.dtype.is_complex:
        raise TypeError(f"{name}: complex values have no order")
    if not x.dtype.is_inexact:
        x = x.astype(dtypes.default_float)
    qs = np.asarray(q.numpy() if isinstance(q, Array) else q, dtype=np.float64)
    if np.any((qs < 0) | (qs > 1)) or np.any(np.isnan(qs)):
        raise ValueError(f"{name}: quantiles must be in the range [0, 1]")
    axes = tuple(range(x.ndim)) if axis is None else \
        tuple(normalize_axis(ax, x.ndim) for ax in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    rest = [i for i in range(x.ndim) if i not in axes]
    # the reduced axes flattened, last
    flat = reshape(moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim))) if axes else x,
                   tuple(x.shape[i] for i in rest) + (math.prod(x.shape[i] for i in axes),))
    n = flat.shape[-1]
    s = sort(flat, axis=-1)   # NaNs last
    nans = isnan(flat)
    count = (subtract(float(n), total(nans.astype(s.dtype), axis=-1, keepdims=True)) if skip_nan
             else zeros(flat.shape[:-1] + (1,), dtype=s.dtype, device=s.device) + float(n))
    outs = []
    for qv in qs.reshape(-1):
        pos = multiply(subtract(count, 1.0), float(qv))            # the virtual index, per row
        lo, hi = floor(pos), ceil(pos)
        frac = subtract(pos, lo)
        if method == "lower":
            hi, frac = lo, 0.0 * frac
        elif method == "higher":
            lo, frac = hi, 0.0 * frac
        elif method == "nearest":   # round half to even, as NumPy
            nearest = where(equal(frac, 0.5), where(equal(lo % 2, 0), lo, hi), where(less(frac, 0.5), lo, hi))
            lo = hi = nearest
            frac = 0.0 * frac
        elif method == "midpoint":
            frac = where(equal(lo, hi), 0.0, 0.5) + 0.0 * frac
        if n == 0:   # no elements: NaN, as NumPy's median (with a warning there)
            outs.append(zeros(flat.shape[:-1], dtype=s.dtype, device=s.device) + math.nan)
            continue
        at_lo = take_along_axis(s, _clip_index(lo, n - 1), axis=-1)
        at_hi = take_along_axis(s, _clip_index(hi, n - 1), axis=-1)
        value = add(at_lo, multiply(subtract(at_hi, at_lo), frac))
        value = where(equal(frac, 0), at_lo, value)   # an exact position: that element (also ±inf)
        if skip_nan:
            value = where(less(count, 1.0), float("nan"), value)
        else:
            value = where(total(nans.astype(dtypes.int32), axis=-1, keepdims=True) > 0, float("nan"), value)
        outs.append(value[..., 0])
    out = stack(outs, axis=0) if outs else zeros((0,) + flat.shape[:-1], dtype=s.dtype, device=s.device)
    out = reshape(out, qs.shape + flat.shape[:-1])
    if keepdims:
        out = reshape(out, qs.shape + kept)
    return out


def _clip_index(pos: Array, last: int) -> Array:
    return where(less(pos, 0.0), 0.0, where(less(float(last), pos), float(last), pos)).astype(dtypes.int64)


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Array:
    """NumPy's quantile (q in [0, 1]), methods linear, lower, higher, nearest and midpoint."""
    _no_out("quantile", out, weights)
    return _quantiles("quantile", a, q, axis, method, keepdims, False)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Array:
    """NumPy's percentile (q in [0, 100])."""
    _no_out("percentile", out, weights)
    return _quantiles("percentile", a, np.asarray(q.numpy() if isinstance(q, Array) else q) / 100.0, axis, method,
                      keepdims, False)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> Array:
    _no_out("median", out)
    return _quantiles("median", a, 0.5, axis, "linear", keepdims, False)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Array:
    _no_out("nanquantile", out, weights)
    return _quantiles("nanquantile", a, q, axis, method, keepdims, True)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Array:
    _no_out("nanpercentile", out, weights)
    return _quantiles("nanpercentile", a, np.asarray(q.numpy() if isinstance(q, Array) else q) / 100.0, axis,
                      method, keepdims, True)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> Array:
    _no_out("nanmedian", out)
    return _quantiles("nanmedian", a, 0.5, axis, "linear", keepdims, True)


def _no_out(name: str, out: Any, weights: Any = None) -> None:
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (lazyarr's arrays are values: assign the result)")
    if weights is not None:
        raise TypeError(f"{name}: weights are not supported")


def _without_nan(a: Any, fill: float) -> Array:
    x = as_tensor(a)
    return where(isnan(x), fill, x) if x.dtype.is_inexact else x


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Array:
    _no_out("nansum", out)
    return total(_without_nan(a, 0.0), axis=axis, dtype=dtype, keepdims=keepdims)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Array:
    _no_out("nanprod", out)
    return prod(_without_nan(a, 1.0), axis=axis, dtype=dtype, keepdims=keepdims)


def _count(a: Array, axis: Any, keepdims: bool) -> Array:
    return count_nonzero(logical_not(isnan(a)), axis=axis, keepdims=keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Array:
    """The mean of the numbers (NaN where there are none)."""
    _no_out("nanmean", out)
    x = as_tensor(a)
    if not x.dtype.is_inexact:
        return mean(x, axis=axis, keepdims=keepdims)
    return divide(total(_without_nan(x, 0.0), axis=axis, keepdims=keepdims), _count(x, axis, keepdims).astype(x.dtype))


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0, keepdims: bool = False) -> Array:
    _no_out("nanvar", out)
    x = as_tensor(a)
    if not x.dtype.is_inexact:
        return var(x, axis=axis, correction=ddof, keepdims=keepdims)
    m = nanmean(x, axis=axis, keepdims=True)
    dev = _without_nan(subtract(x, m), 0.0)
    sq = multiply(dev, dev) if not x.dtype.is_complex else absolute(dev) ** 2
    n = _count(x, axis, keepdims).astype(sq.dtype)
    return divide(total(sq, axis=axis, keepdims=keepdims), subtract(n, float(ddof)))


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0, keepdims: bool = False) -> Array:
    return nanvar(a, axis=axis, out=out, ddof=ddof, keepdims=keepdims) ** 0.5


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Array:
    _no_out("nanmax", out)
    x = as_tensor(a)
    if not x.dtype.is_inexact:
        return amax(x, axis=axis, keepdims=keepdims)
    m = amax(_without_nan(x, -math.inf), axis=axis, keepdims=keepdims)
    return where(equal(_count(x, axis, keepdims), 0), math.nan, m)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Array:
    _no_out("nanmin", out)
    x = as_tensor(a)
    if not x.dtype.is_inexact:
        return amin(x, axis=axis, keepdims=keepdims)
    m = amin(_without_nan(x, math.inf), axis=axis, keepdims=keepdims)
    return where(equal(_count(x, axis, keepdims), 0), math.nan, m)


def nanargmax(a: Any, axis: int | None = None, out: Any = None, *, keepdims: bool = False) -> Array:
    _no_out("nanargmax", out)
    return argmax(_without_nan(a, -math.inf), axis=axis, keepdims=keepdims)


def nanargmin(a: Any, axis: int | None = None, out: Any = None, *, keepdims: bool = False) -> Array:
    _no_out("nanargmin", out)
    return argmin(_without_nan(a, math.inf), axis=axis, keepdims=keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False) -> Any:
    """NumPy's average: the mean, or Σ w·a / Σ w with weights (of a's shape, or 1-D along one axis);
    with `returned`, the sum of the weights too."""
    x = as_tensor(a)
    if not x.dtype.is_inexact:
        x = x.astype(dtypes.default_float)
    if weights is None:
        avg = mean(x, axis=axis, keepdims=keepdims)
        n = x.size / max(avg.size, 1) if x.size else 0
        return (avg, zeros(avg.shape, dtype=avg.dtype, device=avg.device) + float(n)) if returned else avg
    w = as_tensor(weights, x.device)
    if w.shape != x.shape:
        if axis is None or not isinstance(axis, int):
            raise TypeError("average: axis must be an integer when the weights' shape differs from a's")
        if w.ndim != 1 or w.shape[0] != x.shape[normalize_axis(axis, x.ndim)]:
            raise ValueError(f"average: 1-D weights of length {w.shape} do not fit axis {axis} of shape {x.shape}")
        ax = normalize_axis(axis, x.ndim)
        w = reshape(w, tuple(w.shape[0] if i == ax else 1 for i in range(x.ndim)))
        w = broadcast_to(w, x.shape)
    scale = total(w.astype(x.dtype) if not w.dtype.is_inexact else w, axis=axis, keepdims=keepdims)
    avg = divide(total(multiply(x, w), axis=axis, keepdims=keepdims), scale)
    return (avg, broadcast_to(scale, avg.shape)) if returned else avg


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Array:
    """The range (maximum - minimum) along `axis`."""
    _no_out("ptp", out)
    x = as_tensor(a)
    return subtract(amax(x, axis=axis, keepdims=keepdims), amin(x, axis=axis, keepdims=keepdims))


# ---- logic ---------------------------------------------------------------------------------------

def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Array:
    """|a - b| <= atol + rtol·|b| elementwise (infinities equal only to themselves; NaNs equal to
    each other with equal_nan), as NumPy's."""
    x, y = as_tensor(a), as_tensor(b)
    if not (x.dtype.is_inexact or y.dtype.is_inexact):
        x = x.astype(dtypes.default_float)
    x, y = broadcast_arrays(x, y)
    finite = logical_and(isfinite(x), isfinite(y))
    close = less_equal(absolute(subtract(x, y)), add(atol, multiply(rtol, absolute(y))))
    out = where(finite, close, equal(x, y))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(x), isnan(y)))
    return out


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    """Whether the arrays have one shape and equal elements (NaNs equal with equal_nan)."""
    x, y = as_tensor(a1), as_tensor(a2)
    if x.shape != y.shape:
        return False
    same = equal(x, y)
    if equal_nan and (x.dtype.is_inexact or y.dtype.is_inexact):
        same = logical_or(same, logical_and(isnan(x), isnan(y)))
    return bool(all_(same))


def array_equiv(a1: Any, a2: Any) -> bool:
    """Whether the arrays broadcast to one shape and are equal there."""
    x, y = as_tensor(a1), as_tensor(a2)
    try:
        x, y = broadcast_arrays(x, y)
    except ValueError:
        return False
    return bool(all_(equal(x, y)))


# ---- mathematics --------------------------------------------------------------------------------

def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Array:
    """NaN replaced by `nan`, ±inf by `posinf`/`neginf` (the dtype's largest finite numbers by
    default); complex values part by part."""
    t = as_tensor(x)
    if not t.dtype.is_inexact:
        return t
    if t.dtype.is_complex:
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf) for p in (real(t), imag(t))]
        return add(parts[0], multiply(parts[1], 1j)).astype(t.dtype)
    big = dtypes.finfo(t.dtype).max
    hi, lo = big if posinf is None else posinf, -big if neginf is None else neginf
    out = where(isnan(t), nan, t)
    return where(isinf(t), where(less(t, 0.0), lo, hi), out).astype(t.dtype)


def interp(x: Any, xp_: Any, fp: Any, left: Any = None, right: Any = None, period: float | None = None) -> Array:
    """NumPy's interp: the piecewise linear interpolant through (xp, fp) at x (xp increasing);
    `left`/`right` beyond the ends (fp's ends by default); `period` for periodic xp."""
    x, px, fy = as_tensor(x), as_tensor(xp_), as_tensor(fp)
    if px.ndim != 1 or fy.ndim != 1 or px.shape != fy.shape:
        raise ValueError(f"interp: xp and fp must be 1-D of one length, got shapes {px.shape} and {fy.shape}")
    if px.shape[0] == 0:
        raise ValueError("interp: array of sample points is empty")
    d = dtypes.promote_types(fy.dtype, dtypes.float64 if not fy.dtype.is_inexact else fy.dtype)
    x = x.astype(dtypes.float64) if not x.dtype.is_inexact else x
    px = px.astype(x.dtype) if px.dtype != x.dtype else px
    fy = fy.astype(d)
    if period is not None:
        if period == 0:
            raise ValueError("interp: period must be a non-zero value")
        period = abs(period)
        x = x - floor(x / period) * period
        px = px - floor(px / period) * period
        order = sort(px)
        fy = take_along_axis(fy, argsort(px), axis=0)
        px = concat([order[-1:] - period, order, order[:1] + period])
        fy = concat([fy[-1:], fy, fy[:1]])
    n = px.shape[0]
    j = searchsorted(px, x, side="right")          # xp[j-1] <= x < xp[j]
    j = where(less(j, 1), 1, where(less(n - 1, j), n - 1, j)) if n > 1 else j * 0
    x0, x1 = px[j - 1] if n > 1 else px[j], px[j]
    y0, y1 = fy[j - 1] if n > 1 else fy[j], fy[j]
    slope = divide(subtract(y1, y0), subtract(x1, x0).astype(d)) if n > 1 else 0.0 * y0
    y = add(y0, multiply(slope, subtract(x, x0).astype(d))) if n > 1 else y0
    y = where(equal(x, x1), y1, y)   # exactly at a sample point: its value
    if period is None:
        y = where(less(x, px[0]), fy[0] if left is None else left, y)
        y = where(less(px[n - 1], x), fy[n - 1] if right is None else right, y)
    return y.astype(d)


def _convolve_full(a: Array, v: Array) -> Array:
    """Σ_k v[k]·a[t - k] over the full length: each output against each tap (a sum that fuses); a
    short filter as shifted copies of a, a long one as one gather."""
    n, m = a.shape[0], v.shape[0]
    length = n + m - 1
    if m <= 64:
        shifted = stack([pad(a, (k, length - n - k)) for k in range(m)], axis=0)
        return total(multiply(shifted, expand_dims(v, axis=1)), axis=0)
    t = reshape(linspace(0, length - 1, length, dtype=dtypes.int64, device=a.device), (length, 1))
    k = reshape(linspace(0, m - 1, m, dtype=dtypes.int64, device=a.device), (1, m))
    src = subtract(t, k)
    inside = logical_and(less_equal(0, src), less(src, n))
    return total(where(inside, multiply(a[where(inside, src, 0)], reshape(v, (1, m))), 0), axis=1)


def convolve(a: Any, v: Any, mode: str = "full") -> Array:
    """NumPy's convolve of two 1-D arrays, modes 'full', 'same' and 'valid'."""
    a, v = as_tensor(a), as_tensor(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"convolve: object too deep for desired array (shapes {a.shape} and {v.shape}: 1-D only)")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError("convolve: v cannot be empty" if v.shape[0] == 0 else "convolve: a cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")
    d = dtypes.promote_types(a.dtype, v.dtype)
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    full = _convolve_full(a.astype(d), v.astype(d))
    n, m = a.shape[0], v.shape[0]
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return full[start:start + n]
    return full[m - 1:n]


def correlate(a: Any, v: Any, mode: str = "valid") -> Array:
    """NumPy's correlate: Σ a[n + k]·conj(v[k]), a convolution with v reversed and conjugated."""
    a, v = as_tensor(a), as_tensor(v)
    if v.ndim == 1 and a.ndim == 1 and v.shape[0] > a.shape[0]:   # NumPy swaps, then reverses the result
        return flip(correlate(v, a, mode), axis=0) if not (a.dtype.is_complex or v.dtype.is_complex) else \
            conj(flip(correlate(v, a, mode), axis=0))
    return convolve(a, flip(conj(v), axis=0), mode)


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Array:
    """NumPy's cross: of 3-vectors (linalg.cross), or 2-vectors (extended with a zero third part;
    two 2-vectors give the z-component alone)."""
    x, y = as_tensor(a), as_tensor(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = moveaxis(x, axisa, -1), moveaxis(y, axisb, -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError("cross: incompatible dimensions for cross product (dimension must be 2 or 3)")
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return subtract(multiply(x[..., 0], y[..., 1]), multiply(x[..., 1], y[..., 0]))
    if x.shape[-1] == 2:
        x = pad(x, [(0, 0)] * (x.ndim - 1) + [(0, 1)])
    if y.shape[-1] == 2:
        y = pad(y, [(0, 0)] * (y.ndim - 1) + [(0, 1)])
    return moveaxis(linalg_cross(x, y, axis=-1), -1, axisc)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """NumPy's diagonal: the diagonals of the axes axis1 and axis2 (the first two), along a new
    last axis (the standard's linalg.diagonal takes the last two)."""
    x = as_tensor(a)
    if x.ndim < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got shape {x.shape}")
    a1, a2 = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return linalg_diagonal(moveaxis(x, (a1, a2), (-2, -1)), offset=operator.index(offset))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None) -> Array:
    """NumPy's trace: the sums of the diagonals of the axes axis1 and axis2 (the first two)."""
    _no_out("trace", out)
    return total(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# ---- shapes ---------------------------------------------------------------------------------------

def ndim(a: Any) -> int:
    return as_tensor(a).ndim if not hasattr(a, "ndim") else a.ndim


def shape(a: Any) -> tuple[int, ...]:
    return as_tensor(a).shape if not hasattr(a, "shape") else tuple(a.shape)


def size(a: Any, axis: int | None = None) -> int:
    s = shape(a)
    return math.prod(s) if axis is None else s[normalize_axis(axis, len(s))]


# ---- index tricks --------------------------------------------------------------------------------

class _Concatenator:
    """NumPy's r_ and c_: `r_[a, 1:4, 0:1:5j, 7]` joins arrays, scalars and slices (a range, or
    evenly spaced points when the step is imaginary) along the first axis; `c_` stacks 1-D pieces
    as columns. A leading string 'axis' or 'axis,ndmin' chooses the axis and the least number of
    dimensions of each piece (NumPy's matrix directives 'r' and 'c' and its third field are not
    supported: ValueError)."""

    def __init__(self, name: str, axis: int, ndmin: int) -> None:
        self.name, self.axis, self.ndmin = name, axis, ndmin

    def __getitem__(self, key: Any) -> Array:
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin = self.axis, self.ndmin
        if items and isinstance(items[0], str):
            fields = items.pop(0).split(",")
            try:
                if len(fields) > 2:
                    raise ValueError
                axis = int(fields[0])
                ndmin = int(fields[1]) if len(fields) == 2 else ndmin
            except ValueError:
                raise ValueError(f"{self.name}: the directive must be 'axis' or 'axis,ndmin' (integers); got "
                                 f"{','.join(fields)!r}") from None
        pieces = []
        for item in items:
            if isinstance(item, slice):
                start = 0 if item.start is None else item.start
                step = 1 if item.step is None else item.step
                if isinstance(step, complex):
                    piece = linspace(start, item.stop, int(abs(step)))
                else:
                    piece = arange(start, item.stop, step)
            else:
                piece = as_tensor(item)
            while piece.ndim < ndmin:   # NumPy's: a 1-D piece becomes a column for c_ (its last axis moves last)
                piece = reshape(piece, piece.shape + (1,)) if self.name == "c_" and piece.ndim == 1 else \
                    expand_dims(piece, axis=0)
            pieces.append(piece)
        if not pieces:
            return asarray(np.zeros(0))
        return concat(pieces, axis=axis)


r_ = _Concatenator("r_", 0, 1)
c_ = _Concatenator("c_", -1, 2)


# ---- printing and files, through NumPy --------------------------------------------------------------

set_printoptions, get_printoptions, printoptions = np.set_printoptions, np.get_printoptions, np.printoptions
errstate = np.errstate   # lazyarr's kernels warn of nothing; NumPy's own computations still heed it


def savetxt(fname: Any, X: Any, *args: Any, **kwargs: Any) -> None:
    """NumPy's savetxt of the computed array."""
    np.savetxt(fname, np.asarray(as_tensor(X).numpy()), *args, **kwargs)


def loadtxt(fname: Any, *args: Any, device: Any = None, **kwargs: Any) -> Array:
    """NumPy's loadtxt, as a tensor."""
    return asarray(np.loadtxt(fname, *args, **kwargs), device=device)


__all__ = ["r_", "c_", "array", "copy", "unique", "logspace", "geomspace", "diag", "diagflat", "quantile", "percentile", "median",
           "nanquantile", "nanpercentile", "nanmedian", "nansum", "nanprod", "nanmean", "nanvar", "nanstd",
           "nanmax", "nanmin", "nanargmax", "nanargmin", "average", "ptp", "isclose", "allclose", "array_equal",
           "array_equiv", "nan_to_num", "interp", "convolve", "correlate", "cross", "diagonal", "trace", "ndim", "shape",
           "size", "set_printoptions", "get_printoptions", "printoptions", "errstate", "savetxt", "loadtxt"]
