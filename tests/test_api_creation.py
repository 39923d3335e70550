"""The creation functions added for the array API (2025.12): from_dlpack, meshgrid, tril, triu,
against NumPy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp
from tests import strategies as S
from tests.helpers import assert_close


@given(data=st.data())
def test_tril_triu_match_numpy(data):
    dtype = data.draw(st.sampled_from(S.REAL))
    a = data.draw(S.arrays(dtype, shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=5)))
    k = data.draw(st.integers(-6, 6))
    t = xp.asarray(a)
    assert_close(xp.tril(t, k=k), np.tril(a, k))
    assert_close(xp.triu(t, k=k), np.triu(a, k))


def test_tril_triu_are_lazy_and_need_two_dimensions():
    t = xp.tril(xp.ones((3, 3)))
    assert not t.is_realized
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        xp.triu(xp.ones(3))


@given(data=st.data())
def test_meshgrid_matches_numpy(data):
    n = data.draw(st.integers(0, 4))
    arrays = [data.draw(S.arrays(data.draw(st.sampled_from(S.NUMBERS)), shape=hnp.array_shapes(min_dims=1, max_dims=1, min_side=0, max_side=4)))
              for _ in range(n)]
    indexing = data.draw(st.sampled_from(["xy", "ij"]))
    got = xp.meshgrid(*[xp.asarray(a) for a in arrays], indexing=indexing)
    want = np.meshgrid(*arrays, indexing=indexing)
    assert type(got) is tuple and len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w)


def test_meshgrid_rejects_unknown_indexing():
    with pytest.raises(ValueError, match="indexing"):
        xp.meshgrid(xp.ones(2), indexing="yx")


@given(data=st.data())
def test_from_dlpack_reads_numpy_and_lazyarr_arrays(data):
    dtype = data.draw(st.sampled_from(S.REAL))
    a = data.draw(S.arrays(dtype))
    copy = data.draw(st.sampled_from([None, True, False]))
    t = xp.from_dlpack(a, copy=copy)
    assert_close(t, a)
    back = xp.from_dlpack(t, copy=copy)
    assert_close(back, a)
    assert_close(np.from_dlpack(t), a)


def test_from_dlpack_copy_false_shares_memory_and_copy_true_does_not():
    a = np.arange(4.0)
    shared, copied = xp.from_dlpack(a, copy=False), xp.from_dlpack(a, copy=True)
    a[0] = 42.0
    assert float(shared[0]) == 42.0 and float(copied[0]) == 0.0


def test_from_dlpack_needs_a_dlpack_object():
    with pytest.raises(TypeError, match="__dlpack__"):
        xp.from_dlpack([1, 2, 3])


def test_dunder_dlpack_accepts_the_standards_keywords():
    t = xp.asarray([1.0, 2.0])
    assert t.__dlpack_device__() == (1, 0)
    for kw in ({}, {"copy": True}, {"copy": False}, {"max_version": (1, 0)}, {"dl_device": (1, 0)}):
        assert_close(np.from_dlpack(_Capsule(t, kw)), np.array([1.0, 2.0]))
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))


class _Capsule:
    """An object whose __dlpack__ passes fixed keywords to a tensor's."""

    def __init__(self, t, kw):
        self.t, self.kw = t, kw

    def __dlpack__(self, **kw):
        return self.t.__dlpack__(**{**kw, **self.kw})

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()
