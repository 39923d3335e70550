"""A content-addressed disk cache for compiled kernels that cannot break a run.

Keys. An entry's key is a hash of everything that determines the compiled bytes (source, compiler,
flags); its file is `<root>/<kind>/<key><suffix>` under the cache root (`settings.cache_dir`).

Integrity. Every entry ends in a trailer, MAGIC and the sha256 of the bytes before it, appended
when the entry is written (an ELF loader ignores bytes after the object's sections, so a sealed
shared object dlopens as it is; OpenCL binaries are handed over without it). A process verifies
an entry the first time it looks it up and then knows it by inode and size, so no load hashes an
entry twice. A truncated, corrupted or foreign file (written by anything but this module, or an
entry of a lazyarr from before the trailer) fails, is removed with a note at LAZYARR_DEBUG >= 1,
and the caller builds it again; so is an entry that verifies but will not load (`load_cached`:
dlopen, the import system or the OpenCL driver refuses it).

Writes. `atomic_write` is the one writer of cache files: a temporary file beside the target,
renamed into place, so a reader sees the old file or the whole new one and a failure (a compile
error, an interrupt) leaves neither a partial entry nor the temporary file.

Trust. Entries are code this process runs, so the root must be a directory of this user that
group and others cannot write to. Otherwise (or when it cannot be created) lazyarr warns
(RuntimeWarning) and uses a private folder instead: `<tmp>/lazyarr-<uid>`, created 0700 and checked
(not a link, this user's, closed to others), or a fresh `mkdtemp` folder for the process when that
one is not safe either. Folders inside the root are checked the same way.

Size. The cache keeps to `settings.cache_limit` bytes (LAZYARR_CACHE_LIMIT, default 1 GiB), PoCL's
own cache included (`pocl_cache_dir`: the OpenCL device points POCL_CACHE_DIR there). Lookups never
scan the folder: a process that writes entries checks the total at its first write, again after
each eighth of the limit it writes (in a child process: `cache_eviction`), and at exit, and removes
the least recently used entries (by mtime, which a process touches when it first loads an entry; a
PoCL program's folder as one entry) until the cache is at 80% of the limit. Files being written
(temporary files, PoCL's compile scratch) do not count; those older than an hour (a crashed
writer's) go.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import warnings
from typing import Any, Callable

from lazyarr import settings
from lazyarr.runtime import cache_eviction
from lazyarr.runtime.cache_eviction import TMP_PREFIX, note_trim, trim, units

MAGIC = b"\0lazyarr-sha256:"   # the trailer: MAGIC, then the sha256 digest of the bytes before it
TRAILER = len(MAGIC) + 32

_lock = threading.RLock()
_evicting = threading.Lock()
_roots: dict[str, str] = {}                 # configured root -> the root in use (itself, or a private one)
_kind_dirs: set[str] = set()                # folders inside a root already checked
_verified: dict[str, tuple[int, int]] = {}  # entry path -> (inode, size) verified by this process
_pending: dict[str, int] = {}               # root -> bytes written since its last size check
_exit_check = False
_checks: list[threading.Thread] = []         # the size checks started on threads of their own


def cache_key(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()


def _note(message: str) -> None:
    if settings.debug >= 1:
        print(f"lazyarr cache: {message}")


# ---- where: a trusted root ------------------------------------------------------------------------

def _distrust(st: os.stat_result) -> str | None:
    """Why a folder must not hold code this process loads, or None when it may."""
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if st.st_mode & 0o022:
        who = {0o022: "group and others", 0o020: "group", 0o002: "others"}[st.st_mode & 0o022]
        return f"writable by {who} (mode {oct(st.st_mode & 0o777)})"
    return None


def _private_fallback() -> str:
    """A folder of this user's only: `<tmp>/lazyarr-<uid>`, or a fresh one when that is unsafe (the
    temporary directory is shared: someone else may have made the name first)."""
    path = os.path.join(tempfile.gettempdir(), f"lazyarr-{os.geteuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return tempfile.mkdtemp(prefix="lazyarr-")
    try:
        st = os.lstat(path)
    except OSError:
        return tempfile.mkdtemp(prefix="lazyarr-")
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077:
        return path
    return tempfile.mkdtemp(prefix="lazyarr-")


def _untrusted(path: str, why: str, fresh: bool = False) -> str:
    fallback = tempfile.mkdtemp(prefix="lazyarr-") if fresh else _private_fallback()
    warnings.warn(f"lazyarr: the kernel cache folder {path} is {why}, so its files are not loaded "
                  f"(they would run as code); using the private folder {fallback} instead", RuntimeWarning,
                  stacklevel=4)
    return fallback


def cache_root(configured: str | None = None) -> str:
    """The cache root in use for `configured` (default `settings.cache_dir`): that folder, created
    0700, once this process has checked that only this user can write to it; else a private one."""
    configured = configured or settings.cache_dir
    root = _roots.get(configured)
    if root is None:
        with _lock:
            root = _roots.get(configured)
            if root is None:
                try:
                    os.makedirs(configured, mode=0o700, exist_ok=True)
                    why = _distrust(os.stat(configured))
                except OSError as e:
                    why = f"not usable ({e.strerror or e})"
                root = _roots[configured] = configured if why is None else _untrusted(configured, why)
    return root


def kind_dir(kind: str, configured: str | None = None) -> str:
    """The folder of one kind of entry ("kernels", "opencl", "native", "pocl") in the root in use,
    created 0700 and checked once per process."""
    root = cache_root(configured)
    path = os.path.join(root, kind)
    if path not in _kind_dirs:
        with _lock:
            try:
                os.makedirs(path, mode=0o700, exist_ok=True)
                why = _distrust(os.stat(path))
            except OSError as e:
                why = f"not usable ({e.strerror or e})"
            if why is not None:   # the whole root moves (its other folders are suspect too), to a fresh one
                root = _roots[configured or settings.cache_dir] = _untrusted(path, why, fresh=True)
                path = os.path.join(root, kind)
                os.mkdir(path, 0o700)
            _kind_dirs.add(path)
    return path


def pocl_cache_dir() -> str:
    """Where PoCL should keep its own cache: inside lazyarr's, so that it counts in the limit."""
    return kind_dir("pocl")


