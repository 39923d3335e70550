"""Batches of small matrices factored by kernels written in the IR (`lazyarr.compiler.ir_kernels`):
what `lazyarr.lapack` runs on a device whose memory is not the host's (OpenCL), where NumPy's
LAPACK would cost a round trip through the host. One work-item factors one matrix, in global
memory of its own (each matrix's part of an output, used as scratch), so batches spread over the
device and the matrices stay small: up to `SMALL` rows.

- `gauss_jordan(a, b)`: elimination with partial pivoting (the largest magnitude in the column,
  the first of equals) on [A | B]: returns B's columns reduced (divide by the pivots to get A⁻¹B),
  the pivots in order, and whether each step swapped rows. solve and inv divide; det and slogdet
  are the pivots' product and the swaps' parity. A zero pivot skips its step (so a singular
  matrix's determinant is 0, not NaN), and `nonsingular` raises LinAlgError for it.
- `cholesky_lower(a)`: the Cholesky–Banachiewicz order, row by row from the lower triangle; the
  squared diagonal before each square root is returned too, and `positive` raises LinAlgError
  where one is not positive (or NaN), as NumPy does.

The checks read a few values per matrix back to the host (a precompiled routine) and make the
results depend on them, so an error is raised when the results are computed, never a NaN."""
from __future__ import annotations

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.ir_kernels import Kernel, after, arg, at, end, group, ir_call, load, sink, store
from lazyarr.compiler.uop import CallSpec, Ops, UOp
from lazyarr.graph import call_results

SMALL = 64   # rows of the largest matrix factored on the device


def _index(*parts: tuple[UOp | int, int]) -> UOp:
    """Σ index·stride, as an index expression."""
    out = UOp.const(dtypes.index, 0)
    for i, stride in parts:
        i = UOp.const(dtypes.index, i) if isinstance(i, int) else i
        out = out + i * stride
    return out


def gauss_jordan(a: Array, b: Array | None) -> tuple[Array | None, Array, Array]:
    """For A (B, n, n) and B (B, n, k) or None: the reduced right-hand sides (B, n, k), the pivots
    (B, n) and the swaps (B, n, int32)."""
    batch, n = a.shape[0], a.shape[-1]
    k = b.shape[-1] if b is not None else 0
    d = a.dtype
    kn = Kernel()
    work, rhs, pivots, swaps = arg(0, d), arg(1, d), arg(2, d), arg(3, dtypes.int32)
    src_a = arg(4, d)
    src_b = arg(5, d) if b is not None else None
    m = kn.loop(batch)
    i, j = kn.loop(n), kn.loop(n)
    copied = [store(at(work, _index((m, n * n), (i, n), (j, 1))), load(at(src_a, _index((m, n * n), (i, n), (j, 1)))))]
    copied = end(copied, i, j)
    if b is not None:
        i2, j2 = kn.loop(n), kn.loop(k)
        copied = group(copied, end(store(at(rhs, _index((m, n * k), (i2, k), (j2, 1))),
                                         load(at(src_b, _index((m, n * k), (i2, k), (j2, 1))))), i2, j2))
    c = kn.loop(n)
    w0 = after(work, copied, c)

    def cell(buf: UOp, row: UOp, col: UOp, width: int) -> UOp:
        return at(buf, _index((m, n * width), (row, width), (col, 1)))
    # the pivot: the largest magnitude at or below the diagonal, the first of equals
    r1, r2 = kn.loop(n), kn.loop(n)
    below = r1.alu(Ops.CMPLT, c).alu(Ops.CMPEQ, UOp.const(dtypes.bool_, False))
    mag1 = load(cell(w0, r1, c, n)).alu(Ops.ABS)
    largest = UOp(Ops.REDUCE, d, (below.where(mag1, UOp.const(d, -1.0)), r1), Ops.MAX)
    mag2 = load(cell(w0, r2, c, n)).alu(Ops.ABS)
    is_it = r2.alu(Ops.CMPLT, c).alu(Ops.CMPEQ, UOp.const(dtypes.bool_, False)).alu(Ops.AND, mag2.eq(largest))
    p = UOp(Ops.REDUCE, dtypes.index, (is_it.where(r2, UOp.const(dtypes.index, n)), r2), Ops.MIN)
    pivot = load(cell(w0, p, c, n))
    steps = [store(at(pivots, _index((m, n), (c, 1))), pivot),
             store(at(swaps, _index((m, n), (c, 1))), p.ne(c).cast(dtypes.int32))]
    # rows c and p exchanged, in the matrix and the right-hand sides
    s1 = kn.loop(n)
    row_c, row_p = load(cell(w0, c, s1, n)), load(cell(w0, p, s1, n))
    swapped = [end([store(cell(work, c, s1, n), row_p), store(cell(work, p, s1, n), row_c)], s1)]
    if b is not None:
        s2 = kn.loop(k)
        x0 = after(rhs, copied, c)
        rc, rp = load(cell(x0, c, s2, k)), load(cell(x0, p, s2, k))
        swapped.append(end([store(cell(rhs, c, s2, k), rp), store(cell(rhs, p, s2, k), rc)], s2))
    swap_done = group(*swapped)
    # every other row less its multiple of row c (a zero pivot: nothing to eliminate with)
    r = kn.loop(n)
    w1 = after(work, swap_done, r)
    zero = UOp.const(d, 0.0)
    factor = pivot.eq(zero).where(zero, load(cell(w1, r, c, n)).alu(Ops.FDIV, pivot))
    other = r.ne(c)
    e1 = kn.loop(n)
    w2 = after(work, swap_done, r, e1)
    target = cell(w2, r, e1, n)
    updates = [end(store(at(work, target.src[1], other), load(target) - factor * load(cell(w2, c, e1, n))), e1)]
    if b is not None:
        e2 = kn.loop(k)
        x2 = after(rhs, swap_done, r, e2)
        tx = cell(x2, r, e2, k)
        updates.append(end(store(at(rhs, tx.src[1], other), load(tx) - factor * load(cell(x2, c, e2, k))), e2))
    eliminated = end(updates, r)
    root = end(end([*steps, eliminated], c), m)
    name = f"gauss_jordan_{batch}_{n}_{k}"
    outs = [((batch, n, n), d), ((batch, n, k), d), ((batch, n), d), ((batch, n), dtypes.int32)]
    inputs = [a.uop] + ([b.uop] if b is not None else [])
    results = ir_call(sink(root, 4 + len(inputs), name, independent=(m,)), a.device, inputs, outs)
    x, piv, sw = (wrap(u, a.device) for u in results[1:])
    return (x if b is not None else None), piv, sw


