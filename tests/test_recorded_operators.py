"""The commonest operations recorded in C (`compiler/record_native.c`: elementwise operators and
functions, reductions, matmul, x[i], rolls): the same nodes, arrays and errors as the Python path
(`elementwise.fast_operator` and the others), whatever the operands."""
import math
import operator

import numpy as np
import pytest
from hypothesis import given, strategies as st

import lazyarr as xp
from lazyarr import elementwise as ew, no_grad
from lazyarr.compiler.uop import Ops, native_module

needs_native = pytest.mark.skipif(native_module is None, reason="LAZYARR_NATIVE=0: the Python path is in use")

OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}
DTYPES = [xp.float32, xp.float64, xp.int32, xp.int8, xp.uint8, xp.int64, xp.bool, xp.complex64, xp.float16]
SCALARS = [2.5, -1.0, 0.0, -0.0, 3, 3.0, 0, -7, 255, 300, 2**40, -2**63, 2**70, float("nan"), float("inf"), True, 1 + 2j]


def _made(how: str, dtype, shape):
    """An array of `dtype` and `shape` made one of the ways users make arrays."""
    a = (np.arange(math.prod(shape)) % 5 + 1).reshape(shape)
    if how == "asarray":
        return xp.asarray(a.astype(xp.asarray(0, dtype=dtype).__array__().dtype))
    if how == "computed":
        return xp.astype(xp.asarray(a) * 1 + 0, dtype)
    if how == "view":
        return xp.astype(xp.asarray(np.concatenate([a, a], axis=-1)), dtype)[..., : shape[-1]] if shape else \
            xp.astype(xp.asarray(a), dtype)
    return xp.full(shape, 2, dtype=dtype)


def _python_path(name: str, reflected: bool):
    general = {("+", False): ew.add, ("-", False): ew.subtract, ("*", False): ew.multiply, ("/", False): ew.divide}
    op = {"+": Ops.ADD, "-": Ops.SUB, "*": Ops.MUL, "/": Ops.FDIV}[name]
    fn = general[(name, False)]
    return ew.fast_operator(op, (lambda x, y: fn(y, x)) if reflected else fn, reflected=reflected)


def _outcome(f, x, y):
    try:
        out = f(x, y)
    except Exception as e:   # the same error, of the same type
        return type(e), str(e)
    return out


@needs_native
@given(name=st.sampled_from(sorted(OPERATORS)), dtype=st.sampled_from(DTYPES), reflected=st.booleans(),
       how=st.sampled_from(["asarray", "computed", "view", "full"]), shape=st.sampled_from([(), (3,), (2, 3)]),
       other=st.one_of(st.sampled_from(SCALARS), st.sampled_from(["same", "row", "column", "0-d", "other dtype"]),
                       st.floats(), st.integers(-2**70, 2**70)))   # (new constants: built, not found)
def test_the_c_path_records_what_the_python_path_records(name, dtype, reflected, how, shape, other):
    x = _made(how, dtype, shape)
    if other == "same":
        y = _made("computed", dtype, shape)
    elif other == "row":   # broadcast both ways
        y = _made("asarray", dtype, shape[-1:] if shape else (1,))
    elif other == "column":   # (2, 1) against (2, 3); (2, 1) against (3,) broadcasts to (2, 3); () too
        y = _made("computed", dtype, (2, 1))
    elif other == "0-d":
        y = _made("computed", dtype, ())
    elif other == "other dtype":
        y = _made("asarray", xp.float64 if dtype != xp.float64 else xp.float32, shape)
    else:
        y = other
    native = _python_path(name, reflected)   # (fast_operator gives the C path while _record is set)
    got = _outcome(native, x, y)
    saved, ew._record = ew._record, None
    try:
        python = _python_path(name, reflected)
    finally:
        ew._record = saved
    want = _outcome(python, x, y)
    if isinstance(want, tuple):
        assert got == want
        return
    assert type(got) is type(want) and got.uop is want.uop and got.device is want.device
    assert got.uop._holder() is not None and got.uop._holder().uop is got.uop
    assert not got._leaf_grad and got.grad is None and got._viewof is None
    assert got.uop.shape == want.uop.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@needs_native
