"""Leaves have identity: a tensor that requires grad is its own leaf, distinct from every equal
constant (equal values are one hash-consed node), whatever function made it."""
import numpy as np
import pytest

import lazyarr as xp
from tests.helpers import assert_close

MAKERS = {
    "ones": lambda: xp.ones(3),
    "zeros": lambda: xp.zeros(3),
    "full": lambda: xp.full(3, 2.0),
    "ones_like": lambda: xp.ones_like(xp.asarray([5.0, 6.0, 7.0])),
    "linspace": lambda: xp.linspace(0.0, 1.0, 3),
    "arange": lambda: xp.arange(3.0),
    "asarray_list": lambda: xp.asarray([1.0, 1.0, 1.0]),
    "asarray_numpy": lambda: xp.asarray(np.ones(3)),
    "eye_row": lambda: xp.eye(3)[0],
}


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
def test_a_parameter_is_distinct_from_an_equal_constant(make):
    w = make()
    w.requires_grad = True
    x = make()   # the same value, not a parameter
    assert not x.requires_grad and w.requires_grad
    (w * x).sum().backward()
    assert_close(w.grad, np.asarray(x))
    assert x.grad is None


def test_a_scalar_parameter_does_not_capture_an_equal_literal():
    b = xp.full((), 2.0)
    b.requires_grad_()
    y = xp.asarray([1.0, 3.0])
    (y ** 2 * b).sum().backward()   # the 2 of ** 2 is a constant, not b
    assert float(b.grad) == 10.0


def test_equal_parameters_get_their_own_gradients():
    a, b = xp.ones(2).requires_grad_(), xp.ones(2).requires_grad_()
    (a * 3 + b * 5).sum().backward()
    assert_close(a.grad, [3.0, 3.0])
    assert_close(b.grad, [5.0, 5.0])


def test_a_leaf_made_from_a_scalar_of_the_same_value_is_its_own_leaf():
    xp.zeros(()).requires_grad_()
    w = xp.zeros(4).requires_grad_()   # raised "computed from tensors that require grad"
    assert w.is_leaf and w.requires_grad


def test_a_copy_of_a_parameter_is_not_the_parameter():
    w = xp.asarray([1.0, 2.0])
    c = w.copy()
    w.requires_grad_()
    assert not c.requires_grad


def test_realizing_between_forward_and_backward_keeps_the_gradient():
    w = xp.ones(3).requires_grad_()
    y = (w * xp.asarray([1.0, 2.0, 3.0])).sum()
    print(w, y)   # realizes both
    y.backward()
    assert_close(w.grad, [1.0, 2.0, 3.0])


def test_a_parameter_updated_under_no_grad_trains_like_pytorch():
    torch = pytest.importorskip("torch")
    w = xp.full((2,), 0.5).requires_grad_()
    tw = torch.full((2,), 0.5, dtype=torch.float64, requires_grad=True)
    data = np.array([1.0, -2.0])
    for _ in range(3):
        (xp.sum((w * xp.asarray(data) - 1.0) ** 2)).backward()
        ((tw * torch.tensor(data) - 1.0) ** 2).sum().backward()
        with xp.no_grad():
            w -= 0.1 * w.grad
        with torch.no_grad():
            tw -= 0.1 * tw.grad
        w.grad, tw.grad = None, None
    assert_close(w, tw.detach().numpy(), rtol=1e-12)


def test_requires_grad_false_makes_a_plain_tensor_again():
    w = xp.ones(2).requires_grad_()
    w.requires_grad_(False)
    assert not w.requires_grad
    assert_close(w * 2, [2.0, 2.0])


def test_listing_leaves_while_the_collector_frees_them():
    """Leaves that die in reference cycles are freed by the collector at any allocation, also while
    backward() lists the live leaves (dict() of the weak table looked each key up after listing them
    all, and a leaf freed in between was a KeyError)."""
    import gc

    from lazyarr.arrays import grad_leaf_tensors

    class Model:
        pass

    w = xp.full(3, 2.0)
    w.requires_grad = True
    threshold = gc.get_threshold()
    gc.set_threshold(1)
    try:
        for _ in range(200):
            for _ in range(50):
                model = Model()
                model.w = xp.ones(3)
                model.w.requires_grad = True
                model.me = model   # a cycle: only the collector frees it
            del model
            assert all(t.requires_grad for t in grad_leaf_tensors().values())
    finally:
        gc.set_threshold(*threshold)
    (w * w).sum().backward()
    assert_close(w.grad, np.full(3, 4.0))
