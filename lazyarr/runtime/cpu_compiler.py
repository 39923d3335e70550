"""The C compiler driver of the CPU device: gcc (-O3 -march=native) and the fast compiler (tcc),
objects in the disk cache keyed by source or by kernel graph (`kernel_key`), and the tiers a
kernel goes through (`TieredProgram`, `KernelPlan`; see `lazyarr.runtime.cpu`)."""
from __future__ import annotations

import functools
import hashlib
import math
import os
import shutil
import subprocess
import tempfile
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from lazyarr import settings
from lazyarr.compiler.rangeify import bind_sizes
from lazyarr.compiler.uop import GroupOp, Ops, is_generic, op_cost
from lazyarr.runtime.cache import cache_key, discard, load_cached, lookup, source_hash
from lazyarr.runtime.cpu_program import CPUProgram
from lazyarr.runtime.device import Buffer
from lazyarr.runtime.errors import CompileError

FAST_CFLAGS = ["-shared", "-fPIC"]
CFLAGS = ["-O3", "-march=native", "-fopenmp", "-fwrapv", "-ffp-contract=off", "-fno-math-errno", "-std=gnu11",
          "-shared", "-fPIC", "-fno-plt"]


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


def compile_kernel(name: str, source: str, key: str | None = None, tier: str = "opt",
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


@functools.lru_cache(maxsize=None)
def compiler_code_hash() -> str:
    """A hash of the code that turns a kernel graph into source: an entry keyed by a graph is
    stale once this changes."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # the package's folder
    paths = [os.path.join(root, folder, name) for folder in ("compiler", "runtime")
             for name in sorted(os.listdir(os.path.join(root, folder))) if name.endswith(".py")]
    return source_hash(paths + [os.path.join(root, name) for name in ("ops.py", "dtypes.py", "settings.py")])


def _arg_text(arg: Any) -> str:
    if isinstance(arg, float):
        return arg.hex()
    if isinstance(arg, tuple):
        return "(" + ",".join(_arg_text(a) for a in arg) + ")"
    return repr(arg)


_graph_hashes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_OP_NUMBER = {op: op.value for op in Ops}   # (an enum's .value is a Python-level property)


def graph_hash(ast: Any) -> str:
    """A hash of the kernel graph's structure: each node's op, dtype, arg and sources, in order."""
    h = _graph_hashes.get(ast)
    if h is None:
        index: dict[int, int] = {}
        parts = []
        for i, u in enumerate(ast.toposort()):
            index[id(u)] = i
            parts.append((_OP_NUMBER[u.op], u.dtype.name, _arg_text(u.arg) if u.arg is not None else "",
                          tuple([index[id(x)] for x in u.src])))
        h = _graph_hashes[ast] = hashlib.sha256(repr(parts).encode()).hexdigest()
    return h


def note_graph_hash(ast: Any, h: str) -> None:
    """Take h as graph_hash(ast): a schedule read from disk carries its kernels' hashes (hashing a
    kernel's graph costs ~0.7 ms, a few of which were most of a fresh process's first loop)."""
    _graph_hashes[ast] = h


def kernel_key(ast: Any, tier: str, transcendentals: str | None) -> str:
    """The disk cache key of a kernel graph's compiled object on a tier ("opt" or "fast")."""
    cc = settings.fast_cc if tier == "fast" else settings.cc
    flags = FAST_CFLAGS if tier == "fast" else CFLAGS
    return cache_key("cpu-kernel", tier, compiler_identity(cc), " ".join(flags), compiler_code_hash(),
                     f"{transcendentals} {settings.config()!r}", graph_hash(ast))


def kernel_work(ast: Any) -> int:
    """Loads, stores and ALU operations the kernel executes (each node once per iteration of the
    loops around it; an op as its `op_cost`: a transcendental function as several)."""
    return sum(math.prod(r.src[0].arg if r.src[0].op is Ops.CONST else 1 for r in u.ranges) *
               op_cost(u.op)
               for u in ast.toposort() if u.op in GroupOp.ALU or u.op in (Ops.LOAD, Ops.STORE))


@functools.lru_cache(maxsize=None)
def fast_compiler_available(cc: str) -> bool:
    return shutil.which(cc) is not None


background_compiles = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lazyarr-optimise")


def wait_for_optimised() -> None:
    """Block until the optimised compiles asked for so far are done (benchmarks measure the tier a
    long-running program settles in; the compiles run one at a time, in order)."""
    background_compiles.submit(lambda: None).result()


SPECIALISE_CALLS = 64   # calls with one set of sizes after which a shape-generic kernel is compiled for them
SPECIALISE_WORK = 1 << 20   # or operations done with them (a loop's segment: few calls, each of much work)
SPECIALISE_SIZES = 8    # the sets of sizes counted per kernel


def _specialise(calls: int, work: int) -> bool:
    """Whether `calls` calls with one set of sizes, each of `work` operations, earn code of their own."""
    return calls >= SPECIALISE_CALLS or calls * work >= SPECIALISE_WORK