def test_recorded_operations_keep_gradients_and_no_grad():
    w = xp.asarray(np.array([1.0, 2.0, 3.0])).requires_grad_()
    loss = xp.sum((w * 2.0 - 1.0) * (w + w) / 4.0)
    loss.backward()
    np.testing.assert_allclose(np.asarray(w.grad), np.asarray([1.0, 2.0, 3.0]) * 2.0 - 0.5)
    with no_grad():
        y = w * 3.0
    assert y.uop.op is Ops.DETACH and not y.requires_grad


@needs_native
def test_an_integer_too_large_for_the_dtype_is_refused_as_by_numpy():
    x = xp.asarray(np.array([1, 2], dtype=np.int8))
    with pytest.raises(OverflowError):
        x + 300
    assert (x * 3).dtype == xp.int8 and list(np.asarray(x * 3)) == [3, 6]


@needs_native
def test_the_array_holding_a_node_is_the_one_recorded_last():
    # a realization stores what a live array holds: the holder is the latest array of the node
    x = xp.asarray(np.arange(4.0))
    a = x * 2.0
    b = x * 2.0
    assert a.uop is b.uop and a.uop._holder() is a
    del a
    c = x * 2.0
    assert c.uop._holder() is c


@needs_native
def test_the_commonest_operands_take_the_c_path_and_the_rest_the_python_one():
    x, y = xp.asarray(np.arange(6.0).reshape(2, 3)), xp.asarray(np.ones((2, 3)))
    for other in (2.5, 3, y):
        out = ew._record(x, other, Ops.MUL, False, True)
        assert out is not NotImplemented and out.uop.op is Ops.MUL and out.uop.src[0] is x.uop
    out = ew._record(x, y[0], Ops.ADD, False, True)   # a row, broadcast as the Python path does
    assert out.uop.src[0] is x.uop and out.uop.src[1].op is Ops.EXPAND and out.shape == (2, 3)
    for other in (True, 1j, y[:, :2], xp.astype(y, xp.float32), "a", None, np.float64(2.0)):
        assert ew._record(x, other, Ops.MUL, False, True) is NotImplemented
    with pytest.raises(ValueError, match="could not be broadcast"):
        x * y[:, :2]
    i = xp.asarray(np.arange(3))
    assert ew._record(i, 2.5, Ops.ADD, False, True) is NotImplemented   # an int array and a float: promotion
    assert ew._record(i, 2, Ops.FDIV, False, False) is NotImplemented   # int / int: float64
    assert ew._record(i, 2, Ops.ADD, True, True).uop.src[1] is i.uop     # reflected: the constant first


def _python_matmul(x1, x2):
    from lazyarr import linear_algebra
    saved, linear_algebra._record = linear_algebra._record, None
    try:
        return _outcome(linear_algebra.matmul, x1, x2)
    finally:
        linear_algebra._record = saved


@needs_native
@given(dtype=st.sampled_from(DTYPES), other_dtype=st.sampled_from([None, xp.float64, xp.int32]),
       how=st.sampled_from(["asarray", "computed", "view", "full"]),
       shapes=st.sampled_from([((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)), ((1, 3), (3, 1)),
                               ((2, 3), (2, 3)), ((0, 3), (3, 2)), ((2, 0), (0, 2)), ((2, 2, 3), (3, 2)),
                               ((3,), (2, 3, 1)), ((), (3,)), ((4, 1), (1, 5))]))
