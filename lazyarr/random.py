"""Seedable, counter-based random numbers, computed in kernels, with NumPy's two interfaces.

Element i of a call's stream is splitmix64(key + (counter + i)·φ), φ = 0x9E3779B97F4A7C15: pure
64-bit integer arithmetic, so every device gives the same numbers for the same seed (they are
lazyarr's numbers, not NumPy's). Each call takes the next counter values, so successive calls
differ. The key and counter reach the kernel through a one-element buffer, not as constants: a
training loop's dropout compiles once, not on every step.

- `default_rng(seed)` returns a `Generator` with NumPy's methods and `size=` keyword: random,
  uniform, normal, standard_normal, exponential, integers, choice, permutation, shuffle.
- The module's functions draw from one global generator: lazyarr's own (`seed`, `uniform`,
  `normal`, `integers`, `random`, `permutation`, with `shape=` as well as `size=`) and NumPy's
  legacy ones (`rand`, `randn`, `randint`, `random_sample`, `choice`, `shuffle`).

A permutation sorts random keys (`argsort`: a radix sort on the CPU); `choice` without
replacement takes a permutation's head, or, with probabilities `p`, the largest of u^(1/p)
(Efraimidis–Spirakis); with replacement it inverts the cumulative distribution by a sorted search.
"""
from __future__ import annotations

import math
import operator
import os
from typing import Any

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.creation import as_tensor, asarray, iota, normalize_shape
from lazyarr.elementwise import divide, power
from lazyarr.gathering import take
from lazyarr.graph import alu, cast_uop, expand_uop, non_negative_int, reshape_uop
from lazyarr.runtime.devices import get_device
from lazyarr.searching import searchsorted
from lazyarr.sorting import argsort
from lazyarr.statistics import cumulative_sum
from lazyarr import numpy_fallback

GOLDEN = 0x9E3779B97F4A7C15
MASK64 = (1 << 64) - 1
u64 = dtypes.uint64


def _mix(z: int) -> int:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & MASK64
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & MASK64
    return z ^ (z >> 31)


def _float_dtype(dtype: Any) -> dtypes.DType:
    d = dtypes.default_float if dtype is None else dtypes.as_dtype(dtype)
    if not d.is_float:
        raise TypeError(f"random: a floating-point dtype is needed, not {d}")
    return d


def _shape(size: Any, shape: Any = None) -> tuple[int, ...]:
    """NumPy's size= (None: one value, a 0-d array here) or lazyarr's shape=."""
    if size is not None and shape is not None and normalize_shape(size) != normalize_shape(shape):
        raise TypeError("random: give size or shape, not both")
    chosen = size if size is not None else shape
    return () if chosen is None else normalize_shape(chosen)