# ---- writes ---------------------------------------------------------------------------------------

def atomic_write(path: str, content: bytes | Callable[[str], None]) -> None:
    """Write `path` whole or not at all: `content` (bytes, or a function writing the file at the
    path it is given) goes to a temporary file in the same folder, renamed over `path` once
    complete. On any failure the temporary file is removed and `path` is left as it was."""
    directory, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=os.path.splitext(name)[1], dir=directory or ".")
    try:
        if isinstance(content, (bytes, bytearray, memoryview)):
            with os.fdopen(fd, "wb") as f:
                fd = -1
                f.write(content)
        else:
            os.close(fd)
            fd = -1
            content(tmp)
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _seal(path: str) -> tuple[int, int]:
    """Append the trailer to the file at `path`; its (inode, size) after."""
    with open(path, "r+b") as f:
        body = f.read()
        f.write(MAGIC + hashlib.sha256(body).digest())
        f.flush()
        st = os.fstat(f.fileno())
    return st.st_ino, st.st_size


def unseal(data: bytes) -> bytes | None:
    """The entry's bytes without the trailer, or None when the trailer is missing or does not match."""
    if len(data) < TRAILER or data[-TRAILER:-32] != MAGIC:
        return None
    body = memoryview(data)[:-TRAILER]
    return bytes(body) if hashlib.sha256(body).digest() == data[-32:] else None


def _store(kind: str, key: str, suffix: str, build: Callable[[str], None], configured: str | None) -> str:
    path = os.path.join(kind_dir(kind, configured), key + suffix)
    sealed: list[tuple[int, int]] = []

    def write(tmp: str) -> None:
        build(tmp)
        sealed.append(_seal(tmp))
    atomic_write(path, write)
    _verified[path] = sealed[0]   # the rename keeps the inode: this process wrote what is there
    _wrote(cache_root(configured), sealed[0][1], path)
    return path


