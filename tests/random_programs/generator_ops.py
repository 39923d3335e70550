"""The operations the generator draws (`GenOps`, a mixin of `Gen`): each `op_*` adds a node of its
kind, reading earlier nodes, and keeps float values bounded."""
from __future__ import annotations


import math

import numpy as np

from tests.random_programs.model import BITS, INTS, LIMIT, SIGNED, UNSIGNED, broadcast, factorizations, fits_into, numpy_input, promote_int, size_of


class GenOps:
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

    def op_clip(self):
        """clip(x, minimum(x, y), maximum(x, z)): x lies within its bounds, and equals one of them
        wherever y or z is beyond it, so the gradient is taken exactly at the bounds (torch.clamp
        gives x all of it there, the bound none)."""
        if self.smooth or self.kind != "float":
            return self.op_binary()
        i = self.pick(self.candidates())
        if i is None:
            return None
        j, k = self.partner(i), self.partner(i)
        if j is None or k is None:
            return None
        shape = broadcast(broadcast(self.nodes[i].shape, self.nodes[j].shape), self.nodes[k].shape)
        if shape is None or size_of(shape) > self.max_size or (self.within is not None and not fits_into(shape, self.within)):
            return None
        return self.node("clip", (i, j, k), {}, shape, bound=max(self.bound(i), self.bound(j), self.bound(k)))

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
