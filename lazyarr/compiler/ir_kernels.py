"""Kernels written in the IR by hand, for what no composition of tensor ops computes well: a CALL
node whose spec holds a kernel graph (`CallSpec.kernel`) that the device's renderer turns into
source, compiled, cached and launched as any generated kernel (`lazyarr.compiler.schedule` makes
its item a kernel's: the outputs' buffers, then the inputs'; kernel optimisation leaves it as
written).

The graph is kernel-level: DEFINE_GLOBAL arguments (numbered: the outputs, then the inputs), RANGE
loops closed by END, INDEX/LOAD/STORE, and DEFINE_REG private arrays. What it promises the
renderers: each element of a global buffer is stored at most once and never read by another
iteration of a loop; what iterations share lives in private arrays, and a loop that updates one
runs in order (`lazyarr.compiler.renderer.ordered_loops`), as does one that adds into a global
buffer at positions loaded from data (a scatter-add); the others may run in parallel, and
the outermost loop around every store is spread over threads or work-items. A private array a
loop updates is read through `after(array, what came before, *the loop)`, so that each read stays
in its iteration.

Here: the building blocks (`Kernel`, `arg`, `at`, `load`, `store`, `group`, `end`, `after`, `sink`),
`ir_call` (a kernel's CALL results), `scatter_last` (values put at a permutation's positions: the
gradient of a gather along a permutation, such as a sort's) and `scatter_add` (values added at
any positions, repeated ones in order: the gradient of any gather)."""
from __future__ import annotations

import math
from typing import Any

from lazyarr import dtypes
from lazyarr.compiler.uop import CallSpec, Ops, UOp
from lazyarr.dtypes import DType
from lazyarr.graph import call_results, imag_part, make_complex, real_part, reshape_uop

_TRUE = UOp.const(dtypes.bool_, True)


class Kernel:
    """A kernel under construction: numbers its loops and private arrays."""

    def __init__(self) -> None:
        self.loops = 0
        self.regs = 0

    def loop(self, n: int) -> UOp:
        self.loops += 1
        return UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, n),), self.loops - 1)

    def private(self, dtype: DType, size: int, inside: UOp) -> UOp:
        """An array of `size` elements that each iteration of loop `inside` has for itself."""
        self.regs += 1
        return UOp(Ops.DEFINE_REG, dtypes.ptr(dtype, "reg"), (inside,), (self.regs - 1, size))


def arg(number: int, dtype: DType) -> UOp:
    return UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(dtype), (), number)


def at(buf: UOp, i: UOp, gate: UOp = _TRUE) -> UOp:
    """The address of element i of buf (a gated load reads 0 where the gate is false; a gated
    store does not happen)."""
    return UOp(Ops.INDEX, buf.dtype, (buf, i, gate))


def load(address: UOp) -> UOp:
    return UOp(Ops.LOAD, address.dtype.base, (address,))


def store(address: UOp, value: UOp) -> UOp:
    return UOp(Ops.STORE, dtypes.void, (address, value))


def group(*parts: UOp) -> UOp:
    """Stores and loops that come in no particular order among themselves (one node)."""
    return parts[0] if len(parts) == 1 else UOp(Ops.NOOP, dtypes.void, parts)


def end(body: UOp | list[UOp], *loops: UOp) -> UOp:
    """The loops closed around `body` (a store, or several)."""
    assert loops, "end() closes at least one loop"
    return UOp(Ops.END, dtypes.void, (group(*body) if isinstance(body, list) else body, *loops))


def after(buf: UOp, done: UOp, *loops: UOp) -> UOp:
    """buf once `done` has run, as read inside `loops`: a private array a loop updates is read in
    every iteration, after the one before (the loops keep the read from being hoisted out)."""
    return UOp(Ops.AFTER, buf.dtype, (buf, done, *loops))


def sink(root: UOp, buffers: int, name: str, independent: tuple[UOp, ...] = ()) -> UOp:
    """The kernel: `root` (its outermost END), taking `buffers` arguments, called `name`.
    `independent`: loops whose iterations touch parts of global memory of their own, though
    positions computed from data address them (a batch of matrices each factored in its own
    part: `renderer.ordered_loops` would otherwise run such a loop in order)."""
    return UOp(Ops.SINK, dtypes.void, (root,), (buffers, 0, 0, name, tuple(r.arg for r in independent)))


def ir_call(kernel: UOp, device: Any, inputs: list[UOp], outputs: list[tuple[tuple[int, ...], DType]]
            ) -> tuple[UOp, ...]:
    """The results (tensor-level nodes of the given shapes and dtypes) of running `kernel` on the
    tensor-level nodes `inputs` on `device` (None: the device the graph is realized on)."""
    spec = CallSpec(kernel.arg[3], None, None, tuple((u.shape, u.dtype) for u in inputs), tuple(outputs), (), (),
                    device=device, kernel=kernel)
    return call_results(spec, inputs)


def scatter_last(values: UOp, positions: UOp, device: Any = None) -> UOp:
    """out[..., positions[..., i]] = values[..., i], where each row of `positions` (int64, of
    values' shape) is a permutation of its row's indices: every element is written once."""
    if values.dtype.is_complex:   # the parts, each scattered
        return make_complex(scatter_last(real_part(values), positions, device), scatter_last(imag_part(values), positions, device))
    shape = values.shape
    n, total = shape[-1], math.prod(shape)
    k = Kernel()
    out, vals, pos = arg(0, values.dtype), arg(1, values.dtype), arg(2, positions.dtype)
    e = k.loop(total)
    row_start = (e // n) * n if total > n else UOp.const(dtypes.index, 0)
    to = row_start + load(at(pos, e)).cast(dtypes.index)
    kernel = sink(end(store(at(out, to), load(at(vals, e))), e), 3, f"scatter_{total}_{n}")
    flat = (total,)
    result, = ir_call(kernel, device, [reshape_uop(values, flat), reshape_uop(positions, flat)], [(flat, values.dtype)])
    return reshape_uop(result, shape)


def scatter_add(values: UOp, indices: list[UOp], shape: tuple[int, ...], device: Any = None) -> UOp:
    """An array of `shape`, zero but where values[e] is added at (indices[0][e], indices[1][e], ...)
    for each e, one after another (repeated positions add up, in order; one thread). `indices`:
    one int64 array per axis of `shape`, of values' shape, in range."""
    if values.dtype.is_complex:   # the parts, each added
        return make_complex(scatter_add(real_part(values), indices, shape, device),
                            scatter_add(imag_part(values), indices, shape, device))
    total, m = math.prod(shape), math.prod(values.shape)
    k = Kernel()
    out, vals = arg(0, values.dtype), arg(1, values.dtype)
    idx = [arg(2 + a, dtypes.int64) for a in range(len(shape))]
    z = k.loop(total)
    zeroed = end(store(at(out, z), UOp.const(values.dtype, 0)), z)
    e = k.loop(m)
    flat = UOp.const(dtypes.index, 0)
    for a, ix in enumerate(idx):
        flat = flat + load(at(ix, e)).cast(dtypes.index) * math.prod(shape[a + 1:])
    slot = at(after(out, zeroed, e), flat)
    kernel = sink(end(store(slot, load(slot) + load(at(vals, e))), e), 2 + len(shape), f"scatter_add_{m}_{total}")
    flat_in = [reshape_uop(values, (m,))] + [reshape_uop(i, (m,)) for i in indices]
    result, = ir_call(kernel, device, flat_in, [((total,), values.dtype)])
    return reshape_uop(result, shape)
