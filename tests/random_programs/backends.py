"""The namespaces a program runs with: NumPy (optionally in another float dtype, recording ties),
lazyarr and PyTorch (through a NumPy-like adapter)."""
from __future__ import annotations


import math

import numpy as np

from tests.random_programs.model import BINARY_OPERATORS, FLOATS, lazy_input


# ---------------------------------------------------------------------------------------------
# backends: the namespace an evaluation calls, how it makes inputs, and what it records

class Backend:
    methods = True        # x.sum(axis=...), x.reshape(...), x.T: the namespace's arrays have them
    name = "?"

    def kink(self, kind, *values, **kw):
        pass

    def getitem(self, x, key):
        return x[key]

    def realize(self, x, style):
        return x

    def dtype(self, name):
        return getattr(self.m, name)

    def wrap(self, v):
        return v


class NumpyBackend(Backend):
    """NumPy; float values in `float_dtype` when given (the conditioning check); `margins` (a dict)
    collects how close each comparison and kink came to a tie (the smallest nonzero distance)."""
    name = "numpy"
    m = np

    def __init__(self, program, float_dtype=None, margins=None):
        self.program, self.float_dtype, self.margins = program, float_dtype, margins

    def dtype(self, name):
        if self.float_dtype and name in FLOATS:
            return np.dtype(self.float_dtype)
        return np.dtype(name)

    def make(self, node, i, env):
        return self.program.input_value(i).astype(self.dtype(node.dtype))

    def wrap(self, v):
        return np.asarray(v) if isinstance(v, (np.generic, bool, int, float)) else v

    def _record(self, kind, distances):
        d = np.asarray(distances, dtype=np.float64).ravel()
        if np.any(d == 0):
            self.margins[kind + "="] = True      # an exact tie (where finite differences jump)
        d = d[(d > 0) | np.isnan(d)]
        if d.size:
            m = float(np.nanmin(d)) if not np.isnan(d).all() else 0.0
            self.margins[kind] = min(self.margins.get(kind, math.inf), m)

    def kink(self, kind, *values, axis=None):
        if self.margins is None:
            return
        with np.errstate(all="ignore"):
            vals = [np.asarray(v, dtype=np.float64) for v in values]
            if kind in ("compare", "maximum"):
                a, b = np.broadcast_arrays(*vals)
                self._record(kind, np.abs(a - b) / np.maximum(1.0, np.maximum(np.abs(a), np.abs(b))))
            elif kind == "abs":
                self._record(kind, np.abs(vals[0]))
            elif kind == "maxred":
                x = vals[0]
                axes = tuple(range(x.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
                axes = tuple(ax % max(x.ndim, 1) for ax in axes) if x.ndim else ()
                rest = [d for d in range(x.ndim) if d not in axes]
                y = np.transpose(x, rest + list(axes)).reshape([x.shape[d] for d in rest] + [-1])
                if y.shape[-1] > 1:
                    s = np.sort(y, axis=-1)
                    gaps = np.concatenate([s[..., -1:] - s[..., -2:-1], s[..., 1:2] - s[..., :1]], axis=-1)
                    self._record(kind, gaps / np.maximum(1.0, np.abs(s[..., -1:])))
            elif kind == "floor":
                q = vals[0] / vals[1]
                self._record(kind, np.abs(q - np.round(q)) / np.maximum(1.0, np.abs(q)))


class LazyBackend(Backend):
    name = "lazyarr"

    def __init__(self, program):
        import lazyarr
        self.m, self.program = lazyarr, program

    def make(self, node, i, env):
        return lazy_input(node, env)

    def realize(self, x, style):
        if style == "method":
            return x.realize()
        self.m.realize(x)
        return x


class TorchNS:
    """The few array-API names the programs call, on PyTorch tensors (float programs only)."""

    def __init__(self, dtype):
        import torch
        self.torch = torch
        self.default = dtype
        for name in FLOATS:
            setattr(self, name, getattr(torch, name))
        for name in ("int32", "int64"):
            setattr(self, name, getattr(torch, name))
        for name in ("exp", "log", "tanh", "sin", "cos", "sqrt", "abs", "negative", "square", "logical_not"):
            setattr(self, name, getattr(torch, name))

    def _t(self, v, like):
        if isinstance(v, self.torch.Tensor):
            return v
        return self.torch.tensor(v, dtype=like.dtype if isinstance(like, self.torch.Tensor) else self.default)

    def _pair(self, a, b):
        if not isinstance(a, self.torch.Tensor):
            a = self._t(a, b)
        if not isinstance(b, self.torch.Tensor):
            b = self._t(b, a)
        return a, b

    def __getattr__(self, name):
        op = BINARY_OPERATORS.get(name)
        if op is None:
            raise AttributeError(name)
        return lambda a, b: op(*self._pair(a, b))

    def maximum(self, a, b):
        return self.torch.maximum(*self._pair(a, b))

    def minimum(self, a, b):
        return self.torch.minimum(*self._pair(a, b))

    def where(self, c, a, b):
        return self.torch.where(c, *self._pair(a, b))

    def clip(self, x, lo, hi):
        return self.torch.clamp(*self.torch.broadcast_tensors(x, lo, hi))   # (NumPy's clip broadcasts x too)

    def _reduce(self, f, x, axis, keepdims):
        if axis is None:
            r = f(x)
            return r.reshape((1,) * x.ndim) if keepdims else r
        dims = (axis,) if isinstance(axis, int) else tuple(axis)
        return f(x, dim=tuple(d % x.ndim for d in dims), keepdim=keepdims)

    def sum(self, x, axis=None, keepdims=False):
        return self._reduce(self.torch.sum, x, axis, keepdims)

    def mean(self, x, axis=None, keepdims=False):
        return self._reduce(self.torch.mean, x, axis, keepdims)

    def max(self, x, axis=None, keepdims=False):
        return self._reduce(self.torch.amax, x, axis, keepdims)

    def min(self, x, axis=None, keepdims=False):
        return self._reduce(self.torch.amin, x, axis, keepdims)

    def prod(self, x, axis=None, keepdims=False):
        if axis is None:
            r = self.torch.prod(x)
            return r.reshape((1,) * x.ndim) if keepdims else r
        dims = (axis,) if isinstance(axis, int) else tuple(axis)
        for d in sorted((d % x.ndim for d in dims), reverse=True):
            x = self.torch.prod(x, dim=d, keepdim=keepdims)
        return x

    def pow(self, x, e):
        return self.torch.pow(x, e)

    def matmul(self, a, b):
        return self.torch.matmul(a, b)

    def reshape(self, x, shape):
        return x.reshape(shape)

    def permute_dims(self, x, axes):
        return x.permute(*axes)

    def expand_dims(self, x, axis):
        return x.unsqueeze(axis)

    def squeeze(self, x, axis):
        return x.squeeze(axis)

    def flip(self, x, axis=None):
        return self.torch.flip(x, dims=tuple(range(x.ndim)) if axis is None else (axis,))

    def roll(self, x, shift, axis):
        return self.torch.roll(x, shift, axis)

    def broadcast_to(self, x, shape):
        return x.expand(shape)

    def concat(self, xs, axis=0):
        if axis is None:
            return self.torch.cat([x.reshape(-1) for x in xs])
        return self.torch.cat(list(xs), dim=axis)

    def stack(self, xs, axis=0):
        return self.torch.stack(list(xs), dim=axis)

    def astype(self, x, dtype):
        return x.to(dtype)

    def asarray(self, v, dtype=None):
        return self.torch.tensor(v, dtype=dtype)


class TorchBackend(Backend):
    """PyTorch, float values in `float_dtype` (float64 by default); parameters require grad."""
    name = "torch"
    methods = False

    def __init__(self, program, float_dtype="float64"):
        import torch
        self.torch, self.program = torch, program
        self.float_dtype = float_dtype
        self.m = TorchNS(getattr(torch, float_dtype))

    def dtype(self, name):
        if name in FLOATS:
            return getattr(self.torch, self.float_dtype)
        return getattr(self.torch, name)

    def make(self, node, i, env):
        v = self.program.input_value(i)
        t = self.torch.tensor(v.astype(self.float_dtype) if node.dtype in FLOATS else v)
        if node.attrs.get("param"):
            t.requires_grad_()
        return t

    def getitem(self, x, key):
        """Basic indexing, negative steps included (which torch's slicing lacks)."""
        torch = self.torch
        key = list(key)
        if Ellipsis in key:
            i = key.index(Ellipsis)
            named = sum(1 for k in key if k is not None and k is not Ellipsis)
            key[i:i + 1] = [slice(None)] * (x.ndim - named)
        d = 0
        for k in key:
            if k is None:
                x = x.unsqueeze(d)
                d += 1
            elif isinstance(k, slice):
                idx = list(range(*k.indices(x.shape[d])))
                x = x.index_select(d, torch.tensor(idx, dtype=torch.long))
                d += 1
            else:
                x = x.select(d, k % x.shape[d])
        return x
