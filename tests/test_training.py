"""Optimizers, random numbers, nn.functional, and training loops: against NumPy, PyTorch where it
is installed, and the memory bound of a long loop."""
import gc
import math
import resource

import numpy as np
import pytest

import lazyarr as xp
import lazyarr.nn.functional as F
from lazyarr import optim, random

torch = pytest.importorskip("torch") if False else None
try:
    import torch
except ImportError:   # the PyTorch comparisons are skipped without it
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


# ---- random ----

def test_seed_reproduces_the_stream_and_calls_differ():
    random.seed(3)
    a = random.uniform(shape=(100,)).numpy().copy()
    b = random.uniform(shape=(100,)).numpy().copy()
    random.seed(3)
    np.testing.assert_array_equal(random.uniform(shape=(100,)).numpy(), a)
    assert not np.array_equal(a, b)


def test_distributions_have_the_right_moments_and_ranges():
    random.seed(0)
    u = random.uniform(-2.0, 3.0, (200_000,)).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.02
    n = random.normal(1.0, 2.0, (200_000,), dtype=xp.float32).numpy()
    assert n.dtype == np.float32 and abs(n.mean() - 1.0) < 0.02 and abs(n.std() - 2.0) < 0.02
    i = random.integers(-3, 4, (100_000,)).numpy()
    assert set(np.unique(i)) == set(range(-3, 4))
    counts = np.bincount(i + 3)
    assert counts.min() > 0.9 * counts.mean()


def test_permutation_is_a_permutation():
    random.seed(1)
    p = random.permutation(500).numpy()
    assert sorted(p) == list(range(500)) and not np.array_equal(p, np.arange(500))
    x = xp.arange(10.0) * 3
    np.testing.assert_array_equal(np.sort(random.permutation(x).numpy()), np.arange(10.0) * 3)


def test_random_kernels_compile_once_across_calls():
    from lazyarr.runtime import executor
    random.uniform(shape=(33,)).realize()
    before = len(executor._programs)
    for _ in range(5):
        random.uniform(shape=(33,)).realize()
    assert len(executor._programs) == before


def test_random_errors():
    with pytest.raises(ValueError):
        random.integers(5, 5)
    with pytest.raises(TypeError):
        random.uniform(shape=(2,), dtype=xp.int32)


# ---- nn.functional ----

def test_functional_against_numpy():
    x = np.random.default_rng(0).standard_normal((4, 6))
    t = xp.asarray(x)
    np.testing.assert_allclose(F.relu(t).numpy(), np.maximum(x, 0))
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(F.softmax(t).numpy(), e / e.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(t).numpy(), np.log(e / e.sum(1, keepdims=True)), rtol=1e-12)
    labels = np.array([1, 0, 5, 2])
    np.testing.assert_array_equal(F.one_hot(xp.asarray(labels), 6).numpy(), np.eye(6, dtype=np.int64)[labels])
    ce = -np.log(e / e.sum(1, keepdims=True))[np.arange(4), labels].mean()
    np.testing.assert_allclose(float(F.cross_entropy(t, xp.asarray(labels))), ce, rtol=1e-12)
    gelu = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    np.testing.assert_allclose(F.gelu(t).numpy(), gelu, rtol=1e-12)


def test_dropout_zeroes_and_scales():
    random.seed(2)
    out = F.dropout(xp.ones(100_000), p=0.25).numpy()
    kept = out != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(out[kept], 1 / 0.75)
    np.testing.assert_array_equal(F.dropout(xp.ones(5), p=0.5, training=False).numpy(), np.ones(5))


