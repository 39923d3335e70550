"""Linear algebra functions (array API section "Linear Algebra Functions"): matmul, tensordot and
vecdot, each a broadcast multiply followed by a sum (one fused kernel; matrix_transpose is a
movement, in `lazyarr.manipulation`), and NumPy's products of the same kind: dot, vdot, inner,
outer and kron."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

from lazyarr import dtypes, gpu_matmul
from lazyarr.compiler.uop import Ops, UOp, native_module
from lazyarr.elementwise import conj, multiply
from lazyarr.manipulation import matrix_transpose, permute_dims, reshape
from lazyarr.statistics import reduce
from lazyarr.arrays import Array, wrap
from lazyarr.creation import as_tensor
from lazyarr.graph import broadcast_shapes, cast_uop, const, expand_uop, normalize_axis, permute_uop, reshape_uop

_record = getattr(native_module, "record_matmul", None)   # (compiler/record_native.c; set up by lazyarr.elementwise)

__all__ = ["matmul", "tensordot", "vecdot", "dot", "vdot", "inner", "outer", "kron"]

# A large product on the CPU reads B's columns in panels of PANEL_BYTES (two 64-byte vectors: the
# register tile's columns), one row of the panel per step of k. Rows N elements apart in B put a
# panel of k ≥ 2048 rows in too few cache sets to stay in L2 (2048² float32 ran at 73% of
# OpenBLAS's speed, 2560² at 48%): from PACK_FROM bytes of panel on, B is first copied into
# contiguous panels, the product computed panel by panel, and the result copied back (two copies
# of ~1% of the time; 2048² and 2560² then run at OpenBLAS's speed; at 1536² packing cost 5-10%).
PANEL_BYTES = 128
PACK_FROM = 256 * 1024


def _pair(x1: Any, x2: Any, name: str) -> tuple[Array, Array, dtypes.DType]:
    a = x1 if type(x1) is Array.made else as_tensor(x1)   # (the commonest case without a call)
    b = x2 if type(x2) is Array.made else as_tensor(x2)
    if a.device is not b.device:
        raise ValueError(f"{name}: arrays are on different devices: {a.device.name} and {b.device.name}")
    d, e = a._uop.dtype, b._uop.dtype
    return a, b, d if e is d else dtypes.promote_types(d, e)


def matmul(x1: Array, x2: Array, /) -> Array:
    """The matrix product, broadcasting over leading axes; 1-D operands are vectors."""
    if _record is not None:   # vectors and matrices of one real dtype: these nodes, built in C
        out = _record(x1, x2)
        if out is not NotImplemented:
            return out
    a, b, d = _pair(x1, x2, "matmul")
    sa, sb = a._uop.shape, b._uop.shape   # (read once: a loop records a few products every iteration)
    if not sa or not sb:
        raise ValueError("matmul: both operands must have at least one dimension (use * for scalars)")
    ta = (1, sa[0]) if len(sa) == 1 else sa   # (a vector as a row, or a column)
    tb = (sb[0], 1) if len(sb) == 1 else sb
    (n, k), (k2, m) = ta[-2:], tb[-2:]
    if k != k2:
        raise ValueError(f"matmul: shapes {sa} and {sb} are not aligned: {k} (last axis of x1) != "
                         f"{k2} ({'first' if len(sb) == 1 else 'second-to-last'} axis of x2)")
    batch = () if len(ta) == len(tb) == 2 else broadcast_shapes(ta[:-2], tb[:-2])
    if len(sa) == len(sb) == 2 and a.device.host_memory and _packs(n, k, m, d):
        return wrap(_packed_product(cast_uop(a._uop, d), cast_uop(b._uop, d), n, k, m, d), a.device)
    if gpu_matmul.applies(a.device, ta, tb, batch, d):
        return wrap(gpu_matmul.product(cast_uop(a._uop, d), cast_uop(b._uop, d), batch, d, a.device), a.device)
    full = batch + (n, k, m)
    # (a vector goes straight to its 3-d shape, and the sum straight to the result's: one reshape,
    # not two, of values no array holds; a loop of matrix-vector products records ~25% fewer nodes)
    pa = expand_uop(reshape_uop(cast_uop(a._uop, d), ta[:-2] + (n, k, 1)), full)
    pb = expand_uop(reshape_uop(cast_uop(b._uop, d), tb[:-2] + (1, k, m)), full)
    prod = UOp(Ops.AND if d.is_bool else Ops.MUL, d, (pa, pb))
    op, shape = Ops.MAX if d.is_bool else Ops.ADD, batch + ((n,) if len(sa) > 1 else ()) + ((m,) if len(sb) > 1 else ())
    if k == 0:   # empty sums: zeros (False for bool, whose OR-reduction reduce has no identity for), as NumPy's
        out = const(False if d.is_bool else 0, d, batch + (n, m))
    elif 0 in full:   # no sums at all
        out = reduce(wrap(prod, a.device), op, len(full) - 2, False).uop
    else:   # reduce's nodes, their shapes known here (every step of a training loop records a few)
        if prod._shape is None:
            prod._shape = full
        out = UOp(Ops.REDUCE_AXIS, d, (prod,), (op, (len(full) - 2,)))
        if out._shape is None:
            out._shape = batch + (n, 1, m)
    return wrap(reshape_uop(out, shape), a.device)


def _packs(n: int, k: int, m: int, d: dtypes.DType) -> bool:
    """Whether (n, k) @ (k, m) of float dtype d runs with B packed (see PANEL_BYTES)."""
    p = PANEL_BYTES // d.itemsize
    return d in (dtypes.float32, dtypes.float64) and n >= 256 and m >= 4 * p and m % p == 0 and k * PANEL_BYTES >= PACK_FROM


def _packed_product(a: UOp, b: UOp, n: int, k: int, m: int, d: dtypes.DType) -> UOp:
    """a @ b with b's columns copied into contiguous panels first (a (m/p, k, p) buffer), the
    product computed as a batch of products with one panel each (a (m/p, n, p) buffer), and that
    permuted back to (n, m): CONTIGUOUS keeps each a buffer of its own, not fused into a view."""
    p = PANEL_BYTES // d.itemsize
    panels = UOp(Ops.CONTIGUOUS, d, (permute_uop(reshape_uop(b, (k, m // p, p)), (1, 0, 2)),))
    full = (m // p, n, k, p)
    prod = UOp(Ops.MUL, d, (expand_uop(reshape_uop(a, (1, n, k, 1)), full), expand_uop(reshape_uop(panels, (m // p, 1, k, p)), full)))
    out = UOp(Ops.CONTIGUOUS, d, (reshape_uop(UOp(Ops.REDUCE_AXIS, d, (prod,), (Ops.ADD, (2,))), (m // p, n, p)),))
    return reshape_uop(permute_uop(out, (1, 0, 2)), (n, m))


def tensordot(x1: Array, x2: Array, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    """The sum of products over the last `axes` axes of x1 and first of x2 (or the listed axes)."""
    a, b, _ = _pair(x1, x2, "tensordot")
    if isinstance(axes, int) or hasattr(axes, "__index__"):
        n = operator.index(axes)
        if n < 0:
            raise ValueError(f"tensordot: axes must be non-negative, got {n}")
        if n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: cannot sum over {n} axes of arrays of shapes {a.shape} and {b.shape}")
        ax_a, ax_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        if not isinstance(axes, (tuple, list)) or len(axes) != 2:
            raise TypeError(f"tensordot: axes must be an int or a pair of sequences of axes, got {axes!r}")
        ax_a, ax_b = ([normalize_axis(i, x.ndim) for i in (side if isinstance(side, (tuple, list)) else (side,))]
                      for side, x in zip(axes, (a, b)))
        if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b):
            raise ValueError(f"tensordot: repeated axis in {axes!r}")
    if len(ax_a) != len(ax_b) or any(a.shape[i] != b.shape[j] for i, j in zip(ax_a, ax_b)):
        raise ValueError(f"tensordot: shape mismatch for sum over axes {ax_a} of {a.shape} and {ax_b} of {b.shape}")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    k = math.prod(a.shape[i] for i in ax_a)
    # the free lengths spelled out (not -1: with k == 0 a -1 would be ambiguous)
    am = reshape(permute_dims(a, free_a + ax_a), (math.prod(a.shape[i] for i in free_a), k))
    bm = reshape(permute_dims(b, ax_b + free_b), (k, math.prod(b.shape[i] for i in free_b)))
    out = matmul(am, bm)
    return reshape(out, tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b))


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """The dot product of vectors along `axis`, broadcasting over the other axes."""
    a, b, d = _pair(x1, x2, "vecdot")
    shape = broadcast_shapes(a.shape, b.shape)
    ax = normalize_axis(axis, len(shape)) - len(shape)  # counted from the end
    if -ax > min(a.ndim, b.ndim) or a.shape[ax] != b.shape[ax]:
        raise ValueError(f"vecdot: shapes {a.shape} and {b.shape} differ in length along axis {axis}")
    return reduce(multiply(conj(a), b), Ops.ADD, ax % len(shape), False)


def dot(a: Array, b: Array, /) -> Array:
    """NumPy's dot: a product for a 0-d operand, the inner product of vectors, else a sum over
    a's last axis and b's second-to-last (b's only axis when b is 1-D), without broadcasting:
    the result's shape is a.shape[:-1] + b.shape[:-2] + b.shape[-1:]."""
    a, b, _ = _pair(a, b, "dot")
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim == 1:
        return tensordot(a, b, axes=([a.ndim - 1], [0]))
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))


