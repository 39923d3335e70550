"""The scheduler: which values become buffers (fusion decisions), and the kernels that fill them.

Given the tensor graphs to realize, in order:
1. every node already realized is replaced by a view of its buffer (`uop.realized`
   maps computed nodes to their buffers, weakly: an entry lives as long as the node does), and the graph is
   brought to prepared form (`prepare`: markers dropped, empty values folded, large reductions
   split);
2. realize points are chosen: each output that is not already a contiguous view of a buffer or
   another output reshaped (then a view of that one's buffer); each CONTIGUOUS and COPY.
   Everything else is fused into the kernel of the realize point that uses it: chains of
   elementwise and movement ops, and reductions with the work that feeds them and the work they
   feed, including a reduction whose result is broadcast back along the axes it reduced (a row's
   max used by every element of the row: it runs once per row, in its own loop inside the row's
   loop);
3. rangeify reports any reduction that a kernel would evaluate more often than it has outputs
   (broadcast along an outer axis); those get buffers of their own and the kernels are rebuilt;
4. each realize point becomes one kernel that stores its value into a new buffer, reading the
   other realize points' buffers; values of no elements get a buffer and no kernel. Elementwise
   points of one shape that read common inputs or one another are stored by one kernel of
   several outputs (`output_groups`: an optimizer's moments and parameter in one launch).
Kernels come out in dependency order. `ScheduleItem.source` renders a kernel without running it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from lazyarr import dtypes, settings
from lazyarr.compiler import schedule_disk
from lazyarr.compiler.buffer_views import buffer_view, is_buffer_view, view_buffer
from lazyarr.compiler.patterns import substitute
from lazyarr.compiler.prepare import contiguous_view, prepare
from lazyarr.compiler.rangeify import rangeify_kernel
from lazyarr.compiler.stages import POSITIONAL_NODES
from lazyarr.compiler.uop import GroupOp, Ops, UOp, native_module, op_cost, realized, scalar_var, under_reshapes
from lazyarr.compiler.walk import Walked, structure_key
from lazyarr.graph import call_result
from lazyarr.dtypes import DType
from lazyarr.runtime.device import Buffer, Device, RealView
from lazyarr.runtime.devices import get_device
from lazyarr.runtime.items import CallItem, CopyItem, ScheduleItem

_new_buffers = getattr(native_module, "new_buffers", None)   # (Buffer()s made in C: dozens a loop segment)
_mark_points = getattr(native_module, "mark_points", None)


def is_constant(u: UOp) -> bool:
    """Whether u is a constant, reshaped or broadcast. Such a node is never marked computed: it is
    cheaper to compute where it is read than to load, and a Python scalar's node is shared by every
    expression using that number (a realized `full((), 7)` made every later `x * 7` read a buffer
    instead of its kernel argument: a kernel of its own)."""
    while u.op in GroupOp.Movement:
        u = u.src[0]
    return u.op is Ops.CONST


def find_realize_points(roots: list[UOp], extra: set[UOp] = frozenset()) -> list[UOp]:
    """The nodes that get buffers of their own, in dependency order: the outputs, CONTIGUOUS and
    COPY nodes, the results of calls and their inputs that are not whole buffers, and `extra`
    (reductions that rangeify found would be computed redundantly)."""
    sink = UOp(Ops.SINK, dtypes.void, tuple(roots))
    order = sink.toposort(is_buffer_view)
    points = {r for r in roots if not is_buffer_view(r)} | set(extra)
    points |= {u for u in order if u.op in (Ops.CONTIGUOUS, Ops.COPY, Ops.CALL_RESULT) and not is_buffer_view(u)}
    # a copy copies a whole buffer, a call reads runs of storage from their start (and writes
    # whole buffers): any other source is materialised first
    points |= {s for u in order if u.op is Ops.COPY for s in u.src if not is_buffer_view(s)}
    points |= {s for u in order if u.op is Ops.CALL for i, s in enumerate(u.src)
               if not is_buffer_view(s) and (i in u.arg.writes or call_run(s) is None)}
    points |= recomputed_values(order, points)
    points |= padded_reductions(order, points)
    points |= expensive_shared_values(order, points)
    return [u for u in order if u in points]


def padded_reductions(order: list[UOp], points: set[UOp]) -> set[UOp]:
    """Values computing a large reduction (over RECOMPUTE_LIMIT elements in all) that a PAD reads:
    the pieces of a join (concatenate, stack, a row written into an array). Fused into the join's
    kernel, each piece is selected by position (a WHERE, whose sides are both computed at every
    position) and the kernel of several reductions loses the register tile:
    `concatenate([A @ B, C @ D])` of 512² matrices ran 70x slower than with the products first.
    Small reductions stay fused (a stack of a few sums: one kernel instead of several)."""
    work: dict[UOp, int] = {}   # the elements its kernel's reductions read in all (0: none)
    found: set[UOp] = set()
    for u in order:
        if is_buffer_view(u) or u in points:
            work[u] = 0
            continue
        below = sum(work.get(s, 0) for s in set(u.src))
        work[u] = u.src[0].size + below if u.op is Ops.REDUCE_AXIS else below
        if u.op is Ops.PAD:
            piece = u.src[0]
            while piece.op in GroupOp.Movement and not is_buffer_view(piece):
                piece = piece.src[0]
            if work.get(piece, 0) > RECOMPUTE_LIMIT and piece not in points and not is_buffer_view(piece):
                found.add(piece)
                work[piece] = work[u] = 0
    return found


# How many index contexts a value may be evaluated in by its kernel before it gets a buffer. One
# computing a reduction: four (a softmax's exp(x - max) is read by the row's sum and by the output,
# and stays fused; a loop body reading its previous value twice, once through a reduction, `w -
# A.T @ (A @ w - b)`, doubles the contexts every iteration, and gets a buffer every other one; with
# two, a training step's relu mask h > 0, read by the forward pass and the weight gradients, was a
# bool buffer that kept those matmuls from vectorising). Any other computed value: more, since
# recomputing it costs no loop (`diff(x, n=12)` reads its values at 13 offsets and is one kernel;
# a loop reading its state at two indexings, `x = x + roll(x, 1)`, doubles them every iteration).
RECOMPUTE_CONTEXTS = 4
RECOMPUTE_CONTEXTS_ELEMENTWISE = 32
_SAME_INDEX = GroupOp.Elementwise | {Ops.DETACH, Ops.NOOP}


def recomputed_values(order: list[UOp], points: set[UOp]) -> set[UOp]:
    """Values that the kernels reading them would evaluate at more different indexings (reached
    through different movement ops or reductions) than RECOMPUTE_CONTEXTS (values computing a
    reduction) or RECOMPUTE_CONTEXTS_ELEMENTWISE (others): fused, each indexing computes the value
    again, and in a loop never realized the count doubles with every iteration. Users first: a
    value's contexts are those of its users, a new one for each user that indexes it differently
    (SHRINKs add their offsets to their context's, so that shifted windows of one value are one
    context per offset, not one per path); a realize point starts a context of its own. Values
    computed from positions and constants alone (a mask of the even rows) are never stored: their
    recomputation is index arithmetic, cheaper than a load."""
    reduces: dict[UOp, bool] = {}   # whether the node's kernel computes a reduction for it
    # computed from positions and constants alone, in at most POSITIONAL_NODES operations (counting
    # shared ones again): free to recompute. (A larger one is not: a loop over an array built from
    # constants, such as a game of life on np.zeros, reads it at exponentially many indexings.)
    positional: dict[UOp, int] = {}   # its operations, or 0 where it is not positional
    for u in order:
        reduces[u] = not is_buffer_view(u) and (u.op is Ops.REDUCE_AXIS or any(
            reduces.get(s, False) and s not in points for s in u.src))
        if u.op in (Ops.IOTA, Ops.CONST, Ops.DEFINE_VAR):   # (DEFINE_VAR: a scalar argument)
            positional[u] = 1
        elif u.src and u.op is not Ops.REDUCE_AXIS and all(positional.get(s, 0) for s in u.src):
            size = 1 + sum(positional[s] for s in u.src)
            positional[u] = size if size <= POSITIONAL_NODES else 0
        else:
            positional[u] = 0
    users: dict[UOp, list[UOp]] = {}
    for u in order:
        if not is_buffer_view(u):   # (a buffer view's sources are not in `order` before it)
            for s in set(u.src):
                users.setdefault(s, []).append(u)
    limit = RECOMPUTE_CONTEXTS_ELEMENTWISE + 1   # (enough to know there are more)
    # the contexts (key, offsets) in which each node's sources see it. Keys are positions in `order`
    # and offsets tuples, never ids or None (whose hashes change from run to run), so that which
    # contexts a full set keeps, and so the schedule, is the same in every process
    seen: dict[UOp, frozenset] = {}
    found: set[UOp] = set()
    position = {u: i for i, u in enumerate(order)}
    for u in reversed(order):
        contexts: set = set()
        for v in users.get(u, ()):
            if v in points or v in found:
                contexts.add((position[v], ()))
            elif v.op in _SAME_INDEX:
                contexts.update(seen[v])
            elif v.op is Ops.SHRINK:
                begins = tuple(b for b, _ in v.arg)
                contexts.update((k, tuple(map(sum, zip(off, begins))) if off else begins) for k, off in seen[v])
            else:
                contexts.update((hash((position[v], c)), ()) for c in seen[v])
            if len(contexts) >= limit:
                break
        if not contexts:   # a root
            contexts = {(position[u], ())}
        bound = RECOMPUTE_CONTEXTS if reduces[u] else RECOMPUTE_CONTEXTS_ELEMENTWISE
        if len(contexts) > bound and u not in points and u.op not in GroupOp.Movement and u.src and \
                not is_buffer_view(u) and u.dtype.itemsize and not positional[u]:
            found.add(u)
            contexts = {(position[u], ())}
        seen[u] = frozenset(list(contexts)[:limit])
    return found


# Recomputing a value in each kernel that reads it costs its operations once per kernel; storing it
# costs a write and a read per element. Below this many elements, recomputing is cheaper than a kernel.
RECOMPUTE_LIMIT = 1 << 14


def expensive_shared_values(order: list[UOp], points: set[UOp]) -> set[UOp]:
    """Values worth a buffer of their own although nothing forces one: values that compute a
    transcendental function (and no reduction) and that the kernels of several realize points
    read, each of which would compute them again. (A value evaluated inside a loop it does not
    depend on, as a broadcast makes it, rangeify reports: see `redundant_reductions`.)"""
    costly: dict[UOp, bool] = {}
    for u in order:   # dependency order: sources first
        if is_buffer_view(u) or u in points:
            costly[u] = False
        elif u.op is Ops.REDUCE_AXIS or any(s.op is Ops.REDUCE_AXIS or costly.get(s) is None for s in u.src):
            costly[u] = None   # depends on a reduction
        else:
            costly[u] = op_cost(u.op) > 1 or any(costly[s] for s in u.src)
    found: set[UOp] = set()
    # users first: once a value has a buffer, the values under it are computed by its kernel alone
    for u in reversed(order):
        if costly.get(u) and u.size >= RECOMPUTE_LIMIT and u.op not in GroupOp.Movement:
            stops = points | found
            if sum(u in _kernel_nodes(p, stops) for p in stops) > 1:
                found.add(u)
    return found


def _kernel_nodes(point: UOp, points: set[UOp]) -> set[UOp]:
    """The nodes the kernel of `point` computes: its graph down to buffers and other points."""
    def stop(x: UOp) -> bool:
        return x in points or is_buffer_view(x)
    return {u for s in point.src for u in s.toposort(stop) if not stop(u)}


# A held value that its kernel computes in fewer operations than this (counting from buffers and
# the other values stored) is not stored: reading it again recomputes it as cheaply as a load
# (`xp.zeros(n)`, `arange(n) / n`, `x * 2 + 1`). A loop's state updated cheaply (`s = s + 1`) is
# stored once its unstored history reaches this cost, so what an iteration recomputes stays bounded.
CHEAP_OPS = 8


def held_values(held: list[UOp], roots: list[UOp]) -> list[tuple[UOp, Device]]:
    """The values, among the computed nodes that live arrays hold (`held`, in the walk's order), that
    a realization stores besides its outputs, each with the device of the array holding it: a loop
    that reads a scalar every iteration (`float(loss)`) but never realizes its state (`w`, `b`)
    would otherwise compute the state's whole history again at every read. A held movement op (a
    view, a broadcast) stores the value it moves instead. Not stored: the outputs, values of no
    elements, and cheap values (`CHEAP_OPS`), which a dead intermediate's fusion keeps. Decided by
    the graph's structure alone (the schedule cache's key marks the held nodes), so that equal keys
    store equal values."""
    if not held:
        return []
    skip, out, stored = set(roots), [], set()
    for n in held:
        array = n._holder()
        if array is None or n in skip:   # (gone since the walk; an output)
            continue
        while n.op in GroupOp.Movement:
            n = n.src[0]
        if n in skip or n in realized or n.op in GroupOp.Leaf or n.op is Ops.CALL or not n.dtype.itemsize:
            continue
        skip.add(n)
        if n.size and not _cheap(n, stored):
            out.append((n, array.device))
            stored.add(n)
    return out


def _cheap(n: UOp, stored: set[UOp]) -> bool:
    """Whether n's kernel computes it in fewer than CHEAP_OPS operations (each its `op_cost`) and no
    reduction, from buffers, realized values and the values in `stored`."""
    stack, seen, ops = [n], set(), 0
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if u is not n and (u in realized or u in stored):
            continue
        if u.op in (Ops.REDUCE_AXIS, Ops.CALL_RESULT):
            return False
        if u.op not in GroupOp.Movement and u.op not in GroupOp.Leaf:
            ops += op_cost(u.op)
            if ops >= CHEAP_OPS:
                return False
        stack.extend(u.src)
    return True


class Schedule:
    """A schedule: `items`, the kernels; `views`, each output (as given, and each held value
    stored) → the view of its buffer; `buffers`, every realize point → its view, recorded once the
    kernels ran; `stored`, the held values stored besides the outputs (`held_values`); `programs`,
    the cache entry's memo of the kernels' programs (executor.compile_all); `entry`, the schedule
    cache entry it was made from. (Slotted: one is made at every realization.)"""
    __slots__ = ("items", "views", "buffers", "stored", "programs", "entry")

    def __init__(self, items: list[ScheduleItem], views: dict[UOp, UOp], buffers: dict[UOp, UOp],
                 entry: CachedSchedule | None = None):
        self.items, self.views, self.buffers, self.entry = items, views, buffers, entry
        self.stored, self.programs = [], None


# A schedule cache entry: the kernels of a graph structure with its input buffers as parameters.
# A buffer reference is (0, i, real): the i-th input buffer of the graph, or (1, j, real): the j-th
# new buffer, of size, dtype and device `new[j]`; real: the complex buffer's real view. `points`
# places each new buffer in the graph (the position of its node in the structure's order), so that
# `realized` learns them as on a miss. A kernel is (its item without buffers, buffer references):
# the item of the first schedule (graph, device, size arguments' values, outputs, in-place pairs,
# which of the schedule's scalars its scalar arguments are, its source once generated), which later
# schedules copy.
@dataclass(frozen=True)
class CachedSchedule:
    new: tuple[tuple[int, DType, Device], ...]
    kernels: tuple[tuple[ScheduleItem | CallItem | CopyItem, tuple[tuple[int, int, bool], ...]], ...]
    outputs: tuple[tuple[tuple[int, int, bool], tuple[int, ...]], ...]
    points: tuple[tuple[int, int], ...]    # (position in the structure's order, new buffer)
    kept: tuple[tuple[int, Device], ...]   # the held values stored: (position in the order, device)
    programs: list = field(default_factory=list, compare=False)   # executor.compile_all's memo
    # how often it was used, and its kernels' launches once prepared (`runtime.prepared`, by the driver)
    launches: list = field(default_factory=lambda: [0, None], compare=False)


_schedule_cache: dict[tuple, CachedSchedule] = {}


def _instantiate(entry: CachedSchedule, inputs: list[Buffer], order: list[UOp],
                 outputs: list[tuple[UOp, Device]], scalars: list[Any]) -> Schedule:
    """The schedule of a cache entry on these input buffers and scalar values."""
    new, views, points = bind_entry(entry, inputs, order)
    pools = (inputs, new)
    items = []
    for template, refs in entry.kernels:   # each item a copy of the first one's, on these buffers
        it = object.__new__(type(template))
        it.__dict__.update(template.__dict__)
        it.buffers = [_referenced(pools, ref) for ref in refs]
        if it.slots:
            it.scalars = tuple([scalars[k] for k in it.slots])
        items.append(it)
    return Schedule(items, dict(zip([orig for orig, _ in outputs], views)), points, entry=entry)


def bind_entry(entry: CachedSchedule, inputs: list[Buffer], order: list[UOp]
               ) -> tuple[list[Buffer], list[UOp], dict[UOp, UOp]]:
    """A cache entry's new buffers for one run on these input buffers (the graph's, walked into
    `order`), the views of its outputs (the given ones, then the held values stored: in the order
    of `entry.outputs`) and its realize points' views."""
    new, views = _bound(entry, inputs)
    points = {order[pos]: buffer_view(new[j], order[pos].shape) for pos, j in entry.points} if entry.points else {}
    return new, views, points


