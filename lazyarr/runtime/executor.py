"""Run a schedule: compile its kernels (memory cache, then disk cache, then the compilers, all of
the schedule's missing kernels at once and in parallel: `compile_all`), allocate each kernel's
buffers, and launch it, in order. With LAZYARR_DEBUG ≥ 1 each launch prints its
kernel, size and time; with ≥ 2 the source too; `lazyarr.debug.profile` collects the same times.
On a terminal, compiling that takes more than a second shows a progress line.

Storage is reused where it is safe: a kernel's new output takes over the storage of an argument
it reads only elementwise at the output's index (`item.inplace`: (output, argument) pairs) when
no later kernel uses that argument and no graph can read it anymore (`readable(buffer)` is
false), so updates such as `p = p - lr * g` run in place. A call that writes through an input
(`lazyarr.calls`) writes into the input's storage under the same condition, and into a copy of
it otherwise. (On the CPU, pooled memory comes with its address known: a launch looks none up.)
"""
from __future__ import annotations

import math
import time
import sys
from concurrent.futures import Future, ThreadPoolExecutor, TimeoutError as FutureTimeout
from typing import Any, Callable

import numpy as np

from lazyarr import settings
from lazyarr.compiler.uop import UOp
from lazyarr.runtime.call_abi import as_numpy_args, c_wrapper, scalar_bits
from lazyarr.runtime.device import RealView
from lazyarr.runtime.items import CallItem, CopyItem, ScheduleItem

_programs: dict[tuple, Any] = {}
_installed = [0]   # programs put in _programs so far: a memo of compile_all is good while it is unchanged
_pool = ThreadPoolExecutor(max_workers=max(1, settings.threads), thread_name_prefix="lazyarr-compile")


def _planned(item: Any) -> bool:
    """Whether item's device plans its kernel from the graph (the CPU's tiers: `Device.plans_kernels`)."""
    return type(item.ast) is UOp and item.device.plans_kernels


def _program_key(item: Any) -> tuple:
    """Kernels of devices that plan them are known by their graph and the settings that change
    their code (`settings.config`), which costs no codegen; others by their source."""
    if _planned(item):
        return (item.device.name, item.ast, settings.config())
    return (item.device.name, item.source)


def get_program(item: Any) -> Any:
    key = _program_key(item)
    prog = _programs.get(key)
    if prog is None:
        compile_all([item])
        prog = _programs[key]
    return prog


def install(key: tuple, prog: Any) -> None:
    """`prog` is the program of the kernels of `key` from now on (a search found it faster)."""
    _programs[key] = prog
    _installed[0] += 1


def compile_all(items: list[Any], memo: list | None = None) -> list[Any]:
    """Compile the kernels of `items` that are not compiled yet: their Python work (codegen) one
    after another, then the compilers in parallel (`settings.threads` at a time). First-tier
    kernels that have become hot start their optimised compile (their codegen here, for at most
    `settings.optimise_budget` seconds per run; the rest at later runs). Returns the programs.
    `memo`: a list the caller keeps for items of the same kernels in the same order (a cached
    schedule's), which remembers their programs until any program is installed."""
    start = time.perf_counter()
    if memo and memo[0] is _programs and memo[1] == _installed[0]:
        programs = memo[2]
        for prog in programs:
            optimise_if_hot(prog, start)
        return programs
    programs = _compile_all(items, start)
    if memo is not None:
        memo[:] = [_programs, _installed[0], programs]
    return programs


def optimise_if_hot(prog: Any, start: float) -> None:
    """A first-tier kernel that ran often starts its optimised compile (in the background), while
    this run's budget for that codegen (`settings.optimise_budget`, from `start`) lasts."""
    hot = getattr(prog, "hot", None)
    if hot is not None and hot() and time.perf_counter() - start < settings.optimise_budget:
        prog.optimise()


