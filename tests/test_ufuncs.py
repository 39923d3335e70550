"""lazyarr's ufunc objects (lazyarr.ufuncs): the call with NumPy's keywords and the methods reduce,
accumulate, reduceat, outer and at, against NumPy's results on inputs made several ways (lists,
NumPy arrays, lazy graphs, strided and transposed views), through lazyarr's objects and through
NumPy's own ufuncs on Tensors; laziness, gradients, and NumPy's exception types for bad input."""
import inspect
import pickle

import numpy as np
import pytest

import lazyarr as xp
from tests.helpers import HOWS, fails, grad_check, made, same

RNG = np.random.default_rng(33)
FLOATS = RNG.standard_normal((3, 4))
INTS = np.array([[3, -1, 4, 1], [-5, 9, 2, -6], [5, 3, -5, 8]])
BOOLS = np.array([[True, False, True, True], [True, True, False, True], [False, True, True, True]])


# ---- the objects -----------------------------------------------------------------------------------

def test_every_elementwise_ufunc_of_numpy_is_a_ufunc_object():
    from lazyarr.numpy_fallback import is_fallback
    # (the ufuncs lazyarr has: NumPy's others are served by NumPy, `lazyarr.fallbacks`)
    names = [n for n in dir(np) if isinstance(getattr(np, n), np.ufunc) and hasattr(xp, n) and
             not is_fallback(getattr(xp, n))]
    assert len(names) > 90
    for n in names:
        ours, theirs = getattr(xp, n), getattr(np, n)
        if theirs.signature is not None:   # matmul, vecdot: generalized ufuncs, plain functions here
            assert not isinstance(ours, xp.ufunc)
            continue
        assert isinstance(ours, xp.ufunc), n
        assert (ours.nin, ours.nout, ours.nargs) == (theirs.nin, theirs.nout, theirs.nargs), n
        assert ours.identity == theirs.identity and ours.signature is None
    assert xp.abs is xp.absolute and xp.pow is xp.power and xp.divide is xp.true_divide and xp.mod is xp.remainder
    assert xp.add.identity == 0 and xp.multiply.identity == 1 and xp.maximum.identity is None
    assert repr(xp.add) == "<ufunc 'add'>" and xp.add.__name__ == "add" and xp.sin.__doc__
    assert xp.fmax.__doc__ == xp.numpy_elementwise.fmax.__doc__
    assert pickle.loads(pickle.dumps(xp.maximum)) is xp.maximum


def test_signatures_are_the_array_apis():
    assert str(inspect.signature(xp.add)).startswith("(x1: 'Any', x2: 'Any', /)")
    assert list(inspect.signature(xp.sin).parameters) == ["x"]
    for name in ["add", "atan2", "logaddexp", "sqrt", "bitwise_invert", "fmax", "frexp"]:
        assert inspect.signature(getattr(xp, name)) == inspect.signature(getattr(xp, name)._function)


def test_plain_call_is_the_function_and_operators_do_not_use_the_object(monkeypatch):
    x, y = xp.asarray(FLOATS), xp.asarray(FLOATS[::-1].copy())
    same(xp.add(x, y), FLOATS + FLOATS[::-1])
    same(xp.sin(x), np.sin(FLOATS))
    same(xp.frexp(x), np.frexp(FLOATS))

    def refuse(*args, **kwargs):
        raise AssertionError("the ufunc object was called")
    monkeypatch.setattr(type(xp.add), "__call__", staticmethod(refuse))
    same(x + y, FLOATS + FLOATS[::-1])
    same(x + 1.0, FLOATS + 1.0)
    with pytest.raises(AssertionError):
        xp.add(x, y)


# ---- the call's keywords -------------------------------------------------------------------------------

