"""Tensor's operators and NumPy-style methods, each a call into the namespace functions."""
from __future__ import annotations

from typing import Any

from lazyarr import (conversion, data_types, dtypes, elementwise as ew, indexing, linalg, manipulation as mp,
                     searching, statistics as st)
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.graph import const
from lazyarr.runtime.devices import get_device
from lazyarr.tensor import Tensor, check_writable, wrap

SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


def _binary_operator(fn, reflected: bool = False):
    def op(self: Tensor, other: Any) -> Tensor:
        try:
            return fn(other, self) if reflected else fn(self, other)
        except TypeError:
            if not isinstance(other, (Tensor, bool, int, float, complex)) and not hasattr(other, "__array__"):
                return NotImplemented
            raise
    return op


def _inplace_operator(fn):
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


_OPERATORS = {
    "add": ew.add, "sub": ew.subtract, "mul": ew.multiply, "truediv": ew.divide, "floordiv": ew.floor_divide,
    "mod": ew.remainder, "pow": ew.pow, "matmul": linalg.matmul, "and": ew.bitwise_and, "or": ew.bitwise_or,
    "xor": ew.bitwise_xor, "lshift": ew.bitwise_left_shift, "rshift": ew.bitwise_right_shift,
}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, f"__{_name}__", _binary_operator(_fn))
    setattr(Tensor, f"__r{_name}__", _binary_operator(_fn, reflected=True))
    setattr(Tensor, f"__i{_name}__", _inplace_operator(_fn))

for _name, _fn in {"lt": ew.less, "le": ew.less_equal, "gt": ew.greater, "ge": ew.greater_equal,
                   "eq": ew.equal, "ne": ew.not_equal}.items():
    setattr(Tensor, f"__{_name}__", _binary_operator(_fn))


def _equality_operator(fn, value: bool):
    """== and != as NumPy's: against None or a string (which no element equals) the answer is
    elementwise, False everywhere for == and True for !=, of the array's shape, dtype bool."""
    compare = _binary_operator(fn)

    def op(self: Tensor, other: Any) -> Tensor:
        if other is None or isinstance(other, (str, bytes)):
            return wrap(const(value, dtypes.bool_, self.shape), self.device)
        return compare(self, other)
    return op


Tensor.__eq__ = _equality_operator(ew.equal, False)
Tensor.__ne__ = _equality_operator(ew.not_equal, True)

_bitcast_view = Tensor.view


def _view(self: Tensor, dtype: Any = None) -> Tensor:
    """NumPy's view: the same bytes read as `dtype`. A complex array read as another complex
    dtype goes through its parts' real dtype (the compiler's complex lowering reinterprets
    complex bytes as real ones, not as another complex type)."""
    if dtype is not None and self.dtype.is_complex:
        d = dtypes.as_dtype(dtype)
        if d.is_complex and d is not self.dtype and self.ndim and (self.shape[-1] * self.itemsize) % d.itemsize == 0:
            return _bitcast_view(_bitcast_view(self, dtypes.component(self.dtype)), d)
    return _bitcast_view(self, dtype)


Tensor.view = _view

Tensor.__neg__ = lambda self: ew.negative(self)
Tensor.__pos__ = lambda self: ew.positive(self)
Tensor.__abs__ = lambda self: ew.abs(self)
Tensor.__invert__ = lambda self: ew.bitwise_invert(self)
Tensor.__getitem__ = lambda self, key: indexing.getitem(self, key)
Tensor.__setitem__ = lambda self, key, value: indexing.setitem(self, key, value)
Tensor.__divmod__ = lambda self, other: (ew.floor_divide(self, other), ew.remainder(self, other))
Tensor.__rdivmod__ = lambda self, other: (ew.floor_divide(other, self), ew.remainder(other, self))


_UFUNC_NAMES = {"absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2",
                "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "power": "pow", "true_divide": "divide",
                "invert": "bitwise_invert", "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift",
                "rint": "round", "conjugate": "conj", "mod": "remainder"}
_UFUNC_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                     "logical_and": "all", "logical_or": "any"}


def _host(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_host(v) for v in x)
    return x


