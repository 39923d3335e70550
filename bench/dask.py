"""dask.array with lazyarr chunks against dask.array with NumPy chunks (issue 33), in one process:

- pipeline: `(exp(x) * 2 + 1).sum(axis=0)` over 16 chunks of 4M float32 (x: 64M elements); with
  lazyarr chunks each chunk's task is one fused kernel, NumPy's makes three temporaries and a sum.
  (x is a vector; a column sum of 2-D chunks is a kernel as fast as NumPy's now: 1024 x 4096
  float32 0.5-0.7 ms, NumPy 0.85, on 2 threads.)
- matmul: `x @ y` of 2048 x 2048 float32 matrices in chunks of 1024 x 1024.

Each on the threaded scheduler (this process's cores) and on a `distributed.LocalCluster` of two
worker processes with one thread each. The chunks are made and persisted first (on the workers, for
the cluster), so that the times are the computations' (the results are small or gathered once).
Prints medians of R runs after a warmup and lazyarr's speed-up (NumPy's time over lazyarr's).

    python bench/dask.py [--runs R] [--only pipeline,matmul] [--schedulers threads,cluster]
"""
import argparse
import os
import statistics
import sys
import time

# (run as a script, this file's folder is first on the path, and its name would shadow dask's)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

from bench.common import table  # noqa: E402

LENGTH, CHUNK = 16 * 4 * 2**20, 4 * 2**20     # 16 chunks of 4M float32
N, MATMUL_CHUNK = 2048, 1024


def pipeline(x):
    return (np.exp(x) * 2 + 1).sum(axis=0)


def matmul(pair):
    x, y = pair
    return x @ y


def inputs(chunks: str, workload: str):
    """The workload's input as dask arrays of NumPy chunks or of lazyarr chunks (`map_blocks(xp.asarray)`
    of the same numbers), not yet persisted."""
    import dask.array as da
    import lazyarr as xp
    rng = da.random.default_rng(0)
    if workload == "pipeline":
        arrays = [rng.random(LENGTH, dtype=np.float32, chunks=CHUNK)]
    else:
        arrays = [rng.random((N, N), dtype=np.float32, chunks=MATMUL_CHUNK) for _ in range(2)]
    if chunks == "lazyarr":
        arrays = [a.map_blocks(xp.asarray) for a in arrays]
    return arrays


def measure(workload: str, scheduler: str, runs: int, client=None) -> dict:
    """Median seconds per kind of chunk for one workload on one scheduler (and the first run)."""
    import dask
    fn = pipeline if workload == "pipeline" else matmul
    out = {}
    answers = {}
    for chunks in ("numpy", "lazyarr"):
        arrays = inputs(chunks, workload)
        if client is not None:
            arrays = client.persist(arrays)
            from distributed import wait
            wait(arrays)
        else:
            arrays = dask.persist(*arrays, scheduler="threads")
        expr = fn(arrays[0] if workload == "pipeline" else arrays)
        times = []
        for i in range(runs + 1):   # (the first: a warmup, kernels from the disk cache or compiled)
            start = time.perf_counter()
            result = client.compute(expr, sync=True) if client is not None else expr.compute(scheduler="threads")
            result = np.asarray(result)   # (a lazyarr result is computed by now: read it)
            times.append(time.perf_counter() - start)
        answers[chunks] = result
        out[chunks] = (statistics.median(times[1:]), times[0])
        del arrays, expr
    np.testing.assert_allclose(answers["lazyarr"], answers["numpy"], rtol=2e-3 if workload == "matmul" else 1e-4)
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--only", default="pipeline,matmul")
    p.add_argument("--schedulers", default="threads,cluster")
    args = p.parse_args()
    workloads = args.only.split(",")
    rows = []
    for scheduler in args.schedulers.split(","):
        client = None
        if scheduler == "cluster":
            from distributed import Client, LocalCluster
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=50)
            client = Client(cluster)
        try:
            for workload in workloads:
                got = measure(workload, scheduler, args.runs, client)
                (nt, _), (lt, lfirst) = got["numpy"], got["lazyarr"]
                rows.append([workload, "LocalCluster 2x1" if client else "threads", f"{nt * 1e3:.0f}",
                             f"{lt * 1e3:.0f}", f"{lfirst * 1e3:.0f}", f"{nt / lt:.2f}x"])
                print(rows[-1], flush=True)
        finally:
            if client is not None:
                client.close()
                cluster.close()
    print(f"\ndask.array, lazyarr chunks against NumPy chunks (medians of {args.runs} runs, ms)")
    print(table(rows, ["workload", "scheduler", "NumPy chunks", "lazyarr chunks", "lazyarr first",
                       "speed-up"]))


if __name__ == "__main__":
    main()
