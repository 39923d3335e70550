"""Test helpers: a reference evaluator for kernel-level integer graphs, and NumPy comparison."""
import itertools

import numpy as np

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