@pytest.mark.parametrize("how", HOWS)
def test_dtype_and_casting(how):
    same(xp.add(made(INTS, how), 1, dtype=np.float32), np.add(INTS, 1, dtype=np.float32))
    same(xp.multiply(made(FLOATS, how), 2.0, dtype=xp.float32), np.multiply(FLOATS, 2.0, dtype=np.float32), rtol=1e-6)
    same(xp.sqrt(made(abs(INTS), how), dtype=np.float64), np.sqrt(abs(INTS), dtype=np.float64))
    same(xp.add(made(INTS, how), made(FLOATS, how), casting="safe"), INTS + FLOATS)
    same(xp.add(made(FLOATS, how), 1, dtype=np.int32, casting="unsafe"),
         np.add(FLOATS, 1, dtype=np.int32, casting="unsafe"))
    fails(TypeError, xp.add, made(FLOATS, how), 1, dtype=np.int32, match="Cannot cast ufunc 'add' input")
    fails(TypeError, xp.add, xp.asarray(INTS.astype(np.int32)), xp.asarray(INTS), casting="no")
    fails(TypeError, xp.less, made(FLOATS, how), 1.0, dtype=np.float64)   # NumPy has no such loop
    fails(ValueError, xp.add, made(FLOATS, how), 1, casting="sometimes")
    fails(ValueError, xp.add, made(FLOATS, how), 1, order="Q")
    fails(TypeError, xp.add, made(FLOATS, how), 1, color="red")


def test_out_with_lazyarr_and_numpy_arrays():
    x = xp.arange(12).reshape(3, 4) * 2
    o = xp.zeros((3, 4))
    assert xp.add(x, 0.5, out=o) is o
    same(o, np.arange(12).reshape(3, 4) * 2 + 0.5)
    assert xp.add(x, 1, xp.zeros((3, 4), dtype=xp.int64)).sum().item() == 144   # positional out
    n = np.zeros((3, 4))
    assert xp.multiply(x, 3, out=n) is n
    np.testing.assert_array_equal(n, np.arange(12).reshape(3, 4) * 6)
    base = xp.zeros((4, 4))   # out a strided view: written through to its base
    xp.add(x[:2], 1, out=base[::2])
    same(base, np.array([[1, 3, 5, 7], [0] * 4, [9, 11, 13, 15], [0] * 4], dtype=float))
    y = xp.asarray([1.0, 2.0, 3.0])
    xp.multiply(y, y, out=y)   # out is an input: the old values are read
    same(y, [1.0, 4.0, 9.0])
    same(xp.add(1, 2, out=xp.zeros(3)), [3.0, 3.0, 3.0])   # broadcast to out's shape
    q, r = xp.zeros(2, dtype=xp.int64), np.zeros(2, dtype=np.int64)
    got = xp.divmod(xp.asarray([7, -7]), 2, out=(q, r))
    assert got[0] is q and got[1] is r
    same(q, [3, -4])
    np.testing.assert_array_equal(r, [1, 1])
    m, e = xp.frexp(xp.asarray([8.0, 3.0]), out=(None, xp.zeros(2, dtype=xp.int32)))
    same(m, [0.5, 0.75])
    same(e, np.array([4, 2], np.int32))
    fails(TypeError, xp.add, x, 0.5, out=xp.zeros((3, 4), dtype=xp.int64), match="Cannot cast ufunc 'add' output")
    fails(ValueError, xp.add, x, 1, out=xp.zeros((2, 4)))
    fails(TypeError, xp.add, x, 1, out=[0] * 12)
    fails(ValueError, xp.add, x, 1, out=(o, o))
    fails(TypeError, xp.add, x, 1, xp.zeros((3, 4)), out=o)
    fails(TypeError, xp.divmod, x, 2, out=o)


def test_where():
    x = xp.arange(6.0)
    mask = [True, False, True, False, True, False]
    o = xp.full(6, -1.0)
    xp.add(x, 10, out=o, where=mask)
    same(o, [10.0, -1.0, 12.0, -1.0, 14.0, -1.0])
    same(xp.add(x, 10, where=x > 2), [0.0, 0.0, 0.0, 13.0, 14.0, 15.0])   # NumPy leaves these uninitialised
    n = np.full(6, -1.0)
    xp.negative(x, out=n, where=xp.asarray(mask))
    np.testing.assert_array_equal(n, [-0.0, -1.0, -2.0, -1.0, -4.0, -1.0])
    fails(TypeError, xp.add, x, 1, where=[1, 0, 1, 0, 1, 0])


