"""A cached schedule's launches, prepared once (`lazyarr.runtime.prepared`): a structure that keeps
coming back runs its C kernels in one call into C, and gives the answers the executor's launches
give — with outputs taking an argument's storage in place, values held by live arrays kept intact,
scalars changing every run, inputs made every way users make them, and kernels that change their
object (tiers, sizes) on the way. On OpenCL the same loops run prepared too, each kernel enqueued
by the prepared pass (`PreparedLaunches._enqueue`): the same answers, the same counts."""
import numpy as np
import pytest

import lazyarr as xp
from lazyarr import settings
from lazyarr.runtime import executor, prepared
from tests.helpers import assert_close


@pytest.fixture
def counted(monkeypatch):
    """How many realizations ran as prepared launches and how many through the executor."""
    counts = {"prepared": 0, "executor": 0}
    run_prepared, run_executor = prepared.PreparedLaunches.run, executor.run

    def counting_prepared(self, *args):
        counts["prepared"] += 1
        return run_prepared(self, *args)

    def counting_executor(items, *args, **kwargs):
        counts["executor"] += 1
        return run_executor(items, *args, **kwargs)
    monkeypatch.setattr(prepared.PreparedLaunches, "run", counting_prepared)
    monkeypatch.setattr(executor, "run", counting_executor)
    return counts


HOST = xp.asarray(0.0).device.host_memory   # the CPU: C kernels through one call list


def ran_prepared(counted, at_least: int) -> bool:
    """Whether at least `at_least` realizations ran prepared."""
    return counted["prepared"] >= at_least


def made(how, values):
    """`values` as a lazyarr array made the way `how` says."""
    if how == "asarray":
        return xp.asarray(values)
    if how == "view":        # a transposed view of a realized array
        return xp.asarray(np.ascontiguousarray(values.T)).T
    if how == "slice":       # a strided slice of a bigger realized array
        big = np.zeros((values.shape[0] * 2,) + values.shape[1:], values.dtype)
        big[::2] = values
        return xp.asarray(big)[::2]
    if how == "program":     # computed lazily by the program
        return xp.asarray(values) * 1.0
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["asarray", "view", "slice", "program"])
def test_a_loop_reading_a_scalar_each_step_runs_prepared_and_matches_numpy(counted, how):
    rng = np.random.default_rng(7)
    start = rng.standard_normal((40, 30))
    x, xn = made(how, start), start.copy()
    got, want = [], []
    for i in range(40):
        c = 0.5 + 0.01 * i              # a new Python scalar each step
        x = xp.tanh(x * c) + 0.1 * x
        xn = np.tanh(xn * c) + 0.1 * xn
        got.append(float(xp.sum(x ** 2)))
        want.append(float(np.sum(xn ** 2)))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert_close(x, xn, rtol=1e-12)
    assert ran_prepared(counted, 30), counted    # after a few steps, no executor launches
    assert counted["executor"] <= 10, counted


def test_outputs_take_storage_in_place_and_held_values_stay_intact(counted):
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal(1000).astype(np.float32)
    x, xn, kept = xp.asarray(x0), x0.copy(), []
    for i in range(30):
        x = x * 0.5 + float(i)          # nothing else reads the old x: its storage may be reused
        xn = xn * np.float32(0.5) + np.float32(i)
        x.realize()
        if i % 7 == 0:                  # ... except where the program keeps it
            kept.append((x, xn.copy()))
    for t, want in kept:
        np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(x.numpy(), xn)
    assert ran_prepared(counted, 20), counted


def test_an_input_read_again_after_the_run_keeps_its_value(counted):
    a0 = np.arange(64, dtype=np.float64)
    a = xp.asarray(a0)
    for i in range(20):
        b = a * 2.0 + i                 # a is read again below: b must not take its storage
        b.realize()
        np.testing.assert_array_equal(b.numpy(), a0 * 2 + i)
        np.testing.assert_array_equal(a.numpy(), a0)
    assert ran_prepared(counted, 10), counted


def test_kernels_that_change_object_on_the_way_give_the_same_answers(counted, monkeypatch):
    # a shape-generic reduction counted at each size, then specialised: the launches are laid out again
    monkeypatch.setattr(settings, "hot_calls", 2)
    rng = np.random.default_rng(5)
    for n in (1000, 1003, 1000, 777, 1000, 1003) * 4:
        v = rng.random(n, dtype=np.float32)
        c = float(rng.random())
        got = float(xp.sum(xp.sin(xp.asarray(v) * c)))
        np.testing.assert_allclose(got, np.sum(np.sin(v * np.float32(c)), dtype=np.float64), rtol=2e-5)
    assert ran_prepared(counted, 10), counted


