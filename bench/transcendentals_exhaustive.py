"""Every float32 input of stage 18's float32 approximations against the correctly rounded result
(NumPy's float64 function rounded to float32): all 2^32 bit patterns, 2^24 at a time, through one
compiled kernel per function. Prints per function the largest distance in ulps (signs of zeros are
the accuracy test's business: ±0 count as equal here), how many inputs are more than 1 ulp off,
and how many are not correctly rounded. Takes about a minute per function on a quiet core (NumPy's
float64 reference is most of it), several on a busy one.

    python bench/transcendentals_exhaustive.py [exp,exp2,expm1,log,log2,log1p,sin,cos,tan,tanh,sqrt]
"""
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

from lazyarr.compiler.uop import Ops  # noqa: E402
from tests.test_decompositions_accuracy import F32, REFERENCE, NoSqrtC, compile_elementwise  # noqa: E402

STEP = 1 << 24


def ordered(bits: np.ndarray) -> np.ndarray:
    """float32 bit patterns as int64 keys whose differences count the floats between them."""
    b = bits.astype(np.int64)
    return np.where(b < 0, -(b & 0x7FFFFFFF), b)


def check(op: Ops) -> str:
    kernel = compile_elementwise(op, F32, n=STEP, renderer=NoSqrtC() if op is Ops.SQRT else None,
                                 mode="native" if op is Ops.SQRT else "approx")
    fn, start = REFERENCE[op], time.time()
    worst, worst_x, over, inexact = 0, None, 0, 0
    base = np.arange(STEP, dtype=np.uint32)
    for chunk in range(1 << 8):
        x = (base + np.uint32(chunk * STEP)).view(np.float32)
        got = kernel(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = fn(x.astype(np.float64)).astype(np.float32)
        differ = np.nonzero(got.view(np.int32) != want.view(np.int32))[0]
        if differ.size == 0:
            continue
        d = np.abs(ordered(got.view(np.int32)[differ]) - ordered(want.view(np.int32)[differ]))
        gn, wn = np.isnan(got[differ]), np.isnan(want[differ])
        d[gn & wn] = 0
        d[gn != wn] = 1 << 40
        inexact += int((d > 0).sum())
        over += int((d > 1).sum())
        if d.max() > worst:
            worst, worst_x = int(d.max()), x[differ[int(np.argmax(d))]]
    return (f"{op.name.lower()}: max {worst} ulp (at {worst_x!r}), {over} inputs more than 1 ulp off, {inexact} "
            f"of 2^32 not correctly rounded ({time.time() - start:.0f} s)")


if __name__ == "__main__":
    names = sys.argv[1] if len(sys.argv) > 1 else "exp,exp2,expm1,log,log2,log1p,sin,cos,tan,tanh,sqrt"
    for name in names.split(","):
        print(check(getattr(Ops, name.upper())), flush=True)
