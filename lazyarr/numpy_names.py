"""NumPy's remaining names that array code reaches for: dtype, iscomplexobj, isrealobj,
real_if_close, shares_memory, may_share_memory, apply_along_axis, apply_over_axes, vectorize,
frompyfunc, array2string, array_repr and array_str.

`dtype(x)` is lazyarr's dtype object for whatever np.dtype accepts that lazyarr supports (and
`isinstance(d, lazyarr.dtype)` holds for lazyarr's dtypes). Memory is shared where a write
through one array can change the other: lazyarr's views (basic indexing, transposes, reshapes
without copies, flips, complex parts, broadcasts) of one root array, whose elements' byte ranges
in the root are compared (exactly, from the views' strides, or by their bounds for
may_share_memory); a realized array's buffer is compared with NumPy's memory by NumPy.

apply_along_axis and apply_over_axes call the function on lazy slices and join the results (lazy
and differentiable when the function is). vectorize and frompyfunc loop in Python through
NumPy's on the host values, and return lazyarr arrays; the printing functions are NumPy's of the
realized values.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from lazyarr import dtypes
from lazyarr.numpy_fallback import to_host
from lazyarr.arrays import Array, layout_strides
from lazyarr.compiler.uop import Ops
from lazyarr.creation import as_tensor, asarray
from lazyarr.dtypes import DType
from lazyarr.elementwise import abs as absolute, imag, less, real
from lazyarr.graph import normalize_axis
from lazyarr.manipulation import expand_dims, moveaxis, reshape, stack
from lazyarr.statistics import all as all_

# ---- dtype ----------------------------------------------------------------------------------------


class _DTypeMeta(type):
    """isinstance(d, lazyarr.dtype) for lazyarr's dtype objects, as NumPy's code asks of np.dtype."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, DType)


class dtype(metaclass=_DTypeMeta):
    """NumPy's dtype: dtype(x) gives lazyarr's dtype object for anything np.dtype accepts (a name,
    a character code, a NumPy dtype or scalar type, a Python type, None for float64) that lazyarr
    supports; TypeError naming the dtype for others (strings, records, datetimes, objects)."""

    def __new__(cls, obj: Any, align: bool = False, copy: bool = False, metadata: Any = None) -> DType:  # type: ignore[misc]
        if isinstance(obj, DType):
            return obj
        if isinstance(obj, Array):
            raise TypeError("Cannot construct a dtype from an array")
        try:
            found = np.dtype(obj)
        except TypeError:
            raise TypeError(f"data type {obj!r} not understood") from None
        return dtypes.as_dtype(found)


# ---- kinds of values ---------------------------------------------------------------------------------

def _dtype_of(x: Any) -> np.dtype:
    if isinstance(x, Array):
        return x.dtype.np
    kind = getattr(x, "dtype", None)
    if kind is not None:
        try:
            return np.dtype(kind.np if isinstance(kind, DType) else kind)
        except TypeError:
            pass
    return np.asarray(x).dtype


def iscomplexobj(x: Any) -> bool:
    """Whether x's dtype (or that of the array NumPy makes of it) is complex, whatever its values."""
    return _dtype_of(x).kind == "c"


def isrealobj(x: Any) -> bool:
    """Whether x's dtype is not complex."""
    return not iscomplexobj(x)


def real_if_close(a: Any, tol: float = 100) -> Array:
    """The real part, when every imaginary part is within tol machine epsilons of 0 (tol itself
    when tol <= 1); else a unchanged. (The dtype depends on the values: one boolean is read back.)"""
    t = as_tensor(a)
    if not t.dtype.is_complex:
        return t
    if tol > 1:
        tol = dtypes.finfo(t.dtype).eps * tol
    if t.size == 0 or bool(all_(less(absolute(imag(t)), tol))):
        return real(t)
    return t


# ---- memory ------------------------------------------------------------------------------------------

# shares_memory lists the byte offsets of up to this many elements (both arrays together) to answer
# exactly; larger views whose bounds overlap are answered from their bounds
EXACT_ELEMENTS = 1 << 24


def _root(x: Array) -> Array:
    return x._viewof.root if x._viewof is not None else x


def _byte_layout(x: Array) -> tuple[int, tuple[int, ...]]:
    """Where x's first element starts in its root's row-major memory, and its strides (bytes)."""
    of = x._viewof
    if of is None:
        return 0, layout_strides(x)
    start = of.byte_offset([0] * x.ndim)
    u = of.template
    while u is not of.root_at:   # a complex part lies inside its element: the imaginary one after the real
        if u.op is Ops.GEP:
            start += u.arg[0] * u.dtype.itemsize
        u = u.src[0]
    return start, layout_strides(x)


