"""Movement: reshape, permutes, broadcasting, flips, concatenation, and basic indexing, against NumPy."""
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as xp
from tests import strategies as S
from tests.helpers import assert_close

small = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


def arr(shape, dtype=np.int32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


@given(shape=small, data=st.data())
def test_reshape_any_factorisation_with_minus_one(shape, data):
    a = arr(shape)
    sizes = [s for s in range(1, a.size + 1) if a.size % s == 0] if a.size else [0]
    first = data.draw(st.sampled_from(sizes))
    new = (first, -1) if first else (0, data.draw(st.integers(0, 3)))
    if first == 0 and a.size == 0:
        new = (0, data.draw(st.integers(1, 3)))
    assert_close(xp.reshape(xp.asarray(a), new), a.reshape(new))
    assert_close(xp.asarray(a).reshape(-1), a.reshape(-1))


def test_reshape_errors():
    with pytest.raises(ValueError, match="cannot reshape array of size 6 into shape"):
        xp.reshape(xp.ones((2, 3)), (4,))
    with pytest.raises(ValueError):
        xp.reshape(xp.ones((2, 3)), (-1, -1))


@given(shape=small, data=st.data())
def test_permute_and_transposes(shape, data):
    a = arr(shape)
    perm = data.draw(st.permutations(range(a.ndim)))
    assert_close(xp.permute_dims(xp.asarray(a), perm), np.transpose(a, perm))
    assert_close(xp.asarray(a).T, a.T)
    if a.ndim >= 2:
        assert_close(xp.asarray(a).mT, np.swapaxes(a, -1, -2))
        assert_close(xp.matrix_transpose(xp.asarray(a)), np.swapaxes(a, -1, -2))


def test_permute_dims_rejects_non_permutations():
    with pytest.raises(ValueError):
        xp.permute_dims(xp.ones((2, 3)), (0, 0))


@given(shape=small, data=st.data())
def test_expand_dims_squeeze_broadcast_to(shape, data):
    a = arr(shape)
    ax = data.draw(st.integers(-a.ndim - 1, a.ndim))
    assert_close(xp.expand_dims(xp.asarray(a), axis=ax), np.expand_dims(a, ax))
    b = a.reshape(tuple(s for s in shape) + (1,))
    assert_close(xp.squeeze(xp.asarray(b), axis=-1), np.squeeze(b, -1))
    assert_close(xp.squeeze(xp.asarray(b)), np.squeeze(b))
    target = (2,) + shape
    assert_close(xp.broadcast_to(xp.asarray(a), target), np.broadcast_to(a, target))


def test_broadcasting_errors():
    with pytest.raises(ValueError):
        xp.broadcast_to(xp.ones((3,)), (4,))
    with pytest.raises(ValueError):
        xp.squeeze(xp.ones((2, 3)), axis=0)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        xp.squeeze(xp.ones((2, 1)), axis=2)


@given(shape=small, data=st.data())
def test_flip(shape, data):
    a = arr(shape)
    axes = data.draw(st.one_of(st.none(), st.lists(st.integers(0, max(a.ndim - 1, 0)), unique=True, max_size=a.ndim)))
    if a.ndim == 0 and axes:
        axes = None
    assert_close(xp.flip(xp.asarray(a), axis=tuple(axes) if axes else None),
                 np.flip(a, axis=tuple(axes) if axes else None))


@given(data=st.data())
def test_concat_and_stack(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    ax = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(1, 3))
    parts = []
    for i in range(n):
        s = list(shape)
        s[ax] = data.draw(st.integers(0, 3))
        parts.append(arr(tuple(s)) + 100 * i)
    assert_close(xp.concat([xp.asarray(p) for p in parts], axis=ax), np.concatenate(parts, axis=ax))
    same = [arr(shape) + i for i in range(n)]
    assert_close(xp.stack([xp.asarray(p) for p in same], axis=ax), np.stack(same, axis=ax))
    assert_close(xp.concat([xp.asarray(p) for p in same], axis=None), np.concatenate(same, axis=None))


def test_concat_promotes_dtypes():
    a, b = np.array([1, 2], np.int8), np.array([1.5], np.float32)
    assert_close(xp.concat([xp.asarray(a), xp.asarray(b)]), np.concatenate([a, b]))


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), shift=st.integers(-6, 6))
def test_roll_tile_repeat(shape, shift):
    a = arr(shape)
    assert_close(xp.roll(xp.asarray(a), shift), np.roll(a, shift))
    assert_close(xp.roll(xp.asarray(a), shift, axis=0), np.roll(a, shift, axis=0))
    assert_close(xp.tile(xp.asarray(a), (2,) * a.ndim), np.tile(a, (2,) * a.ndim))
    assert_close(xp.repeat(xp.asarray(a), 2, axis=0), np.repeat(a, 2, axis=0))
    assert_close(xp.moveaxis(xp.asarray(a), 0, -1), np.moveaxis(a, 0, -1))


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), shift=st.integers(-11, 11),
       data=st.data())
