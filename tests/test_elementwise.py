"""Element-wise functions against NumPy: every dtype they accept, shapes from 0-d to size-0,
special values (±0, ±inf, nan) for floats, broadcasting, and integer wrap-around."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import lazyarr as xp
from tests import strategies as S
from tests.helpers import assert_close

F32_RTOL, F64_RTOL = 2e-6, 1e-13


def check(got, want, rtol=None):
    want = np.asarray(want)
    if rtol is None:   # float16 (float functions of 8-bit integers, as NumPy's): one ulp
        rtol = 2e-3 if want.dtype == np.float16 else F32_RTOL if want.dtype in (np.float32, np.complex64) else F64_RTOL
    # a subnormal result may be off by a few of its ulps (OpenCL allows its built-ins a few ulp:
    # PoCL's atan2 gave 5.056986e-315 one subnormal ulp away), where no relative tolerance applies
    atol = 4 * np.finfo(want.dtype).smallest_subnormal if want.dtype.kind in "fc" else 0
    assert_close(got, want, rtol=rtol, atol=atol)


def run_np(fn, *args):
    with np.errstate(all="ignore"):
        return fn(*args)


# name: (numpy function, dtypes, element options, tolerance)
FLOAT_UNARY = {
    "sqrt": np.sqrt, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh,
}
REAL_UNARY = {
    "abs": (np.abs, S.REAL), "negative": (np.negative, S.NUMBERS), "positive": (np.positive, S.NUMBERS),
    "square": (np.square, S.REAL), "sign": (np.sign, S.NUMBERS), "floor": (np.floor, S.NUMBERS),
    "ceil": (np.ceil, S.NUMBERS), "trunc": (np.trunc, S.NUMBERS), "round": (np.round, S.NUMBERS),
    "isnan": (np.isnan, S.REAL), "isinf": (np.isinf, S.REAL), "isfinite": (np.isfinite, S.REAL),
    "signbit": (np.signbit, S.NUMBERS), "logical_not": (np.logical_not, S.REAL),
    "bitwise_invert": (np.invert, S.BOOL + S.INTS),
}


@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
@given(data=st.data())
def test_float_unary_matches_numpy(name, data):
    dtype = data.draw(st.sampled_from(S.FLOATS))
    a = data.draw(S.arrays(dtype, lo=-100, hi=100))
    got = getattr(xp, name)(xp.asarray(a))
    # libm and NumPy's vectorised loops differ by an ulp or two on float32
    check(got, run_np(FLOAT_UNARY[name], a), rtol=4e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("name", sorted(REAL_UNARY))
@given(data=st.data())
def test_real_unary_matches_numpy(name, data):
    fn, allowed = REAL_UNARY[name]
    dtype = data.draw(st.sampled_from(allowed))
    a = data.draw(S.arrays(dtype))
    check(getattr(xp, name)(xp.asarray(a)), run_np(fn, a))


def test_float_functions_of_integers_compute_in_float64():
    a = np.array([1, 2, 3], dtype=np.int32)
    check(xp.exp(xp.asarray(a)), np.exp(a))
    assert xp.sqrt(xp.asarray(a.astype(np.int8))).dtype == xp.float16  # NumPy's
    assert xp.sqrt(xp.asarray(a.astype(np.int16))).dtype == xp.float32


ARITH = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "maximum": np.maximum, "minimum": np.minimum,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}
SAME_KIND_PAIRS = [(a, b) for a in S.INTS + S.FLOATS for b in S.INTS + S.FLOATS]


@pytest.mark.parametrize("name", sorted(ARITH))
@given(data=st.data())
def test_binary_matches_numpy_with_broadcasting_and_promotion(name, data):
    a, b = data.draw(S.pairs(SAME_KIND_PAIRS))
    want = run_np(ARITH[name], a, b)
    got = getattr(xp, name)(xp.asarray(a), xp.asarray(b))
    check(got, want)


FLOAT_BINARY = {"atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign, "nextafter": np.nextafter,
                "logaddexp": np.logaddexp, "pow": np.power}


@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
@given(data=st.data())
def test_float_binary_matches_numpy(name, data):
    a, b = data.draw(S.pairs([(f, f) for f in S.FLOATS] + [(np.float32, np.float64)], lo=-50, hi=50))
    want = run_np(FLOAT_BINARY[name], a, b)
    if name == "pow":  # NumPy gives nan for (-inf)**0.5; C99 and the array API say +inf (and +0 for **-0.5)
        a64, b64 = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
        odd = (np.mod(b64, 2) == 1) | (np.mod(b64, 2) == -1)
        fix = np.isneginf(a64) & ~odd & ~np.isnan(b64) & (b64 != 0)
        want = np.where(fix, np.where(b64 > 0, np.inf, 0.0), run_np(np.power, a64, b64)).astype(want.dtype)
    check(getattr(xp, name)(xp.asarray(a), xp.asarray(b)), want,
          rtol=4e-6 if np.result_type(a, b) == np.float32 else 1e-12)


INT_BINARY = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
              "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}


@pytest.mark.parametrize("name", sorted(INT_BINARY))
@given(data=st.data())
def test_bitwise_and_logical_match_numpy(name, data):
    pairs = [(t, t) for t in S.BOOL + S.INTS] + [(np.int8, np.int32), (np.uint8, np.int16)]
    a, b = data.draw(S.pairs(pairs))
    check(getattr(xp, name)(xp.asarray(a), xp.asarray(b)), run_np(INT_BINARY[name], a, b))


@pytest.mark.parametrize("name,fn", [("bitwise_left_shift", np.left_shift), ("bitwise_right_shift", np.right_shift)])
@given(data=st.data())
def test_shifts_match_numpy_including_large_counts(name, fn, data):
    dtype = data.draw(st.sampled_from(S.INTS))
    a = data.draw(S.arrays(dtype))
    bits = np.dtype(dtype).itemsize * 8
    b = data.draw(S.arrays(dtype, shape=st.just(a.shape), lo=0, hi=bits + 3))
    check(getattr(xp, name)(xp.asarray(a), xp.asarray(b)), run_np(fn, a, b))


@given(data=st.data())
def test_integer_pow_matches_numpy(data):
    dtype = data.draw(st.sampled_from(S.INTS))
    a = data.draw(S.arrays(dtype, lo=-5, hi=5))
    b = data.draw(S.arrays(dtype, shape=st.just(a.shape), lo=0, hi=9))
    check(xp.pow(xp.asarray(a), xp.asarray(b)), run_np(np.power, a, b))


@pytest.mark.parametrize("dtype", S.SIGNED)
def test_integer_division_semantics_match_numpy(dtype):
    info = np.iinfo(dtype)
    a = np.array([7, -7, 7, -7, 0, 5, info.min, info.min, info.max], dtype=dtype)
    b = np.array([2, 2, -2, -2, 3, 0, -1, 1, -1], dtype=dtype)
    check(xp.asarray(a) // xp.asarray(b), run_np(np.floor_divide, a, b))
    check(xp.asarray(a) % xp.asarray(b), run_np(np.remainder, a, b))


def test_float_floor_divide_and_remainder_special_values():
    a = np.array([5.5, -5.5, 5.5, -5.5, 0.0, -0.0, 1.0, np.inf, np.nan, 3.0], dtype=np.float64)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 2.0, 1.0, np.inf], dtype=np.float64)
    check(xp.asarray(a) // xp.asarray(b), run_np(np.floor_divide, a, b))
    check(xp.asarray(a) % xp.asarray(b), run_np(np.remainder, a, b))


@pytest.mark.parametrize("dtype", S.INTS)
def test_integer_overflow_wraps_like_numpy(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.max // 2 + 1], dtype=dtype)
    for fn in (np.add, np.subtract, np.multiply):
        check(getattr(xp, fn.__name__)(xp.asarray(a), xp.asarray(a)), run_np(fn, a, a))
    if info.min < 0:
        check(-xp.asarray(a), run_np(np.negative, a))
        check(xp.abs(xp.asarray(a)), run_np(np.abs, a))


@given(data=st.data())
def test_python_scalars_are_weak(data):
    dtype = data.draw(st.sampled_from(S.NUMBERS))
    a = data.draw(S.arrays(dtype, lo=-100, hi=100))
    t = xp.asarray(a)
    scalar = data.draw(st.sampled_from([2, 3]))
    check(t * scalar, run_np(np.multiply, a, scalar))
    check(scalar - t if np.dtype(dtype).kind != "u" else t + scalar,
          run_np(np.subtract, scalar, a) if np.dtype(dtype).kind != "u" else run_np(np.add, a, scalar))
    check(t + 1.5, run_np(np.add, a, 1.5))
    check(t < 2, a < 2)


def test_scalar_out_of_range_for_the_dtype_raises_overflow_error():
    with pytest.raises(OverflowError):
        xp.asarray([1, 2], dtype=xp.int8) + 1000


def test_where_broadcasts_and_promotes():
    c = np.array([True, False, True])
    a = np.arange(3, dtype=np.int32)
    b = np.float32(2.5)
    check(xp.where(xp.asarray(c), xp.asarray(a), xp.asarray(np.array(b))), np.where(c, a, np.array(b)))
    check(xp.where(xp.asarray(c), xp.asarray(a), 7), np.where(c, a, np.int32(7)))
    check(xp.where(xp.asarray(c[:, None]), 1.0, 0.0), np.where(c[:, None], 1.0, 0.0))


@given(data=st.data())
def test_clip_matches_numpy(data):
    dtype = data.draw(st.sampled_from(S.NUMBERS))
    a = data.draw(S.arrays(dtype, lo=-100, hi=100))
    lo, hi = data.draw(st.integers(-50, 0)), data.draw(st.integers(0, 50))
    if np.dtype(dtype).kind == "u":
        lo = 0
    check(xp.clip(xp.asarray(a), lo, hi), np.clip(a, dtype(lo), dtype(hi)))
    check(xp.clip(xp.asarray(a), max=hi), np.clip(a, None, dtype(hi)))


@pytest.mark.parametrize("op", ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
                                "__pow__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"])
def test_operators_and_reflected_operators(op):
    a = np.array([[1.5, -2.0, 3.0]], dtype=np.float32)
    b = np.array([[2.0], [0.5]], dtype=np.float32)
    check(getattr(xp.asarray(a), op)(xp.asarray(b)), run_np(lambda x, y: getattr(x, op)(y), a, b))
    rop = op.replace("__", "__r", 1) if op not in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__") else None
    if rop:
        check(getattr(xp.asarray(a), rop)(2.0), run_np(lambda x: getattr(x, rop)(2.0), a))
    check(run_np(lambda x, y: getattr(x, op)(y), a, xp.asarray(b)), run_np(lambda x, y: getattr(x, op)(y), a, b))


OPERATOR_FUNCTIONS = {"__add__": xp.add, "__sub__": xp.subtract, "__mul__": xp.multiply, "__truediv__": xp.divide}
OPERAND_DTYPES = ["float32", "float64", "float16", "int8", "int32", "uint8", "int64", "bool", "complex64"]


@pytest.mark.parametrize("op", OPERATOR_FUNCTIONS)
@pytest.mark.parametrize("dtype", OPERAND_DTYPES)
def test_operators_build_the_graph_of_their_function(op, dtype):
    # the arithmetic operators record their commonest operands directly (ew.fast_operator): the same
    # nodes as the namespace function (nodes are interned), the same errors, for every operand kind
    fn = OPERATOR_FUNCTIONS[op]
    x = xp.asarray(np.array([[1, 2, 3], [4, 5, 6]]).astype(dtype))
    others = [2, -1, 0, 300, 2 ** 70, 0.5, -0.0, float("nan"), True, 1j, np.float32(2.0), xp.ones_like(x),
              xp.ones((3,), dtype=x.dtype), xp.ones((2, 3), dtype=xp.float64), xp.asarray(7, dtype=x.dtype),
              [1, 2, 3]]
    for other in others:
        for got, want in ((lambda: getattr(x, op)(other), lambda: fn(x, other)),
                          (lambda: getattr(x, op.replace("__", "__r", 1))(other), lambda: fn(other, x))):
            try:
                expected = want()
            except Exception as e:
                with pytest.raises(type(e)):
                    r = got()
                    if r is NotImplemented:
                        raise TypeError
                continue
            result = got()
            if isinstance(other, (np.generic, list)):   # (a new buffer each time: equal values)
                assert result.dtype == expected.dtype
                np.testing.assert_array_equal(np.asarray(result), np.asarray(expected))
            else:
                assert result.uop is expected.uop and result.device is expected.device, (op, dtype, other)
    with xp.no_grad():
        assert getattr(x, op)(2).uop is fn(x, 2).uop


def test_bitwise_operators_and_inplace_forms():
    a = np.array([1, 6, -3], dtype=np.int16)
    t = xp.asarray(a)
    check(t & 3, a & 3)
    check(t | 8, a | 8)
    check(t ^ 5, a ^ 5)
    check(t << 2, a << 2)
    check(t >> 1, a >> 1)
    check(~t, ~a)
    t += 5
    check(t, a + 5)
    t *= 2
    check(t, (a + 5) * 2)


def test_inplace_operator_keeps_dtype_and_refuses_unsafe_casts():
    t = xp.asarray([1, 2, 3], dtype=xp.int32)
    with pytest.raises(TypeError):
        t += 1.5
    f = xp.asarray([1.0, 2.0], dtype=xp.float32)
    f += xp.asarray([1.0, 1.0], dtype=xp.float64)
    assert f.dtype == xp.float32
    with pytest.raises(ValueError):
        f += xp.ones((3, 2))


def test_unsupported_dtype_combinations_raise_type_error():
    with pytest.raises(TypeError):
        xp.bitwise_and(xp.asarray([1.0]), xp.asarray([2.0]))
    with pytest.raises(TypeError):
        xp.asarray([True]) - xp.asarray([False])
    with pytest.raises(TypeError):
        xp.bitwise_left_shift(xp.asarray([True]), xp.asarray([True]))


def test_mismatched_shapes_raise_value_error_naming_both():
    with pytest.raises(ValueError, match=r"\(2,3\).*\(4,\)|\(2,3\) \(4,\)"):
        xp.ones((2, 3)) + xp.ones(4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log1p_of_values_below_half_an_ulp_of_one_is_the_value(dtype):
    # log1p(x) rounds to x there, down to the smallest subnormal (PoCL's OpenCL log1p gave 0)
    info = np.finfo(dtype)
    x = np.array([info.smallest_subnormal, -info.smallest_subnormal, info.tiny, info.eps / 4, -0.0], dtype=dtype)
    got = np.asarray(xp.log1p(xp.asarray(x)))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, x)
    assert np.signbit(got[-1])
