"""GPU benchmark through OpenCL, side by side with PyTorch (CUDA) on the same GPU.

    python bench/gpu.py [--device opencl:N] [--scale S]

Rows: a fused elementwise chain over 256M float32 (with the bandwidth it reaches: 16 bytes an
element), row sums of 16384² float32, softmax over the rows of 16384×4096 float32, and a 4096²
float32 matmul (PyTorch with TF32 off, so both compute in fp32), and the overhead of small cached
graphs (one operation on 16 floats, y*2+1 on 1M, float(sum(y*2)): wall times of both, the queue
drained; issue 30's per-realize target is 30 us). lazyarr's times are wall times of
building and realizing the expression (the queue drained), medians after warm-up, each iteration
on one of two sets of inputs made beforehand; PyTorch's are CUDA-event times. --scale divides the
sizes (for a quick run on a small device).
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


def median_ms(fn, runs=7, warmup=2):
    for i in range(warmup):
        fn(i)
    times = []
    for i in range(runs):
        start = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def wall_ms(fn, runs=300, warmup=30):
    """Median wall milliseconds of fn() (a small graph realized or read back: the overhead)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def torch_ms(fn, runs=7, warmup=2):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def pick_device(name):
    if name:
        return xp.get_device(name)
    from lazyarr.runtime.opencl import opencl_devices
    for i, d in enumerate(opencl_devices()):
        if "NVIDIA" in d.platform.name.upper() or "NVIDIA" in d.name.upper():
            return xp.get_device(f"opencl:{i}")
    return xp.get_device("opencl:0")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default=None)
    p.add_argument("--scale", type=int, default=1)
    args = p.parse_args()
    dev = pick_device(args.device)
    print(f"lazyarr device: {dev!r}")
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        has_torch = torch.cuda.is_available()
    except ImportError:
        has_torch = False
    s = args.scale
    rng = np.random.default_rng(0)
    rows = []

    def dev_sync():
        dev.synchronize()

    # 1. the fused chain
    n = (256 << 20) // s
    host = [rng.standard_normal(n, dtype=np.float32) for _ in range(3)]
    sets = [[xp.asarray(h, device=dev) for h in host], [xp.asarray(h[::-1].copy(), device=dev) for h in host]]

    def chain(i):
        a, b, c = sets[i % 2]
        (xp.exp(a * b + c) * 0.5 - xp.sqrt(xp.abs(a)) + xp.tanh(c)).realize()
        dev_sync()
    ours = median_ms(chain)
    row = ["exp(a*b+c)*0.5-sqrt(|a|)+tanh(c), %dM f32" % (n >> 20), f"{ours:.2f} ({16 * n / ours / 1e9:.2f} TB/s)"]
    if has_torch:
        ta, tb, tc = (torch.from_numpy(h).cuda() for h in host)
        theirs = torch_ms(lambda: torch.exp(ta * tb + tc) * 0.5 - torch.sqrt(torch.abs(ta)) + torch.tanh(tc))
        row += [f"{theirs:.2f} ({16 * n / theirs / 1e9:.2f} TB/s)", f"{theirs / ours:.2f}x"]
        del ta, tb, tc
    rows.append(row)
    del sets

    # 2. row sums
    side = 16384 // s
    m = rng.standard_normal((side, side), dtype=np.float32)
    msets = [xp.asarray(m, device=dev), xp.asarray(m[::-1].copy(), device=dev)]
    ours = median_ms(lambda i: (xp.sum(msets[i % 2], axis=1).realize(), dev_sync()))
    row = [f"row sums {side}x{side} f32", f"{ours:.3f}"]
    if has_torch:
        tm = torch.from_numpy(m).cuda()
        theirs = torch_ms(lambda: tm.sum(dim=1))
        row += [f"{theirs:.3f}", f"{theirs / ours:.2f}x"]
        del tm
    rows.append(row)
    del msets

    # 3. softmax
    r, c = 16384 // s, 4096 // s
    sm = rng.standard_normal((r, c), dtype=np.float32)
    ssets = [xp.asarray(sm, device=dev), xp.asarray(sm[::-1].copy(), device=dev)]

    def softmax(i):
        x = ssets[i % 2]
        e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
        (e / xp.sum(e, axis=1, keepdims=True)).realize()
        dev_sync()
    ours = median_ms(softmax)
    row = [f"softmax {r}x{c} f32", f"{ours:.3f}"]
    if has_torch:
        ts = torch.from_numpy(sm).cuda()
        theirs = torch_ms(lambda: torch.softmax(ts, dim=1))
        row += [f"{theirs:.3f}", f"{theirs / ours:.2f}x"]
        del ts
    rows.append(row)
    del ssets

    # 4. matmul
    k = 4096 // s
    a, b = rng.standard_normal((k, k), dtype=np.float32), rng.standard_normal((k, k), dtype=np.float32)
    asets = [(xp.asarray(a, device=dev), xp.asarray(b, device=dev)), (xp.asarray(b, device=dev), xp.asarray(a, device=dev))]
    ours = median_ms(lambda i: ((asets[i % 2][0] @ asets[i % 2][1]).realize(), dev_sync()), runs=5)
    flops = 2 * k ** 3
    row = [f"matmul {k}^2 f32", f"{ours:.2f} ({flops / ours / 1e9:.1f} TFLOP/s)"]
    if has_torch:
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        theirs = torch_ms(lambda: ta @ tb)
        row += [f"{theirs:.2f} ({flops / theirs / 1e9:.1f} TFLOP/s)", f"{theirs / ours:.3f}x"]
    rows.append(row)

    # 5. per-realize overhead: wall times of small cached graphs, the queue drained (PyTorch: with a sync)
    small, large = rng.standard_normal(16, dtype=np.float32), rng.standard_normal(1 << 20, dtype=np.float32)
    xs, xl = xp.asarray(small, device=dev), xp.asarray(large, device=dev)
    cases = [("one op on 16 f32, realized", lambda: ((xs * 2.0).realize(), dev_sync()), lambda t: t[0] * 2.0),
             ("y*2+1 on 1M f32, realized", lambda: ((xl * 2.0 + 1.0).realize(), dev_sync()), lambda t: t[1] * 2.0 + 1.0),
             ("float(sum(y*2)), 1M f32", lambda: float(xp.sum(xl * 2.0)), lambda t: float((t[1] * 2.0).sum()))]
    tt = (torch.from_numpy(small).cuda(), torch.from_numpy(large).cuda()) if has_torch else None
    for name, ours_fn, theirs_fn in cases:
        ours = wall_ms(ours_fn)
        row = [name, f"{ours * 1e3:.0f} us"]
        if has_torch:
            theirs = wall_ms(lambda: (theirs_fn(tt), torch.cuda.synchronize()))
            row += [f"{theirs * 1e3:.0f} us", f"{theirs / ours:.2f}x"]
        rows.append(row)
    header = ["benchmark", "lazyarr ms", "PyTorch ms", "lazyarr speed vs PyTorch"] if has_torch else \
        ["benchmark", "lazyarr ms"]
    print(table(rows, header))


if __name__ == "__main__":
    main()