def test_roll_along_any_axes_moves_every_element_bit_for_bit(shape, shift, data):
    # each element where NumPy puts it, signed zeros and NaNs included; inputs made as users make
    # them (a transposed view, a slice, a value computed in the graph), several dtypes
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int16, np.bool_, np.complex64]))
    a = (np.arange(np.prod(shape)).reshape(shape) % 7 - 3).astype(dtype)
    if a.dtype.kind in "fc":
        a.flat[0], a.flat[-1] = -0.0, np.nan
    made = data.draw(st.sampled_from(["asarray", "transposed", "sliced", "computed"]))
    if made == "transposed":
        t = xp.permute_dims(xp.asarray(a.T), tuple(reversed(range(a.ndim))))
    elif made == "sliced":
        t = xp.asarray(np.concatenate([a, a], axis=0))[: shape[0]]
    elif made == "computed":
        t = xp.asarray(a) * xp.ones((), dtype=xp.asarray(a).dtype) if dtype is not np.bool_ else xp.asarray(a) & True
    else:
        t = xp.asarray(a)
    a = t.numpy()   # (a computed input's values are the graph's: a complex NaN times one is NaN + NaN j)
    axes = data.draw(st.sampled_from([None, 0, -1, tuple(range(a.ndim))]))
    shifts = shift if not isinstance(axes, tuple) else tuple(shift + k for k in range(len(axes)))
    got, want = xp.roll(t, shifts, axis=axes).numpy(), np.roll(a, shifts, axis=axes)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_roll_takes_numpy_integers_and_names_bad_shifts_and_axes():
    a = np.arange(6.0).reshape(2, 3)
    for shift, axis in [(np.int64(1), None), (np.int32(-4), np.int64(1)), ((1, 2), (0,)), ([1, 2], [0, 1]),
                        ((1, 2), None), (True, 0)]:
        np.testing.assert_array_equal(xp.roll(xp.asarray(a), shift, axis=axis).numpy(), np.roll(a, shift, axis=axis))
    for shift, axis, what in [(1.5, 0, "shift"), ("a", None, "shift"), (1, 0.0, "axis"), ([1, None], [0, 1], "shift")]:
        with pytest.raises(TypeError, match=f"roll: {what} must be an integer"):
            xp.roll(xp.asarray(a), shift, axis=axis)
    with pytest.raises(ValueError, match="same length"):
        xp.roll(xp.asarray(a), (1, 2, 3), axis=(0, 1))


# ---- basic indexing ----

index_entries = st.one_of(
    st.integers(-5, 5),
    st.builds(slice, st.one_of(st.none(), st.integers(-6, 6)), st.one_of(st.none(), st.integers(-6, 6)),
              st.one_of(st.none(), st.integers(-3, 3).filter(bool))),
    st.just(None), st.just(Ellipsis))


@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5), data=st.data())
def test_basic_indexing_matches_numpy(shape, data):
    a = arr(shape, np.float32)
    key = tuple(data.draw(st.lists(index_entries, max_size=4)))
    try:
        want = a[key]
    except IndexError:
        with pytest.raises(IndexError):
            xp.asarray(a)[key]
        return
    assert_close(xp.asarray(a)[key], np.asarray(want))


def test_indexing_errors():
    t = xp.ones((2, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        t[0, 3]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError):
        t[..., ...]
    with pytest.raises(IndexError, match="out of bounds"):
        t[xp.asarray([0, 5])]


def test_iteration_and_len():
    a = arr((3, 2))
    t = xp.asarray(a)
    assert len(t) == 3
    for row, want in zip(t, a):
        assert_close(row, want)
    with pytest.raises(TypeError):
        len(xp.asarray(1.0))
