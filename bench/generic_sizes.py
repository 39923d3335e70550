"""Shape-generic kernels (issue 5): a session that evaluates the same few expressions on many small
shapes, as a hypothesis test or an interactive session does, in a fresh process with an empty disk
cache, with shape-generic kernels (the default) and without (LAZYARR_GENERIC_SIZES=0). Prints the
wall time, the compiles each needed, and NumPy's time for the same work. Medians over runs; each
run is a new process with a new cache directory.

    python bench/generic_sizes.py [--shapes N] [--runs R]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import table  # noqa: E402

SESSION = r"""
import sys, time, numpy as np
np_mode, shapes = sys.argv[1] == "numpy", int(sys.argv[2])
if not np_mode:
    import lazyarr as xp
    from lazyarr.runtime import cpu
    compiles = [0]
    build = cpu.CPUDevice.compile
    def counted(self, *a, **k):
        compiles[0] += 1
        return build(self, *a, **k)
    cpu.CPUDevice.compile = counted
rng = np.random.default_rng(0)
cases = [(int(rng.integers(1, 9)), int(rng.integers(1, 65))) for _ in range(shapes)]
start = time.perf_counter()
for rows, cols in cases:
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    b = rng.standard_normal(cols).astype(np.float32)
    m = np if np_mode else xp
    x, y = (a, b) if np_mode else (xp.asarray(a), xp.asarray(b))
    outs = [m.exp(x) * 0.5 + y, m.sum(x * y, axis=1), m.max(x[:, ::-1], axis=0), (x - m.mean(x, axis=1, keepdims=True)) / 2]
    for o in outs:
        np.asarray(o)
print(time.perf_counter() - start, 0 if np_mode else compiles[0])
"""


def session(mode: str, shapes: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as d:
        env = {**os.environ, "LAZYARR_CACHE_DIR": d}
        if mode == "fixed":
            env["LAZYARR_GENERIC_SIZES"] = "0"
        out = subprocess.run([sys.executable, "-c", SESSION, "numpy" if mode == "numpy" else "lazyarr", str(shapes)],
                             env=env, capture_output=True, text=True, check=True)
    seconds, compiles = out.stdout.split()
    return float(seconds), int(compiles)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", type=int, default=100)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    results = {mode: [session(mode, args.shapes) for _ in range(args.runs)] for mode in ("generic", "fixed", "numpy")}
    med = {mode: (statistics.median(t for t, _ in r), statistics.median(c for _, c in r)) for mode, r in results.items()}
    rows = [("lazyarr, shape-generic kernels (default)", f"{med['generic'][0]:.2f} s", med["generic"][1],
             f"{med['fixed'][0] / med['generic'][0]:.2f}x faster"),
            ("lazyarr, sizes in the code (LAZYARR_GENERIC_SIZES=0)", f"{med['fixed'][0]:.2f} s", med["fixed"][1], ""),
            ("NumPy", f"{med['numpy'][0]:.3f} s", "", "")]
    print(f"4 expressions on {args.shapes} random small shapes (rows 1-8, columns 1-64), a fresh process and "
          f"disk cache each, medians of {args.runs}")
    print(table(rows, ("session", "wall time", "compiles (first tier and optimised)", "vs sizes in the code")))


if __name__ == "__main__":
    main()
