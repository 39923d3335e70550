"""Creation functions (array API section "Creation Functions").

Host data (Python scalars, nested sequences, NumPy arrays, buffer-protocol objects, DLPack
producers through `from_dlpack`) is copied into a new buffer, or shared with `copy=False`: that
is the boundary where NumPy converts. Everything else is a lazy graph: `zeros`, `ones` and `full`
are broadcast constants (complex ones too: a complex fill value makes a complex128 array unless a
dtype is given), `meshgrid` broadcasts reshaped inputs, `arange`, `linspace` (complex: each part spaced on its own) and `eye` are
computed from IOTA (the index along an axis) in a kernel when realized, and `tril`/`triu` select
with a mask built from two IOTAs.
"""
from __future__ import annotations

import functools

import math
import operator
from typing import Any, Callable

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.buffer_views import buffer_view
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.dtypes import DType
from lazyarr.runtime.device import Buffer, Device
from lazyarr.runtime.devices import get_device
from lazyarr.arrays import Array, realization_lock, wrap
from lazyarr.graph import (MAX_SIZE, alu, cast_uop, check_dimensions, const, expand_uop, make_complex, normalize_axis,
                           permute_uop, reshape_uop, shaped)
from lazyarr.graph import broadcast_shapes as broadcast_shapes_of

Shape = tuple[int, ...]


def is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, Array)


def as_tensor(x: Any, device: Device | None = None) -> Array:
    if isinstance(x, Array):
        return x
    return asarray(x, device=device)


