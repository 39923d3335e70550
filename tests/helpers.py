"""Test helpers: a reference evaluator for kernel-level integer graphs, and NumPy comparison."""
import itertools
import math
import os

import numpy as np
import pytest

import lazyarr as xp

from lazyarr.compiler.uop import Ops, UOp, fold_alu


def evaluate(u: UOp, env: dict) -> object:
    """The value of an index expression for the values of its RANGEs / DEFINE_VARs in `env`."""
    values = {}
    for n in u.toposort():
        if n.op is Ops.CONST:
            values[n] = n.arg
        elif n.op in (Ops.RANGE, Ops.DEFINE_VAR):
            values[n] = env[n]
        elif n.op is Ops.CAST:
            values[n] = values[n.src[0]]
        else:
            args = [values[s] for s in n.src]
            v = fold_alu(n.op, n.dtype, args)
            assert v is not None, n.op
            values[n] = v
    return values[u]


def assignments(variables):
    """Every assignment of values to RANGEs (0..size-1) and DEFINE_VARs (min..max)."""
    spaces = []
    for v in variables:
        if v.op is Ops.RANGE:
            spaces.append(range(v.src[0].arg))
        else:
            spaces.append(range(v.arg[1], v.arg[2] + 1))
    for combo in itertools.product(*spaces):
        yield dict(zip(variables, combo))


def assert_close(got, want, rtol=1e-5, atol=1e-6, equal_nan=True):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        np.testing.assert_array_equal(got, want)


def watch_launches(monkeypatch, seen) -> None:
    """Call `seen(items)` with the work items of every run, whichever way it runs: through
    `executor.run` or as a cached schedule's prepared launches (their item templates)."""
    from lazyarr.runtime import executor, prepared
    run, run_prepared = executor.run, prepared.PreparedLaunches.run

    def watched(items, *args, **kwargs):
        seen(list(items))
        return run(items, *args, **kwargs)

    def watched_prepared(self, *args):
        seen(list(self.templates))
        return run_prepared(self, *args)
    monkeypatch.setattr(executor, "run", watched)
    monkeypatch.setattr(prepared.PreparedLaunches, "run", watched_prepared)


# ---- the NumPy-comparison tests' helpers (test_numpy_names, test_ufuncs) -----------------------------

HOWS = ["list", "asarray", "computed", "strided", "transposed"]   # the ways `made` makes an input


def made(a, how):
    """The NumPy array `a` as lazyarr input: a list, an array, a lazy graph, a strided view, or a
    transposed view."""
    a = np.asarray(a)
    if how == "list":
        return a.tolist()
    if how == "asarray":
        return xp.asarray(a)
    if how == "computed":
        return xp.asarray(a) * 1 if a.dtype != bool else xp.asarray(a) & True
    if how == "strided":
        return xp.asarray(np.repeat(a, 2, axis=0))[::2] if a.ndim else xp.asarray(a)
    if how == "transposed":
        return xp.asarray(np.ascontiguousarray(a.T)).T
    raise ValueError(how)


def same(got, want, rtol=1e-12, atol=1e-12, dtype=True):
    """got (a lazyarr array, or a tuple of them) equals want in shape, dtype and values."""
    if isinstance(want, tuple):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same(g, w, rtol, atol, dtype)
        return
    assert isinstance(got, xp.ndarray), type(got)
    g, w = got.numpy(), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if dtype:
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if w.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


def fails(error, fn, *args, match=None, **kwargs):
    """fn(*args, **kwargs) raises `error` (with `match` in its message)."""
    with pytest.raises(error, match=match):
        fn(*args, **kwargs)


def grad_check(fn, np_fn, *arrays, rtol=1e-6, atol=1e-8, eps=1e-6):
    """backward() of sum(fn(x) * w) against central differences of NumPy's np_fn, along two
    random directions per argument."""
    leaves = [xp.asarray(a, requires_grad=True) for a in arrays]
    out = fn(*leaves)
    w = np.linspace(0.5, 1.5, out.size).reshape(out.shape)
    xp.sum(out * xp.asarray(w)).backward()
    rng = np.random.default_rng(7)
    for i, (a, leaf) in enumerate(zip(arrays, leaves)):
        g = leaf.grad.numpy()
        for _ in range(2):
            v = rng.standard_normal(a.shape)
            at = [list(arrays), list(arrays)]
            at[0][i], at[1][i] = a + eps * v, a - eps * v
            numeric = (np.sum(np_fn(*at[0]) * w) - np.sum(np_fn(*at[1]) * w)) / (2 * eps)
            assert math.isclose(float(np.sum(g * v)), numeric, rel_tol=rtol, abs_tol=atol), (i, np.sum(g * v), numeric)


def child_env(root: str, **extra: str) -> dict:
    """The environment for a child Python that imports the checkout at `root` first: its
    PYTHONPATH put before the one set (where packages installed with --target live, as on the GPU
    machine), and `extra` variables."""
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}