def _element_starts(x: Array) -> np.ndarray:
    """The byte offset of each of x's elements in its root's memory (host arithmetic, no data)."""
    start, strides = _byte_layout(x)
    offsets = np.full((1,) * x.ndim, start, dtype=np.int64)
    for axis, (n, s) in enumerate(zip(x.shape, strides)):
        offsets = offsets + (np.arange(n, dtype=np.int64) * s).reshape((1,) * axis + (n,) + (1,) * (x.ndim - axis - 1))
    return offsets.reshape(-1)


def _extent(x: Array) -> tuple[int, int]:
    """The first byte and the byte after the last that x's elements occupy in its root."""
    start, strides = _byte_layout(x)
    low = start + sum((n - 1) * s for n, s in zip(x.shape, strides) if s < 0)
    high = start + sum((n - 1) * s for n, s in zip(x.shape, strides) if s > 0) + x.dtype.itemsize
    return low, high


def _host_overlap(a: Any, b: Any, exact: bool) -> bool:
    """Memory shared with an operand outside lazyarr: a realized array's buffer as NumPy sees it
    (an array not computed yet has no memory anyone else could hold)."""
    hosts = []
    for x in (a, b):
        if isinstance(x, Array):
            if not x.is_realized or not x.device.host_memory:
                return False
            x = x.numpy()
        hosts.append(x)
    return bool(np.shares_memory(*hosts) if exact else np.may_share_memory(*hosts))


def shares_memory(a: Any, b: Any, /, max_work: int | None = None) -> bool:
    """Whether a write through a could change an element of b: two views of one array whose
    elements overlap in its memory (exactly, element by element, up to EXACT_ELEMENTS elements;
    max_work=0 compares bounds)."""
    if not (isinstance(a, Array) and isinstance(b, Array)):
        return _host_overlap(a, b, max_work != 0)
    if _root(a) is not _root(b) or a.size == 0 or b.size == 0:
        return False
    if max_work == 0:
        return may_share_memory(a, b)
    (la, ha), (lb, hb) = _extent(a), _extent(b)
    if ha <= lb or hb <= la:
        return False
    if a.size + b.size > EXACT_ELEMENTS:   # too many offsets to list: the bounds answer
        return True
    starts_a, starts_b = _element_starts(a), np.sort(_element_starts(b))
    # an element [s, s + size_a) of a meets one [t, t + size_b) of b when t < s + size_a and s < t + size_b
    first_after = np.searchsorted(starts_b, starts_a - b.dtype.itemsize, side="right")
    inside = first_after < starts_b.size
    return bool(np.any(starts_b[np.minimum(first_after, starts_b.size - 1)][inside] < starts_a[inside] + a.dtype.itemsize))


def may_share_memory(a: Any, b: Any, /, max_work: int | None = None) -> bool:
    """Whether a and b might share memory: views of one array whose bounds in its memory overlap."""
    if not (isinstance(a, Array) and isinstance(b, Array)):
        return _host_overlap(a, b, max_work is not None and max_work != 0)
    if max_work is not None and max_work != 0:
        return shares_memory(a, b)
    if _root(a) is not _root(b) or a.size == 0 or b.size == 0:
        return False
    (la, ha), (lb, hb) = _extent(a), _extent(b)
    return la < hb and lb < ha


# ---- applying functions along axes ----------------------------------------------------------------

def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any, **kwargs: Any) -> Array:
    """func1d applied to each 1-D slice of arr along `axis`; the result's axes take that axis'
    place. The slices are lazy views, so the whole stays lazy (and differentiable) when func1d is."""
    x = as_tensor(arr)
    ax = normalize_axis(axis, x.ndim)
    moved = moveaxis(x, ax, -1)
    outer = moved.shape[:-1]
    if math.prod(outer) == 0:
        raise ValueError("apply_along_axis: cannot apply_along_axis when any iteration dimensions are 0")
    rows = reshape(moved, (math.prod(outer), moved.shape[-1]))
    results = [as_tensor(func1d(rows[i], *args, **kwargs), x.device) for i in range(rows.shape[0])]
    first = results[0]
    joined = stack([r.astype(first.dtype) if r.dtype is not first.dtype else r for r in results], axis=0)
    out = reshape(joined, outer + first.shape)
    k = first.ndim
    return moveaxis(out, tuple(range(len(outer), len(outer) + k)), tuple(range(ax, ax + k))) if k else out


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Any) -> Array:
    """func(a, axis) for each axis in turn, each result of a's rank (a reduced axis kept as 1)."""
    value = as_tensor(a)
    n = value.ndim
    for axis in (axes if np.ndim(axes) else (axes,)):
        axis = int(axis)
        if axis < 0:
            axis += n
        res = as_tensor(func(value, axis), value.device)
        if res.ndim != value.ndim:
            res = expand_dims(res, axis=axis)
            if res.ndim != value.ndim:
                raise ValueError("apply_over_axes: function is not returning an array of the correct shape")
        value = res
    return value


