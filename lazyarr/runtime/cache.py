"""A content-addressed disk cache for compiled kernels.

An entry's key is a hash of everything that determines the compiled bytes (source, compiler,
flags); its value is a file under the cache directory (`settings.cache_dir`, private to the user:
mode 0700). Entries are written to a temporary file in the same directory and renamed into place,
so a reader never sees half an entry and a failed compile leaves nothing behind.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from typing import Callable

from lazyarr import settings


def cache_key(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()


def _cache_dir(kind: str) -> str:
    path = os.path.join(settings.cache_dir, kind)
    os.makedirs(settings.cache_dir, mode=0o700, exist_ok=True)
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def cached_file(kind: str, key: str, suffix: str, build: Callable[[str], None]) -> str:
    """The path of the cached file `key`; on a miss `build(tmp_path)` writes it first.
    With the cache off, the file is built in a fresh temporary directory."""
    if not settings.cache:
        tmp = tempfile.mkdtemp(prefix="lazyarr-")
        path = os.path.join(tmp, key + suffix)
        build(path)
        return path
    directory = _cache_dir(kind)
    path = os.path.join(directory, key + suffix)
    if os.path.exists(path):
        return path
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        build(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
