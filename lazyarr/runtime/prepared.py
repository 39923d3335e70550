"""A cached schedule's launches, prepared once (issue 27): a schedule that keeps coming back (every
iteration of a loop realizes the same structure on new buffers) runs its C kernels through one call
into C (`launch_plan.CallList`) instead of the executor's per-kernel Python.

What is fixed for the structure is worked out once: each kernel's argument words (a buffer's address
and the schedule's scalars are slots bound at each run, sizes and the thread count are laid out),
the buffer each kernel uses last, the in-place pairs (`items.inplace_args`) whose argument is used
last by that kernel, and which new buffers are outputs (their views go to arrays, which read them
after the run: nothing to ask at their last use). What depends on the run is done in one pass
before the call, in kernel order, exactly as `executor.run` does it between launches: an argument
no graph can read lends its storage to the output (`executor.lendable`), outputs take memory, and
a buffer past its last use that nothing can read gives its storage back. Giving storage back before the kernels ran is sound: memory
handed out again within the pass goes to a later kernel of the same call (which runs after the
reader), and nothing else takes memory until the call returns.

While a kernel's object can still change (a first-tier kernel waiting for its optimised object, a
shape-generic one counting its sizes before it gets its own code), each run counts its calls and
asks for optimised code as the executor does (`executor.optimise_if_hot`), and the call list is
laid out again when an object changed; once every object is settled a run has no per-kernel Python
left. The pass over the buffers is C's (`compiler/buffers_native.c`, part of the node table's module,
which answers whether a graph reads a buffer) where the new buffers are the CPU device's; `_pass`
below is the same pass in Python (the reference, and the path without the C module).

Kernels that enqueue on an in-order queue (OpenCL's: `enqueues`) are prepared too, without a call
list: a run makes the same pass kernel by kernel and calls each program with its buffers, sizes and
scalars (`_enqueue`), as the executor would, but without a schedule built, items copied or programs
looked up (issue 30: a small cached graph's realization on a GPU was mostly that Python).
"""
from __future__ import annotations

import time
from array import array
from typing import Any, Callable

from lazyarr.compiler.uop import native_module
from lazyarr.runtime import device
from lazyarr.runtime.cpu_program import CPUProgram, _ffi, address, array_address, scalar_words, threads_now
from lazyarr.runtime.device import Buffer, RealView
from lazyarr.runtime import executor
from lazyarr.runtime.executor import dead, lendable, optimise_if_hot
from lazyarr.runtime.items import ScheduleItem
from lazyarr.runtime.launch_plan import CallList, Slot, THREADS, _entry, is_c_launch

_WORDS = _ffi.typeof("uintptr_t[]")
_buffer_pass = getattr(native_module, "buffer_pass", None)
if _buffer_pass is not None:
    native_module.setup_buffers(RealView, Buffer, array_address)
    device.release_storage = native_module.release_buffer   # (a dying buffer's storage back to the pool in C)


