"""Builds and loads `uop_native.c` (then `walk_native.c`, `stages_native.c`, `record_native.c` and
`buffers_native.c`, compiled with it as one file): the intern table of graph nodes, the schedule cache's walk, the
stages' anchors, the recording of the commonest array operations and the buffer pass of prepared
launches in C. Every tensor operation builds nodes and
every realization walks its graph, so these loops are most of the Python time of a training step;
in C they cost a fraction of it.

The module is compiled by the CPU device's C compiler (`LAZYARR_CC`) against this Python's
headers on first import and kept in the disk cache (a few hundred ms, once; a cached object that
is damaged, which the cache detects, or that will not import is built again). Without a compiler or
the headers, or with LAZYARR_NATIVE=0, lazyarr warns (unless asked) and runs the Python versions
(`uop._PyNode`, `walk._walk`, `stages.stage_anchors`, and the recording modules' own paths), which
give the same results, more slowly.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import warnings
from types import ModuleType

from lazyarr import settings
from lazyarr.runtime.cache import cache_key, load_cached

SOURCES = [os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
           for name in ("uop_native.c", "walk_native.c", "stages_native.c", "record_native.c", "buffers_native.c")]
CFLAGS = ["-O2", "-shared", "-fPIC", "-fno-strict-aliasing"]


def load() -> ModuleType | None:
    """The compiled module, or None (LAZYARR_NATIVE=0, or it could not be built: with a warning)."""
    if not settings.native:
        return None
    try:
        return _build_and_import()
    except Exception as e:   # no compiler, no headers: the Python versions work the same
        warnings.warn(f"lazyarr: the C node table could not be built ({e}); using the Python one, "
                      f"which is slower (LAZYARR_NATIVE=0 asks for it without this warning)", RuntimeWarning)
        return None


def _build_and_import() -> ModuleType:
    cc = shutil.which(settings.cc)
    if cc is None:
        raise RuntimeError(f"no C compiler {settings.cc!r}")
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        raise RuntimeError(f"Python's headers are not installed ({include}/Python.h)")
    source = ""
    for path in SOURCES:
        with open(path) as f:
            source += f"#line 1 \"{os.path.basename(path)}\"\n" + f.read()
    st = os.stat(cc)
    key = cache_key("native", source, sys.version, include, f"{os.path.realpath(cc)} {st.st_size} {st.st_mtime_ns}",
                    " ".join(CFLAGS))

    def build(out_path: str) -> None:
        proc = subprocess.run([cc, *CFLAGS, "-I", include, "-x", "c", "-", "-o", out_path], input=source,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{settings.cc} failed on {' + '.join(map(os.path.basename, SOURCES))}:\n{proc.stderr}")
    def load(path: str) -> ModuleType:
        name = "lazyarr.compiler.uop_native"
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        return module
    # a cached object that does not import (dlopen's ImportError) is built again
    return load_cached("native", key, sysconfig.get_config_var("EXT_SUFFIX") or ".so", build, load, (ImportError,))
