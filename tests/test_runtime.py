"""The CPU runtime: compile, disk cache, and compiler failures."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import lazyarr as xp
from lazyarr import settings
from lazyarr.runtime import cpu
from lazyarr.runtime.devices import get_device


def compile_fresh(source, name="k"):
    return get_device("cpu").compile(name, source)


def test_compiled_kernels_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    src = "#include <stdint.h>\nvoid k(const uintptr_t* args) { ((double*)args[0])[0] = 42.0; }\n"
    compile_fresh(src)
    files = list((tmp_path / "kernels").iterdir())
    assert len(files) == 1 and files[0].suffix == ".so"
    assert oct(os.stat(tmp_path).st_mode & 0o777) == "0o700"
    calls = []
    real = subprocess.run
    # this thread's calls only: an optimised recompile of an earlier test's kernel may run in the background
    here = threading.current_thread()
    monkeypatch.setattr(subprocess, "run",
                        lambda *a, **k: (threading.current_thread() is here and calls.append(a)) or real(*a, **k))
    compile_fresh(src)
    assert calls == []   # the second compile is a cache hit


def test_a_second_process_starts_warm(tmp_path):
    code = ("import lazyarr as xp, time; t = time.perf_counter(); (xp.arange(5.0) * 3.25 + 17).realize(); "
            "print(time.perf_counter() - t)")
    env = {**os.environ, "LAZYARR_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    n = len(list((tmp_path / "kernels").iterdir()))
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    assert len(list((tmp_path / "kernels").iterdir())) == n


def test_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(settings, "cache", False)
    compile_fresh("#include <stdint.h>\nvoid k(const uintptr_t* args) {}\n")
    assert not (tmp_path / "cache").exists()


def test_failed_compile_raises_with_source_and_message_and_leaves_no_entry(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    src = "void k(const uintptr_t* args) { this is not C; }\n"
    with pytest.raises(cpu.CompileError) as e:
        compile_fresh(src)
    assert e.value.source == src and "error" in e.value.log
    assert "this is not C" in str(e.value)
    assert [p.name for p in (tmp_path / "kernels").iterdir()] == []


def test_missing_compiler_says_what_to_install(monkeypatch):
    monkeypatch.setattr(settings, "cc", "no-such-compiler-xyz")
    with pytest.raises(cpu.CompileError, match="install"):
        compile_fresh("void k(void) {}\n", name="k_missing")


def test_buffers_are_aligned_host_memory():
    t = (xp.arange(100.0) + 1).realize()
    assert t.numpy().ctypes.data % 64 == 0


def test_a_setting_changed_mid_process_serves_nothing_made_under_another(monkeypatch):
    """Every cache (schedules, kernel sources, programs, compiled objects) keys on settings.config():
    the same graph scheduled again after a code setting changed gets code made under the new one."""
    import numpy as np
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((128, 128), dtype=np.float32), rng.standard_normal((128, 128), dtype=np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    optimised = (x @ y).schedule()[0].source
    monkeypatch.setattr(settings, "opts", False)   # no register tiles or vectors
    plain = (x @ y).schedule()[0].source
    assert plain != optimised
    np.testing.assert_allclose((x @ y).numpy(), a @ b, rtol=1e-4, atol=1e-4)
    monkeypatch.setattr(settings, "transcendentals", "native")
    assert "expf(" in (xp.exp(x) * 3).schedule()[0].source
    monkeypatch.undo()
    assert (x @ y).schedule()[0].source == optimised


def test_the_collector_is_paused_while_realizing_and_left_as_the_user_set_it(monkeypatch):
    import gc
    from lazyarr import arrays
    seen = []
    original = arrays._realize

    def watching(*args, **kwargs):
        seen.append(gc.isenabled())
        return original(*args, **kwargs)
    monkeypatch.setattr(arrays, "_realize", watching)
    assert gc.isenabled()
    x = xp.asarray(np.arange(5.0))
    np.testing.assert_array_equal((x * 2).numpy(), np.arange(5.0) * 2)
    assert seen == [False] and gc.isenabled()
    with pytest.raises(np.linalg.LinAlgError):   # a realization that raises turns it back on too
        xp.linalg.inv(xp.zeros((3, 3))).numpy()
    assert gc.isenabled()
    gc.disable()   # the user's choice stays
    try:
        (x + 1).numpy()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_pool_kept_from_while_the_collector_frees_buffers():
    """`keep` (a captured step keeps storage for itself) walks the CPU device's pool; a buffer the
    collector frees meanwhile (one in a reference cycle) gives its memory back into it, under a size
    it may have no entry for: the walk must not break ("dictionary changed size during iteration").
    Here each collection during the walk frees one such buffer."""
    import gc
    from lazyarr import dtypes
    from lazyarr.runtime.device import Buffer
    dev = get_device("cpu")
    kept = Buffer(dev, 3, dtypes.float32)
    kept.ensure_allocated()
    for size in (5, 6, 7):   # entries for the walk to go through
        b = Buffer(dev, size, dtypes.float32)
        b.ensure_allocated()
        b.release()
    freed = [Buffer(dev, size, dtypes.float32) for size in range(1001, 1041)]   # sizes the pool has no entry for
    for b in freed:
        b.ensure_allocated()

    def free_one(phase, info):
        if phase == "start" and freed:
            freed.pop().release()
    threshold = gc.get_threshold()
    gc.callbacks.append(free_one)
    gc.set_threshold(1)
    try:
        dev.keep(kept.storage)
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(free_one)
    assert len(freed) < 39   # (collections ran during the walk)
    assert all(kept.storage.ctypes.data != address for entries in dev._pool.values() for _, address in entries)


@pytest.mark.parametrize("in_c", [True, False])
def test_a_dying_buffer_gives_its_memory_back_to_the_pool_unless_viewed(in_c, monkeypatch):
    """A buffer that dies owning memory gives it back to its device's pool (in C where the node
    table's module is built: `device.release_storage`; else Buffer.release), and the next buffer of
    its size takes it; memory a NumPy array still views, and memory past the pool's limit, is not
    kept; a buffer that lent its memory (it owns it no more) gives nothing back."""
    from lazyarr import dtypes
    from lazyarr.runtime import device
    from lazyarr.runtime.device import Buffer
    if not in_c:
        monkeypatch.setattr(device, "release_storage", Buffer.release)
    dev = get_device("cpu")
    size = 12347   # (a size no other test allocates)

    def made() -> Buffer:
        b = Buffer(dev, size, dtypes.float32)
        b.ensure_allocated()
        return b

    def pooled() -> list[int]:
        return [a for _, a in dev._pool.get(4 * size, [])]
    b = made()
    address, before = b.storage.ctypes.data, dev._pooled_bytes
    del b
    assert pooled()[-1:] == [address] and dev._pooled_bytes == before + 4 * size
    c = made()
    assert c.storage.ctypes.data == address and address not in pooled()   # (taken back out: a stack)
    view = c.numpy()   # a NumPy view of the memory outlives the buffer
    del c
    assert address not in pooled() and view.ctypes.data == address
    b, other = made(), Buffer(dev, size, dtypes.float32)
    other.take_storage(b)
    address = other.storage.ctypes.data
    del b   # (it owns nothing now)
    assert address not in pooled()
    del other
    assert pooled()[-1:] == [address]
    made()   # (takes it again)
    monkeypatch.setattr(dev, "_pool_limit", 0)   # (a full pool)
    b = made()
    address = b.storage.ctypes.data
    del b
    assert all(a != address for entries in dev._pool.values() for _, a in entries)


def _opencl():
    from lazyarr.runtime.opencl import opencl_devices
    try:
        return get_device("opencl") if opencl_devices() else None
    except Exception:
        return None


def test_opencl_memory_comes_back_from_its_pool_by_size_class():
    """A buffer's device memory goes back to the pool when it dies and serves the next buffer of
    its size class (no clCreateBuffer a realization); memory a launch plan keeps is never handed
    out again, nor memory given back while launches are recorded; values stay right throughout."""
    from lazyarr.runtime import device as device_module
    from lazyarr.runtime.opencl import size_class
    dev = _opencl()
    if dev is None:
        pytest.skip("no OpenCL platform")
    for n in (1, 255, 256, 4096, 4097, 5000, 1 << 20, (1 << 20) + 1):
        c = size_class(n)
        assert n <= c <= max(256, n * 5 // 4) and size_class(c) == c
    n = 12347   # (a size class no other test's buffers share)
    x = xp.asarray(np.arange(float(n)), device=dev)
    for i in range(8):   # (the first few runs of a new structure hold their buffers a little longer)
        np.testing.assert_array_equal((x * i + 1).numpy(), np.arange(float(n)) * i + 1)
    cls = size_class(8 * n)
    assert dev._free_memory.get(cls), ("the buffers of the loop went back to the pool", dev._pooled_bytes,
                                       dev._pool_limit, device_module.recording_launches)
    pooled = dev._free_memory[cls][-1]
    y = x * 5.0 + 1
    y.realize()
    assert y._buffer().storage is pooled   # the next buffer of its class takes it
    dev.keep(pooled)
    del y
    assert all(b is not pooled for b in dev._free_memory.get(cls, []))
    device_module.recording_launches.append(None)
    try:
        before = {id(b) for pooled in dev._free_memory.values() for b in pooled}
        (x * 7.0).numpy()   # (may take pooled memory, gives none back)
        assert {id(b) for pooled in dev._free_memory.values() for b in pooled} <= before
    finally:
        device_module.recording_launches.pop()


def test_thread_count_follows_omp_num_threads_unless_lazyarr_threads_is_set():
    """dask's workers (and batch systems) set OMP_NUM_THREADS=1 so that each process keeps to one
    core: lazyarr's kernels follow it as NumPy's BLAS does; LAZYARR_THREADS wins; a value that is
    not a positive integer is OpenMP's business, not a count for lazyarr."""
    from tests.helpers import child_env
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cores = len(os.sched_getaffinity(0))
    code = "from lazyarr import settings; print(settings.threads)"
    for env, want in (({"OMP_NUM_THREADS": "1"}, 1), ({"OMP_NUM_THREADS": "3"}, 3),
                      ({"OMP_NUM_THREADS": "1", "LAZYARR_THREADS": "2"}, 2), ({"OMP_NUM_THREADS": "4,2"}, cores),
                      ({"OMP_NUM_THREADS": "0"}, cores)):
        base = {k: v for k, v in child_env(root).items() if k not in ("OMP_NUM_THREADS", "LAZYARR_THREADS")}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env={**base, **env})
        assert out.returncode == 0, out.stderr
        assert int(out.stdout) == want, (env, out.stdout)
