"""Small cases where lazyarr gives NumPy's answer, each checked against NumPy itself: integer
powers with negative exponents, comparisons with None, storing into broadcast arrays, and a few
argument rules found by tests/test_user_errors.py (round's decimals, tile's repetitions, shapes
beyond NumPy's limits, complex views, tensordot over empty axes)."""
import math

import numpy as np
import pytest

import lazyarr as xp
from tests.helpers import assert_close


def numpy_raises(fn):
    """The exception NumPy raises for fn (asserting that it raises)."""
    try:
        fn()
    except Exception as e:   # noqa: BLE001
        return e
    raise AssertionError("NumPy did not raise")


# ---- integers to negative integer powers -------------------------------------------------------

NEGATIVE_POWERS = [
    ("int ** -1", lambda m: m.arange(1, 3) ** -1),
    ("int ** numpy scalar", lambda m: m.arange(1, 3) ** np.int64(-1)),
    ("pow(int, -2)", lambda m: m.pow(m.arange(1, 3), -2) if m is xp else np.pow(np.arange(1, 3), -2)),
    ("int ** [1, -1]", lambda m: m.arange(1, 3) ** m.asarray([1, -1])),
    ("int ** int8 array", lambda m: m.arange(1, 3) ** m.asarray([1, -1], dtype=m.int8)),
    ("int ** 0-d array", lambda m: m.arange(1, 3) ** m.asarray(-1)),
    ("int ** full(-1)", lambda m: m.arange(1, 3) ** m.full((2,), -1)),
    ("int ** transposed array", lambda m: m.arange(1, 3) ** m.asarray([[1, -1]]).T),
    ("int ** list", lambda m: m.power(m.arange(1, 3), [1, -1])),
    ("2 ** array", lambda m: 2 ** m.asarray([1, -1])),
    ("bool ** -1", lambda m: m.asarray([True]) ** -1),
    ("uint32 ** int64 array", lambda m: m.arange(1, 3, dtype=m.uint32) ** m.asarray([1, -1])),
    ("0-d int ** -1", lambda m: m.asarray(2) ** -1),
]


@pytest.mark.parametrize("case", NEGATIVE_POWERS, ids=[c[0] for c in NEGATIVE_POWERS])
def test_integers_to_negative_integer_powers_raise_as_in_numpy(case):
    _, fn = case
    want = numpy_raises(lambda: fn(np))
    assert type(want) is ValueError and "negative integer powers" in str(want)
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        fn(xp)


def test_in_place_integer_power_with_a_negative_exponent_raises():
    t = xp.arange(1, 3)
    with pytest.raises(ValueError, match="negative integer powers"):
        t **= -1
    assert_close(t, np.arange(1, 3))


@pytest.mark.parametrize("fn", [lambda m: m.arange(1, 3) ** -1.0, lambda m: m.arange(1., 3.) ** -1,
                                lambda m: m.arange(1, 3) ** 2, lambda m: m.arange(1, 3) ** m.asarray([0, 3]),
                                lambda m: m.arange(3, dtype=m.uint8) ** m.asarray([2, 1, 0], dtype=m.uint8)])
def test_powers_numpy_allows_match_numpy(fn):
    assert_close(fn(xp), fn(np))


def test_unsigned_base_with_a_negative_python_int_is_numpys_overflow_error():
    assert type(numpy_raises(lambda: np.arange(3, dtype=np.uint8) ** -1)) is OverflowError
    with pytest.raises(OverflowError):
        xp.arange(3, dtype=xp.uint8) ** -1


def test_a_computed_negative_exponent_is_not_checked_and_gives_the_integer_reciprocal_power():
    """The documented rule: a lazy exponent is not computed to check it (that would realize it);
    its negative elements give 1 // base**|e| as C computes it (1, ±1 for a base of ±1, else 0)."""
    base = xp.asarray([1, -1, -1, 2, 0])
    exponent = xp.asarray([1, 1, 1, 1, 1]) - xp.asarray([2, 2, 3, 2, 2])   # -1, -1, -2, -1, -1 (lazy)
    assert not exponent.is_realized
    assert (base ** exponent).tolist() == [1, -1, 1, 0, 0]
    exponent.realize()   # now its values are known: NumPy's error
    with pytest.raises(ValueError, match="negative integer powers"):
        base ** exponent


# ---- comparisons with None ---------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0,)])
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex64"])
def test_comparing_with_none_is_elementwise_as_in_numpy(shape, dtype):
    a = np.zeros(shape, dtype=dtype)
    t = xp.asarray(a)
    for got, want in ((t == None, a == None), (t != None, a != None),     # noqa: E711
                      (None == t, None == a), (None != t, None != a)):    # noqa: E711
        assert isinstance(got, xp.Tensor)
        assert_close(got, want)


def test_comparing_with_a_string_is_elementwise_false_as_in_numpy():
    a = np.array([1.0, 2.0])
    assert_close(xp.asarray(a) == "abc", a == "abc")
    assert_close(xp.asarray(a) != "abc", a != "abc")


# ---- storing into a broadcast ------------------------------------------------------------------

