"""Settings, read from the environment once at import and changeable at run time.

LAZYARR_DEBUG     0 quiet; 1 each kernel run with its time; 2 adds sources; 3 adds the graph
                  after each compiler stage with the stage's time.
LAZYARR_CACHE     0 turns the disk cache of compiled kernels off (default 1).
LAZYARR_CACHE_DIR where the disk cache lives (default: $XDG_CACHE_HOME/lazyarr, or
                  ~/.cache/lazyarr), created private to the user; a folder that group or others
                  can write to, or of another user, is not used (a warning, and a private one instead).
LAZYARR_CACHE_LIMIT  the most bytes the disk cache keeps, PoCL's included (default 1G); a number of
                  bytes or with a suffix K, M, G (powers of 1024): 500M. 0: no limit. The least
                  recently used entries go first (lazyarr.runtime.cache).
LAZYARR_DEVICE    the default device (default "cpu").
LAZYARR_CC        the C compiler for the CPU device (default "gcc").
LAZYARR_NATIVE    0: the graph's node table and walk in Python, not C (default 1; lazyarr.compiler.native).
LAZYARR_SPLIT_REDUCEOP, LAZYARR_REDUCEOP_SPLIT_THRESHOLD, LAZYARR_REDUCEOP_SPLIT_SIZE
                  whether and when a large reduction over few outputs is split in two
                  (defaults 1, 32768, 22: see lazyarr.compiler.prepare).
LAZYARR_THREADS   threads a kernel's outer loop is split across (default: OMP_NUM_THREADS where set, else
                  the cores available).
LAZYARR_ADAPTIVE_THREADS  1 (default): fewer threads while other processes keep the cores busy.
LAZYARR_TIERED    0: every kernel compiled optimised at once; 1 (default): small kernels first
                  compiled by LAZYARR_FAST_CC (default "tcc", if installed) and recompiled optimised
                  in the background once they ran LAZYARR_HOT_CALLS times (default 2), or once with
                  more than LAZYARR_HOT_WORK operations (default 2^17); kernels of more than
                  LAZYARR_FAST_COMPILE_WORK operations (default 2^24) compile optimised at once.
                  A run spends at most LAZYARR_OPTIMISE_BUDGET_MS (default 20) rendering hot kernels.
LAZYARR_STAGE_NODES  a graph of more nodes than this (default 512) not yet realized is realized in
                  stages, each cut at values that repeat in a loop (lazyarr.compiler.stages); 0: never.
LAZYARR_OPTS      0 turns kernel optimisation (register tiles, vectors, cache blocks) off (default 1).
LAZYARR_TRANSCENDENTALS  "native" (the target's math library) or "approx" (the polynomial
                  decompositions of codegen stage 18) for exp, log, sin, tanh, pow, ...;
                  unset: each renderer's default, per function (the C renderer approximates
                  expm1, log1p and tanh, measured faster in bench/transcendentals.py).

The settings that change schedules or generated code (`CODE_SETTINGS`) make up `config()`, which
every cache's key includes; each can be changed at run time (`lazyarr.settings.opts = False`).
"""
from __future__ import annotations

import os


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {os.environ[name]!r}") from None


