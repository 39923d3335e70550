"""The disk cache cannot break a run (lazyarr.runtime.cache): damaged, foreign and unloadable entries
are rebuilt, untrusted folders are not used, the size stays under its limit, writes are atomic.

Each scenario runs its processes with a cache folder of its own under tmp_path (and TMPDIR there
too, where the private fallback folder goes), on the CPU; the OpenCL scenarios run their processes
on OpenCL themselves and skip without a platform. The file runs on the CPU pass only
(tests/conftest.py: COMPILER_ONLY)."""
import hashlib
import json
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

from lazyarr import settings
from lazyarr.runtime import cache, cache_eviction
from tests.conftest import DEVICE

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# a few kernels (elementwise, a reduction, a broadcast); float64 outputs
SCRIPT = r"""
import json, numpy as np, lazyarr as xp
x = xp.asarray(np.linspace(0, 1, 300))
outs = [x * 3.25 + 17, xp.sum(xp.exp(x) * 2), xp.maximum(x - 0.5, 0.0) * 4]
print("KERNELS " + json.dumps(sorted({i.name for o in outs for i in o.schedule()})))
print("RESULT " + json.dumps([np.asarray(o).tolist() for o in outs]))
"""


def expected():
    x = np.linspace(0, 1, 300)
    return [x * 3.25 + 17, np.sum(np.exp(x) * 2), np.maximum(x - 0.5, 0.0) * 4]


def run(root, code=SCRIPT, device=None, tmp=None, **env):
    """Run `code` in a fresh process with the cache at `root` (and its temporary files in `tmp`,
    default beside root); the completed process."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LAZYARR_", "POCL_CACHE_DIR"))}
    tmp = str(tmp or os.path.join(os.path.dirname(str(root)), "tmp"))
    os.makedirs(tmp, exist_ok=True)
    full = {**base, "LAZYARR_CACHE_DIR": str(root), "LAZYARR_DEVICE": device or DEVICE, "TMPDIR": tmp,
            "LAZYARR_DEBUG": "1", **env}
    proc = subprocess.run([sys.executable, "-W", "default", "-c", code], env=full, cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    return proc


def results_of(proc):
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    return json.loads(line[len("RESULT "):])


def assert_correct(proc):
    for got, want in zip(results_of(proc), expected()):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def entries(root):
    """Every cache entry under root (PoCL's folder aside)."""
    return sorted(os.path.join(d, f) for d, _, files in os.walk(root) if "pocl" not in os.path.relpath(d, root)
                  for f in files)


def sound(path):
    with open(path, "rb") as f:
        return cache.unseal(f.read()) is not None


def files_size(root):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files)


def seal(body):
    return body + cache.MAGIC + hashlib.sha256(body).digest()


def opencl_available():
    try:
        from lazyarr.runtime.opencl import opencl_devices
        return bool(opencl_devices())
    except Exception:
        return False


# the OpenCL scenarios run their processes on OpenCL whatever the pass: once, on the CPU pass
_OPENCL_SKIP = ("runs its processes on OpenCL itself, on the CPU pass" if DEVICE != "cpu" else
                None if opencl_available() else "no OpenCL platform")
needs_opencl = pytest.mark.skipif(_OPENCL_SKIP is not None, reason=str(_OPENCL_SKIP))


