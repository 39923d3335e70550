"""Running a program with a backend (`evaluate`) and rendering it as a lazyarr script (`source`)."""
from __future__ import annotations

import math


from tests.random_programs.model import BINARY_OPERATORS, BINARY_SYMBOLS, render_input, render_key


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


def read_step(B, s, kind):
    """A loop's step that reads its state: its sum as a Python number (realizing it every
    iteration), fed back as a scalar that changes every iteration (a bounded factor, or a small
    integer in the state's dtype)."""
    if kind == "float":
        r = float(B.m.sum(s))
        return s * (1.0 + 1e-3 * math.tanh(r / 64))
    return s + int(B.m.sum(s)) % 3


READ_STEP = {"float": "s = s * (1.0 + 1e-3 * math.tanh(float(xp.sum(s)) / 64))",
             "int": "s = s + int(xp.sum(s)) % 3"}


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
            if a.get("reads"):
                s = B.wrap(read_step(B, s, a["reads"]))
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
    if op == "clip":                # x at its bounds wherever y or z lies beyond it (exact ties: no kink)
        B.kink("maximum", x[0], x[1])
        B.kink("maximum", x[0], x[2])
        return m.clip(x[0], m.minimum(x[0], x[1]), m.maximum(x[0], x[2]))
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
    if op == "clip":
        return f"xp.clip({x[0]}, xp.minimum({x[0]}, {x[1]}), xp.maximum({x[0]}, {x[2]}))"
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
    lines = ["import math", "import numpy as np", "import lazyarr as xp", "from lazyarr import random", ""]
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
            if node.attrs.get("reads"):
                lines.append(f"    {READ_STEP[node.attrs['reads']]}")
            lines.append(f"v{i} = s")
        else:
            lines.append(f"v{i} = {render_node(node, lambda j: f'v{j}')}")
    outs = ", ".join(f"v{j}" for j in program.outputs)
    lines.append(tail if tail is not None else f"print({outs})")
    return "\n".join(lines)
