"""Bitonic sort: the sort of devices whose threads do not run long loops well (a GPU), a network of
compare-exchange stages, each a pass over the keys by one kernel written in the IR.

The values become unsigned keys in the sort's order (`radix_sort.keys_of`: NaNs last, or first
descending, -0.0 before 0.0), each row padded to a power of two N with the largest key (padding
sorts after every value, and ties with it are broken by position where positions are carried).
The network has log2(N)·(log2(N)+1)/2 stages; stage (k, j) compares element i with element i + j
for every i whose bit j is clear, and puts the smaller first in blocks of k that ascend (bit k of
i clear), the larger first in the others. One work-item a pair: each element is read once and
written once, into a new buffer.

Every stage runs the same kernel: k and j travel in a small buffer of two integers (log2 k,
log2 j) that is the stage's only other input, so a sort compiles one kernel, not one a stage (a
GPU's compiler takes ~0.5 s a kernel; 1M elements are 210 stages). Positions, where carried
(argsort, a complex sort by its parts, a sort that gradients flow through), are int32 and break
ties between equal keys, which makes the sort stable.
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.ir_kernels import Kernel, arg, at, end, ir_call, load, sink, store
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.creation import asarray
from lazyarr.graph import alu, cast_uop, const, expand_uop, pad_uop, reshape_uop, shrink_uop
from lazyarr.radix_sort import keys_of, values_of

_POSITION = dtypes.int32


def _stage_kernel(key_ts: list[Any], rows: int, n: int, with_positions: bool) -> UOp:
    """The kernel of every stage over `rows` rows of n (a power of two) keys of the given dtypes
    (the most significant part first) and their positions. Arguments: the outputs (keys, then
    positions), the inputs in the same order, then the stage's (log2 k, log2 j)."""
    m = len(key_ts) + with_positions
    outs = [arg(i, t) for i, t in enumerate(key_ts)] + ([arg(m - 1, _POSITION)] if with_positions else [])
    ins = [arg(m + i, t) for i, t in enumerate(key_ts)] + ([arg(2 * m - 1, _POSITION)] if with_positions else [])
    stage = arg(2 * m, dtypes.int32)
    log_k, log_j = (load(at(stage, UOp.const(dtypes.index, s))).cast(dtypes.index) for s in (0, 1))
    one = UOp.const(dtypes.index, 1)
    p = Kernel().loop(rows * n // 2)
    half = n // 2
    row, q = (p // half, p % half) if rows > 1 else (UOp.const(dtypes.index, 0), p)
    # the pair's first element in its row: q with a zero bit inserted at position log2 j
    in_row = (q.alu(Ops.SHR, log_j).alu(Ops.SHL, log_j + 1)) + (q & (one.alu(Ops.SHL, log_j) - 1))
    first = row * n + in_row
    second = first + one.alu(Ops.SHL, log_j)
    a = [load(at(b, first)) for b in ins]
    b = [load(at(b, second)) for b in ins]
    b_first = b[-1].lt(a[-1])   # lexicographic, the least significant part (positions) first
    for x, y in zip(reversed(a[:-1]), reversed(b[:-1])):
        b_first = y.lt(x) | (y.eq(x) & b_first)
    descending_block = in_row.alu(Ops.SHR, log_k).alu(Ops.AND, one).ne(0)
    swap = b_first.alu(Ops.XOR, descending_block)
    stores = []
    for out, x, y in zip(outs, a, b):
        stores += [store(at(out, first), swap.where(y, x)), store(at(out, second), swap.where(x, y))]
    names = "_".join(t.name for t in key_ts)
    return sink(end(stores, p), 2 * m + 1, f"bitonic_{names}{'_pos' if with_positions else ''}_{rows}_{n}")


@functools.lru_cache(maxsize=None)
def _stage_parameters(device: Any, log_k: int, log_j: int) -> UOp:
    """The buffer of a stage's (log2 k, log2 j) on `device`: made once, never written, shared by
    every sort's stage (k, j)."""
    return asarray(np.array([log_k, log_j], np.int32), device=device).uop


def bitonic_sort(parts: list[UOp], device: Any, descending: bool, want_positions: bool) -> UOp:
    """The last axis of `parts` (real arrays of one shape: a key's parts, the most significant
    first) sorted: the sorted values of parts[0] (one part, no positions wanted), or the int64
    positions that sort them (stable)."""
    shape = parts[0].shape
    lead, n = shape[:-1], shape[-1]
    rows, size = math.prod(lead), 1 << (n - 1).bit_length()
    flat = (rows, size)
    keys = []
    for part in parts:
        k = reshape_uop(keys_of(part, descending), (rows, n))
        if size > n:   # padding: the largest key
            inside = expand_uop(reshape_uop(alu(Ops.CMPLT, UOp(Ops.IOTA, dtypes.index, (), size), n), (1, size)), flat)
            k = alu(Ops.WHERE, inside, pad_uop(k, [(0, 0), (0, size - n)]), const((1 << k.dtype.bits) - 1, k.dtype, flat))
        keys.append(k)
    with_positions = want_positions or len(parts) > 1
    if with_positions:
        keys.append(expand_uop(reshape_uop(cast_uop(UOp(Ops.IOTA, dtypes.index, (), size), _POSITION), (1, size)), flat))
    kernel = _stage_kernel([k.dtype for k in keys[:len(parts)]], rows, size, with_positions)
    outputs = [(flat, k.dtype) for k in keys]
    log_n = size.bit_length() - 1
    for log_k in range(1, log_n + 1):
        for log_j in range(log_k - 1, -1, -1):
            keys = list(ir_call(kernel, device, keys + [_stage_parameters(device, log_k, log_j)], outputs))
    out = keys[-1] if with_positions else values_of(keys[0], parts[0].dtype, descending)
    out = reshape_uop(shrink_uop(out, [(0, rows), (0, n)]), shape)
    return cast_uop(out, dtypes.int64) if with_positions else out