# ---- damaged and foreign entries -------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["truncate", "empty", "corrupt"])
def test_damaged_entries_are_rebuilt_not_loaded(tmp_path, damage):
    root = tmp_path / "cache"
    assert_correct(run(root))
    paths = entries(root)
    assert paths and all(sound(p) for p in paths)
    for p in paths:
        data = bytearray(open(p, "rb").read())
        if damage == "truncate":
            data = data[:len(data) // 2]
        elif damage == "empty":
            data = bytearray()
        else:   # same size, a block in the middle flipped
            mid = len(data) // 2
            data[mid:mid + 64] = bytes(b ^ 0xA5 for b in data[mid:mid + 64])
        open(p, "wb").write(bytes(data))
    proc = run(root)
    assert_correct(proc)
    assert proc.stdout.count("is truncated, corrupted or not a lazyarr cache entry: removed, building it again") \
        == len(paths), proc.stdout
    assert "could not be built" not in proc.stderr   # the C node table was rebuilt, not given up on
    assert entries(root) == paths and all(sound(p) for p in paths)
    proc = run(root)   # and the rebuilt entries are used as they are
    assert_correct(proc)
    assert "removed" not in proc.stdout


@pytest.mark.cpu_only
def test_a_foreign_object_with_an_entrys_name_is_not_loaded(tmp_path):
    """A shared object lazyarr did not write (here one with the kernels' own function names, that
    writes a wrong value) is removed, not run."""
    root = tmp_path / "cache"
    proc = run(root)
    names = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("KERNELS ")][0][8:])
    source = "#include <stdint.h>\n" + "".join(
        f"void {n}(const uintptr_t* a) {{ ((double*)a[0])[0] = -12345.0; }}\n" for n in names)
    foreign = tmp_path / "foreign.so"
    subprocess.run([settings.cc, "-shared", "-fPIC", "-x", "c", "-", "-o", str(foreign)], input=source, text=True,
                   check=True)
    kernels = [p for p in entries(root) if os.sep + "kernels" + os.sep in p]
    assert kernels
    for p in kernels:
        open(p, "wb").write(foreign.read_bytes())
    proc = run(root)
    assert_correct(proc)
    assert proc.stdout.count("not a lazyarr cache entry") == len(kernels)
    assert all(sound(p) for p in kernels)


@pytest.mark.cpu_only
def test_an_entry_that_dlopen_refuses_is_rebuilt(tmp_path):
    """A sound entry (its hash matches) that is no loadable object: dlopen's error leads to a
    compile, for kernels and for the C node table, not to a traceback from cffi; a schedule that
    does not decode is scheduled again."""
    root = tmp_path / "cache"
    run(root)
    paths = entries(root)
    for p in paths:
        open(p, "wb").write(seal(b"not a shared object"))
    proc = run(root)
    assert_correct(proc)
    assert proc.stdout.count("could not be loaded") == len(paths), proc.stdout
    assert "could not be built" not in proc.stderr
    assert any(p.endswith(".schedule") for p in paths)
    least = {".schedule": 100, ".hash": 64}   # (a source hash: 64 hex digits, `cache.source_hash`)
    assert all(sound(p) and os.path.getsize(p) > least.get(os.path.splitext(p)[1], 1000) for p in paths)


@needs_opencl
def test_opencl_binaries_damaged_or_refused_are_rebuilt_and_pocl_caches_inside(tmp_path):
    root = tmp_path / "cache"
    assert_correct(run(root, device="opencl"))
    bins = [p for p in entries(root) if os.sep + "opencl" + os.sep in p]
    assert bins and all(sound(p) for p in bins)
    assert entries(root / "pocl") or any(os.scandir(root / "pocl"))   # PoCL's own cache lives in ours
    for i, p in enumerate(bins):
        open(p, "wb").write(seal(b"not a binary" * 100) if i % 2 else open(p, "rb").read()[:1000])
    proc = run(root, device="opencl")
    assert_correct(proc)
    assert proc.stdout.count("removed, building it again") == len(bins)
    assert all(sound(p) for p in bins)


# ---- trust ------------------------------------------------------------------------------------------

def assert_moved_to_private(proc, root, tmp_path):
    assert_correct(proc)
    assert "RuntimeWarning" in proc.stderr and "not loaded" in proc.stderr and str(root) in proc.stderr
    assert entries(root) == []   # nothing read from or written to the untrusted folder
    fallback = tmp_path / "tmp" / f"lazyarr-{os.geteuid()}"
    assert entries(fallback) and stat.S_IMODE(os.stat(fallback).st_mode) == 0o700