# ---- reduce -------------------------------------------------------------------------------------------

REDUCIBLE = ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or", "logical_xor", "bitwise_and",
             "bitwise_or", "bitwise_xor", "subtract", "fmax", "fmin", "gcd", "lcm", "logaddexp", "divide", "hypot"]


def _inputs(name):
    if name.startswith("bitwise") or name in ("gcd", "lcm"):
        return [INTS, BOOLS] if name.startswith("bitwise") else [INTS]
    if name in ("logaddexp", "divide", "hypot", "fmax", "fmin"):
        return [FLOATS]
    return [FLOATS, INTS, BOOLS]


@pytest.mark.parametrize("how", HOWS)
def test_reduce_against_numpy(how):
    for name in REDUCIBLE:
        ours, theirs = getattr(xp, name), getattr(np, name)
        for a in _inputs(name):
            if name in ("subtract", "divide") and a.dtype == bool:
                continue
            for axis in [0, 1, -1, None, (0, 1), ()]:
                if name in ("subtract", "divide") and axis in (None, (0, 1)):
                    continue
                try:
                    with np.errstate(all="ignore"):
                        want = theirs.reduce(a, axis=axis)
                except ValueError:   # (lcm over several axes: not reorderable)
                    fails(ValueError, ours.reduce, made(a, how), axis=axis, match="not reorderable")
                    continue
                same(ours.reduce(made(a, how), axis=axis), want, rtol=1e-10)
        same(ours.reduce(made(_inputs(name)[0], how), axis=1, keepdims=True),
             theirs.reduce(_inputs(name)[0], axis=1, keepdims=True), rtol=1e-10)


def test_reduce_options():
    x = xp.asarray(FLOATS)
    same(xp.add.reduce(INTS, dtype=np.float32), np.add.reduce(INTS, dtype=np.float32))
    same(xp.add.reduce(FLOATS * 3, axis=1, dtype=np.int32),   # an unsafe cast of the input, as NumPy's
         np.add.reduce(FLOATS * 3, axis=1, dtype=np.int32))
    same(xp.gcd.reduce([-4]), np.gcd.reduce([-4]))   # NumPy starts from the identity
    same(xp.hypot.reduce([-3.0]), 3.0)
    same(xp.lcm.reduce([-4]), -4)
    same(xp.add.reduce(np.array([100, 100], np.int8)), np.add.reduce(np.array([100, 100], np.int8)))   # int64
    same(xp.add.reduce(BOOLS), np.add.reduce(BOOLS))
    same(xp.multiply.reduce(BOOLS, axis=1), np.multiply.reduce(BOOLS, axis=1))
    same(xp.add.reduce(x, axis=1, initial=10.0), np.add.reduce(FLOATS, axis=1, initial=10.0))
    same(xp.maximum.reduce(x, axis=0, initial=0.5), np.maximum.reduce(FLOATS, axis=0, initial=0.5))
    same(xp.subtract.reduce(x, axis=1, initial=1.0), np.subtract.reduce(FLOATS, axis=1, initial=1.0))
    same(xp.add.reduce(x, axis=1, where=BOOLS), np.add.reduce(FLOATS, axis=1, where=BOOLS))
    same(xp.multiply.reduce(x, axis=None, where=BOOLS), np.multiply.reduce(FLOATS, axis=None, where=BOOLS))
    same(xp.maximum.reduce(x, axis=1, where=BOOLS, initial=-9.0),
         np.maximum.reduce(FLOATS, axis=1, where=BOOLS, initial=-9.0))
    same(xp.subtract.reduce(x, axis=1, where=BOOLS, initial=2.0),
         np.subtract.reduce(FLOATS, axis=1, where=BOOLS, initial=2.0))
    same(xp.minimum.reduce(x, where=np.zeros((3, 4), bool), initial=7.0), np.full(4, 7.0))
    same(xp.bitwise_and.reduce(np.zeros((0, 3), np.uint8)), np.bitwise_and.reduce(np.zeros((0, 3), np.uint8)))
    same(xp.add.reduce(np.zeros((2, 0))), np.zeros(0))
    same(xp.add.reduce(np.zeros((0, 2)), axis=0), np.zeros(2))
    same(xp.logical_and.reduce(np.zeros((0,), bool)), np.True_)
    same(xp.maximum.reduce(np.zeros((0, 2)), axis=1), np.zeros(0))   # no element is reduced
    same(xp.maximum.reduce(np.zeros((0, 2)), axis=0, initial=3.0), np.full(2, 3.0))
    same(xp.add.reduce(xp.asarray(5.0), axis=None), np.float64(5.0))
    o = xp.zeros(4, dtype=xp.float32)
    assert xp.add.reduce(x, axis=0, out=o) is o   # computed in out's dtype
    same(o, np.add.reduce(FLOATS, axis=0, out=np.zeros(4, np.float32)), rtol=1e-6)
    n = np.zeros(3)
    assert xp.maximum.reduce(x, axis=1, out=(n,)) is n
    np.testing.assert_array_equal(n, FLOATS.max(axis=1))
    nan = xp.asarray([1.0, np.nan, 3.0])
    same(xp.maximum.reduce(nan), np.nan)
    same(xp.fmax.reduce(nan), 3.0)
    same(xp.logical_and.reduce([xp.asarray([True, False]), xp.asarray([True, True])]), [True, False])


