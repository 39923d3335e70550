"""Kernel optimisation by search: time variants of the heuristic's actions and keep the fastest.

The heuristic (`lazyarr.compiler.opts.heuristic`) chooses a kernel's actions by rule. For users
who want the last bit, `search(*tensors)` schedules the tensors and, for each CPU kernel, times
the heuristic's actions against variants of them: no actions, each action dropped, each amount
halved and doubled. Each variant is rendered and compiled optimised (variants that the actions
cannot take, or that fail to compile, are skipped), run on inputs of random values, checked
against the heuristic's result on the same inputs (floats to 1e-4 relative, the sums change
order; others exactly), and timed: the median of `runs` launches.

The winner becomes the kernel's optimised program: in this process (the executor's programs) and
in the disk cache under the kernel's key, so that a later process loads it without searching.
Kernels on other devices are left alone (OpenCL's work-group sizes follow rules of their own).
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from lazyarr import settings
from lazyarr.compiler.codegen import generate, kernel_name
from lazyarr.compiler.opts import Opt, analyse, heuristic, inapplicable
from lazyarr.compiler.schedule import ScheduleItem, create_schedule
from lazyarr.compiler.symbolic import simplify
from lazyarr.runtime import executor
from lazyarr.runtime.cache import store_copy
from lazyarr.runtime.cpu_compiler import kernel_key
from lazyarr.runtime.device import Buffer
from lazyarr.runtime.errors import CompileError


@dataclass
class SearchResult:
    name: str
    heuristic: list[Opt]
    heuristic_seconds: float
    best: list[Opt]
    best_seconds: float
    variants: int      # variants timed (the heuristic's included)

    def __repr__(self) -> str:
        return (f"{self.name}: heuristic {self.heuristic} {self.heuristic_seconds * 1e6:.1f} us, "
                f"best {self.best} {self.best_seconds * 1e6:.1f} us ({self.variants} timed)")


def variants(opts: list[Opt]) -> list[list[Opt]]:
    """The heuristic's actions first, then none, each dropped, each amount halved and doubled."""
    out = [list(opts), []]
    for i, o in enumerate(opts):
        out.append(opts[:i] + opts[i + 1:])
        for amount in (o.amount // 2, o.amount * 2):
            if o.amount > 1 and amount > 1:
                out.append(opts[:i] + [replace(o, amount=amount)] + opts[i + 1:])
    unique: list[list[Opt]] = []
    for v in out:
        if v not in unique:
            unique.append(v)
    return unique


def search(*tensors: Any, runs: int = 5) -> list[SearchResult]:
    """Search each CPU kernel of realizing `tensors` (see the module docstring). Returns what was
    found per kernel; the tensors are not realized."""
    items = create_schedule([(t.uop, t.device) for t in tensors]).items
    results = []
    for item in items:
        if isinstance(item, ScheduleItem) and item.device.host_memory and settings.opts:
            result = _search_kernel(item, runs)
            if result is not None:
                results.append(result)
    return results


def _search_kernel(item: Any, runs: int) -> SearchResult | None:
    device, renderer = item.device, item.device.renderer
    target = renderer.opt_target()
    k = analyse(simplify(item.ast)) if target is not None else None
    if k is None:
        return None
    name = kernel_name(item.ast)
    buffers = _random_buffers(item)
    timed: list[tuple[float, list[Opt], Any]] = []
    expected = None
    for opts in variants(heuristic(k, target)):
        if inapplicable(k.sink, opts) is not None:
            continue   # actions this kernel cannot take
        try:
            prog = device.compile(name, generate(item.ast, renderer, name=name, opts=opts).source)
        except CompileError:   # a variant the C compiler refuses (its message is in the debug output)
            continue
        out = _run(prog, buffers)
        if expected is None:
            expected = out
        elif not _agrees(out, expected):
            continue
        timed.append((_time(prog, buffers, runs), opts, prog))
    if not timed:
        return None
    first = timed[0]
    best = min(timed, key=lambda t: t[0])
    _install(item, best[2], kernel_key(item.ast, "opt", settings.transcendentals), executor)
    return SearchResult(name, first[1], first[0], best[1], best[0], len(timed))


def _random_buffers(item: Any) -> list[Any]:
    """New buffers of the kernel's sizes and dtypes, inputs filled with random values."""
    rng = np.random.default_rng(0)
    out = []
    for b in item.buffers:
        fresh = Buffer(b.device, b.size, b.dtype).ensure_allocated()
        np_dtype = np.dtype(b.dtype.np)
        if np_dtype.kind == "f":
            data = rng.standard_normal(b.size)
        elif np_dtype.kind == "b":
            data = rng.integers(0, 2, b.size)
        else:
            data = rng.integers(0, 100, b.size)
        fresh.copyin(data.astype(np_dtype))
        out.append(fresh)
    return out


def _run(prog: Any, buffers: list[Any]) -> np.ndarray:
    prog(buffers)
    return np.array(buffers[0].numpy(), copy=True)


def _agrees(got: np.ndarray, want: np.ndarray) -> bool:
    if got.dtype.kind == "f":
        return bool(np.allclose(got, want, rtol=1e-4, atol=1e-6, equal_nan=True))
    return bool(np.array_equal(got, want))


def _time(prog: Any, buffers: list[Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        prog(buffers)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _install(item: Any, prog: Any, key: str, executor: Any) -> None:
    """`prog` becomes the kernel's optimised program, now and in the disk cache."""
    executor.install(executor._program_key(item), prog)
    if not settings.cache:
        return
    store_copy("kernels", key, ".so", prog.path)   # written atomically, with its hash
