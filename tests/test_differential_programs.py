"""Random programs on lazyarr against NumPy (differential testing).

Each test runs one program drawn by tests/random_programs/ from its seed: inputs made every way a
user makes them (asarray of NumPy arrays, lists and scalars; ones/zeros/full/arange/linspace/eye;
*_like; lazyarr.random; slices, transposes and broadcasts of other arrays; 0-d; realized or lazy),
element-wise operations with broadcasting and Python scalars, comparisons and where, reductions,
matmul, reshapes, transposes, basic indexing with negative steps, concat/stack, casts, realize() in
the middle, and loops that apply a body up to 50 times without realizing inside. The outputs must
equal NumPy's: values (float64 to ~1e-9, float32 within a few times NumPy's own float32 error),
dtypes and shapes; an error NumPy raises (an integer to a negative power) lazyarr raises too; every
input equals what NumPy makes. Each program then runs again on other data (other array values,
seeds, fill values and constants): the same structure, which the cached schedules and kernels must
tell apart. A failure prints the program as a lazyarr script.

The number of programs scales with LAZYARR_TEST_EXAMPLES (25 by default; the OpenCL pass runs 5);
`python scripts/differential.py --programs N` runs many more.
"""
import os

import numpy as np
import pytest

import lazyarr as xp
from tests import random_programs as rp

SCALE = int(os.environ.get("LAZYARR_TEST_EXAMPLES", "25")) / 25


def seeds(n):
    return [pytest.param(s, id=f"seed{s}") for s in range(max(2, round(n * SCALE)))]


# a correct implementation runs any of these programs in well under a second; a graph that grows
# exponentially with the loop's length (one node reached along many paths) fails instead of hanging
TIMEOUT = 60


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("seed", seeds(60))
def test_float64_programs_match_numpy(seed):
    r = rp.check_forward(seed, "float", "float64")
    assert r.ok, r.report()


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("seed", seeds(40))
def test_float32_programs_match_numpy(seed):
    r = rp.check_forward(seed, "float", "float32")
    assert r.ok, r.report()


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("seed", seeds(48))
def test_integer_programs_wrap_and_divide_like_numpy(seed):
    """Wrapping +, -, *, **, shifts and bitwise operations, floor_divide and remainder with negative
    operands (never by 0 or -1), integer reductions (sum/prod of small ints in int64/uint64), casts
    between integer dtypes; eight dtypes in turn."""
    r = rp.check_forward(seed, "int", rp.INTS[seed % len(rp.INTS)])
    assert r.ok, r.report()


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("seed", seeds(30))
def test_unrealized_loops_match_numpy(seed):
    """A loop body applied k times (k up to 50) to a state, never realized inside: a recurrence
    s = a*s + b*tanh(f(s, params)) or a normalisation, f with matmuls, reductions, rolls by slices
    and concat; float64, float32 and integer programs in turn."""
    kind, dtype = [("float", "float64"), ("float", "float32"), ("int", "int32"), ("int", "uint8")][seed % 4]
    r = rp.check_forward(seed, kind, dtype, loop=True)
    assert r.ok, r.report()


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("seed", seeds(8))
def test_large_programs_match_numpy(seed):
    """Values of over 16384 elements (LAZYARR_GENERIC_SIZES): kernels with their sizes in the code,
    optimised (tiles, vectors, threads), and split reductions; float64 and integer programs."""
    kind, dtype = [("float", "float64"), ("int", "int32"), ("float", "float32"), ("int", "uint8")][seed % 4]
    r = rp.check_forward(seed, kind, dtype, large=True)
    assert r.ok, r.report()


# ---- failure classes the random programs found, as small cases ----

@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_prod_over_a_broadcast_axis_multiplies_every_repeat(dtype):
    a = np.array([3], dtype=dtype)
    x = xp.broadcast_to(xp.asarray(a), (2, 2))
    want = np.broadcast_to(a, (2, 2))
    np.testing.assert_array_equal(np.asarray(xp.prod(x)), np.prod(want))
    np.testing.assert_array_equal(np.asarray(xp.prod(x, axis=0)), np.prod(want, axis=0))
    np.testing.assert_array_equal(np.asarray(xp.prod(xp.full((3,), 2, dtype=getattr(xp, dtype)))), 8)


