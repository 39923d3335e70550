"""Foundation benchmark: a fused elementwise chain over 16M float32 and a row reduction, lazyarr
against NumPy in one process. Every timed iteration reads its own freshly made input buffers.

    python bench/foundation.py [--size N] [--runs R]
"""
import argparse
import os
import sys

import numpy as np

os.environ.setdefault("LAZYARR_ADAPTIVE_THREADS", "0")   # a fixed thread count, as the peers have
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lazyarr as xp  # noqa: E402
from bench.common import median_time, table  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=16 * 1024 * 1024)
    p.add_argument("--runs", type=int, default=7)
    args = p.parse_args()
    n, runs = args.size, args.runs
    sets = runs + 2
    rng = np.random.default_rng(0)
    host = [[rng.standard_normal(n, dtype=np.float32) for _ in range(3)] for _ in range(sets)]
    dev = [[xp.asarray(a) for a in s] for s in host]
    rows = []

    def chain_np(a, b, c):
        return np.exp(a * b + c) * 0.5 - np.sqrt(np.abs(a)) + np.tanh(c)

    def chain_xp(a, b, c):
        return (xp.exp(a * b + c) * 0.5 - xp.sqrt(xp.abs(a)) + xp.tanh(c)).realize()

    t_np = median_time(lambda i: chain_np(*host[i]), runs)
    t_xp = median_time(lambda i: chain_xp(*dev[i]), runs)
    rows.append(["exp(a*b+c)*0.5-sqrt(abs(a))+tanh(c), 16M f32", f"{t_np*1e3:.1f}", f"{t_xp*1e3:.1f}", f"{t_np/t_xp:.2f}x"])

    t_np = median_time(lambda i: host[i][0] * host[i][1] + host[i][2], runs)
    t_xp = median_time(lambda i: (dev[i][0] * dev[i][1] + dev[i][2]).realize(), runs)
    gbs = 16 * n / t_xp / 1e9
    rows.append(["a*b+c, 16M f32", f"{t_np*1e3:.1f}", f"{t_xp*1e3:.1f} ({gbs:.0f} GB/s)", f"{t_np/t_xp:.2f}x"])

    side = int(np.sqrt(n))
    mats_np = [s[0][:side * side].reshape(side, side) for s in host]
    mats_xp = [xp.asarray(m) for m in mats_np]
    t_np = median_time(lambda i: mats_np[i].sum(axis=1), runs)
    t_xp = median_time(lambda i: xp.sum(mats_xp[i], axis=1).realize(), runs)
    rows.append([f"row sums {side}x{side} f32", f"{t_np*1e3:.1f}", f"{t_xp*1e3:.1f}", f"{t_np/t_xp:.2f}x"])

    print(table(rows, ["benchmark", "NumPy ms", "lazyarr ms", "speed-up vs NumPy"]))


if __name__ == "__main__":
    main()