def cholesky_lower(a: Array) -> tuple[Array, Array]:
    """For A (B, n, n): L (lower triangular, from A's lower triangle) and each step's squared
    diagonal before its square root (B, n)."""
    batch, n = a.shape[0], a.shape[-1]
    d = a.dtype
    kn = Kernel()
    low, squares, src = arg(0, d), arg(1, d), arg(2, d)
    m = kn.loop(batch)
    i0, j0 = kn.loop(n), kn.loop(n)
    zeroed = end(store(at(low, _index((m, n * n), (i0, n), (j0, 1))), UOp.const(d, 0.0)), i0, j0)

    def cell(buf: UOp, row: UOp, col: UOp) -> UOp:
        return at(buf, _index((m, n * n), (row, n), (col, 1)))
    j = kn.loop(n)
    k1 = kn.loop(n)
    l0 = after(low, zeroed, j, k1)
    before_j = k1.alu(Ops.CMPLT, j)
    sq = UOp(Ops.REDUCE, d, (before_j.where(load(cell(l0, j, k1)) * load(cell(l0, j, k1)), UOp.const(d, 0.0)), k1),
             Ops.ADD)
    s = load(cell(src, j, j)) - sq
    diag = s.alu(Ops.SQRT)
    steps = [store(at(squares, _index((m, n), (j, 1))), s), store(cell(low, j, j), diag)]
    i = kn.loop(n)
    k2 = kn.loop(n)
    l1 = after(low, zeroed, i, k2)
    dot = UOp(Ops.REDUCE, d, (k2.alu(Ops.CMPLT, j).where(load(cell(l1, i, k2)) * load(cell(l1, j, k2)),
                                                         UOp.const(d, 0.0)), k2), Ops.ADD)
    below = j.alu(Ops.CMPLT, i)
    column = end(store(at(low, cell(low, i, j).src[1], below), (load(cell(src, i, j)) - dot).alu(Ops.FDIV, diag)), i)
    root = end(end([*steps, column], j), m)
    results = ir_call(sink(root, 3, f"cholesky_{batch}_{n}"), a.device, [a.uop], [((batch, n, n), d), ((batch, n), d)])
    return wrap(results[0], a.device), wrap(results[1], a.device)


def _nonsingular(ok: np.ndarray, pivots: np.ndarray) -> None:
    if np.any(pivots == 0):
        raise np.linalg.LinAlgError("Singular matrix")
    ok[...] = 1


def _positive(ok: np.ndarray, squares: np.ndarray) -> None:
    if not np.all(squares > 0):
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    ok[...] = 1


def checked(values: Array, witness: Array, routine) -> Array:
    """values, once `routine` has looked at `witness` on the host and raised where NumPy would:
    values times the routine's 1, so that computing them runs the check."""
    spec = CallSpec(routine.__name__.strip("_"), None, routine, ((witness.shape, witness.dtype),),
                    (((), values.dtype),), (), (), device=witness.device)
    ok = wrap(call_results(spec, [witness.uop])[0], values.device)
    return values * ok


def nonsingular(values: Array, pivots: Array) -> Array:
    return checked(values, pivots, _nonsingular)


def positive(values: Array, squares: Array) -> Array:
    return checked(values, squares, _positive)
