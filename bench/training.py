"""Training-step benchmark: the digits MLP (64-128-10, batch 64, Adam) in lazyarr and in PyTorch
(CPU, 2 threads) in one process, realizing the loss every step as a user printing it would.
The two loops take turns (10 steps each), so that both see the same machine; prints the median
step times and their ratio; with --memory, the process's RSS over a long run.

    python bench/training.py [--steps N] [--memory STEPS]
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
import lazyarr.nn.functional as F  # noqa: E402
from lazyarr import optim, random  # noqa: E402
from bench.common import table  # noqa: E402


BLOCK = 10


def data(batch: int):
    from sklearn.datasets import load_digits
    d = load_digits()
    return (d.data / 16.0).astype(np.float32), d.target.astype(np.int64)


def lazyarr_stepper(x, y, batch):
    """A function running one training step of lazyarr and returning its time."""
    random.seed(0)
    params = []
    for fan_in, fan_out in ((64, 128), (128, 10)):
        bound = 1 / np.sqrt(fan_in)
        params += [random.uniform(-bound, bound, (fan_out, fan_in), dtype=xp.float32).realize().requires_grad_(),
                   random.uniform(-bound, bound, (fan_out,), dtype=xp.float32).realize().requires_grad_()]
    opt = optim.Adam(params, lr=1e-2)
    n, steps = len(x) // batch, iter(range(1 << 62))

    def step() -> float:
        i = next(steps) % n
        xb, yb = xp.asarray(x[i * batch:(i + 1) * batch]), xp.asarray(y[i * batch:(i + 1) * batch])
        start = time.perf_counter()
        opt.zero_grad()
        h = F.relu(F.linear(xb, params[0], params[1]))
        loss = F.cross_entropy(F.linear(h, params[2], params[3]), yb)
        loss.backward()
        opt.step()
        float(loss)
        return time.perf_counter() - start
    return step


def torch_stepper(x, y, batch):
    """The same step in PyTorch (CPU, 2 threads)."""
    import torch
    torch.set_num_threads(2)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    xt, yt = torch.tensor(x), torch.tensor(y)
    n, steps = len(x) // batch, iter(range(1 << 62))

    def step() -> float:
        i = next(steps) % n
        xb, yb = xt[i * batch:(i + 1) * batch], yt[i * batch:(i + 1) * batch]
        start = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        loss.item()
        return time.perf_counter() - start
    return step


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--memory", type=int, default=0, help="run this many steps and print the RSS curve")
    args = p.parse_args()
    x, y = data(args.batch)
    if args.memory:
        samples = rss_curve(x, y, args.batch, args.memory)
        print(table([[s, f"{m:.1f}"] for s, m in samples], ["step", "RSS MiB"]))
        return
    # the two loops take turns, BLOCK steps each, so that a noisy spell of the machine slows both
    ours_step = lazyarr_stepper(x, y, args.batch)
    try:
        theirs_step = torch_stepper(x, y, args.batch)
    except ImportError:
        theirs_step = None
    ours, theirs = [], []
    for _ in range(max(1, args.steps // BLOCK)):
        ours += [ours_step() for _ in range(BLOCK)]
        if theirs_step is not None:
            theirs += [theirs_step() for _ in range(BLOCK)]
    warm = len(ours) // 10   # the first steps compile
    ours, theirs = ours[warm:], theirs[warm:]
    rows = [["lazyarr", f"{statistics.median(ours) * 1e3:.3f}", ""]]
    if theirs_step is not None:
        ratio = statistics.median(ours) / statistics.median(theirs)
        rows.append(["PyTorch (2 threads)", f"{statistics.median(theirs) * 1e3:.3f}", ""])
        rows[0][2] = f"{ratio:.2f}x PyTorch's step time"
    else:
        rows.append(["PyTorch", "not installed", ""])
    print(table(rows, ["library", "median step ms", "ratio"]))


def rss_curve(x, y, batch, steps):
    """(step, RSS MiB) every steps/20 steps of the lazyarr loop, after a collection."""
    import gc
    step, every, samples = lazyarr_stepper(x, y, batch), max(1, steps // 20), []
    for s in range(1, steps + 1):
        step()
        if s % every == 0:
            gc.collect()
            samples.append((s, rss_mb()))
    return samples


if __name__ == "__main__":
    main()
