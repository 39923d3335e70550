"""Dispatch benchmark (issues 5, 7 and 27): the Python cost of recording a graph and running it
when every kernel is cached.

- 100 repetitions of `x = x * 1.0001 + 0.5` on 16 float32, then realize: the median record,
  realize and total times over the runs (NumPy's eager loop for scale);
- `float(xp.sum(xp.sin(x * c)))` on 1k, 10k, 100k and 1M float32 with `c` new every call (a
  Python scalar is a kernel argument: nothing compiles) and with `c` fixed, next to NumPy's;
- the time to record each of the operations a loop records every iteration (`RECORDED`).

    python bench/dispatch.py [--runs R] [--reps N]
"""
import argparse
import itertools
import os
import statistics
import sys
import time
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lazyarr as xp  # noqa: E402
from lazyarr.runtime.cpu_compiler import wait_for_optimised  # noqa: E402
from bench.common import table  # noqa: E402


def once(reps: int) -> tuple[float, float]:
    x = xp.asarray(np.arange(16, dtype=np.float32))
    start = time.perf_counter()
    for _ in range(reps):
        x = x * 1.0001 + 0.5
    recorded = time.perf_counter()
    x.realize()
    return recorded - start, time.perf_counter() - recorded


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--reps", type=int, default=100)
    args = p.parse_args()
    for _ in range(5):   # compile, cache the schedule, and let the kernel reach its optimised tier
        once(args.reps)
    runs = [once(args.reps) for _ in range(args.runs)]
    a = np.arange(16, dtype=np.float32)
    numpy = []
    for _ in range(args.runs):
        start = time.perf_counter()
        y = a
        for _ in range(args.reps):
            y = y * np.float32(1.0001) + np.float32(0.5)
        numpy.append(time.perf_counter() - start)
    ms = lambda v: f"{statistics.median(v) * 1e3:.3f}"
    print(table([[f"lazyarr: {args.reps} x (x * 1.0001 + 0.5), 16 f32", ms([r for r, _ in runs]),
                  ms([z for _, z in runs]), ms([r + z for r, z in runs])],
                 ["NumPy, eager", "", "", ms(numpy)]],
                ["case", "record ms", "realize ms", "total ms"]))
    print()
    rows = []
    for n in (1_000, 10_000, 100_000, 1_000_000):
        rows.append([f"{n:,}", *scalar_sum(n, args.runs)])
    print(table(rows, ["float(sum(sin(x * c))), f32", "c changing us", "c fixed us", "NumPy us",
                       "changing / fixed"]))
    print()
    print(table(recording(args.runs), ["recording one operation (500 f64)", "lazyarr us (records)",
                                       "NumPy us (computes)"]))


# the operations a loop records every iteration: lazyarr's graph building (nothing runs) next to
# NumPy's eager operation on the same data (which computes); (a, b, c, M, v) are 500-element
# float64 vectors, a 500x4 matrix and a 4-vector, as a small regression loop has them
RECORDED = [
    ("x * c (c new each time)", "a * (next(k) + 0.5)"),
    ("x * 0.5", "a * 0.5"),
    ("x + y", "a + b"),
    ("sin(x)", "m.sin(a)"),
    ("sum(x)", "m.sum(a)"),
    ("mean(x)", "m.mean(a)"),
    ("x[0]", "a[0]"),
    ("M.T", "M.T"),
    ("M @ v", "M @ v"),
    ("stack([x, y, z])", "m.stack([a, b, c])"),
    ("x[i] = y (row of M)", "M[next(k) % 500] = v"),
]


def recording(runs: int) -> list[list[str]]:
    """Microseconds to record each operation of RECORDED (the minimum of `runs` repeats of 2000),
    and NumPy's time for it."""
    rows = []
    for name, code in RECORDED:
        per = []
        for m in (xp, np):
            rng = np.random.default_rng(0)
            env = {"m": m, "k": itertools.count()}
            env.update((n, m.asarray(rng.standard_normal(500))) for n in "abc")
            env["M"], env["v"] = m.asarray(rng.standard_normal((500, 4))), m.asarray(rng.standard_normal(4))
            if m is xp:
                xp.realize(*(env[n] for n in "abcMv"))
            per.append(min(timeit.repeat(code, globals=env, number=2000, repeat=max(3, runs // 10))) / 2000 * 1e6)
        rows.append([name, f"{per[0]:.2f}", f"{per[1]:.2f}"])
    return rows


def scalar_sum(n: int, runs: int) -> list[str]:
    """Median microseconds of float(sum(sin(x * c))) with c new each call, with c fixed, NumPy's."""
    values = np.linspace(-3, 3, n, dtype=np.float32)
    x = xp.asarray(values)
    for i in range(5):   # compile, cache the schedule, and let the kernels reach their optimised tier
        float(xp.sum(xp.sin(x * (0.7 + i))))
    wait_for_optimised()
    changing, fixed, numpy = [], [], []
    for i in range(max(runs, 20)):   # alternated: the machine's noise falls on all three
        c = 0.5 + 1e-3 * i
        start = time.perf_counter()
        float(xp.sum(xp.sin(x * c)))
        changing.append(time.perf_counter() - start)
        start = time.perf_counter()
        float(xp.sum(xp.sin(x * 0.7)))
        fixed.append(time.perf_counter() - start)
        start = time.perf_counter()
        float(np.sum(np.sin(values * np.float32(c))))
        numpy.append(time.perf_counter() - start)
    us = lambda v: statistics.median(v) * 1e6
    return [f"{us(changing):.1f}", f"{us(fixed):.1f}", f"{us(numpy):.1f}", f"{us(changing) / us(fixed):.2f}"]


if __name__ == "__main__":
    main()
