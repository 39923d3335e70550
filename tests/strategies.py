"""Hypothesis strategies: shapes (0-d and size-0 included), dtypes, arrays with special values."""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

BOOL = [np.bool_]
SIGNED = [np.int8, np.int16, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
INTS = SIGNED + UNSIGNED
FLOATS = [np.float32, np.float64]
REAL = BOOL + INTS + FLOATS
NUMBERS = INTS + FLOATS

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)


def elements(dtype, special=True, lo=None, hi=None):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        width = dtype.itemsize * 8
        lo = -1e6 if lo is None else lo
        hi = 1e6 if hi is None else hi
        return st.floats(lo, hi, width=width, allow_nan=False, allow_infinity=False) | (
            st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5]) if special else st.nothing())
    if dtype.kind == "b":
        return st.booleans()
    info = np.iinfo(dtype)
    return st.integers(max(info.min, lo) if lo is not None else info.min,
                       min(info.max, hi) if hi is not None else info.max)


def arrays(dtype, shape=shapes, **kw):
    return hnp.arrays(dtype, shape, elements=elements(dtype, **kw))


def pairs(dtype_pairs, **kw):
    """Two arrays of broadcastable shapes."""
    @st.composite
    def draw(d):
        da, db = d(st.sampled_from(dtype_pairs))
        sa, sb = d(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)).input_shapes
        return d(arrays(da, st.just(sa), **kw)), d(arrays(db, st.just(sb), **kw))
    return draw()
