"""Stages: a graph too large to schedule at once is realized a piece at a time.

A loop that is never realized inside (`for _ in range(200): w = w - lr * A.T @ (A @ w - b)`) records
one graph of every iteration. Scheduled whole, its cost grows faster than its size (fusion and
rangeify look at every kernel's whole graph), and a kernel of many iterations recomputes shared
values. So a graph of more than `settings.stage_nodes` nodes (not counting what is realized
already) is cut at anchors, values that are realized first, in dependency order, each reading the
buffers of the anchors before it; then the graph itself is realized, reading theirs.

Anchors are chosen by structure, so that the same node of every iteration of a loop is one: a
value that several values read, one of them through a movement op or a reduction (`read_apart`: a
loop's state, read by the next iteration and by a product; a stencil's array, read shifted), which
fused would be computed again by each; and where no anchor comes for `MAX_LEVELS` levels of
computation along a path, the value there. (Values read elementwise alone fuse: a kernel computes
them once for all their readers.) The choice depends on the graph's structure only, so a program is
cut into the same kernels in every run and a warm kernel cache serves them all; each iteration's
piece of the graph has the same structure, and the schedule cache serves every piece after the
first. (Anchors chosen by a hash of their structure instead, one in eight, cut a loop by lottery:
a loop body whose update hashed right was one more kernel every iteration, and a stencil whose
state did not was computed again by each shifted read: 1M points, 100 steps, 0.95 s, now 0.1 s.)
Each anchor's structure down to `FINGERPRINT_DEPTH` levels (ops, dtypes, arguments and shapes, not
which buffers it reads nor the values of the constants that are kernel arguments) is its
fingerprint, the same in every process (`stable_hash`: Python's own hashes of strings, enums and
None are not), by which `segment_ends` finds where the body repeats.

Only values that can be stored as they are become anchors: not movement ops or markers (their
sources are), not values a reduction reads that are broadcast beyond the inputs they are computed
from (a matmul's product before its sum; a row written into an array, `where(iota == i, row, old)`,
is an array of its own), nor what one reduction alone reads directly (`summed_once`: a
matrix-vector product's products, as large as the matrix), not values computed from positions and
constants alone in at most `POSITIONAL_NODES` operations (`iota == i`: index arithmetic costs less
than a load), not calls or values of no elements. An anchor is realized on the device of the storage it reads (a BUFFER's, or a
COPY's target), else on the outputs' device; a value whose device is in doubt (it reads only values
realized on other devices, which may be constants computed again here; a leaf tensor's marker is not
in doubt, nor a value realized on the outputs' device) is not an anchor.

The anchors are realized in segments cut where the loop body repeats (`segment_ends`), each one
schedule once its structure is known: the first time, the anchors' own schedules together
(`lazyarr.realize._realize_stages`).
"""
from __future__ import annotations

import math
import struct
import zlib
from enum import Enum
from typing import Any

from lazyarr.compiler.uop import GroupOp, Ops, UOp, liftable, native_module, realized, under_reshapes

FINGERPRINT_DEPTH = 3
MAX_LEVELS = 24

_NOT_VALUES = GroupOp.Movement | {Ops.NOOP, Ops.DETACH, Ops.CALL, Ops.CONTIGUOUS, Ops.COPY}


def graph_nodes(roots: list[UOp]) -> list[UOp]:
    """The nodes of the graph under `roots` not yet realized, sources first (a realized node is a leaf)."""
    return UOp(Ops.SINK, roots[0].dtype, tuple(roots)).toposort(realized.__contains__)[:-1]