class Generator:
    """A stream of random numbers (NumPy's Generator interface; lazyarr's counter-based numbers)."""

    def __init__(self, seed: Any = None):
        if seed is None:
            self.key = int.from_bytes(os.urandom(8), "little")
        else:
            s = non_negative_int("random", "a seed (or None)", seed)
            self.key = _mix((s * GOLDEN + 0x632BE59BD9B4E019) & MASK64)
        self.counter = 0

    def __repr__(self) -> str:
        return f"Generator(lazyarr counter-based, counter={self.counter})"

    # ---- the stream ------------------------------------------------------------------------
    def _bits(self, n: int, device: Any) -> UOp:
        """n random uint64 values (a lazy vector)."""
        start = (self.key + self.counter * GOLDEN) & MASK64
        self.counter += n
        base = asarray(np.array([start], dtype=np.uint64), device=device).uop
        z = alu(Ops.ADD, expand_uop(reshape_uop(base, (1,)), (n,)), alu(Ops.MUL, cast_uop(iota(n), u64), GOLDEN))
        z = alu(Ops.MUL, alu(Ops.XOR, z, alu(Ops.SHR, z, 30)), 0xBF58476D1CE4E5B9)
        z = alu(Ops.MUL, alu(Ops.XOR, z, alu(Ops.SHR, z, 27)), 0x94D049BB133111EB)
        return alu(Ops.XOR, z, alu(Ops.SHR, z, 31))

    def _unit(self, n: int, dtype: dtypes.DType, device: Any) -> UOp:
        """n uniform values in [0, 1) of a float dtype, from the top bits of the stream."""
        mantissa = {2: 11, 4: 24, 8: 53}[dtype.itemsize]
        return alu(Ops.MUL, cast_uop(alu(Ops.SHR, self._bits(n, device), 64 - mantissa), dtype), 2.0 ** -mantissa)

    # ---- distributions -----------------------------------------------------------------------
    def random(self, size: Any = None, dtype: Any = None, *, shape: Any = None, device: Any = None) -> Array:
        """Values drawn uniformly from [0, 1)."""
        return self.uniform(0.0, 1.0, size, dtype=dtype, shape=shape, device=device)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None, *, dtype: Any = None, shape: Any = None,
                device: Any = None) -> Array:
        """Values drawn uniformly from [low, high)."""
        shape, d, dev = _shape(size, shape), _float_dtype(dtype), get_device(device)
        u = alu(Ops.ADD, alu(Ops.MUL, self._unit(math.prod(shape), d, dev), float(high) - float(low)), float(low))
        return wrap(reshape_uop(u, shape), dev)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None, *, dtype: Any = None, shape: Any = None,
               device: Any = None) -> Array:
        """Values drawn from the normal distribution (Box–Muller on two uniform streams)."""
        shape, d, dev = _shape(size, shape), _float_dtype(dtype), get_device(device)
        n = math.prod(shape)
        u1 = alu(Ops.SUB, 1.0, self._unit(n, d, dev))           # (0, 1]: the log is finite
        u2 = self._unit(n, d, dev)
        radius = alu(Ops.SQRT, alu(Ops.MUL, alu(Ops.LOG, u1), -2.0))
        z = alu(Ops.MUL, radius, alu(Ops.COS, alu(Ops.MUL, u2, 2 * math.pi)))
        return wrap(reshape_uop(alu(Ops.ADD, alu(Ops.MUL, z, float(scale)), float(loc)), shape), dev)

    def standard_normal(self, size: Any = None, dtype: Any = None, *, device: Any = None) -> Array:
        return self.normal(0.0, 1.0, size, dtype=dtype, device=device)

    def exponential(self, scale: float = 1.0, size: Any = None, *, dtype: Any = None, device: Any = None) -> Array:
        """Values drawn from the exponential distribution of mean `scale` (-scale·log(1 - u))."""
        shape, d, dev = _shape(size), _float_dtype(dtype), get_device(device)
        u = alu(Ops.SUB, 1.0, self._unit(math.prod(shape), d, dev))
        return wrap(reshape_uop(alu(Ops.MUL, alu(Ops.LOG, u), -float(scale)), shape), dev)

    def integers(self, low: int, high: int | None = None, size: Any = None, dtype: Any = None,
                 endpoint: bool = False, *, shape: Any = None, device: Any = None) -> Array:
        """Integers drawn uniformly from [low, high) ([low, high] with `endpoint`; [0, low) when
        high is None)."""
        if high is None:
            low, high = 0, low
        low, high = int(low), int(high) + bool(endpoint)
        if high <= low:
            raise ValueError(f"integers: high ({high}) must be greater than low ({low})")
        d = dtypes.default_int if dtype is None else dtypes.as_dtype(dtype)
        if not d.is_int:
            raise TypeError(f"integers: an integer dtype is needed, not {d}")
        dtypes.check_scalar_fits(low, d)
        dtypes.check_scalar_fits(high - 1, d)
        shape, dev = _shape(size, shape), get_device(device)
        offset = alu(Ops.MOD, self._bits(math.prod(shape), dev), high - low)
        value = alu(Ops.ADD, cast_uop(offset, dtypes.int64), low) if low else cast_uop(offset, dtypes.int64)
        return wrap(reshape_uop(cast_uop(value, d), shape), dev)

    def permutation(self, x: int | Array, axis: int = 0, *, device: Any = None) -> Array:
        """A random ordering of range(x), or of x along `axis` (its first by default)."""
        if isinstance(x, (Array, np.ndarray, list, tuple)):
            t = as_tensor(x, device)
            if t.ndim == 0:
                raise ValueError("permutation: x must be an integer or an array of at least 1 dimension")
            return take(t, self.permutation(t.shape[axis], device=t.device), axis=axis)
        n = non_negative_int("permutation", "x (an array or a count)", x)
        dev = get_device(device)
        return argsort(wrap(self._bits(n, dev), dev))   # the order of random keys (ties: by position)

    def shuffle(self, x: Array, axis: int = 0) -> None:
        """x's elements along `axis` put in a random order, in place."""
        if not isinstance(x, Array):
            raise TypeError(f"shuffle: expected a lazyarr array (shuffled in place), got {type(x).__name__}")
        x[...] = self.permutation(x, axis=axis)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True, *, device: Any = None) -> Array:
        """Elements of a (or of range(a)) drawn at random: with replacement, or without (each at
        most once); with probabilities `p` (one per element, summing to 1)."""
        population = None
        if isinstance(a, (Array, np.ndarray, list, tuple)):
            population = as_tensor(a, device)
            if population.ndim == 0:
                raise ValueError("choice: a must be an integer or an array of at least 1 dimension")
            n, dev = population.shape[axis], population.device
        else:
            n, dev = operator.index(a), get_device(device)
        if n <= 0 and (size is None or math.prod(normalize_shape(size))):
            raise ValueError("choice: a cannot be empty unless no samples are taken")
        shape = _shape(size)
        k = math.prod(shape)
        if p is not None:
            probs = as_tensor(p, dev).astype(dtypes.float64)
            if probs.shape != (n,):
                raise ValueError(f"choice: p must have one probability per element ({n}), got shape {probs.shape}")
        if replace:
            if p is None:
                picks = self.integers(0, n, k, device=dev)
            else:   # the inverse of the cumulative distribution at uniform points
                cdf = cumulative_sum(probs)
                picks = searchsorted(divide(cdf, cdf[-1]), self.random(k, device=dev), side="right")
                picks = wrap(alu(Ops.MIN, picks.uop, n - 1), dev)
        else:
            if k > n:
                raise ValueError(f"choice: cannot take a larger sample ({k}) than the population ({n}) without "
                                 f"replacement")
            if p is None:
                picks = self.permutation(n, device=dev)[:k]
            else:   # the k largest of u^(1/p)
                keys = power(self.random(n, device=dev), divide(1.0, probs))
                picks = argsort(keys, descending=True)[:k]
        picks = wrap(reshape_uop(picks.uop, shape), dev)
        if population is None:
            return picks
        flat = take(population, wrap(reshape_uop(picks.uop, (k,)), dev), axis=axis)
        out_shape = population.shape[:axis] + shape + population.shape[axis + 1:]
        return wrap(reshape_uop(flat.uop, out_shape), dev)


