"""Whole-step capture: `compile_step` records what a training step runs and replays it.

A step function runs a forward pass, `loss.backward()`, an optimizer's `zero_grad()`/`step()`, and
returns its loss (or other tensors); its parameters and the optimizer's state are closed over and
updated in place. `lazyarr.function` traces pure functions into graphs and cannot take such a step
(it realizes values and rebinds arrays): `compile_step` is the tool for it. Per signature (the
shapes, dtypes and devices of the tensor arguments, the values of the others):

- the first call runs the function plainly (it creates the optimizer's state and compiles the
  kernels); the second and third run it plainly too, while every kernel launch is recorded, with
  the storage each one reads and writes;
- the third call's launches become a launch plan (`lazyarr.runtime.launch_plan`: on the CPU one
  call into C over argument words laid out once; elsewhere a list of launches with fixed
  buffers), provided the second and third calls launched the same kernels with the same sizes and
  Python numbers (a step that settles into a repeating sequence);
- every later call replays the plan: the new arguments' storage is bound in place of the recorded
  ones, the library's per-step values are refreshed (an optimizer's learning rate, which a
  scheduler may change, its step count and bias corrections: `on_replay`), the kernels run, and
  the returned tensors are new arrays with their own storage, so a list of losses keeps every
  value.

Storage that the step carries from one call to the next (parameters, moments, momentum buffers)
is found from the recordings: what the third call reads that the second call wrote, at the same
launch and argument. The arrays holding the step's results (parameters, gradients, optimizer
state) are the same objects after each replay, updated in place, as PyTorch's are; a lazy graph the
user built over one of them before a replay keeps the value it had (that storage is copied out
first). A replay never runs stale work silently: an array the step reads that was changed outside
it (a parameter set by hand, a tensor captured from an enclosing scope and then updated) makes the
call record again; a host read inside the step (`float()`, `bool()` on a tensor: a Python branch on
a value, `numpy()`), host data turned into a tensor inside it (`asarray` of NumPy data, random
numbers drawn inside it) raise `CaptureError` naming it, at the first call. As under `jax.jit`,
Python code inside the step runs only while recording: Python numbers and tensors it reads from
globals are those of that time, so pass what changes as arguments.
"""
from __future__ import annotations

import gc
import sys
import weakref
from typing import Any, Callable

import numpy as np

from lazyarr import arrays
from lazyarr.arrays import Array, _take_buffers, realize, wrap
from lazyarr.calls import signature
from lazyarr.compiler.buffer_views import buffer_view, is_buffer_view, view_buffer
from lazyarr.compiler.uop import Ops, UOp, realized
from lazyarr.runtime import executor
from lazyarr.runtime.cpu_program import address, array_address
from lazyarr.runtime.device import Buffer, RealView, recording_launches
from lazyarr.runtime.items import CallItem, ScheduleItem
from lazyarr.runtime.launch_plan import CopyStep, CSegment, Launch, LaunchPlan, PySegment, Slot, is_c_launch

_debug_capture = bool(int(__import__("os").environ.get("LAZYARR_DEBUG_CAPTURE", "0")))
RECORDINGS = 3   # recorded calls after which a step that has not settled stays plain


class CaptureError(TypeError):
    """A captured step does something a replay cannot honour (a host read inside it, host data
    turned into a tensor inside it)."""


_active: list[_Recording] = []   # the calls being run under the capture's rules, innermost last


def on_replay(hook: Callable[[], None]) -> None:
    """Library code inside a step registers `hook` to run before every replay's kernels (the
    optimizers: their step count and the per-step values they write into a buffer)."""
    if _active:
        _active[-1].hooks.append(hook)


def _host_read(what: str) -> None:
    if _active:
        raise CaptureError(f"a step under compile_step reads a tensor's value on the host ({what}): a replay "
                           f"runs no Python, so a branch on a value or a printout inside the step cannot be "
                           f"replayed; return the tensor from the step and read it after the call")


arrays.host_read_hooks.append(_host_read)