def test_matmul_in_c_records_what_the_python_path_records(dtype, other_dtype, how, shapes):
    from lazyarr import linear_algebra
    x = _made(how, dtype, shapes[0])
    y = _made("computed", other_dtype or dtype, shapes[1])
    got = _outcome(lambda a, b: a @ b, x, y)
    want = _python_matmul(x, y)
    if isinstance(want, tuple):
        assert got == want
        return
    assert type(got) is type(want) and got.uop is want.uop and got.device is want.device and got.dtype == want.dtype
    assert got.uop._holder() is got
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    real = dtype.kind in "fiu" and other_dtype in (None, dtype) and len(shapes[0]) in (1, 2) and \
        len(shapes[1]) in (1, 2) and 0 not in shapes[0] + shapes[1] and shapes[0][-1] == shapes[1][0]
    assert (linear_algebra._record(x, y) is not NotImplemented) == real


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("shapes", [((5, 4), (4,)), ((4,), (4, 3)), ((4,), (4,)), ((5, 4), (4, 3))])
def test_a_product_reshapes_each_operand_and_its_sum_once(native, shapes):
    # a vector straight to its 3-d shape, the sum straight to the result's: a loop of matrix-vector
    # products records (and walks, and frees) no reshape of a reshape
    from lazyarr import linear_algebra
    from lazyarr.compiler.stages import graph_nodes
    x, y = _made("computed", xp.float64, shapes[0]), _made("computed", xp.float64, shapes[1])
    saved = linear_algebra._record
    if not native:
        linear_algebra._record = None
    try:
        out = x @ y
    finally:
        linear_algebra._record = saved
    operands = set(graph_nodes([x.uop, y.uop]))
    reshapes = [u for u in graph_nodes([out.uop]) if u not in operands and u.op is Ops.RESHAPE]
    assert len(reshapes) == 3 and all(u.src[0] in operands or u.src[0].op is Ops.REDUCE_AXIS for u in reshapes)
    assert out.uop.op is Ops.RESHAPE and out.uop.src[0].op is Ops.REDUCE_AXIS
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) @ np.asarray(y))


@needs_native
def test_matmul_in_c_keeps_gradients():
    w = xp.asarray(np.arange(6.0).reshape(3, 2) / 10).requires_grad_()
    x = xp.asarray(np.arange(12.0).reshape(4, 3))
    loss = xp.sum((x @ w) ** 2)
    loss.backward()
    xn, wn = np.arange(12.0).reshape(4, 3), np.arange(6.0).reshape(3, 2) / 10
    np.testing.assert_allclose(np.asarray(w.grad), 2 * xn.T @ (xn @ wn), rtol=1e-12)


def _other_operand(other, dtype, shape):
    """The second operand an `other` of the strategies below names: an array of x's shape, a row,
    one of another dtype, or the scalar itself."""
    if other == "same":
        return _made("computed", dtype, shape)
    if other == "row":
        return _made("asarray", dtype, shape[-1:] if shape else (1,))
    if other == "other dtype":
        return _made("asarray", xp.float64 if dtype != xp.float64 else xp.float32, shape)
    return other


COMPARISONS = {"<": (operator.lt, ew.less), "<=": (operator.le, ew.less_equal), ">": (operator.gt, ew.greater),
               ">=": (operator.ge, ew.greater_equal), "==": (operator.eq, ew.equal), "!=": (operator.ne, ew.not_equal),
               "**": (operator.pow, ew.pow)}   # (powers take the same path, of the operands' dtype)


@needs_native
@given(name=st.sampled_from(sorted(COMPARISONS)), dtype=st.sampled_from(DTYPES), reflected=st.booleans(),
       how=st.sampled_from(["asarray", "computed", "view", "full"]), shape=st.sampled_from([(), (3,), (2, 3)]),
       other=st.one_of(st.sampled_from(SCALARS), st.sampled_from(["same", "row", "other dtype"])))
