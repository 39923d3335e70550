"""Radix sort: a sort as a few passes of kernels written in the IR (the sort of devices whose
threads run long loops well, `Device.long_loops`: the CPU, PoCL).

Each value becomes an unsigned key of its width whose order is the sort's (`keys_of`, an
elementwise kernel): an integer's sign bit flipped, a float's bits with the sign bit flipped (all
bits for a negative number), every NaN the largest key (NaNs last), all bits inverted for a
descending sort. A least-significant-digit sort then orders the keys by one 8-bit digit a pass,
stably, so that after the last pass they are in order and equal keys keep their positions (the
sort is stable, ascending or descending). Rows (the leading axes) sort independently: each row is
cut into chunks of `CHUNK` elements at most, and every pass is three kernels:
- histogram: each chunk (in parallel) counts its elements' digits in a private array;
- offsets: for each row, the running total of the counts in digit-major, chunk-minor order is
  where each chunk's first element of each digit goes;
- scatter: each chunk (in parallel) walks its elements in order and puts each at the next
  position of its digit (a private array of 256 counters), with the positions it carries
  (int32 in between when they fit, int64 from the last pass).
The sorted keys become values again by `values_of` (elementwise: it fuses with what reads them).
A key of several parts (a complex number: its real part, then its imaginary part) is sorted by
its least significant part first, carrying positions, then by the next part gathered at them
(`lazyarr.sorting`).

Measured on 1M float32 (2 threads): histogram ~0.2-0.35 ms and scatter ~0.45-0.7 ms a pass (the
top byte of floats, few distinct values, is the slow one); the whole sort ~3-6 ms against NumPy's
3-4.5 ms (`python bench/sort.py`). 8-bit digits beat 11-bit ones (2048 counters a chunk, and as
many streams to write, thrash the caches), and one histogram a chunk beat four interleaved ones.
"""
from __future__ import annotations

import math
from typing import Any

from lazyarr import dtypes
from lazyarr.compiler.ir_kernels import Kernel, after, arg, at, end, ir_call, load, sink, store
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.dtypes import DType
from lazyarr.graph import alu, cast_uop, reshape_uop

DIGIT_BITS = 8
BUCKETS = 1 << DIGIT_BITS
CHUNK = 32768   # elements a chunk walks at most (its keys stay in L2 while its counters stay in L1)
_UNSIGNED = {1: dtypes.uint8, 2: dtypes.uint16, 4: dtypes.uint32, 8: dtypes.uint64}
_SIGNED = {1: dtypes.int8, 2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}


# ---- keys ---------------------------------------------------------------------------------------

def key_dtype(d: DType) -> DType:
    """The unsigned type of the keys of values of dtype d (a real dtype)."""
    return _UNSIGNED[d.itemsize]


def keys_of(v: UOp, descending: bool) -> UOp:
    """The values' keys (tensor level: an elementwise kernel computes them, vectorised)."""
    k_t = key_dtype(v.dtype)
    ones, sign = (1 << k_t.bits) - 1, 1 << (k_t.bits - 1)
    if v.dtype.is_bool:
        k = cast_uop(v, k_t)
    elif v.dtype.is_unsigned:
        k = v
    elif v.dtype.is_int:
        k = alu(Ops.XOR, UOp(Ops.BITCAST, k_t, (v,)), sign)
    else:   # the sign bit spread over every bit (an arithmetic shift), then the sign bit set
        spread = UOp(Ops.BITCAST, k_t, (alu(Ops.SHR, UOp(Ops.BITCAST, _SIGNED[k_t.itemsize], (v,)), k_t.bits - 1),))
        k = alu(Ops.XOR, UOp(Ops.BITCAST, k_t, (v,)), alu(Ops.OR, spread, sign))
        k = alu(Ops.WHERE, alu(Ops.CMPNE, v, v), ones, k)
    return alu(Ops.XOR, k, ones) if descending else k


