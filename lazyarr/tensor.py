"""The lazy Tensor: the class users hold.

A Tensor is an `Array` (its graph node and device, `lazyarr.arrays`) with Python's operators,
conversions and printing, NumPy's methods and the array protocols (`__array__`,
`__array_ufunc__`, `__array_function__`, `__array_namespace__`, `__dlpack__`) declared on it,
each a call into the namespace modules. This module sits above them all: they take and return
arrays, and every array they make is a Tensor (`Array.made`).
"""
from __future__ import annotations

import math
import operator
import sys
from typing import Any, Iterator

import numpy as np

from lazyarr import (autograd, conversion, data_types, dtypes, elementwise as ew, gathering, linear_algebra,
                     manipulation as mp, numpy_io, searching, sorting, statistics as st, views)
from lazyarr import numpy_fallback
from lazyarr.numpy_fallback import to_host
from lazyarr.arrays import Array, check_writable, grad_mode, hold, layout_strides, make_view, wrap
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.creation import as_tensor, asarray
from lazyarr.graph import broadcast_shapes, cast_uop, const, expand_uop, make_complex
from lazyarr.runtime.devices import get_device

SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


def _unpickled_device(name: str):
    """The device a tensor pickled on device `name` comes back on. The CPU's stays on the CPU. Another
    device's goes to this process's default device when that is not the CPU (device numbers are a
    machine's own, and a dask worker's chunks must share its device to be combined), else to `name`
    where this process can open it, else to the CPU (a worker without OpenCL)."""
    if name == "cpu":
        return get_device("cpu")
    for candidate in (None, name):   # (None: the default device)
        try:
            dev = get_device(candidate)
        except (RuntimeError, ValueError):   # (no OpenCL platform here, or no such device)
            continue
        if dev.name != "cpu":
            return dev
    return get_device("cpu")


def _binary(fn, reflected: bool = False):
    """A binary operator: fn(self, other), or fn(other, self) for the reflected one (__radd__);
    NotImplemented for operands lazyarr does not take, so that Python asks the other one."""
    def op(self: Tensor, other: Any) -> Tensor:
        try:
            return fn(other, self) if reflected else fn(self, other)
        except TypeError:
            if not isinstance(other, (Array, bool, int, float, complex)) and not hasattr(other, "__array__"):
                return NotImplemented
            raise
    return op


def _fast(op: Ops, fn):
    """The operator and its reflected form, the commonest operands recorded directly (`ew.fast_operator`)."""
    return ew.fast_operator(op, _binary(fn)), ew.fast_operator(op, _binary(fn, True), reflected=True)


def _inplace(fn):
    """An in-place operator (__iadd__): self rebound to fn(self, other), in self's shape and dtype."""
    def op(self: Tensor, other: Any) -> Tensor:
        check_writable(self, "output array")
        out = fn(self, other)
        if out.shape != self.shape:
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} doesn't match the "
                             f"broadcast shape {out.shape}")
        if out.dtype is not self.dtype:
            if "biufc".index(out.dtype.kind if out.dtype.kind != "u" else "i") > \
                    "biufc".index(self.dtype.kind if self.dtype.kind != "u" else "i"):
                raise TypeError(f"cannot cast the result of an in-place operation from {out.dtype} to {self.dtype}")
            out = out.astype(self.dtype)
        self.rebind(out.uop)
        return self
    return op


def _equality(comparison: Ops, fn, value: bool):
    """== and != as NumPy's: against None or a string (which no element equals) the answer is
    elementwise, False everywhere for == and True for !=, of the array's shape, dtype bool."""
    compare = ew.fast_recorded(comparison, _binary(fn), result=dtypes.bool_)

    def op(self: Tensor, other: Any) -> Tensor:
        if other is None or isinstance(other, (str, bytes)):
            return wrap(const(value, dtypes.bool_, self.shape), self.device)
        return compare(self, other)
    return op


def _no_out(out: Any) -> None:
    if out is not None:
        raise TypeError("the out= argument is not supported: lazyarr arrays are values")


