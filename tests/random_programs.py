"""Random array programs, evaluated by NumPy, lazyarr and PyTorch through the same code.

A program is a list of nodes (SSA: node i reads earlier nodes). `generate(seed, ...)` draws one,
deterministically per seed, from a small expression language:

- inputs made every way a user makes them: `xp.asarray` of NumPy arrays, of nested lists and of
  Python scalars, `ones`/`zeros`/`full`/`arange`/`linspace`/`eye`, `*_like`, `lazyarr.random`,
  slices, transposes and broadcasts of other arrays (views), 0-d arrays; realized or lazy; in
  gradient programs some are parameters (`requires_grad=True`, `.requires_grad = True`,
  `.requires_grad_()`), often equal in value to other inputs or to the program's constants;
- element-wise operations (operators and functions, Python scalars on either side), with
  broadcasting over shapes such as (), (3,), (2, 3), (4, 1); comparisons and `where`;
- reductions (sum, mean, max, min, prod; axis None, an int or a tuple; keepdims), matmul,
  reshape, transposes, basic indexing (negative steps, integer indices, None, Ellipsis), flip,
  broadcast_to, expand_dims, squeeze, concat and stack, casts, `realize()` in the middle;
- loops: a body applied k times (k up to 50) to a state without realizing inside, as a
  recurrence `s = a*s + b*tanh(f(s, params))` or a normalisation, so that values stay bounded;
- integer programs: wrapping arithmetic, floor_divide and remainder with negative operands (never
  by zero or by -1), shifts, bitwise operations, integer powers (negative ones raise ValueError).

Every float value has a static bound on its magnitude; an operation that would pass a limit is
preceded by a squashing one (tanh), so programs neither overflow nor lose all precision.

`evaluate(program, backend)` runs a program with NumPy (`NumpyBackend`, optionally in another float
dtype, recording how close each comparison / kink came to a tie), lazyarr (`LazyBackend`) or
PyTorch (`TorchBackend`), calling the same code with the backend's namespace. `source(program)`
renders it as a Python script for lazyarr: the reproducer printed with every failure.

The checks the tests and `scripts/differential.py` share are at the end: `check_forward` (against
NumPy), `check_gradients` (against torch.autograd, optionally also finite differences) and
`check_optimizer` (lazyarr.optim against torch.optim over a few steps). A program whose NumPy value
in float32 and float64 disagree by more than the tested tolerance allows (ill-conditioned), or
whose comparisons / kinks come within a rounding error of a tie without being exact ties, is
discarded and the next attempt of the same seed is drawn: the tests compare arithmetic, not luck.
"""
from __future__ import annotations

import math
import operator
import random as pyrandom
import traceback

import numpy as np

FLOATS = ("float32", "float64")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
BITS = {d: int(d.lstrip("uint")) for d in INTS}
SHAPES = [(), (3,), (2, 3), (4, 1), (1, 3), (3, 3), (2, 1, 3), (4, 3), (2, 4), (3,)]
MAX_SIZE = 48
# large programs: values over LAZYARR_GENERIC_SIZES (16384) elements, so kernels with their sizes in
# the code, optimised (tiles, vectors, threads), and split reductions
LARGE_SHAPES = [(), (131,), (129, 131), (129, 1), (1, 131), (2, 129, 131), (257, 65), (129, 131)]
LARGE_MAX_SIZE = 40000
LIMIT = 30.0                     # largest magnitude a float value may reach before it is squashed
CONSTS = [2.0, 0.5, -1.5, 1.0, 3.0, -0.25, 0.75, -2.0]   # fill values and the program's scalars

BINARY_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//",
                  "remainder": "%", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
                  "greater": ">", "less": "<", "greater_equal": ">=", "less_equal": "<=", "equal": "==",
                  "not_equal": "!=", "bitwise_left_shift": "<<", "bitwise_right_shift": ">>", "pow": "**",
                  "matmul": "@", "logical_and": "&", "logical_or": "|"}
BINARY_OPERATORS = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
                    "divide": operator.truediv, "floor_divide": operator.floordiv, "remainder": operator.mod,
                    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
                    "greater": operator.gt, "less": operator.lt, "greater_equal": operator.ge,
                    "less_equal": operator.le, "equal": operator.eq, "not_equal": operator.ne,
                    "bitwise_left_shift": operator.lshift, "bitwise_right_shift": operator.rshift,
                    "pow": operator.pow, "matmul": operator.matmul, "logical_and": operator.and_,
                    "logical_or": operator.or_}


class SeededData:
    """Array data drawn from a seed: a large input's reproducer stays one line."""

    def __init__(self, seed, shape, dtype, lo, hi):
        self.seed, self.shape, self.dtype, self.lo, self.hi = seed, tuple(shape), dtype, lo, hi

    def array(self):
        rng = np.random.default_rng(self.seed)
        if self.dtype in FLOATS:
            return rng.uniform(self.lo, self.hi, self.shape).astype(self.dtype)
        return rng.integers(self.lo, self.hi, self.shape, dtype=self.dtype, endpoint=True)

    def __array__(self, dtype=None, copy=None):
        a = self.array()
        return a if dtype is None else a.astype(dtype)

    def code(self):
        if self.dtype in FLOATS:
            return f"np.random.default_rng({self.seed}).uniform({self.lo!r}, {self.hi!r}, {self.shape}).astype(np.{self.dtype})"
        return (f"np.random.default_rng({self.seed}).integers({self.lo}, {self.hi}, {self.shape}, "
                f"dtype=np.{self.dtype}, endpoint=True)")


def is_data(v):
    return isinstance(v, (np.ndarray, SeededData))


def render_array(d, dt):
    if isinstance(d, SeededData):
        return d.code()
    return f"np.array({np.asarray(d, dtype=dt).tolist()!r}, dtype=np.{dt})"


def render_list(d, dt):
    if isinstance(d, SeededData):
        return f"{d.code()}.tolist()"
    return repr(np.asarray(d, dtype=dt).tolist())


class Node:
    __slots__ = ("op", "args", "attrs", "shape", "dtype", "bound", "state_dep")

    def __init__(self, op, args=(), attrs=None, shape=(), dtype="float64", bound=1.0, state_dep=False):
        self.op, self.args, self.attrs = op, tuple(args), dict(attrs or {})
        self.shape, self.dtype, self.bound, self.state_dep = tuple(shape), dtype, float(bound), state_dep

    def __repr__(self):
        return f"Node({self.op}, {self.args}, {self.attrs}, {self.shape}, {self.dtype})"


class Program:
    def __init__(self, seed, attempt, kind, dtype, mode, nodes, outputs, conversion):
        self.seed, self.attempt, self.kind, self.dtype, self.mode = seed, attempt, kind, dtype, mode
        self.nodes, self.outputs, self.conversion = nodes, outputs, conversion
        self._values = {}

    @property
    def inputs(self):
        return [i for i, n in enumerate(self.nodes) if n.op == "input"]

    @property
    def params(self):
        return [i for i in self.inputs if self.nodes[i].attrs.get("param")]

    def has_loop(self):
        return any(n.op == "loop" for n in self.nodes)

    def size(self):
        """Operations evaluated (a loop counts its body k times)."""
        return sum(n.attrs["k"] * len(n.attrs["body"]) if n.op == "loop" else 1 for n in self.nodes)

    def input_value(self, i):
        """Input i's value as NumPy makes it (lazyarr.random's numbers come from lazyarr)."""
        if i not in self._values:
            self._values[i] = numpy_input(self.nodes[i])
        return self._values[i]

    def __repr__(self):
        return f"<program seed={self.seed} attempt={self.attempt} {self.kind} {self.dtype} {self.mode}>"


# ---------------------------------------------------------------------------------------------
# shapes

def broadcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def fits_into(shape, within):
    """shape broadcasts to exactly `within`."""
    return within is None or broadcast(shape, within) == tuple(within)


def size_of(shape):
    return math.prod(shape)


