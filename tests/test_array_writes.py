"""Writes through integer arrays and masks (`x[idx] = v`, `x[idx] += v`) against NumPy: every key
form getitem takes, duplicates (the last write wins, += adds once), broadcasting values, arrays made
several ways, gradients against PyTorch, and NumPy's errors."""
import numpy as np
import pytest
import torch

import lazyarr as xp

KEYS = [
    lambda a: ([0, 2, 0],),
    lambda a: (np.array([[1, 1], [2, 0]]),),
    lambda a: (slice(None), [1, 1, 3]),
    lambda a: ([2, 0], [1, 3]),
    lambda a: (a > 5,),
    lambda a: (a[:, 0] > 3, slice(1, 3)),
    lambda a: (np.array(1), [0, 2]),
    lambda a: (Ellipsis, [-1, 0]),
    lambda a: (None, [0], slice(None, None, -1)),
    lambda a: ([True, False, True],),
    lambda a: (np.array([], dtype=np.int64),),
]


def lazy_key(key, how):
    out = []
    for k in key:
        if isinstance(k, np.ndarray) and how == "arrays":
            out.append(xp.asarray(k))
        elif isinstance(k, list) and how == "arrays":
            out.append(xp.asarray(np.asarray(k)))
        else:
            out.append(k)
    return tuple(out)


@pytest.mark.parametrize("key", range(len(KEYS)))
@pytest.mark.parametrize("how", ["arrays", "numpy_and_lists"])
@pytest.mark.parametrize("made", ["asarray", "computed", "zeros"])
def test_writes_match_numpy(key, how, made):
    a = np.arange(12.0).reshape(3, 4) if made != "zeros" else np.zeros((3, 4))
    k = KEYS[key](a)
    want = a.copy()
    shape = want[k].shape
    value = np.random.default_rng(key).standard_normal(shape[1:] if len(shape) > 1 else shape)
    want[k] = value
    x = {"asarray": lambda: xp.asarray(a.copy()), "computed": lambda: xp.asarray(a) * 1.0,
         "zeros": lambda: xp.zeros((3, 4), dtype=xp.float64)}[made]()
    x[lazy_key(k, how)] = xp.asarray(value)
    np.testing.assert_array_equal(np.asarray(x), want)
    y = {"asarray": lambda: xp.asarray(a.copy()), "computed": lambda: xp.asarray(a) * 1.0,
         "zeros": lambda: xp.zeros((3, 4), dtype=xp.float64)}[made]()
    y[lazy_key(k, how)] = 7.5
    w = a.copy()
    w[k] = 7.5
    np.testing.assert_array_equal(np.asarray(y), w)


@pytest.mark.parametrize("sorts", ["device", "network"])
def test_duplicates_last_write_wins_and_augmented_assignment_adds_once(request, sorts):
    if sorts == "network":   # repeated indices are sorted: the network's ~100 calls make a graph
        request.getfixturevalue("network")   # realized in stages (its stage finder met calls there first)
    x = xp.zeros(5, dtype=xp.int32)
    x[xp.asarray([1, 3, 1, 1])] = xp.asarray(np.array([10, 20, 30, 40], dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(x), [0, 40, 0, 20, 0])
    y = xp.zeros(5)
    y[[1, 1, 3]] += 1.0
    z = np.zeros(5)
    z[[1, 1, 3]] += 1.0
    np.testing.assert_array_equal(np.asarray(y), z)
    big = np.random.default_rng(0).integers(0, 1000, 5000)
    vals = np.arange(5000.0)
    t = xp.zeros(1000)
    t[xp.asarray(big)] = xp.asarray(vals)
    n = np.zeros(1000)
    n[big] = vals
    np.testing.assert_array_equal(np.asarray(t), n)


def test_writes_stay_lazy_and_do_not_touch_other_arrays():
    base = xp.asarray(np.arange(6.0))
    alias = base * 1
    x = base * 1
    x[[0, 5]] = -1.0
    np.testing.assert_array_equal(np.asarray(base), np.arange(6.0))
    np.testing.assert_array_equal(np.asarray(alias), np.arange(6.0))
    np.testing.assert_array_equal(np.asarray(x), [-1, 1, 2, 3, 4, -1])


def test_gradients_through_writes_match_pytorch():
    a = np.random.default_rng(0).standard_normal((4, 3))
    b = np.random.default_rng(1).standard_normal((2, 3))
    for make in (lambda v: xp.asarray(v), lambda v: xp.ones(v.shape, dtype=xp.float64) * xp.asarray(v)):
        w, v = make(a), make(b)
        w.requires_grad_()
        v.requires_grad_()
        y = w * 2
        y[xp.asarray([3, 1])] = v * 3
        y[:, [0]] = y[:, [0]] * 5
        xp.sin(y).sum().backward()
        tw, tv = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        ty = tw * 2
        ty[torch.tensor([3, 1])] = tv * 3
        ty[:, [0]] = ty[:, [0]] * 5
        torch.sin(ty).sum().backward()
        np.testing.assert_allclose(np.asarray(w.grad), tw.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(v.grad), tv.grad.numpy(), rtol=1e-12)


def test_write_errors_are_numpys():
    x = xp.zeros(4)
    with pytest.raises(ValueError, match="could not be broadcast"):
        x[[0, 1]] = xp.asarray([1.0, 2.0, 3.0])
    with pytest.raises(IndexError, match="out of bounds"):
        x[[4]] = 1.0
    with pytest.raises(IndexError, match="integer"):
        x[xp.asarray([0.5])] = 1.0
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.array([True, False])] = xp.asarray([1.0])
    with pytest.raises(RuntimeError, match="requires grad"):
        w = xp.zeros(3).requires_grad_()
        w[[0]] = 1.0
