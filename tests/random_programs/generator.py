"""The program generator: a program drawn node by node (`Gen`: inputs, loops, the choice of the next
operation; the operations themselves are `GenOps`')."""
from __future__ import annotations


import math
import random as pyrandom

import numpy as np

from tests.random_programs.model import BITS, CONSTS, FLOATS, INTS, LARGE_MAX_SIZE, LARGE_SHAPES, LIMIT, MAX_SIZE, Node, SHAPES, SIGNED, SeededData, UNSIGNED, fits_into, numpy_input, promote_int, size_of
from tests.random_programs.generator_ops import GenOps


# ---------------------------------------------------------------------------------------------
# the generator

class Gen(GenOps):
    def __init__(self, seed, attempt, kind, dtype, mode, loop, large=False):
        self.r = pyrandom.Random(f"{seed}/{attempt}/{kind}/{dtype}/{mode}/{loop}" + ("/large" if large else ""))
        # whether a loop reads a scalar of its state every iteration: drawn apart, so that the rest of
        # the program is what it was before loops read
        self.reads = pyrandom.Random(f"reads/{seed}/{attempt}/{kind}/{dtype}/{mode}").random() < 0.5
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
             "matmul": 1, "movement": 2, "join": 1, "realize": 0.3, "astype": 0.3, "clip": 0.5}
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
        # a loop that reads its state's sum every iteration (`float(sum(s))`, as a loss is read) and
        # feeds the Python number back: the state is realized every iteration, the scalar changes
        attrs = {"k": k, "body": body, "reads": self.kind if self.reads else None}
        return self.add(Node("loop", (init,), attrs, s, self.nodes[init].dtype, bound))

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
