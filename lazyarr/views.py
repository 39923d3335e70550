"""Writes through views (NumPy's semantics; `arrays.make_view` makes the views, `Array.rebind`
replays a root's new value into its views).

A view's new value (setitem, an in-place operator, assign, fill, sort) becomes a new value of its
root, which every view of the root then reads; graphs recorded before the write keep reading the
values they saw (nodes never change). A view made by one basic index of its root is written as
root[key] = value. Any other (reshapes, transposes, flips, complex parts, and chains of them) is
written through the positions it shows: the view's template replayed on the root's flat positions
(an int64 iota; a complex root in units of its real and imaginary parts) gives each element's
position in the root, and the root takes the new values there (an integer-array write: lazy, and
differentiable, as every write is)."""
from __future__ import annotations

from lazyarr import dtypes
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.uop import GroupOp, Ops, UOp
from lazyarr.gathering import setitem
from lazyarr.graph import alu, cast_uop, expand_uop, imag_part, make_complex, real_part, reshape_uop, shrink_uop
from lazyarr.indexing import setitem as basic_setitem


def write(view: Array, value: UOp) -> None:
    """Give the view `view` the value `value` by giving its root the corresponding new value."""
    of = view._viewof
    root = of.root
    if of.key is not None:
        basic_setitem(root, of.key, wrap(value, view.device))
        return
    complex_root = root.dtype.is_complex
    n = root.size
    units = n * 2 if complex_root else n
    positions = _positions(of, n, complex_root)
    if value.dtype.is_complex:   # both parts, each at its own position
        m = view.size
        pos = reshape_uop(_interleave(positions, alu(Ops.ADD, positions, 1)), (2 * m,))
        vals = reshape_uop(_interleave(real_part(value), imag_part(value)), (2 * m,))
    else:
        pos, vals = reshape_uop(positions, (view.size,)), reshape_uop(value, (view.size,))
    flat = wrap(_units(root.uop, complex_root), root.device)
    setitem(flat, (wrap(pos, root.device),), wrap(vals, root.device))
    new = flat.uop
    if complex_root:
        pairs = reshape_uop(new, root.shape + (2,))
        parts = [reshape_uop(shrink_uop(pairs, [(0, s) for s in root.shape] + [(k, k + 1)]), root.shape) for k in (0, 1)]
        new = make_complex(*parts)
    else:
        new = reshape_uop(new, root.shape)
    root.rebind(new)


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


def _positions(of, n: int, complex_root: bool) -> UOp:
    """Each view element's position in the root's units: the template replayed on positions."""
    start = cast_uop(UOp(Ops.IOTA, dtypes.index, (), n), dtypes.int64)
    if complex_root:
        start = alu(Ops.MUL, start, 2)
    done = {of.root_at: reshape_uop(start, of.root.shape)}
    for u in of.template.toposort(lambda x: x is of.root_at):
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
    return done[of.template]

