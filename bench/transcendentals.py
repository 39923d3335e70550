"""Native (libm) against approximated (codegen stage 18) transcendental functions on the C backend.

For each function and dtype: one compiled kernel over `--elements` elements (4M, issue 29's size,
by default), the median time of `runs` runs for transcendentals="native" and ="approx", and
NumPy's time for the same work. Prints a table of ns per element, the ratio native/approx (above
1: the approximation is faster), approx/NumPy, and the approximation's read+write bandwidth as a
share of NumPy's copy of the same arrays (`np.copyto`, timed beside it: issue 29's "80% of the
read+write bandwidth"). The C renderer's default (`CRenderer.approx_by_default`, per dtype) approximates the
functions that win here. The machine is shared and noisy: `--repeat` runs the whole table that
many times and reports each cell's median; `LAZYARR_THREADS=1` times one core.

    python bench/transcendentals.py [--dtype float32] [--runs 9] [--repeat 1] [--elements 4194304]
"""
import argparse
import os
import statistics
import sys
import warnings

import numpy as np

# a fixed thread count (LAZYARR_THREADS, all cores by default): the adaptive one follows the
# machine's load of the last moments, and a table would mix one- and two-thread rows
os.environ.setdefault("LAZYARR_ADAPTIVE_THREADS", "0")

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

from bench.common import median_time, table  # noqa: E402
from lazyarr import dtypes  # noqa: E402
from lazyarr.compiler.codegen import generate  # noqa: E402
from lazyarr.compiler.render_c import CRenderer  # noqa: E402
from lazyarr.compiler.uop import Ops, UOp  # noqa: E402
from lazyarr.runtime.devices import get_device# noqa: E402

FUNCTIONS = {Ops.EXP: np.exp, Ops.EXP2: np.exp2, Ops.EXPM1: np.expm1, Ops.LOG: np.log, Ops.LOG2: np.log2,
             Ops.LOG1P: np.log1p, Ops.SIN: np.sin, Ops.COS: np.cos, Ops.TAN: np.tan, Ops.TANH: np.tanh,
             Ops.POW: np.power}
N = 1 << 22   # elements (--elements)


class _Buffer:
    def __init__(self, a):
        self.storage = a


def kernel(op, dt, mode):
    idx, true = dtypes.index, UOp.const(dtypes.bool_, True)
    nargs = 2 if op is Ops.POW else 1
    gs = [UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(dt), (), k) for k in range(nargs + 1)]
    r = UOp(Ops.RANGE, idx, (UOp.const(idx, N),), 0)
    loads = [UOp(Ops.LOAD, dt, (UOp(Ops.INDEX, g.dtype, (g, r, true)),)) for g in gs[1:]]
    st = UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, gs[0].dtype, (gs[0], r, true)), UOp(op, dt, tuple(loads))))
    sink = UOp(Ops.SINK, dtypes.void, (UOp(Ops.END, dtypes.void, (st, r)),))
    ks = generate(sink, CRenderer(), name=f"bench_{op.name.lower()}_{dt}_{mode}", transcendentals=mode)
    return get_device("cpu").compile(ks.name, ks.source)


def measure(op, dt, fn, runs: int) -> dict[str, float]:
    """ns per element of the native and approximated kernels, of NumPy and of NumPy's copy, and
    ("bandwidth") the approximated kernel's read+write bytes a second over the copy's."""
    rng = np.random.default_rng(0)
    lo, hi = {Ops.LOG: (0, 100), Ops.LOG2: (0, 100), Ops.LOG1P: (-0.9, 100), Ops.POW: (0, 4)}.get(op, (-10, 10))
    args = [rng.uniform(lo, hi, N).astype(dt.np) for _ in range(2 if op is Ops.POW else 1)]
    out = np.empty(N, dt.np)
    bufs = [_Buffer(out)] + [_Buffer(a) for a in args]
    times = {"copy": median_time(lambda i: np.copyto(out, args[0]), runs=runs)}
    for mode in ("native", "approx"):
        prog = kernel(op, dt, mode)
        times[mode] = median_time(lambda i: prog(bufs), runs=runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        times["numpy"] = median_time(lambda i: fn(*args, out=out), runs=runs)
    out_ns = {m: t / N * 1e9 for m, t in times.items()}
    # bytes per element: the copy reads one array and writes one; the function reads its arguments
    out_ns["bandwidth"] = (len(args) + 1) / times["approx"] / (2 / times["copy"])
    return out_ns


def main() -> None:
    global N
    p = argparse.ArgumentParser()
    p.add_argument("--dtype", choices=["float32", "float64"], action="append")
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--elements", type=int, default=N)
    a = p.parse_args()
    N = a.elements
    cases = [(op, getattr(dtypes, d), fn) for d in (a.dtype or ["float32", "float64"]) for op, fn in FUNCTIONS.items()]
    samples: dict = {}
    for _ in range(a.repeat):
        for op, dt, fn in cases:
            for m, v in measure(op, dt, fn, a.runs).items():
                samples.setdefault((op, dt, m), []).append(v)
    rows, wins = [], 0
    for op, dt, _ in cases:
        ns = {m: statistics.median(samples[(op, dt, m)]) for m in ("native", "approx", "numpy")}
        wins += ns["native"] > ns["approx"]
        rows.append([op.name.lower(), dt, *(f"{ns[m]:.2f}" for m in ("native", "approx", "numpy")),
                     f"{ns['native'] / ns['approx']:.2f}", f"{ns['approx'] / ns['numpy']:.2f}",
                     f"{statistics.median(samples[(op, dt, 'bandwidth')]) * 100:.0f}%"])
    print(table(rows, ["function", "dtype", "native ns/elem", "approx ns/elem", "numpy ns/elem", "native/approx",
                       "approx/numpy", "approx bandwidth / copy's"]))
    print(f"{N:,} elements")
    print(f"approx faster on {wins} of {len(rows)}")


if __name__ == "__main__":
    main()