class _Recording:
    """A call run under the capture's rules; with `record`, its launches are recorded."""

    def __init__(self, record: bool):
        self.record = record
        self.launches: list[tuple] = []   # (item, program, args, extra, storages)
        self.hooks: list[Callable[[], None]] = []
        self.created: weakref.WeakSet = weakref.WeakSet()   # buffers made during the call

    def __enter__(self) -> _Recording:
        _active.append(self)
        if self.record:
            executor.recorders.append(self._launch)
            recording_launches.append(self)
            _buffer_inits.append(self.created)
            Buffer.__init__ = _recorded_init
        return self

    def __exit__(self, *exc: Any) -> None:
        _active.remove(self)
        if self.record:
            executor.recorders.remove(self._launch)
            recording_launches.remove(self)
            _buffer_inits.remove(self.created)
            if not _buffer_inits:
                Buffer.__init__ = _plain_init

    def _launch(self, item: Any, prog: Any, args: list, extra: tuple) -> None:
        self.launches.append((item, prog, list(args), extra, [b.storage for b in args]))


_buffer_inits: list[weakref.WeakSet] = []
_plain_init = Buffer.__init__


def _recorded_init(self: Buffer, *args: Any, **kwargs: Any) -> None:
    _plain_init(self, *args, **kwargs)
    for created in _buffer_inits:
        created.add(self)


def _written(item: Any, args: list) -> range | list[int]:
    """The positions of the arguments a launch writes."""
    if item is None:                 # a host copy: into its first
        return [0]
    if type(item) is ScheduleItem:
        return range(item.outputs)
    if type(item) is CallItem:
        n_out, n_in = len(item.spec.outputs), len(item.spec.input_specs)
        return list(range(n_out)) + [n_out + i for i in item.spec.writes]
    return [0]                       # a copy between devices


def _key(b: Buffer, storage: Any) -> Any:
    """What identifies storage: on host memory its address (pooled memory comes back as new views
    of one allocation), elsewhere the storage object."""
    return array_address(storage) if b.device.host_memory else id(storage)


def _same_structure(a: list[tuple], b: list[tuple]) -> bool:
    return len(a) == len(b) and all(
        x[1] is y[1] and type(x[0]) is type(y[0]) and len(x[2]) == len(y[2]) and x[3] == y[3]
        for x, y in zip(a, b))


def _chain(u: UOp) -> tuple[list[UOp], Buffer | None]:
    """The nodes from an array's node down to the buffer holding its value, and that buffer."""
    nodes = []
    while True:
        nodes.append(u)
        v = realized.get(u)
        if v is not None and v is not u:
            u = v
        elif u.op is Ops.BUFFER:
            return nodes, u.arg
        elif u.op is Ops.RESHAPE or (u.op is Ops.NOOP and type(u.arg) is tuple):
            u = u.src[0]
        else:
            return nodes, None


class _NotSettled(Exception):
    """A recording that cannot become a plan (the step stays plain for its signature)."""


_AMBIGUOUS = object()


def _holders() -> dict[Any, list[tuple[weakref.ref, UOp]]]:
    """Storage (by `_key`) → the live arrays whose value it holds, with their nodes."""
    out: dict[Any, list] = {}
    for o in gc.get_objects():
        if issubclass(type(o), Array):   # (type: isinstance asks some objects for __class__)
            _, b = _chain(o._uop)
            if b is not None and b.storage is not None:
                out.setdefault(_key(b, b.storage), []).append((weakref.ref(o), o._uop))
    return out


def _moved_to(holders: list[tuple[weakref.ref, UOp]]) -> Any:
    """Where the value that `holders` held went: the storage key of the one array among them that
    the call gave a new value in storage, None if none of them changed, `_AMBIGUOUS` otherwise."""
    moved, unchanged = [], 0
    for ref, node in holders:
        t = ref()
        if t is None:
            return _AMBIGUOUS
        if t._uop is node:
            unchanged += 1
            continue
        _, b = _chain(t._uop)
        if b is None or b.storage is None:
            return _AMBIGUOUS
        moved.append(_key(b, b.storage))
    if not moved:
        return None
    return moved[0] if len(set(moved)) == 1 and not unchanged else _AMBIGUOUS


def _buffer_node(b: Buffer) -> UOp:
    """The BUFFER node of b (of its complex buffer, for a real view): held, so that no kernel is
    given b's storage while a plan reads it."""
    b = b.parent if isinstance(b, RealView) else b
    return UOp(Ops.BUFFER, b.dtype, (), b)