def _reduction(fn, has_dtype: bool = False, identity: Any = 0):
    def method(self: Tensor, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
               initial: Any = _NO_VALUE, where: Any = True) -> Tensor:
        _no_out(out)
        if dtype is not None and not has_dtype:
            raise TypeError(f"{fn.__name__}() got an unexpected keyword argument 'dtype'")
        r = fn(_masked(self, where, identity), axis=axis, keepdims=keepdims, **({"dtype": dtype} if has_dtype else {}))
        if initial is _NO_VALUE:
            return r
        return ew.multiply(r, initial) if fn is st.prod else ew.add(r, initial)
    method.__name__ = fn.__name__
    return method


_NO_VALUE = object()


def _masked(self: Tensor, where: Any, fill: Any) -> Tensor:
    """NumPy's where= of a reduction: the elements where it is false replaced by the reduction's
    identity (or its `initial`)."""
    if where is True:
        return self
    return ew.where(as_tensor(where, self.device), self, fill)


def _max_min(fn, identity: Any = None):
    """A reduction method with NumPy's keywords: `initial` (a value the reduction also covers) and
    `where` (which elements count) for max and min."""
    def method(self: Tensor, axis: Any = None, out: None = None, keepdims: bool = False, initial: Any = _NO_VALUE,
               where: Any = True) -> Tensor:
        _no_out(out)
        if identity is None:   # all, any
            return fn(_masked(self, where, fn is st.all), axis=axis, keepdims=keepdims)
        return fn(self, axis=axis, keepdims=keepdims, initial=st.NO_VALUE if initial is _NO_VALUE else initial,
                  where=where)
    method.__name__ = fn.__name__
    return method


def _arg_extreme(fn):
    def method(self: Tensor, axis: Any = None, out: None = None, *, keepdims: bool = False) -> Tensor:
        _no_out(out)
        return fn(self, axis=axis, keepdims=keepdims)
    method.__name__ = fn.__name__
    return method


def _var_std(fn):
    def method(self: Tensor, axis: Any = None, dtype: Any = None, out: None = None, ddof: float = 0,
               keepdims: bool = False, *, correction: float | None = None) -> Tensor:
        _no_out(out)
        x = self if dtype is None else self.astype(dtype)
        return fn(x, axis=axis, correction=ddof if correction is None else correction, keepdims=keepdims)
    method.__name__ = fn.__name__
    return method


def _cumulative(fn):
    def method(self: Tensor, axis: Any = None, dtype: Any = None, out: None = None) -> Tensor:
        _no_out(out)
        return fn(self, axis=axis, dtype=dtype)
    method.__name__ = fn.__name__
    return method


def _mean(x: Tensor, axis: Any, keepdims: bool, dtype: Any = None) -> Tensor:
    return st.mean(x if dtype is None else x.astype(dtype), axis=axis, keepdims=keepdims)


_UFUNC_NAMES = {"absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2",
                "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "power": "pow", "true_divide": "divide",
                "invert": "bitwise_invert", "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift",
                "conjugate": "conj", "mod": "remainder"}


def _package() -> Any:
    """The lazyarr namespace, for the protocols that name its functions or return it (it imports
    this module, so it is read from the imported modules rather than imported here)."""
    return sys.modules[__name__.rpartition(".")[0]]


def _native(lazyarr: Any, name: str) -> Any:
    """The package's own function `name`, or None: NumPy's protocols compute a function lazyarr
    lacks with NumPy itself, returning NumPy's result, without the namespace's fallback (which
    would warn and make its result lazyarr's)."""
    fn = getattr(lazyarr, name, None)
    return None if numpy_fallback.is_fallback(fn) else fn