def _numpy_and_lazyarr_broadcasts():
    a = np.array([1.0, 2.0, 3.0])
    return np.broadcast_to(a, (4, 3)), xp.broadcast_to(xp.asarray(a), (4, 3))


STORES = [
    ("b[0, 0] = 5", lambda b, m: b.__setitem__((0, 0), 5)),
    ("b[0] = 5", lambda b, m: b.__setitem__(0, 5)),
    ("b[...] = b", lambda b, m: b.__setitem__(Ellipsis, b)),
    ("b[1:, ::2] = 0", lambda b, m: b.__setitem__((slice(1, None), slice(None, None, 2)), 0)),
    ("b[mask] = 5", lambda b, m: b.__setitem__(m.asarray([True, False, True, True]), 5)),
    ("b[[0, 1]] = 5", lambda b, m: b.__setitem__([0, 1], 5)),
    ("b[int array] = 5", lambda b, m: b.__setitem__(m.asarray([0, 2]), 5)),
    ("b[100, 0] = 5", lambda b, m: b.__setitem__((100, 0), 5)),
]


@pytest.mark.parametrize("case", STORES, ids=[c[0] for c in STORES])
def test_storing_into_a_broadcast_raises_valueerror_as_in_numpy(case):
    _, store = case
    nb, b = _numpy_and_lazyarr_broadcasts()
    want = numpy_raises(lambda: store(nb, np))
    assert type(want) is ValueError and "read-only" in str(want)
    with pytest.raises(ValueError, match="read-only.*broadcast"):
        store(b, xp)
    assert_close(b, nb)   # nothing changed


@pytest.mark.parametrize("op", ["__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__", "__ifloordiv__"])
def test_in_place_operators_on_a_broadcast_raise_valueerror_as_in_numpy(op):
    nb, b = _numpy_and_lazyarr_broadcasts()
    want = numpy_raises(lambda: getattr(nb, op)(2.0))
    assert type(want) is ValueError and "read-only" in str(want)
    with pytest.raises(ValueError, match="output array is read-only.*broadcast"):
        getattr(b, op)(2.0)
    assert_close(b, nb)


def test_a_broadcast_stays_read_only_after_it_is_realized():
    _, b = _numpy_and_lazyarr_broadcasts()
    str(b)   # printing realizes it
    with pytest.raises(ValueError, match="read-only"):
        b[0, 0] = 5.0


def test_broadcast_arrays_stretched_outputs_are_read_only_and_copies_are_writable():
    b, c = xp.broadcast_arrays(xp.asarray([1.0, 2.0, 3.0]), xp.ones((2, 3)))
    c[0, 0] = 5.0    # c was not stretched: an ordinary array
    assert_close(c, np.array([[5.0, 1.0, 1.0], [1.0, 1.0, 1.0]]))
    with pytest.raises(ValueError, match="read-only"):
        b[0, 0] = 5.0
    copy = xp.asarray(b, copy=True)   # as np.array(b): a copy one can store into
    copy[0, 0] = 5.0
    copy += 1.0
    assert_close(copy, np.array([[6.0, 3.0, 4.0], [2.0, 3.0, 4.0]]))
    assert_close(b, np.broadcast_to(np.array([1.0, 2.0, 3.0]), (2, 3)))


def test_arrays_made_by_filling_tiling_and_repeating_are_writable_as_in_numpy():
    for m in (np, xp):
        pieces = [m.zeros((2, 3)), m.ones((2, 3)), m.full((2, 3), 7.0), m.tile(m.asarray([1.0, 2.0, 3.0]), (2, 1)),
                  m.repeat(m.asarray([[1.0, 2.0, 3.0]]), 2, axis=0), m.meshgrid(m.asarray([1.0, 2.0, 3.0]),
                                                                                m.asarray([1.0, 2.0]))[0]]
        for p in pieces:
            p[0, 0] = -1.0
            p += 1.0
        if m is np:
            want = pieces
        else:
            for got, w in zip(pieces, want):
                assert_close(got, w)


# ---- argument rules found by the user-error fuzz test --------------------------------------------

@pytest.mark.parametrize("decimals", [1, -1, 0, 400, -400, -30, 2])
@pytest.mark.parametrize("values", [[1.25, 2.35, -0.5], [15, 25, 150], [150, 250]])
def test_round_matches_numpy_for_large_and_negative_decimals(decimals, values):
    for dtype in ("float64", "float32", "int64", "int8", "uint8"):
        if dtype[0] in "iu" and decimals < -19:
            continue   # NumPy's answer is an overflow there (lazyarr's is 0: the next test)
        a = np.array(values).astype(dtype)
        with np.errstate(all="ignore"):
            want = np.round(a, decimals)
        assert_close(xp.round(xp.asarray(a), decimals), want)


def test_round_of_integers_to_more_digits_than_their_dtype_has_is_zero():
    for dtype in (xp.int8, xp.uint16, xp.int64, xp.uint64):
        assert xp.round(xp.asarray([1, 100, 127], dtype=dtype), -30).tolist() == [0, 0, 0]


