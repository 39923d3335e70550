"""The lazy Tensor.

A Tensor is a node of the graph (`uop`) and the device it lives on. Operations build new nodes
and never compute; a value is computed when something needs it on the host: `realize()`,
`numpy()`, `__array__`, `item()`, `tolist()`, `bool/int/float/complex/__index__`, printing,
`__dlpack__`. After realization the tensor's node is the view of its buffer, so its graph is
freed and later graphs read the buffer instead of recomputing.

The graph-building helpers here (`wrap`, `broadcast`, `elementwise`, `movement`, ...) are what
the namespace modules (creation, elementwise, manipulation, ...) are written with.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Iterator, Sequence

import numpy as np
from numpy.exceptions import AxisError

from lazyarr import dtypes
from lazyarr.compiler.uop import GroupOp, Ops, UOp
from lazyarr.dtypes import DType
from lazyarr.runtime.device import Buffer, Device, get_device

Shape = tuple[int, ...]


class Tensor:
    """An n-dimensional array whose value is computed lazily by fused, compiled kernels."""
    __slots__ = ("uop", "device", "requires_grad", "grad", "_ctx", "__weakref__")
    __array_priority__ = 1000  # NumPy defers binary operators on (ndarray, Tensor) to us

    def __init__(self, data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False):
        from lazyarr.creation import asarray
        t = asarray(data, dtype=dtype, device=device)
        self.uop, self.device, self.requires_grad, self.grad, self._ctx = t.uop, t.device, False, None, None
        if requires_grad:
            self.requires_grad_()

    @classmethod
    def _from_uop(cls, uop: UOp, device: Device) -> Tensor:
        t = object.__new__(cls)
        t.uop, t.device, t.requires_grad, t.grad, t._ctx = uop, device, False, None, None
        return t

    # ---- metadata, known without computing ---------------------------------------------------
    @property
    def shape(self) -> Shape:
        return self.uop.shape

    @property
    def dtype(self) -> DType:
        return self.uop.dtype

    @property
    def ndim(self) -> int:
        return len(self.uop.shape)

    @property
    def size(self) -> int:
        return math.prod(self.uop.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    __hash__ = object.__hash__

    # ---- realization -----------------------------------------------------------------------
    def realize(self) -> Tensor:
        """Compute the value now (blocking) and return self."""
        realize(self)
        return self

    def schedule(self) -> list:
        """The kernels `realize()` would run, each with `.name`, `.device` and `.source`."""
        from lazyarr.compiler.schedule import create_schedule
        return create_schedule([(self.uop, self.device)]).items

    @property
    def is_realized(self) -> bool:
        from lazyarr.compiler.schedule import is_buffer_view
        return is_buffer_view(self.uop)

    def _buffer(self) -> Buffer:
        from lazyarr.compiler.schedule import view_buffer
        self.realize()
        return view_buffer(self.uop)

    def numpy(self) -> np.ndarray:
        """The value as a NumPy array: a read-only view of the buffer on the CPU."""
        buf = self._buffer()
        self.device.synchronize()
        arr = buf.numpy().reshape(self.shape).view()
        arr.flags.writeable = False
        return arr

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        arr = self.numpy()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        if copy:
            arr = arr.copy()
        return arr

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError(f"can only convert an array of size 1 to a Python scalar, not of size {self.size}")
        return self.numpy().reshape(()).item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def _scalar(self, kind: str) -> Any:
        if self.size != 1:
            msg = ("The truth value of an array with more than one element is ambiguous"
                   if kind == "bool" else f"only arrays of size 1 can be converted to Python {kind}s")
            raise (ValueError if kind == "bool" else TypeError)(
                msg if self.size != 0 or kind != "bool" else "The truth value of an empty array is ambiguous")
        return self.numpy().reshape(()).item()

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
        arr = self.numpy()
        text = np.array_repr(arr)
        assert text.startswith("array(")
        body = text[len("array("):]
        # NumPy omits the dtype for its defaults; say it whenever it is not the default of its kind
        lines = body.split("\n")
        out = "Tensor(" + "\n".join([lines[0]] + [" " + ln for ln in lines[1:]])
        if "dtype=" not in out and arr.dtype not in (np.float64, np.int64, np.bool_, np.complex128):
            out = out[:-1] + f", dtype={self.dtype.name})"
        if self.device.name != "cpu":
            out = out[:-1] + f", device='{self.device.name}')"
        return out

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
        return {"data": self.numpy(), "device": self.device.name}

    def __setstate__(self, state):
        from lazyarr.creation import asarray
        t = asarray(np.array(state["data"]), device=state["device"])
        self.uop, self.device, self.requires_grad, self.grad, self._ctx = t.uop, t.device, False, None, None

    def requires_grad_(self, flag: bool = True) -> Tensor:
        if flag and not self.dtype.is_inexact:
            raise TypeError(f"only floating-point tensors can require gradients, not {self.dtype}")
        self.requires_grad = flag
        return self


def realize(*tensors: Tensor) -> None:
    """Compute several tensors in one schedule, so shared work runs once."""
    from lazyarr.compiler.schedule import is_buffer_view, realize_all
    todo = [t for t in tensors if not is_buffer_view(t.uop)]
    if not todo:
        return
    views = realize_all([(t.uop, t.device) for t in todo])
    for t in todo:
        t.uop = views[t.uop]


# ---- graph-building helpers used by the namespace modules ------------------------------------

def wrap(uop: UOp, device: Device) -> Tensor:
    return Tensor._from_uop(uop, device)


def const(value: Any, dtype: DType, shape: Shape = ()) -> UOp:
    """A constant node of `shape` (a broadcast scalar: no memory until realized)."""
    c = UOp.const(dtype, value)
    return expand_uop(c, shape) if shape else c


def reshape_uop(u: UOp, shape: Shape) -> UOp:
    shape = tuple(shape)
    if u.shape == shape:
        return u
    if u.op is Ops.RESHAPE:  # a reshape of a reshape is one reshape
        u = u.src[0]
        if u.shape == shape:
            return u
    return UOp(Ops.RESHAPE, u.dtype, (u,), shape)


def expand_uop(u: UOp, shape: Shape) -> UOp:
    """`u` broadcast to `shape` (leading axes added, axes of length 1 stretched)."""
    shape = tuple(shape)
    if u.shape == shape:
        return u
    if len(u.shape) < len(shape):
        u = reshape_uop(u, (1,) * (len(shape) - len(u.shape)) + u.shape)
    if u.shape == shape:
        return u
    return UOp(Ops.EXPAND, u.dtype, (u,), shape)


def permute_uop(u: UOp, axes: Sequence[int]) -> UOp:
    axes = tuple(axes)
    return u if axes == tuple(range(len(axes))) else UOp(Ops.PERMUTE, u.dtype, (u,), axes)


def shrink_uop(u: UOp, bounds: Sequence[tuple[int, int]]) -> UOp:
    bounds = tuple((int(b), int(e)) for b, e in bounds)
    return u if all(b == 0 and e == n for (b, e), n in zip(bounds, u.shape)) else UOp(Ops.SHRINK, u.dtype, (u,), bounds)


def pad_uop(u: UOp, padding: Sequence[tuple[int, int]]) -> UOp:
    padding = tuple((int(b), int(a)) for b, a in padding)
    return u if all(b == 0 and a == 0 for b, a in padding) else UOp(Ops.PAD, u.dtype, (u,), padding)


def flip_uop(u: UOp, axes: Sequence[int]) -> UOp:
    axes = tuple(sorted(a for a in axes if u.shape[a] > 1))
    return UOp(Ops.FLIP, u.dtype, (u,), axes) if axes else u


def normalize_axis(axis: Any, ndim: int) -> int:
    """`axis` as a non-negative axis of an array of `ndim` dimensions. Raises NumPy's AxisError
    (a ValueError and an IndexError) naming the axis and the rank."""
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim)
    return a % ndim if ndim else 0


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """`axis` (None for all, an int, or a tuple of ints) as sorted non-negative axes. Raises
    AxisError for an axis out of range and ValueError for a repeated one."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(normalize_axis(a, ndim) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return tuple(sorted(axes))