class Tensor(Array):
    """An n-dimensional array whose value is computed lazily by fused, compiled kernels."""
    __slots__ = ()

    def __init__(self, data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False):
        t = asarray(data, dtype=dtype, device=device)
        self._uop, self.device, self._leaf_grad, self.grad, self._released = t.uop, t.device, False, None, False
        self._viewof = self._views = None
        hold(self)
        if requires_grad:
            self.requires_grad_()

    # ---- operators ---------------------------------------------------------------------------
    __add__, __radd__ = _fast(Ops.ADD, ew.add)
    __sub__, __rsub__ = _fast(Ops.SUB, ew.subtract)
    __mul__, __rmul__ = _fast(Ops.MUL, ew.multiply)
    __truediv__, __rtruediv__ = _fast(Ops.FDIV, ew.divide)
    __iadd__, __isub__ = _inplace(ew.fast_operator(Ops.ADD, ew.add)), _inplace(ew.fast_operator(Ops.SUB, ew.subtract))
    __imul__ = _inplace(ew.fast_operator(Ops.MUL, ew.multiply))
    __itruediv__ = _inplace(ew.fast_operator(Ops.FDIV, ew.divide))
    __floordiv__, __rfloordiv__, __ifloordiv__ = (_binary(ew.floor_divide), _binary(ew.floor_divide, True),
                                                  _inplace(ew.floor_divide))
    __mod__, __rmod__, __imod__ = _binary(ew.remainder), _binary(ew.remainder, True), _inplace(ew.remainder)
    # (integer arrays take the Python path, which refuses negative integer powers)
    __pow__ = ew.fast_recorded(Ops.POW, _binary(ew.pow), ints=False)
    __rpow__ = ew.fast_recorded(Ops.POW, _binary(ew.pow, True), reflected=True, ints=False)
    __ipow__ = _inplace(ew.pow)
    __matmul__, __rmatmul__, __imatmul__ = _binary(linear_algebra.matmul), _binary(linear_algebra.matmul, True), _inplace(linear_algebra.matmul)
    __and__, __rand__, __iand__ = _binary(ew.bitwise_and), _binary(ew.bitwise_and, True), _inplace(ew.bitwise_and)
    __or__, __ror__, __ior__ = _binary(ew.bitwise_or), _binary(ew.bitwise_or, True), _inplace(ew.bitwise_or)
    __xor__, __rxor__, __ixor__ = _binary(ew.bitwise_xor), _binary(ew.bitwise_xor, True), _inplace(ew.bitwise_xor)
    __lshift__, __rlshift__, __ilshift__ = (_binary(ew.bitwise_left_shift), _binary(ew.bitwise_left_shift, True),
                                            _inplace(ew.bitwise_left_shift))
    __rshift__, __rrshift__, __irshift__ = (_binary(ew.bitwise_right_shift), _binary(ew.bitwise_right_shift, True),
                                            _inplace(ew.bitwise_right_shift))
    __lt__ = ew.fast_recorded(Ops.CMPLT, _binary(ew.less), result=dtypes.bool_)
    __le__ = ew.fast_recorded(Ops.CMPLE, _binary(ew.less_equal), result=dtypes.bool_)
    __gt__ = ew.fast_recorded(Ops.CMPLT, _binary(ew.greater), reflected=True, result=dtypes.bool_)
    __ge__ = ew.fast_recorded(Ops.CMPLE, _binary(ew.greater_equal), reflected=True, result=dtypes.bool_)
    __eq__, __ne__ = _equality(Ops.CMPEQ, ew.equal, False), _equality(Ops.CMPNE, ew.not_equal, True)
    __hash__ = Array.__hash__

    def __neg__(self) -> Tensor:
        return ew.negative(self)

    def __pos__(self) -> Tensor:
        return ew.positive(self)

    def __abs__(self) -> Tensor:
        return ew.abs(self)

    def __invert__(self) -> Tensor:
        return ew.bitwise_invert(self)

    def __divmod__(self, other: Any) -> tuple[Tensor, Tensor]:
        return ew.floor_divide(self, other), ew.remainder(self, other)

    def __rdivmod__(self, other: Any) -> tuple[Tensor, Tensor]:
        return ew.floor_divide(other, self), ew.remainder(other, self)

    def rebind(self, value: UOp) -> None:
        """Give this tensor the value `value`: a view writes through its root (`lazyarr.views`)."""
        if self._viewof is not None:
            views.write(self, value)
        else:
            Array.rebind(self, value)

    def __getitem__(self, key: Any) -> Tensor:
        return gathering.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        gathering.setitem(self, key, value)

    # ---- conversions: one element is read without a kernel where it can be (lazyarr.conversion) ----
    _scalar = conversion.scalar

    def item(self, *args: Any) -> Any:
        """The one element as a Python scalar; NumPy's item(i) (a flat index) and item(i, j, ...)."""
        if args:
            index = args[0] if len(args) == 1 else args
            if isinstance(index, tuple):
                return self[index].item()
            flat = operator.index(index)
            if not -self.size <= flat < self.size:
                raise IndexError(f"index {flat} is out of bounds for size {self.size}")
            return mp.reshape(self, (self.size,))[flat].item()
        if self.size != 1:
            raise ValueError(f"can only convert an array of size 1 to a Python scalar, not of size {self.size}")
        return conversion.element(self)

    def __contains__(self, value: Any) -> bool:
        return bool(st.any(ew.equal(self, value)))

    def __round__(self, ndigits: int | None = None) -> Any:
        """round(t): of one element as Python rounds a number (an int without ndigits); of more,
        elementwise (NumPy's arrays refuse round(); its scalars do this)."""
        if ndigits is not None:
            ndigits = operator.index(ndigits)
            if abs(ndigits) >= 2 ** 63:
                raise OverflowError(f"round(): ndigits {ndigits} does not fit a C long")
        if self.ndim == 0:
            v = self.item()
            if isinstance(v, int) and ndigits is not None and ndigits < -20:
                return 0   # every int64 rounds to 0 (Python would compute 10**-ndigits)
            return round(v, ndigits)
        return ew.round(self, ndigits or 0)

    def tobytes(self, order: str = "C") -> bytes:
        return self.numpy().tobytes(order)

    def tofile(self, fid: Any, sep: str = "", format: str = "%s") -> None:
        """The values written to a file as raw bytes (C order), or as text separated by sep."""
        numpy_io.tofile(self, fid, sep, format)

    @property
    def strides(self) -> tuple[int, ...]:
        """NumPy's strides: the bytes between neighbours along each axis in its root's memory (a
        view's as NumPy's view's; an array that is no view is C-contiguous)."""
        return layout_strides(self)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        arr = self.numpy()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        if copy:
            arr = arr.copy()
        return arr

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def __int__(self) -> int:
        v = self._scalar("int")
        if isinstance(v, float) and not math.isfinite(v):
            raise (OverflowError if math.isinf(v) else ValueError)(f"cannot convert float {v} to integer")
        return int(v.real if isinstance(v, complex) else v)

    def __float__(self) -> float:
        v = self._scalar("float")
        return float(v.real if isinstance(v, complex) else v)

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if not (self.dtype.is_int or self.dtype.is_bool) or self.dtype.is_bool:
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        if self.ndim != 0:
            raise TypeError("only 0-dimensional integer arrays can be converted to an index")
        return int(self._scalar("int"))

    def __repr__(self) -> str:
        """NumPy's repr of the values, so that doctests and logs read the same: `array([...])`,
        its indentation and `dtype=` where NumPy shows it; a 0-d array as NumPy's scalar (what
        NumPy's reductions and indexing return: `np.float64(3.5)`). A device other than the CPU
        is named after the values."""
        arr = self.numpy()
        text = repr(arr[()]) if arr.ndim == 0 else np.array_repr(arr)
        if self.device.name == "cpu":
            return text
        on = f"device='{self.device.name}'"
        return f"{text[:-1]}, {on})" if text.endswith(")") else f"{text} ({on})"   # (np.True_ has no parentheses)

    def __str__(self) -> str:
        return str(self.numpy())

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.item(), spec)
        return format(str(self), spec)

    def __iter__(self) -> Iterator[Tensor]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __getstate__(self):
        # the computed value (an unrealized tensor is realized first: its graph would need the
        # values it reads too, and the receiver would compile it again) and the device's name
        return {"data": self.numpy(), "device": self.device.name}

    def __setstate__(self, state):
        if not isinstance(state, dict) or "data" not in state or not isinstance(state.get("device"), str):
            raise TypeError("not the state of a pickled lazyarr tensor")
        t = asarray(np.asarray(state["data"]), device=_unpickled_device(state["device"]))   # (asarray copies)
        self._uop, self.device, self._leaf_grad, self.grad, self._released = t.uop, t.device, False, None, False
        self._viewof = self._views = None
        hold(self)

    # ---- NumPy's methods -----------------------------------------------------------------------
    def _bitcast_view(self, dtype: Any = None) -> Tensor:
        """NumPy's view: the same bytes read as `dtype` (a different item size changes the length of
        the last axis)."""
        if dtype is None:
            return make_view(wrap(self.uop, self.device), self)
        d = dtypes.as_dtype(dtype)
        if d.itemsize != self.dtype.itemsize:
            if self.ndim == 0:
                raise ValueError("changing the dtype of a 0-d array is only supported if the itemsize is unchanged")
            if (self.shape[-1] * self.dtype.itemsize) % d.itemsize:
                raise ValueError(f"cannot view the last axis of {self.shape[-1]} {self.dtype} elements as {d}: its size "
                                 f"in bytes is not a multiple of {d.itemsize}")
        return make_view(wrap(self.uop if d is self.dtype else UOp(Ops.BITCAST, d, (self.uop,)), self.device), self)

    def view(self, dtype: Any = None) -> Tensor:
        """NumPy's view: the same bytes read as `dtype`. A complex array read as another complex
        dtype goes through its parts' real dtype (the compiler's complex lowering reinterprets
        complex bytes as real ones, not as another complex type)."""
        if dtype is not None and self.dtype.is_complex:
            d = dtypes.as_dtype(dtype)
            if d.is_complex and d is not self.dtype and self.ndim and (self.shape[-1] * self.itemsize) % d.itemsize == 0:
                return self._bitcast_view(dtypes.component(self.dtype))._bitcast_view(d)
        return self._bitcast_view(dtype)

    def assign(self, value: Any) -> Tensor:
        """Give self the value `value` (broadcast to self's shape, converted to its dtype), in place:
        when nothing can read self's old value anymore, the kernel computing the new one writes into
        its storage. Raises ValueError for a destination that is a broadcast (several of its elements
        are one cell: `broadcast_to`'s results), and for a value that does not broadcast to self's shape."""
        check_writable(self)
        v = as_tensor(value, self.device)
        if v.device is not self.device:
            raise ValueError(f"assign: the value is on {v.device.name}, the array on {self.device.name}")
        if broadcast_shapes(v.shape, self.shape) != self.shape:
            raise ValueError(f"assign: a value of shape {v.shape} does not broadcast to {self.shape}")
        if self._leaf_grad and not grad_mode.disabled:
            raise RuntimeError("a leaf tensor that requires grad is being assigned to; do it under no_grad()")
        self.rebind(expand_uop(cast_uop(v.uop, self.dtype), self.shape))
        return self

    def astype(self, dtype: Any, copy: bool = True, device: Any = None) -> Tensor:
        return data_types.astype(self, dtype, copy=copy, device=device)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Tensor:
        dev = get_device(device)
        if dev is self.device:
            return self
        return wrap(UOp(Ops.COPY, self.dtype, (self.uop,), dev), dev)

    def reshape(self, *shape: Any, copy: bool | None = None) -> Tensor:
        return mp.reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)

    def transpose(self, *axes: Any) -> Tensor:
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            axes = axes[0]
        return mp.transpose(self, axes or None)

    def permute(self, *axes: Any) -> Tensor:
        return mp.permute_dims(self, axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes)

    def flatten(self) -> Tensor:
        """A copy, one-dimensional (NumPy's flatten)."""
        return mp.reshape(self, (-1,), copy=True)

    def ravel(self) -> Tensor:
        """One-dimensional: a view where the elements allow one, else a copy (NumPy's ravel)."""
        return mp.ravel(self)

    def squeeze(self, axis: Any = None) -> Tensor:
        return mp.squeeze(self, axis)

    def flip(self, axis: Any = None) -> Tensor:
        return mp.flip(self, axis=axis)

    sum = _reduction(st.sum, has_dtype=True)
    prod = _reduction(st.prod, has_dtype=True, identity=1)
    mean = _reduction(_mean, has_dtype=True)
    max, min = _max_min(st.max, -math.inf), _max_min(st.min, math.inf)
    all, any = _max_min(st.all), _max_min(st.any)
    argmax, argmin = _arg_extreme(searching.argmax), _arg_extreme(searching.argmin)
    cumsum, cumprod = _cumulative(st.cumsum), _cumulative(st.cumprod)
    var, std = _var_std(st.var), _var_std(st.std)

    def sort(self, axis: int = -1, kind: str | None = None, order: Any = None) -> None:
        """NumPy's in-place sort (lazy: the array's value becomes its sorted self)."""
        if axis is None:
            raise TypeError("sort: axis must be an integer for an in-place sort (xp.sort(x, axis=None) "
                            "sorts the flattened array)")
        check_writable(self, "sort")
        self.rebind(sorting.sort(self, axis, kind, order).uop)

    def argsort(self, axis: int | None = -1, kind: str | None = None, order: Any = None) -> Tensor:
        return sorting.argsort(self, axis, kind, order)

    def nonzero(self) -> tuple[Tensor, ...]:
        return searching.nonzero(self)

    # ---- NumPy's methods, each a call of the namespace's function --------------------------------
    def fill(self, value: Any) -> None:
        """Every element set to value, in place."""
        self[...] = value

    def zero_(self) -> Tensor:
        """Every element set to 0, in place (PyTorch's spelling: `p.grad.zero_()`)."""
        self[...] = 0
        return self

    def repeat(self, repeats: Any, axis: int | None = None) -> Tensor:
        return mp.repeat(self, repeats, axis=axis)

    def take(self, indices: Any, axis: int | None = None) -> Tensor:
        if axis is None and self.ndim != 1:
            return gathering.take(mp.reshape(self, (self.size,)), indices)
        return gathering.take(self, indices, axis=axis)

    def swapaxes(self, axis1: int, axis2: int) -> Tensor:
        return mp.swapaxes(self, axis1, axis2)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
        from lazyarr.numpy_functions import diagonal
        return diagonal(self, offset, axis1, axis2)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: None = None) -> Tensor:
        _no_out(out)
        return st.sum(self.diagonal(offset, axis1, axis2), axis=-1, dtype=dtype)

    def ptp(self, axis: Any = None, out: None = None, keepdims: bool = False) -> Tensor:
        _no_out(out)
        return ew.subtract(st.max(self, axis=axis, keepdims=keepdims), st.min(self, axis=axis, keepdims=keepdims))


    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Tensor:
        return searching.searchsorted(self, v, side=side, sorter=sorter)

    def clip(self, min: Any = None, max: Any = None) -> Tensor:
        return ew.clip(self, min, max)

    def round(self, decimals: int = 0) -> Tensor:
        return ew.round(self, decimals)

    def conj(self) -> Tensor:
        return ew.conj(self)

    def dot(self, other: Any) -> Tensor:
        if self.ndim >= 1 and getattr(other, "ndim", 1) >= 1:
            return linear_algebra.matmul(self, other)
        return ew.multiply(self, other)

    def copy(self) -> Tensor:
        return wrap(self.uop, self.device)

    def to_dot(self, path: str | None = None, kernels: bool = True) -> str:
        """Graphviz DOT of this tensor's graph and its kernels (`lazyarr.debug.graph`)."""
        from lazyarr.debug import graph
        return graph(self, path, kernels)

    def contiguous(self) -> Tensor:
        """A tensor whose value is materialised in its own buffer when realized (a fusion boundary)."""
        return wrap(UOp(Ops.CONTIGUOUS, self.dtype, (self.uop,)), self.device)

    def detach(self) -> Tensor:
        """The same value, cut off from the gradient graph."""
        return wrap(UOp(Ops.DETACH, self.dtype, (self.uop,)), self.device)

    def backward(self, gradient: Any = None) -> None:
        """Accumulate d(self)/d(leaf) into `.grad` of every leaf tensor that requires gradients
        (`lazyarr.autograd.backward`)."""
        autograd.backward(self, gradient)

    @property
    def T(self) -> Tensor:
        return mp.transpose(self)

    @property
    def mT(self) -> Tensor:
        return mp.matrix_transpose(self)

    @property
    def real(self) -> Tensor:
        return ew.real(self)

    @real.setter
    def real(self, value: Any) -> None:
        """NumPy's `x.real = v`: writes the real part in place (all of a real array), v broadcast."""
        self._set_part(value, imaginary=False)

    @property
    def imag(self) -> Tensor:
        return ew.imag(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        """NumPy's `x.imag = v`: writes the imaginary part in place; a real array has none (TypeError)."""
        self._set_part(value, imaginary=True)

    def _set_part(self, value: Any, imaginary: bool) -> None:
        """A write of one part through `self[...] = ...` (so views write through to their base and
        the checks of writes apply): the other part kept, `value` cast to the parts' dtype."""
        if not self.dtype.is_complex:
            if imaginary:
                raise TypeError("array does not have imaginary part to set")
            self[...] = value
            return
        part = ew.real(as_tensor(value, self.device)).astype(dtypes.component(self.dtype))
        part = mp.broadcast_to(part, self.shape)
        kept = ew.real(self) if imaginary else ew.imag(self)
        re, im = (kept, part) if imaginary else (part, kept)
        self[...] = wrap(make_complex(re.uop, im.uop), self.device)

    # ---- the array protocols -------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NumPy ufuncs on Tensors stay lazy where lazyarr has the ufunc: every method (np.exp(t),
        np.add.reduce(t), np.maximum.accumulate(t), np.add.at(t, i, 1), np.multiply.outer(t, u),
        with out=, where=, dtype=...) is lazyarr's ufunc object's (`lazyarr.ufuncs`). Other ufuncs
        (and keywords for matmul and vecdot, plain functions here) compute on the host and return
        NumPy arrays."""
        lazyarr = _package()
        ours = _native(lazyarr, _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__))
        if isinstance(ours, lazyarr.ufunc):
            return ours(*inputs, **kwargs) if method == "__call__" else getattr(ours, method)(*inputs, **kwargs)
        if ours is not None and method == "__call__" and not kwargs:
            return ours(*inputs)
        kwargs = {k: to_host(v) for k, v in kwargs.items()}
        return getattr(ufunc, method)(*(to_host(x) for x in inputs), **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """NumPy functions on Tensors (np.sum(t), np.concatenate([...])) call lazyarr's function of the
        same name where its signature fits, otherwise NumPy's on host copies."""
        lazyarr = _package()
        fn = _native(lazyarr, _UFUNC_NAMES.get(func.__name__, func.__name__))
        if fn is not None and callable(fn) and not isinstance(fn, type):
            try:
                return fn(*args, **kwargs)
            except TypeError:
                pass
        return func(*(to_host(a) for a in args), **{k: to_host(v) for k, v in kwargs.items()})

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
            raise ValueError(f"unsupported array API version {api_version!r}; lazyarr implements "
                             f"{', '.join(SUPPORTED_API_VERSIONS)}")
        lazyarr = _package()
        return lazyarr

    def __dlpack__(self, /, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: bool | None = None) -> Any:
        """A DLPack capsule of the realized value (host memory: NumPy writes the capsule). `dl_device`
        must be the CPU's (1, 0); `copy=True` exports a copy, False or None the buffer itself."""
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"__dlpack__: lazyarr exports {self.device.name} arrays to the CPU (1, 0), not "
                              f"{dl_device}")
        buf = self._buffer()
        self.device.synchronize()
        arr = buf.numpy().reshape(self.shape)
        if copy:
            arr = arr.copy()
        kwargs = {} if max_version is None else {"max_version": max_version}
        return arr.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self, /) -> tuple[int, int]:
        return (1, 0)  # kDLCPU, device 0