def test_a_cache_folder_others_can_write_to_is_not_used(tmp_path):
    root = tmp_path / "cache"
    root.mkdir()
    os.chmod(root, 0o777)
    (root / "kernels").mkdir()
    proc = run(root)
    assert "writable by group and others" in proc.stderr
    assert_moved_to_private(proc, root, tmp_path)


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a folder's owner needs root")
def test_a_cache_folder_of_another_user_is_not_used(tmp_path):
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    os.chown(root, 12345, 12345)
    proc = run(root)
    assert "owned by uid 12345" in proc.stderr
    assert_moved_to_private(proc, root, tmp_path)


def test_an_unsafe_fallback_folder_gives_a_fresh_private_one(tmp_path):
    root = tmp_path / "cache"
    root.mkdir()
    os.chmod(root, 0o777)
    fallback = tmp_path / "tmp" / f"lazyarr-{os.geteuid()}"
    fallback.mkdir(parents=True)
    os.chmod(fallback, 0o777)   # somebody made the usual fallback's name first
    proc = run(root)
    assert_correct(proc)
    assert "RuntimeWarning" in proc.stderr and entries(fallback) == [] and entries(root) == []


def test_an_unwritable_cache_folder_warns_and_works(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    proc = run(blocker / "cache", tmp=tmp_path / "tmp")
    assert_correct(proc)
    assert "RuntimeWarning" in proc.stderr and "not usable" in proc.stderr


# ---- size -------------------------------------------------------------------------------------------

MANY = r"""
import json, os, sys, numpy as np, lazyarr as xp
root, n = sys.argv[1], int(sys.argv[2])
def listing():
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}
x = xp.asarray(np.linspace(0, 1, 300).astype(np.float32))
written, before = [], listing()
for i in range(n):   # six steps, each adding or subtracting as i's bits say: kernels of one size, each of its own
    y, want = x, np.linspace(0, 1, 300)   # structure (a constant's value is an argument, not the code's)
    for bit in range(6):
        y, want = (y * 0.5 + 17, want * 0.5 + 17) if i >> bit & 1 else (y * 0.5 - 17, want * 0.5 - 17)
    got = y.numpy()
    assert np.allclose(got, want), i
    now = listing()
    written.append(sorted(now - before))
    before = now
print("WRITTEN " + json.dumps(written))
"""


def written_per_kernel(proc):
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("WRITTEN ")]
    return json.loads(line[len("WRITTEN "):])


def test_eviction_keeps_the_cache_under_its_limit_newest_first(tmp_path):
    root = tmp_path / "cache"
    if DEVICE == "cpu":
        limit, n = 120 << 10, 60   # ~3 KB per first-tier kernel
    else:   # an entry's size is the driver's (PoCL ~110 KB, NVIDIA ~1.3 KB): measured, room for ~3
        probe = written_per_kernel(run_many(tmp_path / "probe", 1, 1 << 40))[0]
        limit, n = 3 * sum(os.path.getsize(p) for p in probe) + 1024, 6
    proc = run_many(root, n, limit)
    written = written_per_kernel(proc)
    assert sum(os.path.getsize(p) for p in written[-1]) * n > limit   # so that it had to evict
    assert "least recently used" in proc.stdout
    assert files_size(root) <= limit
    newest = [p for ks in written[-2:] for p in ks]
    oldest = [p for p in written[0] if os.sep + "pocl" + os.sep not in p]
    assert newest and all(os.path.exists(p) for p in newest)
    assert oldest and not any(os.path.exists(p) for p in oldest)


def run_many(root, n, limit, device=None):
    return run(root, MANY.replace("sys.argv[1], int(sys.argv[2])", f"{str(root)!r}, {n}"), device=device,
               LAZYARR_CACHE_LIMIT=str(limit))


@needs_opencl
def test_pocl_cache_counts_in_the_limit(tmp_path):
    root = tmp_path / "cache"
    limit = 360 << 10
    proc = run_many(root, 5, limit, device="opencl")
    written = written_per_kernel(proc)
    pocl_first = [p for p in written[0] if os.sep + "pocl" + os.sep in p]
    assert pocl_first, written[0]   # PoCL wrote into lazyarr's folder
    assert files_size(root) <= limit
    assert not any(os.path.exists(p) for p in pocl_first)   # its oldest programs went too
    assert any(os.path.exists(p) for p in written[-1] if os.sep + "pocl" + os.sep in p)


