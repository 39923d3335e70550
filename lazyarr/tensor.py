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

import itertools
import math
import weakref
from typing import Any, Iterator

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.schedule import create_schedule, is_buffer_view, realized_for, view_buffer
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.dtypes import DType
from lazyarr.graph import broadcast_shapes, cast_uop, const, expand_uop
from lazyarr.realize import realized, run, schedule_realize
from lazyarr.runtime.device import Buffer, Device

Shape = tuple[int, ...]


class GradMode:
    disabled = 0   # > 0 inside no_grad()


grad_mode = GradMode()
# Leaf tensors that require gradients, by their leaf key. A leaf's node is always a marker of its own,
# NOOP(value, ("leaf", n)): equal values are one hash-consed node (`xp.ones(3)` twice is one graph),
# so the tensor's identity cannot be its value's node. The marker keeps its key while the value under
# it changes (computed, realized, updated in place), so graphs recorded before a realization still
# lead their gradients to the tensor.
_grad_leaves: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_leaf_numbers = itertools.count(1)


def grad_leaf_tensors() -> dict[tuple, Tensor]:
    """Leaf key → the live leaf tensor that requires gradients."""
    return dict(_grad_leaves)


def is_grad_leaf(u: UOp) -> bool:
    """Whether u is the marker of a live leaf tensor that requires gradients."""
    return u.op is Ops.NOOP and u.arg in _grad_leaves


def leaf_marker(value: UOp, key: tuple) -> UOp:
    """The node of the leaf `key` whose value is `value`."""
    return value if value.op is Ops.NOOP and value.arg == key else UOp(Ops.NOOP, value.dtype, (value,), key)


class Tensor:
    """An n-dimensional array whose value is computed lazily by fused, compiled kernels."""
    # _leaf_grad: False, or the leaf key of a leaf tensor that requires gradients (see `leaf_marker`)
    __slots__ = ("_uop", "device", "_leaf_grad", "grad", "_released", "__weakref__")
    __array_priority__ = 1000  # NumPy defers binary operators on (ndarray, Tensor) to us

    def __init__(self, data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False):
        from lazyarr.creation import asarray
        t = asarray(data, dtype=dtype, device=device)
        self._uop, self.device, self._leaf_grad, self.grad, self._released = t.uop, t.device, False, None, False
        if requires_grad:
            self.requires_grad_()

    @classmethod
    def _from_uop(cls, uop: UOp, device: Device) -> Tensor:
        if grad_mode.disabled and uop.op is not Ops.DETACH and uop.dtype.is_inexact:
            uop = UOp(Ops.DETACH, uop.dtype, (uop,))   # cheaper than asking whether it needs one
        t = object.__new__(cls)
        t._uop, t.device, t._leaf_grad, t.grad, t._released = uop, device, False, None, False
        return t

    # ---- gradients ---------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        if self._leaf_grad:
            return True
        from lazyarr.autograd import graph_requires_grad
        return graph_requires_grad(self._uop)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    @property
    def is_leaf(self) -> bool:
        return self._leaf_grad or not self.requires_grad

    def requires_grad_(self, flag: bool = True) -> Tensor:
        """Mark this tensor as a leaf whose gradient backward() accumulates into `.grad`."""
        from lazyarr.autograd import forget_requires_grad
        if flag and not self.dtype.is_inexact:
            raise TypeError(f"only floating-point tensors can require gradients, not {self.dtype}")
        if flag and not self._leaf_grad and self.requires_grad:
            raise RuntimeError("requires_grad_() is for leaf tensors; this tensor is computed from tensors "
                               "that require grad (use detach() first)")
        if flag and not self._leaf_grad:
            key = ("leaf", next(_leaf_numbers))
            value = self._uop
            self._leaf_grad, self._uop = key, leaf_marker(value, key)
            if value._view is not None:   # already computed: the marker reads the same buffer
                self._uop._view = value._view
            _grad_leaves[key] = self
        elif not flag and self._leaf_grad:
            _grad_leaves.pop(self._leaf_grad, None)
            self._uop, self._leaf_grad = self._uop.src[0], False
        forget_requires_grad()
        return self

    def rebind(self, value: UOp) -> None:
        """Give this tensor the value `value` (a node of its shape and dtype): in-place updates,
        assignment, an optimizer's step. A leaf that requires grad keeps its identity (its marker)."""
        self._uop = leaf_marker(value, self._leaf_grad) if self._leaf_grad else value

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
        return create_schedule([(self.uop, self.device)]).items

    @property
    def is_realized(self) -> bool:
        return is_buffer_view(self.uop) or self.uop in realized

    def _buffer(self) -> Buffer:
        self.realize()
        return view_buffer(self.uop if is_buffer_view(self.uop) else realized[self.uop])

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
        self._uop, self.device, self._leaf_grad, self.grad, self._released = t.uop, t.device, False, None, False


