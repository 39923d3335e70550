"""Kernels of several outputs: elementwise values of one shape that read common inputs, or one
another elementwise, are stored by one kernel (`schedule.output_groups`)."""
import numpy as np
from hypothesis import given, settings, strategies as st

import lazyarr as xp
from lazyarr.compiler.schedule import create_schedule
from tests.helpers import assert_close


def schedule(*ts):
    return create_schedule([(t.uop, t.device) for t in ts]).items


def arrays(n, shape=(5, 7), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


def test_an_adam_update_is_one_kernel_of_three_outputs():
    g, m, v, p = arrays(4)
    v = np.abs(v)
    tg, tm, tv, tp = (xp.asarray(a) for a in (g, m, v, p))
    m2 = tm + (tg - tm) * 0.1
    v2 = tv + (tg * tg - tv) * 0.001
    p2 = tp - m2 / (xp.sqrt(v2) + 1e-8)
    items = schedule(m2, v2, p2)
    assert len(items) == 1 and items[0].outputs == 3
    xp.realize(m2, v2, p2)
    nm = m + (g - m) * np.float32(0.1)
    nv = v + (g * g - v) * np.float32(0.001)
    assert_close(m2, nm, rtol=1e-6)
    assert_close(v2, nv, rtol=1e-6)
    assert_close(p2, p - nm / (np.sqrt(nv) + np.float32(1e-8)), rtol=1e-5, atol=1e-6)


def test_updates_in_place_over_many_steps_match_numpy():
    # the new values may take the storage of inputs nothing needs afterwards: only an input that
    # one output alone reads lends it its storage
    g0, m, v, p = arrays(4, (33,), seed=1)
    tm, tv, tp = xp.asarray(m), xp.asarray(np.abs(v)), xp.asarray(p)
    nm, nv, np_ = m.copy(), np.abs(v), p.copy()
    for step in range(5):
        g = g0 * (step + 1)
        tg = xp.asarray(g)
        tm = tm + (tg - tm) * 0.1
        tv = tv + (tg * tg - tv) * 0.01
        tp = tp - tm / (xp.sqrt(tv) + 1e-3)
        xp.realize(tm, tv, tp)
        nm = nm + (g - nm) * np.float32(0.1)
        nv = nv + (g * g - nv) * np.float32(0.01)
        np_ = np_ - nm / (np.sqrt(nv) + np.float32(1e-3))
    assert_close(tm, nm, rtol=1e-5)
    assert_close(tv, nv, rtol=1e-5)
    assert_close(tp, np_, rtol=1e-4, atol=1e-5)


def test_an_input_read_by_several_outputs_lends_none_of_them_its_storage():
    a, b = (xp.asarray(x) for x in arrays(2, (64,)))
    items = schedule(a * 2, a + b)
    assert len(items) == 1
    item = items[0]
    ka, kb = (next(k for k, buf in enumerate(item.buffers) if buf is t.uop.arg) for t in (a, b))
    assert item.inplace == ((1, kb),)   # b, read by a + b alone, may lend it its storage; a lends none
    assert ka != kb


def test_a_value_read_through_a_movement_is_not_stored_by_its_readers_kernel():
    x = arrays(1, (6, 6))[0]
    a = xp.asarray(x) * 2
    b = a.T + 1
    assert len(schedule(a, b)) == 2
    xp.realize(a, b)
    assert_close(a, x * 2)
    assert_close(b, (x * 2).T + 1)


def test_a_kernel_between_that_reads_a_member_keeps_the_kernels_apart():
    # b shares x with a, but r (between them) reads a: a's kernel must run before r's
    x = arrays(1, (6, 6))[0]
    a = xp.asarray(x) * 2
    r = a.T.contiguous()
    b = xp.asarray(x) + r.T
    assert len(schedule(a, b)) == 3
    xp.realize(a, b)
    assert_close(a, x * 2)
    assert_close(b, x + x * 2)


def test_values_of_other_shapes_or_with_reductions_stay_apart():
    x, y = arrays(2, (4, 5))
    tx, ty = xp.asarray(x), xp.asarray(y)
    assert len(schedule(tx * 2, (tx + ty)[:2])) == 2
    assert len(schedule(tx * 2, xp.sum(tx * ty, axis=1))) == 2


UNARY = [("neg", lambda t: -t, lambda a: -a), ("exp", xp.exp, np.exp), ("abs", xp.abs, np.abs),
         ("square", lambda t: t * t, lambda a: a * a)]
BINARY = [("add", lambda s, t: s + t, np.add), ("mul", lambda s, t: s * t, np.multiply),
          ("max", xp.maximum, np.maximum), ("sub", lambda s, t: s - t, np.subtract)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 8), st.integers(0, 8)),
                min_size=2, max_size=6), st.integers(1, 40))
def test_random_elementwise_outputs_realized_together_match_numpy(program, n):
    # values built from shared inputs and from one another, realized together, against NumPy
    rng = np.random.default_rng(n)
    inputs = [rng.standard_normal(n) for _ in range(3)]
    ours, theirs = [xp.asarray(a) for a in inputs], list(inputs)
    for u, b, i, j in program:
        i, j = i % len(ours), j % len(ours)
        _, f, nf = UNARY[u]
        _, g, ng = BINARY[b]
        ours.append(g(f(ours[i]), ours[j]))
        theirs.append(ng(nf(theirs[i]), theirs[j]))
    outs = ours[3:]
    xp.realize(*outs)
    for t, expected in zip(outs, theirs[3:]):
        assert_close(t, expected, rtol=1e-12, atol=1e-300)
