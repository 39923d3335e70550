"""The array API's fft extension (2025.12), with NumPy's `numpy.fft` names and keywords.

The transforms are graph nodes of their own: a precompiled call of NumPy's pocketfft (any length,
not only powers of two; float32 computed in float32, as NumPy 2 does), so their accuracy is
NumPy's. On a device whose memory is not the host's (OpenCL) the call is a round trip through the
host, which LAZYARR_DEBUG=1 reports. (Measured on this machine, pocketfft takes 6-8 ns an element
for a 1M-point complex transform; a radix-2 Stockham transform generated as lazyarr kernels would
make log2(n) passes over memory, 20 for 1M points at ~0.4 ms each, so the library is the faster
engine on the CPU. GPUs would gain from generated kernels, which are not written yet.)
fftfreq, rfftfreq, fftshift and ifftshift are compositions of primitives and fuse.

Inputs are promoted as NumPy's: booleans and integers to float64, real inputs of the complex
transforms to complex; the results have the precision of the input (float32 gives complex64).
`n`/`s` pad with zeros or trim; `norm` is 'backward' (the default: the inverse scales by 1/n),
'ortho' or 'forward'. Gradients flow through every transform (each is linear: its gradient is the
adjoint transform, `_adjoint`), in PyTorch's convention for complex values, so a real loss of
spectra (|rfft(x)|², a filter applied between rfft and irfft) differentiates to real parameters.

Raises ValueError for a length below 1, an unknown norm, or axes and lengths of different counts;
numpy's AxisError (a ValueError and an IndexError) for an axis out of range."""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array, wrap
from lazyarr.compiler.uop import CallSpec, UOp
from lazyarr.creation import arange, as_tensor
from lazyarr.elementwise import conj, divide, equal, less, logical_or, multiply, real, subtract, where
from lazyarr.graph import call_results, normalize_axes, normalize_axis, pad_uop, shrink_uop
from lazyarr.manipulation import reshape, roll
from lazyarr import numpy_fallback

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def __dir__() -> list[str]:
    return list(__all__)


@dataclass(frozen=True)
class _NumpyTransform:
    """A precompiled routine: NumPy's transform `kind` with its lengths, axes and norm, written into
    the output (equal for equal arguments, so a repeated transform reuses its program)."""
    kind: str
    lengths: tuple[int, ...] | int | None
    axes: tuple[int, ...] | int
    norm: str

    def __call__(self, out: np.ndarray, x: np.ndarray) -> None:
        fn = getattr(np.fft, self.kind)
        if isinstance(self.axes, int):
            out[...] = fn(x, n=self.lengths, axis=self.axes, norm=self.norm)
        else:
            out[...] = fn(x, s=self.lengths, axes=self.axes, norm=self.norm)

    @property
    def __name__(self) -> str:
        return self.kind


def _promoted(x: Any, to_complex: bool) -> Array:
    x = as_tensor(x)
    if not x.dtype.is_inexact:
        x = x.astype(dtypes.default_float)
    if to_complex and not x.dtype.is_complex:
        x = x.astype(dtypes.complex_of(x.dtype))
    return x


def _check_norm(name: str, norm: str) -> None:
    if norm not in _NORMS:
        raise ValueError(f"{name}: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")


def _length(name: str, n: Any) -> int:
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"{name}: invalid number of data points ({n}): must be at least 1")
    return n


def _run(name: str, x: Array, out_shape: tuple[int, ...], out_dtype: dtypes.DType,
         routine: _NumpyTransform) -> Array:
    spec = CallSpec(name, None, routine, ((x.shape, x.dtype),), ((out_shape, out_dtype),), (), (), device=x.device,
                    grad=_adjoint, grad_complex=True)
    return wrap(call_results(spec, [x.uop])[0], x.device)


# ---- gradients: the transforms are linear, so each one's gradient is its adjoint ---------------------

_DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _fit(x: Array, axes: Sequence[int], lengths: Sequence[int]) -> Array:
    """x trimmed, or padded with zeros at the end, to `lengths` along `axes`."""
    u = x.uop
    for a, n in zip(axes, lengths):
        have = u.shape[a]
        if have > n:
            u = shrink_uop(u, [(0, n) if b == a else (0, m) for b, m in enumerate(u.shape)])
        elif have < n:
            u = pad_uop(u, [(0, n - have) if b == a else (0, 0) for b in range(len(u.shape))])
    return wrap(u, x.device)