def needs_stages(order: list[UOp], limit: int) -> bool:
    """Whether a graph (its nodes, sources first) has a region of more than `limit` nodes that no
    explicit buffer (CONTIGUOUS, COPY) bounds: a kernel that large is what makes scheduling costly.
    A network of many small kernels (a sort's stages, each a CONTIGUOUS) is scheduled at once.
    (Shared sources count once per path: an overestimate, which only stages sooner.)"""
    if len(order) <= limit:
        return False
    region: dict[UOp, int] = {}
    for u in order:
        n = 1 + sum(region.get(s, 0) for s in u.src)
        if n > limit:
            return True
        region[u] = 0 if u.op in (Ops.CONTIGUOUS, Ops.COPY) or u in realized else n
    return False


def stage_anchors(roots: list[UOp], device: Any) -> list[tuple[UOp, Any, int]]:
    """The values to realize before `roots` (on `device`), in dependency order, with their devices
    and their structure's fingerprints. (In C where the node table is: `stages_native.c`, the same
    anchors; this is the reference.)"""
    if native_module is not None:
        return native_module.stage_anchors(UOp(Ops.SINK, roots[0].dtype, tuple(roots)), device)
    return py_stage_anchors(roots, device)


def py_stage_anchors(roots: list[UOp], device: Any) -> list[tuple[UOp, Any, int]]:
    """stage_anchors in Python."""
    order = graph_nodes(roots)
    # node → (its structure's hashes down to 0, 1, ... levels; the levels of computation since the
    # last anchor; the most elements of the unbroadcast values it reads; the device of the storage
    # it reads, None if none is known; whether it reads values realized elsewhere, of no storage known)
    info: dict[UOp, tuple] = {}
    anchors: list[tuple[UOp, Any, int]] = []
    reduced, summed, apart = reduction_inputs(order), summed_once(order), read_apart(order)
    # computed from positions and constants alone, in at most POSITIONAL_NODES operations (counting
    # shared ones again): recomputed where read, never stored. node -> its operations (0: not one)
    positional: dict[UOp, int] = {}
    skip, BUFFER, CALL, COPY, NOOP = set(roots), Ops.BUFFER, Ops.CALL, Ops.COPY, Ops.NOOP
    for u in order:
        op, arg = u.op, u.arg
        shape = () if op is CALL else u.shape   # a call has results, not a shape
        # (a buffer, and a constant whose value is a kernel argument, count by their kind alone;
        # shapes and movement args are tuples of ints, whose hashes are stable already)
        own = hash((op.value, _dtype_hash(u.dtype), shape, 0 if arg is None or op is BUFFER or liftable(u)
                    else hash(arg) if op in GroupOp.Movement else stable_hash(arg)))
        view = realized.get(u)
        if view is not None or not u.src:   # a leaf
            dev = arg.device if op is BUFFER else _storage_device(view) if view is not None else None
            if op is not BUFFER and op is not NOOP and dev is not device:   # (a value realized elsewhere)
                dev = None
            info[u] = ((own,) * (FINGERPRINT_DEPTH + 1), 0, math.prod(shape), dev, dev is None and view is not None)
            positional[u] = 1 if view is None and op in _POSITIONS else 0
            continue
        if op is not Ops.REDUCE_AXIS and all(positional[s] for s in u.src):
            ops = 1 + sum(positional[s] for s in u.src)
            positional[u] = ops if ops <= POSITIONAL_NODES else 0
        else:
            positional[u] = 0
        below = [info[s] for s in u.src]
        if len(below) == 1:
            (f, level, natural, dev, doubt), = below
            finger = (own, *[hash((own, h)) for h in f[:FINGERPRINT_DEPTH]])
        else:
            finger = (own, *[hash((own, *col)) for col in zip(*[b[0] for b in below])][:FINGERPRINT_DEPTH])
            level, natural = max(b[1] for b in below), max(b[2] for b in below)
            dev = next((b[3] for b in below if b[3] is not None), None)
            doubt = dev is None and any(b[4] for b in below)
        if op is COPY:
            dev = arg
        doubt = doubt and dev is None
        size = math.prod(shape)
        # (a pad is an array of its own size, not a broadcast: `traj[i] = state` pads the state into it)
        if op in _OWN_SIZE:
            natural = size
        elif op is Ops.SHRINK:
            natural = min(size, natural)
        step = op not in _NOT_VALUES
        level += step
        if step and u.dtype.itemsize and 0 < size and (size <= natural or u not in reduced) and u not in summed \
                and u not in skip and not doubt and not positional[u] and (level >= MAX_LEVELS or u in apart):
            anchors.append((u, dev or device, finger[-1]))
            level, dev = 0, dev or device
        info[u] = (finger, level, natural, dev, doubt)
    return anchors