@pytest.mark.parametrize("decimals", [1.5, "a", None])
def test_round_needs_integer_decimals_as_numpy(decimals):
    assert isinstance(numpy_raises(lambda: np.round(np.ones(2), decimals)), TypeError)
    with pytest.raises(TypeError, match="decimals"):
        xp.round(xp.ones(2), decimals)


def test_round_of_booleans_to_nonzero_decimals_is_a_typeerror_as_in_numpy():
    assert isinstance(numpy_raises(lambda: np.round(np.array([True]), 1)), TypeError)
    with pytest.raises(TypeError):
        xp.round(xp.asarray([True]), 1)


def test_round_with_decimals_beyond_a_c_long_is_an_overflowerror_as_in_numpy():
    assert type(numpy_raises(lambda: np.round(np.ones(2), 10 ** 30))) is OverflowError
    for d in (10 ** 30, -10 ** 30):
        with pytest.raises(OverflowError):
            xp.round(xp.ones(2), d)
        with pytest.raises(OverflowError):
            xp.round(xp.asarray([1, 2]), d)


def test_tile_takes_an_int_as_numpy():
    assert_close(xp.tile(xp.asarray([1, 2]), 3), np.tile(np.array([1, 2]), 3))


SIZE_LIMITS = [
    ("zeros((10**19, 0))", lambda m: m.zeros((10 ** 19, 0))),
    ("full((2**63,), 1)", lambda m: m.full((2 ** 63,), 1)),
    ("eye(10**20)", lambda m: m.eye(10 ** 20)),
    ("reshape to 10**30", lambda m: m.reshape(m.ones(0), (10 ** 30, 0))),
    ("broadcast_to 10**20", lambda m: m.broadcast_to(m.ones(3), (10 ** 20, 3))),
    ("broadcast_shapes 10**20", lambda m: m.broadcast_shapes((10 ** 20,), (1,))),
    ("arange 10**19 uint64", lambda m: m.arange(0, 10 ** 19, dtype=m.uint64)),
    ("linspace 10**30", lambda m: m.linspace(0, 1, 10 ** 30)),
    ("tile 2**62", lambda m: m.tile(m.ones(2), (2 ** 62,))),
    ("zeros((2**62, 2**62, 0))", lambda m: m.zeros((2 ** 62, 2 ** 62, 0))),
]


@pytest.mark.parametrize("case", SIZE_LIMITS, ids=[c[0] for c in SIZE_LIMITS])
def test_shapes_beyond_numpys_limits_raise_valueerror(case):
    """NumPy refuses an axis longer than its index type counts, or more elements than that; so
    does lazyarr (its kernels would compute overflowing indices, or not compile)."""
    _, fn = case
    assert type(numpy_raises(lambda: fn(np))) is ValueError
    with pytest.raises(ValueError, match="Maximum allowed|too big"):
        fn(xp)


def test_repeat_beyond_the_size_limit_raises_valueerror():
    with pytest.raises(ValueError, match="Maximum allowed"):
        xp.repeat(xp.ones(2), 10 ** 30)


@pytest.mark.parametrize("src, dst", [("complex128", "complex64"), ("complex64", "complex128")])
def test_viewing_complex_bytes_as_another_complex_dtype_matches_numpy(src, dst):
    a = np.array([1 + 2j, 3j, -1.5 + 0.25j, 4], dtype=src)
    assert_close(xp.asarray(a).view(dst), a.view(dst))
    assert_close((xp.asarray(a) * 2).view(dst), (a * 2).view(dst))


def test_empty_list_and_float_arrays_as_indices():
    a = np.arange(3.0)
    t = xp.asarray(a)
    assert_close(t[[]], a[[]])
    for key in (np.array([0.5]), xp.asarray([1.0]), xp.asarray(1.0)):
        assert isinstance(numpy_raises(lambda: a[np.asarray(key)]), IndexError)
        with pytest.raises(IndexError, match="integer"):
            t[key]


@pytest.mark.parametrize("sa, sb, axes", [((2, 0), (0, 3), 1), ((0, 0), (0, 0), 2), ((0, 3), (3, 0), 1),
                                          ((2, 3), (2, 3), 0), ((2, 3, 4), (3, 4, 5), 2)])
def test_tensordot_with_empty_or_no_summed_axes_matches_numpy(sa, sb, axes):
    a, b = np.arange(math.prod(sa), dtype=np.float64).reshape(sa), np.ones(sb)
    assert_close(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=axes), np.tensordot(a, b, axes=axes))


@pytest.mark.parametrize("make", [lambda: xp.zeros(3), lambda: xp.ones(3), lambda: xp.full(3, 2.0),
                                  lambda: xp.tile(xp.asarray([1.0]), 3)])
def test_assign_into_arrays_made_by_creation_functions_works(make):
    a = make()
    a.assign(7.0)   # refused before: their graphs are broadcast constants, their arrays are not
    assert_close(a, np.full(3, 7.0))


def test_assign_into_a_broadcast_is_refused_also_once_realized():
    b = xp.broadcast_to(xp.asarray([1.0, 2.0, 3.0]), (4, 3))
    str(b)
    with pytest.raises(ValueError, match="read-only"):
        b.assign(2.0)
