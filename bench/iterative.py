"""Loops never realized inside (issue 14): least squares by gradient descent, power iteration,
Jacobi iteration, k-means, an exponential moving average and a hand-written two-layer MLP, each
written once as array code and run by NumPy and by lazyarr, which records the whole loop and
realizes only the result. Prints each workload's time at N and 2N iterations next to NumPy's, and
the ratio of the two lazyarr times (at most about 2 when the work is linear in the graph).

    python bench/iterative.py [--iterations N] [--runs R]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import table  # noqa: E402


def least_squares(xp, data, n):
    A, b = xp.asarray(data["A"]), xp.asarray(data["b"])
    w = xp.zeros(A.shape[1])
    for _ in range(n):
        r = A @ w - b
        w = w - 0.01 * (A.T @ r)
    return w


def power_iteration(xp, data, n):
    M = xp.asarray(data["S"])
    v = xp.ones(M.shape[0])
    for _ in range(n):
        v = M @ v
        v = v / xp.sqrt(xp.sum(v * v))
    return v


def jacobi(xp, data, n):
    A, b = xp.asarray(data["D"]), xp.asarray(data["b"])
    d = xp.sum(A * xp.eye(A.shape[0]), axis=1)   # the diagonal
    R = A - xp.eye(A.shape[0]) * d
    x = xp.zeros(A.shape[0])
    for _ in range(n):
        x = (b - R @ x) / d
    return x


def kmeans(xp, data, n):
    X = xp.asarray(data["X"])
    C = X[:4]
    for _ in range(n):
        d = xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)
        label = xp.argmin(d, axis=1)
        onehot = xp.astype(label[:, None] == xp.arange(4)[None, :], X.dtype)
        C = (onehot.T @ X) / xp.maximum(xp.sum(onehot, axis=0)[:, None], 1.0)
    return C


def moving_average(xp, data, n):
    series = xp.asarray(data["series"])
    m = xp.zeros(series.shape[1])
    for i in range(n):
        m = 0.9 * m + 0.1 * series[i % series.shape[0]]
    return m


def mlp(xp, data, n):
    X, t = xp.asarray(data["X"]), xp.asarray(data["t"])
    W1, W2 = xp.asarray(data["W1"]), xp.asarray(data["W2"])
    for _ in range(n):
        h = xp.tanh(X @ W1)
        err = h @ W2 - t
        gW2 = h.T @ err / X.shape[0]
        gh = (err @ W2.T) * (1 - h * h)
        gW1 = X.T @ gh / X.shape[0]
        W1, W2 = W1 - 0.1 * gW1, W2 - 0.1 * gW2
    return xp.sum(W1) + xp.sum(W2 * W2)


WORKLOADS = {"least_squares": least_squares, "power_iteration": power_iteration, "jacobi": jacobi,
             "kmeans": kmeans, "moving_average": moving_average, "mlp": mlp}


def make_data(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    S = rng.standard_normal((16, 16))
    D = rng.standard_normal((12, 12)) + 30 * np.eye(12)
    X = np.concatenate([rng.standard_normal((25, 2)) + c for c in ((0, 0), (6, 0), (0, 6), (6, 6))])
    return {"A": rng.standard_normal((20, 5)), "b": rng.standard_normal(20),
            "S": S @ S.T, "D": D, "X": X, "series": rng.standard_normal((7, 8)),
            "t": rng.standard_normal((100, 1)), "W1": rng.standard_normal((2, 16)) * 0.5,
            "W2": rng.standard_normal((16, 1)) * 0.5}


def data_for(name: str, seed: int = 0) -> dict:
    data = make_data(seed)
    if name == "jacobi":   # a 12×12 system
        data["b"] = data["b"][:12]
    return data


def timed(fn, *args) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    out = np.asarray(fn(*args))
    return time.perf_counter() - start, out


def main() -> None:
    import lazyarr as xp
    p = argparse.ArgumentParser()
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    n, rows = args.iterations, []
    for name, fn in WORKLOADS.items():
        data = data_for(name)
        fn(xp, data, 3).numpy()   # compile the kernels once
        ours = {k: statistics.median(timed(fn, xp, data, k)[0] for _ in range(args.runs)) for k in (n, 2 * n)}
        numpy = statistics.median(timed(fn, np, data, n)[0] for _ in range(args.runs))
        err = np.max(np.abs(timed(fn, xp, data, n)[1] - timed(fn, np, data, n)[1]))
        rows.append([name, f"{ours[n] * 1e3:.1f}", f"{ours[2 * n] * 1e3:.1f}", f"{ours[2 * n] / ours[n]:.2f}",
                     f"{numpy * 1e3:.2f}", f"{err:.1e}"])
    print(f"loops never realized inside, {n} and {2 * n} iterations (medians of {args.runs}; first compile excluded)")
    print(table(rows, ["workload", f"lazyarr {n} ms", f"lazyarr {2 * n} ms", "ratio", f"NumPy {n} ms", "max |diff|"]))


if __name__ == "__main__":
    main()