@needs_torch
def test_functional_matches_pytorch_including_gradients():
    x = np.random.default_rng(1).standard_normal((5, 7))
    labels = np.array([0, 6, 3, 3, 1])
    for name, ours, theirs in [
        ("gelu", lambda t: F.gelu(t), lambda t: torch.nn.functional.gelu(t)),
        ("gelu_tanh", lambda t: F.gelu(t, "tanh"), lambda t: torch.nn.functional.gelu(t, approximate="tanh")),
        ("softmax", lambda t: F.softmax(t), lambda t: torch.softmax(t, -1)),
        ("log_softmax", lambda t: F.log_softmax(t), lambda t: torch.log_softmax(t, -1)),
        ("relu", F.relu, torch.relu),
    ]:
        t = xp.asarray(x, requires_grad=True)
        tt = torch.tensor(x, requires_grad=True)
        w = np.linspace(-1, 1, x.size).reshape(x.shape)
        xp.sum(ours(t) * xp.asarray(w)).backward()
        (theirs(tt) * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(ours(xp.asarray(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=name)
        np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
    t, tt = xp.asarray(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    F.cross_entropy(t, xp.asarray(labels), label_smoothing=0.1).backward()
    torch.nn.functional.cross_entropy(tt, torch.tensor(labels), label_smoothing=0.1).backward()
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-10)


# ---- optimizers ----

START = np.array([[1.0, -2.0], [0.5, 3.0]])
# parameters made every way a user makes them, 0-d ones included: (lazyarr's, its start value)
PARAMETERS = {
    "asarray": (lambda: xp.asarray(START, requires_grad=True), START),
    "ones": (lambda: xp.ones((2, 2)).requires_grad_(), np.ones((2, 2))),
    "full_0d": (lambda: xp.full((), 0.75).requires_grad_(), np.array(0.75)),
    "asarray_scalar": (lambda: xp.asarray(-1.25, requires_grad=True), np.array(-1.25)),
    "zeros_1": (lambda: xp.zeros(1).requires_grad_(), np.zeros(1)),
}


def run_ours(opt_cls, make=PARAMETERS["asarray"][0], steps=5, **kw):
    w, c = make(), xp.ones(())   # c: a constant of the value of some parameters, not one of them
    opt = opt_cls([w], **kw)
    for _ in range(steps):
        opt.zero_grad()
        xp.sum(xp.sin(w) * w + w * w * c).backward()
        opt.step()
    return w.numpy()


def run_torch(opt_cls, start=START, steps=5, **kw):
    w = torch.tensor(start, requires_grad=True)
    opt = opt_cls([w], **kw)
    for _ in range(steps):
        opt.zero_grad()
        (torch.sin(w) * w + w * w).sum().backward()
        opt.step()
    return w.detach().numpy()


OPTIMIZERS = [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.1, weight_decay=0.01)),
    ("Adam", dict(lr=0.1)), ("Adam", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1)),
    ("AdamW", dict(lr=0.1, weight_decay=0.1)),
]