def test_a_changing_scalar_compiles_nothing_once_prepared(counted):
    x = xp.asarray(np.linspace(0, 1, 5000, dtype=np.float32))
    for c in (0.25, 0.5):
        float(xp.sum(xp.sin(x * c)))
    for c in (0.75, 1.25, 3.0):
        float(xp.sum(xp.sin(x * c)))
    programs = len(executor._programs)
    scales = 0.13 + 0.07 * np.arange(25)   # no value the code bakes in (`uop.BAKED_FLOATS`: 0.5, 1, 2 ...)
    scales = [*scales[:12].tolist(), *scales[12:]]   # Python floats, then NumPy's
    values = [float(xp.sum(xp.sin(x * c))) for c in scales]
    want = [float(np.sum(np.sin(np.linspace(0, 1, 5000, dtype=np.float32) * np.float32(c)))) for c in scales]
    np.testing.assert_allclose(values, want, rtol=2e-5)
    assert len(executor._programs) == programs
    assert ran_prepared(counted, 25), counted


def test_a_schedule_with_a_library_routine_runs_through_the_executor(counted):
    rng = np.random.default_rng(11)
    m = rng.standard_normal((6, 6)) + 6 * np.eye(6)
    for i in range(6):
        v = rng.standard_normal(6)
        got = xp.linalg.solve(xp.asarray(m) + i, xp.asarray(v))
        assert_close(got, np.linalg.solve(m + i, v), rtol=1e-10)
    for _ in range(4):   # a routine's failure still reaches the user, however often it comes back
        with pytest.raises(xp.linalg.LinAlgError):
            xp.linalg.inv(xp.zeros((3, 3)) * 2.0).numpy()


def test_debug_output_takes_the_executor_path(counted, monkeypatch, capsys):
    x = xp.asarray(np.arange(16, dtype=np.float32))
    for i in range(5):
        (x + float(i)).numpy()
    before = counted["prepared"]
    monkeypatch.setattr(settings, "debug", 1)
    np.testing.assert_array_equal((x + 9.0).numpy(), np.arange(16, dtype=np.float32) + 9)
    assert counted["prepared"] == before   # each launch is reported, as debug asks


@pytest.mark.skipif(prepared._buffer_pass is None or not HOST, reason="the buffer pass in C (compiler/buffers_native.c)")
def test_the_buffer_pass_in_c_does_what_the_python_pass_does(counted, monkeypatch):
    """The same program, its structures prepared, with the pass over the buffers in C and in Python
    (`PreparedLaunches._pass`, the reference): the same values, and the same memory given back and
    lent, buffer for buffer: before each call of kernels, every buffer of the run is in the same
    state (owning storage or not, and which memory: addresses numbered by first appearance)."""
    from lazyarr.runtime import launch_plan
    from lazyarr.runtime.cpu_program import address
    from lazyarr.runtime.device import Buffer
    events, current = [], []   # each call of kernels: the run's buffers' states; the run's buffers
    numbers: dict = {}         # memory addresses by first appearance
    call = launch_plan.CallList.__call__

    def state(b):
        if b.storage is None:
            return None
        return b.owns, numbers.setdefault(address(b), len(numbers))

    def calling(calls):
        if current:
            events.append(tuple(state(b) for b in current[-1]))
        return call(calls)
    monkeypatch.setattr(launch_plan.CallList, "__call__", calling)
    run = prepared.PreparedLaunches.run

    def running(self, buffers, *args):
        current.append(buffers)
        try:
            return run(self, buffers, *args)
        finally:
            current.pop()
    monkeypatch.setattr(prepared.PreparedLaunches, "run", running)
    # the Python pass lends and gives back through the methods: counted, to see that the program does both
    methods = {"release": 0, "take_storage": 0}
    for name in methods:
        def counting(*a, _name=name, _method=getattr(Buffer, name)):
            if current:
                methods[_name] += 1
            return _method(*a)
        monkeypatch.setattr(Buffer, name, counting)

    def program():
        rng = np.random.default_rng(11)
        a = xp.asarray(rng.standard_normal(300))           # read every step, never given back
        x = xp.asarray(rng.standard_normal(300)) * 1.0     # computed: its buffer is the run's
        sums, kept = [], []
        y = a * 1.0
        for i in range(25):   # the old x: given back in the pass; the old y: lent to the new y
            x = xp.tanh(x * (0.5 + 0.01 * i)) - xp.mean(x) + a   # (a new scalar every step)
            sums.append(float(xp.sum(x ** 2)))
            y = y * 0.5 + float(i)
            y.realize()
            if i % 6 == 0:
                kept.append(x)                              # a value the program keeps
        return sums, [k.numpy().copy() for k in kept], np.concatenate([x.numpy(), y.numpy()])

    monkeypatch.setattr(settings, "tiered", False)   # (the same objects in both: no tier changing on the way)
    for _ in range(3):   # (every structure cached and prepared, each kernel compiled)
        program()
    events.clear()
    numbers.clear()
    with_c = program(), list(events)
    monkeypatch.setattr(prepared, "_buffer_pass", None)
    events.clear()
    numbers.clear()
    in_python = program(), list(events)
    assert len(with_c[1]) > 25 and with_c[1] == in_python[1]
    assert methods["release"] > 0 and methods["take_storage"] > 0, methods   # (the Python pass's)
    (sums_c, kept_c, x_c), (sums_p, kept_p, x_p) = with_c[0], in_python[0]
    np.testing.assert_allclose(sums_c, sums_p, rtol=1e-13)   # (a kernel's object may change between the runs)
    for got, want in zip(kept_c + [x_c], kept_p + [x_p]):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    assert ran_prepared(counted, 40), counted