def bind_and_mark(entry: CachedSchedule, inputs: list[Buffer], order: list[UOp]) -> tuple[list[Buffer], list[UOp]]:
    """bind_entry's new buffers and outputs' views, its realize points marked computed (their
    views in `realized`) instead of returned (in C where it is built: a loop's segment marks dozens)."""
    if _mark_points is None:
        new, views, points = bind_entry(entry, inputs, order)
        for p, view in points.items():
            realized[p] = view
        return new, views
    new, views = _bound(entry, inputs)
    if entry.points:
        _mark_points(new, entry.points, order)
    return new, views


def _bound(entry: CachedSchedule, inputs: list[Buffer]) -> tuple[list[Buffer], list[UOp]]:
    new = _new_buffers(entry.new) if _new_buffers is not None else \
        [Buffer(device, size, dtype) for size, dtype, device in entry.new]
    pools = (inputs, new)
    return new, [buffer_view(pools[ref[0]][ref[1]] if not ref[2] else _referenced(pools, ref), shape)
                 for ref, shape in entry.outputs]


def _referenced(pools: tuple[list[Buffer], list[Buffer]], ref: tuple[int, int, bool]) -> Buffer:
    """The buffer a cache entry's reference names (see CachedSchedule): an input or a new one, or
    its real view."""
    b = pools[ref[0]][ref[1]]
    return b.real_view() if ref[2] else b