@needs_torch
@pytest.mark.parametrize("name,kw", OPTIMIZERS)
def test_optimizers_match_pytorch(name, kw):
    np.testing.assert_allclose(run_ours(getattr(optim, name), **kw), run_torch(getattr(torch.optim, name), **kw),
                               rtol=1e-10, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("made", [k for k in PARAMETERS if k != "asarray"])
@pytest.mark.parametrize("name,kw", OPTIMIZERS[::2] + [OPTIMIZERS[-1]])
def test_optimizers_match_pytorch_on_parameters_made_every_way(made, name, kw):
    make, start = PARAMETERS[made]
    ours = run_ours(getattr(optim, name), make, **kw)
    assert ours.shape == start.shape
    np.testing.assert_allclose(ours, run_torch(getattr(torch.optim, name), start, **kw), rtol=1e-10, atol=1e-12)


def test_sgd_step_by_hand():
    w = xp.asarray([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.5)
    xp.sum(w * w).backward()
    opt.step()
    np.testing.assert_allclose(w.numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert w.grad is None


def test_optimizer_errors():
    with pytest.raises(ValueError):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError):
        optim.SGD([xp.ones(2)], lr=0.1)
    with pytest.raises(ValueError):
        optim.Adam([xp.ones(2, dtype=xp.float32).requires_grad_()], betas=(1.5, 0.9))


def test_a_training_step_compiles_once():
    from lazyarr.runtime import executor
    w = xp.asarray(np.ones((8, 4)), requires_grad=True)
    opt = optim.Adam([w], lr=0.01)

    def step():
        opt.zero_grad()
        loss = xp.sum(xp.tanh(xp.asarray(np.ones((3, 8))) @ w))
        loss.backward()
        opt.step()
        return float(loss)
    step(), step()
    before = len(executor._programs)
    for _ in range(5):
        step()
    assert len(executor._programs) == before


@pytest.mark.parametrize("name,kw", [("SGD", dict(momentum=0.9)), ("Adam", {}), ("AdamW", dict(weight_decay=0.1))])
def test_a_learning_rate_schedule_compiles_nothing_new(name, kw):
    """opt.lr changed before every step (a decaying schedule): the same kernels run, with the new
    rate as data, and the parameters match PyTorch's under the same schedule."""
    from lazyarr.runtime import executor
    rates = [0.1 * 0.7 ** i for i in range(6)]
    w = xp.asarray(np.array([[1.0, -2.0], [0.5, 3.0]]), requires_grad=True)
    opt = getattr(optim, name)([w], lr=rates[0], **kw)
    for i, lr in enumerate(rates):
        if i == 2:
            programs = len(executor._programs)
        opt.lr = lr
        opt.zero_grad()
        xp.sum(xp.sin(w) * w + w * w).backward()
        opt.step()
    assert len(executor._programs) == programs
    if torch is not None:
        tw = torch.tensor(np.array([[1.0, -2.0], [0.5, 3.0]]), requires_grad=True)
        topt = getattr(torch.optim, name)([tw], lr=rates[0], **kw)
        for lr in rates:
            for group in topt.param_groups:
                group["lr"] = lr
            topt.zero_grad()
            (torch.sin(tw) * tw + tw * tw).sum().backward()
            topt.step()
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_a_repeated_training_step_hits_the_schedule_cache(monkeypatch):
    """Every step builds the same graph on new buffers: after the first steps (Adam's state appears
    in the second), a step neither schedules nor compiles, and the updates still run in place."""
    from lazyarr.compiler import schedule
    from lazyarr.runtime import executor
    rng = np.random.default_rng(0)
    w = xp.asarray(rng.standard_normal((8, 4)), requires_grad=True)
    opt = optim.Adam([w], lr=0.01)
    data = [xp.asarray(rng.standard_normal((3, 8))) for _ in range(6)]

    def step(x):
        opt.zero_grad()
        loss = xp.sum(xp.tanh(x @ w))
        loss.backward()
        opt.step()
        return float(loss)
    step(data[0]), step(data[1])

    def refuse(*args, **kwargs):
        raise AssertionError("a repeated step was scheduled")
    monkeypatch.setattr(schedule, "_build_schedule", refuse)
    programs, storage = len(executor._programs), w._buffer().storage
    losses = [step(x) for x in data[2:]]
    assert len(executor._programs) == programs and np.isfinite(losses).all()
    assert w._buffer().storage is storage   # the parameter is updated in place


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_long_training_keeps_memory_flat():
    random.seed(0)
    w1 = random.uniform(-0.3, 0.3, (16, 32), dtype=xp.float32).realize().requires_grad_()
    w2 = random.uniform(-0.3, 0.3, (32, 4), dtype=xp.float32).realize().requires_grad_()
    opt = optim.Adam([w1, w2], lr=1e-3)
    x = xp.asarray(np.random.default_rng(0).standard_normal((64, 16)).astype(np.float32))
    y = xp.asarray(np.arange(64) % 4)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(F.relu(x @ w1) @ w2, y)
        loss.backward()
        opt.step()
        return float(loss)
    for _ in range(50):
        step()
    gc.collect()
    start = rss_mb()
    for _ in range(400):
        step()
    gc.collect()
    assert rss_mb() - start < 20, (start, rss_mb())