def test_reduce_errors():
    fails(ValueError, xp.sin.reduce, [1.0, 2.0], match="reduce only supported for binary functions")
    fails(ValueError, xp.divmod.reduce, [1.0, 2.0])
    fails(ValueError, xp.maximum.reduce, np.zeros((0, 3)), match="no identity")
    fails(ValueError, xp.maximum.reduce, FLOATS, where=BOOLS, match="initial")
    fails(ValueError, xp.subtract.reduce, FLOATS, axis=None, match="not reorderable")
    fails(np.exceptions.AxisError, xp.add.reduce, FLOATS, axis=2)
    fails(ValueError, xp.add.reduce, FLOATS, axis=(0, 0))
    fails(TypeError, xp.bitwise_and.reduce, FLOATS)


# ---- accumulate -----------------------------------------------------------------------------------------

ACCUMULATING = ["add", "multiply", "maximum", "minimum", "subtract", "logical_or", "logical_xor", "bitwise_xor",
                "fmin", "divide", "logaddexp"]


@pytest.mark.parametrize("how", HOWS)
def test_accumulate_against_numpy(how):
    long = RNG.standard_normal(11)
    for name in ACCUMULATING:
        ours, theirs = getattr(xp, name), getattr(np, name)
        for a in _inputs(name) + ([long] if name not in ("bitwise_xor",) else []):
            if name in ("subtract", "divide") and a.dtype == bool:
                continue
            for axis in [0, 1, -1][:a.ndim + 1] if a.ndim > 1 else [0]:
                with np.errstate(all="ignore"):
                    want = theirs.accumulate(a, axis=axis)
                same(ours.accumulate(made(a, how) if a.ndim > 1 else a, axis=axis), want, rtol=1e-10)


def test_accumulate_options_and_errors():
    same(xp.add.accumulate(INTS, dtype=np.float32, axis=1), np.add.accumulate(INTS, dtype=np.float32, axis=1))
    same(xp.add.accumulate(np.array([100, 100], np.int8)), np.add.accumulate(np.array([100, 100], np.int8)))
    same(xp.multiply.accumulate(BOOLS), np.multiply.accumulate(BOOLS))
    same(xp.maximum.accumulate(np.zeros((0, 3))), np.zeros((0, 3)))
    o = xp.zeros((3, 4))
    assert xp.maximum.accumulate(xp.asarray(FLOATS), axis=1, out=o) is o
    same(o, np.maximum.accumulate(FLOATS, axis=1))
    n = np.zeros((3, 4), np.int64)
    xp.add.accumulate(xp.asarray(INTS), out=n)
    np.testing.assert_array_equal(n, np.add.accumulate(INTS))
    fails(ValueError, xp.sin.accumulate, [1.0], match="accumulate only supported for binary functions")
    fails(TypeError, xp.add.accumulate, xp.asarray(3.0))   # NumPy: cannot accumulate on a scalar
    fails(np.exceptions.AxisError, xp.add.accumulate, FLOATS, axis=2)


