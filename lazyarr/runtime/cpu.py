"""The CPU device: host memory that NumPy views without copying, kernels compiled by gcc into
shared objects and called through cffi.

Compiled objects live in the disk cache (`lazyarr.runtime.cache`) keyed by the source, the
compiler's identity and the flags, so a second process does not compile again. A missing
compiler and a failed compile raise `CompileError` carrying the source and the compiler's
message.
"""
from __future__ import annotations

import functools
import shutil
import sys
import subprocess

import cffi
import numpy as np

from lazyarr import settings
from lazyarr.compiler.render_c import CRenderer
from lazyarr.dtypes import DType
from lazyarr.runtime.cache import cache_key, cached_file
from lazyarr.runtime.device import Buffer, Device

ALIGNMENT = 64
POOL_BYTES = 1 << 30   # freed memory kept for reuse, at most
CFLAGS = ["-O3", "-march=native", "-fopenmp", "-fwrapv", "-ffp-contract=off", "-fno-math-errno", "-std=gnu11",
          "-shared", "-fPIC", "-fno-plt"]

_ffi = cffi.FFI()
_ffi.cdef("""
void *dlopen(const char *filename, int flags);
void *dlsym(void *handle, const char *symbol);
char *dlerror(void);
""")
_libc = _ffi.dlopen(None)
RTLD_NOW = 2


class CompileError(RuntimeError):
    """A kernel failed to compile. `.source` is the kernel, `.log` the compiler's message."""

    def __init__(self, message: str, source: str = "", log: str = ""):
        super().__init__(f"{message}\n--- compiler output ---\n{log}\n--- kernel source ---\n{source}"
                         if source else message)
        self.source, self.log = source, log


@functools.lru_cache(maxsize=None)
def compiler_identity(cc: str) -> str:
    path = shutil.which(cc)
    if path is None:
        raise CompileError(f"lazyarr's CPU device needs a C compiler and {cc!r} was not found; install "
                           f"gcc (Debian/Ubuntu: apt-get install -y gcc) or set LAZYARR_CC to one")
    out = subprocess.run([path, "--version"], capture_output=True, text=True)
    return path + "\n" + out.stdout.splitlines()[0] if out.stdout else path


class CPUProgram:
    """A compiled kernel: call it with the kernel's buffers, in argument order."""

    def __init__(self, name: str, source: str, path: str):
        self.name, self.source, self.path = name, source, path
        self.handle = _libc.dlopen(path.encode(), RTLD_NOW)
        if self.handle == _ffi.NULL:
            raise CompileError(f"could not load the compiled kernel {name}: "
                               f"{_ffi.string(_libc.dlerror()).decode()}", source)
        sym = _libc.dlsym(self.handle, name.encode())
        if sym == _ffi.NULL:
            raise CompileError(f"the compiled kernel has no function {name}", source)
        self.fn = _ffi.cast("void(*)(const uintptr_t*)", sym)

    def __call__(self, buffers: list[Buffer], extra: list[int] = ()) -> None:
        """Run with the buffers' addresses, then `extra` words (a call's scalars), as arguments."""
        self.fn(_ffi.new("uintptr_t[]", [b.storage.ctypes.data for b in buffers] + list(extra)))


class CPUDevice(Device):
    name = "cpu"

    def __init__(self) -> None:
        self._renderer = CRenderer()
        self._pool: dict[int, list[np.ndarray]] = {}
        self._pooled_bytes = 0

    @property
    def renderer(self) -> CRenderer:
        return self._renderer

    def allocate(self, size: int, dtype: DType) -> np.ndarray:
        nbytes = size * dtype.itemsize
        pooled = self._pool.get(nbytes)
        if pooled:
            raw = pooled.pop()
            self._pooled_bytes -= nbytes
        else:
            raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
        offset = (-raw.ctypes.data) % ALIGNMENT
        return raw[offset:offset + nbytes].view(dtype.np)

    def free(self, storage: np.ndarray, nbytes: int) -> None:
        """Keep the memory for the next allocation of its size (fresh memory costs page faults),
        unless something else still views it (an array numpy() handed out) or the pool is full."""
        raw = storage.base
        if nbytes == 0 or raw is None or sys.getrefcount(raw) > 3 or self._pooled_bytes + nbytes > POOL_BYTES:
            return
        self._pool.setdefault(nbytes, []).append(raw)
        self._pooled_bytes += nbytes

    def to_numpy(self, storage: np.ndarray, size: int, dtype: DType) -> np.ndarray:
        # a view (never the storage object itself: the allocator counts views to know whether memory
        # is still in use), of the buffer's dtype (storage may come from a buffer of another dtype)
        return storage.view(dtype.np)

    def copyin(self, storage: np.ndarray, data: np.ndarray) -> None:
        storage[...] = data

    def compile(self, name: str, source: str) -> CPUProgram:
        cc = settings.cc
        ident = compiler_identity(cc)
        key = cache_key("cpu", ident, " ".join(CFLAGS), source)

        def build(out_path: str) -> None:
            proc = subprocess.run([cc, *CFLAGS, "-x", "c", "-", "-o", out_path, "-lm"], input=source,
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise CompileError(f"the C compiler failed on kernel {name}", source, proc.stderr)

        return CPUProgram(name, source, cached_file("kernels", key, ".so", build))