def _record(sched: Schedule, inputs: list[Buffer], order: list[UOp], outputs: list[tuple[UOp, Device]],
            kept: list[tuple[UOp, Device]]) -> CachedSchedule:
    refs: dict[int, tuple[int, int, bool]] = {id(b): (0, i, False) for i, b in enumerate(inputs)}
    new: list[tuple[int, DType, Device]] = []

    def ref(b: Buffer) -> tuple[int, int, bool]:
        if id(b) not in refs:
            if isinstance(b, RealView):   # a complex buffer's real view: that of the complex buffer
                return ref(b.parent)[:2] + (True,)
            refs[id(b)] = (1, len(new), False)
            new.append((b.size, b.dtype, b.device))
        return refs[id(b)]
    kernels = tuple((_template(it), tuple(ref(b) for b in it.buffers)) for it in sched.items)
    outs = tuple((ref(view_buffer(sched.views[orig])), orig.shape) for orig, _ in outputs)
    position = {u: i for i, u in enumerate(order)}
    given = {orig for orig, _ in outputs}   # (an output's view is marked with the outputs')
    points = tuple((position[p], ref(view_buffer(v))[1]) for p, v in sched.buffers.items()
                   if p in position and p not in given and ref(view_buffer(v))[0] == 1 and not is_constant(p))
    return CachedSchedule(tuple(new), kernels, outs, points, tuple((position[u], d) for u, d in kept))


