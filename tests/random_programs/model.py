"""Programs and their inputs: the constants of the language, a program's nodes, shapes, and how each
kind of input is made for NumPy, for lazyarr and as source."""
from __future__ import annotations


import math
import operator

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


def promote_int(a, b):
    """The array API's promotion of two integer dtypes (None where it leaves it undefined)."""
    if a == b:
        return a
    if (a in SIGNED) == (b in SIGNED):
        return a if BITS[a] >= BITS[b] else b
    s, u = (a, b) if a in SIGNED else (b, a)
    return s if BITS[s] > BITS[u] else None