SEGMENT_ANCHORS = 16   # about how many anchors one schedule realizes (see segment_ends)


def segment_ends(fingerprints: list[int]) -> list[int]:
    """Where to cut a list of anchors (their fingerprints, in order) into segments, each realized
    as one schedule, so that the segments inside a loop have one structure and the schedule cache
    serves them all: after every k-th anchor of the commonest fingerprint, the boundary (a loop
    body's anchors repeat; segments of a fixed count would cut the body elsewhere each time, and an
    occasional extra anchor would shift all that follow). The pieces between boundaries may repeat
    only every few pieces (an anchor that MAX_LEVELS forces every 25th iteration): k is a multiple
    of that period (`_period`), the one nearest SEGMENT_ANCHORS anchors a segment. A segment twice
    that long (a run without boundaries, such as a trajectory's writes after all the states they
    read) is cut again by its own commonest fingerprint. Returns the segments' end positions, the
    last being len(fingerprints)."""
    n = len(fingerprints)
    counts: dict[int, int] = {}
    for f in fingerprints:
        counts[f] = counts.get(f, 0) + 1
    boundary = max(counts, key=counts.get, default=0)
    if n <= SEGMENT_ANCHORS or counts[boundary] * SEGMENT_ANCHORS < n:   # (no body repeats often enough)
        return list(range(SEGMENT_ANCHORS, n, SEGMENT_ANCHORS)) + [n]
    pieces, piece, numbers = [], [], {}   # the pieces that end at a boundary, numbered by content
    for f in fingerprints:
        piece.append(f)
        if f == boundary:
            pieces.append(numbers.setdefault(tuple(piece), len(numbers)))
            piece = []
    period = _period(pieces)
    anchors_a_period = n * period / counts[boundary]
    every = period * max(1, round(SEGMENT_ANCHORS / anchors_a_period))   # boundaries a segment
    ends, seen = [], 0
    for i, f in enumerate(fingerprints):
        if f == boundary:
            seen += 1
            if seen % every == 0:
                ends.append(i + 1)
    if not ends or ends[-1] != n:
        ends.append(n)
    cut, start = [], 0
    for end in ends:
        if 2 * SEGMENT_ANCHORS < end - start < n:   # (equal segments are cut alike)
            cut += [start + e for e in segment_ends(fingerprints[start:end])]
        else:
            cut.append(end)
        start = end
    return cut


