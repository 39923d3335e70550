"""Realization: the graphs of tensors become values in buffers. A graph too large to schedule at
once is realized in stages first (`stages_first`, `lazyarr.compiler.stages`); `schedule_realize`
schedules the graphs (`lazyarr.compiler.schedule`), compiles the kernels
(`lazyarr.runtime.executor.compile_all`) and records each computed node's buffer in `realized`;
`run` launches the kernels, lending storage that no graph can read anymore (`buffer_readable`).
A structure that keeps coming back skips the schedule: `replay` binds its prepared launches."""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

from lazyarr import settings
from lazyarr.compiler.buffer_views import view_buffer
from lazyarr.compiler.schedule import (bind_and_mark, cache_composed, cached_entry, create_schedule, is_cached,
                                      is_constant)
from lazyarr.compiler.walk import Walked, is_held, structure_key
from lazyarr.compiler.stages import needs_stages, segment_ends, stage_anchors
from lazyarr.compiler.uop import Ops, UOp, node_exists, realized
from lazyarr.runtime.device import Buffer, Device, RealView
from lazyarr.runtime import executor
from lazyarr.runtime.items import CallItem, ScheduleItem
from lazyarr.runtime.prepared import PreparedLaunches


PREPARE_AFTER = 1   # uses of a cached schedule after which its launches are prepared (the first: it came back)


def buffer_readable(b: Buffer) -> bool:
    """Whether any graph can still read buffer b (its BUFFER node is alive, or that of the complex
    buffer it is the real view of, or that of its real view)."""
    if node_exists(Ops.BUFFER, b.dtype, (), b):
        return True
    if isinstance(b, RealView):
        return node_exists(Ops.BUFFER, b.parent.dtype, (), b.parent)
    view = b._real() if b._real is not None else None
    return view is not None and node_exists(Ops.BUFFER, view.dtype, (), view)


def walk_for_realize(roots: list[UOp], devices: list[Device]) -> Walked:
    """The walk of a graph about to be realized (`walk.structure_key`), stopped at twice
    `settings.stage_nodes` nodes: a graph that large is likely realized in stages, and its own
    key (a loop's: thousands of words, hashed, and looked up on disk) would serve nothing."""
    return structure_key(roots, devices, 2 * settings.stage_nodes)


def stages_first(roots: list[UOp], devices: list[Device], walked: Walked) -> tuple[Walked, list[UOp]]:
    """A graph too large to schedule at once (`walked`, its walk: `walk_for_realize`'s), and not
    in the schedule cache, has its stages (`lazyarr.compiler.stages`) realized first. Returns the
    graph's walk then (it reads the stages' buffers) and the held values the stages stored. (A
    walk that stopped early has only met its first nodes, sources first: where they already hold a
    region too large for one schedule, the graph is realized in stages without its whole walk; a
    graph that needs stages is never one cached schedule, as its realization caches its segments.)"""
    if walked.stopped and not needs_stages(walked.order, settings.stage_nodes):
        walked = structure_key(roots, devices)   # (the whole walk, then as any graph)
    if walked.stopped or (settings.stage_nodes and needs_stages(walked.order, settings.stage_nodes) and
                          not is_cached(walked)):
        stored = _realize_stages(roots, devices[0])
        return structure_key(roots, devices), stored
    return walked, []


def schedule_realize(outputs: list[tuple[UOp, Device]], walked: Walked | None = None, parts: list | None = None
                     ) -> tuple[dict[UOp, UOp], list[ScheduleItem], list[Any], list[UOp], list[UOp]]:
    """The views the outputs will have, the kernels that fill them, their compiled programs, if a
    library routine is among them the nodes `realized` now knows the views of (it holds nodes
    weakly; `run` forgets them again if the routine fails), and the values that live arrays hold
    which the schedule stores too (`schedule.held_values`: their views are in `realized`, and the caller
    gives the arrays their buffers). (A graph too large to schedule at once has its stages
    realized first: `stages_first`.) Run the kernels with `run` once the caller has let go of the
    graphs it no longer needs, so that their buffers' storage can be reused. `walked`: the
    outputs' `structure_key`, where the caller has it. `parts`: a list the schedule and its walk
    are appended to (its items then stay a list, for `schedule.cache_composed`)."""
    walked = walked or structure_key([u for u, _ in outputs], [d for _, d in outputs])
    sched = create_schedule(outputs, walked)
    if parts is not None:
        parts.append((sched, walked))
    # compiled first: a kernel that fails to compile leaves nothing marked computed
    programs = executor.compile_all(sched.items, sched.programs)
    if sched.entry is not None:
        _count_use(sched.entry, programs, len(walked.inputs), len(walked.scalars))
    marked = []
    for found in (sched.buffers, sched.views):
        for p, v in found.items():
            if p is not v and not is_constant(p):
                realized[p] = v
                marked.append(p)
    # only a library routine can fail on its data (a singular matrix); otherwise the nodes are not
    # held, so that the buffers of graphs let go of can be reused while the kernels run
    fallible = any(type(it) is CallItem for it in sched.items)
    return sched.views, sched.items, programs, marked if fallible else [], sched.stored


