"""Seedable, counter-based random numbers, computed in kernels.

Element i of a call's stream is splitmix64(key + (counter + i)·φ), φ = 0x9E3779B97F4A7C15: pure
64-bit integer arithmetic, so every device gives the same numbers for the same seed. Each call
takes the next counter values, so successive calls differ. The key and counter reach the kernel
through a one-element buffer, not as constants: a training loop's dropout compiles once, not on
every step.

`permutation` ranks random keys by counting (O(n²) work in one fused kernel per pass), which is
fine for the sizes of data-set shuffles (tens of thousands of elements) and slow beyond.
"""
from __future__ import annotations

import math
import operator
import os
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.creation import asarray, iota, normalize_shape
from lazyarr.graph import alu, cast_uop, expand_uop, gather_uop, reshape_uop
from lazyarr.runtime.devices import get_device
from lazyarr.arrays import Array, wrap

GOLDEN = 0x9E3779B97F4A7C15
MASK64 = (1 << 64) - 1
u64 = dtypes.uint64


class _State:
    key = int.from_bytes(os.urandom(8), "little")
    counter = 0


def seed(s: int) -> None:
    """Restart the stream: the same seed gives the same numbers on every device."""
    _State.key = _mix((int(s) * GOLDEN + 0x632BE59BD9B4E019) & MASK64)
    _State.counter = 0


def _mix(z: int) -> int:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & MASK64
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & MASK64
    return z ^ (z >> 31)


def _bits(n: int, device: Any) -> UOp:
    """n random uint64 values (a lazy vector)."""
    start = (_State.key + _State.counter * GOLDEN) & MASK64
    _State.counter += n
    base = asarray(np.array([start], dtype=np.uint64), device=device).uop
    z = alu(Ops.ADD, expand_uop(reshape_uop(base, (1,)), (n,)), alu(Ops.MUL, cast_uop(iota(n), u64), GOLDEN))
    z = alu(Ops.MUL, alu(Ops.XOR, z, alu(Ops.SHR, z, 30)), 0xBF58476D1CE4E5B9)
    z = alu(Ops.MUL, alu(Ops.XOR, z, alu(Ops.SHR, z, 27)), 0x94D049BB133111EB)
    return alu(Ops.XOR, z, alu(Ops.SHR, z, 31))


def _unit(n: int, dtype: dtypes.DType, device: Any) -> UOp:
    """n uniform values in [0, 1) of a float dtype, from the top bits of the stream."""
    bits = _bits(n, device)
    mantissa = 24 if dtype is dtypes.float32 else 53
    return alu(Ops.MUL, cast_uop(alu(Ops.SHR, bits, 64 - mantissa), dtype), 2.0 ** -mantissa)


def _float_dtype(dtype: Any) -> dtypes.DType:
    d = dtypes.default_float if dtype is None else dtypes.as_dtype(dtype)
    if not d.is_float:
        raise TypeError(f"random: a floating-point dtype is needed, not {d}")
    return d


def uniform(low: float = 0.0, high: float = 1.0, shape: Any = (), *, dtype: Any = None, device: Any = None) -> Array:
    """Values drawn uniformly from [low, high)."""
    shape, d, dev = normalize_shape(shape), _float_dtype(dtype), get_device(device)
    n = math.prod(shape)
    u = alu(Ops.ADD, alu(Ops.MUL, _unit(n, d, dev), float(high) - float(low)), float(low))
    return wrap(reshape_uop(u, shape), dev)


def random(shape: Any = (), *, dtype: Any = None, device: Any = None) -> Array:
    """Values drawn uniformly from [0, 1)."""
    return uniform(0.0, 1.0, shape, dtype=dtype, device=device)


def normal(loc: float = 0.0, scale: float = 1.0, shape: Any = (), *, dtype: Any = None, device: Any = None) -> Array:
    """Values drawn from the normal distribution (Box–Muller on two uniform streams)."""
    shape, d, dev = normalize_shape(shape), _float_dtype(dtype), get_device(device)
    n = math.prod(shape)
    u1 = alu(Ops.SUB, 1.0, _unit(n, d, dev))           # (0, 1]: the log is finite
    u2 = _unit(n, d, dev)
    radius = alu(Ops.SQRT, alu(Ops.MUL, alu(Ops.LOG, u1), -2.0))
    z = alu(Ops.MUL, radius, alu(Ops.COS, alu(Ops.MUL, u2, 2 * math.pi)))
    return wrap(reshape_uop(alu(Ops.ADD, alu(Ops.MUL, z, float(scale)), float(loc)), shape), dev)


def integers(low: int, high: int | None = None, shape: Any = (), *, dtype: Any = None, device: Any = None) -> Array:
    """Integers drawn uniformly from [low, high) (from [0, low) when high is None)."""
    if high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    if high <= low:
        raise ValueError(f"integers: high ({high}) must be greater than low ({low})")
    d = dtypes.default_int if dtype is None else dtypes.as_dtype(dtype)
    if not d.is_int:
        raise TypeError(f"integers: an integer dtype is needed, not {d}")
    dtypes.check_scalar_fits(low, d)
    dtypes.check_scalar_fits(high - 1, d)
    shape, dev = normalize_shape(shape), get_device(device)
    n = math.prod(shape)
    offset = alu(Ops.MOD, _bits(n, dev), high - low)
    value = alu(Ops.ADD, cast_uop(offset, dtypes.int64), low) if low else cast_uop(offset, dtypes.int64)
    return wrap(reshape_uop(cast_uop(value, d), shape), dev)


def permutation(x: int | Array, *, device: Any = None) -> Array:
    """A random ordering of range(x) (or of the elements of the 1-D tensor x)."""
    if isinstance(x, Array):
        if x.ndim != 1:
            raise ValueError(f"permutation: expected a 1-D array, got shape {x.shape}")
        order = permutation(x.shape[0], device=x.device)
        return wrap(gather_uop(x.uop, [order.uop]), x.device)
    try:
        n = operator.index(x)
    except TypeError:
        raise TypeError(f"permutation: x must be an integer or a 1-D array, got {type(x).__name__}") from None
    if n < 0:
        raise ValueError(f"permutation: n must be non-negative, got {n}")
    dev = get_device(device)
    keys = _bits(n, dev)
    # rank[i] = #{j : key[j] < key[i] or (key[j] == key[i] and j < i)}
    ki, kj = expand_uop(reshape_uop(keys, (n, 1)), (n, n)), expand_uop(reshape_uop(keys, (1, n)), (n, n))
    ii, jj = expand_uop(reshape_uop(iota(n), (n, 1)), (n, n)), expand_uop(reshape_uop(iota(n), (1, n)), (n, n))
    before = alu(Ops.OR, alu(Ops.CMPLT, kj, ki), alu(Ops.AND, alu(Ops.CMPEQ, kj, ki), alu(Ops.CMPLT, jj, ii)))
    rank = UOp(Ops.REDUCE_AXIS, dtypes.int64, (cast_uop(before, dtypes.int64),), (Ops.ADD, (1,)))
    rank = UOp(Ops.CONTIGUOUS, dtypes.int64, (reshape_uop(rank, (n,)),))
    # perm[k] = the i whose rank is k
    hit = alu(Ops.CMPEQ, expand_uop(reshape_uop(rank, (1, n)), (n, n)), ii)
    perm = UOp(Ops.REDUCE_AXIS, dtypes.int64, (alu(Ops.WHERE, hit, jj, 0),), (Ops.ADD, (1,)))
    return wrap(reshape_uop(perm, (n,)), dev)