def vdot(a: Array, b: Array, /) -> Array:
    """NumPy's vdot: the flattened arrays' dot product, the first conjugated."""
    a, b, _ = _pair(a, b, "vdot")
    if a.size != b.size:
        raise ValueError(f"vdot: arrays of {a.size} and {b.size} elements (shapes {a.shape} and {b.shape}) differ in size")
    return vecdot(reshape(a, (a.size,)), reshape(b, (b.size,)))


def inner(a: Array, b: Array, /) -> Array:
    """NumPy's inner: a sum over the last axes (shape a.shape[:-1] + b.shape[:-1])."""
    a, b, _ = _pair(a, b, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def outer(a: Array, b: Array, /) -> Array:
    """NumPy's outer: every product of an element of a with one of b (both flattened)."""
    a, b, _ = _pair(a, b, "outer")
    return multiply(reshape(a, (a.size, 1)), reshape(b, (1, b.size)))


def kron(a: Array, b: Array, /) -> Array:
    """NumPy's kron: the Kronecker product, blocks of b scaled by a's elements (the shapes aligned
    at their ends; the result's is their product axis by axis)."""
    a, b, _ = _pair(a, b, "kron")
    nd = max(a.ndim, b.ndim)
    sa, sb = (1,) * (nd - a.ndim) + a.shape, (1,) * (nd - b.ndim) + b.shape
    # a[i0, i1, ...] * b[j0, j1, ...] at (i0, j0, i1, j1, ...), then each pair of axes merged
    pa = reshape(a, tuple(v for n in sa for v in (n, 1)))
    pb = reshape(b, tuple(v for n in sb for v in (1, n)))
    return reshape(multiply(pa, pb), tuple(m * n for m, n in zip(sa, sb)))