def values_of(k: UOp, d: DType, descending: bool) -> UOp:
    """The values of keys k (tensor level): `keys_of`'s inverse (every NaN comes back as one NaN)."""
    ones, sign = (1 << k.dtype.bits) - 1, 1 << (k.dtype.bits - 1)
    if descending:
        k = alu(Ops.XOR, k, ones)
    if d.is_bool:
        return alu(Ops.CMPNE, k, 0)
    if d.is_unsigned:
        return k
    if d.is_int:
        return UOp(Ops.BITCAST, d, (alu(Ops.XOR, k, sign),))
    was_negative = alu(Ops.CMPLT, k, sign)
    return UOp(Ops.BITCAST, d, (alu(Ops.XOR, k, alu(Ops.WHERE, was_negative, ones, sign, dtype=k.dtype)),))


# ---- the three kernels of a pass ---------------------------------------------------------------

class _Layout:
    """Rows of n elements, each cut into `chunks` chunks of `length` (the last may be shorter)."""

    def __init__(self, rows: int, n: int) -> None:
        self.rows, self.n = rows, n
        self.chunks = max(1, -(-n // CHUNK))
        self.length = -(-n // self.chunks)
        self.pos_t = dtypes.int32 if rows * n < 2 ** 31 else dtypes.int64

    def element(self, k: Kernel, c: UOp) -> tuple[UOp, UOp, UOp, UOp]:
        """The loop over chunk c's elements, the element's index in its row, its index in the
        buffer, and whether it exists (the last chunk of a row may be shorter)."""
        i = k.loop(self.length)
        q = c % self.chunks if self.chunks > 1 else UOp.const(dtypes.index, 0)
        in_row = q * self.length + i
        return i, in_row, (c // self.chunks) * self.n + in_row, in_row.lt(self.n)

    @staticmethod
    def digit(key: UOp, shift: int) -> UOp:
        shifted = key.alu(Ops.SHR, UOp.const(key.dtype, shift))
        return shifted.alu(Ops.AND, UOp.const(key.dtype, BUCKETS - 1)).cast(dtypes.index)


def _histogram(lay: _Layout, key_t: DType, shift: int) -> UOp:
    """counts[chunk, digit]: how many of each chunk's keys have each digit. (Counting into several
    private arrays, so that runs of one digit do not wait on one counter, measured slower in all.)"""
    k = Kernel()
    counts, keys = arg(0, dtypes.int32), arg(1, key_t)
    c = k.loop(lay.rows * lay.chunks)
    tally = k.private(dtypes.int32, BUCKETS, c)
    d0 = k.loop(BUCKETS)
    zeroed = end(store(at(tally, d0), UOp.const(dtypes.int32, 0)), d0)
    i, _, e, valid = lay.element(k, c)
    slot = at(after(tally, zeroed, i), lay.digit(load(at(keys, e, valid)), shift))
    counted = end(store(slot, load(slot) + valid.cast(dtypes.int32)), i)
    d1 = k.loop(BUCKETS)
    out = store(at(counts, c * BUCKETS + d1), load(at(after(tally, counted), d1)))
    return sink(end(out, c, d1), 2, f"radix_histogram{shift // DIGIT_BITS}_{lay.rows}_{lay.n}")


def _offsets(lay: _Layout) -> UOp:
    """starts[chunk, digit]: where the chunk's first element of that digit goes (the running total
    of the row's counts, digit-major, after the rows before it)."""
    k = Kernel()
    pos_t = lay.pos_t
    starts, counts = arg(0, pos_t), arg(1, dtypes.int32)
    r = k.loop(lay.rows)
    total = k.private(pos_t, 1, r)
    z = k.loop(1)
    begun = end(store(at(total, z), (r * lay.n).cast(pos_t)), z)
    d, q = k.loop(BUCKETS), k.loop(lay.chunks)
    cell = (r * lay.chunks + q) * BUCKETS + d
    running = at(after(total, begun, d, q), UOp.const(dtypes.index, 0))
    before = load(running)
    body = [store(at(starts, cell), before), store(running, before + load(at(counts, cell)).cast(pos_t))]
    return sink(end(end(body, d, q), r), 2, f"radix_offsets_{lay.rows}_{lay.n}")


def _scatter(lay: _Layout, key_t: DType, shift: int, stores_keys: bool,
             carried: tuple[DType | None, DType | None]) -> UOp:
    """Each chunk's keys, in order, each at the next position of its digit, and the positions they
    carry (carried = their dtype in and out; in None: the element's own position in its row; out
    None: no positions are carried). The last pass of an argsort stores only the positions."""
    carried_in, carried_out = carried
    k = Kernel()
    outs = [arg(0, key_t)] if stores_keys else []
    if carried_out is not None:
        outs.append(arg(len(outs), carried_out))
    keys = arg(len(outs), key_t)
    positions = arg(len(outs) + 1, carried_in) if carried_in is not None else None
    starts = arg(len(outs) + 1 + (positions is not None), lay.pos_t)
    c = k.loop(lay.rows * lay.chunks)
    nxt = k.private(lay.pos_t, BUCKETS, c)
    d = k.loop(BUCKETS)
    begun = end(store(at(nxt, d), load(at(starts, c * BUCKETS + d))), d)
    i, in_row, e, valid = lay.element(k, c)
    key = load(at(keys, e, valid))
    slot = at(after(nxt, begun, i), lay.digit(key, shift))
    to = load(slot)
    body = [store(slot, to + valid.cast(lay.pos_t))]
    if stores_keys:
        body.append(store(at(outs[0], to.cast(dtypes.index), valid), key))
    if carried_out is not None:
        position = load(at(positions, e, valid)) if positions is not None else in_row
        body.append(store(at(outs[-1], to.cast(dtypes.index), valid), position.cast(carried_out)))
    return sink(end(end(body, i), c), len(outs) + 2 + (positions is not None),
                f"radix_scatter{shift // DIGIT_BITS}_{lay.rows}_{lay.n}")


def radix_sort(values: UOp, device: Any, descending: bool, positions: UOp | None = None,
               want_values: bool = True) -> tuple[UOp | None, UOp | None]:
    """Sort the last axis of `values` (a real dtype): the sorted values (when `want_values`) and the
    positions that sort them (int64; when `positions` is given or values are not wanted),
    starting from `positions` (the order of a sort by less significant keys)."""
    shape = values.shape
    lay = _Layout(math.prod(shape[:-1]), shape[-1])
    flat = (lay.rows * lay.n,)
    keys = reshape_uop(keys_of(values, descending), flat)
    key_t = keys.dtype
    carried = None if positions is None else reshape_uop(positions, flat)
    carry = positions is not None or not want_values
    passes = 8 * key_t.itemsize // DIGIT_BITS
    cells = (lay.rows * lay.chunks * BUCKETS,)
    for p in range(passes):
        last, shift = p == passes - 1, p * DIGIT_BITS
        counts, = ir_call(_histogram(lay, key_t, shift), device, [keys], [(cells, dtypes.int32)])
        starts, = ir_call(_offsets(lay), device, [counts], [(cells, lay.pos_t)])
        carried_out = (dtypes.int64 if last else lay.pos_t) if carry else None
        stores_keys = want_values or not last
        outs = ([(flat, key_t)] if stores_keys else []) + ([(flat, carried_out)] if carry else [])
        kernel = _scatter(lay, key_t, shift, stores_keys, (None if carried is None else carried.dtype, carried_out))
        results = ir_call(kernel, device, [keys] + ([carried] if carried is not None else []) + [starts], outs)
        keys = results[0] if stores_keys else keys
        carried = results[-1] if carry else None
    out_values = reshape_uop(values_of(keys, values.dtype, descending), shape) if want_values else None
    return out_values, (reshape_uop(carried, shape) if carry else None)