class TieredProgram:
    """A kernel running on its first-tier object until the optimised one is loaded. Once it is hot
    (`hot`), the executor asks for the optimised object at the start of a later
    schedule run (`optimise`: rendered on the caller's thread, which owns the graph, and compiled
    on a background one), and the first call after it is ready swaps it in.

    A shape-generic kernel (its sizes are arguments) is optimised without kernel optimisation,
    which needs the sizes. Once it has run SPECIALISE_CALLS times with one set of sizes (every
    step of a training loop runs the same ones), or done SPECIALISE_WORK operations with them (a
    never-realized loop's segment of sixteen iterations: a few calls a run, each of much work, on
    generic code 1.4x slower), it is also compiled for those sizes alone, with
    kernel optimisation (`bind_sizes`), and calls with them run that object. Only the first
    SPECIALISE_SIZES sets of sizes are counted: a session of ever new shapes stays generic."""

    def __init__(self, device: Any, name: str, ast: Any, transcendentals: str | None, fast: CPUProgram,
                 optimised: bool = False):
        """`fast`: the first-tier object, or the optimised one (from the disk cache) when `optimised`."""
        self.device, self.name, self.ast, self.transcendentals = device, name, ast, transcendentals
        self.work = kernel_work(ast)
        self.current: CPUProgram = fast
        self.calls = 0
        self.done = 0   # operations its calls did (a shape-generic kernel's: its work times its largest size)
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
        self.failed: set[tuple[int, ...]] = set()              # sizes whose compile failed: not asked again

    def hot(self) -> bool:
        """Whether the kernel ran enough to be optimised (its calls did more than `settings.hot_work`
        operations in all, or there were `settings.hot_calls` of them), or to be compiled for sizes
        it keeps running with, and that is not yet on its way."""
        if self.future is None:
            return self.calls >= settings.hot_calls or self.done > settings.hot_work
        return bool(self.due)

    def optimise(self) -> None:
        if self.future is None:
            self.future = self.device.optimise_later(self.name, self.ast, self.transcendentals)
            return
        for sizes in self.due:
            self.pending[sizes] = self.device.optimise_later(self.name, bind_sizes(self.ast, sizes), self.transcendentals)
        self.due = []

    def __call__(self, buffers: list[Buffer], extra: list[int] = (), scalars: tuple = ()) -> None:
        obj, specialised = self.object_for(extra)
        obj(buffers, () if specialised else extra, scalars)

    def object_for(self, sizes: tuple[int, ...]) -> tuple[CPUProgram, bool]:
        """Count a call with `sizes` (a shape-generic kernel's size arguments) and return the object
        it runs and whether that object is specialised to the sizes (it takes no size words)."""
        self.calls += 1
        # (a shape-generic kernel's work counts each loop of argument length once: its largest size
        # stands for them, a rough measure, which is all hotness needs)
        work = self.work * max(sizes) if self.generic and sizes else self.work
        self.done += work
        if self.generic:
            special = self.special.get(sizes)
            if special is not None:
                return special, True
            self._count(sizes, work)
        if self.tier == "fast" and self.future is not None and self.future.done():
            if self.future.exception() is None:
                self.current, self.tier = self.future.result(), "opt"
            else:
                self.tier = "first tier only"   # the optimised compile failed: keep what runs
        return self.current, False

    def settled(self, sizes: tuple[int, ...]) -> bool:
        """Whether calls with `sizes` run their last object: no better one will come."""
        if self.tier == "fast":
            return False
        if not self.generic or sizes in self.special or sizes in self.failed:
            return True
        return sizes not in self.counts and len(self.counts) >= SPECIALISE_SIZES   # never specialised

    def for_plan(self, sizes: tuple[int, ...]) -> tuple[CPUProgram, bool, bool]:
        """For a launch plan, which calls objects directly and runs often: ask now for the objects a
        hot kernel gets (the optimised one; for a shape-generic kernel, one for `sizes`), and return
        the object a call with `sizes` runs now, whether it is specialised to them (it takes no size
        words), and whether a better one is still on its way."""
        if self.future is None:
            self.optimise()
        if self.generic:
            if sizes not in self.special and sizes not in self.pending and sizes not in self.failed:
                self.pending[sizes] = self.device.optimise_later(self.name, bind_sizes(self.ast, sizes),
                                                                 self.transcendentals)
            f = self.pending.get(sizes)
            if f is not None and f.done():
                self._take(sizes)
            if sizes in self.special:
                return self.special[sizes], True, False
        if self.tier == "fast" and self.future.done():
            self.current, self.tier = (self.future.result(), "opt") if self.future.exception() is None else \
                (self.current, "first tier only")
        return self.current, False, self.tier == "fast" or (self.generic and sizes in self.pending)

    def _count(self, sizes: tuple[int, ...], work: int) -> None:
        """Count a call with `sizes` (of `work` operations); take the objects for sizes that are ready."""
        n = self.counts.get(sizes)
        if n is not None or len(self.counts) < SPECIALISE_SIZES:
            n = self.counts[sizes] = (n or 0) + 1
            if _specialise(n, work) and not _specialise(n - 1, work):   # (once: a call's work is the sizes')
                self.due.append(sizes)
        for done in [k for k, f in self.pending.items() if f.done()]:
            self._take(done)

    def _take(self, sizes: tuple[int, ...]) -> None:
        """The compile for `sizes` is done: its object, or (it failed) those sizes stay on the
        generic object for good."""
        f = self.pending.pop(sizes)
        if f.exception() is None:
            self.special[sizes] = f.result()
        else:
            self.failed.add(sizes)

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


def cached_program(name: str, key: str) -> CPUProgram | None:
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
