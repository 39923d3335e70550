"""Run a schedule: compile each kernel (memory cache, then disk cache, then the compiler),
allocate its buffers, and launch it, in order. With LAZYARR_DEBUG ≥ 1 each launch prints its
kernel, size and time; with ≥ 2 the source too."""
from __future__ import annotations

import time
from typing import Any, Callable

from lazyarr import settings

_programs: dict[tuple[str, str], Any] = {}


def get_program(item: Any) -> Any:
    key = (item.device.name, item.source)
    prog = _programs.get(key)
    if prog is None:
        prog = _programs[key] = item.device.compile(item.name, item.source)
    return prog


def run(items: list[Any], readable: Callable[[Any], bool] = lambda b: True) -> None:
    """Launch the kernels in order. A kernel's new output takes over the storage of an argument it
    reads only elementwise at the output's index (`item.inplace`) when no later kernel uses that
    argument and no graph can read it anymore (`readable(buffer)` is false): updates such as
    `p = p - lr * g` then run in place, without allocating."""
    last_use: dict[int, int] = {}
    for i, item in enumerate(items):
        for b in item.buffers:
            last_use[id(b)] = i
    for i, item in enumerate(items):
        prog = get_program(item)
        out = item.buffers[0]
        if out.storage is None:
            for k in item.inplace:
                b = item.buffers[k]
                if b.storage is not None and last_use[id(b)] == i and b.nbytes == out.nbytes and \
                        b.device is out.device and b.base is None and not readable(b):
                    out.take_storage(b)
                    break
        for b in item.buffers:
            b.ensure_allocated()
        if settings.debug >= 1:
            start = time.perf_counter()
            prog(item.buffers)
            item.device.synchronize()
            elapsed = time.perf_counter() - start
            print(f"kernel {item.name:<28} {item.device.name:<9} {len(item.buffers)} bufs  "
                  f"{elapsed * 1e6:9.1f} us")
            if settings.debug >= 2:
                print(item.source)
        else:
            prog(item.buffers)
