"""Whole-step capture (`lazyarr.compile_step`): a captured training step gives the results of the
same step run plainly, over many steps, for every optimizer and every way of making parameters;
learning-rate changes, new batches and kept losses work; what a replay cannot honour raises or
records again; a replay runs no schedule."""
import numpy as np
import pytest

import lazyarr as xp
import lazyarr.nn.functional as F
from lazyarr import optim, random
from tests.helpers import watch_launches

RNG = np.random.default_rng(0)
X = RNG.random((640, 16)).astype(np.float32)
Y = RNG.integers(0, 5, 640)
BATCH = 32


def _params(made: str) -> list:
    """A 16-24-5 MLP's parameters, made the way `made` says, as leaves that require gradients."""
    shapes = [(24, 16), (24,), (5, 24), (5,)]
    out = []
    for k, shape in enumerate(shapes):
        n = int(np.prod(shape))
        if made == "asarray":
            p = xp.asarray(np.random.default_rng(k).uniform(-0.3, 0.3, shape).astype(np.float32), requires_grad=True)
        elif made == "creation":   # computed from creation functions, never realized by the user
            p = (xp.sin(xp.reshape(xp.arange(n, dtype=xp.float32), shape) * 0.7 + k) * 0.3).requires_grad_()
        else:
            random.seed(k)
            p = random.uniform(-0.3, 0.3, shape, dtype=xp.float32).requires_grad_()
        out.append(p)
    return out


def _stepper(made: str, name: str, kw: dict):
    params = _params(made)
    opt = getattr(optim, name)(params, **kw)

    def step(xb, yb):
        opt.zero_grad()
        h = F.relu(F.linear(xb, params[0], params[1]))
        logits = F.linear(h, params[2], params[3])
        # the loss spelled out, as users write it: log-softmax by hand and a one-hot comparison
        m = xp.max(logits, axis=1, keepdims=True)
        logp = logits - m - xp.log(xp.sum(xp.exp(logits - m), axis=1, keepdims=True))
        onehot = xp.astype(yb[:, None] == xp.arange(5), xp.float32)
        loss = -xp.sum(onehot * logp) / BATCH
        loss.backward()
        opt.step()
        return loss
    return params, opt, step


def _batch(i: int):
    j = i % (len(X) // BATCH)
    return xp.asarray(X[j * BATCH:(j + 1) * BATCH]), xp.asarray(Y[j * BATCH:(j + 1) * BATCH])


OPTIMIZERS = [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.05, momentum=0.9)),
              ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)),
              ("Adam", dict(lr=1e-2)), ("AdamW", dict(lr=1e-2, weight_decay=0.05))]


@pytest.mark.parametrize("made", ["asarray", "creation", "random"])
@pytest.mark.parametrize("name,kw", OPTIMIZERS)
def test_a_captured_step_gives_the_plain_steps_results(made, name, kw):
    pa, oa, plain = _stepper(made, name, kw)
    pb, ob, step = _stepper(made, name, kw)
    captured = xp.compile_step(step)
    kept = []
    for i in range(50):
        if i == 25:   # a learning-rate change, as a scheduler makes it
            oa.lr *= 0.5
            ob.lr *= 0.5
        want = float(plain(*_batch(i)))
        got = captured(*_batch(i))
        kept.append((want, got))
    assert captured.plans, "the step was never captured"
    for want, got in kept:   # every kept loss has its own value
        np.testing.assert_allclose(float(got), want, rtol=1e-4, atol=1e-6)
    for a, b in zip(pa, pb):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-3, atol=1e-6)
    assert ob.steps == oa.steps == 50


def test_a_replay_runs_no_schedule(monkeypatch):
    _, _, step = _stepper("asarray", "Adam", dict(lr=1e-2))
    captured = xp.compile_step(step)
    for i in range(4):
        captured(*_batch(i))
    assert captured.plans
    runs = []
    watch_launches(monkeypatch, runs.append)
    batches = [_batch(i) for i in range(4, 20)]
    losses = [captured(*b) for b in batches]
    assert not runs
    assert all(np.isfinite(float(x)) for x in losses)


def test_a_new_shape_records_again_and_both_replay():
    pa, _, plain = _stepper("asarray", "SGD", dict(lr=0.1, momentum=0.9))
    pb, _, step = _stepper("asarray", "SGD", dict(lr=0.1, momentum=0.9))
    captured = xp.compile_step(step)
    for i in range(16):
        n = BATCH if i % 2 else BATCH // 2
        j = i % 10
        xb, yb = X[j * BATCH:j * BATCH + n], Y[j * BATCH:j * BATCH + n]
        want = float(plain(xp.asarray(xb), xp.asarray(yb)))
        np.testing.assert_allclose(float(captured(xp.asarray(xb), xp.asarray(yb))), want, rtol=1e-4, atol=1e-6)
    assert len(captured.plans) == 2


