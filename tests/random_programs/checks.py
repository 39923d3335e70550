"""Drawing programs (`generate`, `draw`) and the checks the tests and scripts/differential.py share:
`check_forward` (against NumPy), `check_gradients` (against torch.autograd, optionally finite
differences) and `check_optimizer` (lazyarr.optim against torch.optim)."""
from __future__ import annotations


import math
import random as pyrandom
import traceback

import numpy as np

from tests.random_programs.model import FLOATS, Node, Program, SeededData, broadcast, is_data, size_of
from tests.random_programs.backends import LazyBackend, NumpyBackend, TorchBackend
from tests.random_programs.evaluate import evaluate, render_node, source
from tests.random_programs.generator import Gen


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
