"""What a schedule is made of, as the executor runs it: a kernel (`ScheduleItem`: its graph,
buffers, device and size arguments; its source is generated on first use), a custom kernel or
precompiled routine (`CallItem`), and a copy between devices (`CopyItem`). `inplace_args` finds
the arguments whose storage a kernel's output may take over."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lazyarr import settings
from lazyarr.compiler.codegen import KernelSource, generate
from lazyarr.compiler.rangeify import bind_sizes
from lazyarr.compiler.symbolic import simplify
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.runtime.call_abi import c_wrapper
from lazyarr.runtime.device import Buffer, Device

_kernel_sources: dict[tuple[UOp, str], KernelSource] = {}


@dataclass
class ScheduleItem:
    """One kernel: its graph (holding no buffers), its buffers in argument order, its device, and
    the values of its size arguments (a shape-generic kernel's; see `generic_limit`)."""
    ast: UOp
    buffers: list[Buffer]
    device: Device
    sizes: tuple[int, ...] = ()
    outputs: int = 1   # the first `outputs` buffers are written
    # the values of its scalar arguments (Python numbers; see `uop.liftable`), and which of the
    # schedule's scalars they are (the schedule cache fills the values of a later graph from these)
    scalars: tuple[Any, ...] = ()
    slots: tuple[int, ...] = ()
    _inplace: tuple[tuple[int, int], ...] | None = field(default=None, repr=False)
    _kernel: KernelSource | None = field(default=None, repr=False)

    @property
    def kernel(self) -> KernelSource:
        if self._kernel is None:
            key = (self.ast, self.device.name, settings.config())   # and the settings that change the code
            if key not in _kernel_sources:
                _kernel_sources[key] = generate(self.ast, self.device.renderer)
            self._kernel = _kernel_sources[key]
        return self._kernel

    @property
    def inplace(self) -> tuple[tuple[int, int], ...]:
        """(output, argument) pairs: an argument read only at the index the output is stored to, which
        may lend the output its storage (see `inplace_args`)."""
        if self._inplace is None:
            self._inplace = inplace_args(self.ast, self.sizes)
        return self._inplace

    @property
    def name(self) -> str:
        return self.kernel.name

    @property
    def source(self) -> str:
        return self.kernel.source

    def __repr__(self) -> str:
        return f"<ScheduleItem {self.name} on {self.device.name}, {len(self.buffers)} buffers>"


@dataclass
class CallItem:
    """A custom kernel or precompiled routine (`lazyarr.calls`): buffers are the new outputs, the
    inputs, then the written inputs' new values."""
    spec: Any
    buffers: list[Buffer]
    device: Device
    inplace: tuple[int, ...] = ()
    sizes = scalars = slots = ()   # class attributes: no size or scalar arguments

    @property
    def ast(self) -> Any:
        return self.spec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def source(self) -> str:
        if self.spec.source is None:
            return f"<precompiled {self.spec.routine!r}>"
        return c_wrapper(self.spec)[0] if self.device.host_memory else self.spec.source

    def arguments(self) -> list[Buffer]:
        """The buffers in the callee's order: outputs, then inputs, each written one replaced by
        the buffer of its new value."""
        n_out, n_in = len(self.spec.outputs), len(self.spec.input_specs)
        args = self.buffers[:n_out + n_in]
        for j, i in enumerate(self.spec.writes):
            args[n_out + i] = self.buffers[n_out + n_in + j]
        return args

    def written(self) -> list[tuple[Buffer, Buffer]]:
        """(input, its new value's buffer) for each input the call writes through."""
        n_out, n_in = len(self.spec.outputs), len(self.spec.input_specs)
        return [(self.buffers[n_out + i], self.buffers[n_out + n_in + j]) for j, i in enumerate(self.spec.writes)]


@dataclass
class CopyItem:
    """A copy of buffers[1] into buffers[0], on another device."""
    ast: Any
    buffers: list[Buffer]
    device: Device
    inplace: tuple[int, ...] = ()
    name: str = "copy"
    sizes = scalars = slots = ()   # class attributes: no size or scalar arguments

    @property
    def source(self) -> str:
        return f"<copy {self.buffers[1].device.name} -> {self.buffers[0].device.name}>"


_inplace: dict[tuple[UOp, tuple[int, ...]], tuple[tuple[int, int], ...]] = {}


def inplace_args(ast: UOp, sizes: tuple[int, ...] = ()) -> tuple[tuple[int, int], ...]:
    """(output, argument) pairs, for a kernel whose ungated stores all store at one index: an
    argument read only at that index, by the output's value, so that each element is read before
    the same element of the output is written and the output may use the argument's storage. A
    shape-generic kernel is judged with its `sizes` (each size argument is its own variable, so
    only the values show which indices agree)."""
    key = (ast, sizes)
    if key in _inplace:
        return _inplace[key]
    if sizes:
        ast = bind_sizes(ast, sizes)
    nodes = ast.toposort()
    stores = [u for u in nodes if u.op is Ops.STORE]
    out: tuple[tuple[int, int], ...] = ()
    target = stores[0].src[0].src[1] if stores else None
    if stores and all(st.src[0].src[-1].is_const(True) and st.src[0].src[1] is target for st in stores):
        written = {st.src[0].src[0].arg for st in stores}
        same: dict[int, bool] = {}   # argument → every load of it is ungated and at the stored index
        for u in nodes:
            if u.op is Ops.LOAD:
                ix = u.src[0]
                # the same node, or (when over the same loops) the same once simplified
                at_target = ix.src[-1].is_const(True) and (ix.src[1] is target or (
                    ix.src[1].ranges == target.ranges and simplify(ix.src[1]) is simplify(target)))
                same[ix.src[0].arg] = same.get(ix.src[0].arg, True) and at_target
        lenders = [k for k, ok in sorted(same.items()) if k not in written and ok]
        # several outputs: an argument lends its storage only to the one output whose value reads it, so
        # that it is read before that store and written by no other
        read_by = [{u.src[0].src[0].arg for u in st.src[1].toposort() if u.op is Ops.LOAD} for st in stores]
        out = tuple((st.src[0].src[0].arg, k) for st, reads in zip(stores, read_by) for k in lenders
                    if len(stores) == 1 or (k in reads and not any(k in r for r in read_by if r is not reads)))
    _inplace[key] = out
    return out
