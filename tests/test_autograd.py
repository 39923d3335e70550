"""Gradients of every differentiable function against central finite differences in float64
(directional derivatives along random directions, hypothesis-generated shapes), and the API."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)
EPS = 1e-6


def value(fn, *arrays):
    out = fn(*(xp.asarray(a) for a in arrays))
    return float(xp.sum(out * xp.asarray(weights(out.shape))))


def weights(shape):
    return np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)


def check_gradient(fn, *arrays, rtol=1e-5, atol=1e-7):
    """backward() of sum(fn(x) * w) against finite differences along random directions."""
    ts = [xp.asarray(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    (xp.sum(out * xp.asarray(weights(out.shape)))).backward()
    rng = np.random.default_rng(len(arrays) + sum(a.size for a in arrays))
    for i, (a, t) in enumerate(zip(arrays, ts)):
        g = np.asarray(t.grad)
        assert g.shape == a.shape
        for _ in range(2):
            v = rng.standard_normal(a.shape)
            plus = [b + EPS * v if j == i else b for j, b in enumerate(arrays)]
            minus = [b - EPS * v if j == i else b for j, b in enumerate(arrays)]
            numeric = (value(fn, *plus) - value(fn, *minus)) / (2 * EPS)
            analytic = float(np.sum(g * v))
            assert math.isclose(analytic, numeric, rel_tol=rtol, abs_tol=atol + 1e-6 * abs(numeric)), \
                (i, analytic, numeric)


def arrays(lo, hi, shape=shapes):
    return hnp.arrays(np.float64, shape, elements=st.floats(lo, hi))


UNARY = {
    "exp": (xp.exp, -3, 3), "exp2": (xp.exp2, -3, 3), "expm1": (xp.expm1, -3, 3), "log": (xp.log, 0.2, 5),
    "log2": (xp.log2, 0.2, 5), "log10": (xp.log10, 0.2, 5), "log1p": (xp.log1p, -0.5, 5),
    "sqrt": (xp.sqrt, 0.2, 5), "sin": (xp.sin, -3, 3), "cos": (xp.cos, -3, 3), "tan": (xp.tan, -1.2, 1.2),
    "asin": (xp.asin, -0.9, 0.9), "acos": (xp.acos, -0.9, 0.9), "atan": (xp.atan, -3, 3),
    "sinh": (xp.sinh, -3, 3), "cosh": (xp.cosh, -3, 3), "tanh": (xp.tanh, -3, 3), "asinh": (xp.asinh, -3, 3),
    "acosh": (xp.acosh, 1.2, 4), "atanh": (xp.atanh, -0.9, 0.9), "negative": (xp.negative, -3, 3),
    "square": (xp.square, -3, 3), "reciprocal": (xp.reciprocal, 0.3, 3), "abs": (xp.abs, 0.1, 3),
    "positive": (xp.positive, -3, 3), "floor": (xp.floor, 0.1, 0.9), "sign": (lambda x: xp.sign(x) * x, 0.1, 3),
    "clip": (lambda x: xp.clip(x, -1, 1), -3, 3), "astype": (lambda x: x.astype(xp.float64) * x, -2, 2),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary_gradients(name, data):
    fn, lo, hi = UNARY[name]
    a = data.draw(arrays(lo, hi))
    if name == "clip":   # away from the kinks
        a = np.where(np.abs(np.abs(a) - 1) < 1e-3, a + 0.01, a)
    check_gradient(fn, a)


def test_cast_passes_the_gradient_in_the_source_dtype():
    x = xp.asarray([1.0, 2.0], dtype=xp.float32, requires_grad=True)
    xp.sum(x.astype(xp.float64) * 3).backward()
    assert x.grad.dtype == xp.float32
    np.testing.assert_allclose(np.asarray(x.grad), [3.0, 3.0])


BINARY = {
    "add": (xp.add, -3, 3), "subtract": (xp.subtract, -3, 3), "multiply": (xp.multiply, -3, 3),
    "divide": (xp.divide, 0.5, 3), "pow": (xp.pow, 0.5, 2), "atan2": (xp.atan2, 0.5, 3),
    "hypot": (xp.hypot, 0.5, 3), "logaddexp": (xp.logaddexp, -3, 3), "maximum": (xp.maximum, -3, 3),
    "minimum": (xp.minimum, -3, 3), "copysign": (xp.copysign, 0.5, 3),
    "where": (lambda a, b: xp.where(a > b, a * 2, b * b), -3, 3), "matmul": (None, -2, 2),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@given(data=st.data())
def test_binary_gradients_with_broadcasting(name, data):
    fn, lo, hi = BINARY[name]
    if name == "matmul":
        n, k, m = (data.draw(st.integers(1, 4)) for _ in range(3))
        a, b = data.draw(arrays(lo, hi, st.just((n, k)))), data.draw(arrays(lo, hi, st.just((k, m))))
        check_gradient(xp.matmul, a, b)
        return
    sa, sb = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)).input_shapes
    a, b = data.draw(arrays(lo, hi, st.just(sa))), data.draw(arrays(lo, hi, st.just(sb)))
    if name in ("maximum", "minimum", "where"):   # away from ties, where the derivative jumps
        b = b + np.where(np.abs(np.broadcast_to(a, np.broadcast_shapes(sa, sb)).sum() - b) < 1e-3, 0.01, 0.0)
        if np.any(np.abs(np.subtract.outer(a.ravel(), b.ravel())) < 1e-3):
            return
    check_gradient(fn, a, b)


REDUCTIONS = {
    "sum": xp.sum, "mean": xp.mean, "prod": xp.prod, "max": xp.max, "min": xp.min,
    "var": lambda x, axis=None: xp.var(x, axis=axis, correction=1) if x.size > 1 else xp.var(x, axis=axis),
    "std": lambda x, axis=None: xp.std(x, axis=axis),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@given(data=st.data())
def test_reduction_gradients(name, data):
    a = data.draw(arrays(0.5, 2))
    a = a + np.arange(a.size).reshape(a.shape) * 3   # distinct values: max/min are differentiable
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none()))
    n = a.size if axis is None else (a.shape[axis] if a.ndim else 1)
    if name in ("std", "var") and n == 1:   # a constant's std has no derivative (sqrt at 0)
        return
    check_gradient(lambda x: REDUCTIONS[name](x, axis=axis), a)


def test_max_splits_the_gradient_evenly_among_ties():
    x = xp.asarray([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    xp.max(x).backward()
    np.testing.assert_allclose(np.asarray(x.grad), [0, 0.5, 0.5, 0])
    y = xp.asarray([2.0, 2.0], requires_grad=True)
    xp.maximum(y[0], y[1]).backward()
    np.testing.assert_allclose(np.asarray(y.grad), [0.5, 0.5])


def test_prod_gradient_with_zeros():
    for values in ([2.0, 0.0, 3.0], [0.0, 0.0, 3.0], [1.0, 2.0, 4.0]):
        x = xp.asarray(values, requires_grad=True)
        xp.prod(x).backward()
        a = np.array(values)
        want = [np.prod(np.delete(a, i)) for i in range(3)]
        np.testing.assert_allclose(np.asarray(x.grad), want)


MOVEMENT = {
    "reshape": lambda x: xp.reshape(x, (-1,)), "T": lambda x: x.T, "flip": lambda x: xp.flip(x),
    "slice": lambda x: x[..., ::-2] if x.ndim else x, "index": lambda x: x[0] if x.ndim else x,
    "broadcast": lambda x: xp.broadcast_to(x, (2,) + x.shape), "concat": lambda x: xp.concat([x, x * 2], axis=0) if x.ndim else x,
    "stack": lambda x: xp.stack([x, x * 3]), "expand_squeeze": lambda x: xp.squeeze(xp.expand_dims(x, axis=0), axis=0),
    "roll": lambda x: xp.roll(x, 1), "tile": lambda x: xp.tile(x, (2,)), "repeat": lambda x: xp.repeat(x, 2),
    "moveaxis": lambda x: xp.moveaxis(x, 0, -1) if x.ndim else x,
}


@pytest.mark.parametrize("name", sorted(MOVEMENT))
@given(a=arrays(-3, 3))
def test_movement_gradients(name, a):
    check_gradient(MOVEMENT[name], a)


def test_gradients_of_gradients():
    f = lambda x: xp.sum(x ** 3)
    g = xp.grad(f)
    h = xp.grad(lambda x: xp.sum(g(x)))
    x = np.array([1.0, 2.0, -1.5])
    np.testing.assert_allclose(np.asarray(g(xp.asarray(x))), 3 * x ** 2)
    np.testing.assert_allclose(np.asarray(h(xp.asarray(x))), 6 * x)


def test_backward_accumulates_and_second_backward_through_grad():
    x = xp.asarray([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [2 + 3, 4 + 3])
    x.grad = None
    y = xp.sum(x ** 3)
    y.backward()
    gx = x.grad
    x.grad = None
    xp.sum(gx).backward()                       # d/dx sum(3x^2) = 6x
    np.testing.assert_allclose(np.asarray(x.grad), [6.0, 12.0])


def test_value_and_grad_with_several_arguments():
    f = lambda a, b: xp.sum(a * b + a)
    val, (ga, gb) = xp.value_and_grad(f, argnums=(0, 1))(xp.asarray([1.0, 2.0]), xp.asarray([3.0, 4.0]))
    assert float(val) == 1 * 3 + 1 + 2 * 4 + 2
    np.testing.assert_allclose(np.asarray(ga), [4.0, 5.0])
    np.testing.assert_allclose(np.asarray(gb), [1.0, 2.0])


def test_backward_after_the_value_was_realized():
    x = xp.asarray([1.0, 2.0], requires_grad=True)
    y = xp.sum(xp.exp(x))
    print(float(y))                             # realizes y
    y.backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.exp([1.0, 2.0]))


def test_detach_and_no_grad_stop_gradients():
    x = xp.asarray([1.0, 2.0], requires_grad=True)
    y = x * x.detach()
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [1.0, 2.0])
    with xp.no_grad():
        z = x * 2
    assert not z.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        z.sum().backward()

    @xp.no_grad()
    def f(t):
        return t * 3
    assert not f(x).requires_grad
    assert (x * 2).requires_grad and x.is_leaf and not (x * 2).is_leaf


def test_backward_errors():
    x = xp.asarray([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="one element"):
        (x * 2).backward()
    (x * 2).backward(gradient=xp.asarray([1.0, 1.0]))
    with pytest.raises(ValueError, match="shape"):
        (x * 2).backward(gradient=xp.ones(3))
    with pytest.raises(RuntimeError, match="does not require grad"):
        xp.ones(2).sum().backward()
    with pytest.raises(TypeError, match="floating-point"):
        xp.sum(x).astype(xp.int64).backward()
    with pytest.raises(TypeError):
        xp.asarray([1, 2]).requires_grad_()
    with pytest.raises(TypeError, match="floating-point"):
        xp.grad(lambda a: xp.sum(a))(xp.asarray([1, 2]))
    with pytest.raises(ValueError, match="one element"):
        xp.grad(lambda a: a * 2)(xp.asarray([1.0, 2.0]))


def test_backward_is_a_lazy_graph_that_fuses():
    x = xp.asarray(np.linspace(0, 1, 16).reshape(4, 4), requires_grad=True)
    loss = xp.sum(xp.tanh(x @ x) * 2)
    loss.backward()
    assert not x.grad.is_realized
    assert len(x.grad.schedule()) <= 3


@pytest.mark.parametrize("made", ["asarray", "graph", "requires_grad_"])
def test_clip_gradients_at_the_bounds_and_ties_are_pytorchs(made):
    """An element equal to a bound of clip takes the whole gradient (torch.clamp's rule: the bound
    is inside); maximum and minimum split a tie in halves and max splits it among the tied
    elements, as torch.maximum and torch.amax do. Bounds as numbers and as arrays, which get the
    gradient where they bind."""
    torch = pytest.importorskip("torch")
    v = np.array([-1.0, 0.0, 0.25, 1.0, 2.0, 1.0, 0.0])
    lo, hi = np.array([0.0, 0.0, 0.5, 1.0, 3.0, -1.0, 0.0]), np.array([1.0, 1.0, 0.75, 1.0, 2.0, 1.0, 0.0])
    w = np.arange(1.0, 8.0)

    def leaf(a):
        if made == "asarray":
            return xp.asarray(a, requires_grad=True)
        if made == "graph":   # a computed leaf: realized, then marked
            t = xp.asarray(a) * 2.0 / 2.0
            t.requires_grad = True
            return t
        return xp.asarray(a.tolist()).requires_grad_()

    def both(fn_xp, fn_torch, *arrays):
        ours = [leaf(a) for a in arrays]
        xp.sum(fn_xp(*ours) * xp.asarray(w)).backward()
        theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
        (fn_torch(*theirs) * torch.tensor(w)).sum().backward()
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o.grad.numpy(), t.grad.numpy())

    both(lambda x: xp.clip(x, 0.0, 1.0), lambda x: torch.clamp(x, 0.0, 1.0), v)
    both(lambda x: xp.clip(x, min=0.0), lambda x: torch.clamp(x, min=0.0), v)
    both(lambda x, a, b: xp.clip(x, a, b), lambda x, a, b: torch.clamp(x, a, b), v, lo, hi)
    both(xp.maximum, torch.maximum, v, lo)
    both(xp.minimum, torch.minimum, v, hi)
    m = np.array([[1.0, 3.0, 3.0, 0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 1.0, 2.0, 0.0, 0.0, 0.0]])
    ours, theirs = leaf(m), torch.tensor(m, requires_grad=True)
    xp.sum(xp.max(ours, axis=1) * xp.asarray([1.0, 2.0])).backward()
    (torch.amax(theirs, dim=1) * torch.tensor([1.0, 2.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    # the values stay NumPy's (NaN passes through)
    np.testing.assert_array_equal(xp.clip(xp.asarray([np.nan, -2.0, 5.0]), 0.0, 1.0).numpy(), [np.nan, 0.0, 1.0])
