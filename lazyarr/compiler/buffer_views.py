"""Buffer views: the nodes that read a buffer's elements as an array (a BUFFER under RESHAPEs), how
a realized value is read from then on, and whether a realized node's buffer serves a graph computed
on given devices."""
from __future__ import annotations

from lazyarr.compiler.uop import Ops, UOp, native_module, under_reshapes
from lazyarr.runtime.device import Buffer


def buffer_view(buf: Buffer, shape: tuple[int, ...]) -> UOp:
    """The tensor node reading `buf` as an array of `shape`."""
    if _record_view is not None and type(shape) is tuple and (view := _record_view(buf, shape)) is not NotImplemented:
        return view   # (the nodes below, built in C: every cached realization makes a view or two)
    b = UOp(Ops.BUFFER, buf.dtype, (), buf)
    if b._shape is None:   # (known without asking the ops' rules: a buffer's is its size, a reshape's its argument)
        b._shape = (buf.size,)
    if shape == (buf.size,):
        return b
    view = UOp(Ops.RESHAPE, buf.dtype, (b,), shape)
    if view._shape is None:
        view._shape = shape
    return view


_record_view = getattr(native_module, "record_buffer_view", None)

def is_buffer_view(u: UOp) -> bool:
    """Whether u is a buffer's elements in order: the BUFFER under reshapes only."""
    return under_reshapes(u).op is Ops.BUFFER


def view_buffer(u: UOp) -> Buffer:
    return under_reshapes(u).arg


def realized_for(n: UOp, view: UOp, device_names: set[str]) -> bool:
    """Whether realized node n's buffer (`view`) serves a graph computed on `device_names`. Nodes are
    shared by devices: a value made of constants alone (`arange(6.0)`) is the same node on every
    device, but its buffer lives on one; on another device it is computed again. A value that reads
    storage is tied to that storage's device, whatever device reads it (through a COPY)."""
    return view_buffer(view).device.name in device_names or any(u.op is Ops.BUFFER for u in n.toposort())