def factorizations(n, max_dims=3):
    """The shapes of n elements with at most max_dims dimensions (a few 1s allowed)."""
    out = [()] if n == 1 else []
    out.append((n,))
    for a in range(1, n + 1):
        if n % a:
            continue
        out.append((a, n // a))
        if max_dims >= 3:
            for b in range(1, n // a + 1):
                if (n // a) % b == 0:
                    out.append((a, b, n // a // b))
    return [sh for sh in out if len(sh) < 3 or sh.count(1) < 2]


# ---------------------------------------------------------------------------------------------
# inputs

def numpy_input(node):
    a, shape, dt = node.attrs, node.shape, np.dtype(node.dtype)
    mk = a["maker"]
    if mk in ("asarray_numpy", "asarray_list"):
        return np.array(a["data"], dtype=dt)
    if mk == "asarray_scalar":
        return np.asarray(a["value"], dtype=dt)
    if mk in ("ones", "ones_like"):
        return np.ones(shape, dt)
    if mk in ("zeros", "zeros_like"):
        return np.zeros(shape, dt)
    if mk in ("full", "full_like"):
        return np.full(shape, a["value"], dt)
    if mk == "arange":
        return np.arange(a["start"], a["stop"], a["step"], dtype=dt).reshape(shape)
    if mk == "linspace":
        return np.linspace(a["start"], a["stop"], a["num"], endpoint=a["endpoint"], dtype=dt).reshape(shape)
    if mk == "eye":
        return np.eye(shape[0], shape[1], k=a["k"], dtype=dt)
    if mk in ("uniform", "normal", "integers"):
        return np.array(lazy_random(node), dtype=dt)
    if mk == "slice_view":
        return np.array(view_base_numpy(node)[a["key"]], dtype=dt)
    if mk == "transpose_view":
        return np.array(transpose(np, view_base_numpy(node), a["how"], a["axes"]), dtype=dt)
    if mk == "broadcast_view":
        return np.array(np.broadcast_to(np.asarray(a["data"], dt), shape), dtype=dt)
    raise AssertionError(mk)


def view_base_numpy(node):
    a = node.attrs
    if a["base_maker"] == "asarray":
        return np.asarray(a["base"], dtype=node.dtype)
    n = size_of(a["base_shape"])
    return np.linspace(-1.5, 2.0, n, dtype=node.dtype).reshape(a["base_shape"])


def lazy_random(node):
    import lazyarr as xp
    from lazyarr import random
    a = node.attrs
    random.seed(a["rseed"])
    return np.asarray(random_call(xp, random, node)).copy()


def random_call(xp, random, node):
    a, dt = node.attrs, getattr(xp, node.dtype)
    if a["maker"] == "uniform":
        return random.uniform(a["low"], a["high"], node.shape, dtype=dt)
    if a["maker"] == "normal":
        return random.normal(0.0, a["scale"], node.shape, dtype=dt)
    return random.integers(a["low"], a["high"], node.shape, dtype=dt)


def transpose(m, x, how, axes):
    if how == "T":
        return x.T
    if how == "mT":
        return x.mT
    return m.permute_dims(x, axes)


def lazy_input(node, env):
    """Make input `node` with lazyarr the way its maker says."""
    import lazyarr as xp
    from lazyarr import random
    a, shape = node.attrs, node.shape
    dt = getattr(xp, node.dtype)
    kw = {} if a.get("omit_dtype") else {"dtype": dt}
    mk = a["maker"]
    grad_kw = {"requires_grad": True} if a.get("param") and a.get("grad_style") == "kwarg" else {}
    if mk == "asarray_numpy":
        t = xp.asarray(np.array(a["data"], dtype=node.dtype), **grad_kw)
    elif mk == "asarray_list":
        t = xp.asarray(np.array(a["data"], dtype=node.dtype).tolist(), **kw, **grad_kw)
    elif mk == "asarray_scalar":
        t = xp.asarray(a["value"], **kw, **grad_kw)
    elif mk in ("ones", "zeros"):
        t = getattr(xp, mk)(shape, **kw)
    elif mk == "full":
        t = xp.full(shape, a["value"], **kw)
    elif mk in ("ones_like", "zeros_like"):
        t = getattr(xp, mk)(env[a["base"]])
    elif mk == "full_like":
        t = xp.full_like(env[a["base"]], a["value"])
    elif mk == "arange":
        t = xp.reshape(xp.arange(a["start"], a["stop"], a["step"], **kw), shape)
    elif mk == "linspace":
        t = xp.reshape(xp.linspace(a["start"], a["stop"], a["num"], endpoint=a["endpoint"], **kw), shape)
    elif mk == "eye":
        t = xp.eye(shape[0], shape[1], k=a["k"], **kw)
    elif mk in ("uniform", "normal", "integers"):
        random.seed(a["rseed"])
        t = random_call(xp, random, node)
    elif mk == "slice_view":
        t = lazy_view_base(xp, node)[a["key"]]
    elif mk == "transpose_view":
        t = transpose(xp, lazy_view_base(xp, node), a["how"], a["axes"])
    elif mk == "broadcast_view":
        t = xp.broadcast_to(xp.asarray(np.asarray(a["data"], dtype=node.dtype)), shape)
    else:
        raise AssertionError(mk)
    if a.get("realize") == "before":
        t.realize()
    if a.get("param") and not grad_kw:
        if a["grad_style"] == "attr":
            t.requires_grad = True
        else:
            t = t.requires_grad_()
    if a.get("realize") == "after":
        t.realize()
    return t


def lazy_view_base(xp, node):
    a = node.attrs
    if a["base_maker"] == "asarray":
        return xp.asarray(np.asarray(a["base"], dtype=node.dtype))
    return xp.reshape(xp.linspace(-1.5, 2.0, size_of(a["base_shape"]), dtype=getattr(xp, node.dtype)),
                      a["base_shape"])


def render_input(node):
    a, shape, dt = node.attrs, node.shape, node.dtype
    kw = "" if a.get("omit_dtype") else f", dtype=xp.{dt}"
    mk = a["maker"]
    grad_kw = ", requires_grad=True" if a.get("param") and a.get("grad_style") == "kwarg" else ""
    if mk == "asarray_numpy":
        s = f"xp.asarray({render_array(a['data'], dt)}{grad_kw})"
    elif mk == "asarray_list":
        s = f"xp.asarray({render_list(a['data'], dt)}{kw}{grad_kw})"
    elif mk == "asarray_scalar":
        s = f"xp.asarray({a['value']!r}{kw}{grad_kw})"
    elif mk in ("ones", "zeros"):
        s = f"xp.{mk}({shape}{kw})"
    elif mk == "full":
        s = f"xp.full({shape}, {a['value']!r}{kw})"
    elif mk in ("ones_like", "zeros_like"):
        s = f"xp.{mk}(v{a['base']})"
    elif mk == "full_like":
        s = f"xp.full_like(v{a['base']}, {a['value']!r})"
    elif mk == "arange":
        s = f"xp.reshape(xp.arange({a['start']!r}, {a['stop']!r}, {a['step']!r}{kw}), {shape})"
    elif mk == "linspace":
        s = f"xp.reshape(xp.linspace({a['start']!r}, {a['stop']!r}, {a['num']}, endpoint={a['endpoint']}{kw}), {shape})"
    elif mk == "eye":
        s = f"xp.eye({shape[0]}, {shape[1]}, k={a['k']}{kw})"
    elif mk == "uniform":
        s = f"random.uniform({a['low']!r}, {a['high']!r}, {shape}, dtype=xp.{dt})"
    elif mk == "normal":
        s = f"random.normal(0.0, {a['scale']!r}, {shape}, dtype=xp.{dt})"
    elif mk == "integers":
        s = f"random.integers({a['low']}, {a['high']}, {shape}, dtype=xp.{dt})"
    elif mk in ("slice_view", "transpose_view"):
        if a["base_maker"] == "asarray":
            base = f"xp.asarray({render_array(a['base'], dt)})"
        else:
            base = (f"xp.reshape(xp.linspace(-1.5, 2.0, {size_of(a['base_shape'])}, dtype=xp.{dt}), "
                    f"{a['base_shape']})")
        if mk == "slice_view":
            s = f"{base}[{render_key(a['key'])}]"
        else:
            s = {"T": f"{base}.T", "mT": f"{base}.mT"}.get(a["how"], f"xp.permute_dims({base}, {a['axes']})")
    elif mk == "broadcast_view":
        s = f"xp.broadcast_to(xp.asarray({render_array(a['data'], dt)}), {shape})"
    else:
        raise AssertionError(mk)
    if mk in ("uniform", "normal", "integers"):
        s = f"(random.seed({a['rseed']}), {s})[1]"
    lines = [s]
    if a.get("realize") == "before":
        lines.append(".realize()")
    if a.get("param") and not grad_kw:
        lines.append(".requires_grad_()" if a["grad_style"] == "method" else "  # then .requires_grad = True")
    if a.get("realize") == "after":
        lines.append(".realize()")
    return lines


def render_key(key):
    parts = []
    for k in key:
        if k is None:
            parts.append("None")
        elif k is Ellipsis:
            parts.append("...")
        elif isinstance(k, slice):
            f = lambda v: "" if v is None else str(v)
            parts.append(f"{f(k.start)}:{f(k.stop)}" + ("" if k.step is None else f":{k.step}"))
        else:
            parts.append(str(k))
    return ", ".join(parts) + ("," if len(parts) == 1 else "")


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


# ---------------------------------------------------------------------------------------------
# operations: evaluation with a backend B, and rendering as lazyarr source

def call(B, name, *args, **kw):
    return getattr(B.m, name)(*args, **kw)


def method(B, x, name, *args, **kw):
    if B.methods:
        return getattr(x, name)(*args, **kw)
    return call(B, name, x, *args, **kw)


def ev_binary(B, fn, style, a, b):
    if style == "op":
        return BINARY_OPERATORS[fn](a, b)
    return call(B, fn, a, b)


def render_binary(fn, style, a, b):
    if style == "op":
        return f"{a} {BINARY_SYMBOLS[fn]} {b}"
    return f"xp.{fn}({a}, {b})"


def denominator(B, kind, b):
    m = B.m
    if kind == "abs05":
        B.kink("abs", b)
        return m.abs(b) + 0.5
    if kind == "negabs1":
        B.kink("abs", b)
        return -(m.abs(b) + 1.0)
    if kind == "sq1":
        return b * b + 1.0
    if kind == "sqrt1":           # b >= 0 by construction (a mean of squares)
        return m.sqrt(b + 1.0)
    raise AssertionError(kind)


DENOMINATORS = {"abs05": "(xp.abs({b}) + 0.5)", "negabs1": "(-(xp.abs({b}) + 1.0))", "sq1": "({b} * {b} + 1.0)",
                "sqrt1": "xp.sqrt({b} + 1.0)"}


def ev_unary(B, a, x):
    f, m = a["fn"], B.m
    if f == "negative":
        return -x if a["style"] == "op" else m.negative(x)
    if f == "abs":
        B.kink("abs", x)
        return abs(x) if a["style"] == "op" else m.abs(x)
    if f in ("exp", "tanh", "sin", "cos", "square"):
        return getattr(m, f)(x)
    if f == "log1abs":
        B.kink("abs", x)
        return m.log(m.abs(x) + 1.0)
    if f == "log1sq":
        return m.log(x * x + 1.0)
    if f == "sqrtabs":
        return m.sqrt(m.abs(x))
    if f == "sqrtabs_c":
        B.kink("abs", x)
        return m.sqrt(m.abs(x) + 0.25)
    if f == "sqrtsq":
        return m.sqrt(x * x + 0.25)
    if f == "softsign":
        return x / (m.abs(x) + 1.0)
    if f == "logical_not":
        return ~x if a["style"] == "op" else m.logical_not(x)
    raise AssertionError(f)


UNARY_RENDER = {"log1abs": "xp.log(xp.abs({x}) + 1.0)", "log1sq": "xp.log({x} * {x} + 1.0)",
                "sqrtabs": "xp.sqrt(xp.abs({x}))", "sqrtabs_c": "xp.sqrt(xp.abs({x}) + 0.25)",
                "sqrtsq": "xp.sqrt({x} * {x} + 0.25)", "softsign": "{x} / (xp.abs({x}) + 1.0)"}


def render_unary(a, x):
    f = a["fn"]
    if f == "negative" and a["style"] == "op":
        return f"-{x}"
    if f == "abs" and a["style"] == "op":
        return f"abs({x})"
    if f == "logical_not" and a["style"] == "op":
        return f"~{x}"
    if f in UNARY_RENDER:
        return UNARY_RENDER[f].format(x=x)
    return f"xp.{f}({x})"


POW_BASES = {"id": "{x}", "abs": "xp.abs({x})", "abs1": "(xp.abs({x}) + 1.0)", "sq1": "({x} * {x} + 1.0)",
             "abs05": "(xp.abs({x}) + 0.5)"}


def pow_base(B, kind, x):
    m = B.m
    if kind == "id":
        return x
    if kind == "sq1":
        return x * x + 1.0
    B.kink("abs", x)
    if kind == "abs":
        return m.abs(x)
    return m.abs(x) + (1.0 if kind == "abs1" else 0.5)


def int_divisor(B, a, y):
    """A divisor made from y that is never 0 and never -1 (INT_MIN // -1 overflows)."""
    d = y % a["mod"] + 1
    return -d - 1 if a["neg"] else d


def evaluate_node(node, env, B, i):
    op, a = node.op, node.attrs
    if op == "input":
        return B.make(node, i, env)
    if op == "loop":
        n = len(env)
        s = env[node.args[0]]
        for _ in range(a["k"]):
            env.append(s)
            for bn in a["body"]:
                env.append(B.wrap(evaluate_node(bn, env, B, None)))
            s = env[-1]
            del env[n:]
        return s
    x = [env[j] for j in node.args]
    m = B.m
    if op == "unary":
        return ev_unary(B, a, x[0])
    if op == "binary":
        if a["fn"] in ("maximum", "minimum"):
            B.kink("maximum", x[0], x[1])
        return ev_binary(B, a["fn"], a["style"], x[0], x[1])
    if op == "scalar":
        c = a["value"]
        if a["fn"] in ("maximum", "minimum"):
            B.kink("maximum", x[0], c)
        return ev_binary(B, a["fn"], a["style"], *((c, x[0]) if a["side"] == "left" else (x[0], c)))
    if op == "divide":
        return ev_binary(B, "divide", a["style"], x[0], denominator(B, a["den"], x[1]))
    if op == "floordiv":            # float floor_divide / remainder by a denominator or a scalar
        d = denominator(B, a["den"], x[1]) if len(x) > 1 else a["value"]
        B.kink("floor", x[0], d)
        return ev_binary(B, a["fn"], a["style"], x[0], d)
    if op == "intdiv":
        d = int_divisor(B, a, x[1]) if len(x) > 1 else a["value"]
        return ev_binary(B, a["fn"], a["style"], x[0], d)
    if op == "shift":
        return ev_binary(B, a["fn"], a["style"], x[0], a["value"])
    if op == "pow":
        base = pow_base(B, a["base"], x[0])
        return base ** a["exponent"] if a["style"] == "op" else m.pow(base, a["exponent"])
    if op == "compare":
        other = x[1] if len(x) > 1 else a["value"]
        B.kink("compare", x[0], other)
        return ev_binary(B, a["fn"], a["style"], x[0], other)
    if op == "logical":
        return ev_binary(B, a["fn"], a["style"], x[0], x[1])
    if op == "where":
        other = x[2] if len(x) > 2 else a["value"]
        return m.where(x[0], x[1], other)
    if op == "reduce":
        if a["fn"] in ("max", "min"):
            B.kink("maxred", x[0], axis=a["axis"])
        kw = {"axis": a["axis"], "keepdims": a["keepdims"]}
        if a["style"] == "method":
            return method(B, x[0], a["fn"], **kw)
        return call(B, a["fn"], x[0], **kw)
    if op == "matmul":
        return x[0] @ x[1] if a["style"] == "op" else m.matmul(x[0], x[1])
    if op == "reshape":
        if a["style"] == "method":
            return method(B, x[0], "reshape", a["shape"])
        return m.reshape(x[0], a["shape"])
    if op == "permute":
        if B.methods and a["how"] in ("T", "mT"):
            return getattr(x[0], a["how"])
        return m.permute_dims(x[0], a["axes"])
    if op == "getitem":
        return B.getitem(x[0], a["key"])
    if op == "expand_dims":
        return m.expand_dims(x[0], axis=a["axis"])
    if op == "squeeze":
        return m.squeeze(x[0], axis=a["axis"])
    if op == "flip":
        return m.flip(x[0], axis=a["axis"])
    if op == "roll":               # by slices and a concat, or by roll
        if a["style"] == "fn":
            return m.roll(x[0], a["shift"], axis=a["axis"])
        k, ax = a["shift"], a["axis"]
        pre = (slice(None),) * (ax % len(node.shape))
        return m.concat([B.getitem(x[0], pre + (slice(-k, None),)), B.getitem(x[0], pre + (slice(None, -k),))],
                        axis=ax)
    if op == "broadcast_to":
        return m.broadcast_to(x[0], a["shape"])
    if op == "concat":
        return m.concat(x, axis=a["axis"])
    if op == "stack":
        return m.stack(x, axis=a["axis"])
    if op == "astype":
        dt = B.dtype(a["to"])
        if a["style"] == "method" and B.methods:
            return x[0].astype(dt)
        return m.astype(x[0], dt)
    if op == "realize":
        return B.realize(x[0], a["style"])
    if op == "truncate":           # float -> signed int (toward zero) -> float
        B.kink("floor", x[0], 1.0)
        return m.astype(m.astype(x[0], B.dtype(a["via"])), B.dtype(node.dtype))
    if op == "mix":                # a*s + b*q: the loop's bounded update
        return x[0] * a["alpha"] + x[1] * a["beta"]
    raise AssertionError(op)


def evaluate(program, B, given=None):
    """Every node's value (a list), inputs in `given` ({node: value}) taken from there."""
    env = []
    for i, node in enumerate(program.nodes):
        if given is not None and i in given:
            env.append(given[i])
        else:
            env.append(B.wrap(evaluate_node(node, env, B, i)))
    return env


def render_node(node, name):
    op, a = node.op, node.attrs
    x = [name(j) for j in node.args]
    if op == "unary":
        return render_unary(a, x[0])
    if op == "binary":
        return render_binary(a["fn"], a["style"], x[0], x[1])
    if op == "scalar":
        c = repr(a["value"])
        return render_binary(a["fn"], a["style"], *((c, x[0]) if a["side"] == "left" else (x[0], c)))
    if op == "divide":
        return render_binary("divide", a["style"], x[0], DENOMINATORS[a["den"]].format(b=x[1]))
    if op == "floordiv":
        d = DENOMINATORS[a["den"]].format(b=x[1]) if len(x) > 1 else repr(a["value"])
        return render_binary(a["fn"], a["style"], x[0], d)
    if op == "intdiv":
        if len(x) > 1:
            d = f"(-({x[1]} % {a['mod']} + 1) - 1)" if a["neg"] else f"({x[1]} % {a['mod']} + 1)"
        else:
            d = repr(a["value"])
        return render_binary(a["fn"], a["style"], x[0], d)
    if op == "shift":
        return render_binary(a["fn"], a["style"], x[0], repr(a["value"]))
    if op == "pow":
        base = POW_BASES[a["base"]].format(x=x[0])
        return f"{base} ** {a['exponent']!r}" if a["style"] == "op" else f"xp.pow({base}, {a['exponent']!r})"
    if op == "compare":
        return render_binary(a["fn"], a["style"], x[0], x[1] if len(x) > 1 else repr(a["value"]))
    if op == "logical":
        return render_binary(a["fn"], a["style"], x[0], x[1])
    if op == "where":
        return f"xp.where({x[0]}, {x[1]}, {x[2] if len(x) > 2 else repr(a['value'])})"
    if op == "reduce":
        kw = f"axis={a['axis']!r}, keepdims={a['keepdims']}"
        return f"{x[0]}.{a['fn']}({kw})" if a["style"] == "method" else f"xp.{a['fn']}({x[0]}, {kw})"
    if op == "matmul":
        return f"{x[0]} @ {x[1]}" if a["style"] == "op" else f"xp.matmul({x[0]}, {x[1]})"
    if op == "reshape":
        return f"{x[0]}.reshape({a['shape']})" if a["style"] == "method" else f"xp.reshape({x[0]}, {a['shape']})"
    if op == "permute":
        return {"T": f"{x[0]}.T", "mT": f"{x[0]}.mT"}.get(a["how"], f"xp.permute_dims({x[0]}, {a['axes']})")
    if op == "getitem":
        return f"{x[0]}[{render_key(a['key'])}]"
    if op == "expand_dims":
        return f"xp.expand_dims({x[0]}, axis={a['axis']})"
    if op == "squeeze":
        return f"xp.squeeze({x[0]}, axis={a['axis']})"
    if op == "flip":
        return f"xp.flip({x[0]}, axis={a['axis']})"
    if op == "roll":
        k, ax = a["shift"], a["axis"]
        if a["style"] == "fn":
            return f"xp.roll({x[0]}, {k}, axis={ax})"
        pre = ":, " * (ax % len(node.shape))
        return f"xp.concat([{x[0]}[{pre}-{k}:], {x[0]}[{pre}:-{k}]], axis={ax})"
    if op == "broadcast_to":
        return f"xp.broadcast_to({x[0]}, {a['shape']})"
    if op == "concat":
        return f"xp.concat([{', '.join(x)}], axis={a['axis']})"
    if op == "stack":
        return f"xp.stack([{', '.join(x)}], axis={a['axis']})"
    if op == "astype":
        return f"{x[0]}.astype(xp.{a['to']})" if a["style"] == "method" else f"xp.astype({x[0]}, xp.{a['to']})"
    if op == "realize":
        return f"{x[0]}.realize()" if a["style"] == "method" else f"(xp.realize({x[0]}), {x[0]})[1]"
    if op == "truncate":
        return f"xp.astype(xp.astype({x[0]}, xp.{a['via']}), xp.{node.dtype})"
    if op == "mix":
        return f"{x[0]} * {a['alpha']!r} + {x[1]} * {a['beta']!r}"
    raise AssertionError(op)


def source(program, tail=None):
    """The program as a Python script for lazyarr (the reproducer of a failure)."""
    lines = ["import numpy as np", "import lazyarr as xp", "from lazyarr import random", ""]
    for i, node in enumerate(program.nodes):
        if node.op == "input":
            parts = render_input(node)
            expr = parts[0]
            for p in parts[1:]:
                if p.startswith("  #"):
                    lines.append(f"v{i} = {expr}")
                    lines.append(f"v{i}.requires_grad = True")
                    expr = f"v{i}"
                else:
                    expr = f"{expr}{p}"
            if expr != f"v{i}":
                lines.append(f"v{i} = {expr}")
        elif node.op == "loop":
            n = i
            name = lambda j, n=n: "s" if j == n else (f"v{j}" if j < n else f"b{j - n - 1}")
            lines.append(f"s = v{node.args[0]}")
            lines.append(f"for _ in range({node.attrs['k']}):")
            for j, bn in enumerate(node.attrs["body"]):
                lines.append(f"    b{j} = {render_node(bn, name)}")
            lines.append(f"    s = b{len(node.attrs['body']) - 1}")
            lines.append(f"v{i} = s")
        else:
            lines.append(f"v{i} = {render_node(node, lambda j: f'v{j}')}")
    outs = ", ".join(f"v{j}" for j in program.outputs)
    lines.append(tail if tail is not None else f"print({outs})")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# the generator

class Gen:
    def __init__(self, seed, attempt, kind, dtype, mode, loop, large=False):
        self.r = pyrandom.Random(f"{seed}/{attempt}/{kind}/{dtype}/{mode}/{loop}" + ("/large" if large else ""))
        self.large = large
        self.shapes = LARGE_SHAPES if large else SHAPES
        self.max_size = LARGE_MAX_SIZE if large else MAX_SIZE
        self.rng = np.random.default_rng(self.r.getrandbits(64))
        self.kind, self.dtype, self.mode = kind, dtype, mode
        self.smooth = mode == "optim"
        self.nodes = []
        self.within = None          # in a loop body: the state's shape, that every value broadcasts to
        self.body_start = None      # in a loop body: the index of the state
        self.consts = list(CONSTS)

    # -- helpers --
    def chance(self, p):
        return self.r.random() < p

    def choice(self, seq):
        return seq[self.r.randrange(len(seq))]

    def add(self, node):
        self.nodes.append(node)
        return len(self.nodes) - 1

    def is_value(self, i):
        n = self.nodes[i]
        if n.op == "input" and n.attrs.get("int_source"):
            return False
        if self.kind == "float":
            return n.dtype == self.dtype
        return n.dtype in INTS

    def candidates(self, pred=lambda n: True):
        out = []
        for i, n in enumerate(self.nodes):
            if not self.is_value(i) or not pred(n):
                continue
            if self.within is not None and not fits_into(n.shape, self.within):
                continue
            out.append(i)
        return out

    def pick(self, cands):
        if not cands:
            return None
        if self.body_start is not None:   # in a loop body: prefer values that depend on the state
            w = [8.0 if self.nodes[i].state_dep else 1.0 for i in cands]
        else:
            w = [1.0 + j for j in range(len(cands))]
        return self.r.choices(cands, weights=w)[0]

    def node(self, op, args, attrs, shape, dtype=None, bound=1.0):
        dtype = dtype or self.nodes[args[0]].dtype if args else dtype or self.dtype
        dep = any(self.nodes[j].state_dep for j in args)
        return self.add(Node(op, args, attrs, shape, dtype, bound, dep))

    def bound(self, i):
        return self.nodes[i].bound

    def squash(self, i, limit=LIMIT):
        """i, or tanh(i) where i could pass `limit` (float programs)."""
        if self.kind != "float" or self.bound(i) <= limit:
            return i
        return self.node("unary", (i,), {"fn": "tanh"}, self.nodes[i].shape, bound=1.0)

    def style(self):
        return "op" if self.chance(0.6) else "fn"

    def const(self):
        if self.kind == "float":
            fills = self.fill_values()
            if fills and self.chance(0.5):     # equal to an input made by full/ones/zeros
                return self.choice(fills)
            return self.choice(self.consts)
        if self.nodes and self.main_dtype in UNSIGNED:
            return self.r.randint(0, 9)
        return self.r.randint(-9, 9)

    def fill_values(self):
        out = []
        for n in self.nodes:
            if n.op == "input" and n.dtype in FLOATS:
                mk = n.attrs["maker"]
                if mk in ("full", "full_like"):
                    out.append(n.attrs["value"])
                elif mk in ("ones", "ones_like", "eye"):
                    out.append(1.0)
        return out

    def input_shape(self):
        """A shape for a new input: often one an input has already (twins, *_like, equal constants)."""
        shapes = [n.shape for n in self.nodes if n.op == "input" and not n.attrs.get("int_source")]
        if self.large and self.chance(0.6):
            return self.choice([sh for sh in self.shapes if size_of(sh) > 16384])
        if shapes and self.chance(0.4):
            return self.choice(shapes)
        if self.mode != "forward" and self.chance(0.2):
            return ()
        return self.choice(self.shapes)

    # -- inputs --
    def float_data(self, shape, bound=2.0, dtype=None):
        dtype = dtype or self.dtype
        if size_of(shape) > 64:
            return SeededData(self.r.randrange(10 ** 6), shape, dtype, -bound, bound)
        return self.rng.uniform(-bound, bound, shape).astype(dtype)

    def int_data(self, shape, dtype):
        info = np.iinfo(dtype)
        if self.chance(0.5):
            lo, hi = (0, 20) if dtype in UNSIGNED else (-20, 20)
        else:
            lo, hi = int(info.min), int(info.max)
        if size_of(shape) > 64:
            return SeededData(self.r.randrange(10 ** 6), shape, dtype, lo, hi)
        data = self.rng.integers(lo, hi, shape, dtype=dtype, endpoint=True)
        if data.size and self.chance(0.3):       # the extremes, where wrapping shows
            flat = data.reshape(-1)
            for j in self.rng.integers(0, flat.size, min(flat.size, 2)):
                flat[j] = self.choice([int(info.min), int(info.max), int(info.max) - 1, -1 if dtype in SIGNED else 1])
        return data

    def new_input(self, shape, dtype=None, param=None, data_bound=2.0):
        dtype = dtype or self.dtype
        is_float = dtype in FLOATS
        a = {}
        if param is None:
            param = self.mode in ("grad", "optim") and is_float and self.chance(0.6)
        same = [i for i, n in enumerate(self.nodes) if n.op == "input" and n.shape == tuple(shape)
                and n.dtype == dtype and not n.attrs.get("int_source") and n.attrs["maker"] != "slice_view"]
        if same and self.chance(0.35):      # the twin of an input: equal values, another tensor
            twin = self.nodes[self.choice(same)]
            a = {k: v for k, v in twin.attrs.items() if k not in ("param", "grad_style", "realize")}
            return self._finish_input(a, shape, dtype, param, twin.bound)
        makers = ["asarray_numpy", "asarray_list", "ones", "zeros", "full", "arange", "linspace"]
        if not shape:
            makers += ["asarray_scalar", "full", "full"]
        if len(shape) == 2:
            makers += ["eye"]
        if same:
            makers += ["ones_like", "zeros_like", "full_like"]
        makers += ["uniform", "normal"] if is_float else ["integers"]
        if self.mode != "forward":
            makers += ["ones", "full", "full_like" if same else "zeros"]
        if shape:
            makers += ["slice_view", "slice_view", "transpose_view" if len(shape) >= 2 else "slice_view",
                       "broadcast_view"]
        if not is_float:
            makers = [m for m in makers if m != "linspace"]
        mk = self.choice(makers)
        if mk == "arange" and not is_float and 3 * size_of(shape) + 10 > np.iinfo(dtype).max:
            mk = "asarray_numpy"            # the range would not fit the dtype
        a["maker"] = mk
        bound = 1.0
        n = size_of(shape)
        if mk in ("asarray_numpy", "asarray_list"):
            a["data"] = self.float_data(shape, data_bound, dtype) if is_float else self.int_data(shape, dtype)
            if mk == "asarray_list" and dtype in ("float64", "int64") and self.chance(0.5):
                a["omit_dtype"] = True
        elif mk == "asarray_scalar":
            a["value"] = float(self.float_data((), data_bound, dtype)) if is_float else int(self.int_data((), dtype))
            if dtype in ("float64", "int64") and self.chance(0.5):
                a["omit_dtype"] = True
            bound = abs(a["value"]) if is_float else 1.0
        elif mk in ("full", "full_like"):
            a["value"] = self.choice(self.consts) if is_float else self.const_for(dtype)
            bound = abs(a["value"]) if is_float else 1.0
            if mk == "full" and dtype in ("float64", "int64") and self.chance(0.5):
                a["omit_dtype"] = True
            if mk == "full_like":
                a["base"] = self.choice(same)
        elif mk in ("ones", "zeros") and dtype == "float64" and self.chance(0.5):
            a["omit_dtype"] = True
        elif mk == "arange":
            if is_float:
                step = self.choice([0.5, 0.25, -0.5, 1.0, -0.25])
                start = self.choice([-1.0, 0.0, 0.5, 1.5])
                a.update(start=start, step=step, stop=start + (n - 0.5) * step)
                bound = max(abs(start), abs(start + (n - 1) * step))
            else:
                if dtype in SIGNED:
                    step = self.choice([1, 2, -1, -2] if BITS[dtype] == 8 else [1, 2, -1, 3, -3])
                else:
                    step = self.choice([1, 2, 3])
                start = self.r.randint(-5, 5) if dtype in SIGNED else self.r.randint(0, 5) - (min(step, 0) * n)
                a.update(start=start, step=step, stop=start + n * step)
        elif mk == "linspace":
            a.update(start=self.choice([-1.0, 0.0, -2.0, 0.5]), stop=self.choice([1.0, 2.0, -0.5, 1.5]),
                     num=n, endpoint=self.chance(0.7))
            bound = max(abs(a["start"]), abs(a["stop"]))
        elif mk == "eye":
            a["k"] = self.choice([0, 0, 1, -1])
        elif mk in ("ones_like", "zeros_like"):
            a["base"] = self.choice(same)
        elif mk == "uniform":
            a.update(rseed=self.r.randrange(1000), low=-data_bound, high=data_bound)
            bound = data_bound
        elif mk == "normal":
            a.update(rseed=self.r.randrange(1000), scale=data_bound / 4)
            bound = data_bound * 2.5      # a bound on what these few draws reach, checked below
        elif mk == "integers":
            lo, hi = (0, 50) if dtype in UNSIGNED else (-50, 50)
            a.update(rseed=self.r.randrange(1000), low=lo, high=hi)
        elif mk == "slice_view":
            a.update(self.view_key(shape, dtype, is_float, data_bound))
            bound = data_bound
        elif mk == "transpose_view":
            how = "T" if len(shape) == 2 and self.chance(0.5) else ("mT" if self.chance(0.4) else "axes")
            axes = tuple(self.r.sample(range(len(shape)), len(shape)))
            if how == "T":
                axes = tuple(reversed(range(len(shape))))
            elif how == "mT":
                axes = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
            inv = tuple(np.argsort(axes))
            base_shape = tuple(shape[j] for j in inv)
            a.update(how=how, axes=axes, base_shape=base_shape,
                     base_maker=self.choice(["asarray", "linspace"]) if is_float else "asarray")
            if a["base_maker"] == "asarray":
                a["base"] = self.float_data(base_shape, dtype=dtype) if is_float else self.int_data(base_shape, dtype)
            bound = data_bound
        elif mk == "broadcast_view":
            small = tuple(1 if self.chance(0.5) else s for s in shape)[self.r.randrange(len(shape) + 1):]
            a["data"] = self.float_data(small, dtype=dtype) if is_float else self.int_data(small, dtype)
            bound = data_bound
        return self._finish_input(a, shape, dtype, param, bound)

    def const_for(self, dtype):
        return self.r.randint(0, 9) if dtype in UNSIGNED else self.r.randint(-9, 9)

    def _finish_input(self, a, shape, dtype, param, bound):
        if param:
            a["param"] = True
            styles = ["attr", "method"] + (["kwarg", "kwarg"] if a["maker"].startswith("asarray") else [])
            a["grad_style"] = self.choice(styles)
        a["realize"] = self.choice([None, None, "before", "after"] if param else [None, "before"])
        node = Node("input", (), a, shape, dtype, bound)
        i = self.add(node)
        if dtype in FLOATS:
            v = numpy_input(node)
            node.bound = max(float(np.max(np.abs(v))) if v.size else 0.0, 1e-3)
        return i

    def view_key(self, shape, dtype, is_float, data_bound):
        """A base array and a basic index whose result has `shape`."""
        while True:
            key, base_shape = [], []
            lead = self.chance(0.3)
            if lead:                                   # an integer index into an extra leading axis
                n = self.r.randint(1, 3)
                base_shape.append(n)
                key.append(self.r.randrange(-n, n))
            for d in shape:
                step = self.choice([1, 1, 2, -1, -2, 3])
                n = self.r.randint(d, (d - 1) * abs(step) + 1 + 2)
                span = (d - 1) * abs(step) + 1
                if n < span:
                    n = span
                if step > 0:
                    start = self.r.randint(0, n - span)
                    stop = start + span
                    st = self.choice([start, start - n]) if start else self.choice([None, 0])
                    sp = self.choice([stop, stop - n if stop < n else None]) if stop < n else None
                else:
                    start = self.r.randint(span - 1, n - 1)
                    stop = start - span
                    st = None if start == n - 1 and self.chance(0.5) else self.choice([start, start - n])
                    sp = None if stop < 0 else self.choice([stop, stop - n])
                    if sp == -1:
                        sp = stop
                base_shape.append(n)
                key.append(slice(st, sp, step if (step != 1 or self.chance(0.5)) else None))
            if self.chance(0.2) and shape:             # an Ellipsis for the leading full slices
                k = 1 if lead else 0
                if all(isinstance(s, slice) and s == slice(None, None, None) for s in key[k:k + 1]):
                    key[k:k + 1] = [Ellipsis]
            key, base_shape = tuple(key), tuple(base_shape)
            if size_of(base_shape) <= 4 * self.max_size and np.empty(base_shape)[key].shape == tuple(shape):
                break
        out = {"key": key, "base_shape": base_shape,
               "base_maker": self.choice(["asarray", "asarray", "linspace"]) if is_float else "asarray"}
        if out["base_maker"] == "asarray":
            out["base"] = self.float_data(base_shape, data_bound, dtype) if is_float else self.int_data(base_shape, dtype)
        return out

    # -- operations --
    def op_unary(self):
        i = self.pick(self.candidates())
        if i is None:
            return None
        x = self.nodes[i]
        if self.kind == "int":
            return self.node("unary", (i,), {"fn": self.choice(["negative", "abs"]), "style": self.style()},
                             x.shape)
        fns = ["tanh", "sin", "negative", "exp", "log1abs", "sqrtabs", "abs", "square", "softsign", "cos"]
        if self.smooth:
            fns = ["tanh", "sin", "negative", "exp", "log1sq", "sqrtsq", "square", "cos"]
        elif self.mode == "grad":
            fns = [f if f != "sqrtabs" else "sqrtabs_c" for f in fns]
        f = self.choice(fns)
        if f == "exp":
            i = self.squash(i, 4.0)
            b = math.exp(min(self.bound(i), 4.0))
        elif f == "square":
            i = self.squash(i, 6.0)
            b = self.bound(i) ** 2
        elif f in ("tanh", "sin", "cos", "softsign"):
            b = 1.0
        elif f in ("log1abs", "log1sq"):
            b = math.log(self.bound(i) ** 2 + 1.0)
        elif f in ("sqrtabs", "sqrtabs_c", "sqrtsq"):
            b = math.sqrt(self.bound(i) + 0.25)
        else:
            b = self.bound(i)
        return self.node("unary", (i,), {"fn": f, "style": self.style()}, self.nodes[i].shape, bound=b)

    def partner(self, i, max_size=None):
        max_size = max_size or self.max_size
        """A value broadcastable with node i (within the size limit)."""
        s = self.nodes[i].shape
        cands = [j for j in self.candidates() if (b := broadcast(s, self.nodes[j].shape)) is not None
                 and size_of(b) <= max_size and (self.within is None or fits_into(b, self.within))
                 and (self.kind == "float" or self.int_promotes(self.nodes[i].dtype, self.nodes[j].dtype))]
        return self.pick(cands)

    def int_promotes(self, a, b):
        return a == "bool" or b == "bool" or promote_int(a, b) is not None

    def op_binary(self):
        i = self.pick(self.candidates())
        if i is None:
            return None
        j = self.partner(i)
        if j is None:
            return None
        shape = broadcast(self.nodes[i].shape, self.nodes[j].shape)
        if self.kind == "int":
            fn = self.choice(["add", "subtract", "multiply", "maximum", "minimum", "bitwise_and", "bitwise_or",
                              "bitwise_xor", "multiply", "add"])
            style = "fn" if fn in ("maximum", "minimum") else self.style()
            dt = promote_int(self.nodes[i].dtype, self.nodes[j].dtype)
            return self.node("binary", (i, j), {"fn": fn, "style": style}, shape, dtype=dt)
        fns = ["add", "subtract", "multiply", "multiply", "maximum", "minimum", "add"]
        if self.smooth:
            fns = ["add", "subtract", "multiply", "multiply"]
        fn = self.choice(fns)
        if fn == "multiply":
            i, j = self.squash(i, 6.0), self.squash(j, 6.0)
            b = self.bound(i) * self.bound(j)
        elif fn in ("add", "subtract"):
            b = self.bound(i) + self.bound(j)
        else:
            b = max(self.bound(i), self.bound(j))
        style = "fn" if fn in ("maximum", "minimum") else self.style()
        return self.node("binary", (i, j), {"fn": fn, "style": style}, shape, bound=b)

    def op_scalar(self):
        i = self.pick(self.candidates())
        if i is None:
            return None
        x = self.nodes[i]
        c = self.const()
        if self.kind == "int":
            fn = self.choice(["add", "subtract", "multiply", "multiply", "bitwise_xor", "maximum"])
            if x.dtype in UNSIGNED:
                c = abs(c)
            side = "left" if self.chance(0.3) and fn != "maximum" else "right"
            return self.node("scalar", (i,), {"fn": fn, "value": c, "side": side,
                                              "style": "fn" if fn == "maximum" else self.style()}, x.shape)
        fns = ["add", "subtract", "multiply", "divide", "multiply"] + ([] if self.smooth else ["maximum"])
        fn = self.choice(fns)
        side = "left" if fn in ("add", "subtract", "multiply") and self.chance(0.4) else "right"
        if self.chance(0.15) and fn in ("add", "multiply", "subtract"):
            c = int(c) if c == int(c) else c     # a Python int with a float array
        b = {"add": self.bound(i) + abs(c), "subtract": self.bound(i) + abs(c), "multiply": self.bound(i) * abs(c),
             "divide": self.bound(i) / abs(c), "maximum": max(self.bound(i), abs(c))}[fn]
        return self.node("scalar", (i,), {"fn": fn, "value": c, "side": side,
                                          "style": "fn" if fn == "maximum" else self.style()}, x.shape, bound=b)

    def op_divide(self):
        if self.kind != "float":
            return self.op_intdiv()
        i = self.pick(self.candidates())
        if i is None:
            return None
        j = self.partner(i)
        if j is None:
            return None
        den = self.choice(["sq1"] if self.smooth else ["abs05", "negabs1", "sq1"])
        if den == "sq1":
            j = self.squash(j, 6.0)
        b = self.bound(i) / {"abs05": 0.5, "negabs1": 1.0, "sq1": 1.0}[den]
        shape = broadcast(self.nodes[i].shape, self.nodes[j].shape)
        return self.node("divide", (i, j), {"den": den, "style": self.style()}, shape, bound=b)

    def op_floordiv(self):
        """Float floor_divide / remainder (forward programs)."""
        if self.kind != "float" or self.mode != "forward":
            return self.op_divide()
        i = self.pick(self.candidates())
        if i is None:
            return None
        fn = self.choice(["floor_divide", "remainder"])
        if self.chance(0.5):
            c = self.choice([0.5, -0.75, 1.5, -2.0, 0.3])
            b = self.bound(i) / abs(c) + 1 if fn == "floor_divide" else abs(c)
            return self.node("floordiv", (i,), {"fn": fn, "value": c, "style": self.style()}, self.nodes[i].shape,
                             bound=b)
        j = self.partner(i)
        if j is None:
            return None
        den = self.choice(["abs05", "negabs1"])
        shape = broadcast(self.nodes[i].shape, self.nodes[j].shape)
        dmax = self.bound(j) + 1.0
        b = self.bound(i) / 0.5 + 1 if fn == "floor_divide" else dmax
        return self.node("floordiv", (i, j), {"fn": fn, "den": den, "style": self.style()}, shape, bound=b)

    def op_intdiv(self):
        i = self.pick(self.candidates())
        if i is None:
            return None
        x = self.nodes[i]
        fn = self.choice(["floor_divide", "remainder"])
        if self.chance(0.4):
            c = self.choice([2, 3, 4, 5, 7] if x.dtype in UNSIGNED else [-7, -5, -3, -2, 2, 3, 4, 5, 7])
            return self.node("intdiv", (i,), {"fn": fn, "value": c, "style": self.style()}, x.shape)
        j = self.partner(i)
        if j is None:
            return None
        dt = promote_int(x.dtype, self.nodes[j].dtype)
        neg = dt in SIGNED and self.chance(0.5)
        shape = broadcast(x.shape, self.nodes[j].shape)
        return self.node("intdiv", (i, j), {"fn": fn, "mod": self.r.randint(3, 9), "neg": neg,
                                            "style": self.style()}, shape, dtype=dt)

    def op_shift(self):
        i = self.pick(self.candidates())
        if i is None:
            return None
        x = self.nodes[i]
        fn = self.choice(["bitwise_left_shift", "bitwise_right_shift"])
        return self.node("shift", (i,), {"fn": fn, "value": self.r.randint(0, min(BITS[x.dtype] - 1, 7)),
                                         "style": self.style()}, x.shape)

    def op_pow(self):
        i = self.pick(self.candidates())
        if i is None:
            return None
        x = self.nodes[i]
        if self.kind == "int":
            e = self.choice([2, 3, 2, 0, 1])
            if x.dtype in SIGNED and self.chance(0.08):     # NumPy raises ValueError
                e = self.choice([-1, -2])
            return self.node("pow", (i,), {"base": "id", "exponent": e, "style": self.style()}, x.shape)
        options = [("id", 2), ("id", 3), ("id", 2.0), ("abs1", -1), ("abs1", 1.5), ("sq1", -0.5)]
        if self.smooth:
            options = [("id", 2), ("id", 3), ("sq1", -1), ("sq1", 0.5), ("sq1", -0.5)]
        elif self.mode == "grad":
            options += [("abs05", 0.5)]
        else:
            options += [("abs", 0.5)]
        base, e = self.choice(options)
        i = self.squash(i, 3.0 if e == 3 else 6.0)
        bx = self.bound(i)
        bb = {"id": bx, "abs": bx, "abs1": bx + 1, "abs05": bx + 0.5, "sq1": bx * bx + 1}[base]
        b = bb ** e if e > 0 else 1.0
        return self.node("pow", (i,), {"base": base, "exponent": e, "style": self.style()},
                         self.nodes[i].shape, bound=b)

    def op_where(self):
        if self.smooth:
            return self.op_binary()
        i = self.pick(self.candidates())
        if i is None:
            return None
        fn = self.choice(["greater", "less", "greater_equal", "less_equal"])
        if self.kind == "int" and self.chance(0.3):
            fn = self.choice(["equal", "not_equal"])
        if self.chance(0.4):
            c = self.choice([0.3141, -0.2718, 0.5, 1.1, -1.3]) if self.kind == "float" else self.const()
            if self.kind == "int" and self.nodes[i].dtype in UNSIGNED:
                c = abs(c)
            cond = self.node("compare", (i,), {"fn": fn, "value": c, "style": self.style()}, self.nodes[i].shape,
                             dtype="bool")
        else:
            j = self.partner(i)
            if j is None:
                return None
            shape = broadcast(self.nodes[i].shape, self.nodes[j].shape)
            cond = self.node("compare", (i, j), {"fn": fn, "style": self.style()}, shape, dtype="bool")
        if self.chance(0.2):        # combine two conditions
            k = self.pick(self.candidates())
            if k is not None and (s := broadcast(self.nodes[cond].shape, self.nodes[k].shape)) is not None \
                    and size_of(s) <= self.max_size and fits_into(s, self.within):
                c2 = self.node("compare", (k,), {"fn": "greater", "value": 0 if self.kind == "int" else -0.1234,
                                                 "style": "op"}, self.nodes[k].shape, dtype="bool")
                if self.chance(0.3):
                    c2 = self.node("unary", (c2,), {"fn": "logical_not", "style": self.style()},
                                   self.nodes[c2].shape, dtype="bool")
                cond = self.node("logical", (cond, c2), {"fn": self.choice(["logical_and", "logical_or"]),
                                                         "style": self.style()}, s, dtype="bool")
        if self.within is not None and not fits_into(self.nodes[cond].shape, self.within):
            return None
        x = self.partner(cond) if self.chance(0.8) else i
        if x is None:
            return None
        cs = self.nodes[cond].shape
        shape = broadcast(cs, self.nodes[x].shape)
        if self.chance(0.3):
            v = self.const()
            if self.kind == "int" and self.nodes[x].dtype in UNSIGNED:
                v = abs(v)
            return self.node("where", (cond, x), {"value": v}, shape, dtype=self.nodes[x].dtype,
                             bound=max(self.bound(x), abs(v)))
        y = self.partner(x)
        if y is None or broadcast(shape, self.nodes[y].shape) is None or \
                size_of(broadcast(shape, self.nodes[y].shape)) > self.max_size or \
                not fits_into(broadcast(shape, self.nodes[y].shape), self.within) or \
                (self.kind == "int" and not self.int_promotes(self.nodes[x].dtype, self.nodes[y].dtype)):
            return None
        dt = self.nodes[x].dtype if self.kind == "float" else promote_int(self.nodes[x].dtype, self.nodes[y].dtype)
        return self.node("where", (cond, x, y), {}, broadcast(shape, self.nodes[y].shape), dtype=dt,
                         bound=max(self.bound(x), self.bound(y)))

    def op_reduce(self):
        i = self.pick(self.candidates())
        if i is None:
            return None
        x = self.nodes[i]
        fns = ["sum", "mean", "max", "min", "prod", "sum"]
        if self.kind == "int":
            fns = ["sum", "max", "min", "prod", "sum"]
        if self.smooth:
            fns = ["sum", "mean", "prod", "sum", "mean"]
        fn = self.choice(fns)
        nd = len(x.shape)
        keepdims = self.within is not None or self.chance(0.4)
        r = self.r.random()
        if nd == 0 or r < 0.3:
            axis = None
        elif r < 0.8 or nd == 1:
            axis = self.r.randrange(-nd, nd)
        else:
            axis = tuple(sorted(self.r.sample(range(nd), self.r.randint(1, nd))))
            if self.chance(0.3):
                axis = tuple(a - nd for a in axis)
        axes = range(nd) if axis is None else ([axis % nd] if isinstance(axis, int) else [a % nd for a in axis])
        count = size_of([x.shape[a] for a in axes])
        shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape)) if keepdims else \
            tuple(s for d, s in enumerate(x.shape) if d not in axes)
        if self.kind == "int":
            dt = x.dtype
            if fn in ("sum", "prod"):
                dt = "uint64" if x.dtype in UNSIGNED else "int64"
            return self.node("reduce", (i,), {"fn": fn, "axis": axis, "keepdims": keepdims,
                                              "style": self.choice(["fn", "method"])}, shape, dtype=dt)
        if fn == "prod":
            lim = max(1.5 if count <= 8 else 1.0, LIMIT ** (1.0 / max(count, 1)))
            if self.bound(i) > lim:
                i = self.node("unary", (i,), {"fn": "tanh"}, x.shape, bound=1.0)
            b = math.exp(min(count * math.log(max(self.bound(i), 1e-300)), 700.0))
        elif fn == "sum":
            b = self.bound(i) * count
        else:
            b = self.bound(i)
        return self.node("reduce", (i,), {"fn": fn, "axis": axis, "keepdims": keepdims,
                                          "style": self.choice(["fn", "method"])}, shape, bound=b)

    def op_matmul(self):
        i = self.pick(self.candidates(lambda n: len(n.shape) >= 1))
        if i is None:
            return None
        x = self.nodes[i]
        k = x.shape[-1]
        if self.within is not None:         # x @ W, W square and loop-invariant: the shape stays
            cands = [j for j in range(self.body_start) if k > 1 and self.is_value(j)
                     and self.nodes[j].shape == (k, k)]
            if not cands:
                return None
            j = self.pick(cands)
            shape = x.shape
        else:
            cands = [j for j in self.candidates(lambda n: len(n.shape) >= 1)
                     if self.matmul_shape(x.shape, self.nodes[j].shape)]
            if cands and self.chance(0.6):
                j = self.pick(cands)
            else:
                m = self.choice([1, 2, 3, 4])
                j = self.new_input((k,) if self.chance(0.2) else (k, m), data_bound=1.0)
            shape = self.matmul_shape(x.shape, self.nodes[j].shape)
            if size_of(shape) > self.max_size:
                return None
        if self.kind == "float":
            i, j = self.squash(i, 6.0), self.squash(j, 6.0)
        b = k * self.bound(i) * self.bound(j) if self.kind == "float" else 1.0
        dt = self.nodes[i].dtype if self.kind == "float" else promote_int(self.nodes[i].dtype, self.nodes[j].dtype)
        if dt is None:
            return None
        return self.node("matmul", (i, j), {"style": self.style()}, shape, dtype=dt, bound=b)

    @staticmethod
    def matmul_shape(a, b):
        if not a or not b:
            return None
        if len(b) == 1:
            return a[:-1] if a[-1] == b[0] else None
        if a[-1] != b[-2]:
            return None
        if len(a) == 1:
            return b[:-2] + b[-1:]
        batch = broadcast(a[:-2], b[:-2])
        return None if batch is None else batch + (a[-2], b[-1])

    def op_movement(self):
        if self.within is not None:
            return self.op_body_movement()
        i = self.pick(self.candidates())
        if i is None:
            return None
        x = self.nodes[i]
        s, nd = x.shape, len(x.shape)
        kinds = ["reshape", "getitem", "getitem", "broadcast_to", "expand_dims", "flip"]
        if nd >= 2:
            kinds += ["permute", "permute"]
        if 1 in s:
            kinds += ["squeeze"]
        k = self.choice(kinds)
        b = x.bound
        if k == "reshape":
            shape = self.choice(factorizations(size_of(s)))
            spec = shape
            if shape and self.chance(0.3):
                spec = tuple(-1 if d == self.r.randrange(len(shape)) else v for d, v in enumerate(shape))
                if spec.count(-1) != 1:
                    spec = shape
            return self.node("reshape", (i,), {"shape": spec, "style": self.choice(["fn", "method"])}, shape, bound=b)
        if k == "getitem":
            if nd == 0:
                key = self.choice([(None,), (Ellipsis,), (None, None)])
            else:
                key = []
                for d in s:
                    r = self.r.random()
                    if r < 0.25:
                        key.append(self.r.randrange(-d, d))
                    elif r < 0.4:
                        key.append(slice(None))
                    else:
                        step = self.choice([1, 2, -1, -2, -1])
                        start = self.choice([None, self.r.randrange(-d, d)])
                        stop = self.choice([None, self.r.randrange(-d, d + 1)])
                        sl = slice(start, stop, step)
                        if not len(range(*sl.indices(d))):
                            sl = slice(None, None, step)
                        key.append(sl)
                if self.chance(0.2):
                    key.insert(self.r.randint(0, len(key)), None)
                if self.chance(0.2) and isinstance(key[-1], slice) and key[-1] == slice(None):
                    key[-1:] = []
                    key.insert(0, Ellipsis) if self.chance(0.5) else None
                key = tuple(key)
            shape = np.empty(s)[key].shape
            if size_of(shape) == 0:
                return None
            return self.node("getitem", (i,), {"key": key}, shape, bound=b)
        if k == "broadcast_to":
            target = list(s)
            target = [self.choice([2, 3]) if d == 1 and self.chance(0.6) else d for d in target]
            if len(target) < 3 and self.chance(0.5):
                target.insert(0, self.choice([1, 2]))
            target = tuple(target)
            if size_of(target) > self.max_size:
                return None
            return self.node("broadcast_to", (i,), {"shape": target}, target, bound=b)
        if k == "expand_dims":
            if nd >= 3:
                return None
            axis = self.r.randint(-nd - 1, nd)
            shape = np.expand_dims(np.empty(s), axis).shape
            return self.node("expand_dims", (i,), {"axis": axis}, shape, bound=b)
        if k == "squeeze":
            axis = self.choice([d for d, v in enumerate(s) if v == 1])
            if self.chance(0.4):
                axis -= nd
            return self.node("squeeze", (i,), {"axis": axis}, tuple(v for d, v in enumerate(s) if d != axis % nd),
                             bound=b)
        if k == "flip":
            axis = None if nd == 0 or self.chance(0.3) else self.r.randrange(-nd, nd)
            return self.node("flip", (i,), {"axis": axis}, s, bound=b)
        how = "T" if nd == 2 and self.chance(0.4) else ("mT" if self.chance(0.3) else "axes")
        if how == "T":
            axes = (1, 0)
        elif how == "mT":
            axes = tuple(range(nd - 2)) + (nd - 1, nd - 2)
        else:
            axes = tuple(self.r.sample(range(nd), nd))
        return self.node("permute", (i,), {"how": how, "axes": axes}, tuple(s[a] for a in axes), bound=b)

    def op_body_movement(self):
        """Movement inside a loop body that keeps the shape: flip, roll, square transposes."""
        i = self.pick(self.candidates(lambda n: len(n.shape) >= 1))
        if i is None:
            return None
        x = self.nodes[i]
        s, nd = x.shape, len(x.shape)
        k = self.choice(["flip", "roll", "roll", "permute"])
        if k == "permute" and nd == 2 and s[0] == s[1]:
            return self.node("permute", (i,), {"how": self.choice(["T", "mT", "axes"]), "axes": (1, 0)}, s,
                             bound=x.bound)
        axes = [d for d in range(nd) if s[d] > 1]
        if not axes:
            return None
        ax = self.choice(axes)
        if k == "roll":
            return self.node("roll", (i,), {"shift": self.r.randint(1, s[ax] - 1), "axis": ax - nd * self.r.randint(0, 1),
                                            "style": self.choice(["slices", "slices", "fn"])}, s, bound=x.bound)
        return self.node("flip", (i,), {"axis": ax}, s, bound=x.bound)

    def op_join(self):
        i = self.pick(self.candidates(lambda n: len(n.shape) >= 1 and size_of(n.shape) <= self.max_size // 2))
        if i is None or self.within is not None:
            return None
        x = self.nodes[i]
        s, nd = x.shape, len(x.shape)
        if self.chance(0.5):
            axis = self.r.randrange(-nd, nd)
            ax = axis % nd
            cands = [j for j in self.candidates(lambda n: len(n.shape) == nd)
                     if all(self.nodes[j].shape[d] == s[d] for d in range(nd) if d != ax)
                     and (self.kind == "float" or self.int_promotes(x.dtype, self.nodes[j].dtype))]
            parts = [i] + [self.pick(cands) for _ in range(self.choice([1, 1, 2]))]
            shape = list(s)
            shape[ax] = sum(self.nodes[j].shape[ax] for j in parts)
            if size_of(shape) > self.max_size:
                return None
            if self.chance(0.1) and nd == 1:
                axis = None
            dt = self.join_dtype(parts)
            return self.node("concat", parts, {"axis": axis}, tuple(shape), dtype=dt,
                             bound=max(self.bound(j) for j in parts))
        cands = [j for j in self.candidates(lambda n: n.shape == s)
                 if self.kind == "float" or self.int_promotes(x.dtype, self.nodes[j].dtype)]
        parts = [i] + [self.pick(cands) for _ in range(self.choice([1, 1, 2]))]
        axis = self.r.randint(-nd - 1, nd)
        shape = list(s)
        shape.insert(axis % (nd + 1), len(parts))
        if size_of(shape) > self.max_size:
            return None
        return self.node("stack", parts, {"axis": axis}, tuple(shape), dtype=self.join_dtype(parts),
                         bound=max(self.bound(j) for j in parts))

    def join_dtype(self, parts):
        if self.kind == "float":
            return self.dtype
        dt = self.nodes[parts[0]].dtype
        for j in parts[1:]:
            dt = promote_int(dt, self.nodes[j].dtype)
        return dt

    def op_realize(self):
        if self.within is not None:
            return None
        i = self.pick(self.candidates())
        if i is None:
            return None
        return self.node("realize", (i,), {"style": self.choice(["method", "fn"])}, self.nodes[i].shape,
                         bound=self.bound(i))

    def op_astype(self):
        if self.within is not None:
            return None
        if self.kind == "float" and self.mode == "forward" and self.chance(0.25):
            i = self.pick(self.candidates())       # through a signed integer dtype (truncation)
            if i is not None:
                return self.node("truncate", (i,), {"via": self.choice(["int8", "int32", "int64"])},
                                 self.nodes[i].shape, bound=self.bound(i))
        bools = [i for i, n in enumerate(self.nodes) if n.dtype == "bool"]
        if bools and self.chance(0.35):         # a mask as numbers: (x > c).astype(dtype)
            i = self.pick(bools)
            to = self.dtype if self.kind == "float" else self.main_dtype
            return self.node("astype", (i,), {"to": to, "style": self.choice(["fn", "method"])},
                             self.nodes[i].shape, dtype=to, bound=1.0)
        if self.kind == "float":         # an integer array made some way, cast to the program's dtype
            shape = self.choice(self.shapes)
            src = self.new_input(shape, dtype=self.choice(["int64", "int32"]), param=False)
            self.nodes[src].attrs["int_source"] = True
            v = numpy_input(self.nodes[src])
            if v.size and np.max(np.abs(v)) > 1000:
                return None
            b = float(np.max(np.abs(v))) if v.size else 1.0
            return self.node("astype", (src,), {"to": self.dtype, "style": self.choice(["fn", "method"])}, shape,
                             dtype=self.dtype, bound=max(b, 1e-3))
        i = self.pick(self.candidates())
        if i is None:
            return None
        x = self.nodes[i]
        to = self.choice([d for d in INTS if d != x.dtype and promote_int(d, self.main_dtype) is not None])
        return self.node("astype", (i,), {"to": to, "style": self.choice(["fn", "method"])}, x.shape, dtype=to)

    # -- the program --
    def step(self, weights):
        ops = list(weights)
        for _ in range(30):
            op = self.r.choices(ops, weights=[weights[o] for o in ops])[0]
            n = len(self.nodes)
            got = getattr(self, "op_" + op)()
            if got is not None:
                return self.squash(got)
            del self.nodes[n:]
        return None

    def weights(self):
        if self.kind == "int":
            return {"unary": 1, "binary": 4, "scalar": 2, "divide": 3, "shift": 1, "pow": 1, "where": 1.5,
                    "reduce": 1.5, "matmul": 0.7, "movement": 2, "join": 1, "realize": 0.3, "astype": 0.6}
        w = {"unary": 3, "binary": 4, "scalar": 2, "divide": 1, "pow": 1, "where": 1.5, "reduce": 1.5,
             "matmul": 1, "movement": 2, "join": 1, "realize": 0.3, "astype": 0.3}
        if self.mode == "forward":
            w["floordiv"] = 0.6
        if self.within is not None:
            w = {k: v for k, v in w.items() if k not in ("join", "realize", "astype", "floordiv")}
            w["matmul"] = 1.5
        return w

    def make_loop(self, max_total):
        """x = a*x + b*squash(f(x, params)) (or a normalisation of f), k times, never realized inside."""
        cands = self.candidates(lambda n: 1 <= size_of(n.shape) <= (self.max_size if self.large else 24)) \
            or self.candidates()
        init = self.pick(cands)
        if init is None:
            return None
        s = self.nodes[init].shape
        if s and s[-1] > 1 and self.chance(0.6) and self.kind == "float":   # a recurrent weight matrix
            n = s[-1]
            w = self.new_input((n, n), data_bound=1.0 / n)
            self.nodes[w].bound = max(self.nodes[w].bound, 1e-3)
            if self.nodes[w].bound * n > 1.5:
                self.node("scalar", (w,), {"fn": "multiply", "value": 1.0 / (n * self.nodes[w].bound),
                                           "side": "right", "style": "op"}, (n, n), bound=1.0 / n)
        if self.kind == "float":
            for _ in range(self.r.randint(0, 2)):              # loop-invariant parameters
                shp = self.choice([sh for sh in self.shapes if fits_into(sh, s)] or [()])
                self.new_input(shp)
        n = len(self.nodes)
        norm = self.kind == "float" and bool(s) and self.chance(0.3)
        sb = max(self.bound(init), 1.0, math.sqrt(size_of(s)) if norm else 1.0) if self.kind == "float" else 1.0
        self.add(Node("state", (), {}, s, self.nodes[init].dtype, sb, True))
        self.within, self.body_start = s, n
        weights = self.weights()
        for _ in range(self.r.randint(1, 4)):
            self.step(weights)
        last = [j for j in range(n, len(self.nodes)) if self.nodes[j].state_dep and self.is_value(j)]
        e = last[-1] if last else n
        if self.kind == "float":
            if norm and self.nodes[e].shape == s:         # e / sqrt(mean(e*e) + 1)
                e = self.squash(e, 6.0)
                sq = self.node("binary", (e, e), {"fn": "multiply", "style": "op"}, s, bound=self.bound(e) ** 2)
                mn = self.node("reduce", (sq,), {"fn": "mean", "axis": self.choice([None, -1]), "keepdims": True,
                                                 "style": "fn"}, tuple(1 for _ in s), bound=self.bound(sq))
                q = self.node("divide", (e, mn), {"den": "sqrt1", "style": "op"}, s, bound=math.sqrt(size_of(s)))
            else:
                fns = ["tanh", "tanh", "sin"] + ([] if self.smooth else ["softsign"])
                q = self.node("unary", (e,), {"fn": self.choice(fns), "style": "fn"}, self.nodes[e].shape, bound=1.0)
            alpha = self.choice([0.0, 0.5, 0.8, -0.5, 0.9])
            beta = (1 - abs(alpha)) * self.choice([1.0, 0.5])
            qb = self.bound(q)
            if alpha == 0.0 and self.nodes[q].shape != s:
                alpha, beta = 0.5, 0.5 * beta
            if alpha == 0.0:
                self.node("scalar", (q,), {"fn": "multiply", "value": beta, "side": "right", "style": "op"}, s,
                          bound=qb * beta)
            else:
                self.node("mix", (n, q), {"alpha": alpha, "beta": beta}, s, bound=abs(alpha) * sb + beta * qb)
            bound = sb
        else:                                             # s = s (+|^|-) e, in the state's dtype
            dt = promote_int(self.nodes[init].dtype, self.nodes[e].dtype)
            out = self.node("binary", (n, e), {"fn": self.choice(["bitwise_xor", "add", "subtract"]), "style": "op"},
                            s, dtype=dt)
            if dt != self.nodes[init].dtype:
                self.node("astype", (out,), {"to": self.nodes[init].dtype, "style": "fn"}, s,
                          dtype=self.nodes[init].dtype)
            bound = 1.0
        body = self.nodes[n + 1:]
        del self.nodes[n:]
        self.within, self.body_start = None, None
        k = max(1, min(self.choice([2, 3, 5, 8, 10, 16, 20, 30, 40, 50]), max_total // max(len(body), 1)))
        for bn in body:
            bn.state_dep = False
        return self.add(Node("loop", (init,), {"k": k, "body": body}, s, self.nodes[init].dtype, bound))

    def program(self, loop, n_ops):
        self.main_dtype = self.dtype
        for _ in range(self.r.randint(1, 3)):
            self.new_input(self.input_shape(), dtype=self.dtype)
        weights = self.weights()
        before = n_ops if not loop else self.r.randint(1, max(1, n_ops // 2))
        for _ in range(before):
            self.step(weights)
        if loop:
            self.make_loop(max_total=250 if self.mode == "forward" else 150)
            for _ in range(self.r.randint(0, 3)):
                self.step(weights)


def promote_int(a, b):
    """The array API's promotion of two integer dtypes (None where it leaves it undefined)."""
    if a == b:
        return a
    if (a in SIGNED) == (b in SIGNED):
        return a if BITS[a] >= BITS[b] else b
    s, u = (a, b) if a in SIGNED else (b, a)
    return s if BITS[s] > BITS[u] else None


def generate(seed, attempt=0, kind="float", dtype="float64", mode="forward", loop=None, large=False):
    """One random program, the same for the same arguments. kind "float" or "int"; mode "forward"
    (compared with NumPy), "grad" (a scalar loss of parameters; compared with PyTorch) or "optim"
    (smooth: no kinks, the optimizer tests); loop True/False forces a loop or none; large: values of
    over 16384 elements (kernels that are not shape-generic)."""
    g = Gen(seed, attempt, kind, dtype, mode, loop, large)
    if loop is None:
        loop = g.chance(0.3)
    n_ops = g.r.randint(3, 10)
    g.program(loop, n_ops)
    if mode == "forward":
        values = [i for i in range(len(g.nodes)) if g.nodes[i].op != "input"] or [len(g.nodes) - 1]
        outputs = sorted({values[-1]} | {g.choice(values) for _ in range(g.r.randint(0, 2))})
        if g.chance(0.15):
            bools = [i for i, n in enumerate(g.nodes) if n.dtype == "bool"]
            if bools:
                outputs = sorted(set(outputs) | {g.choice(bools)})
        if dtype == "float32" and g.chance(0.25):      # float32 with float64 arrays: float64 (0-d too)
            x = g.pick(g.candidates())
            y = g.new_input(g.choice([sh for sh in g.shapes if broadcast(sh, g.nodes[x].shape) is not None
                                      and size_of(broadcast(sh, g.nodes[x].shape)) <= g.max_size]), dtype="float64")
            g.node("binary", (x, y), {"fn": g.choice(["multiply", "add"]), "style": g.style()},
                   broadcast(g.nodes[x].shape, g.nodes[y].shape), dtype="float64")
            outputs = sorted(set(outputs) | {len(g.nodes) - 1})
        conversion = g.choice(["asarray", "asarray", "realize_all", "tolist", "item"])
        return Program(seed, attempt, kind, dtype, mode, g.nodes, outputs, conversion)
    # a scalar loss: the sum / mean / weighted sum of a few values, plus terms for the parameters that
    # reach no output differentiably (their gradient would be None in PyTorch)
    if not any(n.attrs.get("param") for n in g.nodes if n.op == "input"):
        g.new_input(g.choice(g.shapes), param=True)
        i = len(g.nodes) - 1
        g.node("scalar", (i,), {"fn": "multiply", "value": g.const(), "side": "right", "style": "op"},
               g.nodes[i].shape, bound=g.bound(i) * 3)
    values = [i for i in g.candidates() if g.nodes[i].op != "input"] or g.candidates()
    outs = sorted({values[-1]} | {g.choice(values) for _ in range(g.r.randint(0, 1))})
    terms = []
    for o in outs:
        f = g.choice(["sum", "mean", "sum", "weighted"])
        if f == "weighted":
            w = g.new_input(g.nodes[o].shape, param=False)
            o = g.node("binary", (o, w), {"fn": "multiply", "style": "op"}, g.nodes[o].shape)
            f = "sum"
        terms.append(g.node("reduce", (o,), {"fn": f, "axis": None, "keepdims": False,
                                             "style": g.choice(["fn", "method"])}, ()))
    reached = differentiable_inputs(g.nodes, terms)
    for p in [i for i, n in enumerate(g.nodes) if n.op == "input" and n.attrs.get("param") and i not in reached]:
        terms.append(g.node("reduce", (p,), {"fn": "sum", "axis": None, "keepdims": False, "style": "fn"}, ()))
    loss = terms[0]
    for t in terms[1:]:
        loss = g.node("binary", (loss, t), {"fn": "add", "style": "op"}, ())
    return Program(seed, attempt, kind, dtype, mode, g.nodes, [loss], "asarray")


NONDIFF_ARGS = {"truncate": "all", "compare": "all", "logical": "all", "floordiv": "all", "intdiv": "all", "shift": "all",
                "where": (0,), "divide": (), "astype": "all"}


def differentiable_inputs(nodes, outputs):
    """The inputs that some output depends on through differentiable arguments."""
    deps = {}

    def node_deps(node, get):
        skip = NONDIFF_ARGS.get(node.op, ())
        if skip == "all":
            return set()
        out = set()
        for pos, j in enumerate(node.args):
            if pos not in skip:
                out |= get(j)
        return out

    for i, node in enumerate(nodes):
        if node.op == "input":
            deps[i] = {i} if node.attrs.get("param") else set()
        elif node.op == "loop":
            n = i
            state = set(deps[node.args[0]])
            while True:
                local = {}
                get = lambda j, local=local, state=state: deps[j] if j < n else (state if j == n else local[j])
                for b, bn in enumerate(node.attrs["body"]):
                    local[n + 1 + b] = node_deps(bn, get)
                new = state | local[n + len(node.attrs["body"])]
                if new == state:
                    break
                state = new
            deps[i] = state
        else:
            deps[i] = node_deps(node, lambda j: deps[j])
    out = set()
    for o in outputs:
        out |= deps[o]
    return out


def variant(p):
    """The same program (the same graph structure) on other data: other array values, random
    seeds, fill values and scalar constants of the same or smaller magnitude. Run after the
    program, it reuses the cached schedules and kernels, whose keys must tell the two apart."""
    r = pyrandom.Random(f"variant/{p.seed}/{p.attempt}")
    rng = np.random.default_rng(r.getrandbits(64))

    def other_data(d, dt):
        if isinstance(d, SeededData):
            return SeededData(d.seed + 1, d.shape, d.dtype, d.lo, d.hi)
        d = np.asarray(d)
        if not d.size:
            return d
        if dt in FLOATS:
            b = max(float(np.max(np.abs(d))), 1e-3)
            return rng.uniform(-b, b, d.shape).astype(dt)
        return rng.integers(int(d.min()), int(d.max()), d.shape, dtype=dt, endpoint=True)

    def other_value(v):
        if isinstance(v, bool):
            return v
        if isinstance(v, float):
            return v * 0.5
        return v - 1 if v > 0 else v + 1

    def change(n):
        n = Node(n.op, n.args, dict(n.attrs), n.shape, n.dtype, n.bound)
        a = n.attrs
        if n.op == "input":
            for key in ("data", "base"):
                if key in a and is_data(a[key]):
                    a[key] = other_data(a[key], n.dtype)
            if "rseed" in a:
                a["rseed"] += 1000
            if "value" in a:
                a["value"] = other_value(a["value"])
        elif n.op in ("scalar", "where") and "value" in a and a.get("fn") != "divide":
            a["value"] = other_value(a["value"])
        elif n.op == "compare" and "value" in a:
            a["value"] = a["value"] * 0.9 if isinstance(a["value"], float) else other_value(a["value"])
        elif n.op == "loop":
            a["body"] = [change(b) for b in a["body"]]
        return n

    nodes = [change(n) for n in p.nodes]
    q = Program(p.seed, p.attempt, p.kind, p.dtype, p.mode, nodes, p.outputs, p.conversion)
    q.is_variant = True
    return q


# ---------------------------------------------------------------------------------------------
# the checks

class Result:
    def __init__(self, program, ok=True, message="", skipped=False):
        self.program, self.ok, self.message, self.skipped = program, ok, message, skipped

    def report(self):
        p = self.program
        head = f"seed {p.seed} attempt {p.attempt} ({p.kind} {p.dtype} {p.mode}, {p.size()} ops)" if p else ""
        src = source(p) if p else ""
        before = getattr(self, "before", None)
        if before is not None:
            src = source(before) + "\n\n# the same structure on other data:\n" + "\n".join(src.splitlines()[4:])
        return f"{head}: {self.message}\n--- reproducer ---\n{src}"


# (rtol, atol as a fraction of the largest |value|, factor of NumPy's float32 error): float32 results
# may be a few times less accurate than NumPy's own float32 ones, float64 ones 1e-7 times that error
# (float64 rounds 2e-9 times finer), plus a little everywhere.
TOLERANCES = {"float64": (1e-9, 1e-11, 1e-7), "float32": (2e-4, 2e-5, 4.0), "optim": (1e-7, 1e-9, 0.0)}
CONDITION_LIMIT = 1e-3             # numpy's float32 and float64 values may differ by this much (of the scale)
TIE = {"forward": {"float64": 1e-7, "float32": 1e-4}, "grad": 1e-5, "fd": 1e-3, "optim": 1e-5}
KINKS = {"forward": ("compare", "floor"), "grad": ("compare", "maximum", "maxred", "abs"),
         "optim": ("compare", "maximum", "maxred", "abs")}


def numpy_eval(program, float_dtype=None, margins=None):
    with np.errstate(all="ignore"):
        env = evaluate(program, NumpyBackend(program, float_dtype, margins))
    return env


def near_tie(program, margins, tie, exact=False):
    kinds = KINKS["grad" if program.mode != "forward" else "forward"]
    for k in kinds:
        if margins.get(k, math.inf) < tie:
            return f"{k} within {margins[k]:.2g} of a tie"
        if exact and margins.get(k + "="):
            return f"{k} at an exact tie"
    return None


def well_conditioned(program, tie=None):
    """None, or why the program cannot be compared at the tested tolerance: NumPy raises, values are
    not finite, a comparison is nearly tied, or float32 and float64 disagree (float programs)."""
    margins = {}
    try:
        ref = numpy_eval(program, None if program.kind == "int" else "float64", margins)
    except Exception as e:    # noqa: BLE001  (a NumPy error is compared as such by check_forward)
        return None if program.mode == "forward" else f"NumPy raised {type(e).__name__}"
    if program.kind == "int":
        return None
    outs = [np.asarray(ref[o]) for o in program.outputs]
    if any(o.dtype.kind == "f" and not np.all(np.isfinite(o)) for o in outs):
        return "not finite"
    exact = tie is not None and tie == TIE["fd"]     # finite differences step over no kink at all
    if tie is None:
        tie = TIE["forward"][program.dtype] if program.mode == "forward" else TIE[program.mode]
    why = near_tie(program, margins, tie, exact)
    if why:
        return why
    try:
        low = numpy_eval(program, "float32")
    except Exception as e:    # noqa: BLE001
        return f"float32 NumPy raised {type(e).__name__}"
    for o in program.outputs:
        r, l = np.asarray(ref[o]), np.asarray(low[o])
        if r.dtype.kind == "b":
            if not np.array_equal(r, l):
                return "a comparison flips in float32"
            continue
        scale = max(1.0, float(np.max(np.abs(r)))) if r.size else 1.0
        if r.size and float(np.max(np.abs(r - l))) > CONDITION_LIMIT * scale:
            return "ill-conditioned (float32 and float64 disagree)"
    return None


def draw(seed, attempts=20, **kw):
    """The first well-conditioned program of `seed` (and the attempts discarded before it)."""
    why = None
    fd = kw.pop("_fd", False)
    for attempt in range(attempts):
        p = generate(seed, attempt, **kw)
        why = well_conditioned(p, TIE["fd"] if fd else None)
        if why is None:
            return p
    raise AssertionError(f"seed {seed}: no well-conditioned program in {attempts} attempts (last: {why})")


def compare(got, want, dtype, e32=None, what="value"):
    """None, or how lazyarr's `got` differs from the reference `want` (float64 or exact)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind in "biu" or dtype == "exact":
        if not np.array_equal(got, want):
            bad = np.argwhere(got != want)[:3].tolist()
            return f"{what}: {got.tolist()} != {want.tolist()} (first differing indices {bad})"
        return None
    rtol, atol, k = TOLERANCES[dtype]
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    allowed = rtol * np.abs(want) + atol * scale + (k * e32 if e32 is not None else 0.0)
    with np.errstate(all="ignore"):
        err = np.abs(got.astype(np.float64) - want)
    bad = ~(err <= allowed)
    if np.any(bad):
        idx = tuple(np.argwhere(bad)[0]) if want.ndim else ()
        return (f"{what}: max error {float(np.nanmax(err)) if err.size else 0:.3g} (allowed {float(np.max(allowed)):.3g}); "
                f"at {idx}: got {got[idx]!r}, want {want[idx]!r}\n  got  {got.tolist()}\n  want {want.tolist()}")
    return None


def convert(t, how):
    """A lazyarr output as NumPy, by one of the ways users read values."""
    if how == "tolist":
        return np.asarray(t.tolist())
    if how == "item" and t.size == 1:
        return np.asarray(t.item()).reshape(t.shape)
    return np.asarray(t)


def check_forward(seed, kind="float", dtype="float64", loop=None, large=False, variant_too=True):
    """A random program on lazyarr against NumPy: values, dtypes and shapes of the outputs, errors
    (an error NumPy raises, lazyarr raises too), and the inputs as made; then (variant_too) the
    same structure on other data, which runs on the cached schedules and kernels."""
    try:
        p = draw(seed, kind=kind, dtype=dtype, mode="forward", loop=loop, large=large)
    except AssertionError as e:
        return Result(None, ok=False, message=str(e))
    r = check_program(p)
    if not r.ok or not variant_too:
        return r
    q = variant(p)
    if well_conditioned(q) is not None:
        return r
    r = check_program(q)
    if not r.ok:
        r.before = p
        r.message = "the same program on other data, run after it: " + r.message
    return r


def check_program(p):
    import lazyarr as xp
    kind = p.kind
    try:
        native = numpy_eval(p)                   # NumPy in the program's dtypes: dtypes and errors
        ref_err = None
    except Exception as e:    # noqa: BLE001
        native, ref_err = None, e
    try:
        env = evaluate(p, LazyBackend(p))
        outs = [env[o] for o in p.outputs]
        if p.conversion == "realize_all":
            xp.realize(*outs)
        got = [convert(t, p.conversion) for t in outs]
    except Exception as e:    # noqa: BLE001
        if ref_err is not None and isinstance(e, type(ref_err)):
            return Result(p)
        if ref_err is not None:
            return Result(p, False, f"NumPy raises {type(ref_err).__name__}({ref_err}); lazyarr raises "
                                    f"{type(e).__name__}({e})")
        return Result(p, False, f"lazyarr raised {type(e).__name__}: {e}\n{traceback.format_exc(limit=-6)}")
    if ref_err is not None:
        return Result(p, False, f"NumPy raises {type(ref_err).__name__}({ref_err}); lazyarr returned "
                                f"{[g.tolist() for g in got]}")
    ref, low = native, None
    if kind == "float":                          # values against float64, tolerances from float32's error
        ref, low = numpy_eval(p, "float64"), numpy_eval(p, "float32")
    problems = []
    for o, g, t in zip(p.outputs, got, outs):
        want = np.asarray(ref[o])
        if p.conversion in ("asarray", "realize_all") and str(t.dtype) != str(np.asarray(native[o]).dtype):
            problems.append(f"v{o}: dtype {t.dtype}, NumPy's {np.asarray(native[o]).dtype}")
        e32 = None
        if low is not None and want.dtype.kind == "f":
            e32 = float(np.max(np.abs(np.asarray(low[o], dtype=np.float64) - want))) if want.size else 0.0
        why = compare(g, want, p.dtype if kind == "float" else "exact", e32, what=f"v{o}")
        if why:
            problems.append(why)
    for i in p.inputs:                           # every input as NumPy makes it
        want, made = p.input_value(i), np.asarray(env[i])
        a = p.nodes[i].attrs
        if want.dtype.kind == "f" and (a["maker"] in ("linspace", "arange") or a.get("base_maker") == "linspace"):
            why = compare(made, want.astype(np.float64), p.nodes[i].dtype,
                          what=f"input v{i} ({p.nodes[i].attrs['maker']})")
            if made.dtype != want.dtype:
                why = f"input v{i} ({p.nodes[i].attrs['maker']}): dtype {made.dtype}, NumPy's {want.dtype}"
            if why:
                problems.append(why)
        elif made.shape != want.shape or made.dtype != want.dtype or not np.array_equal(made, want):
            problems.append(f"input v{i} ({p.nodes[i].attrs['maker']}): {made.dtype} {made.tolist()} != "
                            f"{want.dtype} {want.tolist()}")
    if problems:
        r = Result(p, False, "\n".join(problems))
        r.first = localize(p)
        r.message += "\nthe first value that differs when every value is realized together: " + \
            (r.first[1] if r.first else "none (only fused as the program is)")
        return r
    return Result(p)


def localize(p):
    """(index, line) of the first node whose value differs from NumPy's when every value of the
    program is realized together (None when none does, or lazyarr raises)."""
    import lazyarr as xp
    try:
        env = evaluate(p, LazyBackend(p))
        idx = [i for i, n in enumerate(p.nodes) if n.op != "input" and n.dtype != "bool" or n.op == "compare"]
        xp.realize(*[env[i] for i in idx])
        ref = numpy_eval(p, "float64" if p.kind == "float" else None)
        low = numpy_eval(p, "float32") if p.kind == "float" else None
        for i in idx:
            want = np.asarray(ref[i])
            e32 = None
            if low is not None and want.dtype.kind == "f":
                e32 = float(np.max(np.abs(np.asarray(low[i], dtype=np.float64) - want))) if want.size else 0.0
            dt = p.nodes[i].dtype if p.nodes[i].dtype in FLOATS else "exact"
            if compare(np.asarray(env[i]), want, dt, e32) is not None:
                node = p.nodes[i]
                line = f"v{i} = {render_node(node, lambda j: f'v{j}')}" if node.op != "loop" else \
                    f"v{i} = the loop ({node.attrs['k']} steps of {len(node.attrs['body'])} operations)"
                return i, line
    except Exception:    # noqa: BLE001
        return None
    return None


def torch_grads(p, float_dtype="float64", given=None):
    """PyTorch's loss and gradients of the parameters (None where PyTorch has none)."""
    env = evaluate(p, TorchBackend(p, float_dtype), given)
    loss = env[p.outputs[0]]
    loss.backward()
    grads = [None if env[i].grad is None else env[i].grad.detach().numpy().astype(np.float64) for i in p.params]
    return loss.item(), grads


def check_gradients(seed, loop=None, finite_differences=False):
    """Gradients of a random scalar program of parameters made every way, against torch.autograd
    (float64), and optionally against central finite differences of lazyarr's own values."""
    import lazyarr as xp
    try:
        p = draw(seed, kind="float", dtype="float64", mode="grad", loop=loop, _fd=finite_differences)
    except AssertionError as e:
        return Result(None, ok=False, message=str(e))
    t_loss, t_grads = torch_grads(p)
    _, t_grads32 = torch_grads(p, "float32")
    api = seed % 3 == 1           # every third program through xp.value_and_grad instead of backward()
    try:
        env = evaluate(p, LazyBackend(p))
        loss = env[p.outputs[0]]
        params = [env[i] for i in p.params]
        if api:
            base = {i: env[i] for i in p.inputs}

            def f(*ps):
                return evaluate(p, LazyBackend(p), {**base, **dict(zip(p.params, ps))})[p.outputs[0]]
            loss, grads = xp.value_and_grad(f, argnums=tuple(range(len(params))))(*params)
        else:
            loss.backward()
            grads = [t.grad for t in params]
        xp.realize(loss, *[g for g in grads if g is not None])
        got_loss = float(loss)
        got = [None if g is None else np.asarray(g) for g in grads]
    except Exception as e:    # noqa: BLE001
        return Result(p, False, f"lazyarr raised {type(e).__name__}: {e}\n{traceback.format_exc(limit=-6)}")
    problems = []
    why = compare(got_loss, t_loss, "float64", what="loss")
    if why:
        problems.append(why)
    for i, g, tg, tg32 in zip(p.params, got, t_grads, t_grads32):
        if g is None:
            problems.append(f"v{i}.grad is None (PyTorch: {tg.tolist()})")
            continue
        if g.shape != p.nodes[i].shape:
            problems.append(f"v{i}.grad has shape {g.shape}, the parameter {p.nodes[i].shape}")
            continue
        e32 = float(np.max(np.abs(tg32 - tg))) if tg.size else 0.0
        why = compare(g, tg, "float64", e32, what=f"v{i}.grad ({p.nodes[i].attrs['maker']}, "
                                                  f"{p.nodes[i].attrs.get('grad_style')})")
        if why:
            problems.append(why)
    if finite_differences and not problems:
        try:
            problems += finite_difference_problems(p, env, got)
        except Exception as e:    # noqa: BLE001
            return Result(p, False, f"lazyarr raised {type(e).__name__} computing the program's values for finite "
                                    f"differences (under no_grad, parameters replaced by asarray): {e}\n"
                                    f"{traceback.format_exc(limit=-6)}")
    if problems:
        if api:
            problems.append("(gradients by xp.value_and_grad(f, argnums=<the parameters>), f the program)")
        return Result(p, False, "\n".join(problems))
    return Result(p)


def finite_difference_problems(p, env, grads, h=1e-6, directions=2):
    """<grad, v> against (f(x + hv) - f(x - hv)) / 2h of lazyarr's own values, along random v."""
    import lazyarr as xp
    rng = np.random.default_rng(p.seed)
    base = {i: env[i] for i in p.inputs}
    values = {i: np.asarray(env[i]).astype(np.float64) for i in p.params}
    problems = []
    for _ in range(directions):
        v = {i: rng.uniform(-1, 1, values[i].shape) for i in p.params}

        def f(sign):
            given = dict(base)
            for i in p.params:
                given[i] = xp.asarray(values[i] + sign * h * v[i])
            with xp.no_grad():
                return float(evaluate(p, LazyBackend(p), given)[p.outputs[0]])
        numeric = (f(1) - f(-1)) / (2 * h)
        analytic = sum(float(np.sum(g * v[i])) for i, g in zip(p.params, grads))
        if not math.isclose(analytic, numeric, rel_tol=1e-5, abs_tol=1e-6 * max(1.0, abs(float(env[p.outputs[0]])))):
            problems.append(f"directional derivative {analytic!r}, finite differences {numeric!r}")
    return problems


OPTIMIZERS = {
    "SGD": ("SGD", dict(lr=0.05)),
    "SGD_momentum": ("SGD", dict(lr=0.05, momentum=0.9)),
    "Adam": ("Adam", dict(lr=0.05)),
    "AdamW": ("AdamW", dict(lr=0.05, weight_decay=0.1)),
}


def check_optimizer(seed, name, steps=3):
    """lazyarr.optim against torch.optim: a few steps on a random smooth loss of parameters made
    every way (0-d ones included); the parameters and the loss after every step."""
    import torch
    from lazyarr import optim
    cls, kw = OPTIMIZERS[name]
    try:
        p = draw(seed, kind="float", dtype="float64", mode="optim")
    except AssertionError as e:
        return Result(None, ok=False, message=str(e))
    tenv = evaluate(p, TorchBackend(p))
    tgiven = {i: tenv[i] for i in p.inputs}
    topt = getattr(torch.optim, cls)([tenv[i] for i in p.params], **kw)
    t_hist = []
    for _ in range(steps):
        topt.zero_grad()
        env_t = evaluate(p, TorchBackend(p), tgiven)
        loss = env_t[p.outputs[0]]
        loss.backward()
        topt.step()
        t_hist.append((loss.item(), [tgiven[i].detach().numpy().copy() for i in p.params]))
    try:
        env = evaluate(p, LazyBackend(p))
        given = {i: env[i] for i in p.inputs}
        params = [env[i] for i in p.params]
        opt = getattr(optim, cls)(params, **kw)
        problems = []
        for step, (t_loss, t_params) in enumerate(t_hist):
            opt.zero_grad()
            loss = evaluate(p, LazyBackend(p), given)[p.outputs[0]] if step else env[p.outputs[0]]
            loss.backward()
            opt.step()
            why = compare(float(loss), t_loss, "optim", what=f"step {step + 1} loss")
            if why:
                problems.append(why)
            for i, t, tp in zip(p.params, params, t_params):
                why = compare(np.asarray(t), tp, "optim", what=f"step {step + 1} v{i} ({p.nodes[i].attrs['maker']}, {p.nodes[i].shape})")
                if why:
                    problems.append(why)
            if problems:
                break
    except Exception as e:    # noqa: BLE001
        return Result(p, False, f"lazyarr raised {type(e).__name__}: {e}\n{traceback.format_exc(limit=-6)}")
    if problems:
        return Result(p, False, "\n".join(problems))
    return Result(p)