@pytest.mark.skipif(prepared._buffer_pass is None, reason="the buffers made in C (compiler/buffers_native.c)")
def test_buffers_made_in_c_are_what_buffer_makes_and_give_their_memory_back():
    from lazyarr import dtypes
    from lazyarr.compiler.uop import native_module
    from lazyarr.runtime.device import Buffer
    cpu = xp.get_device("cpu")   # (the pool is the CPU device's, whatever device the tests run on)
    specs = ((5, dtypes.float64, cpu), (3, dtypes.int8, cpu), (0, dtypes.complex64, cpu))
    made = native_module.new_buffers(specs)
    for b, (size, dtype, device) in zip(made, specs):
        want = Buffer(device, size, dtype)
        assert type(b) is Buffer and all(getattr(b, k) is getattr(want, k) or getattr(b, k) == getattr(want, k)
                                          for k in ("device", "size", "dtype", "storage", "base", "owns", "_real", "_addr"))
    b = made[0].copyin(np.arange(5.0))
    assert b.owns and np.array_equal(b.numpy(), np.arange(5.0))
    storage, pooled = b.storage, cpu._pooled_bytes
    del b, made   # (dies: its memory goes to the pool, through the slots the C side reads)
    assert cpu._pooled_bytes == pooled + 40 and any(entry[0] is storage for entry in cpu._pool[40])
    with pytest.raises(TypeError):
        native_module.new_buffers([(5, dtypes.float64, cpu)])


@pytest.mark.parametrize("native", [True, False])
def test_a_replay_marks_each_realize_point_with_the_view_of_its_new_buffer(monkeypatch, native):
    import sys
    from bench.iterative import WORKLOADS, data_for
    from lazyarr.compiler import buffer_views, schedule
    if not native:
        monkeypatch.setattr(schedule, "_mark_points", None)
    elif schedule._mark_points is None:
        pytest.skip("the realize points marked in C (compiler/buffers_native.c)")
    realize = sys.modules["lazyarr.realize"]
    monkeypatch.setattr(settings, "default_device", "cpu")   # (prepared launches are the CPU's)
    seen = []

    def watching(entry, inputs, order):
        new, views = schedule.bind_and_mark(entry, inputs, order)
        if entry.points:
            seen.append([(order[pos], new[j]) for pos, j in entry.points])
        return new, views
    monkeypatch.setattr(realize, "bind_and_mark", watching)
    fn, data = WORKLOADS["least_squares"], data_for("least_squares")
    for _ in range(3):   # (the segments' structures come back: replayed)
        assert_close(fn(xp, data, 60), fn(np, data, 60), rtol=1e-12)   # (seen keeps the points alive)
    assert seen and all(p._view is not None and buffer_views.view_buffer(p._view) is b and p._view.shape == p.shape
                        for points in seen for p, b in points)