def _view(self: Tensor, dtype: Any = None) -> Tensor:
    """NumPy's view: the same bytes read as `dtype` (a different item size changes the length of
    the last axis)."""
    if dtype is None:
        return wrap(self.uop, self.device)
    d = dtypes.as_dtype(dtype)
    if d.itemsize != self.dtype.itemsize:
        if self.ndim == 0:
            raise ValueError("changing the dtype of a 0-d array is only supported if the itemsize is unchanged")
        if (self.shape[-1] * self.dtype.itemsize) % d.itemsize:
            raise ValueError(f"cannot view the last axis of {self.shape[-1]} {self.dtype} elements as {d}: its size "
                             f"in bytes is not a multiple of {d.itemsize}")
    return wrap(self.uop if d is self.dtype else UOp(Ops.BITCAST, d, (self.uop,)), self.device)


# the arrays broadcast_to (and broadcast_arrays, where it stretches an axis) returned, by id: read-
# only, as NumPy's broadcast views are (several of their elements are one element of their source).
# Keyed by id, not a WeakSet: a set's lookup would compare tensors with ==, which is elementwise
_broadcast_views: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def mark_broadcast_view(x: Tensor) -> None:
    _broadcast_views[id(x)] = x


def is_broadcast_view(x: Tensor) -> bool:
    """Whether x is an array that broadcast_to or broadcast_arrays returned, or a basic-index view
    of one (read-only, as in NumPy). Arrays computed from it and its copies are not."""
    return _broadcast_views.get(id(x)) is x


def check_writable(x: Tensor, what: str = "assignment destination") -> None:
    """NumPy's ValueError for storing into a read-only array: one that broadcast_to or
    broadcast_arrays returned (several of its elements are one element of its source). `what`
    names the store ("output array" for in-place operators)."""
    if is_broadcast_view(x):
        raise ValueError(f"{what} is read-only: this array of shape {x.shape} is a broadcast (from broadcast_to "
                         f"or broadcast_arrays), several of whose elements are one element of its source; store "
                         f"into a copy instead (xp.asarray(x, copy=True))")



def _assign(self: Tensor, value: Any) -> Tensor:
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


# `uop`, the graph node this tensor's value is, is the `_uop` slot under a public name (a property
# would cost a Python call on every read, and tensor operations read it hundreds of times a step)
Tensor.uop = Tensor.__dict__["_uop"]
Tensor.view = _view
Tensor.assign = _assign


def realize(*tensors: Tensor) -> None:
    """Compute several tensors in one schedule, so shared work runs once."""
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"realize: expected Tensors, got {type(t).__name__}")
    unique = list({id(t): t for t in tensors}.values())
    todo = [t for t in unique if not is_buffer_view(t.uop) and
            not (t.uop in realized and realized_for(t.uop, realized[t.uop], {t.device.name}))]
    if not todo:
        return
    views, items, programs = schedule_realize([(t.uop, t.device) for t in todo])
    for t in todo:
        # a tensor that gradients may still flow through keeps its computation (its value is found
        # through `realized`); any other drops it, freeing the graph
        if t._leaf_grad:   # the leaf's marker, now over its buffer
            view = views[t.uop]
            t.uop = leaf_marker(view, t._leaf_grad)
            t.uop._view = view
        elif t._released or not t.requires_grad:
            t.uop = views[t.uop]
    del views   # the graphs are let go of before the kernels run: their buffers may be reused
    run(items, programs)


# ---- graph-building helpers used by the namespace modules ------------------------------------

def wrap(uop: UOp, device: Device) -> Tensor:
    return Tensor._from_uop(uop, device)


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
    if len(args) == 2:   # the common cases, without the general bookkeeping: recording must be cheap
        fast = _two_operands(*args)
        if fast is not None:
            return fast
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


_weak_dtype: dict[tuple[int, type], DType] = {}


def _two_operands(a: Any, b: Any) -> tuple[list[UOp], DType, Device] | None:
    """operands() for two tensors of one dtype and device, or a tensor and a Python int or float."""
    ta, tb = type(a), type(b)
    if ta is Tensor and tb is Tensor:
        ua, ub = a._uop, b._uop
        if ua.dtype is not ub.dtype or a.device is not b.device:
            return None
        if ua.shape != ub.shape:   # a bias, a row's max: broadcast as operands() would
            shape = broadcast_shapes(ua.shape, ub.shape)
            ua, ub = expand_uop(ua, shape), expand_uop(ub, shape)
        return [ua, ub], ua.dtype, a.device
    if ta is Tensor and (tb is float or tb is int):
        t, scalar, first = a, b, True
    elif tb is Tensor and (ta is float or ta is int):
        t, scalar, first = b, a, False
    else:
        return None
    u = t._uop
    key = (id(u.dtype), type(scalar))   # dtypes are interned; hashing one is a Python call
    dtype = _weak_dtype.get(key)
    if dtype is None:
        dtype = _weak_dtype[key] = dtypes.weak_result(u.dtype, scalar)
    if dtype.kind in "iu":
        dtypes.check_scalar_fits(scalar, dtype)
    c = const(scalar, dtype, u.shape)
    u = cast_uop(u, dtype)
    return ([u, c] if first else [c, u]), dtype, t.device


from lazyarr import _tensor_methods  # noqa: E402,F401  (attaches operators and methods to Tensor)
