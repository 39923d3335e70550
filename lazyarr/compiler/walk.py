"""The schedule cache's key: one walk over a graph to realize (`structure_key`), equal for graphs
that differ only in the buffers they read and the values of their liftable constants; the walk in
C is walk_native.c, this module's `_walk` the reference and fallback."""
from __future__ import annotations

import sys
from array import array
from typing import Any

from lazyarr import dtypes, settings
from lazyarr.compiler.buffer_views import realized_for
from lazyarr.compiler.uop import ATOMS, Ops, UOp, arg_key, atom_number, liftable, native_module, realized
from lazyarr.runtime.device import Buffer, Device


def structure_key(roots: list[UOp], devices: list[Device], stop_after: int = 0) -> Walked:
    """One walk over the graph to realize: a key equal for graphs that differ only in which buffers
    they read (an already realized node counts as the view of its buffer) and in the values of
    their liftable constants (`uop.liftable`: Python scalars, which reach the kernels as arguments),
    those buffers in order of first appearance, the nodes in the order the key lists them, the
    realized nodes met, the computed nodes that live arrays hold (`is_held`; the key marks them),
    and the liftable constants in order of first appearance (the schedule's scalars).
    `stop_after`: a walk that gives that many nodes positions stops there, and its answer is
    `stopped` (no key; its order is the nodes met so far, sources first), which asks less of a
    graph too large to schedule at once (`realize.stages_first`) than its key would."""
    sink = UOp(Ops.SINK, dtypes.void, tuple(roots))
    facts = _devices_facts.get(id(devices[0])) if len(devices) == 1 else None
    if facts is None or facts[0] is not devices[0]:
        facts = _devices_facts_of(devices)
    _, names, in_order, serves = facts
    # the settings that change how a graph is scheduled and its kernels' code belong to its key
    config = settings.config()
    if native_module is not None:   # the same walk in C (lazyarr.compiler.native)
        return Walked((in_order, config), *native_module.walk(sink, serves, names, stop_after), devices)
    try:
        return Walked((in_order, config), *_walk(sink, names, stop_after), devices)
    except RecursionError:   # a graph deeper than the recursion limit: again, with a limit its size allows
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + len(sink.toposort()) + 100)
        try:
            return Walked((in_order, config), *_walk(sink, names, stop_after), devices)
        finally:
            sys.setrecursionlimit(limit)


# a device's id -> the device and the facts structure_key needs of it (a realization on one device,
# the commonest; by id, as a device's hash is a Python call)
_devices_facts: dict[int, tuple] = {}


def _devices_facts_of(devices: list[Device]) -> tuple:
    """The first device, the devices' names (a set), their names in order (for the key), and
    whether a realized node's view serves a graph computed on them (the walk's `realized_for`)."""
    names = {d.name for d in devices}
    facts = (devices[0], names, tuple([d.name for d in devices]), lambda n, view: realized_for(n, view, names))
    if len(devices) == 1:
        _devices_facts[id(devices[0])] = facts
    return facts


class Walked:
    """structure_key's answer (`stopped`: a walk stopped early, which has no key)."""
    __slots__ = ("key", "inputs", "order", "resolved", "held", "scalars", "stopped")

    def __init__(self, rest: tuple, key: bytes | None, inputs: list[Buffer], order: list[UOp],
                 resolved: dict[UOp, UOp], held: list[UOp], scalars: list[UOp], devices: list[Device]):
        # the key: the walk's, the devices' names and the configuration (`rest`)
        self.key, self.inputs, self.order, self.resolved = (key, *rest), inputs, order, resolved
        self.held, self.scalars, self.stopped = held, scalars, key is None


def is_held(n: UOp) -> bool:
    """Whether a live array's value is node n: its holder (`UOp._holder`, a weak reference) is alive
    and still holds n (an array given a new value keeps the reference of its old node)."""
    ref = n._holder
    if ref is None:
        return False
    array = ref()
    return array is not None and array._uop is n


def _atom(x: Any) -> int:
    """x's number in ATOMS (ops, dtypes, argument keys, device names), `atom_number`'s."""
    a = ATOMS.get(x)
    if a is None:
        a = ATOMS[x] = atom_number(x)
    return a


class _Stop(Exception):
    """_walk met `stop_after` nodes."""


def _walk(sink: UOp, names: set[str], stop_after: int = 0
          ) -> tuple[bytes | None, list[Buffer], list[UOp], dict[UOp, UOp], list[UOp], list[UOp]]:
    """structure_key's walk: depth-first, sources before users, each node's part once, as int64
    words (the key is their bytes: hashed and compared at C speed): a liftable constant's (-1,
    dtype's atom, which scalar), a buffer's (-2, dtype's atom, size, its device name's atom, which
    input), any other node's (op's atom, dtype's atom, its arg key's atom, its number of sources,
    their positions, 1 if a live array holds it else 0). Atoms are numbered alike in every process
    (`uop.atom_number`), so a key is too. Every step of a training loop walks its whole graph: the C
    walk (`uop_native.c`) does this."""
    index: dict[UOp, int] = {}
    inputs: list[Buffer] = []
    words = array("q")
    order: list[UOp] = []
    resolved: dict[UOp, UOp] = {}
    held: list[UOp] = []
    scalars: list[UOp] = []
    BUFFER, RESHAPE, CONST, get = Ops.BUFFER, Ops.RESHAPE, Ops.CONST, index.get

    def emit(n: UOp, at: list[int] | None = None) -> int:
        if n.op is BUFFER:
            words.extend((-2, _atom(n.dtype), n.arg.size, _atom(n.arg.device.name), len(inputs)))
            inputs.append(n.arg)
        else:
            at = [index[s] for s in n.src] if at is None else at
            now_held = n._holder is not None and is_held(n)
            words.extend((_atom(n.op), _atom(n.dtype), _atom(arg_key(n.arg)), len(at), *at, int(now_held)))
            if now_held:
                held.append(n)
        order.append(n)
        i = index[n] = len(order) - 1
        if i + 1 == stop_after:
            raise _Stop
        return i

    def visit(n: UOp) -> int:
        i = get(n)
        if i is not None:
            return i
        view = realized.get(n)   # (constants realized on another device are computed again here)
        if view is not None and view is not n and realized_for(n, view, names):
            resolved[n] = view
            if view not in index:   # the view's BUFFER and reshapes
                chain = [view]
                while chain[-1].op is RESHAPE:
                    chain.append(chain[-1].src[0])
                for v in reversed(chain) if chain[-1].op is BUFFER else view.toposort():
                    if v not in index:
                        emit(v)
            i = index[n] = index[view]
            return i
        if n.op is BUFFER:
            return emit(n)
        if n.op is CONST and liftable(n):   # its value is an argument: not part of the structure
            i = index[n] = len(order)
            words.extend((-1, _atom(n.dtype), len(scalars)))
            scalars.append(n)
            order.append(n)
            return i
        src = n.src   # (1 and 2 sources without a comprehension: a frame less per level of recursion)
        return emit(n, [visit(src[0])] if len(src) == 1 else [visit(src[0]), visit(src[1])] if len(src) == 2 else
                    [visit(s) for s in src])
    try:
        visit(sink)
    except _Stop:
        return None, inputs, order, resolved, held, scalars
    finally:   # visit refers to itself through its closure: a cycle that would hold the graph until a collection
        del visit
    return words.tobytes(), inputs, order, resolved, held, scalars