def _period(pieces: list[int]) -> int:
    """The smallest p such that the sequence repeats every p items, but for a few (a loop's first
    iterations and its last differ), up to a third of its length; 1 if there is none."""
    n = len(pieces)
    for p in range(1, n // 3 + 1):
        misses = sum(1 for i in range(n - p) if pieces[i] != pieces[i + p])
        if misses <= max(2, (n - p) // 10):
            return p
    return 1


_OWN_SIZE = (Ops.REDUCE_AXIS, Ops.CALL_RESULT, Ops.PAD)
_POSITIONS = (Ops.IOTA, Ops.CONST, Ops.DEFINE_VAR)
# a value computed from positions and constants in at most this many operations is cheaper to compute
# again where it is read than to load (a mask of the even rows, `iota == i`); a larger one is not (a
# loop over an array made from constants, such as a heat equation on sin(linspace(...)))
POSITIONAL_NODES = 64
_PASS_TO_REDUCTION = GroupOp.Elementwise | GroupOp.Movement | {Ops.NOOP, Ops.DETACH}


def reduction_inputs(order: list[UOp]) -> set[UOp]:
    """The nodes of `order` (sources first) that a reduction reads through elementwise and movement
    ops only: there a value broadcast beyond its inputs is the reduction's work (a matmul's product),
    not an array of its own."""
    reduced: set[UOp] = set()
    for u in reversed(order):
        if u not in realized and (u.op is Ops.REDUCE_AXIS or u in reduced and u.op in _PASS_TO_REDUCTION):
            reduced.update(u.src)
    return reduced


def summed_once(order: list[UOp]) -> set[UOp]:
    """The nodes of `order` that one reduction alone reads, directly (a matmul's product,
    `sum(x * y)`'s product): stored, such a value would be written by one kernel and read once by the next; inside
    the reduction's kernel it costs the same work and no memory. (A source read twice counts twice.)"""
    readers: dict[UOp, int] = {}
    summed = set()
    for u in order:
        if u not in realized:
            for s in u.src:
                readers[s] = readers.get(s, 0) + 1
            if u.op is Ops.REDUCE_AXIS:
                summed.update(u.src)
    return {s for s in summed if readers[s] == 1}


def read_apart(order: list[UOp]) -> set[UOp]:
    """The nodes of `order` that several values read (through movement ops), one of them a movement
    op or a reduction: fused into its readers, each would compute it again at its own positions (a
    loop's state, read by the next iteration and by a product; a stencil's array, read shifted).
    Values read elementwise alone fuse without computing anything twice: one kernel computes them
    once for all their readers."""
    shared: dict[UOp, int] = {}
    moved: set[UOp] = set()
    for u in reversed(order):   # (readers before what they read)
        if u not in realized:
            movement = u.op in GroupOp.Movement
            weight = shared.get(u, 0) if movement else 1
            if movement or u.op is Ops.REDUCE_AXIS:
                moved.update(u.src)
            for s in dict.fromkeys(u.src):
                shared[s] = shared.get(s, 0) + weight
    return {u for u in moved if shared[u] >= 2}


def stable_hash(x: Any) -> int:
    """A hash of x that is the same in every process (Python's hashes of strings, enums and None
    change from run to run), so that a graph is cut at the same anchors, into the same kernels,
    every time."""
    t = type(x)
    if t is int or t is bool:
        return hash(x)
    if t is tuple:
        return hash(tuple(stable_hash(e) for e in x))
    if t is float:
        return struct.unpack("<q", struct.pack("<d", x))[0] if x == x else 1
    if x is None:
        return 0
    if isinstance(x, Enum):
        return stable_hash(x.value)
    text = x if t is str else getattr(x, "name", None)
    return zlib.crc32((text if isinstance(text, str) else t.__name__).encode())


_dtype_hashes: dict[int, int] = {}


def _dtype_hash(d: Any) -> int:
    h = _dtype_hashes.get(id(d))   # (dtypes are interned)
    if h is None:
        h = _dtype_hashes[id(d)] = stable_hash(d)
    return h


def _storage_device(view: UOp | None) -> Any:
    """The device of the buffer a realized marker (a leaf tensor's, which has storage) reads."""
    view = under_reshapes(view) if view is not None else None
    return view.arg.device if view is not None and view.op is Ops.BUFFER else None


if native_module is not None:
    native_module.setup_stages(stable_hash, _storage_device, _NOT_VALUES, GroupOp.Movement, frozenset(_OWN_SIZE),
                               _PASS_TO_REDUCTION, frozenset(_POSITIONS), POSITIONAL_NODES, Ops.CALL, Ops.COPY,
                               Ops.NOOP, Ops.SHRINK, Ops.REDUCE_AXIS, FINGERPRINT_DEPTH, MAX_LEVELS)
