"""Dispatch benchmark (issues 5 and 7): the Python cost of recording a graph and running it when
every kernel is cached. 100 repetitions of `x = x * 1.0001 + 0.5` on 16 float32, then realize;
prints the median record, realize and total times over the runs (NumPy's eager loop for scale).

    python bench/dispatch.py [--runs R] [--reps N]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lazyarr as xp  # noqa: E402
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


if __name__ == "__main__":
    main()
