"""Training-step benchmark (issues 5 and 28): a training loop written the way users write it, in
lazyarr and its peers, in one process. A 64-128-10 MLP on scikit-learn's digits, batch 64, the
loss spelled out (max, log, sum, exp and a one-hot comparison), SGD with momentum 0.9, a new
array made from each NumPy batch, and `float(loss)` every step:

- lazyarr, the plain loop (`opt.zero_grad(); loss.backward(); opt.step()`);
- lazyarr, the same step under `lazyarr.compile_step` (captured once, replayed);
- PyTorch (2 threads), eager;
- JAX with the whole step under `jax.jit`, and MLX with it under `mx.compile`, where installed.

The loops take turns (BLOCK steps each), so that a noisy spell of the machine slows all of them;
prints the median step times and the ratios to PyTorch's and JAX's. With --memory N, the RSS of the
captured loop over N steps.

With --gpu, lazyarr runs on OpenCL (a GPU's driver) and PyTorch on CUDA; JAX uses its default
device (the GPU where it has one).

    python bench/training.py [--steps N] [--memory STEPS] [--gpu]
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
from lazyarr import optim  # noqa: E402
from bench.common import table  # noqa: E402

BLOCK = 10
LR, MOMENTUM, SIZES = 0.05, 0.9, (64, 128, 10)


def data():
    try:
        from sklearn.datasets import load_digits
        d = load_digits()
        return (d.data / 16.0).astype(np.float32), d.target.astype(np.int64)
    except ImportError:   # the same shapes, random
        rng = np.random.default_rng(0)
        return rng.random((1797, 64), dtype=np.float32), rng.integers(0, 10, 1797)


def initial_params():
    """The weights every library starts from: (W1, b1, W2, b2), W as (out, in)."""
    rng, out = np.random.default_rng(0), []
    for fan_in, fan_out in zip(SIZES, SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        out += [rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                rng.uniform(-bound, bound, (fan_out,)).astype(np.float32)]
    return out


def batches(x, y, batch):
    n, i = len(x) // batch, 0
    while True:
        j = i % n
        yield x[j * batch:(j + 1) * batch], y[j * batch:(j + 1) * batch]
        i += 1


def lazyarr_stepper(x, y, batch, captured, device=None):
    params = [xp.asarray(p, requires_grad=True, device=device) for p in initial_params()]
    opt = optim.SGD(params, lr=LR, momentum=MOMENTUM)
    w1, b1, w2, b2 = params

    def step(xb, yb):
        opt.zero_grad()
        h = xp.maximum(xb @ w1.T + b1, 0)
        logits = h @ w2.T + b2
        m = xp.max(logits, axis=1, keepdims=True)
        logp = logits - m - xp.log(xp.sum(xp.exp(logits - m), axis=1, keepdims=True))
        onehot = xp.astype(yb[:, None] == xp.arange(SIZES[-1], device=device), xp.float32)
        loss = -xp.sum(onehot * logp) / batch
        loss.backward()
        opt.step()
        return loss
    run = xp.compile_step(step) if captured else step
    data_ = batches(x, y, batch)

    def timed() -> float:
        xb, yb = next(data_)
        start = time.perf_counter()
        float(run(xp.asarray(xb, device=device), xp.asarray(yb, device=device)))
        return time.perf_counter() - start
    return timed


def torch_stepper(x, y, batch, device="cpu"):
    import torch
    torch.set_num_threads(2)
    params = [torch.tensor(p, requires_grad=True, device=device) for p in initial_params()]
    opt = torch.optim.SGD(params, lr=LR, momentum=MOMENTUM)
    w1, b1, w2, b2 = params
    arange = torch.arange(SIZES[-1], device=device)
    data_ = batches(x, y, batch)

    def timed() -> float:
        xb, yb = next(data_)
        start = time.perf_counter()
        xb, yb = torch.as_tensor(xb, device=device), torch.as_tensor(yb, device=device)
        opt.zero_grad()
        h = torch.clamp(xb @ w1.T + b1, min=0)
        logits = h @ w2.T + b2
        m = torch.amax(logits, dim=1, keepdim=True)
        logp = logits - m - torch.log(torch.sum(torch.exp(logits - m), dim=1, keepdim=True))
        onehot = (yb[:, None] == arange).float()
        loss = -torch.sum(onehot * logp) / batch
        loss.backward()
        opt.step()
        float(loss.detach())
        return time.perf_counter() - start
    return timed


def jax_stepper(x, y, batch):
    import jax
    import jax.numpy as jnp

    def loss_fn(params, xb, yb):
        w1, b1, w2, b2 = params
        h = jnp.maximum(xb @ w1.T + b1, 0)
        logits = h @ w2.T + b2
        m = jnp.max(logits, axis=1, keepdims=True)
        logp = logits - m - jnp.log(jnp.sum(jnp.exp(logits - m), axis=1, keepdims=True))
        onehot = (yb[:, None] == jnp.arange(SIZES[-1])).astype(jnp.float32)
        return -jnp.sum(onehot * logp) / batch

    @jax.jit
    def step(params, moms, xb, yb):
        loss, grads = jax.value_and_grad(loss_fn)(params, xb, yb)
        moms = [MOMENTUM * m + g for m, g in zip(moms, grads)]
        return [p - LR * m for p, m in zip(params, moms)], moms, loss
    state = [[jnp.asarray(p) for p in initial_params()], [jnp.zeros(p.shape) for p in initial_params()]]
    data_ = batches(x, y, batch)

    def timed() -> float:
        xb, yb = next(data_)
        start = time.perf_counter()
        state[0], state[1], loss = step(state[0], state[1], jnp.asarray(xb), jnp.asarray(yb))
        float(loss)
        return time.perf_counter() - start
    return timed


def mlx_stepper(x, y, batch):
    import mlx.core as mx

    def loss_fn(params, xb, yb):
        w1, b1, w2, b2 = params
        h = mx.maximum(xb @ w1.T + b1, 0)
        logits = h @ w2.T + b2
        m = mx.max(logits, axis=1, keepdims=True)
        logp = logits - m - mx.log(mx.sum(mx.exp(logits - m), axis=1, keepdims=True))
        onehot = (yb[:, None] == mx.arange(SIZES[-1])).astype(mx.float32)
        return -mx.sum(onehot * logp) / batch
    grad_fn = mx.value_and_grad(loss_fn)

    @mx.compile
    def step(params, moms, xb, yb):
        loss, grads = grad_fn(params, xb, yb)
        moms = [MOMENTUM * m + g for m, g in zip(moms, grads)]
        return [p - LR * m for p, m in zip(params, moms)], moms, loss
    state = [[mx.array(p) for p in initial_params()], [mx.zeros(p.shape) for p in initial_params()]]
    data_ = batches(x, y, batch)

    def timed() -> float:
        xb, yb = next(data_)
        start = time.perf_counter()
        state[0], state[1], loss = step(state[0], state[1], mx.array(xb), mx.array(yb))
        float(loss.item())
        return time.perf_counter() - start
    return timed


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
    p.add_argument("--memory", type=int, default=0, help="run this many captured steps and print the RSS curve")
    p.add_argument("--gpu", action="store_true", help="lazyarr on OpenCL, PyTorch on CUDA")
    args = p.parse_args()
    ours_device, torch_device = ("opencl", "cuda") if args.gpu else (None, "cpu")
    x, y = data()
    if args.memory:
        import gc
        step, every, samples = lazyarr_stepper(x, y, args.batch, True), max(1, args.memory // 20), []
        for s in range(1, args.memory + 1):
            step()
            if s % every == 0:
                gc.collect()
                samples.append((s, f"{rss_mb():.1f}"))
        print(table(samples, ["captured step", "RSS MiB"]))
        return
    steppers = {"lazyarr, plain loop": lazyarr_stepper(x, y, args.batch, False, ours_device),
                "lazyarr, compile_step": lazyarr_stepper(x, y, args.batch, True, ours_device)}
    torch_name = "PyTorch, CUDA" if args.gpu else "PyTorch (2 threads)"
    for name, make in ((torch_name, lambda *a: torch_stepper(*a, device=torch_device)),
                       ("JAX, jax.jit of the step", jax_stepper), ("MLX, mx.compile of the step", mlx_stepper)):
        try:
            steppers[name] = make(x, y, args.batch)
        except ImportError:
            pass
    times = {name: [] for name in steppers}
    for _ in range(max(1, args.steps // BLOCK)):
        for name, step in steppers.items():
            times[name] += [step() for _ in range(BLOCK)]
    medians = {name: statistics.median(t[len(t) // 5:]) for name, t in times.items()}   # the first fifth warms up
    torch_ms, jax_ms = medians.get(torch_name), medians.get("JAX, jax.jit of the step")
    rows = [[name, f"{ms * 1e3:.3f}", f"{ms / torch_ms:.2f}" if torch_ms else "", f"{ms / jax_ms:.2f}" if jax_ms else ""]
            for name, ms in medians.items()]
    print(table(rows, ["loop", "median step ms", "x PyTorch's", "x JAX jit's"]))


if __name__ == "__main__":
    main()
