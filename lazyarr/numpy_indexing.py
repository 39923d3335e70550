"""NumPy's index tricks, creation helpers and manipulation functions beyond the array API: ix_,
unravel_index, ravel_multi_index, indices, mgrid, ogrid, identity, diag_indices(_from),
tril_indices(_from), triu_indices(_from), fromfunction; rot90, flipud, fliplr, insert, append,
delete, extract, compress, choose, select and piecewise.

Each is a composition of the namespace's functions (lazy, fused, differentiable). Index
bookkeeping that depends only on arguments NumPy code passes as Python or NumPy values (insert's
and delete's positions, the triangle's shape) is done on the host; the data is only gathered.
The functions whose result's length depends on the data (extract, compress, ix_ of a mask) count
a mask with lazyarr's nonzero, which reads the count back. NumPy's 'raise' modes check their
indices by reading back one boolean (unravel_index, ravel_multi_index, choose); indices given as
host data are checked on the host.
"""
from __future__ import annotations

import functools
import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.creation import arange, as_tensor, asarray, eye, zeros_like
from lazyarr.elementwise import (add, clip, equal, floor_divide, greater_equal, less, logical_not, logical_or,
                                 multiply, remainder, subtract, where)
from lazyarr.gathering import take
from lazyarr.graph import MAX_SIZE, cast_uop, expand_uop, gather_uop, normalize_axis, reshape_uop
from lazyarr.manipulation import (broadcast_arrays, broadcast_to, concat, flip, moveaxis, permute_dims, ravel, reshape,
                                  stack)
from lazyarr.searching import nonzero, searchsorted
from lazyarr.statistics import any as any_, cumulative_sum


def gather_along(x: Array, idx: Array, axis: int) -> Array:
    """x's elements at the integer positions `idx` along `axis` (idx: the result's shape, already
    in range): take_along_axis without its bounds check, so nothing is read back."""
    shape = idx.shape
    src = []
    for a, n in enumerate(shape):
        if a == axis:
            src.append(cast_uop(idx.uop, dtypes.int64))
        else:
            line = tuple(n if b == a else 1 for b in range(len(shape)))
            src.append(expand_uop(reshape_uop(cast_uop(UOp(Ops.IOTA, dtypes.index, (), n), dtypes.int64), line), shape))
    base = x.uop if x.shape[:axis] + x.shape[axis + 1:] == shape[:axis] + shape[axis + 1:] else \
        expand_uop(x.uop, tuple(x.shape[a] if a == axis else shape[a] for a in range(len(shape))))
    return wrap(gather_uop(base, src), x.device)


def _host_ints(name: str, value: Any, what: str) -> np.ndarray:
    """An index argument given on the host (or a small lazy array, read back) as NumPy integers."""
    host = np.asarray(value.numpy() if isinstance(value, Array) else value)
    if host.size == 0 and host.dtype.kind == "f":   # [] is an empty list of indices
        host = host.astype(np.int64)
    if host.dtype.kind not in "iu":
        raise TypeError(f"{name}: {what} must be integers, not {host.dtype}")
    return host


def _index_array(name: str, value: Any, device: Any = None) -> Array:
    t = as_tensor(value, device)
    if t.size == 0 and not t.dtype.is_int:
        t = t.astype(dtypes.int64)
    if not t.dtype.is_int:
        raise TypeError(f"{name}: only int indices permitted, not {t.dtype}")
    return t


def _any_outside(t: Array, low: int, high: int, host: Any) -> bool:
    """Whether an element of t lies outside [low, high): on the host where t came from there,
    else one boolean read back."""
    if not isinstance(host, Array):
        values = np.asarray(host)
        return bool(values.size) and bool(((values < low) | (values >= high)).any())
    return t.size > 0 and bool(any_(logical_or(less(t, low), greater_equal(t, high))))


# ---- index tricks ---------------------------------------------------------------------------------

