"""Launch plans: a fixed list of kernel launches over fixed storage, run again and again by one call
(a captured training step, `lazyarr.capture`).

A plan is made of steps, each a kernel launch (`Launch`: its program, its arguments, its size
arguments and scalars) or a copy between two storages. On the CPU, a run of C kernels becomes one
call into C (`lz_run_plan`, in a small object compiled once and kept in the disk cache): the
argument words of every kernel are laid out once in one array, and only the words that change from
run to run (addresses bound at each run, the thread count) are patched, by the same call, from a
short array of values. Anything else (OpenCL kernels, precompiled routines, custom kernels) is
launched from Python with the plan's buffers, as the executor launches it.

A first-tier CPU kernel in a plan is asked for its optimised object when the plan is made (a plan
runs often); until it arrives the plan runs the first tier, and it looks again every
`RECHECK_RUNS` runs, so the optimised object is swapped in a few runs after it is ready.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from lazyarr.runtime.cpu_program import CPUProgram, _ffi, scalar_words, threads_now

RECHECK_RUNS = 16

_RUNNER = r"""
#include <stdint.h>
#include <string.h>
typedef void (*lz_kernel)(const uintptr_t*);
/* a: the number of kernels, their entry points, where each one's words start, the words, the
   number of words patched at each run, where they are and which value each takes, the values */
void lz_run_plan(const uintptr_t* a) {
  const int64_t n = (int64_t)a[0], npatch = (int64_t)a[4];
  const uintptr_t* fns = (const uintptr_t*)a[1];
  const int64_t* starts = (const int64_t*)a[2];
  uintptr_t* words = (uintptr_t*)a[3];
  const int64_t* at = (const int64_t*)a[5];
  const int64_t* from = (const int64_t*)a[6];
  const uintptr_t* values = (const uintptr_t*)a[7];
  for (int64_t i = 0; i < npatch; i++) words[at[i]] = values[from[i]];
  for (int64_t k = 0; k < n; k++) ((lz_kernel)fns[k])(words + starts[k]);
}
/* a copy step: destination, source, bytes */
void lz_copy(const uintptr_t* a) { memcpy((void*)a[0], (const void*)a[1], (size_t)a[2]); }
"""
_runner: list[CPUProgram] = []


def _runner_program() -> CPUProgram:
    if not _runner:
        from lazyarr.runtime.cpu_compiler import compile_kernel   # (the compiler driver imports this layer's peers)
        _runner.append(compile_kernel("lz_run_plan", _RUNNER))
    return _runner[0]


def _entry(prog: CPUProgram) -> int:
    return int(_ffi.cast("uintptr_t", prog.fn))


class Slot:
    """A word bound at each run: `values[index]` of the plan (an address, the thread count)."""
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


THREADS = Slot(0)   # value 0 of every plan: the threads a parallel loop may use now


class Launch:
    """A kernel launch: `program` (a CPUProgram, a TieredProgram, or any program the executor
    calls), its arguments (for a C kernel: each an address or a Slot; otherwise Buffers), its size
    arguments and scalars."""
    __slots__ = ("program", "args", "sizes", "scalars")

    def __init__(self, program: Any, args: Sequence[Any], sizes: tuple[int, ...] = (), scalars: tuple = ()):
        self.program, self.args, self.sizes, self.scalars = program, list(args), sizes, scalars

    def object_now(self) -> tuple[CPUProgram, tuple[int, ...], bool]:
        """The C object this launch runs now, the size words it takes, and whether a better object
        is on its way."""
        prog = self.program
        if isinstance(prog, CPUProgram):
            return prog, self.sizes, False
        obj, specialised, waiting = prog.for_plan(self.sizes)
        return obj, () if specialised else self.sizes, waiting


class CopyStep:
    """A copy of `nbytes` from one storage's address to another's (C plans)."""
    __slots__ = ("dst", "src", "nbytes")

    def __init__(self, dst: Any, src: Any, nbytes: int):
        self.dst, self.src, self.nbytes = dst, src, nbytes


def is_c_launch(prog: Any) -> bool:
    """Whether a program is a C kernel a plan can call directly (the CPU's kernels)."""
    return isinstance(prog, CPUProgram) or hasattr(prog, "for_plan")


class CallList:
    """C kernels called in order by one call into C (`lz_run_plan`): `fns`, their entry points;
    `parts`, each one's argument words, where a Slot is a word bound at each run from the values
    array (uint64 words: value 0 the thread count, the others the caller's)."""
    __slots__ = ("arrays", "head", "args", "fn")

    def __init__(self, fns: list[int], parts: list[list[Any]], values: int):
        """`values`: the address of the values array."""
        starts, words, patch_at, patch_from = [], [], [], []
        for p in parts:
            starts.append(len(words))
            for w in p:
                if type(w) is Slot:
                    patch_at.append(len(words))
                    patch_from.append(w.index)
                    words.append(0)
                else:
                    words.append(w)
        self.arrays = [np.array(fns, dtype=np.uint64), np.array(starts, dtype=np.int64),
                       np.array(words, dtype=np.uint64), np.array(patch_at, dtype=np.int64),
                       np.array(patch_from, dtype=np.int64)]
        fn_a, st_a, w_a, at_a, from_a = self.arrays
        self.head = np.array([len(fns), fn_a.ctypes.data, st_a.ctypes.data, w_a.ctypes.data, len(patch_at),
                              at_a.ctypes.data, from_a.ctypes.data, values], dtype=np.uint64)
        self.args = _ffi.cast("const uintptr_t*", self.head.ctypes.data)
        self.fn = _runner_program().fn

    def __call__(self) -> None:
        self.fn(self.args)


class CSegment:
    """A run of C launches and copies, run by one call into C (see the module's docs)."""

    def __init__(self, steps: list[Launch | CopyStep], values: np.ndarray):
        self.steps, self.values = steps, values
        self.runs = 0
        self._build()

    def _build(self) -> None:
        fns, parts = [], []
        self.waiting = False
        for step in self.steps:
            if isinstance(step, CopyStep):
                fns.append(_entry_of(_runner_program(), "lz_copy"))
                parts.append([step.dst, step.src, step.nbytes])
            else:
                obj, sizes, waiting = step.object_now()
                self.waiting |= waiting
                fns.append(_entry(obj))
                parts.append([*step.args, *sizes, *scalar_words(step.scalars), THREADS])
        self.calls = CallList(fns, parts, self.values.ctypes.data)

    def __call__(self) -> None:
        self.runs += 1
        if self.waiting and self.runs % RECHECK_RUNS == 0:
            self._build()
        self.calls()


_entries: dict[str, int] = {}


def _entry_of(prog: CPUProgram, symbol: str) -> int:
    if symbol not in _entries:
        from lazyarr.runtime.cpu_program import _dlsym
        _entries[symbol] = int(_ffi.cast("uintptr_t", _dlsym(prog.handle, symbol.encode())))
    return _entries[symbol]


class PySegment:
    """Launches run from Python with fixed buffers (other devices' kernels, calls, copies)."""

    def __init__(self, calls: list[Callable[[], None]]):
        self.calls = calls

    def __call__(self) -> None:
        for call in self.calls:
            call()


class LaunchPlan:
    """Segments run in order; `values` (uint64) holds the words bound at each run: value 0 is the
    thread count, the caller fills the others (addresses of storage bound per run)."""

    def __init__(self, segments: list[Any], values: np.ndarray):
        self.segments, self.values = segments, values

    def __call__(self) -> None:
        self.values[0] = threads_now()
        for segment in self.segments:
            segment()
