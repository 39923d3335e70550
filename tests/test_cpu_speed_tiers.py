"""Tiered and parallel compilation on the CPU (lazyarr.runtime.cpu, executor.compile_all), in the
order of the cpu module's docstring: the optimised object from the disk cache by graph key, large
kernels optimised at once, small kernels on the fast compiler first and optimised in the
background once hot, and a schedule's kernels compiled in parallel."""
import subprocess
import threading
import time

import numpy as np
import pytest

import lazyarr as xp
from lazyarr import settings
from lazyarr.compiler import codegen
from lazyarr.runtime import cpu, cpu_compiler, cpu_program, executor

needs_tcc = pytest.mark.skipif(not cpu.fast_compiler_available("tcc"), reason="tcc is not installed")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty disk cache and no compiled kernels in memory."""
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    monkeypatch.setattr(executor, "_programs", {})
    return tmp_path


def program_of(t):
    items = t.schedule()
    assert len(items) == 1
    return executor.get_program(items[0])


def small(seed=0.25):
    x = xp.asarray(np.arange(64, dtype=np.float32))
    return x * 1.5 + seed


@needs_tcc
def test_small_kernels_start_on_the_fast_compiler_and_turn_optimised_once_hot(fresh, monkeypatch):
    monkeypatch.setattr(settings, "hot_calls", 2)
    t = small(0.125)
    prog = program_of(t)
    assert isinstance(prog, cpu.TieredProgram) and prog.tier == "fast"
    for _ in range(2):
        t = small(0.125).realize()
    assert prog.tier == "fast" and prog.future is None     # hot, but a run never waits on codegen it did not need
    small(0.125).realize()                                 # the next run starts the optimised compile
    assert prog.wait() == "opt"
    np.testing.assert_array_equal(small(0.125).numpy(), np.arange(64, dtype=np.float32) * 1.5 + 0.125)
    assert prog.tier == "opt"


@needs_tcc
def test_a_kernel_is_hot_by_the_work_its_calls_add_up_to_or_by_many_calls(fresh, monkeypatch):
    # a small kernel run a few times is not worth gcc's ~115 ms (a test suite runs thousands such);
    # one whose calls add up to hot_work operations is, before hot_calls calls
    monkeypatch.setattr(settings, "hot_calls", 6)
    t = small(0.375)
    prog = program_of(t)
    assert prog.work * 5 < settings.hot_work
    for _ in range(5):
        small(0.375).realize()
    assert not prog.hot() and prog.future is None
    for _ in range(2):   # the sixth call makes it hot; a run then starts the optimised compile
        small(0.375).realize()
    assert prog.future is not None and prog.wait() == "opt"
    monkeypatch.setattr(settings, "hot_work", prog.work * 2)   # two calls do that much
    big = cpu_compiler.TieredProgram(prog.device, prog.name, prog.ast, prog.transcendentals, prog.current)
    big.object_for(())
    assert not big.hot()
    big.object_for(())
    assert not big.hot()
    big.object_for(())
    assert big.hot()


@needs_tcc
def test_a_shape_generic_kernel_counts_the_work_of_its_sizes(fresh, monkeypatch):
    # its loops' lengths are arguments: a call on 16000 elements does 1000 times the work of one
    # on 16, and only the large calls make it hot
    monkeypatch.setattr(settings, "hot_calls", 10 ** 9)

    def scaled(n):
        return xp.sin(xp.asarray(np.linspace(-3, 3, n, dtype=np.float32)) * 0.5)
    prog = program_of(scaled(16))
    assert prog.generic and program_of(scaled(16000)) is prog
    small_sizes, large_sizes = scaled(16).schedule()[0].sizes, scaled(16000).schedule()[0].sizes
    monkeypatch.setattr(settings, "hot_work", prog.work * 16000 * 3)

    def counted(sizes, calls):
        p = cpu_compiler.TieredProgram(prog.device, prog.name, prog.ast, prog.transcendentals, prog.current)
        for _ in range(calls):
            p.object_for(sizes)
        return p
    assert not counted(small_sizes, 1000).hot()
    assert not counted(large_sizes, 3).hot() and counted(large_sizes, 4).hot()
    for _ in range(5):   # and the executor asks for its optimised code
        np.testing.assert_allclose(scaled(16000).numpy(), np.sin(np.linspace(-3, 3, 16000, dtype=np.float32) * 0.5),
                                   rtol=1e-6, atol=1e-6)
    assert prog.future is not None and prog.wait() == "opt"


@needs_tcc
def test_a_generic_kernel_run_often_with_one_set_of_sizes_is_compiled_for_them(fresh, monkeypatch):
    monkeypatch.setattr(settings, "hot_calls", 2)
    monkeypatch.setattr(cpu_compiler, "SPECIALISE_CALLS", 4)

    def row_sums(n, m):
        a = np.arange(n * m, dtype=np.float32).reshape(n, m)
        return xp.sum(xp.asarray(a) * 2, axis=1), (a * 2).sum(axis=1)
    prog = program_of(row_sums(12, 10)[0])
    sizes = row_sums(12, 10)[0].schedule()[0].sizes
    assert prog.generic and not prog.special
    for _ in range(12):   # hot: the generic optimised object, then the one for these sizes
        t, want = row_sums(12, 10)
        np.testing.assert_array_equal(t.numpy(), want)
        prog.wait()
    assert set(prog.special) == {sizes}
    t, want = row_sums(12, 10)
    np.testing.assert_array_equal(t.numpy(), want)
    # its code has the sizes as constants (the generic object reads them as arguments n0, n1, ...)
    assert " n0 = " not in prog.special[sizes].source and " n0 = " in prog.current.source
    t, want = row_sums(7, 30)   # other sizes: the same kernel, its generic object
    assert program_of(t) is prog
    np.testing.assert_array_equal(t.numpy(), want)


@needs_tcc
def test_a_generic_kernel_of_much_work_a_call_is_compiled_for_its_sizes_after_few_calls(fresh, monkeypatch):
    # a never-realized loop's segment kernel runs a few times a run, each call much work: waiting
    # for SPECIALISE_CALLS calls kept it on generic code for twenty runs
    def sines(n):
        a = np.linspace(0, 3, n * 40, dtype=np.float32).reshape(n, 40)
        return xp.sum(xp.sin(xp.asarray(a) * 3), axis=1), np.sin(a * 3).sum(axis=1)
    t, want = sines(50)
    prog, sizes = program_of(t), t.schedule()[0].sizes
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-5)
    assert prog.generic and not prog.special
    per_call = prog.work * max(sizes)
    monkeypatch.setattr(cpu_compiler, "SPECIALISE_WORK", 3 * per_call)
    calls = 0
    while not prog.special and calls < 8:   # due at the third call (whose work reaches it), then compiled
        t, want = sines(50)
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-5)
        calls += 1
        prog.wait()
    assert set(prog.special) == {sizes} and calls <= 4 < cpu_compiler.SPECIALISE_CALLS
    t, want = sines(50)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-5)


def test_sizes_are_due_for_their_own_code_once_whichever_rule_comes_first(fresh, monkeypatch):
    # the work rule fires at the second call, the call rule at the fourth: one compile, not two
    a = np.linspace(0, 1, 600, dtype=np.float32).reshape(20, 30)
    t = xp.sum(xp.sin(xp.asarray(a)), axis=1)
    prog, sizes = program_of(t), t.schedule()[0].sizes
    assert prog.generic
    per_call = prog.work * max(sizes)
    monkeypatch.setattr(cpu_compiler, "SPECIALISE_WORK", 2 * per_call)
    monkeypatch.setattr(cpu_compiler, "SPECIALISE_CALLS", 4)
    prog.counts.clear()
    prog.due.clear()
    for _ in range(6):
        prog._count(sizes, per_call)
    assert prog.due == [sizes]


@pytest.mark.parametrize("weight", ["array", "quotient"])
def test_a_reduction_of_compared_values_compiles_for_its_sizes(fresh, weight):
    # a one-hot sum (a loss's backward): its optimised code for fixed sizes packs the comparisons
    # into a vector of bools, which gcc has no type for (a silent compile failure each time it was hot)
    rng = np.random.default_rng(1)
    y, g, s = rng.integers(0, 10, 64), rng.random((64, 10), dtype=np.float32), rng.random(10, dtype=np.float32) + 1
    w = xp.asarray(g) / xp.asarray(s) if weight == "quotient" else xp.asarray(g)
    t = xp.sum(xp.astype(xp.asarray(y)[:, None] == xp.arange(10), xp.float32) * w, axis=0)
    want = ((y[:, None] == np.arange(10)).astype(np.float32) * (g / s if weight == "quotient" else g)).sum(0)
    item = t.schedule()[0]
    prog = executor.get_program(item)
    assert prog.generic
    # compiled for its sizes as a hot kernel is (raises the compiler's error), then what the run below calls
    prog.special[item.sizes] = prog.device.optimise_later(
        prog.name, cpu_compiler.bind_sizes(prog.ast, item.sizes), prog.transcendentals).result()
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)


def test_a_failed_compile_for_sizes_is_not_asked_again(fresh, monkeypatch):
    x = xp.asarray(np.ones((6, 5), np.float32))
    item = xp.sum(x * 2, axis=1).schedule()[0]
    prog = executor.get_program(item)
    assert prog.generic
    asked = []

    def failing(name, ast, transcendentals):
        from concurrent.futures import Future
        f = Future()
        f.set_exception(RuntimeError("no"))
        asked.append(name)
        return f
    monkeypatch.setattr(prog.device, "optimise_later", failing)
    prog.future = prog.future or failing("generic", None, None)   # (its generic object's compile, already asked)
    for _ in range(5):
        obj, specialised, waiting = prog.for_plan(item.sizes)
        assert obj is prog.current and not specialised
    assert not waiting and asked.count(prog.name) == 1 and item.sizes in prog.failed


@needs_tcc
def test_the_first_tier_selects_without_calls(fresh):
    """tcc inlines nothing: the first tier's where, maximum and minimum are macros over ?:, not the
    optimised tier's branch-free blends through memcpy; both give NumPy's answers, NaN included."""
    a = np.array([1.0, np.nan, -2.0, 0.0, 3.5, -0.0], np.float32)
    b = np.array([0.5, 1.0, np.nan, -0.0, 4.0, 0.0], np.float32)
    t = xp.where(xp.asarray(a) > 0, xp.maximum(xp.asarray(a), xp.asarray(b)), xp.minimum(xp.asarray(a), xp.asarray(b)))
    prog = program_of(t)
    assert prog.tier == "fast" and "#define lz_where_float32" in prog.current.source
    assert "__builtin_memcpy" not in prog.current.source
    want = np.where(a > 0, np.maximum(a, b), np.minimum(a, b))
    np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(np.signbit(t.numpy()), np.signbit(want))


def test_large_kernels_compile_optimised_at_once(fresh, monkeypatch):
    monkeypatch.setattr(settings, "fast_compile_work", 1 << 20)
    a = xp.asarray(np.ones((1024, 1024), dtype=np.float32))
    prog = program_of(xp.sum(a * 2, axis=1))
    assert isinstance(prog, cpu.CPUProgram) and "lz_load_float32x8" in prog.source


def test_without_the_fast_compiler_every_kernel_is_optimised(fresh, monkeypatch):
    monkeypatch.setattr(settings, "fast_cc", "no-such-fast-compiler")
    assert isinstance(program_of(small(0.375)), cpu.CPUProgram)
    monkeypatch.setattr(settings, "fast_cc", "tcc")
    monkeypatch.setattr(settings, "tiered", False)
    assert isinstance(program_of(small(0.625)), cpu.CPUProgram)


@needs_tcc
def test_a_fast_compile_failure_falls_back_to_gcc(fresh, monkeypatch):
    monkeypatch.setattr(cpu_compiler, "FAST_CFLAGS", ["-shared", "-no-such-tcc-flag"])
    prog = program_of(small(0.875))
    assert isinstance(prog, cpu.TieredProgram)
    np.testing.assert_array_equal(small(0.875).numpy(), np.arange(64, dtype=np.float32) * 1.5 + 0.875)


def test_the_optimised_object_is_found_by_graph_key_without_codegen(fresh, monkeypatch):
    monkeypatch.setattr(settings, "tiered", False)
    want = np.arange(64, dtype=np.float32) * 1.5 + 0.75
    np.testing.assert_array_equal(small(0.75).numpy(), want)     # compiled, cached under the graph's key
    monkeypatch.setattr(executor, "_programs", {})
    monkeypatch.setattr(settings, "tiered", True)

    def no_codegen(*args, **kwargs):
        raise AssertionError("codegen ran for a kernel in the disk cache")
    monkeypatch.setattr(codegen, "generate", no_codegen)
    t = small(0.75)
    prog = executor.get_program(t.schedule()[0])
    # the cached object runs (a shape-generic kernel's wrapped to be compiled later for its sizes)
    assert isinstance(prog, cpu.CPUProgram) or (isinstance(prog, cpu.TieredProgram) and prog.tier == "opt")
    np.testing.assert_array_equal(t.numpy(), want)


def test_graph_keys_differ_by_graph_and_codegen_settings(monkeypatch):
    a = small(0.5).schedule()[0].ast
    b = small(0.5 + 2 ** -10).schedule()[0].ast
    assert cpu.kernel_key(a, "opt", None) == cpu.kernel_key(a, "opt", None)
    assert cpu.kernel_key(a, "opt", None) != cpu.kernel_key(b, "opt", None)
    assert cpu.kernel_key(a, "opt", None) != cpu.kernel_key(a, "opt", "native")
    assert cpu.kernel_key(a, "opt", None) != cpu.kernel_key(a, "fast", None)
    key = cpu.kernel_key(a, "opt", None)
    monkeypatch.setattr(settings, "opts", False)
    assert cpu.kernel_key(a, "opt", None) != key


def test_a_schedules_kernels_compile_in_parallel(fresh, monkeypatch):
    monkeypatch.setattr(settings, "tiered", False)
    monkeypatch.setattr(settings, "threads", 2)
    monkeypatch.setattr(executor, "_pool", executor.ThreadPoolExecutor(max_workers=2))
    running, peak, lock = [0], [0], threading.Lock()
    real = subprocess.run

    def counting(*args, **kwargs):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            time.sleep(0.05)
            return real(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1
    monkeypatch.setattr(subprocess, "run", counting)
    x = xp.asarray(np.arange(64, dtype=np.float32))
    outs = [xp.sum(x * (i + 2), axis=0) + xp.max(x) * i for i in range(3)]
    xp.realize(*outs)
    assert peak[0] >= 2
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.numpy(), (np.arange(64) * (i + 2)).sum() + 63 * i)


@needs_tcc
def test_fast_tier_results_match_the_optimised_ones(fresh, monkeypatch):
    monkeypatch.setattr(settings, "hot_calls", 10 ** 9)
    a = np.random.default_rng(0).standard_normal((65, 129)).astype(np.float32)
    a[3, 5] = np.nan
    A = xp.asarray(a)
    np.testing.assert_array_equal(xp.max(A, axis=1).numpy(), a.max(1))
    np.testing.assert_allclose(xp.tanh(A @ A.T).numpy(), np.tanh(a @ a.T), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xp.sum(A, axis=0).numpy(), a.sum(0), rtol=1e-5, atol=1e-4)


def test_the_thread_count_is_a_launch_argument_bounded_by_the_setting(monkeypatch):
    a = np.random.default_rng(1).standard_normal((512, 4096)).astype(np.float32)
    src = xp.sum(xp.asarray(a), axis=1).schedule()[0].source
    assert "num_threads(lz_threads)" in src and "lz_threads = (int)args[2]" in src
    monkeypatch.setattr(settings, "adaptive_threads", False)
    for n in (1, 2, 3):
        monkeypatch.setattr(settings, "threads", n)
        assert cpu_program.threads_now() == n
        np.testing.assert_allclose(xp.sum(xp.asarray(a), axis=1).numpy(), a.sum(1), rtol=1e-4, atol=1e-4)
    monkeypatch.setattr(settings, "adaptive_threads", True)
    monkeypatch.setattr(settings, "threads", 2)
    assert cpu_program.threads_now() in (1, 2)
    monkeypatch.setattr(settings, "threads", 1)
    assert cpu_program.threads_now() == 1
