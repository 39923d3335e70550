"""The accuracy table of stage 18's approximations: worst ulp distance to NumPy per function and
dtype, over the points tests/test_decompositions_accuracy.py uses (every binade, the fast-changing
ranges, special values; for float32 also each path's hard cases). float32 is compared with NumPy's
float32 function and with NumPy's float64 function rounded to float32 (the correctly rounded
result), next to the distance between those two (NumPy's own float32 error).

    python bench/transcendentals_accuracy.py [points per function, default 600000]
"""
import sys
import warnings

import numpy as np

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

from bench.common import table  # noqa: E402
from lazyarr.compiler.uop import Ops  # noqa: E402
from tests.test_decompositions_accuracy import (F32, F64, REFERENCE, NoSqrtC, compile_elementwise,  # noqa: E402
                                                hard_points32, points, pow_points, ulp_distance)


def main(n: int) -> None:
    rows = []
    for op, fn in REFERENCE.items():
        row = [op.name.lower()]
        for dt in (F32, F64):
            if op is Ops.POW:
                args = pow_points(dt, n // 2)
            elif dt is F32:
                args = (np.concatenate([points(dt, n // 2), hard_points32(op, n // 2)]),)
            else:
                args = (points(dt, n),)
            kernel = compile_elementwise(op, dt, nargs=len(args), renderer=NoSqrtC() if op is Ops.SQRT else None,
                                         mode="native" if op is Ops.SQRT else "approx")
            got = kernel(*args)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                direct = fn(*args)
                rounded = fn(*(a.astype(np.float64) for a in args)).astype(dt.np)
            row += [f"{ulp_distance(got, direct).max():.0f}"]
            if dt is F32:
                row += [f"{ulp_distance(got, rounded).max():.0f}", f"{ulp_distance(direct, rounded).max():.0f}"]
            row.append(f"{args[0].size:,}")
        rows.append(row)
    print(table(rows, ["function", "f32 vs numpy", "f32 vs numpy f64→f32", "numpy f32's own", "f32 points",
                       "f64 vs numpy", "f64 points"]))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 600_000)
