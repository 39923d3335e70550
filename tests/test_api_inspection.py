"""The inspection namespace (xp.__array_namespace_info__) and the namespace's names."""
import pytest

import lazyarr as xp


def test_capabilities_say_what_lazyarr_does_now():
    caps = xp.__array_namespace_info__().capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}


def test_devices_and_default_device():
    info = xp.__array_namespace_info__()
    assert isinstance(info.devices(), tuple)
    assert info.default_device() in info.devices()
    assert xp.ones(1).device == info.default_device()


def test_default_dtypes_are_the_creation_defaults():
    d = xp.__array_namespace_info__().default_dtypes(device=xp.__array_namespace_info__().default_device())
    assert d["real floating"] == xp.asarray(1.0).dtype == xp.float64
    assert d["integral"] == xp.asarray(1).dtype == xp.int64
    assert d["complex floating"] == xp.asarray(1j).dtype == xp.complex128
    assert d["indexing"] == xp.int64
    with pytest.raises(ValueError, match="unknown device"):
        xp.__array_namespace_info__().default_dtypes(device="tpu")


def test_dtypes_by_kind():
    info = xp.__array_namespace_info__()
    assert set(info.dtypes(kind="signed integer")) == {"int8", "int16", "int32", "int64"}
    assert set(info.dtypes(kind=("bool", "real floating"))) == {"bool", "float32", "float64"}
    assert info.dtypes(kind="integral")["uint8"] == xp.uint8
    everything = info.dtypes()
    assert {"bool", "int64", "uint64", "float32", "float64"} <= set(everything)
    # complex dtypes are computed (as pairs of their component type) on every device
    assert {"complex64", "complex128"} <= set(everything)
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}
    with pytest.raises(ValueError, match="unknown dtype kind"):
        info.dtypes(kind="floating")


def test_namespace_exports_the_standard_and_not_its_helpers():
    for name in ("meshgrid", "tril", "triu", "from_dlpack", "broadcast_shapes", "__array_namespace_info__"):
        assert callable(getattr(xp, name))
    for helper in ("math", "Ops", "UOp", "alu", "operands", "wrap"):
        assert not hasattr(xp, helper)


def test_broadcast_functions_return_tuples():
    a, b = xp.broadcast_arrays(xp.ones((2, 1)), xp.ones(3))
    assert a.shape == b.shape == (2, 3)
    assert isinstance(xp.broadcast_arrays(xp.ones(1)), tuple)
    assert xp.broadcast_shapes() == ()
    assert xp.broadcast_shapes((2, 1), (1, 3), (3,)) == (2, 3)
    with pytest.raises(ValueError, match="broadcast"):
        xp.broadcast_shapes((2,), (3,))