def cast_uop(u: UOp, dtype: DType) -> UOp:
    if u.dtype is dtype:
        return u
    if u.op is Ops.CONST:
        return UOp.const(dtype, _cast_value(u.arg, dtype))
    return UOp(Ops.CAST, dtype, (u,))


def _cast_value(v: Any, dtype: DType) -> Any:
    if dtype.is_bool:
        return bool(v)
    if dtype.is_int and isinstance(v, float):
        if not math.isfinite(v):
            return dtypes.min_value(dtype) if dtype.kind == "i" else 0
        return int(v)
    return v


def alu(op: Ops, *srcs: UOp | Any, dtype: DType | None = None) -> UOp:
    """A tensor-level ALU node of sources of one shape; Python scalars among them become constants
    of that shape, of the dtype of the (value) sources. Comparisons are bool."""
    shaped = [s for s in srcs if isinstance(s, UOp)]
    values = [s for s in (srcs[1:] if op is Ops.WHERE else srcs) if isinstance(s, UOp)]
    shape, value_dtype = shaped[0].shape, (values[0] if values else shaped[0]).dtype
    full = [s if isinstance(s, UOp) else const(s, dtypes.bool_ if op is Ops.WHERE and i == 0 else value_dtype,
                                                   shape) for i, s in enumerate(srcs)]
    if dtype is None:
        dtype = dtypes.bool_ if op in GroupOp.Comparison else value_dtype
    return UOp(op, dtype, tuple(full))