def _write_at_start(launches: list[tuple], keys: list[list], written: dict, storage_of: dict, i: Any, o: Any) -> bool:
    """Make the kernel that writes carried state `o` last write it into `i`, where the state is
    read at the start, when the executor's own rule allows it (the kernel reads `i` only at the
    index it writes: its in-place pairs) and no later launch reads `i`; the launches from that
    kernel on then use `i` for `o`. Whether it did."""
    k, j = written[o]
    item = launches[k][0]
    if type(item) is not ScheduleItem or not any(out == j and keys[k][a] == i for out, a in item.inplace):
        return False
    if any(i in ks for ks in keys[k + 1:]):
        return False
    for n in range(k, len(launches)):
        for a, key in enumerate(keys[n]):
            if key == o:
                keys[n][a] = i
                launches[n][4][a] = storage_of[i]
    return True


def _counts(nodes: list[UOp]) -> list[int]:
    """The reference counts of nodes (always taken here, so that the counts compare)."""
    return [sys.getrefcount(n) for n in nodes]


class _Plan:
    """A recorded step made ready to replay (see the module's docs)."""

    def __init__(self, prev: list[tuple], consecutive: bool, before: dict, rec: _Recording, args: tuple,
                 results: list[Array], structure: Any):
        """`prev`: the previous recording's launches (`consecutive`: no other call of the step ran
        between the two); `before`: the arrays that held each storage before this recording's call
        (`_holders`)."""
        launches, self.hooks, self.structure = rec.launches, rec.hooks, structure
        self.standins: dict[tuple, Buffer] = {}
        keys = [[_key(b, s) for b, s in zip(l[2], l[4])] for l in launches]
        prev_keys = [[_key(b, s) for b, s in zip(l[2], l[4])] for l in prev]
        last_write_prev = {}
        for k, l in enumerate(prev):
            for j in _written(l[0], l[2]):
                last_write_prev[prev_keys[k][j]] = (k, j)
        arg_keys = {}
        for i, a in enumerate(args):
            if isinstance(a, Array):
                b = view_buffer(a.uop)
                if b.storage is not None:
                    arg_keys[_key(b, b.storage)] = i
        storage_of, buffer_of = {}, {}   # key → storage, a buffer over it
        for l, ks in zip(launches, keys):
            for b, s, k in zip(l[2], l[4], ks):
                storage_of.setdefault(k, s)
                buffer_of.setdefault(k, b)
        # what the step reads before it writes it: an argument, carried state, or data from outside
        written: dict[Any, tuple[int, int]] = {}
        self.arg_slots: dict[int, list[Any]] = {}   # argument → its storage's key
        carried: dict[Any, Any] = {}                 # key read at the start → key written at the end
        self.external: list[UOp] = []                # BUFFER nodes of data read from outside, held
        outside: set = set()
        inputs: set = set()
        for k, (l, ks) in enumerate(zip(launches, keys)):
            w = set(_written(l[0], l[2]))
            for j, key in enumerate(ks):
                if j in w or key in written or key in inputs:
                    continue
                inputs.add(key)
                if key in arg_keys:
                    self.arg_slots.setdefault(arg_keys[key], []).append(key)
                elif key in before:   # held by arrays before the call: state if one of them changed
                    moved = _moved_to(before[key])
                    if moved is _AMBIGUOUS:
                        raise _NotSettled("an array the step reads at its start was replaced by another object, "
                                          "or is read by other arrays the step does not update")
                    if moved is not None:
                        carried[key] = moved
                    else:
                        outside.add(key)
                        self.external.append(_buffer_node(buffer_of[key]))
                elif key in last_write_prev and consecutive:
                    pk, pj = last_write_prev[key]
                    carried[key] = keys[pk][pj]
                elif l[2][j] in rec.created:
                    raise CaptureError("a step under compile_step turns host data into a tensor inside the step "
                                       "(asarray of NumPy data, random numbers drawn in it): a replay would "
                                       "read the data of the recorded call again; make the tensor outside the "
                                       "step and pass it as an argument")
                else:
                    outside.add(key)
                    self.external.append(_buffer_node(buffer_of[key]))
            for j in w:
                written[ks[j]] = (k, j)
        self.storages = dict(storage_of)   # every storage the plan uses, kept alive
        owned = set(written) | set(carried)
        # the results: new storage at each replay where nothing else reads it, else a copy
        self.outputs = []
        slots: dict[Any, int] = {}
        result_keys = set()
        for t in results:
            b = view_buffer(t.uop if is_buffer_view(t.uop) else realized[t.uop])
            key = _key(b, b.storage)
            result_keys.add(key)
            self.outputs.append((b.dtype, b.size, t.shape, t.device, key))
        # the arrays holding the step's results and state: the same objects after every replay
        self.states, self.watched, self.grads = [], [], []
        state_keys = set()
        found = [o for o in gc.get_objects() if issubclass(type(o), Array)]
        for o in found:
            if any(o is t for t in results):
                continue
            nodes, b = _chain(o._uop)
            if b is None or b.storage is None:
                continue
            key = _key(b, b.storage)
            if key in owned:
                self.states.append([weakref.ref(o), o._uop, nodes, b, key])
                state_keys.add(key)
            elif key in outside:
                self.watched.append((weakref.ref(o), o._uop))
        state_arrays = {id(st[0]()) for st in self.states}
        for o in found:   # the step's gradients: held by the plan, put back as their leaf's .grad if replaced
            if o._leaf_grad and o.grad is not None and id(o.grad) in state_arrays:
                self.grads.append((weakref.ref(o), o.grad))
        del found, state_arrays
        for key in result_keys:
            if key in written and key not in carried.values() and key not in state_keys and key not in carried:
                slots[key] = len(slots) + 1 + len(self.arg_slots)
        # carried state written elsewhere than it is read: copied back at the end of each replay,
        # and the arrays holding it read the storage read at the start
        copies = [(i, o) for i, o in carried.items() if i != o]
        back = [(i, o) for i, o in copies if not _write_at_start(launches, keys, written, storage_of, i, o)]
        if _debug_capture:
            print(f"capture: {len(launches)} launches, {len(self.arg_slots)} arguments, {len(carried)} carried "
                  f"({len(copies) - len(back)} made in place, {len(back)} copied back), "
                  f"{len(outside)} read from outside")
        for i, o in copies:
            buffer_of[o].device.copy_storage(storage_of[i], storage_of[o], buffer_of[o].nbytes)
        for st in self.states:
            for i, o in copies:
                if st[4] == o:
                    st[3].storage, st[3]._addr, st[4] = storage_of[i], None, i
        # no buffer gives plan storage back to its device, and none is left in a pool
        for l in launches:
            for b in l[2]:
                target = b.parent if isinstance(b, RealView) else b
                if b.storage is not None and _key(b, b.storage) in owned:
                    target.owns = False
        for st in self.states:
            st[3].owns = False
        for key, s in storage_of.items():
            if key in owned:
                buffer_of[key].device.keep(s)
        # the values bound at each run: 0 the threads, then the arguments, then the new results
        self.values = np.zeros(1 + len(self.arg_slots) + len(slots), dtype=np.uint64)
        self.arg_index = {i: 1 + n for n, i in enumerate(self.arg_slots)}
        self.slot_of = {key: Slot(self.arg_index[arg_keys[key]]) for keys_ in self.arg_slots.values() for key in keys_}
        self.slot_of.update({key: Slot(v) for key, v in slots.items()})
        self.result_slots = slots
        final_write = {key: written[key][0] for key in slots}
        self.plan = LaunchPlan(self._segments(launches, keys, final_write, back, storage_of, buffer_of),
                               self.values)

    # ---- building ---------------------------------------------------------------------------

    def _standin(self, like: Buffer, storage: Any) -> Buffer:
        """A buffer over `storage` that the plan owns (never freed, never lent)."""
        k = (id(storage), like.dtype, like.size)
        b = self.standins.get(k)
        if b is None:
            b = self.standins[k] = Buffer(like.device, like.size, like.dtype, storage)
        return b

    def _segments(self, launches: list[tuple], keys: list[list], final_write: dict, copies: list,
                  storage_of: dict, buffer_of: dict) -> list[Any]:
        segments: list[Any] = []
        steps: list[Any] = []
        calls: list[Any] = []
        self.bound: list[tuple[Buffer, int]] = []   # stand-ins whose storage is bound per run, and their value

        def flush_c() -> None:
            if steps:
                segments.append(CSegment(list(steps), self.values))
                steps.clear()

        def flush_py() -> None:
            if calls:
                segments.append(PySegment(list(calls)))
                calls.clear()

        for k, ((item, prog, args, extra, storages), ks) in enumerate(zip(launches, keys)):
            def slot(key: Any) -> Slot | None:
                s = self.slot_of.get(key)
                if s is not None and key in final_write and k < final_write[key]:
                    return None   # the storage before it holds the result: an intermediate of its own
                return s
            if type(item) is ScheduleItem and is_c_launch(prog) and args[0].device.host_memory:
                flush_py()
                words = [slot(key) or array_address(s) for s, key in zip(storages, ks)]
                sizes, scalars = (extra if extra else ((), ()))
                steps.append(Launch(prog, words, sizes, scalars))
                continue
            flush_c()
            bufs = []
            for b, s, key in zip(args, storages, ks):
                sb = self._standin(b, s) if slot(key) is None else Buffer(b.device, b.size, b.dtype, s)
                if slot(key) is not None:
                    self.bound.append((sb, slot(key).index))
                bufs.append(sb)
            if item is None:
                calls.append(lambda d=bufs[0], s=bufs[1]: d.copyin(np.array(s.numpy(), copy=True)))
            else:
                calls.append(lambda p=prog, a=bufs, e=extra: p(a, *e))
        for i, o in copies:
            b = buffer_of[o]
            if b.device.host_memory:
                flush_py()
                steps.append(CopyStep(array_address(storage_of[i]), array_address(storage_of[o]), b.nbytes))
            else:
                flush_c()
                calls.append(lambda d=storage_of[i], s=storage_of[o], n=b.nbytes, copy=b.device.copy_storage:
                             copy(d, s, n))
        flush_c()
        flush_py()
        return segments

    def baseline(self) -> None:
        """The reference counts of the state arrays' nodes as the plan leaves them: more at the
        next replay means a graph the user built reads the old value. (Taken once the plan is
        made, with no local variable of the making holding one of the nodes.)"""
        for st in self.states:
            st.append(_counts(st[2]))

    # ---- replaying --------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Before a replay: take in what changed outside the step since the last call. A state
        array given a new value (a parameter set by hand, another signature's plan recording) has
        it copied into the plan's storage and reads that storage again; a gradient array that is no
        longer its parameter's `.grad` becomes it again. False when the plan cannot honour a change
        (a tensor it reads from outside was updated, a state array is gone or changed its shape):
        the call records again."""
        for ref, node in self.watched:
            t = ref()
            if t is not None and t._uop is not node:
                return False
        for st in self.states:
            t = st[0]()
            if t is None:
                return False
            if t._uop is not st[1]:
                if t.shape != st[1].shape or t.dtype is not st[3].dtype or t._viewof is not None:
                    return False
                src = t._buffer()
                if src.storage is not st[3].storage:    # another plan may have written it in place
                    st[3].device.copy_storage(st[3].storage, src.storage, st[3].nbytes)
                t._uop = st[1]
                arrays.hold(t)
        for leaf, grad in self.grads:
            p = leaf()
            if p is not None and p.grad is not grad:
                p.grad = grad
        return True

    def replay(self, args: tuple) -> list[Array]:
        values = self.values
        for i, index in self.arg_index.items():
            b = view_buffer(_realized_argument(args[i]).uop)
            values[index] = address(b) if b.device.host_memory else 0
            for sb, v in self.bound:
                if v == index:
                    sb.storage, sb._addr = b.storage, None
        self._keep_old_values()
        results, fresh = [], {}
        for dtype, size, shape, device, key in self.outputs:
            b = fresh.get(key)
            if b is None:
                b = fresh[key] = Buffer(device, size, dtype).ensure_allocated()
                v = self.result_slots.get(key)
                if v is not None:
                    if device.host_memory:
                        values[v] = address(b)
                    for sb, index in self.bound:
                        if index == v:
                            sb.storage, sb._addr = b.storage, None
            results.append((b, shape, device, key))
        for hook in self.hooks:
            hook()
        self.plan()
        out = []
        for b, shape, device, key in results:
            if key not in self.result_slots:   # a result the plan keeps: copied out
                device.copy_storage(b.storage, self.storages[key], b.nbytes)
            out.append(wrap(buffer_view(b, shape), device))
        return out

    def _keep_old_values(self) -> None:
        """A state array whose node more references hold than the plan left (a graph the user built
        over it): its old buffer gets a copy of the value, and the array a new buffer over the
        plan's storage, before the replay overwrites it."""
        for st in list(self.states):
            if all(now <= then for now, then in zip(_counts(st[2]), st[5])):
                continue
            t, b = st[0](), st[3]
            new = Buffer(b.device, b.size, b.dtype, b.storage)   # the plan's storage, under a new buffer
            b.storage, b._addr, b.base = None, None, None
            b.ensure_allocated()
            b.device.copy_storage(b.storage, new.storage, b.nbytes)
            if t is None:   # nothing holds the state anymore but a graph: it keeps the copy
                self.states.remove(st)
                continue
            view = buffer_view(new, t.shape)
            _take_buffers([(t, view)])
            if t._uop is not view and not t._leaf_grad:
                t._uop = view
            st[1], (st[2], st[3]) = t._uop, _chain(t._uop)
            del view
            st[5] = _counts(st[2])


class CapturedStep:
    """`compile_step(fn)`: see the module's docs. `plans` maps each signature to its plan (None
    while recording, or for a step that does not settle: `why_plain` says why)."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.calls: dict[Any, int] = {}
        self.recorded: dict[Any, list] = {}
        self.plans: dict[Any, _Plan | None] = {}
        self.why_plain: dict[Any, str] = {}
        self.__wrapped__ = fn
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args: Any) -> Any:
        sig = signature(args, "compile_step")
        for other, (launches, _) in self.recorded.items():   # its next recording follows another call
            if other != sig:
                self.recorded[other] = (launches, False)
        plan = self.plans.get(sig)
        if plan is not None:
            if plan.refresh():
                return _unflatten(plan.structure, plan.replay(args))
            del self.plans[sig]   # something it reads changed outside: record again
            self.calls[sig] = 1
            self.recorded.pop(sig, None)
        n = self.calls[sig] = self.calls.get(sig, 0) + 1
        if sig in self.why_plain:
            return self.fn(*args)
        args = tuple(_realized_argument(a) for a in args)
        before = _holders() if n >= 2 else None
        with _Recording(record=n >= 2) as rec:
            result = self.fn(*args)
            tensors, structure = _flatten(result)
            realize(*tensors)
        if n < 2:
            return result
        prev, consecutive = self.recorded.get(sig, (None, False))
        self.recorded[sig] = (rec.launches, True)
        if prev is not None and _same_structure(prev, rec.launches):
            del self.recorded[sig]
            try:
                plan = self.plans[sig] = _Plan(prev, consecutive, before, rec, args, tensors, structure)
            except _NotSettled as e:
                self.why_plain[sig] = str(e)
            else:
                del before
                plan.baseline()
        elif n > RECORDINGS:
            self.why_plain[sig] = "its calls did not settle into one sequence of kernels"
            del self.recorded[sig]
        return result


def _realized_argument(a: Any) -> Any:
    """A tensor argument as a buffer's elements in order (computed first if it is not)."""
    if isinstance(a, Array) and not (is_buffer_view(a.uop) and view_buffer(a.uop).storage is not None):
        a = wrap(a.uop, a.device)
        realize(a)
        if not is_buffer_view(a.uop):
            a = wrap(realized[a.uop], a.device)
    return a


def _flatten(x: Any) -> tuple[list[Array], Any]:
    if x is None:
        return [], None
    if isinstance(x, Array):
        return [x], "T"
    if isinstance(x, (tuple, list)):
        parts = [_flatten(v) for v in x]
        return [t for ts, _ in parts for t in ts], (type(x), tuple(s for _, s in parts))
    raise TypeError(f"compile_step: a step must return tensors (or tuples/lists of them, or None), got "
                    f"{type(x).__name__}")


def _unflatten(spec: Any, tensors: list[Array]) -> Any:
    it = iter(tensors)

    def build(s: Any) -> Any:
        if s is None:
            return None
        if s == "T":
            return next(it)
        kind, parts = s
        return kind(build(p) for p in parts)
    return build(spec)


def compile_step(fn: Callable[..., Any]) -> CapturedStep:
    """Decorator: capture a training step once per signature and replay it (see the module's docs)."""
    if not callable(fn):
        raise TypeError(f"compile_step: expected a function, got {type(fn).__name__}")
    return CapturedStep(fn)