def replay(outputs: list[UOp], walked: Walked) -> tuple[list[UOp], list[UOp], Callable[[], None]] | None:
    """A realization of a structure that keeps coming back (its cached schedule was used
    PREPARE_AFTER times, and its launches are prepared: `lazyarr.runtime.prepared`), bound to this
    graph's buffers without a schedule: the new buffers made, the views of the outputs, of the held
    values stored and of the realize points between them marked in `realized`, as `schedule_realize`
    marks them. Returns the outputs' views, the held values stored (in `realized`: the caller gives
    their arrays the views) and the run (call it once the caller let go of the graphs it no longer
    needs); None where the structure is not such (then `schedule_realize`), or
    where launches are recorded or timed (`executor.plain_launches`). A cached structure is never
    realized in stages."""
    entry = cached_entry(walked)
    if entry is None or (launches := entry.launches[1]) is None or not executor.plain_launches():
        return None
    new, views = bind_and_mark(entry, walked.inputs, walked.order)
    stored = [walked.order[i] for i, _ in entry.kept] if entry.kept else []
    for u, view in zip(outputs + stored if stored else outputs, views):   # (held values last)
        if u is not view and not is_constant(u):
            realized[u] = view
    return views[:len(outputs)] if stored else views, stored, \
        partial(launches.run, walked.inputs + new, [c.arg for c in walked.scalars], buffer_readable)


def _realize_stages(roots: list[UOp], device: Device) -> list[UOp]:
    """Realize the stages' anchors of the graph under `roots` (`lazyarr.compiler.stages`) in
    segments (`stages.segment_ends`: cut where a loop body repeats) of anchors of one device. A
    segment whose structure the schedule cache knows is one schedule (its kernels run in one call
    into C); any other is realized an anchor at a time (each anchor's schedule quick to build, and
    cached), and those schedules together are cached as the segment's (`schedule.cache_composed`):
    the next segment of the same structure, in this loop or the next, is one schedule without
    being scheduled as a whole (~50 ms for thirty small anchors). Returns the held values the
    schedules stored."""
    found = [anchor for anchor in stage_anchors(roots, device) if anchor[0] not in realized]
    stored: list[UOp] = []
    keeping = _KeptAnchors()

    def realize_now(outputs: list[tuple[UOp, Device]], walked: Walked | None = None, parts: list | None = None) -> None:
        bound = replay([a for a, _ in outputs], walked) if walked is not None else None
        if bound is not None:   # (a segment whose structure is cached: no parts to collect)
            _, kept, launch = bound
            launch()
        else:
            _, items, programs, marked, kept = schedule_realize(outputs, walked, parts)
            run(items, programs, marked)
        stored.extend(kept)
    start = 0
    for end in segment_ends([f for _, _, f in found]):
        while start < end:   # (split where the device changes)
            stop = start + 1
            while stop < end and found[stop][1] is found[start][1]:
                stop += 1
            segment = [(a, d) for a, d, _ in found[start:stop]]
            walked = structure_key([a for a, _ in segment], [d for _, d in segment])
            keeping.let_go(walked.resolved)
            if is_cached(walked):
                realize_now(segment, walked)
            else:
                parts: list = []
                held = len(stored)
                for anchor in segment:
                    if anchor[0] not in realized:
                        realize_now([anchor], parts=parts)
                if len(stored) == held:   # (a part that stored a held value is no pattern for later segments)
                    cache_composed(walked, segment, {a: realized[a] for a, _ in segment}, parts)
            keeping.add(segment)
            start = stop
    return stored


class _KeptAnchors:
    """The anchors a realization in stages computed and still keeps: each holds its buffer (its
    value, for any other array whose graph reads it, is then not computed again). A loop never
    realized on large arrays would keep every iteration's buffers until its graph goes (300
    iterations of a million float64: 4.6 GB). So past `settings.stage_keep_bytes`, an anchor the
    next segment does not read (its walk met the realized nodes it reads) and no live array holds
    is forgotten as computed, and its buffer freed: another graph that reads it computes it again
    from the anchors before it, which the segments in between still read, at most a segment's work."""

    def __init__(self) -> None:
        self.nbytes = 0
        self.anchors: dict[UOp, int] = {}

    def add(self, segment: list[tuple[UOp, Device]]) -> None:
        for a, _ in segment:
            view = realized.get(a)
            if view is not None and a not in self.anchors:
                size = view_buffer(view).nbytes
                self.anchors[a] = size
                self.nbytes += size

    def let_go(self, read: dict[UOp, UOp]) -> None:
        """Forget the anchors not in `read` (the next segment's), once over the budget."""
        if self.nbytes <= settings.stage_keep_bytes:
            return
        for a in [a for a in self.anchors if a not in read and not is_held(a)]:
            self.nbytes -= self.anchors.pop(a)
            realized.forget(a)


def _count_use(entry: Any, programs: list[Any], n_inputs: int, n_scalars: int) -> None:
    """A schedule cache entry was used again: once it came back (PREPARE_AFTER uses: the first,
    from memory or the disk cache; a never-realized loop's segments are each seen once a run, so a
    second use was a third run on unprepared launches), its launches are prepared
    (`lazyarr.runtime.prepared`)."""
    uses = entry.launches
    uses[0] += 1
    if uses[0] == PREPARE_AFTER:
        outputs = {n_inputs + ref[1] for ref, _ in entry.outputs if ref[0] == 1}
        uses[1] = PreparedLaunches.of(entry.kernels, programs, n_inputs, entry.new, n_scalars,
                                      executor.installed(), outputs)


def run(items: list[ScheduleItem], programs: list[Any] | None = None, marked: list[UOp] = ()) -> None:
    """Launch the kernels. If one fails (a library routine raising on its input: a singular matrix),
    the `marked` nodes are forgotten as computed, so that nothing reads the buffers left unfilled."""
    try:
        executor.run(items, buffer_readable, programs)
    except BaseException:
        for p in marked:
            realized.forget(p)
        raise
