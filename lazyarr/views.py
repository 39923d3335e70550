"""Writes through views (NumPy's semantics; `arrays.make_view` makes the views, `Array.rebind`
replays a root's new value into its views).

A view's new value (setitem, an in-place operator, assign, fill, sort) becomes a new value of its
root, which every view of the root then reads; graphs recorded before the write keep reading the
values they saw (nodes never change). A view made by one basic index of its root is written as
root[key] = value. Any other (reshapes, transposes, flips, complex parts, and chains of them) is
written through the positions it shows: the view's template replayed on the root's flat positions
(an int64 iota; a complex root in units of its real and imaginary parts) gives each element's
position in the root, and the root takes the new values there (an integer-array write: lazy, and
differentiable, as every write is). Through a bitcast (`view(dtype)`) the write goes in two steps,
the bitcast's result taken as the root of the part above it, its new value cast back."""
from __future__ import annotations

from typing import Any

from lazyarr import dtypes
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.patterns import substitute
from lazyarr.compiler.uop import GroupOp, Ops, UOp
from lazyarr.gathering import setitem
from lazyarr.graph import alu, cast_uop, expand_uop, imag_part, make_complex, real_part, reshape_uop, shrink_uop
from lazyarr.indexing import setitem as basic_setitem


def write(view: Array, value: UOp) -> None:
    """Give the view `view` the value `value` by giving its root the corresponding new value."""
    of = view._viewof
    if of.key is not None:
        basic_setitem(of.root, of.key, wrap(value, view.device))
        return
    of.root.rebind(_written(of.template, of.root_at, of.root.uop, value, view.device))


def _written(template: UOp, root_at: UOp, current: UOp, value: UOp, device: Any) -> UOp:
    """The root's new value when the view `template` of `root_at` (the root's value now: `current`)
    takes `value`. Through a bitcast (`view(dtype)`), in two steps: the bitcast's node as a root
    of the part above it, whose new value, cast back, is then written through the part below."""
    cut = next((u for u in template.toposort(lambda x: x is root_at) if u.op is Ops.BITCAST and u is not root_at), None)
    if cut is not None:
        above = value if cut is template else \
            _written(template, cut, substitute(cut, {root_at: current}), value, device)
        return _written(cut.src[0], root_at, current, UOp(Ops.BITCAST, cut.src[0].dtype, (above,)), device)
    if template is root_at:
        return value
    complex_root = root_at.dtype.is_complex
    positions = _positions(template, root_at, complex_root)
    m = template.size
    if value.dtype.is_complex:   # both parts, each at its own position
        pos = reshape_uop(_interleave(positions, alu(Ops.ADD, positions, 1)), (2 * m,))
        vals = reshape_uop(_interleave(real_part(value), imag_part(value)), (2 * m,))
    else:
        pos, vals = reshape_uop(positions, (m,)), reshape_uop(value, (m,))
    flat = wrap(_units(current, complex_root), device)
    setitem(flat, (wrap(pos, device),), wrap(vals, device))
    new = flat.uop
    if complex_root:
        pairs = reshape_uop(new, root_at.shape + (2,))
        parts = [reshape_uop(shrink_uop(pairs, [(0, s) for s in root_at.shape] + [(k, k + 1)]), root_at.shape)
                 for k in (0, 1)]
        return make_complex(*parts)
    return reshape_uop(new, root_at.shape)


def _units(u: UOp, complex_root: bool) -> UOp:
    """The root's elements in row-major order (a complex root's as real, imaginary, real, ...)."""
    if not complex_root:
        return reshape_uop(u, (u.size,))
    return reshape_uop(_interleave(real_part(u), imag_part(u)), (2 * u.size,))


def _interleave(a: UOp, b: UOp) -> UOp:
    """a and b side by side along a new last axis of 2."""
    shape = a.shape + (2,)
    lane = expand_uop(reshape_uop(alu(Ops.CMPEQ, UOp(Ops.IOTA, dtypes.index, (), 2), 0), (1,) * len(a.shape) + (2,)), shape)
    wide = [expand_uop(reshape_uop(x, a.shape + (1,)), shape) for x in (a, b)]
    return alu(Ops.WHERE, lane, *wide)


def _positions(template: UOp, root_at: UOp, complex_root: bool) -> UOp:
    """Each view element's position in the root's units: the template replayed on positions."""
    start = cast_uop(UOp(Ops.IOTA, dtypes.index, (), root_at.size), dtypes.int64)
    if complex_root:
        start = alu(Ops.MUL, start, 2)
    done = {root_at: reshape_uop(start, root_at.shape)}
    for u in template.toposort(lambda x: x is root_at):
        if u in done:
            continue
        src = [done.get(s, s) for s in u.src]
        if u.op in GroupOp.Movement:
            done[u] = UOp(u.op, dtypes.int64, tuple(src), u.arg)
        elif u.op is Ops.GEP:   # a complex part: the real one at the position, the imaginary one after it
            done[u] = alu(Ops.ADD, src[0], u.arg[0]) if u.arg[0] else src[0]
        elif u.op in (Ops.DETACH, Ops.NOOP, Ops.CONTIGUOUS):
            done[u] = src[0]
        else:
            raise TypeError(f"a view of {u.op.name} cannot be written through")
    return done[template]