# ---- reduceat ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["list", "asarray", "computed", "strided"])
def test_reduceat_against_numpy(how):
    v = np.arange(8) * 1.5
    for idx in [[0, 4, 1, 5, 7], [0, 3, 3, 5], [7], [5, 1, 2], np.array([2, 6])]:
        for name in ["add", "multiply", "maximum", "minimum", "subtract", "logical_or"]:
            same(getattr(xp, name).reduceat(made(v, how), idx), getattr(np, name).reduceat(v, idx))
    m = np.linspace(0, 15, 16).reshape(4, 4)
    same(xp.add.reduceat(made(m, how), [0, 3, 1, 2, 0]), np.add.reduceat(m, [0, 3, 1, 2, 0]))
    same(xp.multiply.reduceat(made(m, how), [1, 3], axis=1), np.multiply.reduceat(m, [1, 3], axis=1))
    same(xp.add.reduceat(made(INTS, how), xp.asarray([0, 2]), axis=-1, dtype=np.float32),
         np.add.reduceat(INTS, [0, 2], axis=-1, dtype=np.float32))


def test_reduceat_errors():
    fails(IndexError, xp.add.reduceat, np.arange(5), [0, 7])
    fails(IndexError, xp.add.reduceat, np.arange(5), [-1])
    fails(TypeError, xp.add.reduceat, np.arange(5), [0.5])
    fails(ValueError, xp.sin.reduceat, np.arange(5.0), [0], match="reduceat only supported")
    fails(np.exceptions.AxisError, xp.add.reduceat, FLOATS, [0], axis=3)


# ---- outer ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("how", HOWS)
def test_outer_against_numpy(how):
    a, b = FLOATS[0], INTS
    for name in ["multiply", "subtract", "add", "greater", "maximum", "logical_and", "power", "atan2"]:
        with np.errstate(all="ignore"):
            want = getattr(np, name).outer(a, b)
        same(getattr(xp, name).outer(made(np.tile(a, (2, 1)), how)[0] if how != "list" else a.tolist(),
                                     made(b, how)), want)
    same(xp.multiply.outer(2, [1, 2]), np.multiply.outer(2, [1, 2]))
    same(xp.subtract.outer(made(FLOATS, how), [1.0, 2.0]), np.subtract.outer(FLOATS, [1.0, 2.0]))
    same(xp.add.outer(made(INTS, how), [1, 2], dtype=np.float32), np.add.outer(INTS, [1, 2], dtype=np.float32))
    fails(ValueError, xp.sin.outer, [1.0], [2.0], match="outer product only supported")


# ---- at ---------------------------------------------------------------------------------------------------

def at_against_numpy(name, a, indices, b=None):
    """ufunc.at on a lazyarr copy of `a` and on NumPy's, compared."""
    ours, want = xp.asarray(a.copy()), a.copy()
    args = () if b is None else (b,)
    assert getattr(xp, name).at(ours, indices, *args) is None
    getattr(np, name).at(want, indices, *args)
    same(ours, want)