def ix_(*args: Any) -> tuple[Array, ...]:
    """Open meshes from 1-D sequences (a boolean one stands for its True positions): the k-th of
    n results has its elements along axis k, for indexing the cross product."""
    out = []
    for k, seq in enumerate(args):
        t = as_tensor(seq)
        if not isinstance(seq, (Array, np.ndarray)) and t.size == 0:
            t = t.astype(dtypes.int64)
        if t.ndim != 1:
            raise ValueError(f"ix_: cross index must be 1 dimensional, got {t.ndim} dimensions")
        if t.dtype.is_bool:
            t = nonzero(t)[0]
        out.append(reshape(t, (1,) * k + (t.shape[0],) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def _dims(name: str, shape: Any) -> tuple[int, ...]:
    try:
        dims = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{name}: the shape must be an integer or a sequence of integers, got {shape!r}") from None
    if any(n < 0 for n in dims):
        raise ValueError(f"{name}: dimensions must be non-negative, got {dims}")
    return dims


def _strides(dims: tuple[int, ...], order: str) -> list[int]:
    if order not in ("C", "F"):
        raise ValueError(f"only 'C' or 'F' order is permitted, got {order!r}")
    axes = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    strides, step = [0] * len(dims), 1
    for a in axes:
        strides[a], step = step, step * dims[a]
    return strides


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[Array, ...]:
    """The coordinates in an array of `shape` of flat indices (ValueError for an index outside it)."""
    dims = _dims("unravel_index", shape)
    t = _index_array("unravel_index", indices)
    size = math.prod(dims)
    if _any_outside(t, 0, size, indices):
        values = np.asarray(t.numpy()).reshape(-1)
        bad = values[(values < 0) | (values >= size)][0]
        raise ValueError(f"unravel_index: index {bad} is out of bounds for array with size {size}")
    t = t.astype(dtypes.int64)
    return tuple(remainder(floor_divide(t, s), n) if n else t * 0
                 for s, n in zip(_strides(dims, order), dims))


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise", order: str = "C") -> Array:
    """The flat indices of coordinates in an array of shape `dims`. `mode` (one, or one per axis):
    'raise' (ValueError for a coordinate outside its axis), 'wrap' or 'clip'."""
    shape = _dims("ravel_multi_index", dims)
    coords = list(multi_index) if not isinstance(multi_index, Array) else [multi_index[i] for i in range(len(multi_index))]
    if len(coords) != len(shape):
        raise ValueError(f"ravel_multi_index: parameter multi_index must be a sequence of length {len(shape)}")
    modes = (mode,) * len(shape) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(shape):
        raise ValueError(f"ravel_multi_index: {len(modes)} modes given for {len(shape)} dimensions")
    out = None
    for c, n, s, m in zip(coords, shape, _strides(shape, order), modes):
        t = _index_array("ravel_multi_index", c).astype(dtypes.int64)
        if m == "raise":
            if _any_outside(t, 0, n, c):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
        elif m == "wrap":
            t = remainder(t, n) if n else t
        elif m == "clip":
            t = clip(t, 0, max(n - 1, 0))
        else:
            raise ValueError(f"ravel_multi_index: clipmode must be 'raise', 'wrap' or 'clip', got {m!r}")
        term = multiply(t, s)
        out = term if out is None else add(out, term)
    return out if out is not None else asarray(0)


def indices(dimensions: Any, dtype: Any = int, sparse: bool = False) -> Any:
    """The index of each position along each axis of a grid of shape `dimensions`: an array of
    shape (len(dimensions), *dimensions), or with `sparse` one open array per axis."""
    dims = _dims("indices", dimensions)
    d = dtypes.as_dtype(dtype)
    axes = [reshape(arange(n, dtype=d), tuple(n if b == a else 1 for b in range(len(dims))))
            for a, n in enumerate(dims)]
    if sparse:
        return tuple(axes)
    if not axes:   # a grid of no axes: no index arrays
        return asarray(np.zeros(0, d.np))
    return stack([broadcast_to(a, dims) for a in axes], axis=0)


class _Grid:
    """NumPy's mgrid (dense) and ogrid (open): `mgrid[0:2, 0:3]` indexes with slices; a real step
    is a spacing, an imaginary one (`0:1:5j`) a number of points with the stop included."""

    def __init__(self, name: str, sparse: bool) -> None:
        self.name, self.sparse = name, sparse

    def __getitem__(self, key: Any) -> Any:
        single = isinstance(key, slice)
        slices = (key,) if single else tuple(key)
        if not all(isinstance(s, slice) for s in slices):
            raise TypeError(f"{self.name}: index with slices, such as {self.name}[0:5] or {self.name}[0:1:5j]")
        parts = [self._part(s) for s in slices]
        numbers = [v for s in slices for v in (s.start, s.stop, s.step) if v is not None]
        floating = any(isinstance(v, (float, complex, np.floating, np.complexfloating)) for v in numbers)
        d = dtypes.default_float if floating else dtypes.default_int
        if single:
            start, step, count, counted = parts[0]
            if not counted:
                return arange(start, slices[0].stop, step)
            return add(multiply(arange(count, dtype=d), step), start)
        grids = []
        for a, (start, step, count, _) in enumerate(parts):
            line = tuple(count if b == a else 1 for b in range(len(parts)))
            grids.append(reshape(add(multiply(arange(count, dtype=d), step), start).astype(d), line))
        if self.sparse:
            return tuple(grids)
        shape = tuple(p[2] for p in parts)
        return stack([broadcast_to(g, shape) for g in grids], axis=0)

    def _part(self, s: slice) -> tuple[Any, Any, int, bool]:
        """(start, step, number of points, whether the step was a count) of one slice."""
        start = 0 if s.start is None else s.start
        step = 1 if s.step is None else s.step
        if s.stop is None:
            raise ValueError(f"{self.name}: every slice needs a stop")
        if isinstance(step, (complex, np.complexfloating)):
            count = int(abs(step))
            return start, (s.stop - start) / (count - 1) if count > 1 else 1, count, True
        if step == 0:
            raise ValueError(f"{self.name}: a step must not be zero")
        return start, step, max(0, math.ceil((s.stop - start) / step)), False


mgrid = _Grid("mgrid", sparse=False)
ogrid = _Grid("ogrid", sparse=True)


def identity(n: int, dtype: Any = None, *, device: Any = None) -> Array:
    """The n x n identity matrix (float64 by default)."""
    return eye(n, dtype=dtypes.default_float if dtype is None else dtype, device=device)


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """The indices of the main diagonal of an n x ... x n array of `ndim` dimensions."""
    i = arange(operator.index(n))
    return (i,) * operator.index(ndim)


def diag_indices_from(arr: Any) -> tuple[Array, ...]:
    """The indices of the main diagonal of arr (all of whose axes must have one length)."""
    shape = as_tensor(arr).shape
    if len(shape) < 2:
        raise ValueError("diag_indices_from: input array must be at least 2-d")
    if any(n != shape[0] for n in shape):
        raise ValueError(f"diag_indices_from: all dimensions of input must be of equal length, got {shape}")
    return diag_indices(shape[0], len(shape))


def _clipped_sum(a: int, n: int, m: int) -> int:
    """Σ over r in [0, n) of r + a clipped to [0, m], in closed form (n may be huge)."""
    first = min(max(-a, 0), n)             # the first r with r + a >= 0
    past = min(max(m - a + 1, 0), n)       # the first r with r + a > m
    count = max(past - first, 0)
    return count * (first + past - 1) // 2 + a * count + (n - max(past, first)) * m


def _triangle(name: str, n: int, m: int, k: int, upper: bool) -> tuple[Array, Array]:
    """The (row, column) indices of the lower (on and below diagonal k) or upper (on and above it)
    triangle of an n x m grid, in row-major order, lazily: each row's count and first column are
    computed per row, their running sum gives each row's first flat position, and each flat
    position's row is found by a binary search in those (the total alone on the host)."""
    if min(n, m) < 0:
        raise ValueError(f"{name}: n and m must be non-negative, got {n} and {m}")
    total = n * m - _clipped_sum(k, n, m) if upper else _clipped_sum(k + 1, n, m)
    if n > MAX_SIZE or m > MAX_SIZE or total > MAX_SIZE:
        raise ValueError(f"{name}: maximum allowed size exceeded ({total} indices of a {n} x {m} grid)")
    j = arange(total)
    if total == 0:
        return j, j
    r = arange(n)
    first = clip(add(r, k), 0, m) if upper else zeros_like(r)
    counts = subtract(m, first) if upper else clip(add(r, k + 1), 0, m)
    starts = cumulative_sum(counts, include_initial=True)[:-1]
    row = subtract(searchsorted(starts, j, side="right"), 1)
    col = add(subtract(j, gather_along(starts, row, 0)), gather_along(first, row, 0))
    return row, col


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """The indices of the lower triangle (on and below the k-th diagonal) of an n x m array."""
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    return _triangle("tril_indices", n, m, k, upper=False)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """The indices of the upper triangle (on and above the k-th diagonal) of an n x m array."""
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    return _triangle("triu_indices", n, m, k, upper=True)


def _matrix_shape(name: str, arr: Any) -> tuple[int, int]:
    shape = as_tensor(arr).shape
    if len(shape) != 2:
        raise ValueError(f"{name}: input array must be 2-d, got {len(shape)} dimensions")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    n, m = _matrix_shape("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    n, m = _matrix_shape("triu_indices_from", arr)
    return triu_indices(n, k, m)


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any) -> Any:
    """function(*indices(shape, dtype)): the function called once, with one index array per axis."""
    return function(*indices(shape, dtype=dtype), **kwargs)


# ---- manipulation -------------------------------------------------------------------------------------

def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Array:
    """m rotated by 90 degrees k times, from the first of `axes` towards the second."""
    x = as_tensor(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("rot90: len(axes) must be 2")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == x.ndim:
        raise ValueError("rot90: axes must be different")
    if not all(-x.ndim <= a < x.ndim for a in axes):
        raise ValueError(f"rot90: axes={axes} out of range for array of ndim={x.ndim}")
    a0, a1 = (a % x.ndim for a in axes)
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(x, axis=(a0, a1))
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = a1, a0
    return permute_dims(flip(x, axis=a1), perm) if k == 1 else flip(permute_dims(x, perm), axis=a1)


def flipud(m: Any) -> Array:
    """m with the order of its rows (axis 0) reversed."""
    x = as_tensor(m)
    if x.ndim < 1:
        raise ValueError("flipud: input must be >= 1-d")
    return flip(x, axis=0)


def fliplr(m: Any) -> Array:
    """m with the order of its columns (axis 1) reversed."""
    x = as_tensor(m)
    if x.ndim < 2:
        raise ValueError("fliplr: input must be >= 2-d")
    return flip(x, axis=1)


def _along(name: str, arr: Any, axis: Any) -> tuple[Array, int]:
    x = as_tensor(arr)
    if axis is None:
        return ravel(x), 0
    return x, normalize_axis(axis, x.ndim)


def _positions(name: str, obj: Any, n: int, axis: int, upper: int) -> tuple[np.ndarray, bool]:
    """insert's or delete's obj as positions along an axis of length n (each in [-n, upper),
    negative ones counted from the end), and whether obj was a scalar."""
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n), dtype=np.int64), False
    positions = _host_ints(name, obj, "obj (the positions)")
    scalar = positions.ndim == 0
    positions = positions.reshape(-1).astype(np.int64)
    bad = positions[(positions < -n) | (positions >= upper)]
    if bad.size:
        raise IndexError(f"{name}: index {bad[0]} is out of bounds for axis {axis} with size {n}")
    return np.where(positions < 0, positions + n, positions), scalar


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Array:
    """arr with `values` inserted before the positions `obj` (an integer, a slice or a sequence of
    integers) along `axis` (of the flattened array when None); values take arr's dtype."""
    x, ax = _along("insert", arr, axis)
    n = x.shape[ax]
    if not isinstance(obj, slice) and np.asarray(obj.numpy() if isinstance(obj, Array) else obj).dtype == bool:
        raise TypeError("insert: obj must be integers or a slice, not booleans")
    positions, scalar = _positions("insert", obj, n, ax, n + 1)
    v = as_tensor(values, x.device)
    v = v.astype(x.dtype) if v.dtype is not x.dtype else v
    if v.ndim < x.ndim:
        v = reshape(v, (1,) * (x.ndim - v.ndim) + v.shape)
    if positions.size == 1:   # one position: every slice of values along the axis goes there
        if scalar:
            v = moveaxis(v, 0, ax)
        count = v.shape[ax]
    else:
        count = positions.size
    v = broadcast_to(v, x.shape[:ax] + (count,) + x.shape[ax + 1:])
    if positions.size == 1:
        positions = np.full(count, positions[0])
    # where each inserted slice lands: its position plus the insertions before it (ties: in order)
    order = np.argsort(positions, kind="stable")
    landing = np.empty(count, np.int64)
    landing[order] = positions[order] + np.arange(count)
    source = np.empty(n + count, np.int64)
    taken = np.zeros(n + count, bool)
    taken[landing] = True
    source[landing] = n + np.arange(count)
    source[~taken] = np.arange(n)
    return take(concat([x, v], axis=ax), source, axis=ax)


def append(arr: Any, values: Any, axis: int | None = None) -> Array:
    """arr and values joined along `axis` (both flattened when None)."""
    if axis is None:
        return concat([ravel(as_tensor(arr)), ravel(as_tensor(values))], axis=0)
    return concat([as_tensor(arr), as_tensor(values)], axis=axis)


def delete(arr: Any, obj: Any, axis: int | None = None) -> Array:
    """arr without the positions `obj` (an integer, a slice, a sequence of integers, or a boolean
    mask of the axis' length) along `axis` (of the flattened array when None)."""
    x, ax = _along("delete", arr, axis)
    n = x.shape[ax]
    keep = np.ones(n, bool)
    host = None if isinstance(obj, slice) else np.asarray(obj.numpy() if isinstance(obj, Array) else obj)
    if host is not None and host.dtype == bool:
        if host.shape != (n,):
            raise ValueError(f"delete: boolean array argument obj to delete must be one dimensional and match the "
                             f"axis length of {n}")
        keep = ~host
    else:
        if host is not None and host.dtype.kind not in "iu" and host.size:
            raise IndexError(f"delete: arrays used as indices must be of integer (or boolean) type, not {host.dtype}")
        positions, _ = _positions("delete", obj, n, ax, n)
        keep[positions] = False
    return take(x, np.nonzero(keep)[0], axis=ax)


def extract(condition: Any, arr: Any) -> Array:
    """The elements of the flattened arr where the flattened condition is nonzero."""
    c, a = ravel(as_tensor(condition)), ravel(as_tensor(arr))
    if c.size > a.size:
        if bool(any_(c[a.size:] != 0)):
            raise IndexError(f"extract: the condition selects past the array's {a.size} elements")
        c = c[:a.size]
    return take(a, nonzero(c)[0])


def compress(condition: Any, a: Any, axis: int | None = None) -> Array:
    """The slices of `a` along `axis` (of the flattened a when None) where the 1-D condition is
    true; a shorter condition leaves the rest out."""
    c = as_tensor(condition)
    if c.ndim != 1:
        raise ValueError(f"compress: condition must be a 1-d array, got {c.ndim} dimensions")
    x, ax = _along("compress", a, axis)
    n = x.shape[ax]
    if c.shape[0] > n:
        if bool(any_(c[n:] != 0)):
            raise IndexError(f"compress: index {n} is out of bounds for axis {ax} with size {n}")
        c = c[:n]
    return take(x, nonzero(c)[0], axis=ax)


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Array:
    """At each position, the element of choices[a] there (a and the choices broadcast together).
    mode 'raise' (ValueError for an index outside the choices), 'wrap' or 'clip'."""
    if out is not None:
        raise TypeError("choose: out= is not supported (lazyarr's arrays are values: assign the result)")
    idx = as_tensor(a)
    if not (idx.dtype.is_int or idx.dtype.is_bool):
        raise TypeError(f"choose: a must hold integers, not {idx.dtype}")
    options = [choices[i] for i in range(choices.shape[0])] if isinstance(choices, Array) else \
        [as_tensor(c, idx.device) for c in choices]
    count = len(options)
    if count == 0:
        raise ValueError("choose: choices must not be empty")
    d = dtypes.promote_types(*(o.dtype for o in options))
    idx, *options = broadcast_arrays(idx.astype(dtypes.int64), *(o.astype(d) for o in options))
    if mode == "raise":
        if _any_outside(idx, 0, count, a):
            raise ValueError("choose: invalid entry in choice array")
    elif mode == "wrap":
        idx = remainder(idx, count)
    elif mode == "clip":
        idx = clip(idx, 0, count - 1)
    else:
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if count <= 16:   # a chain of selections, which fuses
        chosen = options[-1]
        for k in range(count - 2, -1, -1):
            chosen = where(equal(idx, k), options[k], chosen)
        return chosen
    stacked = stack(options, axis=0)
    return gather_along(stacked, reshape(idx, (1,) + idx.shape), 0)[0]


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Array:
    """At each position, the choice of the first true condition there (default where none is)."""
    if len(condlist) != len(choicelist):
        raise ValueError("select: list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select: select with an empty condition list is not possible")
    conds = [as_tensor(c) for c in condlist]
    for i, c in enumerate(conds):
        if not c.dtype.is_bool:
            raise TypeError(f"select: invalid entry {i} in condlist: should be boolean, not {c.dtype}")
    device = conds[0].device
    options = [c if dtypes.scalar_kind(c) and not isinstance(c, Array) else as_tensor(c, device)
               for c in list(choicelist) + [default]]
    probes = [np.empty(0, o.dtype.np) if isinstance(o, Array) else o for o in options]
    d = dtypes.as_dtype(np.select([np.zeros(0, bool)] * len(conds), probes[:-1], probes[-1]).dtype)
    chosen = asarray(options[-1], dtype=d, device=device) if not isinstance(options[-1], Array) else \
        options[-1].astype(d)
    for c, o in zip(reversed(conds), reversed(options[:-1])):
        chosen = where(c, o.astype(d) if isinstance(o, Array) else asarray(o, dtype=d, device=device), chosen)
    return chosen


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Array:
    """NumPy's piecewise: where condlist[i] holds, funclist[i] (a function of x, or a value); one
    more function than conditions is the value where none holds; 0 elsewhere; in x's dtype.
    A function is called on the whole of x (not on the selected elements alone, as NumPy's is)
    and its values are kept where its condition holds, so that the result stays lazy."""
    t = as_tensor(x)
    conds = _conditions(condlist, t)
    n = len(conds)
    if len(funclist) == n + 1:
        some = functools.reduce(logical_or, conds) if n else asarray(False, device=t.device)
        conds = conds + [logical_not(some)]
    elif len(funclist) != n:
        raise ValueError(f"piecewise: with {n} condition(s), either {n} or {n + 1} functions are expected")
    out = zeros_like(t)
    for c, f in zip(conds, funclist):
        value = f(t, *args, **kw) if callable(f) else f
        value = as_tensor(value, t.device)
        out = where(c, value.astype(t.dtype) if value.dtype is not t.dtype else value, out)
    return out


def _conditions(condlist: Any, x: Array) -> list[Array]:
    """piecewise's conditions: a list of boolean arrays, or one (a boolean array of x's rank, or
    a list of booleans for a 1-D x); a boolean array of one more dimension is a list of them."""
    if isinstance(condlist, (Array, np.ndarray)) or dtypes.scalar_kind(condlist) == "b" or isinstance(condlist, np.bool_):
        c = as_tensor(condlist, x.device)
        found = list(c) if c.ndim == x.ndim + 1 and c.ndim > 0 else [c]
    else:
        items = list(condlist)
        flat = items and all(dtypes.scalar_kind(v) == "b" or isinstance(v, np.bool_) for v in items) and x.ndim == 1
        found = [as_tensor(items, x.device)] if flat else [as_tensor(c, x.device) for c in items]
    out = []
    for c in found:
        if not c.dtype.is_bool:
            c = c != 0
        out.append(c)
    return out


__all__ = ["ix_", "unravel_index", "ravel_multi_index", "indices", "mgrid", "ogrid", "identity", "diag_indices",
           "diag_indices_from", "tril_indices", "tril_indices_from", "triu_indices", "triu_indices_from",
           "fromfunction", "rot90", "flipud", "fliplr", "insert", "append", "delete", "extract", "compress",
           "choose", "select", "piecewise"]
