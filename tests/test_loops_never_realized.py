"""Loops never realized inside: NumPy's answers, work linear in the number of iterations, and no
internal limit (rewrite fixpoints, recursion) reached by a graph that grows without bound."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lazyarr as xp
from bench.iterative import WORKLOADS, data_for
from lazyarr import settings
from lazyarr.compiler import buffer_views, schedule, walk
from lazyarr.compiler.stages import segment_ends, stage_anchors
from tests.helpers import assert_close

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", WORKLOADS)
def test_a_loop_of_200_iterations_gives_numpys_answer(name):
    fn, data = WORKLOADS[name], data_for(name)
    assert_close(fn(xp, data, 200), fn(np, data, 200), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", WORKLOADS)
def test_a_loop_realized_in_segments_gives_numpys_answer_with_few_schedules(monkeypatch, name):
    # a segment of anchors is realized an anchor at a time the first time its structure comes, and
    # those schedules are cached as the segment's: the same answers, a first run of many anchors in
    # fewer realizations than half of them (the body's segments after the first are one each), a second
    # run in about one realization per segment, and neither schedules anything anew
    realize_module = sys.modules["lazyarr.realize"]
    monkeypatch.setattr(schedule, "_schedule_cache", {})
    monkeypatch.setattr(settings, "schedule_disk", False)
    fn, data = WORKLOADS[name], data_for(name)
    calls, plain, plain_replay = [0], realize_module.schedule_realize, realize_module.replay

    def counting(*args, **kwargs):
        calls[0] += 1
        return plain(*args, **kwargs)

    def counting_replays(*args, **kwargs):   # (a structure that came back runs its prepared launches)
        bound = plain_replay(*args, **kwargs)
        calls[0] += bound is not None
        return bound
    monkeypatch.setattr(realize_module, "schedule_realize", counting)
    monkeypatch.setattr(realize_module, "replay", counting_replays)
    for n, runs in ((200, 2), (300, 1)):
        for run in range(runs):
            out = fn(xp, data, n)
            found = stage_anchors([out.uop], out.device)
            anchors, ends = len(found), segment_ends([f for _, _, f in found])
            calls[0] = 0
            assert_close(out, fn(np, data, n), rtol=1e-9, atol=1e-12)
            if run == 0 and n == 200:   # (an anchor at a time throughout would be one more than the anchors)
                assert anchors < 100 or calls[0] <= anchors // 2, (calls[0], anchors)
            else:   # a call a segment, but for the last one of a loop of a new length: an anchor at a time
                last = ends[-1] - (ends[-2] if len(ends) > 1 else 0)
                assert calls[0] <= len(ends) + 4 + (last if n == 300 else 0), (calls[0], anchors, ends)
    built = [0]
    build = schedule._build_schedule

    def counting_builds(*args, **kwargs):
        built[0] += 1
        return build(*args, **kwargs)
    monkeypatch.setattr(schedule, "_build_schedule", counting_builds)
    fn(xp, data, 300).realize()
    assert built[0] == 0


@pytest.mark.parametrize("name", ["least_squares", "mlp"])
def test_a_loop_never_realized_is_never_walked_whole(monkeypatch, name):
    """The whole graph of a loop realized in stages has no key to compute nor to look up on disk
    (thousands of words, hashed): its walk stops at twice the stage bound, and only the segments
    and the graph over their buffers are walked whole."""
    fn, data = WORKLOADS[name], data_for(name)
    out = fn(xp, data, 200)
    whole = len(out.uop.toposort())
    complete, plain = [], walk.structure_key
    realize_module = sys.modules["lazyarr.realize"]

    def recording(roots, devices, stop_after=0):
        walked = plain(roots, devices, stop_after)
        if not walked.stopped:
            complete.append(len(walked.order))
        return walked
    monkeypatch.setattr(realize_module, "structure_key", recording)
    assert_close(out, fn(np, data, 200), rtol=1e-9, atol=1e-12)
    assert complete and max(complete) < whole / 2, (complete, whole)


def test_a_composed_segment_runs_with_its_own_scalars():
    # the segments' kernels take their scalars as arguments: a composed segment, renumbered to the
    # segment's scalars, runs later segments (other steps, other values) with theirs
    def ema(m, n, start):
        series = m.asarray(np.sin(np.arange(64.0)))
        s = m.zeros(64)
        for i in range(n):
            s = 0.9 * s + (0.1 + 1e-3 * (start + i)) * m.cos(series * (start + i + 1))
        return s
    for start in (0, 7, 100):
        assert_close(ema(xp, 400, start), ema(np, 400, start), rtol=1e-10, atol=1e-12)


def test_a_loop_over_values_made_from_constants_alone_is_cut_into_stages():
    # sin(linspace(...)) reads no buffer: it counts as computed from positions (never stored) only up
    # to POSITIONAL_NODES operations, so the loop's states are anchors (without any, the whole graph
    # was one schedule of ~170 kernels: 1.9 s)
    def heat(m, n):
        u = m.sin(m.linspace(0, np.pi, 64))
        for _ in range(n):
            u = u + 0.2 * (m.roll(u, 1) - 2 * u + m.roll(u, -1))
        return u
    u = heat(xp, 150)
    assert len(stage_anchors([u.uop], u.device)) >= 20
    assert_close(u, heat(np, 150), rtol=1e-12, atol=1e-12)


def test_a_loop_from_a_value_looked_at_first_is_cut_into_stages():
    # the start was realized (printed) before the loop: a value realized on the loop's device is no
    # value "realized elsewhere" whose device is in doubt (every state after it was, and nothing was cut)
    u = xp.cos(xp.linspace(0, 3.0, 96)) * 0.5
    start = float(u[3])
    for _ in range(150):
        u = u + 0.2 * (xp.roll(u, 1) - 2 * u + xp.roll(u, -1))
    assert len(stage_anchors([u.uop], u.device)) >= 20
    want = np.cos(np.linspace(0, 3.0, 96)) * 0.5
    assert start == want[3]
    for _ in range(150):
        want = want + 0.2 * (np.roll(want, 1) - 2 * want + np.roll(want, -1))
    assert_close(u, want, rtol=1e-12, atol=1e-12)


def test_segments_are_cut_where_the_loop_body_repeats():
    body = [11, 12, 13, 14, 15, 16]                      # a body of six anchors
    ends = segment_ends([1, 2] + body * 40 + [7, 8])    # a start, forty iterations, an end
    sizes = [b - a for a, b in zip([0] + ends, ends)]
    assert ends[-1] == 2 + 6 * 40 + 2 and sizes[1:-1] and all(s == 18 for s in sizes[1:-1])   # three bodies each
    # an extra anchor now and then lands in one segment; the ones after it are cut as before
    ends = segment_ends(body * 10 + [99] + body * 10)
    assert all(b - a == 18 for a, b in zip(ends[3:-1], ends[4:-1]))
    assert segment_ends(list(range(40))) == [16, 32, 40]   # no repeat: sixteen at a time
    # a body whose anchors repeat only every fifth iteration (an anchor forced by the levels since
    # the last one): segments of whole periods, all of one structure
    period = [1, 1, 2, 1, 1, 3, 1, 1, 1, 4]             # iterations of anchors 1, 1, (2 1), 1 (3 1) ...
    fingerprints = [9] + period * 30 + [5]
    ends = segment_ends(fingerprints)
    pieces = {tuple(fingerprints[a:b]) for a, b in zip(ends[1:-2], ends[2:-1])}
    assert len(pieces) == 1 and len(ends) > 5, ends
    # a long run without boundaries (a trajectory's writes after the states, or the states before
    # them) is cut by its own commonest fingerprint
    for fingerprints in ([1] * 100 + [2] * 64, [1] * 64 + [2] * 100):
        ends = segment_ends(fingerprints)
        sizes = [b - a for a, b in zip([0] + ends, ends)]
        assert max(sizes) <= 32 and len(ends) >= 8, sizes
    assert segment_ends([5, 5, 5]) == [3] and segment_ends([]) == [0]


def scheduling_work(monkeypatch, fn, data, n):
    """The nodes of every graph scheduled from scratch (schedule cache misses) to compute fn's loop
    of n iterations, from an empty schedule cache."""
    work = []
    build = schedule._build_schedule
    monkeypatch.setattr(schedule, "_schedule_cache", {})
    monkeypatch.setattr(settings, "schedule_disk", False)

    def counting(roots, outputs):
        work.append(len(schedule.UOp(schedule.Ops.SINK, roots[0].dtype, tuple(roots)).toposort()))
        return build(roots, outputs)
    monkeypatch.setattr(schedule, "_build_schedule", counting)
    fn(xp, data, n).realize()
    monkeypatch.setattr(schedule, "_build_schedule", build)
    return sum(work)


@pytest.mark.parametrize("name", WORKLOADS)
def test_doubling_the_iterations_at_most_doubles_the_scheduling_work(monkeypatch, name):
    fn, data = WORKLOADS[name], data_for(name)
    once, twice = scheduling_work(monkeypatch, fn, data, 100), scheduling_work(monkeypatch, fn, data, 200)
    assert twice <= 2 * once + 200, (once, twice)


def test_a_value_read_twice_through_a_reduction_is_computed_once_per_iteration():
    # w is read by the next w and by A @ w: fused, each iteration would double the work below it
    fn, data = WORKLOADS["least_squares"], data_for("least_squares")
    w = fn(xp, data, 12)
    items = w.schedule()
    assert len(items) <= 3 * 12
    assert sum(it.source.count("for (") for it in items) <= 12 * 12


@pytest.mark.parametrize("name", ["least_squares", "power_iteration", "jacobi", "mlp"])
def test_what_one_reduction_alone_reads_is_never_an_anchor(name):
    # a matrix-vector product's products, as large as the matrix: stored, they would be written by
    # one kernel and read once by the next (power iteration: three kernels an iteration, not one)
    from lazyarr.compiler.stages import graph_nodes, summed_once
    from lazyarr.compiler.uop import Ops
    out = WORKLOADS[name](xp, data_for(name), 100)
    anchors = [a for a, _, _ in stage_anchors([out.uop], out.device)]
    summed = summed_once(graph_nodes([out.uop]))
    assert anchors and summed and not [a for a in anchors if a in summed]
    assert not [a for a in anchors if a.op is Ops.MUL and len(a.shape) == 3 and a.shape[-2] > 1]   # (products)


def test_anchors_are_the_values_read_apart_and_levels_apart():
    # a state read shifted (a stencil) or by the next iteration and a product (least squares' w) is
    # stored every iteration: fused, each reader would compute it again; a value read elementwise
    # alone fuses, cut only every MAX_LEVELS levels (never by a lottery of hashes)
    from lazyarr.compiler.stages import MAX_LEVELS
    from lazyarr.compiler.uop import Ops
    n = 60
    u, un = xp.asarray(np.sin(np.linspace(0, 3, 64))), np.sin(np.linspace(0, 3, 64))
    x, xn = xp.asarray(np.linspace(0, 1, 64)), np.linspace(0, 1, 64)
    for _ in range(n):
        u, un = u + 0.2 * (xp.roll(u, 1) - 2 * u + xp.roll(u, -1)), un + 0.2 * (np.roll(un, 1) - 2 * un + np.roll(un, -1))
        x, xn = x * x * 0.5 + x * 0.1, xn * xn * 0.5 + xn * 0.1
    assert len(stage_anchors([u.uop], u.device)) == n - 1   # (every state but the last, the root)
    assert len(stage_anchors([x.uop], x.device)) <= n // (MAX_LEVELS // 3) + 1   # (three levels an iteration)
    w = WORKLOADS["least_squares"](xp, data_for("least_squares"), n)
    anchors = [a for a, _, _ in stage_anchors([w.uop], w.device)]
    assert len(anchors) == n - 1 and all(a.op is Ops.SUB and a.shape == (5,) for a in anchors)
    assert_close(u, un, rtol=1e-12)
    assert_close(x, xn, rtol=1e-12)


def test_a_chain_far_past_the_stage_bound_realizes():
    x = xp.asarray(np.arange(8, dtype=np.float64))
    expected = np.arange(8, dtype=np.float64)
    for i in range(6000):
        x = x * 1.0001 + (0.5 if i % 2 else -0.25)
        expected = expected * 1.0001 + (0.5 if i % 2 else -0.25)
    assert_close(x, expected, rtol=1e-12)


def test_stages_do_not_change_gradients():
    start = np.array([0.5, -0.25])
    y, dy = start.copy(), np.ones(2)   # forward mode in NumPy: y and dy/dw
    for _ in range(300):
        y = np.tanh(y * 1.01 + 0.01)
        dy = dy * 1.01 * (1 - y * y)
    expected = 2 * y * dy
    old = settings.stage_nodes
    for limit in (old, 0):   # staged (the graph is past the bound) and scheduled whole
        settings.stage_nodes = limit
        try:
            w = xp.asarray(start, requires_grad=True)
            y = w
            for _ in range(300):
                y = xp.tanh(y * 1.01 + 0.01)
            xp.sum(y * y).backward()
            assert_close(w.grad, expected, rtol=1e-10)
        finally:
            settings.stage_nodes = old


def test_a_loop_over_an_array_made_of_constants_is_stored_when_it_grows():
    """A game of life on np.zeros: every value is computed from positions and constants, which
    recomputation usually gets for free; nested rolls read it at exponentially many indexings, so
    past a size such a value gets a buffer like any other (it did not: rangeify never finished)."""
    g = xp.zeros((8, 8))
    g[1, 2] = g[2, 3] = g[3, 1] = g[3, 2] = g[3, 3] = 1
    ref = g.numpy().copy()
    for _ in range(6):
        n = sum(xp.roll(xp.roll(g, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1)) - g
        g = ((n == 3) | ((g == 1) & (n == 2))).astype(xp.float64)
        m = sum(np.roll(np.roll(ref, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1)) - ref
        ref = ((m == 3) | ((ref == 1) & (m == 2))).astype(np.float64)
    np.testing.assert_array_equal(g.numpy(), ref)


STAGES_OF_A_LOOP = """
import lazyarr as xp
from lazyarr.compiler.stages import graph_nodes, stage_anchors
state, traj = xp.asarray([1.0, 0.0, 0.5]), xp.zeros((40, 3))
for i in range(40):
    x, v, z = state[0], state[1], state[2]
    state = state + 0.01 * xp.stack([v, -x - 0.1 * v, -z])
    traj[i] = state
