"""Linear algebra and FFT benchmark: batched small solves (10k of 8×8), one 1024² solve and SVD,
rfft of 1M points and a 2-D fft of 1024², in lazyarr, NumPy and PyTorch (where installed; on
CUDA when lazyarr runs on OpenCL and PyTorch sees a GPU), in one process, each run on fresh
inputs (lazyarr's realized beforehand, so the time is the operation's); prints the medians and
NumPy's time over lazyarr's (the issue's target for the CPU decompositions: at least 1/1.2).

    python bench/linalg.py [--runs N] [--device cpu|opencl]
"""
import argparse
import os
import sys

import numpy as np

os.environ.setdefault("LAZYARR_ADAPTIVE_THREADS", "0")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lazyarr as xp  # noqa: E402
from bench.common import median_time, table  # noqa: E402


def cases(rng: np.random.Generator, i: int) -> dict:
    """Inputs of every benchmark for run i."""
    small = rng.standard_normal((10_000, 8, 8)) + 8 * np.eye(8)
    big = rng.standard_normal((1024, 1024)) + 32 * np.eye(1024)
    return {"small": (small, rng.standard_normal((10_000, 8, 1))), "big": (big, rng.standard_normal((1024, 1))),
            "svd": rng.standard_normal((1024, 1024)), "rfft": rng.standard_normal(1 << 20),
            "fft2": rng.standard_normal((1024, 1024)) + 1j * rng.standard_normal((1024, 1024))}


BENCHES = [
    # name, input key, lazyarr, NumPy, PyTorch
    ("solve 10k × 8×8", "small", lambda a, b: xp.linalg.solve(a, b), np.linalg.solve, lambda t, a, b: t.linalg.solve(a, b)),
    ("solve 1024²", "big", lambda a, b: xp.linalg.solve(a, b), np.linalg.solve, lambda t, a, b: t.linalg.solve(a, b)),
    ("svd 1024²", "svd", lambda a: xp.linalg.svd(a, full_matrices=False)[1], lambda a: np.linalg.svd(a, full_matrices=False)[1],
     lambda t, a: t.linalg.svd(a, full_matrices=False)[1]),
    ("rfft 1M", "rfft", xp.fft.rfft, np.fft.rfft, lambda t, a: t.fft.rfft(a)),
    ("fft2 1024²", "fft2", xp.fft.fft2, np.fft.fft2, lambda t, a: t.fft.fft2(a)),
]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    device = xp.get_device(args.device)
    try:
        import torch
        torch.set_num_threads(2)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    data = [cases(rng, i) for i in range(args.runs + 2)]
    rows = []
    for name, key, ours_fn, numpy_fn, torch_fn in BENCHES:
        args_np = [d[key] if isinstance(d[key], tuple) else (d[key],) for d in data]
        args_xp = [[xp.asarray(a, device=device) for a in a_np] for a_np in args_np]
        for a in args_xp:
            xp.realize(*a)

        def run_ours(i: int) -> None:
            ours_fn(*args_xp[i]).realize()
            device.synchronize()
        ours = median_time(run_ours, runs=args.runs)
        got, want = np.asarray(ours_fn(*args_xp[0])), numpy_fn(*args_np[0])
        assert np.allclose(got, want, rtol=1e-6, atol=1e-8), f"{name}: wrong answer"
        theirs = median_time(lambda i: numpy_fn(*args_np[i]), runs=args.runs)
        peer = ""
        if torch is not None:
            on_gpu = device.name != "cpu" and torch.cuda.is_available()
            tensors = [[torch.from_numpy(np.ascontiguousarray(a)).to("cuda" if on_gpu else "cpu") for a in a_np]
                       for a_np in args_np]
            sync = torch.cuda.synchronize if on_gpu else (lambda: None)
            peer = f"{median_time(lambda i: (torch_fn(torch, *tensors[i]), sync()), runs=args.runs) * 1e3:.2f} ms"
        rows.append([name, f"{ours * 1e3:.2f} ms", f"{theirs * 1e3:.2f} ms", peer, f"{theirs / ours:.2f}x"])
    print(f"device: {device.name}; runs: {args.runs} (medians, fresh inputs each run)")
    print(table(rows, ["benchmark", "lazyarr", "numpy", "pytorch", "NumPy/lazyarr"]))


if __name__ == "__main__":
    main()