def _template(item: Any) -> Any:
    """The item without its buffers, its in-place pairs worked out: what later schedules copy."""
    if type(item) is ScheduleItem:
        return replace(item, buffers=[], _inplace=item.inplace)
    return replace(item, buffers=[])


def create_schedule(outputs: list[tuple[UOp, Device]], walked: Walked | None = None) -> Schedule:
    """The kernels that compute `outputs` (nodes with their devices), in dependency order. A graph
    of the same structure as an earlier one, on other buffers, reuses its kernels (the schedule
    cache) and skips fusion and rangeify. `walked`: structure_key's answer for `outputs`, if the
    caller has it. The values that live arrays hold are stored too (`held_values`): they are
    outputs after the given ones, and the schedule lists them (`stored`)."""
    roots = [u for u, _ in outputs]
    walked = walked or structure_key(roots, [d for _, d in outputs])
    entry = cached_entry(walked)
    order = walked.order
    # the held values to store: decided by the structure (the key marks the held nodes), so a
    # cached schedule knows them by their positions in the walk's order
    kept = [(order[i], d) for i, d in entry.kept] if entry is not None else held_values(walked.held, roots)
    if kept:   # nodes of the walked graph: its walk (and key, which marks them) stands for theirs
        outputs = outputs + kept
        roots = roots + [u for u, _ in kept]
    if entry is not None:
        sched = _instantiate(entry, walked.inputs, order, outputs, [c.arg for c in walked.scalars])
        sched.programs = entry.programs
    else:
        # realized nodes read from their buffers, liftable constants become the schedule's scalars
        # (so that no pass sees their values); remember which new node was which
        replace = dict(walked.resolved)
        replace.update((c, scalar_var(c.dtype, k)) for k, c in enumerate(walked.scalars))
        if replace:
            done: dict[UOp, UOp] = {}
            roots = [substitute(r, replace, done) for r in roots]
            original = {new: old for old, new in done.items() if old not in replace}
        else:
            original = {}
        sched = _build_schedule(roots, outputs)
        sched.buffers = {original.get(p, p): v for p, v in sched.buffers.items()}
        entry = _schedule_cache[walked.key] = _record(sched, walked.inputs, order, outputs, kept)
        schedule_disk.store(walked.key, entry)
        if walked.scalars:
            values = [c.arg for c in walked.scalars]
            for it in sched.items:
                if it.slots:
                    it.scalars = tuple([values[k] for k in it.slots])
    sched.stored = [u for u, _ in kept]
    return sched