# ---- Python functions over elements, through NumPy ----------------------------------------------------

def _lazy(out: Any) -> Any:
    """NumPy's results as lazyarr arrays (object arrays of numbers become numeric ones)."""
    if isinstance(out, tuple):
        return tuple(_lazy(o) for o in out)
    values = np.asarray(out)
    if values.dtype == object:
        values = np.asarray(values.tolist())
        if values.dtype == object:
            raise TypeError("the function's results are not numbers lazyarr can hold")
    return asarray(values)


def _otypes(otypes: Any) -> Any:
    if otypes is None or isinstance(otypes, str):
        return otypes
    return [dtypes.as_dtype(t).np if isinstance(t, DType) else t for t in otypes]


class vectorize:
    """NumPy's vectorize: pyfunc called on each element (or core slice, with a `signature`) of
    the broadcast inputs, in a Python loop over their host values; lazyarr arrays out. Without
    pyfunc, a decorator taking the other arguments."""

    def __init__(self, pyfunc: Callable[..., Any] | None = None, otypes: Any = None, doc: str | None = None,
                 excluded: Any = None, cache: bool = False, signature: str | None = None) -> None:
        self.pyfunc, self.otypes, self.excluded, self.cache, self.signature = pyfunc, otypes, excluded, cache, signature
        self.__doc__ = doc if doc is not None else getattr(pyfunc, "__doc__", None)
        self._numpy = None if pyfunc is None else \
            np.vectorize(pyfunc, otypes=_otypes(otypes), doc=doc, excluded=excluded, cache=cache, signature=signature)
        if pyfunc is not None:
            self.__name__ = getattr(pyfunc, "__name__", "vectorized")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._numpy is None:   # @vectorize(otypes=...): the decorated function arrives
            return vectorize(args[0], self.otypes, self.__doc__, self.excluded, self.cache, self.signature)
        return _lazy(self._numpy(*(to_host(a) for a in args), **{k: to_host(v) for k, v in kwargs.items()}))


class _PythonUfunc:
    """What frompyfunc returns: NumPy's object ufunc of the function, called on host values, with
    lazyarr arrays out (numbers become numeric arrays)."""

    def __init__(self, func: Callable[..., Any], nin: int, nout: int, identity: Any) -> None:
        kwargs = {} if identity is None else {"identity": identity}
        self._numpy = np.frompyfunc(func, nin, nout, **kwargs)
        self.__name__ = self._numpy.__name__

    nin = property(lambda self: self._numpy.nin)
    nout = property(lambda self: self._numpy.nout)
    nargs = property(lambda self: self._numpy.nargs)
    identity = property(lambda self: self._numpy.identity)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _lazy(self._numpy(*(to_host(a) for a in args), **kwargs))

    def reduce(self, array: Any, *args: Any, **kwargs: Any) -> Any:
        return _lazy(self._numpy.reduce(to_host(array), *args, **kwargs))

    def accumulate(self, array: Any, *args: Any, **kwargs: Any) -> Any:
        return _lazy(self._numpy.accumulate(to_host(array), *args, **kwargs))

    def outer(self, a: Any, b: Any, **kwargs: Any) -> Any:
        return _lazy(self._numpy.outer(to_host(a), to_host(b), **kwargs))

    def __repr__(self) -> str:
        return f"<lazyarr frompyfunc {self.__name__}>"


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> _PythonUfunc:
    """NumPy's frompyfunc: a ufunc-like object calling func on each element (on the host)."""
    return _PythonUfunc(func, nin, nout, identity)


# ---- printing, through NumPy ------------------------------------------------------------------------

def array2string(a: Any, *args: Any, **kwargs: Any) -> str:
    """NumPy's array2string of the computed values."""
    return np.array2string(np.asarray(as_tensor(a).numpy()), *args, **kwargs)


def array_repr(arr: Any, max_line_width: int | None = None, precision: int | None = None,
               suppress_small: bool | None = None) -> str:
    """NumPy's array_repr of the computed values ("array([...])")."""
    return np.array_repr(np.asarray(as_tensor(arr).numpy()), max_line_width, precision, suppress_small)


def array_str(a: Any, max_line_width: int | None = None, precision: int | None = None,
              suppress_small: bool | None = None) -> str:
    """NumPy's array_str of the computed values."""
    return np.array_str(np.asarray(as_tensor(a).numpy()), max_line_width, precision, suppress_small)


__all__ = ["dtype", "iscomplexobj", "isrealobj", "real_if_close", "shares_memory", "may_share_memory",
           "apply_along_axis", "apply_over_axes", "vectorize", "frompyfunc", "array2string", "array_repr",
           "array_str"]
