"""NumPy's ufunc objects: the namespace's elementwise functions (add, maximum, sin, ...) as
instances of `ufunc`, so that NumPy code calling their methods (`np.maximum.accumulate(x)`,
`np.add.at(d, idx, 1)`, `np.multiply.outer(x, y)`) runs on lazyarr arrays, lazily.

An instance wraps the plain function (`elementwise`, `numpy_elementwise`): a call without keywords
is that function's call (one Python frame more), and the array API's signature is kept for tools
that inspect it (`__signature__`). The keywords (out, where, dtype, casting, order, subok) and the
methods follow NumPy:
- dtypes and casting errors are NumPy's own answer, asked of NumPy's ufunc of the same name on
  dtypes alone (`resolve_dtypes`) or on tiny arrays of the operands' dtypes (a "probe", for the
  methods: it also raises NumPy's errors for a bad axis, a reduction with no identity of an empty
  axis, a non-reorderable reduction over several axes, bad reduceat indices);
- reduce maps add, multiply, maximum, minimum, logical_and and logical_or to the reductions
  (sum, prod, max, min, all, any); other associative functions fold as a tree (log depth), the
  rest one element after another, as NumPy does;
- accumulate of add and multiply is cumsum/cumprod; other associative functions scan by doubling
  (log depth: shifted copies combined, where the shift reaches), the rest one element after another;
- at writes in place: add and subtract by a scatter-add (one kernel), the others by rounds, each
  round applying the k-th occurrence of every index (repeated indices then accumulate as in
  NumPy's unbuffered loop); the indices are read on the host.
Everything is built of lazyarr's own operations, so it stays lazy and differentiable.
"""
from __future__ import annotations

import inspect
import math
import operator
from typing import Any, Callable

import numpy as np

from lazyarr import dtypes, elementwise as ew, numpy_elementwise
from lazyarr.numpy_fallback import to_host
from lazyarr import statistics as st
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.ir_kernels import scatter_add
from lazyarr.creation import arange, as_tensor, asarray, full, zeros_like
from lazyarr.dtypes import DType
from lazyarr.gathering import selected_positions, setitem, take
from lazyarr.graph import broadcast_shapes, gather_uop, normalize_axes, with_gradient
from lazyarr.indexing import getitem as basic_getitem
from lazyarr.manipulation import broadcast_to, concat, moveaxis, permute_dims, reshape, stack


class _NoValue:
    """The default of reduce's `initial`: none given (None is a value NumPy accepts there)."""

    def __repr__(self) -> str:
        return "<no value>"


NO_VALUE = _NoValue()
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
# functions whose reduction is one of lazyarr's reductions: (the reduction, the one for booleans)
_REDUCTIONS: dict[str, tuple[Callable[..., Array], Callable[..., Array]]] = {
    "add": (st.sum, st.any), "multiply": (st.prod, st.all), "maximum": (st.max, st.any),
    "minimum": (st.min, st.all), "logical_and": (st.all, st.all), "logical_or": (st.any, st.any)}
_SCANS = {"add": st.cumsum, "multiply": st.cumprod}
# associative functions: reduced as a tree and accumulated by doubling (log depth); the others
# are folded one element after another, as NumPy's loop folds them
_ASSOCIATIVE = frozenset({"add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
                          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "logaddexp",
                          "hypot"})
# functions for which a value appearing twice changes nothing: a masked element may be replaced
# by `initial` where there is no identity
_IDEMPOTENT = frozenset({"maximum", "minimum", "fmax", "fmin"})


def _operand(x: Any) -> Any:
    """A ufunc's input: an array, or a Python scalar kept as it is (weak, as NumPy 2 treats it)."""
    if isinstance(x, Array) or type(x) in (bool, int, float, complex):
        return x
    return as_tensor(x)


def _np_dtype(d: Any) -> np.dtype:
    return dtypes.as_dtype(d).np


