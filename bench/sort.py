"""Sorting benchmark: sort and argsort of 1M and 16M float32 and int32 in lazyarr (its radix sort
on the CPU, its bitonic network on a GPU), NumPy and PyTorch (where installed; on CUDA when lazyarr runs on OpenCL and
PyTorch sees a GPU), in one process, each run on fresh inputs;
prints the medians and NumPy's time over lazyarr's (the issue's target: at least 0.5).

    python bench/sort.py [--runs N] [--sizes 1M,16M] [--device cpu|opencl]
"""
import argparse
import os
import sys

import numpy as np

os.environ.setdefault("LAZYARR_ADAPTIVE_THREADS", "0")
# let one run start the optimised compiles of all of a sort's kernels (a program settles there
# after a few runs too, 20 ms of codegen per run by default); the warm-up waits for them
os.environ.setdefault("LAZYARR_OPTIMISE_BUDGET_MS", "600000")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lazyarr as xp  # noqa: E402
from bench.common import median_time, table  # noqa: E402
from lazyarr.runtime.cpu_compiler import wait_for_optimised  # noqa: E402


def inputs(n: int, dtype: str, i: int) -> np.ndarray:
    rng = np.random.default_rng(i)
    return rng.standard_normal(n).astype(np.float32) if dtype == "float32" else \
        rng.integers(-2 ** 31, 2 ** 31 - 1, n, dtype=np.int32)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--sizes", default="1M,16M")
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    sizes = [int(s[:-1]) * (1 << 20) if s.endswith("M") else int(s) for s in args.sizes.split(",")]
    device = xp.get_device(args.device)
    try:
        import torch
        torch.set_num_threads(2)
    except ImportError:
        torch = None
    rows = []
    for n in sizes:
        for dtype in ("float32", "int32"):
            data = [inputs(n, dtype, i) for i in range(args.runs + 2)]
            for name, la, npf, tf in (("sort", xp.sort, np.sort, lambda t: torch.sort(t).values),
                                      ("argsort", xp.argsort, lambda a: np.argsort(a, kind="stable"),
                                       lambda t: torch.sort(t, stable=True).indices)):
                arrays = [xp.asarray(a, device=device) for a in data]
                for _ in range(3):   # compile, then let every kernel reach its optimised tier
                    la(arrays[-1]).realize()
                    wait_for_optimised()
                ours = median_time(lambda i: (la(arrays[i]).realize(), device.synchronize()), runs=args.runs)
                got = np.asarray(la(arrays[0]))
                assert np.array_equal(got, npf(data[0])), f"{name} {dtype} {n}: wrong answer"
                theirs = median_time(lambda i: npf(data[i]), runs=args.runs)
                peer = ""
                if torch is not None:   # on the GPU where lazyarr runs on one (OpenCL) and PyTorch has CUDA
                    on_gpu = device.name != "cpu" and torch.cuda.is_available()
                    tensors = [torch.from_numpy(a).to("cuda" if on_gpu else "cpu") for a in data]
                    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
                    tf(tensors[-1]), sync()
                    peer = f"{median_time(lambda i: (tf(tensors[i]), sync()), runs=args.runs) * 1e3:.1f} ms"
                rows.append([f"{name} {n >> 20}M {dtype}", f"{ours * 1e3:.1f} ms", f"{theirs * 1e3:.1f} ms", peer,
                             f"{theirs / ours:.2f}x"])
    print(f"device: {device.name}; runs: {args.runs} (medians, fresh inputs each run)")
    print(table(rows, ["benchmark", "lazyarr", "numpy", "pytorch", "NumPy/lazyarr"]))


if __name__ == "__main__":
    main()