def test_at_against_numpy():
    idx = [0, 1, 1, 4, 1, 0]
    at_against_numpy("add", np.zeros(5), idx, 1.0)
    at_against_numpy("add", np.arange(5), idx, np.arange(6))
    at_against_numpy("add", np.arange(5.0), np.array(idx), np.arange(6.0) / 4)
    at_against_numpy("subtract", np.arange(5.0), idx, 0.5)
    at_against_numpy("add", np.zeros((3, 4)), ([0, 2, 0], [1, 3, 1]), [1.0, 2.0, 3.0])
    at_against_numpy("add", np.zeros((3, 4)), (slice(None), [1, 1]), np.ones((3, 2)))
    at_against_numpy("add", np.zeros((3, 4)), 2, 5.0)
    at_against_numpy("add", np.zeros(4, np.float32), [1, 1], 0.1)
    at_against_numpy("add", np.array([True, False, False]), [1, 1], True)
    at_against_numpy("maximum", np.zeros(5), idx, np.array([3.0, -1.0, 2.0, 5.0, 7.0, 1.0]))
    at_against_numpy("minimum", np.arange(5), idx, -np.arange(6))
    at_against_numpy("multiply", np.arange(1.0, 6.0), idx, 2.0)
    at_against_numpy("power", np.full(3, 2.0), [0, 0, 2], 2.0)   # not commutative: the order counts
    at_against_numpy("negative", np.arange(5), [0, 0, 1])         # unary: applied twice at 0
    at_against_numpy("bitwise_or", np.zeros(3, np.int64), [2, 2], np.array([1, 4]))
    at_against_numpy("add", np.arange(5.0), np.array([True, False, True, False, False]), 1.0)
    at_against_numpy("add", np.arange(5.0), [], 1.0)


def test_at_views_numpy_arrays_and_errors():
    base = xp.zeros(8)
    view = base[::2]
    xp.add.at(view, [0, 0, 3], 1.0)   # a view: written through to its base
    same(base, [2.0, 0, 0, 0, 0, 0, 1.0, 0])
    n = np.zeros(4)
    xp.add.at(n, xp.asarray([1, 1]), xp.asarray(2.0))   # a NumPy array: NumPy's at
    np.testing.assert_array_equal(n, [0.0, 4.0, 0.0, 0.0])
    x = xp.zeros(4, dtype=xp.int64)
    fails(ValueError, xp.add.at, x, [0], match="second operand needed")
    fails(ValueError, xp.negative.at, x, [0], 1, match="second operand provided")
    fails(IndexError, xp.add.at, x, [9], 1)
    xp.add.at(x, [0], 1.5)   # cast unsafely, as NumPy's at does
    same(x, [1, 0, 0, 0])
    fails(ValueError, xp.add.at, x, [0, 1], [1, 2, 3])
    fails(ValueError, xp.divmod.at, x, [0], 1)


# ---- NumPy's ufuncs on Tensors -------------------------------------------------------------------------------

def test_numpy_ufunc_methods_on_tensors_give_lazyarr_arrays():
    t = xp.arange(12).reshape(3, 4) * 2
    a = np.arange(12).reshape(3, 4) * 2
    same(np.add.reduce(t), np.add.reduce(a))
    same(np.add.reduce(t, axis=None, keepdims=True), np.add.reduce(a, axis=None, keepdims=True))
    same(np.maximum.accumulate(t[:, ::-1], axis=1), np.maximum.accumulate(a[:, ::-1], axis=1))
    same(np.multiply.outer(t[0], t.T[1]), np.multiply.outer(a[0], a.T[1]))
    same(np.add.reduceat(t.T, [0, 2, 1]), np.add.reduceat(a.T, [0, 2, 1]))
    same(np.logical_or.reduce(t > 10, axis=1), np.logical_or.reduce(a > 10, axis=1))
    same(np.add(t, 1, dtype=np.float32), np.add(a, 1, dtype=np.float32))
    d = xp.zeros(5)
    assert np.add.at(d, xp.asarray([0, 1, 1, 4]), 1.0) is None
    same(d, [1.0, 2.0, 0.0, 0.0, 1.0])
    o = xp.zeros((3, 4))
    assert np.sin(t, out=o) is o
    same(o, np.sin(a))
    assert np.add(a, 1, out=o, where=a > 5) is o   # a Tensor as out of NumPy arrays
    same(o, np.where(a > 5, a + 1, np.sin(a)))
    assert isinstance(np.spacing(t), np.ndarray)   # a ufunc lazyarr does not have: NumPy's, on the host


