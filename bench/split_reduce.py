"""split_reduceop benchmark (issue 3): sums of 16M float32 (`sum(a)`, and `sum(exp(a))` where the
work per element is more than a load) with the reduction split in two kernels (the first one's
rows spread over the threads) against one kernel (one thread walks it all), and NumPy. Every
timed sum reads a freshly made input; the two settings alternate.

    python bench/split_reduce.py [--size N] [--runs R]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

os.environ.setdefault("LAZYARR_ADAPTIVE_THREADS", "0")   # a fixed thread count, as the peers have
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lazyarr as xp  # noqa: E402
from bench.common import table  # noqa: E402
from lazyarr import settings  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=1 << 24)
    p.add_argument("--runs", type=int, default=9)
    args = p.parse_args()
    print(f"{args.size} float32, {settings.threads} threads, medians of {args.runs}")
    for label, f, ref in (("sum(a)", xp.sum, np.sum), ("sum(exp(a))", lambda a: xp.sum(xp.exp(a)),
                                                       lambda a: np.sum(np.exp(a)))):
        print(table(measure(f, ref, args.size, args.runs), [label, "kernels", "ms", "speed vs one kernel"]))


def measure(f, ref, size: int, runs: int) -> list[list[object]]:
    rng = np.random.default_rng(0)
    times: dict[str, list[float]] = {"split (2 kernels)": [], "one kernel": [], "NumPy": []}
    kernels = {}
    for i in range(runs + 3):
        for name, split in (("split (2 kernels)", True), ("one kernel", False)):
            settings.split_reduceop = split
            a = xp.asarray(rng.standard_normal(size, dtype=np.float32)).realize()
            kernels[name] = len(f(a).schedule())
            start = time.perf_counter()
            f(a).realize()
            if i >= 3:
                times[name].append(time.perf_counter() - start)
        a = rng.standard_normal(size, dtype=np.float32)
        start = time.perf_counter()
        ref(a)
        if i >= 3:
            times["NumPy"].append(time.perf_counter() - start)
    base = statistics.median(times["one kernel"])
    return [[name, kernels.get(name, "-"), f"{statistics.median(ts) * 1e3:.2f}", f"{base / statistics.median(ts):.2f}x"]
            for name, ts in times.items()]

if __name__ == "__main__":
    main()