def test_the_least_recently_used_entries_go_first(tmp_path, monkeypatch):
    """In one process: an old entry that is looked up again is kept; untouched old ones go."""
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(settings, "cache_limit", 0)   # no limit while the old entries are made
    paths = []
    for i in range(10):
        paths.append(cache.cached_file("kernels", cache.cache_key(str(i)), ".so",
                                       lambda p: open(p, "wb").write(b"x" * 1000)))
        os.utime(paths[-1], (1_000_000 + i, 1_000_000 + i))   # written long ago, in order
    monkeypatch.setattr(settings, "cache_limit", 10_000)
    monkeypatch.setattr(cache, "_verified", {})   # a new process: nothing verified yet
    assert cache.lookup("kernels", cache.cache_key("0"), ".so") == paths[0]   # used now
    cache.cached_file("kernels", cache.cache_key("new"), ".so", lambda p: open(p, "wb").write(b"y" * 3000))
    mine = tmp_path / "cache" / "kernels" / "notes.txt"   # not an entry's name: not the cache's to remove
    mine.write_bytes(b"n" * 20_000)
    os.utime(mine, (1, 1))
    assert cache.enforce_limit() <= 10_000 * cache_eviction.EVICT_TO
    assert os.path.exists(paths[0]) and not os.path.exists(paths[1]) and os.path.exists(paths[9])
    assert mine.exists()


