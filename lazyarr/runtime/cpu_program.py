"""Compiled CPU kernels in this process: loaded with dlopen and called through cffi with an array
of words (the buffers' addresses, a call's scalars, then the threads a parallel loop may use), and
how many threads a launch uses now (`threads_now`, which follows the load of other processes)."""
from __future__ import annotations

import os
import struct
import time

import _cffi_backend
import cffi
import numpy as np

from lazyarr import settings
from lazyarr.runtime.device import Buffer
from lazyarr.runtime.errors import CompileError

_ffi = cffi.FFI()
_ffi.cdef("""
void *dlopen(const char *filename, int flags);
void *dlsym(void *handle, const char *symbol);
char *dlerror(void);
""")
_libc = _ffi.dlopen(None)
# bound once: cffi looks a function up (dlsym, which clears dlerror's message) at its first use
_dlopen, _dlsym, _dlerror = _libc.dlopen, _libc.dlsym, _libc.dlerror
RTLD_NOW = 2
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_CPUS = os.cpu_count() or 1


class CPUProgram:
    """A compiled kernel: call it with the kernel's buffers, in argument order."""
    hot = None   # not tiered: never asks to be optimised

    def __init__(self, name: str, source: str, path: str):
        self.name, self.source, self.path = name, source, path
        self.handle = _dlopen(path.encode(), RTLD_NOW)
        if self.handle == _ffi.NULL:
            error = _dlerror()
            message = _ffi.string(error).decode(errors="replace") if error != _ffi.NULL else "dlopen failed"
            raise CompileError(f"could not load the compiled kernel {name}: {message}", source)
        sym = _dlsym(self.handle, name.encode())
        if sym == _ffi.NULL:
            raise CompileError(f"the compiled kernel has no function {name}", source)
        self.fn = _ffi.cast("void(*)(const uintptr_t*)", sym)

    def __call__(self, buffers: list[Buffer], extra: list[int] = (), scalars: tuple = ()) -> None:
        """Run with the buffers' addresses, then `extra` words (sizes, a call's scalars), then the
        kernel's scalar arguments (`scalar_words`), then the number of threads a parallel loop may use
        (`threads_now`), as arguments."""
        try:   # the cached address of each buffer's storage (see `address`), inline: one list per launch
            words = [a[1] if (a := b._addr) is not None and a[0] is b.storage else address(b) for b in buffers]
        except AttributeError:   # objects standing in for Buffers
            words = list(map(address, buffers))
        if scalars:
            self.fn(_new_words(_WORDS, [*words, *extra, *scalar_words(scalars), threads_now()]))
        else:
            self.fn(_new_words(_WORDS, [*words, *extra, threads_now()]))


_WORDS = _ffi.typeof("uintptr_t[]")
_F64_BITS = struct.Struct("<d")
_U64 = struct.Struct("<Q")
_MASK = (1 << 64) - 1


def scalar_words(values: tuple) -> list[int]:
    """A kernel's scalar arguments as words, as the C renderer's `scalar_param` reads them: a float
    as its float64 bits, an integer as its int64 value (two's complement)."""
    return [_U64.unpack(_F64_BITS.pack(v))[0] if type(v) is float else v & _MASK for v in values]
_new_words = _cffi_backend.newp   # ffi.new without its Python wrapper (one per launch)


def address(b: Buffer) -> int:
    """The address of b's storage (ndarray.ctypes costs microseconds: cached with the storage it
    belongs to, so a buffer that takes over other storage gets the new address)."""
    storage = b.storage
    try:
        cached = b._addr
    except AttributeError:   # an object standing in for a Buffer
        return array_address(storage)
    if cached is None or cached[0] is not storage:
        cached = b._addr = (storage, array_address(storage))
    return cached[1]


def array_address(arr: np.ndarray) -> int:
    """The address of an array's data (through cffi: half of what ndarray.ctypes costs)."""
    try:
        return int(_ffi.cast("uintptr_t", _ffi.from_buffer(arr)))
    except (TypeError, ValueError, BufferError):   # not contiguous, or no buffer to export
        return arr.ctypes.data


class _Sample:
    time = busy = total = own = 0.0
    threads = 0


def threads_now() -> int:
    """The threads a kernel's parallel loop uses now: `settings.threads`, fewer while other
    processes keep the cores busy (with `settings.adaptive_threads`). Two threads of which one
    waits for a core that another process holds run slower than one: measured here, row sums
    2-5x slower with the machine's other cores busy. Sampled from /proc/stat at most every
    0.2 s: the cores' busy time less this process's own."""
    n = settings.threads
    if n <= 1 or not settings.adaptive_threads:
        return n
    if time.monotonic() - _Sample.time >= 0.2:
        _sample_load()
    return max(1, min(n, _Sample.threads)) if _Sample.threads else n


def _sample_load() -> None:
    """Update `_Sample.threads`: the cores other processes left idle since the last sample."""
    try:
        with open("/proc/stat") as f:
            fields = [float(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return
    total, idle = sum(fields), fields[3] + fields[4]
    t = os.times()
    own = (t.user + t.system) * _CLOCK_TICKS
    dt = total - _Sample.total
    if _Sample.time and dt > 0:
        others = ((total - idle - _Sample.busy) - (own - _Sample.own)) / dt * _CPUS
        _Sample.threads = max(1, int(_CPUS - others + 0.5))
    _Sample.time, _Sample.busy, _Sample.total, _Sample.own = time.monotonic(), total - idle, total, own


_sample_load()   # the first interval of the load estimate starts at import
