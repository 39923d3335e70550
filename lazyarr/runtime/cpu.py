"""The CPU device: host memory that NumPy views without copying (a pool of aligned memory kept for
reuse, here), kernels compiled by gcc into shared objects (`lazyarr.runtime.cpu_compiler`) and
called through cffi (`lazyarr.runtime.cpu_program`).

Compiled objects live in the disk cache (`lazyarr.runtime.cache`) keyed by the source, the
compiler's identity and the flags, so a second process does not compile again. A cached object
that is damaged (the cache verifies it) or that dlopen refuses is removed and compiled again. A
missing compiler and a failed compile raise `CompileError` carrying the source and the compiler's
message.

Kernels of a schedule compile in tiers (`plan_kernel`, then `KernelPlan.build`, which the
executor runs for all of a schedule's missing kernels at once, in parallel):
- a kernel whose optimised object is in the disk cache is loaded from it, without codegen: that
  entry is keyed by the kernel's graph (`kernel_key`: its structure, the codegen settings and a
  hash of the compiler's own code), so a warm process goes from graph to loaded kernel directly;
- a kernel with much work (more than `settings.fast_compile_work` operations, 2^24 by default:
  about what tcc's code runs in the ~150 ms an optimising compile takes) is compiled optimised
  at once (gcc -O3 -march=native, with kernel optimisation);
- any other kernel is first rendered without kernel optimisation and compiled by the fast
  compiler (`settings.fast_cc`, tcc: ~6 ms where gcc takes ~115 ms, but its code is 10-50x
  slower), and once its calls add up to `settings.hot_work` operations (one large call, or a
  few) or it has run `settings.hot_calls` times, it is rendered optimised and compiled by gcc on
  a background thread; calls keep using the first tier until that object is loaded;
- a shape-generic kernel that keeps running with the same sizes is compiled once more, for those
  sizes, with kernel optimisation (`TieredProgram`).
Without the fast compiler (or with LAZYARR_TIERED=0) every kernel is compiled optimised.
"""
from __future__ import annotations

import sys
from concurrent.futures import Future
from typing import Any

import numpy as np

from lazyarr import settings
from lazyarr.compiler.render_c import CRenderer, FastCRenderer
from lazyarr.compiler.uop import is_generic
from lazyarr.dtypes import DType
from lazyarr.compiler.codegen import generate, kernel_name
from lazyarr.runtime.cpu_compiler import (KernelPlan, TieredProgram, background_compiles, cached_program,
                                          compile_kernel, fast_compiler_available, kernel_key, kernel_work)
from lazyarr.runtime.cpu_program import CPUProgram, array_address
from lazyarr.runtime.device import Buffer, Device
from lazyarr.runtime.errors import CompileError

ALIGNMENT = 64
POOL_BYTES = 1 << 30   # freed memory kept for reuse, at most