def _adjoint(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    """The input's adjoint of a transform's result (PyTorch's convention for complex values): the
    adjoint transform, with the norm's direction swapped (fft's adjoint is ifft's rescaling), the
    padding or trimming to n undone; for rfft the half spectrum padded back to n and the real part
    taken; for irfft the frequencies it counts twice (all but 0 and n/2) weighted 2."""
    t = call.arg.routine
    x = wrap(call.src[0], call.arg.device)
    g = wrap(g, x.device)
    axes = (t.axes,) if isinstance(t.axes, int) else t.axes
    lengths = (t.lengths,) if isinstance(t.lengths, int) else t.lengths
    dual, sizes = _DUAL[t.norm], tuple(x.shape[a] for a in axes)
    kind = t.kind.rstrip("n2")
    if kind in ("fft", "ifft"):
        back = (ifftn if kind == "fft" else fftn)(g, s=lengths, axes=axes, norm=dual)
        return [_fit(back, axes, sizes).uop]
    if kind == "rfft":
        full = _fit(g, axes[-1:], lengths[-1:])
        return [real(_fit(ifftn(full, s=lengths, axes=axes, norm=dual), axes, sizes)).astype(x.dtype).uop]
    assert kind == "irfft", kind
    half = rfftn(g, s=lengths, axes=axes, norm=dual)
    n, last = lengths[-1], axes[-1]
    k = arange(n // 2 + 1, device=x.device)
    twice = where(logical_or(equal(k, 0), equal(multiply(k, 2), n)), 1.0, 2.0).astype(half.dtype)
    weights = reshape(twice, tuple(n // 2 + 1 if a == last else 1 for a in range(half.ndim)))
    return [_fit(multiply(half, weights), axes, sizes).uop]


# ---- one axis --------------------------------------------------------------------------------------

def _one_axis(name: str, x: Any, n: Any, axis: int, norm: str, kind: str) -> Array:
    """kind: 'c' (complex in and out), 'r' (real in, half spectrum out), 'ir' (half spectrum in,
    real out), with NumPy's default lengths."""
    _check_norm(name, norm)
    x = _promoted(x, to_complex=kind != "r")
    if kind == "r" and x.dtype.is_complex:
        raise TypeError(f"{name}: expected a real array, got {x.dtype}")
    if x.ndim == 0:
        raise ValueError(f"{name}: a 0-dimensional array has no axis to transform")
    ax = normalize_axis(axis, x.ndim)
    m = x.shape[ax]
    if n is None:
        n = 2 * (m - 1) if kind == "ir" else m
    n = _length(name, n)
    out_len = n // 2 + 1 if kind == "r" else n
    shape = x.shape[:ax] + (out_len,) + x.shape[ax + 1:]
    real = dtypes.component(x.dtype) if x.dtype.is_complex else x.dtype
    out_dtype = real if kind == "ir" else dtypes.complex_of(real)
    return _run(name, x, shape, out_dtype, _NumpyTransform(name, n, ax, norm))


def fft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The discrete Fourier transform along `axis` (n points: padded with zeros or trimmed)."""
    return _one_axis("fft", x, n, axis, norm, "c")


def ifft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse discrete Fourier transform along `axis`."""
    return _one_axis("ifft", x, n, axis, norm, "c")


def rfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The transform of real values: the n//2 + 1 non-negative frequencies."""
    return _one_axis("rfft", x, n, axis, norm, "r")


def irfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse of rfft: n real values (2·(m - 1) by default) from the non-negative frequencies."""
    return _one_axis("irfft", x, n, axis, norm, "ir")


def hfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The transform of a signal with Hermitian symmetry, given by its first half: n real values
    (NumPy's definition: irfft of the conjugate, the norm's direction swapped)."""
    _check_norm("hfft", norm)
    return _one_axis("irfft", conj(_promoted(x, to_complex=True)), n, axis, _DUAL[norm], "ir")


def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse of hfft: the conjugate of rfft, the norm's direction swapped."""
    _check_norm("ihfft", norm)
    return conj(_one_axis("rfft", x, n, axis, _DUAL[norm], "r"))


# ---- several axes ------------------------------------------------------------------------------------

def _many_axes(name: str, x: Any, s: Any, axes: Any, norm: str, kind: str) -> Array:
    _check_norm(name, norm)
    x = _promoted(x, to_complex=kind != "r")
    if kind == "r" and x.dtype.is_complex:
        raise TypeError(f"{name}: expected a real array, got {x.dtype}")
    if s is not None:
        s = tuple(operator.index(v) for v in s)
    if axes is None:
        axes = tuple(range(x.ndim - (len(s) if s is not None else x.ndim), x.ndim))
    else:
        axes = tuple(normalize_axis(a, x.ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: repeated axis in {axes}")
    if s is None:
        s = tuple(x.shape[a] for a in axes)
        if kind == "ir" and axes:
            s = s[:-1] + (2 * (x.shape[axes[-1]] - 1),)
    elif len(s) != len(axes):
        raise ValueError(f"{name}: s and axes must have the same length, got {len(s)} and {len(axes)}")
    s = tuple(_length(name, v) for v in s)
    shape = list(x.shape)
    for a, n in zip(axes, s):
        shape[a] = n
    if kind == "r" and axes:
        shape[axes[-1]] = s[-1] // 2 + 1
    real = dtypes.component(x.dtype) if x.dtype.is_complex else x.dtype
    out_dtype = real if kind == "ir" else dtypes.complex_of(real)
    if not axes:   # no axis to transform: NumPy returns the input
        return x.astype(out_dtype)
    return _run(name, x, tuple(shape), out_dtype, _NumpyTransform(name, s, axes, norm))


def fftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> Array:
    """The n-dimensional transform over `axes` (the last len(s) axes, or all)."""
    return _many_axes("fftn", x, s, axes, norm, "c")


def ifftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:
    return _many_axes("ifftn", x, s, axes, norm, "c")


def rfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Array:
    """The n-dimensional transform of real values (the last axis halved)."""
    return _many_axes("rfftn", x, s, axes, norm, "r")


def irfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> Array:
    return _many_axes("irfftn", x, s, axes, norm, "ir")


# NumPy's two-dimensional spellings
def fft2(x: Array, /, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str = "backward") -> Array:
    return fftn(x, s=s, axes=axes, norm=norm)


def ifft2(x: Array, /, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str = "backward") -> Array:
    return ifftn(x, s=s, axes=axes, norm=norm)


def rfft2(x: Array, /, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str = "backward") -> Array:
    return rfftn(x, s=s, axes=axes, norm=norm)


def irfft2(x: Array, /, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str = "backward") -> Array:
    return irfftn(x, s=s, axes=axes, norm=norm)


__all__ += ["fft2", "ifft2", "rfft2", "irfft2"]


# ---- frequencies and shifts -----------------------------------------------------------------------

def _frequency_dtype(name: str, dtype: Any) -> dtypes.DType:
    d = dtypes.default_float if dtype is None else dtypes.as_dtype(dtype)
    if not d.is_float:
        raise ValueError(f"{name}: dtype must be a real floating-point dtype, got {d}")
    return d


def fftfreq(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of an n-point transform: [0, 1, ..., ⌈n/2⌉-1, -⌊n/2⌋, ..., -1] / (d·n)."""
    n = _length("fftfreq", n)
    k = arange(n, dtype=dtypes.default_int, device=device)
    signed = where(less(k, (n + 1) // 2), k, subtract(k, n))
    return divide(signed.astype(_frequency_dtype("fftfreq", dtype)), d * n)


def rfftfreq(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of rfft's n//2 + 1 outputs: [0, 1, ..., n//2] / (d·n)."""
    n = _length("rfftfreq", n)
    k = arange(n // 2 + 1, dtype=dtypes.default_int, device=device)
    return divide(k.astype(_frequency_dtype("rfftfreq", dtype)), d * n)


def _shift(x: Any, axes: Any, direction: int) -> Array:
    x = as_tensor(x)
    axes = normalize_axes(axes, x.ndim) if axes is not None else tuple(range(x.ndim))
    if isinstance(axes, int):
        axes = (axes,)
    if not axes:
        return x
    return roll(x, tuple(direction * (x.shape[a] // 2) for a in axes), axis=tuple(axes))


def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """The zero frequency moved to the middle: a roll by n//2 along `axes` (every axis by default)."""
    return _shift(x, axes, 1)


def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """fftshift's inverse: a roll by -(n//2)."""
    return _shift(x, axes, -1)


def __getattr__(name: str) -> Any:
    """NumPy's np.fft functions lazyarr lacks, computed by NumPy on the host (lazyarr.numpy_fallback)."""
    return numpy_fallback.resolve(__name__, name)
