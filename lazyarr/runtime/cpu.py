"""The CPU device: host memory that NumPy views without copying, kernels compiled by gcc into
shared objects and called through cffi.

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
  slower), and once it has run `settings.hot_calls` times it is rendered optimised and compiled
  by gcc on a background thread; calls keep using the first tier until that object is loaded;
- a shape-generic kernel that keeps running with the same sizes is compiled once more, for those
  sizes, with kernel optimisation (`TieredProgram`).
Without the fast compiler (or with LAZYARR_TIERED=0) every kernel is compiled optimised.
"""
from __future__ import annotations

import functools
import hashlib
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

import _cffi_backend
import cffi
import numpy as np

from lazyarr import settings
from lazyarr.compiler.render_c import CRenderer, FastCRenderer
from lazyarr.compiler.uop import is_generic
from lazyarr.dtypes import DType
from lazyarr.runtime.cache import cache_key, discard, load_cached, lookup
from lazyarr.runtime.device import Buffer, Device
from lazyarr.runtime.errors import CompileError

ALIGNMENT = 64
POOL_BYTES = 1 << 30   # freed memory kept for reuse, at most
FAST_CFLAGS = ["-shared", "-fPIC"]
CFLAGS = ["-O3", "-march=native", "-fopenmp", "-fwrapv", "-ffp-contract=off", "-fno-math-errno", "-std=gnu11",
          "-shared", "-fPIC", "-fno-plt"]

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


@functools.lru_cache(maxsize=None)
def compiler_identity(cc: str) -> str:
    path = shutil.which(cc)
    if path is None:
        raise CompileError(f"lazyarr's CPU device needs a C compiler and {cc!r} was not found; install "
                           f"gcc (Debian/Ubuntu: apt-get install -y gcc) or set LAZYARR_CC to one")
    # the installed binary's identity (asking it --version costs a process start, ~2-4 ms, at the
    # first kernel of every process); an upgrade replaces the file
    st = os.stat(path)
    return f"{os.path.realpath(path)} {st.st_size} {st.st_mtime_ns} {st.st_ino}"


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

    def __call__(self, buffers: list[Buffer], extra: list[int] = ()) -> None:
        """Run with the buffers' addresses, then `extra` words (a call's scalars), then the number
        of threads a parallel loop may use (`threads_now`), as arguments."""
        try:   # the cached address of each buffer's storage (see `address`), inline: one list per launch
            words = [a[1] if (a := b._addr) is not None and a[0] is b.storage else address(b) for b in buffers]
        except AttributeError:   # objects standing in for Buffers
            words = list(map(address, buffers))
        self.fn(_new_words(_WORDS, [*words, *extra, threads_now()]))


_WORDS = _ffi.typeof("uintptr_t[]")
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


class CPUDevice(Device):
    name = "cpu"
    host_memory = True
    plans_kernels = True

    def __init__(self) -> None:
        self._renderer = CRenderer()
        self._fast_renderer = FastCRenderer()   # the first tier's C, for a compiler that inlines nothing
        self._pool: dict[int, list[tuple[np.ndarray, int]]] = {}   # bytes → (memory, its address)
        self._pooled_bytes = 0

    @property
    def renderer(self) -> CRenderer:
        return self._renderer

    def allocate(self, size: int, dtype: DType) -> np.ndarray:
        return self._take(size, dtype)[0]

    def allocate_into(self, b: Buffer) -> None:
        b.storage, addr = self._take(b.size, b.dtype)
        b._addr = (b.storage, addr)

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
        if nbytes == 0 or raw is None or sys.getrefcount(raw) > 3 or self._pooled_bytes + nbytes > POOL_BYTES:
            return
        self._pool.setdefault(nbytes, []).append((storage, array_address(storage) if address is None else address))
        self._pooled_bytes += nbytes

    def to_numpy(self, storage: np.ndarray, size: int, dtype: DType) -> np.ndarray:
        # a view (never the storage object itself: the allocator counts views to know whether memory
        # is still in use), of the buffer's dtype (storage may come from a buffer of another dtype)
        return storage.view(dtype.np)

    def copyin(self, storage: np.ndarray, data: np.ndarray) -> None:
        storage[...] = data

    def compile(self, name: str, source: str, key: str | None = None, tier: str = "opt",
                cache_dir: str | None = None) -> CPUProgram:
        """Compile `source` (gcc -O3 -march=native; tier "fast": the fast compiler) and load it.
        The disk cache entry is `key`, or a hash of the source, compiler and flags; `cache_dir`
        (the settings' when None) is where, fixed by the caller for a compile on another thread."""
        cc = settings.fast_cc if tier == "fast" else settings.cc
        flags = FAST_CFLAGS if tier == "fast" else CFLAGS
        ident = compiler_identity(cc)
        key = key or cache_key("cpu", ident, " ".join(flags), source)

        def build(out_path: str) -> None:
            if tier == "fast":   # tcc reads its source from a file
                with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
                    f.write(source)
                try:
                    proc = subprocess.run([cc, *flags, f.name, "-o", out_path, "-lm"], capture_output=True, text=True)
                finally:
                    os.unlink(f.name)
            else:
                proc = subprocess.run([cc, *flags, "-x", "c", "-", "-o", out_path, "-lm"], input=source,
                                      capture_output=True, text=True)
            if proc.returncode != 0:
                raise CompileError(f"the C compiler failed on kernel {name}", source, proc.stderr)

        # a cached object that dlopen refuses is compiled again (a fresh one's failure is raised)
        return load_cached("kernels", key, ".so", build, lambda path: CPUProgram(name, source, path), (CompileError,),
                           cache_dir)

    # ---- tiers (see the module docstring) -----------------------------------------------------
    def plan_kernel(self, item: Any) -> KernelPlan:
        """The Python part of getting schedule item `item`'s kernel (disk lookups, codegen), now."""
        from lazyarr.compiler.codegen import generate, kernel_name
        ast, transcendentals = item.ast, settings.transcendentals
        name = kernel_name(ast)
        opt_key = kernel_key(ast, "opt", transcendentals)
        prog = _cached_program(name, opt_key)
        if prog is not None:
            if settings.tiered and is_generic(ast):   # shape-generic: may still get code for its sizes
                return KernelPlan(lambda: TieredProgram(self, name, ast, transcendentals, prog, optimised=True))
            return KernelPlan(lambda: prog)
        if not (settings.tiered and fast_compiler_available(settings.fast_cc)
                and kernel_work(ast) <= settings.fast_compile_work):
            source = item.source
            return KernelPlan(lambda: self.compile(name, source, opt_key))
        fast_key = kernel_key(ast, "fast", transcendentals)
        fast = _cached_program(name, fast_key)
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
        from lazyarr.compiler.codegen import generate
        key = kernel_key(ast, "opt", transcendentals)
        prog = _cached_program(name, key)
        if prog is not None:   # in the disk cache: no codegen
            done: Future = Future()
            done.set_result(prog)
            return done
        source = generate(ast, self.renderer, name, transcendentals=transcendentals).source
        return _background.submit(self.compile, name, source, key, "opt", settings.cache_dir if settings.cache else None)