def test_comparisons_and_powers_in_c_record_what_the_python_path_records(name, dtype, reflected, how, shape, other):
    x, y = _made(how, dtype, shape), _other_operand(other, dtype, shape)
    compare, function = COMPARISONS[name]
    a, b = (y, x) if reflected and not isinstance(y, xp.Tensor) else (x, y)   # (a scalar on the left: reflected)
    got = _outcome(compare, a, b)
    # (Python asks the array for `c == x` as `x == c`: the array's operands come first)
    want = _outcome(function, *((x, y) if name in ("==", "!=") else (a, b)))
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and got[0] is want[0]
        return
    assert got.uop is want.uop and got.dtype == want.dtype and got.device is want.device
    assert got.dtype == xp.bool or name == "**"
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@needs_native
@given(name=st.sampled_from(["maximum", "minimum"]), dtype=st.sampled_from(DTYPES), scalar_first=st.booleans(),
       how=st.sampled_from(["asarray", "computed", "view", "full"]), shape=st.sampled_from([(), (3,), (2, 3)]),
       other=st.one_of(st.sampled_from(SCALARS), st.sampled_from(["same", "row", "other dtype"])))
def test_maximum_and_minimum_in_c_record_what_the_python_path_records(name, dtype, scalar_first, how, shape, other):
    x, y = _made(how, dtype, shape), _other_operand(other, dtype, shape)
    op = Ops.MAX if name == "maximum" else Ops.MIN
    a, b = (y, x) if scalar_first else (x, y)
    got = _outcome(getattr(xp, name), a, b)
    want = _outcome(lambda p, q: ew._binary(name, p, q, ew._op(op)), a, b)   # (the general path)
    if isinstance(want, tuple):
        assert got == want
        return
    assert got.uop is want.uop and got.dtype == want.dtype and got.device is want.device
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_arange_of_a_count_records_what_the_general_path_records():
    from lazyarr import creation
    for n in (0, 1, 4, 1000):
        fast, general = xp.arange(n), creation.arange(0, n, 1)
        assert fast.uop is general.uop and fast.dtype == general.dtype == xp.int64 and fast.device is general.device
        np.testing.assert_array_equal(np.asarray(fast), np.arange(n))
    for bad in (-3, 2.5, True):   # (these go the general way: NumPy's answers and errors)
        np.testing.assert_array_equal(np.asarray(xp.arange(bad)), np.arange(bad))
    assert xp.arange(3, dtype=xp.float32).dtype == xp.float32 and xp.arange(3, requires_grad=False).shape == (3,)


UNARY = {"negative": ew.negative, "abs": ew.abs, "sin": ew.sin, "exp": ew.exp, "sqrt": ew.sqrt, "tanh": ew.tanh,
         "log1p": ew.log1p, "-x": operator.neg, "abs(x)": operator.abs}


@needs_native
@given(name=st.sampled_from(sorted(UNARY)), dtype=st.sampled_from(DTYPES),
       how=st.sampled_from(["asarray", "computed", "view", "full"]), shape=st.sampled_from([(), (3,), (2, 3)]))
def test_unary_functions_in_c_record_what_the_python_path_records(name, dtype, how, shape):
    x = _made(how, dtype, shape)
    got = _outcome(lambda a, _: UNARY[name](a), x, None)
    saved, ew._record_unary = ew._record_unary, None
    try:
        want = _outcome(lambda a, _: UNARY[name](a), x, None)
    finally:
        ew._record_unary = saved
    if isinstance(want, tuple):
        assert got == want
        return
    assert got.uop is want.uop and got.dtype == want.dtype and got.uop._holder().uop is got.uop
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@needs_native
@given(name=st.sampled_from(["sum", "prod", "max", "min", "mean"]), dtype=st.sampled_from(DTYPES),
       how=st.sampled_from(["asarray", "computed", "view", "full"]),
       shape=st.sampled_from([(), (3,), (2, 3), (2, 3, 4), (0, 3), (2, 0)]),
       axis=st.sampled_from([None, 0, 1, -1, 2, -4, (0, 1), (1, 0), (0, 0), (), [0], 1.0, True]),
       keepdims=st.booleans())