def broadcast_shapes(*shapes: Shape) -> Shape:
    """The shape all `shapes` broadcast to. Raises ValueError naming the shapes that do not."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ValueError("operands could not be broadcast together with shapes "
                             + " ".join(f"({','.join(map(str, s))}{',' if len(s) == 1 else ''})" for s in shapes))
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, Tensor)


def as_tensor(x: Any, device: Device | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    from lazyarr.creation import asarray
    return asarray(x, device=device)


def operands(*args: Any, dtype_rule: str = "promote") -> tuple[list[UOp], DType, Device]:
    """The arguments of an elementwise operation as nodes of one shape and dtype: Tensors promoted
    by the array API's table, Python scalars weakly (they take the arrays' dtype when their kind
    fits), NumPy arrays as arrays. Raises ValueError for mismatched shapes or devices, TypeError for
    unsupported operands, OverflowError for a Python int outside the dtype's range."""
    tensors: list[Tensor | None] = []
    for a in args:
        if isinstance(a, Tensor):
            tensors.append(a)
        elif is_scalar(a):
            tensors.append(None)
        elif isinstance(a, (np.ndarray, np.generic, list, tuple)):
            tensors.append(as_tensor(a))
        else:
            raise TypeError(f"unsupported operand type {type(a).__name__}")
    arrays = [t for t in tensors if t is not None]
    if not arrays:
        raise TypeError("at least one operand must be an array")
    device = arrays[0].device
    for t in arrays[1:]:
        if t.device is not device:
            raise ValueError(f"operands are on different devices: {device.name} and {t.device.name}; "
                             f"move one with to_device()")
    dtype = dtypes.promote_types(*(t.dtype for t in arrays))
    for a, t in zip(args, tensors):
        if t is None:
            dtype = dtypes.weak_result(dtype, a) if dtype_rule == "promote" else dtype
    for a, t in zip(args, tensors):
        if t is None:
            dtypes.check_scalar_fits(a, dtype)
    shape = broadcast_shapes(*(t.shape for t in arrays))
    out = []
    for a, t in zip(args, tensors):
        if t is None:
            out.append(const(a, dtype, shape))
        else:
            out.append(expand_uop(cast_uop(t.uop, dtype), shape))
    return out, dtype, device


from lazyarr import _tensor_methods  # noqa: E402,F401  (attaches operators and methods to Tensor)