def store_copy(kind: str, key: str, suffix: str, source_path: str) -> str:
    """Make the object at `source_path` (an entry, or a file built outside the cache) the entry
    `key`; returns its path."""
    with open(source_path, "rb") as f:
        data = f.read()
    body = unseal(data)
    body = data if body is None else body

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(body)
    return _store(kind, key, suffix, write, None)


# ---- reads ----------------------------------------------------------------------------------------

def discard(path: str, why: str) -> None:
    """Remove a bad entry (it will be built again), with a note at LAZYARR_DEBUG >= 1."""
    _verified.pop(path, None)
    _note(f"{path} {why}: removed, building it again")
    try:
        os.unlink(path)
    except IsADirectoryError:
        shutil.rmtree(path, ignore_errors=True)
    except OSError:
        pass


def _read_entry(path: str, want_bytes: bool) -> bytes | None:
    """The verified bytes of the entry at `path` (b"" when not `want_bytes` and this process has
    verified the file before), or None when there is none or it was bad (then it is removed)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    known = _verified.get(path) == (st.st_ino, st.st_size)
    if known and not want_bytes:
        return b""
    try:
        with open(path, "rb") as f:
            data = f.read()
            st = os.fstat(f.fileno())
    except FileNotFoundError:
        return None
    except OSError as e:
        discard(path, f"could not be read ({e.strerror or e})")
        return None
    if known:
        return data[:-TRAILER]
    body = unseal(data)
    if body is None:
        discard(path, "is truncated, corrupted or not a lazyarr cache entry")
        return None
    _verified[path] = (st.st_ino, st.st_size)
    try:
        os.utime(path)   # used now: the least recently used entries are evicted first
    except OSError:
        pass
    return body


def lookup(kind: str, key: str, suffix: str, configured: str | None = None) -> str | None:
    """The path of entry `key` when it is there and sound (a bad one is removed), else None. Creates
    no entry; with the cache off, always None."""
    if not settings.cache:
        return None
    path = os.path.join(kind_dir(kind, configured), key + suffix)
    return path if _read_entry(path, False) is not None else None


def read_bytes(kind: str, key: str, suffix: str) -> bytes | None:
    """The bytes of the sound entry `key` (without its trailer), or None when there is none, it
    was bad (then it is removed) or the cache is off."""
    if not settings.cache:
        return None
    path = os.path.join(kind_dir(kind), key + suffix)
    return _read_entry(path, True)


def store_bytes(kind: str, key: str, suffix: str, data: bytes) -> None:
    """Make `data` the entry `key` (nothing with the cache off)."""
    if not settings.cache:
        return

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)
    _store(kind, key, suffix, write, None)


def cached_file(kind: str, key: str, suffix: str, build: Callable[[str], None], configured: str | None = None) -> str:
    """The path of the sound entry `key`; on a miss `build(tmp_path)` writes it first. With the
    cache off, the file is built in a fresh temporary directory. `configured`: the root the
    caller fixed (a compile on another thread), default `settings.cache_dir`."""
    if not settings.cache:
        path = os.path.join(tempfile.mkdtemp(prefix="lazyarr-"), key + suffix)
        build(path)
        return path
    return lookup(kind, key, suffix, configured) or _store(kind, key, suffix, build, configured)


def source_hash(paths: list[str]) -> str:
    """The sha256 of the files `paths`, each with its name: lazyarr's own source, what an entry
    keyed by it was made by. Memoised on disk by the files' sizes and modification times (the trust
    Python's bytecode cache places in them), so a process with a warm cache stats the files instead
    of reading and hashing them (~4 ms a process for the two hashes lazyarr keys by)."""
    stats = []
    for p in paths:
        st = os.stat(p)
        stats.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
    key = cache_key("source-hash", *stats)
    known = read_bytes("sources", key, ".hash")
    if known is not None:
        if len(known) == 64 and all(c in b"0123456789abcdef" for c in known):
            return known.decode()
        discard(os.path.join(kind_dir("sources"), key + ".hash"), "could not be loaded (no source hash)")
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            h.update(os.path.basename(p).encode() + b"\0" + f.read())
    digest = h.hexdigest()
    store_bytes("sources", key, ".hash", digest.encode())
    return digest


def load_cached(kind: str, key: str, suffix: str, build: Callable[[str], None], load: Callable[[Any], Any],
                errors: tuple[type[BaseException], ...], configured: str | None = None, as_bytes: bool = False) -> Any:
    """`load(entry)` of entry `key` (its path, or its bytes `as_bytes`), built by `build` on a miss.
    A cached entry whose load raises one of `errors` is removed and built again; a fresh one's
    error propagates (it is the compiler's or the loader's, not the cache's)."""
    if settings.cache:
        path = os.path.join(kind_dir(kind, configured), key + suffix)
        data = _read_entry(path, as_bytes)
        if data is not None:
            try:
                return load(data if as_bytes else path)
            except errors as e:
                discard(path, f"could not be loaded ({str(e).splitlines()[0] if str(e) else type(e).__name__})")
        path = _store(kind, key, suffix, build, configured)
    else:
        path = cached_file(kind, key, suffix, build)
    if not as_bytes:
        return load(path)
    with open(path, "rb") as f:
        data = f.read()
    return load(data[:-TRAILER] if settings.cache else data)   # (just written by this process)


# ---- size -----------------------------------------------------------------------------------------

def _wrote(root: str, nbytes: int, keep: str) -> None:
    """Count bytes written to `root`; check its size at the first write and after each eighth of
    the limit (never evicting `keep`, the entry just written, which its writer is about to load)."""
    global _exit_check
    with _lock:
        first = root not in _pending
        _pending[root] = _pending.get(root, 0) + nbytes
        # (while a check of this process runs, the bytes wait for the next one, or the exit's)
        due = (first or _pending[root] >= settings.cache_limit // 8) and settings.cache_limit > 0 and not _checking()
        if due:
            _pending[root] = 0
        if not _exit_check:
            _exit_check = True
            atexit.register(_check_at_exit)
    if due:
        _check_aside(root, keep)


def _checking() -> bool:
    """Whether a size check this process started still runs (the finished ones are let go of:
    polling a child process reaps it)."""
    _checks[:] = [c for c in _checks if (c.poll() is None if isinstance(c, subprocess.Popen) else c.is_alive())]
    return bool(_checks)


def _check_aside(root: str, keep: str) -> None:
    """Check the size of `root` in a child process (`cache_eviction` run as a script), which no
    realization waits for and which leaves the interpreter lock to this one; on a thread where a
    process cannot be started."""
    try:
        _checks.append(subprocess.Popen(
            [sys.executable, "-I", "-S", cache_eviction.__file__, root, str(settings.cache_limit), keep,
             str(settings.debug)], stdin=subprocess.DEVNULL))
    except OSError:
        check = threading.Thread(target=_enforce_quietly, args=(root, keep), name="lazyarr-cache-limit",
                                 daemon=True)
        _checks.append(check)
        check.start()


def _enforce_quietly(root: str, keep: str) -> None:
    try:
        enforce_limit(root, keep)
    except OSError:   # (another process removing entries at the same time): the next check catches up
        pass


def _check_at_exit() -> None:
    for check in _checks:   # (a check under way when the process ends would be cut short)
        check.wait() if isinstance(check, subprocess.Popen) else check.join()
    for root, pending in list(_pending.items()):
        if pending:
            try:
                enforce_limit(root)
            except Exception:   # leaving: a cache that stays too large is not worth a traceback
                pass


def cache_size(configured: str | None = None) -> int:
    """The bytes the cache holds now (PoCL's included)."""
    return units(cache_root(configured))[1]


def enforce_limit(root: str | None = None, keep: str = "") -> int:
    """Remove the least recently used entries until the cache under `root` (default: the one in
    use) holds at most `settings.cache_limit` bytes (down to EVICT_TO of it when over); 0: no
    limit. Returns the bytes left."""
    root = root or cache_root()
    with _lock:
        _pending[root] = 0
    limit = settings.cache_limit
    if limit <= 0 or not os.path.isdir(root):
        return 0
    with _evicting:
        removed: list[str] = []
        total, evicted = trim(root, limit, keep, removed)
        for path in removed:
            _verified.pop(path, None)
        if evicted:
            _note(note_trim(root, limit, total, evicted))
        return total