class PreparedLaunches:
    """The kernels of one cached schedule structure: `kernels` are (item template, buffer
    references) as the schedule cache keeps them, references into the run's input buffers then
    its new ones (`n_inputs` of the first)."""

    def __init__(self, kernels: list[tuple[ScheduleItem, tuple]], programs: list[Any], n_inputs: int,
                 new: tuple, n_scalars: int, installed: tuple[dict, int], outputs: set[int] = frozenset(),
                 enqueued: bool = False):
        """`enqueued`: the programs are called one by one (`_enqueue`), not through a call list."""
        n_new = len(new)
        self.enqueued = enqueued
        self.slots = [t.slots for t, _ in kernels]
        self.templates, self.programs, self.installed = [t for t, _ in kernels], list(programs), installed
        flat = lambda ref: ref[1] if ref[0] == 0 else n_inputs + ref[1]
        self.args = [[flat(r) for r in refs] for _, refs in kernels]
        self.sizes = [t.sizes for t, _ in kernels]
        self.n_inputs, self.n_buffers = n_inputs, n_inputs + n_new
        # the inputs the kernels read (an output may be the view of an input no kernel reads, on any device)
        self.read = tuple(sorted({b for a in self.args for b in a if b < n_inputs}))
        last_use: dict[int, int] = {}
        for i, a in enumerate(self.args):
            for b in a:
                last_use[b] = i
        first_use: dict[int, int] = {}
        for i, a in enumerate(self.args):
            for b in a:
                first_use.setdefault(b, i)
        # per kernel: (output, argument) pairs that may lend; new buffers to give memory, each with its
        # bytes and NumPy dtype (the pool's key and the view it takes); inputs used last; new buffers
        # used last that are no outputs (`outputs`: their flat numbers)
        facts = {n_inputs + j: (size * dtype.itemsize, dtype.np) for j, (size, dtype, _) in enumerate(new)}
        self.steps = tuple((tuple((a[o], a[k]) for o, k in t.inplace if last_use[a[k]] == i),
                            tuple((b, *facts[b]) for b in dict.fromkeys(a) if b >= n_inputs and first_use[b] == i),
                            tuple(b for b in dict.fromkeys(a) if last_use[b] == i and b < n_inputs),
                            tuple(b for b in dict.fromkeys(a) if last_use[b] == i and b >= n_inputs and b not in outputs))
                           for i, ((t, _), a) in enumerate(zip(kernels, self.args)))
        # the pass in C takes memory from the pool of the new buffers' device (the CPU's: `_pool`)
        devices = {device for _, _, device in new}
        self.device = devices.pop() if len(devices) == 1 and hasattr(next(iter(devices)), "_pool") else None
        scalar_slot = 1 + self.n_buffers
        self.scalar_args = [[Slot(scalar_slot + k) for k in t.slots] for t, _ in kernels]
        self.values = _ffi.new(_WORDS, 1 + self.n_buffers + n_scalars)
        self.values_address = int(_ffi.cast("uintptr_t", self.values))
        self.scalar_values = self.values + 1 + self.n_buffers   # where the scalars' words start
        self.words = [0] * (1 + self.n_buffers)   # the thread count and the buffers' addresses, for each run
        self.objects: list[tuple[CPUProgram, bool]] | None = None
        self.float_scalars: bool | None = None   # whether every scalar is a float (known at the first run)
        self.settled = False
        self.calls: CallList | None = None

    @staticmethod
    def of(kernels: list[tuple[Any, tuple]], programs: list[Any], n_inputs: int, new: tuple, n_scalars: int,
           installed: tuple[dict, int], outputs: set[int] = frozenset()) -> PreparedLaunches | None:
        """The prepared launches of a schedule whose kernels are all C kernels on buffers of host
        memory (no routine, copy, or complex buffer's real view), or None (also where there are no
        kernels: a schedule of views only has nothing to prepare). `new`: the new buffers' (size,
        dtype, device); `outputs`: those (numbered after the inputs) whose views the run's arrays
        are given."""
        if not kernels:
            return None
        enqueued = all(getattr(prog, "enqueues", False) for prog in programs)
        for (t, refs), prog in zip(kernels, programs):
            if type(t) is not ScheduleItem or any(r[2] for r in refs) or \
                    not (enqueued or (t.device.host_memory and is_c_launch(prog))):
                return None
        return PreparedLaunches(kernels, programs, n_inputs, new, n_scalars, installed, outputs, enqueued)

    def _objects_now(self) -> list[tuple[CPUProgram, bool]]:
        """Each kernel's object for this run (counting the call where that still matters) and
        whether it is specialised to its sizes; asks for optimised code as the executor would."""
        start = time.perf_counter()
        objects, settled = [], True
        for prog, sizes in zip(self.programs, self.sizes):
            if isinstance(prog, CPUProgram):
                objects.append((prog, False))
                continue
            settled = settled and prog.settled(sizes)   # (asked first: this call may still take a new object)
            optimise_if_hot(prog, start)   # (before this call counts, as the executor asks at a run's start)
            objects.append(prog.object_for(sizes))
        self.settled = settled
        return objects

    def _lay_out(self) -> None:
        fns, parts = [], []
        for (obj, specialised), args, sizes, scalars in zip(self.objects, self.args, self.sizes, self.scalar_args):
            fns.append(_entry(obj))
            parts.append([*(Slot(1 + b) for b in args), *(() if specialised else sizes), *scalars, THREADS])
        self.calls = CallList(fns, parts, self.values_address)

    def _pass(self, buffers: list[Buffer], readable: Callable[[Buffer], bool]) -> None:
        """The pass over the buffers (see the module's docs), in Python."""
        words = self.words
        words[0] = threads_now()
        for i in self.read:
            words[1 + i] = address(buffers[i].ensure_allocated())
        for lends, fresh, last, last_new in self.steps:
            for o, k in lends:   # an argument that nothing needs after this kernel lends its storage
                if buffers[o].storage is None and lendable(buffers[k], buffers[o], readable):
                    buffers[o].take_storage(buffers[k])
            for o, *_ in fresh:
                b = buffers[o]
                words[1 + o] = address(b) if b.storage is not None else b.device.allocate_owned(b)
            for k in last:
                if dead(buffers[k], readable):
                    buffers[k].release()
            for k in last_new:   # (memory of its own, no complex view: dead unless a graph reads it)
                if not readable(buffers[k]):
                    buffers[k].release()
        self.values[0:len(words)] = words

    def run(self, buffers: list[Buffer], scalars: list[Any], readable: Callable[[Buffer], bool]) -> None:
        """Run the kernels on `buffers` (the inputs, then the new ones) with the schedule's scalar
        values; `readable(b)`: whether a graph can still read buffer b (see the module's docs)."""
        cache, count = executor.installed()
        if cache is not self.installed[0] or count != self.installed[1]:   # maybe a program of these was replaced
            self.programs = [executor.get_program(t) for t in self.templates]
            self.installed = executor.installed()
            self.settled = False
        if self.enqueued:
            self._enqueue(buffers, scalars, readable)
            return
        if not self.settled:
            objects = self._objects_now()
            if objects != self.objects:
                self.objects = objects
                self._lay_out()
        if _buffer_pass is not None and self.device is not None:
            if _buffer_pass(buffers, self.read, self.steps, self.values_address, self.device, address,
                            self.device.allocate_owned, readable, threads_now(), scalars):
                scalars = None   # (written: all floats)
        else:
            self._pass(buffers, readable)
        if scalars:   # (floats, the commonest, as float64 bits in one copy: a loop of a hundred scalars)
            if self.float_scalars is None:   # (which they are is the structure's: the key has their dtypes)
                self.float_scalars = all(type(v) is float for v in scalars)
            if self.float_scalars:
                _ffi.memmove(self.scalar_values, array("d", scalars), 8 * len(scalars))
            else:
                self.values[1 + self.n_buffers:1 + self.n_buffers + len(scalars)] = scalar_words(scalars)
        self.calls()

    def _enqueue(self, buffers: list[Buffer], scalars: list[Any], readable: Callable[[Buffer], bool]) -> None:
        """The pass over the buffers with each kernel enqueued at its place in it (see the module's
        docs): its arguments lend and take storage before it, and what it used last is given back
        after it, which a later kernel of the same in-order queue may then take."""
        for i in self.read:
            buffers[i].ensure_allocated()
        for prog, args, sizes, slots, (lends, fresh, last, last_new) in zip(self.programs, self.args, self.sizes,
                                                                             self.slots, self.steps):
            for o, k in lends:
                if buffers[o].storage is None and lendable(buffers[k], buffers[o], readable):
                    buffers[o].take_storage(buffers[k])
            for o, *_ in fresh:
                buffers[o].ensure_allocated()
            prog([buffers[b] for b in args], sizes, tuple([scalars[k] for k in slots]))
            for k in (*last, *last_new):
                if dead(buffers[k], readable):
                    buffers[k].release()
