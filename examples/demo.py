"""lazyarr's demo: an expression recorded lazily, the kernels it compiles, and the results
against NumPy."""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import lazyarr as xp


def section(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


def main() -> None:
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((256, 512)).astype(np.float32)
    b_np = rng.standard_normal((256, 512)).astype(np.float32)
    c_np = rng.standard_normal(512).astype(np.float32)

    section("1. recording is lazy")
    a, b, c = xp.asarray(a_np), xp.asarray(b_np), xp.asarray(c_np)
    start = time.perf_counter()
    y = xp.exp(a * b + c) * 0.5 - xp.sqrt(xp.abs(a)) + xp.tanh(c)
    s = xp.sum(xp.exp(a * b + c), axis=1)
    print(f"recorded two expressions in {(time.perf_counter() - start) * 1e6:.0f} us; nothing has run")
    print(f"y: shape {y.shape}, dtype {y.dtype}, device {y.device}, realized: {y.is_realized}")
    print(f"y's graph has {len(y.uop.toposort())} nodes")

    section("2. the kernels they compile to")
    for t, name in ((y, "y"), (s, "s")):
        kernels = t.schedule()
        print(f"{name} = ... needs {len(kernels)} kernel(s):")
        for k in kernels:
            print(f"--- {k.name} on {k.device.name}\n{k.source}")

    section("3. a softmax over rows: reductions fuse with the work around them")
    x = xp.asarray(a_np)
    m = xp.max(x, axis=1, keepdims=True)
    e = xp.exp(x - m)
    softmax = e / xp.sum(e, axis=1, keepdims=True)
    print(f"softmax runs as {len(softmax.schedule())} kernels: {[k.name for k in softmax.schedule()]}")

    section("4. realizing, against NumPy")
    start = time.perf_counter()
    xp.realize(y, s, softmax)
    print(f"first realization (compile + run): {(time.perf_counter() - start) * 1e3:.1f} ms")
    ref_y = np.exp(a_np * b_np + c_np) * 0.5 - np.sqrt(np.abs(a_np)) + np.tanh(c_np)
    ref_s = np.exp(a_np * b_np + c_np).sum(axis=1)
    e_np = np.exp(a_np - a_np.max(axis=1, keepdims=True))
    ref_soft = e_np / e_np.sum(axis=1, keepdims=True)
    for name, got, ref in (("y", y, ref_y), ("s", s, ref_s), ("softmax", softmax, ref_soft)):
        # float32: compared against the largest value (y's terms cancel near its zeros)
        err = np.max(np.abs(np.asarray(got) - ref)) / np.max(np.abs(ref))
        print(f"{name:8s} max error vs NumPy, relative to the largest value: {err:.2e}")
    start = time.perf_counter()
    y2 = xp.exp(xp.asarray(b_np) * xp.asarray(a_np) + c) * 0.5
    y2.realize()
    print(f"a new graph of cached kernels: {(time.perf_counter() - start) * 1e3:.2f} ms")
    print("y[:2, :4] =", y[:2, :4])

    section("5. a small training run: autograd, Adam, the digits data set, plain and under compile_step")
    import train_digits
    for captured in (False, True):
        accuracy, step_times, losses = train_digits.train(epochs=8, quiet=True, captured=captured)
        print(f"{'compile_step' if captured else 'plain loop  '}: loss {losses[0]:.3f} -> "
              f"{np.mean(losses[-20:]):.3f}; test accuracy {accuracy * 100:.1f}%; median step "
              f"{np.median(step_times[10:]) * 1e3:.2f} ms over {len(step_times)} steps")


if __name__ == "__main__":
    main()
