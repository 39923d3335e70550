"""Conversions of one element to Python values (lazyarr.conversion) against NumPy, in the order of
the module's docstring: views of buffers are read without a kernel, computed values are realized
once and shared by their views, errors are NumPy's."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import lazyarr as xp
from lazyarr import arrays as array_module
from tests import strategies as S


@pytest.fixture
def count_realizations(monkeypatch):
    calls = []
    original = array_module._realize   # (every realization: scheduled, or a cached structure replayed)

    def counting(todo):
        calls.append([(t.uop, t.device) for t in todo])
        return original(todo)
    monkeypatch.setattr(array_module, "_realize", counting)
    return calls


def _python(v):
    return v.item() if isinstance(v, np.generic) else v


@st.composite
def views(draw):
    """An array, a chain of movement ops applied to it in NumPy and in lazyarr."""
    dtype = draw(st.sampled_from(S.REAL))
    a = draw(S.arrays(dtype, shape=S.shapes.filter(lambda s: 0 not in s and len(s) > 0)))
    t = xp.asarray(a)
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["T", "flip", "slice", "expand", "reshape"]))
        if kind == "T":
            a, t = a.T, t.T
        elif kind == "flip":
            a, t = np.flip(a, 0), xp.flip(t, axis=0)
        elif kind == "slice":
            step = draw(st.sampled_from([1, 2, -1, -3]))
            a, t = a[::step], t[::step]
        elif kind == "expand":
            a, t = np.broadcast_to(a, (2,) + a.shape), xp.broadcast_to(t, (2,) + t.shape)
        else:
            a, t = a.reshape(-1), xp.reshape(t, (-1,))
    return a, t


@given(views(), st.data())
def test_elements_of_views_read_like_numpy(av, data):
    a, t = av
    idx = tuple(data.draw(st.integers(0, n - 1)) for n in a.shape)
    want = _python(a[idx])
    got = t[idx].item()
    assert type(got) is type(want) and (got == want or (math.isnan(want) and math.isnan(got)))
    if a.dtype.kind == "f":
        assert float(t[idx]) == want or math.isnan(want)
        assert math.copysign(1, float(t[idx])) == math.copysign(1, want)
    if a.dtype.kind in "iub":
        assert int(t[idx]) == int(want)
    assert bool(t[idx]) == bool(want)


def test_views_of_buffers_read_without_a_kernel(count_realizations):
    t = xp.asarray(np.arange(24.0).reshape(2, 3, 4))
    v = xp.flip(t.T, axis=0)[1:, ::2]
    assert float(v[0, 1, 1]) == np.flip(np.arange(24.0).reshape(2, 3, 4).T, axis=0)[1:, ::2][0, 1, 1]
    assert [float(t[1, 2, i]) for i in range(4)] == [20.0, 21.0, 22.0, 23.0]
    assert float(xp.zeros(5)[3]) == 0.0         # a constant
    assert float(xp.broadcast_to(xp.asarray(2.5), (3, 3)).T[1, 2]) == 2.5
    assert count_realizations == []
    assert int(xp.arange(10)[7]) == 7           # computed (iota * step + start): realized once
    assert float(xp.concat([xp.ones(2), xp.zeros(3)])[3]) == 0.0


def test_a_computed_value_is_realized_once_for_all_its_views(count_realizations):
    x = xp.asarray(np.arange(6.0))
    out = xp.exp(x) + 1
    got = [float(out[i]) for i in range(6)]
    np.testing.assert_allclose(got, np.exp(np.arange(6.0)) + 1)
    assert len(count_realizations) == 1
    assert float(out.sum()) == pytest.approx(float(np.sum(np.exp(np.arange(6.0)) + 1)))


def test_complex_elements_read_without_computing():
    t = xp.asarray(np.array([1 + 2j, 3 - 4j]))
    assert complex(t[1]) == 3 - 4j
    assert t[0].item() == 1 + 2j
    assert complex(xp.asarray(2.5)) == 2.5 + 0j and complex(xp.asarray(3, dtype=xp.int8)) == 3 + 0j


def test_conversion_errors_are_numpys():
    with pytest.raises(ValueError, match="more than one element"):
        bool(xp.ones(2))
    with pytest.raises(ValueError, match="empty"):
        bool(xp.ones(0))
    with pytest.raises(TypeError):
        float(xp.ones(3))
    with pytest.raises(ValueError, match="size 1"):
        xp.ones(3).item()
    with pytest.raises(TypeError):
        xp.asarray(1.0).__index__()
    with pytest.raises(OverflowError):
        int(xp.asarray(math.inf))
    with pytest.raises(ValueError):
        int(xp.asarray(math.nan))
    assert xp.asarray([[5]]).item() == 5
    assert int(xp.asarray(3)) == 3 and xp.asarray(3).__index__() == 3