def _as(x: Array, d: DType) -> Array:
    return x if x.dtype is d else x.astype(d)


def _last(x: Array, i: Any) -> Array:
    """x[..., i]: an element or a slice of the last axis."""
    return basic_getitem(x, (Ellipsis, i))


class ufunc:
    """A NumPy-style universal function over lazyarr arrays: callable as the elementwise function
    it wraps, with NumPy's keywords, and the methods reduce, accumulate, reduceat, outer and at.
    Attributes as NumPy's: nin, nout, nargs, identity, signature (None: elementwise).

    Each instance is of a class of its own (named ufunc too), whose `__call__` calls the wrapped
    function with exactly its positional arguments: a call without keywords costs one Python frame
    more than the function's (a generic `*args` forwarding costs twice that)."""

    signature = None

    def __new__(cls, function: Callable[..., Any]) -> ufunc:
        own = type(cls.__name__, (cls,), {"__module__": "lazyarr", "__qualname__": cls.__qualname__})
        return super().__new__(own)

    def __init__(self, function: Callable[..., Any]) -> None:
        self._function = function
        self._numpy: np.ufunc = getattr(np, function.__name__)
        self.nin, self.nout = self._numpy.nin, self._numpy.nout
        self.nargs = self.nin + self.nout
        self.identity = self._numpy.identity
        self.__name__ = self.__qualname__ = function.__name__
        self.__doc__ = function.__doc__ or f"NumPy's {function.__name__}, elementwise, lazily."
        self.__module__ = "lazyarr"
        type(self).__call__ = staticmethod(_fast_call(function, self._call, self.nin, self.__name__))

    @property
    def __signature__(self) -> inspect.Signature:
        """The wrapped function's signature (the array API's, which tools inspect)."""
        return inspect.signature(self._function)

    def __repr__(self) -> str:
        return f"<ufunc {self.__name__!r}>"

    def __reduce__(self) -> str:
        return self.__name__   # pickled by name, as NumPy's ufuncs

    # ---- the call --------------------------------------------------------------------------------
    def __call__(self, *inputs: Any, **keywords: Any) -> Any:
        # (each instance's class replaces this by `_fast_call`'s function, which is faster)
        return self._call(inputs, **keywords)

    def _call(self, inputs: tuple[Any, ...], out: Any = None, *, where: Any = True, dtype: Any = None,
              casting: str = "same_kind", order: str = "K", subok: bool = True) -> Any:
        """The call with NumPy's keywords. `order` and `subok` are checked and have no effect (a
        lazyarr array has no memory layout of its own, nor subclasses). Without `out`, the
        elements where `where` is false are 0 (NumPy leaves them uninitialised)."""
        if not self.nin <= len(inputs) <= self.nargs:
            raise TypeError(f"{self.__name__}() takes from {self.nin} to {self.nargs} positional arguments but "
                            f"{len(inputs)} were given")
        if len(inputs) > self.nin:   # outputs given by position
            if out is not None:
                raise TypeError("cannot specify 'out' as both a positional and keyword argument")
            out, inputs = inputs[self.nin:], inputs[:self.nin]
        outs = self._outputs(out)
        _check_casting(casting)
        if order not in ("K", "A", "C", "F"):
            raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
        operands = [_operand(x) for x in inputs]
        if not any(isinstance(x, Array) for x in operands):   # Python scalars alone: NumPy's arrays of them
            operands = [as_tensor(x) for x in operands]
        if dtype is None and casting == "same_kind":   # lazyarr's own dtypes, as the plain call
            results = self._function(*operands)
        else:
            loop = self._loop(operands, dtype, casting)
            cast = [_as(x, d) if isinstance(x, Array) else asarray(x, dtype=d) for x, d in zip(operands, loop)]
            results = self._function(*cast)
            if self.nout == 1:
                results = _as(results, loop[-1])
            else:
                results = tuple(_as(r, d) for r, d in zip(results, loop[self.nin:]))
        results = (results,) if self.nout == 1 else tuple(results)
        mask = _mask(where)
        written = tuple(self._write(o, r, mask, casting) for o, r in zip(outs, results))
        return written[0] if self.nout == 1 else written

    def _outputs(self, out: Any) -> tuple[Any, ...]:
        """`out` as one entry (None, a lazyarr array or a NumPy array) per output."""
        if out is None:
            return (None,) * self.nout
        if not isinstance(out, tuple):
            if self.nout != 1:
                raise TypeError(f"{self.__name__} has {self.nout} outputs: 'out' must be a tuple of {self.nout} arrays")
            out = (out,)
        if len(out) != self.nout:
            raise ValueError(f"The 'out' tuple must have exactly {self.nout} entries: one per ufunc output")
        for o in out:
            if o is not None and not isinstance(o, (Array, np.ndarray)):
                raise TypeError(f"return arrays must be of ArrayType, not {type(o).__name__}")
        return out

    def _loop(self, operands: list[Any], dtype: Any, casting: str) -> list[DType]:
        """NumPy's loop dtypes (inputs, then outputs) for the operands' dtypes, `dtype` and `casting`;
        NumPy's TypeError where there is none or an input cannot be cast."""
        given = tuple(o.dtype.np if isinstance(o, Array) else np.dtype(bool) if type(o) is bool else type(o)
                      for o in operands)
        options = {} if dtype is None else {"signature": (None,) * self.nin + (_np_dtype(dtype),) * self.nout}
        loop = self._numpy.resolve_dtypes(given + (None,) * self.nout, casting=casting, **options)
        return [dtypes.as_dtype(d) for d in loop]

    def _write(self, out: Any, result: Array, mask: Array | None, casting: str) -> Any:
        """`result` as the output: into `out` where given (updated in place and returned), where
        `mask` holds (everywhere without one); without `out`, 0 where the mask is false."""
        if out is None:
            return result if mask is None else ew.where(mask, result, zeros_like(result))
        target = out.dtype if isinstance(out, np.ndarray) else out.dtype.np
        if not np.can_cast(result.dtype.np, target, casting):
            raise TypeError(f"Cannot cast ufunc {self.__name__!r} output from {result.dtype.np!r} to {target!r} "
                            f"with casting rule {casting!r}")
        if isinstance(out, np.ndarray):
            np.copyto(out, np.asarray(result.numpy()), casting="unsafe",
                      where=True if mask is None else np.asarray(mask.numpy()))
            return out
        try:
            shape = broadcast_shapes(result.shape, out.shape, *(() if mask is None else (mask.shape,)))
        except ValueError:
            shape = None
        if shape != out.shape:
            raise ValueError(f"non-broadcastable output operand with shape {out.shape} doesn't match the broadcast "
                             f"shape {broadcast_shapes(result.shape, *(() if mask is None else (mask.shape,)))}")
        value = _as(result, out.dtype)
        if mask is not None:
            value = ew.where(mask, value, out)
        setitem(out, Ellipsis, value)
        return out

    def _binary_only(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            what = "outer product" if method == "outer" else method
            raise ValueError(f"{what} only supported for binary functions")

    def _probe(self, method: str, a: Array, *args: Any, shape: tuple[int, ...] | None = None, **kwargs: Any) -> Any:
        """NumPy's `method` of this ufunc on zeros of a's dtype, of `shape` or a's shape with each axis
        cut to at most one element: its result's dtype, value (an identity, an initial) and errors."""
        sample = np.zeros(tuple(min(n, 1) for n in a.shape) if shape is None else shape, a.dtype.np)
        with np.errstate(all="ignore"):
            return np.asarray(getattr(self._numpy, method)(sample, *args, **kwargs))

    def _combine(self, x: Array, y: Array, d: DType) -> Array:
        return _as(self._function(x, y), d)

    # ---- reduce ----------------------------------------------------------------------------------
    def reduce(self, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None, keepdims: bool = False,
               initial: Any = NO_VALUE, where: Any = True) -> Array:
        """The function folded over `axis` (an int, a tuple of axes, None for all), in `dtype` (by
        default out's, else NumPy's for the input: add and multiply of small integers widen),
        starting from `initial` where given; elements where `where` is false are left out (which
        needs an identity or an initial value, as in NumPy). An empty axis gives the identity
        (ValueError for a function without one, as NumPy)."""
        self._binary_only("reduce")
        a = as_tensor(array)
        out = _single_output(out)
        if dtype is None and out is not None:
            dtype = out.dtype
        options = {} if initial is NO_VALUE else {"initial": to_host(initial)}
        probe = self._probe("reduce", a, axis=axis, dtype=None if dtype is None else _np_dtype(dtype),
                            keepdims=keepdims, **options)
        d = dtypes.as_dtype(probe.dtype)
        axes = normalize_axes(axis, a.ndim)
        final = tuple(1 if i in axes else n for i, n in enumerate(a.shape) if keepdims or i not in axes)
        mask = _mask(where)
        if mask is not None and self.identity is None and initial is NO_VALUE:
            raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, so to use a where "
                             f"mask one has to specify 'initial'")
        if a.size == 0 or any(a.shape[i] == 0 for i in axes):   # the identity (or initial), as NumPy's probe has it
            value = probe.flat[0].item() if probe.size else 0
            return self._result(_filled(final, value, d, a), out)
        # the reduced axes moved last and merged into one
        kept = [i for i in range(a.ndim) if i not in axes]
        lead = tuple(a.shape[i] for i in kept)
        x = reshape(permute_dims(_as(a, d), kept + list(axes)), lead + (math.prod(a.shape[i] for i in axes),))
        if mask is not None:
            mask = reshape(permute_dims(broadcast_to(mask, a.shape), kept + list(axes)), x.shape)
            if self.identity is not None or self.__name__ in _IDEMPOTENT:
                fill = _identity(self.identity, d) if self.identity is not None else to_host(initial)
                x, mask = ew.where(mask, x, asarray(fill, dtype=d, device=a.device)), None
        if initial is NO_VALUE and self.identity is not None and self.__name__ not in _REDUCTIONS:
            initial = _identity(self.identity, d)   # NumPy starts from the identity: gcd.reduce([-4]) is 4
        if initial is not NO_VALUE:
            x = concat([asarray(np.full(lead + (1,), to_host(initial), d.np), device=a.device), x], axis=-1)
            if mask is not None:
                mask = concat([full(lead + (1,), True, dtype=dtypes.bool_, device=a.device), mask], axis=-1)
        r = self._fold(x, d) if mask is None else self._masked_fold(x, mask, d)
        return self._result(reshape(r, final), out)

    def _fold(self, x: Array, d: DType) -> Array:
        """x reduced along its last axis (of at least one element), in dtype d."""
        if self.__name__ in _REDUCTIONS:
            general, of_bools = _REDUCTIONS[self.__name__]
            if d.is_bool:
                return of_bools(x, axis=-1)
            return _as(general(x, axis=-1, dtype=d) if general in (st.sum, st.prod) else general(x, axis=-1), d)
        if self.__name__ in _ASSOCIATIVE:   # a tree: neighbours combined, in order, level by level
            while x.shape[-1] > 1:
                n = x.shape[-1]
                half = n // 2
                y = self._combine(_last(x, slice(0, 2 * half, 2)), _last(x, slice(1, 2 * half, 2)), d)
                x = concat([y, _last(x, slice(2 * half, n))], axis=-1) if n % 2 else y
            return _last(x, 0)
        acc = _last(x, 0)
        for i in range(1, x.shape[-1]):
            acc = self._combine(acc, _last(x, i), d)
        return acc

    def _masked_fold(self, x: Array, mask: Array, d: DType) -> Array:
        """x reduced along its last axis leaving out the elements where mask is false (a function
        without an identity: its first element, `initial`, is never left out)."""
        acc, seen = _last(x, 0), _last(mask, 0)
        for i in range(1, x.shape[-1]):
            v, m = _last(x, i), _last(mask, i)
            acc = ew.where(m, ew.where(seen, self._combine(acc, v, d), v), acc)
            seen = ew.logical_or(seen, m)
        return acc

    def _result(self, r: Array, out: Any) -> Any:
        return r if out is None else self._write(out, r, None, "unsafe")

    # ---- accumulate ------------------------------------------------------------------------------
    def accumulate(self, array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Array:
        """The running fold along `axis`: result[..., i] is the fold of elements 0..i, in `dtype`
        (by default out's, else NumPy's for the input)."""
        self._binary_only("accumulate")
        a = as_tensor(array)
        out = _single_output(out)
        if dtype is None and out is not None:
            dtype = out.dtype
        probe = self._probe("accumulate", a, axis=axis, dtype=None if dtype is None else _np_dtype(dtype))
        d = dtypes.as_dtype(probe.dtype)
        ax = normalize_axes(axis, a.ndim)[0]
        x = _as(a, d)
        if a.size == 0:
            return self._result(_filled(a.shape, 0, d, a), out)
        if self.__name__ in _SCANS and not d.is_bool:
            return self._result(_as(_SCANS[self.__name__](x, axis=ax, dtype=d), d), out)
        x = moveaxis(x, ax, -1)
        n = x.shape[-1]
        if self.__name__ in _ASSOCIATIVE:
            # doubling: after the step of shift s, element i holds the fold of i-2s+1..i (clipped at 0)
            position = arange(n, device=a.device)
            s = 1
            while s < n:
                shifted = concat([_last(x, slice(0, s)), _last(x, slice(0, n - s))], axis=-1)   # (the first s unused)
                x = ew.where(ew.greater_equal(position, s), self._combine(shifted, x, d), x)
                s *= 2
        else:
            acc = _last(x, 0)
            running = [acc]
            for i in range(1, n):
                acc = self._combine(acc, _last(x, i), d)
                running.append(acc)
            x = stack(running, axis=-1)
        return self._result(moveaxis(x, -1, ax), out)

    # ---- reduceat --------------------------------------------------------------------------------
    def reduceat(self, array: Any, indices: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Array:
        """Reductions over slices along `axis`: result[i] reduces array[indices[i]:indices[i+1]]
        where indices[i] < indices[i+1], and is array[indices[i]] where not (the last reduces to
        the end), as NumPy's. The indices are read on the host."""
        self._binary_only("reduceat")
        a = as_tensor(array)
        out = _single_output(out)
        if dtype is None and out is not None:
            dtype = out.dtype
        positions = np.asarray(to_host(indices))
        np_dtype = None if dtype is None else _np_dtype(dtype)
        try:
            ax = normalize_axes(operator.index(axis), a.ndim)[0]
        except (TypeError, ValueError, IndexError):
            ax = None   # (NumPy's probe below raises NumPy's error)
        # NumPy's errors, dtype and index checks on zeros: the axis whole, the others cut to one element
        shape = None if ax is None else tuple(n if i == ax else min(n, 1) for i, n in enumerate(a.shape))
        probe = self._probe("reduceat", a, positions, axis=axis, dtype=np_dtype, shape=shape)
        d = dtypes.as_dtype(probe.dtype)
        if ax is None:
            raise TypeError(f"reduceat: axis must be one integer, not {axis!r}")
        x = moveaxis(_as(a, d), ax, -1)
        n = x.shape[-1]
        starts = [int(i) for i in positions.reshape(-1)]
        if not starts or x.size == 0:
            return self._result(_filled(x.shape[:-1] + (len(starts),), 0, d, a), out)
        pieces = []
        for k, start in enumerate(starts):
            stop = starts[k + 1] if k + 1 < len(starts) else n
            pieces.append(self._fold(_last(x, slice(start, stop)), d) if start < stop else _last(x, start))
        return self._result(moveaxis(stack(pieces, axis=-1), -1, ax), out)

    # ---- outer -----------------------------------------------------------------------------------
    def outer(self, A: Any, B: Any, /, **keywords: Any) -> Any:
        """The function of every pair: result[i..., j...] = f(A[i...], B[j...]), of shape
        A.shape + B.shape (NumPy's keywords as in a call)."""
        self._binary_only("outer")
        a, b = as_tensor(A), as_tensor(B)
        return self(reshape(a, a.shape + (1,) * b.ndim), b, **keywords)

    # ---- at --------------------------------------------------------------------------------------
    def at(self, a: Any, indices: Any, b: Any = None, /) -> None:
        """In place: a[indices] = f(a[indices], b) (f(a[indices]) for a unary function), unbuffered:
        an index given several times is applied that many times, in order, as NumPy's. `a` is a
        lazyarr array (a NumPy array is NumPy's at). The indices are read on the host."""
        if isinstance(a, np.ndarray):
            self._numpy.at(a, to_host(indices), *(() if b is None else (to_host(b),)))
            return
        if self.nout != 1:
            raise ValueError("ufunc.at does not support ufuncs with more than one output")
        if not isinstance(a, Array):
            raise TypeError(f"{self.__name__}.at: the first operand must be an array, not {type(a).__name__}")
        if self.nin == 2 and b is None:
            raise ValueError("second operand needed for ufunc")
        if self.nin == 1 and b is not None:
            raise ValueError("second operand provided when ufunc is unary")
        b = None if b is None else _operand(b)
        # NumPy's casting errors (b's dtype into a's), on one element of each
        sample = () if b is None else (b if not isinstance(b, Array) else np.zeros(1, b.dtype.np),)
        with np.errstate(all="ignore"):
            self._numpy.at(np.zeros(1, a.dtype.np), [0], *sample)
        bv = None if b is None else as_tensor(b, a.device) if isinstance(b, Array) else asarray(b, device=a.device)
        positions = selected_positions(a, indices, () if bv is None else bv.shape)   # (the key's checks, its errors)
        if bv is not None:
            bv = reshape(broadcast_to(bv, positions.shape), (positions.size,))
        flat_positions = np.asarray(positions.numpy()).reshape(-1)
        flat = reshape(a, (a.size,))
        if flat_positions.size == 0:
            return
        if self.__name__ in ("add", "subtract") and not a.dtype.is_bool:
            new = self._scatter(flat, flat_positions, bv)
        else:
            new = self._rounds(flat, flat_positions, bv)
        setitem(a, Ellipsis, reshape(new, a.shape))

    def _scatter(self, flat: Array, positions: np.ndarray, values: Array) -> Array:
        """flat with the values added (subtracted) at positions, repeated ones each time: one
        scatter-add, whose gradient gathers the adjoint back at the positions."""
        d = dtypes.as_dtype(self._numpy.resolve_dtypes((flat.dtype.np, values.dtype.np, None))[-1])
        p = asarray(positions.astype(np.int64), device=flat.device).uop
        v = _as(values, d).uop
        added = with_gradient(scatter_add(v, [p], flat.shape), [v], _GatherBack(p))
        return _as(self._function(_as(flat, d), wrap(added, flat.device)), flat.dtype)

    def _rounds(self, flat: Array, positions: np.ndarray, values: Array | None) -> Array:
        """flat with f applied at positions in order: round k applies the k-th occurrence of every
        position (the positions of one round are distinct, so it is one gather and one write)."""
        order = np.argsort(positions, kind="stable")
        ranked = positions[order]
        starts = np.r_[0, np.flatnonzero(np.diff(ranked)) + 1]
        occurrence = np.empty(len(positions), np.int64)
        occurrence[order] = np.arange(len(positions)) - np.repeat(starts, np.diff(np.r_[starts, len(positions)]))
        work = wrap(flat.uop, flat.device)
        for k in range(int(occurrence.max()) + 1):
            chosen = np.flatnonzero(occurrence == k)
            where_ = positions[chosen]
            current = take(work, where_)
            new = self._function(current) if values is None else self._function(current, take(values, chosen))
            setitem(work, where_, _as(new, flat.dtype))
        return work


def _fast_call(function: Callable[..., Any], general: Callable[..., Any], nin: int, name: str) -> Callable[..., Any]:
    """A ufunc's `__call__`: `function` of exactly `nin` positional arguments, `general` (inputs,
    keywords) for anything else (NumPy's keywords, outputs given by position)."""
    if nin == 1:
        def call(x: Any, /, *more: Any, **keywords: Any) -> Any:
            if more or keywords:
                return general((x, *more), **keywords)
            return function(x)
    else:
        def call(x1: Any, x2: Any, /, *more: Any, **keywords: Any) -> Any:
            if more or keywords:
                return general((x1, x2, *more), **keywords)
            return function(x1, x2)
    call.__name__ = call.__qualname__ = name   # (the name Python's errors give: "add() missing ...")
    return call


class _GatherBack:
    """The gradient of a scatter-add's values: the adjoint gathered at their positions."""

    def __init__(self, positions: Any) -> None:
        self.positions = positions

    def __call__(self, marker: Any, i: int, g: Any) -> Any:
        return gather_uop(g, [self.positions])


def _check_casting(casting: str) -> None:
    if casting not in _CASTINGS:
        raise ValueError(f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe' (got {casting!r})")


def _mask(where: Any) -> Array | None:
    """NumPy's `where=` as a boolean array (None for True); TypeError for a non-boolean one."""
    if where is True:
        return None
    m = as_tensor(where)
    if not m.dtype.is_bool:
        raise TypeError(f"Cannot cast array data from {m.dtype.np!r} to dtype('bool') according to the rule 'safe'")
    return m


def _single_output(out: Any) -> Any:
    """A method's `out` (one array, or a tuple of one, as NumPy's protocol passes it)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"The 'out' tuple must have exactly one entry, got {len(out)}")
        out = out[0]
    if out is not None and not isinstance(out, (Array, np.ndarray)):
        raise TypeError(f"output must be an array, not {type(out).__name__}")
    return out


def _identity(identity: Any, d: DType) -> Any:
    """The identity as a value of dtype d (bitwise_and's -1: all bits set, also unsigned)."""
    return np.array(identity).astype(d.np).item()


def _filled(shape: tuple[int, ...], value: Any, d: DType, like: Array) -> Array:
    return full(shape, value, dtype=d, device=like.device)


# ---- the instances: every elementwise function NumPy has as a ufunc (aliases share one) --------------

def _ufunc_names() -> list[tuple[str, Callable[..., Any]]]:
    found = []
    for module in (ew, numpy_elementwise):
        for name in module.__all__:
            fn = getattr(module, name)
            numpy_fn = getattr(np, getattr(fn, "__name__", ""), None)
            if isinstance(numpy_fn, np.ufunc) and numpy_fn.signature is None and \
                    isinstance(getattr(np, name, None), np.ufunc):
                found.append((name, fn))
    return found


_made: dict[Callable[..., Any], ufunc] = {}
for _name, _fn in _ufunc_names():
    globals()[_name] = _made.setdefault(_fn, ufunc(_fn))   # noqa: PLW0603  (names made from the table)
UFUNC_NAMES = tuple(name for name, _ in _ufunc_names())

__all__ = ["ufunc", *UFUNC_NAMES]
