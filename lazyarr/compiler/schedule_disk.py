"""The schedule cache on disk: a graph structure scheduled by one process is not scheduled again by
the next (a script's first run of a loop otherwise schedules each of its structures anew: tens of
milliseconds where the kernels themselves take a few).

An entry is the schedule cache's (`schedule.CachedSchedule`): the kernels of a structure with its
input buffers as parameters. Its key is the structure's key (`walk.structure_key`, whose atoms
are numbered alike in every process: `uop.atom_number`), the devices, the settings that change
code (`settings.config()`) and a hash of lazyarr's own source, so an entry written by other code is
never read. Its content is plain data: the kernels' graphs as lists of nodes (op, dtype, sources,
argument), each kernel's device by name, sizes, outputs, scalar slots and in-place pairs, and a CPU
kernel's graph hash (`cpu_compiler.graph_hash`, which its compile needs anyway: the next process
finds the compiled object by it without hashing the graph again, ~0.7 ms a kernel). Only
schedules of generated kernels are kept (a precompiled routine or a custom kernel holds Python
objects, and a copy runs between devices a later process may not have); only graphs whose
arguments are plain values (numbers, strings, tuples, ops). An entry that does not load, or does
not fit the graph asking for it, is ignored. Files live in the disk cache
(`lazyarr.runtime.cache`, kind "schedules"), with its integrity trailer, size limit and
LAZYARR_CACHE=0.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pickle
import re
from typing import Any

from lazyarr import dtypes, settings
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.dtypes import DType
from lazyarr.runtime.cache import cache_key, discard, kind_dir, read_bytes, source_hash, store_bytes
from lazyarr.runtime import cpu_compiler
from lazyarr.runtime.devices import get_device
from lazyarr.runtime.items import ScheduleItem

KIND, SUFFIX = "schedules", ".schedule"
FORMAT = 2


@functools.lru_cache(maxsize=None)
def _code_hash() -> str:
    """A hash of lazyarr's source (.py and .c): what a schedule is made by."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return source_hash([os.path.join(folder, name) for folder, _, files in sorted(os.walk(root))
                        for name in sorted(files) if name.endswith((".py", ".c"))])


def disk_key(key: tuple) -> str:
    """The disk cache key of a schedule cache key (structure bytes, device names, settings)."""
    structure, devices, config = key
    return cache_key("schedule", str(FORMAT), _code_hash(), repr(devices), repr(config),
                     hashlib.sha256(structure).hexdigest())


class _Unstorable(Exception):
    pass


def _plain(x: Any) -> bool:
    """Whether x is plain data that pickles to the same value in any process."""
    if x is None or type(x) in (bool, int, float, str, bytes):
        return True
    if type(x) is tuple:
        return all(_plain(e) for e in x)
    return type(x) is Ops


def encode(entry: Any) -> bytes | None:
    """A schedule cache entry as bytes, or None when it cannot be kept (see the module's docs)."""
    nodes: list[tuple] = []
    index: dict[UOp, int] = {}

    def node(ast: UOp) -> int:
        for u in ast.toposort():
            if u not in index:
                if not _plain(u.arg):
                    raise _Unstorable
                index[u] = len(nodes)
                nodes.append((u.op.name, repr(u.dtype), tuple([index[s] for s in u.src]), u.arg))
        return index[ast]
    try:
        kernels = []
        for item, refs in entry.kernels:
            if type(item) is not ScheduleItem or not _plain((item.sizes, item.scalars, item.slots, item._inplace)):
                return None
            hashed = cpu_compiler.graph_hash(item.ast) if item.device.plans_kernels else None
            kernels.append(((node(item.ast), item.device.name, item.sizes, item.outputs, item.scalars, item.slots,
                             item._inplace, hashed), refs))
    except _Unstorable:
        return None
    new = tuple((size, repr(dtype), device.name) for size, dtype, device in entry.new)
    kept = tuple((pos, device.name) for pos, device in entry.kept)
    return pickle.dumps((FORMAT, nodes, kernels, new, entry.outputs, entry.points, kept),
                        protocol=pickle.HIGHEST_PROTOCOL)