def _array_ufunc(self: Tensor, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """NumPy ufuncs on Tensors stay lazy when lazyarr has the function (np.exp(t) is xp.exp(t));
    other ufuncs and `out=` compute on the host and return NumPy arrays."""
    import lazyarr
    name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
    if "out" not in kwargs:
        if method == "__call__" and not kwargs and hasattr(lazyarr, name):
            return getattr(lazyarr, name)(*inputs)
        if method == "reduce" and ufunc.__name__ in _UFUNC_REDUCTIONS and len(inputs) == 1 and \
                set(kwargs) <= {"axis", "keepdims"}:
            return getattr(lazyarr, _UFUNC_REDUCTIONS[ufunc.__name__])(inputs[0], axis=kwargs.get("axis", 0),
                                                                       keepdims=kwargs.get("keepdims", False))
    kwargs = {k: _host(v) for k, v in kwargs.items()}
    return getattr(ufunc, method)(*(_host(x) for x in inputs), **kwargs)


def _array_function(self: Tensor, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    """NumPy functions on Tensors (np.sum(t), np.concatenate([...])) call lazyarr's function of the
    same name where its signature fits, otherwise NumPy's on host copies."""
    import lazyarr
    fn = getattr(lazyarr, _UFUNC_NAMES.get(func.__name__, func.__name__), None)
    if fn is not None and callable(fn) and not isinstance(fn, type):
        try:
            return fn(*args, **kwargs)
        except TypeError:
            pass
    return func(*(_host(a) for a in args), **{k: _host(v) for k, v in kwargs.items()})


def _array_namespace(self: Tensor, /, *, api_version: str | None = None):
    if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
        raise ValueError(f"unsupported array API version {api_version!r}; lazyarr implements "
                         f"{', '.join(SUPPORTED_API_VERSIONS)}")
    import lazyarr
    return lazyarr


def _to_device(self: Tensor, device: Any, /, *, stream: Any = None) -> Tensor:
    dev = get_device(device)
    if dev is self.device:
        return self
    return wrap(UOp(Ops.COPY, self.dtype, (self.uop,), dev), dev)


def _dlpack(self: Tensor, /, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
            copy: bool | None = None):
    """A DLPack capsule of the realized value (host memory: NumPy writes the capsule). `dl_device`
    must be the CPU's (1, 0); `copy=True` exports a copy, False or None the buffer itself."""
    if dl_device is not None and tuple(dl_device) != _dlpack_device(self):
        raise BufferError(f"__dlpack__: lazyarr exports {self.device.name} arrays to the CPU (1, 0), not {dl_device}")
    buf = self._buffer()
    self.device.synchronize()
    arr = buf.numpy().reshape(self.shape)
    if copy:
        arr = arr.copy()
    kwargs = {} if max_version is None else {"max_version": max_version}
    return arr.__dlpack__(stream=stream, **kwargs)


def _dlpack_device(self: Tensor, /) -> tuple[int, int]:
    return (1, 0)  # kDLCPU, device 0


def _reshape(self: Tensor, *shape: Any, copy: bool | None = None) -> Tensor:
    return mp.reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)


def _transpose(self: Tensor, *axes: Any) -> Tensor:
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
        axes = axes[0]
    return mp.transpose(self, axes or None)


def _reduction(fn, has_dtype: bool = False):
    def method(self: Tensor, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tensor:
        if out is not None:
            raise TypeError("the out= argument is not supported: lazyarr arrays are values")
        kw = {"dtype": dtype} if has_dtype else {}
        if dtype is not None and not has_dtype:
            raise TypeError(f"{fn.__name__}() got an unexpected keyword argument 'dtype'")
        return fn(self, axis=axis, keepdims=keepdims, **kw)
    method.__name__ = fn.__name__
    return method


def _max_min(fn):
    def method(self: Tensor, axis: Any = None, out: None = None, keepdims: bool = False) -> Tensor:
        if out is not None:
            raise TypeError("the out= argument is not supported: lazyarr arrays are values")
        return fn(self, axis=axis, keepdims=keepdims)
    return method


def _arg_extreme(fn):
    def method(self: Tensor, axis: Any = None, out: None = None, *, keepdims: bool = False) -> Tensor:
        if out is not None:
            raise TypeError("the out= argument is not supported: lazyarr arrays are values")
        return fn(self, axis=axis, keepdims=keepdims)
    method.__name__ = fn.__name__
    return method


def _var_std(fn):
    def method(self: Tensor, axis: Any = None, dtype: Any = None, out: None = None, ddof: float = 0,
               keepdims: bool = False, *, correction: float | None = None) -> Tensor:
        if out is not None:
            raise TypeError("the out= argument is not supported: lazyarr arrays are values")
        x = self if dtype is None else self.astype(dtype)
        return fn(x, axis=axis, correction=ddof if correction is None else correction, keepdims=keepdims)
    return method


def _cumulative(fn):
    def method(self: Tensor, axis: Any = None, dtype: Any = None, out: None = None) -> Tensor:
        if out is not None:
            raise TypeError("the out= argument is not supported: lazyarr arrays are values")
        return fn(self, axis=axis, dtype=dtype)
    method.__name__ = fn.__name__
    return method


def _contiguous(self: Tensor) -> Tensor:
    """A tensor whose value is materialised in its own buffer when realized (a fusion boundary)."""
    return wrap(UOp(Ops.CONTIGUOUS, self.dtype, (self.uop,)), self.device)


def _detach(self: Tensor) -> Tensor:
    """The same value, cut off from the gradient graph."""
    return wrap(UOp(Ops.DETACH, self.dtype, (self.uop,)), self.device)


def _item(self: Tensor) -> Any:
    if self.size != 1:
        raise ValueError(f"can only convert an array of size 1 to a Python scalar, not of size {self.size}")
    return conversion.element(self)


_METHODS = {
    # conversions of one element read it without a kernel where they can (lazyarr.conversion)
    "_scalar": conversion.scalar,
    "item": _item,
    "__array_namespace__": _array_namespace,
    "__array_ufunc__": _array_ufunc,
    "__array_function__": _array_function,
    "__dlpack__": _dlpack,
    "__dlpack_device__": _dlpack_device,
    "to_device": _to_device,
    "astype": lambda self, dtype, copy=True, device=None: data_types.astype(self, dtype, copy=copy, device=device),
    "reshape": _reshape,
    "transpose": _transpose,
    "permute": lambda self, *axes: mp.permute_dims(self, axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes),
    "flatten": lambda self: mp.reshape(self, (-1,)),
    "ravel": lambda self: mp.reshape(self, (-1,)),
    "squeeze": lambda self, axis=None: mp.squeeze(self, axis),
    "flip": lambda self, axis=None: mp.flip(self, axis=axis),
    "sum": _reduction(st.sum, has_dtype=True),
    "prod": _reduction(st.prod, has_dtype=True),
    "mean": _reduction(lambda x, axis, keepdims, dtype=None: st.mean(x if dtype is None else x.astype(dtype),
                                                                     axis=axis, keepdims=keepdims), has_dtype=True),
    "max": _max_min(st.max),
    "min": _max_min(st.min),
    "all": _max_min(st.all),
    "any": _max_min(st.any),
    "argmax": _arg_extreme(searching.argmax),
    "argmin": _arg_extreme(searching.argmin),
    "cumsum": _cumulative(st.cumsum),
    "cumprod": _cumulative(st.cumprod),
    "var": _var_std(st.var),
    "std": _var_std(st.std),
    "clip": lambda self, min=None, max=None: ew.clip(self, min, max),
    "round": lambda self, decimals=0: ew.round(self, decimals),
    "copy": lambda self: wrap(self.uop, self.device),
    "contiguous": _contiguous,
    "detach": _detach,
    "dot": lambda self, other: linalg.matmul(self, other) if self.ndim >= 1 and getattr(other, "ndim", 1) >= 1
    else ew.multiply(self, other),
    "conj": lambda self: ew.conj(self),
}
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)

_requires_grad_ = Tensor.requires_grad_


def _requires_grad_real(self: Tensor, flag: bool = True) -> Tensor:
    """Mark this tensor as a leaf whose gradient backward() accumulates into `.grad` (real
    floating-point tensors only: autograd does not differentiate through complex values)."""
    if flag and self.dtype.is_complex:
        raise TypeError(f"only real floating-point tensors can require gradients, not {self.dtype}: "
                        f"lazyarr's autograd does not differentiate complex values")
    return _requires_grad_(self, flag)


Tensor.requires_grad_ = _requires_grad_real
Tensor.T = property(lambda self: mp.transpose(self))
Tensor.mT = property(lambda self: mp.matrix_transpose(self))
Tensor.real = property(lambda self: ew.real(self))
Tensor.imag = property(lambda self: ew.imag(self))
