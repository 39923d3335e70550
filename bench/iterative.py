"""Loops as NumPy users write them, each run by NumPy and by lazyarr in one process.

- Never realized inside (issue 14): least squares by gradient descent, power iteration, Jacobi
  iteration, k-means, an exponential moving average whose scalar changes every step, and a
  hand-written two-layer MLP; lazyarr records the whole loop and realizes only the result.
- Reading a scalar every iteration (issue 27): gradient descent with a bias whose loss is read
  every step, a game of life counting its cells every generation, Euler steps written into a
  trajectory (`traj[i] = state`), a heat equation with its boundary set every step.

Prints each workload's time at N and 2N iterations next to NumPy's, the ratio of the two lazyarr
times (at most about 2 when the work is linear in the iterations) and lazyarr's time over NumPy's.
"first" is the first run in this process (kernels from the disk cache, or compiled).

    python bench/iterative.py [--iterations N] [--runs R] [--only NAME,...]
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
        m = 0.9 * m + 0.1 * xp.sin(series[i % series.shape[0]] * (i + 1))
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


# ---- loops that read a scalar every iteration --------------------------------------------------

def gradient_descent(xp, data, n):
    rows = 500
    t = xp.arange(rows * 4, dtype=xp.float64).reshape(rows, 4) / 1000   # the data made by the program
    X = xp.sin(t * 3.0) + 0.1 * t
    y = xp.sin(xp.arange(rows, dtype=xp.float64) / 50)
    w, b, lr, losses = xp.zeros(4), 0.0, 0.05, []
    for _ in range(n):
        err = X @ w + b - y
        losses.append(float((err ** 2).mean()))
        w -= lr * 2 * X.T @ err / rows
        b -= lr * 2 * err.mean()
    return xp.asarray(losses)


def game_of_life(xp, data, n):
    board = xp.zeros((32, 32), dtype=xp.int32)
    board[1, 2] = board[2, 3] = board[3, 1] = board[3, 2] = board[3, 3] = 1   # a glider
    board[10:13, 10] = 1                                                       # a blinker
    history = []
    for _ in range(n):
        around = sum(xp.roll(xp.roll(board, i, 0), j, 1)
                     for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
        board = xp.astype((around == 3) | ((board == 1) & (around == 2)), xp.int32)
        history.append(int(board.sum()))
    return xp.asarray(history)


def euler_trajectory(xp, data, n):
    dt, state = 0.01, xp.asarray([1.0, 0.0, 0.5])
    traj = xp.zeros((n, 3))
    for i in range(n):
        x, v, z = state[0], state[1], state[2]
        state = state + dt * xp.stack([v, -x - 0.1 * v, -z])
        traj[i] = state
    return traj


def heat_equation(xp, data, n):
    u = xp.sin(xp.linspace(0, np.pi, 256))
    for _ in range(n):
        u = u + 0.2 * (xp.roll(u, 1) - 2 * u + xp.roll(u, -1))
        u[0] = u[-1] = 0.0
    return u


READING = {"gradient_descent": gradient_descent, "game_of_life": game_of_life,
           "euler_trajectory": euler_trajectory, "heat_equation": heat_equation}


def make_data(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    S = rng.standard_normal((16, 16))
    D = rng.standard_normal((12, 12)) + 30 * np.eye(12)
    X = np.concatenate([rng.standard_normal((25, 2)) + c for c in ((0, 0), (6, 0), (0, 6), (6, 6))])
    return {"A": rng.standard_normal((20, 5)), "b": rng.standard_normal(20),
            "S": S @ S.T, "D": D, "X": X, "series": rng.standard_normal((7, 1000)),
            "t": rng.standard_normal((100, 1)), "W1": rng.standard_normal((2, 16)) * 0.5,
            "W2": rng.standard_normal((16, 1)) * 0.5}


def data_for(name: str, seed: int = 0) -> dict:   # (the reading loops make their own)
    data = make_data(seed)
    if name == "jacobi":   # a 12×12 system
        data["b"] = data["b"][:12]
    return data


def timed(fn, *args) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    out = np.asarray(fn(*args))
    return time.perf_counter() - start, out


def measure(workloads: dict, n: int, runs: int, only: set[str] | None) -> list[list[str]]:
    import lazyarr as xp
    rows = []
    for name, fn in workloads.items():
        if only and name not in only:
            continue
        data = data_for(name)
        first = timed(fn, xp, data, n)[0]   # compiles, or loads from the disk cache
        timed(fn, xp, data, 2 * n)   # (the last stages of a longer loop may be new structures)
        ours = {k: [] for k in (n, 2 * n)}
        numpy = []
        for _ in range(runs):   # alternated: the machine's noise falls on both
            for k in (n, 2 * n):
                ours[k].append(timed(fn, xp, data, k)[0])
            numpy.append(timed(fn, np, data, n)[0])
        ours = {k: statistics.median(v) for k, v in ours.items()}
        numpy = statistics.median(numpy)
        err = np.max(np.abs(timed(fn, xp, data, n)[1] - timed(fn, np, data, n)[1]))
        rows.append([name, f"{first * 1e3:.1f}", f"{ours[n] * 1e3:.1f}", f"{ours[2 * n] * 1e3:.1f}",
                     f"{ours[2 * n] / ours[n]:.2f}", f"{numpy * 1e3:.2f}", f"{ours[n] / numpy:.1f}", f"{err:.1e}"])
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--only", default="", help="workloads to run, by name, comma-separated")
    args = p.parse_args()
    n, only = args.iterations, set(filter(None, args.only.split(",")))
    header = ["workload", f"first {n} ms", f"lazyarr {n} ms", f"lazyarr {2 * n} ms", "ratio", f"NumPy {n} ms",
              "x NumPy", "max |diff|"]
    for title, workloads in (("loops never realized inside", WORKLOADS),
                             ("loops reading a scalar every iteration", READING)):
        rows = measure(workloads, n, args.runs, only)
        if rows:
            print(f"{title}, {n} and {2 * n} iterations (medians of {args.runs})")
            print(table(rows, header))


if __name__ == "__main__":
    main()