def test_arguments_made_lazily_or_as_views_are_bound():
    pa, _, plain = _stepper("asarray", "SGD", dict(lr=0.1))
    pb, _, step = _stepper("asarray", "SGD", dict(lr=0.1))
    captured = xp.compile_step(step)
    big_x, big_y = xp.asarray(X), xp.asarray(Y)
    for i in range(10):
        j = i % 10
        xb = big_x[j * BATCH:(j + 1) * BATCH] * 1.0   # lazy, and a slice of a larger array
        yb = big_y[j * BATCH:(j + 1) * BATCH]
        want = float(plain(xb, yb))
        np.testing.assert_allclose(float(captured(xb, yb)), want, rtol=1e-4, atol=1e-6)


def test_a_parameter_changed_outside_the_step_is_honoured():
    pa, _, plain = _stepper("asarray", "SGD", dict(lr=0.1, momentum=0.9))
    pb, _, step = _stepper("asarray", "SGD", dict(lr=0.1, momentum=0.9))
    captured = xp.compile_step(step)
    for i in range(12):
        if i == 6:
            with xp.no_grad():
                for p in (pa[1], pb[1]):
                    p[...] = 0.25   # set by hand between steps
        want = float(plain(*_batch(i)))
        np.testing.assert_allclose(float(captured(*_batch(i))), want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(pb[1].numpy(), pa[1].numpy(), rtol=1e-4, atol=1e-6)


def test_a_tensor_from_an_enclosing_scope_updated_outside_is_honoured():
    scale = xp.asarray(np.float32(1.0))
    w = xp.asarray(np.ones(4, np.float32), requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = xp.sum((w * scale - x) ** 2)
        loss.backward()
        opt.step()
        return loss
    captured = xp.compile_step(step)
    ref = np.ones(4, np.float32)
    for i in range(10):
        if i == 5:
            scale[...] = 2.0
        s = 1.0 if i < 5 else 2.0
        x = np.full(4, 0.5, np.float32)
        loss = float(captured(xp.asarray(x)))
        np.testing.assert_allclose(loss, np.sum((ref * s - x) ** 2), rtol=1e-5)
        ref = ref - 0.1 * 2 * (ref * s - x) * s
    np.testing.assert_allclose(w.numpy(), ref, rtol=1e-5)


def test_a_graph_built_over_a_parameter_keeps_its_value():
    params, _, step = _stepper("asarray", "SGD", dict(lr=0.1))
    captured = xp.compile_step(step)
    for i in range(5):
        captured(*_batch(i))
    before = params[0].numpy().copy()
    doubled = params[0] * 2   # lazy: reads the parameter as it is now
    captured(*_batch(5))
    assert not np.allclose(params[0].numpy(), before)
    np.testing.assert_array_equal(doubled.numpy(), before * 2)


def test_a_host_read_inside_the_step_is_refused():
    w = xp.asarray(np.ones(3, np.float32), requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = xp.sum((w - x) ** 2)
        if float(loss) > 1:   # a Python branch on a value
            loss = loss * 2
        loss.backward()
        opt.step()
        return loss
    with pytest.raises(xp.CaptureError, match="host"):
        xp.compile_step(step)(xp.asarray(np.zeros(3, np.float32)))


def test_host_data_made_inside_the_step_is_refused():
    w = xp.asarray(np.ones(3, np.float32), requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def step(x):
        opt.zero_grad()
        target = xp.asarray(np.full(3, 0.5, np.float32))   # host data turned into a tensor in the step
        loss = xp.sum((w - x - target) ** 2)
        loss.backward()
        opt.step()
        return loss
    captured = xp.compile_step(step)
    with pytest.raises(xp.CaptureError, match="host data"):
        for _ in range(4):
            captured(xp.asarray(np.zeros(3, np.float32)))


def test_compile_step_errors():
    with pytest.raises(TypeError, match="function"):
        xp.compile_step(3)
    captured = xp.compile_step(lambda x: 3)
    with pytest.raises(TypeError, match="must return tensors"):
        captured(xp.asarray(1.0))
    with pytest.raises(TypeError, match="hashable"):
        xp.compile_step(lambda x: x)([1, 2])


def test_a_traced_function_points_a_step_to_compile_step():
    w = xp.asarray(np.ones(3, np.float32), requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    @xp.function
    def step(x):
        opt.zero_grad()
        loss = xp.sum((w - x) ** 2)
        loss.backward()
        opt.step()
        return loss
    with pytest.raises(TypeError, match="compile_step"):
        step(xp.asarray(np.zeros(3, np.float32)))