def _compile_all(items: list[Any], start: float) -> list[Any]:
    plans: dict[tuple, Any] = {}
    together: dict[Any, dict[tuple, Any]] = {}   # per device: the kernels it builds as one program
    keys = [_program_key(item) for item in items]
    for item, key in zip(items, keys):
        prog = _programs.get(key)
        if prog is not None:
            optimise_if_hot(prog, start)
            continue
        if key in plans:
            continue
        if _planned(item):
            plans[key] = item.device.plan_kernel(item)
        elif type(item) is ScheduleItem:
            together.setdefault(item.device, {})[key] = item   # built in one program, below
        else:
            install(key, _compile(item))
    for device, kernels in together.items():
        for key, prog in zip(kernels, device.compile_many([(it.name, it.source) for it in kernels.values()])):
            install(key, prog)
    if plans:
        if len(plans) > 1:
            futures = [_pool.submit(p.build) for p in plans.values()]
            built = _with_progress(futures, start)
        else:
            built = [p.build() for p in plans.values()]
        for key, prog in zip(plans, built):
            install(key, prog)
    return [_programs[k] for k in keys]


PROGRESS_AFTER = 1.0   # seconds of compiling after which a terminal shows a progress line


def _with_progress(futures: list[Future], start: float) -> list[Any]:
    """The futures' results in order; on a terminal, a line counting them once compiling has taken
    longer than PROGRESS_AFTER seconds (rewritten in place, cleared at the end)."""
    shown = False
    for k, f in enumerate(futures if sys.stderr.isatty() else ()):
        while True:
            try:
                f.result(timeout=0.2)
                break
            except FutureTimeout:
                if time.perf_counter() - start > PROGRESS_AFTER:
                    sys.stderr.write(f"\rlazyarr: compiling kernels {k}/{len(futures)}, "
                                     f"{time.perf_counter() - start:.1f} s")
                    sys.stderr.flush()
                    shown = True
    if shown:
        sys.stderr.write("\r" + " " * 60 + "\r")
        sys.stderr.flush()
    return [f.result() for f in futures]


def _copy(buffers: list[Any]) -> None:
    dst, src = buffers
    src.device.synchronize()
    dst.copyin(src.numpy())


def _compile(item: Any) -> Any:
    if type(item) is CopyItem and item.ast is None:
        return _copy
    if not isinstance(item, CallItem):
        return item.device.compile(item.name, item.source)
    spec = item.spec
    # a call's program is shared by calls of the same code: it takes the call's spec (scalars,
    # global size) with the buffers at each launch
    if spec.source is not None and not item.device.host_memory:
        return _opencl_call(item.device, spec)
    if spec.source is not None:
        source, entry = c_wrapper(spec)
        prog = item.device.compile(entry, source)
        return lambda buffers, call: prog(buffers, [scalar_bits(v) for v in call.scalars])
    if not item.device.host_memory:
        return _on_the_host
    return lambda buffers, call: call.routine(*as_numpy_args(call, buffers), *call.scalars)


def _on_the_host(buffers: list[Any], call: Any) -> None:
    """A precompiled routine on a device whose memory is not the host's: a round trip through the
    host (its inputs copied there, the routine run on them, its results copied back), which
    LAZYARR_DEBUG ≥ 1 reports with the bytes it moved."""
    n_out = len(call.outputs)
    outs = [np.empty(shape, d.np) for shape, d in call.outputs]
    ins = [b.numpy()[:math.prod(shape)].reshape(shape) for b, (shape, _) in zip(buffers[n_out:], call.input_specs)]
    for j, a in enumerate(ins):
        a.flags.writeable = j in call.writes
    call.routine(*outs, *ins, *call.scalars)
    for b, a in zip(buffers[:n_out], outs):
        b.copyin(a)
    for j in call.writes:
        buffers[n_out + j].copyin(ins[j])
    if settings.debug >= 1:
        moved = sum(a.nbytes for a in outs + ins) + sum(ins[j].nbytes for j in call.writes)
        print(f"host round trip: {call.name} on {buffers[0].device.name if buffers else 'its device'} "
              f"runs on the host ({moved} bytes copied)")


def _opencl_call(device: Any, spec: Any) -> Callable[[list[Any], Any], None]:
    """A custom OpenCL kernel: built from the user's source, launched over the call's global size
    (the first result's elements by default) with the buffers, then the scalars as long or double."""
    prog = device.compile(spec.name, spec.source)

    def launch(buffers: list[Any], call: Any) -> None:
        size = call.global_size or (math.prod(call.result_shapes[0]) if call.result_shapes else 1,)
        scalars = [np.int64(v) if isinstance(v, int) else np.float64(v) for v in call.scalars]
        if math.prod(size):
            prog.launch(buffers, size, scalars)
    return launch