def _env_bytes(name: str, default: int) -> int:
    """A size in bytes: digits with an optional suffix K, M, G or T (powers of 1024, "500M", "1.5G")."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    number, unit = text.rstrip("bB").rstrip("iI"), 1
    if number[-1:].upper() in _UNITS:
        number, unit = number[:-1], _UNITS[number[-1].upper()]
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{name} must be a size in bytes, optionally with a suffix K, M, G or T (e.g. 500M), "
                         f"got {text!r}")
    return int(value * unit)


_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lazyarr")


debug: int = _env_int("LAZYARR_DEBUG", 0)
cache: bool = bool(_env_int("LAZYARR_CACHE", 1))
cache_dir: str = os.environ.get("LAZYARR_CACHE_DIR") or _default_cache_dir()
cache_limit: int = _env_bytes("LAZYARR_CACHE_LIMIT", 1 << 30)
default_device: str = os.environ.get("LAZYARR_DEVICE", "cpu")
cc: str = os.environ.get("LAZYARR_CC", "gcc")
native: bool = bool(_env_int("LAZYARR_NATIVE", 1))
transcendentals: str | None = os.environ.get("LAZYARR_TRANSCENDENTALS") or None
# prepare's split of large reductions over few outputs (see lazyarr/compiler/prepare.py)
split_reduceop: bool = bool(_env_int("LAZYARR_SPLIT_REDUCEOP", 1))
reduceop_split_threshold: int = _env_int("LAZYARR_REDUCEOP_SPLIT_THRESHOLD", 32768)
reduceop_split_size: int = _env_int("LAZYARR_REDUCEOP_SPLIT_SIZE", 22)


def _default_threads() -> int:
    """OpenMP's own setting where it is a positive integer (dask's workers get OMP_NUM_THREADS=1,
    so that each process's kernels keep to one core as NumPy's BLAS does there), else the cores
    this process may use."""
    omp = os.environ.get("OMP_NUM_THREADS", "").strip()
    if omp.isdigit() and int(omp) > 0:
        return int(omp)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# threads for a kernel's outer loop (OpenMP)
threads: int = _env_int("LAZYARR_THREADS", _default_threads())
# kernel optimisation (lazyarr.compiler.opts): actions on ranges chosen per kernel
opts: bool = bool(_env_int("LAZYARR_OPTS", 1))
# shape-generic kernels: a kernel whose values all have at most this many elements takes its sizes as
# arguments, so that other sizes reuse its compiled code (lazyarr.compiler.rangeify); 0: never
generic_sizes: int = _env_int("LAZYARR_GENERIC_SIZES", 1 << 14)
# a graph of more nodes than this (not yet realized) is realized in stages (lazyarr.compiler.stages); 0: never
stage_nodes: int = _env_int("LAZYARR_STAGE_NODES", 512)
# schedules kept in the disk cache too (lazyarr.compiler.schedule_disk), with `cache`
schedule_disk: bool = bool(_env_int("LAZYARR_SCHEDULE_DISK", 1))
# a realization in stages keeps its anchors' buffers (for other arrays whose graphs read them) up to
# this many bytes; past it, a stage's anchors that the next segment does not read are let go of
stage_keep_bytes: int = _env_bytes("LAZYARR_STAGE_KEEP", 256 << 20)
# tiered compilation (lazyarr.runtime.cpu)
tiered: bool = bool(_env_int("LAZYARR_TIERED", 1))
fast_cc: str = os.environ.get("LAZYARR_FAST_CC", "tcc")
# a first-tier kernel is optimised once its calls add up to more than hot_work operations, or after
# hot_calls calls (a small kernel's gcc compile, ~115 ms of a core, buys little: a test suite or an
# interactive session runs thousands of such kernels a few times each)
hot_calls: int = _env_int("LAZYARR_HOT_CALLS", 32)
fast_compile_work: int = _env_int("LAZYARR_FAST_COMPILE_WORK", 1 << 24)
hot_work: int = _env_int("LAZYARR_HOT_WORK", 1 << 17)
optimise_budget: float = _env_int("LAZYARR_OPTIMISE_BUDGET_MS", 20) / 1000
adaptive_threads: bool = bool(_env_int("LAZYARR_ADAPTIVE_THREADS", 1))

# ---- the configuration every cache keys on ------------------------------------------------------
# The settings that change a schedule or the code generated for it. Every cache of schedules,
# kernel sources, compiled programs and compiled objects includes `config()` in its key, so a
# setting changed mid-process (or between processes sharing the disk cache) never serves what
# another setting made. (The others change how work is done, not what is computed or generated.)
CODE_SETTINGS = ("transcendentals", "opts", "threads", "generic_sizes", "split_reduceop",
                 "reduceop_split_threshold", "reduceop_split_size", "cc", "fast_cc")


class _Settings(type(os)):
    """This module's class: an assignment to a setting forgets the configuration tuple, which is
    built again when next asked for (it is read on every realization and launch)."""

    def __setattr__(self, name: str, value: object) -> None:
        super().__setattr__(name, value)
        if name in CODE_SETTINGS:
            super().__setattr__("_config", None)


_config: tuple | None = None


def config() -> tuple:
    """The values of CODE_SETTINGS, as one hashable tuple."""
    global _config
    if _config is None:
        _config = tuple(globals()[name] for name in CODE_SETTINGS)
    return _config


import sys  # noqa: E402  (the module's class is set last, once every setting is defined)
sys.modules[__name__].__class__ = _Settings