def normalize_shape(shape: Any) -> Shape:
    """`shape` (an int or a sequence of ints) as a tuple. Raises TypeError or ValueError (also
    for lengths beyond NumPy's limits, `check_dimensions`)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"negative dimensions are not allowed: {out}")
    return check_dimensions(out)


def _dtype_or(dtype: Any, default: DType) -> DType:
    return default if dtype is None else dtypes.as_dtype(dtype)


def _device(device: Any) -> Device:
    return get_device(device)


def iota(n: int) -> UOp:
    """The int64 vector 0, 1, ..., n-1 (lazy)."""
    return UOp(Ops.IOTA, dtypes.index, (), n)


def from_numpy(arr: np.ndarray, device: Device, copy: bool | None = True) -> Array:
    """A tensor holding the contents of a NumPy array of a supported dtype."""
    dtype = dtypes.as_dtype(arr.dtype)
    if copy is False:
        if not device.host_memory or not arr.flags.c_contiguous or arr.dtype.byteorder == ">":
            raise ValueError("asarray(copy=False): the data cannot be used without a copy "
                             "(it is not C-contiguous host memory of a supported dtype)")
        buf = Buffer(device, arr.size, dtype, arr.reshape(-1))
    else:
        with realization_lock:   # (its storage may come from the pool: see realization_lock)
            buf = Buffer(device, arr.size, dtype).copyin(arr)
    return wrap(buffer_view(buf, arr.shape), device)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Array:
    """Convert `obj` (a Tensor, Python scalar, nested sequence, NumPy array or buffer-protocol
    object) to a Tensor. `copy=False` raises ValueError when a copy is needed. `requires_grad`
    makes the result a leaf whose gradient backward() accumulates into `.grad`."""
    if requires_grad:
        return asarray(obj, dtype=dtype, device=device, copy=True if copy is None else copy).requires_grad_()
    want = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(obj, Array):
        dev = obj.device if device is None else get_device(device)
        t = obj
        if dev is not t.device:
            if copy is False:
                raise ValueError(f"asarray(copy=False) cannot move an array from {t.device.name} to {dev.name}")
            t = t.to_device(dev)
        if want is not None and want is not t.dtype:
            if copy is False:
                raise ValueError(f"asarray(copy=False) cannot convert {t.dtype} to {want} without a copy")
            t = t.astype(want)
        elif copy:
            t = wrap(t.uop, t.device)
        return t
    dev = get_device(device)
    if is_scalar(obj):
        if copy is False:
            raise ValueError("asarray(copy=False) cannot wrap a Python scalar without a copy")
        d = want or dtypes.default_for_kind(dtypes.scalar_kind(obj))
        if isinstance(obj, complex) and not d.is_complex:
            raise TypeError(f"asarray: cannot convert a complex scalar to {d}")
        if d.is_int and isinstance(obj, int):
            dtypes.check_scalar_fits(obj, d)
        return from_numpy(np.asarray(obj, dtype=d.np), dev)
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        obj = np.from_dlpack(obj)
    if isinstance(obj, (list, tuple)) and _holds_tensors(obj):
        obj = _nested_numpy(obj)
    if copy is False:
        if not isinstance(obj, np.ndarray):
            try:
                memoryview(obj)
            except TypeError:
                raise ValueError(f"asarray(copy=False) needs an array or a buffer-protocol object, not "
                                 f"{type(obj).__name__}") from None
        arr = np.asarray(obj)
        if want is not None and want.np != arr.dtype:
            raise ValueError(f"asarray(copy=False) cannot convert {arr.dtype} to {want} without a copy")
    else:
        try:
            arr = np.asarray(obj) if want is None else np.asarray(obj, dtype=want.np)
        except OverflowError as e:
            raise OverflowError(f"asarray: {e}") from None
    if arr.dtype.kind not in "biufc" or arr.dtype.itemsize > 16 or\
            arr.dtype == np.longdouble:
        raise TypeError(f"asarray: lazyarr has no dtype for NumPy's {arr.dtype} "
                        f"(supported: {', '.join(d.name for d in dtypes.ALL)})")
    return from_numpy(arr, dev, copy=copy is not False)


def _holds_tensors(seq: Any) -> bool:
    return any(isinstance(x, Array) or (isinstance(x, (list, tuple)) and _holds_tensors(x)) for x in seq)


def _nested_numpy(seq: Any) -> Any:
    if isinstance(seq, Array):
        return seq.numpy()
    if isinstance(seq, (list, tuple)):
        return [_nested_numpy(x) for x in seq]
    return seq


def _grad_option(fn: Callable[..., Array]) -> Callable[..., Array]:
    """The creation function with PyTorch's `requires_grad=` too: the result is then a leaf that
    requires gradients (its signature, as inspect shows it, stays the standard's)."""
    @functools.wraps(fn)
    def make(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Array:
        out = fn(*args, **kwargs)
        return out.requires_grad_() if requires_grad else out
    return make


@_grad_option
def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Array:
    """An array of `shape` filled with `fill_value`, cast to `dtype` as NumPy casts it (a float
    truncated into an integer dtype; a Python int that does not fit it is an OverflowError; a
    complex value into a real dtype is a TypeError, where NumPy would drop its imaginary part)."""
    shape = normalize_shape(shape)
    dev = _device(device)
    if isinstance(fill_value, Array):
        if fill_value.ndim != 0:
            raise ValueError("full: fill_value must be a scalar or a 0-d array")
        d = _dtype_or(dtype, fill_value.dtype)
        return wrap(expand_uop(cast_uop(fill_value.uop, d), shape), fill_value.device)
    if not is_scalar(fill_value):
        if isinstance(fill_value, (np.generic,)):
            fill_value = fill_value.item()
        else:
            raise TypeError(f"full: fill_value must be a Python scalar, got {type(fill_value).__name__}")
    d = _dtype_or(dtype, dtypes.default_for_kind(dtypes.scalar_kind(fill_value)))
    if isinstance(fill_value, complex) and not d.is_complex:   # (NumPy drops the imaginary part with a warning)
        raise TypeError(f"full: cannot fill an array of {d} with a complex value")
    if dtypes.scalar_needs_cast(fill_value, d):   # NumPy casts the value (full(3, 2.7, dtype=int) is [2 2 2])
        fill_value = dtypes.cast_scalar(fill_value, d)
    dtypes.check_scalar_fits(fill_value, d)
    return wrap(const(fill_value, d, shape), dev)


@_grad_option
def zeros(shape: Any, dtype: Any = None, *, device: Any = None) -> Array:
    return full(shape, 0, dtype=_dtype_or(dtype, dtypes.default_float), device=device)


@_grad_option
def ones(shape: Any, dtype: Any = None, *, device: Any = None) -> Array:
    return full(shape, 1, dtype=_dtype_or(dtype, dtypes.default_float), device=device)


@_grad_option
def empty(shape: Any, dtype: Any = None, *, device: Any = None) -> Array:
    """An array of `shape` whose contents are whatever the new memory holds."""
    shape = normalize_shape(shape)
    d, dev = _dtype_or(dtype, dtypes.default_float), _device(device)
    return wrap(buffer_view(Buffer(dev, math.prod(shape), d), shape), dev)


def _like(x: Array, dtype: Any, device: Any) -> tuple[Shape, DType, Device]:
    if not isinstance(x, Array):
        x = asarray(x)
    return x.shape, _dtype_or(dtype, x.dtype), x.device if device is None else get_device(device)


@_grad_option
def zeros_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    shape, d, dev = _like(x, dtype, device)
    return full(shape, 0, dtype=d, device=dev)


@_grad_option
def ones_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    shape, d, dev = _like(x, dtype, device)
    return full(shape, 1, dtype=d, device=dev)


@_grad_option
def full_like(x: Array, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    shape, d, dev = _like(x, dtype, device)
    return full(shape, fill_value, dtype=d, device=dev)


@_grad_option
def empty_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    shape, d, dev = _like(x, dtype, device)
    return empty(shape, dtype=d, device=dev)


def _as_number(x: Any, name: str) -> Any:
    if isinstance(x, Array):
        if x.ndim != 0:
            raise TypeError(f"{name} must be a scalar, got an array of shape {x.shape}")
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    if not is_scalar(x):
        raise TypeError(f"{name} must be a Python number, got {type(x).__name__}")
    return x


@_grad_option
def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None) -> Array:
    """Evenly spaced values in [start, stop) with spacing `step`."""
    if type(start) is int and stop is None and step == 1 and type(step) is int and dtype is None and \
            0 <= start <= MAX_SIZE:   # arange(n), the commonest (a loop's `arange(k)[None, :]`)
        return wrap(cast_uop(shaped(iota(start), (start,)), dtypes.default_int), _device(device))
    start, step = _as_number(start, "start"), _as_number(step, "step")
    if stop is None:
        start, stop = 0, start
    stop = _as_number(stop, "stop")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    all_int = all(isinstance(v, int) for v in (start, stop, step))
    d = _dtype_or(dtype, dtypes.default_int if all_int else dtypes.default_float)
    n = max(0, math.ceil((stop - start) / step)) if not all_int else max(0, -((start - stop) // step))
    if n > MAX_SIZE:
        raise ValueError(f"Maximum allowed size exceeded: arange({start}, {stop}, {step}) has {n} elements")
    i = shaped(iota(n), (n,))
    if all_int and d.is_int:
        for v in (start, stop):
            dtypes.check_scalar_fits(v, d) if n else None
        # (arange(n), the commonest, without the multiply and add that would give i itself)
        value = cast_uop(i if start == 0 and step == 1 else alu(Ops.ADD, alu(Ops.MUL, i, step), start), d)
    else:
        # as NumPy fills: the first two values in the target type give the step
        f = d if d.is_float else dtypes.float64
        first = dtypes.python_value(start, f)
        delta = dtypes.python_value(dtypes.python_value(start + step, f) - first, f)
        value = cast_uop(alu(Ops.ADD, alu(Ops.MUL, cast_uop(i, f), delta), first), d)
    return wrap(value, _device(device))


@_grad_option
def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True, retstep: bool = False, axis: int = 0) -> Any:
    """`num` evenly spaced values from `start` to `stop` (included when `endpoint`), as NumPy's:
    start and stop may be arrays (lists, NumPy or lazyarr arrays, broadcast together: the samples
    run along `axis` of the result, lazily and differentiably), an integer dtype floors the values,
    and `retstep=True` returns (samples, step)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    if num > MAX_SIZE:
        raise ValueError(f"Maximum allowed size exceeded: linspace of {num} elements")
    if _is_array_end(start) or _is_array_end(stop):
        return _linspace_arrays(start, stop, num, dtype, device, endpoint, retstep, axis)
    start, stop = _as_number(start, "start"), _as_number(stop, "stop")
    normalize_axis(axis, 1)
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    d = _dtype_or(dtype, dtypes.default_complex if is_complex else dtypes.default_float)
    if is_complex and not d.is_complex:
        raise TypeError(f"linspace: complex start or stop with the real dtype {d}")
    div = num - 1 if endpoint else num
    if d.is_complex:   # the real and imaginary parts spaced each on its own (NumPy's, for finite values)
        start, stop = complex(start), complex(stop)
        f = dtypes.component(d)
        parts = [linspace(a, b, num, dtype=f, device=device, endpoint=endpoint).uop
                 for a, b in ((start.real, stop.real), (start.imag, stop.imag))]
        y = wrap(make_complex(*parts), _device(device))
        return (y, (stop - start) / div if div > 0 else complex(math.nan)) if retstep else y
    i = cast_uop(iota(num), dtypes.float64)
    start_f, stop_f = float(start), float(stop)
    step = (stop_f - start_f) / div if div > 0 else None
    if step:
        y = alu(Ops.ADD, alu(Ops.MUL, i, step), start_f)
    elif div > 0:  # a step of zero (or one that underflows): scale after dividing, as NumPy does
        y = alu(Ops.ADD, alu(Ops.MUL, alu(Ops.FDIV, i, float(div)), stop_f - start_f), start_f)
    else:
        y = alu(Ops.ADD, alu(Ops.MUL, i, stop_f - start_f), start_f)
    if endpoint and num > 1:
        y = alu(Ops.WHERE, alu(Ops.CMPEQ, iota(num), num - 1), stop_f, y)
    out = wrap(cast_uop(alu(Ops.FLOOR, y) if not d.is_inexact else y, d), _device(device))
    return (out, np.float64(math.nan if step is None else step)) if retstep else out


def _is_array_end(x: Any) -> bool:
    """Whether linspace's start or stop is an array of one or more dimensions (a 0-d one is a number)."""
    if isinstance(x, (Array, np.ndarray)):
        return x.ndim > 0
    return isinstance(x, (list, tuple))


def _linspace_arrays(start: Any, stop: Any, num: int, dtype: Any, device: Any, endpoint: bool, retstep: bool,
                     axis: int) -> Any:
    """linspace of array ends: start + i·step along a new axis 0 of their broadcast shape (NumPy's
    formula: i/div·delta where a step is zero), stop at the end, then moved to `axis`."""
    dev = next((e.device for e in (start, stop) if isinstance(e, Array)), None) or _device(device)
    ends = [e if isinstance(e, Array) else asarray(e, device=dev) for e in (start, stop)]
    found = dtypes.promote_types(*(e.dtype for e in ends))
    compute = found if found.is_inexact else dtypes.default_float   # (NumPy's result_type(start, stop, float))
    d = _dtype_or(dtype, compute)
    if d.is_complex and not compute.is_complex:
        compute = d
    shape = broadcast_shapes_of(ends[0].shape, ends[1].shape)
    a, b = (expand_uop(reshape_uop(cast_uop(e.uop, compute), (1,) * (len(shape) - e.ndim) + e.shape), shape)
            for e in ends)
    out_shape = (num,) + shape
    check_dimensions(out_shape)
    div = num - 1 if endpoint else num
    delta = alu(Ops.SUB, b, a)
    i = expand_uop(reshape_uop(cast_uop(iota(num), compute), (num,) + (1,) * len(shape)), out_shape)
    if div > 0:
        step = alu(Ops.FDIV, delta, const(float(div), compute, shape))
        scaled = alu(Ops.MUL, alu(Ops.FDIV, i, const(float(div), compute, out_shape)), expand_uop(
            reshape_uop(delta, (1,) + shape), out_shape))
        stepped = alu(Ops.MUL, i, expand_uop(reshape_uop(step, (1,) + shape), out_shape))
        zero = expand_uop(reshape_uop(alu(Ops.CMPEQ, step, const(0, compute, shape)), (1,) + shape), out_shape)
        y = alu(Ops.WHERE, zero, scaled, stepped)
    else:
        step = const(math.nan, compute, shape)
        y = alu(Ops.MUL, i, expand_uop(reshape_uop(delta, (1,) + shape), out_shape))
    y = alu(Ops.ADD, y, expand_uop(reshape_uop(a, (1,) + shape), out_shape))
    if endpoint and num > 1:
        last = expand_uop(reshape_uop(alu(Ops.CMPEQ, iota(num), num - 1), (num,) + (1,) * len(shape)), out_shape)
        y = alu(Ops.WHERE, last, expand_uop(reshape_uop(b, (1,) + shape), out_shape), y)
    if not d.is_inexact:
        y = alu(Ops.FLOOR, y)
    ax = normalize_axis(axis, len(out_shape))
    order = list(range(1, len(out_shape)))
    order.insert(ax, 0)
    out = wrap(permute_uop(cast_uop(y, d), order), dev)
    return (out, wrap(step, dev) if div > 0 else np.float64(math.nan)) if retstep else out   # (NumPy's scalar NaN)


@_grad_option
def eye(n_rows: int, n_cols: int | None = None, /, k: int = 0, dtype: Any = None, *,
        device: Any = None) -> Array:
    """A 2-D array with ones on the k-th diagonal and zeros elsewhere."""
    n_rows = operator.index(n_rows)
    n_cols = n_rows if n_cols is None else operator.index(n_cols)
    if n_rows < 0 or n_cols < 0:
        raise ValueError(f"eye: negative dimensions are not allowed: ({n_rows}, {n_cols})")
    k = min(max(operator.index(k), -n_rows), n_cols)   # past the corners: no diagonal (and no int64 overflow)
    check_dimensions((n_rows, n_cols))
    d = _dtype_or(dtype, dtypes.default_float)
    rows = expand_uop(reshape_uop(iota(n_rows), (n_rows, 1)), (n_rows, n_cols))
    cols = expand_uop(reshape_uop(iota(n_cols), (1, n_cols)), (n_rows, n_cols))
    return wrap(cast_uop(alu(Ops.CMPEQ, alu(Ops.ADD, rows, k), cols), d), _device(device))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """An array holding the data of `x`, any object with `__dlpack__` (host memory; NumPy reads
    the capsule at the boundary), on the CPU device unless `device` names another. `copy=False` shares x's memory and raises ValueError where it
    cannot; `copy=True` always copies; None copies only when needed."""
    if isinstance(x, Array):
        return asarray(x, device=device, copy=copy)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    # the data is host memory: by default the result is on the host's device, as the standard
    # places it on x's device (so copy=False can share it whatever the default device is)
    dev = get_device("cpu" if device is None else device)
    try:
        arr = np.from_dlpack(x, copy=copy)
    except BufferError as e:
        raise BufferError(f"from_dlpack: {e}") from None
    except RuntimeError as e:
        raise ValueError(f"from_dlpack: the data cannot be read as host memory ({e})") from None
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"from_dlpack: lazyarr has no dtype for {arr.dtype}")
    if copy is False:
        return from_numpy(arr, dev, copy=False)
    return from_numpy(arr, dev, copy=True)


def meshgrid(*arrays: Array, indexing: str = "xy") -> tuple[Array, ...]:
    """Coordinate grids from 1-D coordinate arrays: each output has one axis per input ('ij'),
    with the first two swapped for Cartesian indexing ('xy'). Each keeps its input's dtype."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ts = [a if isinstance(a, Array) else asarray(a) for a in arrays]
    for t in ts[1:]:
        if t.device is not ts[0].device:
            raise ValueError(f"meshgrid: arrays are on different devices: {ts[0].device.name} and {t.device.name}")
    lengths = [t.size for t in ts]
    axes = list(range(len(ts)))
    if indexing == "xy" and len(ts) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(ts)
    for i, a in enumerate(axes):
        shape[a] = lengths[i]
    out = []
    for i, t in enumerate(ts):
        along = [1] * len(ts)
        along[axes[i]] = lengths[i]
        out.append(wrap(expand_uop(reshape_uop(t.uop, tuple(along)), tuple(shape)), t.device))
    return tuple(out)


def _triangle(name: str, x: Array, k: int, lower: bool) -> Array:
    if not isinstance(x, Array):
        x = asarray(x)
    k = operator.index(k)
    if x.ndim < 2:
        raise ValueError(f"{name}: the array must have at least 2 dimensions, got {x.ndim}")
    n, m = x.shape[-2:]
    k = min(max(k, -n - 1), m + 1)   # beyond every diagonal: the same answer, and no int64 overflow
    rows = expand_uop(reshape_uop(iota(n), (n, 1)), (n, m))
    cols = expand_uop(reshape_uop(iota(m), (1, m)), (n, m))
    diag = alu(Ops.SUB, cols, rows)   # which diagonal each element is on
    keep = alu(Ops.CMPLE, diag, k) if lower else alu(Ops.CMPLE, k, diag)
    keep = expand_uop(keep, x.shape)
    zero = const(False if x.dtype.is_bool else 0, x.dtype, x.shape)
    return wrap(UOp(Ops.WHERE, x.dtype, (keep, x.uop, zero)), x.device)


def tril(x: Array, /, k: int = 0) -> Array:
    """x with the elements above the k-th diagonal of its last two axes set to zero."""
    return _triangle("tril", x, k, lower=True)


def triu(x: Array, /, k: int = 0) -> Array:
    """x with the elements below the k-th diagonal of its last two axes set to zero."""
    return _triangle("triu", x, k, lower=False)
