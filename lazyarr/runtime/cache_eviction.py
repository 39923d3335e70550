"""The disk cache's size: the scan of its folders and the eviction of its least recently used
entries (`lazyarr.runtime.cache` decides when). A large cache's scan takes about a second of
Python (150,000 files: 0.9 s here), and on a thread it would hold the interpreter lock against the
user's code (a loop of small realizations ran 1.7x slower while it lasted). So the checks a
process makes while it works run this file as a script in a child process, which imports nothing
but the standard library:

    python cache_eviction.py ROOT LIMIT KEEP [DEBUG]

removes what is over LIMIT bytes under ROOT (never KEEP, the entry just written), prints a note
at DEBUG >= 1 and exits.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import sys
import time
from typing import Iterator

TMP_PREFIX = ".tmp-"
STALE_TMP_SECONDS = 3600.0   # a temporary file this old belongs to a writer that died
EVICT_TO = 0.8               # an over-full cache is trimmed to this fraction of the limit
KINDS = ("kernels", "native", "opencl", "pocl", "schedules", "sources")   # the folders eviction looks into, and nothing else
ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.")   # an entry's name: its key (cache_key), then its suffix


def _tree(path: str) -> tuple[float, int]:
    """The newest mtime and the total size of the files of a folder."""
    newest, size = os.stat(path).st_mtime, 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            newest, size = max(newest, st.st_mtime), size + st.st_size
    return newest, size


def units(root: str) -> tuple[list[tuple[float, int, str]], int]:
    """The evictable entries of `root` as (mtime, size, path), and the bytes of the whole cache but
    for temporary files. PoCL's programs (pocl/<2 letters>/<hash>/...) are one entry each; stale
    temporary files are removed on the way."""
    found: list[tuple[float, int, str]] = []
    total, now, pocl = 0, time.time(), False

    def file(entry: os.DirEntry, pocl_temp: bool = False) -> None:
        nonlocal total
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            return
        # being written, or left by a writer that died: neither counts (a writer's file is not the
        # cache's yet, and PoCL's compile scratch, larger than its programs, would have a check
        # evict the newest entries to make room for it)
        if entry.name.startswith(TMP_PREFIX) or pocl_temp:
            if now - st.st_mtime > STALE_TMP_SECONDS:
                remove(entry.path)
            return
        if pocl or ENTRY_NAME.match(entry.name):   # (a file lazyarr did not name is not its to remove)
            found.append((st.st_mtime, st.st_size, entry.path))
            total += st.st_size

    for kind in _scan(root):
        if kind.name not in KINDS or not kind.is_dir(follow_symlinks=False):
            continue
        pocl = kind.name == "pocl"
        for entry in _scan(kind.path):
            if not pocl:
                if entry.is_file(follow_symlinks=False):
                    file(entry)
            elif entry.is_dir(follow_symlinks=False):
                for program in _scan(entry.path):
                    if program.is_dir(follow_symlinks=False):
                        try:
                            mtime, size = _tree(program.path)
                        except OSError:
                            continue
                        found.append((mtime, size, program.path))
                        total += size
                    elif program.is_file(follow_symlinks=False):
                        file(program)
            elif entry.is_file(follow_symlinks=False):
                file(entry, pocl_temp=entry.name.startswith("tempfile"))
    return found, total


def _scan(path: str) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass


def trim(root: str, limit: int, keep: str = "", removed: list[str] | None = None) -> tuple[int, int]:
    """Remove the least recently used entries of `root` (never `keep`) until it holds at most
    EVICT_TO of `limit` bytes, when it holds more than `limit`. Returns the bytes left and the
    entries removed (their paths appended to `removed`). One trim at a time in a root, whatever
    the process (a lock on the root folder): two that listed the cache at once would each remove
    what it takes to get under the limit, the second the newest entries too."""
    with _exclusive(root):
        found, total = units(root)
        if total <= limit:
            return total, 0
        evicted = 0
        for _, size, path in sorted(found):
            if total <= limit * EVICT_TO:
                break
            if path == keep:
                continue
            remove(path)
            if removed is not None:
                removed.append(path)
            total -= size
            evicted += 1
        return total, evicted


@contextlib.contextmanager
def _exclusive(root: str) -> Iterator[None]:
    """Hold an exclusive lock on the root folder for the block (flock: released when the
    descriptor closes, or the process dies)."""
    try:
        fd = os.open(root, os.O_RDONLY)
    except OSError:   # (no root: nothing to remove either)
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def note_trim(root: str, limit: int, total: int, evicted: int) -> str:
    return (f"{root} was over its limit of {limit} bytes: removed {evicted} least recently used entries, "
            f"{total} bytes left")


if __name__ == "__main__":
    _root, _limit, _keep = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    _left, _evicted = trim(_root, _limit, _keep)
    if _evicted and len(sys.argv) > 4 and int(sys.argv[4]) >= 1:
        print(f"lazyarr cache: {note_trim(_root, _limit, _left, _evicted)}")