_VECTOR = re.compile(r"(.+)x(\d+)$")


@functools.lru_cache(maxsize=None)
def _dtype(text: str) -> DType:
    """The dtype whose repr is `text` (scalar, void, pointer or vector types)."""
    if text == "void":
        return dtypes.void
    if text.endswith("[reg]"):
        return dtypes.ptr(_dtype(text[:-5]), "reg")
    if text.endswith("*"):
        return dtypes.ptr(_dtype(text[:-1]))
    try:
        return dtypes.as_dtype(text)
    except TypeError:
        m = _VECTOR.match(text)
        if m is None:
            raise
        return dtypes.vector(_dtype(m.group(1)), int(m.group(2)))


def decode(data: bytes) -> tuple | None:
    """The fields of a schedule cache entry (new, kernels, outputs, points, kept) from `encode`'s
    bytes, or None when they are of another format."""
    fmt, nodes, kernels, new, outputs, points, kept = pickle.loads(data)
    if fmt != FORMAT:
        return None
    built: list[UOp] = []
    for op, dtype, src, arg in nodes:
        built.append(UOp(Ops[op], _dtype(dtype), tuple([built[i] for i in src]), arg))
    items = []
    for (ast, device, sizes, n_out, scalars, slots, inplace, hashed), refs in kernels:
        if type(hashed) is str and len(hashed) == 64:   # (a CPU kernel's)
            cpu_compiler.note_graph_hash(built[ast], hashed)
        items.append((ScheduleItem(built[ast], [], get_device(device), sizes, n_out, scalars, slots, inplace), refs))
    kernels = tuple(items)
    new = tuple((size, _dtype(dtype), get_device(device)) for size, dtype, device in new)
    kept = tuple((pos, get_device(device)) for pos, device in kept)
    return new, kernels, outputs, points, kept


def _enabled() -> bool:
    return settings.cache and settings.schedule_disk


MAX_KEY_BYTES = 1 << 16   # a larger structure (a whole loop, realized in stages) is not looked for
_absent: dict[tuple, None] = {}   # keys looked for in vain, this process (at most MAX_ABSENT)
MAX_ABSENT = 256


def load(key: tuple, n_inputs: int, n_nodes: int) -> tuple | None:
    """The fields of the entry for schedule cache key `key` of a graph of `n_inputs` input buffers
    and `n_nodes` nodes, or None (none, or it does not load or fit)."""
    if not _enabled() or len(key[0]) > MAX_KEY_BYTES or key in _absent:
        return None
    name = disk_key(key)
    data = read_bytes(KIND, name, SUFFIX)
    fields = None
    if data is not None:
        try:
            fields = decode(data)
        except Exception as e:   # damage the trailer did not catch: scheduled again
            discard(os.path.join(kind_dir(KIND), name + SUFFIX), f"could not be loaded ({type(e).__name__}: {e})")
    if fields is None or not _fits(fields, n_inputs, n_nodes):
        if len(_absent) >= MAX_ABSENT:
            _absent.clear()
        _absent[key] = None
        return None
    return fields


def _fits(fields: tuple, n_inputs: int, n_nodes: int) -> bool:
    """Whether an entry's buffer references and positions are within the graph's."""
    new, kernels, outputs, points, kept = fields
    refs = [r for _, rs in kernels for r in rs] + [r for r, _ in outputs]
    return all(r[1] < (n_inputs if r[0] == 0 else len(new)) for r in refs) and \
        all(p < n_nodes and j < len(new) for p, j in points) and all(p < n_nodes for p, _ in kept)


def store(key: tuple, entry: Any) -> None:
    """Keep a schedule cache entry on disk, where it can be kept."""
    if not _enabled() or len(key[0]) > MAX_KEY_BYTES:
        return
    data = encode(entry)
    if data is not None:
        try:
            store_bytes(KIND, disk_key(key), SUFFIX, data)
        except OSError:   # a full or read-only disk: the entry stays in this process only
            pass