def test_methods_stay_lazy(monkeypatch):
    """reduce, accumulate and outer of a lazy graph run no kernel until a value is asked for."""
    from tests.helpers import watch_launches
    runs = []
    watch_launches(monkeypatch, runs.append)
    x = xp.arange(12).reshape(3, 4) * 2.0 + 1.0
    built = [xp.add.reduce(x), xp.maximum.reduce(x, axis=None), xp.logaddexp.reduce(x, axis=1),
             xp.subtract.reduce(x, axis=1, where=x > 3, initial=0.0), xp.maximum.accumulate(x, axis=1),
             xp.subtract.accumulate(x), xp.multiply.outer(x[0], x[1]), xp.add(x, 1.0, dtype=xp.float32),
             xp.add(x, 1.0, where=x > 4)]
    assert runs == []
    assert all(not b.is_realized for b in built)


# ---- gradients -----------------------------------------------------------------------------------------

def test_gradients():
    x = RNG.uniform(0.5, 2.0, (3, 5))
    y = RNG.uniform(0.5, 2.0, 4)
    for name, axis in [("add", 0), ("multiply", 1), ("maximum", None), ("logaddexp", 1), ("subtract", 1),
                       ("divide", 0), ("hypot", (0, 1))]:
        grad_check(lambda t: getattr(xp, name).reduce(t, axis=axis),
                   lambda a: getattr(np, name).reduce(a, axis=axis), x)
    keep = x > 1.0
    grad_check(lambda t: xp.add.reduce(t, axis=1, where=keep), lambda a: np.add.reduce(a, axis=1, where=keep), x)
    for name in ["add", "multiply", "maximum", "logaddexp", "subtract", "divide"]:
        grad_check(lambda t: getattr(xp, name).accumulate(t, axis=1), lambda a: getattr(np, name).accumulate(a, axis=1),
                   x)
    for name in ["multiply", "subtract", "power"]:
        grad_check(lambda s, t: getattr(xp, name).outer(s, t), lambda a, b: getattr(np, name).outer(a, b), y, x[0])
    grad_check(lambda t: xp.add.reduceat(t, [0, 2, 1, 4], axis=1),
               lambda a: np.add.reduceat(a, [0, 2, 1, 4], axis=1), x)
    grad_check(lambda t: xp.maximum.reduceat(t, [0, 3]), lambda a: np.maximum.reduceat(a, [0, 3]), y)


def test_gradients_through_at():
    idx = [0, 2, 2, 3]

    def added(a, b, name="add"):
        out = a * 1.0
        getattr(xp, name).at(out, idx, b)
        return out

    def np_added(a, b, name="add"):
        out = a.copy()
        getattr(np, name).at(out, idx, b)
        return out
    a, b = RNG.uniform(0.5, 2.0, 5), RNG.uniform(0.5, 2.0, 4)
    grad_check(added, np_added, a, b)
    grad_check(lambda s, t: added(s, t, "multiply"), lambda s, t: np_added(s, t, "multiply"), a, b)
    grad_check(lambda s, t: added(s, t, "subtract"), lambda s, t: np_added(s, t, "subtract"), a, b)


def test_torch_agrees_on_a_cumulative_maximum_gradient():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 7))
    t = torch.tensor(x, requires_grad=True)
    torch.cummax(t, dim=1).values.pow(2).sum().backward()
    leaf = xp.asarray(x, requires_grad=True)
    (xp.maximum.accumulate(leaf, axis=1) ** 2).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_reductions_of_an_arange_graph():
    """(An int64 sum over axis 0 of an arange graph gave its last row: fixed in symbolic.normalize_sum.)"""
    same(xp.add.reduce(xp.arange(12).reshape(3, 4) * 2), np.add.reduce(np.arange(12).reshape(3, 4) * 2))
    same(xp.maximum.accumulate(xp.arange(12).reshape(3, 4) * 2), np.maximum.accumulate(np.arange(12).reshape(3, 4) * 2))
