"""lazyarr.fft against NumPy (pocketfft): every transform with n/s, axes and norm, dtypes (float32
gives complex64), inputs made several ways, the frequencies and shifts, and errors."""
import numpy as np
import pytest

import lazyarr as xp
from tests.helpers import assert_close

RNG = np.random.default_rng(23)
REAL = RNG.standard_normal((3, 10))
CPLX = REAL + 1j * RNG.standard_normal((3, 10))


def made(a, how):
    if how == "asarray":
        return xp.asarray(a)
    if how == "computed":   # lazy, never realized
        return xp.asarray(a) * 2 - xp.asarray(a)
    if how == "view":       # a transposed view of a transposed buffer
        return xp.permute_dims(xp.asarray(np.ascontiguousarray(a.T)), (1, 0))
    raise ValueError(how)


@pytest.mark.parametrize("how", ["asarray", "computed", "view"])
@pytest.mark.parametrize("name", ["fft", "ifft", "hfft", "rfft", "ihfft", "irfft"])
def test_one_axis_transforms_match_numpy(name, how):
    data = REAL if name in ("rfft", "ihfft") else CPLX
    x = made(data, how)
    for n, axis in [(None, -1), (7, 0), (16, 1), (1, -1)]:
        for norm in ["backward", "ortho", "forward"]:
            got = getattr(xp.fft, name)(x, n=n, axis=axis, norm=norm)
            want = getattr(np.fft, name)(data, n=n, axis=axis, norm=norm)
            assert got.shape == want.shape and got.dtype == xp.asarray(want).dtype
            assert_close(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"])
def test_many_axes_transforms_match_numpy(name):
    data = RNG.standard_normal((2, 6, 5))
    data = data if name.startswith("rfft") else data + 1j * RNG.standard_normal(data.shape)
    ours, theirs = getattr(xp.fft, name), getattr(np.fft, name)
    kws = [{}, {"axes": (0, 2)}, {"s": (4, 8), "axes": (2, 1)}, {"norm": "ortho"}] if name.endswith("n") else \
        [{}, {"s": (3, 4)}, {"axes": (0, 1)}]
    for kw in kws:
        assert_close(ours(xp.asarray(data), **kw), theirs(data, **kw), rtol=1e-12, atol=1e-12)


def test_dtypes_follow_the_inputs_precision():
    f32 = REAL.astype(np.float32)
    assert xp.fft.fft(xp.asarray(f32)).dtype == xp.complex64
    assert xp.fft.rfft(xp.asarray(f32)).dtype == xp.complex64
    assert xp.fft.irfft(xp.asarray(CPLX.astype(np.complex64))).dtype == xp.float32
    assert xp.fft.fft(xp.asarray(np.arange(8))).dtype == xp.complex128   # integers promoted, as NumPy
    assert_close(xp.fft.fft(xp.asarray(f32)), np.fft.fft(f32), rtol=1e-5, atol=1e-5)
    # a round trip is the identity within rounding
    assert_close(xp.fft.irfft(xp.fft.rfft(xp.asarray(REAL)), n=10), REAL, rtol=1e-12, atol=1e-12)


def test_frequencies_and_shifts():
    for n in [1, 8, 9]:
        assert_close(xp.fft.fftfreq(n, d=0.5), np.fft.fftfreq(n, d=0.5))
        assert_close(xp.fft.rfftfreq(n, d=2.0), np.fft.rfftfreq(n, d=2.0))
    assert xp.fft.fftfreq(8, dtype=xp.float32).dtype == xp.float32
    x = xp.asarray(REAL)
    assert_close(xp.fft.fftshift(x), np.fft.fftshift(REAL))
    assert_close(xp.fft.ifftshift(x, axes=1), np.fft.ifftshift(REAL, axes=1))
    assert_close(xp.fft.ifftshift(xp.fft.fftshift(x)), REAL)
    assert len(xp.fft.fftshift(x * 2).schedule()) == 1   # a roll: it fuses


def test_errors():
    with pytest.raises(ValueError, match="norm"):
        xp.fft.fft(xp.ones(4), norm="bogus")
    with pytest.raises(ValueError, match="at least 1"):
        xp.fft.fft(xp.ones(4), n=0)
    with pytest.raises(ValueError, match="0-dimensional"):
        xp.fft.fft(xp.asarray(1.0))
    with pytest.raises(np.exceptions.AxisError):
        xp.fft.fft(xp.ones(4), axis=1)
    with pytest.raises(TypeError, match="real"):
        xp.fft.rfft(xp.asarray(CPLX))
    with pytest.raises(ValueError, match="same length"):
        xp.fft.fftn(xp.ones((2, 2)), s=(2,), axes=(0, 1))
    assert "CallSpec" not in dir(xp.fft) and "rfft" in dir(xp.fft)