def test_a_warm_lookup_hashes_each_entry_once_per_process(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    path = cache.cached_file("kernels", "k", ".so", lambda p: open(p, "wb").write(b"z" * 5000))
    monkeypatch.setattr(cache, "_verified", {})
    calls = []
    real = cache.unseal
    monkeypatch.setattr(cache, "unseal", lambda data: calls.append(1) or real(data))
    for _ in range(5):
        assert cache.lookup("kernels", "k", ".so") == path
    assert len(calls) == 1
    open(path, "r+b").truncate(100)   # changed under the process: checked again, and removed
    assert cache.lookup("kernels", "k", ".so") is None and not os.path.exists(path)


def test_the_limit_setting_takes_suffixes(monkeypatch):
    for text, want in [("123", 123), ("500M", 500 << 20), ("1.5G", 3 << 29), ("64k", 64 << 10), ("2GiB", 2 << 30)]:
        monkeypatch.setenv("LAZYARR_CACHE_LIMIT", text)
        assert settings._env_bytes("LAZYARR_CACHE_LIMIT", 0) == want
    monkeypatch.setenv("LAZYARR_CACHE_LIMIT", "lots")
    with pytest.raises(ValueError, match="LAZYARR_CACHE_LIMIT"):
        settings._env_bytes("LAZYARR_CACHE_LIMIT", 0)
    assert settings.cache_limit > 0


# ---- atomic writes ----------------------------------------------------------------------------------

class Interrupted(BaseException):
    pass


@pytest.mark.parametrize("error", [OSError, Interrupted])
def test_the_atomic_writer_leaves_nothing_behind_on_failure(tmp_path, error):
    target = tmp_path / "entry.so"
    target.write_bytes(b"old")

    def fails(path):
        with open(path, "wb") as f:
            f.write(b"half of an ent")
        raise error("the compiler died")
    with pytest.raises(error):
        cache.atomic_write(str(target), fails)
    assert sorted(os.listdir(tmp_path)) == ["entry.so"] and target.read_bytes() == b"old"
    cache.atomic_write(str(target), b"new")
    assert sorted(os.listdir(tmp_path)) == ["entry.so"] and target.read_bytes() == b"new"


@pytest.mark.parametrize("aside", ["process", "thread"])
def test_the_size_check_while_working_runs_in_a_child_process(tmp_path, monkeypatch, aside):
    """The check at a process's first write scans the whole cache (about a second for a large one):
    in a child process, so the interpreter lock stays with the user's code; on a thread where no
    process can be started. Either way the least recently used entries go."""
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(settings, "cache_limit", 0)   # no limit while the old entries are made
    old = [cache.cached_file("kernels", cache.cache_key(str(i)), ".so", lambda p: open(p, "wb").write(b"x" * 1000))
           for i in range(20)]
    for i, p in enumerate(old):
        os.utime(p, (1_000_000 + i, 1_000_000 + i))
    monkeypatch.setattr(settings, "cache_limit", 10_000)
    monkeypatch.setattr(cache, "_pending", {})   # a new process: its first write checks
    monkeypatch.setattr(cache, "_checks", [])
    if aside == "thread":
        def refuse(*args, **kwargs):
            raise OSError("no processes left")
        monkeypatch.setattr(subprocess, "Popen", refuse)
    new = cache.cached_file("kernels", cache.cache_key("new"), ".so", lambda p: open(p, "wb").write(b"y" * 3000))
    (check,) = cache._checks
    if aside == "process":
        assert isinstance(check, subprocess.Popen) and check.wait(60) == 0
    else:
        check.join(60)
    assert os.path.exists(new) and os.path.exists(old[-1]) and not os.path.exists(old[0])
    assert files_size(tmp_path / "cache") <= 10_000 * cache_eviction.EVICT_TO


def test_files_being_written_do_not_count_in_the_size(tmp_path, monkeypatch):
    """A file being written (lazyarr's temporary file, PoCL's compile scratch, which is larger than
    its programs) is not the cache's yet: a check during a compile evicted the newest entries to
    make room for it (CI on PoCL). Stale ones (a writer that died) are removed."""
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(settings, "cache_limit", 0)
    entries = [cache.cached_file("kernels", cache.cache_key(str(i)), ".so", lambda p: open(p, "wb").write(b"x" * 1000))
               for i in range(10)]
    pocl = tmp_path / "cache" / "pocl"
    pocl.mkdir()
    (pocl / "tempfile_abc").write_bytes(b"t" * 50_000)   # PoCL compiling now
    (tmp_path / "cache" / "kernels" / (cache.TMP_PREFIX + "x.so")).write_bytes(b"t" * 20_000)   # lazyarr writing
    stale = pocl / "tempfile_old"
    stale.write_bytes(b"s" * 1000)
    os.utime(stale, (1, 1))
    monkeypatch.setattr(settings, "cache_limit", 20_000)
    assert cache.enforce_limit() == sum(os.path.getsize(p) for p in entries)   # (each ~1 KB, with its trailer)
    assert all(os.path.exists(p) for p in entries) and not stale.exists() and (pocl / "tempfile_abc").exists()


def test_source_hash_is_the_files_hash_and_follows_their_changes(tmp_path, monkeypatch):
    """`cache.source_hash` (what schedules and kernels keyed by graphs are made by): the sha256 of
    the files with their names, memoised on disk by their sizes and times; a file changed (a new
    size or time) gives a new hash, and a damaged memo is computed again."""
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))
    files = [tmp_path / "a.py", tmp_path / "b.c"]
    files[0].write_text("x = 1\n")
    files[1].write_text("int y;\n")
    paths = [str(f) for f in files]

    def direct():
        h = hashlib.sha256()
        for f in files:
            h.update(f.name.encode() + b"\0" + f.read_bytes())
        return h.hexdigest()
    first = cache.source_hash(paths)
    assert first == direct() == cache.source_hash(paths)
    assert len(list((tmp_path / "cache" / "sources").iterdir())) == 1
    files[0].write_text("x = 22\n")
    second = cache.source_hash(paths)
    assert second == direct() != first
    for memo in (tmp_path / "cache" / "sources").iterdir():   # damaged memos: computed again
        memo.write_bytes(seal(b"not a hash"))
    assert cache.source_hash(paths) == second
    assert second.encode() in [cache.unseal(m.read_bytes()) for m in (tmp_path / "cache" / "sources").iterdir()]