def cache_composed(walked: Walked, outputs: list[tuple[UOp, Device]], views: dict[UOp, UOp],
                   parts: list[tuple[Schedule, Walked]]) -> None:
    """Cache the schedules that realized `outputs` one after another (`parts`: each schedule, its
    items on their buffers, with the walk it was looked up by) as the schedule of the graph of all
    of them (`walked`, its walk before any of them ran; `views`: each output's view now): a loop's
    stage segment (`lazyarr.realize`) then runs as one schedule the next time its structure comes,
    without being scheduled again. Each kernel's scalar arguments are renumbered from its part's
    scalars to the whole graph's (the same nodes)."""
    number = {c: k for k, c in enumerate(walked.scalars)}
    items: list[Any] = []
    buffers: dict[UOp, UOp] = {}
    for sched, part in parts:
        for it in sched.items:
            if it.slots:
                it = replace(it, slots=tuple(number[part.scalars[k]] for k in it.slots))
            items.append(it)
        buffers.update(sched.buffers)
        buffers.update(sched.views)
    composed = Schedule(items, views, buffers)
    entry = _schedule_cache[walked.key] = _record(composed, walked.inputs, walked.order, outputs, [])
    schedule_disk.store(walked.key, entry)


def _build_schedule(roots: list[UOp], outputs: list[tuple[UOp, Device]]) -> Schedule:
    """prepare, then the rounds of fusion and rangeify (`_Rounds`), then each output's view. An
    output that is another output reshaped is a view of that one's buffer (`reshaped_outputs`)."""
    aliases = reshaped_outputs(roots)
    if aliases:
        computed = [i for i in range(len(roots)) if i not in aliases]
        roots, outputs, given = [roots[i] for i in computed], [outputs[i] for i in computed], outputs
    dtypes_out = [r.dtype for r in roots]
    roots = prepare(roots)
    rounds = _Rounds(roots, outputs, dtypes_out)
    items, views = rounds.run()
    out_views = {}
    for (orig, _), r, d in zip(outputs, roots, dtypes_out):
        v = views.get(r, r)
        out_views[orig] = buffer_view(view_buffer(v).parent, orig.shape) if d.is_complex else v
    for i, j in aliases.items():
        orig = given[i][0]
        out_views[orig] = buffer_view(view_buffer(out_views[given[j][0]]), orig.shape)
    return Schedule(items, out_views, views)