def _can_lend(b: Any, out: Any, i: int, last_use: dict[Any, int], readable: Callable[[Any], bool]) -> bool:
    """Whether buffer b, last used by kernel i, may hand its storage to that kernel's output `out`."""
    return last_use[b] == i and lendable(b, out, readable)


def lendable(b: Any, out: Any, readable: Callable[[Any], bool]) -> bool:
    """Whether buffer b, past its last use, may hand its storage to output `out`."""
    return b.storage is not None and b.owns and b.nbytes == out.nbytes and b.device is out.device and \
        b.base is None and not readable(b)


def dead(b: Any, readable: Callable[[Any], bool]) -> bool:
    """Whether buffer b, after its last use, can give its storage back: memory this buffer owns,
    that no graph reads and that shares storage with no complex view (so a long chain of kernels,
    such as a sort's stages, cycles through a few hot buffers)."""
    return b.owns and b.storage is not None and b.base is None and b._real is None and \
        type(b) is not RealView and not readable(b)


# the recorders of launches (`lazyarr.debug.profile`): each is called with a launched item and its
# time in seconds (measured to the device's completion, so profiling synchronizes every launch)
profiles: list[Callable[[Any, float], None]] = []
# the recorders of what runs (`lazyarr.capture`): each is called before every launch with its item,
# program, arguments and extra arguments, and after a host copy into a written input's new
# buffer with (None, None, [destination, source], ())
recorders: list[Callable[[Any, Any, list, tuple], None]] = []


def plain_launches() -> bool:
    """Whether launches may run without the executor (`lazyarr.runtime.prepared`): nothing records
    or times them, and no debug output asks for each one."""
    return not recorders and not profiles and settings.debug < 1


def installed() -> tuple[dict, int]:
    """The program cache and how many programs were put in it so far: programs looked up earlier
    are still the cache's while both are the same (a program installed later replaces one)."""
    return _programs, _installed[0]


def run(items: list[Any], readable: Callable[[Any], bool] = lambda b: True, programs: list[Any] | None = None) -> None:
    """Run `items` in order; `programs`: their programs, as `compile_all(items)` returned them."""
    progs = programs if programs is not None else compile_all(items)
    last_use: dict[Any, int] = {}
    for i, item in enumerate(items):
        for b in item.buffers:
            last_use[b] = i
    last_of: list[list[Any]] = [[] for _ in items]   # the buffers each kernel uses last
    for b, i in last_use.items():
        last_of[i].append(b)
    debug = settings.debug
    for i, (item, prog) in enumerate(zip(items, progs)):
        buffers = item.buffers
        for o, k in item.inplace:   # an argument read only at the output's index that nothing needs later
            if buffers[o].storage is None and _can_lend(buffers[k], buffers[o], i, last_use, readable):
                buffers[o].take_storage(buffers[k])
        if type(item) is CallItem:
            for src, dst in item.written():   # a written input: its storage if nothing reads it, else a copy
                if dst.storage is None and _can_lend(src, dst, i, last_use, readable):
                    dst.take_storage(src)
                elif dst.storage is None:
                    dst.copyin(np.array(src.numpy(), copy=True))
                    for record in recorders:
                        record(None, None, [dst, src], ())
            args, extra = item.arguments(), (item.spec,)
        else:   # a shape-generic kernel takes its sizes after the buffers, then the scalars
            args, extra = buffers, (item.sizes, item.scalars) if item.sizes or item.scalars else ()
        for b in buffers:
            if b.storage is None:
                b.ensure_allocated()
        for record in recorders:
            record(item, prog, args, extra)
        if debug >= 1 or profiles:
            start = time.perf_counter()
            prog(args, *extra)
            item.device.synchronize()
            elapsed = time.perf_counter() - start
            for record in profiles:
                record(item, elapsed)
            if debug >= 1:
                sizes = item.sizes
                print(f"kernel {item.name:<28} {item.device.name:<9} {len(item.buffers)} bufs  "
                      f"{elapsed * 1e6:9.1f} us" + (f"  sizes {sizes}" if sizes else ""))
            if debug >= 2:
                print(item.source)
        else:
            prog(args, *extra)
        for b in last_of[i]:
            if dead(b, readable):
                b.release()