# ---- tiered compilation of kernels ---------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def compiler_code_hash() -> str:
    """A hash of the code that turns a kernel graph into source: an entry keyed by a graph is
    stale once this changes."""
    import lazyarr
    root = os.path.dirname(lazyarr.__file__)
    h = hashlib.sha256()
    for folder in ("compiler", "runtime"):
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if name.endswith(".py"):
                with open(os.path.join(root, folder, name), "rb") as f:
                    h.update(name.encode() + b"\0" + f.read())
    for name in ("ops.py", "dtypes.py", "settings.py"):
        with open(os.path.join(root, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def _arg_text(arg: Any) -> str:
    if isinstance(arg, float):
        return arg.hex()
    if isinstance(arg, tuple):
        return "(" + ",".join(_arg_text(a) for a in arg) + ")"
    return repr(arg)


_graph_hashes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def graph_hash(ast: Any) -> str:
    """A hash of the kernel graph's structure: each node's op, dtype, arg and sources, in order."""
    h = _graph_hashes.get(ast)
    if h is None:
        index: dict[int, int] = {}
        parts = []
        for i, u in enumerate(ast.toposort()):
            index[id(u)] = i
            parts.append((u.op.value, u.dtype.name, _arg_text(u.arg) if u.arg is not None else "",
                          tuple(index[id(x)] for x in u.src)))
        h = _graph_hashes[ast] = hashlib.sha256(repr(parts).encode()).hexdigest()
    return h


def kernel_key(ast: Any, tier: str, transcendentals: str | None) -> str:
    """The disk cache key of a kernel graph's compiled object on a tier ("opt" or "fast")."""
    cc = settings.fast_cc if tier == "fast" else settings.cc
    flags = FAST_CFLAGS if tier == "fast" else CFLAGS
    return cache_key("cpu-kernel", tier, compiler_identity(cc), " ".join(flags), compiler_code_hash(),
                     f"{transcendentals} {settings.opts} {settings.threads}", graph_hash(ast))


def kernel_work(ast: Any) -> int:
    """Loads, stores and ALU operations the kernel executes (each node once per iteration of the
    loops around it; a transcendental function as TRANSCENDENTAL_COST operations)."""
    from lazyarr.compiler.decompositions import TRANSCENDENTAL, TRANSCENDENTAL_COST
    from lazyarr.compiler.uop import GroupOp, Ops
    return sum(math.prod(r.src[0].arg if r.src[0].op is Ops.CONST else 1 for r in u.ranges) *
               (TRANSCENDENTAL_COST if u.op in TRANSCENDENTAL else 1)
               for u in ast.toposort() if u.op in GroupOp.ALU or u.op in (Ops.LOAD, Ops.STORE))


@functools.lru_cache(maxsize=None)
def fast_compiler_available(cc: str) -> bool:
    return shutil.which(cc) is not None


_background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lazyarr-optimise")
SPECIALISE_CALLS = 64   # calls with one set of sizes after which a shape-generic kernel is compiled for them
SPECIALISE_SIZES = 8    # the sets of sizes counted per kernel
_sample_load()   # the first interval of the load estimate starts at import


class TieredProgram:
    """A kernel running on its first-tier object until the optimised one is loaded. Once it has run
    `settings.hot_calls` times, the executor asks for the optimised object at the start of a later
    schedule run (`optimise`: rendered on the caller's thread, which owns the graph, and compiled
    on a background one), and the first call after it is ready swaps it in.

    A shape-generic kernel (its sizes are arguments) is optimised without kernel optimisation,
    which needs the sizes. Once it has run SPECIALISE_CALLS times with one set of sizes (every
    step of a training loop runs the same ones), it is also compiled for those sizes alone, with
    kernel optimisation (`bind_sizes`), and calls with them run that object. Only the first
    SPECIALISE_SIZES sets of sizes are counted: a session of ever new shapes stays generic."""

    def __init__(self, device: CPUDevice, name: str, ast: Any, transcendentals: str | None, fast: CPUProgram,
                 optimised: bool = False):
        """`fast`: the first-tier object, or the optimised one (from the disk cache) when `optimised`."""
        self.device, self.name, self.ast, self.transcendentals = device, name, ast, transcendentals
        self.work = kernel_work(ast)
        self.current: CPUProgram = fast
        self.calls = 0
        self.future: Future | None = None
        self.tier = "fast"
        if optimised:
            self.future, self.tier = Future(), "opt"
            self.future.set_result(fast)
        self.generic = is_generic(ast)
        self.counts: dict[tuple[int, ...], int] = {}       # sizes → calls with them
        self.due: list[tuple[int, ...]] = []               # sizes to compile for, at the next `optimise`
        self.pending: dict[tuple[int, ...], Future] = {}   # sizes → their object, being compiled
        self.special: dict[tuple[int, ...], CPUProgram] = {}   # sizes → their object

    def hot(self) -> bool:
        """Whether the kernel ran often enough to be optimised (`settings.hot_calls` times, or once
        with more than `settings.hot_work` operations), or to be compiled for sizes it keeps
        running with, and that is not yet on its way."""
        if self.future is None:
            return self.calls >= settings.hot_calls or (self.calls >= 1 and self.work > settings.hot_work)
        return bool(self.due)

    def optimise(self) -> None:
        if self.future is None:
            self.future = self.device.optimise_later(self.name, self.ast, self.transcendentals)
            return
        from lazyarr.compiler.rangeify import bind_sizes
        for sizes in self.due:
            self.pending[sizes] = self.device.optimise_later(self.name, bind_sizes(self.ast, sizes), self.transcendentals)
        self.due = []

    def __call__(self, buffers: list[Buffer], extra: list[int] = ()) -> None:
        self.calls += 1
        if self.generic:
            special = self.special.get(extra)
            if special is not None:
                return special(buffers)
            self._count(extra)
        if self.tier == "fast" and self.future is not None and self.future.done():
            if self.future.exception() is None:
                self.current, self.tier = self.future.result(), "opt"
            else:
                self.tier = "first tier only"   # the optimised compile failed: keep what runs
        self.current(buffers, extra)

    def _count(self, sizes: tuple[int, ...]) -> None:
        """Count a call with `sizes`; take the objects for sizes that are ready."""
        n = self.counts.get(sizes)
        if n is not None or len(self.counts) < SPECIALISE_SIZES:
            n = self.counts[sizes] = (n or 0) + 1
            if n == SPECIALISE_CALLS:
                self.due.append(sizes)
        for done in [k for k, f in self.pending.items() if f.done()]:
            f = self.pending.pop(done)
            if f.exception() is None:   # (a failed compile leaves those sizes on the generic object)
                self.special[done] = f.result()

    def wait(self) -> str:
        """Block until the optimised objects asked for (if any) are ready; the tier the next call runs."""
        for f in self.pending.values():
            f.exception()
        if self.future is not None:
            self.future.exception()
            if self.tier == "fast":
                self.current, self.tier = (self.future.result(), "opt") if self.future.exception() is None else \
                    (self.current, "first tier only")
        return self.tier


class KernelPlan:
    """What is left to do for a kernel once its Python work (codegen) is done: `build()` compiles
    it (a subprocess) and loads it; it may run on another thread."""

    def __init__(self, build: Callable[[], Any]):
        self.build = build


def _cached_program(name: str, key: str) -> CPUProgram | None:
    """The kernel loaded from disk cache entry `key` (graph-keyed: it has no source here), or None
    when there is no sound entry. Loaded on the caller's thread: an entry that dlopen refuses is
    removed and the caller compiles the kernel, which needs codegen on the thread owning the graph."""
    path = lookup("kernels", key, ".so")   # verified once per process, creates no entry
    if path is None:
        return None
    try:
        return CPUProgram(name, "", path)
    except CompileError as e:
        discard(path, f"could not be loaded ({str(e).splitlines()[0]})")
        return None