def reshaped_outputs(roots: list[UOp]) -> dict[int, int]:
    """{i: j} for each output i that is output j under reshapes alone, j computed (not a buffer
    view), neither complex: i is then a view of j's buffer, not a kernel of its own. The commonest
    case is a held value: a view (`sum(x, axis=1)[:, None]`, `(A @ B).reshape(...)`) keeps the
    array it views alive, so that value is stored too (`held_values`), and the view was a copy of it."""
    position = {r: j for j, r in enumerate(roots) if not r.dtype.is_complex and not is_buffer_view(r)}
    aliases = {}
    for i, r in enumerate(roots):
        u = under_reshapes(r)   # (a reshape keeps the dtype: u is complex where r is)
        if u is not r and u in position:
            aliases[i] = position[u]
    return aliases


class _Rounds:
    """The rangeify feedback pass. A round chooses the realize points (`find_realize_points`),
    gives each a buffer and rangeifies each kernel; rangeify reports the reductions a kernel would
    evaluate more often than its work allows (`redundant`), and those become points of the next
    round. Invariants: a point keeps its buffer, and stays a point, in every later round (without
    that, the reductions under a point dropped would nest in its users' and be found a round
    later); a kernel no new point changed is rangeified once. Ends with a round that finds none
    (usually the second)."""

    def __init__(self, roots: list[UOp], outputs: list[tuple[UOp, Device]], dtypes_out: list[DType]):
        self.roots, self.default_device = roots, outputs[0][1]
        self.device_of = {r: d for r, (_, d) in zip(roots, outputs)}
        # complex roots are real pairs after prepare: their buffers are complex, written through their
        # real views; pairs that view real storage (x.view(complex64)) are copied into one
        self.complex_roots = {r: d for r, d in zip(roots, dtypes_out) if d.is_complex}
        self.points_kept: set[UOp] = {r for r in self.complex_roots
                                      if is_buffer_view(r) and not isinstance(view_buffer(r), RealView)}
        self.made: dict[UOp, Buffer] = {}
        self.rangeified: dict[tuple[UOp, UOp], tuple] = {}

    def run(self) -> tuple[list[ScheduleItem], dict[UOp, UOp]]:
        while True:
            points = find_realize_points(self.roots, self.points_kept)
            items, views, found = self.round(points)
            if not found:
                return items, views
            self.points_kept |= found | {p for p in points if p.op is not Ops.CALL_RESULT}

    def buffer(self, p: UOp) -> Buffer:
        if p not in self.made:
            device = self.device_of.get(p) or _graph_device(p) or self.default_device
            self.made[p] = Buffer(device, p.size // 2, self.complex_roots[p]).real_view() if p in self.complex_roots \
                else Buffer(device, p.size, p.dtype)
        return self.made[p]

    def round(self, points: list[UOp]) -> tuple[list[ScheduleItem], dict[UOp, UOp], set[UOp]]:
        """The items of one round, the points' views, and the reductions found redundant (when
        any is, the items are to be thrown away)."""
        buffers = {p: self.buffer(p) for p in points}
        views = {p: buffer_view(b, p.shape) for p, b in buffers.items()}
        items: list[ScheduleItem] = []
        replaced: dict[UOp, UOp] = {}
        found: set[UOp] = set()
        redundant_seen: set[UOp] = set()   # found, as the nodes of the kernels' values
        calls: dict[UOp, CallItem] = {}
        groups = output_groups(points, buffers, set(self.complex_roots))
        for p in points:
            if p.op is Ops.CALL_RESULT:
                call = p.src[0]
                if call not in calls:
                    calls[call] = _call_item(call, buffers, views, replaced)
                    items.append(calls[call])
                continue
            if p.size == 0:
                continue
            if p.op is Ops.COPY:
                src = view_buffer(substitute(p.src[0], views, replaced))
                items.append(CopyItem(None, [buffers[p], src], buffers[p].device))
                continue
            group = groups.get(p, (p,))
            if p is not group[-1]:
                continue   # stored by the kernel of its group's last point
            values = _group_values(group, views, replaced)
            key = (group, tuple(values))
            if found and key not in self.rangeified and any(n in redundant_seen for v in values for n in v.toposort()):
                continue   # computes a reduction found redundant: rangeified next round, once it has a buffer
            if key not in self.rangeified:
                renderer = buffers[p].device.renderer
                limit = min(generic_limit(v, renderer) for v in values)
                self.rangeified[key] = rangeify_kernel(buffers[group[0]], values[0], renderer.parallel_loops, limit,
                                                       [(buffers[m], v) for m, v in zip(group[1:], values[1:])])
            ast, bufs, redundant, sizes, slots = self.rangeified[key]
            if redundant:   # found in graphs with the points replaced: mapped back
                back = {new: old for old, new in replaced.items()}
                # a point realized already cannot be made cheaper by another round; the other
                # kernels are still rangeified, so that one round finds the reductions of them all
                new = {back.get(r, r) for r in redundant} - self.points_kept
                if new:
                    found |= new
                    redundant_seen.update(redundant)
                    continue
            if not found:
                items.append(ScheduleItem(ast, bufs, buffers[p].device, sizes, len(group), slots=slots))
        return items, views, found


def _group_values(group: tuple[UOp, ...], views: dict[UOp, UOp], replaced: dict[UOp, UOp]) -> list[UOp]:
    """The values a kernel of several outputs stores: the group's points read one another's
    values, not their buffers."""
    if len(group) == 1:
        return [_point_value(group[0], views, replaced)]
    inline, done = {k: v for k, v in views.items() if k not in group}, {}
    for m in group:
        done[m] = _point_value(m, inline, done)
    return [done[m] for m in group]


def _point_value(p: UOp, views: dict[UOp, UOp], replaced: dict[UOp, UOp]) -> UOp:
    """The value point p's kernel stores, reading the other points from their buffers (`views`)."""
    if p.op is Ops.CONTIGUOUS:
        return substitute(p.src[0], views, replaced)
    return p.replace(src=tuple(substitute(s, views, replaced) for s in p.src))


def output_groups(points: list[UOp], buffers: dict[UOp, Buffer], excluded: set[UOp]) -> dict[UOp, tuple[UOp, ...]]:
    """Points whose values one kernel of several outputs stores (each point → its group, in order; the
    kernel runs where the last of them was): elementwise values (no reduction, gather or call) of
    one shape and device that read a common buffer or one another, the later ones reading the
    earlier ones only elementwise (so that the kernel computes them at the same index), and no
    point between them reading one of them (it would run before the group's kernel). An
    optimizer's update is one kernel per parameter (its moments and the parameter) instead of three."""
    stops = set(points)
    nodes = {p: _kernel_nodes(p, stops) | {p} for p in points}   # what each point's kernel computes
    # point → the points and buffers its kernel reads
    reads = {p: {view_buffer(s) if is_buffer_view(s) else s for n in nodes[p] for s in n.src
                 if s in stops or is_buffer_view(s)} for p in points}
    groups: list[list[UOp]] = []
    position = {p: i for i, p in enumerate(points)}
    for q in points:
        if q.op in (Ops.COPY, Ops.CALL_RESULT) or q.size == 0 or q in excluded or \
                any(n.op in (Ops.REDUCE_AXIS, Ops.GATHER, Ops.CALL) for n in nodes[q]):
            continue   # not an elementwise value
        for g in groups:
            members = set(g)
            if g[0].shape != q.shape or buffers[g[0]].device is not buffers[q].device or \
                    not any(reads[q] & (reads[m] | {m}) for m in g):
                continue
            if _read_moved(nodes[q], members, stops):
                continue   # reads a member at other indices
            if any(reads[r] & members for r in points[position[g[0]] + 1:position[q]] if r not in members):
                continue
            g.append(q)
            break
        else:
            groups.append([q])
    return {p: tuple(g) for g in groups if len(g) > 1 for p in g}


def _read_moved(kernel_nodes: set[UOp], members: set[UOp], stops: set[UOp]) -> bool:
    """Whether the kernel computing `kernel_nodes` reads one of `members` under a movement op, that
    is at other indices than its own (as `flip(m * c)` reads `m`)."""
    stack = [s for n in kernel_nodes if n.op in GroupOp.Movement for s in n.src]
    seen: set[UOp] = set()
    while stack:
        u = stack.pop()
        if u in members:
            return True
        if u in seen or u in stops or is_buffer_view(u):
            continue
        seen.add(u)
        stack.extend(u.src)
    return False


def generic_limit(value: UOp, renderer: Any) -> int:
    """Up to which size the kernel computing `value` takes its sizes as arguments (0: none): small
    kernels on renderers that take them (`generic_sizes`), so that the many small shapes of an
    interactive session or a test do not each cost a compile. Large kernels keep their sizes in the
    code, which kernel optimisation needs (it splits loops by their lengths)."""
    limit = settings.generic_sizes if renderer.generic_sizes else 0
    # small: every value computed, and every reduction's input, has at most `limit` elements (a
    # buffer read through a slice may be larger)
    if limit and all(u.size <= limit and (u.op is not Ops.REDUCE_AXIS or u.src[0].size <= limit)
                     for u in value.toposort(is_buffer_view) if not is_buffer_view(u)):
        return limit
    return 0


def call_run(s: UOp) -> UOp | None:
    """The BUFFER that a call argument s reads from its start: s is the buffer's elements in order
    from offset 0 (`contiguous_view`), of its dtype, so the call takes the buffer as it is and
    reads s's elements; None for any other argument (it is copied into storage of its own)."""
    found = contiguous_view(s)
    if found is None:
        return None
    base, offset = found
    return base if offset == 0 and base.op is Ops.BUFFER and base.dtype == s.dtype else None


def _call_item(call: UOp, buffers: dict[UOp, Buffer], views: dict[UOp, UOp], replaced: dict[UOp, UOp]
               ) -> CallItem | ScheduleItem:
    """The item running a CALL: its results' buffers (unread results get buffers too), its inputs'
    buffers, and a buffer for each written input's new value. An IR kernel's item is a kernel's
    (it writes no input, and lends no output an input's storage)."""
    spec = call.arg
    device = spec.device or _graph_device(call) or get_device()
    results = []
    for i, dtype in enumerate(spec.result_dtypes):
        node = call_result(call, i)
        results.append(buffers.get(node) or Buffer(device, node.size, dtype))
    inputs = []
    for s in call.src:
        v = substitute(s, views, replaced)
        inputs.append(view_buffer(v) if is_buffer_view(v) else call_run(v).arg)
    n_out = len(spec.outputs)
    if spec.kernel is not None:   # a kernel written in the IR: generated and run as any other kernel
        return ScheduleItem(spec.kernel, results[:n_out] + inputs, device, (), n_out, _inplace=())
    return CallItem(spec, results[:n_out] + inputs + results[n_out:], device)


def _graph_device(u: UOp) -> Device | None:
    if u.op is Ops.CALL_RESULT:   # a call runs on the device it was made for, else on its inputs'
        u = u.src[0]
        if u.arg.device is not None:
            return u.arg.device
    for n in u.toposort(lambda x: x.op is Ops.COPY):
        if n.op is Ops.BUFFER:
            return n.arg.device
        if n.op is Ops.COPY:
            return n.arg
    return None


def is_cached(walked: Walked) -> bool:
    """Whether the schedule cache holds a schedule for graphs of the walked structure."""
    return cached_entry(walked) is not None


def cached_entry(walked: Walked) -> CachedSchedule | None:
    """The schedule cache's entry for the walked structure: this process's, else the disk's."""
    entry = _schedule_cache.get(walked.key)
    if entry is None:
        fields = schedule_disk.load(walked.key, len(walked.inputs), len(walked.order))
        if fields is not None:
            entry = _schedule_cache[walked.key] = CachedSchedule(*fields)
    return entry
