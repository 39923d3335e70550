"""Train a small MLP (64-128-10) on scikit-learn's digits (shipped with scikit-learn, no download)
with lazyarr's autograd and Adam, and report the test accuracy and the time per step: once as a
plain loop, and once with the step under `lazyarr.compile_step` (recorded in its first calls, then
replayed: the same results, without rebuilding the graphs each step).

    python examples/train_digits.py [--epochs N] [--batch B] [--quiet] [--plain | --captured]
"""
import argparse
import math
import time

import numpy as np

import lazyarr as xp
import lazyarr.nn.functional as F
from lazyarr import optim, random


def load_digits(seed: int = 0):
    from sklearn.datasets import load_digits as sk_load
    data = sk_load()
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    split = int(0.8 * len(x))
    return (x[:split], y[:split]), (x[split:], y[split:])


class MLP:
    def __init__(self, sizes=(64, 128, 10)):
        self.params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            bound = 1 / math.sqrt(fan_in)   # PyTorch's default init for nn.Linear
            w = random.uniform(-bound, bound, (fan_out, fan_in), dtype=xp.float32).realize().requires_grad_()
            b = random.uniform(-bound, bound, (fan_out,), dtype=xp.float32).realize().requires_grad_()
            self.params += [w, b]

    def __call__(self, x):
        for i in range(0, len(self.params), 2):
            x = F.linear(x, self.params[i], self.params[i + 1])
            if i + 2 < len(self.params):
                x = F.relu(x)
        return x


def train(epochs: int = 15, batch: int = 64, lr: float = 1e-2, seed: int = 0, quiet: bool = False,
          captured: bool = False):
    random.seed(seed)
    (x_train, y_train), (x_test, y_test) = load_digits(seed)
    model = MLP()
    opt = optim.Adam(model.params, lr=lr)

    def step(xb, yb):
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        return loss
    if captured:
        step = xp.compile_step(step)
    shuffle = np.random.default_rng(seed)
    step_times, losses = [], []
    n_batches = len(x_train) // batch
    for epoch in range(epochs):
        order = shuffle.permutation(len(x_train))
        for i in range(n_batches):
            idx = order[i * batch:(i + 1) * batch]
            xb, yb = xp.asarray(x_train[idx]), xp.asarray(y_train[idx])
            start = time.perf_counter()
            value = float(step(xb, yb))   # realizing the loss every step, as a user printing it would
            step_times.append(time.perf_counter() - start)
            losses.append(value)
        if not quiet:
            print(f"epoch {epoch + 1:2d}  loss {np.mean(losses[-n_batches:]):.4f}  "
                  f"step {np.median(step_times[-n_batches:]) * 1e3:.2f} ms (median)")
    logits = model(xp.asarray(x_test))
    predicted = xp.argmax(logits, axis=1)
    accuracy = float(xp.mean((predicted == xp.asarray(y_test)).astype(xp.float32)))
    return accuracy, step_times, losses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--quiet", action="store_true")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--plain", action="store_true", help="only the plain loop")
    which.add_argument("--captured", action="store_true", help="only the loop under compile_step")
    args = p.parse_args()
    for captured in ([False] if args.plain else [True] if args.captured else [False, True]):
        if not args.quiet:
            print("the step under compile_step:" if captured else "the plain loop:")
        accuracy, step_times, _ = train(args.epochs, args.batch, args.lr, quiet=args.quiet, captured=captured)
        steady = step_times[len(step_times) // 10:]
        print(f"{'compile_step' if captured else 'plain loop  '}: test accuracy {accuracy * 100:.2f}%  |  "
              f"{len(step_times)} steps, median step {np.median(steady) * 1e3:.2f} ms "
              f"(first step {step_times[0] * 1e3:.0f} ms, with compiling)")


if __name__ == "__main__":
    main()