order = graph_nodes([traj.uop])
where = {u: k for k, u in enumerate(order)}
print([where[a] for a, _, _ in stage_anchors([traj.uop], traj.device)])
"""


def test_a_graph_is_cut_into_the_same_stages_in_every_process():
    # the stages' anchors hash structure: with Python's per-process hashes (strings, enums, ids),
    # each run cut the graph elsewhere, into other kernels, and compiled kernels no run had before
    runs = [subprocess.run([sys.executable, "-c", STAGES_OF_A_LOOP], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONHASHSEED": seed}, cwd=ROOT) for seed in ("1", "2", "3")]
    for r in runs:
        assert r.returncode == 0, r.stderr
    anchors = [r.stdout for r in runs]
    assert anchors[0] == anchors[1] == anchors[2] and len(eval(anchors[0])) > 3, anchors


@pytest.mark.parametrize("budget", [1 << 20, 1 << 30])
def test_a_long_loop_on_large_arrays_lets_go_of_what_it_no_longer_reads(monkeypatch, budget):
    """Past settings.stage_keep_bytes, a stage's buffers that later segments do not read are freed
    (a loop never realized would otherwise hold every iteration's buffers until it is done): an
    array recorded mid-loop whose graph reads them computes them again, with NumPy's values, and
    an array the user holds keeps its buffer."""
    monkeypatch.setattr(settings, "stage_keep_bytes", budget)
    n = 100_000   # (800 KB a buffer; an anchor every iteration: the state is read shifted)
    x, m = xp.asarray(np.linspace(0.0, 1.0, n)), xp.zeros(n)
    xn, mn = np.linspace(0.0, 1.0, n), np.zeros(n)
    held = []
    for i in range(100):
        m = 0.9 * xp.roll(m, 1) + 0.1 * xp.sin(x * (i + 1))
        mn = 0.9 * np.roll(mn, 1) + 0.1 * np.sin(xn * (i + 1))
        if i == 50:
            snapshot, snapshot_n = m * 2.0, mn * 2.0   # (not realized: its graph reads the history)
        if i % 25 == 0:
            held.append(m)
    assert_close(m, mn, rtol=1e-12)
    marked = [u for u in snapshot.uop.toposort() if u._view is not None and u.shape == (n,)]
    if budget < 100 * n * 8:   # 100 iterations of buffers do not fit: a few segments' worth stay
        assert len(marked) < 12, len(marked)
    else:
        assert len(marked) > 40, len(marked)
    assert all(h.uop._view is not None or buffer_views.is_buffer_view(h.uop) for h in held)
    assert_close(snapshot, snapshot_n, rtol=1e-12)
    assert_close(held[0], 0.1 * np.sin(xn), rtol=1e-12)   # (the first iteration's m)