@pytest.mark.parametrize("fn", ["sum", "mean"])
def test_a_reduction_over_several_axes_counts_a_stretched_axis(fn):
    """(3, 1) broadcast to (3, 3), reduced over both axes: every repeat counts (sum 18, not 6)."""
    a = np.array([[1.0], [2.0], [3.0]])
    for shape, axis in [((3, 3), None), ((3, 3), (0, 1)), ((2, 4, 3), (0, 1))]:
        src = a if len(shape) == 2 else np.arange(1.0, 7.0).reshape(2, 1, 3)
        got = getattr(xp, fn)(xp.broadcast_to(xp.asarray(src), shape), axis=axis)
        np.testing.assert_allclose(np.asarray(got), getattr(np, fn)(np.broadcast_to(src, shape), axis=axis))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_sum_of_a_broadcast_array_broadcast_back_compiles(dtype):
    """s - sum(s, axis=-1, keepdims=True) with s broadcast from (4, 3) to (2, 4, 3): the kernel that
    sums in compensated blocks used loop variables and values out of their scope (CompileError)."""
    a = np.linspace(-2, 2, 12).reshape(4, 3).astype(dtype)
    s = xp.broadcast_to(xp.asarray(a), (2, 4, 3))
    b = np.broadcast_to(a, (2, 4, 3))
    np.testing.assert_allclose(np.asarray(s - xp.sum(s, axis=-1, keepdims=True)),
                               b - np.sum(b, axis=-1, keepdims=True), rtol=1e-6, atol=1e-6)


def test_a_sum_over_a_matmul_broadcast_against_its_input_compiles():
    """sum(a + a @ w), a of shape (2, 1, 3): the sum's compensated blocks used a value out of its
    scope (CompileError: 'alu7' undeclared)."""
    a, w = np.linspace(-1, 1, 6).reshape(2, 1, 3), np.full(3, 0.39)
    np.testing.assert_allclose(float(xp.sum(xp.asarray(a) + xp.asarray(a) @ xp.asarray(w))), np.sum(a + a @ w),
                               rtol=1e-12)


WRAPPING = {
    "(x * x) >> 3": lambda x: (x * x) >> 3, "(x * x) // 8": lambda x: (x * x) // 8,
    "(x + 1) > x": lambda x: (x + 1) > x, "(x - 1) < x": lambda x: (x - 1) < x,
    "(x * 2) // 2": lambda x: (x * 2) // 2, "(x + x) // 2": lambda x: (x + x) // 2,
    "abs(x) >= 0": lambda x: abs(x) >= 0, "-x < 0": lambda x: -x < 0,
}


@pytest.mark.parametrize("expr", sorted(WRAPPING))
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_signed_overflow_wraps_before_it_is_compared_shifted_or_divided(dtype, expr):
    """Signed arithmetic wraps (README), also where a compiler that takes signed overflow for
    impossible (OpenCL C) would simplify: x + 1 > x, (x * 2) // 2, abs(x) >= 0, x * x >= 0."""
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, -105429718, 100000, 65536, -46341, 5, -7], dtype=dtype)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(WRAPPING[expr](xp.asarray(a))), WRAPPING[expr](a))


def test_integer_to_a_negative_power_raises_like_numpy():
    with pytest.raises(ValueError):
        np.arange(1, 3) ** -1
    with pytest.raises(ValueError):
        np.asarray(xp.arange(1, 3) ** -1)


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("step", ["roll", "concat_of_slices", "flip_plus_self", "minus_flip_of_a_product"])
def test_a_loop_reading_its_state_at_several_indexings_stays_linear(step):
    """16 steps of a roll (xp.roll, or concat of two slices), of s[::-1] + s or of s - flip(s * c) / 2:
    each step reads the state at two indexings, which fused into one kernel doubles the index
    expression per step."""
    s, ref = xp.asarray(np.arange(6.0)), np.arange(6.0)
    for _ in range(16):
        if step == "roll":
            s, ref = xp.roll(s, 1) * 0.5, np.roll(ref, 1) * 0.5
        elif step == "concat_of_slices":
            s, ref = xp.tanh(xp.concat([s[-1:], s[:-1]])), np.tanh(np.concatenate([ref[-1:], ref[:-1]]))
        elif step == "flip_plus_self":
            s, ref = xp.tanh(s[::-1] + s), np.tanh(ref[::-1] + ref)
        else:                                    # s - flip(s * c) / 2: 16 steps of RewriteNotConverging
            c = np.array([1.0, 0.5, 1.0, 0.5, 1.0, 0.5])
            s, ref = s - xp.flip(s * xp.asarray(c)) * 0.5, ref - np.flip(ref * c) * 0.5
    np.testing.assert_allclose(np.asarray(s), ref, rtol=1e-12)