class CPUDevice(Device):
    name = "cpu"
    host_memory = True
    plans_kernels = True
    long_loops = True

    def __init__(self) -> None:
        self._renderer = CRenderer()
        self._fast_renderer = FastCRenderer()   # the first tier's C, for a compiler that inlines nothing
        self._pool: dict[int, list[tuple[np.ndarray, int]]] = {}   # bytes → (memory, its address)
        self._pooled_bytes = 0
        self._pool_limit = POOL_BYTES   # the most bytes the pool keeps

    @property
    def renderer(self) -> CRenderer:
        return self._renderer

    def allocate(self, size: int, dtype: DType) -> np.ndarray:
        return self._take(size, dtype)[0]

    def allocate_into(self, b: Buffer) -> None:
        b.storage, addr = self._take(b.size, b.dtype)
        b._addr = (b.storage, addr)

    def allocate_owned(self, b: Buffer) -> int:
        """Allocate b's storage (b has none), owned by b, and return its address: `ensure_allocated`
        and `address` in one call, for prepared launches (`lazyarr.runtime.prepared`)."""
        storage, addr = self._take(b.size, b.dtype)
        b.storage, b._addr, b.owns = storage, (storage, addr), True
        return addr

    def _take(self, size: int, dtype: DType) -> tuple[np.ndarray, int]:
        """Memory for `size` elements of `dtype`, aligned to ALIGNMENT (viewing a larger array), and
        its address: pooled memory knows its address, which costs a call to learn (a training step
        allocates dozens of buffers), and keeps the dtype it was freed with (no view when it matches)."""
        nbytes, np_dtype = size * dtype.itemsize, dtype.np
        pooled = self._pool.get(nbytes)
        if pooled:
            self._pooled_bytes -= nbytes
            memory, addr = pooled.pop()
        else:
            raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
            start = array_address(raw)
            offset = (-start) % ALIGNMENT
            memory, addr = raw[offset:offset + nbytes], start + offset
        return (memory if memory.dtype is np_dtype else memory.view(np_dtype)), addr

    def free(self, storage: np.ndarray, nbytes: int, address: int | None = None) -> None:
        """Keep the memory for the next allocation of its size (fresh memory costs page faults),
        unless something else still views it (an array numpy() handed out) or the pool is full."""
        raw = storage.base
        if nbytes == 0 or raw is None or sys.getrefcount(raw) > 3 or self._pooled_bytes + nbytes > self._pool_limit:
            return
        self._pool.setdefault(nbytes, []).append((storage, array_address(storage) if address is None else address))
        self._pooled_bytes += nbytes

    def copy_storage(self, dst: np.ndarray, src: np.ndarray, nbytes: int) -> None:
        dst.view(np.uint8)[:nbytes] = src.view(np.uint8)[:nbytes]

    def keep(self, storage: np.ndarray) -> None:
        start = array_address(storage)
        # (a copy: the collector may free a buffer meanwhile, whose memory comes back under a new size)
        for nbytes, pooled in list(self._pool.items()):
            kept = [(m, a) for m, a in pooled if a != start]
            self._pooled_bytes -= nbytes * (len(pooled) - len(kept))
            pooled[:] = kept

    def to_numpy(self, storage: np.ndarray, size: int, dtype: DType) -> np.ndarray:
        # a view (never the storage object itself: the allocator counts views to know whether memory
        # is still in use), of the buffer's dtype (storage may come from a buffer of another dtype)
        return storage.view(dtype.np)

    def copyin(self, storage: np.ndarray, data: np.ndarray) -> None:
        storage[...] = data

    def compile(self, name: str, source: str, key: str | None = None, tier: str = "opt",
                cache_dir: str | None = None) -> CPUProgram:
        """Compile `source` and load it (`lazyarr.runtime.cpu_compiler.compile_kernel`)."""
        return compile_kernel(name, source, key, tier, cache_dir)

    # ---- tiers (see the module docstring) -----------------------------------------------------
    def plan_kernel(self, item: Any) -> KernelPlan:
        """The Python part of getting schedule item `item`'s kernel (disk lookups, codegen), now."""
        ast, transcendentals = item.ast, settings.transcendentals
        name = kernel_name(ast)
        opt_key = kernel_key(ast, "opt", transcendentals)
        prog = cached_program(name, opt_key)
        if prog is not None:
            if settings.tiered and is_generic(ast):   # shape-generic: may still get code for its sizes
                return KernelPlan(lambda: TieredProgram(self, name, ast, transcendentals, prog, optimised=True))
            return KernelPlan(lambda: prog)
        if not (settings.tiered and fast_compiler_available(settings.fast_cc)
                and kernel_work(ast) <= settings.fast_compile_work):
            source = item.source
            return KernelPlan(lambda: self.compile(name, source, opt_key))
        fast_key = kernel_key(ast, "fast", transcendentals)
        fast = cached_program(name, fast_key)
        if fast is not None:
            return KernelPlan(lambda: TieredProgram(self, name, ast, transcendentals, fast))
        source = generate(ast, self._fast_renderer, transcendentals=transcendentals, opts=[]).source

        def build() -> TieredProgram:
            try:
                fast = self.compile(name, source, fast_key, tier="fast")
            except CompileError:   # something the fast compiler does not take: gcc it is
                fast = self.compile(name, source)
            return TieredProgram(self, name, ast, transcendentals, fast)
        return KernelPlan(build)

    def optimise_later(self, name: str, ast: Any, transcendentals: str | None) -> Future:
        """Render the optimised kernel now and compile it on the background thread."""
        key = kernel_key(ast, "opt", transcendentals)
        prog = cached_program(name, key)
        if prog is not None:   # in the disk cache: no codegen
            done: Future = Future()
            done.set_result(prog)
            return done
        try:
            source = generate(ast, self.renderer, name, transcendentals=transcendentals).source
        except Exception as e:   # the kernel keeps the object it runs (a codegen gap must not reach the user)
            failed: Future = Future()
            failed.set_exception(e)
            _note_failure(name, failed)
            return failed
        cache_dir = settings.cache_dir if settings.cache else None
        f = background_compiles.submit(self.compile, name, source, key, "opt", cache_dir)
        f.add_done_callback(lambda f: _note_failure(name, f))
        return f


# the optimised compiles that failed ("kernel: error"): the kernel keeps the object it runs, so
# nothing else shows it; LAZYARR_DEBUG >= 1 prints each, and the test suite fails on any
optimise_failures: list[str] = []


def _note_failure(name: str, f: Future) -> None:
    e = f.exception()
    if e is not None:
        lines = [ln for ln in str(e).splitlines() if "error" in ln] or str(e).splitlines()[:1]
        optimise_failures.append(f"{name}: {type(e).__name__}: {lines[0] if lines else ''}")
        if settings.debug >= 1:
            print(f"lazyarr: the optimised compile of {optimise_failures[-1]} failed; it keeps its first tier",
                  file=sys.stderr)


