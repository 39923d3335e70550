"""GPU kernel-only times (issue 6): each kernel of an expression launched 20 times on scratch
buffers of its size, so the times leave out Python, allocation and copies; bench/gpu.py times the
same work wall-clock against PyTorch. TB/s counts the bytes each kernel must read and write.

    python bench/gpu_kernels.py      (on the GPU machine, with its OpenCL ICD registered)
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lazyarr as xp  # noqa: E402
from bench.gpu import pick_device  # noqa: E402

dev = pick_device(None)
cl = dev.cl
N = int(os.environ.get("GPU_KERNELS_N", 256 << 20))   # elements of the elementwise cases


def ktime(name, y, nbytes, moved):
    """Launch each kernel of y on scratch buffers of nbytes; `moved`: the bytes it reads and writes."""
    for k in y.schedule():
        prog = dev.compile(k.name, k.source)
        n = len(prog.args) if prog.args else 2
        bufs = [cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, nbytes) for _ in range(n)]
        for b in bufs:
            cl.enqueue_fill_buffer(dev.queue, b, np.float32(0.5), 0, nbytes)
        for _ in range(3):
            prog.kernel(dev.queue, prog.global_size, prog.local_size, *bufs)
        dev.queue.finish()
        t = time.perf_counter()
        for _ in range(20):
            prog.kernel(dev.queue, prog.global_size, prog.local_size, *bufs)
        dev.queue.finish()
        ms = (time.perf_counter() - t) / 20 * 1e3
        print(f"{name:34s} {k.name:20s} global {prog.global_size} local {prog.local_size} {ms:8.3f} ms  {moved / ms / 1e9:6.2f} TB/s", flush=True)
        del bufs


a, b, c = ((xp.zeros(N, dtype=xp.float32, device=dev) + i).realize() for i in range(3))
ktime("copy-like a*2 (1 in, 1 out)", a * 2, N * 4, 2 * N * 4)
ktime("a*b+c (3 in, 1 out)", a * b + c, N * 4, 4 * N * 4)
ktime("chain exp/sqrt/tanh (3 in, 1 out)", xp.exp(a * b + c) * 0.5 - xp.sqrt(xp.abs(a)) + xp.tanh(c), N * 4, 4 * N * 4)
src, dst = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, N * 4), cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, N * 4)
cl.enqueue_copy(dev.queue, dst, src); dev.queue.finish()
t = time.perf_counter()
for _ in range(20):
    cl.enqueue_copy(dev.queue, dst, src)
dev.queue.finish()
ms = (time.perf_counter() - t) / 20 * 1e3
print(f"{f'clEnqueueCopyBuffer {N * 4 >> 20} MiB':34s} {'':20s} {ms:8.3f} ms  {2 * N * 4 / ms / 1e9:6.2f} TB/s")
R = 16384 if N == 256 << 20 else 1024   # the rows of bench/gpu.py's reductions
x = xp.asarray(np.zeros((R, R), np.float32), device=dev)
ktime(f"row sums {R}x{R}", x.sum(axis=1), R * R * 4, R * R * 4 + R * 4)
s = xp.asarray(np.zeros((R, R // 4), np.float32), device=dev)
softmax = (lambda e: e / e.sum(axis=1, keepdims=True))(xp.exp(s - xp.max(s, axis=1, keepdims=True)))
ktime(f"softmax {R}x{R // 4}", softmax, R * R, 2 * R * R)