def test_reductions_in_c_record_what_the_python_path_records(name, dtype, how, shape, axis, keepdims):
    from lazyarr import statistics
    x = _made(how, dtype, shape)
    fn = getattr(xp, name)
    got = _outcome(lambda a, _: fn(a, axis=axis, keepdims=keepdims), x, None)
    saved, statistics._record = statistics._record, None
    try:
        want = _outcome(lambda a, _: fn(a, axis=axis, keepdims=keepdims), x, None)
    finally:
        statistics._record = saved
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and got[0] is want[0]
        return
    assert got.uop is want.uop and got.dtype == want.dtype and got.device is want.device
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@needs_native
@given(dtype=st.sampled_from(DTYPES), how=st.sampled_from(["asarray", "computed", "view", "full", "broadcast"]),
       shape=st.sampled_from([(), (1,), (3,), (1, 3), (2, 3), (2, 3, 4), (0, 3)]),
       key=st.one_of(st.integers(-5, 5), st.sampled_from([2**63, -2**63 - 1, 2**70])))
def test_indexing_by_an_int_in_c_records_what_the_python_path_records(dtype, how, shape, key):
    from lazyarr import indexing
    x = xp.broadcast_to(_made("asarray", dtype, shape[1:]), shape) if how == "broadcast" else _made(how, dtype, shape)
    got = _outcome(lambda a, k: a[k], x, key)
    saved, indexing._record_index = indexing._record_index, None
    try:
        want = _outcome(lambda a, k: a[k], x, key)
    finally:
        indexing._record_index = saved
    if isinstance(want, tuple):   # the same error (0-d, out of range)
        assert got == want
        return
    assert got.uop is want.uop and got.dtype == want.dtype and got.device is want.device
    assert got.uop._holder().uop is got.uop
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # a row of a broadcast stays read-only; a row of any other array is a view that writes reach
    if how == "broadcast" and got.ndim:
        with pytest.raises(ValueError, match="read-only"):
            got[...] = 0
    elif how in ("asarray", "computed") and got.ndim and got.size:
        got[...] = 1
        np.testing.assert_array_equal(np.asarray(x[key]), np.ones(got.shape))


@needs_native
@given(dtype=st.sampled_from(DTYPES), how=st.sampled_from(["asarray", "computed", "view", "full"]),
       shape=st.sampled_from([(1,), (5,), (2, 3), (3, 1, 4), (2, 3, 4)]), shift=st.integers(-9, 9),
       axis=st.one_of(st.none(), st.integers(-3, 2)))
def test_rolls_in_c_record_what_the_python_path_records(dtype, how, shape, shift, axis):
    from lazyarr import manipulation
    x = _made(how, dtype, shape)
    got = _outcome(lambda a, s: xp.roll(a, s, axis=axis), x, shift)
    saved, manipulation._record_rolled = manipulation._record_rolled, None
    try:
        want = _outcome(lambda a, s: xp.roll(a, s, axis=axis), x, shift)
    finally:
        manipulation._record_rolled = saved
    if isinstance(want, tuple):   # the same error (an axis out of range)
        assert got == want
        return
    assert got.uop is want.uop and got.uop.shape == want.uop.shape == x.shape
    np.testing.assert_array_equal(np.asarray(got), np.roll(np.asarray(x), shift, axis=axis))


@needs_native
def test_a_roll_in_c_refuses_what_is_no_roll():
    u = xp.asarray(np.arange(6.0)).uop
    mask = xp.asarray(np.arange(6) >= 2).uop
    for a, s in ((1, 2), (-1, 2), (0, 0), (0, 6), (0, -1)):
        with pytest.raises(ValueError, match="record_rolled"):
            native_module.record_rolled(u, a, s, mask)
    with pytest.raises(TypeError):
        native_module.record_rolled(u, 0, 2, None)