def default_rng(seed: Any = None) -> Generator:
    """A new Generator (NumPy's constructor): seeded, or from the operating system's entropy."""
    return seed if isinstance(seed, Generator) else Generator(seed)


# ---- the global generator: lazyarr's functions and NumPy's legacy ones ---------------------------

_global = Generator()


def seed(s: int | None = None) -> None:
    """Restart the global stream: the same seed gives the same numbers on every device. It seeds the
    NumPy generator of the random functions lazyarr lacks (NumPy's numbers, computed on the host) too."""
    global _global
    _global = Generator(s)
    numpy_fallback.reseed(s)


def uniform(low: float = 0.0, high: float = 1.0, shape: Any = None, *, size: Any = None, dtype: Any = None,
            device: Any = None) -> Array:
    return _global.uniform(low, high, size, dtype=dtype, shape=shape, device=device)


def random(shape: Any = None, *, size: Any = None, dtype: Any = None, device: Any = None) -> Array:
    return _global.random(size, dtype, shape=shape, device=device)


random_sample = random


def normal(loc: float = 0.0, scale: float = 1.0, shape: Any = None, *, size: Any = None, dtype: Any = None,
           device: Any = None) -> Array:
    return _global.normal(loc, scale, size, dtype=dtype, shape=shape, device=device)


def standard_normal(size: Any = None, *, dtype: Any = None, device: Any = None) -> Array:
    return _global.standard_normal(size, dtype, device=device)


def exponential(scale: float = 1.0, size: Any = None, *, dtype: Any = None, device: Any = None) -> Array:
    return _global.exponential(scale, size, dtype=dtype, device=device)


def integers(low: int, high: int | None = None, shape: Any = None, *, size: Any = None, dtype: Any = None,
             device: Any = None) -> Array:
    return _global.integers(low, high, size, dtype, shape=shape, device=device)


def permutation(x: int | Array, *, device: Any = None) -> Array:
    return _global.permutation(x, device=device)


def shuffle(x: Array) -> None:
    _global.shuffle(x)


def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None, *, device: Any = None) -> Array:
    return _global.choice(a, size, replace, p, device=device)


def rand(*dims: int, device: Any = None) -> Array:
    """NumPy's legacy rand(d0, d1, ...): uniform values in [0, 1) of that shape."""
    return _global.random(dims, device=device)


def randn(*dims: int, device: Any = None) -> Array:
    """NumPy's legacy randn(d0, d1, ...): standard normal values of that shape."""
    return _global.standard_normal(dims, device=device)


def randint(low: int, high: int | None = None, size: Any = None, dtype: Any = None, *, device: Any = None) -> Array:
    """NumPy's legacy randint: integers in [low, high) ([0, low) when high is None)."""
    return _global.integers(low, high, size, dtype, device=device)


def __getattr__(name: str) -> Any:
    """NumPy's np.random functions lazyarr lacks, computed by NumPy on the host (lazyarr.numpy_fallback)."""
    return numpy_fallback.resolve(__name__, name)
